// SPDX-License-Identifier: MIT
/*
 * TMA reductions (cp.reduce.async.bulk.tensor through
 * cuda::ptx::cp_reduce_async_bulk_tensor, as CUTLASS's SM90_TMA_REDUCE_ADD
 * issues it): a split-K GEMM whose CTAs each reduce their partial C tile
 * into C with TMA add (the epilogue of a split-K / stream-K kernel, C
 * starting as the bias, tiles at the matrix's edges partly out of
 * bounds); a histogram whose CTAs count into shared memory and add their
 * bins into the global one; every integer operation (.min .max .inc .dec
 * .and .or .xor, u32 and s32 maps) on boxes inside the tensor; the
 * halves' .add/.min/.max with NaNs; a 3-D box.  The tensor maps come from
 * cuTensorMapEncodeTiled (the driver entry point); expected values from
 * the host, exact (integers, and halves of small binary fractions).
 */
#include <cuda.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <cuda/ptx>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "corpus.h"

namespace ptx = cuda::ptx;

/* ---- host: maps ---- */

static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled(void)
{
	cudaDriverEntryPointQueryResult q;
	void *fn = nullptr;

	if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
					     &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
		return nullptr;
	return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

/* a rank-@rank tensor of @type at @p: dims[0] fastest, dense; box @box */
static bool make_map(CUtensorMap *map, CUtensorMapDataType type, size_t esize, void *p, int rank,
		     const cuuint64_t *dims, const cuuint32_t *box)
{
	auto encode = encode_tiled();
	cuuint64_t stride[4];
	cuuint32_t elem[5] = { 1, 1, 1, 1, 1 };
	cuuint64_t s = esize;

	for (int d = 0; d + 1 < rank; d++) {
		s *= dims[d];
		stride[d] = s;
	}
	return encode &&
	       encode(map, type, (cuuint32_t)rank, p, dims, stride, box, elem,
		      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
		      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

/* thread 0: the reduction @op of the 2-D box at @src into the map at (x, y), then wait */
template <class Op>
__device__ static void reduce_2d(Op op, const CUtensorMap *map, int x, int y, const void *src)
{
	ptx::fence_proxy_async(ptx::space_shared); /* the threads' writes, to the async proxy */
	__syncthreads();
	if (threadIdx.x == 0) {
		int32_t c[2] = { x, y };

		ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, op, map, c, src);
		ptx::cp_async_bulk_commit_group();
		ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
	}
}

/* ---- split-K GEMM, the epilogue reducing with TMA add ---- */

enum { BM = 16, BN = 32, SPLITK = 4 };

__global__ void __launch_bounds__(128) splitk_gemm(const __grid_constant__ CUtensorMap map_c,
						   const float *a, const float *b, int m, int n, int k)
{
	__shared__ alignas(128) float tile[BM][BN];
	int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, k0 = blockIdx.z * (k / SPLITK);

	for (int i = threadIdx.x; i < BM * BN; i += blockDim.x) {
		int r = i / BN, c = i % BN, row = m0 + r, col = n0 + c;
		float s = 1e6f; /* outside C: never written */

		if (row < m && col < n) {
			s = 0;
			for (int l = k0; l < k0 + k / SPLITK; l++)
				s += a[row * k + l] * b[l * n + col];
		}
		tile[r][c] = s;
	}
	reduce_2d(ptx::op_add, &map_c, n0, m0, &tile[0][0]);
}

static int t_splitk_gemm_tma_add(void)
{
	const int M = 40, N = 72, K = 64; /* the last row and column of tiles are partial */
	std::vector<float> a(M * K), b(K * N), c(M * N);
	std::vector<int> ia = corpus_ints<int>(M * K, 410, 9), ib = corpus_ints<int>(K * N, 411, 9),
			 ic = corpus_ints<int>(M * N, 412, 100);

	for (int i = 0; i < M * K; i++)
		a[i] = (float)(ia[i] - 4);
	for (int i = 0; i < K * N; i++)
		b[i] = (float)(ib[i] - 4);
	for (int i = 0; i < M * N; i++)
		c[i] = (float)ic[i]; /* the bias */
	dbuf<float> da(a), db(b), dc(c);
	CUtensorMap map{};
	cuuint64_t dims[2] = { N, M };
	cuuint32_t box[2] = { BN, BM };

	CHECK(make_map(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, dc.p, 2, dims, box));
	splitk_gemm<<<dim3((N + BN - 1) / BN, (M + BM - 1) / BM, SPLITK), 128>>>(map, da, db, M, N, K);
	CHECK_LAUNCH();
	std::vector<float> want(c);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++)
			for (int l = 0; l < K; l++)
				want[i * N + j] += a[i * K + l] * b[l * N + j]; /* integers: exact */
	CHECK_SAME(want, dc.get());
	return 0;
}

/* ---- histogram: shared counts, added to the global bins by TMA ---- */

enum { BINS = 256 };

__global__ void histogram(const __grid_constant__ CUtensorMap map_h, const uint8_t *in, int n)
{
	__shared__ alignas(128) uint32_t bins[BINS];

	for (int i = threadIdx.x; i < BINS; i += blockDim.x)
		bins[i] = 0;
	__syncthreads();
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		atomicAdd(&bins[in[i]], 1u);
	__syncthreads();
	if (threadIdx.x == 0) {
		int32_t c[1] = { 0 };

		ptx::fence_proxy_async(ptx::space_shared);
		ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, ptx::op_add,
						 &map_h, c, bins);
		ptx::cp_async_bulk_commit_group();
		ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
	}
}

