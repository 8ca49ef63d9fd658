// SPDX-License-Identifier: MIT
/*
 * PTX parser: the module's directives, its kernels (.entry) with their
 * parameters, register and shared-memory declarations, labels and
 * instructions.  Nested { } scopes (inline asm blocks in nvcc and clang
 * output) are flattened: their registers and labels are renamed so they
 * cannot clash with the enclosing ones.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

void ptx_error(struct ptx_diag *dg, int line, int col, const char *fmt, ...)
{
	va_list ap;
	int n;

	dg->errors++;
	if (!dg->log || !dg->loglen || dg->used + 1 >= dg->loglen)
		return;
	n = snprintf(dg->log + dg->used, dg->loglen - dg->used, "%s:%d:%d: error: ",
		     dg->file, line, col);
	if (n > 0)
		dg->used += (size_t)n;
	if (dg->used + 1 >= dg->loglen) {
		dg->used = dg->loglen - 1;
		return;
	}
	va_start(ap, fmt);
	n = vsnprintf(dg->log + dg->used, dg->loglen - dg->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		dg->used += (size_t)n;
	if (dg->used + 1 >= dg->loglen) {
		dg->used = dg->loglen - 1;
		return;
	}
	dg->log[dg->used++] = '\n';
	dg->log[dg->used] = '\0';
}

struct parser {
	struct ptx_lexer lx;
	struct ptx_diag *dg;
	struct ptx_module *m;
	struct ptx_func *f;
	int scope, nscopes;
	bool failed;
	bool allow_init; /* parse_var may stop at "=" (module variables) */
};

#define TOK(ps) ((ps)->lx.tok)
#define TEXT(ps) ((ps)->lx.text)

static bool is_punct(const struct parser *ps, char c)
{
	return ps->lx.tok == PTX_T_PUNCT && ps->lx.text[0] == c;
}

__attribute__((format(printf, 2, 3))) static void perr(struct parser *ps,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptx_error(ps->dg, ps->lx.tline, ps->lx.tcol, "%s", msg);
	ps->failed = true;
}

static void next(struct parser *ps)
{
	ptx_lex_next(&ps->lx);
}

static bool expect(struct parser *ps, char c)
{
	if (!is_punct(ps, c)) {
		perr(ps, "expected '%c' before '%s'", c,
		     TOK(ps) == PTX_T_EOF ? "end of file" : TEXT(ps));
		return false;
	}
	next(ps);
	return true;
}

/* Skip to just after the next ';' (error recovery, ignored directives). */
static void skip_stmt(struct parser *ps)
{
	while (TOK(ps) != PTX_T_EOF && !is_punct(ps, ';') && !is_punct(ps, '}'))
		next(ps);
	if (is_punct(ps, ';'))
		next(ps);
}

/* Skip the rest of a line-oriented directive (.loc, .file, .pragma). */
static void skip_line(struct parser *ps)
{
	int line = ps->lx.tline;

	next(ps);
	while (TOK(ps) != PTX_T_EOF && ps->lx.tline == line && !is_punct(ps, ';'))
		next(ps);
	if (is_punct(ps, ';') && ps->lx.tline == line)
		next(ps);
}

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

