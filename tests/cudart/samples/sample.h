/* SPDX-License-Identifier: MIT */
/*
 * What the sample programs (tests/cudart/samples/*.cu) share: the
 * checkCudaErrors() of NVIDIA's samples (helper_cuda.h), and the KTAP
 * lines scripts/run-tests.sh counts.  A sample is one test: it prints
 * "TAP version 13", "1..1", then "ok 1 NAME" and "NAME: PASS", or "not ok
 * 1 NAME" with "# " lines saying why, and the "# Totals:" line.
 */
#ifndef CUDART_SAMPLE_H
#define CUDART_SAMPLE_H

#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

static const char *sample_name;

/* The result line, KTAP's verdict and totals; the exit status. */
static inline int sample_finish(bool ok)
{
	printf("%s: %s\n", sample_name, ok ? "PASS" : "FAIL");
	printf("%sok 1 %s\n", ok ? "" : "not ", sample_name);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n", ok, !ok);
	fflush(stdout);
	return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}

static inline void sample_begin(const char *name)
{
	sample_name = name;
	/* vGPU's library picks the simulator when no vgpu DRM device exists;
	 * say so, unless the caller chose (the guest: drm) */
	setenv("VGPU_BACKEND", "sim", 0);
	printf("TAP version 13\n1..1\n# %s\n", name);
}

static inline void sample_check(cudaError_t e, const char *call, const char *file, int line)
{
	if (e == cudaSuccess)
		return;
	printf("# %s:%d: CUDA error %d (%s: %s) from %s\n", file, line, (int)e,
	       cudaGetErrorName(e), cudaGetErrorString(e), call);
	exit(sample_finish(false));
}

#define checkCudaErrors(call) sample_check((call), #call, __FILE__, __LINE__)

/* A host-side check of the results: a "# " line and the verdict. */
#define sampleCheck(cond)                                                         \
	do {                                                                      \
		if (!(cond)) {                                                    \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(sample_finish(false));                               \
		}                                                                 \
	} while (0)

#endif /* CUDART_SAMPLE_H */
