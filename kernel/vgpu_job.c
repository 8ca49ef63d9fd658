// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: vgpu job submission and recovery
 *
 * One &drm_gpu_scheduler per hardware queue; each queue object of a file
 * (vgpu_queue.c) is one &drm_sched_entity.  SUBMIT builds a &struct vgpu_job: it looks
 * up the BOs (kept referenced until the job is freed), turns in-syncobjs
 * and the BOs' reservation fences (implicit sync) into scheduler
 * dependencies, arms the job and installs its finished fence in the BOs'
 * reservations and the out-syncobjs (binary: replaced; timeline: a chain
 * point).
 *
 * run_job() writes the launch into the queue's command ring (preceded by a
 * TLB_INVALIDATE when a mapping went away since the queue's last flush),
 * rings the doorbell and returns a hardware fence.  The device writes a
 * completion record per command and raises an interrupt for the launch;
 * vgpu_queue_process() matches records to the jobs on the queue's
 * in-flight list in ring order (the device's per-queue completed counter
 * tells which are done) and signals their fences.  A failed command stops
 * the queue: the job's fence gets an error, its exception record is kept
 * for DRM_IOCTL_VGPU_GET_JOB and debugfs, and the queue is resumed.
 *
 * Queues (vgpu_queue.c): each queue object is one entity over the
 * schedulers of its priority's hardware queues.  With the device's
 * semaphores (VGPU_FEAT_SEMAPHORES) every job's launch is followed by a
 * SEM_RELEASE of its hardware fence seqno into its hardware queue's
 * semaphore, and a dependency on a job of another hardware queue of this
 * device waits only until that job is on its ring (its scheduled fence),
 * then a SEM_ACQUIRE before the launch waits for its seqno on the device
 * (vgpu_job_sem_deps(), vgpu_emit_acquires(); module parameter sem_deps).
 *
 * Timeout (module parameter timeout_ms): the handler stops the hung
 * hardware queue (VGPU_Q_CONTROL 0: the device aborts the launch and
 * writes its record) and resets that queue alone: its scheduler stops,
 * records the device wrote are harvested (those jobs complete with their
 * own status and never run again), the guilty job is marked -ETIMEDOUT,
 * the others are resubmitted in order and the scheduler restarts; other
 * hardware queues never notice.  When the queue does not stop (or with
 * queue_reset=0) the whole device is reset the same way, every queue at
 * once.  A job that ran when the reset came did not complete: it runs
 * again from the start.  The guilty job's queue counts a fault and is
 * banned after ban_after of them.  The global reset counter and the
 * guilty file's counter advance; a devcoredump describes the hung job
 * and the queues.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include "vgpu_job.h"
#include "vgpu_trace.h"

static_assert(sizeof(struct vgpu_cmd_launch) == VGPU_CMD_BYTES);
static_assert(sizeof(struct vgpu_completion) == 336);
static_assert(sizeof(struct drm_vgpu_submit) == 152);
static_assert(sizeof(struct drm_vgpu_sync) == 16);
static_assert(sizeof(struct drm_vgpu_get_job) == 64);

static unsigned int vgpu_csb_kib = 256;
module_param_named(csb_kib, vgpu_csb_kib, uint, 0444);
MODULE_PARM_DESC(csb_kib, "context-save slot per SM thread and queue, KiB (default 256, 0: no preemption)");

static bool vgpu_preempt = true;
module_param_named(preempt, vgpu_preempt, bool, 0644);
MODULE_PARM_DESC(preempt, "let the device preempt launches mid-kernel (default true; a change applies to launches rung after it)");

/*
 * CSB_SLOT as the parameter preempt says: the slot size, or 0 (the device
 * then preempts no launch that begins).  Written before a doorbell when
 * it changed; a race of two queues writes the same value twice.
 */
void vgpu_sync_preempt(struct vgpu_device *vdev, bool force)
{
	u32 slot = READ_ONCE(vgpu_preempt) ? vdev->csb_slot : 0;

	if (xchg(&vdev->csb_slot_hw, slot) != slot || force)
		vgpu_write(vdev, VGPU_REG_CSB_SLOT, slot);
}

bool vgpu_sem_deps = true;
module_param_named(sem_deps, vgpu_sem_deps, bool, 0644);
MODULE_PARM_DESC(sem_deps, "wait for jobs of other queues of the device with SEM_ACQUIRE, not on the CPU (default true)");

unsigned int vgpu_ban_after = 3;
module_param_named(ban_after, vgpu_ban_after, uint, 0644);
MODULE_PARM_DESC(ban_after, "guilty resets after which a queue is banned (default 3, 0: never)");

