// SPDX-License-Identifier: MIT
/*
 * The PTX front end's cp.reduce.async.bulk.tensor (PTX ISA 9.7.9.25.5.3)
 * in the forms nvcc writes (tests/corpus/tma_reduce.cu has what nvcc
 * makes of cuda::ptx::cp_reduce_async_bulk_tensor): a __grid_constant__
 * map, .im2col_no_offs on a 3-D map (pixels past the last image not
 * written), a 5-D .min with .L2::cache_hint on a box that leaves the
 * tensor, and a map whose element type tensormap.replace changes (u32
 * and s32 .max differ; an f32 .max is refused at run time with
 * TENSOR_MAP, where an H200 raises an illegal instruction).  Expected
 * values from the host, under the default and random schedules.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"
#include "vgpu_hw.h"

#define SCHEDULES 4

PTX_FIXTURE(tred)

/* thread t puts in[t] in shared word t; thread 0 reduces (@insn) and waits */
static const char red_fmt[] =
	".version 8.3\n.target sm_90a\n.address_size 64\n"
	".visible .entry red(.param .u64 in, .param .align 64 .b8 map[128], .param .u32 x,"
	" .param .u32 y, .param .u32 z)\n{\n"
	"  .reg .pred %%p<2>;\n  .reg .b32 %%r<12>;\n  .reg .b64 %%rd<8>;\n"
	"  .shared .align 128 .b8 sbuf[1024];\n"
	"  ld.param.u64 %%rd1, [in];\n  mov.u32 %%r1, %%tid.x;\n"
	"  mul.wide.u32 %%rd2, %%r1, 4;\n  add.u64 %%rd3, %%rd1, %%rd2;\n"
	"  ld.global.u32 %%r2, [%%rd3];\n  mov.u32 %%r3, sbuf;\n"
	"  mad.lo.u32 %%r4, %%r1, 4, %%r3;\n  st.shared.u32 [%%r4], %%r2;\n"
	"  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
	"  setp.eq.u32 %%p1, %%r1, 0;\n"
	"  mov.u64 %%rd4, map;\n  cvta.param.u64 %%rd5, %%rd4;\n"
	"  ld.param.u32 %%r5, [x];\n  ld.param.u32 %%r6, [y];\n  ld.param.u32 %%r7, [z];\n"
	"  mov.u64 %%rd6, 0x1000000000000000;\n"
	"  @%%p1 %s\n"
	"  @%%p1 cp.async.bulk.commit_group;\n"
	"  @%%p1 cp.async.bulk.wait_group.read 0;\n"
	"  ret;\n}\n";

/* Launch red with @map and coordinates @c on @block threads; 0 or the error */
static int launch(struct __test_metadata *_metadata, FIXTURE_DATA(tred) *self,
		  const struct vgpu_tensor_map *map, const int32_t c[3], uint32_t block,
		  uint64_t seed)
{
	struct vgpu_args *args = NULL;
	int ret;

	if (vgpu_args_new(self->k, &args) || vgpu_args_set_bo(args, 0, self->bo[0], 0) ||
	    vgpu_args_use_bo(args, self->bo[1]) || vgpu_args_set_raw(args, 64, map, sizeof(*map)) ||
	    vgpu_args_set_raw(args, 192, c, 12)) {
		vgpu_args_free(args);
		return -EINVAL;
	}
	ret = run(_metadata, self, args, 1, block, seed);
	vgpu_args_free(args);
	return ret;
}

/*
 * im2col, no offsets: an NWC u32 tensor of 4 channels, 6 pixels, 3
 * images; 12 pixels from (c 0, w 2, n 1): w 2..5 of image 1, w 0..5 of
 * image 2, then 2 past the last image (not written).
 */
