// SPDX-License-Identifier: MIT
/*
 * PTX lowering: the f32 forms that are more than one core instruction,
 * as the GPU computes them (tests/ptx/gen's float module): .sat of
 * add/sub/mul/fma/mad, neg and abs (a NaN comes out as the GPU's NaN),
 * min/max with .NaN and .xorsign.abs; testp and copysign.
 */
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

/*
 * .sat: d clamped to [0, 1] in place, a NaN to 0: FMNMX.MAX with +0
 * (a NaN loses, -0 gives +0), then FMNMX.MIN with 1.
 */
void pl_f32_sat(struct lower *L, int d)
{
	struct ptx_vinsn *v;

	if (!pl_has_mod(L->in, ".sat"))
		return;
	v = pl_emit(L, "FMNMX.MAX");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, d, 0);
	pl_o_text(v, "0x0");
	v = pl_emit(L, "FMNMX.MIN");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, d, 0);
	pl_o_text(v, "0x3f800000");
}

/*
 * neg.f32 and abs.f32: a times -1 (abs: |a| times 1) on FMUL, exact; a
 * NaN gives the GPU's NaN, and .ftz flushes a subnormal.
 */
void pl_f32_neg_abs(struct lower *L, int d, const struct ptx_operand *a, bool abs)
{
	struct ptx_vinsn *v;

	if (abs) {
		int t = pl_new_vreg(L, 1);

		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, t, 0, false);
		pl_use_src(L, v, a, 0);
		pl_o_text(v, "0x7fffffff");
		v = pl_emit(L, "FMUL%s", pl_f32_ftz(L));
		pl_o_def(v, d, 0, false);
		pl_o_use(v, t, 0);
		pl_o_text(v, "0x3f800000");
		return;
	}
	v = pl_emit(L, "FMUL%s", pl_f32_ftz(L));
	pl_o_def(v, d, 0, false);
	pl_use_src(L, v, a, 0);
	pl_o_text(v, "0xbf800000");
}

/* p = a or b is a NaN (FSETP.NE is true for a NaN) */
static void either_nan(struct lower *L, int p, int a, int b)
{
	struct ptx_vinsn *v = pl_emit(L, "FSETP.NE");

	pl_o_pdef(v, p);
	pl_o_use(v, a, 0);
	pl_o_use(v, a, 0);
	v = pl_emit(L, "FSETP.NE.OR");
	pl_o_pdef(v, p);
	pl_o_use(v, b, 0);
	pl_o_use(v, b, 0);
	pl_o_puse(v, p, false);
}

/* a source into a 32-bit vreg of its own (a register's, or a MOV's) */
static int src_vreg(struct lower *L, const struct ptx_operand *o)
{
	int r = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "MOV");

	pl_o_def(v, r, 0, false);
	pl_use_src_or_imm(L, v, o, 0);
	return r;
}

/*
 * min/max.f32 with .NaN and/or .xorsign.abs (@mn: min).  FMNMX: a NaN
 * loses, two give the GPU's NaN, -0 < +0.  .xorsign.abs: FMNMX of the
 * magnitudes, with the sign of a ^ b unless it is a NaN.  .NaN: the GPU's
 * NaN if either operand is one.
 */
void pl_f32_minmax(struct lower *L, int d, bool mn)
{
	const struct ptx_insn *in = L->in;

	pl_f32_minmax_regs(L, d, src_vreg(L, &in->ops[1]), src_vreg(L, &in->ops[2]), mn);
}

/* pl_f32_minmax of the f32 vregs @a and @b (the instruction's modifiers) */
void pl_f32_minmax_regs(struct lower *L, int d, int a, int b, bool mn)
{
	const struct ptx_insn *in = L->in;
	bool xs = pl_has_mod(in, ".xorsign"), nan = pl_has_mod(in, ".NaN");
	int t = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	if (xs) {
		int x = pl_new_vreg(L, 1), y = pl_new_vreg(L, 1), s = pl_new_vreg(L, 1);

		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, x, 0, false);
		pl_o_use(v, a, 0);
		pl_o_text(v, "0x7fffffff");
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, y, 0, false);
		pl_o_use(v, b, 0);
		pl_o_text(v, "0x7fffffff");
		v = pl_emit(L, "FMNMX.%s%s", mn ? "MIN" : "MAX", pl_f32_ftz(L));
		pl_o_def(v, t, 0, false);
		pl_o_use(v, x, 0);
		pl_o_use(v, y, 0);
		v = pl_emit(L, "LOP.XOR");
		pl_o_def(v, s, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, s, 0, false);
		pl_o_use(v, s, 0);
		pl_o_text(v, "0x80000000");
		either_nan(L, p, t, t);
		v = pl_emit(L, "LOP.OR"); /* a NaN t stays the GPU's NaN */
		pl_o_def(v, s, 0, false);
		pl_o_use(v, t, 0);
		pl_o_use(v, s, 0);
		v = pl_emit(L, "SEL");
		pl_o_def(v, t, 0, false);
		pl_o_use(v, s, 0);
		pl_o_use(v, t, 0);
		pl_o_puse(v, p, true);
	} else {
		v = pl_emit(L, "FMNMX.%s%s", mn ? "MIN" : "MAX", pl_f32_ftz(L));
		pl_o_def(v, t, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
	}
	if (!nan)
		return pl_mov_reg(L, d, 0, false, t, 0);
	either_nan(L, p, a, b);
	v = pl_emit(L, "SEL");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x7fffffff");
	pl_o_puse(v, p, true);
}

