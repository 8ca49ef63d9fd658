// SPDX-License-Identifier: MIT
/*
 * Register allocation for lowered PTX: basic blocks and their successors,
 * liveness by the usual backward dataflow over bit sets, one interval per
 * virtual register (the hull of every point where it is live or named:
 * conservative, no holes), then linear scan: R0..R254 for values (a pair
 * or a range takes consecutive registers, pairs start even), P0..P5 for
 * predicates (P6 is the lowering's scratch); when more predicates are
 * live at once, some live in registers (pred_spill()).
 *
 * Spilling: when values do not fit, the first allocation fails with
 * -ENOSPC and ptx.c lowers the kernel again in spill mode (struct
 * ptx_code): R239..R254 are kept back, and when no register is free the
 * interval that ends last (the one at hand, or an allocated one of its
 * width) lives in a slot of the thread's .local frame for its whole life.
 * Each instruction that names a spilled value then works on scratch
 * registers: loaded from the slot before it (when it reads the value,
 * writes part of it or is guarded), stored after it (when it writes).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "vgpu_isa.h"

#define NGPR 255 /* R0..R254 */
#define NPRED 6	 /* P0..P5 */
#define SCRATCH0 239 /* spill mode: R239..R254 for reloads */

typedef uint64_t word_t;
#define WBITS 64

struct block {
	int first, last; /* instruction range */
	int succ[2], nsucc;
};

static bool bit(const word_t *s, int i)
{
	return (s[i / WBITS] >> (i % WBITS)) & 1;
}

static void set_bit(word_t *s, int i)
{
	s[i / WBITS] |= (word_t)1 << (i % WBITS);
}

/* Does operand @o kill its register (a full, unconditional write)? */
static bool kills(const struct ptx_vinsn *in, const struct ptx_vop *o)
{
	return o->def && !o->partial && in->guard < 0 &&
	       (o->kind == PTX_V_REG || o->kind == PTX_V_PRED) && o->v >= 0;
}

/* Registers an operand reads (none for a pure write). */
static int reads(const struct ptx_vop *o)
{
	if ((o->kind == PTX_V_REG || o->kind == PTX_V_PRED || o->kind == PTX_V_MEM) &&
	    o->v >= 0 && !o->def)
		return o->v;
	return -1;
}

/* Is insn @i "MOV v.part, s.part" (unguarded, whole registers)?  s, or -1. */
static int mov_from(const struct ptx_code *c, int i, int v, int part)
{
	const struct ptx_vinsn *t;

	if (i >= c->n)
		return -1;
	t = &c->insns[i];
	if (strcmp(t->mnem, "MOV") || t->guard >= 0 || t->nops != 2 ||
	    t->ops[0].kind != PTX_V_REG || !t->ops[0].def || t->ops[0].v != v ||
	    t->ops[0].part != part || t->ops[1].kind != PTX_V_REG || t->ops[1].def ||
	    t->ops[1].v < 0 || t->ops[1].v == v || t->ops[1].part != part)
		return -1;
	return t->ops[1].v;
}

/*
 * Copy coalescing: vreg @v starts at @at with a copy of a whole vreg of
 * its width (one MOV, or two for a pair); that vreg, or -1.  The caller
 * gives @v its registers when the source's interval ends at the copy:
 * the MOVs become self-moves, which ptx.c leaves out.
 */
static int coalesce_src(const struct ptx_code *c, int v, int at)
{
	int w = c->vregs[v].width, s = mov_from(c, at, v, 0);

	if (s < 0 || c->vregs[s].width != w || (w != 1 && w != 2))
		return -1;
	if (w == 2 && mov_from(c, at + 1, v, 1) != s)
		return -1;
	return s;
}

static int label_at(const struct ptx_code *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (c->insns[i].label[0] && !strcmp(c->insns[i].label, name))
			return i;
	return -1;
}

struct interval {
	int v, start, end;
};

static int by_start(const void *a, const void *b)
{
	const struct interval *x = a, *y = b;

	return x->start != y->start ? x->start - y->start : x->v - y->v;
}

