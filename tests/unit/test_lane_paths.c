/* SPDX-License-Identifier: MIT */
/*
 * The core's whole-warp shortcuts against per-lane answers computed here:
 * SHFL with one offset for a whole warp (exec.c: the modes' block copies),
 * and loads and stores of 4, 8 and 16 bytes whose lanes all lie in one
 * span of global or shared memory (exec_mem.c: load_rows, store_rows).
 * Each runs with a whole warp (the shortcut) and with 24 threads (the
 * lane-by-lane path), over offsets at and past the warp's edges, offsets
 * in an immediate, in a register all lanes agree on and in one they do
 * not, destinations that are also the source or the address registers,
 * addresses in and against lane order.
 */
#include <stdio.h>
#include <string.h>

#include "kernel_util.h"
#include "vgpu.h"

#define NSHFL_OFF 8
static const uint32_t shfl_off[NSHFL_OFF] = { 0, 1, 3, 16, 31, 32, 33, 0xffffffffu };
static const char *const shfl_mode[4] = { "IDX", "UP", "DOWN", "BFLY" };
/* shfl_src()'s four cases per offset */
static const char *const shfl_form[4] = { "immediate", "uniform register",
					  "register + (lane & 1) of", "into its source, immediate" };

/* What lane @l of @n active lanes (0..n-1) reads: PTX's shfl, the source
 * value of lane s being 3 s + 100. */
static uint32_t shfl_want(int mode, uint32_t l, uint32_t b, uint32_t n)
{
	int64_t s;

	switch (mode) {
	case 0: s = b & 31; break;
	case 1: s = (int64_t)l - b; break;
	case 2: s = (int64_t)l + b; break;
	default: s = l ^ (b & 31); break;
	}
	if (s < 0 || s >= (int64_t)n)
		s = l;
	return 3 * (uint32_t)s + 100;
}

/*
 * One kernel per mode: for each offset, three forms (immediate, uniform
 * register, register of offset + (tid & 1)), and the immediate form into
 * its own source register; case i stores at out + 0x80 i.
 */
static void shfl_src(char *buf, size_t len, int mode)
{
	size_t o = 0;
	unsigned c = 0;

#define P(...) (o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__))
	P("%s", KT_PROLOGUE "  SHL R20, R0, 0x1 ;\n  IADD R20, R20, R0 ;\n"
				"  IADD R20, R20, 0x64 ;\n  LOP.AND R19, R0, 0x1 ;\n");
	for (unsigned i = 0; i < NSHFL_OFF; i++) {
		uint32_t b = shfl_off[i];

		P("  SHFL.%s R17, R20, 0x%x ;\n", shfl_mode[mode], b);
		P("  IADD R8, R1, 0x%x ;\n  IADD R8, R8, R2 ;\n  MOV R9, R3 ;\n"
		  "  STG.32 [R8], R17 ;\n", 0x80 * c++);
		P("  MOV R18, 0x%x ;\n  SHFL.%s R17, R20, R18 ;\n", b, shfl_mode[mode]);
		P("  IADD R8, R1, 0x%x ;\n  IADD R8, R8, R2 ;\n  MOV R9, R3 ;\n"
		  "  STG.32 [R8], R17 ;\n", 0x80 * c++);
		P("  IADD R18, R19, 0x%x ;\n  SHFL.%s R17, R20, R18 ;\n", b, shfl_mode[mode]);
		P("  IADD R8, R1, 0x%x ;\n  IADD R8, R8, R2 ;\n  MOV R9, R3 ;\n"
		  "  STG.32 [R8], R17 ;\n", 0x80 * c++);
		P("  MOV R21, R20 ;\n  SHFL.%s R21, R21, 0x%x ;\n", shfl_mode[mode], b);
		P("  IADD R8, R1, 0x%x ;\n  IADD R8, R8, R2 ;\n  MOV R9, R3 ;\n"
		  "  STG.32 [R8], R21 ;\n", 0x80 * c++);
	}
	P("  EXIT ;\n");
#undef P
}

