/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the instruction-table tests (test_isa.c, test_asm.c and its asm_test.h).
 */
#ifndef ISA_UTIL_H
#define ISA_UTIL_H

#include "vgpu_isa.h"

/*
 * Make word @w of a row of @optype legal where vgpu_isa_atom_bad()
 * refuses its modifier values (the tests fill every group on its own):
 * an atomic other than .ADD on a float type gets S64 (a legal .MIN/.MAX
 * of a half type too, when only its .FTZ is wrong), .FTZ off .ADD.F32
 * goes, and a CAS of an illegal size becomes .64.
 */
static inline void isa_make_atom_legal(uint64_t w[2], unsigned optype)
{
	const struct vgpu_isa_modgroup *op = &vgpu_isa_modgroups[VGPU_MG_ATOMOP];
	const struct vgpu_isa_modgroup *ty = &vgpu_isa_modgroups[VGPU_MG_ATYPE];
	const struct vgpu_isa_modgroup *ftz = &vgpu_isa_modgroups[VGPU_MG_FTZ];
	const struct vgpu_isa_modgroup *sz = &vgpu_isa_modgroups[VGPU_MG_MSIZE];

	if (!vgpu_isa_atom_bad(w, optype))
		return;
	if (optype == VGPU_OPT_ATOMG_CAS || optype == VGPU_OPT_ATOMS_CAS) {
		vgpu_field_set(w, sz->pos, sz->width, VGPU_MOD_MSIZE_64);
		return;
	}
	if (vgpu_field_get(w, op->pos, op->width) != VGPU_MOD_ATOMOP_ADD &&
	    vgpu_field_get(w, ty->pos, ty->width) > VGPU_MOD_ATYPE_S64)
		vgpu_field_set(w, ty->pos, ty->width, VGPU_MOD_ATYPE_S64);
	if (vgpu_isa_atom_bad(w, optype))
		vgpu_field_set(w, ftz->pos, ftz->width, 0);
}

#endif
