/* SPDX-License-Identifier: MIT */
/*
 * vGPU assembler: text to struct vgpu_object (syntax in docs/assembly.md).
 *
 * Everything instruction-specific comes from the table in vgpu_isa.h.  The
 * mnemonic of a statement selects the candidate rows (the longest table
 * mnemonic that is a dot-prefix of it, after alias resolution), its
 * remaining dot-separated parts are matched against each row's modifier
 * groups, and the classes of the parsed operands (GPR, predicate,
 * immediate, special register, memory) pick the row among the candidates.
 * This file only knows what each operand kind means: its field, its range
 * and its default when omitted (kinds[] below).
 *
 * One pass over the lines, then a fixup pass for branch labels.  Every
 * diagnostic is collected and reported sorted by position; a line with an
 * error still occupies its 16 bytes so that later offsets stay right.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "asm_priv.h"
#include "vgpu_asm.h"
#include "vgpu_hw.h"


#define MAX_TOKS 128
#define MAX_MTOKS 8
#define MAX_OPERANDS 8

#define TOKF "%.*s"
#define TOKA(t) (t)->len, (t)->p

/* ---- growable arrays ---- */

struct vec {
	void *p;
	size_t n, cap;
};

#define VEC_AT(v, type, i) (&((type *)(v).p)[i])

/* ---- tokens ---- */

enum tok_kind { TK_END, TK_WORD, TK_NUM, TK_PUNCT };

struct tok {
	enum tok_kind kind;
	const char *p;
	int len;
	int col;
};

struct line {
	struct tok t[MAX_TOKS + 1];
	int n, pos;
};

/* ---- operands ---- */

enum opclass { CL_NONE, CL_GPR, CL_PRED, CL_IMM, CL_SR, CL_MEM };

static const char *const class_names[] = {
	[CL_NONE] = "nothing",	 [CL_GPR] = "GPR",
	[CL_PRED] = "predicate", [CL_IMM] = "immediate",
	[CL_SR] = "special register", [CL_MEM] = "memory",
};

/*
 * What an operand kind means: the class of text it takes, its field, the
 * range of an immediate, its value when an optional operand is omitted, the
 * name used in "accepted forms" lists and in messages.
 */
struct kind_info {
	const char *form;
	const char *what;
	enum opclass cls;
	uint8_t pos, width;
	int64_t min, max;
	bool hex;
	uint32_t def;
};

#define NO_FIELD 0, 0
#define KIND(form, what, cls, field, min, max, hex, def)                       \
	{ form, what, cls, field, min, max, hex, def }

static const struct kind_info kinds[VGPU_OPK__COUNT] = {
	[VGPU_OPK_NONE] = KIND("?", "?", CL_NONE, NO_FIELD, 0, 0, false, 0),
	[VGPU_OPK_RD] = KIND("GPR", "destination register", CL_GPR, VGPU_F_RD,
			     0, 0, false, 0),
	[VGPU_OPK_RA] = KIND("GPR", "register", CL_GPR, VGPU_F_RA, 0, 0, false, 0),
	[VGPU_OPK_RB] = KIND("GPR", "register", CL_GPR, VGPU_F_RB, 0, 0, false, 0),
	[VGPU_OPK_RC] = KIND("GPR", "register", CL_GPR, VGPU_F_RC, 0, 0, false, 0),
	[VGPU_OPK_IMM] = KIND("Imm32", "immediate", CL_IMM, VGPU_F_IMM32,
			      INT32_MIN, UINT32_MAX, true, 0),
	[VGPU_OPK_FIMM] = KIND("FImm32", "float immediate", CL_IMM, VGPU_F_IMM32,
			       INT32_MIN, UINT32_MAX, true, 0),
	[VGPU_OPK_BARID] = KIND("UImm4", "barrier id", CL_IMM, VGPU_F_BARID, 0,
				15, false, 0),
	[VGPU_OPK_CNT] = KIND("UImm12", "barrier count", CL_IMM, VGPU_F_CNT, 0,
			      4095, false, 0),
	[VGPU_OPK_PP] = KIND("predicate", "predicate", CL_PRED, VGPU_F_PP, 0, 0,
			     false, VGPU_PT),
	[VGPU_OPK_PU] = KIND("predicate", "destination predicate", CL_PRED,
			     VGPU_F_PU, 0, 0, false, VGPU_PT),
	[VGPU_OPK_SR] = KIND("special register", "special register", CL_SR,
			     VGPU_F_SR, 0, 0, false, 0),
	[VGPU_OPK_MEM] = KIND("memory", "memory operand", CL_MEM, VGPU_F_RA,
			      -(1 << 23), (1 << 23) - 1, true, 0),
	[VGPU_OPK_TARGET] = KIND("label", "branch target", CL_IMM, VGPU_F_IMM32,
				 INT32_MIN, INT32_MAX, true, 0),
	[VGPU_OPK_RD2] = KIND("GPR pair", "64-bit mbarrier state", CL_GPR,
			      VGPU_F_RD, 0, 0, false, 0),
	[VGPU_OPK_RC2] = KIND("GPR pair", "64-bit mbarrier state", CL_GPR,
			      VGPU_F_RC, 0, 0, false, 0),
	[VGPU_OPK_RCN] = KIND("GPR range", "tensor coordinates", CL_GPR,
			      VGPU_F_RC, 0, 0, false, 0),
	[VGPU_OPK_SA] = KIND("[GPR]", "shared address", CL_MEM, VGPU_F_RA, 0, 0,
			     false, 0),
	[VGPU_OPK_SC] = KIND("[GPR]", "shared address", CL_MEM, VGPU_F_RC, 0, 0,
			     false, 0),
	[VGPU_OPK_SE] = KIND("[GPR]", "shared address", CL_MEM, VGPU_F_RE, 0, 0,
			     false, 0),
	[VGPU_OPK_GA] = KIND("[GPR pair]", "64-bit global address", CL_MEM,
			     VGPU_F_RA, 0, 0, false, 0),
	[VGPU_OPK_GB] = KIND("[GPR pair]", "64-bit global address", CL_MEM,
			     VGPU_F_RB, 0, 0, false, 0),
	[VGPU_OPK_GC] = KIND("[GPR pair]", "64-bit global address", CL_MEM,
			     VGPU_F_RC, 0, 0, false, 0),
};

/* Register-only address kinds: [Rn], no offset (MBAR and CP.ASYNC). */
static bool is_reg_addr(unsigned kind)
{
	return kinds[kind].cls == CL_MEM && kind != VGPU_OPK_MEM;
}

struct expr {
	int64_t val;
	const struct tok *name; /* a lone identifier, resolved per kind */
	bool is_float;
	uint32_t fbits;
};

struct operand {
	enum opclass cls;
	int col;
	unsigned reg; /* GPR, predicate, special-register index, MEM base */
	bool neg;
	bool sink;     /* "_": a GPR operand that stands for RZ */
	bool has_off;  /* memory: an offset was written */
	int off_col;   /* memory: column of the offset */
	struct expr e; /* immediate value or memory offset */
};


struct stmt {
	const struct tok *mn;
	unsigned pg;
	bool pg_not;
	struct operand ops[MAX_OPERANDS];
	int nops;
	unsigned ann[VGPU_ISA_NUM_ANNOTS];
};

/* A dot-separated part of a mnemonic. */
struct mtok {
	const char *p;
	int len;
	int col;
};

/* Rows that a mnemonic names, with their modifier values. */
struct cand {
	int id;
	uint8_t mod[VGPU_ISA_MAX_MODS];
};

struct resolved {
	struct cand cand[VGPU_I__COUNT];
	int n;
	char name[80]; /* canonical mnemonic and given modifiers */
};

/* ---- assembler state ---- */

enum sym_kind { SYM_LABEL, SYM_PARAM, SYM_SHARED, SYM_EQU };

struct sym {
	const char *name;
	int len;
	enum sym_kind kind;
	int kernel; /* owner of a param or shared name; -1 otherwise */
	int64_t value;
	int line;
	size_t next; /* 1 + index of the next symbol in its hash chain, or 0 */
};

struct fixup {
	size_t word;
	const char *name;
	int len;
	int line, col;
};

struct diag {
	int line, col;
	size_t seq;
	char *msg;
};

struct kern {
	struct vgpu_obj_kernel k;
	int line, col;
	uint32_t param_end; /* end of the last parameter, before rounding */
	uint32_t nlocal;    /* .param local lines */
	int local_line, local_col; /* its .local line (0: none) */
};

struct word {
	uint64_t w[2];
};

struct asm_ctx {
	const char *file;
	int line;
	struct vec words, kerns, params, syms, fixups, diags;
	size_t *buckets; /* hash chains of syms: 1 + index, or 0 */
	size_t nbuckets; /* a power of two */
	int cur; /* current kernel, -1 before the first */
	bool nomem;
};

static void *vec_push(struct asm_ctx *c, struct vec *v, size_t size)
{
	void *e;

	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 16;
		void *np = realloc(v->p, cap * size);

		if (!np) {
			c->nomem = true;
			return NULL;
		}
		v->p = np;
		v->cap = cap;
	}
	e = (char *)v->p + v->n++ * size;
	memset(e, 0, size);
	return e;
}

/* ---- diagnostics ---- */

static void vdiag(struct asm_ctx *c, int line, int col, const char *fmt,
		  va_list ap)
{
	struct diag *d;
	char *msg;

	if (vasprintf(&msg, fmt, ap) < 0) {
		c->nomem = true;
		return;
	}
	d = vec_push(c, &c->diags, sizeof(*d));
	if (!d) {
		free(msg);
		return;
	}
	d->line = line;
	d->col = col;
	d->seq = c->diags.n;
	d->msg = msg;
}

