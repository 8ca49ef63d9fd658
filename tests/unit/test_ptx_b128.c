// SPDX-License-Identifier: MIT
/*
 * The .b128 type (PTX ISA 8.3+) on the sim backend: .reg .b128 registers,
 * mov.b128's pack, unpack, copy and literal, ld/st .b128 on global,
 * shared, local, generic and parameter memory, atom.cas.b128 and
 * atom.exch.b128 on global, shared and generic addresses (sm_90).  Many
 * threads of several CTAs (SMs on four host threads) CAS-incrementing
 * one 128-bit counter get the exact total, with its carry from the low
 * to the high half, under the default and random schedules.  The forms
 * ptxas 13.0 refuses for sm_90a get a located error.
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

#define SCHEDULES 6

PTX_FIXTURE(b128)

#define HEAD ".version 9.0\n.target sm_90a\n.address_size 64\n\n"

/*
 * Thread t (64 of them): in[t] (16 bytes) by ld.global.b128, unpacked to
 * two .b64, lo + t and hi ^ t packed again and stored at out[t]; the same
 * value through shared (st/ld.shared.b128), local and a generic address of
 * shared memory, the four .b32 quarters of in[t] rotated by one into
 * out[64 + t]; the .b128 parameter to out[128 + t]; the literals 5 and
 * 0x8000000000000001 (zero-extended) to out[192 + t] and out[256 + t].
 */
static const char moves_ptx[] =
	HEAD
	".visible .entry k(.param .u64 in, .param .u64 out, .param .b128 pq)\n{\n"
	"\t.reg .b128 %q<8>;\n\t.reg .b64 %rd<16>;\n\t.reg .b32 %r<12>;\n"
	"\t.shared .align 16 .b8 sm[1024];\n\t.local .align 16 .b8 lo[16];\n"
	"\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n"
	"\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 16;\n"
	"\tadd.s64 %rd4, %rd1, %rd3;\n\tadd.s64 %rd5, %rd2, %rd3;\n"
	"\tld.global.nc.b128 %q1, [%rd4];\n"
	"\tmov.b128 {%rd6, %rd7}, %q1;\n"
	"\tcvt.u64.u32 %rd8, %r1;\n\tadd.s64 %rd6, %rd6, %rd8;\n\txor.b64 %rd7, %rd7, %rd8;\n"
	"\tmov.b128 %q2, {%rd6, %rd7};\n"
	/* through shared memory, by its name and by a generic address */
	"\tshl.b32 %r2, %r1, 4;\n\tmov.u32 %r3, sm;\n\tadd.u32 %r4, %r3, %r2;\n"
	"\tst.shared.b128 [%r4], %q2;\n\tbar.sync 0;\n"
	"\tld.volatile.shared.b128 %q3, [%r4];\n"
	"\tmov.u64 %rd9, lo;\n\tst.local.b128 [%rd9], %q3;\n\tld.local.b128 %q4, [%rd9];\n"
	"\tcvta.shared.u64 %rd10, %rd9;\n" /* overwritten below: only the shape */
	"\tcvt.u64.u32 %rd11, %r4;\n\tcvta.shared.u64 %rd10, %rd11;\n"
	"\tst.b128 [%rd10], %q4;\n\tld.relaxed.cta.b128 %q5, [%rd10];\n"
	"\tmov.b128 %q6, %q5;\n"
	"\tst.global.b128 [%rd5], %q6;\n"
	/* quarters */
	"\tmov.b128 {%r5, %r6, %r7, %r8}, %q1;\n"
	"\tmov.b128 %q7, {%r6, %r7, %r8, %r5};\n"
	"\tst.relaxed.gpu.global.b128 [%rd5+1024], %q7;\n"
	/* the parameter and literals */
	"\tld.param.b128 %q1, [pq];\n\tst.global.b128 [%rd5+2048], %q1;\n"
	"\tmov.b128 %q1, 5;\n\tst.global.b128 [%rd5+3072], %q1;\n"
	"\tst.global.b128 [%rd5+4096], 0x8000000000000001;\n"
	"\tret;\n}\n";

static void in_value(uint32_t t, uint64_t v[2])
{
	v[0] = 0xfffffffffffffff0ull + t * 0x0101010101ull;
	v[1] = 0x8000000000000000ull | ((uint64_t)t << 40) | (t * 7u);
}

