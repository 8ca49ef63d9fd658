// SPDX-License-Identifier: MIT
/*
 * More of libcuda.so.1's driver API (docs/cuda.md), as test_cuda.c:
 * libraries (cuLibrary*, cuKernel*: context-independent loading, a
 * CUkernel launched as a CUfunction, one module per context), host
 * functions and stream callbacks, the small queries a runtime asks, and
 * multicast objects (none, as on an H200 without an NVLink switch).
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
	EXPECT_GE(n, 1); /* the model's figures: occupancy_* below */
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

/*
 * Occupancy, end to end: CUDA's arithmetic over the device model's limits
 * (docs/cuda.md "Occupancy"; the arithmetic alone against an H200's
 * answers: test_occupancy.c).  saxpy: few registers, no shared memory.
 */
static size_t CUDA_CB b2d_100k(int block)
{
	return block >= 512 ? 100 * 1024 : 0;
}

static int blocks(CUfunction f, int block, size_t dyn)
{
	int n = -1;

	if (cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, block, dyn))
		return -1;
	return n;
}

static int attr(CUdevice_attribute a, CUdevice d)
{
	int v = -1;

	return cuDeviceGetAttribute(&v, a, d) ? -1 : v;
}

static int clusters(CUfunction f, unsigned int size, unsigned int block, unsigned int dyn,
		    int *n)
{
	CUlaunchAttribute at = { .id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION };
	CUlaunchConfig c = { .gridDimX = 2112, .gridDimY = 1, .gridDimZ = 1, .blockDimX = block,
			     .blockDimY = 1, .blockDimZ = 1, .sharedMemBytes = dyn,
			     .attrs = &at, .numAttrs = size ? 1 : 0 };

	at.value.clusterDim.x = size;
	at.value.clusterDim.y = 1;
	at.value.clusterDim.z = 1;
	*n = -1;
	return (int)cuOccupancyMaxActiveClusters(n, f, &c);
}

