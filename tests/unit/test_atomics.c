/* SPDX-License-Identifier: MIT */
/*
 * The atomics beyond 32-bit integers: ATOMG/ATOMS on 64-bit integers
 * (every operation, carries between the words), the floating-point adds
 * (f32 with and without .FTZ, f64, f16, bf16 and their x2 pairs, each
 * rounded to nearest), the half types' min/max (NaNs, zeros and
 * subnormals as an H200 has them) and compare-and-swap of 16 and 64 bits, on global
 * and shared memory; misaligned and illegal forms raise their exceptions;
 * and two SMs on two host threads hammering the same words lose no
 * update: a 64-bit add is one atomic access (a carry into the high word
 * is never lost) and a 16-bit CAS leaves the other half of its word
 * alone.  The GPU's own answers for each form, edge values included, are
 * tests/ptx/gen's atom module (test_ptxgen).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_priv.h"
#include "kernel_util.h"

static uint64_t dword_at(const struct kt *k, uint32_t byte)
{
	uint64_t v;

	memcpy(&v, k->mem.buf + byte, 8);
	return v;
}

static uint16_t half_at(const struct kt *k, uint32_t byte)
{
	uint16_t v;

	memcpy(&v, k->mem.buf + byte, 2);
	return v;
}

/*
 * 3 CTAs of 100 threads, tid t: global [0] += 0xffffffff (a carry each
 * time), [8] max.s64 t - 1000, [16] min.u64 (t << 32 | 5), [24] xor.u64
 * (t << 32 | t), [32] CAS.64 0 -> (1 << 40): one winner, [40] exch.u64;
 * shared the same add and a min.s64, added and min'ed out by thread 0.
 */
TEST(integer_64_bit_global_and_shared)
{
	struct kt k;
	uint64_t x = 0;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared s, 16\n" KT_PROLOGUE
			      "  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
			      "  @P0 STS.128 [0x0], RZ ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  MOV R4, 0xffffffff ;\n  MOV R5, 0x0 ;\n"
			      "  ATOMG.ADD.U64 RZ, [R2+0x0], R4 ;\n"
			      "  ATOMS.ADD.U64 RZ, [0x0], R4 ;\n"
			      "  IADD R6, R0, -0x3e8 ;\n  SHR.S32 R7, R6, 0x1f ;\n"
			      "  ATOMG.MAX.S64 RZ, [R2+0x8], R6 ;\n"
			      "  ATOMS.MIN.S64 RZ, [0x8], R6 ;\n"
			      "  MOV R10, 0x5 ;\n  MOV R11, R0 ;\n"
			      "  ATOMG.MIN.U64 RZ, [R2+0x10], R10 ;\n"
			      "  MOV R10, R0 ;\n"
			      "  ATOMG.XOR.U64 RZ, [R2+0x18], R10 ;\n"
			      "  MOV R12, 0x0 ;\n  MOV R13, 0x100 ;\n"
			      "  ATOMG.CAS.64 R14, [R2+0x20], RZ, R12 ;\n"
			      "  ATOMG.EXCH.U64 R16, [R2+0x28], R12 ;\n"
			      /* the one CAS that saw 0 counts itself */
			      "  ISETP.EQ.U32 P1, R14, 0x0 ;\n"
			      "  ISETP.EQ.U32.AND P1, R15, 0x0, P1 ;\n"
			      "  MOV R18, 0x1 ;\n"
			      "  @P1 ATOMG.ADD.U32 RZ, [R2+0x30], R18 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  LDS.64 R20, [0x0] ;\n  LDS.64 R22, [0x8] ;\n"
			      "  @P0 ATOMG.ADD.U64 RZ, [R2+0x38], R20 ;\n"
			      "  @P0 ATOMG.MIN.S64 RZ, [R2+0x40], R22 ;\n"
			      "  EXIT ;\n"));
	/* [8] starts at INT64_MIN, [16] and [64] at the largest values */
	kt_set_word(&k, 3, 0x80000000u);
	kt_set_word(&k, 4, 0xffffffffu);
	kt_set_word(&k, 5, 0xffffffffu);
	kt_set_word(&k, 17, 0x7fffffffu);
	kt_set_word(&k, 16, 0xffffffffu);
	k.grid[0] = 3;
	k.block[0] = 100;
	KT_RUN_OK(&k);
	EXPECT_EQ(300ull * 0xffffffffull, dword_at(&k, 0));
	EXPECT_EQ((uint64_t)(99 - 1000), dword_at(&k, 8));
	EXPECT_EQ(5ull, dword_at(&k, 16)); /* tid 0: 0 << 32 | 5 */
	for (uint64_t t = 0; t < 100; t++) /* each value three times: once */
		x ^= t << 32 | t;
	EXPECT_EQ(x, dword_at(&k, 24));
	EXPECT_EQ(1ull << 40, dword_at(&k, 32));
	EXPECT_EQ(1ull << 40, dword_at(&k, 40));
	EXPECT_EQ(1u, kt_word(&k, 12));
	/* each CTA's shared counter: 100 carries, its min 0 - 1000 */
	EXPECT_EQ(300ull * 0xffffffffull, dword_at(&k, 56));
	EXPECT_EQ((uint64_t)-1000, dword_at(&k, 64));
	kt_free(&k);
}