TEST_F(b128, moves_loads_and_stores)
{
	enum { NT = 64 };
	static uint64_t in[2 * NT], out[2 * 5 * NT];
	const uint64_t pq[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

	ASSERT_EQ(0, ptx_load(_metadata, self, "mv.ptx", moves_ptx, "k"));
	for (uint32_t t = 0; t < NT; t++)
		in_value(t, &in[2 * t]);
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		struct vgpu_args *args = NULL;

		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, out, sizeof(out)));
		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		ASSERT_EQ(0, vgpu_args_set_raw(args, 16, pq, 16));
		ASSERT_EQ(0, run(_metadata, self, args, 1, NT, s));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < NT; t++) {
			uint64_t v[2];
			uint32_t w[4], r[4];

			in_value(t, v);
			EXPECT_EQ(v[0] + t, out[2 * t]) TH_LOG("seed %llu t %u", (unsigned long long)s, t);
			EXPECT_EQ(v[1] ^ t, out[2 * t + 1]);
			memcpy(w, v, 16);
			memcpy(r, &out[2 * (NT + t)], 16);
			EXPECT_EQ(w[1], r[0]);
			EXPECT_EQ(w[2], r[1]);
			EXPECT_EQ(w[3], r[2]);
			EXPECT_EQ(w[0], r[3]);
			EXPECT_EQ(pq[0], out[2 * (2 * NT + t)]);
			EXPECT_EQ(pq[1], out[2 * (2 * NT + t) + 1]);
			EXPECT_EQ(5u, out[2 * (3 * NT + t)]);
			EXPECT_EQ(0u, out[2 * (3 * NT + t) + 1]);
			EXPECT_EQ(0x8000000000000001ull, out[2 * (4 * NT + t)]);
			EXPECT_EQ(0u, out[2 * (4 * NT + t) + 1]);
		}
	}
}

/*
 * Each thread adds 1 to the 128-bit counter at [cnt] @iters times, each
 * by a compare-and-swap loop over atom.cas.b128 (the low half's carry
 * into the high half); SPACE picks global (.global), generic, or shared
 * (a CTA's own counter, starting from [cnt], written back to cnt + 16 *
 * (1 + ctaid) at the end).  Every thread also counts its failed CASes
 * (each one means another thread's succeeded).
 */
#define CAS_KERNEL(name, atom, setup, finish)                                            \
	".visible .entry " name "(.param .u64 cnt, .param .u32 iters)\n{\n"              \
	"\t.reg .b128 %q<4>;\n\t.reg .b64 %rd<12>;\n\t.reg .b32 %r<8>;\n"                 \
	"\t.reg .pred %p<4>;\n\t.shared .align 16 .b8 c[16];\n"                           \
	"\tld.param.u64 %rd1, [cnt];\n\tld.param.u32 %r1, [iters];\n"                     \
	setup "\tmov.u32 %r2, 0;\n"                                                       \
	"LOOP:\n\tld.relaxed.gpu.b128 %q1, [%rd9];\n"                                     \
	"RETRY:\n\tmov.b128 {%rd2, %rd3}, %q1;\n"                                        \
	"\tadd.u64 %rd4, %rd2, 1;\n\tsetp.eq.u64 %p1, %rd4, 0;\n"                          \
	"\tselp.u64 %rd6, 1, 0, %p1;\n\tadd.u64 %rd5, %rd3, %rd6;\n"                       \
	"\tmov.b128 %q2, {%rd4, %rd5};\n"                                                 \
	"\t" atom " %q3, [%rd9], %q1, %q2;\n"                                              \
	"\tmov.b128 {%rd7, %rd8}, %q3;\n"                                                 \
	"\tsetp.ne.u64 %p1, %rd7, %rd2;\n\tsetp.ne.or.u64 %p1, %rd8, %rd3, %p1;\n"        \
	"\tmov.b128 %q1, %q3;\n\t@%p1 bra RETRY;\n"                                         \
	"\tadd.u32 %r2, %r2, 1;\n\tsetp.lt.u32 %p2, %r2, %r1;\n\t@%p2 bra LOOP;\n"        \
	finish "\tret;\n}\n"

