/* SPDX-License-Identifier: MIT */
/*
 * mbarrier unit, rule by rule against the PTX text (seed 001) and the
 * explanations of seeds 000 and 003: the object's encoding, init / inval,
 * arrive (count, .EXPECT_TX, .NOCOMPLETE), arrive_drop, expect_tx and
 * complete_tx (tx-count going negative), tokens and parity waits,
 * try_wait's suspension and time hint, pending_count, and the sanitizer
 * for every undefined behaviour the text names.
 */
#include <stdio.h>

#include "kernel_util.h"

#define SAN VGPU_LAUNCH_SANITIZE
#define NSEEDS 100

static uint64_t mword(uint32_t pending, uint32_t expected, int32_t tx,
		      uint32_t phase, bool valid)
{
	return (uint64_t)pending << VGPU_MBAR_PENDING_SHIFT |
	       (uint64_t)expected << VGPU_MBAR_EXPECTED_SHIFT |
	       ((uint64_t)(uint32_t)tx & VGPU_MBAR_TX_MASK) << VGPU_MBAR_TX_SHIFT |
	       (uint64_t)(phase & 3) << VGPU_MBAR_PHASE_SHIFT |
	       (uint64_t)valid << VGPU_MBAR_VALID_SHIFT;
}

static uint64_t token(uint32_t pending, uint32_t phase, bool nc)
{
	return VGPU_TOKEN_MARK | (nc ? VGPU_TOKEN_NOCOMPLETE : 0) |
	       (uint64_t)phase << VGPU_TOKEN_PHASE_SHIFT | pending;
}

/* Thread 0 stores the raw mbarrier word (at shared 0) to out + OFF. */
#define DUMP_WORD(off)                                                         \
	"  @P6 LDS.64 R10, [RZ] ;\n"                                           \
	"  @P6 STG.64 [R2+" off "], R10 ;\n"

/* R4 = 0 (the mbarrier), P6 = thread 0 */
#define MB_PROLOGUE                                                            \
	".shared bar, 8\n.shared data, 1024\n" KT_PROLOGUE                     \
	"  MOV R4, 0x0 ;\n"                                                    \
	"  ISETP.EQ.U32 P6, R0, 0x0 ;\n"

static void expect_exc(struct __test_metadata *_metadata, struct kt *k,
		       uint32_t code, const char *msg)
{
	EXPECT_EQ(-1, kt_run(k));
	EXPECT_EQ(code, k->exc.code);
	EXPECT_CONTAINS(k->exc.msg, msg);
}

TEST(init_encoding_arrive_tokens_and_phase_completion)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x40 ;\n"
			      "  BAR.SYNC 0x0 ;\n" DUMP_WORD("0x0")
			      "  BAR.SYNC 0x0 ;\n"
			      "  MBAR.ARRIVE R6, [R4] ;\n"
			      "  BAR.SYNC 0x0 ;\n" DUMP_WORD("0x8")
			      "  MBAR.TEST_WAIT P1, [R4], R6 ;\n"
			      "  MOV R12, 0x1 ;\n"
			      "  SEL R12, R12, RZ, P1 ;\n" KT_STORE("R6", "0x100")
			      KT_STORE("R7", "0x200") KT_STORE("R12", "0x300")
			      "  EXIT ;\n"));
	k.block[0] = 64;
	KT_RUN_OK(&k);
	EXPECT_EQ(mword(64, 64, 0, 0, true), kt_dword(&k, 0));
	/* 64 arrivals: phase 0 complete, pending reloaded, phase 1 */
	EXPECT_EQ(mword(64, 64, 0, 1, true), kt_dword(&k, 2));
	/* round robin: warp 0's arrive saw 64 pending, warp 1's 32 */
	EXPECT_EQ((uint64_t)kt_word(&k, 128) << 32 | kt_word(&k, 64), token(64, 0, false));
	EXPECT_EQ((uint64_t)kt_word(&k, 128 + 32) << 32 | kt_word(&k, 64 + 32),
		  token(32, 0, false));
	for (uint32_t t = 0; t < 64; t++)
		EXPECT_EQ(1u, kt_word(&k, 192 + t)); /* the token's phase completed */
	kt_free(&k);
}

