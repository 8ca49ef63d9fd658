// SPDX-License-Identifier: MIT
/*
 * Module variables initialised with addresses (PTX ISA 5.4.4), as nvcc
 * writes them for ordinary CUDA code, on the sim backend: tables of
 * pointers to variables and strings, generic(v)+N, v+N, generic(v+N),
 * mask() bytes of a packed structure, in .global and .const, a name
 * used before its declaration; and the forms refused, each with its
 * place.  The PTX is nvcc 13.0's (-arch=sm_90a) or written in its style;
 * every expected value is worked out here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"

#define SCHEDULES 6

PTX_FIXTURE(inits)

#define HEAD ".version 9.0\n.target sm_90a\n.address_size 64\n\n"

/*
 * Data layout (the parser's, in order, each variable at its alignment):
 * tbl_a 0, tbl_b 16, ptrs 32, cval 64, cptrs 80, pk 96 (9 bytes), later
 * 108; 112 bytes.  pk is nvcc's packed struct { char c; int *p; } = { 1,
 * tbl_b + 1 }; cptrs names later before it is declared.
 */
static const char tables_ptx[] =
	HEAD
	".global .align 4 .b8 tbl_a[16] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4};\n"
	".global .align 4 .b8 tbl_b[16] = {5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 8};\n"
	".global .align 8 .u64 ptrs[4] = {generic(tbl_a), generic(tbl_b)+8, tbl_a+4, "
	"generic(tbl_b+12)};\n"
	".const .align 4 .b8 cval[12] = {9, 0, 0, 0, 8, 0, 0, 0, 7};\n"
	".const .align 8 .u64 cptrs[2] = {generic(cval)+4, generic(later)};\n"
	".global .align 1 .u8 pk[9] = {1, 0XFF(generic(tbl_b)+4), 0xFF00(generic(tbl_b)+4), "
	"0xFF0000(generic(tbl_b)+4), 0xFF000000(generic(tbl_b)+4), "
	"0xFF00000000(generic(tbl_b)+4), 0xFF0000000000(generic(tbl_b)+4), "
	"0xFF000000000000(generic(tbl_b)+4), 0xFF00000000000000(generic(tbl_b)+4)};\n"
	".global .align 4 .u32 later = 77;\n\n"
	".visible .entry tables(.param .u64 out)\n{\n"
	"\t.reg .pred %p<3>;\n\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<40>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	/* out[t] = *ptrs[t] */
	"\tmul.wide.u32 %rd3, %r1, 8;\n\tmov.u64 %rd4, ptrs;\n\tadd.s64 %rd5, %rd4, %rd3;\n"
	"\tld.global.u64 %rd6, [%rd5];\n\tld.u32 %r2, [%rd6];\n"
	"\tmul.wide.u32 %rd7, %r1, 4;\n\tadd.s64 %rd8, %rd2, %rd7;\n"
	"\tst.global.u32 [%rd8], %r2;\n"
	/* t < 2: out[4 + t] = *cptrs[t] */
	"\tsetp.lt.u32 %p1, %r1, 2;\n\t@!%p1 bra $L_pk;\n"
	"\tmov.u64 %rd9, cptrs;\n\tadd.s64 %rd10, %rd9, %rd3;\n\tld.const.u64 %rd11, [%rd10];\n"
	"\tcvta.to.global.u64 %rd12, %rd11;\n\tld.global.u32 %r3, [%rd12];\n"
	"\tst.global.u32 [%rd8+16], %r3;\n"
	"$L_pk:\n"
	/* t == 0: out[6] = *pk.p, its bytes read as nvcc reads them */
	"\tsetp.ne.u32 %p2, %r1, 0;\n\t@%p2 bra $L_end;\n"
	"\tld.global.u8 %rd13, [pk+1];\n"
	"\tld.global.u8 %rd14, [pk+2];\n\tshl.b64 %rd15, %rd14, 8;\n\tor.b64 %rd16, %rd15, %rd13;\n"
	"\tld.global.u8 %rd17, [pk+3];\n\tshl.b64 %rd18, %rd17, 16;\n\tor.b64 %rd19, %rd18, %rd16;\n"
	"\tld.global.u8 %rd20, [pk+4];\n\tshl.b64 %rd21, %rd20, 24;\n\tor.b64 %rd22, %rd21, %rd19;\n"
	"\tld.global.u8 %rd23, [pk+5];\n\tshl.b64 %rd24, %rd23, 32;\n\tor.b64 %rd25, %rd24, %rd22;\n"
	"\tld.global.u8 %rd26, [pk+6];\n\tshl.b64 %rd27, %rd26, 40;\n\tor.b64 %rd28, %rd27, %rd25;\n"
	"\tld.global.u8 %rd29, [pk+7];\n\tshl.b64 %rd30, %rd29, 48;\n\tor.b64 %rd31, %rd30, %rd28;\n"
	"\tld.global.u8 %rd32, [pk+8];\n\tshl.b64 %rd33, %rd32, 56;\n\tor.b64 %rd34, %rd33, %rd31;\n"
	"\tld.u32 %r4, [%rd34];\n\tst.global.u32 [%rd2+24], %r4;\n"
	"$L_end:\n\tret;\n}\n";

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Tables of pointers read through, in .global and .const, and the data
 * the loader wrote: the data's device address plus each target */