static const char cas_ptx[] =
	HEAD
	CAS_KERNEL("glob", "atom.acq_rel.gpu.global.cas.b128", "\tmov.u64 %rd9, %rd1;\n", "")
	CAS_KERNEL("gen", "atom.cas.b128", "\tmov.u64 %rd9, %rd1;\n", "")
	CAS_KERNEL("shr", "atom.relaxed.cta.shared.cas.b128",
		   "\tmov.u32 %r3, %tid.x;\n\tsetp.eq.u32 %p3, %r3, 0;\n"
		   "\tld.global.b128 %q1, [%rd1];\n\t@%p3 st.shared.b128 [c], %q1;\n"
		   "\tbar.sync 0;\n\tmov.u64 %rd10, c;\n\tcvta.shared.u64 %rd9, %rd10;\n",
		   "\tbar.sync 0;\n\tld.shared.b128 %q1, [c];\n\tmov.u32 %r4, %ctaid.x;\n"
		   "\tadd.u32 %r4, %r4, 1;\n\tmul.wide.u32 %rd10, %r4, 16;\n"
		   "\tadd.s64 %rd11, %rd1, %rd10;\n\t@%p3 st.global.b128 [%rd11], %q1;\n");

TEST_F(b128, cas_increments_a_128_bit_counter_exactly)
{
	static const char *const kernels[] = { "glob", "gen", "shr" };
	enum { GRID = 8, BLOCK = 96, ITERS = 8 };

	/* SMs on four host threads: the global counter's CASes race */
	vgpu_device_close(self->dev);
	setenv("VGPU_SIM_THREADS", "4", 1);
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
	unsetenv("VGPU_SIM_THREADS");

	for (size_t k = 0; k < 3; k++) {
		vgpu_program_free(self->prog);
		self->prog = NULL;
		ASSERT_EQ(0, ptx_load(_metadata, self, "cas.ptx", cas_ptx, kernels[k]));
		if (!self->bo[0])
			ASSERT_EQ(0, buf(self, 0, NULL, 16 * (GRID + 1)));
		for (uint64_t s = 0; s < SCHEDULES; s++) {
			/* 100 below the carry, and a high half that must keep its bits */
			uint64_t init[2 * (GRID + 1)] = { ~0ull - 99, 0x7ffffffffffffff0ull }, got[2 * (GRID + 1)];
			struct vgpu_args *args = NULL;
			unsigned __int128 start = (unsigned __int128)init[1] << 64 | init[0], want;

			ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, init, sizeof(init)));
			ASSERT_EQ(0, vgpu_args_new(self->k, &args));
			ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
			ASSERT_EQ(0, vgpu_args_set_u32(args, 1, ITERS));
			ASSERT_EQ(0, run(_metadata, self, args, GRID, BLOCK, s));
			vgpu_args_free(args);
			ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, got, sizeof(got)));
			if (k < 2) {
				want = start + (unsigned __int128)GRID * BLOCK * ITERS;
				EXPECT_EQ((uint64_t)want, got[0]) TH_LOG("%s seed %llu", kernels[k],
									 (unsigned long long)s);
				EXPECT_EQ((uint64_t)(want >> 64), got[1]);
				continue;
			}
			want = start + (unsigned __int128)BLOCK * ITERS;
			for (int c = 1; c <= GRID; c++) {
				EXPECT_EQ((uint64_t)want, got[2 * c]) TH_LOG("cta %d seed %llu", c - 1,
									     (unsigned long long)s);
				EXPECT_EQ((uint64_t)(want >> 64), got[2 * c + 1]);
			}
		}
	}
}

/*
 * atom.exch.b128: thread t (of 2 CTAs of 64) swaps (t, ~t) into the one
 * location and stores what it got at out[1 + t]; the values taken out and
 * the one left form exactly the initial value and every thread's, each
 * once.  Also a compare-and-swap that fails (it returns the value, leaves
 * it) and one that succeeds, on global and shared memory, with the
 * literal forms and a sink destination.
 */
