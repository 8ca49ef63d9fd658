// SPDX-License-Identifier: MIT
/*
 * More of libcuda.so.1's driver API (docs/cuda.md), as test_cuda.c:
 * libraries (cuLibrary*, cuKernel*: context-independent loading, a
 * CUkernel launched as a CUfunction, one module per context), host
 * functions and stream callbacks, and the small queries a runtime asks.
 */
#include "cuda_test.h"

static void saxpy_check(struct __test_metadata *_metadata, CUfunction f)
{
	enum { N = 300 };
	float x[N], y[N], out[N], a = -0.75f;
	CUdeviceptr dx, dy;
	int n = N;
	void *params[] = { &n, &a, &dx, &dy };

	for (int i = 0; i < N; i++) {
		x[i] = (float)(i * 3 % 11);
		y[i] = (float)i * 0.25f;
	}
	CU(cuMemAlloc(&dx, sizeof(x)));
	CU(cuMemAlloc(&dy, sizeof(y)));
	CU(cuMemcpyHtoD(dx, x, sizeof(x)));
	CU(cuMemcpyHtoD(dy, y, sizeof(y)));
	CU(cuLaunchKernel(f, (N + 63) / 64, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	CU(cuMemcpyDtoH(out, dy, sizeof(out)));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(fmaf(a, x[i], y[i]), out[i]);
	CU(cuMemFree(dx));
	CU(cuMemFree(dy));
}

TEST_F(cu, a_library_loads_once_and_runs_in_each_context)
{
	CUlibrary lib;
	CUkernel k, ks[16], k2;
	CUfunction f1, f2;
	CUmodule m;
	CUcontext other;
	CUlibrary back;
	CUdeviceptr g;
	size_t gs, off, sz;
	unsigned int count = 0;
	const char *name;
	int regs = 0;
	void *img = read_file("kernels.fatbin", NULL);

	ASSERT_NE(NULL, img);
	CU(cuLibraryLoadData(&lib, img, NULL, NULL, 0, NULL, NULL, 0));
	free(img); /* the library keeps what it needs */
	CU(cuLibraryGetKernelCount(&count, lib));
	EXPECT_EQ(9u, count); /* the __global__ functions of tests/cuda/kernels.cu */
	CU(cuLibraryEnumerateKernels(ks, count, lib));
	if (on_vgpu()) /* NVIDIA's library accepts a larger count */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLibraryEnumerateKernels(ks, count + 1, lib));
	CU(cuLibraryGetKernel(&k, lib, "saxpy"));
	CU(cuKernelGetName(&name, k));
	EXPECT_STREQ("saxpy", name);
	CU(cuKernelGetLibrary(&back, k));
	EXPECT_TRUE(back == lib);
	EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuLibraryGetKernel(&k2, lib, "nope"));
	/* a CUkernel launches as a CUfunction */
	saxpy_check(_metadata, (CUfunction)k);
	CU(cuKernelGetFunction(&f1, k));
	CU(cuFuncGetName(&name, f1));
	EXPECT_STREQ("saxpy", name);
	saxpy_check(_metadata, f1);
	CU(cuKernelGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, k, self->dev));
	EXPECT_GT(regs, 0);
	CU(cuKernelGetParamInfo(k, 1, &off, &sz));
	EXPECT_EQ(4u, off);
	EXPECT_EQ(4u, sz);
	CU(cuLibraryGetGlobal(&g, &gs, lib, "table"));
	EXPECT_EQ(16u, gs);
	CU(cuLibraryGetModule(&m, lib));
	CU(cuFuncGetModule(&m, f1));
	/* another context: its own module and function */
	CU(cuCtxCreate(&other, NULL, 0, self->dev));
	CU(cuKernelGetFunction(&f2, k));
	EXPECT_TRUE(f1 != f2);
	saxpy_check(_metadata, (CUfunction)k);
	CU(cuCtxDestroy(other));
	CU(cuCtxSetCurrent(self->ctx));
	CU(cuLibraryUnload(lib));
	/* vGPU only: NVIDIA's library crashes on the stale handles (SIGSEGV on
	 * the H200, tests/cuda/real-gpu/h200-2026-11-29) */
	if (!on_vgpu())
		return;
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLibraryGetKernel(&k2, lib, "saxpy"));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuKernelGetFunction(&f1, k));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLibraryUnload(lib));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
		  cuLaunchKernel(f1, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL)); /* its module went */
}

