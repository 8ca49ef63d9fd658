// SPDX-License-Identifier: MIT
/*
 * PTX lowering: cvt in its float and saturating forms, on the core's CVT
 * (docs/core.md "Conversions"), which converts between any two of u8..s64,
 * f16, bf16, tf32, f32, f64, e4m3 and e5m2 in every rounding mode with
 * .sat, .ftz, .relu and .satfinite.  The packed forms are two CVTs and a
 * shift: cvt.rn.f16x2.f32 d, a, b (a in the upper half), the e4m3x2/e5m2x2
 * ones to and from f16x2, and cvt.pack.sat (integer clamps).  Integer to
 * integer conversions without .sat stay moves and extensions
 * (ptx_lower_alu.c pl_cvt).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

/* PTX type spellings and the CVT type they are (x2: packed pairs) */
static const struct {
	const char *ptx, *core;
	int bits; /* of one element */
	bool x2, flt;
} cvt_types[] = {
	{ ".u8", "U8", 8, false, false },	  { ".s8", "S8", 8, false, false },
	{ ".u16", "U16", 16, false, false },	  { ".s16", "S16", 16, false, false },
	{ ".u32", "U32", 32, false, false },	  { ".s32", "S32", 32, false, false },
	{ ".u64", "U64", 64, false, false },	  { ".s64", "S64", 64, false, false },
	{ ".b8", "U8", 8, false, false },	  { ".b16", "U16", 16, false, false },
	{ ".b32", "U32", 32, false, false },	  { ".b64", "U64", 64, false, false },
	{ ".f16", "F16", 16, false, true },	  { ".bf16", "BF16", 16, false, true },
	{ ".f32", "F32", 32, false, true },	  { ".f64", "F64", 64, false, true },
	{ ".tf32", "TF32", 32, false, true },	  { ".e4m3", "E4M3", 8, false, true },
	{ ".e5m2", "E5M2", 8, false, true },	  { ".f16x2", "F16", 16, true, true },
	{ ".bf16x2", "BF16", 16, true, true },	  { ".e4m3x2", "E4M3", 8, true, true },
	{ ".e5m2x2", "E5M2", 8, true, true },
};
#define NTYPES (int)(sizeof(cvt_types) / sizeof(cvt_types[0]))

/* The @nth type modifier of @in: an index into cvt_types, or -1. */
static int cvt_type(const struct ptx_insn *in, int nth)
{
	for (int i = 0; i < in->nmods; i++)
		for (int k = 0; k < NTYPES; k++)
			if (!strcmp(in->mods[i], cvt_types[k].ptx) && !nth--)
				return k;
	return -1;
}

/* the rounding the instruction names, as a CVTR modifier ("" if none) */
static const char *cvt_rnd(const struct ptx_insn *in)
{
	static const char *const r[][2] = {
		{ ".rn", ".RN" },   { ".rz", ".RZ" },	{ ".rm", ".RM" },   { ".rp", ".RP" },
		{ ".rna", ".RNA" }, { ".rni", ".RNI" }, { ".rzi", ".RZI" }, { ".rmi", ".RMI" },
		{ ".rpi", ".RPI" },
	};

	for (size_t k = 0; k < sizeof(r) / sizeof(r[0]); k++)
		if (pl_has_mod(in, r[k][0]))
			return r[k][1];
	return "";
}

/* the CVTF modifier: saturation, .ftz, .relu ("" if none, NULL if not one) */
static const char *cvt_flags(const struct ptx_insn *in)
{
	bool sat = pl_has_mod(in, ".sat"), ftz = pl_has_mod(in, ".ftz");
	bool relu = pl_has_mod(in, ".relu"), fin = pl_has_mod(in, ".satfinite");

	if (relu && (sat || ftz))
		return NULL;
	if (fin)
		return sat || ftz ? NULL : relu ? ".RELU_SATFINITE" : ".SATFINITE";
	if (relu)
		return ".RELU";
	return ftz ? (sat ? ".FTZ_SAT" : ".FTZ") : sat ? ".SAT" : "";
}

/* @o as a register pair: a 64-bit register as it is, an immediate in a new pair */
static int wide_src(struct lower *L, const struct ptx_operand *o)
{
	struct ptx_vinsn *v;
	int p;

	if (o->kind == PTX_O_REG) {
		if (pl_preg(L, o->reg)->cls != PTX_R64)
			return pl_lerr(L, "a 64-bit source must be a 64-bit register"), -1;
		return o->reg;
	}
	if (o->kind != PTX_O_IMM)
		return pl_lerr(L, "expected a register or a value"), -1;
	p = pl_new_vreg(L, 2);
	for (int part = 0; part < 2; part++) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, p, part, part == 0);
		pl_o_text(v, "0x%" PRIx32, (uint32_t)((uint64_t)o->imm >> (32 * part)));
	}
	return p;
}

/* @s (a 32-bit vreg, or -1: the operand @o) shifted right by @sh into a new vreg */
static int shifted(struct lower *L, const struct ptx_operand *o, int s, int sh)
{
	int t = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "SHR.U32");

	pl_o_def(v, t, 0, false);
	if (s >= 0)
		pl_o_use(v, s, 0);
	else
		pl_use_src(L, v, o, 0);
	pl_o_text(v, "0x%x", sh);
	return t;
}