/*
 * The float adds, 64 threads each adding to global [0] (f64 0.5), [8]
 * (f32 2^-130, a subnormal: .FTZ flushes it), [12] (f32 1.0), [16] (f16
 * 1.0), [18] (bf16 1.0), [20] (f16x2 {1.0, 0.5}), [24] (bf16x2 {2.0,
 * 1.0}); shared the f32 subnormal without .FTZ, the f16 and the f64.
 */
TEST(float_adds_round_to_nearest)
{
	uint64_t seen = 0;
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared s, 16\n" KT_PROLOGUE
			      "  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
			      "  @P0 STS.128 [0x0], RZ ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  MOV R4, 0x0 ;\n  MOV R5, 0x3fe00000 ;\n"
			      "  ATOMG.ADD.F64 RZ, [R2+0x0], R4 ;\n"
			      "  ATOMS.ADD.F64 RZ, [0x0], R4 ;\n"
			      "  MOV R6, 0x80000 ;\n" /* 2^-130 */
			      "  ATOMG.ADD.F32.FTZ RZ, [R2+0x8], R6 ;\n"
			      "  ATOMS.ADD.F32 RZ, [0x8], R6 ;\n"
			      "  MOV R7, 0x3f800000 ;\n"
			      "  ATOMG.ADD.F32 R25, [R2+0xc], R7 ;\n"
			      "  MOV R9, 0x3c00 ;\n"
			      "  ATOMG.ADD.F16 RZ, [R2+0x10], R9 ;\n"
			      "  ATOMS.ADD.F16 RZ, [0xc], R9 ;\n"
			      "  MOV R10, 0x3f80 ;\n"
			      "  ATOMG.ADD.BF16 RZ, [R2+0x12], R10 ;\n"
			      "  MOV R11, 0x38003c00 ;\n"
			      "  ATOMG.ADD.F16X2 RZ, [R2+0x14], R11 ;\n"
			      "  MOV R12, 0x3f804000 ;\n"
			      "  ATOMG.ADD.BF16X2 RZ, [R2+0x18], R12 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  LDS.64 R14, [0x0] ;\n  LDS.32 R16, [0x8] ;\n"
			      "  LDS.32 R17, [0xc] ;\n"
			      "  @P0 STG.64 [R2+0x20], R14 ;\n"
			      "  @P0 STG.32 [R2+0x28], R16 ;\n"
			      "  @P0 STG.32 [R2+0x2c], R17 ;\n"
			      /* the values each add returned are all different */
			      KT_STORE("R25", "0x100")
			      "  EXIT ;\n"));
	k.block[0] = 64;
	KT_RUN_OK(&k);
	EXPECT_EQ(0x4040000000000000ull, dword_at(&k, 0)); /* 32.0 */
	EXPECT_EQ(0u, kt_word(&k, 2));			/* flushed each time */
	EXPECT_EQ(0x42800000u, kt_word(&k, 3));		/* 64.0f */
	EXPECT_EQ(0x5400u, half_at(&k, 16));		/* 64.0 in f16 */
	EXPECT_EQ(0x4280u, half_at(&k, 18));		/* 64.0 in bf16 */
	EXPECT_EQ(0x5400u, half_at(&k, 20));		/* 64.0 */
	EXPECT_EQ(0x5000u, half_at(&k, 22));		/* 32.0 */
	EXPECT_EQ(0x4300u, half_at(&k, 24));		/* 128.0 in bf16 */
	EXPECT_EQ(0x4280u, half_at(&k, 26));		/* 64.0 */
	EXPECT_EQ(0x4040000000000000ull, dword_at(&k, 32)); /* shared f64 */
	EXPECT_EQ(0x01800000u, kt_word(&k, 10));	/* 64 x 2^-130: kept */
	EXPECT_EQ(0x5400u, kt_word(&k, 11) & 0xffffu); /* shared f16 */
	EXPECT_EQ(0u, kt_word(&k, 11) >> 16);		/* its neighbour */
	/* each add returned another of 0.0 .. 63.0 */
	for (uint32_t t = 0; t < 64; t++) {
		float f;
		uint32_t bits = kt_word(&k, 64 + t);

		memcpy(&f, &bits, 4);
		EXPECT_TRUE(f >= 0.0f && f <= 63.0f && f == (float)(int)f);
		if (f >= 0.0f && f <= 63.0f)
			seen |= 1ull << (int)f;
	}
	EXPECT_EQ(~0ull, seen);
	kt_free(&k);
}

