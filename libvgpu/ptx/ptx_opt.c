// SPDX-License-Identifier: MIT
/*
 * Clean-up of lowered PTX before register allocation: dead-code
 * elimination at the granularity of 32-bit words.
 *
 * The lowering works on PTX's 64-bit registers word by word, and much of
 * what clang emits is 64-bit address arithmetic whose high word nobody
 * reads (a shared-memory address is one word; a generic one keeps its
 * window tag in the high word only until cvta).  An instruction without
 * side effects whose results (each written word, each predicate) are dead
 * afterwards goes; repeated until nothing more goes.
 *
 * Which words an operand names: a one-word register, its word; a word of a
 * wide register named by a one-word ALU instruction (the "pure32" list:
 * none of them takes a register pair), that word; anything else, every
 * word (a pair for LDG, a token for MBAR, a 64-bit load from the
 * parameters), conservatively.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

typedef uint64_t word_t;
#define WBITS 64

/* Instructions without side effects that read and write single words. */
static const char *const pure32[] = {
	"MOV", "IADD", "ISUB", "IMUL", "IMAD", "SHL", "SHR", "LOP", "SEL",
	"ISETP", "S2R", "FADD", "FMUL", "FFMA", "FSETP", "FMNMX", "IMNMX",
	"I2F", "F2I", "POPC", "FLO", "BREV", "PRMT", "BFE", "BFI", "MUFU",
};

static bool base_is(const char *mnem, const char *base)
{
	size_t n = strlen(base);

	return !strncmp(mnem, base, n) && (mnem[n] == '\0' || mnem[n] == '.');
}

/*
 * Does @t name one word with each register operand (a word of a wide
 * register: that word alone)?  The pure32 list; ptx_regalloc.c's spill
 * code stores only the word such an instruction writes.
 */
bool ptx_vinsn_one_word(const struct ptx_vinsn *t)
{
	for (size_t i = 0; i < sizeof(pure32) / sizeof(pure32[0]); i++)
		if (base_is(t->mnem, pure32[i]))
			return true;
	return false;
}

/* 1: pure, one word per operand; 2: pure, operands may be wide; 0: not pure */
static int purity(const struct ptx_vinsn *t)
{
	if (t->label[0] || t->branch || t->exit || !t->mnem[0])
		return 0;
	/* the clocks change under a loop: never hoisted out of one */
	if (base_is(t->mnem, "S2R") && t->nops == 2 &&
	    (!strncmp(t->ops[1].text, "SR_CLOCK", 8) ||
	     !strncmp(t->ops[1].text, "SR_GLOBALTIMER", 14)))
		return 0;
	for (int i = 0; i < t->nops; i++)
		if (t->ops[i].kind == PTX_V_TEXT && t->ops[i].text[0] == 'R' &&
		    t->ops[i].text[1] >= '0' && t->ops[i].text[1] <= '9')
			return 0; /* the call block (R234..): SALLOC and CALL move it */
	for (size_t i = 0; i < sizeof(pure32) / sizeof(pure32[0]); i++)
		if (base_is(t->mnem, pure32[i]))
			return 1;
	if (base_is(t->mnem, "LDP"))
		return 2; /* a parameter load: LDP.64 writes a pair */
	return 0;
}

struct units {
	int *first; /* per vreg: its first unit */
	int n;
	int p6;	    /* P6, the lowering's scratch predicate (a TEXT operand) */
};

static int width_units(const struct ptx_vreg *r)
{
	return r->width ? r->width : 1;
}

/* Does @t write operand @o?  (The lowering writes P6 as text.) */
static bool is_def(const struct ptx_vinsn *t, const struct ptx_vop *o)
{
	return o->def || (o == &t->ops[0] && o->kind == PTX_V_TEXT && !strcmp(o->text, "P6") &&
			  (base_is(t->mnem, "ISETP") || base_is(t->mnem, "FSETP")));
}

/* An instruction whose memory operand is a shared address (one word). */
static bool shared_mem(const struct ptx_vinsn *t)
{
	return base_is(t->mnem, "LDS") || base_is(t->mnem, "STS") ||
	       base_is(t->mnem, "ATOMS") || !strncmp(t->mnem, "MBAR.", 5);
}

