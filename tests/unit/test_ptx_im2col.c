// SPDX-License-Identifier: MIT
/*
 * The PTX front end's im2col tensor copies (PTX ISA 9.7.9.25.5.2 and .4):
 * cp.async.bulk.tensor.{3,4,5}d...im2col loads with their {offsets} of
 * .b16 registers (read from memory, as CUTLASS's "h" operands arrive, then
 * with bit 16 of their 32-bit registers set, which PTX leaves undefined),
 * the map a __grid_constant__ parameter; the .multicast::cluster form on
 * a cluster of 2; the .im2col_no_offs store; cp.async.bulk.prefetch.tensor
 * (tile and im2col: nothing to fetch); and the forms refused: sm_100a's
 * (.im2col::w, gather4, .cta_group) and malformed ones.  Expected bytes:
 * im2col_ref.h, under the default and random schedules.
 */
#include <stdio.h>

#include "im2col_ref.h"
#include "ptx_fixture.h"
#include "vgpu_hw.h"

#define HDR ".version 8.7\n.target sm_90a\n.address_size 64\n"
#define SCHEDULES 3
#define IN_TENSOR 256 /* the tensor's offset in `in`; coordinates and offsets at 0 */

PTX_FIXTURE(i2c)

/*
 * A kernel that loads the column of rank-@rank copy of @bytes bytes and
 * copies it out, thread 0 issuing: @mods are the instruction's modifiers
 * after .Nd, @extra operands after the offsets (a ctaMask).
 */
static void load_text(char *buf, size_t len, uint32_t rank, uint32_t bytes, const char *mods,
		      const char *extra, const char *cluster)
{
	char coords[64] = "", offs[64] = "";

	for (uint32_t d = 0; d < rank; d++)
		snprintf(coords + strlen(coords), sizeof(coords) - strlen(coords), "%s%%r%u",
			 d ? ", " : "", 20 + d);
	for (uint32_t s = 0; s + 2 < rank; s++)
		snprintf(offs + strlen(offs), sizeof(offs) - strlen(offs), "%s%%rs%u",
			 s ? ", " : "", 1 + s);
	snprintf(buf, len,
		 HDR ".visible .entry im2col(.param .u64 out, .param .u64 in,"
		 " .param .align 64 .b8 map[128])%s\n{\n"
		 "  .shared .align 8 .b64 mbar;\n  .shared .align 128 .b8 col[%u];\n"
		 "  .reg .b16 %%rs<4>;\n  .reg .b32 %%r<40>;\n  .reg .b64 %%rd<12>;\n"
		 "  .reg .pred %%p<4>;\n"
		 "  ld.param.u64 %%rd1, [out];\n  ld.param.u64 %%rd2, [in];\n"
		 "  mov.u64 %%rd3, map;\n  cvta.param.u64 %%rd4, %%rd3;\n"
		 "  ld.global.u32 %%r20, [%%rd2];\n  ld.global.u32 %%r21, [%%rd2+4];\n"
		 "  ld.global.u32 %%r22, [%%rd2+8];\n  ld.global.u32 %%r23, [%%rd2+12];\n"
		 "  ld.global.u32 %%r24, [%%rd2+16];\n"
		 "  ld.global.u16 %%rs1, [%%rd2+20];\n  ld.global.u16 %%rs2, [%%rd2+22];\n"
		 "  ld.global.u16 %%rs3, [%%rd2+24];\n"
		 /* the same 16 bits, bit 16 of the register set (add leaves it) */
		 "  add.u16 %%rs1, %%rs1, 0xffff;\n  add.u16 %%rs1, %%rs1, 1;\n"
		 "  add.u16 %%rs2, %%rs2, 0xffff;\n  add.u16 %%rs2, %%rs2, 1;\n"
		 "  add.u16 %%rs3, %%rs3, 0xffff;\n  add.u16 %%rs3, %%rs3, 1;\n"
		 "  mov.u32 %%r1, %%tid.x;\n  setp.eq.u32 %%p1, %%r1, 0;\n"
		 "  mov.u32 %%r10, mbar;\n  mov.u32 %%r11, col;\n"
		 "  @%%p1 mbarrier.init.shared::cta.b64 [%%r10], 1;\n"
		 "  @%%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%r10], %u;\n"
		 "  barrier.cluster.arrive.release.aligned;\n"
		 "  barrier.cluster.wait.acquire.aligned;\n"
		 "  mov.u32 %%r2, %%cluster_ctarank;\n  setp.eq.u32 %%p2, %%r2, 0;\n"
		 "  and.pred %%p2, %%p2, %%p1;\n"
		 "  @%%p2 cp.async.bulk.tensor.%ud%s [%%r11], [%%rd4, {%s}], [%%r10], {%s}%s;\n"
		 "$Lw:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p3, [%%r10], 0;\n"
		 "  @!%%p3 bra $Lw;\n"
		 "  mov.u32 %%r3, %%ctaid.x;\n  mul.lo.u32 %%r4, %%r3, %u;\n"
		 "  mov.u32 %%r5, %%r1;\n"
		 "$Lc:\n  setp.ge.u32 %%p3, %%r5, %u;\n  @%%p3 bra $Ld;\n"
		 "  add.u32 %%r6, %%r11, %%r5;\n  ld.shared.u8 %%r7, [%%r6];\n"
		 "  add.u32 %%r8, %%r4, %%r5;\n  cvt.u64.u32 %%rd5, %%r8;\n"
		 "  add.u64 %%rd6, %%rd1, %%rd5;\n  st.global.u8 [%%rd6], %%r7;\n"
		 "  add.u32 %%r5, %%r5, 32;\n  bra $Lc;\n"
		 "$Ld:\n  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
		 "  ret;\n}\n",
		 cluster, bytes, bytes, rank, mods, coords, offs, extra, bytes, bytes);
}

