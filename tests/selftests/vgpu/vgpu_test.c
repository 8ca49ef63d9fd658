// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko selftests (kselftest_harness.h).  Run in the guest with the
 * module loaded: ./vgpu_test.  One error path per test.
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include "vgpu_examples.h"
#include <poll.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/sync_file.h>
#include <linux/capability.h>

FIXTURE(vgpu) {
	int fd;
};

FIXTURE_SETUP(vgpu)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(vgpu)
{
	close(self->fd);
}

TEST_F(vgpu, get_param_all)
{
	uint64_t v;
	uint32_t p;

	for (p = 0; p < VGPU_PARAM_COUNT; p++)
		test_get_param(p, &v);
	test_get_param(VGPU_PARAM_DEVICE_ID, &v);
	ASSERT_EQ(0x76900001ull, v);
	test_get_param(VGPU_PARAM_WARP_SIZE, &v);
	ASSERT_EQ(32, v);
	test_get_param(VGPU_PARAM_BARRIERS, &v);
	ASSERT_EQ(16, v);
	test_get_param(VGPU_PARAM_QUEUES, &v);
	ASSERT_LE(1, v);
	/* the SMs' shape: the occupancy limits of a model */
	test_get_param(VGPU_PARAM_CTAS_SM, &v);
	ASSERT_LE(1, v);
	test_get_param(VGPU_PARAM_WARPS_SM, &v);
	ASSERT_LE(32, v);
	test_get_param(VGPU_PARAM_REGS_SM, &v);
	ASSERT_EQ(65536, v);
	test_get_param(VGPU_PARAM_SMEM_SM, &v);
	ASSERT_LE(48 * 1024, v);
}

TEST_F(vgpu, get_param_unknown)
{
	test_err_get_param(EINVAL, VGPU_PARAM_COUNT);
}

TEST_F(vgpu, get_param_pad)
{
	struct drm_vgpu_get_param a = { .param = 0, .pad = 1 };

	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_GET_PARAM, &a));
}

TEST_F(vgpu, bo_create_zeroed)
{
	uint32_t h, *p;
	uint64_t va;
	int i;

	test_bo_create(8192, 0, &h, &va);
	ASSERT_NE(0, va);
	ASSERT_EQ(0, va % 4096);
	ASSERT_EQ(0, _test_bo_map(self->fd, h, 8192, (void **)&p));
	for (i = 0; i < 2048; i++)
		ASSERT_EQ(0, p[i]);
}

TEST_F(vgpu, bo_create_zero_size)
{
	test_err_bo_create(EINVAL, 0, 0);
}

TEST_F(vgpu, bo_create_bad_flags)
{
	test_err_bo_create(EINVAL, 4096, 1u << 31);
}

TEST_F(vgpu, bo_create_too_big)
{
	test_err_bo_create(E2BIG, VGPU_BO_MAX_SIZE + 1, 0);
}

TEST_F(vgpu, bo_mmap_offset_bad_handle)
{
	struct drm_vgpu_bo_mmap_offset a = { .handle = 12345 };

	ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &a));
}

TEST_F(vgpu, bo_mmap_offset_pad)
{
	struct drm_vgpu_bo_mmap_offset a = { .pad = 1 };

	test_bo_create(4096, 0, &a.handle, NULL);
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &a));
}

TEST_F(vgpu, bo_info)
{
	struct drm_vgpu_bo_info a = { 0 };
	uint64_t va;

	test_bo_create(5000, VGPU_BO_NO_EXEC, &a.handle, &va);
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_BO_INFO, &a));
	ASSERT_EQ(va, a.va);
	ASSERT_EQ(8192, a.size);
	ASSERT_EQ(VGPU_BO_NO_EXEC, a.flags);
}

TEST_F(vgpu, bo_info_bad_handle)
{
	struct drm_vgpu_bo_info a = { .handle = 999 };

	ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_BO_INFO, &a));
}

TEST_F(vgpu, wait_bo_bad_handle)
{
	test_err_wait_bo(ENOENT, 999, 0);
}

TEST_F(vgpu, prime_export_import)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	struct drm_prime_handle imp = { 0 };
	struct drm_vgpu_bo_info info = { 0 };
	int fd2 = vgpu_open_render();

	ASSERT_LE(0, fd2);
	test_bo_create(4096, 0, &exp.handle, NULL);
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	imp.fd = exp.fd;
	ASSERT_EQ(0, vgpu_ioctl(fd2, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	info.handle = imp.handle;
	ASSERT_EQ(0, vgpu_ioctl(fd2, DRM_IOCTL_VGPU_BO_INFO, &info));
	ASSERT_NE(0, info.va);
	close(exp.fd);
	close(fd2);
}

TEST_F(vgpu, wait_bo_pad)
{
	struct drm_vgpu_wait_bo a = { .pad = 1 };

	test_bo_create(4096, 0, &a.handle, NULL);
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_BO, &a));
}

/* ---- WAIT_BO with a timeout that has already passed ---- */

/* A job that spins until the first word of its data BO is non-zero. */
static const char until_src[] =
	".kernel until\n.param ptr flag\n  LDP.64 R4, [flag] ;\n"
	"l:\n  LDG.32 R7, [R4] ;\n  ISETP.EQ.U32 P0, R7, 0x0 ;\n"
	"  @P0 BRA l ;\n  EXIT ;\n";

FIXTURE(wait_past) {
	int fd;
	struct vgpu_prog p;
	struct drm_vgpu_submit s;
	uint32_t handles[3];
};

/* @timeout_ns: absolute, or relative to now when @relative */
FIXTURE_VARIANT(wait_past) {
	int64_t timeout_ns;
	bool relative;
};

FIXTURE_VARIANT_ADD(wait_past, zero) {
	.timeout_ns = 0,
};

FIXTURE_VARIANT_ADD(wait_past, one_second_ago) {
	.timeout_ns = -1000000000ll,
	.relative = true,
};

FIXTURE_VARIANT_ADD(wait_past, negative) {
	.timeout_ns = INT64_MIN,
};

FIXTURE_SETUP(wait_past)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	/*
	 * A job that runs until the test lets it end: it spins until the
	 * first word of its data BO is non-zero.  (It counted to 2^16 in 256
	 * threads once, "far longer than an ioctl", until the lock-step made
	 * the device fast enough to finish it before WAIT_BO on the debug
	 * kernel: wait_past.zero.busy failed in CI on fb66308.)
	 */
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p,
				    until_src, 4096));
	((uint64_t *)self->p.param)[0] = self->p.data_va;
	vgpu_prog_submit_args(&self->p, &self->s, self->handles, 1, 32);
}

FIXTURE_TEARDOWN(wait_past)
{
	close(self->fd);
}

static int wait_bo_at(int fd, uint32_t h, int64_t t, bool relative)
{
	struct drm_vgpu_wait_bo a = {
		.handle = h, .timeout_ns = relative ? vgpu_now_ns() + t : t,
	};

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_WAIT_BO, &a);
}

/* A busy BO: -ETIME at once, the job unaffected. */
TEST_F(wait_past, busy)
{
	struct drm_vgpu_get_job j;
	int ret;

	test_submit(&self->s);
	ret = wait_bo_at(self->fd, self->p.data_h, variant->timeout_ns,
			 variant->relative);
	*(volatile uint32_t *)self->p.data = 1;	/* let the job end */
	ASSERT_EQ(-ETIME, ret);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
}

/* An idle BO (never used, or its job done): 0. */
TEST_F(wait_past, idle)
{
	ASSERT_EQ(0, wait_bo_at(self->fd, self->p.data_h, variant->timeout_ns,
				variant->relative));
	*(volatile uint32_t *)self->p.data = 1;	/* the job ends at once */
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, wait_bo_at(self->fd, self->p.data_h, variant->timeout_ns,
				variant->relative));
}

/* ---- jobs ---- */

FIXTURE(job) {
	int fd;
	struct vgpu_prog p;
	struct drm_vgpu_submit s;
	uint32_t handles[3];
};

FIXTURE_SETUP(job)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p, vgpu_store_src, 4096));
	*(uint64_t *)self->p.param = self->p.data_va;
	*(uint32_t *)((char *)self->p.param + 8) = 7;
	vgpu_prog_submit_args(&self->p, &self->s, self->handles, 4, 64);
}

