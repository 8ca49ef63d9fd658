// SPDX-License-Identifier: MIT
/*
 * test_cudart_rdc_cdp: device-side launch (CUDA dynamic parallelism,
 * nvcc -rdc=true with libcudadevrt: __cudaCDP2GetParameterBufferV2 and
 * __cudaCDP2LaunchDeviceV2), the device runtime of libvgpu/ptx/ptx_cdp.c
 * and the device's side in qemu-device/core/cdp.c.  What an H200 does
 * with the same launches: tests/cuda/real-gpu/cdp-h200-2026-11-30/.
 */
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <cooperative_groups.h>

#include "cdp_skip.h"
#include "ktap.h"

namespace cg = cooperative_groups;

__device__ int order_ctr;

__global__ void child(int *p, int v, char c, double d)
{
	p[blockIdx.x * blockDim.x + threadIdx.x] =
		(int)(blockIdx.x * blockDim.x + threadIdx.x) + v + c + (int)d;
}

/* each block launches its own child grid; q[0] written before the launch */
__global__ void parent(int *p, int *q)
{
	if (threadIdx.x == 0) {
		if (blockIdx.x == 0)
			q[0] = 42;
		child<<<2, 32>>>(p + blockIdx.x * 64, 3, 'a', 2.5);
	}
}

__global__ void copy_q(int *q)
{
	q[1] = q[0] + 1;
}

__global__ void parent_writes_then_launches(int *q)
{
	q[0] = 41;
	copy_q<<<1, 1>>>(q);
}

/* the children's results, checked on the host */
static int test_children(void)
{
	int *p = nullptr, *q = nullptr, h[128], hq[2];

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&p, sizeof(h)));
	CHECK_OK(cudaMalloc(&q, sizeof(hq)));
	CHECK_OK(cudaMemset(p, 0xff, sizeof(h)));
	parent<<<2, 4>>>(p, q);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost));
	for (int b = 0; b < 2; b++)
		for (int i = 0; i < 64; i++)
			CHECK(h[b * 64 + i] == i + 3 + 'a' + 2);
	/* memory the parent wrote before the launch is the child's */
	parent_writes_then_launches<<<1, 1>>>(q);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(hq, q, sizeof(hq), cudaMemcpyDeviceToHost));
	CHECK(hq[0] == 41 && hq[1] == 42);
	CHECK_OK(cudaFree(p));
	CHECK_OK(cudaFree(q));
	return 0;
}

__global__ void rec(int *log, int tag)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		log[atomicAdd(&order_ctr, 1)] = tag;
}

/* tests/cuda/real-gpu/cdp-h200-2026-11-30/probe.cu's parent, its launches */
__global__ void order_parent(int *log)
{
	rec<<<1, 1, 0, cudaStreamTailLaunch>>>(log, 100);
	rec<<<1, 1>>>(log, 1);
	rec<<<1, 1, 0, cudaStreamTailLaunch>>>(log, 101);
	rec<<<1, 1>>>(log, 2);
	rec<<<1, 1, 0, cudaStreamFireAndForget>>>(log, 50);
	log[atomicAdd(&order_ctr, 1)] = 999;
}

static int pos(const int *log, int n, int tag)
{
	for (int i = 0; i < n; i++)
		if (log[i] == tag)
			return i;
	return -1;
}

/*
 * NULL-stream children in launch order, tail launches after everything
 * else in launch order, the fire-and-forget one somewhere; the H200 ran
 * them as 1 2 999 50 100 101 (its children start while the parent runs).
 */
static int test_order(void)
{
	int *log = nullptr, h[8], z = 0, n = 0;

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&log, sizeof(h)));
	CHECK_OK(cudaMemset(log, 0xff, sizeof(h)));
	CHECK_OK(cudaMemcpyToSymbol(order_ctr, &z, sizeof(z)));
	order_parent<<<1, 1>>>(log);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, log, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpyFromSymbol(&n, order_ctr, sizeof(n)));
	printf("# order: %d %d %d %d %d %d\n", h[0], h[1], h[2], h[3], h[4], h[5]);
	CHECK(n == 6 && h[6] == -1);
	CHECK(pos(h, 6, 1) >= 0 && pos(h, 6, 2) > pos(h, 6, 1));
	CHECK(pos(h, 6, 999) >= 0 && pos(h, 6, 50) >= 0);
	CHECK(h[4] == 100 && h[5] == 101);
	CHECK_OK(cudaFree(log));
	return 0;
}

