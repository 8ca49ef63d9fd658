// SPDX-License-Identifier: MIT
/*
 * libcudart.so.13: the runtime API over the driver API (libcuda.so.1).
 *
 * The runtime's device is a CUdevice; its context is the device's primary
 * context, retained on first use and made current on the calling thread
 * by every call that needs one (crt_ctx).  Streams and events are the
 * driver's handles.  Each call's error is the driver's code where the two
 * APIs share a number (they do for every code libcuda returns), recorded
 * as the thread's last error, which cudaGetLastError returns and clears.
 * A device exception is sticky in the driver: every later call returns it
 * (and records it again); after cudaDeviceReset the device cannot be used
 * again by the process (cudaErrorDevicesUnavailable).  All of it as NVIDIA's
 * runtime 13 answers on the H200 (tests/cuda/real-gpu/probe_rt_sticky.cu
 * and its log).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart.h"
#include "thread_block.h"

static pthread_mutex_t crt_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t crt_once = PTHREAD_ONCE_INIT;
static CUresult crt_init_result;
static int crt_ndev;
CUcontext crt_primary[CRT_MAX_DEVICES];

/* ---- the threads' blocks (cudart.h, crt_self) ---- */

VGPU_THREAD_BLOCKS(crt_thread, crt_tls, crt_thread_none, crt_thread_new, NULL)

/* ---- warnings, the context ---- */

