// SPDX-License-Identifier: MIT
/*
 * Device malloc and free as nvcc writes them (docs/ptx.md, "Device
 * heap"), on the sim backend: every thread mallocs, fills and reads back
 * its block; the blocks are 16-aligned and disjoint; blocks outlive the
 * launch (the next one reads and frees them); freed blocks are reused by
 * the next mallocs of their class; a heap too small gives NULL; the heap
 * size is settable until the heap exists.  Under several schedules.
 * The PTX is nvcc 13.0's (-arch=sm_90a) for
 *
 *   extern "C" __global__ void alloc(unsigned long long *out, unsigned n)
 *   { unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
 *     unsigned *p = (unsigned *)malloc(n); unsigned ok = 2;
 *     if (p) { for (unsigned i = 0; i < n / 4; i++) p[i] = t * 1000 + i;
 *              ok = 1; for (unsigned i = 0; i < n / 4; i++) ok &= p[i] == t * 1000 + i; }
 *     out[2 * t] = (unsigned long long)p; out[2 * t + 1] = ok; }
 *   extern "C" __global__ void check_free(const unsigned long long *in, unsigned *res,
 *                                         unsigned n)
 *   { unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
 *     unsigned *p = (unsigned *)in[2 * t]; unsigned ok = 1;
 *     for (unsigned i = 0; p && i < n / 4; i++) ok &= p[i] == t * 1000 + i;
 *     res[t] = ok; free(p); }
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"

#define SCHEDULES 5

PTX_FIXTURE(heap)

static const char heap_ptx[] =
	".version 9.0\n"
	".target sm_90a\n"
	".address_size 64\n"
	"\t// .globl\talloc\n"
	".extern .func  (.param .b64 func_retval0) malloc\n"
	"(\n"
	"\t.param .b64 malloc_param_0\n"
	")\n"
	";\n"
	".extern .func free\n"
	"(\n"
	"\t.param .b64 free_param_0\n"
	")\n"
	";\n"
	".visible .entry alloc(\n"
	"\t.param .u64 alloc_param_0,\n"
	"\t.param .u32 alloc_param_1\n"
	")\n"
	"{\n"
	"\t.reg .pred \t%p<16>;\n"
	"\t.reg .b32 \t%r<92>;\n"
	"\t.reg .b64 \t%rd<26>;\n"
	"\tld.param.u64 \t%rd10, [alloc_param_0];\n"
	"\tld.param.u32 \t%r43, [alloc_param_1];\n"
	"\tmov.u32 \t%r44, %ntid.x;\n"
	"\tmov.u32 \t%r45, %ctaid.x;\n"
	"\tmul.lo.s32 \t%r1, %r45, %r44;\n"
	"\tmov.u32 \t%r2, %tid.x;\n"
	"\tadd.s32 \t%r3, %r1, %r2;\n"
	"\tcvt.u64.u32 \t%rd12, %r43;\n"
	"\t{ // callseq 0, 0\n"
	"\t.reg .b32 temp_param_reg;\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 \t[param0+0], %rd12;\n"
	"\t.param .b64 retval0;\n"
	"\tcall.uni (retval0), \n"
	"\tmalloc, \n"
	"\t(\n"
	"\tparam0\n"
	"\t);\n"
	"\tld.param.b64 \t%rd1, [retval0+0];\n"
	"\t} // callseq 0\n"
	"\tsetp.eq.s64 \t%p1, %rd1, 0;\n"
	"\tmov.u64 \t%rd25, 2;\n"
	"\t@%p1 bra \t$L__BB0_15;\n"
	"\tshr.u32 \t%r4, %r43, 2;\n"
	"\tsetp.eq.s32 \t%p2, %r4, 0;\n"
	"\tmov.u64 \t%rd25, 1;\n"
	"\t@%p2 bra \t$L__BB0_15;\n"
	"\tmul.lo.s32 \t%r5, %r3, 1000;\n"
	"\tand.b32  \t%r90, %r4, 3;\n"
	"\tadd.s32 \t%r7, %r4, -1;\n"
	"\tsetp.lt.u32 \t%p3, %r7, 3;\n"
	"\tmov.u32 \t%r79, 0;\n"
	"\t@%p3 bra \t$L__BB0_5;\n"
	"\tadd.s32 \t%r77, %r5, 3;\n"
	"\tmul.lo.s32 \t%r48, %r2, 1000;\n"
	"\tmad.lo.s32 \t%r9, %r1, 1000, %r48;\n"
	"\tor.b32  \t%r10, %r9, 1;\n"
	"\tsub.s32 \t%r11, %r90, %r4;\n"
	"\tmov.u32 \t%r79, 0;\n"
	"$L__BB0_4:\n"
	"\tmul.wide.u32 \t%rd14, %r79, 4;\n"
	"\tadd.s64 \t%rd15, %rd1, %rd14;\n"
	"\tadd.s32 \t%r49, %r9, %r79;\n"
	"\tst.u32 \t[%rd15], %r49;\n"
	"\tadd.s32 \t%r50, %r10, %r79;\n"
	"\tst.u32 \t[%rd15+4], %r50;\n"
	"\tadd.s32 \t%r51, %r77, -1;\n"
	"\tst.u32 \t[%rd15+8], %r51;\n"
	"\tst.u32 \t[%rd15+12], %r77;\n"
	"\tadd.s32 \t%r77, %r77, 4;\n"
	"\tadd.s32 \t%r79, %r79, 4;\n"
	"\tadd.s32 \t%r52, %r11, %r79;\n"
	"\tsetp.ne.s32 \t%p4, %r52, 0;\n"
	"\t@%p4 bra \t$L__BB0_4;\n"
	"$L__BB0_5:\n"
	"\tsetp.eq.s32 \t%p5, %r90, 0;\n"
	"\t@%p5 bra \t$L__BB0_8;\n"
	"\tmul.wide.u32 \t%rd16, %r79, 4;\n"
	"\tadd.s64 \t%rd23, %rd1, %rd16;\n"
	"\tadd.s32 \t%r80, %r79, %r5;\n"
	"\tmov.u32 \t%r81, %r90;\n"
	"$L__BB0_7:\n"
	"\t.pragma \"nounroll\";\n"
	"\tst.u32 \t[%rd23], %r80;\n"
	"\tadd.s64 \t%rd23, %rd23, 4;\n"
	"\tadd.s32 \t%r80, %r80, 1;\n"
	"\tadd.s32 \t%r81, %r81, -1;\n"
	"\tsetp.ne.s32 \t%p6, %r81, 0;\n"
	"\t@%p6 bra \t$L__BB0_7;\n"
	"$L__BB0_8:\n"
	"\tmov.u32 \t%r91, 1;\n"
	"\tmov.u32 \t%r86, 0;\n"
	"\t@%p3 bra \t$L__BB0_11;\n"
	"\tadd.s32 \t%r82, %r5, 3;\n"
	"\tmul.lo.s32 \t%r58, %r2, 1000;\n"
	"\tmad.lo.s32 \t%r23, %r1, 1000, %r58;\n"
	"\tor.b32  \t%r24, %r23, 1;\n"
	"\tmov.u32 \t%r91, 1;\n"
	"\tsub.s32 \t%r25, %r90, %r4;\n"
	"\tmov.u32 \t%r86, 0;\n"
	"$L__BB0_10:\n"
	"\tmul.wide.u32 \t%rd17, %r86, 4;\n"
	"\tadd.s64 \t%rd18, %rd1, %rd17;\n"
	"\tadd.s32 \t%r59, %r23, %r86;\n"
	"\tld.u32 \t%r60, [%rd18];\n"
	"\tsetp.eq.s32 \t%p8, %r59, %r60;\n"
	"\tselp.u32 \t%r61, -1, 0, %p8;\n"
	"\tand.b32  \t%r62, %r91, %r61;\n"
	"\tadd.s32 \t%r63, %r24, %r86;\n"
	"\tld.u32 \t%r64, [%rd18+4];\n"
	"\tsetp.eq.s32 \t%p9, %r63, %r64;\n"
	"\tselp.u32 \t%r65, -1, 0, %p9;\n"
	"\tand.b32  \t%r66, %r62, %r65;\n"
	"\tadd.s32 \t%r67, %r82, -1;\n"
	"\tld.u32 \t%r68, [%rd18+8];\n"
	"\tsetp.eq.s32 \t%p10, %r67, %r68;\n"
	"\tselp.u32 \t%r69, -1, 0, %p10;\n"
	"\tand.b32  \t%r70, %r66, %r69;\n"
	"\tld.u32 \t%r71, [%rd18+12];\n"
	"\tsetp.eq.s32 \t%p11, %r82, %r71;\n"
	"\tselp.u32 \t%r72, 1, 0, %p11;\n"
	"\tand.b32  \t%r91, %r70, %r72;\n"
	"\tadd.s32 \t%r82, %r82, 4;\n"
	"\tadd.s32 \t%r86, %r86, 4;\n"
	"\tadd.s32 \t%r73, %r25, %r86;\n"
	"\tsetp.ne.s32 \t%p12, %r73, 0;\n"
	"\t@%p12 bra \t$L__BB0_10;\n"
	"$L__BB0_11:\n"
	"\t@%p5 bra \t$L__BB0_14;\n"
	"\tadd.s32 \t%r88, %r86, %r5;\n"
	"\tmul.wide.u32 \t%rd19, %r86, 4;\n"
	"\tadd.s64 \t%rd24, %rd1, %rd19;\n"
	"$L__BB0_13:\n"
	"\t.pragma \"nounroll\";\n"
	"\tld.u32 \t%r74, [%rd24];\n"
	"\tsetp.eq.s32 \t%p14, %r88, %r74;\n"
	"\tselp.u32 \t%r75, 1, 0, %p14;\n"
	"\tand.b32  \t%r91, %r91, %r75;\n"
	"\tadd.s32 \t%r88, %r88, 1;\n"
	"\tadd.s64 \t%rd24, %rd24, 4;\n"
	"\tadd.s32 \t%r90, %r90, -1;\n"
	"\tsetp.ne.s32 \t%p15, %r90, 0;\n"
	"\t@%p15 bra \t$L__BB0_13;\n"
	"$L__BB0_14:\n"
	"\tcvt.u64.u32 \t%rd25, %r91;\n"
	"$L__BB0_15:\n"
	"\tshl.b32 \t%r76, %r3, 1;\n"
	"\tcvta.to.global.u64 \t%rd20, %rd10;\n"
	"\tmul.wide.u32 \t%rd21, %r76, 8;\n"
	"\tadd.s64 \t%rd22, %rd20, %rd21;\n"
	"\tst.global.u64 \t[%rd22], %rd1;\n"
	"\tst.global.u64 \t[%rd22+8], %rd25;\n"
	"\tret;\n"
	"}\n"
	"\t// .globl\tcheck_free\n"
	".visible .entry check_free(\n"
	"\t.param .u64 check_free_param_0,\n"
	"\t.param .u64 check_free_param_1,\n"
	"\t.param .u32 check_free_param_2\n"
	")\n"
	"{\n"
	"\t.reg .pred \t%p<6>;\n"
	"\t.reg .b32 \t%r<25>;\n"
	"\t.reg .b64 \t%rd<13>;\n"
	"\tld.param.u64 \t%rd5, [check_free_param_0];\n"
	"\tld.param.u64 \t%rd4, [check_free_param_1];\n"
	"\tld.param.u32 \t%r12, [check_free_param_2];\n"
	"\tmov.u32 \t%r13, %ntid.x;\n"
	"\tmov.u32 \t%r14, %ctaid.x;\n"
	"\tmov.u32 \t%r15, %tid.x;\n"
	"\tmad.lo.s32 \t%r1, %r14, %r13, %r15;\n"
	"\tshl.b32 \t%r16, %r1, 1;\n"
	"\tmov.u32 \t%r24, 1;\n"
	"\tcvta.to.global.u64 \t%rd6, %rd5;\n"
	"\tmul.wide.u32 \t%rd7, %r16, 8;\n"
	"\tadd.s64 \t%rd8, %rd6, %rd7;\n"
	"\tld.global.u64 \t%rd1, [%rd8];\n"
	"\tsetp.eq.s64 \t%p1, %rd1, 0;\n"
	"\tshr.u32 \t%r2, %r12, 2;\n"
	"\tsetp.eq.s32 \t%p2, %r2, 0;\n"
	"\tor.pred  \t%p3, %p1, %p2;\n"
	"\t@%p3 bra \t$L__BB1_3;\n"
	"\tmul.lo.s32 \t%r21, %r1, 1000;\n"
	"\tmov.u32 \t%r24, 1;\n"
	"\tmov.u32 \t%r22, 0;\n"
	"\tmov.u64 \t%rd12, %rd1;\n"
	"$L__BB1_2:\n"
	"\tld.u32 \t%r19, [%rd12];\n"
	"\tsetp.eq.s32 \t%p4, %r21, %r19;\n"
	"\tselp.u32 \t%r20, 1, 0, %p4;\n"
	"\tand.b32  \t%r24, %r24, %r20;\n"
	"\tadd.s64 \t%rd12, %rd12, 4;\n"
	"\tadd.s32 \t%r21, %r21, 1;\n"
	"\tadd.s32 \t%r22, %r22, 1;\n"
	"\tsetp.lt.u32 \t%p5, %r22, %r2;\n"
	"\t@%p5 bra \t$L__BB1_2;\n"
	"$L__BB1_3:\n"
	"\tcvta.to.global.u64 \t%rd9, %rd4;\n"
	"\tmul.wide.u32 \t%rd10, %r1, 4;\n"
	"\tadd.s64 \t%rd11, %rd9, %rd10;\n"
	"\tst.global.u32 \t[%rd11], %r24;\n"
	"\t{ // callseq 1, 0\n"
	"\t.reg .b32 temp_param_reg;\n"
	"\t.param .b64 param0;\n"
	"\tst.param.b64 \t[param0+0], %rd1;\n"
	"\tcall.uni \n"
	"\tfree, \n"
	"\t(\n"
	"\tparam0\n"
	"\t);\n"
	"\t} // callseq 1\n"
	"\tret;\n"
	"}\n";

#define GRID 2
#define BLOCK 64
#define NT (GRID * BLOCK)

/*
 * Launch @kernel on bo[0] (16 bytes a thread: alloc's out, check_free's
 * in), then for check_free bo[1] (its results), then @n.
 */
