// vgpu-run: --no-sanitize --block 32 --buffer src:128 --tensor-map map:src:4:25:25 --buffer out:128 --arg ptr:src --arg tmap:map --arg ptr:out --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../tx_count_negative.vgs (seed 000): the leader issues a
// 1-D TMA load of 100 bytes, lets it land (nanosleep), and only then
// arrives with expect_tx(100): tx-count goes to -100 and back to 0.  It
// reads the mbarrier word itself to show this (undefined behaviour for a
// live mbarrier: --no-sanitize).
// out[0..1]: the word after the copy landed; out[2..3]: after the
// arrive; out[4..28]: the 25 copied values, src[i] = 7 * i.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void tx_negative(u32 *src, const __grid_constant__ CUtensorMap map,
				       u32 *out)
{
	__shared__ __attribute__((aligned(16))) u32 tile[28];
	__shared__ u64 bar;
	u32 t = tid_x(), b = smem_addr(&bar);

	if (t < 25)
		src[t] = 7 * t;
	asm volatile("membar.gl;" ::: "memory");
	__syncthreads();
	if (t != 0)
		return;
	mbar_init(b, 1);
	tensor_load_1d(smem_addr(tile), &map, 0, b);
	asm volatile("nanosleep.u32 5000;" ::: "memory");
	((volatile u64 *)out)[0] = *(volatile u64 *)&bar; /* tx-count = -100 */
	mbar_arrive_expect_tx(b, 100);
	((volatile u64 *)out)[1] = *(volatile u64 *)&bar;
	mbar_wait_parity(b, 0);
	for (u32 i = 0; i < 25; i++)
		out[4 + i] = tile[i];
}
