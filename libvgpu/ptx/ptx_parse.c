// SPDX-License-Identifier: MIT
/*
 * PTX parser, module level: the module's directives, its .global/.const
 * variables with their initial values, .shared declarations, the headers
 * of kernels (.entry) and functions (.func) with their parameters and
 * return value, and the low-level helpers both halves of the parser use
 * (tokens, diagnostics, types, variable declarations).  Function bodies
 * are parsed in ptx_parse_body.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_parse.h"

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

bool pp_is_punct(const struct parser *ps, char c)
{
	return ps->lx.tok == PTX_T_PUNCT && ps->lx.text[0] == c;
}

__attribute__((format(printf, 2, 3))) void pp_perr(struct parser *ps, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptx_error(ps->dg, ps->lx.tline, ps->lx.tcol, "%s", msg);
	ps->failed = true;
}

void pp_next(struct parser *ps)
{
	ptx_lex_next(&ps->lx);
}

bool pp_expect(struct parser *ps, char c)
{
	if (!pp_is_punct(ps, c)) {
		pp_perr(ps, "expected '%c' before '%s'", c,
			TOK(ps) == PTX_T_EOF ? "end of file" : TEXT(ps));
		return false;
	}
	pp_next(ps);
	return true;
}

/* Skip to just after the next ';' (error recovery, ignored directives). */
void pp_skip_stmt(struct parser *ps)
{
	while (TOK(ps) != PTX_T_EOF && !pp_is_punct(ps, ';') && !pp_is_punct(ps, '}'))
		pp_next(ps);
	if (pp_is_punct(ps, ';'))
		pp_next(ps);
}

/* Skip the rest of a line-oriented directive (.loc, .file, .pragma). */
void pp_skip_line(struct parser *ps)
{
	int line = ps->lx.tline;

	pp_next(ps);
	while (TOK(ps) != PTX_T_EOF && ps->lx.tline == line && !pp_is_punct(ps, ';'))
		pp_next(ps);
	if (pp_is_punct(ps, ';') && ps->lx.tline == line)
		pp_next(ps);
}

/* Names longer than PTX_NAME_MAX - 1 are cut (the lexer keeps 191). */
void pp_copy_name(char *dst, const char *src)
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
int pp_type_bits(const char *t, bool *is_float, bool *is_pred)
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
		{ ".f64", 64, true },  { ".f16x2", 32, true }, { ".b128", 128, false },
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

/*
 * [.extern] .shared [.align N] .TYPE name[N]...;  (also for parameters:
 * .param [.align N] .TYPE name[N]).  Returns false on error.
 */
