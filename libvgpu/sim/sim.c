/* SPDX-License-Identifier: MIT */
/**
 * DOC: the sim backend
 *
 * A simulated device answers the ioctls of vgpu.ko (uapi/vgpu_drm.h) and
 * the DRM core ioctls libvgpu uses (GEM_CLOSE, PRIME, SYNCOBJ) in process,
 * on the execution core of qemu-device/core (which is GPL-2.0-or-later:
 * a program linking this backend links the core).  One struct vgpu_sim is
 * one open DRM file: its own GEM handles, GPU address space, syncobjs and
 * job history.  Nothing is global; everything hangs off the device.
 *
 * What matches the driver and a vgpu-pci device of the model
 * VGPU_SIM_MODEL names (the default vgpu model; h100: 132 SMs, 227 KiB of
 * shared memory a CTA and the H100's occupancy limits in GET_PARAM):
 *  - dispatch as drm_ioctl(): a request of another ioctl type is -ENOTTY,
 *    a driver ioctl number past the last is -EINVAL; the argument is
 *    copied in and out by the size encoded in the request, zero-filling a
 *    shorter struct (a NULL argument is -EFAULT);
 *  - every check and its order and errno (vgpu_drv.c, vgpu_gem.c,
 *    vgpu_job.c, drm_gem.c, drm_prime.c, drm_syncobj.c of Linux 6.1),
 *    parameters, VA layout (from 1 MiB, best fit, one unmapped guard page
 *    after each BO), lowest-free handle allocation, job ids and history;
 *  - what the device does with a launch (vgpu-queue.c): program fetch
 *    with execute permission and parameter fetch with read permission
 *    (VGPU_ERR_MMU_FAULT), program load and launch validation
 *    (VGPU_ERR_BAD_LAUNCH), then the run (VGPU_ERR_EXCEPTION); MMU faults
 *    fill exc.addr, exc.info[] and exc.msg as vgpu_mmu_fault_record()
 *    does, with the page-table level vgpu.ko's tables would fail at;
 *    the fence error is -EFAULT for an MMU fault or GLOBAL_FAULT and -EIO
 *    for any other failure (vgpu_hw_status_errno()).
 *
 * What differs:
 *  - execution is synchronous: SUBMIT runs the job to completion on the
 *    device's one SM (VGPU_SIM_THREADS=N: on N SMs, N - 1 of them on
 *    threads of the device, sim_pool.c) before it returns, under the
 *    device lock (jobs of a
 *    device, on any queue, run one at a time; other ioctls of the device
 *    wait for a running job).  So every fence is signalled once it
 *    exists, a BO is always idle (WAIT_BO returns 0 at once), and GET_JOB
 *    only ever reports DONE or FAILED;
 *  - a waiter blocked in SYNCOBJ_WAIT with WAIT_FOR_SUBMIT wakes when
 *    another thread submits or signals the point (a condition variable);
 *  - no job timeout, device reset or watchdog: JOB_TIMEOUT_MS reads 0 and
 *    the instruction budget bounds a launch; RESET_COUNT stays 0;
 *  - elapsed_ns is device time: the SM cycles the job took (the core's
 *    clock, in which NANOSLEEP counts 1 ns per cycle; on several SMs the
 *    most one SM spent), deterministic on one SM
 *    where the QEMU device reports host time; warp_insns is the core's
 *    count in both;
 *  - BOs are memfds (sealed against resizing): PRIME export returns a
 *    duplicate of the memfd (read-only, reopened, without DRM_RDWR),
 *    import accepts any mappable fd, and importing memory this device
 *    already holds gives the same handle.  A BO keeps its VGPU_BO_* flags
 *    across devices (they are recorded in the memfd's name), as a
 *    dma-buf imported into another file of the same vgpu device does;
 *  - syncobj fds (SYNCOBJ_HANDLE_TO_FD/FD_TO_HANDLE) and every other
 *    ioctl the sim does not implement give -ENOTTY;
 *  - user pointers in ioctl structs cannot be checked in process: 0 with
 *    a non-zero count is -EFAULT (as copy_from_user() fails), any other
 *    pointer is trusted;
 *  - the address space id in MMU-fault records is always 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>

#include "sim_priv.h"
#include "trace/timeline.h"

/* ---- models: presets of the SMs' shape, as vgpu-pci's model= ---- */

