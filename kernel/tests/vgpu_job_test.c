// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the job path (vgpu_job.c, which includes this file at its end so
 * that its static functions are reachable, as xe does; SUBMIT's checks
 * from vgpu_submit.c through vgpu_job.h), on a fake device
 * whose register BAR is plain memory: ring slots and wrap-around, the
 * commands run_job writes and the doorbell it rings, completion records
 * -> fence errors and job history (every status and exception code), the
 * completed counter's 32-bit wrap, harvesting after a reset, GET_JOB's
 * answers and its copy of the exception record, and SUBMIT's argument
 * rules (uapi/vgpu_drm.h), user pointers included.
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
	t->vdev->nqueues = 4;
	t->vdev->max_code = 1 << 16;
	t->vdev->max_param = 4096;

	t->as->vdev = t->vdev;
	t->as->asid = 5;
	kref_init(&t->as->refcount);
	spin_lock_init(&t->as->deferred_lock);
	INIT_LIST_HEAD(&t->as->deferred);

	t->vf->vdev = t->vdev;
	t->vf->as = t->as;
	t->vf->client_id = 42;
	kref_init(&t->vf->refcount);
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
static_assert(0 VGPU_EXC_CODES(VGPU_X_COUNT) == 28);
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
	vgpu_queue_process(q);

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
	vgpu_queue_process(q);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(c->hw_fence));
	KUNIT_EXPECT_EQ(test, vgpu_test_qreg(t, VGPU_Q_CONTROL), 0);

	/* c's slot holds a record of an earlier lap: stale, -EIO */
	vgpu_test_cpl(t, 0, VGPU_ERR_NONE, s + 3 - VGPU_RING_ENTRIES);
	vgpu_test_set_qreg(t, VGPU_Q_COMPLETED_LO, (u32)(s + 3));
	vgpu_queue_process(q);
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

/* ---- GET_JOB ---- */

static void vgpu_job_get_job_ids(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	struct drm_vgpu_get_job g = {};

	cpl->warp_insns = cpu_to_le64(77);
	vgpu_job_record(vgpu_test_job(test, 11), 0, VGPU_ERR_NONE, cpl);

	g.job_id = 11;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), 0);
	KUNIT_EXPECT_EQ(test, g.state, VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, g.queue, VGPU_TEST_QUEUE);
	KUNIT_EXPECT_EQ(test, g.warp_insns, 77);
	/* id 0, an id never submitted, an id the history has dropped */
	g = (struct drm_vgpu_get_job){ .job_id = 0 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	g = (struct drm_vgpu_get_job){ .job_id = 12 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	vgpu_test_job(test, 11 + VGPU_JOB_HISTORY);
	g = (struct drm_vgpu_get_job){ .job_id = 11 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	g = (struct drm_vgpu_get_job){ .job_id = 11 + VGPU_JOB_HISTORY };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), 0);
	KUNIT_EXPECT_EQ(test, g.state, VGPU_JOB_QUEUED);
	KUNIT_EXPECT_EQ(test, g.error, 0);
	/* pad: -EINVAL, before the id is looked at */
	g = (struct drm_vgpu_get_job){ .job_id = 11 + VGPU_JOB_HISTORY, .pad = 1 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EINVAL);
	g = (struct drm_vgpu_get_job){ .job_id = 12, .pad = 1u << 31 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EINVAL);
}

/* User memory in the test's own mm, filled with 0xee. */
static void __user *vgpu_test_umem(struct kunit *test, size_t size)
{
	unsigned long addr = kunit_vm_mmap(test, NULL, 0, size, PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	void __user *u = (void __user *)addr;
	u8 *fill;

	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user mm");
	KUNIT_ASSERT_LT(test, addr, (unsigned long)TASK_SIZE);
	fill = kunit_kmalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fill);
	memset(fill, 0xee, size);
	KUNIT_ASSERT_EQ(test, copy_to_user(u, fill, size), 0);
	return u;
}

/*
 * The end of a page of user memory (filled with 0xee) that no mapping
 * follows: an access running past it faults.
 */
static void __user *vgpu_test_umem_edge(struct kunit *test)
{
	void __user *u = vgpu_test_umem(test, 2 * PAGE_SIZE);

	KUNIT_ASSERT_EQ(test, vm_munmap((unsigned long)u + PAGE_SIZE, PAGE_SIZE), 0);
	return u + PAGE_SIZE;
}

