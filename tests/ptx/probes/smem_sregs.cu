// SPDX-License-Identifier: MIT
// Probe (run on the accelerator machine, results in smem_sregs.txt):
// %dynamic_smem_size, %total_smem_size and %aggr_smem_size for kernels
// with and without static shared memory, launched with several dynamic
// sizes, with and without a cluster: what the GPU reports, and whether
// it rounds to an allocation unit.
#include <cstdio>

struct sregs {
	unsigned dyn, total, aggr;
};

__device__ void read_sregs(sregs *o)
{
	asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(o->dyn));
	asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(o->total));
	asm volatile("mov.u32 %0, %%aggr_smem_size;" : "=r"(o->aggr));
}

__global__ void no_static(sregs *o)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		read_sregs(o);
}

__global__ void static_100(sregs *o)
{
	__shared__ volatile char s[100];
	s[threadIdx.x % 100] = 1;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		read_sregs(o);
}

__global__ void static_5000(sregs *o)
{
	__shared__ volatile char s[5000];
	s[threadIdx.x % 5000] = 1;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		read_sregs(o);
}

__global__ void __cluster_dims__(2, 1, 1) clustered(sregs *o)
{
	__shared__ volatile char s[100];
	s[threadIdx.x % 100] = 1;
	if (threadIdx.x == 0 && blockIdx.x == 0)
		read_sregs(o);
}

int main()
{
	sregs *d, h;
	void (*k[])(sregs *) = { no_static, static_100, static_5000, clustered };
	const char *names[] = { "no_static", "static_100", "static_5000", "clustered(2) static_100" };
	unsigned dyns[] = { 0, 1, 100, 128, 129, 1000, 1024, 4096, 5000, 50000 };

	cudaMalloc(&d, sizeof(*d));
	cudaFuncSetAttribute(no_static, cudaFuncAttributeMaxDynamicSharedMemorySize, 60000);
	cudaFuncSetAttribute(static_100, cudaFuncAttributeMaxDynamicSharedMemorySize, 60000);
	cudaFuncSetAttribute(static_5000, cudaFuncAttributeMaxDynamicSharedMemorySize, 60000);
	cudaFuncSetAttribute(clustered, cudaFuncAttributeMaxDynamicSharedMemorySize, 60000);
	for (int i = 0; i < 4; i++)
		for (unsigned j = 0; j < sizeof(dyns) / sizeof(dyns[0]); j++) {
			cudaMemset(d, 0xff, sizeof(*d));
			k[i]<<<2, 64, dyns[j]>>>(d);
			cudaError_t e = cudaDeviceSynchronize();
			cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost);
			printf("%-24s dynamic %5u: %%dynamic_smem_size %5u %%total_smem_size %5u %%aggr_smem_size %5u %s\n",
			       names[i], dyns[j], h.dyn, h.total, h.aggr, e ? cudaGetErrorName(e) : "");
		}
	return 0;
}
