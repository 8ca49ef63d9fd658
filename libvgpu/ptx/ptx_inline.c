// SPDX-License-Identifier: MIT
/*
 * PTX calls: every call of a .func is inlined into the .entry before
 * lowering (vGPU has no call stack), giving the lowering one function.
 *
 * The copy of an entry gets, for each call instance k: the callee's
 * registers, .local and .shared variables and labels renamed with the
 * suffix "$k", a register per callee parameter and one for its return
 * value, the moves of the arguments in, the body with `ret` turned into a
 * branch to the instance's end, and the move of the result out.  Call
 * sequences keep their `.param` variables in registers (ptx_parse.c), so
 * st.param / ld.param on them, and the callee's ld.param of its
 * parameters and st.param of its result, become moves.
 *
 * vprintf(fmt, args) becomes the pseudo-instruction `vprintf ret, fmt,
 * args` (ptx_lower_mem.c writes the printf record), __assertfail(msg,
 * file, line, function, charSize) `assertfail msg, file, line, function`
 * (the assertion's message as a printf record, then TRAP.ASSERT); malloc and
 * free are the allocator ptx_heap.c links in, inlined as any function.  Calls that
 * ptx_call_real() picks (recursion, structures by value, callees over
 * PTX_INLINE_LIMIT, .noinline, calls through a register) stay calls,
 * with their call sequence's .param accesses, for ptx_call.c; calls of
 * other functions without a body are located errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

#define MAX_DEPTH 16

struct inl {
	const struct ptx_module *m;
	struct ptx_diag *dg;
	struct ptx_func *out;
	const struct ptx_func *stack[MAX_DEPTH];
	int depth, instances;
	bool failed;
};

/* One instance of a function being copied into the output. */
struct frame {
	const struct ptx_func *f;
	const int *regmap;  /* f's register -> output register (NULL: same) */
	char suffix[16];    /* appended to f's labels and variables ("" for the entry) */
	const int *params;  /* f's parameter -> output register (callee) */
	int ret;	    /* the output register of its result, or -1 */
	char end[PTX_NAME_MAX]; /* the label a callee's ret branches to */
};

static void *grow(void *p, int n, int *cap, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 16;
	return realloc(p, (size_t)*cap * size);
}

static bool ierr(struct inl *I, int line, int col, const char *fmt, const char *name)
{
	ptx_error(I->dg, line, col, fmt, name);
	I->failed = true;
	return false;
}

static int new_reg(struct inl *I, const char *name, const char *suffix, int bits,
		   bool is_float, uint8_t cls)
{
	struct ptx_func *o = I->out;
	struct ptx_reg *r = grow(o->regs, o->nregs, &o->regs_cap, sizeof(*r));

	if (!r) {
		I->failed = true;
		return -1;
	}
	o->regs = r;
	r = &o->regs[o->nregs];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%.70s%s", name, suffix);
	r->bits = (uint8_t)bits;
	r->is_float = is_float;
	r->cls = cls;
	return o->nregs++;
}

static struct ptx_insn *push(struct inl *I, const struct ptx_insn *in)
{
	struct ptx_func *o = I->out;
	struct ptx_insn *a = grow(o->insns, o->ninsns, &o->insns_cap, sizeof(*a));

	if (!a) {
		I->failed = true;
		return NULL;
	}
	o->insns = a;
	a[o->ninsns] = *in;
	return &a[o->ninsns++];
}

static bool add_var(struct inl *I, struct ptx_var **arr, int *n, const struct ptx_var *v,
		    const char *suffix)
{
	struct ptx_var *a = realloc(*arr, (size_t)(*n + 1) * sizeof(*a));

	if (!a) {
		I->failed = true;
		return false;
	}
	*arr = a;
	a[*n] = *v;
	snprintf(a[*n].name, sizeof(a[*n].name), "%.70s%s", v->name, suffix);
	(*n)++;
	return true;
}

static bool is_label(const struct ptx_func *f, const char *name)
{
	for (int i = 0; i < f->ninsns; i++)
		if (f->insns[i].label[0] && !strcmp(f->insns[i].label, name))
			return true;
	return false;
}

static bool is_var(const struct ptx_var *v, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return true;
	return false;
}

