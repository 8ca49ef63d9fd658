// SPDX-License-Identifier: MIT
/*
 * PTX lowering: moves, integer and f32 arithmetic (64-bit values as
 * register pairs, carries through P6), logic, shifts, compares, selects,
 * conversions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"

/*
 * %clock64 / %globaltimer (PTX ISA 10.24, 10.28) into @d: the high word,
 * the low word, the high word again; when the two high words differ the
 * low word wrapped in between and (hi2, 0) is a time between the reads,
 * so the 64-bit value never goes back.  A 32-bit @d gets the low word.
 */
static void read_clock64(struct lower *L, int d, const char *sr)
{
	int t = pl_new_vreg(L, 2), h = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (pl_preg(L, d)->cls != PTX_R64) {
		v = pl_emit(L, "S2R");
		pl_o_def(v, d, 0, false);
		pl_o_text(v, "%sLO", sr);
		return;
	}
	v = pl_emit(L, "S2R");
	pl_o_def(v, h, 0, false);
	pl_o_text(v, "%sHI", sr);
	v = pl_emit(L, "S2R");
	pl_o_def(v, t, 0, true);
	pl_o_text(v, "%sLO", sr);
	v = pl_emit(L, "S2R");
	pl_o_def(v, t, 1, false);
	pl_o_text(v, "%sHI", sr);
	v = pl_emit(L, "ISETP.NE.U32");
	pl_o_text(v, "P6");
	pl_o_use(v, h, 0);
	pl_o_use(v, t, 1);
	v = pl_emit(L, "SEL");
	pl_o_def(v, t, 0, true);
	pl_o_text(v, "RZ");
	pl_o_use(v, t, 0);
	pl_o_text(v, "P6");
	pl_mov_reg(L, d, 0, true, t, 0);
	pl_mov_reg(L, d, 1, false, t, 1);
}

void pl_mov(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *d = &in->ops[0], *s = &in->ops[1];
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 2))
		return;
	if (d->kind == PTX_O_VEC || s->kind == PTX_O_VEC)
		return pl_mov_vector(L);
	/* the device runtime's last error (ptx_cdp.c): a register of the kernel */
	if (L->cdp_err >= 0 && d->kind == PTX_O_SYM && !strcmp(d->sym, PTX_CDP_ERR) &&
	    s->kind == PTX_O_REG) {
		pl_mov_reg(L, L->cdp_err, 0, false, s->reg, 0);
		return;
	}
	if (L->cdp_err >= 0 && s->kind == PTX_O_SYM && !strcmp(s->sym, PTX_CDP_ERR) &&
	    d->kind == PTX_O_REG) {
		pl_mov_reg(L, d->reg, 0, false, L->cdp_err, 0);
		return;
	}
	if (d->kind != PTX_O_REG) {
		pl_lerr(L, "mov needs a register destination");
		return;
	}
	switch (pl_preg(L, d->reg)->cls) {
	case PTX_PRED:
		if (s->kind == PTX_O_SYM && !strcmp(s->sym, "%is_explicit_cluster")) {
			pl_is_explicit_cluster(L, d->reg);
			return;
		}
		if (s->kind == PTX_O_IMM) {
			v = pl_emit(L, "ISETP.%s.U32", s->imm ? "EQ" : "NE");
			pl_o_pdef(v, d->reg);
			pl_o_text(v, "RZ");
			pl_o_text(v, "0x0");
			return;
		}
		v = pl_emit(L, "ISETP.EQ.U32.AND");
		pl_o_pdef(v, d->reg);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x0");
		pl_o_puse(v, pl_pred_of(L, s), s->neg);
		return;
	case PTX_R32:
		if (s->kind == PTX_O_SYM &&
		    (!strcmp(s->sym, "%clock64") || !strcmp(s->sym, "%globaltimer")))
			goto clock64;
		if (s->kind == PTX_O_SYM && pl_smem_sreg(L, d->reg, s->sym))
			return;
		v = pl_emit(L, "MOV");
		if (s->kind == PTX_O_SYM && pl_sreg_name(s->sym)) {
			v->mnem[0] = '\0';
			snprintf(v->mnem, sizeof(v->mnem), "S2R");
			pl_o_def(v, d->reg, 0, false);
			pl_o_text(v, "%s", pl_sreg_name(s->sym));
			return;
		}
		pl_o_def(v, d->reg, 0, false);
		pl_use_src_or_imm(L, v, s, 0);
		return;
	default:
		break;
	}
	/* 64-bit */
	if (s->kind == PTX_O_SYM &&
	    (!strcmp(s->sym, "%clock64") || !strcmp(s->sym, "%globaltimer"))) {
clock64:
		read_clock64(L, d->reg, !strcmp(s->sym, "%clock64") ? "SR_CLOCK" : "SR_GLOBALTIMER");
		return;
	}
	if (s->kind == PTX_O_SYM && pl_param_index(L->f, s->sym) >= 0) {
		/* the address of a kernel parameter (a tensor map by value) */
		int t = pl_new_vreg(L, 2);

		pl_param_addr(L, t, pl_param_index(L->f, s->sym), (uint32_t)s->imm);
		pl_mov_reg(L, d->reg, 0, true, t, 0);
		pl_mov_reg(L, d->reg, 1, false, t, 1);
		return;
	}
	if (pl_is_reg(L, s, PTX_R64) && s->reg == d->reg)
		return;
	for (int i = 0; i < 2; i++) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, d->reg, i, i == 0);
		if (s->kind == PTX_O_IMM)
			pl_use_src_or_imm(L, v, s, i);
		else
			pl_use_src(L, v, s, i);
	}
}