TEST_F(inits, pointer_tables)
{
	static const uint32_t want[7] = { 1, 7, 2, 8, 8, 77, 6 };
	struct vgpu_args *args = NULL;
	struct vgpu_bo *data;
	uint32_t out[7];
	uint8_t d[112];
	uint64_t va;

	ASSERT_EQ(0, ptx_load(_metadata, self, "tables.ptx", tables_ptx, "tables"));
	ASSERT_EQ(0, vgpu_program_data(self->prog, &data));
	va = vgpu_bo_gpu_address(data);
	ASSERT_EQ(0, vgpu_bo_read(data, 0, d, sizeof(d)));
	EXPECT_EQ(va + 0, le64(d + 32));
	EXPECT_EQ(va + 24, le64(d + 40));
	EXPECT_EQ(va + 4, le64(d + 48));
	EXPECT_EQ(va + 28, le64(d + 56));
	EXPECT_EQ(va + 68, le64(d + 80));
	EXPECT_EQ(va + 108, le64(d + 88));
	EXPECT_EQ(1, d[96]);
	EXPECT_EQ(va + 20, le64(d + 97));
	EXPECT_EQ(77, d[108]);
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 4, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (int i = 0; i < 7; i++) {
			EXPECT_EQ(want[i], out[i]) TH_LOG("out[%d], seed %llu", i,
							  (unsigned long long)s);
		}
	}
	vgpu_args_free(args);
}

/*
 * nvcc 13.0 for
 *   __constant__ const char *names[] = {"hello", "world", "!"};
 *   __global__ void k(char *out) { const char *s = names[threadIdx.x];
 *       int i = 0; do out[8 * threadIdx.x + i] = s[i]; while (s[i++]); }
 */
static const char strings_ptx[] =
	HEAD
	".global .align 1 .b8 $str[6] = {104, 101, 108, 108, 111};\n"
	".global .align 1 .b8 $str$1[6] = {119, 111, 114, 108, 100};\n"
	".global .align 1 .b8 $str$2[2] = {33};\n"
	".const .align 8 .u64 names[3] = {generic($str), generic($str$1), generic($str$2)};\n\n"
	".visible .entry _Z1kPc(\n\t.param .u64 _Z1kPc_param_0\n)\n{\n"
	"\t.reg .pred %p<2>;\n\t.reg .b16 %rs<2>;\n\t.reg .b32 %r<5>;\n\t.reg .b64 %rd<12>;\n\n"
	"\tld.param.u64 %rd5, [_Z1kPc_param_0];\n\tcvta.to.global.u64 %rd1, %rd5;\n"
	"\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd6, %r1, 8;\n\tmov.u64 %rd7, names;\n"
	"\tadd.s64 %rd8, %rd7, %rd6;\n\tld.const.u64 %rd2, [%rd8];\n\tshl.b32 %r2, %r1, 3;\n"
	"\tcvt.u64.u32 %rd3, %r2;\n\tmov.b32 %r4, 0;\n"
	"$L__BB0_1:\n\tcvt.s64.s32 %rd9, %r4;\n\tadd.s64 %rd10, %rd2, %rd9;\n"
	"\tld.u8 %rs1, [%rd10];\n\tadd.s64 %rd11, %rd1, %rd3;\n\tadd.s64 %rd4, %rd11, %rd9;\n"
	"\tst.global.u8 [%rd4], %rs1;\n\tadd.s32 %r4, %r4, 1;\n\tsetp.ne.s16 %p1, %rs1, 0;\n"
	"\t@%p1 bra $L__BB0_1;\n\tret;\n}\n";

