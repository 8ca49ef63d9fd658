/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgpu.ko's user-mode queues, inside: what vgpu_userq.c (the queues,
 * their mappings and ioctls) and vgpu_userq_sched.c (mapping them in and
 * out of the hardware slots, the watchdog) share.  All under
 * vdev->uqs.lock unless said otherwise.
 */
#ifndef VGPU_USERQ_H
#define VGPU_USERQ_H

#include "vgpu_drv.h"

/* the scheduler's and the watchdog's period when nothing is waiting */
#define VGPU_UQ_WDOG_PERIOD (HZ / 10)

static inline u32 vgpu_uq_read(struct vgpu_device *vdev, u32 hwq, u32 reg)
{
	return vgpu_read(vdev, VGPU_REG_QUEUE(hwq) + reg);
}

static inline void vgpu_uq_write(struct vgpu_device *vdev, u32 hwq, u32 reg, u32 val)
{
	vgpu_write(vdev, VGPU_REG_QUEUE(hwq) + reg, val);
}

static inline u64 vgpu_uq_read_completed(struct vgpu_device *vdev, u32 hwq)
{
	return vgpu_uq_read(vdev, hwq, VGPU_Q_COMPLETED_LO) |
		(u64)vgpu_uq_read(vdev, hwq, VGPU_Q_COMPLETED_HI) << 32;
}

void vgpu_userq_refresh(struct vgpu_device *vdev, struct vgpu_userq *uq);
void vgpu_userq_wake(struct vgpu_userqs *uqs);
u32 vgpu_userq_shadow_tail(const struct vgpu_userq *uq);
void vgpu_userq_map_out(struct vgpu_device *vdev, struct vgpu_userq *uq);
bool vgpu_userq_map_in(struct vgpu_device *vdev, struct vgpu_userq *uq,
		       u32 i);
void vgpu_userq_hw_stop(struct vgpu_device *vdev, struct vgpu_userq *uq);
bool vgpu_userq_drain(struct vgpu_device *vdev, struct vgpu_userq *uq);
bool vgpu_userq_waits(const struct vgpu_userq *uq);

#endif
