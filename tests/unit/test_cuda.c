// SPDX-License-Identifier: MIT
/*
 * The CUDA driver API of libcuda.so.1 (libvgpu/cuda/, docs/cuda.md), as a
 * driver-API program uses it: only <cuda.h>, linked with libcuda.so.1.
 * The kernels are the .cu files of tests/cuda/, compiled by nvcc at build time into
 * CUDA_TEST_DIR (PTX; a fatbin with zstd-compressed PTX, one without
 * compression, one with SASS only; a cubin).  Every result is checked
 * against the host's computation; every error path against CUDA's code.
 *
 * test_cuda_abi.c compiles this same file against NVIDIA's own cuda.h
 * (/usr/local/cuda/include): the binary runs on libcuda.so.1 unchanged,
 * and on a real GPU with NVIDIA's libcuda, where it asserts CUDA's
 * behaviour (tests/cuda/real-gpu/).  What only vGPU does (handles checked,
 * not crashed on; its refusals; VGPU_BACKEND) is under on_vgpu().
 */
#include "cuda_test.h"
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

TEST(calls_before_cuInit_fail_with_not_initialized)
{
	int n;
	CUdevice d;
	CUcontext c;

	EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
	EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGet(&d, 0));
	EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuCtxCreate(&c, NULL, 0, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuInit(1));
	EXPECT_CU(CUDA_SUCCESS, cuInit(0));
	EXPECT_CU(CUDA_SUCCESS, cuDeviceGetCount(&n));
}

TEST(devices_and_their_attributes)
{
	int ver = 0, n = 0, v = 0, major = 0, minor = 0;
	char name[128];
	size_t mem = 0;
	CUdevice d;
	CUuuid u;

	CU(cuInit(0));
	CU(cuDriverGetVersion(&ver));
	EXPECT_EQ(13000, ver);
	CU(cuDeviceGetCount(&n));
	ASSERT_GE(n, 1);
	CU(cuDeviceGet(&d, 0));
	CU(cuDeviceGetName(name, sizeof(name), d));
	if (on_vgpu())
		EXPECT_EQ(0, strncmp(name, "vGPU", 4));
	CU(cuDeviceTotalMem(&mem, d));
	EXPECT_GT(mem, (size_t)0);
	CU(cuDeviceGetUuid(&u, d));
	CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d));
	EXPECT_EQ(32, v);
	CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d));
	EXPECT_EQ(1024, v);
	CU(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
	CU(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d));
	EXPECT_EQ(9, major);
	EXPECT_EQ(0, minor);
	CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d));
	EXPECT_GE(v, 1);
	CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, d));
	EXPECT_EQ(1, v);
	EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGet(&d, n));
	EXPECT_CU(CUDA_ERROR_INVALID_DEVICE, cuDeviceGetName(name, sizeof(name), n));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(NULL, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetAttribute(&v, (CUdevice_attribute)100000, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuDeviceGetCount(NULL));
}

TEST(error_names_and_strings)
{
	const char *s = NULL;

	CU(cuGetErrorName(CUDA_ERROR_INVALID_VALUE, &s));
	EXPECT_STREQ("CUDA_ERROR_INVALID_VALUE", s);
	CU(cuGetErrorName(CUDA_ERROR_LAUNCH_FAILED, &s));
	EXPECT_STREQ("CUDA_ERROR_LAUNCH_FAILED", s);
	CU(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s));
	EXPECT_STREQ("an illegal memory access was encountered", s);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetErrorName((CUresult)12345, &s));
	if (on_vgpu()) /* NVIDIA's library writes through the NULL */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetErrorString(CUDA_SUCCESS, NULL));
}

TEST(cuGetProcAddress_gives_the_versioned_entry_points)
{
	CUdriverProcAddressQueryResult st;
	void *fn = NULL, *pt = NULL;

	CU(cuGetProcAddress("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &st));
	EXPECT_EQ((int)CU_GET_PROC_ADDRESS_SUCCESS, (int)st);
	EXPECT_TRUE(fn == (void *)cuMemAlloc); /* cuMemAlloc_v2 */
	CU(cuGetProcAddress("cuCtxCreate", &fn, 13000, 0, &st));
	EXPECT_TRUE(fn == (void *)cuCtxCreate); /* cuCtxCreate_v4 */
	/* the legacy-stream and the per-thread-stream forms */
	CU(cuGetProcAddress("cuLaunchKernel", &fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st));
	CU(cuGetProcAddress("cuLaunchKernel", &pt, 12000,
			    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	EXPECT_TRUE(fn != pt);
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
	EXPECT_TRUE(pt == (void *)cuLaunchKernel); /* cuLaunchKernel_ptsz */
#else
	EXPECT_TRUE(fn == (void *)cuLaunchKernel);
#endif
	CU(cuGetProcAddress("cuMemAlloc", &pt, 12000,
			    CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	EXPECT_TRUE(pt == (void *)cuMemAlloc); /* no stream: one form */
	/* CUDA's answer for a name it does not know, or not at that version:
	 * success, no function, the reason in the status */
	fn = (void *)cuInit;
	CU(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, &st));
	EXPECT_TRUE(fn == NULL);
	EXPECT_EQ((int)CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, (int)st);
	fn = (void *)cuInit;
	CU(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, NULL));
	EXPECT_TRUE(fn == NULL);
	fn = (void *)cuInit;
	CU(cuGetProcAddress("cuLibraryLoadData", &fn, 11000, 0, &st)); /* CUDA 12.0's */
	EXPECT_TRUE(fn == NULL);
	EXPECT_EQ((int)CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, (int)st);
	CU(cuGetProcAddress("cuLibraryLoadData", &fn, 12000, 0, &st));
	EXPECT_TRUE(fn == (void *)cuLibraryLoadData);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress("cuMemAlloc", &fn, 13000, 8, &st));
	if (on_vgpu()) { /* NVIDIA's library dereferences them */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuGetProcAddress(NULL, &fn, 13000, 0, &st));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
			  cuGetProcAddress("cuMemAlloc", NULL, 13000, 0, &st));
	}
}

struct thread_arg {
	CUcontext seen;
	CUresult first, after;
	CUcontext ctx;
};

static void *other_thread(void *p)
{
	struct thread_arg *a = p;
	CUdeviceptr d;

	cuCtxGetCurrent(&a->seen);
	a->first = cuMemAlloc(&d, 64);
	cuCtxSetCurrent(a->ctx);
	a->after = cuMemAlloc(&d, 64);
	if (!a->after)
		cuMemFree(d);
	return NULL;
}

TEST(contexts_primary_created_and_current_per_thread)
{
	CUcontext p1, p2, c, cur, popped;
	struct thread_arg a = { 0 };
	unsigned int flags;
	CUresult destroyed;
	int active;
	pthread_t th;
	CUdeviceptr d;

	CU(cuInit(0));
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&d, 64));
	CU(cuDevicePrimaryCtxRetain(&p1, 0));
	CU(cuDevicePrimaryCtxRetain(&p2, 0));
	EXPECT_TRUE(p1 == p2);
	CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT_EQ(1, active);
	CU(cuCtxSetCurrent(p1));
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p1);
	CU(cuCtxCreate(&c, NULL, 0, 0)); /* pushed */
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == c);
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxDestroy(p1)); /* primary: Release */
	/* another thread has no current context until it sets one */
	a.ctx = c;
	ASSERT_EQ(0, pthread_create(&th, NULL, other_thread, &a));
	pthread_join(th, NULL);
	EXPECT_TRUE(a.seen == NULL);
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, a.first);
	EXPECT_CU(CUDA_SUCCESS, a.after);
	CU(cuCtxPopCurrent(&popped));
	EXPECT_TRUE(popped == c);
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p1);
	/* the current context pushed again: twice on the stack */
	CU(cuCtxPushCurrent(p1));
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p1);
	CU(cuCtxPopCurrent(&popped));
	EXPECT_TRUE(popped == p1);
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p1);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxPushCurrent(NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuCtxDestroy(NULL));
	CU(cuCtxPushCurrent(c));
	CU(cuCtxDestroy(c));
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p1);
	/* a destroyed context: vGPU's handle is gone (INVALID_CONTEXT);
	 * NVIDIA's library may remember it (CONTEXT_IS_DESTROYED: 709 in
	 * one run on the H200, 201 in the next) */
	destroyed = cuCtxDestroy(c);
	if (on_vgpu()) {
		EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, destroyed);
	} else {
		EXPECT_TRUE(destroyed == CUDA_ERROR_INVALID_CONTEXT ||
			    destroyed == CUDA_ERROR_CONTEXT_IS_DESTROYED);
	}
	/* vGPU only: NVIDIA's library pushes a destroyed context (its later
	 * calls are CUDA_ERROR_CONTEXT_IS_DESTROYED); vGPU refuses it */
	if (on_vgpu())
		EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPushCurrent(c));
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p1);
	CU(cuDevicePrimaryCtxRelease(0));
	CU(cuDevicePrimaryCtxRelease(0));
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(0));
	CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT_EQ(0, active);
	/* the stack empty: nothing to pop */
	while (cuCtxPopCurrent(&popped) == CUDA_SUCCESS)
		;
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxPopCurrent(&popped));
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize());
}

