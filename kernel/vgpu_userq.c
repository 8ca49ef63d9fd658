// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: vgpu user-mode queues and user fences
 *
 * A user-mode queue (uapi "User-mode queues") is fed by one process with
 * no ioctl: its command ring, completion ring and doorbell page are
 * mapped into the creating process.  The device runs it on one of the
 * hardware queues the driver keeps out of its schedulers (the last
 * VGPU_PARAM_USER_QUEUES of them, "slots"), in user mode, in the address
 * space of one VM.  The kernel validates none of it: the device runs
 * each command in the queue's address space only, refuses privileged
 * commands and stops the queue alone on any error.
 *
 * Oversubscription.  A file may hold VGPU_MAX_USERQ_PER_FILE user queues
 * whatever the number of slots, so a client that holds queues cannot
 * keep another from creating and running its own (AMD's MES maps queues
 * in and out of its hardware queues the same way).  The rings belong to
 * the queue, not the slot; a scheduler (the same delayed work as the
 * watchdog, every jiffy while a queue is mapped out) maps queues in and
 * out of the slots:
 *   - a queue mapped out with work (the tail its process wrote is not
 *     its head) waits for a slot; waiters go by priority, then by how
 *     long they have waited;
 *   - it takes a free slot, else the slot of a queue that is stopped,
 *     idle, of lower priority, or of its priority and mapped in for
 *     its timeslice (userq_timeslice_ms) or longer;
 *   - mapping out stops the queue at a command boundary with the
 *     device's HOLD (uapi/vgpu_hw.h "Swapping queues": the command
 *     executing ends, a waiting SEM_ACQUIRE gives way uncompleted), then
 *     reads HEAD, TAIL and COMPLETED back and disables it; mapping in
 *     restores them (RESTORE) on any slot and rings the doorbell with
 *     the tail: no command is lost or runs twice, and completion
 *     records keep their ring slots and seq.
 * A launch is not preempted mid-kernel (user queues have no context-save
 * buffer): a queue whose command never ends cannot be mapped out, and the
 * watchdog stops it (HUNG) after the timeout, as when nothing waits.
 *
 * Doorbells of mapped-out queues: the process's doorbell mapping is
 * zapped at map-out, and a fault then maps the queue's shadow page, a
 * page of kernel memory in the doorbell page's layout, which the kernel
 * filled at map-out with the queue's TAIL, HEAD, COMPLETED, STATUS and
 * ERROR (exact: nothing runs while mapped out).  A doorbell written there
 * is a store into memory the scheduler reads; at map-in the mapping is
 * zapped again (a store after that faults, and waits on @lock), the
 * shadow's tail is read and written to the hardware doorbell, and the
 * next fault maps the hardware page.  This costs the device nothing
 * per queue (the alternative, per-queue doorbell state in the device,
 * would bound the queues by device memory again) and loses no doorbell.
 *
 * Such a queue is long-running: it makes no dma_fence.  A dma_fence must
 * signal in bounded time, and whoever waits on one (another driver, the
 * memory manager, a page fault) may hold locks the signalling path needs;
 * work that userspace feeds and may never finish would break both rules.
 * Completion is instead a user fence, a value the device writes into the
 * VM, which only userspace waits on (WAIT_USER_FENCE, interruptible,
 * with a deadline).  Nothing in the kernel waits on a user queue except
 * its own teardown, which first stops it.
 *
 * The driver still owns the hardware:
 *   - a watchdog (each scheduler pass) stops a queue that has work and
 *     completes nothing for the job timeout (HUNG), counting only the
 *     time it is mapped in: a queue waiting for a slot is not hung;
 *   - a device reset stops them all (LOST); an error stops one (ERROR);
 *     a stopped queue stays stopped until destroyed;
 *   - memory unmapped from the VM while a user queue may use it waits on
 *     the address space's deferred list (vgpu_mmu.c) until the queue is
 *     destroyed, and every unmap flushes the device's TLBs at once
 *     (VGPU_REG_TLB_FLUSH) so that later commands see the new mappings;
 *     every map-in flushes them too (the slot's previous queue may have
 *     run in another address space).
 *
 * Mappings: mmap() offsets below DRM's GEM range, one window per queue
 * (device-wide, VGPU_UQ_WINDOWS of them).  Pages are inserted at fault
 * time under @lock, and only while the faulting file owns the queue the
 * mapping was made for (its serial); destroy takes the queue out of
 * uqs.all under @lock and then zaps every mapping of the window, so a
 * stale mapping (after destroy, or of a later queue in the same window)
 * gets SIGBUS, never another queue's doorbell, and a fork()ed child has
 * none (VM_DONTCOPY).
 *
 * Locking: vdev->uqs.lock (a mutex) guards the slots, uqs.all and every
 * queue's state; the hardware queue registers are only written under it.
 * Taken inside mmap_lock (fault, mmap), never around it.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_vma_manager.h>
#include "vgpu_userq.h"

static_assert(sizeof(struct drm_vgpu_userq_create) == 48);
static_assert(sizeof(struct drm_vgpu_userq_destroy) == 8);
static_assert(sizeof(struct drm_vgpu_userq_get_state) == 32);

static int vgpu_user_queues = -1;
module_param_named(user_queues, vgpu_user_queues, int, 0444);
MODULE_PARM_DESC(user_queues,
		 "hardware queues kept for user-mode queues (default -1: a quarter)");

