// SPDX-License-Identifier: MIT
/*
 * The PTX front end on forms the generated suite (tests/ptx/gen) has one
 * kernel each for: fns.b32, cp.async with a src-size (zero fill),
 * getctarank, brx.idx with a branch table, .func with .reg parameters
 * (inlined and real calls, recursion with divergent depths), and the
 * bulk reductions and copies from shared memory into a cluster peer's
 * (clusters of 2, each CTA into the other's buffer, waiting on its own
 * mbarrier; the refused forms).  PTX written here; every expected value
 * is computed here from the PTX ISA's definition, under the default and
 * random schedules, the sanitizer on and off.
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

PTX_FIXTURE(forms)

/* Compile @text, find @kernel. */
static int load(struct __test_metadata *_metadata, FIXTURE_DATA(forms) *self,
		const char *text, const char *kernel)
{
	return ptx_load(_metadata, self, "forms.ptx", text, kernel);
}


/* Compile @text, run @kernel(out, in) on @grid blocks of @block threads
 * for each schedule: out, @n rows of @per words, compared with @want. */
static void run_grid(struct __test_metadata *_metadata, FIXTURE_DATA(forms) *self,
		     const char *text, const char *kernel, const uint32_t *in, size_t inwords,
		     const uint32_t *want, uint32_t n, uint32_t per, uint32_t grid, uint32_t block)
{
	uint32_t out[1024];

	ASSERT_GE(1024u, n * per);
	n *= per;
	ASSERT_EQ(0, load(_metadata, self, text, kernel));
	ASSERT_EQ(0, buf(self, 0, NULL, n * 4));
	ASSERT_EQ(0, buf(self, 1, in, inwords * 4));
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		struct vgpu_args *args = NULL;

		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		memset(out, 0xcc, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, n * 4));
		ASSERT_EQ(0, run(_metadata, self, args, grid, block, seed));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, n * 4));
		for (uint32_t i = 0; i < n; i++) {
			if (out[i] != want[i])
				TH_LOG("seed %llu row %u word %u: %08x, want %08x",
				       (unsigned long long)seed, i / per, i % per, out[i], want[i]);
			ASSERT_EQ(want[i], out[i]);
		}
	}
}

/* run_grid with a row per thread: @n threads, blocks of 32 or fewer */
static void run_rows(struct __test_metadata *_metadata, FIXTURE_DATA(forms) *self,
		     const char *text, const char *kernel, const uint32_t *in, size_t inwords,
		     const uint32_t *want, uint32_t n, uint32_t per)
{
	run_grid(_metadata, self, text, kernel, in, inwords, want, n, per, (n + 31) / 32,
		 n < 32 ? n : 32);
}

/* PTX ISA 9.7.1.x fns: the reference of its "Semantics" */
static uint32_t fns_ref(uint32_t mask, uint32_t base, int32_t offset)
{
	int pos, count, inc;

	if (offset == 0)
		return base < 32 && (mask >> base & 1) ? base : 0xffffffffu;
	if (offset == INT32_MIN) /* as an H200 gives (the suite's g_fns_b32) */
		return 0;
	pos = (int)base;
	count = (offset < 0 ? -offset : offset) - 1;
	inc = offset > 0 ? 1 : -1;
	while (base < 32 && pos >= 0 && pos < 32) {
		if (mask >> pos & 1) {
			if (!count)
				return (uint32_t)pos;
			count--;
		}
		pos += inc;
	}
	return 0xffffffffu;
}

static const char fns_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mad.lo.u32 %r1, %r2, 32, %r1;\n"
	"  mul.wide.u32 %rd3, %r1, 12;\n  add.u64 %rd4, %rd2, %rd3;\n"
	"  ld.global.u32 %r3, [%rd4];\n  ld.global.u32 %r4, [%rd4+4];\n"
	"  ld.global.u32 %r5, [%rd4+8];\n"
	"  fns.b32 %r6, %r3, %r4, %r5;\n"
	"  mul.wide.u32 %rd3, %r1, 4;\n  add.u64 %rd5, %rd1, %rd3;\n"
	"  st.global.u32 [%rd5], %r6;\n  ret;\n}\n";

/* fns.b32: the ISA's examples, every base with offsets -33..33 on a few
 * masks (lanes diverge in which case they take) */
TEST_F(forms, fns)
{
	static const uint32_t masks[] = { 0xaaaaaaaau, 0, 0xffffffffu, 0x80000001u, 0x00f0f000u };
	uint32_t in[3 * 256], want[256];
	uint32_t n = 0;

	/* PTX ISA's examples: 3, 3, 3, 1 */
	static const int32_t ex[][3] = { { 3, 1, 3 }, { 3, -1, 3 }, { 2, 1, 3 }, { 2, -1, 1 } };
	for (int i = 0; i < 4; i++) {
		in[3 * n] = 0xaaaaaaaau;
		in[3 * n + 1] = (uint32_t)ex[i][0];
		in[3 * n + 2] = (uint32_t)ex[i][1];
		want[n] = (uint32_t)ex[i][2];
		ASSERT_EQ(want[n], fns_ref(in[3 * n], in[3 * n + 1], (int32_t)in[3 * n + 2]));
		n++;
	}
	for (uint32_t i = 0; n < 256; i++) {
		uint32_t m = masks[i % 5], b = (i * 7) % 34;
		int32_t o = (int32_t)((i * 13) % 67) - 33;

		in[3 * n] = m;
		in[3 * n + 1] = b;
		in[3 * n + 2] = (uint32_t)o;
		want[n] = fns_ref(m, b, o);
		n++;
	}
	run_rows(_metadata, self, fns_ptx, "k", in, 3 * n, want, n, 1);
}

