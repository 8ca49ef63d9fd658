// SPDX-License-Identifier: MIT
/*
 * PTX lowering: atom and red (PTX ISA 9.7.13.5, 9.7.13.6) on .global,
 * .shared and generic addresses, onto vGPU's ATOMG/ATOMS (every integer
 * operation on 32- and 64-bit integers, .add on f32, f64, f16, bf16,
 * f16x2 and bf16x2, and the vector forms' .min/.max of the half types)
 * and ATOMG.CAS/ATOMS.CAS (16, 32 and 64 bits).  inc and dec, which vGPU
 * has no operation for, are compare-and-swap loops.  A generic address
 * picks the shared or the global form at run time, as ld and st do
 * (ptx_lower_mem.c); a vector atomic's is a global one.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"

static void use_or_rz(struct ptx_vinsn *v, int r, int rp)
{
	if (r < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, r, rp);
}

/*
 * atom.inc.u32 / atom.dec.u32 (and red.): PTX ISA 9.7.13.5,
 *   inc: old >= b ? 0 : old + 1;  dec: old == 0 || old > b ? b : old - 1
 * as a compare-and-swap loop (vGPU's atomics have no such operation):
 * read the word, compute the new value, CAS it in; a lane whose CAS saw
 * another value goes round again with that value.  A guarded instruction
 * branches around the loop where its guard is false.  @d: the result
 * (-1 none), @b the bound's register (-1: zero), @base/@off the address
 * in space @sp (SP_NONE: generic, both forms under @sh/@gl).
 */
static void atom_incdec(struct lower *L, bool inc, enum space sp, int base,
			const char *off, int d, int b, int bp, int sh, int gl)
{
	const struct ptx_insn *in = L->in;
	int old = pl_new_vreg(L, 1), nw = pl_new_vreg(L, 1), prev = pl_new_vreg(L, 1);
	int again = pl_new_vreg(L, 0), loop = pl_new_label(L), skip = pl_new_label(L);
	struct ptx_vinsn *v;

	if (in->guard >= 0)
		pl_bra_label(L, skip, in->guard, !in->guard_not);
	for (int pass = 0; pass < 2; pass++) { /* the first read, then the CAS */
		if (pass) {
			pl_put_label(L, loop);
			v = pl_emit(L, "ISETP.%s.U32", inc ? "GE" : "GT");
			v->guard = -1;
			pl_o_text(v, "P6");
			pl_o_use(v, old, 0);
			use_or_rz(v, b, bp);
			if (!inc) {
				v = pl_emit(L, "ISETP.EQ.U32.OR");
				v->guard = -1;
				pl_o_text(v, "P6");
				pl_o_use(v, old, 0);
				pl_o_text(v, "0x0");
				pl_o_text(v, "P6");
			}
			v = pl_emit(L, "IADD");
			v->guard = -1;
			pl_o_def(v, nw, 0, false);
			pl_o_use(v, old, 0);
			pl_o_text(v, "%s", inc ? "0x1" : "0xffffffff");
			v = pl_emit(L, "SEL");
			v->guard = -1;
			pl_o_def(v, nw, 0, false);
			use_or_rz(v, inc ? -1 : b, bp);
			pl_o_use(v, nw, 0);
			pl_o_text(v, "P6");
		}
		for (int k = 0; k < 2; k++) {
			bool shared = sp == SP_NONE ? k == 0 : sp == SP_SHARED;

			if (sp != SP_NONE && k)
				break;
			v = pl_emit(L, "%s", pass ? (shared ? "ATOMS.CAS" : "ATOMG.CAS") :
					   (shared ? "LDS.32" : "LDG.32"));
			v->guard = sp == SP_NONE ? (shared ? sh : gl) : -1;
			v->guard_not = false;
			pl_o_def(v, pass ? prev : old, 0, false);
			pl_o_mem(v, base, "%s", off);
			if (pass) {
				pl_o_use(v, old, 0);
				pl_o_use(v, nw, 0);
			}
		}
	}
	v = pl_emit(L, "ISETP.NE.U32");
	v->guard = -1;
	pl_o_pdef(v, again);
	pl_o_use(v, prev, 0);
	pl_o_use(v, old, 0);
	v = pl_emit(L, "MOV");
	v->guard = -1;
	pl_o_def(v, old, 0, false);
	pl_o_use(v, prev, 0);
	pl_bra_label(L, loop, again, false);
	pl_put_label(L, skip);
	if (d >= 0)
		pl_mov_reg(L, d, 0, false, old, 0);
}

