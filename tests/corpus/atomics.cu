// SPDX-License-Identifier: MIT
/*
 * Atomics beyond 32-bit integers, the way CUDA code uses them: a
 * histogram privatised in shared memory and merged into 64-bit counters,
 * a 64-bit weighted total (carries past 32 bits), atomicAdd on double
 * (global and shared), atomicMin/atomicMax on long long and unsigned long
 * long, the classic atomicCAS loop that makes an atomic max of doubles,
 * 16-bit atomicCAS counters packed two to a word, atomicAdd on __half,
 * __half2 and __nv_bfloat16, a 64-bit bitset built with atomicOr, a
 * lock-free stack pushed with a 64-bit CAS on a tagged head, and
 * atomicExch handing a slot from thread to thread.  Every input is a
 * small integer so that each float sum is exact in any order; the host
 * computes each answer.
 */
#include <climits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "corpus.h"

#define BINS 64

__global__ void hist64(const unsigned *in, int n, unsigned long long *bins,
		       unsigned long long *weight)
{
	__shared__ unsigned int sh[BINS];

	for (int i = threadIdx.x; i < BINS; i += blockDim.x)
		sh[i] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		atomicAdd(&sh[in[i] % BINS], 1u);
		atomicAdd(weight, (unsigned long long)in[i] << 20);
	}
	__syncthreads();
	for (int i = threadIdx.x; i < BINS; i += blockDim.x)
		if (sh[i])
			atomicAdd(&bins[i], (unsigned long long)sh[i]);
}

static int t_hist64(void)
{
	const int n = 20000;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 501, 1 << 20);
	dbuf<unsigned> din(h);
	dbuf<unsigned long long> bins(BINS), weight(1);

	bins.zero();
	weight.zero();
	hist64<<<24, 256>>>(din, n, bins, weight);
	CHECK_LAUNCH();
	std::vector<unsigned long long> wb(BINS, 0), ww(1, 0);
	for (unsigned x : h) {
		wb[x % BINS]++;
		ww[0] += (unsigned long long)x << 20;
	}
	CHECK(ww[0] > 0xffffffffull);
	CHECK_SAME(wb, bins.get());
	CHECK_SAME(ww, weight.get());
	return 0;
}

/* a dot product of small integers: per-thread partials, a shared double
 * per block, one global atomicAdd(double *) per block and one per thread */
__global__ void dot_f64(const double *a, const double *b, int n, double *out)
{
	__shared__ double block_sum;
	double part = 0;

	if (threadIdx.x == 0)
		block_sum = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		part += a[i] * b[i];
	atomicAdd(&block_sum, part);
	atomicAdd(&out[1], part);
	__syncthreads();
	if (threadIdx.x == 0)
		atomicAdd(&out[0], block_sum);
}

static int t_dot_f64(void)
{
	const int n = 10000;
	std::vector<unsigned> ia = corpus_ints<unsigned>(n, 502, 2001);
	std::vector<unsigned> ib = corpus_ints<unsigned>(n, 503, 2001);
	std::vector<double> a(n), b(n);
	double want = 0;

	for (int i = 0; i < n; i++) {
		a[i] = (double)ia[i] - 1000;
		b[i] = (double)ib[i] - 1000;
		want += a[i] * b[i];
	}
	dbuf<double> da(a), db(b), out(2);
	out.zero();
	dot_f64<<<16, 128>>>(da, db, n, out);
	CHECK_LAUNCH();
	CHECK_SAME(std::vector<double>(2, want), out.get());
	return 0;
}

/* [0] max, [1] min of signed 64-bit values; [2] max, [3] min unsigned */
__global__ void minmax64(const long long *v, int n, long long *s, unsigned long long *u)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	atomicMax(&s[0], v[i]);
	atomicMin(&s[1], v[i]);
	atomicMax(&u[0], (unsigned long long)v[i]);
	atomicMin(&u[1], (unsigned long long)v[i]);
}