/* Call @fn for each unit operand @o of insn @t names. */
static void op_units(const struct ptx_code *c, const struct units *u,
		     const struct ptx_vinsn *t, const struct ptx_vop *o,
		     void (*fn)(void *, int), void *ctx)
{
	int w;

	if (o->kind == PTX_V_TEXT && (!strcmp(o->text, "P6") || !strcmp(o->text, "!P6"))) {
		fn(ctx, u->p6);
		return;
	}
	if ((o->kind != PTX_V_REG && o->kind != PTX_V_PRED && o->kind != PTX_V_MEM) ||
	    o->v < 0)
		return;
	w = width_units(&c->vregs[o->v]);
	if (w == 1) {
		fn(ctx, u->first[o->v]);
	} else if (o->kind == PTX_V_REG && purity(t) == 1) {
		fn(ctx, u->first[o->v] + o->part);
	} else if (o->kind == PTX_V_MEM && shared_mem(t)) {
		fn(ctx, u->first[o->v] + o->part); /* a shared address: one word */
	} else {
		for (int k = 0; k < w; k++)
			fn(ctx, u->first[o->v] + k);
	}
}

static void set_fn(void *ctx, int i)
{
	((word_t *)ctx)[i / WBITS] |= (word_t)1 << (i % WBITS);
}

static void clr_fn(void *ctx, int i)
{
	((word_t *)ctx)[i / WBITS] &= ~((word_t)1 << (i % WBITS));
}

struct any_ctx {
	const word_t *live;
	bool any;
};

static void any_fn(void *ctx, int i)
{
	struct any_ctx *a = ctx;

	if ((a->live[i / WBITS] >> (i % WBITS)) & 1)
		a->any = true;
}

static int label_index(const struct ptx_code *c, const char *name)
{
	for (int i = 0; i < c->n; i++)
		if (c->insns[i].label[0] && !strcmp(c->insns[i].label, name))
			return i;
	return -1;
}

/*
 * Does @op of @t certainly write all the words op_units() names?  Only
 * then does the write kill them (a wide register named by anything but a
 * one-word ALU instruction may be written in part: kill nothing).
 */
static bool kills(const struct ptx_code *c, const struct ptx_vinsn *t,
		  const struct ptx_vop *op)
{
	if (!is_def(t, op) || t->guard >= 0 || op->kind == PTX_V_MEM)
		return false;
	if (op->kind == PTX_V_TEXT)
		return true; /* P6 */
	if (op->v < 0)
		return false;
	/* a one-word instruction writes its word whole; "partial" says
	 * that the register's other words stay */
	if (op->kind == PTX_V_REG && purity(t) == 1)
		return true;
	return !op->partial && width_units(&c->vregs[op->v]) == 1;
}

/* Step @live back over @t: the words it kills go, the words it reads come. */
static void step_back(const struct ptx_code *c, const struct units *u,
		      const struct ptx_vinsn *t, word_t *live)
{
	for (int o = 0; o < t->nops; o++) {
		const struct ptx_vop *op = &t->ops[o];

		if (kills(c, t, op))
			op_units(c, u, t, op, clr_fn, live);
	}
	if (t->guard >= 0)
		set_fn(live, u->first[t->guard]);
	for (int o = 0; o < t->nops; o++) {
		const struct ptx_vop *op = &t->ops[o];

		if (!is_def(t, op) || op->kind == PTX_V_MEM)
			op_units(c, u, t, op, set_fn, live);
	}
}

