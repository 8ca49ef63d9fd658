// SPDX-License-Identifier: MIT
// A 2-D TMA load through a CUtensorMap made by cuTensorMapEncodeTiled and
// passed by value (const __grid_constant__): one 8x8 tile of ints at
// (x0, y0), partly out of bounds (zero fill), copied out by every thread.
#include <cuda.h>

extern "C" __global__ void tma_tile(int *out, const __grid_constant__ CUtensorMap tmap, int x0,
				    int y0)
{
	__shared__ __align__(128) int tile[8 * 8];
	__shared__ unsigned long long bar;
	unsigned int t = threadIdx.x;
	unsigned int b = (unsigned int)__cvta_generic_to_shared(&bar);
	unsigned int s = (unsigned int)__cvta_generic_to_shared(tile);

	if (t == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
			     ::"r"(b), "r"(8 * 8 * 4) : "memory");
		asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"
			     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
			     ::"r"(s), "l"(&tmap), "r"(x0), "r"(y0), "r"(b) : "memory");
	}
	__syncthreads();
	asm volatile("{\n .reg .pred P1;\nWAIT:\n"
		     " mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n"
		     " @!P1 bra WAIT;\n}" ::"r"(b) : "memory");
	out[t] = tile[t];
}

// A 4-D im2col load (NHWC) through a CUtensorMap made by
// cuTensorMapEncodeIm2col: the column of 16 pixels x 4 int channels from
// the filter base (w0, h0) of image n0 plus the offsets (ow, oh), as
// CUTLASS's SM90_TMA_LOAD_IM2COL issues it; copied out by every thread.
extern "C" __global__ void tma_im2col(int *out, const __grid_constant__ CUtensorMap tmap, int w0,
				      int h0, int n0, unsigned short ow, unsigned short oh)
{
	__shared__ __align__(128) int col[16 * 4];
	__shared__ unsigned long long bar;
	unsigned int t = threadIdx.x;
	unsigned int b = (unsigned int)__cvta_generic_to_shared(&bar);
	unsigned int s = (unsigned int)__cvta_generic_to_shared(col);

	if (t == 0) {
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
			     ::"r"(b), "r"(16 * 4 * 4) : "memory");
		asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col"
			     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8};"
			     ::"r"(s), "l"(&tmap), "r"(0), "r"(w0), "r"(h0), "r"(n0), "r"(b),
			     "h"(ow), "h"(oh) : "memory");
	}
	__syncthreads();
	asm volatile("{\n .reg .pred P1;\nWAIT:\n"
		     " mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n"
		     " @!P1 bra WAIT;\n}" ::"r"(b) : "memory");
	out[t] = col[t];
}