static int t_histogram_tma_add(void)
{
	const int n = 20000;
	std::vector<uint8_t> in(n);
	std::vector<int> r = corpus_ints<int>(n, 420, 256);
	std::vector<uint32_t> want(BINS, 7); /* the bins start at 7 */

	for (int i = 0; i < n; i++) {
		in[i] = (uint8_t)(r[i] * r[i] % 256); /* uneven */
		want[in[i]]++;
	}
	dbuf<uint8_t> din(in);
	dbuf<uint32_t> dh(std::vector<uint32_t>(BINS, 7));
	CUtensorMap map{};
	cuuint64_t dims[1] = { BINS };
	cuuint32_t box[1] = { BINS };

	CHECK(make_map(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, dh.p, 1, dims, box));
	histogram<<<12, 256>>>(map, din, n);
	CHECK_LAUNCH();
	CHECK_SAME(want, dh.get());
	return 0;
}

/*
 * ---- every integer operation on a box past both upper ends and one inside ----
 * A reduction's box starts at a multiple of 16 bytes into a row: an H200
 * raises an illegal instruction for a box at (13, 3) or (3, 1) (52 and 12
 * bytes), as vGPU raises ASYNC_COPY (tests/cuda/real-gpu/
 * tensor-reduce-h200-2026-11-30, probe_coords_upper).
 */

enum { TW = 20, TH = 10, BW = 8, BH = 8 };

template <class Op>
__global__ void reduce_box(const __grid_constant__ CUtensorMap map, const uint32_t *src, int x,
			   int y)
{
	__shared__ alignas(128) uint32_t box[BH * BW];

	box[threadIdx.x] = src[threadIdx.x];
	reduce_2d(Op{}, &map, x, y, box);
}

/* the operation @op (0 .. 6: min max inc dec and or xor) of memory @g and box value @v */
static uint32_t int_op(int op, bool sgn, uint32_t g, uint32_t v)
{
	switch (op) {
	case 0: return sgn ? (uint32_t)std::min((int32_t)g, (int32_t)v) : std::min(g, v);
	case 1: return sgn ? (uint32_t)std::max((int32_t)g, (int32_t)v) : std::max(g, v);
	case 2: return g >= v ? 0 : g + 1;
	case 3: return g == 0 || g > v ? v : g - 1;
	case 4: return g & v;
	case 5: return g | v;
	default: return g ^ v;
	}
}

