// SPDX-License-Identifier: MIT
/*
 * PTX lowering: f16, bf16 and their x2 pairs (two halves in a 32-bit
 * register, the upper one in bits 16..31, each computed on its own) in
 * add, sub, mul, fma, neg, abs, min, max, ex2.approx and tanh.approx, as an H200
 * computes them (tests/ptx/gen's half module).
 *
 * Each half becomes an f32 or an f64 on the core's CVT (exact), the
 * operation runs there, and CVT rounds the result back once with the
 * instruction's .sat or .relu (a NaN comes out as the type's canonical
 * 0x7fff):
 *
 *  - add, sub, mul in f32 (FADD/FMUL, round to nearest): the f32 result
 *    of two halves is rounded once more by CVT, and a double rounding to
 *    nearest is innocuous when the wider format has at least 2p + 2 bits
 *    (24 >= 2 * 11 + 2 for f16, 2 * 8 + 2 for bf16);
 *  - fma in f64: the product of two halves is exact (DMUL), the sum is
 *    not always, and there a double rounding can go wrong (the sum
 *    rounded onto a midpoint of the half type); so the sum is made round
 *    to odd (TwoSum's exact error: an inexact even result moves one ulp
 *    toward the exact sum), and round to odd with p + 2 bits or more
 *    then round to nearest is the sum rounded once;
 *  - neg, abs, min, max in f32 (FMUL, FMNMX: the GPU's NaN rules, which
 *    are a half's too: see pl_f32_minmax);
 *  - .ftz: a subnormal source is a zero of its sign, and so is a
 *    subnormal result (after rounding);
 *  - tanh.approx: what the GPU computes on the generated values is tanh
 *    rounded to f32 and then toward zero to the half type: here tanh(|x|)
 *    is an odd polynomial below 1/8 (its error far below f32's), else
 *    1 - 2 / (e^2|x| + 1) with e^2|x| from EX2 of 2|x|/ln 2 split in two
 *    (an f32 result within a few ulps, so a value a few f32 ulps from a
 *    half may round to the other side of it), with x's sign;
 *  - .oob (fma): +0 when an operand is the OOB NaN (0x7fff: the canonical
 *    NaN of both types).
 */
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

struct half_op {
	const char *op;
	int nsrc;
};

static const struct half_op half_ops[] = {
	{ "add", 2 }, { "sub", 2 }, { "mul", 2 }, { "fma", 3 }, { "neg", 1 },
	{ "abs", 1 }, { "min", 2 }, { "max", 2 }, { "ex2", 1 }, { "tanh", 1 },
};

/* d = a OP imm */
static void op_ri(struct lower *L, const char *mn, int d, int a, uint32_t imm)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", imm);
}

/* d = a OP b */
static void op_rr(struct lower *L, const char *mn, int d, int a, int b)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
}

/* a source into a 32-bit vreg of its own */
static int src_vreg(struct lower *L, const struct ptx_operand *o)
{
	int r = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "MOV");

	pl_o_def(v, r, 0, false);
	pl_use_src_or_imm(L, v, o, 0);
	return r;
}

/* h (a half in the low 16 bits) with a subnormal made a zero of its sign */
static int flush_half(struct lower *L, int h, bool bf)
{
	int e = pl_new_vreg(L, 1), z = pl_new_vreg(L, 1), r = pl_new_vreg(L, 1);
	int p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	op_ri(L, "LOP.AND", e, h, bf ? 0x7f80 : 0x7c00);
	op_ri(L, "LOP.AND", z, h, 0x8000);
	v = pl_emit(L, "ISETP.EQ.U32");
	pl_o_pdef(v, p);
	pl_o_use(v, e, 0);
	pl_o_text(v, "0x0");
	v = pl_emit(L, "SEL");
	pl_o_def(v, r, 0, false);
	pl_o_use(v, z, 0);
	pl_o_use(v, h, 0);
	pl_o_puse(v, p, false);
	return r;
}

