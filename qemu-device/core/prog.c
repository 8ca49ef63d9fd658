/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Program loading: decode every instruction word once, through the shared
 * instruction table, into struct vgpu_dinsn.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"

/* GPRs a load/store data operand spans: 1, 2 (.64) or 4 (.128). */
static unsigned data_span(const struct vgpu_isa_desc *desc, const uint64_t w[2])
{
	unsigned size = desc->mods[0] == VGPU_MG_MSIZE ?
				vgpu_isa_mod(w, VGPU_MG_MSIZE) : VGPU_MOD_MSIZE_32;

	switch (size) {
	case VGPU_MOD_MSIZE_64: return 2;
	case VGPU_MOD_MSIZE_128: return 4;
	default: return 1;
	}
}

static bool is_global(uint8_t optype)
{
	return optype == VGPU_OPT_LDG || optype == VGPU_OPT_STG ||
	       optype == VGPU_OPT_ATOMG || optype == VGPU_OPT_ATOMG_CAS;
}

enum reg_field { F_RD, F_RA, F_RB, F_RC, F_RE, F_NONE };

/*
 * Which register field an operand kind uses and how many consecutive
 * registers it spans.
 */
static enum reg_field operand_regs(const struct vgpu_isa_desc *desc,
				   const uint64_t w[2], unsigned kind,
				   unsigned *span)
{
	unsigned pairs = vgpu_isa_pairs_of(w, desc->optype);

	*span = 1;
	switch (kind) {
	case VGPU_OPK_RD:
		*span = pairs & VGPU_PAIR_RD ? 2 : data_span(desc, w);
		return F_RD;
	case VGPU_OPK_RD2: *span = 2; return F_RD;
	case VGPU_OPK_RA: *span = pairs & VGPU_PAIR_RA ? 2 : 1; return F_RA;
	case VGPU_OPK_SA: return F_RA;
	case VGPU_OPK_GA: *span = 2; return F_RA;
	case VGPU_OPK_MEM: *span = is_global(desc->optype) ? 2 : 1; return F_RA;
	case VGPU_OPK_RB:
		*span = pairs & VGPU_PAIR_RB ? 2 : data_span(desc, w);
		return F_RB;
	case VGPU_OPK_GB: *span = 2; return F_RB;
	case VGPU_OPK_RC:
		*span = pairs & VGPU_PAIR_RC ? 2 :
			desc->optype == VGPU_OPT_ATOMG_CAS || desc->optype == VGPU_OPT_ATOMS_CAS ?
			data_span(desc, w) : 1;
		return F_RC;
	case VGPU_OPK_SC: return F_RC;
	case VGPU_OPK_RC2:
	case VGPU_OPK_GC: *span = 2; return F_RC;
	case VGPU_OPK_RCN: *span = vgpu_isa_mod(w, VGPU_MG_TDIM) + 1u; return F_RC;
	/* im2col offsets: rank - 2 (IMDIM shares TDIM's bits and values) */
	case VGPU_OPK_RDN: *span = vgpu_isa_mod(w, VGPU_MG_IMDIM) - 1u; return F_RD;
	case VGPU_OPK_SE: return F_RE;
	case VGPU_OPK_STK: *span = 4; return F_RA; /* stack pointer, limit */
	default: return F_NONE;
	}
}