/*
 * The exception record: min(exception_size, sizeof record) bytes are
 * written, nothing after them; an unwritable pointer is -EFAULT.
 */
static void vgpu_job_get_job_exception_copy(struct kunit *test)
{
	static const u32 sizes[] = { 0, 1, 8, 295, 296, 297, 4096 };
	const size_t rec = sizeof(struct vgpu_exception_record);
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	struct drm_vgpu_get_job g;
	u8 *back = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	void __user *u;
	unsigned int i, k;

	KUNIT_ASSERT_NOT_NULL(test, back);
	KUNIT_ASSERT_EQ(test, rec, 296);
	cpl->exc.code = cpu_to_le32(VGPU_EXC_BAR_COUNT_MISMATCH);
	for (k = 0; k < sizeof(cpl->exc.msg) - 1; k++)
		cpl->exc.msg[k] = 'a' + k % 26;
	vgpu_job_record(vgpu_test_job(test, 4), -EIO, VGPU_ERR_EXCEPTION, cpl);

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = min_t(size_t, sizes[i], rec);

		u = vgpu_test_umem(test, PAGE_SIZE);
		g = (struct drm_vgpu_get_job){ .job_id = 4, .exception = (u64)(uintptr_t)u,
					       .exception_size = sizes[i] };
		KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), 0);
		KUNIT_EXPECT_EQ(test, g.state, VGPU_JOB_FAILED);
		KUNIT_ASSERT_EQ(test, copy_from_user(back, u, PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(back, &cpl->exc, n), 0, "size %u", sizes[i]);
		KUNIT_EXPECT_NULL_MSG(test, memchr_inv(back + n, 0xee, PAGE_SIZE - n),
				      "size %u: bytes written past %zu", sizes[i], n);
	}
	/* an address that is not mapped, a kernel address */
	g = (struct drm_vgpu_get_job){ .job_id = 4, .exception = 16, .exception_size = 296 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EFAULT);
	g = (struct drm_vgpu_get_job){ .job_id = 4, .exception = (u64)(uintptr_t)back,
				       .exception_size = 296 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EFAULT);
	/* an unknown job: -ENOENT, and nothing is written */
	u = vgpu_test_umem(test, PAGE_SIZE);
	g = (struct drm_vgpu_get_job){ .job_id = 5, .exception = (u64)(uintptr_t)u,
				       .exception_size = 296 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	KUNIT_ASSERT_EQ(test, copy_from_user(back, u, PAGE_SIZE), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(back, 0xee, PAGE_SIZE));
}

/* ---- SUBMIT's arguments ---- */

static struct drm_vgpu_submit vgpu_test_submit_ok(void)
{
	return (struct drm_vgpu_submit){
		.launch = {
			.code_va = 0x100000, .code_size = 32,
			.grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .cluster = { 1, 1, 1 },
			.param_size = 8,
		},
		.bo_handle_count = VGPU_SUBMIT_MAX_BOS,
		.in_sync_count = VGPU_SUBMIT_MAX_SYNCS,
		.out_sync_count = VGPU_SUBMIT_MAX_SYNCS,
		.queue = 3,
	};
}

static void vgpu_job_submit_check(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_device *vdev = t->vdev;
	struct drm_vgpu_submit s = vgpu_test_submit_ok();
	int i;

	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), 0);
