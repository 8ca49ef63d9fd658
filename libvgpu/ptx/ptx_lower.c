// SPDX-License-Identifier: MIT
/*
 * PTX instructions -> vGPU instructions over virtual registers.
 *
 * PTX register i is virtual register i (width 1 for 8..32-bit registers,
 * 2 for 64-bit ones, 0 for predicates); lowering adds temporaries.  A
 * 64-bit value is a register pair (low word first), as vGPU's global
 * addresses and mbarrier tokens are.  Shared addresses are the low word
 * (vGPU's 32-bit shared address); a generic shared address (cvta.shared)
 * carries GENERIC_SHARED_HI (ptx_lower.h) in its high word.  P6 is the
 * lowering's scratch predicate; P0..P5 are allocated.
 *
 * Anything not handled is an error naming the PTX line and construct.
 * This file: the shared machinery and the dispatch; names, types and
 * operands are in ptx_lower_operand.c; the families of instructions are
 * in ptx_lower_{alu,mem,sync,...}.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"
#include "vgpu_isa.h"

/* ---- errors ---- */

__attribute__((format(printf, 2, 3))) bool pl_lerr(struct lower *L,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptx_error(L->dg, L->in->line, L->in->col, "%s", msg);
	L->failed = true;
	return false;
}

/* The instruction as written (op and modifiers), for messages. */
const char *pl_spelled(const struct ptx_insn *in, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", in->op);

	for (int i = 0; i < in->nmods && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s", in->mods[i]);
	return buf;
}

bool pl_unsupported(struct lower *L, const char *why)
{
	char b[256];

	return pl_lerr(L, "unsupported PTX construct '%s'%s%s",
		    pl_spelled(L->in, b, sizeof(b)), why ? ": " : "", why ? why : "");
}

/* ---- virtual registers and instructions ---- */

int pl_new_vreg(struct lower *L, int width)
{
	struct ptx_code *c = L->c;

	if (c->nv == c->vcap) {
		int ncap = c->vcap ? 2 * c->vcap : 64;
		struct ptx_vreg *p = realloc(c->vregs, (size_t)ncap * sizeof(*p));

		if (!p)
			return pl_lerr(L, "out of memory"), 0;
		c->vregs = p;
		c->vcap = ncap;
	}
	c->vregs[c->nv].width = (uint8_t)width;
	c->vregs[c->nv].fixed = false;
	c->vregs[c->nv].phys = -1;
	return c->nv++;
}

bool pl_room(struct lower *L, int more)
{
	struct ptx_code *c = L->c;

	while (c->n + more > c->cap) {
		int ncap = c->cap ? 2 * c->cap : 256;
		struct ptx_vinsn *p = realloc(c->insns, (size_t)ncap * sizeof(*p));

		if (!p)
			return pl_lerr(L, "out of memory");
		c->insns = p;
		c->cap = ncap;
	}
	return true;
}

/* The instruction being built is complete: put its moves before it. */
void pl_finish(struct lower *L)
{
	struct ptx_code *c = L->c;
	int b = L->building, k = L->npending;

	L->building = -1;
	L->npending = 0;
	if (!k || !pl_room(L, k))
		return;
	if (b < 0) {
		memcpy(&c->insns[c->n], L->pending, (size_t)k * sizeof(L->pending[0]));
	} else {
		memmove(&c->insns[b + k], &c->insns[b], (size_t)(c->n - b) * sizeof(c->insns[0]));
		memcpy(&c->insns[b], L->pending, (size_t)k * sizeof(L->pending[0]));
	}
	c->n += k;
}

/*
 * Start the next instruction (finishing the one before).  The pointer is
 * valid until the next pl_emit() or pl_finish().
 */
struct ptx_vinsn *pl_emit(struct lower *L, const char *fmt, ...)
{
	static struct ptx_vinsn dummy;
	struct ptx_code *c = L->c;
	struct ptx_vinsn *v;
	va_list ap;

	pl_finish(L);
	if (!pl_room(L, 1)) {
		memset(&dummy, 0, sizeof(dummy));
		return &dummy;
	}
	L->building = c->n;
	v = &c->insns[c->n++];
	memset(v, 0, sizeof(*v));
	v->line = L->in->line;
	v->guard = L->in->guard;
	v->guard_not = L->in->guard_not;
	va_start(ap, fmt);
	vsnprintf(v->mnem, sizeof(v->mnem), fmt, ap);
	va_end(ap);
	return v;
}

struct ptx_vop *pl_add_op(struct ptx_vinsn *v)
{
	static struct ptx_vop dummy;

	if (v->nops == (int)(sizeof(v->ops) / sizeof(v->ops[0])))
		return &dummy;
	memset(&v->ops[v->nops], 0, sizeof(v->ops[0]));
	v->ops[v->nops].v = -1;
	return &v->ops[v->nops++];
}

/* Write all of @v (or its last part: @partial = false kills it). */
void pl_o_def(struct ptx_vinsn *vi, int v, int part, bool partial)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_REG;
	o->def = true;
	o->partial = partial;
	o->v = v;
	o->part = (uint8_t)part;
}

