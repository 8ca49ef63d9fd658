// SPDX-License-Identifier: MIT
/*
 * CCCL's cub block and warp primitives as its examples and tests use
 * them (cub/examples/block/example_block_{reduce,scan,radix_sort}.cu):
 * BlockLoad/BlockStore with every algorithm, BlockReduce and BlockScan
 * with every algorithm, BlockRadixSort (keys, pairs, descending),
 * BlockExchange, BlockHistogram (sort and atomic), BlockDiscontinuity,
 * WarpReduce and WarpScan.  Each instantiation is its own kernel.
 */
#include <cub/block/block_discontinuity.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_histogram.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include "corpus.h"

/* load with LOAD, store with STORE: a copy through registers */
template <int BT, int IPT, cub::BlockLoadAlgorithm LOAD, cub::BlockStoreAlgorithm STORE, class T>
__global__ void load_store(const T *in, T *out)
{
	using Load = cub::BlockLoad<T, BT, IPT, LOAD>;
	using Store = cub::BlockStore<T, BT, IPT, STORE>;
	__shared__ union {
		typename Load::TempStorage load;
		typename Store::TempStorage store;
	} tmp;
	T items[IPT];
	int off = blockIdx.x * BT * IPT;

	Load(tmp.load).Load(in + off, items);
	__syncthreads();
	for (int i = 0; i < IPT; i++)
		items[i] = items[i] * 3 + 1;
	Store(tmp.store).Store(out + off, items);
}

template <int BT, int IPT, cub::BlockReduceAlgorithm ALG>
__global__ void block_reduce(const int *in, int *sum, int *mx)
{
	using BR = cub::BlockReduce<int, BT, ALG>;
	__shared__ typename BR::TempStorage tmp;
	int items[IPT];

	cub::LoadDirectBlocked(threadIdx.x, in + blockIdx.x * BT * IPT, items);
	int s = BR(tmp).Sum(items);
	__syncthreads();
	int m = BR(tmp).Reduce(items, cuda::maximum<>{});
	if (threadIdx.x == 0) {
		sum[blockIdx.x] = s;
		mx[blockIdx.x] = m;
	}
}

template <int BT, int IPT, cub::BlockScanAlgorithm ALG>
__global__ void block_scan(const int *in, int *incl, int *excl, int *agg)
{
	using BS = cub::BlockScan<int, BT, ALG>;
	__shared__ typename BS::TempStorage tmp;
	int items[IPT], a[IPT], e[IPT];
	int off = blockIdx.x * BT * IPT;
	int total;

	cub::LoadDirectBlocked(threadIdx.x, in + off, items);
	BS(tmp).InclusiveSum(items, a);
	__syncthreads();
	BS(tmp).ExclusiveSum(items, e, total);
	cub::StoreDirectBlocked(threadIdx.x, incl + off, a);
	cub::StoreDirectBlocked(threadIdx.x, excl + off, e);
	if (threadIdx.x == 0)
		agg[blockIdx.x] = total;
}

/* example_block_radix_sort: keys, blocked arrangement */
template <int BT, int IPT, bool DESC> __global__ void radix_sort_keys(const unsigned *in, unsigned *out)
{
	using Sort = cub::BlockRadixSort<unsigned, BT, IPT>;
	__shared__ typename Sort::TempStorage tmp;
	unsigned keys[IPT];
	int off = blockIdx.x * BT * IPT;

	cub::LoadDirectStriped<BT>(threadIdx.x, in + off, keys);
	if (DESC)
		Sort(tmp).SortDescending(keys);
	else
		Sort(tmp).Sort(keys);
	cub::StoreDirectBlocked(threadIdx.x, out + off, keys);
}

template <int BT, int IPT> __global__ void radix_sort_pairs(const int *kin, const int *vin, int *kout,
							    int *vout)
{
	using Sort = cub::BlockRadixSort<int, BT, IPT, int>;
	__shared__ typename Sort::TempStorage tmp;
	int k[IPT], v[IPT];

	cub::LoadDirectBlocked(threadIdx.x, kin, k);
	cub::LoadDirectBlocked(threadIdx.x, vin, v);
	Sort(tmp).SortBlockedToStriped(k, v);
	cub::StoreDirectStriped<BT>(threadIdx.x, kout, k);
	cub::StoreDirectStriped<BT>(threadIdx.x, vout, v);
}

