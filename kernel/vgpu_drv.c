// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko: DRM driver for the vGPU virtual PCIe device (QEMU vgpu-pci,
 * uapi/vgpu_hw.h).  PCI probe and remove, the DRM driver, GET_PARAM and
 * fdinfo; see vgpu_drv.h for the other files.
 */
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>
#include <drm/drm_print.h>
#include <linux/debugfs.h>
#include "vgpu_job.h"
#include "vgpu_drv.h"

#define CREATE_TRACE_POINTS
#include "vgpu_trace.h"

unsigned int vgpu_debug;
module_param_named(debug, vgpu_debug, uint, 0644);
MODULE_PARM_DESC(debug, "debug mask: 1 core, 2 mmu, 4 job, 8 irq");

unsigned int vgpu_timeout_ms = 2000;
module_param_named(timeout_ms, vgpu_timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "job timeout before a device reset, ms (default 2000)");

/* Fewer ASIDs than the device has: the steal and wait paths of vgpu_mmu.c. */
static unsigned int vgpu_asids;
module_param_named(asids, vgpu_asids, uint, 0444);
MODULE_PARM_DESC(asids, "hardware ASIDs to use, at least 1 (default 0: all the device has, 255)");

static_assert(sizeof(struct drm_vgpu_get_param) == 16);
static_assert(sizeof(struct drm_vgpu_bo_create) == 24);
static_assert(sizeof(struct drm_vgpu_bo_mmap_offset) == 16);
static_assert(sizeof(struct drm_vgpu_bo_info) == 24);
static_assert(sizeof(struct drm_vgpu_wait_bo) == 16);