/* A new vreg of @w words that is registers @phys.. (scratch). */
static int fixed_vreg(struct ptx_code *c, int w, int phys)
{
	if (c->nv == c->vcap) {
		int ncap = c->vcap ? 2 * c->vcap : 64;
		struct ptx_vreg *p = realloc(c->vregs, (size_t)ncap * sizeof(*p));

		if (!p)
			return -1;
		c->vregs = p;
		c->vcap = ncap;
	}
	c->vregs[c->nv].width = (uint8_t)w;
	c->vregs[c->nv].fixed = phys >= 0;
	c->vregs[c->nv].phys = phys;
	return c->nv++;
}

#define PSCRATCH0 3 /* predicate spilling: P3..P5 for reloads */

/*
 * More predicates live at once than P0..P5 hold: choose the ones to
 * spill by a linear scan over P0..P2 that spills, when none is free, the
 * interval that ends last; each becomes a 32-bit register (0 or 1, so the
 * register allocator may spill it on to local memory in turn) and every
 * instruction naming it works on one of P3..P5: ISETP.NE from the
 * register before it (when it reads the predicate, or writes it under a
 * guard), SEL into the register after it (when it writes it).
 */
static int pred_spill(struct ptx_code *c, const struct interval *iv, int niv)
{
	int nv = c->nv, *gpr = malloc(((size_t)nv + 1) * sizeof(int)), pend[PSCRATCH0];
	int *act = malloc(((size_t)niv + 1) * sizeof(int)), nact = 0, n = 0, cap;
	struct ptx_vinsn *out = NULL;

	if (!gpr || !act)
		goto oom;
	for (int v = 0; v < nv; v++)
		gpr[v] = -1;
	for (int r = 0; r < PSCRATCH0; r++)
		pend[r] = -1;
	for (int k = 0; k < niv; k++) {
		int v = iv[k].v, r, victim = k;

		if (c->vregs[v].width || c->vregs[v].fixed)
			continue;
		for (r = 0; r < PSCRATCH0 && pend[r] >= iv[k].start; r++)
			;
		if (r < PSCRATCH0) {
			pend[r] = iv[k].end;
			act[nact++] = k;
			continue;
		}
		/* spill the active one ending last, or this one */
		for (int a = 0; a < nact; a++)
			if (gpr[iv[act[a]].v] < 0 && iv[act[a]].end >= iv[k].start &&
			    iv[act[a]].end > iv[victim].end)
				victim = act[a];
		if (victim != k) {
			for (r = 0; r < PSCRATCH0 && pend[r] != iv[victim].end; r++)
				;
			if (r < PSCRATCH0)
				pend[r] = iv[k].end;
			act[nact++] = k;
		}
		gpr[iv[victim].v] = 0;
	}
	for (int v = 0; v < nv; v++)
		if (!gpr[v]) {
			gpr[v] = fixed_vreg(c, 1, -1);
			if (gpr[v] < 0)
				goto oom;
		}
	cap = c->n * 4 + 16;
	out = malloc((size_t)cap * sizeof(*out));
	if (!out)
		goto oom;
	for (int i = 0; i < c->n; i++) {
		struct ptx_vinsn t = c->insns[i];
		int sp[3], sv[3], ns = 0;
		bool ld[3] = { false }, st[3] = { false };

		for (int o = -1; o < t.nops; o++) {
			int *pv = o < 0 ? &t.guard : &t.ops[o].v, k;
			bool def = o >= 0 && t.ops[o].def;

			if ((o >= 0 && t.ops[o].kind != PTX_V_PRED) || *pv < 0 || *pv >= nv ||
			    gpr[*pv] < 0)
				continue;
			for (k = 0; k < ns && sp[k] != *pv; k++)
				;
			if (k == ns) {
				if (ns == 3)
					goto oom; /* never: three predicates at most */
				sp[k] = *pv;
				sv[k] = fixed_vreg(c, 0, PSCRATCH0 + k);
				if (sv[k] < 0)
					goto oom;
				ns++;
			}
			if (!def || t.guard >= 0)
				ld[k] = true;
			if (def)
				st[k] = true;
			*pv = sv[k];
		}
		if (n + 2 * ns + 1 > cap) {
			struct ptx_vinsn *p;

			cap = 2 * cap + 8;
			p = realloc(out, (size_t)cap * sizeof(*out));
			if (!p)
				goto oom;
			out = p;
		}
		for (int k = 0; k < ns; k++) {
			struct ptx_vinsn *m = &out[n];

			if (!ld[k])
				continue;
			n++;
			memset(m, 0, sizeof(*m));
			m->line = t.line;
			m->guard = -1;
			snprintf(m->mnem, sizeof(m->mnem), "ISETP.NE.U32");
			m->nops = 3;
			m->ops[0] = (struct ptx_vop){ .kind = PTX_V_PRED, .def = true, .v = sv[k] };
			m->ops[1] = (struct ptx_vop){ .kind = PTX_V_REG, .v = gpr[sp[k]] };
			m->ops[2] = (struct ptx_vop){ .kind = PTX_V_TEXT, .v = -1, .text = "0x0" };
		}
		out[n++] = t;
		for (int k = 0; k < ns; k++) {
			struct ptx_vinsn *m = &out[n];

			if (!st[k])
				continue;
			n++;
			memset(m, 0, sizeof(*m));
			m->line = t.line;
			m->guard = -1;
			snprintf(m->mnem, sizeof(m->mnem), "SEL");
			m->nops = 4;
			m->ops[0] = (struct ptx_vop){ .kind = PTX_V_REG, .def = true, .v = gpr[sp[k]] };
			m->ops[1] = (struct ptx_vop){ .kind = PTX_V_TEXT, .v = -1, .text = "RZ" };
			m->ops[2] = (struct ptx_vop){ .kind = PTX_V_TEXT, .v = -1, .text = "0x1" };
			m->ops[3] = (struct ptx_vop){ .kind = PTX_V_PRED, .neg = true, .v = sv[k] };
		}
	}
	free(c->insns);
	c->insns = out;
	c->n = n;
	c->cap = cap;
	c->pred_spill = true;
	for (int v = 0; v < c->nv; v++)
		if (!c->vregs[v].fixed)
			c->vregs[v].phys = -1;
	free(gpr);
	free(act);
	return 0;
oom:
	free(out);
	free(gpr);
	free(act);
	return -ENOMEM;
}