#define BAD(errno_, field, value)						\
	do {									\
		s = vgpu_test_submit_ok();					\
		s.field = value;						\
		KUNIT_EXPECT_EQ_MSG(test, vgpu_submit_check(vdev, &s), errno_,	\
				    #field " = " #value);			\
		/* the handler applies it before anything else */		\
		KUNIT_EXPECT_EQ_MSG(test, vgpu_ioctl_submit(&vdev->drm, &s, t->file), \
				    errno_, "ioctl: " #field " = " #value);	\
	} while (0)
	BAD(-EINVAL, flags, 1);
	BAD(-EINVAL, flags, 1u << 31);
	BAD(-EINVAL, pad, 1);
	BAD(-EINVAL, pad, 1u << 31);
	BAD(-E2BIG, bo_handle_count, VGPU_SUBMIT_MAX_BOS + 1);
	BAD(-E2BIG, bo_handle_count, ~0u);
	BAD(-E2BIG, in_sync_count, VGPU_SUBMIT_MAX_SYNCS + 1);
	BAD(-E2BIG, out_sync_count, VGPU_SUBMIT_MAX_SYNCS + 1);
	BAD(-EINVAL, launch.launch_flags, ~VGPU_LAUNCH_FLAGS_MASK);
	BAD(-EINVAL, launch.launch_flags, 1u << 3);
	BAD(-EINVAL, launch.code_size, 0);
	BAD(-EINVAL, launch.code_size, 24);
	BAD(-EINVAL, launch.code_size, 8);
	BAD(-EINVAL, launch.code_va, 0x100008);
	BAD(-EINVAL, launch.code_va, 0x100001);
	BAD(-EINVAL, launch.code_size, (1 << 16) + 16);
	BAD(-EINVAL, launch.param_size, 4097);
	for (i = 0; i < 3; i++) {
		BAD(-EINVAL, launch.grid[i], 0);
		BAD(-EINVAL, launch.block[i], 0);
	}
	/* -EINVAL for flags or pad comes before -E2BIG for the counts */
	s = vgpu_test_submit_ok();
	s.pad = 1;
	s.bo_handle_count = ~0u;
	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), -EINVAL);
#undef BAD
	/* the limits themselves are allowed; cluster 0 counts as 1 */
	s = vgpu_test_submit_ok();
	s.queue = 0;
	s.launch.code_size = 1 << 16;
	s.launch.param_size = 4096;
	s.launch.launch_flags = VGPU_LAUNCH_FLAGS_MASK;
	s.launch.cluster[0] = s.launch.cluster[1] = s.launch.cluster[2] = 0;
	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), 0);
	s.launch.code_size = 16;
	s.launch.param_size = 0;
	s.bo_handle_count = s.in_sync_count = s.out_sync_count = 0;
	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), 0);
}

/*
 * Extensions: the timeline extension goes with VGPU_LAUNCH_TIMELINE (both
 * or neither) and is checked as the uAPI says; an unknown name, a name
 * given twice or a non-zero pad is -EINVAL; unreadable is -EFAULT.
 */
static void vgpu_job_submit_extensions(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct drm_vgpu_extension e = { .name = 0 };
	struct drm_vgpu_ext_timeline tl = {
		.base.name = VGPU_SUBMIT_EXT_TIMELINE, .va = 0x200000, .size = 4096,
	}, got;
	struct drm_vgpu_submit s = vgpu_test_submit_ok();
	struct drm_vgpu_launch l = s.launch, lt = s.launch;
	void __user *u = vgpu_test_umem(test, PAGE_SIZE);
	void __user *edge = vgpu_test_umem_edge(test);
	u64 uu = (u64)(uintptr_t)u;

	lt.launch_flags = VGPU_LAUNCH_TIMELINE;
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(0, &l, &got), 0);
	KUNIT_EXPECT_EQ(test, got.size, 0);
	/* the flag without the extension */
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(0, &lt, &got), -EINVAL);
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &e, sizeof(e)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, &got), -EINVAL);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(16, &l, &got), -EFAULT);
	/* the header's last 8 bytes past the mapping */
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 8, &l, &got), -EFAULT);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 16, &l, &got), -EINVAL);

	/* the timeline: accepted with the flag, refused without */
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, &got), 0);
	KUNIT_EXPECT_EQ(test, got.va, 0x200000);
	KUNIT_EXPECT_EQ(test, got.size, 4096);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, &got), -EINVAL);
	/* its body past the mapping */
	KUNIT_ASSERT_EQ(test, copy_to_user(edge - 16, &tl, 16), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 16, &lt, &got), -EFAULT);
	/* sizes and alignment */
	{
		static const struct { u64 va, size; } bad[] = {
			{ 0x200004, 4096 }, { 0x200000, 4092 }, { 0x200000, 24 },
			{ 0x200000, 0 }, { 0x200000, VGPU_TRACE_MAX_BYTES + 8ull },
		};

		for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
			struct drm_vgpu_ext_timeline b = tl;

			b.va = bad[i].va;
			b.size = bad[i].size;
			KUNIT_ASSERT_EQ(test, copy_to_user(u, &b, sizeof(b)), 0);
			KUNIT_EXPECT_EQ_MSG(test, vgpu_submit_extensions(uu, &lt, &got),
					    -EINVAL, "case %u", i);
		}
		tl.size = 32; /* just the header: allowed */
		KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
		KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, &got), 0);
		tl.size = VGPU_TRACE_MAX_BYTES;
		KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
		KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, &got), 0);
	}
	/* pad, and the same name twice (the chain points at itself) */
	tl.base.pad = 1;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, &got), -EINVAL);
	tl.base.pad = 0;
	tl.base.next = uu;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, &got), -EINVAL);

	/* in the handler: checked after the arguments, before the device */
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &e, sizeof(e)), 0);
	s.extensions = uu;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_submit(&t->vdev->drm, &s, t->file), -EINVAL);
	s.extensions = 16;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_submit(&t->vdev->drm, &s, t->file), -EFAULT);
	s.pad = 1;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_submit(&t->vdev->drm, &s, t->file), -EINVAL);
}