FIXTURE_TEARDOWN(job)
{
	close(self->fd);
}

static int check_store(const uint32_t *out, int n, uint32_t k)
{
	int i;

	for (i = 0; i < n; i++)
		if (out[i] != (uint32_t)i * 2 + k)
			return -1;
	return 0;
}

TEST_F(job, submit_store)
{
	struct drm_vgpu_get_job j;

	test_submit(&self->s);
	ASSERT_NE(0, self->s.job_id);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, j.error);
	ASSERT_NE(0, j.warp_insns);
}

/*
 * A queue of every priority (the suite runs as root: CAP_SYS_NICE): each
 * runs its job, GET_JOB names the queue and the hardware queue, and with
 * at least four hardware queues each priority has its own.
 */
TEST_F(job, submit_every_queue)
{
	uint32_t id[4], hw[4], p;
	struct drm_vgpu_queue_get_state st;
	struct drm_vgpu_get_job j;
	uint64_t nq;

	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_QUEUES, &nq));
	for (p = 0; p < 4; p++) {
		ASSERT_EQ(0, _test_queue_create(self->fd, p, &id[p]));
		ASSERT_NE(0, id[p]);
		memset(self->p.data, 0, 1024);
		*(uint32_t *)((char *)self->p.param + 8) = p;
		self->s.queue = id[p];
		test_submit(&self->s);
		test_wait_bo(self->p.data_h);
		ASSERT_EQ(0, check_store(self->p.data, 256, p));
		ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, NULL));
		EXPECT_EQ(id[p], j.queue);
		EXPECT_LT(j.hw_queue, nq);
		hw[p] = j.hw_queue;
		ASSERT_EQ(0, _test_queue_state(self->fd, id[p], &st));
		EXPECT_EQ(p, st.priority);
		EXPECT_EQ(hw[p], st.hw_queue);
		EXPECT_EQ(1, st.submitted);
		EXPECT_EQ(1, st.completed);
		EXPECT_EQ(VGPU_QUEUE_STATE_ACTIVE, st.state);
	}
	for (p = 1; p < 4 && nq >= 4; p++)
		EXPECT_NE(hw[p - 1], hw[p]);
	for (p = 0; p < 4; p++)
		EXPECT_EQ(0, _test_queue_destroy(self->fd, id[p]));
}

TEST_F(job, submit_bad_queue)
{
	uint32_t id;

	self->s.queue = 1000;
	test_err_submit(ENOENT, &self->s);
	self->s.queue = ~0u;
	test_err_submit(ENOENT, &self->s);
	/* a destroyed queue's id */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &id));
	ASSERT_EQ(0, _test_queue_destroy(self->fd, id));
	self->s.queue = id;
	test_err_submit(ENOENT, &self->s);
}

TEST_F(job, submit_pad)
{
	self->s.pad = 1;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, submit_bad_flags)
{
	self->s.flags = 1;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, submit_bad_launch_flags)
{
	self->s.launch.launch_flags = 1u << 30;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, submit_zero_grid)
{
	self->s.launch.grid[1] = 0;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, submit_bad_code_size)
{
	self->s.launch.code_size = 15;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, submit_unknown_extension)
{
	struct drm_vgpu_extension e = { .name = 1 };

	self->s.extensions = (uintptr_t)&e;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, submit_bad_extension_ptr)
{
	self->s.extensions = 8;
	test_err_submit(EFAULT, &self->s);
}

TEST_F(job, submit_bad_bo_handle)
{
	self->handles[2] = 777;
	test_err_submit(ENOENT, &self->s);
}

/*
 * A handle listed twice counts once (uapi/vgpu_drm.h; drm_exec takes the
 * second lock as held): the job runs, and its implicit fence is on the
 * BO (a WAIT_BO waits for it), with every handle of the list repeated.
 */
TEST_F(job, submit_same_bo_twice)
{
	uint32_t twice[6];

	for (int i = 0; i < 3; i++)
		twice[i] = twice[i + 3] = self->handles[i];
	self->s.bo_handles = (uintptr_t)twice;
	self->s.bo_handle_count = 6;
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

TEST_F(job, submit_bad_bo_ptr)
{
	self->s.bo_handles = 8;
	test_err_submit(EFAULT, &self->s);
}

TEST_F(job, submit_too_many_bos)
{
	self->s.bo_handle_count = VGPU_SUBMIT_MAX_BOS + 1;
	test_err_submit(E2BIG, &self->s);
}

TEST_F(job, submit_bad_in_sync)
{
	struct drm_vgpu_sync s = { .handle = 4242 };

	self->s.in_syncs = (uintptr_t)&s;
	self->s.in_sync_count = 1;
	test_err_submit(ENOENT, &self->s);
}

TEST_F(job, submit_bad_out_sync)
{
	struct drm_vgpu_sync s = { .handle = 4242 };

	self->s.out_syncs = (uintptr_t)&s;
	self->s.out_sync_count = 1;
	test_err_submit(ENOENT, &self->s);
}

TEST_F(job, submit_sync_pad)
{
	struct drm_vgpu_sync s = { .pad = 1 };

	ASSERT_EQ(0, _test_syncobj_create(self->fd, &s.handle));
	self->s.out_syncs = (uintptr_t)&s;
	self->s.out_sync_count = 1;
	test_err_submit(EINVAL, &self->s);
}

TEST_F(job, get_job_unknown)
{
	struct drm_vgpu_get_job j;

	ASSERT_EQ(-ENOENT, _test_get_job(self->fd, 12345, &j, NULL));
}

TEST_F(job, syncobj_binary_chain)
{
	struct drm_vgpu_sync s;
	uint32_t ids[3] = { VGPU_QUEUE_DEFAULT };
	int i;

	/* the default queue, a low one and a second normal one */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &ids[1]));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &ids[2]));
	memset(&s, 0, sizeof(s));
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &s.handle));
	/* No implicit sync: only the syncobj orders the jobs, across queues. */
	self->s.bo_handle_count = 0;
	for (i = 0; i < 8; i++) {
		self->s.queue = ids[i % 3];
		self->s.in_syncs = i ? (uintptr_t)&s : 0;
		self->s.in_sync_count = i ? 1 : 0;
		self->s.out_syncs = (uintptr_t)&s;
		self->s.out_sync_count = 1;
		test_submit(&self->s);
	}
	ASSERT_EQ(0, _test_syncobj_wait(self->fd, s.handle, 0, vgpu_wait_ns(30)));
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

TEST_F(job, syncobj_timeline_chain)
{
	struct drm_syncobj_create c = { .flags = 0 };
	struct drm_vgpu_sync in, out;
	uint32_t ids[3] = { VGPU_QUEUE_DEFAULT };
	int i;

	/* the default queue, a low one and a second normal one */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &ids[1]));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &ids[2]));
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c));
	self->s.bo_handle_count = 0;
	for (i = 1; i <= 8; i++) {
		in = (struct drm_vgpu_sync){ .handle = c.handle, .point = i - 1 };
		out = (struct drm_vgpu_sync){ .handle = c.handle, .point = i };
		self->s.queue = ids[i % 3];
		self->s.in_syncs = i > 1 ? (uintptr_t)&in : 0;
		self->s.in_sync_count = i > 1;
		self->s.out_syncs = (uintptr_t)&out;
		self->s.out_sync_count = 1;
		test_submit(&self->s);
	}
	ASSERT_EQ(0, _test_syncobj_wait(self->fd, c.handle, 8, vgpu_wait_ns(30)));
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

TEST_F(job, thousand_small_jobs)
{
	struct drm_vgpu_get_job j;
	uint64_t last = 0;
	int i;

	for (i = 0; i < 1000; i++) {
		self->s.queue = 0;
		test_submit(&self->s);
		last = self->s.job_id;
	}
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, last, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

static int run_src(struct __test_metadata *_metadata, int fd, const char *src,
		   uint32_t block, uint64_t budget,
		   struct drm_vgpu_get_job *j, struct vgpu_exception_record *exc)
{
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];
	int ret;

	ret = vgpu_prog_load(fd, &p, src, 4096);
	if (ret)
		return ret;
	vgpu_prog_submit_args(&p, &s, h, 1, block);
	s.launch.budget = budget;
	ret = _test_submit(fd, &s);
	if (ret)
		return ret;
	ret = _test_wait_bo(fd, p.data_h, vgpu_wait_ns(60));
	if (ret)
		return ret;
	return _test_get_job(fd, s.job_id, j, exc);
}

