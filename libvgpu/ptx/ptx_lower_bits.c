// SPDX-License-Identifier: MIT
/*
 * PTX lowering: bit operations: clz, popc, bfind, bfe and bfi (32 and 64
 * bits, position and length constant or in registers), and 64-bit shifts
 * by a register.  vGPU has no instructions for them: each is a short
 * sequence of shifts, masks and (clz) an I2F whose exponent is the index
 * of the highest set bit.  Semantics as the PTX ISA defines them (section
 * numbers of PTX ISA 9.0 at each).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"

/* d = a OP b on words (@a or @b -1: RZ); @part: not the pair's last write */
static void rr(struct lower *L, const char *mn, int d, int dp, bool part, int a, int ap,
	       int b, int bp)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, dp, part);
	if (a < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, a, ap);
	if (b < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, b, bp);
}

/* d = a OP imm */
static void ri(struct lower *L, const char *mn, int d, int dp, bool part, int a, int ap,
	       uint32_t imm)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, dp, part);
	if (a < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, a, ap);
	pl_o_text(v, "0x%x", imm);
}

static void mov_imm(struct lower *L, int d, int dp, bool part, uint32_t imm)
{
	struct ptx_vinsn *v = pl_emit(L, "MOV");

	pl_o_def(v, d, dp, part);
	pl_o_text(v, "0x%x", imm);
}

/* A new word holding the 32-bit source @o & @mask. */
static int word_of(struct lower *L, const struct ptx_operand *o, uint32_t mask)
{
	int t = pl_new_vreg(L, 1), pp, r;

	if (o->kind == PTX_O_IMM) {
		mov_imm(L, t, 0, false, (uint32_t)o->imm & mask);
		return t;
	}
	r = pl_src_reg(L, o, 0, &pp);
	if (mask == 0xffffffffu)
		pl_mov_reg(L, t, 0, false, r, pp);
	else
		ri(L, "LOP.AND", t, 0, false, r, pp, mask);
	return t;
}

enum { SH_L, SH_RU, SH_RS };

/*
 * Pair @t (fresh) = pair @a shifted by word @n (-1: 0): shl.b64, shr.u64,
 * shr.s64 (PTX ISA 9.7.8.8, 9.7.8.9: the amount is unsigned and amounts
 * past 63 count as 64).  vGPU's SHL/SHR give 0 (SHR.S32 the sign) for
 * amounts past 31, so each word is the OR of the parts that may reach it:
 * with s = 32 - n and s2 = n - 32 (both huge when out of 0..32),
 *   shl: hi = a.hi << n | a.lo >> s | a.lo << s2, lo = a.lo << n.
 * shr.s64 picks the low word by n < 32 (a.hi >>s s2 is the sign there).
 */
static void shift64(struct lower *L, int t, int a, int n, int kind)
{
	int s = pl_new_vreg(L, 1), s2 = pl_new_vreg(L, 1);
	int x = pl_new_vreg(L, 1), y = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	rr(L, "ISUB", s, 0, false, -1, 0, n, 0);
	ri(L, "IADD", s, 0, false, s, 0, 0x20);
	if (n < 0)
		mov_imm(L, s2, 0, false, 0xffffffe0u);
	else
		ri(L, "IADD", s2, 0, false, n, 0, 0xffffffe0u);
	if (kind == SH_L) {
		rr(L, "SHL", x, 0, false, a, 1, n, 0);
		rr(L, "SHR.U32", y, 0, false, a, 0, s, 0);
		rr(L, "LOP.OR", x, 0, false, x, 0, y, 0);
		rr(L, "SHL", y, 0, false, a, 0, s2, 0);
		rr(L, "LOP.OR", t, 1, true, x, 0, y, 0);
		rr(L, "SHL", t, 0, false, a, 0, n, 0);
		return;
	}
	rr(L, "SHR.U32", x, 0, false, a, 0, n, 0);
	rr(L, "SHL", y, 0, false, a, 1, s, 0);
	rr(L, "LOP.OR", x, 0, false, x, 0, y, 0);
	if (kind == SH_RU) {
		rr(L, "SHR.U32", y, 0, false, a, 1, s2, 0);
		rr(L, "LOP.OR", t, 0, true, x, 0, y, 0);
		rr(L, "SHR.U32", t, 1, false, a, 1, n, 0);
		return;
	}
	rr(L, "SHR.S32", y, 0, false, a, 1, s2, 0);
	v = pl_emit(L, "ISETP.LT.U32");
	pl_o_text(v, "P6");
	if (n < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, n, 0);
	pl_o_text(v, "0x20");
	v = pl_emit(L, "SEL");
	pl_o_def(v, t, 0, true);
	pl_o_use(v, x, 0);
	pl_o_use(v, y, 0);
	pl_o_text(v, "P6");
	rr(L, "SHR.S32", t, 1, false, a, 1, n, 0);
}

