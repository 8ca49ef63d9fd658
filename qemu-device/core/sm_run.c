/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SM's public API (vgpu_core.h): creating an SM, checking a launch
 * against its limits, running clusters of a launch one after another,
 * stopping and resuming them for preemption, statistics.  The scheduler
 * that runs a cluster is sm.c's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"

static bool run_cluster(struct vgpu_sm *sm, const struct vgpu_launch *l,
			uint32_t linear)
{
	vgpu_cluster_setup(sm, l, linear);
	sm->cluster_t0 = sm->clock;
	sm->cluster_executed = 0;
	sm->flow_seq = 0;
	sm->wake_flow = 0;
	sm->copy_flow = 0;
	sm->resume_w = NULL;
	for (uint32_t s = 0; s < sm->nctas; s++)
		VGPU_TRACE(sm->ctas[s], NULL, .type = VGPU_TR_CTA_BEGIN);
	return vgpu_cluster_loop(sm, l);
}

/*
 * A preemption stopped the cluster between two warp-instructions: let the
 * copy engine finish what is in flight (the saved state holds no copy),
 * as if the warps paused meanwhile.  False if a copy raised an exception.
 */
static bool drain_copies(struct vgpu_sm *sm)
{
	while (sm->nops) {
		uint64_t t = vgpu_async_next_done(sm);

		if (sm->clock < t)
			sm->clock = t;
		if (!vgpu_async_progress(sm))
			return false;
	}
	return true;
}

/* ---- Public API ---- */

struct vgpu_sm *vgpu_sm_new(const struct vgpu_sm_config *cfg)
{
	struct vgpu_sm *sm = calloc(1, sizeof(*sm));

	if (!sm)
		return NULL;
	if (cfg)
		sm->cfg = *cfg;
	if (!sm->cfg.smem_max)
		sm->cfg.smem_max = VGPU_DEFAULT_SMEM_PER_SM;
	if (sm->cfg.nsms <= sm->cfg.sm_id)
		sm->cfg.nsms = sm->cfg.sm_id + 1;
	if (!sm->cfg.tma_latency)
		sm->cfg.tma_latency = 500;
	if (!sm->cfg.tma_bandwidth)
		sm->cfg.tma_bandwidth = 64;
	if (!sm->cfg.try_wait_limit)
		sm->cfg.try_wait_limit = 100000;
	if (!sm->cfg.nwarpids)
		sm->cfg.nwarpids = VGPU_MAX_WARPS_PER_CTA;
	for (uint32_t i = 0; i < VGPU_MAX_CLUSTER_CTAS; i++) {
		sm->ctas[i] = calloc(1, sizeof(*sm->ctas[i]));
		if (!sm->ctas[i]) {
			vgpu_sm_free(sm);
			return NULL;
		}
	}
	return sm;
}

void vgpu_sm_free(struct vgpu_sm *sm)
{
	if (!sm)
		return;
	for (uint32_t i = 0; i < VGPU_MAX_CLUSTER_CTAS; i++) {
		free(sm->regfile[i]);
		free(sm->warpbuf[i]);
		free(sm->smem[i]);
		free(sm->shadow[i]);
		if (sm->ctas[i])
			free(sm->ctas[i]->mbars);
		free(sm->ctas[i]);
	}
	free(sm->ops);
	free(sm->op_free);
	free(sm->op_heap);
	free(sm);
}

/* Out of line (noinline: in this file too), else GCC makes it rep stosq again. */
__attribute__((noinline)) void vgpu_zero(void *p, size_t n)
{
	memset(p, 0, n);
}

static void exc_vset(struct vgpu_exception_record *exc, uint32_t code,
		     const char *fmt, va_list ap)
{
	memset(exc, 0, sizeof(*exc));
	exc->code = code;
	exc->barid = 0xffffffffu;
	memset(exc->warp_wait, VGPU_WAIT_ABSENT, sizeof(exc->warp_wait));
	vsnprintf(exc->msg, sizeof(exc->msg), fmt, ap);
}

void vgpu_exc_set(struct vgpu_exception_record *exc, uint32_t code,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	exc_vset(exc, code, fmt, ap);
	va_end(ap);
}