static const char exch_ptx[] =
	HEAD
	".visible .entry k(.param .u64 loc, .param .u64 out)\n{\n"
	"\t.reg .b128 %q<6>;\n\t.reg .b64 %rd<12>;\n\t.reg .b32 %r<6>;\n\t.reg .pred %p<2>;\n"
	"\t.shared .align 16 .b8 s[16];\n"
	"\tld.param.u64 %rd1, [loc];\n\tld.param.u64 %rd2, [out];\n"
	"\tmov.u32 %r1, %tid.x;\n\tmov.u32 %r2, %ctaid.x;\n\tmad.lo.u32 %r3, %r2, 64, %r1;\n"
	"\tcvt.u64.u32 %rd3, %r3;\n\tnot.b64 %rd4, %rd3;\n\tmov.b128 %q1, {%rd3, %rd4};\n"
	"\tatom.global.exch.b128 %q2, [%rd1], %q1;\n"
	"\tmul.wide.u32 %rd5, %r3, 16;\n\tadd.s64 %rd6, %rd2, %rd5;\n"
	"\tst.global.b128 [%rd6+16], %q2;\n"
	/* CTA 0, thread 0: the CAS forms at out + 16 * 200 .. */
	"\tor.b32 %r4, %r1, %r2;\n\tsetp.ne.u32 %p1, %r4, 0;\n\t@%p1 ret;\n"
	"\tst.shared.b128 [s], 77;\n"
	"\tatom.shared.cas.b128 %q3, [s], 76, %q1;\n"	      /* fails: 77 stays */
	"\tst.global.b128 [%rd2+3200], %q3;\n"
	"\tatom.shared.cas.b128 %q3, [s], 77, %q1;\n"	      /* succeeds */
	"\tld.shared.b128 %q4, [s];\n\tst.global.b128 [%rd2+3216], %q3;\n"
	"\tst.global.b128 [%rd2+3232], %q4;\n"
	"\tatom.shared.exch.b128 %q3, [s], 0x1234;\n\tld.shared.b128 %q4, [s];\n"
	"\tst.global.b128 [%rd2+3248], %q3;\n\tst.global.b128 [%rd2+3264], %q4;\n"
	"\tst.global.b128 [%rd2+3280], 3;\n"
	"\tatom.global.cas.b128 _, [%rd2+3280], 3, %q1;\n"   /* a sink: succeeds */
	"\tadd.s64 %rd7, %rd2, 3296;\n\tst.global.b128 [%rd7], 4;\n"
	"\tatom.cas.b128 %q5, [%rd7], %q1, %q1;\n"	      /* generic: fails */
	"\tst.global.b128 [%rd2+3312], %q5;\n"
	"\tret;\n}\n";

TEST_F(b128, exch_and_cas_forms)
{
	enum { N = 128 };
	const uint64_t init[2] = { 0xdeadbeefull, 0xfeedull };

	ASSERT_EQ(0, ptx_load(_metadata, self, "exch.ptx", exch_ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, NULL, 16));
	ASSERT_EQ(0, buf(self, 1, NULL, 16 * 208));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		static uint64_t out[2 * 208];
		uint64_t loc[2];
		int seen[N + 1] = { 0 };
		struct vgpu_args *args = NULL;

		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, init, 16));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, out, sizeof(out)));
		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		ASSERT_EQ(0, run(_metadata, self, args, 2, 64, s));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, loc, 16));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
		for (int t = 0; t <= N; t++) {
			const uint64_t *v = t < N ? &out[2 * (1 + t)] : loc;

			if (v[0] == init[0] && v[1] == init[1]) {
				seen[N]++;
				continue;
			}
			ASSERT_LT(v[0], (uint64_t)N) TH_LOG("seed %llu t %d: 0x%llx", (unsigned long long)s,
						       t, (unsigned long long)v[0]);
			EXPECT_EQ(~v[0], v[1]);
			seen[v[0]]++;
		}
		for (int t = 0; t <= N; t++) {
			EXPECT_EQ(1, seen[t]) TH_LOG("value %d seed %llu", t, (unsigned long long)s);
		}
		EXPECT_EQ(77u, out[400]);	/* the failed CAS returns the value */
		EXPECT_EQ(0u, out[401]);
		EXPECT_EQ(77u, out[402]);	/* the one that succeeds too */
		EXPECT_EQ(0u, out[403]);
		EXPECT_EQ(0u, out[404]);	/* and leaves thread 0's (0, ~0) */
		EXPECT_EQ(~0ull, out[405]);
		EXPECT_EQ(0u, out[406]);	/* exch returns it */
		EXPECT_EQ(~0ull, out[407]);
		EXPECT_EQ(0x1234u, out[408]);	/* and leaves the literal */
		EXPECT_EQ(0u, out[409]);
		EXPECT_EQ(0u, out[410]);	/* the sink's CAS stored (0, ~0) */
		EXPECT_EQ(~0ull, out[411]);
		EXPECT_EQ(4u, out[412]);	/* the generic CAS failed: 4 stays */
		EXPECT_EQ(0u, out[413]);
	}
}