void pl_o_use(struct ptx_vinsn *vi, int v, int part)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_REG;
	o->v = v;
	o->part = (uint8_t)part;
}

void pl_o_pdef(struct ptx_vinsn *vi, int v)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_PRED;
	o->def = true;
	o->v = v;
}

void pl_o_puse(struct ptx_vinsn *vi, int v, bool neg)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_PRED;
	o->v = v;
	o->neg = neg;
}

__attribute__((format(printf, 2, 3))) void pl_o_text(struct ptx_vinsn *vi,
							 const char *fmt, ...)
{
	struct ptx_vop *o = pl_add_op(vi);
	va_list ap;

	o->kind = PTX_V_TEXT;
	va_start(ap, fmt);
	vsnprintf(o->text, sizeof(o->text), fmt, ap);
	va_end(ap);
}

/* [base + text]; base -1 is RZ */
__attribute__((format(printf, 3, 4))) void pl_o_mem(struct ptx_vinsn *vi, int base,
							const char *fmt, ...)
{
	struct ptx_vop *o = pl_add_op(vi);
	va_list ap;

	o->kind = PTX_V_MEM;
	o->v = base;
	va_start(ap, fmt);
	vsnprintf(o->text, sizeof(o->text), fmt, ap);
	va_end(ap);
}

/* ---- simple instructions ---- */

bool pl_want_ops(struct lower *L, int n)
{
	if (L->in->nops != n)
		return pl_lerr(L, "'%s' takes %d operands, not %d", L->in->op, n, L->in->nops);
	return true;
}

/* Two-source integer op on 32 bits (commutative ops may swap an immediate). */
void pl_alu32(struct lower *L, const char *mn, int d, int dpart, bool dpartial,
		  const struct ptx_operand *a, const struct ptx_operand *b, int part,
		  bool commutative)
{
	struct ptx_vinsn *v;

	if (a->kind == PTX_O_IMM && b->kind != PTX_O_IMM && commutative) {
		const struct ptx_operand *t = a;

		a = b;
		b = t;
	}
	v = pl_emit(L, "%s", mn);
	pl_o_def(v, d, dpart, dpartial);
	pl_use_src(L, v, a, part);
	pl_use_src_or_imm(L, v, b, part);
}

void pl_mov_reg(struct lower *L, int d, int dpart, bool partial, int s, int spart)
{
	struct ptx_vinsn *v = pl_emit(L, "MOV");

	pl_o_def(v, d, dpart, partial);
	if (s < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, s, spart);
}

const char *pl_int_mod(struct ptype t)
{
	return t.sign ? "S32" : "U32";
}

/* ---- per-instruction lowering ---- */

