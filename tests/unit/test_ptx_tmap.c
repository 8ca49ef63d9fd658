// SPDX-License-Identifier: MIT
/*
 * tensormap.replace and tensormap.cp_fenceproxy on vGPU's tensor map
 * (struct vgpu_tensor_map): thread 0 edits a template map in shared
 * memory into a 1-D map of the input's 64 words (boxes of 16), the warp
 * copies it to global memory with cp_fenceproxy, and a tensor copy of
 * the box at 8 through it lands in shared memory: thread t reads word
 * t % 16 of the box.  Replacing a field with a value vGPU does not do
 * (swizzling, interleave, NaN fill, a rank past 5, a stride of ord 4)
 * makes the copy raise TENSOR_MAP; putting the value back makes the map
 * good again.  Malformed forms are located errors.
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

PTX_FIXTURE(tmap)

/* a replace of thread 0 in the format (R) and in an argument of it (A) */
#define R(f) "@%%p1 tensormap.replace.tile." f ".b1024.b32 "
#define A(f) "@%p1 tensormap.replace.tile." f ".b1024.b32 "
static const char tmap_fmt[] =
	".version 8.3\n.target sm_90a\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 128 .b8 smap[128];\n  .shared .align 128 .b8 sbuf[64];\n"
	"  .shared .align 8 .b64 mbar;\n"
	"  .reg .pred %%p<4>;\n  .reg .b32 %%r<12>;\n  .reg .b64 %%rd<12>;\n"
	"  ld.param.u64 %%rd1, [out];\n  ld.param.u64 %%rd2, [in];\n"
	"  mov.u32 %%r1, %%tid.x;\n  mul.wide.u32 %%rd3, %%r1, 4;\n  add.u64 %%rd4, %%rd2, %%rd3;\n"
	"  ld.global.u32 %%r2, [%%rd4+256];\n  mov.u32 %%r3, smap;\n"
	"  mad.lo.u32 %%r4, %%r1, 4, %%r3;\n  st.shared.u32 [%%r4], %%r2;\n  bar.sync 0;\n"
	"  setp.eq.u32 %%p1, %%r1, 0;\n"
	"  @%%p1 tensormap.replace.tile.global_address.shared::cta.b1024.b64 [smap], %%rd2;\n"
	"  " R("rank.shared::cta") "[%%r3], 0;\n"
	"  " R("global_dim.shared::cta") "[smap], 0, 64;\n  mov.u32 %%r5, 1;\n"
	"  " R("element_stride.shared::cta") "[smap], 0, %%r5;\n"
	"  " R("elemtype.shared::cta") "[smap], 2;\n"
	"  " R("fill_mode.shared::cta") "[smap], 0;\n"
	"  " R("interleave_layout.shared::cta") "[smap], 0;\n"
	"  " R("swizzle_mode.shared::cta") "[smap], 0;\n"
	"  mov.u64 %%rd5, smap;\n  cvta.shared.u64 %%rd5, %%rd5;\n"
	"  " R("box_dim") "[%%rd5], 0, 16;\n"
	"  %s\n  bar.sync 0;\n  add.u64 %%rd6, %%rd2, 512;\n"
	"  tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned"
	" [%%rd6], [smap], 128;\n"
	"  %s\n  fence.proxy.tensormap::generic.acquire.gpu [%%rd6], 128;\n"
	"  mov.u32 %%r6, mbar;\n  @%%p1 mbarrier.init.shared::cta.b64 [%%r6], 1;\n  bar.sync 0;\n"
	"  mov.u32 %%r7, sbuf;\n  mov.u32 %%r8, 8;\n"
	"  @%%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %%rd7, [%%r6], 64;\n"
	"  @%%p1 cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	" [%%r7], [%%rd6, {%%r8}], [%%r6];\n"
	"$Lw:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p2, [%%r6], 0;\n  @!%%p2 bra $Lw;\n"
	"  and.b32 %%r9, %%r1, 15;\n  mad.lo.u32 %%r10, %%r9, 4, %%r7;\n"
	"  ld.shared.u32 %%r11, [%%r10];\n  add.u64 %%rd8, %%rd1, %%rd3;\n"
	"  st.global.u32 [%%rd8], %%r11;\n  ret;\n}\n";

