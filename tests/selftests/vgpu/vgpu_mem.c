// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_mem: BO memory under pressure (uapi/vgpu_drm.h, "BO memory").
 *
 * A BO gets its pages only when a job lists it or it is mapped; the pages
 * are charged to its creator's memory cgroup; a device holds at most
 * mem_limit_mb of resident BOs (debugfs dri/N/memory shows the count and
 * the limit); fdinfo reports each file's BO memory.  The tests fill memory
 * on purpose: a client that takes all it can must get -ENOMEM, never the
 * OOM killer on a bystander, and a cgroup's memory.max must hold.
 *
 * The cgroup tests use the guest's cgroup2 hierarchy, mounting one at
 * /tmp/vgpu-cgroup where none is, and skip where the kernel has no memory
 * controller.
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define MiB (1ull << 20)
#define MEM_LIMIT_PARAM "/sys/module/vgpu/parameters/mem_limit_mb"
#define CLIENT_LIMIT_PARAM "/sys/module/vgpu/parameters/client_mem_limit_mb"

/* debugfs memory: bytes of every device's resident BOs and their limit */
static int mem_state(long long *resident, unsigned long long *limit)
{
	char dir[64], path[96], buf[128];
	unsigned long long l;
	long long r;

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/memory", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	if (sscanf(buf, "resident %lld limit %llu", &r, &l) != 2)
		return -EINVAL;
	if (resident)
		*resident = r;
	if (limit)
		*limit = l;
	return 0;
}

/* A BO of @size made resident by a CPU mapping, every page written. */
static int bo_populate(int fd, uint64_t size, uint32_t *h)
{
	uint32_t handle;
	void *p;
	int ret;

	ret = _test_bo_create(fd, size, VGPU_BO_NO_EXEC, &handle, NULL);
	if (ret)
		return ret;
	if (h)
		*h = handle;
	ret = _test_bo_map(fd, handle, size, &p);
	if (ret)
		return ret;
	memset(p, 0x5a, size);
	munmap(p, size);
	return 0;
}

