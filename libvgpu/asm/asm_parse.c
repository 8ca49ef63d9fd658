/* SPDX-License-Identifier: MIT */
/*
 * vGPU assembler, second stage: the tokens of a statement into a struct
 * stmt (guard, mnemonic, classified operands, annotations).  Also the
 * symbol table and the expressions that directives share.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "asm_int.h"

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
struct sym *asm_sym_next(struct asm_ctx *c, const char *p, int len,
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
struct sym *asm_sym_find(struct asm_ctx *c, const char *p, int len,
			 bool label)
{
	struct sym *s = NULL;

	while ((s = asm_sym_next(c, p, len, s))) {
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

struct sym *asm_sym_add(struct asm_ctx *c, const struct tok *t,
			enum sym_kind kind, int kernel, int64_t value)
{
	struct sym *s = asm_vec_push(c, &c->syms, sizeof(*s));

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
		if (asm_tok_eq(t, vgpu_isa_sregs[i].name))
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
	if (o->sink || asm_tok_eq(t, "RZ"))
		return set_class(o, CL_GPR, VGPU_RZ);
	if (asm_tok_eq(t, "PT"))
		return set_class(o, CL_PRED, VGPU_PT);
	if (reg_syntax(t, 'R', &v)) {
		if (v < VGPU_NUM_GPRS)
			return set_class(o, CL_GPR, (unsigned)v);
		asm_err_at(c, t->col, "register " TOKF " out of range (R0..R254, RZ)",
			   TOKA(t));
		return -1;
	}
	if (reg_syntax(t, 'P', &v)) {
		if (v < VGPU_NUM_PREDS)
			return set_class(o, CL_PRED, (unsigned)v);
		asm_err_at(c, t->col, "predicate " TOKF " out of range (P0..P6, PT)",
			   TOKA(t));
		return -1;
	}
	sr = sreg_lookup(t);
	if (sr >= 0)
		return set_class(o, CL_SR, vgpu_isa_sregs[sr].index);
	if (looks_like_sreg(t)) {
		asm_err_at(c, t->col, "unknown special register '" TOKF "'", TOKA(t));
		return -1;
	}
	return 1;
}

/* Names that can never be symbols because they read as registers. */
static bool is_reserved(const struct tok *t)
{
	unsigned long v;

	return asm_tok_eq(t, "RZ") || asm_tok_eq(t, "PT") || is_sink(t) ||
	       reg_syntax(t, 'R', &v) || reg_syntax(t, 'P', &v) ||
	       looks_like_sreg(t);
}