/* d = CVT(src): src a vreg, or -1 for the operand @o */
static void emit_cvt(struct lower *L, int d, int dk, int sk, const char *rnd, const char *fl,
		     const struct ptx_operand *o, int src)
{
	struct ptx_vinsn *v;

	if (src < 0 && cvt_types[sk].bits == 64 && !cvt_types[sk].x2) {
		src = wide_src(L, o);
		if (src < 0)
			return;
	}
	v = pl_emit(L, "CVT.%s.%s%s%s", cvt_types[dk].core, cvt_types[sk].core, rnd, fl);
	pl_o_def(v, d, 0, false);
	if (src >= 0)
		pl_o_use(v, src, 0);
	else
		pl_use_src(L, v, o, 0);
}

/* d = hi << sh | lo */
static void pack2(struct lower *L, int d, int hi, int lo, int sh)
{
	struct ptx_vinsn *v = pl_emit(L, "SHL");
	int t = pl_new_vreg(L, 1);

	pl_o_def(v, t, 0, false);
	pl_o_use(v, hi, 0);
	pl_o_text(v, "0x%x", sh);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, lo, 0);
	pl_o_text(v, "0x%x", (1u << sh) - 1);
	v = pl_emit(L, "LOP.OR");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, d, 0);
	pl_o_use(v, t, 0);
}

/*
 * cvt.pack.sat.{u8,s8,u16,s16}.s32.b32 d, a, b, c: a and b clamped to the
 * type, a's in the upper part; for 8-bit types d = c << 16 | a << 8 | b.
 */
static void cvt_pack(struct lower *L, int dk)
{
	const struct ptx_insn *in = L->in;
	int bits = cvt_types[dk].bits, lo, hi, t[2], d;
	bool sign = cvt_types[dk].core[0] == 'S';
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 4))
		return;
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	lo = sign ? -(1 << (bits - 1)) : 0;
	hi = sign ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
	for (int k = 0; k < 2; k++) {
		t[k] = pl_new_vreg(L, 1);
		v = pl_emit(L, "IMNMX.MAX.S32");
		pl_o_def(v, t[k], 0, false);
		pl_use_src(L, v, &in->ops[1 + k], 0);
		pl_o_text(v, "0x%x", (unsigned)lo);
		v = pl_emit(L, "IMNMX.MIN.S32");
		pl_o_def(v, t[k], 0, false);
		pl_o_use(v, t[k], 0);
		pl_o_text(v, "0x%x", (unsigned)hi);
	}
	pack2(L, d, t[0], t[1], bits);
	if (bits == 8) { /* c's low half above */
		int c = pl_new_vreg(L, 1);

		v = pl_emit(L, "SHL");
		pl_o_def(v, c, 0, false);
		pl_use_src(L, v, &in->ops[3], 0);
		pl_o_text(v, "0x10");
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, d, 0);
		pl_o_text(v, "0xffff");
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, d, 0);
		pl_o_use(v, c, 0);
	}
}

/*
 * cvt with a float side, or with .sat between integers, or packed: true
 * if lowered here (or reported), false for ptx_lower_alu.c's moves.
 */
bool pl_cvt_ext(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int dk = cvt_type(in, 0), sk = cvt_type(in, 1), d;
	const char *rnd = cvt_rnd(in), *fl = cvt_flags(in);
	int ebits;

	if (dk < 0 || sk < 0)
		return pl_lerr(L, "cvt needs a destination and a source type"), true;
	if (!fl)
		return pl_lerr(L, "cvt: this combination of .sat, .ftz, .relu and .satfinite"), true;
	if (pl_has_mod(in, ".pack")) {
		if (cvt_types[dk].flt || cvt_types[dk].bits > 16)
			return pl_lerr(L, "cvt.pack converts to .u8, .s8, .u16 or .s16"), true;
		cvt_pack(L, dk);
		return true;
	}
	if (!cvt_types[dk].flt && !cvt_types[sk].flt && !*fl)
		return false;
	if (!cvt_types[dk].flt && cvt_types[sk].flt && (!*rnd || rnd[strlen(rnd) - 1] != 'I'))
		return pl_lerr(L, "a float to integer conversion needs .rni, .rzi, .rmi or .rpi"), true;
	ebits = cvt_types[dk].bits;
	if (cvt_types[dk].x2 && !cvt_types[sk].x2 && in->nops == 3) {
		/* two f32 sources: a's result in the upper part */
		int hi = pl_new_vreg(L, 1), lo = pl_new_vreg(L, 1);

		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return true;
		emit_cvt(L, hi, dk, sk, rnd, fl, &in->ops[1], -1);
		emit_cvt(L, lo, dk, sk, rnd, fl, &in->ops[2], -1);
		pack2(L, d, hi, lo, ebits);
		return true;
	}
	if (!pl_want_ops(L, 2))
		return true;
	if (cvt_types[sk].x2 || cvt_types[dk].x2) {
		/* element by element: f16x2 <-> e4m3x2/e5m2x2 */
		int sbits = cvt_types[sk].bits, hi = pl_new_vreg(L, 1), lo = pl_new_vreg(L, 1);

		if (!cvt_types[sk].x2 || !cvt_types[dk].x2)
			return pl_lerr(L, "cvt: a packed type on one side only"), true;
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return true;
		emit_cvt(L, hi, dk, sk, rnd, fl, NULL, shifted(L, &in->ops[1], -1, sbits));
		emit_cvt(L, lo, dk, sk, rnd, fl, &in->ops[1], -1);
		pack2(L, d, hi, lo, ebits);
		return true;
	}
	d = pl_dst_reg(L, &in->ops[0], ebits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return true;
	emit_cvt(L, d, dk, sk, rnd, fl, &in->ops[1], -1);
	return true;
}