template <int BT, int IPT> __global__ void exchange(const int *in, int *s2b, int *b2s)
{
	using X = cub::BlockExchange<int, BT, IPT>;
	__shared__ typename X::TempStorage tmp;
	int a[IPT], b[IPT];

	cub::LoadDirectStriped<BT>(threadIdx.x, in, a);
	X(tmp).StripedToBlocked(a);
	cub::StoreDirectBlocked(threadIdx.x, s2b, a);
	__syncthreads();
	cub::LoadDirectBlocked(threadIdx.x, in, b);
	X(tmp).BlockedToStriped(b);
	cub::StoreDirectStriped<BT>(threadIdx.x, b2s, b);
}

template <int BT, int IPT, cub::BlockHistogramAlgorithm ALG>
__global__ void histogram(const unsigned char *in, unsigned *bins)
{
	using H = cub::BlockHistogram<unsigned char, BT, IPT, 256, ALG>;
	__shared__ typename H::TempStorage tmp;
	__shared__ unsigned smem_hist[256];
	unsigned char s[IPT];

	cub::LoadDirectStriped<BT>(threadIdx.x, in + blockIdx.x * BT * IPT, s);
	H(tmp).Histogram(s, smem_hist);
	__syncthreads();
	for (int i = threadIdx.x; i < 256; i += BT)
		atomicAdd(&bins[i], smem_hist[i]);
}

template <int BT, int IPT> __global__ void discontinuity(const int *in, int *heads)
{
	using D = cub::BlockDiscontinuity<int, BT>;
	__shared__ typename D::TempStorage tmp;
	int items[IPT], flags[IPT];

	cub::LoadDirectBlocked(threadIdx.x, in, items);
	D(tmp).FlagHeads(flags, items, cuda::std::not_equal_to<>{});
	cub::StoreDirectBlocked(threadIdx.x, heads, flags);
}

template <int LOGICAL> __global__ void warp_reduce(const int *in, int *sum, int *mx)
{
	using WR = cub::WarpReduce<int, LOGICAL>;
	__shared__ typename WR::TempStorage tmp[128 / LOGICAL];
	int w = threadIdx.x / LOGICAL, v = in[threadIdx.x];
	int s = WR(tmp[w]).Sum(v);
	int m = WR(tmp[w]).Reduce(v, cuda::maximum<>{});

	if (threadIdx.x % LOGICAL == 0) {
		sum[w] = s;
		mx[w] = m;
	}
}

template <int LOGICAL> __global__ void warp_scan(const int *in, int *incl, int *excl)
{
	using WS = cub::WarpScan<int, LOGICAL>;
	__shared__ typename WS::TempStorage tmp[128 / LOGICAL];
	int w = threadIdx.x / LOGICAL, v = in[threadIdx.x], a, e;

	WS(tmp[w]).InclusiveSum(v, a);
	WS(tmp[w]).ExclusiveSum(v, e);
	incl[threadIdx.x] = a;
	excl[threadIdx.x] = e;
}

/* ---- host ---- */

template <cub::BlockLoadAlgorithm L, cub::BlockStoreAlgorithm S, class T> static int ls_case(void)
{
	const int BT = 128, IPT = 4, blocks = 3, n = BT * IPT * blocks;
	std::vector<T> h = corpus_ints<T>(n, 40 + L * 7 + S, 1 << 20);
	dbuf<T> din(h), dout(n);

	load_store<BT, IPT, L, S, T><<<blocks, BT>>>(din, dout);
	CHECK_LAUNCH();
	for (auto &x : h)
		x = x * 3 + 1;
	CHECK_SAME(h, dout.get());
	return 0;
}
static int t_load_direct(void) { return ls_case<cub::BLOCK_LOAD_DIRECT, cub::BLOCK_STORE_DIRECT, int>(); }
static int t_load_striped(void) { return ls_case<cub::BLOCK_LOAD_STRIPED, cub::BLOCK_STORE_STRIPED, int>(); }
static int t_load_vectorize(void)
{
	return ls_case<cub::BLOCK_LOAD_VECTORIZE, cub::BLOCK_STORE_VECTORIZE, int>();
}
static int t_load_transpose(void)
{
	return ls_case<cub::BLOCK_LOAD_TRANSPOSE, cub::BLOCK_STORE_TRANSPOSE, int>();
}
static int t_load_warp_transpose(void)
{
	return ls_case<cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::BLOCK_STORE_WARP_TRANSPOSE, int>();
}
static int t_load_warp_transpose_timesliced(void)
{
	return ls_case<cub::BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED,
		       cub::BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED, int>();
}
static int t_load_vectorize_u64(void)
{
	return ls_case<cub::BLOCK_LOAD_VECTORIZE, cub::BLOCK_STORE_VECTORIZE, unsigned long long>();
}
static int t_load_transpose_short(void)
{
	return ls_case<cub::BLOCK_LOAD_TRANSPOSE, cub::BLOCK_STORE_WARP_TRANSPOSE, short>();
}

