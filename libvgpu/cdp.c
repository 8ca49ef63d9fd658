// SPDX-License-Identifier: MIT
/*
 * The device-launch area of device-side launch (CUDA dynamic parallelism,
 * uapi/vgpu_hw.h, struct vgpu_cdp_header): one buffer per device, made by
 * the first launch of a program whose kernels launch kernels (its module
 * data holds VGPU_RELOC_KDESC descriptors, libvgpu/ptx/ptx_cdp.c), with
 * the slots vgpu_device_set_cdp_pending() set, then kept until the device
 * goes.  Every such launch carries its address (SUBMIT's
 * VGPU_SUBMIT_EXT_DEVICE_LAUNCH).
 */
#include <errno.h>
#include <string.h>

#include "le.h"
#include "vgpu_priv.h"

int vgpu_device_set_cdp_pending(struct vgpu_device *dev, uint32_t count)
{
	int ret = 0;

	if (!dev || !count || count > VGPU_CDP_MAX_PENDING)
		return -EINVAL;
	pthread_mutex_lock(&dev->heap_lock);
	if (dev->cdp_handle && count > dev->cdp_capacity) {
		ret = -EBUSY;
	} else {
		dev->cdp_pending = count;
		if (dev->cdp_handle) /* the kernels read it at each launch */
			vgpu_put_le32(dev->cdp_map, count);
	}
	pthread_mutex_unlock(&dev->heap_lock);
	return ret;
}

int vgpu_device_cdp_pending(struct vgpu_device *dev, uint32_t *count)
{
	if (!dev || !count)
		return -EINVAL;
	pthread_mutex_lock(&dev->heap_lock);
	*count = dev->cdp_pending ? dev->cdp_pending : VGPU_CDP_DEFAULT_PENDING;
	pthread_mutex_unlock(&dev->heap_lock);
	return 0;
}

/* One of the area's buffers, mapped: 0 or -errno. */
static int cdp_bo(struct vgpu_device *dev, uint64_t size, uint32_t *handle, uint64_t *va,
		  uint8_t **map)
{
	return vgpu_mapped_bo(dev, size, handle, va, map);
}

static void cdp_bo_free(struct vgpu_device *dev, uint32_t *handle, uint8_t *map, uint64_t size)
{
	if (!*handle)
		return;
	dev->ops->munmap(dev, map, size);
	vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = *handle });
	*handle = 0;
}

static int cdp_create(struct vgpu_device *dev)
{
	uint32_t n = dev->cdp_pending ? dev->cdp_pending : VGPU_CDP_DEFAULT_PENDING;
	/* room for the default count at least: a later, larger limit fits */
	uint32_t cap = n > VGPU_CDP_DEFAULT_PENDING ? n : VGPU_CDP_DEFAULT_PENDING;
	uint64_t size = VGPU_CDP_HEADER_BYTES + (uint64_t)cap * VGPU_CDP_SLOT_BYTES;
	int ret = cdp_bo(dev, VGPU_CDP_LOCAL_BYTES, &dev->cdp_lmem_handle, &dev->cdp_lmem_va,
			 &dev->cdp_lmem_map);

	if (!ret)
		ret = cdp_bo(dev, VGPU_PRINTF_BYTES, &dev->cdp_printf_handle, &dev->cdp_printf_va,
			     &dev->cdp_printf_map);
	if (!ret)
		ret = cdp_bo(dev, size, &dev->cdp_handle, &dev->cdp_va, &dev->cdp_map);
	if (ret) {
		vgpu_cdp_fini(dev);
		return ret;
	}
	*(struct vgpu_printf_header *)dev->cdp_printf_map = (struct vgpu_printf_header){
		.capacity = VGPU_PRINTF_BYTES - sizeof(struct vgpu_printf_header),
	};
	memset(dev->cdp_map, 0, size); /* every slot FREE, of no grid */
	for (uint32_t i = 0; i < cap; i++)
		vgpu_put_le32(dev->cdp_map + VGPU_CDP_HEADER_BYTES +
				      (uint64_t)i * VGPU_CDP_SLOT_BYTES + 8,
			      VGPU_CDP_NO_GRID);
	dev->cdp_size = size;
	dev->cdp_capacity = cap;
	vgpu_put_le32(dev->cdp_map, n);
	vgpu_put_le64(dev->cdp_map + 16, dev->cdp_lmem_va);
	vgpu_put_le64(dev->cdp_map + 24, VGPU_CDP_LOCAL_BYTES);
	vgpu_put_le64(dev->cdp_map + 32, dev->cdp_printf_va);
	return 0;
}

int vgpu_cdp_attach(struct vgpu_device *dev, uint32_t *handles, uint64_t *va)
{
	int ret = 0;

	pthread_mutex_lock(&dev->heap_lock);
	if (!dev->cdp_handle)
		ret = cdp_create(dev);
	if (!ret) {
		handles[0] = dev->cdp_handle;
		handles[1] = dev->cdp_lmem_handle;
		handles[2] = dev->cdp_printf_handle;
		*va = dev->cdp_va;
	}
	pthread_mutex_unlock(&dev->heap_lock);
	return ret;
}

char *vgpu_cdp_printf_collect(struct vgpu_device *dev, const struct vgpu_program *prog)
{
	struct vgpu_printf_header *h;
	char *text = NULL;

	pthread_mutex_lock(&dev->heap_lock);
	h = (struct vgpu_printf_header *)dev->cdp_printf_map;
	if (h && h->used) {
		text = vgpu_printf_collect(prog, dev->cdp_printf_map);
		h->used = 0;
	}
	pthread_mutex_unlock(&dev->heap_lock);
	return text;
}

void vgpu_cdp_fini(struct vgpu_device *dev)
{
	cdp_bo_free(dev, &dev->cdp_handle, dev->cdp_map, dev->cdp_size);
	cdp_bo_free(dev, &dev->cdp_lmem_handle, dev->cdp_lmem_map, VGPU_CDP_LOCAL_BYTES);
	cdp_bo_free(dev, &dev->cdp_printf_handle, dev->cdp_printf_map, VGPU_PRINTF_BYTES);
}
