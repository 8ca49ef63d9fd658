// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_dos: one unprivileged client takes all it can of a per-device
 * resource; it must get the documented errno (uapi/vgpu_drm.h), a second
 * unprivileged user must still open the device, create a queue and run a
 * job, and nobody may be OOM-killed (/proc/vmstat oom_kill unchanged, the
 * bystander alive).  The render node is world-writable on a desktop: the
 * test makes it so for its run, and the attacker and the bystander run as
 * uid 65534.
 *
 *   bo_memory        resident BO memory: the attacker's file stops at
 *                    client_mem_limit_mb (-ENOMEM), the rest stays for
 *                    others
 *   bo_memory_global the limit covers every device together: the attacker
 *                    cannot take mem_limit_mb twice over through a second
 *                    device (skips with one device)
 *   queued_jobs      jobs in flight: -EAGAIN (O_NONBLOCK) at
 *                    max_jobs_per_queue and at max_jobs_per_file, and a
 *                    blocking SUBMIT waits until a job is freed;
 *                    another user's job does not queue behind the
 *                    attacker's spinning job (or the jobs waiting for
 *                    it) while its band has a free hardware queue
 *   released_jobs    a job counts in its file's jobs in flight until the
 *                    release free_job defers has run: with the releases
 *                    held (debugfs release_hold) a file whose jobs all
 *                    completed still gets -EAGAIN; another user is served
 *   gem_objects      BOs a file created: -EMFILE at max_bos_per_file, a
 *                    BO kept by a CPU mapping after its handle is closed
 *                    still counts
 *   address_spaces   300 files, each with a job in flight: more address
 *                    spaces than the device's 255 ASIDs, none refused
 *                    (an ASID is bound only while an AS has work)
 *   page_tables      1024 MAP_SPARSE ops of 1 GiB in one VM_BIND take a
 *                    few KiB of tables; single-page binds 1 GiB apart
 *                    stop at pt_limit_mb with -ENOSPC
 *   queued_binds     asynchronous binds held by an in-sync: -EAGAIN at
 *                    max_jobs_per_queue per VM and at max_jobs_per_file
 *                    with the file's jobs; all run once it signals
 *   user_queues      busy user queues over several files: -EMFILE at
 *                    VGPU_MAX_USERQ_PER_FILE, -EDQUOT at
 *                    max_userq_per_user; another user still gets a user
 *                    queue and runs a job on it
 *
 * Run with every device bound (run-in-guest.sh's second batch).
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include "vgpu_uq.h"
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MiB (1ull << 20)
#define PARAM(n) "/sys/module/vgpu/parameters/" n
#define NOBODY 65534
#define NV 12	/* numbers an attacker reports */

static const char *const params[] = {
	"mem_limit_mb", "client_mem_limit_mb", "max_jobs_per_queue",
	"max_jobs_per_file", "max_bos_per_file", "pt_limit_mb",
	"max_userq_per_user",
};
#define NPARAMS (sizeof(params) / sizeof(params[0]))

FIXTURE(dos) {
	char node[32];
	mode_t mode;
	long long oom0;
	char saved[NPARAMS][32];
};

static int set_param(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), PARAM("%s"), name);
	return sysfs_write(path, val);
}

FIXTURE_SETUP(dos)
{
	char path[128];
	struct stat st;
	unsigned int i;
	int minor, fd;

	for (i = 0; i < NPARAMS; i++) {
		snprintf(path, sizeof(path), PARAM("%s"), params[i]);
		ASSERT_LT(0, read_file(path, self->saved[i], sizeof(self->saved[i])));
	}
	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(self->node, sizeof(self->node), "/dev/dri/renderD%d", minor);
	ASSERT_EQ(0, stat(self->node, &st));
	self->mode = st.st_mode & 07777;
	/* render nodes are world-writable on a desktop (udev's 0666) */
	ASSERT_EQ(0, chmod(self->node, 0666));
	self->oom0 = file_key_num("/proc/vmstat", "oom_kill", ' ');
	ASSERT_LE(0, self->oom0);
}

static long long release_hold(int val);

FIXTURE_TEARDOWN(dos)
{
	unsigned int i;

	release_hold(0);
	chmod(self->node, self->mode);
	for (i = 0; i < NPARAMS; i++)
		set_param(params[i], self->saved[i]);
}

/*
 * The bystander: a second unprivileged user opens the device, creates a
 * queue and runs a store job on it, checking every value.  Its exit
 * status (0: served); *@hw (when not NULL): the hardware queue its job
 * ran on.
 */