TEST(test_wait_false_in_current_phase_true_in_preceding)
{
	/* warp 0 arrives and tests before warp 1 arrives (warp 1 first waits
	 * on named barrier 1 that warp 0 releases after its test) */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  S2R R5, SR_WARPID ;\n"
			      "  @P6 MBAR.INIT [R4], 0x40 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  ISETP.NE.U32 P2, R5, 0x0 ;\n"
			      "  @P2 BRA w1 ;\n"
			      "  MBAR.ARRIVE R6, [R4] ;\n"
			      "  MBAR.TEST_WAIT P1, [R4], R6 ;\n"     /* current: false */
			      "  MBAR.TEST_WAIT.PARITY P3, [R4], 0x0 ;\n" /* parity 0 = current */
			      "  MBAR.TEST_WAIT.PARITY P4, [R4], 0x1 ;\n" /* parity 1 = preceding */
			      "  BAR.ARV 0x1, 0x40 ;\n"
			      "wait:\n"
			      "  MBAR.TEST_WAIT P5, [R4], R6 ;\n"
			      "  @!P5 BRA wait ;\n"
			      "  MOV R12, 0x1 ;\n"
			      "  SEL R13, R12, RZ, P1 ;\n"
			      "  SEL R14, R12, RZ, P3 ;\n"
			      "  SEL R15, R12, RZ, P4 ;\n"
			      "  SHL R13, R13, 0x1 ;\n"
			      "  LOP.OR R13, R13, R14 ;\n"
			      "  SHL R13, R13, 0x1 ;\n"
			      "  LOP.OR R13, R13, R15 ;\n" KT_STORE("R13", "0x0")
			      "  EXIT ;\n"
			      "w1:\n"
			      "  BAR.SYNC 0x1, 0x40 ;\n"
			      "  MBAR.ARRIVE _, [R4] ;\n"
			      "  MBAR.TEST_WAIT.PARITY P3, [R4], 0x0 ;\n" /* now preceding */
			      "  MOV R12, 0x1 ;\n"
			      "  SEL R13, R12, RZ, P3 ;\n" KT_STORE("R13", "0x0")
			      "  EXIT ;\n"));
	k.block[0] = 64;
	k.flags = SAN;
	for (uint64_t s = 0; s <= NSEEDS; s++) {
		k.flags = SAN | (s ? VGPU_LAUNCH_RANDOM_SCHED : 0);
		k.seed = s;
		KT_RUN_OK(&k);
		/* warp 0: test(token)=0, parity0=0, parity1=1 */
		EXPECT_EQ(0x1u, kt_word(&k, 0));
		EXPECT_EQ(0x1u, kt_word(&k, 32));
	}
	kt_free(&k);
}

TEST(parity_loop_over_many_phases_identical_under_seeds)
{
	/* seed 003's split arrive/wait with parity: 128 threads, 20 phases;
	 * each phase thread t adds its value to a slot, then all read it */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x80 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  MOV R20, 0x0 ;\n"  /* i */
			      "  MOV R21, 0x0 ;\n"  /* parity */
			      "  MOV R22, 0x0 ;\n"  /* sum of what we read */
			      "loop:\n"
			      "  LOP.AND R23, R20, 0x1 ;\n"
			      "  SHL R23, R23, 0x2 ;\n"
			      "  IADD R23, R23, 0x10 ;\n"            /* slot i&1 at 0x10/0x14 */
			      "  IADD R24, R0, R20 ;\n"
			      "  ATOMS.ADD.U32 RZ, [R23], R24 ;\n"
			      "  MBAR.ARRIVE _, [R4] ;\n"
			      "wait:\n"
			      "  MBAR.TRY_WAIT.PARITY P1, [R4], R21 ;\n"
			      "  @!P1 BRA wait ;\n"
			      "  LDS.32 R25, [R23] ;\n"
			      "  IADD R22, R22, R25 ;\n"
			      "  BAR.SYNC 0x0 ;\n"                   /* all read before reset */
			      "  @P6 STS.32 [R23], RZ ;\n"
			      "  LOP.XOR R21, R21, 0x1 ;\n"
			      "  IADD R20, R20, 0x1 ;\n"
			      "  ISETP.LT.U32 P2, R20, 0x14 ;\n"
			      "  @P2 BRA loop ;\n" KT_STORE("R22", "0x0")
			      "  EXIT ;\n"));
	k.block[0] = 128;
	for (uint64_t s = 0; s <= NSEEDS; s++) {
		uint32_t expect = 0;

		for (uint32_t i = 0; i < 20; i++)
			expect += 127 * 128 / 2 + 128 * i;
		k.flags = SAN | (s ? VGPU_LAUNCH_RANDOM_SCHED : 0);
		k.seed = s;
		KT_RUN_OK(&k);
		EXPECT_EQ(expect, kt_word(&k, 0));
		EXPECT_EQ(expect, kt_word(&k, 127));
	}
	kt_free(&k);
}

TEST(arrive_count_and_drop_lower_expected_for_later_phases)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x10 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      /* lanes 0..3 arrive with count 2: 8 of 16 */
			      "  ISETP.LT.U32 P1, R0, 0x4 ;\n"
			      "  @P1 MBAR.ARRIVE _, [R4], 0x2 ;\n"
			      "  BAR.SYNC 0x0 ;\n" DUMP_WORD("0x0")
			      "  BAR.SYNC 0x0 ;\n"
			      /* lanes 4..7 drop: pending 8 -> 4, expected 16 -> 12 */
			      "  ISETP.LT.U32 P2, R0, 0x8 ;\n"
			      "  ISETP.GE.U32.AND P2, R0, 0x4, P2 ;\n"
			      "  @P2 MBAR.ARRIVE_DROP _, [R4] ;\n"
			      "  BAR.SYNC 0x0 ;\n" DUMP_WORD("0x8")
			      "  BAR.SYNC 0x0 ;\n"
			      /* 4 more arrivals complete phase 0; pending := 12 */
			      "  @P1 MBAR.ARRIVE _, [R4] ;\n"
			      "  BAR.SYNC 0x0 ;\n" DUMP_WORD("0x10")
			      "  EXIT ;\n"));
	k.block[0] = 32;
	KT_RUN_OK(&k);
	EXPECT_EQ(mword(8, 16, 0, 0, true), kt_dword(&k, 0));
	EXPECT_EQ(mword(4, 12, 0, 0, true), kt_dword(&k, 2));
	EXPECT_EQ(mword(12, 12, 0, 1, true), kt_dword(&k, 4));
	kt_free(&k);
}

