// vgpu-run: --block 128 --buffer out:256 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../producer_consumer.vgs: named barriers 0/1 ("full") and
// 2/3 ("empty") with bar.arrive / bar.sync and a count of 128, as
// cuda::ptx or CUTLASS's NamedBarrier spell them.
#include "../../tests/ptx/cuda_min.h"

DEV void bar_sync(u32 id, u32 n)
{
	asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory");
}

DEV void bar_arrive(u32 id, u32 n)
{
	asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory");
}

extern "C" __global__ void pipeline(u32 *out)
{
	__shared__ u32 slots[2][64];
	u32 t = tid_x(), sum = 0;

	if (t < 64) {
		for (u32 r = 0; r < 8; r++) {
			if (r >= 2)
				bar_sync(2 + (r & 1), 128);
			slots[r & 1][t] = (r + 1) * 1000 + t;
			bar_arrive(r & 1, 128);
		}
		return;
	}
	for (u32 r = 0; r < 8; r++) {
		bar_sync(r & 1, 128);
		sum += slots[r & 1][t - 64];
		if (r < 6)
			bar_arrive(2 + (r & 1), 128);
	}
	out[t - 64] = sum;
}
