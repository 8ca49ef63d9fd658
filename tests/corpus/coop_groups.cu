// SPDX-License-Identifier: MIT
/*
 * Cooperative groups the way the CUDA samples and the programming guide
 * use them: thread_block and tiled_partition (static and dynamic tiles,
 * shfl, any/all/ballot, meta_group_rank), coalesced_threads in divergent
 * code (warpAggregatedAtomicsCG), labeled_partition and
 * binary_partition, cg::memcpy_async + cg::wait, cluster_group (distributed shared memory,
 * cluster.sync) and block_tile_memory-free thread_block_tile<64>.
 */
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cooperative_groups/reduce.h>

#include "corpus.h"

namespace cg = cooperative_groups;

/* samples/0_Introduction/simpleCooperativeGroups: group sums of ranks */
__device__ int sumReduction(cg::thread_group g, int *x, int val)
{
	int lane = g.thread_rank();

	for (int i = g.size() / 2; i > 0; i /= 2) {
		x[lane] = val;
		g.sync();
		if (lane < i)
			val += x[lane + i];
		g.sync();
	}
	if (g.thread_rank() == 0)
		return val;
	return -1;
}

__global__ void cgkernel(int *out)
{
	cg::thread_block threadBlockGroup = cg::this_thread_block();
	int threadBlockGroupSize = threadBlockGroup.size();
	extern __shared__ int workspace[];
	int input = threadBlockGroup.thread_rank();
	int output = sumReduction(threadBlockGroup, workspace, input);

	if (threadBlockGroup.thread_rank() == 0)
		out[0] = output;
	threadBlockGroup.sync();
	cg::thread_group tiledPartition16 = cg::tiled_partition(threadBlockGroup, 16);
	int workspaceOffset = threadBlockGroup.thread_rank() - tiledPartition16.thread_rank();
	input = tiledPartition16.thread_rank();
	output = sumReduction(tiledPartition16, workspace + workspaceOffset, input);
	if (tiledPartition16.thread_rank() == 0)
		out[1 + threadBlockGroup.thread_rank() / 16] = output;
	(void)threadBlockGroupSize;
}

/* static tiles: shfl, shfl_xor, any, all, ballot, match */
__global__ void tile_collectives(const unsigned *in, unsigned *out)
{
	auto block = cg::this_thread_block();
	auto t8 = cg::tiled_partition<8>(block);
	unsigned i = block.thread_rank(), v = in[blockIdx.x * blockDim.x + i];
	unsigned *o = out + (blockIdx.x * blockDim.x + i) * 6;

	o[0] = t8.shfl(v, (t8.thread_rank() + 3) % 8);
	o[1] = t8.shfl_xor(v, 5);
	o[2] = t8.any(v & 1);
	o[3] = t8.all(v & 1);
	o[4] = t8.ballot(v & 2);
	o[5] = t8.meta_group_rank() * 100 + t8.meta_group_size();
}

/* samples warpAggregatedAtomicsCG: one atomic per coalesced group */
__device__ int atomicAggInc(int *counter)
{
	cg::coalesced_group active = cg::coalesced_threads();
	int res;

	if (active.thread_rank() == 0)
		res = atomicAdd(counter, active.size());
	return active.shfl(res, 0) + active.thread_rank();
}

__global__ void filter_arr(int *dst, int *nres, const int *src, int n)
{
	int id = threadIdx.x + blockIdx.x * blockDim.x;

	for (int i = id; i < n; i += gridDim.x * blockDim.x)
		if (src[i] > 0)
			dst[atomicAggInc(nres)] = src[i];
}

/* labeled_partition: groups by key; each group's size and sum */
__global__ void labeled(const int *keys, const int *vals, int *size, int *sum)
{
	auto warp = cg::tiled_partition<32>(cg::this_thread_block());
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	auto g = cg::labeled_partition(warp, keys[i]);

	size[i] = g.size();
	sum[i] = cg::reduce(g, vals[i], cg::plus<int>());
}

/* binary_partition: odd and even values apart */
__global__ void binary(const int *vals, int *rank, int *count)
{
	auto warp = cg::tiled_partition<32>(cg::this_thread_block());
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	auto g = cg::binary_partition(warp, vals[i] & 1);

	rank[i] = g.thread_rank();
	count[i] = g.size();
}

/* cg::memcpy_async of a tile into shared memory, cg::wait */
__global__ void cg_memcpy_async(const int *in, int *out, int n_per_block)
{
	extern __shared__ int sm[];
	auto block = cg::this_thread_block();
	const int *src = in + blockIdx.x * n_per_block;

	cg::memcpy_async(block, sm, src, sizeof(int) * n_per_block);
	cg::wait(block);
	for (int i = block.thread_rank(); i < n_per_block; i += block.size())
		out[blockIdx.x * n_per_block + i] = sm[n_per_block - 1 - i] * 3;
}