bool vgpu_queue_reset = true;
module_param_named(queue_reset, vgpu_queue_reset, bool, 0644);
MODULE_PARM_DESC(queue_reset, "reset only the hung hardware queue (default true; false: the whole device)");


static const char *vgpu_fence_driver_name(struct dma_fence *f)
{
	return "vgpu";
}

static const char *vgpu_fence_timeline_name(struct dma_fence *f)
{
	return "vgpu-queue";
}

const struct dma_fence_ops vgpu_fence_ops = {
	.get_driver_name = vgpu_fence_driver_name,
	.get_timeline_name = vgpu_fence_timeline_name,
};

/* @id's entry in @vf's history; NULL before the file's first submit. */
struct vgpu_job_result *vgpu_hist(struct vgpu_file *vf, u64 id)
{
	/* pairs with the cmpxchg_release() in vgpu_hist_alloc() */
	struct vgpu_job_result *hist = smp_load_acquire(&vf->hist);

	return hist ? &hist[id % VGPU_JOB_HISTORY] : NULL;
}

/* The history, allocated by the file's first submit (not by open). */
int vgpu_hist_alloc(struct vgpu_file *vf)
{
	struct vgpu_job_result *hist;

	/* pairs with the cmpxchg_release() below: a history seen is zeroed */
	if (smp_load_acquire(&vf->hist))
		return 0;
	hist = vgpu_should_fail() ? NULL :
	       kvcalloc(VGPU_JOB_HISTORY, sizeof(*hist), GFP_KERNEL_ACCOUNT);
	if (!hist)
		return -ENOMEM;
	if (cmpxchg_release(&vf->hist, NULL, hist))
		kvfree(hist);
	return 0;
}

/*
 * QUEUED -> RUNNING only: the job may have completed (and been recorded
 * DONE or FAILED by the interrupt handler on another CPU) before its
 * submitter gets here, and a late RUNNING must not hide its outcome.
 */
static void vgpu_job_set_running(struct vgpu_job *job)
{
	struct vgpu_file *vf = job->vf;
	struct vgpu_job_result *r;
	unsigned long flags;

	spin_lock_irqsave(&vf->hist_lock, flags);
	r = vgpu_hist(vf, job->id);
	if (r && r->id == job->id && r->state == VGPU_JOB_QUEUED)
		r->state = VGPU_JOB_RUNNING;
	spin_unlock_irqrestore(&vf->hist_lock, flags);
}

static int vgpu_hw_status_errno(u32 status, const struct vgpu_exception_record *exc)
{
	switch (status) {
	case VGPU_ERR_NONE:
		return 0;
	case VGPU_ERR_MMU_FAULT:
		return -EFAULT;
	case VGPU_ERR_TIMEOUT:
		return -ETIMEDOUT;
	case VGPU_ERR_ABORTED:
		return -ECANCELED;
	case VGPU_ERR_EXCEPTION:
		return exc->code == VGPU_EXC_GLOBAL_FAULT ? -EFAULT : -EIO;
	default:
		return -EIO;
	}
}

/* Record the outcome of @job in its file's history.  Any context. */
void vgpu_job_record(struct vgpu_job *job, int error, u32 hw_status,
		     const struct vgpu_completion *cpl)
{
	struct vgpu_device *vdev = job->vdev;
	struct vgpu_file *vf = job->vf;
	struct vgpu_job_result *r;
	unsigned long flags;

	spin_lock_irqsave(&vf->hist_lock, flags);
	r = vgpu_hist(vf, job->id);
	if (r && r->id == job->id) {
		r->state = error ? VGPU_JOB_FAILED : VGPU_JOB_DONE;
		r->error = -error;
		r->hw_status = hw_status;
		if (cpl) {
			r->warp_insns = le64_to_cpu(cpl->warp_insns);
			r->elapsed_ns = le64_to_cpu(cpl->elapsed_ns);
			if (hw_status != VGPU_ERR_NONE)
				memcpy(&r->exc, &cpl->exc, sizeof(r->exc));
		}
	}
	spin_unlock_irqrestore(&vf->hist_lock, flags);

	if (cpl && hw_status != VGPU_ERR_NONE) {
		struct vgpu_exc_log *l;

		spin_lock_irqsave(&vdev->exc_lock, flags);
		l = &vdev->exc_log[vdev->exc_head++ % VGPU_EXC_LOG];
		l->queue = job->xq ? job->xq->id : 0;
		l->hw_queue = job->queue;
		l->hw_status = hw_status;
		l->client_id = vf->client_id;
		l->job_id = job->id;
		memcpy(&l->exc, &cpl->exc, sizeof(l->exc));
		spin_unlock_irqrestore(&vdev->exc_lock, flags);
	}
}

