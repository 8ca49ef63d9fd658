// SPDX-License-Identifier: MIT
/*
 * asyncAPI, after NVIDIA's sample: a copy in, a kernel and a copy out
 * issued on the default stream between two events, then the CPU counts
 * while it polls cudaEventQuery until the stop event has completed; the
 * result checked on the host, and the events' elapsed time read.
 */
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "sample.h"

__global__ void increment_kernel(int *g_data, int inc_value)
{
	int idx = blockIdx.x * blockDim.x + threadIdx.x;

	g_data[idx] = g_data[idx] + inc_value;
}

static bool correct_output(const int *data, int n, int x)
{
	for (int i = 0; i < n; i++)
		if (data[i] != x) {
			printf("# Error! data[%d] = %d, ref = %d\n", i, data[i], x);
			return false;
		}
	return true;
}

int main(void)
{
	const int n = 16 * 1024 * 1024 / 64;
	const int nbytes = n * sizeof(int);
	const int value = 26;

	sample_begin("asyncAPI");
	int *a = 0, *d_a = 0;
	checkCudaErrors(cudaMallocHost((void **)&a, nbytes));
	memset(a, 0, nbytes);
	checkCudaErrors(cudaMalloc((void **)&d_a, nbytes));
	checkCudaErrors(cudaMemset(d_a, 255, nbytes));

	dim3 threads = dim3(512, 1);
	dim3 blocks = dim3(n / threads.x, 1);
	cudaEvent_t start, stop;
	checkCudaErrors(cudaEventCreate(&start));
	checkCudaErrors(cudaEventCreate(&stop));
	/* not yet recorded: complete, as CUDA says */
	checkCudaErrors(cudaEventQuery(stop));

	checkCudaErrors(cudaDeviceSynchronize());
	checkCudaErrors(cudaEventRecord(start, 0));
	checkCudaErrors(cudaMemcpyAsync(d_a, a, nbytes, cudaMemcpyHostToDevice, 0));
	increment_kernel<<<blocks, threads, 0, 0>>>(d_a, value);
	checkCudaErrors(cudaMemcpyAsync(a, d_a, nbytes, cudaMemcpyDeviceToHost, 0));
	checkCudaErrors(cudaEventRecord(stop, 0));

	unsigned long int counter = 0;
	cudaError_t q;
	while ((q = cudaEventQuery(stop)) == cudaErrorNotReady)
		counter++;
	checkCudaErrors(q);
	float gpu_time = -1.0f;
	checkCudaErrors(cudaEventElapsedTime(&gpu_time, start, stop));
	printf("# time spent executing by the GPU: %.2f ms\n", gpu_time);
	printf("# CPU executed %lu iterations while waiting for GPU to finish\n", counter);
	sampleCheck(gpu_time >= 0.0f);
	/* the event completed: so did everything before it on the stream */
	checkCudaErrors(cudaStreamQuery(0));
	sampleCheck(correct_output(a, n, value));

	checkCudaErrors(cudaEventDestroy(start));
	checkCudaErrors(cudaEventDestroy(stop));
	checkCudaErrors(cudaFreeHost(a));
	checkCudaErrors(cudaFree(d_a));
	return sample_finish(true);
}