/*
 * A .func taking and returning .b128 parameters (a real call: the
 * parameters on the thread's stack): f(a, b) = (a.hi ^ b.lo, a.lo + b.hi)
 * for every thread's (in[t], (t, ~t)).
 */
static const char func_ptx[] =
	HEAD
	".func (.param .b128 r) f(.param .b128 a, .param .b128 b)\n{\n"
	"\t.reg .b128 %q<4>;\n\t.reg .b64 %rd<8>;\n"
	"\tld.param.b128 %q1, [a];\n\tld.param.b128 %q2, [b];\n"
	"\tmov.b128 {%rd1, %rd2}, %q1;\n\tmov.b128 {%rd3, %rd4}, %q2;\n"
	"\txor.b64 %rd5, %rd2, %rd3;\n\tadd.s64 %rd6, %rd1, %rd4;\n"
	"\tmov.b128 %q3, {%rd5, %rd6};\n\tst.param.b128 [r], %q3;\n\tret;\n}\n"
	".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
	"\t.reg .b128 %q<4>;\n\t.reg .b64 %rd<10>;\n\t.reg .b32 %r<2>;\n"
	"\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n"
	"\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd3, %r1, 16;\n"
	"\tadd.s64 %rd4, %rd1, %rd3;\n\tadd.s64 %rd5, %rd2, %rd3;\n"
	"\tld.global.b128 %q1, [%rd4];\n\tcvt.u64.u32 %rd6, %r1;\n\tnot.b64 %rd7, %rd6;\n"
	"\tmov.b128 %q2, {%rd6, %rd7};\n"
	"\t{\n\t.param .b128 pa;\n\t.param .b128 pb;\n\t.param .b128 pr;\n"
	"\tst.param.b128 [pa], %q1;\n\tst.param.b128 [pb], %q2;\n"
	"\tcall (pr), f, (pa, pb);\n\tld.param.b128 %q3, [pr];\n\t}\n"
	"\tst.global.b128 [%rd5], %q3;\n\tret;\n}\n";

TEST_F(b128, func_parameters_and_result)
{
	enum { NT = 64 };
	static uint64_t in[2 * NT], out[2 * NT];

	ASSERT_EQ(0, ptx_load(_metadata, self, "func.ptx", func_ptx, "k"));
	for (uint32_t t = 0; t < NT; t++)
		in_value(t, &in[2 * t]);
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	for (uint64_t s = 0; s < 3; s++) {
		struct vgpu_args *args = NULL;

		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		ASSERT_EQ(0, run(_metadata, self, args, 1, NT, s));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < NT; t++) {
			EXPECT_EQ(in[2 * t + 1] ^ t, out[2 * t]) TH_LOG("t %u", t);
			EXPECT_EQ(in[2 * t] + ~(uint64_t)t, out[2 * t + 1]);
		}
	}
}

/*
 * More .b128 values live at once than registers (72 x 4 words): the
 * allocator spills some to the thread's frame.  Thread t loads 72 values
 * from in + 16 * (72t + i), then stores them in reverse order.
 */
