// SPDX-License-Identifier: MIT
/*
 * PTX parser, function bodies: register declarations (.reg), .local and
 * .shared variables, the .param of call sequences, labels, instructions
 * with their operands, and calls.  Nested { } scopes (inline asm blocks
 * in nvcc and clang output) are flattened: their registers and labels are
 * renamed so they cannot clash with the enclosing ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_parse.h"

static void *grow(void *arr, int n, int *cap, size_t size)
{
	void *p;
	int ncap;

	if (n < *cap)
		return arr;
	ncap = *cap ? 2 * *cap : 16;
	p = realloc(arr, (size_t)ncap * size);
	if (!p)
		return NULL;
	*cap = ncap;
	return p;
}

static void add_reg(struct parser *ps, const char *name, int bits, bool is_float,
		    bool is_pred);

/* .reg: a new register, unless its scope already has one of that name */
static bool declare_reg(struct parser *ps, const char *name, int bits, bool is_float,
			bool is_pred, int line, int col)
{
	for (int r = ps->scope_reg0; r < ps->f->nregs; r++)
		if (!strcmp(ps->f->regs[r].name, name)) {
			ptx_error(ps->dg, line, col,
				  "duplicate definition of register '%s' in its scope", name);
			ps->failed = true;
			return false;
		}
	add_reg(ps, name, bits, is_float, is_pred);
	return true;
}

static void add_reg(struct parser *ps, const char *name, int bits, bool is_float,
		    bool is_pred)
{
	struct ptx_func *f = ps->f;
	struct ptx_reg *r;
	struct ptx_reg *regs = grow(f->regs, f->nregs, &f->regs_cap, sizeof(*f->regs));

	if (!regs) {
		pp_perr(ps, "out of memory");
		return;
	}
	f->regs = regs;
	r = &f->regs[f->nregs++];
	memset(r, 0, sizeof(*r));
	pp_copy_name(r->name, name);
	r->bits = (uint8_t)bits;
	r->is_float = is_float;
	r->cls = is_pred ? PTX_PRED : bits > 64 ? PTX_R128 : bits > 32 ? PTX_R64 : PTX_R32;
}

/* .reg .TYPE %a, %b<N>, ...; */
static void parse_reg(struct parser *ps)
{
	bool is_float, is_pred;
	int bits;

	pp_next(ps);
	while (TOK(ps) == PTX_T_IDENT && TEXT(ps)[0] == '.' &&
	       !pp_type_bits(TEXT(ps), &is_float, &is_pred) &&
	       (!strncmp(TEXT(ps), ".v", 2) || !strcmp(TEXT(ps), ".align")))
		pp_next(ps);
	if (TOK(ps) != PTX_T_IDENT || !(bits = pp_type_bits(TEXT(ps), &is_float, &is_pred))) {
		pp_perr(ps, "unsupported .reg type '%s'", TEXT(ps));
		pp_skip_stmt(ps);
		return;
	}
	pp_next(ps);
	for (;;) {
		char name[PTX_NAME_MAX];
		int line, col;

		if (TOK(ps) != PTX_T_IDENT) {
			pp_perr(ps, "expected a register name in .reg, not '%s'", TEXT(ps));
			pp_skip_stmt(ps);
			return;
		}
		pp_copy_name(name, TEXT(ps));
		line = ps->lx.tline;
		col = ps->lx.tcol;
		pp_next(ps);
		if (pp_is_punct(ps, '<')) {
			int64_t count;

			pp_next(ps);
			count = ps->lx.value;
			if (TOK(ps) != PTX_T_INT || count < 0 || count > 65536) {
				pp_perr(ps, "bad register count '%s'", TEXT(ps));
				pp_skip_stmt(ps);
				return;
			}
			pp_next(ps);
			if (!pp_expect(ps, '>')) {
				pp_skip_stmt(ps);
				return;
			}
			for (int64_t i = 0; i < count; i++) {
				char rn[PTX_NAME_MAX + 16];

				snprintf(rn, sizeof(rn), "%s%lld", name, (long long)i);
				if (!declare_reg(ps, rn, bits, is_float, is_pred, line, col))
					break;
			}
		} else {
			declare_reg(ps, name, bits, is_float, is_pred, line, col);
		}
		if (pp_is_punct(ps, ',')) {
			pp_next(ps);
			continue;
		}
		break;
	}
	pp_expect(ps, ';');
}

