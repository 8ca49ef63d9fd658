/* SPDX-License-Identifier: MIT */
/*
 * Random well-formed programs for the fuzzers: each 16-byte word of an
 * input made a valid instruction of the instruction table, the word's own
 * bits choosing the row and every field (vgpu_wf_insn).  Used by the exec
 * oracle (tests/fuzz/exec_oracle.h, header byte 12 bit 0) and the device
 * fuzzer's launches (qemu-device/fuzz/vgpu-fuzz.c); needs only the
 * instruction table (uapi/vgpu_isa.h), no assembler.
 */
#ifndef VGPU_WELLFORMED_H
#define VGPU_WELLFORMED_H

#include <stdint.h>
#include <string.h>

#include "vgpu_isa.h"

/* 16 * k for a small signed k: a branch to a nearby instruction */
static inline uint32_t vgpu_wf_target(uint64_t raw)
{
	return (uint32_t)(16 * (int32_t)(int8_t)(raw % 32 - 16));
}

/*
 * A register of R0-R10 (RZ one time in 16): data flows between them, and
 * a pair or a 64-bit result ends at R11, below VGPU_WF_BASE.
 */
static inline uint64_t vgpu_wf_reg(uint64_t raw)
{
	return raw % 16 == 15 ? VGPU_RZ : raw % 11;
}

/*
 * The base of every address operand: R12:R13, which the first word loads
 * with the launch's first parameter (a pointer to global memory; as a
 * shared address its low word, 0 where it is 64 KiB aligned) and no other
 * instruction writes, so that loads, stores, atomics and copies reach
 * memory instead of faulting at once.
 */
#define VGPU_WF_BASE 12u

/*
 * Make the 128-bit word @w a valid instruction, its bits choosing: the
 * table row (by the first two bytes), a defined value for each modifier
 * group, registers among R0-R10 and RZ (R12:R13 for addresses), a valid special register, a
 * branch to within 16 instructions, a guard that is mostly PT, memory
 * offsets mostly small and word-aligned, barrier counts mostly multiples
 * of 32; every bit the row does not use zero.
 */
static inline void vgpu_wf_insn(uint64_t w[2])
{
	const struct vgpu_isa_desc *d =
		&vgpu_isa_table[(w[0] & 0xffff) % VGPU_I__COUNT];
	uint64_t raw[2] = { w[0], w[1] }, match[2], mask[2], used[2];

	vgpu_isa_match_mask(d, match, mask);
	vgpu_isa_used_bits(d, used);
	w[0] = match[0] | (raw[0] & used[0] & ~mask[0]);
	w[1] = match[1] | (raw[1] & used[1] & ~mask[1]);
	if (raw[1] >> 62) {	/* 3 in 4: unguarded */
		vgpu_set(w, VGPU_F_PG, 7);
		vgpu_set(w, VGPU_F_PG_NOT, 0);
	}
	for (unsigned m = 0; m < VGPU_ISA_MAX_MODS && d->mods[m]; m++) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->mods[m]];
		unsigned n = 0, k;

		for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
			n += vgpu_isa_modvals[i].group == d->mods[m];
		k = n ? (unsigned)vgpu_field_get(w, g->pos, g->width) % n : 0;
		for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
			if (vgpu_isa_modvals[i].group == d->mods[m] && !k--)
				vgpu_field_set(w, g->pos, g->width, vgpu_isa_modvals[i].value);
	}
	for (unsigned i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		switch (VGPU_OPK_KIND(d->ops[i])) {
		case VGPU_OPK_RD:
		case VGPU_OPK_RD2:
		case VGPU_OPK_RDN:
			vgpu_set(w, VGPU_F_RD, vgpu_wf_reg(vgpu_get(w, VGPU_F_RD)));
			break;
		case VGPU_OPK_RA:
			vgpu_set(w, VGPU_F_RA, vgpu_wf_reg(vgpu_get(w, VGPU_F_RA)));
			break;
		case VGPU_OPK_STK: /* a call block R4..R7: never RZ */
			vgpu_set(w, VGPU_F_RA, 4);
			break;
		case VGPU_OPK_SA:
		case VGPU_OPK_GA:
			vgpu_set(w, VGPU_F_RA, VGPU_WF_BASE);
			break;
		case VGPU_OPK_RB:
			vgpu_set(w, VGPU_F_RB, vgpu_wf_reg(vgpu_get(w, VGPU_F_RB)));
			break;
		case VGPU_OPK_GB:
			vgpu_set(w, VGPU_F_RB, VGPU_WF_BASE);
			break;
		case VGPU_OPK_RC:
		case VGPU_OPK_RC2:
		case VGPU_OPK_RCN:
			vgpu_set(w, VGPU_F_RC, vgpu_wf_reg(vgpu_get(w, VGPU_F_RC)));
			break;
		case VGPU_OPK_SC:
		case VGPU_OPK_GC:
			vgpu_set(w, VGPU_F_RC, VGPU_WF_BASE);
			break;
		case VGPU_OPK_SE:
			vgpu_set(w, VGPU_F_RE, VGPU_WF_BASE);
			break;
		case VGPU_OPK_MEM:
			vgpu_set(w, VGPU_F_RA, VGPU_WF_BASE);
			if (raw[1] & (1ull << 61))
				vgpu_set(w, VGPU_F_OFF24, 4 * (raw[0] >> 40 & 63));
			break;
		case VGPU_OPK_TARGET:
			vgpu_set(w, VGPU_F_IMM32, vgpu_wf_target(raw[0] >> 32));
			break;
		case VGPU_OPK_SR:
			vgpu_set(w, VGPU_F_SR,
				 vgpu_isa_sregs[(raw[0] >> 32) % VGPU_ISA_NUM_SREGS].index);
			break;
		case VGPU_OPK_CNT:
			if (raw[1] & (1ull << 60))
				vgpu_set(w, VGPU_F_CNT, 32 * ((raw[0] >> 44) % 33));
			break;
		default:
			break;
		}
	}
}

/*
 * Every word of @code made an instruction; the first is LDP.64 R12,
 * [RZ]: the launch's first parameter, a pointer to global memory for the
 * host fuzzers and the device's buffers both, in R12:R13 (VGPU_WF_BASE).
 */
static inline void vgpu_wf_program(uint8_t *code, uint32_t code_size)
{
	const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[VGPU_MG_MSIZE];
	uint64_t w[2], mask[2];

	if (code_size < 16)
		return;
	vgpu_isa_match_mask(&vgpu_isa_table[VGPU_I_LDP], w, mask);
	vgpu_set(w, VGPU_F_PG, 7);
	vgpu_set(w, VGPU_F_RD, VGPU_WF_BASE);
	vgpu_set(w, VGPU_F_RA, VGPU_RZ);
	vgpu_field_set(w, g->pos, g->width, VGPU_MOD_MSIZE_64);
	memcpy(code, w, 16);
	for (uint32_t i = 16; i + 16 <= code_size; i += 16) {
		memcpy(w, code + i, 16);
		vgpu_wf_insn(w);
		memcpy(code + i, w, 16);
	}
}

#endif