void crt_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("libcudart (vGPU): ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void crt_init(void)
{
	crt_init_result = cuInit(0);
	if (!crt_init_result)
		crt_init_result = cuDeviceGetCount(&crt_ndev);
	if (!crt_init_result && crt_ndev > CRT_MAX_DEVICES)
		crt_ndev = CRT_MAX_DEVICES;
}

static CUresult crt_init_once(void)
{
	pthread_once(&crt_once, crt_init);
	return crt_init_result;
}

/* Device exceptions: the context keeps them; so does the last error. */
static bool sticky(cudaError_t e)
{
	switch (e) {
	case cudaErrorIllegalAddress:
	case cudaErrorLaunchTimeout:
	case cudaErrorAssert:
	case cudaErrorHardwareStackError:
	case cudaErrorIllegalInstruction:
	case cudaErrorMisalignedAddress:
	case cudaErrorInvalidAddressSpace:
	case cudaErrorInvalidPc:
	case cudaErrorLaunchFailure:
		return true;
	default:
		return false;
	}
}

CRT_HOT
cudaError_t crt_set_error(cudaError_t e)
{
	if (e != cudaSuccess) {
		struct crt_thread *t = crt_self();

		if (crt_thread_writable(t))
			t->last = e;
	}
	return e;
}

CRT_HOT
cudaError_t crt_err(CUresult r)
{
	/* CUDA_ERROR_NOT_INITIALIZED and _INVALID_CONTEXT cannot reach a
	 * program through the runtime, which initialises and makes current */
	return crt_set_error((cudaError_t)r);
}

cudaError_t crt_ctx(void)
{
	int dev = crt_self()->device;
	CUcontext cur = NULL, ctx;
	CUresult r;

	/* the device's primary context is current already: every launch */
	if (dev >= 0 && dev < CRT_MAX_DEVICES) {
		ctx = __atomic_load_n(&crt_primary[dev], __ATOMIC_ACQUIRE);
		if (ctx && !cuCtxGetCurrent(&cur) && cur == ctx)
			return cudaSuccess;
	}
	r = crt_init_once();
	if (r == CUDA_ERROR_NO_DEVICE || (!r && !crt_ndev))
		return crt_set_error(cudaErrorNoDevice);
	if (r)
		return crt_set_error(cudaErrorInitializationError);
	if (dev < 0 || dev >= crt_ndev)
		return crt_set_error(cudaErrorInvalidDevice);
	pthread_mutex_lock(&crt_lock);
	ctx = crt_primary[dev];
	if (!ctx) {
		r = cuDevicePrimaryCtxRetain(&ctx, dev);
		if (!r)
			__atomic_store_n(&crt_primary[dev], ctx, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&crt_lock);
	/* a new primary context after a fault and a reset: the device is
	 * lost to this process (NVIDIA's runtime: DevicesUnavailable) */
	if (r && sticky((cudaError_t)r))
		return crt_set_error(cudaErrorDevicesUnavailable);
	if (r)
		return crt_err(r);
	cuCtxGetCurrent(&cur);
	if (cur != ctx) {
		r = cuCtxSetCurrent(ctx);
		if (r)
			return crt_err(r);
	}
	return cudaSuccess;
}

/* ---- errors ---- */

cudaError_t cudaGetLastError(void)
{
	struct crt_thread *t = crt_self();
	cudaError_t e = t->last;

	if (crt_thread_writable(t))
		t->last = cudaSuccess;
	return e;
}

cudaError_t cudaPeekAtLastError(void)
{
	return crt_self()->last;
}

static const struct {
	int code;
	const char *name, *text;
} crt_errors[] = {
	{ 0, "cudaSuccess", "no error" },
	{ 1, "cudaErrorInvalidValue", "invalid argument" },
	{ 2, "cudaErrorMemoryAllocation", "out of memory" },
	{ 3, "cudaErrorInitializationError", "initialization error" },
	{ 4, "cudaErrorCudartUnloading", "driver shutting down" },
	{ 9, "cudaErrorInvalidConfiguration", "invalid configuration argument" },
	{ 12, "cudaErrorInvalidPitchValue", "invalid pitch argument" },
	{ 13, "cudaErrorInvalidSymbol", "invalid device symbol" },
	{ 17, "cudaErrorInvalidDevicePointer", "invalid device pointer" },
	{ 21, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy" },
	{ 34, "cudaErrorStubLibrary", "CUDA driver is a stub library" },
	{ 35, "cudaErrorInsufficientDriver", "CUDA driver version is insufficient" },
	{ 46, "cudaErrorDevicesUnavailable", "CUDA-capable device(s) is/are busy or unavailable" },
	{ 52, "cudaErrorMissingConfiguration", "__global__ function call is not configured" },
	{ 98, "cudaErrorInvalidDeviceFunction", "invalid device function" },
	{ 100, "cudaErrorNoDevice", "no CUDA-capable device is detected" },
	{ 101, "cudaErrorInvalidDevice", "invalid device ordinal" },
	{ 200, "cudaErrorInvalidKernelImage", "device kernel image is invalid" },
	{ 201, "cudaErrorDeviceUninitialized", "invalid device context" },
	{ 209, "cudaErrorNoKernelImageForDevice",
	  "no kernel image is available for execution on the device" },
	{ 215, "cudaErrorUnsupportedLimit", "limit is not supported on this architecture" },
	{ 218, "cudaErrorInvalidPtx", "a PTX JIT compilation failed" },
	{ 222, "cudaErrorUnsupportedPtxVersion", "the provided PTX was compiled with an "
						 "unsupported toolchain" },
	{ 300, "cudaErrorInvalidSource", "device kernel image is invalid" },
	{ 301, "cudaErrorFileNotFound", "file not found" },
	{ 400, "cudaErrorInvalidResourceHandle", "invalid resource handle" },
	{ 401, "cudaErrorIllegalState", "the operation cannot be performed in the present state" },
	{ 500, "cudaErrorSymbolNotFound", "named symbol not found" },
	{ 600, "cudaErrorNotReady", "device not ready" },
	{ 700, "cudaErrorIllegalAddress", "an illegal memory access was encountered" },
	{ 701, "cudaErrorLaunchOutOfResources", "too many resources requested for launch" },
	{ 702, "cudaErrorLaunchTimeout", "the launch timed out and was terminated" },
	{ 709, "cudaErrorContextIsDestroyed", "context is destroyed" },
	{ 710, "cudaErrorAssert", "device-side assert triggered" },
	{ 714, "cudaErrorHardwareStackError", "hardware stack error" },
	{ 715, "cudaErrorIllegalInstruction", "an illegal instruction was encountered" },
	{ 716, "cudaErrorMisalignedAddress", "misaligned address" },
	{ 717, "cudaErrorInvalidAddressSpace", "operation not supported on global/shared "
					       "address space" },
	{ 718, "cudaErrorInvalidPc", "invalid program counter" },
	{ 719, "cudaErrorLaunchFailure", "unspecified launch failure" },
	{ 720, "cudaErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch" },
	{ 800, "cudaErrorNotPermitted", "operation not permitted" },
	{ 801, "cudaErrorNotSupported", "operation not supported" },
	{ 900, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is "
						    "capturing" },
	{ 912, "cudaErrorInvalidClusterSize", "invalid cluster size" },
	{ 999, "cudaErrorUnknown", "unknown error" },
};

const char *cudaGetErrorName(cudaError_t error)
{
	for (size_t i = 0; i < sizeof(crt_errors) / sizeof(crt_errors[0]); i++)
		if (crt_errors[i].code == (int)error)
			return crt_errors[i].name;
	return "unrecognized error code";
}

const char *cudaGetErrorString(cudaError_t error)
{
	for (size_t i = 0; i < sizeof(crt_errors) / sizeof(crt_errors[0]); i++)
		if (crt_errors[i].code == (int)error)
			return crt_errors[i].text;
	return "unrecognized error code";
}

/* ---- versions and devices ---- */

cudaError_t cudaDriverGetVersion(int *version)
{
	if (!version)
		return crt_set_error(cudaErrorInvalidValue);
	*version = 13000;
	return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *version)
{
	return cudaDriverGetVersion(version);
}

cudaError_t cudaGetDeviceCount(int *count)
{
	CUresult r;

	if (!count)
		return crt_set_error(cudaErrorInvalidValue);
	r = crt_init_once();
	*count = r ? 0 : crt_ndev;
	if (r == CUDA_ERROR_NO_DEVICE || (!r && !crt_ndev))
		return crt_set_error(cudaErrorNoDevice);
	return r ? crt_set_error(cudaErrorInitializationError) : cudaSuccess;
}

cudaError_t cudaSetDevice(int device)
{
	struct crt_thread *t;
	int n;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e)
		return e;
	if (device < 0 || device >= n)
		return crt_set_error(cudaErrorInvalidDevice);
	t = crt_self();
	if (!crt_thread_writable(t))
		return cudaErrorMemoryAllocation;
	t->device = device;
	return crt_ctx();
}

cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags)
{
	return cudaSetDevice(device);
}

cudaError_t cudaGetDevice(int *device)
{
	if (!device)
		return crt_set_error(cudaErrorInvalidValue);
	*device = crt_self()->device;
	return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuDevicePrimaryCtxSetFlags(crt_self()->device, flags & 0xff));
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr_t attr, int device)
{
	int n;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e)
		return e;
	if (!value)
		return crt_set_error(cudaErrorInvalidValue);
	if (device < 0 || device >= n)
		return crt_set_error(cudaErrorInvalidDevice);
	return crt_err(cuDeviceGetAttribute(value, (CUdevice_attribute)attr, device));
}

