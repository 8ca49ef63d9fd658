/* SPDX-License-Identifier: MIT */
/*
 * sim backend: DRM syncobjs, with the checks and errnos of Linux 6.1's
 * drivers/gpu/drm/drm_syncobj.c.
 *
 * Fences in the sim have always signalled (jobs complete inside SUBMIT,
 * the host signals with signalled stubs), so a syncobj reduces to: no
 * fence, a plain fence (binary), or the head of a dma_fence_chain
 * (timeline) with its seqno and prev_seqno.  dma_fence_chain_init() and
 * dma_fence_chain_find_seqno() then come down to:
 *
 *  - adding point P after a chain head of seqno S: P > S continues the
 *    chain (seqno P, prev_seqno S); otherwise a new context begins with
 *    seqno max(S, P) (P after a plain fence or none), prev_seqno 0;
 *  - point 0 is available once there is any fence; point P > 0 once the
 *    fence is a chain with seqno >= P (else -EINVAL, or a wait for
 *    submission).  The fence found is the head when prev_seqno < P, and
 *    otherwise a signalled stub: the older links were garbage-collected;
 *  - QUERY reports the head's seqno (0 without a chain).
 *
 * A wait with WAIT_FOR_SUBMIT (or WAIT_AVAILABLE) registers as a waiter;
 * whoever installs a fence marks the entries it satisfies, as DRM's
 * cb_list callbacks do, and wakes the device's condition variable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_priv.h"

/* DRM_SYNCOBJ_WAIT_FOR_SUBMIT_TIMEOUT of drm_syncobj_find_fence() */
#define SIM_FIND_FENCE_TIMEOUT_NS 5000000000ll

/* sizeof(struct syncobj_wait_entry) on x86-64, for the kcalloc() limit */
#define SIM_WAIT_ENTRY_SIZE 64u

/* Arrays of up to this many handles live on the stack. */
#define SIM_ARRAY_STACK 16u

/* The fence a lookup finds (see the top of the file). */
struct sim_fence {
	bool chain;
	uint64_t seqno;
	uint64_t prev_seqno;
};

static int64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* ---- handles ---- */

struct sim_syncobj *vgpu_sim_syncobj_lookup(struct vgpu_sim *sim,
					    uint32_t handle)
{
	if (!handle || handle > sim->nsyncobjs)
		return NULL;
	return sim->syncobjs[handle - 1];
}

static void sim_syncobj_put(struct sim_syncobj *s)
{
	if (!--s->refs)
		free(s);
}

