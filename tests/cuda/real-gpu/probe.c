// SPDX-License-Identifier: MIT
/*
 * probe: what NVIDIA's libcuda answers to the questions libcuda.so.1's
 * error paths depend on (issue 33 §1).  Built on the accelerator machine
 * against NVIDIA's cuda.h and libcuda (run.sh beside it), with the test
 * kernels (tests/cuda/kernels.cu) compiled there.  Each scenario runs in
 * its own child process (a fault is sticky for the process; an invalid
 * handle may crash NVIDIA's library): the log says what each call returned,
 * or the signal that ended the child.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

static const char *dir;
static CUmodule mod;
static CUcontext ctx;

static void show(const char *what, CUresult r)
{
	const char *n = NULL;

	if (cuGetErrorName(r, &n))
		n = "?";
	printf("  %-58s = %d %s\n", what, (int)r, n);
	fflush(stdout);
}

#define P(call) show(#call, call)

static void setup(void)
{
	char path[512];

	cuInit(0);
	cuCtxCreate(&ctx, NULL, 0, 0);
	snprintf(path, sizeof(path), "%s/kernels.ptx", dir);
	cuModuleLoad(&mod, path);
}

static void run(const char *name, void (*fn)(void))
{
	pid_t pid;
	int st;

	printf("%s:\n", name);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		fn();
		exit(0);
	}
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st))
		printf("  (ended by signal %d)\n", WTERMSIG(st));
	fflush(stdout);
}

static void images(void)
{
	static const char bad_ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
				      ".visible .entry k()\n{\n\tfrobnicate.u32 %r1;\n}\n";
	static const char nover[] = ".target sm_90a\n.address_size 64\n"
				    ".visible .entry k()\n{\n\tret;\n}\n";
	static const char ok_ptx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
				     ".visible .entry k()\n{\n\tret;\n}\n";
	static const char elf[] = "\x7f" "ELF garbage garbage garbage garbage garbage garbage";
	static const unsigned char fb[64] = { 0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0 };
	CUmodule m;
	CUlibrary l;
	CUkernel k;

	setup();
	P(cuModuleLoadData(&m, "x"));
	P(cuModuleLoadData(&m, ""));
	P(cuModuleLoadData(&m, "hello world, not ptx at all"));
	P(cuModuleLoadData(&m, "// a comment\n"));
	P(cuModuleLoadData(&m, ".version 8.0\n"));
	P(cuModuleLoadData(&m, ".version 8.0\n.target sm_90a\n"));
	P(cuModuleLoadData(&m, ".version 8.0\ngarbage here\n"));
	P(cuModuleLoadData(&m, ".version 99.0\n.target sm_90a\n.address_size 64\n"));
	P(cuModuleLoadData(&m, nover));
	P(cuModuleLoadData(&m, bad_ptx));
	P(cuModuleLoadData(&m, ok_ptx));
	P(cuModuleLoadData(&m, "//\n.version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"));
	P(cuModuleLoadData(&m, elf));
	P(cuModuleLoadData(&m, fb));
	P(cuModuleLoadFatBinary(&m, "x"));
	P(cuLibraryLoadData(&l, "x", NULL, NULL, 0, NULL, NULL, 0));
	P(cuLibraryGetKernel(&k, l, "k"));
	P(cuLibraryUnload(l));
	P(cuLibraryLoadData(&l, bad_ptx, NULL, NULL, 0, NULL, NULL, 0));
	P(cuLibraryGetKernel(&k, l, "k"));
	P(cuLibraryLoadData(&l, ok_ptx, NULL, NULL, 0, NULL, NULL, 0));
	P(cuLibraryGetKernel(&k, l, "k"));
	P(cuLibraryGetKernel(&k, l, "nope"));
}

static void push_current(void)
{
	CUcontext cur = NULL, p = NULL, c2;
	unsigned int ver;

	setup();
	P(cuCtxPushCurrent(ctx));
	P(cuCtxGetCurrent(&cur));
	printf("  current is ctx: %d\n", cur == ctx);
	P(cuCtxPopCurrent(&p));
	printf("  popped ctx: %d\n", p == ctx);
	P(cuCtxGetCurrent(&cur));
	printf("  current is ctx: %d\n", cur == ctx);
	P(cuCtxPopCurrent(&p));
	P(cuCtxGetCurrent(&cur));
	printf("  current is NULL: %d\n", cur == NULL);
	P(cuCtxPopCurrent(&p));
	P(cuCtxPopCurrent(NULL));
	P(cuCtxPushCurrent(NULL));
	P(cuCtxSetCurrent(NULL));
	P(cuCtxGetApiVersion(NULL, &ver));
	P(cuCtxCreate(&c2, NULL, 0, 0));
	P(cuCtxDestroy(c2));
	P(cuCtxGetCurrent(&cur));
	printf("  current after destroying a pushed ctx is NULL: %d\n", cur == NULL);
	P(cuCtxSynchronize());
}

static CUdeviceptr dbuf;

static void fault_launch(const char *kernel, int sync)
{
	CUfunction f;
	void *params[] = { &dbuf };

	cuModuleGetFunction(&f, mod, kernel);
	cuMemAlloc(&dbuf, 256);
	P(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	if (sync)
		P(cuCtxSynchronize());
}

static void after_fault(void)
{
	CUcontext c2 = NULL, cur, p;
	CUdeviceptr d;
	CUstream s;
	CUevent e;
	CUfunction f;
	CUmodule m;
	int v, n;
	size_t fr, tot;
	char name[64];
	unsigned int fl;
	char path[512];
	void *params[] = { &dbuf };

	setup();
	/* a second context made before the fault, and a stream and event */
	P(cuStreamCreate(&s, 0));
	P(cuEventCreate(&e, 0));
	P(cuCtxCreate(&c2, NULL, 0, 0));
	P(cuCtxPopCurrent(&p));
	fault_launch("fault", 0);
	P(cuStreamQuery(NULL));
	P(cuCtxSynchronize());
	P(cuCtxSynchronize());
	P(cuMemAlloc(&d, 16));
	P(cuMemFree(dbuf));
	P(cuMemcpyDtoH(&v, dbuf, 4));
	P(cuMemcpyHtoD(dbuf, &v, 4));
	P(cuMemsetD32(dbuf, 0, 1));
	P(cuMemGetInfo(&fr, &tot));
	P(cuModuleGetFunction(&f, mod, "saxpy"));
	P(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f));
	P(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
	snprintf(path, sizeof(path), "%s/kernels.ptx", dir);
	P(cuModuleLoad(&m, path));
	P(cuStreamCreate(&s, 0));
	P(cuStreamQuery(s));
	P(cuStreamSynchronize(s));
	P(cuEventRecord(e, s));
	P(cuEventQuery(e));
	P(cuEventSynchronize(e));
	P(cuEventCreate(&e, 0));
	P(cuEventDestroy(e));
	P(cuStreamDestroy(s));
	P(cuCtxGetCurrent(&cur));
	P(cuCtxGetDevice(&n));
	P(cuCtxGetFlags(&fl));
	P(cuCtxGetApiVersion(ctx, &fl));
	P(cuDeviceGetCount(&n));
	P(cuDeviceGetName(name, sizeof(name), 0));
	P(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0));
	P(cuDriverGetVersion(&v));
	P(cuInit(0));
	P(cuDevicePrimaryCtxGetState(0, &fl, &v));
	/* the other context */
	P(cuCtxPushCurrent(c2));
	P(cuMemAlloc(&d, 16));
	P(cuCtxSynchronize());
	P(cuCtxPopCurrent(&p));
	P(cuCtxCreate(&cur, NULL, 0, 0));
	P(cuModuleUnload(mod));
	P(cuCtxDestroy(c2));
	P(cuCtxCreate(&cur, NULL, 0, 0));
	P(cuCtxDestroy(ctx));
	printf("  -- every context destroyed\n");
	P(cuCtxGetCurrent(&cur));
	printf("  current is NULL: %d\n", cur == NULL);
	P(cuCtxCreate(&c2, NULL, 0, 0));
	P(cuMemAlloc(&d, 16));
	P(cuDevicePrimaryCtxRetain(&p, 0));
	P(cuCtxSetCurrent(p));
	P(cuMemAlloc(&d, 16));
	P(cuDevicePrimaryCtxReset(0));
	P(cuMemAlloc(&d, 16));
	P(cuDevicePrimaryCtxRetain(&p, 0));
	P(cuMemAlloc(&d, 16));
}

