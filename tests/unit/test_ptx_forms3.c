// SPDX-License-Identifier: MIT
/*
 * The PTX front end on the last small forms it refused (issue 31): a
 * non-bulk cp.async through every address form PTX allows for it
 * ([%rd+imm], [var], [var+imm] sources; [%r+imm], [%rd+imm], [var+imm]
 * destinations; with a source size and an ignore-src predicate), and
 * immediates among a vector operand's source elements (mov's pack, of
 * 8-bit elements too, st, atom/red .v2/.v4, a tensor copy's
 * coordinates) with `_` sinks in destination vectors (mov's unpack, ld)
 * and the located errors for the forms ptxas refuses.  PTX written here; every expected value is
 * computed here from the PTX ISA's definition, under the default and
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
#define HDR ".version 8.7\n.target sm_90a\n.address_size 64\n"

PTX_FIXTURE(forms3)

/* Compile @text, run kernel k(out, in) on one block of 32 threads per
 * schedule: out (@n words, 0xcc bytes before) compared with @want; @in
 * NULL: self->bo[1] made already. */
static void run32(struct __test_metadata *_metadata, FIXTURE_DATA(forms3) *self,
		  const char *text, const uint32_t *in, size_t inwords, const uint32_t *want,
		  uint32_t n)
{
	static uint32_t out[4096];

	ASSERT_GE(4096u, n);
	ASSERT_EQ(0, ptx_load(_metadata, self, "forms3.ptx", text, "k"));
	ASSERT_EQ(0, buf(self, 0, NULL, n * 4));
	if (in)
		ASSERT_EQ(0, buf(self, 1, in, inwords * 4));
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		struct vgpu_args *args = NULL;

		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		memset(out, 0xcc, n * 4);
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, n * 4));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 32, seed));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, n * 4));
		for (uint32_t i = 0; i < n; i++) {
			if (out[i] != want[i])
				TH_LOG("seed %llu word %u: %08x, want %08x",
				       (unsigned long long)seed, i, out[i], want[i]);
			ASSERT_EQ(want[i], out[i]);
		}
	}
}

/* Compile a kernel with @line in its body: a failure whose log holds @err. */
static void refused(struct __test_metadata *_metadata, FIXTURE_DATA(forms3) *self,
		    const char *line, const char *err)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 HDR ".visible .entry k(.param .u64 out)\n{\n"
		 "  .reg .b16 %%h<4>;\n  .reg .b32 %%r<4>;\n  .reg .b64 %%rd<4>;\n"
		 "  .reg .f32 %%f<4>;\n  %s\n  ret;\n}\n", line);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	self->log[0] = '\0';
	ASSERT_NE(0, vgpu_program_from_ptx(self->dev, text, strlen(text), "forms3.ptx",
					   &self->prog, self->log, sizeof(self->log)));
	if (!strstr(self->log, err))
		TH_LOG("%s: log '%s', want '%s'", line, self->log, err);
	ASSERT_NE(NULL, strstr(self->log, err));
}

/* gv's words */
static uint32_t gv_word(int i)
{
	return 0x01020304u * (uint32_t)(i + 1) ^ 0x80808080u;
}

/*
 * cp.async's address forms; thread t's 64 shared bytes s (buf + 64 t)
 * from its 64-byte row of in, r (%rd4 = r + 16), and gv (.global, 64
 * bytes):
 *   s[0..15]  = r[32..47]            [%r2], [%rd4+16], 16 (.ca)
 *   s[16..31] = r[0..15]             [%r2+16], [%rd4+-16], 16 (.cg)
 *   s[32..39] = gv[8..15]            [%rd6+32], [gv+8], 8 (64-bit dst)
 *   s[40..43] = gv[0..3]             [%r2+40], [gv], 4
 *   s[44..47] = r[4..6], 0           [%r2+44], [%rd4+-12], 4, 3
 *   s[48..55] = gv[16..], t % 9 of 8 [%r2+48], [gv+16], 8, %r5
 *   s[56..63] = odd t: 0; r[48..55]  [%r2+56], [%rd4+32], 8, %p1
 *   s[60..63] of thread 0 then gv[60..63] ([buf+60], [gv+60], 4), others t
 */
