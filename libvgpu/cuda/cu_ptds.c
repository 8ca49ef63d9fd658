// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: the per-thread-default-stream entry points.  A program
 * compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM (nvcc --default-stream
 * per-thread) calls cuLaunchKernel_ptsz, cuMemcpyHtoD_v2_ptds, ...: the
 * same functions, where the NULL stream means the calling thread's
 * default stream (CU_STREAM_PER_THREAD: a blocking stream of its own,
 * cu_stream.c) instead of the legacy one.  The _ptds copies and memsets
 * are the synchronous ones, ordered on that stream.
 */
#include <string.h>

#include "cuda_priv.h"

static CUstream pt(CUstream s)
{
	return s ? s : CU_STREAM_PER_THREAD;
}

/* a prototype (-Wmissing-prototypes) and the definition */
#define PTSZ(ret, name, params, call)   \
	CUV_EXPORT ret CUDAAPI name params; \
	ret CUDAAPI name params             \
	{                             \
		return call;          \
	}

PTSZ(CUresult, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
     cuMemcpyAsync(dst, src, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void *src, size_t n),
     cuMemcpyHtoDAsync(dst, src, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemcpyDtoH_v2_ptds, (void *dst, CUdeviceptr src, size_t n),
     cuMemcpyDtoHAsync(dst, src, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
     cuMemcpyDtoDAsync(dst, src, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemsetD8_v2_ptds, (CUdeviceptr d, unsigned char v, size_t n),
     cuMemsetD8Async(d, v, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemsetD16_v2_ptds, (CUdeviceptr d, unsigned short v, size_t n),
     cuMemsetD16Async(d, v, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemsetD32_v2_ptds, (CUdeviceptr d, unsigned int v, size_t n),
     cuMemsetD32Async(d, v, n, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemcpyAsync_ptsz, (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),
     cuMemcpyAsync(dst, src, n, pt(s)))
PTSZ(CUresult, cuMemcpyHtoDAsync_v2_ptsz,
     (CUdeviceptr dst, const void *src, size_t n, CUstream s),
     cuMemcpyHtoDAsync(dst, src, n, pt(s)))
PTSZ(CUresult, cuMemcpyDtoHAsync_v2_ptsz, (void *dst, CUdeviceptr src, size_t n, CUstream s),
     cuMemcpyDtoHAsync(dst, src, n, pt(s)))
PTSZ(CUresult, cuMemcpyDtoDAsync_v2_ptsz,
     (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s),
     cuMemcpyDtoDAsync(dst, src, n, pt(s)))
PTSZ(CUresult, cuMemsetD8Async_ptsz, (CUdeviceptr d, unsigned char v, size_t n, CUstream s),
     cuMemsetD8Async(d, v, n, pt(s)))
PTSZ(CUresult, cuMemsetD16Async_ptsz, (CUdeviceptr d, unsigned short v, size_t n, CUstream s),
     cuMemsetD16Async(d, v, n, pt(s)))
PTSZ(CUresult, cuMemsetD32Async_ptsz, (CUdeviceptr d, unsigned int v, size_t n, CUstream s),
     cuMemsetD32Async(d, v, n, pt(s)))
PTSZ(CUresult, cuStreamGetPriority_ptsz, (CUstream s, int *p), cuStreamGetPriority(pt(s), p))
PTSZ(CUresult, cuStreamGetFlags_ptsz, (CUstream s, unsigned int *f), cuStreamGetFlags(pt(s), f))
PTSZ(CUresult, cuStreamGetId_ptsz, (CUstream s, unsigned long long *id),
     cuStreamGetId(pt(s), id))
PTSZ(CUresult, cuStreamGetCtx_ptsz, (CUstream s, CUcontext *c), cuStreamGetCtx(pt(s), c))
PTSZ(CUresult, cuStreamWaitEvent_ptsz, (CUstream s, CUevent e, unsigned int f),
     cuStreamWaitEvent(pt(s), e, f))
PTSZ(CUresult, cuStreamAddCallback_ptsz,
     (CUstream s, CUstreamCallback cb, void *data, unsigned int f),
     cuStreamAddCallback(pt(s), cb, data, f))
PTSZ(CUresult, cuStreamQuery_ptsz, (CUstream s), cuStreamQuery(pt(s)))
PTSZ(CUresult, cuStreamSynchronize_ptsz, (CUstream s), cuStreamSynchronize(pt(s)))
PTSZ(CUresult, cuEventRecord_ptsz, (CUevent e, CUstream s), cuEventRecord(e, pt(s)))
PTSZ(CUresult, cuLaunchHostFunc_ptsz, (CUstream s, CUhostFn fn, void *data),
     cuLaunchHostFunc(pt(s), fn, data))
PTSZ(CUresult, cuLaunchKernel_ptsz,
     (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
      unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void **params,
      void **extra),
     cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, pt(s), params, extra))
PTSZ(CUresult, cuLaunchCooperativeKernel_ptsz,
     (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
      unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void **params),
     cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, smem, pt(s), params))

PTSZ(CUresult, cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *c),
     cuMemcpy2DAsync(c, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *c),
     cuMemcpy2DAsync(c, CU_STREAM_PER_THREAD))
PTSZ(CUresult, cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *c, CUstream s),
     cuMemcpy2DAsync(c, pt(s)))
PTSZ(CUresult, cuMemAllocAsync_ptsz, (CUdeviceptr *d, size_t n, CUstream s),
     cuMemAllocAsync(d, n, pt(s)))
PTSZ(CUresult, cuMemFreeAsync_ptsz, (CUdeviceptr d, CUstream s), cuMemFreeAsync(d, pt(s)))
PTSZ(CUresult, cuEventRecordWithFlags_ptsz, (CUevent e, CUstream s, unsigned int f),
     cuEventRecordWithFlags(e, pt(s), f))
PTSZ(CUresult, cuStreamBeginCapture_v2_ptsz, (CUstream s, CUstreamCaptureMode m),
     cuStreamBeginCapture(pt(s), m))
PTSZ(CUresult, cuStreamEndCapture_ptsz, (CUstream s, CUgraph *g), cuStreamEndCapture(pt(s), g))
PTSZ(CUresult, cuStreamIsCapturing_ptsz, (CUstream s, CUstreamCaptureStatus *st),
     cuStreamIsCapturing(pt(s), st))

CUV_EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
						  void **kernelParams, void **extra);
CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
				       void **kernelParams, void **extra)
{
	CUlaunchConfig c;

	if (!config)
		return CUDA_ERROR_INVALID_VALUE;
	c = *config;
	c.hStream = pt(c.hStream);
	return cuLaunchKernelEx(&c, f, kernelParams, extra);
}

