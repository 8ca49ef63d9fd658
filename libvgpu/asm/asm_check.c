/* SPDX-License-Identifier: MIT */
/*
 * vGPU assembler: vgpu_asm_check_insn(), the checks of an encoded word
 * that its field widths alone do not make.  The encoder runs them on each
 * instruction and the disassembler on each word it prints.
 */
#include <inttypes.h>
#include <stdio.h>

#include "asm_int.h"

/* ---- checks shared with the disassembler ---- */

/* Registers that an access of the row's MSIZE moves: 1, 2 or 4. */
static unsigned data_regs(const uint64_t w[2], const struct vgpu_isa_desc *d)
{
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
		if (d->mods[g] != VGPU_MG_MSIZE)
			continue;
		switch (vgpu_isa_mod(w, VGPU_MG_MSIZE)) {
		case VGPU_MOD_MSIZE_64:
			return 2;
		case VGPU_MOD_MSIZE_128:
			return 4;
		}
	}
	return 1;
}

static bool check_wide(const uint64_t w[2], const struct vgpu_isa_desc *d,
		       unsigned kind, char *msg, size_t len)
{
	static const unsigned pair_bit[] = {
		[VGPU_OPK_RD] = VGPU_PAIR_RD, [VGPU_OPK_RA] = VGPU_PAIR_RA,
		[VGPU_OPK_RB] = VGPU_PAIR_RB, [VGPU_OPK_RC] = VGPU_PAIR_RC,
	};
	const struct kind_info *k = &asm_kinds[kind];
	bool pair = vgpu_isa_pairs_of(w, d->optype) & pair_bit[kind];
	unsigned n = pair ? 2 : data_regs(w, d);
	unsigned r = (unsigned)vgpu_field_get(w, k->pos, k->width);
	const char *bits;

	/* RZ as a whole is fine: wide zeros, or a discarded load */
	if (n == 1 || r == VGPU_RZ || r + n - 1 < VGPU_NUM_GPRS)
		return false;
	if (pair) {
		snprintf(msg, len, "a 64-bit pair needs R%u..R%u, past R254", r, r + 1);
		return true;
	}
	bits = vgpu_isa_modval_name(VGPU_MG_MSIZE, vgpu_isa_mod(w, VGPU_MG_MSIZE));
	snprintf(msg, len, "%s-bit data needs R%u..R%u, past R254", bits, r,
		 r + n - 1);
	return true;
}

static bool check_cnt(const uint64_t w[2], const struct vgpu_isa_desc *d,
		      char *msg, size_t len)
{
	unsigned v = (unsigned)vgpu_get(w, VGPU_F_CNT);

	if (v % VGPU_WARP_SIZE) {
		snprintf(msg, len, "barrier count %u is not a multiple of %u", v,
			 VGPU_WARP_SIZE);
		return true;
	}
	if (!v && d->fix_group == VGPU_MG_BARMODE &&
	    d->fix_value == VGPU_MOD_BARMODE_ARV) {
		snprintf(msg, len,
			 "%s needs a non-zero barrier count (count 0 means all warps only for BAR.SYNC and BAR.RED)",
			 d->mnemonic);
		return true;
	}
	return false;
}

static bool check_sr(const uint64_t w[2], char *msg, size_t len)
{
	unsigned v = (unsigned)vgpu_get(w, VGPU_F_SR);

	for (unsigned i = 0; i < VGPU_ISA_NUM_SREGS; i++)
		if (vgpu_isa_sregs[i].index == v)
			return false;
	snprintf(msg, len, "unknown special register index %u", v);
	return true;
}

/*
 * Registers a register-span kind covers: pairs 2, coordinates the rank,
 * im2col offsets the rank less 2 (IMDIM's values are TDIM's).
 */
static unsigned span_regs(const uint64_t w[2], const struct vgpu_isa_desc *d,
			  unsigned kind)
{
	if (kind == VGPU_OPK_STK)
		return 4;
	if (kind != VGPU_OPK_RCN && kind != VGPU_OPK_RDN)
		return 2;
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++)
		if (d->mods[g] == VGPU_MG_TDIM || d->mods[g] == VGPU_MG_IMDIM)
			return vgpu_isa_mod(w, d->mods[g]) - VGPU_MOD_TDIM_1D + 1 -
			       (kind == VGPU_OPK_RDN ? 2 : 0);
	return 1;
}

