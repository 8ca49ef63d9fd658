// SPDX-License-Identifier: MIT
/*
 * The PTX front end on forms the generated suite (tests/ptx/gen) has one
 * kernel each for: fns.b32, cp.async with a src-size (zero fill),
 * getctarank, brx.idx with a branch table, .func with .reg parameters
 * (inlined and real calls, recursion with divergent depths), and the
 * bulk copy forms.  PTX written here; every expected value is computed
 * here from the PTX ISA's definition, under the default and random
 * schedules, the sanitizer on and off.
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


/* Compile @text, run @kernel(out, in) with @n threads (blocks of 32 or
 * fewer) for each schedule, out: @per words a thread, compared with
 * @want. */
static void run_rows(struct __test_metadata *_metadata, FIXTURE_DATA(forms) *self,
		     const char *text, const char *kernel, const uint32_t *in, size_t inwords,
		     const uint32_t *want, uint32_t n, uint32_t per)
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
		ASSERT_EQ(0, run(_metadata, self, args, (n / per + 31) / 32, n / per < 32 ? n / per : 32,
				 seed));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, n * 4));
		for (uint32_t i = 0; i < n; i++) {
			if (out[i] != want[i])
				TH_LOG("seed %llu thread %u word %u: %08x, want %08x",
				       (unsigned long long)seed, i / per, i % per, out[i], want[i]);
			ASSERT_EQ(want[i], out[i]);
		}
	}
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

TEST_HARNESS_MAIN
