// SPDX-License-Identifier: MIT
/*
 * The PTX front end on what the corpus of real CUDA code
 * (tests/corpus/, docs/ptx-corpus.md) found missing or wrong: each test a
 * small kernel in the form nvcc 13 wrote it, its expected result computed
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

#define SCHEDULES 6

PTX_FIXTURE(fixes)

static int load(struct __test_metadata *_metadata, FIXTURE_DATA(fixes) *self,
		const char *text, const char *kernel)
{
	return ptx_load(_metadata, self, "fix.ptx", text, kernel);
}


/*
 * PTX ISA 5.2 (predefined identifiers): WARP_SZ, the warp size as a
 * run-time constant; nvcc 13 writes warpSize as `mov.u32 %r, WARP_SZ;`
 * (the CUDA samples' reduce7, cooperative groups' tile sizes).
 */
static const char warp_sz_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry warp_sz(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tmov.u32 %r2, WARP_SZ;\n"
	"\tdiv.u32 %r3, %r1, %r2;\n"
	"\tsetp.lt.s32 %p1, %r2, 2;\n"
	"\tselp.b32 %r4, 7, %r3, %p1;\n"
	"\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd2, %rd2, %rd3;\n"
	"\tst.global.u32 [%rd2], %r4;\n\tret;\n}\n";

TEST_F(fixes, warp_sz)
{
	uint32_t out[128];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, warp_sz_ptx, "warp_sz"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 128, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 128; t++)
			ASSERT_EQ(t / 32, out[t]);
	}
	vgpu_args_free(args);
}

/*
 * C++ kernels have mangled names far past the object's 31 characters
 * (cub's run to hundreds, sharing long prefixes): each keeps its PTX name
 * for vgpu_program_find_kernel() and vgpu_kernel_info(), and two names
 * that differ only at their ends stay two kernels.
 */
static char *long_names_ptx(char *a, char *b, size_t n)
{
	static const char body[] =
		"(.param .u64 out)\n{\n\t.reg .b32 %%r<2>;\n\t.reg .b64 %%rd<3>;\n"
		"\tld.param.u64 %%rd1, [out];\n\tcvta.to.global.u64 %%rd2, %%rd1;\n"
		"\tst.global.u32 [%%rd2], %d;\n\tret;\n}\n";
	char *text = malloc(4 * n + 1024), *p = text;

	/* 200 characters, the same but for the last */
	memset(a, 'x', n - 1);
	memcpy(a, "_ZN3cub6detail", 14);
	a[n - 1] = '\0';
	memcpy(b, a, n);
	a[n - 2] = 'A';
	b[n - 2] = 'B';
	p += sprintf(p, ".version 9.0\n.target sm_90a\n.address_size 64\n");
	p += sprintf(p, ".visible .entry %s", a);
	p += sprintf(p, body, 11);
	p += sprintf(p, ".visible .entry %s", b);
	p += sprintf(p, body, 22);
	return text;
}

TEST_F(fixes, long_kernel_names)
{
	char a[201], b[201];
	char *text = long_names_ptx(a, b, sizeof(a));
	const struct vgpu_kernel *ka, *kb;
	struct vgpu_kernel_info info;
	struct vgpu_args *args = NULL;
	uint32_t out;

	ASSERT_EQ(0, load(_metadata, self, text, a));
	free(text);
	ka = self->k;
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, b, &kb));
	ASSERT_NE(ka, kb);
	vgpu_kernel_info(ka, &info);
	ASSERT_STREQ(a, info.name);
	vgpu_kernel_info(kb, &info);
	ASSERT_STREQ(b, info.name);
	ASSERT_EQ(-ENOENT, vgpu_program_find_kernel(self->prog, "_ZN3cub6detailxxxxxx", &kb));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	for (int i = 0; i < 2; i++) {
		self->k = i ? kb : ka;
		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, &out, sizeof(out)));
		ASSERT_EQ(i ? 22u : 11u, out);
		vgpu_args_free(args);
	}
}

/*
 * nvcc -G: DWARF in .section blocks (skipped), and cooperative groups'
 * scratch at %reserved_smem_offset_1 (PTX ISA 10.37; the driver's
 * reserved shared memory, 1 KiB here): the region holds what is stored
 * there, lies after the kernel's own .shared variable, and _cap is its
 * size.
 */
