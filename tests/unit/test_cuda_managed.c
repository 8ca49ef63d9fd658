// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1's managed memory (cuMemAllocManaged, docs/cuda.md): one
 * pointer for the host and the device.  On vGPU it is device memory mapped
 * on the host at its device address; these tests check what CUDA promises:
 * the CUdeviceptr is the host pointer, kernels see what the host wrote
 * before the launch, the host sees what kernels wrote once synchronized,
 * copies and memsets treat it as device memory, cuMemFree frees it, and
 * CUDA's error codes for a size of 0 and bad flags.
 */
#include <sys/mman.h>

#include "cuda_test.h"

#ifndef CU_POINTER_ATTRIBUTE_IS_MANAGED
#define CU_POINTER_ATTRIBUTE_IS_MANAGED 8
#endif

static CUfunction func(struct __test_metadata *_metadata, CUmodule mod, const char *name)
{
	CUfunction f = NULL;

	EXPECT_CU(CUDA_SUCCESS, cuModuleGetFunction(&f, mod, name));
	return f;
}

/* The usual managed-memory program: host init, kernel, synchronize, host reads. */
TEST_F(cu, managed_saxpy_host_writes_kernel_computes_host_reads)
{
	enum { N = 5000 }; /* several pages, not a whole number of them */
	CUfunction f = func(_metadata, self->mod, "saxpy");
	CUdeviceptr dx = 0, dy = 0;
	float *x, *y, a = 1.5f;
	int n = N, attr = -1;
	void *params[] = { &n, &a, &dx, &dy };

	ASSERT_NE(NULL, f);
	CU(cuDeviceGetAttribute(&attr, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, self->dev));
	EXPECT_EQ(1, attr);
	CU(cuMemAllocManaged(&dx, N * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	CU(cuMemAllocManaged(&dy, N * sizeof(float), CU_MEM_ATTACH_GLOBAL));
	x = (float *)(uintptr_t)dx;
	y = (float *)(uintptr_t)dy;
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 97);
		y[i] = (float)i * 0.5f;
	}
	CU(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
	CU(cuCtxSynchronize());
	for (int i = 0; i < N; i++)
		ASSERT_EQ(fmaf(a, (float)(i % 97), (float)i * 0.5f), y[i]);
	for (int i = 0; i < N; i++) /* the kernel only read x */
		ASSERT_EQ((float)(i % 97), x[i]);
	/* again in place on what the kernel wrote, the host changing x between */
	for (int i = 0; i < N; i++)
		x[i] = -1.0f;
	CU(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
	CU(cuCtxSynchronize());
	for (int i = 0; i < N; i++)
		ASSERT_EQ(fmaf(a, -1.0f, fmaf(a, (float)(i % 97), (float)i * 0.5f)), y[i]);
	CU(cuMemFree(dx));
	CU(cuMemFree(dy));
}

/* CU_MEM_ATTACH_HOST memory on a stream, waited for with the stream */
TEST_F(cu, managed_attach_host_on_a_stream)
{
	enum { N = 3 * 1024 * 1024 / 4 + 17 }; /* over 3 MiB */
	CUfunction f = func(_metadata, self->mod, "mul_add");
	CUdeviceptr d = 0;
	CUstream s;
	int n = N, mul = 3, add = -7, *p;
	void *params[] = { &d, &n, &mul, &add };

	ASSERT_NE(NULL, f);
	CU(cuMemAllocManaged(&d, N * sizeof(int), CU_MEM_ATTACH_HOST));
	p = (int *)(uintptr_t)d;
	for (int i = 0; i < N; i++)
		p[i] = i - N / 2;
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
	CU(cuStreamSynchronize(s));
	for (int i = 0; i < N; i++)
		ASSERT_EQ((i - N / 2) * 3 - 7, p[i]);
	CU(cuStreamDestroy(s));
	CU(cuMemFree(d));
}

/* Copies, memsets and pointer attributes take it for device memory. */
TEST_F(cu, managed_copies_memsets_and_attributes)
{
	enum { N = 1024 };
	CUdeviceptr m = 0, d = 0, dp = 0, start = 0;
	unsigned int type = 0;
	int is_managed = -1, mapped = 0, host[N], back[N];
	void *hp = NULL;
	size_t size = 0;
	int *p;

	CU(cuMemAllocManaged(&m, N * sizeof(int), CU_MEM_ATTACH_GLOBAL));
	CU(cuMemAlloc(&d, N * sizeof(int)));
	p = (int *)(uintptr_t)m;
	/* memsets */
	CU(cuMemsetD32(m, 0x01020304, N));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(0x01020304, p[i]);
	CU(cuMemsetD8(m + 4, 0xff, 4));
	EXPECT_EQ(-1, p[1]);
	EXPECT_EQ(0x01020304, p[2]);
	/* copies, each way, and from device to managed memory */
	for (int i = 0; i < N; i++)
		host[i] = i * 7;
	CU(cuMemcpyHtoD(m, host, sizeof(host)));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(i * 7, p[i]);
	p[5] = 555;
	CU(cuMemcpyDtoH(back, m, sizeof(back)));
	EXPECT_EQ(555, back[5]);
	EXPECT_EQ(7 * 1023, back[1023]);
	CU(cuMemcpyDtoD(d, m, sizeof(back)));
	CU(cuMemsetD32(m, 0, N));
	CU(cuMemcpy(m, d, sizeof(back)));
	EXPECT_EQ(555, p[5]);
	EXPECT_EQ(7 * 1023, p[1023]);
	/* attributes: device memory, managed, the same pointer on both sides */
	CU(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m + 12));
	EXPECT_EQ(1, is_managed);
	CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, m));
	EXPECT_EQ((unsigned int)CU_MEMORYTYPE_DEVICE, type);
	CU(cuPointerGetAttribute(&dp, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, m));
	EXPECT_EQ(m, dp);
	CU(cuPointerGetAttribute(&hp, CU_POINTER_ATTRIBUTE_HOST_POINTER, m));
	EXPECT_EQ((void *)p, hp);
	CU(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, m + 100));
	EXPECT_EQ(m, start);
	CU(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, m));
	EXPECT_EQ(N * sizeof(int), size);
	CU(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, m));
	EXPECT_EQ(1, mapped);
	CU(cuPointerGetAttribute(&is_managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, d));
	EXPECT_EQ(0, is_managed);
	CU(cuMemFree(d));
	CU(cuMemFree(m));
}

