// SPDX-License-Identifier: MIT
/*
 * test_cudart_rdc_devrt: the device runtime's functions other than
 * device-side launch (nvcc -rdc=true, libcudadevrt): cudaMalloc/cudaFree
 * in device code, streams and events created on the device, a launch into
 * such a stream (libvgpu/ptx/ptx_devrt.c).  The outcomes checked are an
 * H200's (tests/cuda/real-gpu/devrt-h200-2026-11-30/, CUDA 13.0) unless
 * a comment says vGPU chose one the H200 did not show.
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "cdp_skip.h"
#include "ktap.h"

#define SENTINEL ((void *)0xdead)

__global__ void probe(int *r)
{
	void *p = nullptr;

	*r = cudaMalloc(&p, 16);
	if (!*r)
		*r = cudaFree(p);
}

struct heap_res {
	int *ptr;
	int err[4];
	int vals[64];
};

__global__ void fill(int *p, int k)
{
	p[threadIdx.x] = (int)threadIdx.x * k + 1;
}

/* cudaMalloc in the parent; a child fills it */
__global__ void malloc_parent(heap_res *r)
{
	void *p = SENTINEL;

	r->err[0] = cudaMalloc(&p, 64 * sizeof(int));
	r->ptr = (int *)p;
	if (!r->err[0])
		fill<<<1, 64>>>((int *)p, 5);
	r->err[1] = cudaGetLastError();
}

/* a later grid reads it and frees it */
__global__ void collect(heap_res *r)
{
	r->vals[threadIdx.x] = r->ptr[threadIdx.x];
	__syncthreads();
	if (threadIdx.x == 0)
		r->err[2] = cudaFree(r->ptr);
}

static int test_malloc_child_writes(void)
{
	heap_res *d = nullptr, h;

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	CHECK_OK(cudaMemset(d, 0xff, sizeof(h)));
	malloc_parent<<<1, 1>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	collect<<<1, 64>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(h.err[0] == cudaSuccess && h.err[1] == cudaSuccess && h.err[2] == cudaSuccess);
	CHECK(h.ptr != nullptr && h.ptr != SENTINEL && (uintptr_t)h.ptr % 16 == 0);
	for (int t = 0; t < 64; t++)
		CHECK(h.vals[t] == t * 5 + 1);
	CHECK_OK(cudaFree(d));
	return 0;
}

/* what each call returns, and the pointer after it (o[]: see the test) */
__global__ void malloc_errors(long long *o)
{
	void *p = SENTINEL, *q = nullptr;

	o[0] = cudaMalloc(&p, (size_t)1 << 40); /* more than any heap */
	o[1] = (long long)p;
	o[2] = cudaGetLastError();
	o[3] = cudaGetLastError();
	p = SENTINEL;
	o[4] = cudaMalloc(&p, 0);
	o[5] = (long long)p;
	o[6] = cudaFree(nullptr);
	o[7] = cudaMalloc(&q, 100);
	o[8] = q != nullptr;
	((char *)q)[99] = 7; /* it is memory */
	o[9] = cudaFree(q);
	o[10] = cudaGetLastError();
	/* on the device cudaMalloc and cudaFree are malloc and free (the
	 * Programming Guide): memory one allocates the other frees */
	q = malloc(48);
	o[11] = cudaFree(q);
	p = nullptr;
	o[12] = cudaMalloc(&p, 48);
	free(p);
}

static int test_malloc_errors(void)
{
	long long *d = nullptr, h[13];

	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	malloc_errors<<<1, 1>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	printf("# %lld %llx %lld %lld %lld %llx %lld %lld %lld %lld %lld %lld %lld\n", h[0],
	       h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12]);
	CHECK(h[0] == cudaErrorMemoryAllocation && h[1] == 0xdead);
	/* the error is the thread's last error too (an H200's is after its
	 * failed calls; vGPU's after each) */
	CHECK(h[2] == cudaErrorMemoryAllocation && h[3] == cudaSuccess);
	CHECK(h[4] == cudaErrorInvalidValue && h[5] == 0xdead);
	CHECK(h[6] == cudaSuccess && h[7] == cudaSuccess && h[8] == 1);
	CHECK(h[9] == cudaSuccess && h[10] == cudaErrorInvalidValue);
	CHECK(h[11] == cudaSuccess && h[12] == cudaSuccess);
	CHECK_OK(cudaFree(d));
	return 0;
}