static int bystander_hw(const char *node, int *hw)
{
	struct drm_vgpu_queue_get_state st = { 0 };
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3], q;
	unsigned int i;
	int fd, status, *shared;
	pid_t pid;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -1;
	*shared = -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		vgpu_become_user(NOBODY);
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			_exit(1);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_NORMAL, &q))
			_exit(2);
		if (vgpu_prog_load(fd, &p, vgpu_store_src, 4096))
			_exit(3);
		*(uint64_t *)p.param = p.data_va;
		((uint32_t *)p.param)[2] = 11;
		vgpu_prog_submit_args(&p, &s, h, 2, 32);
		s.queue = q;
		if (_test_submit(fd, &s) || _test_wait_bo(fd, p.data_h, vgpu_wait_ns(60)))
			_exit(4);
		for (i = 0; i < 64; i++)
			if (((uint32_t *)p.data)[i] != i * 2 + 11)
				_exit(5);
		st.queue_id = q;
		if (vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &st))
			_exit(6);
		*shared = (int)st.hw_queue;
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		status = -1;
	else
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (hw)
		*hw = *shared;
	munmap(shared, sizeof(*shared));
	return status;
}

static int bystander(const char *node)
{
	return bystander_hw(node, NULL);
}

/*
 * An attacker: runs @take as nobody in a child, which reports what it got
 * through @v (up to 8 numbers) and then holds it until the parent closes
 * the pipe.  Returns the child's pid, -1 on failure.
 */
struct attacker {
	pid_t pid;
	int to_child, from_child;
};

