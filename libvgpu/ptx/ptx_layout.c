// SPDX-License-Identifier: MIT
/*
 * PTX block layout for barriers at joins (ptx_layout_barriers()).
 *
 * vGPU runs a diverged warp's lanes with the lowest pc first (docs/core.md,
 * SIMT), so the two sides of a branch reconverge where they meet when the
 * join comes after both.  clang lays a loop's latch, which holds the
 * __syncthreads() after an if/else in the loop, before the else side
 * (`@p bra LATCH; ...else...; bra LATCH`, the latch above): the lanes that
 * branched reach BAR.SYNC first and block the whole warp as arrived while
 * the others have not stored yet (and so with a latch that falls through
 * into a header holding the barrier).  ptxas reconverges the warp at the
 * join; here, a kernel with a barrier and a forward edge (not a loop's
 * back edge) to a block laid out above its source has its blocks laid
 * out in reverse post-order, which puts every join after its forward
 * predecessors (loop headers stay first; fall-throughs that no longer
 * fall through become branches).  Other kernels are left as they are.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

struct blk {
	int first, end;	 /* insns [first, end) */
	int succ[2], ns; /* successors: the branch target, then the fall-through */
	int fall;	 /* the fall-through successor or -1 */
};

static bool is_label(const struct ptx_insn *in)
{
	return !in->op[0] && in->label[0];
}

static bool has_mod(const struct ptx_insn *in, const char *m)
{
	for (int i = 0; i < in->nmods; i++)
		if (!strcmp(in->mods[i], m))
			return true;
	return false;
}

/* ends its block: control does not simply go on to the next instruction */
static bool ends_block(const struct ptx_insn *in)
{
	return !strcmp(in->op, "bra") || !strcmp(in->op, "ret") || !strcmp(in->op, "exit") ||
	       !strcmp(in->op, "trap");
}

static int find_label(const struct ptx_func *f, const struct blk *b, int nb, const char *name)
{
	for (int k = 0; k < nb; k++)
		for (int i = b[k].first; i < b[k].end && is_label(&f->insns[i]); i++)
			if (!strcmp(f->insns[i].label, name))
				return k;
	return -1;
}

static void set_insn(struct ptx_insn *in, const struct ptx_insn *at)
{
	memset(in, 0, sizeof(*in));
	in->line = at->line;
	in->col = at->col;
	in->guard = -1;
}

