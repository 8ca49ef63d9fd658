// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: vgpu queue objects
 *
 * A queue object (&struct vgpu_xqueue) is one &drm_sched_entity of its
 * file at the drm_sched priority of its queue priority.  The entity's
 * scheduler list is the hardware queues of that priority (a "band": each
 * hardware queue serves one priority, which the driver writes into its
 * VGPU_Q_PRIORITY register), and drm_sched moves an idle entity to the
 * least busy of them, as amdgpu does with its per-priority rings.  The
 * device hands SMs to launches of higher-priority hardware queues first.
 *
 * Id 0 is the file's default queue (normal priority), created at open so
 * that a plain SUBMIT needs nothing else.  Others come from QUEUE_CREATE,
 * with ids handed out cyclically (a destroyed id is not reused at once).
 *
 * Lifetimes: the file's table holds a reference, and so does every job.
 * The entity is torn down by QUEUE_DESTROY (queued jobs are killed), file
 * close (queued jobs still run) or device removal, whichever comes first
 * (the entity is live while @link is on vf->xqueues, under
 * vdev->files_lock).  @lock orders SUBMIT's use of
 * the entity against QUEUE_DESTROY: nothing is pushed to a dead entity.
 */
#include <linux/capability.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include "vgpu_drv.h"
#include "vgpu_job.h"

static_assert(sizeof(struct drm_vgpu_queue_create) == 16);
static_assert(sizeof(struct drm_vgpu_queue_destroy) == 8);
static_assert(sizeof(struct drm_vgpu_queue_get_state) == 48);
static_assert(VGPU_QUEUE_PRIORITY_REALTIME == VGPU_QPRIO_REALTIME &&
	      VGPU_QUEUE_PRIORITY_LOW == VGPU_QPRIO_LOW);

static const enum drm_sched_priority vgpu_sched_prio[VGPU_QPRIO_COUNT] = {
	[VGPU_QPRIO_LOW] = DRM_SCHED_PRIORITY_LOW,
	[VGPU_QPRIO_NORMAL] = DRM_SCHED_PRIORITY_NORMAL,
	[VGPU_QPRIO_HIGH] = DRM_SCHED_PRIORITY_HIGH,
	[VGPU_QPRIO_REALTIME] = DRM_SCHED_PRIORITY_KERNEL,
};

/*
 * Split the hardware queues into one band per priority: with n >= 4,
 * realtime and low get n/8 (at least one), high n/4 (at least one) and
 * normal the rest; with fewer, neighbouring priorities share a queue.
 * Each hardware queue serves the highest priority that uses it.
 */
void vgpu_bands_init(struct vgpu_device *vdev)
{
	u32 n = vdev->nqueues, size[VGPU_QPRIO_COUNT], first = 0, p, i;

	spin_lock_init(&vdev->pick_lock);
	memset(vdev->band_n, 0, sizeof(vdev->band_n));
	if (n >= VGPU_QPRIO_COUNT) {
		size[VGPU_QPRIO_LOW] = max(1u, n / 8);
		size[VGPU_QPRIO_HIGH] = max(1u, n / 4);
		size[VGPU_QPRIO_REALTIME] = max(1u, n / 8);
		size[VGPU_QPRIO_NORMAL] = n - size[VGPU_QPRIO_LOW] -
			size[VGPU_QPRIO_HIGH] - size[VGPU_QPRIO_REALTIME];
		for (p = 0; p < VGPU_QPRIO_COUNT; p++) {
			for (i = 0; i < size[p]; i++) {
				vdev->queues[first + i].priority = p;
				vdev->band[p][i] = &vdev->queues[first + i].sched;
			}
			vdev->band_n[p] = size[p];
			first += size[p];
		}
		return;
	}
	for (p = 0; p < VGPU_QPRIO_COUNT; p++) {
		/* n = 1: all on 0; 2: low, normal | high, rt; 3: low | normal | high, rt */
		u32 q = n == 1 ? 0 : n == 2 ? p / 2 : min(p, n - 1);

		vdev->band[p][0] = &vdev->queues[q].sched;
		vdev->band_n[p] = 1;
		vdev->queues[q].priority = p;
	}
}

/*
 * A hardware queue whose oldest job on the ring went there this long ago
 * is busy with a long job: a kernel that spins, or a job waiting at a
 * device-side acquire for one.  The device runs a ring's commands in
 * order, so whatever lands behind it waits as long.
 */
#define VGPU_PICK_LONG_NS (10 * NSEC_PER_MSEC)

