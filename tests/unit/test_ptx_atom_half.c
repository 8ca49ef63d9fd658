// SPDX-License-Identifier: MIT
/*
 * The PTX front end's half min/max atomics on the sim backend: the vector
 * atom/red .min/.max.noftz of .f16/.bf16 (.v2, .v4, .v8) and
 * .f16x2/.bf16x2 (.v2, .v4), on .global and generic addresses, with
 * orderings, scopes and the cache hint, one atomic per element; and
 * cp.reduce.async.bulk .min/.max of .f16/.bf16.  Each thread's 16 bytes
 * hold 8 halves: all 256 pairs of 16 edge values (NaNs with payloads,
 * quiet and signalling, +-0, +-inf, subnormals) over 32 threads, and the
 * bytes a narrower vector does not reach must stay.  The expected bits
 * come from a reference written here (the halves as floats): a NaN loses
 * to a number, two NaNs give 0x7fff, -0 is below +0, which is what an H200
 * computes (tests/ptx/gen atom.expected, async.expected).  The forms
 * ptxas refuses (scalar half min/max, vector atomics on shared memory,
 * f32 min) are refused with a message.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"

#define THREADS 32

PTX_FIXTURE(ahalf)

static const uint16_t f16_edge[16] = {
	0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7e01,
	0x7c01, 0xfe01, 0x0001, 0x03ff, 0x8001, 0x0400, 0x7bff, 0x7fff,
};

static const uint16_t bf16_edge[16] = {
	0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x7fc1,
	0x7f81, 0xffc1, 0x0001, 0x007f, 0x8001, 0x0080, 0x7f7f, 0x7fff,
};

static float half_value(uint16_t h, bool bf)
{
	uint32_t u = (uint32_t)h << 16;
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float f;

	if (bf) {
		memcpy(&f, &u, 4);
		return f;
	}
	if (e == 0x1f)
		f = m ? NAN : INFINITY;
	else if (!e)
		f = ldexpf((float)m, -24);
	else
		f = ldexpf((float)(m | 0x400), e - 25);
	return h & 0x8000 ? -f : f;
}

static uint16_t ref_minmax(uint16_t a, uint16_t b, bool bf, bool max)
{
	float x = half_value(a, bf), y = half_value(b, bf);

	if (isnan(x) && isnan(y))
		return 0x7fff;
	if (isnan(x) || isnan(y))
		return isnan(x) ? b : a;
	if (x == y && !signbit(x) != !signbit(y)) /* -0 and +0 */
		return !!signbit(x) != max ? a : b;
	return (x < y) != max ? a : b;
}

/*
 * in: thread t's 4 memory words, then its 4 operand words; every (memory,
 * operand) pair of the edge values once over the 32 threads' 8 halves
 */
static void pair_inputs(const uint16_t *edge, uint32_t *in)
{
	for (unsigned t = 0; t < THREADS; t++)
		for (unsigned e = 0; e < 8; e++) {
			unsigned p = t * 8 + e, w = 8 * t + e / 2, sh = 16 * (e & 1);

			if (!(e & 1))
				in[w] = in[w + 4] = 0;
			in[w] |= (uint32_t)edge[p / 16] << sh;
			in[w + 4] |= (uint32_t)edge[p % 16] << sh;
		}
}

/*
 * The kernel of one vector atomic @insn (its text up to the address) on
 * the thread's 16 bytes of out (memory: copied from in first; then the
 * old values at out + 16), operands from in + 16: eight .b16 or four
 * .b32 registers, the first @n of them used.  @hint: the cache policy
 * operand.
 */
