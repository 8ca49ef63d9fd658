// SPDX-License-Identifier: MIT
/*
 * Dense linear algebra without tensor cores, as the CUDA samples and the
 * SIMT GEMM tutorials write it: samples/6_Performance/transpose (copy,
 * copySharedMem, naive, coalesced, no bank conflicts, diagonal
 * reordering, fine- and coarse-grained), samples/0_Introduction/matrixMul
 * (tiled, the block size a template parameter), and the register-tiled,
 * vectorised and double-buffered SGEMM mainloops.  Floats hold small
 * integers, so every product and sum is exact whatever the order.
 */
#include "corpus.h"

#define TILE_DIM 16
#define BLOCK_ROWS 16

__global__ void copy(float *odata, const float *idata, int width, int height)
{
	int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
	int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
	int index = xIndex + width * yIndex;

	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		odata[index + i * width] = idata[index + i * width];
}

__global__ void copySharedMem(float *odata, const float *idata, int width, int height)
{
	__shared__ float tile[TILE_DIM][TILE_DIM];
	int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
	int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
	int index = xIndex + width * yIndex;

	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		if (xIndex < width && yIndex < height)
			tile[threadIdx.y][threadIdx.x] = idata[index];
	__syncthreads();
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		if (xIndex < height && yIndex < width)
			odata[index] = tile[threadIdx.y][threadIdx.x];
}

__global__ void transposeNaive(float *odata, const float *idata, int width, int height)
{
	int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
	int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
	int index_in = xIndex + width * yIndex;
	int index_out = yIndex + height * xIndex;

	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		odata[index_out + i] = idata[index_in + i * width];
}

__global__ void transposeCoalesced(float *odata, const float *idata, int width, int height)
{
	__shared__ float tile[TILE_DIM][TILE_DIM];
	int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
	int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
	int index_in = xIndex + (yIndex)*width;

	xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
	yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
	int index_out = xIndex + (yIndex)*height;
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
	__syncthreads();
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
}

__global__ void transposeNoBankConflicts(float *odata, const float *idata, int width, int height)
{
	__shared__ float tile[TILE_DIM][TILE_DIM + 1];
	int xIndex = blockIdx.x * TILE_DIM + threadIdx.x;
	int yIndex = blockIdx.y * TILE_DIM + threadIdx.y;
	int index_in = xIndex + (yIndex)*width;

	xIndex = blockIdx.y * TILE_DIM + threadIdx.x;
	yIndex = blockIdx.x * TILE_DIM + threadIdx.y;
	int index_out = xIndex + (yIndex)*height;
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
	__syncthreads();
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
}

__global__ void transposeDiagonal(float *odata, const float *idata, int width, int height)
{
	__shared__ float tile[TILE_DIM][TILE_DIM + 1];
	int blockIdx_x, blockIdx_y;

	if (width == height) {
		blockIdx_y = blockIdx.x;
		blockIdx_x = (blockIdx.x + blockIdx.y) % gridDim.x;
	} else {
		int bid = blockIdx.x + gridDim.x * blockIdx.y;
		blockIdx_y = bid % gridDim.y;
		blockIdx_x = ((bid / gridDim.y) + blockIdx_y) % gridDim.x;
	}
	int xIndex = blockIdx_x * TILE_DIM + threadIdx.x;
	int yIndex = blockIdx_y * TILE_DIM + threadIdx.y;
	int index_in = xIndex + (yIndex)*width;

	xIndex = blockIdx_y * TILE_DIM + threadIdx.x;
	yIndex = blockIdx_x * TILE_DIM + threadIdx.y;
	int index_out = xIndex + (yIndex)*height;
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		tile[threadIdx.y + i][threadIdx.x] = idata[index_in + i * width];
	__syncthreads();
	for (int i = 0; i < TILE_DIM; i += BLOCK_ROWS)
		odata[index_out + i * height] = tile[threadIdx.x][threadIdx.y + i];
}

