// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko selftests (kselftest_harness.h), after vgpu_test's: debugging
 * surfaces (debugfs, fdinfo, devcoredump, tracepoints), two processes,
 * the device going away with jobs in flight, and device resets.
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include <poll.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/sync_file.h>
#include <linux/capability.h>
#include "vgpu_test.h"

/* ---- debugging surfaces: debugfs, fdinfo, devcoredump, tracepoints ---- */

TEST_F(job, debugfs_queues)
{
	char dir[64], path[128], buf[8192], want[64];
	uint64_t nq, q;

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		SKIP(return, "no debugfs");
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	snprintf(path, sizeof(path), "%s/queues", dir);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(0, strncmp(buf, "resets ", 7));
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_QUEUES, &nq));
	for (q = 0; q < nq; q++) {
		snprintf(want, sizeof(want), "\nqueue %llu: status ", (unsigned long long)q);
		ASSERT_NE(NULL, strstr(buf, want));
	}
	snprintf(want, sizeof(want), "\nqueue %llu: ", (unsigned long long)nq);
	ASSERT_EQ(NULL, strstr(buf, want));
}

TEST_F(job, debugfs_exceptions)
{
	char dir[64], path[128], buf[16384], want[96], client[32];
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		SKIP(return, "no debugfs");
	ASSERT_EQ(0, fdinfo_get(self->fd, "drm-client-id", client, sizeof(client)));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &p, "  BAR.SYNC 0x7, 0x80 ;\n  EXIT ;\n", 4096));
	vgpu_prog_submit_args(&p, &s, h, 1, 64);
	test_submit(&s);
	test_wait_bo(p.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, &exc));
	ASSERT_EQ(VGPU_EXC_DEADLOCK, exc.code);
	snprintf(path, sizeof(path), "%s/exceptions", dir);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	snprintf(want, sizeof(want), "client %s job %llu queue 0 hw_queue %u status %u code %u ",
		 client, (unsigned long long)s.job_id, j.hw_queue, VGPU_ERR_EXCEPTION,
		 VGPU_EXC_DEADLOCK);
	ASSERT_NE(NULL, strstr(buf, want));
}

TEST_F(job, debugfs_address_spaces)
{
	char dir[64], path[128], buf[16384], want[64];
	int client = fd_client(self->fd), asid;
	char *line;

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		SKIP(return, "no debugfs");
	snprintf(path, sizeof(path), "%s/address_spaces", dir);
	/* a job ran: VM 0 has an ASID (until an idle AS's is taken) */
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(0, strncmp(buf, "asids ", 6));
	snprintf(want, sizeof(want), "\nclient %d asid ", client);
	line = strstr(buf, want);
	ASSERT_NE(NULL, line);
	ASSERT_EQ(1, sscanf(line + strlen(want), "%d", &asid));
	ASSERT_LE(0, asid);
	/* code, param and data BOs: 3 pages */
	snprintf(want, sizeof(want), "\nclient %d asid %d root ", client, asid);
	ASSERT_NE(NULL, strstr(buf, want));
	ASSERT_NE(NULL, strstr(strstr(buf, want), " mapped 12288 bytes "));
}

TEST_F(job, fdinfo_keys)
{
	unsigned long long ns0, ns1;
	char val[64];
	uint32_t h;

	ASSERT_EQ(0, fdinfo_get(self->fd, "drm-driver", val, sizeof(val)));
	ASSERT_STREQ("vgpu", val);
	ASSERT_EQ(0, fdinfo_get(self->fd, "drm-pdev", val, sizeof(val)));
	ASSERT_NE(NULL, strchr(val, ':'));
	fdinfo_num(_metadata, self->fd, "drm-client-id", "");
	/* code, param, data: 12 KiB, all written through mmap: resident */
	ASSERT_EQ(12, fdinfo_num(_metadata, self->fd, "drm-total-memory", " KiB"));
	ASSERT_EQ(12, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " KiB"));
	ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-shared-memory", ""));
	ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-active-memory", ""));
	ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-purgeable-memory", ""));
	/* a new BO has no pages until something needs them */
	test_bo_create(65536, 0, &h, NULL);
	ASSERT_EQ(76, fdinfo_num(_metadata, self->fd, "drm-total-memory", " KiB"));
	ASSERT_EQ(12, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " KiB"));

	ns0 = fdinfo_num(_metadata, self->fd, "drm-engine-compute", " ns");
	ASSERT_EQ(0, ns0);
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ns1 = fdinfo_num(_metadata, self->fd, "drm-engine-compute", " ns");
	ASSERT_LT(ns0, ns1);
}

