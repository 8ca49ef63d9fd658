// SPDX-License-Identifier: MIT
/*
 * Reductions the way the CUDA samples write them (samples/2_Concepts_and_
 * Techniques/reduction: reduce0..reduce6, the cooperative-groups and
 * warp-shuffle forms; threadFenceReduction's last-block pattern), plus
 * the atomic and multi-pass variants the field uses.  Integers, and
 * floats that hold small integers (exact in any order).
 */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

#include "corpus.h"

namespace cg = cooperative_groups;

/* reduce0: interleaved addressing with a divergent modulo */
template <class T> __global__ void reduce0(const T *g_idata, T *g_odata, unsigned int n)
{
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	sdata[tid] = (i < n) ? g_idata[i] : 0;
	__syncthreads();
	for (unsigned int s = 1; s < blockDim.x; s *= 2) {
		if ((tid % (2 * s)) == 0)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		g_odata[blockIdx.x] = sdata[0];
}

/* reduce1: interleaved addressing, contiguous threads */
template <class T> __global__ void reduce1(const T *g_idata, T *g_odata, unsigned int n)
{
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	sdata[tid] = (i < n) ? g_idata[i] : 0;
	__syncthreads();
	for (unsigned int s = 1; s < blockDim.x; s *= 2) {
		int index = 2 * s * tid;
		if (index < blockDim.x)
			sdata[index] += sdata[index + s];
		__syncthreads();
	}
	if (tid == 0)
		g_odata[blockIdx.x] = sdata[0];
}

/* reduce2: sequential addressing */
template <class T> __global__ void reduce2(const T *g_idata, T *g_odata, unsigned int n)
{
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;

	sdata[tid] = (i < n) ? g_idata[i] : 0;
	__syncthreads();
	for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		g_odata[blockIdx.x] = sdata[0];
}

/* reduce3: first add during the global load */
template <class T> __global__ void reduce3(const T *g_idata, T *g_odata, unsigned int n)
{
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
	T mySum = (i < n) ? g_idata[i] : 0;

	if (i + blockDim.x < n)
		mySum += g_idata[i + blockDim.x];
	sdata[tid] = mySum;
	__syncthreads();
	for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s)
			sdata[tid] = mySum = mySum + sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		g_odata[blockIdx.x] = mySum;
}

/* reduce4: the last warp with shuffles (cg tiles) */
template <class T, unsigned int blockSize>
__global__ void reduce4(const T *g_idata, T *g_odata, unsigned int n)
{
	cg::thread_block cta = cg::this_thread_block();
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
	T mySum = (i < n) ? g_idata[i] : 0;

	if (i + blockSize < n)
		mySum += g_idata[i + blockSize];
	sdata[tid] = mySum;
	cg::sync(cta);
	for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
		if (tid < s)
			sdata[tid] = mySum = mySum + sdata[tid + s];
		cg::sync(cta);
	}
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