TEST_F(job, exception_deadlock)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;

	ASSERT_EQ(0, run_src(_metadata, self->fd, "  BAR.SYNC 0x7, 0x80 ;\n  EXIT ;\n",
			     64, 0, &j, &exc));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EIO, j.error);
	ASSERT_EQ(VGPU_ERR_EXCEPTION, j.hw_status);
	ASSERT_EQ(VGPU_EXC_DEADLOCK, exc.code);
	/* the queue keeps working */
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, check_store(self->p.data, 256, 7));
}

TEST_F(job, exception_barrier_mismatch)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;

	ASSERT_EQ(0, run_src(_metadata, self->fd,
			     "  S2R R4, SR_WARPID ;\n  ISETP.NE.U32 P1, R4, 0x0 ;\n"
			     "  @P1 BRA w1 ;\n  BAR.ARV 0x1, 0x40 ;\n  EXIT ;\n"
			     "w1:\n  BAR.SYNC 0x1, 0x60 ;\n  EXIT ;\n",
			     96, 0, &j, &exc));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(VGPU_EXC_BAR_COUNT_MISMATCH, exc.code);
	ASSERT_NE(0, exc.msg[0]);
}

TEST_F(job, read_only_bo_write_faults)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;

	/* The code BO is read-only for the GPU: storing into it faults. */
	*(uint64_t *)self->p.param = self->p.code_va;
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, self->s.job_id, &j, &exc));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EFAULT, j.error);
	ASSERT_EQ(VGPU_EXC_GLOBAL_FAULT, exc.code);
}

TEST_F(job, isolation_between_files)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	struct vgpu_prog p2;
	struct drm_vgpu_submit s2;
	uint32_t h2[3];
	int fd2, i;

	fd2 = vgpu_open_render();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, vgpu_prog_load(fd2, &p2, vgpu_store_src, 4096));
	/* fd2's job aims at fd's data BO, at an address unmapped in its AS */
	*(uint64_t *)p2.param = self->p.data_va + 3 * 4096 * 16;
	*(uint32_t *)((char *)p2.param + 8) = 99;
	vgpu_prog_submit_args(&p2, &s2, h2, 4, 64);
	ASSERT_EQ(0, _test_submit(fd2, &s2));
	ASSERT_EQ(0, _test_wait_bo(fd2, p2.data_h, vgpu_wait_ns(30)));
	ASSERT_EQ(0, _test_get_job(fd2, s2.job_id, &j, &exc));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(VGPU_EXC_GLOBAL_FAULT, exc.code);
	for (i = 0; i < 1024; i++)
		ASSERT_EQ(0, ((uint32_t *)self->p.data)[i]);
	close(fd2);
}

TEST_F(job, wait_bo_timeout)
{
	int ret;

	/*
	 * A job that runs until the test lets it end (the first word of its
	 * data BO non-zero): WAIT_BO with a 1 ms deadline times out, then the
	 * job completes.  (A count to 2^20 was "far longer than 1 ms" until
	 * the core got faster; this does not depend on the device's speed.)
	 */
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p,
				    until_src, 4096));
	((uint64_t *)self->p.param)[0] = self->p.data_va;
	vgpu_prog_submit_args(&self->p, &self->s, self->handles, 1, 32);
	test_submit(&self->s);
	ret = _test_wait_bo(self->fd, self->p.data_h, 1000000);
	*(volatile uint32_t *)self->p.data = 1;	/* let the job end */
	ASSERT_EQ(-ETIME, ret);
	test_wait_bo(self->p.data_h);
}

TEST_F(job, close_with_jobs_in_flight)
{
	int i;

	for (i = 0; i < 32; i++)
		test_submit(&self->s);
	close(self->fd);
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

TEST_F(job, exit_with_jobs_in_flight)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		int i;

		for (i = 0; i < 32; i++)
			_test_submit(self->fd, &self->s);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
}

/* ---- kernels with known results (the examples/ kernels, built in) ---- */

/* The words of an examples/NAME.expected dump (after its "name:" line). */
static int expected_words(const char *exp, uint32_t *w, int max)
{
	const char *p = strchr(exp, '\n');
	int n = 0;

	while (p && n < max) {
		char *end;
		unsigned long v = strtoul(p, &end, 16);

		if (end == p)
			break;
		w[n++] = v;
		p = end;
	}
	return n;
}

/*
 * Load @src with a data BO of @data_size bytes; its pointer parameters
 * (in order) point at data_va + @offs[i].
 */
static void example_load(struct __test_metadata *_metadata, int fd,
			 struct vgpu_prog *p, const char *src, size_t data_size,
			 const uint32_t *offs, int n)
{
	int i;

	ASSERT_EQ(0, vgpu_prog_load(fd, p, src, data_size));
	ASSERT_EQ(n * 8, p->param_size);
	for (i = 0; i < n; i++)
		((uint64_t *)p->param)[i] = p->data_va + offs[i];
}

/* Run @p with one CTA of @block threads; it must complete cleanly. */
static void example_run(struct __test_metadata *_metadata, int fd,
			struct vgpu_prog *p, uint32_t block)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_submit s;
	struct drm_vgpu_get_job j;
	uint32_t h[3];

	vgpu_prog_submit_args(p, &s, h, 1, block);
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p->data_h, vgpu_wait_ns(60)));
	ASSERT_EQ(0, _test_get_job(fd, s.job_id, &j, &exc));
	if (j.state != VGPU_JOB_DONE)
		TH_LOG("job failed: error %u status %u exc %u pc 0x%x: %.*s",
		       j.error, j.hw_status, exc.code, exc.pc, VGPU_EXC_MSG_LEN, exc.msg);
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, j.error);
}

static void expect_dump(struct __test_metadata *_metadata, const void *out,
			const char *expected, int nwords)
{
	uint32_t w[256];
	int i;

	ASSERT_EQ(nwords, expected_words(expected, w, 256));
	for (i = 0; i < nwords; i++)
		ASSERT_EQ(w[i], ((const uint32_t *)out)[i]);
}

static void require_feature(struct __test_metadata *_metadata, int fd,
			    uint32_t feat, bool *have)
{
	uint64_t f;

	ASSERT_EQ(0, _test_get_param(fd, VGPU_PARAM_FEATURES, &f));
	*have = f & feat;
}

/* BAR.SYNC tree reduction: sum of t * t over 256 threads, 9 rounds. */
TEST_F(job, kernel_bar_sync_reduce)
{
	static const uint32_t offs[] = { 0 };
	struct vgpu_prog p;
	uint32_t *out;

	example_load(_metadata, self->fd, &p, ex_reduce_bar_sync_src, 4096, offs, 1);
	example_run(_metadata, self->fd, &p, 256);
	out = p.data;
	ASSERT_EQ(5559680, out[0]);
	ASSERT_EQ(9, out[1]);
	expect_dump(_metadata, out, ex_reduce_bar_sync_expected, 4);
}

/* BAR.RED.POPC/AND/OR votes over 1024 threads. */
TEST_F(job, kernel_bar_red_vote)
{
	static const uint32_t offs[] = { 0 };
	struct vgpu_prog p;
	uint32_t *out, i, popc = 0;

	example_load(_metadata, self->fd, &p, ex_vote_bar_red_src, 4096, offs, 1);
	example_run(_metadata, self->fd, &p, 1024);
	out = p.data;
	for (i = 0; i < 1024; i++)
		popc += (i * 0x9e3779b9u) >> 31;
	ASSERT_EQ(popc, out[0]);
	ASSERT_EQ(0, out[1]);		/* AND */
	ASSERT_EQ(1, out[2]);		/* OR */
	ASSERT_EQ(1024 - popc, out[3]);
	expect_dump(_metadata, out, ex_vote_bar_red_expected, 4);
}

