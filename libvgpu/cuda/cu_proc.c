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

/*
 * Every entry point by its API name, with the CUDA version that introduced
 * the name and the version of the form exported here (the one CUDA 13's
 * cuda.h maps the name to): NVIDIA's PFN_<name>_v<version> typedefs of
 * cudaTypedefs.h.
 */
#define CUV_ENTRY_POINTS(X) \
	X(cuInit, 2000, 2000) X(cuDriverGetVersion, 2020, 2020)                            \
	X(cuGetErrorString, 6000, 6000) X(cuGetErrorName, 6000, 6000)                      \
	X(cuGetProcAddress, 11030, 12000) X(cuDeviceGet, 2000, 2000)                       \
	X(cuDeviceGetCount, 2000, 2000) X(cuDeviceGetName, 2000, 2000)                     \
	X(cuDeviceGetUuid, 9020, 11040) X(cuDeviceTotalMem, 2000, 3020)                    \
	X(cuDeviceGetAttribute, 2000, 2000) X(cuDeviceComputeCapability, 2000, 2000)       \
	X(cuDevicePrimaryCtxRetain, 7000, 7000) X(cuDevicePrimaryCtxRelease, 7000, 11000)  \
	X(cuDevicePrimaryCtxReset, 7000, 11000) X(cuDevicePrimaryCtxSetFlags, 7000, 11000) \
	X(cuDevicePrimaryCtxGetState, 7000, 7000) X(cuCtxDestroy, 2000, 4000)              \
	X(cuCtxPushCurrent, 2000, 4000) X(cuCtxPopCurrent, 2000, 4000)                     \
	X(cuCtxSetCurrent, 4000, 4000) X(cuCtxGetCurrent, 4000, 4000)                      \
	X(cuCtxGetDevice, 2000, 2000) X(cuCtxGetFlags, 7000, 7000)                         \
	X(cuCtxGetApiVersion, 3020, 3020) X(cuCtxSynchronize, 2000, 2000)                  \
	X(cuCtxGetStreamPriorityRange, 5050, 5050) X(cuCtxGetLimit, 3010, 3010)            \
	X(cuCtxSetLimit, 3010, 3010) X(cuModuleLoad, 2000, 2000)                           \
	X(cuModuleLoadData, 2000, 2000) X(cuModuleLoadDataEx, 2010, 2010)                  \
	X(cuModuleLoadFatBinary, 2000, 2000) X(cuModuleUnload, 2000, 2000)                 \
	X(cuModuleGetFunction, 2000, 2000) X(cuModuleGetGlobal, 2000, 3020)                \
	X(cuModuleGetFunctionCount, 12040, 12040) X(cuFuncGetAttribute, 2020, 2020)        \
	X(cuFuncSetAttribute, 9000, 9000) X(cuFuncGetName, 12030, 12030)                   \
	X(cuFuncGetParamInfo, 12040, 12040) X(cuMemGetInfo, 2000, 3020)                    \
	X(cuMemAlloc, 2000, 3020) X(cuMemFree, 2000, 3020)                                 \
	X(cuMemGetAddressRange, 2000, 3020) X(cuMemAllocHost, 2000, 3020)                  \
	X(cuMemFreeHost, 2000, 2000) X(cuMemHostAlloc, 2020, 2020)                         \
	X(cuMemHostGetDevicePointer, 2020, 3020) X(cuPointerGetAttribute, 4000, 4000)      \
	X(cuMemcpy, 4000, 4000) X(cuMemcpyHtoD, 2000, 3020) X(cuMemcpyDtoH, 2000, 3020)    \
	X(cuMemcpyDtoD, 2000, 3020) X(cuMemcpyAsync, 4000, 4000)                           \
	X(cuMemcpyHtoDAsync, 2000, 3020) X(cuMemcpyDtoHAsync, 2000, 3020)                  \
	X(cuMemcpyDtoDAsync, 3000, 3020) X(cuMemsetD8, 2000, 3020)                         \
	X(cuMemsetD16, 2000, 3020) X(cuMemsetD32, 2000, 3020)                              \
	X(cuMemsetD8Async, 3020, 3020) X(cuMemsetD16Async, 3020, 3020)                     \
	X(cuMemsetD32Async, 3020, 3020) X(cuStreamCreate, 2000, 2000)                      \
	X(cuStreamCreateWithPriority, 5050, 5050) X(cuStreamGetPriority, 5050, 5050)       \
	X(cuStreamGetFlags, 5050, 5050) X(cuStreamGetCtx, 9020, 9020)                      \
	X(cuStreamWaitEvent, 3020, 3020) X(cuStreamQuery, 2000, 2000)                      \
	X(cuStreamSynchronize, 2000, 2000) X(cuStreamDestroy, 2000, 4000)                  \
	X(cuEventCreate, 2000, 2000) X(cuEventRecord, 2000, 2000)                          \
	X(cuEventQuery, 2000, 2000) X(cuEventSynchronize, 2000, 2000)                      \
	X(cuEventDestroy, 2000, 4000) X(cuEventElapsedTime, 2000, 12080)                   \
	X(cuLaunchKernel, 4000, 4000) X(cuLaunchKernelEx, 11060, 11060)                    \
	X(cuLaunchCooperativeKernel, 9000, 9000) X(cuTensorMapEncodeTiled, 12000, 12000)   \
	X(cuTensorMapEncodeIm2col, 12000, 12000) X(cuDeviceGetPCIBusId, 4010, 4010)        \
	X(cuCtxGetCacheConfig, 3020, 3020) X(cuCtxSetCacheConfig, 3020, 3020)              \
	X(cuFuncGetModule, 11000, 11000) X(cuFuncSetCacheConfig, 3000, 3000)               \
	X(cuLibraryLoadData, 12000, 12000) X(cuLibraryLoadFromFile, 12000, 12000)          \
	X(cuLibraryUnload, 12000, 12000) X(cuLibraryGetKernel, 12000, 12000)               \
	X(cuLibraryGetKernelCount, 12040, 12040)                                           \
	X(cuLibraryEnumerateKernels, 12040, 12040) X(cuLibraryGetModule, 12000, 12000)     \
	X(cuLibraryGetGlobal, 12000, 12000) X(cuKernelGetFunction, 12000, 12000)           \
	X(cuKernelGetLibrary, 12050, 12050) X(cuKernelGetName, 12030, 12030)               \
	X(cuKernelGetAttribute, 12000, 12000) X(cuKernelSetAttribute, 12000, 12000)        \
	X(cuKernelGetParamInfo, 12040, 12040) X(cuStreamGetId, 12000, 12000)               \
	X(cuLaunchHostFunc, 10000, 10000) X(cuStreamAddCallback, 5000, 5000)               \
	X(cuCtxGetId, 12000, 12000) X(cuMemAllocPitch, 2000, 3020)                         \
	X(cuMemcpy2D, 2000, 3020) X(cuMemcpy2DUnaligned, 2000, 3020)                       \
	X(cuMemcpy2DAsync, 2000, 3020) X(cuMemAllocAsync, 11020, 11020)                    \
	X(cuMemFreeAsync, 11020, 11020) X(cuMemHostRegister, 4000, 6050)                   \
	X(cuMemHostUnregister, 4000, 4000) X(cuMemAllocManaged, 6000, 6000)                \
	X(cuEventRecordWithFlags, 11010, 11010) X(cuStreamBeginCapture, 10000, 10010)      \
	X(cuStreamEndCapture, 10000, 10000) X(cuStreamIsCapturing, 10000, 10000)           \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050, 6050)                         \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000, 7000)                \
	X(cuOccupancyMaxPotentialBlockSize, 6050, 6050)                                    \
	X(cuOccupancyMaxPotentialBlockSizeWithFlags, 7000, 7000)                           \
	X(cuOccupancyAvailableDynamicSMemPerBlock, 10020, 10020)                           \
	X(cuOccupancyMaxPotentialClusterSize, 11070, 11070)                                \
	X(cuOccupancyMaxActiveClusters, 11070, 11070)                                      \
	X(cuLinkCreate, 5050, 6050) X(cuLinkAddData, 5050, 6050)                           \
	X(cuLinkAddFile, 5050, 6050) X(cuLinkComplete, 5050, 5050)                         \
	X(cuLinkDestroy, 5050, 5050) X(cuMulticastCreate, 12010, 12010)                    \
	X(cuMulticastAddDevice, 12010, 12010) X(cuMulticastBindMem, 12010, 12010)          \
	X(cuMulticastBindAddr, 12010, 12010) X(cuMulticastUnbind, 12010, 12010)            \
	X(cuMulticastGetGranularity, 12010, 12010)

