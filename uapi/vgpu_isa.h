/* SPDX-License-Identifier: MIT */
/*
 * vGPU instruction-set contract: instruction layout, field positions, the
 * expanded instruction table and the object-file format written by vgpu-as.
 *
 * Every instruction is 128 bits, stored as two little-endian 64-bit words
 * (w[0] = bits 0..63, w[1] = bits 64..127).  The layout follows the BCU group
 * of the specification (seed 002) and every other group reuses the same
 * positions for the same roles:
 *
 *   bits     field    role
 *   0..7     optype   operation type (VGPU_OPT_*)
 *   8..11    stype    operand-source type (VGPU_ST_*)
 *   12..14   pg       guard predicate (P0..P6, 7 = PT)
 *   15       pg.not   guard negation
 *   16..23   rd       destination GPR (255 = RZ; im2col tensor copies:
 *                     the first register of their offsets, a source)
 *   24..31   ra       source GPR A
 *   32..39   rb       source GPR B (BAR_RIR/BAR_RED_RIR call it rc)
 *   40..43   barid    UImm4 barrier id
 *   44..55   cnt      UImm12 barrier count
 *   32..63   imm32    32-bit immediate / branch offset (in place of rb..cnt)
 *   32..39   sr       special-register index (S2R)
 *   40..63   off24    signed 24-bit memory offset ([ra + off24])
 *   64..71   rc       source GPR C (IMAD, FFMA, CAS; async: token, coords)
 *   72..79   re       source GPR E (async copies: the mbarrier address)
 *   80..97   mods     modifier groups (VGPU_ISA_MODGROUPS positions)
 *   98..100  pp       source predicate
 *   101      pp.not   source predicate negation
 *   106..108 pu       destination predicate
 *   112..115 sched    scheduling annotation $sched=N (stall hint, 0..15)
 *   116..121 req      scheduling annotation $req=N  (wait mask, 0..63)
 *   122..124 wsb      scheduling annotation $wsb=N  (scoreboard, 0..7)
 *
 * The scheduling annotations are recorded so that text round-trips, but the
 * core has no scoreboard and ignores them.  All other bits must be zero; the
 * decoder treats a set reserved bit as an illegal instruction.
 */
#ifndef VGPU_ISA_H
#define VGPU_ISA_H

/* the layout checks below, in C++ too (libvgpu's vgpu.h is C and C++) */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#include <stdint.h>

#include "vgpu_isa_table.h"

#define VGPU_INSN_BYTES 16u

/* (position, width) pairs */
#define VGPU_F_OPTYPE 0, 8
#define VGPU_F_STYPE 8, 4
#define VGPU_F_PG 12, 3
#define VGPU_F_PG_NOT 15, 1
#define VGPU_F_RD 16, 8
#define VGPU_F_RA 24, 8
#define VGPU_F_RB 32, 8
#define VGPU_F_SR 32, 8
#define VGPU_F_BARID 40, 4
#define VGPU_F_CNT 44, 12
#define VGPU_F_IMM32 32, 32
#define VGPU_F_OFF24 40, 24
#define VGPU_F_RC 64, 8
#define VGPU_F_RE 72, 8
#define VGPU_F_PP 98, 3
#define VGPU_F_PP_NOT 101, 1
#define VGPU_F_PU 106, 3
#define VGPU_F_SCHED 112, 4
#define VGPU_F_REQ 116, 6
#define VGPU_F_WSB 122, 3

#define VGPU_RZ 255u /* reads as zero, writes are discarded */
#define VGPU_PT 7u   /* reads as true, writes are discarded */
#define VGPU_NUM_GPRS 255u
#define VGPU_NUM_PREDS 7u

static inline uint64_t vgpu_field_get(const uint64_t w[2], unsigned pos,
				      unsigned width)
{
	uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);

	if (pos >= 64)
		return (w[1] >> (pos - 64)) & mask;
	if (pos + width <= 64)
		return (w[0] >> pos) & mask;
	return ((w[0] >> pos) | (w[1] << (64 - pos))) & mask;
}

static inline void vgpu_field_set(uint64_t w[2], unsigned pos, unsigned width,
				  uint64_t val)
{
	uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);

	val &= mask;
	if (pos >= 64) {
		w[1] = (w[1] & ~(mask << (pos - 64))) | (val << (pos - 64));
	} else if (pos + width <= 64) {
		w[0] = (w[0] & ~(mask << pos)) | (val << pos);
	} else {
		w[0] = (w[0] & ~(mask << pos)) | (val << pos);
		w[1] = (w[1] & ~(mask >> (64 - pos))) | (val >> (64 - pos));
	}
}

