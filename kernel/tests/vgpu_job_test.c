// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the job path (vgpu_job.c, which includes this file at its end so
 * that its static functions are reachable, as xe does), on a fake device
 * whose register BAR is plain memory: ring slots and wrap-around, the
 * commands run_job writes and the doorbell it rings, completion records
 * -> fence errors and job history (every status and exception code), the
 * completed counter's 32-bit wrap, harvesting after a reset.
 *
 * The same fake device serves vgpu_submit_test.c (GET_JOB and SUBMIT's
 * arguments), included after this file; vgpu_sched_test.c runs the real
 * scheduler.
 */
#include <linux/delay.h>
#include <linux/mman.h>
#include <kunit/device.h>
#include <kunit/test.h>

/* Test objects off the stack (KASAN makes large frames larger still). */
#define vgpu_test_new(test, type)					\
	({								\
		type *__p = kunit_kzalloc(test, sizeof(type), GFP_KERNEL); \
		KUNIT_ASSERT_NOT_NULL(test, __p);			\
		__p;							\
	})

struct vgpu_job_test {
	struct vgpu_device *vdev;
	struct vgpu_file *vf;
	struct vgpu_as *as;
	struct vgpu_queue *q;
	u8 *bar;		/* vdev->mmio: registers are plain memory */
	struct drm_file *file;
};

#define VGPU_TEST_QUEUE 1u

static int vgpu_job_test_init(struct kunit *test)
{
	struct vgpu_job_test *t = vgpu_test_new(test, struct vgpu_job_test);
	struct vgpu_queue *q;

	t->vdev = vgpu_test_new(test, struct vgpu_device);
	t->vf = vgpu_test_new(test, struct vgpu_file);
	t->as = vgpu_test_new(test, struct vgpu_as);
	t->file = vgpu_test_new(test, struct drm_file);
	t->bar = kunit_kzalloc(test, VGPU_BAR0_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->bar);
	t->vdev->mmio = (void __force __iomem *)t->bar;
	spin_lock_init(&t->vdev->exc_lock);
	spin_lock_init(&t->vdev->irq_lock);
	t->vdev->nqueues = 4;
	t->vdev->max_code = 1 << 16;
	t->vdev->max_param = 4096;

	t->as->vdev = t->vdev;
	t->as->asid = 5;	/* bound (the ASIDs' bookkeeping is vgpu_mmu_test's) */
	spin_lock_init(&t->vdev->asid_lock);
	INIT_LIST_HEAD(&t->as->lru);
	kref_init(&t->as->refcount);
	spin_lock_init(&t->as->deferred_lock);
	INIT_LIST_HEAD(&t->as->deferred);

	t->vf->vdev = t->vdev;
	t->vf->as = t->as;
	t->vf->client_id = 42;
	kref_init(&t->vf->refcount);
	init_waitqueue_head(&t->vf->jobs_wq);
	spin_lock_init(&t->vf->hist_lock);
	t->vf->hist = kunit_kcalloc(test, VGPU_JOB_HISTORY,
				    sizeof(*t->vf->hist), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vf->hist);

	t->file->driver_priv = t->vf;
	idr_init_base(&t->file->object_idr, 1);
	spin_lock_init(&t->file->table_lock);
	idr_init_base(&t->file->syncobj_idr, 1);
	spin_lock_init(&t->file->syncobj_table_lock);

	q = t->q = &t->vdev->queues[VGPU_TEST_QUEUE];
	q->vdev = t->vdev;
	q->idx = VGPU_TEST_QUEUE;
	spin_lock_init(&q->lock);
	spin_lock_init(&q->fence_lock);
	INIT_LIST_HEAD(&q->inflight);
	q->fence_context = dma_fence_context_alloc(1);
	q->ring = kunit_kzalloc(test, VGPU_RING_ENTRIES * VGPU_CMD_BYTES, GFP_KERNEL);
	q->cpl = kunit_kcalloc(test, VGPU_RING_ENTRIES, sizeof(*q->cpl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q->ring);
	KUNIT_ASSERT_NOT_NULL(test, q->cpl);
	test->priv = t;
	return 0;
}

static u32 vgpu_test_qreg(struct vgpu_job_test *t, u32 reg)
{
	return le32_to_cpup((__le32 *)(t->bar + VGPU_REG_QUEUE(t->q->idx) + reg));
}

static void vgpu_test_set_qreg(struct vgpu_job_test *t, u32 reg, u32 val)
{
	*(__le32 *)(t->bar + VGPU_REG_QUEUE(t->q->idx) + reg) = cpu_to_le32(val);
}

static void *vgpu_test_cmd(struct vgpu_job_test *t, u32 slot)
{
	return t->q->ring + (size_t)slot * VGPU_CMD_BYTES;
}

static u32 vgpu_test_cmd_opcode(struct vgpu_queue *q, u32 slot)
{
	const struct vgpu_cmd_header *h = (void *)(q->ring + (size_t)slot * VGPU_CMD_BYTES);

	return le32_to_cpu(h->opcode);
}

/*
 * A job of @t's file with id @id, as SUBMIT leaves it: history entry
 * QUEUED, a (fake) scheduler fence with no error.
 */
static struct vgpu_job *vgpu_test_job(struct kunit *test, u64 id)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_job *job = vgpu_test_new(test, struct vgpu_job);
	struct vgpu_job_result *r = vgpu_hist(t->vf, id);

	job->vdev = t->vdev;
	job->vf = t->vf;
	job->as = t->as;
	job->queue = t->q->idx;
	job->id = id;
	job->base.s_fence = vgpu_test_new(test, struct drm_sched_fence);
	INIT_LIST_HEAD(&job->link);
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->state = VGPU_JOB_QUEUED;
	r->queue = t->q->idx;
	r->hw_queue = t->q->idx;
	return job;
}