__global__ void add_to(int *p, int v)
{
	p[threadIdx.x] += v;
}

/* a stream created on the device and launches into it, in order */
__global__ void stream_parent(int *p, long long *o)
{
	cudaStream_t s = (cudaStream_t)0xbeef;

	o[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	o[1] = (long long)s;
	for (int i = 1; i <= 4; i++)
		add_to<<<1, 32, 0, s>>>(p, i * i);
	o[2] = cudaGetLastError();
	o[3] = cudaStreamDestroy(s);
	o[4] = cudaStreamDestroy(s);	     /* twice: success on an H200 */
	o[5] = cudaStreamDestroy(nullptr);     /* the NULL stream */
	o[6] = cudaStreamDestroy((cudaStream_t)0x1000);
	s = (cudaStream_t)0xbeef;
	o[7] = cudaStreamCreateWithFlags(&s, 3); /* a flag not defined */
	o[8] = (long long)s;
	o[9] = cudaStreamCreateWithFlags(&s, 0); /* without NonBlocking: taken */
	o[10] = cudaStreamDestroy(s);
	o[11] = cudaGetLastError();
}

static int test_stream_launch(void)
{
	int *p = nullptr, h[32];
	long long *o = nullptr, ho[12];

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&p, sizeof(h)));
	CHECK_OK(cudaMalloc(&o, sizeof(ho)));
	CHECK_OK(cudaMemset(p, 0, sizeof(h)));
	stream_parent<<<1, 1>>>(p, o);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, p, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(ho, o, sizeof(ho), cudaMemcpyDeviceToHost));
	printf("# stream %llx: %lld %lld %lld %lld %lld %lld %lld %llx %lld %lld %lld\n", ho[1],
	       ho[0], ho[2], ho[3], ho[4], ho[5], ho[6], ho[7], ho[8], ho[9], ho[10], ho[11]);
	for (int t = 0; t < 32; t++)
		CHECK(h[t] == 1 + 4 + 9 + 16);
	CHECK(ho[0] == cudaSuccess && ho[1] != 0 && ho[1] != 0xbeef);
	CHECK(ho[2] == cudaSuccess && ho[3] == cudaSuccess && ho[4] == cudaSuccess);
	CHECK(ho[5] == cudaErrorInvalidValue && ho[6] == cudaErrorInvalidValue);
	CHECK(ho[7] == cudaErrorInvalidValue && ho[8] == 0xbeef);
	CHECK(ho[9] == cudaSuccess && ho[10] == cudaSuccess);
	CHECK(ho[11] == cudaErrorInvalidValue);
	CHECK_OK(cudaFree(p));
	CHECK_OK(cudaFree(o));
	return 0;
}

__global__ void put(int *p, int v)
{
	*p = v;
}

__global__ void inc_from(const int *p, int *q)
{
	*q = *p + 1;
}

/*
 * Stream s writes 7; an event recorded in s after it; stream t waits for
 * the event, then reads 7 and writes 8 (probe case 5 on the H200: 7, 8);
 * a third launch into t reads that.
 */
