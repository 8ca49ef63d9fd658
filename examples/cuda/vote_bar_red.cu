// vgpu-run: --block 1024 --buffer out:16 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../vote_bar_red.vgs: __syncthreads_count/_and/_or on a
// Fibonacci hash's top bit, then bar.red.popc on barrier 1 with an
// explicit count for the negated predicates.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void votes(u32 *out)
{
	u32 t = tid_x();
	int p = (t * 0x9e3779b9u) >> 31;
	u32 n = __nvvm_bar0_popc(p), all = __nvvm_bar0_and(p), any = __nvvm_bar0_or(p), neg;

	asm volatile("{ .reg .pred q; setp.eq.u32 q, %1, 0; bar.red.popc.u32 %0, 1, 1024, q; }"
		     : "=r"(neg) : "r"((u32)p) : "memory");
	if (t == 0) {
		out[0] = n;
		out[1] = all != 0;
		out[2] = any != 0;
		out[3] = neg;
	}
}