/* ---- ring ---- */

static void *vgpu_ring_slot(struct vgpu_queue *q, u32 *slot)
{
	void *p = q->ring + (size_t)q->tail * VGPU_CMD_BYTES;

	*slot = q->tail;
	memset(p, 0, VGPU_CMD_BYTES);
	q->tail = (q->tail + 1) & (VGPU_RING_ENTRIES - 1);
	q->emitted++;
	return p;
}

static void vgpu_emit_tlbi(struct vgpu_queue *q)
{
	struct vgpu_cmd_tlb_invalidate *c;
	u32 slot;

	c = vgpu_ring_slot(q, &slot);
	c->hdr.opcode = cpu_to_le32(VGPU_CMD_TLB_INVALIDATE);
	c->asid = cpu_to_le32(VGPU_TLBI_ALL_AS);
}

bool vgpu_has_sems(struct vgpu_device *vdev)
{
	return vdev->features & VGPU_FEAT_SEMAPHORES;
}

static void vgpu_emit_sem(struct vgpu_queue *q, u32 opcode, u32 sem_queue,
			  u64 payload)
{
	struct vgpu_cmd_sem *c;
	u32 slot;

	c = vgpu_ring_slot(q, &slot);
	c->hdr.opcode = cpu_to_le32(opcode);
	c->hdr.flags = cpu_to_le32(VGPU_CMD_F_FENCE_PHYS);
	c->addr = cpu_to_le64(q->vdev->sems_dma + sem_queue * sizeof(u64));
	c->payload = cpu_to_le64(payload);
	c->op = cpu_to_le32(VGPU_SEM_OP_GEQ);
}

/*
 * The hardware queue and seqno @f (a finished fence of a job of this
 * device) must reach for its job to be complete, or false when there is
 * nothing to wait for on the device: it has signalled, or its job never
 * got a hardware fence.  The hardware fence (drm_sched_fence.parent) is
 * ours and freed by RCU: drm_sched set it before signalling the scheduled
 * fence the job waited for; vgpu_job_free() drops it only after @f has
 * signalled.
 */
bool vgpu_sem_target(struct vgpu_device *vdev, struct dma_fence *f,
		     u32 *queue, u64 *seq)
{
	struct dma_fence *parent;
	bool ret = false;
	u32 i;

	if (dma_fence_is_signaled(f))
		return false;
	rcu_read_lock();
	parent = READ_ONCE(to_drm_sched_fence(f)->parent);
	if (parent)
		parent = dma_fence_get_rcu(parent);
	rcu_read_unlock();
	if (!parent)
		return false;
	if (parent->ops == &vgpu_fence_ops && !dma_fence_is_signaled(parent)) {
		for (i = 0; i < vdev->nqueues; i++) {
			if (vdev->queues[i].fence_context == parent->context) {
				*queue = i;
				*seq = parent->seqno;
				ret = true;
				break;
			}
		}
	}
	dma_fence_put(parent);
	return ret;
}

/* One SEM_ACQUIRE per hardware queue @job waits for, at the largest seqno. */
static void vgpu_emit_acquires(struct vgpu_queue *q, struct vgpu_job *job)
{
	struct vgpu_device *vdev = q->vdev;
	u64 want[VGPU_MAX_QUEUES] = { 0 }, seq;
	u32 i, other;

	for (i = 0; i < job->nsem_deps; i++)
		if (vgpu_sem_target(vdev, job->sem_deps[i], &other, &seq) &&
		    other != q->idx)
			want[other] = max(want[other], seq);
	for (i = 0; i < vdev->nqueues; i++)
		if (want[i])
			vgpu_emit_sem(q, VGPU_CMD_SEM_ACQUIRE, i, want[i]);
}

static void vgpu_emit_launch(struct vgpu_queue *q, struct vgpu_job *job)
{
	const struct drm_vgpu_launch *l = &job->launch;
	struct vgpu_cmd_launch *c;

	c = vgpu_ring_slot(q, &job->slot);
	c->hdr.opcode = cpu_to_le32(VGPU_CMD_LAUNCH);
	/* its interrupt on the vector of SUBMIT's CPU (vgpu_irq.c) */
	c->hdr.flags = cpu_to_le32(VGPU_CMD_F_IRQ |
		VGPU_CMD_F_VEC(vgpu_irq_cpu_vector(q->vdev, job->cpu)));
#define X(f, b)	(c->f = cpu_to_le##b(l->f))
	VGPU_CMD_LAUNCH_SHARED(X);
#undef X
	c->asid = cpu_to_le32(job->as->asid);
	c->trace_va = cpu_to_le64(job->trace_va);
	c->trace_size = cpu_to_le32(job->trace_size);
	c->cdp_area = cpu_to_le64(job->cdp_area);
	job->seq = q->emitted;
}