/* `in`: the coordinates (5 s32), the offsets (3 u16) and the tensor */
static int make_in(FIXTURE_DATA(i2c) *self, const struct icase *t, uint8_t **tensor,
		   uint64_t *total)
{
	uint64_t st[4];
	uint8_t *b;
	int ret;

	*total = strides_of(t, st);
	b = calloc(1, IN_TENSOR + *total);
	if (!b)
		return -ENOMEM;
	memcpy(b, t->coord, sizeof(t->coord));
	for (int s = 0; s < 3; s++) {
		uint16_t o = (uint16_t)t->off[s];

		memcpy(b + 20 + 2 * s, &o, 2);
	}
	for (uint64_t i = 0; i < *total; i++)
		b[IN_TENSOR + i] = data_byte(i);
	ret = buf(self, 1, b, IN_TENSOR + *total);
	*tensor = b;
	return ret;
}

static struct vgpu_args *make_args(struct __test_metadata *_metadata, FIXTURE_DATA(i2c) *self,
				   const struct icase *t)
{
	struct vgpu_tensor_map map;
	struct vgpu_args *args = NULL;

	icase_map(t, vgpu_bo_gpu_address(self->bo[1]) + IN_TENSOR, &map);
	EXPECT_EQ(0, vgpu_args_new(self->k, &args));
	EXPECT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	EXPECT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	EXPECT_EQ(0, vgpu_args_set_raw(args, 64, &map, sizeof(map))); /* by value, at 64 */
	return args;
}

/* Load @t on @ncta CTAs (@mods, @extra as load_text); each CTA's column checked. */
static void check_load(struct __test_metadata *_metadata, FIXTURE_DATA(i2c) *self,
		       const char *name, const struct icase *t, const char *mods,
		       const char *extra, uint32_t ncta)
{
	static char text[8192];
	uint32_t bytes = column_bytes(t);
	uint8_t *tensor = NULL, *out = malloc((size_t)ncta * bytes);
	struct vgpu_args *args;
	uint64_t total;

	ASSERT_NE(NULL, out);
	load_text(text, sizeof(text), t->rank, bytes, mods, extra,
		  ncta > 1 ? " .reqnctapercluster 2, 1, 1" : "");
	ASSERT_EQ(0, ptx_load(_metadata, self, name, text, "im2col"));
	ASSERT_EQ(0, buf(self, 0, NULL, (size_t)ncta * bytes));
	ASSERT_EQ(0, make_in(self, t, &tensor, &total));
	args = make_args(_metadata, self, t);
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		memset(out, 0xcc, (size_t)ncta * bytes);
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, (size_t)ncta * bytes));
		ASSERT_EQ(0, run(_metadata, self, args, ncta, 32, seed)) TH_LOG("%s", name);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, (size_t)ncta * bytes));
		for (uint32_t g = 0; g < ncta; g++)
			for (uint32_t i = 0; i < bytes; i++) {
				uint32_t b = i % t->es, ch = i / t->es % t->channels;
				int64_t src = ref_source(t, i / t->es / t->channels, ch, b);
				uint8_t want = src < 0 ? 0 : tensor[IN_TENSOR + src];

				if (out[g * bytes + i] != want) {
					EXPECT_EQ(want, out[g * bytes + i])
						TH_LOG("%s, seed %llu: CTA %u byte %u", name,
						       (unsigned long long)seed, g, i);
					goto done;
				}
			}
	}
