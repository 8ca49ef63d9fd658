// SPDX-License-Identifier: MIT
/*
 * What NVIDIA's driver and runtime answer for managed memory, for
 * libcuda.so.1's and libcudart.so.13's cuMemAllocManaged and
 * cudaMallocManaged (run on the accelerator machine: nvcc -o probe_managed
 * probe_managed.cu -lcuda; output in probe_managed.h200.log, 2026-11-29,
 * driver 580.159.04: cudaMallocManaged of 0 bytes succeeds there).
 */
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>

#define P(expr) printf("%-70s -> %d\n", #expr, (int)(expr))

__global__ void twice(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] *= 2;
}

int main(void)
{
	CUdeviceptr d = 0, d2 = 0;
	CUdevice dev;
	CUcontext ctx;
	int v = -1;
	unsigned int t = 99;
	void *h = nullptr;
	int *m = nullptr;

	P(cuInit(0));
	P(cuDeviceGet(&dev, 0));
	P(cuDevicePrimaryCtxRetain(&ctx, dev));
	P(cuCtxSetCurrent(ctx));
	P(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, dev));
	printf("  MANAGED_MEMORY = %d\n", v);
	P(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev));
	printf("  CONCURRENT_MANAGED_ACCESS = %d\n", v);
	P(cuMemAllocManaged(&d, 0, CU_MEM_ATTACH_GLOBAL));
	P(cuMemAllocManaged(&d, 4096, 0));
	P(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_SINGLE));
	P(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST));
	P(cuMemAllocManaged(&d, 4096, 0x10));
	P(cuMemAllocManaged(NULL, 4096, CU_MEM_ATTACH_GLOBAL));
	printf("  d after failures = 0x%llx\n", (unsigned long long)d);
	P(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_HOST));
	P(cuMemAllocManaged(&d2, 4096, CU_MEM_ATTACH_GLOBAL));
	P(cuPointerGetAttribute(&t, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d));
	printf("  MEMORY_TYPE = %u\n", t);
	P(cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
	printf("  IS_MANAGED = %d\n", v);
	P(cuPointerGetAttribute(&h, CU_POINTER_ATTRIBUTE_HOST_POINTER, d));
	printf("  HOST_POINTER == d: %d\n", h == (void *)(uintptr_t)d);
	P(cuPointerGetAttribute(&v, CU_POINTER_ATTRIBUTE_MAPPED, d));
	printf("  MAPPED = %d\n", v);
	P(cuMemFreeHost((void *)(uintptr_t)d));
	P(cuMemsetD8(d + 4, 0xff, 4));
	P(cuCtxSynchronize());
	printf("  ((int *)d)[1] = %d\n", ((int *)(uintptr_t)d)[1]);
	P(cuMemFree(d));
	P(cuMemFree(d2));
	P(cuPointerGetAttribute(&h, CU_POINTER_ATTRIBUTE_HOST_POINTER, d));
	P(cuMemFree(d));

	/* the runtime */
	P(cudaMallocManaged(&m, 0));
	P(cudaGetLastError());
	P(cudaGetLastError());
	P(cudaMallocManaged(&m, 64, 0));
	P(cudaMallocManaged(&m, 64, cudaMemAttachSingle));
	P(cudaMallocManaged(&m, 64, cudaMemAttachGlobal | cudaMemAttachHost));
	P(cudaGetLastError());
	P(cudaMallocManaged(&m, 1000 * sizeof(int)));
	for (int i = 0; i < 1000; i++)
		m[i] = i;
	twice<<<4, 256>>>(m, 1000);
	P(cudaDeviceSynchronize());
	int bad = 0;
	for (int i = 0; i < 1000; i++)
		bad += m[i] != 2 * i;
	printf("  bad elements = %d\n", bad);
	cudaDeviceProp p;
	P(cudaGetDeviceProperties(&p, 0));
	printf("  managedMemory = %d concurrentManagedAccess = %d\n", p.managedMemory,
	       p.concurrentManagedAccess);
	P(cudaFree(m));
	return 0;
}