/* A name of frame @fr as the output knows it: its own labels and variables renamed. */
static void rename_sym(const struct frame *fr, char *sym)
{
	char b[PTX_NAME_MAX];

	if (!fr->suffix[0] || !sym[0])
		return;
	if (!is_label(fr->f, sym) && !is_var(fr->f->local, fr->f->nlocal, sym) &&
	    !is_var(fr->f->shared, fr->f->nshared, sym))
		return;
	snprintf(b, sizeof(b), "%.70s%s", sym, fr->suffix);
	memcpy(sym, b, sizeof(b));
}

static int map_reg(const struct frame *fr, int r)
{
	return r < 0 || !fr->regmap ? r : fr->regmap[r];
}

/* A mov.bN d, s between output registers. */
static void emit_mov(struct inl *I, const struct ptx_insn *at, int d, int s)
{
	struct ptx_insn mv;
	int bits = I->out->regs[d].cls == PTX_R64 ? 64 : 32;

	memset(&mv, 0, sizeof(mv));
	mv.line = at->line;
	mv.col = at->col;
	mv.guard = -1;
	snprintf(mv.op, sizeof(mv.op), "mov");
	snprintf(mv.mods[0], sizeof(mv.mods[0]), ".b%d", bits);
	mv.nmods = 1;
	mv.nops = 2;
	mv.ops[0].kind = PTX_O_REG;
	mv.ops[0].reg = d;
	mv.ops[1].kind = PTX_O_REG;
	mv.ops[1].reg = s;
	push(I, &mv);
}

static int param_index(const struct ptx_func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (!strcmp(f->params[i].name, name))
			return i;
	return -1;
}

static bool copy_body(struct inl *I, const struct frame *fr);

/* The function a call names (with a body), or NULL. */
static const struct ptx_func *callee_of(const struct inl *I, const struct ptx_insn *in)
{
	const struct ptx_operand *fo = &in->ops[in->call_ret ? 1 : 0];

	for (int i = 0; i < I->m->nfuncs; i++)
		if (!I->m->funcs[i].entry && !I->m->funcs[i].decl &&
		    !strcmp(I->m->funcs[i].name, fo->sym))
			return &I->m->funcs[i];
	return NULL;
}

/* Is this call a real one (ptx_call.c), not inlined? */
static bool call_is_real(const struct inl *I, const struct ptx_insn *in)
{
	const struct ptx_func *callee = callee_of(I, in);
	bool rec = false;

	if (in->ops[in->call_ret ? 1 : 0].kind == PTX_O_REG)
		return true; /* through a function pointer */
	if (!callee)
		return false;
	for (int d = 0; d < I->depth; d++)
		rec |= I->stack[d] == callee;
	return ptx_call_real(callee, rec);
}

/*
 * Is insn @i of @f an ld/st .param on a call sequence's .param whose
 * call is real?  Then it stays a memory access (ptx_call.c).
 */
static bool real_call_param(const struct inl *I, const struct ptx_func *f, int i)
{
	const struct ptx_insn *x = &f->insns[i];
	const struct ptx_operand *mem;
	bool param = false;

	if ((strcmp(x->op, "ld") && strcmp(x->op, "st")) || x->nops != 2)
		return false;
	for (int k = 0; k < x->nmods; k++)
		param |= !strcmp(x->mods[k], ".param");
	mem = &x->ops[!strcmp(x->op, "ld") ? 1 : 0];
	if (!param || mem->kind != PTX_O_MEM || mem->reg < 0 || !f->regs[mem->reg].is_param)
		return false;
	for (int j = 0; j < f->ninsns; j++) {
		const struct ptx_insn *c = &f->insns[j];

		if (strcmp(c->op, "call"))
			continue;
		for (int k = 0; k < c->nops; k++)
			if (c->ops[k].kind == PTX_O_REG && c->ops[k].reg == mem->reg)
				return call_is_real(I, c);
	}
	return false;
}

/*
 * Call @in of an external function as the pseudo-instruction @op whose
 * operands are @in's operands @ops[0..@n), registers mapped.
 */
static bool push_pseudo(struct inl *I, const struct frame *fr, const struct ptx_insn *in,
			const char *op, const int *ops, int n)
{
	struct ptx_insn x = *in;

	snprintf(x.op, sizeof(x.op), "%s", op);
	x.nmods = 0;
	x.call_ret = false;
	x.guard = map_reg(fr, in->guard);
	x.nops = n;
	for (int k = 0; k < n; k++) {
		x.ops[k] = in->ops[ops[k]];
		x.ops[k].reg = map_reg(fr, x.ops[k].reg);
	}
	return push(I, &x) != NULL;
}

