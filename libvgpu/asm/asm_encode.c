/* SPDX-License-Identifier: MIT */
/*
 * vGPU assembler, fourth stage: a statement and its table row into the
 * 128-bit instruction word: modifiers, guard, annotations, then each
 * operand into its field (range-checked, defaults for omitted ones, branch
 * targets left to a fixup when they name a label).
 */
#include <string.h>

#include "asm_int.h"

/* ---- encoding ---- */

/* Register-only address kinds: [Rn], no offset (MBAR and CP.ASYNC). */
static bool is_reg_addr(unsigned kind)
{
	return asm_kinds[kind].cls == CL_MEM && kind != VGPU_OPK_MEM;
}

struct word *asm_word_at(struct asm_ctx *c, size_t i)
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
		asm_err_at(c, col, "memory offset %s out of range (%s..%s)",
			   asm_fmt_num(a, sizeof(a), v, k->hex),
			   asm_fmt_num(lo, sizeof(lo), k->min, k->hex),
			   asm_fmt_num(hi, sizeof(hi), k->max, k->hex));
	else
		asm_err_at(c, col, "%s %s out of range (%s..%s)", k->what,
			   asm_fmt_num(a, sizeof(a), v, k->hex),
			   asm_fmt_num(lo, sizeof(lo), k->min, k->hex),
			   asm_fmt_num(hi, sizeof(hi), k->max, k->hex));
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
			asm_err_at(c, o->col, "branch target out of range");
			return -1;
		}
		vgpu_set(w, VGPU_F_IMM32, (uint64_t)v);
		return 0;
	}
	f = asm_vec_push(c, &c->fixups, sizeof(*f));
	if (!f)
		return -1;
	f->kind = FIX_BRANCH;
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
	const struct kind_info *k = &asm_kinds[kind];
	int64_t v;

	if (o->e.is_float && kind != VGPU_OPK_FIMM) {
		asm_err_at(c, o->col, "%s must be an integer, not a float literal",
			   k->what);
		return -1;
	}
	if (kind == VGPU_OPK_TARGET)
		return put_target(c, o, widx, w);
	if (o->e.name && !asm_sym_find(c, o->e.name->p, o->e.name->len, false)) {
		/* a label's byte address (a function pointer): at the end */
		struct fixup *f = asm_vec_push(c, &c->fixups, sizeof(*f));

		if (!f)
			return -1;
		*f = (struct fixup){ .kind = FIX_IMM, .word = widx, .opk = kind,
				     .name = o->e.name->p, .len = o->e.name->len,
				     .line = c->line, .col = o->e.name->col };
		return 0;
	}
	if (o->e.is_float)
		v = o->e.fbits;
	else if (asm_resolve(c, &o->e, &v) < 0 || range_check(c, k, o->col, v) < 0)
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
			asm_err_at(c, o->off_col,
				   "MBAR and CP.ASYNC address operands take no offset; add it with IADD");
			return -1;
		}
		vgpu_field_set(w, asm_kinds[kind].pos, asm_kinds[kind].width, o->reg);
		return 0;
	}
	if (asm_resolve(c, &o->e, &v) < 0 ||
	    range_check(c, &asm_kinds[VGPU_OPK_MEM], o->col, v) < 0)
		return -1;
	vgpu_set(w, VGPU_F_RA, o->reg);
	vgpu_set(w, VGPU_F_OFF24, (uint64_t)v);
	return 0;
}

static int put_operand(struct asm_ctx *c, const struct operand *o,
		       unsigned kind, size_t widx, uint64_t w[2])
{
	const struct kind_info *k = &asm_kinds[kind];

	if (o->neg && kind != VGPU_OPK_PP) {
		asm_err_at(c, o->col,
			   "negation '!' is only allowed on a source predicate, not on a %s",
			   k->what);
		return -1;
	}
	if (o->sink && kind != VGPU_OPK_RD2) {
		asm_err_at(c, o->col,
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
	const struct kind_info *k = &asm_kinds[kind];

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

void asm_encode(struct asm_ctx *c, const struct stmt *s,
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
		asm_err_at(c, bad < VGPU_ASM_CHECK_MNEMONIC && map[bad] >= 0 ?
				      s->ops[map[bad]].col : s->mn->col,
			   "%s", msg);
		return;
	}
	memcpy(asm_word_at(c, widx)->w, w, sizeof(w));
}
