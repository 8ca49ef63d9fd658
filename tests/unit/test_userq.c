// SPDX-License-Identifier: MIT
/*
 * libvgpu's user-mode queues (vgpu_queue_new_user(), libvgpu/userq.c) on
 * whichever backend vgpu_device_open(NULL) gives: the sim on the host,
 * vgpu.ko in the guest (run-in-guest.sh runs this with VGPU_BACKEND=drm).
 * Launches on a user queue write the ring and ring the doorbell; every
 * check is a kernel's output, a job's status or exception, or the
 * queue's state, and the same launches on a kernel queue agree.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"

#define SEC 1000000000ll
#define WAIT_NS (120 * SEC) /* generous: the guest runs under TCG */

/* out[gid] = gid * 2 + k */
static const char store_src[] =
	".kernel store\n.param ptr out\n.param u32 k\n"
	"  S2R R0, SR_TID.X ;\n  S2R R1, SR_CTAID.X ;\n  S2R R7, SR_NTID.X ;\n"
	"  IMAD R0, R1, R7, R0 ;\n  LDP.64 R2, [out] ;\n  LDP.32 R8, [k] ;\n"
	"  SHL R4, R0, 0x2 ;\n  IADD R2, R2, R4 ;\n  IMAD R5, R0, 0x2, R8 ;\n"
	"  STG.32 [R2], R5 ;\n  EXIT ;\n";

FIXTURE(userq) {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *bo;
	uint32_t *out;
	struct vgpu_args *args;
	struct vgpu_queue *q;
};

FIXTURE_SETUP(userq)
{
	char log[1024] = "";
	uint64_t n = 0;

	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
	ASSERT_EQ(0, vgpu_device_get_param(self->dev, VGPU_PARAM_USER_QUEUES, &n));
	if (!n)
		SKIP(return, "no hardware queue for user mode");
	ASSERT_EQ(0, vgpu_program_assemble(self->dev, store_src, strlen(store_src),
					   "store.vgs", &self->prog, log,
					   sizeof(log))) TH_LOG("%s", log);
	ASSERT_EQ(0, vgpu_program_kernel(self->prog, 0, &self->k));
	ASSERT_EQ(0, vgpu_bo_new(self->dev, 1 << 16, 0, &self->bo));
	ASSERT_EQ(0, vgpu_bo_map(self->bo, (void **)&self->out));
	ASSERT_EQ(0, vgpu_args_new(self->k, &self->args));
	ASSERT_EQ(0, vgpu_args_set_bo(self->args, 0, self->bo, 0));
	ASSERT_EQ(0, vgpu_queue_new_user(self->dev, VGPU_QUEUE_PRIORITY_NORMAL,
					 &self->q));
}

