// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: multicast objects (cuMulticast*, CUDA 12.1), which map
 * one address to memory on several GPUs of an NVLink switch system so
 * that multimem instructions reach them all (docs/ptx.md, "multimem").
 *
 * vGPU has none: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0 and every
 * entry point answers as NVIDIA's driver does on an H200 outside such a
 * system (tests/cuda/real-gpu/multicast-h200-2026-11-30):
 * CUDA_ERROR_NOT_INITIALIZED before cuInit, else CUDA_ERROR_NOT_SUPPORTED
 * whatever the arguments (NULL pointers, bad options, flags, handles and
 * devices included: the driver checks none of them first), the
 * out-parameters untouched.  No context is needed.  Nothing is printed:
 * a program that asks whether multicast works is told no, as on the H200.
 */
#include "cuda_priv.h"

static CUresult no_multicast(void)
{
	return cuv_initialized() ? CUDA_ERROR_NOT_SUPPORTED : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle,
				   const CUmulticastObjectProp *prop)
{
	return no_multicast();
}

CUresult CUDAAPI cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev)
{
	return no_multicast();
}

CUresult CUDAAPI cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
				    CUmemGenericAllocationHandle memHandle, size_t memOffset,
				    size_t size, unsigned long long flags)
{
	return no_multicast();
}

CUresult CUDAAPI cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
				     CUdeviceptr memptr, size_t size, unsigned long long flags)
{
	return no_multicast();
}

CUresult CUDAAPI cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev,
				   size_t mcOffset, size_t size)
{
	return no_multicast();
}

CUresult CUDAAPI cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
					   CUmulticastGranularity_flags option)
{
	return no_multicast();
}
