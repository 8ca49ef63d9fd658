/* SPDX-License-Identifier: MIT */
/*
 * vGPU assembler, first stage: a line of text into tokens.  Also what every
 * stage uses: growable arrays, the diagnostics (collected, then reported
 * sorted by position), the token helpers and number literals.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "asm_int.h"

/* ---- growable arrays ---- */

void *asm_vec_push(struct asm_ctx *c, struct vec *v, size_t size)
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
	d = asm_vec_push(c, &c->diags, sizeof(*d));
	if (!d) {
		free(msg);
		return;
	}
	d->line = line;
	d->col = col;
	d->seq = c->diags.n;
	d->msg = msg;
}

__attribute__((format(printf, 4, 5))) void
asm_err_line(struct asm_ctx *c, int line, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, line, col, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 3, 4))) void
asm_err_at(struct asm_ctx *c, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdiag(c, c->line, col, fmt, ap);
	va_end(ap);
}

void asm_err_unexpected(struct asm_ctx *c, const struct tok *t,
			const char *expected)
{
	if (t->kind == TK_END)
		asm_err_at(c, t->col, "expected %s before end of line", expected);
	else
		asm_err_at(c, t->col, "expected %s, got '" TOKF "'", expected,
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

void asm_write_diags(struct asm_ctx *c, char *err, size_t errlen)
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

int asm_lex_line(struct asm_ctx *c, struct line *l, const char *s, size_t n)
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
				asm_err_at(c, (int)i + 1, "unexpected character '%c'", ch);
			else
				asm_err_at(c, (int)i + 1,
					   "unexpected character 0x%02x",
					   (unsigned char)ch);
			return -1;
		}
		if (l->n == MAX_TOKS) {
			asm_err_at(c, (int)start + 1, "too many tokens on one line");
			return -1;
		}
		l->t[l->n++] = (struct tok){ kind, s + start, (int)(i - start),
					     (int)start + 1 };
	}
	l->t[l->n] = (struct tok){ TK_END, s + i, 0, (int)i + 1 };
	return 0;
}

const struct tok *asm_cur(const struct line *l)
{
	return &l->t[l->pos];
}

const struct tok *asm_peek(const struct line *l, int k)
{
	return l->pos + k <= l->n ? &l->t[l->pos + k] : &l->t[l->n];
}

bool asm_is_punct(const struct tok *t, char ch)
{
	return t->kind == TK_PUNCT && t->p[0] == ch;
}

bool asm_is_sign(const struct tok *t)
{
	return asm_is_punct(t, '+') || asm_is_punct(t, '-');
}

bool asm_tok_eq(const struct tok *t, const char *s)
{
	return (size_t)t->len == strlen(s) && !strncasecmp(t->p, s, t->len);
}

bool asm_is_ident(const struct tok *t)
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

bool asm_tok_is_float(const struct tok *t)
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

int asm_num_value(struct asm_ctx *c, const struct tok *t, uint64_t max,
		  uint64_t *v)
{
	int r = tok_uint(t, v);

	if (r == -EINVAL) {
		asm_err_at(c, t->col, "bad number '" TOKF "'", TOKA(t));
		return -1;
	}
	if (r == -ERANGE || *v > max) {
		asm_err_at(c, t->col, "number '" TOKF "' is too large", TOKA(t));
		return -1;
	}
	return 0;
}

int asm_float_bits(struct asm_ctx *c, const struct tok *t, bool neg,
		   uint32_t *bits)
{
	char buf[80], *end;
	double d;
	float f;

	if ((size_t)t->len >= sizeof(buf)) {
		asm_err_at(c, t->col, "float literal too long");
		return -1;
	}
	memcpy(buf, t->p, t->len);
	buf[t->len] = 0;
	errno = 0;
	d = strtod(buf, &end);
	if (*end) {
		asm_err_at(c, t->col, "bad number '" TOKF "'", TOKA(t));
		return -1;
	}
	f = (float)(neg ? -d : d);
	if (isinf(f)) {
		asm_err_at(c, t->col, "float literal '" TOKF "' out of range",
			   TOKA(t));
		return -1;
	}
	memcpy(bits, &f, sizeof(*bits));
	return 0;
}

const char *asm_fmt_num(char *buf, size_t len, int64_t v, bool hex)
{
	uint64_t mag = v < 0 ? (uint64_t)-(v + 1) + 1 : (uint64_t)v;

	if (hex)
		snprintf(buf, len, "%s0x%" PRIx64, v < 0 ? "-" : "", mag);
	else
		snprintf(buf, len, "%" PRId64, v);
	return buf;
}