/* cp.async ... 16, n: n source bytes, zeros after (n in a register:
 * tid % 17 in one kernel, the immediate 6 in the other) */
static const char zfill_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 16 .b8 buf[512];\n"
	"  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n"
	"  mul.wide.u32 %rd3, %r1, 16;\n  add.u64 %rd4, %rd2, %rd3;\n"
	"  add.u64 %rd5, %rd1, %rd3;\n"
	"  mov.u32 %r2, buf;\n  mad.lo.u32 %r2, %r1, 16, %r2;\n"
	"  rem.u32 %r3, %r1, 17;\n"
	"  cp.async.cg.shared.global [%r2], [%rd4], 16, %r3;\n"
	"  cp.async.commit_group;\n  cp.async.wait_group 0;\n"
	"  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r2];\n"
	"  st.global.v4.u32 [%rd5], {%r4, %r5, %r6, %r7};\n"
	"  ret;\n}\n"
	".visible .entry k6(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 16 .b8 buf[512];\n"
	"  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n"
	"  mul.wide.u32 %rd3, %r1, 16;\n  add.u64 %rd4, %rd2, %rd3;\n"
	"  add.u64 %rd5, %rd1, %rd3;\n"
	"  mov.u32 %r2, buf;\n  mad.lo.u32 %r2, %r1, 16, %r2;\n"
	"  st.shared.v4.u32 [%r2], {%r1, %r1, %r1, %r1};\n"
	"  cp.async.ca.shared.global [%r2+8], [%rd4+8], 8, 6;\n"
	"  cp.async.wait_all;\n"
	"  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r2];\n"
	"  st.global.v4.u32 [%rd5], {%r4, %r5, %r6, %r7};\n"
	"  ret;\n}\n";

TEST_F(forms, cp_async_zfill)
{
	uint32_t in[4 * 32], want[4 * 32];
	uint8_t *b = (uint8_t *)in, *w = (uint8_t *)want;

	for (int i = 0; i < 4 * 32 * 4; i++)
		b[i] = (uint8_t)(i * 37 + 11) | 1; /* no zero byte */
	for (int t = 0; t < 32; t++)
		for (int i = 0; i < 16; i++)
			w[16 * t + i] = i < t % 17 ? b[16 * t + i] : 0;
	run_rows(_metadata, self, zfill_ptx, "k", in, 4 * 32, want, 32, 4);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	vgpu_bo_free(self->bo[0]);
	vgpu_bo_free(self->bo[1]);
	for (int t = 0; t < 32; t++) {
		want[4 * t] = want[4 * t + 1] = (uint32_t)t;
		want[4 * t + 2] = in[4 * t + 2]; /* bytes 8..13 copied, 14, 15 zero */
		want[4 * t + 3] = in[4 * t + 3] & 0xffff;
	}
	run_rows(_metadata, self, zfill_ptx, "k6", in, 4 * 32, want, 32, 4);
}

/* cp.async with an ignore-src predicate (odd threads: zeros; PTX ISA
 * 9.7.9.25.3.1) and with an .L2::cache_hint policy (ignored): bytes
 * 0..15 by .cg 16 with ignore-src, 16..23 by .ca 8 with ignore-src and a
 * policy, 24..31 by .ca 8 with a policy */
static const char ignsrc_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 16 .b8 buf[1024];\n"
	"  .reg .pred %p<4>;\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n"
	"  mul.wide.u32 %rd3, %r1, 32;\n  add.u64 %rd4, %rd2, %rd3;\n"
	"  add.u64 %rd5, %rd1, %rd3;\n"
	"  mov.u32 %r2, buf;\n  mad.lo.u32 %r2, %r1, 32, %r2;\n"
	"  and.b32 %r3, %r1, 1;\n  setp.ne.u32 %p1, %r3, 0;\n"
	"  createpolicy.fractional.L2::evict_last.b64 %rd6, 1.0;\n"
	"  cp.async.cg.shared.global [%r2], [%rd4], 16, %p1;\n"
	"  cp.async.ca.shared.global.L2::cache_hint [%r2+16], [%rd4+16], 8, %p1, %rd6;\n"
	"  add.u64 %rd7, %rd4, 24;\n"
	"  cp.async.ca.shared.global.L2::cache_hint [%r2+24], [%rd7], 8, %rd6;\n"
	"  cp.async.commit_group;\n  cp.async.wait_group 0;\n"
	"  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r2];\n"
	"  st.global.v4.u32 [%rd5], {%r4, %r5, %r6, %r7};\n"
	"  ld.shared.v4.u32 {%r4, %r5, %r6, %r7}, [%r2+16];\n"
	"  st.global.v4.u32 [%rd5+16], {%r4, %r5, %r6, %r7};\n"
	"  ret;\n}\n";