/* BO handles: -ENOENT for one the file does not hold, -EFAULT unreadable. */
static void vgpu_job_submit_bo_handles(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct drm_vgpu_submit s = {};
	struct vgpu_job *job = vgpu_test_job(test, 1);
	static const u32 handles[] = { 1, 2, 3 };
	void __user *u = vgpu_test_umem(test, PAGE_SIZE);
	void __user *edge = vgpu_test_umem_edge(test);

	KUNIT_ASSERT_EQ(test, copy_to_user(u, handles, sizeof(handles)), 0);
	/* none */
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), 0);
	KUNIT_EXPECT_NULL(test, job->bos);
	s.bo_handles = (u64)(uintptr_t)u;
	s.bo_handle_count = ARRAY_SIZE(handles);
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), -ENOENT);
	kvfree(job->bos);
	job->bos = NULL;
	s.bo_handles = 16;
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), -EFAULT);
	kvfree(job->bos);
	job->bos = NULL;
	/* the array runs past the mapping */
	s.bo_handles = (u64)(uintptr_t)edge - 4;
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), -EFAULT);
	kvfree(job->bos);
	job->bos = NULL;
}

/* Syncobjs: pad -EINVAL, unknown handle -ENOENT, unreadable -EFAULT. */
static void vgpu_job_submit_syncs(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_job *job = vgpu_test_job(test, 1);
	struct drm_vgpu_sync pad[2] = { { .handle = 1, .pad = 1 } };
	struct drm_vgpu_sync unknown[2] = { { .handle = 1 }, { .handle = 2 } };
	struct drm_vgpu_sync timeline[1] = { { .handle = 1, .point = 5 } };
	void __user *upad = vgpu_test_umem(test, PAGE_SIZE);
	void __user *uunknown = vgpu_test_umem(test, PAGE_SIZE);
	void __user *utimeline = vgpu_test_umem(test, PAGE_SIZE);
	struct vgpu_out_sync *out;
	u64 p;

	KUNIT_ASSERT_EQ(test, copy_to_user(upad, pad, sizeof(pad)), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(uunknown, unknown, sizeof(unknown)), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(utimeline, timeline, sizeof(timeline)), 0);

	/* none */
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, 0, 0, &out), 0);
	KUNIT_EXPECT_NULL(test, out);

	p = (u64)(uintptr_t)upad;
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, p, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, p, 2, &out), -EINVAL);
	vgpu_out_syncs_put(out, 2);
	p = (u64)(uintptr_t)uunknown;
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, p, 2), -ENOENT);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, p, 2, &out), -ENOENT);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_NULL(test, out[0].syncobj);
	vgpu_out_syncs_put(out, 2);
	p = (u64)(uintptr_t)utimeline;
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, p, 1), -ENOENT);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, p, 1, &out), -ENOENT);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_NULL(test, out[0].chain);
	vgpu_out_syncs_put(out, 1);
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, 16, 1), -EFAULT);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, 16, 1, &out), -EFAULT);
	vgpu_out_syncs_put(out, 1);
}

/* ---- the real scheduler: credits and the ring under load ---- */

/*
 * vgpu_sched_init() on a fake device (a KUnit device for DMA, registers in
 * memory), an open file's entities from vgpu_file_sched_init(), jobs pushed
 * the way vgpu_submit() pushes them, completed by writing their records and
 * the completed counter as the device does, and torn down the way
 * vgpu_remove() does.  One queue.
 */