template <cub::BlockReduceAlgorithm A> static int br_case(void)
{
	const int BT = 96, IPT = 3, blocks = 4, n = BT * IPT * blocks;
	std::vector<int> h = corpus_ints<int>(n, 50 + A, 1 << 20); /* sums stay below 2^31 */
	dbuf<int> din(h), ds(blocks), dm(blocks);

	block_reduce<BT, IPT, A><<<blocks, BT>>>(din, ds, dm);
	CHECK_LAUNCH();
	std::vector<int> ws(blocks, 0), wm(blocks, INT32_MIN);
	for (int i = 0; i < n; i++) {
		ws[i / (BT * IPT)] += h[i];
		wm[i / (BT * IPT)] = std::max(wm[i / (BT * IPT)], h[i]);
	}
	CHECK_SAME(ws, ds.get());
	CHECK_SAME(wm, dm.get());
	return 0;
}
static int t_block_reduce_raking(void) { return br_case<cub::BLOCK_REDUCE_RAKING>(); }
static int t_block_reduce_raking_commutative(void)
{
	return br_case<cub::BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY>();
}
static int t_block_reduce_warp_reductions(void) { return br_case<cub::BLOCK_REDUCE_WARP_REDUCTIONS>(); }

template <cub::BlockScanAlgorithm A> static int bs_case(void)
{
	const int BT = 128, IPT = 4, blocks = 2, n = BT * IPT * blocks;
	std::vector<int> h = corpus_ints<int>(n, 60 + A, 1000);
	dbuf<int> din(h), di(n), de(n), da(blocks);

	block_scan<BT, IPT, A><<<blocks, BT>>>(din, di, de, da);
	CHECK_LAUNCH();
	std::vector<int> wi(n), we(n), wa(blocks);
	for (int b = 0; b < blocks; b++) {
		int s = 0;
		for (int i = b * BT * IPT; i < (b + 1) * BT * IPT; i++) {
			we[i] = s;
			wi[i] = s += h[i];
		}
		wa[b] = s;
	}
	CHECK_SAME(wi, di.get());
	CHECK_SAME(we, de.get());
	CHECK_SAME(wa, da.get());
	return 0;
}
static int t_block_scan_raking(void) { return bs_case<cub::BLOCK_SCAN_RAKING>(); }
static int t_block_scan_raking_memoize(void) { return bs_case<cub::BLOCK_SCAN_RAKING_MEMOIZE>(); }
static int t_block_scan_warp_scans(void) { return bs_case<cub::BLOCK_SCAN_WARP_SCANS>(); }

template <int BT, int IPT, bool DESC> static int sort_case(void)
{
	const int blocks = 2, n = BT * IPT * blocks;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 70 + BT + DESC, 0xffffffffu);
	dbuf<unsigned> din(h), dout(n);

	radix_sort_keys<BT, IPT, DESC><<<blocks, BT>>>(din, dout);
	CHECK_LAUNCH();
	for (int b = 0; b < blocks; b++) {
		if (DESC)
			std::sort(h.begin() + b * BT * IPT, h.begin() + (b + 1) * BT * IPT,
				  std::greater<unsigned>());
		else
			std::sort(h.begin() + b * BT * IPT, h.begin() + (b + 1) * BT * IPT);
	}
	CHECK_SAME(h, dout.get());
	return 0;
}
static int t_radix_sort_keys_128x4(void) { return sort_case<128, 4, false>(); }
static int t_radix_sort_keys_64x8(void) { return sort_case<64, 8, false>(); }
static int t_radix_sort_keys_desc(void) { return sort_case<128, 2, true>(); }

static int t_radix_sort_pairs(void)
{
	const int BT = 64, IPT = 4, n = BT * IPT;
	std::vector<int> k = corpus_ints<int>(n, 80, 2000), v(n);
	for (auto &x : k)
		x -= 1000;
	for (int i = 0; i < n; i++)
		v[i] = i;
	dbuf<int> dk(k), dv(v), dko(n), dvo(n);

	radix_sort_pairs<BT, IPT><<<1, BT>>>(dk, dv, dko, dvo);
	CHECK_LAUNCH();
	std::vector<std::pair<int, int>> p(n);
	for (int i = 0; i < n; i++)
		p[i] = {k[i], v[i]};
	std::stable_sort(p.begin(), p.end(), [](auto a, auto b) { return a.first < b.first; });
	std::vector<int> wk(n), wv(n);
	for (int i = 0; i < n; i++) {
		wk[i] = p[i].first;
		wv[i] = p[i].second;
	}
	CHECK_SAME(wk, dko.get());
	CHECK_SAME(wv, dvo.get());
	return 0;
}

