// SPDX-License-Identifier: GPL-2.0
/*
 * The device's address-space table and its ASIDs (below, "ASIDs"): which
 * address space (vgpu_mmu.c) holds a slot while it has work on the device,
 * and the count of its jobs on the device (@active) that keeps the pages
 * it unmapped until no launch can hold their TLB entries (vgpu_mmu.c,
 * "TLB"; vgpu_as_defer()).
 */
#include <linux/delay.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include "vgpu_drv.h"

static const char *vgpu_asid_fence_name(struct dma_fence *f)
{
	return "vgpu";
}

static const char *vgpu_asid_fence_timeline(struct dma_fence *f)
{
	return "vgpu-asid";
}

static const struct dma_fence_ops vgpu_asid_fence_ops = {
	.get_driver_name = vgpu_asid_fence_name,
	.get_timeline_name = vgpu_asid_fence_timeline,
};

int vgpu_mmu_init(struct vgpu_device *vdev)
{
	spin_lock_init(&vdev->asid_lock);
	INIT_LIST_HEAD(&vdev->asid_lru);
	vdev->asid_wait = NULL;
	vdev->asid_pinned = 0;
	vdev->asid_wait_context = dma_fence_context_alloc(1);
	vdev->asid_owner = kcalloc(vdev->as_max, sizeof(*vdev->asid_owner),
				   GFP_KERNEL);
	if (!vdev->asid_owner)
		return -ENOMEM;
	vdev->as_table = dma_alloc_coherent(vdev->drm.dev,
					    vdev->as_max * sizeof(u64),
					    &vdev->as_table_dma, GFP_KERNEL);
	if (!vdev->as_table) {
		kfree(vdev->asid_owner);
		vdev->asid_owner = NULL;
		return -ENOMEM;
	}
	return 0;
}

void vgpu_mmu_fini(struct vgpu_device *vdev)
{
	spin_lock(&vdev->asid_lock);
	vgpu_asid_kick_locked(vdev);
	spin_unlock(&vdev->asid_lock);
	dma_free_coherent(vdev->drm.dev, vdev->as_max * sizeof(u64),
			  vdev->as_table, vdev->as_table_dma);
	kfree(vdev->asid_owner);
	vdev->asid_owner = NULL;
}

/* Point the device at the address-space table (probe and after reset). */
void vgpu_mmu_hw_init(struct vgpu_device *vdev)
{
	vgpu_write(vdev, VGPU_REG_AS_BASE_LO, lower_32_bits(vdev->as_table_dma));
	vgpu_write(vdev, VGPU_REG_AS_BASE_HI, upper_32_bits(vdev->as_table_dma));
	vgpu_write(vdev, VGPU_REG_AS_COUNT, vdev->as_max);
}

/* Every TLB of the device drops its entries (VGPU_REG_TLB_FLUSH). */
void vgpu_tlb_flush_now(struct vgpu_device *vdev)
{
	int idx;

	if (drm_dev_enter(&vdev->drm, &idx)) {
		vgpu_write(vdev, VGPU_REG_TLB_FLUSH, 1);
		drm_dev_exit(idx);
	}
}

