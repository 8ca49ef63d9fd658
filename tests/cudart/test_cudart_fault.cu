// SPDX-License-Identifier: MIT
/*
 * The runtime API's error paths that change the process's state: a
 * kernel with no PTX (nopx.cu), and a faulting kernel whose error is
 * sticky for the whole process, as CUDA's (cudaDeviceReset does not make
 * the device usable again: NVIDIA's driver refuses the new primary
 * context, tests/cuda/real-gpu/probe.h200.log).  The fault test is last.
 */
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

/* a fatbin with no PTX: cudaErrorNoKernelImageForDevice, and the
 * program's other kernels still run */
static int test_no_ptx(void)
{
	int *d;

	CHECK_OK(cudaMalloc(&d, sizeof(int)));
	CHECK_RT(launch_sass_only(d), cudaErrorNoKernelImageForDevice);
	CHECK_OK(cudaGetLastError());
	CHECK_OK(cudaFree(d));
	return works();
}

static int test_fault_sticky(void)
{
	int *d;

	CHECK(!works());
	/* an address no allocation holds */
	store<<<1, 32>>>((int *)0x10, 1);
	CHECK_RT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
	/* sticky: every later call, and cudaGetLastError keeps it */
	CHECK_RT(cudaGetLastError(), cudaErrorIllegalAddress);
	CHECK_RT(cudaGetLastError(), cudaErrorIllegalAddress);
	CHECK_RT(cudaMalloc(&d, 16), cudaErrorIllegalAddress);
	CHECK_RT(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
	/* a reset clears the last error, not the process's fault */
	CHECK_OK(cudaDeviceReset());
	CHECK_OK(cudaGetLastError());
	CHECK_RT(cudaMalloc(&d, 16), cudaErrorIllegalAddress);
	CHECK_RT(cudaGetLastError(), cudaErrorIllegalAddress);
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