/* Dismiss every devcoredump of the system (a device keeps only one). */
static void devcd_dismiss_all(void)
{
	DIR *d = opendir("/sys/class/devcoredump");
	struct dirent *e;
	char path[300];

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "devcd", 5)) {
			snprintf(path, sizeof(path), "/sys/class/devcoredump/%s/data", e->d_name);
			sysfs_write(path, "1");
		}
	closedir(d);
}

/* The text of a devcoredump containing @needle, or -ENOENT. */
static int devcd_find(const char *needle, char *buf, size_t len)
{
	DIR *d = opendir("/sys/class/devcoredump");
	struct dirent *e;
	char path[300];
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while (ret && (e = readdir(d)))
		if (!strncmp(e->d_name, "devcd", 5)) {
			snprintf(path, sizeof(path), "/sys/class/devcoredump/%s/data", e->d_name);
			if (read_file(path, buf, len) > 0 && strstr(buf, needle))
				ret = 0;
		}
	closedir(d);
	return ret;
}

/*
 * devcd_find() once the devcoredump exists: the driver hands it to
 * devcoredump from a work item, after the timeout that made it (which may
 * not allocate: vgpu_reset.c), so it may come after the job's end.
 */
static int devcd_wait(const char *needle, char *buf, size_t len)
{
	int64_t end = vgpu_now_ns() + vgpu_wait_ns(30);
	int ret;

	while ((ret = devcd_find(needle, buf, len)) == -ENOENT && vgpu_now_ns() < end)
		usleep(1000);
	return ret;
}

#define TRACEFS "/sys/kernel/tracing"

static int tracefs_ready(void)
{
	if (!access(TRACEFS "/events", F_OK))
		return 0;
	if (mount("tracefs", TRACEFS, "tracefs", 0, NULL))
		return -errno;
	return 0;
}

TEST_F(job, tracepoints_exist)
{
	static const char *const ev[] = {
		"vgpu_job_submit", "vgpu_job_run", "vgpu_job_complete", "vgpu_reset",
	};
	char path[128];
	unsigned int i;

	if (tracefs_ready())
		SKIP(return, "no tracefs");
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), TRACEFS "/events/vgpu/%s/format", ev[i]);
		ASSERT_EQ(0, access(path, R_OK));
	}
}

/*
 * submit (with its finished fence), ready (no dependencies), run and
 * complete of one job appear in the trace, in order.
 */
TEST_F(job, tracepoints_job)
{
	char want[4][96], client[32], *buf, *p;
	struct drm_vgpu_get_job j;
	unsigned int i, q;
	int tfd;

	if (tracefs_ready())
		SKIP(return, "no tracefs");
	buf = malloc(1 << 20);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, fdinfo_get(self->fd, "drm-client-id", client, sizeof(client)));
	/* an empty trace: opened for writing with O_TRUNC, as "> trace" does */
	tfd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);
	ASSERT_LE(0, tfd);
	close(tfd);
	/* (an oops anywhere earlier turns tracing off: oops_enter()) */
	ASSERT_EQ(0, sysfs_write(TRACEFS "/tracing_on", "1"));
	ASSERT_EQ(0, sysfs_write(TRACEFS "/events/vgpu/enable", "1"));
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, sysfs_write(TRACEFS "/events/vgpu/enable", "0"));
	ASSERT_LT(0, read_file(TRACEFS "/trace", buf, 1 << 20));
	/* the events name the hardware queue */
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
	q = j.hw_queue;
	snprintf(want[0], 96, "vgpu_job_submit: queue=%u client=%s job=%llu fence=", q,
		 client, (unsigned long long)self->s.job_id);
	snprintf(want[1], 96, "vgpu_job_ready: queue=%u client=%s job=%llu\n", q, client,
		 (unsigned long long)self->s.job_id);
	snprintf(want[2], 96, "vgpu_job_run: queue=%u client=%s job=%llu seq=", q, client,
		 (unsigned long long)self->s.job_id);
	snprintf(want[3], 96, "vgpu_job_complete: queue=%u client=%s job=%llu error=0\n",
		 q, client, (unsigned long long)self->s.job_id);
	for (p = buf, i = 0; i < 4; i++) {
		p = strstr(p, want[i]);
		ASSERT_NE(NULL, p) {
			char *l = buf;

			TH_LOG("no \"%s\" in order; the vgpu events:", want[i]);
			while ((l = strstr(l, "vgpu_job"))) {
				char *e = strchr(l, '\n');

				TH_LOG("%.*s", e ? (int)(e - l) : 80, l);
				l = e ? e : l + 8;
			}
		}
	}
	/* the submit names the file's queue too (vgpu-trace's stream tracks) */
	snprintf(want[0], 96, " file_queue=%u\n", self->s.queue);
	p = strstr(buf, "vgpu_job_submit: ");
	ASSERT_NE(NULL, p);
	/* at the end of that line */
	ASSERT_EQ(strchr(p, '\n'), strstr(p, want[0]) + strlen(want[0]) - 1)
		TH_LOG("%.120s", p);
	free(buf);
}

