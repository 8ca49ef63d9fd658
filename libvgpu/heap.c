// SPDX-License-Identifier: MIT
/*
 * The device heap of device malloc/free (docs/ptx.md, "Device heap"):
 * one buffer per device, made by the first launch of a kernel whose
 * program calls them (its module data holds a VGPU_RELOC_HEAP64 word,
 * libvgpu/ptx/ptx_heap.c), of the size vgpu_device_set_heap_size() set,
 * then kept (blocks outlive launches) until the device goes.
 */
#include <errno.h>
#include <string.h>

#include "le.h"
#include "vgpu_priv.h"

int vgpu_device_set_heap_size(struct vgpu_device *dev, uint64_t bytes)
{
	int ret = 0;

	if (!dev || bytes < VGPU_HEAP_MIN_BYTES || bytes > VGPU_HEAP_MAX_BYTES)
		return -EINVAL;
	pthread_mutex_lock(&dev->heap_lock);
	if (dev->heap_handle)
		ret = -EBUSY;
	else
		dev->heap_size = bytes;
	pthread_mutex_unlock(&dev->heap_lock);
	return ret;
}

int vgpu_device_heap_size(struct vgpu_device *dev, uint64_t *bytes)
{
	if (!dev || !bytes)
		return -EINVAL;
	pthread_mutex_lock(&dev->heap_lock);
	*bytes = dev->heap_size ? dev->heap_size : VGPU_HEAP_DEFAULT_BYTES;
	pthread_mutex_unlock(&dev->heap_lock);
	return 0;
}

/* The heap, made with its header: bump offset, limit, empty free lists. */
static int heap_create(struct vgpu_device *dev)
{
	uint64_t size = dev->heap_size ? dev->heap_size : VGPU_HEAP_DEFAULT_BYTES;
	int ret = vgpu_mapped_bo(dev, size, &dev->heap_handle, &dev->heap_va, &dev->heap_map);

	if (ret)
		return ret;
	dev->heap_size = size;
	memset(dev->heap_map, 0, VGPU_HEAP_HEADER_BYTES);
	vgpu_put_le64(dev->heap_map, VGPU_HEAP_HEADER_BYTES);
	vgpu_put_le64(dev->heap_map + 8, size);
	return 0;
}

int vgpu_heap_attach(const struct vgpu_program *prog, uint32_t *handle)
{
	struct vgpu_device *dev = prog->dev;
	/* the program's heap words, written once (module data is the program's) */
	atomic_bool *set = (atomic_bool *)&prog->heap_set;
	int ret = 0;

	pthread_mutex_lock(&dev->heap_lock);
	if (!dev->heap_handle)
		ret = heap_create(dev);
	for (uint32_t i = 0; !ret && !atomic_load(set) && i < prog->obj.nrelocs; i++) {
		const struct vgpu_obj_reloc *x = &prog->obj.relocs[i];
		uint8_t w[8];

		if (x->kind != VGPU_RELOC_HEAP64)
			continue;
		vgpu_put_le64(w, dev->heap_va);
		ret = vgpu_bo_write(prog->data, x->offset, w, sizeof(w));
	}
	if (!ret) {
		atomic_store(set, true);
		*handle = dev->heap_handle;
	}
	pthread_mutex_unlock(&dev->heap_lock);
	return ret;
}

void vgpu_heap_fini(struct vgpu_device *dev)
{
	if (!dev->heap_handle)
		return;
	dev->ops->munmap(dev, dev->heap_map, dev->heap_size);
	vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &(struct drm_gem_close){ .handle = dev->heap_handle });
}