/* 32x8 blocks, each thread four elements (the modern transpose) */
template <int TD, int BR> __global__ void transposeTiled32x8(float *odata, const float *idata,
							    int width, int height)
{
	__shared__ float tile[TD][TD + 1];
	int x = blockIdx.x * TD + threadIdx.x;
	int y = blockIdx.y * TD + threadIdx.y;

	for (int j = 0; j < TD; j += BR)
		if (x < width && y + j < height)
			tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
	__syncthreads();
	x = blockIdx.y * TD + threadIdx.x;
	y = blockIdx.x * TD + threadIdx.y;
	for (int j = 0; j < TD; j += BR)
		if (x < height && y + j < width)
			odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

/* matrixMul (CUDA samples): C = A * B, tiles of BLOCK_SIZE */
template <int BLOCK_SIZE>
__global__ void MatrixMulCUDA(float *C, const float *A, const float *B, int wA, int wB)
{
	int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
	int aBegin = wA * BLOCK_SIZE * by;
	int aEnd = aBegin + wA - 1;
	int aStep = BLOCK_SIZE;
	int bBegin = BLOCK_SIZE * bx;
	int bStep = BLOCK_SIZE * wB;
	float Csub = 0;

	for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
		__shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
		__shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];

		As[ty][tx] = A[a + wA * ty + tx];
		Bs[ty][tx] = B[b + wB * ty + tx];
		__syncthreads();
#pragma unroll
		for (int k = 0; k < BLOCK_SIZE; ++k)
			Csub += As[ty][k] * Bs[k][tx];
		__syncthreads();
	}
	int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
	C[c + wB * ty + tx] = Csub;
}

/* naive: one thread per element, bounds-checked (any M, N, K) */
__global__ void sgemm_naive(int M, int N, int K, float alpha, const float *A, const float *B,
			    float beta, float *C)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;

	if (x < M && y < N) {
		float tmp = 0.0f;
		for (int i = 0; i < K; ++i)
			tmp += A[x * K + i] * B[i * N + y];
		C[x * N + y] = alpha * tmp + beta * C[x * N + y];
	}
}

/* 2-D register tiling: each thread TM x TN outputs (BM x BN block tile) */
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM * BN) / (TM * TN))
	sgemm_2d_blocktiling(int M, int N, int K, const float *A, const float *B, float *C)
{
	const int cRow = blockIdx.y, cCol = blockIdx.x;
	const int totalResults = BM * BN;
	const int threads = totalResults / (TM * TN);
	const int threadCol = threadIdx.x % (BN / TN);
	const int threadRow = threadIdx.x / (BN / TN);
	__shared__ float As[BM * BK];
	__shared__ float Bs[BK * BN];

	A += cRow * BM * K;
	B += cCol * BN;
	C += cRow * BM * N + cCol * BN;
	const int innerRowA = threadIdx.x / BK, innerColA = threadIdx.x % BK;
	const int strideA = threads / BK;
	const int innerRowB = threadIdx.x / BN, innerColB = threadIdx.x % BN;
	const int strideB = threads / BN;
	float threadResults[TM * TN] = {0.0f};
	float regM[TM] = {0.0f}, regN[TN] = {0.0f};

	for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
		for (int off = 0; off < BM; off += strideA)
			As[(innerRowA + off) * BK + innerColA] = A[(innerRowA + off) * K + innerColA];
		for (int off = 0; off < BK; off += strideB)
			Bs[(innerRowB + off) * BN + innerColB] = B[(innerRowB + off) * N + innerColB];
		__syncthreads();
		A += BK;
		B += BK * N;
		for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
			for (int i = 0; i < TM; ++i)
				regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
			for (int i = 0; i < TN; ++i)
				regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
			for (int resIdxM = 0; resIdxM < TM; ++resIdxM)
				for (int resIdxN = 0; resIdxN < TN; ++resIdxN)
					threadResults[resIdxM * TN + resIdxN] += regM[resIdxM] * regN[resIdxN];
		}
		__syncthreads();
	}
	for (int resIdxM = 0; resIdxM < TM; ++resIdxM)
		for (int resIdxN = 0; resIdxN < TN; ++resIdxN)
			C[(threadRow * TM + resIdxM) * N + threadCol * TN + resIdxN] =
				threadResults[resIdxM * TN + resIdxN];
}

