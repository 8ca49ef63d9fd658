// SPDX-License-Identifier: MIT
/*
 * CCCL's cub device-wide algorithms, called the documented way (a first
 * call for the temporary storage size, then the real one): DeviceReduce,
 * DeviceScan (single-pass, decoupled look-back: CTAs wait on the tile
 * states earlier CTAs publish), DeviceRadixSort (onesweep: look-back
 * too), DeviceHistogram, DeviceSelect, DevicePartition,
 * DeviceRunLengthEncode.  Each test is one algorithm (several kernels).
 */
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>

#include "corpus.h"

/* run a cub call twice: size, then work */
#define CUB_CALL(call)                                                \
	do {                                                          \
		void *d_temp_storage = nullptr;                       \
		size_t temp_storage_bytes = 0;                        \
		CHECK_OK(call);                                       \
		CHECK_OK(cudaMalloc(&d_temp_storage, temp_storage_bytes ? temp_storage_bytes : 1)); \
		cudaError_t e2_ = (call);                             \
		cudaError_t e3_ = cudaDeviceSynchronize();            \
		cudaFree(d_temp_storage);                             \
		CHECK_OK(e2_);                                        \
		CHECK_OK(e3_);                                        \
	} while (0)

static int t_device_reduce_sum(void)
{
	const int n = 100000;
	std::vector<int> h = corpus_ints<int>(n, 200, 1000);
	dbuf<int> din(h), dout(1);

	CUB_CALL(cub::DeviceReduce::Sum(d_temp_storage, temp_storage_bytes, din.p, dout.p, n));
	int want = 0;
	for (int x : h)
		want += x;
	CHECK(dout.get()[0] == want);
	return 0;
}

static int t_device_reduce_max(void)
{
	const int n = 54321;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 201, 0xffffffffu);
	dbuf<unsigned> din(h), dout(1);

	CUB_CALL(cub::DeviceReduce::Max(d_temp_storage, temp_storage_bytes, din.p, dout.p, n));
	CHECK(dout.get()[0] == *std::max_element(h.begin(), h.end()));
	return 0;
}

static int t_device_scan_inclusive(void)
{
	const int n = 70000;
	std::vector<int> h = corpus_ints<int>(n, 202, 100);
	dbuf<int> din(h), dout(n);

	CUB_CALL(cub::DeviceScan::InclusiveSum(d_temp_storage, temp_storage_bytes, din.p, dout.p, n));
	for (int i = 1; i < n; i++)
		h[i] += h[i - 1];
	CHECK_SAME(h, dout.get());
	return 0;
}

static int t_device_scan_exclusive(void)
{
	const int n = 33333;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 203, 1u << 16), want(n);
	dbuf<unsigned> din(h), dout(n);

	CUB_CALL(cub::DeviceScan::ExclusiveSum(d_temp_storage, temp_storage_bytes, din.p, dout.p, n));
	unsigned s = 0;
	for (int i = 0; i < n; i++) {
		want[i] = s;
		s += h[i];
	}
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_device_radix_sort_keys(void)
{
	const int n = 20000;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 204, 0xffffffffu);
	dbuf<unsigned> din(h), dout(n);

	CUB_CALL(cub::DeviceRadixSort::SortKeys(d_temp_storage, temp_storage_bytes, din.p, dout.p, n));
	std::sort(h.begin(), h.end());
	CHECK_SAME(h, dout.get());
	return 0;
}

