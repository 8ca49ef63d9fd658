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
 * The assembler only knows what each operand kind means: its field, its
 * range and its default when omitted (asm_kinds[] below).
 *
 * One pass over the lines, then a fixup pass for labels (branch targets,
 * and byte addresses in immediates and .addr data).  Every
 * diagnostic is collected and reported sorted by position; a line with an
 * error still occupies its 16 bytes so that later offsets stay right.
 *
 * One file per stage (libvgpu/asm/), their shared parts in asm_int.h:
 *
 *   asm_lex.c     a line into tokens; growable arrays, diagnostics,
 *                 token helpers, number literals
 *   asm_parse.c   tokens into a statement: guard, operands (registers,
 *                 memory, expressions), annotations; the symbol table
 *   asm_select.c  mnemonic and modifiers into candidate rows, operand
 *                 classes into the row; "accepted forms" errors
 *   asm_encode.c  the statement and its row into the 128-bit word
 *   asm.c         this file: the operand kinds, each statement through
 *                 the stages, directives and kernels, the line loop,
 *                 label fixups, the object, vgpu_assemble()
 *   asm_check.c   vgpu_asm_check_insn(), shared with the disassembler
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "asm_int.h"

/* ---- operand kinds ---- */

const char *const asm_class_names[] = {
	[CL_NONE] = "nothing",	 [CL_GPR] = "GPR",
	[CL_PRED] = "predicate", [CL_IMM] = "immediate",
	[CL_SR] = "special register", [CL_MEM] = "memory",
};

#define NO_FIELD 0, 0
#define KIND(form, what, cls, field, min, max, hex, def)                       \
	{ form, what, cls, field, min, max, hex, def }

const struct kind_info asm_kinds[VGPU_OPK__COUNT] = {
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
	[VGPU_OPK_STK] = KIND("GPR block", "call block (stack pointer, limit)", CL_GPR,
			      VGPU_F_RA, 0, 0, false, 0),
	[VGPU_OPK_RDN] = KIND("GPR range", "im2col offsets", CL_GPR,
			      VGPU_F_RD, 0, 0, false, 0),
};

/* ---- a statement through the stages: parse, select, encode ---- */

static void statement(struct asm_ctx *c, struct line *l)
{
	struct resolved r;
	struct stmt s;
	const struct cand *cd;
	int map[VGPU_ISA_MAX_OPS];
	size_t widx = c->words.n;

	if (!asm_vec_push(c, &c->words, sizeof(struct word)))
		return;
	if (asm_parse_stmt(c, l, &s) < 0 || asm_resolve_mnemonic(c, s.mn, &r) < 0)
		return;
	cd = asm_pick_row(&r, &s, map);
	if (!cd)
		asm_form_error(c, &s, &r);
	else
		asm_encode(c, &s, cd, map, widx);
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
	struct kern *k = asm_vec_push(c, &c->kerns, sizeof(*k));

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
	const struct tok *t = asm_cur(l);

	if (!asm_check_name(c, t, "kernel name", VGPU_OBJ_NAME_MAX))
		return;
	for (size_t i = 0; i < c->kerns.n; i++) {
		if (!strncmp(kern_at(c, (int)i)->k.name, t->p, t->len) &&
		    !kern_at(c, (int)i)->k.name[t->len]) {
			asm_err_at(c, t->col, "duplicate kernel '" TOKF "' (first defined at line %d)",
				   TOKA(t), kern_at(c, (int)i)->line);
			return;
		}
	}
	l->pos++;
	if (kernel_new(c, t->p, t->len, code_offset(c), t->col) == 0)
		asm_expect_end(c, l);
}

/*
 * Define a param/shared/equ name unless it clashes: params and shared names
 * are scoped to their kernel (@kernel), .equ names (@kernel -1) are global.
 */
static bool define_sym(struct asm_ctx *c, const struct tok *t,
		       enum sym_kind kind, int kernel, int64_t value)
{
	const struct sym *o = NULL;

	while ((o = asm_sym_next(c, t->p, t->len, o))) {
		if (o->kind == SYM_LABEL)
			continue;
		if (kernel < 0 || o->kernel < 0 || o->kernel == kernel) {
			asm_err_at(c, t->col, "duplicate symbol '" TOKF "' (first defined at line %d)",
				   TOKA(t), o->line);
			return false;
		}
	}
	return asm_sym_add(c, t, kind, kernel, value) != NULL;
}

