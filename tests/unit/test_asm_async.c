/* SPDX-License-Identifier: MIT */
/*
 * Assembler: the mbarrier, async-copy and cluster rows (the issue's
 * spellings, modifier positions, register-only addresses, pairs, ranges,
 * the sink, immediate ranges), then every diagnostic with its
 * line:column.
 */

#include "asm_test.h"

/* ---- (b2) mbarrier, asynchronous copies and clusters (issue 3) ---- */

/* Assemble @line, expect row @id, and expect the disassembly @text. */
static void expect_row(struct __test_metadata *_metadata, const char *line,
		       int id, const char *text, uint64_t w[2])
{
	bool ok;
	char buf[256];

	w[0] = w[1] = 0;
	ok = !asm_one(line, w);
	EXPECT_TRUE(ok) TH_LOG("%s: %s", line, errbuf);
	if (!ok)
		return;
	EXPECT_EQ(id, vgpu_isa_decode(w))
		TH_LOG("%s: row %d, expected %d (%s)", line, vgpu_isa_decode(w),
		       id, vgpu_isa_table[id].mnemonic);
	vgpu_disasm_insn(w, 0, buf, sizeof(buf));
	EXPECT_STREQ(text, buf);
}

TEST(async_issue_examples_encode)
{
	uint64_t w[2];

	/* section 5's spellings, field by field */
	expect_row(_metadata, "MBAR.ARRIVE.EXPECT_TX R4, [R2], R5 ;", VGPU_I_MBAR_ARRIVE_TX_R,
		   "MBAR.ARRIVE.EXPECT_TX R4, [R2], R5 ;", w);
	EXPECT_EQ(0x52u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint64_t)VGPU_ST_R, field(w, VGPU_F_STYPE));
	EXPECT_EQ((uint64_t)VGPU_MOD_ARVKIND_EXPECT_TX, field(w, 80, 2));
	EXPECT_EQ(VGPU_PT, field(w, VGPU_F_PG));
	EXPECT_EQ(4u, field(w, VGPU_F_RD));
	EXPECT_EQ(2u, field(w, VGPU_F_RA));
	EXPECT_EQ(5u, field(w, VGPU_F_RB));
	EXPECT_EQ(0u, field(w, 87, 3)); /* .RELEASE.CTA */
	EXPECT_EQ(0x0000000502047252ull, w[0]);
	EXPECT_EQ(0x0000000000010000ull, w[1]);

	expect_row(_metadata, "MBAR.TRY_WAIT.PARITY P1, [R2], R3, 0x989680 ;",
		   VGPU_I_MBAR_TRY_WAIT_PAR_I,
		   "MBAR.TRY_WAIT.PARITY P1, [R2], R3, 0x989680 ;", w);
	EXPECT_EQ(0x57u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint64_t)VGPU_ST_I, field(w, VGPU_F_STYPE));
	EXPECT_EQ((uint64_t)VGPU_MOD_WAITKIND_PARITY, field(w, 80, 1));
	EXPECT_EQ(1u, field(w, VGPU_F_PU));
	EXPECT_EQ(2u, field(w, VGPU_F_RA));
	EXPECT_EQ(3u, field(w, VGPU_F_RC));
	EXPECT_EQ(10000000u, field(w, VGPU_F_IMM32)); /* ns: the suspend hint */
	EXPECT_EQ(0u, field(w, VGPU_F_RD));

	expect_row(_metadata, "CP.ASYNC.BULK [R6], [R8], R9, [R2] ;", VGPU_I_CP_BULK_R,
		   "CP.ASYNC.BULK [R6], [R8], R9, [R2] ;", w);
	EXPECT_EQ(0x73u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint64_t)VGPU_ST_R, field(w, VGPU_F_STYPE));
	EXPECT_EQ(6u, field(w, VGPU_F_RA)); /* shared destination */
	EXPECT_EQ(8u, field(w, VGPU_F_RC)); /* global source R8:R9 */
	EXPECT_EQ(9u, field(w, VGPU_F_RB)); /* size */
	EXPECT_EQ(2u, field(w, VGPU_F_RE)); /* mbarrier */
	EXPECT_EQ(0x0000000906007273ull, w[0]);
	EXPECT_EQ(0x0000000000000208ull, w[1]);

	/* the sink: rd = RZ, and "_" again in the disassembly */
	expect_row(_metadata, "MBAR.ARRIVE _, [R2] ;", VGPU_I_MBAR_ARRIVE_X,
		   "MBAR.ARRIVE _, [R2] ;", w);
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RD));
	EXPECT_EQ(2u, field(w, VGPU_F_RA));
	EXPECT_EQ((uint64_t)VGPU_ST_X, field(w, VGPU_F_STYPE));
	expect_row(_metadata, "MBAR.ARRIVE RZ, [R2]", VGPU_I_MBAR_ARRIVE_X,
		   "MBAR.ARRIVE _, [R2] ;", w);
	expect_row(_metadata, "MBAR.ARRIVE_DROP.NOCOMPLETE _, [RZ], 0x1", VGPU_I_MBAR_DROP_NC_I,
		   "MBAR.ARRIVE_DROP.NOCOMPLETE _, [RZ], 0x1 ;", w);
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RA));
}