static int gem_close(int fd, uint32_t h)
{
	struct drm_gem_close c = { .handle = h };

	return vgpu_ioctl(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

/* Wait up to 5 s until the device's resident bytes are @want. */
static long long resident_settles(long long want)
{
	long long r = -1;
	int i;

	for (i = 0; i < 500; i++) {
		if (mem_state(&r, NULL) || r == want)
			break;
		usleep(10000);
	}
	return r;
}

/*
 * Wait (up to 2 s) until the device's resident bytes stop moving: the
 * previous test's BOs may still be on their way out (a BO unmapped while
 * a job of its file ran is freed when that job's end is processed).
 */
static void resident_quiesce(void)
{
	long long a = -1, b;
	int i;

	for (i = 0; i < 20; i++) {
		usleep(100000);
		if (mem_state(&b, NULL) || b == a)
			return;
		a = b;
	}
}

/* Tell the other end a few numbers through a pipe. */
static void pipe_put(int wfd, const long long *v, size_t n)
{
	if (write(wfd, v, n * sizeof(*v)) != (ssize_t)(n * sizeof(*v)))
		_exit(99);
}

static int pipe_get(int rfd, long long *v, size_t n)
{
	return read(rfd, v, n * sizeof(*v)) == (ssize_t)(n * sizeof(*v)) ? 0 : -1;
}

FIXTURE(mem) {
	int fd;
	char limit[32], client_limit[32];
};

FIXTURE_SETUP(mem)
{
	ASSERT_LT(0, read_file(MEM_LIMIT_PARAM, self->limit, sizeof(self->limit)));
	ASSERT_LT(0, read_file(CLIENT_LIMIT_PARAM, self->client_limit,
			       sizeof(self->client_limit)));
	/*
	 * every test starts from the default limit, half of RAM, and one
	 * client may take all of it (vgpu_dos tests the client's share)
	 */
	ASSERT_EQ(0, sysfs_write(MEM_LIMIT_PARAM, "0"));
	ASSERT_EQ(0, sysfs_write(CLIENT_LIMIT_PARAM, "1048576"));
	resident_quiesce();
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(mem)
{
	close(self->fd);
	sysfs_write(MEM_LIMIT_PARAM, self->limit);
	sysfs_write(CLIENT_LIMIT_PARAM, self->client_limit);
}

TEST_F(mem, default_limit_is_half_of_ram)
{
	unsigned long long limit;

	ASSERT_EQ(0, mem_state(NULL, &limit));
	ASSERT_EQ((unsigned long long)meminfo_kib("MemTotal") * 1024 / 2, limit);
	ASSERT_EQ(0, sysfs_write(MEM_LIMIT_PARAM, "24"));
	ASSERT_EQ(0, mem_state(NULL, &limit));
	ASSERT_EQ(24 * MiB, limit);
}

/* BO_CREATE takes no memory; the first CPU mapping makes the BO resident. */
TEST_F(mem, bo_create_allocates_nothing)
{
	long long r0, r;
	uint32_t h;
	void *p;

	ASSERT_EQ(0, mem_state(&r0, NULL));
	test_bo_create(64 * MiB, 0, &h, NULL);
	ASSERT_EQ(64, fdinfo_num(_metadata, self->fd, "drm-total-memory", " MiB"));
	ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-resident-memory", ""));
	ASSERT_EQ(0, mem_state(&r, NULL));
	ASSERT_EQ(r0, r);

	ASSERT_EQ(0, _test_bo_map(self->fd, h, 64 * MiB, &p));
	ASSERT_EQ(64, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " MiB"));
	ASSERT_EQ(0, mem_state(&r, NULL));
	ASSERT_EQ(r0 + (long long)(64 * MiB), r);
	/* zero-filled */
	ASSERT_EQ(0, ((uint64_t *)p)[0]);
	ASSERT_EQ(0, ((uint64_t *)p)[64 * MiB / 8 - 1]);
	munmap(p, 64 * MiB);

	/* freed with its last handle: the device's count goes back */
	ASSERT_EQ(0, gem_close(self->fd, h));
	ASSERT_EQ(r0, resident_settles(r0));
	ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-total-memory", ""));
}

/*
 * A job that touches a BO with no pages, without listing it, faults at
 * that BO's VA; listing the BO gives it its pages and the job runs.
 */
TEST_F(mem, unlisted_bo_faults_listed_bo_runs)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t handles[3], h;
	uint64_t va;
	uint32_t *out;

	ASSERT_EQ(0, vgpu_prog_load(self->fd, &p, vgpu_store_src, 4096));
	test_bo_create(4096, VGPU_BO_NO_EXEC, &h, &va);
	*(uint64_t *)p.param = va;
	*(uint32_t *)((char *)p.param + 8) = 7;

	vgpu_prog_submit_args(&p, &s, handles, 1, 1);
	s.bo_handle_count = 2;		/* code and param: not @h */
	test_submit(&s);
	test_wait_bo(p.param_h);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, &exc));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EFAULT, j.error);
	ASSERT_EQ(VGPU_EXC_GLOBAL_FAULT, exc.code);
	ASSERT_EQ(va, exc.addr);
	ASSERT_EQ(16, fdinfo_num(_metadata, self->fd, "drm-total-memory", " KiB"));
	ASSERT_EQ(12, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " KiB"));

	vgpu_prog_submit_args(&p, &s, handles, 1, 1);
	handles[2] = h;
	test_submit(&s);
	test_wait_bo(h);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(16, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " KiB"));
	ASSERT_EQ(0, _test_bo_map(self->fd, h, 4096, (void **)&out));
	ASSERT_EQ(7, out[0]);
	munmap(out, 4096);
	vgpu_prog_unmap(&p);
}

/*
 * Past mem_limit_mb, making a BO resident gives -ENOMEM, through a CPU
 * mapping and through SUBMIT alike, after exactly the BOs that fit.
 */
