// SPDX-License-Identifier: GPL-2.0
/*
 * Interrupts: MSI-X vector 0 (completions) and 1 (errors), and on a device
 * with completion vectors (VGPU_FEAT_IRQ_VECTORS) one more per CPU, or one
 * INTx line when MSI-X cannot be enabled (module parameter msix=0 forces
 * it).  Every vector runs the same handler: acknowledge IRQ_STATUS, then
 * let every queue match completion records to its in-flight jobs.
 *
 * Completion vectors: vector 2 + i is aimed at CPU i (CPUs past the
 * vectors the device has share them, i modulo their number), and a launch
 * names the vector of the CPU its SUBMIT ran on (vgpu_emit_launch), where
 * the submitter most likely waits: its interrupt then arrives on the
 * waiter's CPU, which signals the fence and wakes it with no second CPU
 * woken in between, as NVMe's per-CPU completion queues do.  Under TCG
 * that cross-CPU wake-up was most of a null job's time (make bench-guest:
 * docs/performance-guest.md).  The affinity is set, not managed: a CPU
 * going offline moves its vector's interrupts to another, and nothing is
 * lost; msix_vectors=2 keeps to vectors 0 and 1.
 */
#include <linux/interrupt.h>
#include <drm/drm_drv.h>
#include "vgpu_drv.h"

static bool vgpu_msix = true;
module_param_named(msix, vgpu_msix, bool, 0444);
MODULE_PARM_DESC(msix, "use MSI-X (default true; false: INTx)");

static unsigned int vgpu_msix_vectors = VGPU_MSIX_VECTORS_MAX;
module_param_named(msix_vectors, vgpu_msix_vectors, uint, 0444);
MODULE_PARM_DESC(msix_vectors, "MSI-X vectors to use at most (default and "
		 "most: the device's table; 2: no completion vector per CPU)");

static irqreturn_t vgpu_irq_handler(int irq, void *arg)
{
	struct vgpu_device *vdev = arg;
	unsigned int i;
	bool cookie;
	u32 status;

	status = vgpu_read(vdev, VGPU_REG_IRQ_STATUS);
	if (!status && !vdev->msix)
		return IRQ_NONE;	/* shared INTx line */
	vgpu_write(vdev, VGPU_REG_IRQ_ACK, status);
	vgpu_dbg(vdev, VGPU_DBG_IRQ, "irq %d status 0x%x\n", irq, status);
	if (READ_ONCE(vdev->irq_hold))
		return IRQ_HANDLED;
	/* completions signal the jobs' fences: a signalling section */
	cookie = dma_fence_begin_signalling();
	for (i = 0; i < vdev->nqueues; i++)
		vgpu_queue_process(&vdev->queues[i], status & VGPU_IRQ_ERROR);
	/* and user fences: their waiters are woken from here alone */
	vgpu_userq_irq(vdev, status);
	dma_fence_end_signalling(cookie);
	return IRQ_HANDLED;
}

/* The vector a launch submitted on @cpu names: 0 without vectors per CPU. */
u32 vgpu_irq_cpu_vector(struct vgpu_device *vdev, u32 cpu)
{
	if (!vdev->cpu_vec || cpu >= nr_cpu_ids)
		return VGPU_MSIX_VEC_COMPLETION;
	return vdev->cpu_vec[cpu];
}

/* MSI-X vectors to ask for: 2, and one per possible CPU the device has. */
static unsigned int vgpu_irq_want(struct vgpu_device *vdev)
{
	unsigned int table = VGPU_MSIX_VECTORS_MIN;

	if (vdev->features & VGPU_FEAT_IRQ_VECTORS)
		table = clamp(vgpu_read(vdev, VGPU_REG_CAP_MSIX_VECTORS),
			      VGPU_MSIX_VECTORS_MIN, VGPU_MSIX_VECTORS_MAX);
	table = min(table, max(vgpu_msix_vectors, VGPU_MSIX_VECTORS_MIN));
	return min(table, VGPU_MSIX_VECTORS_MIN + num_possible_cpus());
}

/*
 * Aim vectors 2.. at the CPUs (i modulo their number) and fill
 * @cpu_vec.  Without memory, or with no vector beyond the two, every
 * launch names vector 0, as before.
 */
static void vgpu_irq_spread(struct vgpu_device *vdev)
{
	unsigned int nper = vdev->nvec - VGPU_MSIX_VECTORS_MIN, cpu, v, i = 0;
	cpumask_var_t mask;
	u8 *map;

	if (!vdev->msix || !nper)
		return;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return;
	map = kcalloc(nr_cpu_ids, sizeof(*map), GFP_KERNEL);
	if (!map) {
		free_cpumask_var(mask);
		return;
	}
	for_each_possible_cpu(cpu)
		map[cpu] = VGPU_MSIX_VECTORS_MIN + i++ % nper;
	for (v = VGPU_MSIX_VECTORS_MIN; v < vdev->nvec; v++) {
		cpumask_clear(mask);
		for_each_possible_cpu(cpu)
			if (map[cpu] == v)
				cpumask_set_cpu(cpu, mask);
		/* a hint only: an offline CPU's vector goes elsewhere */
		if (irq_set_affinity(vdev->irq[v], mask))
			drm_dbg_driver(&vdev->drm, "vector %u: affinity %*pbl not set\n",
				       v, cpumask_pr_args(mask));
	}
	free_cpumask_var(mask);
	vdev->cpu_vec = map;
}

