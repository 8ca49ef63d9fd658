// SPDX-License-Identifier: MIT
/*
 * PTX lowering: mov's vector forms, a register packed from or unpacked
 * into its elements (PTX ISA 9.7.9.1 mov: 2 x 32 <-> 64 bits, 2 x 16 <->
 * 32, 4 x 16 <-> 64, 2 x 8 <-> 16, 4 x 8 <-> 32; the first element in
 * the low bits; `_` for an element not wanted in an unpack).
 */
#include <stdbool.h>

#include "ptx_lower.h"

static bool all_regs(const struct lower *L, const struct ptx_operand *o, int bits, bool sinks)
{
	for (int i = 0; i < o->nvec; i++)
		if (o->vec[i] < 0 ? !sinks : pl_preg(L, o->vec[i])->cls != PTX_R32 ||
					     pl_preg(L, o->vec[i])->bits != bits)
			return false;
	return true;
}

/*
 * mov.b32 {a, b} <-> r and mov.b64 {a, b, c, d} <-> rd with 16-bit
 * elements, the first in the low bits.  Packing masks each element (a
 * 16-bit register may hold any bits above its value); unpacking shifts
 * each half down, through temporaries, so a destination may also be the
 * source.  False: not one of these forms.
 */
static bool mov_halves(struct lower *L, const struct ptx_operand *d, const struct ptx_operand *s)
{
	struct ptx_vinsn *v;

	if (s->kind == PTX_O_VEC && d->kind == PTX_O_REG && all_regs(L, s, 16, false) &&
	    ((s->nvec == 2 && pl_is_reg(L, d, PTX_R32)) ||
	     (s->nvec == 4 && pl_is_reg(L, d, PTX_R64)))) {
		int t = pl_new_vreg(L, s->nvec / 2), u = pl_new_vreg(L, 1);

		for (int w = 0; w < s->nvec / 2; w++) {
			v = pl_emit(L, "LOP.AND");
			pl_o_def(v, t, w, s->nvec == 4 && w == 0);
			pl_o_use(v, s->vec[2 * w], 0);
			pl_o_text(v, "0xffff");
			v = pl_emit(L, "SHL");
			pl_o_def(v, u, 0, false);
			pl_o_use(v, s->vec[2 * w + 1], 0);
			pl_o_text(v, "0x10");
			v = pl_emit(L, "LOP.OR");
			pl_o_def(v, t, w, s->nvec == 4 && w == 0);
			pl_o_use(v, t, w);
			pl_o_use(v, u, 0);
		}
		for (int w = 0; w < s->nvec / 2; w++)
			pl_mov_reg(L, d->reg, w, s->nvec == 4 && w == 0, t, w);
		return true;
	}
	if (d->kind == PTX_O_VEC && s->kind == PTX_O_REG && all_regs(L, d, 16, true) &&
	    ((d->nvec == 2 && pl_is_reg(L, s, PTX_R32)) ||
	     (d->nvec == 4 && pl_is_reg(L, s, PTX_R64)))) {
		int t = pl_new_vreg(L, 1), u = pl_new_vreg(L, 1), h = pl_new_vreg(L, 1);
		int k = pl_new_vreg(L, 1);

		for (int e = 0; e < d->nvec; e++) {
			v = pl_emit(L, e & 1 ? "SHR.U32" : "MOV");
			pl_o_def(v, e == 0 ? t : e == 1 ? u : e == 2 ? h : k, 0, false);
			pl_o_use(v, s->reg, e / 2);
			if (e & 1)
				pl_o_text(v, "0x10");
		}
		for (int e = 0; e < d->nvec; e++)
			if (d->vec[e] >= 0)
				pl_mov_reg(L, d->vec[e], 0, false,
					   e == 0 ? t : e == 1 ? u : e == 2 ? h : k, 0);
		return true;
	}
	return false;
}

/*
 * mov.b16 {a, b} <-> h and mov.b32 {a, b, c, d} <-> r with 8-bit
 * elements, the first in the low bits: as mov_halves, a byte each
 * (masked when packed, shifted down when unpacked).
 */
static bool mov_bytes(struct lower *L, const struct ptx_operand *d, const struct ptx_operand *s)
{
	const struct ptx_operand *v8 = s->kind == PTX_O_VEC ? s : d, *r = v8 == s ? d : s;
	int n = v8->nvec, t[4];
	struct ptx_vinsn *v;

	if (r->kind != PTX_O_REG || !pl_is_reg(L, r, PTX_R32) ||
	    pl_preg(L, r->reg)->bits != 8 * n || (n != 2 && n != 4) ||
	    !all_regs(L, v8, 8, v8 == d))
		return false;
	for (int e = 0; e < n; e++) {
		t[e] = pl_new_vreg(L, 1);
		if (v8 == s) { /* pack: t[0] accumulates */
			v = pl_emit(L, "LOP.AND");
			pl_o_def(v, t[e], 0, false);
			pl_o_use(v, s->vec[e], 0);
			pl_o_text(v, "0xff");
			if (!e)
				continue;
			v = pl_emit(L, "SHL");
			pl_o_def(v, t[e], 0, false);
			pl_o_use(v, t[e], 0);
			pl_o_text(v, "0x%x", 8 * e);
			v = pl_emit(L, "LOP.OR");
			pl_o_def(v, t[0], 0, false);
			pl_o_use(v, t[0], 0);
			pl_o_use(v, t[e], 0);
			continue;
		}
		v = pl_emit(L, "SHR.U32"); /* unpack: byte e of the source */
		pl_o_def(v, t[e], 0, false);
		pl_o_use(v, s->reg, 0);
		pl_o_text(v, "0x%x", 8 * e);
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, t[e], 0, false);
		pl_o_use(v, t[e], 0);
		pl_o_text(v, "0xff");
	}
	if (v8 == s)
		pl_mov_reg(L, d->reg, 0, false, t[0], 0);
	else
		for (int e = 0; e < n; e++)
			if (d->vec[e] >= 0)
				pl_mov_reg(L, d->vec[e], 0, false, t[e], 0);
	return true;
}

void pl_mov_vector(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *d = &in->ops[0], *s = &in->ops[1];

	/* mov.b64 {lo, hi}, %rd (unpack) / mov.b64 %rd, {lo, hi} (pack) */
	if (d->kind == PTX_O_VEC && pl_is_reg(L, s, PTX_R64) && d->nvec == 2) {
		for (int i = 0; i < 2; i++)
			if (d->vec[i] >= 0)
				pl_mov_reg(L, d->vec[i], 0, false, s->reg, i);
		return;
	}
	if (s->kind == PTX_O_VEC && pl_is_reg(L, d, PTX_R64) && s->nvec == 2) {
		int t = pl_new_vreg(L, 2);

		for (int i = 0; i < 2; i++)
			pl_mov_reg(L, t, i, i == 0, s->vec[i], 0);
		for (int i = 0; i < 2; i++)
			pl_mov_reg(L, d->reg, i, i == 0, t, i);
		return;
	}
	if (mov_halves(L, d, s) || mov_bytes(L, d, s))
		return;
	pl_unsupported(L, "vector moves other than 2 x 32 <-> 64 bits, 2 x 16 <-> 32, "
		       "4 x 16 <-> 64, 2 x 8 <-> 16 and 4 x 8 <-> 32");
}