/* One operand; @ins gives the register table. */
static bool parse_operand(struct parser *ps, struct ptx_operand *o)
{
	memset(o, 0, sizeof(*o));
	o->reg = -1;
	o->col = ps->lx.tcol;
	if (pp_is_punct(ps, '!')) {
		o->neg = true;
		pp_next(ps);
	}
	if (pp_is_punct(ps, '-') || TOK(ps) == PTX_T_INT || TOK(ps) == PTX_T_FLOAT) {
		bool minus = pp_is_punct(ps, '-');

		if (minus)
			pp_next(ps);
		if (TOK(ps) != PTX_T_INT && TOK(ps) != PTX_T_FLOAT) {
			pp_perr(ps, "expected a number after '-'");
			return false;
		}
		if (TOK(ps) == PTX_T_INT && ps->lx.overflow) {
			pp_perr(ps, "constant overflow: '%s' is wider than 64 bits", TEXT(ps));
			return false;
		}
		o->kind = PTX_O_IMM;
		o->fimm = TOK(ps) == PTX_T_FLOAT;
		o->imm = ps->lx.value;
		if (minus && !o->fimm) {
			o->imm = (int64_t)(0 - (uint64_t)o->imm); /* -INT64_MIN wraps */
		} else if (minus) {
			if (ps->lx.is_double)
				o->imm ^= INT64_MIN;
			else
				o->imm ^= 0x80000000;
		}
		if (o->fimm && ps->lx.is_double)
			o->sym[0] = 'd'; /* a double literal */
		pp_next(ps);
		return true;
	}
	if (pp_is_punct(ps, '{')) {
		int first = ps->nvimm;

		pp_next(ps);
		o->kind = PTX_O_VEC;
		while (!pp_is_punct(ps, '}')) {
			if (o->nvec == (int)(sizeof(o->vec) / sizeof(o->vec[0]))) {
				pp_perr(ps, "too many elements in a vector operand");
				return false;
			}
			if (ps->vimm_in && (pp_is_punct(ps, '-') || TOK(ps) == PTX_T_INT ||
					     TOK(ps) == PTX_T_FLOAT)) {
				if (ps->nvimm == (int)(sizeof(ps->vimm) / sizeof(ps->vimm[0]))) {
					pp_perr(ps, "too many immediates in vector operands");
					return false;
				}
				if (!parse_operand(ps, &ps->vimm[ps->nvimm].imm))
					return false;
				ps->vimm[ps->nvimm++].reg = o->nvec; /* its element, for now */
				o->vec[o->nvec++] = -1;
				if (pp_is_punct(ps, ','))
					pp_next(ps);
				continue;
			}
			if (TOK(ps) == PTX_T_IDENT && !strcmp(TEXT(ps), "_")) {
				o->vec[o->nvec++] = -1;
			} else if (TOK(ps) == PTX_T_IDENT &&
				   (o->vec[o->nvec] = ptx_find_reg(ps->f, TEXT(ps))) >= 0) {
				o->nvec++;
			} else {
				pp_perr(ps, "expected a register in a vector operand, not '%s'",
					TEXT(ps));
				return false;
			}
			pp_next(ps);
			if (pp_is_punct(ps, ','))
				pp_next(ps);
		}
		pp_next(ps);
		for (int k = first; k < ps->nvimm; k++) {
			char name[PTX_NAME_MAX];
			int bits = pp_vimm_type(ps, o->nvec, ps->vimm[k].type);

			snprintf(name, sizeof(name), "$vimm%d", ps->f->nregs);
			add_reg(ps, name, bits, false, false);
			o->vec[ps->vimm[k].reg] = ps->f->nregs - 1;
			ps->vimm[k].reg = ps->f->nregs - 1;
		}
		return true;
	}
	if (pp_is_punct(ps, '[')) {
		pp_next(ps);
		o->kind = PTX_O_MEM;
		if (TOK(ps) == PTX_T_IDENT) {
			int r = ptx_find_reg(ps->f, TEXT(ps));

			if (r >= 0)
				o->reg = r;
			else
				pp_copy_name(o->sym, TEXT(ps));
			pp_next(ps);
		} else if (TOK(ps) == PTX_T_INT) {
			o->imm = ps->lx.value;
			pp_next(ps);
		} else {
			pp_perr(ps, "expected an address, not '%s'", TEXT(ps));
			return false;
		}
		while (pp_is_punct(ps, '+') || pp_is_punct(ps, '-')) {
			bool minus = pp_is_punct(ps, '-');

			pp_next(ps);
			if (pp_is_punct(ps, '-')) { /* [%rd+-8] */
				minus = !minus;
				pp_next(ps);
			}
			if (TOK(ps) != PTX_T_INT) {
				pp_perr(ps, "expected an offset, not '%s'", TEXT(ps));
				return false;
			}
			o->imm += minus ? -ps->lx.value : ps->lx.value;
			pp_next(ps);
		}
		if (pp_is_punct(ps, ',')) { /* [tensor-map, {coordinates}] */
			struct ptx_operand v;
			bool ok;

			pp_next(ps);
			ps->vimm_in_mem = true;
			ok = parse_operand(ps, &v);
			ps->vimm_in_mem = false;
			if (!ok || v.kind != PTX_O_VEC) {
				pp_perr(ps, "expected {coordinates} in a tensor address");
				return false;
			}
			o->nvec = v.nvec;
			memcpy(o->vec, v.vec, sizeof(o->vec));
		}
		return pp_expect(ps, ']');
	}
	if (TOK(ps) == PTX_T_IDENT) {
		int r = ptx_find_reg(ps->f, TEXT(ps));

		if (!strcmp(TEXT(ps), "_")) {
			o->kind = PTX_O_SINK;
		} else if (r < 0 && !strcmp(TEXT(ps), "WARP_SZ")) {
			/* PTX's predefined constant (ISA 5.2): nvcc's warpSize */
			o->kind = PTX_O_IMM;
			o->imm = 32;
			pp_next(ps);
			return true;
		} else if (r >= 0) {
			o->kind = PTX_O_REG;
			o->reg = r;
		} else {
			o->kind = PTX_O_SYM;
			pp_copy_name(o->sym, TEXT(ps));
		}
		pp_next(ps);
		if (o->kind == PTX_O_SYM && pp_is_punct(ps, '+')) { /* sym+4 */
			pp_next(ps);
			if (TOK(ps) != PTX_T_INT) {
				pp_perr(ps, "expected an offset after '+'");
				return false;
			}
			o->imm = ps->lx.value;
			pp_next(ps);
		}
		if ((o->kind == PTX_O_REG || o->kind == PTX_O_SINK) && pp_is_punct(ps, '|')) {
			pp_next(ps); /* d|p */
			o->has_p = true;
			o->preg = -1;
			if (TOK(ps) == PTX_T_IDENT && strcmp(TEXT(ps), "_"))
				o->preg = ptx_find_reg(ps->f, TEXT(ps));
			if (TOK(ps) != PTX_T_IDENT || (strcmp(TEXT(ps), "_") && o->preg < 0) ||
			    (o->preg >= 0 && ps->f->regs[o->preg].cls != PTX_PRED)) {
				pp_perr(ps, "expected a predicate register or _ after '|', not '%s'",
					TEXT(ps));
				return false;
			}
			pp_next(ps);
		}
		return true;
	}
	pp_perr(ps, "unexpected '%s' in an operand", TEXT(ps));
	return false;
}