/* float4 loads, A transposed into shared memory (vectorised SGEMM) */
template <int BM, int BN, int BK, int TM, int TN>
__global__ void sgemm_vectorize(int M, int N, int K, const float *A, const float *B, float *C)
{
	const int cRow = blockIdx.y, cCol = blockIdx.x;
	const int threadCol = threadIdx.x % (BN / TN);
	const int threadRow = threadIdx.x / (BN / TN);
	__shared__ float As[BM * BK];
	__shared__ float Bs[BK * BN];

	A += cRow * BM * K;
	B += cCol * BN;
	C += cRow * BM * N + cCol * BN;
	const int innerRowA = threadIdx.x / (BK / 4), innerColA = threadIdx.x % (BK / 4);
	const int innerRowB = threadIdx.x / (BN / 4), innerColB = threadIdx.x % (BN / 4);
	float threadResults[TM * TN] = {0.0f};
	float regM[TM] = {0.0f}, regN[TN] = {0.0f};

	for (int bkIdx = 0; bkIdx < K; bkIdx += BK) {
		float4 tmp = reinterpret_cast<const float4 *>(&A[innerRowA * K + innerColA * 4])[0];
		As[(innerColA * 4 + 0) * BM + innerRowA] = tmp.x;
		As[(innerColA * 4 + 1) * BM + innerRowA] = tmp.y;
		As[(innerColA * 4 + 2) * BM + innerRowA] = tmp.z;
		As[(innerColA * 4 + 3) * BM + innerRowA] = tmp.w;
		reinterpret_cast<float4 *>(&Bs[innerRowB * BN + innerColB * 4])[0] =
			reinterpret_cast<const float4 *>(&B[innerRowB * N + innerColB * 4])[0];
		__syncthreads();
		A += BK;
		B += BK * N;
		for (int dotIdx = 0; dotIdx < BK; ++dotIdx) {
			for (int i = 0; i < TM; ++i)
				regM[i] = As[dotIdx * BM + threadRow * TM + i];
			for (int i = 0; i < TN; ++i)
				regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
			for (int m = 0; m < TM; ++m)
				for (int n = 0; n < TN; ++n)
					threadResults[m * TN + n] += regM[m] * regN[n];
		}
		__syncthreads();
	}
	for (int m = 0; m < TM; m += 1)
		for (int n = 0; n < TN; n += 4) {
			float4 tmp;
			tmp.x = threadResults[m * TN + n];
			tmp.y = threadResults[m * TN + n + 1];
			tmp.z = threadResults[m * TN + n + 2];
			tmp.w = threadResults[m * TN + n + 3];
			reinterpret_cast<float4 *>(&C[(threadRow * TM + m) * N + threadCol * TN + n])[0] = tmp;
		}
}

/* integer GEMM with double-buffered shared tiles (one barrier per step) */
template <int T> __global__ void igemm_double_buffer(const int *A, const int *B, int *C, int n)
{
	__shared__ int As[2][T][T], Bs[2][T][T];
	int tx = threadIdx.x, ty = threadIdx.y;
	int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
	int acc = 0, buf = 0;

	As[0][ty][tx] = A[row * n + tx];
	Bs[0][ty][tx] = B[ty * n + col];
	__syncthreads();
	for (int k0 = 0; k0 < n; k0 += T) {
		if (k0 + T < n) {
			As[buf ^ 1][ty][tx] = A[row * n + k0 + T + tx];
			Bs[buf ^ 1][ty][tx] = B[(k0 + T + ty) * n + col];
		}
		for (int k = 0; k < T; k++)
			acc += As[buf][ty][k] * Bs[buf][k][tx];
		buf ^= 1;
		__syncthreads();
	}
	C[row * n + col] = acc;
}