/* Four mbarriers, warp-specialised producer/consumer, double buffered. */
TEST_F(job, kernel_mbarrier_producer_consumer)
{
	static const uint32_t offs[] = { 0 };
	struct vgpu_prog p;
	uint32_t *out, c;
	bool have;

	require_feature(_metadata, self->fd, VGPU_FEAT_MBARRIER, &have);
	if (!have)
		SKIP(return, "no mbarrier unit");
	example_load(_metadata, self->fd, &p, ex_mbar_producer_consumer_src, 4096, offs, 1);
	example_run(_metadata, self->fd, &p, 96);
	out = p.data;
	for (c = 0; c < 64; c++)
		ASSERT_EQ(36000 + 8 * c, out[c]);
	expect_dump(_metadata, out, ex_mbar_producer_consumer_expected, 64);
}

/* Two 1-D bulk copies (TMA) completing on one mbarrier via expect_tx. */
TEST_F(job, kernel_tma_bulk_copy_mbarrier)
{
	static const uint32_t offs[] = { 0, 0x1000, 0x2000 };
	struct vgpu_prog p;
	uint32_t *out, t;
	bool have;

	require_feature(_metadata, self->fd, VGPU_FEAT_TMA, &have);
	if (!have)
		SKIP(return, "no TMA engine");
	example_load(_metadata, self->fd, &p, ex_tma_1d_token_src, 0x3000, offs, 3);
	example_run(_metadata, self->fd, &p, 128);
	out = (uint32_t *)((char *)p.data + 0x2000);
	for (t = 0; t < 128; t++)
		ASSERT_EQ(t * t + 4 * t + 1, out[t]);
	expect_dump(_metadata, out, ex_tma_1d_token_expected, 128);
	/* the inputs the kernel wrote, seen through the CPU mapping */
	for (t = 0; t < 128; t++)
		ASSERT_EQ(3 * t + 1, ((uint32_t *)p.data)[t]);
}

/*
 * A 16x8 tile of a 24x10 int tensor at (16, 6) through a tensor map the
 * test writes into the BO: out-of-bounds elements arrive as zeros.
 */
TEST_F(job, kernel_tma_tensor_2d_tile)
{
	static const uint32_t offs[] = { 0, 0x1000, 0x2000 };
	struct vgpu_tensor_map *tm;
	struct vgpu_prog p;
	uint32_t *out, x, y;
	bool have;

	require_feature(_metadata, self->fd, VGPU_FEAT_TMA, &have);
	if (!have)
		SKIP(return, "no TMA engine");
	example_load(_metadata, self->fd, &p, ex_tensor_2d_oob_src, 0x3000, offs, 3);
	tm = (struct vgpu_tensor_map *)((char *)p.data + 0x1000);
	memset(tm, 0, sizeof(*tm));
	tm->base = p.data_va;
	tm->magic = VGPU_TMAP_MAGIC;
	tm->rank = 2;
	tm->elem_size = 4;
	tm->dims[0] = 24;
	tm->dims[1] = 10;
	tm->strides[0] = 24 * 4;
	tm->box[0] = 16;
	tm->box[1] = 8;
	tm->elem_strides[0] = tm->elem_strides[1] = 1;
	example_run(_metadata, self->fd, &p, 128);
	out = (uint32_t *)((char *)p.data + 0x2000);
	for (y = 0; y < 8; y++)
		for (x = 0; x < 16; x++) {
			uint32_t gx = 16 + x, gy = 6 + y;
			uint32_t want = gx < 24 && gy < 10 ? 100 * gy + gx + 1 : 0;

			ASSERT_EQ(want, out[y * 16 + x]);
		}
	expect_dump(_metadata, out, ex_tensor_2d_oob_expected, 128);
}

/* ---- stale TLB: no reuse of a page a running job may still translate ---- */

/*
 * The drm-client-id of @fd, from fdinfo: debugfs address_spaces names VM 0
 * by it (its ASID comes and goes: 0 while it has none).
 */
static int fd_client(int fd)
{
	char val[32];

	if (fdinfo_get(fd, "drm-client-id", val, sizeof(val)))
		return -1;
	return atoi(val);
}

/*
 * From debugfs address_spaces, the "active", "deferred" and
 * "deferred_total" counts of the VM 0 of client @client.  0 or -errno.
 */
static int as_counts(int client, unsigned int *active, unsigned int *deferred,
		     unsigned long long *total)
{
	char path[96], line[512];
	int i, ret = -ENOENT;

	for (i = 0; i < 64 && ret; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%d/address_spaces", i);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned int c, a;
			char *p;

			if (sscanf(line, "client %u asid %u", &c, &a) != 2 || c != (unsigned int)client)
				continue;
			p = strstr(line, " active ");
			if (p && sscanf(p, " active %u deferred %u deferred_total %llu",
					active, deferred, total) == 3)
				ret = 0;
		}
		fclose(f);
	}
	return ret;
}

/* x[0] counts up until *flag != 0 */
static const char spin_src[] =
	".kernel spin\n.param ptr x\n.param ptr flag\n"
	"  LDP.64 R2, [x] ;\n  LDP.64 R4, [flag] ;\n  MOV R6, 0x0 ;\n"
	"l:\n  IADD R6, R6, 0x1 ;\n  STG.32 [R2], R6 ;\n  LDG.32 R7, [R4] ;\n"
	"  ISETP.EQ.U32 P0, R7, 0x0 ;\n  @P0 BRA l ;\n  EXIT ;\n";

/*
 * A job writes BO X, which is not in its BO list, on one queue; the file
 * closes X while the job runs.  X's pages are held (deferred) until the
 * job is gone, then released.
 */
TEST_F(job, unmap_while_running_defers_free)
{
	unsigned int active, deferred;
	unsigned long long total0, total;
	struct drm_gem_close gc = { 0 };
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	volatile uint32_t *x;
	struct vgpu_prog p;
	uint64_t x_va;
	uint32_t h[3], qid;
	int client;

	client = fd_client(self->fd);
	ASSERT_LE(0, client);
	if (as_counts(client, &active, &deferred, &total0))
		SKIP(return, "no debugfs address_spaces");
	ASSERT_EQ(0, active);
	ASSERT_EQ(0, deferred);

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qid));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &p, spin_src, 4096));
	test_bo_create(4096, 0, &gc.handle, &x_va);
	ASSERT_EQ(0, _test_bo_map(self->fd, gc.handle, 4096, (void **)&x));
	((uint64_t *)p.param)[0] = x_va;
	((uint64_t *)p.param)[1] = p.data_va;
	vgpu_prog_submit_args(&p, &s, h, 1, 32);
	s.queue = qid;
	test_submit(&s);
	while (!x[0])	/* the job runs and writes X */
		usleep(1000);
	munmap((void *)x, 4096);
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_GEM_CLOSE, &gc));

	ASSERT_EQ(0, as_counts(client, &active, &deferred, &total));
	ASSERT_EQ(1, active);
	ASSERT_EQ(1, deferred);
	ASSERT_EQ(total0 + 1, total);

	*(volatile uint32_t *)p.data = 1;	/* let the job end */
	test_wait_bo(p.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &j, &exc));
	/* it ended either normally or on a fault at X (TLB entry evicted) */
	if (j.state == VGPU_JOB_FAILED) {
		ASSERT_EQ(EFAULT, j.error);
		ASSERT_EQ(x_va, exc.addr & ~4095ull);
	} else {
		ASSERT_EQ(VGPU_JOB_DONE, j.state);
	}
	/* the job is freed after its fence signals: then X goes */
	do {
		ASSERT_EQ(0, as_counts(client, &active, &deferred, &total));
		if (deferred)
			usleep(1000);
	} while (deferred);
	ASSERT_EQ(0, active);
}