/* ---- two processes ---- */


#define CHILD_CHECK(cond, code) do {					\
	if (!(cond)) {							\
		fprintf(stderr, "# child: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		_exit(code);						\
	}								\
} while (0)

/* A job of @fd that must fail with an MMU fault at an address in [lo, hi). */
static int expect_fault(int fd, struct drm_vgpu_submit *s, struct vgpu_prog *p,
			uint64_t lo, uint64_t hi)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;

	if (_test_submit(fd, s) || _test_wait_bo(fd, p->data_h, vgpu_wait_ns(60)) ||
	    _test_get_job(fd, s->job_id, &j, &exc))
		return -1;
	if (j.state != VGPU_JOB_FAILED || j.error != EFAULT ||
	    j.hw_status != VGPU_ERR_EXCEPTION || exc.code != VGPU_EXC_GLOBAL_FAULT ||
	    exc.addr < lo || exc.addr >= hi) {
		fprintf(stderr, "# job %llu: state %u error %u hw %u exc %u addr 0x%llx (want 0x%llx..0x%llx): %.*s\n",
			(unsigned long long)s->job_id, j.state, j.error, j.hw_status, exc.code,
			(unsigned long long)exc.addr, (unsigned long long)lo,
			(unsigned long long)hi, VGPU_EXC_MSG_LEN, exc.msg);
		return -1;
	}
	return 0;
}

/*
 * The child process, on a file of its own: its jobs aimed at the parent's
 * secret BO (a VA mapped only in the parent's address space) fault, for a
 * write and for a read; its own jobs compute its own results, while the
 * parent runs jobs at the same time.  Exit code: the failed step.
 */
static void isolation_child(uint64_t secret_va, uint64_t secret_size)
{
	struct vgpu_prog st, cp;
	struct drm_vgpu_submit s;
	uint32_t h[3], i;
	int fd = vgpu_open_render();

	CHILD_CHECK(fd >= 0, 10);
	CHILD_CHECK(!vgpu_prog_load(fd, &st, vgpu_store_src, 4096), 11);
	CHILD_CHECK(!vgpu_prog_load(fd, &cp, copy_src, 4096), 12);
	CHILD_CHECK(cp.data_va + 8192 <= secret_va, 13);

	/* write into the parent's BO */
	*(uint64_t *)st.param = secret_va;
	*(uint32_t *)((char *)st.param + 8) = 1;
	vgpu_prog_submit_args(&st, &s, h, 1, 64);
	CHILD_CHECK(!expect_fault(fd, &s, &st, secret_va, secret_va + secret_size), 20);
	/* read from it */
	((uint64_t *)cp.param)[0] = secret_va;
	((uint64_t *)cp.param)[1] = cp.data_va;
	vgpu_prog_submit_args(&cp, &s, h, 1, 64);
	CHILD_CHECK(!expect_fault(fd, &s, &cp, secret_va, secret_va + secret_size), 21);
	for (i = 0; i < 64; i++)
		CHILD_CHECK(((uint32_t *)cp.data)[i] == 0, 22);

	/* its own results, 50 jobs while the parent runs its own */
	*(uint64_t *)st.param = st.data_va;
	*(uint32_t *)((char *)st.param + 8) = 1000;
	vgpu_prog_submit_args(&st, &s, h, 4, 64);
	for (i = 0; i < 50; i++)
		CHILD_CHECK(!_test_submit(fd, &s), 30);
	CHILD_CHECK(!_test_wait_bo(fd, st.data_h, vgpu_wait_ns(60)), 31);
	for (i = 0; i < 256; i++)
		CHILD_CHECK(((uint32_t *)st.data)[i] == i * 2 + 1000, 32);
	close(fd);
	_exit(0);
}

TEST_F(job, isolation_between_processes)
{
	uint32_t spacer_h, secret_h, *secret;
	uint64_t spacer_va, secret_va;
	struct drm_vgpu_get_job j;
	int st, i;
	pid_t pid;

	/* A spacer puts the secret BO above anything the child maps. */
	test_bo_create(4 << 20, 0, &spacer_h, &spacer_va);
	test_bo_create(65536, 0, &secret_h, &secret_va);
	ASSERT_EQ(0, _test_bo_map(self->fd, secret_h, 65536, (void **)&secret));
	for (i = 0; i < 16384; i++)
		secret[i] = 0xa5a5a5a5;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(self->fd);
		isolation_child(secret_va, 65536);
	}
	for (i = 0; i < 50; i++)
		test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	for (i = 0; i < 16384; i++)
		ASSERT_EQ(0xa5a5a5a5, secret[i]);
	/* the child's faults are not the parent's: its jobs all succeeded */
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
}