/* Wrapper so call sites read as vgpu_get(w, VGPU_F_RD). */
#define vgpu_get(w, f) vgpu_field_get((w), f)
#define vgpu_set(w, f, v) vgpu_field_set((w), f, (v))

/* Operand-source types, field<8,4>.  Names as in the seed. */
enum vgpu_stype {
	VGPU_ST_X = 0,	 /* no source variant */
	VGPU_ST_I = 1,	 /* immediates */
	VGPU_ST_R = 2,	 /* registers */
	VGPU_ST_RRI = 3, /* BCU: register id, immediate count */
	VGPU_ST_RIR = 4, /* BCU: immediate id, register count */
	VGPU_ST_RI = 5,	 /* R2B: immediate id, register value; TRY_WAIT.PARITY: immediate parity */
};

/* Operand kinds.  Bit 5 (VGPU_OPK_OPTIONAL) marks an omissible operand. */
enum vgpu_opk {
	VGPU_OPK_NONE = 0,
	VGPU_OPK_RD,	 /* GPR, field rd */
	VGPU_OPK_RA,	 /* GPR, field ra */
	VGPU_OPK_RB,	 /* GPR, field rb */
	VGPU_OPK_RC,	 /* GPR, field rc */
	VGPU_OPK_IMM,	 /* 32-bit integer immediate, field imm32 */
	VGPU_OPK_FIMM,	 /* 32-bit float immediate (raw bits), field imm32 */
	VGPU_OPK_BARID,	 /* UImm4, field barid; default 0 */
	VGPU_OPK_CNT,	 /* UImm12 multiple of 32, field cnt; default 0 */
	VGPU_OPK_PP,	 /* {!}predicate, fields pp/pp.not; default PT */
	VGPU_OPK_PU,	 /* predicate destination, field pu; default PT */
	VGPU_OPK_SR,	 /* special register, field sr */
	VGPU_OPK_MEM,	 /* [ra + off24]; global: ra:ra+1 is a 64-bit address */
	VGPU_OPK_TARGET, /* branch target; imm32 = target - this insn (bytes) */
	VGPU_OPK_RD2,	 /* 64-bit destination pair rd:rd+1 ("_" = RZ: sink) */
	VGPU_OPK_RC2,	 /* 64-bit source pair rc:rc+1 (mbarrier token) */
	VGPU_OPK_RCN,	 /* rc .. rc+rank-1: tensor coordinates (TDIM) */
	VGPU_OPK_SA,	 /* [ra]: 32-bit shared address, no offset */
	VGPU_OPK_SC,	 /* [rc]: 32-bit shared address */
	VGPU_OPK_SE,	 /* [re]: 32-bit shared address (mbarrier) */
	VGPU_OPK_GA,	 /* [ra]: 64-bit global address in ra:ra+1 */
	VGPU_OPK_GB,	 /* [rb]: 64-bit global address in rb:rb+1 */
	VGPU_OPK_GC,	 /* [rc]: 64-bit global address in rc:rc+1 */
	/* ra .. ra+3: the call block, stack pointer ra:ra+1 (64-bit local
	 * address) and stack limit ra+2:ra+3 (CALL, RET, SALLOC) */
	VGPU_OPK_STK,
	/* rd .. rd+rank-3: im2col offsets (sources, zero-extended 16-bit;
	 * RZ: all 0), W first; the rank is IMDIM's */
	VGPU_OPK_RDN,
	VGPU_OPK__COUNT
};
#define VGPU_OPK_OPTIONAL 0x20u
#define VGPU_OPK_KIND(k) ((k) & 0x1fu)

/* Optypes */
enum vgpu_optype {
#define VGPU_X_OPT(name, val) VGPU_OPT_##name = (val),
	VGPU_ISA_OPTYPES(VGPU_X_OPT)
#undef VGPU_X_OPT
};

/* Modifier groups */
enum vgpu_modgroup {
	VGPU_MG_NONE = 0,
#define VGPU_X_MG(g, pos, width, def) VGPU_MG_##g,
	VGPU_ISA_MODGROUPS(VGPU_X_MG)
#undef VGPU_X_MG
	VGPU_MG__COUNT
};

/* Modifier values: VGPU_MOD_<GROUP>_<NAME> */
enum vgpu_modval {
#define VGPU_X_MV(g, name, val) VGPU_MOD_##g##_##name = (val),
	VGPU_ISA_MODVALS(VGPU_X_MV)
#undef VGPU_X_MV
};

