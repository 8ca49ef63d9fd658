// SPDX-License-Identifier: MIT
/*
 * libvgpu buffer objects: GEM objects of the device's file (or the
 * simulator's), their CPU mappings and dma-buf sharing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vgpu_priv.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* Linux 4.17, glibc 2.28 */
#endif

int vgpu_mmap_fixed(void *addr, uint64_t size, int prot, int fd, uint64_t off)
{
	void *p = mmap(addr, size, prot, MAP_SHARED | MAP_FIXED_NOREPLACE, fd,
		       (off_t)off);

	if (p == MAP_FAILED)
		return -errno;
	if (p != addr) { /* a kernel before 4.17: the flag was only a hint */
		munmap(p, size);
		return -EEXIST;
	}
	return 0;
}

/* Under dev->lock. */
static int bos_add(struct vgpu_device *dev, struct vgpu_bo *bo)
{
	if (dev->nbos == dev->bos_cap) {
		unsigned int cap = dev->bos_cap ? 2 * dev->bos_cap : 16;
		struct vgpu_bo **n = realloc(dev->bos, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		dev->bos = n;
		dev->bos_cap = cap;
	}
	dev->bos[dev->nbos++] = bo;
	return 0;
}

/* Under dev->lock. */
static void bos_remove(struct vgpu_device *dev, struct vgpu_bo *bo)
{
	for (unsigned int i = 0; i < dev->nbos; i++) {
		if (dev->bos[i] == bo) {
			dev->bos[i] = dev->bos[--dev->nbos];
			return;
		}
	}
}

static void gem_close(struct vgpu_device *dev, uint32_t handle)
{
	struct drm_gem_close gc = { .handle = handle };

	vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
}

/* A struct vgpu_bo for @handle, registered with the device (under its lock). */
static int bo_wrap_locked(struct vgpu_device *dev, uint32_t handle, uint64_t size,
		   uint32_t flags, uint64_t va, struct vgpu_bo **out)
{
	struct vgpu_bo *bo = calloc(1, sizeof(*bo));
	int ret;

	if (!bo)
		return -ENOMEM;
	bo->dev = dev;
	atomic_init(&bo->refs, 1);
	bo->handle = handle;
	bo->size = size;
	bo->flags = flags;
	bo->va = va;
	pthread_mutex_init(&bo->lock, NULL);
	ret = bos_add(dev, bo);
	if (ret) {
		pthread_mutex_destroy(&bo->lock);
		free(bo);
		return ret;
	}
	vgpu_dev_get(dev);
	*out = bo;
	return 0;
}

int vgpu_bo_new(struct vgpu_device *dev, uint64_t size, uint32_t flags,
		struct vgpu_bo **out)
{
	/*
	 * With its pages from the start: the library hands out GPU addresses
	 * that kernels may use without listing the buffer (vgpu.h).
	 */
	struct drm_vgpu_bo_create c = { .size = size,
					.flags = flags | VGPU_BO_POPULATE };
	int ret;

	if (!out || (flags & VGPU_BO_POPULATE))
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_CREATE, &c);
	if (ret)
		return ret;
	pthread_mutex_lock(&dev->lock);
	ret = bo_wrap_locked(dev, c.handle, (size + 4095) & ~4095ull, flags,
			     c.va, out);
	pthread_mutex_unlock(&dev->lock);
	if (ret)
		gem_close(dev, c.handle);
	return ret;
}

void vgpu_bo_free(struct vgpu_bo *bo)
{
	struct vgpu_device *dev;

	if (!bo)
		return;
	dev = bo->dev;
	/*
	 * The device lock orders this against an import finding @bo or its
	 * handle: the handle is closed under it.
	 */
	pthread_mutex_lock(&dev->lock);
	if (atomic_load(&bo->refs) == 1) {
		/*
		 * The last reference: let the jobs that use the buffer complete
		 * first, since closing the handle unmaps it from the GPU address
		 * space at once (vgpu.ko), under a running job.  An import may
		 * take a reference meanwhile.
		 */
		pthread_mutex_unlock(&dev->lock);
		vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_WAIT_BO,
			       &(struct drm_vgpu_wait_bo){
				       .handle = bo->handle,
				       .timeout_ns = INT64_MAX });
		pthread_mutex_lock(&dev->lock);
	}
	if (atomic_fetch_sub(&bo->refs, 1) != 1) {
		pthread_mutex_unlock(&dev->lock);
		return;
	}
	bos_remove(dev, bo);
	gem_close(dev, bo->handle);
	pthread_mutex_unlock(&dev->lock);

	if (bo->map)
		dev->ops->munmap(dev, bo->map, bo->size);
	if (bo->gpu_map)
		dev->ops->munmap(dev, bo->gpu_map, bo->size);
	pthread_mutex_destroy(&bo->lock);
	free(bo);
	vgpu_dev_put(dev);
}

uint64_t vgpu_bo_size(const struct vgpu_bo *bo)
{
	return bo->size;
}

uint64_t vgpu_bo_gpu_address(const struct vgpu_bo *bo)
{
	return bo->va;
}

uint32_t vgpu_bo_flags(const struct vgpu_bo *bo)
{
	return bo->flags;
}

