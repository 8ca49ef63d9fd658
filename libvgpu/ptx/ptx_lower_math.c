// SPDX-License-Identifier: MIT
/*
 * PTX lowering: division and remainder (IDIV, IREM, FDIV), the
 * multi-function unit's functions (MUFU: rcp sqrt rsqrt ex2 lg2 sin cos)
 * and floating-point comparisons with PTX's ordered
 * and unordered forms (pl_fcmp, for f32 and f64).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"

/* div and rem: integers (32-bit) on IDIV/IREM, f32 div on FDIV */
void pl_divrem(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool rem = !strcmp(in->op, "rem");
	int d;

	if (!pl_want_ops(L, 3))
		return;
	if (t.bits == 64 && !t.flt) { /* IDIV64/IREM64 on pairs */
		struct ptx_vinsn *v;
		int s[2];

		d = pl_dst_reg(L, &in->ops[0], PTX_R64);
		if (d < 0)
			return;
		for (int k = 0; k < 2; k++) {
			const struct ptx_operand *o = &in->ops[1 + k];

			if (pl_is_reg(L, o, PTX_R64)) {
				s[k] = o->reg;
				continue;
			}
			if (o->kind != PTX_O_IMM)
				return (void)pl_lerr(L, "expected a 64-bit register or value");
			s[k] = pl_new_vreg(L, 2);
			for (int part = 0; part < 2; part++) {
				v = pl_emit(L, "MOV");
				pl_o_def(v, s[k], part, part == 0);
				pl_o_text(v, "0x%" PRIx32, (uint32_t)((uint64_t)o->imm >> (32 * part)));
			}
		}
		v = pl_emit(L, "%s.%s", rem ? "IREM64" : "IDIV64", t.sign ? "S32" : "U32");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, s[0], 0);
		pl_o_use(v, s[1], 0);
		return;
	}
	if (t.flt && (t.bits != 32 || rem))
		return (void)pl_unsupported(L, "division of non-f32 floating-point values");
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	if (t.flt && pl_has_mod(in, ".approx"))
		pl_f32_div_approx(L, d);
	else if (t.flt) { /* .rn and .full: IEEE division; .rz .rm .rp */
		char mnem[16];

		snprintf(mnem, sizeof(mnem), "FDIV%s%s", pl_f32_rnd(L), pl_f32_ftz(L));
		pl_alu32(L, mnem, d, 0, false, &in->ops[1], &in->ops[2], 0, false);
	}
	else
		pl_alu32(L, rem ? (t.sign ? "IREM.S32" : "IREM.U32") :
				  (t.sign ? "IDIV.S32" : "IDIV.U32"),
			 d, 0, false, &in->ops[1], &in->ops[2], 0, false);
}