static const struct sim_model sim_models[] = {
	{
		.name = "vgpu", .id = VGPU_MODEL_VGPU, .sms = SIM_SMS,
		.smem = VGPU_DEFAULT_SMEM_PER_SM, .smem_reserved = 0,
		.ctas_per_sm = 1, .warps_per_sm = VGPU_MAX_WARPS_PER_CTA,
		.regs_per_sm = VGPU_DEFAULT_REGS_PER_SM,
		.cluster = VGPU_PORTABLE_CLUSTER_CTAS, .cluster_max = VGPU_MAX_CLUSTER_CTAS,
	},
	{
		.name = "h100", .id = VGPU_MODEL_H100, .sms = VGPU_H100_SMS,
		.smem = VGPU_H100_SMEM_PER_SM, .smem_reserved = VGPU_H100_SMEM_RESERVED,
		.ctas_per_sm = VGPU_H100_CTAS_PER_SM, .warps_per_sm = VGPU_H100_WARPS_PER_SM,
		.regs_per_sm = VGPU_DEFAULT_REGS_PER_SM,
		.cluster = VGPU_PORTABLE_CLUSTER_CTAS, .cluster_max = VGPU_MAX_CLUSTER_CTAS,
	},
};

static const struct sim_model *sim_model_by_id(uint64_t id)
{
	for (size_t i = 0; i < SIM_ARRAY_SIZE(sim_models); i++)
		if (sim_models[i].id == id)
			return &sim_models[i];
	return NULL;
}

/* $VGPU_SIM_MODEL: a model's name; unset or empty: vgpu */
static int sim_model_env(const struct sim_model **out)
{
	const char *e = getenv("VGPU_SIM_MODEL");

	*out = &sim_models[0];
	if (!e || !e[0])
		return 0;
	for (size_t i = 0; i < SIM_ARRAY_SIZE(sim_models); i++) {
		if (!strcmp(e, sim_models[i].name)) {
			*out = &sim_models[i];
			return 0;
		}
	}
	fprintf(stderr, "libvgpu: VGPU_SIM_MODEL=%s: unknown model (valid: vgpu, h100)\n", e);
	return -EINVAL;
}

/* The SMs of @m run by @nthreads threads: at least one for each thread. */
static void sim_model_config(struct vgpu_sm_config *cfg, const struct sim_model *m,
			     uint32_t nthreads)
{
	cfg->smem_max = m->smem - m->smem_reserved;
	cfg->nsms = nthreads > m->sms ? nthreads : m->sms;
	cfg->nwarpids = m->warps_per_sm;
}

/* ---- GET_PARAM ---- */

