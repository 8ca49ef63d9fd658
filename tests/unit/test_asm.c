/* SPDX-License-Identifier: MIT */
/*
 * Assembler and disassembler: round trips over every table row and random
 * words, and the seed's examples with their exact encodings, annotations
 * and operands.  The mbarrier, async-copy and cluster rows and every
 * diagnostic: test_asm_async.c; labels, directives, objects and the
 * vgpu-as/vgpu-objdump tools: test_asm_obj.c.
 */

#include "asm_test.h"

/* ---- (a) round trips ---- */

/* Last defined value of group @g: usually not the default. */
static unsigned last_value(unsigned g)
{
	unsigned v = 0;

	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
		if (vgpu_isa_modvals[i].group == g)
			v = vgpu_isa_modvals[i].value;
	return v;
}

/* Is row @d's fixed modifier @g = @v? */
static bool fixed_as(const struct vgpu_isa_desc *d, unsigned g, unsigned v)
{
	return d->fix_group == g && d->fix_value == v;
}

/*
 * What the 32-bit immediate (operand @i) of row @d means, for the rows
 * whose immediates have a range beyond 32 bits (the brief of the mbarrier,
 * async-copy and cluster rows; see docs/assembly.md).
 */
enum imm_use {
	USE_ANY,
	USE_ARRIVALS,	/* 1 .. 2^20-1 */
	USE_TX,		/* 0 .. 2^20-1 */
	USE_PARITY,	/* 0, 1 */
	USE_CP_SIZE,	/* 4, 8, 16; .CG: 16 */
	USE_BULK_SIZE,	/* 16 .. 2^20-16, multiple of 16 */
	USE_WAIT_GROUP, /* 0 .. 63 */
	USE_RANK,	/* 0 .. 15 */
};

static enum imm_use imm_use(const struct vgpu_isa_desc *d, int i)
{
	switch (d->optype) {
	case VGPU_OPT_MBAR_INIT: return USE_ARRIVALS;
	case VGPU_OPT_MBAR_ARRIVE:
	case VGPU_OPT_MBAR_ARRIVE_DROP:
		return fixed_as(d, VGPU_MG_ARVKIND, VGPU_MOD_ARVKIND_EXPECT_TX)
			       ? USE_TX
			       : USE_ARRIVALS;
	case VGPU_OPT_MBAR_EXPECT_TX:
	case VGPU_OPT_MBAR_COMPLETE_TX: return USE_TX;
	case VGPU_OPT_MBAR_TEST_WAIT:
	case VGPU_OPT_MBAR_TRY_WAIT: /* parity right after the address */
		return fixed_as(d, VGPU_MG_WAITKIND, VGPU_MOD_WAITKIND_PARITY) && i == 2
			       ? USE_PARITY
			       : USE_ANY;
	case VGPU_OPT_CP_ASYNC: return USE_CP_SIZE;
	case VGPU_OPT_CP_BULK:
	case VGPU_OPT_CP_BULK_STORE: return USE_BULK_SIZE;
	case VGPU_OPT_CP_BULK_WAIT: return USE_WAIT_GROUP;
	case VGPU_OPT_MAPA: return USE_RANK;
	default: return USE_ANY;
	}
}

/* A legal immediate for operand @i of row @d: the top of its range, or
 * (@low) the bottom; @w already holds the modifiers. */
static uint32_t legal_imm(const struct vgpu_isa_desc *d, int i,
			  const uint64_t w[2], bool low)
{
	switch (imm_use(d, i)) {
	case USE_ARRIVALS: return low ? 1 : 0xfffff;
	case USE_TX: return low ? 0 : 0xfffff;
	case USE_PARITY: return !low;
	case USE_CP_SIZE:
		return vgpu_isa_mod(w, VGPU_MG_CPCACHE) == VGPU_MOD_CPCACHE_CG || !low
			       ? 16
			       : 4;
	case USE_BULK_SIZE: return low ? 16 : 0xffff0;
	case USE_WAIT_GROUP: return low ? 0 : 63;
	case USE_RANK: return low ? 0 : 15;
	default: return 0x87654321;
	}
}

/* Make immediate @v legal for operand @i of row @d, keeping it random. */
static uint32_t fold_imm(const struct vgpu_isa_desc *d, int i,
			 const uint64_t w[2], uint32_t v)
{
	static const uint32_t cp[3] = { 4, 8, 16 };

	switch (imm_use(d, i)) {
	case USE_ARRIVALS: return v % 0xfffff + 1;
	case USE_TX: return v & 0xfffff;
	case USE_PARITY: return v & 1;
	case USE_CP_SIZE:
		return vgpu_isa_mod(w, VGPU_MG_CPCACHE) == VGPU_MOD_CPCACHE_CG
			       ? 16
			       : cp[v % 3];
	case USE_BULK_SIZE: return (v % 0xffff + 1) * 16;
	case USE_WAIT_GROUP: return v % 64;
	case USE_RANK: return v % 16;
	default: return v;
	}
}

/* Registers of a tensor-coordinate range: the row's TDIM (IMDIM) rank. */
static unsigned coord_regs(const uint64_t w[2])
{
	return vgpu_isa_mod(w, VGPU_MG_TDIM) - VGPU_MOD_TDIM_1D + 1;
}

/* Registers of an im2col-offset range: the rank less 2. */
static unsigned offset_regs(const uint64_t w[2])
{
	return coord_regs(w) - 2;
}