/*
 * ASIDs.  An address space is not tied to a slot of the device's
 * address-space table: it has an ASID only while it needs one, as
 * panthor binds a VM to one of its AS slots.  Opening a file and
 * VM_CREATE take none; a job binds its AS in prepare_job
 * (vgpu_as_bind_job(), the scheduler's thread, just before run_job), a
 * user-mode queue pins its AS from create to destroy (vgpu_as_pin()).
 * An AS keeps its ASID until it is released or the ASID is stolen: a job
 * of an unbound AS takes a free ASID, else the least recently bound one
 * (@asid_lru) of an AS with no job on the device (@active 0, raised
 * under @asid_lock by the bind itself, so a job between prepare_job and
 * run_job counts) and no pin.  If every ASID is held by an AS with work
 * on the device, prepare_job returns @asid_wait, a fence signalled
 * (vgpu_asid_kick_locked()) when an AS goes idle, is unpinned or is
 * released; the scheduler calls prepare_job again then.  run_job never
 * waits and no job fails for want of an ASID.
 *
 * TLB.  The device's TLBs tag entries by ASID, so the new owner of an ASID
 * must never be served the old owner's translations.  Every bind of an
 * ASID to an AS (free or stolen) writes the table entry and bumps
 * vdev->mmu_gen under @asid_lock, before the bound AS's job is counted
 * in @active.  Then:
 *  - no launch of the old owner runs or can start under that ASID: it
 *    was taken only with the old owner's @active at 0, i.e. every job of
 *    it was freed after its hardware fence signalled (its launch ended,
 *    or a reset stopped the queue), and none can be added without a bind
 *    under @asid_lock, which now finds the old owner unbound; a pinned AS
 *    (a user-mode queue that may run at any time) is never a victim;
 *  - every launch under the ASID from now on is the new owner's, and its
 *    run_job reads mmu_gen after its bind (or, for a later job of the
 *    same AS on another queue, after taking @asid_lock and seeing the AS
 *    bound, which orders it after the bump), so its queue finds the
 *    generation moved and emits TLB_INVALIDATE (all ASIDs) on its ring
 *    before the LAUNCH; the device completes it before the next command
 *    of that queue starts, and no command of the old owner remains that
 *    could refill the TLB with old entries afterwards.
 * So the first launch of the new owner on each queue is preceded by an
 * invalidate that ran after the last use of the old owner's entries.
 * The table entry itself reaches memory before the doorbell (coherent
 * memory, writel).  User-mode queues (vgpu_userq.c) flush every TLB
 * at create (VGPU_REG_TLB_FLUSH), after their pin bound the ASID.
 */

/* Wake every job waiting for an ASID.  Under @asid_lock. */
void vgpu_asid_kick_locked(struct vgpu_device *vdev)
{
	struct dma_fence *f = vdev->asid_wait;

	lockdep_assert_held(&vdev->asid_lock);
	if (!f)
		return;
	vdev->asid_wait = NULL;
	dma_fence_signal_locked(f);
	dma_fence_put(f);
}

/*
 * Give @as an ASID if it has none: a free one, or the least recently used
 * one of an AS with no job on the device and no pin.  0 or -EBUSY.
 * Under @asid_lock.
 */
int vgpu_as_bind_locked(struct vgpu_as *as)
{
	struct vgpu_device *vdev = as->vdev;
	struct vgpu_as *victim;
	u32 asid;

	lockdep_assert_held(&vdev->asid_lock);
	if (as->asid) {
		list_move_tail(&as->lru, &vdev->asid_lru);
		return 0;
	}
	for (asid = 1; asid < vdev->as_max; asid++)
		if (!vdev->asid_owner[asid])
			goto bind;
	list_for_each_entry(victim, &vdev->asid_lru, lru) {
		if (!atomic_read(&victim->active) && !victim->pins) {
			asid = victim->asid;
			vgpu_dbg(vdev, VGPU_DBG_MMU, "asid %u: taken from root %pad\n",
				 asid, &victim->root.dma);
			victim->asid = 0;
			list_del_init(&victim->lru);
			vdev->asid_steals++;
			goto bind;
		}
	}
	return -EBUSY;

bind:
	as->asid = asid;
	vdev->asid_owner[asid] = as;
	list_add_tail(&as->lru, &vdev->asid_lru);
	vdev->as_table[asid] = cpu_to_le64(VGPU_PTE_VALID |
					   (as->root.dma & VGPU_PTE_ADDR_MASK));
	/* no launch under @asid before a TLB_INVALIDATE: see above */
	atomic_inc(&vdev->mmu_gen);
	vdev->asid_binds++;
	vgpu_dbg(vdev, VGPU_DBG_MMU, "asid %u root %pad\n", asid, &as->root.dma);
	return 0;
}