TEST_F(forms, cp_async_ignore_src_and_hint)
{
	uint32_t in[8 * 32], want[8 * 32];

	for (int i = 0; i < 8 * 32; i++)
		in[i] = (uint32_t)i * 0x9e3779b9u | 1;
	for (int t = 0; t < 32; t++)
		for (int w = 0; w < 8; w++)
			want[8 * t + w] = t % 2 && w < 6 ? 0 : in[8 * t + w];
	run_rows(_metadata, self, ignsrc_ptx, "k", in, 8 * 32, want, 32, 8);
}

/* getctarank of mapa's addresses (.shared::cluster and generic), of a
 * CTA's own window and of a generic shared address, in clusters of 4 */
static const char ctarank_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in) .reqnctapercluster 4, 1, 1\n{\n"
	"  .shared .align 4 .b8 buf[128];\n"
	"  .reg .b32 %r<16>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n"
	"  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mad.lo.u32 %r3, %r2, 32, %r1;\n"
	"  mov.u32 %r4, %cluster_ctarank;\n  add.u32 %r5, %r4, 1;\n  and.b32 %r5, %r5, 3;\n"
	"  mov.u32 %r6, buf;\n  mad.lo.u32 %r6, %r1, 4, %r6;\n"
	"  mapa.shared::cluster.u32 %r7, %r6, %r5;\n"
	"  getctarank.shared::cluster.u32 %r8, %r7;\n"
	"  getctarank.shared::cluster.u32 %r9, %r6;\n"
	"  mov.u64 %rd3, buf;\n  cvta.shared.u64 %rd2, %rd3;\n"
	"  getctarank.u64 %r10, %rd2;\n"
	"  mapa.u64 %rd6, %rd2, %r5;\n  getctarank.u64 %r11, %rd6;\n"
	"  mul.wide.u32 %rd4, %r3, 16;\n  add.u64 %rd5, %rd1, %rd4;\n"
	"  st.global.v4.u32 [%rd5], {%r8, %r9, %r10, %r11};\n"
	"  ret;\n}\n";

TEST_F(forms, getctarank)
{
	uint32_t want[4 * 256], in[1] = { 0 };

	for (uint32_t t = 0; t < 256; t++) {
		uint32_t rank = t / 32 % 4;

		want[4 * t] = (rank + 1) % 4;
		want[4 * t + 1] = rank;
		want[4 * t + 2] = rank;
		want[4 * t + 3] = (rank + 1) % 4;
	}
	run_rows(_metadata, self, ctarank_ptx, "k", in, 1, want, 256, 4);
}

/* cvta{.to}.shared::cluster.u64 and isspacep.shared::cluster, clusters of
 * 2: the peer's word through a generic address made from mapa's and back,
 * this CTA's own through cvta.shared::cluster of buf; isspacep of those,
 * of a global address, and .global of the cluster one */
static const char clwin_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in) .reqnctapercluster 2, 1, 1\n{\n"
	"  .shared .align 4 .b32 buf[32];\n"
	"  .reg .pred %p<4>;\n  .reg .b32 %r<16>;\n  .reg .b64 %rd<12>;\n"
	"  ld.param.u64 %rd1, [out];\n"
	"  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  mad.lo.u32 %r3, %r2, 32, %r1;\n"
	"  mov.u32 %r4, %cluster_ctarank;\n  xor.b32 %r5, %r4, 1;\n"
	"  mov.u32 %r6, buf;\n  mad.lo.u32 %r6, %r1, 4, %r6;\n"
	"  mad.lo.u32 %r7, %r3, 3, 7;\n  st.shared.u32 [%r6], %r7;\n"
	"  barrier.cluster.arrive;\n  barrier.cluster.wait;\n"
	"  mapa.shared::cluster.u32 %r8, %r6, %r5;\n  cvt.u64.u32 %rd2, %r8;\n"
	"  cvta.shared::cluster.u64 %rd3, %rd2;\n  ld.u32 %r9, [%rd3];\n"
	"  cvta.to.shared::cluster.u64 %rd4, %rd3;\n  cvt.u32.u64 %r10, %rd4;\n"
	"  ld.shared::cluster.u32 %r11, [%r10];\n"
	"  cvta.shared::cluster.u64 %rd5, buf;\n  mul.wide.u32 %rd6, %r1, 4;\n"
	"  add.u64 %rd5, %rd5, %rd6;\n  ld.u32 %r12, [%rd5];\n"
	"  isspacep.shared::cluster %p1, %rd3;\n  isspacep.shared::cluster %p2, %rd5;\n"
	"  isspacep.shared::cluster %p3, %rd1;\n"
	"  selp.u32 %r13, 1, 0, %p1;\n  selp.u32 %r14, 2, 0, %p2;\n  selp.u32 %r15, 4, 0, %p3;\n"
	"  isspacep.global %p1, %rd3;\n  selp.u32 %r7, 8, 0, %p1;\n"
	"  or.b32 %r13, %r13, %r14;\n  or.b32 %r13, %r13, %r15;\n  or.b32 %r13, %r13, %r7;\n"
	"  barrier.cluster.arrive;\n  barrier.cluster.wait;\n"
	"  mul.wide.u32 %rd7, %r3, 16;\n  add.u64 %rd8, %rd1, %rd7;\n"
	"  st.global.v4.u32 [%rd8], {%r9, %r11, %r12, %r13};\n"
	"  ret;\n}\n";

TEST_F(forms, shared_cluster_window)
{
	uint32_t want[4 * 128], in[1] = { 0 };

	for (uint32_t t = 0; t < 128; t++) {
		uint32_t peer = (t / 32 ^ 1) * 32 + t % 32;

		want[4 * t] = want[4 * t + 1] = peer * 3 + 7;
		want[4 * t + 2] = t * 3 + 7;
		want[4 * t + 3] = 3; /* shared::cluster: both shared ones, not global */
	}
	run_rows(_metadata, self, clwin_ptx, "k", in, 1, want, 128, 4);
}

/* the cache operations vGPU has no cache for take their operands and do
 * nothing: discard (PTX: the line becomes indeterminate; kept as it is
 * here), applypriority, prefetch.tensormap of a generic, .const and
 * .param address; the kernel's loads after them see the input */
static const char cacheops_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".const .align 64 .b8 cm[128];\n"
	".visible .entry k(.param .u64 out, .param .u64 in, .param .align 64 .b8 tm[128])\n{\n"
	"  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
	"  add.u64 %rd4, %rd2, %rd3;\n  add.u64 %rd5, %rd1, %rd3;\n"
	"  discard.global.L2 [%rd2], 128;\n  discard.L2 [%rd2+128], 128;\n"
	"  applypriority.global.L2::evict_normal [%rd2], 128;\n"
	"  applypriority.L2::evict_normal [%rd2+128], 128;\n"
	"  prefetch.tensormap [%rd2];\n  prefetch.const.tensormap [cm];\n"
	"  prefetch.param.tensormap [tm];\n  mov.u64 %rd6, tm;\n  prefetch.param.tensormap [%rd6];\n"
	"  ld.global.u32 %r2, [%rd4];\n  st.global.u32 [%rd5], %r2;\n"
	"  ret;\n}\n";

TEST_F(forms, cache_ops)
{
	uint32_t in[64];

	for (int i = 0; i < 64; i++)
		in[i] = (uint32_t)i * 0x01010101u + 5;
	run_rows(_metadata, self, cacheops_ptx, "k", in, 64, in, 32, 1);
}

/* immediates among a store's vector elements (each set by a mov into a
 * hidden register before the store): 32-, 64- and 16-bit ones */
static const char vimm_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .reg .b32 %r<4>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, %tid.x;\n"
	"  mul.wide.u32 %rd3, %r1, 32;\n  add.u64 %rd5, %rd1, %rd3;\n"
	"  st.global.v4.b32 [%rd5], {-1, 7, %r1, 0x10};\n"
	"  st.global.v2.u64 [%rd5+16], {0x100000002, -2};\n"
	"  st.global.v2.b16 [%rd5+28], {1, -1};\n"
	"  ret;\n}\n";

TEST_F(forms, vector_immediates)
{
	uint32_t in[1] = { 0 }, want[8 * 32];

	for (uint32_t t = 0; t < 32; t++) {
		const uint32_t w[8] = { 0xffffffffu, 7, t, 0x10, 2, 1, 0xfffffffeu, 0xffff0001u };

		memcpy(&want[8 * t], w, sizeof(w));
	}
	run_rows(_metadata, self, vimm_ptx, "k", in, 1, want, 32, 8);
}

/* brx.idx: a 5-entry table in a .func (inlined twice: its labels
 * renamed) and a guarded one in the kernel; lanes diverge */
static const char brx_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".func (.param .b32 r) pick(.param .b32 i)\n{\n"
	"  .reg .b32 %t, %v;\n"
	"  ld.param.b32 %t, [i];\n"
	"  rem.u32 %t, %t, 5;\n"
	"$Ltab: .branchtargets $La, $Lb, $Lc,\n  $Ld, $Le;\n"
	"  brx.idx %t, $Ltab;\n"
	"$La: mov.b32 %v, 100; bra.uni $Lend;\n"
	"$Lb: mov.b32 %v, 101; bra.uni $Lend;\n"
	"$Lc: mov.b32 %v, 102; bra.uni $Lend;\n"
	"$Ld: mov.b32 %v, 103; bra.uni $Lend;\n"
	"$Le: mov.b32 %v, 104;\n"
	"$Lend: st.param.b32 [r], %v;\n  ret;\n}\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<2>;\n"
	"  ld.param.u64 %rd1, [out];\n"
	"  mov.u32 %r1, %tid.x;\n"
	"  {\n  .param .b32 pa;\n  .param .b32 pr;\n  st.param.b32 [pa], %r1;\n"
	"  call (pr), pick, (pa);\n  ld.param.b32 %r2, [pr];\n  }\n"
	"  add.u32 %r3, %r1, 1;\n"
	"  {\n  .param .b32 pa;\n  .param .b32 pr;\n  st.param.b32 [pa], %r3;\n"
	"  call (pr), pick, (pa);\n  ld.param.b32 %r4, [pr];\n  }\n"
	"  and.b32 %r5, %r1, 1;\n  setp.eq.u32 %p1, %r5, 0;\n"
	"  mov.u32 %r6, 7;\n"
	"$Lt: .branchtargets $L0, $L1;\n"
	"  @%p1 brx.idx.uni %r5, $Lt;\n"
	"  mov.u32 %r6, 77;\n  bra.uni $Ldone;\n"
	"$L0: add.u32 %r6, %r6, 10;\n  bra.uni $Ldone;\n"
	"$L1: mov.u32 %r6, 11;\n"
	"$Ldone:\n"
	"  mul.wide.u32 %rd4, %r1, 12;\n  add.u64 %rd5, %rd1, %rd4;\n"
	"  st.global.u32 [%rd5], %r2;\n  st.global.u32 [%rd5+4], %r4;\n"
	"  st.global.u32 [%rd5+8], %r6;\n"
	"  ret;\n}\n";

TEST_F(forms, brx_idx)
{
	uint32_t want[3 * 32], in[1] = { 0 };

	for (uint32_t t = 0; t < 32; t++) {
		want[3 * t] = 100 + t % 5;
		want[3 * t + 1] = 100 + (t + 1) % 5;
		want[3 * t + 2] = t & 1 ? 77 : 17;
	}
	run_rows(_metadata, self, brx_ptx, "k", in, 1, want, 32, 3);
}

/*
 * .func with .reg parameters and return values: fact (recursion, the
 * argument register also the result's), fib (two recursive calls, lanes
 * at divergent depths), and an inlined one called twice with a 64-bit
 * and a float parameter.
 */
static const char regcall_ptx[] =
	".version 8.0\n.target sm_90\n.address_size 64\n"
	".func (.reg .b32 r) fact(.reg .b32 n)\n{\n"
	"  .reg .pred p;\n  .reg .b32 t;\n"
	"  setp.le.u32 p, n, 1;\n  mov.b32 r, 1;\n  @p ret;\n"
	"  sub.s32 t, n, 1;\n  call (t), fact, (t);\n  mul.lo.s32 r, t, n;\n  ret;\n}\n"
	".func (.reg .b32 r) fib(.reg .b32 n)\n{\n"
	"  .reg .pred p;\n  .reg .b32 a, b;\n"
	"  setp.lt.u32 p, n, 2;\n  mov.b32 r, n;\n  @p bra $Ldone;\n"
	"  sub.s32 a, n, 1;\n  call (a), fib, (a);\n"
	"  sub.s32 b, n, 2;\n  call (b), fib, (b);\n  add.s32 r, a, b;\n"
	"$Ldone:\n  ret;\n}\n"
	".func (.reg .f32 r) mix(.reg .b64 x, .reg .f32 y)\n{\n"
	"  .reg .b32 lo;\n  cvt.u32.u64 lo, x;\n  cvt.rn.f32.u32 r, lo;\n"
	"  add.f32 r, r, y;\n}\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n  .reg .f32 %f<4>;\n"
	"  ld.param.u64 %rd1, [out];\n"
	"  mov.u32 %r1, %tid.x;\n  and.b32 %r2, %r1, 15;\n"
	"  call (%r3), fact, (%r2);\n"
	"  rem.u32 %r4, %r1, 13;\n  call.uni (%r5), fib, (%r4);\n"
	"  cvt.u64.u32 %rd2, %r1;\n  mov.f32 %f1, 0f3F000000;\n"
	"  call (%f2), mix, (%rd2, %f1);\n  call (%f3), mix, (%rd2, %f2);\n"
	"  mov.b32 %r6, %f3;\n"
	"  mul.wide.u32 %rd4, %r1, 12;\n  add.u64 %rd5, %rd1, %rd4;\n"
	"  st.global.u32 [%rd5], %r3;\n  st.global.u32 [%rd5+4], %r5;\n"
	"  st.global.u32 [%rd5+8], %r6;\n"
	"  ret;\n}\n";

TEST_F(forms, reg_params)
{
	uint32_t want[3 * 32], in[1] = { 0 };

	for (uint32_t t = 0; t < 32; t++) {
		uint32_t f = 1, a = 0, b = 1;
		float x = (float)t + 0.5f;

		for (uint32_t i = 2; i <= (t & 15); i++)
			f *= i;
		for (uint32_t i = 0; i < t % 13; i++) {
			uint32_t c = a + b;

			a = b;
			b = c;
		}
		x = (float)t + x;
		want[3 * t] = f;
		want[3 * t + 1] = a;
		memcpy(&want[3 * t + 2], &x, 4);
	}
	run_rows(_metadata, self, regcall_ptx, "k", in, 1, want, 32, 3);
}

/* ---- bulk reductions and copies into a cluster peer's shared memory ---- */

#define RB "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
#define SEGS 15 /* 64-byte segments of the source and destination buffers */

/*
 * Clusters of 2 CTAs of 64 threads.  Each CTA fills its source buffer and
 * its destination buffer (15 segments of 64 bytes) from `in`, expects
 * 1344 bytes on its mbarrier, and after a cluster barrier reduces segment
 * k of its source into segment k of the peer's destination, completing
 * on the peer's mbarrier: lane k issues form k (every operation and type
 * ptxas takes, the size an immediate or a register, the destination
 * [reg+imm] or a 64-bit register, the source a register or a variable;
 * segment 12 a bulk copy), lanes 32..35 all add segment 13, lanes 36..39
 * all inc segment 14 (4 x 64 bytes each), lane 40 adds 0 bytes.  Then
 * each CTA waits on its own mbarrier and stores its destination buffer.
 * The tensor prefetches do nothing.
 */
static const char bulk_cluster_ptx[] =
	".version 8.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry bc(.param .u64 out, .param .u64 in) .reqnctapercluster 2, 1, 1\n{\n"
	"  .shared .align 8 .b64 mbar;\n  .shared .align 16 .b8 sbuf[960];\n"
	"  .shared .align 16 .b8 dbuf[960];\n"
	"  .reg .b16 %rs<2>;\n  .reg .b32 %r<40>;\n  .reg .b64 %rd<16>;\n  .reg .pred %p<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n  mov.u32 %r2, %ctaid.x;\n  setp.lt.u32 %p1, %r1, 60;\n"
	"  mul.wide.u32 %rd3, %r2, 1920;\n  add.u64 %rd4, %rd2, %rd3;\n"
	"  mul.wide.u32 %rd5, %r1, 16;\n  add.u64 %rd6, %rd4, %rd5;\n"
	"  mov.u32 %r3, sbuf;\n  mov.u32 %r4, dbuf;\n"
	"  mad.lo.u32 %r5, %r1, 16, %r3;\n  mad.lo.u32 %r6, %r1, 16, %r4;\n"
	"  @%p1 ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd6];\n"
	"  @%p1 st.shared.v4.u32 [%r5], {%r10, %r11, %r12, %r13};\n"
	"  @%p1 ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd6+960];\n"
	"  @%p1 st.shared.v4.u32 [%r6], {%r10, %r11, %r12, %r13};\n"
	"  mov.u32 %r7, mbar;\n  setp.eq.u32 %p2, %r1, 0;\n"
	"  @%p2 mbarrier.init.shared::cta.b64 [%r7], 1;\n"
	"  @%p2 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r7], 1344;\n"
	"  fence.proxy.async.shared::cta;\n"
	"  barrier.cluster.arrive.release.aligned;\n  barrier.cluster.wait.acquire.aligned;\n"
	"  mov.u32 %r8, %cluster_ctarank;\n  xor.b32 %r9, %r8, 1;\n"
	"  mapa.shared::cluster.u32 %r20, %r4, %r9;\n"
	"  mapa.shared::cluster.u32 %r21, %r7, %r9;\n"
	"  mov.u32 %r22, 64;\n  mov.u32 %r23, 0;\n"
	"  cvt.u64.u32 %rd7, %r20;\n  add.u64 %rd7, %rd7, 192;\n"
	"  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd2, {%r1, %r1}];\n"
	"  mov.b16 %rs1, 0;\n"
	"  cp.async.bulk.prefetch.tensor.3d.L2.global.im2col [%rd2, {%r1, %r1, %r1}], {%rs1};\n"
	"  setp.eq.u32 %p3, %r1, 0;\n  @%p3 " RB ".add.u32 [%r20], [%r3], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 1;\n  @%p3 " RB ".add.s32 [%r20+64], [%r3+64], %r22, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 2;\n  @%p3 " RB ".add.u64 [%r20+128], [sbuf+128], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 3;\n  @%p3 " RB ".min.u32 [%rd7], [%r3+192], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 4;\n  @%p3 " RB ".min.s32 [%r20+256], [%r3+256], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 5;\n  @%p3 " RB ".max.u32 [%r20+320], [%r3+320], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 6;\n  @%p3 " RB ".max.s32 [%r20+384], [%r3+384], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 7;\n  @%p3 " RB ".inc.u32 [%r20+448], [%r3+448], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 8;\n  @%p3 " RB ".dec.u32 [%r20+512], [%r3+512], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 9;\n  @%p3 " RB ".and.b32 [%r20+576], [%r3+576], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 10;\n  @%p3 " RB ".or.b32 [%r20+640], [%r3+640], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 11;\n  @%p3 " RB ".xor.b32 [%r20+704], [%r3+704], 64, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 12;\n"
	"  @%p3 cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes"
	" [%r20+768], [%r3+768], 64, [%r21];\n"
	"  setp.ge.u32 %p4, %r1, 32;\n  setp.lt.u32 %p5, %r1, 36;\n  and.pred %p3, %p4, %p5;\n"
	"  @%p3 " RB ".add.u32 [%r20+832], [%r3+832], 64, [%r21];\n"
	"  setp.ge.u32 %p4, %r1, 36;\n  setp.lt.u32 %p5, %r1, 40;\n  and.pred %p3, %p4, %p5;\n"
	"  @%p3 " RB ".inc.u32 [%r20+896], [%r3+896], %r22, [%r21];\n"
	"  setp.eq.u32 %p3, %r1, 40;\n  @%p3 " RB ".add.u32 [%r20], [%r3], %r23, [%r21];\n"
	"$Lw:\n  mbarrier.try_wait.parity.shared::cta.b64 %p6, [%r7], 0;\n  @!%p6 bra $Lw;\n"
	"  mul.wide.u32 %rd8, %r2, 960;\n  add.u64 %rd9, %rd1, %rd8;\n  add.u64 %rd9, %rd9, %rd5;\n"
	"  @%p1 ld.shared.v4.u32 {%r10, %r11, %r12, %r13}, [%r6];\n"
	"  @%p1 st.global.v4.u32 [%rd9], {%r10, %r11, %r12, %r13};\n"
	"  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
	"  ret;\n}\n";

/* PTX ISA, atom/red .inc and .dec (cp.reduce.async.bulk's too) */
static uint32_t inc_ref(uint32_t old, uint32_t b)
{
	return old >= b ? 0 : old + 1;
}

static uint32_t dec_ref(uint32_t old, uint32_t b)
{
	return old == 0 || old > b ? b : old - 1;
}

/* segment @k's element @a (the destination's) reduced with @b (the source's) */
static uint32_t seg_ref(int k, uint32_t a, uint32_t b)
{
	int32_t sa = (int32_t)a, sb = (int32_t)b;

	switch (k) {
	case 0: case 1: return a + b;
	case 3: return a < b ? a : b;
	case 4: return (uint32_t)(sa < sb ? sa : sb);
	case 5: return a > b ? a : b;
	case 6: return (uint32_t)(sa > sb ? sa : sb);
	case 7: return inc_ref(a, b);
	case 8: return dec_ref(a, b);
	case 9: return a & b;
	case 10: return a | b;
	case 11: return a ^ b;
	case 12: return b;
	case 13: return a + 4 * b;
	default: return inc_ref(inc_ref(inc_ref(inc_ref(a, b), b), b), b);
	}
}

TEST_F(forms, bulk_reduce_cluster)
{
	enum { CTAS = 4, W = SEGS * 16 };
	static uint32_t in[CTAS * 2 * W], want[CTAS * W];

	for (uint32_t i = 0, x = 12345; i < CTAS * 2 * W; i++) {
		uint32_t k = i % W / 16;

		x = x * 1664525u + 1013904223u;
		in[i] = x ^ x >> 15;
		if (k == 7 || k == 8 || k == 14) /* small, some zeros: the wraps */
			in[i] %= i % 5 ? 40 : 1;
	}
	for (uint32_t c = 0; c < CTAS; c++) {
		const uint32_t *init = &in[c * 2 * W + W], *src = &in[(c ^ 1) * 2 * W];

		for (uint32_t w = 0; w < W; w++)
			want[c * W + w] = seg_ref((int)(w / 16), init[w], src[w]);
		for (uint32_t w = 32; w < 48; w += 2) { /* segment 2: .add.u64 */
			uint64_t s = ((uint64_t)init[w + 1] << 32 | init[w]) +
				     ((uint64_t)src[w + 1] << 32 | src[w]);

			want[c * W + w] = (uint32_t)s;
			want[c * W + w + 1] = (uint32_t)(s >> 32);
		}
	}
	/* rows: the 60 segments of 16 words of the 4 CTAs */
	run_grid(_metadata, self, bulk_cluster_ptx, "bc", in, CTAS * 2 * W, want, CTAS * SEGS, 16,
		 CTAS, 64);
}

/* a kernel with @line as its 9th line: the front end's log */
static int bulk_line(struct __test_metadata *_metadata, FIXTURE_DATA(forms) *self,
		     const char *line)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 ".version 8.0\n.target sm_90a\n.address_size 64\n"
		 ".visible .entry k(.param .u64 p)\n{\n"
		 "  .reg .b32 %%r<4>;\n  .reg .b64 %%rd<2>;  .reg .pred %%p<2>;\n  mov.u32 %%r0, 0;\n"
		 "  %s\n  ret;\n}\n", line);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	return vgpu_program_from_ptx(self->dev, text, strlen(text), "forms.ptx", &self->prog,
				     self->log, sizeof(self->log));
}