/* call (ret), f, (args): the callee's body in line. */
static bool inline_call(struct inl *I, const struct frame *fr, const struct ptx_insn *in)
{
	const struct ptx_operand *fo = &in->ops[in->call_ret ? 1 : 0];
	const struct ptx_func *callee = NULL, *decl = NULL;
	int first_arg = in->call_ret ? 2 : 1, nargs = in->nops - first_arg;
	struct frame cf;
	int *regmap, *params;
	bool ok;

	if (fo->kind == PTX_O_REG) /* through a function pointer: a CALL */
		return push(I, in) != NULL;
	for (int i = 0; i < I->m->nfuncs; i++)
		if (!I->m->funcs[i].entry && !strcmp(I->m->funcs[i].name, fo->sym)) {
			if (I->m->funcs[i].decl)
				decl = &I->m->funcs[i];
			else
				callee = &I->m->funcs[i];
		}
	if (!callee && decl && !strcmp(fo->sym, "vprintf") && in->call_ret && nargs == 2) {
		/* device printf: the lowering writes a record (pl_vprintf) */
		static const int ops[] = { 0, 2, 3 }; /* ret, fmt, args */

		return push_pseudo(I, fr, in, "vprintf", ops, 3);
	}
	if (!callee && decl && !strcmp(fo->sym, "__assertfail") && !in->call_ret && nargs == 5) {
		/* a failed device assert: its message, then TRAP.ASSERT (pl_assertfail) */
		static const int ops[] = { 1, 2, 3, 4 }; /* msg, file, line, function */

		return push_pseudo(I, fr, in, "assertfail", ops, 4);
	}
	if (!callee && decl)
		return ierr(I, in->line, fo->col,
			    "unsupported construct: a call of the external function '%s'", fo->sym);
	if (!callee)
		return ierr(I, in->line, fo->col, "call of an unknown function '%s'", fo->sym);
	if (nargs != callee->nparams || in->call_ret != callee->has_ret)
		return ierr(I, in->line, in->col, "a call of '%s' that does not match its declaration",
			    fo->sym);
	if (call_is_real(I, in)) /* a CALL (ptx_call.c) */
		return push(I, in) != NULL;
	if (in->guard >= 0)
		return ierr(I, in->line, in->col,
			    "unsupported construct: a predicated call of '%s'", fo->sym);
	if (I->depth == MAX_DEPTH)
		return ierr(I, in->line, fo->col, "calls nested too deep at '%s'", fo->sym);

	memset(&cf, 0, sizeof(cf));
	cf.f = callee;
	snprintf(cf.suffix, sizeof(cf.suffix), "$%d", ++I->instances);
	snprintf(cf.end, sizeof(cf.end), "$ret%s", cf.suffix);
	regmap = calloc((size_t)callee->nregs + 1, sizeof(*regmap));
	params = calloc((size_t)callee->nparams + 1, sizeof(*params));
	if (!regmap || !params) {
		free(regmap);
		free(params);
		I->failed = true;
		return false;
	}
	for (int r = 0; r < callee->nregs; r++) {
		regmap[r] = new_reg(I, callee->regs[r].name, cf.suffix, callee->regs[r].bits,
				    callee->regs[r].is_float, callee->regs[r].cls);
		if (regmap[r] >= 0) {
			I->out->regs[regmap[r]].is_param = callee->regs[r].is_param;
			I->out->regs[regmap[r]].psize = callee->regs[r].psize;
			I->out->regs[regmap[r]].palign = callee->regs[r].palign;
		}
	}
	for (int p = 0; p < callee->nparams && !I->failed; p++) {
		const struct ptx_param *pp = &callee->params[p];
		int a = map_reg(fr, in->ops[first_arg + p].reg);

		if (pp->size != 4 && pp->size != 8) {
			ptx_error(I->dg, pp->line, 1,
				  "unsupported construct: a parameter of %u bytes ('%s'; "
				  "structures by value)", pp->size, pp->name);
			I->failed = true;
			break;
		}
		params[p] = new_reg(I, pp->name, cf.suffix, (int)pp->size * 8, false,
				    pp->size == 8 ? PTX_R64 : PTX_R32);
		if (params[p] >= 0 && a >= 0) {
			if (I->out->regs[a].cls != I->out->regs[params[p]].cls)
				ierr(I, in->line, in->col,
				     "argument of the wrong size in a call of '%s'", fo->sym);
			else
				emit_mov(I, in, params[p], a);
		}
	}
	cf.regmap = regmap;
	cf.params = params;
	cf.ret = -1;
	if (callee->has_ret) {
		if (callee->ret.size != 4 && callee->ret.size != 8)
			ierr(I, callee->ret.line, 1,
			     "unsupported construct: a return value of other than 4 or 8 bytes ('%s')",
			     callee->name);
		else
			cf.ret = new_reg(I, callee->ret.name, cf.suffix, (int)callee->ret.size * 8,
					 false, callee->ret.size == 8 ? PTX_R64 : PTX_R32);
	}
	for (int i = 0; i < callee->nlocal && !I->failed; i++)
		add_var(I, &I->out->local, &I->out->nlocal, &callee->local[i], cf.suffix);
	for (int i = 0; i < callee->nshared && !I->failed; i++)
		add_var(I, &I->out->shared, &I->out->nshared, &callee->shared[i], cf.suffix);
	ok = !I->failed;
	if (ok) {
		struct ptx_insn lab;

		I->stack[I->depth++] = callee;
		ok = copy_body(I, &cf);
		I->depth--;
		memset(&lab, 0, sizeof(lab));
		lab.line = in->line;
		lab.guard = -1;
		snprintf(lab.label, sizeof(lab.label), "%s", cf.end);
		push(I, &lab);
		if (in->call_ret && cf.ret >= 0) {
			int d = map_reg(fr, in->ops[0].reg);

			if (I->out->regs[d].cls != I->out->regs[cf.ret].cls)
				ok = ierr(I, in->line, in->col,
					  "return value of the wrong size in a call of '%s'", fo->sym);
			else
				emit_mov(I, in, d, cf.ret);
		}
	}
	free(regmap);
	free(params);
	return ok && !I->failed;
}