TEST(async_rows_chosen)
{
	static const struct {
		const char *line;
		int id;
		const char *text; /* canonical disassembly */
	} rows[] = {
		{ "MBAR.INIT [R2], R3", VGPU_I_MBAR_INIT_R, "MBAR.INIT [R2], R3 ;" },
		{ "MBAR.INIT [R2], 12", VGPU_I_MBAR_INIT_I, "MBAR.INIT [R2], 0xc ;" },
		{ "MBAR.INVAL [R2]", VGPU_I_MBAR_INVAL, "MBAR.INVAL [R2] ;" },
		{ "MBAR.ARRIVE R4, [R2]", VGPU_I_MBAR_ARRIVE_X, "MBAR.ARRIVE R4, [R2] ;" },
		{ "MBAR.ARRIVE R4, [R2], R7", VGPU_I_MBAR_ARRIVE_R,
		  "MBAR.ARRIVE R4, [R2], R7 ;" },
		{ "MBAR.ARRIVE R4, [R2], 4", VGPU_I_MBAR_ARRIVE_I,
		  "MBAR.ARRIVE R4, [R2], 0x4 ;" },
		{ "MBAR.ARRIVE.EXPECT_TX _, [R2], 0x3000", VGPU_I_MBAR_ARRIVE_TX_I,
		  "MBAR.ARRIVE.EXPECT_TX _, [R2], 0x3000 ;" },
		{ "MBAR.ARRIVE.NOCOMPLETE R4, [R2], R5", VGPU_I_MBAR_ARRIVE_NC_R,
		  "MBAR.ARRIVE.NOCOMPLETE R4, [R2], R5 ;" },
		{ "MBAR.ARRIVE.NOCOMPLETE R4, [R2], 2", VGPU_I_MBAR_ARRIVE_NC_I,
		  "MBAR.ARRIVE.NOCOMPLETE R4, [R2], 0x2 ;" },
		{ "MBAR.ARRIVE_DROP _, [R2]", VGPU_I_MBAR_DROP_X,
		  "MBAR.ARRIVE_DROP _, [R2] ;" },
		{ "MBAR.ARRIVE_DROP R4, [R2], R5", VGPU_I_MBAR_DROP_R,
		  "MBAR.ARRIVE_DROP R4, [R2], R5 ;" },
		{ "MBAR.ARRIVE_DROP R4, [R2], 1", VGPU_I_MBAR_DROP_I,
		  "MBAR.ARRIVE_DROP R4, [R2], 0x1 ;" },
		{ "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], R5", VGPU_I_MBAR_DROP_TX_R,
		  "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], R5 ;" },
		{ "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], 0", VGPU_I_MBAR_DROP_TX_I,
		  "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], 0x0 ;" },
		{ "MBAR.ARRIVE_DROP.NOCOMPLETE R4, [R2], R5", VGPU_I_MBAR_DROP_NC_R,
		  "MBAR.ARRIVE_DROP.NOCOMPLETE R4, [R2], R5 ;" },
		{ "MBAR.EXPECT_TX [R2], R5", VGPU_I_MBAR_EXPECT_TX_R,
		  "MBAR.EXPECT_TX [R2], R5 ;" },
		{ "MBAR.EXPECT_TX [R2], 512", VGPU_I_MBAR_EXPECT_TX_I,
		  "MBAR.EXPECT_TX [R2], 0x200 ;" },
		{ "MBAR.COMPLETE_TX [R2], R5", VGPU_I_MBAR_COMPLETE_TX_R,
		  "MBAR.COMPLETE_TX [R2], R5 ;" },
		{ "MBAR.COMPLETE_TX [R2], 32", VGPU_I_MBAR_COMPLETE_TX_I,
		  "MBAR.COMPLETE_TX [R2], 0x20 ;" },
		{ "MBAR.TEST_WAIT P0, [R2], R4", VGPU_I_MBAR_TEST_WAIT,
		  "MBAR.TEST_WAIT P0, [R2], R4 ;" },
		{ "MBAR.TEST_WAIT.PARITY P0, [R2], R3", VGPU_I_MBAR_TEST_WAIT_PAR_R,
		  "MBAR.TEST_WAIT.PARITY P0, [R2], R3 ;" },
		{ "MBAR.TEST_WAIT.PARITY P0, [R2], 1", VGPU_I_MBAR_TEST_WAIT_PAR_I,
		  "MBAR.TEST_WAIT.PARITY P0, [R2], 0x1 ;" },
		{ "MBAR.TRY_WAIT P0, [R2], R4", VGPU_I_MBAR_TRY_WAIT_X,
		  "MBAR.TRY_WAIT P0, [R2], R4 ;" },
		{ "MBAR.TRY_WAIT P0, [R2], R4, R6", VGPU_I_MBAR_TRY_WAIT_R,
		  "MBAR.TRY_WAIT P0, [R2], R4, R6 ;" },
		{ "MBAR.TRY_WAIT P0, [R2], R4, 1000", VGPU_I_MBAR_TRY_WAIT_I,
		  "MBAR.TRY_WAIT P0, [R2], R4, 0x3e8 ;" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], R3", VGPU_I_MBAR_TRY_WAIT_PAR_X,
		  "MBAR.TRY_WAIT.PARITY P0, [R2], R3 ;" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], R3, R6", VGPU_I_MBAR_TRY_WAIT_PAR_R,
		  "MBAR.TRY_WAIT.PARITY P0, [R2], R3, R6 ;" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], 0", VGPU_I_MBAR_TRY_WAIT_PAR_RI,
		  "MBAR.TRY_WAIT.PARITY P0, [R2], 0x0 ;" },
		{ "MBAR.PENDING_COUNT R1, R4", VGPU_I_MBAR_PENDING_COUNT,
		  "MBAR.PENDING_COUNT R1, R4 ;" },
		{ "CP.ASYNC [R6], [R8], 4", VGPU_I_CP_ASYNC, "CP.ASYNC [R6], [R8], 0x4 ;" },
		{ "CP.ASYNC.CA [R6], [R8], 8", VGPU_I_CP_ASYNC, "CP.ASYNC [R6], [R8], 0x8 ;" },
		{ "CP.ASYNC.MBARRIER.ARRIVE [R2]", VGPU_I_CP_ASYNC_MBAR_ARRIVE,
		  "CP.ASYNC.MBARRIER.ARRIVE [R2] ;" },
		{ "CP.ASYNC.WAIT_ALL", VGPU_I_CP_ASYNC_WAIT_ALL, "CP.ASYNC.WAIT_ALL ;" },
		{ "CP.ASYNC.BULK [R6], [R8], 0x1000, [R2]", VGPU_I_CP_BULK_I,
		  "CP.ASYNC.BULK [R6], [R8], 0x1000, [R2] ;" },
		{ "CP.ASYNC.BULK.GLOBAL [R8], [R6], R9", VGPU_I_CP_BULK_STORE_R,
		  "CP.ASYNC.BULK.GLOBAL [R8], [R6], R9 ;" },
		{ "CP.ASYNC.BULK.GLOBAL [R8], [R6], 16", VGPU_I_CP_BULK_STORE_I,
		  "CP.ASYNC.BULK.GLOBAL [R8], [R6], 0x10 ;" },
		{ "CP.ASYNC.BULK.COMMIT_GROUP", VGPU_I_CP_BULK_COMMIT,
		  "CP.ASYNC.BULK.COMMIT_GROUP ;" },
		{ "CP.ASYNC.BULK.WAIT_GROUP 0", VGPU_I_CP_BULK_WAIT,
		  "CP.ASYNC.BULK.WAIT_GROUP 0x0 ;" },
		{ "CP.ASYNC.BULK.WAIT_GROUP.READ 63", VGPU_I_CP_BULK_WAIT_READ,
		  "CP.ASYNC.BULK.WAIT_GROUP.READ 0x3f ;" },
		{ "MAPA R1, R2, R3", VGPU_I_MAPA_R, "MAPA R1, R2, R3 ;" },
		{ "MAPA R1, R2, 0", VGPU_I_MAPA_I, "MAPA R1, R2, 0x0 ;" },
		{ "BAR.CLUSTER.ARRIVE", VGPU_I_BAR_CLUSTER_ARRIVE, "BAR.CLUSTER.ARRIVE ;" },
		{ "BAR.CLUSTER.WAIT", VGPU_I_BAR_CLUSTER_WAIT, "BAR.CLUSTER.WAIT ;" },
		{ "mbar.try_wait.parity.relaxed.cluster p3, [r2], r3",
		  VGPU_I_MBAR_TRY_WAIT_PAR_X,
		  "MBAR.TRY_WAIT.PARITY.RELAXED.CLUSTER P3, [R2], R3 ;" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t w[2];

		expect_row(_metadata, rows[i].line, rows[i].id, rows[i].text, w);
	}
}

