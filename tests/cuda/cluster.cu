// SPDX-License-Identifier: MIT
// A cluster launch (cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION):
// each CTA writes its rank into its shared memory, the cluster meets at
// barrier.cluster, and each CTA reads its right neighbour's value through
// distributed shared memory (mapa + ld.shared::cluster).
extern "C" __global__ void cluster_ring(unsigned int *out)
{
	__shared__ unsigned int mine;
	unsigned int rank, nranks, addr, peer, got;

	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
	asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(nranks));
	if (threadIdx.x == 0)
		mine = 1000 + blockIdx.x;
	asm volatile("barrier.cluster.arrive.release.aligned;\n"
		     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
	addr = (unsigned int)__cvta_generic_to_shared(&mine);
	peer = (rank + 1) % nranks;
	asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(addr) : "r"(addr), "r"(peer));
	asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(got) : "r"(addr) : "memory");
	asm volatile("barrier.cluster.arrive.release.aligned;\n"
		     "barrier.cluster.wait.acquire.aligned;" ::: "memory");
	if (threadIdx.x == 0) {
		out[3 * blockIdx.x] = rank;
		out[3 * blockIdx.x + 1] = nranks;
		out[3 * blockIdx.x + 2] = got;
	}
}
