/* SPDX-License-Identifier: MIT */
/*
 * The TMA engine's im2col mode (uapi/vgpu_hw.h, PTX ISA 5.5.4): the exact
 * bytes a CP.ASYNC.BULK.TENSOR.IM2COL load lands in shared memory and a
 * CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL store leaves in global memory, for
 * 3-, 4- and 5-D maps with negative and positive corners, offsets,
 * traversal strides, images and channels out of bounds; through host
 * memory (span), the block calls, and element-sized pieces (the QEMU
 * device's paths); and the exceptions of bad maps and operands.  The
 * expected bytes: im2col_ref.h.
 */
#include <stdio.h>

#include "im2col_ref.h"
#include "kernel_util.h"

#define SAN VGPU_LAUNCH_SANITIZE
#define MAP_AT 0x8000u	/* the tensor map */
#define OUT_AT 0x10000u /* a load's column, copied out */
#define SRC_AT 0x18000u /* a store's column, copied in */
#define DATA_AT 0x20000u /* the tensor */
#define SMEM_DST 0x10u

static void put_map(struct kt *k, const struct icase *t)
{
	struct vgpu_tensor_map m;

	icase_map(t, GMEM_BASE + DATA_AT, &m);
	memcpy(k->mem.buf + MAP_AT, &m, sizeof(m));
}

/* The kernel: thread 0 issues the copy, the warp copies the column. */
static int load_kernel(struct kt *k, const struct icase *t, bool store)
{
	char src[4096], regs[512] = "";
	uint32_t bytes = column_bytes(t);

	for (uint32_t d = 0; d < t->rank; d++)
		snprintf(regs + strlen(regs), sizeof(regs) - strlen(regs),
			 "  MOV R%u, 0x%x ;\n", 20 + d, (uint32_t)t->coord[d]);
	for (uint32_t s = 0; s < t->rank - 2; s++)
		snprintf(regs + strlen(regs), sizeof(regs) - strlen(regs),
			 "  MOV R%u, 0x%x ;\n", 30 + s, t->off[s]);
	if (store)
		snprintf(src, sizeof(src),
			 ".shared bar, 16\n.shared buf, 32768\n" KT_PROLOGUE
			 "  ISETP.EQ.U32 P6, R0, 0x0 ;\n  MOV R8, R2 ;\n  MOV R9, R3 ;\n"
			 "  IADD R10, R8, 0x%x ;\n  MOV R11, R9 ;\n  MOV R6, 0x%x ;\n%s"
			 "  MOV R12, 0x%x ;\n  MOV R13, R0 ;\n"
			 "fill:\n  ISETP.GE.U32 P2, R13, R12 ;\n  @P2 BRA go ;\n"
			 "  IADD R16, R8, R13 ;\n  MOV R17, R9 ;\n"
			 "  LDG.U8 R15, [R16+0x%x] ;\n  STS.U8 [R13+0x%x], R15 ;\n"
			 "  IADD R13, R13, 0x20 ;\n  BRA fill ;\n"
			 "go:\n  BAR.SYNC 0x0 ;\n"
			 "  @P6 CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.%uD [R10], R20, [R6] ;\n"
			 "  @P6 CP.ASYNC.BULK.COMMIT_GROUP ;\n"
			 "  @P6 CP.ASYNC.BULK.WAIT_GROUP 0x0 ;\n  EXIT ;\n",
			 MAP_AT, SMEM_DST, regs, bytes, SRC_AT, SMEM_DST, t->rank);
	else
		snprintf(src, sizeof(src),
			 ".shared bar, 16\n.shared buf, 32768\n" KT_PROLOGUE
			 "  MOV R4, 0x0 ;\n  ISETP.EQ.U32 P6, R0, 0x0 ;\n"
			 "  MOV R8, R2 ;\n  MOV R9, R3 ;\n"
			 "  @P6 MBAR.INIT [R4], 0x1 ;\n  BAR.SYNC 0x0 ;\n"
			 "  IADD R10, R8, 0x%x ;\n  MOV R11, R9 ;\n  MOV R6, 0x%x ;\n%s"
			 "  @P6 CP.ASYNC.BULK.TENSOR.IM2COL.%uD [R6], [R10], R20, [R4], %s ;\n"
			 "  @P6 MBAR.ARRIVE.EXPECT_TX _, [R4], 0x%x ;\n"
			 "wait:\n  MBAR.TRY_WAIT.PARITY P1, [R4], RZ ;\n  @!P1 BRA wait ;\n"
			 "  MOV R12, 0x%x ;\n  MOV R13, R0 ;\n"
			 "out:\n  ISETP.GE.U32 P2, R13, R12 ;\n  @P2 EXIT ;\n"
			 "  LDS.U8 R15, [R13+0x%x] ;\n  IADD R16, R8, R13 ;\n  MOV R17, R9 ;\n"
			 "  STG.U8 [R16+0x%x], R15 ;\n  IADD R13, R13, 0x20 ;\n  BRA out ;\n",
			 MAP_AT, SMEM_DST, regs, t->rank, t->off_rz ? "RZ" : "R30", bytes, bytes,
			 SMEM_DST, OUT_AT);
	return kt_load(k, src);
}