static const char reserved_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry rsv(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
	"\t.shared .align 4 .b8 mine[64];\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\t{\n\t .reg .u32 start;\n\t .reg .u64 extended;\n"
	"\t mov.u32 start, %reserved_smem_offset_1;\n"
	"\t cvt.u64.u32 extended, start;\n\t cvta.shared.u64 %rd3, extended;\n\t}\n"
	"\tmul.wide.u32 %rd4, %r1, 4;\n\tadd.s64 %rd5, %rd3, %rd4;\n"
	"\tmul.lo.u32 %r2, %r1, 7;\n\tst.u32 [%rd5], %r2;\n"
	"\tmov.u32 %r5, mine;\n\tshl.b32 %r6, %r1, 2;\n\tadd.s32 %r5, %r5, %r6;\n"
	"\tst.shared.u32 [%r5], 99;\n"
	"\tbar.sync 0;\n"
	"\tsub.s32 %r3, 63, %r1;\n\tmul.wide.u32 %rd4, %r3, 4;\n\tadd.s64 %rd5, %rd3, %rd4;\n"
	"\tld.u32 %r4, [%rd5];\n"
	"\tmov.u32 %r7, %reserved_smem_offset_cap;\n\tadd.s32 %r4, %r4, %r7;\n"
	"\tadd.s64 %rd6, %rd2, %rd4;\n\tst.global.u32 [%rd6], %r4;\n\tret;\n}\n"
	"\t.section\t.debug_abbrev\n\t{\n.b8 1\n.b8 17\n.b64 $L__tmp1\n\t}\n"
	"\t.section\t.debug_macinfo\n\t{\n.b8 0\n\n\t}\n";

TEST_F(fixes, reserved_smem_and_debug_sections)
{
	uint32_t out[64];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, reserved_ptx, "rsv"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, run(_metadata, self, args, 2, 64, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 64; t++)
			ASSERT_EQ(t * 7 + 1024, out[t]);
	}
	vgpu_args_free(args);
}

/*
 * Kernel parameters of every size and alignment PTX allows (PTX ISA
 * 5.1.6.1), laid out as PTX lays them out: 1- and 2-byte scalars, .b8
 * arrays (cub's empty functors are `.align 1 .b8 f[1]`), read by name and
 * through a register holding a parameter's address (`mov.b64 %rd, name;
 * ld.param [%rd+off]`, as every cub device kernel does; `cvta.param` to a
 * generic address).
 */
