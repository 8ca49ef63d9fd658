// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko: the user-mode queues' scheduler (see vgpu_userq.c for the
 * whole design).  More user queues than hardware slots: each pass maps
 * waiting queues in, by priority and then by the time they have waited,
 * taking a slot from a queue whose timeslice (userq_timeslice_ms) is over
 * or from a lower priority; a queue is mapped out at its next command
 * boundary (HOLD, then drain).  The same pass is the watchdog: a queue
 * with work that completes nothing for userq_timeout_ms of time mapped
 * in is stopped (HUNG).
 */
#include <linux/workqueue.h>
#include <drm/drm_drv.h>
#include "vgpu_userq.h"

static unsigned int vgpu_userq_timeslice_ms = 10;
module_param_named(userq_timeslice_ms, vgpu_userq_timeslice_ms, uint, 0644);
MODULE_PARM_DESC(userq_timeslice_ms,
		 "a user-mode queue keeps its hardware queue this long while another of its priority waits (default 10)");

static unsigned int vgpu_userq_timeout_ms;
module_param_named(userq_timeout_ms, vgpu_userq_timeout_ms, uint, 0644);
MODULE_PARM_DESC(userq_timeout_ms,
		 "a user-mode queue with work that completes nothing this long is stopped (0: timeout_ms)");

static unsigned int vgpu_userq_timeout(void)
{
	unsigned int ms = READ_ONCE(vgpu_userq_timeout_ms);

	return ms ? ms : vgpu_timeout_ms;
}

/* A mapped-out queue that waits for a slot. */
bool vgpu_userq_waits(const struct vgpu_userq *uq)
{
	return uq->slot < 0 && uq->state == VGPU_USERQ_STATE_ACTIVE &&
		vgpu_userq_shadow_tail(uq) != uq->head;
}

/* @a goes before @b: higher priority, then waiting longer. */
static bool vgpu_userq_before(const struct vgpu_userq *a,
			      const struct vgpu_userq *b)
{
	if (a->priority != b->priority)
		return a->priority > b->priority;
	return a->since < b->since;
}

/*
 * The slot whose queue gives way to @w: a free one first, then one whose
 * queue is stopped, idle, of lower priority (the lowest), or of @w's and
 * past its timeslice.  -1 for none.  Draining queues are already going.
 */
static int vgpu_userq_victim(struct vgpu_device *vdev,
			     const struct vgpu_userq *w, u64 now)
{
	struct vgpu_userqs *uqs = &vdev->uqs;
	u64 slice = (u64)READ_ONCE(vgpu_userq_timeslice_ms) * NSEC_PER_MSEC;
	int best = -1, best_rank = 0;
	u32 i;

	for (i = 0; i < uqs->n; i++) {
		struct vgpu_userq *uq = uqs->slot[i].owner;
		int rank;

		if (!uq)
			return i;
		if (uq->draining)
			continue;
		vgpu_userq_refresh(vdev, uq);
		if (uq->state != VGPU_USERQ_STATE_ACTIVE)
			rank = 4;
		else if (vgpu_uq_read(vdev, uq->hwq, VGPU_Q_STATUS) & VGPU_QSTAT_IDLE)
			rank = 3;
		else if (uq->priority < w->priority)
			rank = 2;
		else if (uq->priority == w->priority && now - uq->since >= slice)
			rank = 1;
		else
			continue;
		if (rank > best_rank ||
		    (rank == best_rank && uq->priority < uqs->slot[best].owner->priority)) {
			best = i;
			best_rank = rank;
		}
	}
	return best;
}

/*
 * One pass: finish the map-outs that reached a command boundary, then
 * give slots to waiting queues, best first.  True while a queue is
 * mapped out or draining (the next pass comes in a jiffy).
 * uqs->lock held, the device present.
 */
