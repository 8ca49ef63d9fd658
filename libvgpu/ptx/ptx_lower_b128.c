// SPDX-License-Identifier: MIT
/*
 * PTX lowering: the .b128 type (PTX ISA 8.3+, 5.2.1): a .reg .b128
 * register is a vreg of four words (low word first), which only these
 * instructions take:
 *
 *   mov.b128 q, {a, b} / {a, b, c, d}   pack two .b64 or four .b32
 *   mov.b128 {a, b}, q                  unpack (`_`: an element not wanted)
 *   mov.b128 q, r / imm                 copy, a literal (zero-extended)
 *   ld.b128 / st.b128                   one 16-byte access (LDG/STG.128 on
 *                                       global and local memory, whole
 *                                       against other SMs; LDS/STS.128,
 *                                       LDP.128; generic picks at run time)
 *   atom.cas.b128                       ATOMG.CAS.128 / ATOMS.CAS.128
 *   atom.exch.b128                      a compare-and-swap loop over them
 *   ld/ldu/st of a narrower type        the low bits, extended (pl_ld_narrow128)
 *   cvt, vector ld/ldu/st elements      as a narrower register (pl_b128_wide)
 *
 * (sm_90 for the atomics; .global, .shared and generic addresses).  Every
 * other instruction refuses a .b128 register (pl_b128_misuse()), as ptxas
 * 13.0 does for add, and, selp, cvt.u64.b128, shfl, ...
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"

static bool is_q(const struct lower *L, const struct ptx_operand *o)
{
	return pl_is_reg(L, o, PTX_R128);
}

static bool names_q(const struct lower *L, const struct ptx_operand *o)
{
	if (o->kind == PTX_O_REG || (o->kind == PTX_O_MEM && o->reg >= 0))
		return pl_preg(L, o->reg)->cls == PTX_R128;
	if (o->kind == PTX_O_VEC)
		for (int i = 0; i < o->nvec; i++)
			if (o->vec[i] >= 0 && pl_preg(L, o->vec[i])->cls == PTX_R128)
				return true;
	return false;
}

/* ld/ldu of a narrower scalar type into a .b128 register, st of one
 * from it (pl_ld_narrow128) */
bool pl_ld_narrow(const struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);

	bool st = !strcmp(in->op, "st");

	return (!strcmp(in->op, "ld") || !strcmp(in->op, "ldu") || st) && in->nops >= 2 &&
	       is_q(L, &in->ops[st ? 1 : 0]) && !pl_has_mod(in, ".b128") && t.bits >= 8 &&
	       !pl_has_mod(in, ".v2") && !pl_has_mod(in, ".v4") && !pl_has_mod(in, ".v8") &&
	       !pl_has_mod(in, ".async");
}

bool pl_b128_misuse(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool mov = !strcmp(in->op, "mov");
	bool typed = (pl_has_mod(in, ".b128") &&
		      (!strcmp(in->op, "ld") || !strcmp(in->op, "ldu") || !strcmp(in->op, "st") ||
		       !strcmp(in->op, "atom"))) || pl_ld_narrow(L);

	for (int i = 0; i < in->nops; i++) {
		const struct ptx_operand *o = &in->ops[i];

		if (!names_q(L, o))
			continue;
		if (o->kind == PTX_O_MEM)
			return pl_lerr(L, "a .b128 register is not an address");
		if ((mov && pl_has_mod(in, ".b128")) || typed)
			continue;
		return pl_lerr(L, "'%s%s' does not take the .b128 register '%s' (only mov, ld, st, "
			       "atom.cas and atom.exch of .b128 do)", in->op,
			       in->nmods ? in->mods[0] : "",
			       o->kind == PTX_O_REG ? pl_preg(L, o->reg)->name : "{...}");
	}
	return false;
}

/* Word @k (0..3) of 128-bit source @o into a new vreg of 4 words @t. */
static bool imm_words(struct lower *L, const struct ptx_operand *o, int t)
{
	if (o->neg || o->fimm)
		return pl_lerr(L, "a .b128 literal is an integer");
	/* a literal is 64 bits (PTX ISA 4.5.1), zero-extended to 128 */
	for (int k = 0; k < 4; k++) {
		struct ptx_vinsn *v = pl_emit(L, "MOV");
		uint32_t w = k < 2 ? (uint32_t)((uint64_t)o->imm >> (32 * k)) : 0;

		pl_o_def(v, t, k, k < 3);
		pl_o_text(v, "0x%" PRIx32, w);
	}
	return true;
}