__global__ void event_parent(int *a, long long *o)
{
	cudaStream_t s, t;
	cudaEvent_t e = (cudaEvent_t)0xcafe;

	o[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	o[1] = cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking);
	o[2] = cudaEventCreateWithFlags(&e, 0); /* cudaEventDisableTiming is required */
	o[3] = (long long)e;
	(void)cudaGetLastError(); /* that error was the thread's last */
	o[4] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
	put<<<1, 1, 0, s>>>(a, 7);
	o[5] = cudaEventRecord(e, s);
	o[6] = cudaStreamWaitEvent(t, e, 0);
	inc_from<<<1, 1, 0, t>>>(a, a + 1);
	inc_from<<<1, 1, 0, t>>>(a + 1, a + 2);
	o[7] = cudaGetLastError();
	o[8] = cudaEventRecord(e, nullptr);
	o[9] = cudaStreamWaitEvent(nullptr, e, 0);
	o[10] = cudaStreamWaitEvent(t, e, 1); /* cudaEventWaitExternal */
	o[11] = cudaEventDestroy(e);
	o[12] = cudaEventDestroy(e); /* twice: success on an H200 */
	o[13] = cudaEventDestroy(nullptr);
	o[14] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventBlockingSync);
	o[15] = cudaEventDestroy(e);
	o[16] = cudaStreamDestroy(s);
	o[17] = cudaStreamDestroy(t);
	o[18] = s != t;
}

static int test_event_order(void)
{
	int *a = nullptr, h[3];
	long long *o = nullptr, ho[19];

	CDP_OR_SKIP();
	CHECK_OK(cudaMalloc(&a, sizeof(h)));
	CHECK_OK(cudaMalloc(&o, sizeof(ho)));
	CHECK_OK(cudaMemset(a, 0, sizeof(h)));
	event_parent<<<1, 1>>>(a, o);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, a, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(ho, o, sizeof(ho), cudaMemcpyDeviceToHost));
	printf("# %d %d %d; %lld %lld %lld %llx %lld %lld %lld %lld %lld %lld %lld %lld %lld "
	       "%lld %lld %lld %lld %lld %lld\n",
	       h[0], h[1], h[2], ho[0], ho[1], ho[2], ho[3], ho[4], ho[5], ho[6], ho[7], ho[8],
	       ho[9], ho[10], ho[11], ho[12], ho[13], ho[14], ho[15], ho[16], ho[17], ho[18]);
	CHECK(h[0] == 7 && h[1] == 8 && h[2] == 9);
	CHECK(ho[0] == cudaSuccess && ho[1] == cudaSuccess);
	CHECK(ho[2] == cudaErrorInvalidValue && ho[3] == 0xcafe);
	for (int i = 4; i <= 12; i++)
		CHECK(ho[i] == cudaSuccess);
	CHECK(ho[13] == cudaErrorInvalidValue);
	CHECK(ho[14] == cudaSuccess && ho[15] == cudaSuccess);
	CHECK(ho[16] == cudaSuccess && ho[17] == cudaSuccess && ho[18] == 1);
	CHECK_OK(cudaFree(a));
	CHECK_OK(cudaFree(o));
	return 0;
}

/*
 * Handles are values: 64 threads each create a stream and an event, write
 * them out, and after __syncthreads() thread i destroys thread i+1's.
 */
__global__ void handles(unsigned long long *o, int *err)
{
	__shared__ cudaStream_t ss[64];
	__shared__ cudaEvent_t es[64];
	int i = threadIdx.x, j = (i + 1) % 64, e = 0;

	e |= cudaStreamCreateWithFlags(&ss[i], cudaStreamNonBlocking);
	e |= cudaEventCreateWithFlags(&es[i], cudaEventDisableTiming);
	o[i] = (unsigned long long)ss[i];
	o[64 + i] = (unsigned long long)es[i];
	__syncthreads();
	e |= cudaEventRecord(es[j], ss[j]);
	e |= cudaStreamWaitEvent(ss[i], es[j], 0);
	__syncthreads();
	e |= cudaEventDestroy(es[j]);
	e |= cudaStreamDestroy(ss[j]);
	err[i] = e;
}