static const char params_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry prm(.param .u64 out, .param .u8 a, .param .align 1 .b8 f[1],\n"
	"\t.param .u16 h, .param .align 2 .b8 s[6], .param .u32 w,\n"
	"\t.param .align 8 .b8 big[12])\n{\n"
	"\t.reg .b16 %rs<8>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<12>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tld.param.u8 %rs1, [a];\n\tcvt.u32.u16 %r1, %rs1;\n"
	"\tst.global.u32 [%rd2], %r1;\n"
	"\tmov.b64 %rd3, f;\n\tld.param.u8 %rs2, [%rd3];\n\tcvt.u32.u16 %r2, %rs2;\n"
	"\tst.global.u32 [%rd2+4], %r2;\n"
	"\tmov.u64 %rd4, h;\n\tld.param.u16 %rs3, [%rd4];\n\tcvt.u32.u16 %r3, %rs3;\n"
	"\tst.global.u32 [%rd2+8], %r3;\n"
	"\tmov.u64 %rd5, s;\n\tld.param.v2.u8 {%rs4, %rs5}, [%rd5+2];\n"
	"\tld.param.u16 %rs6, [%rd5+4];\n"
	"\tcvt.u32.u16 %r4, %rs4;\n\tcvt.u32.u16 %r5, %rs5;\n\tcvt.u32.u16 %r6, %rs6;\n"
	"\tst.global.u32 [%rd2+12], %r4;\n\tst.global.u32 [%rd2+16], %r5;\n"
	"\tst.global.u32 [%rd2+20], %r6;\n"
	"\tld.param.u32 %r7, [w];\n\tst.global.u32 [%rd2+24], %r7;\n"
	"\tmov.u64 %rd6, big;\n\tcvta.param.u64 %rd7, %rd6;\n"
	"\tld.u32 %r8, [%rd7+8];\n\tld.u8 %rs7, [%rd7+1];\n\tcvt.u32.u16 %r9, %rs7;\n"
	"\tst.global.u32 [%rd2+28], %r8;\n\tst.global.u32 [%rd2+32], %r9;\n"
	"\tld.param.u32 %r10, [big+4];\n\tst.global.u32 [%rd2+36], %r10;\n"
	"\tret;\n}\n";

TEST_F(fixes, params_of_any_size_through_registers)
{
	/* PTX's offsets: out 0, a 8, f 9, h 10, s 12..17, w 20, big 24..35 */
	static const struct {
		const char *name;
		uint32_t offset, size;
	} want[] = {
		{ "arg0", 0, 8 }, { "arg1", 8, 1 }, { "arg2", 9, 1 }, { "arg3", 10, 2 },
		{ "arg4", 12, 4 }, { "arg4_16", 16, 2 }, { "pad5_18", 18, 2 }, { "arg5", 20, 4 },
		{ "arg6", 24, 4 }, { "arg6_28", 28, 4 }, { "arg6_32", 32, 4 },
	};
	const uint8_t a = 0xa7, f = 0x5c, s[6] = { 1, 2, 0x33, 0x44, 0x34, 0x12 };
	const uint16_t h = 0xbeef;
	const uint32_t w = 0xdeadbeef, big[3] = { 0x04030201, 0x11223344, 0xcafef00d };
	struct vgpu_args *args = NULL;
	struct vgpu_arg_info ai;
	uint32_t out[10];

	ASSERT_EQ(0, load(_metadata, self, params_ptx, "prm"));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		bool found = false;

		for (unsigned int k = 0; !vgpu_kernel_arg(self->k, k, &ai); k++)
			if (!strcmp(ai.name, want[i].name)) {
				found = true;
				EXPECT_EQ(want[i].offset, ai.offset);
				EXPECT_EQ(want[i].size, ai.size);
			}
		EXPECT_TRUE(found);
	}
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, a)); /* a 1-byte parameter's setter */
	ASSERT_EQ(0, vgpu_args_set_raw(args, 9, &f, 1));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 10, &h, 2));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 12, s, sizeof(s)));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 20, &w, 4));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 24, big, sizeof(big)));
	for (uint64_t sd = 0; sd < SCHEDULES; sd++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 32, sd));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		EXPECT_EQ(0xa7u, out[0]);
		EXPECT_EQ(0x5cu, out[1]);
		EXPECT_EQ(0xbeefu, out[2]);
		EXPECT_EQ(0x33u, out[3]);
		EXPECT_EQ(0x44u, out[4]);
		EXPECT_EQ(0x1234u, out[5]);
		EXPECT_EQ(0xdeadbeefu, out[6]);
		EXPECT_EQ(0xcafef00du, out[7]);
		EXPECT_EQ(0x02u, out[8]);
		EXPECT_EQ(0x11223344u, out[9]);
	}
	vgpu_args_free(args);
}

/*
 * A struct parameter read through a copy of its address, as clang-19
 * writes it for cub's ScanTileState (`mov.b64 %rd2, name_param_0; mov.u64
 * %rd1, %rd2; ld.param.u64 %rd3, [%rd1]`): every write of %rd1 is a mov
 * of a register that holds a parameter's address, so it holds one too.
 */