/* One round: remove what is dead; how many went (-ENOMEM). */
static int dce_round(struct ptx_code *c, const struct units *u)
{
	int n = c->n, nw = (u->n + WBITS - 1) / WBITS, nb = 0, removed = 0;
	int *bfirst = malloc(((size_t)n + 1) * sizeof(int));
	int *blast = malloc(((size_t)n + 1) * sizeof(int));
	int *bof = malloc(((size_t)n + 1) * sizeof(int));
	int (*succ)[2] = malloc(((size_t)n + 1) * sizeof(*succ));
	word_t *in = calloc(((size_t)n + 1) * (size_t)nw, sizeof(word_t));
	word_t *live = calloc((size_t)nw + 1, sizeof(word_t));
	bool *dead = calloc((size_t)n + 1, sizeof(bool));
	bool changed;

	if (!bfirst || !blast || !bof || !succ || !in || !live || !dead) {
		removed = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (i == 0 || c->insns[i].label[0] || c->insns[i - 1].branch ||
		    c->insns[i - 1].exit) {
			if (nb)
				blast[nb - 1] = i - 1;
			bfirst[nb++] = i;
		}
		bof[i] = nb - 1;
	}
	if (nb)
		blast[nb - 1] = n - 1;
	for (int k = 0; k < nb; k++) {
		const struct ptx_vinsn *t = &c->insns[blast[k]];
		bool falls = !(t->branch || t->exit) || t->guard >= 0;

		succ[k][0] = succ[k][1] = -1;
		if (t->branch) {
			int at = label_index(c, t->ops[0].text);

			/* a branch out of the code (none today): keep everything */
			succ[k][0] = at >= 0 ? bof[at] : -2;
		}
		if (falls && k + 1 < nb)
			succ[k][1] = k + 1;
	}
	/* live-in of each block, to a fixed point */
	do {
		changed = false;
		for (int k = nb - 1; k >= 0; k--) {
			word_t *bi = in + (size_t)k * nw;

			memset(live, 0, (size_t)nw * sizeof(word_t));
			for (int s = 0; s < 2; s++) {
				if (succ[k][s] == -2)
					memset(live, 0xff, (size_t)nw * sizeof(word_t));
				else if (succ[k][s] >= 0)
					for (int w = 0; w < nw; w++)
						live[w] |= in[(size_t)succ[k][s] * nw + w];
			}
			for (int i = blast[k]; i >= bfirst[k]; i--)
				step_back(c, u, &c->insns[i], live);
			if (memcmp(bi, live, (size_t)nw * sizeof(word_t))) {
				memcpy(bi, live, (size_t)nw * sizeof(word_t));
				changed = true;
			}
		}
	} while (changed);
	/* walk each block back from its live-out, dropping dead pure code */
	for (int k = 0; k < nb; k++) {
		memset(live, 0, (size_t)nw * sizeof(word_t));
		for (int s = 0; s < 2; s++) {
			if (succ[k][s] == -2)
				memset(live, 0xff, (size_t)nw * sizeof(word_t));
			else if (succ[k][s] >= 0)
				for (int w = 0; w < nw; w++)
					live[w] |= in[(size_t)succ[k][s] * nw + w];
		}
		for (int i = blast[k]; i >= bfirst[k]; i--) {
			const struct ptx_vinsn *t = &c->insns[i];

			if (purity(t)) {
				struct any_ctx a = { live, false };
				bool defs = false;

				for (int o = 0; o < t->nops; o++)
					/* spill mode: the reloads regalloc adds use it */
					if (c->spill_mode && t->ops[o].def && t->ops[o].v >= 0 &&
					    t->ops[o].kind == PTX_V_REG && t->ops[o].v == c->spill_base)
						a.any = true;
				for (int o = 0; o < t->nops; o++)
					if (is_def(t, &t->ops[o]) && t->ops[o].kind != PTX_V_MEM) {
						/* a def of RZ (TEXT) names no word:
						 * only then is it dead at once */
						op_units(c, u, t, &t->ops[o], any_fn, &a);
						defs = true;
					}
				if (defs && !a.any) {
					dead[i] = true;
					removed++;
					continue;
				}
			}
			step_back(c, u, t, live);
		}
	}
	if (removed) {
		int j = 0;

		for (int i = 0; i < n; i++)
			if (!dead[i])
				c->insns[j++] = c->insns[i];
		c->n = j;
	}
out:
	free(bfirst);
	free(blast);
	free(bof);
	free(succ);
	free(in);
	free(live);
	free(dead);
	return removed;
}

/* The word operand @o names: (v, part), or v = -1. */
static void word_of(const struct ptx_code *c, const struct ptx_vop *o, int *v, int *part)
{
	*v = -1;
	*part = 0;
	if (o->kind != PTX_V_REG || o->v < 0)
		return;
	*v = o->v;
	*part = o->part;
	(void)c;
}

/*
 * Copy propagation inside each block: after "MOV d, s" (one word, no
 * guard), a one-word ALU instruction that reads d reads s instead, until
 * d or s is written again.  The MOV then often dies (dce_round).
 */
