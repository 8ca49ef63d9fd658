/* SPDX-License-Identifier: MIT */
/*
 * What the driver-API test programs (test_cuda.c, test_cuda_lib.c) share:
 * the kernels nvcc compiled into CUDA_TEST_DIR, CUresult checks, and the
 * fixture "cu": a created context with kernels.ptx loaded.
 */
#ifndef CUDA_TEST_H
#define CUDA_TEST_H

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "kselftest_host.h"

#ifndef CUDA_TEST_DIR
#error "CUDA_TEST_DIR: where the Makefile put the kernels nvcc compiled"
#endif

/* CUresult is an unsigned enum, its constants int: compare as int */
#define CU(call) ASSERT_EQ(0, (int)(call))
#define EXPECT_CU(err, call) EXPECT_EQ((int)(err), (int)(call))

/* where the kernels are: $VGPU_CUDA_TEST_DIR (a copy elsewhere, the
 * guest), else where the build put them */
static inline const char *kernel_dir(void)
{
	const char *dir = getenv("VGPU_CUDA_TEST_DIR");

	return dir && *dir ? dir : CUDA_TEST_DIR;
}

/*
 * Is the library under test vGPU's?  Some tests check what only vGPU
 * does: handles checked against a registry (NVIDIA's library does not
 * check them: a destroyed or garbage handle crashes it), VGPU_BACKEND,
 * vGPU's refusals (SASS, swizzle, ...).  Such checks run only on vGPU, so
 * that the same binaries, run on a real GPU with NVIDIA's libcuda
 * (tests/cuda/real-gpu/README.md), assert CUDA's behaviour alone.
 * VGPU_CUDA_REAL_GPU=1 says "not vGPU" before cuInit; after it the device
 * name says.
 */
static inline int on_vgpu(void)
{
	const char *env = getenv("VGPU_CUDA_REAL_GPU");
	char name[64];

	if (env && *env && strcmp(env, "0"))
		return 0;
	if (cuDeviceGetName(name, sizeof(name), 0) == CUDA_SUCCESS)
		return !strncmp(name, "vGPU", 4);
	return 1;
}

/* a vGPU-only test: skipped elsewhere */
#define VGPU_ONLY()                                                              \
	do {                                                                     \
		if (!on_vgpu())                                                  \
			SKIP(return, "vGPU-specific (handle checks or refusals)"); \
	} while (0)

static inline void *read_file(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;
	long n;

	snprintf(path, sizeof(path), "%s/%s", kernel_dir(), name);
	f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static inline const char *path_of(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", kernel_dir(), name);
	return path;
}

FIXTURE(cu) {
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
};

FIXTURE_SETUP(cu)
{
	CU(cuInit(0));
	CU(cuDeviceGet(&self->dev, 0));
	CU(cuCtxCreate(&self->ctx, NULL, 0, self->dev));
	CU(cuModuleLoad(&self->mod, path_of("kernels.ptx")));
}

FIXTURE_TEARDOWN(cu)
{
	if (self->mod)
		EXPECT_CU(CUDA_SUCCESS, cuModuleUnload(self->mod));
	if (self->ctx)
		EXPECT_CU(CUDA_SUCCESS, cuCtxDestroy(self->ctx));
}

#endif /* CUDA_TEST_H */
