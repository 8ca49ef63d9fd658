/* SPDX-License-Identifier: MIT */
/*
 * Execution core: ALU, predicates, special registers, SIMT divergence and
 * reconvergence, memory spaces, atomics, vote/shuffle, sleep and the
 * exceptions other than the barrier ones (test_bar.c).
 */
#include <math.h>
#include <stdio.h>

#include "core_priv.h"
#include "kernel_util.h"

static float wf(const struct kt *k, uint32_t i)
{
	uint32_t v = kt_word(k, i);
	float f;

	memcpy(&f, &v, 4);
	return f;
}

static uint32_t fbits(float f)
{
	uint32_t v;

	memcpy(&v, &f, 4);
	return v;
}

/* an f32 result as the core computes it: every NaN is the GPU's 0x7fffffff */
static uint32_t gbits(float f)
{
	return isnan(f) ? 0x7fffffffu : fbits(f);
}

TEST(every_table_row_has_behaviour)
{
	for (unsigned i = 0; i < VGPU_I__COUNT; i++) {
		EXPECT_TRUE(vgpu_exec_table[i].fn != NULL)
			TH_LOG("%s (row %u) has no exec function",
			       vgpu_isa_table[i].mnemonic, i);
	}
}

TEST(integer_alu)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  IMUL R4, R0, 0x9e3779b9 ;\n"   /* a */
			      "  MOV R5, 0x7 ;\n"
			      "  ISUB R5, R5, R0 ;\n"           /* b = 7 - tid */
			      "  IADD R10, R4, R5 ;\n" KT_STORE("R10", "0x0")
			      "  ISUB R10, R4, R5 ;\n" KT_STORE("R10", "0x100")
			      "  IMUL R10, R4, R5 ;\n" KT_STORE("R10", "0x200")
			      "  IMUL.HI.U32 R10, R4, R5 ;\n" KT_STORE("R10", "0x300")
			      "  IMUL.HI.S32 R10, R4, R5 ;\n" KT_STORE("R10", "0x400")
			      "  IMAD R10, R4, R5, R0 ;\n" KT_STORE("R10", "0x500")
			      "  IMNMX.MIN.S32 R10, R4, R5 ;\n" KT_STORE("R10", "0x600")
			      "  IMNMX.MAX.U32 R10, R4, R5 ;\n" KT_STORE("R10", "0x700")
			      "  LOP.AND R10, R4, R5 ;\n" KT_STORE("R10", "0x800")
			      "  LOP.OR R10, R4, 0xf0f0 ;\n" KT_STORE("R10", "0x900")
			      "  LOP.XOR R10, R4, R5 ;\n" KT_STORE("R10", "0xa00")
			      "  SHL R10, R4, R0 ;\n" KT_STORE("R10", "0xb00")
			      "  SHR.U32 R10, R4, R0 ;\n" KT_STORE("R10", "0xc00")
			      "  SHR.S32 R10, R4, R0 ;\n" KT_STORE("R10", "0xd00")
			      "  ISETP.LT.S32 P1, R4, R5 ;\n"
			      "  SEL R10, R4, R5, P1 ;\n" KT_STORE("R10", "0xe00")
			      "  ISETP.GT.U32.OR P2, R0, 0x1d, !P1 ;\n"
			      "  SEL R10, R4, 0x55, P2 ;\n" KT_STORE("R10", "0xf00")
			      "  ISETP.EQ.U32.XOR P3, R0, 0x3, P1 ;\n"
			      "  SEL R10, R4, RZ, !P3 ;\n" KT_STORE("R10", "0x1000")
			      "  EXIT ;\n"));
	k.block[0] = 32;
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		uint32_t a = t * 0x9e3779b9u, b = 7 - t;
		bool p1 = (int32_t)a < (int32_t)b, p2 = t > 0x1d || !p1;
		bool p3 = (t == 3) != p1;
		uint32_t sh = t > 31 ? 0 : t;

		EXPECT_EQ(a + b, kt_word(&k, t));
		EXPECT_EQ(a - b, kt_word(&k, 64 + t));
		EXPECT_EQ(a * b, kt_word(&k, 128 + t));
		EXPECT_EQ((uint32_t)(((uint64_t)a * b) >> 32), kt_word(&k, 192 + t));
		EXPECT_EQ((uint32_t)((uint64_t)((int64_t)(int32_t)a * (int32_t)b) >> 32),
			  kt_word(&k, 256 + t));
		EXPECT_EQ(a * b + t, kt_word(&k, 320 + t));
		EXPECT_EQ((int32_t)a < (int32_t)b ? a : b, kt_word(&k, 384 + t));
		EXPECT_EQ(a > b ? a : b, kt_word(&k, 448 + t));
		EXPECT_EQ(a & b, kt_word(&k, 512 + t));
		EXPECT_EQ(a | 0xf0f0, kt_word(&k, 576 + t));
		EXPECT_EQ(a ^ b, kt_word(&k, 640 + t));
		EXPECT_EQ(a << sh, kt_word(&k, 704 + t));
		EXPECT_EQ(a >> sh, kt_word(&k, 768 + t));
		EXPECT_EQ((uint32_t)((int32_t)a >> sh), kt_word(&k, 832 + t));
		EXPECT_EQ(p1 ? a : b, kt_word(&k, 896 + t));
		EXPECT_EQ(p2 ? a : 0x55, kt_word(&k, 960 + t));
		EXPECT_EQ(!p3 ? a : 0, kt_word(&k, 1024 + t));
	}
	kt_free(&k);
}

TEST(shifts_of_32_or_more)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  MOV R4, 0x80000001 ;\n"
			      "  SHL R10, R4, 0x20 ;\n" KT_STORE("R10", "0x0")
			      "  SHR.U32 R10, R4, 0x40 ;\n" KT_STORE("R10", "0x100")
			      "  SHR.S32 R10, R4, 0x21 ;\n" KT_STORE("R10", "0x200")
			      "  EXIT ;\n"));
	k.block[0] = 1;
	KT_RUN_OK(&k);
	EXPECT_EQ(0u, kt_word(&k, 0));
	EXPECT_EQ(0u, kt_word(&k, 64));
	EXPECT_EQ(0xffffffffu, kt_word(&k, 128));
	kt_free(&k);
}