/* mmap() windows, in pages: one per queue, below DRM_FILE_PAGE_OFFSET_START */
#define VGPU_UQ_PGOFF_BASE 0x10000ul
#define VGPU_UQ_SLOT_PAGES 0x40ul
#define VGPU_UQ_RING_PGOFF 0x00ul
#define VGPU_UQ_CPL_PGOFF 0x10ul
#define VGPU_UQ_DB_PGOFF 0x30ul
#define VGPU_UQ_WINDOWS VGPU_USERQ_MAX_DEVICE
#define VGPU_UQ_RING_BYTES (VGPU_USERQ_ENTRIES * VGPU_CMD_BYTES)
#define VGPU_UQ_CPL_BYTES \
	PAGE_ALIGN(VGPU_USERQ_ENTRIES * sizeof(struct vgpu_completion))
static_assert(VGPU_UQ_CPL_PGOFF >= VGPU_UQ_RING_BYTES / PAGE_SIZE);
static_assert(VGPU_UQ_DB_PGOFF - VGPU_UQ_CPL_PGOFF >= VGPU_UQ_CPL_BYTES / PAGE_SIZE);
static_assert(VGPU_UQ_DB_PGOFF < VGPU_UQ_SLOT_PAGES);
static_assert((VGPU_UQ_PGOFF_BASE + VGPU_UQ_WINDOWS * VGPU_UQ_SLOT_PAGES) <=
	      DRM_FILE_PAGE_OFFSET_START);

static unsigned int vgpu_max_userq_per_user = VGPU_USERQ_MAX_PER_USER;
module_param_named(max_userq_per_user, vgpu_max_userq_per_user, uint, 0644);
MODULE_PARM_DESC(max_userq_per_user,
		 "user-mode queues one user (euid) may hold over all its files (default "
		 __stringify(VGPU_USERQ_MAX_PER_USER) ")");

/*
 * Count a queue of @uid in uqs->users: -EDQUOT at the user's bound.  A
 * bound per user, not only per file: a user opening many files must not
 * take every window of the device (-ENOSPC for everybody else).
 */
static int vgpu_uq_user_get(struct vgpu_userqs *uqs, kuid_t uid)
{
	unsigned long key = from_kuid(&init_user_ns, uid);
	unsigned long n = xa_to_value(xa_load(&uqs->users, key) ?: xa_mk_value(0));

	lockdep_assert_held(&uqs->lock);
	if (n >= READ_ONCE(vgpu_max_userq_per_user))
		return -EDQUOT;
	return xa_err(xa_store(&uqs->users, key, xa_mk_value(n + 1), GFP_KERNEL));
}

static void vgpu_uq_user_put(struct vgpu_userqs *uqs, kuid_t uid)
{
	unsigned long key = from_kuid(&init_user_ns, uid);
	void *e = xa_load(&uqs->users, key);

	lockdep_assert_held(&uqs->lock);
	if (WARN_ON(!e))
		return;
	if (xa_to_value(e) <= 1)
		xa_erase(&uqs->users, key);
	else
		xa_store(&uqs->users, key, xa_mk_value(xa_to_value(e) - 1), GFP_NOWAIT);
}

enum vgpu_uq_area { VGPU_UQ_RING, VGPU_UQ_CPL, VGPU_UQ_DB };

static loff_t vgpu_uq_offset(u32 gidx, unsigned long area)
{
	return (loff_t)(VGPU_UQ_PGOFF_BASE + gidx * VGPU_UQ_SLOT_PAGES + area)
		<< PAGE_SHIFT;
}

/* The window and area of mmap() page offset @pgoff; false for none. */
static bool vgpu_uq_decode(struct vgpu_device *vdev, unsigned long pgoff,
			   u32 *gidx, enum vgpu_uq_area *area,
			   unsigned long *page, unsigned long *npages)
{
	unsigned long rel;

	if (pgoff < VGPU_UQ_PGOFF_BASE)
		return false;
	pgoff -= VGPU_UQ_PGOFF_BASE;
	if (pgoff / VGPU_UQ_SLOT_PAGES >= VGPU_UQ_WINDOWS)
		return false;
	*gidx = pgoff / VGPU_UQ_SLOT_PAGES;
	rel = pgoff % VGPU_UQ_SLOT_PAGES;
	if (rel >= VGPU_UQ_DB_PGOFF) {
		*area = VGPU_UQ_DB;
		*page = rel - VGPU_UQ_DB_PGOFF;
		*npages = 1;
	} else if (rel >= VGPU_UQ_CPL_PGOFF) {
		*area = VGPU_UQ_CPL;
		*page = rel - VGPU_UQ_CPL_PGOFF;
		*npages = VGPU_UQ_CPL_BYTES >> PAGE_SHIFT;
	} else {
		*area = VGPU_UQ_RING;
		*page = rel - VGPU_UQ_RING_PGOFF;
		*npages = VGPU_UQ_RING_BYTES >> PAGE_SHIFT;
	}
	return *page < *npages;
}

/* ---- device-wide set-up ---- */

/*
 * Probe: how many of the @total hardware queues to keep for user mode
 * (at least one stays with the schedulers); the rest are vdev->nqueues.
 * None without VGPU_FEAT_QUEUE_SWAP: the driver maps queues in and out.
 */