static struct ptx_insn *new_insn(struct parser *ps)
{
	struct ptx_func *f = ps->f;
	struct ptx_insn *arr = grow(f->insns, f->ninsns, &f->insns_cap, sizeof(*arr));

	if (!arr) {
		pp_perr(ps, "out of memory");
		return NULL;
	}
	f->insns = arr;
	memset(&arr[f->ninsns], 0, sizeof(arr[0]));
	arr[f->ninsns].guard = -1;
	arr[f->ninsns].line = ps->lx.tline;
	arr[f->ninsns].col = ps->lx.tcol;
	return &arr[f->ninsns++];
}

/*
 * The mnemonic's whole text: the lexer shortens an identifier of
 * PTX_NAME_MAX characters or more (a name), but a mnemonic with its
 * modifiers may be longer (cp.async.bulk.tensor.2d.shared::cluster.global
 * .tile.mbarrier::complete_tx::bytes.multicast::cluster is 99).
 */
static const char *mnemonic_text(struct parser *ps, char *buf, size_t len)
{
	if (ps->lx.ident_len < PTX_NAME_MAX || ps->lx.ident_len >= len)
		return TEXT(ps);
	memcpy(buf, ps->lx.ident, ps->lx.ident_len);
	buf[ps->lx.ident_len] = '\0';
	return buf;
}