static void vector_kernel(char *ptx, size_t len, const char *insn, bool red, bool x2,
			  int n, bool hint)
{
	char d[128] = "", s[128] = "";
	int k, o;

	for (k = 0; k < n; k++) {
		o = (int)strlen(d);
		snprintf(d + o, sizeof(d) - (size_t)o, "%s%%%s%d", k ? ", " : "{", x2 ? "r" : "h",
			 (x2 ? 10 : 8) + k);
		o = (int)strlen(s);
		snprintf(s + o, sizeof(s) - (size_t)o, "%s%%%s%d", k ? ", " : "{", x2 ? "r" : "h",
			 (x2 ? 6 : 0) + k);
	}
	strcat(d, "}");
	strcat(s, "}");
	snprintf(ptx, len,
		 ".version 8.6\n.target sm_90\n.address_size 64\n"
		 ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
		 "  .reg .b16 %%h<16>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<8>;\n"
		 "  ld.param.u64 %%rd1, [out];\n  ld.param.u64 %%rd2, [in];\n"
		 "  mov.u32 %%r1, %%tid.x;\n"
		 "  mul.wide.u32 %%rd3, %%r1, 32;\n"
		 "  add.u64 %%rd4, %%rd2, %%rd3;\n  add.u64 %%rd5, %%rd1, %%rd3;\n"
		 "  ld.global.v4.u32 {%%r2, %%r3, %%r4, %%r5}, [%%rd4];\n"
		 "  st.global.v4.u32 [%%rd5], {%%r2, %%r3, %%r4, %%r5};\n"
		 "  ld.global.v4.u32 {%%r6, %%r7, %%r8, %%r9}, [%%rd4+16];\n"
		 "  mov.b32 {%%h0, %%h1}, %%r6;\n  mov.b32 {%%h2, %%h3}, %%r7;\n"
		 "  mov.b32 {%%h4, %%h5}, %%r8;\n  mov.b32 {%%h6, %%h7}, %%r9;\n"
		 "  mov.b32 %%r10, 0;\n  mov.b32 %%r11, 0;\n  mov.b32 %%r12, 0;\n  mov.b32 %%r13, 0;\n"
		 "  mov.b32 {%%h8, %%h9}, %%r10;\n  mov.b32 {%%h10, %%h11}, %%r10;\n"
		 "  mov.b32 {%%h12, %%h13}, %%r10;\n  mov.b32 {%%h14, %%h15}, %%r10;\n"
		 "  createpolicy.fractional.L2::evict_last.b64 %%rd6, 1.0;\n"
		 "  %s %s%s[%%rd5], %s%s;\n"
		 "%s"
		 "  st.global.v4.u32 [%%rd5+16], {%%r10, %%r11, %%r12, %%r13};\n"
		 "  ret;\n}\n",
		 insn, red ? "" : d, red ? "" : ", ", s, hint ? ", %rd6" : "",
		 x2 ? "" :
		      "  mov.b32 %r10, {%h8, %h9};\n  mov.b32 %r11, {%h10, %h11};\n"
		      "  mov.b32 %r12, {%h12, %h13};\n  mov.b32 %r13, {%h14, %h15};\n");
}

/* Launch @self's kernel on 32 threads, out (256 words) from @in (256). */
static void run_once(struct __test_metadata *_metadata, FIXTURE_DATA(ahalf) *self,
		     const uint32_t *in, uint32_t *out, uint64_t seed)
{
	struct vgpu_args *args = NULL;

	vgpu_bo_free(self->bo[0]);
	vgpu_bo_free(self->bo[1]);
	self->bo[0] = self->bo[1] = NULL;
	memset(out, 0xcc, 256 * 4);
	ASSERT_EQ(0, buf(self, 0, out, 256 * 4));
	ASSERT_EQ(0, buf(self, 1, in, 256 * 4));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, THREADS, seed));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, 256 * 4));
}

static const struct vform {
	const char *insn;
	int n; /* elements */
} vforms[] = {
	{ "atom.global.v8.f16.min.noftz", 8 },
	{ "atom.global.v8.bf16.max.noftz", 8 },
	{ "atom.global.v4.f16x2.max.noftz", 4 },
	{ "atom.global.v4.bf16x2.min.noftz", 4 },
	{ "atom.global.v2.f16.max.noftz", 2 },
	{ "atom.v4.bf16.min.noftz", 4 }, /* generic */
	{ "atom.acq_rel.sys.global.min.noftz.v2.f16x2", 2 },
	{ "atom.global.v4.f16.min.noftz.L2::cache_hint", 4 },
	{ "red.global.v8.f16.max.noftz", 8 },
	{ "red.release.cluster.global.v2.bf16x2.max.noftz", 2 },
	{ "red.v4.f16x2.min.noftz", 4 },
	{ "red.global.v2.bf16.min.noftz.L2::cache_hint", 2 },
};