/* A 128-bit source operand as a vreg of four words; -1 after an error. */
static int q_src(struct lower *L, const struct ptx_operand *o)
{
	int t;

	if (is_q(L, o))
		return o->reg;
	if (o->kind != PTX_O_IMM) {
		pl_lerr(L, "a .b128 operand is a .b128 register or an integer literal");
		return -1;
	}
	t = pl_new_vreg(L, 4);
	return imm_words(L, o, t) ? t : -1;
}

/* The elements of a packing vector: 2 x .b64 or 4 x .b32 (32 bits each). */
static int vec_shape(const struct lower *L, const struct ptx_operand *o, bool sinks)
{
	int cls = o->nvec == 2 ? PTX_R64 : PTX_R32, bits = o->nvec == 2 ? 64 : 32;

	if (o->nvec != 2 && o->nvec != 4)
		return 0;
	for (int i = 0; i < o->nvec; i++) {
		if (o->vec[i] < 0) {
			if (!sinks)
				return 0;
			continue;
		}
		if (pl_preg(L, o->vec[i])->cls != cls || pl_preg(L, o->vec[i])->bits != bits)
			return 0;
	}
	return o->nvec;
}

static void mov128(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *d = &in->ops[0], *s = &in->ops[1];
	int n, per, t;

	if (!pl_want_ops(L, 2))
		return;
	if (is_q(L, d) && s->kind == PTX_O_VEC) {
		if (!(n = vec_shape(L, s, false)))
			return (void)pl_lerr(L, "mov.b128 packs {two .b64} or {four .b32} registers");
		per = 4 / n;
		/* through a temporary: the destination is not an element */
		t = pl_new_vreg(L, 4);
		for (int e = 0; e < n; e++)
			for (int k = 0; k < per; k++)
				pl_mov_reg(L, t, e * per + k, e * per + k < 3, s->vec[e], k);
		for (int k = 0; k < 4; k++)
			pl_mov_reg(L, d->reg, k, k < 3, t, k);
		return;
	}
	if (d->kind == PTX_O_VEC && is_q(L, s)) {
		if (!(n = vec_shape(L, d, true)))
			return (void)pl_lerr(L, "mov.b128 unpacks into {two .b64} or {four .b32} "
					     "registers");
		per = 4 / n;
		for (int e = 0; e < n; e++)
			for (int k = 0; k < per && d->vec[e] >= 0; k++)
				pl_mov_reg(L, d->vec[e], k, k < per - 1, s->reg, e * per + k);
		return;
	}
	if (!is_q(L, d))
		return (void)pl_lerr(L, "mov.b128 needs a .b128 register or a vector of its "
				     "halves or quarters as the destination");
	if (is_q(L, s)) {
		if (s->reg != d->reg)
			for (int k = 0; k < 4; k++)
				pl_mov_reg(L, d->reg, k, k < 3, s->reg, k);
		return;
	}
	if (s->kind != PTX_O_IMM)
		return (void)pl_lerr(L, "mov.b128 takes a .b128 register, a vector or an integer "
				     "literal");
	imm_words(L, s, d->reg);
}

void pl_mov128(struct lower *L)
{
	if (!pl_has_mod(L->in, ".b128"))
		return (void)pl_lerr(L, "a mov of a .b128 register is mov.b128");
	mov128(L);
}