static const struct ptype {
	const char *name;
	uint32_t type, size;
} ptypes[] = {
	{ "u32", VGPU_PARAM_U32, 4 }, { "s32", VGPU_PARAM_S32, 4 },
	{ "f32", VGPU_PARAM_F32, 4 }, { "u64", VGPU_PARAM_U64, 8 },
	{ "s64", VGPU_PARAM_S64, 8 }, { "ptr", VGPU_PARAM_PTR, 8 },
	{ "local", VGPU_PARAM_LOCAL, 8 }, { "data", VGPU_PARAM_DATA, 8 },
	{ "printf", VGPU_PARAM_PRINTF, 8 }, { "params", VGPU_PARAM_PARAMS, 8 },
	{ "u8", VGPU_PARAM_U8, 1 }, { "u16", VGPU_PARAM_U16, 2 },
	{ "envregs", VGPU_PARAM_ENVREGS, 4 * VGPU_ENVREGS },
};
#define NUM_PTYPES (sizeof(ptypes) / sizeof(ptypes[0]))

static void dir_param(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *ty = asm_cur(l), *nm = asm_peek(l, 1);
	const struct ptype *pt = NULL;
	struct vgpu_obj_param *p;
	struct kern *k;
	uint32_t off;

	for (unsigned i = 0; i < NUM_PTYPES && ty->kind == TK_WORD; i++)
		if (asm_tok_eq(ty, ptypes[i].name))
			pt = &ptypes[i];
	if (!pt) {
		if (ty->kind == TK_END)
			asm_err_unexpected(c, ty, "a parameter type");
		else
			asm_err_at(c, ty->col, "bad .param type '" TOKF "' (expected u8, u16, u32, s32, f32, u64, s64, ptr, local, data, printf, params or envregs)",
				   TOKA(ty));
		return;
	}
	if (!asm_check_name(c, nm, "parameter name", VGPU_OBJ_NAME_MAX))
		return;
	k = current_kernel(c, col);
	if (!k)
		return;
	off = (k->param_end + pt->size - 1) & ~(pt->size - 1);
	if (off + pt->size > VGPU_MAX_PARAM_BYTES) {
		asm_err_at(c, nm->col, "parameter '" TOKF "' ends past the %u-byte parameter space",
			   TOKA(nm), VGPU_MAX_PARAM_BYTES);
		return;
	}
	if (!define_sym(c, nm, SYM_PARAM, c->cur, off))
		return;
	p = asm_vec_push(c, &c->params, sizeof(*p));
	if (!p)
		return;
	memcpy(p->name, nm->p, (size_t)nm->len);
	p->offset = off;
	p->size = pt->size;
	p->type = pt->type;
	k = kern_at(c, c->cur);
	k->nlocal += pt->type == VGPU_PARAM_LOCAL;
	k->ndata += pt->type == VGPU_PARAM_DATA;
	k->param_end = off + pt->size;
	k->k.param_size = (k->param_end + 7) & ~7u;
	k->k.nparams++;
	l->pos += 2;
	asm_expect_end(c, l);
}

/* An integer expression operand of a directive. */
static int dir_value(struct asm_ctx *c, struct line *l, const char *what,
		     int64_t *v)
{
	struct expr e;
	const struct tok *t = asm_cur(l);

	if (t->kind == TK_END || asm_is_punct(t, ',') || asm_is_punct(t, ';')) {
		asm_err_unexpected(c, t, what);
		return -1;
	}
	if (asm_parse_expr(c, l, &e) < 0)
		return -1;
	if (e.is_float) {
		asm_err_at(c, t->col, "%s must be an integer", what);
		return -1;
	}
	return asm_resolve(c, &e, v);
}