/* #n: the API name as written, before cuda.h maps it to its versioned symbol */
#define ENTRY(n, first, ours) { #n, (void *)n, first, ours },
static const struct {
	const char *name;
	void *fn;
	int first, ours;
} entry_points[] = { CUV_ENTRY_POINTS(ENTRY) };

/*
 * As NVIDIA's driver answers (tests/cuda/real-gpu/probe.h200.log): a name
 * it does not know, or knows only from a later CUDA than @cudaVersion, is
 * no error: CUDA_SUCCESS with *pfn NULL and the reason in @symbolStatus
 * (CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, _VERSION_NOT_SUFFICIENT).  Flags
 * other than the stream ones are CUDA_ERROR_INVALID_VALUE; so is a NULL
 * @symbol or @pfn (NVIDIA's library crashes there).  vGPU has the newest
 * form of each entry point only: a @cudaVersion that wants an older one
 * (cuMemAlloc before 3.2's 64-bit form, ...) finds none.
 */
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	void *fn = NULL;

	if (!symbol || !pfn || (flags & ~(cuuint64_t)3))
		return CUDA_ERROR_INVALID_VALUE;
	if (!strcmp(symbol, "cuCtxCreate")) { /* three signatures over time */
		fn = cudaVersion >= 12050 ? (void *)cuCtxCreate :
		     cudaVersion >= 11040 ? (void *)cuCtxCreate_v3 :
		     cudaVersion >= 3020  ? (void *)cuCtxCreate_v2 : NULL;
		st = fn ? CU_GET_PROC_ADDRESS_SUCCESS :
		     cudaVersion < 2000 ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
					  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	} else {
		for (size_t i = 0; i < sizeof(entry_points) / sizeof(entry_points[0]); i++) {
			if (strcmp(symbol, entry_points[i].name))
				continue;
			if (cudaVersion < entry_points[i].first) {
				st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
			} else if (cudaVersion < entry_points[i].ours) {
				cuv_warn("cuGetProcAddress(%s, version %d): vGPU has only the "
					 "CUDA %d.%d form", symbol, cudaVersion,
					 entry_points[i].ours / 1000, entry_points[i].ours % 1000 / 10);
			} else {
				if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
					fn = cuv_ptds_entry(symbol);
				if (!fn)
					fn = entry_points[i].fn;
				st = CU_GET_PROC_ADDRESS_SUCCESS;
			}
			break;
		}
	}
	*pfn = fn;
	if (symbolStatus)
		*symbolStatus = st;
	return CUDA_SUCCESS;
}