/* ld/st/ldu .b128: one 16-byte access. */
void pl_ldst128(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool load = strcmp(in->op, "st") != 0;
	enum space sp = pl_space_of(in);
	const struct ptx_operand *mem = &in->ops[load ? 1 : 0], *val = &in->ops[load ? 0 : 1];
	char off[PTX_NAME_MAX + 24];
	int base, sh = -1, gl = -1, q, nops = pl_hint_nops(L);

	if (nops < 0)
		return;
	if (nops != 2)
		return (void)pl_lerr(L, "'%s' takes 2 operands, not %d", in->op, nops);
	if (pl_has_mod(in, ".v2") || pl_has_mod(in, ".v4") || pl_has_mod(in, ".v8"))
		return (void)pl_lerr(L, "a vector of .b128 exceeds 128 bits");
	if (sp == SP_OTHER)
		return (void)pl_unsupported(L, "the .const state space");
	if (!load && sp == SP_PARAM)
		return (void)pl_unsupported(L, "st.param");
	if (!strcmp(in->op, "ldu") && sp != SP_GLOBAL && sp != SP_NONE)
		return (void)pl_lerr(L, "ldu reads global memory (.global or a generic address)");
	if (load ? !is_q(L, val) && val->kind != PTX_O_SINK : !is_q(L, val) &&
	    val->kind != PTX_O_IMM)
		return (void)pl_lerr(L, "%s.b128 %s a .b128 register", in->op,
				     load ? "loads into" : "stores");
	if (!pl_address(L, mem, &sp, &base, off, sizeof(off)))
		return;
	if (load)
		q = is_q(L, val) ? val->reg : pl_new_vreg(L, 4);
	else if ((q = q_src(L, val)) < 0)
		return;
	if (sp == SP_NONE)
		pl_generic_split(L, base, &sh, &gl);
	for (int k = 0; k < 2; k++) {
		bool shared = sp == SP_NONE ? k == 0 : sp == SP_SHARED;
		struct ptx_vinsn *v;

		if (sp != SP_NONE && k)
			break;
		v = pl_emit(L, "%s.128", sp == SP_PARAM ? "LDP" : shared ? (load ? "LDS" : "STS") :
							   (load ? "LDG" : "STG"));
		if (sp == SP_NONE) {
			v->guard = shared ? sh : gl;
			v->guard_not = false;
		}
		if (load)
			pl_o_def(v, q, 0, false);
		pl_o_mem(v, base, "%s", off);
		if (!load)
			pl_o_use(v, q, 0);
	}
}

/*
 * ld/ldu of an 8- to 64-bit type into a .b128 register: as an H200 does
 * it (tests/cuda/real-gpu/b128-narrow-h200-2026-11-30, b128-s64-h200-2026-11-30),
 * the value is sign-extended to 64 bits for a signed integer type, else
 * zero-extended, and the high 64 bits are zero, but for .s64, whose sign
 * fills them (PTX ISA 6.4.x's rule for a destination wider than the type
 * would sign-extend every signed type to all 128).  One load into a
 * temporary, then the four words.  st of such a type from a .b128
 * register stores its low bits (a source wider than the type is
 * truncated; the H200 agrees).
 */
void pl_ld_narrow128(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool load = strcmp(in->op, "st") != 0;
	struct ptype t = pl_type_of(in, 0);
	enum space sp = pl_space_of(in);
	const char *sz = t.bits == 8 ? (t.sign ? "S8" : "U8") :
			 t.bits == 16 ? (t.sign ? "S16" : "U16") : t.bits == 64 ? "64" : "32";
	char off[PTX_NAME_MAX + 24];
	int base, sh = -1, gl = -1, tmp, ext = -1, q = in->ops[load ? 0 : 1].reg;
	int nops = pl_hint_nops(L);
	struct ptx_vinsn *v;

	if (nops < 0)
		return;
	if (nops != 2)
		return (void)pl_lerr(L, "'%s' takes 2 operands, not %d", in->op, nops);
	if (sp == SP_OTHER)
		return (void)pl_unsupported(L, "the .const state space");
	if (!strcmp(in->op, "ldu") && sp != SP_GLOBAL && sp != SP_NONE)
		return (void)pl_lerr(L, "ldu reads global memory (.global or a generic address)");
	if (!load && sp == SP_PARAM)
		return (void)pl_unsupported(L, "st.param");
	if (!pl_address(L, &in->ops[load ? 1 : 0], &sp, &base, off, sizeof(off)))
		return;
	if (sp == SP_NONE)
		pl_generic_split(L, base, &sh, &gl);
	tmp = pl_new_vreg(L, t.bits == 64 ? 2 : 1);
	if (!load) /* the low word(s), truncated by the store's size */
		for (int k = 0; k < (t.bits == 64 ? 2 : 1); k++)
			pl_mov_reg(L, tmp, k, t.bits == 64 && k == 0, q, k);
	for (int k = 0; k < 2; k++) {
		bool shared = sp == SP_NONE ? k == 0 : sp == SP_SHARED;

		if (sp != SP_NONE && k)
			break;
		v = pl_emit(L, "%s.%s", sp == SP_PARAM ? "LDP" : shared ? (load ? "LDS" : "STS") :
							   (load ? "LDG" : "STG"),
			    load ? sz : t.bits == 8 ? "U8" : t.bits == 16 ? "U16" : sz);
		if (sp == SP_NONE) {
			v->guard = shared ? sh : gl;
			v->guard_not = false;
		}
		if (load)
			pl_o_def(v, tmp, 0, false);
		pl_o_mem(v, base, "%s", off);
		if (!load)
			pl_o_use(v, tmp, 0);
	}
	if (!load)
		return;
	if (t.sign) { /* LD*.S8/.S16 sign-extend to 32 bits already */
		ext = pl_new_vreg(L, 1);
		v = pl_emit(L, "SHR.S32");
		pl_o_def(v, ext, 0, false);
		pl_o_use(v, tmp, t.bits == 64 ? 1 : 0);
		pl_o_text(v, "0x1f");
	}
	for (int k = 0; k < 4; k++)
		pl_mov_reg(L, q, k, k < 3,
			   k == 0 || (k == 1 && t.bits == 64) ? tmp :
			   k == 1 || t.bits == 64 ? ext : -1,
			   k == 1 && t.bits == 64 ? 1 : 0);
}