FIXTURE_TEARDOWN(userq)
{
	vgpu_queue_free(self->q);
	vgpu_args_free(self->args);
	vgpu_bo_free(self->bo);
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

static int launch(FIXTURE_DATA(userq) *self, struct vgpu_queue *q, uint32_t k,
		  uint32_t grid, struct vgpu_job **job)
{
	struct vgpu_launch_config cfg = { .grid = { grid }, .block = { 64 },
					  .queue = q };
	int ret = vgpu_args_set_u32(self->args, 1, k);

	return ret ?: vgpu_kernel_launch(self->k, &cfg, self->args, job);
}

static unsigned int bad_words(const uint32_t *out, uint32_t n, uint32_t k)
{
	unsigned int bad = 0;

	for (uint32_t i = 0; i < n; i++)
		bad += out[i] != i * 2 + k;
	return bad;
}

TEST_F(userq, launches_complete_and_report_like_kernel_queue_jobs)
{
	struct vgpu_job_status st, kst;
	struct vgpu_queue_state qs;
	struct vgpu_job *job, *kjob;

	/* one job: its output, status and hardware queue */
	ASSERT_EQ(0, launch(self, self->q, 5, 4, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	EXPECT_EQ(0u, bad_words(self->out, 256, 5));
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ((uint32_t)VGPU_JOB_DONE, st.state);
	EXPECT_EQ(0u, st.error);
	EXPECT_EQ(VGPU_ERR_NONE, st.hw_status);
	EXPECT_EQ(vgpu_queue_id(self->q), st.queue);
	EXPECT_EQ(-ENODATA, vgpu_job_exception(job, &(struct vgpu_exception_record){ 0 }));
	/* the same launch on the default (kernel) queue executes as much */
	memset(self->out, 0, 1024);
	ASSERT_EQ(0, launch(self, NULL, 5, 4, &kjob));
	ASSERT_EQ(0, vgpu_job_wait(kjob, WAIT_NS));
	EXPECT_EQ(0u, bad_words(self->out, 256, 5));
	ASSERT_EQ(0, vgpu_job_status(kjob, &kst));
	EXPECT_EQ(kst.warp_insns, st.warp_insns);
	EXPECT_NE(kst.hw_queue, st.hw_queue);
	vgpu_job_free(job);
	vgpu_job_free(kjob);

	/* past the ring's capacity, with and without job handles */
	for (uint32_t k = 0; k < 300; k++)
		ASSERT_EQ(0, launch(self, self->q, k, 4, NULL));
	ASSERT_EQ(0, launch(self, self->q, 1000, 4, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	EXPECT_EQ(0u, bad_words(self->out, 256, 1000));
	vgpu_job_free(job);
	ASSERT_EQ(0, vgpu_queue_state(self->dev, self->q, &qs));
	EXPECT_EQ((uint32_t)VGPU_QUEUE_STATE_ACTIVE, qs.state);
	EXPECT_EQ(302u, qs.submitted);
	EXPECT_EQ(302u, qs.completed);
	EXPECT_EQ(st.hw_queue, qs.hw_queue);
}

TEST_F(userq, jobs_waited_out_of_order_and_after_the_ring_wrapped)
{
	struct vgpu_job *jobs[8];
	struct vgpu_job_status st;

	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, launch(self, self->q, i, 1, &jobs[i]));
	for (int i = 7; i >= 0; i--)
		ASSERT_EQ(0, vgpu_job_wait(jobs[i], WAIT_NS));
	EXPECT_EQ(0u, bad_words(self->out, 64, 7));
	/* 200 more launches overwrite job 0's completion record: still done */
	for (uint32_t k = 0; k < 200; k++)
		ASSERT_EQ(0, launch(self, self->q, k, 1, NULL));
	ASSERT_EQ(0, vgpu_job_wait(jobs[0], 0));
	ASSERT_EQ(0, vgpu_job_status(jobs[0], &st));
	EXPECT_EQ((uint32_t)VGPU_JOB_DONE, st.state);
	for (int i = 0; i < 8; i++)
		vgpu_job_free(jobs[i]);
}

TEST_F(userq, a_failed_launch_stops_the_queue)
{
	struct vgpu_exception_record rec;
	struct vgpu_queue_state qs;
	struct vgpu_job *bad, *behind, *ok;
	struct vgpu_args *a;
	int ret;

	/* a kernel storing through an unmapped pointer */
	ASSERT_EQ(0, vgpu_args_new(self->k, &a));
	ASSERT_EQ(0, vgpu_args_set_u64(a, 0, 0x7f0000000000ull));
	ASSERT_EQ(0, vgpu_args_set_u32(a, 1, 1));
	ASSERT_EQ(0, launch(self, self->q, 1, 1, &ok));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k,
					&(struct vgpu_launch_config){
						.block = { 32 }, .queue = self->q },
					a, &bad));
	/*
	 * Behind it: refused at once if the device has stopped the queue
	 * already (always on the sim, which runs at the doorbell), else
	 * written and never run.
	 */
	ret = launch(self, self->q, 2, 1, &behind);
	EXPECT_TRUE(ret == 0 || ret == -EIO);
	EXPECT_EQ(-EFAULT, vgpu_job_wait(bad, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(bad, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, rec.code);
	EXPECT_EQ(0x7f0000000000ull, rec.addr);
	/* before it: done; behind it: never ran */
	EXPECT_EQ(0, vgpu_job_wait(ok, WAIT_NS));
	if (!ret)
		EXPECT_EQ(-ECANCELED, vgpu_job_wait(behind, WAIT_NS));
	/* the queue is stopped: later launches fail at once */
	EXPECT_EQ(-EIO, launch(self, self->q, 3, 1, NULL));
	ASSERT_EQ(0, vgpu_queue_state(self->dev, self->q, &qs));
	EXPECT_EQ((uint32_t)VGPU_QUEUE_STATE_BANNED, qs.state);
	EXPECT_EQ((uint32_t)EIO, qs.ban_reason);
	vgpu_job_free(ok);
	vgpu_job_free(bad);
	if (!ret)
		vgpu_job_free(behind);
	vgpu_args_free(a);
	/* a new queue works */
	vgpu_queue_free(self->q);
	ASSERT_EQ(0, vgpu_queue_new_user(self->dev, VGPU_QUEUE_PRIORITY_NORMAL,
					 &self->q));
	ASSERT_EQ(0, launch(self, self->q, 9, 1, &ok));
	EXPECT_EQ(0, vgpu_job_wait(ok, WAIT_NS));
	EXPECT_EQ(0u, bad_words(self->out, 64, 9));
	vgpu_job_free(ok);
}

TEST_F(userq, no_sync_points_and_a_limit_on_queues)
{
	struct vgpu_queue *more[VGPU_MAX_USERQ_PER_FILE + 1];
	struct vgpu_syncobj *s;
	struct vgpu_sync_point sp;
	uint64_t n = 0;
	unsigned int made = 0;
	int ret = 0;

	ASSERT_EQ(0, vgpu_syncobj_new(self->dev, 0, &s));
	sp = (struct vgpu_sync_point){ .syncobj = s };
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(self->k,
					      &(struct vgpu_launch_config){
						      .queue = self->q,
						      .signal = &sp, .nsignal = 1 },
					      self->args, NULL));
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(self->k,
					      &(struct vgpu_launch_config){
						      .queue = self->q,
						      .wait = &sp, .nwait = 1 },
					      self->args, NULL));
	vgpu_syncobj_free(s);
	/*
	 * More than the hardware queues kept for user mode (they are mapped
	 * in and out): up to the file's limit, then -EMFILE, never -EBUSY
	 */
	ASSERT_EQ(0, vgpu_device_get_param(self->dev, VGPU_PARAM_USER_QUEUES, &n));
	EXPECT_LT(n, (uint64_t)VGPU_MAX_USERQ_PER_FILE);
	while (made < VGPU_MAX_USERQ_PER_FILE + 1) {
		ret = vgpu_queue_new_user(self->dev, VGPU_QUEUE_PRIORITY_NORMAL,
					  &more[made]);
		if (ret)
			break;
		made++;
	}
	EXPECT_EQ(-EMFILE, ret);
	EXPECT_EQ(VGPU_MAX_USERQ_PER_FILE, made + 1u);
	for (unsigned int i = 0; i < made; i++)
		vgpu_queue_free(more[i]);
}

TEST_HARNESS_MAIN
