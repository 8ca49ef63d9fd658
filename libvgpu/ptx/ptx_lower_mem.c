// SPDX-License-Identifier: MIT
/*
 * PTX lowering: address conversions (cvta), loads and stores in the
 * .param, .global, .shared and .local state spaces and through generic
 * addresses (atomics and reductions: ptx_lower_atom.c).
 *
 * Local memory is a slice of global memory per thread (the launch's
 * lmem buffer, see local_prologue()), so a .local address is a global
 * address and cvta to and from .local is a copy.  A generic address is
 * either shared (GENERIC_SHARED_HI in its high word, the offset in the
 * low word) or global; a generic access picks LDS/STS or LDG/STG at run
 * time on the high word.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"
#include "vgpu_priv.h"

void pl_cvta(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool to = pl_has_mod(in, ".to");
	bool cluster = pl_has_mod(in, ".shared::cluster");
	bool shared = pl_has_mod(in, ".shared") || pl_has_mod(in, ".shared::cta") || cluster;
	struct ptype t = pl_type_of(in, 0);
	int d;

	if (!pl_want_ops(L, 2))
		return;
	if (cluster && t.bits != 64) /* as ptxas: a 32-bit generic address is sm_90's 32-bit ABI */
		return (void)pl_lerr(L, "cvta of .shared::cluster takes .u64");
	if (!shared && !pl_has_mod(in, ".global") && !pl_has_mod(in, ".local") &&
	    !pl_has_mod(in, ".const") && !pl_has_mod(in, ".param"))
		return (void)pl_unsupported(L, "state spaces other than .global, .shared, .local "
					       "and .const");
	d = pl_dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	if (t.bits != 64 && !shared)
		return (void)pl_unsupported(L, "32-bit global or local addresses");
	if (t.bits != 64) { /* cvta.to.shared.u32: the offset */
		struct ptx_vinsn *v = pl_emit(L, "MOV");

		pl_o_def(v, d, 0, false);
		pl_use_src_or_imm(L, v, &in->ops[1], 0);
		return;
	}
	if (shared && !to) { /* a generic address of shared memory */
		struct ptx_vinsn *v = pl_emit(L, "MOV");

		pl_o_def(v, d, 0, true);
		pl_use_src(L, v, &in->ops[1], 0);
		v = pl_emit(L, "MOV");
		pl_o_def(v, d, 1, false);
		pl_o_text(v, "0x%x", GENERIC_SHARED_HI);
		return;
	}
	if (shared) { /* to.shared: the offset, high word zero */
		struct ptx_vinsn *v = pl_emit(L, "MOV");

		pl_o_def(v, d, 0, true);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_mov_reg(L, d, 1, false, -1, 0);
		return;
	}
	/* global (and local) and generic addresses are the same */
	if (pl_is_reg(L, &in->ops[1], PTX_R64) && in->ops[1].reg == d)
		return;
	{
		int t2 = pl_new_vreg(L, 2);

		for (int i = 0; i < 2; i++) {
			struct ptx_vinsn *v = pl_emit(L, "MOV");

			pl_o_def(v, t2, i, i == 0);
			pl_use_src(L, v, &in->ops[1], i);
		}
		pl_mov_reg(L, d, 0, true, t2, 0);
		pl_mov_reg(L, d, 1, false, t2, 1);
	}
}

/* ---- memory ---- */

enum space pl_space_of(const struct ptx_insn *in)
{
	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (!strcmp(m, ".param"))
			return SP_PARAM;
		if (!strcmp(m, ".global"))
			return SP_GLOBAL;
		if (!strncmp(m, ".shared", 7))
			return SP_SHARED;
		if (!strcmp(m, ".local"))
			return SP_LOCAL;
		if (!strcmp(m, ".const")) /* module data, read-only by PTX's rules */
			return SP_GLOBAL;
	}
	return SP_NONE;
}

static const char *msize(struct ptype t)
{
	switch (t.bits) {
	case 8: return t.sign ? "S8" : "U8";
	case 16: return t.sign ? "S16" : "U16";
	case 64: return "64";
	default: return "32";
	}
}

/*
 * Does register @r hold a kernel parameter's address: is every write of
 * it in the function a mov of a parameter's name (nvcc's `mov.b64 %rd,
 * name_param_N`, PTX ISA 5.1.6.1) or a mov of a register that holds one
 * (clang's `mov.b64 %rd2, name_param_0; mov.u64 %rd1, %rd2; ld.param.u64
 * %rd3, [%rd1]`, a struct parameter read through its address)?  @budget
 * bounds the registers visited (and ends a cycle of copies): past it, no.
 */