static void saxpy_run(struct __test_metadata *_metadata, CUmodule mod)
{
	enum { N = 1000 };
	float x[N], y[N], out[N], a = 2.5f;
	CUdeviceptr dx, dy;
	CUfunction f;
	int n = N;
	void *params[] = { &n, &a, &dx, &dy };

	for (int i = 0; i < N; i++) {
		x[i] = (float)i * 0.5f - 7.0f;
		y[i] = (float)(i % 17) * 1.25f;
	}
	CU(cuModuleGetFunction(&f, mod, "saxpy"));
	CU(cuMemAlloc(&dx, sizeof(x)));
	CU(cuMemAlloc(&dy, sizeof(y)));
	CU(cuMemcpyHtoD(dx, x, sizeof(x)));
	CU(cuMemcpyHtoD(dy, y, sizeof(y)));
	CU(cuLaunchKernel(f, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
	CU(cuCtxSynchronize());
	CU(cuMemcpyDtoH(out, dy, sizeof(out)));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(fmaf(a, x[i], y[i]), out[i]);
	CU(cuMemFree(dx));
	CU(cuMemFree(dy));
}

TEST_F(cu, saxpy_from_ptx)
{
	saxpy_run(_metadata, self->mod);
}

TEST_F(cu, saxpy_from_fatbins_compressed_and_not)
{
	CUmodule m;
	void *img = read_file("kernels.fatbin", NULL);
	void *img2 = read_file("kernels.nc.fatbin", NULL);

	ASSERT_NE(NULL, img);
	ASSERT_NE(NULL, img2);
	CU(cuModuleLoadData(&m, img));
	saxpy_run(_metadata, m);
	CU(cuModuleUnload(m));
	CU(cuModuleLoadFatBinary(&m, img2));
	saxpy_run(_metadata, m);
	CU(cuModuleUnload(m));
	CU(cuModuleLoad(&m, path_of("kernels.fatbin")));
	saxpy_run(_metadata, m);
	CU(cuModuleUnload(m));
	free(img);
	free(img2);
}

/* Each function's name and what cuFuncGetAttribute says of it. */
struct fn_facts {
	const char *name;
	int regs, smem, local, cw, ch, cd;
};

static void fn_facts(struct __test_metadata *_metadata, CUmodule m, struct fn_facts *f)
{
	CUfunction fn;
	const char *name;

	CU(cuModuleGetFunction(&fn, m, f->name));
	CU(cuFuncGetName(&name, fn));
	EXPECT_STREQ(f->name, name);
	CU(cuFuncGetAttribute(&f->regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn));
	CU(cuFuncGetAttribute(&f->smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
	CU(cuFuncGetAttribute(&f->local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn));
	CU(cuFuncGetAttribute(&f->cw, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fn));
	CU(cuFuncGetAttribute(&f->ch, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT, fn));
	CU(cuFuncGetAttribute(&f->cd, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH, fn));
}

/* The .vgpc entries of @dir; the path of one in @path. */
static int cache_entries(const char *dir, char *path, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (l > 5 && !strcmp(de->d_name + l - 5, ".vgpc")) {
			snprintf(path, len, "%s/%s", dir, de->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

/*
 * vGPU's compile cache (docs/libvgpu.md): a module compiled and stored,
 * read back, and compiled again over a damaged entry has the functions,
 * attributes (registers, shared and local sizes, cluster shape: read from
 * the generated assembly, which the entry keeps) and results of one
 * compiled with the cache off.
 */
TEST_F(cu, modules_through_the_compile_cache)
{
	static const char *const files[] = { "kernels.ptx", "cluster.ptx" };
	static const char *const names[][3] = { { "saxpy", "reduce_sum", "dyn_reverse" },
						{ "cluster_ring" } };
	char root[] = "/tmp/vgpu-cucache-XXXXXX", dir[64], entry[512];

	VGPU_ONLY();
	ASSERT_NE(NULL, mkdtemp(root));
	for (int fi = 0; fi < 2; fi++) {
		struct fn_facts want[3] = { { 0 } }, got;
		void *ptx = read_file(files[fi], NULL);
		CUmodule m;

		ASSERT_NE(NULL, ptx);
		snprintf(dir, sizeof(dir), "%s/%d", root, fi);
		ASSERT_EQ(0, setenv("VGPU_CACHE_PATH", dir, 1));
		ASSERT_EQ(0, setenv("VGPU_CACHE_DISABLE", "1", 1));
		CU(cuModuleLoadData(&m, ptx));
		for (int i = 0; i < 3 && names[fi][i]; i++) {
			want[i].name = names[fi][i];
			fn_facts(_metadata, m, &want[i]);
		}
		if (fi == 0)
			saxpy_run(_metadata, m);
		CU(cuModuleUnload(m));
		EXPECT_EQ(0, cache_entries(dir, entry, sizeof(entry)));
		unsetenv("VGPU_CACHE_DISABLE");
		/* 0: compiled and stored, 1: read back, 2: the entry cut short */
		for (int pass = 0; pass < 3; pass++) {
			if (pass == 2)
				ASSERT_EQ(0, truncate(entry, 100));
			CU(cuModuleLoadData(&m, ptx));
			for (int i = 0; i < 3 && names[fi][i]; i++) {
				got.name = names[fi][i];
				fn_facts(_metadata, m, &got);
				EXPECT_EQ(0, memcmp(&want[i].regs, &got.regs, 6 * sizeof(int)))
					TH_LOG("%s, pass %d", got.name, pass);
			}
			if (fi == 0)
				saxpy_run(_metadata, m);
			CU(cuModuleUnload(m));
			ASSERT_EQ(1, cache_entries(dir, entry, sizeof(entry)));
		}
		/* the damaged entry was replaced by a whole one */
		{
			FILE *f = fopen(entry, "rb");

			ASSERT_NE(NULL, f);
			fseek(f, 0, SEEK_END);
			EXPECT_GT(ftell(f), 1000L);
			fclose(f);
		}
		EXPECT_EQ(0, unlink(entry));
		EXPECT_EQ(0, rmdir(dir));
		free(ptx);
	}
	EXPECT_EQ(0, rmdir(root));
}

TEST_F(cu, images_without_ptx_are_refused_naming_the_flag)
{
	CUmodule m;
	void *sass = read_file("kernels.sass.fatbin", NULL);
	void *cubin = read_file("kernels.cubin", NULL);

	VGPU_ONLY(); /* a real GPU runs them */
	ASSERT_NE(NULL, sass);
	ASSERT_NE(NULL, cubin);
	EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&m, sass));
	EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoadData(&m, cubin));
	EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU, cuModuleLoad(&m, path_of("kernels.cubin")));
	free(sass);
	free(cubin);
}

TEST_F(cu, module_errors)
{
	static const char bad_ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
				      ".visible .entry k()\n{\n\tfrobnicate.u32 %r1;\n}\n";
	char log[1024] = "";
	CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { log, (void *)(uintptr_t)sizeof(log) };
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;
	size_t sz;

	EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND, cuModuleLoad(&m, "/nonexistent/k.ptx"));
	EXPECT_CU(CUDA_ERROR_INVALID_PTX, cuModuleLoadDataEx(&m, bad_ptx, 2, opts, vals));
	EXPECT_NE(NULL, strstr(log, "frobnicate"));
	/* not PTX (whose first directive is .version), a fatbin or a cubin:
	 * not an image at all */
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, "x")); /* short: no overread */
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, ""));
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, "hello, not ptx at all"));
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadData(&m, ".target sm_90a\n.address_size 64\n"));
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE,
		  cuModuleLoadData(&m, "\x7f" "ELF, but no cubin: garbage garbage garbage"));
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE, cuModuleLoadFatBinary(&m, "x"));
	/* PTX that does not compile */
	EXPECT_CU(CUDA_ERROR_INVALID_PTX, cuModuleLoadData(&m, ".version 8.0\ngarbage here\n"));
	EXPECT_CU(CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
		  cuModuleLoadData(&m, ".version 99.0\n.target sm_90a\n.address_size 64\n"));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(&m, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoadData(NULL, bad_ptx));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoad(NULL, path_of("kernels.ptx")));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleLoad(&m, NULL));
	EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, self->mod, "no_such_kernel"));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(&f, self->mod, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuModuleGetFunction(NULL, self->mod, "saxpy"));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(NULL));
	if (on_vgpu()) /* NVIDIA's library reads through it */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
			  cuModuleGetFunction(&f, (CUmodule)(uintptr_t)0xdead0000, "saxpy"));
	EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetGlobal(&d, &sz, self->mod, "no_such_var"));
	/* a function of an unloaded module */
	CU(cuModuleLoad(&m, path_of("kernels.ptx")));
	CU(cuModuleGetFunction(&f, m, "mul_add"));
	CU(cuModuleUnload(m));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleUnload(m));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&f, m, "mul_add"));
}