static bool decode_one(struct vgpu_dinsn *d, const uint64_t w[2],
		       uint32_t *nregs)
{
	int id = vgpu_isa_decode(w);
	const struct vgpu_isa_desc *desc;
	uint8_t *nums[] = { &d->rd_num, &d->ra_num, &d->rb_num, &d->rc_num, &d->re_num };
	uint16_t *rows[] = { &d->rd, &d->ra, &d->rb, &d->rc, &d->re };

	memset(d, 0, sizeof(*d));
	d->w[0] = w[0];
	d->w[1] = w[1];
	d->pg = (uint8_t)vgpu_get(w, VGPU_F_PG);
	d->pg_not = (uint8_t)vgpu_get(w, VGPU_F_PG_NOT);
	if (id < 0) {
		/* raised whatever the guard says, as a decoder would */
		d->pg = VGPU_PT;
		d->pg_not = 0;
		return false;
	}
	desc = &vgpu_isa_table[id];
	d->id = (uint16_t)id;
	d->stype = desc->stype;
	d->rd_num = (uint8_t)vgpu_get(w, VGPU_F_RD);
	d->ra_num = (uint8_t)vgpu_get(w, VGPU_F_RA);
	d->rb_num = (uint8_t)vgpu_get(w, VGPU_F_RB);
	d->rc_num = (uint8_t)vgpu_get(w, VGPU_F_RC);
	d->re_num = (uint8_t)vgpu_get(w, VGPU_F_RE);
	d->pp = (uint8_t)vgpu_get(w, VGPU_F_PP);
	d->pp_not = (uint8_t)vgpu_get(w, VGPU_F_PP_NOT);
	d->pu = (uint8_t)vgpu_get(w, VGPU_F_PU);
	d->barid = (uint8_t)vgpu_get(w, VGPU_F_BARID);
	d->cnt = (uint16_t)vgpu_get(w, VGPU_F_CNT);
	for (unsigned i = 0; i < VGPU_ISA_MAX_MODS && desc->mods[i]; i++)
		d->mod[i] = (uint8_t)vgpu_isa_mod(w, desc->mods[i]);
	if (desc->fix_group)
		d->mod[0] = desc->fix_value;

	for (unsigned i = 0; i < VGPU_ISA_MAX_OPS && desc->ops[i]; i++) {
		unsigned kind = VGPU_OPK_KIND(desc->ops[i]), span;
		enum reg_field f = operand_regs(desc, w, kind, &span);

		if (f != F_NONE) {
			unsigned r = *nums[f];

			*rows[f] = (uint16_t)r; /* RZ rows are fixed up later */
			if (kind == VGPU_OPK_STK && r == VGPU_RZ)
				return false; /* the call block is written */
			if (r != VGPU_RZ) {
				if (r + span > VGPU_NUM_GPRS)
					return false;
				if (r + span > *nregs)
					*nregs = r + span;
			}
		}
		switch (kind) {
		case VGPU_OPK_MEM:
			d->imm = (uint32_t)((int32_t)((uint32_t)vgpu_get(w, VGPU_F_OFF24) << 8) >> 8);
			break;
		case VGPU_OPK_IMM:
		case VGPU_OPK_FIMM:
		case VGPU_OPK_TARGET:
			d->imm = (uint32_t)vgpu_get(w, VGPU_F_IMM32);
			break;
		case VGPU_OPK_SR: {
			bool ok = false;

			d->imm = (uint32_t)vgpu_get(w, VGPU_F_SR);
			for (unsigned s = 0; s < VGPU_ISA_NUM_SREGS; s++)
				ok |= vgpu_isa_sregs[s].index == d->imm;
			if (!ok)
				return false;
			break;
		}
		default:
			break;
		}
	}
	return true;
}

/*
 * Second pass: RZ becomes the zero rows (sources) or the scratch rows
 * (destinations), which follow the program's own registers.  The rd field
 * holds a destination but in the im2col copies (their offsets).
 */
static void fix_rz_rows(struct vgpu_dinsn *d, uint32_t nregs)
{
	const struct vgpu_isa_desc *desc = &vgpu_isa_table[d->id];
	uint8_t *nums[] = { &d->rd_num, &d->ra_num, &d->rb_num, &d->rc_num, &d->re_num };
	uint16_t *rows[] = { &d->rd, &d->ra, &d->rb, &d->rc, &d->re };

	for (unsigned i = 0; i < VGPU_ISA_MAX_OPS && desc->ops[i]; i++) {
		unsigned span, kind = VGPU_OPK_KIND(desc->ops[i]);
		enum reg_field f = operand_regs(desc, d->w, kind, &span);
		bool dest = f == F_RD && kind != VGPU_OPK_RDN; /* RDN: sources */

		if (f != F_NONE && *nums[f] == VGPU_RZ)
			*rows[f] = (uint16_t)(dest ? nregs + VGPU_ZERO_ROWS : nregs);
	}
}
/*
 * Does instruction @id change anything another warp can observe (memory,
 * a barrier, an mbarrier, the copy engine, the set of live threads)?  A
 * failed mbarrier wait repeated with none of these in between is a spin.
 */