/* ---- the device going away with jobs in flight ---- */







/* The out-syncobj's fence of a job that raised an exception carries -EIO. */
TEST_F(job, exception_fence_error)
{
	struct drm_vgpu_sync out = { 0 };
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];
	int sf;

	ASSERT_EQ(0, vgpu_prog_load(self->fd, &p, "  BAR.SYNC 0x7, 0x80 ;\n  EXIT ;\n", 4096));
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &out.handle));
	vgpu_prog_submit_args(&p, &s, h, 1, 64);
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	test_submit(&s);
	sf = syncobj_sync_file(self->fd, out.handle);
	ASSERT_LE(0, sf);
	ASSERT_EQ(-EIO, sync_file_status(sf));
	close(sf);
}

/* ---- device reset: what completed stays completed ---- */

/* One thread adds 1 to the counter at ctr. */
static const char inc_src[] =
	".kernel inc\n.param ptr ctr\n"
	"  LDP.64 R2, [ctr] ;\n  MOV R4, 0x1 ;\n"
	"  ATOMG.ADD.U32 RZ, [R2+0x0], R4 ;\n  EXIT ;\n";

static int irq_hold_set(const char *dir, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/irq_hold", dir);
	return sysfs_write(path, val);
}


/*
 * *@idle: every command the driver emitted on queue @q has completed on
 * the device (debugfs queues: the device's completed count equals the
 * driver's emitted count).
 */
static int queue_idle(const char *dir, unsigned int q, bool *idle)
{
	char path[128], buf[8192], want[32], *l;
	unsigned long long emitted;
	unsigned int completed;

	snprintf(path, sizeof(path), "%s/queues", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	snprintf(want, sizeof(want), "\nqueue %u: ", q);
	l = strstr(buf, want);
	l = l ? strstr(l, " completed ") : NULL;
	if (!l || sscanf(l, " completed %u emitted %llu", &completed, &emitted) != 2)
		return -EINVAL;
	*idle = completed == emitted;
	return 0;
}

FIXTURE(reset) {
	int fd;
	char dir[64];
	char params[64];
	bool reloaded;
	struct vgpu_prog p, hp;
	struct drm_vgpu_submit s;
	uint32_t handles[3];
};

FIXTURE_SETUP(reset)
{
	char ko[256];
	uint64_t t;
	int ret;

	ret = module_reload_short_timeout(self->params, sizeof(self->params),
					  ko, sizeof(ko));
	if (ret == -ENOENT)
		SKIP(return, "no %s to load", ko);
	self->reloaded = true;
	ASSERT_EQ(0, ret);
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_JOB_TIMEOUT_MS, &t));
	ASSERT_EQ(reset_timeout_ms(), t);
	if (vgpu_debugfs_dir(self->dir, sizeof(self->dir)))
		self->dir[0] = 0;
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p, vgpu_store_src, 4096));
	*(uint64_t *)self->p.param = self->p.data_va;
	*(uint32_t *)((char *)self->p.param + 8) = 7;
	vgpu_prog_submit_args(&self->p, &self->s, self->handles, 4, 64);
}

FIXTURE_TEARDOWN(reset)
{
	char ko[256];

	/* never leave completions held for the tests after this one */
	if (self->dir[0])
		irq_hold_set(self->dir, "0");
	if (self->p.param)
		vgpu_prog_unmap(&self->p);
	if (self->hp.param)
		vgpu_prog_unmap(&self->hp);
	if (self->fd > 0)
		close(self->fd);
	if (!self->reloaded || module_path(ko, sizeof(ko)))
		return;
	/* the suite's parameters back (no file or mapping holds it now) */
	EXPECT_EQ(0, module_unload_settled());
	EXPECT_EQ(0, module_load(ko, self->params));
}