struct vgpu_sched_test {
	struct vgpu_device *vdev;
	struct vgpu_file *vf;
	struct vgpu_queue *q;
	u64 dma_mask;
	bool mmu_up, sched_up;
};

static int vgpu_sched_test_init(struct kunit *test)
{
	struct vgpu_sched_test *t = vgpu_test_new(test, struct vgpu_sched_test);
	struct vgpu_device *vdev;
	struct device *dev;
	unsigned int timeout_ms = vgpu_timeout_ms;
	u8 *bar;
	int ret;

	test->priv = t;
	dev = kunit_device_register(test, "vgpu-sched-test");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	t->dma_mask = DMA_BIT_MASK(52);
	dev->dma_mask = &t->dma_mask;
	dev->coherent_dma_mask = DMA_BIT_MASK(52);
	bar = kunit_kzalloc(test, VGPU_BAR0_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, bar);
	vdev = t->vdev = vgpu_test_new(test, struct vgpu_device);
	vdev->drm.dev = dev;
	vdev->mmio = (void __force __iomem *)bar;
	vdev->nqueues = 1;
	vdev->as_max = 4;
	mutex_init(&vdev->reset_lock);
	mutex_init(&vdev->files_lock);
	spin_lock_init(&vdev->exc_lock);
	INIT_LIST_HEAD(&vdev->files);
	t->q = &vdev->queues[0];

	KUNIT_ASSERT_EQ(test, vgpu_mmu_init(vdev), 0);
	t->mmu_up = true;
	/* No timeout handler may run: nothing here hangs, it waits for the test. */
	vgpu_timeout_ms = 3600 * 1000;
	ret = vgpu_sched_init(vdev);
	vgpu_timeout_ms = timeout_ms;
	KUNIT_ASSERT_EQ(test, ret, 0);
	t->sched_up = true;

	/* as vgpu_open() */
	t->vf = kzalloc(sizeof(*t->vf), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vf);
	t->vf->vdev = vdev;
	kref_init(&t->vf->refcount);
	spin_lock_init(&t->vf->hist_lock);
	t->vf->client_id = 7;
	vgpu_file_vms_init(t->vf);
	KUNIT_ASSERT_EQ(test, vgpu_hist_alloc(t->vf), 0);
	t->vf->as = vgpu_as_create(vdev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->vf->as);
	KUNIT_ASSERT_EQ(test, vgpu_file_sched_init(vdev, t->vf), 0);
	mutex_lock(&vdev->files_lock);
	list_add_tail(&t->vf->link, &vdev->files);
	mutex_unlock(&vdev->files_lock);
	return 0;
}

/* Until only the test holds @vf: every job has been freed. */
static bool vgpu_sched_test_jobs_freed(struct vgpu_sched_test *t)
{
	int i;

	for (i = 0; i < 2000 && kref_read(&t->vf->refcount) > 1; i++)
		msleep(10);
	return kref_read(&t->vf->refcount) == 1;
}

static void vgpu_sched_test_exit(struct kunit *test)
{
	struct vgpu_sched_test *t = test->priv;
	struct vgpu_device *vdev = t ? t->vdev : NULL;
	bool freed = true;

	if (!vdev)
		return;
	if (t->sched_up) {
		/* as vgpu_remove(): what is left fails, the entities go */
		vgpu_jobs_fail_all(vdev, -ENODEV);
		vgpu_files_sched_fini(vdev);
		vgpu_sched_fini(vdev);
	}
	if (t->vf) {
		freed = vgpu_sched_test_jobs_freed(t);
		if (!IS_ERR_OR_NULL(t->vf->as))
			vgpu_as_put(t->vf->as);
		vgpu_file_queues_free(t->vf);
		vgpu_file_put(t->vf);
	}
	/* a job still alive would put its AS into a freed table: leak instead */
	if (t->mmu_up && freed)
		vgpu_mmu_fini(vdev);
}

