// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs (dri/N/): queues (ring and scheduler state), exceptions (the last
 * VGPU_EXC_LOG exception records), address_spaces (per-file VA use),
 * memory (bytes of every device's resident BOs and the limit, this
 * device's, and the limit of one client's: vgpu_gem.c), inject (the
 * device's fault injection, where it has it: write "VALUE [ARG]", VALUE
 * for VGPU_REG_INJECT and ARG for INJECT_ARG; read: INJECT), and irq_hold (fault injection for recovery tests: while 1, the interrupt
 * handler leaves completions unprocessed, as a delayed interrupt would;
 * writing 0 processes them; a device reset clears it), and release_hold
 * (while 1, the releases free_job defers wait, as on a starved workqueue;
 * writing 0 runs them).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <drm/drm_debugfs.h>
#include "vgpu_drv.h"

static int vgpu_debugfs_queues(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgpu_device *vdev = to_vgpu(node->minor->dev);
	unsigned int i;

	seq_printf(m, "resets %d  irq_status 0x%x  err_count %u  %s  sm_threads %u  preemptions %u  timeslice_us %u  lost_irqs %d  device_resets %d  userq_map_outs %lu  releases_pending %d  releases_peak %d\n",
		   atomic_read(&vdev->reset_count),
		   vgpu_read(vdev, VGPU_REG_IRQ_STATUS),
		   vgpu_read(vdev, VGPU_REG_ERR_COUNT),
		   vdev->msix ? "msix" : "intx",
		   vgpu_read(vdev, VGPU_REG_CAP_THREADS),
		   vgpu_read(vdev, VGPU_REG_PREEMPTIONS),
		   vgpu_read(vdev, VGPU_REG_TIMESLICE_US),
		   atomic_read(&vdev->lost_irqs),
		   atomic_read(&vdev->device_resets),
		   READ_ONCE(vdev->uqs.map_outs),
		   atomic_read(&vdev->releases_pending),
		   atomic_read(&vdev->releases_peak));
	for (i = 0; i < vdev->nqueues; i++) {
		struct vgpu_queue *q = &vdev->queues[i];

		seq_printf(m, "queue %u: status 0x%x head %u tail %u(dev) %u(drv) completed %u emitted %llu error %u done %llu failed %llu hw_jobs %d load %d\n",
			   i, vgpu_qread(q, VGPU_Q_STATUS), vgpu_qread(q, VGPU_Q_HEAD),
			   vgpu_qread(q, VGPU_Q_TAIL), q->tail,
			   vgpu_qread(q, VGPU_Q_COMPLETED_LO), q->emitted,
			   vgpu_qread(q, VGPU_Q_ERROR), q->jobs_done,
			   q->jobs_failed, atomic_read(&q->sched.credit_count),
			   atomic_read(&q->load));
	}
	vgpu_userq_debugfs(vdev, m);
	return 0;
}

static int vgpu_debugfs_exceptions(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgpu_device *vdev = to_vgpu(node->minor->dev);
	unsigned long flags;
	u32 i, head;

	spin_lock_irqsave(&vdev->exc_lock, flags);
	head = vdev->exc_head;
	for (i = head > VGPU_EXC_LOG ? head - VGPU_EXC_LOG : 0; i < head; i++) {
		struct vgpu_exc_log *l = &vdev->exc_log[i % VGPU_EXC_LOG];

		seq_printf(m, "client %llu job %llu queue %u hw_queue %u status %u code %u cta %u,%u,%u warp %u pc 0x%x barid %d addr 0x%llx insn %016llx%016llx: %.*s\n",
			   l->client_id, l->job_id, l->queue, l->hw_queue, l->hw_status,
			   l->exc.code, l->exc.cta[0], l->exc.cta[1], l->exc.cta[2],
			   l->exc.warp, l->exc.pc, (int)l->exc.barid, l->exc.addr,
			   l->exc.insn[1], l->exc.insn[0], VGPU_EXC_MSG_LEN,
			   l->exc.msg);
	}
	spin_unlock_irqrestore(&vdev->exc_lock, flags);
	return 0;
}

static int vgpu_debugfs_as(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgpu_device *vdev = to_vgpu(node->minor->dev);
	struct vgpu_file *vf;

	/* ASIDs are bound at run time (vgpu_mmu.c): "asid 0" is none */
	spin_lock(&vdev->asid_lock);
	seq_printf(m, "asids %u bound %zu pinned %u binds %llu steals %llu waits %llu\n",
		   vdev->as_max - 1, list_count_nodes(&vdev->asid_lru),
		   vdev->asid_pinned, vdev->asid_binds, vdev->asid_steals,
		   vdev->asid_waits);
	spin_unlock(&vdev->asid_lock);
	mutex_lock(&vdev->files_lock);
	list_for_each_entry(vf, &vdev->files, link) {
		struct drm_printer p = drm_seq_file_printer(m);

		mutex_lock(&vf->as->lock);
		spin_lock(&vf->as->deferred_lock);
		seq_printf(m, "client %llu asid %u root %pad mapped %llu bytes resets %d active %d deferred %u deferred_total %llu\n",
			   vf->client_id, READ_ONCE(vf->as->asid), &vf->as->root.dma,
			   vf->as->mapped_bytes, atomic_read(&vf->reset_count),
			   atomic_read(&vf->as->active), vf->as->ndeferred,
			   vf->as->deferred_total);
		spin_unlock(&vf->as->deferred_lock);
		drm_mm_print(&vf->as->mm, &p);
		mutex_unlock(&vf->as->lock);
	}
	mutex_unlock(&vdev->files_lock);
	return 0;
}