static int test_handles_are_values(void)
{
	unsigned long long *d = nullptr, h[128];
	int *de = nullptr, he[64];

	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	CHECK_OK(cudaMalloc(&de, sizeof(he)));
	handles<<<1, 64>>>(d, de);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(he, de, sizeof(he), cudaMemcpyDeviceToHost));
	printf("# streams %llx %llx, events %llx %llx\n", h[0], h[1], h[64], h[65]);
	for (int i = 0; i < 64; i++)
		CHECK(he[i] == 0);
	for (int i = 0; i < 128; i++) {
		CHECK(h[i] != 0);
		for (int k = 0; k < i; k++)
			CHECK(h[i] != h[k]);
	}
	CHECK_OK(cudaFree(d));
	CHECK_OK(cudaFree(de));
	return 0;
}

/*
 * Values that are not handles of the kind asked for, flags not defined:
 * cudaErrorInvalidValue, vGPU's choice (docs/cuda.md) where the H200 was
 * not asked or answers otherwise (a bogus event pointer faults there: 700).
 */
__global__ void bad_handles(long long *o)
{
	cudaStream_t s;
	cudaEvent_t e;

	o[0] = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	o[1] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
	o[2] = cudaStreamWaitEvent(s, e, 2);
	o[3] = cudaEventRecord(e, (cudaStream_t)0x1000);
	o[4] = cudaEventRecord((cudaEvent_t)s, s);
	o[5] = cudaStreamWaitEvent((cudaStream_t)e, e, 0);
	o[6] = cudaEventDestroy((cudaEvent_t)0x1000);
	o[7] = cudaEventDestroy((cudaEvent_t)s);
	o[8] = cudaStreamDestroy((cudaStream_t)e);
	o[9] = cudaEventCreateWithFlags(&e, cudaEventDisableTiming | cudaEventInterprocess);
	o[10] = cudaEventRecord(e, s); /* still the one made above */
	o[11] = cudaStreamDestroy(s);
}

static int test_invalid_handles(void)
{
	long long *d = nullptr, h[12];

	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	bad_handles<<<1, 1>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(h[0] == cudaSuccess && h[1] == cudaSuccess);
	for (int i = 2; i <= 9; i++)
		CHECK(h[i] == cudaErrorInvalidValue);
	CHECK(h[10] == cudaSuccess && h[11] == cudaSuccess);
	CHECK_OK(cudaFree(d));
	return 0;
}

__global__ void queried(int *p)
{
	__shared__ int s[100];

	s[threadIdx.x] = 1;
	p[0] = s[0];
}

/* The device-side queries, each answer into out[] (attributes at 32 + 2a). */
__global__ void queries(int *out, cudaFuncAttributes *fa, int dev)
{
	int d = -1, n = -1, v = -7;

	out[0] = cudaGetDevice(&d);
	out[1] = d;
	out[2] = cudaGetDeviceCount(&n);
	out[3] = n;
	out[4] = cudaFuncGetAttributes(fa, (void *)queried);
	out[5] = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 7);
	out[6] = v;
	v = -7;
	out[7] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)9999, 0);
	out[8] = v;
	v = -7;
	out[9] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)0, 0);
	out[10] = v;
	out[11] = cudaGetLastError();
	for (int a = 1; a < 148; a++) {
		v = -7;
		out[32 + 2 * a] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, dev);
		out[33 + 2 * a] = v;
	}
}

/*
 * cudaGetDevice, cudaGetDeviceCount, cudaDeviceGetAttribute and
 * cudaFuncGetAttributes in device code give the host's answers, as on an
 * H200 (tests/cuda/real-gpu/devrt-query-h200-2026-11-30: every attribute
 * the same as the host's, but NUMA_ID); a device past the count is
 * cudaErrorInvalidDevice, an unknown attribute cudaErrorInvalidValue
 * (the value untouched), attribute 0 reads 0; cudaFuncGetAttributes
 * writes the structure's first 40 bytes (sizes, threads, registers,
 * versions) and leaves the rest, as the H200 does.
 */