static const struct {
	const char *op;
	void (*fn)(struct lower *L);
} lowerers[] = {
	{ "mov", pl_mov },	  { "add", pl_arith },	  { "sub", pl_arith },
	{ "mul", pl_arith },	  { "mad", pl_mad },	  { "fma", pl_mad },
	{ "and", pl_logic },	  { "or", pl_logic },	  { "xor", pl_logic },
	{ "not", pl_not_neg_abs }, { "neg", pl_not_neg_abs }, { "abs", pl_not_neg_abs },
	{ "min", pl_minmax },	  { "max", pl_minmax },	  { "shl", pl_shift },
	{ "shr", pl_shift },	  { "setp", pl_setp },	  { "selp", pl_selp },
	{ "cvt", pl_cvt },	  { "cvta", pl_cvta },	  { "ld", pl_ldst },
	{ "st", pl_ldst },	  { "atom", pl_atom },	  { "red", pl_atom },
	{ "bra", pl_bra },	  { "ret", pl_exit },	  { "exit", pl_exit }, { "brx", pl_brx },
	{ "bar", pl_bar },	  { "barrier", pl_bar },	  { "membar", pl_fence }, { "branchtargets", pl_brx },
	{ "fence", pl_fence },	  { "mbarrier", pl_mbarrier }, { "cp", pl_cp },
	{ "mapa", pl_mapa },	  { "nanosleep", pl_nanosleep }, { "vote", pl_vote },
	{ "activemask", pl_activemask }, { "div", pl_divrem },	  { "rem", pl_divrem },
	{ "rcp", pl_mufu },	  { "sqrt", pl_mufu },	  { "rsqrt", pl_mufu },
	{ "ex2", pl_mufu },	  { "lg2", pl_mufu },	  { "sin", pl_mufu },
	{ "cos", pl_mufu },	  { "shfl", pl_shfl },	  { "bfe", pl_bitfield },
	{ "bfi", pl_bitfield },	  { "elect", pl_elect },  { "redux", pl_redux },
	{ "vprintf", pl_vprintf },  { "match", pl_match }, { "movmatrix", pl_movmatrix },
	{ "tanh", pl_tanh },	  { "assertfail", pl_assertfail },
	{ "clz", pl_bitcount },	  { "popc", pl_bitcount }, { "bfind", pl_bitcount },
	{ "setmaxnreg", pl_setmaxnreg }, { "trap", pl_trap },
	{ "testp", pl_testp },	  { "copysign", pl_copysign },
	{ "ldu", pl_ldst },	  { "prefetch", pl_prefetch }, { "prefetchu", pl_prefetch },
	{ "isspacep", pl_isspacep }, { "createpolicy", pl_createpolicy },
	{ "griddepcontrol", pl_griddepcontrol }, { "getctarank", pl_getctarank },
	{ "applypriority", pl_cache_line }, { "discard", pl_cache_line },
	{ "tensormap", pl_tensormap }, { "multimem", pl_multimem },
};

/*
 * d = a + b + @imm on register pairs (b may be -1: none), carries through
 * P6; d may not alias a or b.
 */
void pl_add64(struct lower *L, int d, int a, int b, uint32_t imm)
{
	int c = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (b >= 0) {
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 0, true);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
		v = pl_emit(L, "ISETP.GT.U32"); /* carry: a.lo > d.lo */
		pl_o_text(v, "P6");
		pl_o_use(v, a, 0);
		pl_o_use(v, d, 0);
		v = pl_emit(L, "SEL");
		pl_o_def(v, c, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
		pl_o_text(v, "!P6");
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, true);
		pl_o_use(v, a, 1);
		pl_o_use(v, c, 0);
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, false);
		pl_o_use(v, d, 1);
		pl_o_use(v, b, 1);
	} else {
		pl_mov_reg(L, d, 0, true, a, 0);
		pl_mov_reg(L, d, 1, false, a, 1);
	}
	if (imm) {
		int t = pl_new_vreg(L, 1);

		v = pl_emit(L, "IADD");
		pl_o_def(v, t, 0, false);
		pl_o_use(v, d, 0);
		pl_o_text(v, "0x%x", imm);
		v = pl_emit(L, "ISETP.GT.U32");
		pl_o_text(v, "P6");
		pl_o_use(v, d, 0);
		pl_o_use(v, t, 0);
		v = pl_emit(L, "SEL");
		pl_o_def(v, c, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
		pl_o_text(v, "!P6");
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, true);
		pl_o_use(v, d, 1);
		pl_o_use(v, c, 0);
		pl_mov_reg(L, d, 0, true, t, 0);
	}
}

/*
 * The frame of .local variables: offsets in the thread's slice of the
 * launch's local memory, which starts at lmem + (global linear thread
 * index) * frame.  The prologue puts each variable's address in a pair.
 */