static int t_block_exchange(void)
{
	const int BT = 64, IPT = 5, n = BT * IPT;
	std::vector<int> h(n);
	for (int i = 0; i < n; i++)
		h[i] = i * 11 + 3;
	dbuf<int> din(h), ds(n), db(n);

	exchange<BT, IPT><<<1, BT>>>(din, ds, db);
	CHECK_LAUNCH();
	/* striped in, blocked out: the same order; blocked in, striped out: too */
	CHECK_SAME(h, ds.get());
	CHECK_SAME(h, db.get());
	return 0;
}

template <cub::BlockHistogramAlgorithm A> static int hist_case(void)
{
	const int BT = 128, IPT = 4, blocks = 5, n = BT * IPT * blocks;
	std::vector<unsigned char> h = corpus_ints<unsigned char>(n, 90 + A, 256);
	dbuf<unsigned char> din(h);
	dbuf<unsigned> dbins(256);

	dbins.zero();
	histogram<BT, IPT, A><<<blocks, BT>>>(din, dbins);
	CHECK_LAUNCH();
	std::vector<unsigned> want(256, 0);
	for (auto c : h)
		want[c]++;
	CHECK_SAME(want, dbins.get());
	return 0;
}
static int t_block_histogram_sort(void) { return hist_case<cub::BLOCK_HISTO_SORT>(); }
static int t_block_histogram_atomic(void) { return hist_case<cub::BLOCK_HISTO_ATOMIC>(); }

static int t_block_discontinuity(void)
{
	const int BT = 64, IPT = 4, n = BT * IPT;
	std::vector<int> h = corpus_ints<int>(n, 95, 3);
	dbuf<int> din(h), dh(n);

	discontinuity<BT, IPT><<<1, BT>>>(din, dh);
	CHECK_LAUNCH();
	std::vector<int> want(n);
	for (int i = 0; i < n; i++)
		want[i] = i == 0 || h[i] != h[i - 1];
	CHECK_SAME(want, dh.get());
	return 0;
}

template <int L> static int wr_case(void)
{
	std::vector<int> h = corpus_ints<int>(128, 100 + L, 1 << 20);
	dbuf<int> din(h), ds(128 / L), dm(128 / L);

	warp_reduce<L><<<1, 128>>>(din, ds, dm);
	CHECK_LAUNCH();
	std::vector<int> ws(128 / L, 0), wm(128 / L, INT32_MIN);
	for (int i = 0; i < 128; i++) {
		ws[i / L] += h[i];
		wm[i / L] = std::max(wm[i / L], h[i]);
	}
	CHECK_SAME(ws, ds.get());
	CHECK_SAME(wm, dm.get());
	return 0;
}
static int t_warp_reduce_32(void) { return wr_case<32>(); }
static int t_warp_reduce_16(void) { return wr_case<16>(); }

template <int L> static int ws_case(void)
{
	std::vector<int> h = corpus_ints<int>(128, 110 + L, 1000);
	dbuf<int> din(h), di(128), de(128);

	warp_scan<L><<<1, 128>>>(din, di, de);
	CHECK_LAUNCH();
	std::vector<int> wi(128), we(128);
	for (int i = 0, s = 0; i < 128; i++) {
		if (i % L == 0)
			s = 0;
		we[i] = s;
		wi[i] = s += h[i];
	}
	CHECK_SAME(wi, di.get());
	/* cub leaves lane 0's exclusive sum... 0 for sums (documented) */
	CHECK_SAME(we, de.get());
	return 0;
}
static int t_warp_scan_32(void) { return ws_case<32>(); }
static int t_warp_scan_8(void) { return ws_case<8>(); }

CORPUS_MAIN(T(t_load_direct), T(t_load_striped), T(t_load_vectorize), T(t_load_transpose),
	    T(t_load_warp_transpose), T(t_load_warp_transpose_timesliced), T(t_load_vectorize_u64),
	    T(t_load_transpose_short), T(t_block_reduce_raking), T(t_block_reduce_raking_commutative),
	    T(t_block_reduce_warp_reductions), T(t_block_scan_raking), T(t_block_scan_raking_memoize),
	    T(t_block_scan_warp_scans), T(t_radix_sort_keys_128x4), T(t_radix_sort_keys_64x8),
	    T(t_radix_sort_keys_desc), T(t_radix_sort_pairs), T(t_block_exchange),
	    T(t_block_histogram_sort), T(t_block_histogram_atomic), T(t_block_discontinuity),
	    T(t_warp_reduce_32), T(t_warp_reduce_16), T(t_warp_scan_32), T(t_warp_scan_8))