/* LDG.32 / STG.32 of word @part of scratch vreg @sv at frame offset @off. */
static void spill_move(struct ptx_code *c, struct ptx_vinsn *t, bool load, int sv,
		       int part, uint32_t off, int line)
{
	struct ptx_vop *r, *m;

	memset(t, 0, sizeof(*t));
	t->line = line;
	t->guard = -1;
	snprintf(t->mnem, sizeof(t->mnem), load ? "LDG.32" : "STG.32");
	t->nops = 2;
	r = &t->ops[load ? 0 : 1];
	m = &t->ops[load ? 1 : 0];
	r->kind = PTX_V_REG;
	r->v = sv;
	r->part = (uint8_t)part;
	r->def = load;
	m->kind = PTX_V_MEM;
	m->v = c->spill_base;
	snprintf(m->text, sizeof(m->text), "0x%x", off);
}

/*
 * Rewrite every instruction that names a spilled vreg (@slot[v] >= 0) to
 * work on scratch registers, with reloads before and stores after.
 */
static int spill_rewrite(struct ptx_code *c, const int *slot, int nv0,
			 struct ptx_diag *dg)
{
	int cap = c->n * 3 + 16, n = 0;
	struct ptx_vinsn *out = malloc((size_t)cap * sizeof(*out));

