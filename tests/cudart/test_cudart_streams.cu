// SPDX-License-Identifier: MIT
/*
 * Streams as vGPU queues (docs/cuda.md "Streams, events and ordering"):
 * a stream is a queue of its priority with a timeline syncobj, and
 * cudaStreamWaitEvent is a syncobj wait of the stream's next job, which
 * the device side (the driver's scheduler) resolves, not the host.
 *
 * What the device itself shows, through flags the kernels write and read
 * (no timing thresholds):
 *  - wait_event_orders: a kernel on s2 after cudaStreamWaitEvent(s2, e)
 *    sees everything the kernel before e on s1 wrote, including the marker
 *    it writes last; on the sim backend (one SM, one clock) also the
 *    device timeline: its first %globaltimer is after the other's last;
 *  - gated_overlap (drm backend, the guest): a kernel on s1 spins until
 *    the host opens a gate in mapped host memory.  While it spins,
 *    cudaStreamWaitEvent(s2, e-after-it) returns (a host wait could not:
 *    the gate is opened only later), the event and s2 are not ready, and
 *    a kernel on s3 runs to completion; the gated kernel saw that kernel's
 *    flag while spinning, so the two overlapped on the device; and the
 *    kernel on s2 started only after the gated kernel's last store.  It
 *    needs a hardware queue of normal priority for each of s1, s2 and s3
 *    (the guest suite's devices have 6; the device's default, 1: there
 *    s3's kernel waits behind the gated one and times out).  The
 *    sim backend runs each job to completion inside its launch (one at a
 *    time, on the calling thread): there a gated kernel would never end,
 *    and this test is skipped.
 */
#include <cstring>

#include <cuda_runtime.h>

#include "ktap.h"

static bool on_sim(void)
{
	cudaDeviceProp p;

	return cudaGetDeviceProperties(&p, 0) == cudaSuccess && strstr(p.name, "vGPU sim");
}

/* vGPU (either backend), not a real GPU */
static bool on_vgpu(void)
{
	cudaDeviceProp p;

	return cudaGetDeviceProperties(&p, 0) == cudaSuccess && !strncmp(p.name, "vGPU", 4);
}

__device__ unsigned long long now(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

/* stream priorities: CUDA's range, clamping, each stream's own queue */
__global__ void fill(int *p, int v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v + i;
}

static int test_priorities(void)
{
	int least = 1, greatest = 1, want[5];
	const int asked[] = { 0, -1, -2, 5, -7 };
	cudaStream_t s[5];
	int *d, h[5 * 64];

	/* vGPU's three queue priorities are 0..-2; the H200's range is wider */
	CHECK_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CHECK(least == 0 && greatest < 0);
	CHECK(!on_vgpu() || greatest == -2);
	/* a priority outside the range is clamped to it */
	for (int i = 0; i < 5; i++)
		want[i] = asked[i] > least ? least : asked[i] < greatest ? greatest : asked[i];
	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	for (int i = 0; i < 5; i++) {
		int prio = 99;

		CHECK_OK(cudaStreamCreateWithPriority(&s[i], cudaStreamNonBlocking, asked[i]));
		CHECK_OK(cudaStreamGetPriority(s[i], &prio));
		CHECK(prio == want[i]);
		fill<<<1, 64, 0, s[i]>>>(d + 64 * i, 1000 * i, 64);
		CHECK_OK(cudaGetLastError());
	}
	for (int i = 0; i < 5; i++)
		CHECK_OK(cudaStreamSynchronize(s[i]));
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < 5 * 64; i++)
		CHECK(h[i] == 1000 * (i / 64) + i % 64);
	for (int i = 0; i < 5; i++)
		CHECK_OK(cudaStreamDestroy(s[i]));
	CHECK_OK(cudaFree(d));
	return 0;
}

struct marks {
	unsigned long long first[32], last[32]; /* %globaltimer per CTA */
	int done;			/* written by the producer last */
	int seen_done;			/* what the consumer read first */
	int seen_other;			/* the gated kernel saw the other's flag */
	int other;			/* the overlapping kernel's flag */
};

__global__ void producer(int *x, int n, marks *m)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (threadIdx.x == 0)
		m->first[blockIdx.x] = now();
	if (i < n)
		x[i] = 3 * i + 1;
	__syncthreads();
	__threadfence();
	if (threadIdx.x == 0) {
		atomicAdd(&m->done, 1);
		m->last[blockIdx.x] = now();
	}
}

__global__ void consumer(const int *x, int *y, int n, marks *m, marks *pm)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (threadIdx.x == 0) {
		m->first[blockIdx.x] = now();
		atomicMin(&m->seen_done, *(volatile int *)&pm->done);
	}
	if (i < n)
		y[i] = 2 * x[i];
}

static void marks_init(marks *h)
{
	memset(h, 0, sizeof(*h));
	h->seen_done = 0x7fffffff;
}