/* the vgpu model (the sim's default): one CTA an SM, 32 warps */
TEST_F(cu, occupancy_one_cta_an_sm_on_the_vgpu_model)
{
	int n = -1, g = -1, b = -1, sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, self->dev);
	size_t bytes = 0;
	CUfunction f;

	if (attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, self->dev) != 1)
		SKIP(return, "not the vgpu model");
	EXPECT_EQ(1024, attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, self->dev));
	EXPECT_EQ(0, attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, self->dev));
	EXPECT_EQ(228 * 1024, attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, self->dev));
	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	EXPECT_EQ(1, blocks(f, 32, 0));
	EXPECT_EQ(1, blocks(f, 1024, 48 * 1024));
	EXPECT_EQ(0, blocks(f, 1025, 0));
	EXPECT_EQ(0, blocks(f, 32, 48 * 1024 + 1));
	CU(cuOccupancyMaxPotentialBlockSize(&g, &b, f, NULL, 0, 0));
	EXPECT_EQ(1024, b);
	EXPECT_EQ(sms, g);
	CU(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 256));
	EXPECT_EQ((size_t)48 * 1024, bytes);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 2,
										    256));
	EXPECT_EQ(0, clusters(f, 2, 128, 0, &n));
	EXPECT_EQ(sms / 2, n);
	EXPECT_EQ(0, clusters(f, 8, 128, 0, &n));
	EXPECT_EQ(sms / 8, n);
	/* every kernel runs 1024 threads: NUM_REGS at most 64 (docs/cuda.md) */
	for (const char *const *k = (const char *const[]){ "saxpy", "reduce_sum", "mul_add",
							    "dyn_reverse", "bump", "params",
							    "warp_order", NULL };
	     *k; k++) {
		CU(cuModuleGetFunction(&f, self->mod, *k));
		CU(cuFuncGetAttribute(&n, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
		EXPECT_LE(n, 64);
		EXPECT_EQ(1, blocks(f, 1024, 0));
	}
}

/*
 * The h100 model ($VGPU_SIM_MODEL=h100 on the sim, model=h100 in the
 * guest), or an H100/H200 itself (test_cuda_lib_abi on one): the same
 * answers.
 */
TEST(occupancy_as_an_h100_answers)
{
	CUcontext ctx;
	CUmodule mod;
	CUdevice d;
	CUfunction f;
	int n = -1, g = -1, b = -1, regs = -1;
	size_t bytes = 0;
	CUlaunchConfig lc = { .gridDimX = 264, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 128,
			      .blockDimY = 1, .blockDimZ = 1 };

	setenv("VGPU_SIM_MODEL", "h100", 1); /* before the sim device opens */
	CU(cuInit(0));
	CU(cuDeviceGet(&d, 0));
	if (attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, d) != 32)
		SKIP(return, "not an H100-shaped device");
	EXPECT_EQ(2048, attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, d));
	EXPECT_EQ(1024, attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, d));
	EXPECT_EQ(227 * 1024, attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d));
	EXPECT_EQ(228 * 1024, attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, d));
	EXPECT_EQ(65536, attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, d));
	EXPECT_EQ(132, attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
	CU(cuCtxCreate(&ctx, NULL, 0, d));
	CU(cuModuleLoad(&mod, path_of("kernels.ptx")));
	CU(cuModuleGetFunction(&f, mod, "saxpy"));
	CU(cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
	ASSERT_LE(regs, 32); /* what the figures below assume */
	/* the CTA limit, the warp limit, shared memory with its 1 KiB reserve */
	EXPECT_EQ(32, blocks(f, 32, 0));
	EXPECT_EQ(2, blocks(f, 1024, 0));
	EXPECT_EQ(0, blocks(f, 1025, 0));
	EXPECT_EQ(4, blocks(f, 256, 48 * 1024));
	EXPECT_EQ(0, blocks(f, 256, 48 * 1024 + 1)); /* above the function's limit */
	CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 200 * 1024));
	EXPECT_EQ(2, blocks(f, 256, 100 * 1024));
	EXPECT_EQ(1, blocks(f, 256, 200 * 1024));
	/* carveouts: 25 % (57 KiB) carves 64 KiB; 0 % one CTA's need */
	CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 25));
	CU(cuFuncGetAttribute(&n, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, f));
	EXPECT_EQ(25, n);
	EXPECT_EQ(8, blocks(f, 32, 7 * 1024));
	/* ... which the block-size search does not take (as the H200) */
	CU(cuOccupancyMaxPotentialBlockSize(&g, &b, f, NULL, 60 * 1024, 0));
	EXPECT_EQ(1024, b);
	EXPECT_EQ(264, g);
	CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 0));
	EXPECT_EQ(1, blocks(f, 32, 7 * 1024));
	CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1));
	CU(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_EQUAL)); /* 50 %: 132 KiB */
	EXPECT_EQ(16, blocks(f, 32, 7 * 1024));
	CU(cuFuncSetCacheConfig(f, CU_FUNC_CACHE_PREFER_NONE));
	EXPECT_EQ(28, blocks(f, 32, 7 * 1024));
	/* block sizes */
	CU(cuOccupancyMaxPotentialBlockSize(&g, &b, f, NULL, 0, 0));
	EXPECT_EQ(1024, b);
	EXPECT_EQ(264, g);
	CU(cuOccupancyMaxPotentialBlockSizeWithFlags(&g, &b, f, NULL, 0, 200,
						     CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE));
	EXPECT_EQ(128, b);
	EXPECT_EQ(2112, g);
	CU(cuOccupancyMaxPotentialBlockSize(&g, &b, f, b2d_100k, 0, 0));
	EXPECT_EQ(1024, b);
	EXPECT_EQ(264, g);
	CU(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1, 1024));
	EXPECT_EQ((size_t)200 * 1024, bytes); /* the function's limit */
	CU(cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 32, 32));
	EXPECT_EQ((size_t)7296, bytes); /* 228 KiB / 32 */
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 33,
										    32));
	/* clusters: at most 8 CTAs an SM; 16 only when allowed */
	EXPECT_EQ(0, clusters(f, 1, 128, 0, &n));
	EXPECT_EQ(1056, n);
	EXPECT_EQ(0, clusters(f, 2, 128, 0, &n));
	EXPECT_EQ(528, n);
	EXPECT_EQ(0, clusters(f, 0, 128, 0, &n)); /* no size: none */
	EXPECT_EQ(0, n);
	if (on_vgpu()) {
		/*
		 * Larger clusters on distinct SMs of a GPC: the H200's GPCs
		 * (another die may be fused otherwise), 2 CTAs an SM here.
		 */
		EXPECT_EQ(0, clusters(f, 3, 1024, 0, &n));
		EXPECT_EQ(79, n);
		EXPECT_EQ(0, clusters(f, 8, 1024, 0, &n));
		EXPECT_EQ(30, n);
	}
	EXPECT_EQ(CUDA_ERROR_INVALID_CLUSTER_SIZE, clusters(f, 16, 128, 0, &n));
	CU(cuOccupancyMaxPotentialClusterSize(&n, f, &lc));
	EXPECT_EQ(8, n);
	CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
	EXPECT_EQ(0, clusters(f, 16, 128, 0, &n));
	EXPECT_GE(n, 1);
	if (on_vgpu()) /* not in the GPC of 8 SMs: 7 GPCs x 8 or 9 */
		EXPECT_EQ(58, n);
	CU(cuOccupancyMaxPotentialClusterSize(&n, f, &lc));
	EXPECT_EQ(16, n);
	CU(cuModuleUnload(mod));
	CU(cuCtxDestroy(ctx));
}