static bool accept_comma(struct line *l)
{
	if (!asm_is_punct(asm_cur(l), ','))
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

	if (asm_cur(l)->kind == TK_WORD && asm_is_punct(asm_peek(l, 1), ',')) {
		name = asm_cur(l);
		if (!asm_check_name(c, name, "shared name", 0))
			return;
		l->pos += 2;
	}
	t = asm_cur(l);
	if (dir_value(c, l, "a size in bytes", &bytes) < 0)
		return;
	if (bytes <= 0 || bytes > UINT32_MAX) {
		asm_err_at(c, t->col, "shared size %" PRId64 " out of range (1..4294967295)",
			   bytes);
		return;
	}
	t = asm_peek(l, 1);
	if (accept_comma(l) && dir_value(c, l, "an alignment", &align) < 0)
		return;
	if (align <= 0 || align > 65536 || (align & (align - 1))) {
		asm_err_at(c, t->col, "shared alignment %" PRId64 " is not a power of two up to 65536",
			   align);
		return;
	}
	k = current_kernel(c, col);
	if (!k)
		return;
	off = (k->k.smem_static + (uint64_t)align - 1) & ~((uint64_t)align - 1);
	end = off + (uint64_t)bytes;
	if (end > UINT32_MAX) {
		asm_err_at(c, t->col, "shared memory of kernel '%s' exceeds 4 GiB",
			   k->k.name);
		return;
	}
	if (name && !define_sym(c, name, SYM_SHARED, c->cur, (int64_t)off))
		return;
	kern_at(c, c->cur)->k.smem_static = (uint32_t)end;
	asm_expect_end(c, l);
}

/* .local BYTES: local memory per thread (rounded up to 16) */
static void dir_local(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = asm_cur(l);
	struct kern *k = current_kernel(c, col);
	int64_t bytes;

	if (!k || dir_value(c, l, "a size in bytes", &bytes) < 0)
		return;
	if (k->local_line) {
		asm_err_at(c, col, "a second .local for kernel '%s' (first at line %d)",
			   k->k.name, k->local_line);
		return;
	}
	if (bytes < 1 || bytes > VGPU_MAX_LOCAL_BYTES) {
		asm_err_at(c, t->col, ".local size %" PRId64 " out of range (1..%u)", bytes,
			   VGPU_MAX_LOCAL_BYTES);
		return;
	}
	k->k.local_bytes = ((uint32_t)bytes + 15) & ~15u;
	k->local_line = c->line;
	k->local_col = col;
	asm_expect_end(c, l);
}

/* .global NAME, BYTES[, ALIGN]: zero-filled module data; NAME is its offset */
static void dir_global(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *name = asm_cur(l), *t;
	int64_t bytes, align = 16;
	uint64_t off, end;

	if (!asm_check_name(c, name, "data name", 0))
		return;
	l->pos++;
	if (!accept_comma(l)) {
		asm_err_unexpected(c, asm_cur(l), "','");
		return;
	}
	t = asm_cur(l);
	if (dir_value(c, l, "a size in bytes", &bytes) < 0)
		return;
	if (bytes <= 0 || bytes > VGPU_MAX_DATA_BYTES) {
		asm_err_at(c, t->col, "data size %" PRId64 " out of range (1..%u)", bytes,
			   VGPU_MAX_DATA_BYTES);
		return;
	}
	t = asm_peek(l, 1);
	if (accept_comma(l) && dir_value(c, l, "an alignment", &align) < 0)
		return;
	if (align <= 0 || align > 4096 || (align & (align - 1))) {
		asm_err_at(c, t->col, "data alignment %" PRId64 " is not a power of two up to 4096",
			   align);
		return;
	}
	off = (c->data_size + (uint64_t)align - 1) & ~((uint64_t)align - 1);
	end = off + (uint64_t)bytes;
	if (end > VGPU_MAX_DATA_BYTES) {
		asm_err_at(c, col, "module data exceeds %u bytes", VGPU_MAX_DATA_BYTES);
		return;
	}
	if (end > c->data_cap) {
		uint32_t cap = c->data_cap ? c->data_cap : 256;
		uint8_t *d;

		while (cap < end)
			cap *= 2;
		d = realloc(c->data, cap);
		if (!d) {
			c->nomem = true;
			return;
		}
		memset(d + c->data_cap, 0, cap - c->data_cap);
		c->data = d;
		c->data_cap = cap;
	}
	if (!define_sym(c, name, SYM_EQU, -1, (int64_t)off))
		return;
	c->data_size = (uint32_t)end;
	asm_expect_end(c, l);
}