TEST_F(reset, hang_timeout_reset_next_ok)
{
	struct drm_vgpu_get_job j;
	uint64_t before, after, mine;
	struct drm_vgpu_submit hs;
	struct vgpu_prog *hp = &self->hp;
	uint32_t hh[3];

	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &before));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	vgpu_prog_submit_args(hp, &hs, hh, 1, 32);
	hs.launch.budget = ~0ull;
	test_submit(&hs);
	/* an innocent job queued behind it on the same queue */
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	ASSERT_EQ(0, _test_get_job(self->fd, hs.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(ETIMEDOUT, j.error);
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &after));
	ASSERT_EQ(before + 1, after);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_FILE_RESET_COUNT, &mine));
	ASSERT_EQ(1, mine);
	/* and the next job succeeds */
	memset(self->p.data, 0, 1024);
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

TEST_F(reset, devcoredump_on_timeout)
{
	char buf[8192], want[96], client[32];
	struct drm_vgpu_submit hs;
	struct vgpu_prog *hp = &self->hp;
	uint32_t hh[3];

	if (access("/sys/class/devcoredump", F_OK))
		SKIP(return, "no devcoredump class");
	devcd_dismiss_all();
	ASSERT_EQ(0, fdinfo_get(self->fd, "drm-client-id", client, sizeof(client)));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	vgpu_prog_submit_args(hp, &hs, hh, 1, 32);
	hs.launch.budget = ~0ull;
	test_submit(&hs);
	test_wait_bo(hp->data_h);
	snprintf(want, sizeof(want), "client %s job %llu queue 0 hw_queue ", client,
		 (unsigned long long)hs.job_id);
	ASSERT_EQ(0, devcd_wait(want, buf, sizeof(buf)));
	ASSERT_EQ(0, strncmp(buf, "vgpu devcoredump: job timeout\n", 30));
	snprintf(want, sizeof(want), "code_va 0x%llx code_size %u ",
		 (unsigned long long)hp->code_va, hp->code_size);
	ASSERT_NE(NULL, strstr(buf, want));
	ASSERT_NE(NULL, strstr(buf, "\nqueue 0: status "));
	/* dismissing deletes from a work item: wait until it has run */
	devcd_dismiss_all();
	while (devcd_find("vgpu devcoredump", buf, sizeof(buf)) != -ENOENT)
		usleep(1000);
}

/*
 * A hang the device cannot call a deadlock (warp 0 waits at barrier 1,
 * warp 1 loops and never arrives): the driver's timeout stops the queue,
 * the device ends the launch with its warps' states, and the devcoredump
 * draws them as a wait-for graph: warp 0 waits on barrier 1, which warp 1
 * would arrive on.  The job still ends timed out.
 */
TEST_F(reset, devcoredump_wait_graph)
{
	static const char hang_src[] =
		"  S2R R0, SR_WARPID ;\n"
		"  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
		"  @P0 BAR.SYNC 0x1 ;\n"
		"l:\n"
		"  @!P0 BRA l ;\n"
		"  EXIT ;\n";
	char buf[16384], want[96], client[32];
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit hs;
	struct vgpu_prog *hp = &self->hp;
	uint32_t hh[3];

	if (access("/sys/class/devcoredump", F_OK))
		SKIP(return, "no devcoredump class");
	devcd_dismiss_all();
	while (devcd_find("vgpu devcoredump", buf, sizeof(buf)) != -ENOENT)
		usleep(1000);
	ASSERT_EQ(0, fdinfo_get(self->fd, "drm-client-id", client, sizeof(client)));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, hang_src, 4096));
	vgpu_prog_submit_args(hp, &hs, hh, 1, 64);
	hs.launch.budget = ~0ull;
	test_submit(&hs);
	test_wait_bo(hp->data_h);
	snprintf(want, sizeof(want), "client %s job %llu queue 0 hw_queue ", client,
		 (unsigned long long)hs.job_id);
	ASSERT_EQ(0, devcd_wait(want, buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "\nwait-for graph (Graphviz DOT):\ndigraph deadlock {\n"));
	EXPECT_NE(NULL, strstr(buf, "w0 -> b1 [label=\"waits\"];"));
	/* the record has no barrier counts for an abort: none are drawn */
	EXPECT_NE(NULL, strstr(buf, "b1 [shape=ellipse, label=\"barrier 1\"];"))
		TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(buf, "b1 -> w1 [label=\"would arrive\", style=dashed];"));
	EXPECT_NE(NULL, strstr(buf, "w1 [shape=box, label=\"warp 1\\nrunnable"));
	EXPECT_EQ('}', buf[strlen(buf) - 2]);
	/* the job still ended as timed out, not as aborted */
	j = (struct drm_vgpu_get_job){ .job_id = hs.job_id };
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_VGPU_GET_JOB, &j));
	EXPECT_EQ(VGPU_JOB_FAILED, j.state);
	EXPECT_EQ(ETIMEDOUT, j.error);
	devcd_dismiss_all();
	while (devcd_find("vgpu devcoredump", buf, sizeof(buf)) != -ENOENT)
		usleep(1000);
	/* and the next job succeeds */
	memset(self->p.data, 0, 1024);
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