/* in: 64 data words, the template map at 256, its global copy at 512 */
#define IN_WORDS (512 / 4 + 32)

/* Run the kernel with @smem (after the shared-memory replaces) and @gmem
 * (after the copy to global memory) under @seeds schedules: 0, or the
 * job's error with its description in @text. */
static int run_variant(struct __test_metadata *_metadata, FIXTURE_DATA(tmap) *self,
		       const char *smem, const char *gmem, int seeds, uint32_t *out,
		       char *text, size_t len)
{
	static char ptx[8192];
	uint32_t in[IN_WORDS] = { 0 };
	struct vgpu_tensor_map t = { 0 };
	int ret = 0;

	for (int i = 0; i < 64; i++)
		in[i] = 0x1000u * (uint32_t)i + 7;
	t.base = 0x1234; /* what the replaces must overwrite */
	t.magic = VGPU_TMAP_MAGIC;
	t.rank = 3;
	t.elem_size = 8;
	for (int d = 0; d < VGPU_TMAP_MAX_RANK; d++)
		t.dims[d] = t.box[d] = t.elem_strides[d] = 2;
	memcpy(&in[64], &t, sizeof(t));
	snprintf(ptx, sizeof(ptx), tmap_fmt, smem, gmem);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	for (int i = 0; i < 2; i++) {
		vgpu_bo_free(self->bo[i]);
		self->bo[i] = NULL;
	}
	if (ptx_load(_metadata, self, "tmap.ptx", ptx, "k") || buf(self, 0, NULL, 32 * 4) ||
	    buf(self, 1, in, sizeof(in)))
		return -EINVAL;
	for (uint64_t seed = 0; seed < (uint64_t)seeds && !ret; seed++) {
		struct vgpu_launch_config cfg = {
			.grid = { 1 }, .block = { 32 }, .seed = seed,
			.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
				 (seed & 1 ? VGPU_LAUNCH_SANITIZE : 0),
		};
		struct vgpu_args *args = NULL;
		struct vgpu_job *job = NULL;

		text[0] = 0;
		if (vgpu_args_new(self->k, &args) || vgpu_args_set_bo(args, 0, self->bo[0], 0) ||
		    vgpu_args_set_bo(args, 1, self->bo[1], 0))
			return -EINVAL;
		ret = vgpu_kernel_launch(self->k, &cfg, args, &job);
		if (!ret)
			ret = vgpu_job_wait(job, WAIT_NS);
		if (ret && job)
			vgpu_job_describe(job, text, len);
		vgpu_job_free(job);
		vgpu_args_free(args);
		if (!ret)
			ret = vgpu_bo_read(self->bo[0], 0, out, 32 * 4);
		for (uint32_t i = 0; !ret && i < 32; i++)
			if (out[i] != (gmem[0] && i % 16 >= 4 ? 0 : in[8 + i % 16])) {
				TH_LOG("seed %llu word %u: %08x", (unsigned long long)seed, i,
				       out[i]);
				return -EIO;
			}
	}
	return ret;
}

/* the edited map copies the box; a global_dim of 12 replaced in the
 * global copy reads words 12.. as zeros (out of bounds) */
TEST_F(tmap, replace_and_copy)
{
	uint32_t out[32];
	char text[4096];

	ASSERT_EQ(0, run_variant(_metadata, self, "", "", SCHEDULES, out, text, sizeof(text)));
	ASSERT_EQ(0, run_variant(_metadata, self, A("swizzle_mode.shared::cta") "[smap], 3;\n  "
				 A("swizzle_mode.shared::cta") "[smap], 0;", "", SCHEDULES, out,
				 text, sizeof(text)));
	ASSERT_EQ(0, run_variant(_metadata, self, "",
				 A("global_dim.global") "[%rd6], 0, 12;", SCHEDULES, out, text,
				 sizeof(text)));
}