/* 64-bit add/sub: d = a +/- b through a temporary (d may alias a or b). */
static void add64(struct lower *L, int d, const struct ptx_operand *a,
		  const struct ptx_operand *b, bool sub)
{
	int t = pl_new_vreg(L, 2), c = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	v = pl_emit(L, sub ? "ISUB" : "IADD");
	pl_o_def(v, t, 0, true);
	pl_use_src(L, v, a, 0);
	pl_use_src_or_imm(L, v, b, 0);
	/* carry (a.lo > t.lo for add) / borrow (a.lo < b.lo for sub) */
	v = pl_emit(L, "ISETP.%s.U32", sub ? "LT" : "GT");
	pl_o_text(v, "P6");
	pl_use_src(L, v, a, 0);
	if (sub)
		pl_use_src_or_imm(L, v, b, 0);
	else
		pl_o_use(v, t, 0);
	v = pl_emit(L, "SEL");
	pl_o_def(v, c, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0x1");
	pl_o_text(v, "!P6");
	v = pl_emit(L, sub ? "ISUB" : "IADD");
	pl_o_def(v, t, 1, false);
	pl_use_src(L, v, a, 1);
	pl_use_src_or_imm(L, v, b, 1);
	v = pl_emit(L, sub ? "ISUB" : "IADD");
	pl_o_def(v, d, 1, true);
	pl_o_use(v, t, 1);
	pl_o_use(v, c, 0);
	pl_mov_reg(L, d, 0, false, t, 0);
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
	v = pl_emit(L, "IMUL");
	pl_o_def(v, d, 0, true);
	pl_use_src(L, v, a, 0);
	pl_use_src_or_imm(L, v, b, 0);
	v = pl_emit(L, "IMUL.HI.%s", sign ? "S32" : "U32");
	pl_o_def(v, d, 1, false);
	pl_use_src(L, v, a, 0);
	pl_use_src_or_imm(L, v, b, 0);
}

/* d = a * b mod 2^64 (mul.lo.u64/s64) through a temporary */
static void mul64(struct lower *L, int d, const struct ptx_operand *a,
		  const struct ptx_operand *b)
{
	int t = pl_new_vreg(L, 2), x = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (a->kind == PTX_O_IMM) {
		const struct ptx_operand *s = a;

		a = b;
		b = s;
	}
	v = pl_emit(L, "IMUL");
	pl_o_def(v, t, 0, true);
	pl_use_src(L, v, a, 0);
	pl_use_src_or_imm(L, v, b, 0);
	v = pl_emit(L, "IMUL.HI.U32");
	pl_o_def(v, t, 1, false);
	pl_use_src(L, v, a, 0);
	pl_use_src_or_imm(L, v, b, 0);
	v = pl_emit(L, "IMAD"); /* x = a.lo * b.hi + t.hi */
	pl_o_def(v, x, 0, false);
	pl_use_src(L, v, a, 0);
	pl_use_src_or_imm(L, v, b, 1);
	pl_o_use(v, t, 1);
	v = pl_emit(L, "IMAD"); /* d.hi = a.hi * b.lo + x */
	pl_o_def(v, d, 1, true);
	pl_use_src(L, v, a, 1);
	pl_use_src_or_imm(L, v, b, 0);
	pl_o_use(v, x, 0);
	pl_mov_reg(L, d, 0, false, t, 0);
}

/* An f32 instruction's IEEE rounding direction as a vGPU modifier. */
const char *pl_f32_rnd(const struct lower *L)
{
	const struct ptx_insn *in = L->in;

	if (pl_has_mod(in, ".rz"))
		return ".RZ";
	if (pl_has_mod(in, ".rm"))
		return ".RM";
	if (pl_has_mod(in, ".rp"))
		return ".RP";
	return "";
}

/* ".FTZ" for an f32 instruction with .ftz, else "" (the modifier goes last) */
const char *pl_f32_ftz(const struct lower *L)
{
	return pl_has_mod(L->in, ".ftz") ? ".FTZ" : "";
}

void pl_arith(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	const char *op = in->op;
	bool add = !strcmp(op, "add"), sub = !strcmp(op, "sub");
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 3))
		return;
	if (t.flt) {
		if (t.bits != 32)
			return (void)pl_unsupported(L, "floating point other than f32");
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		if (sub) { /* a - b = fma(b, -1, a), one rounding */
			v = pl_emit(L, "FFMA%s%s", pl_f32_rnd(L), pl_f32_ftz(L));
			pl_o_def(v, d, 0, false);
			pl_use_src(L, v, &in->ops[2], 0);
			pl_o_text(v, "0xbf800000");
			pl_use_src(L, v, &in->ops[1], 0);
			return pl_f32_sat(L, d);
		}
		char mnem[16];

		snprintf(mnem, sizeof(mnem), "%s%s%s", add ? "FADD" : "FMUL", pl_f32_rnd(L),
			 pl_f32_ftz(L));
		pl_alu32(L, mnem, d, 0, false, &in->ops[1], &in->ops[2], 0, true);
		return pl_f32_sat(L, d);
	}
	if (t.bits == 64 && (add || sub)) {
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0)
			add64(L, d, &in->ops[1], &in->ops[2], sub);
		return;
	}
	if (!strcmp(op, "mul") && t.bits < 32 && pl_has_mod(in, ".hi")) {
		/* the product of the extended operands, shifted down */
		int p = pl_new_vreg(L, 1);

		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		pl_alu32(L, "IMUL", p, 0, false, &in->ops[1], &in->ops[2], 0, true);
		v = pl_emit(L, "SHR.%s", t.sign ? "S32" : "U32");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, p, 0);
		pl_o_text(v, "0x%x", t.bits);
		return;
	}
	if (!strcmp(op, "mul") && t.bits < 32 && pl_has_mod(in, ".wide")) {
		/* 32-bit product of the extended operands */
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d >= 0)
			pl_alu32(L, "IMUL", d, 0, false, &in->ops[1], &in->ops[2], 0, true);
		return;
	}
	if (!strcmp(op, "mul") && pl_has_mod(in, ".wide")) {
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0 && t.bits <= 32)
			mul_wide(L, d, &in->ops[1], &in->ops[2], t.sign);
		else if (d >= 0)
			pl_unsupported(L, "mul.wide of 64-bit operands");
		return;
	}
	if (t.bits == 64) {
		if (pl_has_mod(in, ".hi"))
			return (void)pl_unsupported(L, "mul.hi of 64-bit operands");
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0)
			mul64(L, d, &in->ops[1], &in->ops[2]);
		return;
	}
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (add || sub)
		pl_alu32(L, add ? "IADD" : "ISUB", d, 0, false, &in->ops[1], &in->ops[2], 0, add);
	else if (pl_has_mod(in, ".hi"))
		pl_alu32(L, t.sign ? "IMUL.HI.S32" : "IMUL.HI.U32", d, 0, false, &in->ops[1],
		      &in->ops[2], 0, true);
	else
		pl_alu32(L, "IMUL", d, 0, false, &in->ops[1], &in->ops[2], 0, true);
}

