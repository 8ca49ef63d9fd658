// SPDX-License-Identifier: MIT
// Probe (run on the accelerator machine, results in docs/core.md):
//  1. mbarrier.test_wait with a token two phases old: true or false?
//  2. mbarrier.try_wait (no hint) on a phase that cannot complete: does it
//     return false, and after how many %clock64 cycles?
//  3. the same with a suspend-time hint of 1000 ns.
#include <cstdio>

__global__ void probe(unsigned long long *out)
{
	__shared__ alignas(8) unsigned long long bar;
	unsigned a = (unsigned)__cvta_generic_to_shared(&bar);
	unsigned long long tok0, t0, t1;
	unsigned ok;

	asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(a));
	asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(tok0) : "r"(a) : "memory"); /* phase 0 done */
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(a) : "memory"); /* phase 1 done: now in 2 */
	asm volatile("{ .reg .pred p; mbarrier.test_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
		     : "=r"(ok) : "r"(a), "l"(tok0) : "memory");
	out[0] = ok;
	/* a token of the current phase (2), then try_wait on it: nobody else arrives */
	asm volatile("mbarrier.init.shared::cta.b64 [%0], 2;" ::"r"(a));
	asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1];" : "=l"(tok0) : "r"(a) : "memory");
	t0 = clock64();
	asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
		     : "=r"(ok) : "r"(a), "l"(tok0) : "memory");
	t1 = clock64();
	out[1] = ok;
	out[2] = t1 - t0;
	t0 = clock64();
	asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2, 1000; selp.u32 %0, 1, 0, p; }"
		     : "=r"(ok) : "r"(a), "l"(tok0) : "memory");
	t1 = clock64();
	out[3] = ok;
	out[4] = t1 - t0;
	t0 = clock64();
	asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2, 100000; selp.u32 %0, 1, 0, p; }"
		     : "=r"(ok) : "r"(a), "l"(tok0) : "memory");
	t1 = clock64();
	out[5] = ok;
	out[6] = t1 - t0;
}

int main()
{
	unsigned long long *d, h[7];
	int rate;

	cudaMalloc(&d, sizeof(h));
	probe<<<1, 1>>>(d);
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	cudaDeviceGetAttribute(&rate, cudaDevAttrClockRate, 0);
	printf("test_wait, token two phases old: %llu\n", h[0]);
	printf("try_wait, no hint, phase cannot complete: %llu after %llu cycles\n", h[1], h[2]);
	printf("try_wait, hint 1000 ns: %llu after %llu cycles\n", h[3], h[4]);
	printf("try_wait, hint 100000 ns: %llu after %llu cycles\n", h[5], h[6]);
	printf("SM clock %d kHz\n", rate);
	return cudaDeviceSynchronize() != cudaSuccess;
}