/* Modifier groups land at their bit positions (uapi/vgpu_isa_table.h). */
TEST(async_modifiers_encode)
{
	bool ok;
	static const struct {
		const char *line;
		unsigned pos, width, val; /* one group */
		int pos2, val2;		  /* and a second, or -1 */
	} mods[] = {
		/* MSEMA 87..88, MSCOPE 89 */
		{ "MBAR.ARRIVE.RELAXED.CLUSTER _, [R2], 0x4", 87, 2, 1, 89, 1 },
		{ "MBAR.ARRIVE.RELEASE.CTA R4, [R2]", 87, 2, 0, 89, 0 },
		{ "MBAR.ARRIVE.CLUSTER _, [R2]", 87, 2, 0, 89, 1 },
		{ "MBAR.ARRIVE.RELAXED R4, [R2]", 87, 2, 1, 89, 0 },
		{ "MBAR.ARRIVE.EXPECT_TX.RELAXED.CLUSTER _, [R2], R5", 80, 2, 1, 89, 1 },
		{ "MBAR.ARRIVE_DROP.NOCOMPLETE.RELEASE.CTA R4, [R2], R5", 80, 2, 2, 89, 0 },
		{ "MBAR.ARRIVE_DROP.EXPECT_TX.RELAXED.CLUSTER R4, [R2], 0x10", 87, 2, 1, 89, 1 },
		/* MSEMW 87..88 */
		{ "MBAR.TRY_WAIT.RELAXED.CLUSTER P0, [R2], R4", 87, 2, 1, 89, 1 },
		{ "MBAR.TEST_WAIT.ACQUIRE.CTA P0, [R2], R4", 87, 2, 0, 89, 0 },
		{ "MBAR.TRY_WAIT.PARITY.ACQUIRE.CLUSTER P0, [R2], 0x0", 80, 1, 1, 89, 1 },
		/* MSEMX: .RELAXED only */
		{ "MBAR.EXPECT_TX.RELAXED.CLUSTER [R2], 0x200", 87, 2, 0, 89, 1 },
		{ "MBAR.COMPLETE_TX.RELAXED.CTA [R2], R3", 87, 2, 0, 89, 0 },
		/* fixed groups at bit 80 */
		{ "BAR.CLUSTER.ARRIVE.RELAXED", 80, 1, 0, 87, 1 },
		{ "BAR.CLUSTER.ARRIVE.RELEASE", 80, 1, 0, 87, 0 },
		{ "BAR.CLUSTER.WAIT.ACQUIRE", 80, 1, 1, 87, 0 },
		{ "CP.ASYNC.CG [R1], [R2], 0x10", 80, 1, 1, -1, 0 },
		{ "CP.ASYNC.CA [R1], [R2], 0x4", 80, 1, 0, -1, 0 },
		{ "CP.ASYNC.MBARRIER.ARRIVE.NOINC [R2]", 80, 1, 1, -1, 0 },
		{ "CP.ASYNC.MBARRIER.ARRIVE [R2]", 80, 1, 0, -1, 0 },
		{ "CP.ASYNC.BULK.WAIT_GROUP.READ 0x0", 80, 1, 1, -1, 0 },
		{ "CP.ASYNC.BULK.TENSOR.1D [R6], [R8], R10, [R2]", 80, 3, 0, -1, 0 },
		{ "CP.ASYNC.BULK.TENSOR.3D [R6], [R8], R10, [R2]", 80, 3, 2, -1, 0 },
		{ "CP.ASYNC.BULK.TENSOR.GLOBAL.5D [R8], R10, [R6]", 80, 3, 4, -1, 0 },
	};

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		char text[256];
		uint64_t w[2];

		ok = !asm_one(mods[i].line, w);
		EXPECT_TRUE(ok) TH_LOG("%s: %s", mods[i].line, errbuf);
		if (!ok)
			continue;
		check_field(_metadata, mods[i].line, "group", w, mods[i].pos, mods[i].width,
			    (int)mods[i].val);
		if (mods[i].pos2 >= 0)
			check_field(_metadata, mods[i].line, "second group", w,
				    (unsigned)mods[i].pos2,
				    mods[i].pos2 == 89 ? 1 : 2, mods[i].val2);
		/* and the word reads back: no stray bits, canonical text */
		EXPECT_TRUE(round_trip(_metadata, w, 0, text, sizeof(text)));
	}
}

