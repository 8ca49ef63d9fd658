// SPDX-License-Identifier: GPL-2.0
/*
 * DRM_IOCTL_VGPU_SUBMIT and DRM_IOCTL_VGPU_GET_JOB (vgpu_job.c's DOC says
 * what a submit builds): the checks, the BO list and its reservations,
 * the in- and out-syncs, the dependencies that wait on the device
 * (SEM_ACQUIRE), and a job's outcome from its file's history.
 */
#include <linux/dma-fence-chain.h>
#include <linux/dma-fence-unwrap.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <drm/drm_drv.h>
#include <drm/drm_exec.h>
#include <drm/drm_gem.h>
#include <drm/drm_syncobj.h>
#include "vgpu_job.h"
#include "vgpu_trace.h"

int vgpu_submit_check(struct vgpu_device *vdev,
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
 * extension goes with VGPU_LAUNCH_TIMELINE, both or neither.  The
 * device-launch extension only where @features (CAP_FEATURES) has
 * VGPU_FEAT_DEVICE_LAUNCH (else -EINVAL, as an unknown name); its area
 * non-zero and 16-aligned, returned in *@cdp_area (0 without it).
 */
int vgpu_submit_extensions(u64 ext, const struct drm_vgpu_launch *l,
			   u32 features, struct drm_vgpu_ext_timeline *tl,
			   u64 *cdp_area)
{
	struct drm_vgpu_ext_device_launch dl;
	struct drm_vgpu_extension e;
	u64 seen = 0;
	u32 n = 0;

	memset(tl, 0, sizeof(*tl));
	*cdp_area = 0;
	for (; ext; ext = e.next) {
		if (++n > VGPU_SUBMIT_MAX_EXTENSIONS)
			return -E2BIG;
		if (copy_from_user(&e, u64_to_user_ptr(ext), sizeof(e)))
			return -EFAULT;
		if (e.pad || seen & BIT_ULL(e.name & 63))
			return -EINVAL;
		switch (e.name) {
		case VGPU_SUBMIT_EXT_TIMELINE:
			if (copy_from_user(tl, u64_to_user_ptr(ext), sizeof(*tl)))
				return -EFAULT;
			if (tl->va % 8 || tl->size % 8 ||
			    tl->size < sizeof(struct vgpu_trace_header) ||
			    tl->size > VGPU_TRACE_MAX_BYTES)
				return -EINVAL;
			break;
		case VGPU_SUBMIT_EXT_DEVICE_LAUNCH:
			if (!(features & VGPU_FEAT_DEVICE_LAUNCH))
				return -EINVAL;
			if (copy_from_user(&dl, u64_to_user_ptr(ext), sizeof(dl)))
				return -EFAULT;
			if (!dl.area_va || dl.area_va % 16)
				return -EINVAL;
			*cdp_area = dl.area_va;
			break;
		default:
			return -EINVAL;
		}
		seen |= BIT_ULL(e.name);
	}
	if (!!(l->launch_flags & VGPU_LAUNCH_TIMELINE) !=
	    !!(seen & BIT_ULL(VGPU_SUBMIT_EXT_TIMELINE)))
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

int vgpu_submit_bos(struct vgpu_job *job, struct drm_file *file,
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
		       const struct drm_vgpu_ext_timeline *tl, u64 cdp_area);
static int vgpu_submit_locked(struct vgpu_device *vdev, struct vgpu_file *vf,
			      struct vgpu_xqueue *xq, struct drm_file *file,
			      struct drm_vgpu_submit *args,
			      const struct drm_vgpu_ext_timeline *tl,
			      u64 cdp_area);

int vgpu_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_submit *args = data;
	struct drm_vgpu_ext_timeline tl;
	u64 cdp_area;
	int idx, ret;

	ret = vgpu_submit_check(vdev, args);
	if (ret)
		return ret;
	ret = vgpu_submit_extensions(args->extensions, &args->launch,
				     vdev->features, &tl, &cdp_area);
	if (ret)
		return ret;
	/* vgpu_remove() waits for submits in progress (drm_dev_unplug). */
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	ret = vgpu_submit(vdev, vf, file, args, &tl, cdp_area);
	drm_dev_exit(idx);
	return ret;
}

static unsigned int vgpu_max_jobs_per_queue = VGPU_MAX_JOBS_PER_QUEUE;
module_param_named(max_jobs_per_queue, vgpu_max_jobs_per_queue, uint, 0644);
MODULE_PARM_DESC(max_jobs_per_queue,
		 "jobs in flight per queue before SUBMIT waits (default "
		 __stringify(VGPU_MAX_JOBS_PER_QUEUE) ")");

static unsigned int vgpu_max_jobs_per_file = VGPU_MAX_JOBS_PER_FILE;
module_param_named(max_jobs_per_file, vgpu_max_jobs_per_file, uint, 0644);
MODULE_PARM_DESC(max_jobs_per_file,
		 "jobs in flight per open file before SUBMIT waits (default "
		 __stringify(VGPU_MAX_JOBS_PER_FILE) ")");

/* Count a job in @vf and @qjobs, unless one of them is at its bound. */
static bool vgpu_jobs_try(struct vgpu_file *vf, atomic_t *qjobs)
{
	if (atomic_inc_return(&vf->jobs) > READ_ONCE(vgpu_max_jobs_per_file)) {
		atomic_dec(&vf->jobs);
		return false;
	}
	if (atomic_inc_return(qjobs) > READ_ONCE(vgpu_max_jobs_per_queue)) {
		atomic_dec(qjobs);
		atomic_dec(&vf->jobs);
		return false;
	}
	return true;
}

/**
 * vgpu_jobs_reserve - count a new job in its file and its queue, waiting
 *                     while either is at its bound
 * @vf:       the file
 * @qjobs:    the queue's count: a queue's @jobs, or a VM's for its binds
 * @nonblock: fail with -EAGAIN rather than wait (O_NONBLOCK)
 *
 * Jobs are bounded as a ring-full GPU bounds them (uapi
 * VGPU_MAX_JOBS_PER_QUEUE): the wait ends when vgpu_jobs_release() frees
 * a job's place.  VM_BIND's bind jobs count too, in the file's total and
 * in their VM's.  Called without locks.
 *
 * Return: 0, -EAGAIN, or -ERESTARTSYS on a signal.
 */
int vgpu_jobs_reserve(struct vgpu_file *vf, atomic_t *qjobs, bool nonblock)
{
	if (vgpu_jobs_try(vf, qjobs))
		return 0;
	if (nonblock)
		return -EAGAIN;
	return wait_event_interruptible(vf->jobs_wq, vgpu_jobs_try(vf, qjobs));
}

/* A job counted by vgpu_jobs_reserve() is freed (or never made). */
void vgpu_jobs_release(struct vgpu_file *vf, atomic_t *qjobs)
{
	atomic_dec(qjobs);
	atomic_dec(&vf->jobs);
	/* pairs with the waiter's check: it either sees the count or the wake */
	smp_mb__after_atomic();
	if (wq_has_sleeper(&vf->jobs_wq))
		wake_up_all(&vf->jobs_wq);
}

static bool vgpu_bo_job_writes(struct drm_gem_object *obj)
{
	return !(to_vgpu_bo(obj)->flags & VGPU_BO_READ_ONLY);
}

static void vgpu_job_done_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	struct vgpu_job *job = container_of(cb, struct vgpu_job, done_cb);

	/*
	 * Killed before it ran (its queue destroyed, its file closed, the
	 * device gone): its record says so when its fence signals, as
	 * GET_JOB after a wait expects (free_job, which recorded it alone
	 * before, runs from a work item later: queue.destroy_with_jobs read
	 * QUEUED once).  A lockless dma_fence_is_signaled() may still see
	 * the flag in the instructions between its setting and this
	 * callback.  free_job records the same again (it also sees jobs
	 * whose fence had signalled before this callback was added).
	 */
	if (!READ_ONCE(job->hw_fence) && !READ_ONCE(job->guilty))
		vgpu_job_record(job, f->error ?: -ECANCELED, VGPU_ERR_ABORTED, NULL);
	atomic64_inc(&job->xq->completed);
	atomic_dec(&job->vdev->queues[job->queue].load);
}

