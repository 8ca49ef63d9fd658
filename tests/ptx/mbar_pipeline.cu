// SPDX-License-Identifier: MIT
// Producer/consumer through an mbarrier, as CUTLASS pipelines do it: warp
// 0 fills a stage with a bulk copy (expect_tx + complete_tx), the other
// warps wait with a try_wait.parity loop; a second barrier says the stage
// may be refilled.  Four rounds over two stages.
#include "cuda_min.h"

extern "C" __global__ void mbar_pipeline(u32 *out, const u32 *in)
{
	__shared__ __attribute__((aligned(128))) u32 stage[2][64];
	__shared__ u64 full[2], empty[2];
	u32 t = tid_x(), warp = t / 32, consumers = ntid_x() - 32;

	if (t == 0) {
		for (int s = 0; s < 2; s++) {
			mbar_init(smem_addr(&full[s]), 1);
			mbar_init(smem_addr(&empty[s]), consumers);
		}
	}
	__syncthreads();
	for (u32 round = 0; round < 4; round++) {
		u32 s = round & 1, phase = (round >> 1) & 1;

		if (warp == 0) {
			if (t == 0) {
				if (round >= 2)
					mbar_wait_parity(smem_addr(&empty[s]), phase ^ 1);
				mbar_arrive_expect_tx(smem_addr(&full[s]), 256);
				bulk_load(smem_addr(stage[s]), in + round * 64, 256,
					  smem_addr(&full[s]));
			}
		} else {
			u32 c = t - 32, sum = 0;

			mbar_wait_parity(smem_addr(&full[s]), phase);
			for (u32 k = 0; k <= c % 64; k++)
				sum += stage[s][k];
			out[round * consumers + c] = sum;
			mbar_arrive(smem_addr(&empty[s]));
		}
	}
}