void pl_mad(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 4))
		return;
	if (t.flt || !strcmp(in->op, "fma")) {
		if (t.bits != 32)
			return (void)pl_unsupported(L, "floating point other than f32");
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		v = pl_emit(L, "FFMA%s%s", pl_f32_rnd(L), pl_f32_ftz(L));
		pl_o_def(v, d, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
		pl_use_src(L, v, &in->ops[3], 0);
		return pl_f32_sat(L, d);
	}
	if (t.bits < 32 && (pl_has_mod(in, ".wide") || pl_has_mod(in, ".hi"))) {
		if (pl_has_mod(in, ".hi"))
			return (void)pl_unsupported(L, "mad.hi of 8- or 16-bit operands");
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		v = pl_emit(L, "IMAD");
		pl_o_def(v, d, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
		L->narrow_bits = 0; /* the addend is 32 bits wide */
		pl_use_src(L, v, &in->ops[3], 0);
		return;
	}
	if (pl_has_mod(in, ".wide")) {
		int p = pl_new_vreg(L, 2);

		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d < 0 || t.bits > 32)
			return (void)(d >= 0 && pl_unsupported(L, "mad.wide of 64-bit operands"));
		/* the product in a temporary that is not a PTX register */
		mul_wide(L, p, &in->ops[1], &in->ops[2], t.sign);
		{
			/* d = p + c */
			int tt = pl_new_vreg(L, 2), c = pl_new_vreg(L, 1);

			v = pl_emit(L, "IADD");
			pl_o_def(v, tt, 0, true);
			pl_o_use(v, p, 0);
			pl_use_src_or_imm(L, v, &in->ops[3], 0);
			v = pl_emit(L, "ISETP.GT.U32");
			pl_o_text(v, "P6");
			pl_o_use(v, p, 0);
			pl_o_use(v, tt, 0);
			v = pl_emit(L, "SEL");
			pl_o_def(v, c, 0, false);
			pl_o_text(v, "RZ");
			pl_o_text(v, "0x1");
			pl_o_text(v, "!P6");
			v = pl_emit(L, "IADD");
			pl_o_def(v, tt, 1, false);
			pl_o_use(v, p, 1);
			pl_use_src_or_imm(L, v, &in->ops[3], 1);
			v = pl_emit(L, "IADD");
			pl_o_def(v, d, 1, true);
			pl_o_use(v, tt, 1);
			pl_o_use(v, c, 0);
			pl_mov_reg(L, d, 0, false, tt, 0);
		}
		return;
	}
	if (t.bits == 64 || pl_has_mod(in, ".hi"))
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	v = pl_emit(L, "IMAD");
	pl_o_def(v, d, 0, false);
	if (in->ops[1].kind == PTX_O_IMM) {
		pl_use_src(L, v, &in->ops[2], 0);
		pl_use_src_or_imm(L, v, &in->ops[1], 0);
	} else {
		pl_use_src(L, v, &in->ops[1], 0);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
	}
	pl_use_src(L, v, &in->ops[3], 0);
}