/* the NaN rules of a 16-bit add, and bf16 rounding to nearest even */
TEST(half_add_nan_and_rounding)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE
				 "  MOV R4, 0x7d01 ;\n" /* a signalling f16 NaN */
				 "  ATOMG.ADD.F16 R5, [R2+0x0], R4 ;\n"
				 "  MOV R6, 0x3b80 ;\n" /* bf16 2^-8 */
				 "  ATOMG.ADD.BF16 R7, [R2+0x4], R6 ;\n"
				 "  STG.32 [R2+0x8], R5 ;\n"
				 "  STG.32 [R2+0xc], R7 ;\n"
				 "  EXIT ;\n"));
	k.block[0] = 1;
	kt_set_word(&k, 0, 0xabcd3c00u); /* f16 1.0, neighbour 0xabcd */
	kt_set_word(&k, 1, 0x3f81u);	 /* bf16 1 + 2^-7 */
	KT_RUN_OK(&k);
	EXPECT_EQ(0xabcd7fffu, kt_word(&k, 0)); /* the GPU's NaN, neighbour kept */
	/* 1 + 3 * 2^-8: halfway between 1 + 2^-7 and 1 + 2^-6, to even */
	EXPECT_EQ(0x3f82u, kt_word(&k, 1));
	EXPECT_EQ(0x3c00u, kt_word(&k, 2)); /* the old values, zero-extended */
	EXPECT_EQ(0x3f81u, kt_word(&k, 3));
	kt_free(&k);
}

/*
 * Half min/max: memory, operand, min, max.  What an H200's atomics give
 * (tests/ptx/gen atom.expected): a NaN loses to a number (quiet or
 * signalling, any sign and payload), two NaNs give 0x7fff, -0 < +0,
 * subnormals stay.
 */
struct mm_case {
	uint16_t a, b, min, max;
};