static int t_device_radix_sort_pairs(void)
{
	const int n = 9000;
	std::vector<int> k = corpus_ints<int>(n, 205, 5000), v(n);
	for (int i = 0; i < n; i++)
		v[i] = i;
	dbuf<int> dk(k), dv(v), dko(n), dvo(n);

	CUB_CALL(cub::DeviceRadixSort::SortPairs(d_temp_storage, temp_storage_bytes, dk.p, dko.p, dv.p,
						 dvo.p, n));
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

static int t_device_histogram_even(void)
{
	const int n = 30000, bins = 64;
	std::vector<int> h = corpus_ints<int>(n, 206, 1280);
	dbuf<int> din(h), dh(bins);

	CUB_CALL(cub::DeviceHistogram::HistogramEven(d_temp_storage, temp_storage_bytes, din.p, dh.p,
						     bins + 1, 0, 1280, n));
	std::vector<int> want(bins, 0);
	for (int x : h)
		want[x / 20]++;
	CHECK_SAME(want, dh.get());
	return 0;
}

struct is_odd {
	__host__ __device__ bool operator()(int x) const { return x & 1; }
};

static int t_device_select_if(void)
{
	const int n = 25000;
	std::vector<int> h = corpus_ints<int>(n, 207, 1 << 20);
	dbuf<int> din(h), dout(n), dn(1);

	CUB_CALL(cub::DeviceSelect::If(d_temp_storage, temp_storage_bytes, din.p, dout.p, dn.p, n,
				       is_odd()));
	std::vector<int> want;
	for (int x : h)
		if (x & 1)
			want.push_back(x);
	int count = dn.get()[0];
	CHECK(count == (int)want.size());
	std::vector<int> got = dout.get();
	got.resize(count);
	CHECK_SAME(want, got);
	return 0;
}

static int t_device_select_unique(void)
{
	const int n = 20000;
	std::vector<int> h = corpus_ints<int>(n, 208, 4);
	dbuf<int> din(h), dout(n), dn(1);

	CUB_CALL(cub::DeviceSelect::Unique(d_temp_storage, temp_storage_bytes, din.p, dout.p, dn.p, n));
	std::vector<int> want;
	for (int i = 0; i < n; i++)
		if (i == 0 || h[i] != h[i - 1])
			want.push_back(h[i]);
	int count = dn.get()[0];
	CHECK(count == (int)want.size());
	std::vector<int> got = dout.get();
	got.resize(count);
	CHECK_SAME(want, got);
	return 0;
}

static int t_device_partition_flagged(void)
{
	const int n = 12000;
	std::vector<int> h = corpus_ints<int>(n, 209, 1 << 20);
	std::vector<char> f(n);
	for (int i = 0; i < n; i++)
		f[i] = (h[i] % 3) == 0;
	dbuf<int> din(h), dout(n), dn(1);
	dbuf<char> df(f);

	CUB_CALL(cub::DevicePartition::Flagged(d_temp_storage, temp_storage_bytes, din.p, df.p, dout.p,
					       dn.p, n));
	std::vector<int> sel, rej;
	for (int i = 0; i < n; i++)
		(f[i] ? sel : rej).push_back(h[i]);
	CHECK(dn.get()[0] == (int)sel.size());
	std::vector<int> want = sel;
	/* the rejected ones from the end, in reverse */
	want.insert(want.end(), rej.rbegin(), rej.rend());
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_device_run_length_encode(void)
{
	const int n = 15000;
	std::vector<int> h = corpus_ints<int>(n, 210, 3);
	dbuf<int> din(h), du(n), dc(n), dr(1);

	CUB_CALL(cub::DeviceRunLengthEncode::Encode(d_temp_storage, temp_storage_bytes, din.p, du.p,
						    dc.p, dr.p, n));
	std::vector<int> wu, wc;
	for (int i = 0; i < n; i++) {
		if (i == 0 || h[i] != h[i - 1]) {
			wu.push_back(h[i]);
			wc.push_back(0);
		}
		wc.back()++;
	}
	int runs = dr.get()[0];
	CHECK(runs == (int)wu.size());
	std::vector<int> gu = du.get(), gc = dc.get();
	gu.resize(runs);
	gc.resize(runs);
	CHECK_SAME(wu, gu);
	CHECK_SAME(wc, gc);
	return 0;
}

CORPUS_MAIN(T(t_device_reduce_sum), T(t_device_reduce_max), T(t_device_scan_inclusive),
	    T(t_device_scan_exclusive), T(t_device_radix_sort_keys), T(t_device_radix_sort_pairs),
	    T(t_device_histogram_even), T(t_device_select_if), T(t_device_select_unique),
	    T(t_device_partition_flagged), T(t_device_run_length_encode))