static bool param_addr_reg_budget(const struct lower *L, int r, int *budget)
{
	int defs = 0;

	if (--*budget < 0)
		return false;
	for (int i = 0; i < L->f->ninsns; i++) {
		const struct ptx_insn *in = &L->f->insns[i];
		const struct ptx_operand *d = &in->ops[0], *s = &in->ops[1];

		if (!in->nops)
			continue;
		if (d->kind == PTX_O_VEC)
			for (int k = 0; k < d->nvec; k++)
				if (d->vec[k] == r)
					return false;
		if (d->kind != PTX_O_REG || d->reg != r)
			continue;
		if (strcmp(in->op, "mov") || in->nops != 2)
			return false;
		if (s->kind == PTX_O_SYM && pl_param_index(L->f, s->sym) >= 0)
			defs++;
		else if (s->kind == PTX_O_REG && s->reg != r &&
			 pl_preg(L, s->reg)->cls == PTX_R64 &&
			 param_addr_reg_budget(L, s->reg, budget))
			defs++;
		else
			return false;
	}
	return defs > 0;
}

static bool param_addr_reg(const struct lower *L, int r)
{
	int budget = 16;

	return param_addr_reg_budget(L, r, &budget);
}

bool pl_address(struct lower *L, const struct ptx_operand *o, enum space *sp,
		    int *base, char *off, size_t len)
{
	*base = -1;
	if (o->kind != PTX_O_MEM)
		return pl_lerr(L, "expected a memory operand [address]");
	if (*sp == SP_PARAM && o->reg >= 0) {
		/*
		 * Through a register holding a parameter's address (mov of a
		 * parameter's name, PTX ISA 5.1.6.1): that is an address in
		 * the parameter buffer's global copy (pl_param_addr), so the
		 * load is a global one.
		 */
		if (pl_preg(L, o->reg)->cls != PTX_R64 || L->c->fn_mode ||
		    !param_addr_reg(L, o->reg))
			return pl_unsupported(L, "a parameter address other than [name+offset] "
					      "or a register set to a kernel parameter's address");
		*sp = SP_GLOBAL;
		*base = o->reg;
		snprintf(off, len, "%" PRId64, o->imm);
		return true;
	}
	if (*sp == SP_PARAM) {
		int p = o->sym[0] ? pl_param_index(L->f, o->sym) : -1;

		if (p < 0)
			return pl_unsupported(L, "a parameter address other than [name+offset]");
		snprintf(off, len, "arg%d+%" PRId64, p, o->imm);
		return true;
	}
	if (o->reg >= 0) {
		if (*sp != SP_SHARED && pl_preg(L, o->reg)->cls != PTX_R64)
			return pl_lerr(L, "a %s address must be a 64-bit register",
				       *sp == SP_NONE ? "generic" : *sp == SP_LOCAL ? "local" : "global");
		*base = o->reg;
		snprintf(off, len, "%" PRId64, o->imm);
		return true;
	}
	if (o->sym[0]) {
		int sh = pl_shared_index(L, o->sym), lo = pl_local_index(L, o->sym);

		if (sh >= 0 && (*sp == SP_SHARED || *sp == SP_NONE)) {
			*sp = SP_SHARED;
			snprintf(off, len, "sh%d+%" PRId64, sh, o->imm);
			return true;
		}
		if (lo >= 0 && (*sp == SP_LOCAL || *sp == SP_NONE)) {
			*sp = SP_LOCAL;
			*base = L->local_va[lo];
			snprintf(off, len, "%" PRId64, o->imm);
			return true;
		}
		if (pl_global_index(L, o->sym) >= 0 && (*sp == SP_GLOBAL || *sp == SP_NONE)) {
			*sp = SP_GLOBAL;
			*base = L->global_va[pl_global_index(L, o->sym)];
			snprintf(off, len, "%" PRId64, o->imm);
			return true;
		}
		return pl_unsupported(L, "addressing a variable outside its state space");
	}
	if (*sp == SP_SHARED) {
		snprintf(off, len, "%" PRId64, o->imm);
		return true;
	}
	return pl_unsupported(L, "an absolute global, local or generic address");
}

void pl_generic_split(struct lower *L, int base, int *sh, int *gl)
{
	const struct ptx_insn *in = L->in;

	for (int k = 0; k < 2; k++) {
		int p = pl_new_vreg(L, 0);
		struct ptx_vinsn *v;

		v = pl_emit(L, "ISETP.%s.U32%s", k ? "NE" : "EQ", in->guard >= 0 ? ".AND" : "");
		v->guard = -1;
		pl_o_pdef(v, p);
		pl_o_use(v, base, 1);
		pl_o_text(v, "0x%x", GENERIC_SHARED_HI);
		if (in->guard >= 0)
			pl_o_puse(v, in->guard, in->guard_not);
		*(k ? gl : sh) = p;
	}
}