/* Names longer than PTX_NAME_MAX - 1 are cut (the lexer keeps 191). */
static void copy_name(char *dst, const char *src)
{
	size_t n = strnlen(src, PTX_NAME_MAX - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

int ptx_find_reg(const struct ptx_func *f, const char *name)
{
	for (int i = f->nregs - 1; i >= 0; i--)
		if (!strcmp(f->regs[i].name, name))
			return i;
	return -1;
}

/* A type suffix: its width in bits, class and float-ness; 0 if not one. */
static int type_bits(const char *t, bool *is_float, bool *is_pred)
{
	static const struct {
		const char *name;
		int bits;
		bool f;
	} types[] = {
		{ ".b8", 8, false },   { ".u8", 8, false },   { ".s8", 8, false },
		{ ".b16", 16, false }, { ".u16", 16, false }, { ".s16", 16, false },
		{ ".f16", 16, true },  { ".bf16", 16, true }, { ".b32", 32, false },
		{ ".u32", 32, false }, { ".s32", 32, false }, { ".f32", 32, true },
		{ ".b64", 64, false }, { ".u64", 64, false }, { ".s64", 64, false },
		{ ".f64", 64, true },  { ".f16x2", 32, true },
	};

	*is_pred = !strcmp(t, ".pred");
	*is_float = false;
	if (*is_pred)
		return 1;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(t, types[i].name)) {
			*is_float = types[i].f;
			return types[i].bits;
		}
	return 0;
}

static void add_reg(struct parser *ps, const char *name, int bits, bool is_float,
		    bool is_pred)
{
	struct ptx_func *f = ps->f;
	struct ptx_reg *r;
	struct ptx_reg *regs = grow(f->regs, f->nregs, &f->regs_cap, sizeof(*f->regs));

	if (!regs) {
		perr(ps, "out of memory");
		return;
	}
	f->regs = regs;
	r = &f->regs[f->nregs++];
	memset(r, 0, sizeof(*r));
	copy_name(r->name, name);
	r->bits = (uint8_t)bits;
	r->is_float = is_float;
	r->cls = is_pred ? PTX_PRED : bits > 32 ? PTX_R64 : PTX_R32;
}

/* .reg .TYPE %a, %b<N>, ...; */
static void parse_reg(struct parser *ps)
{
	bool is_float, is_pred;
	int bits;

	next(ps);
	while (TOK(ps) == PTX_T_IDENT && TEXT(ps)[0] == '.' &&
	       !type_bits(TEXT(ps), &is_float, &is_pred) &&
	       (!strncmp(TEXT(ps), ".v", 2) || !strcmp(TEXT(ps), ".align")))
		next(ps);
	if (TOK(ps) != PTX_T_IDENT || !(bits = type_bits(TEXT(ps), &is_float, &is_pred))) {
		perr(ps, "unsupported .reg type '%s'", TEXT(ps));
		skip_stmt(ps);
		return;
	}
	next(ps);
	for (;;) {
		char name[PTX_NAME_MAX];

		if (TOK(ps) != PTX_T_IDENT) {
			perr(ps, "expected a register name in .reg, not '%s'", TEXT(ps));
			skip_stmt(ps);
			return;
		}
		copy_name(name, TEXT(ps));
		next(ps);
		if (is_punct(ps, '<')) {
			int64_t count;

			next(ps);
			count = ps->lx.value;
			if (TOK(ps) != PTX_T_INT || count < 0 || count > 65536) {
				perr(ps, "bad register count '%s'", TEXT(ps));
				skip_stmt(ps);
				return;
			}
			next(ps);
			if (!expect(ps, '>')) {
				skip_stmt(ps);
				return;
			}
			for (int64_t i = 0; i < count; i++) {
				char rn[PTX_NAME_MAX + 16];

				snprintf(rn, sizeof(rn), "%s%lld", name, (long long)i);
				add_reg(ps, rn, bits, is_float, is_pred);
			}
		} else {
			add_reg(ps, name, bits, is_float, is_pred);
		}
		if (is_punct(ps, ',')) {
			next(ps);
			continue;
		}
		break;
	}
	expect(ps, ';');
}

/*
 * [.extern] .shared [.align N] .TYPE name[N]...;  (also for parameters:
 * .param [.align N] .TYPE name[N]).  Returns false on error.
 */
static bool parse_var(struct parser *ps, char *name, uint32_t *size,
		      uint32_t *align, char *type)
{
	bool is_float, is_pred;
	int bits = 0;

	*align = 0;
	while (TOK(ps) == PTX_T_IDENT && TEXT(ps)[0] == '.') {
		int b = type_bits(TEXT(ps), &is_float, &is_pred);

		if (!strcmp(TEXT(ps), ".align")) {
			next(ps);
			if (TOK(ps) != PTX_T_INT) {
				perr(ps, "expected an alignment after .align");
				return false;
			}
			*align = (uint32_t)ps->lx.value;
		} else if (b) {
			bits = b;
			snprintf(type, 8, "%s", TEXT(ps) + 1);
		} else if (!strcmp(TEXT(ps), ".ptr") || !strcmp(TEXT(ps), ".global") ||
			   !strcmp(TEXT(ps), ".shared") || !strcmp(TEXT(ps), ".const") ||
			   !strcmp(TEXT(ps), ".local")) {
			/* pointer attributes of a parameter */
		} else {
			perr(ps, "unsupported qualifier '%s'", TEXT(ps));
			return false;
		}
		next(ps);
	}
	if (!bits || bits == 1) {
		perr(ps, "expected a type before '%s'", TEXT(ps));
		return false;
	}
	if (TOK(ps) != PTX_T_IDENT) {
		perr(ps, "expected a name, not '%s'", TEXT(ps));
		return false;
	}
	copy_name(name, TEXT(ps));
	next(ps);
	*size = (uint32_t)bits / 8;
	if (!*align)
		*align = *size;
	while (is_punct(ps, '[')) {
		next(ps);
		if (is_punct(ps, ']')) {
			*size = 0; /* extern: unsized */
		} else if (TOK(ps) == PTX_T_INT && ps->lx.value > 0 &&
			   ps->lx.value < (1 << 24)) {
			*size *= (uint32_t)ps->lx.value;
			next(ps);
		} else {
			perr(ps, "bad array size '%s'", TEXT(ps));
			return false;
		}
		if (!expect(ps, ']'))
			return false;
	}
	if (is_punct(ps, '=') && !ps->allow_init) {
		perr(ps, "initialisers are not supported");
		return false;
	}
	return true;
}

/* A .shared variable, or with @local a .local one of the function. */
/* One initial value of @bits at @p (integers and 0f/0d floats). */
static bool parse_init_value(struct parser *ps, uint8_t *p, int bits)
{
	bool minus = false;
	uint64_t v;

	if (is_punct(ps, '-')) {
		minus = true;
		next(ps);
	}
	if (TOK(ps) != PTX_T_INT && TOK(ps) != PTX_T_FLOAT) {
		perr(ps, "unsupported construct: the initial value '%s' (numbers only)",
		     TEXT(ps));
		return false;
	}
	v = (uint64_t)ps->lx.value;
	if (TOK(ps) == PTX_T_FLOAT && minus)
		v ^= ps->lx.is_double ? (uint64_t)INT64_MIN : 0x80000000u;
	else if (minus)
		v = (uint64_t)-(int64_t)v;
	if (TOK(ps) == PTX_T_FLOAT && bits == 64 && !ps->lx.is_double) {
		perr(ps, "unsupported construct: an f32 literal for a 64-bit value");
		return false;
	}
	for (int i = 0; i < bits / 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	next(ps);
	return true;
}

/*
 * .global / .const [.align N] .TYPE name[N] [= value | = { values }];
 * at module scope: module data (ptx_gvar), laid out in order.
 */
static void parse_global(struct parser *ps)
{
	struct ptx_gvar v, *arr;
	char type[8];
	int bits;
	bool is_float, is_pred;

	memset(&v, 0, sizeof(v));
	v.line = ps->lx.tline;
	next(ps);
	ps->allow_init = true;
	if (!parse_var(ps, v.name, &v.size, &v.align, type)) {
		ps->allow_init = false;
		skip_stmt(ps);
		return;
	}
	ps->allow_init = false;
	if (!v.size) {
		perr(ps, "unsupported construct: an unsized module variable '%s'", v.name);
		skip_stmt(ps);
		return;
	}
	{
		char t[16];

		snprintf(t, sizeof(t), ".%.8s", type);
		bits = type_bits(t, &is_float, &is_pred);
	}
	if (bits < 8) {
		perr(ps, "unsupported construct: a module variable of type .%s", type);
		skip_stmt(ps);
		return;
	}
	if (is_punct(ps, '=')) {
		uint32_t n = 0, esz = (uint32_t)bits / 8;

		next(ps);
		v.init = calloc(1, v.size);
		if (!v.init) {
			perr(ps, "out of memory");
			return;
		}
		if (is_punct(ps, '{')) {
			next(ps);
			while (!is_punct(ps, '}')) {
				if ((n + 1) * esz > v.size) {
					perr(ps, "too many initial values for '%s'", v.name);
					free(v.init);
					skip_stmt(ps);
					return;
				}
				if (!parse_init_value(ps, v.init + n * esz, bits)) {
					free(v.init);
					skip_stmt(ps);
					return;
				}
				n++;
				if (is_punct(ps, ','))
					next(ps);
			}
			next(ps);
		} else if (!parse_init_value(ps, v.init, bits)) {
			free(v.init);
			skip_stmt(ps);
			return;
		}
	}
	if (!v.align)
		v.align = 1;
	v.offset = (ps->m->data_size + v.align - 1) / v.align * v.align;
	if ((uint64_t)v.offset + v.size > (16u << 20)) {
		perr(ps, "unsupported construct: more than 16 MiB of module data at '%s'", v.name);
		free(v.init);
		skip_stmt(ps);
		return;
	}
	arr = realloc(ps->m->globals, (size_t)(ps->m->nglobals + 1) * sizeof(*arr));
	if (!arr) {
		free(v.init);
		perr(ps, "out of memory");
		return;
	}
	ps->m->globals = arr;
	arr[ps->m->nglobals++] = v;
	ps->m->data_size = v.offset + v.size;
	expect(ps, ';');
}

static void parse_shared(struct parser *ps, bool module_scope, bool is_extern,
			 bool local)
{
	struct ptx_var v;
	char type[8];
	struct ptx_var **arr = local ? &ps->f->local :
			       module_scope ? &ps->m->shared : &ps->f->shared;
	int *n = local ? &ps->f->nlocal : module_scope ? &ps->m->nshared : &ps->f->nshared;
	struct ptx_var *p;

	memset(&v, 0, sizeof(v));
	v.line = ps->lx.tline;
	next(ps);
	if (!parse_var(ps, v.name, &v.size, &v.align, type)) {
		skip_stmt(ps);
		return;
	}
	if (is_extern || !v.size) {
		ptx_error(ps->dg, v.line, 1,
			  "unsupported construct: dynamic (extern) %s '%s'",
			  local ? ".local" : ".shared", v.name);
		ps->failed = true;
		skip_stmt(ps);
		return;
	}
	p = realloc(*arr, (size_t)(*n + 1) * sizeof(**arr));
	if (!p) {
		perr(ps, "out of memory");
		return;
	}
	*arr = p;
	p[(*n)++] = v;
	expect(ps, ';');
}

/* One operand; @ins gives the register table. */
static bool parse_operand(struct parser *ps, struct ptx_operand *o)
{
	memset(o, 0, sizeof(*o));
	o->reg = -1;
	o->col = ps->lx.tcol;
	if (is_punct(ps, '!')) {
		o->neg = true;
		next(ps);
	}
	if (is_punct(ps, '-') || TOK(ps) == PTX_T_INT || TOK(ps) == PTX_T_FLOAT) {
		bool minus = is_punct(ps, '-');

		if (minus)
			next(ps);
		if (TOK(ps) != PTX_T_INT && TOK(ps) != PTX_T_FLOAT) {
			perr(ps, "expected a number after '-'");
			return false;
		}
		o->kind = PTX_O_IMM;
		o->fimm = TOK(ps) == PTX_T_FLOAT;
		o->imm = ps->lx.value;
		if (minus && !o->fimm) {
			o->imm = -o->imm;
		} else if (minus) {
			if (ps->lx.is_double)
				o->imm ^= INT64_MIN;
			else
				o->imm ^= 0x80000000;
		}
		if (o->fimm && ps->lx.is_double)
			o->sym[0] = 'd'; /* a double literal */
		next(ps);
		return true;
	}
	if (is_punct(ps, '{')) {
		next(ps);
		o->kind = PTX_O_VEC;
		while (!is_punct(ps, '}')) {
			if (o->nvec == 5) {
				perr(ps, "too many elements in a vector operand");
				return false;
			}
			if (TOK(ps) == PTX_T_IDENT && !strcmp(TEXT(ps), "_")) {
				o->vec[o->nvec++] = -1;
			} else if (TOK(ps) == PTX_T_IDENT &&
				   (o->vec[o->nvec] = ptx_find_reg(ps->f, TEXT(ps))) >= 0) {
				o->nvec++;
			} else {
				perr(ps, "expected a register in a vector operand, not '%s'",
				     TEXT(ps));
				return false;
			}
			next(ps);
			if (is_punct(ps, ','))
				next(ps);
		}
		next(ps);
		return true;
	}
	if (is_punct(ps, '[')) {
		next(ps);
		o->kind = PTX_O_MEM;
		if (TOK(ps) == PTX_T_IDENT) {
			int r = ptx_find_reg(ps->f, TEXT(ps));

			if (r >= 0)
				o->reg = r;
			else
				copy_name(o->sym, TEXT(ps));
			next(ps);
		} else if (TOK(ps) == PTX_T_INT) {
			o->imm = ps->lx.value;
			next(ps);
		} else {
			perr(ps, "expected an address, not '%s'", TEXT(ps));
			return false;
		}
		while (is_punct(ps, '+') || is_punct(ps, '-')) {
			bool minus = is_punct(ps, '-');

			next(ps);
			if (is_punct(ps, '-')) { /* [%rd+-8] */
				minus = !minus;
				next(ps);
			}
			if (TOK(ps) != PTX_T_INT) {
				perr(ps, "expected an offset, not '%s'", TEXT(ps));
				return false;
			}
			o->imm += minus ? -ps->lx.value : ps->lx.value;
			next(ps);
		}
		if (is_punct(ps, ',')) { /* [tensor-map, {coordinates}] */
			struct ptx_operand v;

			next(ps);
			if (!parse_operand(ps, &v) || v.kind != PTX_O_VEC) {
				perr(ps, "expected {coordinates} in a tensor address");
				return false;
			}
			o->nvec = v.nvec;
			memcpy(o->vec, v.vec, sizeof(o->vec));
		}
		return expect(ps, ']');
	}
	if (TOK(ps) == PTX_T_IDENT) {
		int r = ptx_find_reg(ps->f, TEXT(ps));

		if (!strcmp(TEXT(ps), "_")) {
			o->kind = PTX_O_SINK;
		} else if (r >= 0) {
			o->kind = PTX_O_REG;
			o->reg = r;
		} else {
			o->kind = PTX_O_SYM;
			copy_name(o->sym, TEXT(ps));
		}
		next(ps);
		if (o->kind == PTX_O_SYM && is_punct(ps, '+')) { /* sym+4 */
			next(ps);
			if (TOK(ps) != PTX_T_INT) {
				perr(ps, "expected an offset after '+'");
				return false;
			}
			o->imm = ps->lx.value;
			next(ps);
		}
		if ((o->kind == PTX_O_REG || o->kind == PTX_O_SINK) && is_punct(ps, '|')) {
			next(ps); /* d|p */
			o->has_p = true;
			o->preg = -1;
			if (TOK(ps) == PTX_T_IDENT && strcmp(TEXT(ps), "_"))
				o->preg = ptx_find_reg(ps->f, TEXT(ps));
			if (TOK(ps) != PTX_T_IDENT || (strcmp(TEXT(ps), "_") && o->preg < 0) ||
			    (o->preg >= 0 && ps->f->regs[o->preg].cls != PTX_PRED)) {
				perr(ps, "expected a predicate register or _ after '|', not '%s'",
				     TEXT(ps));
				return false;
			}
			next(ps);
		}
		return true;
	}
	perr(ps, "unexpected '%s' in an operand", TEXT(ps));
	return false;
}

static struct ptx_insn *new_insn(struct parser *ps)
{
	struct ptx_func *f = ps->f;
	struct ptx_insn *arr = grow(f->insns, f->ninsns, &f->insns_cap, sizeof(*arr));

	if (!arr) {
		perr(ps, "out of memory");
		return NULL;
	}
	f->insns = arr;
	memset(&arr[f->ninsns], 0, sizeof(arr[0]));
	arr[f->ninsns].guard = -1;
	arr[f->ninsns].line = ps->lx.tline;
	arr[f->ninsns].col = ps->lx.tcol;
	return &arr[f->ninsns++];
}

/* mnemonic.mod.mod... -> op and modifiers */
static bool split_mnemonic(struct parser *ps, struct ptx_insn *in, const char *text)
{
	const char *dot = strchr(text, '.');
	size_t n = dot ? (size_t)(dot - text) : strlen(text);

	if (n >= sizeof(in->op)) {
		perr(ps, "unknown instruction '%s'", text);
		return false;
	}
	memcpy(in->op, text, n);
	in->op[n] = '\0';
	while (dot) {
		const char *e = strchr(dot + 1, '.');
		size_t k = e ? (size_t)(e - dot) : strlen(dot);

		if (in->nmods == PTX_MAX_MODS || k >= sizeof(in->mods[0])) {
			perr(ps, "too many modifiers in '%s'", text);
			return false;
		}
		memcpy(in->mods[in->nmods], dot, k);
		in->mods[in->nmods++][k] = '\0';
		dot = e;
	}
	return true;
}

static void parse_call(struct parser *ps, struct ptx_insn *in);

static void parse_insn(struct parser *ps)
{
	struct ptx_insn *in = new_insn(ps);

	if (!in)
		return;
	if (is_punct(ps, '@')) {
		next(ps);
		if (is_punct(ps, '!')) {
			in->guard_not = true;
			next(ps);
		}
		if (TOK(ps) != PTX_T_IDENT || (in->guard = ptx_find_reg(ps->f, TEXT(ps))) < 0 ||
		    ps->f->regs[in->guard].cls != PTX_PRED) {
			perr(ps, "expected a predicate register after '@', not '%s'", TEXT(ps));
			skip_stmt(ps);
			return;
		}
		next(ps);
	}
	if (TOK(ps) != PTX_T_IDENT) {
		perr(ps, "expected an instruction, not '%s'", TEXT(ps));
		skip_stmt(ps);
		return;
	}
	in->line = ps->lx.tline;
	in->col = ps->lx.tcol;
	if (!split_mnemonic(ps, in, TEXT(ps))) {
		skip_stmt(ps);
		return;
	}
	next(ps);
	if (!strcmp(in->op, "call")) {
		parse_call(ps, in);
		return;
	}
	while (!is_punct(ps, ';')) {
		if (in->nops == PTX_MAX_OPS) {
			perr(ps, "too many operands");
			skip_stmt(ps);
			return;
		}
		if (!parse_operand(ps, &in->ops[in->nops++])) {
			skip_stmt(ps);
			return;
		}
		if (is_punct(ps, ','))
			next(ps);
		else if (!is_punct(ps, ';')) {
			perr(ps, "expected ',' or ';' after an operand, not '%s'", TEXT(ps));
			skip_stmt(ps);
			return;
		}
	}
	next(ps);
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
		copy_name(old, f->insns[i].label);
		snprintf(f->insns[i].label, PTX_NAME_MAX, "%.70s__s%d", old, id);
		for (int j = first; j < f->ninsns; j++)
			for (int k = 0; k < f->insns[j].nops; k++)
				if (f->insns[j].ops[k].kind == PTX_O_SYM &&
				    !strcmp(f->insns[j].ops[k].sym, old))
					copy_name(f->insns[j].ops[k].sym, f->insns[i].label);
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

	next(ps);
	if (!parse_var(ps, name, &size, &align, type)) {
		skip_stmt(ps);
		return;
	}
	if (size != 4 && size != 8) {
		ptx_error(ps->dg, line, 1,
			  "unsupported construct: a call parameter of %u bytes ('%s'; "
			  "structures by value)", size, name);
		ps->failed = true;
		skip_stmt(ps);
		return;
	}
	add_reg(ps, name, (int)size * 8, type[0] == 'f', false);
	if (ps->f->nregs)
		ps->f->regs[ps->f->nregs - 1].is_param = true;
	expect(ps, ';');
}

/* call[.uni] [(ret),] func[, (arg, ...)]; */
static void parse_call(struct parser *ps, struct ptx_insn *in)
{
	struct ptx_operand *o;

	if (is_punct(ps, '(')) {
		next(ps);
		o = &in->ops[in->nops++];
		if (!parse_operand(ps, o) || o->kind != PTX_O_REG) {
			perr(ps, "expected a return parameter in ( )");
			skip_stmt(ps);
			return;
		}
		in->call_ret = true;
		if (!expect(ps, ')') || !expect(ps, ',')) {
			skip_stmt(ps);
			return;
		}
	}
	o = &in->ops[in->nops++];
	if (TOK(ps) != PTX_T_IDENT || ptx_find_reg(ps->f, TEXT(ps)) >= 0) {
		perr(ps, "unsupported construct: an indirect call (through '%s')", TEXT(ps));
		skip_stmt(ps);
		return;
	}
	memset(o, 0, sizeof(*o));
	o->kind = PTX_O_SYM;
	o->reg = -1;
	o->col = ps->lx.tcol;
	copy_name(o->sym, TEXT(ps));
	next(ps);
	if (is_punct(ps, ',')) {
		next(ps);
		if (!expect(ps, '(')) {
			skip_stmt(ps);
			return;
		}
		while (!is_punct(ps, ')')) {
			if (in->nops == PTX_MAX_OPS) {
				perr(ps, "unsupported construct: a call with more than %d arguments",
				     PTX_MAX_OPS - 2);
				skip_stmt(ps);
				return;
			}
			o = &in->ops[in->nops++];
			if (!parse_operand(ps, o) || o->kind != PTX_O_REG) {
				perr(ps, "expected a call parameter");
				skip_stmt(ps);
				return;
			}
			if (is_punct(ps, ','))
				next(ps);
			else if (!is_punct(ps, ')')) {
				perr(ps, "expected ',' or ')' in call arguments, not '%s'", TEXT(ps));
				skip_stmt(ps);
				return;
			}
		}
		next(ps);
	}
	if (is_punct(ps, ',')) {
		perr(ps, "unsupported construct: a call through a prototype");
		skip_stmt(ps);
		return;
	}
	expect(ps, ';');
}

static void parse_body(struct parser *ps)
{
	int depth = 0, first[64], first_reg[64], id[64];

	expect(ps, '{');
	while (TOK(ps) != PTX_T_EOF) {
		const char *t = TEXT(ps);

		if (is_punct(ps, '}')) {
			next(ps);
			if (!depth)
				return;
			depth--;
			close_scope(ps, id[depth], first[depth], first_reg[depth]);
			continue;
		}
		if (is_punct(ps, '{')) {
			if (depth == 64) {
				perr(ps, "scopes nested too deep");
				return;
			}
			first[depth] = ps->f->ninsns;
			first_reg[depth] = ps->f->nregs;
			id[depth++] = ++ps->nscopes;
			next(ps);
			continue;
		}
		if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".reg")) {
			parse_reg(ps);
		} else if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".shared")) {
			parse_shared(ps, false, false, false);
		} else if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".local")) {
			parse_shared(ps, false, false, true);
		} else if (TOK(ps) == PTX_T_IDENT && !strcmp(t, ".param")) {
			parse_call_param(ps);
		} else if (TOK(ps) == PTX_T_IDENT &&
			   (!strcmp(t, ".loc") || !strcmp(t, ".pragma") ||
			    !strcmp(t, ".file"))) {
			skip_line(ps);
		} else if (TOK(ps) == PTX_T_IDENT && t[0] == '.') {
			perr(ps, "unsupported construct: '%s' in a function body", t);
			skip_stmt(ps);
		} else if (TOK(ps) == PTX_T_IDENT && ps->lx.p < ps->lx.end &&
			   *ps->lx.p == ':' && (ps->lx.p + 1 >= ps->lx.end || ps->lx.p[1] != ':')) {
			struct ptx_insn *in = new_insn(ps);

			if (!in)
				return;
			copy_name(in->label, t);
			next(ps);
			next(ps); /* ':' */
		} else {
			parse_insn(ps);
		}
		if (ps->dg->errors > 50)
			return;
	}
	perr(ps, "missing '}' at the end of '%s'", ps->f->name);
}