static const struct mm_case f16_mm[] = {
	{ 0x3c00, 0x4000, 0x3c00, 0x4000 }, /* 1, 2 */
	{ 0x8000, 0x0000, 0x8000, 0x0000 }, /* -0, +0 */
	{ 0x0000, 0x8000, 0x8000, 0x0000 },
	{ 0x7e01, 0x3c00, 0x3c00, 0x3c00 }, /* quiet NaN with a payload, 1 */
	{ 0xbc00, 0x7c01, 0xbc00, 0xbc00 }, /* -1, signalling NaN */
	{ 0x7e01, 0xfc01, 0x7fff, 0x7fff }, /* two NaNs */
	{ 0xfc00, 0x8001, 0xfc00, 0x8001 }, /* -inf, -subnormal */
	{ 0x0001, 0x03ff, 0x0001, 0x03ff }, /* subnormals */
	{ 0x7c00, 0x7bff, 0x7bff, 0x7c00 }, /* inf, the largest finite */
	{ 0xc100, 0xbc00, 0xc100, 0xbc00 }, /* -2.5, -1 */
	{ 0x8001, 0x0001, 0x8001, 0x0001 },
	{ 0x3555, 0x3555, 0x3555, 0x3555 },
	{ 0x7fff, 0x8000, 0x8000, 0x8000 }, /* NaN, -0 */
	{ 0xfc00, 0x7c00, 0xfc00, 0x7c00 },
};

static const struct mm_case bf16_mm[] = {
	{ 0x3f80, 0x4000, 0x3f80, 0x4000 },
	{ 0x8000, 0x0000, 0x8000, 0x0000 },
	{ 0x0000, 0x8000, 0x8000, 0x0000 },
	{ 0x7fc1, 0x3f80, 0x3f80, 0x3f80 },
	{ 0xbf80, 0x7f81, 0xbf80, 0xbf80 },
	{ 0x7fc1, 0xff81, 0x7fff, 0x7fff },
	{ 0xff80, 0x8001, 0xff80, 0x8001 },
	{ 0x0001, 0x007f, 0x0001, 0x007f },
	{ 0x7f80, 0x7f7f, 0x7f7f, 0x7f80 },
	{ 0xc020, 0xbf80, 0xc020, 0xbf80 },
	{ 0x8001, 0x0001, 0x8001, 0x0001 },
	{ 0x3eab, 0x3eab, 0x3eab, 0x3eab },
	{ 0x7fff, 0x8000, 0x8000, 0x8000 },
	{ 0xff80, 0x7f80, 0xff80, 0x7f80 },
};

#define MM_N (sizeof(f16_mm) / sizeof(f16_mm[0]))

/*
 * Thread t (of MM_N) on word t: its low half holds case t's memory value,
 * its high half case t + 5's; the operand word is at [0x100 + 4t].  The
 * x2 forms take the word at once, the 16-bit ones each half on its own;
 * on global memory in place, on shared memory through [4t] there, stored
 * back to [0x200 + 4t]; the old values to [0x300 + 4t] (global) and
 * [0x380 + 4t] (shared).
 */
static const char mm_src[] =
	".shared s, 64\n" KT_PROLOGUE
	"  IADD R6, R1, R2 ;\n  MOV R7, R3 ;\n"
	"  LDG.32 R4, [R6+0x100] ;\n  LDG.32 R12, [R6+0x0] ;\n"
	"  STS.32 [R1+0x0], R12 ;\n"
	"  SHR.U32 R10, R4, 0x10 ;\n"
	"%s"
	"  LDS.32 R12, [R1+0x0] ;\n"
	"  STG.32 [R6+0x200], R12 ;\n"
	"  STG.32 [R6+0x300], R5 ;\n  STG.32 [R6+0x380], R13 ;\n"
	"  EXIT ;\n";

static uint32_t mm_want(const struct mm_case *c, unsigned t, bool max)
{
	const struct mm_case *lo = &c[t], *hi = &c[(t + 5) % MM_N];

	return (uint32_t)(max ? hi->max : hi->min) << 16 | (max ? lo->max : lo->min);
}

