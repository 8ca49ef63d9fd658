// SPDX-License-Identifier: MIT
/*
 * Prefix sums as the field writes them: GPU Gems 3 ch. 39 (Hillis-Steele
 * double buffer, Blelloch work-efficient with and without the
 * bank-conflict-avoiding offsets), the CUDA samples' shfl_scan (warp
 * shuffle scan, then the per-block sums added), cooperative groups'
 * inclusive_scan/exclusive_scan, a three-kernel multi-block scan and a
 * segmented scan with head flags.
 */
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>

#include "corpus.h"

namespace cg = cooperative_groups;

/* Hillis-Steele, double-buffered, exclusive (GPU Gems 3 example 39-1) */
__global__ void scan_naive(int *g_odata, const int *g_idata, int n)
{
	extern __shared__ int temp[];
	int thid = threadIdx.x;
	int pout = 0, pin = 1;

	temp[pout * n + thid] = (thid > 0) ? g_idata[thid - 1] : 0;
	__syncthreads();
	for (int offset = 1; offset < n; offset *= 2) {
		pout = 1 - pout;
		pin = 1 - pout;
		if (thid >= offset)
			temp[pout * n + thid] = temp[pin * n + thid] + temp[pin * n + thid - offset];
		else
			temp[pout * n + thid] = temp[pin * n + thid];
		__syncthreads();
	}
	g_odata[thid] = temp[pout * n + thid];
}

/* Blelloch work-efficient exclusive scan (example 39-2), two per thread */
__global__ void prescan(int *g_odata, const int *g_idata, int n)
{
	extern __shared__ int temp[];
	int thid = threadIdx.x;
	int offset = 1;

	temp[2 * thid] = g_idata[2 * thid];
	temp[2 * thid + 1] = g_idata[2 * thid + 1];
	for (int d = n >> 1; d > 0; d >>= 1) {
		__syncthreads();
		if (thid < d) {
			int ai = offset * (2 * thid + 1) - 1;
			int bi = offset * (2 * thid + 2) - 1;
			temp[bi] += temp[ai];
		}
		offset *= 2;
	}
	if (thid == 0)
		temp[n - 1] = 0;
	for (int d = 1; d < n; d *= 2) {
		offset >>= 1;
		__syncthreads();
		if (thid < d) {
			int ai = offset * (2 * thid + 1) - 1;
			int bi = offset * (2 * thid + 2) - 1;
			int t = temp[ai];
			temp[ai] = temp[bi];
			temp[bi] += t;
		}
	}
	__syncthreads();
	g_odata[2 * thid] = temp[2 * thid];
	g_odata[2 * thid + 1] = temp[2 * thid + 1];
}

/* the same with CONFLICT_FREE_OFFSET (example 39-3) */
#define NUM_BANKS 32
#define LOG_NUM_BANKS 5
#define CONFLICT_FREE_OFFSET(n) ((n) >> LOG_NUM_BANKS)

__global__ void prescan_cf(int *g_odata, const int *g_idata, int n)
{
	extern __shared__ int temp[];
	int thid = threadIdx.x;
	int offset = 1;
	int ai = thid, bi = thid + (n / 2);
	int bankOffsetA = CONFLICT_FREE_OFFSET(ai);
	int bankOffsetB = CONFLICT_FREE_OFFSET(bi);

	temp[ai + bankOffsetA] = g_idata[ai];
	temp[bi + bankOffsetB] = g_idata[bi];
	for (int d = n >> 1; d > 0; d >>= 1) {
		__syncthreads();
		if (thid < d) {
			int a = offset * (2 * thid + 1) - 1;
			int b = offset * (2 * thid + 2) - 1;
			a += CONFLICT_FREE_OFFSET(a);
			b += CONFLICT_FREE_OFFSET(b);
			temp[b] += temp[a];
		}
		offset *= 2;
	}
	if (thid == 0)
		temp[n - 1 + CONFLICT_FREE_OFFSET(n - 1)] = 0;
	for (int d = 1; d < n; d *= 2) {
		offset >>= 1;
		__syncthreads();
		if (thid < d) {
			int a = offset * (2 * thid + 1) - 1;
			int b = offset * (2 * thid + 2) - 1;
			a += CONFLICT_FREE_OFFSET(a);
			b += CONFLICT_FREE_OFFSET(b);
			int t = temp[a];
			temp[a] = temp[b];
			temp[b] += t;
		}
	}
	__syncthreads();
	g_odata[ai] = temp[ai + bankOffsetA];
	g_odata[bi] = temp[bi + bankOffsetB];
}