TEST(async_tensor_forms)
{
	uint64_t w[2];

	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R10, [R2] ;",
		   VGPU_I_CP_TENSOR, "CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R10, [R2] ;",
		   w);
	EXPECT_EQ(0x77u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));  /* shared destination */
	EXPECT_EQ(8u, field(w, VGPU_F_RB));  /* tensor map R8:R9 */
	EXPECT_EQ(10u, field(w, VGPU_F_RC)); /* coordinates R10, R11 */
	EXPECT_EQ(2u, field(w, VGPU_F_RE));  /* mbarrier */
	EXPECT_EQ((uint32_t)VGPU_MOD_TDIM_2D, vgpu_isa_mod(w, VGPU_MG_TDIM));
	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.2D [R8], R10, [R6] ;",
		   VGPU_I_CP_TENSOR_STORE,
		   "CP.ASYNC.BULK.TENSOR.GLOBAL.2D [R8], R10, [R6] ;", w);
	EXPECT_EQ(0x78u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(8u, field(w, VGPU_F_RB));
	EXPECT_EQ(10u, field(w, VGPU_F_RC));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));
	EXPECT_EQ(0u, field(w, VGPU_F_RE));
	/* ranges that end exactly at R254, and RZ (all coordinates zero) */
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.1D [R6], [R8], R254, [R2]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R253, [R2]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.5D [R6], [R8], R250, [R2]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.GLOBAL.4D [R8], R251, [R6]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.5D [R6], [R8], RZ, [R2]", w));
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RC));
	/* ... and past it */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R254, [R2] ;",
		      "t.s:1:37: error: 2D tensor coordinates need R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.2D [R8], R254, [R6]",
		      "t.s:1:38: error: 2D tensor coordinates need R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.5D [R6], [R8], R251, [R2]",
		      "t.s:1:37: error: 5D tensor coordinates need R251..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.3D [R8], R253, [R6]",
		      "t.s:1:38: error: 3D tensor coordinates need R253..R255, past R254\n");
	/* the rank is required */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR [R6], [R8], R10, [R2]",
		      "t.s:1:1: error: missing required modifier for CP.ASYNC.BULK.TENSOR (one of .1D, .2D, .3D, .4D, .5D)\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.6D [R6], [R8], R10, [R2]",
		      "t.s:1:21: error: unknown modifier '.6D' for CP.ASYNC.BULK.TENSOR\n");
}

/* im2col: the offsets a range in rd (rank - 2 registers), ranks 3 to 5 */
TEST(async_tensor_im2col_forms)
{
	uint64_t w[2];

	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.IM2COL.4D [R6], [R8], R10, [R2], R20 ;",
		   VGPU_I_CP_TENSOR_IM2COL,
		   "CP.ASYNC.BULK.TENSOR.IM2COL.4D [R6], [R8], R10, [R2], R20 ;", w);
	EXPECT_EQ(0x79u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));  /* shared destination */
	EXPECT_EQ(8u, field(w, VGPU_F_RB));  /* tensor map R8:R9 */
	EXPECT_EQ(10u, field(w, VGPU_F_RC)); /* coordinates R10..R13 */
	EXPECT_EQ(2u, field(w, VGPU_F_RE));  /* mbarrier */
	EXPECT_EQ(20u, field(w, VGPU_F_RD)); /* offsets R20, R21 */
	EXPECT_EQ((uint32_t)VGPU_MOD_IMDIM_4D, vgpu_isa_mod(w, VGPU_MG_IMDIM));
	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.3D [R8], R10, [R6] ;",
		   VGPU_I_CP_TENSOR_STORE_IM2COL,
		   "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.3D [R8], R10, [R6] ;", w);
	EXPECT_EQ(0x7au, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(8u, field(w, VGPU_F_RB));
	EXPECT_EQ(10u, field(w, VGPU_F_RC));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));
	EXPECT_EQ(0u, field(w, VGPU_F_RD));
	/* offsets that end exactly at R254, and RZ (all offsets zero) */
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.IM2COL.3D [R6], [R8], R10, [R2], R254", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.IM2COL.5D [R6], [R8], R10, [R2], R252", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.IM2COL.5D [R6], [R8], R10, [R2], RZ", w));
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RD));
	/* ... and past it */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.IM2COL.5D [R6], [R8], R10, [R2], R253",
		      "t.s:1:55: error: 5D im2col offsets need R253..R255, past R254\n");
	/* only ranks 3 to 5 */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.IM2COL.2D [R6], [R8], R10, [R2], R20",
		      "t.s:1:28: error: unknown modifier '.2D' for CP.ASYNC.BULK.TENSOR.IM2COL\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.1D [R8], R10, [R6]",
		      "t.s:1:35: error: unknown modifier '.1D' for "
		      "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL\n");
}