/*
 * Multicast objects: none on vGPU, nor on an H200 outside an NVLink switch
 * system, whose driver answers every cuMulticast* call, whatever its
 * arguments, NOT_INITIALIZED before cuInit and NOT_SUPPORTED after, with
 * or without a context, the out-parameters untouched
 * (tests/cuda/real-gpu/multicast-h200-2026-11-30).
 */
static void multicast_answers(struct __test_metadata *_metadata, CUresult want, CUdeviceptr dp)
{
	const CUmulticastObjectProp p = { .numDevices = 1, .size = 2 << 20 };
	CUmulticastObjectProp bad[] = { { .numDevices = 0, .size = 2 << 20 },
					{ .numDevices = 1, .size = 0 },
					{ .numDevices = 1, .size = 1 },
					{ .numDevices = 1, .size = 2 << 20,
					  .handleTypes = CU_MEM_HANDLE_TYPE_FABRIC },
					{ .numDevices = 1, .size = 2 << 20,
					  .handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR },
					{ .numDevices = 1, .size = 2 << 20, .handleTypes = 0x100 },
					{ .numDevices = 1, .size = 2 << 20, .flags = 1 } };
	CUmemGenericAllocationHandle h = 0xdead;
	size_t g = 77;

	EXPECT_CU(want, cuMulticastGetGranularity(&g, &p, CU_MULTICAST_GRANULARITY_MINIMUM));
	EXPECT_CU(want, cuMulticastGetGranularity(&g, &p, CU_MULTICAST_GRANULARITY_RECOMMENDED));
	EXPECT_CU(want, cuMulticastCreate(&h, &p));
	EXPECT_CU(want, cuMulticastAddDevice(0, 0));
	EXPECT_CU(want, cuMulticastBindMem(0, 0, 0, 0, 2 << 20, 0));
	EXPECT_CU(want, cuMulticastBindAddr(0, 0, dp, 2 << 20, 0));
	EXPECT_CU(want, cuMulticastUnbind(0, 0, 0, 2 << 20));
	/* no argument is checked first */
	EXPECT_CU(want, cuMulticastGetGranularity(NULL, &p, CU_MULTICAST_GRANULARITY_MINIMUM));
	EXPECT_CU(want, cuMulticastGetGranularity(&g, NULL, CU_MULTICAST_GRANULARITY_MINIMUM));
	EXPECT_CU(want, cuMulticastGetGranularity(&g, &p, (CUmulticastGranularity_flags)2));
	EXPECT_CU(want, cuMulticastCreate(NULL, &p));
	EXPECT_CU(want, cuMulticastCreate(&h, NULL));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_CU(want, cuMulticastGetGranularity(&g, &bad[i],
							  CU_MULTICAST_GRANULARITY_MINIMUM));
		EXPECT_CU(want, cuMulticastCreate(&h, &bad[i]));
	}
	EXPECT_CU(want, cuMulticastAddDevice(0x1234, 0));
	EXPECT_CU(want, cuMulticastAddDevice(0, 99));
	EXPECT_CU(want, cuMulticastAddDevice(0, -1));
	EXPECT_CU(want, cuMulticastBindMem(0, 0, 0, 0, 2 << 20, 1));
	EXPECT_CU(want, cuMulticastBindMem(0x1234, 0, 0x1234, 0, 0, 0));
	EXPECT_CU(want, cuMulticastBindAddr(0, 0, dp, 2 << 20, 1));
	EXPECT_CU(want, cuMulticastBindAddr(0, 0, 0, 0, 0));
	EXPECT_CU(want, cuMulticastUnbind(0, 99, 0, 2 << 20));
	EXPECT_CU(want, cuMulticastUnbind(0x1234, 0, 1, 0));
	EXPECT_EQ(0xdeadull, h);
	EXPECT_EQ((size_t)77, g);
}

