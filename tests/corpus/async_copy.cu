// SPDX-License-Identifier: MIT
/*
 * libcu++'s asynchronous data movement as the CUDA programming guide and
 * the samples (globalToShmemAsyncCopy) write it: cuda::barrier with
 * arrive_and_wait and with cuda::memcpy_async, cuda::pipeline (one
 * thread block-wide pipeline of several stages; producer and consumer
 * roles), the __pipeline_memcpy_async primitives, and cuda::ptx's
 * mbarrier + cp.async.bulk wrappers with cuda::device::barrier_arrive_tx.
 */
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cuda/ptx>
#include <cuda_pipeline_primitives.h>
#include <cooperative_groups.h>

#include "corpus.h"

namespace cg = cooperative_groups;
using barrier = cuda::barrier<cuda::thread_scope_block>;

/* block barrier, two phases: neighbour exchange through shared memory */
__global__ void barrier_phases(const int *in, int *out)
{
	__shared__ int s[256];
	__shared__ barrier bar;
	auto block = cg::this_thread_block();

	if (block.thread_rank() == 0)
		init(&bar, block.size());
	block.sync();
	s[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
	bar.arrive_and_wait();
	int v = s[(threadIdx.x + 1) % blockDim.x];
	bar.arrive_and_wait();
	s[threadIdx.x] = v * 2;
	bar.arrive_and_wait();
	out[blockIdx.x * blockDim.x + threadIdx.x] = s[(threadIdx.x + blockDim.x - 1) % blockDim.x] + v;
}

/* cuda::memcpy_async with a barrier (programming guide 10.27) */
__global__ void memcpy_async_barrier(const int *global_in, int *out, int batch)
{
	extern __shared__ int sh[];
	__shared__ barrier bar;
	auto block = cg::this_thread_block();

	if (block.thread_rank() == 0)
		init(&bar, block.size());
	block.sync();
	for (int b = 0; b < 3; b++) {
		cuda::memcpy_async(block, sh, global_in + (blockIdx.x * 3 + b) * batch,
				   sizeof(int) * batch, bar);
		bar.arrive_and_wait();
		for (int i = block.thread_rank(); i < batch; i += block.size())
			out[(blockIdx.x * 3 + b) * batch + i] = sh[i] + b;
		bar.arrive_and_wait();
	}
}

/* cuda::pipeline, unified (every thread produces and consumes), 2 stages */
template <int STAGES>
__global__ void pipeline_unified(const int *in, int *out, int tiles, int tile)
{
	extern __shared__ int sh[];
	auto block = cg::this_thread_block();
	__shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, STAGES> state;
	auto pipe = cuda::make_pipeline(block, &state);
	int fetch = 0;

	for (int t = 0; t < tiles; t++) {
		for (; fetch < tiles && fetch < t + STAGES; fetch++) {
			pipe.producer_acquire();
			cuda::memcpy_async(block, sh + (fetch % STAGES) * tile,
					   in + (size_t)(blockIdx.x * tiles + fetch) * tile,
					   sizeof(int) * tile, pipe);
			pipe.producer_commit();
		}
		pipe.consumer_wait();
		for (int i = block.thread_rank(); i < tile; i += block.size())
			out[(size_t)(blockIdx.x * tiles + t) * tile + i] = sh[(t % STAGES) * tile + i] * 5;
		pipe.consumer_release();
	}
}

/* cuda::pipeline with roles: warp 0 produces, the rest consume */
__global__ void pipeline_roles(const int *in, int *out, int tiles, int tile)
{
	extern __shared__ int sh[];
	constexpr int stages = 2;
	auto block = cg::this_thread_block();
	__shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
	const bool producer = threadIdx.x < 32;
	auto role = producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer;
	auto pipe = cuda::make_pipeline(block, &state, role);

	for (int t = 0; t < tiles; t++) {
		int *buf = sh + (t % stages) * tile;
		if (producer) {
			pipe.producer_acquire();
			for (int i = threadIdx.x; i < tile; i += 32)
				cuda::memcpy_async(buf + i, in + (size_t)t * tile + i, sizeof(int), pipe);
			pipe.producer_commit();
		} else {
			pipe.consumer_wait();
			for (int i = threadIdx.x - 32; i < tile; i += blockDim.x - 32)
				out[(size_t)t * tile + i] = buf[i] + t;
			pipe.consumer_release();
		}
	}
}

/* the primitives: __pipeline_memcpy_async, commit, wait_prior */
__global__ void pipeline_primitives(const int4 *in, int4 *out)
{
	__shared__ int4 a[128], b[128];
	int i = threadIdx.x;

	__pipeline_memcpy_async(&a[i], &in[blockIdx.x * 256 + i], sizeof(int4));
	__pipeline_commit();
	__pipeline_memcpy_async(&b[i], &in[blockIdx.x * 256 + 128 + i], sizeof(int4));
	__pipeline_commit();
	__pipeline_wait_prior(1);
	int4 x = a[i];
	__pipeline_wait_prior(0);
	int4 y = b[i];
	out[blockIdx.x * 128 + i] = make_int4(x.x + y.w, x.y + y.z, x.z + y.y, x.w + y.x);
}

/* cuda::ptx: mbarrier + cp.async.bulk, with expect_tx (seed 004's TMA 1-D) */
__global__ void ptx_bulk_copy(const int *in, int *out, int n)
{
	__shared__ alignas(16) int sh[1024];
	__shared__ uint64_t mbar;
	namespace ptx = cuda::ptx;

	if (threadIdx.x == 0) {
		ptx::mbarrier_init(&mbar, 1);
		ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
	}
	__syncthreads();
	if (threadIdx.x == 0) {
		ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, sh, in + blockIdx.x * n,
				   n * sizeof(int), &mbar);
		(void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
						    &mbar, n * sizeof(int));
	}
	while (!ptx::mbarrier_try_wait_parity(&mbar, 0))
		;
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[blockIdx.x * n + i] = sh[n - 1 - i];
}