/*
 * Count armed @job among its queue's submitted jobs, and among the
 * completed ones once @done, its finished fence, signals (@done_cb;
 * vgpu_job_free() waits for that callback); then it leaves its hardware
 * queue's load (vgpu_xqueue_arm()).
 */
void vgpu_job_count(struct vgpu_job *job, struct dma_fence *done)
{
	atomic64_inc(&job->xq->submitted);
	if (dma_fence_add_callback(done, &job->done_cb, vgpu_job_done_cb)) {
		atomic64_inc(&job->xq->completed);
		atomic_dec(&job->vdev->queues[job->queue].load);
	}
}

static int vgpu_submit(struct vgpu_device *vdev, struct vgpu_file *vf,
		       struct drm_file *file, struct drm_vgpu_submit *args,
		       const struct drm_vgpu_ext_timeline *tl, u64 cdp_area)
{
	struct vgpu_xqueue *xq;
	int ret;

	xq = vgpu_xqueue_lookup(vf, args->queue);
	if (!xq)
		return -ENOENT;
	/* before the queue's lock: a QUEUE_DESTROY may end the wait */
	ret = vgpu_jobs_reserve(vf, &xq->jobs, file->filp && file->filp->f_flags & O_NONBLOCK);
	if (ret) {
		vgpu_xqueue_put(xq);
		return ret;
	}
	/* Held until the job is pushed: QUEUE_DESTROY waits for it. */
	mutex_lock(&xq->lock);
	if (xq->dead)
		ret = -ENOENT;
	else if (atomic_read(&xq->banned))
		ret = -ECANCELED;
	else
		ret = vgpu_submit_locked(vdev, vf, xq, file, args, tl,
					 cdp_area);
	mutex_unlock(&xq->lock);
	/* (a job made holds the count until vgpu_job_free()) */
	if (ret)
		vgpu_jobs_release(vf, &xq->jobs);
	vgpu_xqueue_put(xq);
	return ret;
}

