/* SPDX-License-Identifier: MIT */
/*
 * The wait-for graph of a stopped CTA, as Graphviz DOT: one piece of code
 * for libvgpu (vgpu_job_write_deadlock_graph, vgpu-run --deadlock-graph)
 * and vgpu.ko (the devcoredump of a job that timed out).  Header-only,
 * plain C that builds in the kernel and in user space.
 *
 * Nodes: the CTA's warps (boxes), the named barriers and mbarriers they
 * wait on (ellipses, diamonds).  Edges: "waits" from a warp to what it
 * waits on; "would arrive" (dashed) from an object to each live warp
 * expected to arrive on it that has not in the current phase: for a named
 * barrier every live warp not yet arrived, for an mbarrier the warps known
 * to have arrived on it in earlier phases.  A cycle of these edges is the
 * deadlock: drawn red.  An object no live warp would arrive on is missing
 * its arrivals: drawn red, and says so.
 *
 * Fill a struct vgpu_waitgraph with vgpu_wg_init() from the exception
 * record (what each warp waits on when the CTA stopped); a caller that
 * knows more (libvgpu's timeline: mbarrier addresses, who arrived where)
 * adds it with vgpu_wg_mbar() and the arrival masks before vgpu_wg_print().
 */
#ifndef VGPU_WAITGRAPH_H
#define VGPU_WAITGRAPH_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#endif

#include "vgpu_hw.h"

#define VGPU_WG_MAX_MBARS 64u

enum vgpu_wg_state { VGPU_WG_RUN, VGPU_WG_BAR, VGPU_WG_MBAR, VGPU_WG_EXIT, VGPU_WG_OTHER };

struct vgpu_wg_mbar {
	__u64 addr;
	__u32 phase, pending;
	bool have_pending;
	__u32 ever, cur; /* warps that arrived: ever, in this phase */
};

struct vgpu_waitgraph {
	const struct vgpu_exception_record *x;
	__u32 nwarps;
	__u8 state[VGPU_MAX_WARPS_PER_CTA];
	__u8 bar[VGPU_MAX_WARPS_PER_CTA];	/* VGPU_WG_BAR: which */
	int mbar[VGPU_MAX_WARPS_PER_CTA];	/* VGPU_WG_MBAR: index, -1 unknown */
	bool spin[VGPU_MAX_WARPS_PER_CTA];	/* runnable, spinning on mbar[] */
	const char *other[VGPU_MAX_WARPS_PER_CTA];
	__u32 bar_arrived[VGPU_NUM_NAMED_BARRIERS]; /* warps, this round */
	__u32 bar_known;	/* barriers whose counts below are known */
	__u32 bar_count[VGPU_NUM_NAMED_BARRIERS];
	__u32 bar_expected[VGPU_NUM_NAMED_BARRIERS];
	struct vgpu_wg_mbar mbars[VGPU_WG_MAX_MBARS];
	__u32 nmbars;
};