bool pp_parse_var(struct parser *ps, char *name, uint32_t *size, uint32_t *align,
		  char *type)
{
	bool is_float, is_pred;
	int bits = 0;

	*align = 0;
	while (TOK(ps) == PTX_T_IDENT && TEXT(ps)[0] == '.') {
		int b = pp_type_bits(TEXT(ps), &is_float, &is_pred);

		if (!strcmp(TEXT(ps), ".align")) {
			pp_next(ps);
			if (TOK(ps) != PTX_T_INT) {
				pp_perr(ps, "expected an alignment after .align");
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
			pp_perr(ps, "unsupported qualifier '%s'", TEXT(ps));
			return false;
		}
		pp_next(ps);
	}
	if (!bits || bits == 1) {
		pp_perr(ps, "expected a type before '%s'", TEXT(ps));
		return false;
	}
	if (TOK(ps) != PTX_T_IDENT) {
		pp_perr(ps, "expected a name, not '%s'", TEXT(ps));
		return false;
	}
	pp_copy_name(name, TEXT(ps));
	pp_next(ps);
	*size = (uint32_t)bits / 8;
	if (!*align)
		*align = *size;
	while (pp_is_punct(ps, '[')) {
		pp_next(ps);
		if (pp_is_punct(ps, ']')) {
			*size = 0; /* extern: unsized */
		} else if (TOK(ps) == PTX_T_INT && ps->lx.value > 0 &&
			   ps->lx.value < (1 << 24)) {
			*size *= (uint32_t)ps->lx.value;
			pp_next(ps);
		} else {
			pp_perr(ps, "bad array size '%s'", TEXT(ps));
			return false;
		}
		if (!pp_expect(ps, ']'))
			return false;
	}
	if (pp_is_punct(ps, '=') && !ps->allow_init) {
		pp_perr(ps, "initialisers are not supported");
		return false;
	}
	return true;
}

/* Any "+ N" / "- N" after an address: added to *@addend. */
static bool parse_addend(struct parser *ps, int64_t *addend)
{
	while (pp_is_punct(ps, '+') || pp_is_punct(ps, '-')) {
		bool minus = pp_is_punct(ps, '-');

		pp_next(ps);
		if (TOK(ps) != PTX_T_INT) {
			pp_perr(ps, "expected a byte offset, not '%s'", TEXT(ps));
			return false;
		}
		*addend = (int64_t)((uint64_t)*addend + (minus ? -(uint64_t)ps->lx.value :
								 (uint64_t)ps->lx.value));
		pp_next(ps);
	}
	return true;
}

/*
 * An address as the initial value at @off of @g, an element of @bits
 * (PTX ISA 5.4.4): NAME, NAME+N, generic(NAME), generic(NAME)+N,
 * generic(NAME+N); with @byte >= 0 (inside mask()) only that byte of it.
 * The name is resolved when the module is complete (ptx.c).
 */
static bool parse_init_addr(struct parser *ps, struct ptx_gvar *g, uint32_t off, int bits,
			    int byte)
{
	struct ptx_aref a = { .off = off, .byte = byte };
	struct ptx_aref *arr;
	bool generic = false;

	a.line = ps->lx.tline;
	a.col = ps->lx.tcol;
	if (TOK(ps) == PTX_T_IDENT && !strcmp(TEXT(ps), "generic")) {
		pp_next(ps);
		generic = pp_is_punct(ps, '(');
		if (generic) {
			pp_next(ps);
			a.line = ps->lx.tline;
			a.col = ps->lx.tcol;
		} else {
			pp_copy_name(a.name, "generic"); /* a variable of that name */
		}
	}
	if (!a.name[0]) {
		if (TOK(ps) != PTX_T_IDENT) {
			pp_perr(ps, "expected a variable or function name, not '%s'", TEXT(ps));
			return false;
		}
		pp_copy_name(a.name, TEXT(ps));
		pp_next(ps);
	}
	if (!parse_addend(ps, &a.addend) ||
	    (generic && (!pp_expect(ps, ')') || !parse_addend(ps, &a.addend))))
		return false;
	if (byte < 0 && bits != 64) {
		ptx_error(ps->dg, a.line, a.col, "unsupported construct: the address of '%s' in "
			  "a %d-bit element of '%s' (addresses are 64 bits)", a.name, bits, g->name);
		ps->failed = true;
		return false;
	}
	arr = realloc(g->arefs, (size_t)(g->narefs + 1) * sizeof(*arr));
	if (!arr) {
		pp_perr(ps, "out of memory");
		return false;
	}
	g->arefs = arr;
	arr[g->narefs++] = a;
	return true;
}

/*
 * MASK(expr) (PTX ISA 5.4.4, mask()): one byte of an address or a number
 * as the value at @off of @g: 0xFF00(generic(v)) is byte 1 of v's
 * address.  @mask (at @line, @col) must be 0xFF at a byte boundary.
 */
static bool parse_init_mask(struct parser *ps, struct ptx_gvar *g, uint32_t off,
			    uint64_t mask, int line, int col)
{
	int byte = -1;

	for (int k = 0; k < 8; k++)
		if (mask == 0xffull << (8 * k))
			byte = k;
	if (byte < 0) {
		ptx_error(ps->dg, line, col, "unsupported construct: the mask 0x%llx (one byte "
			  "at a byte boundary only)", (unsigned long long)mask);
		ps->failed = true;
		return false;
	}
	pp_next(ps); /* ( */
	if (TOK(ps) == PTX_T_INT) {
		int64_t v = ps->lx.value;

		pp_next(ps);
		if (!parse_addend(ps, &v))
			return false;
		g->init[off] = (uint8_t)((uint64_t)v >> (8 * byte));
	} else if (!parse_init_addr(ps, g, off, 8, byte)) {
		return false;
	}
	return pp_expect(ps, ')');
}

/*
 * One initial value of @bits at @off of @g: an integer, a 0f/0d float,
 * an address or a byte of one.
 */
static bool parse_init_value(struct parser *ps, struct ptx_gvar *g, uint32_t off, int bits)
{
	uint8_t *p = g->init + off;
	bool minus = false, is_float;
	int line, col;
	uint64_t v;

	if (TOK(ps) == PTX_T_IDENT)
		return parse_init_addr(ps, g, off, bits, -1);
	if (pp_is_punct(ps, '-')) {
		minus = true;
		pp_next(ps);
	}
	if (TOK(ps) != PTX_T_INT && TOK(ps) != PTX_T_FLOAT) {
		pp_perr(ps, "unsupported construct: the initial value '%s' (numbers and "
			"addresses only)", TEXT(ps));
		return false;
	}
	v = (uint64_t)ps->lx.value;
	is_float = TOK(ps) == PTX_T_FLOAT;
	if (is_float && bits == 64 && !ps->lx.is_double) {
		pp_perr(ps, "unsupported construct: an f32 literal for a 64-bit value");
		return false;
	}
	if (is_float && bits > 64) {
		pp_perr(ps, "unsupported construct: a floating-point initial value of a .b128");
		return false;
	}
	if (!is_float && ps->lx.overflow) {
		pp_perr(ps, "constant overflow: '%s' is wider than 64 bits", TEXT(ps));
		return false;
	}
	if (is_float && minus)
		v ^= ps->lx.is_double ? (uint64_t)INT64_MIN : 0x80000000u;
	else if (minus)
		v = (uint64_t)-(int64_t)v;
	line = ps->lx.tline;
	col = ps->lx.tcol;
	pp_next(ps);
	if (!is_float && !minus && pp_is_punct(ps, '('))
		return parse_init_mask(ps, g, off, v, line, col);
	/* a .b128's literal: its 64 bits zero-extended, as mov.b128's */
	for (int i = 0; i < bits / 8; i++)
		p[i] = i < 8 ? (uint8_t)(v >> (8 * i)) : 0;
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
	pp_next(ps);
	ps->allow_init = true;
	if (!pp_parse_var(ps, v.name, &v.size, &v.align, type)) {
		ps->allow_init = false;
		pp_skip_stmt(ps);
		return;
	}
	ps->allow_init = false;
	if (!v.size) {
		pp_perr(ps, "unsupported construct: an unsized module variable '%s'", v.name);
		pp_skip_stmt(ps);
		return;
	}
	{
		char t[16];

		snprintf(t, sizeof(t), ".%.8s", type);
		bits = pp_type_bits(t, &is_float, &is_pred);
	}
	if (bits < 8) {
		pp_perr(ps, "unsupported construct: a module variable of type .%s", type);
		pp_skip_stmt(ps);
		return;
	}
	if (pp_is_punct(ps, '=')) {
		uint32_t n = 0, esz = (uint32_t)bits / 8;

		pp_next(ps);
		v.init = calloc(1, v.size);
		if (!v.init) {
			pp_perr(ps, "out of memory");
			return;
		}
		if (pp_is_punct(ps, '{')) {
			pp_next(ps);
			while (!pp_is_punct(ps, '}')) {
				if ((n + 1) * esz > v.size) {
					pp_perr(ps, "too many initial values for '%s'", v.name);
					free(v.init);
					free(v.arefs);
					pp_skip_stmt(ps);
					return;
				}
				if (!parse_init_value(ps, &v, n * esz, bits)) {
					free(v.init);
					free(v.arefs);
					pp_skip_stmt(ps);
					return;
				}
				n++;
				if (pp_is_punct(ps, ','))
					pp_next(ps);
			}
			pp_next(ps);
		} else if (!parse_init_value(ps, &v, 0, bits)) {
			free(v.init);
			free(v.arefs);
			pp_skip_stmt(ps);
			return;
		}
	}
	if (!v.align)
		v.align = 1;
	v.offset = (ps->m->data_size + v.align - 1) / v.align * v.align;
	if ((uint64_t)v.offset + v.size > (16u << 20)) {
		pp_perr(ps, "unsupported construct: more than 16 MiB of module data at '%s'",
			v.name);
		free(v.init);
		free(v.arefs);
		pp_skip_stmt(ps);
		return;
	}
	arr = realloc(ps->m->globals, (size_t)(ps->m->nglobals + 1) * sizeof(*arr));
	if (!arr) {
		free(v.init);
		free(v.arefs);
		pp_perr(ps, "out of memory");
		return;
	}
	ps->m->globals = arr;
	arr[ps->m->nglobals++] = v;
	ps->m->data_size = v.offset + v.size;
	pp_expect(ps, ';');
}

/* A .shared variable, or with @local a .local one of the function. */
void pp_parse_shared(struct parser *ps, bool module_scope, bool is_extern, bool local)
{
	struct ptx_var v;
	char type[8];
	struct ptx_var **arr = local ? &ps->f->local :
			       module_scope ? &ps->m->shared : &ps->f->shared;
	int *n = local ? &ps->f->nlocal : module_scope ? &ps->m->nshared : &ps->f->nshared;
	struct ptx_var *p;

	memset(&v, 0, sizeof(v));
	v.line = ps->lx.tline;
	pp_next(ps);
	if (!pp_parse_var(ps, v.name, &v.size, &v.align, type)) {
		pp_skip_stmt(ps);
		return;
	}
	if ((is_extern || !v.size) && local) {
		ptx_error(ps->dg, v.line, 1, "unsupported construct: dynamic (extern) .local '%s'",
			  v.name);
		ps->failed = true;
		pp_skip_stmt(ps);
		return;
	}
	if (is_extern || !v.size) { /* the launch's dynamic shared memory */
		arr = &ps->m->dyn;
		n = &ps->m->ndyn;
	}
	p = realloc(*arr, (size_t)(*n + 1) * sizeof(**arr));
	if (!p) {
		pp_perr(ps, "out of memory");
		return;
	}
	*arr = p;
	p[(*n)++] = v;
	pp_expect(ps, ';');
}

/*
 * One directive between an .entry's parameters and its body (PTX ISA
 * 11.4 performance tuning, 11.7 cluster dimensions): .maxntid,
 * .reqntid and .reqnctapercluster take 1 to 3 extents (the others 1),
 * .maxnreg, .minnctapersm, .maxclusterrank one number, .explicitcluster
 * none.  Others (.noreturn, .maxnctapersm, ...) are skipped with their
 * numbers.  False after an error.
 */
static bool parse_directive(struct parser *ps)
{
	static const char *const dims[] = { ".maxntid", ".reqntid", ".reqnctapercluster" };
	static const char *const one[] = { ".maxnreg", ".minnctapersm", ".maxclusterrank" };
	struct ptx_kattrs *a = &ps->f->attrs;
	char name[32];
	uint32_t v[3] = { 1, 1, 1 };
	int n = 0, line = ps->lx.tline, col = ps->lx.tcol, kind = -1, k1 = -1;

	snprintf(name, sizeof(name), "%.31s", TEXT(ps));
	for (int i = 0; i < 3; i++) {
		if (!strcmp(name, dims[i]))
			kind = i;
		if (!strcmp(name, one[i]))
			k1 = i;
	}
	pp_next(ps);
	if (!strcmp(name, ".explicitcluster")) {
		a->explicitcluster = true;
		return true;
	}
	while (TOK(ps) == PTX_T_INT) {
		if ((kind >= 0 || k1 >= 0) &&
		    (n == (kind >= 0 ? 3 : 1) || ps->lx.value < 1 || ps->lx.value > 0xffff)) {
			ptx_error(ps->dg, ps->lx.tline, ps->lx.tcol, "bad value or extra operand in %s",
				  name);
			ps->failed = true;
			return false;
		}
		if (n < 3)
			v[n] = (uint32_t)ps->lx.value;
		n++;
		pp_next(ps);
		if (pp_is_punct(ps, ','))
			pp_next(ps);
	}
	if ((kind >= 0 || k1 >= 0) && !n) {
		ptx_error(ps->dg, line, col, "%s needs a value", name);
		ps->failed = true;
		return false;
	}
	if (kind >= 0) {
		uint64_t prod = (uint64_t)v[0] * v[1] * v[2];
		uint32_t *d = kind == 0 ? a->maxntid : kind == 1 ? a->reqntid : a->reqnctapercluster;
		uint64_t limit = kind == 2 ? 16 : 1024;

		if (prod > limit) {
			ptx_error(ps->dg, line, col, "%s %u, %u, %u: %llu %s, at most %llu", name,
				  v[0], v[1], v[2], (unsigned long long)prod,
				  kind == 2 ? "CTAs per cluster" : "threads per CTA",
				  (unsigned long long)limit);
			ps->failed = true;
			return false;
		}
		memcpy(d, v, sizeof(v));
	} else if (k1 == 0) {
		a->maxnreg = v[0];
	} else if (k1 == 1) {
		a->minnctapersm = v[0];
	} else if (k1 == 2) {
		if (v[0] > 16) {
			ptx_error(ps->dg, line, col, ".maxclusterrank %u: at most 16 CTAs per cluster",
				  v[0]);
			ps->failed = true;
			return false;
		}
		a->maxclusterrank = v[0];
	}
	return true;
}

static void parse_entry(struct parser *ps, bool entry)
{
	struct ptx_func *fs = realloc(ps->m->funcs, (size_t)(ps->m->nfuncs + 1) *
							    sizeof(*fs));

	if (!fs) {
		pp_perr(ps, "out of memory");
		return;
	}
	ps->m->funcs = fs;
	ps->f = &fs[ps->m->nfuncs++];
	memset(ps->f, 0, sizeof(*ps->f));
	ps->f->entry = entry;
	ps->f->line = ps->lx.tline;
	pp_next(ps);
	if (TOK(ps) == PTX_T_IDENT && !strcmp(TEXT(ps), ".attribute")) {
		/* .attribute(.noinline): a real call (ptx_call.c); others ignored */
		int depth = 0;

		pp_next(ps);
		do {
			if (TOK(ps) == PTX_T_IDENT && !strcmp(TEXT(ps), ".noinline"))
				ps->f->noinline = true;
			depth += pp_is_punct(ps, '(') - pp_is_punct(ps, ')');
			pp_next(ps);
		} while (depth > 0 && TOK(ps) != PTX_T_EOF);
	}
	if (pp_is_punct(ps, '(') && !entry) { /* .func (.param .b32 ret) name */
		struct ptx_param *r = &ps->f->ret;

		pp_next(ps);
		r->line = ps->lx.tline;
		if (TOK(ps) != PTX_T_IDENT || (strcmp(TEXT(ps), ".param") && strcmp(TEXT(ps), ".reg"))) {
			pp_perr(ps, "expected .param or .reg in a return value, not '%s'", TEXT(ps));
			return;
		}
		r->reg = !strcmp(TEXT(ps), ".reg");
		pp_next(ps);
		if (!pp_parse_var(ps, r->name, &r->size, &r->align, r->type) || !pp_expect(ps, ')'))
			return;
		ps->f->has_ret = true;
	}
	if (TOK(ps) != PTX_T_IDENT) {
		pp_perr(ps, "expected a kernel name, not '%s'", TEXT(ps));
		return;
	}
	pp_copy_name(ps->f->name, TEXT(ps));
	ps->f->full = ps->lx.ident;
	ps->f->full_len = ps->lx.ident_len;
	pp_next(ps);
	for (int i = 0; i + 1 < ps->m->nfuncs; i++) /* a declaration's attribute */
		if (!strcmp(ps->m->funcs[i].name, ps->f->name) && ps->m->funcs[i].noinline)
			ps->f->noinline = true;
	if (pp_is_punct(ps, '(')) {
		pp_next(ps);
		while (!pp_is_punct(ps, ')') && TOK(ps) != PTX_T_EOF) {
			struct ptx_param p;
			struct ptx_param *arr;

			memset(&p, 0, sizeof(p));
			p.line = ps->lx.tline;
			if (TOK(ps) != PTX_T_IDENT ||
			    (strcmp(TEXT(ps), ".param") && (entry || strcmp(TEXT(ps), ".reg")))) {
				pp_perr(ps, "expected .param%s, not '%s'", entry ? "" : " or .reg",
					TEXT(ps));
				return;
			}
			p.reg = !strcmp(TEXT(ps), ".reg");
			pp_next(ps);
			if (!pp_parse_var(ps, p.name, &p.size, &p.align, p.type))
				return;
			arr = realloc(ps->f->params, (size_t)(ps->f->nparams + 1) * sizeof(*arr));
			if (!arr) {
				pp_perr(ps, "out of memory");
				return;
			}
			ps->f->params = arr;
			arr[ps->f->nparams++] = p;
			if (pp_is_punct(ps, ','))
				pp_next(ps);
		}
		pp_expect(ps, ')');
	}
	/* performance and cluster directives: .maxntid 128, 1, 1 and friends */
	while (TOK(ps) == PTX_T_IDENT && TEXT(ps)[0] == '.') {
		if (!parse_directive(ps))
			return;
	}
	if (pp_is_punct(ps, ';')) { /* a declaration: calls name it */
		pp_next(ps);
		ps->f->decl = true;
		return;
	}
	pp_parse_body(ps);
}

/*
 * .section NAME { ... }: DWARF debug information (nvcc -G, -lineinfo
 * with -g), which changes nothing a kernel computes: skipped whole.
 */
static void skip_section(struct parser *ps)
{
	int depth = 0;

	pp_next(ps); /* .section */
	if (TOK(ps) == PTX_T_IDENT) /* its name: .debug_info, ... */
		pp_next(ps);
	if (!pp_is_punct(ps, '{')) {
		pp_perr(ps, "expected { after .section, not '%s'", TEXT(ps));
		return;
	}
	while (TOK(ps) != PTX_T_EOF) {
		if (pp_is_punct(ps, '{'))
			depth++;
		else if (pp_is_punct(ps, '}') && !--depth) {
			pp_next(ps);
			return;
		}
		pp_next(ps);
	}
	pp_perr(ps, "unterminated .section");
}

/*
 * .extern .global/.const NAME: a variable another module defines.  The
 * linker (ptx_link.c) resolves it and drops the declaration; a module
 * compiled alone must define it too, or it is an undefined reference, as
 * CUDA's cuModuleLoadData refuses such a module (CUDA_ERROR_INVALID_PTX on
 * an H200: tests/cuda/real-gpu/link-h200-2026-11-30).
 */
static void extern_var(struct parser *ps)
{
	struct pp_extern e = { .line = ps->lx.tline }, *arr;
	uint32_t size, align;
	char type[8];

	pp_next(ps);
	if (!pp_parse_var(ps, e.name, &size, &align, type)) {
		pp_skip_stmt(ps);
		return;
	}
	arr = realloc(ps->ext, (size_t)(ps->next + 1) * sizeof(*arr));
	if (!arr) {
		pp_perr(ps, "out of memory");
		return;
	}
	ps->ext = arr;
	arr[ps->next++] = e;
	pp_expect(ps, ';');
}

static void check_externs(struct parser *ps)
{
	for (int i = 0; i < ps->next; i++) {
		int g = 0;

		while (g < ps->m->nglobals && strcmp(ps->m->globals[g].name, ps->ext[i].name))
			g++;
		if (g == ps->m->nglobals)
			ptx_error(ps->dg, ps->ext[i].line, 1,
				  "undefined reference to the .extern variable '%s' (link the "
				  "module that defines it with this one: cuLink*, nvcc -rdc=true)",
				  ps->ext[i].name);
	}
	free(ps->ext);
	ps->ext = NULL;
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
			pp_perr(&ps, "unexpected '%s' at module scope", t);
			break;
		}
		if (!strcmp(t, ".version") || !strcmp(t, ".file") || !strcmp(t, ".loc") ||
		    !strcmp(t, ".pragma")) {
			pp_skip_line(&ps);
		} else if (!strcmp(t, ".target")) {
			pp_next(&ps);
			snprintf(m->target, sizeof(m->target), "%.31s", TEXT(&ps));
			while (TOK(&ps) == PTX_T_IDENT || pp_is_punct(&ps, ',')) {
				int line = ps.lx.tline;

				pp_next(&ps);
				if (ps.lx.tline != line)
					break;
			}
		} else if (!strcmp(t, ".address_size")) {
			pp_next(&ps);
			m->addr_size = (int)ps.lx.value;
			if (m->addr_size != 64)
				pp_perr(&ps, "unsupported construct: .address_size %d (64 only)",
					m->addr_size);
			pp_next(&ps);
		} else if (!strcmp(t, ".visible") || !strcmp(t, ".weak") || !strcmp(t, ".common")) {
			/* linking directives (ptx_link.c resolves them across modules) */
			pp_next(&ps);
		} else if (!strcmp(t, ".extern")) {
			pp_next(&ps);
			if (TOK(&ps) == PTX_T_IDENT && !strcmp(TEXT(&ps), ".shared"))
				pp_parse_shared(&ps, true, true, false);
			else if (TOK(&ps) == PTX_T_IDENT && (!strcmp(TEXT(&ps), ".global") ||
							     !strcmp(TEXT(&ps), ".const")))
				extern_var(&ps);
			else if (TOK(&ps) == PTX_T_IDENT && !strcmp(TEXT(&ps), ".func"))
				parse_entry(&ps, false);
		} else if (!strcmp(t, ".entry") || !strcmp(t, ".func")) {
			parse_entry(&ps, t[1] == 'e');
		} else if (!strcmp(t, ".shared")) {
			pp_parse_shared(&ps, true, false, false);
		} else if (!strcmp(t, ".global") || !strcmp(t, ".const")) {
			parse_global(&ps);
		} else if (!strcmp(t, ".section")) {
			skip_section(&ps);
		} else {
			pp_perr(&ps, "unsupported construct: '%s' at module scope", t);
		}
	}
	check_externs(&ps);
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
	free(m->dyn);
	for (int i = 0; i < m->nglobals; i++) {
		free(m->globals[i].init);
		free(m->globals[i].arefs);
	}
	free(m->globals);
	memset(m, 0, sizeof(*m));
}
