// SPDX-License-Identifier: MIT
// What NVIDIA's runtime answers after a kernel fault, call by call (run on
// the accelerator machine against NVIDIA's libcudart; the log beside it).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void store(int *p, int v) { p[threadIdx.x] = v; }

#define SHOW(call) do { cudaError_t e_ = (call); \
	printf("%-44s = %d %s\n", #call, (int)e_, cudaGetErrorName(e_)); } while (0)

int main(void)
{
	int *d = nullptr;

	SHOW(cudaMalloc(&d, 16));
	store<<<1, 32>>>((int *)0x10, 1);
	SHOW(cudaPeekAtLastError());
	SHOW(cudaDeviceSynchronize());
	SHOW(cudaGetLastError());
	SHOW(cudaGetLastError());
	SHOW(cudaPeekAtLastError());
	SHOW(cudaMalloc(&d, 16));
	SHOW(cudaGetLastError());
	SHOW(cudaDeviceSynchronize());
	SHOW(cudaGetLastError());
	SHOW(cudaStreamSynchronize(0));
	SHOW(cudaDeviceReset());
	SHOW(cudaGetLastError());
	SHOW(cudaMalloc(&d, 16));
	SHOW(cudaGetLastError());
	SHOW(cudaDeviceSynchronize());
	return 0;
}
