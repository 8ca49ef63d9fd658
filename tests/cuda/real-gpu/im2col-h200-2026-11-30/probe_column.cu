// SPDX-License-Identifier: MIT
/*
 * One 4-D (NHWC, int32) im2col load or .im2col_no_offs store on a GPU,
 * its parameters from the command line (probe_column.sh lists the cases):
 *   store C lower.w lower.h upper.w upper.h stride.w stride.h stride.n
 *   channels c w h n offset.w offset.h pixels
 * A load prints each pixel's channels as n.h.w.c of the element they
 * brought (element (n, h, w, c) holds n*1000 + h*100 + w*10 + c + 1; 0: zero
 * fill), a store the elements it changed (=: the column's index).  A
 * case per process: a fault is sticky for the process.
 */
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>
__global__ void ld(const __grid_constant__ CUtensorMap m, int c0, int w, int h, int n, int ow, int oh, int *out, int words)
{
	__shared__ alignas(128) int buf[1024];
	__shared__ uint64_t bar;
	uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
	if (threadIdx.x == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
		asm volatile("fence.mbarrier_init.release.cluster;");
		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(words * 4));
		asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
			     ::"r"((uint32_t)__cvta_generic_to_shared(buf)), "l"(&m), "r"(c0), "r"(w), "r"(h), "r"(n), "r"(b), "h"((uint16_t)ow), "h"((uint16_t)oh) : "memory");
	}
	__syncthreads();
	asm volatile("{\n .reg .pred P;\nW:\n mbarrier.try_wait.parity.shared::cta.b64 P, [%0], 0;\n @!P bra W;\n}" ::"r"(b) : "memory");
	for (int i = threadIdx.x; i < words; i += blockDim.x)
		out[i] = buf[i];
}
__global__ void st(const __grid_constant__ CUtensorMap m, int c0, int w, int h, int n, int words)
{
	__shared__ alignas(128) int buf[1024];
	for (int i = threadIdx.x; i < words; i += blockDim.x)
		buf[i] = 5000 + i;
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	if (threadIdx.x == 0) {
		asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.im2col_no_offs.bulk_group [%0, {%1, %2, %3, %4}], [%5];"
			     ::"l"(&m), "r"(c0), "r"(w), "r"(h), "r"(n), "r"((uint32_t)__cvta_generic_to_shared(buf)) : "memory");
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
	}
}
enum { W = 4, H = 3, N = 3 };
int main(int argc, char **argv)
{
	/* store C lw lh uw uh sw sh sn cpp c0 w h n ow oh pixels */
	int a[17];
	for (int i = 0; i < 17; i++)
		a[i] = atoi(argv[i + 1]);
	int store = a[0], C = a[1], cpp = a[9], pix = a[16];
	static int t[N * H * W * 16], o[4096];
	int *dt, *dout;
	for (int n = 0; n < N; n++)
		for (int h = 0; h < H; h++)
			for (int w = 0; w < W; w++)
				for (int c = 0; c < C; c++)
					t[((n * H + h) * W + w) * C + c] = n * 1000 + h * 100 + w * 10 + c + 1;
	cudaMalloc(&dt, sizeof(t));
	cudaMalloc(&dout, sizeof(o));
	cudaMemcpy(dt, t, sizeof(t), cudaMemcpyHostToDevice);
	cuuint64_t dims[4] = { (cuuint64_t)C, W, H, N }, sd[3] = { (cuuint64_t)C * 4, (cuuint64_t)W * C * 4, (cuuint64_t)H * W * C * 4 };
	cuuint32_t es[4] = { 1, (cuuint32_t)a[6], (cuuint32_t)a[7], (cuuint32_t)a[8] };
	int lo[2] = { a[2], a[3] }, up[2] = { a[4], a[5] };
	CUtensorMap m;
	CUresult r = cuTensorMapEncodeIm2col(&m, CU_TENSOR_MAP_DATA_TYPE_INT32, 4, dt, dims, sd, lo, up, cpp, pix, es, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	if (r) {
		printf("  encode %d\n", r);
		return 0;
	}
	if (store)
		st<<<1, 32>>>(m, a[10], a[11], a[12], a[13], cpp * pix);
	else
		ld<<<1, 32>>>(m, a[10], a[11], a[12], a[13], a[14], a[15], dout, cpp * pix);
	cudaError_t e = cudaDeviceSynchronize();
	if (e) {
		printf("  %s\n", cudaGetErrorName(e));
		return 0;
	}
	printf(" ");
	if (store) {
		static int b[N * H * W * 16];
		cudaMemcpy(b, dt, sizeof(b), cudaMemcpyDeviceToHost);
		for (int i = 0; i < N * H * W * C; i++)
			if (b[i] != t[i])
				printf(" %d.%d.%d.%d=%d", i / C / W / H, i / C / W % H, i / C % W, i % C, b[i] - 5000);
	} else {
		cudaMemcpy(o, dout, cpp * pix * 4, cudaMemcpyDeviceToHost);
		for (int p = 0; p < pix; p++) {
			printf(" ");
			for (int c = 0; c < cpp; c++) {
				int v = o[p * cpp + c];
				if (v)
					printf("%s%d.%d.%d.%d", c ? "|" : "", (v - 1) / 1000, (v - 1) / 100 % 10, (v - 1) / 10 % 10, (v - 1) % 10);
				else
					printf("%s0", c ? "|" : "");
			}
		}
	}
	printf("\n");
	return 0;
}
