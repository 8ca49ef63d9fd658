// SPDX-License-Identifier: MIT
/*
 * CUDA 12.4+'s 128-bit atomics (sm_90: crt/sm_90_rt.h), atomicCAS,
 * atomicCAS_block, atomicCAS_system, atomicExch and atomicExch_block on
 * 16-byte types, which nvcc lowers to atom.cas.b128 / atom.exch.b128 on
 * .b128 registers: a 128-bit counter CAS-incremented by every thread of
 * many blocks (its carry from the low to the high half), a pair counter
 * per block in shared memory, a lexicographic maximum of (key, payload)
 * pairs, and atomicExch handing a 16-byte slot from thread to thread in
 * global and in shared memory.  The host computes each answer.
 */
#include <algorithm>

#include "corpus.h"

struct __align__(16) pair128 {
	unsigned long long lo, hi;
};

static __device__ __host__ bool operator==(pair128 a, pair128 b)
{
	return a.lo == b.lo && a.hi == b.hi;
}

static __device__ __host__ bool operator<(pair128 a, pair128 b)
{
	return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}

/* c += k as a 128-bit integer, by a compare-and-swap loop */
__global__ void count128(unsigned __int128 *c, int rounds)
{
	unsigned k = 1 + threadIdx.x % 5;

	for (int r = 0; r < rounds; r++) {
		unsigned __int128 old = *(volatile unsigned __int128 *)c, seen;

		while ((seen = atomicCAS(c, old, old + k)) != old)
			old = seen;
	}
}

static int t_cas128_counter(void)
{
	const int blocks = 48, threads = 256, rounds = 3;
	const unsigned __int128 start = ((unsigned __int128)0x7ffffffffffffffeull << 64) |
					0xfffffffffffff000ull;
	dbuf<unsigned __int128> c(std::vector<unsigned __int128>{start});
	unsigned __int128 want = start;

	count128<<<blocks, threads>>>(c, rounds);
	CHECK_LAUNCH();
	for (int t = 0; t < threads; t++)
		want += (unsigned __int128)(1 + t % 5) * blocks * rounds;
	unsigned __int128 got = c.get()[0];
	CHECK((unsigned long long)got == (unsigned long long)want);
	CHECK((unsigned long long)(got >> 64) == (unsigned long long)(want >> 64));
	CHECK((unsigned long long)(want >> 64) == 0x7fffffffffffffffull);
	return 0;
}

/* per block, in shared memory: (number of threads, sum of their indices) */
__global__ void block_pairs(pair128 *out)
{
	__shared__ pair128 acc;

	if (threadIdx.x == 0)
		acc = pair128{0, 0};
	__syncthreads();
	pair128 old = acc, seen;
	for (;;) {
		pair128 nw{old.lo + 1, old.hi + blockIdx.x * 1000 + threadIdx.x};

		seen = atomicCAS_block(&acc, old, nw);
		if (seen == old)
			break;
		old = seen;
	}
	__syncthreads();
	if (threadIdx.x == 0)
		out[blockIdx.x] = acc;
}

static int t_cas128_block_shared(void)
{
	const int blocks = 12, threads = 192;
	dbuf<pair128> out(blocks);
	std::vector<pair128> want(blocks);

	block_pairs<<<blocks, threads>>>(out);
	CHECK_LAUNCH();
	for (int b = 0; b < blocks; b++)
		want[b] = pair128{(unsigned long long)threads,
				  (unsigned long long)threads * b * 1000 +
					  (unsigned long long)threads * (threads - 1) / 2};
	std::vector<pair128> got = out.get();
	for (int b = 0; b < blocks; b++)
		CHECK(got[b] == want[b]);
	return 0;
}

/* the lexicographic maximum of every thread's (payload, key) */
__global__ void max_pair(const pair128 *in, int n, pair128 *best)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i >= n)
		return;
	pair128 mine = in[i], old = *best;
	while (old < mine) {
		pair128 seen = atomicCAS_system(best, old, mine);

		if (seen == old)
			break;
		old = seen;
	}
}

static int t_cas128_max(void)
{
	const int n = 5000;
	std::vector<unsigned> r = corpus_ints<unsigned>(2 * n, 77, 1 << 12);
	std::vector<pair128> h(n);
	pair128 want{0, 0};

	for (int i = 0; i < n; i++) {
		h[i] = pair128{(unsigned long long)r[2 * i] << 40 | (unsigned long long)i,
			       (unsigned long long)r[2 * i + 1] << 50};
		if (want < h[i])
			want = h[i];
	}
	dbuf<pair128> din(h), best(std::vector<pair128>{pair128{0, 0}});

	max_pair<<<(n + 127) / 128, 128>>>(din, n, best);
	CHECK_LAUNCH();
	CHECK(best.get()[0] == want);
	return 0;
}

/* atomicExch passes a 16-byte slot along (global, then a block's shared
 * one): the values taken out and the one left are the first value and
 * every thread's, each exactly once */
__global__ void exch_chain128(int n, pair128 *slot, pair128 *taken, pair128 *taken_sh,
			      pair128 *left_sh)
{
	__shared__ pair128 sh;
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (threadIdx.x == 0)
		sh = pair128{~0ull, (unsigned long long)blockIdx.x};
	__syncthreads();
	if (i < n) {
		taken[i] = atomicExch(slot, pair128{(unsigned long long)i, ~(unsigned long long)i});
		taken_sh[i] = atomicExch_block(&sh, pair128{(unsigned long long)i, 7});
	}
	__syncthreads();
	if (threadIdx.x == 0)
		left_sh[blockIdx.x] = sh;
}

static int t_exch128(void)
{
	const int threads = 256, n = 1800, blocks = (n + threads - 1) / threads;
	const pair128 first{0xfeedfacecafebeefull, 0x0123456789abcdefull};
	dbuf<pair128> slot(std::vector<pair128>{first}), taken(n), taken_sh(n), left_sh(blocks);

	exch_chain128<<<blocks, threads>>>(n, slot, taken, taken_sh, left_sh);
	CHECK_LAUNCH();
	std::vector<pair128> got = taken.get(), want;
	got.push_back(slot.get()[0]);
	want.push_back(first);
	for (int i = 0; i < n; i++)
		want.push_back(pair128{(unsigned long long)i, ~(unsigned long long)i});
	std::sort(got.begin(), got.end());
	std::sort(want.begin(), want.end());
	CHECK(got.size() == want.size());
	for (size_t k = 0; k < want.size(); k++)
		CHECK(got[k] == want[k]);
	/* each block's shared slot: its first value and its threads' */
	std::vector<pair128> tsh = taken_sh.get(), lsh = left_sh.get();
	for (int b = 0; b < blocks; b++) {
		std::vector<pair128> g(lsh.begin() + b, lsh.begin() + b + 1), w;
		int lo = b * threads, hi = std::min(n, lo + threads);

		g.insert(g.end(), tsh.begin() + lo, tsh.begin() + hi);
		w.push_back(pair128{~0ull, (unsigned long long)b});
		for (int i = lo; i < hi; i++)
			w.push_back(pair128{(unsigned long long)i, 7});
		std::sort(g.begin(), g.end());
		std::sort(w.begin(), w.end());
		for (size_t k = 0; k < w.size(); k++)
			CHECK(g[k] == w[k]);
	}
	return 0;
}

CORPUS_MAIN(T(t_cas128_counter), T(t_cas128_block_shared), T(t_cas128_max), T(t_exch128))
