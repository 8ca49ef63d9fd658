// SPDX-License-Identifier: MIT
/*
 * TMA, as CUDA's programming guide writes it (section "Using TMA to
 * transfer multi-dimensional arrays"): the host makes a CUtensorMap with
 * cuTensorMapEncodeTiled, reached through cudaGetDriverEntryPointByVersion
 * (the program does not link libcuda), and passes it to the kernel as a
 * const __grid_constant__ parameter.  Each CTA loads its 2-D tile into
 * shared memory with cp_async_bulk_tensor_2d_global_to_shared, completed
 * on a cuda::barrier with barrier_arrive_tx, changes it, and stores it back
 * with cp_async_bulk_tensor_2d_shared_to_global.  A tile that reaches past
 * the array's edge is loaded with zeros there (and stored clipped).
 * cudaGetDriverEntryPoint gives the same function.  Checked on the host.
 */
#include <cstdio>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <cuda/barrier>
#include <cuda_runtime.h>

#include "sample.h"

using barrier = cuda::barrier<cuda::thread_scope_block>;
namespace cde = cuda::device::experimental;

#define GMEM_WIDTH 100
#define GMEM_HEIGHT 40
#define SMEM_WIDTH 32
#define SMEM_HEIGHT 8

static PFN_cuTensorMapEncodeTiled_v12000 get_cuTensorMapEncodeTiled(void)
{
	cudaDriverEntryPointQueryResult driver_status;
	void *ptr = nullptr;

	checkCudaErrors(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000,
							 cudaEnableDefault, &driver_status));
	sampleCheck(driver_status == cudaDriverEntryPointSuccess);
	return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
}

/* each CTA: tile (blockIdx.x, blockIdx.y) += its position in the tile + 1 */
__global__ void tile_kernel(const __grid_constant__ CUtensorMap tensor_map, int *zeros)
{
	__shared__ alignas(128) int smem_buffer[SMEM_HEIGHT][SMEM_WIDTH];
#pragma nv_diag_suppress static_var_with_dynamic_init
	__shared__ barrier bar;
	int x = blockIdx.x * SMEM_WIDTH, y = blockIdx.y * SMEM_HEIGHT;

	if (threadIdx.x == 0) {
		init(&bar, blockDim.x);
		cde::fence_proxy_async_shared_cta();
	}
	__syncthreads();

	barrier::arrival_token token;
	if (threadIdx.x == 0) {
		cde::cp_async_bulk_tensor_2d_global_to_shared(&smem_buffer, &tensor_map, x, y, bar);
		token = cuda::device::barrier_arrive_tx(bar, 1, sizeof(smem_buffer));
	} else {
		token = bar.arrive();
	}
	bar.wait(std::move(token));

	/* past the array's edge the tile holds zeros: count them */
	for (int i = threadIdx.x; i < SMEM_HEIGHT * SMEM_WIDTH; i += blockDim.x) {
		int r = i / SMEM_WIDTH, c = i % SMEM_WIDTH;

		if ((x + c >= GMEM_WIDTH || y + r >= GMEM_HEIGHT) && smem_buffer[r][c] == 0)
			atomicAdd(zeros, 1);
		smem_buffer[r][c] += i + 1;
	}
	/* the generic proxy's writes, visible to the TMA engine's store */
	cde::fence_proxy_async_shared_cta();
	__syncthreads();
	if (threadIdx.x == 0) {
		cde::cp_async_bulk_tensor_2d_shared_to_global(&tensor_map, x, y, &smem_buffer);
		cde::cp_async_bulk_commit_group();
		cde::cp_async_bulk_wait_group_read<0>();
	}
	if (threadIdx.x == 0)
		(&bar)->~barrier();
}

int main(void)
{
	const size_t n = GMEM_WIDTH * GMEM_HEIGHT;
	std::vector<int> h(n), out(n);

	sample_begin("tmaTile");
	for (size_t i = 0; i < n; i++)
		h[i] = (int)(i * 7 % 1000);
	int *d, *d_zeros, zeros = -1;
	checkCudaErrors(cudaMalloc(&d, n * sizeof(int)));
	checkCudaErrors(cudaMalloc(&d_zeros, sizeof(int)));
	checkCudaErrors(cudaMemset(d_zeros, 0, sizeof(int)));
	checkCudaErrors(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));

	CUtensorMap tensor_map{};
	constexpr cuuint32_t rank = 2;
	cuuint64_t size[rank] = { GMEM_WIDTH, GMEM_HEIGHT };
	cuuint64_t stride[rank - 1] = { GMEM_WIDTH * sizeof(int) };
	cuuint32_t box_size[rank] = { SMEM_WIDTH, SMEM_HEIGHT };
	cuuint32_t elem_stride[rank] = { 1, 1 };
	auto cuTensorMapEncodeTiled = get_cuTensorMapEncodeTiled();
	CUresult res = cuTensorMapEncodeTiled(
		&tensor_map, CU_TENSOR_MAP_DATA_TYPE_INT32, rank, d, size, stride, box_size,
		elem_stride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
		CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	printf("# cuTensorMapEncodeTiled: %d\n", (int)res);
	sampleCheck(res == CUDA_SUCCESS);

	/* the older entry point finds the same function */
	void *fn = nullptr;
	cudaDriverEntryPointQueryResult q;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* deprecated in CUDA 13 */
	checkCudaErrors(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q));
#pragma GCC diagnostic pop
	sampleCheck(q == cudaDriverEntryPointSuccess && fn == (void *)cuTensorMapEncodeTiled);

	/* 4 x 5 tiles of 32 x 8 cover 128 x 40: the last column is 28 past the edge */
	dim3 grid((GMEM_WIDTH + SMEM_WIDTH - 1) / SMEM_WIDTH, GMEM_HEIGHT / SMEM_HEIGHT);
	tile_kernel<<<grid, 128>>>(tensor_map, d_zeros);
	checkCudaErrors(cudaGetLastError());
	checkCudaErrors(cudaMemcpy(out.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
	checkCudaErrors(cudaMemcpy(&zeros, d_zeros, sizeof(int), cudaMemcpyDeviceToHost));
	for (int yy = 0; yy < GMEM_HEIGHT; yy++)
		for (int xx = 0; xx < GMEM_WIDTH; xx++) {
			int i = yy * GMEM_WIDTH + xx;
			int want = h[i] + (yy % SMEM_HEIGHT) * SMEM_WIDTH + xx % SMEM_WIDTH + 1;

			if (out[i] != want)
				printf("# (%d, %d): %d, want %d\n", xx, yy, out[i], want);
			sampleCheck(out[i] == want);
		}
	int past = (int)(grid.x * SMEM_WIDTH - GMEM_WIDTH) * GMEM_HEIGHT;
	printf("# zero-filled elements: %d, want %d\n", zeros, past);
	sampleCheck(zeros == past);

	checkCudaErrors(cudaFree(d));
	checkCudaErrors(cudaFree(d_zeros));
	return sample_finish(true);
}