/*
 * A job that completed on the device before a reset, its completion not
 * yet processed (irq_hold stands in for an interrupt that comes late), is
 * not run again when a hang on another queue resets the device: the reset
 * takes its completion record, the job ends DONE, the counter it
 * increments with an atomic stays at exactly 1.
 */
TEST_F(reset, completed_job_not_rerun)
{
	struct drm_vgpu_submit hs, s;
	struct vgpu_prog *hp = &self->hp, *p = &self->p;
	struct drm_vgpu_get_job j;
	uint64_t nq, before, after;
	uint32_t qlow;
	char path[128], val[16];
	uint32_t hh[3], h[3];
	bool idle = false;

	if (!self->dir[0])
		SKIP(return, "no debugfs");
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_QUEUES, &nq));
	if (nq < 2)
		SKIP(return, "one queue");
	/* with one SM thread the hang would keep the innocent job off the SMs */
	ASSERT_LT(0, sm_threads(self->dir));
	if (sm_threads(self->dir) < 2)
		SKIP(return, "one SM thread (vgpu-pci threads=1)");
	/* the whole-device reset: a per-queue one leaves queue 0 alone */
	ASSERT_EQ(0, sysfs_write("/sys/module/vgpu/parameters/queue_reset", "0"));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qlow));
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &before));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	vgpu_prog_unmap(p);
	ASSERT_EQ(0, vgpu_prog_load(self->fd, p, inc_src, 4096));
	*(uint64_t *)p->param = p->data_va;

	/* the hang, on a low-priority queue (another hardware queue) */
	vgpu_prog_submit_args(hp, &hs, hh, 1, 32);
	hs.launch.budget = ~0ull;
	hs.queue = qlow;
	test_submit(&hs);
	wait_running(_metadata, self->fd, hs.job_id);
	/*
	 * Not a condition of the result: only so that queue 1's timeout
	 * fires before queue 0's (timer wheel buckets), for the reset to
	 * find the innocent job unprocessed.  The outcome must be the same
	 * either way.
	 */
	usleep(200000);

	/* the innocent job on the default queue completes; nobody processes it */
	ASSERT_EQ(0, irq_hold_set(self->dir, "1"));
	vgpu_prog_submit_args(p, &s, h, 1, 1);
	test_submit(&s);
	wait_running(_metadata, self->fd, s.job_id);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, NULL));
	while (!idle) {
		ASSERT_EQ(0, queue_idle(self->dir, j.hw_queue, &idle));
		usleep(1000);
	}
	ASSERT_EQ(1, *(volatile uint32_t *)p->data);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_RUNNING, j.state);

	/* the hang times out, the device is reset, queue 0 goes on */
	test_wait_bo(hp->data_h);
	test_wait_bo(p->data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, hs.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(ETIMEDOUT, j.error);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &after));
	ASSERT_EQ(before + 1, after);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, j.error);
	ASSERT_EQ(1, *(volatile uint32_t *)p->data);

	/* the reset ended the hold: the next job completes by interrupt */
	snprintf(path, sizeof(path), "%s/irq_hold", self->dir);
	ASSERT_EQ(2, read_file(path, val, sizeof(val)));
	ASSERT_EQ(0, strcmp(val, "0\n"));
	test_submit(&s);
	test_wait_bo(p->data_h);
	ASSERT_EQ(2, *(volatile uint32_t *)p->data);
}