/*
 * testp.OP.f32|f64 p, a on the bits: h = |a| (f64: its high word), m = h
 * with bit 0 set when an f64's low word is not 0, INF and MIN the
 * exponent fields of infinity and of the smallest normal:
 * finite h < INF, infinite m == INF, number m <= INF, notanumber m > INF,
 * subnormal m - 1 < MIN - 1 (unsigned), normal m - 1 >= MIN - 1 and
 * h < INF (PTX counts the zeros as normal, and so does the GPU).
 */
void pl_testp(struct lower *L)
{
	static const struct {
		const char *op, *cmp;
		bool use_m;
		int bias; /* 0: none, 2: - 1 */
	} tests[] = {
		{ ".finite", "LT", false, 0 },	 { ".infinite", "EQ", true, 0 },
		{ ".number", "LE", true, 0 },	 { ".notanumber", "GT", true, 0 },
		{ ".normal", "GE", true, 2 },	 { ".subnormal", "LT", true, 2 },
	};
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool f64 = t.bits == 64;
	uint32_t inf = f64 ? 0x7ff00000u : 0x7f800000u, min = f64 ? 0x00100000u : 0x00800000u;
	int h = pl_new_vreg(L, 1), m = h, x, d;
	struct ptx_vinsn *v;
	size_t k;
	uint32_t lim;

	if (!pl_want_ops(L, 2))
		return;
	for (k = 0; k < sizeof(tests) / sizeof(tests[0]); k++)
		if (pl_has_mod(in, tests[k].op))
			break;
	if (k == sizeof(tests) / sizeof(tests[0]) || !t.flt)
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, h, 0, false);
	pl_use_src(L, v, &in->ops[1], f64 ? 1 : 0);
	pl_o_text(v, "0x7fffffff");
	if (f64 && tests[k].use_m) {
		int c = pl_new_vreg(L, 1);

		m = pl_new_vreg(L, 1);
		v = pl_emit(L, "ISETP.NE.U32");
		pl_o_text(v, "P6");
		pl_use_src(L, v, &in->ops[1], 0);
		pl_o_text(v, "0x0");
		v = pl_emit(L, "SEL");
		pl_o_def(v, c, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
		pl_o_text(v, "!P6");
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, m, 0, false);
		pl_o_use(v, h, 0);
		pl_o_use(v, c, 0);
	}
	x = tests[k].use_m ? m : h;
	lim = inf;
	if (tests[k].bias) {
		int y = pl_new_vreg(L, 1);

		v = pl_emit(L, "IADD");
		pl_o_def(v, y, 0, false);
		pl_o_use(v, x, 0);
		pl_o_text(v, "0xffffffff");
		x = y;
		lim = min - 1;
	}
	v = pl_emit(L, "ISETP.%s.U32", tests[k].cmp);
	pl_o_pdef(v, d);
	pl_o_use(v, x, 0);
	pl_o_text(v, "0x%x", lim);
	if (!strcmp(tests[k].op, ".normal")) {
		v = pl_emit(L, "ISETP.LT.U32.AND");
		pl_o_pdef(v, d);
		pl_o_use(v, h, 0);
		pl_o_text(v, "0x%x", inf);
		pl_o_puse(v, d, false);
	}
}

/* copysign.f32|f64 d, a, b: b with a's sign, on the bits (NaNs too) */
void pl_copysign(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	int hi = t.bits == 64, s = pl_new_vreg(L, 1), d;
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 3))
		return;
	if (!t.flt)
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], hi ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, s, 0, false);
	pl_use_src(L, v, &in->ops[1], hi);
	pl_o_text(v, "0x80000000");
	if (hi) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, d, 0, true);
		pl_use_src(L, v, &in->ops[2], 0);
	}
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, d, hi, false);
	pl_use_src(L, v, &in->ops[2], hi);
	pl_o_text(v, "0x7fffffff");
	v = pl_emit(L, "LOP.OR");
	pl_o_def(v, d, hi, false);
	pl_o_use(v, d, hi);
	pl_o_use(v, s, 0);
}

/*
 * div.approx.f32 d, a, b: the IEEE quotient, except that for |b| in
 * [2^126, inf] the GPU's a * (1/b) flushes 1/b to a zero of b's sign
 * (PTX: "for |b| in [2^126, 2^128] div.approx returns zero"): there d is
 * a * (+-0), a zero or a NaN (a infinite or NaN).
 */
void pl_f32_div_approx(struct lower *L, int d)
{
	const struct ptx_insn *in = L->in;
	int a = src_vreg(L, &in->ops[1]), b = src_vreg(L, &in->ops[2]);
	int q = pl_new_vreg(L, 1), z = pl_new_vreg(L, 1), m = pl_new_vreg(L, 1);
	int p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	v = pl_emit(L, "FDIV%s", pl_f32_ftz(L));
	pl_o_def(v, q, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, z, 0, false);
	pl_o_use(v, b, 0);
	pl_o_text(v, "0x80000000");
	v = pl_emit(L, "FMUL");
	pl_o_def(v, z, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, z, 0);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, m, 0, false);
	pl_o_use(v, b, 0);
	pl_o_text(v, "0x7fffffff");
	v = pl_emit(L, "ISETP.GE.U32");
	pl_o_pdef(v, p);
	pl_o_use(v, m, 0);
	pl_o_text(v, "0x7e800000");
	v = pl_emit(L, "ISETP.LE.U32.AND");
	pl_o_pdef(v, p);
	pl_o_use(v, m, 0);
	pl_o_text(v, "0x7f800000");
	pl_o_puse(v, p, false);
	v = pl_emit(L, "SEL");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, z, 0);
	pl_o_use(v, q, 0);
	pl_o_puse(v, p, false);
}