/* A __constant__ table of strings, read character by character */
TEST_F(inits, const_string_table)
{
	struct vgpu_args *args = NULL;
	char out[24];

	ASSERT_EQ(0, ptx_load(_metadata, self, "strings.ptx", strings_ptx, "_Z1kPc"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 'x', sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 3, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		EXPECT_STREQ("hello", out);
		EXPECT_STREQ("world", out + 8);
		EXPECT_STREQ("!", out + 16);
		EXPECT_EQ('x', out[18]);
	}
	vgpu_args_free(args);
}

/* Initialisers the front end refuses, each with its place */
TEST_F(inits, bad_address_initialisers)
{
	static const struct {
		const char *decl, *err;
	} cases[] = {
		{ ".global .align 8 .u64 p = generic(nope);",
		  "bad.ptx:6:35: error: the address of an undefined symbol 'nope' in 'p'" },
		{ ".global .align 8 .u64 p[3] = {generic(a), a+4, nope2};",
		  "bad.ptx:6:48: error: the address of an undefined symbol 'nope2' in 'p'" },
		{ ".global .align 4 .u32 p = generic(a);",
		  "bad.ptx:6:35: error: unsupported construct: the address of 'a' in a "
		  "32-bit element of 'p' (addresses are 64 bits)" },
		{ ".global .align 4 .u32 p[2] = {1, a};",
		  "bad.ptx:6:34: error: unsupported construct: the address of 'a' in a "
		  "32-bit element of 'p' (addresses are 64 bits)" },
		{ ".global .align 1 .u8 p[2] = {0xF0(generic(a)), 0};",
		  "bad.ptx:6:30: error: unsupported construct: the mask 0xf0 (one byte at a "
		  "byte boundary only)" },
		{ ".global .align 8 .u64 p = generic(sh);",
		  "bad.ptx:6:35: error: unsupported construct: the address of the .shared "
		  "variable 'sh' in 'p'" },
		{ ".global .align 8 .u64 p = ext;",
		  "bad.ptx:6:27: error: unsupported construct: the address of the external "
		  "function 'ext' in 'p'" },
		{ ".global .align 8 .u64 p = k;",
		  "bad.ptx:6:27: error: unsupported construct: the address of the kernel 'k' in 'p'" },
		{ ".global .align 8 .u64 p[2] = {0, f+8};",
		  "bad.ptx:6:34: error: unsupported construct: a byte or an offset of the address "
		  "of the function 'f' in 'p'" },
		{ ".global .align 8 .u64 p = generic(a;",
		  "bad.ptx:6:36: error: expected ')' before ';'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[1024];

		snprintf(text, sizeof(text),
			 HEAD ".global .align 4 .u32 a = 1;\n%s\n.shared .align 4 .u32 sh;\n"
			 ".extern .func ext(.param .b32 x);\n.func f()\n{\n\tret;\n}\n"
			 ".visible .entry k(.param .u64 o)\n{\n\tret;\n}\n",
			 cases[i].decl);
		ASSERT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, text, strlen(text), "bad.ptx",
							 &self->prog, self->log,
							 sizeof(self->log)));
		EXPECT_CONTAINS(self->log, cases[i].err);
	}
}

TEST_HARNESS_MAIN
