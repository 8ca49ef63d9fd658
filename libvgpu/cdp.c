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

int vgpu_cdp_attach(struct vgpu_device *dev, uint32_t *handle, uint64_t *va)
{
	int ret = 0;

	pthread_mutex_lock(&dev->heap_lock);
	if (!dev->cdp_handle) {
		uint32_t n = dev->cdp_pending ? dev->cdp_pending : VGPU_CDP_DEFAULT_PENDING;
		/* room for the default count at least: a later, larger limit fits */
		uint32_t cap = n > VGPU_CDP_DEFAULT_PENDING ? n : VGPU_CDP_DEFAULT_PENDING;
		uint64_t size = VGPU_CDP_HEADER_BYTES + (uint64_t)cap * VGPU_CDP_SLOT_BYTES;

		ret = vgpu_mapped_bo(dev, size, &dev->cdp_handle, &dev->cdp_va, &dev->cdp_map);
		if (!ret) {
			memset(dev->cdp_map, 0, size); /* every slot FREE */
			dev->cdp_size = size;
			dev->cdp_capacity = cap;
			vgpu_put_le32(dev->cdp_map, n);
		}
	}
	if (!ret) {
		*handle = dev->cdp_handle;
		*va = dev->cdp_va;
	}
	pthread_mutex_unlock(&dev->heap_lock);
	return ret;
}

void vgpu_cdp_fini(struct vgpu_device *dev)
{
	if (!dev->cdp_handle)
		return;
	dev->ops->munmap(dev, dev->cdp_map, dev->cdp_size);
	vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = dev->cdp_handle });
}
