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
	bool xs = pl_has_mod(in, ".xorsign"), nan = pl_has_mod(in, ".NaN");
	int a = src_vreg(L, &in->ops[1]), b = src_vreg(L, &in->ops[2]);
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