done:
	vgpu_args_free(args);
	free(tensor);
	free(out);
	for (int i = 0; i < 2; i++) {
		vgpu_bo_free(self->bo[i]);
		self->bo[i] = NULL;
	}
	vgpu_program_free(self->prog);
	self->prog = NULL;
}

static const char *const LOAD = ".shared::cluster.global.im2col.mbarrier::complete_tx::bytes";

TEST_F(i2c, loads_3d_4d_5d)
{
	static const struct icase t3 = {
		.rank = 3, .es = 4, .channels = 4, .pixels = 24,
		.dims = { 8, 10, 2 }, .lower = { -2 }, .upper = { -1 },
		.coord = { 4, -2, 0 }, .off = { 3 },
	};
	static const struct icase t4 = {
		.rank = 4, .es = 2, .channels = 8, .pixels = 40,
		.dims = { 16, 5, 4, 2 }, .estr = { 1, 2, 1, 1 },
		.lower = { -1, -1 }, .upper = { -1, -1 },
		.coord = { 8, 1, -1, 0 }, .off = { 2, 1 },
	};
	static const struct icase t5 = {
		.rank = 5, .es = 4, .channels = 4, .pixels = 30,
		.dims = { 4, 3, 4, 3, 2 }, .lower = { -1, -2, -1 }, .upper = { 0, -1, 1 },
		.coord = { 0, 0, -2, 1, 0 }, .off = { 1, 0, 2 },
	};

	check_load(_metadata, self, "3d", &t3, LOAD, "", 1);
	check_load(_metadata, self, "4d", &t4, LOAD, "", 1);
	check_load(_metadata, self, "5d", &t5, LOAD, "", 1);
	/* .shared::cta (PTX 8.6), the modifiers in another order, a cache hint */
	check_load(_metadata, self, "3d cta", &t3,
		   ".im2col.shared::cta.global.mbarrier::complete_tx::bytes.L2::cache_hint", ", %rd2",
		   1);
}

/* .multicast::cluster: CTA rank 0 issues, both CTAs of the cluster get it */
TEST_F(i2c, multicast)
{
	static const struct icase t = {
		.rank = 4, .es = 4, .channels = 4, .pixels = 20,
		.dims = { 4, 5, 4, 2 }, .lower = { -1, -1 }, .upper = { -1, -1 },
		.coord = { 0, -1, 0, 0 }, .off = { 1, 2 },
	};

	check_load(_metadata, self, "multicast", &t, ".shared::cluster.global.im2col"
		   ".mbarrier::complete_tx::bytes.multicast::cluster", ", 3", 2);
}

