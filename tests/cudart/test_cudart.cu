// SPDX-License-Identifier: MIT
/*
 * The runtime API as CUDA programs use it: built by nvcc with -cudart
 * shared and -gencode arch=compute_90a,code=[sm_90a,compute_90a] (the
 * Makefile), run against vGPU's libcudart.so.13 (RUNPATH build/), the
 * sim backend.  Each test checks its results on the host.
 */
#include <cstring>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

#include "ktap.h"

__global__ void vec_add(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

static int test_vector_add(void)
{
	const int n = 1000;
	std::vector<float> a(n), b(n), c(n);
	float *da, *db, *dc;

	for (int i = 0; i < n; i++) {
		a[i] = (float)i;
		b[i] = 2.0f * (float)i + 1.0f;
	}
	CHECK_OK(cudaMalloc(&da, n * sizeof(float)));
	CHECK_OK(cudaMalloc(&db, n * sizeof(float)));
	CHECK_OK(cudaMalloc(&dc, n * sizeof(float)));
	CHECK_OK(cudaMemcpy(da, a.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CHECK_OK(cudaMemcpy(db, b.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	vec_add<<<(n + 255) / 256, 256>>>(da, db, dc, n);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaMemcpy(c.data(), dc, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		CHECK(c[i] == 3.0f * (float)i + 1.0f);
	CHECK_OK(cudaFree(da));
	CHECK_OK(cudaFree(db));
	CHECK_OK(cudaFree(dc));
	return 0;
}

/* every cudaMemcpyKind, memsets, pinned host memory */
static int test_memcpy_kinds(void)
{
	const int n = 256;
	unsigned char h[n], back[n], *d1, *d2, *pinned, *mapped;

	for (int i = 0; i < n; i++)
		h[i] = (unsigned char)(i * 7 + 3);
	CHECK_OK(cudaMalloc(&d1, n));
	CHECK_OK(cudaMalloc(&d2, n));
	CHECK_OK(cudaMemcpy(d1, h, n, cudaMemcpyDefault));
	CHECK_OK(cudaMemcpy(d2, d1, n, cudaMemcpyDeviceToDevice));
	memset(back, 0, n);
	CHECK_OK(cudaMemcpy(back, d2, n, cudaMemcpyDefault));
	CHECK(!memcmp(back, h, n));
	CHECK_OK(cudaMemcpy(d2, d1, n, cudaMemcpyDefault));
	CHECK_OK(cudaMemset(d2, 0xab, n / 2));
	CHECK_OK(cudaMemcpy(back, d2, n, cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		CHECK(back[i] == (i < n / 2 ? 0xab : h[i]));
	CHECK_OK(cudaMemcpy(back, h, n, cudaMemcpyHostToHost));
	CHECK(!memcmp(back, h, n));
	CHECK_RT(cudaMemcpy(back, d1, n, (cudaMemcpyKind)7), cudaErrorInvalidMemcpyDirection);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidMemcpyDirection);
	CHECK_OK(cudaGetLastError());

	CHECK_OK(cudaMallocHost(&pinned, n));
	CHECK_OK(cudaMemcpyAsync(pinned, d1, n, cudaMemcpyDeviceToHost, 0));
	CHECK_OK(cudaMemsetAsync(d2, 0x11, n, 0));
	CHECK_OK(cudaStreamSynchronize(0));
	CHECK(!memcmp(pinned, h, n));
	CHECK_OK(cudaFreeHost(pinned));

	/* mapped host memory a kernel writes through its device pointer */
	CHECK_OK(cudaHostAlloc(&mapped, n * sizeof(float), cudaHostAllocMapped));
	float *dmapped;
	CHECK_OK(cudaHostGetDevicePointer((void **)&dmapped, mapped, 0));
	std::vector<float> ones(n, 1.0f);
	float *dones;
	CHECK_OK(cudaMalloc(&dones, n * sizeof(float)));
	CHECK_OK(cudaMemcpy(dones, ones.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	vec_add<<<1, n>>>(dones, dones, dmapped, n);
	CHECK_OK(cudaDeviceSynchronize());
	for (int i = 0; i < n; i++)
		CHECK(((float *)mapped)[i] == 2.0f);
	CHECK_OK(cudaFreeHost(mapped));
	CHECK_OK(cudaFree(dones));
	CHECK_OK(cudaFree(d1));
	CHECK_OK(cudaFree(d2));
	return 0;
}

__global__ void reduce_sum(const int *in, int *out, int n)
{
	__shared__ int part[256];
	int tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;

	part[tid] = i < n ? in[i] : 0;
	__syncthreads();
	for (int s = blockDim.x / 2; s > 0; s >>= 1) {
		if (tid < s)
			part[tid] += part[tid + s];
		__syncthreads();
	}
	if (tid == 0)
		atomicAdd(out, part[0]);
}

static int test_reduction(void)
{
	const int n = 5000;
	std::vector<int> h(n);
	long long want = 0;
	int *din, *dout, got = -1;

	for (int i = 0; i < n; i++) {
		h[i] = (i * 37) % 101 - 50;
		want += h[i];
	}
	CHECK_OK(cudaMalloc(&din, n * sizeof(int)));
	CHECK_OK(cudaMalloc(&dout, sizeof(int)));
	CHECK_OK(cudaMemcpy(din, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
	CHECK_OK(cudaMemset(dout, 0, sizeof(int)));
	reduce_sum<<<(n + 255) / 256, 256>>>(din, dout, n);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaMemcpy(&got, dout, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK(got == want);
	CHECK_OK(cudaFree(din));
	CHECK_OK(cudaFree(dout));
	return 0;
}

__global__ void scale_add(int *p, int n, int mul, int add)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = p[i] * mul + add;
}

static void CUDART_CB host_fn(void *arg)
{
	++*(int *)arg;
}

/* two streams ordered by an event; timing; queries; a host function */
static int test_streams_events(void)
{
	const int n = 4096;
	std::vector<int> h(n);
	cudaStream_t s1, s2, s3;
	cudaEvent_t start, mid, stop;
	int *d, calls = 0, least, greatest, prio;
	float ms = -1.0f;

	for (int i = 0; i < n; i++)
		h[i] = i;
	CHECK_OK(cudaMalloc(&d, n * sizeof(int)));
	CHECK_OK(cudaStreamCreate(&s1));
	CHECK_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CHECK(least == 0 && greatest <= least);
	CHECK_OK(cudaStreamCreateWithPriority(&s3, cudaStreamNonBlocking, least));
	CHECK_OK(cudaStreamGetPriority(s3, &prio));
	CHECK(prio == least);
	CHECK_OK(cudaEventCreate(&start));
	CHECK_OK(cudaEventCreateWithFlags(&mid, cudaEventDisableTiming));
	CHECK_OK(cudaEventCreate(&stop));

	CHECK_OK(cudaMemcpyAsync(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice, s1));
	CHECK_OK(cudaEventRecord(start, s1));
	scale_add<<<n / 256, 256, 0, s1>>>(d, n, 2, 1); /* 2i + 1 */
	CHECK_OK(cudaEventRecord(mid, s1));
	CHECK_OK(cudaStreamWaitEvent(s2, mid, 0));
	scale_add<<<n / 256, 256, 0, s2>>>(d, n, 3, 0); /* 6i + 3 */
	CHECK_OK(cudaLaunchHostFunc(s2, host_fn, &calls));
	CHECK_OK(cudaEventRecord(stop, s2));
	CHECK_OK(cudaEventSynchronize(stop));
	CHECK_OK(cudaEventQuery(stop));
	CHECK_OK(cudaStreamQuery(s2));
	CHECK_OK(cudaEventElapsedTime(&ms, start, stop));
	CHECK(ms >= 0.0f);
	CHECK_RT(cudaEventElapsedTime(&ms, start, mid), cudaErrorInvalidResourceHandle);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidResourceHandle);
	CHECK_OK(cudaStreamSynchronize(s2));
	CHECK(calls == 1);
	CHECK_OK(cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, s2));
	CHECK_OK(cudaStreamSynchronize(s2));
	for (int i = 0; i < n; i++)
		CHECK(h[i] == 6 * i + 3);
	CHECK_OK(cudaEventDestroy(start));
	CHECK_OK(cudaEventDestroy(mid));
	CHECK_OK(cudaEventDestroy(stop));
	CHECK_OK(cudaStreamDestroy(s1));
	CHECK_OK(cudaStreamDestroy(s2));
	CHECK_OK(cudaStreamDestroy(s3));
	CHECK_OK(cudaFree(d));
	return 0;
}

__constant__ float coeffs[4];
__device__ int counter;
__device__ float table[64];

__global__ void use_symbols(float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		out[i] = coeffs[i % 4] * table[i % 64];
		atomicAdd(&counter, 1);
	}
}

/* __constant__ and __device__ variables: to, from, their addresses */
static int test_symbols(void)
{
	const int n = 128;
	float c[4] = { 1.0f, 2.0f, 3.0f, 4.0f }, t[64], out[n], *dout, *dtable;
	int zero = 0, count = -1;
	size_t size = 0;

	for (int i = 0; i < 64; i++)
		t[i] = 0.5f * (float)i;
	CHECK_OK(cudaMemcpyToSymbol(coeffs, c, sizeof(c)));
	CHECK_OK(cudaMemcpyToSymbol(counter, &zero, sizeof(int), 0, cudaMemcpyHostToDevice));
	CHECK_OK(cudaGetSymbolAddress((void **)&dtable, table));
	CHECK_OK(cudaGetSymbolSize(&size, table));
	CHECK(size == sizeof(t));
	CHECK_OK(cudaMemcpy(dtable, t, sizeof(t), cudaMemcpyHostToDevice));
	CHECK_OK(cudaMalloc(&dout, sizeof(out)));
	use_symbols<<<2, 64>>>(dout, n);
	CHECK_OK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		CHECK(out[i] == c[i % 4] * t[i % 64]);
	CHECK_OK(cudaMemcpyFromSymbol(&count, counter, sizeof(int)));
	CHECK(count == n);
	/* part of a symbol, at an offset */
	float two[2];
	CHECK_OK(cudaMemcpyFromSymbol(two, coeffs, sizeof(two), 2 * sizeof(float)));
	CHECK(two[0] == 3.0f && two[1] == 4.0f);
	CHECK_RT(cudaMemcpyToSymbol(coeffs, c, sizeof(c), 4), cudaErrorInvalidValue);
	CHECK_RT(cudaMemcpyToSymbol(&zero, c, 4), cudaErrorInvalidSymbol);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidSymbol);
	CHECK_OK(cudaFree(dout));
	return 0;
}

__global__ void dyn_reverse(const int *in, int *out, int n)
{
	extern __shared__ int buf[];
	int t = threadIdx.x;

	buf[t] = in[blockIdx.x * n + t];
	__syncthreads();
	out[blockIdx.x * n + t] = buf[n - 1 - t];
}

/* <<<grid, block, dynamic shared memory, stream>>> */
static int test_launch_smem_stream(void)
{
	const int n = 128, blocks = 4;
	std::vector<int> h(n * blocks), r(n * blocks);
	cudaStream_t s;
	int *din, *dout;

	for (int i = 0; i < n * blocks; i++)
		h[i] = i * 3;
	CHECK_OK(cudaStreamCreate(&s));
	CHECK_OK(cudaMalloc(&din, h.size() * sizeof(int)));
	CHECK_OK(cudaMalloc(&dout, h.size() * sizeof(int)));
	CHECK_OK(cudaMemcpyAsync(din, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice, s));
	dyn_reverse<<<blocks, n, n * sizeof(int), s>>>(din, dout, n);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaMemcpyAsync(r.data(), dout, r.size() * sizeof(int), cudaMemcpyDeviceToHost, s));
	CHECK_OK(cudaStreamSynchronize(s));
	for (int b = 0; b < blocks; b++)
		for (int t = 0; t < n; t++)
			CHECK(r[b * n + t] == h[b * n + n - 1 - t]);
	/* the same through cudaLaunchKernel */
	CHECK_OK(cudaMemset(dout, 0, r.size() * sizeof(int)));
	int nn = n;
	void *args[] = { &din, &dout, &nn };
	CHECK_OK(cudaLaunchKernel((const void *)dyn_reverse, dim3(blocks), dim3(n), args,
				  n * sizeof(int), s));
	CHECK_OK(cudaStreamSynchronize(s));
	CHECK_OK(cudaMemcpy(r.data(), dout, r.size() * sizeof(int), cudaMemcpyDeviceToHost));
	CHECK(r[0] == h[n - 1] && r[n * blocks - 1] == h[n * (blocks - 1)]);
	CHECK_OK(cudaStreamDestroy(s));
	CHECK_OK(cudaFree(din));
	CHECK_OK(cudaFree(dout));
	return 0;
}

__global__ void big_smem(int *out, int words)
{
	extern __shared__ int big[];

	for (int i = threadIdx.x; i < words; i += blockDim.x)
		big[i] = i ^ 0x5a5a;
	__syncthreads();
	int sum = 0;
	for (int i = threadIdx.x; i < words; i += blockDim.x)
		sum += big[words - 1 - i] ^ 0x5a5a;
	atomicAdd(out, sum);
}

/* more than 48 KiB of dynamic shared memory after cudaFuncSetAttribute */
static int test_dynamic_smem_optin(void)
{
	const int bytes = 96 * 1024, words = bytes / 4;
	struct cudaFuncAttributes fa;
	int *d, got = 0;
	long long want = 0;

	for (int i = 0; i < words; i++)
		want += i;
	CHECK_OK(cudaMalloc(&d, sizeof(int)));
	CHECK_OK(cudaMemset(d, 0, sizeof(int)));
	big_smem<<<1, 256, bytes>>>(d, words);
	/* CUDA 13's runtime on the H200: InvalidValue (not InvalidConfiguration) */
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK_OK(cudaFuncSetAttribute(big_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
	CHECK_OK(cudaFuncGetAttributes(&fa, big_smem));
	CHECK(fa.maxDynamicSharedSizeBytes == bytes);
	CHECK(fa.maxThreadsPerBlock == 1024);
	CHECK(fa.numRegs > 0);
	big_smem<<<1, 256, bytes>>>(d, words);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaMemcpy(&got, d, sizeof(int), cudaMemcpyDeviceToHost));
	CHECK(got == (int)want);
	CHECK_OK(cudaFree(d));
	return 0;
}

__global__ void cluster_ranks(unsigned int *out)
{
	unsigned int rank, nranks;

	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
	asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(nranks));
	if (threadIdx.x == 0)
		out[blockIdx.x] = rank | nranks << 8;
}

/* cudaLaunchKernelEx with a cluster dimension attribute */
static int test_launch_ex_cluster(void)
{
	const int blocks = 8;
	unsigned int *d, h[blocks];
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];

	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	cfg.gridDim = dim3(blocks);
	cfg.blockDim = dim3(32);
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = 4;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	CHECK_OK(cudaLaunchKernelEx(&cfg, cluster_ranks, d));
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < blocks; i++)
		CHECK(h[i] == ((unsigned int)i % 4 | 4u << 8));
	attr[0].val.clusterDim.x = 3; /* does not tile the grid */
	CHECK(cudaLaunchKernelEx(&cfg, cluster_ranks, d) != cudaSuccess);
	CHECK(cudaGetLastError() != cudaSuccess);
	CHECK_OK(cudaFree(d));
	return 0;
}

/* y[i] = y[i] * 2 + x[i], in place */
__global__ void twice_plus(const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = y[i] * 2.0f + x[i];
}

/*
 * Managed memory as CUDA's samples use it: cudaMallocManaged, the host
 * fills the buffers through the pointers, a kernel computes in place,
 * cudaDeviceSynchronize, the host checks every element through the same
 * pointers.  On vGPU the memory is the device's, mapped on the host at its
 * device address (docs/cuda.md).
 */
static int test_managed(void)
{
	const int n = 100000; /* 400 KB each: many pages */
	float *x = NULL, *y = NULL;
	int *h = (int *)1, *bad = (int *)1;
	cudaDeviceProp p;
	std::vector<float> back(n);

	CHECK_OK(cudaGetDeviceProperties(&p, 0));
	CHECK(p.managedMemory == 1);
	CHECK_OK(cudaMallocManaged(&x, n * sizeof(float)));
	CHECK_OK(cudaMallocManaged(&y, n * sizeof(float), cudaMemAttachGlobal));
	CHECK(x && y && x != y);
	for (int i = 0; i < n; i++) {
		x[i] = (float)(i % 1000);
		y[i] = (float)(i % 7) - 3.0f;
	}
	twice_plus<<<(n + 255) / 256, 256>>>(x, y, n);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaDeviceSynchronize());
	for (int i = 0; i < n; i++)
		CHECK(y[i] == ((float)(i % 7) - 3.0f) * 2.0f + (float)(i % 1000));
	/* the host changes x, the kernel sees it */
	for (int i = 0; i < n; i++)
		x[i] = 0.5f;
	twice_plus<<<(n + 255) / 256, 256>>>(x, y, n);
	CHECK_OK(cudaDeviceSynchronize());
	for (int i = 0; i < n; i++)
		CHECK(y[i] == (((float)(i % 7) - 3.0f) * 2.0f + (float)(i % 1000)) * 2.0f + 0.5f);
	/* copies and memsets take it for device memory */
	CHECK_OK(cudaMemcpy(back.data(), y, n * sizeof(float), cudaMemcpyDefault));
	CHECK(!memcmp(back.data(), y, n * sizeof(float)));
	CHECK_OK(cudaMemset(x, 0, n * sizeof(float)));
	for (int i = 0; i < n; i++)
		CHECK(x[i] == 0.0f);
	CHECK_OK(cudaMemcpy(x, back.data(), 16 * sizeof(float), cudaMemcpyHostToDevice));
	CHECK(x[15] == back[15]);
	CHECK_OK(cudaFree(x));
	CHECK_OK(cudaFree(y));

	/* cudaMemAttachHost, a kernel on a stream, waited for with the stream */
	cudaStream_t s;
	CHECK_OK(cudaStreamCreate(&s));
	CHECK_OK(cudaMallocManaged(&x, 4096 * sizeof(float), cudaMemAttachHost));
	CHECK_OK(cudaMallocManaged(&y, 4096 * sizeof(float), cudaMemAttachHost));
	for (int i = 0; i < 4096; i++) {
		x[i] = 1.0f;
		y[i] = (float)i;
	}
	twice_plus<<<16, 256, 0, s>>>(x, y, 4096);
	CHECK_OK(cudaStreamSynchronize(s));
	for (int i = 0; i < 4096; i++)
		CHECK(y[i] == 2.0f * (float)i + 1.0f);
	CHECK_OK(cudaFree(x));
	CHECK_OK(cudaFree(y));
	CHECK_OK(cudaStreamDestroy(s));

	/* as CUDA 13's runtime on the H200 (tests/cuda/real-gpu/probe_managed):
	 * a size of 0 succeeds with NULL (the driver's call refuses it), flags
	 * other than Global or Host are invalid */
	CHECK_OK(cudaMallocManaged(&h, 0));
	CHECK(h == NULL);
	CHECK_OK(cudaGetLastError());
	CHECK_RT(cudaMallocManaged(&bad, 64, 0), cudaErrorInvalidValue);
	CHECK_RT(cudaMallocManaged(&bad, 64, cudaMemAttachSingle), cudaErrorInvalidValue);
	CHECK_RT(cudaMallocManaged(&bad, 64, cudaMemAttachGlobal | cudaMemAttachHost),
		 cudaErrorInvalidValue);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK_OK(cudaGetLastError());
	return 0;
}

/* devices, properties, attributes, occupancy, driver entry points */
static int test_device(void)
{
	int n = 0, dev = -1, v = 0, blocks = -1, drv = 0, rt = 0;
	cudaDeviceProp p;
	void *fn = NULL;
	cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;

	CHECK_OK(cudaGetDeviceCount(&n));
	CHECK(n >= 1);
	CHECK_OK(cudaSetDevice(0));
	CHECK_OK(cudaGetDevice(&dev));
	CHECK(dev == 0);
	CHECK_RT(cudaSetDevice(n), cudaErrorInvalidDevice);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidDevice);
	CHECK_OK(cudaGetDeviceProperties(&p, 0));
	printf("# device 0: %s, %d SMs, compute %d.%d\n", p.name, p.multiProcessorCount, p.major,
	       p.minor);
	CHECK(p.major == 9 && p.warpSize == 32 && p.maxThreadsPerBlock == 1024);
	CHECK(p.multiProcessorCount > 0 && p.totalGlobalMem > 0 && p.name[0]);
	CHECK_OK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0));
	CHECK(v == p.multiProcessorCount);
	CHECK_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, vec_add, 256, 0));
	CHECK(blocks >= 1 && blocks <= p.maxBlocksPerMultiProcessor);
	/* the occupancy calls past the first (docs/cuda.md "Occupancy") */
	{
		int grid = 0, block = 0, clusters = 0, size = 0;
		size_t dyn = 0;
		cudaLaunchAttribute at;
		cudaLaunchConfig_t lc = {};

		CHECK_OK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, vec_add));
		CHECK(block >= 32 && block <= 1024 && grid >= p.multiProcessorCount);
		CHECK_OK(cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, vec_add, 1, 256));
		CHECK(dyn == 48 * 1024);
		CHECK_RT(cudaOccupancyAvailableDynamicSMemPerBlock(&dyn, vec_add, 0, 256),
			 cudaErrorInvalidValue);
		cudaGetLastError();
		at.id = cudaLaunchAttributeClusterDimension;
		at.val.clusterDim.x = 2;
		at.val.clusterDim.y = 1;
		at.val.clusterDim.z = 1;
		lc.gridDim = dim3(64);
		lc.blockDim = dim3(128);
		lc.attrs = &at;
		lc.numAttrs = 1;
		CHECK_OK(cudaOccupancyMaxActiveClusters(&clusters, vec_add, &lc));
		CHECK(clusters == p.multiProcessorCount * (blocks < 8 ? blocks : 8) / 2);
		CHECK_OK(cudaOccupancyMaxPotentialClusterSize(&size, vec_add, &lc));
		CHECK(size >= 1 && size <= 8);
	}
	CHECK_OK(cudaDriverGetVersion(&drv));
	CHECK_OK(cudaRuntimeGetVersion(&rt));
	CHECK(drv >= 13000 && rt >= 13000);
	CHECK_OK(cudaGetDriverEntryPointByVersion("cuDriverGetVersion", &fn, 13000,
						  cudaEnableDefault, &q));
	CHECK(fn && q == cudaDriverEntryPointSuccess);
	v = 0;
	CHECK(((int (*)(int *))fn)(&v) == 0 && v == drv);
	CHECK(!strcmp(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress"));
	CHECK(!strcmp(cudaGetErrorString(cudaSuccess), "no error"));
	return 0;
}

/* launch errors are not sticky: reported once, then cleared */
static int test_launch_errors(void)
{
	float *d;

	CHECK_OK(cudaMalloc(&d, 1024));
	vec_add<<<1, 2048>>>(d, d, d, 4);
	/* CUDA 13's runtime on the H200: InvalidValue (not InvalidConfiguration) */
	CHECK_RT(cudaPeekAtLastError(), cudaErrorInvalidValue);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK_OK(cudaGetLastError());
	/* a host function launched: an invalid handle to CUDA 13 (the H200) */
	CHECK_RT(cudaLaunchKernel((const void *)test_launch_errors, dim3(1), dim3(1), NULL, 0, 0),
		 cudaErrorInvalidResourceHandle);
	CHECK_RT(cudaGetLastError(), cudaErrorInvalidResourceHandle);
	vec_add<<<1, 4>>>(d, d, d, 4);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaFree(d));
	return 0;
}