static int sim_get_param(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_get_param *args = data;

	if (args->pad)
		return -EINVAL;
	switch (args->param) {
	case VGPU_PARAM_DEVICE_ID:
		args->value = (uint64_t)VGPU_PCI_VENDOR_ID << 16 | VGPU_PCI_DEVICE_ID;
		break;
	case VGPU_PARAM_REVISION:
		args->value = VGPU_PCI_REVISION;
		break;
	case VGPU_PARAM_HW_VERSION:
		args->value = VGPU_VERSION_MAJOR << 16 | VGPU_VERSION_MINOR;
		break;
	case VGPU_PARAM_SMS:
		args->value = sim->cfg.nsms;
		break;
	case VGPU_PARAM_SMEM:
		args->value = sim->cfg.smem_max;
		break;
	case VGPU_PARAM_MAX_THREADS:
		args->value = VGPU_MAX_THREADS_PER_CTA;
		break;
	case VGPU_PARAM_BARRIERS:
		args->value = VGPU_NUM_NAMED_BARRIERS;
		break;
	case VGPU_PARAM_FEATURES:
		args->value = VGPU_FEAT_MMU | VGPU_FEAT_RANDOM_SCHED |
			      VGPU_FEAT_MBARRIER | VGPU_FEAT_TMA |
			      VGPU_FEAT_CLUSTERS | VGPU_FEAT_SEMAPHORES |
			      VGPU_FEAT_PREEMPT | VGPU_FEAT_USER_QUEUES |
			      (sim->no_device_launch ? 0 : VGPU_FEAT_DEVICE_LAUNCH);
		break;
	case VGPU_PARAM_QUEUES:
		args->value = SIM_QUEUES;
		break;
	case VGPU_PARAM_WARP_SIZE:
		args->value = VGPU_WARP_SIZE;
		break;
	case VGPU_PARAM_MAX_PARAM:
		args->value = VGPU_MAX_PARAM_BYTES;
		break;
	case VGPU_PARAM_MAX_CODE:
		args->value = VGPU_MAX_CODE_BYTES;
		break;
	case VGPU_PARAM_VA_BITS:
		args->value = VGPU_VA_BITS;
		break;
	case VGPU_PARAM_VA_START:
		args->value = SIM_VA_START;
		break;
	case VGPU_PARAM_VA_SIZE:
		args->value = SIM_VA_END - SIM_VA_START;
		break;
	case VGPU_PARAM_RESET_COUNT:
	case VGPU_PARAM_FILE_RESET_COUNT:
		args->value = 0;
		break;
	case VGPU_PARAM_JOB_TIMEOUT_MS:
		args->value = 0; /* no job timeout on the sim */
		break;
	case VGPU_PARAM_DRIVER_VERSION:
		args->value = SIM_DRIVER_MAJOR << 16 | SIM_DRIVER_MINOR;
		break;
	case VGPU_PARAM_MAX_QUEUES:
		args->value = VGPU_MAX_QUEUES_PER_FILE;
		break;
	case VGPU_PARAM_BAN_AFTER:
		args->value = 0; /* nothing hangs on the sim: never banned */
		break;
	case VGPU_PARAM_USER_QUEUES:
		args->value = SIM_USER_QUEUES;
		break;
	case VGPU_PARAM_MODEL:
		args->value = sim->model->id;
		break;
	case VGPU_PARAM_SMEM_SM:
		args->value = sim->model->smem;
		break;
	case VGPU_PARAM_CTAS_SM:
		args->value = sim->model->ctas_per_sm;
		break;
	case VGPU_PARAM_WARPS_SM:
		args->value = sim->model->warps_per_sm;
		break;
	case VGPU_PARAM_REGS_SM:
		args->value = sim->model->regs_per_sm;
		break;
	case VGPU_PARAM_CLUSTER:
		args->value = sim->model->cluster;
		break;
	case VGPU_PARAM_CLUSTER_MAX:
		args->value = sim->model->cluster_max;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* ---- dispatch ---- */

struct sim_ioctl {
	unsigned long cmd; /* the definition: direction and size */
	int (*fn)(struct vgpu_sim *sim, void *data);
};

static const struct sim_ioctl sim_driver_ioctls[] = {
	[DRM_VGPU_GET_PARAM] = { DRM_IOCTL_VGPU_GET_PARAM, sim_get_param },
	[DRM_VGPU_BO_CREATE] = { DRM_IOCTL_VGPU_BO_CREATE, vgpu_sim_bo_create },
	[DRM_VGPU_BO_MMAP_OFFSET] = { DRM_IOCTL_VGPU_BO_MMAP_OFFSET,
				      vgpu_sim_bo_mmap_offset },
	[DRM_VGPU_BO_INFO] = { DRM_IOCTL_VGPU_BO_INFO, vgpu_sim_bo_info },
	[DRM_VGPU_SUBMIT] = { DRM_IOCTL_VGPU_SUBMIT, vgpu_sim_submit },
	[DRM_VGPU_WAIT_BO] = { DRM_IOCTL_VGPU_WAIT_BO, vgpu_sim_wait_bo },
	[DRM_VGPU_GET_JOB] = { DRM_IOCTL_VGPU_GET_JOB, vgpu_sim_get_job },
	[DRM_VGPU_QUEUE_CREATE] = { DRM_IOCTL_VGPU_QUEUE_CREATE,
				    vgpu_sim_queue_create },
	[DRM_VGPU_QUEUE_DESTROY] = { DRM_IOCTL_VGPU_QUEUE_DESTROY,
				     vgpu_sim_queue_destroy },
	[DRM_VGPU_QUEUE_GET_STATE] = { DRM_IOCTL_VGPU_QUEUE_GET_STATE,
				       vgpu_sim_queue_get_state },
	/* no VM_CREATE/DESTROY/BIND: -EINVAL, as past the table */
	[DRM_VGPU_USERQ_CREATE] = { DRM_IOCTL_VGPU_USERQ_CREATE,
				    vgpu_sim_userq_create },
	[DRM_VGPU_USERQ_DESTROY] = { DRM_IOCTL_VGPU_USERQ_DESTROY,
				     vgpu_sim_userq_destroy },
	[DRM_VGPU_USERQ_GET_STATE] = { DRM_IOCTL_VGPU_USERQ_GET_STATE,
				       vgpu_sim_userq_get_state },
	[DRM_VGPU_WAIT_USER_FENCE] = { DRM_IOCTL_VGPU_WAIT_USER_FENCE,
				       vgpu_sim_wait_user_fence },
};

#define SIM_CORE(ioctl, fn) [_IOC_NR(ioctl)] = { ioctl, fn }
static const struct sim_ioctl sim_core_ioctls[1u << _IOC_NRBITS] = {
	SIM_CORE(DRM_IOCTL_GEM_CLOSE, vgpu_sim_gem_close),
	SIM_CORE(DRM_IOCTL_PRIME_HANDLE_TO_FD, vgpu_sim_prime_handle_to_fd),
	SIM_CORE(DRM_IOCTL_PRIME_FD_TO_HANDLE, vgpu_sim_prime_fd_to_handle),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_CREATE, vgpu_sim_syncobj_create),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_DESTROY, vgpu_sim_syncobj_destroy),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_WAIT, vgpu_sim_syncobj_wait),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_RESET, vgpu_sim_syncobj_reset),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_SIGNAL, vgpu_sim_syncobj_signal),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, vgpu_sim_syncobj_timeline_wait),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_QUERY, vgpu_sim_syncobj_query),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_TRANSFER, vgpu_sim_syncobj_transfer),
	SIM_CORE(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL,
		 vgpu_sim_syncobj_timeline_signal),
};
#undef SIM_CORE


