// SPDX-License-Identifier: MIT
/*
 * Real calls (docs/ptx.md "Calls"): the calls ptx_inline.c does not
 * inline (recursion, structures passed or returned by value, callees over
 * the inlining limit, .noinline, calls through a register) become vGPU
 * CALL/RET on a per-thread stack; alloca, stacksave and stackrestore
 * use the same stack, and mov.u64 %rd, f gives f's byte address.
 *
 * ABI.  The call block is R234..R237 (stack pointer R234:R235, limit
 * R236:R237) in every kernel that calls and every function; R238 is the
 * prologue's scratch; the register allocator keeps R234..R238 out of its
 * pool there.  A kernel's stack is a hidden .local variable "$stack" of
 * PTX_STACK_BYTES at the start of its local frame.  A caller keeps an
 * outgoing area at the bottom of its frame (at its stack pointer): the
 * arguments in order, each at its .param alignment (at least 4), then the
 * return value; st.param / ld.param on a call sequence's .param are
 * stores and loads there.  CALL pushes 16 bytes, so a callee finds its
 * parameter at [stack pointer on entry + 16 + offset] and writes its
 * return value there too.  The callee saves every register and predicate
 * it uses (P6, the lowering's scratch, excepted): its prologue allocates
 * its frame with SALLOC (outgoing area, .local variables, saved
 * registers; a multiple of 16) and stores them, each RET restores them
 * and releases the frame first.  So a call clobbers nothing of its caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"

static uint32_t align_up(uint32_t v, uint32_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

static uint32_t palign(uint32_t size, uint32_t align)
{
	uint32_t a = align ? align : (size >= 8 ? 8 : 4);

	return a < 4 ? 4 : a;
}

bool ptx_call_real(const struct ptx_func *callee, bool recursive)
{
	if (recursive || callee->noinline || callee->ninsns > PTX_INLINE_LIMIT)
		return true;
	if (callee->has_ret && callee->ret.size != 4 && callee->ret.size != 8)
		return true;
	for (int p = 0; p < callee->nparams; p++)
		if (callee->params[p].size != 4 && callee->params[p].size != 8)
			return true;
	return false;
}

/* Offsets of a function's own parameters (and return value) past the record. */
static uint32_t own_param_off(const struct ptx_func *f, int p)
{
	uint32_t off = 0;

	for (int i = 0; i <= p && i < f->nparams; i++) {
		off = align_up(off, palign(f->params[i].size, f->params[i].align));
		if (i == p)
			return off;
		off += f->params[i].size;
	}
	/* p == nparams: the return value */
	return align_up(off, palign(f->ret.size, f->ret.align));
}

static int func_index(const struct ptx_module *m, const char *name)
{
	for (int i = 0; i < m->nfuncs; i++)
		if (!m->funcs[i].entry && !m->funcs[i].decl && !strcmp(m->funcs[i].name, name))
			return i;
	return -1;
}

/* MOV Rphys, vreg.part (or the reverse): the call block as text. */
static void mov_phys(struct lower *L, int phys, int v, int part, bool to_phys)
{
	struct ptx_vinsn *x = pl_emit(L, "MOV");

	if (to_phys) {
		pl_o_text(x, "R%d", phys);
		pl_o_use(x, v, part);
	} else {
		pl_o_def(x, v, part, part == 0);
		pl_o_text(x, "R%d", phys);
	}
}

/* d = a + @imm_text (64 bits; the text may be the frame placeholder) */
static void add64_text(struct lower *L, int d, int a, const char *imm)
{
	int c = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "IADD");

	pl_o_def(v, d, 0, true);
	pl_o_use(v, a, 0);
	pl_o_text(v, "%s", imm);
	v = pl_emit(L, "ISETP.GT.U32");
	pl_o_text(v, "P6");
	pl_o_use(v, a, 0);
	pl_o_use(v, d, 0);
	v = pl_emit(L, "SEL");
	pl_o_def(v, c, 0, false);
	pl_o_text(v, "RZ");
	pl_o_text(v, "0x1");
	pl_o_text(v, "!P6");
	v = pl_emit(L, "IADD");
	pl_o_def(v, d, 1, false);
	pl_o_use(v, a, 1);
	pl_o_use(v, c, 0);
}