static void fill_tensor(struct kt *k, const struct icase *t)
{
	uint64_t st[4], total = strides_of(t, st);

	for (uint64_t i = 0; i < total; i++)
		k->mem.buf[DATA_AT + i] = data_byte(i);
}

/* global memory's callbacks without span: the block calls, or pieces */
static struct vgpu_mem_ops blocks_ops, pieces_ops;

static const struct vgpu_mem_ops *mem_path(int path)
{
	blocks_ops = vgpu_hostmem_ops;
	blocks_ops.span = NULL;
	pieces_ops = blocks_ops;
	pieces_ops.read_block = NULL;
	pieces_ops.write_block = NULL;
	return path == 0 ? NULL : path == 1 ? &blocks_ops : &pieces_ops;
}

/* Run load @t on memory path @path (0 span, 1 blocks, 2 pieces), seed @seed. */
static void check_load(struct __test_metadata *_metadata, const char *name,
		       const struct icase *t, int path, uint64_t seed)
{
	struct kt k;
	uint32_t bytes = column_bytes(t);

	ASSERT_EQ(0, load_kernel(&k, t, false)) TH_LOG("%s: assembly", name);
	fill_tensor(&k, t);
	memset(k.mem.buf + OUT_AT, 0xee, bytes);
	put_map(&k, t);
	k.mem_ops = mem_path(path);
	k.flags = SAN | (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0);
	k.seed = seed;
	EXPECT_EQ(0, kt_run(&k))
		TH_LOG("%s: %s: %s", name, vgpu_exc_name(k.exc.code), k.exc.msg);
	for (uint32_t i = 0; i < bytes; i++) {
		uint32_t b = i % t->es, ch = i / t->es % t->channels, p = i / t->es / t->channels;
		int64_t src = ref_source(t, p, ch, b);
		uint8_t want = src < 0 ? 0 : data_byte((uint64_t)src);

		if (k.mem.buf[OUT_AT + i] != want) {
			EXPECT_EQ(want, k.mem.buf[OUT_AT + i])
				TH_LOG("%s (path %d): pixel %u channel %u byte %u", name, path,
				       p, ch, b);
			break;
		}
	}
	kt_free(&k);
}

static void check_load_all(struct __test_metadata *_metadata, const char *name,
			   const struct icase *t)
{
	for (int path = 0; path < 3; path++)
		check_load(_metadata, name, t, path, 0);
	check_load(_metadata, name, t, 0, 7);
}

/* NWC: one image row after another, the filter window shifted by 3 */
TEST(im2col_3d_negative_corners_across_images)
{
	static const struct icase t = {
		.rank = 3, .es = 4, .channels = 4, .pixels = 40,
		.dims = { 8, 10, 3 }, .lower = { -2 }, .upper = { -1 },
		.coord = { 4, -2, 0 }, .off = { 3 },
	};

	check_load_all(_metadata, "3d", &t);
}