/*
 * ld.param / st.param that move a call argument or result: a mov, or
 * false if @x is not one.  @x's registers are the output's already.
 */
static bool param_move(struct inl *I, const struct frame *fr, const struct ptx_insn *x)
{
	bool load = !strcmp(x->op, "ld"), store = !strcmp(x->op, "st");
	const struct ptx_operand *mem, *val;
	bool param = false;
	int reg = -1;

	if (!load && !store)
		return false;
	for (int i = 0; i < x->nmods; i++)
		param |= !strcmp(x->mods[i], ".param");
	if (!param || x->nops != 2)
		return false;
	mem = &x->ops[load ? 1 : 0];
	val = &x->ops[load ? 0 : 1];
	if (mem->kind != PTX_O_MEM)
		return false;
	if (mem->reg >= 0 && I->out->regs[mem->reg].is_param) {
		/* a call sequence's .param (a register) */
		reg = mem->reg;
	} else if (fr->params && param_index(fr->f, mem->sym) >= 0 && load) {
		reg = fr->params[param_index(fr->f, mem->sym)];
	} else if (fr->params && fr->f->has_ret && !strcmp(mem->sym, fr->f->ret.name) &&
		   store) {
		reg = fr->ret;
	} else {
		return false; /* a kernel parameter (or an address): the lowering's */
	}
	if (mem->imm)
		return !ierr(I, x->line, x->col,
			     "unsupported construct: a call parameter at an offset ('%s')",
			     mem->sym[0] ? mem->sym : I->out->regs[reg].name);
	if (val->kind != PTX_O_REG) {
		if (load || val->kind != PTX_O_IMM)
			return !ierr(I, x->line, x->col, "expected a register in %s.param",
				     load ? "ld" : "st");
		{ /* st.param [p], 42 */
			struct ptx_insn mv = *x;

			snprintf(mv.op, sizeof(mv.op), "mov");
			mv.nmods = 1;
			snprintf(mv.mods[0], sizeof(mv.mods[0]), ".b%d",
				 I->out->regs[reg].cls == PTX_R64 ? 64 : 32);
			memset(&mv.ops[0], 0, sizeof(mv.ops[0]));
			mv.ops[0].kind = PTX_O_REG;
			mv.ops[0].reg = reg;
			mv.ops[1] = *val;
			push(I, &mv);
			return true;
		}
	}
	{
		int v = val->reg;
		struct ptx_insn *mv;

		if (I->out->regs[v].cls != I->out->regs[reg].cls)
			return !ierr(I, x->line, x->col,
				     "unsupported construct: a call parameter of another size ('%s')",
				     I->out->regs[reg].name);
		emit_mov(I, x, load ? v : reg, load ? reg : v);
		mv = &I->out->insns[I->out->ninsns - 1];
		mv->guard = x->guard;
		mv->guard_not = x->guard_not;
	}
	return true;
}