/* A representative word of row @id: non-default everything, or defaults. */
static void sample_word(int id, bool defaults, uint64_t w[2])
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[id];
	bool arv = d->fix_group == VGPU_MG_BARMODE &&
		   d->fix_value == VGPU_MOD_BARMODE_ARV;
	uint64_t mask[2];

	vgpu_isa_match_mask(d, w, mask);
	for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->mods[i]];
		unsigned v = defaults && g->def >= 0 ? (unsigned)g->def
						     : last_value(d->mods[i]);

		vgpu_field_set(w, g->pos, g->width, v);
	}
	isa_make_atom_legal(w, d->optype);
	if (!defaults) {
		vgpu_set(w, VGPU_F_PG, 2);
		vgpu_set(w, VGPU_F_PG_NOT, 1);
		vgpu_set(w, VGPU_F_SCHED, 3);
		vgpu_set(w, VGPU_F_REQ, 5);
		vgpu_set(w, VGPU_F_WSB, 6);
	} else {
		vgpu_set(w, VGPU_F_PG, VGPU_PT);
	}
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		bool dflt = defaults && (d->ops[i] & VGPU_OPK_OPTIONAL);

		switch (VGPU_OPK_KIND(d->ops[i])) {
		case VGPU_OPK_RD: vgpu_set(w, VGPU_F_RD, 4); break;
		case VGPU_OPK_RA: vgpu_set(w, VGPU_F_RA, 9); break;
		case VGPU_OPK_RB: vgpu_set(w, VGPU_F_RB, 12); break;
		case VGPU_OPK_RC: vgpu_set(w, VGPU_F_RC, VGPU_RZ); break;
		case VGPU_OPK_IMM:
			vgpu_set(w, VGPU_F_IMM32, legal_imm(d, i, w, defaults));
			break;
		/* wide registers at the top of their range, or RZ ("_") */
		case VGPU_OPK_RD2: vgpu_set(w, VGPU_F_RD, defaults ? VGPU_RZ : 253); break;
		case VGPU_OPK_RC2: vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 253); break;
		case VGPU_OPK_RCN:
			vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 255 - coord_regs(w));
			break;
		case VGPU_OPK_RDN:
			vgpu_set(w, VGPU_F_RD, defaults ? VGPU_RZ : 255 - offset_regs(w));
			break;
		case VGPU_OPK_SA: vgpu_set(w, VGPU_F_RA, defaults ? VGPU_RZ : 9); break;
		case VGPU_OPK_SC: vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 11); break;
		case VGPU_OPK_SE: vgpu_set(w, VGPU_F_RE, defaults ? VGPU_RZ : 254); break;
		case VGPU_OPK_GA: vgpu_set(w, VGPU_F_RA, defaults ? VGPU_RZ : 253); break;
		case VGPU_OPK_GB: vgpu_set(w, VGPU_F_RB, defaults ? VGPU_RZ : 14); break;
		case VGPU_OPK_GC: vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 252); break;
		case VGPU_OPK_FIMM: vgpu_set(w, VGPU_F_IMM32, 0x3fc00000); break;
		case VGPU_OPK_BARID: vgpu_set(w, VGPU_F_BARID, dflt ? 0 : 15); break;
		case VGPU_OPK_CNT: /* BAR.ARV cannot take count 0 */
			vgpu_set(w, VGPU_F_CNT, dflt ? arv * 32 : 0xfe0);
			break;
		case VGPU_OPK_PP:
			vgpu_set(w, VGPU_F_PP, dflt ? VGPU_PT : 3);
			vgpu_set(w, VGPU_F_PP_NOT, !dflt);
			break;
		case VGPU_OPK_PU: vgpu_set(w, VGPU_F_PU, dflt ? VGPU_PT : 6); break;
		case VGPU_OPK_SR: vgpu_set(w, VGPU_F_SR, VGPU_SR_NCTAID_Z); break;
		case VGPU_OPK_MEM:
			vgpu_set(w, VGPU_F_RA, defaults ? VGPU_RZ : 6);
			vgpu_set(w, VGPU_F_OFF24, defaults ? 0x7fffff : 0xffffe0);
			break;
		case VGPU_OPK_TARGET: vgpu_set(w, VGPU_F_IMM32, 0x40); break;
		}
	}
}

TEST(round_trip_every_row)
{
	char text[256];

	for (int id = 0; id < (int)VGPU_I__COUNT; id++) {
		for (int dflt = 0; dflt < 2; dflt++) {
			uint64_t w[2];

			sample_word(id, dflt, w);
			ASSERT_EQ(id, vgpu_isa_decode(w));
			EXPECT_TRUE(round_trip(_metadata, w, dflt ? 0x30 : 0, text, sizeof(text)));
			EXPECT_NE(0, strncmp(text, ".word", 5));
			EXPECT_TRUE(strncmp(text, vgpu_isa_table[id].mnemonic,
					    strlen(vgpu_isa_table[id].mnemonic)) == 0 ||
				    text[0] == '@');
		}
	}
}