/* Closing a BO with no job of the file running frees it at once. */
TEST_F(job, unmap_idle_frees_at_once)
{
	unsigned int active, deferred;
	unsigned long long total0, total;
	struct drm_gem_close gc = { 0 };
	int client = fd_client(self->fd);

	ASSERT_LE(0, client);
	if (as_counts(client, &active, &deferred, &total0))
		SKIP(return, "no debugfs address_spaces");
	test_submit(&self->s);
	test_wait_bo(self->p.data_h);
	test_bo_create(4096, 0, &gc.handle, NULL);
	do {	/* the store job is freed shortly after its fence */
		ASSERT_EQ(0, as_counts(client, &active, &deferred, &total0));
		if (active)
			usleep(1000);
	} while (active);
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_GEM_CLOSE, &gc));
	ASSERT_EQ(0, as_counts(client, &active, &deferred, &total));
	ASSERT_EQ(0, deferred);
	ASSERT_EQ(total0, total);
}

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

/* dst[t] = src[t] for one CTA */
static const char copy_src[] =
	".kernel copy\n.param ptr src\n.param ptr dst\n"
	"  S2R R0, SR_TID.X ;\n  LDP.64 R2, [src] ;\n  LDP.64 R4, [dst] ;\n"
	"  SHL R6, R0, 0x2 ;\n  IADD R2, R2, R6 ;\n  IADD R4, R4, R6 ;\n"
	"  LDG.32 R8, [R2] ;\n  STG.32 [R4], R8 ;\n  EXIT ;\n";

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

/* Export the fence of binary syncobj @h as a sync_file. */
static int syncobj_sync_file(int fd, uint32_t h)
{
	struct drm_syncobj_handle a = {
		.handle = h,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	int ret = vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a);

	return ret ?: a.fd;
}

/* Wait for a sync_file to signal (poll() touches no driver code). */
static int sync_file_wait(int sf)
{
	struct pollfd p = { .fd = sf, .events = POLLIN };

	return poll(&p, 1, -1) == 1 && p.revents == POLLIN ? 0 : -1;
}

/*
 * Wait for a sync_file to signal; its status (1, or -errno).  The info
 * ioctl names the fence's timeline through its drm_sched scheduler: only
 * while the device's drm_device exists (see docs/driver.md).
 */
static int sync_file_status(int sf)
{
	struct sync_file_info info = { 0 };

	if (sync_file_wait(sf))
		return -1000;
	if (ioctl(sf, SYNC_IOC_FILE_INFO, &info))
		return -1001;
	return info.status;
}

static void wait_running(struct __test_metadata *_metadata, int fd, uint64_t id)
{
	struct drm_vgpu_get_job j;

	for (;;) {
		ASSERT_EQ(0, _test_get_job(fd, id, &j, NULL));
		ASSERT_NE(VGPU_JOB_DONE, j.state);
		ASSERT_NE(VGPU_JOB_FAILED, j.state);
		if (j.state == VGPU_JOB_RUNNING)
			return;
		usleep(1000);
	}
}

/*
 * On a fresh file: a kernel that never ends on the default queue and the store job
 * behind it, both on the device (RUNNING); sf[] get sync_files of their
 * fences.  The store's data BO stays mapped at *@data.
 */
static void jobs_in_flight(struct __test_metadata *_metadata, int fd, int sf[2],
			   struct vgpu_prog *sp_out)
{
	struct vgpu_prog hp, *spp = sp_out, sp;
	struct drm_vgpu_submit s;
	struct drm_vgpu_sync out = { 0 };
	uint32_t h[3];

	ASSERT_EQ(0, vgpu_prog_load(fd, &hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	ASSERT_EQ(0, vgpu_prog_load(fd, &sp, vgpu_store_src, 4096));
	*(uint64_t *)sp.param = sp.data_va;
	*(uint32_t *)((char *)sp.param + 8) = 7;
	vgpu_prog_unmap(&hp);

	ASSERT_EQ(0, _test_syncobj_create(fd, &out.handle));
	vgpu_prog_submit_args(&hp, &s, h, 1, 32);
	s.launch.budget = ~0ull;
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	ASSERT_EQ(0, _test_submit(fd, &s));
	wait_running(_metadata, fd, s.job_id);
	sf[0] = syncobj_sync_file(fd, out.handle);
	ASSERT_LE(0, sf[0]);

	ASSERT_EQ(0, _test_syncobj_create(fd, &out.handle));
	vgpu_prog_submit_args(&sp, &s, h, 4, 64);
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	ASSERT_EQ(0, _test_submit(fd, &s));
	wait_running(_metadata, fd, s.job_id);
	sf[1] = syncobj_sync_file(fd, out.handle);
	ASSERT_LE(0, sf[1]);
	*spp = sp;
}

/* The device works: a store job on a fresh file computes its result. */
static void device_works(struct __test_metadata *_metadata, int fd)
{
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];

	ASSERT_EQ(0, vgpu_prog_load(fd, &p, vgpu_store_src, 4096));
	*(uint64_t *)p.param = p.data_va;
	*(uint32_t *)((char *)p.param + 8) = 11;
	vgpu_prog_submit_args(&p, &s, h, 4, 64);
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p.data_h, vgpu_wait_ns(60)));
	ASSERT_EQ(0, check_store(p.data, 256, 11));
	vgpu_prog_unmap(&p);
}

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

/* The device's SM threads (debugfs queues), or -errno. */
static int sm_threads(const char *dir)
{
	return (int)vgpu_queues_num(dir, "sm_threads");
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

/* Until job @id has ended: its GET_JOB answer in *@j. */
static void wait_ended(struct __test_metadata *_metadata, int fd, uint64_t id,
		       struct drm_vgpu_get_job *j)
{
	int64_t end = vgpu_now_ns() + vgpu_wait_ns(60);

	for (;;) {
		ASSERT_EQ(0, _test_get_job(fd, id, j, NULL));
		if (j->state == VGPU_JOB_DONE || j->state == VGPU_JOB_FAILED)
			return;
		ASSERT_LT(vgpu_now_ns(), end);
		usleep(1000);
	}
}

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

/* ---- queue objects (uapi/vgpu_drm.h "Queues") ---- */

FIXTURE(queue) {
	int fd;
};

FIXTURE_SETUP(queue)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(queue)
{
	close(self->fd);
}

/* Every argument rule of QUEUE_CREATE, QUEUE_DESTROY and QUEUE_GET_STATE. */
TEST_F(queue, argument_errors)
{
	struct drm_vgpu_queue_create c;
	struct drm_vgpu_queue_destroy d;
	struct drm_vgpu_queue_get_state st;
	uint32_t id, ids[64];
	uint64_t max;
	int i, fd2;

	c = (struct drm_vgpu_queue_create){ .priority = 4 };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));
	c = (struct drm_vgpu_queue_create){ .priority = ~0u };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));
	c = (struct drm_vgpu_queue_create){ .flags = 1 };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));
	/* the former pad is the VM: a VM the file does not have */
	c = (struct drm_vgpu_queue_create){ .vm_id = 1 };
	ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));

	/* the default queue is always there and cannot be destroyed */
	ASSERT_EQ(0, _test_queue_state(self->fd, VGPU_QUEUE_DEFAULT, &st));
	EXPECT_EQ(VGPU_QUEUE_PRIORITY_NORMAL, st.priority);
	EXPECT_EQ(VGPU_QUEUE_STATE_ACTIVE, st.state);
	ASSERT_EQ(-EINVAL, _test_queue_destroy(self->fd, VGPU_QUEUE_DEFAULT));
	ASSERT_EQ(-ENOENT, _test_queue_destroy(self->fd, 12345));
	ASSERT_EQ(-ENOENT, _test_queue_state(self->fd, 12345, &st));
	d = (struct drm_vgpu_queue_destroy){ .queue_id = 1, .pad = 1 };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_DESTROY, &d));
	memset(&st, 0, sizeof(st));
	st.pad = 1;
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &st));

	/* a destroyed id is gone, and not handed out again at once */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &id));
	ASSERT_NE(0, id);
	ASSERT_EQ(0, _test_queue_destroy(self->fd, id));
	ASSERT_EQ(-ENOENT, _test_queue_destroy(self->fd, id));
	ASSERT_EQ(-ENOENT, _test_queue_state(self->fd, id, &st));

	/* the per-file limit */
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_MAX_QUEUES, &max));
	ASSERT_EQ(64, max);
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &ids[i])) {
			TH_LOG("queue %d", i);
		}
		ASSERT_NE(id, ids[i]) {
			TH_LOG("queue %d", i);
		}
	}
	ASSERT_EQ(-EMFILE, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &id));
	ASSERT_EQ(0, _test_queue_destroy(self->fd, ids[5]));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &ids[5]));
	/* another file has its own queues and its own limit */
	fd2 = vgpu_open_render();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(-ENOENT, _test_queue_state(fd2, ids[0], &st));
	ASSERT_EQ(0, _test_queue_create(fd2, VGPU_QUEUE_PRIORITY_LOW, &id));
	close(fd2);
}

