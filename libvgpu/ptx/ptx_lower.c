// SPDX-License-Identifier: MIT
/*
 * PTX instructions -> vGPU instructions over virtual registers.
 *
 * PTX register i is virtual register i (width 1 for 8..32-bit registers,
 * 2 for 64-bit ones, 0 for predicates); lowering adds temporaries.  A
 * 64-bit value is a register pair (low word first), as vGPU's global
 * addresses and mbarrier tokens are.  Shared addresses are the low word
 * (vGPU's 32-bit shared address); a generic shared address (cvta.shared)
 * carries VGPU_PTX_GENERIC_SHARED_HI in its high word.  P6 is the
 * lowering's scratch predicate; P0..P5 are allocated.
 *
 * Anything not handled is an error naming the PTX line and construct.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

#define GENERIC_SHARED_HI 0xffffff00u

struct lower {
	const struct ptx_module *m;
	const struct ptx_func *f;
	struct ptx_diag *dg;
	struct ptx_code *c;
	const struct ptx_insn *in;
	bool failed;
	/*
	 * The instruction being built (-1: none) and the moves its sources
	 * need first (an immediate or a special register in a register):
	 * they are put before it when the next one starts.
	 */
	int building;
	struct ptx_vinsn pending[8];
	int npending;
};

/* ---- errors ---- */

__attribute__((format(printf, 2, 3))) static bool lerr(struct lower *L,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptx_error(L->dg, L->in->line, L->in->col, "%s", msg);
	L->failed = true;
	return false;
}

/* The instruction as written (op and modifiers), for messages. */
static const char *spelled(const struct ptx_insn *in, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", in->op);

	for (int i = 0; i < in->nmods && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s", in->mods[i]);
	return buf;
}

static bool unsupported(struct lower *L, const char *why)
{
	char b[256];

	return lerr(L, "unsupported PTX construct '%s'%s%s",
		    spelled(L->in, b, sizeof(b)), why ? ": " : "", why ? why : "");
}

/* ---- virtual registers and instructions ---- */

static int new_vreg(struct lower *L, int width)
{
	struct ptx_code *c = L->c;

	if (c->nv == c->vcap) {
		int ncap = c->vcap ? 2 * c->vcap : 64;
		struct ptx_vreg *p = realloc(c->vregs, (size_t)ncap * sizeof(*p));

		if (!p)
			return lerr(L, "out of memory"), 0;
		c->vregs = p;
		c->vcap = ncap;
	}
	c->vregs[c->nv].width = (uint8_t)width;
	c->vregs[c->nv].phys = -1;
	return c->nv++;
}

static bool room(struct lower *L, int more)
{
	struct ptx_code *c = L->c;

	while (c->n + more > c->cap) {
		int ncap = c->cap ? 2 * c->cap : 256;
		struct ptx_vinsn *p = realloc(c->insns, (size_t)ncap * sizeof(*p));

		if (!p)
			return lerr(L, "out of memory");
		c->insns = p;
		c->cap = ncap;
	}
	return true;
}

/* The instruction being built is complete: put its moves before it. */
static void finish(struct lower *L)
{
	struct ptx_code *c = L->c;
	int b = L->building, k = L->npending;

	L->building = -1;
	L->npending = 0;
	if (!k || !room(L, k))
		return;
	if (b < 0) {
		memcpy(&c->insns[c->n], L->pending, (size_t)k * sizeof(L->pending[0]));
	} else {
		memmove(&c->insns[b + k], &c->insns[b], (size_t)(c->n - b) * sizeof(c->insns[0]));
		memcpy(&c->insns[b], L->pending, (size_t)k * sizeof(L->pending[0]));
	}
	c->n += k;
}

/*
 * Start the next instruction (finishing the one before).  The pointer is
 * valid until the next emit() or finish().
 */
static struct ptx_vinsn *emit(struct lower *L, const char *fmt, ...)
{
	static struct ptx_vinsn dummy;
	struct ptx_code *c = L->c;
	struct ptx_vinsn *v;
	va_list ap;

	finish(L);
	if (!room(L, 1)) {
		memset(&dummy, 0, sizeof(dummy));
		return &dummy;
	}
	L->building = c->n;
	v = &c->insns[c->n++];
	memset(v, 0, sizeof(*v));
	v->line = L->in->line;
	v->guard = L->in->guard;
	v->guard_not = L->in->guard_not;
	va_start(ap, fmt);
	vsnprintf(v->mnem, sizeof(v->mnem), fmt, ap);
	va_end(ap);
	return v;
}

static struct ptx_vop *add_op(struct ptx_vinsn *v)
{
	static struct ptx_vop dummy;

	if (v->nops == (int)(sizeof(v->ops) / sizeof(v->ops[0])))
		return &dummy;
	memset(&v->ops[v->nops], 0, sizeof(v->ops[0]));
	v->ops[v->nops].v = -1;
	return &v->ops[v->nops++];
}

/* Write all of @v (or its last part: @partial = false kills it). */
static void o_def(struct ptx_vinsn *vi, int v, int part, bool partial)
{
	struct ptx_vop *o = add_op(vi);

	o->kind = PTX_V_REG;
	o->def = true;
	o->partial = partial;
	o->v = v;
	o->part = (uint8_t)part;
}

static void o_use(struct ptx_vinsn *vi, int v, int part)
{
	struct ptx_vop *o = add_op(vi);

	o->kind = PTX_V_REG;
	o->v = v;
	o->part = (uint8_t)part;
}

static void o_pdef(struct ptx_vinsn *vi, int v)
{
	struct ptx_vop *o = add_op(vi);

	o->kind = PTX_V_PRED;
	o->def = true;
	o->v = v;
}

static void o_puse(struct ptx_vinsn *vi, int v, bool neg)
{
	struct ptx_vop *o = add_op(vi);

	o->kind = PTX_V_PRED;
	o->v = v;
	o->neg = neg;
}

__attribute__((format(printf, 2, 3))) static void o_text(struct ptx_vinsn *vi,
							 const char *fmt, ...)
{
	struct ptx_vop *o = add_op(vi);
	va_list ap;

	o->kind = PTX_V_TEXT;
	va_start(ap, fmt);
	vsnprintf(o->text, sizeof(o->text), fmt, ap);
	va_end(ap);
}

/* [base + text]; base -1 is RZ */
__attribute__((format(printf, 3, 4))) static void o_mem(struct ptx_vinsn *vi, int base,
							const char *fmt, ...)
{
	struct ptx_vop *o = add_op(vi);
	va_list ap;

	o->kind = PTX_V_MEM;
	o->v = base;
	va_start(ap, fmt);
	vsnprintf(o->text, sizeof(o->text), fmt, ap);
	va_end(ap);
}

/* ---- names ---- */

static int param_index(const struct ptx_func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (!strcmp(f->params[i].name, name))
			return i;
	return -1;
}

/* Shared variables: the module's first, then the kernel's; -1 if none. */
static int shared_index(const struct lower *L, const char *name)
{
	for (int i = 0; i < L->m->nshared; i++)
		if (!strcmp(L->m->shared[i].name, name))
			return i;
	for (int i = 0; i < L->f->nshared; i++)
		if (!strcmp(L->f->shared[i].name, name))
			return L->m->nshared + i;
	return -1;
}

static int label_index(const struct ptx_func *f, const char *name)
{
	for (int i = 0, k = 0; i < f->ninsns; i++) {
		if (!f->insns[i].label[0])
			continue;
		if (!strcmp(f->insns[i].label, name))
			return k;
		k++;
	}
	return -1;
}

static const struct {
	const char *ptx, *sr;
} sregs[] = {
	{ "%tid.x", "SR_TID.X" },
	{ "%tid.y", "SR_TID.Y" },
	{ "%tid.z", "SR_TID.Z" },
	{ "%ntid.x", "SR_NTID.X" },
	{ "%ntid.y", "SR_NTID.Y" },
	{ "%ntid.z", "SR_NTID.Z" },
	{ "%ctaid.x", "SR_CTAID.X" },
	{ "%ctaid.y", "SR_CTAID.Y" },
	{ "%ctaid.z", "SR_CTAID.Z" },
	{ "%nctaid.x", "SR_NCTAID.X" },
	{ "%nctaid.y", "SR_NCTAID.Y" },
	{ "%nctaid.z", "SR_NCTAID.Z" },
	{ "%laneid", "SR_LANEID" },
	{ "%warpid", "SR_WARPID" },
	{ "%nwarpid", "SR_NWARPS" },
	{ "%smid", "SR_SMID" },
	{ "%clock", "SR_CLOCKLO" },
	{ "%clock_hi", "SR_CLOCKHI" },
	{ "%cluster_ctarank", "SR_CLUSTER_CTARANK" },
	{ "%cluster_nctarank", "SR_CLUSTER_NCTARANK" },
	{ "%cluster_ctaid.x", "SR_CLUSTER_CTAID.X" },
	{ "%cluster_ctaid.y", "SR_CLUSTER_CTAID.Y" },
	{ "%cluster_ctaid.z", "SR_CLUSTER_CTAID.Z" },
	{ "%cluster_nctaid.x", "SR_CLUSTER_NCTAID.X" },
	{ "%cluster_nctaid.y", "SR_CLUSTER_NCTAID.Y" },
	{ "%cluster_nctaid.z", "SR_CLUSTER_NCTAID.Z" },
	{ "%clusterid.x", "SR_CLUSTERID.X" },
	{ "%clusterid.y", "SR_CLUSTERID.Y" },
	{ "%clusterid.z", "SR_CLUSTERID.Z" },
	{ "%nclusterid.x", "SR_NCLUSTERID.X" },
	{ "%nclusterid.y", "SR_NCLUSTERID.Y" },
	{ "%nclusterid.z", "SR_NCLUSTERID.Z" },
};

static const char *sreg_name(const char *ptx)
{
	for (size_t i = 0; i < sizeof(sregs) / sizeof(sregs[0]); i++)
		if (!strcmp(sregs[i].ptx, ptx))
			return sregs[i].sr;
	return NULL;
}

/* ---- modifiers and types ---- */

static bool has_mod(const struct ptx_insn *in, const char *mod)
{
	for (int i = 0; i < in->nmods; i++)
		if (!strcmp(in->mods[i], mod))
			return true;
	return false;
}

struct ptype {
	int bits;     /* 0 if none */
	bool sign, flt, pred;
};

/* The @nth type modifier of the instruction (0 = first). */
static struct ptype type_of(const struct ptx_insn *in, int nth)
{
	struct ptype t = { 0 };

	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];
		int bits = 0;

		if (!strcmp(m, ".pred")) {
			bits = 1;
		} else if ((m[1] == 'u' || m[1] == 's' || m[1] == 'b' || m[1] == 'f') &&
			   m[2] >= '0' && m[2] <= '9') {
			char *end;
			long b = strtol(m + 2, &end, 10);

			if (*end || (b != 8 && b != 16 && b != 32 && b != 64))
				continue;
			bits = (int)b;
		}
		if (!bits)
			continue;
		if (nth--)
			continue;
		t.bits = bits;
		t.pred = bits == 1;
		t.sign = m[1] == 's';
		t.flt = m[1] == 'f';
		return t;
	}
	return t;
}

