// vgpu-run: --grid 4 --cluster 4 --block 64 --buffer out:16 --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../cluster_mbarrier.vgs (seed 001, mbarrier example 4): a
// cluster-wide mbarrier in CTA 0 for every thread of the cluster (4 x 64);
// after barrier.cluster each thread adds its CTA rank + 1 and a 1 into
// CTA 0's counters and arrives remotely (mapa, no state: `_`); CTA 0
// waits for the phase.  out[0] = 64 * (1 + 2 + 3 + 4) = 640, out[1] = 256.
#include "../../tests/ptx/cuda_min.h"

DEV u32 mapa0(u32 addr)
{
	u32 r;

	asm volatile("mapa.shared::cluster.u32 %0, %1, 0;" : "=r"(r) : "r"(addr));
	return r;
}

extern "C" __global__ void cluster_arrive(u32 *out)
{
	__shared__ u64 bar;
	__shared__ u32 counter[2];
	u32 t = tid_x(), rank, b = smem_addr(&bar), c = smem_addr(counter);

	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
	if (rank == 0 && t == 0) {
		mbar_init(b, 256);
		counter[0] = 0;
		counter[1] = 0;
	}
	asm volatile("barrier.cluster.arrive.release.aligned;\n"
		     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
	asm volatile("red.shared::cluster.add.u32 [%0], %1;" ::"r"(mapa0(c)), "r"(rank + 1)
		     : "memory");
	asm volatile("red.shared::cluster.add.u32 [%0], 1;" ::"r"(mapa0(c + 4)) : "memory");
	asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
		     ::"r"(mapa0(b)) : "memory");
	if (rank != 0)
		return;
	asm volatile("{\n .reg .pred P1;\nWAIT:\n"
		     " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 P1, [%0], 0;\n"
		     " @!P1 bra WAIT;\n}" ::"r"(b) : "memory");
	if (t == 0) {
		out[0] = counter[0];
		out[1] = counter[1];
	}
}