static int vgpu_debugfs_memory(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;
	struct vgpu_device *vdev = to_vgpu(node->minor->dev);

	/* every device's resident BOs and their limit, then this device's */
	seq_printf(m, "resident %lld limit %llu device %lld client_limit %llu\n",
		   (long long)vgpu_mem_total(), vgpu_mem_limit(),
		   (long long)atomic64_read(&vdev->resident),
		   vgpu_client_mem_limit());
	return 0;
}

static int vgpu_irq_hold_get(void *data, u64 *val)
{
	struct vgpu_device *vdev = data;

	*val = READ_ONCE(vdev->irq_hold);
	return 0;
}

static int vgpu_irq_hold_set(void *data, u64 val)
{
	struct vgpu_device *vdev = data;
	unsigned int i;

	if (val > 1)
		return -EINVAL;
	mutex_lock(&vdev->reset_lock);
	WRITE_ONCE(vdev->irq_hold, val);
	if (!val && !vdev->gone)
		for (i = 0; i < vdev->nqueues; i++)
			vgpu_queue_process(&vdev->queues[i], true);
	mutex_unlock(&vdev->reset_lock);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vgpu_irq_hold_fops, vgpu_irq_hold_get,
			 vgpu_irq_hold_set, "%llu\n");

/* The device's fault injection (uapi/vgpu_hw.h "Fault injection"). */
static ssize_t vgpu_inject_write(struct file *f, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct vgpu_device *vdev = file_inode(f)->i_private;
	unsigned long long arg = 0;
	char buf[64];
	u32 val;
	int n;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	n = sscanf(buf, "%i %lli", &val, &arg);
	if (n < 1)
		return -EINVAL;
	mutex_lock(&vdev->reset_lock);
	if (vdev->gone) {
		mutex_unlock(&vdev->reset_lock);
		return -ENODEV;
	}
	vgpu_write(vdev, VGPU_REG_INJECT_ARG_LO, lower_32_bits(arg));
	vgpu_write(vdev, VGPU_REG_INJECT_ARG_HI, upper_32_bits(arg));
	vgpu_write(vdev, VGPU_REG_INJECT, val);
	mutex_unlock(&vdev->reset_lock);
	return len;
}

static int vgpu_inject_show(struct seq_file *m, void *data)
{
	struct vgpu_device *vdev = m->private;

	seq_printf(m, "0x%x\n", vgpu_read(vdev, VGPU_REG_INJECT));
	return 0;
}

static int vgpu_inject_open(struct inode *inode, struct file *f)
{
	return single_open(f, vgpu_inject_show, inode->i_private);
}

static const struct file_operations vgpu_inject_fops = {
	.owner = THIS_MODULE,
	.open = vgpu_inject_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
	.write = vgpu_inject_write,
};

static int vgpu_debugfs_vms(struct seq_file *m, void *data)
{
	struct drm_info_node *node = m->private;

	return vgpu_debugfs_vms_show(m, to_vgpu(node->minor->dev));
}

static int vgpu_release_hold_get(void *data, u64 *val)
{
	struct vgpu_device *vdev = data;

	*val = READ_ONCE(vdev->release_hold);
	return 0;
}

static int vgpu_release_hold_set(void *data, u64 val)
{
	if (val > 1)
		return -EINVAL;
	vgpu_release_set_hold(data, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(vgpu_release_hold_fops, vgpu_release_hold_get,
			 vgpu_release_hold_set, "%llu\n");

static const struct drm_info_list vgpu_debugfs_list[] = {
	{ "queues", vgpu_debugfs_queues, 0 },
	{ "exceptions", vgpu_debugfs_exceptions, 0 },
	{ "address_spaces", vgpu_debugfs_as, 0 },
	{ "memory", vgpu_debugfs_memory, 0 },
	{ "vms", vgpu_debugfs_vms, 0 },
};

void vgpu_debugfs_init(struct drm_minor *minor)
{
	drm_debugfs_create_files(vgpu_debugfs_list, ARRAY_SIZE(vgpu_debugfs_list),
				 minor->debugfs_root, minor);
	debugfs_create_file_unsafe("irq_hold", 0600, minor->debugfs_root,
				   to_vgpu(minor->dev), &vgpu_irq_hold_fops);
	debugfs_create_file_unsafe("release_hold", 0600, minor->debugfs_root,
				   to_vgpu(minor->dev), &vgpu_release_hold_fops);
	if (to_vgpu(minor->dev)->features & VGPU_FEAT_INJECT)
		debugfs_create_file("inject", 0600, minor->debugfs_root,
				    to_vgpu(minor->dev), &vgpu_inject_fops);
}