static const struct ptx_reg *preg(const struct lower *L, int r)
{
	return &L->f->regs[r];
}

/* ---- operand access ---- */

/*
 * A move a source needs: before the instruction being built, or right
 * away when none is.
 */
static struct ptx_vinsn *pre_move(struct lower *L, const char *mn)
{
	static struct ptx_vinsn dummy;
	struct ptx_vinsn *v;

	if (L->building < 0)
		return emit(L, "%s", mn);
	if (L->npending == (int)(sizeof(L->pending) / sizeof(L->pending[0]))) {
		lerr(L, "internal error: too many operand moves");
		return &dummy;
	}
	v = &L->pending[L->npending++];
	memset(v, 0, sizeof(*v));
	v->line = L->in->line;
	v->guard = L->in->guard;
	v->guard_not = L->in->guard_not;
	snprintf(v->mnem, sizeof(v->mnem), "%s", mn);
	return v;
}

static bool is_reg(const struct lower *L, const struct ptx_operand *o, int cls)
{
	return o->kind == PTX_O_REG && preg(L, o->reg)->cls == cls;
}

/* A 32-bit immediate's text for an operand (low word of 64-bit ones). */
static void imm_text(char *buf, size_t len, int64_t v, int part)
{
	uint32_t w = part ? (uint32_t)((uint64_t)v >> 32) : (uint32_t)v;

	snprintf(buf, len, "0x%" PRIx32, w);
}

/*
 * Source @o (part @part of it) as a register: registers as they are,
 * immediates, special registers and shared-variable addresses copied
 * into a temporary first.  Returns the vreg (its part in *@pp).
 */
static int src_reg(struct lower *L, const struct ptx_operand *o, int part, int *pp)
{
	struct ptx_vinsn *v;
	int t;

	*pp = 0;
	if (o->kind == PTX_O_REG) {
		if (preg(L, o->reg)->cls == PTX_PRED)
			return lerr(L, "a predicate where a value is expected"), 0;
		*pp = preg(L, o->reg)->cls == PTX_R64 ? part : 0;
		return o->reg;
	}
	t = new_vreg(L, 1);
	if (o->kind == PTX_O_IMM) {
		char b[32];

		imm_text(b, sizeof(b), o->imm, part);
		if (!strcmp(b, "0x0"))
			return -1; /* RZ */
		v = pre_move(L, "MOV");
		o_def(v, t, 0, false);
		o_text(v, "%s", b);
		return t;
	}
	if (o->kind == PTX_O_SYM) {
		const char *sr = sreg_name(o->sym);
		int sh = shared_index(L, o->sym);

		if (part && (sr || sh >= 0))
			return -1; /* high word of a 32-bit value */
		if (sr) {
			v = pre_move(L, "S2R");
			o_def(v, t, 0, false);
			o_text(v, "%s", sr);
			return t;
		}
		if (sh >= 0) {
			v = pre_move(L, "MOV");
			o_def(v, t, 0, false);
			o_text(v, "sh%d+%" PRId64, sh, o->imm);
			return t;
		}
		return lerr(L, "unknown name '%s'", o->sym), 0;
	}
	return lerr(L, "expected a register or a value"), 0;
}

/* Add a use of @o (part) as a register operand: RZ for a zero. */
static void use_src(struct lower *L, struct ptx_vinsn *v, const struct ptx_operand *o,
		    int part)
{
	int pp, r = src_reg(L, o, part, &pp);

	if (r < 0)
		o_text(v, "RZ");
	else
		o_use(v, r, pp);
}

/* Emit a source that may be an immediate in a vGPU I form. */
static void use_src_or_imm(struct lower *L, struct ptx_vinsn *v,
			   const struct ptx_operand *o, int part)
{
	char b[32];

	if (o->kind == PTX_O_IMM) {
		imm_text(b, sizeof(b), o->imm, part);
		o_text(v, "%s", b);
		return;
	}
	use_src(L, v, o, part);
}

static int dst_reg(struct lower *L, const struct ptx_operand *o, int cls)
{
	if (o->kind == PTX_O_SINK)
		return -1;
	if (o->kind != PTX_O_REG)
		return lerr(L, "expected a destination register"), -1;
	if (cls >= 0 && preg(L, o->reg)->cls != cls)
		return lerr(L, "destination '%s' has the wrong type for this instruction",
			    preg(L, o->reg)->name),
		       -1;
	return o->reg;
}

static int pred_of(struct lower *L, const struct ptx_operand *o)
{
	if (!is_reg(L, o, PTX_PRED))
		return lerr(L, "expected a predicate register"), -1;
	return o->reg;
}

/* ---- simple instructions ---- */

static bool want_ops(struct lower *L, int n)
{
	if (L->in->nops != n)
		return lerr(L, "'%s' takes %d operands, not %d", L->in->op, n, L->in->nops);
	return true;
}

/* Two-source integer op on 32 bits (commutative ops may swap an immediate). */
static void alu32(struct lower *L, const char *mn, int d, int dpart, bool dpartial,
		  const struct ptx_operand *a, const struct ptx_operand *b, int part,
		  bool commutative)
{
	struct ptx_vinsn *v;

	if (a->kind == PTX_O_IMM && b->kind != PTX_O_IMM && commutative) {
		const struct ptx_operand *t = a;

		a = b;
		b = t;
	}
	v = emit(L, "%s", mn);
	o_def(v, d, dpart, dpartial);
	use_src(L, v, a, part);
	use_src_or_imm(L, v, b, part);
}

static void mov_reg(struct lower *L, int d, int dpart, bool partial, int s, int spart)
{
	struct ptx_vinsn *v = emit(L, "MOV");

	o_def(v, d, dpart, partial);
	if (s < 0)
		o_text(v, "RZ");
	else
		o_use(v, s, spart);
}

static const char *int_mod(struct ptype t)
{
	return t.sign ? "S32" : "U32";
}

/* ---- per-instruction lowering ---- */