/* 64-bit pairs and coordinate ranges end at R254, or are RZ (zeros). */
static bool check_span(const uint64_t w[2], const struct vgpu_isa_desc *d,
		       unsigned kind, char *msg, size_t len)
{
	const struct kind_info *k = &asm_kinds[kind];
	unsigned n = span_regs(w, d, kind);
	unsigned r = (unsigned)vgpu_field_get(w, k->pos, k->width);

	if (kind == VGPU_OPK_STK && r == VGPU_RZ) {
		snprintf(msg, len, "the %s cannot be RZ (it is written)", k->what);
		return true;
	}
	if (r == VGPU_RZ || r + n - 1 < VGPU_NUM_GPRS)
		return false;
	if (kind == VGPU_OPK_RCN || kind == VGPU_OPK_RDN)
		snprintf(msg, len, "%uD %s need R%u..R%u, past R254",
			 kind == VGPU_OPK_RDN ? n + 2 : n, k->what, r, r + n - 1);
	else
		snprintf(msg, len, "%s needs R%u..R%u, past R254", k->what, r,
			 r + n - 1);
	return true;
}

/* What the 32-bit immediate of an mbarrier, async-copy or cluster row is. */
enum imm_rule {
	IMM_ANY,	/* no rule beyond 32 bits */
	IMM_ARRIVALS,	/* mbarrier arrival count 1 .. 2^20-1 */
	IMM_TX,		/* tx-count 0 .. 2^20-1 */
	IMM_PARITY,	/* phase parity 0 or 1 */
	IMM_CP_SIZE,	/* CP.ASYNC: 4, 8 or 16 (.CG: 16) */
	IMM_BULK_SIZE,	/* bulk copy: a non-zero multiple of 16 below 2^20 */
	IMM_WAIT_GROUP, /* bulk groups still pending: 0 .. 63 */
	IMM_RANK,	/* CTA rank in the cluster: 0 .. 15 */
};

static bool fixed_as(const struct vgpu_isa_desc *d, unsigned g, unsigned v)
{
	return d->fix_group == g && d->fix_value == v;
}

/* The rule for operand @i (an IMM) of row @d. */
static enum imm_rule imm_rule(const struct vgpu_isa_desc *d, int i)
{
	switch (d->optype) {
	case VGPU_OPT_MBAR_INIT:
		return IMM_ARRIVALS;
	case VGPU_OPT_MBAR_ARRIVE:
	case VGPU_OPT_MBAR_ARRIVE_DROP:
		return fixed_as(d, VGPU_MG_ARVKIND, VGPU_MOD_ARVKIND_EXPECT_TX)
			       ? IMM_TX
			       : IMM_ARRIVALS;
	case VGPU_OPT_MBAR_EXPECT_TX:
	case VGPU_OPT_MBAR_COMPLETE_TX:
		return IMM_TX;
	case VGPU_OPT_MBAR_TEST_WAIT:
	case VGPU_OPT_MBAR_TRY_WAIT:
		/* the operand after the address is the phase (token or
		 * parity); a later one is try_wait's suspend-time hint */
		return fixed_as(d, VGPU_MG_WAITKIND, VGPU_MOD_WAITKIND_PARITY) &&
				       i == 2
			       ? IMM_PARITY
			       : IMM_ANY;
	case VGPU_OPT_CP_ASYNC:
		return IMM_CP_SIZE;
	case VGPU_OPT_CP_BULK:
	case VGPU_OPT_CP_BULK_STORE:
		return IMM_BULK_SIZE;
	case VGPU_OPT_CP_BULK_WAIT:
		return IMM_WAIT_GROUP;
	case VGPU_OPT_MAPA:
		return IMM_RANK;
	default:
		return IMM_ANY;
	}
}

