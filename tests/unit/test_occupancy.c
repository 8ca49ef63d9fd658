// SPDX-License-Identifier: MIT
/*
 * libcuda's occupancy arithmetic (libvgpu/cuda/cu_occupancy.c) on its own,
 * fed what an H200 reported: tests/cuda/real-gpu/occupancy-h200-2026-11-30/
 * (the output of occupancy.cu and occupancy2.cu there; its README says
 * how to read them).  Each kernel's register count, static shared memory,
 * limits and named barriers are the H200's (ptxas's, not vGPU's front
 * end's), each answer its driver's; with the h100 model's limits, vGPU's
 * arithmetic must give every one of them (clusters: see cluster_lines).
 * Then the vgpu model's limits (one CTA an SM) and the error cases.  The
 * API over it, end to end on the sim backend: test_cuda_lib.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_occupancy.h"
#include "vgpu_hw.h"
#include "kselftest_host.h"
#include "test_paths.h"

#define LOGS "tests/cuda/real-gpu/occupancy-h200-2026-11-30/"

/* the h100 model (docs/device.md): the H200's SM limits and GPCs */
static const uint8_t h100_gpcs[] = VGPU_H100_GPC_SMS;
static const struct cuv_occ_device h100 = {
	.sms = 132, .warp_size = 32, .max_threads = 1024, .warps_per_sm = 64,
	.ctas_per_sm = 32, .regs_per_sm = 65536, .smem_per_sm = 228 * 1024,
	.smem_cta = 227 * 1024, .cluster = 8, .cluster_max = 16,
	.gpc_sms = h100_gpcs, .gpcs = sizeof(h100_gpcs),
};

/* the vgpu model: one CTA an SM, 32 warps, all of 228 KiB to a CTA */
static const struct cuv_occ_device vgpu = {
	.sms = 4, .warp_size = 32, .max_threads = 1024, .warps_per_sm = 32,
	.ctas_per_sm = 1, .regs_per_sm = 65536, .smem_per_sm = 228 * 1024,
	.smem_cta = 228 * 1024, .cluster = 8, .cluster_max = 16,
};

static size_t b2d_64(int block)
{
	return (size_t)block * 64;
}

/* occupancy.cu's lists */
static const int dyn_sizes[] = { 0, 1, 1024, 49152, 102400, 232448 };
static const int carveouts[] = { 0, 10, 25, 50, 60, 100 };
static const int avail_blocks[] = { 32, 128, 256, 1000, 1024 };

struct tally {
	unsigned long checked, wrong;
};

static void check(struct tally *t, const char *what, const char *line, long want, long got)
{
	t->checked++;
	if (want == got)
		return;
	if (t->wrong++ < 20)
		fprintf(stderr, "# %s: H200 %ld, vGPU %ld: %s", what, want, got, line);
}

/* an error as the logs print it: -CUresult */
static long dyn_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int nblocks,
		     int block)
{
	size_t bytes = 0;
	CUresult r = cuv_occ_dyn_smem(d, f, nblocks, block, &bytes);

	return r ? -(long)r : (long)bytes;
}

/* the numbers of @p after its first @skip fields into @v; how many */
static int numbers(const char *p, int skip, long *v, int max)
{
	int n = 0, used;
	long x;

	while (*p && *p != ' ')
		p++;
	while (n < max && sscanf(p, "%ld%n", &x, &used) == 1) {
		p += used;
		if (skip) {
			skip--;
			continue;
		}
		v[n++] = x;
	}
	return n;
}

/*
 * occupancy.h200.log: a line against the arithmetic; @f is the kernel and
 * state that the K and S lines before it set.
 */