/* The CAS of @old to @nw at the address, in space @sp (both under sh/gl). */
static void cas128(struct lower *L, bool guarded, enum space sp, int base, const char *off,
		   int sh, int gl, int d, int cmp, int nw)
{
	for (int k = 0; k < 2; k++) {
		bool shared = sp == SP_NONE ? k == 0 : sp == SP_SHARED;
		struct ptx_vinsn *v;

		if (sp != SP_NONE && k)
			break;
		v = pl_emit(L, "%s.CAS.128", shared ? "ATOMS" : "ATOMG");
		if (sp == SP_NONE) {
			v->guard = shared ? sh : gl;
			v->guard_not = false;
		} else if (!guarded) {
			v->guard = -1;
		}
		pl_o_def(v, d, 0, false);
		pl_o_mem(v, base, "%s", off);
		pl_o_use(v, cmp, 0);
		pl_o_use(v, nw, 0);
	}
}

/*
 * atom.exch.b128: vGPU's atomics exchange at most 8 bytes, so a loop:
 * read the 16 bytes, CAS the new value in over them; a lane whose CAS
 * saw another value goes round again with that one.  A guarded
 * instruction branches around the loop where its guard is false.
 */
static void exch128(struct lower *L, enum space sp, int base, const char *off, int sh, int gl,
		    int d, int b)
{
	const struct ptx_insn *in = L->in;
	int old = pl_new_vreg(L, 4), prev = pl_new_vreg(L, 4), again = pl_new_vreg(L, 0);
	int loop = pl_new_label(L), skip = pl_new_label(L);
	struct ptx_vinsn *v;

	if (in->guard >= 0)
		pl_bra_label(L, skip, in->guard, !in->guard_not);
	for (int k = 0; k < 2; k++) {
		bool shared = sp == SP_NONE ? k == 0 : sp == SP_SHARED;

		if (sp != SP_NONE && k)
			break;
		v = pl_emit(L, "%s.128", shared ? "LDS" : "LDG");
		v->guard = sp == SP_NONE ? (shared ? sh : gl) : -1;
		v->guard_not = false;
		pl_o_def(v, old, 0, false);
		pl_o_mem(v, base, "%s", off);
	}
	pl_put_label(L, loop);
	cas128(L, false, sp, base, off, sh, gl, prev, old, b);
	for (int k = 0; k < 4; k++) {
		v = pl_emit(L, k ? "ISETP.NE.U32.OR" : "ISETP.NE.U32");
		v->guard = -1;
		pl_o_pdef(v, again);
		pl_o_use(v, prev, k);
		pl_o_use(v, old, k);
		if (k)
			pl_o_puse(v, again, false);
	}
	for (int k = 0; k < 4; k++) {
		v = pl_emit(L, "MOV");
		v->guard = -1;
		pl_o_def(v, old, k, k < 3);
		pl_o_use(v, prev, k);
	}
	pl_bra_label(L, loop, again, false);
	pl_put_label(L, skip);
	if (d >= 0)
		for (int k = 0; k < 4; k++)
			pl_mov_reg(L, d, k, k < 3, old, k);
}

