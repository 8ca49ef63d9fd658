// SPDX-License-Identifier: MIT
/*
 * libvgpu syncobjs (DRM's, binary and timeline: create, signal, wait,
 * query) and queue objects (scheduler queues with a priority, and the
 * state of any queue, user-mode ones included).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "vgpu_priv.h"

int vgpu_syncobj_new(struct vgpu_device *dev, uint32_t flags,
		     struct vgpu_syncobj **out)
{
	struct drm_syncobj_create c = { 0 };
	struct vgpu_syncobj *s;
	int ret;

	if (!out || flags & ~VGPU_SYNCOBJ_SIGNALED)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (flags & VGPU_SYNCOBJ_SIGNALED)
		c.flags = DRM_SYNCOBJ_CREATE_SIGNALED;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_SYNCOBJ_CREATE, &c);
	if (ret) {
		free(s);
		return ret;
	}
	vgpu_dev_get(dev);
	s->dev = dev;
	s->handle = c.handle;
	*out = s;
	return 0;
}

int vgpu_queue_new(struct vgpu_device *dev, uint32_t priority,
		   struct vgpu_queue **out)
{
	struct drm_vgpu_queue_create c = { .priority = priority };
	struct vgpu_queue *q;
	int ret;

	if (!out)
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_QUEUE_CREATE, &c);
	if (ret) {
		free(q);
		return ret;
	}
	vgpu_dev_get(dev);
	q->dev = dev;
	q->id = c.queue_id;
	*out = q;
	return 0;
}

void vgpu_queue_free(struct vgpu_queue *q)
{
	struct drm_vgpu_queue_destroy d;

	if (!q)
		return;
	if (q->uq) {
		/* destroyed once its jobs and pages let go of it too */
		vgpu_userq_put(q->uq);
	} else {
		d = (struct drm_vgpu_queue_destroy){ .queue_id = q->id };
		vgpu_dev_ioctl(q->dev, DRM_IOCTL_VGPU_QUEUE_DESTROY, &d);
	}
	vgpu_dev_put(q->dev);
	free(q);
}

uint32_t vgpu_queue_id(const struct vgpu_queue *q)
{
	return q ? q->id : VGPU_QUEUE_DEFAULT;
}

/*
 * A user queue's state in queue-object terms: stopped is BANNED, with the
 * errno its jobs got (EIO for an error, ETIMEDOUT for a hang the driver
 * stopped, ENODEV for a device reset).
 */
static int user_queue_state(struct vgpu_userq *uq, struct vgpu_queue_state *st)
{
	static const uint32_t reason[] = {
		[VGPU_USERQ_STATE_ACTIVE] = 0,
		[VGPU_USERQ_STATE_ERROR] = EIO,
		[VGPU_USERQ_STATE_HUNG] = ETIMEDOUT,
		[VGPU_USERQ_STATE_LOST] = ENODEV,
	};
	struct drm_vgpu_userq_get_state g = { .queue_id = uq->id };
	int ret = vgpu_dev_ioctl(uq->dev, DRM_IOCTL_VGPU_USERQ_GET_STATE, &g);

	if (ret)
		return ret;
	pthread_mutex_lock(&uq->lock);
	*st = (struct vgpu_queue_state){
		.state = g.state == VGPU_USERQ_STATE_ACTIVE ? VGPU_QUEUE_STATE_ACTIVE :
							       VGPU_QUEUE_STATE_BANNED,
		.ban_reason = g.state < 4 ? reason[g.state] : EIO,
		.hw_queue = uq->hw_queue,
		.submitted = uq->seq,
		.completed = *uq->fence_map,
	};
	pthread_mutex_unlock(&uq->lock);
	return 0;
}

int vgpu_queue_state(struct vgpu_device *dev, const struct vgpu_queue *q,
		     struct vgpu_queue_state *st)
{
	struct drm_vgpu_queue_get_state g = { .queue_id = vgpu_queue_id(q) };
	int ret;

	if (!st || (q && q->dev != dev))
		return -EINVAL;
	ret = vgpu_dev_check(dev);
	if (ret)
		return ret;
	if (q && q->uq)
		return user_queue_state(q->uq, st);
	ret = vgpu_dev_ioctl(dev, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &g);
	if (ret)
		return ret;
	*st = (struct vgpu_queue_state){
		.state = g.state,
		.priority = g.priority,
		.guilty_resets = g.guilty_resets,
		.innocent_resets = g.innocent_resets,
		.ban_reason = g.ban_reason,
		.hw_queue = g.hw_queue,
		.submitted = g.submitted,
		.completed = g.completed,
	};
	return 0;
}

void vgpu_syncobj_free(struct vgpu_syncobj *s)
{
	struct drm_syncobj_destroy d;

	if (!s)
		return;
	d = (struct drm_syncobj_destroy){ .handle = s->handle };
	vgpu_dev_ioctl(s->dev, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	vgpu_dev_put(s->dev);
	free(s);
}

uint32_t vgpu_syncobj_handle(const struct vgpu_syncobj *s)
{
	return s->handle;
}

int vgpu_syncobj_signal(struct vgpu_syncobj *s, uint64_t point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&s->handle,
		.points = (uintptr_t)&point,
		.count_handles = 1,
	};

	if (!point)
		return vgpu_dev_ioctl(s->dev, DRM_IOCTL_SYNCOBJ_SIGNAL,
				      &(struct drm_syncobj_array){
					      .handles = (uintptr_t)&s->handle,
					      .count_handles = 1,
				      });
	return vgpu_dev_ioctl(s->dev, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
}

int vgpu_sync_wait(struct vgpu_device *dev, uint32_t handle, uint64_t point,
		   int64_t timeout_ns)
{
	struct drm_syncobj_timeline_wait w = {
		.handles = (uintptr_t)&handle,
		.points = (uintptr_t)&point,
		.timeout_nsec = vgpu_abs_timeout(timeout_ns),
		.count_handles = 1,
		.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
	};
	int ret;

	do {
		if (!point)
			ret = vgpu_dev_ioctl(dev, DRM_IOCTL_SYNCOBJ_WAIT,
					     &(struct drm_syncobj_wait){
						     .handles = (uintptr_t)&handle,
						     .timeout_nsec = w.timeout_nsec,
						     .count_handles = 1,
						     .flags = w.flags,
					     });
		else
			ret = vgpu_dev_ioctl(dev, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
	} while (ret == -ETIME && vgpu_deadline_ahead(w.timeout_nsec));
	return ret;
}

int vgpu_syncobj_wait(struct vgpu_syncobj *s, uint64_t point,
		      int64_t timeout_ns)
{
	return vgpu_sync_wait(s->dev, s->handle, point, timeout_ns);
}

int vgpu_syncobj_query(struct vgpu_syncobj *s, uint64_t *point)
{
	struct drm_syncobj_timeline_array a = {
		.handles = (uintptr_t)&s->handle,
		.points = (uintptr_t)point,
		.count_handles = 1,
	};

	if (!point)
		return -EINVAL;
	return vgpu_dev_ioctl(s->dev, DRM_IOCTL_SYNCOBJ_QUERY, &a);
}

