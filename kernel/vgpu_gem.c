// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: shmem-backed GEM objects (drm_gem_shmem_helper), mapped
 * into the GPU address space of every file that holds a handle to them.
 *
 * A BO has no pages until something needs them (uapi/vgpu_drm.h, "BO
 * memory"): a SUBMIT that lists it, a CPU mmap, a dma-buf importer
 * (pin, vmap).  Creating it, or a handle to it, only reserves its VA in
 * the file's address space (vgpu_gem_open); the PTEs are written when the
 * pages come (vgpu_bo_make_resident), or at once for a BO that has them.
 * From then on the pages stay until the BO is freed.
 *
 * The pages are charged to the memory cgroup of the process that created
 * the BO, whichever process makes them resident, so that a cgroup's limit
 * holds and its OOM killer finds the holder; and the bytes of every
 * resident BO, of every vgpu device together (as TTM's page limit is
 * global), count against vgpu_mem_limit() (module parameter mem_limit_mb,
 * default half of RAM), so that clients of the GPU cannot take memory the
 * rest of the system needs: the global OOM killer cannot see pinned GPU
 * memory (it is in no process's RSS) and would kill bystanders instead.
 * A client past its share gets -ENOMEM before any of that.
 *
 * Each open file's share: the BOs it created count against
 * vgpu_client_mem_limit() (client_mem_limit_mb, default three quarters of
 * mem_limit_mb) once resident, and against max_bos_per_file while they
 * exist (each shmem GEM object holds a struct file of the system's file
 * table), whoever holds them, so that one client cannot take all the
 * memory, nor the file table, from the others.
 *
 * Locking: bo->lock (the mappings) is never held while the reservation
 * lock is taken or the other way round: the pages are obtained first, the
 * mappings filled after.
 */
#include <linux/dma-resv.h>
#include <linux/memcontrol.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <drm/drm_prime.h>
#include <drm/drm_utils.h>
#include "vgpu_drv.h"

unsigned int vgpu_mem_limit_mb;
module_param_named(mem_limit_mb, vgpu_mem_limit_mb, uint, 0644);
MODULE_PARM_DESC(mem_limit_mb,
		 "MiB of resident BO memory per device (0: half of RAM)");

static unsigned int vgpu_client_mem_limit_mb;
module_param_named(client_mem_limit_mb, vgpu_client_mem_limit_mb, uint, 0644);
MODULE_PARM_DESC(client_mem_limit_mb,
		 "MiB of resident BO memory one open file's BOs may hold (0: three quarters of mem_limit_mb)");

static unsigned int vgpu_max_bos_per_file = VGPU_MAX_BOS_PER_FILE;
module_param_named(max_bos_per_file, vgpu_max_bos_per_file, uint, 0644);
MODULE_PARM_DESC(max_bos_per_file,
		 "BOs one open file may have created and not yet freed (default "
		 __stringify(VGPU_MAX_BOS_PER_FILE) ")");

/* bytes of resident BOs of every device */
static atomic64_t vgpu_resident_total;

/* Bytes of BO memory every device together may hold resident. */
u64 vgpu_mem_limit(void)
{
	unsigned int mb = READ_ONCE(vgpu_mem_limit_mb);

	if (mb)
		return (u64)mb << 20;
	return ((u64)totalram_pages() << PAGE_SHIFT) / 2;
}

/* Bytes of resident BO memory the BOs one file created may hold. */
u64 vgpu_client_mem_limit(void)
{
	unsigned int mb = READ_ONCE(vgpu_client_mem_limit_mb);

	if (mb)
		return (u64)mb << 20;
	return vgpu_mem_limit() / 4 * 3;
}

s64 vgpu_mem_total(void)
{
	return atomic64_read(&vgpu_resident_total);
}

/*
 * Count @bo's bytes as resident: in every device's total, its creator's
 * and its device's.  False, with nothing counted, past the total's limit
 * or the creator's.
 */
static bool vgpu_mem_charge(struct vgpu_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	s64 size = obj->size;

	if (atomic64_add_return(size, &vgpu_resident_total) > vgpu_mem_limit())
		goto undo_total;
	if (bo->owner &&
	    atomic64_add_return(size, &bo->owner->resident) > vgpu_client_mem_limit())
		goto undo_owner;
	atomic64_add(size, &to_vgpu(obj->dev)->resident);
	return true;

undo_owner:
	atomic64_sub(size, &bo->owner->resident);
undo_total:
	atomic64_sub(size, &vgpu_resident_total);
	return false;
}

static void vgpu_mem_uncharge(struct vgpu_bo *bo)
{
	struct drm_gem_object *obj = &bo->base.base;
	s64 size = obj->size;

	atomic64_sub(size, &to_vgpu(obj->dev)->resident);
	if (bo->owner)
		atomic64_sub(size, &bo->owner->resident);
	atomic64_sub(size, &vgpu_resident_total);
}

static struct vgpu_mapping *vgpu_bo_find_mapping(struct vgpu_bo *bo,
						 struct vgpu_as *as)
{
	struct vgpu_mapping *m;

	list_for_each_entry(m, &bo->mappings, link)
		if (m->as == as)
			return m;
	return NULL;
}

/* GPU VA of @bo in @as, 0 if not mapped there. */
u64 vgpu_bo_va(struct vgpu_bo *bo, struct vgpu_as *as)
{
	struct vgpu_mapping *m;
	u64 va = 0;

	mutex_lock(&bo->lock);
	m = vgpu_bo_find_mapping(bo, as);
	if (m)
		va = m->node.start << PAGE_SHIFT;
	mutex_unlock(&bo->lock);
	return va;
}

static bool vgpu_bo_has_pages(struct vgpu_bo *bo)
{
	return bo->base.base.import_attach ||
	       test_bit(VGPU_BO_RESIDENT, &bo->state);
}

/*
 * Run @get, which acquires @bo's pages, charging them to the creator's
 * memcg and, the first time, counting them against the limits
 * (vgpu_mem_charge()).  Returns @get's result, or -ENOMEM past a limit.
 */
static int vgpu_bo_populate(struct vgpu_bo *bo,
			    int (*get)(struct drm_gem_object *obj, void *arg),
			    void *arg)
{
	struct drm_gem_object *obj = &bo->base.base;
	struct mem_cgroup *old;
	bool counted = false;
	int ret;

	if (obj->import_attach)
		return get(obj, arg);
	if (!test_bit(VGPU_BO_RESIDENT, &bo->state)) {
		if (vgpu_should_fail() || !vgpu_mem_charge(bo))
			return -ENOMEM;
		counted = true;
	}
	old = set_active_memcg(bo->memcg);
	ret = get(obj, arg);
	set_active_memcg(old);
	/* Counted once: by whoever set the bit. */
	if (counted && (ret || test_and_set_bit(VGPU_BO_RESIDENT, &bo->state)))
		vgpu_mem_uncharge(bo);
	return ret;
}

static int vgpu_bo_get_sgt(struct drm_gem_object *obj, void *arg)
{
	struct sg_table *sgt;

	if (obj->import_attach)
		sgt = to_drm_gem_shmem_obj(obj)->sgt;
	else
		sgt = drm_gem_shmem_get_pages_sgt(to_drm_gem_shmem_obj(obj));
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	*(struct sg_table **)arg = sgt;
	return 0;
}

/* Point every mapping of @bo that does not yet at its pages @sgt. */
static int vgpu_bo_fill_locked(struct vgpu_bo *bo, struct sg_table *sgt)
{
	struct vgpu_mapping *m;
	int ret;

	list_for_each_entry(m, &bo->mappings, link) {
		if (m->filled)
			continue;
		ret = vgpu_as_fill(m->as, &m->node, sgt, bo->flags);
		if (ret)
			return ret;
		m->filled = true;
	}
	return 0;
}

/**
 * vgpu_bo_make_resident - give @bo its pages and map them in every
 *                         address space that has a handle to it
 * @bo: the BO (a reference held)
 *
 * Process context, no reservation lock held.  Cheap once done.
 *
 * Return: 0, or -ENOMEM (the device's limit, the memcg's, or no memory;
 * nothing changed then, or -ERESTARTSYS/-EINTR from a signal.
 */
int vgpu_bo_make_resident(struct vgpu_bo *bo)
{
	struct sg_table *sgt = NULL;
	int ret;

	/* the PTEs written before it was set are the device's to read */
	if (smp_load_acquire(&bo->mapped))
		return 0;
	ret = vgpu_bo_populate(bo, vgpu_bo_get_sgt, &sgt);
	if (ret)
		return ret;
	mutex_lock(&bo->lock);
	ret = vgpu_bo_fill_locked(bo, sgt);
	if (!ret) /* pairs with the smp_load_acquire() above: mapped means filled */
		smp_store_release(&bo->mapped, true);
	mutex_unlock(&bo->lock);
	return ret;
}

static int vgpu_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct vgpu_bo *bo = to_vgpu_bo(obj);
	struct sg_table *sgt = NULL;
	struct vgpu_mapping *m;
	int ret = 0;

	/* A BO with pages is mapped in full at once (its sgt exists). */
	if (vgpu_bo_has_pages(bo)) {
		ret = vgpu_bo_populate(bo, vgpu_bo_get_sgt, &sgt);
		if (ret)
			return ret;
	}
	mutex_lock(&bo->lock);
	if (vgpu_bo_find_mapping(bo, vf->as))
		goto out;	/* a second handle in the same file */
	m = vgpu_should_fail() ? NULL : kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m) {
		ret = -ENOMEM;
		goto out;
	}
	ret = vgpu_as_reserve(vf->as, &m->node, obj->size);
	if (!ret && sgt) {
		ret = vgpu_as_fill(vf->as, &m->node, sgt, bo->flags);
		if (ret)
			vgpu_as_unmap(vf->as, &m->node);
		m->filled = !ret;
	}
	if (ret) {
		kfree(m);
		goto out;
	}
	m->as = vgpu_as_get(vf->as);
	list_add_tail(&m->link, &bo->mappings);
	/* the pages may have come since has_pages() said no: fill it later */
	if (!m->filled)
		WRITE_ONCE(bo->mapped, false);
out:
	mutex_unlock(&bo->lock);
	return ret;
}