TEST(tx_count_goes_negative_before_expect_tx)
{
	/* seed 000: the copy completes first (tx -100), then
	 * arrive.expect_tx 100 brings it to 0 and the arrive completes */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x1 ;\n"
			      "  @P6 MBAR.COMPLETE_TX [R4], 0x64 ;\n" DUMP_WORD("0x0")
			      "  MOV R5, 0x64 ;\n"
			      "  @P6 MBAR.ARRIVE.EXPECT_TX R6, [R4], R5 ;\n" DUMP_WORD("0x8")
			      "  EXIT ;\n"));
	k.block[0] = 1;
	KT_RUN_OK(&k);
	EXPECT_EQ(mword(1, 1, -100, 0, true), kt_dword(&k, 0));
	EXPECT_EQ(mword(1, 1, 0, 1, true), kt_dword(&k, 2));
	kt_free(&k);
}

TEST(phase_needs_both_pending_and_tx_zero)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x1 ;\n"
			      "  @P6 MBAR.EXPECT_TX [R4], 0x20 ;\n"
			      "  @P6 MBAR.ARRIVE _, [R4] ;\n" DUMP_WORD("0x0")  /* pending 0, tx 32 */
			      "  @P6 MBAR.COMPLETE_TX [R4], 0x10 ;\n" DUMP_WORD("0x8")
			      "  @P6 MBAR.COMPLETE_TX [R4], 0x10 ;\n" DUMP_WORD("0x10")
			      "  EXIT ;\n"));
	k.block[0] = 1;
	KT_RUN_OK(&k);
	EXPECT_EQ(mword(0, 1, 32, 0, true), kt_dword(&k, 0));
	EXPECT_EQ(mword(0, 1, 16, 0, true), kt_dword(&k, 2));
	EXPECT_EQ(mword(1, 1, 0, 1, true), kt_dword(&k, 4));
	kt_free(&k);
}

TEST(nocomplete_and_pending_count)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x5 ;\n"
			      "  @P6 MBAR.ARRIVE.NOCOMPLETE R6, [R4], 0x2 ;\n"
			      "  @P6 MBAR.PENDING_COUNT R8, R6 ;\n"
			      "  @P6 MBAR.ARRIVE.NOCOMPLETE R6, [R4], 0x2 ;\n"
			      "  @P6 MBAR.PENDING_COUNT R9, R6 ;\n"
			      "  @P6 STG.32 [R2], R8 ;\n"
			      "  @P6 STG.32 [R2+0x4], R9 ;\n"
			      "  @P6 STG.64 [R2+0x8], R6 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	k.flags = SAN;
	KT_RUN_OK(&k);
	EXPECT_EQ(5u, kt_word(&k, 0));
	EXPECT_EQ(3u, kt_word(&k, 1));
	EXPECT_EQ(kt_dword(&k, 2), token(3, 0, true));
	kt_free(&k);
}

TEST(try_wait_suspends_until_completion_or_hint)
{
	/* warp 1 arrives only after a long NANOSLEEP.  Warp 0 counts its
	 * TRY_WAIT rounds: with a 100-cycle hint it times out (false) many
	 * times; with no hint (default limit 100000) it wakes on completion,
	 * in one round. */
	static const char *fmt =
		MB_PROLOGUE
		"  S2R R5, SR_WARPID ;\n"
		"  @P6 MBAR.INIT [R4], 0x20 ;\n"
		"  BAR.SYNC 0x0 ;\n"
		"  ISETP.NE.U32 P2, R5, 0x0 ;\n"
		"  @P2 BRA w1 ;\n"
		"  MOV R20, 0x0 ;\n"
		"wait:\n"
		"  IADD R20, R20, 0x1 ;\n"
		"  %s ;\n"
		"  @!P1 BRA wait ;\n" KT_STORE("R20", "0x0")
		"  EXIT ;\n"
		"w1:\n"
		"  NANOSLEEP 0x4e20 ;\n"
		"  MBAR.ARRIVE _, [R4] ;\n"
		"  EXIT ;\n";
	char src[2048];
	struct kt k;

	snprintf(src, sizeof(src), fmt, "MBAR.TRY_WAIT.PARITY P1, [R4], RZ, 0x64");
	ASSERT_EQ(0, kt_load(&k, src));
	k.block[0] = 64;
	k.flags = SAN;
	KT_RUN_OK(&k);
	EXPECT_GT(kt_word(&k, 0), 100u); /* 20000 cycles / 100-cycle hint */
	kt_free(&k);

	snprintf(src, sizeof(src), fmt, "MBAR.TRY_WAIT.PARITY P1, [R4], RZ");
	ASSERT_EQ(0, kt_load(&k, src));
	k.block[0] = 64;
	k.flags = SAN;
	KT_RUN_OK(&k);
	EXPECT_EQ(1u, kt_word(&k, 0));
	kt_free(&k);
}

TEST(inval_then_reuse_memory_and_reinit)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x1 ;\n"
			      "  @P6 MBAR.ARRIVE _, [R4] ;\n"
			      "  @P6 MBAR.INVAL [R4] ;\n"
			      "  MOV R10, 0x1234 ;\n"
			      "  @P6 STS.32 [R4], R10 ;\n"   /* ordinary use again */
			      "  @P6 LDS.32 R11, [R4] ;\n"
			      "  @P6 STS.64 [R4], RZ ;\n"
			      "  @P6 MBAR.INIT [R4], 0x2 ;\n" /* a new object */
			      "  @P6 MBAR.ARRIVE R6, [R4], 0x2 ;\n"
			      "  @P6 MBAR.TEST_WAIT P1, [R4], R6 ;\n"
			      "  MOV R12, 0x1 ;\n"
			      "  SEL R12, R12, RZ, P1 ;\n"
			      "  @P6 STG.32 [R2], R11 ;\n"
			      "  @P6 STG.32 [R2+0x4], R12 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	k.flags = SAN;
	KT_RUN_OK(&k);
	EXPECT_EQ(0x1234u, kt_word(&k, 0));
	EXPECT_EQ(1u, kt_word(&k, 1));
	kt_free(&k);
}

