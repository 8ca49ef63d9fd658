// SPDX-License-Identifier: MIT
/*
 * The size of column NVIDIA's cuTensorMapEncodeIm2col accepts: channels x
 * pixels x element size, and the corners' box (0 or the CUresult).  Run
 * in two halves (the second after the first): probe_limits.h200.log.
 */
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
int main()
{
	setvbuf(stdout, NULL, _IONBF, 0);
	void *a;
	cudaFree(0);
	cudaMalloc(&a, 64 << 20);
	static const struct { int ty, es, ch, px, l, u; } c[] = {
		{ 3, 4, 256, 1, -1, -1 }, { 3, 4, 4, 1024, -1, -1 }, { 3, 4, 64, 1, -1, -1 }, { 3, 4, 128, 1, -1, -1 },
		{ 3, 4, 32, 1024, -1, -1 }, { 3, 4, 64, 1024, -1, -1 }, { 0, 1, 256, 1024, -1, -1 }, { 0, 1, 256, 1, -1, -1 },
		{ 3, 4, 4, 16, -128, 127 }, { 3, 4, 4, 16, 127, -128 }, { 1, 2, 128, 1, -1, -1 }, { 1, 2, 256, 1, -1, -1 },
		{ 9, 8, 32, 1, -1, -1 }, { 9, 8, 16, 1, -1, -1 }, { 3, 4, 24, 1, -1, -1 }, { 3, 4, 8, 512, -1, -1 }, { 3, 4, 8, 1024, -1, -1 },
		/* a second run: */
		{ 3, 4, 32, 1024, -1, -1 }, { 3, 4, 36, 1024, -1, -1 }, { 3, 4, 48, 1024, -1, -1 }, { 3, 4, 56, 1024, -1, -1 },
		{ 3, 4, 60, 1024, -1, -1 }, { 3, 4, 64, 896, -1, -1 }, { 3, 4, 64, 900, -1, -1 }, { 3, 4, 64, 908, -1, -1 }, { 3, 4, 64, 512, -1, -1 },
		{ 3, 4, 128, 256, -1, -1 }, { 3, 4, 128, 257, -1, -1 }, { 3, 4, 256, 128, -1, -1 }, { 3, 4, 256, 129, -1, -1 },
	};
	for (auto &k : c) {
		cuuint64_t d[4] = { 256, 200, 200, 2 }, s[3] = { 256ull * k.es, 256ull * k.es * 200, 256ull * k.es * 40000 };
		cuuint32_t e[4] = { 1, 1, 1, 1 };
		int lo[2] = { k.l, k.l }, up[2] = { k.u, k.u };
		CUtensorMap m;
		CUresult r = cuTensorMapEncodeIm2col(&m, (CUtensorMapDataType)(k.ty == 9 ? 5 : k.ty), 4, a, d, s, lo, up, k.ch, k.px, e, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
		printf("es %d channels %3d (%4d B) pixels %4d corners %4d %4d: %d\n", k.es, k.ch, k.ch * k.es, k.px, k.l, k.u, (int)r);
	}
	return 0;
}