static const char param_copy_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry pc(.param .u64 out, .param .align 8 .b8 st[16])\n{\n"
	"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<8>;\n"
	"\tmov.b64 %rd2, st;\n\tmov.u64 %rd1, %rd2;\n\tmov.u64 %rd3, %rd1;\n"
	"\tld.param.u64 %rd4, [out];\n\tcvta.to.global.u64 %rd5, %rd4;\n"
	"\tld.param.u64 %rd6, [%rd1];\n\tld.param.u32 %r1, [%rd3+8];\n"
	"\tld.param.u32 %r2, [%rd1+12];\n"
	"\tst.global.u64 [%rd5], %rd6;\n\tst.global.u32 [%rd5+8], %r1;\n"
	"\tst.global.u32 [%rd5+12], %r2;\n"
	"\tret;\n}\n";

TEST_F(fixes, param_address_through_copies)
{
	const uint32_t st[4] = { 0x89abcdef, 0x01234567, 0xfeedf00d, 0x5a5a1234 };
	struct vgpu_args *args = NULL;
	uint32_t out[4];

	ASSERT_EQ(0, load(_metadata, self, param_copy_ptx, "pc"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 8, st, sizeof(st)));
	memset(out, 0xee, sizeof(out));
	ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 32, 0));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(st[i], out[i]);
	vgpu_args_free(args);
}

/*
 * Module-scope .shared variables, as clang writes every kernel's
 * function-scope __shared__ (`.weak .shared`): each kernel gets the ones
 * it uses, as ptxas allocates them, not every kernel all of them (cub's
 * temp_storage of every kernel of a module would pass the SM's 228 KiB).
 */
static const char module_shared_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".weak .shared .align 4 .b8 big[40000];\n"
	".weak .shared .align 16 .b8 small[64];\n"
	".visible .entry uses_small(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<6>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n\tshl.b32 %r2, %r1, 2;\n"
	"\tmov.u32 %r3, small;\n\tadd.s32 %r4, %r3, %r2;\n"
	"\tmul.lo.s32 %r5, %r1, 3;\n\tst.shared.u32 [%r4], %r5;\n\tbar.sync 0;\n"
	"\txor.b32 %r2, %r2, 4;\n\tadd.s32 %r4, %r3, %r2;\n\tld.shared.u32 %r5, [%r4];\n"
	"\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n"
	"\tst.global.u32 [%rd4], %r5;\n\tret;\n}\n"
	".visible .entry uses_big()\n{\n"
	"\t.reg .b32 %r<2>;\n\tmov.u32 %r1, %tid.x;\n\tst.shared.u32 [big+39996], %r1;\n"
	"\tret;\n}\n"
	".visible .entry uses_none()\n{\n\tret;\n}\n";

TEST_F(fixes, module_shared_per_kernel)
{
	struct vgpu_kernel_info info;
	const struct vgpu_kernel *k;
	struct vgpu_args *args = NULL;
	uint32_t out[16];

	ASSERT_EQ(0, load(_metadata, self, module_shared_ptx, "uses_small"));
	vgpu_kernel_info(self->k, &info);
	EXPECT_EQ(64u, info.smem_static);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "uses_big", &k));
	vgpu_kernel_info(k, &info);
	EXPECT_EQ(40000u, info.smem_static);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "uses_none", &k));
	vgpu_kernel_info(k, &info);
	EXPECT_EQ(0u, info.smem_static);
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t sd = 0; sd < SCHEDULES; sd++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 16, sd));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 16; t++)
			EXPECT_EQ((t ^ 1) * 3, out[t]);
	}
	vgpu_args_free(args);
}

/*
 * A barrier at a join laid out before one side of the branch: clang-19's
 * PTX of the GPU Gems Hillis-Steele scan (tests/corpus/scan.cu scan_naive,
 * its extern shared array made static), whose loop latch, the
 * __syncthreads() after the if/else, comes before the else side.  The
 * lanes that skip the else side must not pass the barrier for the warp
 * (ptx_layout.c); with 64 threads the second warp read the first's
 * elements before they were stored.
 */
