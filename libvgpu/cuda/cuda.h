/* SPDX-License-Identifier: MIT */
/*
 * cuda.h: the CUDA driver API as vGPU's libcuda.so.1 implements it.
 *
 * Written for vGPU from NVIDIA's public CUDA Driver API documentation:
 * the names, types, enumerator values, structure layouts and exported
 * symbol names are those of CUDA 13.0, so that a program compiled
 * against NVIDIA's <cuda.h> runs on this library unchanged and a program
 * written for the driver API compiles against this header unchanged.
 * Only the part of the API that vGPU implements or refuses explicitly is
 * declared (docs/cuda.md lists it); nothing here is NVIDIA's text.
 *
 * Versioned entry points: as in CUDA 13, some API names are macros for
 * the versioned symbol the library exports (cuMemAlloc -> cuMemAlloc_v2,
 * cuCtxCreate -> cuCtxCreate_v4, ...). *
 * The types, enumerations and structures are in cuda_types.h, which this
 * header includes (NVIDIA's cuda.h holds both; a program includes cuda.h
 * only); this header has the versioned names and the entry points.
 */
#ifndef __cuda_cuda_h__
#define __cuda_cuda_h__

#include <stddef.h>
#include <stdint.h>

#define CUDA_VERSION 13000

#ifndef CUDAAPI
#define CUDAAPI
#endif

/*
 * Versioned entry points (the symbols a CUDA 13 program calls).  Compiled
 * with CUDA_API_PER_THREAD_DEFAULT_STREAM (nvcc --default-stream
 * per-thread), the calls that take or imply a stream go to their _ptsz
 * (stream) and _ptds (synchronous) forms, for which the NULL stream is
 * the calling thread's default stream.
 */
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define __CUDA_API_PTDS(api) api##_ptds
#define __CUDA_API_PTSZ(api) api##_ptsz
#else
#define __CUDA_API_PTDS(api) api
#define __CUDA_API_PTSZ(api) api
#endif

#define cuDeviceTotalMem cuDeviceTotalMem_v2
#define cuCtxCreate cuCtxCreate_v4
#define cuCtxDestroy cuCtxDestroy_v2
#define cuCtxPushCurrent cuCtxPushCurrent_v2
#define cuCtxPopCurrent cuCtxPopCurrent_v2
#define cuDevicePrimaryCtxRelease cuDevicePrimaryCtxRelease_v2
#define cuDevicePrimaryCtxReset cuDevicePrimaryCtxReset_v2
#define cuDevicePrimaryCtxSetFlags cuDevicePrimaryCtxSetFlags_v2
#define cuDeviceGetUuid cuDeviceGetUuid_v2
#define cuModuleGetGlobal cuModuleGetGlobal_v2
#define cuLinkCreate cuLinkCreate_v2
#define cuLinkAddData cuLinkAddData_v2
#define cuLinkAddFile cuLinkAddFile_v2
#define cuMemGetInfo cuMemGetInfo_v2
#define cuMemAlloc cuMemAlloc_v2
#define cuMemFree cuMemFree_v2
#define cuMemGetAddressRange cuMemGetAddressRange_v2
#define cuMemAllocHost cuMemAllocHost_v2
#define cuMemHostGetDevicePointer cuMemHostGetDevicePointer_v2
#define cuMemcpyHtoD __CUDA_API_PTDS(cuMemcpyHtoD_v2)
#define cuMemcpyDtoH __CUDA_API_PTDS(cuMemcpyDtoH_v2)
#define cuMemcpyDtoD __CUDA_API_PTDS(cuMemcpyDtoD_v2)
#define cuMemcpyHtoDAsync __CUDA_API_PTSZ(cuMemcpyHtoDAsync_v2)
#define cuMemcpyDtoHAsync __CUDA_API_PTSZ(cuMemcpyDtoHAsync_v2)
#define cuMemcpyDtoDAsync __CUDA_API_PTSZ(cuMemcpyDtoDAsync_v2)
#define cuMemsetD8 __CUDA_API_PTDS(cuMemsetD8_v2)
#define cuMemsetD16 __CUDA_API_PTDS(cuMemsetD16_v2)
#define cuMemsetD32 __CUDA_API_PTDS(cuMemsetD32_v2)
#define cuMemAllocPitch cuMemAllocPitch_v2
#define cuMemcpy2D __CUDA_API_PTDS(cuMemcpy2D_v2)
#define cuMemcpy2DUnaligned __CUDA_API_PTDS(cuMemcpy2DUnaligned_v2)
#define cuMemcpy2DAsync __CUDA_API_PTSZ(cuMemcpy2DAsync_v2)
#define cuMemHostRegister cuMemHostRegister_v2
#define cuStreamBeginCapture __CUDA_API_PTSZ(cuStreamBeginCapture_v2)
#define cuStreamDestroy cuStreamDestroy_v2
#define cuEventDestroy cuEventDestroy_v2
#define cuEventElapsedTime cuEventElapsedTime_v2
#define cuGetProcAddress cuGetProcAddress_v2

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#define cuMemcpy __CUDA_API_PTDS(cuMemcpy)
#define cuMemcpyAsync __CUDA_API_PTSZ(cuMemcpyAsync)
#define cuMemsetD8Async __CUDA_API_PTSZ(cuMemsetD8Async)
#define cuMemsetD16Async __CUDA_API_PTSZ(cuMemsetD16Async)
#define cuMemsetD32Async __CUDA_API_PTSZ(cuMemsetD32Async)
#define cuStreamGetPriority __CUDA_API_PTSZ(cuStreamGetPriority)
#define cuStreamGetId __CUDA_API_PTSZ(cuStreamGetId)
#define cuStreamGetFlags __CUDA_API_PTSZ(cuStreamGetFlags)
#define cuStreamGetCtx __CUDA_API_PTSZ(cuStreamGetCtx)
#define cuStreamWaitEvent __CUDA_API_PTSZ(cuStreamWaitEvent)
#define cuStreamAddCallback __CUDA_API_PTSZ(cuStreamAddCallback)
#define cuStreamQuery __CUDA_API_PTSZ(cuStreamQuery)
#define cuStreamSynchronize __CUDA_API_PTSZ(cuStreamSynchronize)
#define cuEventRecord __CUDA_API_PTSZ(cuEventRecord)
#define cuLaunchKernel __CUDA_API_PTSZ(cuLaunchKernel)
#define cuLaunchKernelEx __CUDA_API_PTSZ(cuLaunchKernelEx)
#define cuLaunchHostFunc __CUDA_API_PTSZ(cuLaunchHostFunc)
#define cuLaunchCooperativeKernel __CUDA_API_PTSZ(cuLaunchCooperativeKernel)
#define cuStreamEndCapture __CUDA_API_PTSZ(cuStreamEndCapture)
#define cuStreamIsCapturing __CUDA_API_PTSZ(cuStreamIsCapturing)
#define cuEventRecordWithFlags __CUDA_API_PTSZ(cuEventRecordWithFlags)
#define cuMemFreeAsync __CUDA_API_PTSZ(cuMemFreeAsync)
#define cuMemAllocAsync __CUDA_API_PTSZ(cuMemAllocAsync)
#endif