static void misaligned_then(void)
{
	CUdeviceptr d;

	setup();
	fault_launch("misaligned", 1);
	P(cuMemAlloc(&d, 16));
	P(cuModuleUnload(mod));
	P(cuCtxDestroy(ctx));
	P(cuCtxCreate(&ctx, NULL, 0, 0));
	P(cuMemAlloc(&d, 16));
}

static void primary_fault(void)
{
	CUcontext p, cur;
	CUdeviceptr d;
	CUfunction f;
	unsigned int fl;
	int act;
	char path[512];

	cuInit(0);
	P(cuDevicePrimaryCtxRetain(&p, 0));
	P(cuCtxSetCurrent(p));
	snprintf(path, sizeof(path), "%s/kernels.ptx", dir);
	P(cuModuleLoad(&mod, path));
	fault_launch("fault", 1);
	P(cuMemAlloc(&d, 16));
	P(cuDevicePrimaryCtxGetState(0, &fl, &act));
	P(cuDevicePrimaryCtxReset(0));
	P(cuDevicePrimaryCtxGetState(0, &fl, &act));
	printf("  active after reset: %d\n", act);
	P(cuCtxGetCurrent(&cur));
	printf("  current is p: %d\n", cur == p);
	P(cuModuleGetFunction(&f, mod, "fault"));
	P(cuMemAlloc(&d, 16));
	P(cuCtxSynchronize());
	P(cuCtxCreate(&cur, NULL, 0, 0));
	P(cuCtxPopCurrent(&cur));
	P(cuDevicePrimaryCtxRetain(&cur, 0));
	printf("  same handle: %d\n", cur == p);
	P(cuDevicePrimaryCtxGetState(0, &fl, &act));
	printf("  active after retain: %d\n", act);
	P(cuMemAlloc(&d, 16));
	P(cuDevicePrimaryCtxRelease(0));
	P(cuDevicePrimaryCtxRelease(0));
	P(cuDevicePrimaryCtxRelease(0));
	P(cuMemAlloc(&d, 16));
}