	if (!out)
		return -ENOMEM;
	for (int i = 0; i < c->n; i++) {
		struct ptx_vinsn t = c->insns[i];
		int sp[6], sv[6], ns = 0, cursor = SCRATCH0;
		bool ld[6] = { false }, st[6] = { false };

		for (int o = 0; o < t.nops; o++) {
			struct ptx_vop *op = &t.ops[o];
			int k;

			if ((op->kind != PTX_V_REG && op->kind != PTX_V_MEM) || op->v < 0 ||
			    op->v >= nv0 || slot[op->v] < 0)
				continue;
			for (k = 0; k < ns && sp[k] != op->v; k++)
				;
			if (k == ns) {
				int w = c->vregs[op->v].width;

				if (w >= 2 && cursor % 2)
					cursor++; /* pairs start even */
				if (cursor + w > NGPR) {
					ptx_error(dg, t.line, 1,
						  "too many spilled values in one instruction");
					free(out);
					return -EINVAL;
				}
				sp[k] = op->v;
				sv[k] = fixed_vreg(c, w, cursor);
				if (sv[k] < 0) {
					free(out);
					return -ENOMEM;
				}
				cursor += w;
				ns++;
			}
			/*
			 * Reloaded unless the instruction surely writes all
			 * of it: a def of one word of a wide register is not
			 * "partial" when it completes the value (liveness'
			 * kill), but the store after it writes every word.
			 */
			if (!op->def || op->partial || t.guard >= 0 || c->vregs[op->v].width > 1)
				ld[k] = true;
			if (op->def)
				st[k] = true;
			op->v = sv[k];
		}
		if (n + 2 * 5 * ns + 1 > cap) {
			struct ptx_vinsn *p;

			cap = 2 * cap + 2 * 5 * ns + 1;
			p = realloc(out, (size_t)cap * sizeof(*out));
			if (!p) {
				free(out);
				return -ENOMEM;
			}
			out = p;
		}
		for (int k = 0; k < ns; k++)
			for (int j = 0; ld[k] && j < c->vregs[sp[k]].width; j++)
				spill_move(c, &out[n++], true, sv[k], j,
					   (uint32_t)slot[sp[k]] + 4u * (uint32_t)j, t.line);
		out[n++] = t;
		for (int k = 0; k < ns; k++)
			for (int j = 0; st[k] && j < c->vregs[sp[k]].width; j++)
				spill_move(c, &out[n++], false, sv[k], j,
					   (uint32_t)slot[sp[k]] + 4u * (uint32_t)j, t.line);
	}
	free(c->insns);
	c->insns = out;
	c->n = n;
	c->cap = cap;
	return 0;
}

