// vgpu-run: --block 256 --buffer out:16 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../reduce_bar_sync.vgs; must print ../reduce_bar_sync.expected.
// out[0] = sum of squares 0..255, out[1] = the number of __syncthreads rounds.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void reduce(u32 *out)
{
	__shared__ u32 buf[256];
	u32 t = tid_x(), rounds = 1;

	buf[t] = t * t;
	__syncthreads();
	for (u32 s = 128; s > 0; s >>= 1) {
		if (t < s)
			buf[t] += buf[t + s];
		__syncthreads();
		rounds++;
	}
	if (t == 0) {
		out[0] = buf[0];
		out[1] = rounds;
	}
}