bool pl_call_setup(struct lower *L)
{
	const struct ptx_func *f = L->f;
	struct ptx_code *c = L->c;
	uint32_t out = 0;
	bool any = false;

	for (int i = 0; i < f->ninsns; i++) {
		const struct ptx_insn *in = &f->insns[i];
		uint32_t off = 0;
		int first = in->call_ret ? 2 : 1;

		if (ptx_uses_stack(in))
			any = true;
		L->dyn_stack |= !strcmp(in->op, "alloca") || !strcmp(in->op, "stackrestore");
		if (strcmp(in->op, "call"))
			continue;
		for (int k = first; k <= in->nops; k++) {
			/* the arguments, then the return value */
			int r = k < in->nops ? in->ops[k].reg : in->call_ret ? in->ops[0].reg : -1;
			const struct ptx_reg *pr;

			if (r < 0)
				continue;
			pr = &f->regs[r];
			off = align_up(off, palign(pr->psize, pr->palign));
			L->call_off[r] = (int)off;
			off += pr->psize;
		}
		out = out > off ? out : off;
	}
	c->calls = any || c->fn_mode;
	L->outgoing = align_up(out, 16);
	if (!c->calls)
		return true;
	if (!c->fn_mode) {
		/* the kernel: its stack is the .local "$stack" */
		int s = pl_local_index(L, "$stack"), top = pl_new_vreg(L, 2), lim;
		struct ptx_vinsn *v;

		if (s < 0)
			return pl_lerr(L, "internal: no stack for calls");
		lim = L->local_va[s];
		if (L->m->nglobals) {
			/* the module data's address for called functions: below
			 * the limit, at the stack's first 16 bytes; then the
			 * printf buffer's, for their printf and assert */
			for (int k = 0; k < 1 + ptx_module_prints(L->m); k++) {
				int base = pl_new_vreg(L, 2);

				v = pl_emit(L, "LDP.64");
				pl_o_def(v, base, 0, false);
				pl_o_mem(v, -1, k ? "pbuf" : "gdata");
				v = pl_emit(L, "STG.64");
				pl_o_mem(v, lim, "0x%x", 8 * k);
				pl_o_use(v, base, 0);
			}
			lim = pl_new_vreg(L, 2);
			pl_add64(L, lim, L->local_va[s], -1, 16);
		}
		mov_phys(L, 236, lim, 0, true);
		mov_phys(L, 237, lim, 1, true);
		pl_add64(L, top, L->local_va[s], -1, PTX_STACK_BYTES);
		mov_phys(L, 234, top, 0, true);
		mov_phys(L, 235, top, 1, true);
		if (L->outgoing) {
			v = pl_emit(L, "SALLOC");
			pl_o_text(v, "R234");
			pl_o_text(v, "0x%x", L->outgoing);
		}
	}
	L->spv = pl_new_vreg(L, 2);
	mov_phys(L, 234, L->spv, 0, false);
	mov_phys(L, 235, L->spv, 1, false);
	if (L->dyn_stack && c->fn_mode) {
		L->fsp = pl_new_vreg(L, 2);
		mov_phys(L, 234, L->fsp, 0, false);
		mov_phys(L, 235, L->fsp, 1, false);
	}
	if (c->fn_mode) {
		uint32_t off = L->outgoing;

		L->ap = pl_new_vreg(L, 2);
		add64_text(L, L->ap, L->spv, PTX_FRAME16);
		if (f->nlocal > PTX_MAX_LOCALS)
			return pl_unsupported(L, "more than 64 .local variables");
		for (int i = 0; i < f->nlocal; i++) {
			off = align_up(off, f->local[i].align ? f->local[i].align : 1);
			L->local_va[i] = pl_new_vreg(L, 2);
			pl_add64(L, L->local_va[i], L->spv, -1, off);
			off += f->local[i].size;
		}
		c->frame_locals = align_up(off, 4);
		if (c->spill_mode) {
			/* the spill slots follow the .local variables in the frame
			 * (ptx_regalloc.c), from the frame's bottom: spv before any
			 * alloca moves it */
			c->spill_base = pl_new_vreg(L, 2);
			pl_mov_reg(L, c->spill_base, 0, true, L->spv, 0);
			pl_mov_reg(L, c->spill_base, 1, false, L->spv, 1);
		}
	}
	return true;
}

/* d = the module data's address, in a called function (the kernel put it
 * at [stack limit - 16]), or with @printf the printf buffer's ([limit - 8]) */
void pl_call_data_base(struct lower *L, int d, bool printf)
{
	int lim = pl_new_vreg(L, 2);
	struct ptx_vinsn *v;

	mov_phys(L, 236, lim, 0, false);
	mov_phys(L, 237, lim, 1, false);
	v = pl_emit(L, "LDG.64");
	pl_o_def(v, d, 0, false);
	pl_o_mem(v, lim, printf ? "-0x8" : "-0x10");
}