/* NHWC, a 3x3 filter with padding 1: the convolution's own box */
TEST(im2col_4d_padding_and_offsets)
{
	struct icase t = {
		.rank = 4, .es = 2, .channels = 8, .pixels = 64,
		.dims = { 16, 5, 4, 3 }, .lower = { -1, -1 }, .upper = { -1, -1 },
		.coord = { 8, -1, -1, 0 }, .off = { 0, 2 },
	};

	check_load_all(_metadata, "4d offsets (0, 2)", &t);
	for (uint32_t r = 0; r < 3; r++)
		for (uint32_t s = 0; s < 3; s++) {
			char name[64];

			t.off[0] = s;
			t.off[1] = r;
			t.coord[1] = 2; /* an output pixel in the middle of a row */
			t.coord[2] = 1;
			snprintf(name, sizeof(name), "4d tap (%u, %u)", r, s);
			check_load(_metadata, name, &t, 0, 0);
		}
}

/* Positive corners: the box starts inside and ends past the tensor */
TEST(im2col_4d_positive_corners)
{
	static const struct icase t = {
		.rank = 4, .es = 4, .channels = 4, .pixels = 50,
		.dims = { 4, 6, 5, 2 }, .lower = { 1, 2 }, .upper = { 2, 1 },
		.coord = { 0, 3, 2, 0 }, .off = { 1, 0 },
	};

	check_load_all(_metadata, "4d positive corners", &t);
}

/*
 * Traversal strides 2 in W and H (a stride-2 convolution); C's steps
 * nothing, N's steps the images (as an H200 does)
 */
TEST(im2col_4d_traversal_strides)
{
	struct icase t = {
		.rank = 4, .es = 4, .channels = 4, .pixels = 32,
		.dims = { 4, 9, 7, 2 }, .estr = { 1, 2, 2, 1 },
		.lower = { -1, -1 }, .upper = { -1, -1 },
		.coord = { 0, 1, -1, 0 }, .off = { 1, 1 },
	};

	check_load_all(_metadata, "4d strides", &t);
	t.estr[2] = 3;
	check_load(_metadata, "4d stride 3 in H", &t, 0, 0);
	t.estr[0] = 2; /* nothing */
	t.estr[3] = 2; /* 0, 2: past N */
	t.dims[3] = 3;
	t.pixels = 60;
	check_load(_metadata, "4d strides in C and N", &t, 0, 0);
}

/* NDHWC with every corner and offset different */
TEST(im2col_5d)
{
	static const struct icase t = {
		.rank = 5, .es = 8, .channels = 2, .pixels = 70,
		.dims = { 4, 3, 4, 3, 2 }, .estr = { 1, 1, 1, 2, 1 },
		.lower = { -1, -2, -1 }, .upper = { 0, -1, 1 },
		.coord = { 2, 0, -2, 1, 0 }, .off = { 1, 0, 2 },
	};

	check_load_all(_metadata, "5d", &t);
}

/*
 * Channels past either end of C, images before and past N: zeros (the
 * channel coordinate at a multiple of 16 bytes)
 */
TEST(im2col_channels_and_images_out_of_bounds)
{
	struct icase t = {
		.rank = 3, .es = 1, .channels = 32, .pixels = 30,
		.dims = { 40, 7, 2 }, .lower = { 0 }, .upper = { 0 },
		.coord = { 16, 4, 1 },
	};

	check_load_all(_metadata, "channels past C, pixels past N", &t);
	t.coord[0] = -16;
	t.coord[2] = -1;
	check_load_all(_metadata, "channels before C, an image before N", &t);
	t.coord[0] = 48; /* no channel in bounds */
	check_load(_metadata, "no channel", &t, 0, 0);
	t.coord[0] = -32;
	check_load(_metadata, "no channel below", &t, 0, 0);
}