TEST_F(ahalf, vector_min_max)
{
	uint32_t in[256], out[256];
	char ptx[4096];

	for (size_t f = 0; f < sizeof(vforms) / sizeof(vforms[0]); f++) {
		const struct vform *v = &vforms[f];
		bool bf = strstr(v->insn, "bf16") != NULL, x2 = strstr(v->insn, "x2") != NULL;
		bool max = strstr(v->insn, ".max") != NULL, red = v->insn[0] == 'r';
		int halves = x2 ? 2 * v->n : v->n; /* the halves it reaches */

		pair_inputs(bf ? bf16_edge : f16_edge, in);
		vector_kernel(ptx, sizeof(ptx), v->insn, red, x2, v->n, strstr(v->insn, "L2::"));
		vgpu_program_free(self->prog);
		self->prog = NULL;
		ASSERT_EQ(0, ptx_load(_metadata, self, v->insn, ptx, "k"));
		for (uint64_t seed = 0; seed < 2; seed++) {
			run_once(_metadata, self, in, out, seed);
			for (unsigned t = 0; t < THREADS; t++)
				for (int e = 0; e < 8; e++) {
					unsigned w = 8 * t + (unsigned)e / 2, sh = 16 * (e & 1);
					uint16_t a = (uint16_t)(in[w] >> sh), b = (uint16_t)(in[w + 4] >> sh);
					uint16_t mem = (uint16_t)(out[w] >> sh), old = (uint16_t)(out[w + 4] >> sh);
					uint16_t want = e < halves ? ref_minmax(a, b, bf, max) : a;

					EXPECT_EQ(want, mem) {
						TH_LOG("%s seed %llu thread %u half %d: %04x, %04x: %04x, want %04x",
						       v->insn, (unsigned long long)seed, t, e, a, b, mem, want);
					}
					EXPECT_EQ(e < halves && !red ? a : 0, old) {
						TH_LOG("%s thread %u half %d: old %04x", v->insn, t, e, old);
					}
				}
		}
	}
}

/*
 * cp.reduce.async.bulk .min/.max of .f16/.bf16: thread t's memory word
 * to out[t], its operand word to shared memory, then one thread reduces
 * the 128 bytes into out
 */
static const char bulk_ptx[] =
	".version 8.6\n.target sm_90\n.address_size 64\n"
	".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	"  .shared .align 128 .b8 buf[128];\n"
	"  .reg .pred %%p<2>;\n  .reg .b32 %%r<8>;\n  .reg .b64 %%rd<8>;\n"
	"  ld.param.u64 %%rd1, [out];\n  ld.param.u64 %%rd2, [in];\n"
	"  mov.u32 %%r1, %%tid.x;\n  setp.eq.u32 %%p1, %%r1, 0;\n"
	"  mul.wide.u32 %%rd3, %%r1, 4;\n"
	"  add.u64 %%rd4, %%rd2, %%rd3;\n  add.u64 %%rd5, %%rd1, %%rd3;\n"
	"  ld.global.u32 %%r2, [%%rd4];\n  ld.global.u32 %%r3, [%%rd4+128];\n"
	"  st.global.u32 [%%rd5], %%r2;\n"
	"  mov.u32 %%r4, buf;\n  mad.lo.u32 %%r5, %%r1, 4, %%r4;\n"
	"  st.shared.u32 [%%r5], %%r3;\n"
	"  fence.proxy.async.global;\n  fence.proxy.async.shared::cta;\n  bar.sync 0;\n"
	"  createpolicy.fractional.L2::evict_last.b64 %%rd6, 1.0;\n"
	"  @%%p1 cp.reduce.async.bulk.global.shared::cta.bulk_group%s [%%rd1], [%%r4], 128%s;\n"
	"  @%%p1 cp.async.bulk.commit_group;\n  @%%p1 cp.async.bulk.wait_group 0;\n"
	"  ret;\n}\n";