#include "cuda_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ---- Initialisation, version, errors ---- */
CUresult CUDAAPI cuInit(unsigned int Flags);
CUresult CUDAAPI cuDriverGetVersion(int *driverVersion);
CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr);
CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr);
CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				  cuuint64_t flags,
				  CUdriverProcAddressQueryResult *symbolStatus);

/* ---- Devices ---- */
CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal);
CUresult CUDAAPI cuDeviceGetCount(int *count);
CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev);
CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev);
CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);

/* ---- Contexts ---- */
CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev);
CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags);
CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
			     unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxDestroy(CUcontext ctx);
CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx);
CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx);
CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx);
CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx);
CUresult CUDAAPI cuCtxGetDevice(CUdevice *device);
CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags);
CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version);
CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);
CUresult CUDAAPI cuCtxSynchronize(void);
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit);
CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value);
CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig);
CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config);

/* ---- Modules ---- */
CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname);
CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image);
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image,
				    unsigned int numOptions, CUjit_option *options,
				    void **optionValues);
CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin);
CUresult CUDAAPI cuModuleUnload(CUmodule hmod);
CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
				   const char *name);
CUresult CUDAAPI cuModuleGetFunctionCount(unsigned int *count, CUmodule mod);
CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc);
CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
CUresult CUDAAPI cuFuncGetName(const char **name, CUfunction hfunc);
CUresult CUDAAPI cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
				    size_t *paramSize);
CUresult CUDAAPI cuFuncGetModule(CUmodule *hmod, CUfunction hfunc);
CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config);

/*
 * ---- Linking (cu_link.c): PTX modules (or fatbins' PTX) linked into one
 * image, PTX text that cuModuleLoadData takes; cubins, host objects and
 * libraries cannot be linked (SASS does not run on vGPU) ----
 */
CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options,
			      void **optionValues, CUlinkState *stateOut);
CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
			       const char *name, unsigned int numOptions, CUjit_option *options,
			       void **optionValues);
CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
			       unsigned int numOptions, CUjit_option *options,
			       void **optionValues);
CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
CUresult CUDAAPI cuLinkDestroy(CUlinkState state);

/* ---- Libraries: context-independent loading; a CUkernel launches as a CUfunction ---- */
CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
				   CUjit_option *jitOptions, void **jitOptionsValues,
				   unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				   void **libraryOptionValues, unsigned int numLibraryOptions);
CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
				       CUjit_option *jitOptions, void **jitOptionsValues,
				       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				       void **libraryOptionValues, unsigned int numLibraryOptions);
CUresult CUDAAPI cuLibraryUnload(CUlibrary library);
CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib);
CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
					   CUlibrary lib);
CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library);
CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
				    const char *name);
CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel);
CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc);
CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
				      CUdevice dev);
CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
				      CUdevice dev);
CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
				      size_t *paramSize);

