/* SPDX-License-Identifier: MIT */
/*
 * A TMA ring as CUTLASS's warp-specialised pipelines keep one
 * (PipelineTmaAsync: a producer warp, consumer warps, a "full" and an
 * "empty" mbarrier per stage), written with libcu++'s cuda::ptx wrappers:
 * one thread of warp 0 streams @tiles tiles of @tile_bytes through
 * STAGES shared-memory stages with cp.async.bulk, each completing on its
 * stage's full barrier (mbarrier.arrive.expect_tx); the other warps wait
 * for the stage, sum its 32-bit words (READ; else they only wait), and
 * release it with one arrive per warp on its empty barrier, which the
 * producer waits for before it refills the stage.
 *
 * sums[blockIdx.x * tiles + t] = the sum of tile t's words (READ).
 * tests/corpus/tma_ring.cu checks it; tests/bench/bench_tma.cu times the
 * ring (bytes a second beside memcpy of the same tiles).
 */
#ifndef TMA_RING_H
#define TMA_RING_H

#include <cuda/ptx>
#include <cstdint>

template <int STAGES, bool READ>
__global__ void tma_ring(const int4 *in, unsigned long long *sums, int tiles, int tile_bytes)
{
	namespace ptx = cuda::ptx;
	extern __shared__ __align__(128) unsigned char stage[];
	__shared__ uint64_t full[STAGES], empty[STAGES];
	const int consumer_warps = blockDim.x / 32 - 1;
	const char *src = (const char *)in + (size_t)blockIdx.x * tiles * tile_bytes;

	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			ptx::mbarrier_init(&full[s], 1);
			ptx::mbarrier_init(&empty[s], consumer_warps);
		}
		ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
	}
	__syncthreads();
	if (threadIdx.x < 32) {
		if (threadIdx.x)
			return;
		for (int t = 0; t < tiles; t++) {
			int s = t % STAGES;
			uint32_t round = (uint32_t)(t / STAGES);

			/* the consumers released the stage's previous round */
			if (round)
				while (!ptx::mbarrier_try_wait_parity(&empty[s], (round - 1) & 1))
					;
			ptx::cp_async_bulk(ptx::space_shared, ptx::space_global,
					   stage + (size_t)s * tile_bytes, src + (size_t)t * tile_bytes,
					   tile_bytes, &full[s]);
			(void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta,
							    ptx::space_shared, &full[s], tile_bytes);
		}
		return;
	}
	for (int t = 0; t < tiles; t++) {
		int s = t % STAGES;
		unsigned long long acc = 0;

		while (!ptx::mbarrier_try_wait_parity(&full[s], (uint32_t)(t / STAGES) & 1))
			;
		if (READ) {
			const int4 *p = (const int4 *)(stage + (size_t)s * tile_bytes);

			for (int i = threadIdx.x - 32; i < tile_bytes / 16; i += blockDim.x - 32) {
				int4 v = p[i];

				acc += (unsigned long long)(unsigned int)v.x + (unsigned int)v.y +
				       (unsigned int)v.z + (unsigned int)v.w;
			}
			for (int o = 16; o; o >>= 1)
				acc += __shfl_down_sync(0xffffffffu, acc, o);
		}
		__syncwarp();
		if ((threadIdx.x & 31) == 0) {
			if (READ)
				atomicAdd(&sums[(size_t)blockIdx.x * tiles + t], acc);
			(void)ptx::mbarrier_arrive(&empty[s]);
		}
	}
}

#endif /* TMA_RING_H */