/* rcp sqrt rsqrt ex2 lg2 sin cos (f32) on MUFU */
void pl_mufu(struct lower *L)
{
	static const struct {
		const char *op, *fn;
	} fns[] = {
		{ "rcp", "RCP" }, { "sqrt", "SQRT" }, { "rsqrt", "RSQ" }, { "ex2", "EX2" },
		{ "lg2", "LG2" }, { "sin", "SIN" },   { "cos", "COS" },
	};
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	struct ptx_vinsn *v;
	size_t i;
	int d;

	if (!pl_want_ops(L, 2))
		return;
	if (!t.flt || t.bits != 32)
		return (void)pl_unsupported(L, "other than f32");
	for (i = 0; strcmp(fns[i].op, in->op); i++)
		;
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	/* rcp and sqrt: IEEE with .rn .rz .rm .rp; the .approx ones round as they do */
	v = pl_emit(L, "MUFU.%s%s%s", fns[i].fn, i < 2 ? pl_f32_rnd(L) : "", pl_f32_ftz(L));
	pl_o_def(v, d, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
}

/*
 * Predicate @p = (a CMP b) for floats, CMP a PTX comparison (".lt",
 * ".ltu", ".num", ...), on FSETP or DSETP (@mn), whose comparisons are
 * C's: ordered (false with a NaN) except NE, which is C's != (true with a
 * NaN: PTX's .neu).  The others are built from them:
 * ne = lt or gt; equ = not ne; ltu = not ge, leu = not gt, gtu = not le,
 * geu = not lt; num = (a == a) and (b == b); nan = not num.
 * Returns false (after the error) for an unknown comparison.
 */
bool pl_fcmp(struct lower *L, const char *mn, const char *cmp, int a, int b, int p)
{
	static const struct {
		const char *ptx, *first, *second; /* second: OR-ed in */
		bool negate, self;
	} rules[] = {
		{ ".eq", "EQ", NULL, false, false },   { ".lt", "LT", NULL, false, false },
		{ ".le", "LE", NULL, false, false },   { ".gt", "GT", NULL, false, false },
		{ ".ge", "GE", NULL, false, false },   { ".neu", "NE", NULL, false, false },
		{ ".ne", "LT", "GT", false, false },   { ".equ", "LT", "GT", true, false },
		{ ".ltu", "GE", NULL, true, false },   { ".leu", "GT", NULL, true, false },
		{ ".gtu", "LE", NULL, true, false },   { ".geu", "LT", NULL, true, false },
		{ ".num", "EQ", NULL, false, true },   { ".nan", "EQ", NULL, true, true },
	};
	struct ptx_vinsn *v;
	size_t k;

	for (k = 0; k < sizeof(rules) / sizeof(rules[0]); k++)
		if (!strcmp(rules[k].ptx, cmp))
			break;
	if (k == sizeof(rules) / sizeof(rules[0]))
		return pl_unsupported(L, "comparison");
	/* f32 .ftz: FSETP...FTZ, after the combine */
	const char *z = !strcmp(mn, "FSETP") ? pl_f32_ftz(L) : "";

	v = pl_emit(L, "%s.%s%s", mn, rules[k].first, z);
	pl_o_pdef(v, p);
	pl_o_use(v, a, 0);
	pl_o_use(v, rules[k].self ? a : b, 0);
	if (rules[k].second || rules[k].self) {
		v = pl_emit(L, "%s.%s.%s%s", mn, rules[k].self ? "EQ" : rules[k].second,
			    rules[k].self ? "AND" : "OR", z);
		pl_o_pdef(v, p);
		pl_o_use(v, rules[k].self ? b : a, 0);
		pl_o_use(v, b, 0);
		pl_o_puse(v, p, false);
	}
	if (rules[k].negate) {
		v = pl_emit(L, "ISETP.EQ.U32.AND");
		pl_o_pdef(v, p);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x0");
		pl_o_puse(v, p, true);
	}
	return true;
}

/*
 * setp.CMP[.BOOL].f32|f64 d, a, b[, c]: the comparison into d, or into a
 * temporary combined with c.  @a and @b are register vregs (pairs for f64).
 */
void pl_fsetp(struct lower *L, bool f64, int a, int b)
{
	const struct ptx_insn *in = L->in;
	const char *boolop = pl_has_mod(in, ".and") ? "AND" : pl_has_mod(in, ".or") ? "OR" :
			     pl_has_mod(in, ".xor") ? "XOR" : NULL;
	const char *cmp = NULL;
	struct ptx_vinsn *v;
	int d, p, r;

	for (int i = 0; i < in->nmods; i++)
		if (in->mods[i][0] == '.' && strlen(in->mods[i]) <= 4 &&
		    strcmp(in->mods[i], ".and") && strcmp(in->mods[i], ".or") &&
		    strcmp(in->mods[i], ".xor") && strcmp(in->mods[i], ".ftz") &&
		    in->mods[i][1] != 'f' && in->mods[i][1] != 'b')
			cmp = in->mods[i];
	if (!cmp)
		return (void)pl_unsupported(L, "comparison");
	d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	p = boolop ? pl_new_vreg(L, 0) : d;
	if (!pl_fcmp(L, f64 ? "DSETP" : "FSETP", cmp, a, b, p) || !boolop)
		return;
	r = pl_new_vreg(L, 1); /* d = p BOOL c, through a register */
	v = pl_emit(L, "SEL");
	pl_o_def(v, r, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0x1");
	pl_o_puse(v, p, true);
	v = pl_emit(L, "ISETP.NE.U32.%s", boolop);
	pl_o_pdef(v, d);
	pl_o_use(v, r, 0);
	pl_o_text(v, "0x0");
	pl_o_puse(v, pl_pred_of(L, &in->ops[3]), in->ops[3].neg);
}