static void primary_reset_clean(void)
{
	CUcontext p, cur;
	CUdeviceptr d;
	unsigned int fl;
	int act;

	cuInit(0);
	P(cuDevicePrimaryCtxRetain(&p, 0));
	P(cuCtxSetCurrent(p));
	P(cuMemAlloc(&d, 16));
	P(cuDevicePrimaryCtxReset(0));
	P(cuDevicePrimaryCtxGetState(0, &fl, &act));
	printf("  active after reset: %d\n", act);
	P(cuMemAlloc(&d, 16));
	P(cuCtxGetCurrent(&cur));
	printf("  current is p: %d\n", cur == p);
	P(cuDevicePrimaryCtxRelease(0));
	P(cuDevicePrimaryCtxRelease(0));
}

static void extra_buffers(void)
{
	int out[6];
	CUdeviceptr d;
	CUfunction f;
	size_t bufsize;
	unsigned char buf[256];
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
			  &bufsize, CU_LAUNCH_PARAM_END };
	void *extra_nosize[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_END };
	void *extra_noptr[] = { CU_LAUNCH_PARAM_BUFFER_SIZE, &bufsize, CU_LAUNCH_PARAM_END };
	void *extra_empty[] = { CU_LAUNCH_PARAM_END };
	void *extra_bad[] = { (void *)0x77, buf, CU_LAUNCH_PARAM_END };
	int a = 5;
	void *params[] = { &d, &a, &a, &a, &a, &a };

	setup();
	cuModuleGetFunction(&f, mod, "params");
	cuMemAlloc(&d, sizeof(out));