static bool vgpu_queue_long_head(struct vgpu_queue *q, u64 now)
{
	struct vgpu_job *head;
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&q->lock, flags);
	head = list_first_entry_or_null(&q->inflight, struct vgpu_job, link);
	ret = head && now - head->start_ns > VGPU_PICK_LONG_NS;
	spin_unlock_irqrestore(&q->lock, flags);
	return ret;
}

/**
 * vgpu_xqueue_arm - arm @job of @xq on a hardware queue of its band
 * @xq:  the queue, whose @lock the caller holds
 * @job: the job, initialised on @xq's entity
 *
 * drm_sched moves an idle entity to the scheduler of its list with the
 * lowest score, but counts a job only once it is pushed (two SUBMITs of
 * two files arming at once both pick the same one) and never uncounts
 * the jobs an entity's kill drops.  The driver picks instead, under
 * @pick_lock, from its own count of jobs not yet finished, and first
 * among the queues whose ring is not held by a long job: another user's
 * job does not queue behind a kernel that spins while a queue of its
 * band is free.  drm_sched still decides whether the entity may move
 * (it is idle: nothing queued, its last job finished); if not, the job
 * goes where the entity's jobs are.  Sets @job->queue.
 */
void vgpu_xqueue_arm(struct vgpu_xqueue *xq, struct vgpu_job *job)
{
	struct vgpu_device *vdev = job->vdev;
	u32 p = xq->priority, n = vdev->band_n[p], i, best = 0;
	u64 now = ktime_get_ns(), key, best_key = U64_MAX;
	struct vgpu_queue *q;

	if (n > 1) {
		spin_lock(&vdev->pick_lock);
		for (i = 0; i < n; i++) {
			q = container_of(vdev->band[p][i], struct vgpu_queue, sched);
			key = (u64)vgpu_queue_long_head(q, now) << 32 |
			      (u32)atomic_read(&q->load);
			if (key < best_key) {
				best_key = key;
				best = i;
			}
		}
		drm_sched_entity_modify_sched(&xq->entity, &vdev->band[p][best], 1);
	}
	drm_sched_job_arm(&job->base);
	q = container_of(job->base.sched, struct vgpu_queue, sched);
	atomic_inc(&q->load);
	if (n > 1)
		spin_unlock(&vdev->pick_lock);
	job->queue = q->idx;
}

static void vgpu_xqueue_release(struct kref *kref)
{
	struct vgpu_xqueue *xq = container_of(kref, struct vgpu_xqueue, refcount);

	if (xq->vm)
		vgpu_vm_put(xq->vm);
	kfree(xq);
}

void vgpu_xqueue_put(struct vgpu_xqueue *xq)
{
	kref_put(&xq->refcount, vgpu_xqueue_release);
}

/* A reference to queue @id of @vf, or NULL. */
struct vgpu_xqueue *vgpu_xqueue_lookup(struct vgpu_file *vf, u32 id)
{
	struct vgpu_xqueue *xq;

	xa_lock(&vf->queues);
	xq = xa_load(&vf->queues, id);
	if (xq)
		kref_get(&xq->refcount);
	xa_unlock(&vf->queues);
	return xq;
}

/**
 * vgpu_entity_fini - take an entity off its scheduler for good
 * @vdev:  the device
 * @e:     a queue's or a VM's entity
 * @flush: let its queued jobs reach the hardware first (file close),
 *         else they are killed
 *
 * drm_sched of 6.12 races an entity's teardown against its own run-job
 * work: drm_sched_entity_pop_job() puts the entity back into its run
 * queue's FIFO tree after taking a job (drm_sched_rq_update_fifo_locked()
 * checks neither @stopped nor whether it was removed), so a
 * drm_sched_entity_fini() between the pop and the update left a freed
 * entity in the tree: a QUEUE_DESTROY racing a SUBMIT on that queue
 * (vgpu_race's queue_use) crashed in rb_next() in
 * drm_sched_run_job_work(), as one of the oopses did.  So the
 * scheduler's run-job work is stopped around the teardown (under
 * reset_lock, so that a reset's drm_sched_stop()/start() do not
 * interleave with it).
 */
