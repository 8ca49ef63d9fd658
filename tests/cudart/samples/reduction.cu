// SPDX-License-Identifier: MIT
/*
 * reduction, after NVIDIA's sample (its reduce6): a templated kernel where
 * each thread first sums several elements (grid-stride), the block then
 * reduces in shared memory and its last warp with warp shuffles through
 * cooperative groups (thread_block, tiled_partition<32>, shfl_down,
 * cg::reduce); the per-block sums are reduced again by the same kernel
 * until one is left.  For ints (exact) and floats (within rounding), with
 * a size that is not a power of two.
 */
#include <cmath>
#include <cstdio>
#include <vector>

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include "sample.h"

namespace cg = cooperative_groups;

template <class T> struct SharedMemory {
	__device__ inline operator T *()
	{
		extern __shared__ int __smem[];
		return (T *)__smem;
	}
};

template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const T *__restrict__ g_idata, T *__restrict__ g_odata, unsigned int n)
{
	cg::thread_block cta = cg::this_thread_block();
	T *sdata = SharedMemory<T>();
	unsigned int tid = threadIdx.x;
	unsigned int gridSize = blockSize * gridDim.x;
	T mySum = 0;

	if (nIsPow2) {
		unsigned int i = blockIdx.x * blockSize * 2 + threadIdx.x;
		gridSize = gridSize << 1;
		while (i < n) {
			mySum += g_idata[i];
			if ((i + blockSize) < n)
				mySum += g_idata[i + blockSize];
			i += gridSize;
		}
	} else {
		unsigned int i = blockIdx.x * blockSize + threadIdx.x;
		while (i < n) {
			mySum += g_idata[i];
			i += gridSize;
		}
	}
	sdata[tid] = mySum;
	cg::sync(cta);

	if ((blockSize >= 512) && (tid < 256))
		sdata[tid] = mySum = mySum + sdata[tid + 256];
	cg::sync(cta);
	if ((blockSize >= 256) && (tid < 128))
		sdata[tid] = mySum = mySum + sdata[tid + 128];
	cg::sync(cta);
	if ((blockSize >= 128) && (tid < 64))
		sdata[tid] = mySum = mySum + sdata[tid + 64];
	cg::sync(cta);

	cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);
	if (cta.thread_rank() < 32) {
		if (blockSize >= 64)
			mySum += sdata[tid + 32];
		for (int offset = tile32.size() / 2; offset > 0; offset /= 2)
			mySum += tile32.shfl_down(mySum, offset);
	}
	if (cta.thread_rank() == 0)
		g_odata[blockIdx.x] = mySum;
}

/* the same sum through cg::reduce on each warp, atomically combined */
template <class T> __global__ void reduceCg(const T *in, T *out, unsigned int n)
{
	cg::thread_block cta = cg::this_thread_block();
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
	T v = 0;

	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
	     i += blockDim.x * gridDim.x)
		v += in[i];
	v = cg::reduce(tile, v, cg::plus<T>());
	if (tile.thread_rank() == 0)
		atomicAdd(out, v);
}

template <class T> static T reduce_on_device(const T *d_in, T *d_a, T *d_b, unsigned int n)
{
	const unsigned int threads = 256;
	const T *in = d_in;
	T *out = d_a;

	while (n > 1) {
		unsigned int blocks = (n + threads * 2 - 1) / (threads * 2);
		if (blocks > 64)
			blocks = 64;
		if ((n & (n - 1)) == 0)
			reduce6<T, threads, true><<<blocks, threads, threads * sizeof(T)>>>(in, out, n);
		else
			reduce6<T, threads, false><<<blocks, threads, threads * sizeof(T)>>>(in, out, n);
		checkCudaErrors(cudaGetLastError());
		n = blocks;
		in = out;
		out = out == d_a ? d_b : d_a;
	}
	T r;
	checkCudaErrors(cudaMemcpy(&r, in, sizeof(T), cudaMemcpyDeviceToHost));
	return r;
}

int main(void)
{
	const unsigned int n = (1u << 18) + 1234;

	sample_begin("reduction");
	std::vector<int> hi(n);
	std::vector<float> hf(n);
	long long want_i = 0;
	double want_f = 0;
	for (unsigned int i = 0; i < n; i++) {
		hi[i] = (int)(i * 2654435761u >> 24) - 128;
		hf[i] = (float)((i * 7919u) % 1000) / 1000.0f;
		want_i += hi[i];
		want_f += hf[i];
	}

	int *di, *dia, *dib, *dcg;
	float *df, *dfa, *dfb;
	checkCudaErrors(cudaMalloc(&di, n * sizeof(int)));
	checkCudaErrors(cudaMalloc(&dia, 64 * sizeof(int)));
	checkCudaErrors(cudaMalloc(&dib, 64 * sizeof(int)));
	checkCudaErrors(cudaMalloc(&dcg, sizeof(int)));
	checkCudaErrors(cudaMalloc(&df, n * sizeof(float)));
	checkCudaErrors(cudaMalloc(&dfa, 64 * sizeof(float)));
	checkCudaErrors(cudaMalloc(&dfb, 64 * sizeof(float)));
	checkCudaErrors(cudaMemcpy(di, hi.data(), n * sizeof(int), cudaMemcpyHostToDevice));
	checkCudaErrors(cudaMemcpy(df, hf.data(), n * sizeof(float), cudaMemcpyHostToDevice));

	int got_i = reduce_on_device(di, dia, dib, n);
	printf("# int sum: GPU %d, CPU %lld\n", got_i, want_i);
	sampleCheck(got_i == want_i);
	/* a power of two takes the other instantiation */
	long long want_p = 0;
	for (unsigned int i = 0; i < (1u << 16); i++)
		want_p += hi[i];
	int got_p = reduce_on_device(di, dia, dib, 1u << 16);
	sampleCheck(got_p == want_p);

	float got_f = reduce_on_device(df, dfa, dfb, n);
	printf("# float sum: GPU %f, CPU %f\n", got_f, want_f);
	sampleCheck(fabs(got_f - want_f) < 1e-5 * want_f + 1.0);

	checkCudaErrors(cudaMemset(dcg, 0, sizeof(int)));
	reduceCg<int><<<32, 128>>>(di, dcg, n);
	checkCudaErrors(cudaGetLastError());
	int got_cg = 0;
	checkCudaErrors(cudaMemcpy(&got_cg, dcg, sizeof(int), cudaMemcpyDeviceToHost));
	sampleCheck(got_cg == want_i);

	checkCudaErrors(cudaFree(di));
	checkCudaErrors(cudaFree(dia));
	checkCudaErrors(cudaFree(dib));
	checkCudaErrors(cudaFree(dcg));
	checkCudaErrors(cudaFree(df));
	checkCudaErrors(cudaFree(dfa));
	checkCudaErrors(cudaFree(dfb));
	return sample_finish(true);
}
