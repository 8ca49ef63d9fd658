/* SPDX-License-Identifier: MIT */
/*
 * The copy engine's tensor reductions (CP.REDUCE.ASYNC.BULK.TENSOR[.IM2COL],
 * PTX's cp.reduce.async.bulk.tensor): each operation on each element type
 * the map names, against the words an H200 left in memory for the same
 * inputs (tests/cuda/real-gpu/tensor-reduce-h200-2026-11-30); the pairs
 * PTX has not (TENSOR_MAP, where the H200 faults); partial boxes at the
 * tensor's edges (only in-bounds elements change); CTAs reducing into one
 * tile (each element atomically); the im2col walk; the maps' dtype rules.
 */
#include <stdio.h>

#include "kernel_util.h"

#define SAN VGPU_LAUNCH_SANITIZE
#define MAP 0x8000u    /* the tensor map */
#define IN 0x4000u     /* what thread t copies into shared word t */
#define TENSOR 0x20000u

/* R8:R9 = global base, P6 = thread 0; shared buf at 0x10 */
#define RED_PROLOGUE                                                           \
	".shared bar, 16\n.shared buf, 8192\n" KT_PROLOGUE                     \
	"  ISETP.EQ.U32 P6, R0, 0x0 ;\n"                                       \
	"  MOV R8, R2 ;\n"                                                     \
	"  MOV R9, R3 ;\n"

/*
 * Thread t copies word t of IN to shared word t (the block's threads), then
 * thread 0 reduces shared 0x10 into the map's tensor at coordinates
 * R20.. (@coords: the MOVs) with @insn, and waits for its bulk group.
 */
static void red_kernel(char *buf, size_t len, const char *coords, const char *insn)
{
	snprintf(buf, len,
		 RED_PROLOGUE
		 "  IADD R12, R1, R2 ;\n  MOV R13, R3 ;\n"
		 "  LDG.32 R6, [R12+0x%x] ;\n"
		 "  SHL R5, R0, 0x2 ;\n"
		 "  STS.32 [R5+0x10], R6 ;\n"
		 "  BAR.SYNC 0x0 ;\n"
		 "  IADD R10, R8, 0x%x ;\n  MOV R11, R9 ;\n"
		 "%s"
		 "  MOV R6, 0x10 ;\n"
		 "  @P6 %s [R10], R20, [R6] ;\n"
		 "  @P6 CP.ASYNC.BULK.COMMIT_GROUP ;\n"
		 "  @P6 CP.ASYNC.BULK.WAIT_GROUP 0x0 ;\n"
		 "  EXIT ;\n",
		 IN, MAP, coords, insn);
}

/* a 2-D map of one row of 64 bytes (@es-byte elements) at TENSOR, typed @dt */
static void row_map(struct kt *k, uint32_t es, uint32_t dt)
{
	uint32_t dims[2] = { 64 / es, 1 }, box[2] = { 64 / es, 1 };

	kt_tensor_map(k, MAP, TENSOR, 2, es, dims, box, NULL);
	k->mem.buf[MAP + offsetof(struct vgpu_tensor_map, dtype)] = (uint8_t)dt;
}

/* The H200 probe's inputs: memory (g) and shared memory (s), 16 words each. */
static const uint32_t fg[16] = { 0x00011111, 0x3f800000, 0x7fc00001, 0x80000000, 0x00400000,
				 0x7f800000, 0xff800000, 0x00000001, 0x3f800000 };
static const uint32_t fs[16] = { 0x00022222, 0x00400000, 0x3f800000, 0x00000000, 0x00400000,
				 0xff800000, 0x7f800001, 0x80000001, 0x33800000 };
static const uint32_t hg[16] = { 0x3c007e01, 0x7c018000, 0x00010000, 0xfc003c00, 0x7fc17f81,
				 0x00018000 };
static const uint32_t hs[16] = { 0x7e013c00, 0x7e000000, 0x80010001, 0x7e003c01, 0x3f800001,
				 0x80018001 };