/* mnemonic.mod.mod... -> op and modifiers */
static bool split_mnemonic(struct parser *ps, struct ptx_insn *in, const char *text)
{
	const char *dot = strchr(text, '.');
	size_t n = dot ? (size_t)(dot - text) : strlen(text);

	if (n >= sizeof(in->op)) {
		pp_perr(ps, "unknown instruction '%s'", text);
		return false;
	}
	memcpy(in->op, text, n);
	in->op[n] = '\0';
	while (dot) {
		const char *e = strchr(dot + 1, '.');
		size_t k = e ? (size_t)(e - dot) : strlen(dot);

		if (in->nmods == PTX_MAX_MODS || k >= sizeof(in->mods[0])) {
			pp_perr(ps, "too many modifiers in '%s'", text);
			return false;
		}
		memcpy(in->mods[in->nmods], dot, k);
		in->mods[in->nmods++][k] = '\0';
		dot = e;
	}
	return true;
}

static void parse_call(struct parser *ps, struct ptx_insn *in);

/* The store just parsed, after a mov of each of its vector operand's
 * immediates into its hidden register (ps->vimm). */
static void vector_imms(struct parser *ps)
{
	struct ptx_func *f = ps->f;
	struct ptx_insn st = f->insns[f->ninsns - 1], *in;

	f->ninsns--;
	for (int k = 0; k < ps->nvimm; k++) {
		in = new_insn(ps);
		if (!in)
			return;
		in->line = st.line;
		in->col = st.col;
		snprintf(in->op, sizeof(in->op), "mov");
		snprintf(in->mods[0], sizeof(in->mods[0]), "%s", ps->vimm[k].type);
		in->nmods = 1;
		in->nops = 2;
		in->ops[0].kind = PTX_O_REG;
		in->ops[0].reg = ps->vimm[k].reg;
		in->ops[0].col = ps->vimm[k].imm.col;
		in->ops[1] = ps->vimm[k].imm;
		pp_f32_literals(in);
	}
	ps->nvimm = 0;
	in = new_insn(ps);
	if (in)
		*in = st;
}

static void parse_insn(struct parser *ps)
{
	struct ptx_insn *in = new_insn(ps);
	char mn[256];

	ps->nvimm = 0; /* no vector immediates until the operands (calls take none) */
	ps->vimm_in = NULL;
	if (!in)
		return;
	if (pp_is_punct(ps, '@')) {
		pp_next(ps);
		if (pp_is_punct(ps, '!')) {
			in->guard_not = true;
			pp_next(ps);
		}
		if (TOK(ps) != PTX_T_IDENT || (in->guard = ptx_find_reg(ps->f, TEXT(ps))) < 0 ||
		    ps->f->regs[in->guard].cls != PTX_PRED) {
			pp_perr(ps, "expected a predicate register after '@', not '%s'",
				TEXT(ps));
			pp_skip_stmt(ps);
			return;
		}
		pp_next(ps);
	}
	if (TOK(ps) != PTX_T_IDENT) {
		pp_perr(ps, "expected an instruction, not '%s'", TEXT(ps));
		pp_skip_stmt(ps);
		return;
	}
	in->line = ps->lx.tline;
	in->col = ps->lx.tcol;
	if (!split_mnemonic(ps, in, mnemonic_text(ps, mn, sizeof(mn)))) {
		pp_skip_stmt(ps);
		return;
	}
	pp_next(ps);
	if (!strcmp(in->op, "call")) {
		parse_call(ps, in);
		return;
	}
	if (pp_vimm_takes(in))
		ps->vimm_in = in;
	while (!pp_is_punct(ps, ';')) {
		if (in->nops == PTX_MAX_OPS) {
			pp_perr(ps, "too many operands");
			pp_skip_stmt(ps);
			return;
		}
		int nvimm = ps->nvimm;
		const struct ptx_operand *o = &in->ops[in->nops];

		if (!parse_operand(ps, &in->ops[in->nops++]) || !pp_vector_sources(ps, in, o, nvimm)) {
			pp_skip_stmt(ps);
			return;
		}
		if (pp_is_punct(ps, ','))
			pp_next(ps);
		else if (!pp_is_punct(ps, ';')) {
			pp_perr(ps, "expected ',' or ';' after an operand, not '%s'", TEXT(ps));
			pp_skip_stmt(ps);
			return;
		}
	}
	pp_next(ps);
	pp_f32_literals(in);
	if (ps->nvimm)
		vector_imms(ps);
}