/* Queue a job on queue 0 as vgpu_submit() does; its finished fence. */
static struct dma_fence *vgpu_sched_test_push(struct kunit *test,
					      struct vgpu_sched_test *t)
{
	struct vgpu_file *vf = t->vf;
	struct vgpu_job_result *r;
	struct dma_fence *done;
	struct vgpu_job *job;
	unsigned long flags;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, job);
	job->vdev = t->vdev;
	job->queue = 0;
	job->launch = (struct drm_vgpu_launch){
		.code_va = VGPU_VA_START, .code_size = 16,
		.grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
	};
	INIT_LIST_HEAD(&job->link);
	job->xq = vgpu_xqueue_lookup(vf, VGPU_QUEUE_DEFAULT);
	KUNIT_ASSERT_NOT_NULL(test, job->xq);
	KUNIT_ASSERT_EQ(test, drm_sched_job_init(&job->base, &job->xq->entity,
						 VGPU_JOB_CREDITS, vf, vf->client_id), 0);
	kref_get(&vf->refcount);
	job->vf = vf;
	job->as = vgpu_as_get(vf->as);
	job->id = atomic64_inc_return(&vf->next_job_id);
	spin_lock_irqsave(&vf->hist_lock, flags);
	r = vgpu_hist(vf, job->id);
	memset(r, 0, sizeof(*r));
	r->id = job->id;
	r->state = VGPU_JOB_QUEUED;
	spin_unlock_irqrestore(&vf->hist_lock, flags);
	drm_sched_job_arm(&job->base);
	done = dma_fence_get(&job->base.s_fence->finished);
	drm_sched_entity_push_job(&job->base);
	return done;
}

static u32 vgpu_sched_test_inflight(struct vgpu_queue *q)
{
	struct vgpu_job *job;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry(job, &q->inflight, link)
		n++;
	spin_unlock_irqrestore(&q->lock, flags);
	return n;
}

/* Until @want jobs are on the hardware (or 20 s); how many are. */
static u32 vgpu_sched_test_wait_inflight(struct vgpu_queue *q, u32 want)
{
	u32 n = 0;
	int i;

	for (i = 0; i < 2000; i++) {
		n = vgpu_sched_test_inflight(q);
		if (n >= want)
			break;
		msleep(10);
	}
	return n;
}

/*
 * The device completes the first @max jobs on the hardware (in ring
 * order), job @fail_id with an exception.  Checks what the ring holds on
 * the way: each job in the slot its sequence number names, and the newest
 * command less than a ring ahead of the oldest one not completed.
 */
static u32 vgpu_sched_test_complete(struct kunit *test, struct vgpu_sched_test *t,
				    u32 max, u64 fail_id)
{
	struct vgpu_queue *q = t->q;
	u32 *slots = kunit_kcalloc(test, VGPU_RING_ENTRIES, sizeof(u32), GFP_KERNEL);
	u64 *seqs = kunit_kcalloc(test, VGPU_RING_ENTRIES, sizeof(u64), GFP_KERNEL);
	struct vgpu_job *job;
	unsigned long flags;
	u64 emitted;
	u32 n = 0, i;

	KUNIT_ASSERT_NOT_NULL(test, slots);
	KUNIT_ASSERT_NOT_NULL(test, seqs);
	spin_lock_irqsave(&q->lock, flags);
	emitted = q->emitted;
	list_for_each_entry(job, &q->inflight, link) {
		struct vgpu_completion *cpl = &q->cpl[job->slot];

		if (n == max || n == VGPU_RING_ENTRIES)
			break;
		memset(cpl, 0, sizeof(*cpl));
		cpl->seq = cpu_to_le64(job->seq);
		cpl->warp_insns = cpu_to_le64(job->id);
		if (job->id == fail_id) {
			cpl->status = cpu_to_le32(VGPU_ERR_EXCEPTION);
			cpl->exc.code = cpu_to_le32(VGPU_EXC_DEADLOCK);
		}
		slots[n] = job->slot;
		seqs[n++] = job->seq;
	}
	spin_unlock_irqrestore(&q->lock, flags);

	KUNIT_EXPECT_LE(test, n, VGPU_JOBS_IN_FLIGHT);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, slots[i], (seqs[i] - 1) % VGPU_RING_ENTRIES);
		if (i)
			KUNIT_EXPECT_GT(test, seqs[i], seqs[i - 1]);
	}
	if (n) {
		KUNIT_EXPECT_LT(test, emitted - (seqs[0] - 1), VGPU_RING_ENTRIES);
		writel(lower_32_bits(seqs[n - 1]),
		       t->vdev->mmio + VGPU_REG_QUEUE(0) + VGPU_Q_COMPLETED_LO);
		vgpu_queue_process(q);
	}
	return n;
}

static void vgpu_sched_put_fences(struct dma_fence **f, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		dma_fence_put(f[i]);
}