static const char cpa_ptx[] =
	HDR ".global .align 16 .b32 gv[16] = { %s };\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 16 .b8 buf[2048];\n"
	"  .reg .pred %%p<4>;\n  .reg .b32 %%r<24>;\n  .reg .b64 %%rd<8>;\n"
	"  ld.param.u64 %%rd1, [out];\n  ld.param.u64 %%rd2, [in];\n"
	"  mov.u32 %%r1, %%tid.x;\n  mul.wide.u32 %%rd3, %%r1, 64;\n"
	"  add.u64 %%rd4, %%rd2, %%rd3;\n  add.u64 %%rd4, %%rd4, 16;\n"
	"  add.u64 %%rd5, %%rd1, %%rd3;\n"
	"  mov.u32 %%r2, buf;\n  mad.lo.u32 %%r2, %%r1, 64, %%r2;\n  cvt.u64.u32 %%rd6, %%r2;\n"
	"  rem.u32 %%r5, %%r1, 9;\n  and.b32 %%r6, %%r1, 1;\n  setp.ne.u32 %%p1, %%r6, 0;\n"
	"  setp.eq.u32 %%p2, %%r1, 0;\n"
	"  cp.async.ca.shared.global [%%r2], [%%rd4+16], 16;\n"
	"  cp.async.cg.shared.global [%%r2+16], [%%rd4+-16], 16;\n"
	"  cp.async.ca.shared.global [%%rd6+32], [gv+8], 8;\n"
	"  cp.async.ca.shared::cta.global [%%r2+40], [gv], 4;\n"
	"  cp.async.ca.shared.global [%%r2+44], [%%rd4+-12], 4, 3;\n"
	"  cp.async.ca.shared.global [%%r2+48], [gv+16], 8, %%r5;\n"
	"  cp.async.ca.shared.global [%%r2+56], [%%rd4+32], 8, %%p1;\n"
	"  cp.async.commit_group;\n  cp.async.wait_group 0;\n  bar.sync 0;\n"
	"  st.shared.u32 [%%r2+60], %%r1;\n  bar.sync 0;\n"
	"  @%%p2 cp.async.ca.shared.global [buf+60], [gv+60], 4;\n"
	"  cp.async.wait_all;\n"
	"  ld.shared.v4.u32 {%%r8, %%r9, %%r10, %%r11}, [%%r2];\n"
	"  ld.shared.v4.u32 {%%r12, %%r13, %%r14, %%r15}, [%%r2+16];\n"
	"  ld.shared.v4.u32 {%%r16, %%r17, %%r18, %%r19}, [%%r2+32];\n"
	"  ld.shared.v4.u32 {%%r20, %%r21, %%r22, %%r23}, [%%r2+48];\n"
	"  st.global.v4.u32 [%%rd5], {%%r8, %%r9, %%r10, %%r11};\n"
	"  st.global.v4.u32 [%%rd5+16], {%%r12, %%r13, %%r14, %%r15};\n"
	"  st.global.v4.u32 [%%rd5+32], {%%r16, %%r17, %%r18, %%r19};\n"
	"  st.global.v4.u32 [%%rd5+48], {%%r20, %%r21, %%r22, %%r23};\n"
	"  ret;\n}\n";

TEST_F(forms3, cp_async_addresses)
{
	static uint32_t in[16 * 32], want[16 * 32], gv[16];
	static char text[8192], init[256];
	const uint8_t *r, *g = (const uint8_t *)gv;
	uint8_t *s;
	size_t n = 0;

	for (int i = 0; i < 16; i++) {
		gv[i] = gv_word(i);
		n += (size_t)snprintf(init + n, sizeof(init) - n, "%s0x%08x", i ? ", " : "", gv[i]);
	}
	for (int i = 0; i < 16 * 32; i++)
		in[i] = (uint32_t)i * 0x9e3779b9u | 0x01010101u;
	for (int t = 0; t < 32; t++) {
		r = (const uint8_t *)&in[16 * t];
		s = (uint8_t *)&want[16 * t];
		memcpy(s, r + 32, 16);
		memcpy(s + 16, r, 16);
		memcpy(s + 32, g + 8, 8);
		memcpy(s + 40, g, 4);
		memcpy(s + 44, r + 4, 3);
		s[47] = 0;
		for (int i = 0; i < 8; i++)
			s[48 + i] = i < t % 9 ? g[16 + i] : 0;
		for (int i = 0; i < 8; i++)
			s[56 + i] = t % 2 ? 0 : r[48 + i];
		want[16 * t + 15] = t ? (uint32_t)t : gv[15];
	}
	snprintf(text, sizeof(text), cpa_ptx, init);
	run32(_metadata, self, text, in, 16 * 32, want, 16 * 32);
}