static int test_queries(void)
{
	static int h[32 + 2 * 148];
	int *d = nullptr, dev = -1, n = -1;
	cudaFuncAttributes *fa = nullptr, hf, df;

	CHECK_OK(cudaGetDevice(&dev));
	CHECK_OK(cudaGetDeviceCount(&n));
	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	CHECK_OK(cudaMalloc(&fa, sizeof(*fa)));
	CHECK_OK(cudaMemset(d, 0xff, sizeof(h)));
	CHECK_OK(cudaMemset(fa, 0xee, sizeof(*fa)));
	queries<<<1, 1>>>(d, fa, dev);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(&df, fa, sizeof(df), cudaMemcpyDeviceToHost));
	printf("# device %d of %d, %d SMs, queried: %zu shared bytes, %d threads, %d registers, "
	       "version %d/%d\n", h[1], h[3], h[33 + 2 * cudaDevAttrMultiProcessorCount],
	       df.sharedSizeBytes, df.maxThreadsPerBlock, df.numRegs, df.ptxVersion,
	       df.binaryVersion);
	CHECK(h[0] == cudaSuccess && h[1] == dev);
	CHECK(h[2] == cudaSuccess && h[3] == n);
	CHECK(h[4] == cudaSuccess);
	CHECK(h[5] == cudaErrorInvalidDevice && h[6] == -7);
	CHECK(h[7] == cudaErrorInvalidValue && h[8] == -7);
	CHECK(h[9] == cudaSuccess && h[10] == 0);
	CHECK(h[11] == cudaErrorInvalidValue);
	for (int a = 1; a < 148; a++) {
		int v = -7;
		cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, dev);

		cudaGetLastError();
		if (e != cudaSuccess)
			v = -7;
		if (h[32 + 2 * a] != (int)e || h[33 + 2 * a] != v)
			printf("# attribute %d: device %d/%d, host %d/%d\n", a, h[32 + 2 * a],
			       h[33 + 2 * a], (int)e, v);
		CHECK(h[32 + 2 * a] == (int)e);
		CHECK(h[33 + 2 * a] == v);
	}
	CHECK_OK(cudaFuncGetAttributes(&hf, queried));
	CHECK(hf.sharedSizeBytes == 400);
	CHECK(df.sharedSizeBytes == hf.sharedSizeBytes);
	CHECK(df.constSizeBytes == hf.constSizeBytes);
	CHECK(df.localSizeBytes == hf.localSizeBytes);
	CHECK(df.maxThreadsPerBlock == hf.maxThreadsPerBlock);
	CHECK(df.numRegs == hf.numRegs);
	CHECK(df.ptxVersion == hf.ptxVersion);
	CHECK(df.binaryVersion == hf.binaryVersion);
	for (size_t o = 40; o < sizeof(df); o++)
		CHECK(((const unsigned char *)&df)[o] == 0xee);
	CHECK_OK(cudaFree(d));
	CHECK_OK(cudaFree(fa));
	return 0;
}

#define OCC_BLOCKS 10
#define OCC_DYNS 6
__host__ __device__ static int occ_block(int i)
{
	const int b[OCC_BLOCKS] = { 1, 32, 33, 64, 128, 256, 1000, 1024, 0, 2048 };

	return b[i];
}

__host__ __device__ static size_t occ_dyn(int i)
{
	const size_t d[OCC_DYNS] = { 0, 1, 1000, 20000, 48 * 1024 - 400, 100000 };

	return d[i];
}

__global__ void occupancy(int *out)
{
	for (int b = 0; b < OCC_BLOCKS; b++)
		for (int d = 0; d < OCC_DYNS; d++) {
			int n = -7, *o = out + 2 * (b * OCC_DYNS + d);

			o[0] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, queried, occ_block(b),
									      occ_dyn(d));
			o[1] = n;
		}
	out[2 * OCC_BLOCKS * OCC_DYNS] =
		cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&out[1 + 2 * OCC_BLOCKS * OCC_DYNS],
								       queried, 64, 0, 2);
}