/* One scalar (or vector element) ld/st at [@base + @off] of type @t. */
static void mem_one(struct lower *L, bool load, struct ptype t, const struct ptx_operand *x,
		    int base, uint32_t off)
{
	const char *sz = t.bits == 8 ? (t.sign ? "S8" : "U8") :
			 t.bits == 16 ? (t.sign ? "S16" : "U16") : t.bits == 64 ? "64" : "32";
	struct ptx_vinsn *v = pl_emit(L, "%s.%s", load ? "LDG" : "STG", sz);

	if (load) {
		bool wide = t.bits < 64 && pl_is_reg(L, x, PTX_R64);
		int d = pl_dst_reg(L, x, t.bits == 64 || wide ? PTX_R64 : PTX_R32);

		if (d < 0)
			return;
		pl_o_def(v, d, 0, wide);
		pl_o_mem(v, base, "0x%x", off);
		if (wide)
			pl_mov_reg(L, d, 1, false, -1, 0);
		return;
	}
	pl_o_mem(v, base, "0x%x", off);
	if (t.bits == 64 && x->kind == PTX_O_REG) {
		pl_o_use(v, x->reg, 0);
	} else if (t.bits == 64) {
		int tmp = pl_new_vreg(L, 2);
		char b[32];

		for (int part = 0; part < 2; part++) {
			struct ptx_vinsn *m = pl_pre_move(L, "MOV");

			pl_imm_text(b, sizeof(b), x->imm, part);
			pl_o_def(m, tmp, part, part == 0);
			pl_o_text(m, "%s", b);
		}
		pl_o_use(v, tmp, 0);
	} else {
		pl_use_src(L, v, x, 0);
	}
}

/*
 * ld/st.param.b128 of a real call's parameter or result (PTX_R128 @x, or
 * a literal stored): its four words, the stack being the thread's own.
 */
static void param_b128(struct lower *L, bool load, const struct ptx_operand *x, int base,
		       uint32_t off)
{
	int q = pl_is_reg(L, x, PTX_R128) ? x->reg : -1;

	if (q < 0 && (load || x->kind != PTX_O_IMM))
		return (void)pl_lerr(L, "%s.param.b128 takes a .b128 register", load ? "ld" : "st");
	if (q < 0) { /* a literal: 64 bits, zero-extended */
		q = pl_new_vreg(L, 4);
		for (int k = 0; k < 4; k++) {
			struct ptx_vinsn *m = pl_emit(L, "MOV");

			pl_o_def(m, q, k, k < 3);
			pl_o_text(m, "0x%x", k < 2 ? (uint32_t)((uint64_t)x->imm >> (32 * k)) : 0u);
		}
	}
	for (int k = 0; k < 4; k++) {
		struct ptx_vinsn *v = pl_emit(L, "%s", load ? "LDG.32" : "STG.32");

		if (load)
			pl_o_def(v, q, k, k < 3);
		pl_o_mem(v, base, "0x%x", off + 4u * (uint32_t)k);
		if (!load)
			pl_o_use(v, q, k);
	}
}

/* ld/st .param on a call sequence's .param or the function's own. */
static bool param_access(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool load = !strcmp(in->op, "ld"), store = !strcmp(in->op, "st");
	const struct ptx_operand *mem, *val;
	int base, n = pl_has_mod(in, ".v4") ? 4 : pl_has_mod(in, ".v2") ? 2 : 1;
	uint32_t off;
	struct ptype t;

	if ((!load && !store) || !pl_has_mod(in, ".param") || in->nops != 2)
		return false;
	mem = &in->ops[load ? 1 : 0];
	val = &in->ops[load ? 0 : 1];
	if (mem->kind != PTX_O_MEM)
		return false;
	if (mem->reg >= 0 && L->f->regs[mem->reg].is_param) {
		if (L->call_off[mem->reg] < 0)
			return pl_lerr(L, "a call parameter not passed to a call"), true;
		base = L->spv;
		off = (uint32_t)L->call_off[mem->reg];
	} else if (L->c->fn_mode && L->f->has_ret && !strcmp(mem->sym, L->f->ret.name)) {
		base = L->ap;
		off = own_param_off(L->f, L->f->nparams);
	} else if (L->c->fn_mode && pl_param_index(L->f, mem->sym) >= 0) {
		base = L->ap;
		off = own_param_off(L->f, pl_param_index(L->f, mem->sym));
	} else {
		return false;
	}
	if (base < 0)
		return pl_lerr(L, "internal: no stack pointer"), true;
	off += (uint32_t)mem->imm;
	if (pl_has_mod(in, ".b128")) {
		if (n > 1)
			return pl_lerr(L, "a vector of .b128 exceeds 128 bits"), true;
		param_b128(L, load, val, base, off);
		return true;
	}
	t = pl_type_of(in, 0);
	if (n == 1) {
		mem_one(L, load, t, val, base, off);
		return true;
	}
	if (val->kind != PTX_O_VEC || val->nvec != n)
		return pl_lerr(L, "expected a vector of %d", n), true;
	for (int e = 0; e < n; e++) {
		struct ptx_operand x = *val;

		if (val->vec[e] < 0)
			continue;
		x.kind = PTX_O_REG;
		x.reg = val->vec[e];
		mem_one(L, load, t, &x, base, off + (uint32_t)e * (uint32_t)(t.bits / 8));
	}
	return true;
}