static int test_wait_event_orders(void)
{
	const int n = 4096, blocks = n / 128; /* 32: marks' arrays */
	cudaStream_t s1, s2;
	cudaEvent_t e;
	int *x, *y, hy[4096];
	marks *dm, hm[2];

	CHECK_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CHECK_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK_OK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	CHECK_OK(cudaMalloc(&x, n * sizeof(int)));
	CHECK_OK(cudaMalloc(&y, n * sizeof(int)));
	CHECK_OK(cudaMalloc(&dm, sizeof(hm)));
	marks_init(&hm[0]);
	marks_init(&hm[1]);
	CHECK_OK(cudaMemcpy(dm, hm, sizeof(hm), cudaMemcpyHostToDevice));
	CHECK_OK(cudaMemset(x, 0, n * sizeof(int)));

	producer<<<blocks, 128, 0, s1>>>(x, n, &dm[0]);
	CHECK_OK(cudaEventRecord(e, s1));
	CHECK_OK(cudaStreamWaitEvent(s2, e, 0));
	consumer<<<blocks, 128, 0, s2>>>(x, y, n, &dm[1], &dm[0]);
	CHECK_OK(cudaStreamSynchronize(s2));
	/* s2's work completed: so did what it waited for */
	CHECK_OK(cudaEventQuery(e));
	CHECK_OK(cudaMemcpy(hy, y, sizeof(hy), cudaMemcpyDeviceToHost));
	CHECK_OK(cudaMemcpy(hm, dm, sizeof(hm), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		CHECK(hy[i] == 2 * (3 * i + 1));
	/* every consumer CTA saw every producer CTA's last store */
	CHECK(hm[0].done == blocks);
	CHECK(hm[1].seen_done == blocks);
	unsigned long long p_last = 0, c_first = ~0ull;
	for (int b = 0; b < blocks; b++) {
		p_last = hm[0].last[b] > p_last ? hm[0].last[b] : p_last;
		c_first = hm[1].first[b] < c_first ? hm[1].first[b] : c_first;
	}
	printf("# producer's last store at %llu, consumer's first load at %llu (device clock)\n",
	       p_last, c_first);
	if (on_sim()) /* one SM: one clock for both */
		CHECK(c_first >= p_last);

	CHECK_OK(cudaEventDestroy(e));
	CHECK_OK(cudaStreamDestroy(s1));
	CHECK_OK(cudaStreamDestroy(s2));
	CHECK_OK(cudaFree(x));
	CHECK_OK(cudaFree(y));
	CHECK_OK(cudaFree(dm));
	return 0;
}

/* spins until the host opens the gate; notes the other kernel's flag */
__global__ void gated(const volatile int *gate, marks *m, marks *om)
{
	while (!*gate)
		if (*(volatile int *)&om->other)
			m->seen_other = 1;
	if (*(volatile int *)&om->other)
		m->seen_other = 1;
	__threadfence();
	m->done = 1;
	m->last[0] = now();
}

__global__ void other(marks *m)
{
	m->first[0] = now();
	*(volatile int *)&m->other = 1;
	__threadfence();
}

__global__ void after_gate(marks *m, marks *gm)
{
	m->seen_done = *(volatile int *)&gm->done;
	m->first[0] = now();
}

static int test_gated_overlap(void)
{
	cudaStream_t s1, s2, s3;
	cudaEvent_t e;
	int *gate, *dgate;
	marks *dm, hm[3];

	if (on_sim()) {
		printf("# the sim backend runs each job to completion inside its launch, one at "
		       "a time: a gated kernel never ends there (the guest runs this test)\n");
		return KTAP_SKIP;
	}
	CHECK_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CHECK_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CHECK_OK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
	CHECK_OK(cudaEventCreate(&e));
	CHECK_OK(cudaHostAlloc((void **)&gate, sizeof(int), cudaHostAllocMapped));
	CHECK_OK(cudaHostGetDevicePointer((void **)&dgate, gate, 0));
	*(volatile int *)gate = 0;
	CHECK_OK(cudaMalloc(&dm, sizeof(hm)));
	for (int i = 0; i < 3; i++)
		marks_init(&hm[i]);
	CHECK_OK(cudaMemcpy(dm, hm, sizeof(hm), cudaMemcpyHostToDevice));

	/*
	 * Every kernel loaded before the gated one runs: CUDA's lazy loading
	 * (the default since 12.2) loads a kernel at its first launch, which
	 * waits for the device while the gated kernel spins (the H200 hung
	 * here).  vGPU loads a module's kernels at once.
	 */
	{
		struct cudaFuncAttributes fa;

		CHECK_OK(cudaFuncGetAttributes(&fa, gated));
		CHECK_OK(cudaFuncGetAttributes(&fa, other));
		CHECK_OK(cudaFuncGetAttributes(&fa, after_gate));
	}
	gated<<<1, 1, 0, s1>>>(dgate, &dm[0], &dm[2]);
	CHECK_OK(cudaEventRecord(e, s1));
	/* returns while the kernel before e is gated: a device-side wait */
	CHECK_OK(cudaStreamWaitEvent(s2, e, 0));
	after_gate<<<1, 1, 0, s2>>>(&dm[1], &dm[0]);
	other<<<1, 1, 0, s3>>>(&dm[2]);
	/* s3's kernel completes while the gated one still runs */
	CHECK_OK(cudaStreamSynchronize(s3));
	CHECK_RT(cudaEventQuery(e), cudaErrorNotReady);
	CHECK_RT(cudaStreamQuery(s2), cudaErrorNotReady);
	*(volatile int *)gate = 1;
	CHECK_OK(cudaDeviceSynchronize());
	CHECK_OK(cudaMemcpy(hm, dm, sizeof(hm), cudaMemcpyDeviceToHost));
	/* the two kernels overlapped: the gated one saw the other's store */
	CHECK(hm[0].seen_other == 1);
	/* the dependent kernel started after the gated one's last store */
	CHECK(hm[1].seen_done == 1);

	CHECK_OK(cudaEventDestroy(e));
	CHECK_OK(cudaStreamDestroy(s1));
	CHECK_OK(cudaStreamDestroy(s2));
	CHECK_OK(cudaStreamDestroy(s3));
	CHECK_OK(cudaFreeHost(gate));
	CHECK_OK(cudaFree(dm));
	return 0;
}

/*
 * A launch with a priority attribute goes to the context's queue of that
 * priority, not its stream's (docs/cuda.md): a gated kernel launched so
 * on s, then a kernel launched plainly on s, so the two are on different
 * queues; then both plainly, so the two are on one queue, where libcuda
 * adds no wait for the stream's last launch (a queue runs its jobs one
 * at a time: uapi "Queues").  Either way the second starts only after
 * the gated kernel's last store, although the host opens the gate only
 * after a kernel on another stream has run to completion (on the sim
 * backend, which runs a job inside its launch, the gate is open before).
 */
static int test_same_stream_orders(void)
{
	bool sim = on_sim();
	int least, greatest, *gate, *dgate;
	cudaStream_t s, s3;
	marks *dm, hm[3];

	CHECK_OK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK_OK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));
	CHECK_OK(cudaHostAlloc((void **)&gate, sizeof(int), cudaHostAllocMapped));
	CHECK_OK(cudaHostGetDevicePointer((void **)&dgate, gate, 0));
	CHECK_OK(cudaMalloc(&dm, sizeof(hm)));
	{
		struct cudaFuncAttributes fa; /* loaded before any gate (test_gated_overlap) */

		CHECK_OK(cudaFuncGetAttributes(&fa, gated));
		CHECK_OK(cudaFuncGetAttributes(&fa, other));
		CHECK_OK(cudaFuncGetAttributes(&fa, after_gate));
	}
	for (int round = 0; round < 2; round++) {
		*(volatile int *)gate = sim;
		for (int i = 0; i < 3; i++)
			marks_init(&hm[i]);
		CHECK_OK(cudaMemcpy(dm, hm, sizeof(hm), cudaMemcpyHostToDevice));
		if (round == 0) {
			cudaLaunchConfig_t cfg = {};
			cudaLaunchAttribute a[1];

			a[0].id = cudaLaunchAttributePriority;
			a[0].val.priority = greatest;
			cfg.gridDim = dim3(1);
			cfg.blockDim = dim3(1);
			cfg.stream = s;
			cfg.attrs = a;
			cfg.numAttrs = 1;
			CHECK_OK(cudaLaunchKernelEx(&cfg, gated, (const volatile int *)dgate,
						    &dm[0], &dm[2]));
		} else {
			gated<<<1, 1, 0, s>>>(dgate, &dm[0], &dm[2]);
		}
		after_gate<<<1, 1, 0, s>>>(&dm[1], &dm[0]);
		CHECK_OK(cudaGetLastError());
		other<<<1, 1, 0, s3>>>(&dm[2]);
		CHECK_OK(cudaStreamSynchronize(s3));
		if (!sim)
			CHECK_RT(cudaStreamQuery(s), cudaErrorNotReady);
		*(volatile int *)gate = 1;
		CHECK_OK(cudaStreamSynchronize(s));
		CHECK_OK(cudaMemcpy(hm, dm, sizeof(hm), cudaMemcpyDeviceToHost));
		printf("# round %d (%s): the second kernel saw done=%d\n", round,
		       round ? "one queue" : "two queues", hm[1].seen_done);
		CHECK(hm[0].done == 1);
		CHECK(hm[1].seen_done == 1);
	}
	CHECK_OK(cudaStreamDestroy(s));
	CHECK_OK(cudaStreamDestroy(s3));
	CHECK_OK(cudaFreeHost(gate));
	CHECK_OK(cudaFree(dm));
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "priorities", test_priorities },
		{ "wait_event_orders", test_wait_event_orders },
		{ "gated_overlap", test_gated_overlap },
		{ "same_stream_orders", test_same_stream_orders },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