static int launch(struct __test_metadata *_metadata, FIXTURE_DATA(heap) *self, const char *kernel,
		  uint32_t n, uint32_t grid, uint32_t block, uint64_t seed)
{
	unsigned int nbo = strcmp(kernel, "alloc") ? 2 : 1;
	struct vgpu_args *args;
	int ret;

	if (vgpu_program_find_kernel(self->prog, kernel, &self->k))
		return -ENOENT;
	ret = vgpu_args_new(self->k, &args);
	for (unsigned int i = 0; !ret && i < nbo; i++)
		ret = vgpu_args_set_bo(args, i, self->bo[i], 0);
	if (!ret)
		ret = vgpu_args_set_u32(args, nbo, n);
	if (!ret)
		ret = run(_metadata, self, args, grid, block, seed);
	vgpu_args_free(args);
	return ret;
}

#define alloc(_m, self, n, grid, block, seed) launch(_m, self, "alloc", n, grid, block, seed)
#define check_free(_m, self, n, grid, block, seed) \
	launch(_m, self, "check_free", n, grid, block, seed)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The blocks of bo[0] (@nt threads): how many are NULL; the others
 * checked (filled and read back, 16-aligned, @n bytes disjoint), sorted
 * into @sorted.
 */
static int blocks(struct __test_metadata *_metadata, FIXTURE_DATA(heap) *self, uint32_t n,
		  int nt, uint64_t *sorted)
{
	uint64_t out[2 * NT];
	int nulls = 0, k = 0;

	EXPECT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, 16 * (size_t)nt));
	for (int t = 0; t < nt; t++) {
		if (!out[2 * t]) {
			EXPECT_EQ(2u, out[2 * t + 1]);
			nulls++;
			continue;
		}
		EXPECT_EQ(1u, out[2 * t + 1]);
		EXPECT_EQ(0u, out[2 * t] % 16);
		sorted[k++] = out[2 * t];
	}
	qsort(sorted, (size_t)k, sizeof(*sorted), cmp_u64);
	for (int i = 1; i < k; i++)
		EXPECT_LE(sorted[i - 1] + n, sorted[i]);
	return nulls;
}