void pl_logic(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	const char *lop = !strcmp(in->op, "and") ? "AND" : !strcmp(in->op, "or") ? "OR" : "XOR";
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 3))
		return;
	if (t.pred) {
		const struct ptx_operand *a = &in->ops[1], *b = &in->ops[2];
		int tmp = pl_new_vreg(L, 1);

		d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
		if (d < 0)
			return;
		if (a->kind == PTX_O_IMM) {
			a = &in->ops[2];
			b = &in->ops[1];
		}
		if (a->kind == PTX_O_IMM)
			return (void)pl_unsupported(L, "two constant predicates");
		v = pl_emit(L, "SEL"); /* tmp = a ? 1 : 0 */
		pl_o_def(v, tmp, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
		pl_o_puse(v, pl_pred_of(L, a), !a->neg);
		if (b->kind == PTX_O_IMM) {
			bool k = b->imm != 0;
			/* a AND k, a OR k, a XOR k */
			bool is_and = !strcmp(lop, "AND"), is_or = !strcmp(lop, "OR");
			bool konst = (is_and && !k) || (is_or && k);

			v = pl_emit(L, "ISETP.%s.U32",
				 konst ? (k ? "EQ" : "NE") : (!is_and && !is_or && k) ? "EQ" : "NE");
			pl_o_pdef(v, d);
			if (konst)
				pl_o_text(v, "RZ");
			else
				pl_o_use(v, tmp, 0);
			pl_o_text(v, "0x0");
			return;
		}
		v = pl_emit(L, "ISETP.NE.U32.%s", lop);
		pl_o_pdef(v, d);
		pl_o_use(v, tmp, 0);
		pl_o_text(v, "0x0");
		pl_o_puse(v, pl_pred_of(L, b), b->neg);
		return;
	}
	d = pl_dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	for (int p = 0; p < (t.bits == 64 ? 2 : 1); p++) {
		char mn[16];

		snprintf(mn, sizeof(mn), "LOP.%s", lop);
		pl_alu32(L, mn, d, p, t.bits == 64 && p == 0, &in->ops[1], &in->ops[2], p, true);
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
	int t = pl_new_vreg(L, 2), m = pl_new_vreg(L, 1), c = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (!strcmp(op, "not")) {
		for (int p = 0; p < 2; p++) {
			v = pl_emit(L, "LOP.XOR");
			pl_o_def(v, d, p, p == 0);
			pl_use_src(L, v, a, p);
			pl_o_text(v, "0xffffffff");
		}
		return;
	}
	if (!strcmp(op, "neg")) { /* 0 - a */
		pl_mov_reg(L, m, 0, false, -1, 0);
		for (int p = 0; p < 2; p++) {
			v = pl_emit(L, "MOV");
			pl_o_def(v, t, p, p == 0);
			pl_use_src(L, v, a, p);
		}
	} else { /* abs: m = sign, t = a ^ m */
		v = pl_emit(L, "SHR.S32");
		pl_o_def(v, m, 0, false);
		pl_use_src(L, v, a, 1);
		pl_o_text(v, "0x1f");
		for (int p = 0; p < 2; p++) {
			v = pl_emit(L, "LOP.XOR");
			pl_o_def(v, t, p, p == 0);
			pl_use_src(L, v, a, p);
			pl_o_use(v, m, 0);
		}
	}
	/* neg: d = 0 - t; abs: d = t - m:m */
	v = pl_emit(L, "ISETP.LT.U32"); /* borrow */
	pl_o_text(v, "P6");
	if (!strcmp(op, "neg")) {
		pl_o_text(v, "RZ");
		pl_o_use(v, t, 0);
	} else {
		pl_o_use(v, t, 0);
		pl_o_use(v, m, 0);
	}
	v = pl_emit(L, "SEL");
	pl_o_def(v, c, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0x1");
	pl_o_text(v, "!P6");
	for (int p = 0; p < 2; p++) {
		v = pl_emit(L, "ISUB");
		pl_o_def(v, d, p, p == 0);
		if (!strcmp(op, "neg")) {
			pl_o_text(v, "RZ");
			pl_o_use(v, t, p);
		} else {
			pl_o_use(v, t, p);
			pl_o_use(v, m, 0);
		}
	}
	v = pl_emit(L, "ISUB");
	pl_o_def(v, d, 1, false);
	pl_o_use(v, d, 1);
	pl_o_use(v, c, 0);
}

void pl_not_neg_abs(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 2))
		return;
	if (t.pred && !strcmp(in->op, "not")) {
		d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
		if (d < 0)
			return;
		v = pl_emit(L, "ISETP.EQ.U32.AND");
		pl_o_pdef(v, d);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x0");
		pl_o_puse(v, pl_pred_of(L, &in->ops[1]), !in->ops[1].neg);
		return;
	}
	if (t.bits == 64 && !t.flt) {
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d >= 0)
			unary64(L, d, &in->ops[1]);
		return;
	}
	if (t.flt && t.bits != 32)
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (t.flt)
		return pl_f32_neg_abs(L, d, &in->ops[1], !strcmp(in->op, "abs"));
	if (!strcmp(in->op, "not")) {
		v = pl_emit(L, "LOP.%s", !strcmp(in->op, "abs") ? "AND" : "XOR");
		pl_o_def(v, d, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_o_text(v, "%s", !strcmp(in->op, "not") ? "0xffffffff" :
				!strcmp(in->op, "neg") ? "0x80000000" : "0x7fffffff");
		return;
	}
	if (!strcmp(in->op, "neg")) {
		v = pl_emit(L, "ISUB");
		pl_o_def(v, d, 0, false);
		pl_o_text(v, "RZ");
		pl_use_src(L, v, &in->ops[1], 0);
		return;
	}
	{ /* abs.s32: (a ^ s) - s with s = a >> 31 */
		int s = pl_new_vreg(L, 1), x = pl_new_vreg(L, 1);

		v = pl_emit(L, "SHR.S32");
		pl_o_def(v, s, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_o_text(v, "0x1f");
		v = pl_emit(L, "LOP.XOR");
		pl_o_def(v, x, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_o_use(v, s, 0);
		v = pl_emit(L, "ISUB");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, x, 0);
		pl_o_use(v, s, 0);
	}
}

void pl_minmax(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool mn = !strcmp(in->op, "min");
	char m[32];
	int d;

	if (!pl_want_ops(L, 3))
		return;
	if (t.bits == 64 || (t.flt && t.bits != 32))
		return (void)pl_unsupported(L, NULL);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (t.flt && (pl_has_mod(in, ".NaN") || pl_has_mod(in, ".xorsign")))
		return pl_f32_minmax(L, d, mn);
	if (t.flt)
		snprintf(m, sizeof(m), "FMNMX.%s%s", mn ? "MIN" : "MAX", pl_f32_ftz(L));
	else
		snprintf(m, sizeof(m), "IMNMX.%s.%s", mn ? "MIN" : "MAX", pl_int_mod(t));
	pl_alu32(L, m, d, 0, false, &in->ops[1], &in->ops[2], 0, true);
}

void pl_shift(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool left = !strcmp(in->op, "shl");
	const char *shr = t.sign ? "SHR.S32" : "SHR.U32";
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 3))
		return;
	if (t.bits == 64) {
		const struct ptx_operand *a = &in->ops[1];
		int64_t n = (int64_t)(uint32_t)in->ops[2].imm;
		int tt;

		if (in->ops[2].kind != PTX_O_IMM)
			return pl_shift64_reg(L);
		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d < 0)
			return;
		tt = pl_new_vreg(L, 2);
		if (n >= 64)
			n = 64;
		if (left) {
			if (n >= 32) {
				v = pl_emit(L, "SHL");
				pl_o_def(v, tt, 1, true);
				pl_use_src(L, v, a, 0);
				pl_o_text(v, "0x%x", (unsigned)(n - 32));
				pl_mov_reg(L, tt, 0, false, -1, 0);
			} else {
				int x = pl_new_vreg(L, 1);

				v = pl_emit(L, "SHL");
				pl_o_def(v, tt, 1, true);
				pl_use_src(L, v, a, 1);
				pl_o_text(v, "0x%x", (unsigned)n);
				v = pl_emit(L, "SHR.U32");
				pl_o_def(v, x, 0, false);
				pl_use_src(L, v, a, 0);
				pl_o_text(v, "0x%x", (unsigned)(32 - n));
				v = pl_emit(L, "LOP.OR");
				pl_o_def(v, tt, 1, true);
				pl_o_use(v, tt, 1);
				pl_o_use(v, x, 0);
				v = pl_emit(L, "SHL");
				pl_o_def(v, tt, 0, false);
				pl_use_src(L, v, a, 0);
				pl_o_text(v, "0x%x", (unsigned)n);
			}
		} else {
			if (n >= 32) {
				v = pl_emit(L, "%s", shr);
				pl_o_def(v, tt, 0, true);
				pl_use_src(L, v, a, 1);
				/* past 63: the sign (.s64) or 0 (.u64, SHR.U32 by 32) */
				pl_o_text(v, "0x%x", (unsigned)(n - 32 > 31 ? (t.sign ? 31 : 32) : n - 32));
				if (t.sign) {
					v = pl_emit(L, "SHR.S32");
					pl_o_def(v, tt, 1, false);
					pl_use_src(L, v, a, 1);
					pl_o_text(v, "0x1f");
				} else {
					pl_mov_reg(L, tt, 1, false, -1, 0);
				}
			} else {
				int x = pl_new_vreg(L, 1);

				v = pl_emit(L, "SHR.U32");
				pl_o_def(v, tt, 0, true);
				pl_use_src(L, v, a, 0);
				pl_o_text(v, "0x%x", (unsigned)n);
				v = pl_emit(L, "SHL");
				pl_o_def(v, x, 0, false);
				pl_use_src(L, v, a, 1);
				pl_o_text(v, "0x%x", (unsigned)(32 - n));
				v = pl_emit(L, "LOP.OR");
				pl_o_def(v, tt, 0, true);
				pl_o_use(v, tt, 0);
				pl_o_use(v, x, 0);
				v = pl_emit(L, "%s", shr);
				pl_o_def(v, tt, 1, false);
				pl_use_src(L, v, a, 1);
				pl_o_text(v, "0x%x", (unsigned)n);
			}
		}
		pl_mov_reg(L, d, 0, true, tt, 0);
		pl_mov_reg(L, d, 1, false, tt, 1);
		return;
	}
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	pl_alu32(L, left ? "SHL" : shr, d, 0, false, &in->ops[1], &in->ops[2], 0, false);
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