static const uint32_t ug[16] = { 5, 10, 0, 7, 0xffffffff, 3, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
static const uint32_t us[16] = { 5, 3, 4, 0, 0xffffffff, 2, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1 };

/* What the H200 left (probe_tensor_reduce.h200.log), the pairs it ran. */
static const struct {
	const char *op;
	uint32_t dt, es;
	const uint32_t *g, *s;
	uint32_t want[16];
} h200[] = {
	{ "ADD", VGPU_TMAP_DT_F32, 4, fg, fs,
	  { 0x00033333, 0x3f800000, 0x7fffffff, 0x00000000, 0x00800000, 0x7fffffff, 0x7fffffff,
	    0x00000000, 0x3f800000 } },
	{ "ADD", VGPU_TMAP_DT_F32_FTZ, 4, fg, fs,
	  { 0x00000000, 0x3f800000, 0x7fffffff, 0x00000000, 0x00000000, 0x7fffffff, 0x7fffffff,
	    0x00000000, 0x3f800000 } },
	{ "MIN", VGPU_TMAP_DT_F16, 2, hg, hs,
	  { 0x3c003c00, 0x7fff8000, 0x80010000, 0xfc003c00, 0x3f800001, 0x80018001 } },
	{ "MAX", VGPU_TMAP_DT_F16, 2, hg, hs,
	  { 0x3c003c00, 0x7fff0000, 0x00010001, 0xfc003c01, 0x3f800001, 0x00018000 } },
	{ "ADD", VGPU_TMAP_DT_F16, 2, hg, hs,
	  { 0x7fff7fff, 0x7fff0000, 0x00000001, 0x7fff4000, 0x7fff7fff, 0x00008001 } },
	{ "ADD", VGPU_TMAP_DT_BF16, 2, hg, hs,
	  { 0x7e017e01, 0x7e080000, 0x00000001, 0x7df03c80, 0x7fff7fff, 0x00008001 } },
	{ "MIN", VGPU_TMAP_DT_BF16, 2, hg, hs,
	  { 0x3c003c00, 0x7c018000, 0x80010000, 0xfc003c00, 0x3f800001, 0x80018001 } },
	{ "INC", VGPU_TMAP_DT_U32, 4, ug, us, { 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 } },
	{ "DEC", VGPU_TMAP_DT_U32, 4, ug, us,
	  { 4, 3, 4, 0, 0xfffffffe, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 } },
	{ "MIN", VGPU_TMAP_DT_S32, 4, ug, us,
	  { 5, 3, 0, 0, 0xffffffff, 2, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1 } },
	{ "ADD", VGPU_TMAP_DT_U64, 8, ug, us,
	  { 10, 13, 4, 7, 0xfffffffe, 6, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10 } },
	{ "ADD", VGPU_TMAP_DT_F64, 8, fg, fs,
	  { 0x00011111, 0x3f800000, 0x40400001, 0x80000000, 0, 0, 0x7fffffff, 0, 0x73000000 } },
};

TEST(each_op_as_an_h200_reduces)
{
	char text[2048], insn[64];

	for (size_t c = 0; c < sizeof(h200) / sizeof(h200[0]); c++) {
		struct kt k;

		snprintf(insn, sizeof(insn), "CP.REDUCE.ASYNC.BULK.TENSOR.%s.2D", h200[c].op);
		red_kernel(text, sizeof(text), "  MOV R20, RZ ;\n  MOV R21, RZ ;\n", insn);
		ASSERT_EQ(0, kt_load(&k, text));
		k.block[0] = 16;
		for (uint32_t i = 0; i < 16; i++) {
			kt_set_word(&k, TENSOR / 4 + i, h200[c].g[i]);
			kt_set_word(&k, IN / 4 + i, h200[c].s[i]);
		}
		row_map(&k, h200[c].es, h200[c].dt);
		k.flags = SAN;
		KT_RUN_OK(&k);
		for (uint32_t i = 0; i < 16; i++) {
			EXPECT_EQ(h200[c].want[i], kt_word(&k, TENSOR / 4 + i))
				TH_LOG("case %zu (%s of type %u) word %u", c, h200[c].op,
				       h200[c].dt, i);
		}
		kt_free(&k);
	}
}

/*
 * The pairs PTX's table has not: TENSOR_MAP at the map (an H200 raised an
 * illegal instruction for each of the first four), memory untouched; an
 * untyped map too.
 */
TEST(pairs_ptx_has_not_are_refused)
{
	static const struct {
		const char *op;
		uint32_t dt, es;
		const char *msg;
	} bad[] = {
		{ "ADD", VGPU_TMAP_DT_S64, 8, "a reduction .add of s64 elements" },
		{ "INC", VGPU_TMAP_DT_S32, 4, "a reduction .inc of s32 elements" },
		{ "ADD", VGPU_TMAP_DT_U16, 2, "a reduction .add of u16 elements" },
		{ "AND", VGPU_TMAP_DT_F32, 4, "a reduction .and of f32 elements" },
		{ "MIN", VGPU_TMAP_DT_F32, 4, "a reduction .min of f32 elements" },
		{ "XOR", VGPU_TMAP_DT_F64, 8, "a reduction .xor of f64 elements" },
		{ "DEC", VGPU_TMAP_DT_U64, 8, "a reduction .dec of u64 elements" },
		{ "ADD", VGPU_TMAP_DT_U8, 1, "a reduction .add of u8 elements" },
		{ "OR", VGPU_TMAP_DT_NONE, 4, "a reduction .or of untyped elements" },
		/* PTX's table has .b64; an H200 faults on an s64 map's */
		{ "AND", VGPU_TMAP_DT_S64, 8, "a reduction .and of s64 elements" },
		{ "OR", VGPU_TMAP_DT_S64, 8, "a reduction .or of s64 elements" },
		{ "XOR", VGPU_TMAP_DT_S64, 8, "a reduction .xor of s64 elements" },
	};
	char text[2048], insn[64];

	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		struct kt k;

		snprintf(insn, sizeof(insn), "CP.REDUCE.ASYNC.BULK.TENSOR.%s.2D", bad[c].op);
		red_kernel(text, sizeof(text), "  MOV R20, RZ ;\n  MOV R21, RZ ;\n", insn);
		ASSERT_EQ(0, kt_load(&k, text));
		k.block[0] = 16;
		for (uint32_t i = 0; i < 16; i++)
			kt_set_word(&k, TENSOR / 4 + i, 0x1234 + i);
		row_map(&k, bad[c].es, bad[c].dt);
		k.flags = SAN;
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_TENSOR_MAP, k.exc.code);
		EXPECT_CONTAINS(k.exc.msg, bad[c].msg);
		EXPECT_EQ(GMEM_BASE + MAP, k.exc.addr);
		for (uint32_t i = 0; i < 16; i++)
			EXPECT_EQ(0x1234 + i, kt_word(&k, TENSOR / 4 + i));
		kt_free(&k);
	}
}