TEST(float_alu_and_conversions)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  ISUB R4, R0, 0x10 ;\n"
			      "  I2F.S32 R4, R4 ;\n"             /* x = tid - 16 */
			      "  FMUL R5, R4, 0.25 ;\n"          /* y = x / 4 */
			      "  FADD R10, R4, R5 ;\n" KT_STORE("R10", "0x0")
			      "  FFMA R10, R4, R5, R4 ;\n" KT_STORE("R10", "0x100")
			      "  FMNMX.MIN R10, R4, R5 ;\n" KT_STORE("R10", "0x200")
			      "  FSETP.GT P1, R4, R5 ;\n"
			      "  SEL R10, R4, R5, P1 ;\n" KT_STORE("R10", "0x300")
			      "  FMUL R6, R4, 1e9 ;\n"
			      "  F2I.S32 R10, R6 ;\n" KT_STORE("R10", "0x400")
			      "  F2I.U32 R10, R5 ;\n" KT_STORE("R10", "0x500")
			      "  I2F.U32 R10, R0 ;\n" KT_STORE("R10", "0x600")
			      "  MOV R7, 0x7fc00000 ;\n"         /* NaN */
			      "  F2I.S32 R10, R7 ;\n" KT_STORE("R10", "0x700")
			      "  FSETP.NE P2, R7, R7 ;\n"
			      "  FSETP.EQ.OR P3, R7, R7, P2 ;\n"
			      "  SEL R10, R0, RZ, P3 ;\n" KT_STORE("R10", "0x800")
			      "  EXIT ;\n"));
	k.block[0] = 32;
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		float x = (float)((int)t - 16), y = x * 0.25f;
		double big = (double)(x * 1e9f);
		int32_t sat = big >= 2147483647.0 ? INT32_MAX :
			      big <= -2147483648.0 ? INT32_MIN : (int32_t)big;

		EXPECT_EQ(x + y, wf(&k, t));
		EXPECT_EQ(fmaf(x, y, x), wf(&k, 64 + t));
		EXPECT_EQ(fminf(x, y), wf(&k, 128 + t));
		EXPECT_EQ((x > y ? x : y), wf(&k, 192 + t));
		EXPECT_EQ(sat, (int32_t)kt_word(&k, 256 + t));
		EXPECT_EQ(y <= 0 ? 0 : (uint32_t)y, kt_word(&k, 320 + t));
		EXPECT_EQ(fbits((float)t), kt_word(&k, 384 + t));
		EXPECT_EQ(0u, kt_word(&k, 448 + t));
		EXPECT_EQ(t, kt_word(&k, 512 + t)); /* NaN != NaN */
	}
	kt_free(&k);
}

/*
 * IDIV/IREM (x / 0 and x % 0 all ones, as an H200 computes them; INT_MIN / -1 wraps), FDIV
 * (IEEE, round to nearest) and MUFU (rcp and sqrt correctly rounded).
 */