void pl_setp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	const char *boolop = pl_has_mod(in, ".and") ? "AND" : pl_has_mod(in, ".or") ? "OR" :
			     pl_has_mod(in, ".xor") ? "XOR" : NULL;
	bool unordered = false;
	const char *cmp = cmp_name(in, &unordered);
	struct ptx_vinsn *v;
	int d;

	if (in->nops != (boolop ? 4 : 3))
		return (void)pl_lerr(L, "setp takes %d operands here", boolop ? 4 : 3);
	if (t.flt && t.bits == 32) { /* ordered and unordered forms: pl_fsetp */
		int r[2];

		for (int k = 0; k < 2; k++) {
			const struct ptx_operand *o = &in->ops[1 + k];

			if (o->kind == PTX_O_REG && pl_preg(L, o->reg)->cls == PTX_R32) {
				r[k] = o->reg;
				continue;
			}
			r[k] = pl_new_vreg(L, 1);
			v = pl_emit(L, "MOV");
			pl_o_def(v, r[k], 0, false);
			pl_use_src_or_imm(L, v, o, 0);
		}
		pl_fsetp(L, false, r[0], r[1]);
		return;
	}
	if (!cmp)
		return (void)pl_unsupported(L, "comparison");
	if (unordered || t.flt)
		return (void)pl_unsupported(L, "unordered or non-f32 floating-point comparison");
	d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	if (t.bits == 64) {
		/* (hi CMP' hi) or (hi == hi and lo CMP_unsigned lo), via P6 */
		const char *hicmp = !strcmp(cmp, "LE") ? "LT" : !strcmp(cmp, "GE") ? "GT" : cmp;
		bool eqne = !strcmp(cmp, "EQ") || !strcmp(cmp, "NE");

		if (boolop)
			return (void)pl_unsupported(L, "a combined 64-bit comparison");
		v = pl_emit(L, "ISETP.%s.U32", cmp);
		pl_o_text(v, "P6");
		pl_use_src(L, v, &in->ops[1], 0);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
		if (!eqne) {
			v = pl_emit(L, "ISETP.EQ.U32.AND");
			pl_o_text(v, "P6");
			pl_use_src(L, v, &in->ops[1], 1);
			pl_use_src_or_imm(L, v, &in->ops[2], 1);
			pl_o_text(v, "P6");
		}
		v = pl_emit(L, "ISETP.%s.%s.%s", eqne ? cmp : hicmp, eqne ? "U32" : pl_int_mod(t),
			 !strcmp(cmp, "EQ") ? "AND" : "OR");
		pl_o_pdef(v, d);
		pl_use_src(L, v, &in->ops[1], 1);
		pl_use_src_or_imm(L, v, &in->ops[2], 1);
		pl_o_text(v, "P6");
		return;
	}
	if (t.flt)
		v = pl_emit(L, "FSETP.%s%s%s", cmp, boolop ? "." : "", boolop ? boolop : "");
	else
		v = pl_emit(L, "ISETP.%s.%s%s%s", cmp, pl_int_mod(t), boolop ? "." : "",
			 boolop ? boolop : "");
	pl_o_pdef(v, d);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
	if (boolop)
		pl_o_puse(v, pl_pred_of(L, &in->ops[3]), in->ops[3].neg);
}

