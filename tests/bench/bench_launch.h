/* SPDX-License-Identifier: MIT */
/*
 * The baseline of the CUDA launch benchmarks (bench_cuda.c: cuLaunchKernel;
 * bench_cudart.cu: <<<>>>): libvgpu's own launch of the same kernels on
 * the sim backend, and what both sides share.  C and C++ (nvcc's g++).
 *
 *   libvgpu:  vgpu_args_set_u32 + vgpu_kernel_launch + vgpu_job_wait +
 *             vgpu_job_free per launch, on the device's default queue
 *
 * Two kernels: "empty" (the fixed cost only) and "store" (1 CTA of 128
 * threads, out[tid] = 2 tid + k).  Each figure is the best of REPS
 * batches of ITERS launches, the two sides' batches alternating; the
 * ratio is printed beside its target (<= 1.2x), never asserted.
 *
 * VGPU_BENCH_LAUNCHES=N (for callgrind): the empty kernel only, one batch
 * of N launches each side, no copy; the batches are functions of their
 * own (vgpu_batch, cuda_batch, cudart_batch), so that the difference of
 * their inclusive costs between two values of N, divided by the
 * difference of the Ns, is the cost of a launch without the setup.
 */
#ifndef VGPU_BENCH_LAUNCH_H
#define VGPU_BENCH_LAUNCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vgpu.h"

static int bench_reps = 9;
static unsigned int bench_iters = 2000;
static int bench_profile; /* VGPU_BENCH_LAUNCHES given */
#define REPS bench_reps
#define ITERS bench_iters
#define TARGET 1.2

static inline void bench_launch_options(void)
{
	const char *e = getenv("VGPU_BENCH_LAUNCHES");

	if (e && *e) {
		bench_profile = 1;
		bench_reps = 1;
		bench_iters = (unsigned int)strtoul(e, NULL, 0);
		if (!bench_iters)
			bench_iters = 1;
	}
}

static const char bench_ptx[] =
	".version 8.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry empty(.param .u64 out, .param .u32 k)\n{\n\tret;\n}\n"
	".visible .entry store(.param .u64 out, .param .u32 k)\n{\n"
	"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [k];\n"
	"\tmov.u32 %r2, %tid.x;\n\tmad.lo.s32 %r3, %r2, 2, %r1;\n"
	"\tmul.wide.u32 %rd2, %r2, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
	"\tst.global.u32 [%rd3], %r3;\n\tret;\n}\n";

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline void die(const char *what, int err)
{
	fprintf(stderr, "bench: %s failed (%d)\n", what, err);
	exit(1);
}

#define CK(call)                                 \
	do {                                     \
		int e_ = (int)(call);            \
		if (e_)                          \
			die(#call, e_);          \
	} while (0)

struct vgpu_side {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args;
	struct vgpu_bo *out;
};

static inline void vgpu_side_open(struct vgpu_side *v, const char *kernel)
{
	CK(vgpu_device_open("sim", &v->dev));
	CK(vgpu_program_from_ptx(v->dev, bench_ptx, strlen(bench_ptx), "bench.ptx", &v->prog,
				 NULL, 0));
	CK(vgpu_program_find_kernel(v->prog, kernel, &v->k));
	CK(vgpu_bo_new(v->dev, 4096, 0, &v->out));
	CK(vgpu_args_new(v->k, &v->args));
	CK(vgpu_args_set_u64(v->args, 0, vgpu_bo_gpu_address(v->out)));
}

static inline void vgpu_side_close(struct vgpu_side *v)
{
	vgpu_args_free(v->args);
	vgpu_bo_free(v->out);
	vgpu_program_free(v->prog);
	vgpu_device_close(v->dev);
}

/* ns per launch through libvgpu, one batch */
__attribute__((noinline)) static double vgpu_batch(struct vgpu_side *v, unsigned int threads)
{
	struct vgpu_launch_config cfg;
	double t0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.grid[0] = 1;
	cfg.block[0] = threads;
	t0 = now();
	for (unsigned int i = 0; i < ITERS; i++) {
		struct vgpu_job *job;

		CK(vgpu_args_set_u32(v->args, 1, i));
		CK(vgpu_kernel_launch(v->k, &cfg, v->args, &job));
		CK(vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE));
		vgpu_job_free(job);
	}
	return (now() - t0) / ITERS;
}

/*
 * A 1 MiB copy from host memory by @copy (@what: its name) beside a
 * memcpy of the same bytes, best of REPS * 4 each, alternating; printed
 * and as a bench_row (needs bench_summary.h first).
 */
#define COPY_BYTES (1u << 20)
static inline void copy_vs_memcpy(const char *what, void (*copy)(void *ctx, const void *src),
				  void *ctx)
{
	char *src = (char *)malloc(COPY_BYTES), *dst = (char *)malloc(COPY_BYTES);
	double best = 1e30, best_mc = 1e30;

	if (!src || !dst)
		die("malloc", 0);
	memset(src, 7, COPY_BYTES);
	for (int r = 0; r < REPS * 4; r++) {
		double t0 = now(), t1, t2;

		copy(ctx, src);
		t1 = now();
		memcpy(dst, src, COPY_BYTES);
		__asm__ volatile("" ::"r"(dst) : "memory");
		t2 = now();
		if (t1 - t0 < best)
			best = t1 - t0;
		if (t2 - t1 < best_mc)
			best_mc = t2 - t1;
	}
	printf("%s 1 MiB: %8.0f ns   memcpy: %8.0f ns   ratio %.2fx\n", what, best, best_mc,
	       best / best_mc);
	bench_row(bench_fmt("%s 1 MiB (ns) vs memcpy", what), bench_fmt("%.0f", best),
		  bench_fmt("%.0f", best_mc), bench_fmt("%.2fx", best / best_mc), NULL, -1);
	free(src);
	free(dst);
}

#endif