/* @job on the hardware: a hardware fence, in flight at @slot with @seq. */
static void vgpu_test_job_on_hw(struct vgpu_job_test *t, struct vgpu_job *job,
				u32 slot, u64 seq)
{
	struct vgpu_queue *q = t->q;

	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (WARN_ON(!job->hw_fence))
		return;
	dma_fence_init(job->hw_fence, &vgpu_fence_ops, &q->fence_lock,
		       q->fence_context, ++q->fence_seqno);
	job->slot = slot;
	job->seq = seq;
	job->start_ns = ktime_get_ns();
	list_add_tail(&job->link, &q->inflight);
}

static void vgpu_test_job_done(struct vgpu_job *job)
{
	if (!list_empty(&job->link))
		list_del_init(&job->link);
	if (job->hw_fence && !dma_fence_is_signaled(job->hw_fence))
		dma_fence_signal(job->hw_fence);
	dma_fence_put(job->hw_fence);
	job->hw_fence = NULL;
}

static struct vgpu_completion *vgpu_test_cpl(struct vgpu_job_test *t, u32 slot,
					     u32 status, u64 seq)
{
	struct vgpu_completion *cpl = &t->q->cpl[slot];

	memset(cpl, 0, sizeof(*cpl));
	cpl->status = cpu_to_le32(status);
	cpl->opcode = cpu_to_le32(VGPU_CMD_LAUNCH);
	cpl->index = cpu_to_le32(slot);
	cpl->queue = cpu_to_le32(t->q->idx);
	cpl->seq = cpu_to_le64(seq);
	return cpl;
}

/* ---- ring ---- */

static void vgpu_job_ring_wraps(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	u32 slot, i;

	q->tail = VGPU_RING_ENTRIES - 2;
	q->emitted = 1000;
	memset(q->ring, 0xa5, VGPU_RING_ENTRIES * VGPU_CMD_BYTES);
	vgpu_ring_slot(q, &slot);
	KUNIT_EXPECT_EQ(test, slot, VGPU_RING_ENTRIES - 2);
	vgpu_ring_slot(q, &slot);
	KUNIT_EXPECT_EQ(test, slot, VGPU_RING_ENTRIES - 1);
	KUNIT_EXPECT_EQ(test, q->tail, 0);
	vgpu_ring_slot(q, &slot);
	KUNIT_EXPECT_EQ(test, slot, 0);
	KUNIT_EXPECT_EQ(test, q->tail, 1);
	KUNIT_EXPECT_EQ(test, q->emitted, 1003);
	/* each slot handed out is cleared, its neighbours are not touched */
	for (i = 0; i < VGPU_CMD_BYTES; i++) {
		KUNIT_EXPECT_EQ(test, q->ring[i], 0);
		KUNIT_EXPECT_EQ(test, q->ring[(VGPU_RING_ENTRIES - 1) * VGPU_CMD_BYTES + i], 0);
	}
	KUNIT_EXPECT_EQ(test, q->ring[VGPU_CMD_BYTES], 0xa5);
	KUNIT_EXPECT_EQ(test, q->ring[(VGPU_RING_ENTRIES - 3) * VGPU_CMD_BYTES], 0xa5);
}

/*
 * Ring space: a job takes at most two slots (TLB invalidate + launch) and
 * the scheduler holds at most VGPU_JOBS_IN_FLIGHT jobs on the hardware
 * (vgpu_sched_credits checks the scheduler), so the ring never laps a
 * command the device has not completed.
 */
