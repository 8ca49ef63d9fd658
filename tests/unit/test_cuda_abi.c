// SPDX-License-Identifier: MIT
/*
 * test_cuda.c compiled against NVIDIA's own cuda.h (the Makefile puts
 * /usr/local/cuda/include on the include path) and linked with vGPU's
 * libcuda.so.1: a program built for NVIDIA's driver API runs unchanged.
 */
#include <cuda.h>

#ifndef CU_TRSF_SRGB /* in NVIDIA's header only */
#error "test_cuda_abi must be compiled against NVIDIA's cuda.h"
#endif

#include "test_cuda.c"
