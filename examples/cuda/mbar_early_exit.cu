// vgpu-run: --block 64 --buffer out:320 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../mbar_early_exit.vgs: threads with tid % 4 == 3 leave at
// iteration (tid / 4) % 8 with arrive_drop (seed 003); the others go on.
#include "../../tests/ptx/cuda_min.h"

DEV void arrive_drop(u32 bar)
{
	asm volatile("mbarrier.arrive_drop.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

extern "C" __global__ void early_exit(u32 *out)
{
	__shared__ u64 bar;
	__shared__ u32 count[16];
	u32 t = tid_x(), b = smem_addr(&bar), leave = (t >> 2) & 7, i;

	if (t < 16)
		count[t] = 0;
	if (t == 0)
		mbar_init(b, 64);
	__syncthreads();
	for (i = 0; i < 16; i++) {
		if ((t & 3) == 3 && leave == i) {
			arrive_drop(b);
			out[t] = i;
			return;
		}
		atomic_add_shared(smem_addr(&count[i]), 1);
		u64 tok = mbar_arrive(b);
		while (!mbar_try_wait(b, tok))
			;
	}
	out[t] = i;
	if (t == 0)
		for (u32 k = 0; k < 16; k++)
			out[64 + k] = count[k];
}