/**
 * vgpu_bo_pages - @bo's pages, allocated if it has none (VM_BIND)
 * @bo:  the BO
 * @sgt: its pages, DMA-mapped, valid until the BO is freed
 *
 * Return: 0, -ENOMEM past a limit (as vgpu_bo_make_resident()), or
 * -ERESTARTSYS/-EINTR.
 */
int vgpu_bo_pages(struct vgpu_bo *bo, struct sg_table **sgt)
{
	return vgpu_bo_populate(bo, vgpu_bo_get_sgt, sgt);
}

static void vgpu_mapping_free(struct vgpu_deferred *d)
{
	kfree(container_of(d, struct vgpu_mapping, dfr));
}

static void vgpu_gem_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct vgpu_bo *bo = to_vgpu_bo(obj);
	struct vgpu_mapping *m;

	mutex_lock(&bo->lock);
	m = vgpu_bo_find_mapping(bo, vf->as);
	if (m) {
		struct vgpu_as *as = m->as;

		list_del(&m->link);
		vgpu_as_unmap(as, &m->node);
		/* A job of @as may still cache the old translations. */
		m->dfr.free = vgpu_mapping_free;
		if (!m->filled || !vgpu_as_defer(as, obj, &m->dfr))
			kfree(m);
		vgpu_as_put(as);
	}
	mutex_unlock(&bo->lock);
}