/*
 * Close nested scope @id whose statements start at instruction @first:
 * its labels get a suffix (in their definitions and uses inside it) and
 * its registers are hidden from later lookups.
 */
static void close_scope(struct parser *ps, int id, int first, int first_reg)
{
	struct ptx_func *f = ps->f;

	for (int i = first; i < f->ninsns; i++) {
		char old[PTX_NAME_MAX];

		if (!f->insns[i].label[0])
			continue;
		pp_copy_name(old, f->insns[i].label);
		snprintf(f->insns[i].label, PTX_NAME_MAX, "%.70s__s%d", old, id);
		for (int j = first; j < f->ninsns; j++)
			for (int k = 0; k < f->insns[j].nops; k++)
				if (f->insns[j].ops[k].kind == PTX_O_SYM &&
				    !strcmp(f->insns[j].ops[k].sym, old))
					pp_copy_name(f->insns[j].ops[k].sym, f->insns[i].label);
	}
	for (int r = first_reg; r < f->nregs; r++)
		f->regs[r].name[0] = '\0'; /* hidden: lookups never match "" */
}

/*
 * .param .b32 param0; in a call sequence: the front end keeps call
 * arguments and results in registers (see ptx_inline.c).
 */
static void parse_call_param(struct parser *ps)
{
	char name[PTX_NAME_MAX], type[8];
	uint32_t size, align;
	int line = ps->lx.tline;

	pp_next(ps);
	if (!pp_parse_var(ps, name, &size, &align, type)) {
		pp_skip_stmt(ps);
		return;
	}
	(void)line;
	/* a structure by value: memory of a real call (ptx_call.c) */
	add_reg(ps, name, size == 4 ? 32 : 64, type[0] == 'f', false);
	if (ps->f->nregs) {
		ps->f->regs[ps->f->nregs - 1].is_param = true;
		ps->f->regs[ps->f->nregs - 1].psize = size;
		ps->f->regs[ps->f->nregs - 1].palign = align;
	}
	pp_expect(ps, ';');
}

/*
 * .func parameters and return values declared .reg (PTX ISA 5.1.6.x:
 * "(.reg .b32 r) f(.reg .b32 a)") become the .param convention the rest
 * of the front end knows: the parameter is renamed "a$reg" and the body
 * gets a register "a" loaded from it first; the return value "r" is a
 * register stored to "r$reg" before each ret; a call passes registers to
 * such a function through .param variables of its own (st.param before,
 * ld.param after).  Inlined and real calls, recursion included, then
 * work as for .param functions.
 */
static struct ptx_insn *param_move(struct parser *ps, bool load, const struct ptx_param *p,
				   const char *sym, int reg)
{
	struct ptx_insn *in = new_insn(ps);
	struct ptx_operand *m, *r;

	if (!in)
		return NULL;
	snprintf(in->op, sizeof(in->op), "%s", load ? "ld" : "st");
	snprintf(in->mods[0], sizeof(in->mods[0]), ".param");
	snprintf(in->mods[1], sizeof(in->mods[1]), ".%s", p->type);
	in->nmods = 2;
	in->nops = 2;
	m = &in->ops[load ? 1 : 0];
	r = &in->ops[load ? 0 : 1];
	m->kind = PTX_O_MEM;
	m->reg = -1;
	if (sym)
		pp_copy_name(m->sym, sym);
	else
		m->reg = reg < 0 ? -1 : reg;
	r->kind = PTX_O_REG;
	r->reg = -1;
	return in;
}

static bool reg_param_type(struct parser *ps, const struct ptx_param *p, int *bits)
{
	*bits = (int)p->size * 8;
	if (p->size != 1 && p->size != 2 && p->size != 4 && p->size != 8) {
		pp_perr(ps, "unsupported construct: a .reg parameter '%s' of %u bytes", p->name,
			p->size);
		return false;
	}
	return true;
}

/* The registers of a .func's .reg parameters, loaded at its start. */
static void reg_params_prologue(struct parser *ps)
{
	struct ptx_func *f = ps->f;

	for (int i = 0; i <= f->nparams; i++) {
		struct ptx_param *p = i < f->nparams ? &f->params[i] : &f->ret;
		char name[PTX_NAME_MAX];
		int bits;

		if ((i == f->nparams && !f->has_ret) || !p->reg || !reg_param_type(ps, p, &bits))
			continue;
		snprintf(name, sizeof(name), "%s", p->name);
		add_reg(ps, name, bits, p->type[0] == 'f', false);
		if (strlen(name) + 5 > sizeof(p->name)) {
			pp_perr(ps, "the name '%s' is too long", name);
			continue;
		}
		snprintf(p->name, sizeof(p->name), "%s$reg", name);
		if (i < f->nparams) {
			struct ptx_insn *in = param_move(ps, true, p, p->name, -1);

			if (in)
				in->ops[0].reg = ptx_find_reg(f, name);
		}
	}
}