TEST(division_and_multi_function_unit)
{
	static const uint32_t a[8] = { 100, 0xfffffff9u, 0x80000000u, 7, 0, 12345678, 5, 0xffffffffu };
	static const uint32_t b[8] = { 7, 3, 0xffffffffu, 0, 9, 1000, 0xfffffffdu, 1 };
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  SHL R6, R0, 0x2 ;\n"
			      "  LDP.64 R2, [out] ;\n"
			      "  IADD R8, R2, R6 ;\n"
			      "  MOV R9, R3 ;\n"
			      "  LDG.32 R4, [R8+0x2000] ;\n"  /* a[tid] */
			      "  LDG.32 R5, [R8+0x2020] ;\n"  /* b[tid] */
			      "  IDIV.U32 R10, R4, R5 ;\n" KT_STORE("R10", "0x0")
			      "  IDIV.S32 R10, R4, R5 ;\n" KT_STORE("R10", "0x100")
			      "  IREM.U32 R10, R4, R5 ;\n" KT_STORE("R10", "0x200")
			      "  IREM.S32 R10, R4, R5 ;\n" KT_STORE("R10", "0x300")
			      "  IDIV.S32 R10, R4, -0x3 ;\n" KT_STORE("R10", "0x400")
			      "  I2F.S32 R6, R4 ;\n"
			      "  I2F.S32 R7, R5 ;\n"
			      "  FDIV R10, R6, R7 ;\n" KT_STORE("R10", "0x500")
			      "  FDIV R10, R6, 3.0 ;\n" KT_STORE("R10", "0x600")
			      "  MUFU.RCP R10, R7 ;\n" KT_STORE("R10", "0x700")
			      "  MUFU.SQRT R10, R6 ;\n" KT_STORE("R10", "0x800")
			      "  MUFU.EX2 R10, R7 ;\n" KT_STORE("R10", "0x900")
			      "  EXIT ;\n"));
	memcpy(k.mem.buf + 0x2000, a, sizeof(a));
	memcpy(k.mem.buf + 0x2020, b, sizeof(b));
	k.block[0] = 8;
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 8; t++) {
		int32_t sa = (int32_t)a[t], sb = (int32_t)b[t];
		float fa = (float)sa, fb = (float)sb;
		uint32_t udiv = b[t] ? a[t] / b[t] : 0xffffffffu;
		uint32_t urem = b[t] ? a[t] % b[t] : 0xffffffffu;
		uint32_t sdiv = !sb ? 0xffffffffu : (sa == INT32_MIN && sb == -1) ? a[t] :
						      (uint32_t)(sa / sb);
		uint32_t srem = !sb ? 0xffffffffu : (sa == INT32_MIN && sb == -1) ? 0 : (uint32_t)(sa % sb);

		EXPECT_EQ(udiv, kt_word(&k, t)) TH_LOG("lane %u", t);
		EXPECT_EQ(sdiv, kt_word(&k, 64 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ(urem, kt_word(&k, 128 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ(srem, kt_word(&k, 192 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ((uint32_t)(sa == INT32_MIN ? sa / -3 : sa / -3), kt_word(&k, 256 + t));
		EXPECT_EQ(gbits(fa / fb), kt_word(&k, 320 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ(gbits(fa / 3.0f), kt_word(&k, 384 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ(gbits(1.0f / fb), kt_word(&k, 448 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ(gbits(sqrtf(fa)), kt_word(&k, 512 + t)) TH_LOG("lane %u", t);
		EXPECT_EQ(gbits(exp2f(fb)), kt_word(&k, 576 + t)) TH_LOG("lane %u", t);
	}
	/* the edges, spelled out */
	EXPECT_EQ(0xffffffffu, kt_word(&k, 3));       /* 7 / 0 */
	EXPECT_EQ(0xffffffffu, kt_word(&k, 128 + 3)); /* 7 % 0 */
	EXPECT_EQ(0x80000000u, kt_word(&k, 64 + 2));  /* INT_MIN / -1 */
	EXPECT_EQ(0u, kt_word(&k, 192 + 2));          /* INT_MIN % -1 */
	EXPECT_EQ(0xfffffffeu, kt_word(&k, 64 + 1));  /* -7 / 3 = -2 */
	EXPECT_EQ(0xffffffffu, kt_word(&k, 192 + 1)); /* -7 % 3 = -1 */
	kt_free(&k);
}

TEST(special_registers_3d_grid_and_block)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".param ptr out\n"
			      "  LDP.64 R2, [out] ;\n"
			      /* linear CTA = x + gx * (y + gy * z) */
			      "  S2R R4, SR_CTAID.Z ;\n"
			      "  S2R R5, SR_NCTAID.Y ;\n"
			      "  S2R R6, SR_CTAID.Y ;\n"
			      "  IMAD R4, R4, R5, R6 ;\n"
			      "  S2R R5, SR_NCTAID.X ;\n"
			      "  S2R R6, SR_CTAID.X ;\n"
			      "  IMAD R4, R4, R5, R6 ;\n"
			      "  S2R R5, SR_NTID.X ;\n"
			      "  S2R R6, SR_NTID.Y ;\n"
			      "  IMUL R5, R5, R6 ;\n"
			      "  S2R R6, SR_NTID.Z ;\n"
			      "  IMUL R5, R5, R6 ;\n"           /* threads per CTA */
			      "  S2R R0, SR_TID ;\n"
			      "  IMAD R7, R4, R5, R0 ;\n"       /* global thread index */
			      "  SHL R7, R7, 0x4 ;\n"           /* 16 bytes each */
			      "  IADD R8, R2, R7 ;\n"
			      "  MOV R9, R3 ;\n"
			      "  S2R R12, SR_TID.X ;\n"
			      "  S2R R13, SR_TID.Y ;\n"
			      "  S2R R14, SR_TID.Z ;\n"
			      "  S2R R15, SR_LANEID ;\n"
			      "  S2R R16, SR_WARPID ;\n"
			      "  SHL R16, R16, 0x8 ;\n"
			      "  LOP.OR R15, R15, R16 ;\n"
			      "  S2R R16, SR_NWARPS ;\n"
			      "  SHL R16, R16, 0x10 ;\n"
			      "  LOP.OR R15, R15, R16 ;\n"
			      "  STG.128 [R8], R12 ;\n"
			      "  EXIT ;\n"));
	k.grid[0] = 2;
	k.grid[1] = 3;
	k.grid[2] = 2;
	k.block[0] = 5;
	k.block[1] = 4;
	k.block[2] = 3; /* 60 threads: 2 warps, the second partial */
	KT_RUN_OK(&k);
	for (uint32_t c = 0; c < 12; c++)
		for (uint32_t t = 0; t < 60; t++) {
			uint32_t g = (c * 60 + t) * 4;

			EXPECT_EQ(t % 5, kt_word(&k, g + 0));
			EXPECT_EQ((t / 5) % 4, kt_word(&k, g + 1));
			EXPECT_EQ(t / 20, kt_word(&k, g + 2));
			EXPECT_EQ((t % 32) | (t / 32) << 8 | 2u << 16, kt_word(&k, g + 3));
		}
	kt_free(&k);
}

/*
 * SR_SMID, SR_NSMID and SR_NWARPID come from the SM's configuration;
 * NSMID > SMID; NWARPID 0 is VGPU_MAX_WARPS_PER_CTA
 */
TEST(smid_nsmid_and_nwarpid)
{
	static const struct vgpu_sm_config cfgs[] = {
		{ .sm_id = 131, .nsms = 132, .nwarpids = 64 },
		{ .sm_id = 5 }, /* nsms 0: sm_id + 1 */
		{ .sm_id = 9, .nsms = 3, .nwarpids = 48 }, /* too few: sm_id + 1 */
	};
	static const uint32_t want[][3] = { { 131, 132, 64 },
					    { 5, 6, VGPU_MAX_WARPS_PER_CTA },
					    { 9, 10, 48 } };

	for (unsigned i = 0; i < 3; i++) {
		struct kt k;

		ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE
				  "  S2R R4, SR_SMID ;\n"
				  "  S2R R5, SR_NSMID ;\n"
				  "  S2R R6, SR_NWARPID ;\n"
				  "  S2R R7, SR_NWARPS ;\n"
				  "  STG.128 [R2], R4 ;\n"
				  "  EXIT ;\n"));
		kt_config(&k, &cfgs[i]);
		KT_RUN_OK(&k);
		EXPECT_EQ(want[i][0], kt_word(&k, 0));
		EXPECT_EQ(want[i][1], kt_word(&k, 1));
		EXPECT_EQ(want[i][2], kt_word(&k, 2));
		EXPECT_EQ(1u, kt_word(&k, 3)); /* the CTA's warps */
		kt_free(&k);
	}
}

TEST(simt_divergence_loops_and_reconvergence)
{
	/* per-thread trip count, nested if/else; after the join every lane
	 * is back together (VOTE.BALLOT sees all 32) */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  LOP.AND R4, R0, 0x7 ;\n"       /* n = tid & 7 */
			      "  MOV R5, 0x0 ;\n"
			      "  MOV R6, 0x0 ;\n"
			      "loop:\n"
			      "  ISETP.GE.U32 P0, R6, R4 ;\n"
			      "  @P0 BRA done ;\n"
			      "  IADD R5, R5, R6 ;\n"
			      "  IADD R6, R6, 0x1 ;\n"
			      "  BRA loop ;\n"
			      "done:\n"
			      "  LOP.AND R7, R0, 0x1 ;\n"
			      "  ISETP.EQ.U32 P1, R7, 0x0 ;\n"
			      "  @P1 BRA even ;\n"
			      "  LOP.AND R7, R0, 0x2 ;\n"
			      "  ISETP.EQ.U32 P2, R7, 0x0 ;\n"
			      "  @P2 BRA odd_a ;\n"
			      "  IADD R5, R5, 0x3e8 ;\n"        /* odd, bit1 set: +1000 */
			      "  BRA join ;\n"
			      "odd_a:\n"
			      "  IADD R5, R5, 0x7d0 ;\n"        /* odd, bit1 clear: +2000 */
			      "  BRA join ;\n"
			      "even:\n"
			      "  IMUL R5, R5, 0x3 ;\n"
			      "join:\n"
			      "  VOTE.BALLOT R10, PT ;\n" KT_STORE("R5", "0x0")
			      KT_STORE("R10", "0x100") "  EXIT ;\n"));
	k.block[0] = 64;
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 64; t++) {
		uint32_t n = t & 7, s = 0;

		for (uint32_t i = 0; i < n; i++)
			s += i;
		if (t & 1)
			s += (t & 2) ? 1000 : 2000;
		else
			s *= 3;
		EXPECT_EQ(s, kt_word(&k, t));
		EXPECT_EQ(0xffffffffu, kt_word(&k, 64 + t));
	}
	kt_free(&k);
}

TEST(guarded_exit_keeps_other_lanes)
{
	/* lanes >= 10 exit early; the rest keep running and are never lost */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  ISETP.GE.U32 P0, R0, 0xa ;\n"
			      "  @P0 EXIT ;\n"
			      "  VOTE.BALLOT R10, PT ;\n"
			      "  IADD R10, R10, 0x1 ;\n" KT_STORE("R10", "0x0")
			      "  EXIT ;\n"));
	k.block[0] = 32;
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++)
		EXPECT_EQ(t < 10 ? 0x3ffu + 1 : 0, kt_word(&k, t));
	kt_free(&k);
}