/* The device's answers for every block size and dynamic size beside the host's. */
static int occupancy_matches(const char *what)
{
	static int h[2 * OCC_BLOCKS * OCC_DYNS + 2];
	int *d = nullptr;

	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	CHECK_OK(cudaMemset(d, 0xff, sizeof(h)));
	occupancy<<<1, 1>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int b = 0; b < OCC_BLOCKS; b++)
		for (int x = 0; x < OCC_DYNS; x++) {
			int n = -7, *o = h + 2 * (b * OCC_DYNS + x);
			cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
				&n, queried, occ_block(b), occ_dyn(x));

			cudaGetLastError();
			/* a block of 0: the H200's device side writes 0 */
			if (occ_block(b) <= 0)
				n = 0;
			if (o[0] != (int)e || o[1] != n)
				printf("# %s: block %d, %zu dynamic bytes: device %d/%d, host %d/%d\n",
				       what, occ_block(b), occ_dyn(x), o[0], o[1], (int)e, n);
			CHECK(o[0] == (int)e);
			CHECK(o[1] == n);
		}
	CHECK(h[2 * OCC_BLOCKS * OCC_DYNS] == cudaErrorInvalidValue);
	CHECK(h[2 * OCC_BLOCKS * OCC_DYNS + 1] == -1);
	printf("# %s: 128 threads, no dynamic bytes: %d CTAs an SM; 100000 bytes: %d\n", what,
	       h[2 * (4 * OCC_DYNS)] ? -1 : h[2 * (4 * OCC_DYNS) + 1],
	       h[2 * (4 * OCC_DYNS + 5) + 1]);
	CHECK_OK(cudaFree(d));
	return 0;
}

/*
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor in device code: the
 * host's calculator's answer for every block and dynamic size tried
 * (from the tables libcuda writes: libvgpu/vgpu.h VGPU_DEVRT_OCC), also
 * after the function's shared-memory settings change (the tables are
 * made again); a block of 0 writes 0 and is cudaErrorInvalidValue, 2048
 * threads 0 CTAs, as on an H200 (devrt-query-h200-2026-11-30: 16 CTAs of
 * 128 threads there, with its 10 registers); undefined flags
 * cudaErrorInvalidValue.
 */
static int test_occupancy(void)
{
	int r = occupancy_matches("default");

	if (r)
		return r;
	CHECK_OK(cudaFuncSetAttribute(queried, cudaFuncAttributeMaxDynamicSharedMemorySize,
				      100000));
	r = occupancy_matches("100000 dynamic bytes allowed");
	if (r)
		return r;
	CHECK_OK(cudaFuncSetCacheConfig(queried, cudaFuncCachePreferL1));
	r = occupancy_matches("prefer L1");
	if (r)
		return r;
	CHECK_OK(cudaFuncSetAttribute(queried, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
	r = occupancy_matches("carveout 50%");
	if (r)
		return r;
	CHECK_OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
	return occupancy_matches("the context prefers shared");
}

/* cudaMalloc and free need no device-side launch: the probe runs anywhere */
static int test_probe(void)
{
	int *d = nullptr, h = -1;

	CHECK_OK(cudaMalloc(&d, sizeof(int)));
	probe<<<1, 1>>>(d);
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaFree(d));
	CHECK(h == cudaSuccess);
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "probe", test_probe },
		{ "malloc_child_writes", test_malloc_child_writes },
		{ "malloc_errors", test_malloc_errors },
		{ "stream_launch", test_stream_launch },
		{ "event_order", test_event_order },
		{ "handles_are_values", test_handles_are_values },
		{ "invalid_handles", test_invalid_handles },
		{ "queries", test_queries },
		{ "occupancy", test_occupancy },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