static void l_mov(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *d = &in->ops[0], *s = &in->ops[1];
	struct ptx_vinsn *v;

	if (!want_ops(L, 2))
		return;
	if (d->kind == PTX_O_VEC || s->kind == PTX_O_VEC) {
		/* mov.b64 {lo, hi}, %rd (unpack) / mov.b64 %rd, {lo, hi} (pack) */
		if (d->kind == PTX_O_VEC && is_reg(L, s, PTX_R64) && d->nvec == 2) {
			for (int i = 0; i < 2; i++)
				if (d->vec[i] >= 0)
					mov_reg(L, d->vec[i], 0, false, s->reg, i);
			return;
		}
		if (s->kind == PTX_O_VEC && is_reg(L, d, PTX_R64) && s->nvec == 2) {
			int t = new_vreg(L, 2);

			for (int i = 0; i < 2; i++)
				mov_reg(L, t, i, i == 0, s->vec[i], 0);
			for (int i = 0; i < 2; i++)
				mov_reg(L, d->reg, i, i == 0, t, i);
			return;
		}
		unsupported(L, "vector moves other than 2 x 32 <-> 64 bits");
		return;
	}
	if (d->kind != PTX_O_REG) {
		lerr(L, "mov needs a register destination");
		return;
	}
	switch (preg(L, d->reg)->cls) {
	case PTX_PRED:
		if (s->kind == PTX_O_IMM) {
			v = emit(L, "ISETP.%s.U32", s->imm ? "EQ" : "NE");
			o_pdef(v, d->reg);
			o_text(v, "RZ");
			o_text(v, "0x0");
			return;
		}
		v = emit(L, "ISETP.EQ.U32.AND");
		o_pdef(v, d->reg);
		o_text(v, "RZ");
		o_text(v, "0x0");
		o_puse(v, pred_of(L, s), s->neg);
		return;
	case PTX_R32:
		if (s->kind == PTX_O_SYM && !strcmp(s->sym, "%clock64"))
			goto clock64;
		v = emit(L, "MOV");
		if (s->kind == PTX_O_SYM && sreg_name(s->sym)) {
			v->mnem[0] = '\0';
			snprintf(v->mnem, sizeof(v->mnem), "S2R");
			o_def(v, d->reg, 0, false);
			o_text(v, "%s", sreg_name(s->sym));
			return;
		}
		o_def(v, d->reg, 0, false);
		use_src_or_imm(L, v, s, 0);
		return;
	default:
		break;
	}
	/* 64-bit */
	if (s->kind == PTX_O_SYM && !strcmp(s->sym, "%clock64")) {
clock64:
		v = emit(L, "S2R");
		o_def(v, d->reg, 0, preg(L, d->reg)->cls == PTX_R64);
		o_text(v, "SR_CLOCKLO");
		if (preg(L, d->reg)->cls == PTX_R64) {
			v = emit(L, "S2R");
			o_def(v, d->reg, 1, false);
			o_text(v, "SR_CLOCKHI");
		}
		return;
	}
	if (s->kind == PTX_O_SYM && param_index(L->f, s->sym) >= 0) {
		unsupported(L, "the address of a kernel parameter");
		return;
	}
	if (is_reg(L, s, PTX_R64) && s->reg == d->reg)
		return;
	for (int i = 0; i < 2; i++) {
		v = emit(L, "MOV");
		o_def(v, d->reg, i, i == 0);
		if (s->kind == PTX_O_IMM)
			use_src_or_imm(L, v, s, i);
		else
			use_src(L, v, s, i);
	}
}

/* 64-bit add/sub: d = a +/- b through a temporary (d may alias a or b). */
static void add64(struct lower *L, int d, const struct ptx_operand *a,
		  const struct ptx_operand *b, bool sub)
{
	int t = new_vreg(L, 2), c = new_vreg(L, 1);
	struct ptx_vinsn *v;

	v = emit(L, sub ? "ISUB" : "IADD");
	o_def(v, t, 0, true);
	use_src(L, v, a, 0);
	use_src_or_imm(L, v, b, 0);
	/* carry (a.lo > t.lo for add) / borrow (a.lo < b.lo for sub) */
	v = emit(L, "ISETP.%s.U32", sub ? "LT" : "GT");
	o_text(v, "P6");
	use_src(L, v, a, 0);
	if (sub)
		use_src_or_imm(L, v, b, 0);
	else
		o_use(v, t, 0);
	v = emit(L, "SEL");
	o_def(v, c, 0, false);
	o_text(v, "RZ");
	o_text(v, "0x1");
	o_text(v, "!P6");
	v = emit(L, sub ? "ISUB" : "IADD");
	o_def(v, t, 1, false);
	use_src(L, v, a, 1);
	use_src_or_imm(L, v, b, 1);
	v = emit(L, sub ? "ISUB" : "IADD");
	o_def(v, d, 1, true);
	o_use(v, t, 1);
	o_use(v, c, 0);
	mov_reg(L, d, 0, false, t, 0);
}

/* d (64) = a (32) * b (32), full product */
static void mul_wide(struct lower *L, int d, const struct ptx_operand *a,
		     const struct ptx_operand *b, bool sign)
{
	struct ptx_vinsn *v;

	if (a->kind == PTX_O_IMM) {
		const struct ptx_operand *t = a;

		a = b;
		b = t;
	}
	v = emit(L, "IMUL");
	o_def(v, d, 0, true);
	use_src(L, v, a, 0);
	use_src_or_imm(L, v, b, 0);
	v = emit(L, "IMUL.HI.%s", sign ? "S32" : "U32");
	o_def(v, d, 1, false);
	use_src(L, v, a, 0);
	use_src_or_imm(L, v, b, 0);
}

/* d = a * b mod 2^64 (mul.lo.u64/s64) through a temporary */
static void mul64(struct lower *L, int d, const struct ptx_operand *a,
		  const struct ptx_operand *b)
{
	int t = new_vreg(L, 2), x = new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (a->kind == PTX_O_IMM) {
		const struct ptx_operand *s = a;

		a = b;
		b = s;
	}
	v = emit(L, "IMUL");
	o_def(v, t, 0, true);
	use_src(L, v, a, 0);
	use_src_or_imm(L, v, b, 0);
	v = emit(L, "IMUL.HI.U32");
	o_def(v, t, 1, false);
	use_src(L, v, a, 0);
	use_src_or_imm(L, v, b, 0);
	v = emit(L, "IMAD"); /* x = a.lo * b.hi + t.hi */
	o_def(v, x, 0, false);
	use_src(L, v, a, 0);
	use_src_or_imm(L, v, b, 1);
	o_use(v, t, 1);
	v = emit(L, "IMAD"); /* d.hi = a.hi * b.lo + x */
	o_def(v, d, 1, true);
	use_src(L, v, a, 1);
	use_src_or_imm(L, v, b, 0);
	o_use(v, x, 0);
	mov_reg(L, d, 0, false, t, 0);
}

static void l_arith(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	const char *op = in->op;
	bool add = !strcmp(op, "add"), sub = !strcmp(op, "sub");
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 3))
		return;
	if (t.flt) {
		if (t.bits != 32)
			return (void)unsupported(L, "floating point other than f32");
		d = dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		if (sub) { /* a - b = fma(b, -1, a), one rounding */
			v = emit(L, "FFMA");
			o_def(v, d, 0, false);
			use_src(L, v, &in->ops[2], 0);
			o_text(v, "0xbf800000");
			use_src(L, v, &in->ops[1], 0);
			return;
		}
		alu32(L, add ? "FADD" : "FMUL", d, 0, false, &in->ops[1], &in->ops[2], 0,
		      true);
		return;
	}
	if (t.bits == 64 && (add || sub)) {
		d = dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0)
			add64(L, d, &in->ops[1], &in->ops[2], sub);
		return;
	}
	if (!strcmp(op, "mul") && has_mod(in, ".wide")) {
		d = dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0 && t.bits <= 32)
			mul_wide(L, d, &in->ops[1], &in->ops[2], t.sign);
		else if (d >= 0)
			unsupported(L, "mul.wide of 64-bit operands");
		return;
	}
	if (t.bits == 64) {
		if (has_mod(in, ".hi"))
			return (void)unsupported(L, "mul.hi of 64-bit operands");
		d = dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0)
			mul64(L, d, &in->ops[1], &in->ops[2]);
		return;
	}
	d = dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (add || sub)
		alu32(L, add ? "IADD" : "ISUB", d, 0, false, &in->ops[1], &in->ops[2], 0, add);
	else if (has_mod(in, ".hi"))
		alu32(L, t.sign ? "IMUL.HI.S32" : "IMUL.HI.U32", d, 0, false, &in->ops[1],
		      &in->ops[2], 0, true);
	else
		alu32(L, "IMUL", d, 0, false, &in->ops[1], &in->ops[2], 0, true);
}

static void l_mad(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 4))
		return;
	if (t.flt || !strcmp(in->op, "fma")) {
		if (t.bits != 32)
			return (void)unsupported(L, "floating point other than f32");
		d = dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		v = emit(L, "FFMA");
		o_def(v, d, 0, false);
		use_src(L, v, &in->ops[1], 0);
		use_src_or_imm(L, v, &in->ops[2], 0);
		use_src(L, v, &in->ops[3], 0);
		return;
	}
	if (has_mod(in, ".wide")) {
		int p = new_vreg(L, 2);

		d = dst_reg(L, &in->ops[0], PTX_R64);
		if (d < 0 || t.bits > 32)
			return (void)(d >= 0 && unsupported(L, "mad.wide of 64-bit operands"));
		/* the product in a temporary that is not a PTX register */
		mul_wide(L, p, &in->ops[1], &in->ops[2], t.sign);
		{
			/* d = p + c */
			int tt = new_vreg(L, 2), c = new_vreg(L, 1);

			v = emit(L, "IADD");
			o_def(v, tt, 0, true);
			o_use(v, p, 0);
			use_src_or_imm(L, v, &in->ops[3], 0);
			v = emit(L, "ISETP.GT.U32");
			o_text(v, "P6");
			o_use(v, p, 0);
			o_use(v, tt, 0);
			v = emit(L, "SEL");
			o_def(v, c, 0, false);
			o_text(v, "RZ");
			o_text(v, "0x1");
			o_text(v, "!P6");
			v = emit(L, "IADD");
			o_def(v, tt, 1, false);
			o_use(v, p, 1);
			use_src_or_imm(L, v, &in->ops[3], 1);
			v = emit(L, "IADD");
			o_def(v, d, 1, true);
			o_use(v, tt, 1);
			o_use(v, c, 0);
			mov_reg(L, d, 0, false, tt, 0);
		}
		return;
	}
	if (t.bits == 64 || has_mod(in, ".hi"))
		return (void)unsupported(L, NULL);
	d = dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	v = emit(L, "IMAD");
	o_def(v, d, 0, false);
	if (in->ops[1].kind == PTX_O_IMM) {
		use_src(L, v, &in->ops[2], 0);
		use_src_or_imm(L, v, &in->ops[1], 0);
	} else {
		use_src(L, v, &in->ops[1], 0);
		use_src_or_imm(L, v, &in->ops[2], 0);
	}
	use_src(L, v, &in->ops[3], 0);
}