static void local_prologue(struct lower *L)
{
	static const char *const cta[3] = { "SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z" };
	static const char *const ncta[3] = { "SR_NCTAID.X", "SR_NCTAID.Y", "SR_NCTAID.Z" };
	static const char *const ntid[3] = { "SR_NTID.X", "SR_NTID.Y", "SR_NTID.Z" };
	const struct ptx_func *f = L->f;
	int a = pl_new_vreg(L, 1), n = pl_new_vreg(L, 1), b = pl_new_vreg(L, 1);
	int base = pl_new_vreg(L, 2), fr = pl_new_vreg(L, 2);
	uint32_t off = 0, frame;
	struct ptx_vinsn *v;

	if (f->nlocal > PTX_MAX_LOCALS) {
		ptx_error(L->dg, f->line, 1, "unsupported construct: more than %d .local variables",
			  PTX_MAX_LOCALS);
		L->failed = true;
		return;
	}
	for (int i = 0; i < f->nlocal; i++) {
		uint32_t al = f->local[i].align ? f->local[i].align : 1;

		off = (off + al - 1) / al * al;
		off += f->local[i].size;
	}
	frame = (off + 15) & ~15u;
	if (L->c->spill_mode && !frame)
		frame = 16; /* the spill slots come after: regalloc sets the size */
	if (!frame || frame > VGPU_MAX_LOCAL_BYTES) {
		ptx_error(L->dg, f->line, 1,
			  "unsupported construct: %u bytes of .local (at most %u per thread)",
			  off, VGPU_MAX_LOCAL_BYTES);
		L->failed = true;
		return;
	}
	L->c->frame = frame;
	L->c->frame_locals = off;
	/* a = linear CTA index, n = threads per CTA, a = a * n + linear tid */
	v = pl_emit(L, "S2R");
	pl_o_def(v, a, 0, false);
	pl_o_text(v, "%s", cta[2]);
	for (int d = 1; d >= 0; d--) {
		v = pl_emit(L, "S2R");
		pl_o_def(v, n, 0, false);
		pl_o_text(v, "%s", ncta[d]);
		v = pl_emit(L, "S2R");
		pl_o_def(v, b, 0, false);
		pl_o_text(v, "%s", cta[d]);
		v = pl_emit(L, "IMAD");
		pl_o_def(v, a, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, n, 0);
		pl_o_use(v, b, 0);
	}
	v = pl_emit(L, "S2R");
	pl_o_def(v, n, 0, false);
	pl_o_text(v, "%s", ntid[0]);
	for (int d = 1; d < 3; d++) {
		v = pl_emit(L, "S2R");
		pl_o_def(v, b, 0, false);
		pl_o_text(v, "%s", ntid[d]);
		v = pl_emit(L, "IMUL");
		pl_o_def(v, n, 0, false);
		pl_o_use(v, n, 0);
		pl_o_use(v, b, 0);
	}
	v = pl_emit(L, "S2R");
	pl_o_def(v, b, 0, false);
	pl_o_text(v, "SR_TID");
	v = pl_emit(L, "IMAD");
	pl_o_def(v, a, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, n, 0);
	pl_o_use(v, b, 0);
	/* fr = a * frame (64 bits), base = lmem */
	v = pl_emit(L, "IMUL");
	pl_o_def(v, fr, 0, true);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", frame);
	v->ops[v->nops - 1].frame = true;
	v = pl_emit(L, "IMUL.HI.U32");
	pl_o_def(v, fr, 1, false);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", frame);
	v->ops[v->nops - 1].frame = true;
	v = pl_emit(L, "LDP.64");
	pl_o_def(v, base, 0, false);
	pl_o_mem(v, -1, "lmem");
	/* the spill slots' base before the .local addresses: a reload or a
	 * store of a spilled value may come at any later instruction */
	if (L->c->spill_mode) {
		L->c->spill_base = pl_new_vreg(L, 2);
		pl_add64(L, L->c->spill_base, base, fr, 0);
	}
	for (int i = 0; i < f->ninsns; i++)
		if (!strcmp(f->insns[i].op, "isspacep") && !L->frame_va1) {
			/* isspacep.local/.global test the window of the frame */
			L->frame_va1 = pl_new_vreg(L, 2) + 1;
			pl_add64(L, L->frame_va1 - 1, base, fr, 0);
		}
	off = 0;
	for (int i = 0; i < f->nlocal; i++) {
		uint32_t al = f->local[i].align ? f->local[i].align : 1;
		int va = pl_new_vreg(L, 2);

		off = (off + al - 1) / al * al;
		L->local_va[i] = va;
		pl_add64(L, va, base, fr, off);
		off += f->local[i].size;
	}
}