static void vgpu_gem_free(struct drm_gem_object *obj)
{
	struct vgpu_bo *bo = to_vgpu_bo(obj);

	WARN_ON(!list_empty(&bo->mappings));
	if (test_bit(VGPU_BO_RESIDENT, &bo->state))
		vgpu_mem_uncharge(bo);
	if (bo->owner) {
		atomic_dec(&bo->owner->bos);
		vgpu_file_put(bo->owner);
	}
	mem_cgroup_put(bo->memcg);
	mutex_destroy(&bo->gpuva_lock);
	mutex_destroy(&bo->lock);
	drm_gem_shmem_free(&bo->base);
}

/*
 * The other ways to the pages (a CPU mapping, a dma-buf importer's pin or
 * vmap) populate through vgpu_bo_populate() too.  pin and vmap run under
 * the reservation lock, so they leave the GPU mappings to the next
 * vgpu_bo_make_resident(); mmap makes the BO resident (GPU mappings
 * included), after which the shmem helper's mmap allocates nothing.
 */
static int vgpu_gem_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	int ret = obj->import_attach ? 0 : vgpu_bo_make_resident(to_vgpu_bo(obj));

	return ret ?: drm_gem_shmem_object_mmap(obj, vma);
}

static int vgpu_gem_pin_get(struct drm_gem_object *obj, void *arg)
{
	return drm_gem_shmem_object_pin(obj);
}

