// SPDX-License-Identifier: MIT
/*
 * libvgpu devices: finding vgpu DRM devices, opening either backend,
 * parameters, and the one function every ioctl passes through.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>

#include "vgpu_priv.h"
#include "trace/timeline.h"

int vgpu_dev_ioctl(struct vgpu_device *dev, unsigned long request, void *arg)
{
	return dev->ops->ioctl(dev, request, arg);
}

void vgpu_dev_get(struct vgpu_device *dev)
{
	atomic_fetch_add(&dev->refs, 1);
}

static void dev_free(struct vgpu_device *dev)
{
	for (unsigned int i = 0; i < dev->nparam_bos; i++) {
		struct vgpu_param_bo *p = &dev->param_bos[i];
		struct drm_gem_close gc = { .handle = p->handle };

		dev->ops->munmap(dev, p->map, VGPU_MAX_PARAM_BYTES);
		vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
		if (p->local_handle) {
			gc.handle = p->local_handle;
			vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
		}
		if (p->tl_handle) {
			dev->ops->munmap(dev, p->tl_map, p->tl_size);
			gc.handle = p->tl_handle;
			vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
		}
		if (p->printf_handle) {
			dev->ops->munmap(dev, p->printf_map, VGPU_PRINTF_BYTES);
			gc.handle = p->printf_handle;
			vgpu_dev_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &gc);
		}
	}
	for (unsigned int i = 0; i < dev->njob_syncs; i++) {
		struct drm_syncobj_destroy d = { .handle = dev->job_syncs[i] };

		vgpu_dev_ioctl(dev, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	}
	vgpu_heap_fini(dev);
	vgpu_cdp_fini(dev);
	if (dev->ops)
		dev->ops->close(dev);
	pthread_mutex_destroy(&dev->lock);
	pthread_mutex_destroy(&dev->param_lock);
	pthread_mutex_destroy(&dev->heap_lock);
	pthread_mutex_destroy(&dev->cdp_run_lock);
	free(dev->param_bos);
	free(dev->job_syncs);
	free(dev->bos);
	free(dev->timeline_dir);
	free(dev);
}

void vgpu_dev_put(struct vgpu_device *dev)
{
	if (atomic_fetch_sub(&dev->refs, 1) == 1)
		dev_free(dev);
}

int vgpu_dev_check(const struct vgpu_device *dev)
{
	return atomic_load(&dev->closed) ? -ENODEV : 0;
}

int64_t vgpu_abs_timeout(int64_t timeout_ns)
{
	struct timespec ts;
	int64_t now;

	if (timeout_ns <= 0)
		return 0; /* already passed: a poll */
	if (timeout_ns == VGPU_TIMEOUT_INFINITE)
		return INT64_MAX;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return timeout_ns > INT64_MAX - now ? INT64_MAX : now + timeout_ns;
}

bool vgpu_deadline_ahead(int64_t deadline)
{
	struct timespec ts;

	if (deadline <= 0 || deadline == INT64_MAX)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec < deadline;
}

const char *vgpu_backend_name(enum vgpu_backend backend)
{
	switch (backend) {
	case VGPU_BACKEND_AUTO:
		return "auto";
	case VGPU_BACKEND_DRM:
		return "drm";
	case VGPU_BACKEND_SIM:
		return "sim";
	}
	return NULL;
}

/* Is the DRM device behind the node @path driven by vgpu.ko? */
static bool node_is_vgpu(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	drmVersionPtr v;
	bool ret;

	if (fd < 0)
		return false;
	v = drmGetVersion(fd);
	ret = v && v->name && !strcmp(v->name, "vgpu");
	drmFreeVersion(v);
	close(fd);
	return ret;
}

static int desc_cmp(const void *a, const void *b)
{
	return strcmp(((const struct vgpu_device_desc *)a)->pci_slot,
		      ((const struct vgpu_device_desc *)b)->pci_slot);
}