/* nvcc's __fatBinC_Wrapper_t, as a program's .nvFatBinSegment holds it */
struct fatbin_wrapper {
	int magic;
	int version;
	const void *data;
	void *filename_or_fatbins;
};

TEST_F(cu, an_embedded_fatbin_through_its_wrapper)
{
	void *img = read_file("kernels.fatbin", NULL);
	struct fatbin_wrapper w = { 0x466243b1, 1, img, NULL };
	CUmodule m;
	CUfunction f;
	CUlibrary lib;

	VGPU_ONLY(); /* NVIDIA's cuModuleLoadFatBinary takes the fatbin, not nvcc's wrapper */
	ASSERT_NE(NULL, img);
	CU(cuModuleLoadFatBinary(&m, &w));
	CU(cuModuleGetFunction(&f, m, "saxpy"));
	saxpy_check(_metadata, f);
	CU(cuModuleUnload(m));
	CU(cuLibraryLoadData(&lib, &w, NULL, NULL, 0, NULL, NULL, 0));
	CU(cuLibraryUnload(lib));
	w.data = NULL;
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadFatBinary(&m, &w));
	free(img);
}

TEST_F(cu, library_errors)
{
	CUlibrary lib;
	CUkernel k;
	CUresult r;
	void *sass = read_file("kernels.sass.fatbin", NULL);

	ASSERT_NE(NULL, sass);
	if (on_vgpu()) /* a real GPU runs SASS */
		EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU,
			  cuLibraryLoadData(&lib, sass, NULL, NULL, 0, NULL, NULL, 0));
	/* not an image: vGPU says so at once; CUDA's lazy loading (the
	 * default) when the library is first used */
	r = cuLibraryLoadData(&lib, "not ptx", NULL, NULL, 0, NULL, NULL, 0);
	if (r == CUDA_SUCCESS) {
		EXPECT_FALSE(on_vgpu());
		EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuLibraryGetKernel(&k, lib, "k"));
		CU(cuLibraryUnload(lib));
	} else {
		EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, r);
	}
	EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND,
		  cuLibraryLoadFromFile(&lib, "/nonexistent.ptx", NULL, NULL, 0, NULL, NULL, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuLibraryLoadData(NULL, sass, NULL, NULL, 0, NULL, NULL, 0));
	CU(cuLibraryLoadFromFile(&lib, path_of("kernels.ptx"), NULL, NULL, 0, NULL, NULL, 0));
	CU(cuLibraryUnload(lib));
	free(sass);
}

struct seen {
	int value;
	int calls;
	CUresult status;
	CUstream stream;
};

static int *host_buf;

static void CUDA_CB host_fn(void *p)
{
	struct seen *s = p;

	s->value = host_buf[100];
	s->calls++;
}

static void CUDA_CB callback(CUstream st, CUresult status, void *p)
{
	struct seen *s = p;

	s->stream = st;
	s->status = status;
	s->calls++;
}