static int attack(struct attacker *a, const char *node,
		  void (*take)(const char *node, long long *v, int hold_fd))
{
	int up[2], down[2];

	if (pipe(up) || pipe(down))
		return -1;
	a->pid = fork();
	if (a->pid < 0)
		return -1;
	if (!a->pid) {
		long long v[NV] = { 0 };

		close(up[0]);
		close(down[1]);
		vgpu_become_user(NOBODY);
		take(node, v, down[0]);
		if (write(up[1], v, sizeof(v)) != sizeof(v))
			_exit(91);
		/* hold everything until the parent closes its end */
		while (read(down[0], v, 1) > 0)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	a->from_child = up[0];
	a->to_child = down[1];
	return 0;
}

static int attack_report(struct attacker *a, long long *v)
{
	return read(a->from_child, v, NV * sizeof(*v)) == NV * sizeof(*v) ? 0 : -1;
}

/* let the attacker go; its exit status */
static int attack_end(struct attacker *a)
{
	int status;

	close(a->to_child);
	close(a->from_child);
	if (waitpid(a->pid, &status, 0) != a->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* debugfs memory: every device's resident bytes, the limit, one client's limit */
static int mem_state(long long *total, unsigned long long *limit,
		     unsigned long long *client_limit)
{
	char dir[64], path[96], buf[160];
	unsigned long long l, cl;
	long long t, d;

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/memory", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	if (sscanf(buf, "resident %lld limit %llu device %lld client_limit %llu",
		   &t, &l, &d, &cl) != 4)
		return -EINVAL;
	*total = t;
	*limit = l;
	*client_limit = cl;
	return 0;
}

/* 4 MiB BOs made resident by a CPU mapping until an error: *n of them, the errno */
static int populate_until_error(int fd, long long *n)
{
	uint32_t h;
	void *p;
	int ret = 0;

	for (*n = 0; *n < 1024; ++*n) {
		ret = _test_bo_create(fd, 4 * MiB, VGPU_BO_NO_EXEC, &h, NULL);
		if (!ret)
			ret = _test_bo_map(fd, h, 4 * MiB, &p);
		if (ret)
			break;
		memset(p, 0x5a, 4 * MiB);
		munmap(p, 4 * MiB);
	}
	return -ret;
}

/* v[0] BOs of 4 MiB made resident, v[1] the errno that stopped it */
static void take_memory(const char *node, long long *v, int hold_fd)
{
	int fd = open(node, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		_exit(20);
	v[1] = populate_until_error(fd, &v[0]);
}

TEST_F_TIMEOUT(dos, bo_memory, 300)
{
	unsigned long long limit, climit;
	struct attacker a;
	long long total0, total, v[NV];
	char val[32];

	/* by default, one client's share is three quarters of the limit */
	ASSERT_EQ(0, set_param("client_mem_limit_mb", "0"));
	ASSERT_EQ(0, mem_state(&total0, &limit, &climit));
	ASSERT_EQ(limit / 4 * 3, climit);
	/* room for 64 MiB more, of which the attacker's file may take 32 */
	snprintf(val, sizeof(val), "%llu", (total0 + MiB - 1) / MiB + 64);
	ASSERT_EQ(0, set_param("mem_limit_mb", val));
	ASSERT_EQ(0, set_param("client_mem_limit_mb", "32"));
	ASSERT_EQ(0, mem_state(&total, &limit, &climit));
	ASSERT_EQ(32 * MiB, climit);

	ASSERT_EQ(0, attack(&a, self->node, take_memory));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: %lld BOs of 4 MiB, then %s", v[0], strerror((int)v[1]));
	ASSERT_EQ(ENOMEM, v[1]);
	/* stopped by its own share: exactly what fits in it */
	ASSERT_EQ(8, v[0]);
	ASSERT_EQ(0, mem_state(&total, &limit, &climit));
	ASSERT_GT((long long)limit, total + (long long)MiB);

	ASSERT_EQ(0, bystander(self->node));
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

/* the attacker takes what it can on each device: v[0..1] BOs, v[2..3] errnos */
static void take_memory_all_devices(const char *node, long long *v, int hold_fd)
{
	int fd[2], minor, i;

	fd[0] = vgpu_open_render_minor(&minor);
	fd[1] = vgpu_open_render_after(minor, NULL);
	if (fd[0] < 0 || fd[1] < 0)
		_exit(21);
	for (i = 0; i < 2; i++)
		v[2 + i] = populate_until_error(fd[i], &v[i]);
}

TEST_F_TIMEOUT(dos, bo_memory_global, 300)
{
	unsigned long long limit, climit;
	struct attacker a;
	long long total0, total, v[NV];
	char val[32], other[32];
	int fd, minor, minor2;

	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	close(fd);
	fd = vgpu_open_render_after(minor, &minor2);
	if (fd < 0)
		SKIP(return, "one vgpu device");
	close(fd);
	snprintf(other, sizeof(other), "/dev/dri/renderD%d", minor2);
	ASSERT_EQ(0, chmod(other, 0666));
	/* no client share: the global limit alone */
	ASSERT_EQ(0, set_param("client_mem_limit_mb", "1048576"));
	ASSERT_EQ(0, mem_state(&total0, &limit, &climit));
	snprintf(val, sizeof(val), "%llu", (total0 + MiB - 1) / MiB + 32);
	ASSERT_EQ(0, set_param("mem_limit_mb", val));
	ASSERT_EQ(0, mem_state(&total, &limit, &climit));

	ASSERT_EQ(0, attack(&a, self->node, take_memory_all_devices));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: %lld BOs on the first device (%s), %lld on the second (%s)",
	       v[0], strerror((int)v[2]), v[1], strerror((int)v[3]));
	ASSERT_EQ(ENOMEM, v[2]);
	ASSERT_EQ(ENOMEM, v[3]);
	/* both devices together hold no more than the one limit */
	ASSERT_EQ((long long)((limit - total) / (4 * MiB)), v[0] + v[1]);
	ASSERT_EQ(0, v[1]);
	ASSERT_EQ(0, attack_end(&a));
	chmod(other, self->mode);
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

/* .kernel wait: spins until *flag != 0 */
static const char wait_src[] =
	".kernel wait\n.param ptr flag\n"
	"  LDP.64 R2, [flag] ;\n"
	"l:\n  LDG.32 R5, [R2] ;\n  ISETP.EQ.U32 P0, R5, 0x0 ;\n  @P0 BRA l ;\n"
	"  EXIT ;\n";

/* set by the attacker (a shared page) when its first phase is over */
static volatile int *phase_done;

/*
 * Queue jobs behind one that waits on a flag, non-blocking, until
 * -EAGAIN: on queue 0 (v[0] jobs, then v[1] the errno), then on a second
 * queue (v[2], v[3]).  Then a blocking SUBMIT in a thread must not return
 * until the flag is set (v[4]: 1 if it had not returned by then), after
 * which it succeeds (v[5]: its result) and every job's store is checked
 * (v[6]: 0 when all are right).  The flag is set when the parent writes to
 * the attacker (before it reports, it reads one byte); *phase_done once
 * the thread is started.  Then v[7] and v[9]: the hardware queues of
 * queue 0 and queue 2, v[8]: queue 0's guilty resets (the waiter's
 * timeout).
 */
struct blocker {
	int fd;
	struct drm_vgpu_submit s;
	volatile int done, ret;
};

static void *blocking_submit(void *arg)
{
	struct blocker *b = arg;

	b->ret = _test_submit(b->fd, &b->s);
	b->done = 1;
	return NULL;
}

static void take_jobs(const char *node, long long *v, int hold_fd)
{
	struct drm_vgpu_queue_get_state st = { 0 };
	struct drm_vgpu_sync in = { 0 };
	struct drm_vgpu_submit s, ws;
	struct vgpu_prog w, p;
	uint32_t wh[3], h[3], q2;
	struct blocker b;
	pthread_t t;
	char c;
	int fd, bfd, ret;
	long long n;

	fd = open(node, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		_exit(30);
	if (vgpu_prog_load(fd, &w, wait_src, 4096) || vgpu_prog_load(fd, &p, vgpu_store_src, 4096))
		_exit(31);
	*(uint64_t *)w.param = w.data_va;
	*(uint64_t *)p.param = p.data_va;
	vgpu_prog_submit_args(&w, &ws, wh, 1, 32);
	if (_test_syncobj_create(fd, &in.handle))
		_exit(32);
	ws.out_syncs = (uintptr_t)&in;
	ws.out_sync_count = 1;
	if (_test_submit(fd, &ws))
		_exit(33);
	/* store jobs that wait for the waiter (listing nothing: no implicit sync) */
	vgpu_prog_submit_args(&p, &s, h, 1, 32);
	s.bo_handle_count = 0;
	s.in_syncs = (uintptr_t)&in;
	s.in_sync_count = 1;
	for (n = 1; n < 100000; n++) {
		ret = ioctl(fd, DRM_IOCTL_VGPU_SUBMIT, &s) ? -errno : 0;
		if (ret)
			break;
	}
	v[0] = n;	/* the waiter and the store jobs */
	v[1] = -ret;
	if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_NORMAL, &q2))
		_exit(34);
	s.queue = q2;
	for (n = 0; n < 100000; n++) {
		ret = ioctl(fd, DRM_IOCTL_VGPU_SUBMIT, &s) ? -errno : 0;
		if (ret)
			break;
	}
	v[2] = n;
	v[3] = -ret;
	/*
	 * A blocking SUBMIT on the same file: O_NONBLOCK is the open file
	 * description's, so it is cleared for both fds.  Listing the data
	 * BO, it is the job WAIT_BO waits for (queue 0 runs in order).
	 */
	bfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (bfd < 0 || fcntl(bfd, F_SETFL, 0))
		_exit(35);
	memset(&b, 0, sizeof(b));
	b.fd = bfd;
	b.s = s;
	b.s.queue = 0;
	b.s.bo_handle_count = 3;
	if (pthread_create(&t, NULL, blocking_submit, &b))
		_exit(36);
	*phase_done = 1;
	/* the parent says when (after its bystander has run) */
	if (read(hold_fd, &c, 1) != 1)
		_exit(37);
	v[4] = !b.done;
	/* where its two queues' jobs are, and whether the waiter still runs */
	st.queue_id = 0;
	v[7] = vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &st) ? -1 : st.hw_queue;
	v[8] = st.guilty_resets;
	st.queue_id = q2;
	v[9] = vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &st) ? -1 : st.hw_queue;
	*(volatile uint32_t *)w.data = 1;
	pthread_join(t, NULL);
	v[5] = -b.ret;
	v[6] = _test_wait_bo(fd, p.data_h, vgpu_wait_ns(120));
	for (n = 0; !v[6] && n < 32; n++)
		if (((uint32_t *)p.data)[n] != n * 2)
			v[6] = 1000 + n;
}