TEST_F(tred, im2col_no_offs_add)
{
	char text[4096];
	uint32_t in[48], t[72], back[72];
	struct vgpu_tensor_map m = { 0 };
	const int32_t c[3] = { 0, 2, 1 };

	snprintf(text, sizeof(text), red_fmt,
		 "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.im2col_no_offs.bulk_group"
		 " [%rd5, {%r5, %r6, %r7}], [sbuf];");
	ASSERT_EQ(0, ptx_load(_metadata, self, "tred.ptx", text, "red"));
	for (uint32_t i = 0; i < 48; i++)
		in[i] = 0x100 + i;
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(t)));
	m.base = vgpu_bo_gpu_address(self->bo[1]);
	m.magic = VGPU_TMAP_MAGIC;
	m.rank = 3;
	m.elem_size = 4;
	m.dtype = VGPU_TMAP_DT_U32;
	m.mode = VGPU_TMAP_IM2COL;
	m.dims[0] = 4;
	m.dims[1] = 6;
	m.dims[2] = 3;
	m.strides[0] = 16;
	m.strides[1] = 96;
	m.elem_strides[0] = m.elem_strides[1] = m.elem_strides[2] = 1;
	m.channels = 4;
	m.pixels = 12;
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		for (uint32_t i = 0; i < 72; i++)
			t[i] = 0x10000 * i;
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, t, sizeof(t)));
		ASSERT_EQ(0, launch(_metadata, self, &m, c, 48, seed));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, back, sizeof(back)));
		for (uint32_t p = 0; p < 12; p++)
			for (uint32_t ch = 0; ch < 4; ch++) {
				uint32_t w = p < 4 ? 2 + p : p - 4, n = p < 4 ? 1 : 2;

				if (p < 10)
					t[n * 24 + w * 4 + ch] += 0x100 + p * 4 + ch;
			}
		for (uint32_t i = 0; i < 72; i++) {
			ASSERT_EQ(t[i], back[i]) TH_LOG("seed %llu element %u",
							(unsigned long long)seed, i);
		}
	}
}

/*
 * 5-D tile .min of s32 with a cache hint: dims 4 x 3 x 2 x 2 x 2, box
 * 4 x 2 x 2 x 1 x 2 at (0, 1, 1, 1, 1): z 2 and v 2 out of bounds (a box
 * reduces past the tensor's upper ends; one that starts before it, or off
 * a 16-byte boundary of a row, is an error: test_tensor_reduce).
 */
TEST_F(tred, tile_5d_min_with_cache_hint)
{
	static const uint32_t dims[5] = { 4, 3, 2, 2, 2 }, box[5] = { 4, 2, 2, 1, 2 };
	const int32_t c[3] = { 0, 1, 1 };
	char text[4096];
	uint32_t in[32], t[96], back[96];
	struct vgpu_tensor_map m = { 0 };
	uint64_t s = 4;

	snprintf(text, sizeof(text), red_fmt,
		 "cp.reduce.async.bulk.tensor.5d.global.shared::cta.min.tile.bulk_group"
		 ".L2::cache_hint [%rd5, {%r5, %r6, %r7, %r7, %r6}], [%r3], %rd6;");
	ASSERT_EQ(0, ptx_load(_metadata, self, "tred.ptx", text, "red"));
	for (uint32_t i = 0; i < 32; i++)
		in[i] = (uint32_t)((int32_t)(i * 37 % 61) - 30);
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(t)));
	m.base = vgpu_bo_gpu_address(self->bo[1]);
	m.magic = VGPU_TMAP_MAGIC;
	m.rank = 5;
	m.elem_size = 4;
	m.dtype = VGPU_TMAP_DT_S32;
	for (int d = 0; d < 5; d++) {
		m.dims[d] = dims[d];
		m.box[d] = box[d];
		m.elem_strides[d] = 1;
		if (d)
			m.strides[d - 1] = s;
		s *= dims[d];
	}
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		for (uint32_t i = 0; i < 96; i++)
			t[i] = (uint32_t)((int32_t)(i * 11 % 29) - 14);
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, t, sizeof(t)));
		ASSERT_EQ(0, launch(_metadata, self, &m, c, 32, seed));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, back, sizeof(back)));
		for (uint32_t j = 0; j < 32; j++) {
			/* box element j: bx fastest */
			int32_t bx = j % 4, by = j / 4 % 2, bz = j / 8 % 2, bv = j / 16;
			int32_t x = bx, y = 1 + by, z = 1 + bz, w = 1, v = 1 + bv;
			uint32_t at;

			if (z >= 2 || v >= 2)
				continue;
			at = (uint32_t)((((v * 2 + w) * 2 + z) * 3 + y) * 4 + x);
			if ((int32_t)in[j] < (int32_t)t[at])
				t[at] = in[j];
		}
		for (uint32_t i = 0; i < 96; i++) {
			ASSERT_EQ(t[i], back[i]) TH_LOG("seed %llu element %u",
							(unsigned long long)seed, i);
		}
	}
}

