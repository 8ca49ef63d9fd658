// SPDX-License-Identifier: MIT
/*
 * The wait-for graph of a stopped CTA as Graphviz DOT (`dot -Tsvg`).
 *
 * Nodes: the CTA's warps (boxes), the named barriers and mbarriers they
 * wait on (ellipses, diamonds).  Edges: "waits" from a warp to what it
 * waits on; "would arrive" from an object to each live warp expected to
 * arrive on it and not yet arrived in the current phase (for a named
 * barrier: every live warp not yet arrived; for an mbarrier: the warps
 * that arrived on it in earlier phases, as far as the timeline shows).
 * A cycle of these edges is the deadlock: drawn red.  An object nobody
 * live would arrive on is missing its arrivals: drawn red, and says so.
 *
 * The warps' states come from the exception record (what each warp waits
 * on when the CTA stopped); the timeline, when there is one, adds the
 * mbarrier addresses, phases and the history of who arrived where.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "timeline.h"

#define MAX_MBARS 64u

#define VGPU_FOR_EACH_BIT(mask, b)                                             \
	for (uint32_t b##_m = (mask), b = 0;                                   \
	     b##_m && ((b = (uint32_t)__builtin_ctz(b##_m)), 1); b##_m &= b##_m - 1)
#define NW VGPU_MAX_WARPS_PER_CTA

enum wstate { W_RUN, W_BAR, W_MBAR, W_EXIT, W_OTHER };

struct mbar {
	uint64_t addr;
	uint32_t phase, pending;
	bool have_pending;
	uint32_t ever, cur; /* warps that arrived: ever, this phase */
};

struct graph {
	const struct vgpu_exception_record *x;
	uint32_t nwarps;
	uint8_t state[NW];
	uint8_t bar[NW];    /* W_BAR: which */
	int mbar[NW];	    /* W_MBAR: index into mbars, -1 unknown */
	const char *other[NW];
	bool spin[NW];
	uint32_t bar_arrived[VGPU_NUM_NAMED_BARRIERS];
	uint32_t bar_count[VGPU_NUM_NAMED_BARRIERS], bar_expected[VGPU_NUM_NAMED_BARRIERS];
	struct mbar mbars[MAX_MBARS];
	uint32_t nmbars;
	uint32_t pc[NW];
};

static int mbar_find(struct graph *g, uint64_t addr)
{
	for (uint32_t i = 0; i < g->nmbars; i++)
		if (g->mbars[i].addr == addr)
			return (int)i;
	if (g->nmbars == MAX_MBARS)
		return -1;
	g->mbars[g->nmbars] = (struct mbar){ .addr = addr };
	return (int)g->nmbars++;
}

static bool same_cta(const struct vgpu_trace_event *e, const uint32_t *cta)
{
	return e->cta[0] == cta[0] && e->cta[1] == cta[1] && e->cta[2] == cta[2];
}

/* Replay the CTA's events: arrivals, mbarrier addresses, last waits. */
static void replay(struct graph *g, const struct vgpu_trace_event *ev, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct vgpu_trace_event *e = &ev[i];
		uint32_t w = e->warp;
		int m;

		if (!same_cta(e, g->x->cta))
			continue;
		switch (e->type) {
		case VGPU_TR_BAR_ARRIVE:
			if (e->id < VGPU_NUM_NAMED_BARRIERS && w < NW) {
				g->bar_arrived[e->id] |= 1u << w;
				g->bar_count[e->id] = e->count;
				g->bar_expected[e->id] = e->expected;
			}
			break;
		case VGPU_TR_BAR_COMPLETE:
			if (e->id < VGPU_NUM_NAMED_BARRIERS)
				g->bar_arrived[e->id] = 0;
			break;
		case VGPU_TR_MBAR_ARRIVE:
			m = mbar_find(g, e->addr);
			if (m < 0)
				break;
			if (w < NW) {
				g->mbars[m].ever |= 1u << w;
				g->mbars[m].cur |= 1u << w;
			}
			g->mbars[m].pending = e->expected;
			g->mbars[m].have_pending = true;
			g->mbars[m].phase = e->id;
			break;
		case VGPU_TR_MBAR_COMPLETE:
			m = mbar_find(g, e->addr);
			if (m >= 0) {
				g->mbars[m].cur = 0;
				g->mbars[m].phase = e->id + 1;
				g->mbars[m].have_pending = false;
			}
			break;
		case VGPU_TR_BLOCK:
			if (w < NW && e->reason == VGPU_TRACE_WAIT_MBAR) {
				g->mbar[w] = mbar_find(g, e->addr);
				if (g->mbar[w] >= 0)
					g->mbars[g->mbar[w]].phase = e->id;
			}
			if (w < NW)
				g->spin[w] = false;
			break;
		case VGPU_TR_MBAR_POLL:
			if (w < NW) {
				g->spin[w] = e->count < e->expected;
				if (g->spin[w])
					g->mbar[w] = mbar_find(g, e->addr);
			}
			break;
		default:
			break;
		}
	}
}