TEST(round_trip_shows_non_defaults)
{
	char text[256];
	uint64_t w[2];

	sample_word(VGPU_I_BAR_RED_I, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P2 BAR.RED.POPC 0xf, 0xfe0, !P3 $sched=3 $req=5 $wsb=6 ;", text);
	sample_word(VGPU_I_BAR_RED_I, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("BAR.RED.POPC 0xf, !P3 ;", text); /* cnt omitted */
	sample_word(VGPU_I_STG, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P2 STG.128 [R6-0x20], R12 $sched=3 $req=5 $wsb=6 ;", text);
	sample_word(VGPU_I_LDS, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("LDS R4, [0x7fffff] ;", text);
	sample_word(VGPU_I_ISETP_I, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("ISETP.GE.S32 P6, R9, 0x87654321 ;", text);
	sample_word(VGPU_I_R2B_WARP, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("R2B.WARP R9 ;", text);
	sample_word(VGPU_I_BRA, true, w);
	EXPECT_EQ(11, vgpu_disasm_insn(w, 0x100, text, sizeof(text)));
	EXPECT_STREQ("BRA 0x140 ;", text);
	/* the new kinds: pairs and ranges at the top, the sink, [RZ] */
	sample_word(VGPU_I_MBAR_ARRIVE_TX_I, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(text, "@!P2 MBAR.ARRIVE.EXPECT_TX.RELAXED.CLUSTER R253, [R9], 0xfffff "
			   "$sched=3 $req=5 $wsb=6 ;");
	sample_word(VGPU_I_MBAR_ARRIVE_TX_I, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.ARRIVE.EXPECT_TX _, [RZ], 0x0 ;", text);
	sample_word(VGPU_I_CP_TENSOR, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(text, "@!P2 CP.ASYNC.BULK.TENSOR.5D [R9], [R14], R250, [R254] "
			   "$sched=3 $req=5 $wsb=6 ;");
	sample_word(VGPU_I_CP_TENSOR_IM2COL, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(text, "@!P2 CP.ASYNC.BULK.TENSOR.IM2COL.5D [R9], [R14], R250, [R254], R252 "
			   "$sched=3 $req=5 $wsb=6 ;");
	sample_word(VGPU_I_MBAR_TRY_WAIT_PAR_RI, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.TRY_WAIT.PARITY P6, [RZ], 0x0 ;", text);
	sample_word(VGPU_I_CP_ASYNC, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P2 CP.ASYNC.CG [R9], [R252], 0x10 $sched=3 $req=5 $wsb=6 ;", text);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned random_value(unsigned g)
{
	unsigned vals[16], n = 0;

	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
		if (vgpu_isa_modvals[i].group == g)
			vals[n++] = vgpu_isa_modvals[i].value;
	return vals[rnd() % n];
}

/* Make a random word of row @id legal for the assembler too. */
static void fix_semantics(int id, uint64_t w[2])
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[id];

	isa_make_atom_legal(w, d->optype);

	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		switch (VGPU_OPK_KIND(d->ops[i])) {
		case VGPU_OPK_CNT:
			vgpu_set(w, VGPU_F_CNT, vgpu_get(w, VGPU_F_CNT) & ~31ull);
			if (!vgpu_get(w, VGPU_F_CNT) && d->fix_group == VGPU_MG_BARMODE &&
			    d->fix_value == VGPU_MOD_BARMODE_ARV)
				vgpu_set(w, VGPU_F_CNT, 32);
			break;
		case VGPU_OPK_SR:
			vgpu_set(w, VGPU_F_SR,
				 vgpu_isa_sregs[rnd() % VGPU_ISA_NUM_SREGS].index);
			break;
		case VGPU_OPK_RD: /* keep wide ranges below R254, or RZ */
			if (vgpu_get(w, VGPU_F_RD) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RD, vgpu_get(w, VGPU_F_RD) % 250);
			break;
		case VGPU_OPK_RB:
			if (vgpu_get(w, VGPU_F_RB) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RB, vgpu_get(w, VGPU_F_RB) % 250);
			break;
		case VGPU_OPK_RA: /* f64 pairs too */
			if (vgpu_get(w, VGPU_F_RA) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RA, vgpu_get(w, VGPU_F_RA) % 250);
			break;
		case VGPU_OPK_RC:
			if (vgpu_get(w, VGPU_F_RC) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RC, vgpu_get(w, VGPU_F_RC) % 250);
			break;
		case VGPU_OPK_RD2: /* 64-bit pairs end at R254, or are RZ */
			if (vgpu_get(w, VGPU_F_RD) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RD, vgpu_get(w, VGPU_F_RD) % 254);
			break;
		case VGPU_OPK_RC2:
		case VGPU_OPK_GC:
			if (vgpu_get(w, VGPU_F_RC) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RC, vgpu_get(w, VGPU_F_RC) % 254);
			break;
		case VGPU_OPK_GA:
			if (vgpu_get(w, VGPU_F_RA) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RA, vgpu_get(w, VGPU_F_RA) % 254);
			break;
		case VGPU_OPK_GB:
			if (vgpu_get(w, VGPU_F_RB) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RB, vgpu_get(w, VGPU_F_RB) % 254);
			break;
		case VGPU_OPK_STK: /* the call block R..R+3: never RZ, ends at R254 */
			vgpu_set(w, VGPU_F_RA, vgpu_get(w, VGPU_F_RA) % 252);
			break;
		case VGPU_OPK_RCN: /* rank registers ending at R254, or RZ */
			if (vgpu_get(w, VGPU_F_RC) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RC,
					 vgpu_get(w, VGPU_F_RC) % (256 - coord_regs(w)));
			break;
		case VGPU_OPK_RDN: /* rank - 2 registers ending at R254, or RZ */
			if (vgpu_get(w, VGPU_F_RD) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RD,
					 vgpu_get(w, VGPU_F_RD) % (256 - offset_regs(w)));
			break;
		case VGPU_OPK_IMM:
			vgpu_set(w, VGPU_F_IMM32,
				 fold_imm(d, i, w, (uint32_t)vgpu_get(w, VGPU_F_IMM32)));
			break;
		}
	}
}

TEST(round_trip_random_valid_words)
{
	char text[256];
	int ok = 0;

	rng_state = 0x1234567887654321ull;
	for (int n = 0; n < 20000; n++) {
		int id = (int)(rnd() % VGPU_I__COUNT);
		const struct vgpu_isa_desc *d = &vgpu_isa_table[id];
		uint64_t w[2] = { rnd(), rnd() }, match[2], mask[2], used[2];

		vgpu_isa_match_mask(d, match, mask);
		vgpu_isa_used_bits(d, used);
		w[0] = (w[0] & used[0] & ~mask[0]) | match[0];
		w[1] = (w[1] & used[1] & ~mask[1]) | match[1];
		for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++)
			vgpu_field_set(w, vgpu_isa_modgroups[d->mods[i]].pos,
				       vgpu_isa_modgroups[d->mods[i]].width,
				       random_value(d->mods[i]));
		fix_semantics(id, w);
		if (vgpu_isa_decode(w) != id)
			continue;
		if (!round_trip(_metadata, w, 0, text, sizeof(text)))
			break;
		EXPECT_NE(0, strncmp(text, ".word", 5))
			TH_LOG("valid word printed as %s", text);
		if (!strncmp(text, ".word", 5))
			break;
		ok++;
	}
	EXPECT_EQ(20000, ok);
}

/* Any 128 bits survive disassembly and assembly, illegal ones as .word. */
TEST(round_trip_random_raw_words)
{
	char text[256];
	int illegal = 0, n;

	rng_state = 42;
	for (n = 0; n < 5000; n++) {
		uint64_t w[2] = { rnd(), rnd() };

		if (n & 1) /* keep a known optype half of the time */
			w[0] = (w[0] & ~0xffull) | vgpu_isa_table[rnd() % VGPU_I__COUNT].optype;
		if (!round_trip(_metadata, w, (uint32_t)(n % 4) * 16, text, sizeof(text)))
			break;
		illegal += vgpu_isa_decode(w) < 0;
	}
	EXPECT_EQ(5000, n);
	EXPECT_GT(illegal, 4000);
}

TEST(disasm_word_forms)
{
	uint64_t w[2] = { 0, 0 };
	char text[256];
	int n;

	n = vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(".word 0x0000000000000000, 0x0000000000000000 ; // illegal", text);
	EXPECT_EQ((int)strlen(text), n);
	/* truncation keeps snprintf semantics */
	EXPECT_EQ(n, vgpu_disasm_insn(w, 0, text, 8));
	EXPECT_STREQ(".word 0", text);
	/* decodable, but the assembler would refuse it: still a .word */
	ASSERT_EQ(0, asm_one("BAR.ARV 0x1, 0x20", w));
	vgpu_set(w, VGPU_F_CNT, 0);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_CONTAINS(text, ".word 0x");
	EXPECT_CONTAINS(text, " ; // BAR.ARV needs a non-zero barrier count");
	vgpu_set(w, VGPU_F_CNT, 0x11);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_CONTAINS(text, " ; // BAR.ARV: barrier count 17 is not a multiple of 32");
	ASSERT_EQ(0, asm_one("S2R R1, SR_SMID", w));
	vgpu_set(w, VGPU_F_SR, 200);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_CONTAINS(text, "unknown special register index 200");
	/* guards */
	ASSERT_EQ(0, asm_one("@!PT NOP", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!PT NOP ;", text);
	ASSERT_EQ(0, asm_one("@pt nop", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("NOP ;", text);
}

/* Decodable words the assembler would refuse print as .word with why. */
TEST(disasm_async_word_forms)
{
	static const struct {
		const char *line;	/* a valid statement */
		unsigned pos, width;	/* a field to break */
		uint64_t val;
		const char *why;	/* the comment of the .word */
	} bad[] = {
		{ "MBAR.INIT [R2], 0x20", VGPU_F_IMM32, 0,
		  "// MBAR.INIT: arrival count 0 out of range (1..1048575)" },
		{ "MBAR.ARRIVE R4, [R2], 1", VGPU_F_IMM32, 0x100000,
		  "// MBAR.ARRIVE: arrival count 1048576 out of range (1..1048575)" },
		{ "MBAR.ARRIVE.EXPECT_TX R4, [R2], 1", VGPU_F_IMM32, 0x100000,
		  "// MBAR.ARRIVE.EXPECT_TX: tx-count 1048576 out of range (0..1048575)" },
		{ "MBAR.COMPLETE_TX [R2], 1", VGPU_F_IMM32, 0xffffffff,
		  "// MBAR.COMPLETE_TX: tx-count 4294967295 out of range (0..1048575)" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], 1", VGPU_F_IMM32, 3,
		  "// MBAR.TRY_WAIT.PARITY: phase parity 3 is not 0 or 1" },
		{ "CP.ASYNC [R6], [R8], 4", VGPU_F_IMM32, 2,
		  "// CP.ASYNC: copy size 2 is not 4, 8 or 16" },
		{ "CP.ASYNC.CG [R6], [R8], 16", VGPU_F_IMM32, 4,
		  "// CP.ASYNC.CG copies 16 bytes only, not 4" },
		{ "CP.ASYNC.BULK.GLOBAL [R8], [R6], 16", VGPU_F_IMM32, 8,
		  "// CP.ASYNC.BULK.GLOBAL: bulk copy size 8 is not a multiple of 16 in 16..1048560" },
		{ "CP.ASYNC.BULK.WAIT_GROUP.READ 1", VGPU_F_IMM32, 64,
		  "// CP.ASYNC.BULK.WAIT_GROUP.READ: pending bulk group count 64 out of range (0..63)" },
		{ "MAPA R1, R2, 1", VGPU_F_IMM32, 31,
		  "// MAPA: CTA rank 31 out of range (0..15)" },
		{ "MBAR.ARRIVE R4, [R2]", VGPU_F_RD, 254,
		  "// MBAR.ARRIVE: 64-bit mbarrier state needs R254..R255, past R254" },
		{ "CP.ASYNC.BULK [R6], [R8], R9, [R2]", VGPU_F_RC, 254,
		  "// CP.ASYNC.BULK: 64-bit global address needs R254..R255, past R254" },
		{ "CP.ASYNC.BULK.TENSOR.4D [R6], [R8], R10, [R2]", VGPU_F_RC, 252,
		  "// CP.ASYNC.BULK.TENSOR: 4D tensor coordinates need R252..R255, past R254" },
	};
	char text[256];
	uint64_t w[2];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, asm_one(bad[i].line, w));
		vgpu_field_set(w, bad[i].pos, bad[i].width, bad[i].val);
		ASSERT_GE(vgpu_isa_decode(w), 0);
		vgpu_disasm_insn(w, 0, text, sizeof(text));
		EXPECT_EQ(0, strncmp(text, ".word 0x", 8));
		EXPECT_CONTAINS(text, bad[i].why);
		EXPECT_TRUE(round_trip(_metadata, w, 0, text, sizeof(text)));
	}
	/* the hint of try_wait is any 32-bit value; the sink prints as "_",
	 * an RZ token source as RZ */
	ASSERT_EQ(0, asm_one("MBAR.TRY_WAIT.PARITY P0, [R2], R3, 0xffffffff", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.TRY_WAIT.PARITY P0, [R2], R3, 0xffffffff ;", text);
	ASSERT_EQ(0,
		  asm_one("@!P1 MBAR.ARRIVE_DROP.EXPECT_TX.RELAXED.CLUSTER RZ, [RZ], 0x0 $sched=1", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P1 MBAR.ARRIVE_DROP.EXPECT_TX.RELAXED.CLUSTER _, [RZ], 0x0 $sched=1 ;",
		     text);
	ASSERT_EQ(0, asm_one("MBAR.PENDING_COUNT RZ, RZ", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.PENDING_COUNT RZ, RZ ;", text);
}

/* ---- (b) the seed's examples ---- */

/* Every line of seed 002's __Examples blocks, verbatim. */
static const char *const seed_bcu[] = {
	"BAR.SYNC 0x0 ; //",
	"BAR.ARV 0x1, 0x80 ;",
	"BAR.ARV 0x1, R5 ;",
	"BAR.ARV R4, 0x80 ;",
	"BAR.ARV R5, R5 ;    // => BAR.ARV R5, R5;",
	"BAR.SYNC R7, R7 ;   // => BAR.SYNC R7, R7;",
	"BAR.SYNC R4 ;",
	"",
	"BAR.RED.OR 0x0, P0 ;",
	"BAR.RED.AND 0x1, 0x80, P0 ;",
	"BAR.RED.AND 0x1, R5, P0 ;",
	"BAR.RED.AND R4, P0 ;",
	"BAR.RED.AND R4, 0x80, P0 ;",
	"BAR.RED.AND R5, R5, P0 ;",
	"",
	"B2R.RESULT RZ, P0 ;",
	"B2R.RESULT R4 ;",
	"B2R.BAR R4, 0x2;",
	"B2R.WARP R4;",
	"",
	"R2B.WARP R4;",
	"R2B.BAR 0x4, R4;",
	NULL,
};

static const char *const seed_bar[] = {
	"BAR.SYNC 0x0, 0x40 ;",
	"BAR.SYNC  R0, R1   ;",
	"BAR.ARV  0x0, R1   ;",
	NULL,
};

static const char *const seed_bar_red[] = {
	"BAR.RED.POPC 0x0, 0x40,  PT; // 在64个线程之间进行popcount归约",
	"BAR.RED.OR          R0, !P1; // 使用barId=R0 & 0xF的barrier，在cnt=(R0 & 0xFFF)>>4个线程之间进行逻辑或归约",
	NULL,
};

static const char *const seed_b2r[] = {
	"B2R R0, 0x0;         // 默认为BAR模式，R0=BARState[0]",
	"B2R.WARP R0, 0x0;    // WARP模式将当前WARP的临时WarpBARState存入R0，忽略输入的BarId",
	"                     // WarpBARState是BAR_RED完成同步后自动下发，其他情形为未定义行为。",
	"",
	"B2R.BAR R0, 0x0;     // 获取barrier-0的状态",
	"",
	"BAR.RED.POPC 0x1, 0x40, PT; // 在64个线程之间进行popcount归约",
	"...",
	"B2R.WARP R1, 0x4;    // 获取上次BAR.RED所用barrier-1的状态，此时第2个立即数是不生效的",
	NULL,
};

static const char *const seed_b2r_result[] = {
	"BAR.RED.POPC 0x0, 0x40, PT; // 在64个线程之间进行popcount归约",
	"BAR.RESULT R0, PT;     // 获取归约结果，写入R0，并舍弃谓词输出",
	NULL,
};

static const char *const seed_r2b[] = {
	"R2B 0x0, R0;    // 默认为BAR模式，BARState[0]=R0",
	"R2B.WARP R0;    // WARP模式将R0存入当前WARP的临时WarpBARState中，忽略输入的BarId",
	"",
	"R2B.BAR 0x0, R0;     // 用R0设置barrier-0的状态",
	"BAR.RED.POPC 0x1, 0x40, PT; // 在64个线程之间进行popcount归约",
	"...",
	"R2B.WARP 0x4, R1;    // 用R1设置上次BAR.RED的状态信息的本地副本，此时第1个立即数是不生效的",
	NULL,
};

static const char *const *const seed_blocks[] = {
	seed_bcu, seed_bar, seed_bar_red, seed_b2r, seed_b2r_result, seed_r2b,
};

#define SEED_BAD_LINE "BAR.RED.AND R5, R5, P0 ;"
#define SEED_BAD_MSG                                                          \
	"t.s:1:1: error: BAR.RED.AND does not take (GPR, GPR, predicate); "   \
	"accepted forms: (UImm4, [UImm12,] predicate), (GPR, predicate), "    \
	"(GPR, UImm12, predicate), (UImm4, GPR, predicate)\n"

/* An instruction line: not blank, not only a comment, not the "..." elision. */
static bool is_insn_line(const char *s)
{
	s += strspn(s, " ");
	return *s && strncmp(s, "//", 2) && strcmp(s, "...");
}

TEST(seed_examples_assemble)
{
	int lines = 0;

	for (size_t b = 0; b < sizeof(seed_blocks) / sizeof(seed_blocks[0]); b++) {
		char src[4096] = "";
		struct vgpu_object o;
		unsigned int insns = 0;

		for (const char *const *l = seed_blocks[b]; *l; l++) {
			uint64_t w[2];

			if (!strcmp(*l, SEED_BAD_LINE) || !strcmp(*l, "..."))
				continue;
			strcat(src, *l);
			strcat(src, "\n");
			if (!is_insn_line(*l))
				continue;
			insns++;
			lines++;
			EXPECT_EQ(0, asm_one(*l, w))
				TH_LOG("seed line \"%s\": %s", *l, errbuf);
		}
		/* each block as one source, too */
		ASSERT_EQ(0, assemble(src, &o));
		EXPECT_EQ(insns * 16, o.code_size);
		vgpu_object_fini(&o);
	}
	EXPECT_EQ(35, lines); /* 36 lines, less BAR.RED.AND R5, R5, P0 */
}

TEST(seed_bar_red_gpr_gpr_is_rejected)
{
	expect_errors(_metadata, SEED_BAD_LINE, SEED_BAD_MSG);
	expect_errors(_metadata, "BAR.RED.AND R5, R5, P0 ;\nBAR.RED.AND R5, R5, P0 ;",
		      "t.s:1:1: error: BAR.RED.AND does not take (GPR, GPR, predicate); "
		      "accepted forms: (UImm4, [UImm12,] predicate), (GPR, predicate), "
		      "(GPR, UImm12, predicate), (UImm4, GPR, predicate)\n"
		      "t.s:2:1: error: BAR.RED.AND does not take (GPR, GPR, predicate); "
		      "accepted forms: (UImm4, [UImm12,] predicate), (GPR, predicate), "
		      "(GPR, UImm12, predicate), (UImm4, GPR, predicate)\n");
}

TEST(seed_elision_is_not_an_instruction)
{
	struct vgpu_object o;

	EXPECT_EQ(-EINVAL, assemble("NOP\n...\n", &o));
	EXPECT_STREQ("t.s:2:1: error: expected a directive name after '.'\n", errbuf);
}

/* Expected fields of one seed example; -1: not checked. */
struct enc {
	const char *line;
	int optype, stype, mode; /* mode: bits 80.. of the row's mode group */
	int rd, ra, rb, barid, cnt, pp, pp_not, pu;
};

static const struct enc seed_encodings[] = {
	{ "BAR.SYNC 0x0 ; //", 0x40, VGPU_ST_I, 0, -1, -1, -1, 0, 0, -1, -1, -1 },
	{ "BAR.ARV 0x1, 0x80 ;", 0x40, VGPU_ST_I, 1, -1, -1, -1, 1, 0x80, -1, -1, -1 },
	{ "BAR.ARV 0x1, R5 ;", 0x40, VGPU_ST_RIR, 1, -1, -1, 5, 1, -1, -1, -1, -1 },
	{ "BAR.ARV R4, 0x80 ;", 0x40, VGPU_ST_RRI, 1, -1, -1, 4, -1, 0x80, -1, -1, -1 },
	{ "BAR.ARV R5, R5 ;", 0x40, VGPU_ST_R, 1, -1, 5, 5, -1, -1, -1, -1, -1 },
	{ "BAR.SYNC R7, R7 ;", 0x40, VGPU_ST_R, 0, -1, 7, 7, -1, -1, -1, -1, -1 },
	{ "BAR.SYNC R4 ;", 0x40, VGPU_ST_RRI, 0, -1, -1, 4, -1, 0, -1, -1, -1 },
	{ "BAR.SYNC 0x0, 0x40 ;", 0x40, VGPU_ST_I, 0, -1, -1, -1, 0, 0x40, -1, -1, -1 },
	{ "BAR.RED.OR 0x0, P0 ;", 0x41, VGPU_ST_I, 1, -1, -1, -1, 0, 0, 0, 0, -1 },
	{ "BAR.RED.AND 0x1, 0x80, P0 ;", 0x41, VGPU_ST_I, 0, -1, -1, -1, 1, 0x80, 0, 0, -1 },
	{ "BAR.RED.AND 0x1, R5, P0 ;", 0x41, VGPU_ST_RIR, 0, -1, -1, 5, 1, -1, 0, 0, -1 },
	{ "BAR.RED.AND R4, P0 ;", 0x41, VGPU_ST_R, 0, -1, -1, 4, -1, -1, 0, 0, -1 },
	{ "BAR.RED.AND R4, 0x80, P0 ;", 0x41, VGPU_ST_RRI, 0, -1, -1, 4, -1, 0x80, 0, 0, -1 },
	{ "BAR.RED.POPC 0x0, 0x40,  PT;", 0x41, VGPU_ST_I, 2, -1, -1, -1, 0, 0x40, 7, 0, -1 },
	{ "BAR.RED.OR          R0, !P1;", 0x41, VGPU_ST_R, 1, -1, -1, 0, -1, -1, 1, 1, -1 },
	{ "B2R.RESULT RZ, P0 ;", 0x43, VGPU_ST_X, -1, 255, -1, -1, -1, -1, -1, -1, 0 },
	{ "B2R.RESULT R4 ;", 0x43, VGPU_ST_X, -1, 4, -1, -1, -1, -1, -1, -1, 7 },
	{ "BAR.RESULT R0, PT;", 0x43, VGPU_ST_X, -1, 0, -1, -1, -1, -1, -1, -1, 7 },
	{ "B2R.BAR R4, 0x2;", 0x42, VGPU_ST_I, 1, 4, -1, -1, 2, -1, -1, -1, -1 },
	{ "B2R.WARP R4;", 0x42, VGPU_ST_I, 0, 4, -1, -1, 0, -1, -1, -1, -1 },
	{ "B2R R0, 0x0;", 0x42, VGPU_ST_I, 1, 0, -1, -1, 0, -1, -1, -1, -1 },
	{ "B2R.WARP R1, 0x4;", 0x42, VGPU_ST_I, 0, 1, -1, -1, 4, -1, -1, -1, -1 },
	{ "R2B.WARP R4;", 0x44, VGPU_ST_RI, 0, -1, 4, -1, 0, -1, -1, -1, -1 },
	{ "R2B.BAR 0x4, R4;", 0x44, VGPU_ST_RI, 1, -1, 4, -1, 4, -1, -1, -1, -1 },
	{ "R2B 0x0, R0;", 0x44, VGPU_ST_RI, 1, -1, 0, -1, 0, -1, -1, -1, -1 },
	{ "R2B.WARP 0x4, R1;", 0x44, VGPU_ST_RI, 0, -1, 1, -1, 4, -1, -1, -1, -1 },
};


TEST(seed_example_encodings)
{
	bool ok;

	for (size_t i = 0; i < sizeof(seed_encodings) / sizeof(seed_encodings[0]); i++) {
		const struct enc *e = &seed_encodings[i];
		uint64_t w[2];
		int id;

		ok = !asm_one(e->line, w);
		EXPECT_TRUE(ok) TH_LOG("%s: %s", e->line, errbuf);
		if (!ok)
			continue;
		id = vgpu_isa_decode(w);
		ASSERT_GE(id, 0);
		check_field(_metadata, e->line, "optype", w, VGPU_F_OPTYPE, e->optype);
		check_field(_metadata, e->line, "stype", w, VGPU_F_STYPE, e->stype);
		check_field(_metadata, e->line, "pg", w, VGPU_F_PG, 7);
		check_field(_metadata, e->line, "pg.not", w, VGPU_F_PG_NOT, 0);
		check_field(_metadata, e->line, "mode", w, 80,
			    e->optype == 0x41 ? 2 : 1, e->mode);
		check_field(_metadata, e->line, "rd", w, VGPU_F_RD, e->rd);
		check_field(_metadata, e->line, "ra", w, VGPU_F_RA, e->ra);
		check_field(_metadata, e->line, "rb", w, VGPU_F_RB, e->rb);
		check_field(_metadata, e->line, "barid", w, VGPU_F_BARID, e->barid);
		check_field(_metadata, e->line, "cnt", w, VGPU_F_CNT, e->cnt);
		check_field(_metadata, e->line, "pp", w, VGPU_F_PP, e->pp);
		check_field(_metadata, e->line, "pp.not", w, VGPU_F_PP_NOT, e->pp_not);
		check_field(_metadata, e->line, "pu", w, VGPU_F_PU, e->pu);
		EXPECT_EQ(0u, w[1] >> 48); /* no annotations */
	}
}

TEST(seed_rows_chosen)
{
	static const struct {
		const char *line;
		int id;
	} rows[] = {
		{ "BAR.SYNC 0x0", VGPU_I_BAR_SYNC_I },
		{ "BAR.SYNC R4", VGPU_I_BAR_SYNC_RRI },
		{ "BAR.ARV 0x1, R5", VGPU_I_BAR_ARV_RIR },
		{ "BAR.ARV R5, R5", VGPU_I_BAR_ARV_RR },
		{ "BAR.RED.OR 0x0, P0", VGPU_I_BAR_RED_I },
		{ "BAR.RED.OR R0, !P1", VGPU_I_BAR_RED_R },
		{ "BAR.RED.AND R4, 0x80, P0", VGPU_I_BAR_RED_RRI },
		{ "B2R R0, 0x0", VGPU_I_B2R_BAR },
		{ "B2R.WARP R4", VGPU_I_B2R_WARP },
		{ "BAR.RESULT R0, PT", VGPU_I_B2R_RESULT },
		{ "R2B 0x0, R0", VGPU_I_R2B_BAR },
		{ "R2B.WARP R4", VGPU_I_R2B_WARP },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t w[2];

		ASSERT_EQ(0, asm_one(rows[i].line, w));
		EXPECT_EQ(rows[i].id, vgpu_isa_decode(w));
	}
}

TEST(annotations_and_guards_encode)
{
	uint64_t w[2];

	ASSERT_EQ(0, asm_one("@!P3 BAR.SYNC 0x2, 0x40 $sched=15 $req=63 $wsb=7 ;", w));
	EXPECT_EQ(3u, vgpu_get(w, VGPU_F_PG));
	EXPECT_EQ(1u, vgpu_get(w, VGPU_F_PG_NOT));
	EXPECT_EQ(15u, vgpu_get(w, VGPU_F_SCHED));
	EXPECT_EQ(63u, vgpu_get(w, VGPU_F_REQ));
	EXPECT_EQ(7u, vgpu_get(w, VGPU_F_WSB));
	ASSERT_EQ(0, asm_one("bar.sync 0x2 $sched $req $wsb", w));
	EXPECT_EQ(0u, w[1] >> 48);
	ASSERT_EQ(0, asm_one("@P0 b2r.result r1, p2 // lower case", w));
	EXPECT_EQ(0u, vgpu_get(w, VGPU_F_PG));
	EXPECT_EQ(2u, vgpu_get(w, VGPU_F_PU));
	EXPECT_EQ(1u, vgpu_get(w, VGPU_F_RD));
}

TEST(operands_encode)
{
	uint64_t w[2];

	ASSERT_EQ(0, asm_one("MOV R1, -1", w));
	EXPECT_EQ(0xffffffff, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("MOV R1, 4294967295", w));
	EXPECT_EQ(0xffffffff, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("MOV R1, -2147483648", w));
	EXPECT_EQ(0x80000000, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("FADD R1, R2, 1.5", w));
	EXPECT_EQ(0x3fc00000u, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("FMUL R1, R2, -2e3", w));
	EXPECT_EQ(0xc4fa0000, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("FFMA R1, R2, 0x3f800000, R3", w)); /* raw bits */
	EXPECT_EQ(0x3f800000u, vgpu_get(w, VGPU_F_IMM32));
	EXPECT_EQ(3u, vgpu_get(w, VGPU_F_RC));
	ASSERT_EQ(0, asm_one("S2R R7, SR_CTAID.Y", w));
	EXPECT_EQ((uint64_t)VGPU_SR_CTAID_Y, vgpu_get(w, VGPU_F_SR));
	ASSERT_EQ(0, asm_one("S2R R7, sr_tid.x", w));
	EXPECT_EQ((uint64_t)VGPU_SR_TID_X, vgpu_get(w, VGPU_F_SR));
	ASSERT_EQ(0, asm_one("LDG.64 R2, [R4-0x10]", w));
	EXPECT_EQ(4u, vgpu_get(w, VGPU_F_RA));
	EXPECT_EQ(0xfffff0u, vgpu_get(w, VGPU_F_OFF24));
	ASSERT_EQ(0, asm_one("LDS R2, [0x7fffff]", w));
	EXPECT_EQ(VGPU_RZ, vgpu_get(w, VGPU_F_RA));
	EXPECT_EQ(0x7fffffu, vgpu_get(w, VGPU_F_OFF24));
	ASSERT_EQ(0, asm_one("LDS R2, [-0x800000]", w));
	EXPECT_EQ(0x800000u, vgpu_get(w, VGPU_F_OFF24));
	ASSERT_EQ(0, asm_one("STS.U8 [R3 + 4], R9", w));
	EXPECT_EQ(9u, vgpu_get(w, VGPU_F_RB));
	EXPECT_EQ(4u, vgpu_get(w, VGPU_F_OFF24));
	EXPECT_EQ((uint32_t)VGPU_MOD_MSIZE_U8, vgpu_isa_mod(w, VGPU_MG_MSIZE));
	ASSERT_EQ(0, asm_one("LDS.128 R251, [R2]", w));
	ASSERT_EQ(0, asm_one("STG.64 [R2+0x8], RZ", w)); /* 64-bit zero */
	EXPECT_EQ(VGPU_RZ, vgpu_get(w, VGPU_F_RB));
	ASSERT_EQ(0, asm_one("LDG.128 RZ, [R2]", w));	  /* discarded */
	ASSERT_EQ(0, asm_one("ISETP.NE.U32.OR P1, R2, 0x0, !P2", w));
	EXPECT_EQ((uint32_t)VGPU_MOD_CMP_NE, vgpu_isa_mod(w, VGPU_MG_CMP));
	EXPECT_EQ((uint32_t)VGPU_MOD_COMB_OR, vgpu_isa_mod(w, VGPU_MG_COMB));
	EXPECT_EQ(2u, vgpu_get(w, VGPU_F_PP));
	EXPECT_EQ(1u, vgpu_get(w, VGPU_F_PP_NOT));
	ASSERT_EQ(0, asm_one("ISETP.NE.U32 P1, R2, R3", w));
	EXPECT_EQ(VGPU_PT, vgpu_get(w, VGPU_F_PP));
	EXPECT_EQ(0u, vgpu_get(w, VGPU_F_PP_NOT));
	ASSERT_EQ(0, asm_one("IMUL.HI.S32 R1, R2, R3", w));
	EXPECT_EQ(VGPU_I_IMULHI_R, vgpu_isa_decode(w));
	ASSERT_EQ(0, asm_one("ATOMG.CAS R1, [R2], R3, R4", w));
	EXPECT_EQ(VGPU_I_ATOMG_CAS, vgpu_isa_decode(w));
	ASSERT_EQ(0, asm_one("ATOMS.EXCH.U32 R1, [R2+8], R3", w));
	EXPECT_EQ(VGPU_I_ATOMS, vgpu_isa_decode(w));
	ASSERT_NE(0, asm_one(".equ N, 0x20\nBAR.SYNC 0x1, N*0", w)); /* no '*' */
	ASSERT_EQ(0, asm_one("VOTE.BALLOT R3, !P0", w));
	EXPECT_EQ(VGPU_I_VOTE_BALLOT, vgpu_isa_decode(w));
}


TEST(disasm_object_every_row)
{
	size_t cap = 2 * VGPU_I__COUNT * 96 + 64, used = 0;
	char *src = malloc(cap), text[256];

	ASSERT_NE(NULL, src);
	src[0] = 0;
	for (int id = 0; id < (int)VGPU_I__COUNT; id++) {
		for (int dflt = 0; dflt < 2; dflt++) {
			uint64_t w[2];

			sample_word(id, dflt, w); /* BRA: absolute 0x40 */
			vgpu_disasm_insn(w, 0, text, sizeof(text));
			used += (size_t)snprintf(src + used, cap - used, "%s\n", text);
		}
	}
	object_round_trip(_metadata, src);
	free(src);
}

TEST_HARNESS_MAIN