u32 vgpu_userq_split(struct vgpu_device *vdev, u32 total)
{
	int n = vgpu_user_queues < 0 ? total / 4 : vgpu_user_queues;

	if (!(vdev->features & VGPU_FEAT_USER_QUEUES) ||
	    !(vdev->features & VGPU_FEAT_QUEUE_SWAP) || total < 2)
		return 0;
	return clamp_t(int, n, 0, min_t(u32, total - 1, VGPU_QUEUES_MAX));
}

static void vgpu_userq_reset_work(struct work_struct *work);

int vgpu_userq_init(struct vgpu_device *vdev)
{
	struct vgpu_userqs *uqs = &vdev->uqs;
	u32 i;

	mutex_init(&uqs->lock);
	xa_init_flags(&uqs->all, XA_FLAGS_ALLOC);
	xa_init(&uqs->users);
	init_waitqueue_head(&uqs->wq);
	INIT_DELAYED_WORK(&uqs->wdog, vgpu_userq_watchdog);
	INIT_WORK(&uqs->reset_work, vgpu_userq_reset_work);
	if (!uqs->n)
		return 0;
	uqs->db_phys = pci_resource_start(vdev->pdev, VGPU_DOORBELL_BAR);
	if (pci_resource_len(vdev->pdev, VGPU_DOORBELL_BAR) <
	    (vdev->nqueues + uqs->n) * VGPU_DOORBELL_PAGE) {
		vgpu_warn(vdev, "no doorbell BAR: no user-mode queues\n");
		uqs->n = 0;
		return 0;
	}
	for (i = 0; i < uqs->n; i++)
		uqs->slot[i].hwq = vdev->nqueues + i;
	return 0;
}

/* ---- one queue ---- */

/* Its state, with an error the device stopped it on.  uqs->lock held. */
void vgpu_userq_refresh(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	u32 st;

	lockdep_assert_held(&vdev->uqs.lock);
	if (uq->state != VGPU_USERQ_STATE_ACTIVE || uq->slot < 0)
		return;
	st = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_STATUS);
	if (st & VGPU_QSTAT_STOPPED) {
		uq->state = VGPU_USERQ_STATE_ERROR;
		uq->hw_error = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_ERROR);
		uq->error_index = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_ERROR_INDEX);
	}
}

/*
 * Disable @uq's hardware queue and wait until the device has let go of
 * it: the command executing is aborted (within 1024 warp-instructions of
 * each SM), none at a command boundary (held, not busy).  uqs->lock held,
 * the device present, @uq mapped in.
 */
void vgpu_userq_hw_stop(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	unsigned long until = jiffies + HZ;

	uq->completed = vgpu_uq_read_completed(vdev, uq->hwq);
	uq->head = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_HEAD);
	uq->tail = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_TAIL);
	vgpu_uq_write(vdev, uq->hwq, VGPU_Q_CONTROL, 0);
	while (vgpu_uq_read(vdev, uq->hwq, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY) {
		if (time_after(jiffies, until)) {
			vgpu_warn(vdev, "user queue %u (hw %u) still busy\n",
				  uq->id, uq->hwq);
			break;
		}
		usleep_range(50, 200);
	}
}

/*
 * Wake every WAIT_USER_FENCE caller: they sleep until uqs->seq moves (an
 * interrupt, a stop, a queue gone), so a wake-up must move it too, or a
 * waiter goes back to sleep until its 1 ms tick.
 */
void vgpu_userq_wake(struct vgpu_userqs *uqs)
{
	atomic_inc(&uqs->seq);
	wake_up_all(&uqs->wq);
}

/* Zap every process's mapping of @uq's doorbell page: the next access faults. */
static void vgpu_userq_zap_db(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	unmap_mapping_range(vdev->drm.anon_inode->i_mapping,
			    vgpu_uq_offset(uq->gidx, VGPU_UQ_DB_PGOFF),
			    PAGE_SIZE, 1);
}

/* What the doorbell page of @uq shows while it is mapped out. */
static void vgpu_userq_shadow_fill(struct vgpu_userq *uq)
{
	u32 st = VGPU_QSTAT_ENABLED;

	if (uq->state != VGPU_USERQ_STATE_ACTIVE)
		st |= VGPU_QSTAT_STOPPED;
	else if (uq->head == uq->tail)
		st |= VGPU_QSTAT_IDLE;
	WRITE_ONCE(uq->shadow[VGPU_DB_TAIL / 4], uq->tail);
	WRITE_ONCE(uq->shadow[VGPU_DB_HEAD / 4], uq->head);
	WRITE_ONCE(uq->shadow[VGPU_DB_COMPLETED_LO / 4], lower_32_bits(uq->completed));
	WRITE_ONCE(uq->shadow[VGPU_DB_COMPLETED_HI / 4], upper_32_bits(uq->completed));
	WRITE_ONCE(uq->shadow[VGPU_DB_STATUS / 4], st);
	WRITE_ONCE(uq->shadow[VGPU_DB_ERROR / 4],
		   uq->state == VGPU_USERQ_STATE_ACTIVE ? 0 : uq->hw_error);
}

/* The tail the process last wrote into the shadow page. */
u32 vgpu_userq_shadow_tail(const struct vgpu_userq *uq)
{
	return READ_ONCE(uq->shadow[VGPU_DB_TAIL / 4]);
}