/* A map's dtype: a known type, of elem_size bytes (every copy checks it). */
TEST(dtype_checked_with_the_map)
{
	static const struct {
		uint8_t dt;
		const char *msg;
	} bad[] = { { 14, "unknown element type" },
		    { VGPU_TMAP_DT_U64, "the element type's size is not elem_size" },
		    { VGPU_TMAP_DT_F16, "the element type's size is not elem_size" } };
	char text[2048];

	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
		struct kt k;

		red_kernel(text, sizeof(text), "  MOV R20, RZ ;\n  MOV R21, RZ ;\n",
			   c ? "CP.ASYNC.BULK.TENSOR.GLOBAL.2D" :
			       "CP.REDUCE.ASYNC.BULK.TENSOR.ADD.2D");
		ASSERT_EQ(0, kt_load(&k, text));
		k.block[0] = 16;
		row_map(&k, 4, bad[c].dt);
		k.flags = SAN;
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_TENSOR_MAP, k.exc.code);
		EXPECT_CONTAINS(k.exc.msg, bad[c].msg);
		kt_free(&k);
	}
}

/*
 * Boxes that leave a 12 x 6 u32 tensor past its upper ends (box 8 x 4,
 * element (x, y) of the box holding 0x100 + 8y + x): at (8, 4) the box is
 * clipped to 4 x 2, at (8, 0) to 4 x 4, at (0, 5) to 8 x 1; each .add
 * changes only the elements inside both.  (A box that starts before the
 * tensor, or off a 16-byte boundary of a row, is an error:
 * box_before_the_tensor_is_an_error.)
 */