static int vgpu_ioctl_get_param(struct drm_device *dev, void *data,
				struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_get_param *args = data;

	if (args->pad)
		return -EINVAL;
	switch (args->param) {
	case VGPU_PARAM_DEVICE_ID:
		args->value = (u64)vdev->pdev->vendor << 16 | vdev->pdev->device;
		break;
	case VGPU_PARAM_REVISION:
		args->value = vdev->pdev->revision;
		break;
	case VGPU_PARAM_HW_VERSION:
		args->value = vdev->hw_version;
		break;
	case VGPU_PARAM_SMS:
		args->value = vdev->sms;
		break;
	case VGPU_PARAM_SMEM:
		args->value = vdev->smem;
		break;
	case VGPU_PARAM_MAX_THREADS:
		args->value = vdev->max_threads;
		break;
	case VGPU_PARAM_BARRIERS:
		args->value = vdev->barriers;
		break;
	case VGPU_PARAM_FEATURES:
		args->value = vdev->features;
		break;
	case VGPU_PARAM_QUEUES:
		args->value = vdev->nqueues;
		break;
	case VGPU_PARAM_WARP_SIZE:
		args->value = vdev->warp_size;
		break;
	case VGPU_PARAM_MAX_PARAM:
		args->value = vdev->max_param;
		break;
	case VGPU_PARAM_MAX_CODE:
		args->value = vdev->max_code;
		break;
	case VGPU_PARAM_VA_BITS:
		args->value = vdev->va_bits;
		break;
	case VGPU_PARAM_VA_START:
		args->value = VGPU_VA_START;
		break;
	case VGPU_PARAM_VA_SIZE:
		args->value = VGPU_VA_SIZE;
		break;
	case VGPU_PARAM_RESET_COUNT:
		args->value = atomic_read(&vdev->reset_count);
		break;
	case VGPU_PARAM_FILE_RESET_COUNT:
		args->value = atomic_read(&vf->reset_count);
		break;
	case VGPU_PARAM_JOB_TIMEOUT_MS:
		args->value = vgpu_timeout_ms;
		break;
	case VGPU_PARAM_DRIVER_VERSION:
		args->value = VGPU_DRIVER_MAJOR << 16 | VGPU_DRIVER_MINOR;
		break;
	case VGPU_PARAM_MAX_QUEUES:
		args->value = VGPU_MAX_QUEUES_PER_FILE;
		break;
	case VGPU_PARAM_BAN_AFTER:
		args->value = vgpu_ban_after;
		break;
	case VGPU_PARAM_USER_QUEUES:
		args->value = vdev->uqs.n;
		break;
	case VGPU_PARAM_MODEL:
		args->value = vdev->model;
		break;
	case VGPU_PARAM_SMEM_SM:
		args->value = vdev->smem_sm;
		break;
	case VGPU_PARAM_CTAS_SM:
		args->value = vdev->ctas_sm;
		break;
	case VGPU_PARAM_WARPS_SM:
		args->value = vdev->warps_sm;
		break;
	case VGPU_PARAM_REGS_SM:
		args->value = vdev->regs_sm;
		break;
	case VGPU_PARAM_CLUSTER:
		args->value = vdev->cluster;
		break;
	case VGPU_PARAM_CLUSTER_MAX:
		args->value = vdev->cluster_max;
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

static int vgpu_open(struct drm_device *dev, struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf;
	int ret;

	vf = vgpu_should_fail() ? NULL : kzalloc(sizeof(*vf), GFP_KERNEL_ACCOUNT);
	if (!vf)
		return -ENOMEM;
	vf->vdev = vdev;
	kref_init(&vf->refcount);
	init_waitqueue_head(&vf->jobs_wq);
	spin_lock_init(&vf->hist_lock);
	vf->client_id = file->client_id;
	xa_init_flags(&vf->userqs, XA_FLAGS_ALLOC1);
	vgpu_file_vms_init(vf);
	vf->as = vgpu_as_create(vdev);
	if (IS_ERR(vf->as)) {
		ret = PTR_ERR(vf->as);
		goto err_free;
	}
	ret = vgpu_file_sched_init(vdev, vf);
	if (ret)
		goto err_as;
	file->driver_priv = vf;
	mutex_lock(&vdev->files_lock);
	list_add_tail(&vf->link, &vdev->files);
	mutex_unlock(&vdev->files_lock);
	return 0;

err_as:
	vgpu_as_put(vf->as);
err_free:
	kfree(vf);
	return ret;
}

static void vgpu_file_release(struct kref *kref)
{
	struct vgpu_file *vf = container_of(kref, struct vgpu_file, refcount);

	kvfree(vf->hist);
	kfree(vf);
}

void vgpu_file_put(struct vgpu_file *vf)
{
	kref_put(&vf->refcount, vgpu_file_release);
}

static void vgpu_postclose(struct drm_device *dev, struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;

	/* user-mode queues first: they stop before their VMs can go */
	vgpu_file_userqs_fini(vf);
	/*
	 * Queued jobs run (or are killed, for a killed process); jobs on the
	 * device hold vf and vf->as.  Under files_lock, so that vgpu_remove()
	 * cannot free the run queues under the entities' flush.
	 */
	mutex_lock(&vdev->files_lock);
	list_del(&vf->link);
	vgpu_file_sched_fini(vf, true);
	vgpu_file_vms_fini(vf, true);
	mutex_unlock(&vdev->files_lock);
	vgpu_file_queues_free(vf);
	vgpu_file_vms_free(vf);
	vgpu_as_put(vf->as);
	vgpu_file_put(vf);
}

/* fdinfo: drm_show_fdinfo() prints drm-driver, drm-client-id, drm-pdev. */
static void vgpu_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct vgpu_file *vf = file->driver_priv;

	drm_printf(p, "drm-engine-compute:\t%llu ns\n",
		   (unsigned long long)atomic64_read(&vf->engine_ns));
	/* drm-total-, -shared-, -active-, -resident-, -purgeable-memory */
	drm_show_memory_stats(p, file);
	/* 0: VM 0 has no ASID now (bound while it has work: vgpu_mmu.c) */
	drm_printf(p, "vgpu-asid:\t%u\n", READ_ONCE(vf->as->asid));
	/* page tables (pt_limit_mb bounds each address space's) */
	drm_printf(p, "vgpu-pt-bytes:\t%llu\n", vgpu_as_pt_bytes(vf->as) +
		   vgpu_file_vms_pt_bytes(vf));
	drm_printf(p, "vgpu-resets:\t%d\n", atomic_read(&vf->reset_count));
}

/* GEM objects' offsets, or below them a user-mode queue's (vgpu_userq.c) */
static int vgpu_mmap(struct file *filp, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff >= DRM_FILE_PAGE_OFFSET_START)
		return drm_gem_mmap(filp, vma);
	return vgpu_userq_mmap(filp, vma);
}

/* DRM_GEM_FOPS, with vgpu_mmap() */
static const struct file_operations vgpu_fops = {
	.owner = THIS_MODULE,
	.open = drm_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = vgpu_mmap,
	.fop_flags = FOP_UNSIGNED_OFFSET,
	.show_fdinfo = drm_show_fdinfo,
};