/* shl.b64 / shr.u64 / shr.s64 d, a, b with b in a register */
void pl_shift64_reg(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype ty = pl_type_of(in, 0);
	int a = pl_pair_src(L, &in->ops[1]), d = pl_dst_reg(L, &in->ops[0], PTX_R64);
	int t = pl_new_vreg(L, 2), pp, n;

	if (a < 0 || d < 0)
		return;
	n = pl_src_reg(L, &in->ops[2], 0, &pp);
	if (n >= 0 && pp) { /* a 64-bit amount: its low word, as a u32 */
		int w = pl_new_vreg(L, 1);

		pl_mov_reg(L, w, 0, false, n, pp);
		n = w;
	}
	shift64(L, t, a, n, !strcmp(in->op, "shl") ? SH_L : ty.sign ? SH_RS : SH_RU);
	pl_mov_reg(L, d, 0, true, t, 0);
	pl_mov_reg(L, d, 1, false, t, 1);
}

/*
 * A new word = clz(word @x) (32 for 0): the exponent of x converted to
 * f32 toward zero is the index of its highest set bit; 158 - exponent,
 * at most 32 (x = 0 converts to 0.0: 158).
 */
static int clz32(struct lower *L, int x, int xp)
{
	int r = pl_new_vreg(L, 1), f = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "I2F.U32.RZ");

	pl_o_def(v, f, 0, false);
	if (x < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, x, xp);
	ri(L, "SHR.U32", f, 0, false, f, 0, 23);
	rr(L, "ISUB", r, 0, false, -1, 0, f, 0);
	ri(L, "IADD", r, 0, false, r, 0, 158);
	ri(L, "IMNMX.MIN.U32", r, 0, false, r, 0, 32);
	return r;
}

/* clz(pair @x): clz of the high word, or 32 + clz of the low one */
static int clz64(struct lower *L, int x)
{
	int h = clz32(L, x, 1), l = clz32(L, x, 0), r = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "ISETP.EQ.U32");

	pl_o_text(v, "P6");
	pl_o_use(v, h, 0);
	pl_o_text(v, "0x20");
	ri(L, "IADD", l, 0, false, l, 0, 32);
	v = pl_emit(L, "SEL");
	pl_o_def(v, r, 0, false);
	pl_o_use(v, l, 0);
	pl_o_use(v, h, 0);
	pl_o_text(v, "P6");
	return r;
}

/* A new word = popc(word @x): the classic SWAR sum */
static int popc32(struct lower *L, int x, int xp)
{
	int t = pl_new_vreg(L, 1), y = pl_new_vreg(L, 1);

	ri(L, "SHR.U32", t, 0, false, x, xp, 1);
	ri(L, "LOP.AND", t, 0, false, t, 0, 0x55555555u);
	rr(L, "ISUB", y, 0, false, x, xp, t, 0);
	ri(L, "SHR.U32", t, 0, false, y, 0, 2);
	ri(L, "LOP.AND", t, 0, false, t, 0, 0x33333333u);
	ri(L, "LOP.AND", y, 0, false, y, 0, 0x33333333u);
	rr(L, "IADD", y, 0, false, y, 0, t, 0);
	ri(L, "SHR.U32", t, 0, false, y, 0, 4);
	rr(L, "IADD", y, 0, false, y, 0, t, 0);
	ri(L, "LOP.AND", y, 0, false, y, 0, 0x0f0f0f0fu);
	ri(L, "IMUL", y, 0, false, y, 0, 0x01010101u);
	ri(L, "SHR.U32", y, 0, false, y, 0, 24);
	return y;
}