void pl_atom_incdec(struct lower *L, bool inc, bool shared, int base, int b)
{
	atom_incdec(L, inc, shared ? SP_SHARED : SP_GLOBAL, base, "0", -1, b, 0, -1, -1);
}

/* An atom/red type: its vGPU spelling (after the operation) and width. */
struct atype {
	const char *ptx, *vgpu;
	int bits;
	bool flt;
};

static const struct atype atypes[] = {
	{ ".u32", "U32", 32, false },	 { ".s32", "S32", 32, false },
	{ ".b32", "U32", 32, false },	 { ".u64", "U64", 64, false },
	{ ".s64", "S64", 64, false },	 { ".b64", "U64", 64, false },
	{ ".f32", "F32", 32, true },	 { ".f64", "F64", 64, true },
	{ ".f16", "F16", 16, true },	 { ".bf16", "BF16", 16, true },
	{ ".f16x2", "F16X2", 32, true }, { ".bf16x2", "BF16X2", 32, true },
	{ ".b16", "U16", 16, false },
};

static const struct atype *atom_type(const struct ptx_insn *in)
{
	for (int i = 0; i < in->nmods; i++)
		for (size_t k = 0; k < sizeof(atypes) / sizeof(atypes[0]); k++)
			if (!strcmp(in->mods[i], atypes[k].ptx))
				return &atypes[k];
	return NULL;
}

/* A data operand of @bits: a register (a pair for 64), or -1 for RZ. */
static int atom_src(struct lower *L, const struct ptx_operand *o, int bits, int *pp)
{
	*pp = 0;
	if (bits != 64)
		return pl_src_reg(L, o, 0, pp);
	if (o->kind == PTX_O_IMM && !o->imm)
		return -1;
	return pl_pair_src(L, o);
}

/* Element @e of vector operand @o as an operand of its own. */
static struct ptx_operand vec_elem(const struct ptx_operand *o, int e)
{
	struct ptx_operand one;

	memset(&one, 0, sizeof(one));
	one.kind = o->vec[e] < 0 ? PTX_O_SINK : PTX_O_REG;
	one.reg = o->vec[e];
	return one;
}

/*
 * atom.global.v2/.v4.f32.add and .v2-.v8 .add/.min/.max of the half types
 * (PTX ISA 9.7.13.5; .global or a generic address of global memory):
 * each element an atomic of its own on consecutive addresses, as PTX
 * defines them (the vector as a whole is not one atomic access).
 */
static void atom_vector(struct lower *L, bool red, enum space sp, const struct atype *t,
			const char *op)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *mem = &in->ops[red ? 0 : 1], *dv = &in->ops[0];
	const struct ptx_operand *sv = &in->ops[red ? 1 : 2];
	int n = pl_has_mod(in, ".v2") ? 2 : pl_has_mod(in, ".v4") ? 4 : 8, base;
	bool add = !strcmp(op, ".add"), f32 = !strcmp(t->ptx, ".f32");
	char off[PTX_NAME_MAX + 24];

	if (!t->flt || t->bits == 64 || (!add && strcmp(op, ".min") && strcmp(op, ".max")) ||
	    (!add && f32))
		return (void)pl_lerr(L, "vector atomics are .add of f32, or .add, .min or .max of "
				     "f16, bf16, f16x2 or bf16x2");
	if (sp != SP_GLOBAL && sp != SP_NONE)
		return (void)pl_lerr(L, "vector atomics are .global (or generic) only");
	if (pl_hint_nops(L) != (red ? 2 : 3))
		return (void)pl_lerr(L, "wrong number of operands");
	if ((!red && (dv->kind != PTX_O_VEC || dv->nvec != n)) ||
	    sv->kind != PTX_O_VEC || sv->nvec != n)
		return (void)pl_lerr(L, "a .v%d atomic takes vectors of %d registers", n, n);
	if (!pl_address(L, mem, &sp, &base, off, sizeof(off)))
		return;
	/* a generic address must be global memory's (PTX): used as one */
	if (sp != SP_GLOBAL && sp != SP_NONE)
		return (void)pl_lerr(L, "vector atomics are on global memory only");
	for (int e = 0; e < n; e++) {
		struct ptx_operand de = red ? *dv : vec_elem(dv, e), se = vec_elem(sv, e);
		int d = -1, b, bp;
		struct ptx_vinsn *v;

		if (!red && de.kind == PTX_O_REG && (d = pl_dst_reg(L, &de, PTX_R32)) < 0)
			return;
		if (se.kind != PTX_O_REG)
			return (void)pl_lerr(L, "a vector atomic's operand is a register");
		b = pl_src_reg(L, &se, 0, &bp);
		v = pl_emit(L, "ATOMG.%s.%s%s", add ? "ADD" : !strcmp(op, ".min") ? "MIN" : "MAX",
			    t->vgpu, f32 ? ".FTZ" : "");
		if (d < 0)
			pl_o_text(v, "RZ");
		else
			pl_o_def(v, d, 0, false);
		pl_o_mem(v, base, "%s+%d", off, e * t->bits / 8);
		use_or_rz(v, b, bp);
	}
}