static void l_logic(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	const char *lop = !strcmp(in->op, "and") ? "AND" : !strcmp(in->op, "or") ? "OR" : "XOR";
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 3))
		return;
	if (t.pred) {
		const struct ptx_operand *a = &in->ops[1], *b = &in->ops[2];
		int tmp = new_vreg(L, 1);

		d = dst_reg(L, &in->ops[0], PTX_PRED);
		if (d < 0)
			return;
		if (a->kind == PTX_O_IMM) {
			a = &in->ops[2];
			b = &in->ops[1];
		}
		if (a->kind == PTX_O_IMM)
			return (void)unsupported(L, "two constant predicates");
		v = emit(L, "SEL"); /* tmp = a ? 1 : 0 */
		o_def(v, tmp, 0, false);
		o_text(v, "RZ");
		o_text(v, "0x1");
		o_puse(v, pred_of(L, a), !a->neg);
		if (b->kind == PTX_O_IMM) {
			bool k = b->imm != 0;
			/* a AND k, a OR k, a XOR k */
			bool is_and = !strcmp(lop, "AND"), is_or = !strcmp(lop, "OR");
			bool konst = (is_and && !k) || (is_or && k);

			v = emit(L, "ISETP.%s.U32",
				 konst ? (k ? "EQ" : "NE") : (!is_and && !is_or && k) ? "EQ" : "NE");
			o_pdef(v, d);
			if (konst)
				o_text(v, "RZ");
			else
				o_use(v, tmp, 0);
			o_text(v, "0x0");
			return;
		}
		v = emit(L, "ISETP.NE.U32.%s", lop);
		o_pdef(v, d);
		o_use(v, tmp, 0);
		o_text(v, "0x0");
		o_puse(v, pred_of(L, b), b->neg);
		return;
	}
	d = dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	for (int p = 0; p < (t.bits == 64 ? 2 : 1); p++) {
		char mn[16];

		snprintf(mn, sizeof(mn), "LOP.%s", lop);
		alu32(L, mn, d, p, t.bits == 64 && p == 0, &in->ops[1], &in->ops[2], p, true);
	}
}

/*
 * not/neg/abs on 64 bits: x = a ^ m, d = x - m with m = all ones (not:
 * then no subtraction), -1 (neg: x = a ^ 0 ... computed as 0 - a) or the
 * sign (abs).
 */
static void unary64(struct lower *L, int d, const struct ptx_operand *a)
{
	const char *op = L->in->op;
	int t = new_vreg(L, 2), m = new_vreg(L, 1), c = new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (!strcmp(op, "not")) {
		for (int p = 0; p < 2; p++) {
			v = emit(L, "LOP.XOR");
			o_def(v, d, p, p == 0);
			use_src(L, v, a, p);
			o_text(v, "0xffffffff");
		}
		return;
	}
	if (!strcmp(op, "neg")) { /* 0 - a */
		mov_reg(L, m, 0, false, -1, 0);
		for (int p = 0; p < 2; p++) {
			v = emit(L, "MOV");
			o_def(v, t, p, p == 0);
			use_src(L, v, a, p);
		}
	} else { /* abs: m = sign, t = a ^ m */
		v = emit(L, "SHR.S32");
		o_def(v, m, 0, false);
		use_src(L, v, a, 1);
		o_text(v, "0x1f");
		for (int p = 0; p < 2; p++) {
			v = emit(L, "LOP.XOR");
			o_def(v, t, p, p == 0);
			use_src(L, v, a, p);
			o_use(v, m, 0);
		}
	}
	/* neg: d = 0 - t; abs: d = t - m:m */
	v = emit(L, "ISETP.LT.U32"); /* borrow */
	o_text(v, "P6");
	if (!strcmp(op, "neg")) {
		o_text(v, "RZ");
		o_use(v, t, 0);
	} else {
		o_use(v, t, 0);
		o_use(v, m, 0);
	}
	v = emit(L, "SEL");
	o_def(v, c, 0, false);
	o_text(v, "RZ");
	o_text(v, "0x1");
	o_text(v, "!P6");
	for (int p = 0; p < 2; p++) {
		v = emit(L, "ISUB");
		o_def(v, d, p, p == 0);
		if (!strcmp(op, "neg")) {
			o_text(v, "RZ");
			o_use(v, t, p);
		} else {
			o_use(v, t, p);
			o_use(v, m, 0);
		}
	}
	v = emit(L, "ISUB");
	o_def(v, d, 1, false);
	o_use(v, d, 1);
	o_use(v, c, 0);
}

static void l_not_neg_abs(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 2))
		return;
	if (t.pred && !strcmp(in->op, "not")) {
		d = dst_reg(L, &in->ops[0], PTX_PRED);
		if (d < 0)
			return;
		v = emit(L, "ISETP.EQ.U32.AND");
		o_pdef(v, d);
		o_text(v, "RZ");
		o_text(v, "0x0");
		o_puse(v, pred_of(L, &in->ops[1]), !in->ops[1].neg);
		return;
	}
	if (t.bits == 64 && !t.flt) {
		d = dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0)
			unary64(L, d, &in->ops[1]);
		return;
	}
	if (t.flt && t.bits != 32)
		return (void)unsupported(L, NULL);
	d = dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (!strcmp(in->op, "not") || (t.flt && !strcmp(in->op, "neg")) ||
	    (t.flt && !strcmp(in->op, "abs"))) {
		v = emit(L, "LOP.%s", !strcmp(in->op, "abs") ? "AND" : "XOR");
		o_def(v, d, 0, false);
		use_src(L, v, &in->ops[1], 0);
		o_text(v, "%s", !strcmp(in->op, "not") ? "0xffffffff" :
				!strcmp(in->op, "neg") ? "0x80000000" : "0x7fffffff");
		return;
	}
	if (!strcmp(in->op, "neg")) {
		v = emit(L, "ISUB");
		o_def(v, d, 0, false);
		o_text(v, "RZ");
		use_src(L, v, &in->ops[1], 0);
		return;
	}
	{ /* abs.s32: (a ^ s) - s with s = a >> 31 */
		int s = new_vreg(L, 1), x = new_vreg(L, 1);

		v = emit(L, "SHR.S32");
		o_def(v, s, 0, false);
		use_src(L, v, &in->ops[1], 0);
		o_text(v, "0x1f");
		v = emit(L, "LOP.XOR");
		o_def(v, x, 0, false);
		use_src(L, v, &in->ops[1], 0);
		o_use(v, s, 0);
		v = emit(L, "ISUB");
		o_def(v, d, 0, false);
		o_use(v, x, 0);
		o_use(v, s, 0);
	}
}

static void l_minmax(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	bool mn = !strcmp(in->op, "min");
	char m[32];
	int d;

	if (!want_ops(L, 3))
		return;
	if (t.bits == 64 || (t.flt && t.bits != 32))
		return (void)unsupported(L, NULL);
	d = dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (t.flt)
		snprintf(m, sizeof(m), "FMNMX.%s", mn ? "MIN" : "MAX");
	else
		snprintf(m, sizeof(m), "IMNMX.%s.%s", mn ? "MIN" : "MAX", int_mod(t));
	alu32(L, m, d, 0, false, &in->ops[1], &in->ops[2], 0, true);
}

static void l_shift(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	bool left = !strcmp(in->op, "shl");
	const char *shr = t.sign ? "SHR.S32" : "SHR.U32";
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 3))
		return;
	if (t.bits == 64) {
		const struct ptx_operand *a = &in->ops[1];
		int64_t n = in->ops[2].imm;
		int tt;

		if (in->ops[2].kind != PTX_O_IMM)
			return (void)unsupported(L, "a 64-bit shift by a register");
		d = dst_reg(L, &in->ops[0], PTX_R64);
		if (d < 0)
			return;
		tt = new_vreg(L, 2);
		if (n >= 64)
			n = 64;
		if (left) {
			if (n >= 32) {
				v = emit(L, "SHL");
				o_def(v, tt, 1, true);
				use_src(L, v, a, 0);
				o_text(v, "0x%x", (unsigned)(n - 32));
				mov_reg(L, tt, 0, false, -1, 0);
			} else {
				int x = new_vreg(L, 1);

				v = emit(L, "SHL");
				o_def(v, tt, 1, true);
				use_src(L, v, a, 1);
				o_text(v, "0x%x", (unsigned)n);
				v = emit(L, "SHR.U32");
				o_def(v, x, 0, false);
				use_src(L, v, a, 0);
				o_text(v, "0x%x", (unsigned)(32 - n));
				v = emit(L, "LOP.OR");
				o_def(v, tt, 1, true);
				o_use(v, tt, 1);
				o_use(v, x, 0);
				v = emit(L, "SHL");
				o_def(v, tt, 0, false);
				use_src(L, v, a, 0);
				o_text(v, "0x%x", (unsigned)n);
			}
		} else {
			if (n >= 32) {
				v = emit(L, "%s", shr);
				o_def(v, tt, 0, true);
				use_src(L, v, a, 1);
				o_text(v, "0x%x", (unsigned)(n - 32 > 31 ? 31 : n - 32));
				if (t.sign) {
					v = emit(L, "SHR.S32");
					o_def(v, tt, 1, false);
					use_src(L, v, a, 1);
					o_text(v, "0x1f");
				} else {
					mov_reg(L, tt, 1, false, -1, 0);
				}
			} else {
				int x = new_vreg(L, 1);

				v = emit(L, "SHR.U32");
				o_def(v, tt, 0, true);
				use_src(L, v, a, 0);
				o_text(v, "0x%x", (unsigned)n);
				v = emit(L, "SHL");
				o_def(v, x, 0, false);
				use_src(L, v, a, 1);
				o_text(v, "0x%x", (unsigned)(32 - n));
				v = emit(L, "LOP.OR");
				o_def(v, tt, 0, true);
				o_use(v, tt, 0);
				o_use(v, x, 0);
				v = emit(L, "%s", shr);
				o_def(v, tt, 1, false);
				use_src(L, v, a, 1);
				o_text(v, "0x%x", (unsigned)n);
			}
		}
		mov_reg(L, d, 0, true, tt, 0);
		mov_reg(L, d, 1, false, tt, 1);
		return;
	}
	d = dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	alu32(L, left ? "SHL" : shr, d, 0, false, &in->ops[1], &in->ops[2], 0, false);
}

