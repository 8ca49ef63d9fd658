/* SPDX-License-Identifier: MIT */
/*
 * libcudart.so.13 over libcuda.so.1: the CUDA runtime API's types and the
 * entry points this library implements, written for vGPU from NVIDIA's
 * public API documentation (names, enumerator values and structure
 * layouts of CUDA 13.0, so that programs compiled by nvcc against
 * NVIDIA's cuda_runtime.h call it).  Programs include NVIDIA's header;
 * this one is the library's own (docs/cuda.md, "The runtime API").
 */
#ifndef VGPU_CUDART_H
#define VGPU_CUDART_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda.h"

#define CRT_EXPORT __attribute__((visibility("default")))
/* The functions of a <<<>>> launch's common path, together in the library
 * (the linker gathers .text.hot.*): fewer instruction-cache lines */
#define CRT_HOT __attribute__((section(".text.hot.crt")))

/* cudaError_t: the codes this library returns (CUDA's values). */
typedef enum cudaError {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInitializationError = 3,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidSymbol = 13,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorInvalidMemcpyDirection = 21,
	cudaErrorDevicesUnavailable = 46,
	cudaErrorMissingConfiguration = 52,
	cudaErrorInvalidDeviceFunction = 98,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidDevice = 101,
	cudaErrorNoKernelImageForDevice = 209,
	cudaErrorInvalidPtx = 218,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorIllegalState = 401,
	cudaErrorNotReady = 600,
	cudaErrorIllegalAddress = 700,
	cudaErrorLaunchTimeout = 702,
	cudaErrorAssert = 710,
	cudaErrorHardwareStackError = 714,
	cudaErrorIllegalInstruction = 715,
	cudaErrorMisalignedAddress = 716,
	cudaErrorInvalidAddressSpace = 717,
	cudaErrorInvalidPc = 718,
	cudaErrorLaunchFailure = 719,
	cudaErrorNotSupported = 801,
	cudaErrorStreamCaptureUnsupported = 900,
	cudaErrorUnknown = 999,
} cudaError_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

/* CUDA's numbering of the attributes is the driver API's. */
typedef int cudaDeviceAttr_t;
typedef int cudaFuncAttr_t;
typedef int cudaLimit_t;

enum {
	cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
	cudaFuncAttributeNonPortableClusterSizeAllowed = 14,
	cudaFuncAttributeClusterSchedulingPolicyPreference = 15,
};

/* The same handles as the driver API's. */
typedef struct CUstream_st *cudaStream_t;
typedef struct CUevent_st *cudaEvent_t;
typedef struct crt_func *cudaKernel_t;
typedef void (*cudaStreamCallback_t)(cudaStream_t stream, cudaError_t status, void *userData);
typedef void (*cudaHostFn_t)(void *userData);

typedef struct dim3 {
	unsigned int x, y, z;
} dim3;

