/* SPDX-License-Identifier: MIT */
/*
 * The assembler's internals, shared by its stages (libvgpu/asm/, asm.c
 * says how they fit together): tokens, operands and statements, the
 * operand kinds, the symbol table and the assembler state, and the
 * functions one stage file uses from another (each named asm_*).
 */
#ifndef VGPU_ASM_INT_H
#define VGPU_ASM_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* Defined in asm.c: per VGPU_OPK_* kind, and per enum opclass. */
extern const struct kind_info asm_kinds[VGPU_OPK__COUNT];
extern const char *const asm_class_names[];

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

/*
 * A label used before the end: a branch target (relative), an immediate
 * operand of kind @opk (the label's byte address, absolute), or 8 bytes of
 * module data at @data_off (.addr: the byte address, little-endian).
 */
enum fixup_kind { FIX_BRANCH, FIX_IMM, FIX_DATA64 };

struct fixup {
	enum fixup_kind kind;
	size_t word;
	unsigned opk;
	uint32_t data_off;
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
	uint32_t ndata;	    /* .param data lines */
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
	uint8_t *data; /* module data (.global, .bytes) */
	uint32_t data_size, data_cap;
	struct vec relocs; /* struct vgpu_obj_reloc (.dataaddr) */
};

/* ---- asm_lex.c: arrays, diagnostics, tokens, numbers ---- */

void *asm_vec_push(struct asm_ctx *c, struct vec *v, size_t size);
__attribute__((format(printf, 4, 5))) void
asm_err_line(struct asm_ctx *c, int line, int col, const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void
asm_err_at(struct asm_ctx *c, int col, const char *fmt, ...);
void asm_err_unexpected(struct asm_ctx *c, const struct tok *t,
			const char *expected);
void asm_write_diags(struct asm_ctx *c, char *err, size_t errlen);
int asm_lex_line(struct asm_ctx *c, struct line *l, const char *s, size_t n);
const struct tok *asm_cur(const struct line *l);
const struct tok *asm_peek(const struct line *l, int k);
bool asm_is_punct(const struct tok *t, char ch);
bool asm_is_sign(const struct tok *t);
bool asm_tok_eq(const struct tok *t, const char *s);
bool asm_is_ident(const struct tok *t);
bool asm_tok_is_float(const struct tok *t);
int asm_num_value(struct asm_ctx *c, const struct tok *t, uint64_t max,
		  uint64_t *v);
int asm_float_bits(struct asm_ctx *c, const struct tok *t, bool neg,
		   uint32_t *bits);
const char *asm_fmt_num(char *buf, size_t len, int64_t v, bool hex);

/* ---- asm_parse.c: symbols, expressions, statements ---- */

struct sym *asm_sym_next(struct asm_ctx *c, const char *p, int len,
			 const struct sym *s);
struct sym *asm_sym_find(struct asm_ctx *c, const char *p, int len,
			 bool label);
struct sym *asm_sym_add(struct asm_ctx *c, const struct tok *t,
			enum sym_kind kind, int kernel, int64_t value);
bool asm_check_name(struct asm_ctx *c, const struct tok *t,
		    const char *what, int max);
int asm_parse_expr(struct asm_ctx *c, struct line *l, struct expr *e);
int asm_resolve(struct asm_ctx *c, const struct expr *e, int64_t *v);
int asm_expect_end(struct asm_ctx *c, struct line *l);
int asm_parse_stmt(struct asm_ctx *c, struct line *l, struct stmt *s);

/* ---- asm_select.c: mnemonic, modifiers, the row ---- */

int asm_resolve_mnemonic(struct asm_ctx *c, const struct tok *mn,
			 struct resolved *r);
const struct cand *asm_pick_row(const struct resolved *r,
				const struct stmt *s, int *map);
void asm_form_error(struct asm_ctx *c, const struct stmt *s,
		    const struct resolved *r);

/* ---- asm_encode.c: the instruction word ---- */

struct word *asm_word_at(struct asm_ctx *c, size_t i);
void asm_encode(struct asm_ctx *c, const struct stmt *s,
		const struct cand *cd, const int *map, size_t widx);

#endif
