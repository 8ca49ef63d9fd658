// SPDX-License-Identifier: MIT
/*
 * .b128 registers where ptxas 13.0 takes them in place of a narrower
 * register (issue 31), on the sim backend: cvt's destination and source,
 * and the elements of vector ld/ldu/st.  The values are PTX ISA's rules
 * for a wider register (a source's low bits; a destination extended by
 * the type's sign) as an H200 applies them to a .b128 one
 * (tests/cuda/real-gpu/b128-vec-h200-2026-11-30): to 64 bits and zeros
 * above, except cvt to .s64, whose sign fills the high half.  Vector
 * loads into .b128 registers are PTX's (each element its own), which the
 * H200 does not do (known-differences.txt).  Forms ptxas refuses are
 * located errors.
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

PTX_FIXTURE(b128vec)

#define HEAD ".version 9.0\n.target sm_90a\n.address_size 64\n\n"
#define M64 0xffffffffffffffffull

/* The kernel k(in, out) of @ptx on one thread: @nout 64-bit words of out
 * (filled with 0xaa bytes first) into @out. */
static void run1(struct __test_metadata *_metadata, FIXTURE_DATA(b128vec) *self,
		 const char *ptx, const void *in, size_t nin, uint64_t *out, size_t nout)
{
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, ptx_load(_metadata, self, "b128vec.ptx", ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, in, nin));
	memset(out, 0xaa, nout * 8);
	ASSERT_EQ(0, buf(self, 1, out, nout * 8));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, nout * 8));
}

#define KHEAD                                                                            \
	HEAD ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"                   \
	     "\t.reg .b128 %q<12>;\n\t.reg .b64 %rd<8>;\n\t.reg .b32 %r<8>;\n"            \
	     "\t.reg .f32 %f<4>;\n\t.reg .f64 %fd<2>;\n\t.reg .pred %p<3>;\n"              \
	     "\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n"

/* cvt into a .b128 register: extended to 64 bits by the type, the high
 * half zero, or the sign for .s64; a guarded one that does not run
 * leaves the register as it was */