TEST_F(b128, spilled_registers)
{
	enum { NV = 72, NT = 32 };
	static uint64_t in[2 * NV * NT], out[2 * NV * NT];
	static char text[16384];
	size_t n = 0;

	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      HEAD ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
				   "\t.reg .b128 %%q<%d>;\n\t.reg .b64 %%rd<8>;\n\t.reg .b32 %%r<2>;\n"
				   "\tld.param.u64 %%rd1, [in];\n\tld.param.u64 %%rd2, [out];\n"
				   "\tmov.u32 %%r1, %%tid.x;\n\tmul.wide.u32 %%rd3, %%r1, %d;\n"
				   "\tadd.s64 %%rd4, %%rd1, %%rd3;\n\tadd.s64 %%rd5, %%rd2, %%rd3;\n",
			      NV, 16 * NV);
	for (int i = 0; i < NV; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "\tld.global.b128 %%q%d, [%%rd4+%d];\n", i, 16 * i);
	for (int i = 0; i < NV; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "\tst.global.b128 [%%rd5+%d], %%q%d;\n", 16 * i, NV - 1 - i);
	snprintf(text + n, sizeof(text) - n, "\tret;\n}\n");
	ASSERT_EQ(0, ptx_load(_metadata, self, "spill.ptx", text, "k"));
	for (int i = 0; i < 2 * NV * NT; i++)
		in[i] = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	for (uint64_t s = 0; s < 2; s++) {
		struct vgpu_args *args = NULL;

		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		ASSERT_EQ(0, run(_metadata, self, args, 1, NT, s));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
		for (int t = 0; t < NT; t++)
			for (int i = 0; i < NV; i++) {
				const uint64_t *w = &in[2 * (NV * t + NV - 1 - i)];

				ASSERT_EQ(w[0], out[2 * (NV * t + i)]) TH_LOG("t %d value %d", t, i);
				ASSERT_EQ(w[1], out[2 * (NV * t + i) + 1]);
			}
	}
}

/*
 * .global .b128 module variables with initial values read by
 * ld.global.b128, and a .const one: each literal's 64 bits (a wider
 * hexadecimal one's low 64) zero-extended, the bytes ptxas 13.0 writes
 * for them (its cubin's .nv.global.init and .nv.constant3 for this
 * module) and what mov.b128 of the same literals gives on an H200.
 */