/* capable(CAP_SYS_NICE) drops from the effective and permitted sets. */
static int drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	uint32_t bit = 1u << (CAP_SYS_NICE % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_SYS_NICE / 32].effective &= ~bit;
	d[CAP_SYS_NICE / 32].permitted &= ~bit;
	d[CAP_SYS_NICE / 32].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * HIGH and REALTIME need CAP_SYS_NICE (as xe and panthor): a child that
 * dropped it gets -EPERM for them, and its LOW and NORMAL queues work.
 */
TEST_F(queue, priority_needs_cap_sys_nice)
{
	uint32_t id;
	int status;
	pid_t pid;

	/* root has it */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_REALTIME, &id));
	ASSERT_EQ(0, _test_queue_destroy(self->fd, id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (drop_cap_sys_nice())
			_exit(10);
		fd = vgpu_open_render();
		if (fd < 0)
			_exit(11);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_HIGH, &id) != -EPERM)
			_exit(12);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_REALTIME, &id) != -EPERM)
			_exit(13);
		/* the file opened with the capability does not carry it */
		if (_test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &id) != -EPERM)
			_exit(14);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_LOW, &id))
			_exit(15);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_NORMAL, &id))
			_exit(16);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * Each CTA spins @n iterations, then takes a ticket from the counter at
 * @ctr (a BO no job lists: unsynchronised) and stores it at out[ctaid].
 */
static const char ticket_src[] =
	".kernel ticket\n.param ptr out\n.param ptr ctr\n.param u32 n\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R10, [ctr] ;\n  LDP.32 R8, [n] ;\n"
	"  MOV R6, 0x0 ;\n"
	"l:\n  IADD R6, R6, 0x1 ;\n  ISETP.LT.U32 P0, R6, R8 ;\n  @P0 BRA l ;\n"
	"  MOV R4, 0x1 ;\n  ATOMG.ADD.U32 R5, [R10+0x0], R4 ;\n"
	"  S2R R1, SR_CTAID.X ;\n  SHL R1, R1, 0x2 ;\n  IADD R2, R2, R1 ;\n"
	"  STG.32 [R2], R5 ;\n  EXIT ;\n";

#define TICKET_CTAS 64u
#define TICKET_SPIN 1000000u

/* A ticket job of @grid one-thread CTAs on queue @qid, counter at @ctr_va. */
static void ticket_submit(struct __test_metadata *_metadata, int fd,
			  struct vgpu_prog *p, uint32_t *h, uint32_t qid,
			  uint64_t ctr_va, uint32_t grid, uint64_t *job)
{
	struct drm_vgpu_submit s;

	((uint64_t *)p->param)[0] = p->data_va;
	((uint64_t *)p->param)[1] = ctr_va;
	((uint32_t *)p->param)[4] = TICKET_SPIN;
	vgpu_prog_submit_args(p, &s, h, grid, 1);
	s.queue = qid;
	ASSERT_EQ(0, _test_submit(fd, &s));
	*job = s.job_id;
}

/*
 * A high-priority job submitted behind a long low-priority kernel (many
 * CTAs, every SM busy) starts, and ends, before that kernel ends: the
 * device hands the next free SM to the higher priority.
 */
TEST_F(queue, high_priority_overtakes_low)
{
	struct vgpu_prog lp, hp;
	uint32_t lh[3], hh[3], qlow, qhigh, gc_h;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	volatile uint32_t *ctr;
	uint64_t ljob, ctr_va;

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qlow));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &qhigh));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &lp, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &hp, vgpu_store_src, 4096));
	ticket_submit(_metadata, self->fd, &lp, lh, qlow, ctr_va, TICKET_CTAS, &ljob);
	wait_running(_metadata, self->fd, ljob);
	while (ctr[0] == 0)	/* its CTAs are on the SMs */
		usleep(100);

	*(uint64_t *)hp.param = hp.data_va;
	*(uint32_t *)((char *)hp.param + 8) = 5;
	vgpu_prog_submit_args(&hp, &s, hh, 1, 32);
	s.queue = qhigh;
	test_submit(&s);
	test_wait_bo(hp.data_h);
	ASSERT_EQ(0, check_store(hp.data, 32, 5));
	/*
	 * The low kernel is still at it, not even half done: the high job
	 * took the first SM that came free, where a first-come device would
	 * have handed out all the low kernel's CTAs first (3/4 of them done).
	 */
	EXPECT_LT(ctr[0], TICKET_CTAS / 2);
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, j.state);
	test_wait_bo(lp.data_h);
	EXPECT_EQ(TICKET_CTAS, ctr[0]);
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	vgpu_prog_unmap(&lp);
	vgpu_prog_unmap(&hp);
}

/*
 * Each CTA writes 0x1234 to out[ctaid * 4], waits until *flag != 0, then
 * writes out[ctaid * 4 + 1] = 0x1234 + *flag.
 */
static const char hold_src[] =
	".kernel hold\n.param ptr out\n.param ptr flag\n.shared pad, 256\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R4, [flag] ;\n"
	"  S2R R0, SR_CTAID.X ;\n  SHL R1, R0, 0x4 ;\n  IADD R2, R2, R1 ;\n"
	"  MOV R6, 0x1234 ;\n  STG.32 [R2], R6 ;\n"
	"wait:\n  LDG.32 R7, [R4] ;\n  ISETP.EQ.U32 P0, R7, 0x0 ;\n  @P0 BRA wait ;\n"
	"  IADD R8, R6, R7 ;\n  STG.32 [R2+0x4], R8 ;\n  EXIT ;\n";

/* The device's SMs, when it can preempt and debugfs says; else 0. */
static uint32_t preempt_sms(int fd)
{
	uint64_t feat;
	char dir[64];
	int n;

	if (_test_get_param(fd, VGPU_PARAM_FEATURES, &feat) ||
	    !(feat & VGPU_FEAT_PREEMPT) || vgpu_debugfs_dir(dir, sizeof(dir)))
		return 0;
	n = sm_threads(dir);
	return n > 0 ? n : 0;
}

/*
 * Mid-kernel preemption (uapi "Preemption"): a LOW launch whose CTAs hold
 * every SM (one per SM thread, each waiting for a flag) would keep a HIGH
 * job off the device for good; the device saves the LOW CTAs into the
 * queue's context-save buffer, the HIGH job completes while the LOW one is
 * still RUNNING, and the LOW CTAs resume from their saved state and
 * finish with what they computed before and after.
 */
TEST_F(queue, high_priority_preempts_running_ctas)
{
	uint32_t lh[3], hh[3], qlow, qhigh, gc_h, n, i;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog lp, hp;
	volatile uint32_t *flag, *out;
	uint64_t ljob, flag_va;

	n = preempt_sms(self->fd);
	if (n < 1)
		SKIP(return, "no preemption, or no debugfs queues");
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qlow));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &qhigh));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &flag_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&flag));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &lp, hold_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &hp, vgpu_store_src, 4096));
	out = lp.data;
	((uint64_t *)lp.param)[0] = lp.data_va;
	((uint64_t *)lp.param)[1] = flag_va;
	vgpu_prog_submit_args(&lp, &s, lh, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qlow;
	test_submit(&s);
	ljob = s.job_id;
	for (i = 0; i < n; i++)	/* every SM holds one of its CTAs */
		while (out[4 * i] != 0x1234)
			usleep(1000);

	*(uint64_t *)hp.param = hp.data_va;
	*(uint32_t *)((char *)hp.param + 8) = 9;
	vgpu_prog_submit_args(&hp, &s, hh, 2, 64);
	s.queue = qhigh;
	test_submit(&s);
	test_wait_bo(hp.data_h);
	ASSERT_EQ(0, check_store(hp.data, 128, 9));
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, j.state);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, out[4 * i + 1]);

	*flag = 5;
	test_wait_bo(lp.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0x1234, out[4 * i]);
		EXPECT_EQ(0x1234 + 5, out[4 * i + 1]);
	}
	vgpu_prog_unmap(&lp);
	vgpu_prog_unmap(&hp);
}

