/* SPDX-License-Identifier: MIT */
/*
 * The parser's internals, shared by its two halves: ptx_parse.c (the
 * module level, declarations, the low-level helpers) and ptx_parse_body.c
 * (function bodies).
 */
#ifndef VGPU_PTX_PARSE_H
#define VGPU_PTX_PARSE_H

#include "ptx.h"

struct parser {
	struct ptx_lexer lx;
	struct ptx_diag *dg;
	struct ptx_module *m;
	struct ptx_func *f;
	int scope, nscopes;
	bool failed;
	bool allow_init; /* pp_parse_var may stop at "=" (module variables) */
	/* a store's vector elements that are immediates: each gets a hidden
	 * register of the store's width (vimm_bits; 0: none allowed), set
	 * by a mov put before the store */
	int vimm_bits, nvimm;
	struct {
		int reg;
		struct ptx_operand imm;
	} vimm[8];
};

#define TOK(ps) ((ps)->lx.tok)
#define TEXT(ps) ((ps)->lx.text)

/* ptx_parse.c: tokens and diagnostics */
bool pp_is_punct(const struct parser *ps, char c);
__attribute__((format(printf, 2, 3))) void pp_perr(struct parser *ps, const char *fmt, ...);
void pp_next(struct parser *ps);
bool pp_expect(struct parser *ps, char c);
void pp_skip_stmt(struct parser *ps);
void pp_skip_line(struct parser *ps);
void pp_copy_name(char *dst, const char *src);
int pp_type_bits(const char *t, bool *is_float, bool *is_pred);

/* ptx_parse.c: declarations */
bool pp_parse_var(struct parser *ps, char *name, uint32_t *size, uint32_t *align,
		  char *type);
void pp_parse_shared(struct parser *ps, bool module_scope, bool is_extern, bool local);

/* ptx_parse_body.c */
void pp_parse_body(struct parser *ps);

#endif