/* A .reg return value: stored before each ret (and at a fall off the end). */
static void reg_ret_epilogue(struct parser *ps)
{
	struct ptx_func *f = ps->f;
	char name[PTX_NAME_MAX];
	int n = f->ninsns, r, bits;
	struct ptx_insn *old;

	if (!f->has_ret || !f->ret.reg || !reg_param_type(ps, &f->ret, &bits))
		return;
	snprintf(name, sizeof(name), "%.*s", (int)(strlen(f->ret.name) - 4), f->ret.name);
	r = ptx_find_reg(f, name);
	old = malloc(((size_t)n + 1) * sizeof(*old));
	if (!old || r < 0) {
		free(old);
		pp_perr(ps, "out of memory");
		return;
	}
	memcpy(old, f->insns, (size_t)n * sizeof(*old));
	f->ninsns = 0;
	for (int i = 0; i <= n; i++) {
		bool end = i == n;
		struct ptx_insn *in;

		if (end && n && !strcmp(old[n - 1].op, "ret") && old[n - 1].guard < 0)
			break;
		if (end || !strcmp(old[i].op, "ret")) {
			in = param_move(ps, false, &f->ret, f->ret.name, -1);
			if (!in)
				break;
			in->ops[1].reg = r;
			if (!end) {
				in->guard = old[i].guard;
				in->guard_not = old[i].guard_not;
				in->line = old[i].line;
				in->col = old[i].col;
			}
		}
		if (end) {
			in = new_insn(ps);
			if (in)
				snprintf(in->op, sizeof(in->op), "ret");
			break;
		}
		in = new_insn(ps);
		if (!in)
			break;
		*in = old[i];
	}
	free(old);
}

/*
 * A call of a function with .reg parameters (the call just parsed, the
 * last instruction): its register arguments and result through .param
 * variables of the call's own.
 */
static void reg_call(struct parser *ps)
{
	struct ptx_func *f = ps->f, *callee = NULL;
	struct ptx_insn call = f->insns[f->ninsns - 1], *in;
	int first = call.call_ret ? 2 : 1, fi = call.call_ret ? 1 : 0, rp = -1, ret = -1;
	bool any = false;

	if (call.ops[fi].kind != PTX_O_SYM)
		return;
	for (int i = 0; i < ps->m->nfuncs; i++)
		if (!ps->m->funcs[i].entry && !strcmp(ps->m->funcs[i].name, call.ops[fi].sym))
			callee = &ps->m->funcs[i];
	if (!callee)
		return;
	any = callee->has_ret && callee->ret.reg && call.call_ret;
	for (int k = 0; k < callee->nparams; k++)
		any |= callee->params[k].reg;
	if (!any)
		return;
	if (call.nops - first != callee->nparams) {
		pp_perr(ps, "'%s' takes %d arguments, not %d", callee->name, callee->nparams,
			call.nops - first);
		return;
	}
	f->ninsns--;
	for (int k = 0; k < callee->nparams; k++) {
		const struct ptx_param *p = &callee->params[k];
		char name[PTX_NAME_MAX];
		int bits;

		if (!p->reg)
			continue;
		if (!reg_param_type(ps, p, &bits))
			return;
		snprintf(name, sizeof(name), "$regarg%d", ps->f->nregs);
		add_reg(ps, name, bits <= 32 ? 32 : 64, p->type[0] == 'f', false);
		f->regs[f->nregs - 1].is_param = true;
		f->regs[f->nregs - 1].psize = p->size;
		f->regs[f->nregs - 1].palign = p->size;
		in = param_move(ps, false, p, NULL, f->nregs - 1);
		if (!in)
			return;
		in->ops[1].reg = call.ops[first + k].reg;
		in->guard = call.guard;
		in->guard_not = call.guard_not;
		in->line = call.line;
		in->col = call.col;
		call.ops[first + k].reg = f->nregs - 1;
	}
	if (callee->has_ret && callee->ret.reg && call.call_ret) {
		int bits;
		char name[PTX_NAME_MAX];

		if (!reg_param_type(ps, &callee->ret, &bits))
			return;
		snprintf(name, sizeof(name), "$regret%d", ps->f->nregs);
		add_reg(ps, name, bits <= 32 ? 32 : 64, callee->ret.type[0] == 'f', false);
		rp = f->nregs - 1;
		f->regs[rp].is_param = true;
		f->regs[rp].psize = callee->ret.size;
		f->regs[rp].palign = callee->ret.size;
		ret = call.ops[0].reg;
		call.ops[0].reg = rp;
	}
	in = new_insn(ps);
	if (!in)
		return;
	*in = call;
	if (rp >= 0) {
		in = param_move(ps, true, &callee->ret, NULL, rp);
		if (!in)
			return;
		in->ops[0].reg = ret;
		in->guard = call.guard;
		in->guard_not = call.guard_not;
		in->line = call.line;
		in->col = call.col;
	}
}