TEST_F(ahalf, bulk_reduce_min_max)
{
	static const char *const ops[] = { ".min.f16", ".max.f16", ".min.bf16",
					   ".L2::cache_hint.max.bf16" };
	uint32_t in[256], out[256], pairs[256];
	char ptx[4096];

	for (unsigned o = 0; o < 4; o++) {
		bool bf = strstr(ops[o], "bf16") != NULL, max = strstr(ops[o], "max") != NULL;

		pair_inputs(bf ? bf16_edge : f16_edge, pairs);
		snprintf(ptx, sizeof(ptx), bulk_ptx, ops[o], strstr(ops[o], "L2") ? ", %rd6" : "");
		vgpu_program_free(self->prog);
		self->prog = NULL;
		ASSERT_EQ(0, ptx_load(_metadata, self, ops[o], ptx, "k"));
		/* memory words in[0..31], operands in[32..63]: a quarter of the
		 * pairs each time (seed 0, 1: default and random, sanitized) */
		for (unsigned q = 0; q < 4; q++) {
			uint64_t seed = q & 1;

			memset(in, 0, sizeof(in));
			for (unsigned t = 0; t < THREADS; t++) {
				in[t] = pairs[8 * (8 * q + t / 4) + t % 4];
				in[32 + t] = pairs[8 * (8 * q + t / 4) + 4 + t % 4];
			}
			run_once(_metadata, self, in, out, seed);
			for (unsigned t = 0; t < THREADS; t++)
				for (unsigned sh = 0; sh < 32; sh += 16) {
					uint16_t a = (uint16_t)(in[t] >> sh), b = (uint16_t)(in[32 + t] >> sh);
					uint16_t want = ref_minmax(a, b, bf, max);

					EXPECT_EQ(want, (uint16_t)(out[t] >> sh)) {
						TH_LOG("%s seed %llu word %u: %04x, %04x: %04x, want %04x",
						       ops[o], (unsigned long long)seed, t, a, b,
						       (uint16_t)(out[t] >> sh), want);
					}
				}
		}
	}
}

/* what ptxas refuses, the front end too, saying what */
TEST_F(ahalf, refused_forms)
{
	static const struct {
		const char *insn, *why;
	} bad[] = {
		{ "atom.global.min.noftz.f16 %h8, [%rd5], %h0;", "vector form" },
		{ "atom.global.max.noftz.bf16x2 %r10, [%rd5], %r6;", "vector form" },
		{ "atom.shared.v2.f16.min.noftz {%h8, %h9}, [%r1], {%h0, %h1};",
		  "global (or generic) only" },
		{ "atom.global.v2.f32.min {%r10, %r11}, [%rd5], {%r6, %r7};",
		  "vector atomics are .add of f32" },
		{ "atom.global.v2.f16.and.noftz {%h8, %h9}, [%rd5], {%h0, %h1};",
		  "vector atomics are .add of f32" },
	};
	char ptx[1024];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(ptx, sizeof(ptx),
			 ".version 8.6\n.target sm_90\n.address_size 64\n"
			 ".visible .entry k(.param .u64 out)\n{\n"
			 "  .reg .b16 %%h<16>;\n  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<8>;\n"
			 "  ld.param.u64 %%rd5, [out];\n  mov.u32 %%r1, 0;\n"
			 "  mov.b32 %%r6, 0;\n  mov.b32 %%r7, 0;\n  mov.b32 {%%h0, %%h1}, %%r6;\n"
			 "  %s\n  ret;\n}\n", bad[i].insn);
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, ptx, strlen(ptx), "bad.ptx",
							 &self->prog, self->log,
							 sizeof(self->log)));
		EXPECT_TRUE(strstr(self->log, bad[i].why) != NULL) {
			TH_LOG("%s: %s", bad[i].insn, self->log);
		}
		vgpu_program_free(self->prog);
		self->prog = NULL;
	}
}

TEST_HARNESS_MAIN
