// SPDX-License-Identifier: MIT
/*
 * Device malloc/free and new/delete, the way CUDA code uses them: every
 * thread builds a linked list with new and walks and deletes it (twice,
 * the second time from freed memory); a block's buffer malloc'd by one
 * launch, filled, then summed and freed by the next; the heap sized with
 * cudaDeviceSetLimit(cudaLimitMallocHeapSize), NULL once it is used up,
 * and the limit fixed once a kernel that mallocs has run.  The host
 * computes each answer.
 */
#include "corpus.h"

struct node {
	int value;
	node *next;
};

__global__ void lists(long long *out, int n)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	node *head = nullptr;
	long long sum = 0;
	int count = 0;

	if (t >= n)
		return;
	for (int i = 0; i < t % 7 + 3; i++) {
		node *x = new node;
		if (!x) {
			out[t] = -1;
			return;
		}
		x->value = t * 100 + i;
		x->next = head;
		head = x;
	}
	while (head) {
		node *next = head->next;
		sum += head->value;
		count++;
		delete head;
		head = next;
	}
	out[t] = sum * 1000 + count;
}

static int t_linked_lists(void)
{
	const int n = 300;
	dbuf<long long> out(n);
	std::vector<long long> want(n);

	for (int t = 0; t < n; t++) {
		long long sum = 0;
		for (int i = 0; i < t % 7 + 3; i++)
			sum += t * 100 + i;
		want[t] = sum * 1000 + t % 7 + 3;
	}
	for (int round = 0; round < 2; round++) {
		out.zero();
		lists<<<(n + 127) / 128, 128>>>(out, n);
		CHECK_LAUNCH();
		CHECK_SAME(want, out.get());
	}
	return 0;
}

/* each block's buffer of blockDim.x ints, malloc'd by its thread 0 */
__global__ void fill_buffers(int **slots)
{
	__shared__ int *buf;

	if (threadIdx.x == 0)
		buf = (int *)malloc(blockDim.x * sizeof(int));
	__syncthreads();
	if (!buf)
		return;
	buf[threadIdx.x] = blockIdx.x * 1000 + threadIdx.x * 3;
	if (threadIdx.x == 0)
		slots[blockIdx.x] = buf;
}

__global__ void sum_and_free(int **slots, long long *sums)
{
	int *buf = slots[blockIdx.x];

	atomicAdd((unsigned long long *)&sums[blockIdx.x], (unsigned long long)buf[threadIdx.x]);
	__syncthreads();
	if (threadIdx.x == 0)
		free(buf);
}

static int t_buffers_across_launches(void)
{
	const int blocks = 20, threads = 96;
	dbuf<int *> slots(blocks);
	dbuf<long long> sums(blocks);
	std::vector<long long> want(blocks);

	for (int b = 0; b < blocks; b++) {
		want[b] = 0;
		for (int i = 0; i < threads; i++)
			want[b] += b * 1000 + i * 3;
	}
	for (int round = 0; round < 3; round++) {
		slots.zero();
		sums.zero();
		fill_buffers<<<blocks, threads>>>(slots);
		CHECK_LAUNCH();
		std::vector<int *> p = slots.get();
		std::sort(p.begin(), p.end());
		for (int b = 0; b < blocks; b++) {
			CHECK(p[b] && (uintptr_t)p[b] % 16 == 0);
			CHECK(b == 0 || (char *)p[b - 1] + threads * sizeof(int) <= (char *)p[b]);
		}
		sum_and_free<<<blocks, threads>>>(slots, sums);
		CHECK_LAUNCH();
		CHECK_SAME(want, sums.get());
	}
	return 0;
}

__global__ void grab(void **out, size_t bytes, int keep)
{
	int t = blockIdx.x * blockDim.x + threadIdx.x;
	void *p = malloc(bytes);

	out[t] = p;
	if (!keep)
		free(p);
}

static int t_heap_limit(void)
{
	const int n = 32;
	dbuf<void *> out(n);
	size_t limit = 0;
	int got = 0;

	CHECK_OK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
	CHECK(limit == 8u << 20); /* CUDA's default */
	/* the least heap is 4 MiB (an H200 with CUDA 13 reports the same) */
	CHECK_OK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64 << 10));
	CHECK_OK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
	CHECK(limit == 4u << 20);
	CHECK_OK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 5 << 20));
	CHECK_OK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
	CHECK(limit == 5u << 20);
	/* more than the heap holds: NULL */
	grab<<<1, 1>>>(out, 6 << 20, 0);
	CHECK_LAUNCH();
	CHECK(out.get()[0] == nullptr);
	/* 32 blocks of 256 KiB: at most 20 fit in 5 MiB (vGPU: 19, with its
	 * 512 bytes of header and 16 a block; an H200 with CUDA 13: 16) */
	grab<<<1, n>>>(out, 256 << 10, 1);
	CHECK_LAUNCH();
	for (void *p : out.get())
		got += p != nullptr;
	printf("# %d of %d blocks of 256 KiB\n", got, n);
	CHECK(got >= 1 && got <= 20);
	/* the heap exists: its size is fixed */
	CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 1 << 20) == cudaErrorInvalidValue);
	CHECK(cudaGetLastError() == cudaErrorInvalidValue);
	CHECK_OK(cudaDeviceGetLimit(&limit, cudaLimitMallocHeapSize));
	CHECK(limit == 5u << 20);
	return 0;
}

CORPUS_MAIN(T(t_linked_lists), T(t_buffers_across_launches), T(t_heap_limit))
