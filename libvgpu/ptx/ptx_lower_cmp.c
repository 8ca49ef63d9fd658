// SPDX-License-Identifier: MIT
/*
 * PTX lowering: comparisons of every type (PTX ISA 9.7.3 and 9.7.4:
 * setp, set, selp's neighbour slct).
 *
 *   setp.CMP[.BOOL][.ftz].T  p[|q], a, b[, {!}c]
 *   set.CMP[.BOOL][.ftz].D.T d, a, b[, {!}c]
 *   slct.D.s32|f32           d, a, b, c        d = c >= 0 ? a : b
 *
 * T: b16/u16/s16, b32/u32/s32, b64/u64/s64 (ISETP, 64 bits as a compare
 * of the high words and an unsigned one of the low words), f32 and f64
 * (pl_fcmp: ordered, unordered, num, nan), f16 and bf16 and their x2
 * pairs: each half becomes an f32 that compares as the half does (bf16:
 * its bits << 16, exact; f16: magnitude << 13 + 0x70000000, which keeps
 * the order, zero, infinity and NaN, .ftz flushing subnormal halves) and
 * goes through pl_fcmp.
 *
 * With a second destination q: q = !t BOOL c (t: the comparison), and
 * for x2 sources p and q are the low and high halves' results.  set
 * writes 0xffffffff (u32, s32), 1.0f (f32), 1.0 in f16 or bf16, or per
 * half 0xffff or 1.0 for x2 sources.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

enum ckind { CK_NONE, CK_INT, CK_F32, CK_F64, CK_F16, CK_BF16 };

struct ctype {
	enum ckind k;
	int bits;
	bool sign, x2;
};

static bool ctype_of(const char *m, struct ctype *t)
{
	static const struct {
		const char *name;
		struct ctype t;
	} types[] = {
		{ ".b16", { CK_INT, 16, false, false } },  { ".u16", { CK_INT, 16, false, false } },
		{ ".s16", { CK_INT, 16, true, false } },   { ".b32", { CK_INT, 32, false, false } },
		{ ".u32", { CK_INT, 32, false, false } },  { ".s32", { CK_INT, 32, true, false } },
		{ ".b64", { CK_INT, 64, false, false } },  { ".u64", { CK_INT, 64, false, false } },
		{ ".s64", { CK_INT, 64, true, false } },   { ".f32", { CK_F32, 32, true, false } },
		{ ".f64", { CK_F64, 64, true, false } },   { ".f16", { CK_F16, 16, true, false } },
		{ ".bf16", { CK_BF16, 16, true, false } }, { ".f16x2", { CK_F16, 32, true, true } },
		{ ".bf16x2", { CK_BF16, 32, true, true } },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(types[i].name, m)) {
			*t = types[i].t;
			return true;
		}
	return false;
}

/* The @nth type modifier of the instruction; k == CK_NONE if none. */
static struct ctype ctype_nth(const struct ptx_insn *in, int nth)
{
	struct ctype t = { CK_NONE, 0, false, false };

	for (int i = 0; i < in->nmods; i++)
		if (ctype_of(in->mods[i], &t) && !nth--)
			return t;
	t.k = CK_NONE;
	return t;
}

static const char *cmp_mod(const struct ptx_insn *in)
{
	static const char *const cmps[] = { ".eq",  ".ne",  ".lt",  ".le",  ".gt",  ".ge",
					    ".lo",  ".ls",  ".hi",  ".hs",  ".equ", ".neu",
					    ".ltu", ".leu", ".gtu", ".geu", ".num", ".nan" };

	for (int i = 0; i < in->nmods; i++)
		for (size_t k = 0; k < sizeof(cmps) / sizeof(cmps[0]); k++)
			if (!strcmp(in->mods[i], cmps[k]))
				return cmps[k];
	return NULL;
}

