// SPDX-License-Identifier: MIT
/*
 * simpleCallback, after NVIDIA's sample: workloads, each on its own
 * stream (copy in, kernel, copy out), whose results a host callback
 * checks once the stream has done them (cudaStreamAddCallback, as the
 * sample does, and cudaLaunchHostFunc, its CUDA 10 replacement).  Then the
 * other direction: a host function writes mapped host memory that the
 * stream's next kernel reads, so the stream's later work follows it.
 */
#include <atomic>
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "sample.h"

struct workload {
	int id;
	int *h_data;
	int *d_data;
	cudaStream_t stream;
	bool success;
};

static const int N = 1 << 12;
static std::atomic<int> callbacks_done;

__global__ void incKernel(int *data, int N)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < N)
		data[i]++;
}

/* the stream's copy back has completed: check it */
static void CUDART_CB myStreamCallback(cudaStream_t stream, cudaError_t status, void *data)
{
	workload *w = (workload *)data;

	w->success = status == cudaSuccess;
	for (int i = 0; i < N; i++)
		w->success = w->success && w->h_data[i] == w->id + i + 1;
	callbacks_done++;
}

static void CUDART_CB myHostFunc(void *data)
{
	workload *w = (workload *)data;

	for (int i = 0; i < N; i++)
		w->success = w->success && w->h_data[i] == w->id + i + 2;
	callbacks_done++;
}

/* what the host function wrote, read by the kernel after it */
static void CUDART_CB setFlag(void *data)
{
	*(volatile int *)data = 42;
}

__global__ void readFlag(const int *flag, int *out)
{
	*out = *(volatile const int *)flag;
}

int main(void)
{
	const int nworkloads = 4;
	std::vector<workload> w(nworkloads);

	sample_begin("simpleCallback");
	for (int k = 0; k < nworkloads; k++) {
		w[k].id = 100 * k;
		w[k].success = false;
		checkCudaErrors(cudaMallocHost((void **)&w[k].h_data, N * sizeof(int)));
		checkCudaErrors(cudaMalloc((void **)&w[k].d_data, N * sizeof(int)));
		checkCudaErrors(cudaStreamCreate(&w[k].stream));
		for (int i = 0; i < N; i++)
			w[k].h_data[i] = w[k].id + i;
	}
	for (int k = 0; k < nworkloads; k++) {
		workload *p = &w[k];

		checkCudaErrors(cudaMemcpyAsync(p->d_data, p->h_data, N * sizeof(int),
						cudaMemcpyHostToDevice, p->stream));
		incKernel<<<(N + 255) / 256, 256, 0, p->stream>>>(p->d_data, N);
		checkCudaErrors(cudaGetLastError());
		checkCudaErrors(cudaMemcpyAsync(p->h_data, p->d_data, N * sizeof(int),
						cudaMemcpyDeviceToHost, p->stream));
		checkCudaErrors(cudaStreamAddCallback(p->stream, myStreamCallback, p, 0));
		/* once more, checked by a host function */
		incKernel<<<(N + 255) / 256, 256, 0, p->stream>>>(p->d_data, N);
		checkCudaErrors(cudaMemcpyAsync(p->h_data, p->d_data, N * sizeof(int),
						cudaMemcpyDeviceToHost, p->stream));
		checkCudaErrors(cudaLaunchHostFunc(p->stream, myHostFunc, p));
	}
	checkCudaErrors(cudaDeviceSynchronize());
	sampleCheck(callbacks_done == 2 * nworkloads);
	for (int k = 0; k < nworkloads; k++) {
		printf("# workload %d: %s\n", k, w[k].success ? "ok" : "wrong data");
		sampleCheck(w[k].success);
	}

	/* host function -> kernel: mapped memory the kernel reads after it */
	int *flag, *d_flag, *d_out, out = 0;
	checkCudaErrors(cudaHostAlloc((void **)&flag, sizeof(int), cudaHostAllocMapped));
	checkCudaErrors(cudaHostGetDevicePointer((void **)&d_flag, flag, 0));
	checkCudaErrors(cudaMalloc((void **)&d_out, sizeof(int)));
	*flag = 0;
	checkCudaErrors(cudaLaunchHostFunc(w[0].stream, setFlag, flag));
	readFlag<<<1, 1, 0, w[0].stream>>>(d_flag, d_out);
	checkCudaErrors(cudaMemcpyAsync(&out, d_out, sizeof(int), cudaMemcpyDeviceToHost,
					w[0].stream));
	checkCudaErrors(cudaStreamSynchronize(w[0].stream));
	sampleCheck(out == 42);

	checkCudaErrors(cudaFreeHost(flag));
	checkCudaErrors(cudaFree(d_out));
	for (int k = 0; k < nworkloads; k++) {
		checkCudaErrors(cudaStreamDestroy(w[k].stream));
		checkCudaErrors(cudaFreeHost(w[k].h_data));
		checkCudaErrors(cudaFree(w[k].d_data));
	}
	return sample_finish(true);
}