static int t_minmax64(void)
{
	const int n = 5000;
	std::vector<unsigned> r = corpus_ints<unsigned>(n, 504, 1 << 30);
	std::vector<long long> v(n);

	for (int i = 0; i < n; i++)
		v[i] = ((long long)r[i] - (1 << 29)) * 4000037ll;
	dbuf<long long> dv(v), s(std::vector<long long>{LLONG_MIN, LLONG_MAX});
	dbuf<unsigned long long> u(std::vector<unsigned long long>{0, ULLONG_MAX});
	minmax64<<<(n + 255) / 256, 256>>>(dv, n, s, u);
	CHECK_LAUNCH();
	std::vector<unsigned long long> uv(v.begin(), v.end());
	CHECK_SAME((std::vector<long long>{*std::max_element(v.begin(), v.end()),
					   *std::min_element(v.begin(), v.end())}),
		   s.get());
	CHECK_SAME((std::vector<unsigned long long>{*std::max_element(uv.begin(), uv.end()),
						    *std::min_element(uv.begin(), uv.end())}),
		   u.get());
	return 0;
}

/* the CUDA Programming Guide's pattern: an atomic op built from atomicCAS */
__device__ double atomic_max_double(double *addr, double val)
{
	unsigned long long *p = (unsigned long long *)addr;
	unsigned long long old = *p, assumed;

	do {
		assumed = old;
		if (__longlong_as_double(assumed) >= val)
			break;
		old = atomicCAS(p, assumed, __double_as_longlong(val));
	} while (assumed != old);
	return __longlong_as_double(old);
}

__global__ void max_double(const double *v, int n, double *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		atomic_max_double(out, v[i]);
}

static int t_cas_max_double(void)
{
	const int n = 4000;
	std::vector<unsigned> r = corpus_ints<unsigned>(n, 505, 1 << 24);
	std::vector<double> v(n);

	for (int i = 0; i < n; i++)
		v[i] = ((double)r[i] - (1 << 23)) / 64.0;
	dbuf<double> dv(v), out(std::vector<double>{-1e300});
	max_double<<<(n + 127) / 128, 128>>>(dv, n, out);
	CHECK_LAUNCH();
	CHECK_SAME(std::vector<double>{*std::max_element(v.begin(), v.end())}, out.get());
	return 0;
}

/* 16-bit counters, two to a word, each incremented with atomicCAS on its
 * own unsigned short: the neighbour must never lose a count */
__global__ void count16(const unsigned *in, int n, unsigned short *cnt, int bins)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		unsigned short *c = &cnt[in[i] % bins];
		unsigned short old = *c, assumed;

		do {
			assumed = old;
			old = atomicCAS(c, assumed, (unsigned short)(assumed + 1));
		} while (old != assumed);
	}
}

static int t_cas16_counters(void)
{
	const int n = 30000, bins = 6;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 506, 1000);
	dbuf<unsigned> din(h);
	dbuf<unsigned short> cnt(bins);

	cnt.zero();
	count16<<<20, 256>>>(din, n, cnt, bins);
	CHECK_LAUNCH();
	std::vector<unsigned short> want(bins, 0);
	for (unsigned x : h)
		want[x % bins]++;
	CHECK_SAME(want, cnt.get());
	return 0;
}

/* half-precision accumulators: every partial sum an exact integer */
__global__ void half_adds(int n, __half *h, __half2 *h2, __nv_bfloat16 *bf)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	atomicAdd(h, __float2half(1.0f));
	atomicAdd(h2, __floats2half2_rn(1.0f, 0.5f));
	if (i % 4 == 0)
		atomicAdd(bf, __float2bfloat16(1.0f));
}

static int t_half_adds(void)
{
	const int n = 1024;
	dbuf<__half> h(1);
	dbuf<__half2> h2(1);
	dbuf<__nv_bfloat16> bf(1);

	h.zero();
	h2.zero();
	bf.zero();
	half_adds<<<8, 128>>>(n, h, h2, bf);
	CHECK_LAUNCH();
	std::vector<__half> gh = h.get();
	std::vector<__half2> gh2 = h2.get();
	std::vector<__nv_bfloat16> gbf = bf.get();
	CHECK(__half2float(gh[0]) == 1024.0f);
	CHECK(__low2float(gh2[0]) == 1024.0f && __high2float(gh2[0]) == 512.0f);
	CHECK(__bfloat162float(gbf[0]) == 256.0f);
	return 0;
}