static const struct sim_ioctl *sim_find_ioctl(unsigned int nr, int *err)
{
	if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END) {
		unsigned int idx = nr - DRM_COMMAND_BASE;

		if (idx < SIM_ARRAY_SIZE(sim_driver_ioctls) &&
		    sim_driver_ioctls[idx].fn)
			return &sim_driver_ioctls[idx];
		*err = -EINVAL; /* drm_ioctl(): past the driver's table */
		return NULL;
	}
	if (nr < SIM_ARRAY_SIZE(sim_core_ioctls) && sim_core_ioctls[nr].fn)
		return &sim_core_ioctls[nr];
	*err = -ENOTTY; /* a core ioctl the sim does not implement */
	return NULL;
}

static int sim_ioctl(struct vgpu_device *dev, unsigned long request, void *arg)
{
	struct vgpu_sim *sim = dev->sim;
	const struct sim_ioctl *d;
	union {
		uint64_t align;
		uint8_t bytes[256];
	} stack;
	uint32_t in_size, out_size, ksize;
	uint8_t *kdata = stack.bytes;
	int ret = 0;

	if (_IOC_TYPE(request) != DRM_IOCTL_BASE)
		return -ENOTTY;
	d = sim_find_ioctl(_IOC_NR(request), &ret);
	if (!d)
		return ret;

	/*
	 * The request as defined, read and written, of a caller's struct:
	 * copying it in and out again is the same as working on it in place.
	 */
	if (request == d->cmd && _IOC_DIR(request) == (_IOC_READ | _IOC_WRITE) && arg) {
		pthread_mutex_lock(&sim->lock);
		ret = d->fn(sim, arg);
		pthread_mutex_unlock(&sim->lock);
		return ret;
	}

	/* drm_ioctl(): copy what both sides declare, zero-fill the rest. */
	in_size = out_size = _IOC_SIZE(request);
	if (!(_IOC_DIR(request) & _IOC_DIR(d->cmd) & _IOC_WRITE))
		in_size = 0;
	if (!(_IOC_DIR(request) & _IOC_DIR(d->cmd) & _IOC_READ))
		out_size = 0;
	ksize = _IOC_SIZE(d->cmd);
	if (in_size > ksize)
		ksize = in_size;
	if (out_size > ksize)
		ksize = out_size;
	if (ksize > sizeof(stack.bytes)) {
		kdata = malloc(ksize);
		if (!kdata)
			return -ENOMEM;
	}
	if (in_size && !arg) {
		ret = -EFAULT;
		goto out;
	}
	if (in_size)
		memcpy(kdata, arg, in_size);
	memset(kdata + in_size, 0, ksize - in_size);

	pthread_mutex_lock(&sim->lock);
	ret = d->fn(sim, kdata);
	pthread_mutex_unlock(&sim->lock);

	if (out_size) {
		if (arg)
			memcpy(arg, kdata, out_size);
		else
			ret = -EFAULT;
	}
out:
	if (kdata != stack.bytes)
		free(kdata);
	return ret;
}