struct vgpu_isa_modgroup {
	const char *name;
	uint8_t pos;
	uint8_t width;
	int8_t def; /* -1: required */
};

struct vgpu_isa_modval {
	uint8_t group; /* enum vgpu_modgroup */
	uint8_t value;
	const char *name;
};

/* Instruction ids: VGPU_I_<ID> */
enum vgpu_insn_id {
#define VGPU_X_ID(id, mn, opt, st, fix, mods, ops) VGPU_I_##id,
	VGPU_ISA_INSNS(VGPU_X_ID)
#undef VGPU_X_ID
	VGPU_I__COUNT
};

#define VGPU_ISA_MAX_OPS 5
#define VGPU_ISA_MAX_MODS 4

struct vgpu_isa_desc {
	const char *mnemonic; /* before variable modifiers */
	uint8_t optype;
	uint8_t stype;
	uint8_t fix_group;  /* VGPU_MG_NONE if no fixed modifier */
	uint8_t fix_value;
	uint8_t mods[VGPU_ISA_MAX_MODS]; /* variable groups, 0-terminated */
	uint8_t ops[VGPU_ISA_MAX_OPS];	 /* operand kinds, 0-terminated */
};

struct vgpu_isa_alias {
	const char *alias;
	const char *canonical;
};

struct vgpu_isa_sreg {
	const char *name;
	uint8_t index;
};