static void copy_prop(struct ptx_code *c)
{
	enum { MAXC = 64 };
	struct { int dv, dp, sv, sp; } cp[MAXC];
	int ncp = 0;

	for (int i = 0; i < c->n; i++) {
		struct ptx_vinsn *t = &c->insns[i];
		bool leader = t->label[0] || (i && (c->insns[i - 1].branch || c->insns[i - 1].exit));

		if (leader)
			ncp = 0;
		if (t->label[0])
			continue;
		/* substitute reads; a shared address (one word) too, when the
		 * copy's source is a register's first word (a memory operand
		 * names a register, not a word) */
		for (int o = 0; o < t->nops; o++) {
			struct ptx_vop *op = &t->ops[o];

			if (op->kind != PTX_V_MEM || op->v < 0 || !shared_mem(t) ||
			    c->vregs[op->v].width != 1)
				continue;
			for (int k = 0; k < ncp; k++)
				if (cp[k].dv == op->v && cp[k].dp == 0 && cp[k].sp == 0 &&
				    c->vregs[cp[k].sv].width >= 1) {
					op->v = cp[k].sv;
					break;
				}
		}
		if (purity(t) == 1)
			for (int o = 0; o < t->nops; o++) {
				struct ptx_vop *op = &t->ops[o];
				int v, p;

				if (is_def(t, op))
					continue;
				word_of(c, op, &v, &p);
				for (int k = 0; v >= 0 && k < ncp; k++)
					if (cp[k].dv == v && cp[k].dp == p) {
						op->v = cp[k].sv;
						op->part = (uint8_t)cp[k].sp;
						break;
					}
			}
		/* writes end the copies that name what they write */
		for (int o = 0; o < t->nops; o++) {
			const struct ptx_vop *op = &t->ops[o];

			bool word = purity(t) == 1; /* writes just (v, part) */

			if (!is_def(t, op) || op->kind != PTX_V_REG || op->v < 0)
				continue;
			for (int k = 0; k < ncp; k++)
				if ((cp[k].dv == op->v && (!word || cp[k].dp == op->part)) ||
				    (cp[k].sv == op->v && (!word || cp[k].sp == op->part)))
					cp[k--] = cp[--ncp];
		}
		/* a new copy */
		if (!strcmp(t->mnem, "MOV") && t->guard < 0 && t->nops == 2 &&
		    t->ops[0].kind == PTX_V_REG && t->ops[0].def &&
		    t->ops[1].kind == PTX_V_REG && t->ops[1].v >= 0 &&
		    t->ops[1].v != t->ops[0].v && ncp < MAXC) {
			cp[ncp].dv = t->ops[0].v;
			cp[ncp].dp = t->ops[0].part;
			cp[ncp].sv = t->ops[1].v;
			cp[ncp].sp = t->ops[1].part;
			ncp++;
		}
	}
}

/* Words known to hold a constant (MOV d, imm) in the block so far. */
enum { MAXK = 32 };
struct consts {
	int v[MAXK], part[MAXK];
	uint32_t val[MAXK];
	int n;
};

/* The value of a one-word source: an immediate, RZ, or a known constant. */
static bool const_of(const struct ptx_vop *o, const struct consts *k, uint32_t *val)
{
	char *end;

	if (o->kind == PTX_V_TEXT) {
		if (!strcmp(o->text, "RZ")) {
			*val = 0;
			return true;
		}
		*val = (uint32_t)strtoul(o->text, &end, 0);
		return end != o->text && !*end && (o->text[0] >= '0' && o->text[0] <= '9');
	}
	if (!k || o->kind != PTX_V_REG || o->v < 0)
		return false;
	for (int i = 0; i < k->n; i++)
		if (k->v[i] == o->v && k->part[i] == o->part) {
			*val = k->val[i];
			return true;
		}
	return false;
}

/* After @t: what it writes is no longer known; a MOV of a constant is. */
static void consts_step(struct consts *k, const struct ptx_vinsn *t)
{
	uint32_t val;

	for (int o = 0; o < t->nops; o++) {
		const struct ptx_vop *op = &t->ops[o];

		if (!is_def(t, op) || op->v < 0)
			continue;
		for (int i = 0; i < k->n; i++)
			if (k->v[i] == op->v) {
				k->n--;
				k->v[i] = k->v[k->n];
				k->part[i] = k->part[k->n];
				k->val[i--] = k->val[k->n];
			}
	}
	if (!strcmp(t->mnem, "MOV") && t->guard < 0 && t->nops == 2 &&
	    t->ops[0].kind == PTX_V_REG && const_of(&t->ops[1], NULL, &val) && k->n < MAXK) {
		k->v[k->n] = t->ops[0].v;
		k->part[k->n] = t->ops[0].part;
		k->val[k->n++] = val;
	}
}