/* the hardware queues of the normal band (vgpu_bands_init()), 0 on error */
static unsigned int normal_band(const char *node)
{
	uint64_t n = 0;
	int fd = open(node, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (_test_get_param(fd, VGPU_PARAM_QUEUES, &n))
		n = 0;
	close(fd);
	if (n < 4)
		return n ? 1 : 0;
	return n - 2 * (n / 8 ? n / 8 : 1) - (n / 4 ? n / 4 : 1);
}

TEST_F_TIMEOUT(dos, queued_jobs, 300)
{
	struct attacker a;
	long long v[NV];
	unsigned int band;
	int i, hw = -1;

	band = normal_band(self->node);
	ASSERT_LT(0, band);
	phase_done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, phase_done);
	*phase_done = 0;
	ASSERT_EQ(0, set_param("max_jobs_per_queue", "24"));
	ASSERT_EQ(0, set_param("max_jobs_per_file", "40"));
	ASSERT_EQ(0, attack(&a, self->node, take_jobs));
	/* a bystander runs while the attacker's jobs fill its bounds */
	ASSERT_EQ(0, bystander(self->node));
	/* a deadline against a hang, not a measurement */
	for (i = 0; i < 12000 && !*phase_done; i++)
		usleep(10000);
	/*
	 * and one once they are full, the waiter spinning at the head of
	 * its hardware queue and queue 2's jobs waiting for it at theirs
	 */
	ASSERT_EQ(0, bystander_hw(self->node, &hw));
	ASSERT_EQ(1, write(a.to_child, "g", 1));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: queue 0 %lld jobs (%s), queue 2 %lld (%s); blocked %lld, then %s; stores %lld",
	       v[0], strerror((int)v[1]), v[2], strerror((int)v[3]), v[4],
	       strerror((int)v[5]), v[6]);
	TH_LOG("hardware queues: attacker's queue 0 on %lld (waiter reset %lld times), queue 2 on %lld; bystander on %d of a band of %u",
	       v[7], v[8], v[9], hw, band);
	ASSERT_EQ(1, *phase_done);
	ASSERT_EQ(24, v[0]);
	ASSERT_EQ(EAGAIN, v[1]);
	ASSERT_EQ(40 - 24, v[2]);
	ASSERT_EQ(EAGAIN, v[3]);
	/* the bystander was served while the waiter still ran */
	ASSERT_EQ(0, v[8]);
	ASSERT_EQ(1, v[4]);	/* the blocking SUBMIT waited */
	ASSERT_EQ(0, v[5]);	/* and went through once jobs were freed */
	ASSERT_EQ(0, v[6]);
	/* not behind either of the attacker's rings while a queue was free */
	ASSERT_LE(0, hw);
	if (band >= 3) {
		ASSERT_NE(v[7], hw);
		ASSERT_NE(v[9], hw);
	}
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
	munmap((void *)phase_done, 4096);
}

/*
 * Every device's debugfs release_hold set to @val; the sum of their
 * releases_pending (-1 when a device has no such file).
 */
