// SPDX-License-Identifier: MIT
// Tree reduction in shared memory with __syncthreads (examples/reduce_bar_sync).
#include "cuda_min.h"

extern "C" __global__ void reduce(u32 *out, const u32 *in)
{
	__shared__ u32 buf[256];
	u32 t = tid_x();

	buf[t] = in[ctaid_x() * 256 + t];
	__syncthreads();
	for (u32 s = 128; s > 0; s >>= 1) {
		if (t < s)
			buf[t] += buf[t + s];
		__syncthreads();
	}
	if (t == 0)
		out[ctaid_x()] = buf[0];
}