TEST(partial_boxes_reduce_only_in_bounds)
{
	static const uint32_t dims[] = { 12, 6 }, box[] = { 8, 4 };
	static const int32_t at[][2] = { { 8, 4 }, { 8, 0 }, { 0, 5 }, { 4, 1 } };
	char text[2048], coords[128];

	for (size_t c = 0; c < 4; c++) {
		struct kt k;

		snprintf(coords, sizeof(coords), "  MOV R20, 0x%x ;\n  MOV R21, 0x%x ;\n",
			 (uint32_t)at[c][0], (uint32_t)at[c][1]);
		red_kernel(text, sizeof(text), coords, "CP.REDUCE.ASYNC.BULK.TENSOR.ADD.2D");
		ASSERT_EQ(0, kt_load(&k, text));
		k.block[0] = 32;
		for (uint32_t i = 0; i < 32; i++)
			kt_set_word(&k, IN / 4 + i, 0x100 + i);
		for (uint32_t i = 0; i < 72; i++)
			kt_set_word(&k, TENSOR / 4 + i, 0x10000 * (i + 1));
		kt_tensor_map(&k, MAP, TENSOR, 2, 4, dims, box, NULL);
		k.mem.buf[MAP + offsetof(struct vgpu_tensor_map, dtype)] = VGPU_TMAP_DT_U32;
		k.flags = SAN;
		KT_RUN_OK(&k);
		for (int32_t y = 0; y < 6; y++)
			for (int32_t x = 0; x < 12; x++) {
				int32_t bx = x - at[c][0], by = y - at[c][1];
				bool in = bx >= 0 && bx < 8 && by >= 0 && by < 4;
				uint32_t want = 0x10000 * (uint32_t)(y * 12 + x + 1) +
						(in ? 0x100 + (uint32_t)(by * 8 + bx) : 0);

				EXPECT_EQ(want, kt_word(&k, TENSOR / 4 + (uint32_t)(y * 12 + x)))
					TH_LOG("box at (%d, %d), element (%d, %d)", at[c][0],
					       at[c][1], x, y);
			}
		kt_free(&k);
	}
}

/*
 * A tile reduction's box that starts before the tensor in any dimension,
 * or whose first coordinate is not a multiple of 16 bytes into a row:
 * ASYNC_COPY at issue (an H200 raises an illegal instruction, whatever
 * the operation and type: tests/cuda/real-gpu/tensor-reduce-h200-
 * 2026-11-30), memory untouched.
 */
TEST(box_before_the_tensor_is_an_error)
{
	static const uint32_t dims[] = { 12, 6 }, box[] = { 8, 4 };
	static const int32_t at[][2] = { { -3, -2 }, { -1, 0 }, { 4, -1 }, { 3, 0 }, { 9, 2 } };
	static const char *const msg[] = { "coordinate 0 is -3", "coordinate 0 is -1",
					   "coordinate 1 is -1", "coordinate 0 is 3, 12 bytes",
					   "coordinate 0 is 9, 36 bytes" };
	char text[2048], coords[128];

	for (size_t c = 0; c < 5; c++) {
		struct kt k;

		snprintf(coords, sizeof(coords), "  MOV R20, 0x%x ;\n  MOV R21, 0x%x ;\n",
			 (uint32_t)at[c][0], (uint32_t)at[c][1]);
		red_kernel(text, sizeof(text), coords, "CP.REDUCE.ASYNC.BULK.TENSOR.MAX.2D");
		ASSERT_EQ(0, kt_load(&k, text));
		k.block[0] = 32;
		for (uint32_t i = 0; i < 72; i++)
			kt_set_word(&k, TENSOR / 4 + i, 7);
		kt_tensor_map(&k, MAP, TENSOR, 2, 4, dims, box, NULL);
		k.mem.buf[MAP + offsetof(struct vgpu_tensor_map, dtype)] = VGPU_TMAP_DT_U32;
		k.flags = SAN;
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_ASYNC_COPY, k.exc.code);
		EXPECT_CONTAINS(k.exc.msg, msg[c]);
		EXPECT_EQ(GMEM_BASE + MAP, k.exc.addr);
		for (uint32_t i = 0; i < 72; i++)
			EXPECT_EQ(7u, kt_word(&k, TENSOR / 4 + i));
		kt_free(&k);
	}
}

/*
 * Eight CTAs reduce their boxes (CTA b's element i: 256 b + i) into one
 * 4 x 4 tile of an s32 tensor: every element's reductions are atomic, so
 * none is lost, under the default and random schedules (.max and .xor
 * too, whose results do not depend on the order either).
 */
