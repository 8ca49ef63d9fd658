// SPDX-License-Identifier: MIT
/*
 * The runtime API's error paths that change the process's state: a
 * kernel with no PTX (nopx.cu), and a faulting kernel whose error is
 * sticky for the whole process, as CUDA's (cudaDeviceReset does not make
 * the device usable again: cudaErrorDevicesUnavailable, as NVIDIA's runtime
 * answers, tests/cuda/real-gpu/probe_rt_sticky.cu).  The fault test is last.
 */
#include <cstring>

#include <cuda_runtime.h>

#include "ktap.h"

cudaError_t launch_sass_only(int *p);

__global__ void store(int *p, int v)
{
	p[threadIdx.x] = v;
}

static int works(void)
{
	int *d, h[4] = { 0 };

	CHECK_OK(cudaMalloc(&d, sizeof(h)));
	store<<<1, 4>>>(d, 7);
	CHECK_OK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	CHECK(h[0] == 7 && h[3] == 7);
	CHECK_OK(cudaFree(d));
	return 0;
}

static bool on_vgpu(void)
{
	cudaDeviceProp p;

	return cudaGetDeviceProperties(&p, 0) == cudaSuccess && !strncmp(p.name, "vGPU", 4);
}

/* a fatbin with no PTX: cudaErrorNoKernelImageForDevice, and the
 * program's other kernels still run (vGPU only: a GPU runs the SASS) */
static int test_no_ptx(void)
{
	int *d;

	if (!on_vgpu())
		return KTAP_SKIP;

	CHECK_OK(cudaMalloc(&d, sizeof(int)));
	CHECK_RT(launch_sass_only(d), cudaErrorNoKernelImageForDevice);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaFree(d));
	return works();
}

/*
 * As NVIDIA's runtime 13 answers on the H200 (tests/cuda/real-gpu/
 * probe_rt_sticky.cu and its log): the fault is returned by every later
 * call, each recording it as the last error again, which cudaGetLastError
 * returns and clears like any other; cudaDeviceReset succeeds and keeps
 * the last error, and the device is lost to the process after it.
 */
static int test_fault_sticky(void)
{
	cudaError_t first;
	int *d;

	CHECK(!works());
	/* an address no allocation holds */
	store<<<1, 32>>>((int *)0x10, 1);
	CHECK_RT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
	/* recorded by the synchronize, then cleared (one run on the H200 of
	 * this program, after the no-PTX test, read cudaSuccess here) */
	first = cudaGetLastError();
	CHECK(first == cudaErrorIllegalAddress || (!on_vgpu() && first == cudaSuccess));
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaPeekAtLastError());
	/* sticky: every later call returns it, and records it again */
	CHECK_RT(cudaMalloc(&d, 16), cudaErrorIllegalAddress);
	CHECK_RT(cudaGetLastError(), cudaErrorIllegalAddress);
	CHECK_RT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
	CHECK_RT(cudaStreamSynchronize(0), cudaErrorIllegalAddress);
	/* the reset succeeds, keeps the last error, and loses the device */
	CHECK_OK(cudaDeviceReset());
	CHECK_RT(cudaGetLastError(), cudaErrorIllegalAddress);
	CHECK_RT(cudaMalloc(&d, 16), cudaErrorDevicesUnavailable);
	CHECK_RT(cudaGetLastError(), cudaErrorDevicesUnavailable);
	CHECK_RT(cudaDeviceSynchronize(), cudaErrorDevicesUnavailable);
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "no_ptx", test_no_ptx },
		{ "fault_sticky", test_fault_sticky },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