static const char *cmp_name(const struct ptx_insn *in, bool *unordered)
{
	static const struct {
		const char *ptx, *vgpu;
		bool u;
	} cmps[] = {
		{ ".eq", "EQ", false }, { ".ne", "NE", false }, { ".lt", "LT", false },
		{ ".le", "LE", false }, { ".gt", "GT", false }, { ".ge", "GE", false },
		{ ".lo", "LT", false }, { ".ls", "LE", false }, { ".hi", "GT", false },
		{ ".hs", "GE", false }, { ".equ", "EQ", true }, { ".neu", "NE", true },
		{ ".ltu", "LT", true }, { ".leu", "LE", true }, { ".gtu", "GT", true },
		{ ".geu", "GE", true },
	};

	for (int i = 0; i < in->nmods; i++)
		for (size_t k = 0; k < sizeof(cmps) / sizeof(cmps[0]); k++)
			if (!strcmp(in->mods[i], cmps[k].ptx)) {
				*unordered = cmps[k].u;
				return cmps[k].vgpu;
			}
	return NULL;
}

static void l_setp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	const char *boolop = has_mod(in, ".and") ? "AND" : has_mod(in, ".or") ? "OR" :
			     has_mod(in, ".xor") ? "XOR" : NULL;
	bool unordered = false;
	const char *cmp = cmp_name(in, &unordered);
	struct ptx_vinsn *v;
	int d;

	if (in->nops != (boolop ? 4 : 3))
		return (void)lerr(L, "setp takes %d operands here", boolop ? 4 : 3);
	if (!cmp)
		return (void)unsupported(L, "comparison");
	if (unordered || (t.flt && t.bits != 32))
		return (void)unsupported(L, "unordered or non-f32 floating-point comparison");
	d = dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	if (t.bits == 64) {
		/* (hi CMP' hi) or (hi == hi and lo CMP_unsigned lo), via P6 */
		const char *hicmp = !strcmp(cmp, "LE") ? "LT" : !strcmp(cmp, "GE") ? "GT" : cmp;
		bool eqne = !strcmp(cmp, "EQ") || !strcmp(cmp, "NE");

		if (boolop)
			return (void)unsupported(L, "a combined 64-bit comparison");
		v = emit(L, "ISETP.%s.U32", cmp);
		o_text(v, "P6");
		use_src(L, v, &in->ops[1], 0);
		use_src_or_imm(L, v, &in->ops[2], 0);
		if (!eqne) {
			v = emit(L, "ISETP.EQ.U32.AND");
			o_text(v, "P6");
			use_src(L, v, &in->ops[1], 1);
			use_src_or_imm(L, v, &in->ops[2], 1);
			o_text(v, "P6");
		}
		v = emit(L, "ISETP.%s.%s.%s", eqne ? cmp : hicmp, eqne ? "U32" : int_mod(t),
			 !strcmp(cmp, "EQ") ? "AND" : "OR");
		o_pdef(v, d);
		use_src(L, v, &in->ops[1], 1);
		use_src_or_imm(L, v, &in->ops[2], 1);
		o_text(v, "P6");
		return;
	}
	if (t.flt)
		v = emit(L, "FSETP.%s%s%s", cmp, boolop ? "." : "", boolop ? boolop : "");
	else
		v = emit(L, "ISETP.%s.%s%s%s", cmp, int_mod(t), boolop ? "." : "",
			 boolop ? boolop : "");
	o_pdef(v, d);
	use_src(L, v, &in->ops[1], 0);
	use_src_or_imm(L, v, &in->ops[2], 0);
	if (boolop)
		o_puse(v, pred_of(L, &in->ops[3]), in->ops[3].neg);
}

static void l_selp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	int d, p;

	if (!want_ops(L, 4))
		return;
	d = dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	p = pred_of(L, &in->ops[3]);
	if (d < 0 || p < 0)
		return;
	for (int part = 0; part < (t.bits == 64 ? 2 : 1); part++) {
		const struct ptx_operand *a = &in->ops[1], *b = &in->ops[2];
		bool neg = in->ops[3].neg;
		struct ptx_vinsn *v;

		if (a->kind == PTX_O_IMM && b->kind != PTX_O_IMM) {
			a = &in->ops[2];
			b = &in->ops[1];
			neg = !neg;
		}
		v = emit(L, "SEL");
		o_def(v, d, part, t.bits == 64 && part == 0);
		use_src(L, v, a, part);
		use_src_or_imm(L, v, b, part);
		o_puse(v, p, neg);
	}
}

/* Sign- or zero-extend the low @bits of @v into 32 bits. */
static void extend(struct lower *L, int d, int s, int spart, int bits, bool sign)
{
	struct ptx_vinsn *v;

	if (!sign) {
		v = emit(L, "LOP.AND");
		o_def(v, d, 0, false);
		o_use(v, s, spart);
		o_text(v, "0x%x", (1u << bits) - 1);
		return;
	}
	v = emit(L, "SHL");
	o_def(v, d, 0, false);
	o_use(v, s, spart);
	o_text(v, "0x%x", 32 - bits);
	v = emit(L, "SHR.S32");
	o_def(v, d, 0, false);
	o_use(v, d, 0);
	o_text(v, "0x%x", 32 - bits);
}

static void l_cvt(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype dt = type_of(in, 0), st = type_of(in, 1);
	const struct ptx_operand *s = &in->ops[1];
	struct ptx_vinsn *v;
	int d, sv, sp, lo;

	if (!want_ops(L, 2))
		return;
	if (!dt.bits || !st.bits)
		return (void)lerr(L, "cvt needs a destination and a source type");
	if ((dt.flt && dt.bits != 32) || (st.flt && st.bits != 32))
		return (void)unsupported(L, "conversions of types other than f32");
	d = dst_reg(L, &in->ops[0], dt.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	if (dt.flt && st.flt)
		return (void)unsupported(L, "rounding f32 to an integral f32");
	if (dt.flt || st.flt) {
		if (dt.bits == 64 || st.bits == 64 || dt.bits < 32 || st.bits < 32)
			return (void)unsupported(L, "float conversions of other than 32-bit integers");
		if (dt.flt && !has_mod(in, ".rn"))
			return (void)unsupported(L, "rounding modes other than .rn");
		if (st.flt && !has_mod(in, ".rzi"))
			return (void)unsupported(L, "rounding modes other than .rzi");
		v = emit(L, "%s.%s", dt.flt ? "I2F" : "F2I", int_mod(dt.flt ? st : dt));
		o_def(v, d, 0, false);
		use_src(L, v, s, 0);
		return;
	}
	sv = src_reg(L, s, 0, &sp);
	lo = new_vreg(L, 1);
	/* the source's value in 32 bits */
	if (st.bits < 32 && dt.bits > st.bits)
		extend(L, lo, sv < 0 ? 0 : sv, sp, st.bits, st.sign);
	else
		mov_reg(L, lo, 0, false, sv, sp);
	if (sv < 0) /* zero */
		mov_reg(L, lo, 0, false, -1, 0);
	if (dt.bits == 64) {
		if (st.bits == 64) {
			mov_reg(L, d, 0, true, s->reg, 0);
			mov_reg(L, d, 1, false, s->reg, 1);
			return;
		}
		mov_reg(L, d, 0, true, lo, 0);
		if (st.sign) {
			v = emit(L, "SHR.S32");
			o_def(v, d, 1, false);
			o_use(v, lo, 0);
			o_text(v, "0x1f");
		} else {
			mov_reg(L, d, 1, false, -1, 0);
		}
		return;
	}
	if (dt.bits < 32)
		extend(L, d, lo, 0, dt.bits, dt.sign);
	else
		mov_reg(L, d, 0, false, lo, 0);
}

static void l_cvta(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool to = has_mod(in, ".to");
	bool shared = has_mod(in, ".shared") || has_mod(in, ".shared::cta");
	struct ptype t = type_of(in, 0);
	int d;

	if (!want_ops(L, 2))
		return;
	if (!shared && !has_mod(in, ".global"))
		return (void)unsupported(L, "state spaces other than .global and .shared");
	d = dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	if (t.bits != 64) { /* cvta.to.shared.u32: the offset */
		struct ptx_vinsn *v = emit(L, "MOV");

		o_def(v, d, 0, false);
		use_src_or_imm(L, v, &in->ops[1], 0);
		return;
	}
	if (shared && !to) { /* a generic address of shared memory */
		struct ptx_vinsn *v = emit(L, "MOV");

		o_def(v, d, 0, true);
		use_src(L, v, &in->ops[1], 0);
		v = emit(L, "MOV");
		o_def(v, d, 1, false);
		o_text(v, "0x%x", GENERIC_SHARED_HI);
		return;
	}
	if (shared) { /* to.shared: the offset, high word zero */
		struct ptx_vinsn *v = emit(L, "MOV");

		o_def(v, d, 0, true);
		use_src(L, v, &in->ops[1], 0);
		mov_reg(L, d, 1, false, -1, 0);
		return;
	}
	/* global and generic addresses are the same */
	if (is_reg(L, &in->ops[1], PTX_R64) && in->ops[1].reg == d)
		return;
	{
		int t2 = new_vreg(L, 2);

		for (int i = 0; i < 2; i++) {
			struct ptx_vinsn *v = emit(L, "MOV");

			o_def(v, t2, i, i == 0);
			use_src(L, v, &in->ops[1], i);
		}
		mov_reg(L, d, 0, true, t2, 0);
		mov_reg(L, d, 1, false, t2, 1);
	}
}

/* ---- memory ---- */

enum space { SP_NONE, SP_PARAM, SP_GLOBAL, SP_SHARED, SP_OTHER };

static enum space space_of(const struct ptx_insn *in)
{
	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (!strcmp(m, ".param"))
			return SP_PARAM;
		if (!strcmp(m, ".global"))
			return SP_GLOBAL;
		if (!strncmp(m, ".shared", 7))
			return SP_SHARED;
		if (!strcmp(m, ".local") || !strcmp(m, ".const"))
			return SP_OTHER;
	}
	return SP_NONE;
}

