// SPDX-License-Identifier: MIT
// 64-bit integer division and remainder, signed and unsigned.
#include "cuda_min.h"

extern "C" __global__ void div64(u64 *out, const u64 *a, const u64 *b)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	u64 x = a[i], y = b[i];

	out[4 * i] = x / y;
	out[4 * i + 1] = x % y;
	out[4 * i + 2] = (u64)((s64)x / (s64)y);
	out[4 * i + 3] = (u64)((s64)x % (s64)y);
}