TEST_F(b128, module_variables)
{
	static const char ptx[] =
		HEAD ".global .align 16 .b128 gq[3] = {5, -1, 0x123456789abcdef0123};\n"
		".const .b128 cq = 0x8000000000000000;\n"
		".visible .entry k(.param .u64 out)\n{\n\t.reg .b128 %q<5>;\n\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [out];\n\tld.global.b128 %q1, [gq];\n"
		"\tld.global.b128 %q2, [gq+16];\n\tld.global.b128 %q3, [gq+32];\n"
		"\tld.const.b128 %q4, [cq];\n"
		"\tst.global.b128 [%rd1], %q1;\n\tst.global.b128 [%rd1+16], %q2;\n"
		"\tst.global.b128 [%rd1+32], %q3;\n\tst.global.b128 [%rd1+48], %q4;\n\tret;\n}\n";
	const uint64_t want[8] = { 5, 0, ~0ull, 0, 0x456789abcdef0123ull, 0, 1ull << 63, 0 };
	uint64_t out[8];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, ptx_load(_metadata, self, "var.ptx", ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

/*
 * ld of a narrower type into a .b128 register (ptxas takes it): as an
 * H200 does it (tests/cuda/real-gpu/b128-narrow-h200-2026-11-30 and
 * b128-s64-h200-2026-11-30), sign-extension for a signed integer type,
 * else zero-extension, to 64 bits, and the high 64 bits zero but for
 * .s64, whose sign fills them; st of one from a .b128 register: its low
 * bits (a wider source is truncated).
 */
TEST_F(b128, narrower_loads_extend)
{
	static const char ptx[] =
		HEAD ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
		"\t.reg .b128 %q<8>;\n\t.reg .b64 %rd<6>;\n\t.reg .b32 %r<3>;\n"
		"\t.shared .align 8 .b8 s[8];\n"
		"\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n"
		"\tld.global.s32 %q1, [%rd1];\n"	       /* 0x80000000 */
		"\tld.global.u8 %q2, [%rd1+4];\n"	       /* 0xff */
		"\tld.global.b64 %q3, [%rd1+8];\n"	       /* 0x8000000000000001 */
		"\tld.global.s64 %q4, [%rd1+8];\n"
		"\tld.global.f32 %q5, [%rd1];\n"
		"\tmov.u32 %r1, 0xfffe;\n\tst.shared.u16 [s], %r1;\n"
		"\tld.shared.s16 %q6, [s];\n"
		"\tmov.u64 %rd3, s;\n\tcvta.shared.u64 %rd4, %rd3;\n\tld.u16 %q7, [%rd4];\n"
		"\tst.global.b128 [%rd2], %q1;\n\tst.global.b128 [%rd2+16], %q2;\n"
		"\tst.global.b128 [%rd2+32], %q3;\n\tst.global.b128 [%rd2+48], %q4;\n"
		"\tst.global.b128 [%rd2+64], %q5;\n\tst.global.b128 [%rd2+80], %q6;\n"
		"\tst.global.b128 [%rd2+96], %q7;\n"
		/* stores of narrower types: the low bits */
		"\tst.global.u8 [%rd2+112], %q3;\n\tst.global.b64 [%rd2+120], %q1;\n"
		"\tst.b16 [%rd2+128], %q6;\n\tret;\n}\n";
	const uint64_t in[2] = { 0x000000ff80000000ull, 0x8000000000000001ull };
	const uint64_t want[17] = {
		0xffffffff80000000ull, 0, 0xff, 0, 0x8000000000000001ull, 0,
		0x8000000000000001ull, ~0ull, 0x80000000ull, 0, ~1ull, 0, 0xfffe, 0,
		0xaaaaaaaaaaaaaa01ull, 0xffffffff80000000ull, 0xaaaaaaaaaaaafffeull,
	};
	uint64_t out[17];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, ptx_load(_metadata, self, "narrow.ptx", ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	memset(out, 0xaa, sizeof(out));
	ASSERT_EQ(0, buf(self, 1, out, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
	for (int i = 0; i < 17; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

/* A misaligned 16-byte atomic faults as the GPU's do. */
TEST_F(b128, misaligned_cas_faults)
{
	static const char ptx[] =
		HEAD ".visible .entry k(.param .u64 p)\n{\n\t.reg .b128 %q<3>;\n\t.reg .b64 %rd<3>;\n"
		"\tld.param.u64 %rd1, [p];\n\tmov.b128 %q2, 1;\n"
		"\tatom.global.cas.b128 %q1, [%rd1+8], 0, %q2;\n"
		"\tret;\n}\n";
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 32 } };
	struct vgpu_exception_record rec;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;

	ASSERT_EQ(0, ptx_load(_metadata, self, "mis.ptx", ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, NULL, 64));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	vgpu_args_free(args);
	EXPECT_EQ(-EIO, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_MISALIGNED, rec.code);
	EXPECT_EQ(vgpu_bo_gpu_address(self->bo[0]) + 8, rec.addr);
	vgpu_job_free(job);
}

/* Forms ptxas 13.0 refuses for sm_90a: each a located error naming it */
TEST_F(b128, forms_ptxas_refuses_are_errors)
{
	static const struct {
		const char *insn, *msg;
	} bad[] = {
		{ "add.b128 %q1, %q1, %q2;", "does not take the .b128 register" },
		{ "and.b128 %q1, %q1, %q2;", "does not take the .b128 register" },
		{ "selp.b128 %q1, %q1, %q2, %p1;", "does not take the .b128 register" },
		{ "cvt.u64.b128 %rd2, %q1;", "does not take the .b128 register" },
		{ "shfl.sync.idx.b128 %q1, %q2, 0, 31, -1;", "does not take the .b128 register" },
		{ "mov.b64 %rd2, %q1;", "does not take the .b128 register" },
		{ "mov.b128 %q1, %rd1;", "mov.b128 takes a .b128 register" },
		{ "st.global.v2.b64 [%rd1], %q1;", "does not take the .b128 register" },
		{ "ld.global.b128 %rd2, [%rd1];", "ld.b128 loads into a .b128 register" },
		{ "ld.global.v2.b128 {%q1, %q2}, [%rd1];", "exceeds 128 bits" },
		{ "atom.global.add.b128 %q1, [%rd1], %q2;", "a .b128 atomic is .cas or .exch" },
		{ "atom.global.and.b128 %q1, [%rd1], %q2;", "a .b128 atomic is .cas or .exch" },
		{ "red.global.exch.b128 [%rd1], %q2;", "red does not take .b128" },
		{ "atom.local.cas.b128 %q1, [%rd1], %q2, %q3;", "on .global, .shared or a generic" },
		{ "atom.global.cas.L2::cache_hint.b128 %q1, [%rd1], %q2, %q3, %rd2;",
		  "takes no .L2::cache_hint" },
		{ "atom.global.cas.b128 %rd2, [%rd1], %q2, %q3;", "is a .b128 register" },
		{ "atom.global.cas.b128 %q1, [%rd1], %rd2, %q3;", "a .b128 operand is a .b128 register" },
		{ "atom.global.cas.b128 {%rd2, %rd3}, [%rd1], %q2, %q3;", "is a .b128 register" },
		{ "ld.global.b128 %q1, [%q2];", "not an address" },
		/* ptxas 13.0 fails (exit status -11) on a literal new value */
		{ "atom.global.cas.b128 %q1, [%rd1], %q2, 2;", "new value in a .b128 register" },
		/* literals past 64 bits (hexadecimal ones past 128): located
		 * at the literal */
		{ "mov.b128 %q1, 0x1ffffffffffffffffffffffffffffffff;", "16: error: constant overflow" },
		{ "mov.b64 %rd2, 123456789012345678901234;", "16: error: constant overflow" },
		/* ptxas's rule for hexadecimal ones: a digit after the top bit
		 * is set (hex_literals_past_64_bits) */
		{ "mov.b128 %q1, 0x8000000000000000f;", "16: error: constant overflow" },
		{ "mov.b64 %rd2, 0xfffffffffffffffff;", "16: error: constant overflow" },
		/* CCCL 13.0's 16-byte atomic_ref exchange: its inline asm
		 * declares _d twice in one scope */
		{ "{ .reg .b128 _d; .reg .b128 _d; }", "30: error: duplicate definition of register '_d'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024], want[64];
		struct vgpu_program *p = NULL;

		snprintf(text, sizeof(text),
			 HEAD ".visible .entry k(.param .u64 out)\n{\n"
			      "\t.reg .b128 %%q<4>;\n\t.reg .b64 %%rd<4>;\n\t.reg .pred %%p<2>;\n"
			      "\tld.param.u64 %%rd1, [out];\n\t%s\n\tret;\n}\n",
			 bad[i].insn);
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, text, strlen(text), "bad.ptx", &p,
							 self->log, sizeof(self->log)))
			TH_LOG("%s", bad[i].insn);
		vgpu_program_free(p);
		/* at the instruction, or at the literal or name a message names */
		snprintf(want, sizeof(want), "bad.ptx:11:%.11s",
			 strstr(bad[i].msg, ": error: ") ? bad[i].msg : "2: error: ");
		EXPECT_NE(NULL, strstr(self->log, want)) TH_LOG("%s: %s", bad[i].insn, self->log);
		EXPECT_NE(NULL, strstr(self->log, bad[i].msg)) TH_LOG("%s: %s", bad[i].insn, self->log);
	}
}

/*
 * A hexadecimal literal wider than 64 bits that ptxas 13.0 takes (no digit
 * after the top bit is set: 0x8000000000000000f and 17 f's are refused)
 * keeps its low 64 bits, in .b128 and .b64 operands alike
 */
TEST_F(b128, hex_literals_past_64_bits)
{
	static const char ptx[] =
		HEAD ".visible .entry k(.param .u64 out)\n{\n"
		"\t.reg .b128 %q<3>;\n\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [out];\n"
		"\tmov.b128 %q1, 0x123456789abcdef0123;\n\tst.global.b128 [%rd1], %q1;\n"
		"\tmov.b64 %rd2, 0x10000000000000005;\n\tst.global.b64 [%rd1+16], %rd2;\n"
		"\tmov.b128 %q2, 0x7ffffffffffffffff;\n\tst.global.b128 [%rd1+32], %q2;\n"
		"\tret;\n}\n";
	const uint64_t want[6] = { 0x456789abcdef0123ull, 0, 5, 0xaaaaaaaaaaaaaaaaull, ~0ull, 0 };
	uint64_t out[6];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, ptx_load(_metadata, self, "hex.ptx", ptx, "k"));
	memset(out, 0xaa, sizeof(out));
	ASSERT_EQ(0, buf(self, 0, out, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (int i = 0; i < 6; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

TEST_HARNESS_MAIN