static bool insn_has_effect(uint16_t id)
{
	if (id >= VGPU_I__COUNT)
		return true;
	switch (vgpu_isa_table[id].optype) {
	case VGPU_OPT_STG: case VGPU_OPT_STS:
	case VGPU_OPT_ATOMG: case VGPU_OPT_ATOMS:
	case VGPU_OPT_ATOMG_CAS: case VGPU_OPT_ATOMS_CAS:
	case VGPU_OPT_EXIT:
	case VGPU_OPT_BAR: case VGPU_OPT_BAR_RED: case VGPU_OPT_R2B:
	case VGPU_OPT_MBAR_INIT: case VGPU_OPT_MBAR_INVAL:
	case VGPU_OPT_MBAR_ARRIVE: case VGPU_OPT_MBAR_ARRIVE_DROP:
	case VGPU_OPT_MBAR_EXPECT_TX: case VGPU_OPT_MBAR_COMPLETE_TX:
	case VGPU_OPT_CP_ASYNC: case VGPU_OPT_CP_ASYNC_MBAR_ARRIVE:
	case VGPU_OPT_CP_BULK: case VGPU_OPT_CP_BULK_STORE:
	case VGPU_OPT_CP_TENSOR: case VGPU_OPT_CP_TENSOR_STORE:
	case VGPU_OPT_CP_TENSOR_IM2COL: case VGPU_OPT_CP_TENSOR_STORE_IM2COL:
	case VGPU_OPT_CP_TENSOR_RED: case VGPU_OPT_CP_TENSOR_RED_IM2COL:
	case VGPU_OPT_BAR_CLUSTER:
	case VGPU_OPT_CALL: /* pushes to memory */
		return true;
	default:
		return false;
	}
}


int vgpu_prog_load(const void *code, uint32_t size, struct vgpu_prog **out)
{
	const uint8_t *p = code;
	struct vgpu_prog *prog;
	uint32_t nregs = 0;

	*out = NULL;
	if (!code || !size || size % VGPU_INSN_BYTES)
		return -EINVAL;
	prog = calloc(1, sizeof(*prog));
	if (!prog)
		return -ENOMEM;
	prog->n = size / VGPU_INSN_BYTES;
	prog->insns = calloc(prog->n + 1, sizeof(*prog->insns));
	if (!prog->insns) {
		free(prog);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < prog->n; i++) {
		struct vgpu_dinsn *d = &prog->insns[i];
		uint64_t w[2];

		memcpy(&w[0], p + i * VGPU_INSN_BYTES, 8);
		memcpy(&w[1], p + i * VGPU_INSN_BYTES + 8, 8);
		if (decode_one(d, w, &nregs) && vgpu_exec_table[d->id].fn) {
			d->fn = vgpu_exec_table[d->id].fn;
		} else {
			d->id = VGPU_I__COUNT;
			d->fn = vgpu_exec_illegal;
		}
	}
	for (uint32_t i = 0; i < prog->n; i++)
		if (prog->insns[i].id != VGPU_I__COUNT)
			fix_rz_rows(&prog->insns[i], nregs);
	for (uint32_t i = 0; i < prog->n; i++) {
		prog->insns[i].unguarded = prog->insns[i].pg == VGPU_PT &&
					   !prog->insns[i].pg_not;
		prog->insns[i].effect = insn_has_effect(prog->insns[i].id);
	}
	/* the sentinel below is not plain: a run ends by the program's end */
	for (uint32_t i = prog->n; i-- > 0;) {
		struct vgpu_dinsn *d = &prog->insns[i];

		if (d->id != VGPU_I__COUNT && vgpu_exec_table[d->id].plain)
			d->plain_run = i + 1 < prog->n && d[1].plain_run < UINT8_MAX ?
				       d[1].plain_run + 1 : 1;
	}
	prog->insns[prog->n].id = VGPU_I__COUNT;
	prog->insns[prog->n].pg = VGPU_PT;
	prog->insns[prog->n].fn = vgpu_exec_fell_off;
	prog->insns[prog->n].unguarded = true;
	prog->nregs = nregs;
	prog->rows = nregs + VGPU_ZERO_ROWS + VGPU_SCRATCH_ROWS;
	*out = prog;
	return 0;
}

void vgpu_prog_free(struct vgpu_prog *prog)
{
	if (!prog)
		return;
	free(prog->insns);
	free(prog);
}

uint32_t vgpu_prog_nregs(const struct vgpu_prog *prog)
{
	return prog->nregs;
}