__attribute__((format(printf, 4, 5))) static void
err_line(struct asm_ctx *c, int line, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, line, col, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 3, 4))) static void
err_at(struct asm_ctx *c, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, c->line, col, fmt, ap);
	va_end(ap);
}

static void err_unexpected(struct asm_ctx *c, const struct tok *t,
			   const char *expected)
{
	if (t->kind == TK_END)
		err_at(c, t->col, "expected %s before end of line", expected);
	else
		err_at(c, t->col, "expected %s, got '" TOKF "'", expected,
		       TOKA(t));
}

static int diag_cmp(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void write_diags(struct asm_ctx *c, char *err, size_t errlen)
{
	size_t used = 0;

	qsort(c->diags.p, c->diags.n, sizeof(struct diag), diag_cmp);
	if (!err || !errlen)
		return;
	err[0] = 0;
	for (size_t i = 0; i < c->diags.n && used + 1 < errlen; i++) {
		const struct diag *d = VEC_AT(c->diags, struct diag, i);
		int r = snprintf(err + used, errlen - used, "%s:%d:%d: error: %s\n",
				 c->file, d->line, d->col, d->msg);

		if (r < 0)
			break;
		used += (size_t)r < errlen - used ? (size_t)r : errlen - used - 1;
	}
}

/* ---- lexer ---- */

static bool is_word_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '.';
}

static size_t skip_digits(const char *s, size_t i, size_t n)
{
	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	return i;
}

/* Decimal (with optional fraction and exponent) or 0x hex literal. */
static size_t lex_number(const char *s, size_t i, size_t n)
{
	if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		i += 2;
	} else {
		i = skip_digits(s, i, n);
		if (i < n && s[i] == '.')
			i = skip_digits(s, i + 1, n);
		if (i + 1 < n && (s[i] == 'e' || s[i] == 'E')) {
			size_t j = i + 1;

			if (j + 1 < n && (s[j] == '+' || s[j] == '-'))
				j++;
			if (isdigit((unsigned char)s[j]))
				i = skip_digits(s, j, n);
		}
	}
	/* Trailing junk stays in the token: reported as a bad number. */
	while (i < n && is_word_char(s[i]))
		i++;
	return i;
}

static int lex_line(struct asm_ctx *c, struct line *l, const char *s, size_t n)
{
	size_t i = 0;

	l->n = 0;
	l->pos = 0;
	while (i < n) {
		char ch = s[i];
		size_t start = i;
		enum tok_kind kind;

		if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' ||
		    ch == '\v') {
			i++;
			continue;
		}
		if (ch == '/' && i + 1 < n && s[i + 1] == '/')
			break;
		if (isalpha((unsigned char)ch) || ch == '_') {
			while (i < n && is_word_char(s[i]))
				i++;
			kind = TK_WORD;
		} else if (isdigit((unsigned char)ch)) {
			i = lex_number(s, i, n);
			kind = TK_NUM;
		} else if (ch && strchr(",[]+-!@:;=$.", ch)) {
			i++;
			kind = TK_PUNCT;
		} else {
			if (isprint((unsigned char)ch))
				err_at(c, (int)i + 1, "unexpected character '%c'", ch);
			else
				err_at(c, (int)i + 1,
				       "unexpected character 0x%02x",
				       (unsigned char)ch);
			return -1;
		}
		if (l->n == MAX_TOKS) {
			err_at(c, (int)start + 1, "too many tokens on one line");
			return -1;
		}
		l->t[l->n++] = (struct tok){ kind, s + start, (int)(i - start),
					     (int)start + 1 };
	}
	l->t[l->n] = (struct tok){ TK_END, s + i, 0, (int)i + 1 };
	return 0;
}

static const struct tok *cur(const struct line *l)
{
	return &l->t[l->pos];
}

static const struct tok *peek(const struct line *l, int k)
{
	return l->pos + k <= l->n ? &l->t[l->pos + k] : &l->t[l->n];
}

static bool is_punct(const struct tok *t, char ch)
{
	return t->kind == TK_PUNCT && t->p[0] == ch;
}

static bool is_sign(const struct tok *t)
{
	return is_punct(t, '+') || is_punct(t, '-');
}

static bool tok_eq(const struct tok *t, const char *s)
{
	return (size_t)t->len == strlen(s) && !strncasecmp(t->p, s, t->len);
}

static bool is_ident(const struct tok *t)
{
	return t->kind == TK_WORD && !memchr(t->p, '.', t->len);
}

/* ---- numbers ---- */

static int digit_val(char ch)
{
	if (isdigit((unsigned char)ch))
		return ch - '0';
	if (isxdigit((unsigned char)ch))
		return (tolower((unsigned char)ch) - 'a') + 10;
	return -1;
}

static bool tok_is_float(const struct tok *t)
{
	if (t->len > 1 && (t->p[1] == 'x' || t->p[1] == 'X'))
		return false;
	return memchr(t->p, '.', t->len) || memchr(t->p, 'e', t->len) ||
	       memchr(t->p, 'E', t->len);
}

/* Integer literal: 0, -EINVAL if malformed, -ERANGE past 64 bits. */
static int tok_uint(const struct tok *t, uint64_t *v)
{
	const char *p = t->p, *e = t->p + t->len;
	unsigned base = 10;
	uint64_t x = 0;

	if (t->len > 1 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (p == e)
		return -EINVAL;
	for (; p < e; p++) {
		int d = digit_val(*p);

		if (d < 0 || (unsigned)d >= base)
			return -EINVAL;
		if (x > (UINT64_MAX - (unsigned)d) / base)
			return -ERANGE;
		x = x * base + (unsigned)d;
	}
	*v = x;
	return 0;
}

static int num_value(struct asm_ctx *c, const struct tok *t, uint64_t max,
		     uint64_t *v)
{
	int r = tok_uint(t, v);

	if (r == -EINVAL) {
		err_at(c, t->col, "bad number '" TOKF "'", TOKA(t));
		return -1;
	}
	if (r == -ERANGE || *v > max) {
		err_at(c, t->col, "number '" TOKF "' is too large", TOKA(t));
		return -1;
	}
	return 0;
}

static int float_bits(struct asm_ctx *c, const struct tok *t, bool neg,
		      uint32_t *bits)
{
	char buf[80], *end;
	double d;
	float f;

	if ((size_t)t->len >= sizeof(buf)) {
		err_at(c, t->col, "float literal too long");
		return -1;
	}
	memcpy(buf, t->p, t->len);
	buf[t->len] = 0;
	errno = 0;
	d = strtod(buf, &end);
	if (*end) {
		err_at(c, t->col, "bad number '" TOKF "'", TOKA(t));
		return -1;
	}
	f = (float)(neg ? -d : d);
	if (isinf(f)) {
		err_at(c, t->col, "float literal '" TOKF "' out of range",
		       TOKA(t));
		return -1;
	}
	memcpy(bits, &f, sizeof(*bits));
	return 0;
}

static const char *fmt_num(char *buf, size_t len, int64_t v, bool hex)
{
	uint64_t mag = v < 0 ? (uint64_t)-(v + 1) + 1 : (uint64_t)v;

	if (hex)
		snprintf(buf, len, "%s0x%" PRIx64, v < 0 ? "-" : "", mag);
	else
		snprintf(buf, len, "%" PRId64, v);
	return buf;
}

/* ---- symbols ---- */

static size_t hash_name(const char *p, int len)
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < len; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h;
}

static struct sym *sym_at(struct asm_ctx *c, size_t i)
{
	return VEC_AT(c->syms, struct sym, i);
}

/* The next symbol called @p after @s (NULL: the first), of any kind. */
static struct sym *sym_next(struct asm_ctx *c, const char *p, int len,
			    const struct sym *s)
{
	size_t i;

	if (s)
		i = s->next;
	else
		i = c->nbuckets ? c->buckets[hash_name(p, len) & (c->nbuckets - 1)] : 0;
	for (; i; i = sym_at(c, i - 1)->next) {
		struct sym *n = sym_at(c, i - 1);

		if (n->len == len && !memcmp(n->name, p, len))
			return n;
	}
	return NULL;
}

/* A label, or a param/shared/equ name visible in the current kernel. */
static struct sym *sym_find(struct asm_ctx *c, const char *p, int len,
			    bool label)
{
	struct sym *s = NULL;

	while ((s = sym_next(c, p, len, s))) {
		if (label ? s->kind == SYM_LABEL
			  : s->kind != SYM_LABEL &&
				    (s->kernel < 0 || s->kernel == c->cur))
			return s;
	}
	return NULL;
}

static void sym_link(struct asm_ctx *c, size_t i)
{
	struct sym *s = sym_at(c, i);
	size_t *b = &c->buckets[hash_name(s->name, s->len) & (c->nbuckets - 1)];

	s->next = *b;
	*b = i + 1;
}