static int vec_count(const struct ptx_insn *in)
{
	if (pl_has_mod(in, ".v2"))
		return 2;
	if (pl_has_mod(in, ".v4"))
		return 4;
	if (pl_has_mod(in, ".v8")) /* of 8- or 16-bit elements */
		return 8;
	return 1;
}

/* One element of a load or store: @mn at [@base+@eoff], under @guard. */
static void ldst_one(struct lower *L, const char *mn, struct ptype t, bool load,
		     const struct ptx_operand *x, int base, const char *eoff, int guard)
{
	struct ptx_vinsn *v = pl_emit(L, "%s.%s", mn, msize(t));

	if (guard >= 0) {
		v->guard = guard;
		v->guard_not = false;
	}
	if (load) {
		bool wide = t.bits < 64 && pl_is_reg(L, x, PTX_R64);
		int d = pl_dst_reg(L, x, t.bits == 64 || wide ? PTX_R64 : PTX_R32);

		if (d < 0)
			return;
		pl_o_def(v, d, 0, wide);
		pl_o_mem(v, base, "%s", eoff);
		if (wide) { /* a wider destination: extended as the type says */
			v = pl_emit(L, t.sign ? "SHR.S32" : "MOV");
			if (guard >= 0) {
				v->guard = guard;
				v->guard_not = false;
			}
			pl_o_def(v, d, 1, false);
			if (t.sign) {
				pl_o_use(v, d, 0);
				pl_o_text(v, "0x1f");
			} else {
				pl_o_text(v, "RZ");
			}
		}
		return;
	}
	pl_o_mem(v, base, "%s", eoff);
	if (t.bits == 64 && x->kind == PTX_O_IMM && x->imm) {
		int tmp = pl_new_vreg(L, 2);
		struct ptx_vinsn *m;

		/* the pair in registers before the store */
		m = pl_pre_move(L, "MOV");
		pl_o_def(m, tmp, 0, true);
		pl_o_text(m, "0x%" PRIx32, (uint32_t)x->imm);
		m = pl_pre_move(L, "MOV");
		pl_o_def(m, tmp, 1, false);
		pl_o_text(m, "0x%" PRIx32, (uint32_t)((uint64_t)x->imm >> 32));
		pl_o_use(v, tmp, 0);
	} else if (t.bits == 64 && x->kind == PTX_O_IMM) {
		pl_o_text(v, "RZ");
	} else if (t.bits == 64) {
		if (!pl_is_reg(L, x, PTX_R64))
			return (void)pl_lerr(L, "a 64-bit store needs a 64-bit register");
		pl_o_use(v, x->reg, 0);
	} else {
		pl_use_src(L, v, x, 0);
	}
}

/*
 * An 8- or 16-byte vector of global, shared or generic memory (v2 of
 * 32-bit elements; v2 of 64-bit, v4 of 32-bit ones) as one access, as the
 * GPU makes an aligned vector access: another SM never sees half of it
 * (and a shared one is one LDS/STS of 16 bytes, not four: it was four
 * until 2026-12-01, the cost of a TMA kernel's consumers reading tiles).
 * cub's decoupled look-back depends on that: a tile's status and value go
 * out in one st.relaxed.gpu.v2.u32 (a 4-byte value: ScanTileState's one
 * 64-bit word) or v2.u64 (an 8-byte one) and come back in one ld of the
 * same shape; element accesses let a CTA on another SM read a new status
 * beside an old value (an exclusive scan then added nothing for the tiles
 * before it).  The elements pass through a two- or four-register
 * temporary.  False (nothing emitted) when an element is not a register
 * of the element's width (an immediate, a wider destination): the caller
 * moves those one element at a time.
 */
static bool ldst_wide(struct lower *L, struct ptype t, bool load, const struct ptx_operand *val,
		      int nvec, int base, const char *off, enum space sp, int sh, int gl)
{
	int per = t.bits / 32, words = nvec * per, q, last = -1;
	int cls = per == 2 ? PTX_R64 : PTX_R32;

	for (int e = 0; e < nvec; e++) {
		if (val->vec[e] < 0) {
			if (!load)
				return false;
			continue;
		}
		if (pl_preg(L, val->vec[e])->cls != cls)
			return false;
		last = e;
	}
	if (last < 0)
		return false;
	q = pl_new_vreg(L, words);
	if (!load)
		for (int e = 0; e < nvec; e++)
			for (int k = 0; k < per; k++)
				pl_mov_reg(L, q, e * per + k, !(e == nvec - 1 && k == per - 1),
					   val->vec[e], k);
	for (int k = 0; k < 2; k++) {
		const char *mn = k ? (load ? "LDG" : "STG") : (load ? "LDS" : "STS");
		struct ptx_vinsn *v;

		if ((sp == SP_GLOBAL && !k) || (sp == SP_SHARED && k))
			continue;
		v = pl_emit(L, "%s.%d", mn, words * 32);
		if (sp == SP_NONE) {
			v->guard = k ? gl : sh;
			v->guard_not = false;
		}
		if (load)
			pl_o_def(v, q, 0, false);
		pl_o_mem(v, base, "%s", off);
		if (!load)
			pl_o_use(v, q, 0);
	}
	if (load)
		for (int e = 0; e <= last; e++)
			for (int k = 0; k < per && val->vec[e] >= 0; k++)
				pl_mov_reg(L, val->vec[e], k, k < per - 1, q, e * per + k);
	return true;
}

