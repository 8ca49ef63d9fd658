// vgpu-run: --block 128 --buffer gmem1:512 --buffer gmem2:1024 --buffer out:512 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../tma_1d_parity.vgs (seed 004, second example): only the
// leader initialises the barrier (count 1), issues both copies and
// arrives with the byte count; after __syncthreads everyone waits for the
// end of phase 0 by parity.  out[t] = t * t + 4 * t + 1.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void tma_parity(u32 *gmem1, u64 *gmem2, u32 *out)
{
	__shared__ __attribute__((aligned(16))) u32 smem1[128];
	__shared__ __attribute__((aligned(16))) u64 smem2[128];
	__shared__ u64 bar;
	u32 t = tid_x(), b = smem_addr(&bar);

	gmem1[t] = 3 * t + 1;
	gmem2[t] = (u64)t << 32 | (t * t);
	asm volatile("membar.gl;" ::: "memory");
	__syncthreads();
	if (t == 0) {
		mbar_init(b, 1);
		bulk_load(smem_addr(smem1), gmem1, 512, b);
		bulk_load(smem_addr(smem2), gmem2, 1024, b);
		mbar_arrive_expect_tx(b, 1536);
	}
	__syncthreads();
	mbar_wait_parity(b, 0);
	out[t] = smem1[t] + (u32)smem2[t] + (u32)(smem2[t] >> 32);
}