static int attr(CUdevice_attribute a, CUdevice dev)
{
	int v = 0;

	cuDeviceGetAttribute(&v, a, dev);
	return v;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
	int n;
	size_t mem = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e)
		return e;
	if (!p)
		return crt_set_error(cudaErrorInvalidValue);
	if (device < 0 || device >= n)
		return crt_set_error(cudaErrorInvalidDevice);
	memset(p, 0, sizeof(*p));
	cuDeviceGetName(p->name, sizeof(p->name), device);
	cuDeviceGetUuid((CUuuid *)&p->uuid, device);
	cuDeviceTotalMem(&mem, device);
	p->totalGlobalMem = mem;
	p->sharedMemPerBlock = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, device);
	p->regsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, device);
	p->warpSize = attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE, device);
	p->memPitch = (size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_PITCH, device);
	p->maxThreadsPerBlock = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device);
	p->maxThreadsDim[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, device);
	p->maxThreadsDim[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, device);
	p->maxThreadsDim[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, device);
	p->maxGridSize[0] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, device);
	p->maxGridSize[1] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, device);
	p->maxGridSize[2] = attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, device);
	p->totalConstMem = (size_t)attr(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, device);
	p->major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
	p->minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
	p->textureAlignment = 512;
	p->texturePitchAlignment = 32;
	p->multiProcessorCount = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
	p->canMapHostMemory = attr(CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, device);
	p->concurrentKernels = attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, device);
	p->pciBusID = attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device);
	p->pciDeviceID = attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device);
	p->pciDomainID = attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device);
	p->asyncEngineCount = attr(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, device);
	p->unifiedAddressing = attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, device);
	p->managedMemory = attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, device);
	p->memoryBusWidth = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, device);
	p->maxThreadsPerMultiProcessor =
		attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, device);
	p->streamPrioritiesSupported = attr(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, device);
	p->sharedMemPerMultiprocessor =
		(size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, device);
	p->regsPerMultiprocessor = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, device);
	p->computePreemptionSupported =
		attr(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, device);
	p->cooperativeLaunch = attr(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, device);
	p->sharedMemPerBlockOptin =
		(size_t)attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device);
	p->maxBlocksPerMultiProcessor =
		attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, device);
	p->reservedSharedMemPerBlock =
		(size_t)attr(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, device);
	p->clusterLaunch = attr(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, device);
	p->deviceNumaId = -1;
	p->hostNumaId = -1;
	return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device)
{
	return cudaGetDeviceProperties(prop, device);
}

cudaError_t cudaDeviceSynchronize(void)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuCtxSynchronize());
}