TEST_F(cu, reduction_with_shared_memory_on_a_stream)
{
	enum { N = 5000, T = 256, B = (N + 2 * T - 1) / (2 * T) };
	int in[N], part[B], n = N;
	long long want = 0, got = 0;
	CUdeviceptr din, dout;
	CUfunction f;
	CUstream s;
	void *params[] = { &din, &dout, &n };

	for (int i = 0; i < N; i++) {
		in[i] = (i * 7919) % 1000 - 300;
		want += in[i];
	}
	CU(cuModuleGetFunction(&f, self->mod, "reduce_sum"));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CU(cuMemAlloc(&din, sizeof(in)));
	CU(cuMemAlloc(&dout, sizeof(part)));
	CU(cuMemcpyHtoDAsync(din, in, sizeof(in), s));
	CU(cuLaunchKernel(f, B, 1, 1, T, 1, 1, 0, s, params, NULL));
	CU(cuMemcpyDtoHAsync(part, dout, sizeof(part), s));
	CU(cuStreamSynchronize(s));
	EXPECT_CU(CUDA_SUCCESS, cuStreamQuery(s));
	for (int b = 0; b < B; b++) {
		long long p = 0;

		for (int i = b * 2 * T; i < (b + 1) * 2 * T && i < N; i++)
			p += in[i];
		EXPECT_EQ(p, part[b]);
		got += part[b];
	}
	EXPECT_EQ(want, got);
	CU(cuStreamDestroy(s));
	if (on_vgpu()) /* a destroyed stream crashes NVIDIA's library */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamSynchronize(s));
}

TEST_F(cu, two_streams_ordered_by_an_event)
{
	enum { N = 512 };
	int host[N], mul2 = 2, add1 = 1, mul3 = 3, add0 = 0, n = N;
	CUstream a, b;
	CUevent e, start, stop;
	CUdeviceptr p;
	CUfunction f;
	float ms = -1;
	int prio = 1, lo, hi;
	void *first[] = { &p, &n, &mul2, &add1 }, *second[] = { &p, &n, &mul3, &add0 };

	CU(cuModuleGetFunction(&f, self->mod, "mul_add"));
	CU(cuCtxGetStreamPriorityRange(&lo, &hi));
	EXPECT_LE(hi, lo);
	CU(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
	CU(cuStreamCreateWithPriority(&b, CU_STREAM_NON_BLOCKING, hi));
	CU(cuStreamGetPriority(b, &prio));
	EXPECT_EQ(hi, prio);
	CU(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING));
	CU(cuEventCreate(&start, 0));
	CU(cuEventCreate(&stop, 0));
	CU(cuMemAlloc(&p, sizeof(host)));
	for (int i = 0; i < N; i++)
		host[i] = i - 100;
	CU(cuMemcpyHtoD(p, host, sizeof(host)));
	/* a: p = p * 2 + 1, then e; b waits for e: p = p * 3 */
	CU(cuEventRecord(start, a));
	CU(cuLaunchKernel(f, N / 128, 1, 1, 128, 1, 1, 0, a, first, NULL));
	CU(cuEventRecord(e, a));
	CU(cuStreamWaitEvent(b, e, 0));
	CU(cuLaunchKernel(f, N / 128, 1, 1, 128, 1, 1, 0, b, second, NULL));
	CU(cuEventRecord(stop, b));
	CU(cuEventSynchronize(stop));
	EXPECT_CU(CUDA_SUCCESS, cuEventQuery(e));
	CU(cuEventElapsedTime(&ms, start, stop));
	EXPECT_GE(ms, 0.0f);
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, start, e)); /* no timing */
	CU(cuMemcpyDtoHAsync(host, p, sizeof(host), b));
	CU(cuStreamSynchronize(b));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(((i - 100) * 2 + 1) * 3, host[i]);
	CU(cuEventDestroy(e));
	if (on_vgpu()) { /* a destroyed event crashes NVIDIA's library */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(e, a));
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamWaitEvent(b, e, 0));
	}
	CU(cuEventDestroy(start));
	CU(cuEventDestroy(stop));
	CU(cuStreamDestroy(a));
	CU(cuStreamDestroy(b));
	CU(cuMemFree(p));
}

