/* SPDX-License-Identifier: MIT */
/*
 * Does the device launch from kernels?  A device without
 * VGPU_FEAT_DEVICE_LAUNCH (the sim with VGPU_SIM_NO_DEVICE_LAUNCH=1) makes
 * a kernel's launch return cudaErrorNotSupported, and the tests that
 * launch skip (CDP_OR_SKIP); the sim backend and the QEMU device (drm)
 * have it.  For the -rdc=true test programs (rdc_cdp.cu, rdc_devrt.cu).
 */
#ifndef CDP_SKIP_H
#define CDP_SKIP_H

#include <cstdio>

#include "ktap.h"

__global__ void cdp_nothing(void)
{
}

/* *r: what a kernel's launch returns */
__global__ void cdp_probe(int *r)
{
	cdp_nothing<<<1, 1>>>();
	*r = cudaGetLastError();
}

static int cdp_skip(void)
{
	static int known = -1;
	int *d = nullptr, h = -1;

	if (known >= 0)
		return known;
	if (cudaMalloc(&d, sizeof(int)) != cudaSuccess)
		return 0;
	cdp_probe<<<1, 1>>>(d);
	if (cudaDeviceSynchronize() == cudaSuccess &&
	    cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost) == cudaSuccess)
		known = h == cudaErrorNotSupported;
	cudaFree(d);
	if (known > 0)
		printf("# device-side launch: cudaErrorNotSupported (a device without "
		       "VGPU_FEAT_DEVICE_LAUNCH)\n");
	return known > 0;
}

#define CDP_OR_SKIP()                     \
	do {                              \
		if (cdp_skip())           \
			return KTAP_SKIP; \
	} while (0)

#endif