/* Every vgpu device, malloc'd into *@out (sorted by PCI slot). */
static int list_all(struct vgpu_device_desc **out, unsigned int *count)
{
	drmDevicePtr *devs;
	struct vgpu_device_desc *descs;
	unsigned int n = 0;
	int ndevs;

	*out = NULL;
	*count = 0;
	ndevs = drmGetDevices2(DRM_DEVICE_GET_PCI_REVISION, NULL, 0);
	if (ndevs <= 0)
		return 0; /* no DRM at all (-ENODEV or similar): no device */
	devs = calloc((size_t)ndevs, sizeof(*devs));
	descs = calloc((size_t)ndevs, sizeof(*descs));
	if (!devs || !descs) {
		free(devs);
		free(descs);
		return -ENOMEM;
	}
	ndevs = drmGetDevices2(DRM_DEVICE_GET_PCI_REVISION, devs, ndevs);
	for (int i = 0; i < ndevs; i++) {
		drmDevicePtr d = devs[i];
		struct vgpu_device_desc *desc = &descs[n];
		const char *node;

		if (d->bustype != DRM_BUS_PCI)
			continue;
		if (d->available_nodes & (1 << DRM_NODE_RENDER))
			node = d->nodes[DRM_NODE_RENDER];
		else if (d->available_nodes & (1 << DRM_NODE_PRIMARY))
			node = d->nodes[DRM_NODE_PRIMARY];
		else
			continue;
		if (!node_is_vgpu(node))
			continue;
		memset(desc, 0, sizeof(*desc));
		snprintf(desc->node, sizeof(desc->node), "%s", node);
		snprintf(desc->pci_slot, sizeof(desc->pci_slot),
			 "%04x:%02x:%02x.%x", d->businfo.pci->domain,
			 d->businfo.pci->bus, d->businfo.pci->dev,
			 d->businfo.pci->func);
		desc->vendor_id = d->deviceinfo.pci->vendor_id;
		desc->device_id = d->deviceinfo.pci->device_id;
		desc->revision = d->deviceinfo.pci->revision_id;
		n++;
	}
	drmFreeDevices(devs, ndevs > 0 ? ndevs : 0);
	free(devs);
	qsort(descs, n, sizeof(*descs), desc_cmp);
	*out = descs;
	*count = n;
	return 0;
}

int vgpu_device_list(struct vgpu_device_desc *descs, unsigned int max,
		     unsigned int *count)
{
	struct vgpu_device_desc *all;
	unsigned int n;
	int ret;

	if (!count || (max && !descs))
		return -EINVAL;
	ret = list_all(&all, &n);
	if (ret)
		return ret;
	if (max && n)
		memcpy(descs, all, (n < max ? n : max) * sizeof(*descs));
	free(all);
	*count = n;
	return 0;
}

static struct vgpu_device *dev_alloc(void)
{
	struct vgpu_device *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	atomic_init(&dev->refs, 1);
	atomic_init(&dev->closed, false);
	dev->fd = -1;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_mutex_init(&dev->param_lock, NULL);
	pthread_mutex_init(&dev->heap_lock, NULL);
	pthread_mutex_init(&dev->cdp_run_lock, NULL);
	/* read once: a launch does not look at the environment */
	if (vgpu_timeline_dir()) {
		dev->timeline_dir = strdup(vgpu_timeline_dir());
		if (!dev->timeline_dir) {
			dev_free(dev);
			return NULL;
		}
	}
	return dev;
}

static int open_sim(struct vgpu_device **out)
{
	struct vgpu_device *dev = dev_alloc();
	int ret;

	if (!dev)
		return -ENOMEM;
	ret = vgpu_sim_init(dev);
	if (ret) {
		dev->ops = NULL;
		dev_free(dev);
		return ret;
	}
	/* launch.c, launch_inline(); =1: every launch through a parameter page */
	{
		const char *e = getenv("VGPU_SIM_PARAM_PAGES");

		dev->inline_params = dev->ops->submit_job && !(e && *e && strcmp(e, "0"));
	}
	*out = dev;
	return 0;
}

/* Adopts @fd: closed on failure. */
static int open_drm_fd(int fd, struct vgpu_device **out)
{
	struct vgpu_device *dev = dev_alloc();
	int ret;

	if (!dev) {
		close(fd);
		return -ENOMEM;
	}
	ret = vgpu_drm_init(dev, fd);
	if (ret) {
		close(fd);
		dev_free(dev);
		return ret;
	}
	*out = dev;
	return 0;
}

static int open_drm_path(const char *path, struct vgpu_device **out)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	return open_drm_fd(fd, out);
}

/* The drm device at PCI slot @slot, or the first one for NULL. */
static int open_drm_slot(const char *slot, struct vgpu_device **out)
{
	struct vgpu_device_desc *all;
	unsigned int n;
	int ret;

	ret = list_all(&all, &n);
	if (ret)
		return ret;
	ret = -ENODEV;
	for (unsigned int i = 0; i < n; i++) {
		if (!slot || !strcasecmp(all[i].pci_slot, slot)) {
			ret = open_drm_path(all[i].node, out);
			break;
		}
	}
	free(all);
	return ret;
}

