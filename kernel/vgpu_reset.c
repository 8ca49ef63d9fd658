// SPDX-License-Identifier: GPL-2.0
/*
 * A job that times out (vgpu_job.c's DOC: "Timeout"): the hung hardware
 * queue is stopped so that the device writes the launch's record (its
 * warp states feed the wait-for graph and the devcoredump), then that
 * queue alone is reset, or the whole device when the queue does not stop
 * (or with queue_reset=0).
 *
 * The timeout handler is a fence-signalling critical section (its jobs'
 * fences, and every fence behind them, wait for it): annotated with
 * dma_fence_begin_signalling(), it allocates nothing that may recurse into
 * reclaim (lockdep, primed at boot with reclaim -> fence wait, reports
 * any GFP_KERNEL allocation or lock that waits on one).  The record of the
 * hung launch and the devcoredump's text are written into memory taken
 * at probe (vgpu_reset_init()); a work item outside the section hands
 * the text to dev_coredumpv(), which allocates.
 */
#include <linux/delay.h>
#include <linux/devcoredump.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include "vgpu_job.h"
#include "vgpu_waitgraph.h"
#include "vgpu_trace.h"

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

#define VGPU_COREDUMP_BYTES 32768

/**
 * struct vgpu_coredump - what a timeout writes without allocating
 * @work: hands @buf to dev_coredumpv() (outside the signalling section)
 * @vdev: the device
 * @busy: 1 from the text's start until @work has handed it over: a
 *        timeout meanwhile makes no dump (a device keeps one at a time)
 * @rec:  the hung launch's record (vgpu_stop_hung()), under reset_lock
 * @g:    the wait-for graph built from @rec
 * @n:    bytes of text in @buf
 * @buf:  the text
 */
struct vgpu_coredump {
	struct work_struct work;
	struct vgpu_device *vdev;
	atomic_t busy;
	struct vgpu_exception_record rec;
	struct vgpu_waitgraph g;
	size_t n;
	char buf[VGPU_COREDUMP_BYTES];
};

static void vgpu_coredump_work(struct work_struct *work)
{
	struct vgpu_coredump *cd = container_of(work, struct vgpu_coredump, work);
	char *buf = vmalloc(cd->n);	/* dev_coredumpv() vfree()s it */

	if (buf) {
		memcpy(buf, cd->buf, cd->n);
		dev_coredumpv(cd->vdev->drm.dev, buf, cd->n, GFP_KERNEL);
	}
	atomic_set_release(&cd->busy, 0);
}

/* Probe: the timeout's memory (device-managed). */
int vgpu_reset_init(struct vgpu_device *vdev)
{
	struct vgpu_coredump *cd = drmm_kzalloc(&vdev->drm, sizeof(*cd), GFP_KERNEL);

	if (!cd)
		return -ENOMEM;
	INIT_WORK(&cd->work, vgpu_coredump_work);
	cd->vdev = vdev;
	vdev->coredump = cd;
	return 0;
}

/* Removal, once no timeout can run: the last dump is handed over. */
void vgpu_reset_fini(struct vgpu_device *vdev)
{
	if (vdev->coredump)
		flush_work(&vdev->coredump->work);
	flush_work(&vdev->uqs.reset_work);
}

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
	struct vgpu_coredump *cd = vdev->coredump;
	const struct drm_vgpu_launch *l = &job->launch;
	struct vgpu_dump d = { .buf = cd->buf, .size = sizeof(cd->buf) };
	unsigned int i;

	/* (none on KUnit's mock devices) */
	if (!cd || atomic_cmpxchg_acquire(&cd->busy, 0, 1))
		return;		/* the last one is still being handed over */
	vgpu_dump_print(&d,
			"vgpu devcoredump: job timeout\nclient %llu job %llu queue %u hw_queue %u asid %u\n"
			"code_va 0x%llx code_size %u entry %u grid %ux%ux%u block %ux%ux%u\n"
			"smem %u param_va 0x%llx param_size %u flags 0x%x budget %llu\n",
			job->vf->client_id, job->id, job->xq->id, job->queue,
			READ_ONCE(job->as->asid),
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
	if (rec) {
		struct vgpu_waitgraph *g = &cd->g;
		u64 threads = (u64)l->block[0] * l->block[1] * l->block[2];

		vgpu_dump_print(&d, "stopped: exception %u cta (%u,%u,%u) warp %u pc 0x%x: %s\n"
				"wait-for graph (Graphviz DOT):\n",
				rec->code, rec->cta[0], rec->cta[1], rec->cta[2], rec->warp,
				rec->pc, rec->msg);
		vgpu_wg_init(g, rec, (u32)DIV_ROUND_UP(threads, VGPU_WARP_SIZE));
		vgpu_wg_print(g, "the job that timed out", vgpu_dump_print, &d);
	}
	cd->n = d.n;
	queue_work(system_wq, &cd->work);
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
	vgpu_userq_reset_begin(vdev);
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

enum drm_gpu_sched_stat vgpu_job_timedout(struct drm_sched_job *sched_job)
{
	struct vgpu_job *job = to_vgpu_job(sched_job);
	struct vgpu_device *vdev = job->vdev;
	struct vgpu_exception_record *rec, mock_rec;
	enum vgpu_stop stop;
	bool stopped, done, cookie;

	/*
	 * reset_lock is taken before the signalling section begins:
	 * drm_sched_stop() waits (dma_fence_wait()) for the finished fence of
	 * a job whose hardware fence has signalled, under reset_lock, which
	 * lockdep would otherwise see as a fence wait inside a section that
	 * holds the lock.  That the holders of reset_lock never allocate is
	 * checked instead by priming reclaim -> reset_lock (vgpu_probe()).
	 */
	mutex_lock(&vdev->reset_lock);
	cookie = dma_fence_begin_signalling();
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
	vgpu_queue_process(&vdev->queues[job->queue], true);
	if (vdev->gone || !job->hw_fence || dma_fence_is_signaled(job->hw_fence) ||
	    vgpu_job_waits_for_queue(job)) {
		/* Spurious: put it back where drm_sched_job_timedout took it. */
		spin_lock(&sched_job->sched->job_list_lock);
		list_add(&sched_job->list, &sched_job->sched->pending_list);
		spin_unlock(&sched_job->sched->job_list_lock);
		dma_fence_end_signalling(cookie);
		mutex_unlock(&vdev->reset_lock);
		return DRM_GPU_SCHED_STAT_NOMINAL;
	}

	/* under reset_lock (KUnit's mock devices have none: the stack) */
	rec = vdev->coredump ? &vdev->coredump->rec : &mock_rec;
	memset(rec, 0, sizeof(*rec));
	stop = vgpu_stop_hung(vdev, job, rec);
	stopped = stop != VGPU_STOP_FAILED && READ_ONCE(vgpu_queue_reset);
	vgpu_err(vdev, "queue %u: job %llu of client %llu timed out after %u ms: %s reset\n",
		 job->queue, job->id, job->vf->client_id, vgpu_timeout_ms,
		 stopped ? "queue" : "device");
	vgpu_coredump(job, stopped && stop == VGPU_STOP_RECORD ? rec : NULL);
	if (stopped)
		vgpu_reset_queue(vdev, job);
	else
		vgpu_reset_device(vdev, job);
	dma_fence_end_signalling(cookie);
	mutex_unlock(&vdev->reset_lock);
	return DRM_GPU_SCHED_STAT_NOMINAL;
}