/*
 * Each of its threads adds 1 to d[0], spins until d[1] is not zero (the
 * test sets it), then writes 0x600d to d[2]: run twice, d[0] would say so.
 */
static const char once_src[] =
	".kernel once\n.param ptr d\n"
	"  LDP.64 R2, [d] ;\n  MOV R4, 0x1 ;\n"
	"  ATOMG.ADD.U32 RZ, [R2+0x0], R4 ;\n"
	"l:\n  LDG.32 R7, [R2+0x4] ;\n  ISETP.EQ.U32 P0, R7, 0x0 ;\n  @P0 BRA l ;\n"
	"  MOV R5, 0x600d ;\n  STG.32 [R2+0x8], R5 ;\n  EXIT ;\n";


/*
 * Per-queue reset: a hang on queue A (low priority) while queue B (the
 * default queue) runs a kernel across the reset.  Only A's hardware queue
 * is reset: A's job ends -ETIMEDOUT and A counts a guilty reset; B's job
 * is never stopped or run again (it ran once, its threads counted once)
 * and ends DONE with its result; B counts no innocent reset.
 */
TEST_F(reset, hang_resets_only_its_queue)
{
	struct drm_vgpu_queue_get_state sa, sb;
	struct vgpu_prog *hp = &self->hp, bp;
	struct drm_vgpu_submit hs, bs;
	struct drm_vgpu_get_job j;
	uint32_t hh[3], bh[3], qa;
	uint64_t before, after;
	volatile uint32_t *d;

	if (!self->dir[0])
		SKIP(return, "no debugfs");
	ASSERT_LT(0, sm_threads(self->dir));
	if (sm_threads(self->dir) < 2)
		SKIP(return, "one SM thread (vgpu-pci threads=1)");
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &before));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qa));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &bp, once_src, 4096));
	d = bp.data;
	*(uint64_t *)bp.param = bp.data_va;

	vgpu_prog_submit_args(hp, &hs, hh, 1, 32);
	hs.launch.budget = ~0ull;
	hs.queue = qa;
	test_submit(&hs);
	wait_running(_metadata, self->fd, hs.job_id);
	/* B starts half a timeout later: its own timeout is far off */
	usleep(reset_timeout_ms() * 500);
	vgpu_prog_submit_args(&bp, &bs, bh, 1, 32);
	bs.launch.budget = ~0ull;
	test_submit(&bs);
	while (d[0] != 32)	/* on an SM */
		usleep(1000);

	wait_ended(_metadata, self->fd, hs.job_id, &j);
	EXPECT_EQ(VGPU_JOB_FAILED, j.state);
	EXPECT_EQ(ETIMEDOUT, j.error);
	/* B still runs: the reset did not touch it */
	ASSERT_EQ(0, _test_get_job(self->fd, bs.job_id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, j.state);
	EXPECT_EQ(32, d[0]);
	d[1] = 1;
	test_wait_bo(bp.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, bs.job_id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	EXPECT_EQ(32, d[0]);
	EXPECT_EQ(0x600d, d[2]);

	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &after));
	EXPECT_EQ(before + 1, after);
	ASSERT_EQ(0, _test_queue_state(self->fd, qa, &sa));
	ASSERT_EQ(0, _test_queue_state(self->fd, VGPU_QUEUE_DEFAULT, &sb));
	EXPECT_EQ(1, sa.guilty_resets);
	EXPECT_EQ(0, sa.innocent_resets);
	EXPECT_EQ(VGPU_QUEUE_STATE_ACTIVE, sa.state);
	EXPECT_EQ(0, sb.guilty_resets);
	EXPECT_EQ(0, sb.innocent_resets);
	/* A goes on */
	memset(self->p.data, 0, 1024);
	self->s.queue = qa;
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	vgpu_prog_unmap(&bp);
}

/*
 * Banning: with ban_after=2 the second hang bans the queue.  Its job that
 * waited behind the hang on the queue is run again after the first reset
 * (innocent), the one behind the second never runs (-ECANCELED), SUBMIT
 * to it then fails -ECANCELED and QUEUE_GET_STATE says BANNED (ETIMEDOUT).
 * The file's other queues and a new queue work.
 */