int ptx_regalloc(const struct ptx_func *f, struct ptx_diag *dg, struct ptx_code *c)
{
	int n = c->n, nv = c->nv, nw = (nv + WBITS - 1) / WBITS, nb = 0, ret = 0;
	int *block_of = calloc((size_t)n + 1, sizeof(int));
	struct block *b = calloc((size_t)n + 1, sizeof(*b));
	word_t *use = calloc((size_t)(n + 1) * (size_t)nw, sizeof(word_t));
	word_t *def = calloc((size_t)(n + 1) * (size_t)nw, sizeof(word_t));
	word_t *in = calloc((size_t)(n + 1) * (size_t)nw, sizeof(word_t));
	word_t *out = calloc((size_t)(n + 1) * (size_t)nw, sizeof(word_t));
	struct interval *iv = calloc((size_t)nv + 1, sizeof(*iv));
	int *start = malloc(((size_t)nv + 1) * sizeof(int));
	int *end = malloc(((size_t)nv + 1) * sizeof(int));
	bool *slotted = calloc((size_t)nv + 1, sizeof(bool));
	bool changed, retry = false;

	(void)f;
	if (!block_of || !b || !use || !def || !in || !out || !iv || !start || !end ||
	    !slotted) {
		ret = -ENOMEM;
		goto done;
	}
	/* blocks */
	for (int i = 0; i < n; i++) {
		bool leader = i == 0 || c->insns[i].label[0] ||
			      c->insns[i - 1].branch || c->insns[i - 1].exit;

		if (leader) {
			if (nb)
				b[nb - 1].last = i - 1;
			b[nb].first = i;
			nb++;
		}
		block_of[i] = nb - 1;
	}
	if (nb)
		b[nb - 1].last = n - 1;
	for (int k = 0; k < nb; k++) {
		const struct ptx_vinsn *t = &c->insns[b[k].last];
		bool falls = !(t->branch || t->exit) || t->guard >= 0;

		if (t->branch) {
			int at = label_at(c, t->ops[0].text);

			if (at >= 0)
				b[k].succ[b[k].nsucc++] = block_of[at];
		}
		if (falls && k + 1 < nb)
			b[k].succ[b[k].nsucc++] = k + 1;
	}
	/* use (read before any kill in the block) and def (killed) sets */
	for (int k = 0; k < nb; k++) {
		word_t *u = use + (size_t)k * nw, *d = def + (size_t)k * nw;

		for (int i = b[k].first; i <= b[k].last; i++) {
			const struct ptx_vinsn *t = &c->insns[i];

			if (t->guard >= 0 && !bit(d, t->guard))
				set_bit(u, t->guard);
			for (int o = 0; o < t->nops; o++) {
				int r = reads(&t->ops[o]);

				if (r >= 0 && !bit(d, r))
					set_bit(u, r);
			}
			for (int o = 0; o < t->nops; o++)
				if (kills(t, &t->ops[o]))
					set_bit(d, t->ops[o].v);
		}
	}
	/* liveness */
	do {
		changed = false;
		for (int k = nb - 1; k >= 0; k--) {
			word_t *o = out + (size_t)k * nw, *i = in + (size_t)k * nw;
			const word_t *u = use + (size_t)k * nw, *d = def + (size_t)k * nw;

			for (int s = 0; s < b[k].nsucc; s++) {
				const word_t *si = in + (size_t)b[k].succ[s] * nw;

				for (int w = 0; w < nw; w++)
					o[w] |= si[w];
			}
			for (int w = 0; w < nw; w++) {
				word_t ni = u[w] | (o[w] & ~d[w]);

				if (ni != i[w]) {
					i[w] = ni;
					changed = true;
				}
			}
		}
	} while (changed);
	/* intervals: the hull of live-in/out block ends and every mention */
	for (int v = 0; v < nv; v++) {
		start[v] = -1;
		end[v] = -1;
	}
#define EXTEND(v, pos)                                                         \
	do {                                                                   \
		if (start[v] < 0 || (pos) < start[v])                          \
			start[v] = (pos);                                      \
		if ((pos) > end[v])                                            \
			end[v] = (pos);                                        \
	} while (0)
	for (int k = 0; k < nb; k++) {
		const word_t *i = in + (size_t)k * nw, *o = out + (size_t)k * nw;

		for (int v = 0; v < nv; v++) {
			if (bit(i, v))
				EXTEND(v, b[k].first);
			if (bit(o, v))
				EXTEND(v, b[k].last);
		}
	}
	for (int i = 0; i < n; i++) {
		const struct ptx_vinsn *t = &c->insns[i];

		if (t->guard >= 0)
			EXTEND(t->guard, i);
		for (int o = 0; o < t->nops; o++) {
			const struct ptx_vop *op = &t->ops[o];

			if ((op->kind == PTX_V_REG || op->kind == PTX_V_PRED ||
			     op->kind == PTX_V_MEM) && op->v >= 0)
				EXTEND(op->v, i);
		}
	}
	/* the spill slots' address is needed everywhere, reloads included */
	if (c->spill_mode && c->spill_base >= 0 && start[c->spill_base] >= 0)
		EXTEND(c->spill_base, n - 1);
#undef EXTEND
	/* linear scan */
	{
		int niv = 0, ngpr = c->spill_mode ? SCRATCH0 : NGPR;

		if (c->calls && ngpr > 234)
			ngpr = 234; /* R234..R238: the call block and its scratch */
		int gpr_end[NGPR], pred_end[NPRED];

		for (int r = 0; r < NGPR; r++)
			gpr_end[r] = -1;
		for (int r = 0; r < NPRED; r++)
			pred_end[r] = -1;
		for (int v = 0; v < nv; v++)
			if (start[v] >= 0)
				iv[niv++] = (struct interval){ v, start[v], end[v] };
		qsort(iv, (size_t)niv, sizeof(*iv), by_start);
		/*
		 * The spill slots' base first: every reload needs it in a
		 * register and it is never spilled, so it takes its registers
		 * for the whole kernel before anything else can.  In its place
		 * in the order it could find none: nvcc -G's kernels read
		 * registers no path defines, live from instruction 0, more
		 * than there are registers (the assembly then named R-1).
		 */
		for (int k = 1; c->spill_mode && c->spill_base >= 0 && k < niv; k++)
			if (iv[k].v == c->spill_base) {
				struct interval sb = iv[k];

				memmove(&iv[1], &iv[0], (size_t)k * sizeof(*iv));
				iv[0] = sb;
				break;
			}
		for (int k = 0; k < niv; k++) {
			struct ptx_vreg *vr = &c->vregs[iv[k].v];
			int w = vr->width, s = iv[k].start;

			if (vr->fixed)
				continue;
			if (!w) {
				for (int r = 0; r < (c->pred_spill ? PSCRATCH0 : NPRED); r++)
					if (pred_end[r] < s) {
						vr->phys = r;
						pred_end[r] = iv[k].end;
						break;
					}
				if (vr->phys < 0 && !c->pred_spill) {
					ret = pred_spill(c, iv, niv);
					retry = !ret;
					goto done;
				}
				if (vr->phys < 0) {
					ptx_error(dg, c->insns[s].line, 1,
						  "internal error: predicates left after spilling");
					ret = -EINVAL;
					goto done;
				}
				continue;
			}
			{
				/* a copy of a value that dies there: the same registers */
				int h = coalesce_src(c, iv[k].v, s);
				int hp = h >= 0 ? c->vregs[h].phys : -1, j;

				if (hp >= 0 && end[h] == s + (w == 2 ? 1 : 0)) {
					for (j = 0; j < w && gpr_end[hp + j] == end[h]; j++)
						;
					if (j == w) {
						vr->phys = hp;
						for (j = 0; j < w; j++)
							gpr_end[hp + j] = iv[k].end;
						continue;
					}
				}
			}
			for (int r = 0; r + w <= ngpr; r += w == 2 ? 2 : 1) {
				int j;

				for (j = 0; j < w && gpr_end[r + j] < s; j++)
					;
				if (j == w) {
					vr->phys = r;
					for (j = 0; j < w; j++)
						gpr_end[r + j] = iv[k].end;
					break;
				}
			}
			if (vr->phys < 0 && !c->spill_mode) {
				ret = -ENOSPC; /* ptx.c tries again, in spill mode */
				goto done;
			}
			if (vr->phys < 0) {
				/* spill what ends last: an allocated interval of
				 * this width (giving its registers), or this one */
				int victim = -1;

				for (int u = 0; u < nv; u++)
					if (c->vregs[u].phys >= 0 && c->vregs[u].width == w &&
					    end[u] >= s && end[u] > iv[k].end && u != c->spill_base &&
					    !slotted[u] && (victim < 0 || end[u] > end[victim]))
						victim = u;
				if (victim >= 0) {
					vr->phys = c->vregs[victim].phys;
					for (int j = 0; j < w; j++)
						gpr_end[vr->phys + j] = iv[k].end;
					c->vregs[victim].phys = -1;
					slotted[victim] = true;
				} else {
					slotted[iv[k].v] = true;
				}
			}
		}
	}
	if (c->spill_mode) {
		uint32_t off = (c->frame_locals + 15) & ~15u;
		int *slot = malloc(((size_t)nv + 1) * sizeof(int));
		bool any = false;

		if (!slot) {
			ret = -ENOMEM;
			goto done;
		}
		for (int v = 0; v < nv; v++) {
			slot[v] = -1;
			if (!slotted[v])
				continue;
			any = true;
			off = (off + 7) & ~7u;
			slot[v] = (int)off;
			off += 4u * c->vregs[v].width;
		}
		off = (off + 15) & ~15u;
		if (off > VGPU_MAX_LOCAL_BYTES) {
			ptx_error(dg, n ? c->insns[0].line : 0, 1,
				  "the spilled registers need %u bytes of .local per thread (at most %u)",
				  off, VGPU_MAX_LOCAL_BYTES);
			ret = -EINVAL;
		} else {
			if (off < 16)
				off = 16;
			c->frame = off;
			for (int i = 0; i < n; i++)
				for (int o = 0; o < c->insns[i].nops; o++)
					if (c->insns[i].ops[o].frame)
						snprintf(c->insns[i].ops[o].text,
							 sizeof(c->insns[i].ops[o].text), "0x%x", off);
			if (any)
				ret = spill_rewrite(c, slot, nv, dg);
		}
		free(slot);
	}
done:
	free(slotted);
	free(block_of);
	free(b);
	free(use);
	free(def);
	free(in);
	free(out);
	free(iv);
	free(start);
	free(end);
	if (retry) /* predicates spilled: allocate the new code */
		return ptx_regalloc(f, dg, c);
	return ret;
}