TEST(without_sanitizer_behaviour_follows_the_encoding)
{
	/* an old token (two phases back) compares by phase parity, as on the
	 * hardware: incomplete (false); a
	 * .NOCOMPLETE arrive that reaches zero completes; an arrive larger
	 * than pending leaves 0; ordinary loads see the word */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x1 ;\n"
			      "  @P6 MBAR.ARRIVE R6, [R4] ;\n"          /* token of phase 0 */
			      "  @P6 MBAR.ARRIVE _, [R4] ;\n"           /* phase 2 now */
			      "  @P6 MBAR.TEST_WAIT P1, [R4], R6 ;\n"
			      "  @P6 MBAR.ARRIVE.NOCOMPLETE _, [R4], 0x1 ;\n" /* completes */
			      "  @P6 MBAR.ARRIVE _, [R4], 0x5 ;\n"      /* 5 > 1 pending */
			      DUMP_WORD("0x0")
			      "  MOV R12, 0x1 ;\n"
			      "  SEL R12, R12, RZ, P1 ;\n"
			      "  @P6 STG.32 [R2+0x8], R12 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	KT_RUN_OK(&k);
	EXPECT_EQ(mword(1, 1, 0, 4, true), kt_dword(&k, 0));
	EXPECT_EQ(0u, kt_word(&k, 2));
	kt_free(&k);
}

/*
 * ---- sanitizer: every undefined behaviour of the text ----
 *
 * Each variant's code after MB_PROLOGUE, under the sanitizer, raises
 * @code with @msg in the message at address @addr; the same program runs
 * to the end without the sanitizer, except where the hardware cannot go
 * on at all (misaligned and out-of-range shared accesses).
 */

FIXTURE(sanitizer) {
	char src[2048];
	struct kt k;
};

FIXTURE_VARIANT(sanitizer) {
	const char *body;
	uint32_t code;
	uint64_t addr;
	const char *msg;
};

FIXTURE_VARIANT_ADD(sanitizer, uninitialised_arrive) {
	.body = "  @P6 MBAR.ARRIVE _, [R4] ;\n",
	.code = VGPU_EXC_MBAR_UNINIT, .addr = 0,
	.msg = "MBAR.ARRIVE on an uninitialised",
};

FIXTURE_VARIANT_ADD(sanitizer, uninitialised_after_inval) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  @P6 MBAR.INVAL [R4] ;\n"
		"  @P6 MBAR.EXPECT_TX [R4], 0x10 ;\n",
	.code = VGPU_EXC_MBAR_UNINIT, .addr = 0,
	.msg = "MBAR.EXPECT_TX on an uninitialised",
};

FIXTURE_VARIANT_ADD(sanitizer, uninitialised_test_wait) {
	.body = "  MOV R5, 0x8 ;\n  MBAR.TEST_WAIT.PARITY P1, [R5], 0x0 ;\n",
	.code = VGPU_EXC_MBAR_UNINIT, .addr = 8,
	.msg = "MBAR.TEST_WAIT",
};

FIXTURE_VARIANT_ADD(sanitizer, ordinary_load_of_live_mbarrier) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  LDS.32 R5, [RZ+0x4] ;\n",
	.code = VGPU_EXC_MBAR_ACCESS, .addr = 4,
	.msg = "touches the live mbarrier at 0x0",
};

FIXTURE_VARIANT_ADD(sanitizer, ordinary_store_over_live_mbarrier) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  @P6 STS.64 [R4], RZ ;\n",
	.code = VGPU_EXC_MBAR_ACCESS, .addr = 0,
	.msg = "8-byte access at shared 0x0",
};

FIXTURE_VARIANT_ADD(sanitizer, atomic_on_live_mbarrier) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  ATOMS.ADD.U32 RZ, [R4], R0 ;\n",
	.code = VGPU_EXC_MBAR_ACCESS, .addr = 0,
	.msg = "live mbarrier",
};

FIXTURE_VARIANT_ADD(sanitizer, init_of_live) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  @P6 MBAR.INIT [R4], 0x2 ;\n",
	.code = VGPU_EXC_MBAR_REINIT, .addr = 0,
	.msg = "MBAR.INIT of a live mbarrier",
};

FIXTURE_VARIANT_ADD(sanitizer, init_misaligned) {
	.body = "  MOV R5, 0x4 ;\n  @P6 MBAR.INIT [R5], 0x1 ;\n",
	.code = VGPU_EXC_MISALIGNED, .addr = 4,
	.msg = "not 8-byte aligned",
};

FIXTURE_VARIANT_ADD(sanitizer, init_count_0) {
	.body = "  @P6 MBAR.INIT [R4], RZ ;\n",
	.code = VGPU_EXC_MBAR_RANGE, .addr = 0,
	.msg = "count 0 is outside 1..1048575",
};

FIXTURE_VARIANT_ADD(sanitizer, init_count_beyond_range) {
	.body = "  MOV R5, 0x100000 ;\n  @P6 MBAR.INIT [R4], R5 ;\n",
	.code = VGPU_EXC_MBAR_RANGE, .addr = 0,
	.msg = "count 1048576",
};