/*
 * clz.b32|b64 (PTX ISA 9.7.1.x "clz": leading zeros, 32 or 64 for 0),
 * popc.b32|b64 (set bits), bfind[.shiftamt].u32|s32|u64|s64 (the bit
 * position of the most significant non-sign bit, 0xffffffff for none;
 * .shiftamt: the left shift that moves it to the top).  d is .u32.
 */
void pl_bitcount(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool clz = !strcmp(in->op, "clz"), popc = !strcmp(in->op, "popc");
	int d, r, x;

	if (!pl_want_ops(L, 2))
		return;
	if ((t.bits != 32 && t.bits != 64) || t.flt)
		return (void)pl_unsupported(L, "other than 32- and 64-bit integers");
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (t.bits == 32) {
		x = word_of(L, &in->ops[1], 0xffffffffu);
		if (!clz && !popc && t.sign) { /* bfind.s32: of x ^ (x >> 31) */
			int s = pl_new_vreg(L, 1);

			ri(L, "SHR.S32", s, 0, false, x, 0, 31);
			rr(L, "LOP.XOR", x, 0, false, x, 0, s, 0);
		}
		r = popc ? popc32(L, x, 0) : clz32(L, x, 0);
	} else {
		x = pl_pair_src(L, &in->ops[1]);
		if (x < 0)
			return;
		if (!clz && !popc && t.sign) {
			int s = pl_new_vreg(L, 1), y = pl_new_vreg(L, 2);

			ri(L, "SHR.S32", s, 0, false, x, 1, 31);
			rr(L, "LOP.XOR", y, 0, true, x, 0, s, 0);
			rr(L, "LOP.XOR", y, 1, false, x, 1, s, 0);
			x = y;
		}
		if (popc) {
			int h = popc32(L, x, 1);

			r = popc32(L, x, 0);
			rr(L, "IADD", r, 0, false, r, 0, h, 0);
		} else {
			r = clz64(L, x);
		}
	}
	if (clz || popc) {
		pl_mov_reg(L, d, 0, false, r, 0);
		return;
	}
	if (pl_has_mod(in, ".shiftamt")) { /* clz, or all ones when none */
		struct ptx_vinsn *v = pl_emit(L, "ISETP.EQ.U32");

		pl_o_text(v, "P6");
		pl_o_use(v, r, 0);
		pl_o_text(v, "0x%x", t.bits);
		v = pl_emit(L, "SEL");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, r, 0);
		pl_o_text(v, "0xffffffff");
		pl_o_text(v, "!P6");
		return;
	}
	/* bits - 1 - clz: -1 when there is none */
	rr(L, "ISUB", d, 0, false, -1, 0, r, 0);
	ri(L, "IADD", d, 0, false, d, 0, (uint32_t)t.bits - 1);
}