static const char *msize(struct ptype t)
{
	switch (t.bits) {
	case 8: return t.sign ? "S8" : "U8";
	case 16: return t.sign ? "S16" : "U16";
	case 64: return "64";
	default: return "32";
	}
}

/*
 * The address of a memory operand in @sp: sets *base (vreg or -1) and the
 * offset text.  Global addresses are pairs; shared ones the low word.
 */
static bool address(struct lower *L, const struct ptx_operand *o, enum space sp,
		    int *base, char *off, size_t len)
{
	*base = -1;
	if (o->kind != PTX_O_MEM)
		return lerr(L, "expected a memory operand [address]");
	if (sp == SP_PARAM) {
		int p = o->sym[0] ? param_index(L->f, o->sym) : -1;

		if (p < 0 || o->reg >= 0)
			return unsupported(L, "a parameter address other than [name+offset]");
		snprintf(off, len, "arg%d+%" PRId64, p, o->imm);
		return true;
	}
	if (o->reg >= 0) {
		if (sp == SP_GLOBAL && preg(L, o->reg)->cls != PTX_R64)
			return lerr(L, "a global address must be a 64-bit register");
		*base = o->reg;
		snprintf(off, len, "%" PRId64, o->imm);
		return true;
	}
	if (o->sym[0]) {
		int sh = shared_index(L, o->sym);

		if (sp != SP_SHARED || sh < 0)
			return unsupported(L, "addressing a variable other than .shared");
		snprintf(off, len, "sh%d+%" PRId64, sh, o->imm);
		return true;
	}
	if (sp == SP_GLOBAL)
		return unsupported(L, "an absolute global address");
	snprintf(off, len, "%" PRId64, o->imm);
	return true;
}

static int vec_count(const struct ptx_insn *in)
{
	if (has_mod(in, ".v2"))
		return 2;
	if (has_mod(in, ".v4"))
		return 4;
	return 1;
}

static void l_ldst(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool load = !strcmp(in->op, "ld");
	enum space sp = space_of(in);
	struct ptype t = type_of(in, 0);
	const struct ptx_operand *mem = &in->ops[load ? 1 : 0], *val = &in->ops[load ? 0 : 1];
	int nvec = vec_count(in), base, step;
	char off[PTX_NAME_MAX + 24];
	const char *mn;

	if (!want_ops(L, 2))
		return;
	if (sp == SP_NONE)
		return (void)unsupported(L, "generic addressing (name the state space)");
	if (sp == SP_OTHER)
		return (void)unsupported(L, "the .local and .const state spaces");
	if (!load && sp == SP_PARAM)
		return (void)unsupported(L, "st.param");
	if (!t.bits || t.pred)
		return (void)lerr(L, "missing type");
	if (!address(L, mem, sp, &base, off, sizeof(off)))
		return;
	mn = sp == SP_PARAM ? "LDP" : sp == SP_GLOBAL ? (load ? "LDG" : "STG") :
			    (load ? "LDS" : "STS");
	step = t.bits / 8;
	for (int e = 0; e < nvec; e++) {
		const struct ptx_operand *x = val;
		struct ptx_operand one;
		struct ptx_vinsn *v;
		char eoff[PTX_NAME_MAX + 40];

		if (nvec > 1) {
			if (val->kind != PTX_O_VEC || val->nvec != nvec)
				return (void)lerr(L, "expected a vector of %d registers", nvec);
			memset(&one, 0, sizeof(one));
			one.kind = val->vec[e] < 0 ? PTX_O_SINK : PTX_O_REG;
			one.reg = val->vec[e];
			x = &one;
			if (x->kind == PTX_O_SINK)
				continue;
		}
		snprintf(eoff, sizeof(eoff), "%s+%d", off, e * step);
		v = emit(L, "%s.%s", mn, msize(t));
		if (load) {
			int d = dst_reg(L, x, t.bits == 64 ? PTX_R64 : PTX_R32);

			if (d < 0)
				return;
			o_def(v, d, 0, false);
			o_mem(v, base, "%s", eoff);
		} else {
			o_mem(v, base, "%s", eoff);
			if (t.bits == 64 && x->kind == PTX_O_IMM && x->imm) {
				int tmp = new_vreg(L, 2);
				struct ptx_vinsn *m;

				/* the pair in registers before the store */
				m = pre_move(L, "MOV");
				o_def(m, tmp, 0, true);
				o_text(m, "0x%" PRIx32, (uint32_t)x->imm);
				m = pre_move(L, "MOV");
				o_def(m, tmp, 1, false);
				o_text(m, "0x%" PRIx32, (uint32_t)((uint64_t)x->imm >> 32));
				o_use(v, tmp, 0);
			} else if (t.bits == 64 && x->kind == PTX_O_IMM) {
				o_text(v, "RZ");
			} else if (t.bits == 64) {
				if (!is_reg(L, x, PTX_R64))
					return (void)lerr(L, "a 64-bit store needs a 64-bit register");
				o_use(v, x->reg, 0);
			} else {
				use_src(L, v, x, 0);
			}
		}
	}
}

static void l_atom(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool red = !strcmp(in->op, "red");
	enum space sp = space_of(in);
	struct ptype t = type_of(in, 0);
	const struct ptx_operand *mem = &in->ops[red ? 0 : 1];
	static const char *const ops[] = { ".add", ".min", ".max", ".exch", ".and",
					   ".or", ".xor", ".cas" };
	const char *op = NULL;
	char off[PTX_NAME_MAX + 24], mn[40];
	struct ptx_vinsn *v;
	int base, d = -1;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (has_mod(in, ops[i]))
			op = ops[i];
	if (!op)
		return (void)unsupported(L, "atomic operation");
	if (sp != SP_GLOBAL && sp != SP_SHARED)
		return (void)unsupported(L, "atomics other than .global and .shared");
	if (t.bits != 32 || t.flt)
		return (void)unsupported(L, "atomics on other than 32-bit integers");
	if (in->nops != (red ? 2 : !strcmp(op, ".cas") ? 4 : 3))
		return (void)lerr(L, "wrong number of operands");
	if (!address(L, mem, sp, &base, off, sizeof(off)))
		return;
	if (!red && (d = dst_reg(L, &in->ops[0], PTX_R32)) < 0 &&
	    in->ops[0].kind != PTX_O_SINK)
		return;
	if (!strcmp(op, ".cas")) {
		snprintf(mn, sizeof(mn), "%s.CAS", sp == SP_GLOBAL ? "ATOMG" : "ATOMS");
	} else {
		char up[8];
		int i;

		for (i = 0; op[i + 1] && i < 7; i++)
			up[i] = (char)(op[i + 1] - 'a' + 'A');
		up[i] = '\0';
		snprintf(mn, sizeof(mn), "%s.%s.%s", sp == SP_GLOBAL ? "ATOMG" : "ATOMS", up,
			 t.sign ? "S32" : "U32");
	}
	{
		int b, bp, c = -1, cp = 0;

		b = src_reg(L, &in->ops[red ? 1 : 2], 0, &bp);
		if (!strcmp(op, ".cas"))
			c = src_reg(L, &in->ops[3], 0, &cp);
		v = emit(L, "%s", mn);
		if (d < 0)
			o_text(v, "RZ");
		else
			o_def(v, d, 0, false);
		o_mem(v, base, "%s", off);
		if (b < 0)
			o_text(v, "RZ");
		else
			o_use(v, b, bp);
		if (!strcmp(op, ".cas")) {
			if (c < 0)
				o_text(v, "RZ");
			else
				o_use(v, c, cp);
		}
	}
}