TEST_F(mem, resident_limit_gives_enomem)
{
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t handles[3], h[64], extra;
	unsigned long long limit;
	long long r0, r;
	char val[32];
	int n, ret = 0;

	ASSERT_EQ(0, vgpu_prog_load(self->fd, &p, vgpu_store_src, 4096));
	ASSERT_EQ(0, mem_state(&r0, NULL));
	snprintf(val, sizeof(val), "%llu", (r0 + MiB - 1) / MiB + 18);
	ASSERT_EQ(0, sysfs_write(MEM_LIMIT_PARAM, val));
	ASSERT_EQ(0, mem_state(NULL, &limit));

	for (n = 0; n < 64; n++) {
		ret = bo_populate(self->fd, 4 * MiB, &h[n]);
		if (ret)
			break;
	}
	ASSERT_EQ(-ENOMEM, ret);
	ASSERT_EQ((long long)(limit - r0) / (long long)(4 * MiB), n);
	ASSERT_EQ(0, mem_state(&r, NULL));
	ASSERT_EQ(r0 + n * (long long)(4 * MiB), r);

	/* a job that lists a BO with no pages cannot be submitted */
	test_bo_create(4 * MiB, VGPU_BO_NO_EXEC, &extra, NULL);
	*(uint64_t *)p.param = p.data_va;
	vgpu_prog_submit_args(&p, &s, handles, 1, 32);
	handles[1] = extra;
	handles[2] = p.param_h;
	test_err_submit(ENOMEM, &s);
	/* one that lists resident BOs only still runs */
	handles[1] = p.data_h;
	test_submit(&s);
	test_wait_bo(p.data_h);

	/*
	 * Room again once BOs are freed: when the job that just ran has been
	 * freed too (BOs unmapped while a job of the file may still hold
	 * their translations wait for it: vgpu_mmu.c).
	 */
	ASSERT_EQ(0, gem_close(self->fd, h[0]));
	ASSERT_EQ(0, gem_close(self->fd, h[1]));
	ASSERT_EQ(r0 + (n - 2) * (long long)(4 * MiB),
		  resident_settles(r0 + (n - 2) * (long long)(4 * MiB)));
	handles[1] = extra;
	test_submit(&s);
	test_wait_bo(extra);
	vgpu_prog_unmap(&p);
}

/*
 * One client takes every byte of BO memory it can get: it ends with
 * -ENOMEM, and a bystander that then allocates ordinary memory gets it
 * without the OOM killer running.  (Before BO memory had a limit, the
 * holder's pinned pages, in no process's RSS, left the OOM killer to
 * kill bystanders until the kernel panicked.)
 */