void vgpu_entity_fini(struct vgpu_device *vdev, struct drm_sched_entity *e,
		      bool flush)
{
	struct drm_gpu_scheduler *sched = NULL;

	if (flush)
		drm_sched_entity_flush(e, MAX_WAIT_SCHED_ENTITY_Q_EMPTY);
	mutex_lock(&vdev->reset_lock);
	spin_lock(&e->lock);
	if (e->rq)
		sched = e->rq->sched;
	spin_unlock(&e->lock);
	/*
	 * drm_sched_wqueue_stop() without its wait for the free-job work:
	 * free_job may free BOs (resv locks, reclaim), so waiting for it
	 * under reset_lock, which the timeout handler takes in its
	 * signalling section, closes a lockdep cycle.  Only the run-job
	 * work touches the entity tree; pause_submit keeps both idle.
	 */
	if (sched) {
		WRITE_ONCE(sched->pause_submit, true);
		cancel_work_sync(&sched->work_run_job);
	}
	drm_sched_entity_fini(e);
	if (sched && !vdev->gone)
		drm_sched_wqueue_start(sched);
	mutex_unlock(&vdev->reset_lock);
}

/*
 * Tear down @xq's entity if nobody has: @flush lets its queued jobs reach
 * the hardware first (file close), else they are killed.  Under
 * vdev->files_lock.
 */
static void vgpu_xqueue_entity_fini(struct vgpu_xqueue *xq, bool flush)
{
	lockdep_assert_held(&xq->vf->vdev->files_lock);
	if (list_empty(&xq->link))
		return;
	vgpu_entity_fini(xq->vf->vdev, &xq->entity, flush);
	list_del_init(&xq->link);
}

/*
 * A new queue of @priority in @vf: the default queue (id 0) when @id is
 * NULL, else one with a fresh id returned in *@id.  Its jobs run in @vm
 * (NULL: the file's VM 0); the queue takes over the caller's reference,
 * also when it fails.
 */
int vgpu_xqueue_new(struct vgpu_file *vf, u32 priority, struct vgpu_vm *vm,
		    u32 *id)
{
	struct vgpu_device *vdev = vf->vdev;
	struct vgpu_xqueue *xq;
	int ret;

	if (id && atomic_inc_return(&vf->nqueues) > VGPU_MAX_QUEUES_PER_FILE) {
		atomic_dec(&vf->nqueues);
		ret = -EMFILE;
		goto err_vm;
	}
	ret = -ENOMEM;
	xq = vgpu_should_fail() ? NULL : kzalloc(sizeof(*xq), GFP_KERNEL_ACCOUNT);
	if (!xq)
		goto err_count;
	kref_init(&xq->refcount);
	xq->vf = vf;
	xq->vm = vm;
	xq->priority = priority;
	/* (no band before the schedulers exist: KUnit's mock device) */
	xq->hw_queue = vdev->band_n[priority] ?
		container_of(vdev->band[priority][0], struct vgpu_queue, sched)->idx : 0;
	mutex_init(&xq->lock);
	INIT_LIST_HEAD(&xq->link);
	ret = drm_sched_entity_init(&xq->entity, vgpu_sched_prio[priority],
				    vdev->band[priority], vdev->band_n[priority],
				    &xq->banned);
	if (ret)
		goto err_free;

	/* live before its id exists: a DESTROY of the id finds it live */
	mutex_lock(&vdev->files_lock);
	list_add_tail(&xq->link, &vf->xqueues);
	mutex_unlock(&vdev->files_lock);
	if (!id) {
		ret = xa_insert(&vf->queues, VGPU_QUEUE_DEFAULT, xq, GFP_KERNEL);
		if (ret < 0)
			goto err_entity;
		return 0;
	}
	/*
	 * Once the id is in the table, a QUEUE_DESTROY of it (the ids are
	 * guessable) may drop the table's reference: hold our own until
	 * @xq is no longer touched.
	 */
	kref_get(&xq->refcount);
	ret = xa_alloc_cyclic(&vf->queues, &xq->id, xq, XA_LIMIT(1, U32_MAX),
			      &vf->next_queue_id, GFP_KERNEL);
	if (ret < 0) {
		refcount_dec(&xq->refcount.refcount);	/* never published */
		goto err_entity;
	}
	*id = xq->id;
	vgpu_xqueue_put(xq);
	return 0;

err_entity:
	mutex_lock(&vdev->files_lock);
	list_del_init(&xq->link);
	mutex_unlock(&vdev->files_lock);
	drm_sched_entity_destroy(&xq->entity);
err_free:
	mutex_destroy(&xq->lock);
	kfree(xq);
err_count:
	if (id)
		atomic_dec(&vf->nqueues);
err_vm:
	if (vm)
		vgpu_vm_put(vm);
	return ret;
}

/* vgpu_open(): the table and the default queue. */
int vgpu_file_sched_init(struct vgpu_device *vdev, struct vgpu_file *vf)
{
	xa_init_flags(&vf->queues, XA_FLAGS_ALLOC);
	INIT_LIST_HEAD(&vf->xqueues);
	return vgpu_xqueue_new(vf, VGPU_QPRIO_NORMAL, NULL, NULL);
}

