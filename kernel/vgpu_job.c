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
#include <linux/dma-fence-chain.h>
#include <linux/dma-fence-unwrap.h>
#include <linux/delay.h>
#include <linux/devcoredump.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_drv.h>
#include <drm/drm_exec.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include "vgpu_drv.h"
#include "vgpu_waitgraph.h"
#include "vgpu_trace.h"

static_assert(sizeof(struct vgpu_cmd_launch) == VGPU_CMD_BYTES);
static_assert(sizeof(struct vgpu_completion) == 336);
static_assert(sizeof(struct drm_vgpu_submit) == 152);
static_assert(sizeof(struct drm_vgpu_sync) == 16);
static_assert(sizeof(struct drm_vgpu_get_job) == 64);

/*
 * Credits are ring slots.  A job takes at most a TLB_INVALIDATE, one
 * SEM_ACQUIRE per other hardware queue it waits for (those come on top),
 * its LAUNCH and a SEM_RELEASE.  Its credits come back when its launch
 * completes, when at most the SEM_RELEASE of the last job is still to
 * execute: a scheduler within its credit_limit never laps the ring.
 */
#define VGPU_JOB_CREDITS 3u
static_assert(VGPU_JOBS_IN_FLIGHT * VGPU_JOB_CREDITS + VGPU_MAX_QUEUES <
	      VGPU_RING_ENTRIES);

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
static void vgpu_sync_preempt(struct vgpu_device *vdev, bool force)
{
	u32 slot = READ_ONCE(vgpu_preempt) ? vdev->csb_slot : 0;

	if (xchg(&vdev->csb_slot_hw, slot) != slot || force)
		vgpu_write(vdev, VGPU_REG_CSB_SLOT, slot);
}

static bool vgpu_sem_deps = true;
module_param_named(sem_deps, vgpu_sem_deps, bool, 0644);
MODULE_PARM_DESC(sem_deps, "wait for jobs of other queues of the device with SEM_ACQUIRE, not on the CPU (default true)");

unsigned int vgpu_ban_after = 3;
module_param_named(ban_after, vgpu_ban_after, uint, 0644);
MODULE_PARM_DESC(ban_after, "guilty resets after which a queue is banned (default 3, 0: never)");

static bool vgpu_queue_reset = true;
module_param_named(queue_reset, vgpu_queue_reset, bool, 0644);
MODULE_PARM_DESC(queue_reset, "reset only the hung hardware queue (default true; false: the whole device)");

struct vgpu_job {
	struct drm_sched_job base;
	struct vgpu_device *vdev;
	struct vgpu_file *vf;	/* holds a reference */
	struct vgpu_as *as;	/* holds a reference */
	struct vgpu_xqueue *xq;	/* holds a reference */
	struct dma_fence_cb done_cb;	/* counts xq->completed */
	u32 queue;		/* hardware queue (once armed) */
	u64 id;
	struct drm_vgpu_launch launch;
	u64 trace_va;	/* VGPU_SUBMIT_EXT_TIMELINE, else 0 */
	/*
	 * Finished fences of jobs of other hardware queues of this device
	 * that it waits for on the device (SEM_ACQUIRE), each referenced;
	 * drm_sched waits only for their scheduled fences.
	 */
	struct dma_fence **sem_deps;
	u32 nsem_deps;
	u64 sem_seq;	/* its hardware fences' seqno, kept across resubmits */
	u32 trace_size;
	struct drm_gem_object **bos;
	u32 bo_count;

	/* on the hardware; under the queue's lock */
	struct dma_fence *hw_fence;
	struct list_head link;
	u32 slot;
	u64 seq;
	u64 start_ns;
	bool guilty;
	bool completed;	/* its completion record was processed */
	bool on_device;	/* counted in as->active (vgpu_as_job_begin) */
};

#define to_vgpu_job(j) container_of(j, struct vgpu_job, base)

static const char *vgpu_fence_driver_name(struct dma_fence *f)
{
	return "vgpu";
}

static const char *vgpu_fence_timeline_name(struct dma_fence *f)
{
	return "vgpu-queue";
}

static const struct dma_fence_ops vgpu_fence_ops = {
	.get_driver_name = vgpu_fence_driver_name,
	.get_timeline_name = vgpu_fence_timeline_name,
};

/* @id's entry in @vf's history; NULL before the file's first submit. */
static struct vgpu_job_result *vgpu_hist(struct vgpu_file *vf, u64 id)
{
	struct vgpu_job_result *hist = smp_load_acquire(&vf->hist);

	return hist ? &hist[id % VGPU_JOB_HISTORY] : NULL;
}

