// SPDX-License-Identifier: MIT
// Division and remainder by variables, IEEE f32 division and square root,
// ex2, and a warp reduction with shfl.sync.down / bfly / idx / up.
#include "cuda_min.h"

extern "C" __global__ void math(u32 *out, const u32 *in)
{
	u32 t = tid_x();
	u32 a = in[t], b = in[63 - t] % 17;
	s32 sa = (s32)a, sb = (s32)b - 8;
	float fa = (float)sa, fb = (float)(sb == 0 ? 3 : sb);
	u32 sum = a, x = a, y = a, z = a;

	out[8 * t + 0] = b ? a / b : 0;
	out[8 * t + 1] = b ? a % b : 0;
	out[8 * t + 2] = sb ? (u32)(sa / sb) : 0;
	out[8 * t + 3] = sb ? (u32)(sa % sb) : 0;
	out[8 * t + 4] = __float_as_uint(fa / fb);
	out[8 * t + 5] = __float_as_uint(__builtin_sqrtf(fa < 0 ? -fa : fa));
	for (int o = 16; o > 0; o >>= 1)
		sum += __nvvm_shfl_sync_down_i32(0xffffffff, sum, o, 0x1f);
	for (int o = 1; o < 32; o <<= 1)
		x ^= __nvvm_shfl_sync_bfly_i32(0xffffffff, x, o, 0x1f);
	y = __nvvm_shfl_sync_idx_i32(0xffffffff, y, (t + 5) & 31, 0x1f);
	z = __nvvm_shfl_sync_up_i32(0xffffffff, z, 3, 0);
	out[8 * t + 6] = sum + x;
	out[8 * t + 7] = y ^ z;
}