/**
 * vgpu_file_sched_fini - tear down the entities of @vf's queues
 * @vf:    the file
 * @flush: wait for the entities' queued jobs to be handed to the hardware
 *         first (file close); false kills them (device removal)
 *
 * Before the schedulers' drm_sched_fini(), which frees the run queues the
 * entities point to.  Under vdev->files_lock.
 */
void vgpu_file_sched_fini(struct vgpu_file *vf, bool flush)
{
	struct vgpu_xqueue *xq, *tmp;

	lockdep_assert_held(&vf->vdev->files_lock);
	list_for_each_entry_safe(xq, tmp, &vf->xqueues, link)
		vgpu_xqueue_entity_fini(xq, flush);
}

/* vgpu_postclose(), after vgpu_file_sched_fini(): drop the table. */
void vgpu_file_queues_free(struct vgpu_file *vf)
{
	struct vgpu_xqueue *xq;
	unsigned long id;

	xa_for_each(&vf->queues, id, xq) {
		xa_erase(&vf->queues, id);
		vgpu_xqueue_put(xq);
	}
	xa_destroy(&vf->queues);
}

/* Device removal: every open file's entities, before vgpu_sched_fini(). */
void vgpu_files_sched_fini(struct vgpu_device *vdev)
{
	struct vgpu_file *vf;

	mutex_lock(&vdev->files_lock);
	list_for_each_entry(vf, &vdev->files, link) {
		vgpu_file_sched_fini(vf, false);
		vgpu_file_vms_fini(vf, false);
	}
	mutex_unlock(&vdev->files_lock);
}

/* ---- ioctls ---- */

int vgpu_ioctl_queue_create(struct drm_device *dev, void *data,
			    struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_queue_create *args = data;
	struct vgpu_vm *vm = NULL;
	int idx, ret;

	if (args->flags & ~VGPU_QUEUE_CREATE_FLAGS ||
	    args->priority > VGPU_QUEUE_PRIORITY_REALTIME)
		return -EINVAL;
	/* as xe and panthor: above normal takes CAP_SYS_NICE */
	if (args->priority > VGPU_QUEUE_PRIORITY_NORMAL && !capable(CAP_SYS_NICE))
		return -EPERM;
	if (args->vm_id != VGPU_VM_DEFAULT) {
		vm = vgpu_vm_lookup(vf, args->vm_id);
		if (!vm)
			return -ENOENT;
	}
	if (!drm_dev_enter(dev, &idx)) {
		if (vm)
			vgpu_vm_put(vm);
		return -ENODEV;
	}
	ret = vgpu_xqueue_new(vf, args->priority, vm, &args->queue_id);
	drm_dev_exit(idx);
	return ret;
}

int vgpu_ioctl_queue_destroy(struct drm_device *dev, void *data,
			     struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_queue_destroy *args = data;
	struct vgpu_xqueue *xq;

	if (args->pad || args->queue_id == VGPU_QUEUE_DEFAULT)
		return -EINVAL;
	xq = xa_erase(&vf->queues, args->queue_id);
	if (!xq)
		return -ENOENT;
	atomic_dec(&vf->nqueues);
	/* No SUBMIT is between its entity use and push any more, none starts. */
	mutex_lock(&xq->lock);
	xq->dead = true;
	mutex_lock(&vf->vdev->files_lock);
	vgpu_xqueue_entity_fini(xq, false);
	mutex_unlock(&vf->vdev->files_lock);
	mutex_unlock(&xq->lock);
	vgpu_xqueue_put(xq);
	return 0;
}

int vgpu_ioctl_queue_get_state(struct drm_device *dev, void *data,
			       struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_queue_get_state *args = data;
	struct vgpu_xqueue *xq;

	if (args->pad)
		return -EINVAL;
	xq = vgpu_xqueue_lookup(vf, args->queue_id);
	if (!xq)
		return -ENOENT;
	args->state = atomic_read(&xq->banned) ? VGPU_QUEUE_STATE_BANNED :
		VGPU_QUEUE_STATE_ACTIVE;
	args->priority = xq->priority;
	args->guilty_resets = atomic_read(&xq->guilty_resets);
	args->innocent_resets = atomic_read(&xq->innocent_resets);
	args->ban_reason = READ_ONCE(xq->ban_reason);
	args->hw_queue = READ_ONCE(xq->hw_queue);
	args->submitted = atomic64_read(&xq->submitted);
	args->completed = atomic64_read(&xq->completed);
	vgpu_xqueue_put(xq);
	return 0;
}