/* two stages: wait_prior<1> on the first while the second flies */
__global__ void cg_memcpy_async_stages(const int *a, const int *b, int *out, int n)
{
	extern __shared__ int sm[];
	auto block = cg::this_thread_block();

	cg::memcpy_async(block, sm, a + blockIdx.x * n, sizeof(int) * n);
	cg::memcpy_async(block, sm + n, b + blockIdx.x * n, sizeof(int) * n);
	cg::wait_prior<1>(block);
	for (int i = block.thread_rank(); i < n; i += block.size())
		out[blockIdx.x * n + i] = sm[i];
	cg::wait(block);
	block.sync();
	for (int i = block.thread_rank(); i < n; i += block.size())
		out[blockIdx.x * n + i] += sm[n + i] * 1000;
}

/* cluster_group: each CTA reads its neighbour's shared memory */
__global__ void __cluster_dims__(4, 1, 1) cluster_dsmem(int *out)
{
	__shared__ int sm[64];
	cg::cluster_group cluster = cg::this_cluster();
	unsigned rank = cluster.block_rank();

	sm[threadIdx.x] = (int)(rank * 1000 + threadIdx.x);
	cluster.sync();
	int *peer = cluster.map_shared_rank(sm, (rank + 1) % cluster.num_blocks());
	out[blockIdx.x * 64 + threadIdx.x] = peer[63 - threadIdx.x];
	cluster.sync();
}

/* cluster-wide histogram in distributed shared memory (CUDA guide) */
__global__ void __cluster_dims__(2, 1, 1) cluster_hist(int *bins, const int *input, int nbins,
							 int n)
{
	extern __shared__ int smem[];
	cg::cluster_group cluster = cg::this_cluster();
	int tid = cg::this_grid().thread_rank();
	int bins_per_block = nbins / cluster.num_blocks();

	for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
		smem[i] = 0;
	cluster.sync();
	for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
		int binid = input[i];
		int dst_block_rank = binid / bins_per_block;
		int dst_offset = binid % bins_per_block;
		int *dst_smem = cluster.map_shared_rank(smem, dst_block_rank);
		atomicAdd(dst_smem + dst_offset, 1);
	}
	cluster.sync();
	int *lbins = bins + cluster.block_rank() * bins_per_block;
	for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
		atomicAdd(&lbins[i], smem[i]);
}

/* dynamic tiles of 4 from a tile of 32 (tiled_partition of a tile) */
__global__ void nested_tiles(int *out)
{
	auto block = cg::this_thread_block();
	auto t32 = cg::tiled_partition<32>(block);
	auto t4 = cg::tiled_partition<4>(t32);
	int v = block.thread_rank();

	for (int o = 2; o > 0; o >>= 1)
		v += t4.shfl_down(v, o);
	out[block.thread_rank()] = t4.thread_rank() == 0 ? v : -(int)t4.thread_rank();
}

/* ---- host ---- */

static int t_simpleCooperativeGroups(void)
{
	dbuf<int> d(1 + 64 / 16);

	cgkernel<<<1, 64, 64 * sizeof(int)>>>(d);
	CHECK_LAUNCH();
	std::vector<int> want = {64 * 63 / 2, 120, 120, 120, 120};
	CHECK_SAME(want, d.get());
	return 0;
}

static int t_tile_collectives(void)
{
	const int n = 128;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 21, 0xffffffffu);
	dbuf<unsigned> din(h), dout(n * 6);

	tile_collectives<<<2, 64>>>(din, dout);
	CHECK_LAUNCH();
	std::vector<unsigned> want(n * 6);
	for (int i = 0; i < n; i++) {
		int g = i & ~7, r = i & 7, bt = i % 64;
		bool any = false, all = true;
		unsigned ballot = 0;
		for (int j = 0; j < 8; j++) {
			any |= h[g + j] & 1;
			all &= h[g + j] & 1;
			if (h[g + j] & 2)
				ballot |= 1u << j;
		}
		want[i * 6 + 0] = h[g + (r + 3) % 8];
		want[i * 6 + 1] = h[g + (r ^ 5)];
		want[i * 6 + 2] = any;
		want[i * 6 + 3] = all;
		want[i * 6 + 4] = ballot;
		want[i * 6 + 5] = (bt / 8) * 100 + 8;
	}
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_warpAggregatedAtomicsCG(void)
{
	const int n = 5000;
	std::vector<int> h = corpus_ints<int>(n, 22, 200);
	for (auto &x : h)
		x -= 100;
	dbuf<int> din(h), dout(n), dn(1);

	dn.zero();
	filter_arr<<<8, 128>>>(dout, dn, din, n);
	CHECK_LAUNCH();
	std::vector<int> want;
	for (int x : h)
		if (x > 0)
			want.push_back(x);
	int count = dn.get()[0];
	CHECK(count == (int)want.size());
	std::vector<int> got = dout.get();
	got.resize(count);
	std::sort(got.begin(), got.end());
	std::sort(want.begin(), want.end());
	CHECK_SAME(want, got);
	return 0;
}