TEST(half_min_max_exact)
{
	static const char *const ops[] = { "MIN", "MAX" };
	static const char *const types[] = { "F16", "BF16", "F16X2", "BF16X2" };
	char body[512], src[1024];
	struct kt k;

	for (unsigned o = 0; o < 2; o++) {
		for (unsigned ty = 0; ty < 4; ty++) {
			const struct mm_case *c = ty & 1 ? bf16_mm : f16_mm;

			if (ty >= 2)
				snprintf(body, sizeof(body),
					 "  ATOMG.%s.%s R5, [R6+0x0], R4 ;\n"
					 "  ATOMS.%s.%s R13, [R1+0x0], R4 ;\n",
					 ops[o], types[ty], ops[o], types[ty]);
			else /* the halves' old values put together again */
				snprintf(body, sizeof(body),
					 "  ATOMG.%s.%s R5, [R6+0x0], R4 ;\n"
					 "  ATOMG.%s.%s R11, [R6+0x2], R10 ;\n"
					 "  ATOMS.%s.%s R13, [R1+0x0], R4 ;\n"
					 "  ATOMS.%s.%s R14, [R1+0x2], R10 ;\n"
					 "  SHL R11, R11, 0x10 ;\n  LOP.OR R5, R5, R11 ;\n"
					 "  SHL R14, R14, 0x10 ;\n  LOP.OR R13, R13, R14 ;\n",
					 ops[o], types[ty], ops[o], types[ty], ops[o], types[ty],
					 ops[o], types[ty]);
			snprintf(src, sizeof(src), mm_src, body);
			ASSERT_EQ(0, kt_load(&k, src)) {
				TH_LOG("%s", k.err);
			}
			k.block[0] = MM_N;
			for (unsigned t = 0; t < MM_N; t++) {
				const struct mm_case *hi = &c[(t + 5) % MM_N];

				kt_set_word(&k, t, (uint32_t)hi->a << 16 | c[t].a);
				kt_set_word(&k, 64 + t, (uint32_t)hi->b << 16 | c[t].b);
			}
			KT_RUN_OK(&k);
			for (unsigned t = 0; t < MM_N; t++) {
				uint32_t want = mm_want(c, t, o);
				uint32_t mem = (uint32_t)c[(t + 5) % MM_N].a << 16 | c[t].a;

				EXPECT_EQ(want, kt_word(&k, t)) {
					TH_LOG("ATOMG.%s.%s case %u", ops[o], types[ty], t);
				}
				EXPECT_EQ(want, kt_word(&k, 128 + t)) {
					TH_LOG("ATOMS.%s.%s case %u", ops[o], types[ty], t);
				}
				EXPECT_EQ(mem, kt_word(&k, 192 + t)); /* the old values */
				EXPECT_EQ(mem, kt_word(&k, 224 + t));
			}
			kt_free(&k);
		}
	}
}

/*
 * 16-bit CAS: 64 threads, even ones counting in half 0 of a word and odd
 * ones in half 1, each with a CAS loop, in global and in shared memory.
 */
TEST(cas_16_bit_leaves_the_other_half)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared s, 8\n" KT_PROLOGUE
			      "  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
			      "  @P0 STS.64 [0x0], RZ ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  LOP.AND R4, R0, 0x1 ;\n  SHL R4, R4, 0x1 ;\n"
			      "  IADD R5, R2, R4 ;\n  MOV R6, R3 ;\n"
			      "  MOV R13, 0x0 ;\n"
			      "g:  LDG.U16 R7, [R5+0x0] ;\n"
			      "gl: IADD R8, R7, 0x1 ;\n"
			      "  ATOMG.CAS.U16 R9, [R5+0x0], R7, R8 ;\n"
			      "  ISETP.NE.U32 P0, R9, R7 ;\n"
			      "  MOV R7, R9 ;\n"
			      "  @P0 BRA gl ;\n"
			      "  LDS.U16 R10, [R4+0x0] ;\n"
			      "sl: IADD R11, R10, 0x1 ;\n"
			      "  ATOMS.CAS.U16 R12, [R4+0x0], R10, R11 ;\n"
			      "  ISETP.NE.U32 P0, R12, R10 ;\n"
			      "  MOV R10, R12 ;\n"
			      "  @P0 BRA sl ;\n"
			      "  IADD R13, R13, 0x1 ;\n"
			      "  ISETP.LT.U32 P1, R13, 0x10 ;\n"
			      "  @P1 BRA g ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
			      "  LDS.32 R14, [0x0] ;\n"
			      "  @P0 STG.32 [R2+0x4], R14 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 64;
	KT_RUN_OK(&k);
	EXPECT_EQ(32u * 16u << 16 | 32u * 16u, kt_word(&k, 0));
	EXPECT_EQ(32u * 16u << 16 | 32u * 16u, kt_word(&k, 1));
	kt_free(&k);
}

