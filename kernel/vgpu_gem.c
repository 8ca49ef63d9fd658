// SPDX-License-Identifier: GPL-2.0
/*
 * Buffer objects: shmem-backed GEM objects (drm_gem_shmem_helper), mapped
 * into the GPU address space of every file that holds a handle to them.
 * The mapping is made in the GEM open callback (handle creation, PRIME
 * import included) and removed in the close callback; the backing pages
 * are pinned from the first mapping until the object is freed.
 */
#include <linux/dma-resv.h>
#include <linux/slab.h>
#include <drm/drm_prime.h>
#include <drm/drm_utils.h>
#include "vgpu_drv.h"

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

static int vgpu_gem_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;
	struct vgpu_bo *bo = to_vgpu_bo(obj);
	struct vgpu_mapping *m;
	struct sg_table *sgt;
	int ret = 0;

	mutex_lock(&bo->lock);
	if (vgpu_bo_find_mapping(bo, vf->as))
		goto out;	/* a second handle in the same file */
	sgt = drm_gem_shmem_get_pages_sgt(&bo->base);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out;
	}
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		ret = -ENOMEM;
		goto out;
	}
	ret = vgpu_as_map(vf->as, &m->node, sgt, obj->size, bo->flags);
	if (ret) {
		kfree(m);
		goto out;
	}
	m->as = vgpu_as_get(vf->as);
	list_add_tail(&m->link, &bo->mappings);
out:
	mutex_unlock(&bo->lock);
	return ret;
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
		if (!vgpu_as_defer(as, obj, m))
			kfree(m);
		vgpu_as_put(as);
	}
	mutex_unlock(&bo->lock);
}

static void vgpu_gem_free(struct drm_gem_object *obj)
{
	struct vgpu_bo *bo = to_vgpu_bo(obj);

	WARN_ON(!list_empty(&bo->mappings));
	mutex_destroy(&bo->lock);
	drm_gem_shmem_free(&bo->base);
}

static const struct drm_gem_object_funcs vgpu_gem_funcs = {
	.free = vgpu_gem_free,
	.open = vgpu_gem_open,
	.close = vgpu_gem_close,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *vgpu_gem_create_object(struct drm_device *dev,
					      size_t size)
{
	struct vgpu_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	/* Cached CPU mappings: the device is cache-coherent (x86, QEMU DMA). */
	bo->base.map_wc = false;
	bo->base.base.funcs = &vgpu_gem_funcs;
	mutex_init(&bo->lock);
	INIT_LIST_HEAD(&bo->mappings);
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
	int ret;

	ret = vgpu_bo_create_check(args);
	if (ret)
		return ret;

	shmem = drm_gem_shmem_create(dev, PAGE_ALIGN(args->size));
	if (IS_ERR(shmem))
		return PTR_ERR(shmem);
	bo = container_of(shmem, struct vgpu_bo, base);
	bo->flags = args->flags;

	/* Creating the handle maps the BO (vgpu_gem_open). */
	ret = drm_gem_handle_create(file, &shmem->base, &args->handle);
	drm_gem_object_put(&shmem->base);
	if (ret)
		return ret;
	args->va = vgpu_bo_va(bo, vf->as);
	return 0;
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
	ret = dma_resv_wait_timeout(obj->resv, DMA_RESV_USAGE_READ, true,
				    vgpu_jiffies_until(args->timeout_ns));
	drm_gem_object_put(obj);
	if (ret == 0)
		return -ETIME;
	return ret < 0 ? ret : 0;
}

#if IS_ENABLED(CONFIG_DRM_VGPU_KUNIT_TEST)
#include "tests/vgpu_gem_test.c"
#endif