static const struct drm_ioctl_desc vgpu_ioctls[] = {
#define VGPU_IOCTL(n, f) DRM_IOCTL_DEF_DRV(VGPU_##n, f, DRM_RENDER_ALLOW)
	VGPU_IOCTL(GET_PARAM, vgpu_ioctl_get_param),
	VGPU_IOCTL(BO_CREATE, vgpu_ioctl_bo_create),
	VGPU_IOCTL(BO_MMAP_OFFSET, vgpu_ioctl_bo_mmap_offset),
	VGPU_IOCTL(BO_INFO, vgpu_ioctl_bo_info),
	VGPU_IOCTL(SUBMIT, vgpu_ioctl_submit),
	VGPU_IOCTL(WAIT_BO, vgpu_ioctl_wait_bo),
	VGPU_IOCTL(GET_JOB, vgpu_ioctl_get_job),
	VGPU_IOCTL(QUEUE_CREATE, vgpu_ioctl_queue_create),
	VGPU_IOCTL(QUEUE_DESTROY, vgpu_ioctl_queue_destroy),
	VGPU_IOCTL(QUEUE_GET_STATE, vgpu_ioctl_queue_get_state),
	VGPU_IOCTL(VM_CREATE, vgpu_ioctl_vm_create),
	VGPU_IOCTL(VM_DESTROY, vgpu_ioctl_vm_destroy),
	VGPU_IOCTL(VM_BIND, vgpu_ioctl_vm_bind),
	VGPU_IOCTL(USERQ_CREATE, vgpu_ioctl_userq_create),
	VGPU_IOCTL(USERQ_DESTROY, vgpu_ioctl_userq_destroy),
	VGPU_IOCTL(USERQ_GET_STATE, vgpu_ioctl_userq_get_state),
	VGPU_IOCTL(WAIT_USER_FENCE, vgpu_ioctl_wait_user_fence),
#undef VGPU_IOCTL
};

/*
 * Driver version:
 *  1.0 - GET_PARAM, BO_CREATE, BO_MMAP_OFFSET, BO_INFO, SUBMIT, WAIT_BO,
 *        GET_JOB
 *  1.1 - QUEUE_CREATE, QUEUE_DESTROY, QUEUE_GET_STATE
 *  1.2 - VM_CREATE, VM_DESTROY, VM_BIND; QUEUE_CREATE's vm_id
 *  1.3 - USERQ_CREATE, USERQ_DESTROY, USERQ_GET_STATE, WAIT_USER_FENCE;
 *        mmap() of user-mode queues
 *  1.4 - GET_PARAM's SMs' shape: MODEL, SMEM_SM, CTAS_SM, WARPS_SM,
 *        REGS_SM, CLUSTER, CLUSTER_MAX
 */
static const struct drm_driver vgpu_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_GEM_GPUVA | DRIVER_RENDER |
			   DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
	.open = vgpu_open,
	.postclose = vgpu_postclose,
	.ioctls = vgpu_ioctls,
	.num_ioctls = ARRAY_SIZE(vgpu_ioctls),
	.fops = &vgpu_fops,
	.show_fdinfo = vgpu_show_fdinfo,
	.gem_create_object = vgpu_gem_create_object,
	DRM_GEM_SHMEM_DRIVER_OPS,
	.debugfs_init = vgpu_debugfs_init,
	.name = "vgpu",
	.desc = "vGPU virtual GPU",
	.date = "20250101",
	.major = VGPU_DRIVER_MAJOR,
	.minor = VGPU_DRIVER_MINOR,
};