static const char scan_latch_ptx[] =
	".version 8.5\n"
	".target sm_90a\n"
	".address_size 64\n"
	".shared .align 4 .b8 temp[512];\n"
	".visible .entry scan(\n"
	"\t.param .u64 scan_param_0,\n"
	"\t.param .u64 scan_param_1,\n"
	"\t.param .u32 scan_param_2\n"
	")\n"
	"{\n"
	"\t.reg .pred \t%p<5>;\n"
	"\t.reg .b32 \t%r<32>;\n"
	"\t.reg .b64 \t%rd<26>;\n"
	"\tld.param.u32 \t%r11, [scan_param_2];\n"
	"\tld.param.u64 \t%rd8, [scan_param_0];\n"
	"\tmov.u32 \t%r13, %tid.x;\n"
	"\tsetp.eq.s32 \t%p1, %r13, 0;\n"
	"\tcvt.u64.u32 \t%rd2, %r13;\n"
	"\tmov.b32 \t%r30, 0;\n"
	"\tmov.u64 \t%rd25, 0;\n"
	"\tmov.u32 \t%r27, %r30;\n"
	"\t@%p1 bra \t$L__BB0_2;\n"
	"\tld.param.u64 \t%rd9, [scan_param_1];\n"
	"\tcvta.to.global.u64 \t%rd10, %rd9;\n"
	"\tmul.wide.u32 \t%rd11, %r13, 4;\n"
	"\tadd.s64 \t%rd3, %rd10, %rd11;\n"
	"\tld.global.u32 \t%r27, [%rd3+-4];\n"
	"\tmov.u64 \t%rd25, %rd2;\n"
	"$L__BB0_2:\n"
	"\tcvta.to.global.u64 \t%rd1, %rd8;\n"
	"\tshl.b64 \t%rd12, %rd25, 2;\n"
	"\tmov.u64 \t%rd13, temp;\n"
	"\tadd.s64 \t%rd5, %rd13, %rd12;\n"
	"\tst.shared.u32 \t[%rd5], %r27;\n"
	"\tbar.sync \t0;\n"
	"\tsetp.lt.s32 \t%p2, %r11, 2;\n"
	"\t@%p2 bra \t$L__BB0_7;\n"
	"\tmov.b32 \t%r30, 0;\n"
	"\tmov.b32 \t%r15, 1;\n"
	"\tcvt.u32.u64 \t%r17, %rd2;\n"
	"\tmov.u32 \t%r29, %r15;\n"
	"\tbra.uni \t$L__BB0_4;\n"
	"$L__BB0_6:\n"
	"\tsub.s32 \t%r30, %r15, %r30;\n"
	"\tmad.lo.s32 \t%r24, %r30, %r11, %r17;\n"
	"\tmul.wide.u32 \t%rd18, %r24, 4;\n"
	"\tadd.s64 \t%rd20, %rd13, %rd18;\n"
	"\tst.shared.u32 \t[%rd20], %r31;\n"
	"\tbar.sync \t0;\n"
	"\tshl.b32 \t%r29, %r29, 1;\n"
	"\tsetp.lt.s32 \t%p4, %r29, %r11;\n"
	"\t@%p4 bra \t$L__BB0_4;\n"
	"\tbra.uni \t$L__BB0_7;\n"
	"$L__BB0_4:\n"
	"\tsetp.lt.s32 \t%p3, %r17, %r29;\n"
	"\tmul.lo.s32 \t%r19, %r30, %r11;\n"
	"\tmul.wide.s32 \t%rd14, %r19, 4;\n"
	"\tadd.s64 \t%rd15, %rd5, %rd14;\n"
	"\tld.shared.u32 \t%r31, [%rd15];\n"
	"\t@%p3 bra \t$L__BB0_6;\n"
	"\tadd.s32 \t%r20, %r19, %r17;\n"
	"\tsub.s32 \t%r21, %r20, %r29;\n"
	"\tmul.wide.s32 \t%rd16, %r21, 4;\n"
	"\tadd.s64 \t%rd6, %rd13, %rd16;\n"
	"\tld.shared.u32 \t%r22, [%rd6];\n"
	"\tadd.s32 \t%r31, %r22, %r31;\n"
	"\tbra.uni \t$L__BB0_6;\n"
	"$L__BB0_7:\n"
	"\tmul.lo.s32 \t%r25, %r30, %r11;\n"
	"\tmul.wide.s32 \t%rd21, %r25, 4;\n"
	"\tadd.s64 \t%rd22, %rd5, %rd21;\n"
	"\tld.shared.u32 \t%r26, [%rd22];\n"
	"\tadd.s64 \t%rd24, %rd1, %rd12;\n"
	"\tst.global.u32 \t[%rd24], %r26;\n"
	"\tret;\n"
	"}\n";

