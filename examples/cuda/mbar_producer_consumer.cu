// vgpu-run: --block 96 --buffer out:256 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../mbar_producer_consumer.vgs: warp specialisation, double
// buffering and four mbarriers of 96 (seed 003).
#include "../../tests/ptx/cuda_min.h"

DEV void arrive_and_wait(u32 bar)
{
	u64 tok = mbar_arrive(bar);

	while (!mbar_try_wait(bar, tok))
		;
}

extern "C" __global__ void produce_consume(u32 *out)
{
	__shared__ u64 ready[2], filled[2];
	__shared__ u32 buf[2][64];
	u32 t = tid_x();

	if (t == 0)
		for (int k = 0; k < 2; k++) {
			mbar_init(smem_addr(&ready[k]), ntid_x());
			mbar_init(smem_addr(&filled[k]), ntid_x());
		}
	__syncthreads();
	if (t < 32) {
		for (u32 i = 0; i < 8; i++) {
			u32 b = i & 1;

			arrive_and_wait(smem_addr(&ready[b]));
			buf[b][2 * t] = (i + 1) * 1000 + 2 * t;
			buf[b][2 * t + 1] = (i + 1) * 1000 + 2 * t + 1;
			mbar_arrive(smem_addr(&filled[b]));
		}
		return;
	}
	u32 c = t - 32, sum = 0;

	mbar_arrive(smem_addr(&ready[0]));
	mbar_arrive(smem_addr(&ready[1]));
	for (u32 i = 0; i < 8; i++) {
		u32 b = i & 1;

		arrive_and_wait(smem_addr(&filled[b]));
		sum += buf[b][c];
		mbar_arrive(smem_addr(&ready[b]));
	}
	out[c] = sum;
}