/* ---- control and barriers ---- */

static void l_bra(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	int k;

	if (!want_ops(L, 1))
		return;
	if (in->ops[0].kind != PTX_O_SYM || (k = label_index(L->f, in->ops[0].sym)) < 0)
		return (void)lerr(L, "unknown branch target");
	v = emit(L, "BRA");
	v->branch = true;
	o_text(v, "K%dL%d", (int)(L->f - L->m->funcs), k);
}

static void l_exit(struct lower *L)
{
	struct ptx_vinsn *v = emit(L, "EXIT");

	v->exit = true;
}

/* bar.sync / barrier.sync / bar.arrive / bar.red */
static void l_bar(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool arrive = has_mod(in, ".arrive"), red = has_mod(in, ".red");
	struct ptx_vinsn *v;
	int first = 0, n = in->nops;

	if (has_mod(in, ".warp")) /* bar.warp.sync: lanes always reconverge here */
		return;
	if (!arrive && !red && !has_mod(in, ".sync") && strcmp(in->op, "barrier"))
		return (void)unsupported(L, NULL);
	if (red) {
		/* bar.red.popc.u32 d, a{, b}, {!}p / bar.red.and|or.pred p, a{, b}, {!}q */
		const char *rop = has_mod(in, ".popc") ? "POPC" : has_mod(in, ".and") ? "AND" :
				  has_mod(in, ".or") ? "OR" : NULL;
		int p;

		if (!rop || n < 3 || n > 4)
			return (void)unsupported(L, NULL);
		p = pred_of(L, &in->ops[n - 1]);
		if (p < 0)
			return;
		v = emit(L, "BAR.RED.%s", rop);
		use_src_or_imm(L, v, &in->ops[1], 0);
		if (n == 4)
			use_src_or_imm(L, v, &in->ops[2], 0);
		o_puse(v, p, in->ops[n - 1].neg);
		v = emit(L, "B2R.RESULT");
		if (!strcmp(rop, "POPC")) {
			int d = dst_reg(L, &in->ops[0], PTX_R32);

			if (d < 0)
				return;
			o_def(v, d, 0, false);
		} else {
			int d = dst_reg(L, &in->ops[0], PTX_PRED);

			if (d < 0)
				return;
			o_text(v, "RZ");
			o_pdef(v, d);
		}
		return;
	}
	if (n < 1 || n > 2)
		return (void)lerr(L, "%s takes 1 or 2 operands", in->op);
	v = emit(L, "BAR.%s", arrive ? "ARV" : "SYNC");
	for (int i = first; i < n; i++)
		use_src_or_imm(L, v, &in->ops[i], 0);
}

static void l_fence(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *scope = has_mod(in, ".sys") ? "SYS" :
			    (has_mod(in, ".gl") || has_mod(in, ".gpu")) ? "GPU" : "CTA";

	emit(L, "MEMBAR.%s", scope);
}

/* an mbarrier (or other shared) address operand as one register */
static int shared_addr_reg(struct lower *L, const struct ptx_operand *o)
{
	struct ptx_vinsn *v;
	int t;

	if (o->kind != PTX_O_MEM)
		return lerr(L, "expected [address]"), -2;
	if (o->reg >= 0 && !o->imm)
		return o->reg; /* part 0 of a pair is the shared address */
	t = new_vreg(L, 1);
	if (o->reg >= 0) {
		v = emit(L, "IADD");
		o_def(v, t, 0, false);
		o_use(v, o->reg, 0);
		o_text(v, "0x%" PRIx32, (uint32_t)o->imm);
		return t;
	}
	v = emit(L, "MOV");
	o_def(v, t, 0, false);
	if (o->sym[0]) {
		int sh = shared_index(L, o->sym);

		if (sh < 0)
			return lerr(L, "'%s' is not a .shared variable", o->sym), -2;
		o_text(v, "sh%d+%" PRId64, sh, o->imm);
	} else {
		o_text(v, "0x%" PRIx32, (uint32_t)o->imm);
	}
	return t;
}

static void use_addr(struct ptx_vinsn *v, int r)
{
	struct ptx_vop *o = add_op(v);

	o->kind = PTX_V_MEM;
	o->v = r;
	o->text[0] = '\0';
}

/* .release/.relaxed/.acquire and .cta/.cluster, as vGPU spells them */
static void sem_scope(const struct ptx_insn *in, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", has_mod(in, ".relaxed") ? ".RELAXED" : "",
		 has_mod(in, ".cluster") ? ".CLUSTER" : "", "");
}

static void l_mbarrier(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	char ss[32];
	int a;

	sem_scope(in, ss, sizeof(ss));
	if (has_mod(in, ".init") || has_mod(in, ".inval") || has_mod(in, ".expect_tx") ||
	    has_mod(in, ".complete_tx")) {
		bool arrive = has_mod(in, ".arrive") || has_mod(in, ".arrive_drop");

		if (!arrive) {
			const char *what = has_mod(in, ".init") ? "INIT" :
					   has_mod(in, ".inval") ? "INVAL" :
					   has_mod(in, ".expect_tx") ? "EXPECT_TX" : "COMPLETE_TX";

			if (in->nops != (!strcmp(what, "INVAL") ? 1 : 2))
				return (void)lerr(L, "wrong number of operands");
			a = shared_addr_reg(L, &in->ops[0]);
			if (a < -1)
				return;
			v = emit(L, "MBAR.%s%s", what,
				 !strcmp(what, "INIT") || !strcmp(what, "INVAL") ? "" : ss);
			use_addr(v, a);
			if (in->nops == 2)
				use_src_or_imm(L, v, &in->ops[1], 0);
			return;
		}
	}
	if (has_mod(in, ".arrive") || has_mod(in, ".arrive_drop")) {
		bool drop = has_mod(in, ".arrive_drop");
		const char *kind = has_mod(in, ".expect_tx") ? ".EXPECT_TX" :
				   has_mod(in, ".noComplete") ? ".NOCOMPLETE" : "";
		int d;

		if (in->nops < 2 || in->nops > 3)
			return (void)lerr(L, "wrong number of operands");
		if (in->ops[0].kind == PTX_O_SINK)
			d = -1;
		else if ((d = dst_reg(L, &in->ops[0], PTX_R64)) < 0)
			return;
		a = shared_addr_reg(L, &in->ops[1]);
		if (a < -1)
			return;
		v = emit(L, "MBAR.%s%s%s%s", drop ? "ARRIVE_DROP" : "ARRIVE", kind,
			 has_mod(in, ".relaxed") ? ".RELAXED" : "",
			 has_mod(in, ".cluster") ? ".CLUSTER" : "");
		if (d < 0)
			o_text(v, "_");
		else
			o_def(v, d, 0, false);
		use_addr(v, a);
		if (in->nops == 3)
			use_src_or_imm(L, v, &in->ops[2], 0);
		return;
	}
	if (has_mod(in, ".test_wait") || has_mod(in, ".try_wait")) {
		bool parity = has_mod(in, ".parity"), try = has_mod(in, ".try_wait");
		const struct ptx_operand *st = &in->ops[2];
		int p, r = -1, rp = 0;

		if (in->nops < 3 || in->nops > (try ? 4 : 3))
			return (void)lerr(L, "wrong number of operands");
		p = dst_reg(L, &in->ops[0], PTX_PRED);
		a = shared_addr_reg(L, &in->ops[1]);
		if (p < 0 || a < -1)
			return;
		if (!parity && !is_reg(L, st, PTX_R64))
			return (void)lerr(L, "the state operand must be a 64-bit register");
		/* an immediate parity with an immediate hint: parity in a register */
		if (parity && st->kind == PTX_O_IMM && in->nops == 4 &&
		    in->ops[3].kind == PTX_O_IMM)
			r = src_reg(L, st, 0, &rp);
		v = emit(L, "MBAR.%s%s%s%s", try ? "TRY_WAIT" : "TEST_WAIT",
			 parity ? ".PARITY" : "", has_mod(in, ".relaxed") ? ".RELAXED" : "",
			 has_mod(in, ".cluster") ? ".CLUSTER" : "");
		o_pdef(v, p);
		use_addr(v, a);
		if (r >= 0)
			o_use(v, r, rp);
		else if (parity && st->kind == PTX_O_IMM && in->nops == 4)
			o_text(v, "RZ");
		else if (parity)
			use_src_or_imm(L, v, st, 0);
		else
			o_use(v, st->reg, 0);
		if (in->nops == 4)
			use_src_or_imm(L, v, &in->ops[3], 0);
		return;
	}
	if (has_mod(in, ".pending_count")) {
		int d;

		if (!want_ops(L, 2))
			return;
		d = dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0 || !is_reg(L, &in->ops[1], PTX_R64))
			return (void)(d >= 0 && lerr(L, "the state must be a 64-bit register"));
		v = emit(L, "MBAR.PENDING_COUNT");
		o_def(v, d, 0, false);
		o_use(v, in->ops[1].reg, 0);
		return;
	}
	unsupported(L, NULL);
}

/* The vGPU mnemonic of an immediate-parity try_wait needs RZ as parity 0. */

