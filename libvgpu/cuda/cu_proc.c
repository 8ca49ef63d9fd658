// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: cuGetProcAddress, the table of every entry point by its
 * API name (cudart and cudaGetDriverEntryPoint find the driver this way).
 * An API name maps to the versioned symbol the CUDA 13 header maps it
 * to (the macros of cuda.h); with the per-thread-default-stream flag, the
 * _ptsz/_ptds entry point where there is one (cu_ptds.c).
 */
#include <string.h>

#include "cuda_priv.h"

CUV_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUV_EXPORT CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, void *paramsArray, int numParams,
					   unsigned int flags, CUdevice dev);

#define CUV_ENTRY_POINTS(X)                                                             \
	X(cuInit) X(cuDriverGetVersion) X(cuGetErrorString) X(cuGetErrorName)          \
	X(cuGetProcAddress) X(cuDeviceGet) X(cuDeviceGetCount) X(cuDeviceGetName)      \
	X(cuDeviceGetUuid) X(cuDeviceTotalMem) X(cuDeviceGetAttribute)                 \
	X(cuDeviceComputeCapability) X(cuDevicePrimaryCtxRetain)                       \
	X(cuDevicePrimaryCtxRelease) X(cuDevicePrimaryCtxReset)                        \
	X(cuDevicePrimaryCtxSetFlags) X(cuDevicePrimaryCtxGetState) X(cuCtxDestroy)    \
	X(cuCtxPushCurrent) X(cuCtxPopCurrent) X(cuCtxSetCurrent) X(cuCtxGetCurrent)   \
	X(cuCtxGetDevice) X(cuCtxGetFlags) X(cuCtxGetApiVersion) X(cuCtxSynchronize)   \
	X(cuCtxGetStreamPriorityRange) X(cuCtxGetLimit) X(cuCtxSetLimit)               \
	X(cuModuleLoad) X(cuModuleLoadData) X(cuModuleLoadDataEx)                      \
	X(cuModuleLoadFatBinary) X(cuModuleUnload) X(cuModuleGetFunction)              \
	X(cuModuleGetGlobal) X(cuModuleGetFunctionCount) X(cuFuncGetAttribute)         \
	X(cuFuncSetAttribute) X(cuFuncGetName) X(cuFuncGetParamInfo) X(cuMemGetInfo)   \
	X(cuMemAlloc) X(cuMemFree) X(cuMemGetAddressRange) X(cuMemAllocHost)           \
	X(cuMemFreeHost) X(cuMemHostAlloc) X(cuMemHostGetDevicePointer)                \
	X(cuPointerGetAttribute) X(cuMemcpy) X(cuMemcpyHtoD) X(cuMemcpyDtoH)           \
	X(cuMemcpyDtoD) X(cuMemcpyAsync) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)     \
	X(cuMemcpyDtoDAsync) X(cuMemsetD8) X(cuMemsetD16) X(cuMemsetD32)               \
	X(cuMemsetD8Async) X(cuMemsetD16Async) X(cuMemsetD32Async) X(cuStreamCreate)   \
	X(cuStreamCreateWithPriority) X(cuStreamGetPriority) X(cuStreamGetFlags)       \
	X(cuStreamGetCtx) X(cuStreamWaitEvent) X(cuStreamQuery) X(cuStreamSynchronize) \
	X(cuStreamDestroy) X(cuEventCreate) X(cuEventRecord) X(cuEventQuery)           \
	X(cuEventSynchronize) X(cuEventDestroy) X(cuEventElapsedTime)                  \
	X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuLaunchCooperativeKernel)             \
	X(cuTensorMapEncodeTiled) X(cuTensorMapEncodeIm2col) X(cuDeviceGetPCIBusId)        \
	X(cuCtxGetCacheConfig) X(cuCtxSetCacheConfig) X(cuFuncGetModule)               \
	X(cuFuncSetCacheConfig) X(cuLibraryLoadData) X(cuLibraryLoadFromFile)          \
	X(cuLibraryUnload) X(cuLibraryGetKernel) X(cuLibraryGetKernelCount)            \
	X(cuLibraryEnumerateKernels) X(cuLibraryGetModule) X(cuLibraryGetGlobal)       \
	X(cuKernelGetFunction) X(cuKernelGetLibrary) X(cuKernelGetName)                \
	X(cuKernelGetAttribute) X(cuKernelSetAttribute) X(cuKernelGetParamInfo)        \
	X(cuStreamGetId) X(cuLaunchHostFunc) X(cuStreamAddCallback) X(cuCtxGetId)      \
	X(cuMemAllocPitch) X(cuMemcpy2D) X(cuMemcpy2DUnaligned) X(cuMemcpy2DAsync)     \
	X(cuMemAllocAsync) X(cuMemFreeAsync) X(cuMemHostRegister) X(cuMemHostUnregister) \
	X(cuMemAllocManaged) X(cuEventRecordWithFlags) X(cuStreamBeginCapture)         \
	X(cuStreamEndCapture) X(cuStreamIsCapturing)                                   \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor)                                 \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags)

/* #n: the API name as written, before cuda.h maps it to its versioned symbol */
#define ENTRY(n) { #n, (void *)n },
static const struct {
	const char *name;
	void *fn;
} entry_points[] = { CUV_ENTRY_POINTS(ENTRY) };

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	if (!symbol || !pfn || (flags & ~(cuuint64_t)3))
		return CUDA_ERROR_INVALID_VALUE;
	*pfn = NULL;
	if (!strcmp(symbol, "cuCtxCreate")) { /* three signatures over time */
		*pfn = cudaVersion >= 12050 ? (void *)cuCtxCreate :
		       cudaVersion >= 11040 ? (void *)cuCtxCreate_v3 : (void *)cuCtxCreate_v2;
	} else {
		if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
			*pfn = cuv_ptds_entry(symbol);
		for (size_t i = 0; !*pfn && i < sizeof(entry_points) / sizeof(entry_points[0]); i++)
			if (!strcmp(symbol, entry_points[i].name)) {
				*pfn = entry_points[i].fn;
				break;
			}
	}
	if (!*pfn)
		return CUDA_ERROR_NOT_FOUND;
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
	return CUDA_SUCCESS;
}
