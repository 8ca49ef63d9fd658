// SPDX-License-Identifier: MIT
/*
 * Bytes a second through a real TMA pipeline kernel (issue 32 §2): the
 * corpus's tma_ring (tests/corpus/tma_ring.h, CUTLASS's producer warp and
 * consumer warps over full and empty mbarriers, libcu++'s cuda::ptx
 * cp.async.bulk), built by nvcc and run through libcudart.so.13 on the sim
 * backend, beside memcpy of the same tiles into a ring of as many host
 * buffers, in the same run.  4 CTAs of 1 producer and 4 consumer warps,
 * 16 MiB in all, tiles of 4, 16 and 64 KiB (4 stages; 3 of 64 KiB, which
 * is what fits 227 KiB), with consumers that only wait and release the
 * stages (the copies' rate) and with consumers that read every word
 * (summed and checked: what a kernel that uses the tiles moves).  The
 * time is the launch's and its synchronisation's, the best of 5.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>

#include "bench/bench_summary.h"
#include "tma_ring.h"

#define TOTAL (16u << 20)
#define CTAS 4
#define CONSUMERS 4
#define REPS 5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define CKR(call)                                                                 \
	do {                                                                      \
		cudaError_t e_ = (call);                                          \
		if (e_ != cudaSuccess) {                                          \
			fprintf(stderr, "bench_tma: %s: %s\n", #call,             \
				cudaGetErrorName(e_));                            \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

/* ns for memcpy of the tiles in order into a ring of @stages buffers */
static double memcpy_ring(const char *src, char *ring, int stages, int tile)
{
	double best = 1e30;

	for (int r = 0; r < REPS; r++) {
		double t0 = now_ns();

		for (unsigned int t = 0; t < TOTAL / tile; t++)
			memcpy(ring + (size_t)(t % stages) * tile, src + (size_t)t * tile, tile);
		/* keep the copies: the ring's first word is read */
		__asm__ volatile("" : : "r"(ring[0]) : "memory");
		double ns = now_ns() - t0;
		if (ns < best)
			best = ns;
	}
	return best;
}

template <int STAGES, bool READ>
static double ring_kernel(const int4 *in, unsigned long long *sums, int tile)
{
	size_t smem = (size_t)STAGES * tile;
	int tiles = TOTAL / CTAS / tile;
	double best = 1e30;

	CKR(cudaFuncSetAttribute(tma_ring<STAGES, READ>, cudaFuncAttributeMaxDynamicSharedMemorySize,
				 (int)smem));
	for (int r = 0; r <= REPS; r++) { /* the first run compiles and warms */
		CKR(cudaMemset(sums, 0, sizeof(*sums) * CTAS * tiles));
		double t0 = now_ns();

		tma_ring<STAGES, READ><<<CTAS, (1 + CONSUMERS) * 32, smem>>>(in, sums, tiles, tile);
		CKR(cudaGetLastError());
		CKR(cudaDeviceSynchronize());
		double ns = now_ns() - t0;
		if (r && ns < best)
			best = ns;
	}
	return best;
}

static bool sums_right(const unsigned int *h, const unsigned long long *sums, int tile)
{
	std::vector<unsigned long long> got(TOTAL / tile), want(TOTAL / tile);

	CKR(cudaMemcpy(got.data(), sums, got.size() * sizeof(got[0]), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < TOTAL / 4; i++)
		want[i / (tile / 4)] += h[i];
	return got == want;
}

static void row(const char *what, int tile, double ns, double base_ns, const char *target,
		double want)
{
	double gbs = TOTAL / ns, base = TOTAL / base_ns, ratio = gbs / base;

	printf("  %-34s %5d KiB tiles  %7.2f GB/s   memcpy %7.2f GB/s   %3.0f%%%s%s\n", what,
	       tile / 1024, gbs, base, 100 * ratio, target ? "   target " : "",
	       target ? target : "");
	bench_row(bench_fmt("TMA ring, %s, %d KiB", what, tile / 1024),
		  bench_fmt("%.2f GB/s", gbs), bench_fmt("memcpy %.2f GB/s", base),
		  bench_fmt("%.0f%%", 100 * ratio), target, target ? ratio >= want : -1);
}

static bool copies_only; /* VGPU_BENCH_TMA=copies: the first row of each size (callgrind) */

template <int STAGES>
static void one_size(const unsigned int *h, const int4 *in, unsigned long long *sums, int tile,
		     const char *target, double want)
{
	std::vector<char> ring((size_t)STAGES * tile + 128);
	char *r = ring.data() + (128 - (uintptr_t)ring.data() % 128) % 128;
	double base = memcpy_ring((const char *)h, r, STAGES, tile);
	double copy = ring_kernel<STAGES, false>(in, sums, tile);
	double read;

	if (copies_only) {
		row("copies (consumers release)", tile, copy, base, target, want);
		return;
	}
	read = ring_kernel<STAGES, true>(in, sums, tile);
	if (!sums_right(h, sums, tile)) {
		fprintf(stderr, "bench_tma: the ring's sums are wrong (%d-byte tiles)\n", tile);
		exit(1);
	}
	row("copies (consumers release)", tile, copy, base, target, want);
	row("consumers read every word", tile, read, base, NULL, 0);
}

int main(void)
{
	std::vector<unsigned int> h(TOTAL / 4);
	unsigned long long *sums;
	int4 *in;

	setenv("VGPU_BACKEND", "sim", 1);
	copies_only = getenv("VGPU_BENCH_TMA") && !strcmp(getenv("VGPU_BENCH_TMA"), "copies");
	for (size_t i = 0; i < h.size(); i++)
		h[i] = (unsigned int)(i * 2654435761u);
	CKR(cudaMalloc(&in, TOTAL));
	CKR(cudaMalloc(&sums, sizeof(*sums) * (TOTAL / 1024)));
	CKR(cudaMemcpy(in, h.data(), TOTAL, cudaMemcpyHostToDevice));
	printf("bench_tma: tests/corpus/tma_ring.h, %d CTAs x (1 producer + %d consumer warps), "
	       "%u MiB, best of %d\n", CTAS, CONSUMERS, TOTAL >> 20, REPS);
	one_size<4>(h.data(), in, sums, 4096, ">= 60%", 0.6);
	one_size<4>(h.data(), in, sums, 16384, NULL, 0);
	one_size<3>(h.data(), in, sums, 65536, ">= 90%", 0.9);
	CKR(cudaFree(sums));
	CKR(cudaFree(in));
	return 0;
}
