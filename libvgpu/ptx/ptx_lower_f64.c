// SPDX-License-Identifier: MIT
/*
 * PTX lowering: f64 arithmetic on the DADD/DMUL/DFMA/DDIV/DSETP/DMNMX
 * instructions (a double in a register pair, low word first; conversions:
 * ptx_lower_cvt.c).  Round-to-nearest only; neg and abs
 * work on the sign bit of the high word.  ptx_lower_alu.c hands every f64
 * form here (pl_f64()).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

int pl_pair_src(struct lower *L, const struct ptx_operand *o)
{
	struct ptx_vinsn *v;
	int p;

	if (pl_is_reg(L, o, PTX_R64))
		return o->reg;
	if (o->kind != PTX_O_IMM)
		return pl_lerr(L, "expected a 64-bit register or value"), -1;
	p = pl_new_vreg(L, 2);
	for (int part = 0; part < 2; part++) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, p, part, part == 0);
		pl_o_text(v, "0x%" PRIx32, (uint32_t)((uint64_t)o->imm >> (32 * part)));
	}
	return p;
}

/*
 * -s (@abs: |s|) into a new pair as the GPU computes them: s times -1
 * (@abs: times 1 with s's sign), exact, and a NaN comes out quiet with
 * its sign and payload (neg.f64 and abs.f64 of a NaN, and sub.f64's
 * negated subtrahend, keep its sign on the GPU).
 */
static int fneg_abs(struct lower *L, int s, bool abs)
{
	int p = pl_new_vreg(L, 2), m = pl_new_vreg(L, 2);
	struct ptx_vinsn *v;

	pl_mov_reg(L, m, 0, true, -1, 0);
	if (abs) {
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, m, 1, false);
		pl_o_use(v, s, 1);
		pl_o_text(v, "0x80000000");
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, m, 1, false);
		pl_o_use(v, m, 1);
		pl_o_text(v, "0x3ff00000");
	} else {
		v = pl_emit(L, "MOV");
		pl_o_def(v, m, 1, false);
		pl_o_text(v, "0xbff00000");
	}
	v = pl_emit(L, "DMUL");
	pl_o_def(v, p, 0, false);
	pl_o_use(v, s, 0);
	pl_o_use(v, m, 0);
	return p;
}

/*
 * rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 as the GPU computes them
 * (its MUFU.RCP64H/RSQ64H): from a's high word alone (a subnormal
 * flushed to a zero of its sign), the exact result truncated to its high
 * word (DRCP.RZ; for rsqrt of DSQRT's result), the low word 0; a
 * subnormal result flushed, a NaN 0x7fffffff:00000000.
 */
static void approx_hi(struct lower *L, int d, int a, bool rsqrt)
{
	int h = pl_new_vreg(L, 1), e = pl_new_vreg(L, 1), s = pl_new_vreg(L, 1);
	int x = pl_new_vreg(L, 2), r = pl_new_vreg(L, 2), p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	for (int k = 0; k < 2; k++) { /* k 0: the operand, 1: the result */
		int src = k ? r : a, dst = k ? d : x;

		v = pl_emit(L, "LOP.AND"); /* s = sign, e = exponent */
		pl_o_def(v, s, 0, false);
		pl_o_use(v, src, 1);
		pl_o_text(v, "0x80000000");
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, e, 0, false);
		pl_o_use(v, src, 1);
		pl_o_text(v, "0x7ff00000");
		v = pl_emit(L, "ISETP.EQ.U32");
		pl_o_pdef(v, p);
		pl_o_use(v, e, 0);
		pl_o_text(v, "0x0");
		v = pl_emit(L, "SEL"); /* h = exponent 0 ? sign : high word */
		pl_o_def(v, h, 0, false);
		pl_o_use(v, s, 0);
		pl_o_use(v, src, 1);
		pl_o_puse(v, p, false);
		if (k) { /* a NaN: 0x7fffffff */
			v = pl_emit(L, "LOP.AND");
			pl_o_def(v, e, 0, false);
			pl_o_use(v, src, 1);
			pl_o_text(v, "0x7fffffff");
			v = pl_emit(L, "ISETP.GT.U32");
			pl_o_pdef(v, p);
			pl_o_use(v, e, 0);
			pl_o_text(v, "0x7ff00000");
			v = pl_emit(L, "SEL");
			pl_o_def(v, h, 0, false);
			pl_o_use(v, h, 0);
			pl_o_text(v, "0x7fffffff");
			pl_o_puse(v, p, true);
		}
		pl_mov_reg(L, dst, 0, true, -1, 0);
		pl_mov_reg(L, dst, 1, false, h, 0);
		if (!k && rsqrt) {
			v = pl_emit(L, "DSQRT");
			pl_o_def(v, x, 0, false);
			pl_o_use(v, x, 0);
		}
		if (!k) {
			v = pl_emit(L, "DRCP.RZ");
			pl_o_def(v, r, 0, false);
			pl_o_use(v, x, 0);
		}
	}
}