static void vgpu_job_ring_space(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	u32 slot, i, first;

	KUNIT_EXPECT_LE(test, 2 * VGPU_JOBS_IN_FLIGHT, VGPU_RING_ENTRIES);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(VGPU_RING_ENTRIES));
	KUNIT_EXPECT_LE(test, VGPU_RING_ENTRIES, VGPU_RING_MAX);
	q->tail = VGPU_RING_ENTRIES - 5;
	first = q->tail;
	for (i = 0; i < 2 * VGPU_JOBS_IN_FLIGHT; i++) {
		vgpu_ring_slot(q, &slot);
		KUNIT_EXPECT_EQ(test, slot, (first + i) % VGPU_RING_ENTRIES);
	}
	KUNIT_EXPECT_NE(test, q->tail, first);
	KUNIT_EXPECT_EQ(test, q->emitted, 2 * VGPU_JOBS_IN_FLIGHT);
}

static void vgpu_job_emit_commands(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *job = vgpu_test_job(test, 1);
	struct vgpu_cmd_tlb_invalidate *ti;
	struct vgpu_cmd_launch *c;

	job->launch = (struct drm_vgpu_launch){
		.code_va = 0x100000, .code_size = 64, .entry = 16,
		.grid = { 2, 3, 4 }, .block = { 32, 2, 1 }, .cluster = { 1, 2, 1 },
		.smem_bytes = 1024, .param_va = 0x200000, .param_size = 24,
		.launch_flags = VGPU_LAUNCH_SANITIZE, .seed = 7, .budget = 1000,
	};
	memset(q->ring, 0xa5, VGPU_RING_ENTRIES * VGPU_CMD_BYTES);
	q->tail = VGPU_RING_ENTRIES - 1;
	vgpu_emit_tlbi(q);
	ti = vgpu_test_cmd(t, VGPU_RING_ENTRIES - 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ti->hdr.opcode), VGPU_CMD_TLB_INVALIDATE);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ti->hdr.flags), 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(ti->asid), VGPU_TLBI_ALL_AS);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ti->va), 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(ti->size), 0);
	vgpu_emit_launch(q, job);
	KUNIT_EXPECT_EQ(test, job->slot, 0);
	KUNIT_EXPECT_EQ(test, job->seq, 2);
	c = vgpu_test_cmd(t, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->hdr.opcode), VGPU_CMD_LAUNCH);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->hdr.flags), VGPU_CMD_F_IRQ);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(c->code_va), 0x100000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->code_size), 64);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->entry), 16);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->grid[0]), 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->grid[1]), 3);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->grid[2]), 4);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->block[0]), 32);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->block[1]), 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->block[2]), 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->cluster[1]), 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->smem_bytes), 1024);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(c->param_va), 0x200000);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->param_size), 24);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->asid), 5);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(c->launch_flags), VGPU_LAUNCH_SANITIZE);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(c->seed), 7);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(c->budget), 1000);
	/* the next slot is untouched */
	KUNIT_EXPECT_EQ(test, q->ring[VGPU_CMD_BYTES], 0xa5);
}

/* ---- run_job: the ring, the TLB flush and the doorbell ---- */

static void vgpu_job_run_flushes_once(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *a = vgpu_test_job(test, 1), *b = vgpu_test_job(test, 2),
			*c = vgpu_test_job(test, 3);
	struct dma_fence *fa, *fb, *fc;
	struct vgpu_cmd_header *h;

	/* a mapping went away since the queue's last flush */
	atomic_set(&t->vdev->mmu_gen, 7);
	q->flushed_gen = 6;
	q->tail = VGPU_RING_ENTRIES - 1;
	q->emitted = 40;

	fa = vgpu_job_run(&a->base);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fa);
	/* TLB invalidate in the last slot, the launch wraps to slot 0 */
	h = vgpu_test_cmd(t, VGPU_RING_ENTRIES - 1);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(h->opcode), VGPU_CMD_TLB_INVALIDATE);
	h = vgpu_test_cmd(t, 0);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(h->opcode), VGPU_CMD_LAUNCH);
	KUNIT_EXPECT_EQ(test, a->slot, 0);
	KUNIT_EXPECT_EQ(test, a->seq, 42);
	KUNIT_EXPECT_EQ(test, q->flushed_gen, 7);
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_DOORBELL), 1);
	KUNIT_EXPECT_TRUE(test, a->on_device);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->as->active), 1);
	KUNIT_EXPECT_PTR_EQ(test, a->hw_fence, fa);
	KUNIT_EXPECT_EQ(test, fa->context, q->fence_context);
	KUNIT_EXPECT_EQ(test, fa->seqno, 1);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 1)->state, VGPU_JOB_RUNNING);
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&q->inflight, struct vgpu_job, link), a);

	/* same generation: no second flush */
	fb = vgpu_job_run(&b->base);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fb);
	KUNIT_EXPECT_EQ(test, b->slot, 1);
	KUNIT_EXPECT_EQ(test, b->seq, 43);
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_DOORBELL), 2);
	KUNIT_EXPECT_EQ(test, fb->seqno, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->as->active), 2);

	/* an unmap in between: flushed again before the next launch */
	atomic_inc(&t->vdev->mmu_gen);
	fc = vgpu_job_run(&c->base);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fc);
	h = vgpu_test_cmd(t, 2);
	KUNIT_EXPECT_EQ(test, le32_to_cpu(h->opcode), VGPU_CMD_TLB_INVALIDATE);
	KUNIT_EXPECT_EQ(test, c->slot, 3);
	KUNIT_EXPECT_EQ(test, c->seq, 45);
	KUNIT_EXPECT_EQ(test, q->flushed_gen, 8);
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_DOORBELL), 4);
	KUNIT_EXPECT_EQ(test, q->emitted, 45);

	/* in ring order on the in-flight list */
	KUNIT_EXPECT_PTR_EQ(test, list_last_entry(&q->inflight, struct vgpu_job, link), c);
	vgpu_test_job_done(a);
	vgpu_test_job_done(b);
	vgpu_test_job_done(c);
	dma_fence_put(fa);
	dma_fence_put(fb);
	dma_fence_put(fc);
}

