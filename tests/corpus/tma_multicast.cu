// SPDX-License-Identifier: MIT
/*
 * A CUTLASS-style warp-specialised TMA mainloop with multicast, without
 * tensor cores: C = A x B in int32.  Clusters of 2 CTAs along x compute
 * two C tiles of the same rows, so they share the A tile: each CTA's
 * producer warp loads half of it and multicasts it to both CTAs
 * (cuda::ptx::cp_async_bulk_tensor with a ctaMask, as CUTLASS's
 * SM90_TMA_LOAD_MULTICAST), and loads its own B tile, into a 3-stage ring
 * guarded by full and empty mbarriers (CUTLASS's PipelineTmaAsync): full
 * completes on the producer's arrive.expect_tx and the bytes of the three
 * copies; empty counts the consumer warps of both CTAs, since a slot is
 * refilled in both CTAs' shared memory (ClusterBarrier::arrive(cta_id):
 * mapa + mbarrier.arrive.shared::cluster).  Four consumer warps do the
 * integer GEMM on the tiles.  The tensor maps come from
 * cuTensorMapEncodeTiled (the driver entry point, as tmaTile does).
 * Checked on the host, every word.
 */
#include <cuda.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeTiled */
#include <cuda/ptx>
#include <cooperative_groups.h>

#include "corpus.h"

namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

enum { BM = 32, BN = 32, BK = 16, STAGES = 3, CONSUMERS = 4, CLUSTER = 2 };
/* the bytes one stage receives: the whole A tile (two multicast halves) and B */
enum : uint32_t { STAGE_BYTES = (BM * BK + BK * BN) * sizeof(int) };

/* CUTLASS's ClusterBarrier::arrive(cta_id): the mbarrier of CTA @cta */
__device__ static void arrive_cluster(uint64_t *bar, uint32_t cta)
{
	uint32_t a = (uint32_t)__cvta_generic_to_shared(bar);

	asm volatile("{\n\t.reg .b32 remAddr32;\n\t"
		     "mapa.shared::cluster.u32 remAddr32, %0, %1;\n\t"
		     "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remAddr32];\n\t}"
		     :
		     : "r"(a), "r"(cta)
		     : "memory");
}

__device__ static void wait(uint64_t *bar, uint32_t phase)
{
	while (!ptx::mbarrier_try_wait_parity(bar, phase))
		;
}

__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__((1 + CONSUMERS) * 32)
	gemm_tma_multicast(const __grid_constant__ CUtensorMap map_a,
			   const __grid_constant__ CUtensorMap map_b, int *c, int n, int k)
{
	__shared__ alignas(128) int sa[STAGES][BM][BK];
	__shared__ alignas(128) int sb[STAGES][BK][BN];
	__shared__ uint64_t full[STAGES], empty[STAGES];
	cg::cluster_group cluster = cg::this_cluster();
	uint32_t rank = cluster.block_rank(), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
	int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN, ktiles = k / BK;

	if (threadIdx.x == 0) {
		for (int s = 0; s < STAGES; s++) {
			ptx::mbarrier_init(&full[s], 1);
			ptx::mbarrier_init(&empty[s], CONSUMERS * CLUSTER);
		}
		ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
	}
	cluster.sync(); /* the peer's barriers exist before anything reaches them */

	if (warp == 0) { /* the producer */
		if (lane == 0) {
			for (int kt = 0; kt < ktiles; kt++) {
				int s = kt % STAGES;
				uint32_t phase = (uint32_t)(kt / STAGES) & 1;

				/* both CTAs' consumers released the slot (a fresh
				 * barrier's parity-1 phase counts as complete) */
				wait(&empty[s], phase ^ 1);
				(void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta,
								    ptx::space_shared, &full[s],
								    STAGE_BYTES);
				/* my half of the A tile, to both CTAs */
				int32_t ca[2] = { kt * BK, m0 + (int)rank * (BM / CLUSTER) };
				uint16_t mask = (1u << CLUSTER) - 1;

				ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global,
							  &sa[s][rank * (BM / CLUSTER)][0], &map_a, ca,
							  &full[s], mask);
				int32_t cb[2] = { n0, kt * BK };

				ptx::cp_async_bulk_tensor(ptx::space_cluster, ptx::space_global, &sb[s][0][0],
							  &map_b, cb, &full[s]);
			}
		}
	} else { /* the consumers: 128 threads, 8 C elements each */
		uint32_t t = threadIdx.x - 32, row = t / 4, col = (t % 4) * 8;
		int acc[8] = {};

		for (int kt = 0; kt < ktiles; kt++) {
			int s = kt % STAGES;

			wait(&full[s], (uint32_t)(kt / STAGES) & 1);
			for (int kk = 0; kk < BK; kk++) {
				int a = sa[s][row][kk];

				for (int j = 0; j < 8; j++)
					acc[j] += a * sb[s][kk][col + j];
			}
			__syncwarp();
			if (lane == 0)
				for (uint32_t r = 0; r < CLUSTER; r++)
					arrive_cluster(&empty[s], r);
		}
		for (int j = 0; j < 8; j++)
			c[(m0 + row) * n + n0 + col + j] = acc[j];
	}
	cluster.sync(); /* no remote arrive reaches an exited CTA */
}

/* ---- host ---- */

static PFN_cuTensorMapEncodeTiled_v12000 encode_tiled(void)
{
	cudaDriverEntryPointQueryResult q;
	void *fn = nullptr;

	if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
					     &q) != cudaSuccess || q != cudaDriverEntryPointSuccess)
		return nullptr;
	return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
}

/* a row-major rows x cols int32 matrix, box_cols x box_rows tiles */
static bool make_map(CUtensorMap *map, int *p, int rows, int cols, int box_rows, int box_cols)
{
	auto encode = encode_tiled();
	cuuint64_t size[2] = { (cuuint64_t)cols, (cuuint64_t)rows };
	cuuint64_t stride[1] = { (cuuint64_t)cols * sizeof(int) };
	cuuint32_t box[2] = { (cuuint32_t)box_cols, (cuuint32_t)box_rows };
	cuuint32_t elem[2] = { 1, 1 };

	return encode &&
	       encode(map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, p, size, stride, box, elem,
		      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
		      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

static int t_gemm_tma_multicast(void)
{
	const int M = 64, N = 128, K = 112; /* 7 k-tiles: the ring wraps twice */
	std::vector<int> a = corpus_ints<int>(M * K, 310, 17), b = corpus_ints<int>(K * N, 311, 17);

	for (auto &x : a)
		x -= 8;
	for (auto &x : b)
		x -= 8;
	dbuf<int> da(a), db(b), dc(M * N);
	CUtensorMap map_a{}, map_b{};

	CHECK(make_map(&map_a, da.p, M, K, BM / CLUSTER, BK));
	CHECK(make_map(&map_b, db.p, K, N, BK, BN));
	gemm_tma_multicast<<<dim3(N / BN, M / BM), (1 + CONSUMERS) * 32>>>(map_a, map_b, dc, N, K);
	CHECK_LAUNCH();
	std::vector<int> want(M * N);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			int s = 0;

			for (int l = 0; l < K; l++)
				s += a[i * K + l] * b[l * N + j];
			want[i * N + j] = s;
		}
	CHECK_SAME(want, dc.get());
	return 0;
}

CORPUS_MAIN(T(t_gemm_tma_multicast))