/*
 * The fence to wait on for an ASID (a reference), or NULL when a fence is
 * needed and @spare is NULL: the caller allocates one and retries.  Under
 * @asid_lock; takes *@spare when it uses it.
 */
static struct dma_fence *vgpu_asid_wait_locked(struct vgpu_device *vdev,
					       struct dma_fence **spare)
{
	if (!vdev->asid_wait) {
		if (!*spare)
			return NULL;
		vdev->asid_wait = *spare;
		*spare = NULL;
		dma_fence_init(vdev->asid_wait, &vgpu_asid_fence_ops,
			       &vdev->asid_lock, vdev->asid_wait_context,
			       ++vdev->asid_wait_seqno);
	}
	vdev->asid_waits++;
	return dma_fence_get(vdev->asid_wait);
}

/*
 * A fence for vgpu_asid_wait_locked().  From prepare_job, @gfp is
 * GFP_NOWAIT: the scheduler's thread is on the way to signalling fences,
 * so it must not wait for reclaim (amdgpu's VMID grab does the same); a
 * failure (memory pressure, fault injection) is retried a moment later.
 */
static struct dma_fence *vgpu_asid_spare(gfp_t gfp)
{
	struct dma_fence *f;

	while (!(f = kzalloc(sizeof(*f), gfp | __GFP_NOWARN)))
		msleep(1);
	return f;
}

/**
 * vgpu_as_bind_job - bind @as to an ASID for a job about to run
 * @as: the job's address space
 *
 * From prepare_job.  On success the job is counted in @as->active (as
 * vgpu_as_job_begin() does: the caller sets job->on_device, and
 * vgpu_as_job_end() drops it), which keeps the ASID until the job is
 * freed.
 *
 * Return: NULL when bound, else a fence (a reference) to wait for: every
 * ASID is held by an AS with work on the device; call again once it
 * signals.
 */
struct dma_fence *vgpu_as_bind_job(struct vgpu_as *as)
{
	struct vgpu_device *vdev = as->vdev;
	struct dma_fence *spare = NULL, *wait = NULL;

	for (;;) {
		spin_lock(&vdev->asid_lock);
		if (!vgpu_as_bind_locked(as)) {
			atomic_inc(&as->active);
			wait = NULL;
		} else {
			wait = vgpu_asid_wait_locked(vdev, &spare);
			if (!wait) {
				spin_unlock(&vdev->asid_lock);
				spare = vgpu_asid_spare(GFP_NOWAIT);
				continue;
			}
		}
		spin_unlock(&vdev->asid_lock);
		break;
	}
	/* pairs with vgpu_as_defer(): the count is seen before mmu_gen is read */
	smp_mb();
	kfree(spare);
	return wait;
}

/**
 * vgpu_as_pin - bind @as to an ASID and keep it until vgpu_as_unpin()
 * @as: a user-mode queue's address space
 *
 * Waits (interruptibly) while every ASID is held by an AS with work on
 * the device.  At least one ASID is always left unpinned for the jobs of
 * other address spaces.
 *
 * Return: 0, -EBUSY when every ASID but one is pinned already, or
 * -EINTR/-ERESTARTSYS.
 */
int vgpu_as_pin(struct vgpu_as *as)
{
	struct vgpu_device *vdev = as->vdev;
	struct dma_fence *spare = NULL, *wait;
	long ret;

	for (;;) {
		spin_lock(&vdev->asid_lock);
		if (!as->pins && vdev->asid_pinned + 2 >= vdev->as_max) {
			spin_unlock(&vdev->asid_lock);
			ret = -EBUSY;
			break;
		}
		if (!vgpu_as_bind_locked(as)) {
			if (!as->pins++)
				vdev->asid_pinned++;
			spin_unlock(&vdev->asid_lock);
			ret = 0;
			break;
		}
		wait = vgpu_asid_wait_locked(vdev, &spare);
		spin_unlock(&vdev->asid_lock);
		if (!wait) {
			spare = vgpu_asid_spare(GFP_KERNEL);
			continue;
		}
		ret = dma_fence_wait(wait, true);
		dma_fence_put(wait);
		if (ret)
			break;
	}
	kfree(spare);
	return ret;
}

