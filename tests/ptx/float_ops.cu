// SPDX-License-Identifier: MIT
// f32 arithmetic (IEEE, round to nearest), fma, compares and selects,
// int <-> float conversions.
#include "cuda_min.h"

extern "C" __global__ void float_ops(float *out, const float *in, float k)
{
	u32 i = tid_x();
	float x = in[i], y = in[63 - i];
	float s = x + y, d = x - y, p = x * k;
	float f = __builtin_fmaf(x, y, k);

	out[8 * i + 0] = s;
	out[8 * i + 1] = d;
	out[8 * i + 2] = p;
	out[8 * i + 3] = f;
	out[8 * i + 4] = x < y ? x : y;
	out[8 * i + 5] = (float)(s32)(p * 3.0f);
	out[8 * i + 6] = (float)i * 0.25f;
	out[8 * i + 7] = -x;
}