#define SHOW_OUT()                                                                   \
	do {                                                                         \
		cuMemcpyDtoH(out, d, sizeof(out));                                   \
		printf("  out: %d %d %d %d %d %d\n", out[0], out[1], out[2], out[3], \
		       out[4], out[5]);                                              \
	} while (0)
	memset(buf, 0x11, sizeof(buf));
	memcpy(buf, &d, 8);
	for (size_t s = 0; s <= 64; s += 4) {
		char what[64];

		bufsize = s;
		cuMemsetD32(d, 0xffffffff, 6);
		snprintf(what, sizeof(what), "extra, BUFFER_SIZE %zu (params take 44)", s);
		show(what, cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
		show("  then cuCtxSynchronize", cuCtxSynchronize());
		SHOW_OUT();
	}
	bufsize = 4096;
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	bufsize = 32768;
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra));
	P(cuCtxSynchronize());
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra_nosize));
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra_noptr));
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra_empty));
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra_bad));
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra));
	P(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	P(cuCtxSynchronize());
	/* a kernel with no parameters: NULL, NULL */
	{
		static const char k0[] = ".version 8.0\n.target sm_90a\n.address_size 64\n"
					 ".visible .entry k0()\n{\n\tret;\n}\n";
		CUmodule m0;
		CUfunction f0;

		P(cuModuleLoadData(&m0, k0));
		P(cuModuleGetFunction(&f0, m0, "k0"));
		P(cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
		P(cuLaunchKernel(f0, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL));
		P(cuCtxSynchronize());
	}
}

static void attributes(void)
{
	static const char *names[] = { "saxpy", "reduce_sum", "mul_add", "dyn_reverse", "bump",
				       "params", "fault", "misaligned" };
	CUfunction f;
	int v;

	setup();
	for (unsigned int i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cuModuleGetFunction(&f, mod, names[i]);
		cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
		printf("  %-12s SHARED_SIZE_BYTES %d", names[i], v);
		cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f);
		printf(" MAX_DYNAMIC %d", v);
		cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
		printf(" NUM_REGS %d", v);
		cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
		printf(" LOCAL %d", v);
		cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, f);
		printf(" CONST %d\n", v);
	}
}

static void proc_address(void)
{
	CUdriverProcAddressQueryResult st = 12345;
	void *fn = (void *)1;

	cuInit(0);
	P(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, &st));
	printf("  fn NULL: %d, status %d\n", fn == NULL, (int)st);
	fn = (void *)1;
	st = 12345;
	P(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, NULL));
	printf("  fn NULL: %d\n", fn == NULL);
	fn = (void *)1;
	st = 12345;
	P(cuGetProcAddress("cuMemAlloc", &fn, 1000, 0, &st));
	printf("  fn NULL: %d, status %d\n", fn == NULL, (int)st);
	fn = (void *)1;
	st = 12345;
	P(cuGetProcAddress("cuLibraryLoadData", &fn, 11000, 0, &st));
	printf("  fn NULL: %d, status %d\n", fn == NULL, (int)st);
	fn = (void *)1;
	st = 12345;
	P(cuGetProcAddress("cuMemAlloc", &fn, 13000, 8, &st));
	printf("  flags 8: fn NULL: %d, status %d\n", fn == NULL, (int)st);
	st = 12345;
	P(cuGetProcAddress("cuMemAlloc", NULL, 13000, 0, &st));
	printf("  status %d\n", (int)st);
	st = 12345;
	fn = (void *)1;
	P(cuGetProcAddress("cuMemAlloc", &fn, -1, 0, &st));
	printf("  fn NULL: %d, status %d\n", fn == NULL, (int)st);
	fn = (void *)1;
	P(cuGetProcAddress("cuMemAlloc", &fn, 0, 0, &st));
	printf("  version 0: fn NULL: %d, status %d\n", fn == NULL, (int)st);
	P(cuGetProcAddress("cuGetProcAddress", &fn, 13000, 0, &st));
	printf("  fn == cuGetProcAddress_v2: %d\n", fn == (void *)cuGetProcAddress_v2);
}

static void bad_input(void)
{
	CUdeviceptr d, h2;
	void *h;
	CUstream s;
	CUevent e;
	int v;

	setup();
	P(cuMemAlloc(&d, 64));
	P(cuMemFree(d));
	P(cuMemFree(d));
	P(cuMemFree(0));
	P(cuMemFree(0x1234));
	P(cuMemAllocHost(&h, 64));
	P(cuMemFreeHost(h));
	P(cuMemFreeHost(h));
	P(cuMemFreeHost(NULL));
	P(cuMemFreeHost(&v));
	P(cuMemAlloc(&d, 64));
	P(cuMemcpyDtoH(&v, d + 64, 4));
	P(cuMemcpyDtoH(&v, d + 62, 4));
	P(cuMemcpyHtoD(d, NULL, 4));
	P(cuMemcpyDtoH(NULL, d, 4));
	P(cuMemcpyHtoD(d, &v, 0));
	P(cuMemAlloc(&d, 0));
	P(cuMemAlloc(NULL, 16));
	P(cuMemGetAddressRange(&h2, NULL, 0x1234));
	P(cuStreamCreate(NULL, 0));
	P(cuStreamCreate(&s, 0x40));
	P(cuEventCreate(NULL, 0));
	P(cuStreamSynchronize(NULL));
	P(cuStreamQuery(NULL));
	P(cuEventRecord(NULL, NULL));
	P(cuEventQuery(NULL));
	P(cuEventSynchronize(NULL));
	P(cuEventDestroy(NULL));
	P(cuStreamDestroy(NULL));
	P(cuModuleUnload(NULL));
	P(cuModuleGetFunction(NULL, mod, "saxpy"));
	P(cuModuleLoad(NULL, "x"));
	P(cuModuleLoad(&mod, NULL));
	P(cuCtxDestroy(NULL));
	P(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, NULL));
	P(cuLaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	P(cuEventCreate(&e, 0));
	P(cuEventElapsedTime(NULL, e, e));
}