/* .bytes OFFSET, B0, B1, ...: initial bytes of module data at OFFSET */
static void dir_bytes(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = asm_cur(l);
	int64_t off, b;

	if (dir_value(c, l, "a data offset", &off) < 0)
		return;
	while (accept_comma(l)) {
		const struct tok *bt = asm_cur(l);

		if (dir_value(c, l, "a byte", &b) < 0)
			return;
		if (b < -128 || b > 255) {
			asm_err_at(c, bt->col, "byte %" PRId64 " out of range (-128..255)", b);
			return;
		}
		if (off < 0 || off >= c->data_size) {
			asm_err_at(c, t->col, "data offset %" PRId64 " outside the %u bytes of "
				   ".global data", off, c->data_size);
			return;
		}
		c->data[off++] = (uint8_t)b;
	}
	asm_expect_end(c, l);
}

/* .addr OFFSET, LABEL: the label's byte address, 8 bytes of module data */
static void dir_addr(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = asm_cur(l), *name;
	struct fixup *f;
	int64_t off;

	if (dir_value(c, l, "a data offset", &off) < 0)
		return;
	if (off < 0 || off + 8 > c->data_size) {
		asm_err_at(c, t->col, "data offset %" PRId64 " outside the %u bytes of "
			   ".global data", off, c->data_size);
		return;
	}
	if (!accept_comma(l)) {
		asm_err_unexpected(c, asm_cur(l), "','");
		return;
	}
	name = asm_cur(l);
	if (!asm_check_name(c, name, "label", 0))
		return;
	l->pos++;
	f = asm_vec_push(c, &c->fixups, sizeof(*f));
	if (!f)
		return;
	*f = (struct fixup){ .kind = FIX_DATA64, .data_off = (uint32_t)off, .name = name->p,
			     .len = name->len, .line = c->line, .col = name->col };
	asm_expect_end(c, l);
}

/*
 * A relocation of @kind writing @bytes at data offset @off (its token @t),
 * of @target, then the end of the line.
 */
static void add_reloc(struct asm_ctx *c, struct line *l, const struct tok *t, int64_t off,
		      uint32_t bytes, uint32_t kind, int64_t target)
{
	struct vgpu_obj_reloc *r;

	if (off < 0 || off + bytes > c->data_size) {
		asm_err_at(c, t->col, "data offset %" PRId64 " outside the %u bytes of "
			   ".global data", off, c->data_size);
		return;
	}
	r = asm_vec_push(c, &c->relocs, sizeof(*r));
	if (!r)
		return;
	*r = (struct vgpu_obj_reloc){ .offset = (uint32_t)off, .kind = kind,
				      .target = (uint64_t)target };
	asm_expect_end(c, l);
}

/*
 * .dataaddr OFFSET, TARGET[, BYTE]: 8 initial bytes of the module data at
 * OFFSET: the device address of the data's byte TARGET (a relocation the
 * loader applies, the data's address being known only then); with BYTE
 * (0..7), one byte at OFFSET: byte BYTE of that address.
 */
static void dir_dataaddr(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = asm_cur(l), *bt;
	int64_t off, target, byte = -1;

	if (dir_value(c, l, "a data offset", &off) < 0)
		return;
	if (!accept_comma(l)) {
		asm_err_unexpected(c, asm_cur(l), "','");
		return;
	}
	if (dir_value(c, l, "a data offset", &target) < 0)
		return;
	bt = asm_peek(l, 1);
	if (accept_comma(l)) {
		if (dir_value(c, l, "a byte index", &byte) < 0)
			return;
		if (byte < 0 || byte > 7) {
			asm_err_at(c, bt->col, "byte %" PRId64 " of an address out of range (0..7)",
				   byte);
			return;
		}
	}
	add_reloc(c, l, t, off, byte < 0 ? 8 : 1,
		  byte < 0 ? VGPU_RELOC_ADDR64 : VGPU_RELOC_ADDR_BYTE0 + (uint32_t)byte, target);
}

/*
 * .heapaddr OFFSET: 8 bytes of the module data at OFFSET: the device
 * heap's address, which the launch of a kernel of the program writes
 * (device malloc: the heap is allocated then).
 */
static void dir_heapaddr(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = asm_cur(l);
	int64_t off;

	if (dir_value(c, l, "a data offset", &off) >= 0)
		add_reloc(c, l, t, off, 8, VGPU_RELOC_HEAP64, 0);
}