int ptx_layout_barriers(struct ptx_func *f)
{
	int n = f->ninsns, nb = 0, *rpo = NULL, *pos = NULL, *stack = NULL, *next = NULL;
	int norder = 0, nout = 0, ret = 0;
	struct blk *b = NULL;
	bool *seen = NULL, *need_label = NULL, trigger = false, barrier = false;
	struct ptx_insn *out = NULL;

	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++) { /* indirect branches: left as they are */
		const struct ptx_insn *in = &f->insns[i];

		if (!strcmp(in->op, "brx") || !strcmp(in->op, "branchtargets"))
			return 0;
		if ((!strcmp(in->op, "bar") || !strcmp(in->op, "barrier")) && !has_mod(in, ".warp"))
			barrier = true;
	}
	if (!barrier) /* nothing to reconverge for */
		return 0;
	b = calloc((size_t)n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const struct ptx_insn *in = &f->insns[i];
		bool start = i == 0 || (is_label(in) && !is_label(&f->insns[i - 1])) ||
			     ends_block(&f->insns[i - 1]);

		if (start) {
			if (nb)
				b[nb - 1].end = i;
			b[nb++].first = i;
		}
	}
	b[nb - 1].end = n;
	for (int k = 0; k < nb; k++) {
		const struct ptx_insn *last = &f->insns[b[k].end - 1];
		bool cond = last->guard >= 0;

		b[k].fall = -1;
		if (!strcmp(last->op, "bra")) {
			int t = last->nops == 1 && last->ops[0].kind == PTX_O_SYM ?
					find_label(f, b, nb, last->ops[0].sym) : -1;

			if (t < 0)
				goto out; /* an unknown target: the lowering says so */
			b[k].succ[b[k].ns++] = t;
		}
		if (!ends_block(last) || cond) {
			if (k + 1 == nb)
				goto out; /* falls off the end: left as it is */
			b[k].fall = k + 1;
			b[k].succ[b[k].ns++] = k + 1;
		}
	}

	/* reverse post-order from the entry: successors visited target first,
	 * so that the fall-through comes right after its block */
	rpo = malloc((size_t)nb * sizeof(int));
	pos = malloc((size_t)nb * sizeof(int));
	stack = malloc((size_t)nb * sizeof(int));
	next = calloc((size_t)nb, sizeof(int));
	seen = calloc((size_t)nb, sizeof(bool));
	if (!rpo || !pos || !stack || !next || !seen) {
		ret = -ENOMEM;
		goto out;
	}
	{
		int sp = 0, post = nb;

		stack[sp++] = 0;
		seen[0] = true;
		while (sp) {
			int k = stack[sp - 1];

			if (next[k] < b[k].ns) {
				int s = b[k].succ[next[k]++];

				if (!seen[s]) {
					seen[s] = true;
					stack[sp++] = s;
				}
				continue;
			}
			rpo[--post] = k;
			sp--;
		}
		/* the unreachable blocks: none after the reachable ones */
		norder = nb - post;
		memmove(rpo, rpo + post, (size_t)norder * sizeof(int));
	}
	for (int k = 0; k < nb; k++)
		pos[k] = -1;
	for (int r = 0; r < norder; r++)
		pos[rpo[r]] = r;
	for (int k = 0; k < nb && !trigger; k++)
		for (int s = 0; s < b[k].ns && pos[k] >= 0; s++) {
			int t = b[k].succ[s];

			/* a forward edge to a block laid out before its source */
			if (pos[k] < pos[t] && k > t)
				trigger = true;
		}
	if (!trigger)
		goto out;
	for (int k = 0; k < nb; k++) /* keep the unreachable ones, in order, at the end */
		if (pos[k] < 0)
			rpo[norder++] = k;

	need_label = calloc((size_t)nb, sizeof(bool));
	out = calloc((size_t)n + 2 * (size_t)nb, sizeof(*out));
	if (!need_label || !out) {
		ret = -ENOMEM;
		goto out;
	}
	for (int r = 0; r < norder; r++) {
		int k = rpo[r], fl = b[k].fall;

		if (fl >= 0 && (r + 1 == norder || rpo[r + 1] != fl) && !is_label(&f->insns[b[fl].first]))
			need_label[fl] = true;
	}
	for (int r = 0; r < norder; r++) {
		int k = rpo[r], fl = b[k].fall;

		if (need_label[k]) {
			set_insn(&out[nout], &f->insns[b[k].first]);
			snprintf(out[nout++].label, PTX_NAME_MAX, "$Lrpo%d", k);
		}
		for (int i = b[k].first; i < b[k].end; i++)
			out[nout++] = f->insns[i];
		if (fl >= 0 && (r + 1 == norder || rpo[r + 1] != fl)) {
			struct ptx_insn *br = &out[nout++];

			set_insn(br, &f->insns[b[k].end - 1]);
			snprintf(br->op, sizeof(br->op), "bra");
			br->nops = 1;
			br->ops[0].kind = PTX_O_SYM;
			br->ops[0].reg = -1;
			br->ops[0].preg = -1;
			if (need_label[fl])
				snprintf(br->ops[0].sym, PTX_NAME_MAX, "$Lrpo%d", fl);
			else
				snprintf(br->ops[0].sym, PTX_NAME_MAX, "%s",
					 f->insns[b[fl].first].label);
		}
	}
	free(f->insns);
	f->insns = out;
	f->ninsns = nout;
	f->insns_cap = n + 2 * nb;
	out = NULL;
out:
	free(out);
	free(need_label);
	free(seen);
	free(next);
	free(stack);
	free(pos);
	free(rpo);
	free(b);
	return ret;
}