static int vgpu_gem_pin(struct drm_gem_object *obj)
{
	return vgpu_bo_populate(to_vgpu_bo(obj), vgpu_gem_pin_get, NULL);
}

static int vgpu_gem_vmap_get(struct drm_gem_object *obj, void *arg)
{
	return drm_gem_shmem_object_vmap(obj, arg);
}

static int vgpu_gem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	return vgpu_bo_populate(to_vgpu_bo(obj), vgpu_gem_vmap_get, map);
}

/* fdinfo (drm_show_memory_stats): under the file's table spinlock. */
static enum drm_gem_object_status vgpu_gem_status(struct drm_gem_object *obj)
{
	return vgpu_bo_has_pages(to_vgpu_bo(obj)) ? DRM_GEM_OBJECT_RESIDENT : 0;
}

static size_t vgpu_gem_rss(struct drm_gem_object *obj)
{
	return vgpu_bo_has_pages(to_vgpu_bo(obj)) ? obj->size : 0;
}

static const struct drm_gem_object_funcs vgpu_gem_funcs = {
	.free = vgpu_gem_free,
	.open = vgpu_gem_open,
	.close = vgpu_gem_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = vgpu_gem_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = vgpu_gem_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = vgpu_gem_mmap,
	.status = vgpu_gem_status,
	.rss = vgpu_gem_rss,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *vgpu_gem_create_object(struct drm_device *dev,
					      size_t size)
{
	struct vgpu_bo *bo;

	bo = vgpu_should_fail() ? NULL : kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	/* Cached CPU mappings: the device is cache-coherent (x86, QEMU DMA). */
	bo->base.map_wc = false;
	bo->base.base.funcs = &vgpu_gem_funcs;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
	/* the list of its VM_BIND mappings (drm_gpuvm_bo) */
	mutex_init(&bo->gpuva_lock);
	drm_gem_gpuva_set_lock(&bo->base.base, &bo->gpuva_lock);
	return &bo->base.base;
}

static int vgpu_bo_create_check(const struct drm_vgpu_bo_create *args)
{
	if (args->flags & ~VGPU_BO_FLAGS || !args->size)
		return -EINVAL;
	if (args->size > VGPU_BO_MAX_SIZE)
		return -E2BIG;
	return 0;
}

int vgpu_ioctl_bo_create(struct drm_device *dev, void *data,
			 struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_bo_create *args = data;
	struct drm_gem_shmem_object *shmem;
	struct vgpu_bo *bo;
	u32 handle;
	int ret;

	ret = vgpu_bo_create_check(args);
	if (ret)
		return ret;
	if (atomic_inc_return(&vf->bos) > READ_ONCE(vgpu_max_bos_per_file)) {
		atomic_dec(&vf->bos);
		return -EMFILE;
	}
	shmem = drm_gem_shmem_create(dev, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem)) {
		atomic_dec(&vf->bos);
		return PTR_ERR(shmem);
	}
	bo = container_of(shmem, struct vgpu_bo, base);
	/* counted in vf->bos until freed (vgpu_gem_free) */
	kref_get(&vf->refcount);
	bo->owner = vf;
	bo->flags = args->flags & ~VGPU_BO_POPULATE;
#ifdef CONFIG_MEMCG
	bo->memcg = get_mem_cgroup_from_mm(current->mm);
#endif

	/*
	 * Everything that can fail happens before the handle exists: once
	 * it is published, another thread of the process may close it (the
	 * number is guessable), so it is never deleted by number here.  A
	 * populated BO is mapped in full when the handle is made
	 * (vgpu_gem_open); its pages come first.
	 */
	if (args->flags & VGPU_BO_POPULATE) {
		struct sg_table *sgt;

		ret = vgpu_bo_pages(bo, &sgt);
		if (ret)
			goto out;
	}
	/* Creating the handle reserves the BO's VA (vgpu_gem_open). */
	ret = drm_gem_handle_create(file, &shmem->base, &handle);
	if (ret)
		goto out;
	/*
	 * Our reference keeps @bo alive, whatever a racing GEM_CLOSE does to
	 * the handle: then the VA reads 0, and the handle is gone anyway.
	 */
	args->va = vgpu_bo_va(bo, vf->as);
	args->handle = handle;
out:
	drm_gem_object_put(&shmem->base);
	return ret;
}