/* Helpers used by the table expansion. */
#define VGPU_ISA_FIX(g, v) VGPU_MG_##g, (v)
#define VGPU_ISA_NOFIX VGPU_MG_NONE, 0
#define VGPU_ISA_MODS0() { 0 }
#define VGPU_ISA_MODS1(a) { VGPU_MG_##a }
#define VGPU_ISA_MODS2(a, b) { VGPU_MG_##a, VGPU_MG_##b }
#define VGPU_ISA_MODS3(a, b, c) { VGPU_MG_##a, VGPU_MG_##b, VGPU_MG_##c }
#define VGPU_ISA_MODS4(a, b, c, d)                                             \
	{ VGPU_MG_##a, VGPU_MG_##b, VGPU_MG_##c, VGPU_MG_##d }
#define VGPU_ISA_K(k) VGPU_OPK_##k
#define VGPU_ISA_OPS0() { 0 }
#define VGPU_ISA_OPS1(a) { VGPU_ISA_K(a) }
#define VGPU_ISA_OPS2(a, b) { VGPU_ISA_K(a), VGPU_ISA_K(b) }
#define VGPU_ISA_OPS3(a, b, c) { VGPU_ISA_K(a), VGPU_ISA_K(b), VGPU_ISA_K(c) }
#define VGPU_ISA_OPS4(a, b, c, d)                                              \
	{ VGPU_ISA_K(a), VGPU_ISA_K(b), VGPU_ISA_K(c), VGPU_ISA_K(d) }
#define VGPU_ISA_OPS5(a, b, c, d, e)                                           \
	{ VGPU_ISA_K(a), VGPU_ISA_K(b), VGPU_ISA_K(c), VGPU_ISA_K(d),          \
	  VGPU_ISA_K(e) }
#define VGPU_OPK_OPT(k) (VGPU_OPK_##k | VGPU_OPK_OPTIONAL)

/* Local names that the table rows use, so rows stay short. */
#define FIX VGPU_ISA_FIX
#define NOFIX VGPU_ISA_NOFIX
#define MODS0 VGPU_ISA_MODS0
#define MODS1 VGPU_ISA_MODS1
#define MODS2 VGPU_ISA_MODS2
#define MODS3 VGPU_ISA_MODS3
#define MODS4 VGPU_ISA_MODS4
#define OPS0 VGPU_ISA_OPS0
#define OPS1 VGPU_ISA_OPS1
#define OPS2 VGPU_ISA_OPS2
#define OPS3 VGPU_ISA_OPS3
#define OPS4 VGPU_ISA_OPS4
#define OPS5 VGPU_ISA_OPS5

/*
 * The tables' rows in their enums' order (the same X-macros make both):
 * C names each row's index, C++ (which has no array designators) relies
 * on the order.
 */
#ifdef __cplusplus
#define VGPU_ISA_AT(i)
#else
#define VGPU_ISA_AT(i) [i] =
#endif

static const struct vgpu_isa_desc vgpu_isa_table[VGPU_I__COUNT] = {
#define VGPU_X_DESC(id, mn, opt, st, fix, mods, ops)                           \
	VGPU_ISA_AT(VGPU_I_##id) { mn, VGPU_OPT_##opt, VGPU_ST_##st, fix, mods, ops },
	VGPU_ISA_INSNS(VGPU_X_DESC)
#undef VGPU_X_DESC
};

#undef FIX
#undef NOFIX
#undef MODS0
#undef MODS1
#undef MODS2
#undef MODS3
#undef MODS4
#undef OPS0
#undef OPS1
#undef OPS2
#undef OPS3
#undef OPS4
#undef OPS5

static const struct vgpu_isa_modgroup vgpu_isa_modgroups[VGPU_MG__COUNT] = {
#define VGPU_X_MG(g, p, w, d) VGPU_ISA_AT(VGPU_MG_##g) { #g, p, w, d },
	VGPU_ISA_MODGROUPS(VGPU_X_MG)
#undef VGPU_X_MG
};

static const struct vgpu_isa_modval vgpu_isa_modvals[] = {
#define VGPU_X_MV(g, n, v) { VGPU_MG_##g, v, #n },
	VGPU_ISA_MODVALS(VGPU_X_MV)
#undef VGPU_X_MV
};
#define VGPU_ISA_NUM_MODVALS                                                   \
	(sizeof(vgpu_isa_modvals) / sizeof(vgpu_isa_modvals[0]))

static const struct vgpu_isa_alias vgpu_isa_aliases[] = {
#define VGPU_X_AL(a, c) { a, c },
	VGPU_ISA_ALIASES(VGPU_X_AL)
#undef VGPU_X_AL
};
#define VGPU_ISA_NUM_ALIASES                                                   \
	(sizeof(vgpu_isa_aliases) / sizeof(vgpu_isa_aliases[0]))

struct vgpu_isa_annot {
	const char *name;
	uint8_t pos, width;
};

static const struct vgpu_isa_annot vgpu_isa_annots[] = {
#define VGPU_X_AN(n, f) { #n, VGPU_F_##f },
	VGPU_ISA_ANNOTS(VGPU_X_AN)
#undef VGPU_X_AN
};
#define VGPU_ISA_NUM_ANNOTS (sizeof(vgpu_isa_annots) / sizeof(vgpu_isa_annots[0]))

enum vgpu_sreg {
#define VGPU_X_SR(n, s, i) VGPU_SR_##n = (i),
	VGPU_ISA_SREGS(VGPU_X_SR)
#undef VGPU_X_SR
};

static const struct vgpu_isa_sreg vgpu_isa_sregs[] = {
#define VGPU_X_SR(n, s, i) { s, i },
	VGPU_ISA_SREGS(VGPU_X_SR)
#undef VGPU_X_SR
};
#define VGPU_ISA_NUM_SREGS (sizeof(vgpu_isa_sregs) / sizeof(vgpu_isa_sregs[0]))

/* Is value @v a defined value of modifier group @g? */
static inline const char *vgpu_isa_modval_name(unsigned g, unsigned v)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
		if (vgpu_isa_modvals[i].group == g && vgpu_isa_modvals[i].value == v)
			return vgpu_isa_modvals[i].name;
	return 0;
}

/*
 * Match and mask of a table row over the two instruction words: the optype,
 * the stype and the fixed modifier, if any.  Used by the decoder and the
 * overlap test.
 */
static inline void vgpu_isa_match_mask(const struct vgpu_isa_desc *d,
				       uint64_t match[2], uint64_t mask[2])
{
	match[0] = match[1] = mask[0] = mask[1] = 0;
	vgpu_set(match, VGPU_F_OPTYPE, d->optype);
	vgpu_set(mask, VGPU_F_OPTYPE, 0xff);
	vgpu_set(match, VGPU_F_STYPE, d->stype);
	vgpu_set(mask, VGPU_F_STYPE, 0xf);
	if (d->fix_group) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->fix_group];

		vgpu_field_set(match, g->pos, g->width, d->fix_value);
		vgpu_field_set(mask, g->pos, g->width, ~0ull);
	}
}

/*
 * Bits a row may legitimately set: everything its operands, modifiers and
 * the common fields (guard, annotations) use.  A set bit outside this mask
 * makes the word an illegal instruction.
 */