/* ---- scheduler backend ---- */

static struct dma_fence *vgpu_job_run_signalling(struct drm_sched_job *sched_job)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);
	struct vgpu_device *vdev = job->vdev;
	struct vgpu_queue *q = &vdev->queues[job->queue];
	struct dma_fence *fence;
	unsigned long flags;
	u32 gen;

	/* Guilty of a timeout, or cancelled (a banned queue): not run (again). */
	if (unlikely(sched_job->s_fence->finished.error)) {
		if (!job->guilty)
			vgpu_job_record(job, sched_job->s_fence->finished.error,
					VGPU_ERR_ABORTED, NULL);
		return NULL;
	}
	/*
	 * Resubmitted after a reset although it had completed (its record
	 * was harvested after drm_sched_stop() had detached its hardware
	 * fence): never run twice, hand back the signalled fence.
	 */
	if (unlikely(job->completed))
		return dma_fence_get(job->hw_fence);

	/*
	 * No allocation that may reclaim here (a fence-signalling section):
	 * the fence SUBMIT allocated, or for a job run again after a reset,
	 * one that does not wait.
	 */
	fence = job->hw_fence_mem;
	job->hw_fence_mem = NULL;
	if (!fence)
		fence = kzalloc(sizeof(*fence), GFP_NOWAIT | __GFP_NOWARN);
	if (!fence)
		return ERR_PTR(-ENOMEM);

	spin_lock_irqsave(&q->lock, flags);
	/*
	 * Checked under the queue lock: vgpu_jobs_fail_all() sets @gone
	 * before it empties the in-flight lists under the same lock, so no
	 * job is added to a list nobody will empty again.
	 */
	if (unlikely(vdev->gone)) {
		spin_unlock_irqrestore(&q->lock, flags);
		kfree(fence);
		return ERR_PTR(-ENODEV);
	}
	/* A resubmitted job keeps its seqno: SEM_ACQUIREs may name it. */
	if (!job->sem_seq)
		job->sem_seq = ++q->fence_seqno;
	dma_fence_init(fence, &vgpu_fence_ops, &q->fence_lock,
		       q->fence_context, job->sem_seq);
	/*
	 * Counted before mmu_gen is read: see vgpu_mmu.c on stale TLBs.
	 * prepare_job counted it when it bound the AS's ASID, which stays
	 * the AS's while it is counted (only tests get here without).
	 */
	if (!job->on_device) {
		vgpu_as_job_begin(job->as);
		job->on_device = true;
	}
	gen = atomic_read(&vdev->mmu_gen);
	if (gen != q->flushed_gen) {
		vgpu_emit_tlbi(q);
		q->flushed_gen = gen;
	}
	if (vgpu_has_sems(vdev))
		vgpu_emit_acquires(q, job);
	vgpu_emit_launch(q, job);
	if (vgpu_has_sems(vdev))
		vgpu_emit_sem(q, VGPU_CMD_SEM_RELEASE, q->idx, job->sem_seq);
	dma_fence_put(job->hw_fence);
	job->hw_fence = dma_fence_get(fence);
	job->start_ns = ktime_get_ns();
	list_add_tail(&job->link, &q->inflight);
	/*
	 * State and trace before the doorbell: the job may complete, and the
	 * interrupt handler on another CPU record and trace that, at once.
	 */
	vgpu_job_set_running(job);
	trace_vgpu_job_run(job->queue, job->vf->client_id, job->id, job->seq);
	vgpu_sync_preempt(vdev, false);
	/* Commands are in coherent memory; writel orders them before it. */
	vgpu_qwrite(q, VGPU_Q_DOORBELL, q->tail);
	spin_unlock_irqrestore(&q->lock, flags);

	vgpu_dbg(vdev, VGPU_DBG_JOB, "queue %u job %llu slot %u seq %llu\n",
		 job->queue, job->id, job->slot, job->seq);
	return fence;
}

/*
 * drm_sched's run_job: a fence-signalling critical section (the finished
 * fences of this job and of every job behind it wait for it), annotated
 * so that lockdep reports an allocation or a lock in it that could wait
 * on a fence.
 */
static struct dma_fence *vgpu_job_run(struct drm_sched_job *sched_job)
{
	bool cookie = dma_fence_begin_signalling();
	struct dma_fence *fence = vgpu_job_run_signalling(sched_job);

	dma_fence_end_signalling(cookie);
	return fence;
}

/*
 * @job (first on @q's in-flight list) has its completion record @cpl:
 * record the outcome and signal its hardware fence.  Under @q->lock.
 */