/* CUDA 13.0's cudaDeviceProp (1008 bytes). */
struct cudaDeviceProp {
	char name[256];
	struct {
		char bytes[16];
	} uuid;
	char luid[8];
	unsigned int luidDeviceNodeMask;
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int regsPerBlock;
	int warpSize;
	size_t memPitch;
	int maxThreadsPerBlock;
	int maxThreadsDim[3];
	int maxGridSize[3];
	size_t totalConstMem;
	int major;
	int minor;
	size_t textureAlignment;
	size_t texturePitchAlignment;
	int multiProcessorCount;
	int integrated;
	int canMapHostMemory;
	int maxTexture1D;
	int maxTexture1DMipmap;
	int maxTexture2D[2];
	int maxTexture2DMipmap[2];
	int maxTexture2DLinear[3];
	int maxTexture2DGather[2];
	int maxTexture3D[3];
	int maxTexture3DAlt[3];
	int maxTextureCubemap;
	int maxTexture1DLayered[2];
	int maxTexture2DLayered[3];
	int maxTextureCubemapLayered[2];
	int maxSurface1D;
	int maxSurface2D[2];
	int maxSurface3D[3];
	int maxSurface1DLayered[2];
	int maxSurface2DLayered[3];
	int maxSurfaceCubemap;
	int maxSurfaceCubemapLayered[2];
	size_t surfaceAlignment;
	int concurrentKernels;
	int ECCEnabled;
	int pciBusID;
	int pciDeviceID;
	int pciDomainID;
	int tccDriver;
	int asyncEngineCount;
	int unifiedAddressing;
	int memoryBusWidth;
	int l2CacheSize;
	int persistingL2CacheMaxSize;
	int maxThreadsPerMultiProcessor;
	int streamPrioritiesSupported;
	int globalL1CacheSupported;
	int localL1CacheSupported;
	size_t sharedMemPerMultiprocessor;
	int regsPerMultiprocessor;
	int managedMemory;
	int isMultiGpuBoard;
	int multiGpuBoardGroupID;
	int hostNativeAtomicSupported;
	int pageableMemoryAccess;
	int concurrentManagedAccess;
	int computePreemptionSupported;
	int canUseHostPointerForRegisteredMem;
	int cooperativeLaunch;
	size_t sharedMemPerBlockOptin;
	int pageableMemoryAccessUsesHostPageTables;
	int directManagedMemAccessFromHost;
	int maxBlocksPerMultiProcessor;
	int accessPolicyMaxWindowSize;
	size_t reservedSharedMemPerBlock;
	int hostRegisterSupported;
	int sparseCudaArraySupported;
	int hostRegisterReadOnlySupported;
	int timelineSemaphoreInteropSupported;
	int memoryPoolsSupported;
	int gpuDirectRDMASupported;
	unsigned int gpuDirectRDMAFlushWritesOptions;
	int gpuDirectRDMAWritesOrdering;
	unsigned int memoryPoolSupportedHandleTypes;
	int deferredMappingCudaArraySupported;
	int ipcEventSupported;
	int clusterLaunch;
	int unifiedFunctionPointers;
	int deviceNumaConfig;
	int deviceNumaId;
	int mpsEnabled;
	int hostNumaId;
	unsigned int gpuPciDeviceID;
	unsigned int gpuPciSubsystemID;
	int hostNumaMultinodeIpcSupported;
	int reserved[56];
};
_Static_assert(sizeof(struct cudaDeviceProp) == 1008, "cudaDeviceProp of CUDA 13.0");
_Static_assert(offsetof(struct cudaDeviceProp, clusterLaunch) == 748, "cudaDeviceProp");

struct cudaFuncAttributes {
	size_t sharedSizeBytes;
	size_t constSizeBytes;
	size_t localSizeBytes;
	int maxThreadsPerBlock;
	int numRegs;
	int ptxVersion;
	int binaryVersion;
	int cacheModeCA;
	int maxDynamicSharedSizeBytes;
	int preferredShmemCarveout;
	int clusterDimMustBeSet;
	int requiredClusterWidth;
	int requiredClusterHeight;
	int requiredClusterDepth;
	int clusterSchedulingPolicyPreference;
	int nonPortableClusterSizeAllowed;
	int reserved[16];
};
_Static_assert(sizeof(struct cudaFuncAttributes) == 144, "cudaFuncAttributes");

/* cudaLaunchAttribute has CUlaunchAttribute's layout and numbering. */
typedef CUlaunchAttribute cudaLaunchAttribute;
typedef struct cudaLaunchConfig_st {
	dim3 gridDim;
	dim3 blockDim;
	size_t dynamicSmemBytes;
	cudaStream_t stream;
	cudaLaunchAttribute *attrs;
	unsigned int numAttrs;
} cudaLaunchConfig_t;
_Static_assert(sizeof(cudaLaunchConfig_t) == 56, "cudaLaunchConfig_t");
_Static_assert(sizeof(cudaLaunchAttribute) == 72, "cudaLaunchAttribute");

/* ---- nvcc's registration and launch calls (crt_register.c) ---- */
CRT_EXPORT void **__cudaRegisterFatBinary(void *fatCubin);
CRT_EXPORT void __cudaRegisterFatBinaryEnd(void **handle);
CRT_EXPORT void __cudaUnregisterFatBinary(void **handle);
CRT_EXPORT void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun,
				       const char *deviceName, int thread_limit, void *tid,
				       void *bid, dim3 *bDim, dim3 *gDim, int *wSize);
CRT_EXPORT void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress,
				  const char *deviceName, int ext, size_t size, int constant,
				  int global);
CRT_EXPORT void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress,
					 char *deviceAddress, const char *deviceName, int ext,
					 size_t size, int constant, int global);
CRT_EXPORT char __cudaInitModule(void **handle);
CRT_EXPORT unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
						    size_t sharedMem, cudaStream_t stream);