TEST_F(cu, event_errors)
{
	CUevent e, f;
	CUstream s;
	float ms;

	CU(cuEventCreate(&e, 0));
	CU(cuEventCreate(&f, 0));
	EXPECT_CU(CUDA_SUCCESS, cuEventQuery(e)); /* never recorded: complete */
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventElapsedTime(&ms, e, f)); /* never recorded */
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventCreate(&e, 0x100));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuEventCreate(NULL, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventRecord(NULL, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventQuery(NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventSynchronize(NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy(NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(NULL, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuStreamCreate(&s, 0x40));
	CU(cuStreamSynchronize(NULL));
	CU(cuStreamQuery(NULL));
	if (on_vgpu()) { /* garbage handles crash NVIDIA's library */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
			  cuEventRecord(e, (CUstream)(uintptr_t)0xdead0000));
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
			  cuStreamDestroy((CUstream)(uintptr_t)0xdead0000));
	}
	CU(cuEventRecord(e, NULL));
	CU(cuEventRecord(f, CU_STREAM_LEGACY));
	CU(cuEventSynchronize(f));
	CU(cuEventElapsedTime(&ms, e, f));
	CU(cuEventDestroy(e));
	CU(cuEventDestroy(f));
	if (on_vgpu()) /* destroyed twice: NVIDIA's library crashes */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuEventDestroy(f));
}

TEST_F(cu, dynamic_shared_memory_needs_cuFuncSetAttribute)
{
	int optin = 0, n, *in, *out;
	CUdeviceptr din, dout;
	CUfunction f;
	void *params[] = { &din, &dout, &n };

	CU(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
				self->dev));
	if (optin <= 48 * 1024)
		SKIP(return, "the device offers no more than 48 KiB of shared memory");
	n = (optin < 96 * 1024 ? optin : 96 * 1024) / 4;
	in = malloc(n * sizeof(int));
	out = malloc(n * sizeof(int));
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	for (int i = 0; i < n; i++)
		in[i] = i * 3 + 1;
	CU(cuModuleGetFunction(&f, self->mod, "dyn_reverse"));
	CU(cuMemAlloc(&din, n * sizeof(int)));
	CU(cuMemAlloc(&dout, n * sizeof(int)));
	CU(cuMemcpyHtoD(din, in, n * sizeof(int)));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, n * 4, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 4096));
	CU(cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, n * 4));
	CU(cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, n * 4, NULL, params, NULL));
	CU(cuMemcpyDtoH(out, dout, n * sizeof(int)));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(in[n - 1 - i], out[i]);
	free(in);
	free(out);
}

TEST_F(cu, cluster_launch_with_cuLaunchKernelEx)
{
	enum { G = 8, C = 4 };
	unsigned int out[3 * G];
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;
	CUlaunchAttribute at[2];
	CUlaunchConfig cfg = { .gridDimX = G, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 64,
			       .blockDimY = 1, .blockDimZ = 1, .attrs = at, .numAttrs = 2 };
	void *params[] = { &d };

	memset(at, 0, sizeof(at));
	at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
	at[0].value.clusterDim.x = C;
	at[0].value.clusterDim.y = 1;
	at[0].value.clusterDim.z = 1;
	at[1].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
	at[1].value.priority = 0;
	CU(cuModuleLoad(&m, path_of("cluster.ptx")));
	CU(cuModuleGetFunction(&f, m, "cluster_ring"));
	CU(cuMemAlloc(&d, sizeof(out)));
	CU(cuLaunchKernelEx(&cfg, f, params, NULL));
	CU(cuMemcpyDtoH(out, d, sizeof(out)));
	for (unsigned int b = 0; b < G; b++) {
		unsigned int rank = b % C, base = b - rank;

		EXPECT_EQ(rank, out[3 * b]);
		EXPECT_EQ((unsigned int)C, out[3 * b + 1]);
		EXPECT_EQ(1000 + base + (rank + 1) % C, out[3 * b + 2]);
	}
	at[0].value.clusterDim.x = 3; /* does not tile the grid */
	EXPECT_CU(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuLaunchKernelEx(&cfg, f, params, NULL));
	at[0].value.clusterDim.x = 0;
	EXPECT_CU(CUDA_ERROR_INVALID_CLUSTER_SIZE, cuLaunchKernelEx(&cfg, f, params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernelEx(NULL, f, params, NULL));
	CU(cuMemFree(d));
	CU(cuModuleUnload(m));
}

TEST_F(cu, tma_tile_through_cuTensorMapEncodeTiled)
{
	enum { W = 16, H = 16 };
	int t[W * H], out[64], x0 = 12, y0 = 4;
	cuuint64_t dims[2] = { W, H }, strides[1] = { W * sizeof(int) };
	cuuint32_t box[2] = { 8, 8 }, es[2] = { 1, 1 };
	CUtensorMap map;
	CUdeviceptr dt, dout;
	CUmodule m;
	CUfunction f;
	void *params[] = { &dout, &map, &x0, &y0 };

	for (int i = 0; i < W * H; i++)
		t[i] = i * 5 + 3;
	CU(cuModuleLoad(&m, path_of("tma.ptx")));
	CU(cuModuleGetFunction(&f, m, "tma_tile"));
	CU(cuMemAlloc(&dt, sizeof(t)));
	CU(cuMemAlloc(&dout, sizeof(out)));
	CU(cuMemcpyHtoD(dt, t, sizeof(t)));
	CU(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, (void *)(uintptr_t)dt,
				  dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
				  CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
				  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	CU(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	CU(cuMemcpyDtoH(out, dout, sizeof(out)));
	for (int i = 0; i < 64; i++) {
		int x = x0 + i % 8, y = y0 + i / 8;

		EXPECT_EQ(x < W && y < H ? t[y * W + x] : 0, out[i]);
	}
	/* refused: swizzle (vGPU only: the H200 encodes it), a misaligned base */
	if (on_vgpu())
		EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
		  cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2, (void *)(uintptr_t)dt,
					 dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
					 CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
					 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 2,
					 (void *)(uintptr_t)(dt + 4), dims, strides, box, es,
					 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
					 CU_TENSOR_MAP_L2_PROMOTION_NONE,
					 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	CU(cuMemFree(dt));
	CU(cuMemFree(dout));
	CU(cuModuleUnload(m));
}

/*
 * A 4-D (NHWC) im2col load through cuTensorMapEncodeIm2col: a 3x3 filter
 * with padding 1 (corners -1, -1), the tap (ow, oh) = (2, 1), 16 pixels of
 * 4 channels from the filter base (1, 0) of image 0; the expected pixels
 * numbered W fastest through the bounding box, out of the image zero.
 * Then the driver's documented INVALID_VALUE cases.
 */
TEST_F(cu, tma_im2col_through_cuTensorMapEncodeIm2col)
{
	enum { C = 4, W = 5, H = 4, N = 2, PIX = 16 };
	int t[N * H * W * C], out[PIX * C], w0 = 1, h0 = 0, n0 = 0;
	unsigned short ow = 2, oh = 1;
	cuuint64_t dims[4] = { C, W, H, N };
	cuuint64_t strides[3] = { C * 4, W * C * 4, H * W * C * 4 };
	cuuint32_t es[4] = { 1, 1, 1, 1 };
	int lo[2] = { -1, -1 }, up[2] = { -1, -1 };
	CUtensorMap map;
	CUdeviceptr dt, dout;
	CUmodule m;
	CUfunction f;
	void *params[] = { &dout, &map, &w0, &h0, &n0, &ow, &oh };
	/* the box, shifted by the offsets: W in [lo + ow, W - 1 + up + ow] */
	int nw = W - 1 + up[0] - lo[0] + 1, nh = H - 1 + up[1] - lo[1] + 1;
	int start = (w0 - lo[0]) + nw * ((h0 - lo[1]) + nh * n0);

	for (int i = 0; i < N * H * W * C; i++)
		t[i] = i * 3 + 1;
	CU(cuModuleLoad(&m, path_of("tma.ptx")));
	CU(cuModuleGetFunction(&f, m, "tma_im2col"));
	CU(cuMemAlloc(&dt, sizeof(t)));
	CU(cuMemAlloc(&dout, sizeof(out)));
	CU(cuMemcpyHtoD(dt, t, sizeof(t)));
	CU(cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 4, (void *)(uintptr_t)dt,
				   dims, strides, lo, up, C, PIX, es,
				   CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
				   CU_TENSOR_MAP_L2_PROMOTION_NONE,
				   CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	CU(cuLaunchKernel(f, 1, 1, 1, PIX * C, 1, 1, 0, NULL, params, NULL));
	CU(cuMemcpyDtoH(out, dout, sizeof(out)));
	for (int p = 0; p < PIX; p++) {
		int i = start + p, x = lo[0] + ow + i % nw, y = lo[1] + oh + i / nw % nh;
		int n = n0 + i / (nw * nh);
		bool in = x >= 0 && x < W && y >= 0 && y < H && n < N;

		for (int c = 0; c < C; c++) {
			EXPECT_EQ(in ? t[((n * H + y) * W + x) * C + c] : 0, out[p * C + c])
			TH_LOG("pixel %d (%d, %d, %d) channel %d", p, x, y, n, c);
		}
	}

#define IM2COL(rank, addr, d, st, l, u, cpp, ppc, e)                                       \
	cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, rank, addr, d, st, l, u, \
				cpp, ppc, e, CU_TENSOR_MAP_INTERLEAVE_NONE,                 \
				CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, \
				CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
	{
		void *a = (void *)(uintptr_t)dt;
		cuuint64_t d5[5] = { C, 3, 3, 3, 1 }, s5[4] = { 16, 48, 144, 432 };
		cuuint64_t bad_st[3] = { C * 4 + 8, W * C * 4, H * W * C * 4 };
		cuuint64_t zero_d[4] = { C, 0, H, N };
		cuuint32_t e5[5] = { 1, 1, 1, 1, 1 }, e0[4] = { 1, 0, 1, 1 }, e9[4] = { 1, 9, 1, 1 };
		int l128[2] = { 128, -1 }, lm129[2] = { -129, -1 }, l5[3] = { 0, 0, 0 };
		int u16[3] = { 0, 16, 0 }, lm17[3] = { 0, 0, -17 }, wide[2] = { 3, -1 };
		int narrow[2] = { -2, -1 }, up2[2] = { -2, -1 }, up4[2] = { -4, -1 };
		int l4[2] = { -128, -128 }, u4[2] = { 127, 127 }, l5max[3] = { -16, -16, 0 };
		int u5max[3] = { 15, 15, 0 };

		/* the limits themselves (a column of 227 KiB at most) */
		CU(IM2COL(4, a, dims, strides, l4, u4, 256, 128, es));
		CU(IM2COL(4, a, dims, strides, l4, u4, 4, 1024, es));
		CU(IM2COL(4, a, dims, strides, lo, up, 64, 908, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, 64, 909, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, 64, 1024, es));
		CU(IM2COL(5, a, d5, s5, l5max, u5max, 4, 1, e5));
		/* rank 3 to 5 only */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(2, a, dims, strides, lo, up, C, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(6, a, dims, strides, lo, up, C, PIX, es));
		/* the base 16-aligned, strides multiples of 16, dims non-zero */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, (void *)(uintptr_t)(dt + 4), dims,
							   strides, lo, up, C, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, bad_st, lo, up, C, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, zero_d, strides, lo, up, C, PIX, es));
		/* corners in the rank's range: [-128, 127] at rank 4, [-16, 15] at 5 */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, l128, up, C, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lm129, up, C, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(5, a, d5, s5, l5, u16, C, PIX, e5));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(5, a, d5, s5, lm17, l5, C, PIX, e5));
		/* a bounding box of non-zero area: W = 5, lower 3, upper -1 is 1 wide;
		 * lower 3, upper -2 is empty */
		CU(IM2COL(4, a, dims, strides, wide, up, C, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
			  IM2COL(4, a, dims, strides, wide, up2, C, PIX, es));
		CU(IM2COL(4, a, dims, strides, narrow, up4, C, PIX, es));
		/* channels up to 256, pixels up to 1024, element strides 1 to 8 */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, 257, PIX, es));
		/* channels of 16-byte multiples (NVIDIA's driver: 2 ints refused) */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, 2, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, C, 1025, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, C, PIX, e0));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, C, PIX, e9));
		/* a copy of nothing */
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, 0, PIX, es));
		EXPECT_CU(CUDA_ERROR_INVALID_VALUE, IM2COL(4, a, dims, strides, lo, up, C, 0, es));
		if (on_vgpu()) /* a plain copy engine: no swizzle */
			EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
				  cuTensorMapEncodeIm2col(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, 4, a, dims,
							  strides, lo, up, C, PIX, es,
							  CU_TENSOR_MAP_INTERLEAVE_NONE,
							  CU_TENSOR_MAP_SWIZZLE_128B,
							  CU_TENSOR_MAP_L2_PROMOTION_NONE,
							  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
	}