/* The warps' states as the exception record gives them. */
static void states(struct graph *g)
{
	const struct vgpu_exception_record *x = g->x;

	for (uint32_t w = 0; w < g->nwarps; w++) {
		uint8_t s = x->warp_wait[w];

		g->pc[w] = x->warp == w ? x->pc : 0;
		if (s < VGPU_NUM_NAMED_BARRIERS) {
			g->state[w] = W_BAR;
			g->bar[w] = s;
		} else if (s == VGPU_WAIT_MBAR) {
			g->state[w] = W_MBAR;
			if (g->mbar[w] < 0 && x->warp == w && x->code == VGPU_EXC_DEADLOCK)
				g->mbar[w] = mbar_find(g, x->addr);
		} else if (s == VGPU_WAIT_EXITED) {
			g->state[w] = W_EXIT;
		} else if (s == VGPU_WAIT_NONE) {
			g->state[w] = W_RUN;
		} else {
			g->state[w] = W_OTHER;
			g->other[w] = s == VGPU_WAIT_SLEEP   ? "sleeps" :
				      s == VGPU_WAIT_CLUSTER ? "waits on the cluster barrier" :
				      s == VGPU_WAIT_ASYNC   ? "waits for its copies" :
							       "absent";
		}
	}
	/* the record's own barrier counts are exact */
	if (x->barid < VGPU_NUM_NAMED_BARRIERS) {
		g->bar_expected[x->barid] = x->info[0];
		g->bar_count[x->barid] = x->info[1];
	}
}

/* Warps that would arrive on barrier @b / mbarrier @m and have not. */
static uint32_t bar_needs(const struct graph *g, uint32_t b)
{
	uint32_t need = 0;

	for (uint32_t w = 0; w < g->nwarps; w++)
		if (g->state[w] != W_EXIT && !(g->bar_arrived[b] >> w & 1) &&
		    !(g->state[w] == W_BAR && g->bar[w] == b))
			need |= 1u << w;
	return need;
}

static uint32_t mbar_needs(const struct graph *g, uint32_t m)
{
	uint32_t need = g->mbars[m].ever & ~g->mbars[m].cur;

	for (uint32_t w = 0; w < g->nwarps; w++)
		if (g->state[w] == W_EXIT)
			need &= ~(1u << w);
	return need;
}

/* The object warp @w waits on as a node index: bars 0..15, mbars 16.. */
static int waits_on(const struct graph *g, uint32_t w)
{
	if (g->state[w] == W_BAR)
		return g->bar[w];
	if ((g->state[w] == W_MBAR || (g->state[w] == W_RUN && g->spin[w])) &&
	    g->mbar[w] >= 0)
		return VGPU_NUM_NAMED_BARRIERS + g->mbar[w];
	return -1;
}

static uint32_t needs(const struct graph *g, int obj)
{
	return obj < (int)VGPU_NUM_NAMED_BARRIERS ? bar_needs(g, (uint32_t)obj) :
		mbar_needs(g, (uint32_t)obj - VGPU_NUM_NAMED_BARRIERS);
}

/*
 * Warps on a cycle warp -> object -> warp ...: the warps from which a
 * walk along "waits" and "would arrive" edges comes back to themselves.
 */
static uint32_t cycle_warps(const struct graph *g)
{
	uint32_t on = 0;

	for (uint32_t s = 0; s < g->nwarps; s++) {
		uint32_t seen = 0, frontier = 1u << s;

		if (waits_on(g, s) < 0)
			continue;
		while (frontier) {
			uint32_t next = 0;

			VGPU_FOR_EACH_BIT(frontier, w) {
				int o = waits_on(g, w);

				if (o >= 0)
					next |= needs(g, o);
			}
			if (next >> s & 1) {
				on |= 1u << s;
				break;
			}
			seen |= frontier;
			frontier = next & ~seen;
		}
	}
	return on;
}

static void obj_name(const struct graph *g, int o, char *buf, size_t len)
{
	if (o < (int)VGPU_NUM_NAMED_BARRIERS)
		snprintf(buf, len, "b%d", o);
	else
		snprintf(buf, len, "m%llx",
			 (unsigned long long)g->mbars[o - VGPU_NUM_NAMED_BARRIERS].addr);
}