TEST(loads_and_stores_all_sizes)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared buf, 64\n" KT_PROLOGUE
			      "  MOV R10, 0x8180ff7f ;\n"
			      "  MOV R11, 0x11223344 ;\n"
			      "  MOV R12, 0x55667788 ;\n"
			      "  MOV R13, 0x99aabbcc ;\n"
			      "  STS.128 [0x10], R10 ;\n"
			      "  LDS.U8 R20, [0x10] ;\n"
			      "  LDS.S8 R21, [0x13] ;\n"
			      "  LDS.U16 R22, [0x12] ;\n"
			      "  LDS.S16 R23, [0x12] ;\n"
			      "  LDS.64 R24, [0x18] ;\n"
			      "  LDS.128 R28, [0x10] ;\n"
			      "  STG.128 [R2+0x40], R20 ;\n"
			      "  STG.64 [R2+0x50], R24 ;\n"
			      "  STG.128 [R2+0x60], R28 ;\n"
			      "  STG.U8 [R2+0x71], R10 ;\n"
			      "  STG.U16 [R2+0x76], R10 ;\n"
			      "  LDG.64 R32, [R2+0x60] ;\n"
			      "  STG.64 [R2+0x78], R32 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	KT_RUN_OK(&k);
	EXPECT_EQ(0x7fu, kt_word(&k, 16));
	EXPECT_EQ(0xffffff81u, kt_word(&k, 17));
	EXPECT_EQ(0x8180u, kt_word(&k, 18));
	EXPECT_EQ(0xffff8180u, kt_word(&k, 19));
	EXPECT_EQ(0x55667788u, kt_word(&k, 20));
	EXPECT_EQ(0x99aabbcc, kt_word(&k, 21));
	EXPECT_EQ(0x8180ff7f, kt_word(&k, 24));
	EXPECT_EQ(0x99aabbcc, kt_word(&k, 27));
	EXPECT_EQ(0x7f00u, kt_word(&k, 28));
	EXPECT_EQ(0xff7f0000u, kt_word(&k, 29));
	EXPECT_EQ(0x8180ff7f, kt_word(&k, 30));
	EXPECT_EQ(0x11223344u, kt_word(&k, 31));
	kt_free(&k);
}

TEST(parameters_and_rz)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".param ptr out\n.param u32 a\n.param u32 b\n"
			      "  LDP.64 R2, [out] ;\n"
			      "  LDP.32 R4, [a] ;\n"
			      "  LDP.32 R5, [b] ;\n"
			      "  IADD R6, R4, R5 ;\n"
			      "  IADD RZ, R4, R5 ;\n"          /* discarded */
			      "  IADD R7, RZ, 0x5 ;\n"
			      "  STG.32 [R2], R6 ;\n"
			      "  STG.32 [R2+0x4], R7 ;\n"
			      "  STG.64 [R2+0x8], RZ ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	k.args[0] = 40;
	k.args[1] = 2;
	k.nargs = 2;
	kt_set_word(&k, 2, 0xdead);
	kt_set_word(&k, 3, 0xbeef);
	KT_RUN_OK(&k);
	EXPECT_EQ(42u, kt_word(&k, 0));
	EXPECT_EQ(5u, kt_word(&k, 1));
	EXPECT_EQ(0u, kt_word(&k, 2));
	EXPECT_EQ(0u, kt_word(&k, 3));
	kt_free(&k);
}