#undef IM2COL
	CU(cuMemFree(dt));
	CU(cuMemFree(dout));
	CU(cuModuleUnload(m));
}

TEST_F(cu, module_globals_through_cuModuleGetGlobal)
{
	int out[4], v = 5, table[4];
	CUdeviceptr dc, dt, dout;
	size_t sc, st;
	CUfunction f;
	void *params[] = { &dout };

	CU(cuModuleGetGlobal(&dc, &sc, self->mod, "counter"));
	CU(cuModuleGetGlobal(&dt, &st, self->mod, "table"));
	EXPECT_EQ(sizeof(int), sc);
	EXPECT_EQ(sizeof(table), st);
	CU(cuMemcpyDtoH(table, dt, sizeof(table)));
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(10 * (i + 1), table[i]);
	table[2] = -7;
	CU(cuMemcpyHtoD(dt, table, sizeof(table)));
	CU(cuMemcpyHtoD(dc, &v, sizeof(v)));
	CU(cuModuleGetFunction(&f, self->mod, "bump"));
	CU(cuMemAlloc(&dout, sizeof(out)));
	CU(cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	CU(cuMemcpyDtoH(&v, dc, sizeof(v)));
	EXPECT_EQ(5 + 64, v);
	CU(cuMemcpyDtoH(out, dout, sizeof(out)));
	EXPECT_EQ(10, out[0]);
	EXPECT_EQ(20, out[1]);
	EXPECT_EQ(-7, out[2]);
	EXPECT_EQ(40, out[3]);
	CU(cuMemFree(dout));
}

TEST_F(cu, parameters_by_kernelParams_and_by_extra_buffer)
{
	int out[6];
	CUdeviceptr d;
	CUfunction f;
	int a = -123;
	long long b = 0x123456789abcdefll;
	float c = 2.75f;
	double dd = 3.125;
	unsigned int e = 0xfeedbeefu;
	void *params[] = { &d, &a, &b, &c, &dd, &e };
	size_t off[6], sz[6], bufsize;
	unsigned char buf[64];
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
			  &bufsize, CU_LAUNCH_PARAM_END };
	static const size_t want_off[6] = { 0, 8, 16, 24, 32, 40 }, want_sz[6] = { 8, 4, 8, 4, 8, 4 };

	CU(cuModuleGetFunction(&f, self->mod, "params"));
	for (int i = 0; i < 6; i++) {
		CU(cuFuncGetParamInfo(f, i, &off[i], &sz[i]));
		EXPECT_EQ(want_off[i], off[i]);
		EXPECT_EQ(want_sz[i], sz[i]);
	}
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetParamInfo(f, 6, &off[0], &sz[0]));
	CU(cuMemAlloc(&d, sizeof(out)));
	CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
	CU(cuMemcpyDtoH(out, d, sizeof(out)));
	EXPECT_EQ(a, out[0]);
	EXPECT_EQ((int)(b >> 32), out[1]);
	EXPECT_EQ((int)b, out[2]);
	EXPECT_EQ(11, out[3]);
	EXPECT_EQ(25, out[4]);
	EXPECT_EQ((int)e, out[5]);
	/* the same through one buffer */
	CU(cuMemsetD32(d, 0, 6));
	memset(buf, 0, sizeof(buf));
	a = 77;
	for (int i = 0; i < 6; i++)
		memcpy(buf + off[i], params[i], sz[i]);
	bufsize = off[5] + sz[5];
	CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	CU(cuMemcpyDtoH(out, d, sizeof(out)));
	EXPECT_EQ(77, out[0]);
	EXPECT_EQ((int)e, out[5]);
	/* too small: CUDA launches with the bytes given (the rest undefined;
	 * vGPU's are zero, and it says so on stderr) */
	bufsize = 8;
	CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	CU(cuMemcpyDtoH(out, d, sizeof(out)));
	if (on_vgpu())
		for (int i = 0; i < 6; i++)
			EXPECT_EQ(0, out[i]);
	bufsize = 0;
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	/* larger than the parameters: refused (the H200: 701) */
	bufsize = sizeof(buf);
	EXPECT_CU(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
		  cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	CU(cuMemFree(d));
}