/* shfl_scan_test (CUDA samples shfl_scan): inclusive, per block; the
 * block's total in partial_sums */
__global__ void shfl_scan_test(int *data, int width, int *partial_sums = NULL)
{
	extern __shared__ int sums[];
	int id = ((blockIdx.x * blockDim.x) + threadIdx.x);
	int lane_id = id % warpSize;
	int warp_id = threadIdx.x / warpSize;
	int value = data[id];

#pragma unroll
	for (int i = 1; i <= width; i *= 2) {
		unsigned int mask = 0xffffffff;
		int n = __shfl_up_sync(mask, value, i, width);
		if (lane_id >= i)
			value += n;
	}
	if (threadIdx.x % warpSize == warpSize - 1)
		sums[warp_id] = value;
	__syncthreads();
	if (warp_id == 0 && lane_id < (blockDim.x / warpSize)) {
		int warp_sum = sums[lane_id];
		int mask = (1 << (blockDim.x / warpSize)) - 1;
		for (int i = 1; i <= (blockDim.x / warpSize); i *= 2) {
			int n = __shfl_up_sync(mask, warp_sum, i, (blockDim.x / warpSize));
			if (lane_id >= i)
				warp_sum += n;
		}
		sums[lane_id] = warp_sum;
	}
	__syncthreads();
	int blockSum = 0;
	if (warp_id > 0)
		blockSum = sums[warp_id - 1];
	value += blockSum;
	data[id] = value;
	if (partial_sums != NULL && threadIdx.x == blockDim.x - 1)
		partial_sums[blockIdx.x] = value;
}

/* uniform_add (shfl_scan): add the scanned block totals */
__global__ void uniform_add(int *data, int *partial_sums, int len)
{
	__shared__ int buf;
	int id = ((blockIdx.x * blockDim.x) + threadIdx.x);

	if (id > len)
		return;
	if (threadIdx.x == 0)
		buf = partial_sums[blockIdx.x];
	__syncthreads();
	data[id] += buf;
}

/* cooperative groups: warp inclusive_scan, block exclusive scan */
__global__ void cg_block_scan(const unsigned *in, unsigned *incl, unsigned *excl)
{
	__shared__ unsigned warp_tot[32];
	cg::thread_block block = cg::this_thread_block();
	auto tile = cg::tiled_partition<32>(block);
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned v = in[i];
	unsigned inc = cg::inclusive_scan(tile, v);

	if (tile.thread_rank() == 31)
		warp_tot[tile.meta_group_rank()] = inc;
	block.sync();
	if (tile.meta_group_rank() == 0) {
		unsigned t = tile.thread_rank() < tile.meta_group_size() ? warp_tot[tile.thread_rank()] : 0;
		warp_tot[tile.thread_rank()] = cg::exclusive_scan(tile, t);
	}
	block.sync();
	inc += warp_tot[tile.meta_group_rank()];
	incl[i] = inc;
	excl[i] = inc - v;
}

/* cg::inclusive_scan with bit_xor and max on tiles of 8 */
__global__ void cg_scan_ops8(const unsigned *in, unsigned *x, unsigned *m)
{
	auto tile = cg::tiled_partition<8>(cg::this_thread_block());
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	x[i] = cg::inclusive_scan(tile, in[i], cg::bit_xor<unsigned>());
	m[i] = cg::exclusive_scan(tile, in[i], cg::greater<unsigned>());
}