static bool copy_body(struct inl *I, const struct frame *fr)
{
	const struct ptx_func *f = fr->f;

	for (int i = 0; i < f->ninsns && !I->failed; i++) {
		struct ptx_insn x = f->insns[i];

		x.guard = map_reg(fr, x.guard);
		for (int k = 0; k < x.nops; k++) {
			struct ptx_operand *o = &x.ops[k];

			o->reg = map_reg(fr, o->reg);
			if (o->has_p)
				o->preg = map_reg(fr, o->preg);
			if (o->kind == PTX_O_VEC || o->kind == PTX_O_MEM)
				for (int e = 0; e < o->nvec; e++)
					o->vec[e] = map_reg(fr, o->vec[e]);
			rename_sym(fr, o->sym);
		}
		if (x.label[0]) {
			rename_sym(fr, x.label);
			push(I, &x);
			continue;
		}
		if (!strcmp(x.op, "call")) {
			struct frame here = *fr;

			/* the call's operands are already the output's registers */
			here.regmap = NULL;
			if (!inline_call(I, &here, &x))
				return false;
			continue;
		}
		if (real_call_param(I, f, i)) {
			push(I, &x);
			continue;
		}
		if (fr->end[0] && !strcmp(x.op, "ret")) {
			if (i + 1 == f->ninsns && x.guard < 0)
				continue; /* falls into the end label */
			snprintf(x.op, sizeof(x.op), "bra");
			x.nmods = 0;
			x.nops = 1;
			memset(&x.ops[0], 0, sizeof(x.ops[0]));
			x.ops[0].kind = PTX_O_SYM;
			x.ops[0].reg = -1;
			snprintf(x.ops[0].sym, sizeof(x.ops[0].sym), "%s", fr->end);
			push(I, &x);
			continue;
		}
		if (param_move(I, fr, &x))
			continue;
		push(I, &x);
	}
	return !I->failed;
}

static void *dup(const void *p, size_t n, size_t size, bool *failed)
{
	void *d;

	if (!n)
		return NULL;
	d = malloc(n * size);
	if (!d)
		*failed = true;
	else
		memcpy(d, p, n * size);
	return d;
}

int ptx_inline(const struct ptx_module *m, const struct ptx_func *e, struct ptx_diag *dg,
	       struct ptx_func *out)
{
	struct inl I = { .m = m, .dg = dg, .out = out };
	struct frame fr;

	memset(out, 0, sizeof(*out));
	memcpy(out->name, e->name, sizeof(out->name));
	out->full = e->full;
	out->full_len = e->full_len;
	out->line = e->line;
	out->entry = e->entry;
	out->has_ret = e->has_ret; /* a called function's (ptx_call.c) */
	out->ret = e->ret;
	out->nparams = e->nparams;
	out->params = dup(e->params, (size_t)e->nparams, sizeof(*e->params), &I.failed);
	out->nshared = e->nshared;
	out->shared = dup(e->shared, (size_t)e->nshared, sizeof(*e->shared), &I.failed);
	out->nlocal = e->nlocal;
	out->local = dup(e->local, (size_t)e->nlocal, sizeof(*e->local), &I.failed);
	out->nregs = out->regs_cap = e->nregs;
	out->regs = dup(e->regs, (size_t)e->nregs, sizeof(*e->regs), &I.failed);
	memset(&fr, 0, sizeof(fr));
	fr.f = e;
	fr.ret = -1;
	I.stack[I.depth++] = e;
	if (!I.failed)
		copy_body(&I, &fr);
	if (I.failed) {
		ptx_func_free(out);
		return dg->errors ? -EINVAL : -ENOMEM;
	}
	return 0;
}

void ptx_func_free(struct ptx_func *f)
{
	free(f->params);
	free(f->regs);
	free(f->shared);
	free(f->local);
	free(f->insns);
	memset(f, 0, sizeof(*f));
}