TEST_F(reset, ban_after_faults)
{
	struct vgpu_prog *hp = &self->hp;
	struct drm_vgpu_queue_get_state st;
	struct drm_vgpu_submit hs;
	struct drm_vgpu_get_job j;
	uint32_t hh[3], qa, qn;
	uint64_t ban, innocent_job;
	int round;

	ASSERT_EQ(0, sysfs_write("/sys/module/vgpu/parameters/ban_after", "2"));
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_BAN_AFTER, &ban));
	ASSERT_EQ(2, ban);
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qa));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	for (round = 1; round <= 2; round++) {
		vgpu_prog_submit_args(hp, &hs, hh, 1, 32);
		hs.launch.budget = ~0ull;
		hs.queue = qa;
		test_submit(&hs);
		/* an innocent job behind it on the same queue */
		memset(self->p.data, 0, 1024);
		self->s.queue = qa;
		test_submit(&self->s);
		innocent_job = self->s.job_id;
		wait_ended(_metadata, self->fd, hs.job_id, &j);
		EXPECT_EQ(ETIMEDOUT, j.error);
		wait_ended(_metadata, self->fd, innocent_job, &j);
		ASSERT_EQ(0, _test_queue_state(self->fd, qa, &st));
		EXPECT_EQ(round, st.guilty_resets);
		if (round == 1) {
			EXPECT_EQ(VGPU_JOB_DONE, j.state);
			EXPECT_EQ(0, check_store(self->p.data, 256, 7));
			EXPECT_EQ(VGPU_QUEUE_STATE_ACTIVE, st.state);
			EXPECT_EQ(0, st.ban_reason);
		} else {
			EXPECT_EQ(VGPU_JOB_FAILED, j.state);
			EXPECT_EQ(ECANCELED, j.error);
			EXPECT_EQ(VGPU_QUEUE_STATE_BANNED, st.state);
			EXPECT_EQ(ETIMEDOUT, st.ban_reason);
		}
	}
	test_err_submit(ECANCELED, &self->s);
	/* the default queue and a new queue of the same file work */
	self->s.queue = VGPU_QUEUE_DEFAULT;
	memset(self->p.data, 0, 1024);
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qn));
	self->s.queue = qn;
	memset(self->p.data, 0, 1024);
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	ASSERT_EQ(0, _test_queue_destroy(self->fd, qa));
}

/*
 * A job that waits on the device (SEM_ACQUIRE) for a job of another queue
 * that hangs: the hang's queue is reset, the waiter is released and runs
 * (as a CPU wait would let it: drm_sched does not cancel dependents of a
 * failed job), its own queue is never reset and its own timeout does not
 * fire while it waits.
 */
TEST_F(reset, device_wait_on_hung_job)
{
	struct drm_vgpu_queue_get_state st;
	struct vgpu_prog *hp = &self->hp;
	struct drm_vgpu_sync sync = { 0 };
	struct drm_vgpu_submit hs;
	struct drm_vgpu_get_job j;
	uint64_t before, after, feat;
	uint32_t hh[3], qa;

	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_FEATURES, &feat));
	if (!(feat & VGPU_FEAT_SEMAPHORES))
		SKIP(return, "no device semaphores");
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &before));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qa));
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &sync.handle));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	vgpu_prog_submit_args(hp, &hs, hh, 1, 32);
	hs.launch.budget = ~0ull;
	hs.queue = qa;
	hs.out_syncs = (uintptr_t)&sync;
	hs.out_sync_count = 1;
	test_submit(&hs);

	self->s.in_syncs = (uintptr_t)&sync;
	self->s.in_sync_count = 1;
	test_submit(&self->s);
	/* on the device, at its SEM_ACQUIRE */
	wait_running(_metadata, self->fd, self->s.job_id);

	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, _test_get_job(self->fd, hs.job_id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_FAILED, j.state);
	EXPECT_EQ(ETIMEDOUT, j.error);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_RESET_COUNT, &after));
	EXPECT_EQ(before + 1, after);
	ASSERT_EQ(0, _test_queue_state(self->fd, VGPU_QUEUE_DEFAULT, &st));
	EXPECT_EQ(0, st.guilty_resets);
	EXPECT_EQ(0, st.innocent_resets);
	ASSERT_EQ(0, _test_queue_state(self->fd, qa, &st));
	EXPECT_EQ(1, st.guilty_resets);
}

/*
 * TEST_HARNESS_MAIN, with every test's timeout (the harness's 30 s, or a
 * TEST_F_TIMEOUT's) multiplied by VGPU_TIMEOUT_SCALE: the harness kills a
 * test that runs longer, and on the debug kernel everything is slower.
 */
VGPU_TEST_HARNESS_MAIN