TEST(atomics_global_and_shared_across_ctas)
{
	uint32_t x = 0;
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared cnt, 16\n" KT_PROLOGUE
			      "  MOV R4, 0x1 ;\n"
			      "  ATOMG.ADD.U32 RZ, [R2+0x0], R4 ;\n"
			      "  ATOMG.MAX.S32 RZ, [R2+0x4], R0 ;\n"
			      "  ISUB R5, RZ, R0 ;\n"
			      "  ATOMG.MIN.S32 RZ, [R2+0x8], R5 ;\n"
			      "  ATOMG.OR.U32 RZ, [R2+0xc], R0 ;\n"
			      "  ATOMS.ADD.U32 R6, [0x0], R4 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  LDS.32 R7, [0x0] ;\n"
			      "  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
			      "  @P0 ATOMG.ADD.U32 RZ, [R2+0x10], R7 ;\n"
			      /* CAS: only the thread whose compare matches wins */
			      "  ATOMG.CAS R9, [R2+0x14], R0, R4 ;\n"
			      "  ATOMS.CAS R10, [0x4], RZ, R0 ;\n"
			      "  ATOMS.EXCH.U32 R11, [0x8], R0 ;\n"
			      "  ATOMS.XOR.U32 RZ, [0xc], R0 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  LDS.32 R12, [0xc] ;\n"
			      "  @P0 STG.32 [R2+0x18], R12 ;\n"
			      "  EXIT ;\n"));
	k.grid[0] = 3;
	k.block[0] = 100;
	KT_RUN_OK(&k);
	EXPECT_EQ(300u, kt_word(&k, 0));
	EXPECT_EQ(99u, kt_word(&k, 1));
	EXPECT_EQ(-99, (int32_t)kt_word(&k, 2));
	EXPECT_EQ(127u, kt_word(&k, 3));
	EXPECT_EQ(300u, kt_word(&k, 4)); /* each CTA's shared counter saw 100 */
	EXPECT_EQ(1u, kt_word(&k, 5));   /* 0 -> 1 by tid 0, then 1 -> 1 by tid 1 */
	for (uint32_t t = 0; t < 100; t++)
		x ^= t;
	EXPECT_EQ(x, kt_word(&k, 6));
	kt_free(&k);
}

TEST(vote_and_shuffle)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  ISETP.LT.U32 P0, R0, 0x5 ;\n"
			      "  VOTE.ANY P1, P0 ;\n"
			      "  VOTE.ALL P2, P0 ;\n"
			      "  VOTE.ALL P3, !P2 ;\n"
			      "  VOTE.BALLOT R10, P0 ;\n"
			      "  MOV R11, 0x1 ;\n"
			      "  SEL R12, R11, RZ, P1 ;\n"
			      "  SEL R13, R11, RZ, P2 ;\n"
			      "  SEL R14, R11, RZ, P3 ;\n"
			      "  SHL R12, R12, 0x1 ;\n"
			      "  LOP.OR R12, R12, R13 ;\n"
			      "  SHL R12, R12, 0x1 ;\n"
			      "  LOP.OR R12, R12, R14 ;\n" KT_STORE("R10", "0x0")
			      KT_STORE("R12", "0x100")
			      /* butterfly sum of tid over the warp */
			      "  MOV R15, R0 ;\n"
			      "  SHFL.BFLY R16, R15, 0x10 ;\n"
			      "  IADD R15, R15, R16 ;\n"
			      "  SHFL.BFLY R16, R15, 0x8 ;\n"
			      "  IADD R15, R15, R16 ;\n"
			      "  SHFL.BFLY R16, R15, 0x4 ;\n"
			      "  IADD R15, R15, R16 ;\n"
			      "  SHFL.BFLY R16, R15, 0x2 ;\n"
			      "  IADD R15, R15, R16 ;\n"
			      "  SHFL.BFLY R16, R15, 0x1 ;\n"
			      "  IADD R15, R15, R16 ;\n" KT_STORE("R15", "0x200")
			      "  SHFL.UP R17, R0, 0x3 ;\n" KT_STORE("R17", "0x300")
			      "  MOV R18, 0x7 ;\n"
			      "  SHFL.DOWN R17, R0, R18 ;\n" KT_STORE("R17", "0x400")
			      "  SHFL.IDX R17, R0, 0x1f ;\n" KT_STORE("R17", "0x500")
			      "  EXIT ;\n"));
	k.block[0] = 32;
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		EXPECT_EQ(0x1fu, kt_word(&k, t));
		EXPECT_EQ(0x5u, kt_word(&k, 64 + t)); /* any=1, all=0, all(!all)=1 */
		EXPECT_EQ(31u * 32 / 2, kt_word(&k, 128 + t));
		EXPECT_EQ(t >= 3 ? t - 3 : t, kt_word(&k, 192 + t));
		EXPECT_EQ(t + 7 < 32 ? t + 7 : t, kt_word(&k, 256 + t));
		EXPECT_EQ(31u, kt_word(&k, 320 + t));
	}
	kt_free(&k);
}

/*
 * A row of plain instructions (ALU, S2R, MOV, NOP: exec.c's table) runs on
 * a converged warp without the scheduler's bookkeeping between them
 * (run_warp()): what it computes, the predicate guards inside it, the clock
 * each S2R reads, the budget and random schedules must all be as one
 * instruction at a time.
 */
#define PLAIN_ROW_SRC                                                          \
	KT_PROLOGUE                                                            \
	"  S2R R5, SR_CLOCKLO ;\n"                                              \
	"  MOV R6, 0x5 ;\n"                                                     \
	"  IADD R6, R6, 0x3 ;\n"                                                \
	"  ISETP.EQ.U32 P0, R6, 0x8 ;\n"                                        \
	"  @P0 IADD R6, R6, 0x10 ;\n"                                           \
	"  @!P0 IADD R6, R6, 0x100 ;\n"                                         \
	"  NOP ;\n"                                                             \
	"  S2R R7, SR_CLOCKLO ;\n"                                              \
	"  ISUB R7, R7, R5 ;\n"                                                 \
	KT_STORE("R6", "0x0") KT_STORE("R7", "0x200")                          \
	"  EXIT ;\n"
