// SPDX-License-Identifier: MIT
// redux.sync (clang's builtins), elect.sync in converged and divergent
// code and with a partial member mask, shfl.sync's |p output.
#include "cuda_min.h"

DEV void elect(u32 mask, u32 *leader, u32 *is_leader)
{
	asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }"
		     : "=r"(*leader), "=r"(*is_leader) : "r"(mask));
}

extern "C" __global__ void warp_ops(u32 *out, const u32 *in)
{
	u32 t = tid_x(), i = ctaid_x() * ntid_x() + t;
	u32 a = in[i], *o = out + i * 14, l, p;

	o[0] = __nvvm_redux_sync_add(a, 0xffffffff);
	o[1] = __nvvm_redux_sync_umin(a, 0xffffffff);
	o[2] = __nvvm_redux_sync_umax(a, 0xffffffff);
	o[3] = (u32)__nvvm_redux_sync_min((s32)a, 0xffffffff);
	o[4] = (u32)__nvvm_redux_sync_max((s32)a, 0xffffffff);
	o[5] = __nvvm_redux_sync_and(a | 0x10, 0xffffffff);
	o[6] = __nvvm_redux_sync_or(a & 0xf0f, 0xffffffff);
	o[7] = __nvvm_redux_sync_xor(a, 0xffffffff);
	elect(0xffffffff, &l, &p);
	o[8] = l << 8 | p;
	if (t % 3) {
		elect(0xffffffff, &l, &p);
		o[9] = l << 8 | p;
	} else {
		o[9] = 0xdead;
	}
	if (0x0f0f0f00u >> (t % 32) & 1) { /* only the members (PTX: else undefined) */
		elect(0x0f0f0f00, &l, &p);
		o[10] = l << 8 | p;
	} else {
		o[10] = 0xbeef;
	}
	asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, 3, 0, 0xffffffff;"
		     " selp.u32 %1, 1, 0, q; }" : "=r"(l), "=r"(p) : "r"(a));
	o[11] = p ? l : 0xffff;
	asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, 5, 0x1f, 0xffffffff;"
		     " selp.u32 %1, 1, 0, q; }" : "=r"(l), "=r"(p) : "r"(a));
	o[12] = p ? l : 0xffff;
	asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, 6, 0x1f, 0xffffffff;"
		     " selp.u32 %1, 1, 0, q; }" : "=r"(l), "=r"(p) : "r"(a));
	o[13] = p ? l : 0xffff;
}