__global__ void grand(int *log)
{
	log[atomicAdd(&order_ctr, 1)] = 3;
}

__global__ void mid(int *log)
{
	log[atomicAdd(&order_ctr, 1)] = 2;
	grand<<<1, 1>>>(log);
}

__global__ void top(int *log)
{
	log[atomicAdd(&order_ctr, 1)] = 1;
	mid<<<1, 1>>>(log);
	/* after mid in the block's stream: after mid's grid is complete,
	 * which it is not before grand's is */
	rec<<<1, 1>>>(log, 4);
}

/* a child that launches a grandchild; the next child runs after both */
static int test_grandchild(void)
{
	int *log = nullptr, h[6], z = 0;

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&log, sizeof(h)));
	CHECK_OK(cudaMemset(log, 0xff, sizeof(h)));
	CHECK_OK(cudaMemcpyToSymbol(order_ctr, &z, sizeof(z)));
	top<<<1, 1>>>(log);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, log, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(h[0] == 1 && h[1] == 2 && h[2] == 3 && h[3] == 4 && h[4] == -1);
	CHECK_OK(cudaFree(log));
	return 0;
}

__global__ void never(int *log)
{
	log[7] = 1;
}

/* the H200's answers (probe.cu): 0, 9 9 0, 9, 9 */
__global__ void bad_parent(int *log, int *errs)
{
	rec<<<1, 1>>>(log, 5);
	errs[0] = cudaGetLastError();
	never<<<1, 2048>>>(log);
	errs[1] = cudaPeekAtLastError();
	errs[2] = cudaGetLastError();
	errs[3] = cudaGetLastError();
	never<<<dim3(1, 1, 0), 1>>>(log);
	errs[4] = cudaGetLastError();
	never<<<1, 32, 1 << 20>>>(log);
	errs[5] = cudaGetLastError();
}

/* a launch that fails validation: the error to the launching thread */
static int test_launch_error(void)
{
	int *log = nullptr, *errs = nullptr, h[8], e[8], z = 0;

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&log, sizeof(h)));
	CHECK_OK(cudaMalloc(&errs, sizeof(e)));
	CHECK_OK(cudaMemset(log, 0xff, sizeof(h)));
	CHECK_OK(cudaMemset(errs, 0xff, sizeof(e)));
	CHECK_OK(cudaMemcpyToSymbol(order_ctr, &z, sizeof(z)));
	bad_parent<<<1, 1>>>(log, errs);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, log, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(e, errs, sizeof(e), cudaMemcpyDeviceToHost));
	CHECK(e[0] == cudaSuccess);
	CHECK(e[1] == cudaErrorInvalidConfiguration && e[2] == cudaErrorInvalidConfiguration);
	CHECK(e[3] == cudaSuccess);
	CHECK(e[4] == cudaErrorInvalidConfiguration && e[5] == cudaErrorInvalidConfiguration);
	CHECK(h[0] == 5 && h[7] == -1); /* the good child ran, the bad ones not */
	CHECK_OK(cudaFree(log));
	CHECK_OK(cudaFree(errs));
	return 0;
}

__global__ void pend(int *log, int *errs, int n)
{
	for (int i = 0; i < n; i++) {
		rec<<<1, 1>>>(log, i);
		errs[i] = cudaGetLastError();
	}
}

/*
 * cudaLimitDevRuntimePendingLaunchCount: a grid's children wait for it to
 * end on vGPU, so all its launches are pending; past the limit
 * cudaErrorLaunchPendingCountExceeded.  Below 32 the limit is 32, as an
 * H200 reads it back (probe_depth_limit; so its 8 launches under a limit
 * of 4 all ran: probe.cu).
 */