/* How many instructions read predicate @p (operands and guards). */
static int pred_reads(const struct ptx_code *c, int p)
{
	int n = 0;

	for (int i = 0; i < c->n; i++) {
		const struct ptx_vinsn *t = &c->insns[i];

		n += t->guard == p;
		for (int o = 0; o < t->nops; o++)
			n += t->ops[o].kind == PTX_V_PRED && t->ops[o].v == p && !t->ops[o].def;
	}
	return n;
}

/*
 * The "bool to int and back" of a loop on a predicate: PTX's
 *     selp.u32 %r, 1, 0, %p;  setp.eq.s32 %q, %r, 0;  @%q bra L;
 * lowered, is MOV c, 1; SEL r, c, 0, P; ISETP.EQ Q, r, 0; @Q BRA.  When
 * the branch is Q's only reader it branches on !P instead, and the rest
 * dies (dce_round).
 */
static void fold_branch_preds(struct ptx_code *c)
{
	struct consts k = { .n = 0 };
	struct { int v, part, p; bool pneg; uint32_t a, b; } sel[MAXK];
	int nsel = 0;

	for (int i = 0; i < c->n; i++) {
		struct ptx_vinsn *t = &c->insns[i];
		uint32_t a, b;
		bool is_sel;

		if (t->label[0] || (i && (c->insns[i - 1].branch || c->insns[i - 1].exit)))
			k.n = nsel = 0;
		if (t->label[0])
			continue;
		if (t->guard < 0 && !strncmp(t->mnem, "ISETP.", 6) && t->nops == 3 &&
		    t->ops[0].kind == PTX_V_PRED && t->ops[0].def &&
		    (!strcmp(t->mnem, "ISETP.EQ.S32") || !strcmp(t->mnem, "ISETP.EQ.U32") ||
		     !strcmp(t->mnem, "ISETP.NE.S32") || !strcmp(t->mnem, "ISETP.NE.U32")) &&
		    t->ops[1].kind == PTX_V_REG && const_of(&t->ops[2], NULL, &b) &&
		    i + 1 < c->n && c->insns[i + 1].branch &&
		    c->insns[i + 1].guard == t->ops[0].v &&
		    pred_reads(c, t->ops[0].v) == 1) {
			bool ne = t->mnem[6] == 'N';

			for (int j = 0; j < nsel; j++) {
				bool ra, rb;

				if (sel[j].v != t->ops[1].v || sel[j].part != t->ops[1].part)
					continue;
				ra = (sel[j].a == b) != ne; /* Q when P holds */
				rb = (sel[j].b == b) != ne; /* Q when it does not */
				if (ra == rb)
					break;
				c->insns[i + 1].guard = sel[j].p;
				/* Q = P (ra) or !P (rb); the branch wanted Q or !Q */
				c->insns[i + 1].guard_not ^= sel[j].pneg ^ !ra;
				break;
			}
		}
		/* SEL r, x, y, P with constant x and y (read before the write) */
		is_sel = t->guard < 0 && !strcmp(t->mnem, "SEL") && t->nops == 4 &&
			 t->ops[0].kind == PTX_V_REG && t->ops[3].kind == PTX_V_PRED &&
			 const_of(&t->ops[1], &k, &a) && const_of(&t->ops[2], &k, &b);
		/* writes end what they overwrite */
		for (int o = 0; o < t->nops; o++) {
			const struct ptx_vop *op = &t->ops[o];

			if (!is_def(t, op) || op->v < 0)
				continue;
			for (int j = 0; j < nsel; j++)
				if (sel[j].v == op->v || sel[j].p == op->v)
					sel[j--] = sel[--nsel];
		}
		consts_step(&k, t);
		if (is_sel && nsel < MAXK) {
			sel[nsel].v = t->ops[0].v;
			sel[nsel].part = t->ops[0].part;
			sel[nsel].p = t->ops[3].v;
			sel[nsel].pneg = t->ops[3].neg;
			sel[nsel].a = a;
			sel[nsel].b = b;
			nsel++;
		}
	}
}