/* cuda::barrier + cuda::device::memcpy_async_tx + barrier_arrive_tx */
__global__ void barrier_arrive_tx_copy(const int *in, int *out, int n)
{
	__shared__ alignas(16) int sh[1024];
#pragma nv_diag_suppress static_var_with_dynamic_init
	__shared__ barrier bar;

	if (threadIdx.x == 0) {
		init(&bar, blockDim.x);
		cuda::device::experimental::fence_proxy_async_shared_cta();
	}
	__syncthreads();
	barrier::arrival_token token;
	if (threadIdx.x == 0) {
		cuda::device::memcpy_async_tx(sh, in + blockIdx.x * n, cuda::aligned_size_t<16>(n * sizeof(int)),
					      bar);
		token = cuda::device::barrier_arrive_tx(bar, 1, n * sizeof(int));
	} else {
		token = bar.arrive();
	}
	bar.wait(std::move(token));
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[blockIdx.x * n + i] = sh[i] ^ 0x5a5a;
}

/* ---- host ---- */

static int t_barrier_phases(void)
{
	const int B = 256, blocks = 2, n = B * blocks;
	std::vector<int> h = corpus_ints<int>(n, 300, 1 << 20);
	dbuf<int> din(h), dout(n);

	barrier_phases<<<blocks, B>>>(din, dout);
	CHECK_LAUNCH();
	std::vector<int> want(n);
	for (int b = 0; b < blocks; b++)
		for (int t = 0; t < B; t++) {
			int v = h[b * B + (t + 1) % B], pv = h[b * B + t];
			want[b * B + t] = pv * 2 + v;
		}
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_memcpy_async_barrier(void)
{
	const int batch = 500, blocks = 2, n = batch * 3 * blocks;
	std::vector<int> h = corpus_ints<int>(n, 301, 1 << 20);
	dbuf<int> din(h), dout(n);

	memcpy_async_barrier<<<blocks, 128, batch * sizeof(int)>>>(din, dout, batch);
	CHECK_LAUNCH();
	for (int i = 0; i < n; i++)
		h[i] += (i / batch) % 3;
	CHECK_SAME(h, dout.get());
	return 0;
}

static int t_pipeline_unified(void)
{
	const int tiles = 7, tile = 256, blocks = 2, n = tiles * tile * blocks;
	std::vector<int> h = corpus_ints<int>(n, 302, 1 << 20);
	dbuf<int> din(h), dout(n);

	pipeline_unified<2><<<blocks, 128, 2 * tile * sizeof(int)>>>(din, dout, tiles, tile);
	CHECK_LAUNCH();
	for (auto &x : h)
		x *= 5;
	CHECK_SAME(h, dout.get());
	return 0;
}

static int t_pipeline_roles(void)
{
	const int tiles = 6, tile = 300, n = tiles * tile;
	std::vector<int> h = corpus_ints<int>(n, 303, 1 << 20);
	dbuf<int> din(h), dout(n);

	pipeline_roles<<<1, 128, 2 * tile * sizeof(int)>>>(din, dout, tiles, tile);
	CHECK_LAUNCH();
	for (int i = 0; i < n; i++)
		h[i] += i / tile;
	CHECK_SAME(h, dout.get());
	return 0;
}

static int t_pipeline_primitives(void)
{
	const int blocks = 2;
	std::vector<int> h = corpus_ints<int>(blocks * 256 * 4, 304, 1 << 20);
	dbuf<int> din(h), dout(blocks * 128 * 4);

	pipeline_primitives<<<blocks, 128>>>((const int4 *)din.p, (int4 *)dout.p);
	CHECK_LAUNCH();
	std::vector<int> want(blocks * 128 * 4);
	for (int b = 0; b < blocks; b++)
		for (int i = 0; i < 128; i++) {
			const int *x = &h[(b * 256 + i) * 4], *y = &h[(b * 256 + 128 + i) * 4];
			int *o = &want[(b * 128 + i) * 4];
			o[0] = x[0] + y[3];
			o[1] = x[1] + y[2];
			o[2] = x[2] + y[1];
			o[3] = x[3] + y[0];
		}
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_ptx_bulk_copy(void)
{
	const int n = 1000, blocks = 3;
	std::vector<int> h = corpus_ints<int>(n * blocks, 305, 1 << 20);
	dbuf<int> din(h), dout(n * blocks);

	ptx_bulk_copy<<<blocks, 128>>>(din, dout, n);
	CHECK_LAUNCH();
	std::vector<int> want(n * blocks);
	for (int b = 0; b < blocks; b++)
		for (int i = 0; i < n; i++)
			want[b * n + i] = h[b * n + n - 1 - i];
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_barrier_arrive_tx(void)
{
	const int n = 512, blocks = 2;
	std::vector<int> h = corpus_ints<int>(n * blocks, 306, 1 << 20);
	dbuf<int> din(h), dout(n * blocks);

	barrier_arrive_tx_copy<<<blocks, 96>>>(din, dout, n);
	CHECK_LAUNCH();
	for (auto &x : h)
		x ^= 0x5a5a;
	CHECK_SAME(h, dout.get());
	return 0;
}

CORPUS_MAIN(T(t_barrier_phases), T(t_memcpy_async_barrier), T(t_pipeline_unified),
	    T(t_pipeline_roles), T(t_pipeline_primitives), T(t_ptx_bulk_copy), T(t_barrier_arrive_tx))