int vgpu_ioctl_bo_mmap_offset(struct drm_device *dev, void *data,
			      struct drm_file *file)
{
	struct drm_vgpu_bo_mmap_offset *args = data;
	struct drm_gem_object *obj;
	int ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	ret = drm_gem_create_mmap_offset(obj);
	if (!ret)
		args->offset = drm_vma_node_offset_addr(&obj->vma_node);
	drm_gem_object_put(obj);
	return ret;
}

int vgpu_ioctl_bo_info(struct drm_device *dev, void *data,
		       struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_bo_info *args = data;
	struct drm_gem_object *obj;
	struct vgpu_bo *bo;

	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	bo = to_vgpu_bo(obj);
	args->flags = bo->flags;
	args->size = obj->size;
	args->va = vgpu_bo_va(bo, vf->as);
	drm_gem_object_put(obj);
	return 0;
}

/* vgpu_jiffies_until() for a deadline @left_ns from now. */
static long vgpu_jiffies_left(s64 left_ns)
{
	const u64 tick_ns = NSEC_PER_SEC / HZ;
	u64 j;

	if (left_ns <= 0)
		return 0;
	j = div64_u64((u64)left_ns + tick_ns - 1, tick_ns) + 1;
	return min_t(u64, j, MAX_SCHEDULE_TIMEOUT - 1);
}

/**
 * vgpu_jiffies_until - a wait's length in jiffies for an absolute timeout
 * @deadline_ns: CLOCK_MONOTONIC nanoseconds; 0 means poll
 *
 * Rounded up, plus one for the tick in progress, so that the wait never
 * ends before @deadline_ns.  (drm_timeout_abs_to_jiffies() rounds the
 * nanoseconds left down to whole jiffies before adding one: a 2 ms wait
 * with HZ=250 became "until the next tick", which may come at once.)
 * Returns 0 once the deadline has passed.
 */
long vgpu_jiffies_until(s64 deadline_ns)
{
	if (deadline_ns <= 0)
		return 0;
	return vgpu_jiffies_left(deadline_ns - ktime_get_ns());
}

int vgpu_ioctl_wait_bo(struct drm_device *dev, void *data,
		       struct drm_file *file)
{
	struct drm_vgpu_wait_bo *args = data;
	struct drm_gem_object *obj;
	long ret;

	if (args->pad)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	/*
	 * BOOKKEEP, not READ: a job of a VM queue that reaches the BO through
	 * the VM without listing it has only a bookkeeping fence here, and
	 * the BO is not idle while it runs.
	 */
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_BOOKKEEP, true,
				    vgpu_jiffies_until(args->timeout_ns));
	drm_gem_object_put(obj);
	if (ret == 0)
		return -ETIME;
	return ret < 0 ? ret : 0;
}

#if IS_ENABLED(CONFIG_DRM_VGPU_KUNIT_TEST)
#include "tests/vgpu_gem_test.c"
#endif