static void vgpu_job_complete_locked(struct vgpu_queue *q, struct vgpu_job *job,
				     const struct vgpu_completion *cpl)
{
	struct vgpu_device *vdev = q->vdev;
	u32 status;
	int err;

	status = le32_to_cpu(cpl->status);
	err = vgpu_hw_status_errno(status, &cpl->exc);
	if (le64_to_cpu(cpl->seq) != job->seq) {
		vgpu_err(vdev, "queue %u slot %u: stale completion (seq %llu, want %llu)\n",
			 q->idx, job->slot, le64_to_cpu(cpl->seq), job->seq);
		err = -EIO;
	}
	list_del_init(&job->link);
	job->completed = true;
	q->sem_done = max(q->sem_done, job->sem_seq);
	vgpu_job_record(job, err, status, cpl);
	atomic64_add(ktime_get_ns() - job->start_ns, &job->vf->engine_ns);
	if (err) {
		q->jobs_failed++;
		/* drm_sched passes it on to the finished fence. */
		dma_fence_set_error(job->hw_fence, err);
		vgpu_dbg(vdev, VGPU_DBG_JOB, "queue %u job %llu: status %u exc %u (%s)\n",
			 q->idx, job->id, status, le32_to_cpu(cpl->exc.code),
			 cpl->exc.msg);
	} else {
		q->jobs_done++;
	}
	trace_vgpu_job_complete(q->idx, job->vf->client_id, job->id, err);
	dma_fence_signal(job->hw_fence);
}

/*
 * Complete the in-flight jobs of @q the device has finished, and, with
 * @stops, resume @q if it stopped on an error.  IRQ or reset.  Each
 * register read is a trap to the hypervisor: a queue with nothing in
 * flight has no COMPLETED to read, and a queue stops only with
 * VGPU_IRQ_ERROR, so the interrupt handler passes @stops only then (18
 * reads an interrupt with 8 idle queues before, 2 now).
 */