/*
 * Immediates among vector sources and sinks among vector destinations;
 * thread t (in[t] = the float t + 0.25, in[32 + 4 t ..] four words)
 * writes 28 words: 0-1 mov.b64 {t, 7}; 2-3 mov.b64 {1, (u16)t, -2,
 * 0x8000}; 4-5 mov.b64 {0f3F800000, t}; 6 mov.b32 {(u16)t, -1}; 7 the
 * first half of 2-3 through {%r, _}; 8-9 words 0 and 2 of ld.v4 {%r, _,
 * %r, _}; 10-11 st.v2.f32 {1.5, f}; 12 the second half of 6 through {_,
 * %h}; 13 add.f32 f, 2.5; 14-15 atom.v2.f32.add {f, 1.0} on {10, 20}: the
 * old values; 16-17 the cell after; 18-19 st.v2.s32 {-3, t}; 20-23
 * red.v4.f32.add {f, 2, -0.5, 0} on {1, 2, 3, 4}; 24 st.v2.b16 {-1,
 * 0x1234}; 25 st.s32 -3; 26-27 st.v2.u32 {0, 0}.
 */
static const char vsrc_ptx[] =
	HDR ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .reg .b16 %h<4>;\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<12>;\n  .reg .f32 %f<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  mov.u32 %r1, %tid.x;\n  cvt.u16.u32 %h1, %r1;\n"
	"  mul.wide.u32 %rd3, %r1, 112;\n  add.u64 %rd5, %rd1, %rd3;\n"
	"  mul.wide.u32 %rd3, %r1, 4;\n  add.u64 %rd6, %rd2, %rd3;\n  ld.global.f32 %f1, [%rd6];\n"
	"  mul.wide.u32 %rd3, %r1, 16;\n  add.u64 %rd7, %rd2, %rd3;\n"
	"  mov.b64 %rd8, {%r1, 7};\n  st.global.u64 [%rd5], %rd8;\n"
	"  mov.b64 %rd9, {1, %h1, -2, 0x8000};\n  st.global.u64 [%rd5+8], %rd9;\n"
	"  mov.b64 %rd10, {0f3F800000, %r1};\n  st.global.u64 [%rd5+16], %rd10;\n"
	"  mov.b32 %r2, {%h1, -1};\n  st.global.u32 [%rd5+24], %r2;\n"
	"  mov.b64 {%r3, _}, %rd9;\n  st.global.u32 [%rd5+28], %r3;\n"
	"  ld.global.v4.u32 {%r5, _, %r6, _}, [%rd7+128];\n"
	"  st.global.v2.u32 [%rd5+32], {%r5, %r6};\n"
	"  st.global.v2.f32 [%rd5+40], {1.5, %f1};\n"
	"  mov.b32 {_, %h2}, %r2;\n  cvt.u32.u16 %r4, %h2;\n  st.global.u32 [%rd5+48], %r4;\n"
	"  add.f32 %f2, %f1, 2.5;\n  st.global.f32 [%rd5+52], %f2;\n"
	"  st.global.v2.f32 [%rd5+64], {0f41200000, 0f41A00000};\n"
	"  atom.global.v2.f32.add {%f3, %f4}, [%rd5+64], {%f1, 1.0};\n"
	"  st.global.v2.f32 [%rd5+56], {%f3, %f4};\n"
	"  st.global.v2.s32 [%rd5+72], {-3, %r1};\n"
	"  st.global.v4.f32 [%rd5+80], {0f3F800000, 0f40000000, 0f40400000, 0f40800000};\n"
	"  red.global.v4.f32.add [%rd5+80], {%f1, 0f40000000, -0.5, 0f00000000};\n"
	"  st.global.v2.b16 [%rd5+96], {-1, 0x1234};\n"
	"  st.global.s32 [%rd5+100], -3;\n"
	"  st.global.v2.u32 [%rd5+104], {0, 0};\n"
	"  ret;\n}\n";

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