TEST_F(cu, function_attributes)
{
	CUfunction f;
	int v = -1, smem = -1;
	const char *name;

	/* the static shared memory, as ptxas counts it: not the module's
	 * extern __shared__ (vGPU's 16-byte marker of it is its own) */
	CU(cuModuleGetFunction(&f, self->mod, "dyn_reverse"));
	CU(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
	EXPECT_EQ(0, smem);
	CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	EXPECT_EQ(48 * 1024, v);
	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	CU(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
	EXPECT_EQ(0, smem);
	CU(cuModuleGetFunction(&f, self->mod, "reduce_sum"));
	CU(cuFuncGetAttribute(&smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f));
	EXPECT_EQ(256 * 4, smem);
	CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
	EXPECT_GT(v, 0);
	EXPECT_LE(v, 255);
	CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
	EXPECT_EQ(1024, v);
	CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f));
	EXPECT_EQ(48 * 1024 - smem, v);
	CU(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
	EXPECT_EQ(0, v);
	CU(cuFuncGetName(&name, f));
	EXPECT_STREQ("reduce_sum", name);
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncGetAttribute(NULL, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS, 3));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL));
	if (on_vgpu()) /* a garbage handle crashes NVIDIA's library */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
			  cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS,
					     (CUfunction)(uintptr_t)0x40));
}

TEST_F(cu, launch_geometry_errors)
{
	CUfunction f;
	CUdeviceptr dx;
	int n = 1;
	float a = 1;
	void *params[] = { &n, &a, &dx, &dx };

	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	CU(cuMemAlloc(&dx, 64));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 1, 1, 64, 32, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 0, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLaunchKernel(f, 1, 70000, 1, 64, 1, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 64 * 1024, NULL, params, NULL));
	if (on_vgpu()) /* a garbage stream crashes NVIDIA's library */
		EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
			  cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, (CUstream)(uintptr_t)0xdead0000,
					 params, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLaunchKernel(NULL, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	/* cooperative: the whole grid must be resident */
	CU(cuLaunchCooperativeKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params));
	EXPECT_CU(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
		  cuLaunchCooperativeKernel(f, 100000, 1, 1, 64, 1, 1, 0, NULL, params));
	CU(cuCtxSynchronize());
	CU(cuMemFree(dx));
}

TEST_F(cu, memory_copies_memsets_and_host_memory)
{
	enum { N = 300 };
	unsigned char b[N * 4];
	unsigned short h[N];
	unsigned int w[N];
	CUdeviceptr d, d2, base, hd;
	size_t size;
	float *hx, *hy;
	CUfunction f;
	int n = 64;
	float a = 3;
	void *params[] = { &n, &a, &hd, &hd };

	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(&d, 0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemAlloc(NULL, 16));
	CU(cuMemAlloc(&d, sizeof(b)));
	CU(cuMemAlloc(&d2, sizeof(b)));
	CU(cuMemsetD8(d, 0xab, N * 4));
	CU(cuMemcpyDtoH(b, d, sizeof(b)));
	for (int i = 0; i < N * 4; i++)
		ASSERT_EQ(0xab, b[i]);
	CU(cuMemsetD16(d + 2, 0x1234, N));
	CU(cuMemcpyDtoH(h, d + 2, sizeof(h)));
	for (int i = 0; i < N; i++)
		ASSERT_EQ(0x1234, h[i]);
	CU(cuMemsetD32Async(d, 0xcafef00d, N, NULL));
	CU(cuMemsetD8Async(d2, 0, N * 4, NULL));
	CU(cuMemsetD16Async(d2, 7, 1, NULL));
	CU(cuMemcpyDtoD(d2 + 4, d, 8));
	CU(cuMemcpyDtoDAsync(d2 + 12, d, 4, NULL));
	CU(cuStreamSynchronize(NULL));
	CU(cuMemcpyDtoH(w, d2, 4 * 4));
	EXPECT_EQ(7u, w[0]);
	EXPECT_EQ(0xcafef00du, w[1]);
	EXPECT_EQ(0xcafef00du, w[2]);
	EXPECT_EQ(0xcafef00du, w[3]);
	CU(cuMemcpy(d2, d + 8, 4)); /* unified addressing */
	CU(cuMemcpy((CUdeviceptr)(uintptr_t)w, d2, 4));
	EXPECT_EQ(0xcafef00du, w[0]);
	CU(cuMemGetAddressRange(&base, &size, d + 100));
	EXPECT_EQ(d, base);
	EXPECT_EQ(sizeof(b), size);
	/* out of range, misaligned, NULL */
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(d + 1, b, sizeof(b)));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyHtoD(d, NULL, 4));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(b, 0x10, 4));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemsetD32(d + 2, 0, 1));
	/* host memory: kernels reach it through its device pointer */
	CU(cuMemAllocHost((void **)&hx, 64 * sizeof(float)));
	CU(cuMemHostAlloc((void **)&hy, 64 * sizeof(float), CU_MEMHOSTALLOC_DEVICEMAP));
	for (int i = 0; i < 64; i++)
		hy[i] = (float)i;
	CU(cuMemHostGetDevicePointer(&hd, hy, 0));
	CU(cuModuleGetFunction(&f, self->mod, "saxpy"));
	CU(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
	CU(cuCtxSynchronize());
	for (int i = 0; i < 64; i++)
		ASSERT_EQ(fmaf(3.0f, (float)i, (float)i), hy[i]);
	CU(cuMemFreeHost(hx));
	CU(cuMemFreeHost(hy));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(hy));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFreeHost(b)); /* not host memory of CUDA's */
	CU(cuMemFreeHost(NULL));
	/* freed twice, not an allocation's start, NULL (nothing to do) */
	CU(cuMemFree(d));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(d));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(d2 + 4));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemFree(0x1234));
	CU(cuMemFree(0));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(b, d2 + N * 4 - 2, 4)); /* past the end */
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuMemcpyDtoH(NULL, d2, 4));
	CU(cuMemcpyHtoD(d2, b, 0));
	CU(cuMemFree(d2));
}

/*
 * A device exception is sticky for the whole process, as CUDA's ("the
 * process must be terminated and relaunched"; what NVIDIA's driver answers
 * is in tests/cuda/real-gpu/probe.h200.log): every later call in any
 * context returns it, no new context can be made, and only the contexts'
 * destruction still succeeds.  Each test runs in a child of its own.
 */