static int sym_rehash(struct asm_ctx *c)
{
	size_t n = c->nbuckets ? c->nbuckets * 2 : 64;
	size_t *b = calloc(n, sizeof(*b));

	if (!b) {
		c->nomem = true;
		return -1;
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = n;
	for (size_t i = 0; i < c->syms.n; i++)
		sym_link(c, i);
	return 0;
}

static struct sym *sym_add(struct asm_ctx *c, const struct tok *t,
			   enum sym_kind kind, int kernel, int64_t value)
{
	struct sym *s = vec_push(c, &c->syms, sizeof(*s));

	if (!s)
		return NULL;
	*s = (struct sym){ t->p, t->len, kind, kernel, value, c->line, 0 };
	if (c->syms.n > c->nbuckets)
		return sym_rehash(c) ? NULL : s;
	sym_link(c, c->syms.n - 1);
	return s;
}

/* ---- registers ---- */

/* "R12", "p3": @letter followed by decimal digits only. */
static bool reg_syntax(const struct tok *t, char letter, unsigned long *num)
{
	unsigned long v = 0;

	if (t->len < 2 || toupper((unsigned char)t->p[0]) != letter)
		return false;
	for (int i = 1; i < t->len; i++) {
		if (!isdigit((unsigned char)t->p[i]))
			return false;
		if (v < 1000000)
			v = v * 10 + (unsigned long)(t->p[i] - '0');
	}
	*num = v;
	return true;
}

static int sreg_lookup(const struct tok *t)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_SREGS; i++)
		if (tok_eq(t, vgpu_isa_sregs[i].name))
			return (int)i;
	return -1;
}

static bool looks_like_sreg(const struct tok *t)
{
	return memchr(t->p, '.', t->len) ||
	       (t->len >= 3 && !strncasecmp(t->p, "SR_", 3));
}

/* "_", the sink: a 64-bit state destination that is discarded (RZ). */
static bool is_sink(const struct tok *t)
{
	return t->kind == TK_WORD && t->len == 1 && t->p[0] == '_';
}

static int set_class(struct operand *o, enum opclass cls, unsigned reg)
{
	o->cls = cls;
	o->reg = reg;
	return 0;
}

/*
 * Classify a word operand.  Returns 0 with @o filled for a register,
 * predicate or special register, 1 for a plain identifier (a symbol or a
 * label), -1 after reporting an error.
 */
static int classify_word(struct asm_ctx *c, const struct tok *t,
			 struct operand *o)
{
	unsigned long v;
	int sr;

	o->sink = is_sink(t);
	if (o->sink || tok_eq(t, "RZ"))
		return set_class(o, CL_GPR, VGPU_RZ);
	if (tok_eq(t, "PT"))
		return set_class(o, CL_PRED, VGPU_PT);
	if (reg_syntax(t, 'R', &v)) {
		if (v < VGPU_NUM_GPRS)
			return set_class(o, CL_GPR, (unsigned)v);
		err_at(c, t->col, "register " TOKF " out of range (R0..R254, RZ)",
		       TOKA(t));
		return -1;
	}
	if (reg_syntax(t, 'P', &v)) {
		if (v < VGPU_NUM_PREDS)
			return set_class(o, CL_PRED, (unsigned)v);
		err_at(c, t->col, "predicate " TOKF " out of range (P0..P6, PT)",
		       TOKA(t));
		return -1;
	}
	sr = sreg_lookup(t);
	if (sr >= 0)
		return set_class(o, CL_SR, vgpu_isa_sregs[sr].index);
	if (looks_like_sreg(t)) {
		err_at(c, t->col, "unknown special register '" TOKF "'", TOKA(t));
		return -1;
	}
	return 1;
}

/* Names that can never be symbols because they read as registers. */
static bool is_reserved(const struct tok *t)
{
	unsigned long v;

	return tok_eq(t, "RZ") || tok_eq(t, "PT") || is_sink(t) ||
	       reg_syntax(t, 'R', &v) || reg_syntax(t, 'P', &v) ||
	       looks_like_sreg(t);
}

/* Check a name about to be defined; @max is its length limit or 0. */
static bool check_name(struct asm_ctx *c, const struct tok *t,
		       const char *what, int max)
{
	if (!is_ident(t)) {
		err_unexpected(c, t, what);
		return false;
	}
	if (is_reserved(t)) {
		err_at(c, t->col, "'" TOKF "' is a %s, not a valid %s", TOKA(t),
		       is_sink(t) ? "sink operand" : "register name", what);
		return false;
	}
	if (max && t->len >= max) {
		err_at(c, t->col, "%s '" TOKF "' is too long (at most %d characters)",
		       what, TOKA(t), max - 1);
		return false;
	}
	return true;
}

/* ---- expressions ---- */

static int sym_term(struct asm_ctx *c, const struct tok *t, int64_t *v)
{
	struct operand o;
	const struct sym *s;
	int k = classify_word(c, t, &o);

	if (k < 0)
		return -1;
	if (k == 0) {
		err_at(c, t->col, "%s '" TOKF "' cannot be used in an expression",
		       o.sink ? "sink" : class_names[o.cls], TOKA(t));
		return -1;
	}
	s = sym_find(c, t->p, t->len, false);
	if (!s) {
		err_at(c, t->col, "unknown symbol '" TOKF "'", TOKA(t));
		return -1;
	}
	*v = s->value;
	return 0;
}

static int parse_term(struct asm_ctx *c, struct line *l, int64_t *v)
{
	const struct tok *t = cur(l);
	uint64_t u;

	l->pos++;
	if (t->kind == TK_WORD)
		return sym_term(c, t, v);
	if (t->kind != TK_NUM) {
		l->pos--;
		err_unexpected(c, t, "a number or a symbol");
		return -1;
	}
	if (tok_is_float(t)) {
		err_at(c, t->col, "float literal '" TOKF "' not allowed here",
		       TOKA(t));
		return -1;
	}
	if (num_value(c, t, INT64_MAX, &u) < 0)
		return -1;
	*v = (int64_t)u;
	return 0;
}

/* [+|-] FLOAT, as a whole operand */
static bool float_ahead(const struct line *l)
{
	const struct tok *t = cur(l);

	if (is_sign(t))
		t = peek(l, 1);
	return t->kind == TK_NUM && tok_is_float(t);
}

static int parse_float(struct asm_ctx *c, struct line *l, struct expr *e)
{
	bool neg = false;

	if (is_sign(cur(l)))
		neg = l->t[l->pos++].p[0] == '-';
	if (float_bits(c, cur(l), neg, &e->fbits) < 0)
		return -1;
	l->pos++;
	if (is_sign(cur(l))) {
		err_at(c, cur(l)->col, "float literals cannot be combined");
		return -1;
	}
	e->is_float = true;
	return 0;
}

/*
 * expr := [+|-] term { (+|-) term } | [+|-] FLOAT
 * term := NUMBER | SYMBOL
 * A lone identifier is kept unresolved: it may be a label.
 */
static int parse_expr(struct asm_ctx *c, struct line *l, struct expr *e)
{
	memset(e, 0, sizeof(*e));
	if (cur(l)->kind == TK_WORD && !is_sign(peek(l, 1))) {
		struct operand o;
		int k = classify_word(c, cur(l), &o);

		if (k < 0)
			return -1;
		if (k == 1) {
			e->name = &l->t[l->pos++];
			return 0;
		}
	}
	if (float_ahead(l))
		return parse_float(c, l, e);
	for (;;) {
		bool neg = false;
		int64_t v;

		if (is_sign(cur(l)))
			neg = l->t[l->pos++].p[0] == '-';
		if (parse_term(c, l, &v) < 0)
			return -1;
		if (neg ? __builtin_sub_overflow(e->val, v, &e->val)
			: __builtin_add_overflow(e->val, v, &e->val)) {
			err_at(c, l->t[l->pos - 1].col, "expression overflows");
			return -1;
		}
		if (!is_sign(cur(l)))
			return 0;
	}
}

/* Value of a parsed (non-float) expression; resolves a lone symbol. */
static int resolve(struct asm_ctx *c, const struct expr *e, int64_t *v)
{
	if (!e->name) {
		*v = e->val;
		return 0;
	}
	return sym_term(c, e->name, v);
}

/* ---- operands ---- */

static int parse_mem(struct asm_ctx *c, struct line *l, struct operand *o)
{
	const struct tok *t;

	l->pos++; /* '[' */
	o->cls = CL_MEM;
	o->reg = VGPU_RZ;
	t = cur(l);
	if (t->kind == TK_WORD) {
		struct operand r = { 0 };
		int k = classify_word(c, t, &r);

		if (k < 0)
			return -1;
		if (k == 0 && (r.cls != CL_GPR || r.sink)) {
			err_at(c, t->col, "memory base must be a GPR, not '" TOKF "'",
			       TOKA(t));
			return -1;
		}
		if (k == 0) {
			o->reg = r.reg;
			l->pos++;
			if (!is_punct(cur(l), ']') && !is_sign(cur(l))) {
				err_unexpected(c, cur(l), "'+', '-' or ']'");
				return -1;
			}
		}
	}
	if (!is_punct(cur(l), ']')) {
		o->has_off = true;
		o->off_col = cur(l)->col;
		if (parse_expr(c, l, &o->e) < 0)
			return -1;
	}
	if (o->e.is_float) {
		err_at(c, o->col, "memory offset must be an integer");
		return -1;
	}
	if (!is_punct(cur(l), ']')) {
		err_unexpected(c, cur(l), "']'");
		return -1;
	}
	l->pos++;
	return 0;
}

static int parse_operand(struct asm_ctx *c, struct line *l, struct operand *o)
{
	const struct tok *t = cur(l);
	int k;

	memset(o, 0, sizeof(*o));
	o->col = t->col;
	if (is_punct(t, '!')) {
		o->neg = true;
		t = &l->t[++l->pos];
	}
	if (is_punct(t, '['))
		return parse_mem(c, l, o);
	if (t->kind == TK_WORD) {
		k = classify_word(c, t, o);
		if (k <= 0) {
			l->pos += k == 0;
			return k;
		}
	}
	if (t->kind != TK_WORD && t->kind != TK_NUM && !is_sign(t)) {
		err_unexpected(c, t, "an operand");
		return -1;
	}
	o->cls = CL_IMM;
	return parse_expr(c, l, &o->e);
}