/* a bitset of 64-bit words: atomicOr sets, atomicAnd clears, atomicXor
 * flips the same bit twice (no change) */
__global__ void bitset64(const unsigned *in, int n, unsigned long long *words, int nwords)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	unsigned long long bit = 1ull << (in[i] % 64);
	unsigned long long *w = &words[(in[i] / 64) % nwords];

	atomicOr(w, bit);
	atomicXor(&words[nwords + (in[i] / 64) % nwords], bit);
	atomicXor(&words[nwords + (in[i] / 64) % nwords], bit);
	if (in[i] % 7 == 0)
		atomicAnd(&words[2 * nwords + (in[i] / 64) % nwords], ~bit);
}

static int t_bitset64(void)
{
	const int n = 3000, nwords = 40;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 507, 1 << 16);
	std::vector<unsigned long long> init(3 * nwords, 0);

	for (int k = 0; k < nwords; k++)
		init[2 * nwords + k] = ~0ull;
	dbuf<unsigned> din(h);
	dbuf<unsigned long long> words(init);
	bitset64<<<(n + 255) / 256, 256>>>(din, n, words, nwords);
	CHECK_LAUNCH();
	std::vector<unsigned long long> want = init;
	for (unsigned x : h) {
		want[(x / 64) % nwords] |= 1ull << (x % 64);
		if (x % 7 == 0)
			want[2 * nwords + (x / 64) % nwords] &= ~(1ull << (x % 64));
	}
	CHECK_SAME(want, words.get());
	return 0;
}

/* a lock-free stack: the head is {count of pushes : index of the top}
 * in one 64-bit word, pushed with atomicCAS; next[] links the nodes */
__global__ void push_all(int n, int *next, unsigned long long *head)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	unsigned long long old = atomicAdd(head, 0ull), assumed;

	do {
		assumed = old;
		next[i] = (int)(unsigned)assumed;
		__threadfence();
		old = atomicCAS(head, assumed,
				((assumed >> 32) + 1) << 32 | (unsigned)i);
	} while (old != assumed);
}

static int t_lock_free_stack(void)
{
	const int n = 2000;
	dbuf<int> next(n);
	dbuf<unsigned long long> head(std::vector<unsigned long long>{0xffffffffull});

	push_all<<<(n + 127) / 128, 128>>>(n, next, head);
	CHECK_LAUNCH();
	std::vector<int> nx = next.get();
	unsigned long long hd = head.get()[0];
	std::vector<char> seen(n, 0);
	int count = 0;

	CHECK((hd >> 32) == (unsigned long long)n);
	for (int i = (int)(unsigned)hd; i != -1; i = nx[i]) {
		CHECK(i >= 0 && i < n && !seen[i]);
		seen[i] = 1;
		count++;
	}
	CHECK(count == n);
	return 0;
}

/* atomicExch passes a slot along: the values taken out and the one left
 * are the first value and every thread's index, each exactly once */
__global__ void exch_chain(int n, unsigned long long *slot, unsigned long long *taken)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		taken[i] = atomicExch(slot, (unsigned long long)i << 33 | 1);
}

static int t_exch64(void)
{
	const int n = 1500;
	const unsigned long long first = 0xfeedfacecafebeefull;
	dbuf<unsigned long long> slot(std::vector<unsigned long long>{first}), taken(n);

	exch_chain<<<(n + 255) / 256, 256>>>(n, slot, taken);
	CHECK_LAUNCH();
	std::vector<unsigned long long> got = taken.get(), want;
	got.push_back(slot.get()[0]);
	want.push_back(first);
	for (int i = 0; i < n; i++)
		want.push_back((unsigned long long)i << 33 | 1);
	std::sort(got.begin(), got.end());
	std::sort(want.begin(), want.end());
	CHECK_SAME(want, got);
	return 0;
}

CORPUS_MAIN(T(t_hist64), T(t_dot_f64), T(t_minmax64), T(t_cas_max_double), T(t_cas16_counters),
	    T(t_half_adds), T(t_bitset64), T(t_lock_free_stack), T(t_exch64))