/* tensor reductions: a store's operands, the operation at bit 83 */
TEST(async_tensor_reduce_forms)
{
	static const char *const ops[] = { "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR" };
	uint64_t w[2];
	char line[96];

	for (unsigned o = 0; o < 8; o++) {
		snprintf(line, sizeof(line), "CP.REDUCE.ASYNC.BULK.TENSOR.%s.3D [R8], R10, [R6] ;",
			 ops[o]);
		expect_row(_metadata, line, VGPU_I_CP_TENSOR_RED, line, w);
		EXPECT_EQ(0x7bu, field(w, VGPU_F_OPTYPE));
		EXPECT_EQ(8u, field(w, VGPU_F_RB));  /* tensor map R8:R9 */
		EXPECT_EQ(10u, field(w, VGPU_F_RC)); /* coordinates R10..R12 */
		EXPECT_EQ(6u, field(w, VGPU_F_RA));  /* shared source */
		EXPECT_EQ(o, vgpu_isa_mod(w, VGPU_MG_TRED));
		EXPECT_EQ((uint32_t)VGPU_MOD_TDIM_3D, vgpu_isa_mod(w, VGPU_MG_TDIM));
		check_field(_metadata, line, "operation", w, 83, 3, (int)o);
	}
	expect_row(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.XOR.5D [R8], R10, [R6] ;",
		   VGPU_I_CP_TENSOR_RED_IM2COL,
		   "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.XOR.5D [R8], R10, [R6] ;", w);
	EXPECT_EQ(0x7cu, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint32_t)VGPU_MOD_TRED_XOR, vgpu_isa_mod(w, VGPU_MG_TRED));
	EXPECT_EQ((uint32_t)VGPU_MOD_IMDIM_5D, vgpu_isa_mod(w, VGPU_MG_IMDIM));
	ASSERT_EQ(0, asm_one("CP.REDUCE.ASYNC.BULK.TENSOR.ADD.1D [R8], R254, [R6]", w));
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.ADD.2D [R8], R254, [R6]",
		      "t.s:1:42: error: 2D tensor coordinates need R254..R255, past R254\n");
	/* the operation, then the rank, both required; im2col ranks 3 to 5 */
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.2D [R8], R10, [R6]",
		      "t.s:1:28: error: missing required modifier for CP.REDUCE.ASYNC.BULK.TENSOR "
		      "(one of .ADD, .MIN, .MAX, .INC, .DEC, .AND, .OR, .XOR)\n");
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.EXCH.2D [R8], R10, [R6]",
		      "t.s:1:28: error: unknown modifier '.EXCH' for CP.REDUCE.ASYNC.BULK.TENSOR\n");
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.ADD.2D [R8], R10, [R6]",
		      "t.s:1:39: error: unknown modifier '.2D' for "
		      "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL\n");
}

/* ---- (c) diagnostics ---- */

TEST(error_unknown_mnemonic)
{
	expect_errors(_metadata, "NOP\n  FOO R1, R2\n",
		      "t.s:2:3: error: unknown mnemonic 'FOO'\n");
	expect_errors(_metadata, "BAR R1", "t.s:1:1: error: unknown mnemonic 'BAR'\n");
}

TEST(error_unknown_modifier)
{
	expect_errors(_metadata, "BAR.RED.XOR R4, P0",
		      "t.s:1:8: error: unknown modifier '.XOR' for BAR.RED\n");
	expect_errors(_metadata, "BAR.SYNC.ALL 0x0",
		      "t.s:1:9: error: unknown modifier '.ALL' for BAR.SYNC\n");
	expect_errors(_metadata, "LDG.64.64 R2, [R4]",
		      "t.s:1:7: error: unknown modifier '.64' for LDG\n");
	expect_errors(_metadata, "B2R.FOO R1, 0x0",
		      "t.s:1:4: error: unknown modifier '.FOO' for B2R.BAR\n");
}

TEST(error_missing_modifier)
{
	expect_errors(_metadata, "  BAR.RED R4, P0",
		      "t.s:1:3: error: missing required modifier for BAR.RED (one of .AND, .OR, .POPC)\n");
	expect_errors(_metadata, "ISETP.LT P0, R1, R2",
		      "t.s:1:1: error: missing required modifier for ISETP (one of .U32, .S32)\n");
	expect_errors(_metadata, "ISETP.S32.LT P0, R1, R2",
		      "t.s:1:6: error: missing required modifier for ISETP (one of .LT, .EQ, .LE, .GT, .NE, .GE)\n");
}

TEST(error_wrong_operand_form)
{
	expect_errors(_metadata, "BAR.SYNC P0",
		      "t.s:1:1: error: BAR.SYNC does not take (predicate); accepted forms: "
		      "(UImm4[, UImm12]), (GPR, GPR), (GPR[, UImm12]), (UImm4, GPR)\n");
	expect_errors(_metadata, "R2B.WARP",
		      "t.s:1:1: error: R2B.WARP does not take (); accepted forms: ([UImm4,] GPR)\n");
	expect_errors(_metadata, "B2R.RESULT R1, R2",
		      "t.s:1:1: error: B2R.RESULT does not take (GPR, GPR); accepted forms: (GPR[, predicate])\n");
	expect_errors(_metadata, "LDG.64 R1, R2",
		      "t.s:1:1: error: LDG.64 does not take (GPR, GPR); accepted forms: (GPR, memory)\n");
	expect_errors(_metadata, "S2R R1, 0x3",
		      "t.s:1:1: error: S2R does not take (GPR, immediate); accepted forms: (GPR, special register)\n");
}

TEST(error_barrier_operands)
{
	expect_errors(_metadata, "BAR.SYNC 0x10, 0x40",
		      "t.s:1:10: error: barrier id 16 out of range (0..15)\n");
	expect_errors(_metadata, "BAR.SYNC 0x1, 0x41",
		      "t.s:1:15: error: barrier count 65 is not a multiple of 32\n");
	expect_errors(_metadata, "BAR.RED.OR R1, 0x1000, P0",
		      "t.s:1:16: error: barrier count 4096 out of range (0..4095)\n");
	expect_errors(_metadata, "BAR.SYNC 0x10, 0x1000",
		      "t.s:1:10: error: barrier id 16 out of range (0..15)\n"
		      "t.s:1:16: error: barrier count 4096 out of range (0..4095)\n");
	expect_errors(_metadata, "R2B.BAR -1, R0",
		      "t.s:1:9: error: barrier id -1 out of range (0..15)\n");
}

#define ARV0 "needs a non-zero barrier count (count 0 means all warps only for BAR.SYNC and BAR.RED)\n"

TEST(error_bar_arv_count_zero)
{
	expect_errors(_metadata, "BAR.ARV 0x1, 0x0", "t.s:1:14: error: BAR.ARV " ARV0);
	expect_errors(_metadata, "\tBAR.ARV 0x1 ;", "t.s:1:2: error: BAR.ARV " ARV0);
	expect_errors(_metadata, "BAR.ARV R4", "t.s:1:1: error: BAR.ARV " ARV0);
	expect_errors(_metadata, "BAR.ARV R4, 0", "t.s:1:13: error: BAR.ARV " ARV0);
	/* BAR.SYNC and BAR.RED take count 0; register counts are checked at run time */
	struct vgpu_object o;

	EXPECT_EQ(0,
		  assemble("BAR.SYNC 0x1, 0x0\nBAR.SYNC R4\nBAR.RED.OR 0x0, P0\n"
			   "BAR.ARV 0x1, R2\nBAR.ARV R1, R2\n", &o));
	vgpu_object_fini(&o);
}

