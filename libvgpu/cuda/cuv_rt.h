/* SPDX-License-Identifier: MIT */
/*
 * libcuda.so.1's private entry point for libcudart.so.13 (not in cuda.h,
 * not for programs): a <<<>>> launch in one call.  libcudart checks what
 * is its own (the kernel's registration, the shared-memory size), then
 * hands libcuda the kernel and the context it wants current; libcuda
 * launches when that context is current and the thread has found the
 * kernel's function in it before (what cuKernelGetFunction then
 * cuLaunchKernel would do, without their repeated checks), or answers
 * CUV_SLOW having done nothing, and libcudart makes those calls, which
 * answer every other case (errors included) as before.
 */
#ifndef CUV_RT_H
#define CUV_RT_H

#include <stdbool.h>

#include "cuda.h"

/* cuv_rt_launch's (and libcuda's fast paths') "not here": no CUresult has this value */
#define CUV_SLOW ((CUresult)0x7fffffff)

/*
 * A launch's geometry and stream, as libcuda's launch paths take it
 * (cu_launch.c): libcudart fills one on its stack and libcuda launches
 * from it as it is, no copy between the two.
 */
struct cuv_launch {
	unsigned int grid[3], block[3], cluster[3]; /* cluster: 0 none */
	unsigned int smem;
	CUstream stream;
	bool cooperative;
	bool has_priority;
	int priority;
};

/* @params: the kernel's parameters (kernelParams); @l's cluster, cooperative
 * and priority must be zero (anything else: CUV_SLOW) */
__attribute__((visibility("default"))) CUresult cuv_rt_launch(CUcontext ctx, CUkernel kernel,
							       const struct cuv_launch *l,
							       void **params);

#endif /* CUV_RT_H */