void vgpu_queue_process(struct vgpu_queue *q, bool stops)
{
	struct vgpu_device *vdev = q->vdev;
	struct vgpu_job *job, *tmp;
	unsigned long flags;
	u32 done;

	spin_lock_irqsave(&q->lock, flags);
	if (!list_empty(&q->inflight)) {
		done = vgpu_qread(q, VGPU_Q_COMPLETED_LO);
		dma_rmb();
		list_for_each_entry_safe(job, tmp, &q->inflight, link) {
			if ((s32)(done - (u32)job->seq) < 0)
				break;
			vgpu_job_complete_locked(q, job, &q->cpl[job->slot]);
		}
	}
	if (stops && vgpu_qread(q, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED) {
		vgpu_dbg(vdev, VGPU_DBG_JOB, "queue %u stopped (error %u at %u): resume\n",
			 q->idx, vgpu_qread(q, VGPU_Q_ERROR),
			 vgpu_qread(q, VGPU_Q_ERROR_INDEX));
		vgpu_qwrite(q, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * After a device reset (the device is idle, its counters are gone): complete
 * every in-flight job of @q whose completion record the device wrote, with
 * the record's status.  The device writes a record before it counts the
 * command completed, and a reset may fall between the two: the records in
 * memory, not the counter, say what ran.  The completion ring is cleared
 * whenever the queue is (re)initialised, so a record whose sequence number
 * matches a job's is that job's.  Commands complete in ring order: the
 * first job without its record and every job after it did not complete.
 */
void vgpu_queue_harvest(struct vgpu_queue *q)
{
	struct vgpu_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	dma_rmb();
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		const struct vgpu_completion *cpl = &q->cpl[job->slot];

		if (le64_to_cpu(READ_ONCE(cpl->seq)) != job->seq)
			break;
		vgpu_job_complete_locked(q, job, cpl);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/*
 * Drop every in-flight hardware fence of @q with @error.  After a reset
 * (@final false) the jobs are resubmitted, so only the hardware fences
 * carry the error; when the device goes away (@final) the jobs end here
 * and their finished fences carry it too.
 */
void vgpu_queue_cancel_inflight(struct vgpu_queue *q, int error, bool final)
{
	struct vgpu_job *job, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&q->lock, flags);
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		list_del_init(&job->link);
		if (final) {
			vgpu_job_record(job, error, VGPU_ERR_ABORTED, NULL);
			dma_fence_set_error(&job->base.s_fence->finished, error);
			trace_vgpu_job_complete(q->idx, job->vf->client_id,
						job->id, error);
		}
		dma_fence_set_error(job->hw_fence, error);
		dma_fence_signal(job->hw_fence);
	}
	spin_unlock_irqrestore(&q->lock, flags);
}

/* Program the rings of @q and enable it (probe and after reset). */
void vgpu_queue_hw_init(struct vgpu_queue *q)
{
	q->tail = 0;
	q->emitted = 0;
	q->flushed_gen = atomic_read(&q->vdev->mmu_gen) - 1;
	vgpu_qwrite(q, VGPU_Q_CONTROL, 0);
	/* No record of an earlier run may match a new job (vgpu_queue_harvest). */
	memset(q->cpl, 0, VGPU_RING_ENTRIES * sizeof(*q->cpl));
	/* the zeroed records reach memory before the device may write them */
	wmb();
	vgpu_qwrite(q, VGPU_Q_RING_LO, lower_32_bits(q->ring_dma));
	vgpu_qwrite(q, VGPU_Q_RING_HI, upper_32_bits(q->ring_dma));
	vgpu_qwrite(q, VGPU_Q_CPL_LO, lower_32_bits(q->cpl_dma));
	vgpu_qwrite(q, VGPU_Q_CPL_HI, upper_32_bits(q->cpl_dma));
	vgpu_qwrite(q, VGPU_Q_SIZE, VGPU_RING_ENTRIES);
	vgpu_qwrite(q, VGPU_Q_PRIORITY, q->priority);
	vgpu_sync_preempt(q->vdev, true);
	vgpu_qwrite(q, VGPU_Q_CSB, q->csb ? (u32)(q->csb_dma >> PAGE_SHIFT) : 0);
	/*
	 * A job that ended in a reset may not have released its seqno (its
	 * SEM_RELEASE never ran): release every job that ended, so that no
	 * SEM_ACQUIRE of another queue waits for it forever.  Later jobs have
	 * larger seqnos and release them when they run (again).
	 */
	if (q->vdev->sems) {
		__le64 *sem = &q->vdev->sems[q->idx];

		WRITE_ONCE(*sem, cpu_to_le64(max(le64_to_cpu(READ_ONCE(*sem)),
						 q->sem_done)));
	}
	vgpu_qwrite(q, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
}


/*
 * The second half of vgpu_job_free(), from vdev->release_work: the last
 * put of a BO takes its reservation lock, of a VM or an address space
 * frees page tables and mappings.  free_job itself runs where a reset
 * waits for it (drm_sched_stop() under reset_lock, in the timeout's
 * fence-signalling section), so it may do neither.
 */
static void vgpu_job_release(struct vgpu_release *r)
{
	struct vgpu_job *job = container_of(r, struct vgpu_job, release);
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		if (job->bos[i])
			drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	for (i = 0; i < job->nsem_deps; i++)
		dma_fence_put(job->sem_deps[i]);
	kfree(job->sem_deps);
	if (job->on_device)
		vgpu_as_job_end(job->as);
	vgpu_as_put(job->as);
	/*
	 * The job counts in its file's and queue's jobs in flight until its
	 * release is done, not only until free_job: a file cannot submit
	 * ahead of the releases it leaves pending, each holding BOs.
	 */
	if (job->counted)
		vgpu_jobs_release(job->vf, &job->xq->jobs);
	if (job->xq)
		vgpu_xqueue_put(job->xq);
	vgpu_file_put(job->vf);
	kfree(job);
}

static void vgpu_job_free(struct drm_sched_job *sched_job)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);

	/*
	 * drm_sched frees a job once its finished fence reads signalled, and
	 * dma_fence_signal() marks the fence so before it runs the callbacks
	 * (under the fence's lock): another CPU may still be walking them,
	 * @done_cb, in this job, among them (KASAN saw that walk read the
	 * freed job).  Removing the callback takes the lock: the walk is
	 * over when it returns.
	 */
	if (sched_job->s_fence)
		dma_fence_remove_callback(&sched_job->s_fence->finished, &job->done_cb);
	/* Killed before running (file closed, device gone): record it. */
	if (!job->hw_fence && !job->guilty)
		vgpu_job_record(job, sched_job->s_fence->finished.error ?: -ECANCELED,
				VGPU_ERR_ABORTED, NULL);
	/*
	 * The finished fence outlives the job (syncobjs, sync_files, other
	 * drivers) and would keep our hardware fence, whose ops live in this
	 * module, until it is released: possibly after the module is gone.
	 * It has signalled, nothing reads its parent any more: drop it now.
	 */
	if (sched_job->s_fence) {
		dma_fence_put(sched_job->s_fence->parent);
		sched_job->s_fence->parent = NULL;
	}
	drm_sched_job_cleanup(sched_job);
	dma_fence_put(job->hw_fence);
	kfree(job->hw_fence_mem);
	vgpu_release_defer(job->vdev, &job->release, vgpu_job_release);
}

/* Called once every dependency has signalled (drm_sched_job_dependency). */
static struct dma_fence *vgpu_job_prepare(struct drm_sched_job *sched_job,
					  struct drm_sched_entity *entity)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);
	struct dma_fence *wait;

	/*
	 * Its address space gets an ASID now, and keeps it while the job is
	 * counted in as->active (vgpu_asid.c "ASIDs"); with none to take, the
	 * scheduler waits for the fence returned and asks again.  A job
	 * cancelled meanwhile needs none: run_job will not run it.
	 */
	if (!job->on_device && !sched_job->s_fence->finished.error) {
		wait = vgpu_as_bind_job(job->as);
		if (wait)
			return wait;
		job->on_device = true;
	}
	trace_vgpu_job_ready(job->queue, job->vf->client_id, job->id);
	return NULL;
}

