// SPDX-License-Identifier: MIT
/*
 * vectorAdd, as NVIDIA's CUDA sample of that name: C = A + B for 50000
 * floats, one thread an element, the result checked on the host.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#include "sample.h"

__global__ void vectorAdd(const float *A, const float *B, float *C, int numElements)
{
	int i = blockDim.x * blockIdx.x + threadIdx.x;

	if (i < numElements)
		C[i] = A[i] + B[i] + 0.0f;
}

int main(void)
{
	const int numElements = 50000;
	size_t size = numElements * sizeof(float);

	sample_begin("vectorAdd");
	float *h_A = (float *)malloc(size);
	float *h_B = (float *)malloc(size);
	float *h_C = (float *)malloc(size);
	sampleCheck(h_A && h_B && h_C);
	srand(1);
	for (int i = 0; i < numElements; ++i) {
		h_A[i] = rand() / (float)RAND_MAX;
		h_B[i] = rand() / (float)RAND_MAX;
	}

	float *d_A = NULL, *d_B = NULL, *d_C = NULL;
	checkCudaErrors(cudaMalloc((void **)&d_A, size));
	checkCudaErrors(cudaMalloc((void **)&d_B, size));
	checkCudaErrors(cudaMalloc((void **)&d_C, size));
	checkCudaErrors(cudaMemcpy(d_A, h_A, size, cudaMemcpyHostToDevice));
	checkCudaErrors(cudaMemcpy(d_B, h_B, size, cudaMemcpyHostToDevice));

	int threadsPerBlock = 256;
	int blocksPerGrid = (numElements + threadsPerBlock - 1) / threadsPerBlock;
	printf("# CUDA kernel launch with %d blocks of %d threads\n", blocksPerGrid,
	       threadsPerBlock);
	vectorAdd<<<blocksPerGrid, threadsPerBlock>>>(d_A, d_B, d_C, numElements);
	checkCudaErrors(cudaGetLastError());
	checkCudaErrors(cudaMemcpy(h_C, d_C, size, cudaMemcpyDeviceToHost));

	for (int i = 0; i < numElements; ++i)
		sampleCheck(fabs(h_A[i] + h_B[i] - h_C[i]) < 1e-5);

	checkCudaErrors(cudaFree(d_A));
	checkCudaErrors(cudaFree(d_B));
	checkCudaErrors(cudaFree(d_C));
	free(h_A);
	free(h_B);
	free(h_C);
	return sample_finish(true);
}