static int t_integer_ops_two_boxes(void)
{
	typedef void (*K)(CUtensorMap, const uint32_t *, int, int);
	static const K kernels[] = { reduce_box<ptx::op_min_t>, reduce_box<ptx::op_max_t>,
				     reduce_box<ptx::op_inc_t>, reduce_box<ptx::op_dec_t>,
				     reduce_box<ptx::op_and_op_t>, reduce_box<ptx::op_or_op_t>,
				     reduce_box<ptx::op_xor_op_t> };
	static const int at[][2] = { { 16, 6 }, { 4, 1 } }; /* x * 4 bytes: multiples of 16 */
	std::vector<int> rg = corpus_ints<int>(TW * TH, 430, 1 << 30),
			 rs = corpus_ints<int>(BW * BH, 431, 1 << 30);

	for (int op = 0; op < 7; op++)
		for (int sgn = 0; sgn < 2; sgn++) {
			if (op >= 2 && op <= 3 && sgn) /* .inc/.dec: u32 only */
				continue;
			for (int p = 0; p < 2; p++) {
				std::vector<uint32_t> g(TW * TH), s(BW * BH);

				for (int i = 0; i < TW * TH; i++) /* small, large and negative */
					g[i] = (uint32_t)rg[i] * (i % 3 ? 1u : 7u) % (i % 5 ? 40u : ~0u);
				for (int i = 0; i < BW * BH; i++)
					s[i] = (uint32_t)rs[i] * (i % 2 ? 3u : 5u) % (i % 4 ? 50u : ~0u);
				dbuf<uint32_t> dg(g), ds(s);
				CUtensorMap map{};
				cuuint64_t dims[2] = { TW, TH };
				cuuint32_t box[2] = { BW, BH };

				CHECK(make_map(&map, sgn ? CU_TENSOR_MAP_DATA_TYPE_INT32 :
							   CU_TENSOR_MAP_DATA_TYPE_UINT32,
					       4, dg.p, 2, dims, box));
				kernels[op]<<<1, BW * BH>>>(map, ds, at[p][0], at[p][1]);
				CHECK_LAUNCH();
				std::vector<uint32_t> want(g);
				for (int by = 0; by < BH; by++)
					for (int bx = 0; bx < BW; bx++) {
						int x = at[p][0] + bx, y = at[p][1] + by;

						if (x >= 0 && x < TW && y >= 0 && y < TH)
							want[y * TW + x] = int_op(op, sgn, g[y * TW + x],
										  s[by * BW + bx]);
					}
				std::vector<uint32_t> got = dg.get();
				if (got != want)
					printf("# op %d %s box at (%d, %d)\n", op, sgn ? "s32" : "u32",
					       at[p][0], at[p][1]);
				CHECK_SAME(want, got);
			}
		}
	return 0;
}

/* ---- halves: .add .min .max of f16 and bf16, NaNs among them ---- */

template <class Op>
__global__ void reduce_halves(const __grid_constant__ CUtensorMap map, const uint16_t *src)
{
	__shared__ alignas(128) uint16_t box[64];

	box[threadIdx.x] = src[threadIdx.x];
	reduce_2d(Op{}, &map, 0, 0, box);
}

static float half_value(uint16_t h, bool bf)
{
	return bf ? __bfloat162float(__ushort_as_bfloat16(h)) : __half2float(__ushort_as_half(h));
}

static bool is_nan(uint16_t h, bool bf)
{
	return (h & 0x7fffu) > (bf ? 0x7f80u : 0x7c00u);
}

/* add (0), min (1), max (2) of halves as PTX's reductions: a NaN sum is
 * 0x7fff; min/max: a NaN loses to a number, two NaNs give 0x7fff, -0 < +0 */
static uint16_t half_op(int op, bool bf, uint16_t g, uint16_t v)
{
	float x = half_value(g, bf), y = half_value(v, bf);

	if (op == 0) {
		if (is_nan(g, bf) || is_nan(v, bf))
			return 0x7fff;
		if (x + y != x + y) /* inf - inf */
			return 0x7fff;
		/* small binary fractions: the sum is exact in the half */
		return bf ? __bfloat16_as_ushort(__float2bfloat16(x + y)) :
			    __half_as_ushort(__float2half(x + y));
	}
	if (is_nan(g, bf) || is_nan(v, bf))
		return is_nan(g, bf) && is_nan(v, bf) ? 0x7fff : is_nan(g, bf) ? v : g;
	if (x == y) /* +0 and -0: the sign decides */
		return (op == 1) == ((g & 0x8000u) != 0) ? g : v;
	return (op == 1) == (x < y) ? g : v;
}

