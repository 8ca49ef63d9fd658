// SPDX-License-Identifier: MIT
// f32 -> f64 (exact): normal numbers, subnormals, zeros, infinities, NaN.
#include "cuda_min.h"

extern "C" __global__ void cvt_f64(u64 *out, const float *in)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();

	out[i] = __builtin_bit_cast(u64, (double)in[i]);
}
