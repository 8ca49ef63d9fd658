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
	/* the first register of the innermost { } scope: a .reg naming one
	 * from there on again is a duplicate (ptxas's error) */
	int scope_reg0;
	bool failed;
	bool allow_init; /* pp_parse_var may stop at "=" (module variables) */
	/* .extern .global/.const declarations (ptx_parse.c extern_var()) */
	struct pp_extern {
		char name[PTX_NAME_MAX];
		int line;
	} *ext;
	int next;
	/*
	 * Immediates among a vector operand's source elements (a store's,
	 * an atomic's or reduction's values, a mov's pack, a tensor copy's
	 * coordinates and im2col offsets): each gets a hidden register, set
	 * by a mov put before the instruction.  vimm_in: the instruction
	 * whose operands are being parsed, NULL when it takes none;
	 * vimm_in_mem: parsing [tensor-map, {coordinates}]; type: each
	 * one's mov type (.b32, .f32, ..).
	 */
	const struct ptx_insn *vimm_in;
	bool vimm_in_mem;
	int nvimm;
	struct {
		int reg;
		char type[16];
		struct ptx_operand imm;
	} vimm[16];
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

/* ptx_parse_vec.c: vector operands' elements (see there) */
bool pp_vimm_takes(const struct ptx_insn *in);
/* the width of an immediate element of a vector of @nvec, its mov's type */
int pp_vimm_type(struct parser *ps, int nvec, char type[16]);
bool pp_vector_sources(struct parser *ps, const struct ptx_insn *in,
		       const struct ptx_operand *o, int nvimm);
void pp_f32_literals(struct ptx_insn *in);

#endif