static int t_halves_with_nans(void)
{
	typedef void (*K)(CUtensorMap, const uint16_t *);
	static const K kernels[] = { reduce_halves<ptx::op_add_t>, reduce_halves<ptx::op_min_t>,
				     reduce_halves<ptx::op_max_t> };
	/* f16 and bf16 bits: quarters, signed zeros, infinities, NaNs */
	static const uint16_t f16v[] = { 0x3c00, 0x3400, 0xb800, 0x0000, 0x8000, 0x4500,
					 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xc200, 0x3a00 };
	static const uint16_t bf16v[] = { 0x3f80, 0x3e80, 0xbf00, 0x0000, 0x8000, 0x40a0,
					  0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xc040, 0x3f40 };

	for (int bf = 0; bf < 2; bf++)
		for (int op = 0; op < 3; op++) {
			const uint16_t *vals = bf ? bf16v : f16v;
			std::vector<uint16_t> g(64), s(64);

			for (int i = 0; i < 64; i++) {
				g[i] = vals[i % 12];
				s[i] = vals[(i / 12 + 5 * i) % 12];
			}
			dbuf<uint16_t> dg(g), ds(s);
			CUtensorMap map{};
			cuuint64_t dims[2] = { 16, 4 };
			cuuint32_t box[2] = { 16, 4 };

			CHECK(make_map(&map, bf ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 :
						  CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
				       2, dg.p, 2, dims, box));
			kernels[op]<<<1, 64>>>(map, ds);
			CHECK_LAUNCH();
			std::vector<uint16_t> want(64);
			for (int i = 0; i < 64; i++)
				want[i] = half_op(op, bf, g[i], s[i]);
			std::vector<uint16_t> got = dg.get();
			if (got != want)
				printf("# %s op %d\n", bf ? "bf16" : "f16", op);
			CHECK_SAME(want, got);
		}
	return 0;
}

/* ---- a 3-D box of u64 .add, clipped at the upper end of each dimension ---- */

__global__ void reduce_3d(const __grid_constant__ CUtensorMap map, const uint64_t *src)
{
	__shared__ alignas(128) uint64_t box[4][4][4];

	(&box[0][0][0])[threadIdx.x] = src[threadIdx.x];
	ptx::fence_proxy_async(ptx::space_shared);
	__syncthreads();
	if (threadIdx.x == 0) {
		int32_t c[3] = { 6, 3, 1 };

		ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, ptx::op_add,
						 &map, c, &box[0][0][0]);
		ptx::cp_async_bulk_commit_group();
		ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
	}
}

static int t_3d_u64_add(void)
{
	const int X = 8, Y = 5, Z = 3;
	std::vector<uint64_t> g(X * Y * Z), s(64);

	for (int i = 0; i < X * Y * Z; i++)
		g[i] = 0xffffffffull * (uint64_t)(i + 1); /* carries across the words */
	for (int i = 0; i < 64; i++)
		s[i] = 0x100000001ull * (uint64_t)(i + 3);
	dbuf<uint64_t> dg(g), ds(s);
	CUtensorMap map{};
	cuuint64_t dims[3] = { (cuuint64_t)X, (cuuint64_t)Y, (cuuint64_t)Z };
	cuuint32_t box[3] = { 4, 4, 4 };

	CHECK(make_map(&map, CU_TENSOR_MAP_DATA_TYPE_UINT64, 8, dg.p, 3, dims, box));
	reduce_3d<<<1, 64>>>(map, ds);
	CHECK_LAUNCH();
	std::vector<uint64_t> want(g);
	for (int bz = 0; bz < 4; bz++)
		for (int by = 0; by < 4; by++)
			for (int bx = 0; bx < 4; bx++) {
				int x = 6 + bx, y = 3 + by, z = 1 + bz;

				if (x < X && y < Y && z < Z)
					want[(z * Y + y) * X + x] += s[(bz * 4 + by) * 4 + bx];
			}
	CHECK_SAME(want, dg.get());
	return 0;
}

CORPUS_MAIN(T(t_splitk_gemm_tma_add), T(t_histogram_tma_add), T(t_integer_ops_two_boxes),
	    T(t_halves_with_nans), T(t_3d_u64_add))