int vgpu_trace_write_dot(FILE *f, const struct vgpu_trace_event *ev, uint32_t n,
			 const struct vgpu_timeline_info *info)
{
	struct graph g = { .x = info->exc };
	uint32_t cyc, used = 0;
	bool used_mbar[MAX_MBARS] = { false };
	char msg[sizeof(g.x->msg) * 2 + 1];
	size_t k = 0;

	if (!g.x)
		return -ENOENT;
	g.nwarps = info->nwarps < NW ? info->nwarps : NW;
	for (uint32_t w = 0; w < NW; w++)
		g.mbar[w] = -1;
	replay(&g, ev, n);
	states(&g);
	cyc = cycle_warps(&g);

	for (size_t i = 0; i < sizeof(g.x->msg) && g.x->msg[i]; i++) {
		char ch = g.x->msg[i];

		if (ch == '"' || ch == '\\')
			msg[k++] = '\\';
		msg[k++] = ch >= 0x20 && ch < 0x7f ? ch : '?';
	}
	msg[k] = '\0';
	fprintf(f, "digraph deadlock {\n"
		"  label=\"%s in CTA (%u,%u,%u) of %s\\n%s\";\n"
		"  labelloc=t; rankdir=LR; node [fontname=\"monospace\"];\n",
		vgpu_exception_name(g.x->code), g.x->cta[0], g.x->cta[1],
		g.x->cta[2], info->kernel ? info->kernel : "?", msg);

	/* warps */
	for (uint32_t w = 0; w < g.nwarps; w++) {
		const char *what = g.state[w] == W_EXIT ? "exited" :
				   g.state[w] == W_RUN ? (g.spin[w] ? "spins" : "runnable") :
				   g.state[w] == W_OTHER ? g.other[w] : "waits";

		fprintf(f, "  w%u [shape=box,%s label=\"warp %u\\n%s", w,
			g.state[w] == W_EXIT ? " style=dashed," :
			cyc >> w & 1 ? " color=red, penwidth=2," : "", w, what);
		if (g.pc[w])
			fprintf(f, "\\npc 0x%x", g.pc[w]);
		fprintf(f, "\"];\n");
		if (waits_on(&g, w) >= 0) {
			int o = waits_on(&g, w);
			char name[32];

			if (o < (int)VGPU_NUM_NAMED_BARRIERS)
				used |= 1u << o;
			else
				used_mbar[o - VGPU_NUM_NAMED_BARRIERS] = true;
			obj_name(&g, o, name, sizeof(name));
			fprintf(f, "  w%u -> %s [label=\"%s\"%s];\n", w, name,
				g.state[w] == W_RUN ? "spins on" : "waits",
				cyc >> w & 1 ? ", color=red, penwidth=2" : "");
		} else if (g.state[w] == W_MBAR) {
			fprintf(f, "  w%u -> unknown_mbar [label=\"waits\"];\n", w);
			fprintf(f, "  unknown_mbar [shape=diamond, label=\"an mbarrier\\n(no timeline)\"];\n");
		}
	}
	/* objects, and who would arrive on them */
	for (int o = 0; o < (int)(VGPU_NUM_NAMED_BARRIERS + g.nmbars); o++) {
		bool is_bar = o < (int)VGPU_NUM_NAMED_BARRIERS;
		uint32_t need;
		char name[32];

		if (is_bar ? !(used >> o & 1) : !used_mbar[o - VGPU_NUM_NAMED_BARRIERS])
			continue;
		need = needs(&g, o);
		obj_name(&g, o, name, sizeof(name));
		if (is_bar) {
			fprintf(f, "  %s [shape=ellipse, label=\"barrier %d\\n%u of %u threads arrived\"%s];\n",
				name, o, g.bar_count[o], g.bar_expected[o],
				need ? "" : ", color=red, penwidth=2, xlabel=\"missing arrivals\"");
		} else {
			const struct mbar *m = &g.mbars[o - VGPU_NUM_NAMED_BARRIERS];

			fprintf(f, "  %s [shape=diamond, label=\"mbarrier 0x%llx\\nphase %u",
				name, (unsigned long long)m->addr, m->phase);
			if (m->have_pending)
				fprintf(f, ", %u pending", m->pending);
			fprintf(f, "\"%s];\n",
				need ? "" : ", color=red, penwidth=2, xlabel=\"missing arrival: nobody live arrives\"");
		}
		VGPU_FOR_EACH_BIT(need, w)
			fprintf(f, "  %s -> w%u [label=\"would arrive\", style=dashed%s];\n",
				name, w, cyc >> w & 1 ? ", color=red" : "");
	}
	fprintf(f, "}\n");
	return fflush(f) || ferror(f) ? -EIO : 0;
}