static int sim_syncobj_new(struct vgpu_sim *sim, struct sim_syncobj **out,
			   uint32_t *handle)
{
	struct sim_syncobj *s, **t;
	uint32_t i;

	for (i = 0; i < sim->nsyncobjs; i++)
		if (!sim->syncobjs[i])
			break;
	if (i == sim->nsyncobjs) {
		if (sim->nsyncobjs == INT32_MAX)
			return -ENOSPC;
		if (sim->nsyncobjs == sim->syncobjs_cap) {
			uint32_t cap = sim->syncobjs_cap ? 2 * sim->syncobjs_cap : 16;

			t = realloc(sim->syncobjs, cap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			sim->syncobjs = t;
			sim->syncobjs_cap = cap;
		}
		sim->syncobjs[sim->nsyncobjs++] = NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->refs = 1;
	sim->syncobjs[i] = s;
	*handle = i + 1;
	*out = s;
	return 0;
}

void vgpu_sim_syncobjs_fini(struct vgpu_sim *sim)
{
	for (uint32_t i = 0; i < sim->nsyncobjs; i++)
		free(sim->syncobjs[i]);
	free(sim->syncobjs);
	sim->syncobjs = NULL;
	sim->nsyncobjs = sim->syncobjs_cap = 0;
}

/* ---- fences ---- */

/* dma_fence_chain_find_seqno() on @s's fence: 0 and *@f, or -EINVAL. */
static int sim_find_seqno(const struct sim_syncobj *s, uint64_t point,
			  struct sim_fence *f)
{
	if (!s->fence)
		return -EINVAL;
	if (!point) {
		*f = (struct sim_fence){ s->chain, s->seqno, s->prev_seqno };
		return 0;
	}
	if (!s->chain || s->seqno < point)
		return -EINVAL;
	if (s->prev_seqno < point)
		*f = (struct sim_fence){ true, s->seqno, s->prev_seqno };
	else
		*f = (struct sim_fence){ false, 0, 0 }; /* a stub */
	return 0;
}

/*
 * @s gained a fence: satisfy the waiters it can, wake them (the
 * callbacks of drm_syncobj_replace_fence() and drm_syncobj_add_point()).
 */
static void sim_syncobj_changed(struct vgpu_sim *sim, struct sim_syncobj *s)
{
	struct sim_fence f;

	for (struct sim_waiter *w = sim->waiters; w; w = w->next)
		for (uint32_t i = 0; i < w->count; i++)
			if (w->objs[i] == s && !w->got[i] &&
			    !sim_find_seqno(s, w->points[i], &f))
				w->got[i] = true;
	if (sim->sleepers) /* none waits on the host: the common launch */
		pthread_cond_broadcast(&sim->cond);
}

static void sim_syncobj_set(struct vgpu_sim *sim, struct sim_syncobj *s,
			    const struct sim_fence *f)
{
	s->fence = true;
	s->chain = f->chain;
	s->seqno = f->seqno;
	s->prev_seqno = f->prev_seqno;
	sim_syncobj_changed(sim, s);
}

void vgpu_sim_syncobj_replace(struct vgpu_sim *sim, struct sim_syncobj *s)
{
	sim_syncobj_set(sim, s, &(struct sim_fence){ false, 0, 0 });
}

void vgpu_sim_syncobj_add_point(struct vgpu_sim *sim, struct sim_syncobj *s,
				uint64_t point)
{
	struct sim_fence f = { true, point, 0 };

	if (s->fence && s->chain) {
		if (point > s->seqno)
			f.prev_seqno = s->seqno; /* the same context */
		else
			f.seqno = s->seqno; /* max(prev seqno, point) */
	}
	sim_syncobj_set(sim, s, &f);
}

int vgpu_sim_syncobj_find_fence(struct vgpu_sim *sim, uint32_t handle,
				uint64_t point)
{
	struct sim_syncobj *s = vgpu_sim_syncobj_lookup(sim, handle);
	struct sim_fence f;

	if (!s)
		return -ENOENT;
	return sim_find_seqno(s, point, &f);
}

/* ---- waiting ---- */

static void sim_waiter_add(struct vgpu_sim *sim, struct sim_waiter *w)
{
	w->next = sim->waiters;
	sim->waiters = w;
}

static void sim_waiter_del(struct vgpu_sim *sim, struct sim_waiter *w)
{
	for (struct sim_waiter **p = &sim->waiters; *p; p = &(*p)->next) {
		if (*p == w) {
			*p = w->next;
			return;
		}
	}
}

/* Sleep until @deadline_ns (CLOCK_MONOTONIC) or a syncobj changes. */
static void sim_sleep(struct vgpu_sim *sim, int64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = deadline_ns / 1000000000,
		.tv_nsec = deadline_ns % 1000000000,
	};

	sim->sleepers++;
	pthread_cond_timedwait(&sim->cond, &sim->lock, &ts);
	sim->sleepers--;
}

/*
 * drm_syncobj_array_wait_timeout(): 0 with *@first, -EINVAL for a missing
 * fence without WAIT_FOR_SUBMIT/WAIT_AVAILABLE, -ETIME at @timeout_nsec
 * (absolute; 0 or a time already passed polls).
 */
static int sim_array_wait(struct vgpu_sim *sim, struct sim_syncobj **objs,
			  uint64_t upoints, uint32_t count, uint32_t flags,
			  int64_t timeout_nsec, uint32_t *first)
{
	const uint32_t submit = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
				DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;
	struct sim_waiter w = { .count = count, .objs = objs };
	uint64_t points_stack[SIM_ARRAY_STACK], *points = points_stack;
	bool got_stack[SIM_ARRAY_STACK];
	uint32_t signaled = 0;
	struct sim_fence f;
	int ret = 0;

	if (sim_too_big(count, sizeof(*points)))
		return -ENOMEM;
	if (count > SIM_ARRAY_STACK) {
		points = malloc(count * sizeof(*points));
		if (!points)
			return -ENOMEM;
	}
	if (upoints)
		memcpy(points, sim_uptr(upoints), count * sizeof(*points));
	else
		memset(points, 0, count * sizeof(*points));
	w.points = points;
	w.got = got_stack;
	if (sim_too_big(count, SIM_WAIT_ENTRY_SIZE)) {
		ret = -ENOMEM;
		goto out_points;
	}
	if (count > SIM_ARRAY_STACK) {
		w.got = malloc(count * sizeof(*w.got));
		if (!w.got) {
			ret = -ENOMEM;
			goto out_points;
		}
	}
	memset(w.got, 0, count * sizeof(*w.got));

	for (uint32_t i = 0; i < count; i++) {
		if (sim_find_seqno(objs[i], points[i], &f)) {
			if (flags & submit)
				continue;
			ret = -EINVAL;
			goto out;
		}
		w.got[i] = true;
		if (!signaled)
			*first = i;
		signaled++;
	}
	if (signaled == count ||
	    (signaled && !(flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)))
		goto out;

	sim_waiter_add(sim, &w);
	for (;;) {
		signaled = 0;
		for (uint32_t i = 0; i < count; i++) {
			if (!w.got[i])
				continue;
			if (!(flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL)) {
				*first = i;
				goto done;
			}
			signaled++;
		}
		if (signaled == count)
			break;
		if (timeout_nsec <= sim_now_ns()) {
			ret = -ETIME;
			break;
		}
		sim_sleep(sim, timeout_nsec);
	}
done:
	sim_waiter_del(sim, &w);
out:
	if (w.got != got_stack)
		free(w.got);
out_points:
	if (points != points_stack)
		free(points);
	return ret;
}

/*
 * drm_syncobj_find_fence() with its flags: DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
 * waits up to 5 s for the point to be submitted.
 */
static int sim_find_fence_wait(struct vgpu_sim *sim, uint32_t handle,
			       uint64_t point, uint32_t flags,
			       struct sim_fence *f)
{
	struct sim_syncobj *s = vgpu_sim_syncobj_lookup(sim, handle);
	struct sim_waiter w = { .count = 1, .points = &point };
	int64_t deadline;
	bool got = false;
	int ret;

	if (!s)
		return -ENOENT;
	ret = sim_find_seqno(s, point, f);
	if (!ret || !(flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
		return ret;

	s->refs++;
	w.objs = &s;
	w.got = &got;
	deadline = sim_now_ns() + SIM_FIND_FENCE_TIMEOUT_NS;
	sim_waiter_add(sim, &w);
	while (!got && deadline > sim_now_ns())
		sim_sleep(sim, deadline);
	sim_waiter_del(sim, &w);
	ret = -ETIME;
	if (got) {
		/* The fence the callback saw; a stub if it was reset since. */
		if (sim_find_seqno(s, point, f))
			*f = (struct sim_fence){ false, 0, 0 };
		ret = 0;
	}
	sim_syncobj_put(s);
	return ret;
}

/* ---- arrays of handles ---- */

/*
 * drm_syncobj_array_find(): a reference on each, or -ENOMEM/-EFAULT/-ENOENT.
 * Small arrays go to @stack (SIM_ARRAY_STACK entries).
 */
static int sim_array_find(struct vgpu_sim *sim, uint64_t uhandles,
			  uint32_t count, struct sim_syncobj **stack,
			  struct sim_syncobj ***out)
{
	const uint32_t *handles = sim_uptr(uhandles);
	struct sim_syncobj **objs = stack;

	if (sim_too_big(count, sizeof(uint32_t)))
		return -ENOMEM;
	if (!handles)
		return -EFAULT;
	if (sim_too_big(count, sizeof(void *)))
		return -ENOMEM;
	if (count > SIM_ARRAY_STACK) {
		objs = calloc(count, sizeof(*objs));
		if (!objs)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < count; i++) {
		objs[i] = vgpu_sim_syncobj_lookup(sim, handles[i]);
		if (!objs[i]) {
			while (i--)
				sim_syncobj_put(objs[i]);
			if (objs != stack)
				free(objs);
			return -ENOENT;
		}
		objs[i]->refs++;
	}
	*out = objs;
	return 0;
}

static void sim_array_free(struct sim_syncobj **objs, uint32_t count,
			   struct sim_syncobj **stack)
{
	for (uint32_t i = 0; i < count; i++)
		sim_syncobj_put(objs[i]);
	if (objs != stack)
		free(objs);
}

/* ---- ioctls ---- */

int vgpu_sim_syncobj_create(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_create *args = data;
	struct sim_syncobj *s;
	int ret;

	if (args->flags & ~(uint32_t)DRM_SYNCOBJ_CREATE_SIGNALED)
		return -EINVAL;
	ret = sim_syncobj_new(sim, &s, &args->handle);
	if (ret)
		return ret;
	if (args->flags & DRM_SYNCOBJ_CREATE_SIGNALED)
		s->fence = true;
	return 0;
}

int vgpu_sim_syncobj_destroy(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_destroy *args = data;
	struct sim_syncobj *s;

	if (args->pad)
		return -EINVAL;
	s = vgpu_sim_syncobj_lookup(sim, args->handle);
	if (!s)
		return -EINVAL;
	sim->syncobjs[args->handle - 1] = NULL;
	sim_syncobj_put(s);
	return 0;
}

int vgpu_sim_syncobj_wait(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_wait *args = data;
	struct sim_syncobj *stack[SIM_ARRAY_STACK], **objs;
	uint32_t first = ~0u;
	int ret;

	if (args->flags & ~(uint32_t)(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
		return -EINVAL;
	if (!args->count_handles)
		return -EINVAL;
	ret = sim_array_find(sim, args->handles, args->count_handles, stack,
			     &objs);
	if (ret)
		return ret;
	ret = sim_array_wait(sim, objs, 0, args->count_handles, args->flags,
			     args->timeout_nsec, &first);
	if (!ret)
		args->first_signaled = first;
	sim_array_free(objs, args->count_handles, stack);
	return ret;
}

int vgpu_sim_syncobj_timeline_wait(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_timeline_wait *args = data;
	struct sim_syncobj *stack[SIM_ARRAY_STACK], **objs;
	uint32_t first = ~0u;
	int ret;

	if (args->flags & ~(uint32_t)(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL |
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
				      DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE))
		return -EINVAL;
	if (!args->count_handles)
		return -EINVAL;
	ret = sim_array_find(sim, args->handles, args->count_handles, stack,
			     &objs);
	if (ret)
		return ret;
	ret = sim_array_wait(sim, objs, args->points, args->count_handles,
			     args->flags, args->timeout_nsec, &first);
	if (!ret)
		args->first_signaled = first;
	sim_array_free(objs, args->count_handles, stack);
	return ret;
}

int vgpu_sim_syncobj_reset(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_array *args = data;
	struct sim_syncobj *stack[SIM_ARRAY_STACK], **objs;
	int ret;

	if (args->pad)
		return -EINVAL;
	if (!args->count_handles)
		return -EINVAL;
	ret = sim_array_find(sim, args->handles, args->count_handles, stack,
			     &objs);
	if (ret)
		return ret;
	/* Replacing with no fence wakes nobody. */
	for (uint32_t i = 0; i < args->count_handles; i++)
		*objs[i] = (struct sim_syncobj){ .refs = objs[i]->refs };
	sim_array_free(objs, args->count_handles, stack);
	return 0;
}

int vgpu_sim_syncobj_signal(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_array *args = data;
	struct sim_syncobj *stack[SIM_ARRAY_STACK], **objs;
	int ret;

	if (args->pad)
		return -EINVAL;
	if (!args->count_handles)
		return -EINVAL;
	ret = sim_array_find(sim, args->handles, args->count_handles, stack,
			     &objs);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < args->count_handles; i++)
		vgpu_sim_syncobj_replace(sim, objs[i]);
	sim_array_free(objs, args->count_handles, stack);
	return 0;
}

int vgpu_sim_syncobj_timeline_signal(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_timeline_array *args = data;
	const uint64_t *points = sim_uptr(args->points);
	struct sim_syncobj *stack[SIM_ARRAY_STACK], **objs;
	int ret;

	if (args->flags)
		return -EINVAL;
	if (!args->count_handles)
		return -EINVAL;
	ret = sim_array_find(sim, args->handles, args->count_handles, stack,
			     &objs);
	if (ret)
		return ret;
	/* the points array, then one chain node pointer per handle */
	if (sim_too_big(args->count_handles, sizeof(uint64_t))) {
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < args->count_handles; i++)
		vgpu_sim_syncobj_add_point(sim, objs[i], points ? points[i] : 0);
out:
	sim_array_free(objs, args->count_handles, stack);
	return ret;
}

int vgpu_sim_syncobj_query(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_timeline_array *args = data;
	uint64_t *points = sim_uptr(args->points);
	struct sim_syncobj *stack[SIM_ARRAY_STACK], **objs;
	int ret;

	if (args->flags & ~(uint32_t)DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)
		return -EINVAL;
	if (!args->count_handles)
		return -EINVAL;
	ret = sim_array_find(sim, args->handles, args->count_handles, stack,
			     &objs);
	if (ret)
		return ret;
	/* Every link has signalled: the last signalled point is the head's. */
	for (uint32_t i = 0; i < args->count_handles; i++) {
		if (!points) {
			ret = -EFAULT;
			break;
		}
		points[i] = objs[i]->fence && objs[i]->chain ? objs[i]->seqno : 0;
	}
	sim_array_free(objs, args->count_handles, stack);
	return ret;
}

int vgpu_sim_syncobj_transfer(struct vgpu_sim *sim, void *data)
{
	struct drm_syncobj_transfer *args = data;
	struct sim_syncobj *dst;
	struct sim_fence f;
	int ret;

	if (args->pad)
		return -EINVAL;
	dst = vgpu_sim_syncobj_lookup(sim, args->dst_handle);
	if (!dst)
		return -ENOENT;
	dst->refs++; /* the wait for submission may sleep */
	ret = sim_find_fence_wait(sim, args->src_handle, args->src_point,
				  args->flags, &f);
	if (!ret) {
		if (args->dst_point)
			vgpu_sim_syncobj_add_point(sim, dst, args->dst_point);
		else
			sim_syncobj_set(sim, dst, &f);
	}
	sim_syncobj_put(dst);
	return ret;
}