/* the map in global memory, its elemtype replaced first (@elemtype) */
static const char replace_fmt[] =
	".version 8.3\n.target sm_90a\n.address_size 64\n"
	".visible .entry rep(.param .u64 in, .param .u64 map)\n{\n"
	"  .reg .pred %%p<2>;\n  .reg .b32 %%r<8>;\n  .reg .b64 %%rd<8>;\n"
	"  .shared .align 128 .b8 sbuf[64];\n"
	"  ld.param.u64 %%rd1, [in];\n  ld.param.u64 %%rd5, [map];\n  mov.u32 %%r1, %%tid.x;\n"
	"  mul.wide.u32 %%rd2, %%r1, 4;\n  add.u64 %%rd3, %%rd1, %%rd2;\n"
	"  ld.global.u32 %%r2, [%%rd3];\n  mov.u32 %%r3, sbuf;\n"
	"  mad.lo.u32 %%r4, %%r1, 4, %%r3;\n  st.shared.u32 [%%r4], %%r2;\n"
	"  setp.eq.u32 %%p1, %%r1, 0;\n"
	"  @%%p1 tensormap.replace.tile.elemtype.global.b1024.b32 [%%rd5], %d;\n"
	"  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
	"  fence.proxy.tensormap::generic.acquire.gpu [%%rd5], 128;\n"
	"  mov.u32 %%r5, 0;\n"
	"  @%%p1 cp.reduce.async.bulk.tensor.1d.global.shared::cta.max.tile.bulk_group"
	" [%%rd5, {%%r5}], [sbuf];\n"
	"  @%%p1 cp.async.bulk.commit_group;\n"
	"  @%%p1 cp.async.bulk.wait_group.read 0;\n"
	"  ret;\n}\n";

/*
 * A u16 map made u32 (PTX's .elemtype 2) or s32 (3) by tensormap.replace:
 * .max of 5 and 0xffffffff is 0xffffffff unsigned, 5 signed; made f32
 * (7), .max is no reduction PTX has: TENSOR_MAP, memory untouched.
 */
TEST_F(tred, replaced_elemtype_decides)
{
	static const struct {
		int elemtype;
		uint32_t want0;
	} cases[] = { { 2, 0xffffffff }, { 3, 5 }, { 7, 5 } };
	uint32_t in[16], t[16], back[16];
	char text[4096];

	for (size_t k = 0; k < 3; k++) {
		struct vgpu_tensor_map m = { 0 };
		struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 16 } };
		struct vgpu_args *args = NULL;
		struct vgpu_job *job = NULL;
		char desc[4096] = "";
		int ret;

		snprintf(text, sizeof(text), replace_fmt, cases[k].elemtype);
		vgpu_program_free(self->prog);
		self->prog = NULL;
		for (int i = 0; i < 2; i++) {
			vgpu_bo_free(self->bo[i]);
			self->bo[i] = NULL;
		}
		ASSERT_EQ(0, ptx_load(_metadata, self, "rep.ptx", text, "rep"));
		for (uint32_t i = 0; i < 16; i++) {
			in[i] = i ? i : 0xffffffff;
			t[i] = i ? 0x80000000u + i : 5;
		}
		ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
		ASSERT_EQ(0, buf(self, 1, NULL, 256));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, t, sizeof(t)));
		m.base = vgpu_bo_gpu_address(self->bo[1]);
		m.magic = VGPU_TMAP_MAGIC;
		m.rank = 1;
		m.elem_size = 2; /* u16: no reduction has it */
		m.dtype = VGPU_TMAP_DT_U16;
		m.dims[0] = 16;
		m.box[0] = 16;
		m.elem_strides[0] = 1;
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 128, &m, sizeof(m)));
		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 128));
		ret = vgpu_kernel_launch(self->k, &cfg, args, &job);
		if (!ret)
			ret = vgpu_job_wait(job, WAIT_NS);
		if (ret && job)
			vgpu_job_describe(job, desc, sizeof(desc));
		vgpu_job_free(job);
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, back, sizeof(back)));
		if (cases[k].elemtype == 7) {
			EXPECT_NE(0, ret);
			EXPECT_CONTAINS(desc, "a reduction .max of f32 elements");
			for (uint32_t i = 0; i < 16; i++)
				EXPECT_EQ(t[i], back[i]);
			continue;
		}
		ASSERT_EQ(0, ret) TH_LOG("%s", desc);
		EXPECT_EQ(cases[k].want0, back[0]);
		for (uint32_t i = 1; i < 16; i++) /* i vs 0x80000000 + i */
			EXPECT_EQ(cases[k].elemtype == 3 ? i : 0x80000000u + i, back[i]);
	}
}

TEST_HARNESS_MAIN
