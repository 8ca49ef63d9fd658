// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko selftests (kselftest_harness.h).  Run in the guest with the
 * module loaded: ./vgpu_test.  One error path per test.  This program:
 * the render node's ioctls, WAIT_BO, jobs, the example kernels, stale
 * TLBs.  Debugging surfaces, two processes, unplug with jobs in flight and
 * device resets: vgpu_reset; queue objects: vgpu_queue.
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
#include "vgpu_test.h"


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

/*
 * TEST_HARNESS_MAIN, with every test's timeout (the harness's 30 s, or a
 * TEST_F_TIMEOUT's) multiplied by VGPU_TIMEOUT_SCALE: the harness kills a
 * test that runs longer, and on the debug kernel everything is slower.
 */
VGPU_TEST_HARNESS_MAIN