TEST_F(cu, host_functions_run_after_the_work_before_them)
{
	enum { N = 256 };
	int n = N, mul = 5, add = 2;
	struct seen a = { 0 }, b = { 0 };
	CUdeviceptr d;
	CUfunction f;
	CUstream s;
	void *params[] = { &d, &n, &mul, &add };

	CU(cuModuleGetFunction(&f, self->mod, "mul_add"));
	CU(cuStreamCreate(&s, 0));
	CU(cuMemAllocHost((void **)&host_buf, N * sizeof(int)));
	CU(cuMemAlloc(&d, N * sizeof(int)));
	CU(cuMemsetD32Async(d, 4, N, s));
	CU(cuLaunchKernel(f, N / 64, 1, 1, 64, 1, 1, 0, s, params, NULL));
	CU(cuMemcpyDtoHAsync(host_buf, d, N * sizeof(int), s));
	CU(cuLaunchHostFunc(s, host_fn, &a));
	CU(cuStreamAddCallback(s, callback, &b, 0));
	CU(cuStreamSynchronize(s));
	EXPECT_EQ(1, a.calls);
	EXPECT_EQ(4 * 5 + 2, a.value);
	EXPECT_EQ(1, b.calls);
	EXPECT_CU(CUDA_SUCCESS, b.status);
	EXPECT_TRUE(b.stream == s);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamAddCallback(s, callback, &b, 1));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchHostFunc(s, NULL, NULL));
	CU(cuStreamDestroy(s));
	CU(cuMemFree(d));
	CU(cuMemFreeHost(host_buf));
}

TEST_F(cu, small_queries)
{
	unsigned long long id1 = 0, id2 = 0, id0 = 0;
	char bus[32] = "";
	CUstream a, b;
	CUfunc_cache c = CU_FUNC_CACHE_PREFER_NONE;
	CUfunction f;
	CUmodule m;

	CU(cuStreamCreate(&a, 0));
	CU(cuStreamCreate(&b, 0));
	CU(cuStreamGetId(a, &id1));
	CU(cuStreamGetId(b, &id2));
	CU(cuStreamGetId(NULL, &id0));
	EXPECT_NE(id1, id2);
	EXPECT_NE(id0, id1);
	CU(cuDeviceGetPCIBusId(bus, sizeof(bus), self->dev));
	EXPECT_EQ(12u, strlen(bus));
	CU(cuCtxSetCacheConfig(CU_FUNC_CACHE_PREFER_SHARED));
	CU(cuCtxGetCacheConfig(&c));
	EXPECT_EQ((int)CU_FUNC_CACHE_PREFER_SHARED, (int)c);
	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	CU(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_L1));
	CU(cuFuncGetModule(&m, f));
	EXPECT_TRUE(m == self->mod);
	CU(cuStreamDestroy(a));
	CU(cuStreamDestroy(b));
}

TEST_F(cu, pitched_memory_and_2d_copies)
{
	enum { W = 100, H = 7, HP = 110 }; /* ints per row; the host's second pitch */
	static int a[H][W], b[H][HP];
	size_t pitch = 0;
	CUdeviceptr d, d2;
	CUstream s;
	CUDA_MEMCPY2D c;

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			a[y][x] = y * 1000 + x;
	CU(cuMemAllocPitch(&d, &pitch, W * sizeof(int), H, 4));
	EXPECT_EQ(0u, pitch % 512);
	EXPECT_GE(pitch, W * sizeof(int));
	CU(cuMemAllocPitch(&d2, &pitch, W * sizeof(int), H, 4));
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = a;
	c.srcPitch = sizeof(a[0]);
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d;
	c.dstPitch = pitch;
	c.WidthInBytes = W * sizeof(int);
	c.Height = H;
	CU(cuMemcpy2D(&c));
	/* a 10x3 block at (5, 2) to (0, 0) of d2, on a stream */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = pitch;
	c.srcXInBytes = 5 * sizeof(int);
	c.srcY = 2;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = d2;
	c.dstPitch = pitch;
	c.WidthInBytes = 10 * sizeof(int);
	c.Height = 3;
	CU(cuStreamCreate(&s, 0));
	CU(cuMemsetD32Async(d2, 0xffffffffu, pitch / 4 * H, s));
	CU(cuMemcpy2DAsync(&c, s));
	CU(cuStreamSynchronize(s));
	/* back to the host at another pitch */
	memset(&c, 0, sizeof(c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d2;
	c.srcPitch = pitch;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = b;
	c.dstPitch = sizeof(b[0]);
	c.WidthInBytes = W * sizeof(int);
	c.Height = H;
	CU(cuMemcpy2D(&c));
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			ASSERT_EQ(y < 3 && x < 10 ? a[y + 2][x + 5] : -1, b[y][x]);
	/* too wide for its pitch; an array; past the allocation */
	c.WidthInBytes = sizeof(b[0]) + 4;
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
	c.WidthInBytes = 4;
	c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
	if (on_vgpu()) /* vGPU has no arrays (NVIDIA's: INVALID_VALUE, no array given) */
		EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemcpy2D(&c));
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcY = H;
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpy2D(&c));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAllocPitch(&d, &pitch, 16, 4, 3));
	CU(cuStreamDestroy(s));
	CU(cuMemFree(d));
	CU(cuMemFree(d2));
}