static bool operands_end(const struct tok *t)
{
	return t->kind == TK_END || is_punct(t, ';') || is_punct(t, '$');
}

static int parse_operands(struct asm_ctx *c, struct line *l, struct stmt *s)
{
	if (operands_end(cur(l)))
		return 0;
	for (;;) {
		if (s->nops == MAX_OPERANDS) {
			err_at(c, cur(l)->col, "too many operands");
			return -1;
		}
		if (parse_operand(c, l, &s->ops[s->nops++]) < 0)
			return -1;
		if (operands_end(cur(l)))
			return 0;
		if (!is_punct(cur(l), ',')) {
			err_unexpected(c, cur(l), "',' or ';'");
			return -1;
		}
		l->pos++;
	}
}

static int parse_guard(struct asm_ctx *c, struct line *l, struct stmt *s)
{
	struct operand o;
	const struct tok *t;

	s->pg = VGPU_PT;
	if (!is_punct(cur(l), '@'))
		return 0;
	l->pos++;
	if (is_punct(cur(l), '!')) {
		s->pg_not = true;
		l->pos++;
	}
	t = cur(l);
	if (t->kind != TK_WORD) {
		err_unexpected(c, t, "a guard predicate");
		return -1;
	}
	if (classify_word(c, t, &o) < 0)
		return -1;
	if (o.cls != CL_PRED) {
		err_at(c, t->col, "guard must be a predicate (P0..P6, PT), not '" TOKF "'",
		       TOKA(t));
		return -1;
	}
	s->pg = o.reg;
	l->pos++;
	return 0;
}

static int parse_annotation(struct asm_ctx *c, struct line *l, struct stmt *s,
			    unsigned *seen)
{
	const struct tok *d = cur(l), *t = peek(l, 1);
	unsigned i;
	uint64_t v = 0;

	if (t->kind != TK_WORD || t->col != d->col + 1) {
		err_at(c, d->col, "expected an annotation name after '$'");
		return -1;
	}
	for (i = 0; i < VGPU_ISA_NUM_ANNOTS && !tok_eq(t, vgpu_isa_annots[i].name); i++)
		;
	if (i == VGPU_ISA_NUM_ANNOTS) {
		err_at(c, d->col, "unknown annotation '$" TOKF "' (expected $sched, $req or $wsb)",
		       TOKA(t));
		return -1;
	}
	if (*seen & (1u << i)) {
		err_at(c, d->col, "duplicate annotation '$%s'", vgpu_isa_annots[i].name);
		return -1;
	}
	*seen |= 1u << i;
	l->pos += 2;
	if (is_punct(cur(l), '=')) {
		const struct tok *n = &l->t[++l->pos];
		uint64_t max = (1u << vgpu_isa_annots[i].width) - 1;

		if (n->kind != TK_NUM) {
			err_unexpected(c, n, "a number");
			return -1;
		}
		if (num_value(c, n, UINT64_MAX, &v) < 0)
			return -1;
		if (v > max) {
			err_at(c, n->col, "$%s value %" PRIu64 " out of range (0..%" PRIu64 ")",
			       vgpu_isa_annots[i].name, v, max);
			return -1;
		}
		l->pos++;
	}
	s->ann[i] = (unsigned)v;
	return 0;
}

static int expect_end(struct asm_ctx *c, struct line *l)
{
	if (is_punct(cur(l), ';'))
		l->pos++;
	if (cur(l)->kind == TK_END)
		return 0;
	err_at(c, cur(l)->col, "unexpected '" TOKF "' after the statement",
	       TOKA(cur(l)));
	return -1;
}

static int parse_stmt(struct asm_ctx *c, struct line *l, struct stmt *s)
{
	unsigned seen = 0;

	memset(s, 0, sizeof(*s));
	if (parse_guard(c, l, s) < 0)
		return -1;
	if (cur(l)->kind != TK_WORD) {
		err_unexpected(c, cur(l), "a mnemonic");
		return -1;
	}
	s->mn = &l->t[l->pos++];
	if (parse_operands(c, l, s) < 0)
		return -1;
	while (is_punct(cur(l), '$'))
		if (parse_annotation(c, l, s, &seen) < 0)
			return -1;
	return expect_end(c, l);
}

/* ---- mnemonics and modifiers ---- */

static int split_dots(const char *p, int len, int col, struct mtok *m, int max)
{
	int n = 0, start = 0;

	for (int i = 0; i <= len; i++) {
		if (i < len && p[i] != '.')
			continue;
		if (i == start || n == max)
			return -1;
		m[n++] = (struct mtok){ p + start, i - start, col + start };
		start = i + 1;
	}
	return n;
}

static bool mtok_eq(const struct mtok *a, const struct mtok *b)
{
	return a->len == b->len && !strncasecmp(a->p, b->p, a->len);
}

/* Number of parts of @str if they are a prefix of @m, else 0. */
static int prefix_len(const char *str, const struct mtok *m, int nm)
{
	struct mtok s[MAX_MTOKS];
	int ns = split_dots(str, (int)strlen(str), 0, s, MAX_MTOKS);

	if (ns <= 0 || ns > nm)
		return 0;
	for (int i = 0; i < ns; i++)
		if (!mtok_eq(&s[i], &m[i]))
			return 0;
	return ns;
}

/* Rows whose mnemonic is the longest prefix of @m; *@used gets its length. */
static int match_rows(const struct mtok *m, int nm, int *ids, int *used)
{
	int best = 0, n = 0;

	for (int i = 0; i < (int)VGPU_I__COUNT; i++) {
		int k = prefix_len(vgpu_isa_table[i].mnemonic, m, nm);

		if (k > best) {
			best = k;
			n = 0;
		}
		if (k && k == best)
			ids[n++] = i;
	}
	*used = best;
	return n;
}

/* Rewrite @m through the first alias that is a prefix of it. */
static int apply_alias(const struct mtok *m, int nm, struct mtok *out)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_ALIASES; i++) {
		const struct vgpu_isa_alias *a = &vgpu_isa_aliases[i];
		int na = prefix_len(a->alias, m, nm);
		int nc = na ? split_dots(a->canonical, (int)strlen(a->canonical),
					 m[0].col, out, MAX_MTOKS)
			    : -1;

		if (nc < 0 || nc + nm - na > MAX_MTOKS)
			continue;
		for (int k = 0; k < nc; k++)
			out[k].col = m[0].col;
		memcpy(out + nc, m + na, (size_t)(nm - na) * sizeof(*m));
		return nc + nm - na;
	}
	return -1;
}

static int modval_lookup(unsigned g, const struct mtok *t)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++) {
		const struct vgpu_isa_modval *v = &vgpu_isa_modvals[i];

		if (v->group == g && (size_t)t->len == strlen(v->name) &&
		    !strncasecmp(v->name, t->p, t->len))
			return v->value;
	}
	return -1;
}

static bool row_knows(const struct vgpu_isa_desc *d, const struct mtok *t)
{
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++)
		if (modval_lookup(d->mods[g], t) >= 0)
			return true;
	return false;
}

/* The values of group @g as ".A, .B" (@sep ", ") or ".A|.B" (@sep "|"). */
static size_t group_values_sep(unsigned g, char *buf, size_t len,
			       const char *sep)
{
	size_t used = 0;
	bool first = true;

	buf[0] = 0;
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS && used < len; i++) {
		if (vgpu_isa_modvals[i].group != g)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s.%s",
					 first ? "" : sep, vgpu_isa_modvals[i].name);
		first = false;
	}
	return used < len ? used : len;
}

static void group_values(unsigned g, char *buf, size_t len)
{
	group_values_sep(g, buf, len, ", ");
}

/* "[.RELEASE|.RELAXED] [.CTA|.CLUSTER]": the row's groups in order. */
static void group_order(const struct vgpu_isa_desc *d, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g] && used + 4 < len; g++) {
		bool opt = vgpu_isa_modgroups[d->mods[g]].def >= 0;

		if (g)
			buf[used++] = ' ';
		if (opt)
			buf[used++] = '[';
		used += group_values_sep(d->mods[g], buf + used, len - used - 2, "|");
		if (opt)
			buf[used++] = ']';
		buf[used] = 0;
	}
}

/*
 * Match the modifier parts @m against the groups of row @d, in order;
 * omitted groups take their default.  Reports only when @report.
 */
static int parse_mods(struct asm_ctx *c, const struct vgpu_isa_desc *d,
		      const struct mtok *m, int nm, int mcol, uint8_t *vals,
		      bool report)
{
	bool written[VGPU_ISA_MAX_MODS] = { false };
	int k = 0;

	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
		const struct vgpu_isa_modgroup *mg = &vgpu_isa_modgroups[d->mods[g]];
		int v = k < nm ? modval_lookup(d->mods[g], &m[k]) : -1;
		char list[160];

		if (v >= 0) {
			vals[g] = (uint8_t)v;
			written[g] = true;
			k++;
			continue;
		}
		if (mg->def >= 0) {
			vals[g] = (uint8_t)mg->def;
			continue;
		}
		if (!report)
			return -1;
		if (k < nm && !row_knows(d, &m[k])) {
			err_at(c, m[k].col - 1, "unknown modifier '.%.*s' for %s",
			       m[k].len, m[k].p, d->mnemonic);
			return -1;
		}
		group_values(d->mods[g], list, sizeof(list));
		err_at(c, k < nm ? m[k].col - 1 : mcol,
		       "missing required modifier for %s (one of %s)",
		       d->mnemonic, list);
		return -1;
	}
	if (k < nm && report) {
		/* a value of a group that was left at its default: misplaced */
		for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
			char order[200];

			if (written[g] || modval_lookup(d->mods[g], &m[k]) < 0)
				continue;
			group_order(d, order, sizeof(order));
			err_at(c, m[k].col - 1,
			       "modifier '.%.*s' out of order for %s (order: %s)",
			       m[k].len, m[k].p, d->mnemonic, order);
			return -1;
		}
		err_at(c, m[k].col - 1, "unknown modifier '.%.*s' for %s",
		       m[k].len, m[k].p, d->mnemonic);
	}
	return k < nm ? -1 : 0;
}