/*
 * vgpu_as_pin() that does not wait: 0, -EBUSY (every ASID but one pinned)
 * or -EAGAIN (none can be had now).  Under a mutex such as uqs->lock.
 */
int vgpu_as_try_pin(struct vgpu_as *as)
{
	struct vgpu_device *vdev = as->vdev;
	int ret = 0;

	spin_lock(&vdev->asid_lock);
	if (!as->pins && vdev->asid_pinned + 2 >= vdev->as_max)
		ret = -EBUSY;
	else if (vgpu_as_bind_locked(as))
		ret = -EAGAIN;
	else if (!as->pins++)
		vdev->asid_pinned++;
	spin_unlock(&vdev->asid_lock);
	return ret;
}

/* Drop a pin of vgpu_as_pin(): the ASID may be taken once @as is idle. */
void vgpu_as_unpin(struct vgpu_as *as)
{
	struct vgpu_device *vdev = as->vdev;

	spin_lock(&vdev->asid_lock);
	if (!WARN_ON(!as->pins) && !--as->pins) {
		vdev->asid_pinned--;
		vgpu_asid_kick_locked(vdev);
	}
	spin_unlock(&vdev->asid_lock);
}

/* A job of @as is about to be handed to the device (before mmu_gen is read). */
void vgpu_as_job_begin(struct vgpu_as *as)
{
	atomic_inc(&as->active);
	/* pairs with vgpu_as_defer(): the count is seen before mmu_gen is read */
	smp_mb__after_atomic();
}

/* A job of @as has left the device.  Process context (may free BOs). */
void vgpu_as_job_end(struct vgpu_as *as)
{
	struct vgpu_deferred *d, *tmp;
	LIST_HEAD(list);

	bool idle = false;

	spin_lock(&as->deferred_lock);
	if (atomic_dec_and_test(&as->active)) {
		list_splice_init(&as->deferred, &list);
		as->ndeferred = 0;
		idle = true;
	}
	spin_unlock(&as->deferred_lock);
	/*
	 * Its ASID may be taken now: wake the jobs waiting for one.  Under
	 * the lock: a job that saw @active raised under it has installed
	 * its fence before this looks.
	 */
	if (idle) {
		spin_lock(&as->vdev->asid_lock);
		vgpu_asid_kick_locked(as->vdev);
		spin_unlock(&as->vdev->asid_lock);
	}
	list_for_each_entry_safe(d, tmp, &list, link) {
		vgpu_dbg(as->vdev, VGPU_DBG_MMU, "asid %u: release deferred BO\n",
			 as->asid);
		if (d->obj)
			drm_gem_object_put(d->obj);
		d->free(d);
	}
}

/**
 * vgpu_as_defer - after vgpu_as_unmap(): keep @obj until no job of @as
 *                 runs any more, if one does
 * @as:  the address space it was unmapped from
 * @obj: the BO, or NULL (memory that @d->free releases)
 * @d:   in the mapping that went away; on true it sits on @as->deferred
 *       with a reference to @obj, and vgpu_as_job_end() drops that and
 *       calls @d->free
 *
 * Return: true when deferred, false when no job of @as runs: the caller
 * frees the mapping and may let the BO go.
 */
bool vgpu_as_defer(struct vgpu_as *as, struct drm_gem_object *obj,
		   struct vgpu_deferred *d)
{
	bool deferred = false;

	/* Pairs with vgpu_as_job_begin(): after the mmu_gen bump. */
	smp_mb__before_atomic();
	spin_lock(&as->deferred_lock);
	if (atomic_read(&as->active)) {
		if (obj)
			drm_gem_object_get(obj);
		d->obj = obj;
		list_add_tail(&d->link, &as->deferred);
		as->ndeferred++;
		as->deferred_total++;
		deferred = true;
	}
	spin_unlock(&as->deferred_lock);
	return deferred;
}