/* The offsets operand RZ: every offset 0 */
TEST(im2col_offsets_rz)
{
	static const struct icase t = {
		.rank = 4, .es = 4, .channels = 4, .pixels = 20,
		.dims = { 4, 5, 4, 2 }, .lower = { -1, -1 }, .upper = { -1, -1 },
		.coord = { 0, -1, -1, 0 }, .off = { 9, 9 }, .off_rz = true,
	};

	check_load_all(_metadata, "offsets RZ", &t);
}

/*
 * A start inside the box but off the stride grid keeps its phase until the
 * row ends, then restarts at the lower corner: W = 0, 2, then -1, 1, 3 ...
 * (what an H200 does, tests/cuda/real-gpu/probe_im2col.h200.log)
 */
TEST(im2col_start_off_the_stride_grid)
{
	static const struct icase t = {
		.rank = 3, .es = 4, .channels = 4, .pixels = 6,
		.dims = { 4, 4, 2 }, .estr = { 1, 2, 1 }, .lower = { -1 }, .upper = { 0 },
		.coord = { 0, 0, 0 },
	};
	static const int32_t want_w[6] = { 0, 2, -1, 1, 3, -1 }, want_n[6] = { 0, 0, 1, 1, 1, 2 };
	struct kt k;

	ASSERT_EQ(0, load_kernel(&k, &t, false));
	fill_tensor(&k, &t);
	put_map(&k, &t);
	KT_RUN_OK(&k);
	for (uint32_t p = 0; p < 6; p++) {
		uint32_t want = 0, got;
		bool inb = want_w[p] >= 0 && want_w[p] < 4 && want_n[p] < 2;

		for (uint32_t b = 0; inb && b < 4; b++)
			want |= (uint32_t)data_byte(16u * (uint32_t)want_w[p] + 64u * (uint32_t)want_n[p] +
						    b) << (8 * b);
		memcpy(&got, k.mem.buf + OUT_AT + 16 * p, 4); /* channel 0 */
		EXPECT_EQ(want, got) TH_LOG("pixel %u", p);
	}
	kt_free(&k);
}

/*
 * Stores (PTX's .im2col_no_offs): the column goes to the walk's elements,
 * those past C or N are not written, nothing else is touched.
 */
static void check_store(struct __test_metadata *_metadata, const char *name,
			const struct icase *t, int path)
{
	struct kt k;
	uint64_t st[4], total = strides_of(t, st);
	uint32_t bytes = column_bytes(t);
	uint8_t *want = malloc(total);

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, load_kernel(&k, t, true));
	fill_tensor(&k, t);
	memcpy(want, k.mem.buf + DATA_AT, total);
	for (uint32_t i = 0; i < bytes; i++) {
		uint32_t b = i % t->es, ch = i / t->es % t->channels, p = i / t->es / t->channels;
		int64_t dst = ref_source(t, p, ch, b);

		k.mem.buf[SRC_AT + i] = (uint8_t)(i * 7 + 1);
		if (dst >= 0)
			want[dst] = (uint8_t)(i * 7 + 1);
	}
	put_map(&k, t);
	k.mem_ops = mem_path(path);
	k.flags = SAN;
	EXPECT_EQ(0, kt_run(&k))
		TH_LOG("%s: %s: %s", name, vgpu_exc_name(k.exc.code), k.exc.msg);
	for (uint64_t i = 0; i < total; i++)
		if (k.mem.buf[DATA_AT + i] != want[i]) {
			EXPECT_EQ(want[i], k.mem.buf[DATA_AT + i])
				TH_LOG("%s (path %d): tensor byte %llu", name, path,
				       (unsigned long long)i);
			break;
		}
	free(want);
	kt_free(&k);
}