/*
 * Timeslices (uapi "Timeslices"): a NORMAL launch whose CTAs hold every
 * SM until a flag is set would keep a second NORMAL launch off the device
 * for good; after a timeslice the device preempts it, so every CTA of the
 * second launch starts while the first one is still RUNNING, and both end
 * with the right values once the flag is set.
 */
TEST_F(queue, equal_priorities_timeslice)
{
	uint32_t ah[3], bh[3], qa, qb, gc_h, n, i;
	struct drm_vgpu_get_job ja, jb;
	struct drm_vgpu_submit s;
	struct vgpu_prog a, b;
	volatile uint32_t *flag, *aout, *bout;
	uint64_t joba, jobb, flag_va;

	n = preempt_sms(self->fd);
	if (n < 1)
		SKIP(return, "no preemption, or no debugfs queues");
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qb));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &flag_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&flag));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &a, hold_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &b, hold_src, 4096));
	aout = a.data;
	bout = b.data;
	((uint64_t *)a.param)[0] = a.data_va;
	((uint64_t *)a.param)[1] = flag_va;
	((uint64_t *)b.param)[0] = b.data_va;
	((uint64_t *)b.param)[1] = flag_va;
	vgpu_prog_submit_args(&a, &s, ah, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qa;
	test_submit(&s);
	joba = s.job_id;
	for (i = 0; i < n; i++)	/* every SM holds one of its CTAs */
		while (aout[4 * i] != 0x1234)
			usleep(1000);
	vgpu_prog_submit_args(&b, &s, bh, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qb;
	test_submit(&s);
	jobb = s.job_id;
	for (i = 0; i < n; i++)
		while (bout[4 * i] != 0x1234)
			usleep(1000);
	ASSERT_EQ(0, _test_get_job(self->fd, joba, &ja, NULL));
	ASSERT_EQ(0, _test_get_job(self->fd, jobb, &jb, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, ja.state);
	EXPECT_EQ(VGPU_JOB_RUNNING, jb.state);
	EXPECT_NE(ja.hw_queue, jb.hw_queue);
	*flag = 3;
	test_wait_bo(a.data_h);
	test_wait_bo(b.data_h);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0x1234 + 3, aout[4 * i + 1]);
		EXPECT_EQ(0x1234 + 3, bout[4 * i + 1]);
	}
	vgpu_prog_unmap(&a);
	vgpu_prog_unmap(&b);
}

/*
 * Two queues of equal priority with a long kernel each share the device:
 * their CTAs' tickets interleave (round robin between the launches),
 * where serving one launch after the other would give the first all of
 * the early tickets.
 */
TEST_F(queue, equal_priorities_share)
{
	struct vgpu_prog a, b;
	uint32_t ah[3], bh[3], qa, qb, gc_h, i, early_b = 0, early_a = 0;
	struct drm_vgpu_get_job ja, jb;
	volatile uint32_t *ctr;
	uint64_t joba, jobb, ctr_va;
	const uint32_t *ta, *tb;

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qb));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &a, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &b, ticket_src, 4096));
	ticket_submit(_metadata, self->fd, &a, ah, qa, ctr_va, TICKET_CTAS, &joba);
	ticket_submit(_metadata, self->fd, &b, bh, qb, ctr_va, TICKET_CTAS, &jobb);
	test_wait_bo(a.data_h);
	test_wait_bo(b.data_h);
	ASSERT_EQ(2 * TICKET_CTAS, ctr[0]);
	ASSERT_EQ(0, _test_get_job(self->fd, joba, &ja, NULL));
	ASSERT_EQ(0, _test_get_job(self->fd, jobb, &jb, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, ja.state);
	ASSERT_EQ(VGPU_JOB_DONE, jb.state);
	/* two hardware queues of the normal priority, one each */
	EXPECT_NE(ja.hw_queue, jb.hw_queue);
	ta = a.data;
	tb = b.data;
	for (i = 0; i < TICKET_CTAS; i++) {
		early_a += ta[i] < TICKET_CTAS;
		early_b += tb[i] < TICKET_CTAS;
	}
	/* of the first 64 tickets each got a fair share (~32) */
	EXPECT_LE(16, early_a);
	EXPECT_LE(16, early_b) {
		TH_LOG("b got %u of the first %u tickets", early_b, TICKET_CTAS);
	}
	vgpu_prog_unmap(&a);
	vgpu_prog_unmap(&b);
}

/* Until job @id has left QUEUED (it is on the device, or done). */
static void wait_started(struct __test_metadata *_metadata, int fd, uint64_t id)
{
	struct drm_vgpu_get_job j;

	for (;;) {
		ASSERT_EQ(0, _test_get_job(fd, id, &j, NULL));
		if (j.state != VGPU_JOB_QUEUED)
			return;
		usleep(1000);
	}
}

static const char sem_deps_param[] = "/sys/module/vgpu/parameters/sem_deps";

/*
 * Destroying a queue: its id is gone at once (SUBMIT, GET_STATE: -ENOENT);
 * its job on the device runs to completion; its job still waiting for a
 * dependency (a fence of another queue, waited on by the CPU: sem_deps=0)
 * never runs: -ESRCH, drm_sched's killed entity.
 */
TEST_F(queue, destroy_with_jobs)
{
	struct vgpu_prog lp, rp, dp;
	uint32_t lh[3], rh[3], dh[3], qid, gc_h;
	struct drm_vgpu_sync sync = { 0 };
	struct drm_vgpu_queue_get_state st;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	uint64_t ctr_va, rjob, djob;
	char old[8] = "";
	void *ctr;

	if (read_file(sem_deps_param, old, sizeof(old)) <= 0)
		SKIP(return, "no sem_deps parameter");
	ASSERT_EQ(0, sysfs_write(sem_deps_param, "0"));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qid));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, &ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &lp, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &rp, vgpu_store_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &dp, vgpu_store_src, 4096));

	/* L: a long job on the default queue, signalling the syncobj */
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &sync.handle));
	((uint64_t *)lp.param)[0] = lp.data_va;
	((uint64_t *)lp.param)[1] = ctr_va;
	((uint32_t *)lp.param)[4] = TICKET_SPIN;
	vgpu_prog_submit_args(&lp, &s, lh, TICKET_CTAS, 1);
	s.out_syncs = (uintptr_t)&sync;
	s.out_sync_count = 1;
	test_submit(&s);

	/* R: on the queue, no dependency: it reaches the device */
	*(uint64_t *)rp.param = rp.data_va;
	*(uint32_t *)((char *)rp.param + 8) = 3;
	vgpu_prog_submit_args(&rp, &s, rh, 1, 32);
	s.queue = qid;
	test_submit(&s);
	rjob = s.job_id;
	wait_started(_metadata, self->fd, rjob);

	/* D: on the queue, waiting for L */
	*(uint64_t *)dp.param = dp.data_va;
	*(uint32_t *)((char *)dp.param + 8) = 4;
	vgpu_prog_submit_args(&dp, &s, dh, 1, 32);
	s.queue = qid;
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	test_submit(&s);
	djob = s.job_id;
	ASSERT_EQ(0, _test_get_job(self->fd, djob, &j, NULL));
	ASSERT_EQ(VGPU_JOB_QUEUED, j.state);

	ASSERT_EQ(0, _test_queue_destroy(self->fd, qid));
	ASSERT_EQ(-ENOENT, _test_queue_state(self->fd, qid, &st));
	s.in_sync_count = 0;
	test_err_submit(ENOENT, &s);

	test_wait_bo(rp.data_h);
	ASSERT_EQ(0, check_store(rp.data, 32, 3));
	ASSERT_EQ(0, _test_get_job(self->fd, rjob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	test_wait_bo(dp.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, djob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_FAILED, j.state);
	EXPECT_EQ(ESRCH, j.error);
	EXPECT_EQ(0, ((uint32_t *)dp.data)[1]);	/* it never ran */
	test_wait_bo(lp.data_h);
	sysfs_write(sem_deps_param, old);
	vgpu_prog_unmap(&lp);
	vgpu_prog_unmap(&rp);
	vgpu_prog_unmap(&dp);
}

/*
 * Same-device dependencies (uapi/vgpu_drm.h "Queues"): job B on the
 * default queue waits (through a syncobj only) for a long job A on a
 * low-priority queue and copies what A wrote.  With device-side waits
 * (sem_deps=1) B goes onto the device at once, behind a SEM_ACQUIRE, and
 * is RUNNING while A still runs; with CPU waits (sem_deps=0) B stays
 * QUEUED until A is done.  Either way B sees all of A's results.
 */
FIXTURE(semdep) {
	int fd;
	char old[8];
};

FIXTURE_VARIANT(semdep) {
	bool device;
};

FIXTURE_VARIANT_ADD(semdep, device_waits) {
	.device = true,
};

FIXTURE_VARIANT_ADD(semdep, cpu_waits) {
	.device = false,
};

FIXTURE_SETUP(semdep)
{
	uint64_t feat;

	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_FEATURES, &feat));
	ASSERT_NE(0, feat & VGPU_FEAT_SEMAPHORES);
	ASSERT_LT(0, read_file(sem_deps_param, self->old, sizeof(self->old)));
	ASSERT_EQ(0, sysfs_write(sem_deps_param, variant->device ? "1" : "0"));
}