static void parse_entry(struct parser *ps, bool entry)
{
	struct ptx_func *fs = realloc(ps->m->funcs, (size_t)(ps->m->nfuncs + 1) *
							    sizeof(*fs));

	if (!fs) {
		perr(ps, "out of memory");
		return;
	}
	ps->m->funcs = fs;
	ps->f = &fs[ps->m->nfuncs++];
	memset(ps->f, 0, sizeof(*ps->f));
	ps->f->entry = entry;
	ps->f->line = ps->lx.tline;
	next(ps);
	if (is_punct(ps, '(') && !entry) { /* .func (.param .b32 ret) name */
		struct ptx_param *r = &ps->f->ret;

		next(ps);
		r->line = ps->lx.tline;
		if (TOK(ps) != PTX_T_IDENT || strcmp(TEXT(ps), ".param")) {
			perr(ps, "expected .param in a return value, not '%s'", TEXT(ps));
			return;
		}
		next(ps);
		if (!parse_var(ps, r->name, &r->size, &r->align, r->type) || !expect(ps, ')'))
			return;
		ps->f->has_ret = true;
	}
	if (TOK(ps) != PTX_T_IDENT) {
		perr(ps, "expected a kernel name, not '%s'", TEXT(ps));
		return;
	}
	copy_name(ps->f->name, TEXT(ps));
	next(ps);
	if (is_punct(ps, '(')) {
		next(ps);
		while (!is_punct(ps, ')') && TOK(ps) != PTX_T_EOF) {
			struct ptx_param p;
			struct ptx_param *arr;

			memset(&p, 0, sizeof(p));
			p.line = ps->lx.tline;
			if (TOK(ps) != PTX_T_IDENT || strcmp(TEXT(ps), ".param")) {
				perr(ps, "expected .param, not '%s'", TEXT(ps));
				return;
			}
			next(ps);
			if (!parse_var(ps, p.name, &p.size, &p.align, p.type))
				return;
			arr = realloc(ps->f->params, (size_t)(ps->f->nparams + 1) * sizeof(*arr));
			if (!arr) {
				perr(ps, "out of memory");
				return;
			}
			ps->f->params = arr;
			arr[ps->f->nparams++] = p;
			if (is_punct(ps, ','))
				next(ps);
		}
		expect(ps, ')');
	}
	/* performance directives: .maxntid 128, 1, 1 and friends */
	while (TOK(ps) == PTX_T_IDENT && TEXT(ps)[0] == '.') {
		next(ps);
		while (TOK(ps) == PTX_T_INT) {
			next(ps);
			if (is_punct(ps, ','))
				next(ps);
		}
	}
	if (is_punct(ps, ';')) { /* a declaration: calls name it */
		next(ps);
		ps->f->decl = true;
		return;
	}
	parse_body(ps);
}