static void sweep_line(const char *line, const struct cuv_occ_func *f, struct tally *t)
{
	long v[16];
	int n = numbers(line, 0, v, 16), g;

	switch (line[0]) {
	case 'O': /* O block, then per dynamic size: flags 0, flags 1 */
		for (int i = 1; i < n; i++)
			check(t, "blocks", line, v[i],
			      cuv_occ_blocks(&h100, f, (int)v[0], (size_t)dyn_sizes[(i - 1) / 2]));
		break;
	case 'P': /* P dyn, then per limit 0, 200: block size, grid */
		for (int i = 1; i + 1 < n; i += 2) {
			check(t, "block size", line, v[i],
			      cuv_occ_best_block(&h100, f, NULL, (size_t)v[0], i == 1 ? 0 : 200, &g));
			check(t, "grid", line, v[i + 1], g);
		}
		break;
	case 'C': /* C, then per limit 0, 200: block size, grid (b -> 64 b bytes) */
		for (int i = 0; i + 1 < n && i < 4; i += 2) {
			check(t, "block size (b2d)", line, v[i],
			      cuv_occ_best_block(&h100, f, b2d_64, 0, i ? 200 : 0, &g));
			check(t, "grid (b2d)", line, v[i + 1], g);
		}
		break;
	case 'A': /* A nblocks, then per block size: bytes or -error */
		for (int i = 1; i < n; i++)
			check(t, "dynamic smem", line, v[i],
			      dyn_smem(&h100, f, (int)v[0], avail_blocks[i - 1]));
		break;
	}
}

TEST(the_h200s_answers_kernel_by_kernel)
{
	char path[PATH_MAX + 128], line[512];
	struct cuv_occ_func f = { 0 };
	struct tally t = { 0 };
	unsigned long kernels = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s/" LOGS "occupancy.h200.log", test_root);
	in = fopen(path, "r");
	ASSERT_NE(NULL, in);
	while (fgets(line, sizeof(line), in)) {
		int k, r, regs, smem, threads, dyn, st;

		if (sscanf(line, "K %d %d %d %d %d %d", &k, &r, &regs, &smem, &threads, &dyn) == 6) {
			/* kernels 1-3 and 5 use one named barrier, 0 and 4 none */
			f = (struct cuv_occ_func){ .num_regs = regs, .max_threads = threads,
						   .smem_static = (uint32_t)smem,
						   .max_dyn_smem = (uint32_t)dyn, .carveout = -1,
						   .barriers = k != 0 && k != 4 };
			kernels++;
			/*
			 * Without launch bounds, the H200 drops MAX_THREADS_PER_BLOCK
			 * to the CTAs (whole 4 warps) its registers fit: the cap
			 * vGPU holds NUM_REGS to, read backwards.
			 */
			if (k < 4 && threads < 1024) {
				check(&t, "regs cap", line, 1, cuv_occ_regs_cap(&h100, threads) >= regs);
				check(&t, "regs cap", line, 1,
				      cuv_occ_regs_cap(&h100, threads + 128) < regs);
			}
		} else if (sscanf(line, "S %d %d", &st, &dyn) == 2) {
			/* states 0-7: cache configs 0-3; then carveouts, default cache */
			f.max_dyn_smem = (uint32_t)dyn;
			f.cache = st / 2 < 4 ? (CUfunc_cache)(st / 2) : CU_FUNC_CACHE_PREFER_NONE;
			f.carveout = st / 2 < 4 ? -1 : carveouts[st / 2 - 4];
		} else {
			sweep_line(line, &f, &t);
		}
	}
	fclose(in);
	printf("# %lu kernels, %lu answers, %lu differ\n", kernels, t.checked, t.wrong);
	EXPECT_EQ(120ul, kernels);
	EXPECT_EQ(496008ul + 2 * 64, t.checked);
	EXPECT_EQ(0ul, t.wrong);
}

/*
 * occupancy2.h200.log, Z lines: MaxActiveClusters for clusters of 1, 2,
 * 3, 4, 8, 16, then MaxPotentialClusterSize: all as the H200, its GPCs
 * (VGPU_H100_GPC_SMS) included.
 */