FIXTURE_VARIANT_ADD(sanitizer, arrive_count_0) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  @P6 MBAR.ARRIVE _, [R4], RZ ;\n",
	.code = VGPU_EXC_MBAR_RANGE, .addr = 0,
	.msg = "arrive count 0",
};

FIXTURE_VARIANT_ADD(sanitizer, expect_tx_beyond_range) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  MOV R5, 0xfffff ;\n"
		"  @P6 MBAR.EXPECT_TX [R4], R5 ;\n  @P6 MBAR.EXPECT_TX [R4], 0x1 ;\n",
	.code = VGPU_EXC_MBAR_RANGE, .addr = 0,
	.msg = "tx-count 1048575 + 1",
};

FIXTURE_VARIANT_ADD(sanitizer, complete_tx_beyond_range) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  MOV R5, 0xfffff ;\n"
		"  @P6 MBAR.COMPLETE_TX [R4], R5 ;\n  @P6 MBAR.COMPLETE_TX [R4], 0x1 ;\n",
	.code = VGPU_EXC_MBAR_RANGE, .addr = 0,
	.msg = "tx-count -1048575 - 1",
};

FIXTURE_VARIANT_ADD(sanitizer, arrivals_beyond_pending) {
	.body = "  @P6 MBAR.INIT [R4], 0x2 ;\n  MBAR.ARRIVE _, [R4] ;\n",
	.code = VGPU_EXC_MBAR_RANGE, .addr = 0,
	.msg = "32 arrivals exceed the 2 pending",
};

FIXTURE_VARIANT_ADD(sanitizer, pending_overflow_from_cp_async_arrive) {
	.body = "  MOV R5, 0xfffff ;\n  @P6 MBAR.INIT [R4], R5 ;\n"
		"  BAR.SYNC 0x0 ;\n  CP.ASYNC.MBARRIER.ARRIVE [R4] ;\n",
	.code = VGPU_EXC_MBAR_OVERFLOW, .addr = 0,
	.msg = "pending 1048575 + 32",
};

FIXTURE_VARIANT_ADD(sanitizer, arrive_before_the_previous_phase_was_waited_on) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  @P6 MBAR.ARRIVE _, [R4] ;\n"
		"  @P6 MBAR.ARRIVE _, [R4] ;\n",
	.code = VGPU_EXC_MBAR_PHASE_ORDER, .addr = 0,
	.msg = "arrive in phase 1 before any wait on phase 0 returned true",
};

FIXTURE_VARIANT_ADD(sanitizer, nocomplete_that_would_complete) {
	.body = "  @P6 MBAR.INIT [R4], 0x2 ;\n"
		"  @P6 MBAR.ARRIVE.NOCOMPLETE _, [R4], 0x2 ;\n",
	.code = VGPU_EXC_MBAR_NOCOMPLETE, .addr = 0,
	.msg = ".NOCOMPLETE arrive of 2 would complete phase 0",
};

FIXTURE_VARIANT_ADD(sanitizer, token_of_an_old_phase) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  @P6 MBAR.ARRIVE R6, [R4] ;\n"
		"  @P6 MBAR.TEST_WAIT.PARITY P1, [R4], 0x0 ;\n"
		"  @P6 MBAR.ARRIVE _, [R4] ;\n"
		"  @P6 MBAR.TEST_WAIT P1, [R4], R6 ;\n",
	.code = VGPU_EXC_MBAR_BAD_TOKEN, .addr = 0,
	.msg = "names phase 0, not the current 2",
};

FIXTURE_VARIANT_ADD(sanitizer, token_not_from_this_mbarrier) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  MOV R6, 0x1 ;\n  MOV R7, RZ ;\n"
		"  @P6 MBAR.TEST_WAIT P1, [R4], R6 ;\n",
	.code = VGPU_EXC_MBAR_BAD_TOKEN, .addr = 0,
	.msg = "token 0x0000000000000001",
};

FIXTURE_VARIANT_ADD(sanitizer, parity_outside_the_two_phases) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n  MOV R6, 0x2 ;\n"
		"  @P6 MBAR.TRY_WAIT.PARITY P1, [R4], R6 ;\n",
	.code = VGPU_EXC_MBAR_BAD_TOKEN, .addr = 0,
	.msg = "parity 2 is not 0 or 1",
};

FIXTURE_VARIANT_ADD(sanitizer, pending_count_of_a_completing_token) {
	.body = "  @P6 MBAR.INIT [R4], 0x2 ;\n  @P6 MBAR.ARRIVE R6, [R4] ;\n"
		"  @P6 MBAR.PENDING_COUNT R8, R6 ;\n",
	.code = VGPU_EXC_MBAR_BAD_TOKEN, .addr = 0,
	.msg = "not a .NOCOMPLETE token",
};

/* a bulk copy whose destination runs past the CTA's 1040 bytes */
FIXTURE_VARIANT_ADD(sanitizer, copy_outside_shared_window) {
	.body = "  @P6 MBAR.INIT [R4], 0x1 ;\n"
		"  MOV R6, 0x400 ;\n  MOV R8, R2 ;\n  MOV R9, R3 ;\n  MOV R10, 0x20 ;\n"
		"  @P6 CP.ASYNC.BULK [R6], [R8], R10, [R4] ;\n",
	.code = VGPU_EXC_SMEM_RANGE, .addr = 0x400,
	.msg = "outside its 0x410 bytes",
};

