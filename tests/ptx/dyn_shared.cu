// SPDX-License-Identifier: MIT
// Dynamic shared memory (extern __shared__, sized by the launch) after a
// static array; two extern names alias the same region, as in CUDA.
#include "cuda_min.h"

extern __shared__ u32 dyn[];
extern __shared__ unsigned short dyn16[];

extern "C" __global__ void dyn_shared(u32 *out)
{
	__shared__ u32 stat[4];
	u32 t = tid_x(), n = ntid_x();

	if (t < 4)
		stat[t] = 100 * t;
	dyn[t] = 3 * t;
	__syncthreads();
	out[t] = dyn[(t + 1) % n] + stat[t % 4] + dyn16[2 * t];
}