/* the half in lane @lane (1: the upper one) of @s, in the low 16 bits */
static int lane_of(struct lower *L, int s, int lane)
{
	int h;

	if (!lane)
		return s;
	h = pl_new_vreg(L, 1);
	op_ri(L, "SHR.U32", h, s, 16);
	return h;
}

/* CVT.@dt.@st d, s (d a new vreg of @width) */
static int cvt(struct lower *L, const char *dt, const char *st, const char *mods, int s, int width)
{
	int d = pl_new_vreg(L, width);
	struct ptx_vinsn *v = pl_emit(L, "CVT.%s.%s%s", dt, st, mods);

	pl_o_def(v, d, 0, false);
	pl_o_use(v, s, 0);
	return d;
}

/* -x of the pair @x into a new pair, on the bits */
static int dneg(struct lower *L, int x)
{
	int n = pl_new_vreg(L, 2);
	struct ptx_vinsn *v;

	pl_mov_reg(L, n, 0, true, x, 0);
	v = pl_emit(L, "LOP.XOR");
	pl_o_def(v, n, 1, false);
	pl_o_use(v, x, 1);
	pl_o_text(v, "0x80000000");
	return n;
}

/* DADD into a new pair */
static int dadd(struct lower *L, int a, int b)
{
	int d = pl_new_vreg(L, 2);
	struct ptx_vinsn *v = pl_emit(L, "DADD");

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
	return d;
}

/*
 * a * b + c of three f64 pairs (a * b exact) rounded to odd: s = RN(p + c)
 * and TwoSum's exact error e = p + c - s; when e is not 0 (s finite) and
 * s's last bit is 0, s moves one ulp toward p + c (its bits + 1 if e has
 * s's sign, - 1 if not).
 */
static int fma_odd(struct lower *L, int a, int b, int c)
{
	int p = pl_new_vreg(L, 2), s, bb, ab, e, t = pl_new_vreg(L, 1);
	int dd = pl_new_vreg(L, 2), m = pl_new_vreg(L, 1), r = pl_new_vreg(L, 2);
	int q = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	v = pl_emit(L, "DMUL");
	pl_o_def(v, p, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
	s = dadd(L, p, c);
	bb = dadd(L, s, dneg(L, p));		       /* s - p */
	ab = dadd(L, s, dneg(L, bb));		       /* s - bb */
	e = dadd(L, dadd(L, p, dneg(L, ab)),	       /* (p - ab) */
		 dadd(L, c, dneg(L, bb)));	       /* + (c - bb) */
	/* q: e != 0, s finite, s even */
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, e, 1);
	pl_o_text(v, "0x7fffffff");
	v = pl_emit(L, "LOP.OR");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, t, 0);
	pl_o_use(v, e, 0);
	v = pl_emit(L, "ISETP.NE.U32");
	pl_o_pdef(v, q);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x0");
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, s, 1);
	pl_o_text(v, "0x7ff00000");
	v = pl_emit(L, "ISETP.NE.U32.AND");
	pl_o_pdef(v, q);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x7ff00000");
	pl_o_puse(v, q, false);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, s, 0);
	pl_o_text(v, "0x1");
	v = pl_emit(L, "ISETP.EQ.U32.AND");
	pl_o_pdef(v, q);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x0");
	pl_o_puse(v, q, false);
	/* m: all ones when q; dd = (e's sign differs from s's ? -1 : 1) & m */
	v = pl_emit(L, "SEL");
	pl_o_def(v, m, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0xffffffff");
	pl_o_puse(v, q, true);
	v = pl_emit(L, "LOP.XOR");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, e, 1);
	pl_o_use(v, s, 1);
	v = pl_emit(L, "SHR.S32");
	pl_o_def(v, dd, 1, true);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x1f");
	v = pl_emit(L, "LOP.OR");
	pl_o_def(v, dd, 0, true);
	pl_o_use(v, dd, 1);
	pl_o_text(v, "0x1");
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, dd, 0, true);
	pl_o_use(v, dd, 0);
	pl_o_use(v, m, 0);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, dd, 1, false);
	pl_o_use(v, dd, 1);
	pl_o_use(v, m, 0);
	pl_add64(L, r, s, dd, 0);
	return r;
}