/* Jobs that must not reach the ring. */
static void vgpu_job_run_not_run(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *guilty = vgpu_test_job(test, 1), *done = vgpu_test_job(test, 2),
			*late = vgpu_test_job(test, 3);
	struct dma_fence *f;

	q->tail = 10;
	/* guilty of a timeout (or cancelled): not run again */
	dma_fence_set_error(&guilty->base.s_fence->finished, -ETIMEDOUT);
	KUNIT_EXPECT_NULL(test, vgpu_job_run(&guilty->base));
	KUNIT_EXPECT_FALSE(test, guilty->on_device);

	/* resubmitted after a reset although it completed: its own fence again */
	vgpu_test_job_on_hw(t, done, 3, 3);
	list_del_init(&done->link);
	done->completed = true;
	dma_fence_signal(done->hw_fence);
	f = vgpu_job_run(&done->base);
	KUNIT_EXPECT_PTR_EQ(test, f, done->hw_fence);
	dma_fence_put(f);

	/* the device is gone */
	t->vdev->gone = true;
	f = vgpu_job_run(&late->base);
	KUNIT_EXPECT_EQ(test, PTR_ERR(f), -ENODEV);
	KUNIT_EXPECT_FALSE(test, late->on_device);

	KUNIT_EXPECT_EQ(test, q->tail, 10);
	KUNIT_EXPECT_EQ(test, q->emitted, 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_DOORBELL), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&q->inflight));
	KUNIT_EXPECT_EQ(test, atomic_read(&t->as->active), 0);
	vgpu_test_job_done(done);
}

/* ---- completion records -> errno, fence, history, GET_JOB ---- */

struct vgpu_status_case {
	const char *name;
	u32 status;
	u32 exc;
	int err;
};

