// SPDX-License-Identifier: MIT
/*
 * The TMA ring of tma_ring.h (CUTLASS's warp-specialised producer and
 * consumers, libcu++'s cuda::ptx: cp.async.bulk, mbarrier expect_tx,
 * try_wait.parity on full and empty barriers): every tile's sum checked,
 * so a stage refilled before its consumers released it, or read before
 * its copy completed, is a wrong sum.  Shapes: 4 stages of 4 KiB on 3
 * CTAs, 2 stages of 1 KiB over many rounds (the parities wrap), 3 stages
 * of 32 KiB (dynamic shared memory above 48 KiB), and the ring whose
 * consumers do not read (bench_tma's copy-only form), which must end and
 * write nothing.
 */
#include "corpus.h"
#include "tma_ring.h"

template <int STAGES>
static int ring(int ctas, int consumers, int tiles, int tile_bytes, uint32_t seed)
{
	size_t words = (size_t)ctas * tiles * tile_bytes / 4;
	std::vector<uint32_t> h = corpus_ints<uint32_t>(words, seed, 0xffffffffu);
	dbuf<uint32_t> din(h);
	dbuf<unsigned long long> sums((size_t)ctas * tiles);
	size_t smem = (size_t)STAGES * tile_bytes;

	sums.zero();
	if (smem > 48 * 1024)
		CHECK_OK(cudaFuncSetAttribute(tma_ring<STAGES, true>,
					      cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
	tma_ring<STAGES, true><<<ctas, (1 + consumers) * 32, smem>>>((const int4 *)din.p, sums,
								     tiles, tile_bytes);
	CHECK_LAUNCH();
	std::vector<unsigned long long> want((size_t)ctas * tiles);
	for (size_t i = 0; i < words; i++)
		want[i / (tile_bytes / 4)] += h[i];
	CHECK_SAME(want, sums.get());
	return 0;
}

static int t_ring_4k(void)
{
	return ring<4>(3, 4, 10, 4096, 401);
}

static int t_ring_wraps(void)
{
	return ring<2>(1, 2, 37, 1024, 402);
}

static int t_ring_32k(void)
{
	return ring<3>(2, 7, 7, 32768, 403);
}

/* consumers that only wait and release: the ring still ends, no sums */
static int t_ring_copy_only(void)
{
	const int ctas = 2, tiles = 9, tile_bytes = 2048;
	std::vector<uint32_t> h = corpus_ints<uint32_t>((size_t)ctas * tiles * tile_bytes / 4, 404,
							 0xffffffffu);
	dbuf<uint32_t> din(h);
	dbuf<unsigned long long> sums((size_t)ctas * tiles);

	sums.zero();
	tma_ring<4, false><<<ctas, 3 * 32, 4 * tile_bytes>>>((const int4 *)din.p, sums, tiles,
							     tile_bytes);
	CHECK_LAUNCH();
	CHECK_SAME(std::vector<unsigned long long>((size_t)ctas * tiles), sums.get());
	return 0;
}

CORPUS_MAIN(T(t_ring_4k), T(t_ring_wraps), T(t_ring_32k), T(t_ring_copy_only))