static long long release_hold(int val)
{
	char path[96], dir[64];
	long long sum = 0, n;
	int i;

	for (i = 0; i < 64; i++) {
		char buf[32];

		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%d/name", i);
		if (read_file(path, buf, sizeof(buf)) <= 0 || strncmp(buf, "vgpu ", 5))
			continue;
		snprintf(dir, sizeof(dir), "/sys/kernel/debug/dri/%d", i);
		if (val >= 0) {
			snprintf(path, sizeof(path), "%s/release_hold", dir);
			if (sysfs_write(path, val ? "1" : "0"))
				return -1;
		}
		n = vgpu_queues_num(dir, "releases_pending");
		if (n < 0)
			return -1;
		sum += n;
	}
	return sum;
}

/*
 * Jobs whose release free_job deferred still count in their file's jobs
 * in flight: with the releases held (release_hold), v[0] jobs go in
 * before -EAGAIN (v[1]); once all have completed (v[2]: WAIT_BO), a SUBMIT
 * is still -EAGAIN (v[3]).  After the parent lets the releases run, a
 * blocking SUBMIT goes through (v[4]) and its stores are right (v[5]).
 */
static void take_released_jobs(const char *node, long long *v, int hold_fd)
{
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];
	long long n;
	int fd, ret = 0;
	char c;

	fd = open(node, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || vgpu_prog_load(fd, &p, vgpu_store_src, 4096))
		_exit(70);
	*(uint64_t *)p.param = p.data_va;
	vgpu_prog_submit_args(&p, &s, h, 1, 32);
	for (n = 0; n < 100000; n++) {
		ret = ioctl(fd, DRM_IOCTL_VGPU_SUBMIT, &s) ? -errno : 0;
		if (ret)
			break;
	}
	v[0] = n;
	v[1] = -ret;
	/* queue 0 runs in order: the BO is idle when every job is done */
	v[2] = _test_wait_bo(fd, p.data_h, vgpu_wait_ns(120));
	v[3] = ioctl(fd, DRM_IOCTL_VGPU_SUBMIT, &s) ? errno : 0;
	*phase_done = 1;
	if (read(hold_fd, &c, 1) != 1)
		_exit(71);
	memset(p.data, 0, 4096);
	((uint32_t *)p.param)[2] = 5;
	if (fcntl(fd, F_SETFL, 0))
		_exit(72);
	v[4] = -_test_submit(fd, &s);
	v[5] = _test_wait_bo(fd, p.data_h, vgpu_wait_ns(120));
	for (n = 0; !v[5] && n < 32; n++)
		if (((uint32_t *)p.data)[n] != n * 2 + 5)
			v[5] = 1000 + n;
}

TEST_F_TIMEOUT(dos, released_jobs, 300)
{
	struct attacker a;
	long long v[NV], pending;
	int i;

	phase_done = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, phase_done);
	*phase_done = 0;
	ASSERT_EQ(0, set_param("max_jobs_per_queue", "24"));
	ASSERT_EQ(0, set_param("max_jobs_per_file", "40"));
	if (release_hold(1) < 0) {
		munmap((void *)phase_done, 4096);
		SKIP(return, "no debugfs release_hold");
	}
	ASSERT_EQ(0, attack(&a, self->node, take_released_jobs));
	/* a deadline against a hang, not a measurement */
	for (i = 0; i < 12000 && !*phase_done; i++)
		usleep(10000);
	/*
	 * WAIT_BO returns when the jobs' fences signal; drm_sched's free_job,
	 * which defers each release, runs after that from its own work item:
	 * wait (a deadline, not a measurement) until all 24 were deferred.
	 */
	pending = release_hold(-1);
	for (i = 0; i < 12000 && pending >= 0 && pending < 24; i++) {
		usleep(10000);
		pending = release_hold(-1);
	}
	/* the attacker's file is full, another user's is not */
	ASSERT_EQ(0, bystander(self->node));
	ASSERT_LE(0, release_hold(0));
	ASSERT_EQ(1, write(a.to_child, "g", 1));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("releases held: %lld jobs, then %s; all done (%lld), then %s; %lld releases pending; released: %s, stores %lld",
	       v[0], strerror((int)v[1]), v[2], strerror((int)v[3]), pending,
	       strerror((int)v[4]), v[5]);
	ASSERT_EQ(1, *phase_done);
	ASSERT_EQ(24, v[0]);
	ASSERT_EQ(EAGAIN, v[1]);
	ASSERT_EQ(0, v[2]);
	ASSERT_EQ(EAGAIN, v[3]);	/* done, not released: still counted */
	ASSERT_LE(24, pending);
	ASSERT_EQ(0, v[4]);
	ASSERT_EQ(0, v[5]);
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
	munmap((void *)phase_done, 4096);
}

/*
 * BOs until -EMFILE (v[0] created, v[1] errno); one kept by a CPU mapping
 * after its handle is closed still counts (v[2]: the errno of the next
 * create, then v[3]: the create's result after munmap frees it)
 */