TEST(im2col_stores)
{
	struct icase t = {
		.rank = 4, .es = 2, .channels = 8, .pixels = 30,
		.dims = { 12, 5, 4, 2 }, .lower = { 0, 1 }, .upper = { -1, 0 },
		.coord = { 8, 1, 2, 0 },
	};

	for (int path = 0; path < 3; path++)
		check_store(_metadata, "4d store, channels past C", &t, path);
	t.coord[3] = 1; /* into the image past N */
	t.coord[1] = 2; /* on the stride's grid */
	t.estr[1] = 2;
	check_store(_metadata, "4d store, strided, past N", &t, 0);
	t.rank = 5;
	t.dims[3] = 3;
	t.dims[4] = 2;
	t.coord[3] = 0;
	t.coord[4] = 1;
	t.es = 4;
	check_store(_metadata, "5d store", &t, 0);
}

/* ---- what is refused ---- */

static const struct icase good4 = {
	.rank = 4, .es = 4, .channels = 4, .pixels = 8,
	.dims = { 4, 5, 4, 2 }, .lower = { -1, -1 }, .upper = { -1, -1 },
	.coord = { 0, -1, -1, 0 }, .off = { 1, 2 },
};

/* Run @t (a load, or a store) with its map patched by @patch; expect @code. */
static void expect_exc(struct __test_metadata *_metadata, const struct icase *t, bool store,
		       void (*patch)(struct vgpu_tensor_map *), uint32_t code, const char *msg)
{
	struct kt k;
	struct vgpu_tensor_map m;

	ASSERT_EQ(0, load_kernel(&k, t, store));
	put_map(&k, t);
	memcpy(&m, k.mem.buf + MAP_AT, sizeof(m));
	if (patch)
		patch(&m);
	memcpy(k.mem.buf + MAP_AT, &m, sizeof(m));
	memset(k.mem.buf + OUT_AT, 0x5a, 64);
	k.flags = SAN;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ(code, k.exc.code) TH_LOG("%s: got %s: %s", msg, vgpu_exc_name(k.exc.code),
					   k.exc.msg);
	EXPECT_CONTAINS(k.exc.msg, msg);
	EXPECT_EQ(GMEM_BASE + MAP_AT, k.exc.addr);
	for (uint32_t i = 0; i < 64; i++)
		ASSERT_EQ(0x5a, k.mem.buf[OUT_AT + i]);
	kt_free(&k);
}

static void p_mode2(struct vgpu_tensor_map *m) { m->mode = 2; }
static void p_tile(struct vgpu_tensor_map *m) { m->mode = VGPU_TMAP_TILE; }
static void p_box(struct vgpu_tensor_map *m) { m->box[4] = 1; }
static void p_ch0(struct vgpu_tensor_map *m) { m->channels = 0; }
static void p_ch257(struct vgpu_tensor_map *m) { m->channels = 257; }
static void p_ch16b(struct vgpu_tensor_map *m) { m->channels = 2; }
static void p_px0(struct vgpu_tensor_map *m) { m->pixels = 0; }
static void p_px1025(struct vgpu_tensor_map *m) { m->pixels = 1025; }
static void p_lo128(struct vgpu_tensor_map *m) { m->lower[1] = 128; }
static void p_upm129(struct vgpu_tensor_map *m) { m->upper[0] = -129; }
static void p_past(struct vgpu_tensor_map *m) { m->upper[2] = 1; }
static void p_empty(struct vgpu_tensor_map *m) { m->lower[0] = 3; m->upper[0] = -2; }
static void p_pad1(struct vgpu_tensor_map *m) { m->pad1 = 1; }
static void p_estr(struct vgpu_tensor_map *m) { m->elem_strides[2] = 9; }
static void p_rank(struct vgpu_tensor_map *m) { m->rank = 5; }