TEST_F(cu, stream_ordered_allocation)
{
	enum { N = 128 };
	int host[N], n = N, mul = 3, add = -1;
	CUdeviceptr d;
	CUfunction f;
	CUstream s;
	void *params[] = { &d, &n, &mul, &add };

	CU(cuModuleGetFunction(&f, self->mod, "mul_add"));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU(cuMemAllocAsync(&d, sizeof(host), s));
	CU(cuMemsetD32Async(d, 7, N, s));
	CU(cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, s, params, NULL));
	CU(cuMemcpyDtoHAsync(host, d, sizeof(host), s));
	CU(cuMemFreeAsync(d, s));
	CU(cuStreamSynchronize(s));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(7 * 3 - 1, host[i]);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeAsync(d, s));
	if (on_vgpu()) /* a garbage stream crashes NVIDIA's library */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
			  cuMemAllocAsync(&d, 64, (CUstream)(uintptr_t)0xdead0000));
	CU(cuStreamDestroy(s));
}

TEST_F(cu, refused_features_say_so)
{
	static int buf[1024];
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	CUgraph g;
	CUevent e;
	CUstream s;

	VGPU_ONLY(); /* what vGPU refuses, a real GPU does */
	EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuMemHostRegister(buf, sizeof(buf), 0));
	EXPECT_CU(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, cuMemHostUnregister(buf));
	CU(cuStreamCreate(&s, 0));
	EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	CU(cuStreamIsCapturing(s, &st));
	EXPECT_EQ((int)CU_STREAM_CAPTURE_STATUS_NONE, (int)st);
	EXPECT_CU(CUDA_ERROR_ILLEGAL_STATE, cuStreamEndCapture(s, &g));
	CU(cuEventCreate(&e, 0));
	CU(cuEventRecordWithFlags(e, s, CU_EVENT_RECORD_DEFAULT));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventRecordWithFlags(e, s, 0x10));
	CU(cuEventDestroy(e));
	CU(cuStreamDestroy(s));
}

TEST_F(cu, occupancy_and_context_ids)
{
	unsigned long long id1 = 0, id2 = 0;
	CUcontext other;
	CUfunction f;
	int n = -1;

	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 256, 0));
	if (on_vgpu()) { /* a vGPU SM runs one CTA at a time (an H200's: 8 here) */
		EXPECT_EQ(1, n);
	} else {
		EXPECT_GE(n, 1);
	}
	CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 2048, 0));
	EXPECT_EQ(0, n);
	CU(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, 128, 1 << 20, 0));
	EXPECT_EQ(0, n);
	CU(cuCtxGetId(NULL, &id1));
	CU(cuCtxCreate(&other, NULL, 0, self->dev));
	CU(cuCtxGetId(other, &id2));
	EXPECT_NE(id1, id2);
	CU(cuCtxDestroy(other));
}

TEST_HARNESS_MAIN
