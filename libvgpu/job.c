// SPDX-License-Identifier: MIT
/*
 * libvgpu jobs: the record a launch returns (kept per thread for the next
 * launch once freed), the pool of binary syncobjs that signal their
 * completion, and waiting for them and asking how they ended (launch.c
 * makes them; exc_describe.c explains their exceptions).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "thread_block.h"
#include "vgpu_core.h" /* vgpu_zero() */
#include "vgpu_priv.h"

/* A binary syncobj for a job's completion (pooled). */
int vgpu_job_sync_get(struct vgpu_device *dev, uint32_t *handle)
{
	struct drm_syncobj_create c = { 0 };
	int ret;

	pthread_mutex_lock(&dev->lock);
	if (dev->njob_syncs) {
		*handle = dev->job_syncs[--dev->njob_syncs];
		pthread_mutex_unlock(&dev->lock);
		return 0;
	}
	pthread_mutex_unlock(&dev->lock);
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_SYNCOBJ_CREATE, &c);
	if (!ret)
		*handle = c.handle;
	return ret;
}

void vgpu_job_sync_put(struct vgpu_device *dev, uint32_t handle)
{
	pthread_mutex_lock(&dev->lock);
	if (dev->njob_syncs == dev->job_syncs_cap) {
		unsigned int cap = dev->job_syncs_cap ? 2 * dev->job_syncs_cap : 8;
		uint32_t *n = realloc(dev->job_syncs, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&dev->lock);
			vgpu_dev_ioctl(dev, DRM_IOCTL_SYNCOBJ_DESTROY,
				       &(struct drm_syncobj_destroy){
					       .handle = handle });
			return;
		}
		dev->job_syncs = n;
		dev->job_syncs_cap = cap;
	}
	dev->job_syncs[dev->njob_syncs++] = handle;
	pthread_mutex_unlock(&dev->lock);
}

/*
 * One freed job record kept per thread for its next launch, in the
 * thread's block (thread_block.h): no atomic read-modify-write (the
 * device-wide slot that was here took two a launch, and
 * pthread_getspecific() costs as much); freed when the thread exits.
 */
struct vgpu_thread {
	struct vgpu_job *job_spare;
};

static void vgpu_thread_fini(struct vgpu_thread *t)
{
	free(t->job_spare);
}

extern __thread struct vgpu_thread *vgpu_tls __attribute__((tls_model("initial-exec")));
extern const struct vgpu_thread vgpu_thread_none;
struct vgpu_thread *vgpu_thread_new(void);
VGPU_THREAD_BLOCKS(vgpu_thread, vgpu_tls, vgpu_thread_none, vgpu_thread_new, vgpu_thread_fini)

/*
 * A job record for a launch: the thread's spare or a new one, zeroed
 * (its exception record as far as its code: struct vgpu_job).
 * Not calloc() (nor malloc() and memset(), which GCC makes calloc()):
 * glibc's calloc does not take the thread cache.  vgpu_zero(), not an
 * initializer, which GCC makes a `rep stosq` (vgpu_core.h).
 */
struct vgpu_job *vgpu_job_alloc(void)
{
	struct vgpu_thread *t = vgpu_tls;
	struct vgpu_job *job = NULL;

	if (t && t->job_spare) {
		job = t->job_spare;
		t->job_spare = NULL;
	}
	if (!job)
		job = malloc(sizeof(*job));
	if (job) {
		vgpu_zero(job, offsetof(struct vgpu_job, exc));
		job->exc.code = VGPU_EXC_NONE;
		job->param_idx = -1;
	}
	return job;
}

/* @job's record is done with: the thread's spare if it has none. */
static void job_release(struct vgpu_job *job)
{
	struct vgpu_thread *t = vgpu_tls ? vgpu_tls : vgpu_thread_new();

	if (t != &vgpu_thread_none && !t->job_spare) {
		t->job_spare = job;
		return;
	}
	free(job);
}

