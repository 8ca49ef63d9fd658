// SPDX-License-Identifier: MIT
// A 2-D tensor tile through a CUtensorMap passed by value (const
// __grid_constant__): loaded with complete_tx on an mbarrier, partly out
// of bounds (zero fill), changed, and stored back at other coordinates
// (rows out of bounds are not written).
#include "cuda_min.h"

extern "C" __global__ void tensor2d(u32 *out, const __grid_constant__ CUtensorMap tmap,
				    s32 x0, s32 y0)
{
	__shared__ __attribute__((aligned(128))) u32 tile[8 * 8];
	__shared__ u64 bar;
	u32 t = tid_x(), b = smem_addr(&bar), s = smem_addr(tile);

	if (t == 0) {
		mbar_init(b, 1);
		asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
		mbar_arrive_expect_tx(b, 8 * 8 * 4);
		tensor_load_2d(s, &tmap, x0, y0, b);
	}
	__syncthreads();
	mbar_wait_parity(b, 0);
	out[t] = tile[t];
	tile[t] = tile[t] * 2 + 1;
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	if (t == 0) {
		tensor_store_2d(&tmap, x0 - 8, y0, s);
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
	}
}
