// SPDX-License-Identifier: MIT
// 32- and 64-bit integer arithmetic, shifts, compares, selects, 64-bit
// indexing over a grid.
#include "cuda_min.h"

extern "C" __global__ void int_arith(u64 *out64, u32 *out32, s32 a, u32 n)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	u64 x = (u64)i * 0x100000001ull + ((u64)i << 40);
	s64 y = (s64)(s32)(i * 2654435761u) * a;

	if (i >= n)
		return;
	x ^= x >> 7;
	x += (u64)(y < 0 ? -y : y);
	out64[i] = x - ((u64)i << 33);
	out32[i] = (u32)(x >> 29) + (i % 3 == 0 ? 7u : i / 5) + (u32)((s32)i - 100 > 0) -
		   (u32)((s32)(i * 77) >> 3) + (u32)(i < 10 ? i * i : i ^ 0x55);
}