void pl_atom(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool red = !strcmp(in->op, "red");
	enum space sp = pl_space_of(in);
	const struct atype *t = atom_type(in);
	const struct ptx_operand *mem = &in->ops[red ? 0 : 1];
	static const char *const ops[] = { ".add", ".min", ".max", ".exch", ".and",
					   ".or", ".xor", ".cas", ".inc", ".dec" };
	const char *op = NULL;
	char off[PTX_NAME_MAX + 24], tail[40];
	int base, d = -1, sh = -1, gl = -1, b, bp, c = -1, cp = 0;
	bool cas;

	if (red && pl_has_mod(in, ".async"))
		return pl_async_store(L);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (pl_has_mod(in, ops[i]))
			op = ops[i];
	if (!op)
		return (void)pl_unsupported(L, "atomic operation");
	if (!t)
		return (void)pl_lerr(L, "an atomic needs a type");
	cas = !strcmp(op, ".cas");
	if (sp != SP_GLOBAL && sp != SP_SHARED && sp != SP_NONE)
		return (void)pl_unsupported(L, "atomics other than .global, .shared and generic");
	if (pl_has_mod(in, ".v2") || pl_has_mod(in, ".v4") || pl_has_mod(in, ".v8"))
		return atom_vector(L, red, sp, t, op);
	if (t->flt && strcmp(op, ".add") && t->bits != 64 && strcmp(t->ptx, ".f32") &&
	    (!strcmp(op, ".min") || !strcmp(op, ".max")))
		return (void)pl_lerr(L, "atom%s of %s is a vector form (.v2, .v4, .v8) only", op,
				     t->ptx);
	if (t->flt && strcmp(op, ".add"))
		return (void)pl_lerr(L, "atom%s takes integer types only", op);
	if (t->bits == 16 && !t->flt && !cas)
		return (void)pl_lerr(L, "a 16-bit atomic other than .cas, .add.f16 or .add.bf16");
	if ((!strcmp(op, ".inc") || !strcmp(op, ".dec")) && strcmp(t->ptx, ".u32"))
		return (void)pl_lerr(L, "atom%s takes .u32 only", op);
	if (pl_hint_nops(L) != (red ? 2 : cas ? 4 : 3))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!pl_address(L, mem, &sp, &base, off, sizeof(off)))
		return;
	if (sp == SP_LOCAL)
		return (void)pl_lerr(L, "atomics on .local memory are not defined");
	if (!red && (d = pl_dst_reg(L, &in->ops[0], t->bits == 64 ? PTX_R64 : PTX_R32)) < 0 &&
	    in->ops[0].kind != PTX_O_SINK)
		return;
	if (cas) {
		snprintf(tail, sizeof(tail), ".CAS%s", t->bits == 64 ? ".64" :
						       t->bits == 16 ? ".U16" : "");
	} else {
		char up[8];
		int i;

		for (i = 0; op[i + 1] && i < 7; i++)
			up[i] = (char)(op[i + 1] - 'a' + 'A');
		up[i] = '\0';
		snprintf(tail, sizeof(tail), ".%s.%s", up, t->vgpu);
	}
	b = atom_src(L, &in->ops[red ? 1 : 2], t->bits, &bp);
	if (cas)
		c = atom_src(L, &in->ops[3], t->bits, &cp);
	if (sp == SP_NONE)
		pl_generic_split(L, base, &sh, &gl);
	if (!strcmp(op, ".inc") || !strcmp(op, ".dec"))
		return atom_incdec(L, !strcmp(op, ".inc"), sp, base, off, d, b, bp, sh, gl);
	for (int k = 0; k < 2; k++) {
		bool shared = sp == SP_NONE ? k == 0 : sp == SP_SHARED;
		struct ptx_vinsn *v;

		if (sp != SP_NONE && k)
			break;
		/* atom.add.f32 on global memory flushes subnormals, on shared
		 * memory it does not (an H200's results) */
		v = pl_emit(L, "%s%s%s", shared ? "ATOMS" : "ATOMG", tail,
			    !shared && !strcmp(t->ptx, ".f32") ? ".FTZ" : "");
		if (sp == SP_NONE) {
			v->guard = shared ? sh : gl;
			v->guard_not = false;
		}
		if (d < 0)
			pl_o_text(v, "RZ");
		else
			pl_o_def(v, d, 0, false);
		pl_o_mem(v, base, "%s", off);
		use_or_rz(v, b, bp);
		if (cas)
			use_or_rz(v, c, cp);
	}
}