const struct drm_sched_backend_ops vgpu_sched_ops = {
	.prepare_job = vgpu_job_prepare,
	.run_job = vgpu_job_run,
	.timedout_job = vgpu_job_timedout,
	.free_job = vgpu_job_free,
};


/* ---- set-up ---- */

static void vgpu_release_work(struct work_struct *work)
{
	struct vgpu_device *vdev = container_of(work, struct vgpu_device,
						release_work);
	struct llist_node *list = llist_reverse_order(llist_del_all(&vdev->release_list));
	struct vgpu_release *r, *tmp;

	llist_for_each_entry_safe(r, tmp, list, node) {
		r->fn(r);
		atomic_dec(&vdev->releases_pending);
		cond_resched();
	}
}

void vgpu_release_init(struct vgpu_device *vdev)
{
	init_llist_head(&vdev->release_list);
	INIT_WORK(&vdev->release_work, vgpu_release_work);
}

/**
 * vgpu_release_defer - run @fn(@r) later, in process context
 * @vdev: the device (vgpu_release_flush() waits for it before removal)
 * @r:    embedded in the object @fn frees
 * @fn:   the release
 *
 * For a scheduler's free_job: what it leaves to @fn may take reservation
 * locks and allocate, which a reset waiting for free_job (under
 * reset_lock, in a fence-signalling section) must not wait for.  In order.
 */
void vgpu_release_defer(struct vgpu_device *vdev, struct vgpu_release *r,
			void (*fn)(struct vgpu_release *r))
{
	int n = atomic_inc_return(&vdev->releases_pending);
	int peak = atomic_read(&vdev->releases_peak);

	while (n > peak && !atomic_try_cmpxchg(&vdev->releases_peak, &peak, n))
		;
	r->fn = fn;
	if (llist_add(&r->node, &vdev->release_list) &&
	    !READ_ONCE(vdev->release_hold))
		queue_work(system_unbound_wq, &vdev->release_work);
}

/*
 * debugfs release_hold (fault injection, as a starved workqueue would
 * behave): while @hold, deferred releases wait; clearing it runs them.
 */
void vgpu_release_set_hold(struct vgpu_device *vdev, bool hold)
{
	WRITE_ONCE(vdev->release_hold, hold);
	if (!hold)
		queue_work(system_unbound_wq, &vdev->release_work);
}

/* Every release deferred so far has run. */
void vgpu_release_flush(struct vgpu_device *vdev)
{
	vgpu_release_set_hold(vdev, false);
	flush_work(&vdev->release_work);
}