/*
 * The primary context's contents go, and the runtime's reference to it: the
 * next call retains it again, as NVIDIA's runtime does.  A device exception
 * stays, as in CUDA (the driver's sticky error is the process's): the next
 * call that needs the device returns it again.
 */
cudaError_t cudaDeviceReset(void)
{
	cudaError_t e = crt_ctx();
	int dev = crt_self()->device;
	CUcontext ctx;
	CUresult r;

	if (e && e != cudaErrorNoDevice && e != cudaErrorInvalidDevice && !sticky(e))
		return e;
	if (crt_init_once())
		return crt_set_error(cudaErrorInitializationError);
	/* the last error stays (NVIDIA's runtime keeps it across the reset) */
	r = cuDevicePrimaryCtxReset(dev);
	if (r)
		return crt_err(r);
	pthread_mutex_lock(&crt_lock);
	ctx = crt_primary[dev];
	__atomic_store_n(&crt_primary[dev], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&crt_lock);
	if (ctx) {
		CUcontext cur = NULL;

		cuCtxGetCurrent(&cur);
		if (cur == ctx)
			cuCtxSetCurrent(NULL);
		cuDevicePrimaryCtxRelease(dev);
	}
	return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuCtxGetStreamPriorityRange(least, greatest));
}

cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit_t limit)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuCtxGetLimit(value, (CUlimit)limit));
}

cudaError_t cudaDeviceSetLimit(cudaLimit_t limit, size_t value)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuCtxSetLimit((CUlimit)limit, value));
}

cudaError_t cudaDeviceSetCacheConfig(int cacheConfig)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuCtxSetCacheConfig((CUfunc_cache)cacheConfig));
}

/*
 * The driver's entry points (CCCL's TMA helpers take cuTensorMapEncodeTiled
 * this way): cuGetProcAddress of libcuda.so.1.  The flags and the query
 * result have the driver's values.
 */
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
					     unsigned int cudaVersion, unsigned long long flags,
					     int *driverStatus)
{
	CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SUCCESS;
	cudaError_t e;

	if (!symbol || !funcPtr)
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	if (e)
		return e;
	e = crt_err(cuGetProcAddress(symbol, funcPtr, (int)cudaVersion, flags, &q));
	if (driverStatus)
		*driverStatus = (int)q;
	return e;
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
				    int *driverStatus)
{
	return cudaGetDriverEntryPointByVersion(symbol, funcPtr, 13000, flags, driverStatus);
}

/* ---- memory ---- */

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	CUdeviceptr p = 0;
	cudaError_t e;

	if (!devPtr)
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	if (e)
		return e;
	if (!size) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	e = crt_err(cuMemAlloc(&p, size));
	if (e == cudaErrorInvalidValue)
		e = crt_set_error(cudaErrorMemoryAllocation);
	*devPtr = e ? NULL : (void *)(uintptr_t)p;
	return e;
}

cudaError_t cudaFree(void *devPtr)
{
	cudaError_t e = crt_ctx();

	if (e || !devPtr)
		return e;
	return crt_err(cuMemFree((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags)
{
	cudaError_t e;

	if (!ptr)
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	return e ? e : crt_err(cuMemHostAlloc(ptr, size, flags));
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	return cudaHostAlloc(ptr, size, 0);
}

cudaError_t cudaFreeHost(void *ptr)
{
	cudaError_t e = crt_ctx();

	if (e || !ptr)
		return e;
	return crt_err(cuMemFreeHost(ptr));
}

cudaError_t cudaHostGetDevicePointer(void **devPtr, void *host, unsigned int flags)
{
	CUdeviceptr p = 0;
	cudaError_t e;

	if (!devPtr)
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	if (!e)
		e = crt_err(cuMemHostGetDevicePointer(&p, host, flags));
	*devPtr = e ? NULL : (void *)(uintptr_t)p;
	return e;
}

/*
 * Device memory mapped on the host at its device address (cuMemAllocManaged):
 * the one pointer works in kernels and on the host, which sees what kernels
 * wrote after cudaDeviceSynchronize (or any wait for them).
 */
cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags)
{
	CUdeviceptr p = 0;
	cudaError_t e;

	if (!devPtr)
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	if (e)
		return e;
	/* CUDA 13's runtime on the H200 (tests/cuda/real-gpu/probe_managed):
	 * a size of 0 succeeds, as cudaMalloc's, unlike the driver's call */
	if (!size && (flags == CU_MEM_ATTACH_GLOBAL || flags == CU_MEM_ATTACH_HOST)) {
		*devPtr = NULL;
		return cudaSuccess;
	}
	e = crt_err(cuMemAllocManaged(&p, size, flags));
	*devPtr = e ? NULL : (void *)(uintptr_t)p;
	return e;
}

cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuMemGetInfo(free_bytes, total));
}