/* @job's launch @l of @k was accepted as job @id of @dev. */
void vgpu_job_launched(struct vgpu_job *job, struct vgpu_device *dev,
		       const struct vgpu_obj_kernel *k, uint64_t id,
		       const struct drm_vgpu_launch *l)
{
	uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];

	vgpu_dev_get(dev);
	job->dev = dev;
	memcpy(job->kernel, k->name, sizeof(job->kernel));
	job->kernel[sizeof(job->kernel) - 1] = '\0';
	job->entry = k->entry;
	job->id = id;
	job->nwarps = (uint32_t)((threads + VGPU_WARP_SIZE - 1) / VGPU_WARP_SIZE);
	memcpy(job->grid, l->grid, sizeof(job->grid));
	memcpy(job->block, l->block, sizeof(job->block));
	memcpy(job->cluster, l->cluster, sizeof(job->cluster));
	job->tl_wanted = l->launch_flags & VGPU_LAUNCH_TIMELINE;
}

/* ---- jobs ---- */

/* Fetch how the job ended (it has completed). */
static int job_fetch(struct vgpu_job *job)
{
	struct drm_vgpu_get_job g = {
		.job_id = job->id,
		.exception = (uintptr_t)&job->exc,
		.exception_size = sizeof(job->exc),
	};
	int ret;

	if (job->done)
		return 0;
	ret = vgpu_dev_ioctl(job->dev, DRM_IOCTL_VGPU_GET_JOB, &g);
	if (ret)
		return ret;
	job->status = g;
	job->done = g.state == VGPU_JOB_DONE || g.state == VGPU_JOB_FAILED;
	return 0;
}

int vgpu_job_wait(struct vgpu_job *job, int64_t timeout_ns)
{
	int ret;

	if (!job->done) {
		if (job->uq)
			ret = vgpu_userq_job_fetch(job, timeout_ns);
		else
			ret = job->sync ? vgpu_sync_wait(job->dev, job->sync, 0, timeout_ns) : 0;
		if (ret)
			return ret;
		ret = job_fetch(job);
		if (ret)
			return ret;
		if (!job->done)
			return -EIO; /* signalled yet not complete: cannot be */
		vgpu_param_page_release(job, true);
	}
	return job->status.state == VGPU_JOB_DONE ? 0 : -(int)job->status.error;
}

int vgpu_job_status(struct vgpu_job *job, struct vgpu_job_status *st)
{
	struct drm_vgpu_get_job g = { .job_id = job->id };
	int ret;

	if (!st)
		return -EINVAL;
	if (job->uq && !job->done && !vgpu_userq_job_fetch(job, 0))
		vgpu_param_page_release(job, true);
	if (job->uq && !job->done) {
		g.state = VGPU_JOB_RUNNING; /* on the device, as far as we know */
		g.queue = job->uq->id;
		g.hw_queue = job->uq->hw_queue;
	} else if (job->done) {
		g = job->status;
	} else {
		ret = vgpu_dev_ioctl(job->dev, DRM_IOCTL_VGPU_GET_JOB, &g);
		if (ret)
			return ret;
	}
	*st = (struct vgpu_job_status){
		.state = g.state,
		.error = g.error,
		.hw_status = g.hw_status,
		.queue = g.queue,
		.hw_queue = g.hw_queue,
		.warp_insns = g.warp_insns,
		.elapsed_ns = g.elapsed_ns,
	};
	return 0;
}

int vgpu_job_exception(struct vgpu_job *job, struct vgpu_exception_record *rec)
{
	int ret;

	if (!rec)
		return -EINVAL;
	if (!job->done) {
		if (job->uq)
			ret = vgpu_userq_job_fetch(job, 0);
		else
			ret = job->sync ? vgpu_sync_wait(job->dev, job->sync, 0, 0) : 0;
		if (ret == -ETIME)
			return -EBUSY;
		if (!ret)
			ret = job_fetch(job);
		if (ret)
			return ret;
		if (job->done)
			vgpu_param_page_release(job, true);
	}
	if (job->exc.code == VGPU_EXC_NONE)
		return -ENODATA;
	*rec = job->exc;
	return 0;
}

void vgpu_job_free(struct vgpu_job *job)
{
	struct vgpu_device *dev;

	if (!job)
		return;
	vgpu_param_page_release(job, job->done);
	if (job->sync)
		vgpu_job_sync_put(job->dev, job->sync);
	vgpu_userq_put(job->uq);
	free(job->printf_text);
	free(job->tl_ev);
	dev = job->dev;
	job_release(job);
	vgpu_dev_put(dev);
}

const char *vgpu_job_printf(struct vgpu_job *job)
{
	return job ? job->printf_text : NULL;
}