/* d = a * b + c (FFMA; b < 0: the immediate @imm) */
static void ffma(struct lower *L, int d, int a, int b, uint32_t imm, int c)
{
	struct ptx_vinsn *v = pl_emit(L, "FFMA");

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	if (b >= 0)
		pl_o_use(v, b, 0);
	else
		pl_o_text(v, "0x%x", imm);
	pl_o_use(v, c, 0);
}

/* tanh of the f32 @f into the f32 vreg @x (see the top of the file) */
static void tanh32(struct lower *L, int x, int f)
{
	static const uint32_t poly[] = { 0xbc11371b, 0x3cb327a4, 0xbd5d0dd1, 0x3e088889,
					 0xbeaaaaab }; /* c11 .. c3 */
	int ax = pl_new_vreg(L, 1), x2 = pl_new_vreg(L, 1), q = pl_new_vreg(L, 1);
	int y = pl_new_vreg(L, 1), r = pl_new_vreg(L, 1), e = pl_new_vreg(L, 1);
	int t = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	op_ri(L, "LOP.AND", ax, f, 0x7fffffffu);
	/* |x| < 1/8: |x| + |x| x^2 (c3 + x^2 (c5 + ...)) */
	op_rr(L, "FMUL", x2, ax, ax);
	v = pl_emit(L, "MOV");
	pl_o_def(v, q, 0, false);
	pl_o_text(v, "0x%x", poly[0]);
	for (size_t i = 1; i < sizeof(poly) / sizeof(poly[0]); i++) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, t, 0, false);
		pl_o_text(v, "0x%x", poly[i]);
		ffma(L, q, q, x2, 0, t);
	}
	op_rr(L, "FMUL", q, q, x2);
	ffma(L, q, q, ax, 0, ax);
	/*
	 * else 1 - 2 / (e + 1), e = 2^y (1 + r ln 2), y + r = 2|x| / ln 2,
	 * |x| at most 16 (tanh is 1 in f32 from 9.01 on; a NaN comes below)
	 */
	v = pl_emit(L, "FMNMX.MIN");
	pl_o_def(v, x2, 0, false);
	pl_o_use(v, ax, 0);
	pl_o_text(v, "0x41800000");
	op_ri(L, "FMUL", y, x2, 0x4038aa3bu);
	op_ri(L, "LOP.XOR", t, y, 0x80000000u);
	ffma(L, r, x2, -1, 0x4038aa3bu, t);
	ffma(L, r, x2, -1, 0x33257060u, r);
	op_ri(L, "FMUL", r, r, 0x3f317218u);
	v = pl_emit(L, "MUFU.EX2");
	pl_o_def(v, e, 0, false);
	pl_o_use(v, y, 0);
	ffma(L, e, e, r, 0, e);
	op_ri(L, "FADD", e, e, 0x3f800000u);
	v = pl_emit(L, "MOV");
	pl_o_def(v, t, 0, false);
	pl_o_text(v, "0x40000000");
	op_rr(L, "FDIV", e, t, e);
	op_ri(L, "LOP.XOR", e, e, 0x80000000u);
	op_ri(L, "FADD", e, e, 0x3f800000u);
	v = pl_emit(L, "FSETP.LT");
	pl_o_pdef(v, p);
	pl_o_use(v, ax, 0);
	pl_o_text(v, "0x3e000000");
	v = pl_emit(L, "SEL");
	pl_o_def(v, e, 0, false);
	pl_o_use(v, q, 0);
	pl_o_use(v, e, 0);
	pl_o_puse(v, p, false);
	v = pl_emit(L, "FSETP.NE"); /* a NaN */
	pl_o_pdef(v, p);
	pl_o_use(v, ax, 0);
	pl_o_use(v, ax, 0);
	v = pl_emit(L, "SEL");
	pl_o_def(v, e, 0, false);
	pl_o_use(v, ax, 0);
	pl_o_use(v, e, 0);
	pl_o_puse(v, p, false);
	/* x's sign */
	op_ri(L, "LOP.AND", t, f, 0x80000000u);
	op_rr(L, "LOP.OR", x, e, t);
}