static int vgpu_read_caps(struct vgpu_device *vdev)
{
	u32 id = vgpu_read(vdev, VGPU_REG_ID);

	if (id != VGPU_ID_MAGIC) {
		vgpu_err(vdev, "bad ID register 0x%08x\n", id);
		return -ENODEV;
	}
	vdev->hw_version = vgpu_read(vdev, VGPU_REG_VERSION);
	if (vdev->hw_version >> 16 != VGPU_VERSION_MAJOR) {
		vgpu_err(vdev, "device interface %u.%u, driver knows %u.x\n",
			 vdev->hw_version >> 16, vdev->hw_version & 0xffff,
			 VGPU_VERSION_MAJOR);
		return -ENODEV;
	}
	vdev->sms = vgpu_read(vdev, VGPU_REG_CAP_SMS);
	/* what a CTA may use (VGPU_PARAM_SMEM); per SM before interface 1.1 */
	vdev->smem = vgpu_read(vdev, (vdev->hw_version & 0xffff) >= 1 ?
				     VGPU_REG_CAP_SMEM_CTA : VGPU_REG_CAP_SMEM);
	vdev->max_threads = vgpu_read(vdev, VGPU_REG_CAP_MAX_THREADS);
	vdev->warp_size = vgpu_read(vdev, VGPU_REG_CAP_WARP_SIZE);
	vdev->smem_sm = vgpu_read(vdev, VGPU_REG_CAP_SMEM);
	if ((vdev->hw_version & 0xffff) >= 1) {
		vdev->model = vgpu_read(vdev, VGPU_REG_CAP_MODEL);
		vdev->ctas_sm = vgpu_read(vdev, VGPU_REG_CAP_CTAS_PER_SM);
		vdev->warps_sm = vgpu_read(vdev, VGPU_REG_CAP_WARPS_PER_SM);
		vdev->regs_sm = vgpu_read(vdev, VGPU_REG_CAP_REGS_PER_SM);
		vdev->cluster = vgpu_read(vdev, VGPU_REG_CAP_CLUSTER);
		vdev->cluster_max = vgpu_read(vdev, VGPU_REG_CAP_CLUSTER_MAX);
	} else { /* the registers came with 1.1: the vgpu model's shape */
		vdev->model = VGPU_MODEL_VGPU;
		vdev->ctas_sm = 1;
		vdev->warps_sm = vdev->warp_size ? vdev->max_threads / vdev->warp_size : 0;
		vdev->regs_sm = VGPU_DEFAULT_REGS_PER_SM;
		vdev->cluster = VGPU_PORTABLE_CLUSTER_CTAS;
		vdev->cluster_max = VGPU_MAX_CLUSTER_CTAS;
	}
	vdev->barriers = vgpu_read(vdev, VGPU_REG_CAP_BARRIERS);
	vdev->features = vgpu_read(vdev, VGPU_REG_CAP_FEATURES);
	vdev->nqueues = min_t(u32, vgpu_read(vdev, VGPU_REG_CAP_QUEUES),
			      VGPU_QUEUES_MAX);
	/*
	 * Some are kept for user-mode queues (vgpu_userq.c), right after
	 * the schedulers' (at most VGPU_MAX_QUEUES; the rest stay unused).
	 */
	vdev->uqs.n = vgpu_userq_split(vdev, vdev->nqueues);
	vdev->nqueues = min_t(u32, vdev->nqueues - vdev->uqs.n, VGPU_MAX_QUEUES);
	vdev->max_param = vgpu_read(vdev, VGPU_REG_CAP_MAX_PARAM);
	vdev->va_bits = vgpu_read(vdev, VGPU_REG_CAP_VA_BITS);
	vdev->max_code = vgpu_read(vdev, VGPU_REG_CAP_MAX_CODE);
	vdev->as_max = min_t(u32, vgpu_read(vdev, VGPU_REG_CAP_AS_MAX), VGPU_AS_MAX);
	if (vgpu_asids)
		vdev->as_max = min(vdev->as_max, vgpu_asids + 1);
	vdev->ring_max = vgpu_read(vdev, VGPU_REG_CAP_RING_MAX);
	vdev->nthreads = clamp(vgpu_read(vdev, VGPU_REG_CAP_THREADS), 1u, VGPU_SMS_MAX);
	if (!vdev->nqueues || vdev->as_max < 2 || vdev->ring_max < VGPU_RING_ENTRIES ||
	    vdev->va_bits != VGPU_VA_BITS) {
		vgpu_err(vdev, "unusable capabilities\n");
		return -ENODEV;
	}
	drm_info(&vdev->drm, "vGPU %u.%u: %u SMs, %u KiB smem, %u queues (+%u user-mode), features 0x%x\n",
		 vdev->hw_version >> 16, vdev->hw_version & 0xffff, vdev->sms,
		 vdev->smem >> 10, vdev->nqueues, vdev->uqs.n, vdev->features);
	return 0;
}

static void vgpu_drm_release(struct drm_device *dev, void *res)
{
	vgpu_mmu_fini(to_vgpu(dev));
}