/*
 * Under each schedule: every thread mallocs 100 bytes (class 128); the
 * next launch reads its block and frees it; then the same mallocs get
 * exactly the same blocks back (the class's free list), and are freed.
 */
TEST_F(heap, malloc_free_across_launches)
{
	uint64_t first[NT], again[NT];
	uint32_t res[NT];
	uint64_t size;

	ASSERT_EQ(0, ptx_load(_metadata, self, "heap.ptx", heap_ptx, "alloc"));
	ASSERT_EQ(0, vgpu_device_heap_size(self->dev, &size));
	EXPECT_EQ(8ull << 20, size);
	ASSERT_EQ(0, buf(self, 0, NULL, 16 * NT));
	ASSERT_EQ(0, buf(self, 1, NULL, 4 * NT));
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		ASSERT_EQ(0, alloc(_metadata, self, 100, GRID, BLOCK, seed));
		ASSERT_EQ(0, blocks(_metadata, self, 100, NT, seed ? again : first));
		if (seed)
			EXPECT_EQ(0, memcmp(first, again, sizeof(first)));
		ASSERT_EQ(0, check_free(_metadata, self, 100, GRID, BLOCK, seed));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, res, sizeof(res)));
		for (int t = 0; t < NT; t++)
			EXPECT_EQ(1u, res[t]);
	}
	/* another class: fresh blocks, disjoint from the first */
	ASSERT_EQ(0, alloc(_metadata, self, 40, GRID, BLOCK, 7));
	ASSERT_EQ(0, blocks(_metadata, self, 40, NT, again));
	for (int i = 0; i < NT; i++)
		EXPECT_TRUE(again[i] + 40 <= first[0] || again[i] >= first[NT - 1] + 100);
	/* the heap exists: its size stays */
	EXPECT_EQ(-EBUSY, vgpu_device_set_heap_size(self->dev, 1 << 20));
	ASSERT_EQ(0, vgpu_device_heap_size(self->dev, &size));
	EXPECT_EQ(8ull << 20, size);
}