static inline void vgpu_isa_used_bits(const struct vgpu_isa_desc *d,
				      uint64_t used[2])
{
	uint64_t m[2];

	vgpu_isa_match_mask(d, m, used);
	vgpu_set(used, VGPU_F_PG, ~0ull);
	vgpu_set(used, VGPU_F_PG_NOT, ~0ull);
	for (unsigned i = 0; i < VGPU_ISA_NUM_ANNOTS; i++)
		vgpu_field_set(used, vgpu_isa_annots[i].pos,
			       vgpu_isa_annots[i].width, ~0ull);
	for (unsigned i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->mods[i]];

		vgpu_field_set(used, g->pos, g->width, ~0ull);
	}
	for (unsigned i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		switch (VGPU_OPK_KIND(d->ops[i])) {
		case VGPU_OPK_RD:
		case VGPU_OPK_RD2:
		case VGPU_OPK_RDN: vgpu_set(used, VGPU_F_RD, ~0ull); break;
		case VGPU_OPK_RA:
		case VGPU_OPK_SA:
		case VGPU_OPK_STK:
		case VGPU_OPK_GA: vgpu_set(used, VGPU_F_RA, ~0ull); break;
		case VGPU_OPK_RB:
		case VGPU_OPK_GB: vgpu_set(used, VGPU_F_RB, ~0ull); break;
		case VGPU_OPK_RC:
		case VGPU_OPK_RC2:
		case VGPU_OPK_RCN:
		case VGPU_OPK_SC:
		case VGPU_OPK_GC: vgpu_set(used, VGPU_F_RC, ~0ull); break;
		case VGPU_OPK_SE: vgpu_set(used, VGPU_F_RE, ~0ull); break;
		case VGPU_OPK_IMM:
		case VGPU_OPK_FIMM:
		case VGPU_OPK_TARGET: vgpu_set(used, VGPU_F_IMM32, ~0ull); break;
		case VGPU_OPK_BARID: vgpu_set(used, VGPU_F_BARID, ~0ull); break;
		case VGPU_OPK_CNT: vgpu_set(used, VGPU_F_CNT, ~0ull); break;
		case VGPU_OPK_PP:
			vgpu_set(used, VGPU_F_PP, ~0ull);
			vgpu_set(used, VGPU_F_PP_NOT, ~0ull);
			break;
		case VGPU_OPK_PU: vgpu_set(used, VGPU_F_PU, ~0ull); break;
		case VGPU_OPK_SR: vgpu_set(used, VGPU_F_SR, ~0ull); break;
		case VGPU_OPK_MEM:
			vgpu_set(used, VGPU_F_RA, ~0ull);
			vgpu_set(used, VGPU_F_OFF24, ~0ull);
			break;
		default: break;
		}
	}
}

/*
 * The atomics' legal operation and type pairs: ATOMG/ATOMS .ADD takes
 * every ATYPE, .MIN/.MAX the integer ones (U32, S32, U64, S64) and the
 * half ones (F16, BF16, F16X2, BF16X2), .EXCH/.AND/.OR/.XOR the integer
 * ones, and .FTZ goes only with .ADD.F32; ATOMG.CAS/ATOMS.CAS
 * compare and swap 16 (MSIZE U16), 32, 64 or 128 bits.  NULL when @w (a row
 * of @optype) is legal, else what is wrong: the decoder takes such a word
 * for an illegal instruction and the assembler says why.
 */
static inline const char *vgpu_isa_atom_bad(const uint64_t w[2], unsigned optype)
{
	unsigned op, type, size;

	switch (optype) {
	case VGPU_OPT_ATOMG:
	case VGPU_OPT_ATOMS:
		op = (unsigned)vgpu_field_get(w, vgpu_isa_modgroups[VGPU_MG_ATOMOP].pos,
					      vgpu_isa_modgroups[VGPU_MG_ATOMOP].width);
		type = (unsigned)vgpu_field_get(w, vgpu_isa_modgroups[VGPU_MG_ATYPE].pos,
						vgpu_isa_modgroups[VGPU_MG_ATYPE].width);
		if (vgpu_field_get(w, vgpu_isa_modgroups[VGPU_MG_FTZ].pos,
				   vgpu_isa_modgroups[VGPU_MG_FTZ].width) &&
		    (op != VGPU_MOD_ATOMOP_ADD || type != VGPU_MOD_ATYPE_F32))
			return ".FTZ goes only with .ADD.F32";
		if (op == VGPU_MOD_ATOMOP_ADD || type <= VGPU_MOD_ATYPE_S64)
			return 0;
		if (op != VGPU_MOD_ATOMOP_MIN && op != VGPU_MOD_ATOMOP_MAX)
			return "a floating-point atomic is .ADD, .MIN or .MAX";
		if (type == VGPU_MOD_ATYPE_F32 || type == VGPU_MOD_ATYPE_F64)
			return "a floating-point .MIN/.MAX is of F16, BF16, F16X2 or BF16X2";
		return 0;
	case VGPU_OPT_ATOMG_CAS:
	case VGPU_OPT_ATOMS_CAS:
		size = (unsigned)vgpu_field_get(w, vgpu_isa_modgroups[VGPU_MG_MSIZE].pos,
						vgpu_isa_modgroups[VGPU_MG_MSIZE].width);
		if (size != VGPU_MOD_MSIZE_U16 && size != VGPU_MOD_MSIZE_32 &&
		    size != VGPU_MOD_MSIZE_64 && size != VGPU_MOD_MSIZE_128)
			return "compare-and-swap is .U16, .32, .64 or .128";
		return 0;
	default:
		return 0;
	}
}