/*
 * cudaGetFuncBySymbol: a cudaFunction_t is a CUfunction, which the driver
 * API's cuLaunchKernel (reached through cudaGetDriverEntryPointByVersion,
 * the program links only the runtime) launches
 */
static int test_func_by_symbol(void)
{
	typedef CUresult (*launch_t)(CUfunction, unsigned int, unsigned int, unsigned int,
				     unsigned int, unsigned int, unsigned int, unsigned int,
				     CUstream, void **, void **);
	enum { N = 64 };
	cudaDriverEntryPointQueryResult q;
	cudaFunction_t f = NULL;
	void *fn = NULL;
	float *a, *b, *c, h[N];
	int n = N;
	void *params[] = { &a, &b, &c, &n };

	CHECK_OK(cudaGetFuncBySymbol(&f, (const void *)vec_add));
	CHECK(f != NULL);
	CHECK_OK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &fn, 13000, cudaEnableDefault,
						  &q));
	CHECK(fn && q == cudaDriverEntryPointSuccess);
	for (int i = 0; i < N; i++)
		h[i] = (float)i;
	CHECK_OK(cudaMalloc(&a, sizeof(h)));
	CHECK_OK(cudaMalloc(&b, sizeof(h)));
	CHECK_OK(cudaMalloc(&c, sizeof(h)));
	CHECK_OK(cudaMemcpy(a, h, sizeof(h), cudaMemcpyHostToDevice));
	CHECK_OK(cudaMemcpy(b, h, sizeof(h), cudaMemcpyHostToDevice));
	CHECK(((launch_t)fn)((CUfunction)f, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL) ==
	      CUDA_SUCCESS);
	CHECK_OK(cudaMemcpy(h, c, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		CHECK(h[i] == (float)(2 * i));
	CHECK_OK(cudaFree(a));
	CHECK_OK(cudaFree(b));
	CHECK_OK(cudaFree(c));
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "vector_add", test_vector_add },
		{ "memcpy_kinds", test_memcpy_kinds },
		{ "managed", test_managed },
		{ "reduction", test_reduction },
		{ "streams_events", test_streams_events },
		{ "symbols", test_symbols },
		{ "launch_smem_stream", test_launch_smem_stream },
		{ "dynamic_smem_optin", test_dynamic_smem_optin },
		{ "launch_ex_cluster", test_launch_ex_cluster },
		{ "device", test_device },
		{ "launch_errors", test_launch_errors },
		{ "func_by_symbol", test_func_by_symbol },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