/* The history, allocated by the file's first submit (not by open). */
static int vgpu_hist_alloc(struct vgpu_file *vf)
{
	struct vgpu_job_result *hist;

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
static void vgpu_job_record(struct vgpu_job *job, int error, u32 hw_status,
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

static bool vgpu_has_sems(struct vgpu_device *vdev)
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
static bool vgpu_sem_target(struct vgpu_device *vdev, struct dma_fence *f,
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
	int i;

	c = vgpu_ring_slot(q, &job->slot);
	c->hdr.opcode = cpu_to_le32(VGPU_CMD_LAUNCH);
	c->hdr.flags = cpu_to_le32(VGPU_CMD_F_IRQ);
	c->code_va = cpu_to_le64(l->code_va);
	c->code_size = cpu_to_le32(l->code_size);
	c->entry = cpu_to_le32(l->entry);
	for (i = 0; i < 3; i++) {
		c->grid[i] = cpu_to_le32(l->grid[i]);
		c->block[i] = cpu_to_le32(l->block[i]);
		c->cluster[i] = cpu_to_le32(l->cluster[i]);
	}
	c->smem_bytes = cpu_to_le32(l->smem_bytes);
	c->param_va = cpu_to_le64(l->param_va);
	c->param_size = cpu_to_le32(l->param_size);
	c->asid = cpu_to_le32(job->as->asid);
	c->launch_flags = cpu_to_le32(l->launch_flags);
	c->seed = cpu_to_le64(l->seed);
	c->budget = cpu_to_le64(l->budget);
	c->trace_va = cpu_to_le64(job->trace_va);
	c->trace_size = cpu_to_le32(job->trace_size);
	job->seq = q->emitted;
}

/* ---- scheduler backend ---- */

static struct dma_fence *vgpu_job_run(struct drm_sched_job *sched_job)
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

	fence = kzalloc(sizeof(*fence), GFP_KERNEL);
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
	/* Counted before mmu_gen is read: see vgpu_mmu.c on stale TLBs. */
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

/* Complete the in-flight jobs of @q the device has finished.  IRQ or reset. */
void vgpu_queue_process(struct vgpu_queue *q)
{
	struct vgpu_device *vdev = q->vdev;
	struct vgpu_job *job, *tmp;
	unsigned long flags;
	u32 done;

	spin_lock_irqsave(&q->lock, flags);
	done = vgpu_qread(q, VGPU_Q_COMPLETED_LO);
	dma_rmb();
	list_for_each_entry_safe(job, tmp, &q->inflight, link) {
		if ((s32)(done - (u32)job->seq) < 0)
			break;
		vgpu_job_complete_locked(q, job, &q->cpl[job->slot]);
	}
	if (vgpu_qread(q, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED) {
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
static void vgpu_queue_harvest(struct vgpu_queue *q)
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
static void vgpu_queue_cancel_inflight(struct vgpu_queue *q, int error,
				       bool final)
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
 * Stop @job's queue so that the device ends the hung launch and writes its
 * completion record: an ABORTED exception whose warp states say where the
 * CTA it was running stood.  The record goes to @rec (CPU byte order for
 * the fields the wait-for graph reads) and the slot is cleared, so that the
 * reset still treats the job as timed out.  False when none came in 100 ms.
 */
enum vgpu_stop {
	VGPU_STOP_FAILED,	/* the queue still executes: reset the device */
	VGPU_STOP_RECORD,	/* stopped, the launch's state in @rec */
	VGPU_STOP_IDLE,		/* stopped, it was executing nothing */
};

static enum vgpu_stop vgpu_stop_hung(struct vgpu_device *vdev,
				     struct vgpu_job *job,
				     struct vgpu_exception_record *rec)
{
	struct vgpu_queue *q = &vdev->queues[job->queue];
	struct vgpu_completion *cpl = &q->cpl[job->slot];
	unsigned int i;

	vgpu_qwrite(q, VGPU_Q_CONTROL, 0);
	for (i = 0; i < 100; i++) {
		if (le64_to_cpu(READ_ONCE(cpl->seq)) == job->seq) {
			dma_rmb();
			memcpy(rec, &cpl->exc, sizeof(*rec));
			rec->code = le32_to_cpu(rec->code);
			for (i = 0; i < 3; i++)
				rec->cta[i] = le32_to_cpu(rec->cta[i]);
			rec->warp = le32_to_cpu(rec->warp);
			rec->pc = le32_to_cpu(rec->pc);
			rec->barid = le32_to_cpu(rec->barid);
			rec->addr = le64_to_cpu(rec->addr);
			for (i = 0; i < 4; i++)
				rec->info[i] = le32_to_cpu(rec->info[i]);
			rec->msg[sizeof(rec->msg) - 1] = '\0';
			WRITE_ONCE(cpl->seq, 0);
			return VGPU_STOP_RECORD;
		}
		usleep_range(1000, 2000);
	}
	/*
	 * No record, but nothing executing either: the queue had taken no
	 * command of the job or hung before running it (a front end that
	 * stopped answering, VGPU_INJ_HANG).  Disabled, it is stopped: a
	 * queue reset suffices.
	 */
	if (!(vgpu_qread(q, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY))
		return VGPU_STOP_IDLE;
	return VGPU_STOP_FAILED;
}

struct vgpu_dump {
	char *buf;
	size_t size, n;
};

static __printf(2, 3) void vgpu_dump_print(void *ctx, const char *fmt, ...)
{
	struct vgpu_dump *d = ctx;
	va_list ap;

	va_start(ap, fmt);
	d->n += vscnprintf(d->buf + d->n, d->size - d->n, fmt, ap);
	va_end(ap);
}

/*
 * The devcoredump of a job that timed out: the job, the device and its
 * queues, and when the device stopped the launch (@rec), where its CTA
 * stood as a wait-for graph in Graphviz DOT (uapi/vgpu_waitgraph.h, the
 * code vgpu-run --deadlock-graph uses).
 */
static void vgpu_coredump(struct vgpu_job *job, const struct vgpu_exception_record *rec)
{
	struct vgpu_device *vdev = job->vdev;
	const struct drm_vgpu_launch *l = &job->launch;
	struct vgpu_dump d = { .size = 32768 };
	struct vgpu_waitgraph *g;
	unsigned int i;

	d.buf = vmalloc(d.size);	/* dev_coredumpv() vfree()s it */
	if (!d.buf)
		return;
	vgpu_dump_print(&d,
			"vgpu devcoredump: job timeout\nclient %llu job %llu queue %u hw_queue %u asid %u\n"
			"code_va 0x%llx code_size %u entry %u grid %ux%ux%u block %ux%ux%u\n"
			"smem %u param_va 0x%llx param_size %u flags 0x%x budget %llu\n",
			job->vf->client_id, job->id, job->xq->id, job->queue,
			job->as->asid,
			l->code_va, l->code_size, l->entry, l->grid[0], l->grid[1],
			l->grid[2], l->block[0], l->block[1], l->block[2],
			l->smem_bytes, l->param_va, l->param_size, l->launch_flags,
			l->budget);
	vgpu_dump_print(&d, "device status 0x%x irq_status 0x%x err_count %u err_last %u\n",
			vgpu_read(vdev, VGPU_REG_STATUS), vgpu_read(vdev, VGPU_REG_IRQ_STATUS),
			vgpu_read(vdev, VGPU_REG_ERR_COUNT), vgpu_read(vdev, VGPU_REG_ERR_LAST));
	for (i = 0; i < vdev->nqueues; i++) {
		struct vgpu_queue *q = &vdev->queues[i];

		vgpu_dump_print(&d,
				"queue %u: status 0x%x head %u tail %u error %u completed %u\n",
				i, vgpu_qread(q, VGPU_Q_STATUS), vgpu_qread(q, VGPU_Q_HEAD),
				vgpu_qread(q, VGPU_Q_TAIL), vgpu_qread(q, VGPU_Q_ERROR),
				vgpu_qread(q, VGPU_Q_COMPLETED_LO));
	}
	g = rec ? kzalloc(sizeof(*g), GFP_KERNEL) : NULL;
	if (g) {
		u64 threads = (u64)l->block[0] * l->block[1] * l->block[2];

		vgpu_dump_print(&d, "stopped: exception %u cta (%u,%u,%u) warp %u pc 0x%x: %s\n"
				"wait-for graph (Graphviz DOT):\n",
				rec->code, rec->cta[0], rec->cta[1], rec->cta[2], rec->warp,
				rec->pc, rec->msg);
		vgpu_wg_init(g, rec, (u32)DIV_ROUND_UP(threads, VGPU_WARP_SIZE));
		vgpu_wg_print(g, "the job that timed out", vgpu_dump_print, &d);
		kfree(g);
	}
	dev_coredumpv(vdev->drm.dev, d.buf, d.n, GFP_KERNEL);
}

/*
 * @job hung or brought a reset upon itself: its queue counts a guilty
 * reset and is banned at vgpu_ban_after of them.
 */
static void vgpu_job_guilty(struct vgpu_job *job, int error)
{
	struct vgpu_xqueue *xq = job->xq;
	int n = atomic_inc_return(&xq->guilty_resets);

	if (vgpu_ban_after && n >= vgpu_ban_after && !atomic_read(&xq->banned)) {
		WRITE_ONCE(xq->ban_reason, -error);
		/* the entity's guilty flag: drm_sched cancels what it pops */
		atomic_set(&xq->banned, 1);
		vgpu_warn(job->vdev, "client %llu queue %u banned after %d faults\n",
			  job->vf->client_id, xq->id, n);
	}
}

/*
 * After drm_sched_stop(): the jobs left on @sched's pending list were
 * caught in its reset without causing it; each queue counts it once.
 * Those of a banned queue are cancelled instead of run again.
 */
static void vgpu_count_innocent(struct drm_gpu_scheduler *sched,
				struct vgpu_job *guilty, u32 reset)
{
	struct drm_sched_job *sj;

	list_for_each_entry(sj, &sched->pending_list, list) {
		struct vgpu_xqueue *xq = to_vgpu_job(sj)->xq;

		if (to_vgpu_job(sj) == guilty)
			continue;
		/* a banned queue's jobs are not run again: cancelled */
		if (atomic_read(&xq->banned)) {
			if (!dma_fence_is_signaled(&sj->s_fence->finished))
				dma_fence_set_error(&sj->s_fence->finished, -ECANCELED);
			continue;
		}
		if (xq->last_reset == reset)
			continue;
		xq->last_reset = reset;
		atomic_inc(&xq->innocent_resets);
	}
}

/* The hung job's own outcome, once the device can no longer complete it. */
static void vgpu_job_timed_out(struct vgpu_job *job)
{
	struct vgpu_queue *q = &job->vdev->queues[job->queue];
	unsigned long flags;

	if (job->completed) {
		/* It finished as the reset began: its own status stands. */
		vgpu_warn(job->vdev, "queue %u: job %llu completed during the reset\n",
			  job->queue, job->id);
		return;
	}
	job->guilty = true;
	/* its seqno is released too (vgpu_queue_hw_init): dependents go on */
	spin_lock_irqsave(&q->lock, flags);
	q->sem_done = max(q->sem_done, job->sem_seq);
	spin_unlock_irqrestore(&q->lock, flags);
	dma_fence_set_error(&job->base.s_fence->finished, -ETIMEDOUT);
	vgpu_job_record(job, -ETIMEDOUT, VGPU_ERR_TIMEOUT, NULL);
	vgpu_job_guilty(job, -ETIMEDOUT);
}

/*
 * Per-queue reset: the device stopped @job's hardware queue (it wrote
 * the hung launch's ABORTED record, vgpu_stop_hung()), the other queues
 * never noticed.  Only this queue's scheduler stops; its completed jobs
 * keep their status, the others run again from the start.
 */
static void vgpu_reset_queue(struct vgpu_device *vdev, struct vgpu_job *job)
{
	struct vgpu_queue *q = &vdev->queues[job->queue];

	drm_sched_stop(&q->sched, &job->base);
	vgpu_queue_harvest(q);
	vgpu_queue_cancel_inflight(q, -ECANCELED, false);
	/* counted before the job's outcome shows: whoever sees it, sees this */
	atomic_inc(&vdev->reset_count);
	atomic_inc(&job->vf->reset_count);
	vgpu_job_timed_out(job);
	vgpu_count_innocent(&q->sched, job, atomic_inc_return(&vdev->queue_resets));
	trace_vgpu_reset(job->queue, job->id);
	vgpu_queue_hw_init(q);
	drm_sched_resubmit_jobs(&q->sched);
	drm_sched_start(&q->sched);
}

/*
 * Whole-device reset, when the hung queue did not stop: every scheduler
 * stops; the device is reset (nothing runs or completes after that).
 * drm_sched_stop() has detached the hardware fences, so every job the
 * device finished but nobody had processed yet would be resubmitted and
 * run a second time: harvest the records (real status; vgpu_job_run()
 * does not run a completed job again) and only then cancel what did not
 * complete.
 */
static void vgpu_reset_device(struct vgpu_device *vdev, struct vgpu_job *job)
{
	u32 reset = atomic_inc_return(&vdev->queue_resets);
	unsigned int i;

	for (i = 0; i < vdev->nqueues; i++)
		drm_sched_stop(&vdev->queues[i].sched,
			       i == job->queue ? &job->base : NULL);
	vgpu_irq_disable(vdev);
	vgpu_write(vdev, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	WRITE_ONCE(vdev->irq_hold, false);
	/* the reset stopped every user-mode queue too */
	vgpu_userq_device_reset(vdev);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_harvest(&vdev->queues[i]);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_cancel_inflight(&vdev->queues[i], -ECANCELED, false);
	atomic_inc(&vdev->reset_count);
	atomic_inc(&vdev->device_resets);
	atomic_inc(&job->vf->reset_count);
	vgpu_job_timed_out(job);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_count_innocent(&vdev->queues[i].sched, job, reset);
	trace_vgpu_reset(job->queue, job->id);

	vgpu_mmu_hw_init(vdev);
	vgpu_write(vdev, VGPU_REG_WDOG_MS, 4 * vgpu_timeout_ms);
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_hw_init(&vdev->queues[i]);
	vgpu_irq_enable(vdev);

	for (i = 0; i < vdev->nqueues; i++)
		drm_sched_resubmit_jobs(&vdev->queues[i].sched);
	for (i = 0; i < vdev->nqueues; i++)
		drm_sched_start(&vdev->queues[i].sched);
}

/*
 * @job sits at a SEM_ACQUIRE for a job of another queue that has not
 * completed, or did so less than a timeout ago: it is not hung itself
 * (that job has its own timeout), and its own time counts from then.
 */
static bool vgpu_job_waits_for_queue(struct vgpu_job *job)
{
	ktime_t since = ktime_sub_ms(ktime_get(), vgpu_timeout_ms);
	u32 i;

	for (i = 0; i < job->nsem_deps; i++) {
		struct dma_fence *f = job->sem_deps[i];

		if (!dma_fence_is_signaled(f))
			return true;
		if (test_bit(DMA_FENCE_FLAG_TIMESTAMP_BIT, &f->flags) &&
		    ktime_after(f->timestamp, since))
			return true;
	}
	return false;
}

static enum drm_gpu_sched_stat vgpu_job_timedout(struct drm_sched_job *sched_job)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);
	struct vgpu_device *vdev = job->vdev;
	struct vgpu_exception_record *rec;
	enum vgpu_stop stop = VGPU_STOP_FAILED;
	bool stopped, done;

	mutex_lock(&vdev->reset_lock);
	done = job->hw_fence && dma_fence_is_signaled(job->hw_fence);
	if (!done && job->hw_fence && !vdev->gone &&
	    (s32)(vgpu_qread(&vdev->queues[job->queue], VGPU_Q_COMPLETED_LO) -
		  (u32)job->seq) >= 0) {
		/*
		 * It had completed: its interrupt was lost (or is late).
		 * Counted before processing signals its fence, so that whoever
		 * sees the job done sees the count too.
		 */
		atomic_inc(&vdev->lost_irqs);
		vgpu_warn(vdev, "queue %u: job %llu had completed, its interrupt did not come\n",
			  job->queue, job->id);
	}
	vgpu_queue_process(&vdev->queues[job->queue]);
	if (vdev->gone || !job->hw_fence || dma_fence_is_signaled(job->hw_fence) ||
	    vgpu_job_waits_for_queue(job)) {
		/* Spurious: put it back where drm_sched_job_timedout took it. */
		spin_lock(&sched_job->sched->job_list_lock);
		list_add(&sched_job->list, &sched_job->sched->pending_list);
		spin_unlock(&sched_job->sched->job_list_lock);
		mutex_unlock(&vdev->reset_lock);
		return DRM_GPU_SCHED_STAT_NOMINAL;
	}

	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	if (rec)
		stop = vgpu_stop_hung(vdev, job, rec);
	stopped = stop != VGPU_STOP_FAILED && READ_ONCE(vgpu_queue_reset);
	vgpu_err(vdev, "queue %u: job %llu of client %llu timed out after %u ms: %s reset\n",
		 job->queue, job->id, job->vf->client_id, vgpu_timeout_ms,
		 stopped ? "queue" : "device");
	vgpu_coredump(job, stopped && stop == VGPU_STOP_RECORD ? rec : NULL);
	kfree(rec);
	if (stopped)
		vgpu_reset_queue(vdev, job);
	else
		vgpu_reset_device(vdev, job);
	mutex_unlock(&vdev->reset_lock);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static void vgpu_job_free(struct drm_sched_job *sched_job)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);
	u32 i;

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
	if (job->xq)
		vgpu_xqueue_put(job->xq);
	vgpu_file_put(job->vf);
	kfree(job);
}

/* Called once every dependency has signalled (drm_sched_job_dependency). */
static struct dma_fence *vgpu_job_prepare(struct drm_sched_job *sched_job,
					  struct drm_sched_entity *entity)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);

	trace_vgpu_job_ready(job->queue, job->vf->client_id, job->id);
	return NULL;
}

static const struct drm_sched_backend_ops vgpu_sched_ops = {
	.prepare_job = vgpu_job_prepare,
	.run_job = vgpu_job_run,
	.timedout_job = vgpu_job_timedout,
	.free_job = vgpu_job_free,
};

/* ---- SUBMIT ---- */

static int vgpu_submit_check(struct vgpu_device *vdev,
			     const struct drm_vgpu_submit *args)
{
	const struct drm_vgpu_launch *l = &args->launch;
	int i;

	if (args->flags & ~VGPU_SUBMIT_FLAGS || args->pad)
		return -EINVAL;
	if (args->bo_handle_count > VGPU_SUBMIT_MAX_BOS ||
	    args->in_sync_count > VGPU_SUBMIT_MAX_SYNCS ||
	    args->out_sync_count > VGPU_SUBMIT_MAX_SYNCS)
		return -E2BIG;
	if (l->launch_flags & ~VGPU_LAUNCH_FLAGS_MASK)
		return -EINVAL;
	if (!l->code_size || l->code_size % 16 || l->code_va % 16 ||
	    l->code_size > vdev->max_code || l->param_size > vdev->max_param)
		return -EINVAL;
	for (i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return -EINVAL;
	return 0;
}

/*
 * Walk the chain of SUBMIT extensions at user pointer @ext: each name at
 * most once, at most VGPU_SUBMIT_MAX_EXTENSIONS of them.  The timeline
 * extension goes with VGPU_LAUNCH_TIMELINE, both or neither.
 */
static int vgpu_submit_extensions(u64 ext, const struct drm_vgpu_launch *l,
				  struct drm_vgpu_ext_timeline *tl)
{
	struct drm_vgpu_extension e;
	u32 seen = 0, n = 0;

	memset(tl, 0, sizeof(*tl));
	for (; ext; ext = e.next) {
		if (++n > VGPU_SUBMIT_MAX_EXTENSIONS)
			return -E2BIG;
		if (copy_from_user(&e, u64_to_user_ptr(ext), sizeof(e)))
			return -EFAULT;
		if (e.pad || e.name != VGPU_SUBMIT_EXT_TIMELINE ||
		    seen & BIT(e.name))
			return -EINVAL;
		seen |= BIT(e.name);
		if (copy_from_user(tl, u64_to_user_ptr(ext), sizeof(*tl)))
			return -EFAULT;
		if (tl->va % 8 || tl->size % 8 ||
		    tl->size < sizeof(struct vgpu_trace_header) ||
		    tl->size > VGPU_TRACE_MAX_BYTES)
			return -EINVAL;
	}
	if (!!(l->launch_flags & VGPU_LAUNCH_TIMELINE) !=
	    !!(seen & BIT(VGPU_SUBMIT_EXT_TIMELINE)))
		return -EINVAL;
	return 0;
}

/* Whether @obj is in @job's BO list. */
static bool vgpu_job_lists(const struct vgpu_job *job,
			   const struct drm_gem_object *obj)
{
	u32 i;

	for (i = 0; i < job->bo_count; i++)
		if (job->bos[i] == obj)
			return true;
	return false;
}

static int vgpu_submit_bos(struct vgpu_job *job, struct drm_file *file,
			   const struct drm_vgpu_submit *args)
{
	u32 i;
	int ret;

	job->bo_count = args->bo_handle_count;
	if (!job->bo_count)
		return 0;
	/* -ENOENT for an unknown handle, -EFAULT for a bad pointer. */
	ret = drm_gem_objects_lookup(file, u64_to_user_ptr(args->bo_handles),
				     job->bo_count, &job->bos);
	if (ret)
		return ret;
	/* A BO gets its pages when a job first needs them (vgpu_gem.c). */
	for (i = 0; i < job->bo_count; i++) {
		ret = vgpu_bo_make_resident(to_vgpu_bo(job->bos[i]));
		if (ret)
			return ret;
	}
	return 0;
}

/* @fence's components (a timeline point's chain, a sync_file's array). */
static int vgpu_job_add_unwrapped(struct drm_sched_job *sj,
				  struct dma_fence *fence)
{
	struct dma_fence_unwrap iter;
	struct dma_fence *f;
	int ret;

	dma_fence_unwrap_for_each(f, &iter, fence) {
		ret = drm_sched_job_add_dependency(sj, dma_fence_get(f));
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vgpu_in_syncs - make a job wait for the fences of syncobjs (SUBMIT,
 *                 VM_BIND)
 * @sj:    the job
 * @file:  the caller's file
 * @ptr:   user pointer to struct drm_vgpu_sync[]
 * @count: entries
 *
 * Return: 0, -EFAULT, -EINVAL (a pad; a syncobj or point without a
 * fence), -ENOENT (no such syncobj) or -ENOMEM.
 */
int vgpu_in_syncs(struct drm_sched_job *sj, struct drm_file *file, u64 ptr,
		  u32 count)
{
	struct drm_vgpu_sync s;
	u32 i;
	int ret;

	for (i = 0; i < count; i++) {
		struct dma_fence *fence;

		if (copy_from_user(&s, u64_to_user_ptr(ptr) + i * sizeof(s),
				   sizeof(s)))
			return -EFAULT;
		if (s.pad)
			return -EINVAL;
		ret = drm_syncobj_find_fence(file, s.handle, s.point, 0, &fence);
		if (ret)
			return ret;
		ret = vgpu_job_add_unwrapped(sj, fence);
		dma_fence_put(fence);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * vgpu_out_syncs_get - look up @count struct drm_vgpu_sync at user pointer
 *                      @ptr that are to get a fence (SUBMIT, VM_BIND)
 * @file:  the caller's file
 * @ptr:   user pointer
 * @count: entries (0: *@out is NULL)
 * @out:   the syncobjs and a chain node for each timeline point; free
 *         with vgpu_out_syncs_put() (also after vgpu_out_syncs_signal())
 *
 * Return: 0, -EFAULT, -EINVAL, -ENOENT or -ENOMEM.
 */
int vgpu_out_syncs_get(struct drm_file *file, u64 ptr, u32 count,
		       struct vgpu_out_sync **out)
{
	struct drm_vgpu_sync s;
	struct vgpu_out_sync *o;
	u32 i;

	*out = NULL;
	if (!count)
		return 0;
	o = kvcalloc(count, sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	*out = o;
	for (i = 0; i < count; i++) {
		if (copy_from_user(&s, u64_to_user_ptr(ptr) + i * sizeof(s),
				   sizeof(s)))
			return -EFAULT;
		if (s.pad)
			return -EINVAL;
		o[i].syncobj = drm_syncobj_find(file, s.handle);
		if (!o[i].syncobj)
			return -ENOENT;
		o[i].point = s.point;
		if (s.point) {
			o[i].chain = dma_fence_chain_alloc();
			if (!o[i].chain)
				return -ENOMEM;
		}
	}
	return 0;
}

/* Give each of @out @fence: binary syncobjs replace theirs, timelines add a point. */
void vgpu_out_syncs_signal(struct vgpu_out_sync *out, u32 count,
			   struct dma_fence *fence)
{
	u32 i;

	for (i = 0; i < count; i++) {
		if (out[i].chain) {
			drm_syncobj_add_point(out[i].syncobj, out[i].chain,
					      fence, out[i].point);
			out[i].chain = NULL;
		} else {
			drm_syncobj_replace_fence(out[i].syncobj, fence);
		}
	}
}

void vgpu_out_syncs_put(struct vgpu_out_sync *out, u32 count)
{
	u32 i;

	for (i = 0; out && i < count; i++) {
		if (out[i].syncobj)
			drm_syncobj_put(out[i].syncobj);
		dma_fence_chain_free(out[i].chain);
	}
	kvfree(out);
}

/*
 * After arming (the job's hardware queue is chosen): each dependency that
 * is the finished fence of a job on another hardware queue of this device
 * is waited for by a SEM_ACQUIRE on the device instead (run_job emits it,
 * vgpu_emit_acquires()): drm_sched only waits until that job is on its
 * ring (its scheduled fence), as it does by itself for jobs of the same
 * scheduler.  Other fences (other drivers, sw_sync, a failed job's) stay
 * CPU waits.  Without memory for the list every wait stays on the CPU:
 * slower, not wrong.
 */
static bool vgpu_sem_dep(struct vgpu_job *job, struct dma_fence *f, u32 *queue)
{
	struct vgpu_device *vdev = job->vdev;
	struct drm_sched_fence *sf = to_drm_sched_fence(f);
	u32 i;

	if (!sf || f != &sf->finished || f->error || sf->sched == job->base.sched ||
	    test_bit(DRM_SCHED_FENCE_DONT_PIPELINE, &f->flags) ||
	    dma_fence_is_signaled(f))
		return false;
	for (i = 0; i < vdev->nqueues; i++) {
		if (sf->sched == &vdev->queues[i].sched) {
			*queue = i;
			return true;
		}
	}
	return false;
}

static void vgpu_job_sem_deps(struct vgpu_job *job)
{
	struct dma_fence *f, *old;
	unsigned long index, queues = 0;
	u32 n = 0, q;

	if (!vgpu_has_sems(job->vdev) || !READ_ONCE(vgpu_sem_deps))
		return;
	xa_for_each(&job->base.dependencies, index, f)
		n += vgpu_sem_dep(job, f, &q);
	if (!n)
		return;
	job->sem_deps = kcalloc(n, sizeof(*job->sem_deps), GFP_KERNEL);
	if (!job->sem_deps)
		return;
	xa_for_each(&job->base.dependencies, index, f) {
		if (job->nsem_deps == n || !vgpu_sem_dep(job, f, &q))
			continue;
		/* the entry's reference moves to sem_deps */
		old = xa_store(&job->base.dependencies, index,
			       dma_fence_get(&to_drm_sched_fence(f)->scheduled),
			       GFP_KERNEL);
		if (xa_is_err(old)) {
			dma_fence_put(&to_drm_sched_fence(f)->scheduled);
			continue;
		}
		job->sem_deps[job->nsem_deps++] = f;
		queues |= BIT(q);
	}
	/* one ring slot per SEM_ACQUIRE */
	job->base.credits = VGPU_JOB_CREDITS + hweight_long(queues);
}

static int vgpu_submit(struct vgpu_device *vdev, struct vgpu_file *vf,
		       struct drm_file *file, struct drm_vgpu_submit *args,
		       const struct drm_vgpu_ext_timeline *tl);
static int vgpu_submit_locked(struct vgpu_device *vdev, struct vgpu_file *vf,
			      struct vgpu_xqueue *xq, struct drm_file *file,
			      struct drm_vgpu_submit *args,
			      const struct drm_vgpu_ext_timeline *tl);

int vgpu_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_submit *args = data;
	struct drm_vgpu_ext_timeline tl;
	int idx, ret;

	ret = vgpu_submit_check(vdev, args);
	if (ret)
		return ret;
	ret = vgpu_submit_extensions(args->extensions, &args->launch, &tl);
	if (ret)
		return ret;
	/* vgpu_remove() waits for submits in progress (drm_dev_unplug). */
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	ret = vgpu_submit(vdev, vf, file, args, &tl);
	drm_dev_exit(idx);
	return ret;
}

static bool vgpu_bo_job_writes(struct drm_gem_object *obj)
{
	return !(to_vgpu_bo(obj)->flags & VGPU_BO_READ_ONLY);
}

static void vgpu_job_done_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct vgpu_job *job = container_of(cb, struct vgpu_job, done_cb);

	atomic64_inc(&job->xq->completed);
}

static int vgpu_submit(struct vgpu_device *vdev, struct vgpu_file *vf,
		       struct drm_file *file, struct drm_vgpu_submit *args,
		       const struct drm_vgpu_ext_timeline *tl)
{
	struct vgpu_xqueue *xq;
	int ret;

	xq = vgpu_xqueue_lookup(vf, args->queue);
	if (!xq)
		return -ENOENT;
	/* Held until the job is pushed: QUEUE_DESTROY waits for it. */
	mutex_lock(&xq->lock);
	if (xq->dead)
		ret = -ENOENT;
	else if (atomic_read(&xq->banned))
		ret = -ECANCELED;
	else
		ret = vgpu_submit_locked(vdev, vf, xq, file, args, tl);
	mutex_unlock(&xq->lock);
	vgpu_xqueue_put(xq);
	return ret;
}

static int vgpu_submit_locked(struct vgpu_device *vdev, struct vgpu_file *vf,
			      struct vgpu_xqueue *xq, struct drm_file *file,
			      struct drm_vgpu_submit *args,
			      const struct drm_vgpu_ext_timeline *tl)
{
	struct vgpu_out_sync *out = NULL;
	struct drm_gem_object *obj, *vm_obj;
	struct drm_exec exec;
	struct vgpu_job_result *r;
	struct dma_fence *done;
	struct vgpu_job *job;
	unsigned long flags;
	u64 job_id;
	u32 i;
	int ret;

	ret = vgpu_hist_alloc(vf);
	if (ret)
		return ret;
	job = vgpu_should_fail() ? NULL : kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return -ENOMEM;
	job->vdev = vdev;
	job->launch = args->launch;
	job->trace_va = tl->va;
	job->trace_size = (u32)tl->size;
	INIT_LIST_HEAD(&job->link);
	ret = drm_sched_job_init(&job->base, &xq->entity,
				 VGPU_JOB_CREDITS, vf, file->client_id);
	if (ret) {
		kfree(job);
		return ret;
	}
	kref_get(&vf->refcount);
	job->vf = vf;
	job->as = vgpu_as_get(xq->vm ? vgpu_vm_as(xq->vm) : vf->as);
	kref_get(&xq->refcount);
	job->xq = xq;

	ret = vgpu_submit_bos(job, file, args);
	if (ret)
		goto err_job;
	ret = vgpu_in_syncs(&job->base, file, args->in_syncs,
			    args->in_sync_count);
	if (ret)
		goto err_job;
	ret = vgpu_out_syncs_get(file, args->out_syncs, args->out_sync_count,
				 &out);
	if (ret)
		goto err_out;

	/*
	 * Every BO locked with one fence slot reserved; a BO listed twice is
	 * locked once.  The job writes every BO it lists, except read-only
	 * ones (the device cannot write them): it reads those, so it waits
	 * only for their writers and jobs that merely read them (a program's
	 * code) run concurrently.
	 */
	vm_obj = xq->vm ? vgpu_vm_resv_obj(xq->vm) : NULL;
	drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT |
		      DRM_EXEC_IGNORE_DUPLICATES, job->bo_count + 1);
	drm_exec_until_all_locked(&exec) {
		ret = drm_exec_prepare_array(&exec, job->bos, job->bo_count, 1);
		drm_exec_retry_on_contention(&exec);
		if (!ret && vm_obj) {
			ret = vgpu_vm_lock_objects(xq->vm, &exec);
			drm_exec_retry_on_contention(&exec);
		}
		if (ret)
			goto err_unlock;
	}
	drm_exec_for_each_locked_object(&exec, obj) {
		/* implicit sync for the listed BOs only, as xe and panthor */
		if (!vgpu_job_lists(job, obj))
			continue;
		ret = drm_sched_job_add_implicit_dependencies(&job->base, obj,
							      vgpu_bo_job_writes(obj));
		if (ret)
			goto err_unlock;
	}

	/* Arming picks the hardware queue (drm_sched_entity_select_rq). */
	drm_sched_job_arm(&job->base);
	job->queue = container_of(job->base.sched, struct vgpu_queue, sched)->idx;
	WRITE_ONCE(xq->hw_queue, job->queue);
	vgpu_job_sem_deps(job);
	job->id = atomic64_inc_return(&vf->next_job_id);
	spin_lock_irqsave(&vf->hist_lock, flags);
	r = vgpu_hist(vf, job->id);
	memset(r, 0, sizeof(*r));
	r->id = job->id;
	r->state = VGPU_JOB_QUEUED;
	r->queue = xq->id;
	r->hw_queue = job->queue;
	spin_unlock_irqrestore(&vf->hist_lock, flags);

	done = dma_fence_get(&job->base.s_fence->finished);
	atomic64_inc(&xq->submitted);
	if (dma_fence_add_callback(done, &job->done_cb, vgpu_job_done_cb))
		atomic64_inc(&xq->completed);
	drm_exec_for_each_locked_object(&exec, obj) {
		/*
		 * The VM's (synchronous binds wait for every job of the VM)
		 * and its external objects not listed: bookkeeping only, no
		 * implicit sync (drm_gpuvm_resv_add_fence()'s usage)
		 */
		if (!vgpu_job_lists(job, obj))
			dma_resv_add_fence(obj->resv, done, DMA_RESV_USAGE_BOOKKEEP);
		else
			dma_resv_add_fence(obj->resv, done, vgpu_bo_job_writes(obj) ?
					   DMA_RESV_USAGE_WRITE : DMA_RESV_USAGE_READ);
	}
	trace_vgpu_job_submit(job->queue, vf->client_id, job->id, done->context,
			      done->seqno);
	if (trace_vgpu_job_dep_enabled()) {
		struct dma_fence *dep;
		unsigned long index;

		xa_for_each(&job->base.dependencies, index, dep)
			trace_vgpu_job_dep(vf->client_id, job->id, dep->context,
					   dep->seqno);
	}
	/*
	 * Once pushed, the job may run, complete and be freed (with its BO
	 * array) before push_job returns: nothing of it is touched after.
	 * The reservations are unlocked first; they already hold its fence.
	 */
	job_id = job->id;
	drm_exec_fini(&exec);
	drm_sched_entity_push_job(&job->base);

	vgpu_out_syncs_signal(out, args->out_sync_count, done);
	vgpu_out_syncs_put(out, args->out_sync_count);
	dma_fence_put(done);
	args->job_id = job_id;
	return 0;

err_unlock:
	drm_exec_fini(&exec);
err_out:
	vgpu_out_syncs_put(out, args->out_sync_count);
err_job:
	drm_sched_job_cleanup(&job->base);
	for (i = 0; i < job->bo_count; i++)
		if (job->bos && job->bos[i])
			drm_gem_object_put(job->bos[i]);
	kvfree(job->bos);
	vgpu_as_put(job->as);
	vgpu_xqueue_put(xq);
	vgpu_file_put(vf);
	kfree(job);
	return ret;
}

int vgpu_ioctl_get_job(struct drm_device *dev, void *data,
		       struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_get_job *args = data;
	struct vgpu_exception_record *exc;
	struct vgpu_job_result *r;
	unsigned long flags;
	u32 n;
	int ret = 0;

	if (args->pad || args->pad2)
		return -EINVAL;
	exc = kmalloc(sizeof(*exc), GFP_KERNEL);
	if (!exc)
		return -ENOMEM;
	spin_lock_irqsave(&vf->hist_lock, flags);
	r = vgpu_hist(vf, args->job_id);
	if (!args->job_id || !r || r->id != args->job_id) {
		ret = -ENOENT;
	} else {
		args->state = r->state;
		args->error = r->error;
		args->hw_status = r->hw_status;
		args->queue = r->queue;
		args->hw_queue = r->hw_queue;
		args->warp_insns = r->warp_insns;
		args->elapsed_ns = r->elapsed_ns;
		memcpy(exc, &r->exc, sizeof(*exc));
	}
	spin_unlock_irqrestore(&vf->hist_lock, flags);
	if (!ret && args->exception) {
		n = min_t(u32, args->exception_size, sizeof(*exc));
		if (copy_to_user(u64_to_user_ptr(args->exception), exc, n))
			ret = -EFAULT;
	}
	kfree(exc);
	return ret;
}

/* ---- set-up ---- */

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
		vgpu_queue_process(&vdev->queues[i]);
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
#endif