/* ---- Memory ---- */
CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total);
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize);
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr);
CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize);
CUresult CUDAAPI cuMemFreeHost(void *p);
CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags);
CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
				       CUdeviceptr ptr);
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount);
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
			       CUstream hStream);
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost,
				   size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
				   CUstream hStream);
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				   size_t ByteCount, CUstream hStream);
CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				 size_t Height, unsigned int ElementSizeBytes);
CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *pCopy);
CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
/* stream-ordered: allocated at once; freed after the stream's earlier work */
CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
/* refused (CUDA_ERROR_NOT_SUPPORTED, a message on stderr) */
CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags);
CUresult CUDAAPI cuMemHostUnregister(void *p);
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult CUDAAPI cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N);
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N);
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				 CUstream hStream);
CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
				  CUstream hStream);
CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
				  CUstream hStream);

/* ---- Streams and events ---- */
CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
					    int priority);
CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority);
CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags);
CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult CUDAAPI cuStreamQuery(CUstream hStream);
CUresult CUDAAPI cuStreamSynchronize(CUstream hStream);
CUresult CUDAAPI cuStreamDestroy(CUstream hStream);
CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId);
/* stream capture (CUDA graphs): refused, CUDA_ERROR_NOT_SUPPORTED */
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus);
/* run on the calling thread once the stream's earlier work has completed */
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback,
				     void *userData, unsigned int flags);
CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags);
CUresult CUDAAPI cuEventQuery(CUevent hEvent);
CUresult CUDAAPI cuEventSynchronize(CUevent hEvent);
CUresult CUDAAPI cuEventDestroy(CUevent hEvent);
CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);

/* ---- Launches ---- */
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				unsigned int gridDimZ, unsigned int blockDimX,
				unsigned int blockDimY, unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				  void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					   unsigned int gridDimY, unsigned int gridDimZ,
					   unsigned int blockDimX, unsigned int blockDimY,
					   unsigned int blockDimZ, unsigned int sharedMemBytes,
					   CUstream hStream, void **kernelParams);

/* ---- Occupancy: CUDA's arithmetic over the device's limits (docs/cuda.md) ---- */
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
							     int blockSize,
							     size_t dynamicSMemSize);
CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks,
								      CUfunction func,
								      int blockSize,
								      size_t dynamicSMemSize,
								      unsigned int flags);
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
						  CUfunction func,
						  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
						  size_t dynamicSMemSize, int blockSizeLimit);
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize,
							   CUfunction func,
							   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
							   size_t dynamicSMemSize, int blockSizeLimit,
							   unsigned int flags);
CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func,
							 int numBlocks, int blockSize);
CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
						    const CUlaunchConfig *config);
CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
					      const CUlaunchConfig *config);

/* ---- Tensor maps ---- */
CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap,
					CUtensorMapDataType tensorDataType,
					cuuint32_t tensorRank, void *globalAddress,
					const cuuint64_t *globalDim,
					const cuuint64_t *globalStrides,
					const cuuint32_t *boxDim,
					const cuuint32_t *elementStrides,
					CUtensorMapInterleave interleave,
					CUtensorMapSwizzle swizzle,
					CUtensorMapL2promotion l2Promotion,
					CUtensorMapFloatOOBfill oobFill);
/* refused: CUDA_ERROR_NOT_SUPPORTED, with a message on stderr */
CUresult CUDAAPI cuTensorMapEncodeIm2col(CUtensorMap *tensorMap,
					 CUtensorMapDataType tensorDataType,
					 cuuint32_t tensorRank, void *globalAddress,
					 const cuuint64_t *globalDim,
					 const cuuint64_t *globalStrides,
					 const int *pixelBoxLowerCorner,
					 const int *pixelBoxUpperCorner,
					 cuuint32_t channelsPerPixel,
					 cuuint32_t pixelsPerColumn,
					 const cuuint32_t *elementStrides,
					 CUtensorMapInterleave interleave,
					 CUtensorMapSwizzle swizzle,
					 CUtensorMapL2promotion l2Promotion,
					 CUtensorMapFloatOOBfill oobFill);

/* ---- Multicast objects (cuMulticast*: docs/cuda.md) ---- */
CUresult CUDAAPI cuMulticastCreate(CUmemGenericAllocationHandle *mcHandle,
				   const CUmulticastObjectProp *prop);
CUresult CUDAAPI cuMulticastAddDevice(CUmemGenericAllocationHandle mcHandle, CUdevice dev);
CUresult CUDAAPI cuMulticastBindMem(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
				    CUmemGenericAllocationHandle memHandle, size_t memOffset,
				    size_t size, unsigned long long flags);
CUresult CUDAAPI cuMulticastBindAddr(CUmemGenericAllocationHandle mcHandle, size_t mcOffset,
				     CUdeviceptr memptr, size_t size, unsigned long long flags);
CUresult CUDAAPI cuMulticastUnbind(CUmemGenericAllocationHandle mcHandle, CUdevice dev,
				   size_t mcOffset, size_t size);
CUresult CUDAAPI cuMulticastGetGranularity(size_t *granularity, const CUmulticastObjectProp *prop,
					   CUmulticastGranularity_flags option);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* __cuda_cuda_h__ */