static int sim_mmap(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		    void **ptr)
{
	struct vgpu_sim *sim = dev->sim;
	int ret;

	pthread_mutex_lock(&sim->lock);
	/* below 4 GiB: a user queue's (the BOs' start there) */
	ret = offset < (1ull << 32) ?
		vgpu_sim_userq_mmap(sim, offset, size, true, ptr) :
		vgpu_sim_bo_mmap(sim, offset, size, NULL, ptr);
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

/* BOs only: a user queue's rings have no GPU address to be mapped at */
static int sim_mmap_at(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		       void *addr)
{
	struct vgpu_sim *sim = dev->sim;
	void *p;
	int ret;

	if (offset < (1ull << 32))
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	ret = vgpu_sim_bo_mmap(sim, offset, size, addr, &p);
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static int sim_mmap_ro(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		       void **ptr)
{
	struct vgpu_sim *sim = dev->sim;
	int ret;

	pthread_mutex_lock(&sim->lock);
	ret = vgpu_sim_userq_mmap(sim, offset, size, false, ptr);
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static void sim_doorbell(struct vgpu_device *dev, uint32_t id,
			 volatile uint32_t *db, uint32_t tail)
{
	vgpu_sim_doorbell(dev->sim, id, tail);
}

static int sim_munmap(struct vgpu_device *dev, void *ptr, uint64_t size)
{
	return munmap(ptr, size) ? -errno : 0;
}

static void sim_close(struct vgpu_device *dev)
{
	struct vgpu_sim *sim = dev->sim;

	if (!sim)
		return;
	vgpu_sim_userqs_fini(sim);
	vgpu_sim_jobs_fini(sim);
	vgpu_sim_pool_free(sim);
	vgpu_sim_syncobjs_fini(sim);
	vgpu_sim_bos_fini(sim);
	vgpu_sm_free(sim->sm);
	vgpu_sm_free(sim->sm2);
	free(sim->ctx);
	pthread_cond_destroy(&sim->cond);
	pthread_mutex_destroy(&sim->lock);
	free(sim);
	dev->sim = NULL;
}

/*
 * SUBMIT, then GET_JOB of the job it ran, under one hold of the lock.
 * The exception record only of a job that raised one: a job with
 * VGPU_ERR_NONE has a zeroed record, which @exc already is.
 */
static int sim_submit_job(struct vgpu_device *dev, struct drm_vgpu_submit *s,
			  const void *host_params, struct drm_vgpu_get_job *g,
			  struct vgpu_exception_record *exc)
{
	struct vgpu_sim *sim = dev->sim;
	int ret;

	pthread_mutex_lock(&sim->lock);
	ret = vgpu_sim_submit_params(sim, s, host_params);
	if (!ret)
		vgpu_sim_submitted_job(sim, s->job_id, g, exc);
	pthread_mutex_unlock(&sim->lock);
	return ret;
}

static const struct vgpu_backend_ops sim_ops = {
	.ioctl = sim_ioctl,
	.mmap = sim_mmap,
	.mmap_ro = sim_mmap_ro,
	.mmap_at = sim_mmap_at,
	.munmap = sim_munmap,
	.doorbell = sim_doorbell,
	.close = sim_close,
	.sync_submit = true,
	.submit_job = sim_submit_job,
};

/* ---- set-up ---- */

int vgpu_sim_init(struct vgpu_device *dev)
{
	struct vgpu_sim *sim;
	pthread_condattr_t attr;
	int ret;

	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -ENOMEM;
	ret = vgpu_sim_threads_env(&sim->nthreads);
	if (!ret)
		ret = sim_model_env(&sim->model);
	if (ret) {
		free(sim);
		return ret;
	}
	/* as the device, at least as many SMs as threads run them */
	sim_model_config(&sim->cfg, sim->model, sim->nthreads);
	vgpu_sim_queues_init(sim);
	{
		const char *e = getenv("VGPU_SIM_PREEMPT_EVERY");

		sim->preempt_every = e ? strtoull(e, NULL, 0) : 0;
		e = getenv("VGPU_SIM_NO_DEVICE_LAUNCH");
		sim->no_device_launch = e && *e && strcmp(e, "0");
	}
	sim->sm = vgpu_sm_new(&sim->cfg);
	if (!sim->sm) {
		free(sim);
		return -ENOMEM;
	}
	ret = pthread_mutex_init(&sim->lock, NULL);
	if (ret)
		goto err_sm;
	ret = pthread_condattr_init(&attr);
	if (ret)
		goto err_lock;
	ret = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!ret)
		ret = pthread_cond_init(&sim->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret)
		goto err_lock;

	dev->ops = &sim_ops;
	dev->backend = VGPU_BACKEND_SIM;
	dev->fd = -1;
	dev->sim = sim;
	dev->node[0] = '\0';
	dev->pci_slot[0] = '\0';
	snprintf(dev->driver, sizeof(dev->driver), "vgpu-sim %u.%u",
		 SIM_DRIVER_MAJOR, SIM_DRIVER_MINOR);
	return 0;

err_lock:
	pthread_mutex_destroy(&sim->lock);
err_sm:
	vgpu_sm_free(sim->sm);
	vgpu_sm_free(sim->sm2);
	free(sim->ctx);
	free(sim);
	return -ret;
}

int vgpu_sim_set_option(struct vgpu_device *dev, enum vgpu_sim_option option,
			uint64_t value)
{
	struct vgpu_sim *sim = dev->sim;
	const struct sim_model *model;
	struct vgpu_sm_config cfg;
	struct vgpu_sm *sm;

	if (!sim)
		return -EOPNOTSUPP;
	if (value > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&sim->lock);
	cfg = sim->cfg;
	model = sim->model;
	switch (option) {
	case VGPU_SIM_TMA_LATENCY:
		cfg.tma_latency = (uint32_t)value;
		break;
	case VGPU_SIM_TMA_BANDWIDTH:
		cfg.tma_bandwidth = (uint32_t)value;
		break;
	case VGPU_SIM_TRY_WAIT_LIMIT:
		cfg.try_wait_limit = (uint32_t)value;
		break;
	case VGPU_SIM_PREEMPT_EVERY:
		sim->preempt_every = value;
		pthread_mutex_unlock(&sim->lock);
		return 0;
	case VGPU_SIM_THREADS:
		if (value < 1 || value > SIM_MAX_THREADS) {
			pthread_mutex_unlock(&sim->lock);
			return -EINVAL;
		}
		sim_model_config(&cfg, model, (uint32_t)value);
		break;
	case VGPU_SIM_MODEL:
		model = sim_model_by_id(value);
		if (!model) {
			pthread_mutex_unlock(&sim->lock);
			return -EINVAL;
		}
		sim_model_config(&cfg, model, sim->nthreads);
		break;
	default:
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	/* The SM takes its configuration at creation (0 = the default). */
	sm = vgpu_sm_new(&cfg);
	if (!sm) {
		pthread_mutex_unlock(&sim->lock);
		return -ENOMEM;
	}
	vgpu_sm_free(sim->sm);
	sim->sm = sm;
	sim->cfg = cfg;
	sim->model = model;
	/* the pool's SMs too, made again at the next launch that needs them */
	vgpu_sim_pool_free(sim);
	if (option == VGPU_SIM_THREADS)
		sim->nthreads = (uint32_t)value;
	vgpu_sm_free(sim->sm2);	/* made again, alike, when needed */
	sim->sm2 = NULL;
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

int vgpu_sim_set_trace(struct vgpu_device *dev, FILE *f)
{
	struct vgpu_sim *sim = dev->sim;

	if (!sim)
		return -EOPNOTSUPP;
	pthread_mutex_lock(&sim->lock);
	sim->trace = f;
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

/* ---- the core's events, one line each (opaque: the FILE) ---- */

void vgpu_sim_trace_event(void *opaque, const struct vgpu_trace_event *ev)
{
	vgpu_trace_print(opaque, ev);
}