static int test_pending_limit(void)
{
	int *log = nullptr, *errs = nullptr, e[40], n = 0;
	size_t lim = 0;

	CDP_OR_SKIP();
	CHECK_OK(cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount));
	CHECK(lim == 2048);
	/* below 32 it reads 32, as on the H200 (probe_depth_limit) */
	CHECK_OK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4));
	CHECK_OK(cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount));
	CHECK(lim == 32);
	CHECK_OK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 33));
	CHECK_OK(cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount));
	CHECK(lim == 33);
	CHECK_OK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32));
	CHECK_OK(cudaMalloc(&log, 4 * 72));
	CHECK_OK(cudaMalloc(&errs, sizeof(e)));
	CHECK_OK(cudaMemcpyToSymbol(order_ctr, &n, sizeof(n)));
	pend<<<1, 1>>>(log, errs, 40);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(e, errs, sizeof(e), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpyFromSymbol(&n, order_ctr, sizeof(n)));
	for (int i = 0; i < 40; i++)
		CHECK(e[i] == (i < 32 ? cudaSuccess : cudaErrorLaunchPendingCountExceeded));
	CHECK(n == 32);
	/* the slots are free again: the next grid launches 32 again */
	pend<<<1, 1>>>(log, errs, 32);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(e, errs, sizeof(e), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 32; i++)
		CHECK(e[i] == cudaSuccess);
	CHECK_OK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 2048));
	CHECK_OK(cudaFree(log));
	CHECK_OK(cudaFree(errs));
	return 0;
}

#define DEEP 2100

__global__ void nest(int *depths, int *errs, int d)
{
	depths[d] = d;
	if (d < DEEP - 1) {
		nest<<<1, 1>>>(depths, errs, d + 1);
		errs[d] = cudaGetLastError();
	}
}

/*
 * No nesting limit of its own, as on the H200 (probe_deep: CDP1's 24 is
 * gone): a chain of grids each launching one child holds a pending launch
 * a level, so under the default limit of 2048 the grid at depth 2048 runs
 * and its launch fails with cudaErrorLaunchPendingCountExceeded.
 */
static int test_depth(void)
{
	static int h[DEEP], e[DEEP];
	int *d = nullptr, *er = nullptr;

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	CHECK_OK(cudaMalloc(&er, sizeof(e)));
	CHECK_OK(cudaMemset(d, 0xff, sizeof(h)));
	CHECK_OK(cudaMemset(er, 0xff, sizeof(e)));
	nest<<<1, 1>>>(d, er, 0);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(e, er, sizeof(e), cudaMemcpyDeviceToHost));
	for (int i = 0; i <= 2048; i++)
		CHECK(h[i] == i);
	for (int i = 2049; i < DEEP; i++)
		CHECK(h[i] == -1);
	for (int i = 0; i < 2048; i++)
		CHECK(e[i] == cudaSuccess);
	CHECK(e[2048] == cudaErrorLaunchPendingCountExceeded);
	for (int i = 2049; i < DEEP; i++)
		CHECK(e[i] == -1);
	CHECK_OK(cudaFree(d));
	CHECK_OK(cudaFree(er));
	return 0;
}

__global__ void child_local(int *p, int n)
{
	int a[64];

	for (int i = 0; i < 64; i++)
		a[i] = i * n + (int)threadIdx.x;
	p[threadIdx.x] = a[(threadIdx.x * 7 + n) % 64];
}

__global__ void child_print(int v)
{
	printf("child %d thread %d\n", v, (int)threadIdx.x);
}

__global__ void parent_local_print(int *p)
{
	printf("parent\n");
	child_local<<<2, 32>>>(p, 3);
	child_print<<<1, 2>>>(5);
}

/* children with local memory (an indexed array) and printf */
static int test_local_and_printf(void)
{
	char out[4096] = "";
	FILE *tmp = tmpfile();
	int saved = dup(1), *p = nullptr, h[32];
	size_t n;

	CDP_OR_SKIP();
	CHECK(tmp && saved >= 0);
	CHECK_OK(cudaMalloc(&p, sizeof(h)));
	fflush(stdout);
	dup2(fileno(tmp), 1);
	parent_local_print<<<1, 1>>>(p);
	cudaError_t e = cudaDeviceSynchronize();
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	CHECK_OK(e);
	printf("# printed: %.200s\n", out);
	CHECK(!strcmp(out, "parent\nchild 5 thread 0\nchild 5 thread 1\n"));
	CHECK_OK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost));
	for (int t = 0; t < 32; t++)
		CHECK(h[t] == ((t * 7 + 3) % 64) * 3 + t);
	CHECK_OK(cudaFree(p));
	return 0;
}