static void cluster_line(const char *line, const struct cuv_occ_func *f, bool required_2,
			 struct tally *t)
{
	static const unsigned int sizes[] = { 1, 2, 3, 4, 8, 16 };
	long v[12];
	int n = numbers(line, 0, v, 12);
	bool np = v[0];
	int block = (int)v[1];
	size_t dyn = (size_t)v[2];

	if (n != 12)
		return;
	for (int i = 0; i < 6; i++) {
		long want = v[3 + i];
		int got = cuv_occ_clusters(&h100, f, block, dyn, sizes[i]);

		if (want < 0) /* 16 without the opt-in, another than __cluster_dims__ */
			continue;
		check(t, "clusters", line, want, got);
	}
	check(t, "cluster size", line, v[9], cuv_occ_cluster_size(&h100, f, block, dyn, np));
	/* without a cluster dimension: 0, or the __cluster_dims__ (2) */
	check(t, "clusters (no size)", line, v[10],
	      cuv_occ_clusters(&h100, f, block, dyn, required_2 ? 2 : 0));
	check(t, "blocks (clusters)", line, v[11], cuv_occ_blocks(&h100, f, block, dyn));
}

/*
 * occupancy2.h200.log, R and Q lines: the runtime's answers beside the
 * driver's for nvcc-built kernels (both the same on the H200), Q the
 * cuda_runtime.h templates' block sizes (dynamic size fixed; 64 B a thread).
 */
static void runtime_line(const char *line, const struct cuv_occ_func *f, struct tally *t)
{
	long v[8];
	int n = numbers(line, 0, v, 8), g;

	if (line[0] == 'R' && n == 6) { /* R block dyn: rt, drv blocks; rt, drv bytes */
		int block = (int)v[0];

		check(t, "rt = drv", line, v[2], v[3]);
		check(t, "blocks", line, v[3], cuv_occ_blocks(&h100, f, block, (size_t)v[1]));
		check(t, "dynamic smem", line, v[5],
		      dyn_smem(&h100, f, block > 32 ? 2 : block, (int)v[1] / 32 + 1));
	} else if (line[0] == 'Q' && n == 5) { /* Q dyn: block, grid; b2d: block, grid */
		check(t, "block size", line, v[1],
		      cuv_occ_best_block(&h100, f, NULL, (size_t)v[0], 0, &g));
		check(t, "grid", line, v[2], g);
		check(t, "block size (b2d)", line, v[3],
		      cuv_occ_best_block(&h100, f, b2d_64, 0, 0, &g));
		check(t, "grid (b2d)", line, v[4], g);
	}
}

TEST(the_h200s_answers_runtime_barriers_clusters)
{
	/* ptxas: named barriers of occupancy2.cu's kernels k0-k3, kb, kc, kd, ke */
	static const int barriers[] = { 0, 0, 0, 0, 16, 3, 0, 0 };
	char path[PATH_MAX + 128], line[512];
	struct cuv_occ_func f = { 0 };
	struct tally t = { 0 };
	unsigned long kernels = 0;
	int k = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s/" LOGS "occupancy2.h200.log", test_root);
	in = fopen(path, "r");
	ASSERT_NE(NULL, in);
	while (fgets(line, sizeof(line), in)) {
		int regs, threads;

		if (sscanf(line, "K %d %d %d", &k, &regs, &threads) == 3 && k >= 0 && k < 8) {
			/* __launch_bounds__(1024), (384), (128, 3): ptxas's caps */
			if (k >= 1 && k <= 3)
				check(&t, "regs cap", line, regs,
				      cuv_occ_regs_cap(&h100, k == 1 ? 1024 : 384));
			f = (struct cuv_occ_func){ .num_regs = regs, .max_threads = threads,
						   .max_dyn_smem = 48 * 1024, .carveout = -1,
						   .barriers = barriers[k] };
			kernels++;
		} else if (line[0] == 'Z') {
			f.max_dyn_smem = 200000; /* occupancy2.cu sets it before */
			cluster_line(line, &f, k == 6, &t);
		} else {
			runtime_line(line, &f, &t);
		}
	}
	fclose(in);
	printf("# %lu kernels, %lu answers, %lu differ\n", kernels, t.checked, t.wrong);
	EXPECT_EQ(8ul, kernels);
	EXPECT_EQ(2196ul + 3, t.checked);
	EXPECT_EQ(0ul, t.wrong);
}