/*
 * multimem.ld_reduce / .st / .red (PTX ISA 9.7.9.x, sm_90): operations on
 * a multimem address, which only a multicast object (cuMulticastCreate)
 * maps.  vGPU has none (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0, as
 * on an H200 outside an NVLink switch system), so every address a kernel
 * holds is a unicast one, which the PTX text leaves undefined; vGPU does
 * what such an H200 does (tests/cuda/real-gpu/multimem-h200-2026-11-30):
 * .st stores and .red reduces at the address like st/red.global, and
 * .ld_reduce faults (TRAP.MULTIMEM: a global fault, "not a multicast
 * address", CUDA_ERROR_ILLEGAL_ADDRESS).  The forms are checked as ptxas
 * 13.0 checks them for sm_90a.
 */
static bool mm_in(const char *m, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(m, *set))
			return true;
	return false;
}

void pl_multimem(struct lower *L)
{
	static const char *const ints[] = { ".b32", ".b64", ".u32", ".u64", ".s32", ".s64", NULL };
	static const char *const flts[] = { ".f16", ".f16x2", ".bf16", ".bf16x2", ".f32", ".f64",
					    NULL };
	static const char *const f8[] = { ".e5m2", ".e5m2x2", ".e5m2x4", ".e4m3", ".e4m3x2",
					  ".e4m3x4", NULL };
	static const char *const sems[] = { ".weak", ".relaxed", ".acquire", ".release", NULL };
	static const char *const scopes[] = { ".cta", ".cluster", ".gpu", ".sys", NULL };
	static const char *const rops[] = { ".add", ".min", ".max", ".and", ".or", ".xor", NULL };
	static const char *const vecs[] = { ".v2", ".v4", ".v8", NULL };
	const struct ptx_insn *in = L->in;
	const char *kind = in->nmods ? in->mods[0] : "", *type = NULL, *sem = NULL;
	const char *scope = NULL, *op = NULL;
	struct ptx_insn t = *in;
	bool ld = !strcmp(kind, ".ld_reduce"), st = !strcmp(kind, ".st");
	bool red = !strcmp(kind, ".red"), acc = false, half, flt;
	int vec = 1, bits;

	if (!ld && !st && !red)
		return (void)pl_lerr(L, "multimem%s: expected .ld_reduce, .st or .red", kind);
	for (int i = 1; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (mm_in(m, ints) || mm_in(m, flts))
			type = m;
		else if (mm_in(m, f8))
			return (void)pl_lerr(L, "multimem with %s needs sm_100a", m);
		else if (mm_in(m, sems))
			sem = m;
		else if (mm_in(m, scopes))
			scope = m;
		else if (!st && mm_in(m, rops))
			op = m;
		else if (mm_in(m, vecs))
			vec = m[2] == '2' ? 2 : m[2] == '4' ? 4 : 8;
		else if (ld && !strcmp(m, ".acc::f32"))
			acc = true;
		else if (ld && !strcmp(m, ".acc::f16"))
			return (void)pl_lerr(L, "multimem.ld_reduce.acc::f16 needs sm_100a");
		else if (!strncmp(m, ".shared", 7) || !strcmp(m, ".local") ||
			 !strcmp(m, ".const") || !strcmp(m, ".param"))
			return (void)pl_lerr(L, "multimem: the state space is .global, not %s", m);
		else if (strcmp(m, ".global"))
			return (void)pl_lerr(L, "multimem%s: unexpected modifier %s", kind, m);
	}
	if (!type)
		return (void)pl_lerr(L, "multimem%s needs a type", kind);
	if (!st && !op)
		return (void)pl_lerr(L, "multimem%s needs an operation", kind);
	if (sem && strcmp(sem, ".weak") && !scope)
		return (void)pl_lerr(L, "multimem%s%s needs a scope", kind, sem);
	if (sem && !strcmp(sem, ".weak") && (scope || red))
		return (void)pl_lerr(L, "multimem%s.weak %s", kind,
				     red ? "is not a form" : "takes no scope");
	if (sem && (ld ? !strcmp(sem, ".release") : !strcmp(sem, ".acquire")))
		return (void)pl_lerr(L, "multimem%s%s is not a form", kind, sem);
	flt = mm_in(type, flts);
	half = flt && (strstr(type, "16") != NULL);
	bits = !strcmp(type, ".f16") || !strcmp(type, ".bf16") ? 16 :
	       strstr(type, "64") ? 64 : 32;
	if (vec > 1 && !flt)
		return (void)pl_lerr(L, "multimem%s: a vector qualifier with %s", kind, type);
	if (flt && (vec * bits < 32 || vec * bits > 128 || (bits == 64 && vec > 1)))
		return (void)pl_lerr(L, "multimem%s: %s with .v%d is not 32, 64 or 128 bits", kind,
				     type, vec);
	if (acc && !half)
		return (void)pl_lerr(L, "multimem.ld_reduce.acc::f32 with %s", type);
	if (op && flt && strcmp(op, ".add") && !half)
		return (void)pl_lerr(L, "multimem%s%s of %s", kind, op, type);
	if (op && !flt &&
	    (!strcmp(op, ".add") ? !strcmp(type, ".s64") || type[1] == 'b' :
	     !strcmp(op, ".min") || !strcmp(op, ".max") ? type[1] == 'b' : type[1] != 'b'))
		return (void)pl_lerr(L, "multimem%s%s of %s", kind, op, type);
	if (ld) {
		enum space sp = SP_GLOBAL;
		char off[PTX_NAME_MAX + 24];
		struct ptx_vinsn *v;
		int base;

		if (in->nops != 2 || in->ops[0].kind == PTX_O_IMM || in->ops[1].kind != PTX_O_MEM)
			return (void)pl_lerr(L, "multimem.ld_reduce takes d, [a]");
		if (vec > 1 && (in->ops[0].kind != PTX_O_VEC || in->ops[0].nvec != vec))
			return (void)pl_lerr(L, "expected a vector of %d registers", vec);
		if (!pl_address(L, &in->ops[1], &sp, &base, off, sizeof(off)))
			return;
		v = pl_emit(L, "TRAP.MULTIMEM");
		pl_o_mem(v, base, "%s", off);
		return;
	}
	/* the same access on the unicast address: st / red of a type theirs */
	snprintf(t.op, sizeof(t.op), "%s", st ? "st" : "red");
	t.nmods = 0;
	for (int i = 1; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (!strcmp(m, ".weak"))
			continue;
		if (st && m == type)
			m = !flt ? type : bits == 16 ? ".b16" : bits == 64 ? ".b64" :
			    strcmp(type, ".f32") ? ".b32" : ".f32";
		snprintf(t.mods[t.nmods++], sizeof(t.mods[0]), "%s", m);
	}
	if (red && half && !strcmp(op, ".add"))
		snprintf(t.mods[t.nmods++], sizeof(t.mods[0]), ".noftz");
	L->in = &t;
	if (st)
		pl_ldst(L);
	else
		pl_atom(L);
	L->in = in;
}