int vgpu_device_open(const char *name, struct vgpu_device **out)
{
	if (!out)
		return -EINVAL;
	if (!name || !name[0] || !strcmp(name, "auto")) {
		const char *env = getenv("VGPU_BACKEND");
		unsigned int n = 0;
		struct vgpu_device_desc *all;

		if (env && env[0] && strcmp(env, "auto")) {
			if (strcmp(env, "drm") && strcmp(env, "sim"))
				return -EINVAL;
			name = env;
		} else {
			int ret = list_all(&all, &n);

			if (ret)
				return ret;
			free(all);
			name = n ? "drm" : "sim";
		}
	}
	if (!strcmp(name, "sim"))
		return open_sim(out);
	if (!strcmp(name, "drm"))
		return open_drm_slot(NULL, out);
	if (name[0] == '/')
		return open_drm_path(name, out);
	/* a PCI slot: dddd:bb:dd.f */
	if (strlen(name) == 12 && name[4] == ':' && name[7] == ':' &&
	    name[10] == '.')
		return open_drm_slot(name, out);
	return -EINVAL;
}

int vgpu_device_open_fd(int fd, struct vgpu_device **out)
{
	int nfd;

	if (fd < 0 || !out)
		return -EINVAL;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (nfd < 0)
		return -errno;
	return open_drm_fd(nfd, out);
}

void vgpu_device_close(struct vgpu_device *dev)
{
	if (!dev)
		return;
	atomic_store(&dev->closed, true);
	vgpu_dev_put(dev);
}

enum vgpu_backend vgpu_device_backend(const struct vgpu_device *dev)
{
	return dev->backend;
}

int vgpu_device_fd(const struct vgpu_device *dev)
{
	return dev->backend == VGPU_BACKEND_DRM ? dev->fd : -EOPNOTSUPP;
}

int vgpu_device_get_param(struct vgpu_device *dev, uint32_t param,
			  uint64_t *value)
{
	struct drm_vgpu_get_param gp = { .param = param };
	int ret;

	if (!value)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_GET_PARAM, &gp);
	if (!ret)
		*value = gp.value;
	return ret;
}

/*
 * The SMs' shape (VGPU_PARAM_MODEL on) of a driver before 1.4, which has
 * no such parameters: the vgpu model's, as such a device was.
 */
static void shape_before_1_4(uint64_t *param)
{
	param[VGPU_PARAM_MODEL] = VGPU_MODEL_VGPU;
	param[VGPU_PARAM_SMEM_SM] = param[VGPU_PARAM_SMEM];
	param[VGPU_PARAM_CTAS_SM] = 1;
	param[VGPU_PARAM_WARPS_SM] = param[VGPU_PARAM_WARP_SIZE] ?
		param[VGPU_PARAM_MAX_THREADS] / param[VGPU_PARAM_WARP_SIZE] : 0;
	param[VGPU_PARAM_REGS_SM] = VGPU_DEFAULT_REGS_PER_SM;
	param[VGPU_PARAM_CLUSTER] = VGPU_PORTABLE_CLUSTER_CTAS;
	param[VGPU_PARAM_CLUSTER_MAX] = VGPU_MAX_CLUSTER_CTAS;
}

int vgpu_device_query(struct vgpu_device *dev, struct vgpu_device_info *info)
{
	struct vgpu_device_info tmp = { .backend = dev->backend };
	int ret;

	if (!info)
		return -EINVAL;
	memcpy(tmp.node, dev->node, sizeof(tmp.node));
	memcpy(tmp.pci_slot, dev->pci_slot, sizeof(tmp.pci_slot));
	memcpy(tmp.driver, dev->driver, sizeof(tmp.driver));
	for (uint32_t p = 0; p < VGPU_PARAM_COUNT; p++) {
		ret = vgpu_device_get_param(dev, p, &tmp.param[p]);
		if (ret == -EINVAL && p == VGPU_PARAM_MODEL) {
			shape_before_1_4(tmp.param);
			break;
		}
		if (ret)
			return ret;
	}
	*info = tmp;
	return 0;
}

int vgpu_device_set_sim_option(struct vgpu_device *dev,
			       enum vgpu_sim_option option, uint64_t value)
{
	int ret = vgpu_dev_check(dev);

	if (ret)
		return ret;
	if (dev->backend != VGPU_BACKEND_SIM)
		return -EOPNOTSUPP;
	return vgpu_sim_set_option(dev, option, value);
}

int vgpu_device_set_trace(struct vgpu_device *dev, FILE *f)
{
	int ret = vgpu_dev_check(dev);

	if (ret)
		return ret;
	if (dev->backend != VGPU_BACKEND_SIM)
		return -EOPNOTSUPP;
	return vgpu_sim_set_trace(dev, f);
}