TEST(im2col_bad_maps_raise_tensor_map)
{
	static const struct {
		void (*patch)(struct vgpu_tensor_map *);
		const char *msg;
	} bad[] = {
		{ p_mode2, "unknown mode" },
		{ p_tile, "a tile map, the instruction is im2col" },
		{ p_box, "a box size is not zero in im2col mode" },
		{ p_ch0, "channels per pixel outside 1..256" },
		{ p_ch257, "channels per pixel outside 1..256" },
		{ p_ch16b, "channels per pixel are not a multiple of 16 bytes" },
		{ p_px0, "pixels per column outside 1..1024" },
		{ p_px1025, "pixels per column outside 1..1024" },
		{ p_lo128, "a corner is outside the rank's range" },
		{ p_upm129, "a corner is outside the rank's range" },
		{ p_past, "a corner of a dimension past the rank is not zero" },
		{ p_empty, "the bounding box is empty" },
		{ p_pad1, "reserved fields are not zero" },
		{ p_estr, "an element stride is outside 1..8" },
		{ p_rank, "rank differs from the instruction's" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_exc(_metadata, &good4, false, bad[i].patch, VGPU_EXC_TENSOR_MAP, bad[i].msg);
		expect_exc(_metadata, &good4, true, bad[i].patch, VGPU_EXC_TENSOR_MAP, bad[i].msg);
	}
}

/* The corners' ranges: 16 bits at rank 3, 8 at rank 4, 5 at rank 5 */
static void p_c3_max(struct vgpu_tensor_map *m) { m->lower[0] = -32768; m->upper[0] = 32767; }
static void p_c5_lo(struct vgpu_tensor_map *m) { m->lower[2] = -17; }
static void p_c5_hi(struct vgpu_tensor_map *m) { m->upper[1] = 16; }

TEST(im2col_corner_ranges_by_rank)
{
	struct icase t3 = { .rank = 3, .es = 4, .channels = 4, .pixels = 4,
			    .dims = { 4, 8, 2 }, .coord = { 0, 0, 0 } };
	struct icase t5 = { .rank = 5, .es = 4, .channels = 4, .pixels = 4,
			    .dims = { 4, 3, 3, 3, 1 }, .coord = { 0, 0, 0, 0, 0 } };
	struct kt k;
	struct vgpu_tensor_map m;

	/* the widest 3-D box is valid (every pixel of it out of bounds or not) */
	ASSERT_EQ(0, load_kernel(&k, &t3, false));
	put_map(&k, &t3);
	memcpy(&m, k.mem.buf + MAP_AT, sizeof(m));
	p_c3_max(&m);
	memcpy(k.mem.buf + MAP_AT, &m, sizeof(m));
	KT_RUN_OK(&k);
	kt_free(&k);
	/* 5-D: [-16, 15] */
	t5.lower[2] = -16;
	t5.upper[1] = 15;
	check_load(_metadata, "5d corners at their limits", &t5, 0, 0);
	t5.lower[2] = 0;
	t5.upper[1] = 0;
	expect_exc(_metadata, &t5, false, p_c5_lo, VGPU_EXC_TENSOR_MAP,
		   "a corner is outside the rank's range");
	expect_exc(_metadata, &t5, false, p_c5_hi, VGPU_EXC_TENSOR_MAP,
		   "a corner is outside the rank's range");
}

TEST(tile_instruction_refuses_im2col_map_and_fields)
{
	struct kt k;
	static const uint32_t dims[] = { 16, 4, 2 }, box[] = { 8, 2, 1 };

	for (int i = 0; i < 2; i++) {
		struct vgpu_tensor_map m;

		ASSERT_EQ(0, kt_load(&k, ".shared bar, 16\n.shared buf, 4096\n" KT_PROLOGUE
					 "  MOV R4, 0x0 ;\n  MOV R8, R2 ;\n  MOV R9, R3 ;\n"
					 "  MBAR.INIT [R4], 0x1 ;\n"
					 "  IADD R10, R8, 0x8000 ;\n  MOV R11, R9 ;\n"
					 "  MOV R6, 0x10 ;\n"
					 "  CP.ASYNC.BULK.TENSOR.3D [R6], [R10], RZ, [R4] ;\n"
					 "  EXIT ;\n"));
		k.block[0] = 1;
		kt_tensor_map(&k, MAP_AT, DATA_AT, 3, 4, dims, box, NULL);
		memcpy(&m, k.mem.buf + MAP_AT, sizeof(m));
		if (i)
			m.upper[1] = -1;
		else
			m.mode = VGPU_TMAP_IM2COL;
		memcpy(k.mem.buf + MAP_AT, &m, sizeof(m));
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_TENSOR_MAP, k.exc.code);
		EXPECT_CONTAINS(k.exc.msg, i ? "im2col fields are not zero in tile mode" :
					       "an im2col map, the instruction copies a tile");
		kt_free(&k);
	}
}

