// SPDX-License-Identifier: MIT
/*
 * test_cuda.c compiled as nvcc --default-stream per-thread compiles host
 * code (CUDA_API_PER_THREAD_DEFAULT_STREAM) against NVIDIA's cuda.h: its
 * calls go to the _ptsz/_ptds entry points of libcuda.so.1, where the NULL
 * stream is each thread's own default stream.
 */
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda.h>

#ifndef CU_TRSF_SRGB /* in NVIDIA's header only */
#error "test_cuda_ptds must be compiled against NVIDIA's cuda.h"
#endif

#include "test_cuda.c"
