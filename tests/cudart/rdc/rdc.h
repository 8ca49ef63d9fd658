/* SPDX-License-Identifier: MIT */
/*
 * test_cudart_rdc: a program of two translation units built with
 * nvcc -rdc=true (separate compilation, device-linked by nvcc): device
 * functions and variables of devlib.cu used from main.cu's kernels
 * (extern __device__), a counter both update, function pointers to
 * devlib.cu's functions called from main.cu, and a static __device__
 * variable of the same name in each.  vGPU's libcudart links the units'
 * PTX at first use (libvgpu/cudart/crt_register.c).
 */
#ifndef RDC_H
#define RDC_H

typedef int (*rdc_op)(int);

/* devlib.cu */
extern __device__ unsigned int rdc_counter;
extern __device__ int rdc_table[4];
extern __device__ rdc_op rdc_negate_ptr;
__device__ int rdc_scale(int x);
__device__ rdc_op rdc_get_op(int which);
__global__ void lib_kernel(int *out, int n);
__global__ void lib_static(int *out);

/* what devlib.cu's functions compute, on the host */
static inline int host_scale(int x, const int *table)
{
	return 3 * x + table[x & 3];
}

#endif