TEST_F(forms3, vector_sources_and_sinks)
{
	static uint32_t in[32 + 4 * 32], want[28 * 32];

	for (int t = 0; t < 32; t++)
		in[t] = fbits((float)t + 0.25f);
	for (int i = 0; i < 4 * 32; i++)
		in[32 + i] = (uint32_t)i * 0x01000193u + 3;
	for (uint32_t t = 0; t < 32; t++) {
		uint32_t *w = &want[28 * t];
		float f = (float)t + 0.25f;

		w[0] = t;
		w[1] = 7;
		w[2] = t << 16 | 1;
		w[3] = 0x8000u << 16 | 0xfffe;
		w[4] = 0x3f800000u;
		w[5] = t;
		w[6] = 0xffff0000u | t;
		w[7] = w[2];
		w[8] = in[32 + 4 * t];
		w[9] = in[32 + 4 * t + 2];
		w[10] = 0x3fc00000u;
		w[11] = in[t];
		w[12] = 0xffff;
		w[13] = fbits(f + 2.5f);
		w[14] = fbits(10.0f);
		w[15] = fbits(20.0f);
		w[16] = fbits(10.0f + f);
		w[17] = fbits(21.0f);
		w[18] = (uint32_t)-3;
		w[19] = t;
		w[20] = fbits(1.0f + f);
		w[21] = fbits(4.0f);
		w[22] = fbits(2.5f);
		w[23] = fbits(4.0f);
		w[24] = 0x1234ffffu;
		w[25] = (uint32_t)-3;
		w[26] = w[27] = 0;
	}
	run32(_metadata, self, vsrc_ptx, in, 32 + 4 * 32, want, 28 * 32);
}

/*
 * mov's byte forms (.b8 elements: 2 <-> .b16, 4 <-> .b32), immediates
 * and sinks among them; r = t * 0x01010101 + 0x04030201 (bytes t + 1 ..
 * t + 4), unpacked into c0..c3; thread t writes h = {c1, 0x7f}, {c3, c2,
 * c1, c0}, {c4, 0, 0, 0} with {_, c4} = h, and {c0, c0, c0, c0}.
 */
static const char bytes_ptx[] =
	HDR ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .reg .b8 %c<6>;\n  .reg .b16 %h<4>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n"
	"  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, %tid.x;\n"
	"  mul.wide.u32 %rd2, %r1, 16;\n  add.u64 %rd3, %rd1, %rd2;\n"
	"  mad.lo.u32 %r3, %r1, 0x01010101, 0x04030201;\n"
	"  mov.b32 {%c0, %c1, %c2, %c3}, %r3;\n"
	"  mov.b16 %h1, {%c1, 0x7f};\n  cvt.u32.u16 %r4, %h1;\n"
	"  mov.b32 %r5, {%c3, %c2, %c1, %c0};\n"
	"  mov.b16 {_, %c4}, %h1;\n  mov.b32 %r6, {%c4, 0, 0, 0};\n"
	"  mov.b32 %r7, {%c0, %c0, %c0, %c0};\n"
	"  st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};\n  ret;\n}\n";

TEST_F(forms3, mov_bytes)
{
	static uint32_t in[1], want[4 * 32];

	for (uint32_t t = 0; t < 32; t++) {
		want[4 * t] = (t + 2) | 0x7f00;
		want[4 * t + 1] = (t + 4) | (t + 3) << 8 | (t + 2) << 16 | (t + 1) << 24;
		want[4 * t + 2] = 0x7f;
		want[4 * t + 3] = (t + 1) * 0x01010101u;
	}
	run32(_metadata, self, bytes_ptx, in, 1, want, 4 * 32);
}

/*
 * A 2-D tile load whose coordinates are immediates: a 16 x 16 tensor of
 * words (in[0..255]), the map (vGPU's) at in[256]; box 8 x 4 from {8, 2}
 * and, with {%r, 0}, from {0, 0}: thread t reads word t of each box.
 */
