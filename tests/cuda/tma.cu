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