/* The vGPU comparison of an integer one, NULL for the float-only ones. */
static const char *int_cmp(const char *c, bool inverse)
{
	static const struct {
		const char *ptx, *cmp, *inv;
	} m[] = {
		{ ".eq", "EQ", "NE" }, { ".ne", "NE", "EQ" }, { ".lt", "LT", "GE" },
		{ ".le", "LE", "GT" }, { ".gt", "GT", "LE" }, { ".ge", "GE", "LT" },
		{ ".lo", "LT", "GE" }, { ".ls", "LE", "GT" }, { ".hi", "GT", "LE" },
		{ ".hs", "GE", "LT" },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (!strcmp(m[i].ptx, c))
			return inverse ? m[i].inv : m[i].cmp;
	return NULL;
}

static const char *bool_mod(const struct ptx_insn *in)
{
	return pl_has_mod(in, ".and") ? "AND" : pl_has_mod(in, ".or") ? "OR" :
	       pl_has_mod(in, ".xor") ? "XOR" : NULL;
}

/* A register (pair for @bits 64) holding source @o. */
static int src_reg(struct lower *L, const struct ptx_operand *o, int bits)
{
	int w = bits == 64 ? 2 : 1, r;

	if (o->kind == PTX_O_REG && pl_preg(L, o->reg)->cls == (w == 2 ? PTX_R64 : PTX_R32))
		return o->reg;
	r = pl_new_vreg(L, w);
	for (int p = 0; p < w; p++) {
		struct ptx_vinsn *v = pl_emit(L, "MOV");

		pl_o_def(v, r, p, w == 2 && p == 0);
		pl_use_src_or_imm(L, v, o, p);
	}
	return r;
}

static void op_ri(struct lower *L, const char *mn, int d, int a, uint32_t imm)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", imm);
}

/* a 16-bit integer source extended to 32 bits, in a new register */
static int ext16(struct lower *L, const struct ptx_operand *o, bool sign)
{
	int s = src_reg(L, o, 32), d = pl_new_vreg(L, 1);

	if (!sign) {
		op_ri(L, "LOP.AND", d, s, 0xffff);
	} else {
		op_ri(L, "SHL", d, s, 16);
		op_ri(L, "SHR.S32", d, d, 16);
	}
	return d;
}

/* half @hi of the 32-bit register @h as an f32 that compares alike */
static int half_to_f32(struct lower *L, int h, bool hi, bool bf16, bool ftz)
{
	int x = pl_new_vreg(L, 1), m = pl_new_vreg(L, 1), s = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (bf16) {
		if (hi)
			op_ri(L, "LOP.AND", x, h, 0xffff0000u);
		else
			op_ri(L, "SHL", x, h, 16);
		return x;
	}
	if (hi)
		op_ri(L, "SHR.U32", x, h, 16);
	else
		pl_mov_reg(L, x, 0, false, h, 0);
	op_ri(L, "LOP.AND", m, x, 0x7fff);
	if (ftz) { /* a subnormal half is a zero */
		v = pl_emit(L, "ISETP.LT.U32");
		pl_o_text(v, "P6");
		pl_o_use(v, m, 0);
		pl_o_text(v, "0x400");
		v = pl_emit(L, "SEL");
		pl_o_def(v, m, 0, false);
		pl_o_text(v, "RZ");
		pl_o_use(v, m, 0);
		pl_o_text(v, "P6");
	}
	v = pl_emit(L, "ISETP.EQ.U32");
	pl_o_text(v, "P6");
	pl_o_use(v, m, 0);
	pl_o_text(v, "0x0");
	op_ri(L, "SHL", m, m, 13);
	op_ri(L, "IADD", m, m, 0x70000000u);
	v = pl_emit(L, "SEL");
	pl_o_def(v, m, 0, false);
	pl_o_text(v, "RZ");
	pl_o_use(v, m, 0);
	pl_o_text(v, "P6");
	op_ri(L, "LOP.AND", s, x, 0x8000);
	op_ri(L, "SHL", s, s, 16);
	v = pl_emit(L, "LOP.OR");
	pl_o_def(v, m, 0, false);
	pl_o_use(v, m, 0);
	pl_o_use(v, s, 0);
	return m;
}

/* 64-bit integer comparison into the predicate @p (through P6) */
static void icmp64(struct lower *L, const char *cmp, bool sign, int a, int b, int p)
{
	const char *hicmp = !strcmp(cmp, "LE") ? "LT" : !strcmp(cmp, "GE") ? "GT" : cmp;
	bool eqne = !strcmp(cmp, "EQ") || !strcmp(cmp, "NE");
	struct ptx_vinsn *v;

	v = pl_emit(L, "ISETP.%s.U32", cmp);
	pl_o_text(v, "P6");
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
	if (!eqne) {
		v = pl_emit(L, "ISETP.EQ.U32.AND");
		pl_o_text(v, "P6");
		pl_o_use(v, a, 1);
		pl_o_use(v, b, 1);
		pl_o_text(v, "P6");
	}
	v = pl_emit(L, "ISETP.%s.%s.%s", eqne ? cmp : hicmp, eqne || !sign ? "U32" : "S32",
		    !strcmp(cmp, "EQ") ? "AND" : "OR");
	pl_o_pdef(v, p);
	pl_o_use(v, a, 1);
	pl_o_use(v, b, 1);
	pl_o_text(v, "P6");
}

/*
 * t = (a CMP b) into the new predicates t[0] (and t[1] for the high
 * halves of x2 types); false after an error.
 */