FIXTURE_SETUP(sanitizer)
{
	snprintf(self->src, sizeof(self->src), "%s%s  EXIT ;\n", MB_PROLOGUE,
		 variant->body);
	ASSERT_EQ(0, kt_load(&self->k, self->src))
		TH_LOG("assembly of: %s", variant->body);
}

FIXTURE_TEARDOWN(sanitizer)
{
	kt_free(&self->k);
}

TEST_F(sanitizer, detected)
{
	struct kt *k = &self->k;

	k->block[0] = 32;
	k->flags = SAN;
	expect_exc(_metadata, k, variant->code, variant->msg);
	EXPECT_EQ(variant->addr, k->exc.addr);
	if (variant->code == VGPU_EXC_MISALIGNED ||
	    variant->code == VGPU_EXC_SMEM_RANGE)
		return;
	kt_free(k);
	ASSERT_EQ(0, kt_load(k, self->src));
	k->block[0] = 32;
	EXPECT_FALSE(kt_run(k) && k->exc.code != VGPU_EXC_DEADLOCK)
		TH_LOG("without sanitizer: %s: %s", vgpu_exc_name(k->exc.code),
		       k->exc.msg);
}

/* arrive in phase 1 with the wait on phase 0 in between: fine */
TEST(sanitizer_arrive_after_the_previous_phase_was_waited_on)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x1 ;\n"
			      "  @P6 MBAR.ARRIVE _, [R4] ;\n"
			      "  @P6 MBAR.TEST_WAIT.PARITY P1, [R4], 0x0 ;\n"
			      "  @P6 MBAR.ARRIVE _, [R4] ;\n"
			      "  EXIT ;\n"));
	k.flags = SAN;
	KT_RUN_OK(&k);
	kt_free(&k);
}

TEST(deadlock_on_mbarrier_only_when_nothing_can_complete_it)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x40 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  MBAR.ARRIVE _, [R4] ;\n"   /* 32 of 64: never done */
			      "wait:\n"
			      "  MBAR.TRY_WAIT.PARITY P1, [R4], RZ ;\n"
			      "  @!P1 BRA wait ;\n"
			      "  EXIT ;\n"));
	k.flags = SAN;
	expect_exc(_metadata, &k, VGPU_EXC_DEADLOCK,
		   "warp 0 waits on mbarrier 0x0 (phase 0, pending 32 of 64, tx 0)");
	EXPECT_EQ(VGPU_WAIT_MBAR, k.exc.warp_wait[0]);
	EXPECT_EQ(0u, k.exc.addr);
	EXPECT_EQ(k.exc.info[0], (uint32_t)mword(32, 64, 0, 0, true));
	EXPECT_EQ(k.exc.info[1], (uint32_t)(mword(32, 64, 0, 0, true) >> 32));
	kt_free(&k);

	/* a bulk copy in flight completes the phase: no deadlock, even with
	 * a long copy-engine latency */
	{
		struct vgpu_sm_config cfg = { .tma_latency = 50000 };

		ASSERT_EQ(0,
			  kt_load(&k, MB_PROLOGUE
				      "  @P6 MBAR.INIT [R4], 0x1 ;\n"
				      "  MOV R6, 0x10 ;\n  MOV R8, R2 ;\n  MOV R9, R3 ;\n"
				      "  MOV R10, 0x40 ;\n"
				      "  @P6 CP.ASYNC.BULK [R6], [R8], R10, [R4] ;\n"
				      "  @P6 MBAR.ARRIVE.EXPECT_TX _, [R4], R10 ;\n"
				      "wait:\n"
				      "  MBAR.TRY_WAIT.PARITY P1, [R4], RZ ;\n"
				      "  @!P1 BRA wait ;\n"
				      "  EXIT ;\n"));
		kt_config(&k, &cfg);
		k.flags = SAN;
		KT_RUN_OK(&k);
		kt_free(&k);
	}
}

/*
 * ---- try_wait's time limit: legal programs that only go on because a
 * try_wait says false ----
 *
 * Each variant runs 64 threads (2 warps) under the default schedule and
 * 100 random ones, with and without the sanitizer; out[tid] and
 * out[64 + tid] must hold @first(tid) and @second(tid).
 */
FIXTURE(try_wait_limit) {
	struct kt k;
};

FIXTURE_VARIANT(try_wait_limit) {
	const char *body;
	uint32_t first[2], second[2]; /* per warp */
};

#define TW_RESULT(pred, byteoff)                                               \
	"  MOV R12, 0x1 ;\n"                                                   \
	"  SEL R12, R12, RZ, " pred " ;\n" KT_STORE("R12", byteoff)

/* (a) one try_wait with a hint on a phase that never completes (65
 * expected, 64 arrive), then other work */
FIXTURE_VARIANT_ADD(try_wait_limit, hint_then_other_work) {
	.body = "  @P6 MBAR.INIT [R4], 0x41 ;\n"
		"  BAR.SYNC 0x0 ;\n"
		"  MBAR.ARRIVE _, [R4] ;\n"
		"  MBAR.TRY_WAIT.PARITY P1, [R4], RZ, 0x3e8 ;\n" TW_RESULT("P1", "0x0")
		"  SHR.U32 R13, R0, 0x5 ;\n"
		"  IADD R13, R13, 0x7 ;\n" KT_STORE("R13", "0x100"),
	.first = { 0, 0 }, .second = { 7, 8 },
};