static int bad_launch(struct vgpu_exception_record *exc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int bad_launch(struct vgpu_exception_record *exc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	exc_vset(exc, VGPU_EXC_BAD_LAUNCH, fmt, ap);
	va_end(ap);
	return -1;
}

int vgpu_launch_validate(const struct vgpu_sm *sm, const struct vgpu_launch *l,
			 struct vgpu_exception_record *exc)
{
	uint64_t threads = vgpu_dims_volume(l->block[0], l->block[1], l->block[2]);

	if (!l->prog)
		return bad_launch(exc, "no program");
	if (l->entry % VGPU_INSN_BYTES || l->entry / VGPU_INSN_BYTES >= l->prog->n)
		return bad_launch(exc, "entry 0x%x is not an instruction of the program",
				  l->entry);
	for (int i = 0; i < 3; i++)
		if (!l->grid[i] || !l->block[i])
			return bad_launch(exc, "grid and block dimensions must be >= 1");
	if (vgpu_dims_volume(l->grid[0], l->grid[1], l->grid[2]) > UINT32_MAX)
		return bad_launch(exc, "grid has more than 2^32-1 CTAs");
	if (threads > VGPU_MAX_THREADS_PER_CTA)
		return bad_launch(exc, "block of %u x %u x %u threads exceeds %u",
				  l->block[0], l->block[1], l->block[2],
				  VGPU_MAX_THREADS_PER_CTA);
	if (l->smem_bytes > sm->cfg.smem_max)
		return bad_launch(exc, "%u bytes of shared memory exceed the SM's %u",
				  l->smem_bytes, sm->cfg.smem_max);
	if (l->param_size > VGPU_MAX_PARAM_BYTES || (l->param_size && !l->params))
		return bad_launch(exc, "parameter buffer of %u bytes is invalid (max %u)",
				  l->param_size, VGPU_MAX_PARAM_BYTES);
	if (l->flags & ~VGPU_LAUNCH_FLAGS_MASK)
		return bad_launch(exc, "unknown launch flags 0x%x",
				  l->flags & ~VGPU_LAUNCH_FLAGS_MASK);
	if (!l->mem || !l->mem->read || !l->mem->write || !l->mem->atomic ||
	    !l->mem->cas16)
		return bad_launch(exc, "no global-memory interface");
	for (int i = 0; i < 3; i++)
		if (l->grid[i] % vgpu_cluster_dim(l, i))
			return bad_launch(exc, "cluster dimension %c (%u) does not divide the grid's (%u)",
					  "xyz"[i], vgpu_cluster_dim(l, i), l->grid[i]);
	if (vgpu_dims_volume(vgpu_cluster_dim(l, 0), vgpu_cluster_dim(l, 1), vgpu_cluster_dim(l, 2)) >
	    VGPU_MAX_CLUSTER_CTAS)
		return bad_launch(exc, "cluster of more than %u CTAs",
				  VGPU_MAX_CLUSTER_CTAS);
	if ((l->flags & VGPU_LAUNCH_COOPERATIVE) &&
	    (vgpu_dims_volume(vgpu_cluster_dim(l, 0), vgpu_cluster_dim(l, 1),
			      vgpu_cluster_dim(l, 2)) > 1 ||
	     vgpu_dims_volume(l->grid[0], l->grid[1], l->grid[2]) > VGPU_MAX_CLUSTER_CTAS))
		return bad_launch(exc, "a cooperative launch of %u x %u x %u CTAs in clusters of "
				  "%u x %u x %u: at most %u CTAs in clusters of one",
				  l->grid[0], l->grid[1], l->grid[2], vgpu_cluster_dim(l, 0),
				  vgpu_cluster_dim(l, 1), vgpu_cluster_dim(l, 2),
				  VGPU_MAX_CLUSTER_CTAS);
	return 0;
}

/* The launch's groups of co-resident CTAs (clusters, or a cooperative grid). */
static uint32_t launch_clusters(const struct vgpu_launch *l)
{
	return (l->grid[0] / vgpu_group_dim(l, 0)) * (l->grid[1] / vgpu_group_dim(l, 1)) *
	       (l->grid[2] / vgpu_group_dim(l, 2));
}

/*
 * Slot @i of @p (each @have bytes, or NULL) to @want bytes, keeping what it
 * holds.  Cache-line aligned: a warp's register row is two lines, and a
 * bulk copy into shared memory lands where the kernel aligned it (malloc's
 * 16 bytes put a 128-aligned TMA buffer at 16 mod 32 on the host, where
 * the host's rep movsb ran at a third of its speed).
 */
static int grow(void **p, size_t *have, size_t want, uint32_t n)
{
	size_t old = *have, size = (want + VGPU_HOST_LINE - 1) & ~(size_t)(VGPU_HOST_LINE - 1);

	for (uint32_t i = 0; i < n; i++) {
		void *q;

		if (p[i] && want <= old)
			continue;
		q = aligned_alloc(VGPU_HOST_LINE, size);
		if (!q)
			return -ENOMEM;
		if (p[i]) {
			memcpy(q, p[i], old);
			free(p[i]);
		}
		p[i] = q;
	}
	if (want > *have)
		*have = want;
	return 0;
}

/*
 * Buffers for @n co-resident CTAs of launch @l, sized for the warps its
 * CTAs have (they grow with later launches, never shrink).  Every slot
 * allocated so far has the recorded sizes: a growth reaches all of them,
 * not only the first @n (a launch of one CTA per cluster that grew slot 0
 * alone once left slot 1 smaller than the sizes said, and a later cluster
 * of two overran it: found by the device fuzzer).
 */
static int sm_reserve(struct vgpu_sm *sm, const struct vgpu_launch *l, uint32_t n)
{
	uint32_t threads = l->block[0] * l->block[1] * l->block[2];
	uint32_t nwarps = (threads + VGPU_WARP_SIZE - 1) / VGPU_WARP_SIZE;
	size_t rb = (size_t)l->prog->rows * VGPU_WARP_SIZE * sizeof(uint32_t) * nwarps;
	size_t wb = (size_t)nwarps * sizeof(struct vgpu_warp);
	size_t sb = l->smem_bytes ? l->smem_bytes : 1;
	size_t have_rb = sm->regfile_bytes, have_wb = sm->warpbuf_bytes;
	size_t have_sb = sm->smem_alloc;

	bool more = n > sm->slots_alloc;
	uint32_t m = more ? n : sm->slots_alloc;

	if (!rb)
		rb = 1;
	if (rb > have_rb || more)
		if (grow((void **)sm->regfile, &sm->regfile_bytes,
			 rb > have_rb ? rb : have_rb, m))
			return -ENOMEM;
	if (wb > have_wb || more)
		if (grow((void **)sm->warpbuf, &sm->warpbuf_bytes,
			 wb > have_wb ? wb : have_wb, m))
			return -ENOMEM;
	if (sb > have_sb || more) {
		size_t want = sb > have_sb ? sb : have_sb;

		size_t have_shadow = have_sb ? (have_sb + 63) / 64 + 1 : 0;

		if (grow((void **)sm->smem, &sm->smem_alloc, want, m) ||
		    grow((void **)sm->shadow, &have_shadow, (want + 63) / 64 + 1, m))
			return -ENOMEM;
	}
	sm->slots_alloc = m;
	return 0;
}

/* What every run and resume starts with; -1 if @l is not runnable. */
static int run_begin(struct vgpu_sm *sm, const struct vgpu_launch *l,
		     struct vgpu_exception_record *exc)
{
	uint32_t csize = vgpu_group_dim(l, 0) * vgpu_group_dim(l, 1) * vgpu_group_dim(l, 2);

	if (sm_reserve(sm, l, csize))
		return bad_launch(exc, "out of host memory");
	sm->l = l;
	sm->exc = exc;
	sm->exc_raised = false;
	sm->sanitize = l->flags & VGPU_LAUNCH_SANITIZE;
	sm->executed = 0;
	sm->budget_left = 0;
	sm->slice_given = 0;
	sm->ctl_seen = 0;
	sm->nops = 0; /* an exception may have left operations queued */
	sm->nslots = 0;
	sm->nfree = 0;
	sm->engine_free = 0;
	sm->preempting = false;
	sm->preempt_mid = false;
	sm->resume_w = NULL;
	sm->rng = l->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	if (!sm->rng)
		sm->rng = 1;
	/* an exception before any CTA starts names CTA 0 with no warps */
	sm->nctas = 0;
	sm->ctas[0]->nwarps = 0;
	memset(sm->ctas[0]->id, 0, sizeof(sm->ctas[0]->id));
	sm->ctas[0]->sm = sm;
	sm->ctas[0]->l = l;
	sm->ctas[0]->prog = l->prog;
	return 0;
}

/*
 * The last cluster run (@linear) stopped: a preemption (return
 * VGPU_RUN_PREEMPTED, its copies drained) or an exception (-1).
 */
static int run_stopped(struct vgpu_sm *sm, const struct vgpu_launch *l,
		       uint32_t linear, bool started)
{
	uint64_t owed = 0;

	if (!sm->preempting)
		return -1;
	sm->preempting = false;
	if (started && !drain_copies(sm))
		return -1;
	/*
	 * What warps ran in lock-step ahead of their turns (lockstep.c) counts
	 * now: a saved context has no place for it.
	 */
	for (uint32_t s = 0; started && s < sm->nctas; s++)
		for (uint32_t i = 0; i < sm->ctas[s]->nwarps; i++) {
			owed += sm->ctas[s]->warps[i].ahead;
			sm->ctas[s]->warps[i].ahead = 0;
		}
	sm->clock += owed;
	sm->executed += owed;
	sm->cluster_executed += owed;
	sm->stats.warp_insns += owed;
	sm->stats.thread_insns += owed * VGPU_WARP_SIZE;
	if (l->ctl)
		vgpu_ctl_count(l->ctl, owed);
	sm->preempt_mid = started;
	sm->preempt_cluster = linear;
	if (l->ctl)
		vgpu_ctl_count(l->ctl, sm->slice_given - sm->budget_left);
	return VGPU_RUN_PREEMPTED;
}

static int run_done(struct vgpu_sm *sm, const struct vgpu_launch *l,
		    struct vgpu_exception_record *exc)
{
	if (l->ctl)
		vgpu_ctl_count(l->ctl, sm->slice_given - sm->budget_left);
	vgpu_zero(exc, sizeof(*exc));
	return 0;
}

int vgpu_sm_run(struct vgpu_sm *sm, const struct vgpu_launch *l, uint32_t first,
		uint32_t count, struct vgpu_exception_record *exc)
{
	uint64_t nclusters;

	if (vgpu_launch_validate(sm, l, exc))
		return -1;
	nclusters = launch_clusters(l);
	if ((uint64_t)first + count > nclusters)
		return bad_launch(exc, "clusters %u..%u are outside the grid's %llu",
				  first, first + count - 1,
				  (unsigned long long)nclusters);
	if (run_begin(sm, l, exc))
		return -1;
	if (!vgpu_refill(sm, sm->ctas[0], NULL, l, false))
		return run_stopped(sm, l, first, false);
	for (uint32_t i = 0; i < count; i++) {
		if (i && l->ctl && atomic_load(&l->ctl->preempt)) {
			sm->preempting = true;
			return run_stopped(sm, l, first + i, false);
		}
		if (!run_cluster(sm, l, first + i))
			return run_stopped(sm, l, first + i, true);
	}
	return run_done(sm, l, exc);
}

int vgpu_sm_resume(struct vgpu_sm *sm, const struct vgpu_launch *l,
		   const void *state, size_t size, struct vgpu_exception_record *exc)
{
	const struct vgpu_ctx_header *h = state;

	if (vgpu_launch_validate(sm, l, exc) || run_begin(sm, l, exc))
		return -1;
	if (vgpu_ctx_load(sm, l, state, size, exc)) {
		sm->nctas = 0;
		return -1;
	}
	sm->wake_flow = 0;
	sm->copy_flow = 0;
	if (!vgpu_refill(sm, sm->ctas[sm->resume_w ? sm->resume_cta : 0],
			 sm->resume_w, l, false))
		return run_stopped(sm, l, h->cluster, true);
	if (!vgpu_cluster_loop(sm, l))
		return run_stopped(sm, l, h->cluster, true);
	return run_done(sm, l, exc);
}

bool vgpu_sm_preempted(const struct vgpu_sm *sm, uint32_t *cluster)
{
	*cluster = sm->preempt_cluster;
	return sm->preempt_mid;
}

int vgpu_sm_launch(struct vgpu_sm *sm, const struct vgpu_launch *l,
		   struct vgpu_exception_record *exc)
{
	if (vgpu_launch_validate(sm, l, exc))
		return -1;
	return vgpu_sm_run(sm, l, 0, launch_clusters(l), exc);
}

void vgpu_sm_get_stats(const struct vgpu_sm *sm, struct vgpu_sm_stats *st)
{
	*st = sm->stats;
	st->cycles = sm->clock;
}

uint64_t vgpu_sm_cycles(const struct vgpu_sm *sm)
{
	return sm->clock;
}

void vgpu_sm_reset_stats(struct vgpu_sm *sm)
{
	memset(&sm->stats, 0, sizeof(sm->stats));
}

size_t vgpu_sm_cta_state_bytes(const struct vgpu_launch *l)
{
	uint32_t threads = l->block[0] * l->block[1] * l->block[2];
	uint32_t nwarps = (threads + VGPU_WARP_SIZE - 1) / VGPU_WARP_SIZE;

	return sizeof(struct vgpu_cta) + l->smem_bytes + (l->smem_bytes + 63) / 64 +
	       (size_t)nwarps * sizeof(struct vgpu_warp) +
	       (size_t)l->prog->rows * VGPU_WARP_SIZE * sizeof(uint32_t) * nwarps;
}