/* The store: .im2col_no_offs, the column to the walk's elements */
TEST_F(i2c, store_no_offs)
{
	static const struct icase t = {
		.rank = 4, .es = 4, .channels = 4, .pixels = 12,
		.dims = { 6, 5, 3, 2 }, .lower = { 0, 0 }, .upper = { -1, 0 },
		.coord = { 4, 1, 2, 0 },
	};
	static char text[4096];
	uint32_t bytes = column_bytes(&t);
	uint8_t *tensor = NULL, *got, *want;
	struct vgpu_args *args;
	uint64_t total;

	snprintf(text, sizeof(text),
		 HDR ".visible .entry im2col(.param .u64 out, .param .u64 in,"
		 " .param .align 64 .b8 map[128])\n{\n"
		 "  .shared .align 128 .b8 col[%u];\n"
		 "  .reg .b32 %%r<40>;\n  .reg .b64 %%rd<12>;\n  .reg .pred %%p<4>;\n"
		 "  ld.param.u64 %%rd2, [in];\n"
		 "  mov.u64 %%rd3, map;\n  cvta.param.u64 %%rd4, %%rd3;\n"
		 "  ld.global.u32 %%r20, [%%rd2];\n  ld.global.u32 %%r21, [%%rd2+4];\n"
		 "  ld.global.u32 %%r22, [%%rd2+8];\n  ld.global.u32 %%r23, [%%rd2+12];\n"
		 "  mov.u32 %%r1, %%tid.x;\n  mov.u32 %%r11, col;\n  mov.u32 %%r5, %%r1;\n"
		 "$Lf:\n  setp.ge.u32 %%p3, %%r5, %u;\n  @%%p3 bra $Lg;\n"
		 "  add.u32 %%r6, %%r11, %%r5;\n  mul.lo.u32 %%r7, %%r5, 7;\n"
		 "  add.u32 %%r7, %%r7, 1;\n  st.shared.u8 [%%r6], %%r7;\n"
		 "  add.u32 %%r5, %%r5, 32;\n  bra $Lf;\n"
		 "$Lg:\n  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
		 "  setp.eq.u32 %%p1, %%r1, 0;\n  @!%%p1 bra $Le;\n"
		 "  cp.async.bulk.tensor.4d.global.shared::cta.im2col_no_offs.bulk_group"
		 " [%%rd4, {%%r20, %%r21, %%r22, %%r23}], [%%r11];\n"
		 "  cp.async.bulk.commit_group;\n  cp.async.bulk.wait_group 0;\n"
		 "$Le:\n  ret;\n}\n",
		 bytes, bytes);
	ASSERT_EQ(0, ptx_load(_metadata, self, "store", text, "im2col"));
	ASSERT_EQ(0, buf(self, 0, NULL, 16));
	ASSERT_EQ(0, make_in(self, &t, &tensor, &total));
	got = malloc(total);
	want = malloc(total);
	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, want);
	memcpy(want, tensor + IN_TENSOR, total);
	for (uint32_t i = 0; i < bytes; i++) {
		int64_t dst = ref_source(&t, i / t.es / t.channels, i / t.es % t.channels, i % t.es);

		if (dst >= 0)
			want[dst] = (uint8_t)(i * 7 + 1);
	}
	args = make_args(_metadata, self, &t);
	ASSERT_EQ(0, run(_metadata, self, args, 1, 32, 0));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], IN_TENSOR, got, total));
	for (uint64_t i = 0; i < total; i++)
		if (got[i] != want[i]) {
			EXPECT_EQ(want[i], got[i]) TH_LOG("tensor byte %llu", (unsigned long long)i);
			break;
		}
	vgpu_args_free(args);
	free(tensor);
	free(got);
	free(want);
}

/* Prefetches: no cache to fill; they compile and do nothing */
TEST_F(i2c, prefetch_tile_and_im2col)
{
	static const char text[] =
		HDR ".visible .entry pf(.param .u64 out, .param .align 64 .b8 map[128])\n{\n"
		"  .reg .b16 %rs<4>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n"
		"  ld.param.u64 %rd1, [out];\n  mov.u64 %rd3, map;\n  cvta.param.u64 %rd4, %rd3;\n"
		"  mov.u32 %r1, 3;\n  mov.u32 %r2, -1;\n  mov.b16 %rs1, 1;\n  mov.b16 %rs2, 2;\n"
		"  mov.b64 %rd5, 0;\n"
		"  cp.async.bulk.prefetch.tensor.4d.L2.global.im2col [%rd4, {%r1, %r2, %r2, %r1}],"
		" {%rs1, %rs2};\n"
		"  cp.async.bulk.prefetch.tensor.5d.L2.global.im2col.L2::cache_hint"
		" [%rd4, {%r1, %r2, %r2, %r1, %r1}], {%rs1, %rs2, %rs1}, %rd5;\n"
		"  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [map, {%r1, %r2}];\n"
		"  cp.async.bulk.prefetch.tensor.1d.L2.global [%rd4, {%r1}];\n"
		"  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
	struct vgpu_args *args = NULL;
	uint32_t out = 0;

	ASSERT_EQ(0, ptx_load(_metadata, self, "prefetch", text, "pf"));
	ASSERT_EQ(0, buf(self, 0, &out, 4));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	/* the map is garbage: a prefetch reads nothing */
	ASSERT_EQ(0, run(_metadata, self, args, 1, 32, 0));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, &out, 4));
	EXPECT_EQ(3u, out);
	vgpu_args_free(args);
}

/* Compile a one-instruction kernel; expect @msg in the log */
static void refused(struct __test_metadata *_metadata, FIXTURE_DATA(i2c) *self,
		    const char *insn, const char *msg)
{
	static char text[2048];
	int ret;

	snprintf(text, sizeof(text),
		 HDR ".visible .entry r(.param .u64 p)\n{\n"
		 "  .reg .b16 %%rs<4>;\n  .reg .b32 %%r<8>;\n  .reg .b64 %%rd<4>;\n"
		 "  ld.param.u64 %%rd1, [p];\n  mov.u32 %%r1, 0;\n  mov.b16 %%rs1, 0;\n"
		 "  %s\n  ret;\n}\n", insn);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	ret = vgpu_program_from_ptx(self->dev, text, strlen(text), "r.ptx", &self->prog,
				    self->log, sizeof(self->log));
	EXPECT_EQ(-EINVAL, ret) TH_LOG("%s", insn);
	EXPECT_CONTAINS(self->log, msg);
}