static void display_name(struct resolved *r, const char *mn,
			 const struct mtok *m, int nm)
{
	size_t used = (size_t)snprintf(r->name, sizeof(r->name), "%s", mn);

	for (int i = 0; i < nm && used + 2 < sizeof(r->name); i++) {
		r->name[used++] = '.';
		for (int k = 0; k < m[i].len && used + 1 < sizeof(r->name); k++)
			r->name[used++] = (char)toupper((unsigned char)m[i].p[k]);
		r->name[used] = 0;
	}
}

static int resolve_mnemonic(struct asm_ctx *c, const struct tok *mn,
			    struct resolved *r)
{
	struct mtok m[MAX_MTOKS], a[MAX_MTOKS];
	const struct mtok *tk = m;
	int ids[VGPU_I__COUNT], nm, n, used;

	nm = split_dots(mn->p, mn->len, mn->col, m, MAX_MTOKS);
	if (nm < 0) {
		err_at(c, mn->col, "malformed mnemonic '" TOKF "'", TOKA(mn));
		return -1;
	}
	n = match_rows(m, nm, ids, &used);
	if (!n) {
		nm = apply_alias(m, nm, a);
		tk = a;
		n = nm > 0 ? match_rows(a, nm, ids, &used) : 0;
	}
	if (!n) {
		err_at(c, mn->col, "unknown mnemonic '" TOKF "'", TOKA(mn));
		return -1;
	}
	r->n = 0;
	for (int i = 0; i < n; i++) {
		struct cand *cd = &r->cand[r->n];

		cd->id = ids[i];
		if (!parse_mods(c, &vgpu_isa_table[ids[i]], tk + used, nm - used,
				mn->col, cd->mod, false))
			r->n++;
	}
	if (!r->n) {
		parse_mods(c, &vgpu_isa_table[ids[0]], tk + used, nm - used,
			   mn->col, r->cand[0].mod, true);
		return -1;
	}
	display_name(r, vgpu_isa_table[ids[0]].mnemonic, tk + used, nm - used);
	return 0;
}

/* ---- operand forms ---- */

static bool row_takes(const struct vgpu_isa_desc *d, const struct stmt *s,
		      int *map)
{
	int m = 0, opt = -1;

	while (m < VGPU_ISA_MAX_OPS && d->ops[m]) {
		if (d->ops[m] & VGPU_OPK_OPTIONAL)
			opt = m;
		m++;
	}
	if (s->nops != m && !(s->nops == m - 1 && opt >= 0))
		return false;
	for (int i = 0, k = 0; i < m; i++) {
		if (s->nops < m && i == opt) {
			map[i] = -1;
			continue;
		}
		if (kinds[VGPU_OPK_KIND(d->ops[i])].cls != s->ops[k].cls)
			return false;
		map[i] = k++;
	}
	return true;
}

static const struct cand *pick_row(const struct resolved *r,
				   const struct stmt *s, int *map)
{
	for (int i = 0; i < r->n; i++)
		if (row_takes(&vgpu_isa_table[r->cand[i].id], s, map))
			return &r->cand[i];
	return NULL;
}

__attribute__((format(printf, 3, 4))) static void
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* "(UImm4, [UImm12,] predicate)", "(GPR[, UImm12])", "([UImm4,] GPR)" */
static void row_form(const struct vgpu_isa_desc *d, char *buf, size_t len)
{
	const char *sep = "";

	append(buf, len, "(");
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		const char *f = kinds[VGPU_OPK_KIND(d->ops[i])].form;
		bool last = i + 1 == VGPU_ISA_MAX_OPS || !d->ops[i + 1];

		if (!(d->ops[i] & VGPU_OPK_OPTIONAL)) {
			append(buf, len, "%s%s", sep, f);
			sep = ", ";
		} else if (last && i) {
			append(buf, len, "[, %s]", f);
		} else {
			append(buf, len, "%s[%s,]", sep, f);
			sep = " ";
		}
	}
	append(buf, len, ")");
}

static void form_error(struct asm_ctx *c, const struct stmt *s,
		       const struct resolved *r)
{
	char buf[1024] = "";

	append(buf, sizeof(buf), "(");
	for (int i = 0; i < s->nops; i++)
		append(buf, sizeof(buf), "%s%s", i ? ", " : "",
		       class_names[s->ops[i].cls]);
	append(buf, sizeof(buf), "); accepted forms: ");
	for (int i = 0; i < r->n; i++) {
		if (i)
			append(buf, sizeof(buf), ", ");
		row_form(&vgpu_isa_table[r->cand[i].id], buf, sizeof(buf));
	}
	err_at(c, s->mn->col, "%s does not take %s", r->name, buf);
}

/* ---- encoding ---- */

static struct word *word_at(struct asm_ctx *c, size_t i)
{
	return VEC_AT(c->words, struct word, i);
}

static int range_check(struct asm_ctx *c, const struct kind_info *k, int col,
		       int64_t v)
{
	char a[32], lo[32], hi[32];

	if (v >= k->min && v <= k->max)
		return 0;
	if (k->cls == CL_MEM)
		err_at(c, col, "memory offset %s out of range (%s..%s)",
		       fmt_num(a, sizeof(a), v, k->hex),
		       fmt_num(lo, sizeof(lo), k->min, k->hex),
		       fmt_num(hi, sizeof(hi), k->max, k->hex));
	else
		err_at(c, col, "%s %s out of range (%s..%s)", k->what,
		       fmt_num(a, sizeof(a), v, k->hex),
		       fmt_num(lo, sizeof(lo), k->min, k->hex),
		       fmt_num(hi, sizeof(hi), k->max, k->hex));
	return -1;
}

static int put_target(struct asm_ctx *c, const struct operand *o, size_t widx,
		      uint64_t w[2])
{
	struct fixup *f;
	int64_t v;

	if (!o->e.name) {
		v = o->e.val - (int64_t)(widx * VGPU_INSN_BYTES);
		if (v < INT32_MIN || v > INT32_MAX) {
			err_at(c, o->col, "branch target out of range");
			return -1;
		}
		vgpu_set(w, VGPU_F_IMM32, (uint64_t)v);
		return 0;
	}
	f = vec_push(c, &c->fixups, sizeof(*f));
	if (!f)
		return -1;
	f->word = widx;
	f->name = o->e.name->p;
	f->len = o->e.name->len;
	f->line = c->line;
	f->col = o->e.name->col;
	return 0;
}

static int put_imm(struct asm_ctx *c, const struct operand *o, unsigned kind,
		   size_t widx, uint64_t w[2])
{
	const struct kind_info *k = &kinds[kind];
	int64_t v;

	if (o->e.is_float && kind != VGPU_OPK_FIMM) {
		err_at(c, o->col, "%s must be an integer, not a float literal",
		       k->what);
		return -1;
	}
	if (kind == VGPU_OPK_TARGET)
		return put_target(c, o, widx, w);
	if (o->e.is_float)
		v = o->e.fbits;
	else if (resolve(c, &o->e, &v) < 0 || range_check(c, k, o->col, v) < 0)
		return -1;
	vgpu_field_set(w, k->pos, k->width, (uint64_t)v);
	return 0;
}

static int put_mem(struct asm_ctx *c, const struct operand *o, unsigned kind,
		   uint64_t w[2])
{
	int64_t v;

	if (is_reg_addr(kind)) {
		if (o->has_off) {
			err_at(c, o->off_col,
			       "MBAR and CP.ASYNC address operands take no offset; add it with IADD");
			return -1;
		}
		vgpu_field_set(w, kinds[kind].pos, kinds[kind].width, o->reg);
		return 0;
	}
	if (resolve(c, &o->e, &v) < 0 ||
	    range_check(c, &kinds[VGPU_OPK_MEM], o->col, v) < 0)
		return -1;
	vgpu_set(w, VGPU_F_RA, o->reg);
	vgpu_set(w, VGPU_F_OFF24, (uint64_t)v);
	return 0;
}

static int put_operand(struct asm_ctx *c, const struct operand *o,
		       unsigned kind, size_t widx, uint64_t w[2])
{
	const struct kind_info *k = &kinds[kind];

	if (o->neg && kind != VGPU_OPK_PP) {
		err_at(c, o->col,
		       "negation '!' is only allowed on a source predicate, not on a %s",
		       k->what);
		return -1;
	}
	if (o->sink && kind != VGPU_OPK_RD2) {
		err_at(c, o->col,
		       "the sink '_' is only allowed as the state destination of MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a %s",
		       k->what);
		return -1;
	}
	switch (k->cls) {
	case CL_IMM:
		return put_imm(c, o, kind, widx, w);
	case CL_MEM:
		return put_mem(c, o, kind, w);
	default:
		vgpu_field_set(w, k->pos, k->width, o->reg);
		if (kind == VGPU_OPK_PP)
			vgpu_set(w, VGPU_F_PP_NOT, o->neg);
		return 0;
	}
}