/*
 * The operands of a load, store or atomic without its .L2::cache_hint
 * policy (the last operand, a 64-bit register from createpolicy): a
 * hint, with no cache here to take it, has no effect.  -1: an error.
 */
int pl_hint_nops(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *h;

	if (!pl_has_mod(in, ".L2::cache_hint"))
		return in->nops;
	h = in->nops >= 2 ? &in->ops[in->nops - 1] : NULL; /* no operand: no index -1 */
	if (!h || !(pl_is_reg(L, h, PTX_R64) || h->kind == PTX_O_IMM))
		return pl_lerr(L, ".L2::cache_hint takes a 64-bit cache policy as the last "
			       "operand"), -1;
	return in->nops - 1;
}

void pl_ldst(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool load = strcmp(in->op, "st") != 0; /* ld, ldu */
	enum space sp = pl_space_of(in);
	struct ptype t = pl_type_of(in, 0);
	const struct ptx_operand *mem = &in->ops[load ? 1 : 0], *val = &in->ops[load ? 0 : 1];
	int nvec = vec_count(in), base, step, sh = -1, gl = -1;
	char off[PTX_NAME_MAX + 24];
	const char *mn;
	int nops;

	if (pl_has_mod(in, ".async"))
		return pl_async_store(L);
	nops = pl_hint_nops(L);
	if (nops < 0)
		return;
	if (nops != 2)
		return (void)pl_lerr(L, "'%s' takes 2 operands, not %d", in->op, nops);
	if (sp == SP_OTHER)
		return (void)pl_unsupported(L, "the .const state space");
	if (!load && sp == SP_PARAM)
		return (void)pl_unsupported(L, "st.param");
	if (!strcmp(in->op, "ldu") &&
	    ((sp != SP_GLOBAL && sp != SP_NONE) || pl_has_mod(in, ".const")))
		return (void)pl_lerr(L, "ldu reads global memory (.global or a generic address)");
	if (!t.bits || t.pred)
		return (void)pl_lerr(L, "missing type");
	if (!pl_address(L, mem, &sp, &base, off, sizeof(off)))
		return;
	if (nvec > 1 && (val->kind != PTX_O_VEC || val->nvec != nvec))
		return (void)pl_lerr(L, "expected a vector of %d registers", nvec);
	if (sp == SP_NONE)
		pl_generic_split(L, base, &sh, &gl);
	mn = sp == SP_PARAM ? "LDP" : sp == SP_SHARED ? (load ? "LDS" : "STS") :
			    (load ? "LDG" : "STG");
	step = t.bits / 8;
	if (nvec > 1 && t.bits >= 32 && (nvec * step == 8 || nvec * step == 16) &&
	    (sp == SP_GLOBAL || sp == SP_NONE || sp == SP_SHARED) &&
	    ldst_wide(L, t, load, val, nvec, base, off, sp, sh, gl))
		return;
	for (int e = 0; e < nvec; e++) {
		const struct ptx_operand *x = val;
		struct ptx_operand one;
		char eoff[PTX_NAME_MAX + 40];

		if (nvec > 1) {
			memset(&one, 0, sizeof(one));
			one.kind = val->vec[e] < 0 ? PTX_O_SINK : PTX_O_REG;
			one.reg = val->vec[e];
			x = &one;
			if (x->kind == PTX_O_SINK)
				continue;
		}
		snprintf(eoff, sizeof(eoff), "%s+%d", off, e * step);
		if (sp != SP_NONE) {
			ldst_one(L, mn, t, load, x, base, eoff, -1);
			continue;
		}
		ldst_one(L, load ? "LDS" : "STS", t, load, x, base, eoff, sh);
		ldst_one(L, load ? "LDG" : "STG", t, load, x, base, eoff, gl);
	}
}

/*
 * Load or store @bits (8, 32 or 64) of vreg @val (a pair for 64; a store
 * of -1 stores zero) at memory operand @mem + @add in space @sp: shared,
 * global or generic (decided at run time).  False after an error.
 */
