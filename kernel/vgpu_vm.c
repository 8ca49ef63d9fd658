// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: vgpu VMs managed by userspace (VM_CREATE, VM_BIND)
 *
 * A VM is a GPU address space of its own (&struct vgpu_as: an ASID and a
 * page table in the device's format) whose mappings userspace chooses,
 * kept in a &drm_gpuvm as xe, panthor and nouveau keep theirs: the tree
 * of &drm_gpuva, one &drm_gpuvm_bo per BO mapped, and split/merge of
 * mappings by drm_gpuvm_sm_map()/drm_gpuvm_sm_unmap(), whose steps write
 * the page tables (vgpu_vm_step_*).  A sparse mapping is a &drm_gpuva
 * without a BO (DRM_GPUVA_SPARSE) backed by the device's NULL entries
 * (1 GiB, 2 MiB or 4 KiB, the largest that fit: vgpu_mmu.c).  A
 * userptr mapping (MAP_USERPTR) is a &drm_gpuva without a BO whose
 * &vgpu_vma holds pinned pages of the process (&struct vgpu_userptr,
 * shared by the remnants of a split; the gpuva's offset is the offset
 * into them).
 *
 * Binds are jobs (&struct vgpu_bind) on the VM's bind queue: a
 * &drm_sched_entity of the device's bind scheduler, so that binds run in
 * order, after their in-syncs (asynchronous VM_BIND) or after every job
 * of the VM (synchronous VM_BIND: the VM's reservation object holds each
 * job's fence, DMA_RESV_USAGE_BOOKKEEP).  run_job is in the path that
 * signals the bind's fence, so it allocates nothing: the ioctl looks up
 * every BO, gets its pages and its &drm_gpuvm_bo, allocates the page
 * tables of every range and three &vgpu_vma per op (the most one op can
 * use: a new mapping and the two remnants of a split) before the job is
 * pushed, and reserves every page table its ranges could lack (the ops
 * before may free tables: a table left empty is freed, vgpu_mmu.c), or
 * for a sparse range or an unmap those it could need at its ends (to
 * split a NULL entry).  A bind that fails these checks (-ENOSPC past
 * pt_limit_mb) changes nothing.
 *
 * Memory safety: a mapping removed while a job of the VM runs may still
 * sit in that job's TLB (vgpu_mmu.c): its BO reference goes on the
 * address space's deferred list (vgpu_as_defer()) until no job runs, as
 * does a page table left empty.
 *
 * Lifetimes: the file's table, every queue created in the VM and every
 * bind job hold a reference (&vgpu_vm.refcount; a job holds its queue).
 * The bind entity is torn down by VM_DESTROY (queued binds still run),
 * file close, or device removal (queued binds are killed), whichever
 * comes first, as queue entities are (vgpu_queue.c).  The last reference
 * unmaps everything and frees the address space.
 *
 * Locking: @lock (the tree and the page tables) is taken only by run_job,
 * debugfs and the last put, never while waiting for a fence.  A BO's
 * gpuva_lock guards its list of &drm_gpuvm_bo; BO references are held
 * across every put of a &drm_gpuvm_bo, which may drop the BO's last
 * other one.
 */
#include <linux/dma-resv.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gpuvm.h>
#include <drm/drm_syncobj.h>
#include <drm/drm_vma_manager.h>
#include "vgpu_drv.h"
#include "vgpu_job.h"

static_assert(sizeof(struct drm_vgpu_vm_create) == 24);
static_assert(sizeof(struct drm_vgpu_vm_destroy) == 8);
static_assert(sizeof(struct drm_vgpu_vm_bind_op) == 40);
static_assert(sizeof(struct drm_vgpu_vm_bind) == 48);
/* bind flags go to vgpu_as_write_range() as BO flags */
static_assert(VGPU_VM_BIND_READ_ONLY == VGPU_BO_READ_ONLY &&
	      VGPU_VM_BIND_NO_EXEC == VGPU_BO_NO_EXEC);

#define VGPU_BINDS_IN_FLIGHT 64u	/* per VM entity, queued on the device scheduler */

struct vgpu_vm {
	struct drm_gpuvm base;
	struct kref refcount;
	struct vgpu_device *vdev;
	struct vgpu_file *vf;		/* not counted: the file outlives its entity */
	u32 id;
	struct vgpu_as *as;
	struct mutex lock;
	struct drm_sched_entity entity;
	/* on vf->vm_list while @entity is live (under vdev->files_lock) */
	struct list_head link;
	struct mutex submit_lock;	/* VM_BIND's entity use against destroy */
	bool dead;			/* destroyed (under @submit_lock) */
	atomic_t binds;			/* bind jobs not yet freed (vgpu_jobs_reserve()) */
};

/**
 * struct vgpu_vma - a mapping of a VM
 * @base:  the drm_gpuva (no BO: sparse, or userptr when @up)
 * @flags: VGPU_VM_BIND_READ_ONLY, _NO_EXEC (with the BO's own)
 * @up:    userptr pages (a reference), or NULL
 * @link:  on a bind's list of spare or of removed mappings
 * @dfr:   a removed mapping's BO reference (or its @up), while a job may
 *         still use it
 */
struct vgpu_vma {
	struct drm_gpuva base;
	u32 flags;
	struct vgpu_userptr *up;
	struct list_head link;
	struct vgpu_deferred dfr;
};

#define to_vgpu_vma(va) container_of(va, struct vgpu_vma, base)

/* One checked op of a bind, with what run_job needs. */
struct vgpu_bind_op {
	u32 op;
	u32 flags;
	u64 va, range, offset;
	struct drm_gem_object *obj;	/* a reference */
	struct drm_gpuvm_bo *vm_bo;	/* a reference */
	struct sg_table *sgt;		/* the BO's pages */
	struct vgpu_userptr *up;	/* MAP_USERPTR: a reference */
};

/**
 * struct vgpu_bind - a VM_BIND on a VM's bind queue
 * @base:  the scheduler's job
 * @vm:    the VM (a reference)
 * @vf:    its file (a reference): the bind counts in its jobs in flight
 *         and in the VM's @binds until freed (vgpu_jobs_reserve())
 * @nops:  entries in @ops
 * @ops:   the checked ops
 * @cur:   the op run_job applies
 * @spare: preallocated &vgpu_vma, three per op
 * @dead:  mappings run_job removed, released after free_job
 * @pool:  page tables reserved for the ranges it maps
 * @release: free_job's second half (vgpu_release_defer())
 */
struct vgpu_bind {
	struct drm_sched_job base;
	struct vgpu_vm *vm;
	struct vgpu_file *vf;
	u32 nops;
	struct vgpu_bind_op *ops;
	struct vgpu_bind_op *cur;
	struct list_head spare;
	struct list_head dead;
	struct vgpu_pt_pool pool;
	struct vgpu_release release;	/* free_job's second half */
};

#define to_vgpu_bind(j) container_of(j, struct vgpu_bind, base)

static struct vgpu_vma *vgpu_vma_alloc(void)
{
	struct vgpu_vma *v = vgpu_should_fail() ? NULL :
			     kzalloc(sizeof(*v), GFP_KERNEL_ACCOUNT);

	if (v)
		INIT_LIST_HEAD(&v->link);
	return v;
}

static void vgpu_vma_free_deferred(struct vgpu_deferred *d)
{
	struct vgpu_vma *v = container_of(d, struct vgpu_vma, dfr);

	vgpu_userptr_put(v->up);
	kfree(v);
}

/* ---- the VM ---- */

static void vgpu_gpuvm_free(struct drm_gpuvm *gpuvm)
{
	kfree(container_of(gpuvm, struct vgpu_vm, base));
}

static int vgpu_vm_step_map(struct drm_gpuva_op *op, void *priv);
static int vgpu_vm_step_remap(struct drm_gpuva_op *op, void *priv);
static int vgpu_vm_step_unmap(struct drm_gpuva_op *op, void *priv);

static const struct drm_gpuvm_ops vgpu_gpuvm_ops = {
	.vm_free = vgpu_gpuvm_free,
	.sm_step_map = vgpu_vm_step_map,
	.sm_step_remap = vgpu_vm_step_remap,
	.sm_step_unmap = vgpu_vm_step_unmap,
};

struct vgpu_as *vgpu_vm_as(struct vgpu_vm *vm)
{
	return vm->as;
}

struct drm_gem_object *vgpu_vm_resv_obj(struct vgpu_vm *vm)
{
	return drm_gpuvm_resv_obj(&vm->base);
}

/*
 * SUBMIT on a queue of @vm: lock the VM's reservation object and its
 * external objects (every BO mapped in it) in @exec, one fence slot each.
 * Inside drm_exec_until_all_locked().
 */
int vgpu_vm_lock_objects(struct vgpu_vm *vm, struct drm_exec *exec)
{
	return drm_gpuvm_prepare_vm(&vm->base, exec, 1) ?:
	       drm_gpuvm_prepare_objects(&vm->base, exec, 1);
}

/* Number of external objects of @vm (debugfs). */
static u32 vgpu_vm_extobjs(struct vgpu_vm *vm)
{
	struct drm_gpuvm_bo *vm_bo;
	u32 n = 0;

	spin_lock(&vm->base.extobj.lock);
	list_for_each_entry(vm_bo, &vm->base.extobj.list, list.entry.extobj)
		n++;
	spin_unlock(&vm->base.extobj.lock);
	return n;
}

/* Drop the reference to @vm_bo of @obj (a reference to @obj held). */
static void vgpu_vm_bo_put(struct drm_gem_object *obj,
			   struct drm_gpuvm_bo *vm_bo)
{
	struct vgpu_bo *bo = to_vgpu_bo(obj);

	mutex_lock(&bo->gpuva_lock);
	drm_gpuvm_bo_put(vm_bo);
	mutex_unlock(&bo->gpuva_lock);
}

/*
 * @v left the tree: unlink it from its BO, keeping a reference to the BO
 * for vgpu_vm_release_dead(), and put it on @dead.
 */
static void vgpu_vma_retire(struct vgpu_vma *v, struct list_head *dead)
{
	struct drm_gem_object *obj = v->base.gem.obj;

	if (obj) {
		drm_gem_object_get(obj);
		mutex_lock(&to_vgpu_bo(obj)->gpuva_lock);
		drm_gpuva_unlink(&v->base);
		mutex_unlock(&to_vgpu_bo(obj)->gpuva_lock);
	}
	list_add_tail(&v->link, dead);
}

/*
 * Free the mappings on @dead; a BO whose mapping a running job of @as may
 * still translate through waits on the deferred list.  Process context.
 */
static void vgpu_vm_release_dead(struct vgpu_as *as, struct list_head *dead)
{
	struct vgpu_vma *v, *tmp;

	list_for_each_entry_safe(v, tmp, dead, link) {
		struct drm_gem_object *obj = v->base.gem.obj;

		list_del(&v->link);
		if (!obj && !v->up) {
			kfree(v);
			continue;
		}
		v->dfr.free = vgpu_vma_free_deferred;
		if (!vgpu_as_defer(as, obj, &v->dfr))
			vgpu_vma_free_deferred(&v->dfr);
		if (obj)
			drm_gem_object_put(obj);
	}
}

static void vgpu_vm_release(struct kref *kref)
{
	struct vgpu_vm *vm = container_of(kref, struct vgpu_vm, refcount);
	struct drm_gpuva *va, *next;
	LIST_HEAD(dead);

	/* no job, bind or queue is left: nothing translates through it */
	mutex_lock(&vm->lock);
	drm_gpuvm_for_each_va_safe(va, next, &vm->base) {
		drm_gpuva_remove(va);
		vgpu_vma_retire(to_vgpu_vma(va), &dead);
	}
	mutex_unlock(&vm->lock);
	vgpu_vm_release_dead(vm->as, &dead);
	vgpu_as_put(vm->as);
	mutex_destroy(&vm->lock);
	mutex_destroy(&vm->submit_lock);
	drm_gpuvm_put(&vm->base);	/* frees @vm (vgpu_gpuvm_free) */
}

void vgpu_vm_put(struct vgpu_vm *vm)
{
	if (vm)
		kref_put(&vm->refcount, vgpu_vm_release);
}

/* A reference to VM @id of @vf, or NULL. */
struct vgpu_vm *vgpu_vm_lookup(struct vgpu_file *vf, u32 id)
{
	struct vgpu_vm *vm;

	xa_lock(&vf->vms);
	vm = xa_load(&vf->vms, id);
	if (vm)
		kref_get(&vm->refcount);
	xa_unlock(&vf->vms);
	return vm;
}

static struct vgpu_vm *vgpu_vm_create(struct vgpu_file *vf)
{
	struct vgpu_device *vdev = vf->vdev;
	struct drm_gem_object *r_obj;
	struct drm_gpu_scheduler *sched = &vdev->bind_sched;
	struct vgpu_vm *vm;
	int ret;

	vm = vgpu_should_fail() ? NULL : kzalloc(sizeof(*vm), GFP_KERNEL_ACCOUNT);
	if (!vm)
		return ERR_PTR(-ENOMEM);
	vm->as = vgpu_as_create(vdev);
	if (IS_ERR(vm->as)) {
		ret = PTR_ERR(vm->as);
		kfree(vm);
		return ERR_PTR(ret);
	}
	r_obj = drm_gpuvm_resv_object_alloc(&vdev->drm);
	if (!r_obj) {
		vgpu_as_put(vm->as);
		kfree(vm);
		return ERR_PTR(-ENOMEM);
	}
	drm_gpuvm_init(&vm->base, "vgpu", 0, &vdev->drm, r_obj, VGPU_VA_START,
		       VGPU_VA_SIZE, 0, 0, &vgpu_gpuvm_ops);
	drm_gem_object_put(r_obj);	/* the gpuvm holds it */
	kref_init(&vm->refcount);
	vm->vdev = vdev;
	vm->vf = vf;
	mutex_init(&vm->lock);
	mutex_init(&vm->submit_lock);
	INIT_LIST_HEAD(&vm->link);
	ret = drm_sched_entity_init(&vm->entity, DRM_SCHED_PRIORITY_KERNEL,
				    &sched, 1, NULL);
	if (ret) {
		vgpu_vm_put(vm);
		return ERR_PTR(ret);
	}
	mutex_lock(&vdev->files_lock);
	list_add_tail(&vm->link, &vf->vm_list);
	mutex_unlock(&vdev->files_lock);
	return vm;
}

/*
 * Tear down @vm's bind entity if nobody has: @flush lets queued binds run
 * (VM_DESTROY, file close), else they are killed.  Under
 * vdev->files_lock.
 */
static void vgpu_vm_entity_fini(struct vgpu_vm *vm, bool flush)
{
	lockdep_assert_held(&vm->vdev->files_lock);
	if (list_empty(&vm->link))
		return;
	vgpu_entity_fini(vm->vdev, &vm->entity, flush);
	list_del_init(&vm->link);
}

void vgpu_file_vms_init(struct vgpu_file *vf)
{
	xa_init_flags(&vf->vms, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&vf->vm_list);
}

/* File close (@flush) or device removal: the bind entities.  Under files_lock. */
void vgpu_file_vms_fini(struct vgpu_file *vf, bool flush)
{
	struct vgpu_vm *vm, *tmp;

	lockdep_assert_held(&vf->vdev->files_lock);
	list_for_each_entry_safe(vm, tmp, &vf->vm_list, link)
		vgpu_vm_entity_fini(vm, flush);
}

/* Page-table bytes of @vf's VMs (fdinfo), the default one's not included. */
u64 vgpu_file_vms_pt_bytes(struct vgpu_file *vf)
{
	struct vgpu_vm *vm;
	unsigned long id;
	u64 n = 0;

	xa_lock(&vf->vms);
	xa_for_each(&vf->vms, id, vm)
		n += vgpu_as_pt_bytes(vm->as);
	xa_unlock(&vf->vms);
	return n;
}

/* vgpu_postclose(), after vgpu_file_vms_fini(): drop the table. */
void vgpu_file_vms_free(struct vgpu_file *vf)
{
	struct vgpu_vm *vm;
	unsigned long id;

	xa_for_each(&vf->vms, id, vm) {
		xa_erase(&vf->vms, id);
		vgpu_vm_put(vm);
	}
	xa_destroy(&vf->vms);
}

/* ---- binds: the steps of drm_gpuvm_sm_map()/_sm_unmap(), in run_job ---- */

static struct vgpu_vma *vgpu_bind_spare(struct vgpu_bind *b)
{
	struct vgpu_vma *v = list_first_entry_or_null(&b->spare,
						      struct vgpu_vma, link);

	/* three per op were allocated: more cannot be needed */
	if (WARN_ON(!v))
		return NULL;
	list_del_init(&v->link);
	return v;
}

static int vgpu_vm_step_map(struct drm_gpuva_op *op, void *priv)
{
	struct vgpu_bind *b = priv;
	struct vgpu_bind_op *o = b->cur;
	struct vgpu_vma *v = vgpu_bind_spare(b);

	if (!v)
		return -ENOMEM;
	drm_gpuva_map(&b->vm->base, &v->base, &op->map);
	v->flags = o->flags;
	if (o->obj) {
		mutex_lock(&to_vgpu_bo(o->obj)->gpuva_lock);
		drm_gpuva_link(&v->base, o->vm_bo);
		mutex_unlock(&to_vgpu_bo(o->obj)->gpuva_lock);
		/*
		 * Every BO has its own reservation object, so every mapped BO
		 * is an external object of the VM: SUBMIT locks them with the
		 * VM's and adds its fence (vgpu_vm_lock_objects()); leaves
		 * the list when its last mapping goes (drm_gpuvm_bo_destroy).
		 */
		drm_gpuvm_bo_extobj_add(o->vm_bo);
	} else if (o->up) {
		kref_get(&o->up->refcount);
		v->up = o->up;
	} else {
		v->base.flags |= DRM_GPUVA_SPARSE;
	}
	vgpu_as_write_range(b->vm->as, op->map.va.addr, op->map.va.range,
			    o->up ? &o->up->sgt : o->sgt, op->map.gem.offset,
			    v->flags, &b->pool);
	return 0;
}

static int vgpu_vm_step_remap(struct drm_gpuva_op *op, void *priv)
{
	struct vgpu_bind *b = priv;
	struct drm_gpuva *orig = op->remap.unmap->va;
	struct vgpu_vma *ov = to_vgpu_vma(orig), *prev = NULL, *next = NULL;
	struct drm_gem_object *obj = orig->gem.obj;
	u64 start, range;

	if (op->remap.prev) {
		prev = vgpu_bind_spare(b);
		if (!prev)
			return -ENOMEM;
	}
	if (op->remap.next) {
		next = vgpu_bind_spare(b);
		if (!next) {
			if (prev)
				list_add(&prev->link, &b->spare);
			return -ENOMEM;
		}
	}
	drm_gpuva_op_remap_to_unmap_range(&op->remap, &start, &range);
	vgpu_as_clear_range(b->vm->as, start, range, &b->pool);
	drm_gpuva_remap(prev ? &prev->base : NULL, next ? &next->base : NULL,
			&op->remap);
	/* the remnants keep the original's permissions and kind */
	if (prev) {
		prev->flags = ov->flags;
		prev->base.flags = orig->flags;
		prev->up = ov->up;
		if (ov->up)
			kref_get(&ov->up->refcount);
	}
	if (next) {
		next->flags = ov->flags;
		next->base.flags = orig->flags;
		next->up = ov->up;
		if (ov->up)
			kref_get(&ov->up->refcount);
	}
	if (obj) {
		/* before the original's unlink, which may drop the vm_bo */
		mutex_lock(&to_vgpu_bo(obj)->gpuva_lock);
		if (prev)
			drm_gpuva_link(&prev->base, orig->vm_bo);
		if (next)
			drm_gpuva_link(&next->base, orig->vm_bo);
		mutex_unlock(&to_vgpu_bo(obj)->gpuva_lock);
	}
	vgpu_vma_retire(ov, &b->dead);
	return 0;
}

static int vgpu_vm_step_unmap(struct drm_gpuva_op *op, void *priv)
{
	struct vgpu_bind *b = priv;
	struct drm_gpuva *va = op->unmap.va;

	vgpu_as_clear_range(b->vm->as, va->va.addr, va->va.range, &b->pool);
	drm_gpuva_unmap(&op->unmap);
	vgpu_vma_retire(to_vgpu_vma(va), &b->dead);
	return 0;
}

static void vgpu_bind_apply(struct vgpu_bind *b)
{
	struct vgpu_vm *vm = b->vm;
	u32 i;
	int ret;

	mutex_lock(&vm->lock);
	for (i = 0; i < b->nops; i++) {
		struct vgpu_bind_op *o = &b->ops[i];

		b->cur = o;
		if (o->op == VGPU_VM_BIND_OP_UNMAP)
			ret = drm_gpuvm_sm_unmap(&vm->base, b, o->va, o->range);
		else
			ret = drm_gpuvm_sm_map(&vm->base, b, o->va, o->range,
					       o->obj, o->offset);
		/* checked and preallocated: nothing can fail */
		WARN_ON(ret);
	}
	mutex_unlock(&vm->lock);
}

/*
 * In the path that signals the bind's fence: annotated, so that lockdep
 * reports any lock taken here that is also held across an allocation or
 * a fence wait (the ioctl allocates everything before the push).
 */
static struct dma_fence *vgpu_bind_run_job(struct drm_sched_job *sj)
{
	struct vgpu_bind *b = to_vgpu_bind(sj);
	bool cookie = dma_fence_begin_signalling();

	/* a killed entity's jobs (device removal) do nothing */
	if (!sj->s_fence->finished.error)
		vgpu_bind_apply(b);
	/*
	 * The tables it reserved and did not use are uncharged before its
	 * fence signals: a synchronous VM_BIND that returns sees its VM's
	 * page-table budget as the bind left it (freeing does not reclaim).
	 */
	vgpu_pt_pool_fini(&b->pool);
	dma_fence_end_signalling(cookie);
	return NULL;	/* done: drm_sched signals the finished fence */
}

static void vgpu_bind_free(struct vgpu_bind *b)
{
	struct vgpu_vma *v, *tmp;
	u32 i;

	for (i = 0; b->ops && i < b->nops; i++) {
		struct vgpu_bind_op *o = &b->ops[i];

		if (o->vm_bo)
			vgpu_vm_bo_put(o->obj, o->vm_bo);
		if (o->obj)
			drm_gem_object_put(o->obj);
		vgpu_userptr_put(o->up);
	}
	kvfree(b->ops);
	list_for_each_entry_safe(v, tmp, &b->spare, link)
		kfree(v);
	vgpu_pt_pool_fini(&b->pool);
	vgpu_vm_release_dead(b->vm->as, &b->dead);
	if (b->vf)
		vgpu_file_put(b->vf);
	vgpu_vm_put(b->vm);
	kfree(b);
}

static void vgpu_bind_release(struct vgpu_release *r)
{
	struct vgpu_bind *b = container_of(r, struct vgpu_bind, release);

	/* counted until here, as a job is (vgpu_job_release()) */
	if (b->vf)
		vgpu_jobs_release(b->vf, &b->vm->binds);
	vgpu_bind_free(b);
}

/*
 * The BO, VM and file references go later (vgpu_release_defer()): their
 * last puts take reservation locks, which free_job may not.  The bind
 * counts in its file's jobs in flight until then.
 */
static void vgpu_bind_free_job(struct drm_sched_job *sj)
{
	struct vgpu_bind *b = to_vgpu_bind(sj);
	struct vgpu_device *vdev = b->vm->vdev;

	drm_sched_job_cleanup(sj);
	vgpu_release_defer(vdev, &b->release, vgpu_bind_release);
}

static enum drm_gpu_sched_stat vgpu_bind_timedout_job(struct drm_sched_job *sj)
{
	/* run_job completes at once: a bind cannot hang */
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

static const struct drm_sched_backend_ops vgpu_bind_sched_ops = {
	.run_job = vgpu_bind_run_job,
	.free_job = vgpu_bind_free_job,
	.timedout_job = vgpu_bind_timedout_job,
};

int vgpu_bind_sched_init(struct vgpu_device *vdev)
{
	struct drm_sched_init_args args = {
		.ops = &vgpu_bind_sched_ops,
		.num_rqs = 1,
		.credit_limit = VGPU_BINDS_IN_FLIGHT,
		.timeout = MAX_SCHEDULE_TIMEOUT,
		.name = "vgpu-bind",
		.dev = vdev->drm.dev,
	};
	int ret = drm_sched_init(&vdev->bind_sched, &args);

	vdev->bind_live = !ret;
	return ret;
}

void vgpu_bind_sched_fini(struct vgpu_device *vdev)
{
	struct drm_sched_job *sj, *tmp;

	if (vdev->bind_live) {
		drm_sched_fini(&vdev->bind_sched);
		/* the binds whose free work had not run yet (all signalled) */
		list_for_each_entry_safe(sj, tmp, &vdev->bind_sched.pending_list,
					 list) {
			list_del_init(&sj->list);
			vgpu_bind_free_job(sj);
		}
	}
	vdev->bind_live = false;
}

/* ---- ioctls ---- */

int vgpu_ioctl_vm_create(struct drm_device *dev, void *data,
			 struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_vm_create *args = data;
	struct vgpu_vm *vm;
	int idx, ret;

	if (args->flags & ~VGPU_VM_CREATE_FLAGS)
		return -EINVAL;
	if (atomic_inc_return(&vf->nvms) > VGPU_MAX_VMS_PER_FILE) {
		atomic_dec(&vf->nvms);
		return -EMFILE;
	}
	if (!drm_dev_enter(dev, &idx)) {
		atomic_dec(&vf->nvms);
		return -ENODEV;
	}
	vm = vgpu_vm_create(vf);
	if (IS_ERR(vm)) {
		ret = PTR_ERR(vm);
		goto out;
	}
	/*
	 * Once the id is in the table, a VM_DESTROY of it (the ids are
	 * guessable) may drop the table's reference: hold our own until @vm
	 * is no longer touched.
	 */
	kref_get(&vm->refcount);
	ret = xa_alloc_cyclic(&vf->vms, &vm->id, vm, XA_LIMIT(1, U32_MAX),
			      &vf->next_vm_id, GFP_KERNEL);
	if (ret < 0) {
		refcount_dec(&vm->refcount.refcount);	/* never published */
		mutex_lock(&vf->vdev->files_lock);
		vgpu_vm_entity_fini(vm, true);
		mutex_unlock(&vf->vdev->files_lock);
		vgpu_vm_put(vm);
		goto out;
	}
	ret = 0;
	args->vm_id = vm->id;
	vgpu_vm_put(vm);
	args->va_start = VGPU_VA_START;
	args->va_size = VGPU_VA_SIZE;
out:
	if (ret)
		atomic_dec(&vf->nvms);
	drm_dev_exit(idx);
	return ret;
}

int vgpu_ioctl_vm_destroy(struct drm_device *dev, void *data,
			  struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_vm_destroy *args = data;
	struct vgpu_vm *vm;

	if (args->pad || args->vm_id == VGPU_VM_DEFAULT)
		return -EINVAL;
	vm = xa_erase(&vf->vms, args->vm_id);
	if (!vm)
		return -ENOENT;
	atomic_dec(&vf->nvms);
	/* No VM_BIND is between its entity use and push any more. */
	mutex_lock(&vm->submit_lock);
	vm->dead = true;
	mutex_lock(&vf->vdev->files_lock);
	vgpu_vm_entity_fini(vm, true);
	mutex_unlock(&vf->vdev->files_lock);
	mutex_unlock(&vm->submit_lock);
	vgpu_vm_put(vm);
	return 0;
}

/* Check @u and fill @o with what run_job needs.  @b's VM is @vm. */
static int vgpu_bind_op_prepare(struct vgpu_bind *b, struct drm_file *file,
				const struct drm_vgpu_vm_bind_op *u,
				struct vgpu_bind_op *o)
{
	struct vgpu_vm *vm = b->vm;
	struct drm_gpuvm_bo *vm_bo;
	struct vgpu_bo *bo;
	u64 end;
	int i, ret;

	if (u->pad || u->op > VGPU_VM_BIND_OP_MAP_USERPTR ||
	    u->flags & ~VGPU_VM_BIND_OP_FLAGS)
		return -EINVAL;
	if (!u->range || !PAGE_ALIGNED(u->va) || !PAGE_ALIGNED(u->range) ||
	    !PAGE_ALIGNED(u->bo_offset) ||
	    check_add_overflow(u->va, u->range, &end) ||
	    !drm_gpuvm_range_valid(&vm->base, u->va, u->range))
		return -EINVAL;
	o->op = u->op;
	o->flags = u->flags;
	o->va = u->va;
	o->range = u->range;
	o->offset = u->bo_offset;
	/*
	 * The most one op can take: a new mapping and the two remnants of
	 * one it splits (UNMAP: the remnants).
	 */
	for (i = 0; i < 3; i++) {
		struct vgpu_vma *v = vgpu_vma_alloc();

		if (!v)
			return -ENOMEM;
		list_add(&v->link, &b->spare);
	}
	switch (u->op) {
	case VGPU_VM_BIND_OP_UNMAP:
		if (u->flags || u->handle || u->bo_offset)
			return -EINVAL;
		/* splitting a NULL entry at either end takes a table */
		return vgpu_pt_pool_fill_how(vm->as, &b->pool, u->va, u->range,
					     VGPU_PT_FILL_EDGES);
	case VGPU_VM_BIND_OP_MAP_SPARSE:
		if (u->handle || u->bo_offset)
			return -EINVAL;
		if (u->range > VGPU_VM_BIND_MAX_SPARSE)
			return -E2BIG;
		/* NULL entries of 1 GiB and 2 MiB: tables only at the ends */
		return vgpu_pt_pool_fill_how(vm->as, &b->pool, u->va, u->range,
					     VGPU_PT_FILL_NULL);
	case VGPU_VM_BIND_OP_MAP_USERPTR:
		if (u->handle || check_add_overflow(u->bo_offset, u->range, &end))
			return -EINVAL;
		if (u->range > VGPU_VM_BIND_MAX_USERPTR)
			return -E2BIG;
		o->up = vgpu_userptr_pin(vm->vdev->drm.dev, u->bo_offset, u->range,
					 !(u->flags & VGPU_VM_BIND_READ_ONLY));
		if (IS_ERR(o->up)) {
			ret = PTR_ERR(o->up);
			o->up = NULL;
			return ret;
		}
		o->offset = 0;	/* the gpuva's offset: into the pinned pages */
		break;
	default:
		o->obj = drm_gem_object_lookup(file, u->handle);
		if (!o->obj)
			return -ENOENT;
		if (check_add_overflow(u->bo_offset, u->range, &end) ||
		    end > o->obj->size)
			return -EINVAL;
		bo = to_vgpu_bo(o->obj);
		o->flags |= bo->flags & (VGPU_BO_READ_ONLY | VGPU_BO_NO_EXEC);
		ret = vgpu_bo_pages(bo, &o->sgt);
		if (ret)
			return ret;
		/*
		 * Allocated before gpuva_lock, which run_job takes (a
		 * fence-signalling path may not wait for an allocation).
		 */
		vm_bo = vgpu_should_fail() ? NULL :
			drm_gpuvm_bo_create(&vm->base, o->obj);
		if (!vm_bo)
			return -ENOMEM;
		mutex_lock(&bo->gpuva_lock);
		o->vm_bo = drm_gpuvm_bo_obtain_prealloc(vm_bo);
		mutex_unlock(&bo->gpuva_lock);
		break;
	}
	return vgpu_pt_pool_fill(vm->as, &b->pool, u->va, u->range);
}

static int vgpu_bind_prepare(struct vgpu_bind *b, struct drm_file *file,
			     const struct drm_vgpu_vm_bind *args)
{
	struct drm_vgpu_vm_bind_op u;
	u32 i;
	int ret;

	b->ops = kvcalloc(args->op_count, sizeof(*b->ops), GFP_KERNEL_ACCOUNT);
	if (!b->ops)
		return -ENOMEM;
	b->nops = args->op_count;
	for (i = 0; i < args->op_count; i++) {
		if (copy_from_user(&u, u64_to_user_ptr(args->ops) + i * sizeof(u),
				   sizeof(u)))
			return -EFAULT;
		ret = vgpu_bind_op_prepare(b, file, &u, &b->ops[i]);
		if (ret)
			return ret;
		cond_resched();
	}
	return 0;
}

/*
 * A synchronous bind waits for every job of the VM submitted so far: each
 * holds a fence on the VM's reservation object.
 */
static int vgpu_bind_add_job_deps(struct vgpu_bind *b)
{
	struct dma_resv *resv = drm_gpuvm_resv(&b->vm->base);
	int ret;

	ret = dma_resv_lock_interruptible(resv, NULL);
	if (ret)
		return ret;
	ret = drm_sched_job_add_resv_dependencies(&b->base, resv,
						  DMA_RESV_USAGE_BOOKKEEP);
	dma_resv_unlock(resv);
	return ret;
}

static int vgpu_vm_bind(struct vgpu_vm *vm, struct drm_file *file,
			const struct drm_vgpu_vm_bind *args)
{
	bool sync = !args->in_sync_count && !args->out_sync_count;
	struct vgpu_file *vf = file->driver_priv;
	struct vgpu_out_sync *out = NULL;
	struct dma_fence *done;
	struct vgpu_bind *b;
	int ret;

	/*
	 * A bind is a job of the file: asynchronous ones held by in-syncs
	 * that never signal must not pile up without bound.
	 */
	ret = vgpu_jobs_reserve(vf, &vm->binds,
				file->filp && file->filp->f_flags & O_NONBLOCK);
	if (ret) {
		vgpu_vm_put(vm);
		return ret;
	}
	b = vgpu_should_fail() ? NULL : kzalloc(sizeof(*b), GFP_KERNEL_ACCOUNT);
	if (!b) {
		vgpu_jobs_release(vf, &vm->binds);
		vgpu_vm_put(vm);
		return -ENOMEM;
	}
	b->vm = vm;		/* the caller's reference */
	b->vf = vf;
	kref_get(&vf->refcount);
	INIT_LIST_HEAD(&b->spare);
	INIT_LIST_HEAD(&b->dead);
	vgpu_pt_pool_init(&b->pool);
	ret = drm_sched_job_init(&b->base, &vm->entity, 1, vm, file->client_id);
	if (ret) {
		vgpu_jobs_release(vf, &vm->binds);
		vgpu_bind_free(b);
		return ret;
	}
	ret = vgpu_bind_prepare(b, file, args);
	if (!ret)
		ret = sync ? vgpu_bind_add_job_deps(b) :
		      vgpu_in_syncs(&b->base, file, args->in_syncs,
				    args->in_sync_count);
	if (!ret)
		ret = vgpu_out_syncs_get(file, args->out_syncs,
					 args->out_sync_count, &out);
	if (ret)
		goto err;

	mutex_lock(&vm->submit_lock);
	if (vm->dead) {
		mutex_unlock(&vm->submit_lock);
		ret = -ENOENT;
		goto err;
	}
	drm_sched_job_arm(&b->base);
	done = dma_fence_get(&b->base.s_fence->finished);
	drm_sched_entity_push_job(&b->base);	/* @b belongs to the scheduler */
	mutex_unlock(&vm->submit_lock);

	vgpu_out_syncs_signal(out, args->out_sync_count, done);
	vgpu_out_syncs_put(out, args->out_sync_count);
	if (sync) {
		/*
		 * Interrupted, the bind still completes in the background; a
		 * restarted call applies the same ops again, to the same end.
		 */
		ret = dma_fence_wait(done, true);
		if (!ret)
			ret = done->error;
	}
	dma_fence_put(done);
	return ret;

err:
	vgpu_out_syncs_put(out, args->out_sync_count);
	drm_sched_job_cleanup(&b->base);
	vgpu_jobs_release(vf, &vm->binds);
	vgpu_bind_free(b);
	return ret;
}

int vgpu_ioctl_vm_bind(struct drm_device *dev, void *data,
		       struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_vm_bind *args = data;
	struct vgpu_vm *vm;
	int idx, ret;

	if (args->flags & ~VGPU_VM_BIND_FLAGS || args->pad ||
	    args->vm_id == VGPU_VM_DEFAULT || !args->op_count)
		return -EINVAL;
	if (args->op_count > VGPU_VM_BIND_MAX_OPS ||
	    args->in_sync_count > VGPU_SUBMIT_MAX_SYNCS ||
	    args->out_sync_count > VGPU_SUBMIT_MAX_SYNCS)
		return -E2BIG;
	vm = vgpu_vm_lookup(vf, args->vm_id);
	if (!vm)
		return -ENOENT;
	if (!drm_dev_enter(dev, &idx)) {
		vgpu_vm_put(vm);
		return -ENODEV;
	}
	ret = vgpu_vm_bind(vm, file, args);
	drm_dev_exit(idx);
	return ret;
}

/* ---- debugfs ---- */

/*
 * debugfs vms: per VM of each open file, its page-table bytes
 * (vgpu_as_pt_bytes()) and its mappings: start, size, the
 * BO (its mmap offset, BO_MMAP_OFFSET's, 0 before one was made), the
 * userptr (its address in the process) or "sparse", the offset in it and
 * the permissions.
 */
int vgpu_debugfs_vms_show(struct seq_file *m, struct vgpu_device *vdev)
{
	struct vgpu_file *vf;
	struct vgpu_vm *vm;
	struct drm_gpuva *va;

	mutex_lock(&vdev->files_lock);
	list_for_each_entry(vf, &vdev->files, link) {
		list_for_each_entry(vm, &vf->vm_list, link) {
			seq_printf(m, "client %llu vm %u asid %u extobjs %u pt-bytes %llu\n",
				   vf->client_id, vm->id, READ_ONCE(vm->as->asid),
				   vgpu_vm_extobjs(vm), vgpu_as_pt_bytes(vm->as));
			mutex_lock(&vm->lock);
			drm_gpuvm_for_each_va(va, &vm->base) {
				struct vgpu_vma *v = to_vgpu_vma(va);
				u64 key = va->gem.obj ?
					drm_vma_node_offset_addr(&va->gem.obj->vma_node) :
					v->up ? v->up->uaddr : 0;

				seq_printf(m, "  0x%llx 0x%llx %s 0x%llx 0x%llx r%c%c\n",
					   va->va.addr, va->va.range,
					   va->gem.obj ? "bo" : v->up ? "userptr" : "sparse",
					   key,
					   /* (drm_gpuvm offsets sparse remnants too) */
					   va->gem.obj || v->up ? va->gem.offset : 0,
					   v->flags & VGPU_VM_BIND_READ_ONLY ? '-' : 'w',
					   v->flags & VGPU_VM_BIND_NO_EXEC ? '-' : 'x');
			}
			mutex_unlock(&vm->lock);
		}
	}
	mutex_unlock(&vdev->files_lock);
	return 0;
}