void pl_selp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	int d, p;

	if (!pl_want_ops(L, 4))
		return;
	d = pl_dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	p = pl_pred_of(L, &in->ops[3]);
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
		v = pl_emit(L, "SEL");
		pl_o_def(v, d, part, t.bits == 64 && part == 0);
		pl_use_src(L, v, a, part);
		pl_use_src_or_imm(L, v, b, part);
		pl_o_puse(v, p, neg);
	}
}

/* Sign- or zero-extend the low @bits of @v into 32 bits. */
static void extend(struct lower *L, int d, int s, int spart, int bits, bool sign)
{
	struct ptx_vinsn *v;

	if (!sign) {
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, s, spart);
		pl_o_text(v, "0x%x", (1u << bits) - 1);
		return;
	}
	v = pl_emit(L, "SHL");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, s, spart);
	pl_o_text(v, "0x%x", 32 - bits);
	v = pl_emit(L, "SHR.S32");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, d, 0);
	pl_o_text(v, "0x%x", 32 - bits);
}

/* cvt between integers without .sat: moves and extensions (the rest: ptx_lower_cvt.c) */
void pl_cvt(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype dt = pl_type_of(in, 0), st = pl_type_of(in, 1);
	const struct ptx_operand *s = &in->ops[1];
	struct ptx_vinsn *v;
	int d, sv, sp, lo;

	if (pl_cvt_ext(L) || !pl_want_ops(L, 2))
		return;
	d = pl_dst_reg(L, &in->ops[0], dt.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	sv = pl_src_reg(L, s, 0, &sp);
	lo = pl_new_vreg(L, 1);
	/* the source's value in 32 bits */
	if (st.bits < 32 && dt.bits > st.bits)
		extend(L, lo, sv < 0 ? 0 : sv, sp, st.bits, st.sign);
	else
		pl_mov_reg(L, lo, 0, false, sv, sp);
	if (sv < 0) /* zero */
		pl_mov_reg(L, lo, 0, false, -1, 0);
	if (dt.bits == 64) {
		if (st.bits == 64) {
			pl_mov_reg(L, d, 0, true, s->reg, 0);
			pl_mov_reg(L, d, 1, false, s->reg, 1);
			return;
		}
		pl_mov_reg(L, d, 0, true, lo, 0);
		if (st.sign) {
			v = pl_emit(L, "SHR.S32");
			pl_o_def(v, d, 1, false);
			pl_o_use(v, lo, 0);
			pl_o_text(v, "0x1f");
		} else {
			pl_mov_reg(L, d, 1, false, -1, 0);
		}
		return;
	}
	if (dt.bits < 32)
		extend(L, d, lo, 0, dt.bits, dt.sign);
	else
		pl_mov_reg(L, d, 0, false, lo, 0);
}
