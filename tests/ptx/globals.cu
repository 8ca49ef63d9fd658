// SPDX-License-Identifier: MIT
// Module variables: an initialised __device__ table (.global), a
// __constant__ table (.const), f32 values, and a zero-initialised
// counter that keeps its value from one launch to the next.
#include "cuda_min.h"

#define __constant__ __attribute__((constant))

__device__ u32 table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
__constant__ u32 ctab[5] = { 100, 200, 300, 400, 500 };
__device__ float ftab[3] = { 1.5f, -2.25f, 1e3f };
__device__ u32 counter;
__device__ unsigned char bytes[5] = { 0xff, 1, 2, 3, 0x80 };

extern "C" __global__ void globals(u32 *out, u32 k)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();

	out[2 * i] = table[(i + k) % 8] + ctab[i % 5] + (u32)(s32)(ftab[i % 3] * 2.0f) +
		     bytes[i % 5];
	out[2 * i + 1] = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}
