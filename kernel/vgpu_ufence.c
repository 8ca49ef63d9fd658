// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko: DRM_IOCTL_VGPU_WAIT_USER_FENCE (uapi/vgpu_drm.h "User-mode
 * queues").  A user queue makes no dma_fence: its commands release 64-bit
 * values in the process's memory, and this ioctl waits until such a
 * value satisfies a comparison, with a deadline.  It reads the value with
 * get_user() (the process's own memory, never pinned), polls it for
 * ufence_spin_us first, then sleeps on the user-queue wait queue
 * (vdev->uqs.wq), which the user-queue interrupt, a queue's stop and the
 * scheduler wake (vgpu_userq.c), with a 1 ms tick as the floor.  With a
 * queue named, a stopped queue ends the wait (-EIO) and a mapped-out one
 * with work gets the scheduler's next pass (vgpu_userq_check()).
 */
#include <linux/sched/signal.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include "vgpu_drv.h"

static_assert(sizeof(struct drm_vgpu_wait_user_fence) == 48);

static unsigned int vgpu_ufence_spin_us = 50;
module_param_named(ufence_spin_us, vgpu_ufence_spin_us, uint, 0644);
MODULE_PARM_DESC(ufence_spin_us,
		 "WAIT_USER_FENCE polls the value this long before it sleeps (default 50, 0: never)");

/*
 * Poll the value for up to ufence_spin_us before the first sleep, as
 * i915's __i915_spin_request() does for a request about to complete: a
 * short job ends within that, and the waiter then returns without the
 * interrupt's wake-up and two context switches.  The poll ends at once on
 * a signal, when another task wants this CPU, at the deadline, and when a
 * user-queue interrupt or stop came (the caller's loop then looks at the
 * queue).  True once the condition holds.
 */
static bool vgpu_ufence_spin(struct vgpu_device *vdev,
			     const struct drm_vgpu_wait_user_fence *args,
			     u64 __user *uaddr, int seq)
{
	u64 now = ktime_get_ns(), v;
	u64 end = now + READ_ONCE(vgpu_ufence_spin_us) * NSEC_PER_USEC;

	if (args->timeout_ns > 0 && end > (u64)args->timeout_ns)
		end = args->timeout_ns;
	while (now < end && !need_resched() && !signal_pending(current) &&
	       atomic_read(&vdev->uqs.seq) == seq) {
		cpu_relax();
		if (get_user(v, uaddr))
			return false;	/* the caller's next read says -EFAULT */
		if (vgpu_ufence_satisfied(v, args->op, args->value, args->mask))
			return true;
		now = ktime_get_ns();
	}
	return false;
}

int vgpu_ioctl_wait_user_fence(struct drm_device *dev, void *data,
			       struct drm_file *file)
{
	struct vgpu_device *vdev = to_vgpu(dev);
	struct vgpu_file *vf = file->driver_priv;
	struct drm_vgpu_wait_user_fence *args = data;
	u64 __user *uaddr = u64_to_user_ptr(args->addr);
	bool quiet = false;	/* the last wait ended with no interrupt */
	bool spun = false, armed = false, tried_arm = false;
	long left;
	int ret;
	u64 v;

	if (args->flags & ~VGPU_UFENCE_FLAGS || args->pad ||
	    args->op > VGPU_UFENCE_OP_MAX || args->addr % 8)
		return -EINVAL;
	for (;;) {
		int seq = atomic_read(&vdev->uqs.seq);

		if (get_user(v, uaddr)) {
			ret = -EFAULT;
			break;
		}
		ret = 0;
		if (vgpu_ufence_satisfied(v, args->op, args->value, args->mask))
			break;
		if (args->queue_id) {
			ret = vgpu_userq_check(vdev, vf, args->queue_id, quiet);
			if (ret)
				break;
		}
		ret = -ENODEV;
		if (drm_dev_is_unplugged(dev))
			break;
		ret = -ETIME;
		left = vgpu_jiffies_until(args->timeout_ns);
		if (!left)
			break;
		ret = -ERESTARTSYS;
		if (signal_pending(current))
			break;
		if (!spun) {
			spun = true;
			ret = 0;
			if (vgpu_ufence_spin(vdev, args, uaddr, seq))
				break;
			continue;
		}
		if (!tried_arm) {	/* then look at the value once more */
			tried_arm = true;
			armed = vgpu_irq_user_arm(vdev);
			continue;
		}
		/* woken by a user-queue interrupt or a stop; else a tick */
		ret = wait_event_interruptible_timeout(vdev->uqs.wq,
				atomic_read(&vdev->uqs.seq) != seq,
				min_t(long, left, msecs_to_jiffies(1)));
		if (ret < 0)
			break;
		quiet = !ret;
	}
	if (armed)
		vgpu_irq_user_disarm(vdev);
	return ret;
}