/*
 * Every kind goes to cuMemcpy, which tells device memory (an allocation
 * of the context) from host memory itself: Default as CUDA's unified
 * addressing does; the explicit kinds take the same path (a wrong kind
 * with the right pointers works, as it does on NVIDIA's GPUs).
 */
static cudaError_t memcpy_kind(void *dst, const void *src, size_t count,
			       enum cudaMemcpyKind kind, cudaStream_t stream, bool async)
{
	cudaError_t e;

	if ((unsigned int)kind > cudaMemcpyDefault)
		return crt_set_error(cudaErrorInvalidMemcpyDirection);
	if (count && (!dst || !src))
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	if (e || !count)
		return e;
	if (async)
		return crt_err(cuMemcpyAsync((CUdeviceptr)(uintptr_t)dst,
					     (CUdeviceptr)(uintptr_t)src, count, stream));
	return crt_err(cuMemcpy((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src, count));
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	return memcpy_kind(dst, src, count, kind, NULL, false);
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			    cudaStream_t stream)
{
	return memcpy_kind(dst, src, count, kind, stream, true);
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuMemsetD8((CUdeviceptr)(uintptr_t)devPtr, (unsigned char)value,
					  count));
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	cudaError_t e = crt_ctx();

	return e ? e : crt_err(cuMemsetD8Async((CUdeviceptr)(uintptr_t)devPtr,
					       (unsigned char)value, count, stream));
}

/* ---- streams ---- */

cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags, int priority)
{
	cudaError_t e;

	if (!stream)
		return crt_set_error(cudaErrorInvalidValue);
	e = crt_ctx();
	return e ? e : crt_err(cuStreamCreateWithPriority(stream, flags, priority));
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags)
{
	return cudaStreamCreateWithPriority(stream, flags, 0);
}

cudaError_t cudaStreamCreate(cudaStream_t *stream)
{
	return cudaStreamCreateWithPriority(stream, 0, 0);
}

#define CRT_CALL(call)                                         \
	do {                                                   \
		cudaError_t e_ = crt_ctx();                    \
		return e_ ? e_ : crt_err(call);                \
	} while (0)

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	CRT_CALL(cuStreamDestroy(stream));
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	CRT_CALL(cuStreamSynchronize(stream));
}

/* cudaErrorNotReady is an answer, not an error: not recorded. */
cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	cudaError_t e = crt_ctx();
	CUresult r;

	if (e)
		return e;
	r = cuStreamQuery(stream);
	return r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : crt_err(r);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	CRT_CALL(cuStreamWaitEvent(stream, event, flags));
}

cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority)
{
	CRT_CALL(cuStreamGetPriority(stream, priority));
}

cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags)
{
	CRT_CALL(cuStreamGetFlags(stream, flags));
}

/* The runtime's callback types differ from the driver's only in the enum
 * type of the status: the same ABI. */
cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t cb, void *userData,
				  unsigned int flags)
{
	if (!cb)
		return crt_set_error(cudaErrorInvalidValue);
	CRT_CALL(cuStreamAddCallback(stream, (CUstreamCallback)(void (*)(void))cb, userData, flags));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
	CRT_CALL(cuLaunchHostFunc(stream, fn, userData));
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, int mode)
{
	CRT_CALL(cuStreamBeginCapture(stream, (CUstreamCaptureMode)mode));
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, int *status)
{
	CRT_CALL(cuStreamIsCapturing(stream, (CUstreamCaptureStatus *)status));
}

/* ---- events ---- */

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	if (!event)
		return crt_set_error(cudaErrorInvalidValue);
	CRT_CALL(cuEventCreate(event, flags));
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	return cudaEventCreateWithFlags(event, 0);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	CRT_CALL(cuEventRecord(event, stream));
}

cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream, unsigned int flags)
{
	CRT_CALL(cuEventRecordWithFlags(event, stream, flags));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	CRT_CALL(cuEventSynchronize(event));
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
	cudaError_t e = crt_ctx();
	CUresult r;

	if (e)
		return e;
	r = cuEventQuery(event);
	return r == CUDA_ERROR_NOT_READY ? cudaErrorNotReady : crt_err(r);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
	CRT_CALL(cuEventElapsedTime(ms, start, end));
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	CRT_CALL(cuEventDestroy(event));
}