bool pl_mem_vreg(struct lower *L, bool load, const struct ptx_operand *mem, enum space sp,
		 int add, int bits, int val)
{
	int base, sh = -1, gl = -1;
	char off[PTX_NAME_MAX + 24];

	if (!pl_address(L, mem, &sp, &base, off, sizeof(off)))
		return false;
	if (sp != SP_SHARED && sp != SP_GLOBAL && sp != SP_NONE)
		return pl_lerr(L, "'%s' takes a .global or .shared::cta address", L->in->op);
	if (sp == SP_NONE)
		pl_generic_split(L, base, &sh, &gl);
	for (int k = 0; k < (sp == SP_NONE ? 2 : 1); k++) {
		bool shared = sp == SP_SHARED || (sp == SP_NONE && !k);
		struct ptx_vinsn *v = pl_emit(L, "%s.%s", load ? (shared ? "LDS" : "LDG") :
						  (shared ? "STS" : "STG"),
					      bits == 8 ? "U8" : bits == 64 ? "64" : "32");

		if (sp == SP_NONE) {
			v->guard = k ? gl : sh;
			v->guard_not = false;
		}
		if (load)
			pl_o_def(v, val, 0, false);
		pl_o_mem(v, base, "%s+%d", off, add);
		if (!load && val < 0)
			pl_o_text(v, "RZ");
		else if (!load)
			pl_o_use(v, val, 0);
	}
	return !L->failed;
}

/* ---- device printf ---- */

/* The instruction that is @f's only write of register @r, or NULL. */
static const struct ptx_insn *only_def(const struct ptx_func *f, int r)
{
	const struct ptx_insn *def = NULL;

	for (int i = 0; i < f->ninsns; i++) {
		const struct ptx_insn *in = &f->insns[i];

		if (in->label[0] || !in->nops || in->ops[0].kind != PTX_O_REG || in->ops[0].reg != r)
			continue;
		if (def)
			return NULL;
		def = in;
	}
	return def;
}

/* The module variable whose address register @r holds (through movs and cvta), or -1. */
static int traced_global(const struct lower *L, int r)
{
	for (int step = 0; step < 16; step++) {
		const struct ptx_insn *d = only_def(L->f, r);

		if (!d || d->guard >= 0 || d->nops != 2 ||
		    (strcmp(d->op, "mov") && strcmp(d->op, "cvta")))
			return -1;
		if (d->ops[1].kind == PTX_O_REG) {
			r = d->ops[1].reg;
			continue;
		}
		if (d->ops[1].kind != PTX_O_SYM || d->ops[1].imm)
			return -1;
		for (int g = 0; g < L->m->nglobals; g++)
			if (!strcmp(L->m->globals[g].name, d->ops[1].sym))
				return g;
		return -1;
	}
	return -1;
}

/* STG.32 [@rec + @off], word @part of @s, guarded by @fits */
static void printf_store(struct lower *L, int rec, uint32_t off, int fits, int s, int part)
{
	struct ptx_vinsn *v = pl_emit(L, "STG.32");

	v->guard = fits;
	v->guard_not = false;
	pl_o_mem(v, rec, "%u", off);
	pl_o_use(v, s, part);
}

/*
 * Reserve a record of @nbytes argument bytes in the launch's printf
 * buffer (struct vgpu_printf_header) and write its first two words: the
 * format's offset @fmt in the module data and @nbytes.  *@rec gets a
 * pair with the record's address, *@fits a predicate: the record fits in
 * the buffer (and the instruction's guard holds); the caller's stores of
 * the arguments, at rec + 8.., are guarded by it.  @t: a scratch word.
 */
static void printf_record(struct lower *L, uint32_t fmt, uint32_t nbytes, int t, int *rec,
			  int *fits)
{
	uint32_t total = 8 + ((nbytes + 7) & ~7u);
	int pb = pl_new_vreg(L, 2), old = pl_new_vreg(L, 1), cap = pl_new_vreg(L, 1);
	int q = pl_new_vreg(L, 2);
	struct ptx_vinsn *v;

	*rec = pl_new_vreg(L, 2);
	*fits = pl_new_vreg(L, 0);
	if (L->c->fn_mode) { /* a called function: the kernel keeps it */
		pl_call_data_base(L, pb, true);
	} else {
		v = pl_emit(L, "LDP.64");
		pl_o_def(v, pb, 0, false);
		pl_o_mem(v, -1, "pbuf");
	}
	v = pl_emit(L, "MOV");
	pl_o_def(v, t, 0, false);
	pl_o_text(v, "0x%x", total);
	v = pl_emit(L, "ATOMG.ADD.U32");
	pl_o_def(v, old, 0, false);
	pl_o_mem(v, pb, "0");
	pl_o_use(v, t, 0);
	v = pl_emit(L, "LDG.32");
	pl_o_def(v, cap, 0, false);
	pl_o_mem(v, pb, "4");
	v = pl_emit(L, "IADD"); /* the record fits if old + total <= capacity */
	pl_o_def(v, t, 0, false);
	pl_o_use(v, old, 0);
	pl_o_text(v, "0x%x", total);
	/* unguarded, and with the guard: lanes outside it store nothing */
	v = pl_emit(L, L->in->guard >= 0 ? "ISETP.LE.U32.AND" : "ISETP.LE.U32");
	v->guard = -1;
	pl_o_pdef(v, *fits);
	pl_o_use(v, t, 0);
	pl_o_use(v, cap, 0);
	if (L->in->guard >= 0)
		pl_o_puse(v, L->in->guard, L->in->guard_not);
	pl_mov_reg(L, q, 0, true, old, 0);
	pl_mov_reg(L, q, 1, false, -1, 0);
	pl_add64(L, *rec, pb, q, sizeof(struct vgpu_printf_header));
	for (uint32_t w = 0; w < 2; w++) {
		v = pl_emit(L, "MOV");
		pl_o_def(v, t, 0, false);
		pl_o_text(v, "0x%x", w ? nbytes : fmt);
		printf_store(L, *rec, 4 * w, *fits, t, 0);
	}
}