static int t_labeled_partition(void)
{
	const int n = 128;
	std::vector<int> k = corpus_ints<int>(n, 23, 5), v = corpus_ints<int>(n, 24, 1000);
	dbuf<int> dk(k), dv(v), ds(n), dsum(n);

	labeled<<<2, 64>>>(dk, dv, ds, dsum);
	CHECK_LAUNCH();
	std::vector<int> ws(n), wsum(n);
	for (int i = 0; i < n; i++) {
		int w = i & ~31;
		ws[i] = wsum[i] = 0;
		for (int j = w; j < w + 32; j++)
			if (k[j] == k[i]) {
				ws[i]++;
				wsum[i] += v[j];
			}
	}
	CHECK_SAME(ws, ds.get());
	CHECK_SAME(wsum, dsum.get());
	return 0;
}

static int t_binary_partition(void)
{
	const int n = 64;
	std::vector<int> v = corpus_ints<int>(n, 25, 1000);
	dbuf<int> dv(v), dr(n), dc(n);

	binary<<<1, 64>>>(dv, dr, dc);
	CHECK_LAUNCH();
	std::vector<int> wr(n), wc(n);
	for (int i = 0; i < n; i++) {
		int w = i & ~31, r = 0, c = 0;
		for (int j = w; j < w + 32; j++)
			if ((v[j] & 1) == (v[i] & 1)) {
				c++;
				r += j < i;
			}
		wr[i] = r;
		wc[i] = c;
	}
	CHECK_SAME(wr, dr.get());
	CHECK_SAME(wc, dc.get());
	return 0;
}

static int t_cg_memcpy_async(void)
{
	const int per = 1000, blocks = 3;
	std::vector<int> h = corpus_ints<int>(per * blocks, 26, 1 << 20);
	dbuf<int> din(h), dout(per * blocks);

	cg_memcpy_async<<<blocks, 128, per * sizeof(int)>>>(din, dout, per);
	CHECK_LAUNCH();
	std::vector<int> want(per * blocks);
	for (int b = 0; b < blocks; b++)
		for (int i = 0; i < per; i++)
			want[b * per + i] = h[b * per + per - 1 - i] * 3;
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_cg_memcpy_async_stages(void)
{
	const int n = 512, blocks = 2;
	std::vector<int> a = corpus_ints<int>(n * blocks, 27, 1000), b = corpus_ints<int>(n * blocks, 28, 1000);
	dbuf<int> da(a), db(b), dout(n * blocks);

	cg_memcpy_async_stages<<<blocks, 96, 2 * n * sizeof(int)>>>(da, db, dout, n);
	CHECK_LAUNCH();
	std::vector<int> want(n * blocks);
	for (int i = 0; i < n * blocks; i++)
		want[i] = a[i] + b[i] * 1000;
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_cluster_dsmem(void)
{
	dbuf<int> d(8 * 64);

	cluster_dsmem<<<8, 64>>>(d);
	CHECK_LAUNCH();
	std::vector<int> want(8 * 64);
	for (int b = 0; b < 8; b++)
		for (int t = 0; t < 64; t++)
			want[b * 64 + t] = (int)(((b % 4 + 1) % 4) * 1000 + 63 - t);
	CHECK_SAME(want, d.get());
	return 0;
}

static int t_cluster_histogram(void)
{
	const int n = 4000, nbins = 64;
	std::vector<int> in = corpus_ints<int>(n, 30, nbins);
	dbuf<int> din(in), dbins(nbins);

	dbins.zero();
	cluster_hist<<<4, 128, nbins / 2 * sizeof(int)>>>(dbins, din, nbins, n);
	CHECK_LAUNCH();
	std::vector<int> want(nbins, 0);
	/* every cluster counts its elements into the bins of its ranks */
	for (int x : in)
		want[x]++;
	CHECK_SAME(want, dbins.get());
	return 0;
}

static int t_nested_tiles(void)
{
	dbuf<int> d(64);

	nested_tiles<<<1, 64>>>(d);
	CHECK_LAUNCH();
	std::vector<int> want(64);
	for (int i = 0; i < 64; i++)
		want[i] = i % 4 == 0 ? 4 * i + 6 : -(i % 4);
	CHECK_SAME(want, d.get());
	return 0;
}

CORPUS_MAIN(T(t_simpleCooperativeGroups), T(t_tile_collectives), T(t_warpAggregatedAtomicsCG),
	    T(t_labeled_partition), T(t_binary_partition), T(t_cg_memcpy_async),
	    T(t_cg_memcpy_async_stages), T(t_cluster_dsmem), T(t_cluster_histogram),
	    T(t_nested_tiles))