static bool vgpu_userq_schedule(struct vgpu_device *vdev, u64 now)
{
	struct vgpu_userqs *uqs = &vdev->uqs;
	struct vgpu_userq *uq, *w;
	unsigned long gidx;
	u32 i, pending = 0, served = 0;
	bool busy = false;
	int slot;

	for (i = 0; i < uqs->n; i++) {
		uq = uqs->slot[i].owner;
		if (!uq || !uq->draining)
			continue;
		vgpu_userq_refresh(vdev, uq);
		if (uq->state != VGPU_USERQ_STATE_ACTIVE ||
		    !(vgpu_uq_read(vdev, uq->hwq, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY))
			vgpu_userq_map_out(vdev, uq);
		else
			pending++;	/* a slot some waiter will have */
	}
	for (;;) {
		/* the best waiter not yet served this pass */
		w = NULL;
		xa_for_each(&uqs->all, gidx, uq) {
			if (uq->slot < 0 && uq->state == VGPU_USERQ_STATE_ACTIVE)
				busy = true;
			if (!vgpu_userq_waits(uq) || uq->since > now || uq->skip)
				continue;
			if (!w || vgpu_userq_before(uq, w))
				w = uq;
		}
		if (!w)
			break;
		if (served < pending) {
			/* it has a draining slot: next pass */
			served++;
			w->skip = true;
			continue;
		}
		slot = vgpu_userq_victim(vdev, w, now);
		if (slot < 0)
			break;
		uq = uqs->slot[slot].owner;
		if (!uq || vgpu_userq_drain(vdev, uq)) {
			if (!vgpu_userq_map_in(vdev, w, slot))
				w->skip = true;	/* no ASID now */
		} else {
			pending++;
			served++;
			w->skip = true;
		}
	}
	xa_for_each(&uqs->all, gidx, uq) {
		uq->skip = false;
		if (uq->draining)
			busy = true;
	}
	return busy;
}

/*
 * The watchdog's look at @uq, mapped in: stop it when it has had work
 * and completed nothing for the timeout, counting only time mapped in.
 * True when it stopped it.
 */
static bool vgpu_userq_check_hang(struct vgpu_device *vdev,
				  struct vgpu_userq *uq, u64 now)
{
	u32 st = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_STATUS);
	u64 done = vgpu_uq_read_completed(vdev, uq->hwq);

	/*
	 * Time runs from the first pass that sees it busy, not from the
	 * last that saw it idle: its owner rings the doorbell without the
	 * kernel, up to a period after that pass, and a queue must have had
	 * its whole userq_timeout_ms (in ns: a jiffy-rounded start stopped
	 * one 0.3 ms early).
	 */
	if (st & VGPU_QSTAT_IDLE) {
		uq->wd_last = 0;
		uq->wd_stall = 0;
		return false;
	}
	if (done != uq->wd_completed) {
		uq->wd_completed = done;
		uq->wd_stall = 0;
		uq->wd_last = now;
		return false;
	}
	if (uq->wd_last)
		uq->wd_stall += now - uq->wd_last;
	uq->wd_last = now;
	if (uq->wd_stall < (u64)vgpu_userq_timeout() * NSEC_PER_MSEC)
		return false;
	/* hung: stop it where it stands, the others never notice */
	uq->error_index = vgpu_uq_read(vdev, uq->hwq, VGPU_Q_HEAD);
	vgpu_userq_hw_stop(vdev, uq);
	uq->state = VGPU_USERQ_STATE_HUNG;
	uq->hw_error = VGPU_ERR_ABORTED;
	atomic_inc(&vdev->reset_count);
	atomic_inc(&uq->vf->reset_count);
	vgpu_warn(vdev, "client %llu user queue %u (hw %u): no progress for %u ms, stopped\n",
		  uq->vf->client_id, uq->id, uq->hwq, vgpu_userq_timeout());
	return true;
}

void vgpu_userq_watchdog(struct work_struct *work)
{
	struct vgpu_device *vdev = container_of(to_delayed_work(work),
						struct vgpu_device, uqs.wdog);
	struct vgpu_userqs *uqs = &vdev->uqs;
	bool woke = false, fast;
	u64 now;
	int idx;
	u32 i;

	if (!drm_dev_enter(&vdev->drm, &idx))
		return;
	mutex_lock(&uqs->lock);
	now = ktime_get_ns();
	fast = vgpu_userq_schedule(vdev, now);
	for (i = 0; i < uqs->n; i++) {
		struct vgpu_userq *uq = uqs->slot[i].owner;

		if (!uq)
			continue;
		vgpu_userq_refresh(vdev, uq);
		if (uq->state != VGPU_USERQ_STATE_ACTIVE || uq->draining)
			continue;
		woke |= vgpu_userq_check_hang(vdev, uq, now);
	}
	if (atomic_read(&uqs->live))
		schedule_delayed_work(&uqs->wdog, fast ? 1 : VGPU_UQ_WDOG_PERIOD);
	mutex_unlock(&uqs->lock);
	drm_dev_exit(idx);
	if (woke)
		vgpu_userq_wake(uqs);
}