/*
 * At most VGPU_JOBS_IN_FLIGHT jobs of a queue are on the hardware; each
 * completion lets one more through.
 */
static void vgpu_sched_credits(struct kunit *test)
{
	const u32 jobs = VGPU_JOBS_IN_FLIGHT + 36;
	struct vgpu_sched_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct dma_fence **done = kunit_kcalloc(test, jobs, sizeof(*done), GFP_KERNEL);
	u32 i, n, left;

	KUNIT_ASSERT_NOT_NULL(test, done);
	KUNIT_EXPECT_EQ(test, q->sched.credit_limit,
			VGPU_JOBS_IN_FLIGHT * VGPU_JOB_CREDITS);
	for (i = 0; i < jobs; i++)
		done[i] = vgpu_sched_test_push(test, t);

	KUNIT_EXPECT_EQ(test, vgpu_sched_test_wait_inflight(q, VGPU_JOBS_IN_FLIGHT),
			VGPU_JOBS_IN_FLIGHT);
	msleep(200);	/* and no more come */
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_inflight(q), VGPU_JOBS_IN_FLIGHT);
	/* the first launch after the queue's set-up flushes the TLB */
	KUNIT_EXPECT_EQ(test, q->emitted, VGPU_JOBS_IN_FLIGHT + 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_cmd_opcode(q, 0), VGPU_CMD_TLB_INVALIDATE);
	KUNIT_EXPECT_EQ(test, vgpu_test_cmd_opcode(q, 1), VGPU_CMD_LAUNCH);
	KUNIT_EXPECT_EQ(test, readl(t->vdev->mmio + VGPU_REG_QUEUE(0) + VGPU_Q_DOORBELL),
			q->tail);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 1)->state, VGPU_JOB_RUNNING);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->state, VGPU_JOB_QUEUED);

	/* ten complete: ten more go */
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_complete(test, t, 10, 0), 10);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_wait_inflight(q, VGPU_JOBS_IN_FLIGHT),
			VGPU_JOBS_IN_FLIGHT);
	msleep(200);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_inflight(q), VGPU_JOBS_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, q->emitted, VGPU_JOBS_IN_FLIGHT + 11);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(done[10]));

	/* the rest */
	for (left = jobs - 10; left; left -= n) {
		n = vgpu_sched_test_wait_inflight(q, min(left, VGPU_JOBS_IN_FLIGHT));
		KUNIT_ASSERT_EQ(test, n, min(left, VGPU_JOBS_IN_FLIGHT));
		KUNIT_ASSERT_EQ(test, vgpu_sched_test_complete(test, t, ~0u, 0), n);
	}
	for (i = 0; i < jobs; i++) {
		KUNIT_EXPECT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
		KUNIT_EXPECT_EQ(test, done[i]->error, 0);
	}
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->state, VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->warp_insns, jobs);
	KUNIT_EXPECT_EQ(test, q->jobs_done, jobs);
	/* every job freed: its file, AS and device references dropped */
	KUNIT_EXPECT_TRUE(test, vgpu_sched_test_jobs_freed(t));
	KUNIT_EXPECT_EQ(test, kref_read(&t->vf->as->refcount), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vf->as->active), 0);
	vgpu_sched_put_fences(done, jobs);
}

/*
 * Many more jobs than ring slots: the ring wraps several times, never
 * overwriting a command not completed; one failed job's fence carries
 * -EIO, the others none.
 */