/* atom{.sem}{.scope}{.space}.cas.b128 / .exch{.L2::cache_hint}.b128 */
void pl_atom128(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool cas = pl_has_mod(in, ".cas"), exch = pl_has_mod(in, ".exch");
	enum space sp = pl_space_of(in);
	char off[PTX_NAME_MAX + 24];
	int base, sh = -1, gl = -1, d, b, c = -1, nops;

	if (!strcmp(in->op, "red"))
		return (void)pl_lerr(L, "red does not take .b128 (atom.cas and atom.exch do)");
	if (!cas && !exch)
		return (void)pl_lerr(L, "a .b128 atomic is .cas or .exch");
	if (cas && pl_has_mod(in, ".L2::cache_hint"))
		return (void)pl_lerr(L, "atom.cas.b128 takes no .L2::cache_hint");
	if (pl_has_mod(in, ".v2") || pl_has_mod(in, ".v4") || pl_has_mod(in, ".v8"))
		return (void)pl_lerr(L, "a vector of .b128 exceeds 128 bits");
	if (sp != SP_GLOBAL && sp != SP_SHARED && sp != SP_NONE)
		return (void)pl_lerr(L, "a .b128 atomic is on .global, .shared or a generic address");
	nops = pl_hint_nops(L);
	if (nops < 0)
		return;
	if (nops != (cas ? 4 : 3))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!is_q(L, &in->ops[0]) && in->ops[0].kind != PTX_O_SINK)
		return (void)pl_lerr(L, "the destination of a .b128 atomic is a .b128 register");
	if (!pl_address(L, &in->ops[1], &sp, &base, off, sizeof(off)))
		return;
	if (sp == SP_LOCAL)
		return (void)pl_lerr(L, "atomics on .local memory are not defined");
	/* ptxas 13.0 fails (exit status -11) on a literal new value */
	if (cas && in->ops[3].kind == PTX_O_IMM)
		return (void)pl_lerr(L, "atom.cas.b128 takes its new value in a .b128 register");
	if ((b = q_src(L, &in->ops[2])) < 0 || (cas && (c = q_src(L, &in->ops[3])) < 0))
		return;
	d = is_q(L, &in->ops[0]) ? in->ops[0].reg : -1;
	if (sp == SP_NONE)
		pl_generic_split(L, base, &sh, &gl);
	if (exch)
		return exch128(L, sp, base, off, sh, gl, d, b);
	/* the core writes all four words: a sink gets a temporary */
	cas128(L, true, sp, base, off, sh, gl, d >= 0 ? d : pl_new_vreg(L, 4), b, c);
}

/*
 * cvt naming a .b128 register, and ld/ldu/st with .b128 registers as a
 * vector's elements (ptxas 13.0 takes both: cvt wherever it takes a
 * .b64 register, `ld.global.v2.b64 {%q1, %q2}, [a]`, `.v4.s8`, `.v8.b16`,
 * `st.v4.b32 [a], {%q1, 1, 2, %q2}`; a vector mixing them with narrower
 * registers is its "Incompatible elements").  Each such register gets a
 * stand-in of the type's width, 64 bits for a 64-bit type, else 32 (a
 * source: its low bits, truncated as PTX's wider sources are), and the
 * instruction is lowered as it is with those; a destination then gets
 * the result as shadow_out() extends it.  An H200 does cvt and the
 * vector stores so (tests/cuda/real-gpu/b128-vec-h200-2026-11-30); its
 * vector loads into .b128 registers are not PTX's (every word a function
 * of element 0: ptxas 13.0 seems to load element 0 alone), vGPU loads
 * each element as PTX ISA defines, extended as a scalar ld into a .b128
 * register is (pl_ld_narrow128).
 */
static int shadow(struct lower *L, int q, bool wide)
{
	int i = L->nshadow, v;

	if (i == PTX_B128_SHADOWS)
		return pl_lerr(L, "internal error: too many .b128 operands"), -1;
	v = pl_new_vreg(L, wide ? 2 : 1);
	L->shadow[i] = *pl_preg(L, q);
	L->shadow[i].cls = wide ? PTX_R64 : PTX_R32;
	L->shadow[i].bits = wide ? 64 : 32;
	L->shadow_v[i] = v;
	L->nshadow++;
	return v;
}

/* a vector's hidden register of an immediate element (ptx_parse_body.c) */
static bool vimm(const struct lower *L, int r)
{
	return !strncmp(pl_preg(L, r)->name, "$vimm", 5);
}

/* q's low word(s) into stand-in @s (a source) */
static void shadow_in(struct lower *L, int s, int q, bool wide)
{
	for (int k = 0; k < (wide ? 2 : 1); k++)
		pl_mov_reg(L, s, k, wide && !k, q, k);
}