#define ST(s, e, err) { #s " " #e, VGPU_ERR_##s, VGPU_EXC_##e, err }
static const struct vgpu_status_case vgpu_status_cases[] = {
	ST(NONE, NONE, 0),
	/* a stray exception code in a successful record changes nothing */
	ST(NONE, DEADLOCK, 0),
	ST(EXCEPTION, NONE, -EIO),
	ST(EXCEPTION, ILLEGAL_INSTR, -EIO),
	ST(EXCEPTION, BAR_COUNT_MISMATCH, -EIO),
	ST(EXCEPTION, BAR_MODE_CONFLICT, -EIO),
	ST(EXCEPTION, SMEM_RANGE, -EIO),
	ST(EXCEPTION, MISALIGNED, -EIO),
	ST(EXCEPTION, GLOBAL_FAULT, -EFAULT),
	ST(EXCEPTION, DEADLOCK, -EIO),
	ST(EXCEPTION, BUDGET, -EIO),
	ST(EXCEPTION, BAR_BAD_COUNT, -EIO),
	ST(EXCEPTION, PARAM_RANGE, -EIO),
	ST(EXCEPTION, PC_RANGE, -EIO),
	ST(EXCEPTION, BAD_LAUNCH, -EIO),
	ST(EXCEPTION, ABORTED, -EIO),
	ST(EXCEPTION, MBAR_UNINIT, -EIO),
	ST(EXCEPTION, MBAR_ACCESS, -EIO),
	ST(EXCEPTION, MBAR_REINIT, -EIO),
	ST(EXCEPTION, MBAR_RANGE, -EIO),
	ST(EXCEPTION, MBAR_OVERFLOW, -EIO),
	ST(EXCEPTION, MBAR_PHASE_ORDER, -EIO),
	ST(EXCEPTION, MBAR_NOCOMPLETE, -EIO),
	ST(EXCEPTION, MBAR_BAD_TOKEN, -EIO),
	ST(EXCEPTION, MBAR_REMOTE_WAIT, -EIO),
	ST(EXCEPTION, ASYNC_COPY, -EIO),
	ST(EXCEPTION, TENSOR_MAP, -EIO),
	ST(EXCEPTION, CLUSTER_RANGE, -EIO),
	ST(EXCEPTION, SEM_TIMEOUT, -EIO),
	ST(EXCEPTION, BAD_CONTEXT, -EIO),
	ST(EXCEPTION, STACK_OVERFLOW, -EIO),
	ST(EXCEPTION, BAD_RETURN, -EIO),
	ST(EXCEPTION, TRAP, -EIO),
	ST(EXCEPTION, ASSERT, -EIO),
	ST(EXCEPTION, DEVICE_LAUNCH, -EIO),
	ST(BAD_COMMAND, NONE, -EIO),
	ST(BAD_LAUNCH, BAD_LAUNCH, -EIO),
	ST(MMU_FAULT, GLOBAL_FAULT, -EFAULT),
	ST(MMU_FAULT, NONE, -EFAULT),
	ST(TIMEOUT, ABORTED, -ETIMEDOUT),
	ST(ABORTED, ABORTED, -ECANCELED),
	ST(BAD_RING, NONE, -EIO),
	ST(CPL_WRITE, NONE, -EIO),
	ST(BAD_REGISTER, NONE, -EIO),
	{ "unknown status 10", 10, VGPU_EXC_NONE, -EIO },
	{ "unknown status ~0", ~0u, VGPU_EXC_GLOBAL_FAULT, -EIO },
};
#undef ST

/* Every exception code of uapi/vgpu_hw.h has its EXCEPTION case above. */
#define VGPU_X_COUNT(name, val, str) + 1
static_assert(0 VGPU_EXC_CODES(VGPU_X_COUNT) == 33);
#undef VGPU_X_COUNT

static void vgpu_status_case_desc(const struct vgpu_status_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vgpu_status, vgpu_status_cases, vgpu_status_case_desc);

static void vgpu_job_status_errno(struct kunit *test)
{
	const struct vgpu_status_case *c = test->param_value;
	struct vgpu_exception_record *exc = vgpu_test_new(test, struct vgpu_exception_record);

	exc->code = cpu_to_le32(c->exc);
	KUNIT_EXPECT_EQ(test, vgpu_hw_status_errno(c->status, exc), c->err);
}

/*
 * The whole way of one completion record: the hardware fence's error, the
 * queue's counters, and what GET_JOB then reports, exception included.
 */
static void vgpu_job_completion_to_get_job(struct kunit *test)
{
	const struct vgpu_status_case *c = test->param_value;
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *job = vgpu_test_job(test, 77);
	struct drm_vgpu_get_job *g = vgpu_test_new(test, struct drm_vgpu_get_job);
	struct vgpu_completion *cpl;
	unsigned long flags;

	vgpu_test_job_on_hw(t, job, 9, 1000);
	cpl = vgpu_test_cpl(t, 9, c->status, 1000);
	cpl->warp_insns = cpu_to_le64(123456);
	cpl->elapsed_ns = cpu_to_le64(5000);
	cpl->exc.code = cpu_to_le32(c->exc);
	cpl->exc.pc = cpu_to_le32(0x40);
	strscpy(cpl->exc.msg, c->name, sizeof(cpl->exc.msg));

	spin_lock_irqsave(&q->lock, flags);
	vgpu_job_complete_locked(q, job, cpl);
	spin_unlock_irqrestore(&q->lock, flags);

	KUNIT_EXPECT_TRUE(test, job->completed);
	KUNIT_EXPECT_TRUE(test, list_empty(&q->inflight));
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(job->hw_fence));
	KUNIT_EXPECT_EQ(test, job->hw_fence->error, c->err);
	KUNIT_EXPECT_EQ(test, q->jobs_done, c->err ? 0 : 1);
	KUNIT_EXPECT_EQ(test, q->jobs_failed, c->err ? 1 : 0);
	/* a failed command goes to the device's exception log (debugfs) */
	KUNIT_EXPECT_EQ(test, t->vdev->exc_head, c->status != VGPU_ERR_NONE ? 1 : 0);

	g->job_id = 77;
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_get_job(NULL, g, t->file), 0);
	KUNIT_EXPECT_EQ(test, g->state, c->err ? VGPU_JOB_FAILED : VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, g->error, (u32)-c->err);
	KUNIT_EXPECT_EQ(test, g->hw_status, c->status);
	KUNIT_EXPECT_EQ(test, g->queue, VGPU_TEST_QUEUE);
	KUNIT_EXPECT_EQ(test, g->hw_queue, VGPU_TEST_QUEUE);
	KUNIT_EXPECT_EQ(test, g->warp_insns, 123456);
	KUNIT_EXPECT_EQ(test, g->elapsed_ns, 5000);
	/* the record is kept for any status but success */
	if (c->status == VGPU_ERR_NONE) {
		KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 77)->exc.code, VGPU_EXC_NONE);
	} else {
		KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 77)->exc.code, c->exc);
		KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 77)->exc.pc, 0x40);
		KUNIT_EXPECT_STREQ(test, vgpu_hist(t->vf, 77)->exc.msg, c->name);
		KUNIT_EXPECT_EQ(test, t->vdev->exc_log[0].hw_status, c->status);
		KUNIT_EXPECT_EQ(test, t->vdev->exc_log[0].exc.code, c->exc);
	}
	vgpu_test_job_done(job);
}

