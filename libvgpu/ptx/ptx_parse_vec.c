// SPDX-License-Identifier: MIT
/*
 * The PTX parser: what a vector operand's elements may be (ptx_parse_body.c
 * parses them).  Immediates among source elements get hidden registers
 * set by movs before the instruction; `_` sinks are destinations only.
 * And the rounding of a decimal literal in a .f32 instruction.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptx_parse.h"

static bool has_mod(const struct ptx_insn *in, const char *m)
{
	for (int i = 0; i < in->nmods; i++)
		if (!strcmp(in->mods[i], m))
			return true;
	return false;
}

/* Does @in take immediates among a vector operand's source elements? */
bool pp_vimm_takes(const struct ptx_insn *in)
{
	return !strcmp(in->op, "st") || !strcmp(in->op, "atom") || !strcmp(in->op, "red") ||
	       !strcmp(in->op, "mov") || (!strcmp(in->op, "cp") && has_mod(in, ".tensor"));
}

/*
 * The element of a vector operand of @nvec elements that an immediate
 * stands for (PTX ISA: st, atom and red take their type's; mov's pack
 * the type's bits / nvec; a tensor copy's coordinates are .s32, its
 * im2col offsets .b16): its width, and in @type the mov that sets its
 * hidden register (a float type's own, so that 1.0 is converted).
 */
int pp_vimm_type(struct parser *ps, int nvec, char type[16])
{
	const struct ptx_insn *in = ps->vimm_in;
	int bits = 32;
	bool fl = false, pr;

	if (!strcmp(in->op, "cp")) {
		bits = ps->vimm_in_mem ? 32 : 16;
	} else {
		for (int i = 0; i < in->nmods; i++) {
			bool f;
			int b = pp_type_bits(in->mods[i], &f, &pr);

			if (b > 0 && !pr) {
				bits = b;
				fl = f && b >= 32 && strcmp(in->mods[i], ".f16x2");
			}
		}
		if (!strcmp(in->op, "mov")) {
			bits = nvec > 0 ? bits / nvec : bits;
			fl = false;
		}
	}
	snprintf(type, 16, "%s%d", fl ? ".f" : ".b", bits);
	return bits;
}

/*
 * A floating-point literal without 0f/0d (1.5, 1e-3) is a double (PTX ISA
 * 4.5.1.3); an instruction whose source type is .f32 (its last type)
 * takes it rounded to single precision.
 */
void pp_f32_literals(struct ptx_insn *in)
{
	const char *t = NULL;

	for (int i = 0; i < in->nmods; i++) {
		bool fl, pr;

		if (pp_type_bits(in->mods[i], &fl, &pr) > 0)
			t = in->mods[i];
	}
	if (!t || strcmp(t, ".f32"))
		return;
	for (int i = 0; i < in->nops; i++) {
		struct ptx_operand *o = &in->ops[i];
		double d;
		float f;
		uint32_t w;

		if (o->kind != PTX_O_IMM || !o->fimm || o->sym[0] != 'd')
			continue;
		memcpy(&d, &o->imm, sizeof(d));
		f = (float)d;
		memcpy(&w, &f, sizeof(w));
		o->imm = w;
		o->sym[0] = '\0';
	}
}

/*
 * Operand @o of @in just parsed (immediates from ps->vimm[@nvimm] on are
 * its): a vector operand's elements are destinations in operand 0 (ld,
 * atom, a mov's unpack: no immediates, `_` sinks allowed) and sources
 * elsewhere (a sink there is an error, as ptxas's).
 */
bool pp_vector_sources(struct parser *ps, const struct ptx_insn *in,
		       const struct ptx_operand *o, int nvimm)
{
	bool dst = o == &in->ops[0] && o->kind == PTX_O_VEC;

	if (dst && ps->nvimm > nvimm) {
		ps->lx.tcol = o->col;
		pp_perr(ps, "an immediate in a destination vector operand");
		return false;
	}
	if (dst || (o->kind != PTX_O_VEC && (o->kind != PTX_O_MEM || !o->nvec)))
		return true;
	for (int k = 0; k < o->nvec; k++)
		if (o->vec[k] < 0) {
			ps->lx.tcol = o->col;
			pp_perr(ps, "a sink '_' in a source vector operand");
			return false;
		}
	return true;
}