/* instruction @i of @k's code */
static uint8_t *code_at(struct kt *k, unsigned i)
{
	return (uint8_t *)k->obj.code + i * VGPU_INSN_BYTES;
}

/* misaligned 64- and 16-bit atomics, and legal-looking illegal pairs */
TEST(misaligned_and_illegal_forms)
{
	static const char *const bad[] = {
		"  ATOMG.ADD.U64 RZ, [R2+0x4], R4 ;\n",
		"  ATOMS.CAS.64 RZ, [0x4], R4, R6 ;\n",
		"  ATOMG.ADD.F16 RZ, [R2+0x1], R4 ;\n",
		"  ATOMS.CAS.U16 RZ, [0x3], R4, R6 ;\n",
	};
	const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[VGPU_MG_ATOMOP];
	char src[512], err[256];
	struct vgpu_object o;
	uint64_t w[2];
	struct kt k;
	int r, row;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(src, sizeof(src), ".shared s, 16\n" KT_PROLOGUE "%s  EXIT ;\n", bad[i]);
		ASSERT_EQ(0, kt_load(&k, src));
		k.block[0] = 1;
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_MISALIGNED, k.exc.code) {
			TH_LOG("%s", bad[i]);
		}
		kt_free(&k);
	}

	/*
	 * An .ADD word with the operation changed in it: .MIN/.MAX of a half
	 * type is legal, of F32/F64 not, nor any bit operation on a float
	 */
	static const char no_minmax[] = "a floating-point .MIN/.MAX is of F16, BF16, F16X2 or BF16X2";
	static const char add_minmax[] = "a floating-point atomic is .ADD, .MIN or .MAX";
	static const struct {
		const char *insn, *as, *why; /* the edited word as text, and why not */
		unsigned op;
		bool legal;
	} edit[] = {
		{ "ATOMG.ADD.F32", "ATOMG.MIN.F32", no_minmax, VGPU_MOD_ATOMOP_MIN, false },
		{ "ATOMS.ADD.F64", "ATOMS.MAX.F64", no_minmax, VGPU_MOD_ATOMOP_MAX, false },
		{ "ATOMG.ADD.F16", "ATOMG.EXCH.F16", add_minmax, VGPU_MOD_ATOMOP_EXCH, false },
		{ "ATOMS.ADD.BF16X2", "ATOMS.AND.BF16X2", add_minmax, VGPU_MOD_ATOMOP_AND, false },
		{ "ATOMG.ADD.F16X2", "ATOMG.XOR.F16X2", add_minmax, VGPU_MOD_ATOMOP_XOR, false },
		{ "ATOMG.ADD.BF16", "ATOMG.MAX.BF16", NULL, VGPU_MOD_ATOMOP_MAX, true },
		{ "ATOMS.ADD.F16X2", "ATOMS.MIN.F16X2", NULL, VGPU_MOD_ATOMOP_MIN, true },
	};

	for (size_t i = 0; i < sizeof(edit) / sizeof(edit[0]); i++) {
		snprintf(src, sizeof(src), ".shared s, 16\n" KT_PROLOGUE
			 "  %s RZ, [R2+0x0], RZ ;\n  EXIT ;\n", edit[i].insn);
		if (edit[i].insn[4] == 'S')
			snprintf(src, sizeof(src), ".shared s, 16\n" KT_PROLOGUE
				 "  %s RZ, [0x0], RZ ;\n  EXIT ;\n", edit[i].insn);
		ASSERT_EQ(0, kt_load(&k, src));
		memcpy(w, code_at(&k, 3), 16);
		/* the assembler takes the pair as text, or names what is wrong */
		snprintf(src, sizeof(src), ".kernel k\n  %s RZ, [%s], RZ ;\n  EXIT ;\n", edit[i].as,
			 edit[i].insn[4] == 'S' ? "0x0" : "R2");
		r = vgpu_assemble(src, strlen(src), "t.vgs", &o, err, sizeof(err));
		EXPECT_EQ(edit[i].legal ? 0 : -EINVAL, r);
		if (!r) {
			vgpu_object_fini(&o);
		} else {
			snprintf(src, sizeof(src), "t.vgs:2:3: error: %s\n", edit[i].why);
			EXPECT_STREQ(src, err);
		}
		row = edit[i].insn[4] == 'S' ? VGPU_I_ATOMS : VGPU_I_ATOMG;
		ASSERT_EQ(row, vgpu_isa_decode(w));
		vgpu_field_set(w, g->pos, g->width, edit[i].op);
		EXPECT_EQ(edit[i].legal ? row : -1, vgpu_isa_decode(w)) {
			TH_LOG("%s", edit[i].as);
		}
		memcpy(code_at(&k, 3), w, 16);
		vgpu_prog_free(k.prog);
		ASSERT_EQ(0, vgpu_prog_load(k.obj.code, k.obj.code_size, &k.prog));
		k.block[0] = 1;
		if (edit[i].legal) {
			KT_RUN_OK(&k);
		} else {
			EXPECT_EQ(-1, kt_run(&k));
			EXPECT_EQ((uint32_t)VGPU_EXC_ILLEGAL_INSTR, k.exc.code);
			EXPECT_EQ(3u * VGPU_INSN_BYTES, k.exc.pc);
		}
		kt_free(&k);
	}
}