static void take_bos(const char *node, long long *v, int hold_fd)
{
	int fd = open(node, O_RDWR | O_CLOEXEC), ret = 0;
	struct drm_gem_close gc = { 0 };
	uint32_t h, first = 0;
	void *p;

	if (fd < 0)
		_exit(40);
	for (v[0] = 0; v[0] < 1000000; v[0]++) {
		ret = _test_bo_create(fd, 4096, 0, &h, NULL);
		if (ret)
			break;
		if (!first)
			first = h;
	}
	v[1] = -ret;
	if (_test_bo_map(fd, first, 4096, &p))
		_exit(41);
	gc.handle = first;
	if (ioctl(fd, DRM_IOCTL_GEM_CLOSE, &gc))
		_exit(42);
	v[2] = -_test_bo_create(fd, 4096, 0, &h, NULL);
	munmap(p, 4096);
	v[3] = -_test_bo_create(fd, 4096, 0, &h, NULL);
}

TEST_F_TIMEOUT(dos, gem_objects, 300)
{
	struct attacker a;
	long long v[NV];

	ASSERT_EQ(0, set_param("max_bos_per_file", "512"));
	ASSERT_EQ(0, attack(&a, self->node, take_bos));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: %lld BOs, then %s", v[0], strerror((int)v[1]));
	ASSERT_EQ(512, v[0]);
	ASSERT_EQ(EMFILE, v[1]);
	ASSERT_EQ(EMFILE, v[2]);	/* the mapped BO still counts */
	ASSERT_EQ(0, v[3]);		/* freed with its mapping */
	ASSERT_EQ(0, bystander(self->node));
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

/*
 * v[0]: files opened, each loaded with a store kernel and a job submitted
 * (stopping at the first failure, v[1] its errno); v[2]: jobs whose
 * results were all right
 */
#define AS_FILES 300
static void take_address_spaces(const char *node, long long *v, int hold_fd)
{
	static struct vgpu_prog p[AS_FILES];
	static int fd[AS_FILES];
	struct drm_vgpu_submit s;
	uint32_t h[3];
	int i, ret = 0;

	for (v[0] = 0; v[0] < AS_FILES; v[0]++) {
		i = (int)v[0];
		fd[i] = open(node, O_RDWR | O_CLOEXEC);
		if (fd[i] < 0) {
			ret = -errno;
			break;
		}
		ret = vgpu_prog_load(fd[i], &p[i], vgpu_store_src, 4096);
		if (ret)
			break;
		*(uint64_t *)p[i].param = p[i].data_va;
		((uint32_t *)p[i].param)[2] = (uint32_t)i;
		vgpu_prog_submit_args(&p[i], &s, h, 1, 32);
		ret = _test_submit(fd[i], &s);
		if (ret)
			break;
	}
	v[1] = -ret;
	for (i = 0; i < v[0]; i++) {
		unsigned int t;

		if (_test_wait_bo(fd[i], p[i].data_h, vgpu_wait_ns(60)))
			continue;
		for (t = 0; t < 32; t++)
			if (((uint32_t *)p[i].data)[t] != t * 2 + (uint32_t)i)
				break;
		v[2] += t == 32;
	}
}

TEST_F_TIMEOUT(dos, address_spaces, 600)
{
	struct attacker a;
	long long v[NV];

	ASSERT_EQ(0, attack(&a, self->node, take_address_spaces));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: %lld files with a job each (%s), %lld jobs right",
	       v[0], v[1] ? strerror((int)v[1]) : "no error", v[2]);
	ASSERT_EQ(AS_FILES, v[0]);
	ASSERT_EQ(0, v[1]);
	ASSERT_EQ(AS_FILES, v[2]);
	/* while the attacker holds 300 address spaces open */
	ASSERT_EQ(0, bystander(self->node));
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

static int vm_bind_ops(int fd, uint32_t vm, struct drm_vgpu_vm_bind_op *ops, uint32_t n)
{
	struct drm_vgpu_vm_bind b = { .vm_id = vm, .ops = (uintptr_t)ops, .op_count = n };

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_BIND, &b);
}

/*
 * v[0]: the sparse bind's result, v[1] its page-table bytes (fdinfo
 * vgpu-pt-bytes after it, less before); v[2] single-page binds made 1 GiB
 * apart, v[3] the errno that stopped them
 */
#define GIB (1ull << 30)
#define TIB (1ull << 40)
static struct drm_vgpu_vm_bind_op sparse_ops[1024];