/*
 * Decode: the table row a word belongs to, or -1 if it is not a valid
 * instruction (unknown optype/stype/fixed modifier, undefined modifier
 * value, or a reserved bit set).  Linear over the table; the core builds
 * its own index from the same function at program load.
 */
static inline int vgpu_isa_decode(const uint64_t w[2])
{
	for (int i = 0; i < (int)VGPU_I__COUNT; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		uint64_t match[2], mask[2], used[2];

		vgpu_isa_match_mask(d, match, mask);
		if ((w[0] & mask[0]) != match[0] || (w[1] & mask[1]) != match[1])
			continue;
		vgpu_isa_used_bits(d, used);
		if ((w[0] & ~used[0]) || (w[1] & ~used[1]))
			return -1;
		for (unsigned m = 0; m < VGPU_ISA_MAX_MODS && d->mods[m]; m++) {
			const struct vgpu_isa_modgroup *g =
				&vgpu_isa_modgroups[d->mods[m]];

			if (!vgpu_isa_modval_name(d->mods[m],
						  (unsigned)vgpu_field_get(w, g->pos, g->width)))
				return -1;
		}
		if (vgpu_isa_atom_bad(w, d->optype))
			return -1;
		return i;
	}
	return -1;
}

/*
 * The f64 instructions keep each double in a register pair (low word
 * first, like 64-bit addresses), IDIV64/IREM64 each 64-bit integer:
 * which of their rd, ra, rb, rc fields name a pair (bits 0..3).
 */
#define VGPU_PAIR_RD 1u
#define VGPU_PAIR_RA 2u
#define VGPU_PAIR_RB 4u
#define VGPU_PAIR_RC 8u
static inline unsigned vgpu_isa_pairs(unsigned optype)
{
	switch (optype) {
	case VGPU_OPT_DADD:
	case VGPU_OPT_DMUL:
	case VGPU_OPT_DDIV:
	case VGPU_OPT_DMNMX:
	case VGPU_OPT_IDIV64:
	case VGPU_OPT_IREM64:
		return VGPU_PAIR_RD | VGPU_PAIR_RA | VGPU_PAIR_RB;
	case VGPU_OPT_DFMA:
		return VGPU_PAIR_RD | VGPU_PAIR_RA | VGPU_PAIR_RB | VGPU_PAIR_RC;
	case VGPU_OPT_DSETP:
		return VGPU_PAIR_RA | VGPU_PAIR_RB;
	case VGPU_OPT_DSQRT:
	case VGPU_OPT_DRCP:
	case VGPU_OPT_L2D:
	case VGPU_OPT_D2L:
		return VGPU_PAIR_RD | VGPU_PAIR_RA;
	case VGPU_OPT_F2D:
	case VGPU_OPT_I2D:
		return VGPU_PAIR_RD;
	case VGPU_OPT_D2F:
	case VGPU_OPT_D2I:
		return VGPU_PAIR_RA;
	default:
		return 0;
	}
}

/* Variable-modifier value of group @g in word @w. */
static inline unsigned vgpu_isa_mod(const uint64_t w[2], unsigned g)
{
	return (unsigned)vgpu_field_get(w, vgpu_isa_modgroups[g].pos,
					vgpu_isa_modgroups[g].width);
}

/* A CVT type that takes a register pair: the 64-bit ones. */
static inline int vgpu_isa_cvt_wide(unsigned type)
{
	return type == VGPU_MOD_CVTD_U64 || type == VGPU_MOD_CVTD_S64 ||
	       type == VGPU_MOD_CVTD_F64;
}

/*
 * vgpu_isa_pairs for the word @w itself: CVT's rd and ra are pairs when
 * its destination or source type is 64-bit (CVTD and CVTS share values),
 * an atomic's data when its type or size is.
 */
