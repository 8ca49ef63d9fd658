// SPDX-License-Identifier: MIT
// Device functions that clang keeps as .func (noinline): arguments and
// results of 32 and 64 bits, nested calls, several returns, a void
// function storing through a pointer, a callee with its own .local array,
// and the same function called from two places.
#include "cuda_min.h"

#define NOINLINE extern "C" __device__ __attribute__((noinline))

NOINLINE u32 mix(u32 x, u64 y)
{
	return x * 3 + (u32)(y >> 3);
}

NOINLINE u64 twice(u64 y)
{
	if (y & 1)
		return y * 2;
	return mix((u32)y, y) + y;
}

NOINLINE void store(u32 *p, u32 v)
{
	*p = v;
}

NOINLINE u32 table_sum(u32 seed, const u32 *idx)
{
	u32 t[16], s = 0;

	for (u32 k = 0; k < 16; k++)
		t[k] = seed * k + 7;
	for (u32 k = 0; k < 6; k++)
		s += t[idx[k] % 16];
	return s;
}

extern "C" __global__ void calls(u32 *out, const u32 *idx, u32 n)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();

	store(out + 3 * i, mix(i, n) + (u32)twice(i + n));
	store(out + 3 * i + 1, (u32)(twice((u64)i << 32 | n) >> 32));
	out[3 * i + 2] = table_sum(i, idx + i % 8);
}