/*
 * The device's completed counter is 32 bits of a 64-bit sequence; it
 * wraps, and a job is done when the counter has reached its sequence
 * number.  A stopped queue is resumed.
 */
static void vgpu_job_process_counter_wraps(struct kunit *test)
{
	const u64 s = 0xfffffffeull;	/* seqs s+1, s+2, s+3 straddle 2^32 */
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *a = vgpu_test_job(test, 1), *b = vgpu_test_job(test, 2),
			*c = vgpu_test_job(test, 3);
	struct vgpu_completion *cpl;

	vgpu_test_job_on_hw(t, a, 254, s + 1);
	vgpu_test_job_on_hw(t, b, 255, s + 2);
	vgpu_test_job_on_hw(t, c, 0, s + 3);
	vgpu_test_cpl(t, 254, VGPU_ERR_NONE, s + 1)->warp_insns = cpu_to_le64(10);
	cpl = vgpu_test_cpl(t, 255, VGPU_ERR_EXCEPTION, s + 2);
	cpl->exc.code = cpu_to_le32(VGPU_EXC_GLOBAL_FAULT);
	cpl->exc.addr = cpu_to_le64(0xdead000);

	/* the counter read 0: it wrapped past s + 2 (0x1_0000_0000) */
	vgpu_test_set_qreg(t, VGPU_Q_COMPLETED_LO, (u32)(s + 2));
	vgpu_test_set_qreg(t, VGPU_Q_STATUS, VGPU_QSTAT_ENABLED | VGPU_QSTAT_STOPPED);
	vgpu_queue_process(q, true);

	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(a->hw_fence));
	KUNIT_EXPECT_EQ(test, a->hw_fence->error, 0);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(b->hw_fence));
	KUNIT_EXPECT_EQ(test, b->hw_fence->error, -EFAULT);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(c->hw_fence));
	KUNIT_EXPECT_PTR_EQ(test, list_first_entry(&q->inflight, struct vgpu_job, link), c);
	KUNIT_EXPECT_EQ(test, q->jobs_done, 1);
	KUNIT_EXPECT_EQ(test, q->jobs_failed, 1);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 1)->state, VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 1)->warp_insns, 10);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->error, EFAULT);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->exc.addr, 0xdead000);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 3)->state, VGPU_JOB_QUEUED);
	/* the stopped queue was resumed */
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_CONTROL),
			VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);

	/* nothing new: nothing happens, a running queue is left alone */
	vgpu_test_set_qreg(t, VGPU_Q_CONTROL, 0);
	vgpu_test_set_qreg(t, VGPU_Q_STATUS, VGPU_QSTAT_ENABLED);
	vgpu_queue_process(q, true);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(c->hw_fence));
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_CONTROL), 0);

	/* c's slot holds a record of an earlier lap: stale, -EIO */
	vgpu_test_cpl(t, 0, VGPU_ERR_NONE, s + 3 - VGPU_RING_ENTRIES);
	vgpu_test_set_qreg(t, VGPU_Q_COMPLETED_LO, (u32)(s + 3));
	vgpu_queue_process(q, true);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(c->hw_fence));
	KUNIT_EXPECT_EQ(test, c->hw_fence->error, -EIO);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 3)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 3)->error, EIO);
	KUNIT_EXPECT_TRUE(test, list_empty(&q->inflight));
	vgpu_test_job_done(a);
	vgpu_test_job_done(b);
	vgpu_test_job_done(c);
}