/*
 * vprintf d, fmt, args (ptx_inline.c): append a record to the launch's
 * printf buffer: the format's offset in the module data, the argument
 * bytes its conversions take, and a copy of them from @args.  The format
 * must be a string constant of the module.
 */
void pl_vprintf(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int g = in->ops[1].kind == PTX_O_REG ? traced_global(L, in->ops[1].reg) : -1;
	const struct ptx_gvar *gv;
	uint32_t nbytes;
	int nargs, t, p, rec;
	struct ptx_vinsn *v;

	if (g < 0 || !L->m->globals[g].init)
		return (void)pl_unsupported(L, "printf with a format that is not a string constant");
	gv = &L->m->globals[g];
	if (vgpu_printf_layout((const char *)gv->init, gv->size, &nbytes, &nargs))
		return (void)pl_unsupported(L, "a printf conversion C cannot pass (%n)");
	if (nbytes && in->ops[2].kind != PTX_O_REG)
		return (void)pl_lerr(L, "printf arguments without an argument buffer");
	t = pl_new_vreg(L, 1);
	printf_record(L, gv->offset, nbytes, t, &rec, &p);
	for (uint32_t w = 0; w < nbytes / 4; w++) {
		v = pl_emit(L, "LDG.32");
		pl_o_def(v, t, 0, false);
		pl_o_mem(v, in->ops[2].reg, "%u", 4 * w);
		printf_store(L, rec, 8 + 4 * w, p, t, 0);
	}
	if (in->ops[0].kind == PTX_O_REG) {
		int d = pl_dst_reg(L, &in->ops[0], PTX_R32);

		if (d >= 0) {
			v = pl_emit(L, "MOV");
			pl_o_def(v, d, 0, false);
			pl_o_text(v, "0x%x", nargs);
		}
	}
}

/*
 * assertfail msg, file, line, function (ptx_inline.c: CUDA's failed
 * device assert): the thread prints CUDA's line through the printf
 * buffer (the format is the module variable PTX_ASSERT_FORMAT_VAR, which
 * ptx.c adds), "FILE:LINE: FUNCTION: block: [x,y,z], thread: [x,y,z]
 * Assertion `MSG` failed.", and the launch stops with the exception
 * ASSERT (TRAP.ASSERT).
 */
void pl_assertfail(struct lower *L)
{
	static const char *const idx[] = { "%ctaid.x", "%ctaid.y", "%ctaid.z",
					   "%tid.x",   "%tid.y",   "%tid.z" };
	const struct ptx_insn *in = L->in;
	int g = -1, t, p, rec;
	struct ptx_vinsn *v;

	for (int i = 0; i < L->m->nglobals; i++)
		if (!strcmp(L->m->globals[i].name, PTX_ASSERT_FORMAT_VAR))
			g = i;
	if (g < 0 || !pl_want_ops(L, 4))
		return (void)pl_lerr(L, "__assertfail without its message format");
	for (int k = 0; k < 4; k++)
		if (!pl_is_reg(L, &in->ops[k], k == 2 ? PTX_R32 : PTX_R64))
			return (void)pl_lerr(L, "__assertfail with an argument that is no %d-bit "
					     "parameter", k == 2 ? 32 : 64);
	t = pl_new_vreg(L, 1);
	/* the arguments as C passes them: file 0, line 8, function 16,
	 * block and thread 24..44, message 48 (vgpu_printf_layout) */
	printf_record(L, L->m->globals[g].offset, 56, t, &rec, &p);
	for (int w = 0; w < 2; w++) {
		printf_store(L, rec, 8 + 0 + 4 * w, p, in->ops[1].reg, w);
		printf_store(L, rec, 8 + 16 + 4 * w, p, in->ops[3].reg, w);
		printf_store(L, rec, 8 + 48 + 4 * w, p, in->ops[0].reg, w);
	}
	printf_store(L, rec, 8 + 8, p, in->ops[2].reg, 0);
	for (int k = 0; k < 6; k++) {
		v = pl_emit(L, "S2R");
		pl_o_def(v, t, 0, false);
		pl_o_text(v, "%s", pl_sreg_name(idx[k]));
		printf_store(L, rec, 8 + 24 + 4 * (uint32_t)k, p, t, 0);
	}
	v = pl_emit(L, "TRAP.ASSERT");
	v->exit = true;
}