CRT_EXPORT cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
						  size_t *sharedMem, void *stream);
CRT_EXPORT cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun);
CRT_EXPORT cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
					  void **args, size_t sharedMem, cudaStream_t stream);
CRT_EXPORT cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim,
					       dim3 blockDim, void **args, size_t sharedMem,
					       cudaStream_t stream);

/* ---- kernels and symbols (crt_register.c) ---- */
CRT_EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernel, const void *func);
/* cudaFunction_t is CUfunction (CUDA's documentation: the same type) */
CRT_EXPORT cudaError_t cudaGetFuncBySymbol(CUfunction *functionPtr, const void *symbolPtr);
CRT_EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim,
					void **args, size_t sharedMem, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim,
					     void **args, size_t sharedMem, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 gridDim,
						   dim3 blockDim, void **args, size_t sharedMem,
						   cudaStream_t stream);
CRT_EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
					   void **args);
CRT_EXPORT cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttr_t attr, int value);
CRT_EXPORT cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func);
CRT_EXPORT cudaError_t cudaFuncSetCacheConfig(const void *func, int cacheConfig);
CRT_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks,
								     const void *func,
								     int blockSize,
								     size_t dynamicSMemSize);
CRT_EXPORT cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
	int *numBlocks, const void *func, int blockSize, size_t dynamicSMemSize,
	unsigned int flags);
CRT_EXPORT cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize,
								const void *func, int numBlocks,
								int blockSize);
CRT_EXPORT cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
							   const cudaLaunchConfig_t *launchConfig);
CRT_EXPORT cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func,
						     const cudaLaunchConfig_t *launchConfig);
CRT_EXPORT cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count,
					  size_t offset, enum cudaMemcpyKind kind);
CRT_EXPORT cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count,
					    size_t offset, enum cudaMemcpyKind kind);
CRT_EXPORT cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src,
					       size_t count, size_t offset,
					       enum cudaMemcpyKind kind, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count,
						 size_t offset, enum cudaMemcpyKind kind,
						 cudaStream_t stream);
CRT_EXPORT cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol);
CRT_EXPORT cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol);

/* ---- the rest (crt_api.c) ---- */
CRT_EXPORT cudaError_t cudaGetLastError(void);
CRT_EXPORT cudaError_t cudaPeekAtLastError(void);
CRT_EXPORT const char *cudaGetErrorName(cudaError_t error);
CRT_EXPORT const char *cudaGetErrorString(cudaError_t error);
CRT_EXPORT cudaError_t cudaDriverGetVersion(int *version);
CRT_EXPORT cudaError_t cudaRuntimeGetVersion(int *version);
CRT_EXPORT cudaError_t cudaGetDeviceCount(int *count);
CRT_EXPORT cudaError_t cudaSetDevice(int device);
CRT_EXPORT cudaError_t cudaGetDevice(int *device);
CRT_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags);
CRT_EXPORT cudaError_t cudaInitDevice(int device, unsigned int deviceFlags, unsigned int flags);
CRT_EXPORT cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device);
CRT_EXPORT cudaError_t cudaGetDeviceProperties_v2(struct cudaDeviceProp *prop, int device);
CRT_EXPORT cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr_t attr, int device);
CRT_EXPORT cudaError_t cudaDeviceSynchronize(void);
CRT_EXPORT cudaError_t cudaDeviceReset(void);
CRT_EXPORT cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest);
CRT_EXPORT cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit_t limit);
CRT_EXPORT cudaError_t cudaDeviceSetLimit(cudaLimit_t limit, size_t value);
CRT_EXPORT cudaError_t cudaDeviceSetCacheConfig(int cacheConfig);
CRT_EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
					       unsigned long long flags, int *driverStatus);
CRT_EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
							unsigned int cudaVersion,
							unsigned long long flags,
							int *driverStatus);
CRT_EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size);
CRT_EXPORT cudaError_t cudaFree(void *devPtr);
CRT_EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size);
CRT_EXPORT cudaError_t cudaHostAlloc(void **ptr, size_t size, unsigned int flags);
CRT_EXPORT cudaError_t cudaFreeHost(void *ptr);
CRT_EXPORT cudaError_t cudaHostGetDevicePointer(void **devPtr, void *host, unsigned int flags);
CRT_EXPORT cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags);
CRT_EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total);
CRT_EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
				  enum cudaMemcpyKind kind);
