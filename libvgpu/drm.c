// SPDX-License-Identifier: MIT
/*
 * libvgpu's drm backend: the ioctls go to vgpu.ko through libdrm, buffer
 * objects are mapped with mmap() on the DRM fd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "vgpu_priv.h"

static int drm_ioctl(struct vgpu_device *dev, unsigned long request, void *arg)
{
	/* drmIoctl restarts on EINTR and EAGAIN. */
	return drmIoctl(dev->fd, request, arg) ? -errno : 0;
}

static int drm_mmap(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		    void **ptr)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dev->fd,
		       (off_t)offset);

	if (p == MAP_FAILED)
		return -errno;
	*ptr = p;
	return 0;
}

static int drm_mmap_ro(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		       void **ptr)
{
	void *p = mmap(NULL, size, PROT_READ, MAP_SHARED, dev->fd, (off_t)offset);

	if (p == MAP_FAILED)
		return -errno;
	*ptr = p;
	return 0;
}

static int drm_mmap_at(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		       void *addr)
{
	return vgpu_mmap_fixed(addr, size, PROT_READ | PROT_WRITE, dev->fd,
			       offset);
}

/* The commands are in the ring: make them visible, then one store. */
static void drm_doorbell(struct vgpu_device *dev, uint32_t id,
			 volatile uint32_t *db, uint32_t tail)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	db[VGPU_DB_TAIL / 4] = tail;
}

static int drm_munmap(struct vgpu_device *dev, void *ptr, uint64_t size)
{
	return munmap(ptr, size) ? -errno : 0;
}

static void drm_close(struct vgpu_device *dev)
{
	close(dev->fd);
	dev->fd = -1;
}

static const struct vgpu_backend_ops drm_ops = {
	.ioctl = drm_ioctl,
	.mmap = drm_mmap,
	.mmap_ro = drm_mmap_ro,
	.mmap_at = drm_mmap_at,
	.munmap = drm_munmap,
	.doorbell = drm_doorbell,
	.close = drm_close,
};

int vgpu_drm_init(struct vgpu_device *dev, int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	drmDevicePtr d = NULL;
	char *node;

	if (!v)
		return errno == ENOMEM ? -ENOMEM : -ENODEV;
	if (!v->name || strcmp(v->name, "vgpu")) {
		drmFreeVersion(v);
		return -ENODEV;
	}
	snprintf(dev->driver, sizeof(dev->driver), "%s %d.%d.%d", v->name,
		 v->version_major, v->version_minor, v->version_patchlevel);
	drmFreeVersion(v);

	node = drmGetDeviceNameFromFd2(fd);
	if (node) {
		snprintf(dev->node, sizeof(dev->node), "%s", node);
		free(node);
	}
	if (!drmGetDevice2(fd, 0, &d)) {
		if (d->bustype == DRM_BUS_PCI)
			snprintf(dev->pci_slot, sizeof(dev->pci_slot),
				 "%04x:%02x:%02x.%x", d->businfo.pci->domain,
				 d->businfo.pci->bus, d->businfo.pci->dev,
				 d->businfo.pci->func);
		drmFreeDevice(&d);
	}
	dev->ops = &drm_ops;
	dev->backend = VGPU_BACKEND_DRM;
	dev->fd = fd;
	dev->sim = NULL;
	return 0;
}