static void take_page_tables(const char *node, long long *v, int hold_fd)
{
	struct drm_vgpu_vm_create vc = { 0 };
	struct drm_vgpu_vm_bind_op op = { .op = VGPU_VM_BIND_OP_MAP, .range = 4096 };
	char val[64];
	long long pt0 = 0, pt1 = 0;
	unsigned int i;
	int fd = open(node, O_RDWR | O_CLOEXEC), ret;

	if (fd < 0 || vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_CREATE, &vc) ||
	    _test_bo_create(fd, 4096, 0, &op.handle, NULL))
		_exit(50);
	if (!fdinfo_get(fd, "vgpu-pt-bytes", val, sizeof(val)))
		pt0 = atoll(val);
	for (i = 0; i < 1024; i++)
		sparse_ops[i] = (struct drm_vgpu_vm_bind_op){
			.op = VGPU_VM_BIND_OP_MAP_SPARSE, .va = TIB + i * GIB, .range = GIB,
		};
	v[0] = -vm_bind_ops(fd, vc.vm_id, sparse_ops, 1024);
	/*
	 * the tables the bind reserved and did not use go back when its job
	 * is freed, a moment after the bind returns
	 */
	for (i = 0; i < 500; i++) {
		if (!fdinfo_get(fd, "vgpu-pt-bytes", val, sizeof(val)))
			pt1 = atoll(val);
		if (pt1 - pt0 <= 16384)
			break;
		usleep(10000);
	}
	v[1] = pt1 - pt0;
	ret = 0;
	for (v[2] = 0; v[2] < 100000; v[2]++) {
		op.va = 4 * TIB + v[2] * GIB;
		ret = vm_bind_ops(fd, vc.vm_id, &op, 1);
		if (ret)
			break;
	}
	v[3] = -ret;
}

TEST_F_TIMEOUT(dos, page_tables, 300)
{
	struct attacker a;
	long long v[NV];

	/*
	 * 16 MiB: room for what the sparse bind reserves before its ops run
	 * (a level-2 table per op), and a bound the stride reaches soon
	 */
	ASSERT_EQ(0, set_param("pt_limit_mb", "16"));
	ASSERT_EQ(0, attack(&a, self->node, take_page_tables));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: 1 TiB sparse: %s, %lld bytes of tables; %lld single-page binds, then %s",
	       strerror((int)v[0]), v[1], v[2], strerror((int)v[3]));
	ASSERT_EQ(0, v[0]);
	/* one 1 GiB NULL entry each: the level-2 tables of 1 TiB, 2 x 4 KiB */
	ASSERT_GE(16384, v[1]);
	ASSERT_EQ(ENOSPC, v[3]);
	/* 12 KiB of tables each within 16 MiB, less the sparse ones' */
	ASSERT_GE(1366, v[2]);
	ASSERT_LE(1250, v[2]);
	ASSERT_EQ(0, bystander(self->node));
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

/*
 * Asynchronous binds held by an in-sync (a job waiting on a flag), on an
 * O_NONBLOCK file, until -EAGAIN: v[0] binds on VM A and v[1] the errno;
 * v[2], v[3] on VM B; v[4] the errno of a SUBMIT then.  Once the parent
 * says so, the flag is set: v[5] the wait for each VM's last bind (its
 * out-sync), v[6] a blocking VM_BIND after them.
 */
static int bind_async(int fd, uint32_t vm, struct drm_vgpu_vm_bind_op *op,
		      struct drm_vgpu_sync *in, struct drm_vgpu_sync *out)
{
	struct drm_vgpu_vm_bind b = {
		.vm_id = vm, .ops = (uintptr_t)op, .op_count = 1,
		.in_syncs = (uintptr_t)in, .in_sync_count = 1,
		.out_syncs = (uintptr_t)out, .out_sync_count = 1,
	};

	/* raw: vgpu_ioctl() retries -EAGAIN */
	return ioctl(fd, DRM_IOCTL_VGPU_VM_BIND, &b) ? -errno : 0;
}

static void take_binds(const char *node, long long *v, int hold_fd)
{
	struct drm_vgpu_vm_bind_op op = { .op = VGPU_VM_BIND_OP_MAP, .range = 4096 };
	struct drm_vgpu_sync in = { 0 }, out[2] = { { 0 } };
	struct drm_vgpu_vm_create vc[2] = { { 0 } };
	struct drm_vgpu_submit ws;
	struct vgpu_prog w;
	uint32_t wh[3];
	long long n;
	int fd, bfd, ret = 0;
	char c;

	fd = open(node, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		_exit(60);
	if (vgpu_prog_load(fd, &w, wait_src, 4096) ||
	    _test_bo_create(fd, 4096, VGPU_BO_NO_EXEC, &op.handle, NULL) ||
	    _test_syncobj_create(fd, &in.handle) ||
	    _test_syncobj_create(fd, &out[0].handle) ||
	    _test_syncobj_create(fd, &out[1].handle) ||
	    vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_CREATE, &vc[0]) ||
	    vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_CREATE, &vc[1]))
		_exit(61);
	*(uint64_t *)w.param = w.data_va;
	vgpu_prog_submit_args(&w, &ws, wh, 1, 32);
	ws.out_syncs = (uintptr_t)&in;
	ws.out_sync_count = 1;
	if (_test_submit(fd, &ws))
		_exit(62);
	for (int i = 0; i < 2; i++) {
		for (n = 0; n < 100000; n++) {
			op.va = (1ull << 32) + n * 4096;
			ret = bind_async(fd, vc[i].vm_id, &op, &in, &out[i]);
			if (ret)
				break;
		}
		v[2 * i] = n;
		v[2 * i + 1] = -ret;
	}
	ret = ioctl(fd, DRM_IOCTL_VGPU_SUBMIT, &ws) ? -errno : 0;
	v[4] = -ret;
	if (read(hold_fd, &c, 1) != 1)
		_exit(63);
	*(volatile uint32_t *)w.data = 1;
	v[5] = _test_syncobj_wait(fd, out[0].handle, 0, vgpu_wait_ns(60)) ||
	       _test_syncobj_wait(fd, out[1].handle, 0, vgpu_wait_ns(60));
	/* O_NONBLOCK is the open file description's: clear it on a dup */
	bfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (bfd < 0 || fcntl(bfd, F_SETFL, 0))
		_exit(64);
	op.va = 1ull << 33;
	v[6] = vm_bind_ops(bfd, vc[0].vm_id, &op, 1);
}