/*
 * "@P BRA X; BRA Y; X:" (a loop's exit test, then its back edge) is
 * "@!P BRA Y; X:".  When X does not follow and Y is a backward target (a
 * loop's head), "@!P BRA Y; BRA X": the loop then runs one branch per
 * iteration, not two.
 */
static void fold_branches(struct ptx_code *c)
{
	int j = 0;

	for (int i = 0; i + 1 < c->n; i++) {
		struct ptx_vinsn *t = &c->insns[i], *u = &c->insns[i + 1];
		int y;

		if (!(t->branch && t->guard >= 0 && !strcmp(t->mnem, "BRA") && u->branch &&
		      u->guard < 0 && !strcmp(u->mnem, "BRA")))
			continue;
		if (i + 2 < c->n && c->insns[i + 2].label[0] &&
		    !strcmp(c->insns[i + 2].label, t->ops[0].text))
			continue; /* the case below */
		y = label_index(c, u->ops[0].text);
		if (y < 0 || y > i)
			continue;
		{
			struct ptx_vinsn x = *t;

			t->ops[0] = u->ops[0];
			t->guard_not = !t->guard_not;
			u->ops[0] = x.ops[0];
		}
	}
	for (int i = 0; i < c->n; i++) {
		struct ptx_vinsn *t = &c->insns[i];

		if (i + 2 < c->n && t->branch && t->guard >= 0 && !strcmp(t->mnem, "BRA") &&
		    c->insns[i + 1].branch && c->insns[i + 1].guard < 0 &&
		    !strcmp(c->insns[i + 1].mnem, "BRA") && c->insns[i + 2].label[0] &&
		    !strcmp(c->insns[i + 2].label, t->ops[0].text)) {
			struct ptx_vinsn b = c->insns[i + 1];

			b.guard = t->guard;
			b.guard_not = !t->guard_not;
			c->insns[j++] = b;
			i++;
			continue;
		}
		c->insns[j++] = *t;
	}
	c->n = j;
}

/* IADD with a constant operand: the constant as the immediate. */
static void fold_iadd_consts(struct ptx_code *c)
{
	struct consts k = { .n = 0 };
	uint32_t val;

	for (int i = 0; i < c->n; i++) {
		struct ptx_vinsn *t = &c->insns[i];

		if (t->label[0] || (i && (c->insns[i - 1].branch || c->insns[i - 1].exit)))
			k.n = 0;
		if (t->label[0])
			continue;
		if (!strcmp(t->mnem, "IADD") && t->nops == 3 && t->ops[1].kind == PTX_V_REG &&
		    t->ops[2].kind == PTX_V_REG) {
			int w = const_of(&t->ops[1], &k, &val) ? 1 :
				const_of(&t->ops[2], &k, &val) ? 2 : 0;

			if (w) {
				if (w == 1)
					t->ops[1] = t->ops[2]; /* IADD commutes */
				memset(&t->ops[2], 0, sizeof(t->ops[2]));
				t->ops[2].kind = PTX_V_TEXT;
				t->ops[2].v = -1;
				snprintf(t->ops[2].text, sizeof(t->ops[2].text), "0x%x", val);
			}
		}
		consts_step(&k, t);
	}
}

/* ---- loop-invariant code motion ---- */

struct cfg {
	int nb;
	int *first, *last, *bof;
	int (*succ)[2];
	word_t *dom; /* dom[b]: blocks dominating b (bit set of nb) */
	int nbw;
};

static void cfg_free(struct cfg *g)
{
	free(g->first);
	free(g->last);
	free(g->bof);
	free(g->succ);
	free(g->dom);
}

static bool bset(const word_t *s, int i)
{
	return (s[i / WBITS] >> (i % WBITS)) & 1;
}