/*
 * .kdesc OFFSET, K: 64 bytes of the module data at OFFSET: the struct
 * vgpu_kernel_desc of the program's kernel K (in .kernel order), which the
 * loader writes (device-side launch: a PTX .entry's address).
 */
static void dir_kdesc(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *t = asm_cur(l);
	int64_t off, k;

	if (dir_value(c, l, "a data offset", &off) < 0)
		return;
	if (!accept_comma(l)) {
		asm_err_unexpected(c, asm_cur(l), "','");
		return;
	}
	if (dir_value(c, l, "a kernel index", &k) < 0)
		return;
	if (k < 0 || k > UINT32_MAX) {
		asm_err_at(c, t->col, "kernel index %" PRId64 " out of range", k);
		return;
	}
	add_reloc(c, l, t, off, sizeof(struct vgpu_kernel_desc), VGPU_RELOC_KDESC, k);
}

static void dir_equ(struct asm_ctx *c, struct line *l, int col)
{
	const struct tok *name = asm_cur(l);
	int64_t v;

	if (!asm_check_name(c, name, "symbol name", 0))
		return;
	l->pos++;
	if (!accept_comma(l)) {
		asm_err_unexpected(c, asm_cur(l), "','");
		return;
	}
	if (dir_value(c, l, "a value", &v) < 0)
		return;
	if (define_sym(c, name, SYM_EQU, -1, v))
		asm_expect_end(c, l);
}

static void dir_word(struct asm_ctx *c, struct line *l, int col)
{
	uint64_t v[2];
	struct word *w;

	for (int i = 0; i < 2; i++) {
		const struct tok *t = asm_cur(l);

		if (i && !accept_comma(l)) {
			asm_err_unexpected(c, t, "','");
			return;
		}
		t = asm_cur(l);
		if (t->kind != TK_NUM) {
			asm_err_unexpected(c, t, "a 64-bit number");
			return;
		}
		if (asm_num_value(c, t, UINT64_MAX, &v[i]) < 0)
			return;
		l->pos++;
	}
	w = asm_vec_push(c, &c->words, sizeof(*w));
	if (!w)
		return;
	w->w[0] = v[0];
	w->w[1] = v[1];
	asm_expect_end(c, l);
}

static const struct directive {
	const char *name;
	void (*fn)(struct asm_ctx *c, struct line *l, int col);
} directives[] = {
	{ "kernel", dir_kernel }, { "param", dir_param }, { "shared", dir_shared },
	{ "equ", dir_equ },	  { "word", dir_word },	    { "local", dir_local },
	{ "global", dir_global }, { "bytes", dir_bytes },	    { "addr", dir_addr },
	{ "dataaddr", dir_dataaddr }, { "heapaddr", dir_heapaddr },
	{ "kdesc", dir_kdesc },
};

static void directive(struct asm_ctx *c, struct line *l)
{
	const struct tok *dot = asm_cur(l), *t = asm_peek(l, 1);

	if (t->kind != TK_WORD || t->col != dot->col + 1) {
		asm_err_at(c, dot->col, "expected a directive name after '.'");
		return;
	}
	for (unsigned i = 0; i < sizeof(directives) / sizeof(directives[0]); i++) {
		if (asm_tok_eq(t, directives[i].name)) {
			l->pos += 2;
			directives[i].fn(c, l, dot->col);
			return;
		}
	}
	asm_err_at(c, dot->col, "unknown directive '." TOKF "'", TOKA(t));
}

static int define_label(struct asm_ctx *c, const struct tok *t)
{
	const struct sym *s;

	if (!asm_check_name(c, t, "label", 0))
		return -1;
	s = asm_sym_find(c, t->p, t->len, true);
	if (s) {
		asm_err_at(c, t->col, "duplicate label '" TOKF "' (first defined at line %d)",
			   TOKA(t), s->line);
		return -1;
	}
	return asm_sym_add(c, t, SYM_LABEL, -1, code_offset(c)) ? 0 : -1;
}