/* the same with the device's default limit (100000 cycles): nothing else
 * can complete the phase, so it says false at once */
FIXTURE_VARIANT_ADD(try_wait_limit, default_limit_then_other_work) {
	.body = "  @P6 MBAR.INIT [R4], 0x41 ;\n"
		"  BAR.SYNC 0x0 ;\n"
		"  MBAR.ARRIVE R6, [R4] ;\n"
		"  MBAR.TRY_WAIT P1, [R4], R6 ;\n" TW_RESULT("P1", "0x0")
		"  S2R R13, SR_WARPID ;\n"
		"  IADD R13, R13, 0x2 ;\n" KT_STORE("R13", "0x100"),
	.first = { 0, 0 }, .second = { 2, 3 },
};

/* (b) CUTLASS's pattern: a speculative try_wait before the thread's own
 * arrive (false), then the arrive and a retry loop */
FIXTURE_VARIANT_ADD(try_wait_limit, speculative_before_own_arrive) {
	.body = "  @P6 MBAR.INIT [R4], 0x40 ;\n"
		"  BAR.SYNC 0x0 ;\n"
		"  MBAR.TRY_WAIT.PARITY P1, [R4], RZ ;\n" TW_RESULT("P1", "0x0")
		"  MBAR.ARRIVE _, [R4] ;\n"
		"retry:\n"
		"  MBAR.TRY_WAIT.PARITY P2, [R4], RZ ;\n"
		"  @!P2 BRA retry ;\n" TW_RESULT("P2", "0x100"),
	.first = { 0, 0 }, .second = { 1, 1 },
};

/* a test_wait spin loop that a sleeping warp ends: time passes, no
 * deadlock */
FIXTURE_VARIANT_ADD(try_wait_limit, spin_until_a_sleeper_arrives) {
	.body = "  @P6 MBAR.INIT [R4], 0x20 ;\n"
		"  BAR.SYNC 0x0 ;\n"
		"  S2R R5, SR_WARPID ;\n"
		"  ISETP.NE.U32 P2, R5, 0x0 ;\n"
		"  @P2 BRA w1 ;\n"
		"spin:\n"
		"  MBAR.TEST_WAIT.PARITY P1, [R4], RZ ;\n"
		"  @!P1 BRA spin ;\n"
		"  BRA done ;\n"
		"w1:\n"
		"  NANOSLEEP 0x2710 ;\n"
		"  MBAR.ARRIVE _, [R4] ;\n"
		"  MOV R12, 0x2 ;\n" KT_STORE("R12", "0x0") KT_STORE("RZ", "0x100")
		"  EXIT ;\n"
		"done:\n" TW_RESULT("P1", "0x0") KT_STORE("RZ", "0x100"),
	.first = { 1, 2 }, .second = { 0, 0 },
};

/* try_wait with a short hint in a loop while the other warp computes (no
 * store for a while) and then arrives */
FIXTURE_VARIANT_ADD(try_wait_limit, short_hint_loop_while_other_warp_computes) {
	.body = "  @P6 MBAR.INIT [R4], 0x20 ;\n"
		"  BAR.SYNC 0x0 ;\n"
		"  S2R R5, SR_WARPID ;\n"
		"  ISETP.NE.U32 P2, R5, 0x0 ;\n"
		"  @P2 BRA w1 ;\n"
		"  MOV R20, 0x0 ;\n"
		"poll:\n"
		"  IADD R20, R20, 0x1 ;\n"
		"  MBAR.TRY_WAIT.PARITY P1, [R4], RZ, 0x10 ;\n"
		"  @!P1 BRA poll ;\n"
		"  ISETP.GT.U32 P3, R20, 0x1 ;\n" TW_RESULT("P3", "0x0")
		KT_STORE("RZ", "0x100")
		"  EXIT ;\n"
		"w1:\n"
		"  MOV R21, 0x800 ;\n"
		"work:\n"
		"  IADD R21, R21, -0x1 ;\n"
		"  ISETP.NE.U32 P4, R21, 0x0 ;\n"
		"  @P4 BRA work ;\n"
		"  MBAR.ARRIVE _, [R4] ;\n"
		"  MOV R12, 0x2 ;\n" KT_STORE("R12", "0x0") KT_STORE("RZ", "0x100"),
	.first = { 1, 2 }, .second = { 0, 0 },
};

FIXTURE_SETUP(try_wait_limit)
{
	char src[4096];

	snprintf(src, sizeof(src), "%s%s  EXIT ;\n", MB_PROLOGUE, variant->body);
	ASSERT_EQ(0, kt_load(&self->k, src)) TH_LOG("%s", self->k.err);
}

FIXTURE_TEARDOWN(try_wait_limit)
{
	kt_free(&self->k);
}

TEST_F(try_wait_limit, completes_under_every_schedule)
{
	struct kt *k = &self->k;

	for (uint32_t s = 0; s <= 100; s++) {
		for (int san = 0; san < 2; san++) {
			memset(k->mem.buf, 0xee, 4 * 128);
			k->block[0] = 64;
			k->seed = s + 1;
			k->flags = (san ? SAN : 0) |
				   (s ? VGPU_LAUNCH_RANDOM_SCHED : 0);
			ASSERT_EQ(0, kt_run(k))
				TH_LOG("seed %u%s: %s: %s", s, san ? " (sanitizer)" : "",
				       vgpu_exc_name(k->exc.code), k->exc.msg);
			for (uint32_t t = 0; t < 64; t++) {
				ASSERT_EQ(variant->first[t / 32], kt_word(k, t))
					TH_LOG("seed %u thread %u", s, t);
				ASSERT_EQ(variant->second[t / 32], kt_word(k, 64 + t))
					TH_LOG("seed %u thread %u", s, t);
			}
		}
	}
}

