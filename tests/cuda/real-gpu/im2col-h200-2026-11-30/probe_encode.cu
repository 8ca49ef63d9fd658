// SPDX-License-Identifier: MIT
/*
 * What NVIDIA's cuTensorMapEncodeIm2col answers (0 or the CUresult) for
 * the documented limits and a few undocumented ones.
 */
#include <cstdio>
#include <cstdint>
#include <cuda.h>
#include <cuda_runtime.h>
enum { C = 4, W = 5, H = 4, N = 2 };
static void *a;
static int id;
static void e(const char *what, int rank, void *addr, const cuuint64_t *d, const cuuint64_t *s, const int *l, const int *u, int cpp, int ppc, const cuuint32_t *es, CUtensorMapSwizzle sw = CU_TENSOR_MAP_SWIZZLE_NONE, CUtensorMap *m = nullptr, CUtensorMapDataType ty = CU_TENSOR_MAP_DATA_TYPE_INT32)
{
	static CUtensorMap mm;
	CUresult r = cuTensorMapEncodeIm2col(m ? m : &mm, ty, rank, addr, d, s, l, u, cpp, ppc, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	printf("%2d %-44s %d\n", ++id, what, (int)r);
}
int main()
{
	setvbuf(stdout, NULL, _IONBF, 0);
	cudaFree(0);
	cudaMalloc(&a, 1 << 20);
	cuuint64_t dims[4] = { C, W, H, N }, st[3] = { C * 4, W * C * 4, H * W * C * 4 };
	cuuint64_t d5[5] = { C, 3, 3, 3, 1 }, s5[4] = { 16, 48, 144, 432 }, bst[3] = { C * 4 + 8, W * C * 4, H * W * C * 4 }, zd[4] = { C, 0, H, N };
	cuuint32_t es[4] = { 1, 1, 1, 1 }, e5[5] = { 1, 1, 1, 1, 1 }, e0[4] = { 1, 0, 1, 1 }, e9[4] = { 1, 9, 1, 1 }, ec9[4] = { 9, 1, 1, 1 };
	int lo[2] = { -1, -1 }, up[2] = { -1, -1 }, l4[2] = { -128, -128 }, u4[2] = { 127, 127 }, l5[3] = { -16, -16, 0 }, u5[3] = { 15, 15, 0 };
	int l128[2] = { 128, -1 }, lm129[2] = { -129, -1 }, z3[3] = { 0, 0, 0 }, u16[3] = { 0, 16, 0 }, lm17[3] = { 0, 0, -17 };
	int wide[2] = { 3, -1 }, up2[2] = { -2, -1 }, nar[2] = { -2, -1 }, up4[2] = { -4, -1 };
	int lo3[1] = { -32768 }, up3[1] = { 32767 }, lo3b[1] = { -32769 };
	cuuint64_t d3[3] = { C, 8, 2 }, s3[2] = { 16, 128 };
	cuuint32_t e3[3] = { 1, 1, 1 };
	e("ok", 4, a, dims, st, lo, up, C, 16, es);
	e("limits rank 4 (256 ch, 1024 px)", 4, a, dims, st, l4, u4, 256, 1024, es);
	e("limits rank 5", 5, a, d5, s5, l5, u5, 4, 1, e5);
	e("limits rank 3 (+-2^15)", 3, a, d3, s3, lo3, up3, 4, 4, e3);
	e("rank 3 corner -32769", 3, a, d3, s3, lo3b, up3, 4, 4, e3);
	e("rank 2", 2, a, dims, st, lo, up, C, 16, es);
	e("rank 6", 6, a, dims, st, lo, up, C, 16, es);
	e("base +4", 4, (char *)a + 4, dims, st, lo, up, C, 16, es);
	e("stride not x16", 4, a, dims, bst, lo, up, C, 16, es);
	e("dim 0", 4, a, zd, st, lo, up, C, 16, es);
	e("lower 128 rank 4", 4, a, dims, st, l128, up, C, 16, es);
	e("lower -129 rank 4", 4, a, dims, st, lm129, up, C, 16, es);
	e("upper 16 rank 5", 5, a, d5, s5, z3, u16, 4, 16, e5);
	e("lower -17 rank 5", 5, a, d5, s5, lm17, z3, 4, 16, e5);
	e("box 1 wide (W=5, lower 3, upper -1)", 4, a, dims, st, wide, up, C, 16, es);
	e("box empty (lower 3, upper -2)", 4, a, dims, st, wide, up2, C, 16, es);
	e("box 1 wide (lower -2, upper -4)", 4, a, dims, st, nar, up4, C, 16, es);
	e("channels 257", 4, a, dims, st, lo, up, 257, 16, es);
	e("channels 2 (8 bytes)", 4, a, dims, st, lo, up, 2, 16, es);
	e("channels 6 (24 bytes)", 4, a, dims, st, lo, up, 6, 16, es);
	e("channels 8 u16 (16 bytes)", 4, a, dims, st, lo, up, 8, 16, es, CU_TENSOR_MAP_SWIZZLE_NONE, nullptr, CU_TENSOR_MAP_DATA_TYPE_UINT16);
	e("channels 0", 4, a, dims, st, lo, up, 0, 16, es);
	e("pixels 1025", 4, a, dims, st, lo, up, C, 1025, es);
	e("pixels 0", 4, a, dims, st, lo, up, C, 0, es);
	e("element stride 0", 4, a, dims, st, lo, up, C, 16, e0);
	e("element stride 9", 4, a, dims, st, lo, up, C, 16, e9);
	e("channel element stride 9", 4, a, dims, st, lo, up, C, 16, ec9);
	e("swizzle 128B", 4, a, dims, st, lo, up, C, 16, es, CU_TENSOR_MAP_SWIZZLE_128B);
	static CUtensorMap two[2];
	e("map at +32", 4, a, dims, st, lo, up, C, 16, es, CU_TENSOR_MAP_SWIZZLE_NONE, (CUtensorMap *)((char *)two + 32));
	return 0;
}
