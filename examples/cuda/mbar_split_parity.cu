// vgpu-run: --block 128 --buffer out:512 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../mbar_split_parity.vgs: split arrive/wait with explicit
// phase tracking (seed 003), two slots alternating.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void split_arrive_wait(u32 *out)
{
	__shared__ u64 bar;
	__shared__ u32 slots[2][128];
	u32 t = tid_x(), sum = 0, parity = 0;
	u32 b = smem_addr(&bar);

	if (t == 0)
		mbar_init(b, ntid_x());
	__syncthreads();
	for (u32 i = 0; i < 16; i++) {
		slots[i & 1][t] = 3 * i + t;
		mbar_arrive(b);
		sum += i; /* work that needs no synchronisation */
		mbar_wait_parity(b, parity);
		sum += slots[i & 1][(t + 1) % 128];
		parity ^= 1;
	}
	out[t] = sum;
}