int vgpu_sched_init(struct vgpu_device *vdev)
{
	struct drm_sched_init_args args = {
		.ops = &vgpu_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		.credit_limit = VGPU_JOBS_IN_FLIGHT * VGPU_JOB_CREDITS,
		.timeout = msecs_to_jiffies(vgpu_timeout_ms),
		.name = "vgpu",
		.dev = vdev->drm.dev,
	};
	unsigned int i;
	int ret;

	vgpu_release_init(vdev);
	vdev->reset_wq = alloc_ordered_workqueue("vgpu-reset", 0);
	if (!vdev->reset_wq)
		return -ENOMEM;
	args.timeout_wq = vdev->reset_wq;
	vdev->csb_slot = (vdev->features & VGPU_FEAT_PREEMPT) ?
		ALIGN(vgpu_csb_kib, 4) * 1024 : 0;
	vdev->sems = dma_alloc_coherent(vdev->drm.dev, PAGE_SIZE,
					&vdev->sems_dma, GFP_KERNEL);
	if (!vdev->sems) {
		ret = -ENOMEM;
		goto err;
	}
	static_assert(VGPU_MAX_QUEUES * sizeof(u64) <= PAGE_SIZE);
	for (i = 0; i < vdev->nqueues; i++) {
		struct vgpu_queue *q = &vdev->queues[i];

		q->vdev = vdev;
		q->idx = i;
		spin_lock_init(&q->lock);
		spin_lock_init(&q->fence_lock);
		INIT_LIST_HEAD(&q->inflight);
		q->fence_context = dma_fence_context_alloc(1);
		q->ring = dma_alloc_coherent(vdev->drm.dev,
					     VGPU_RING_ENTRIES * VGPU_CMD_BYTES,
					     &q->ring_dma, GFP_KERNEL);
		q->cpl = dma_alloc_coherent(vdev->drm.dev,
					    VGPU_RING_ENTRIES * sizeof(*q->cpl),
					    &q->cpl_dma, GFP_KERNEL);
		/*
		 * Preemption saves running clusters here (uapi "Preemption");
		 * without it the queue's launches run to their end.
		 */
		if (vdev->csb_slot && (vdev->features & VGPU_FEAT_PREEMPT))
			q->csb = dma_alloc_coherent(vdev->drm.dev,
						    (size_t)vdev->nthreads * vdev->csb_slot,
						    &q->csb_dma, GFP_KERNEL | __GFP_NOWARN);
		if (!q->ring || !q->cpl) {
			ret = -ENOMEM;
			goto err;
		}
	}
	vgpu_bands_init(vdev);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_hw_init(&vdev->queues[i]);
	for (i = 0; i < vdev->nqueues; i++) {
		ret = drm_sched_init(&vdev->queues[i].sched, &args);
		if (ret) {
			while (i--)
				drm_sched_fini(&vdev->queues[i].sched);
			goto err;
		}
	}
	vdev->sched_live = true;
	ret = vgpu_bind_sched_init(vdev);
	if (ret)
		goto err;
	return 0;

err:
	vgpu_sched_fini(vdev);
	return ret;
}

void vgpu_sched_fini(struct vgpu_device *vdev)
{
	unsigned int i;

	vgpu_bind_sched_fini(vdev);
	for (i = 0; i < vdev->nqueues; i++) {
		struct vgpu_queue *q = &vdev->queues[i];
		struct drm_sched_job *sj, *tmp;

		if (vdev->sched_live) {
			drm_sched_fini(&q->sched);
			/*
			 * drm_sched_fini() leaves behind the jobs its free
			 * work had not freed yet.  vgpu_jobs_fail_all() has
			 * signalled them all; free them here, while the
			 * device they reference still exists.
			 */
			list_for_each_entry_safe(sj, tmp, &q->sched.pending_list, list) {
				list_del_init(&sj->list);
				vgpu_job_free(sj);
			}
		}
		if (q->ring)
			dma_free_coherent(vdev->drm.dev,
					  VGPU_RING_ENTRIES * VGPU_CMD_BYTES,
					  q->ring, q->ring_dma);
		if (q->cpl)
			dma_free_coherent(vdev->drm.dev,
					  VGPU_RING_ENTRIES * sizeof(*q->cpl),
					  q->cpl, q->cpl_dma);
		if (q->csb)
			dma_free_coherent(vdev->drm.dev,
					  (size_t)vdev->nthreads * vdev->csb_slot,
					  q->csb, q->csb_dma);
		q->csb = NULL;
		q->ring = NULL;
		q->cpl = NULL;
	}
	vdev->sched_live = false;
	/* the jobs' and binds' references, before what they reference goes */
	vgpu_release_flush(vdev);
	if (vdev->sems)
		dma_free_coherent(vdev->drm.dev, PAGE_SIZE, vdev->sems,
				  vdev->sems_dma);
	vdev->sems = NULL;
	if (vdev->reset_wq)
		destroy_workqueue(vdev->reset_wq);
	vdev->reset_wq = NULL;
}

/*
 * Device going away: stop the queues, fail every job on the hardware with
 * @error (their fences signal, the schedulers free them).
 */
void vgpu_jobs_fail_all(struct vgpu_device *vdev, int error)
{
	unsigned int i;

	mutex_lock(&vdev->reset_lock);
	vdev->gone = true;
	vgpu_irq_disable(vdev);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_process(&vdev->queues[i], true);
	vgpu_write(vdev, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	WRITE_ONCE(vdev->irq_hold, false);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_harvest(&vdev->queues[i]);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_cancel_inflight(&vdev->queues[i], error, true);
	mutex_unlock(&vdev->reset_lock);
}

#if IS_ENABLED(CONFIG_DRM_VGPU_KUNIT_TEST)
#include "tests/vgpu_job_test.c"
#include "tests/vgpu_submit_test.c"
#include "tests/vgpu_sched_test.c"
#endif