/*
 * The operations on a cache line or a tensor map's cache vGPU does not
 * have, which take their operands and emit nothing (PTX ISA 9.7.9.15,
 * 9.7.9.16, 9.7.9.17): prefetch{.const,.param}.tensormap [a] (@level
 * ".tensormap"), applypriority{.global}.L2::evict_normal [a], 128 and
 * discard{.global}.L2 [a], 128 (@sized).  discard makes the line's bytes
 * indeterminate, which leaving them as they are satisfies.  The address
 * is checked as a load's would be.
 */
static void cache_op(struct lower *L, const char *level, bool sized)
{
	const struct ptx_insn *in = L->in;
	enum space sp = pl_space_of(in);
	int base;
	char off[PTX_NAME_MAX + 24];

	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];
		bool space = sized ? !strcmp(m, ".global")
				   : !strcmp(m, ".const") || !strcmp(m, ".param");

		if (strcmp(m, level) && !space)
			return (void)pl_lerr(L, "'%s' does not take %s", in->op, m);
	}
	if (!pl_has_mod(in, level))
		return (void)pl_lerr(L, "'%s' takes %s", in->op, level);
	if (!pl_want_ops(L, sized ? 2 : 1))
		return;
	if (in->ops[0].kind != PTX_O_MEM)
		return (void)pl_lerr(L, "'%s' takes an address", in->op);
	if (sized && (in->ops[1].kind != PTX_O_IMM || in->ops[1].imm != 128))
		return (void)pl_lerr(L, "'%s' takes the size 128", in->op);
	pl_address(L, &in->ops[0], &sp, &base, off, sizeof(off));
}

void pl_cache_line(struct lower *L)
{
	cache_op(L, !strcmp(L->in->op, "discard") ? ".L2" : ".L2::evict_normal", true);
}

/*
 * prefetch{.global,.local}.{L1,L2,L2::evict_last,L2::evict_normal} [a] and
 * prefetchu.L1 [a] (PTX ISA 9.7.9.15): vGPU has no caches, so nothing is
 * emitted; the address is still checked as a load's would be.
 */
void pl_prefetch(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool u = !strcmp(in->op, "prefetchu");
	enum space sp = pl_space_of(in);
	int base, level = 0;
	char off[PTX_NAME_MAX + 24];

	if (!u && pl_has_mod(in, ".tensormap")) /* prefetch{.const,.param}.tensormap [a] */
		return cache_op(L, ".tensormap", false);
	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (!strcmp(m, ".L1") || (!u && (!strcmp(m, ".L2") ||
						 !strcmp(m, ".L2::evict_last") ||
						 !strcmp(m, ".L2::evict_normal"))))
			level++;
		else if (u || (strcmp(m, ".global") && strcmp(m, ".local")))
			return (void)pl_unsupported(L, NULL);
	}
	if (level != 1)
		return (void)pl_lerr(L, "expected one cache level (.L1 or .L2)");
	if (sp == SP_LOCAL && !pl_has_mod(in, ".L1") && !pl_has_mod(in, ".L2"))
		return (void)pl_unsupported(L, NULL);
	if (!pl_want_ops(L, 1))
		return;
	pl_address(L, &in->ops[0], &sp, &base, off, sizeof(off));
}

/*
 * Predicate @p = whether generic address @lo:@hi (pairs' parts @lp/@hp)
 * lies in this thread's .local variables ([frame, frame + frame_locals)),
 * or (@outside) whether it does not: (a - frame) as 64 bits below the
 * size.
 */