static void put_default(unsigned kind, uint64_t w[2])
{
	const struct kind_info *k = &kinds[kind];

	vgpu_field_set(w, k->pos, k->width, k->def);
}

static void put_common(const struct stmt *s, const struct cand *cd,
		       uint64_t w[2])
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[cd->id];
	uint64_t mask[2];

	vgpu_isa_match_mask(d, w, mask);
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
		const struct vgpu_isa_modgroup *mg = &vgpu_isa_modgroups[d->mods[g]];

		vgpu_field_set(w, mg->pos, mg->width, cd->mod[g]);
	}
	vgpu_set(w, VGPU_F_PG, s->pg);
	vgpu_set(w, VGPU_F_PG_NOT, s->pg_not);
	for (unsigned i = 0; i < VGPU_ISA_NUM_ANNOTS; i++)
		vgpu_field_set(w, vgpu_isa_annots[i].pos, vgpu_isa_annots[i].width, s->ann[i]);
}

static void encode(struct asm_ctx *c, const struct stmt *s,
		   const struct cand *cd, const int *map, size_t widx)
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[cd->id];
	uint64_t w[2];
	char msg[160];
	bool ok = true;
	int bad;

	put_common(s, cd, w);
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		unsigned kind = VGPU_OPK_KIND(d->ops[i]);

		if (map[i] < 0)
			put_default(kind, w);
		else if (put_operand(c, &s->ops[map[i]], kind, widx, w) < 0)
			ok = false;
	}
	if (!ok)
		return;
	bad = vgpu_asm_check_insn(w, cd->id, msg, sizeof(msg));
	if (bad >= 0) {
		err_at(c, map[bad] >= 0 ? s->ops[map[bad]].col : s->mn->col,
		       "%s", msg);
		return;
	}
	memcpy(word_at(c, widx)->w, w, sizeof(w));
}

static void statement(struct asm_ctx *c, struct line *l)
{
	struct resolved r;
	struct stmt s;
	const struct cand *cd;
	int map[VGPU_ISA_MAX_OPS];
	size_t widx = c->words.n;

	if (!vec_push(c, &c->words, sizeof(struct word)))
		return;
	if (parse_stmt(c, l, &s) < 0 || resolve_mnemonic(c, s.mn, &r) < 0)
		return;
	cd = pick_row(&r, &s, map);
	if (!cd)
		form_error(c, &s, &r);
	else
		encode(c, &s, cd, map, widx);
}

/* ---- kernels and directives ---- */

static uint32_t code_offset(const struct asm_ctx *c)
{
	return (uint32_t)(c->words.n * VGPU_INSN_BYTES);
}

static struct kern *kern_at(struct asm_ctx *c, int i)
{
	return VEC_AT(c->kerns, struct kern, i);
}

static int kernel_new(struct asm_ctx *c, const char *name, int len,
		      uint32_t entry, int col)
{
	struct kern *k = vec_push(c, &c->kerns, sizeof(*k));

	if (!k)
		return -1;
	memcpy(k->k.name, name, (size_t)len);
	k->k.entry = entry;
	k->k.first_param = (uint32_t)c->params.n;
	k->line = c->line ? c->line : 1;
	k->col = col;
	c->cur = (int)c->kerns.n - 1;
	return 0;
}

/* The kernel that .param/.shared apply to; "main" at 0 if none yet. */
static struct kern *current_kernel(struct asm_ctx *c, int col)
{
	if (c->cur < 0 && kernel_new(c, "main", 4, 0, col) < 0)
		return NULL;
	return kern_at(c, c->cur);
}

static void dir_kernel(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = cur(l);

	if (!check_name(c, t, "kernel name", VGPU_OBJ_NAME_MAX))
		return;
	for (size_t i = 0; i < c->kerns.n; i++) {
		if (!strncmp(kern_at(c, (int)i)->k.name, t->p, t->len) &&
		    !kern_at(c, (int)i)->k.name[t->len]) {
			err_at(c, t->col, "duplicate kernel '" TOKF "' (first defined at line %d)",
			       TOKA(t), kern_at(c, (int)i)->line);
			return;
		}
	}
	l->pos++;
	if (kernel_new(c, t->p, t->len, code_offset(c), t->col) == 0)
		expect_end(c, l);
}

/*
 * Define a param/shared/equ name unless it clashes: params and shared names
 * are scoped to their kernel (@kernel), .equ names (@kernel -1) are global.
 */
static bool define_sym(struct asm_ctx *c, const struct tok *t,
		       enum sym_kind kind, int kernel, int64_t value)
{
	const struct sym *o = NULL;

	while ((o = sym_next(c, t->p, t->len, o))) {
		if (o->kind == SYM_LABEL)
			continue;
		if (kernel < 0 || o->kernel < 0 || o->kernel == kernel) {
			err_at(c, t->col, "duplicate symbol '" TOKF "' (first defined at line %d)",
			       TOKA(t), o->line);
			return false;
		}
	}
	return sym_add(c, t, kind, kernel, value) != NULL;
}

static const struct ptype {
	const char *name;
	uint32_t type, size;
} ptypes[] = {
	{ "u32", VGPU_PARAM_U32, 4 }, { "s32", VGPU_PARAM_S32, 4 },
	{ "f32", VGPU_PARAM_F32, 4 }, { "u64", VGPU_PARAM_U64, 8 },
	{ "s64", VGPU_PARAM_S64, 8 }, { "ptr", VGPU_PARAM_PTR, 8 },
	{ "local", VGPU_PARAM_LOCAL, 8 },
};
#define NUM_PTYPES (sizeof(ptypes) / sizeof(ptypes[0]))

static void dir_param(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *ty = cur(l), *nm = peek(l, 1);
	const struct ptype *pt = NULL;
	struct vgpu_obj_param *p;
	struct kern *k;
	uint32_t off;

	for (unsigned i = 0; i < NUM_PTYPES && ty->kind == TK_WORD; i++)
		if (tok_eq(ty, ptypes[i].name))
			pt = &ptypes[i];
	if (!pt) {
		if (ty->kind == TK_END)
			err_unexpected(c, ty, "a parameter type");
		else
			err_at(c, ty->col, "bad .param type '" TOKF "' (expected u32, s32, f32, u64, s64, ptr or local)",
			       TOKA(ty));
		return;
	}
	if (!check_name(c, nm, "parameter name", VGPU_OBJ_NAME_MAX))
		return;
	k = current_kernel(c, col);
	if (!k)
		return;
	off = (k->param_end + pt->size - 1) & ~(pt->size - 1);
	if (off + pt->size > VGPU_MAX_PARAM_BYTES) {
		err_at(c, nm->col, "parameter '" TOKF "' ends past the %u-byte parameter space",
		       TOKA(nm), VGPU_MAX_PARAM_BYTES);
		return;
	}
	if (!define_sym(c, nm, SYM_PARAM, c->cur, off))
		return;
	p = vec_push(c, &c->params, sizeof(*p));
	if (!p)
		return;
	memcpy(p->name, nm->p, (size_t)nm->len);
	p->offset = off;
	p->size = pt->size;
	p->type = pt->type;
	k = kern_at(c, c->cur);
	k->nlocal += pt->type == VGPU_PARAM_LOCAL;
	k->param_end = off + pt->size;
	k->k.param_size = (k->param_end + 7) & ~7u;
	k->k.nparams++;
	l->pos += 2;
	expect_end(c, l);
}

/* An integer expression operand of a directive. */
static int dir_value(struct asm_ctx *c, struct line *l, const char *what,
		     int64_t *v)
{
	struct expr e;
	const struct tok *t = cur(l);

	if (t->kind == TK_END || is_punct(t, ',') || is_punct(t, ';')) {
		err_unexpected(c, t, what);
		return -1;
	}
	if (parse_expr(c, l, &e) < 0)
		return -1;
	if (e.is_float) {
		err_at(c, t->col, "%s must be an integer", what);
		return -1;
	}
	return resolve(c, &e, v);
}

static bool accept_comma(struct line *l)
{
	if (!is_punct(cur(l), ','))
		return false;
	l->pos++;
	return true;
}

static void dir_shared(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *name = NULL, *t;
	int64_t bytes, align = 16;
	uint64_t off, end;
	struct kern *k;

	if (cur(l)->kind == TK_WORD && is_punct(peek(l, 1), ',')) {
		name = cur(l);
		if (!check_name(c, name, "shared name", 0))
			return;
		l->pos += 2;
	}
	t = cur(l);
	if (dir_value(c, l, "a size in bytes", &bytes) < 0)
		return;
	if (bytes <= 0 || bytes > UINT32_MAX) {
		err_at(c, t->col, "shared size %" PRId64 " out of range (1..4294967295)",
		       bytes);
		return;
	}
	t = peek(l, 1);
	if (accept_comma(l) && dir_value(c, l, "an alignment", &align) < 0)
		return;
	if (align <= 0 || align > 65536 || (align & (align - 1))) {
		err_at(c, t->col, "shared alignment %" PRId64 " is not a power of two up to 65536",
		       align);
		return;
	}
	k = current_kernel(c, col);
	if (!k)
		return;
	off = (k->k.smem_static + (uint64_t)align - 1) & ~((uint64_t)align - 1);
	end = off + (uint64_t)bytes;
	if (end > UINT32_MAX) {
		err_at(c, t->col, "shared memory of kernel '%s' exceeds 4 GiB",
		       k->k.name);
		return;
	}
	if (name && !define_sym(c, name, SYM_SHARED, c->cur, (int64_t)off))
		return;
	kern_at(c, c->cur)->k.smem_static = (uint32_t)end;
	expect_end(c, l);
}

