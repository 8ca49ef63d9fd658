// SPDX-License-Identifier: MIT
// match.sync: any (32 and 64 bits) and all (with its predicate), over a
// whole warp and in divergent code.
#include "cuda_min.h"

extern "C" __global__ void match(u32 *out, const u32 *in)
{
	u32 i = ctaid_x() * ntid_x() + tid_x(), a = in[i], *o = out + 5 * i;
	int pred;

	o[0] = __nvvm_match_any_sync_i32(0xffffffffu, a % 5);
	o[1] = __nvvm_match_any_sync_i64(0xffffffffu, (u64)(a % 3) << 40 | (a & 1));
	o[2] = __nvvm_match_all_sync_i32p(0xffffffffu, a % 2, &pred);
	o[3] = (u32)pred;
	if (tid_x() % 4 != 1)
		o[4] = __nvvm_match_all_sync_i32p(0xddddddddu, tid_x() / 32, &pred) | (u32)pred;
	else
		o[4] = 7;
}
