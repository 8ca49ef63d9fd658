// SPDX-License-Identifier: MIT
/*
 * libcudart.so.13's cost per launch on the sim backend: a kernel launched
 * with <<<>>> (nvcc's __cudaPushCallConfiguration + cudaLaunchKernel
 * through the runtime, then libcuda) beside libvgpu's own launch of the
 * same kernel (the baseline, measured in the same run: bench_launch.h).
 * The kernels below compute what bench_launch.h's PTX does.
 *
 *   <<<>>>:  kernel<<<1, threads, 0, stream>>>(out, k) per launch, one
 *            cudaStreamSynchronize at the end
 *
 * And a 1 MiB cudaMemcpy host to device beside a memcpy of the same bytes.
 * Built by nvcc as the CUDA tests are (-cudart shared, PTX embedded) and
 * run against vGPU's libcudart.so.13 (its RUNPATH).
 */
#include <cuda_runtime.h>

#include "bench/bench_summary.h"
#include "bench/bench_launch.h"

__global__ void empty(unsigned int *out, unsigned int k)
{
}

__global__ void store(unsigned int *out, unsigned int k)
{
	out[threadIdx.x] = threadIdx.x * 2 + k;
}

#define CKR(call)                                               \
	do {                                                    \
		cudaError_t e_ = (call);                        \
		if (e_ != cudaSuccess)                          \
			die(#call, (int)e_);                    \
	} while (0)

/* ns per launch through <<<>>>, one batch */
__attribute__((noinline)) static double cudart_batch(bool st, unsigned int threads,
							unsigned int *out, cudaStream_t s)
{
	double t0 = now();

	for (unsigned int k = 0; k < ITERS; k++) {
		if (st)
			store<<<1, threads, 0, s>>>(out, k);
		else
			empty<<<1, threads, 0, s>>>(out, k);
	}
	CKR(cudaStreamSynchronize(s));
	CKR(cudaGetLastError());
	return (now() - t0) / ITERS;
}

static void launches(const char *name, unsigned int threads, double *vgpu, double *rt)
{
	bool st = !strcmp(name, "store");
	unsigned int *out, host[128];
	struct vgpu_side v;
	cudaStream_t s;

	vgpu_side_open(&v, name);
	CKR(cudaMalloc(&out, sizeof(host)));
	CKR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	*vgpu = *rt = 1e30;
	for (int r = 0; r < REPS; r++) {
		double a = vgpu_batch(&v, threads), b = cudart_batch(st, threads, out, s);

		if (a < *vgpu)
			*vgpu = a;
		if (b < *rt)
			*rt = b;
	}
	/* the launches ran: the last store's values */
	if (st) {
		CKR(cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost));
		for (unsigned int i = 0; i < threads; i++)
			if (host[i] != i * 2 + ITERS - 1)
				die("the store kernel's result", (int)i);
	}
	CKR(cudaStreamDestroy(s));
	CKR(cudaFree(out));
	vgpu_side_close(&v);
}

static void rt_copy(void *ctx, const void *src)
{
	CKR(cudaMemcpy(ctx, src, COPY_BYTES, cudaMemcpyHostToDevice));
}

static void copy_1mib(void)
{
	void *d;

	CKR(cudaMalloc(&d, COPY_BYTES));
	copy_vs_memcpy("cudaMemcpy HtoD", rt_copy, d);
	CKR(cudaFree(d));
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
	printf("bench_cudart: ns per launch on the sim backend, best of %d x %d launches\n", REPS,
	       ITERS);
	for (size_t i = 0; i < nk; i++) {
		double base, rt, ratio;

		launches(kernels[i].name, kernels[i].threads, &base, &rt);
		ratio = rt / base;
		printf("%-6s <<<>>> %8.0f ns   vgpu_kernel_launch %8.0f ns   ratio %.2fx   "
		       "target <= %.1fx: %s\n", kernels[i].name, rt, base, ratio, TARGET,
		       ratio <= TARGET ? "met" : "not met");
		bench_row(bench_fmt("<<<>>> %s (ns)", kernels[i].name), bench_fmt("%.0f", rt),
			  bench_fmt("%.0f", base), bench_fmt("%.2fx", ratio),
			  bench_fmt("<= %.1fx", TARGET), ratio <= TARGET);
	}
	if (!bench_profile)
		copy_1mib();
	return 0;
}