/* what PTX does not have is a located error */
TEST_F(forms, bulk_reduce_cluster_refused)
{
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ RB ".and.b64 [%r0], [%r0], 16, [%r0];",
		  "forms.ptx:9:3: error: '" RB ".and.b64': PTX has no .and of .b64 here" },
		{ RB ".add.s64 [%r0], [%r0], 16, [%r0];",
		  "forms.ptx:9:3: error: '" RB ".add.s64': PTX has no .add of .s64 here" },
		{ RB ".add.u32 [%r0], [%r0], 20, [%r0];",
		  "forms.ptx:9:3: error: the size 20 is not a multiple of 16" },
		{ RB ".add.u32 [%r0], [%r0], 16;", "forms.ptx:9:3: error: wrong number of operands" },
		{ RB ".add.f32 [%r0], [%r0], 16, [%r0];",
		  "forms.ptx:9:3: error: '" RB ".add.f32': PTX has no .add of .f32 here" },
		{ "cp.reduce.async.bulk.shared::cta.shared::cta.mbarrier::complete_tx::bytes.add.u32"
		  " [%r0], [%r0], 16, [%r0];",
		  "forms.ptx:9:3: error: unsupported PTX construct" },
	};
	struct vgpu_args *args = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_NE(0, bulk_line(_metadata, self, bad[i].line));
		if (!strstr(self->log, bad[i].err))
			TH_LOG("log: %s (want '%s')", self->log, bad[i].err);
		ASSERT_NE(NULL, strstr(self->log, bad[i].err));
	}
	/* a size in a register that is not a multiple of 16 (PTX: undefined) traps */
	ASSERT_EQ(0, bulk_line(_metadata, self,
			       "mov.u32 %r1, 20;\n  " RB ".add.u32 [%r0], [%r0], %r1, [%r0];"));
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_NE(0, run(_metadata, self, args, 1, 32, 0));
	vgpu_args_free(args);
}