/* Does @f name module variable @g (an operand or an address)? */
static bool names_global(const struct ptx_func *f, const struct ptx_gvar *g)
{
	for (int i = 0; i < f->ninsns; i++)
		for (int k = 0; k < f->insns[i].nops; k++)
			if (!strcmp(f->insns[i].ops[k].sym, g->name))
				return true;
	return false;
}

/* The addresses of the module variables the function names. */
static void globals_prologue(struct lower *L)
{
	int base = -1;

	for (int g = 0; g < L->m->nglobals; g++) {
		if (!names_global(L->f, &L->m->globals[g]))
			continue;
		if (base < 0 && L->c->fn_mode) {
			base = pl_new_vreg(L, 2);
			pl_call_data_base(L, base, false); /* a called function has no gdata */
		} else if (base < 0) {
			struct ptx_vinsn *v = pl_emit(L, "LDP.64");

			base = pl_new_vreg(L, 2);
			pl_o_def(v, base, 0, false);
			pl_o_mem(v, -1, "gdata");
		}
		L->global_va[g] = pl_new_vreg(L, 2);
		pl_add64(L, L->global_va[g], base, -1, L->m->globals[g].offset);
	}
}

/* One instruction of the body (L->in), as the loop lowers it. */
void pl_lower_one(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	size_t k;

	if (pl_b128_misuse(L) || pl_call_hook(L) || pl_cmp_hook(L) || pl_int_hook(L) ||
	    pl_half_hook(L))
		return;
	if (!strcmp(in->op, "barrier") && pl_has_mod(in, ".cluster")) {
		pl_barrier_cluster(L);
		return;
	}
	for (k = 0; k < sizeof(lowerers) / sizeof(lowerers[0]); k++)
		if (!strcmp(lowerers[k].op, in->op))
			break;
	if (k == sizeof(lowerers) / sizeof(lowerers[0])) {
		char b[256];

		pl_lerr(L, "unsupported PTX instruction '%s'", pl_spelled(in, b, sizeof(b)));
		return;
	}
	if (in->nops && in->ops[0].has_p && strcmp(in->op, "elect") &&
	    strcmp(in->op, "shfl") && strcmp(in->op, "match")) {
		pl_unsupported(L, "a second predicate destination ('|')");
		return;
	}
	if (!strcmp(in->op, "barrier") && pl_has_mod(in, ".cta") == false &&
	    !pl_has_mod(in, ".sync") && !pl_has_mod(in, ".arrive") &&
	    !pl_has_mod(in, ".red")) {
		pl_unsupported(L, NULL);
		return;
	}
	{
		static const char *const narrow_ops[] = { "setp", "shr", "min", "max",
							  "div", "rem", "mul", "mad" };
		struct ptype t = pl_type_of(in, 0);

		L->narrow_bits = 0;
		for (size_t j = 0; j < sizeof(narrow_ops) / sizeof(narrow_ops[0]); j++)
			if (!strcmp(in->op, narrow_ops[j]) && t.bits && t.bits < 32 &&
			    !t.flt && !t.pred &&
			    (j < 6 || pl_has_mod(in, ".wide") || pl_has_mod(in, ".hi"))) {
				L->narrow_bits = t.bits;
				L->narrow_sign = t.sign;
			}
	}
	if (pl_ld_narrow(L))
		pl_ld_narrow128(L);
	else if (pl_has_mod(in, ".b128") && (!strcmp(in->op, "ld") || !strcmp(in->op, "ldu") ||
					     !strcmp(in->op, "st")))
		pl_ldst128(L);
	else if (pl_has_mod(in, ".b128") && (!strcmp(in->op, "atom") || !strcmp(in->op, "red")))
		pl_atom128(L);
	else if (pl_has_mod(in, ".b128") && !strcmp(in->op, "mov"))
		pl_mov128(L);
	else if (!pl_f64(L))
		lowerers[k].fn(L);
}