static void emit_ret(struct lower *L)
{
	struct ptx_vinsn *v;
	char skip[PTX_NAME_MAX + 8];
	static int n;

	if (L->in->guard >= 0) { /* @p ret: around it, so the epilogue is whole */
		snprintf(skip, sizeof(skip), "K%dR%d", L->kernel, n++);
		v = pl_emit(L, "BRA");
		v->guard = L->in->guard;
		v->guard_not = !L->in->guard_not;
		v->branch = true;
		pl_o_text(v, "%s", skip);
	}
	if (L->fsp >= 0) { /* alloca moved the stack pointer: back to the frame */
		mov_phys(L, 234, L->fsp, 0, true);
		mov_phys(L, 235, L->fsp, 1, true);
	}
	v = pl_emit(L, "RET");
	v->guard = -1;
	v->exit = true;
	pl_o_text(v, "R234");
	if (L->in->guard >= 0) {
		v = pl_emit(L, "%s", "");
		v->guard = -1;
		snprintf(v->label, sizeof(v->label), "%s", skip);
	}
}

bool ptx_module_prints(const struct ptx_module *m)
{
	for (int i = 0; i < m->nfuncs; i++)
		if (m->funcs[i].decl && (!strcmp(m->funcs[i].name, "vprintf") ||
					 !strcmp(m->funcs[i].name, "__assertfail")))
			return true;
	return false;
}

bool ptx_uses_stack(const struct ptx_insn *in)
{
	return !strcmp(in->op, "call") || !strcmp(in->op, "alloca") ||
	       !strcmp(in->op, "stacksave") || !strcmp(in->op, "stackrestore");
}

/* spv = R234:R235 again (after alloca or stackrestore moved it) */
static void sp_changed(struct lower *L)
{
	mov_phys(L, 234, L->spv, 0, false);
	mov_phys(L, 235, L->spv, 1, false);
}

/*
 * alloca.u64 ptr, size[, align]: SALLOC the size rounded up to 16; the
 * block sits above the outgoing area, which moves down with the stack
 * pointer (the old one's room is part of the block).  That place is
 * 16-aligned; a larger alignment (any power of two ptxas takes, up to the
 * stack's size) takes align - 16 more bytes and rounds the pointer up
 * within them.
 */
static void lower_alloca(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int64_t size = 0, align = 8, extra;
	int d, n = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (!pl_has_mod(in, ".u64") || (in->nops != 2 && in->nops != 3))
		return (void)pl_unsupported(L, "alloca needs .u64 and 2 or 3 operands");
	if (in->nops == 3 && (!pl_const_of(L, &in->ops[2], &align) || align < 1 ||
			      (align & (align - 1))))
		return (void)pl_lerr(L, "alloca's alignment is a power of two");
	if (align > (int64_t)PTX_STACK_BYTES)
		return (void)pl_lerr(L, "alloca aligned to %lld bytes (the stack has %u)",
				     (long long)align, PTX_STACK_BYTES);
	extra = align > 16 ? align - 16 : 0;
	d = pl_dst_reg(L, &in->ops[0], PTX_R64);
	if (d < 0)
		return;
	if (pl_const_of(L, &in->ops[1], &size)) {
		if (size < 0 || size + extra > (int64_t)PTX_STACK_BYTES)
			return (void)pl_lerr(L, "alloca of %lld bytes (the stack has %u)",
					     (long long)size, PTX_STACK_BYTES);
		v = pl_emit(L, "SALLOC");
		pl_o_text(v, "R234");
		pl_o_text(v, "0x%x", ((uint32_t)(size + 15) & ~15u) + (uint32_t)extra);
	} else {
		/* n = ((size + 15) & ~15) + extra; past 2^31 overflows the stack */
		v = pl_emit(L, "IADD");
		pl_o_def(v, n, 0, false);
		pl_use_src(L, v, &in->ops[1], 0);
		pl_o_text(v, "0xf");
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, n, 0, false);
		pl_o_use(v, n, 0);
		pl_o_text(v, "0x7ffffff0");
		if (extra) {
			v = pl_emit(L, "IADD");
			pl_o_def(v, n, 0, false);
			pl_o_use(v, n, 0);
			pl_o_text(v, "0x%x", (uint32_t)extra);
		}
		v = pl_emit(L, "SALLOC");
		pl_o_text(v, "R234");
		pl_o_use(v, n, 0);
	}
	sp_changed(L);
	pl_add64(L, d, L->spv, -1, L->outgoing + (extra ? (uint32_t)align - 1 : 0));
	if (extra) { /* the low word: the alignment is at most the stack's */
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, d, 0, true);
		pl_o_use(v, d, 0);
		pl_o_text(v, "0x%x", ~((uint32_t)align - 1));
	}
}