TEST_F(i2c, refused_forms)
{
	refused(_metadata, self,
		"cp.async.bulk.tensor.4d.shared::cta.global.im2col::w.mbarrier::complete_tx::bytes"
		" [%r1], [%rd1, {%r1, %r1, %r1, %r1}], [%r1], {%rs1, %rs1};",
		".im2col::w needs sm_100a (vGPU has sm_90a's tensor copies)");
	refused(_metadata, self,
		"cp.async.bulk.tensor.4d.shared::cta.global.im2col::w::128"
		".mbarrier::complete_tx::bytes [%r1], [%rd1, {%r1, %r1, %r1, %r1}], [%r1],"
		" {%rs1, %rs1};",
		".im2col::w::128 needs sm_100a");
	refused(_metadata, self,
		"cp.async.bulk.tensor.2d.shared::cluster.global.tile::gather4"
		".mbarrier::complete_tx::bytes [%r1], [%rd1, {%r1, %r1, %r1, %r1, %r1}], [%r1];",
		".tile::gather4 needs sm_100a");
	refused(_metadata, self,
		"cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		".cta_group::2 [%r1], [%rd1, {%r1}], [%r1];",
		".cta_group::2 needs sm_100a");
	refused(_metadata, self,
		"cp.async.bulk.prefetch.tensor.2d.L2.global.tile::gather4"
		" [%rd1, {%r1, %r1, %r1, %r1, %r1}];",
		".tile::gather4 needs sm_100a");
	refused(_metadata, self,
		"cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
		" [%r1], [%rd1, {%r1, %r1}], [%r1];",
		".im2col needs .3d, .4d or .5d");
	refused(_metadata, self,
		"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
		" [%r1], [%rd1, {%r1, %r1, %r1, %r1}], [%r1];",
		"wrong number of operands");
	refused(_metadata, self,
		"cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
		" [%r1], [%rd1, {%r1, %r1, %r1, %r1}], [%r1], {%rs1};",
		"expected {2 im2col offsets} after the mbarrier");
	refused(_metadata, self,
		"cp.async.bulk.tensor.3d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes"
		" [%r1], [%rd1, {%r1, %r1, %r1}], [%r1], {%r1};",
		"im2col offsets are 16-bit registers");
	refused(_metadata, self,
		"cp.async.bulk.tensor.3d.global.shared::cta.im2col.bulk_group"
		" [%rd1, {%r1, %r1, %r1}], [%r1];",
		"a store's im2col mode is .im2col_no_offs");
	refused(_metadata, self,
		"cp.async.bulk.tensor.3d.shared::cluster.global.im2col_no_offs"
		".mbarrier::complete_tx::bytes [%r1], [%rd1, {%r1, %r1, %r1}], [%r1];",
		".im2col_no_offs is a store's; a load's is .im2col");
	/* tensor reductions: a store's forms, the type from the map */
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.im2col.bulk_group"
		" [%rd1, {%r1, %r1, %r1}], [%r1];",
		"a tensor reduction's im2col mode is .im2col_no_offs");
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.im2col_no_offs.bulk_group"
		" [%rd1, {%r1, %r1}], [%r1];",
		".im2col_no_offs needs .3d, .4d or .5d");
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group.u32"
		" [%rd1, {%r1, %r1}], [%r1];",
		"a tensor reduction takes no .u32 (the tensor map gives the element type)");
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
		" [%rd1, {%r1, %r1}], [%r1];",
		"needs one of .add .min .max .inc .dec .and .or .xor");
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.2d.shared::cluster.shared::cta.add.tile.bulk_group"
		" [%rd1, {%r1, %r1}], [%r1];",
		"expected cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP");
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.2d.global.shared::cta.max.tile.bulk_group"
		" [%rd1, {%r1, %r1}], [%r1], %rd1;",
		"wrong number of operands");
	refused(_metadata, self,
		"cp.reduce.async.bulk.tensor.2d.global.shared::cta.xor.tile::scatter4.bulk_group"
		" [%rd1, {%r1, %r1}], [%r1];",
		".tile::scatter4 needs sm_100a");
}

TEST_HARNESS_MAIN