TEST(shfl_whole_warp_and_lane_by_lane)
{
	static char src[16384];

	for (int mode = 0; mode < 4; mode++) {
		for (uint32_t n = 24; n <= 32; n += 8) {
			struct kt k;

			shfl_src(src, sizeof(src), mode);
			ASSERT_EQ(0, kt_load(&k, src)) TH_LOG("%s", k.err);
			k.block[0] = n;
			KT_RUN_OK(&k);
			for (unsigned i = 0; i < NSHFL_OFF; i++)
				for (unsigned f = 0; f < 4; f++)
					for (uint32_t l = 0; l < n; l++) {
						uint32_t b = shfl_off[i] + (f == 2 ? (l & 1) : 0);

						EXPECT_EQ(shfl_want(mode, l, b, n),
							  kt_word(&k, 32 * (4 * i + f) + l))
						TH_LOG("SHFL.%s %s 0x%x, %u lanes, lane %u",
						       shfl_mode[mode], shfl_form[f], shfl_off[i], n, l);
					}
			kt_free(&k);
		}
	}
}

/*
 * Loads and stores, global and shared, of 4, 8 and 16 bytes.  Input at
 * word 0x1000 + i: 0xa0000000 + i.  Lane l's element: l, or 31 - l
 * (against lane order).  Each load's destination is its address
 * register(s) (R10, and R11 for global); the loaded words are stored
 * to out + 0x80 * (4 * case + k) (k: the word of the element).  Shared
 * memory is first filled from global by STS of the same size, so a
 * store's lanes and a load's both take the span.  The stores back to
 * global also take a span (out + 0x2000 + element * size): read back
 * by the test.
 */
static void mem_src(char *buf, size_t len, unsigned words, bool reverse, bool shared)
{
	const unsigned size = 4 * words;
	size_t o = 0;

#define P(...) (o += (size_t)snprintf(buf + o, len - o, __VA_ARGS__))
	P("%s", ".shared sbuf, 0x200, 16\n" KT_PROLOGUE);
	if (reverse)
		P("  MOV R12, 0x1f ;\n  ISUB R12, R12, R0 ;\n"); /* element */
	else
		P("  MOV R12, R0 ;\n");
	P("  SHL R15, R12, 0x%x ;\n", __builtin_ctz(size)); /* element * size */
	/* R10:R11 = out + 0x4000 + element * size: the input */
	P("  IADD R10, R15, 0x4000 ;\n  IADD R10, R10, R2 ;\n  MOV R11, R3 ;\n");
	if (shared) {
		P("  LDG.%u R24, [R10] ;\n", 8 * size);
		P("  MOV R14, sbuf ;\n  IADD R14, R14, R15 ;\n");
		P("  STS.%u [R14], R24 ;\n", 8 * size);
		P("  BAR.SYNC 0x0 ;\n");
		P("  MOV R10, R14 ;\n  LDS.%u R10, [R10] ;\n", 8 * size);
	} else {
		P("  LDG.%u R10, [R10] ;\n", 8 * size);
	}
	for (unsigned k = 0; k < words; k++) {
		P("  IADD R8, R1, 0x%x ;\n  IADD R8, R8, R2 ;\n  MOV R9, R3 ;\n"
		  "  STG.32 [R8], R%u ;\n", 0x80 * k, 10 + k);
	}
	/* and back out as one access: out + 0x2000 + element * size */
	P("  IADD R26, R15, 0x2000 ;\n  IADD R26, R26, R2 ;\n  MOV R27, R3 ;\n");
	P("  STG.%u [R26], R10 ;\n", 8 * size);
	/* every lane to one word: the highest lane's value stays */
	P("  IADD R26, R2, 0x3000 ;\n  MOV R27, R3 ;\n  STG.32 [R26], R0 ;\n");
	P("  EXIT ;\n");
#undef P
}

