// SPDX-License-Identifier: MIT
// Device-side printf: clang turns each call into vprintf with the
// arguments packed in a local buffer, C's promotions applied (a float
// becomes a double).  Even threads print; the last one also prints a
// string argument and a field width taken from an argument.
#include "cuda_min.h"

extern "C" __device__ int printf(const char *, ...);

extern "C" __global__ void printk(u32 *out, u32 n)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	s64 big = -((s64)n << 33) - (s64)i;

	if (i % 2 == 0)
		printf("thread %u: %d %lld %.3f %x %c|\n", i, -(s32)i, big, 0.5f * (float)i, n + i,
		       'a' + (s32)(i % 26));
	if (i + 1 == n)
		printf("last %s [%*u] %%\n", "of them", 6, i);
	out[i] = i * 3;
}
