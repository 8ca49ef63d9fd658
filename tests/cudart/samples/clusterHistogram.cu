// SPDX-License-Identifier: MIT
/*
 * Distributed shared memory, as CUDA's programming guide shows it
 * (section "Distributed Shared Memory"): a histogram whose bins are
 * spread over the shared memory of a thread block cluster's CTAs.  The
 * cluster size is the kernel's (__cluster_dims__), so an ordinary <<<>>>
 * launch makes clusters; each thread adds its elements to whichever
 * CTA's bins hold them, through cooperative_groups' cluster.map_shared_rank,
 * and the cluster meets at cluster.sync() before and after.  A second
 * kernel passes values round each cluster's ring of CTAs.  Checked against
 * the host's histogram.
 */
#include <cstdio>
#include <vector>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "sample.h"

namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1)
	clusterHist_kernel(int *bins, const int nbins, const int bins_per_block,
			   const int *__restrict__ input, size_t array_size)
{
	extern __shared__ int smem[];
	int tid = cg::this_grid().thread_rank();
	cg::cluster_group cluster = cg::this_cluster();
	int cluster_size = cluster.dim_blocks().x;

	for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
		smem[i] = 0;
	/* every CTA's bins are zero before any CTA adds to them */
	cluster.sync();
	for (size_t i = tid; i < array_size; i += blockDim.x * gridDim.x) {
		int ldata = input[i];
		int binid = ldata;

		if (ldata < 0)
			binid = 0;
		else if (ldata >= nbins)
			binid = nbins - 1;
		int dst_block_rank = (int)(binid / bins_per_block);
		int dst_offset = binid % bins_per_block;
		int *dst_smem = cluster.map_shared_rank(smem, dst_block_rank);
		atomicAdd(dst_smem + dst_offset, 1);
	}
	/* no CTA leaves while others may still add to its bins */
	cluster.sync();
	int *lbins = bins + cluster.block_rank() * bins_per_block;
	for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
		atomicAdd(&lbins[i], smem[i]);
	(void)cluster_size;
}

/* each CTA reads its right neighbour's value in the cluster */
__global__ void __cluster_dims__(4, 1, 1) clusterRing_kernel(unsigned int *out)
{
	__shared__ unsigned int mine;
	cg::cluster_group cluster = cg::this_cluster();
	unsigned int rank = cluster.block_rank(), n = cluster.num_blocks();

	if (threadIdx.x == 0)
		mine = 1000 + blockIdx.x;
	cluster.sync();
	unsigned int *peer = cluster.map_shared_rank(&mine, (rank + 1) % n);
	unsigned int got = *peer;
	cluster.sync();
	if (threadIdx.x == 0) {
		out[3 * blockIdx.x] = rank;
		out[3 * blockIdx.x + 1] = n;
		out[3 * blockIdx.x + 2] = got;
	}
}

int main(void)
{
	const int nbins = 64, cluster_size = 2, bins_per_block = nbins / cluster_size;
	const size_t array_size = 20000;
	const int threads = 128, blocks = 8;

	sample_begin("clusterHistogram");
	std::vector<int> input(array_size), want(nbins, 0), got(nbins, 0);
	for (size_t i = 0; i < array_size; i++) {
		input[i] = (int)((i * 2654435761u) % 80) - 8; /* some below 0, some past nbins */
		int b = input[i] < 0 ? 0 : input[i] >= nbins ? nbins - 1 : input[i];
		want[b]++;
	}
	int *d_input, *d_bins;
	checkCudaErrors(cudaMalloc(&d_input, array_size * sizeof(int)));
	checkCudaErrors(cudaMalloc(&d_bins, nbins * sizeof(int)));
	checkCudaErrors(cudaMemcpy(d_input, input.data(), array_size * sizeof(int),
				   cudaMemcpyHostToDevice));
	checkCudaErrors(cudaMemset(d_bins, 0, nbins * sizeof(int)));
	clusterHist_kernel<<<blocks, threads, bins_per_block * sizeof(int)>>>(
		d_bins, nbins, bins_per_block, d_input, array_size);
	checkCudaErrors(cudaGetLastError());
	checkCudaErrors(cudaMemcpy(got.data(), d_bins, nbins * sizeof(int),
				   cudaMemcpyDeviceToHost));
	/* every cluster added its elements to bins 0..nbins-1 once */
	for (int b = 0; b < nbins; b++) {
		if (got[b] != want[b])
			printf("# bin %d: %d, want %d\n", b, got[b], want[b]);
		sampleCheck(got[b] == want[b]);
	}

	const int ring_blocks = 8;
	unsigned int *d_out, out[3 * ring_blocks];
	checkCudaErrors(cudaMalloc(&d_out, sizeof(out)));
	clusterRing_kernel<<<ring_blocks, 64>>>(d_out);
	checkCudaErrors(cudaGetLastError());
	checkCudaErrors(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
	for (int b = 0; b < ring_blocks; b++) {
		unsigned int rank = b % 4, right = b - rank + (rank + 1) % 4;

		sampleCheck(out[3 * b] == rank);
		sampleCheck(out[3 * b + 1] == 4);
		sampleCheck(out[3 * b + 2] == 1000 + right);
	}

	checkCudaErrors(cudaFree(d_input));
	checkCudaErrors(cudaFree(d_bins));
	checkCudaErrors(cudaFree(d_out));
	return sample_finish(true);
}
