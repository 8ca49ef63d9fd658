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

/* @o as a register pair: a register as it is, an immediate in a new pair. */
static int pair_src(struct lower *L, const struct ptx_operand *o)
{
	struct ptx_vinsn *v;
	int p;

	if (o->kind == PTX_O_REG) {
		if (pl_preg(L, o->reg)->cls != PTX_R64)
			return pl_lerr(L, "an f64 operand must be a 64-bit register"), -1;
		return o->reg;
	}
	if (o->kind != PTX_O_IMM)
		return pl_lerr(L, "expected an f64 register or value"), -1;
	p = pl_new_vreg(L, 2);
	for (int part = 0; part < 2; part++) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, p, part, part == 0);
		pl_o_text(v, "0x%" PRIx32, (uint32_t)((uint64_t)o->imm >> (32 * part)));
	}
	return p;
}

/* @s with its sign flipped (@abs: cleared) into a new pair. */
static int sign_op(struct lower *L, int s, bool abs)
{
	int p = pl_new_vreg(L, 2);
	struct ptx_vinsn *v;

	pl_mov_reg(L, p, 0, true, s, 0);
	v = pl_emit(L, abs ? "LOP.AND" : "LOP.XOR");
	pl_o_def(v, p, 1, false);
	pl_o_use(v, s, 1);
	pl_o_text(v, abs ? "0x7fffffff" : "0x80000000");
	return p;
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
		a = pair_src(L, &in->ops[1]);
		b = pair_src(L, &in->ops[2]);
		if (a >= 0 && b >= 0)
			pl_fsetp(L, true, a, b);
		return true;
	}
	if (!strcmp(op, "sqrt") || !strcmp(op, "rcp")) { /* .rn, and .approx as .rn */
		if (!pl_want_ops(L, 2))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pair_src(L, &in->ops[1]);
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
		a = pair_src(L, &in->ops[1]);
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
		a = pair_src(L, &in->ops[1]);
		if (d < 0 || a < 0)
			return true;
		b = sign_op(L, a, !strcmp(op, "abs"));
		pl_mov_reg(L, d, 0, true, b, 0);
		pl_mov_reg(L, d, 1, false, b, 1);
		return true;
	}
	if (!strcmp(op, "fma") || !strcmp(op, "mad")) {
		if (!pl_want_ops(L, 4))
			return true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		a = pair_src(L, &in->ops[1]);
		b = pair_src(L, &in->ops[2]);
		c = pair_src(L, &in->ops[3]);
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
		a = pair_src(L, &in->ops[1]);
		b = pair_src(L, &in->ops[2]);
		if (d < 0 || a < 0 || b < 0)
			return true;
		if (!strcmp(op, "sub")) /* a - b = a + (-b), exactly */
			b = sign_op(L, b, false);
		v = pl_emit(L, "%s%s", mn, strncmp(mn, "DMNMX", 5) ? pl_f32_rnd(L) : "");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
		return true;
	}
}
