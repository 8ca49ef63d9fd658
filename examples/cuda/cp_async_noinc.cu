// vgpu-run: --block 64 --buffer in:4096 --buffer out:256 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../cp_async_noinc.vgs (seed 001, example 2): an mbarrier
// for the threads' own arrives plus three cp.async.mbarrier.arrive.noinc
// per thread (4 x 64 = 256), one after each batch of copies: in[64b + t]
// (4 bytes) and in[256 + 256b + 4t ..] (16 bytes), with in[i] = i.
// out[t] = 51t + 6354.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void noinc(u32 *in, u32 *out)
{
	__shared__ __attribute__((aligned(16))) u32 s4[3 * 64];
	__shared__ __attribute__((aligned(16))) u32 s16[3 * 64 * 4];
	__shared__ u64 bar;
	u32 t = tid_x(), b = smem_addr(&bar), sum = 0;
	u64 token;

	for (u32 i = t; i < 1024; i += 64)
		in[i] = i;
	asm volatile("membar.gl;" ::: "memory");
	if (t == 0)
		mbar_init(b, 4 * 64);
	__syncthreads();
	for (u32 k = 0; k < 3; k++) {
		asm volatile("cp.async.ca.shared.global [%0], [%1], 4;"
			     ::"r"(smem_addr(&s4[64 * k + t])), "l"(&in[64 * k + t]) : "memory");
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16;"
			     ::"r"(smem_addr(&s16[(64 * k + t) * 4])), "l"(&in[256 + 256 * k + 4 * t])
			     : "memory");
		asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(b) : "memory");
	}
	token = mbar_arrive(b);
	while (!mbar_try_wait(b, token))
		;
	for (u32 k = 0; k < 3; k++) {
		sum += s4[64 * k + t];
		for (u32 j = 0; j < 4; j++)
			sum += s16[(64 * k + t) * 4 + j];
	}
	out[t] = sum;
}