/* a multi-block scan in three launches: block scans, scan of sums, add */
template <int BLOCK> __global__ void scan_blocks(const int *in, int *out, int *sums, int n)
{
	__shared__ int s[BLOCK];
	int i = blockIdx.x * BLOCK + threadIdx.x;
	int v = i < n ? in[i] : 0;

	s[threadIdx.x] = v;
	__syncthreads();
	for (int off = 1; off < BLOCK; off <<= 1) {
		int t = threadIdx.x >= off ? s[threadIdx.x - off] : 0;
		__syncthreads();
		s[threadIdx.x] += t;
		__syncthreads();
	}
	if (i < n)
		out[i] = s[threadIdx.x];
	if (threadIdx.x == BLOCK - 1)
		sums[blockIdx.x] = s[threadIdx.x];
}

template <int BLOCK> __global__ void add_block_offsets(int *out, const int *scanned_sums, int n)
{
	int i = blockIdx.x * BLOCK + threadIdx.x;

	if (blockIdx.x > 0 && i < n)
		out[i] += scanned_sums[blockIdx.x - 1];
}

/* segmented inclusive scan: a head flag starts a segment (warp shuffles) */
__global__ void segmented_scan_warp(const int *in, const int *flags, int *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int lane = threadIdx.x & 31;
	int v = in[i];
	int f = flags[i] || lane == 0;
	unsigned heads = __ballot_sync(0xffffffffu, f);
	/* the lane of this segment's head: highest set bit at or below lane */
	unsigned below = heads & (0xffffffffu >> (31 - lane));
	int head = 31 - __clz(below);

	for (int off = 1; off < 32; off <<= 1) {
		int t = __shfl_up_sync(0xffffffffu, v, off);
		if (lane - off >= head)
			v += t;
	}
	out[i] = v;
}

/* stream compaction by scan: keep the odd values (warp ballot + popc) */
__global__ void compact_ballot(const int *in, int *out, int *count)
{
	__shared__ int warp_base[32];
	__shared__ int block_base;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	int keep = in[i] & 1;
	unsigned b = __ballot_sync(0xffffffffu, keep);
	int rank = __popc(b & ((1u << lane) - 1));

	if (lane == 0)
		warp_base[warp] = __popc(b);
	__syncthreads();
	if (threadIdx.x == 0) {
		int s = 0;
		for (int w = 0; w < (int)(blockDim.x >> 5); w++) {
			int c = warp_base[w];
			warp_base[w] = s;
			s += c;
		}
		block_base = atomicAdd(count, s);
	}
	__syncthreads();
	if (keep)
		out[block_base + warp_base[warp] + rank] = in[i];
}


/*
 * Single-pass scan with decoupled look-back (Merrill & Garland 2016, as
 * cub's DeviceScan does it): each CTA publishes its tile's aggregate
 * (flag 1) and, once known, its inclusive prefix (flag 2), and looks
 * back over its predecessors, spinning while one has published nothing.
 * A CTA waits for CTAs with smaller tile numbers only: with @ticket the
 * tile number is taken in arrival order (an atomic counter, as cub
 * does), so the tiles waited for have started; without it the tile is
 * blockIdx.x, which needs the device to start CTAs in order or run them
 * side by side.
 */
__global__ void scan_lookback(const int *in, int *out, volatile unsigned long long *status,
			      unsigned *counter, int n, int ticket)
{
	__shared__ int s[256];
	__shared__ int tile_s, prefix_s;
	int t = threadIdx.x;

	if (t == 0)
		tile_s = ticket ? (int)atomicAdd(counter, 1u) : (int)blockIdx.x;
	__syncthreads();
	int tile = tile_s, i = tile * 256 + t;
	s[t] = i < n ? in[i] : 0;
	__syncthreads();
	for (int off = 1; off < 256; off <<= 1) {
		int v = t >= off ? s[t - off] : 0;
		__syncthreads();
		s[t] += v;
		__syncthreads();
	}
	if (t == 0) {
		int agg = s[255], prefix = 0;

		/* flag in the high word, value in the low */
		status[tile] = (tile == 0 ? 2ull : 1ull) << 32 | (unsigned)agg;
		__threadfence();
		for (int j = tile - 1; j >= 0; j--) {
			unsigned long long w;
			while (((w = status[j]) >> 32) == 0)
				;
			prefix += (int)(unsigned)w;
			if ((w >> 32) == 2)
				break;
		}
		if (tile) {
			__threadfence();
			status[tile] = 2ull << 32 | (unsigned)(prefix + agg);
		}
		prefix_s = prefix;
	}
	__syncthreads();
	if (i < n)
		out[i] = s[t] + prefix_s;
}