static bool check_imm(const uint64_t w[2], const struct vgpu_isa_desc *d,
		      int i, char *msg, size_t len)
{
	uint32_t v = (uint32_t)vgpu_get(w, VGPU_F_IMM32);

	switch (imm_rule(d, i)) {
	case IMM_ARRIVALS:
		if (v >= 1 && v <= VGPU_MBAR_COUNT_MAX)
			return false;
		snprintf(msg, len, "arrival count %" PRIu32 " out of range (1..%u)",
			 v, VGPU_MBAR_COUNT_MAX);
		return true;
	case IMM_TX:
		if (v <= VGPU_MBAR_TX_MAX)
			return false;
		snprintf(msg, len, "tx-count %" PRIu32 " out of range (0..%d)", v,
			 VGPU_MBAR_TX_MAX);
		return true;
	case IMM_PARITY:
		if (v <= 1)
			return false;
		snprintf(msg, len, "phase parity %" PRIu32 " is not 0 or 1", v);
		return true;
	case IMM_CP_SIZE:
		if (vgpu_isa_mod(w, VGPU_MG_CPCACHE) == VGPU_MOD_CPCACHE_CG) {
			if (v == 16)
				return false;
			snprintf(msg, len,
				 "CP.ASYNC.CG copies 16 bytes only, not %" PRIu32, v);
			return true;
		}
		if (v == 4 || v == 8 || v == 16)
			return false;
		snprintf(msg, len, "copy size %" PRIu32 " is not 4, 8 or 16", v);
		return true;
	case IMM_BULK_SIZE:
		if (v && !(v % 16) && v <= VGPU_MBAR_COUNT_MAX)
			return false;
		snprintf(msg, len,
			 "bulk copy size %" PRIu32 " is not a multiple of 16 in 16..%u",
			 v, VGPU_MBAR_COUNT_MAX & ~15u);
		return true;
	case IMM_WAIT_GROUP:
		if (v <= 63)
			return false;
		snprintf(msg, len, "pending bulk group count %" PRIu32 " out of range (0..63)",
			 v);
		return true;
	case IMM_RANK:
		if (v < VGPU_MAX_CLUSTER_CTAS)
			return false;
		snprintf(msg, len, "CTA rank %" PRIu32 " out of range (0..%u)", v,
			 VGPU_MAX_CLUSTER_CTAS - 1);
		return true;
	default:
		return false;
	}
}

/*
 * Checks that the field widths alone do not make: barrier counts that are
 * multiples of 32 (and non-zero for BAR.ARV immediates), 64/128-bit data
 * register ranges, 64-bit pairs (mbarrier states, global addresses) and
 * tensor-coordinate ranges that end at R254 (or are RZ itself), known
 * special registers, and the ranges of the mbarrier, async-copy and
 * cluster immediates (imm_rule()).  Returns the index of the first
 * offending operand of row @id with a message in @msg, or -1.  The
 * disassembler prints words that fail as .word so that its output always
 * assembles back.
 */
int vgpu_asm_check_insn(const uint64_t w[2], int id, char *msg, size_t len)
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[id];
	const char *why = vgpu_isa_atom_bad(w, d->optype);

	if (why) {
		snprintf(msg, len, "%s", why);
		return VGPU_ASM_CHECK_MNEMONIC;
	}
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		unsigned kind = VGPU_OPK_KIND(d->ops[i]);
		bool bad = false;

		switch (kind) {
		case VGPU_OPK_CNT:
			bad = check_cnt(w, d, msg, len);
			break;
		case VGPU_OPK_SR:
			bad = check_sr(w, msg, len);
			break;
		case VGPU_OPK_RD:
		case VGPU_OPK_RA:
		case VGPU_OPK_RB:
		case VGPU_OPK_RC:
			bad = check_wide(w, d, kind, msg, len);
			break;
		case VGPU_OPK_RD2:
		case VGPU_OPK_RC2:
		case VGPU_OPK_RCN:
		case VGPU_OPK_RDN:
		case VGPU_OPK_GA:
		case VGPU_OPK_GB:
		case VGPU_OPK_GC:
		case VGPU_OPK_STK:
			bad = check_span(w, d, kind, msg, len);
			break;
		case VGPU_OPK_IMM:
			bad = check_imm(w, d, i, msg, len);
			break;
		default:
			break;
		}
		if (bad)
			return i;
	}
	return -1;
}
