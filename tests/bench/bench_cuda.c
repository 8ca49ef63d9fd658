// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1's cost per launch on the sim backend beside libvgpu's own
 * launch of the same PTX kernel (the baseline, measured in the same run;
 * bench_launch.h):
 *
 *   libcuda:  cuLaunchKernel per launch on a stream (its queue, the wait
 *             for the stream's previous timeline point and the signal of
 *             the next, the job kept and reaped), one cuStreamSynchronize
 *             at the end
 *
 * And a 1 MiB cuMemcpyHtoD beside a memcpy of the same bytes.
 */
#include <cuda.h>

#include "bench/bench_summary.h"
#include "bench/bench_launch.h"

struct cuda_side {
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUstream s;
	CUdeviceptr out;
};

/* ns per launch through libcuda, one batch */
__attribute__((noinline)) static double cuda_batch(struct cuda_side *c, unsigned int threads)
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

	vgpu_side_open(&v, name);
	CK(cuCtxCreate(&c.ctx, NULL, 0, 0));
	CK(cuModuleLoadData(&c.mod, bench_ptx));
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
	vgpu_side_close(&v);
}

static void cu_copy(void *ctx, const void *src)
{
	CK(cuMemcpyHtoD(*(CUdeviceptr *)ctx, src, COPY_BYTES));
}

static void copy_1mib(void)
{
	CUcontext ctx;
	CUdeviceptr d;

	CK(cuCtxCreate(&ctx, NULL, 0, 0));
	CK(cuMemAlloc(&d, COPY_BYTES));
	copy_vs_memcpy("cuMemcpyHtoD", cu_copy, &d);
	CK(cuMemFree(d));
	CK(cuCtxDestroy(ctx));
}

int main(void)
{
	static const struct {
		const char *name;
		unsigned int threads;
	} kernels[] = { { "empty", 1 }, { "store", 128 } };
	size_t nk = sizeof(kernels) / sizeof(kernels[0]);

	setenv("VGPU_BACKEND", "sim", 1);
	bench_launch_options();
	if (bench_profile)
		nk = 1; /* the empty kernel only */
	CK(cuInit(0));
	printf("bench_cuda: ns per launch on the sim backend, best of %d x %d launches\n", REPS,
	       ITERS);
	for (size_t i = 0; i < nk; i++) {
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
	if (!bench_profile)
		copy_1mib();
	return 0;
}