static int vgpu_submit_locked(struct vgpu_device *vdev, struct vgpu_file *vf,
			      struct vgpu_xqueue *xq, struct drm_file *file,
			      struct drm_vgpu_submit *args,
			      const struct drm_vgpu_ext_timeline *tl,
			      u64 cdp_area)
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
	/* run_job may not allocate (a fence-signalling section) */
	job->hw_fence_mem = kzalloc(sizeof(*job->hw_fence_mem), GFP_KERNEL_ACCOUNT);
	if (!job->hw_fence_mem) {
		kfree(job);
		return -ENOMEM;
	}
	job->vdev = vdev;
	job->launch = args->launch;
	job->trace_va = tl->va;
	job->trace_size = (u32)tl->size;
	job->cdp_area = cdp_area;
	INIT_LIST_HEAD(&job->link);
	ret = drm_sched_job_init(&job->base, &xq->entity,
				 VGPU_JOB_CREDITS, vf, file->client_id);
	if (ret) {
		kfree(job->hw_fence_mem);
		kfree(job);
		return ret;
	}
	kref_get(&vf->refcount);
	job->vf = vf;
	job->as = vgpu_as_get(xq->vm ? vgpu_vm_as(xq->vm) : vf->as);
	kref_get(&xq->refcount);
	job->xq = xq;
	job->counted = true;	/* vgpu_submit()'s count, from the push on */

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

	/* Arming picks the hardware queue. */
	vgpu_xqueue_arm(xq, job);
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
	vgpu_job_count(job, done);
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
			      done->seqno, xq->id);
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
	/* where this task runs now, and most likely waits */
	job->cpu = raw_smp_processor_id();
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
	kfree(job->hw_fence_mem);
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