#define PLAIN_ROW_INSNS 21u /* 3 + 9 + 2 * 4 + 1 */

TEST(plain_row_same_as_one_instruction_at_a_time)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, PLAIN_ROW_SRC));
	/* one warp: nothing runs between the two S2Rs, 7 instructions apart */
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		EXPECT_EQ(0x18u, kt_word(&k, t));
		EXPECT_EQ(7u, kt_word(&k, 128 + t));
	}
	/* the budget stops it at each instruction, the row's included */
	for (uint64_t b = 1; b < PLAIN_ROW_INSNS; b++) {
		k.budget = b;
		EXPECT_EQ(-1, kt_run(&k)) TH_LOG("budget %llu", (unsigned long long)b);
		EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, k.exc.code);
	}
	k.budget = PLAIN_ROW_INSNS;
	KT_RUN_OK(&k);
	/* 4 warps under random schedules (quanta of a few instructions cut
	 * the row): the same results, the clock only later */
	k.budget = 0;
	k.block[0] = 128;
	k.flags = VGPU_LAUNCH_RANDOM_SCHED;
	for (uint64_t seed = 1; seed <= 100; seed++) {
		k.seed = seed;
		memset(k.mem.buf, 0, 1024);
		KT_RUN_OK(&k);
		for (uint32_t t = 0; t < 128; t++) {
			EXPECT_EQ(0x18u, kt_word(&k, t));
			EXPECT_LE(7u, kt_word(&k, 128 + t));
		}
	}
	kt_free(&k);
}

/*
 * Full warps at one pc run in lock-step (lockstep.c) while the round
 * robin's order stays exact: a timeline turns the lock-step off, so the
 * same launch with and without one must end the same to the bit: memory
 * (the clock each warp read after the lock-step, the last writer of one
 * word), the statistics, and, under every budget, the exception record.
 */
#define R10(x) x x x x x x x x x x
#define LOCKSTEP_SRC                                                           \
	KT_PROLOGUE                                                            \
	"  MOV R4, 0x0 ;\n"                                                     \
	"  MOV R5, 0x0 ;\n"                                                     \
	"  BAR.SYNC 0x0 ;\n"                                                    \
	"loop:\n"                                                               \
	"  IADD R4, R4, R0 ;\n"                                                 \
	"  IADD R5, R5, 0x1 ;\n"                                                \
	"  ISETP.LT.U32 P0, R5, 0x6 ;\n"                                        \
	"  BAR.SYNC 0x0 ;\n"                                                    \
	"  @P0 BRA loop ;\n"                                                    \
	R10(R10("  IADD R4, R4, 0x1 ;\n")) /* longer than a slice */           \
	"  S2R R6, SR_CLOCKLO ;\n"                                              \
	"  S2R R7, SR_WARPID ;\n"                                               \
	"  ISETP.EQ.U32 P1, R7, 0x1 ;\n"                                        \
	"  @P1 BRA odd ;\n"                                                     \
	"  IADD R4, R4, 0x2 ;\n"                                                \
	"odd:\n"                                                                \
	"  BAR.SYNC 0x0 ;\n"                                                    \
	R10("  IADD R4, R4, 0x3 ;\n")                                          \
	"  S2R R7, SR_CLOCKLO ;\n"                                              \
	KT_STORE("R4", "0x0") KT_STORE("R6", "0x1000") KT_STORE("R7", "0x2000") \
	"  IADD R8, R2, 0x3000 ;\n"                                             \
	"  MOV R9, R3 ;\n"                                                      \
	"  STG.32 [R8], R0 ;\n"                                                 \
	"  EXIT ;\n"

static void count_event(void *opaque, const struct vgpu_trace_event *ev)
{
	(void)ev;
	++*(uint64_t *)opaque;
}

struct lockstep_run {
	int rc;
	struct vgpu_exception_record exc;
	struct vgpu_sm_stats st;
	uint8_t mem[0x3004];
};

static void lockstep_run(struct kt *k, bool timeline, struct lockstep_run *r)
{
	uint64_t events = 0;

	memset(k->mem.buf, 0, sizeof(r->mem));
	k->event = timeline ? count_event : NULL;
	k->event_opaque = &events;
	kt_config(k, NULL); /* a new SM: its clock starts at 0 */
	r->rc = kt_run(k);
	r->exc = k->exc;
	vgpu_sm_get_stats(k->sm, &r->st);
	memcpy(r->mem, k->mem.buf, sizeof(r->mem));
}

TEST(lockstep_same_as_round_robin)
{
	static const uint32_t blocks[] = { 64, 96, 256, 1024 };
	static struct lockstep_run a, b;
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, LOCKSTEP_SRC));
	for (uint32_t i = 0; i < 4; i++) {
		k.block[0] = blocks[i];
		k.budget = 0;
		lockstep_run(&k, false, &a);
		lockstep_run(&k, true, &b);
		ASSERT_EQ(0, a.rc) TH_LOG("%s", a.exc.msg);
		ASSERT_EQ(0, b.rc) TH_LOG("%s", b.exc.msg);
		EXPECT_EQ(0, memcmp(a.mem, b.mem, sizeof(a.mem))) TH_LOG("block %u", blocks[i]);
		EXPECT_EQ(b.st.warp_insns, a.st.warp_insns);
		EXPECT_EQ(b.st.thread_insns, a.st.thread_insns);
		EXPECT_EQ(b.st.cycles, a.st.cycles);
		EXPECT_EQ(0u, b.st.lockstep_insns);
		/* the lock-step ran: the loop, the stretch and the end */
		EXPECT_GT(a.st.lockstep_insns, a.st.warp_insns / 2) TH_LOG("block %u", blocks[i]);
		/* thread 1: 6 x its tid + 100 + 2 + 30 */
		EXPECT_EQ(6u + 100 + 2 + 30, kt_word(&k, 1));
		/* under every budget: the same exception, the same counts */
		for (uint64_t budget = 1, all = a.st.warp_insns; budget < all;
		     budget += all < 2000 ? 1 : 1 + budget / 64) {
			k.budget = budget;
			lockstep_run(&k, false, &a);
			lockstep_run(&k, true, &b);
			EXPECT_EQ(-1, a.rc);
			EXPECT_EQ(0, memcmp(&a.exc, &b.exc, sizeof(a.exc)))
				TH_LOG("block %u budget %llu: pc 0x%x warp %u vs pc 0x%x warp %u",
				       blocks[i], (unsigned long long)budget, a.exc.pc,
				       a.exc.warp, b.exc.pc, b.exc.warp);
			EXPECT_EQ(b.st.warp_insns, a.st.warp_insns);
			EXPECT_EQ(b.st.cycles, a.st.cycles);
		}
	}
	kt_free(&k);
}