/* destroyed handles: each in its own child (NVIDIA's library may crash) */
static CUstream g_s;
static CUevent g_e;
static CUfunction g_f;
static CUmodule g_m;

static void stale_setup(void)
{
	char path[512];

	setup();
	snprintf(path, sizeof(path), "%s/kernels.ptx", dir);
	cuStreamCreate(&g_s, 0);
	cuEventCreate(&g_e, 0);
	cuModuleLoad(&g_m, path);
	cuModuleGetFunction(&g_f, g_m, "saxpy");
	cuStreamDestroy(g_s);
	cuEventDestroy(g_e);
	cuModuleUnload(g_m);
}

static void stale_stream_sync(void) { stale_setup(); P(cuStreamSynchronize(g_s)); }
static void stale_stream_destroy(void) { stale_setup(); P(cuStreamDestroy(g_s)); }
static void stale_event_record(void) { stale_setup(); P(cuEventRecord(g_e, NULL)); }
static void stale_event_destroy(void) { stale_setup(); P(cuEventDestroy(g_e)); }
static void stale_event_query(void) { stale_setup(); P(cuEventQuery(g_e)); }
static void stale_module_unload(void) { stale_setup(); P(cuModuleUnload(g_m)); }
static void stale_module_getfn(void)
{
	CUfunction f;

	stale_setup();
	P(cuModuleGetFunction(&f, g_m, "saxpy"));
}
static void stale_function_launch(void)
{
	stale_setup();
	P(cuLaunchKernel(g_f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	P(cuCtxSynchronize());
}
static void stale_function_attr(void)
{
	int v;

	stale_setup();
	P(cuFuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, g_f));
}
static void stale_ctx(void)
{
	CUcontext c, cur;
	CUdeviceptr d;

	cuInit(0);
	cuCtxCreate(&c, NULL, 0, 0);
	P(cuCtxDestroy(c));
	P(cuCtxDestroy(c));
	P(cuCtxSetCurrent(c));
	P(cuCtxGetCurrent(&cur));
	P(cuMemAlloc(&d, 16));
	P(cuCtxPushCurrent(c));
	P(cuMemAlloc(&d, 16));
	P(cuCtxPopCurrent(&cur));
}
static void garbage_stream(void)
{
	setup();
	P(cuStreamSynchronize((CUstream)(uintptr_t)0xdead0000));
}

int main(int argc, char **argv)
{
	dir = argc > 1 ? argv[1] : ".";
	run("images", images);
	run("push_current", push_current);
	run("after_fault", after_fault);
	run("misaligned_then", misaligned_then);
	run("primary_fault", primary_fault);
	run("primary_reset_clean", primary_reset_clean);
	run("extra_buffers", extra_buffers);
	run("attributes", attributes);
	run("proc_address", proc_address);
	run("bad_input", bad_input);
	run("stale_stream_sync", stale_stream_sync);
	run("stale_stream_destroy", stale_stream_destroy);
	run("stale_event_record", stale_event_record);
	run("stale_event_destroy", stale_event_destroy);
	run("stale_event_query", stale_event_query);
	run("stale_module_unload", stale_module_unload);
	run("stale_module_getfn", stale_module_getfn);
	run("stale_function_launch", stale_function_launch);
	run("stale_function_attr", stale_function_attr);
	run("stale_ctx", stale_ctx);
	run("garbage_stream", garbage_stream);
	return 0;
}