static bool compare(struct lower *L, struct ctype t, const char *c, const struct ptx_operand *a,
		    const struct ptx_operand *b, int tp[2])
{
	bool ftz = pl_has_mod(L->in, ".ftz");
	int ra, rb;

	tp[0] = pl_new_vreg(L, 0);
	tp[1] = t.x2 ? pl_new_vreg(L, 0) : -1;
	switch (t.k) {
	case CK_INT: {
		const char *ic = int_cmp(c, false);
		struct ptx_vinsn *v;

		if (!ic)
			return pl_unsupported(L, "comparison");
		if (t.bits == 64) {
			icmp64(L, ic, t.sign, src_reg(L, a, 64), src_reg(L, b, 64), tp[0]);
			return true;
		}
		if (t.bits == 16) {
			ra = ext16(L, a, t.sign);
			rb = ext16(L, b, t.sign);
			v = pl_emit(L, "ISETP.%s.%s", ic, t.sign ? "S32" : "U32");
			pl_o_pdef(v, tp[0]);
			pl_o_use(v, ra, 0);
			pl_o_use(v, rb, 0);
			return true;
		}
		v = pl_emit(L, "ISETP.%s.%s", ic, t.sign ? "S32" : "U32");
		pl_o_pdef(v, tp[0]);
		pl_use_src(L, v, a, 0);
		pl_use_src_or_imm(L, v, b, 0);
		return true;
	}
	case CK_F32:
		return pl_fcmp(L, "FSETP", c, src_reg(L, a, 32), src_reg(L, b, 32), tp[0]);
	case CK_F64:
		return pl_fcmp(L, "DSETP", c, src_reg(L, a, 64), src_reg(L, b, 64), tp[0]);
	case CK_F16:
	case CK_BF16:
		ra = src_reg(L, a, 32);
		rb = src_reg(L, b, 32);
		for (int h = 0; h < (t.x2 ? 2 : 1); h++) {
			int fa = half_to_f32(L, ra, h, t.k == CK_BF16, ftz);
			int fb = half_to_f32(L, rb, h, t.k == CK_BF16, ftz);

			if (!pl_fcmp(L, "FSETP", c, fa, fb, tp[h]))
				return false;
		}
		return true;
	default:
		return pl_unsupported(L, "comparison type");
	}
}

/*
 * d = ({!}t) BOOL {!}c, or d = {!}t without @boolop.
 */
static void combine(struct lower *L, int d, int t, bool tneg, const char *boolop,
		    const struct ptx_operand *c)
{
	struct ptx_vinsn *v;
	int r;

	if (d < 0)
		return;
	if (!boolop) {
		v = pl_emit(L, "ISETP.EQ.U32.AND");
		pl_o_pdef(v, d);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x0");
		pl_o_puse(v, t, tneg);
		return;
	}
	r = pl_new_vreg(L, 1);
	v = pl_emit(L, "SEL"); /* r = t ? 1 : 0 */
	pl_o_def(v, r, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0x1");
	pl_o_puse(v, t, true);
	v = pl_emit(L, "ISETP.%s.U32.%s", tneg ? "EQ" : "NE", boolop);
	pl_o_pdef(v, d);
	pl_o_use(v, r, 0);
	pl_o_text(v, "0x0");
	pl_o_puse(v, pl_pred_of(L, c), c->neg);
}

static void lower_setp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ctype t = ctype_nth(in, 0);
	const char *boolop = bool_mod(in), *c = cmp_mod(in);
	const struct ptx_operand *o = &in->ops[0];
	int p, q, tp[2];

	if (in->nops != (boolop ? 4 : 3))
		return (void)pl_lerr(L, "setp takes %d operands here", boolop ? 4 : 3);
	if (!c || t.k == CK_NONE)
		return (void)pl_unsupported(L, "comparison");
	p = o->kind == PTX_O_SINK ? -1 : pl_pred_of(L, o);
	q = o->has_p ? o->preg : -1;
	if (t.x2 && !o->has_p)
		return (void)pl_lerr(L, "setp of an x2 type writes two predicates (p|q)");
	if (t.k == CK_INT && t.bits == 32) {
		/* one ISETP per destination: !(a CMP b) is a compare too */
		for (int k = 0; k < 2; k++) {
			int dst = k ? q : p;
			struct ptx_vinsn *v;

			if (dst < 0)
				continue;
			v = pl_emit(L, "ISETP.%s.%s%s%s", int_cmp(c, k), t.sign ? "S32" : "U32",
				    boolop ? "." : "", boolop ? boolop : "");
			pl_o_pdef(v, dst);
			pl_use_src(L, v, &in->ops[1], 0);
			pl_use_src_or_imm(L, v, &in->ops[2], 0);
			if (boolop)
				pl_o_puse(v, pl_pred_of(L, &in->ops[3]), in->ops[3].neg);
		}
		return;
	}
	if (!compare(L, t, c, &in->ops[1], &in->ops[2], tp))
		return;
	combine(L, p, tp[0], false, boolop, &in->ops[3]);
	if (t.x2)
		combine(L, q, tp[1], false, boolop, &in->ops[3]);
	else
		combine(L, q, tp[0], true, boolop, &in->ops[3]);
}