TEST_F(cu, a_faulting_kernel_is_an_illegal_address_and_sticky)
{
	CUfunction f;
	CUdeviceptr d, d2;
	CUcontext other, c2, popped;
	CUstream s;
	size_t fr, tot;
	int v;
	void *params[] = { &d };

	/* another context, made before the fault */
	CU(cuCtxCreate(&other, NULL, 0, self->dev));
	CU(cuCtxPopCurrent(&popped));
	CU(cuModuleGetFunction(&f, self->mod, "fault"));
	CU(cuMemAlloc(&d, 256));
	CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxSynchronize());
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemAlloc(&d2, 16));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemcpyDtoH(&v, d, 4));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemcpyHtoD(d, &v, 4));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemsetD32(d, 0, 1));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemGetInfo(&fr, &tot));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuModuleGetFunction(&f, self->mod, "saxpy"));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemFree(d));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuModuleUnload(self->mod));
	/* in another context too, and no new context */
	CU(cuCtxPushCurrent(other));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuMemAlloc(&d2, 16));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuStreamCreate(&s, 0));
	CU(cuCtxPopCurrent(&popped));
	EXPECT_TRUE(popped == other);
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxCreate(&c2, NULL, 0, self->dev));
	/* destroying them works (and frees what they hold), and does not
	 * make the process usable again */
	CU(cuCtxDestroy(other));
	CU(cuCtxDestroy(self->ctx));
	self->mod = NULL;
	self->ctx = NULL;
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxCreate(&c2, NULL, 0, self->dev));
	EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, cuDevicePrimaryCtxRetain(&c2, self->dev));
	/* what needs no context still answers */
	CU(cuDeviceGetCount(&v));
	CU(cuDriverGetVersion(&v));
}

TEST_F(cu, a_misaligned_access_is_a_misaligned_address)
{
	CUfunction f;
	CUdeviceptr d;
	CUcontext c2;
	void *params[] = { &d };

	CU(cuModuleGetFunction(&f, self->mod, "misaligned"));
	CU(cuMemAlloc(&d, 256));
	CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	EXPECT_CU(CUDA_ERROR_MISALIGNED_ADDRESS, cuCtxSynchronize());
	EXPECT_CU(CUDA_ERROR_MISALIGNED_ADDRESS, cuMemcpyDtoH(&f, d, 4)); /* sticky */
	EXPECT_CU(CUDA_ERROR_MISALIGNED_ADDRESS, cuMemAlloc(&d, 16));
	EXPECT_CU(CUDA_ERROR_MISALIGNED_ADDRESS, cuModuleUnload(self->mod));
	self->mod = NULL;
	CU(cuCtxDestroy(self->ctx));
	self->ctx = NULL;
	EXPECT_CU(CUDA_ERROR_MISALIGNED_ADDRESS, cuCtxCreate(&c2, NULL, 0, self->dev));
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuMemAlloc(&d, 16)); /* none is current */
}

TEST(a_faulting_kernel_in_the_primary_context_and_its_reset)
{
	CUcontext p, cur;
	CUresult fault;
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;
	unsigned int flags;
	int active;
	void *params[] = { &d };

	CU(cuInit(0));
	CU(cuDevicePrimaryCtxRetain(&p, 0));
	CU(cuCtxSetCurrent(p));
	CU(cuModuleLoad(&m, path_of("kernels.ptx")));
	CU(cuModuleGetFunction(&f, m, "fault"));
	CU(cuMemAlloc(&d, 256));
	CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	/* the H200 said ILLEGAL_ADDRESS in one run, INVALID_ADDRESS_SPACE in
	 * another, for the same kernel: either, and the same from then on */
	fault = cuStreamSynchronize(NULL);
	if (on_vgpu()) {
		EXPECT_CU(CUDA_ERROR_ILLEGAL_ADDRESS, fault);
	} else {
		EXPECT_TRUE(fault == CUDA_ERROR_ILLEGAL_ADDRESS ||
			    fault == CUDA_ERROR_INVALID_ADDRESS_SPACE);
	}
	EXPECT_CU(fault, cuMemAlloc(&d, 16));
	/* the reset destroys the context's contents and leaves it inactive,
	 * still current and retained; the fault stays the process's */
	CU(cuDevicePrimaryCtxReset(0));
	CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT_EQ(0, active);
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p);
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuModuleGetFunction(&f, m, "fault"));
	EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemAlloc(&d, 16));
	EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuCtxSynchronize());
	EXPECT_CU(fault, cuDevicePrimaryCtxRetain(&cur, 0));
	CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT_EQ(0, active);
	CU(cuDevicePrimaryCtxRelease(0));
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(0));
}

TEST(a_primary_context_reset_needs_a_retain)
{
	CUcontext p, p2, cur;
	CUdeviceptr d;
	unsigned int flags;
	int active;

	CU(cuInit(0));
	CU(cuDevicePrimaryCtxRetain(&p, 0));
	CU(cuCtxSetCurrent(p));
	CU(cuMemAlloc(&d, 16));
	CU(cuDevicePrimaryCtxReset(0));
	CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT_EQ(0, active);
	EXPECT_CU(CUDA_ERROR_CONTEXT_IS_DESTROYED, cuMemAlloc(&d, 16));
	CU(cuCtxGetCurrent(&cur));
	EXPECT_TRUE(cur == p);
	/* retained again: made again, usable */
	CU(cuDevicePrimaryCtxRetain(&p2, 0));
	CU(cuCtxSetCurrent(p2));
	CU(cuDevicePrimaryCtxGetState(0, &flags, &active));
	EXPECT_EQ(1, active);
	CU(cuMemAlloc(&d, 16));
	CU(cuMemFree(d));
	CU(cuDevicePrimaryCtxRelease(0));
	CU(cuDevicePrimaryCtxRelease(0)); /* the reset kept the first reference */
	EXPECT_CU(CUDA_ERROR_INVALID_CONTEXT, cuDevicePrimaryCtxRelease(0));
}

TEST(an_unknown_backend_means_no_device)
{
	int n = -1;

	VGPU_ONLY(); /* VGPU_BACKEND is vGPU's */
	setenv("VGPU_BACKEND", "nonesuch", 1);
	EXPECT_CU(CUDA_ERROR_NO_DEVICE, cuInit(0));
	EXPECT_CU(CUDA_ERROR_NOT_INITIALIZED, cuDeviceGetCount(&n));
}

TEST_F(cu, many_launches_on_one_stream_stay_in_order)
{
	enum { N = 256, LAUNCHES = 600 };
	int host[N], n = N, one = 1, three = 3, zero = 0;
	CUdeviceptr p;
	CUfunction f;
	CUstream s;
	void *inc[] = { &p, &n, &one, &one }, *triple[] = { &p, &n, &three, &zero };

	/* more launches than the driver's job history (256) between waits */
	CU(cuModuleGetFunction(&f, self->mod, "mul_add"));
	CU(cuStreamCreate(&s, 0));
	CU(cuMemAlloc(&p, sizeof(host)));
	CU(cuMemsetD32Async(p, 0, N, s));
	for (int i = 0; i < LAUNCHES; i++)
		CU(cuLaunchKernel(f, N / 64, 1, 1, 64, 1, 1, 0, s, i == LAUNCHES / 2 ? triple : inc,
				  NULL));
	CU(cuMemcpyDtoHAsync(host, p, sizeof(host), s));
	CU(cuStreamSynchronize(s));
	/* (LAUNCHES / 2 increments) * 3, then LAUNCHES / 2 - 1 more */
	for (int i = 0; i < N; i++)
		ASSERT_EQ(LAUNCHES / 2 * 3 + LAUNCHES / 2 - 1, host[i]);
	CU(cuStreamDestroy(s));
	CU(cuMemFree(p));
}

struct worker {
	CUcontext ctx;
	CUfunction f;
	int id;
	int result[64];
	CUresult r;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	int n = 64, two = 2, add = w->id;
	CUdeviceptr d;
	CUstream s;
	void *params[] = { &d, &n, &two, &add };
	CUresult r;