static void in_frame(struct lower *L, int p, int a, bool outside)
{
	int f = L->frame_va1 - 1, lo = pl_new_vreg(L, 1), hi = pl_new_vreg(L, 1);
	int c = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	v = pl_emit(L, "ISUB");
	pl_o_def(v, lo, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, f, 0);
	v = pl_emit(L, "ISETP.LT.U32"); /* borrow */
	pl_o_text(v, "P6");
	pl_o_use(v, a, 0);
	pl_o_use(v, f, 0);
	v = pl_emit(L, "SEL");
	pl_o_def(v, c, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0x1");
	pl_o_text(v, "!P6");
	v = pl_emit(L, "ISUB");
	pl_o_def(v, hi, 0, false);
	pl_o_use(v, a, 1);
	pl_o_use(v, f, 1);
	v = pl_emit(L, "ISUB");
	pl_o_def(v, hi, 0, false);
	pl_o_use(v, hi, 0);
	pl_o_use(v, c, 0);
	v = pl_emit(L, "ISETP.%s.U32", outside ? "NE" : "EQ");
	pl_o_pdef(v, p);
	pl_o_use(v, hi, 0);
	pl_o_text(v, "0x0");
	v = pl_emit(L, "ISETP.%s.U32.%s", outside ? "GE" : "LT", outside ? "OR" : "AND");
	pl_o_pdef(v, p);
	pl_o_use(v, lo, 0);
	pl_o_text(v, "0x%x", L->c->frame_locals);
	pl_o_puse(v, p, false);
}

/*
 * isspacep.{global,shared,local,const,param} p, a (PTX ISA 9.7.9.19):
 * shared is GENERIC_SHARED_HI in the high word; local this thread's
 * .local variables (a local address is a global address here, see the
 * top of this file); global everything else.  Module constants and the
 * parameter buffer are global memory here too, so .const and .param are
 * always false (cvta.const/cvta.param addresses answer .global).
 * .shared::cluster is .shared too: a generic shared address holds a
 * shared::cluster address in its low word, the CTA's own window (bit 31
 * clear) or another CTA's (bit 31 set, from mapa), and cvta to and from
 * .shared::cluster is that of .shared.
 */
void pl_isspacep(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool shared = pl_has_mod(in, ".shared") || pl_has_mod(in, ".shared::cta") ||
		      pl_has_mod(in, ".shared::cluster");
	bool global = pl_has_mod(in, ".global"), local = pl_has_mod(in, ".local");
	struct ptx_vinsn *v;
	int d, a;

	if (!shared && !global && !local && !pl_has_mod(in, ".const") &&
	    !pl_has_mod(in, ".param"))
		return (void)pl_unsupported(L, NULL);
	if (!pl_want_ops(L, 2))
		return;
	d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	if (!pl_is_reg(L, &in->ops[1], PTX_R64))
		return (void)pl_lerr(L, "isspacep takes a 64-bit address register");
	a = in->ops[1].reg;
	if ((local || global) && L->c->fn_mode)
		return (void)pl_unsupported(L, "isspacep.local/.global in a called function");
	if (local && !L->frame_va1)
		local = false, shared = false; /* no .local variables: false */
	if (local) {
		in_frame(L, d, a, false);
		return;
	}
	if (global && L->frame_va1) {
		int t = pl_new_vreg(L, 0);

		in_frame(L, t, a, true);
		v = pl_emit(L, "ISETP.NE.U32.AND");
		pl_o_pdef(v, d);
		pl_o_use(v, a, 1);
		pl_o_text(v, "0x%x", GENERIC_SHARED_HI);
		pl_o_puse(v, t, false);
		return;
	}
	v = pl_emit(L, "ISETP.%s.U32", global ? "NE" : "EQ");
	pl_o_pdef(v, d);
	if (shared || global) {
		pl_o_use(v, a, 1);
		pl_o_text(v, "0x%x", GENERIC_SHARED_HI);
	} else { /* .const, .param, .local without a frame: 0 == 1 */
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
	}
}

/*
 * createpolicy (PTX ISA 9.7.9.18): .fractional (d{, fraction}), .range
 * (d, [a], primary-size, total-size) and .cvt.L2 (d, access-property)
 * make an opaque 64-bit L2 cache policy for .L2::cache_hint operands.
 * With no caches, every policy is 0.
 */
void pl_createpolicy(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool frac = pl_has_mod(in, ".fractional"), range = pl_has_mod(in, ".range");
	bool cvt = pl_has_mod(in, ".cvt");
	int d, want = frac ? (in->nops == 1 ? 1 : 2) : range ? 4 : 2;

	if (frac + range + cvt != 1 || !pl_has_mod(in, ".b64"))
		return (void)pl_unsupported(L, NULL);
	if (!pl_want_ops(L, want))
		return;
	for (int i = 1; i < in->nops; i++) {
		const struct ptx_operand *o = &in->ops[i];

		if (range && i == 1 ? o->kind != PTX_O_MEM :
		    o->kind != PTX_O_IMM && o->kind != PTX_O_REG)
			return (void)pl_lerr(L, "operand %d of createpolicy", i + 1);
	}
	if (frac && in->nops == 2 && in->ops[1].kind == PTX_O_REG)
		return (void)pl_lerr(L, "the fraction of createpolicy is a constant");
	d = pl_dst_reg(L, &in->ops[0], PTX_R64);
	if (d < 0)
		return;
	pl_mov_reg(L, d, 0, true, -1, 0);
	pl_mov_reg(L, d, 1, false, -1, 0);
}