/*
 * After a reset the records, not the counter, say what ran: jobs up to
 * the first without its record complete with their own status; the rest
 * stay in flight to be cancelled and resubmitted.
 */
static void vgpu_job_harvest_after_reset(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *a = vgpu_test_job(test, 1), *b = vgpu_test_job(test, 2),
			*c = vgpu_test_job(test, 3);

	vgpu_test_job_on_hw(t, a, 0, 1);
	vgpu_test_job_on_hw(t, b, 1, 2);
	vgpu_test_job_on_hw(t, c, 2, 3);
	vgpu_test_cpl(t, 0, VGPU_ERR_NONE, 1);
	/* the counter never said so (a reset fell in between) */
	vgpu_test_set_qreg(t, VGPU_Q_COMPLETED_LO, 0);
	/* b was interrupted: its slot has nothing; c's has an old record */
	vgpu_test_cpl(t, 2, VGPU_ERR_NONE, 3 - VGPU_RING_ENTRIES);
	vgpu_queue_harvest(q);
	KUNIT_EXPECT_TRUE(test, a->completed);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 1)->state, VGPU_JOB_DONE);
	KUNIT_EXPECT_FALSE(test, b->completed);
	KUNIT_EXPECT_FALSE(test, c->completed);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(b->hw_fence));

	/* reset: the rest lose their hardware fences, to be run again */
	vgpu_queue_cancel_inflight(q, -ECANCELED, false);
	KUNIT_EXPECT_TRUE(test, list_empty(&q->inflight));
	KUNIT_EXPECT_EQ(test, b->hw_fence->error, -ECANCELED);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(c->hw_fence));
	KUNIT_EXPECT_EQ(test, b->base.s_fence->finished.error, 0);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->state, VGPU_JOB_QUEUED);
	vgpu_test_job_done(a);
	vgpu_test_job_done(b);
	vgpu_test_job_done(c);
}

/* The device goes away: the jobs end here, -ENODEV, status ABORTED. */
static void vgpu_job_cancel_final(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct vgpu_job *a = vgpu_test_job(test, 1);
	struct drm_vgpu_get_job *g = vgpu_test_new(test, struct drm_vgpu_get_job);

	vgpu_test_job_on_hw(t, a, 0, 1);
	vgpu_queue_cancel_inflight(q, -ENODEV, true);
	KUNIT_EXPECT_EQ(test, a->hw_fence->error, -ENODEV);
	KUNIT_EXPECT_EQ(test, a->base.s_fence->finished.error, -ENODEV);
	g->job_id = 1;
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_get_job(NULL, g, t->file), 0);
	KUNIT_EXPECT_EQ(test, g->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, g->error, ENODEV);
	KUNIT_EXPECT_EQ(test, g->hw_status, VGPU_ERR_ABORTED);
	/* no record: nothing in the device's exception log */
	KUNIT_EXPECT_EQ(test, t->vdev->exc_head, 0);
	vgpu_test_job_done(a);
}

static void vgpu_job_record_done(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	struct vgpu_job *job = vgpu_test_job(test, 5);
	struct vgpu_job_result *r;

	vgpu_job_set_running(job);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 5)->state, VGPU_JOB_RUNNING);
	cpl->warp_insns = cpu_to_le64(1234);
	cpl->elapsed_ns = cpu_to_le64(99);
	cpl->exc.code = cpu_to_le32(VGPU_EXC_DEADLOCK);	/* ignored: no error */
	vgpu_job_record(job, 0, VGPU_ERR_NONE, cpl);
	r = vgpu_hist(t->vf, 5);
	KUNIT_EXPECT_EQ(test, r->state, VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, r->error, 0);
	KUNIT_EXPECT_EQ(test, r->hw_status, VGPU_ERR_NONE);
	KUNIT_EXPECT_EQ(test, r->warp_insns, 1234);
	KUNIT_EXPECT_EQ(test, r->elapsed_ns, 99);
	KUNIT_EXPECT_EQ(test, r->exc.code, VGPU_EXC_NONE);
	KUNIT_EXPECT_EQ(test, t->vdev->exc_head, 0);
	/* a late RUNNING does not hide the outcome */
	vgpu_job_set_running(job);
	KUNIT_EXPECT_EQ(test, r->state, VGPU_JOB_DONE);
}