/* what vGPU's map cannot hold raises TENSOR_MAP at the copy */
TEST_F(tmap, unsupported_values_raise)
{
	static const char *const bad[] = {
		A("swizzle_mode.shared::cta") "[smap], 3;",
		A("interleave_layout.shared::cta") "[smap], 1;",
		A("fill_mode.shared::cta") "[smap], 1;",
		A("rank.shared::cta") "[smap], 5;",
		A("box_dim.shared::cta") "[smap], 0, 300;",
		"@%p1 tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [smap], 4, 0;",
		"@%p1 tensormap.replace.tile.global_address.shared::cta.b1024.b64 [smap], 8;",
	};
	uint32_t out[32];
	char text[4096];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_NE(0, run_variant(_metadata, self, bad[i], "", 1, out, text, sizeof(text)));
		if (!strstr(text, "TENSOR_MAP"))
			TH_LOG("%s: %s", bad[i], text);
		ASSERT_NE(NULL, strstr(text, "TENSOR_MAP"));
	}
}

/* malformed forms: located errors */
TEST_F(tmap, refused)
{
#define T "tensormap.replace.tile."
#define CPF "tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic"
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ T "rank.shared::cta.b1024.b64 [%r0], 1;", "tmap.ptx:8:3: error: .rank takes .b32" },
		{ T "box_dim.shared::cta.b1024.b32 [%r0], 5, 1;",
		  "tmap.ptx:8:3: error: the ordinal must be an integer 0..4" },
		{ T "swizzle_mode.shared::cta.b1024.b32 [%r0], %r1;",
		  "tmap.ptx:8:3: error: .swizzle_mode takes an integer 0..4" },
		{ T "fill_mode.shared::cta.b1024.b32 [%r0], 2;",
		  "tmap.ptx:8:3: error: .fill_mode takes an integer 0..1" },
		{ T "rank.shared.b1024.b32 [%r0], 1;",
		  "tmap.ptx:8:3: error: tensormap.replace takes .global, .shared::cta or a generic" },
		{ T "rank.shared::cta.b32 [%r0], 1;", "tmap.ptx:8:3: error: tensormap.replace takes .b1024" },
		{ T "global_dim.shared::cta.b1024.b32 [%r0], 1;",
		  "tmap.ptx:8:3: error: 'tensormap' takes 3 operands, not 2" },
		{ T "swizzle_atomicity.shared::cta.b1024.b32 [%r0], 0;",
		  "tmap.ptx:8:3: error: unsupported PTX construct" },
		{ CPF ".release.gpu.sync.aligned [%rd0], [%r0], 64;",
		  "tmap.ptx:8:3: error: tensormap.cp_fenceproxy takes [dst], [src], 128" },
		{ CPF ".gpu.sync.aligned [%rd0], [%r0], 128;",
		  "tmap.ptx:8:3: error: expected tensormap.cp_fenceproxy" },
	};
	char text[1024];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text),
			 ".version 8.3\n.target sm_90a\n.address_size 64\n"
			 ".visible .entry k(.param .u64 p)\n{\n"
			 "  .reg .b32 %%r<4>;\n  .reg .b64 %%rd<2>;\n  %s\n  ret;\n}\n", bad[i].line);
		vgpu_program_free(self->prog);
		self->prog = NULL;
		ASSERT_NE(0, vgpu_program_from_ptx(self->dev, text, strlen(text), "tmap.ptx",
						   &self->prog, self->log, sizeof(self->log)));
		if (!strstr(self->log, bad[i].err))
			TH_LOG("log: %s (want '%s')", self->log, bad[i].err);
		ASSERT_NE(NULL, strstr(self->log, bad[i].err));
	}
}

TEST_HARNESS_MAIN