/*
 * A lost arrive under a spin loop is still a deadlock, under every
 * schedule: with TEST_WAIT (the warps never block: they spin), with
 * TRY_WAIT (each try times out at once and is tried again), and with one
 * warp spinning while the other waits on a named barrier.
 */
FIXTURE(lost_arrive) {
	struct kt k;
};

FIXTURE_VARIANT(lost_arrive) {
	const char *wait;
	const char *msg;
	bool both_spin; /* else warp 1 waits on named barrier 1 */
};

FIXTURE_VARIANT_ADD(lost_arrive, test_wait_spin) {
	.wait = "MBAR.TEST_WAIT.PARITY P1, [R4], RZ",
	.msg = "warp 0 spins on mbarrier 0x0 (phase 0, pending 32 of 96, tx 0)",
	.both_spin = true,
};

FIXTURE_VARIANT_ADD(lost_arrive, try_wait_spin) {
	.wait = "MBAR.TRY_WAIT.PARITY P1, [R4], RZ",
	.msg = "mbarrier 0x0 (phase 0, pending 32 of 96, tx 0)",
	.both_spin = true,
};

FIXTURE_VARIANT_ADD(lost_arrive, try_wait_hint_spin) {
	.wait = "MBAR.TRY_WAIT.PARITY P1, [R4], RZ, 0x20",
	.msg = "mbarrier 0x0 (phase 0, pending 32 of 96, tx 0)",
	.both_spin = true,
};

FIXTURE_VARIANT_ADD(lost_arrive, spin_beside_named_barrier) {
	.wait = "MBAR.TEST_WAIT.PARITY P1, [R4], RZ",
	.msg = "warp 0 spins on mbarrier 0x0 (phase 0, pending 64 of 96, tx 0); warp 1 waits on barrier 1",
	.both_spin = false,
};

FIXTURE_SETUP(lost_arrive)
{
	char src[2048];

	snprintf(src, sizeof(src),
		 MB_PROLOGUE
		 "  @P6 MBAR.INIT [R4], 0x60 ;\n"
		 "  BAR.SYNC 0x0 ;\n"
		 "  S2R R5, SR_WARPID ;\n"
		 "  ISETP.NE.U32 P2, R5, 0x0 ;\n"
		 "  %s"
		 "  MBAR.ARRIVE _, [R4] ;\n" /* 64 or 32 of 96: never done */
		 "spin:\n"
		 "  %s ;\n"
		 "  @!P1 BRA spin ;\n"
		 "  EXIT ;\n",
		 variant->both_spin ? "" : "@P2 BAR.SYNC 0x1, 0x40 ;\n  @P2 EXIT ;\n",
		 variant->wait);
	ASSERT_EQ(0, kt_load(&self->k, src)) TH_LOG("%s", self->k.err);
}

FIXTURE_TEARDOWN(lost_arrive)
{
	kt_free(&self->k);
}

TEST_F(lost_arrive, is_a_deadlock_under_every_schedule)
{
	struct kt *k = &self->k;

	for (uint32_t s = 0; s <= 100; s++) {
		for (int san = 0; san < 2; san++) {
			k->block[0] = 64;
			k->seed = s + 1;
			k->flags = (san ? SAN : 0) |
				   (s ? VGPU_LAUNCH_RANDOM_SCHED : 0);
			ASSERT_EQ(-1, kt_run(k)) TH_LOG("seed %u", s);
			ASSERT_EQ((uint32_t)VGPU_EXC_DEADLOCK, k->exc.code)
				TH_LOG("seed %u: %s: %s", s,
				       vgpu_exc_name(k->exc.code), k->exc.msg);
			EXPECT_CONTAINS(k->exc.msg, variant->msg);
			EXPECT_EQ(VGPU_WAIT_MBAR, k->exc.warp_wait[0]);
			EXPECT_EQ(variant->both_spin ? VGPU_WAIT_MBAR : 1,
				  k->exc.warp_wait[1]);
			EXPECT_EQ(0u, k->exc.addr);
			EXPECT_EQ(k->exc.info[0],
				  (uint32_t)mword(variant->both_spin ? 32 : 64, 96, 0, 0, true));
		}
	}
}

TEST(sem_and_scope_qualifiers_are_accepted)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, MB_PROLOGUE
			      "  @P6 MBAR.INIT [R4], 0x20 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  MBAR.ARRIVE.RELAXED.CLUSTER R6, [R4] ;\n"
			      "wait:\n"
			      "  MBAR.TRY_WAIT.ACQUIRE.CTA P1, [R4], R6 ;\n"
			      "  @!P1 BRA wait ;\n"
			      "  MBAR.TEST_WAIT.RELAXED.CLUSTER P2, [R4], R6 ;\n"
			      "  MOV R12, 0x1 ;\n"
			      "  SEL R12, R12, RZ, P2 ;\n" KT_STORE("R12", "0x0")
			      "  EXIT ;\n"));
	k.flags = SAN;
	KT_RUN_OK(&k);
	EXPECT_EQ(1u, kt_word(&k, 31));
	kt_free(&k);
}

TEST_HARNESS_MAIN