#define ENTRY(api, fn) { #api, (void *)fn },
static const struct {
	const char *name;
	void *fn;
} ptds_entry_points[] = {
	ENTRY(cuMemcpy, cuMemcpy_ptds) ENTRY(cuMemcpyHtoD, cuMemcpyHtoD_v2_ptds)
	ENTRY(cuMemcpyDtoH, cuMemcpyDtoH_v2_ptds) ENTRY(cuMemcpyDtoD, cuMemcpyDtoD_v2_ptds)
	ENTRY(cuMemsetD8, cuMemsetD8_v2_ptds) ENTRY(cuMemsetD16, cuMemsetD16_v2_ptds)
	ENTRY(cuMemsetD32, cuMemsetD32_v2_ptds) ENTRY(cuMemcpyAsync, cuMemcpyAsync_ptsz)
	ENTRY(cuMemcpyHtoDAsync, cuMemcpyHtoDAsync_v2_ptsz)
	ENTRY(cuMemcpyDtoHAsync, cuMemcpyDtoHAsync_v2_ptsz)
	ENTRY(cuMemcpyDtoDAsync, cuMemcpyDtoDAsync_v2_ptsz)
	ENTRY(cuMemsetD8Async, cuMemsetD8Async_ptsz) ENTRY(cuMemsetD16Async, cuMemsetD16Async_ptsz)
	ENTRY(cuMemsetD32Async, cuMemsetD32Async_ptsz)
	ENTRY(cuStreamGetPriority, cuStreamGetPriority_ptsz)
	ENTRY(cuStreamGetFlags, cuStreamGetFlags_ptsz) ENTRY(cuStreamGetId, cuStreamGetId_ptsz)
	ENTRY(cuStreamGetCtx, cuStreamGetCtx_ptsz) ENTRY(cuStreamWaitEvent, cuStreamWaitEvent_ptsz)
	ENTRY(cuStreamAddCallback, cuStreamAddCallback_ptsz)
	ENTRY(cuStreamQuery, cuStreamQuery_ptsz)
	ENTRY(cuStreamSynchronize, cuStreamSynchronize_ptsz)
	ENTRY(cuEventRecord, cuEventRecord_ptsz) ENTRY(cuLaunchHostFunc, cuLaunchHostFunc_ptsz)
	ENTRY(cuLaunchKernel, cuLaunchKernel_ptsz)
	ENTRY(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz)
	ENTRY(cuLaunchKernelEx, cuLaunchKernelEx_ptsz) ENTRY(cuMemcpy2D, cuMemcpy2D_v2_ptds)
	ENTRY(cuMemcpy2DUnaligned, cuMemcpy2DUnaligned_v2_ptds)
	ENTRY(cuMemcpy2DAsync, cuMemcpy2DAsync_v2_ptsz) ENTRY(cuMemAllocAsync, cuMemAllocAsync_ptsz)
	ENTRY(cuMemFreeAsync, cuMemFreeAsync_ptsz)
	ENTRY(cuEventRecordWithFlags, cuEventRecordWithFlags_ptsz)
	ENTRY(cuStreamBeginCapture, cuStreamBeginCapture_v2_ptsz)
	ENTRY(cuStreamEndCapture, cuStreamEndCapture_ptsz)
	ENTRY(cuStreamIsCapturing, cuStreamIsCapturing_ptsz)
};

void *cuv_ptds_entry(const char *api_name)
{
	for (size_t i = 0; i < sizeof(ptds_entry_points) / sizeof(ptds_entry_points[0]); i++)
		if (!strcmp(api_name, ptds_entry_points[i].name))
			return ptds_entry_points[i].fn;
	return NULL;
}