TEST(loads_and_stores_whole_warp_and_lane_by_lane)
{
	static char src[8192];

	for (unsigned words = 1; words <= 4; words *= 2)
		for (int rev = 0; rev < 2; rev++)
			for (int shared = 0; shared < 2; shared++)
				for (uint32_t n = 24; n <= 32; n += 8) {
					struct kt k;

					mem_src(src, sizeof(src), words, rev, shared);
					ASSERT_EQ(0, kt_load(&k, src)) TH_LOG("%s", k.err);
					for (uint32_t i = 0; i < 32 * words; i++)
						kt_set_word(&k, 0x1000 + i, 0xa0000000u + i);
					k.block[0] = n;
					KT_RUN_OK(&k);
					for (uint32_t l = 0; l < n; l++) {
						uint32_t e = rev ? 31 - l : l;

						for (unsigned w = 0; w < words; w++) {
							EXPECT_EQ(0xa0000000u + e * words + w,
								  kt_word(&k, 32 * w + l))
							TH_LOG("%s %u-byte load, %u lanes, lane %u word %u%s",
							       shared ? "shared" : "global", 4 * words, n,
							       l, w, rev ? ", reversed" : "");
							EXPECT_EQ(0xa0000000u + e * words + w,
								  kt_word(&k, 0x800 + e * words + w))
							TH_LOG("%u-byte store back, %u lanes, element %u",
							       4 * words, n, e);
						}
					}
					EXPECT_EQ(n - 1, kt_word(&k, 0xc00));
					kt_free(&k);
				}
}

/*
 * A global address whose offset carries out of its low word: the lanes'
 * registers hold 0:0xfffff000 + 16 lane, the offset 0x5000 takes each
 * to GMEM_BASE + 0x4000 + 16 lane (word 0x1000 + 4 lane), with a whole
 * warp (one window: the shortcut) and with 24 lanes; and lanes whose
 * high words differ (two windows, one span).
 */
/* R12..R15 to out + 0x80 k */
#define STORE_R12_R15 KT_STORE("R12", "0x0") KT_STORE("R13", "0x80") \
		      KT_STORE("R14", "0x100") KT_STORE("R15", "0x180")

TEST(global_offset_carries_into_the_high_word)
{
	static const char one_window[] = KT_PROLOGUE
		"  SHL R10, R0, 0x4 ;\n"
		"  IADD R10, R10, 0xfffff000 ;\n"
		"  MOV R11, 0x0 ;\n"
		"  LDG.128 R12, [R10+0x5000] ;\n" STORE_R12_R15 "  EXIT ;\n";
	/* lanes 0-15 at 0:0xffffff00 + 16 lane, 16-31 at 1:16 (lane - 16) */
	static const char two_windows[] = KT_PROLOGUE
		"  ISETP.GE.U32 P0, R0, 0x10 ;\n"
		"  SHL R10, R0, 0x4 ;\n"
		"  IADD R10, R10, 0xffffff00 ;\n"
		"  MOV R16, 0x1 ;\n"
		"  SEL R11, R16, RZ, P0 ;\n"
		"  LDG.128 R12, [R10+0x4100] ;\n" STORE_R12_R15 "  EXIT ;\n";

	static const struct {
		const char *src;
		uint32_t lanes;
	} cases[] = {
		{ one_window, 24 }, { one_window, 32 }, { two_windows, 24 }, { two_windows, 32 },
	};

	for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		uint32_t n = cases[c].lanes;
		struct kt k;

		ASSERT_EQ(0, kt_load(&k, cases[c].src)) TH_LOG("%s", k.err);
		for (uint32_t i = 0; i < 128; i++)
			kt_set_word(&k, 0x1000 + i, 0xb0000000u + i);
		k.block[0] = n;
		KT_RUN_OK(&k);
		for (uint32_t l = 0; l < n; l++) {
			for (uint32_t w = 0; w < 4; w++) {
				EXPECT_EQ(0xb0000000u + 4 * l + w, kt_word(&k, 32 * w + l))
				TH_LOG("case %u, %u lanes, lane %u word %u", c, n, l, w);
			}
		}
		kt_free(&k);
	}
}

TEST_HARNESS_MAIN