/* reduce5: completely unrolled on the block size */
template <class T, unsigned int blockSize>
__global__ void reduce5(const T *g_idata, T *g_odata, unsigned int n)
{
	cg::thread_block cta = cg::this_thread_block();
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
	unsigned int tid = threadIdx.x;
	unsigned int i = blockIdx.x * (blockSize * 2) + threadIdx.x;
	T mySum = (i < n) ? g_idata[i] : 0;

	if (i + blockSize < n)
		mySum += g_idata[i + blockSize];
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

/* reduce6: multiple elements per thread, grid-stride, nIsPow2 */
template <class T, unsigned int blockSize, bool nIsPow2>
__global__ void reduce6(const T *g_idata, T *g_odata, unsigned int n)
{
	cg::thread_block cta = cg::this_thread_block();
	extern __shared__ unsigned char smem_raw[];
	T *sdata = reinterpret_cast<T *>(smem_raw);
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

/* reduce7: warp-synchronous __shfl_down_sync, warp sums in shared memory */
template <class T> __device__ __forceinline__ T warpReduceSum(unsigned int mask, T mySum)
{
	for (int offset = warpSize / 2; offset > 0; offset /= 2)
		mySum += __shfl_down_sync(mask, mySum, offset);
	return mySum;
}

template <class T, unsigned int blockSize>
__global__ void reduce7(const T *g_idata, T *g_odata, unsigned int n)
{
	__shared__ T sdata[blockSize / 32];
	unsigned int tid = threadIdx.x;
	unsigned int gridSize = blockSize * gridDim.x;
	unsigned int maskLength = (blockSize & 31);
	maskLength = (maskLength > 0) ? (32 - maskLength) : maskLength;
	const unsigned int mask = (0xffffffff) >> maskLength;
	T mySum = 0;

	for (unsigned int i = blockIdx.x * blockSize + threadIdx.x; i < n; i += gridSize)
		mySum += g_idata[i];
	mySum = warpReduceSum<T>(mask, mySum);
	if ((tid % warpSize) == 0)
		sdata[tid / warpSize] = mySum;
	__syncthreads();
	const unsigned int shmem_extent = (blockSize / warpSize) > 0 ? (blockSize / warpSize) : 1;
	/* the whole first warp takes part (lanes past the warp sums add 0):
	 * a shuffle from a lane outside its mask is undefined */
	if (tid < warpSize) {
		mySum = tid < shmem_extent ? sdata[tid] : 0;
		mySum = warpReduceSum<T>(mask, mySum);
	}
	if (tid == 0)
		g_odata[blockIdx.x] = mySum;
}

/* cg_reduce: cooperative_groups::reduce over 32-thread tiles */
template <class T> __global__ void cg_reduce(const T *in, T *out, unsigned int n)
{
	__shared__ T warp_sums[32];
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
	T v = 0;

	for (unsigned int i = block.group_index().x * block.size() + block.thread_rank(); i < n;
	     i += block.size() * gridDim.x)
		v += in[i];
	v = cg::reduce(tile, v, cg::plus<T>());
	if (tile.thread_rank() == 0)
		warp_sums[tile.meta_group_rank()] = v;
	block.sync();
	if (tile.meta_group_rank() == 0) {
		v = tile.thread_rank() < tile.meta_group_size() ? warp_sums[tile.thread_rank()] : 0;
		v = cg::reduce(tile, v, cg::plus<T>());
		if (tile.thread_rank() == 0)
			out[block.group_index().x] = v;
	}
}

/* cg max and min with cg::greater / cg::less, tiles of 16 */
__global__ void cg_minmax16(const int *in, int *outmax, int *outmin)
{
	cg::thread_block block = cg::this_thread_block();
	cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
	int v = in[blockIdx.x * blockDim.x + threadIdx.x];
	int mx = cg::reduce(tile, v, cg::greater<int>());
	int mn = cg::reduce(tile, v, cg::less<int>());

	if (tile.thread_rank() == 0) {
		unsigned int t = (blockIdx.x * blockDim.x + threadIdx.x) / 16;
		outmax[t] = mx;
		outmin[t] = mn;
	}
}

/* atomicAdd of each block's sum into one word */
__global__ void reduce_atomic(const int *in, int *out, unsigned int n)
{
	__shared__ int s;
	int v = 0;

	if (threadIdx.x == 0)
		s = 0;
	__syncthreads();
	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		v += in[i];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		atomicAdd(&s, v);
	__syncthreads();
	if (threadIdx.x == 0)
		atomicAdd(out, s);
}

/* threadFenceReduction: the last block to finish sums the partial sums */
__device__ unsigned int retirementCount = 0;

template <unsigned int blockSize>
__global__ void reduceSinglePass(const unsigned int *g_idata, unsigned int *g_partial,
				 unsigned int *g_odata, unsigned int n)
{
	__shared__ unsigned int sdata[blockSize];
	__shared__ bool amLast;
	unsigned int tid = threadIdx.x;
	unsigned int sum = 0;

	for (unsigned int i = blockIdx.x * blockSize + tid; i < n; i += blockSize * gridDim.x)
		sum += g_idata[i];
	sdata[tid] = sum;
	__syncthreads();
	for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
		if (tid < s)
			sdata[tid] += sdata[tid + s];
		__syncthreads();
	}
	if (tid == 0) {
		g_partial[blockIdx.x] = sdata[0];
		__threadfence();
		unsigned int ticket = atomicInc(&retirementCount, gridDim.x);
		amLast = (ticket == gridDim.x - 1);
	}
	__syncthreads();
	if (amLast) {
		unsigned int s2 = 0;
		for (unsigned int i = tid; i < gridDim.x; i += blockSize)
			s2 += g_partial[i];
		sdata[tid] = s2;
		__syncthreads();
		for (unsigned int s = blockSize / 2; s > 0; s >>= 1) {
			if (tid < s)
				sdata[tid] += sdata[tid + s];
			__syncthreads();
		}
		if (tid == 0) {
			g_odata[0] = sdata[0];
			retirementCount = 0;
		}
	}
}

/* f64 reduction with a 64-bit shuffle */
__global__ void reduce_double(const double *in, double *out, unsigned int n)
{
	__shared__ double ws[32];
	double v = 0;

	for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
		v += in[i];
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		ws[threadIdx.x >> 5] = v;
	__syncthreads();
	if (threadIdx.x < 32) {
		v = threadIdx.x < blockDim.x / 32 ? ws[threadIdx.x] : 0.0;
		for (int o = 16; o > 0; o >>= 1)
			v += __shfl_down_sync(0xffffffffu, v, o);
		if (threadIdx.x == 0)
			out[blockIdx.x] = v;
	}
}

/* __reduce_add_sync / __reduce_max_sync (redux.sync) */
__global__ void reduce_redux(const unsigned int *in, unsigned int *sum, unsigned int *mx,
			     unsigned int *ors)
{
	unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned int v = in[i];
	unsigned int s = __reduce_add_sync(0xffffffffu, v);
	unsigned int m = __reduce_max_sync(0xffffffffu, v);
	unsigned int o = __reduce_or_sync(0xffffffffu, v);

	if ((threadIdx.x & 31) == 0) {
		sum[i / 32] = s;
		mx[i / 32] = m;
		ors[i / 32] = o;
	}
}

/* ---- host side ---- */

template <class T> static std::vector<T> block_sums(const std::vector<T> &in, unsigned per_block)
{
	std::vector<T> out((in.size() + per_block - 1) / per_block, 0);
	for (size_t i = 0; i < in.size(); i++)
		out[i / per_block] += in[i];
	return out;
}

typedef void (*kern_t)(const int *, int *, unsigned int);

static int run_blockwise(kern_t k, unsigned threads, unsigned per_block, unsigned n)
{
	std::vector<int> h = corpus_ints<int>(n, 1234 + threads, 2000);
	for (auto &x : h)
		x -= 1000;
	unsigned blocks = (n + per_block - 1) / per_block;
	dbuf<int> din(h), dout(blocks);

	k<<<blocks, threads, threads * sizeof(int)>>>(din, dout, n);
	CHECK_LAUNCH();
	CHECK_SAME(block_sums(h, per_block), dout.get());
	return 0;
}

static int t_reduce0(void) { return run_blockwise(reduce0<int>, 256, 256, 5000); }
static int t_reduce1(void) { return run_blockwise(reduce1<int>, 128, 128, 3000); }
static int t_reduce2(void) { return run_blockwise(reduce2<int>, 256, 256, 4097); }
static int t_reduce3(void) { return run_blockwise(reduce3<int>, 128, 256, 5000); }
static int t_reduce4(void) { return run_blockwise(reduce4<int, 256>, 256, 512, 6000); }
static int t_reduce5(void) { return run_blockwise(reduce5<int, 128>, 128, 256, 6000); }

static int t_reduce5_float(void)
{
	const unsigned n = 4096, threads = 256;
	std::vector<float> h = corpus_floats(n, 77, 1000);
	dbuf<float> din(h), dout(n / 512);

	reduce5<float, 256><<<n / 512, threads, threads * sizeof(float)>>>(din, dout, n);
	CHECK_LAUNCH();
	CHECK_SAME(block_sums(h, 512), dout.get());
	return 0;
}

template <bool pow2> static int reduce6_case(unsigned n)
{
	const unsigned threads = 256, blocks = 8;
	std::vector<int> h = corpus_ints<int>(n, n, 100000);
	dbuf<int> din(h), dout(blocks);

	reduce6<int, 256, pow2><<<blocks, threads, threads * sizeof(int)>>>(din, dout, n);
	CHECK_LAUNCH();
	std::vector<int> got = dout.get(), want(blocks, 0);
	/* each block's elements: the grid-stride pattern of the kernel */
	for (unsigned b = 0; b < blocks; b++)
		for (unsigned t = 0; t < threads; t++) {
			if (pow2) {
				for (unsigned i = b * threads * 2 + t; i < n; i += threads * blocks * 2) {
					want[b] += h[i];
					if (i + threads < n)
						want[b] += h[i + threads];
				}
			} else {
				for (unsigned i = b * threads + t; i < n; i += threads * blocks)
					want[b] += h[i];
			}
		}
	CHECK_SAME(want, got);
	return 0;
}
static int t_reduce6_pow2(void) { return reduce6_case<true>(1 << 14); }
static int t_reduce6_npow2(void) { return reduce6_case<false>(10007); }

static int t_reduce7(void)
{
	const unsigned n = 9999, blocks = 6;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 5, 1u << 20);
	dbuf<unsigned> din(h), dout(blocks);

	reduce7<unsigned, 256><<<blocks, 256>>>(din, dout, n);
	CHECK_LAUNCH();
	std::vector<unsigned> got = dout.get();
	unsigned long long total = 0, gsum = 0;
	for (auto x : h)
		total += x;
	for (auto x : got)
		gsum += x;
	std::vector<unsigned> want(blocks, 0);
	for (unsigned i = 0; i < n; i++)
		want[(i / 256) % blocks] += h[i];
	CHECK_SAME(want, got);
	CHECK(total == gsum);
	return 0;
}