/* ---- two SMs on two host threads ---- */

#define ITERS 64

/*
 * g: [0] u64 += 0xffffffff, [8] f64 += 1.0, [16 + 2 * side] u16 CAS
 * counter of this side, [20] f16x2 += {1.0, 0.5} (threads 0..7), [24 +
 * 2 * side] bf16 += 1.0 (threads 0..3), [32] max.s64 tid - 1000 - side;
 * [64 + 4 * side]: this side has started.  256 threads, ITERS rounds.
 */
static const char hammer_src[] =
	".kernel hammer\n.param ptr g\n.param u32 side\n"
	"  LDP.64 R2, [g] ;\n  LDP.32 R1, [side] ;\n"
	"  S2R R0, SR_TID ;\n"
	"  ISETP.NE.U32 P0, R0, 0x0 ;\n"
	"  @P0 BRA go ;\n"
	/* thread 0: say this side started, wait for the other */
	"  SHL R4, R1, 0x2 ;\n  IADD R5, R2, R4 ;\n  MOV R6, R3 ;\n"
	"  MOV R7, 0x1 ;\n  STG.32 [R5+0x40], R7 ;\n"
	"  LOP.XOR R4, R4, 0x4 ;\n  IADD R5, R2, R4 ;\n"
	"w:  LDG.32 R8, [R5+0x40] ;\n"
	"  ISETP.EQ.U32 P1, R8, 0x0 ;\n"
	"  @P1 BRA w ;\n"
	"go: BAR.SYNC 0x0 ;\n"
	"  SHL R4, R1, 0x1 ;\n  IADD R20, R2, R4 ;\n  MOV R21, R3 ;\n"
	"  MOV R10, 0xffffffff ;\n  MOV R11, 0x0 ;\n"
	"  MOV R12, 0x0 ;\n  MOV R13, 0x3ff00000 ;\n"
	"  MOV R14, 0x38003c00 ;\n  MOV R15, 0x3f80 ;\n"
	"  IADD R16, R0, -0x3e8 ;\n  ISUB R16, R16, R1 ;\n  SHR.S32 R17, R16, 0x1f ;\n"
	"  ISETP.LT.U32 P2, R0, 0x8 ;\n  ISETP.LT.U32 P3, R0, 0x4 ;\n"
	"  MOV R18, 0x0 ;\n"
	"l:  ATOMG.ADD.U64 RZ, [R2+0x0], R10 ;\n"
	"  ATOMG.ADD.F64 RZ, [R2+0x8], R12 ;\n"
	"  @P2 ATOMG.ADD.F16X2 RZ, [R2+0x14], R14 ;\n"
	"  @P3 ATOMG.ADD.BF16 RZ, [R20+0x18], R15 ;\n"
	"  ATOMG.MAX.S64 RZ, [R2+0x20], R16 ;\n"
	"  LDG.U16 R22, [R20+0x10] ;\n"
	"c:  IADD R23, R22, 0x1 ;\n"
	"  ATOMG.CAS.U16 R24, [R20+0x10], R22, R23 ;\n"
	"  ISETP.NE.U32 P4, R24, R22 ;\n"
	"  MOV R22, R24 ;\n"
	"  @P4 BRA c ;\n"
	"  IADD R18, R18, 0x1 ;\n"
	"  ISETP.LT.U32 P5, R18, 0x40 ;\n" /* ITERS */
	"  @P5 BRA l ;\n"
	"  EXIT ;\n";