TEST(nanosleep_lets_other_warps_run_and_advances_clock)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  S2R R4, SR_WARPID ;\n"
			      "  ISETP.NE.U32 P0, R4, 0x0 ;\n"
			      "  @P0 BRA other ;\n"
			      "  S2R R5, SR_CLOCKLO ;\n"
			      "  NANOSLEEP 0x2710 ;\n"
			      "  S2R R6, SR_CLOCKLO ;\n"
			      "  ISUB R6, R6, R5 ;\n"
			      "  LDG.32 R7, [R2+0x400] ;\n" /* written by warp 1 */
			      KT_STORE("R6", "0x0") KT_STORE("R7", "0x100")
			      "  EXIT ;\n"
			      "other:\n"
			      "  MOV R7, 0x77 ;\n"
			      "  STG.32 [R2+0x400], R7 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 64;
	KT_RUN_OK(&k);
	EXPECT_GE(kt_word(&k, 0), 10000u);
	EXPECT_EQ(0x77u, kt_word(&k, 64));
	kt_free(&k);
}

/*
 * ---- Exceptions ----
 *
 * One kernel per variant and the record it raises: code, pc, address and
 * a piece of the message.
 */

FIXTURE(exception) {
	struct kt k;
};

FIXTURE_VARIANT(exception) {
	const char *src;
	uint32_t block, code, pc;
	uint64_t addr;
	const char *msg;
};

/* optype 0 is never valid; a reserved bit set on a NOP neither; both
 * raise even under a false guard */
FIXTURE_VARIANT_ADD(exception, illegal_instruction_optype_0) {
	.src = "  NOP ;\n  .word 0x0, 0x0 ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_ILLEGAL_INSTR, .pc = 16, .addr = 0,
	.msg = "illegal instruction",
};

FIXTURE_VARIANT_ADD(exception, illegal_instruction_reserved_bit) {
	.src = "  .word 0x1, 0x8000000000000000 ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_ILLEGAL_INSTR, .pc = 0, .addr = 0,
	.msg = "0x8000000000000000",
};

FIXTURE_VARIANT_ADD(exception, shared_memory_range) {
	.src = ".shared b, 64\n  MOV R1, 0x40 ;\n  LDS.32 R2, [R1] ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_SMEM_RANGE, .pc = 16, .addr = 0x40,
	.msg = "outside its 0x40 bytes",
};

FIXTURE_VARIANT_ADD(exception, shared_memory_alignment_4) {
	.src = ".shared b, 64\n  STS.32 [0x3e], RZ ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_MISALIGNED, .pc = 0, .addr = 0x3e,
	.msg = "not 4-byte aligned",
};

FIXTURE_VARIANT_ADD(exception, shared_memory_alignment_16) {
	.src = ".shared b, 64\n  LDS.128 R4, [0x8] ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_MISALIGNED, .pc = 0, .addr = 0x8,
	.msg = "16-byte",
};

FIXTURE_VARIANT_ADD(exception, global_fault_write) {
	.src = KT_PROLOGUE "  STG.32 [R2+0x100000], R0 ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_GLOBAL_FAULT, .pc = 48,
	.addr = GMEM_BASE + 0x100000, .msg = "write",
};

FIXTURE_VARIANT_ADD(exception, global_fault_read) {
	.src = "  LDG.32 R4, [RZ+0x10] ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_GLOBAL_FAULT, .pc = 0, .addr = 0x10,
	.msg = "read",
};

FIXTURE_VARIANT_ADD(exception, param_range) {
	.src = "  LDP.32 R4, [0x8] ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_PARAM_RANGE, .pc = 0, .addr = 8,
	.msg = "parameter",
};

/* falling off the end, and a branch outside the program */
FIXTURE_VARIANT_ADD(exception, pc_range_past_the_end) {
	.src = "  NOP ;\n",
	.block = 32, .code = VGPU_EXC_PC_RANGE, .pc = 16, .addr = 0,
	.msg = "past the end",
};

FIXTURE_VARIANT_ADD(exception, pc_range_branch_target) {
	.src = "  .word 0x100000007130, 0x0 ;\n  EXIT ;\n",
	.block = 32, .code = VGPU_EXC_PC_RANGE, .pc = 0, .addr = 0x1000,
	.msg = "branch target 0x1000",
};

FIXTURE_SETUP(exception)
{
	ASSERT_EQ(0, kt_load(&self->k, variant->src));
	self->k.block[0] = variant->block;
}

FIXTURE_TEARDOWN(exception)
{
	kt_free(&self->k);
}

TEST_F(exception, raised)
{
	EXPECT_EQ(-1, kt_run(&self->k));
	EXPECT_EQ(variant->code, self->k.exc.code);
	EXPECT_EQ(variant->pc, self->k.exc.pc);
	EXPECT_EQ(variant->addr, self->k.exc.addr);
	EXPECT_CONTAINS(self->k.exc.msg, variant->msg);
}