/* f64 matrix-vector product, one warp per row */
__global__ void dgemv_warp(const double *A, const double *x, double *y, int rows, int cols)
{
	int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x & 31;

	if (warp >= rows)
		return;
	double s = 0;
	for (int j = lane; j < cols; j += 32)
		s += A[(size_t)warp * cols + j] * x[j];
	for (int o = 16; o; o >>= 1)
		s += __shfl_xor_sync(0xffffffffu, s, o);
	if (lane == 0)
		y[warp] = s;
}

/* ---- host ---- */

static std::vector<float> host_transpose(const std::vector<float> &in, int w, int h)
{
	std::vector<float> o(in.size());
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			o[x * h + y] = in[y * w + x];
	return o;
}

typedef void (*tkern)(float *, const float *, int, int);

static int run_transpose(tkern k, int w, int h, bool transposes, dim3 block = dim3(TILE_DIM, BLOCK_ROWS),
			 int tile = TILE_DIM)
{
	std::vector<float> in(w * h);
	for (int i = 0; i < w * h; i++)
		in[i] = (float)i;
	dbuf<float> din(in), dout(w * h);

	dout.zero();
	k<<<dim3((w + tile - 1) / tile, (h + tile - 1) / tile), block>>>(dout, din, w, h);
	CHECK_LAUNCH();
	CHECK_SAME(transposes ? host_transpose(in, w, h) : in, dout.get());
	return 0;
}

static int t_copy(void) { return run_transpose(copy, 128, 64, false); }
static int t_copySharedMem(void) { return run_transpose(copySharedMem, 96, 96, false); }
static int t_transposeNaive(void) { return run_transpose(transposeNaive, 128, 64, true); }
static int t_transposeCoalesced(void) { return run_transpose(transposeCoalesced, 64, 128, true); }
static int t_transposeNoBankConflicts(void)
{
	return run_transpose(transposeNoBankConflicts, 160, 48, true);
}
static int t_transposeDiagonal_square(void) { return run_transpose(transposeDiagonal, 96, 96, true); }
static int t_transposeDiagonal_rect(void) { return run_transpose(transposeDiagonal, 128, 64, true); }
static int t_transposeTiled32x8(void)
{
	return run_transpose(transposeTiled32x8<32, 8>, 200, 75, true, dim3(32, 8), 32);
}

static void host_gemm(const std::vector<float> &A, const std::vector<float> &B, std::vector<float> &C,
		      int M, int N, int K)
{
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			float s = 0;
			for (int k = 0; k < K; k++)
				s += A[i * K + k] * B[k * N + j];
			C[i * N + j] = s;
		}
}

template <int BS> static int matrixmul_case(int hA, int wA, int wB)
{
	std::vector<float> A = corpus_floats(hA * wA, 1, 8), B = corpus_floats(wA * wB, 2, 8);
	std::vector<float> C(hA * wB);
	dbuf<float> dA(A), dB(B), dC(hA * wB);

	MatrixMulCUDA<BS><<<dim3(wB / BS, hA / BS), dim3(BS, BS)>>>(dC, dA, dB, wA, wB);
	CHECK_LAUNCH();
	host_gemm(A, B, C, hA, wB, wA);
	CHECK_SAME(C, dC.get());
	return 0;
}
static int t_matrixMul16(void) { return matrixmul_case<16>(64, 96, 48); }
static int t_matrixMul32(void) { return matrixmul_case<32>(64, 64, 96); }