/* Blocks, successors and dominators of @c; false without memory. */
static bool cfg_build(const struct ptx_code *c, struct cfg *g)
{
	int n = c->n;
	bool changed;

	memset(g, 0, sizeof(*g));
	g->first = malloc(((size_t)n + 1) * sizeof(int));
	g->last = malloc(((size_t)n + 1) * sizeof(int));
	g->bof = malloc(((size_t)n + 1) * sizeof(int));
	g->succ = malloc(((size_t)n + 1) * sizeof(*g->succ));
	if (!g->first || !g->last || !g->bof || !g->succ)
		return false;
	for (int i = 0; i < n; i++) {
		if (i == 0 || c->insns[i].label[0] || c->insns[i - 1].branch ||
		    c->insns[i - 1].exit) {
			if (g->nb)
				g->last[g->nb - 1] = i - 1;
			g->first[g->nb++] = i;
		}
		g->bof[i] = g->nb - 1;
	}
	if (g->nb)
		g->last[g->nb - 1] = n - 1;
	for (int k = 0; k < g->nb; k++) {
		const struct ptx_vinsn *t = &c->insns[g->last[k]];
		bool falls = !(t->branch || t->exit) || t->guard >= 0;

		g->succ[k][0] = g->succ[k][1] = -1;
		if (t->branch) {
			int at = label_index(c, t->ops[0].text);

			if (at < 0)
				return false; /* a branch out of the code: no LICM */
			g->succ[k][0] = g->bof[at];
		}
		if (falls && k + 1 < g->nb)
			g->succ[k][1] = k + 1;
	}
	g->nbw = (g->nb + WBITS - 1) / WBITS;
	g->dom = malloc(((size_t)g->nb + 1) * (size_t)g->nbw * sizeof(word_t));
	if (!g->dom)
		return false;
	for (int k = 0; k < g->nb; k++)
		for (int w = 0; w < g->nbw; w++)
			g->dom[(size_t)k * g->nbw + w] = k ? ~(word_t)0 : 0;
	if (g->nb)
		g->dom[0] |= 1;
	do {
		changed = false;
		for (int k = 1; k < g->nb; k++) {
			word_t nd[64];
			bool any = false;

			if (g->nbw > 64)
				return false;
			for (int w = 0; w < g->nbw; w++)
				nd[w] = ~(word_t)0;
			for (int p = 0; p < g->nb; p++)
				if (g->succ[p][0] == k || g->succ[p][1] == k) {
					any = true;
					for (int w = 0; w < g->nbw; w++)
						nd[w] &= g->dom[(size_t)p * g->nbw + w];
				}
			if (!any)
				for (int w = 0; w < g->nbw; w++)
					nd[w] = 0; /* unreachable */
			nd[k / WBITS] |= (word_t)1 << (k % WBITS);
			if (memcmp(nd, &g->dom[(size_t)k * g->nbw], (size_t)g->nbw * sizeof(word_t))) {
				memcpy(&g->dom[(size_t)k * g->nbw], nd, (size_t)g->nbw * sizeof(word_t));
				changed = true;
			}
		}
	} while (changed);
	return true;
}

static bool dominates(const struct cfg *g, int a, int b)
{
	return bset(&g->dom[(size_t)b * g->nbw], a);
}

struct unit_ctx {
	const word_t *set;
	bool hit;
};

static void hit_fn(void *ctx, int i)
{
	struct unit_ctx *u = ctx;

	if (bset(u->set, i))
		u->hit = true;
}

/*
 * Hoist what one loop computes the same way every iteration: the natural
 * loop of back edge tail -> head (blocks from head to tail, entered only
 * by falling into head), an unguarded one-word ALU instruction whose
 * sources no instruction of the loop writes, which alone writes its
 * results in the loop, whose block dominates every block leaving the
 * loop, and whose results the loop reads only after it (dominated).  It
 * moves in front of head's label.  True when something moved.
 */
