// SPDX-License-Identifier: MIT
/*
 * libvgpu user-mode queues (uapi/vgpu_drm.h "User-mode queues"): the
 * launch path without an ioctl.  A queue made by vgpu_queue_new_user()
 * maps its ring, completion ring and doorbell page; a launch on it writes
 * two commands, the LAUNCH and a SEM_RELEASE (with an interrupt) of the
 * job's sequence number into the queue's fence page, and rings the
 * doorbell with one store (the sim backend runs them in that call).  A
 * job is complete once the fence has reached its number: vgpu_job_wait()
 * reads the fence, and sleeps in WAIT_USER_FENCE only when it must; how
 * the launch ended comes from its completion record.
 *
 * The first failed launch stops the queue (the device's rule): its job
 * reports the failure, jobs behind it -ECANCELED, and later launches on
 * the queue -EIO.  Free it and make another.
 *
 * Every job takes two ring slots: at most (entries - 1) / 2 are in flight;
 * a launch past that waits for the oldest.  Locking: @lock orders the
 * launches of one queue (ring tail, sequence numbers).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_priv.h"

static void userq_put(struct vgpu_userq *uq)
{
	struct drm_vgpu_userq_destroy d = { .queue_id = uq->id };
	struct vgpu_device *dev = uq->dev;

	if (atomic_fetch_sub(&uq->refs, 1) != 1)
		return;
	/* stopped by the destroy: what its launches read is idle */
	pthread_mutex_lock(&dev->param_lock);
	vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_USERQ_DESTROY, &d);
	for (unsigned int i = 0; i < dev->nparam_bos; i++) {
		if (dev->param_bos[i].uq == uq) {
			dev->param_bos[i].uq = NULL;
			dev->param_bos[i].state = PARAM_IDLE;
		}
	}
	pthread_mutex_unlock(&dev->param_lock);
	dev->ops->munmap(dev, uq->ring, (uint64_t)uq->entries * VGPU_CMD_BYTES);
	dev->ops->munmap(dev, (void *)uq->cpl, uq->cpl_bytes);
	dev->ops->munmap(dev, (void *)uq->db, VGPU_DOORBELL_PAGE);
	vgpu_bo_unmap(uq->fence);
	vgpu_bo_free(uq->fence);
	pthread_mutex_destroy(&uq->lock);
	free(uq);
	vgpu_dev_put(dev);
}

void vgpu_userq_get(struct vgpu_userq *uq)
{
	atomic_fetch_add(&uq->refs, 1);
}

void vgpu_userq_put(struct vgpu_userq *uq)
{
	if (uq)
		userq_put(uq);
}

int vgpu_queue_new_user(struct vgpu_device *dev, uint32_t priority,
			struct vgpu_queue **out)
{
	struct drm_vgpu_userq_create c = { .priority = priority };
	struct vgpu_userq *uq;
	struct vgpu_queue *q;
	void *ring = NULL, *cpl = NULL, *db = NULL, *fence = NULL;
	uint64_t cpl_bytes;
	int ret;

	if (!out)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	q = calloc(1, sizeof(*q));
	uq = calloc(1, sizeof(*uq));
	if (!q || !uq) {
		free(q);
		free(uq);
		return -ENOMEM;
	}
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_USERQ_CREATE, &c);
	if (ret)
		goto err_free;
	cpl_bytes = ((uint64_t)c.entries * sizeof(struct vgpu_completion) + 4095) &
		    ~4095ull;
	ret = dev->ops->mmap(dev, c.ring_offset, (uint64_t)c.entries * VGPU_CMD_BYTES,
			     &ring);
	if (!ret)
		ret = dev->ops->mmap_ro(dev, c.cpl_offset, cpl_bytes, &cpl);
	if (!ret)
		ret = dev->ops->mmap(dev, c.doorbell_offset, VGPU_DOORBELL_PAGE, &db);
	if (!ret)
		ret = vgpu_bo_new(dev, 4096, VGPU_BO_NO_EXEC, &uq->fence);
	if (!ret)
		ret = vgpu_bo_map(uq->fence, &fence);
	if (ret)
		goto err_unmap;
	pthread_mutex_init(&uq->lock, NULL);
	atomic_init(&uq->refs, 1);
	vgpu_dev_get(dev);
	uq->dev = dev;
	uq->id = c.queue_id;
	uq->hw_queue = c.hw_queue;
	uq->entries = c.entries;
	uq->cpl_bytes = cpl_bytes;
	uq->ring = ring;
	uq->cpl = cpl;
	uq->db = db;
	uq->fence_map = fence;
	uq->fence_va = vgpu_bo_gpu_address(uq->fence);
	*uq->fence_map = 0;
	q->dev = dev;
	q->id = c.queue_id;
	q->uq = uq;
	vgpu_dev_get(dev);
	*out = q;
	return 0;

err_unmap:
	if (uq->fence)
		vgpu_bo_free(uq->fence);
	if (db)
		dev->ops->munmap(dev, db, VGPU_DOORBELL_PAGE);
	if (cpl)
		dev->ops->munmap(dev, cpl, cpl_bytes);
	if (ring)
		dev->ops->munmap(dev, ring, (uint64_t)c.entries * VGPU_CMD_BYTES);
	vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_USERQ_DESTROY,
		       &(struct drm_vgpu_userq_destroy){ .queue_id = c.queue_id });
err_free:
	free(q);
	free(uq);
	return ret;
}