/* .local BYTES: local memory per thread (rounded up to 16) */
static void dir_local(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = cur(l);
	struct kern *k = current_kernel(c, col);
	int64_t bytes;

	if (!k || dir_value(c, l, "a size in bytes", &bytes) < 0)
		return;
	if (k->local_line) {
		err_at(c, col, "a second .local for kernel '%s' (first at line %d)", k->k.name,
		       k->local_line);
		return;
	}
	if (bytes < 1 || bytes > VGPU_MAX_LOCAL_BYTES) {
		err_at(c, t->col, ".local size %" PRId64 " out of range (1..%u)", bytes,
		       VGPU_MAX_LOCAL_BYTES);
		return;
	}
	k->k.local_bytes = ((uint32_t)bytes + 15) & ~15u;
	k->local_line = c->line;
	k->local_col = col;
	expect_end(c, l);
}

static void dir_equ(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *name = cur(l);
	int64_t v;

	if (!check_name(c, name, "symbol name", 0))
		return;
	l->pos++;
	if (!accept_comma(l)) {
		err_unexpected(c, cur(l), "','");
		return;
	}
	if (dir_value(c, l, "a value", &v) < 0)
		return;
	if (define_sym(c, name, SYM_EQU, -1, v))
		expect_end(c, l);
}

static void dir_word(struct asm_ctx *c, struct line *l, int col)
{
	uint64_t v[2];
	struct word *w;

	for (int i = 0; i < 2; i++) {
		const struct tok *t = cur(l);

		if (i && !accept_comma(l)) {
			err_unexpected(c, t, "','");
			return;
		}
		t = cur(l);
		if (t->kind != TK_NUM) {
			err_unexpected(c, t, "a 64-bit number");
			return;
		}
		if (num_value(c, t, UINT64_MAX, &v[i]) < 0)
			return;
		l->pos++;
	}
	w = vec_push(c, &c->words, sizeof(*w));
	if (!w)
		return;
	w->w[0] = v[0];
	w->w[1] = v[1];
	expect_end(c, l);
}

static const struct directive {
	const char *name;
	void (*fn)(struct asm_ctx *c, struct line *l, int col);
} directives[] = {
	{ "kernel", dir_kernel }, { "param", dir_param }, { "shared", dir_shared },
	{ "equ", dir_equ },	  { "word", dir_word },	    { "local", dir_local },
};

static void directive(struct asm_ctx *c, struct line *l)
{
	const struct tok *dot = cur(l), *t = peek(l, 1);

	if (t->kind != TK_WORD || t->col != dot->col + 1) {
		err_at(c, dot->col, "expected a directive name after '.'");
		return;
	}
	for (unsigned i = 0; i < sizeof(directives) / sizeof(directives[0]); i++) {
		if (tok_eq(t, directives[i].name)) {
			l->pos += 2;
			directives[i].fn(c, l, dot->col);
			return;
		}
	}
	err_at(c, dot->col, "unknown directive '." TOKF "'", TOKA(t));
}

static int define_label(struct asm_ctx *c, const struct tok *t)
{
	const struct sym *s;

	if (!check_name(c, t, "label", 0))
		return -1;
	s = sym_find(c, t->p, t->len, true);
	if (s) {
		err_at(c, t->col, "duplicate label '" TOKF "' (first defined at line %d)",
		       TOKA(t), s->line);
		return -1;
	}
	return sym_add(c, t, SYM_LABEL, -1, code_offset(c)) ? 0 : -1;
}

static void do_line(struct asm_ctx *c, const char *s, size_t n)
{
	struct line l;

	if (lex_line(c, &l, s, n) < 0)
		return;
	while (cur(&l)->kind == TK_WORD && is_punct(peek(&l, 1), ':')) {
		if (define_label(c, cur(&l)) < 0)
			return;
		l.pos += 2;
	}
	if (cur(&l)->kind == TK_END || (is_punct(cur(&l), ';') &&
					peek(&l, 1)->kind == TK_END))
		return;
	if (is_punct(cur(&l), '.'))
		directive(c, &l);
	else
		statement(c, &l);
}

/* ---- finishing ---- */

static void apply_fixups(struct asm_ctx *c)
{
	for (size_t i = 0; i < c->fixups.n; i++) {
		const struct fixup *f = VEC_AT(c->fixups, struct fixup, i);
		const struct sym *s = sym_find(c, f->name, f->len, true);
		int64_t off;

		if (!s) {
			err_line(c, f->line, f->col, "unknown label '%.*s'",
				 f->len, f->name);
			continue;
		}
		off = s->value - (int64_t)(f->word * VGPU_INSN_BYTES);
		vgpu_set(word_at(c, f->word)->w, VGPU_F_IMM32, (uint64_t)off);
	}
}

/*
 * Add the implicit "main" if no kernel was declared, and reject kernels
 * without code (unless other errors already explain a missing line).
 */
static void check_kernels(struct asm_ctx *c)
{
	if (!c->kerns.n) {
		c->line = 1;
		kernel_new(c, "main", 4, 0, 1);
	}
	if (c->diags.n)
		return;
	for (size_t i = 0; i < c->kerns.n; i++) {
		const struct kern *k = kern_at(c, (int)i);
		uint32_t end = i + 1 < c->kerns.n ? kern_at(c, (int)i + 1)->k.entry
						  : code_offset(c);

		if (k->k.entry >= end)
			err_line(c, k->line, k->col,
				 "kernel '%s' has no instructions", k->k.name);
		if (k->nlocal > 1 || (k->nlocal && !k->local_line))
			err_line(c, k->line, k->col,
				 "kernel '%s' has %s '.param local' but %s",
				 k->k.name, k->nlocal > 1 ? "more than one" : "a",
				 k->nlocal > 1 ? "takes at most one" : "no .local size");
		else if (!k->nlocal && k->local_line)
			err_line(c, k->local_line, k->local_col,
				 "kernel '%s' has .local memory but no '.param local NAME' "
				 "for its address", k->k.name);
	}
}

static void *dup_array(struct asm_ctx *c, const void *p, size_t n, size_t size)
{
	void *d = malloc(n ? n * size : 1);

	if (!d)
		c->nomem = true;
	else if (n)
		memcpy(d, p, n * size);
	return d;
}