TEST(error_labels)
{
	expect_errors(_metadata, "BRA nowhere\nEXIT",
		      "t.s:1:5: error: unknown label 'nowhere'\n");
	expect_errors(_metadata, "a:\nNOP\n  a: NOP",
		      "t.s:3:3: error: duplicate label 'a' (first defined at line 1)\n");
	expect_errors(_metadata, "R1: NOP",
		      "t.s:1:1: error: 'R1' is a register name, not a valid label\n");
	expect_errors(_metadata, "x.y: NOP", "t.s:1:1: error: expected label, got 'x.y'\n");
}

TEST(error_registers)
{
	expect_errors(_metadata, "MOV R255, R1",
		      "t.s:1:5: error: register R255 out of range (R0..R254, RZ)\n");
	expect_errors(_metadata, "@P7 NOP",
		      "t.s:1:2: error: predicate P7 out of range (P0..P6, PT)\n");
	/* a name as guard after a valid guard: parse_guard() once read an
	 * uninitialised operand and sometimes accepted it */
	expect_errors(_metadata, "@P1 EXIT ;\n@foo EXIT ;",
		      "t.s:2:2: error: guard must be a predicate (P0..P6, PT), not 'foo'\n");
	expect_errors(_metadata, "DADD R2, R254, R4 ;",
		      "t.s:1:10: error: a 64-bit pair needs R254..R255, past R254\n");
	expect_errors(_metadata, "@R1 NOP",
		      "t.s:1:2: error: guard must be a predicate (P0..P6, PT), not 'R1'\n");
	expect_errors(_metadata, "LDG.64 R254, [R2]",
		      "t.s:1:8: error: 64-bit data needs R254..R255, past R254\n");
	expect_errors(_metadata, "LDS.128 R252, [R2]",
		      "t.s:1:9: error: 128-bit data needs R252..R255, past R254\n");
	expect_errors(_metadata, "STG.128 [R2], R253",
		      "t.s:1:15: error: 128-bit data needs R253..R256, past R254\n");
	expect_errors(_metadata, "LDS R1, [P0]",
		      "t.s:1:10: error: memory base must be a GPR, not 'P0'\n");
}

TEST(error_immediates)
{
	expect_errors(_metadata, "MOV R1, 0x100000000",
		      "t.s:1:9: error: immediate 0x100000000 out of range (-0x80000000..0xffffffff)\n");
	expect_errors(_metadata, "MOV R1, -2147483649",
		      "t.s:1:9: error: immediate -0x80000001 out of range (-0x80000000..0xffffffff)\n");
	expect_errors(_metadata, "MOV R1, 99999999999999999999",
		      "t.s:1:9: error: number '99999999999999999999' is too large\n");
	expect_errors(_metadata, "MOV R1, 12ab", "t.s:1:9: error: bad number '12ab'\n");
	expect_errors(_metadata, "MOV R1, 1.5",
		      "t.s:1:9: error: immediate must be an integer, not a float literal\n");
	expect_errors(_metadata, "FADD R1, R2, 1e39",
		      "t.s:1:14: error: float literal '1e39' out of range\n");
	expect_errors(_metadata, "LDS R1, [R2+0x800000]",
		      "t.s:1:9: error: memory offset 0x800000 out of range (-0x800000..0x7fffff)\n");
	expect_errors(_metadata, "LDS R1, [R2-0x800001]",
		      "t.s:1:9: error: memory offset -0x800001 out of range (-0x800000..0x7fffff)\n");
	expect_errors(_metadata, "LDP R1, [nosuch]", "t.s:1:10: error: unknown symbol 'nosuch'\n");
}