static void vgpu_sched_ring_wraps(struct kunit *test)
{
	/* the failed job among the last VGPU_JOB_HISTORY: GET_JOB knows it */
	const u32 jobs = 3 * VGPU_RING_ENTRIES + 17, fail = jobs - 50;
	struct vgpu_sched_test *t = test->priv;
	struct vgpu_queue *q = t->q;
	struct dma_fence **done = kunit_kcalloc(test, jobs, sizeof(*done), GFP_KERNEL);
	u32 i, n, left, rounds = 0;

	KUNIT_ASSERT_NOT_NULL(test, done);
	for (i = 0; i < jobs; i++)
		done[i] = vgpu_sched_test_push(test, t);
	for (left = jobs; left; left -= n, rounds++) {
		/* a mapping goes away now and then: a flush joins the ring */
		if (rounds % 3 == 1)
			atomic_inc(&t->vdev->mmu_gen);
		n = vgpu_sched_test_wait_inflight(q, min(left, VGPU_JOBS_IN_FLIGHT));
		KUNIT_ASSERT_EQ(test, n, min(left, VGPU_JOBS_IN_FLIGHT));
		/* in uneven bites, so that the ring's end falls anywhere */
		n = vgpu_sched_test_complete(test, t, 13 + rounds % 40, fail);
		KUNIT_ASSERT_GT(test, n, 0);
	}
	KUNIT_EXPECT_GT(test, q->emitted, 3 * VGPU_RING_ENTRIES);
	for (i = 0; i < jobs; i++) {
		KUNIT_ASSERT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
		KUNIT_EXPECT_EQ_MSG(test, done[i]->error, i + 1 == fail ? -EIO : 0, "job %u", i + 1);
	}
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, fail)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, fail)->error, EIO);
	KUNIT_EXPECT_EQ(test, q->jobs_failed, 1);
	KUNIT_EXPECT_EQ(test, q->jobs_done, jobs - 1);
	KUNIT_EXPECT_TRUE(test, vgpu_sched_test_jobs_freed(t));
	vgpu_sched_put_fences(done, jobs);
}

/* Removal with jobs queued and on the hardware: every fence signals. */
static void vgpu_sched_remove_under_load(struct kunit *test)
{
	const u32 jobs = VGPU_JOBS_IN_FLIGHT + 8;
	struct vgpu_sched_test *t = test->priv;
	struct dma_fence **done = kunit_kcalloc(test, jobs, sizeof(*done), GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, done);
	for (i = 0; i < jobs; i++)
		done[i] = vgpu_sched_test_push(test, t);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_wait_inflight(t->q, VGPU_JOBS_IN_FLIGHT),
			VGPU_JOBS_IN_FLIGHT);
	KUNIT_EXPECT_EQ(test, vgpu_sched_test_complete(test, t, 1, 0), 1);
	/* as vgpu_remove() */
	vgpu_jobs_fail_all(t->vdev, -ENODEV);
	vgpu_files_sched_fini(t->vdev);
	vgpu_sched_fini(t->vdev);
	t->sched_up = false;
	KUNIT_EXPECT_EQ(test, done[0]->error, 0);
	for (i = 0; i < jobs; i++)
		KUNIT_EXPECT_GT(test, dma_fence_wait_timeout(done[i], false, 10 * HZ), 0);
	/* on the hardware: -ENODEV; never run: killed with the entity */
	KUNIT_EXPECT_EQ(test, done[1]->error, -ENODEV);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->error, ENODEV);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, 2)->hw_status, VGPU_ERR_ABORTED);
	KUNIT_EXPECT_LT(test, done[jobs - 1]->error, 0);
	/* a killed job is recorded when it is freed */
	KUNIT_EXPECT_TRUE(test, vgpu_sched_test_jobs_freed(t));
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->state, VGPU_JOB_FAILED);
	KUNIT_EXPECT_EQ(test, vgpu_hist(t->vf, jobs)->hw_status, VGPU_ERR_ABORTED);
	vgpu_sched_put_fences(done, jobs);
}

static struct kunit_case vgpu_sched_cases[] = {
	KUNIT_CASE_SLOW(vgpu_sched_credits),
	KUNIT_CASE_SLOW(vgpu_sched_ring_wraps),
	KUNIT_CASE_SLOW(vgpu_sched_remove_under_load),
	{}
};

static struct kunit_suite vgpu_sched_suite = {
	.name = "vgpu_sched",
	.init = vgpu_sched_test_init,
	.exit = vgpu_sched_test_exit,
	.test_cases = vgpu_sched_cases,
};

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
	KUNIT_CASE(vgpu_job_get_job_ids),
	KUNIT_CASE(vgpu_job_get_job_exception_copy),
	KUNIT_CASE(vgpu_job_submit_check),
	KUNIT_CASE(vgpu_job_submit_extensions),
	KUNIT_CASE(vgpu_job_submit_bo_handles),
	KUNIT_CASE(vgpu_job_submit_syncs),
	{}
};

static struct kunit_suite vgpu_job_suite = {
	.name = "vgpu_job",
	.init = vgpu_job_test_init,
	.test_cases = vgpu_job_cases,
};

kunit_test_suites(&vgpu_job_suite, &vgpu_sched_suite);