/* bfe and bfi on 32 bits with constant position and length: shifts and masks */
static void bitfield_const32(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool bfi = !strcmp(in->op, "bfi");
	const struct ptx_operand *po = &in->ops[bfi ? 3 : 2], *lo = &in->ops[bfi ? 4 : 3];
	struct ptx_vinsn *v;
	uint32_t pos, len, mask;
	int d, x;

	pos = (uint32_t)po->imm & 0xff;
	len = (uint32_t)lo->imm & 0xff;
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (pos > 31)
		pos = 32;
	if (len > 32 - pos)
		len = 32 - pos;
	mask = !len ? 0 : len >= 32 ? 0xffffffffu : ((1u << len) - 1) << pos;
	x = pl_new_vreg(L, 1);
	if (bfi && !mask) { /* an empty field: b */
		v = pl_emit(L, "MOV");
		pl_o_def(v, d, 0, false);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
		return;
	}
	if (bfi) { /* d = ((a << pos) & mask) | (b & ~mask) */
		int y = pl_new_vreg(L, 1);

		v = pl_emit(L, "SHL");
		pl_o_def(v, x, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_o_text(v, "0x%x", pos);
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, x, 0, false);
		pl_o_use(v, x, 0);
		pl_o_text(v, "0x%x", mask);
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, y, 0, false);
		pl_use_src(L, v, &in->ops[2], 0);
		pl_o_text(v, "0x%x", ~mask);
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, x, 0);
		pl_o_use(v, y, 0);
		return;
	}
	if (!len && pos > 31 && t.sign && lo->imm & 0xff) {
		/*
		 * The field starts past bit 31.  The ISA text fills d with
		 * a[31] (what the register form does, here and on an H200);
		 * with both operands immediate an H200 (ptxas) gives all ones
		 * whatever a is (bfe.s32 d, a, 60, 8 = 0xffffffff for a = 0):
		 * the GPU is the reference.
		 */
		mov_imm(L, d, 0, false, 0xffffffffu);
		return;
	}
	if (!len) { /* PTX: an empty field gives 0 */
		pl_mov_reg(L, d, 0, false, -1, 0);
		return;
	}
	/* bfe: move the field to the top, then shift it down (sign-filling
	 * for .s32) */
	v = pl_emit(L, "SHL");
	pl_o_def(v, x, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_o_text(v, "0x%x", 32 - pos - len);
	v = pl_emit(L, "SHR.%s", t.sign ? "S32" : "U32");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, x, 0);
	pl_o_text(v, "0x%x", 32 - len);
}

/*
 * bfe and bfi (PTX ISA 9.7.1.x) in general: 32 or 64 bits, position and
 * length (bits 0..7 of each; the whole words for 64 bits, as an H200
 * computes them) constant or in registers.  With msb the
 * width - 1:
 *   bfe: bits [pos, min(pos + len, msb + 1)) of a, moved down; the bits
 *        above are 0 (.u) or the field's top bit a[min(pos + len - 1,
 *        msb)] (.s; 0 when len = 0);
 *   bfi: b with those bits replaced by the low bits of a.
 * Masks are ~(~0 << len) (all ones for len past the width, vGPU's shifts
 * clamping as PTX's do); a signed field is shifted up to the top (by
 * width - min(pos + len, width)) and arithmetically down (by that plus
 * pos, the sign for pos past msb).
 */