TEST_F(mem, oom_spares_bystanders)
{
	long long r0, k0, v[2], avail_kib, want;
	unsigned long long limit;
	int to_parent[2], status;
	pid_t holder, bystander;

	ASSERT_EQ(0, mem_state(&r0, &limit));
	k0 = file_key_num("/proc/vmstat", "oom_kill", ' ');
	ASSERT_LE(0, k0);
	ASSERT_EQ(0, pipe(to_parent));

	holder = fork();
	ASSERT_LE(0, holder);
	if (!holder) {
		int fd = vgpu_open_render(), ret = 0;
		long long n = 0;

		if (fd < 0)
			_exit(98);
		while (!(ret = bo_populate(fd, 4 * MiB, NULL)))
			n++;
		v[0] = n;
		v[1] = ret;
		pipe_put(to_parent[1], v, 2);
		for (;;)
			pause();
	}
	close(to_parent[1]);
	ASSERT_EQ(0, pipe_get(to_parent[0], v, 2));
	EXPECT_EQ(-ENOMEM, v[1]);
	EXPECT_EQ((long long)(limit - r0) / (long long)(4 * MiB), v[0]);

	/* the bystander takes half of what is left */
	avail_kib = meminfo_kib("MemAvailable");
	ASSERT_LT(0, avail_kib);
	want = avail_kib * 1024 / 2;
	TH_LOG("holder: %lld x 4 MiB; bystander: %lld MiB of %lld MiB available",
	       v[0], want >> 20, avail_kib >> 10);
	bystander = fork();
	ASSERT_LE(0, bystander);
	if (!bystander) {
		char *m = malloc(want);

		if (!m)
			_exit(97);
		memset(m, 1, want);
		_exit(0);
	}
	ASSERT_EQ(bystander, waitpid(bystander, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(k0, file_key_num("/proc/vmstat", "oom_kill", ' '));

	/* the holder was not killed either; its memory comes back at exit */
	EXPECT_EQ(0, waitpid(holder, &status, WNOHANG));
	kill(holder, SIGKILL);
	ASSERT_EQ(holder, waitpid(holder, &status, 0));
	ASSERT_EQ(r0, resident_settles(r0));
	close(to_parent[0]);
}

/* ---- memory cgroups ---- */

static char cg_root[256];

/* The cgroup2 root with the memory controller enabled for children. */
static int cg_setup(void)
{
	char line[512], dev[64], dir[256], type[64];
	FILE *f;

	if (cg_root[0])
		return 0;
	f = fopen("/proc/mounts", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %255s %63s", dev, dir, type) == 3 &&
		    !strcmp(type, "cgroup2")) {
			snprintf(cg_root, sizeof(cg_root), "%s", dir);
			break;
		}
	fclose(f);
	if (!cg_root[0]) {
		snprintf(cg_root, sizeof(cg_root), "/tmp/vgpu-cgroup");
		mkdir(cg_root, 0755);
		if (mount("none", cg_root, "cgroup2", 0, NULL) && errno != EBUSY) {
			cg_root[0] = 0;
			return -errno;
		}
	}
	snprintf(line, sizeof(line), "%s/cgroup.subtree_control", cg_root);
	return sysfs_write(line, "+memory");
}

/* A new cgroup @name under the root, memory.max @max ("max": none). */
static int cg_create(const char *name, const char *max, char *dir, size_t len)
{
	char path[600];

	snprintf(dir, len, "%s/%s", cg_root, name);
	rmdir(dir);
	if (mkdir(dir, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/memory.max", dir);
	return sysfs_write(path, max);
}

static long long cg_read(const char *dir, const char *file)
{
	char path[600], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

static long long cg_event(const char *dir, const char *key)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/memory.events", dir);
	return file_key_num(path, key, ' ');
}

/*
 * How far memory.current may be from the pages in use: a memory cgroup
 * charges in batches of 64 pages kept per CPU (MEMCG_CHARGE_BATCH), and
 * slab objects through a per-CPU byte stock, so it moves with a lag of up
 * to that much per CPU.  An 8 MiB BO charged elsewhere is far outside it.
 */
static long long memcg_slack(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return (n > 0 ? n : 1) * 64 * 4096ll;
}

/* The calling process moves into @dir. */
static int cg_enter(const char *dir)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return sysfs_write(path, "0");
}

#define CG_SETUP()							\
	do {								\
		int __r = cg_setup();					\
		if (__r)						\
			SKIP(return, "no cgroup2 memory controller: %s", \
			     strerror(-__r));				\
	} while (0)

/*
 * In a cgroup with memory.max 32M, a process that makes BOs resident
 * until it cannot gets -ENOMEM (not the OOM killer); the cgroup never
 * goes past its limit, and the BOs' pages are what it was charged for.
 */
TEST_F(mem, memcg_limit_holds)
{
	int to_parent[2], to_child[2], status;
	long long v[2], cur;
	char dir[512];
	pid_t pid;

	CG_SETUP();
	ASSERT_EQ(0, cg_create("vgpu-mem-limit", "32M", dir, sizeof(dir)));
	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		long long n = 0;
		uint32_t h = 0;
		int fd, ret;
		char c;

		if (cg_enter(dir))
			_exit(96);
		fd = vgpu_open_render();
		if (fd < 0)
			_exit(98);
		while (!(ret = bo_populate(fd, 4 * MiB, &h)) && n < 64)
			n++;
		/*
		 * The BO that failed keeps the pages it got until it goes:
		 * free them, or the cgroup has no room for the pipe's page.
		 */
		gem_close(fd, h);
		v[0] = n;
		v[1] = ret;
		pipe_put(to_parent[1], v, 2);
		if (read(to_child[0], &c, 1) != 1)
			_exit(95);
		_exit(0);
	}
	close(to_parent[1]);
	ASSERT_EQ(0, pipe_get(to_parent[0], v, 2));
	cur = cg_read(dir, "memory.current");
	TH_LOG("%lld x 4 MiB resident, memory.current %lld KiB", v[0], cur >> 10);
	EXPECT_EQ(-ENOMEM, v[1]);
	EXPECT_LE(1, v[0]);
	EXPECT_GT(8, v[0]);
	/* the BOs' pages are charged to the cgroup, which stays in its limit */
	EXPECT_LE(v[0] * (long long)(4 * MiB), cur);
	EXPECT_GE((long long)(32 * MiB), cur);
	ASSERT_EQ(1, write(to_child[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_GE((long long)(32 * MiB), cg_read(dir, "memory.peak"));
	EXPECT_LE(1, cg_event(dir, "max"));
	EXPECT_EQ(0, cg_event(dir, "oom_kill"));
	EXPECT_EQ(0, rmdir(dir));
}

/*
 * The pages are charged to the cgroup of the process that created the BO,
 * whoever makes them resident: here the creator has exited and a process
 * outside its cgroup maps the BO through the same DRM file.
 */
TEST_F(mem, memcg_charges_the_creator)
{
	long long c0, c1, c2, v[1];
	int to_parent[2], status;
	char dir[512];
	uint32_t h;
	pid_t pid;
	void *p;

	CG_SETUP();
	ASSERT_EQ(0, cg_create("vgpu-mem-creator", "max", dir, sizeof(dir)));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint32_t handle;

		if (cg_enter(dir))
			_exit(96);
		if (_test_bo_create(self->fd, 8 * MiB, 0, &handle, NULL))
			_exit(98);
		v[0] = handle;
		pipe_put(to_parent[1], v, 1);
		_exit(0);
	}
	ASSERT_EQ(0, pipe_get(to_parent[0], v, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	h = v[0];

	c0 = cg_read(dir, "memory.current");
	ASSERT_EQ(0, _test_bo_map(self->fd, h, 8 * MiB, &p));
	memset(p, 3, 8 * MiB);
	c1 = cg_read(dir, "memory.current");
	TH_LOG("creator's cgroup: %lld KiB before, %lld KiB after the mapping",
	       c0 >> 10, c1 >> 10);
	EXPECT_LE(c0 + (long long)(8 * MiB) - memcg_slack(), c1);
	munmap(p, 8 * MiB);
	ASSERT_EQ(0, gem_close(self->fd, h));
	c2 = cg_read(dir, "memory.current");
	EXPECT_GE(c1 - (long long)(8 * MiB) + memcg_slack(), c2);
	EXPECT_EQ(0, rmdir(dir));
	close(to_parent[0]);
	close(to_parent[1]);
}

/*
 * BOs that never get pages still cost kernel memory (the shmem file, the
 * driver's objects): that is charged too, so a cgroup's limit also stops
 * a process creating small BOs without end, with -ENOMEM or its own OOM
 * kill, and nothing outside the cgroup is touched.
 */
TEST_F(mem, memcg_bounds_kernel_objects)
{
	int to_parent[2], status;
	long long v[2] = { -1, 0 };
	char dir[512];
	pid_t pid;

	CG_SETUP();
	ASSERT_EQ(0, cg_create("vgpu-mem-kmem", "16M", dir, sizeof(dir)));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		long long n = 0;
		int fd, ret;

		if (cg_enter(dir))
			_exit(96);
		fd = vgpu_open_render();
		if (fd < 0)
			_exit(98);
		while (!(ret = _test_bo_create(fd, 4096, 0, NULL, NULL)) &&
		       n < 1000000)
			n++;
		v[0] = n;
		v[1] = ret;
		pipe_put(to_parent[1], v, 2);
		_exit(0);
	}
	close(to_parent[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFEXITED(status)) {
		ASSERT_EQ(0, WEXITSTATUS(status));
		ASSERT_EQ(0, pipe_get(to_parent[0], v, 2));
		TH_LOG("%lld BOs, then %lld", v[0], v[1]);
		EXPECT_EQ(-ENOMEM, v[1]);
	} else {
		/* the cgroup's own OOM killer picked the creator */
		ASSERT_TRUE(WIFSIGNALED(status));
		EXPECT_EQ(SIGKILL, WTERMSIG(status));
		EXPECT_LE(1, cg_event(dir, "oom_kill"));
	}
	EXPECT_GE((long long)(16 * MiB), cg_read(dir, "memory.peak"));
	EXPECT_EQ(0, rmdir(dir));
	close(to_parent[0]);
}

VGPU_TEST_HARNESS_MAIN