CRT_EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				       enum cudaMemcpyKind kind, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count);
CRT_EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count,
				       cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamCreate(cudaStream_t *stream);
CRT_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
CRT_EXPORT cudaError_t cudaStreamCreateWithPriority(cudaStream_t *stream, unsigned int flags,
						    int priority);
CRT_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream);
CRT_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
					   unsigned int flags);
CRT_EXPORT cudaError_t cudaStreamGetPriority(cudaStream_t stream, int *priority);
CRT_EXPORT cudaError_t cudaStreamGetFlags(cudaStream_t stream, unsigned int *flags);
CRT_EXPORT cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t cb,
					     void *userData, unsigned int flags);
CRT_EXPORT cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData);
CRT_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, int mode);
CRT_EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, int *status);
CRT_EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event);
CRT_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
CRT_EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
CRT_EXPORT cudaError_t cudaEventRecordWithFlags(cudaEvent_t event, cudaStream_t stream,
						unsigned int flags);
CRT_EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event);
CRT_EXPORT cudaError_t cudaEventQuery(cudaEvent_t event);
CRT_EXPORT cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
CRT_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event);

/* ---- inside the library ---- */

/* A <<<>>>'s call configuration (__cudaPushCallConfiguration's) */
#define CRT_CONFIG_DEPTH 16
struct crt_config {
	dim3 grid, block;
	size_t smem;
	cudaStream_t stream;
};

/*
 * What libcudart keeps per thread, in one block allocated on the thread's
 * first use and freed when it exits (crt_api.c, crt_thread_new).
 */
struct crt_thread {
	int device;	     /* the current device (cudaSetDevice) */
	cudaError_t last;    /* the last error (cudaGetLastError) */
	unsigned int config_depth; /* the call configurations pushed */
	struct crt_config config[CRT_CONFIG_DEPTH];
};

/*
 * The calling thread's block, or NULL before its first use.  The only
 * thread-local variable of libcudart, and initial-exec: each access is a
 * %fs-relative load (the general-dynamic model of a shared library's TLS
 * is a __tls_get_addr call).  A library loaded by dlopen may use
 * initial-exec TLS only within the few hundred bytes glibc keeps spare in
 * the static TLS block for that; one pointer fits, as Mesa's drivers'
 * does.  A larger variable (the block itself) would not: keep it a pointer.
 */
extern __thread struct crt_thread *crt_tls
	__attribute__((tls_model("initial-exec"), visibility("hidden")));
/*
 * A block for the thread (cold): a new one, or, when none can be made
 * (out of memory), crt_thread_none, read-only: device 0, no last error, no
 * configuration.  What would change it checks for it (crt_thread_writable):
 * the last error is not recorded, cudaSetDevice fails with
 * cudaErrorMemoryAllocation, a <<<>>>'s configuration is refused.
 */
struct crt_thread *crt_thread_new(void) __attribute__((cold));
extern const struct crt_thread crt_thread_none __attribute__((visibility("hidden")));

static inline bool crt_thread_writable(const struct crt_thread *t)
{
	return t != &crt_thread_none;
}

/* The calling thread's block (never NULL) */
static inline struct crt_thread *crt_self(void)
{
	struct crt_thread *t = crt_tls;

	if (__builtin_expect(!t, 0))
		t = crt_thread_new();
	return t;
}

/* Make the current device's primary context current on this thread. */
cudaError_t crt_ctx(void);
/* each device's primary context, once made (crt_ctx; read without the lock) */
#define CRT_MAX_DEVICES 16
extern CUcontext crt_primary[CRT_MAX_DEVICES] __attribute__((visibility("hidden")));

/* The thread @t's current device's primary context, once made (or NULL);
 * not checked to be current */
static inline CUcontext crt_primary_ctx(const struct crt_thread *t)
{
	unsigned int dev = (unsigned int)t->device;

	return dev < CRT_MAX_DEVICES ? __atomic_load_n(&crt_primary[dev], __ATOMIC_ACQUIRE) :
				       NULL;
}
/* A driver result as the runtime's code, recorded as the thread's last error. */
cudaError_t crt_err(CUresult r);
/* Record @e (not cudaSuccess) as the thread's last error; returns @e. */
cudaError_t crt_set_error(cudaError_t e);
void crt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2), cold));

#endif /* VGPU_CUDART_H */