/*
 * tanh.approx.f32 d, a: the f32 tanh the half forms use (above), which
 * is not the GPU's approximation (PTX: maximum relative error 2^-11; see
 * tests/ptx/gen/known-differences.txt for the distance measured).
 */
void pl_tanh(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	int a, pp, d, x, n, p;
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 2))
		return;
	if (!pl_has_mod(in, ".approx") || !t.flt || t.bits != 32)
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	a = pl_src_reg(L, &in->ops[1], 0, &pp);
	if (d < 0 || a < 0)
		return;
	x = pl_new_vreg(L, 1);
	n = pl_new_vreg(L, 1);
	p = pl_new_vreg(L, 0);
	tanh32(L, x, a);
	/* a NaN gives the canonical NaN 0x7fffffff, as on an H200 */
	v = pl_emit(L, "FSETP.NE");
	pl_o_pdef(v, p);
	pl_o_use(v, a, 0);
	pl_o_use(v, a, 0);
	v = pl_emit(L, "MOV");
	pl_o_def(v, n, 0, false);
	pl_o_text(v, "0x7fffffff");
	v = pl_emit(L, "SEL");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, n, 0);
	pl_o_use(v, x, 0);
	pl_o_puse(v, p, false);
}

/*
 * One lane: @h[] the sources' halves (low 16 bits), the result's half
 * zero-extended into a new vreg.
 */
static int half_lane(struct lower *L, const char *op, int nsrc, bool bf, int *h)
{
	const struct ptx_insn *in = L->in;
	const char *ty = bf ? "BF16" : "F16";
	bool ftz = pl_has_mod(in, ".ftz"), sat = pl_has_mod(in, ".sat");
	bool relu = pl_has_mod(in, ".relu");
	const char *fl = sat ? ".SAT" : relu ? ".RELU" : "";
	int f[3], r, x = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	for (int k = 0; k < nsrc; k++)
		if (ftz)
			h[k] = flush_half(L, h[k], bf);
	if (!strcmp(op, "fma")) {
		int nanp = pl_new_vreg(L, 0), s;

		for (int k = 0; k < 3; k++)
			f[k] = cvt(L, "F64", ty, "", h[k], 2);
		s = fma_odd(L, f[0], f[1], f[2]);
		r = cvt(L, ty, "F64", fl, s, 1);
		if (!sat) { /* a NaN of DADD keeps a payload: the canonical one */
			v = pl_emit(L, "DSETP.NE");
			pl_o_pdef(v, nanp);
			pl_o_use(v, s, 0);
			pl_o_use(v, s, 0);
			v = pl_emit(L, "SEL");
			pl_o_def(v, r, 0, false);
			pl_o_use(v, r, 0);
			pl_o_text(v, "0x7fff");
			pl_o_puse(v, nanp, true);
		}
		goto out;
	}
	for (int k = 0; k < nsrc; k++)
		f[k] = cvt(L, "F32", ty, "", h[k], 1);
	if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul")) {
		if (!strcmp(op, "sub")) { /* a - b = a + (-b), exactly */
			int n = pl_new_vreg(L, 1);

			op_ri(L, "LOP.XOR", n, f[1], 0x80000000u);
			f[1] = n;
		}
		op_rr(L, strcmp(op, "mul") ? "FADD" : "FMUL", x, f[0], f[1]);
	} else if (!strcmp(op, "neg")) {
		op_ri(L, "FMUL", x, f[0], 0xbf800000u);
	} else if (!strcmp(op, "abs")) {
		op_ri(L, "LOP.AND", x, f[0], 0x7fffffffu);
		op_ri(L, "FMUL", x, x, 0x3f800000u);
	} else if (!strcmp(op, "min") || !strcmp(op, "max")) {
		/* CVT's NaN from an f16 is the canonical one: its sign back for .xorsign */
		for (int k = 0; k < 2 && !bf; k++) {
			int sg = pl_new_vreg(L, 1);

			op_ri(L, "LOP.AND", sg, h[k], 0x8000);
			op_ri(L, "SHL", sg, sg, 16);
			op_rr(L, "LOP.OR", sg, sg, f[k]);
			f[k] = sg;
		}
		pl_f32_minmax_regs(L, x, f[0], f[1], !strcmp(op, "min"));
	} else if (!strcmp(op, "tanh")) {
		tanh32(L, x, f[0]);
		r = cvt(L, ty, "F32", ".RZ", x, 1);
		goto out;
	} else { /* ex2 */
		v = pl_emit(L, "MUFU.EX2");
		pl_o_def(v, x, 0, false);
		pl_o_use(v, f[0], 0);
	}
	r = cvt(L, ty, "F32", fl, x, 1);