/* After ',' of a call's callee: a prototype name rather than "(args)"? */
static bool indirect_proto_next(struct parser *ps)
{
	const char *p = ps->lx.p;

	while (p < ps->lx.end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p < ps->lx.end && *p != '(';
}

/* call[.uni] [(ret),] func|%reg[, (arg, ...)][, prototype]; */
static void parse_call(struct parser *ps, struct ptx_insn *in)
{
	struct ptx_operand *o;

	if (pp_is_punct(ps, '(')) {
		pp_next(ps);
		o = &in->ops[in->nops++];
		if (!parse_operand(ps, o) || o->kind != PTX_O_REG) {
			pp_perr(ps, "expected a return parameter in ( )");
			pp_skip_stmt(ps);
			return;
		}
		in->call_ret = true;
		if (!pp_expect(ps, ')') || !pp_expect(ps, ',')) {
			pp_skip_stmt(ps);
			return;
		}
	}
	o = &in->ops[in->nops++];
	if (TOK(ps) == PTX_T_IDENT && ptx_find_reg(ps->f, TEXT(ps)) >= 0) {
		/* through a register: a function pointer (ptx_call.c) */
		if (!parse_operand(ps, o) || o->kind != PTX_O_REG ||
		    ps->f->regs[o->reg].cls != PTX_R64) {
			pp_perr(ps, "an indirect call needs a 64-bit register");
			pp_skip_stmt(ps);
			return;
		}
	} else if (TOK(ps) != PTX_T_IDENT) {
		pp_perr(ps, "expected the function a call calls, not '%s'", TEXT(ps));
		pp_skip_stmt(ps);
		return;
	} else {
		memset(o, 0, sizeof(*o));
		o->kind = PTX_O_SYM;
		o->reg = -1;
		o->col = ps->lx.tcol;
		pp_copy_name(o->sym, TEXT(ps));
		pp_next(ps);
	}
	if (pp_is_punct(ps, ',') && !indirect_proto_next(ps)) {
		pp_next(ps);
		if (!pp_expect(ps, '(')) {
			pp_skip_stmt(ps);
			return;
		}
		while (!pp_is_punct(ps, ')')) {
			if (in->nops == PTX_MAX_OPS) {
				pp_perr(ps, "unsupported construct: a call with more than %d arguments",
					PTX_MAX_OPS - 2);
				pp_skip_stmt(ps);
				return;
			}
			o = &in->ops[in->nops++];
			if (!parse_operand(ps, o) || o->kind != PTX_O_REG) {
				pp_perr(ps, "expected a call parameter");
				pp_skip_stmt(ps);
				return;
			}
			if (pp_is_punct(ps, ','))
				pp_next(ps);
			else if (!pp_is_punct(ps, ')')) {
				pp_perr(ps, "expected ',' or ')' in call arguments, not '%s'",
					TEXT(ps));
				pp_skip_stmt(ps);
				return;
			}
		}
		pp_next(ps);
	}
	if (pp_is_punct(ps, ',')) {
		/* , prototype (or .calltargets list): the callee's types */
		pp_next(ps);
		if (in->ops[in->call_ret ? 1 : 0].kind != PTX_O_REG || TOK(ps) != PTX_T_IDENT) {
			pp_perr(ps, "a prototype after a direct call, or not a name: '%s'",
				TEXT(ps));
			pp_skip_stmt(ps);
			return;
		}
		pp_next(ps);
	}
	if (pp_expect(ps, ';'))
		reg_call(ps);
}

/*
 * name: .branchtargets L0, L1, ...; (after its label): instructions
 * "branchtargets" holding the labels as names, up to PTX_MAX_OPS each,
 * that brx.idx reads after the label (they run nothing).
 */
static void parse_branchtargets(struct parser *ps)
{
	struct ptx_insn *in = NULL;

	pp_next(ps); /* .branchtargets */
	for (;;) {
		struct ptx_operand *o;

		if (TOK(ps) != PTX_T_IDENT || TEXT(ps)[0] == '.') {
			pp_perr(ps, "expected a label in .branchtargets, not '%s'", TEXT(ps));
			pp_skip_stmt(ps);
			return;
		}
		if (!in || in->nops == PTX_MAX_OPS) {
			in = new_insn(ps);
			if (!in)
				return;
			snprintf(in->op, sizeof(in->op), "branchtargets");
		}
		o = &in->ops[in->nops++];
		o->kind = PTX_O_SYM;
		o->reg = -1;
		pp_copy_name(o->sym, TEXT(ps));
		pp_next(ps);
		if (!pp_is_punct(ps, ','))
			break;
		pp_next(ps);
	}
	pp_expect(ps, ';');
}

/* Is the identifier just read a label, "name:" ("name :" for a prototype)? */
static bool label_colon(const struct parser *ps)
{
	const char *p = ps->lx.p;

	while (p < ps->lx.end && (*p == ' ' || *p == '\t'))
		p++;
	return p < ps->lx.end && *p == ':' && (p + 1 >= ps->lx.end || p[1] != ':');
}

void pp_parse_body(struct parser *ps)
{
	int depth = 0, first[64], first_reg[64], id[64], body_reg0;

	pp_expect(ps, '{');
	reg_params_prologue(ps);
	body_reg0 = ps->scope_reg0 = ps->f->nregs;
	while (TOK(ps) != PTX_T_EOF) {
		const char *t = TEXT(ps);

		if (pp_is_punct(ps, '}')) {
			pp_next(ps);
			if (!depth) {
				reg_ret_epilogue(ps);
				return;
			}
			depth--;
			close_scope(ps, id[depth], first[depth], first_reg[depth]);
			ps->scope_reg0 = depth ? first_reg[depth - 1] : body_reg0;
			continue;
		}
		if (pp_is_punct(ps, '{')) {
			if (depth == 64) {
				pp_perr(ps, "scopes nested too deep");
				return;
			}
			first[depth] = ps->f->ninsns;
			first_reg[depth] = ps->f->nregs;
			ps->scope_reg0 = ps->f->nregs;
			id[depth++] = ++ps->nscopes;
			pp_next(ps);
			continue;
		}
		if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".reg")) {
			parse_reg(ps);
		} else if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".shared")) {
			pp_parse_shared(ps, false, false, false);
		} else if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".local")) {
			pp_parse_shared(ps, false, false, true);
		} else if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".param")) {
			parse_call_param(ps);
		} else if (TOK(ps) == PTX_T_IDENT &&
			   (!strcmp(t, ".loc") || !strcmp(t, ".pragma") ||
			    !strcmp(t, ".file"))) {
			pp_skip_line(ps);
		} else if (TOK(ps) == PTX_T_IDENT && t[0] == '.') {
			pp_perr(ps, "unsupported construct: '%s' in a function body", t);
			pp_skip_stmt(ps);
		} else if (TOK(ps) == PTX_T_IDENT && label_colon(ps)) {
			struct ptx_insn *in = new_insn(ps);

			if (!in)
				return;
			pp_copy_name(in->label, t);
			pp_next(ps);
			pp_next(ps); /* ':' */
			if (TOK(ps) == PTX_T_IDENT && (!strcmp(TEXT(ps), ".callprototype") ||
						       !strcmp(TEXT(ps), ".calltargets"))) {
				/* the types (or targets) of an indirect call: only
				 * named by it, nothing to run */
				in->label[0] = '\0';
				ps->f->ninsns--;
				pp_skip_stmt(ps);
			} else if (TOK(ps) == PTX_T_IDENT && !strcmp(TEXT(ps), ".branchtargets")) {
				parse_branchtargets(ps);
			}
		} else {
			parse_insn(ps);
		}
		if (ps->dg->errors > 50)
			return;
	}
	pp_perr(ps, "missing '}' at the end of '%s'", ps->f->name);
}