FIXTURE_TEARDOWN(semdep)
{
	if (self->old[0])
		sysfs_write(sem_deps_param, self->old);
	close(self->fd);
}

TEST_F(semdep, waits_for_other_queue)
{
	struct vgpu_prog ap, bp;
	uint32_t ah[3], bh[3], qa, gc_h, i, seen = 0;
	struct drm_vgpu_sync sync = { 0 };
	struct drm_vgpu_get_job ja, jb;
	struct drm_vgpu_submit s;
	const uint32_t *a, *b;
	uint64_t ajob, ctr_va;
	void *ctr;

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qa));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, &ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &ap, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &bp, copy_src, 4096));
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &sync.handle));

	/* A: 16 CTAs, each writes its ticket; signals the syncobj */
	((uint64_t *)ap.param)[0] = ap.data_va;
	((uint64_t *)ap.param)[1] = ctr_va;
	((uint32_t *)ap.param)[4] = TICKET_SPIN;
	vgpu_prog_submit_args(&ap, &s, ah, 16, 1);
	s.queue = qa;
	s.out_syncs = (uintptr_t)&sync;
	s.out_sync_count = 1;
	test_submit(&s);
	ajob = s.job_id;
	wait_running(_metadata, self->fd, ajob);

	/* B: copies A's 16 words; only the syncobj orders it after A */
	((uint64_t *)bp.param)[0] = ap.data_va;
	((uint64_t *)bp.param)[1] = bp.data_va;
	memset(bp.data, 0xff, 64);
	vgpu_prog_submit_args(&bp, &s, bh, 1, 16);
	s.bo_handle_count = 2;	/* code and parameters: not A's data */
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	test_submit(&s);

	if (variant->device) {
		wait_running(_metadata, self->fd, s.job_id);
	} else {
		usleep(20000);
		ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &jb, NULL));
		EXPECT_EQ(VGPU_JOB_QUEUED, jb.state);
	}
	ASSERT_EQ(0, _test_get_job(self->fd, ajob, &ja, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, ja.state) {
		TH_LOG("A ended before B's state was seen: make A longer");
	}

	ASSERT_EQ(0, _test_syncobj_wait(self->fd, sync.handle, 0, vgpu_wait_ns(30)));
	/* B lists no data BO: its end is its GET_JOB state */
	wait_ended(_metadata, self->fd, s.job_id, &jb);
	EXPECT_EQ(VGPU_JOB_DONE, jb.state);
	a = ap.data;
	b = bp.data;
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(a[i], b[i]);
		if (a[i] < 16)
			seen |= 1u << a[i];
	}
	EXPECT_EQ(0xffffu, seen);	/* A's tickets: 0..15, all of them */
	vgpu_prog_unmap(&ap);
	vgpu_prog_unmap(&bp);
}

/* Last in the suite: these take the device away and bring it back. */
FIXTURE(unplug) {
	int unused;
};

FIXTURE_SETUP(unplug)
{
}

FIXTURE_TEARDOWN(unplug)
{
}

TEST_F(unplug, module_unload_busy)
{
	int fd = vgpu_open_render();

	ASSERT_LE(0, fd);
	/* an open file holds the module */
	ASSERT_EQ(-EWOULDBLOCK, module_unload());
	close(fd);
}

/*
 * Unbind the PCI device while two jobs are on it and the file is open:
 * both fences signal -ENODEV, ioctls on the file give -ENODEV, the CPU
 * mapping stays readable; after close and rebind the device works and
 * gets the same render minor back (the old drm_device was freed).
 */
TEST_F(unplug, unbind_rebind_jobs_in_flight)
{
	char addr[256], path[256];
	struct vgpu_prog sp;
	int fd, fd2, sf[2], minor, minor2, i;

	ASSERT_EQ(0, vgpu_pci_addr(addr, sizeof(addr)));
	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	jobs_in_flight(_metadata, fd, sf, &sp);

	ASSERT_EQ(0, sysfs_write(VGPU_PCI_DRIVER "/unbind", addr));
	ASSERT_EQ(-ENODEV, sync_file_status(sf[0]));
	ASSERT_EQ(-ENODEV, sync_file_status(sf[1]));
	ASSERT_EQ(-ENODEV, _test_get_param(fd, VGPU_PARAM_QUEUES, NULL));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, ((uint32_t *)sp.data)[i]);
	vgpu_prog_unmap(&sp);
	close(sf[0]);
	close(sf[1]);
	close(fd);

	ASSERT_EQ(-ENODEV, vgpu_pci_addr(path, sizeof(path)));
	ASSERT_EQ(0, sysfs_write(VGPU_PCI_DRIVER "/bind", addr));
	fd2 = vgpu_open_render_minor(&minor2);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(minor, minor2);
	device_works(_metadata, fd2);
	close(fd2);
}

/*
 * Unload the module while jobs are on the device (their file closed, a
 * sync_file of each fence kept): the fences signal, the module goes, the
 * sync_files outlive it and close cleanly; loaded again, the device works
 * under the same render minor.  (The -ENODEV error of such fences is
 * checked by unbind_rebind_jobs_in_flight: the timeline name the info
 * ioctl prints is gone with the module.)
 */
TEST_F(unplug, module_reload_jobs_in_flight)
{
	char ko[256], params[64];
	struct vgpu_prog sp;
	int fd, sf[2], minor, minor2;

	if (module_path(ko, sizeof(ko)))
		SKIP(return, "no %s to load again", ko);
	module_params(params, sizeof(params));
	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	jobs_in_flight(_metadata, fd, sf, &sp);
	/* closing waits for nothing: both jobs are on the device already */
	vgpu_prog_unmap(&sp);
	close(fd);

	ASSERT_EQ(0, module_unload());
	ASSERT_EQ(0, sync_file_wait(sf[0]));
	ASSERT_EQ(0, sync_file_wait(sf[1]));
	ASSERT_EQ(-ENOENT, access("/sys/module/vgpu", F_OK) ? -errno : 0);
	close(sf[0]);
	close(sf[1]);

	ASSERT_EQ(0, module_load(ko, params));
	fd = vgpu_open_render_minor(&minor2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(minor, minor2);
	device_works(_metadata, fd);
	close(fd);
}

/*
 * TEST_HARNESS_MAIN, with every test's timeout (the harness's 30 s, or a
 * TEST_F_TIMEOUT's) multiplied by VGPU_TIMEOUT_SCALE: the harness kills a
 * test that runs longer, and on the debug kernel everything is slower.
 */
VGPU_TEST_HARNESS_MAIN