static int t_cg_reduce(void)
{
	const unsigned n = 20000, blocks = 7;
	std::vector<int> h = corpus_ints<int>(n, 99, 1 << 16);
	dbuf<int> din(h), dout(blocks);

	cg_reduce<int><<<blocks, 512>>>(din, dout, n);
	CHECK_LAUNCH();
	std::vector<int> want(blocks, 0);
	for (unsigned i = 0; i < n; i++)
		want[(i / 512) % blocks] += h[i];
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_cg_minmax16(void)
{
	const unsigned n = 1024;
	std::vector<int> h = corpus_ints<int>(n, 3, 1u << 31);
	for (unsigned i = 0; i < n; i += 3)
		h[i] = -h[i];
	dbuf<int> din(h), dmax(n / 16), dmin(n / 16);

	cg_minmax16<<<n / 256, 256>>>(din, dmax, dmin);
	CHECK_LAUNCH();
	std::vector<int> wmax(n / 16, INT32_MIN), wmin(n / 16, INT32_MAX);
	for (unsigned i = 0; i < n; i++) {
		wmax[i / 16] = std::max(wmax[i / 16], h[i]);
		wmin[i / 16] = std::min(wmin[i / 16], h[i]);
	}
	CHECK_SAME(wmax, dmax.get());
	CHECK_SAME(wmin, dmin.get());
	return 0;
}

static int t_reduce_atomic(void)
{
	const unsigned n = 100000;
	std::vector<int> h = corpus_ints<int>(n, 4242, 20000);
	dbuf<int> din(h), dout(1);
	int want = 0;

	dout.zero();
	reduce_atomic<<<12, 256>>>(din, dout, n);
	CHECK_LAUNCH();
	for (auto x : h)
		want += x;
	CHECK(dout.get()[0] == want);
	return 0;
}

static int t_threadfence_reduction(void)
{
	const unsigned n = 50000, blocks = 24;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 17, 1u << 24);
	dbuf<unsigned> din(h), dpart(blocks), dout(1);
	unsigned want = 0;

	for (auto x : h)
		want += x;
	for (int rep = 0; rep < 2; rep++) {
		dout.zero();
		reduceSinglePass<128><<<blocks, 128>>>(din, dpart, dout, n);
		CHECK_LAUNCH();
		CHECK(dout.get()[0] == want);
	}
	return 0;
}