TEST_F(b128vec, cvt_into_b128)
{
	static const char ptx[] =
		KHEAD "\tld.global.u32 %r1, [%rd1];\n"	 /* 0xffffff80 */
		"\tld.global.u32 %r2, [%rd1+4];\n"	 /* 0x12348765 */
		"\tld.global.f32 %f1, [%rd1+8];\n"	 /* -2.5 */
		"\tld.global.f32 %f2, [%rd1+12];\n"	 /* 1.5 */
		"\tcvt.s64.s32 %q1, %r1;\n"
		"\tcvt.u64.u32 %q2, %r1;\n"
		"\tcvt.s32.s32 %q3, %r1;\n"
		"\tcvt.s8.s32 %q4, %r1;\n"
		"\tcvt.u16.s32 %q5, %r2;\n"
		"\tcvt.sat.s8.s32 %q6, %r2;\n"
		"\tcvt.rni.s64.f32 %q7, %f1;\n"
		"\tcvt.rzi.s32.f32 %q8, %f1;\n"
		"\tcvt.rn.f16.f32 %q9, %f2;\n"
		"\tcvt.rn.f16x2.f32 %q10, %f2, %f1;\n"
		"\tcvt.f64.f32 %q11, %f1;\n"
		"\tst.global.b128 [%rd2], %q1;\n\tst.global.b128 [%rd2+16], %q2;\n"
		"\tst.global.b128 [%rd2+32], %q3;\n\tst.global.b128 [%rd2+48], %q4;\n"
		"\tst.global.b128 [%rd2+64], %q5;\n\tst.global.b128 [%rd2+80], %q6;\n"
		"\tst.global.b128 [%rd2+96], %q7;\n\tst.global.b128 [%rd2+112], %q8;\n"
		"\tst.global.b128 [%rd2+128], %q9;\n\tst.global.b128 [%rd2+144], %q10;\n"
		"\tst.global.b128 [%rd2+160], %q11;\n"
		/* guarded: false keeps %q1, true writes it */
		"\tsetp.ne.u32 %p1, %r1, %r1;\n\tsetp.eq.u32 %p2, %r1, %r1;\n"
		"\tmov.b128 %q1, 0x123456789;\n\t@%p1 cvt.s64.s32 %q1, %r1;\n"
		"\tst.global.b128 [%rd2+176], %q1;\n"
		"\t@%p2 cvt.s64.s8 %q1, %r1;\n\tst.global.b128 [%rd2+192], %q1;\n"
		"\tret;\n}\n";
	const uint32_t in[4] = { 0xffffff80u, 0x12348765u, 0xc0200000u /* -2.5 */,
				 0x3fc00000u /* 1.5 */ };
	const uint64_t want[26] = {
		M64 - 127, M64,			/* s64.s32 -128: the sign in all 128 */
		0xffffff80ull, 0,		/* u64.u32 */
		M64 - 127, 0,			/* s32.s32: 64 bits, zeros above */
		M64 - 127, 0,			/* s8.s32 */
		0x8765, 0,			/* u16.s32 */
		0x7f, 0,			/* sat.s8.s32 of 0x12348765 */
		M64 - 1, M64,			/* rni.s64.f32 -2.5: -2 */
		M64 - 1, 0,			/* rzi.s32.f32 -2.5: -2 */
		0x3e00, 0,			/* rn.f16.f32 1.5 */
		0x3e00c100ull, 0,		/* rn.f16x2.f32 {1.5, -2.5} */
		0xc004000000000000ull, 0,	/* f64.f32 -2.5 */
		0x123456789ull, 0,		/* @!p: unchanged */
		M64 - 127, M64,			/* @p cvt.s64.s8 */
	};
	uint64_t out[26];

	run1(_metadata, self, ptx, in, sizeof(in), out, 26);
	for (int i = 0; i < 26; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

/* cvt from a .b128 register: its low bits, as from any wider register;
 * one register as source and destination */
TEST_F(b128vec, cvt_from_b128)
{
	static const char ptx[] =
		KHEAD "\tld.global.b128 %q1, [%rd1];\n"
		"\tcvt.u32.u64 %r1, %q1;\n\tst.global.u32 [%rd2], %r1;\n"
		"\tcvt.s32.s8 %r2, %q1;\n\tst.global.u32 [%rd2+4], %r2;\n"
		"\tcvt.rn.f32.s64 %f1, %q1;\n\tst.global.f32 [%rd2+8], %f1;\n"
		"\tcvt.rn.f64.s32 %fd1, %q1;\n\tst.global.f64 [%rd2+16], %fd1;\n"
		"\tcvt.u64.u16 %rd3, %q1;\n\tst.global.u64 [%rd2+24], %rd3;\n"
		"\tcvt.s64.s16 %q1, %q1;\n\tst.global.b128 [%rd2+32], %q1;\n"
		"\tret;\n}\n";
	/* low 64 bits -0x7e0 (...f820), high ones that must not matter */
	const uint64_t in[2] = { 0xfffffffffffff820ull, 0x0123456789abcdefull };
	const uint64_t want[6] = {
		0xfffff820ull | (uint64_t)0x00000020 << 32,	/* u32.u64, s32.s8 of 0x20 */
		0xc4fc0000ull,					/* f32.s64 -2016.0; padding */
		0xc09f800000000000ull,				/* f64.s32 -2016.0 */
		0xf820,						/* u64.u16 */
		M64 - 0x7df, M64,				/* s64.s16: the sign in all 128 */
	};
	uint64_t out[6];

	run1(_metadata, self, ptx, in, sizeof(in), out, 6);
	EXPECT_EQ(want[0], out[0]);
	EXPECT_EQ(want[1], out[1] & 0xffffffffull);
	for (int i = 2; i < 6; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

/*
 * Vector loads into .b128 registers: each element its own register, as
 * PTX ISA defines (extended as a scalar ld into one is: sign to 64 bits
 * for a signed type, zeros above, .s64's sign to all 128); a sink skips one; global, .nc, ldu,
 * shared, the kernel's parameters and .v8.b16.  Vector stores of .b128
 * registers: each one's low bits, literal elements among them.
 */
TEST_F(b128vec, vector_elements)
{
	static const char ptx[] =
		HEAD ".visible .entry k(.param .u64 in, .param .u64 out, .param .align 16 .b8 pv[16])\n"
		"{\n\t.reg .b128 %q<12>;\n\t.reg .b64 %rd<4>;\n"
		"\t.shared .align 16 .b8 sm[16];\n"
		"\tld.param.u64 %rd1, [in];\n\tld.param.u64 %rd2, [out];\n"
		"\tld.global.v2.b64 {%q1, %q2}, [%rd1];\n"
		"\tld.global.nc.v4.s8 {%q3, %q4, %q5, %q6}, [%rd1+16];\n"
		"\tldu.global.v4.u16 {%q7, %q8, %q9, %q10}, [%rd1+24];\n"
		"\tst.global.b128 [%rd2], %q1;\n\tst.global.b128 [%rd2+16], %q2;\n"
		"\tst.global.b128 [%rd2+32], %q3;\n\tst.global.b128 [%rd2+48], %q4;\n"
		"\tst.global.b128 [%rd2+64], %q5;\n\tst.global.b128 [%rd2+80], %q6;\n"
		"\tst.global.b128 [%rd2+96], %q7;\n\tst.global.b128 [%rd2+112], %q8;\n"
		"\tst.global.b128 [%rd2+128], %q9;\n\tst.global.b128 [%rd2+144], %q10;\n"
		"\tld.global.v2.s32 {%q1, %q2}, [%rd1+32];\n"
		"\tld.global.v2.f32 {%q3, %q4}, [%rd1+40];\n"
		"\tmov.b128 %q5, 0x55;\n\tmov.b128 %q6, 0x66;\n"
		"\tld.global.v4.s32 {%q5, _, %q6, _}, [%rd1+48];\n"
		"\tst.global.b128 [%rd2+160], %q1;\n\tst.global.b128 [%rd2+176], %q2;\n"
		"\tst.global.b128 [%rd2+192], %q3;\n\tst.global.b128 [%rd2+208], %q4;\n"
		"\tst.global.b128 [%rd2+224], %q5;\n\tst.global.b128 [%rd2+240], %q6;\n"
		"\tld.param.v2.b64 {%q7, %q8}, [pv];\n"
		"\tst.global.b128 [%rd2+256], %q7;\n\tst.global.b128 [%rd2+272], %q8;\n"
		/* shared: a store with a literal element, a load */
		"\tmov.b128 %q9, 0x8877665544332211;\n\tmov.b128 %q10, -1;\n"
		"\tst.shared.v4.b32 [sm], {%q9, %q10, 7, %q9};\n"
		"\tld.shared.v2.b64 {%q11, %q1}, [sm];\n"
		"\tst.global.b128 [%rd2+288], %q11;\n\tst.global.b128 [%rd2+304], %q1;\n"
		"\tst.global.v2.b64 [%rd2+320], {%q9, %q10};\n"
		"\tst.global.v4.b16 [%rd2+336], {%q9, %q10, 5, %q9};\n"
		"\tld.global.v8.b16 {%q1, %q2, %q3, %q4, %q5, %q6, %q7, %q8}, [%rd1];\n"
		"\tst.global.v2.b64 [%rd2+352], {%q4, %q5};\n\tst.global.b128 [%rd2+368], %q6;\n"
		"\tret;\n}\n";
	const uint64_t in[8] = {
		0x8000000000000001ull, 0x00000000fffffff0ull, 0x01ff7f80ull /* s8: 80 7f ff 01 */,
		0x123400018000ffffull /* u16 */, 0x7fffffff80000000ull /* s32 */,
		0x40000000bf800000ull /* f32: -1, 2 */, 0x00000005fffffffeull, 0x0000000680000001ull,
	};
	const uint64_t pv[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	const uint64_t want[48] = {
		0x8000000000000001ull, 0, 0xfffffff0ull, 0,	/* v2.b64 */
		M64 - 127, 0, 0x7f, 0, M64, 0, 1, 0,		/* v4.s8 */
		0xffff, 0, 0x8000, 0, 1, 0, 0x1234, 0,		/* v4.u16 */
		0xffffffff80000000ull, 0, 0x7fffffff, 0,	/* v2.s32 */
		0xbf800000ull, 0, 0x40000000, 0,		/* v2.f32: zero-extended */
		M64 - 1, 0, 0xffffffff80000001ull, 0,		/* v4.s32 {q, _, q, _} */
		0x0123456789abcdefull, 0, 0xfedcba9876543210ull, 0, /* ld.param.v2.b64 */
		0xffffffff44332211ull, 0, 0x4433221100000007ull, 0, /* st/ld.shared */
		0x8877665544332211ull, M64,			/* st.v2.b64 */
		0x22110005ffff2211ull,				/* st.v4.b16 {q, q, 5, q} */
		0xaaaaaaaaaaaaaaaaull,				/* not written */
		0x8000, 0xfff0, 0xffff, 0,			/* v8.b16 elements 3..5 */
	};
	uint64_t out[48];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, ptx_load(_metadata, self, "vec.ptx", ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	memset(out, 0xaa, sizeof(out));
	ASSERT_EQ(0, buf(self, 1, out, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 16, pv, 16));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
	for (int i = 0; i < 48; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

/* A guarded vector load or cvt into .b128 registers whose guard is false
 * leaves them as they were; a true one writes them */
TEST_F(b128vec, guarded)
{
	static const char ptx[] =
		KHEAD "\tld.global.u32 %r1, [%rd1];\n"
		"\tsetp.ne.u32 %p1, %r1, 0;\n\tsetp.eq.u32 %p2, %r1, 0;\n"
		"\tmov.b128 %q1, 1;\n\tmov.b128 %q2, 2;\n\tmov.b128 %q3, 3;\n\tmov.b128 %q4, 4;\n"
		"\tmov.b128 %q5, 5;\n"
		"\t@%p1 ld.global.v2.s32 {%q1, %q2}, [%rd1+8];\n"
		"\t@%p2 ld.global.v2.s32 {%q3, %q4}, [%rd1+8];\n"
		"\t@!%p2 cvt.s64.s32 %q5, %r1;\n"
		"\tst.global.b128 [%rd2], %q1;\n\tst.global.b128 [%rd2+16], %q2;\n"
		"\tst.global.b128 [%rd2+32], %q3;\n\tst.global.b128 [%rd2+48], %q4;\n"
		"\tst.global.b128 [%rd2+64], %q5;\n\tret;\n}\n";
	const uint32_t in[4] = { 0, 0, 0xfffffff9u, 9 };
	const uint64_t want[10] = { 1, 0, 2, 0, M64 - 6, 0, 9, 0, 5, 0 };
	uint64_t out[10];

	run1(_metadata, self, ptx, in, sizeof(in), out, 10);
	for (int i = 0; i < 10; i++) {
		EXPECT_EQ(want[i], out[i]) TH_LOG("word %d", i);
	}
}

/* Forms ptxas 13.0 refuses for sm_90a: each a located error naming it */
TEST_F(b128vec, forms_ptxas_refuses_are_errors)
{
	static const struct {
		const char *insn, *msg;
	} bad[] = {
		/* ptxas: "Incompatible elements of vector expression" */
		{ "ld.global.v2.b64 {%q1, %rd2}, [%rd1];", "all .b128 registers or none" },
		{ "st.global.v2.b64 [%rd1], {%rd2, %q1};", "all .b128 registers or none" },
		{ "ld.global.v4.b32 {%q1, %q2, %q3, %r1}, [%rd1];", "all .b128 registers or none" },
		/* "Vector type too large, exceeds 128 bit limit" */
		{ "ld.global.v2.b128 {%q1, %q2}, [%rd1];", "exceeds 128 bits" },
		{ "st.global.v2.b128 [%rd1], {%q1, %q2};", "exceeds 128 bits" },
		/* "Argument vector size mismatch" */
		{ "st.global.v2.b64 [%rd1], %q1;", "does not take the .b128 register" },
		/* "Unexpected instruction types specified for 'cvt'" */
		{ "cvt.u64.b128 %rd2, %q1;", "does not take the .b128 register" },
		/* "Arguments mismatch": mov takes a .b128 register as .b128 only */
		{ "mov.b64 {%q1, %q2}, %rd1;", "does not take the .b128 register" },
		{ "mov.b128 %q1, {%q2, %q3};", "mov.b128 packs {two .b64} or {four .b32}" },
		/* "Arguments mismatch for instruction 'st.async'" */
		{ "st.async.v2.b64 [%rd1], {%q1, %q2}, [%rd2];", "does not take the .b128 register" },
		/* an address */
		{ "ld.global.v2.b64 {%q1, %q2}, [%q3];", "not an address" },
		{ "cvt.u32.u32 %r1, [%q1];", "not an address" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024];
		struct vgpu_program *p = NULL;

		snprintf(text, sizeof(text),
			 HEAD ".visible .entry k(.param .u64 out)\n{\n"
			      "\t.reg .b128 %%q<4>;\n\t.reg .b64 %%rd<4>;\n\t.reg .b32 %%r<4>;\n"
			      "\tld.param.u64 %%rd1, [out];\n\t%s\n\tret;\n}\n",
			 bad[i].insn);
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, text, strlen(text), "bad.ptx", &p,
							 self->log, sizeof(self->log)))
			TH_LOG("%s", bad[i].insn);
		vgpu_program_free(p);
		EXPECT_NE(NULL, strstr(self->log, "bad.ptx:11:2: error: "))
			TH_LOG("%s: %s", bad[i].insn, self->log);
		EXPECT_NE(NULL, strstr(self->log, bad[i].msg)) TH_LOG("%s: %s", bad[i].insn, self->log);
	}
}

TEST_HARNESS_MAIN