struct side {
	struct kt *k;
	struct vgpu_sm *sm;
	uint32_t side;
	struct vgpu_exception_record exc;
	int ret;
};

static void *run_side(void *arg)
{
	struct side *s = arg;
	uint8_t params[16] = { 0 };
	uint64_t base = GMEM_BASE;
	struct vgpu_launch l;

	memcpy(params, &base, 8);
	memcpy(params + 8, &s->side, 4);
	memset(&l, 0, sizeof(l));
	l.prog = s->k->prog;
	l.entry = s->k->obj.kernels[0].entry;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = 256;
	l.block[1] = l.block[2] = 1;
	l.params = params;
	l.param_size = sizeof(params);
	l.seed = 1 + s->side;
	l.mem = &vgpu_hostmem_ops;
	l.mem_opaque = &s->k->hm;
	s->ret = vgpu_sm_launch(s->sm, &l, &s->exc);
	return NULL;
}

/*
 * One round: both sides at once on fresh memory; true when every total is
 * exact.  A round takes milliseconds and two host threads overlap for
 * only part of it on a loaded machine, so the test runs ROUNDS of them:
 * with a read-modify-write that is not atomic some round loses updates.
 */
static bool hammer_round(struct __test_metadata *_metadata, struct kt *k)
{
	struct side s[2];
	pthread_t th[2];
	bool ok = true;

	memset(k->mem.buf, 0, 128);
	kt_set_word(k, 9, 0x80000000u); /* max.s64 starts at INT64_MIN */
	for (int i = 0; i < 2; i++) {
		s[i] = (struct side){ .k = k, .side = (uint32_t)i, .ret = -1 };
		s[i].sm = i ? vgpu_sm_new(NULL) : k->sm;
		if (!s[i].sm)
			return false;
	}
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, run_side, &s[i]))
			s[i].ret = -2;
	for (int i = 0; i < 2; i++)
		if (s[i].ret != -2)
			pthread_join(th[i], NULL);
	vgpu_sm_free(s[1].sm);
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(0, s[i].ret) {
			TH_LOG("side %d: %s", i, s[i].exc.msg);
		}
		ok &= !s[i].ret;
	}
#define EXACT(want, got)                                                       \
	do {                                                                   \
		EXPECT_EQ(want, got);                                          \
		ok &= (want) == (got);                                         \
	} while (0)
	EXACT(2ull * 256 * ITERS * 0xffffffffull, dword_at(k, 0));
	EXACT(0x40e0000000000000ull, dword_at(k, 8)); /* 32768.0 */
	EXACT(256u * ITERS, half_at(k, 16));
	EXACT(256u * ITERS, half_at(k, 18));
	EXACT(0x6400u, half_at(k, 20)); /* 1024.0: 2 x 8 x 64 */
	EXACT(0x6000u, half_at(k, 22)); /* 512.0 */
	EXACT(0x4380u, half_at(k, 24)); /* 256.0 in bf16: 4 x 64 */
	EXACT(0x4380u, half_at(k, 26));
	EXACT((uint64_t)(255 - 1000), dword_at(k, 32));
#undef EXACT
	return ok;
}

#define ROUNDS 40

TEST(two_sms_lose_no_update)
{
	struct kt k;
	int r;

	ASSERT_EQ(0, kt_load(&k, hammer_src));
	for (r = 0; r < ROUNDS && hammer_round(_metadata, &k); r++)
		;
	EXPECT_EQ(ROUNDS, r);
	kt_free(&k);
}

TEST_HARNESS_MAIN