uint32_t vgpu_bo_handle(const struct vgpu_bo *bo)
{
	return bo->handle;
}

int vgpu_bo_map(struct vgpu_bo *bo, void **ptr)
{
	struct drm_vgpu_bo_mmap_offset mo = { .handle = bo->handle };
	int ret = 0;

	if (!ptr)
		return -EINVAL;
	pthread_mutex_lock(&bo->lock);
	if (!bo->map) {
		ret = vgpu_dev_ioctl(bo->dev, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &mo);
		if (!ret)
			ret = bo->dev->ops->mmap(bo->dev, mo.offset, bo->size,
						 &bo->map);
	}
	if (!ret)
		*ptr = bo->map;
	pthread_mutex_unlock(&bo->lock);
	return ret;
}

int vgpu_bo_map_at_gpu_address(struct vgpu_bo *bo, void **ptr)
{
	struct drm_vgpu_bo_mmap_offset mo = { .handle = bo->handle };
	void *addr = (void *)(uintptr_t)bo->va;
	int ret = 0;

	if (!ptr)
		return -EINVAL;
	/* a GPU address a host pointer cannot hold (32-bit hosts) */
	if ((uint64_t)(uintptr_t)addr != bo->va)
		return -ENOMEM;
	pthread_mutex_lock(&bo->lock);
	if (!bo->gpu_map) {
		ret = vgpu_dev_ioctl(bo->dev, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &mo);
		if (!ret)
			ret = bo->dev->ops->mmap_at(bo->dev, mo.offset, bo->size,
						    addr);
		if (!ret)
			bo->gpu_map = addr;
	}
	if (!ret)
		*ptr = bo->gpu_map;
	pthread_mutex_unlock(&bo->lock);
	return ret;
}

int vgpu_bo_unmap(struct vgpu_bo *bo)
{
	int ret = 0, r;

	pthread_mutex_lock(&bo->lock);
	if (bo->map) {
		ret = bo->dev->ops->munmap(bo->dev, bo->map, bo->size);
		bo->map = NULL;
	}
	if (bo->gpu_map) {
		r = bo->dev->ops->munmap(bo->dev, bo->gpu_map, bo->size);
		ret = ret ? ret : r;
		bo->gpu_map = NULL;
	}
	pthread_mutex_unlock(&bo->lock);
	return ret;
}

static int bo_range(struct vgpu_bo *bo, uint64_t offset, size_t len,
		    void **ptr)
{
	void *map;
	int ret;

	if ((!*ptr && len) || offset > bo->size || len > bo->size - offset)
		return -EINVAL;
	ret = vgpu_bo_map(bo, &map);
	if (ret)
		return ret;
	*ptr = (uint8_t *)map + offset;
	return 0;
}

int vgpu_bo_write(struct vgpu_bo *bo, uint64_t offset, const void *data,
		  size_t len)
{
	void *p = (void *)data;
	int ret = bo_range(bo, offset, len, &p);

	if (!ret)
		memcpy(p, data, len);
	return ret;
}

int vgpu_bo_read(struct vgpu_bo *bo, uint64_t offset, void *data, size_t len)
{
	void *p = data;
	int ret = bo_range(bo, offset, len, &p);

	if (!ret)
		memcpy(data, p, len);
	return ret;
}

int vgpu_bo_wait(struct vgpu_bo *bo, int64_t timeout_ns)
{
	struct drm_vgpu_wait_bo w = {
		.handle = bo->handle,
		.timeout_ns = vgpu_abs_timeout(timeout_ns),
	};
	int ret;

	do
		ret = vgpu_dev_ioctl(bo->dev, DRM_IOCTL_VGPU_WAIT_BO, &w);
	while (ret == -ETIME && vgpu_deadline_ahead(w.timeout_ns));
	return ret;
}

int vgpu_bo_export(struct vgpu_bo *bo, int *fd)
{
	struct drm_prime_handle p = {
		.handle = bo->handle,
		.flags = DRM_CLOEXEC | DRM_RDWR,
		.fd = -1,
	};
	int ret;

	if (!fd)
		return -EINVAL;
	ret = vgpu_dev_ioctl(bo->dev, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	if (!ret)
		*fd = p.fd;
	return ret;
}

int vgpu_bo_import(struct vgpu_device *dev, int fd, struct vgpu_bo **out)
{
	struct drm_prime_handle p = { .fd = fd };
	struct drm_vgpu_bo_info info = { 0 };
	int ret;

	if (!out)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	/*
	 * The lock covers the ioctl too: a concurrent free of the buffer
	 * that has this handle would otherwise close the handle just
	 * returned.
	 */
	pthread_mutex_lock(&dev->lock);
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	if (ret)
		goto unlock;
	for (unsigned int i = 0; i < dev->nbos; i++) {
		if (dev->bos[i]->handle == p.handle) {
			atomic_fetch_add(&dev->bos[i]->refs, 1);
			*out = dev->bos[i];
			goto unlock;
		}
	}
	info.handle = p.handle;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_BO_INFO, &info);
	if (!ret)
		ret = bo_wrap_locked(dev, p.handle, info.size, info.flags,
				     info.va, out);
	if (ret)
		gem_close(dev, p.handle);
unlock:
	pthread_mutex_unlock(&dev->lock);
	return ret;
}