/*
 * stand-in @s's value of type @t into q, extended (a destination): to 64
 * bits by the type's sign, the high 64 bits zero, except for .s64, whose
 * sign fills them (the H200 does so after cvt and after a scalar ld:
 * tests/cuda/real-gpu/b128-vec-h200-2026-11-30, b128-s64-h200-2026-11-30)
 */
static void shadow_out(struct lower *L, int q, int s, struct ptype t)
{
	int hi = -1, hp = 0, top = -1;
	struct ptx_vinsn *v;

	if (t.bits == 64) {
		hi = s;
		hp = 1;
	} else if (t.sign) { /* a narrower signed type is sign-extended to 32 already */
		hi = pl_new_vreg(L, 1);
		v = pl_emit(L, "SHR.S32");
		pl_o_def(v, hi, 0, false);
		pl_o_use(v, s, 0);
		pl_o_text(v, "0x1f");
	}
	if (t.bits == 64 && t.sign) {
		top = pl_new_vreg(L, 1);
		v = pl_emit(L, "SHR.S32");
		pl_o_def(v, top, 0, false);
		pl_o_use(v, s, 1);
		pl_o_text(v, "0x1f");
	}
	for (int k = 0; k < 4; k++)
		pl_mov_reg(L, q, k, k < 3, k == 0 ? s : k == 1 ? hi : top, k == 1 ? hp : 0);
}

struct wide_dst {
	int q, s;
	struct ptype t;
};

/* Operand @o of the copy: its .b128 register(s) to stand-ins; false on an error */
static bool stand_in(struct lower *L, int *r, bool dst, struct ptype t, struct wide_dst *out,
		     int *nout)
{
	int s = shadow(L, *r, t.bits == 64);

	if (s < 0)
		return false;
	if (dst)
		out[(*nout)++] = (struct wide_dst){ *r, s, t };
	else
		shadow_in(L, s, *r, t.bits == 64);
	*r = s;
	return true;
}

bool pl_b128_wide(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool cvt = !strcmp(in->op, "cvt"), st = !strcmp(in->op, "st"), any = false;
	bool vec = (!strcmp(in->op, "ld") || !strcmp(in->op, "ldu") || st) &&
		   (pl_has_mod(in, ".v2") || pl_has_mod(in, ".v4") || pl_has_mod(in, ".v8")) &&
		   !pl_has_mod(in, ".async"); /* st.async: ptxas's "Arguments mismatch" */
	struct wide_dst out[PTX_B128_SHADOWS];
	struct ptx_insn c;
	int nout = 0, errs = L->dg->errors; /* L->failed is the function's */

	if ((!cvt && !vec) || pl_has_mod(in, ".b128"))
		return false;
	for (int i = 0; i < in->nops; i++) {
		const struct ptx_operand *o = &in->ops[i];

		if (!names_q(L, o))
			continue;
		if (o->kind == PTX_O_MEM)
			return pl_lerr(L, "a .b128 register is not an address"), true;
		/* a scalar where the vector is, a vector in cvt: pl_b128_misuse's */
		if ((o->kind == PTX_O_REG) == vec)
			return false;
		any = true;
	}
	if (!any)
		return false;
	c = *in;
	L->nshadow = 0;
	for (int i = 0; i < c.nops && L->dg->errors == errs; i++) {
		struct ptx_operand *o = &c.ops[i];
		bool dst = cvt ? i == 0 : !st && o->kind == PTX_O_VEC;
		struct ptype t = pl_type_of(in, cvt && !dst ? 1 : 0);

		if (o->kind == PTX_O_REG && is_q(L, o)) {
			stand_in(L, &o->reg, dst, t, out, &nout);
			continue;
		}
		if (o->kind != PTX_O_VEC || !names_q(L, o))
			continue;
		for (int k = 0; k < o->nvec && L->dg->errors == errs; k++) {
			int r = o->vec[k];

			if (r < 0 || (st && vimm(L, r)))
				continue;
			if (pl_preg(L, r)->cls != PTX_R128) {
				pl_lerr(L, "a vector's elements are all .b128 registers or none is "
					"('%s' is not)", pl_preg(L, r)->name);
				break;
			}
			stand_in(L, &o->vec[k], dst, t, out, &nout);
		}
	}
	if (L->dg->errors == errs) {
		L->in = &c;
		pl_lower_one(L);
		pl_finish(L);
		L->in = in;
		for (int i = 0; i < nout && L->dg->errors == errs; i++)
			shadow_out(L, out[i].q, out[i].s, out[i].t);
	}
	L->nshadow = 0;
	return true;
}