/* printf-like sink: fprintf to a FILE, or scnprintf into a buffer */
typedef void (*vgpu_wg_print_fn)(void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Index of the mbarrier at @addr, added if new; -1 when the table is full. */
static inline int vgpu_wg_mbar(struct vgpu_waitgraph *g, __u64 addr)
{
	__u32 i;

	for (i = 0; i < g->nmbars; i++)
		if (g->mbars[i].addr == addr)
			return (int)i;
	if (g->nmbars == VGPU_WG_MAX_MBARS)
		return -1;
	g->mbars[g->nmbars].addr = addr;
	g->mbars[g->nmbars].phase = 0;
	g->mbars[g->nmbars].pending = 0;
	g->mbars[g->nmbars].have_pending = false;
	g->mbars[g->nmbars].ever = 0;
	g->mbars[g->nmbars].cur = 0;
	return (int)g->nmbars++;
}

/* Start a graph for record @x of a CTA of @nwarps warps. */
static inline void vgpu_wg_init(struct vgpu_waitgraph *g,
				const struct vgpu_exception_record *x, __u32 nwarps)
{
	__u32 w;

	__builtin_memset(g, 0, sizeof(*g));
	g->x = x;
	g->nwarps = nwarps < VGPU_MAX_WARPS_PER_CTA ? nwarps : VGPU_MAX_WARPS_PER_CTA;
	for (w = 0; w < VGPU_MAX_WARPS_PER_CTA; w++)
		g->mbar[w] = -1;
}

/* The warps' states as the record gives them (after what a caller added). */
static inline void vgpu_wg_states(struct vgpu_waitgraph *g)
{
	const struct vgpu_exception_record *x = g->x;
	__u32 w;

	for (w = 0; w < g->nwarps; w++) {
		__u8 s = x->warp_wait[w];

		if (s < VGPU_NUM_NAMED_BARRIERS) {
			g->state[w] = VGPU_WG_BAR;
			g->bar[w] = s;
		} else if (s == VGPU_WAIT_MBAR) {
			g->state[w] = VGPU_WG_MBAR;
			if (g->mbar[w] < 0 && x->warp == w && x->code == VGPU_EXC_DEADLOCK)
				g->mbar[w] = vgpu_wg_mbar(g, x->addr);
		} else if (s == VGPU_WAIT_EXITED) {
			g->state[w] = VGPU_WG_EXIT;
		} else if (s == VGPU_WAIT_NONE) {
			g->state[w] = VGPU_WG_RUN;
		} else {
			g->state[w] = VGPU_WG_OTHER;
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
		g->bar_known |= 1u << x->barid;
	}
}

/* Live warps that would arrive on object @o (bars 0..15, mbars 16..). */
static inline __u32 vgpu_wg_needs(const struct vgpu_waitgraph *g, int o)
{
	__u32 need = 0, w;

	if (o < (int)VGPU_NUM_NAMED_BARRIERS) {
		for (w = 0; w < g->nwarps; w++)
			if (g->state[w] != VGPU_WG_EXIT && !(g->bar_arrived[o] >> w & 1) &&
			    !(g->state[w] == VGPU_WG_BAR && g->bar[w] == o))
				need |= 1u << w;
		return need;
	}
	o -= VGPU_NUM_NAMED_BARRIERS;
	need = g->mbars[o].ever & ~g->mbars[o].cur;
	for (w = 0; w < g->nwarps; w++)
		if (g->state[w] == VGPU_WG_EXIT)
			need &= ~(1u << w);
	return need;
}

/* The object warp @w waits on (or spins on), -1 none or unknown. */
static inline int vgpu_wg_waits_on(const struct vgpu_waitgraph *g, __u32 w)
{
	if (g->state[w] == VGPU_WG_BAR)
		return g->bar[w];
	if ((g->state[w] == VGPU_WG_MBAR || (g->state[w] == VGPU_WG_RUN && g->spin[w])) &&
	    g->mbar[w] >= 0)
		return (int)VGPU_NUM_NAMED_BARRIERS + g->mbar[w];
	return -1;
}

/* Warps from which "waits" and "would arrive" edges lead back to them. */
static inline __u32 vgpu_wg_cycle(const struct vgpu_waitgraph *g)
{
	__u32 on = 0, s;

	for (s = 0; s < g->nwarps; s++) {
		__u32 seen = 0, frontier = 1u << s;

		if (vgpu_wg_waits_on(g, s) < 0)
			continue;
		while (frontier) {
			__u32 next = 0, m = frontier;

			while (m) {
				__u32 w = (__u32)__builtin_ctz(m);
				int o = vgpu_wg_waits_on(g, w);

				m &= m - 1;
				if (o >= 0)
					next |= vgpu_wg_needs(g, o);
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

static inline void vgpu_wg_obj_name(const struct vgpu_waitgraph *g, int o,
				    vgpu_wg_print_fn p, void *ctx)
{
	if (o < (int)VGPU_NUM_NAMED_BARRIERS)
		p(ctx, "b%d", o);
	else
		p(ctx, "m%llx", (unsigned long long)g->mbars[o - VGPU_NUM_NAMED_BARRIERS].addr);
}

/* The record's message, quoted for DOT. */
static inline void vgpu_wg_message(const struct vgpu_exception_record *x,
				   vgpu_wg_print_fn p, void *ctx)
{
	__u32 i;

	for (i = 0; i < sizeof(x->msg) && x->msg[i]; i++) {
		char c = x->msg[i];

		if (c == '"' || c == '\\')
			p(ctx, "\\%c", c);
		else
			p(ctx, "%c", c >= 0x20 && c < 0x7f ? c : '?');
	}
}

/*
 * The graph as DOT; @title names what stopped ("deadlock in CTA ..." is
 * added), e.g. the kernel's name.
 */
static inline void vgpu_wg_print(struct vgpu_waitgraph *g, const char *title,
				 vgpu_wg_print_fn p, void *ctx)
{
	const struct vgpu_exception_record *x = g->x;
	bool used_mbar[VGPU_WG_MAX_MBARS];
	__u32 cyc, used = 0, w;
	int o;

	for (o = 0; o < (int)VGPU_WG_MAX_MBARS; o++)
		used_mbar[o] = false;
	vgpu_wg_states(g);
	cyc = vgpu_wg_cycle(g);
	p(ctx, "digraph deadlock {\n  label=\"%s in CTA (%u,%u,%u) of %s\\n",
	  x->code == VGPU_EXC_DEADLOCK ? "deadlock" : "stopped", x->cta[0], x->cta[1],
	  x->cta[2], title);
	vgpu_wg_message(x, p, ctx);
	p(ctx, "\";\n  labelloc=t; rankdir=LR; node [fontname=\"monospace\"];\n");
	for (w = 0; w < g->nwarps; w++) {
		const char *what = g->state[w] == VGPU_WG_EXIT ? "exited" :
				   g->state[w] == VGPU_WG_RUN ? (g->spin[w] ? "spins" : "runnable") :
				   g->state[w] == VGPU_WG_OTHER ? g->other[w] : "waits";

		o = vgpu_wg_waits_on(g, w);
		p(ctx, "  w%u [shape=box,%s label=\"warp %u\\n%s", w,
		  g->state[w] == VGPU_WG_EXIT ? " style=dashed," :
		  cyc >> w & 1 ? " color=red, penwidth=2," : "", w, what);
		if (x->warp == w && x->pc)
			p(ctx, "\\npc 0x%x", x->pc);
		p(ctx, "\"];\n");
		if (o >= 0) {
			if (o < (int)VGPU_NUM_NAMED_BARRIERS)
				used |= 1u << o;
			else
				used_mbar[o - VGPU_NUM_NAMED_BARRIERS] = true;
			p(ctx, "  w%u -> ", w);
			vgpu_wg_obj_name(g, o, p, ctx);
			p(ctx, " [label=\"%s\"%s];\n",
			  g->state[w] == VGPU_WG_RUN ? "spins on" : "waits",
			  cyc >> w & 1 ? ", color=red, penwidth=2" : "");
		} else if (g->state[w] == VGPU_WG_MBAR) {
			p(ctx, "  w%u -> unknown_mbar [label=\"waits\"];\n", w);
			p(ctx, "  unknown_mbar [shape=diamond, label=\"an mbarrier\\n(no timeline)\"];\n");
		}
	}
	for (o = 0; o < (int)(VGPU_NUM_NAMED_BARRIERS + g->nmbars); o++) {
		bool is_bar = o < (int)VGPU_NUM_NAMED_BARRIERS;
		__u32 need, m;

		if (is_bar ? !(used >> o & 1) : !used_mbar[o - VGPU_NUM_NAMED_BARRIERS])
			continue;
		need = vgpu_wg_needs(g, o);
		p(ctx, "  ");
		vgpu_wg_obj_name(g, o, p, ctx);
		if (is_bar) {
			p(ctx, " [shape=ellipse, label=\"barrier %d", o);
			if (g->bar_known >> o & 1)
				p(ctx, "\\n%u of %u threads arrived", g->bar_count[o],
				  g->bar_expected[o]);
			p(ctx, "\"%s];\n",
			  need ? "" : ", color=red, penwidth=2, xlabel=\"missing arrivals\"");
		} else {
			const struct vgpu_wg_mbar *mb = &g->mbars[o - VGPU_NUM_NAMED_BARRIERS];

			p(ctx, " [shape=diamond, label=\"mbarrier 0x%llx\\nphase %u",
			  (unsigned long long)mb->addr, mb->phase);
			if (mb->have_pending)
				p(ctx, ", %u pending", mb->pending);
			p(ctx, "\"%s];\n",
			  need ? "" : ", color=red, penwidth=2, xlabel=\"missing arrival: nobody live arrives\"");
		}
		for (m = need; m; m &= m - 1) {
			w = (__u32)__builtin_ctz(m);
			p(ctx, "  ");
			vgpu_wg_obj_name(g, o, p, ctx);
			p(ctx, " -> w%u [label=\"would arrive\", style=dashed%s];\n", w,
			  cyc >> w & 1 ? ", color=red" : "");
		}
	}
	p(ctx, "}\n");
}

#endif /* VGPU_WAITGRAPH_H */