int ptx_lower(const struct ptx_module *m, const struct ptx_func *f,
	      struct ptx_diag *dg, struct ptx_code *code)
{
	struct lower L = { .m = m, .f = f, .dg = dg, .c = code, .building = -1 };
	int labels = 0;

	/* labels are K<index of the entry in the module>L<n> */
	for (int i = 0; i < m->nfuncs; i++)
		if (!m->funcs[i].decl && m->funcs[i].entry == f->entry &&
		    !strcmp(m->funcs[i].name, f->name))
			L.kernel = i;

	{
		bool spill = code->spill_mode, fn = code->fn_mode;

		memset(code, 0, sizeof(*code));
		code->spill_mode = spill;
		code->fn_mode = fn;
		code->spill_base = -1;
	}
	L.spv = L.ap = L.fsp = -1;
	L.call_off = malloc(((size_t)f->nregs + 1) * sizeof(*L.call_off));
	if (!L.call_off)
		return -ENOMEM;
	for (int r = 0; r < f->nregs; r++)
		L.call_off[r] = -1;
	for (int r = 0; r < f->nregs; r++)
		pl_new_vreg(&L, f->regs[r].cls == PTX_PRED ? 0 : f->regs[r].cls == PTX_R64 ? 2 :
				f->regs[r].cls == PTX_R128 ? 4 : 1);
	if (m->nglobals) {
		L.global_va = malloc((size_t)m->nglobals * sizeof(*L.global_va));
		if (!L.global_va)
			return -ENOMEM;
		for (int g = 0; g < m->nglobals; g++)
			L.global_va[g] = -1;
	}
	L.cdp_err = -1;
	for (int i = 0; i < f->ninsns && L.cdp_err < 0; i++)
		for (int k = 0; k < f->insns[i].nops; k++)
			if (f->insns[i].ops[k].kind == PTX_O_SYM &&
			    !strcmp(f->insns[i].ops[k].sym, PTX_CDP_ERR)) {
				L.cdp_err = pl_new_vreg(&L, 1);
				break;
			}
	if (f->nlocal || m->nglobals || code->spill_mode || L.cdp_err >= 0) {
		static const struct ptx_insn entry = { .guard = -1 };
		struct ptx_insn at = entry;

		at.line = f->line;
		L.in = &at;
		if (L.cdp_err >= 0) {
			struct ptx_vinsn *v = pl_emit(&L, "MOV");

			/* the device runtime's last error: none yet (ptx_cdp.c) */
			if (code->fn_mode)
				pl_unsupported(&L, "a device-runtime call in a called function");
			pl_o_def(v, L.cdp_err, 0, false);
			pl_o_text(v, "0x0");
		}
		if ((f->nlocal || code->spill_mode) && !code->fn_mode)
			local_prologue(&L);
		if (m->nglobals)
			globals_prologue(&L);
		pl_finish(&L);
		L.in = &entry;
	}
	{
		static const struct ptx_insn entry = { .guard = -1 };
		struct ptx_insn at = entry;

		at.line = f->line;
		L.in = &at;
		pl_call_setup(&L);
		pl_finish(&L);
		L.in = &entry;
	}
	for (int i = 0; i < f->ninsns && dg->errors < 50; i++) {
		const struct ptx_insn *in = &f->insns[i];

		L.in = in;
		if (in->label[0]) {
			struct ptx_vinsn *v = pl_emit(&L, "%s", "");

			v->guard = -1;
			snprintf(v->label, sizeof(v->label), "K%dL%d", L.kernel, labels++);
			pl_finish(&L);
			continue;
		}
		if (!pl_b128_wide(&L))
			pl_lower_one(&L);
		pl_finish(&L);
		L.narrow_bits = 0;
	}
	pl_finish(&L);
	free(L.global_va);
	free(L.call_off);
	return L.failed || dg->errors ? -EINVAL : 0;
}

void ptx_code_free(struct ptx_code *code)
{
	free(code->insns);
	free(code->vregs);
	memset(code, 0, sizeof(*code));
}
