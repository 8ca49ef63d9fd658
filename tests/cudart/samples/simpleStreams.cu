// SPDX-License-Identifier: MIT
/*
 * simpleStreams, after NVIDIA's sample: an array in pinned host memory
 * initialised by a kernel in nstreams chunks, each chunk's kernel and its
 * copy back on its own stream (cudaMemcpyAsync), then everything at once
 * on the default stream; each result checked on the host, and the
 * streams' order checked by a second pass that reads what the first wrote.
 */
#include <cstdio>
#include <cstring>

#include <cuda_runtime.h>

#include "sample.h"

__global__ void init_array(int *g_data, const int *factor, int num_iterations)
{
	int idx = blockIdx.x * blockDim.x + threadIdx.x;

	for (int i = 0; i < num_iterations; i++)
		g_data[idx] += *factor;
}

static bool correct_data(const int *a, int n, int c)
{
	for (int i = 0; i < n; i++)
		if (a[i] != c) {
			printf("# element %d: %d, want %d\n", i, a[i], c);
			return false;
		}
	return true;
}

int main(void)
{
	const int nstreams = 4;
	const int nreps = 3;
	const int n = 16 * 1024;
	const int nbytes = n * sizeof(int);
	const int niterations = 5;
	int c = 5;

	sample_begin("simpleStreams");
	int *a = NULL, *d_a = NULL, *d_c = NULL;
	checkCudaErrors(cudaMallocHost((void **)&a, nbytes));
	checkCudaErrors(cudaMalloc((void **)&d_a, nbytes));
	checkCudaErrors(cudaMalloc((void **)&d_c, sizeof(int)));
	checkCudaErrors(cudaMemcpy(d_c, &c, sizeof(int), cudaMemcpyHostToDevice));

	cudaStream_t streams[nstreams];
	for (int i = 0; i < nstreams; i++)
		checkCudaErrors(cudaStreamCreate(&streams[i]));
	cudaEvent_t start_event, stop_event;
	checkCudaErrors(cudaEventCreateWithFlags(&start_event, cudaEventBlockingSync));
	checkCudaErrors(cudaEventCreateWithFlags(&stop_event, cudaEventBlockingSync));

	dim3 threads = dim3(512, 1);
	dim3 blocks = dim3(n / threads.x, 1);

	/* the whole array on the default stream, then copied back */
	checkCudaErrors(cudaMemset(d_a, 0, nbytes));
	checkCudaErrors(cudaEventRecord(start_event, 0));
	init_array<<<blocks, threads, 0, 0>>>(d_a, d_c, niterations);
	checkCudaErrors(cudaMemcpyAsync(a, d_a, nbytes, cudaMemcpyDeviceToHost, 0));
	checkCudaErrors(cudaEventRecord(stop_event, 0));
	checkCudaErrors(cudaEventSynchronize(stop_event));
	float time_memcpy;
	checkCudaErrors(cudaEventElapsedTime(&time_memcpy, start_event, stop_event));
	sampleCheck(time_memcpy >= 0.0f);
	sampleCheck(correct_data(a, n, c * niterations));

	/* nstreams chunks, nreps times: each rep adds c * niterations again */
	threads = dim3(512, 1);
	blocks = dim3(n / (nstreams * threads.x), 1);
	memset(a, 255, nbytes);
	checkCudaErrors(cudaMemset(d_a, 0, nbytes));
	checkCudaErrors(cudaEventRecord(start_event, 0));
	for (int k = 0; k < nreps; k++) {
		for (int i = 0; i < nstreams; i++)
			init_array<<<blocks, threads, 0, streams[i]>>>(d_a + i * n / nstreams, d_c,
								       niterations);
		for (int i = 0; i < nstreams; i++)
			checkCudaErrors(cudaMemcpyAsync(a + i * n / nstreams,
							d_a + i * n / nstreams,
							nbytes / nstreams, cudaMemcpyDeviceToHost,
							streams[i]));
	}
	checkCudaErrors(cudaEventRecord(stop_event, 0));
	checkCudaErrors(cudaEventSynchronize(stop_event));
	float elapsed_time;
	checkCudaErrors(cudaEventElapsedTime(&elapsed_time, start_event, stop_event));
	printf("# %d streams x %d reps: %.3f ms (non-streamed %.3f ms)\n", nstreams, nreps,
	       elapsed_time, time_memcpy);
	sampleCheck(correct_data(a, n, c * niterations * nreps));

	for (int i = 0; i < nstreams; i++)
		checkCudaErrors(cudaStreamDestroy(streams[i]));
	checkCudaErrors(cudaEventDestroy(start_event));
	checkCudaErrors(cudaEventDestroy(stop_event));
	checkCudaErrors(cudaFreeHost(a));
	checkCudaErrors(cudaFree(d_a));
	checkCudaErrors(cudaFree(d_c));
	return sample_finish(true);
}
