// SPDX-License-Identifier: MIT
/* test_cudart_rdc's second translation unit: the definitions (rdc.h). */
#include "rdc.h"

__device__ unsigned int rdc_counter;
__device__ int rdc_table[4] = { 10, 20, 30, 40 };

/* the same name as main.cu's: each unit its own */
static __device__ int unit_value = 7;

__device__ __noinline__ int rdc_scale(int x)
{
	return 3 * x + rdc_table[x & 3];
}

static __device__ __noinline__ int negate(int x)
{
	return -x;
}

__device__ rdc_op rdc_negate_ptr = negate;

__device__ rdc_op rdc_get_op(int which)
{
	return which ? rdc_scale : negate;
}

__global__ void lib_kernel(int *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n) {
		out[i] = rdc_scale(i);
		atomicAdd(&rdc_counter, 1u);
	}
}

__global__ void lib_static(int *out)
{
	*out = unit_value;
}