TEST(multicast_is_not_supported)
{
	CUdriverProcAddressQueryResult qs = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	CUresult (*create)(CUmemGenericAllocationHandle *, const CUmulticastObjectProp *);
	const CUmulticastObjectProp p = { .numDevices = 1, .size = 2 << 20 };
	CUmemGenericAllocationHandle h = 0xdead;
	CUcontext ctx;
	CUdeviceptr dp;
	void *fn = NULL;
	int v = -1;

	multicast_answers(_metadata, CUDA_ERROR_NOT_INITIALIZED, 0);
	CU(cuInit(0));
	CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0));
	if (v && !on_vgpu())
		SKIP(return, "this GPU has multicast (an NVLink switch system)");
	EXPECT_EQ(0, v);
	multicast_answers(_metadata, CUDA_ERROR_NOT_SUPPORTED, 0); /* no context */
	CU(cuDevicePrimaryCtxRetain(&ctx, 0));
	CU(cuCtxSetCurrent(ctx));
	CU(cuMemAlloc(&dp, 4 << 20));
	multicast_answers(_metadata, CUDA_ERROR_NOT_SUPPORTED, dp);
	/* cuGetProcAddress: from CUDA 12.1 */
	CU(cuGetProcAddress("cuMulticastCreate", &fn, 13000, 0, &qs));
	EXPECT_EQ((int)CU_GET_PROC_ADDRESS_SUCCESS, (int)qs);
	ASSERT_NE(NULL, fn);
	memcpy(&create, &fn, sizeof(fn));
	EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED, create(&h, &p));
	EXPECT_EQ(0xdeadull, h);
	for (const char *const *n = (const char *const[]){ "cuMulticastAddDevice",
							    "cuMulticastBindMem",
							    "cuMulticastBindAddr",
							    "cuMulticastUnbind",
							    "cuMulticastGetGranularity", NULL };
	     *n; n++) {
		fn = NULL;
		CU(cuGetProcAddress(*n, &fn, 12010, 0, &qs));
		EXPECT_EQ((int)CU_GET_PROC_ADDRESS_SUCCESS, (int)qs);
		EXPECT_NE(NULL, fn);
		CU(cuGetProcAddress(*n, &fn, 12000, 0, &qs));
		EXPECT_EQ((int)CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, (int)qs);
		EXPECT_EQ(NULL, fn);
	}
	CU(cuMemFree(dp));
	CU(cuDevicePrimaryCtxRelease(0));
}

/* CUDA_ERROR_INVALID_VALUE, _INVALID_HANDLE as the H200's driver answers */
TEST_F(cu, occupancy_errors)
{
	size_t bytes;
	CUfunction f;
	int n, g, b;

	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(NULL, f,
											32, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, NULL,
											 32, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 0,
											0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, -1,
											0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&n, f, 32, 0, 2));
	EXPECT_CU(CUDA_SUCCESS, cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, f, 32, 1u << 30));
	EXPECT_EQ(0, n);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 0,
										    32));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1,
										    0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(&bytes, f, 1,
										    1025));
	if (!on_vgpu())
		return; /* NVIDIA's driver crashes on a NULL result */
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyAvailableDynamicSMemPerBlock(NULL, f, 1,
										    32));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialBlockSize(NULL, &b, f, NULL, 0,
									     0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialBlockSize(&g, NULL, f, NULL, 0,
									     0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuOccupancyMaxPotentialBlockSizeWithFlags(&g, &b, f, NULL, 0, 0, 2));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuOccupancyMaxPotentialBlockSize(&g, &b, NULL, NULL,
									      0, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxActiveClusters(&n, f, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuOccupancyMaxPotentialClusterSize(NULL, f, NULL));
}

TEST_HARNESS_MAIN