/*
 * Map @uq into free slot @i: its rings, and its progress as it was
 * mapped out (RESTORE), then the doorbell the process wrote meanwhile.
 * uqs->lock held, the device present.
 */
/*
 * Put @uq on hardware queue slot @i.  Its address space needs a hardware
 * ASID for as long as it is there (QCTRL names it): pinned here, unpinned
 * when it leaves the slot, so that user queues pin at most as many ASIDs
 * as there are slots, however many exist.  False, and nothing done, when
 * no ASID can be had now (the scheduler tries again on its next pass).
 */
bool vgpu_userq_map_in(struct vgpu_device *vdev, struct vgpu_userq *uq,
		       u32 i)
{
	struct vgpu_uq_slot *s = &vdev->uqs.slot[i];
	u32 hwq = s->hwq, tail;

	lockdep_assert_held(&vdev->uqs.lock);
	/* a device reset's bookkeeping is pending (vgpu_userq_reset_work()) */
	if (atomic_read(&vdev->uqs.resetting))
		return false;
	if (!uq->pinned) {
		if (vgpu_as_try_pin(uq->as))
			return false;
		uq->pinned = true;
	}
	/* from now on, a doorbell store faults and waits for @lock */
	vgpu_userq_zap_db(vdev, uq);
	tail = vgpu_userq_shadow_tail(uq);
	uq->slot = i;
	uq->hwq = hwq;
	uq->draining = false;
	uq->since = ktime_get_ns();
	uq->wd_last = 0;
	s->owner = uq;
	atomic_set(&s->stopped, 0);
	/*
	 * Nothing cached before may serve it: not this hardware queue's
	 * translations from its previous queue (of another AS, or of a VA
	 * since reused), nor the SMs' from an unmap no kernel launch has
	 * flushed yet (an unmap flushes at once only while the AS has a
	 * user queue: it either saw the count USERQ_CREATE raised, or its
	 * PTEs were clear before this flush).
	 */
	smp_mb();
	vgpu_write(vdev, VGPU_REG_TLB_FLUSH, 1);
	vgpu_uq_write(vdev, hwq, VGPU_Q_CONTROL, 0);
	vgpu_uq_write(vdev, hwq, VGPU_Q_RING_LO, lower_32_bits(uq->ring_dma));
	vgpu_uq_write(vdev, hwq, VGPU_Q_RING_HI, upper_32_bits(uq->ring_dma));
	vgpu_uq_write(vdev, hwq, VGPU_Q_CPL_LO, lower_32_bits(uq->cpl_dma));
	vgpu_uq_write(vdev, hwq, VGPU_Q_CPL_HI, upper_32_bits(uq->cpl_dma));
	vgpu_uq_write(vdev, hwq, VGPU_Q_SIZE, VGPU_USERQ_ENTRIES);
	vgpu_uq_write(vdev, hwq, VGPU_Q_PRIORITY, uq->priority);
	vgpu_uq_write(vdev, hwq, VGPU_Q_CSB, 0);
	vgpu_uq_write(vdev, hwq, VGPU_Q_HEAD, uq->head);
	vgpu_uq_write(vdev, hwq, VGPU_Q_COMPLETED_LO, lower_32_bits(uq->completed));
	vgpu_uq_write(vdev, hwq, VGPU_Q_COMPLETED_HI, upper_32_bits(uq->completed));
	vgpu_uq_write(vdev, hwq, VGPU_Q_CONTROL,
		      VGPU_QCTRL_ENABLE | VGPU_QCTRL_USER | VGPU_QCTRL_RESTORE |
		      uq->as->asid << VGPU_QCTRL_ASID_SHIFT);
	/* (a tail beyond the ring stops it: VGPU_ERR_BAD_DOORBELL) */
	if (tail != uq->head)
		vgpu_uq_write(vdev, hwq, VGPU_Q_DOORBELL, tail);
	uq->tail = tail;
	return true;
}

/* @uq left its slot: its ASID may be taken once its AS is idle. */
static void vgpu_userq_unpin(struct vgpu_userq *uq)
{
	if (uq->pinned) {
		vgpu_as_unpin(uq->as);
		uq->pinned = false;
	}
}

/*
 * Finish mapping @uq out: it stands at a command boundary (held and not
 * busy) or is stopped.  Its progress is read back, the hardware queue
 * disabled and freed, and its doorbell mapping moves to the shadow page.
 * uqs->lock held, the device present.
 */
void vgpu_userq_map_out(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	lockdep_assert_held(&vdev->uqs.lock);
	/* no doorbell store reaches the hardware page after this */
	vgpu_userq_zap_db(vdev, uq);
	vgpu_userq_refresh(vdev, uq);
	vgpu_userq_hw_stop(vdev, uq);
	vgpu_userq_shadow_fill(uq);
	vdev->uqs.slot[uq->slot].owner = NULL;
	uq->slot = -1;
	vgpu_userq_unpin(uq);
	uq->draining = false;
	uq->since = ktime_get_ns();
	WRITE_ONCE(vdev->uqs.map_outs, vdev->uqs.map_outs + 1);
}

/*
 * Start mapping @uq out at its next command boundary (HOLD); at once
 * when it is at one.  True when it is out.
 */