static int build_object(struct asm_ctx *c, struct vgpu_object *out)
{
	size_t nw = c->words.n;

	out->code = malloc(nw ? nw * VGPU_INSN_BYTES : 1);
	out->kernels = malloc(c->kerns.n * sizeof(*out->kernels));
	out->params = dup_array(c, c->params.p, c->params.n, sizeof(*out->params));
	if (!out->code || !out->kernels || !out->params) {
		vgpu_object_fini(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nw; i++)
		for (unsigned b = 0; b < 16; b++)
			out->code[i * 16 + b] =
				(uint8_t)(word_at(c, i)->w[b / 8] >> (8 * (b % 8)));
	for (size_t i = 0; i < c->kerns.n; i++)
		out->kernels[i] = kern_at(c, (int)i)->k;
	out->code_size = (uint32_t)(nw * VGPU_INSN_BYTES);
	out->nkernels = (uint32_t)c->kerns.n;
	out->nparams = (uint32_t)c->params.n;
	return 0;
}

static void ctx_free(struct asm_ctx *c)
{
	for (size_t i = 0; i < c->diags.n; i++)
		free(VEC_AT(c->diags, struct diag, i)->msg);
	free(c->words.p);
	free(c->kerns.p);
	free(c->params.p);
	free(c->syms.p);
	free(c->buckets);
	free(c->fixups.p);
	free(c->diags.p);
}

int vgpu_assemble(const char *src, size_t len, const char *filename,
		  struct vgpu_object *out, char *err, size_t errlen)
{
	struct asm_ctx c = { .file = filename ? filename : "<input>", .cur = -1 };
	size_t pos = 0;
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (!out || (!src && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	while (pos < len && !c.nomem) {
		const char *nl = memchr(src + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (src + pos)) : len - pos;

		c.line++;
		do_line(&c, src + pos, n);
		pos += n + 1;
	}
	if (c.words.n > UINT32_MAX / VGPU_INSN_BYTES)
		err_line(&c, c.line, 1, "program too large");
	apply_fixups(&c);
	check_kernels(&c);
	if (c.nomem) {
		ret = -ENOMEM;
	} else if (c.diags.n) {
		write_diags(&c, err, errlen);
		ret = -EINVAL;
	} else {
		ret = build_object(&c, out);
	}
	ctx_free(&c);
	return ret;
}

/* ---- checks shared with the disassembler ---- */

/* Registers that an access of the row's MSIZE moves: 1, 2 or 4. */
static unsigned data_regs(const uint64_t w[2], const struct vgpu_isa_desc *d)
{
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
		if (d->mods[g] != VGPU_MG_MSIZE)
			continue;
		switch (vgpu_isa_mod(w, VGPU_MG_MSIZE)) {
		case VGPU_MOD_MSIZE_64:
			return 2;
		case VGPU_MOD_MSIZE_128:
			return 4;
		}
	}
	return 1;
}

static bool check_wide(const uint64_t w[2], const struct vgpu_isa_desc *d,
		       unsigned kind, char *msg, size_t len)
{
	const struct kind_info *k = &kinds[kind];
	unsigned n = data_regs(w, d);
	unsigned r = (unsigned)vgpu_field_get(w, k->pos, k->width);
	const char *bits;

	/* RZ as a whole is fine: wide zeros, or a discarded load */
	if (n == 1 || r == VGPU_RZ || r + n - 1 < VGPU_NUM_GPRS)
		return false;
	bits = vgpu_isa_modval_name(VGPU_MG_MSIZE, vgpu_isa_mod(w, VGPU_MG_MSIZE));
	snprintf(msg, len, "%s-bit data needs R%u..R%u, past R254", bits, r,
		 r + n - 1);
	return true;
}

static bool check_cnt(const uint64_t w[2], const struct vgpu_isa_desc *d,
		      char *msg, size_t len)
{
	unsigned v = (unsigned)vgpu_get(w, VGPU_F_CNT);

	if (v % VGPU_WARP_SIZE) {
		snprintf(msg, len, "barrier count %u is not a multiple of %u", v,
			 VGPU_WARP_SIZE);
		return true;
	}
	if (!v && d->fix_group == VGPU_MG_BARMODE &&
	    d->fix_value == VGPU_MOD_BARMODE_ARV) {
		snprintf(msg, len,
			 "%s needs a non-zero barrier count (count 0 means all warps only for BAR.SYNC and BAR.RED)",
			 d->mnemonic);
		return true;
	}
	return false;
}

static bool check_sr(const uint64_t w[2], char *msg, size_t len)
{
	unsigned v = (unsigned)vgpu_get(w, VGPU_F_SR);

	for (unsigned i = 0; i < VGPU_ISA_NUM_SREGS; i++)
		if (vgpu_isa_sregs[i].index == v)
			return false;
	snprintf(msg, len, "unknown special register index %u", v);
	return true;
}

/* Registers a register-span kind covers: pairs 2, coordinates the rank. */
static unsigned span_regs(const uint64_t w[2], const struct vgpu_isa_desc *d,
			  unsigned kind)
{
	if (kind != VGPU_OPK_RCN)
		return 2;
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++)
		if (d->mods[g] == VGPU_MG_TDIM)
			return vgpu_isa_mod(w, VGPU_MG_TDIM) - VGPU_MOD_TDIM_1D + 1;
	return 1;
}

/* 64-bit pairs and coordinate ranges end at R254, or are RZ (zeros). */
static bool check_span(const uint64_t w[2], const struct vgpu_isa_desc *d,
		       unsigned kind, char *msg, size_t len)
{
	const struct kind_info *k = &kinds[kind];
	unsigned n = span_regs(w, d, kind);
	unsigned r = (unsigned)vgpu_field_get(w, k->pos, k->width);

	if (r == VGPU_RZ || r + n - 1 < VGPU_NUM_GPRS)
		return false;
	if (kind == VGPU_OPK_RCN)
		snprintf(msg, len, "%uD %s need R%u..R%u, past R254", n, k->what,
			 r, r + n - 1);
	else
		snprintf(msg, len, "%s needs R%u..R%u, past R254", k->what, r,
			 r + n - 1);
	return true;
}

/* What the 32-bit immediate of an mbarrier, async-copy or cluster row is. */
enum imm_rule {
	IMM_ANY,	/* no rule beyond 32 bits */
	IMM_ARRIVALS,	/* mbarrier arrival count 1 .. 2^20-1 */
	IMM_TX,		/* tx-count 0 .. 2^20-1 */
	IMM_PARITY,	/* phase parity 0 or 1 */
	IMM_CP_SIZE,	/* CP.ASYNC: 4, 8 or 16 (.CG: 16) */
	IMM_BULK_SIZE,	/* bulk copy: a non-zero multiple of 16 below 2^20 */
	IMM_WAIT_GROUP, /* bulk groups still pending: 0 .. 63 */
	IMM_RANK,	/* CTA rank in the cluster: 0 .. 15 */
};

static bool fixed_as(const struct vgpu_isa_desc *d, unsigned g, unsigned v)
{
	return d->fix_group == g && d->fix_value == v;
}

/* The rule for operand @i (an IMM) of row @d. */
static enum imm_rule imm_rule(const struct vgpu_isa_desc *d, int i)
{
	switch (d->optype) {
	case VGPU_OPT_MBAR_INIT:
		return IMM_ARRIVALS;
	case VGPU_OPT_MBAR_ARRIVE:
	case VGPU_OPT_MBAR_ARRIVE_DROP:
		return fixed_as(d, VGPU_MG_ARVKIND, VGPU_MOD_ARVKIND_EXPECT_TX)
			       ? IMM_TX
			       : IMM_ARRIVALS;
	case VGPU_OPT_MBAR_EXPECT_TX:
	case VGPU_OPT_MBAR_COMPLETE_TX:
		return IMM_TX;
	case VGPU_OPT_MBAR_TEST_WAIT:
	case VGPU_OPT_MBAR_TRY_WAIT:
		/* the operand after the address is the phase (token or
		 * parity); a later one is try_wait's suspend-time hint */
		return fixed_as(d, VGPU_MG_WAITKIND, VGPU_MOD_WAITKIND_PARITY) &&
				       i == 2
			       ? IMM_PARITY
			       : IMM_ANY;
	case VGPU_OPT_CP_ASYNC:
		return IMM_CP_SIZE;
	case VGPU_OPT_CP_BULK:
	case VGPU_OPT_CP_BULK_STORE:
		return IMM_BULK_SIZE;
	case VGPU_OPT_CP_BULK_WAIT:
		return IMM_WAIT_GROUP;
	case VGPU_OPT_MAPA:
		return IMM_RANK;
	default:
		return IMM_ANY;
	}
}

static bool check_imm(const uint64_t w[2], const struct vgpu_isa_desc *d,
		      int i, char *msg, size_t len)
{
	uint32_t v = (uint32_t)vgpu_get(w, VGPU_F_IMM32);

	switch (imm_rule(d, i)) {
	case IMM_ARRIVALS:
		if (v >= 1 && v <= VGPU_MBAR_COUNT_MAX)
			return false;
		snprintf(msg, len, "arrival count %" PRIu32 " out of range (1..%u)",
			 v, VGPU_MBAR_COUNT_MAX);
		return true;
	case IMM_TX:
		if (v <= VGPU_MBAR_TX_MAX)
			return false;
		snprintf(msg, len, "tx-count %" PRIu32 " out of range (0..%d)", v,
			 VGPU_MBAR_TX_MAX);
		return true;
	case IMM_PARITY:
		if (v <= 1)
			return false;
		snprintf(msg, len, "phase parity %" PRIu32 " is not 0 or 1", v);
		return true;
	case IMM_CP_SIZE:
		if (vgpu_isa_mod(w, VGPU_MG_CPCACHE) == VGPU_MOD_CPCACHE_CG) {
			if (v == 16)
				return false;
			snprintf(msg, len,
				 "CP.ASYNC.CG copies 16 bytes only, not %" PRIu32, v);
			return true;
		}
		if (v == 4 || v == 8 || v == 16)
			return false;
		snprintf(msg, len, "copy size %" PRIu32 " is not 4, 8 or 16", v);
		return true;
	case IMM_BULK_SIZE:
		if (v && !(v % 16) && v <= VGPU_MBAR_COUNT_MAX)
			return false;
		snprintf(msg, len,
			 "bulk copy size %" PRIu32 " is not a multiple of 16 in 16..%u",
			 v, VGPU_MBAR_COUNT_MAX & ~15u);
		return true;
	case IMM_WAIT_GROUP:
		if (v <= 63)
			return false;
		snprintf(msg, len, "pending bulk group count %" PRIu32 " out of range (0..63)",
			 v);
		return true;
	case IMM_RANK:
		if (v < VGPU_MAX_CLUSTER_CTAS)
			return false;
		snprintf(msg, len, "CTA rank %" PRIu32 " out of range (0..%u)", v,
			 VGPU_MAX_CLUSTER_CTAS - 1);
		return true;
	default:
		return false;
	}
}

/*
 * Checks that the field widths alone do not make: barrier counts that are
 * multiples of 32 (and non-zero for BAR.ARV immediates), 64/128-bit data
 * register ranges, 64-bit pairs (mbarrier states, global addresses) and
 * tensor-coordinate ranges that end at R254 (or are RZ itself), known
 * special registers, and the ranges of the mbarrier, async-copy and
 * cluster immediates (imm_rule()).  Returns the index of the first
 * offending operand of row @id with a message in @msg, or -1.  The
 * disassembler prints words that fail as .word so that its output always
 * assembles back.
 */
int vgpu_asm_check_insn(const uint64_t w[2], int id, char *msg, size_t len)
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[id];

	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		unsigned kind = VGPU_OPK_KIND(d->ops[i]);
		bool bad = false;

		switch (kind) {
		case VGPU_OPK_CNT:
			bad = check_cnt(w, d, msg, len);
			break;
		case VGPU_OPK_SR:
			bad = check_sr(w, msg, len);
			break;
		case VGPU_OPK_RD:
		case VGPU_OPK_RB:
			bad = check_wide(w, d, kind, msg, len);
			break;
		case VGPU_OPK_RD2:
		case VGPU_OPK_RC2:
		case VGPU_OPK_RCN:
		case VGPU_OPK_GA:
		case VGPU_OPK_GB:
		case VGPU_OPK_GC:
			bad = check_span(w, d, kind, msg, len);
			break;
		case VGPU_OPK_IMM:
			bad = check_imm(w, d, i, msg, len);
			break;
		default:
			break;
		}
		if (bad)
			return i;
	}
	return -1;
}