/* ---- host ---- */

static std::vector<int> excl_scan(const std::vector<int> &v)
{
	std::vector<int> o(v.size());
	int s = 0;
	for (size_t i = 0; i < v.size(); i++) {
		o[i] = s;
		s += v[i];
	}
	return o;
}

static std::vector<int> incl_scan(const std::vector<int> &v)
{
	std::vector<int> o(v.size());
	int s = 0;
	for (size_t i = 0; i < v.size(); i++)
		o[i] = s += v[i];
	return o;
}

static int t_scan_naive(void)
{
	const int n = 512;
	std::vector<int> h = corpus_ints<int>(n, 11, 1000);
	dbuf<int> din(h), dout(n);

	scan_naive<<<1, n, 2 * n * sizeof(int)>>>(dout, din, n);
	CHECK_LAUNCH();
	CHECK_SAME(excl_scan(h), dout.get());
	return 0;
}

static int t_prescan(void)
{
	const int n = 1024;
	std::vector<int> h = corpus_ints<int>(n, 12, 1000);
	dbuf<int> din(h), dout(n);

	prescan<<<1, n / 2, n * sizeof(int)>>>(dout, din, n);
	CHECK_LAUNCH();
	CHECK_SAME(excl_scan(h), dout.get());
	return 0;
}

static int t_prescan_conflict_free(void)
{
	const int n = 2048;
	std::vector<int> h = corpus_ints<int>(n, 13, 1000);
	dbuf<int> din(h), dout(n);

	prescan_cf<<<1, n / 2, (n + n / NUM_BANKS) * sizeof(int)>>>(dout, din, n);
	CHECK_LAUNCH();
	CHECK_SAME(excl_scan(h), dout.get());
	return 0;
}

static int t_shfl_scan(void)
{
	const int block = 256, n = 64 * block;
	const int blocks = n / block;
	std::vector<int> h = corpus_ints<int>(n, 14, 100);
	dbuf<int> d(h), sums(blocks);

	shfl_scan_test<<<blocks, block, sizeof(int) * block / 32>>>(d, 32, sums);
	/* the partial sums themselves with one block of 64 */
	shfl_scan_test<<<1, blocks, sizeof(int) * blocks / 32>>>(sums, 32);
	uniform_add<<<blocks - 1, block>>>(d.p + block, sums, n);
	CHECK_LAUNCH();
	CHECK_SAME(incl_scan(h), d.get());
	return 0;
}

static int t_cg_block_scan(void)
{
	const int n = 2048;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 15, 1u << 20);
	dbuf<unsigned> din(h), di(n), de(n);

	cg_block_scan<<<n / 1024, 1024>>>(din, di, de);
	CHECK_LAUNCH();
	std::vector<unsigned> wi(n), we(n);
	for (int b = 0; b < n / 1024; b++) {
		unsigned s = 0;
		for (int t = 0; t < 1024; t++) {
			we[b * 1024 + t] = s;
			wi[b * 1024 + t] = s += h[b * 1024 + t];
		}
	}
	CHECK_SAME(wi, di.get());
	CHECK_SAME(we, de.get());
	return 0;
}