static int vgpu_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct vgpu_device *vdev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(52));
	if (ret)
		return ret;

	vdev = devm_drm_dev_alloc(&pdev->dev, &vgpu_drm_driver,
				  struct vgpu_device, drm);
	if (IS_ERR(vdev))
		return PTR_ERR(vdev);
	vdev->pdev = pdev;
	pci_set_drvdata(pdev, vdev);
	mutex_init(&vdev->reset_lock);
	/*
	 * Reclaim may wait for a fence that only a timeout's reset signals,
	 * and the reset takes reset_lock: tell lockdep, so that it reports an
	 * allocation (or a wait on one) by anyone holding reset_lock, however
	 * rare the path (i915 and xe prime their reset locks the same way).
	 */
	if (IS_ENABLED(CONFIG_LOCKDEP)) {
		fs_reclaim_acquire(GFP_KERNEL);
		might_lock(&vdev->reset_lock);
		fs_reclaim_release(GFP_KERNEL);
	}
	mutex_init(&vdev->files_lock);
	spin_lock_init(&vdev->exc_lock);
	spin_lock_init(&vdev->irq_lock);
	INIT_LIST_HEAD(&vdev->files);

	vdev->mmio = pcim_iomap(pdev, 0, VGPU_BAR0_SIZE);
	if (!vdev->mmio)
		return -ENOMEM;

	/* A clean device whatever the previous driver left behind. */
	vgpu_write(vdev, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	ret = vgpu_read_caps(vdev);
	if (ret)
		return ret;

	ret = vgpu_reset_init(vdev);
	if (ret)
		return ret;
	ret = vgpu_userq_init(vdev);
	if (ret)
		return ret;
	ret = vgpu_mmu_init(vdev);
	if (ret)
		return ret;
	ret = drmm_add_action_or_reset(&vdev->drm, vgpu_drm_release, NULL);
	if (ret)
		return ret;
	vgpu_mmu_hw_init(vdev);
	/* The driver's timeout fires first; the watchdog is the backstop. */
	vgpu_write(vdev, VGPU_REG_WDOG_MS, 4 * vgpu_timeout_ms);

	ret = vgpu_sched_init(vdev);
	if (ret)
		return ret;
	ret = vgpu_irq_init(vdev);
	if (ret)
		goto err_sched;
	ret = drm_dev_register(&vdev->drm, 0);
	if (ret)
		goto err_irq;
	return 0;

err_irq:
	vgpu_irq_fini(vdev);
err_sched:
	vgpu_write(vdev, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	vgpu_sched_fini(vdev);
	return ret;
}

static void vgpu_remove(struct pci_dev *pdev)
{
	struct vgpu_device *vdev = pci_get_drvdata(pdev);

	drm_dev_unplug(&vdev->drm);
	vgpu_userq_fini(vdev);
	/* Jobs on the device fail with -ENODEV; queued ones are cancelled. */
	vgpu_jobs_fail_all(vdev, -ENODEV);
	vgpu_files_sched_fini(vdev);
	vgpu_sched_fini(vdev);
	vgpu_irq_fini(vdev);
	vgpu_reset_fini(vdev);
}

static const struct pci_device_id vgpu_pci_ids[] = {
	{ PCI_DEVICE(VGPU_PCI_VENDOR_ID, VGPU_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, vgpu_pci_ids);

static struct pci_driver vgpu_pci_driver = {
	.name = "vgpu",
	.id_table = vgpu_pci_ids,
	.probe = vgpu_probe,
	.remove = vgpu_remove,
};
/*
 * Fault injection at the driver's own allocation points (kernels with
 * CONFIG_FAULT_INJECTION: the debug kernel): /sys/kernel/debug/fail_vgpu,
 * Documentation/fault-injection/fault-injection.rst.  Every point fails
 * with the errno a real allocation failure would give (-ENOMEM).
 */
#ifdef CONFIG_FAULT_INJECTION
DECLARE_FAULT_ATTR(vgpu_fail);
#endif
static struct dentry *vgpu_fail_dir;

static int __init vgpu_init(void)
{
	int ret;

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
	vgpu_fail_dir = fault_create_debugfs_attr("fail_vgpu", NULL, &vgpu_fail);
	if (IS_ERR(vgpu_fail_dir))
		vgpu_fail_dir = NULL;
#endif
	ret = pci_register_driver(&vgpu_pci_driver);
	if (ret)
		debugfs_remove_recursive(vgpu_fail_dir);
	return ret;
}

static void __exit vgpu_exit(void)
{
	pci_unregister_driver(&vgpu_pci_driver);
	debugfs_remove_recursive(vgpu_fail_dir);
}

module_init(vgpu_init);
module_exit(vgpu_exit);

MODULE_AUTHOR("the vGPU authors");
MODULE_DESCRIPTION("DRM driver for the vGPU virtual PCIe device");
MODULE_LICENSE("GPL");

#if IS_ENABLED(CONFIG_DRM_VGPU_KUNIT_TEST)
#include "tests/vgpu_ioctl_test.c"
#endif