/* Jobs up to @seq have completed (the fence has reached it). */
bool vgpu_userq_seq_done(const struct vgpu_userq *uq, uint64_t seq)
{
	return __atomic_load_n(uq->fence_map, __ATOMIC_ACQUIRE) >= seq;
}

/*
 * Wait until job @seq of @uq has completed: 0, -ETIME at @deadline
 * (absolute), -EIO when the queue stopped first.
 */
int vgpu_userq_wait_seq(struct vgpu_userq *uq, uint64_t seq, int64_t deadline)
{
	struct drm_vgpu_wait_user_fence w = {
		.addr = (uintptr_t)uq->fence_map,
		.value = seq,
		.mask = ~0ull,
		.timeout_ns = deadline,
		.op = VGPU_UFENCE_OP_GTE,
		.queue_id = uq->id,
	};
	int ret;

	if (vgpu_userq_seq_done(uq, seq))
		return 0;
	do
		ret = vgpu_dev_ioctl(uq->dev, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w);
	while (ret == -ETIME && vgpu_deadline_ahead(deadline));
	/* a stop after the fence got there: the job had completed */
	if (ret == -EIO && vgpu_userq_seq_done(uq, seq))
		ret = 0;
	if (ret == -EIO)
		atomic_store(&uq->stopped, true);
	return ret;
}

int vgpu_userq_launch(struct vgpu_userq *uq, const struct drm_vgpu_launch *l,
		      uint64_t trace_va, uint64_t trace_size, uint64_t *seq,
		      uint32_t *slot)
{
	struct vgpu_cmd_launch cl = {
		.hdr = { .opcode = VGPU_CMD_LAUNCH },
		.trace_va = trace_va,
		.trace_size = (uint32_t)trace_size,
	};
	struct vgpu_cmd_sem rel = {
		.hdr = { .opcode = VGPU_CMD_SEM_RELEASE, .flags = VGPU_CMD_F_IRQ },
		.addr = uq->fence_va,
	};
	uint64_t max_jobs = (uq->entries - 1) / 2;
	uint32_t t;
	int ret;

#define X(f, b)	(cl.f = l->f)
	VGPU_CMD_LAUNCH_SHARED(X);
#undef X

	pthread_mutex_lock(&uq->lock);
	rel.payload = uq->seq + 1;
	/* room for two commands: the job max_jobs back has completed */
	if (rel.payload > max_jobs) {
		ret = vgpu_userq_wait_seq(uq, rel.payload - max_jobs, INT64_MAX);
		if (ret)
			goto out;
	}
	/*
	 * A queue known to have stopped runs nothing more: fail now.  (Not
	 * known until a wait has seen it: reading the doorbell page's status
	 * here would cost a register read, a VM exit, per launch.)
	 */
	if (atomic_load(&uq->stopped)) {
		ret = -EIO;
		goto out;
	}
	t = uq->tail;
	memcpy(uq->ring + (size_t)t * VGPU_CMD_BYTES, &cl, sizeof(cl));
	memcpy(uq->ring + (size_t)((t + 1) % uq->entries) * VGPU_CMD_BYTES, &rel,
	       sizeof(rel));
	uq->tail = (t + 2) % uq->entries;
	uq->seq = rel.payload;
	*seq = rel.payload;
	*slot = t;
	uq->dev->ops->doorbell(uq->dev, uq->id, uq->db, uq->tail);
	ret = 0;
out:
	pthread_mutex_unlock(&uq->lock);
	return ret;
}

/* vgpu_hw_status_errno() of the driver */
static int status_errno(uint32_t status, const struct vgpu_exception_record *exc)
{
	switch (status) {
	case VGPU_ERR_NONE:
		return 0;
	case VGPU_ERR_MMU_FAULT:
		return EFAULT;
	case VGPU_ERR_TIMEOUT:
		return ETIMEDOUT;
	case VGPU_ERR_ABORTED:
		return ECANCELED;
	case VGPU_ERR_EXCEPTION:
		return exc->code == VGPU_EXC_GLOBAL_FAULT ? EFAULT : EIO;
	default:
		return EIO;
	}
}

int vgpu_userq_job_fetch(struct vgpu_job *job, int64_t timeout_ns)
{
	struct vgpu_userq *uq = job->uq;
	struct vgpu_completion c;
	int ret;

	if (job->done)
		return 0;
	ret = vgpu_userq_wait_seq(uq, job->useq, vgpu_abs_timeout(timeout_ns));
	if (ret && ret != -EIO)
		return ret;
	/* the launch was command 2 * seq - 1 of the queue */
	memcpy(&c, (const void *)&uq->cpl[job->uslot], sizeof(c));
	memset(&job->status, 0, sizeof(job->status));
	job->status.job_id = job->id;
	job->status.queue = uq->id;
	job->status.hw_queue = uq->hw_queue;
	if (c.seq == 2 * job->useq - 1) {
		/* the hardware queue that ran it (queues are mapped in and out) */
		job->status.hw_queue = c.queue;
		uq->hw_queue = c.queue;
		job->status.hw_status = c.status;
		job->status.warp_insns = c.warp_insns;
		job->status.elapsed_ns = c.elapsed_ns;
		job->exc = c.exc;
	} else if (ret) {
		/* behind the command that stopped the queue: never ran */
		job->status.hw_status = VGPU_ERR_ABORTED;
	}
	job->status.error = ret ? status_errno(job->status.hw_status, &job->exc) : 0;
	if (ret && !job->status.error)
		job->status.error = ECANCELED; /* its release failed */
	job->status.state = job->status.error ? VGPU_JOB_FAILED : VGPU_JOB_DONE;
	job->done = true;
	return 0;
}