/* The arithmetic by hand: registers, warps, shared memory, carveouts. */
TEST(h100_rules)
{
	struct cuv_occ_func f = { .num_regs = 32, .max_threads = 1024,
				  .max_dyn_smem = 48 * 1024, .carveout = -1 };
	int g;

	/* 32 registers: 1024 a warp, 16 warps a sub-partition: 64 warps */
	EXPECT_EQ(32, cuv_occ_blocks(&h100, &f, 32, 0));  /* the CTA limit */
	EXPECT_EQ(2, cuv_occ_blocks(&h100, &f, 1024, 0)); /* the warp limit */
	EXPECT_EQ(21, cuv_occ_blocks(&h100, &f, 65, 0));  /* 3 warps a CTA */
	/* 33 registers allocate as 40: 1280 a warp, 12 a sub-partition */
	f.num_regs = 33;
	EXPECT_EQ(1, cuv_occ_blocks(&h100, &f, 1024, 0));
	EXPECT_EQ(3, cuv_occ_blocks(&h100, &f, 512, 0));
	/* 65 registers: 72 a thread; 28 warps fit a CTA, not 32 */
	f.num_regs = 65;
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 1024, 0));
	EXPECT_EQ(1, cuv_occ_blocks(&h100, &f, 896, 0));
	f.num_regs = 257;
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 32, 0));
	f.num_regs = 0;
	EXPECT_EQ(32, cuv_occ_blocks(&h100, &f, 32, 0));
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 1025, 0)); /* no error: none */
	/* shared memory: 1 KiB reserved each, 128-byte granules */
	f.num_regs = 16;
	EXPECT_EQ(32, cuv_occ_blocks(&h100, &f, 32, 1));
	EXPECT_EQ(4, cuv_occ_blocks(&h100, &f, 32, 48 * 1024));
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 32, 48 * 1024 + 1)); /* above the attribute */
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 32, (size_t)1 << 40));
	f.max_dyn_smem = 227 * 1024;
	EXPECT_EQ(2, cuv_occ_blocks(&h100, &f, 32, 100 * 1024));
	EXPECT_EQ(1, cuv_occ_blocks(&h100, &f, 32, 227 * 1024));
	f.smem_static = 1;
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 32, 227 * 1024)); /* over a CTA's limit */
	f.smem_static = 0;
	/* carveout 25 %: 57 KiB rounds up to 64 KiB: 8 CTAs of 8 KiB */
	f.carveout = 25;
	EXPECT_EQ(8, cuv_occ_blocks(&h100, &f, 32, 7 * 1024));
	/* the block-size search takes 0 or 100 % only (as the H200): 2 CTAs
	 * of 61 KiB an SM at 1024 threads, where 25 % holds one */
	EXPECT_EQ(1, cuv_occ_blocks(&h100, &f, 1024, 60 * 1024));
	EXPECT_EQ(1024, cuv_occ_best_block(&h100, &f, NULL, 60 * 1024, 0, &g));
	EXPECT_EQ(2 * 132, g);
	f.carveout = 0; /* 0: one CTA's need rounded up, 8 KiB here */
	EXPECT_EQ(1, cuv_occ_blocks(&h100, &f, 32, 7 * 1024));
	f.carveout = -1;
	f.cache = CU_FUNC_CACHE_PREFER_EQUAL; /* 50 %: 114 KiB, 132 KiB carved */
	EXPECT_EQ(16, cuv_occ_blocks(&h100, &f, 32, 7 * 1024));
	f.cache = CU_FUNC_CACHE_PREFER_NONE;
	/* named barriers: 64 an SM */
	f.barriers = 3;
	EXPECT_EQ(21, cuv_occ_blocks(&h100, &f, 32, 0));
	f.barriers = 1;
	/* block sizes: the limit, the function's own limit, ties */
	EXPECT_EQ(1024, cuv_occ_best_block(&h100, &f, NULL, 0, 0, &g));
	EXPECT_EQ(264, g);
	/* 200: 9 CTAs, 1800 threads; 128: 16, 2048, all an SM holds */
	EXPECT_EQ(128, cuv_occ_best_block(&h100, &f, NULL, 0, 200, &g));
	EXPECT_EQ(16 * 132, g);
	EXPECT_EQ(1024, cuv_occ_best_block(&h100, &f, NULL, 0, 2000, &g));
	EXPECT_EQ(0, cuv_occ_best_block(&h100, &f, NULL, 0, -1, &g));
	EXPECT_EQ(0, g);
	f.max_threads = 96;
	EXPECT_EQ(64, cuv_occ_best_block(&h100, &f, NULL, 0, 0, &g));
	EXPECT_EQ(132 * 32, g);
	EXPECT_EQ(0, cuv_occ_best_block(&h100, &f, NULL, (size_t)1 << 30, 0, &g));
	EXPECT_EQ(0, g);
}

