// SPDX-License-Identifier: MIT
/*
 * Asynchronous copies into shared memory, as CUDA's programming guide
 * writes them (section "Asynchronous Data Copies"): a kernel that stages
 * each batch through cuda::memcpy_async completed on a
 * cuda::barrier<thread_scope_block>, and one that keeps a two-stage
 * cuda::pipeline full (producer_acquire/commit, consumer_wait/release) so
 * that the next batch's copy runs while this one is computed.  Both write
 * out[i] = 2 * in[i] + 1, checked on the host.
 */
#include <cstdio>
#include <vector>

#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda_runtime.h>

#include "sample.h"

namespace cg = cooperative_groups;

__device__ void compute(int *global_out, const int *shared_in)
{
	cg::thread_block block = cg::this_thread_block();

	global_out[block.thread_rank()] = 2 * shared_in[block.thread_rank()] + 1;
}

__global__ void with_barrier(int *global_out, const int *global_in, size_t batch_sz)
{
	cg::thread_block block = cg::this_thread_block();
	size_t grid_size = (size_t)gridDim.x * block.size();
	extern __shared__ int shared[];
#pragma nv_diag_suppress static_var_with_dynamic_init
	__shared__ cuda::barrier<cuda::thread_scope_block> barrier;

	if (block.thread_rank() == 0)
		init(&barrier, block.size());
	block.sync();
	for (size_t batch = 0; batch < batch_sz; ++batch) {
		size_t global_idx = block.group_index().x * block.size() + batch * grid_size;

		cuda::memcpy_async(block, shared, global_in + global_idx,
				   sizeof(int) * block.size(), barrier);
		barrier.arrive_and_wait();
		compute(global_out + global_idx, shared);
		barrier.arrive_and_wait(); /* shared is free for the next batch */
	}
}

template <size_t stages_count>
__global__ void with_staging(int *global_out, const int *global_in, size_t batch_sz)
{
	cg::thread_block block = cg::this_thread_block();
	size_t grid_size = (size_t)gridDim.x * block.size();
	extern __shared__ int shared[]; /* stages_count * block.size() ints */
	size_t shared_offset[stages_count];
#pragma nv_diag_suppress static_var_with_dynamic_init
	__shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages_count> shared_state;
	auto pipeline = cuda::make_pipeline(block, &shared_state);

	for (size_t s = 0; s < stages_count; s++)
		shared_offset[s] = s * block.size();
	auto block_batch = [&](size_t batch) -> size_t {
		return block.group_index().x * block.size() + grid_size * batch;
	};
	for (size_t compute_batch = 0, fetch_batch = 0; compute_batch < batch_sz; ++compute_batch) {
		for (; fetch_batch < batch_sz && fetch_batch < compute_batch + stages_count;
		     ++fetch_batch) {
			pipeline.producer_acquire();
			size_t shared_idx = fetch_batch % stages_count;
			cuda::memcpy_async(block, shared + shared_offset[shared_idx],
					   global_in + block_batch(fetch_batch),
					   sizeof(int) * block.size(), pipeline);
			pipeline.producer_commit();
		}
		pipeline.consumer_wait();
		compute(global_out + block_batch(compute_batch),
			shared + shared_offset[compute_batch % stages_count]);
		pipeline.consumer_release();
	}
}

static bool check(const std::vector<int> &in, const std::vector<int> &out, const char *what)
{
	for (size_t i = 0; i < in.size(); i++)
		if (out[i] != 2 * in[i] + 1) {
			printf("# %s: out[%zu] = %d, want %d\n", what, i, out[i], 2 * in[i] + 1);
			return false;
		}
	return true;
}

int main(void)
{
	const unsigned int blocks = 8, threads = 128;
	const size_t batch_sz = 6;
	const size_t n = batch_sz * blocks * threads;
	std::vector<int> in(n), out(n);

	sample_begin("memcpyAsyncPipeline");
	for (size_t i = 0; i < n; i++)
		in[i] = (int)(i * 31 % 1009) - 500;
	int *d_in, *d_out;
	checkCudaErrors(cudaMalloc(&d_in, n * sizeof(int)));
	checkCudaErrors(cudaMalloc(&d_out, n * sizeof(int)));
	checkCudaErrors(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));

	checkCudaErrors(cudaMemset(d_out, 0, n * sizeof(int)));
	with_barrier<<<blocks, threads, threads * sizeof(int)>>>(d_out, d_in, batch_sz);
	checkCudaErrors(cudaGetLastError());
	checkCudaErrors(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
	sampleCheck(check(in, out, "with_barrier"));

	checkCudaErrors(cudaMemset(d_out, 0, n * sizeof(int)));
	with_staging<2><<<blocks, threads, 2 * threads * sizeof(int)>>>(d_out, d_in, batch_sz);
	checkCudaErrors(cudaGetLastError());
	checkCudaErrors(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
	sampleCheck(check(in, out, "with_staging"));

	checkCudaErrors(cudaFree(d_in));
	checkCudaErrors(cudaFree(d_out));
	return sample_finish(true);
}