int vgpu_asm_name_ok(const char *name)
{
	struct tok t = { .kind = TK_WORD, .p = name, .len = (int)strlen(name) };

	if (!t.len || !(isalpha((unsigned char)name[0]) || name[0] == '_'))
		return 0;
	for (int i = 0; i < t.len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return 0;
	return !is_reserved(&t);
}

/* Check a name about to be defined; @max is its length limit or 0. */
bool asm_check_name(struct asm_ctx *c, const struct tok *t,
		    const char *what, int max)
{
	if (!asm_is_ident(t)) {
		asm_err_unexpected(c, t, what);
		return false;
	}
	if (is_reserved(t)) {
		asm_err_at(c, t->col, "'" TOKF "' is a %s, not a valid %s", TOKA(t),
			   is_sink(t) ? "sink operand" : "register name", what);
		return false;
	}
	if (max && t->len >= max) {
		asm_err_at(c, t->col, "%s '" TOKF "' is too long (at most %d characters)",
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
		asm_err_at(c, t->col, "%s '" TOKF "' cannot be used in an expression",
			   o.sink ? "sink" : asm_class_names[o.cls], TOKA(t));
		return -1;
	}
	s = asm_sym_find(c, t->p, t->len, false);
	if (!s) {
		asm_err_at(c, t->col, "unknown symbol '" TOKF "'", TOKA(t));
		return -1;
	}
	*v = s->value;
	return 0;
}

static int parse_term(struct asm_ctx *c, struct line *l, int64_t *v)
{
	const struct tok *t = asm_cur(l);
	uint64_t u;

	l->pos++;
	if (t->kind == TK_WORD)
		return sym_term(c, t, v);
	if (t->kind != TK_NUM) {
		l->pos--;
		asm_err_unexpected(c, t, "a number or a symbol");
		return -1;
	}
	if (asm_tok_is_float(t)) {
		asm_err_at(c, t->col, "float literal '" TOKF "' not allowed here",
			   TOKA(t));
		return -1;
	}
	if (asm_num_value(c, t, INT64_MAX, &u) < 0)
		return -1;
	*v = (int64_t)u;
	return 0;
}

/* [+|-] FLOAT, as a whole operand */
static bool float_ahead(const struct line *l)
{
	const struct tok *t = asm_cur(l);

	if (asm_is_sign(t))
		t = asm_peek(l, 1);
	return t->kind == TK_NUM && asm_tok_is_float(t);
}

static int parse_float(struct asm_ctx *c, struct line *l, struct expr *e)
{
	bool neg = false;

	if (asm_is_sign(asm_cur(l)))
		neg = l->t[l->pos++].p[0] == '-';
	if (asm_float_bits(c, asm_cur(l), neg, &e->fbits) < 0)
		return -1;
	l->pos++;
	if (asm_is_sign(asm_cur(l))) {
		asm_err_at(c, asm_cur(l)->col, "float literals cannot be combined");
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
int asm_parse_expr(struct asm_ctx *c, struct line *l, struct expr *e)
{
	memset(e, 0, sizeof(*e));
	if (asm_cur(l)->kind == TK_WORD && !asm_is_sign(asm_peek(l, 1))) {
		struct operand o;
		int k = classify_word(c, asm_cur(l), &o);

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

		if (asm_is_sign(asm_cur(l)))
			neg = l->t[l->pos++].p[0] == '-';
		if (parse_term(c, l, &v) < 0)
			return -1;
		if (neg ? __builtin_sub_overflow(e->val, v, &e->val)
			: __builtin_add_overflow(e->val, v, &e->val)) {
			asm_err_at(c, l->t[l->pos - 1].col, "expression overflows");
			return -1;
		}
		if (!asm_is_sign(asm_cur(l)))
			return 0;
	}
}

/* Value of a parsed (non-float) expression; resolves a lone symbol. */
int asm_resolve(struct asm_ctx *c, const struct expr *e, int64_t *v)
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
	t = asm_cur(l);
	if (t->kind == TK_WORD) {
		struct operand r = { 0 };
		int k = classify_word(c, t, &r);

		if (k < 0)
			return -1;
		if (k == 0 && (r.cls != CL_GPR || r.sink)) {
			asm_err_at(c, t->col, "memory base must be a GPR, not '" TOKF "'",
				   TOKA(t));
			return -1;
		}
		if (k == 0) {
			o->reg = r.reg;
			l->pos++;
			if (!asm_is_punct(asm_cur(l), ']') && !asm_is_sign(asm_cur(l))) {
				asm_err_unexpected(c, asm_cur(l), "'+', '-' or ']'");
				return -1;
			}
		}
	}
	if (!asm_is_punct(asm_cur(l), ']')) {
		o->has_off = true;
		o->off_col = asm_cur(l)->col;
		if (asm_parse_expr(c, l, &o->e) < 0)
			return -1;
	}
	if (o->e.is_float) {
		asm_err_at(c, o->col, "memory offset must be an integer");
		return -1;
	}
	if (!asm_is_punct(asm_cur(l), ']')) {
		asm_err_unexpected(c, asm_cur(l), "']'");
		return -1;
	}
	l->pos++;
	return 0;
}

static int parse_operand(struct asm_ctx *c, struct line *l, struct operand *o)
{
	const struct tok *t = asm_cur(l);
	int k;

	memset(o, 0, sizeof(*o));
	o->col = t->col;
	if (asm_is_punct(t, '!')) {
		o->neg = true;
		t = &l->t[++l->pos];
	}
	if (asm_is_punct(t, '['))
		return parse_mem(c, l, o);
	if (t->kind == TK_WORD) {
		k = classify_word(c, t, o);
		if (k <= 0) {
			l->pos += k == 0;
			return k;
		}
	}
	if (t->kind != TK_WORD && t->kind != TK_NUM && !asm_is_sign(t)) {
		asm_err_unexpected(c, t, "an operand");
		return -1;
	}
	o->cls = CL_IMM;
	return asm_parse_expr(c, l, &o->e);
}

static bool operands_end(const struct tok *t)
{
	return t->kind == TK_END || asm_is_punct(t, ';') || asm_is_punct(t, '$');
}

static int parse_operands(struct asm_ctx *c, struct line *l, struct stmt *s)
{
	if (operands_end(asm_cur(l)))
		return 0;
	for (;;) {
		if (s->nops == MAX_OPERANDS) {
			asm_err_at(c, asm_cur(l)->col, "too many operands");
			return -1;
		}
		if (parse_operand(c, l, &s->ops[s->nops++]) < 0)
			return -1;
		if (operands_end(asm_cur(l)))
			return 0;
		if (!asm_is_punct(asm_cur(l), ',')) {
			asm_err_unexpected(c, asm_cur(l), "',' or ';'");
			return -1;
		}
		l->pos++;
	}
}

static int parse_guard(struct asm_ctx *c, struct line *l, struct stmt *s)
{
	struct operand o = { 0 };
	const struct tok *t;

	s->pg = VGPU_PT;
	if (!asm_is_punct(asm_cur(l), '@'))
		return 0;
	l->pos++;
	if (asm_is_punct(asm_cur(l), '!')) {
		s->pg_not = true;
		l->pos++;
	}
	t = asm_cur(l);
	if (t->kind != TK_WORD) {
		asm_err_unexpected(c, t, "a guard predicate");
		return -1;
	}
	if (classify_word(c, t, &o) < 0)
		return -1;
	if (o.cls != CL_PRED) {
		asm_err_at(c, t->col, "guard must be a predicate (P0..P6, PT), not '" TOKF "'",
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
	const struct tok *d = asm_cur(l), *t = asm_peek(l, 1);
	unsigned i;
	uint64_t v = 0;

	if (t->kind != TK_WORD || t->col != d->col + 1) {
		asm_err_at(c, d->col, "expected an annotation name after '$'");
		return -1;
	}
	for (i = 0; i < VGPU_ISA_NUM_ANNOTS && !asm_tok_eq(t, vgpu_isa_annots[i].name); i++)
		;
	if (i == VGPU_ISA_NUM_ANNOTS) {
		asm_err_at(c, d->col, "unknown annotation '$" TOKF "' (expected $sched, $req or $wsb)",
			   TOKA(t));
		return -1;
	}
	if (*seen & (1u << i)) {
		asm_err_at(c, d->col, "duplicate annotation '$%s'", vgpu_isa_annots[i].name);
		return -1;
	}
	*seen |= 1u << i;
	l->pos += 2;
	if (asm_is_punct(asm_cur(l), '=')) {
		const struct tok *n = &l->t[++l->pos];
		uint64_t max = (1u << vgpu_isa_annots[i].width) - 1;

		if (n->kind != TK_NUM) {
			asm_err_unexpected(c, n, "a number");
			return -1;
		}
		if (asm_num_value(c, n, UINT64_MAX, &v) < 0)
			return -1;
		if (v > max) {
			asm_err_at(c, n->col, "$%s value %" PRIu64 " out of range (0..%" PRIu64 ")",
				   vgpu_isa_annots[i].name, v, max);
			return -1;
		}
		l->pos++;
	}
	s->ann[i] = (unsigned)v;
	return 0;
}

int asm_expect_end(struct asm_ctx *c, struct line *l)
{
	if (asm_is_punct(asm_cur(l), ';'))
		l->pos++;
	if (asm_cur(l)->kind == TK_END)
		return 0;
	asm_err_at(c, asm_cur(l)->col, "unexpected '" TOKF "' after the statement",
		   TOKA(asm_cur(l)));
	return -1;
}

int asm_parse_stmt(struct asm_ctx *c, struct line *l, struct stmt *s)
{
	unsigned seen = 0;

	memset(s, 0, sizeof(*s));
	if (parse_guard(c, l, s) < 0)
		return -1;
	if (asm_cur(l)->kind != TK_WORD) {
		asm_err_unexpected(c, asm_cur(l), "a mnemonic");
		return -1;
	}
	s->mn = &l->t[l->pos++];
	if (parse_operands(c, l, s) < 0)
		return -1;
	while (asm_is_punct(asm_cur(l), '$'))
		if (parse_annotation(c, l, s, &seen) < 0)
			return -1;
	return asm_expect_end(c, l);
}
