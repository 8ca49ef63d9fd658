/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SIMT group selection: which lanes of a warp run next.  Each lane has
 * its own pc; the group is the set of live lanes sharing the lowest pc
 * (inside calls, the deepest lanes first), so divergent paths of
 * structured code reconverge where they meet again; a converged warp
 * keeps one pc (upc) and skips the per-lane bookkeeping.  Where it can, a
 * group is found without a scan of the lanes (struct vgpu_warp's sel_*):
 * a group that moves while still below the lanes the last selection left
 * aside, and a converged warp that a branch splits in two.
 */
#include <stdlib.h>

#include "core_priv.h"

void vgpu_warp_select(struct vgpu_warp *w)
{
	uint32_t minpc = UINT32_MAX, mask = 0;

	if (w->converged) {
		w->cur_pc = w->upc;
		w->cur_mask = w->live;
		return;
	}
	uint32_t cand = w->live & ~w->parked, nextpc = UINT32_MAX;

	w->sel_ok = !w->deep;
	if (w->deep) {
		/* inside calls: the deepest lanes first (they return before
		 * their callers' other lanes go on) */
		uint32_t maxd = 0, deepest = 0;

		VGPU_FOR_LANES(cand, lane) {
			if (w->depth[lane] > maxd) {
				maxd = w->depth[lane];
				deepest = 1u << lane;
			} else if (w->depth[lane] == maxd) {
				deepest |= 1u << lane;
			}
		}
		cand = deepest;
	}
	VGPU_FOR_LANES(cand, lane) {
		if (w->pc[lane] < minpc) {
			nextpc = minpc;
			minpc = w->pc[lane];
			mask = 1u << lane;
		} else if (w->pc[lane] == minpc) {
			mask |= 1u << lane;
		} else if (w->pc[lane] < nextpc) {
			nextpc = w->pc[lane];
		}
	}
	w->cur_pc = minpc;
	w->cur_mask = mask;
	w->sel_others = cand & ~mask;
	w->sel_min = nextpc;
	if (mask == w->live) {
		w->converged = true;
		w->upc = minpc;
	}
}

#ifdef VGPU_CHECK_SELECT
/* Testing: the shortcuts below against a full selection (abort if not). */
static void check_select(const struct vgpu_warp *w)
{
	struct vgpu_warp t = *w;

	t.converged = false;
	vgpu_warp_select(&t);
	if (t.cur_pc != w->cur_pc || t.cur_mask != w->cur_mask || t.converged != w->converged ||
	    (w->sel_ok && (t.sel_others != w->sel_others || t.sel_min != w->sel_min)))
		abort();
}
#else
#define check_select(w) ((void)0)
#endif

/*
 * Whether a diverged warp's group, all of it moved to @pc, is still the
 * group vgpu_warp_select() would pick: the others are the lanes it left aside
 * and all of them are further on.  Then the group moves with no scan.
 */
static bool group_stays(const struct vgpu_warp *w, uint32_t pc)
{
	return w->sel_ok && !w->deep && pc < w->sel_min &&
	       (w->live & ~w->parked & ~w->cur_mask) == w->sel_others;
}

/* vgpu_warp_advance() of a diverged warp */
void vgpu_warp_advance_diverged(struct vgpu_warp *w)
{
	uint32_t g = w->cur_mask & w->live;

	VGPU_FOR_LANES(g, lane)
		w->pc[lane] = w->cur_pc + 1;
	if (g && g != w->live && group_stays(w, w->cur_pc + 1)) {
		w->cur_pc++;
		w->cur_mask = g;
		check_select(w);
		return;
	}
	vgpu_warp_select(w);
}

/*
 * Make the warp's lanes individually addressable before an instruction
 * sends them to different pcs (used by branches).
 */
void vgpu_warp_diverge(struct vgpu_warp *w)
{
	if (!w->converged)
		return;
	VGPU_FOR_LANES(w->live, lane)
		w->pc[lane] = w->upc;
	w->converged = false;
}

/* Lanes @taken of the current group jump to @target, the rest fall through. */
void vgpu_warp_branch(struct vgpu_warp *w, uint32_t taken, uint32_t target)
{
	if (w->converged && taken == w->cur_mask) {
		w->upc = target;
		w->cur_pc = target;
		return;
	}
	if (!w->converged && (taken == w->cur_mask || !taken)) {
		uint32_t pc = taken ? target : w->cur_pc + 1;

		VGPU_FOR_LANES(w->cur_mask, lane)
			w->pc[lane] = pc;
		if (group_stays(w, pc)) {
			w->cur_pc = pc;
			check_select(w);
			return;
		}
		vgpu_warp_select(w);
		return;
	}
	bool split = w->converged && !w->deep && taken && target != w->cur_pc + 1;

	vgpu_warp_diverge(w);
	VGPU_FOR_LANES(w->cur_mask, lane)
		w->pc[lane] = (taken >> lane) & 1 ? target : w->cur_pc + 1;
	if (split) {
		/*
		 * A converged warp (all its lanes the group, none parked)
		 * splits in two: the group is the side at the lower pc, the
		 * other side what vgpu_warp_select() would leave aside.
		 */
		uint32_t rest = w->live & ~taken, next = w->cur_pc + 1;
		bool back = target < next;

		w->cur_pc = back ? target : next;
		w->cur_mask = back ? taken : rest;
		w->sel_others = back ? rest : taken;
		w->sel_min = back ? next : target;
		w->sel_ok = true;
		check_select(w);
		return;
	}
	vgpu_warp_select(w);
}

/* Lanes @em of the current group go to @pcs[lane], the rest fall through. */
void vgpu_warp_scatter(struct vgpu_warp *w, uint32_t em, const uint32_t *pcs)
{
	uint32_t first = pcs[__builtin_ctz(em)], same = 1;

	VGPU_FOR_LANES(em, lane)
		same &= pcs[lane] == first;
	if (same) {
		vgpu_warp_branch(w, em, first);
		return;
	}
	vgpu_warp_diverge(w);
	VGPU_FOR_LANES(w->cur_mask, lane)
		w->pc[lane] = (em >> lane) & 1 ? pcs[lane] : w->cur_pc + 1;
	vgpu_warp_select(w);
}

/*
 * Park the current group at its MBAR.TRY_WAIT on the mbarrier (@cta, @off)
 * until the phase completes or cycle @wake; the warp's other lanes, if any
 * can run, go on (independent thread scheduling), otherwise the warp is
 * suspended by run_warp.
 */