static bool hoist_loop(struct ptx_code *c, const struct units *u, const struct cfg *g,
		       int head, int tail)
{
	int lo = g->first[head], hi = g->last[tail], nw = (u->n + WBITS - 1) / WBITS;
	word_t *written = calloc((size_t)nw + 1, sizeof(word_t));
	word_t *mine = calloc((size_t)nw + 1, sizeof(word_t));
	bool moved = false;
	int at = -1;

	if (!written || !mine)
		goto out;
	/* the loop is the blocks head..tail; nothing outside jumps into it
	 * (but to head from the block before it, by falling through) */
	for (int k = 0; k < g->nb; k++)
		for (int s = 0; s < 2; s++) {
			int t = g->succ[k][s];

			if (t < 0 || t < head || t > tail || (k >= head && k <= tail))
				continue;
			if (!(t == head && k == head - 1 && s == 1))
				goto out;
		}
	/* the block before head falls into it: what is hoisted runs there */
	if (head == 0 || g->succ[head - 1][1] != head)
		goto out;
	for (int i = lo; i <= hi; i++) {
		const struct ptx_vinsn *t = &c->insns[i];

		for (int o = 0; o < t->nops; o++)
			if (is_def(t, &t->ops[o]) && t->ops[o].kind != PTX_V_MEM)
				op_units(c, u, t, &t->ops[o], set_fn, written);
	}
	for (int i = lo; i <= hi && at < 0; i++) {
		const struct ptx_vinsn *t = &c->insns[i];
		struct unit_ctx srcs = { written, false };
		bool ok = purity(t) == 1 && t->guard < 0;
		int b = g->bof[i];

		for (int o = 0; ok && o < t->nops; o++) {
			const struct ptx_vop *op = &t->ops[o];

			if (is_def(t, op)) {
				if (op->kind != PTX_V_REG)
					ok = false; /* P6 and friends stay */
				continue;
			}
			op_units(c, u, t, op, hit_fn, &srcs);
		}
		if (!ok || srcs.hit)
			continue;
		/* its block dominates every exit of the loop */
		for (int k = head; ok && k <= tail; k++)
			for (int s = 0; s < 2; s++) {
				int x = g->succ[k][s];

				if ((x >= 0 && (x < head || x > tail)) ||
				    (x < 0 && s == 1 && c->insns[g->last[k]].exit))
					if (!dominates(g, b, k))
						ok = false;
			}
		if (!ok)
			continue;
		/* it alone writes its words in the loop; they are read only
		 * where it dominates */
		memset(mine, 0, (size_t)nw * sizeof(word_t));
		for (int o = 0; o < t->nops; o++)
			if (is_def(t, &t->ops[o]))
				op_units(c, u, t, &t->ops[o], set_fn, mine);
		for (int j = lo; ok && j <= hi; j++) {
			const struct ptx_vinsn *x = &c->insns[j];

			for (int o = 0; ok && o < x->nops; o++) {
				struct unit_ctx h = { mine, false };

				op_units(c, u, x, &x->ops[o], hit_fn, &h);
				if (!h.hit || j == i)
					continue;
				if (is_def(x, &x->ops[o]))
					ok = false;
				else if (g->bof[j] == b ? j < i : !dominates(g, b, g->bof[j]))
					ok = false;
			}
			if (x->guard >= 0) {
				struct unit_ctx h = { mine, false };

				hit_fn(&h, u->first[x->guard]);
				if (h.hit)
					ok = false;
			}
		}
		if (ok)
			at = i;
	}
	if (at >= 0) {
		/* move insn @at in front of the label at @lo */
		struct ptx_vinsn t = c->insns[at];

		memmove(&c->insns[lo + 1], &c->insns[lo], (size_t)(at - lo) * sizeof(t));
		c->insns[lo] = t;
		moved = true;
	}
out:
	free(written);
	free(mine);
	return moved;
}

/* Hoist loop invariants, one at a time, until none is left. */
static int licm(struct ptx_code *c, const struct units *u)
{
	for (int round = 0; round < 10000; round++) {
		struct cfg g;
		bool moved = false;

		if (!cfg_build(c, &g)) {
			cfg_free(&g);
			return 0; /* leave the code as it is */
		}
		for (int k = 0; k < g.nb && !moved; k++)
			for (int s = 0; s < 2 && !moved; s++) {
				int h = g.succ[k][s];

				if (h >= 0 && h <= k && dominates(&g, h, k))
					moved = hoist_loop(c, u, &g, h, k);
			}
		cfg_free(&g);
		if (!moved)
			break;
	}
	return 0;
}

int ptx_optimize(struct ptx_code *c)
{
	struct units u = { .first = malloc(((size_t)c->nv + 1) * sizeof(int)) };
	int r;

	if (!u.first)
		return -ENOMEM;
	for (int v = 0; v < c->nv; v++) {
		u.first[v] = u.n;
		u.n += width_units(&c->vregs[v]);
	}
	u.p6 = u.n++;
	copy_prop(c);
	fold_branch_preds(c);
	fold_iadd_consts(c);
	fold_branches(c);
	licm(c, &u);
	do
		r = dce_round(c, &u);
	while (r > 0);
	free(u.first);
	return r < 0 ? r : 0;
}
