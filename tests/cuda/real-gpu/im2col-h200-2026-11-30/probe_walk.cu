// SPDX-License-Identifier: MIT
/*
 * What a GPU's TMA does in im2col mode where the documentation is silent
 * or says "must": each case loads one 4-D (NHWC, int32, 4 channels)
 * column and prints, per pixel, the elements its channels 0 and 1 brought
 * (n.h.w: the tensor's channels 0 and 1 hold n*10000 + h*100 + w + 1) or
 * 0 (zero fill).
 * The cases: a filter base off the traversal stride's grid, N's
 * traversal stride, a filter base past the box's upper or below its
 * lower corner, a negative channel coordinate; and one the documentation
 * defines, as a control.  Built and run on the accelerator machine:
 *   nvcc -arch=sm_90a -o probe_im2col probe_im2col.cu -lcuda && ./probe_im2col
 */
#include <cstdio>
#include <cstdint>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void column(const __grid_constant__ CUtensorMap map, int c0, int w, int h, int n,
		       int ow, int oh, int *out, int words)
{
	__shared__ alignas(128) int buf[1024];
	__shared__ uint64_t bar;
	uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);

	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
		asm volatile("fence.mbarrier_init.release.cluster;");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
			     "r"(words * 4));
		asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col"
			     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
			     ::"r"((uint32_t)__cvta_generic_to_shared(buf)), "l"(&map), "r"(c0), "r"(w),
			     "r"(h), "r"(n), "r"(b), "h"((uint16_t)ow), "h"((uint16_t)oh)
			     : "memory");
	}
	__syncthreads();
	asm volatile("{\n .reg .pred P;\nW:\n mbarrier.try_wait.parity.shared::cta.b64 P, [%0], 0;\n"
		     " @!P bra W;\n}" ::"r"(b) : "memory");
	for (int i = threadIdx.x; i < words; i += blockDim.x)
		out[i] = buf[i];
}

enum { C = 4, W = 4, H = 3, N = 3 };

static int *dt, *dout;

static void probe(const char *what, int lw, int lh, int uw, int uh, int sw, int sh, int sn,
		  int c0, int w, int h, int n, int ow, int oh, int pixels)
{
	cuuint64_t dims[4] = { C, W, H, N };
	cuuint64_t st[3] = { C * 4, W * C * 4, H * W * C * 4 };
	cuuint32_t es[4] = { 1, (cuuint32_t)sw, (cuuint32_t)sh, (cuuint32_t)sn };
	int lo[2] = { lw, lh }, up[2] = { uw, uh }, out[1024];
	CUtensorMap map;
	CUresult r = cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 4, dt, dims, st,
					     lo, up, C, pixels, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
					     CU_TENSOR_MAP_SWIZZLE_NONE,
					     CU_TENSOR_MAP_L2_PROMOTION_NONE,
					     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	cudaError_t e;

	printf("%s\n  W=%d H=%d N=%d, corners lower (%d, %d) upper (%d, %d), strides (%d, %d, %d),"
	       " coordinates c=%d w=%d h=%d n=%d, offsets (%d, %d), %d pixels\n  ", what, W, H, N,
	       lw, lh, uw, uh, sw, sh, sn, c0, w, h, n, ow, oh, pixels);
	if (r != CUDA_SUCCESS) {
		printf("encode: %d\n", (int)r);
		return;
	}
	column<<<1, 32>>>(map, c0, w, h, n, ow, oh, dout, pixels * C);
	e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		printf("launch: %s\n", cudaGetErrorName(e));
		return;
	}
	cudaMemcpy(out, dout, pixels * C * 4, cudaMemcpyDeviceToHost);
	for (int p = 0; p < pixels; p++) {
		for (int c = 0; c < 2; c++) {
			int v = out[p * C + c];

			if (v > 0)
				printf("%d.%d.%d", (v - 1) / 10000, (v - 1) / 100 % 100, (v - 1) % 100);
			else
				printf("%d", v);
			printf(c ? "" : "|");
		}
		printf(p + 1 < pixels ? " " : "\n");
	}
}

int main()
{
	int t[N * H * W * C];

	for (int n = 0; n < N; n++)
		for (int h = 0; h < H; h++)
			for (int w = 0; w < W; w++)
				for (int c = 0; c < C; c++)
					t[((n * H + h) * W + w) * C + c] =
						c == 0 || c == 1 ? n * 10000 + h * 100 + w + 1 : -1;
	cudaMalloc(&dt, sizeof(t));
	cudaMalloc(&dout, 4096 * 4);
	cudaMemcpy(dt, t, sizeof(t), cudaMemcpyHostToDevice);
	printf("each pixel: n.h.w of its channels 0|1 (channels 0 and 1 of element (n, h, w) hold "
	       "n*10000 + h*100 + w + 1), 0 for zero fill\n\n");
	probe("control: padding 1, 3x3 filter, tap (1, 1)", -1, -1, -1, -1, 1, 1, 1, 0, -1, -1, 0, 1,
	      1, 12);
	probe("a filter base off the stride grid (W stride 2, box W -1..3, base 0)", -1, 0, 0, 0, 2,
	      1, 1, 0, 0, 0, 0, 0, 0, 10);
	probe("N's traversal stride 2", 0, 0, 0, 0, 1, 1, 2, 0, 0, 0, 0, 0, 0, 30);
	probe("a filter base past the box's upper corner in W (box 0..2, base 3)", 0, 0, -1, 0, 1, 1,
	      1, 0, 3, 0, 0, 0, 0, 8);
	probe("a filter base below the box's lower corner in W (box 1..3, base 0)", 1, 0, 0, 0, 1, 1,
	      1, 0, 0, 0, 0, 0, 0, 8);
	probe("a filter base past the box's upper corner in H (box 0..1, base 2)", 0, 0, 0, -1, 1, 1,
	      1, 0, 0, 2, 0, 0, 0, 8);
	probe("channel coordinate -1 (channels -1..2)", 0, 0, 0, 0, 1, 1, 1, -1, 0, 0, 0, 0, 0, 4);
	probe("an image coordinate of -1", 0, 0, 0, 0, 1, 1, 1, 0, 2, 2, -1, 0, 0, 4);
	return 0;
}
