/* SPDX-License-Identifier: MIT */
/*
 * CVT (docs/core.md "Conversions"): rounding in every direction at the
 * edges (ties, overflow, subnormals), saturation, NaN rules, register
 * pairs for 64-bit types, and the assembler/disassembler round trip.
 * The expected words are what an H200 computes for the same PTX cvt
 * (tests/ptx/gen/cvt.expected has the systematic check).
 */
#include <stdio.h>

#include "core_priv.h"
#include "kernel_util.h"

struct cvt_case {
	const char *insn; /* CVT with R10 <- R4 (pairs R10:R11, R4:R5) */
	uint32_t lo, hi;  /* the source */
	uint32_t want, want_hi;
};

static const struct cvt_case cases[] = {
	/* f32 -> f16: 1 + 2^-23 to nearest, up; overflow by direction */
	{ "CVT.F16.F32", 0x3f800001, 0, 0x3c00, 0 },
	{ "CVT.F16.F32.RP", 0x3f800001, 0, 0x3c01, 0 },
	{ "CVT.F16.F32", 0x477ff000, 0, 0x7c00, 0 },	/* 65520: a tie, to inf */
	{ "CVT.F16.F32.RZ", 0x477ff000, 0, 0x7bff, 0 },
	{ "CVT.F16.F32.RM", 0xc77ff000, 0, 0xfc00, 0 },
	{ "CVT.F16.F32", 0x33000001, 0, 0x0001, 0 },	/* just above half the least subnormal */
	{ "CVT.F16.F32", 0x33000000, 0, 0x0000, 0 },	/* a tie to even: zero */
	{ "CVT.F16.F32", 0x7fc12345, 0, 0x7fff, 0 },	/* canonical NaN */
	/* bf16: ties to even */
	{ "CVT.BF16.F32", 0x3f808000, 0, 0x3f80, 0 },
	{ "CVT.BF16.F32", 0x3f818000, 0, 0x3f82, 0 },
	{ "CVT.BF16.F32.RELU", 0xbf800000, 0, 0x0000, 0 },
	/* widening is exact */
	{ "CVT.F32.F16", 0x0001, 0, 0x33800000, 0 },
	{ "CVT.F64.F32", 0x3fc00000, 0, 0, 0x3ff80000 },
	/* float to integer: saturating, NaN 0 (from f64 the least value's bits) */
	{ "CVT.S32.F32.RNI", 0x7fc00000, 0, 0, 0 },
	{ "CVT.S32.F64.RZI", 0, 0x7ff80000, 0x80000000, 0 },
	{ "CVT.U8.F32.RNI", 0x43800000, 0, 0xff, 0 },	/* 256 */
	{ "CVT.S8.F32.RMI", 0xbfc00000, 0, 0xfffffffe, 0 }, /* -1.5: -2, extended */
	{ "CVT.U64.F32.RPI", 0x5f800000, 0, 0xffffffff, 0xffffffff },
	{ "CVT.S32.F32.RNI", 0x40200000, 0, 2, 0 },	/* 2.5: even */
	{ "CVT.S32.F32.RNI.FTZ", 0x00000001, 0, 0, 0 },
	{ "CVT.S32.F32.RPI", 0x00000001, 0, 1, 0 },
	/* integers: .SAT clamps, otherwise the low bits */
	{ "CVT.U8.S32.RN.SAT", 0xfffffffb, 0, 0, 0 },
	{ "CVT.U8.S32.RN.SAT", 300, 0, 255, 0 },
	{ "CVT.S8.S32", 0x80, 0, 0xffffff80, 0 },
	{ "CVT.S16.U64.RN.SAT", 0, 1, 0x7fff, 0 },
	/* 64-bit integer to f32 */
	{ "CVT.F32.U64", 0xffffffff, 0xffffffff, 0x5f800000, 0 },
	{ "CVT.F32.U64.RZ", 0xffffffff, 0xffffffff, 0x5f7fffff, 0 },
	{ "CVT.F32.S64.RM", 0x00000001, 0x80000000, 0xdf000000, 0 }, /* -(2^63 - 1) */
	{ "CVT.F32.S64.RP", 0x00000001, 0x80000000, 0xdeffffff, 0 },
	/* .SAT on a float: [+0, 1] */
	{ "CVT.F32.U32.RN.SAT", 7, 0, 0x3f800000, 0 },
	{ "CVT.F32.F32.RNI.SAT", 0x80000000, 0, 0, 0 },
	/* to integral values */
	{ "CVT.F32.F32.RMI", 0xbf000000, 0, 0xbf800000, 0 },
	{ "CVT.F32.F32.RZI", 0xbf000000, 0, 0x80000000, 0 },
	/* 8-bit floats */
	{ "CVT.E4M3.F32.RN.SATFINITE", 0x447a0000, 0, 0x7e, 0 }, /* 1000: 448 */
	{ "CVT.E4M3.F32.RN.SATFINITE", 0x3f800000, 0, 0x38, 0 },
	{ "CVT.E5M2.F32.RN.SATFINITE", 0xc7800000, 0, 0xfb, 0 }, /* -65536: -57344 */
	{ "CVT.F16.E4M3", 0x7e, 0, 0x5f00, 0 },
	/* tf32 */
	{ "CVT.TF32.F32.RNA", 0x3f801000, 0, 0x3f802000, 0 },
	{ "CVT.TF32.F32.RN", 0x3f801000, 0, 0x3f800000, 0 },
};

TEST(conversions)
{
	char src[16384];
	size_t n = 0;
	struct kt k;

	n += (size_t)snprintf(src + n, sizeof(src) - n, KT_PROLOGUE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		n += (size_t)snprintf(src + n, sizeof(src) - n,
				      "  MOV R4, 0x%x ;\n  MOV R5, 0x%x ;\n  MOV R11, 0x0 ;\n"
				      "  %s R10, R4 ;\n" KT_STORE("R10", "0x%zx")
				      KT_STORE("R11", "0x%zx"),
				      cases[i].lo, cases[i].hi, cases[i].insn, i * 8, i * 8 + 4);
	n += (size_t)snprintf(src + n, sizeof(src) - n, "  EXIT ;\n");
	ASSERT_LT(n, sizeof(src));
	ASSERT_EQ(0, kt_load(&k, src));
	k.block[0] = 1;
	KT_RUN_OK(&k);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(cases[i].want, kt_word(&k, (uint32_t)i * 2))
			TH_LOG("%s of %08x %08x", cases[i].insn, cases[i].hi, cases[i].lo);
		EXPECT_EQ(cases[i].want_hi, kt_word(&k, (uint32_t)i * 2 + 1))
			TH_LOG("%s of %08x %08x (high word)", cases[i].insn, cases[i].hi,
			       cases[i].lo);
	}
	kt_free(&k);
}

TEST_HARNESS_MAIN