static int t_sgemm_naive(void)
{
	const int M = 37, N = 45, K = 29;
	std::vector<float> A = corpus_floats(M * K, 3, 6), B = corpus_floats(K * N, 4, 6);
	std::vector<float> C0 = corpus_floats(M * N, 5, 6), C(M * N);
	dbuf<float> dA(A), dB(B), dC(C0);

	sgemm_naive<<<dim3((M + 15) / 16, (N + 15) / 16), dim3(16, 16)>>>(M, N, K, 2.0f, dA, dB, -1.0f, dC);
	CHECK_LAUNCH();
	host_gemm(A, B, C, M, N, K);
	for (int i = 0; i < M * N; i++)
		C[i] = 2.0f * C[i] + -1.0f * C0[i];
	CHECK_SAME(C, dC.get());
	return 0;
}

static int t_sgemm_2d_blocktiling(void)
{
	const int M = 128, N = 128, K = 64;
	std::vector<float> A = corpus_floats(M * K, 6, 5), B = corpus_floats(K * N, 7, 5), C(M * N);
	dbuf<float> dA(A), dB(B), dC(M * N);

	sgemm_2d_blocktiling<64, 64, 8, 8, 8><<<dim3(N / 64, M / 64), 64>>>(M, N, K, dA, dB, dC);
	CHECK_LAUNCH();
	host_gemm(A, B, C, M, N, K);
	CHECK_SAME(C, dC.get());
	return 0;
}

static int t_sgemm_vectorize(void)
{
	const int M = 256, N = 256, K = 32;
	std::vector<float> A = corpus_floats(M * K, 8, 5), B = corpus_floats(K * N, 9, 5), C(M * N);
	dbuf<float> dA(A), dB(B), dC(M * N);

	sgemm_vectorize<128, 128, 8, 8, 8><<<dim3(N / 128, M / 128), 256>>>(M, N, K, dA, dB, dC);
	CHECK_LAUNCH();
	host_gemm(A, B, C, M, N, K);
	CHECK_SAME(C, dC.get());
	return 0;
}

static int t_igemm_double_buffer(void)
{
	const int n = 64;
	std::vector<int> A = corpus_ints<int>(n * n, 10, 2000), B = corpus_ints<int>(n * n, 11, 2000);
	std::vector<int> C(n * n, 0);
	dbuf<int> dA(A), dB(B), dC(n * n);

	igemm_double_buffer<16><<<dim3(n / 16, n / 16), dim3(16, 16)>>>(dA, dB, dC, n);
	CHECK_LAUNCH();
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			unsigned s = 0;
			for (int k = 0; k < n; k++)
				s += (unsigned)A[i * n + k] * (unsigned)B[k * n + j];
			C[i * n + j] = (int)s;
		}
	CHECK_SAME(C, dC.get());
	return 0;
}

static int t_dgemv_warp(void)
{
	const int rows = 50, cols = 300;
	corpus_rng r(12);
	std::vector<double> A(rows * cols), x(cols), y(rows);
	for (auto &v : A)
		v = (double)((int)r.below(2001) - 1000) / 8.0;
	for (auto &v : x)
		v = (double)((int)r.below(201) - 100) / 4.0;
	dbuf<double> dA(A), dx(x), dy(rows);

	dgemv_warp<<<(rows * 32 + 127) / 128, 128>>>(dA, dx, dy, rows, cols);
	CHECK_LAUNCH();
	for (int i = 0; i < rows; i++) {
		double s = 0;
		for (int j = 0; j < cols; j++)
			s += A[i * cols + j] * x[j];
		y[i] = s;
	}
	CHECK_SAME(y, dy.get());
	return 0;
}

CORPUS_MAIN(T(t_copy), T(t_copySharedMem), T(t_transposeNaive), T(t_transposeCoalesced),
	    T(t_transposeNoBankConflicts), T(t_transposeDiagonal_square), T(t_transposeDiagonal_rect),
	    T(t_transposeTiled32x8), T(t_matrixMul16), T(t_matrixMul32), T(t_sgemm_naive),
	    T(t_sgemm_2d_blocktiling), T(t_sgemm_vectorize), T(t_igemm_double_buffer), T(t_dgemv_warp))