/* CUDA's error codes */
TEST_F(cu, managed_errors)
{
	CUdeviceptr d = 0;
	void *h = NULL;

	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&d, 0, CU_MEM_ATTACH_GLOBAL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&d, 4096, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_SINGLE));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL | CU_MEM_ATTACH_HOST));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(&d, 4096, 0x10));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocManaged(NULL, 4096, CU_MEM_ATTACH_GLOBAL));
	EXPECT_EQ(0u, (unsigned int)d); /* untouched by the failures */
	CU(cuMemAllocManaged(&d, 4096, CU_MEM_ATTACH_GLOBAL));
	/* it is not host memory of cuMemHostAlloc's */
	if (on_vgpu())
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost((void *)(uintptr_t)d));
	CU(cuMemFree(d));
	/* freed: neither the pointer attributes nor a second free know it */
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuPointerGetAttribute(&h, CU_POINTER_ATTRIBUTE_HOST_POINTER, d));
	if (on_vgpu())
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(d));
}

/*
 * vGPU maps managed memory on the host at its device address: when the
 * host already uses the address the device hands out, the allocation
 * takes another one (and never replaces the host's mapping).
 */
TEST_F(cu, managed_address_taken_on_the_host)
{
	CUdeviceptr d = 0, d2 = 0;
	void *taken;
	int *p;

	VGPU_ONLY();
	CU(cuMemAllocManaged(&d, 64 * 1024, CU_MEM_ATTACH_GLOBAL));
	CU(cuMemFree(d));
	/* the device's best fit gives the same address again: take it first */
	taken = mmap((void *)(uintptr_t)d, 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ((void *)(uintptr_t)d, taken);
	*(int *)taken = 1234;
	CU(cuMemAllocManaged(&d2, 64 * 1024, CU_MEM_ATTACH_GLOBAL));
	EXPECT_NE(d, d2);
	p = (int *)(uintptr_t)d2;
	p[0] = 42;
	p[16383] = 43;
	CU(cuMemsetD32(d2 + 4, 7, 1));
	EXPECT_EQ(42, p[0]);
	EXPECT_EQ(7, p[1]);
	EXPECT_EQ(43, p[16383]);
	EXPECT_EQ(1234, *(int *)taken);
	CU(cuMemFree(d2));
	EXPECT_EQ(0, munmap(taken, 4096));
}

/* A managed allocation of each of two contexts: each context has its own
 * device address space, the host one. */
TEST_F(cu, managed_in_two_contexts)
{
	CUcontext other;
	CUdeviceptr a = 0, b = 0;
	int *pa, *pb;

	CU(cuMemAllocManaged(&a, 8192, CU_MEM_ATTACH_GLOBAL));
	CU(cuCtxCreate(&other, NULL, 0, self->dev));
	CU(cuMemAllocManaged(&b, 8192, CU_MEM_ATTACH_GLOBAL));
	EXPECT_NE(a, b);
	pa = (int *)(uintptr_t)a;
	pb = (int *)(uintptr_t)b;
	pa[0] = 1;
	pb[0] = 2;
	CU(cuMemsetD32(b + 4, 22, 1));
	EXPECT_EQ(1, pa[0]);
	EXPECT_EQ(2, pb[0]);
	EXPECT_EQ(22, pb[1]);
	CU(cuMemFree(b));
	CU(cuCtxDestroy(other));
	CU(cuCtxSetCurrent(self->ctx));
	EXPECT_EQ(1, pa[0]);
	CU(cuMemFree(a));
}

TEST_HARNESS_MAIN
