// SPDX-License-Identifier: MIT
/*
 * A kernel compiled without PTX (-gencode arch=compute_90a,code=sm_90a:
 * SASS only, the Makefile), linked into test_cudart_fault: vGPU cannot run
 * it, and the launch says so.
 */
#include <cuda_runtime.h>

__global__ void sass_only(int *p)
{
	*p = 42;
}

cudaError_t launch_sass_only(int *p)
{
	sass_only<<<1, 1>>>(p);
	return cudaGetLastError();
}
