// SPDX-License-Identifier: MIT
// f64 arithmetic as clang emits it: add, sub, mul, div, fma, min/max,
// compares and selects, neg/abs, conversions to and from f32 and 32-bit
// integers.
#include "cuda_min.h"

extern "C" __global__ void f64(u64 *out, const double *in, u32 n)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	double a = in[i], b = in[(i * 7 + 3) % n], *o = (double *)(out + 16 * i);
	s32 k = (s32)i - 40;

	o[0] = a + b;
	o[1] = a - b;
	o[2] = a * b;
	o[3] = a / b;
	o[4] = __builtin_fma(a, b, 0.1);
	o[5] = __builtin_fmin(a, b);
	o[6] = a < b ? -a : __builtin_fabs(b);
	o[7] = (double)(float)a;
	o[8] = (double)k * 0.5 + (double)i;
	out[16 * i + 9] = (u64)(s64)(s32)(a * 3.0);
	out[16 * i + 10] = (u64)(u32)(b >= 0.0 ? b : 0.0);
	out[16 * i + 11] = __builtin_bit_cast(u32, (float)(a * b));
	o[12] = __builtin_sqrt(__builtin_fabs(a));
	{
		double r;

		asm("rcp.rn.f64 %0, %1;" : "=d"(r) : "d"(b));
		o[13] = r;
	}
	o[14] = (double)((s64)i * -123456789012345ll) + (double)(u64)(i * 0x123456789abcull);
	out[16 * i + 15] = (u64)(s64)(a * 1e6) ^ (u64)(b > 0.0 && b < 1e19 ? b : 1.0);
}