/* sm_90 forms with malformed operands: located errors */
TEST_F(forms, sm90_refused)
{
	static const struct {
		const char *line, *err;
	} bad[] = {
		{ "cp.async.ca.shared.global.L2::cache_hint [%r0], [%rd0], 16;",
		  "forms.ptx:9:3: error: unsupported PTX construct "
		  "'cp.async.ca.shared.global.L2::cache_hint': cp.async with these operands" },
		{ "cp.async.ca.shared.global.L2::cache_hint [%r0], [%rd0], 16, %r1;",
		  "forms.ptx:9:3: error: .L2::cache_hint takes a 64-bit cache policy" },
		{ "cp.async.ca.shared.global [%r0], [%rd0], 16, %rd1;",
		  "forms.ptx:9:3: error: unsupported PTX construct 'cp.async.ca.shared.global': "
		  "cp.async with a source size other than" },
		{ "cp.async.ca.shared.global [%r0], [%rd0], 12, %p0;",
		  "forms.ptx:9:3: error: cp.async's copy size must be 4, 8 or 16" },
		{ "cvta.shared::cluster.u32 %r1, %r0;",
		  "forms.ptx:9:3: error: cvta of .shared::cluster takes .u64" },
		{ "cvta.to.shared::cluster.u64 %r1, %rd0;", "forms.ptx:9:3: error:" },
		{ "isspacep.shared::cluster %p0, %r0;",
		  "forms.ptx:9:3: error: isspacep takes a 64-bit address register" },
		{ "discard.global.L2 [%rd0], 64;",
		  "forms.ptx:9:3: error: 'discard' takes the size 128" },
		{ "discard.global [%rd0], 128;", "forms.ptx:9:3: error: 'discard' takes .L2" },
		{ "applypriority.global.L2::evict_last [%rd0], 128;",
		  "forms.ptx:9:3: error: 'applypriority' does not take .L2::evict_last" },
		{ "applypriority.shared.L2::evict_normal [%rd0], 128;",
		  "forms.ptx:9:3: error: 'applypriority' does not take .shared" },
		{ "applypriority.global.L2::evict_normal %rd0, 128;",
		  "forms.ptx:9:3: error: 'applypriority' takes an address" },
		{ "prefetch.global.tensormap [%rd0];",
		  "forms.ptx:9:3: error: 'prefetch' does not take .global" },
		{ "prefetch.tensormap [%rd0], 128;", "forms.ptx:9:3: error: 'prefetch' takes 1 operands, not 2" },
		{ "discard.global.L2 [%r0], 128;", "forms.ptx:9:3: error:" },
		{ "ld.global.v2.u32 {%r1, 5}, [%rd0];",
		  "forms.ptx:9:26: error: expected a register in a vector operand, not '5'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_NE(0, bulk_line(_metadata, self, bad[i].line));
		if (!strstr(self->log, bad[i].err))
			TH_LOG("log: %s (want '%s')", self->log, bad[i].err);
		ASSERT_NE(NULL, strstr(self->log, bad[i].err));
	}
}

TEST_HARNESS_MAIN