/* stacksave.u64 d / stackrestore.u64 a: the stack pointer as a value */
static void lower_stack_value(struct lower *L, bool save)
{
	const struct ptx_insn *in = L->in;

	if (!pl_has_mod(in, ".u64") || in->nops != 1 || !pl_is_reg(L, &in->ops[0], PTX_R64))
		return (void)pl_unsupported(L, "a 64-bit register operand expected");
	if (save) {
		int d = pl_dst_reg(L, &in->ops[0], PTX_R64);

		if (d >= 0) {
			pl_mov_reg(L, d, 0, true, L->spv, 0);
			pl_mov_reg(L, d, 1, false, L->spv, 1);
		}
		return;
	}
	mov_phys(L, 234, in->ops[0].reg, 0, true);
	mov_phys(L, 235, in->ops[0].reg, 1, true);
	sp_changed(L);
}

/* mov.u64 %rd, f: the function's byte address (CALL Ra, Rb calls it) */
static bool func_address(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int k, d;
	struct ptx_vinsn *v;

	if (strcmp(in->op, "mov") || in->nops != 2 || in->ops[1].kind != PTX_O_SYM ||
	    (k = func_index(L->m, in->ops[1].sym)) < 0)
		return false;
	d = pl_dst_reg(L, &in->ops[0], PTX_R64);
	if (d < 0)
		return true;
	v = pl_emit(L, "MOV");
	pl_o_def(v, d, 0, true);
	pl_o_text(v, "F%d", k);
	v = pl_emit(L, "MOV");
	pl_o_def(v, d, 1, false);
	pl_o_text(v, "0x0");
	return true;
}

bool pl_call_hook(struct lower *L)
{
	const struct ptx_insn *in = L->in;

	if (!strcmp(in->op, "call")) {
		const struct ptx_operand *fo = &in->ops[in->call_ret ? 1 : 0];
		int k = fo->kind == PTX_O_SYM ? func_index(L->m, fo->sym) : -1;
		struct ptx_vinsn *v;

		if (fo->kind != PTX_O_REG && k < 0)
			return pl_unsupported(L, "a call of a function without a body"), true;
		v = pl_emit(L, "CALL");
		if (in->guard >= 0) {
			v->guard = in->guard;
			v->guard_not = in->guard_not;
		}
		pl_o_text(v, "R234");
		if (fo->kind == PTX_O_REG)
			pl_o_use(v, fo->reg, 0); /* per lane: the low word, a byte pc */
		else
			pl_o_text(v, "F%d", k);
		return true;
	}
	if (func_address(L))
		return true;
	if (!strcmp(in->op, "alloca") || !strcmp(in->op, "stacksave") ||
	    !strcmp(in->op, "stackrestore")) {
		if (L->spv < 0)
			return pl_lerr(L, "internal: no stack pointer"), true;
		if (in->guard >= 0)
			return pl_unsupported(L, "a predicated stack instruction"), true;
		if (!strcmp(in->op, "alloca"))
			lower_alloca(L);
		else
			lower_stack_value(L, !strcmp(in->op, "stacksave"));
		return true;
	}
	if (L->c->fn_mode && !strcmp(in->op, "ret")) {
		emit_ret(L);
		return true;
	}
	if (L->c->calls || L->c->fn_mode)
		return param_access(L);
	return false;
}