int vgpu_irq_init(struct vgpu_device *vdev)
{
	struct pci_dev *pdev = vdev->pdev;
	int i, ret;

	ret = -ENODEV;
	if (vgpu_msix)
		ret = pci_alloc_irq_vectors(pdev, VGPU_MSIX_VECTORS_MIN,
					    vgpu_irq_want(vdev), PCI_IRQ_MSIX);
	if (ret > 0) {
		vdev->msix = true;
	} else {
		ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_INTX);
		if (ret < 0)
			return ret;
		vdev->msix = false;
	}
	vdev->nvec = ret;
	for (i = 0; i < vdev->nvec; i++)
		vdev->irq[i] = pci_irq_vector(pdev, i);
	for (i = 0; i < vdev->nvec; i++) {
		ret = request_irq(vdev->irq[i], vgpu_irq_handler,
				  vdev->msix ? 0 : IRQF_SHARED, "vgpu", vdev);
		if (ret) {
			while (i--)
				free_irq(vdev->irq[i], vdev);
			pci_free_irq_vectors(pdev);
			vdev->nvec = 0;
			return ret;
		}
	}
	vgpu_irq_spread(vdev);
	drm_info(&vdev->drm, "%s interrupts (%d vector%s%s)\n",
		 vdev->msix ? "MSI-X" : "INTx", vdev->nvec,
		 vdev->nvec > 1 ? "s" : "",
		 vdev->cpu_vec ? ", completions on the submitter's CPU" : "");
	vgpu_irq_enable(vdev);
	return 0;
}

/* Write IRQ_MASK from @irq_on and @irq_user_waiters.  irq_lock held. */
static void vgpu_irq_mask_write(struct vgpu_device *vdev)
{
	u32 mask = 0;

	if (vdev->irq_on) {
		mask = VGPU_IRQ_COMPLETION | VGPU_IRQ_ERROR;
		if (vdev->irq_user_waiters)
			mask |= VGPU_IRQ_USER;
	}
	vgpu_write(vdev, VGPU_REG_IRQ_MASK, mask);
}

static void vgpu_irq_set_on(struct vgpu_device *vdev, bool on)
{
	unsigned long flags;

	spin_lock_irqsave(&vdev->irq_lock, flags);
	vdev->irq_on = on;
	vgpu_irq_mask_write(vdev);
	spin_unlock_irqrestore(&vdev->irq_lock, flags);
}

void vgpu_irq_fini(struct vgpu_device *vdev)
{
	int i;

	if (!vdev->nvec)
		return;
	vgpu_irq_set_on(vdev, false);
	for (i = 0; i < vdev->nvec; i++)
		free_irq(vdev->irq[i], vdev);
	pci_free_irq_vectors(vdev->pdev);
	vdev->nvec = 0;
	kfree(vdev->cpu_vec);
	vdev->cpu_vec = NULL;
}

/* Mask the device's interrupts and wait for running handlers. */
void vgpu_irq_disable(struct vgpu_device *vdev)
{
	int i;

	vgpu_irq_set_on(vdev, false);
	for (i = 0; i < vdev->nvec; i++)
		synchronize_irq(vdev->irq[i]);
}

void vgpu_irq_enable(struct vgpu_device *vdev)
{
	vgpu_write(vdev, VGPU_REG_IRQ_ACK, VGPU_IRQ_ALL);
	vgpu_irq_set_on(vdev, true);
}

/*
 * User-queue interrupts on demand, as i915 arms its user interrupt only
 * while a request has waiters: VGPU_IRQ_USER (a user queue's release with
 * VGPU_CMD_F_IRQ, VGPU_FEAT_USER_IRQ) stays masked unless a
 * WAIT_USER_FENCE caller is about to sleep.  A process that polls its
 * fence, and a wait that its poll ends, then cost no interrupt (under TCG
 * about 40 us of guest time each: make bench-guest).  The caller arms,
 * then reads the value once more before it sleeps: a release before the
 * arm is in memory by then, one after it interrupts.  Arming drops a
 * stale VGPU_IRQ_USER first (raised while masked, nobody waits for it).
 * False if the device has no VGPU_IRQ_USER (its user queues raise
 * COMPLETION, never masked): nothing to disarm then.
 */
bool vgpu_irq_user_arm(struct vgpu_device *vdev)
{
	unsigned long flags;
	int idx;

	if (!(vdev->features & VGPU_FEAT_USER_IRQ) || !drm_dev_enter(&vdev->drm, &idx))
		return false;
	spin_lock_irqsave(&vdev->irq_lock, flags);
	if (!vdev->irq_user_waiters++) {
		vgpu_write(vdev, VGPU_REG_IRQ_ACK, VGPU_IRQ_USER);
		vgpu_irq_mask_write(vdev);
	}
	spin_unlock_irqrestore(&vdev->irq_lock, flags);
	drm_dev_exit(idx);
	return true;
}

void vgpu_irq_user_disarm(struct vgpu_device *vdev)
{
	unsigned long flags;
	int idx;
	bool live = drm_dev_enter(&vdev->drm, &idx);

	spin_lock_irqsave(&vdev->irq_lock, flags);
	if (!--vdev->irq_user_waiters && live)
		vgpu_irq_mask_write(vdev);
	spin_unlock_irqrestore(&vdev->irq_lock, flags);
	if (live)
		drm_dev_exit(idx);
}