static int t_cg_scan_ops8(void)
{
	const int n = 256;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 16, 0xffffffffu);
	dbuf<unsigned> din(h), dx(n), dm(n);

	cg_scan_ops8<<<2, 128>>>(din, dx, dm);
	CHECK_LAUNCH();
	std::vector<unsigned> wx(n), wm(n);
	for (int g = 0; g < n; g += 8) {
		unsigned x = 0, m = 0;
		for (int j = 0; j < 8; j++) {
			/* exclusive: lane 0 gets the default-constructed value */
			wm[g + j] = m;
			m = std::max(m, h[g + j]);
			wx[g + j] = x ^= h[g + j];
		}
	}
	CHECK_SAME(wx, dx.get());
	/* cg leaves lane 0's exclusive result unspecified: compare lanes 1.. */
	std::vector<unsigned> gm = dm.get();
	for (int g = 0; g < n; g += 8)
		gm[g] = wm[g];
	CHECK_SAME(wm, gm);
	return 0;
}

static int t_scan_multiblock(void)
{
	const int n = 100000, B = 256, blocks = (n + B - 1) / B; /* 391 */
	std::vector<int> h = corpus_ints<int>(n, 17, 50);
	dbuf<int> din(h), dout(n), sums(blocks), sums_scanned(blocks), top(2);

	scan_blocks<B><<<blocks, B>>>(din, dout, sums, n);
	scan_blocks<512><<<1, 512>>>(sums, sums_scanned, top, blocks);
	add_block_offsets<B><<<blocks, B>>>(dout, sums_scanned, n);
	CHECK_LAUNCH();
	CHECK_SAME(incl_scan(h), dout.get());
	return 0;
}

static int t_segmented_scan(void)
{
	const int n = 512;
	std::vector<int> h = corpus_ints<int>(n, 18, 1000), f = corpus_ints<int>(n, 19, 6);
	for (auto &x : f)
		x = x == 0;
	dbuf<int> din(h), df(f), dout(n);

	segmented_scan_warp<<<4, 128>>>(din, df, dout);
	CHECK_LAUNCH();
	std::vector<int> want(n);
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (f[i] || i % 32 == 0)
			s = 0;
		want[i] = s += h[i];
	}
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_compact_ballot(void)
{
	const int n = 4096;
	std::vector<int> h = corpus_ints<int>(n, 20, 1 << 30);
	dbuf<int> din(h), dout(n), dcount(1);

	dcount.zero();
	compact_ballot<<<n / 256, 256>>>(din, dout, dcount);
	CHECK_LAUNCH();
	int count = dcount.get()[0];
	std::vector<int> want, got = dout.get();
	for (int x : h)
		if (x & 1)
			want.push_back(x);
	CHECK(count == (int)want.size());
	/* blocks claim their ranges in any order; within a block, in order */
	got.resize(count);
	std::vector<int> ws = want, gs = got;
	std::sort(ws.begin(), ws.end());
	std::sort(gs.begin(), gs.end());
	CHECK_SAME(ws, gs);
	return 0;
}

static int lookback_case(bool ticket)
{
	const int n = 40000, tiles = (n + 255) / 256;
	std::vector<int> h = corpus_ints<int>(n, 21, 100);
	dbuf<int> din(h), dout(n);
	dbuf<unsigned long long> status(tiles);
	dbuf<unsigned> counter(1);

	status.zero();
	counter.zero();
	scan_lookback<<<tiles, 256>>>(din, dout, status.p, counter, n, ticket);
	CHECK_LAUNCH();
	CHECK_SAME(incl_scan(h), dout.get());
	return 0;
}
static int t_scan_lookback_ticket(void) { return lookback_case(true); }
static int t_scan_lookback_blockidx(void) { return lookback_case(false); }

CORPUS_MAIN(T(t_scan_naive), T(t_prescan), T(t_prescan_conflict_free), T(t_shfl_scan),
	    T(t_cg_block_scan), T(t_cg_scan_ops8), T(t_scan_multiblock), T(t_segmented_scan),
	    T(t_compact_ballot), T(t_scan_lookback_ticket),
	    T(t_scan_lookback_blockidx))