TEST_F_TIMEOUT(dos, queued_binds, 300)
{
	struct attacker a;
	long long v[NV];

	ASSERT_EQ(0, set_param("max_jobs_per_queue", "24"));
	ASSERT_EQ(0, set_param("max_jobs_per_file", "40"));
	ASSERT_EQ(0, attack(&a, self->node, take_binds));
	ASSERT_EQ(0, bystander(self->node));
	ASSERT_EQ(1, write(a.to_child, "g", 1));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: VM A %lld binds (%s), VM B %lld (%s); SUBMIT %s; binds waited %lld, then %lld",
	       v[0], strerror((int)v[1]), v[2], strerror((int)v[3]),
	       strerror((int)v[4]), v[5], v[6]);
	ASSERT_EQ(24, v[0]);		/* one VM's bind queue */
	ASSERT_EQ(EAGAIN, v[1]);
	ASSERT_EQ(40 - 1 - 24, v[2]);	/* the file's, less the waiting job */
	ASSERT_EQ(EAGAIN, v[3]);
	ASSERT_EQ(EAGAIN, v[4]);	/* binds count with the file's jobs */
	ASSERT_EQ(0, v[5]);
	ASSERT_EQ(0, v[6]);
	ASSERT_EQ(0, attack_end(&a));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

/*
 * User-mode queues over three files until refused, each queue busy for
 * ever in a SEM_ACQUIRE nobody releases: v[0] queues made, v[1] the
 * errno of the first file's refusal, v[2] of the last file's.
 */
static void take_user_queues(const char *node, long long *v, int hold_fd)
{
	struct vgpu_cmd_sem acq;
	int fd, f, ret = 0;
	struct uq q;
	uint32_t h;
	uint64_t va;

	for (f = 0; f < 3; f++) {
		fd = open(node, O_RDWR | O_CLOEXEC);
		if (fd < 0 || _test_bo_create(fd, 4096, VGPU_BO_POPULATE, &h, &va))
			_exit(70);
		acq = stuck_acquire(va);
		for (;;) {
			ret = uq_create(fd, &q);
			if (ret)
				break;
			uq_put(&q, &acq);
			uq_ring(&q);
			v[0]++;
		}
		v[f ? 2 : 1] = -ret;
	}
}

/*
 * Another unprivileged user (@uid) makes a user queue, launches the store
 * kernel on it and waits for the fence it releases; its exit status (0:
 * served).
 */
static int uq_bystander(uid_t uid, const char *node)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (!pid) {
		int fd;

		vgpu_become_user(uid);
		fd = open(node, O_RDWR | O_CLOEXEC);
		_exit(fd < 0 ? 10 : uq_run_store(fd));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F_TIMEOUT(dos, user_queues, 300)
{
	struct attacker a;
	uint64_t nuq = 0;
	long long v[NV];
	int fd;

	fd = open(self->node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, _test_get_param(fd, VGPU_PARAM_USER_QUEUES, &nuq));
	close(fd);
	if (!nuq)
		SKIP(return, "the device keeps no hardware queue for user mode");
	/* more than a file's, fewer than two files' */
	ASSERT_EQ(0, set_param("max_userq_per_user", "40"));
	ASSERT_EQ(0, attack(&a, self->node, take_user_queues));
	ASSERT_EQ(0, attack_report(&a, v));
	TH_LOG("attacker: %lld busy user queues on %llu hardware queues; refused %s, then %s",
	       v[0], (unsigned long long)nuq, strerror((int)v[1]),
	       strerror((int)v[2]));
	ASSERT_EQ(40, v[0]);
	ASSERT_EQ(EMFILE, v[1]);	/* VGPU_MAX_USERQ_PER_FILE on the first file */
	ASSERT_EQ(EDQUOT, v[2]);	/* the user's bound, on the last */
	/* another unprivileged user: a user queue and a job on it */
	ASSERT_EQ(0, uq_bystander(NOBODY - 1, self->node));
	ASSERT_EQ(0, bystander(self->node));
	ASSERT_EQ(0, attack_end(&a));
	/* the attacker's queues are gone with it: the bound is the user's again */
	ASSERT_EQ(0, uq_bystander(NOBODY, self->node));
	ASSERT_EQ(self->oom0, file_key_num("/proc/vmstat", "oom_kill", ' '));
}

VGPU_TEST_HARNESS_MAIN