static void do_line(struct asm_ctx *c, const char *s, size_t n)
{
	struct line l;

	if (asm_lex_line(c, &l, s, n) < 0)
		return;
	while (asm_cur(&l)->kind == TK_WORD && asm_is_punct(asm_peek(&l, 1), ':')) {
		if (define_label(c, asm_cur(&l)) < 0)
			return;
		l.pos += 2;
	}
	if (asm_cur(&l)->kind == TK_END || (asm_is_punct(asm_cur(&l), ';') &&
					    asm_peek(&l, 1)->kind == TK_END))
		return;
	if (asm_is_punct(asm_cur(&l), '.'))
		directive(c, &l);
	else
		statement(c, &l);
}

/* ---- finishing ---- */

static void apply_fixups(struct asm_ctx *c)
{
	for (size_t i = 0; i < c->fixups.n; i++) {
		const struct fixup *f = VEC_AT(c->fixups, struct fixup, i);
		const struct sym *s = asm_sym_find(c, f->name, f->len, true);
		int64_t off;

		if (!s) {
			asm_err_line(c, f->line, f->col, "unknown %s '%.*s'",
				     f->kind == FIX_IMM ? "symbol" : "label", f->len, f->name);
			continue;
		}
		if (f->kind == FIX_DATA64) {
			for (int b = 0; b < 8; b++)
				c->data[f->data_off + (uint32_t)b] = (uint8_t)((uint64_t)s->value >> (8 * b));
			continue;
		}
		if (f->kind == FIX_IMM) {
			const struct kind_info *k = &asm_kinds[f->opk];

			if (s->value < k->min || s->value > k->max)
				asm_err_line(c, f->line, f->col, "address of '%.*s' out of range for a %s",
					     f->len, f->name, k->what);
			else
				vgpu_field_set(asm_word_at(c, f->word)->w, k->pos, k->width,
					       (uint64_t)s->value);
			continue;
		}
		off = s->value - (int64_t)(f->word * VGPU_INSN_BYTES);
		vgpu_set(asm_word_at(c, f->word)->w, VGPU_F_IMM32, (uint64_t)off);
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
			asm_err_line(c, k->line, k->col,
				     "kernel '%s' has no instructions", k->k.name);
		if (k->nlocal > 1 || (k->nlocal && !k->local_line))
			asm_err_line(c, k->line, k->col,
				     "kernel '%s' has %s '.param local' but %s", k->k.name,
				     k->nlocal > 1 ? "more than one" : "a",
				     k->nlocal > 1 ? "takes at most one" : "no .local size");
		else if (k->ndata > 1 || (k->ndata && !c->data_size))
			asm_err_line(c, k->line, k->col,
				     "kernel '%s' has %s '.param data' but %s", k->k.name,
				     k->ndata > 1 ? "more than one" : "a",
				     k->ndata > 1 ? "takes at most one" : "the program has no .global data");
		else if (!k->nlocal && k->local_line)
			asm_err_line(c, k->local_line, k->local_col,
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
				(uint8_t)(asm_word_at(c, i)->w[b / 8] >> (8 * (b % 8)));
	for (size_t i = 0; i < c->kerns.n; i++)
		out->kernels[i] = kern_at(c, (int)i)->k;
	out->code_size = (uint32_t)(nw * VGPU_INSN_BYTES);
	out->nkernels = (uint32_t)c->kerns.n;
	out->nparams = (uint32_t)c->params.n;
	if (c->data_size) {
		out->data = dup_array(c, c->data, c->data_size, 1);
		if (!out->data) {
			vgpu_object_fini(out);
			return -ENOMEM;
		}
		out->data_size = c->data_size;
	}
	if (c->relocs.n) {
		out->relocs = dup_array(c, c->relocs.p, c->relocs.n, sizeof(*out->relocs));
		if (!out->relocs) {
			vgpu_object_fini(out);
			return -ENOMEM;
		}
		out->nrelocs = (uint32_t)c->relocs.n;
	}
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
	free(c->data);
	free(c->relocs.p);
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
		asm_err_line(&c, c.line, 1, "program too large");
	apply_fixups(&c);
	check_kernels(&c);
	if (c.nomem) {
		ret = -ENOMEM;
	} else if (c.diags.n) {
		asm_write_diags(&c, err, errlen);
		ret = -EINVAL;
	} else {
		ret = build_object(&c, out);
	}
	ctx_free(&c);
	return ret;
}