static int t_reduce_double(void)
{
	const unsigned n = 3000, blocks = 3;
	corpus_rng r(8);
	std::vector<double> h(n);
	for (auto &x : h)
		x = (double)((int)r.below(1 << 30) - (1 << 29)) * 0.25;
	dbuf<double> din(h), dout(blocks);

	reduce_double<<<blocks, 256>>>(din, dout, n);
	CHECK_LAUNCH();
	std::vector<double> want(blocks, 0.0);
	for (unsigned i = 0; i < n; i++)
		want[(i / 256) % blocks] += h[i];
	CHECK_SAME(want, dout.get());
	return 0;
}

static int t_reduce_redux(void)
{
	const unsigned n = 512;
	std::vector<unsigned> h = corpus_ints<unsigned>(n, 31337, 0xffffffffu);
	dbuf<unsigned> din(h), ds(n / 32), dm(n / 32), dor(n / 32);

	reduce_redux<<<2, 256>>>(din, ds, dm, dor);
	CHECK_LAUNCH();
	std::vector<unsigned> ws(n / 32, 0), wm(n / 32, 0), wo(n / 32, 0);
	for (unsigned i = 0; i < n; i++) {
		ws[i / 32] += h[i];
		wm[i / 32] = std::max(wm[i / 32], h[i]);
		wo[i / 32] |= h[i];
	}
	CHECK_SAME(ws, ds.get());
	CHECK_SAME(wm, dm.get());
	CHECK_SAME(wo, dor.get());
	return 0;
}

CORPUS_MAIN(T(t_reduce0), T(t_reduce1), T(t_reduce2), T(t_reduce3), T(t_reduce4), T(t_reduce5),
	    T(t_reduce5_float), T(t_reduce6_pow2), T(t_reduce6_npow2), T(t_reduce7), T(t_cg_reduce),
	    T(t_cg_minmax16), T(t_reduce_atomic), T(t_threadfence_reduction), T(t_reduce_double),
	    T(t_reduce_redux))