static inline unsigned vgpu_isa_pairs_of(const uint64_t w[2], unsigned optype)
{
	unsigned t;

	switch (optype) {
	case VGPU_OPT_ATOMG:
	case VGPU_OPT_ATOMS:
		t = vgpu_isa_mod(w, VGPU_MG_ATYPE);
		return t == VGPU_MOD_ATYPE_U64 || t == VGPU_MOD_ATYPE_S64 ||
			       t == VGPU_MOD_ATYPE_F64 ?
			       VGPU_PAIR_RD | VGPU_PAIR_RB :
			       0u;
	case VGPU_OPT_ATOMG_CAS:
	case VGPU_OPT_ATOMS_CAS:
		return vgpu_isa_mod(w, VGPU_MG_MSIZE) == VGPU_MOD_MSIZE_64 ?
			       VGPU_PAIR_RD | VGPU_PAIR_RB | VGPU_PAIR_RC :
			       0u;
	case VGPU_OPT_CVT:
		break;
	default:
		return vgpu_isa_pairs(optype);
	}
	return (vgpu_isa_cvt_wide(vgpu_isa_mod(w, VGPU_MG_CVTD)) ? VGPU_PAIR_RD : 0u) |
	       (vgpu_isa_cvt_wide(vgpu_isa_mod(w, VGPU_MG_CVTS)) ? VGPU_PAIR_RA : 0u);
}

/*
 * Object file written by vgpu-as and read by vgpu-objdump, vgpu-run and
 * libvgpu.  Little-endian.  Layout:
 *
 *   struct vgpu_obj_header                      (version 2 with data: then
 *                                                struct vgpu_obj_data follows;
 *                                                version 3: then also
 *                                                struct vgpu_obj_relocs)
 *   struct vgpu_obj_kernel  kernels[nkernels]
 *   struct vgpu_obj_param   params[nparams]     (all kernels' params)
 *   code                    code_size bytes at code_offset, 16-aligned
 *   data                    data_size bytes at data_offset (version 2)
 *   struct vgpu_obj_reloc   relocs[nrelocs]     at relocs_offset (version 3)
 *
 * An object without data is written as version 1, one with data but no
 * relocation as version 2; readers take all three.
 */
#define VGPU_OBJ_MAGIC 0x55504756u /* "VGPU" */
#define VGPU_OBJ_VERSION 1u
#define VGPU_OBJ_VERSION_DATA 2u
#define VGPU_OBJ_VERSION_RELOCS 3u
#define VGPU_OBJ_NAME_MAX 32
/* At most this much module data (.global) per program. */
#define VGPU_MAX_DATA_BYTES (16u << 20)

struct vgpu_obj_header {
	uint32_t magic;
	uint32_t version;
	uint32_t nkernels;
	uint32_t nparams;
	uint32_t kernels_offset;
	uint32_t params_offset;
	uint32_t code_offset;
	uint32_t code_size;
};

/* Version 2: the program's initialised module data, after the header. */
struct vgpu_obj_data {
	uint32_t data_offset;
	uint32_t data_size;
};

/* Version 3: relocations of the module data, after struct vgpu_obj_data. */
struct vgpu_obj_relocs {
	uint32_t relocs_offset;
	uint32_t nrelocs; /* at least 1 */
};

/*
 * A relocation: where module data holds an address of module data (a
 * table of pointers to variables or strings).  The loader writes, at byte
 * @offset of the program's data, the device address of its byte @target
 * (the data's address + @target, modulo 2^64): all 8 bytes, little-endian
 * (VGPU_RELOC_ADDR64), or byte N of them (VGPU_RELOC_ADDR_BYTE0 + N, PTX's
 * mask() initialisers of a packed structure).  VGPU_RELOC_HEAP64: the
 * device heap's address (device malloc, docs/ptx.md), all 8 bytes, written
 * by the launch of a kernel of the program (@target is 0); the heap is
 * allocated then.
 */
enum vgpu_reloc_kind {
	VGPU_RELOC_ADDR64 = 1,
	VGPU_RELOC_HEAP64 = 2,
	VGPU_RELOC_KDESC = 3, /* struct vgpu_kernel_desc of kernel @target */
	VGPU_RELOC_ADDR_BYTE0 = 8, /* .. VGPU_RELOC_ADDR_BYTE0 + 7 */
};

struct vgpu_obj_reloc {
	uint32_t offset;
	uint32_t kind;	 /* enum vgpu_reloc_kind */
	uint64_t target; /* a byte offset in the module data */
};