static void l_cp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;

	if (has_mod(in, ".bulk") && has_mod(in, ".tensor"))
		return (void)unsupported(L, "tensor copies are not lowered yet");
	if (has_mod(in, ".bulk") && (has_mod(in, ".commit_group") || has_mod(in, ".wait_group"))) {
		if (has_mod(in, ".commit_group")) {
			emit(L, "CP.ASYNC.BULK.COMMIT_GROUP");
			return;
		}
		if (!want_ops(L, 1) || in->ops[0].kind != PTX_O_IMM)
			return (void)lerr(L, "wait_group takes an immediate count");
		v = emit(L, "CP.ASYNC.BULK.WAIT_GROUP%s", has_mod(in, ".read") ? ".READ" : "");
		o_text(v, "%" PRId64, in->ops[0].imm);
		return;
	}
	if (has_mod(in, ".bulk")) {
		bool to_global = in->nmods > 1 && !strcmp(in->mods[1], ".global");
		int dst, src, mb = -1;

		if (in->nops != (to_global ? 3 : 4))
			return (void)lerr(L, "wrong number of operands");
		if (to_global) {
			src = shared_addr_reg(L, &in->ops[1]);
			if (src < -1)
				return;
			if (in->ops[0].reg < 0 || in->ops[0].imm ||
			    preg(L, in->ops[0].reg)->cls != PTX_R64)
				return (void)unsupported(L, "a global address other than [%rd]");
			v = emit(L, "CP.ASYNC.BULK.GLOBAL");
			use_addr(v, in->ops[0].reg);
			use_addr(v, src);
			use_src_or_imm(L, v, &in->ops[2], 0);
			return;
		}
		dst = shared_addr_reg(L, &in->ops[0]);
		mb = shared_addr_reg(L, &in->ops[3]);
		if (dst < -1 || mb < -1)
			return;
		src = in->ops[1].reg;
		if (in->ops[1].kind != PTX_O_MEM || src < 0 || in->ops[1].imm ||
		    preg(L, src)->cls != PTX_R64)
			return (void)unsupported(L, "a global address other than [%rd]");
		v = emit(L, "CP.ASYNC.BULK");
		use_addr(v, dst);
		use_addr(v, src);
		use_src_or_imm(L, v, &in->ops[2], 0);
		use_addr(v, mb);
		return;
	}
	if (has_mod(in, ".mbarrier")) { /* cp.async.mbarrier.arrive{.noinc} */
		int a;

		if (!want_ops(L, 1))
			return;
		a = shared_addr_reg(L, &in->ops[0]);
		if (a < -1)
			return;
		v = emit(L, "CP.ASYNC.MBARRIER.ARRIVE%s", has_mod(in, ".noinc") ? ".NOINC" : "");
		use_addr(v, a);
		return;
	}
	if (has_mod(in, ".commit_group"))
		return; /* every cp.async is waited for by WAIT_ALL */
	if (has_mod(in, ".wait_group") || has_mod(in, ".wait_all")) {
		emit(L, "CP.ASYNC.WAIT_ALL");
		return;
	}
	{
		int dst, src;

		if (in->nops != 3)
			return (void)unsupported(L, "cp.async with a source size");
		dst = shared_addr_reg(L, &in->ops[0]);
		src = in->ops[1].reg;
		if (dst < -1)
			return;
		if (in->ops[1].kind != PTX_O_MEM || src < 0 || in->ops[1].imm ||
		    preg(L, src)->cls != PTX_R64)
			return (void)unsupported(L, "a global address other than [%rd]");
		v = emit(L, "CP.ASYNC%s", has_mod(in, ".cg") ? ".CG" : "");
		use_addr(v, dst);
		use_addr(v, src);
		use_src_or_imm(L, v, &in->ops[2], 0);
	}
}

static void l_mapa(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = type_of(in, 0);
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 3))
		return;
	d = dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	v = emit(L, "MAPA");
	o_def(v, d, 0, t.bits == 64);
	use_src(L, v, &in->ops[1], 0);
	use_src_or_imm(L, v, &in->ops[2], 0);
	if (t.bits == 64)
		mov_reg(L, d, 1, false, -1, 0);
}

static void l_barrier_cluster(struct lower *L)
{
	const struct ptx_insn *in = L->in;

	if (has_mod(in, ".arrive"))
		emit(L, "BAR.CLUSTER.ARRIVE%s", has_mod(in, ".relaxed") ? ".RELAXED" : "");
	else if (has_mod(in, ".wait"))
		emit(L, "BAR.CLUSTER.WAIT");
	else
		unsupported(L, NULL);
}

static void l_nanosleep(struct lower *L)
{
	struct ptx_vinsn *v;

	if (!want_ops(L, 1))
		return;
	v = emit(L, "NANOSLEEP");
	use_src_or_imm(L, v, &L->in->ops[0], 0);
}

static void l_vote(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	int p;

	if (in->nops < 2)
		return (void)lerr(L, "vote takes a destination and a predicate");
	p = pred_of(L, &in->ops[1]);
	if (p < 0)
		return;
	if (has_mod(in, ".ballot")) {
		int d = dst_reg(L, &in->ops[0], PTX_R32);

		if (d < 0)
			return;
		v = emit(L, "VOTE.BALLOT");
		o_def(v, d, 0, false);
		o_puse(v, p, in->ops[1].neg);
		return;
	}
	if (has_mod(in, ".all") || has_mod(in, ".any")) {
		int d = dst_reg(L, &in->ops[0], PTX_PRED);

		if (d < 0)
			return;
		v = emit(L, "VOTE.%s", has_mod(in, ".all") ? "ALL" : "ANY");
		o_pdef(v, d);
		o_puse(v, p, in->ops[1].neg);
		return;
	}
	unsupported(L, NULL);
}

static void l_activemask(struct lower *L)
{
	struct ptx_vinsn *v;
	int d;

	if (!want_ops(L, 1))
		return;
	d = dst_reg(L, &L->in->ops[0], PTX_R32);
	if (d < 0)
		return;
	v = emit(L, "VOTE.BALLOT");
	o_def(v, d, 0, false);
	o_text(v, "PT");
}

static const struct {
	const char *op;
	void (*fn)(struct lower *L);
} lowerers[] = {
	{ "mov", l_mov },	  { "add", l_arith },	  { "sub", l_arith },
	{ "mul", l_arith },	  { "mad", l_mad },	  { "fma", l_mad },
	{ "and", l_logic },	  { "or", l_logic },	  { "xor", l_logic },
	{ "not", l_not_neg_abs }, { "neg", l_not_neg_abs }, { "abs", l_not_neg_abs },
	{ "min", l_minmax },	  { "max", l_minmax },	  { "shl", l_shift },
	{ "shr", l_shift },	  { "setp", l_setp },	  { "selp", l_selp },
	{ "cvt", l_cvt },	  { "cvta", l_cvta },	  { "ld", l_ldst },
	{ "st", l_ldst },	  { "atom", l_atom },	  { "red", l_atom },
	{ "bra", l_bra },	  { "ret", l_exit },	  { "exit", l_exit },
	{ "bar", l_bar },	  { "barrier", l_bar },	  { "membar", l_fence },
	{ "fence", l_fence },	  { "mbarrier", l_mbarrier }, { "cp", l_cp },
	{ "mapa", l_mapa },	  { "nanosleep", l_nanosleep }, { "vote", l_vote },
	{ "activemask", l_activemask },
};

int ptx_lower(const struct ptx_module *m, const struct ptx_func *f,
	      struct ptx_diag *dg, struct ptx_code *code)
{
	struct lower L = { .m = m, .f = f, .dg = dg, .c = code, .building = -1 };
	int labels = 0;

	memset(code, 0, sizeof(*code));
	for (int r = 0; r < f->nregs; r++)
		new_vreg(&L, f->regs[r].cls == PTX_PRED ? 0 : f->regs[r].cls == PTX_R64 ? 2 : 1);
	for (int i = 0; i < f->ninsns && dg->errors < 50; i++) {
		const struct ptx_insn *in = &f->insns[i];
		size_t k;

		L.in = in;
		if (in->label[0]) {
			struct ptx_vinsn *v = emit(&L, "%s", "");

			v->guard = -1;
			snprintf(v->label, sizeof(v->label), "K%dL%d", (int)(f - m->funcs), labels++);
			finish(&L);
			continue;
		}
		if (!strcmp(in->op, "barrier") && has_mod(in, ".cluster")) {
			l_barrier_cluster(&L);
			finish(&L);
			continue;
		}
		for (k = 0; k < sizeof(lowerers) / sizeof(lowerers[0]); k++)
			if (!strcmp(lowerers[k].op, in->op))
				break;
		if (k == sizeof(lowerers) / sizeof(lowerers[0])) {
			char b[256];

			lerr(&L, "unsupported PTX instruction '%s'", spelled(in, b, sizeof(b)));
			continue;
		}
		if (!strcmp(in->op, "barrier") && has_mod(in, ".cta") == false &&
		    !has_mod(in, ".sync") && !has_mod(in, ".arrive") && !has_mod(in, ".red")) {
			unsupported(&L, NULL);
			continue;
		}
		lowerers[k].fn(&L);
		finish(&L);
	}
	finish(&L);
	return L.failed || dg->errors ? -EINVAL : 0;
}

void ptx_code_free(struct ptx_code *code)
{
	free(code->insns);
	free(code->vregs);
	memset(code, 0, sizeof(*code));
}
