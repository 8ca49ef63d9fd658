// SPDX-License-Identifier: MIT
/*
 * vectorAdd: a CUDA runtime-API program, written as for NVIDIA's GPUs,
 * that runs on vGPU.  Build it with the machine's nvcc, linked against
 * the shared CUDA runtime and with the kernel's PTX embedded (vGPU
 * compiles PTX; it cannot run NVIDIA's SASS):
 *
 *   nvcc -cudart shared -gencode 'arch=compute_90a,code=[sm_90a,compute_90a]' \
 *        -o vectorAdd examples/cuda/vectorAdd.cu
 *
 * and run it with vGPU's libcudart.so.13 first on the library path (build/
 * in the tree, $(LIBDIR)/vgpu-cuda once installed):
 *
 *   LD_LIBRARY_PATH=build ./vectorAdd
 *
 * With no vgpu device (no guest), the kernel runs on the in-process
 * simulator.  Prints "Test PASSED" when every element is right.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

#define CHECK(call)                                                                    \
	do {                                                                           \
		cudaError_t err = (call);                                              \
		if (err != cudaSuccess) {                                              \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,   \
				cudaGetErrorString(err));                              \
			exit(EXIT_FAILURE);                                            \
		}                                                                      \
	} while (0)

__global__ void vectorAdd(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main(void)
{
	const int n = 50000;
	size_t bytes = n * sizeof(float);
	float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
	float *da, *db, *dc;
	cudaDeviceProp prop;

	CHECK(cudaGetDeviceProperties(&prop, 0));
	printf("Device 0: %s\n", prop.name);
	for (int i = 0; i < n; i++) {
		a[i] = rand() / (float)RAND_MAX;
		b[i] = rand() / (float)RAND_MAX;
	}
	CHECK(cudaMalloc(&da, bytes));
	CHECK(cudaMalloc(&db, bytes));
	CHECK(cudaMalloc(&dc, bytes));
	CHECK(cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice));

	int threads = 256, blocks = (n + threads - 1) / threads;
	printf("CUDA kernel launch with %d blocks of %d threads\n", blocks, threads);
	vectorAdd<<<blocks, threads>>>(da, db, dc, n);
	CHECK(cudaGetLastError());
	CHECK(cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost));

	for (int i = 0; i < n; i++) {
		if (fabsf(a[i] + b[i] - c[i]) > 1e-5f) {
			fprintf(stderr, "Result verification failed at element %d\n", i);
			return EXIT_FAILURE;
		}
	}
	CHECK(cudaFree(da));
	CHECK(cudaFree(db));
	CHECK(cudaFree(dc));
	free(a);
	free(b);
	free(c);
	printf("Test PASSED\n");
	return 0;
}