/* Every diagnostic of the mbarrier, async-copy and cluster operands. */
TEST(error_async_operands)
{
	/* register-only addresses */
	expect_errors(_metadata, "MBAR.INIT [R2+0x8], 0x20",
		      "t.s:1:14: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "MBAR.ARRIVE _, [R2-4], 1",
		      "t.s:1:19: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "MBAR.INVAL [0x40]",
		      "t.s:1:13: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, ".shared bar, 8\nMBAR.INIT [bar], 1",
		      "t.s:2:12: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "CP.ASYNC.BULK [R6], [R8+16], R9, [R2]",
		      "t.s:1:24: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.1D [R6], [R8], R10, [R2+8]",
		      "t.s:1:45: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	/* 64-bit pairs */
	expect_errors(_metadata, "MBAR.ARRIVE R254, [R2]",
		      "t.s:1:13: error: 64-bit mbarrier state needs R254..R255, past R254\n");
	expect_errors(_metadata, "MBAR.TEST_WAIT P0, [R2], R254",
		      "t.s:1:26: error: 64-bit mbarrier state needs R254..R255, past R254\n");
	expect_errors(_metadata, "MBAR.PENDING_COUNT R1, R254",
		      "t.s:1:24: error: 64-bit mbarrier state needs R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC [R6], [R254], 0x4",
		      "t.s:1:16: error: 64-bit global address needs R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.GLOBAL [R254], [R6], 0x10",
		      "t.s:1:22: error: 64-bit global address needs R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.1D [R6], [R254], R10, [R2]",
		      "t.s:1:31: error: 64-bit global address needs R254..R255, past R254\n");
	/* immediates: counts, tx-counts, parities, sizes, groups, ranks */
	expect_errors(_metadata, "MBAR.INIT [R2], 0x0",
		      "t.s:1:17: error: arrival count 0 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.INIT [R2], 0x100000",
		      "t.s:1:17: error: arrival count 1048576 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE R4, [R2], 0",
		      "t.s:1:23: error: arrival count 0 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE.NOCOMPLETE R4, [R2], 0x100000",
		      "t.s:1:34: error: arrival count 1048576 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE_DROP _, [R2], -1",
		      "t.s:1:27: error: arrival count 4294967295 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE_DROP.NOCOMPLETE _, [R2], 0",
		      "t.s:1:38: error: arrival count 0 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE.EXPECT_TX _, [R2], 0x100000",
		      "t.s:1:32: error: tx-count 1048576 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE_DROP.EXPECT_TX _, [R2], 0x100000",
		      "t.s:1:37: error: tx-count 1048576 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.EXPECT_TX [R2], 0x100000",
		      "t.s:1:22: error: tx-count 1048576 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.COMPLETE_TX [R2], -1",
		      "t.s:1:24: error: tx-count 4294967295 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.TEST_WAIT.PARITY P0, [R2], 2",
		      "t.s:1:33: error: phase parity 2 is not 0 or 1\n");
	expect_errors(_metadata, "MBAR.TRY_WAIT.PARITY P0, [R2], 0x2",
		      "t.s:1:32: error: phase parity 2 is not 0 or 1\n");
	expect_errors(_metadata, "CP.ASYNC [R6], [R8], 12",
		      "t.s:1:22: error: copy size 12 is not 4, 8 or 16\n");
	expect_errors(_metadata, "CP.ASYNC.CA [R6], [R8], 0",
		      "t.s:1:25: error: copy size 0 is not 4, 8 or 16\n");
	expect_errors(_metadata, "CP.ASYNC.CG [R6], [R8], 8",
		      "t.s:1:25: error: CP.ASYNC.CG copies 16 bytes only, not 8\n");
	expect_errors(_metadata, "CP.ASYNC.BULK [R6], [R8], 0x18, [R2]",
		      "t.s:1:27: error: bulk copy size 24 is not a multiple of 16 in 16..1048560\n");
	expect_errors(_metadata, "CP.ASYNC.BULK [R6], [R8], 0, [R2]",
		      "t.s:1:27: error: bulk copy size 0 is not a multiple of 16 in 16..1048560\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.GLOBAL [R8], [R6], 0x100000",
		      "t.s:1:34: error: bulk copy size 1048576 is not a multiple of 16 in 16..1048560\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.WAIT_GROUP 64",
		      "t.s:1:26: error: pending bulk group count 64 out of range (0..63)\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.WAIT_GROUP.READ -1",
		      "t.s:1:31: error: pending bulk group count 4294967295 out of range (0..63)\n");
	expect_errors(_metadata, "MAPA R1, R2, 16",
		      "t.s:1:14: error: CTA rank 16 out of range (0..15)\n");
	/* forms that have no row */
	expect_errors(_metadata, "MBAR.ARRIVE.NOCOMPLETE R4, [R2]",
		      "t.s:1:1: error: MBAR.ARRIVE.NOCOMPLETE does not take (GPR, memory); "
		      "accepted forms: (GPR pair, [GPR], GPR), (GPR pair, [GPR], Imm32)\n");
	expect_errors(_metadata, "MBAR.TRY_WAIT.PARITY P1, [R2], 0x0, 0x989680",
		      "t.s:1:1: error: MBAR.TRY_WAIT.PARITY does not take (predicate, memory, immediate, immediate); "
		      "accepted forms: (predicate, [GPR], GPR), (predicate, [GPR], GPR, GPR), "
		      "(predicate, [GPR], GPR, Imm32), (predicate, [GPR], Imm32)\n");
	expect_errors(_metadata, "CP.ASYNC.BULK R6, [R8], R9, [R2]",
		      "t.s:1:1: error: CP.ASYNC.BULK does not take (GPR, memory, GPR, memory); "
		      "accepted forms: ([GPR], [GPR pair], GPR, [GPR]), ([GPR], [GPR pair], Imm32, [GPR])\n");
	/* modifiers: qualifiers in PTX order, each group once */
	expect_errors(_metadata, "MBAR.ARRIVE.CLUSTER.RELAXED _, [R2]",
		      "t.s:1:20: error: modifier '.RELAXED' out of order for MBAR.ARRIVE "
		      "(order: [.RELEASE|.RELAXED] [.CTA|.CLUSTER])\n");
	expect_errors(_metadata, "MBAR.ARRIVE.RELAXED.CTA.CLUSTER _, [R2]",
		      "t.s:1:24: error: unknown modifier '.CLUSTER' for MBAR.ARRIVE\n");
	expect_errors(_metadata, "MBAR.TRY_WAIT.RELEASE P0, [R2], R4",
		      "t.s:1:14: error: unknown modifier '.RELEASE' for MBAR.TRY_WAIT\n");
	expect_errors(_metadata, "MBAR.EXPECT_TX.RELEASE [R2], 0x10",
		      "t.s:1:15: error: unknown modifier '.RELEASE' for MBAR.EXPECT_TX\n");
	expect_errors(_metadata, "MBAR.INIT.CLUSTER [R2], 0x10",
		      "t.s:1:10: error: unknown modifier '.CLUSTER' for MBAR.INIT\n");
}

/* "_" is the sink of a 64-bit state destination and nothing else. */
TEST(error_sink)
{
	expect_errors(_metadata, "MOV _, R1",
		      "t.s:1:5: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a destination register\n");
	expect_errors(_metadata, "MBAR.PENDING_COUNT _, R4",
		      "t.s:1:20: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a destination register\n");
	expect_errors(_metadata, "MBAR.TEST_WAIT P0, [R2], _",
		      "t.s:1:26: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a 64-bit mbarrier state\n");
	expect_errors(_metadata, "MBAR.INIT [_], 1",
		      "t.s:1:12: error: memory base must be a GPR, not '_'\n");
	expect_errors(_metadata, "_: NOP",
		      "t.s:1:1: error: '_' is a sink operand, not a valid label\n");
	expect_errors(_metadata, ".equ _, 1\nNOP",
		      "t.s:1:6: error: '_' is a sink operand, not a valid symbol name\n");
	expect_errors(_metadata, "MOV R1, _",
		      "t.s:1:9: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a register\n");
}

TEST(error_special_registers)
{
	expect_errors(_metadata, "S2R R0, SR_FOO",
		      "t.s:1:9: error: unknown special register 'SR_FOO'\n");
	expect_errors(_metadata, "S2R R0, SR_TID.W",
		      "t.s:1:9: error: unknown special register 'SR_TID.W'\n");
}

TEST(error_negation)
{
	expect_errors(_metadata, "ISETP.LT.S32 !P0, R1, R2",
		      "t.s:1:14: error: negation '!' is only allowed on a source predicate, not on a destination predicate\n");
	expect_errors(_metadata, "MOV R1, !R2",
		      "t.s:1:9: error: negation '!' is only allowed on a source predicate, not on a register\n");
	expect_errors(_metadata, "B2R.RESULT R1, !P2",
		      "t.s:1:16: error: negation '!' is only allowed on a source predicate, not on a destination predicate\n");
}

TEST(error_annotations)
{
	expect_errors(_metadata, "NOP $foo",
		      "t.s:1:5: error: unknown annotation '$foo' (expected $sched, $req or $wsb)\n");
	expect_errors(_metadata, "NOP $sched=16",
		      "t.s:1:12: error: $sched value 16 out of range (0..15)\n");
	expect_errors(_metadata, "NOP $req=64",
		      "t.s:1:10: error: $req value 64 out of range (0..63)\n");
	expect_errors(_metadata, "NOP $wsb=8",
		      "t.s:1:10: error: $wsb value 8 out of range (0..7)\n");
	expect_errors(_metadata, "NOP $wsb $wsb=1",
		      "t.s:1:10: error: duplicate annotation '$wsb'\n");
}

TEST(error_directives)
{
	expect_errors(_metadata, ".foo 1\nNOP", "t.s:1:1: error: unknown directive '.foo'\n");
	expect_errors(_metadata, ".param u128 x\nNOP",
		      "t.s:1:8: error: bad .param type 'u128' (expected u8, u16, u32, s32, f32, u64, s64, ptr, local, data, printf, params or envregs)\n");
	expect_errors(_metadata, ".local 0\nNOP",
		      "t.s:1:8: error: .local size 0 out of range (1..65536)\n");
	expect_errors(_metadata, ".param local l\nNOP",
		      "t.s:1:1: error: kernel 'main' has a '.param local' but no .local size\n");
	expect_errors(_metadata, ".local 16\nNOP",
		      "t.s:1:1: error: kernel 'main' has .local memory but no '.param local NAME' for its address\n");
	expect_errors(_metadata, ".param local l\n.local 16\n.local 32\nNOP",
		      "t.s:3:1: error: a second .local for kernel 'main' (first at line 2)\n");
	expect_errors(_metadata, ".param local l\n.param local m\n.local 16\nNOP",
		      "t.s:1:1: error: kernel 'main' has more than one '.param local' but takes at most one\n");
	expect_errors(_metadata, ".param u32 a\n.param u64 a\nNOP",
		      "t.s:2:12: error: duplicate symbol 'a' (first defined at line 1)\n");
	expect_errors(_metadata, ".kernel a\nNOP\n.kernel a\nNOP",
		      "t.s:3:9: error: duplicate kernel 'a' (first defined at line 1)\n");
	expect_errors(_metadata, ".kernel a\n.kernel b\nNOP",
		      "t.s:1:9: error: kernel 'a' has no instructions\n");
	expect_errors(_metadata, "", "t.s:1:1: error: kernel 'main' has no instructions\n");
	expect_errors(_metadata, ".kernel a_name_that_is_far_too_long_for_it\nNOP",
		      "t.s:1:9: error: kernel name 'a_name_that_is_far_too_long_for_it' is too long (at most 31 characters)\n");
	expect_errors(_metadata, ".shared x, 16, 3\nNOP",
		      "t.s:1:16: error: shared alignment 3 is not a power of two up to 65536\n");
	expect_errors(_metadata, ".shared 0\nNOP",
		      "t.s:1:9: error: shared size 0 out of range (1..4294967295)\n");
	expect_errors(_metadata, ".word 1\n", "t.s:1:8: error: expected ',' before end of line\n");
	expect_errors(_metadata, ".param u64 big\n.equ X, 1\n.equ X, 2\nNOP",
		      "t.s:3:6: error: duplicate symbol 'X' (first defined at line 2)\n");
}

TEST(error_syntax)
{
	expect_errors(_metadata, "MOV R1 R2", "t.s:1:8: error: expected ',' or ';', got 'R2'\n");
	expect_errors(_metadata, "MOV R1, R2 ; NOP",
		      "t.s:1:14: error: unexpected 'NOP' after the statement\n");
	expect_errors(_metadata, "MOV R1, #3", "t.s:1:9: error: unexpected character '#'\n");
	expect_errors(_metadata, "LDS R1, [R2",
		      "t.s:1:12: error: expected '+', '-' or ']' before end of line\n");
	expect_errors(_metadata, "MOV R1,",
		      "t.s:1:8: error: expected an operand before end of line\n");
}

/* Errors on many lines are all reported, in order, and nothing is returned. */
TEST(error_all_collected)
{
	expect_errors(_metadata, "BRA later\n"
		      "BAR.SYNC 0x10\n"
		      "NOP\n"
		      "FOO\n"
		      "BAR.ARV 0x1\n"
		      "S2R R1, SR_X\n",
		      "t.s:1:5: error: unknown label 'later'\n"
		      "t.s:2:10: error: barrier id 16 out of range (0..15)\n"
		      "t.s:4:1: error: unknown mnemonic 'FOO'\n"
		      "t.s:5:1: error: BAR.ARV " ARV0
		      "t.s:6:9: error: unknown special register 'SR_X'\n");
}

TEST(error_buffer_truncates)
{
	struct vgpu_object o;
	char small[20];

	EXPECT_EQ(-EINVAL,
		  vgpu_assemble("FOO", 3, "long-file-name.s", &o, small,
				sizeof(small)));
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	EXPECT_EQ(-EINVAL, vgpu_assemble("FOO", 3, "x.s", &o, NULL, 0));
}


TEST_HARNESS_MAIN
