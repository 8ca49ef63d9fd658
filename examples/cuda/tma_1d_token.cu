// vgpu-run: --block 128 --buffer gmem1:512 --buffer gmem2:1024 --buffer out:512 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../tma_1d_token.vgs (seed 004, first example): every thread
// arrives on a barrier of blockDim; one elected thread issues two bulk
// copies and arrives with the total byte count as its expect-tx, the
// others with 0; everyone waits on its own token.
// out[t] = smem1[t] + both words of smem2[t] = t * t + 4 * t + 1.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void tma_two_buffers(u32 *gmem1, u64 *gmem2, u32 *out)
{
	__shared__ __attribute__((aligned(16))) u32 smem1[128];
	__shared__ __attribute__((aligned(16))) u64 smem2[128];
	__shared__ u64 bar;
	u32 t = tid_x(), b = smem_addr(&bar);
	u64 token;

	gmem1[t] = 3 * t + 1;
	gmem2[t] = (u64)t << 32 | (t * t);
	asm volatile("membar.gl;" ::: "memory");
	if (t == 0)
		mbar_init(b, ntid_x());
	__syncthreads();
	if (t == 0) {
		bulk_load(smem_addr(smem1), gmem1, 512, b);
		bulk_load(smem_addr(smem2), gmem2, 1024, b);
	}
	asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;"
		     : "=l"(token) : "r"(b), "r"(t == 0 ? 1536u : 0u) : "memory");
	while (!mbar_try_wait(b, token))
		;
	out[t] = smem1[t] + (u32)smem2[t] + (u32)(smem2[t] >> 32);
}