static void bitfield_general(struct lower *L, bool bfi, struct ptype t)
{
	const struct ptx_insn *in = L->in;
	bool w64 = t.bits == 64;
	uint32_t pmask = w64 ? 0xffffffffu : 0xff;
	int p = word_of(L, &in->ops[bfi ? 3 : 2], pmask), n = word_of(L, &in->ops[bfi ? 4 : 3], pmask);
	int a, b = -1, d = pl_dst_reg(L, &in->ops[0], w64 ? PTX_R64 : PTX_R32);
	int words = w64 ? 2 : 1, m = pl_new_vreg(L, words), x = pl_new_vreg(L, words);
	struct ptx_vinsn *v;

	if (d < 0)
		return;
	if (w64) { /* all 32 bits count (an H200: pos or len 256 is past 63) */
		ri(L, "IMNMX.MIN.U32", p, 0, false, p, 0, 64);
		ri(L, "IMNMX.MIN.U32", n, 0, false, n, 0, 64);
	}
	if (w64) {
		a = pl_pair_src(L, &in->ops[1]);
		if (bfi)
			b = pl_pair_src(L, &in->ops[2]);
		if (a < 0 || (bfi && b < 0))
			return;
	} else {
		a = word_of(L, &in->ops[1], 0xffffffffu);
		if (bfi)
			b = word_of(L, &in->ops[2], 0xffffffffu);
	}
	if (!bfi && t.sign) {
		int e = pl_new_vreg(L, 1), sl = pl_new_vreg(L, 1), sr = pl_new_vreg(L, 1);

		rr(L, "IADD", e, 0, false, p, 0, n, 0);
		ri(L, "IMNMX.MIN.U32", e, 0, false, e, 0, (uint32_t)t.bits);
		rr(L, "ISUB", sl, 0, false, -1, 0, e, 0);
		ri(L, "IADD", sl, 0, false, sl, 0, (uint32_t)t.bits);
		rr(L, "IADD", sr, 0, false, sl, 0, p, 0);
		if (w64) {
			shift64(L, m, a, sl, SH_L);
			shift64(L, x, m, sr, SH_RS);
		} else {
			rr(L, "SHL", m, 0, false, a, 0, sl, 0);
			rr(L, "SHR.S32", x, 0, false, m, 0, sr, 0);
		}
		v = pl_emit(L, "ISETP.EQ.U32"); /* len 0: 0 */
		pl_o_text(v, "P6");
		pl_o_use(v, n, 0);
		pl_o_text(v, "0x0");
		for (int k = 0; k < words; k++) {
			v = pl_emit(L, "SEL");
			pl_o_def(v, d, k, k + 1 < words);
			pl_o_text(v, "RZ");
			pl_o_use(v, x, k);
			pl_o_text(v, "P6");
		}
		return;
	}
	/* m = ~(~0 << len) */
	if (w64) {
		int ones = pl_new_vreg(L, 2), mm = pl_new_vreg(L, 2);

		mov_imm(L, ones, 0, true, 0xffffffffu);
		mov_imm(L, ones, 1, false, 0xffffffffu);
		shift64(L, mm, ones, n, SH_L);
		ri(L, "LOP.XOR", m, 0, true, mm, 0, 0xffffffffu);
		ri(L, "LOP.XOR", m, 1, false, mm, 1, 0xffffffffu);
	} else {
		mov_imm(L, m, 0, false, 0xffffffffu);
		rr(L, "SHL", m, 0, false, m, 0, n, 0);
		ri(L, "LOP.XOR", m, 0, false, m, 0, 0xffffffffu);
	}
	if (!bfi) { /* (a >> pos) & m */
		if (w64)
			shift64(L, x, a, p, SH_RU);
		else
			rr(L, "SHR.U32", x, 0, false, a, 0, p, 0);
		for (int k = 0; k < words; k++)
			rr(L, "LOP.AND", d, k, k + 1 < words, x, k, m, k);
		return;
	}
	/* bfi: ((a << pos) & (m << pos)) | (b & ~(m << pos)) */
	{
		int mp = pl_new_vreg(L, words), y = pl_new_vreg(L, 1), z = pl_new_vreg(L, words);

		if (w64) {
			shift64(L, mp, m, p, SH_L);
			shift64(L, x, a, p, SH_L);
		} else {
			rr(L, "SHL", mp, 0, false, m, 0, p, 0);
			rr(L, "SHL", x, 0, false, a, 0, p, 0);
		}
		for (int k = 0; k < words; k++) {
			rr(L, "LOP.AND", z, k, k + 1 < words, x, k, mp, k);
		}
		for (int k = 0; k < words; k++) {
			ri(L, "LOP.XOR", y, 0, false, mp, k, 0xffffffffu);
			rr(L, "LOP.AND", y, 0, false, b, w64 ? k : 0, y, 0);
			rr(L, "LOP.OR", d, k, k + 1 < words, z, k, y, 0);
		}
	}
}

void pl_bitfield(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool bfi = !strcmp(in->op, "bfi");

	if (!pl_want_ops(L, bfi ? 5 : 4))
		return;
	if ((t.bits != 32 && t.bits != 64) || t.flt)
		return (void)pl_unsupported(L, "bit fields of other than 32 and 64 bits");
	if (t.bits == 32 && in->ops[bfi ? 3 : 2].kind == PTX_O_IMM &&
	    in->ops[bfi ? 4 : 3].kind == PTX_O_IMM)
		return bitfield_const32(L);
	bitfield_general(L, bfi, t);
}
