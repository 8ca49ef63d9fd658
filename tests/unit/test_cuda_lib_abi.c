// SPDX-License-Identifier: MIT
/*
 * test_cuda_lib.c compiled against NVIDIA's own cuda.h and linked with
 * vGPU's libcuda.so.1, as test_cuda_abi.c does for test_cuda.c.
 */
#include <cuda.h>

#ifndef CU_TRSF_SRGB /* in NVIDIA's header only */
#error "test_cuda_lib_abi must be compiled against NVIDIA's cuda.h"
#endif

#include "test_cuda_lib.c"