TEST(ctas_reducing_into_one_tile)
{
	static const uint32_t dims[] = { 4, 4 }, box[] = { 4, 4 };
	static const char *const ops[] = { "ADD", "MAX", "XOR" };
	static const uint32_t init[] = { 0x70000, 5, 0x70000 };
	char text[2048];

	for (unsigned o = 0; o < 3; o++)
		for (uint64_t seed = 0; seed < 4; seed++) {
			struct kt k;
			char insn[64];

			snprintf(insn, sizeof(insn), "CP.REDUCE.ASYNC.BULK.TENSOR.%s.2D", ops[o]);
			red_kernel(text, sizeof(text),
				   "  S2R R7, SR_CTAID.X ;\n  SHL R7, R7, 0x8 ;\n"
				   "  LDS.32 R6, [R5+0x10] ;\n  IADD R6, R6, R7 ;\n"
				   "  STS.32 [R5+0x10], R6 ;\n  BAR.SYNC 0x0 ;\n"
				   "  MOV R20, RZ ;\n  MOV R21, RZ ;\n",
				   insn);
			ASSERT_EQ(0, kt_load(&k, text));
			k.block[0] = 16;
			k.grid[0] = 8;
			for (uint32_t i = 0; i < 16; i++) {
				kt_set_word(&k, IN / 4 + i, i);
				kt_set_word(&k, TENSOR / 4 + i, init[o]);
			}
			kt_tensor_map(&k, MAP, TENSOR, 2, 4, dims, box, NULL);
			k.mem.buf[MAP + offsetof(struct vgpu_tensor_map, dtype)] =
				VGPU_TMAP_DT_S32;
			k.flags = SAN | (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0);
			k.seed = seed;
			KT_RUN_OK(&k);
			for (uint32_t i = 0; i < 16; i++) {
				uint32_t want = init[o];

				for (uint32_t b = 0; b < 8; b++) {
					uint32_t v = 256 * b + i;

					want = o == 0 ? want + v : o == 1 ? (v > want ? v : want) :
							 want ^ v;
				}
				EXPECT_EQ(want, kt_word(&k, TENSOR / 4 + i))
					TH_LOG("%s seed %llu element %u", ops[o],
					       (unsigned long long)seed, i);
			}
			kt_free(&k);
		}
}

/*
 * im2col (no offsets): an NWC u32 tensor of 4 channels, 8 pixels, 2
 * images; 12 pixels of 4 channels from (c 0, w 0, n 1) walk image 1's 8
 * pixels, then 4 past the last image, which are out of bounds: image 0
 * keeps its values, image 1 gains the column.
 */
TEST(im2col_reduction_walks_the_pixels)
{
	static const uint32_t dims[] = { 4, 8, 2 }, box[] = { 1, 1, 1 };
	char text[2048];
	struct kt k;
	struct vgpu_tensor_map m;

	red_kernel(text, sizeof(text),
		   "  MOV R20, RZ ;\n  MOV R21, RZ ;\n  MOV R22, 0x1 ;\n",
		   "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.ADD.3D");
	ASSERT_EQ(0, kt_load(&k, text));
	k.block[0] = 48;
	for (uint32_t i = 0; i < 48; i++)
		kt_set_word(&k, IN / 4 + i, 0x100 + i);
	for (uint32_t i = 0; i < 64; i++)
		kt_set_word(&k, TENSOR / 4 + i, 0x10000 * i);
	kt_tensor_map(&k, MAP, TENSOR, 3, 4, dims, box, NULL);
	memcpy(&m, k.mem.buf + MAP, sizeof(m));
	memset(m.box, 0, sizeof(m.box));
	m.mode = VGPU_TMAP_IM2COL;
	m.channels = 4;
	m.pixels = 12;
	m.dtype = VGPU_TMAP_DT_U32;
	memcpy(k.mem.buf + MAP, &m, sizeof(m));
	k.flags = SAN;
	KT_RUN_OK(&k);
	for (uint32_t i = 0; i < 64; i++) { /* image 1: elements 32 .. 63 */
		EXPECT_EQ(0x10000 * i + (i >= 32 ? 0x100 + i - 32 : 0),
			  kt_word(&k, TENSOR / 4 + i)) TH_LOG("element %u", i);
	}
	kt_free(&k);
}

TEST_HARNESS_MAIN
