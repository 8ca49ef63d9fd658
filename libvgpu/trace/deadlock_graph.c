// SPDX-License-Identifier: MIT
/*
 * vgpu_job_write_deadlock_graph(): the wait-for graph of the CTA a job's
 * exception stopped, as Graphviz DOT (uapi/vgpu_waitgraph.h draws it; the
 * driver's devcoredump uses the same code).  The exception record gives
 * each warp's state; the job's timeline, when it has one, adds what the
 * record cannot hold: the mbarriers' addresses and phases, and who
 * arrived where (which warps would arrive on an mbarrier).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "timeline.h"
#include "vgpu_waitgraph.h"

static bool same_cta(const struct vgpu_trace_event *e, const uint32_t *cta)
{
	return e->cta[0] == cta[0] && e->cta[1] == cta[1] && e->cta[2] == cta[2];
}

/* Replay the CTA's events: arrivals, mbarrier addresses, last waits. */
static void replay(struct vgpu_waitgraph *g, const struct vgpu_trace_event *ev,
		   uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct vgpu_trace_event *e = &ev[i];
		uint32_t w = e->warp;
		int m;

		if (!same_cta(e, g->x->cta))
			continue;
		switch (e->type) {
		case VGPU_TR_BAR_ARRIVE:
			if (e->id < VGPU_NUM_NAMED_BARRIERS && w < VGPU_MAX_WARPS_PER_CTA) {
				g->bar_arrived[e->id] |= 1u << w;
				g->bar_count[e->id] = e->count;
				g->bar_expected[e->id] = e->expected;
				g->bar_known |= 1u << e->id;
			}
			break;
		case VGPU_TR_BAR_COMPLETE:
			if (e->id < VGPU_NUM_NAMED_BARRIERS)
				g->bar_arrived[e->id] = 0;
			break;
		case VGPU_TR_MBAR_ARRIVE:
			m = vgpu_wg_mbar(g, e->addr);
			if (m < 0)
				break;
			if (w < VGPU_MAX_WARPS_PER_CTA) {
				g->mbars[m].ever |= 1u << w;
				g->mbars[m].cur |= 1u << w;
			}
			g->mbars[m].pending = e->expected;
			g->mbars[m].have_pending = true;
			g->mbars[m].phase = e->id;
			break;
		case VGPU_TR_MBAR_COMPLETE:
			m = vgpu_wg_mbar(g, e->addr);
			if (m >= 0) {
				g->mbars[m].cur = 0;
				g->mbars[m].phase = e->id + 1;
				g->mbars[m].have_pending = false;
			}
			break;
		case VGPU_TR_BLOCK:
			if (w >= VGPU_MAX_WARPS_PER_CTA)
				break;
			if (e->reason == VGPU_TRACE_WAIT_MBAR) {
				g->mbar[w] = vgpu_wg_mbar(g, e->addr);
				if (g->mbar[w] >= 0)
					g->mbars[g->mbar[w]].phase = e->id;
			}
			g->spin[w] = false;
			break;
		case VGPU_TR_MBAR_POLL:
			if (w >= VGPU_MAX_WARPS_PER_CTA)
				break;
			g->spin[w] = e->count < e->expected;
			if (g->spin[w])
				g->mbar[w] = vgpu_wg_mbar(g, e->addr);
			break;
		default:
			break;
		}
	}
}

static void print_file(void *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(ctx, fmt, ap);
	va_end(ap);
}

int vgpu_trace_write_dot(FILE *f, const struct vgpu_trace_event *ev, uint32_t n,
			 const struct vgpu_timeline_info *info)
{
	struct vgpu_waitgraph g;

	if (!info->exc)
		return -ENOENT;
	vgpu_wg_init(&g, info->exc, info->nwarps);
	replay(&g, ev, n);
	vgpu_wg_print(&g, info->kernel ? info->kernel : "?", print_file, f);
	return fflush(f) || ferror(f) ? -EIO : 0;
}
