// SPDX-License-Identifier: MIT
// Divergent loops with data-dependent trip counts and reconvergence.
#include "cuda_min.h"

extern "C" __global__ void collatz(u32 *out)
{
	u32 i = ctaid_x() * ntid_x() + tid_x() + 1;
	u32 x = i, steps = 0, peak = i;

	while (x != 1) {
		if (x & 1)
			x = 3 * x + 1;
		else
			x >>= 1;
		if (x > peak)
			peak = x;
		steps++;
	}
	out[2 * (i - 1)] = steps;
	out[2 * (i - 1) + 1] = peak;
}