bool vgpu_userq_drain(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	if (uq->state == VGPU_USERQ_STATE_ACTIVE &&
	    vgpu_uq_read(vdev, uq->hwq, VGPU_Q_CONTROL) & VGPU_QCTRL_ENABLE) {
		vgpu_uq_write(vdev, uq->hwq, VGPU_Q_CONTROL,
			      VGPU_QCTRL_ENABLE | VGPU_QCTRL_USER |
			      VGPU_QCTRL_HOLD |
			      uq->as->asid << VGPU_QCTRL_ASID_SHIFT);
		uq->draining = true;
		if (vgpu_uq_read(vdev, uq->hwq, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY)
			return false;
	}
	vgpu_userq_map_out(vdev, uq);
	return true;
}

/*
 * Take @uq out for good: stopped, mappings zapped, its address space no
 * longer used by the device.  Once, from destroy or device removal.
 * uqs->lock held; returns whether the caller must end the address
 * space's use (vgpu_as_job_end(), which may free BOs: after unlocking).
 */
static bool vgpu_userq_detach(struct vgpu_device *vdev, struct vgpu_userq *uq,
			      bool hw)
{
	lockdep_assert_held(&vdev->uqs.lock);
	if (!uq->live)
		return false;
	if (uq->slot >= 0) {
		if (hw)
			vgpu_userq_hw_stop(vdev, uq);
		vdev->uqs.slot[uq->slot].owner = NULL;
		uq->slot = -1;
		vgpu_userq_unpin(uq);
	}
	uq->live = false;
	xa_erase(&vdev->uqs.all, uq->gidx);	/* its mappings are dead for good */
	vgpu_uq_user_put(&vdev->uqs, uq->uid);
	unmap_mapping_range(vdev->drm.anon_inode->i_mapping,
			    vgpu_uq_offset(uq->gidx, 0),
			    VGPU_UQ_SLOT_PAGES << PAGE_SHIFT, 1);
	atomic_dec(&uq->as->userqs);
	atomic_dec(&vdev->uqs.live);
	vgpu_userq_wake(&vdev->uqs);
	return true;
}

static void vgpu_userq_free(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	struct device *dev = vdev->drm.dev;

	if (uq->pinned)
		vgpu_as_unpin(uq->as);
	if (uq->ring)
		dma_free_coherent(dev, VGPU_UQ_RING_BYTES, uq->ring, uq->ring_dma);
	if (uq->cpl)
		dma_free_coherent(dev, VGPU_UQ_CPL_BYTES, uq->cpl, uq->cpl_dma);
	free_page((unsigned long)uq->shadow);
	vgpu_as_put(uq->as);
	if (uq->vm)
		vgpu_vm_put(uq->vm);
	kfree(uq);
}

/* Stop @uq and free it; it is already out of its file's table. */
static void vgpu_userq_destroy(struct vgpu_device *vdev, struct vgpu_userq *uq)
{
	bool end;
	int idx;

	mutex_lock(&vdev->uqs.lock);
	if (drm_dev_enter(&vdev->drm, &idx)) {
		end = vgpu_userq_detach(vdev, uq, true);
		drm_dev_exit(idx);
	} else {
		end = vgpu_userq_detach(vdev, uq, false);
	}
	mutex_unlock(&vdev->uqs.lock);
	/* what was unmapped while it could run may go now */
	if (end)
		vgpu_as_job_end(uq->as);
	vgpu_userq_free(vdev, uq);
}

/* ---- device events ---- */

/*
 * Interrupt: a user fence may have been written; with VGPU_IRQ_ERROR a
 * user queue may have stopped, which its slot notes for WAIT_USER_FENCE
 * (no register read on its path).
 */
void vgpu_userq_irq(struct vgpu_device *vdev, u32 status)
{
	struct vgpu_userqs *uqs = &vdev->uqs;
	u32 i;

	if (!uqs->n)
		return;
	for (i = 0; (status & VGPU_IRQ_ERROR) && i < uqs->n; i++)
		if (vgpu_uq_read(vdev, uqs->slot[i].hwq, VGPU_Q_STATUS) &
		    VGPU_QSTAT_STOPPED)
			atomic_set(&uqs->slot[i].stopped, 1);
	vgpu_userq_wake(uqs);
}

/*
 * Before a whole-device reset: no queue is mapped in or out until
 * vgpu_userq_device_reset(), so none runs after the reset unseen.
 */
void vgpu_userq_reset_begin(struct vgpu_device *vdev)
{
	/* (the mock devices of KUnit have no user queues nor their work) */
	if (vdev->uqs.n)
		atomic_inc(&vdev->uqs.resetting);
}

/*
 * After a whole-device reset: every user queue was stopped by it.  The
 * reset runs in a fence-signalling section, which may not take uqs->lock
 * (held around page-table allocations and inserts in the mappings'
 * faults): it only raises @resetting, which keeps queues from being
 * mapped in, and this work marks them LOST.  A map-in that was under way
 * as the device reset may have enabled its hardware queue again: stopped
 * here.
 */
static void vgpu_userq_reset_work(struct work_struct *work)
{
	struct vgpu_userqs *uqs = container_of(work, struct vgpu_userqs, reset_work);
	struct vgpu_device *vdev = container_of(uqs, struct vgpu_device, uqs);
	struct vgpu_userq *uq;
	unsigned long gidx;

	mutex_lock(&uqs->lock);
	xa_for_each(&uqs->all, gidx, uq) {
		if (uq->state != VGPU_USERQ_STATE_ACTIVE)
			continue;
		uq->state = VGPU_USERQ_STATE_LOST;
		uq->hw_error = VGPU_ERR_ABORTED;
		if (uq->slot < 0)
			vgpu_userq_shadow_fill(uq);
		else if (!vdev->gone)
			vgpu_userq_hw_stop(vdev, uq);
	}
	atomic_dec(&uqs->resetting);
	mutex_unlock(&uqs->lock);
	vgpu_userq_wake(uqs);
}

void vgpu_userq_device_reset(struct vgpu_device *vdev)
{
	if (vdev->uqs.n)
		queue_work(system_wq, &vdev->uqs.reset_work);
}

/* Device removal: stop every user queue; the files free them later. */
void vgpu_userq_fini(struct vgpu_device *vdev)
{
	struct vgpu_userqs *uqs = &vdev->uqs;
	struct vgpu_userq *uq;
	unsigned long gidx;

	if (!uqs->n)
		return;
	flush_work(&uqs->reset_work);
	for (;;) {
		struct vgpu_as *as = NULL;

		mutex_lock(&uqs->lock);
		xa_for_each(&uqs->all, gidx, uq) {
			if (uq->state == VGPU_USERQ_STATE_ACTIVE) {
				uq->state = VGPU_USERQ_STATE_LOST;
				uq->hw_error = VGPU_ERR_ABORTED;
			}
			/* the file may free @uq once unlocked: a reference of our own */
			if (vgpu_userq_detach(vdev, uq, true))
				as = vgpu_as_get(uq->as);
			break;
		}
		mutex_unlock(&uqs->lock);
		if (!as)
			break;
		vgpu_as_job_end(as);
		vgpu_as_put(as);
	}
	cancel_delayed_work_sync(&uqs->wdog);
}

/* File close: destroy its user queues (a killed process's too). */
void vgpu_file_userqs_fini(struct vgpu_file *vf)
{
	struct vgpu_device *vdev = vf->vdev;
	struct vgpu_userq *uq;
	unsigned long id;

	xa_for_each(&vf->userqs, id, uq) {
		mutex_lock(&vdev->uqs.lock);
		xa_erase(&vf->userqs, id);
		mutex_unlock(&vdev->uqs.lock);
		vgpu_userq_destroy(vdev, uq);
	}
	xa_destroy(&vf->userqs);
}

/*
 * debugfs `queues`: one line per hardware queue kept for user mode, then
 * one per user queue mapped out.
 */
void vgpu_userq_debugfs(struct vgpu_device *vdev, struct seq_file *m)
{
	static const char *const states[] = { "active", "error", "hung", "lost" };
	struct vgpu_userqs *uqs = &vdev->uqs;
	struct vgpu_userq *uq;
	unsigned long gidx;
	u32 i;

	if (!uqs->n)
		return;
	mutex_lock(&uqs->lock);
	for (i = 0; i < uqs->n; i++) {
		struct vgpu_uq_slot *s = &uqs->slot[i];

		uq = s->owner;
		seq_printf(m, "user queue slot %u (hw %u): status 0x%x head %u tail %u completed %u",
			   i, s->hwq, vgpu_uq_read(vdev, s->hwq, VGPU_Q_STATUS),
			   vgpu_uq_read(vdev, s->hwq, VGPU_Q_HEAD),
			   vgpu_uq_read(vdev, s->hwq, VGPU_Q_TAIL),
			   vgpu_uq_read(vdev, s->hwq, VGPU_Q_COMPLETED_LO));
		if (uq)
			seq_printf(m, " client %llu id %u asid %u %s error %u at %u%s\n",
				   uq->vf->client_id, uq->id, uq->as->asid,
				   states[uq->state], uq->hw_error, uq->error_index,
				   uq->draining ? " draining" : "");
		else
			seq_puts(m, " free\n");
	}
	xa_for_each(&uqs->all, gidx, uq) {
		if (uq->slot >= 0)
			continue;
		seq_printf(m, "user queue mapped out: head %u tail %u completed %llu client %llu id %u asid %u %s error %u at %u\n",
			   uq->head, vgpu_userq_shadow_tail(uq), uq->completed,
			   uq->vf->client_id, uq->id, uq->as->asid,
			   states[uq->state], uq->hw_error, uq->error_index);
	}
	mutex_unlock(&uqs->lock);
}

/* ---- mmap ---- */

static vm_fault_t vgpu_userq_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct drm_file *file = vma->vm_file->private_data;
	struct vgpu_file *vf = file->driver_priv;
	struct vgpu_device *vdev = vf->vdev;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned long page, npages, pfn;
	enum vgpu_uq_area area;
	struct vgpu_userq *uq;
	u32 gidx;
	int idx;

	if (!vgpu_uq_decode(vdev, vmf->pgoff, &gidx, &area, &page, &npages) ||
	    !drm_dev_enter(&vdev->drm, &idx))
		return VM_FAULT_SIGBUS;
	mutex_lock(&vdev->uqs.lock);
	uq = xa_load(&vdev->uqs.all, gidx);
	if (!uq || uq->vf != vf ||
	    (uintptr_t)vma->vm_private_data != (uintptr_t)uq->serial)
		goto out;
	switch (area) {
	case VGPU_UQ_RING:
		pfn = page_to_pfn(virt_to_page(uq->ring)) + page;
		break;
	case VGPU_UQ_CPL:
		pfn = page_to_pfn(virt_to_page(uq->cpl)) + page;
		break;
	default:
		/* the hardware doorbell while mapped in, else its shadow */
		if (uq->slot >= 0)
			pfn = PHYS_PFN(vdev->uqs.db_phys +
				       (resource_size_t)uq->hwq * VGPU_DOORBELL_PAGE);
		else
			pfn = page_to_pfn(virt_to_page(uq->shadow));
		break;
	}
	ret = vmf_insert_pfn(vma, vmf->address, pfn);
out:
	mutex_unlock(&vdev->uqs.lock);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct vgpu_userq_vm_ops = {
	.fault = vgpu_userq_fault,
};

int vgpu_userq_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;
	struct vgpu_file *vf = file->driver_priv;
	struct vgpu_device *vdev = vf->vdev;
	unsigned long page, npages;
	enum vgpu_uq_area area;
	struct vgpu_userq *uq;
	int ret = 0, idx;
	u32 gidx;

	if (!vgpu_uq_decode(vdev, vma->vm_pgoff, &gidx, &area, &page, &npages) ||
	    page || vma_pages(vma) > npages)
		return -EINVAL;
	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	mutex_lock(&vdev->uqs.lock);
	uq = xa_load(&vdev->uqs.all, gidx);
	if (!uq || uq->vf != vf) {
		ret = -EACCES;
		goto out;
	}
	if (area == VGPU_UQ_CPL) {
		if (vma->vm_flags & VM_WRITE) {
			ret = -EACCES;
			goto out;
		}
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	if (area == VGPU_UQ_DB) {
		vm_flags_set(vma, VM_IO);
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	}
	vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	vma->vm_ops = &vgpu_userq_vm_ops;
	/* this queue's, not a later one's in the same window */
	vma->vm_private_data = (void *)(uintptr_t)uq->serial;
out:
	mutex_unlock(&vdev->uqs.lock);
	drm_dev_exit(idx);
	return ret;
}

/* ---- ioctls ---- */

static struct vgpu_userq *vgpu_userq_alloc(struct vgpu_device *vdev)
{
	struct device *dev = vdev->drm.dev;
	struct vgpu_userq *uq;

	uq = vgpu_should_fail() ? NULL : kzalloc(sizeof(*uq), GFP_KERNEL_ACCOUNT);
	if (!uq)
		return NULL;
	/* page-backed (dma-direct, no IOMMU): mmap inserts their pfns */
	uq->ring = dma_alloc_coherent(dev, VGPU_UQ_RING_BYTES, &uq->ring_dma,
				      GFP_KERNEL);
	uq->cpl = dma_alloc_coherent(dev, VGPU_UQ_CPL_BYTES, &uq->cpl_dma,
				     GFP_KERNEL);
	uq->shadow = (u32 *)get_zeroed_page(GFP_KERNEL_ACCOUNT);
	uq->slot = -1;
	return uq;
}

int vgpu_ioctl_userq_create(struct drm_device *dev, void *data,
			    struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_userqs *uqs = &vdev->uqs;
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_userq_create *args = data;
	struct vgpu_userq *uq;
	struct vgpu_vm *vm = NULL;
	int ret, idx, slot;

	if (args->flags & ~VGPU_USERQ_CREATE_FLAGS ||
	    args->priority > VGPU_QUEUE_PRIORITY_REALTIME)
		return -EINVAL;
	if (args->priority > VGPU_QUEUE_PRIORITY_NORMAL && !capable(CAP_SYS_NICE))
		return -EPERM;
	if (!uqs->n)
		return -ENODEV;
	if (args->vm_id != VGPU_VM_DEFAULT) {
		vm = vgpu_vm_lookup(vf, args->vm_id);
		if (!vm)
			return -ENOENT;
	}
	uq = vgpu_userq_alloc(vdev);
	if (!uq) {
		if (vm)
			vgpu_vm_put(vm);
		return -ENOMEM;
	}
	uq->vf = vf;
	uq->uid = current_euid();
	uq->vm = vm;
	uq->as = vgpu_as_get(vm ? vgpu_vm_as(vm) : vf->as);
	uq->priority = args->priority;
	if (!uq->ring || !uq->cpl || !uq->shadow) {
		vgpu_userq_free(vdev, uq);
		return -ENOMEM;
	}
	if (!drm_dev_enter(dev, &idx)) {
		vgpu_userq_free(vdev, uq);
		return -ENODEV;
	}
	mutex_lock(&uqs->lock);
	ret = -EMFILE;
	if (vf->nuserqs >= VGPU_MAX_USERQ_PER_FILE)
		goto err_unlock;
	ret = vgpu_uq_user_get(uqs, uq->uid);
	if (ret)
		goto err_unlock;
	ret = xa_alloc(&uqs->all, &uq->gidx, uq, XA_LIMIT(0, VGPU_UQ_WINDOWS - 1),
		       GFP_KERNEL);
	if (ret) {
		vgpu_uq_user_put(uqs, uq->uid);
		ret = ret == -EBUSY ? -ENOSPC : ret;
		goto err_unlock;
	}
	ret = xa_alloc_cyclic(&vf->userqs, &uq->id, uq, XA_LIMIT(1, U32_MAX),
			      &vf->next_userq_id, GFP_KERNEL);
	if (ret < 0) {
		xa_erase(&uqs->all, uq->gidx);
		vgpu_uq_user_put(uqs, uq->uid);
		goto err_unlock;
	}
	vf->nuserqs++;
	uq->serial = ++uqs->serial;
	uq->live = true;
	uq->state = VGPU_USERQ_STATE_ACTIVE;
	uq->since = ktime_get_ns();
	vgpu_userq_shadow_fill(uq);
	/* the device may use the AS from now on: unmaps defer, TLBs flush */
	vgpu_as_job_begin(uq->as);
	atomic_inc(&uq->as->userqs);
	/* the ring and records are zeroed before a queue can take them */
	memset(uq->ring, 0, VGPU_UQ_RING_BYTES);
	memset(uq->cpl, 0, VGPU_UQ_CPL_BYTES);
	wmb();
	/* a free slot: mapped in at once, else when it has work */
	for (slot = 0; slot < uqs->n; slot++) {
		if (!uqs->slot[slot].owner) {
			vgpu_userq_map_in(vdev, uq, slot);
			break;
		}
	}
	if (atomic_inc_return(&uqs->live) == 1 || uq->slot < 0)
		mod_delayed_work(system_wq, &uqs->wdog,
				 uq->slot < 0 ? 1 : VGPU_UQ_WDOG_PERIOD);
	/*
	 * Under the lock: once it is dropped, a USERQ_DESTROY of the id
	 * (guessable) may free @uq.
	 */
	args->hw_queue = uq->slot >= 0 ? uq->hwq : VGPU_USERQ_HW_NONE;
	args->queue_id = uq->id;
	args->entries = VGPU_USERQ_ENTRIES;
	args->ring_offset = vgpu_uq_offset(uq->gidx, VGPU_UQ_RING_PGOFF);
	args->cpl_offset = vgpu_uq_offset(uq->gidx, VGPU_UQ_CPL_PGOFF);
	args->doorbell_offset = vgpu_uq_offset(uq->gidx, VGPU_UQ_DB_PGOFF);
	mutex_unlock(&uqs->lock);
	drm_dev_exit(idx);
	return 0;

err_unlock:
	mutex_unlock(&uqs->lock);
	drm_dev_exit(idx);
	vgpu_userq_free(vdev, uq);
	return ret;
}

int vgpu_ioctl_userq_destroy(struct drm_device *dev, void *data,
			     struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_userq_destroy *args = data;
	struct vgpu_userq *uq;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&vdev->uqs.lock);
	uq = xa_erase(&vf->userqs, args->queue_id);
	if (uq)
		vf->nuserqs--;
	mutex_unlock(&vdev->uqs.lock);
	if (!uq)
		return -ENOENT;
	vgpu_userq_destroy(vdev, uq);
	return 0;
}