/* the value set writes for true into a destination of type @d (@x2: per half) */
static uint32_t set_true(struct ctype d, bool x2)
{
	uint32_t h;

	switch (d.k) {
	case CK_F32: return 0x3f800000u;
	case CK_F16: h = 0x3c00; break;
	case CK_BF16: h = 0x3f80; break;
	default:
		if (!x2)
			return 0xffffffffu;
		h = 0xffff;
	}
	return x2 ? h | h << 16 : h;
}

static void lower_set(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ctype dt = ctype_nth(in, 0), t = ctype_nth(in, 1);
	const char *boolop = bool_mod(in), *c = cmp_mod(in);
	int d, tp[2], p[2];
	uint32_t one;

	if (in->nops != (boolop ? 4 : 3))
		return (void)pl_lerr(L, "set takes %d operands here", boolop ? 4 : 3);
	if (!c || dt.k == CK_NONE || t.k == CK_NONE)
		return (void)pl_unsupported(L, "comparison");
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 || !compare(L, t, c, &in->ops[1], &in->ops[2], tp))
		return;
	one = set_true(dt, t.x2);
	for (int h = 0; h < (t.x2 ? 2 : 1); h++) {
		p[h] = tp[h];
		if (boolop) {
			p[h] = pl_new_vreg(L, 0);
			combine(L, p[h], tp[h], false, boolop, &in->ops[3]);
		}
	}
	if (!t.x2) {
		struct ptx_vinsn *v = pl_emit(L, "SEL");

		pl_o_def(v, d, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x%x", one);
		pl_o_puse(v, p[0], true);
		return;
	}
	{
		int lo = pl_new_vreg(L, 1), hi = pl_new_vreg(L, 1);
		struct ptx_vinsn *v;

		v = pl_emit(L, "SEL");
		pl_o_def(v, lo, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x%x", one & 0xffff);
		pl_o_puse(v, p[0], true);
		v = pl_emit(L, "SEL");
		pl_o_def(v, hi, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x%x", one & 0xffff0000u);
		pl_o_puse(v, p[1], true);
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, lo, 0);
		pl_o_use(v, hi, 0);
	}
}

/* slct.D.s32 / slct[.ftz].D.f32 d, a, b, c: d = c >= 0 ? a : b */
static void lower_slct(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ctype dt = ctype_nth(in, 0), ct = ctype_nth(in, 1);
	int w = dt.bits == 64 ? 2 : 1, d, p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 4))
		return;
	if (dt.k == CK_NONE || (ct.k != CK_F32 && !(ct.k == CK_INT && ct.sign && ct.bits == 32)))
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], w == 2 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	if (ct.k == CK_F32) {
		v = pl_emit(L, "FSETP.GE%s", pl_f32_ftz(L));
		pl_o_pdef(v, p);
		pl_use_src(L, v, &in->ops[3], 0);
		pl_o_text(v, "0x0");
	} else {
		v = pl_emit(L, "ISETP.GE.S32");
		pl_o_pdef(v, p);
		pl_use_src(L, v, &in->ops[3], 0);
		pl_o_text(v, "0x0");
	}
	for (int part = 0; part < w; part++) {
		const struct ptx_operand *a = &in->ops[1], *b = &in->ops[2];
		bool neg = false;

		if (a->kind == PTX_O_IMM && b->kind != PTX_O_IMM) {
			a = &in->ops[2];
			b = &in->ops[1];
			neg = true;
		}
		v = pl_emit(L, "SEL");
		pl_o_def(v, d, part, w == 2 && part == 0);
		pl_use_src(L, v, a, part);
		pl_use_src_or_imm(L, v, b, part);
		pl_o_puse(v, p, neg);
	}
}

bool pl_cmp_hook(struct lower *L)
{
	const char *op = L->in->op;

	if (!strcmp(op, "setp"))
		lower_setp(L);
	else if (!strcmp(op, "set"))
		lower_set(L);
	else if (!strcmp(op, "slct"))
		lower_slct(L);
	else
		return false;
	return true;
}