TEST_F(fixes, barrier_at_a_join_laid_out_early)
{
	struct vgpu_args *args = NULL;
	uint32_t in[64], out[64], want = 0;

	for (uint32_t i = 0; i < 64; i++)
		in[i] = i * 7 + 1;
	ASSERT_EQ(0, load(_metadata, self, scan_latch_ptx, "scan"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, 64));
	for (uint64_t sd = 0; sd < SCHEDULES; sd++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 64, sd));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		want = 0;
		for (uint32_t t = 0; t < 64; t++) {
			EXPECT_EQ(want, out[t]);
			want += in[t];
		}
	}
	vgpu_args_free(args);
}

/*
 * %envreg0..31 (PTX ISA 10.25): what the launch sets
 * (vgpu_args_set_envreg), 0 for the others, as a GPU reads the ones its
 * driver leaves unset.
 */
static const char envreg_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry env(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %envreg0;\n\tmov.u32 %r2, %envreg1;\n"
	"\tmov.u32 %r3, %envreg2;\n\tadd.u32 %r4, %envreg31, 1;\n"
	"\tst.global.u32 [%rd2], %r1;\n\tst.global.u32 [%rd2+4], %r2;\n"
	"\tst.global.u32 [%rd2+8], %r3;\n\tst.global.u32 [%rd2+12], %r4;\n"
	"\tret;\n}\n";

TEST_F(fixes, envregs)
{
	struct vgpu_args *args = NULL;
	uint32_t out[4];

	ASSERT_EQ(0, load(_metadata, self, envreg_ptx, "env"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 32, 0));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	EXPECT_EQ(0u, out[0]);
	EXPECT_EQ(0u, out[1]);
	EXPECT_EQ(0u, out[2]);
	EXPECT_EQ(1u, out[3]);
	ASSERT_EQ(0, vgpu_args_set_envreg(args, 1, 0x12345678));
	ASSERT_EQ(0, vgpu_args_set_envreg(args, 2, 0x9abcdef0));
	ASSERT_EQ(0, vgpu_args_set_envreg(args, 31, 41));
	ASSERT_EQ(-EINVAL, vgpu_args_set_envreg(args, 32, 1));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, run(_metadata, self, args, 2, 32, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		EXPECT_EQ(0u, out[0]);
		EXPECT_EQ(0x12345678u, out[1]);
		EXPECT_EQ(0x9abcdef0u, out[2]);
		EXPECT_EQ(42u, out[3]);
	}
	vgpu_args_free(args);
}

/*
 * trap (CUDA's __trap()): the exception TRAP, raised by the lanes that
 * execute it; the store after it never happens.
 */
static const char trap_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry trp(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n\tsetp.eq.u32 %p1, %r1, 37;\n"
	"\t@%p1 bra $L_trap;\n\tst.global.u32 [%rd2], 1;\n\tret;\n"
	"$L_trap:\n\ttrap;\n\tst.global.u32 [%rd2+4], 2;\n\tret;\n}\n";

TEST_F(fixes, trap_raises_its_exception)
{
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 64 } };
	struct vgpu_exception_record rec;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	uint32_t out[2] = { 0, 0 };

	ASSERT_EQ(0, load(_metadata, self, trap_ptx, "trp"));
	ASSERT_EQ(0, buf(self, 0, out, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	ASSERT_EQ(-EIO, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_TRAP, rec.code);
	EXPECT_EQ(1u, rec.warp);
	EXPECT_EQ(1u << 5, rec.lane_mask);
	EXPECT_NE(NULL, strstr(rec.msg, "trap"));
	vgpu_job_free(job);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	EXPECT_EQ(0u, out[1]);
	vgpu_args_free(args);
}

/*
 * cooperative_groups' grid_group::sync() as nvcc 13 writes it: the grid
 * workspace from %envreg1 (high) and %envreg2 (low), a trap without one,
 * then CTA masters add to its barrier word (the first one 0x80000001 -
 * nctaid, the others 1) and spin until the top bit flips.  Under
 * VGPU_LAUNCH_COOPERATIVE the whole grid is co-resident and the barrier
 * completes; each CTA then reads what every CTA wrote before it.
 */
static const char gsync_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry gsync(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<16>;\n\t.reg .pred %p<4>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %envreg2;\n\tcvt.u64.u32 %rd3, %r1;\n"
	"\tmov.u32 %r2, %envreg1;\n\tcvt.u64.u32 %rd4, %r2;\n"
	"\tbfi.b64 %rd5, %rd4, %rd3, 32, 32;\n"
	"\tmov.u32 %r3, %tid.x;\n\tmov.u32 %r4, %ctaid.x;\n\tmov.u32 %r5, %nctaid.x;\n"
	"\tsetp.ne.s32 %p1, %r3, 0;\n"
	"\tmul.wide.u32 %rd6, %r4, 4;\n\tadd.s64 %rd7, %rd2, %rd6;\n"
	"\t@!%p1 st.global.u32 [%rd7], %r4;\n"
	"\tsetp.ne.s64 %p2, %rd5, 0;\n\t@%p2 bra $L_ok;\n\ttrap;\n"
	"$L_ok:\n\tbarrier.sync 0;\n\t@%p1 bra $L_after;\n"
	"\tadd.s64 %rd8, %rd5, 4;\n"
	"\tsetp.eq.s32 %p3, %r4, 0;\n\tmov.u32 %r6, -2147483647;\n\tsub.s32 %r7, %r6, %r5;\n"
	"\tselp.b32 %r8, %r7, 1, %p3;\n"
	"\tatom.add.release.gpu.u32 %r9, [%rd8], %r8;\n"
	"$L_spin:\n\tld.acquire.gpu.u32 %r10, [%rd8];\n\txor.b32 %r11, %r10, %r9;\n"
	"\tsetp.gt.s32 %p3, %r11, -1;\n\t@%p3 bra $L_spin;\n"
	"$L_after:\n\tbarrier.sync 0;\n"
	/* every CTA's tid 0 sums what the others stored before the sync */
	"\tmov.u32 %r12, 0;\n\tmov.u32 %r13, 0;\n"
	"$L_sum:\n\tmul.wide.u32 %rd9, %r13, 4;\n\tadd.s64 %rd10, %rd2, %rd9;\n"
	"\tld.global.u32 %r14, [%rd10];\n\tadd.s32 %r12, %r12, %r14;\n"
	"\tadd.s32 %r13, %r13, 1;\n\tsetp.lt.u32 %p3, %r13, %r5;\n\t@%p3 bra $L_sum;\n"
	"\tbarrier.sync 0;\n"
	"\tadd.s64 %rd11, %rd7, 64;\n\t@!%p1 st.global.u32 [%rd11], %r12;\n"
	"\tret;\n}\n";

TEST_F(fixes, grid_sync_cooperative)
{
	struct vgpu_launch_config cfg = { .grid = { 4 }, .block = { 64 } };
	struct vgpu_exception_record rec;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	uint64_t ws;
	uint32_t out[20];

	ASSERT_EQ(0, load(_metadata, self, gsync_ptx, "gsync"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, NULL, 8));
	ws = vgpu_bo_gpu_address(self->bo[1]);
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	/* no workspace: the trap */
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	ASSERT_EQ(-EIO, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_TRAP, rec.code);
	vgpu_job_free(job);
	job = NULL;
	ASSERT_EQ(0, vgpu_args_set_envreg(args, 1, (uint32_t)(ws >> 32)));
	ASSERT_EQ(0, vgpu_args_set_envreg(args, 2, (uint32_t)ws));
	ASSERT_EQ(0, vgpu_args_use_bo(args, self->bo[1]));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		cfg.seed = s;
		cfg.flags = VGPU_LAUNCH_COOPERATIVE | (s ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			    (s & 1 ? VGPU_LAUNCH_SANITIZE : 0);
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
		ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
		vgpu_job_free(job);
		job = NULL;
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (int c = 0; c < 4; c++)
			EXPECT_EQ(0u + 1 + 2 + 3, out[16 + c]);
	}
	/* more CTAs than run at once: refused by the device */
	cfg = (struct vgpu_launch_config){ .grid = { VGPU_MAX_CLUSTER_CTAS + 1 }, .block = { 32 },
					   .flags = VGPU_LAUNCH_COOPERATIVE };
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	EXPECT_NE(0, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, rec.code);
	vgpu_job_free(job);
	vgpu_args_free(args);
}

TEST_HARNESS_MAIN