TEST(exception_record_names_cta_warp_and_lanes)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  S2R R4, SR_CTAID.X ;\n"
			      "  ISETP.EQ.U32 P0, R4, 0x2 ;\n"
			      "  S2R R5, SR_LANEID ;\n"
			      "  ISETP.EQ.U32.AND P0, R5, 0x5, P0 ;\n"
			      "  S2R R6, SR_WARPID ;\n"
			      "  ISETP.EQ.U32.AND P0, R6, 0x1, P0 ;\n"
			      "  @P0 LDG.32 R7, [RZ] ;\n"
			      "  EXIT ;\n"));
	k.grid[0] = 4;
	k.block[0] = 64;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, k.exc.code);
	EXPECT_EQ(2u, k.exc.cta[0]);
	EXPECT_EQ(1u, k.exc.warp);
	EXPECT_EQ(1u << 5, k.exc.lane_mask);
	EXPECT_EQ(9u * 16, k.exc.pc);
	EXPECT_EQ((uint64_t)VGPU_OPT_LDG,
		  vgpu_get(((const uint64_t[2]){ k.exc.insn[0], k.exc.insn[1] }),
			   VGPU_F_OPTYPE));
	EXPECT_EQ(VGPU_WAIT_EXITED, k.exc.warp_wait[0]); /* ran its slice first */
	EXPECT_EQ(VGPU_WAIT_ABSENT, k.exc.warp_wait[2]);
	kt_free(&k);
}

TEST(launch_validation)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, "  EXIT ;\n"));
	k.block[0] = 1025;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, k.exc.code);
	EXPECT_CONTAINS(k.exc.msg, "1025 x 1 x 1 threads");
	k.block[0] = 32;
	k.block[1] = 0;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, k.exc.code);
	k.block[1] = 1;
	k.smem = VGPU_DEFAULT_SMEM_PER_SM + 1;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_CONTAINS(k.exc.msg, "shared memory");
	k.smem = VGPU_DEFAULT_SMEM_PER_SM;
	KT_RUN_OK(&k);
	k.flags = 0x80;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_CONTAINS(k.exc.msg, "unknown launch flags");
	kt_free(&k);
}

/*
 * Three 32-bit dimensions can multiply to 2^64, which wrapped to 0 and
 * passed every limit: blocks of 2^64 threads and grids and clusters of
 * 2^64 CTAs were accepted and "completed" without running a thread
 * (found while writing the launch fuzzer).
 */
TEST(launch_dimensions_that_multiply_to_2_to_the_64)
{
	static const uint32_t wrap[3] = { 1u << 22, 1u << 22, 1u << 20 };
	static const uint32_t big[3] = { 0xffffffffu, 0xffffffffu, 0xffffffffu };
	const uint32_t *dims[] = { wrap, big };
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, "  EXIT ;\n"));
	for (int i = 0; i < 2; i++) {
		memcpy(k.block, dims[i], sizeof(k.block));
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, k.exc.code);
		EXPECT_CONTAINS(k.exc.msg, "threads exceeds 1024");
		k.block[0] = 32;
		k.block[1] = k.block[2] = 1;

		memcpy(k.grid, dims[i], sizeof(k.grid));
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, k.exc.code);
		EXPECT_CONTAINS(k.exc.msg, "more than 2^32-1 CTAs");

		/* a cluster as large as the grid: it divides, but is no cluster */
		memcpy(k.cluster, dims[i], sizeof(k.cluster));
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, k.exc.code);
		k.grid[0] = k.grid[1] = k.grid[2] = 1;
		memset(k.cluster, 0, sizeof(k.cluster));
	}
	KT_RUN_OK(&k);
	kt_free(&k);
}

TEST(prog_load_rejects_bad_sizes_and_counts_registers)
{
	struct vgpu_prog *p;
	uint8_t code[32] = { 0 };
	struct kt k;

	EXPECT_EQ(-EINVAL, vgpu_prog_load(code, 0, &p));
	EXPECT_EQ(-EINVAL, vgpu_prog_load(code, 17, &p));
	EXPECT_EQ(-EINVAL, vgpu_prog_load(NULL, 16, &p));
	ASSERT_EQ(0, kt_load(&k, "  LDS.128 R10, [RZ] ;\n  IADD R2, RZ, R3 ;\n  EXIT ;\n"));
	EXPECT_EQ(14u, vgpu_prog_nregs(k.prog));
	kt_free(&k);
}

TEST(cta_state_bytes_scales_with_threads_and_smem)
{
	struct kt k;
	struct vgpu_launch l = { 0 };
	size_t big, small, two, warp, rows;

	ASSERT_EQ(0, kt_load(&k, "  IADD R15, R15, 0x1 ;\n  EXIT ;\n"));
	l.prog = k.prog;
	l.block[1] = l.block[2] = 1;
	l.block[0] = 1024;
	big = vgpu_sm_cta_state_bytes(&l);
	l.block[0] = 64;
	two = vgpu_sm_cta_state_bytes(&l);
	l.block[0] = 32;
	small = vgpu_sm_cta_state_bytes(&l);
	/* state is held for the warps that exist: each one more costs its
	 * (16 + zero + scratch) rows x 32 lanes x 4 bytes and under 1 KiB of
	 * bookkeeping */
	warp = two - small;
	rows = (16 + VGPU_ZERO_ROWS + VGPU_SCRATCH_ROWS) * 32 * 4;
	EXPECT_EQ(31 * warp, big - small);
	EXPECT_LE(rows, warp);
	EXPECT_GT(rows + 1024, warp);
	/* a one-warp CTA holds its registers and under 2 KiB more */
	EXPECT_GT(rows + 2048, small);
	/* shared memory, and its shadow: a bit per 8 bytes */
	l.smem_bytes = 1000;
	EXPECT_EQ(1000u + 16u, vgpu_sm_cta_state_bytes(&l) - small);
	kt_free(&k);
}

TEST_HARNESS_MAIN