/* NUM_REGS's cap: ptxas's for launch bounds (the H200's figures) */
TEST(register_caps)
{
	EXPECT_EQ(64, cuv_occ_regs_cap(&h100, 1024));
	EXPECT_EQ(72, cuv_occ_regs_cap(&h100, 896));
	EXPECT_EQ(168, cuv_occ_regs_cap(&h100, 384));
	EXPECT_EQ(168, cuv_occ_regs_cap(&h100, 288)); /* 9 warps take 12 */
	EXPECT_EQ(255, cuv_occ_regs_cap(&h100, 256));
	EXPECT_EQ(255, cuv_occ_regs_cap(&h100, 1));
	EXPECT_EQ(64, cuv_occ_regs_cap(&vgpu, 1024));
}

TEST(vgpu_model_one_cta_an_sm)
{
	struct cuv_occ_func f = { .num_regs = 32, .max_threads = 1024,
				  .max_dyn_smem = 48 * 1024, .carveout = -1 };
	struct cuv_occ_device h132;
	size_t bytes = 0;
	int g;

	EXPECT_EQ(1, cuv_occ_blocks(&vgpu, &f, 32, 0));
	EXPECT_EQ(1, cuv_occ_blocks(&vgpu, &f, 1024, 48 * 1024));
	EXPECT_EQ(0, cuv_occ_blocks(&vgpu, &f, 1025, 0));
	f.num_regs = 64; /* 32 warps of 2048: all 65536 registers */
	EXPECT_EQ(1, cuv_occ_blocks(&vgpu, &f, 1024, 0));
	f.num_regs = 65;
	EXPECT_EQ(0, cuv_occ_blocks(&vgpu, &f, 1024, 0));
	f.num_regs = 32;
	/* no reserve: a CTA may have all 228 KiB, once opted in */
	EXPECT_EQ(0, cuv_occ_blocks(&vgpu, &f, 32, 228 * 1024));
	f.max_dyn_smem = 228 * 1024;
	EXPECT_EQ(1, cuv_occ_blocks(&vgpu, &f, 32, 228 * 1024));
	EXPECT_EQ(0, (int)cuv_occ_dyn_smem(&vgpu, &f, 1, 256, &bytes));
	EXPECT_EQ(228u * 1024, bytes);
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&vgpu, &f, 2, 32, &bytes));
	/* 1024 threads fill an SM at once: the first size tried */
	EXPECT_EQ(1024, cuv_occ_best_block(&vgpu, &f, NULL, 0, 0, &g));
	EXPECT_EQ(4, g);
	EXPECT_EQ(100, cuv_occ_best_block(&vgpu, &f, NULL, 0, 100, &g));
	EXPECT_EQ(4, g);
	/* clusters: 4 SMs of one CTA each */
	EXPECT_EQ(4, cuv_occ_clusters(&vgpu, &f, 128, 0, 1));
	EXPECT_EQ(2, cuv_occ_clusters(&vgpu, &f, 128, 0, 2));
	EXPECT_EQ(1, cuv_occ_clusters(&vgpu, &f, 128, 0, 4));
	EXPECT_EQ(0, cuv_occ_clusters(&vgpu, &f, 128, 0, 8));
	EXPECT_EQ(0, cuv_occ_clusters(&vgpu, &f, 128, 0, 0));
	EXPECT_EQ(4, cuv_occ_cluster_size(&vgpu, &f, 128, 0, false));
	EXPECT_EQ(4, cuv_occ_cluster_size(&vgpu, &f, 128, 0, true));
	EXPECT_EQ(0, cuv_occ_cluster_size(&vgpu, &f, 2048, 0, true));
	/*
	 * The same function on h100: 8 CTAs of a cluster an SM; clusters
	 * of 3 on distinct SMs of a GPC (18, 18, 16 x 5, 8), of 2 anywhere,
	 * of 16 not in the GPC of 8 SMs (its 64 slots notwithstanding).
	 */
	EXPECT_EQ(2 * (18 * 8 / 3) + 5 * (16 * 8 / 3) + 8 * 8 / 3,
		  cuv_occ_clusters(&h100, &f, 128, 0, 3));
	EXPECT_EQ(132 * 8 / 2, cuv_occ_clusters(&h100, &f, 128, 0, 2));
	EXPECT_EQ(2 * (18 * 8 / 16) + 5 * (16 * 8 / 16), cuv_occ_clusters(&h100, &f, 128, 0, 16));
	h132 = h100;
	h132.gpc_sms = NULL; /* h100's limits, its SMs as one GPC (sms= set) */
	EXPECT_EQ(132 * 8 / 3, cuv_occ_clusters(&h132, &f, 128, 0, 3));
	EXPECT_EQ(132 * 8 / 16, cuv_occ_clusters(&h132, &f, 128, 0, 16));
	EXPECT_EQ(8, cuv_occ_cluster_size(&h100, &f, 128, 0, false));
	EXPECT_EQ(16, cuv_occ_cluster_size(&h100, &f, 128, 0, true));
}

/* What the H200 answered CUDA_ERROR_INVALID_VALUE for (occupancy2's E line). */
TEST(errors)
{
	struct cuv_occ_func f = { .num_regs = 64, .max_threads = 1024,
				  .max_dyn_smem = 48 * 1024, .carveout = -1 };
	size_t bytes = 7;

	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, 0, 0));
	EXPECT_EQ(0, cuv_occ_blocks(&h100, &f, -1, 0));
	EXPECT_EQ(32, cuv_occ_blocks(&h100, &f, 32, 0));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, 0, 32, &bytes));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, -1, 32, &bytes));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, 33, 32, &bytes));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, 64, 32, &bytes));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, 1, 0, &bytes));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, 1, -1, &bytes));
	EXPECT_EQ(CUDA_ERROR_INVALID_VALUE, (int)cuv_occ_dyn_smem(&h100, &f, 1, 1025, &bytes));
	EXPECT_EQ(7u, bytes); /* untouched */
	EXPECT_EQ(0, (int)cuv_occ_dyn_smem(&h100, &f, 32, 32, &bytes));
	EXPECT_EQ(7296u, bytes); /* 228 KiB / 32, in 128-byte granules */
}

TEST_HARNESS_MAIN
