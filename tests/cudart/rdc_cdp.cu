// SPDX-License-Identifier: MIT
/*
 * test_cudart_rdc_cdp: a device-side launch (CUDA dynamic parallelism,
 * nvcc -rdc=true with libcudadevrt) is refused by vGPU: linking the
 * program's PTX names the device runtime's functions as unsupported
 * (libvgpu/ptx/ptx_link.c) and the launch fails with
 * cudaErrorInvalidKernelImage; a program that never launches on the
 * device does not get there.
 */
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include "ktap.h"

__global__ void child(int *p)
{
	p[threadIdx.x] = (int)threadIdx.x;
}

__global__ void parent(int *p)
{
	child<<<1, 4>>>(p);
}

/* the launch refused, the reason on stderr */
static int test_device_launch_refused(void)
{
	char msg[8192] = "";
	FILE *tmp = tmpfile();
	int saved = dup(2), *d = nullptr;
	cudaError_t e;
	size_t n;

	CHECK(tmp && saved >= 0);
	CHECK_OK(cudaMalloc(&d, 16));
	fflush(stderr);
	dup2(fileno(tmp), 2);
	parent<<<1, 1>>>(d);
	e = cudaGetLastError();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(msg, 1, sizeof(msg) - 1, tmp);
	msg[n] = '\0';
	fclose(tmp);
	printf("# stderr: %.300s\n", msg);
	CHECK(e == cudaErrorInvalidKernelImage);
	CHECK(strstr(msg, "'__cudaCDP2LaunchDeviceV2' is a device-runtime function") != nullptr);
	CHECK(strstr(msg, "'__cudaCDP2GetParameterBufferV2' is a device-runtime function") !=
	      nullptr);
	CHECK_OK(cudaFree(d));
	return 0;
}

int main(void)
{
	static const ktap_test tests[] = {
		{ "device_launch_refused", test_device_launch_refused },
	};

	return ktap_run(tests, sizeof(tests) / sizeof(tests[0]));
}