__global__ void __cluster_dims__(2, 1, 1) clustered(int *out)
{
	__shared__ int s;
	cg::cluster_group cl = cg::this_cluster();
	unsigned r, n, cx, ncx;

	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
	asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
	asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(ncx));
	if (threadIdx.x == 0) {
		out[blockIdx.x * 4 + 0] = r;
		out[blockIdx.x * 4 + 1] = n;
		out[blockIdx.x * 4 + 2] = cx;
		out[blockIdx.x * 4 + 3] = ncx;
		s = 100 + blockIdx.x;
	}
	cl.sync();
	if (threadIdx.x == 0)
		out[64 + blockIdx.x] = *cl.map_shared_rank(&s, r ^ 1);
	cl.sync();
}

__global__ void launch_clustered(int *out, int *err, int g)
{
	clustered<<<g, 32>>>(out);
	*err = cudaGetLastError();
}

/*
 * A device-side launch keeps the kernel's compiled cluster shape
 * (__cluster_dims__, .reqnctapercluster): 4 CTAs run as 2 clusters of 2
 * that share memory; 3 CTAs are cudaErrorInvalidClusterSize at the launch
 * and the child does not run (the H200's answers:
 * tests/cuda/real-gpu/cdp-cluster-h200-2026-11-30).
 */
static int test_cluster(void)
{
	int *d = nullptr, *e = nullptr, h[128], err = -1;

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	CHECK_OK(cudaMalloc(&e, sizeof(int)));
	CHECK_OK(cudaMemset(d, 0xff, sizeof(h)));
	launch_clustered<<<1, 1>>>(d, e, 4);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(&err, e, sizeof(err), cudaMemcpyDeviceToHost));
	CHECK(err == cudaSuccess);
	for (int b = 0; b < 4; b++) {
		CHECK(h[b * 4 + 0] == b % 2);
		CHECK(h[b * 4 + 1] == 2);
		CHECK(h[b * 4 + 2] == b / 2);
		CHECK(h[b * 4 + 3] == 2);
		CHECK(h[64 + b] == 100 + (b ^ 1));
	}
	CHECK_OK(cudaMemset(d, 0xff, sizeof(h)));
	launch_clustered<<<1, 1>>>(d, e, 3);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(&err, e, sizeof(err), cudaMemcpyDeviceToHost));
	CHECK(err == cudaErrorInvalidClusterSize);
	for (int i = 0; i < 128; i++)
		CHECK(h[i] == -1);
	CHECK_OK(cudaFree(d));
	CHECK_OK(cudaFree(e));
	return 0;
}

/*
 * The sim backend and the QEMU device (drm) launch from kernels; the sim
 * without the feature refuses with cudaErrorNotSupported.
 */
static int test_probe(void)
{
	const char *b = getenv("VGPU_BACKEND");
	int *d = nullptr, h = -1;

	CHECK_OK(cudaMalloc(&d, sizeof(int)));
	cdp_probe<<<1, 1>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaFree(d));
	printf("# backend %s: a kernel's launch returns %d\n", b ? b : "(default)", h);
	if (b && !strcmp(b, "sim") && getenv("VGPU_SIM_NO_DEVICE_LAUNCH"))
		CHECK(h == cudaErrorNotSupported);
	else
		CHECK(h == cudaSuccess);
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "probe", test_probe },
		{ "children", test_children },
		{ "order", test_order },
		{ "grandchild", test_grandchild },
		{ "launch_error", test_launch_error },
		{ "pending_limit", test_pending_limit },
		{ "depth", test_depth },
		{ "local_and_printf", test_local_and_printf },
		{ "cluster", test_cluster },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