static void vgpu_job_record_exception(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	struct vgpu_job *job = vgpu_test_job(test, 7);
	struct vgpu_job_result *r;
	struct vgpu_exc_log *l;

	cpl->exc.code = cpu_to_le32(VGPU_EXC_GLOBAL_FAULT);
	cpl->exc.pc = cpu_to_le32(0x1d0);
	cpl->exc.addr = cpu_to_le64(0x101000);
	strscpy(cpl->exc.msg, "global memory fault", sizeof(cpl->exc.msg));
	vgpu_job_record(job, -EFAULT, VGPU_ERR_EXCEPTION, cpl);
	r = vgpu_hist(t->vf, 7);
	KUNIT_EXPECT_EQ(test, r->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, r->error, EFAULT);
	KUNIT_EXPECT_EQ(test, r->hw_status, VGPU_ERR_EXCEPTION);
	KUNIT_EXPECT_EQ(test, r->exc.code, VGPU_EXC_GLOBAL_FAULT);
	KUNIT_EXPECT_EQ(test, r->exc.addr, 0x101000);
	/* the device's exception log (debugfs) has it, with the client */
	KUNIT_EXPECT_EQ(test, t->vdev->exc_head, 1);
	l = &t->vdev->exc_log[0];
	KUNIT_EXPECT_EQ(test, l->client_id, 42);
	KUNIT_EXPECT_EQ(test, l->job_id, 7);
	KUNIT_EXPECT_EQ(test, l->queue, 0);
	KUNIT_EXPECT_EQ(test, l->hw_queue, VGPU_TEST_QUEUE);
	KUNIT_EXPECT_EQ(test, l->hw_status, VGPU_ERR_EXCEPTION);
	KUNIT_EXPECT_EQ(test, l->exc.pc, 0x1d0);
	KUNIT_EXPECT_STREQ(test, l->exc.msg, "global memory fault");
}

static void vgpu_job_exception_log_wraps(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	u64 id;

	cpl->exc.code = cpu_to_le32(VGPU_EXC_DEADLOCK);
	for (id = 1; id <= VGPU_EXC_LOG + 3; id++)
		vgpu_job_record(vgpu_test_job(test, id), -EIO, VGPU_ERR_EXCEPTION, cpl);
	KUNIT_EXPECT_EQ(test, t->vdev->exc_head, VGPU_EXC_LOG + 3);
	/* the oldest entries were overwritten by the newest */
	KUNIT_EXPECT_EQ(test, t->vdev->exc_log[0].job_id, VGPU_EXC_LOG + 1);
	KUNIT_EXPECT_EQ(test, t->vdev->exc_log[2].job_id, VGPU_EXC_LOG + 3);
	KUNIT_EXPECT_EQ(test, t->vdev->exc_log[3].job_id, 4);
}

/* Without a completion record (timeout, cancel): state and error only. */
static void vgpu_job_record_no_completion(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_job *job = vgpu_test_job(test, 9);

	vgpu_job_record(job, -ETIMEDOUT, VGPU_ERR_TIMEOUT, NULL);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 9)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 9)->error, ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 9)->hw_status, VGPU_ERR_TIMEOUT);
	KUNIT_EXPECT_EQ(test, t->vdev->exc_head, 0);
}

/* A record for a job the history no longer holds is dropped. */
static void vgpu_job_record_after_history(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_job *old = vgpu_test_job(test, 3);

	vgpu_test_job(test, 3 + VGPU_JOB_HISTORY);
	vgpu_job_record(old, -EIO, VGPU_ERR_ABORTED, NULL);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 3)->id, 3 + VGPU_JOB_HISTORY);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 3)->state, VGPU_JOB_QUEUED);
}

static struct kunit_case vgpu_job_cases[] = {
	KUNIT_CASE(vgpu_job_ring_wraps),
	KUNIT_CASE(vgpu_job_ring_space),
	KUNIT_CASE(vgpu_job_emit_commands),
	KUNIT_CASE(vgpu_job_run_flushes_once),
	KUNIT_CASE(vgpu_job_run_not_run),
	KUNIT_CASE_PARAM(vgpu_job_status_errno, vgpu_status_gen_params),
	KUNIT_CASE_PARAM(vgpu_job_completion_to_get_job, vgpu_status_gen_params),
	KUNIT_CASE(vgpu_job_process_counter_wraps),
	KUNIT_CASE(vgpu_job_harvest_after_reset),
	KUNIT_CASE(vgpu_job_cancel_final),
	KUNIT_CASE(vgpu_job_record_done),
	KUNIT_CASE(vgpu_job_record_exception),
	KUNIT_CASE(vgpu_job_exception_log_wraps),
	KUNIT_CASE(vgpu_job_record_no_completion),
	KUNIT_CASE(vgpu_job_record_after_history),
	{}
};

static struct kunit_suite vgpu_job_suite = {
	.name = "vgpu_job",
	.init = vgpu_job_test_init,
	.test_cases = vgpu_job_cases,
};

kunit_test_suite(vgpu_job_suite);