int ptx_parse(const char *src, size_t len, struct ptx_diag *dg, struct ptx_module *m)
{
	struct parser ps;

	memset(m, 0, sizeof(*m));
	memset(&ps, 0, sizeof(ps));
	ps.dg = dg;
	ps.m = m;
	ptx_lex_init(&ps.lx, src, len);
	while (TOK(&ps) != PTX_T_EOF && !ps.failed) {
		const char *t = TEXT(&ps);

		if (TOK(&ps) != PTX_T_IDENT) {
			perr(&ps, "unexpected '%s' at module scope", t);
			break;
		}
		if (!strcmp(t, ".version") || !strcmp(t, ".file") || !strcmp(t, ".loc") ||
		    !strcmp(t, ".pragma")) {
			skip_line(&ps);
		} else if (!strcmp(t, ".target")) {
			next(&ps);
			snprintf(m->target, sizeof(m->target), "%.31s", TEXT(&ps));
			while (TOK(&ps) == PTX_T_IDENT || is_punct(&ps, ',')) {
				int line = ps.lx.tline;

				next(&ps);
				if (ps.lx.tline != line)
					break;
			}
		} else if (!strcmp(t, ".address_size")) {
			next(&ps);
			m->addr_size = (int)ps.lx.value;
			if (m->addr_size != 64)
				perr(&ps, "unsupported construct: .address_size %d (64 only)",
				     m->addr_size);
			next(&ps);
		} else if (!strcmp(t, ".visible") || !strcmp(t, ".weak")) {
			next(&ps);
		} else if (!strcmp(t, ".extern")) {
			next(&ps);
			if (TOK(&ps) == PTX_T_IDENT && !strcmp(TEXT(&ps), ".shared"))
				parse_shared(&ps, true, true, false);
			else if (TOK(&ps) == PTX_T_IDENT && !strcmp(TEXT(&ps), ".func"))
				parse_entry(&ps, false);
		} else if (!strcmp(t, ".entry") || !strcmp(t, ".func")) {
			parse_entry(&ps, t[1] == 'e');
		} else if (!strcmp(t, ".shared")) {
			parse_shared(&ps, true, false, false);
		} else if (!strcmp(t, ".global") || !strcmp(t, ".const")) {
			parse_global(&ps);
		} else if (!strcmp(t, ".section")) {
			perr(&ps, "unsupported construct: .section (debug information)");
		} else {
			perr(&ps, "unsupported construct: '%s' at module scope", t);
		}
	}
	return dg->errors ? -EINVAL : 0;
}

void ptx_module_free(struct ptx_module *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		free(m->funcs[i].params);
		free(m->funcs[i].regs);
		free(m->funcs[i].shared);
		free(m->funcs[i].local);
		free(m->funcs[i].insns);
	}
	free(m->funcs);
	free(m->shared);
	for (int i = 0; i < m->nglobals; i++)
		free(m->globals[i].init);
	free(m->globals);
	memset(m, 0, sizeof(*m));
}
