// SPDX-License-Identifier: MIT
/*
 * A CUDA driver-API program, unchanged from how one is written for
 * NVIDIA's libcuda: y = a * x + y with the kernel's PTX given as text
 * (cuModuleLoadDataEx, the way CUDA's "ptxjit" sample loads it).  Build it
 * against vGPU's libcuda.so.1 and run it on the in-process simulator:
 *
 *   cc drv_saxpy.c $(pkg-config --cflags --libs vgpu-cuda) -o drv_saxpy
 *   VGPU_BACKEND=sim ./drv_saxpy
 *
 * Prints "drv_saxpy: PASS" when every element matches the host's result.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

static const char saxpy_ptx[] =
	".version 8.0\n"
	".target sm_90a\n"
	".address_size 64\n"
	".visible .entry saxpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %r<6>;\n"
	"	.reg .f32 %f<5>;\n"
	"	.reg .b64 %rd<8>;\n"
	"	ld.param.u32 %r1, [n];\n"
	"	ld.param.f32 %f1, [a];\n"
	"	ld.param.u64 %rd1, [x];\n"
	"	ld.param.u64 %rd2, [y];\n"
	"	mov.u32 %r2, %ctaid.x;\n"
	"	mov.u32 %r3, %ntid.x;\n"
	"	mov.u32 %r4, %tid.x;\n"
	"	mad.lo.s32 %r5, %r2, %r3, %r4;\n"
	"	setp.ge.s32 %p1, %r5, %r1;\n"
	"	@%p1 bra DONE;\n"
	"	cvta.to.global.u64 %rd3, %rd1;\n"
	"	cvta.to.global.u64 %rd4, %rd2;\n"
	"	mul.wide.s32 %rd5, %r5, 4;\n"
	"	add.s64 %rd6, %rd3, %rd5;\n"
	"	add.s64 %rd7, %rd4, %rd5;\n"
	"	ld.global.f32 %f2, [%rd6];\n"
	"	ld.global.f32 %f3, [%rd7];\n"
	"	fma.rn.f32 %f4, %f1, %f2, %f3;\n"
	"	st.global.f32 [%rd7], %f4;\n"
	"DONE:\n"
	"	ret;\n"
	"}\n";

#define CHECK(call)                                                                \
	do {                                                                       \
		CUresult r_ = (call);                                              \
		if (r_ != CUDA_SUCCESS) {                                          \
			const char *name_ = "?";                                   \
			cuGetErrorName(r_, &name_);                                \
			fprintf(stderr, "drv_saxpy: %s failed: %s\n", #call, name_); \
			exit(1);                                                   \
		}                                                                  \
	} while (0)

int main(void)
{
	enum { N = 4096 };
	static float x[N], y[N], out[N];
	char log[4096] = "", name[256];
	CUjit_option opts[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[] = { log, (void *)(size_t)sizeof(log) };
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr dx, dy;
	int n = N, bad = 0;
	float a = 1.5f;
	void *params[] = { &n, &a, &dx, &dy };

	for (int i = 0; i < N; i++) {
		x[i] = (float)i / 8.0f;
		y[i] = (float)(N - i);
	}
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDeviceGetName(name, sizeof(name), dev));
	printf("drv_saxpy: device 0: %s\n", name);
	CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	if (cuModuleLoadDataEx(&mod, saxpy_ptx, 2, opts, vals) != CUDA_SUCCESS) {
		fprintf(stderr, "drv_saxpy: the PTX did not load:\n%s\n", log);
		return 1;
	}
	CHECK(cuModuleGetFunction(&f, mod, "saxpy"));
	CHECK(cuMemAlloc(&dx, sizeof(x)));
	CHECK(cuMemAlloc(&dy, sizeof(y)));
	CHECK(cuMemcpyHtoD(dx, x, sizeof(x)));
	CHECK(cuMemcpyHtoD(dy, y, sizeof(y)));
	CHECK(cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, params, NULL));
	CHECK(cuCtxSynchronize());
	CHECK(cuMemcpyDtoH(out, dy, sizeof(out)));
	for (int i = 0; i < N; i++)
		bad += out[i] != fmaf(a, x[i], y[i]);
	CHECK(cuMemFree(dx));
	CHECK(cuMemFree(dy));
	CHECK(cuModuleUnload(mod));
	CHECK(cuCtxDestroy(ctx));
	printf("drv_saxpy: %s (%d of %d elements wrong)\n", bad ? "FAIL" : "PASS", bad, N);
	return bad != 0;
}