static const char tcoord_ptx[] =
	HDR ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 128 .b8 sbuf[256];\n  .shared .align 8 .b64 mbar;\n"
	"  .reg .pred %p<4>;\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<12>;\n"
	"  ld.param.u64 %rd1, [out];\n  ld.param.u64 %rd2, [in];\n"
	"  add.u64 %rd3, %rd2, 1024;\n  mov.u32 %r1, %tid.x;\n  setp.eq.u32 %p1, %r1, 0;\n"
	"  mov.u32 %r2, mbar;\n  mov.u32 %r3, sbuf;\n  mov.u32 %r4, 0;\n"
	"  @%p1 mbarrier.init.shared::cta.b64 [%r2], 1;\n  bar.sync 0;\n"
	"  cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd3, {1, 2}];\n"
	"  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd4, [%r2], 256;\n"
	"  @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	" [%r3], [%rd3, {8, 2}], [%r2];\n"
	"  @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
	" [sbuf+128], [%rd3, {%r4, 0}], [%r2];\n"
	"$Lw:\n  mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;\n  @!%p2 bra $Lw;\n"
	"  mad.lo.u32 %r5, %r1, 4, %r3;\n  ld.shared.u32 %r6, [%r5];\n"
	"  ld.shared.u32 %r7, [%r5+128];\n"
	"  mul.wide.u32 %rd5, %r1, 8;\n  add.u64 %rd6, %rd1, %rd5;\n"
	"  st.global.v2.u32 [%rd6], {%r6, %r7};\n  ret;\n}\n";

TEST_F(forms3, tensor_coordinate_immediates)
{
	static uint32_t in[256 + 32], want[64];
	struct vgpu_tensor_map t = { 0 };

	for (int i = 0; i < 256; i++)
		in[i] = 0x10000u * (uint32_t)i + 5;
	for (int k = 0; k < 32; k++) {
		want[2 * k] = in[(2 + k / 8) * 16 + 8 + k % 8];
		want[2 * k + 1] = in[(k / 8) * 16 + k % 8];
	}
	/* the map's base: in's address */
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(in)));
	t.base = vgpu_bo_gpu_address(self->bo[1]);
	t.magic = VGPU_TMAP_MAGIC;
	t.rank = 2;
	t.elem_size = 4;
	t.dims[0] = t.dims[1] = 16;
	t.strides[0] = 64;
	t.box[0] = 8;
	t.box[1] = 4;
	t.elem_strides[0] = t.elem_strides[1] = 1;
	memcpy(&in[256], &t, sizeof(t));
	ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, in, sizeof(in)));
	run32(_metadata, self, tcoord_ptx, NULL, 0, want, 64);
}

/* the forms ptxas refuses: located errors */
TEST_F(forms3, refused)
{
	refused(_metadata, self, "st.global.v2.f32 [%rd1], {_, %f1};",
		"forms3.ptx:10:28: error: a sink '_' in a source vector operand");
	refused(_metadata, self, "mov.b64 {%r1, 1}, %rd1;",
		"forms3.ptx:10:11: error: an immediate in a destination vector operand");
	refused(_metadata, self, "ld.global.v2.u32 {%r1, 5}, [%rd1];",
		"forms3.ptx:10:26: error: expected a register in a vector operand, not '5'");
	refused(_metadata, self, "atom.global.v2.f32.add {%f1, %f2}, [%rd1], {%f1, _};",
		"error: a sink '_' in a source vector operand");
	refused(_metadata, self,
		"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		" [%r1], [%rd1, {_, %r1}], [%r2];",
		"error: a sink '_' in a source vector operand");
	/* a call's operands take no vector immediates (after a store's) */
	refused(_metadata, self, "st.global.v2.u32 [%rd1], {1, 2};\n  call (%r1), f, ({1, 2});",
		"forms3.ptx:11:20: error: expected a register in a vector operand, not '1'");
	refused(_metadata, self, "mov.b64 %rd1, {%r1, 1, 2};",
		"error: unsupported PTX construct 'mov.b64'");
	refused(_metadata, self, "cp.async.ca.shared.global [%r1], [64], 4;",
		"forms3.ptx:10:3: error: unsupported PTX construct 'cp.async.ca.shared.global': "
		"an absolute global, local or generic address");
	refused(_metadata, self, "cp.async.ca.shared.global [%r1], [%r2], 4;",
		"forms3.ptx:10:3: error: a global address must be a 64-bit register");
	refused(_metadata, self, "cp.async.ca.shared.global [%r1], [%rd1+4294967296], 4;",
		"forms3.ptx:10:3: error: an address offset of more than 32 bits");
}

TEST_HARNESS_MAIN