	r = cuCtxSetCurrent(w->ctx);
	if (!r)
		r = cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	if (!r)
		r = cuMemAlloc(&d, sizeof(w->result));
	if (!r)
		r = cuMemsetD32Async(d, 1, 64, s);
	for (int i = 0; !r && i < 10; i++)
		r = cuLaunchKernel(w->f, 1, 1, 1, 64, 1, 1, 0, s, params, NULL);
	if (!r)
		r = cuMemcpyDtoHAsync(w->result, d, sizeof(w->result), s);
	if (!r)
		r = cuStreamSynchronize(s);
	if (!r)
		r = cuStreamDestroy(s);
	if (!r)
		r = cuMemFree(d);
	w->r = r;
	return NULL;
}

TEST_F(cu, threads_share_a_context)
{
	enum { T = 4 };
	struct worker w[T];
	pthread_t th[T];
	CUfunction f;

	CU(cuModuleGetFunction(&f, self->mod, "mul_add"));
	for (int i = 0; i < T; i++) {
		w[i] = (struct worker){ .ctx = self->ctx, .f = f, .id = i };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, worker_main, &w[i]));
	}
	for (int i = 0; i < T; i++) {
		int want = 1;

		pthread_join(th[i], NULL);
		EXPECT_CU(CUDA_SUCCESS, w[i].r);
		for (int k = 0; k < 10; k++)
			want = want * 2 + i;
		for (int j = 0; j < 64; j++)
			ASSERT_EQ(want, w[i].result[j]);
	}
}

/* a launch that another thread makes after the main thread's unload */
struct stale {
	CUcontext ctx;
	CUfunction f;
	CUdeviceptr d;
	int step;	/* 1: launched once; 2: the main thread unloaded */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	CUresult first, second;
};

static void *stale_thread(void *p)
{
	struct stale *st = p;
	int n = 32, mul = 3, add = 1;
	void *params[] = { &st->d, &n, &mul, &add };

	cuCtxSetCurrent(st->ctx);
	st->first = cuLaunchKernel(st->f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	if (!st->first)
		st->first = cuCtxSynchronize();
	pthread_mutex_lock(&st->lock);
	st->step = 1;
	pthread_cond_broadcast(&st->cond);
	while (st->step != 2)
		pthread_cond_wait(&st->cond, &st->lock);
	pthread_mutex_unlock(&st->lock);
	st->second = cuLaunchKernel(st->f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
	return NULL;
}

/*
 * libcuda remembers, per thread, the handles a launch found live (a
 * launch checks its context, function and stream): a handle used by
 * launches and then destroyed must still be refused, in the thread that
 * destroyed it and in another that had used it.
 */
TEST_F(cu, handles_used_by_launches_are_refused_once_destroyed)
{
	struct stale st = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	int host[32], n = 32, mul = 2, add = 5;
	CUdeviceptr d;
	CUfunction f;
	CUmodule m;
	CUstream s;
	pthread_t th;
	void *params[] = { &d, &n, &mul, &add };

	if (!on_vgpu()) /* NVIDIA's library crashes on destroyed handles */
		SKIP(return, "vGPU's checks");
	CU(cuModuleLoad(&m, path_of("kernels.ptx")));
	CU(cuModuleGetFunction(&f, m, "mul_add"));
	CU(cuMemAlloc(&d, sizeof(host)));
	CU(cuMemsetD32(d, 1, 32));
	CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < 3; i++)
		CU(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
	CU(cuStreamSynchronize(s));
	CU(cuStreamDestroy(s));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
		  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, params, NULL));
	/* another thread launches f, then the module goes */
	st.ctx = self->ctx;
	st.f = f;
	st.d = d;
	ASSERT_EQ(0, pthread_create(&th, NULL, stale_thread, &st));
	pthread_mutex_lock(&st.lock);
	while (st.step != 1)
		pthread_cond_wait(&st.cond, &st.lock);
	pthread_mutex_unlock(&st.lock);
	CU(cuModuleUnload(m));
	/* a new module may take the old one's memory: f must not name its function */
	CU(cuModuleLoad(&m, path_of("kernels.ptx")));
	pthread_mutex_lock(&st.lock);
	st.step = 2;
	pthread_cond_broadcast(&st.cond);
	pthread_mutex_unlock(&st.lock);
	pthread_join(th, NULL);
	EXPECT_CU(CUDA_SUCCESS, st.first);
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, st.second);
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE,
		  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	/* the results of the launches that ran: ((1*2+5)*2+5)*2+5 = 43, then *3+1 */
	CU(cuMemcpyDtoH(host, d, sizeof(host)));
	for (int i = 0; i < 32; i++)
		ASSERT_EQ(130, host[i]);
	CU(cuModuleUnload(m));
	CU(cuMemFree(d));
}

/*
 * One process (a child: cuInit reads VGPU_RANDOM_SCHEDULE once) launches
 * warp_order with 8 warps, 4 tickets each, and writes the 32 warp ids in
 * ticket order to @fd; @seed NULL: the default schedule.
 */
static void order_child(const char *seed, int fd)
{
	unsigned int order[32] = { 0 }, zero = 0;
	CUdeviceptr counter, d;
	CUcontext ctx;
	CUmodule m;
	CUfunction f;
	void *params[] = { &counter, &d };

	if (seed)
		setenv("VGPU_RANDOM_SCHEDULE", seed, 1);
	else
		unsetenv("VGPU_RANDOM_SCHEDULE");
	if (cuInit(0) || cuCtxCreate(&ctx, NULL, 0, 0) ||
	    cuModuleLoad(&m, path_of("kernels.ptx")) || cuModuleGetFunction(&f, m, "warp_order") ||
	    cuMemAlloc(&counter, 4) || cuMemAlloc(&d, sizeof(order)) ||
	    cuMemcpyHtoD(counter, &zero, 4) ||
	    cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, NULL, params, NULL) ||
	    cuMemcpyDtoH(order, d, sizeof(order)))
		_exit(2);
	if (write(fd, order, sizeof(order)) != sizeof(order))
		_exit(3);
	_exit(0);
}

static int schedule_order(const char *seed, unsigned int order[32])
{
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		order_child(seed, p[1]);
	}
	close(p[1]);
	if (read(p[0], order, 32 * sizeof(unsigned int)) != 32 * sizeof(unsigned int))
		order[0] = ~0u;
	close(p[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * VGPU_RANDOM_SCHEDULE=SEED runs every launch under the device's seeded
 * random interleaving: some seed orders the warps' atomics unlike the
 * default schedule, and a seed gives the same order each time
 */
TEST(random_schedule_from_the_environment)
{
	unsigned int def[32], a[32], b[32];
	int differ = 0;
	char seed[16];

	if (!on_vgpu())
		SKIP(return, "vGPU's schedules");
	ASSERT_EQ(0, schedule_order(NULL, def));
	for (int w = 0; w < 8; w++) { /* each warp took 4 tickets */
		int n = 0;

		for (int i = 0; i < 32; i++)
			n += def[i] == (unsigned int)w;
		ASSERT_EQ(4, n);
	}
	for (int s = 1; s <= 8; s++) {
		snprintf(seed, sizeof(seed), "%d", s);
		ASSERT_EQ(0, schedule_order(seed, a));
		ASSERT_EQ(0, schedule_order(seed, b));
		EXPECT_EQ(0, memcmp(a, b, sizeof(a))); /* deterministic */
		differ += memcmp(a, def, sizeof(a)) != 0;
	}
	EXPECT_GT(differ, 0);
	/* not a number: a warning, and the default schedule */
	ASSERT_EQ(0, schedule_order("12x", a));
	EXPECT_EQ(0, memcmp(a, def, sizeof(a)));
}

TEST_HARNESS_MAIN
