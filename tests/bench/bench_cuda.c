// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1's cost per launch on the sim backend beside libvgpu's own
 * launch of the same PTX kernel (the baseline, measured in the same run):
 *
 *   libvgpu:  vgpu_args_set_u32 + vgpu_kernel_launch + vgpu_job_wait +
 *             vgpu_job_free per launch, on the device's default queue
 *   libcuda:  cuLaunchKernel per launch on a stream (its queue, the wait
 *             for the stream's previous timeline point and the signal of
 *             the next, the job kept and reaped), one cuStreamSynchronize
 *             at the end
 *
 * Two kernels: an empty one (fixed cost only) and one storing a word per
 * thread (1 CTA of 128 threads).  Each figure is the best of REPS batches
 * of ITERS launches, the two sides' batches alternating; the ratio is
 * printed beside its target (<= 1.2x), never asserted.  And a 1 MiB cuMemcpyHtoD beside a memcpy of the same bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "bench/bench_summary.h"
#include "vgpu.h"

#define REPS 9
#define ITERS 2000
#define TARGET 1.2

static const char ptx[] =
	".version 8.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry empty(.param .u64 out, .param .u32 k)\n{\n\tret;\n}\n"
	".visible .entry store(.param .u64 out, .param .u32 k)\n{\n"
	"\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\tld.param.u64 %rd1, [out];\n\tld.param.u32 %r1, [k];\n"
	"\tmov.u32 %r2, %tid.x;\n\tmad.lo.s32 %r3, %r2, 2, %r1;\n"
	"\tmul.wide.u32 %rd2, %r2, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
	"\tst.global.u32 [%rd3], %r3;\n\tret;\n}\n";

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_cuda: %s failed (%d)\n", what, err);
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

struct cuda_side {
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUstream s;
	CUdeviceptr out;
};

/* ns per launch through libvgpu, one batch */
static double vgpu_batch(struct vgpu_side *v, unsigned int threads)
{
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { threads } };
	double t0 = now();

	for (unsigned int i = 0; i < ITERS; i++) {
		struct vgpu_job *job;

		CK(vgpu_args_set_u32(v->args, 1, i));
		CK(vgpu_kernel_launch(v->k, &cfg, v->args, &job));
		CK(vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE));
		vgpu_job_free(job);
	}
	return (now() - t0) / ITERS;
}

/* ns per launch through libcuda, one batch */
static double cuda_batch(struct cuda_side *c, unsigned int threads)
{
	unsigned int k = 0;
	void *params[] = { &c->out, &k };
	double t0 = now();

	for (k = 0; k < ITERS; k++)
		CK(cuLaunchKernel(c->f, 1, 1, 1, threads, 1, 1, 0, c->s, params, NULL));
	CK(cuStreamSynchronize(c->s));
	return (now() - t0) / ITERS;
}

/* the best batch of each, alternating (the machine's load changes) */
static void launches(const char *name, unsigned int threads, double *vgpu, double *cuda)
{
	struct vgpu_side v;
	struct cuda_side c;

	CK(vgpu_device_open("sim", &v.dev));
	CK(vgpu_program_from_ptx(v.dev, ptx, strlen(ptx), "bench.ptx", &v.prog, NULL, 0));
	CK(vgpu_program_find_kernel(v.prog, name, &v.k));
	CK(vgpu_bo_new(v.dev, 4096, 0, &v.out));
	CK(vgpu_args_new(v.k, &v.args));
	CK(vgpu_args_set_u64(v.args, 0, vgpu_bo_gpu_address(v.out)));
	CK(cuCtxCreate(&c.ctx, NULL, 0, 0));
	CK(cuModuleLoadData(&c.mod, ptx));
	CK(cuModuleGetFunction(&c.f, c.mod, name));
	CK(cuMemAlloc(&c.out, 4096));
	CK(cuStreamCreate(&c.s, CU_STREAM_NON_BLOCKING));
	*vgpu = *cuda = 1e30;
	for (int r = 0; r < REPS; r++) {
		double a = vgpu_batch(&v, threads), b = cuda_batch(&c, threads);

		if (a < *vgpu)
			*vgpu = a;
		if (b < *cuda)
			*cuda = b;
	}
	CK(cuStreamDestroy(c.s));
	CK(cuMemFree(c.out));
	CK(cuModuleUnload(c.mod));
	CK(cuCtxDestroy(c.ctx));
	vgpu_args_free(v.args);
	vgpu_bo_free(v.out);
	vgpu_program_free(v.prog);
	vgpu_device_close(v.dev);
}

static void copy_1mib(void)
{
	enum { N = 1 << 20 };
	char *src = malloc(N), *dst = malloc(N);
	double best_cu = 1e30, best_mc = 1e30;
	CUcontext ctx;
	CUdeviceptr d;

	if (!src || !dst)
		die("malloc", 0);
	memset(src, 7, N);
	CK(cuCtxCreate(&ctx, NULL, 0, 0));
	CK(cuMemAlloc(&d, N));
	for (int r = 0; r < REPS * 4; r++) {
		double t0 = now(), t1, t2;

		CK(cuMemcpyHtoD(d, src, N));
		t1 = now();
		memcpy(dst, src, N);
		__asm__ volatile("" ::"r"(dst) : "memory");
		t2 = now();
		if (t1 - t0 < best_cu)
			best_cu = t1 - t0;
		if (t2 - t1 < best_mc)
			best_mc = t2 - t1;
	}
	printf("cuMemcpyHtoD 1 MiB: %8.0f ns   memcpy: %8.0f ns   ratio %.2fx\n", best_cu, best_mc,
	       best_cu / best_mc);
	bench_row("cuMemcpyHtoD 1 MiB (ns) vs memcpy", bench_fmt("%.0f", best_cu),
		  bench_fmt("%.0f", best_mc), bench_fmt("%.2fx", best_cu / best_mc), NULL, -1);
	CK(cuMemFree(d));
	CK(cuCtxDestroy(ctx));
	free(src);
	free(dst);
}

int main(void)
{
	static const struct {
		const char *name;
		unsigned int threads;
	} kernels[] = { { "empty", 1 }, { "store", 128 } };

	setenv("VGPU_BACKEND", "sim", 1);
	CK(cuInit(0));
	printf("bench_cuda: ns per launch on the sim backend, best of %d x %d launches\n", REPS,
	       ITERS);
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		double base, cu, ratio;

		launches(kernels[i].name, kernels[i].threads, &base, &cu);
		ratio = cu / base;

		printf("%-6s cuLaunchKernel %8.0f ns   vgpu_kernel_launch %8.0f ns   ratio %.2fx   "
		       "target <= %.1fx: %s\n", kernels[i].name, cu, base, ratio, TARGET,
		       ratio <= TARGET ? "met" : "not met");
		bench_row(bench_fmt("cuLaunchKernel %s (ns)", kernels[i].name),
			  bench_fmt("%.0f", cu), bench_fmt("%.0f", base),
			  bench_fmt("%.2fx", ratio), bench_fmt("<= %.1fx", TARGET),
			  ratio <= TARGET);
	}
	copy_1mib();
	return 0;
}