int vgpu_ioctl_userq_get_state(struct drm_device *dev, void *data,
			       struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_userq_get_state *args = data;
	struct vgpu_userq *uq;
	int ret = 0, idx;

	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	/* a device reset's LOST is there to read once the reset is over */
	flush_work(&vdev->uqs.reset_work);
	mutex_lock(&vdev->uqs.lock);
	uq = xa_load(&vf->userqs, args->queue_id);
	if (!uq) {
		ret = -ENOENT;
		goto out;
	}
	vgpu_userq_refresh(vdev, uq);
	if (uq->slot >= 0) {	/* else: as it was when it was mapped out */
		uq->completed = vgpu_uq_read_completed(vdev, uq->hwq);
		uq->head = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_HEAD);
		uq->tail = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_TAIL);
	} else if (uq->live) {
		uq->tail = vgpu_userq_shadow_tail(uq);
	}
	args->state = uq->state;
	args->hw_error = uq->hw_error;
	args->error_index = uq->error_index;
	args->completed = uq->completed;
	args->head = uq->head;
	args->tail = uq->tail;
out:
	mutex_unlock(&vdev->uqs.lock);
	drm_dev_exit(idx);
	return ret;
}

/*
 * The queue @id of @vf stopped: -EIO; gone: -ENOENT; else 0.  Reads no
 * register unless the interrupt handler saw it stop or @full (a wait that
 * no interrupt ended: one may have been lost or held back).  A queue
 * mapped out with work gets the scheduler's next pass now.
 */
int vgpu_userq_check(struct vgpu_device *vdev, struct vgpu_file *vf, u32 id,
		     bool full)
{
	struct vgpu_userq *uq;
	int ret = 0, idx;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return -ENODEV;
	mutex_lock(&vdev->uqs.lock);
	uq = xa_load(&vf->userqs, id);
	if (!uq) {
		ret = -ENOENT;
	} else {
		if (uq->slot >= 0 &&
		    (full || atomic_read(&vdev->uqs.slot[uq->slot].stopped)))
			vgpu_userq_refresh(vdev, uq);
		if (uq->state != VGPU_USERQ_STATE_ACTIVE)
			ret = -EIO;
		else if (uq->live && vgpu_userq_waits(uq))
			mod_delayed_work(system_wq, &vdev->uqs.wdog, 0);
	}
	mutex_unlock(&vdev->uqs.lock);
	drm_dev_exit(idx);
	return ret;
}

#if IS_ENABLED(CONFIG_DRM_VGPU_KUNIT_TEST)
#include "tests/vgpu_userq_test.c"
#endif
