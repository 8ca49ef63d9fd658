// SPDX-License-Identifier: MIT
/*
 * libcudart.so.13: the per-thread-default-stream forms a program built
 * with `nvcc --default-stream per-thread` imports (CUDA's headers map
 * cudaMemcpy to cudaMemcpy_ptds, cudaMemcpyAsync to cudaMemcpyAsync_ptsz,
 * ...).  In them the NULL stream is the calling thread's default stream
 * (cudaStreamPerThread, libcuda's CU_STREAM_PER_THREAD); the synchronous
 * forms run on it and wait for it.
 */
#include "cudart.h"

#define PT(s) ((s) ? (s) : CU_STREAM_PER_THREAD)

CRT_EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count,
				       enum cudaMemcpyKind kind);
CRT_EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
					    enum cudaMemcpyKind kind, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count);
CRT_EXPORT cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count,
					    cudaStream_t stream);
CRT_EXPORT cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src,
					       size_t count, size_t offset,
					       enum cudaMemcpyKind kind);
CRT_EXPORT cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count,
						 size_t offset, enum cudaMemcpyKind kind);
CRT_EXPORT cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src,
						    size_t count, size_t offset,
						    enum cudaMemcpyKind kind, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol,
						      size_t count, size_t offset,
						      enum cudaMemcpyKind kind,
						      cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event,
						unsigned int flags);
CRT_EXPORT cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t stream, int *priority);
CRT_EXPORT cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned int *flags);
CRT_EXPORT cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t cb,
						  void *userData, unsigned int flags);
CRT_EXPORT cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn,
					       void *userData);
CRT_EXPORT cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
						     unsigned int flags);
CRT_EXPORT cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config,
						const void *func, void **args);
CRT_EXPORT cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim,
							dim3 blockDim, void **args,
							size_t sharedMem, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
							     unsigned int cudaVersion,
							     unsigned long long flags,
							     int *driverStatus);
CRT_EXPORT cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
						    unsigned long long flags, int *driverStatus);

/* a synchronous call's work, then a wait for the thread's stream */
static cudaError_t sync_pt(cudaError_t e)
{
	return e ? e : cudaStreamSynchronize(CU_STREAM_PER_THREAD);
}

cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return sync_pt(cudaMemcpyAsync(dst, src, count, kind, CU_STREAM_PER_THREAD));
}

cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t count,
				 enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return cudaMemcpyAsync(dst, src, count, kind, PT(stream));
}

cudaError_t cudaMemset_ptds(void *devPtr, int value, size_t count)
{
	return sync_pt(cudaMemsetAsync(devPtr, value, count, CU_STREAM_PER_THREAD));
}

cudaError_t cudaMemsetAsync_ptsz(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	return cudaMemsetAsync(devPtr, value, count, PT(stream));
}

cudaError_t cudaMemcpyToSymbol_ptds(const void *symbol, const void *src, size_t count,
				    size_t offset, enum cudaMemcpyKind kind)
{
	return sync_pt(cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind,
					       CU_STREAM_PER_THREAD));
}

cudaError_t cudaMemcpyFromSymbol_ptds(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind)
{
	return sync_pt(cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind,
						 CU_STREAM_PER_THREAD));
}

cudaError_t cudaMemcpyToSymbolAsync_ptsz(const void *symbol, const void *src, size_t count,
					 size_t offset, enum cudaMemcpyKind kind,
					 cudaStream_t stream)
{
	return cudaMemcpyToSymbolAsync(symbol, src, count, offset, kind, PT(stream));
}

cudaError_t cudaMemcpyFromSymbolAsync_ptsz(void *dst, const void *symbol, size_t count,
					   size_t offset, enum cudaMemcpyKind kind,
					   cudaStream_t stream)
{
	return cudaMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, PT(stream));
}

cudaError_t cudaStreamSynchronize_ptsz(cudaStream_t stream)
{
	return cudaStreamSynchronize(PT(stream));
}

cudaError_t cudaStreamQuery_ptsz(cudaStream_t stream)
{
	return cudaStreamQuery(PT(stream));
}

cudaError_t cudaStreamWaitEvent_ptsz(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	return cudaStreamWaitEvent(PT(stream), event, flags);
}

cudaError_t cudaStreamGetPriority_ptsz(cudaStream_t stream, int *priority)
{
	return cudaStreamGetPriority(PT(stream), priority);
}

cudaError_t cudaStreamGetFlags_ptsz(cudaStream_t stream, unsigned int *flags)
{
	return cudaStreamGetFlags(PT(stream), flags);
}

cudaError_t cudaStreamAddCallback_ptsz(cudaStream_t stream, cudaStreamCallback_t cb,
				       void *userData, unsigned int flags)
{
	return cudaStreamAddCallback(PT(stream), cb, userData, flags);
}

cudaError_t cudaLaunchHostFunc_ptsz(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	return cudaLaunchHostFunc(PT(stream), fn, userData);
}

cudaError_t cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream)
{
	return cudaEventRecord(event, PT(stream));
}

cudaError_t cudaEventRecordWithFlags_ptsz(cudaEvent_t event, cudaStream_t stream,
					  unsigned int flags)
{
	return cudaEventRecordWithFlags(event, PT(stream), flags);
}

cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *config, const void *func,
				     void **args)
{
	cudaLaunchConfig_t c;

	if (!config)
		return cudaLaunchKernelExC(config, func, args);
	c = *config;
	c.stream = PT(c.stream);
	return cudaLaunchKernelExC(&c, func, args);
}

cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream)
{
	return cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, PT(stream));
}

/* the per-thread forms of the driver's entry points, unless the caller chose */
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr,
						  unsigned int cudaVersion,
						  unsigned long long flags, int *driverStatus)
{
	if (!flags)
		flags = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
	return cudaGetDriverEntryPointByVersion(symbol, funcPtr, cudaVersion, flags,
						driverStatus);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr,
					 unsigned long long flags, int *driverStatus)
{
	return cudaGetDriverEntryPointByVersion_ptsz(symbol, funcPtr, 13000, flags,
						     driverStatus);
}