enum vgpu_param_type {
	VGPU_PARAM_U32 = 1,
	VGPU_PARAM_S32 = 2,
	VGPU_PARAM_F32 = 3,
	VGPU_PARAM_U64 = 4,
	VGPU_PARAM_S64 = 5,
	VGPU_PARAM_PTR = 6, /* a global-memory address, 64 bits */
	/*
	 * The address of the launch's local memory, 64 bits: filled in by
	 * the launcher (libvgpu), never by the caller.  The launch gives each
	 * thread local_bytes at lmem + (global linear thread index) *
	 * local_bytes, the linear index counting CTAs x-fastest, then the
	 * threads of a CTA (SR_TID).  A kernel with local_bytes has exactly
	 * one such parameter, and one only with local_bytes.
	 */
	VGPU_PARAM_LOCAL = 7,
	/*
	 * The address of the program's module data (.global in assembly),
	 * 64 bits, filled in by the launcher: one buffer per program, shared
	 * by its launches, initialised from the object when the program is
	 * created.
	 */
	VGPU_PARAM_DATA = 8,
	/*
	 * The address of the launch's printf buffer, 64 bits, filled in by
	 * the launcher: struct vgpu_printf_header, then records of { u32
	 * offset of the format string in the module data, u32 argument
	 * bytes, the arguments } padded to 8 bytes.  A kernel adds a record
	 * with an atomic add of its size to @used, and writes it only if it
	 * ends within @capacity (libvgpu/printf.c formats them).
	 */
	VGPU_PARAM_PRINTF = 9,
	/*
	 * The address of the launch's parameter buffer itself, 64 bits,
	 * filled in by the launcher: for taking the address of a parameter
	 * (a tensor map passed by value, PTX's mov of a parameter's name).
	 */
	VGPU_PARAM_PARAMS = 10,
	/*
	 * 1- and 2-byte parameters (PTX's .u8/.u16 and the bytes of an
	 * array parameter with less than 4-byte alignment): naturally
	 * aligned like the others.
	 */
	VGPU_PARAM_U8 = 11,
	VGPU_PARAM_U16 = 12,
	/*
	 * PTX's environment registers %envreg0..31, 4 bytes each (128 in
	 * all), filled in by the launcher: the values the launch sets
	 * (vgpu_args_set_envreg()), zero for the others, as a GPU reads
	 * the ones its driver does not set.  CUDA's driver passes a
	 * cooperative launch's grid workspace in %envreg1 (high word) and
	 * %envreg2 (low word).
	 */
	VGPU_PARAM_ENVREGS = 13,
};

#define VGPU_ENVREGS 32u

struct vgpu_printf_header {
	uint32_t used;	   /* bytes of records wanted (may pass @capacity) */
	uint32_t capacity; /* bytes of record space after the header */
	uint32_t pad[2];
};

/* At most this much local memory per thread (a multiple of 16). */
#define VGPU_MAX_LOCAL_BYTES 65536u

struct vgpu_obj_kernel {
	char name[VGPU_OBJ_NAME_MAX]; /* NUL-terminated */
	uint32_t entry;		      /* byte offset in code, 16-aligned */
	uint32_t smem_static;	      /* bytes of .shared allocations */
	uint32_t param_size;	      /* bytes of the parameter buffer */
	uint32_t first_param;	      /* index into params[] */
	uint32_t nparams;
	uint32_t local_bytes;	      /* local memory per thread (a multiple
					 of 16; 0: none; was padding) */
};

struct vgpu_obj_param {
	char name[VGPU_OBJ_NAME_MAX];
	uint32_t offset; /* byte offset in the parameter buffer */
	uint32_t size;	 /* 4 or 8 */
	uint32_t type;	 /* enum vgpu_param_type */
	uint32_t pad;
};

_Static_assert(sizeof(struct vgpu_obj_header) == 32, "obj header layout");
_Static_assert(sizeof(struct vgpu_obj_data) == 8, "obj data layout");
_Static_assert(sizeof(struct vgpu_obj_relocs) == 8, "obj relocs layout");
_Static_assert(sizeof(struct vgpu_obj_reloc) == 16, "obj reloc layout");
_Static_assert(sizeof(struct vgpu_printf_header) == 16, "printf header layout");
_Static_assert(sizeof(struct vgpu_obj_kernel) == 56, "obj kernel layout");
_Static_assert(sizeof(struct vgpu_obj_param) == 48, "obj param layout");

#endif /* VGPU_ISA_H */
