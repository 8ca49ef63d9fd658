// SPDX-License-Identifier: MIT
// shfl.sync on sub-warp segments, as __shfl_*_sync(mask, v, x, width)
// compiles: c = (32 - width) << 8 | clamp; up, down, bfly and idx for
// widths 4, 8 and 16, and the |p output.
#include "cuda_min.h"

#define SEG(w) ((32 - (w)) << 8)

extern "C" __global__ void shfl_seg(u32 *out, const u32 *in)
{
	u32 i = ctaid_x() * ntid_x() + tid_x(), a = in[i], *o = out + 13 * i, p;

	o[0] = __nvvm_shfl_sync_up_i32(0xffffffffu, a, 1, SEG(4));
	o[1] = __nvvm_shfl_sync_up_i32(0xffffffffu, a, 3, SEG(8));
	o[2] = __nvvm_shfl_sync_down_i32(0xffffffffu, a, 2, SEG(4) | 0x1f);
	o[3] = __nvvm_shfl_sync_down_i32(0xffffffffu, a, 5, SEG(16) | 0x1f);
	o[4] = __nvvm_shfl_sync_bfly_i32(0xffffffffu, a, 1, SEG(8) | 0x1f);
	o[5] = __nvvm_shfl_sync_bfly_i32(0xffffffffu, a, 6, SEG(16) | 0x1f);
	o[6] = __nvvm_shfl_sync_idx_i32(0xffffffffu, a, 2, SEG(4) | 0x1f);
	o[7] = __nvvm_shfl_sync_idx_i32(0xffffffffu, a, 13, SEG(8) | 0x1f);
	o[8] = __nvvm_shfl_sync_idx_i32(0xffffffffu, a, i % 7, SEG(16) | 0x1f);
	asm("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, 3, 0x181f, 0xffffffff;"
	    " selp.u32 %1, 1, 0, q; }" : "=r"(o[9]), "=r"(p) : "r"(a));
	o[10] = p;
	asm("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, 2, 0x1c00, 0xffffffff;"
	    " selp.u32 %1, 1, 0, q; }" : "=r"(o[11]), "=r"(p) : "r"(a));
	o[12] = p;
}