TEST(im2col_operands_raise_async_copy)
{
	struct icase t = good4;
	struct icase t5 = { .rank = 5, .es = 4, .channels = 4, .pixels = 4,
			    .dims = { 4, 3, 3, 3, 1 }, .coord = { 0, 0, 0, 0, 0 },
			    .off = { 0, 0, 32 } };

	t.off[1] = 256; /* 8 bits at rank 4 */
	expect_exc(_metadata, &t, false, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col offset H = 256 is past 255, the most at rank 4");
	expect_exc(_metadata, &t5, false, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col offset D = 32 is past 31, the most at rank 5");
	t = good4;
	t.coord[1] = -2; /* below the lower corner */
	expect_exc(_metadata, &t, false, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col filter base W = -2 lies outside the bounding box -1..3");
	t = good4;
	t.coord[2] = 3; /* past dims - 1 + upper = 2 */
	expect_exc(_metadata, &t, false, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col filter base H = 3 lies outside the bounding box -1..2");
	/* stores: the box inside the tensor, coordinates >= 0 */
	t = good4;
	t.coord[1] = t.coord[2] = 0;
	expect_exc(_metadata, &t, true, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col store: the bounding box leaves the tensor in W (corners -1, -1)");
	t.lower[0] = t.lower[1] = 0;
	t.upper[0] = t.upper[1] = 0;
	t.coord[0] = -4; /* 16 bytes */
	expect_exc(_metadata, &t, true, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col store: coordinate 0 is -4, below 0");
	t.coord[0] = 0;
	t.coord[3] = -1;
	expect_exc(_metadata, &t, true, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col store: coordinate 3 is -1, below 0");
	/* the channel coordinate at 16 bytes: 2 of 4-byte channels faults */
	t = good4;
	t.coord[0] = 2;
	expect_exc(_metadata, &t, false, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col channel coordinate 2 is not at a multiple of 16 bytes");
	t.coord[0] = -1;
	expect_exc(_metadata, &t, false, NULL, VGPU_EXC_ASYNC_COPY,
		   "im2col channel coordinate -1 is not at a multiple of 16 bytes");
}

/* A pixel in bounds outside global memory: GLOBAL_FAULT at its address */
TEST(im2col_pixel_outside_global_memory_faults)
{
	for (int path = 0; path < 3; path++) {
		struct icase t = { .rank = 3, .es = 4, .channels = 4, .pixels = 4,
				   .dims = { 4, 8, 1 }, .coord = { 0, 0, 0 } };
		struct vgpu_tensor_map m;
		struct kt k;

		ASSERT_EQ(0, load_kernel(&k, &t, false));
		put_map(&k, &t);
		memcpy(&m, k.mem.buf + MAP_AT, sizeof(m));
		m.base = GMEM_BASE + GMEM_SIZE - 32; /* pixel 2 is past the end */
		memcpy(k.mem.buf + MAP_AT, &m, sizeof(m));
		k.mem_ops = mem_path(path);
		EXPECT_EQ(-1, kt_run(&k));
		EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, k.exc.code)
			TH_LOG("path %d: %s", path, k.exc.msg);
		EXPECT_EQ(GMEM_BASE + GMEM_SIZE, k.exc.addr) TH_LOG("path %d", path);
		kt_free(&k);
	}
}

TEST_HARNESS_MAIN