/*
 * A heap of 64 KiB (512 bytes of header): 15 blocks of 4096 bytes (4112
 * with their headers) fit, the other 17 threads get NULL; once they are
 * freed, 15 fit again.
 */
TEST_F(heap, exhausted_heap_gives_null)
{
	uint64_t sorted[NT], size;
	uint32_t res[NT];

	EXPECT_EQ(-EINVAL, vgpu_device_set_heap_size(self->dev, 100));
	EXPECT_EQ(-EINVAL, vgpu_device_set_heap_size(self->dev, 8ull << 30));
	ASSERT_EQ(0, vgpu_device_set_heap_size(self->dev, 64 << 10));
	ASSERT_EQ(0, ptx_load(_metadata, self, "heap.ptx", heap_ptx, "alloc"));
	ASSERT_EQ(0, buf(self, 0, NULL, 16 * NT));
	ASSERT_EQ(0, buf(self, 1, NULL, 4 * NT));
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		ASSERT_EQ(0, alloc(_metadata, self, 4096, 1, 32, seed));
		EXPECT_EQ(17, blocks(_metadata, self, 4096, 32, sorted));
		/* the same bo[0] frees the 15 (NULL: nothing) */
		ASSERT_EQ(0, check_free(_metadata, self, 0, 1, 32, seed));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, res, sizeof(res)));
	}
	/* more than the heap holds at all */
	ASSERT_EQ(0, alloc(_metadata, self, 1 << 20, 1, 32, 0));
	EXPECT_EQ(32, blocks(_metadata, self, 1 << 20, 32, sorted));
	ASSERT_EQ(0, vgpu_device_heap_size(self->dev, &size));
	EXPECT_EQ(64u << 10, size);
}

TEST_HARNESS_MAIN