bool pl_f64(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *op = in->op;
	struct ptype t = pl_type_of(in, 0);
	struct ptx_vinsn *v;
	int d, a, b, c;

	static const char *const arith[] = { "add", "sub", "mul", "div", "fma", "mad", "min",
					     "max", "setp", "neg", "abs", "sqrt", "rcp",
					     "rsqrt" };
	bool mine = false;

	for (size_t i = 0; i < sizeof(arith) / sizeof(arith[0]); i++)
		mine |= !strcmp(op, arith[i]);
	if (!mine) /* moves, loads, stores, selp: bits, the usual lowerers */
		return false;
	if (!t.flt || t.bits != 64)
		return false;
	if (!strcmp(op, "setp")) { /* ordered and unordered forms: pl_fsetp */
		bool boolop = pl_has_mod(in, ".and") || pl_has_mod(in, ".or") || pl_has_mod(in, ".xor");

		if (in->nops != (boolop ? 4 : 3))
			return pl_lerr(L, "setp takes %d operands here", boolop ? 4 : 3), true;
		a = pl_pair_src(L, &in->ops[1]);
		b = pl_pair_src(L, &in->ops[2]);
		if (a >= 0 && b >= 0)
			pl_fsetp(L, true, a, b);
		return true;
	}
	if ((!strcmp(op, "rcp") || !strcmp(op, "rsqrt")) && pl_has_mod(in, ".approx") &&
	    pl_has_mod(in, ".ftz")) {
		if (!pl_want_ops(L, 2))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pl_pair_src(L, &in->ops[1]);
		if (d >= 0 && a >= 0)
			approx_hi(L, d, a, !strcmp(op, "rsqrt"));
		return true;
	}
	if (!strcmp(op, "sqrt") || !strcmp(op, "rcp")) { /* .rn, and .approx as .rn */
		if (!pl_want_ops(L, 2))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pl_pair_src(L, &in->ops[1]);
		if (d < 0 || a < 0)
			return true;
		v = pl_emit(L, "%s%s", !strcmp(op, "sqrt") ? "DSQRT" : "DRCP", pl_f32_rnd(L));
		pl_o_def(v, d, 0, false);
		pl_o_use(v, a, 0);
		return true;
	}
	if (!strcmp(op, "rsqrt")) { /* rsqrt.approx.f64: 1 / sqrt, each rounded */
		int s;

		if (!pl_want_ops(L, 2))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pl_pair_src(L, &in->ops[1]);
		if (d < 0 || a < 0)
			return true;
		s = pl_new_vreg(L, 2);
		v = pl_emit(L, "DSQRT");
		pl_o_def(v, s, 0, false);
		pl_o_use(v, a, 0);
		v = pl_emit(L, "DRCP");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, s, 0);
		return true;
	}
	if (!strcmp(op, "neg") || !strcmp(op, "abs")) {
		if (!pl_want_ops(L, 2))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pl_pair_src(L, &in->ops[1]);
		if (d < 0 || a < 0)
			return true;
		b = fneg_abs(L, a, !strcmp(op, "abs"));
		pl_mov_reg(L, d, 0, true, b, 0);
		pl_mov_reg(L, d, 1, false, b, 1);
		return true;
	}
	if (!strcmp(op, "fma") || !strcmp(op, "mad")) {
		if (!pl_want_ops(L, 4))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pl_pair_src(L, &in->ops[1]);
		b = pl_pair_src(L, &in->ops[2]);
		c = pl_pair_src(L, &in->ops[3]);
		if (d < 0 || a < 0 || b < 0 || c < 0)
			return true;
		v = pl_emit(L, "DFMA%s", pl_f32_rnd(L));
		pl_o_def(v, d, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
		pl_o_use(v, c, 0);
		return true;
	}
	{
		static const char *const ops[][2] = { { "add", "DADD" }, { "sub", "DADD" },
						      { "mul", "DMUL" }, { "div", "DDIV" },
						      { "min", "DMNMX.MIN" },
						      { "max", "DMNMX.MAX" } };
		const char *mn = NULL;

		for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			if (!strcmp(op, ops[i][0]))
				mn = ops[i][1];
		if (!mn)
			return pl_unsupported(L, "this f64 instruction"), true;
		if (!pl_want_ops(L, 3))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pl_pair_src(L, &in->ops[1]);
		b = pl_pair_src(L, &in->ops[2]);
		if (d < 0 || a < 0 || b < 0)
			return true;
		if (!strcmp(op, "sub")) /* a - b = a + (-b), exactly */
			b = fneg_abs(L, b, false);
		v = pl_emit(L, "%s%s", mn, strncmp(mn, "DMNMX", 5) ? pl_f32_rnd(L) : "");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
		return true;
	}
}