out:
	if (ftz)
		r = flush_half(L, r, bf);
	return r;
}

/* .oob: d = +0 where a source half is 0x7fff */
static int oob(struct lower *L, int r, int nsrc, const int *h)
{
	int p = pl_new_vreg(L, 0), m = pl_new_vreg(L, 1), d = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	for (int k = 0; k < nsrc; k++) {
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, m, 0, false);
		pl_o_use(v, h[k], 0);
		pl_o_text(v, "0xffff");
		v = pl_emit(L, k ? "ISETP.EQ.U32.OR" : "ISETP.EQ.U32");
		pl_o_pdef(v, p);
		pl_o_use(v, m, 0);
		pl_o_text(v, "0x7fff");
		if (k)
			pl_o_puse(v, p, false);
	}
	v = pl_emit(L, "SEL");
	pl_o_def(v, d, 0, false);
	pl_o_text(v, "RZ");
	pl_o_use(v, r, 0);
	pl_o_puse(v, p, false);
	return d;
}

bool pl_half_hook(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct half_op *o = NULL;
	bool bf = false, x2 = false, found = false;
	int s[3], lanes[2], d;

	for (size_t i = 0; i < sizeof(half_ops) / sizeof(half_ops[0]); i++)
		if (!strcmp(in->op, half_ops[i].op))
			o = &half_ops[i];
	if (!o)
		return false;
	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (!strcmp(m, ".f16") || !strcmp(m, ".bf16") || !strcmp(m, ".f16x2") ||
		    !strcmp(m, ".bf16x2")) {
			found = true;
			bf = m[1] == 'b';
			x2 = m[strlen(m) - 1] == '2';
		}
	}
	if (!found)
		return false;
	if ((!strcmp(o->op, "ex2") || !strcmp(o->op, "tanh")) && !pl_has_mod(in, ".approx"))
		return pl_lerr(L, "%s of a half type is .approx", o->op), true;
	if (!pl_want_ops(L, o->nsrc + 1))
		return true;
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return true;
	for (int k = 0; k < o->nsrc; k++)
		s[k] = src_vreg(L, &in->ops[1 + k]);
	for (int lane = 0; lane < (x2 ? 2 : 1); lane++) {
		int h[3], raw[3];

		for (int k = 0; k < o->nsrc; k++)
			raw[k] = h[k] = lane_of(L, s[k], lane);
		lanes[lane] = half_lane(L, o->op, o->nsrc, bf, h);
		if (pl_has_mod(in, ".oob"))
			lanes[lane] = oob(L, lanes[lane], o->nsrc, raw);
	}
	if (x2) {
		int t = pl_new_vreg(L, 1);

		op_ri(L, "SHL", t, lanes[1], 16);
		op_rr(L, "LOP.OR", d, t, lanes[0]);
	} else {
		pl_mov_reg(L, d, 0, false, lanes[0], 0);
	}
	return true;
}
