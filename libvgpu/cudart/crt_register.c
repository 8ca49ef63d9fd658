// SPDX-License-Identifier: MIT
/*
 * libcudart.so.13: what nvcc's generated host code calls.
 *
 * Before main, each translation unit's constructor registers its fatbin
 * (__cudaRegisterFatBinary with nvcc's __fatBinC_Wrapper_t), then each
 * kernel (__cudaRegisterFunction: the host stub's address and the
 * kernel's mangled name) and each __device__/__constant__ variable
 * (__cudaRegisterVar: the host shadow's address and the name), then
 * __cudaRegisterFatBinaryEnd.  Nothing is loaded then: the fatbin becomes
 * a CUlibrary (cuLibraryLoadData: its PTX, compiled by libvgpu's front
 * end) on first use, and the library a module of each context that uses
 * it (libcuda.so.1's cuLibrary*).  A program built with nvcc -rdc=true
 * registers one fatbin whose wrapper lists its translation units' fatbins:
 * their PTX is linked (cuLink*) into the library (link_units below).
 *
 * A launch `k<<<g, b, smem, stream>>>(args)` is __cudaPushCallConfiguration
 * then the stub: __cudaPopCallConfiguration, __cudaGetKernel once (a
 * static in the stub), __cudaLaunchKernel with the argument pointers.
 * cudaKernel_t is a struct crt_func of this file.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cudart.h"
#include "cuv_rt.h"

#define CRT_FUNC_MAGIC 0x43525446u /* "CRTF" */

struct crt_fatbin {
	const void *image; /* nvcc's wrapper */
	pthread_mutex_t lock;
	bool loaded;
	CUresult load_result;
	CUlibrary lib;
	struct crt_fatbin *next;
};

struct crt_func {
	uint32_t magic;
	struct crt_fatbin *fb;
	const void *host; /* the host stub */
	char *name;
	CUkernel kernel;   /* once the fatbin is loaded (fb->lock) */
	struct crt_func *next;
};

struct crt_var {
	struct crt_fatbin *fb;
	const void *host; /* the host shadow */
	char *name;
	size_t size;
	struct crt_var *next;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct crt_fatbin *fatbins;
static struct crt_func *funcs;
static struct crt_var *vars;

void **__cudaRegisterFatBinary(void *fatCubin)
{
	struct crt_fatbin *fb = calloc(1, sizeof(*fb));

	if (!fb) {
		crt_warn("out of memory registering a fatbin");
		return NULL;
	}
	fb->image = fatCubin;
	pthread_mutex_init(&fb->lock, NULL);
	pthread_mutex_lock(&reg_lock);
	fb->next = fatbins;
	fatbins = fb;
	pthread_mutex_unlock(&reg_lock);
	return (void **)fb;
}

void __cudaRegisterFatBinaryEnd(void **handle)
{
}

void __cudaUnregisterFatBinary(void **handle)
{
	struct crt_fatbin *fb = (struct crt_fatbin *)handle, **pf;
	struct crt_func **pk;
	struct crt_var **pv;

	pthread_mutex_lock(&reg_lock);
	for (pf = &fatbins; *pf && *pf != fb; pf = &(*pf)->next)
		;
	if (!*pf) {
		pthread_mutex_unlock(&reg_lock);
		return;
	}
	*pf = fb->next;
	for (pk = &funcs; *pk;) {
		struct crt_func *k = *pk;

		if (k->fb != fb) {
			pk = &k->next;
			continue;
		}
		*pk = k->next;
		k->magic = 0;
		free(k->name);
		free(k);
	}
	for (pv = &vars; *pv;) {
		struct crt_var *v = *pv;

		if (v->fb != fb) {
			pv = &v->next;
			continue;
		}
		*pv = v->next;
		free(v->name);
		free(v);
	}
	pthread_mutex_unlock(&reg_lock);
	if (fb->loaded && !fb->load_result)
		cuLibraryUnload(fb->lib);
	pthread_mutex_destroy(&fb->lock);
	free(fb);
}

void __cudaRegisterFunction(void **handle, const char *hostFun, char *deviceFun,
			    const char *deviceName, int thread_limit, void *tid, void *bid,
			    dim3 *bDim, dim3 *gDim, int *wSize)
{
	struct crt_func *k = calloc(1, sizeof(*k));

	if (k)
		k->name = strdup(deviceName ? deviceName : deviceFun);
	if (!k || !k->name) {
		free(k);
		crt_warn("out of memory registering a kernel");
		return;
	}
	k->magic = CRT_FUNC_MAGIC;
	k->fb = (struct crt_fatbin *)handle;
	k->host = hostFun;
	pthread_mutex_lock(&reg_lock);
	k->next = funcs;
	funcs = k;
	pthread_mutex_unlock(&reg_lock);
}

void __cudaRegisterVar(void **handle, char *hostVar, char *deviceAddress, const char *deviceName,
		       int ext, size_t size, int constant, int global)
{
	struct crt_var *v = calloc(1, sizeof(*v));

	if (v)
		v->name = strdup(deviceName ? deviceName : deviceAddress);
	if (!v || !v->name) {
		free(v);
		crt_warn("out of memory registering a variable");
		return;
	}
	v->fb = (struct crt_fatbin *)handle;
	v->host = hostVar;
	v->size = size;
	pthread_mutex_lock(&reg_lock);
	v->next = vars;
	vars = v;
	pthread_mutex_unlock(&reg_lock);
}

void __cudaRegisterManagedVar(void **handle, void **hostVarPtrAddress, char *deviceAddress,
			      const char *deviceName, int ext, size_t size, int constant,
			      int global)
{
	crt_warn("__managed__ variable %s: __managed__ variables are not supported on vGPU "
		 "(cudaMallocManaged is)",
		 deviceName ? deviceName : "?");
}

char __cudaInitModule(void **handle)
{
	return 1;
}

/*
 * nvcc -rdc=true (separate compilation): the device link step's stub
 * (nvcc's crt/link.stub) registers one fatbin for the whole program, a
 * wrapper of version 2 (FATBINC_LINK_VERSION) whose data is the linked
 * SASS and whose last member lists each translation unit's own fatbin
 * (its relocatable SASS and its PTX, section __nv_relfatbin), NULL-ended.
 * vGPU links those PTX (cuLink*: libvgpu's PTX linker) into the library.
 */
#define CRT_FATBINC_MAGIC 0x466243b1
#define CRT_FATBINC_LINK_VERSION 2

struct crt_fatbinc {
	int magic;
	int version;
	const unsigned long long *data;
	void *filename_or_fatbins;
};

static void *const *rdc_units(const void *image)
{
	const struct crt_fatbinc *w = image;

	if (w->magic != CRT_FATBINC_MAGIC || w->version != CRT_FATBINC_LINK_VERSION)
		return NULL;
	return w->filename_or_fatbins;
}

/* A fatbin's bytes from its header (u32 magic, u16 version, u16 header size, u64 size). */
static size_t fatbin_bytes(const void *fatbin)
{
	const unsigned char *p = fatbin;
	uint32_t magic;
	uint16_t hsize;
	uint64_t size;

	memcpy(&magic, p, 4);
	memcpy(&hsize, p + 6, 2);
	memcpy(&size, p + 8, 8);
	return magic == 0xBA55ED50u ? hsize + size : 16;
}

static CUresult link_units(void *const *units, CUlibrary *lib)
{
	char err[8192] = "";
	CUjit_option opt[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[2] = { err, (void *)(uintptr_t)sizeof(err) };
	CUlinkState ls;
	void *image;
	CUresult r = cuLinkCreate(2, opt, val, &ls);

	if (r)
		return r;
	for (int i = 0; !r && units[i]; i++) {
		char name[48];

		snprintf(name, sizeof(name), "<translation unit %d>", i);
		r = cuLinkAddData(ls, CU_JIT_INPUT_FATBINARY, units[i], fatbin_bytes(units[i]),
				  name, 0, NULL, NULL);
	}
	if (!r)
		r = cuLinkComplete(ls, &image, NULL);
	if (!r)
		r = cuLibraryLoadData(lib, image, NULL, NULL, 0, NULL, NULL, 0);
	if (r && err[0])
		crt_warn("linking the program's device code (nvcc -rdc=true):\n%s", err);
	cuLinkDestroy(ls);
	/* the program's own image does not link: cudaErrorInvalidKernelImage */
	return r == CUDA_ERROR_INVALID_SOURCE ? CUDA_ERROR_INVALID_IMAGE : r;
}

/* The fatbin as a CUlibrary, loaded on first use (its result kept). */
static cudaError_t fatbin_lib(struct crt_fatbin *fb, CUlibrary *out)
{
	CUresult r;
	void *const *units;

	pthread_mutex_lock(&fb->lock);
	if (!fb->loaded && (units = rdc_units(fb->image))) {
		fb->load_result = link_units(units, &fb->lib);
		fb->loaded = true;
	} else if (!fb->loaded) {
		fb->load_result = cuLibraryLoadData(&fb->lib, fb->image, NULL, NULL, 0, NULL,
						    NULL, 0);
		/* a fatbin with no PTX: libcuda's message names the nvcc flag */
		fb->loaded = true;
	}
	r = fb->load_result;
	*out = fb->lib;
	pthread_mutex_unlock(&fb->lock);
	return r ? crt_err(r) : cudaSuccess;
}

static struct crt_func *func_find(const void *host)
{
	struct crt_func *k;

	pthread_mutex_lock(&reg_lock);
	for (k = funcs; k && k->host != host; k = k->next)
		;
	pthread_mutex_unlock(&reg_lock);
	return k;
}

static struct crt_var *var_find(const void *host)
{
	struct crt_var *v;

	pthread_mutex_lock(&reg_lock);
	for (v = vars; v && v->host != host; v = v->next)
		;
	pthread_mutex_unlock(&reg_lock);
	return v;
}

/* @k's CUfunction in the current context (made current first). */
static cudaError_t func_resolve(struct crt_func *k, CUfunction *out)
{
	CUkernel kernel;
	CUlibrary lib;
	cudaError_t e;

	if (!k || k->magic != CRT_FUNC_MAGIC)
		return crt_set_error(cudaErrorInvalidDeviceFunction);
	e = crt_ctx();
	if (e)
		return e;
	/* set once, under fb->lock; a launch reads it without the lock */
	kernel = __atomic_load_n(&k->kernel, __ATOMIC_ACQUIRE);
	if (!kernel) {
		e = fatbin_lib(k->fb, &lib);
		if (e)
			return e;
		pthread_mutex_lock(&k->fb->lock);
		kernel = k->kernel;
		if (!kernel && cuLibraryGetKernel(&kernel, lib, k->name))
			kernel = NULL;
		__atomic_store_n(&k->kernel, kernel, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&k->fb->lock);
	}
	if (!kernel) {
		crt_warn("kernel %s is not in its fatbin's PTX", k->name);
		return crt_set_error(cudaErrorInvalidDeviceFunction);
	}
	return crt_err(cuKernelGetFunction(out, kernel));
}

static cudaError_t host_func(const void *func, CUfunction *out)
{
	struct crt_func *k = func ? func_find(func) : NULL;

	if (!k) {
		if (func)
			crt_warn("%p is not a registered __global__ function", func);
		return crt_set_error(cudaErrorInvalidDeviceFunction);
	}
	return func_resolve(k, out);
}

/*
 * A launch's function: CUDA 13's launches take a cudaKernel_t as well, so
 * a pointer that is no registered __global__ function is an invalid handle
 * there (cudaErrorInvalidResourceHandle on the H200,
 * tests/cuda/real-gpu/h200-2026-11-29), not an invalid device function.
 */
static cudaError_t launch_func(const void *func, CUfunction *out)
{
	if (func && !func_find(func)) {
		crt_warn("%p is not a registered __global__ function", func);
		return crt_set_error(cudaErrorInvalidResourceHandle);
	}
	return host_func(func, out);
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *hostFun)
{
	struct crt_func *k;

	if (!kernel)
		return crt_set_error(cudaErrorInvalidValue);
	k = hostFun ? func_find(hostFun) : NULL;
	*kernel = k;
	return k ? cudaSuccess : crt_set_error(cudaErrorInvalidDeviceFunction);
}

cudaError_t cudaGetKernel(cudaKernel_t *kernel, const void *func)
{
	return __cudaGetKernel(kernel, func);
}

/* The function in the current context: a CUfunction the driver API takes. */
cudaError_t cudaGetFuncBySymbol(CUfunction *functionPtr, const void *symbolPtr)
{
	if (!functionPtr)
		return crt_set_error(cudaErrorInvalidValue);
	return host_func(symbolPtr, functionPtr);
}

/* ---- launches ---- */

/*
 * A push that cannot be kept (cold): sixteen configurations pushed and
 * none popped (CUDA's stack is as deep), or a thread without its block
 * (out of memory): the launch is not made, and its error cannot be
 * recorded.
 */
static __attribute__((cold, noinline)) unsigned int push_refused(struct crt_thread *t)
{
	if (crt_thread_writable(t)) {
		crt_set_error(cudaErrorInvalidConfiguration);
		return 1;
	}
	crt_warn("out of memory for the thread's state: a <<<>>> launch is not made");
	return 1;
}

/* the configuration's fields stored one by one from the arguments'
 * registers (a compound literal made gcc spill them to the stack first) */
CRT_HOT
unsigned int __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
					 cudaStream_t stream)
{
	struct crt_thread *t = crt_self();
	unsigned int d = t->config_depth;
	struct crt_config *c;

	if (__builtin_expect(d == CRT_CONFIG_DEPTH || !crt_thread_writable(t), 0))
		return push_refused(t);
	c = &t->config[d];
	c->grid = gridDim;
	c->block = blockDim;
	c->smem = sharedMem;
	c->stream = stream;
	t->config_depth = d + 1;
	return 0;
}

CRT_HOT
cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem,
				       void *stream)
{
	struct crt_thread *t = crt_self();
	unsigned int d = t->config_depth;
	const struct crt_config *c;

	if (__builtin_expect(!d, 0)) /* crt_thread_none's too */
		return crt_set_error(cudaErrorMissingConfiguration);
	c = &t->config[--d];
	t->config_depth = d;
	*gridDim = c->grid;
	*blockDim = c->block;
	*sharedMem = c->smem;
	*(cudaStream_t *)stream = c->stream;
	return cudaSuccess;
}

/*
 * The driver's answer, as NVIDIA's runtime 13 gives it: a block above 1024
 * threads or dynamic shared memory above the function's limit is
 * cudaErrorInvalidValue (measured on the H200: tests/cuda/real-gpu/
 * h200-2026-11-29/test_cudart.log), not cudaErrorInvalidConfiguration.
 */
static cudaError_t launch_err(CUresult r)
{
	return crt_err(r);
}

static cudaError_t launch(CUfunction f, dim3 g, dim3 b, void **args, size_t smem,
			  cudaStream_t stream)
{
	if (smem > 0xffffffffu)
		return crt_set_error(cudaErrorInvalidConfiguration);
	return launch_err(cuLaunchKernel(f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned int)smem,
					 stream, args, NULL));
}

/* __cudaLaunchKernel's path through func_resolve() and cuLaunchKernel */
static __attribute__((noinline)) cudaError_t launch_kernel(cudaKernel_t kernel, dim3 gridDim,
							  dim3 blockDim, void **args,
							  size_t sharedMem, cudaStream_t stream)
{
	CUfunction f;
	cudaError_t e = func_resolve(kernel, &f);

	return e ? e : launch(f, gridDim, blockDim, args, sharedMem, stream);
}

CRT_HOT
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void **args,
			       size_t sharedMem, cudaStream_t stream)
{
	/*
	 * A kernel whose fatbin is loaded, a shared-memory size the driver
	 * takes and the device's primary context made: libcuda launches in one
	 * call when that context is current and the kernel's function known
	 * there (cuv_rt.h), what func_resolve() then launch() would do.  Its
	 * success records nothing (crt_err() is for errors).
	 */
	if (__builtin_expect(kernel && kernel->magic == CRT_FUNC_MAGIC && sharedMem <= 0xffffffffu,
			     1)) {
		CUkernel k = __atomic_load_n(&kernel->kernel, __ATOMIC_ACQUIRE);
		CUcontext ctx = crt_primary_ctx(crt_self());

		if (__builtin_expect(k && ctx, 1)) {
			struct cuv_launch l = {
				.grid = { gridDim.x, gridDim.y, gridDim.z },
				.block = { blockDim.x, blockDim.y, blockDim.z },
				.smem = (unsigned int)sharedMem, .stream = stream
			};
			CUresult r = cuv_rt_launch(ctx, k, &l, args);

			if (__builtin_expect(r == CUDA_SUCCESS, 1))
				return cudaSuccess;
			if (r != CUV_SLOW)
				return launch_err(r);
		}
	}
	return launch_kernel(kernel, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
				    void **args, size_t sharedMem, cudaStream_t stream)
{
	return __cudaLaunchKernel(kernel, gridDim, blockDim, args, sharedMem,
				  stream ? stream : CU_STREAM_PER_THREAD);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args,
			     size_t sharedMem, cudaStream_t stream)
{
	CUfunction f;
	cudaError_t e = launch_func(func, &f);

	return e ? e : launch(f, gridDim, blockDim, args, sharedMem, stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 gridDim, dim3 blockDim, void **args,
				  size_t sharedMem, cudaStream_t stream)
{
	return cudaLaunchKernel(func, gridDim, blockDim, args, sharedMem,
				stream ? stream : CU_STREAM_PER_THREAD);
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 g, dim3 b, void **args,
					size_t sharedMem, cudaStream_t stream)
{
	CUfunction f;
	cudaError_t e = launch_func(func, &f);

	if (e)
		return e;
	if (sharedMem > 0xffffffffu)
		return crt_set_error(cudaErrorInvalidConfiguration);
	return launch_err(cuLaunchCooperativeKernel(f, g.x, g.y, g.z, b.x, b.y, b.z,
						    (unsigned int)sharedMem, stream, args));
}

/* cudaLaunchAttribute is CUlaunchAttribute: the attributes pass as they are. */
static CUlaunchConfig launch_config(const cudaLaunchConfig_t *config)
{
	return (CUlaunchConfig){
		.gridDimX = config->gridDim.x,
		.gridDimY = config->gridDim.y,
		.gridDimZ = config->gridDim.z,
		.blockDimX = config->blockDim.x,
		.blockDimY = config->blockDim.y,
		.blockDimZ = config->blockDim.z,
		.sharedMemBytes = (unsigned int)config->dynamicSmemBytes,
		.hStream = config->stream,
		.attrs = config->attrs,
		.numAttrs = config->numAttrs,
	};
}

cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
	CUlaunchConfig c;
	CUfunction f;
	cudaError_t e;

	if (!config || (config->numAttrs && !config->attrs))
		return crt_set_error(cudaErrorInvalidValue);
	e = launch_func(func, &f);
	if (e)
		return e;
	if (config->dynamicSmemBytes > 0xffffffffu)
		return crt_set_error(cudaErrorInvalidConfiguration);
	c = launch_config(config);
	return launch_err(cuLaunchKernelEx(&c, f, args, NULL));
}

/* ---- function attributes ---- */

/* cudaFuncAttribute's values are CUfunction_attribute's (8 to 15). */
cudaError_t cudaFuncSetAttribute(const void *func, cudaFuncAttr_t attr, int value)
{
	CUfunction f;
	cudaError_t e = host_func(func, &f);

	if (e)
		return e;
	if (attr < cudaFuncAttributeMaxDynamicSharedMemorySize ||
	    attr > cudaFuncAttributeClusterSchedulingPolicyPreference)
		return crt_set_error(cudaErrorInvalidValue);
	return crt_err(cuFuncSetAttribute(f, (CUfunction_attribute)attr, value));
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func)
{
	int v[16] = { 0 };
	CUfunction f;
	cudaError_t e;

	if (!a)
		return crt_set_error(cudaErrorInvalidValue);
	e = host_func(func, &f);
	if (e)
		return e;
	/* the attributes libcuda does not know stay 0 */
	for (int i = 0; i < 16; i++)
		if (cuFuncGetAttribute(&v[i], (CUfunction_attribute)i, f))
			v[i] = 0;
	memset(a, 0, sizeof(*a));
	a->maxThreadsPerBlock = v[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
	a->sharedSizeBytes = (size_t)v[CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES];
	a->constSizeBytes = (size_t)v[CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES];
	a->localSizeBytes = (size_t)v[CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES];
	a->numRegs = v[CU_FUNC_ATTRIBUTE_NUM_REGS];
	a->ptxVersion = v[CU_FUNC_ATTRIBUTE_PTX_VERSION];
	a->binaryVersion = v[CU_FUNC_ATTRIBUTE_BINARY_VERSION];
	a->cacheModeCA = v[7];
	a->maxDynamicSharedSizeBytes = v[8];
	a->preferredShmemCarveout = v[9];
	a->clusterDimMustBeSet = v[10];
	a->requiredClusterWidth = v[11];
	a->requiredClusterHeight = v[12];
	a->requiredClusterDepth = v[13];
	a->nonPortableClusterSizeAllowed = v[14];
	a->clusterSchedulingPolicyPreference = v[15];
	return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void *func, int cacheConfig)
{
	CUfunction f;
	cudaError_t e = host_func(func, &f);

	return e ? e : crt_err(cuFuncSetCacheConfig(f, (CUfunc_cache)cacheConfig));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks,
								   const void *func,
								   int blockSize,
								   size_t dynamicSMemSize,
								   unsigned int flags)
{
	CUfunction f;
	cudaError_t e;

	if (!numBlocks)
		return crt_set_error(cudaErrorInvalidValue);
	e = host_func(func, &f);
	return e ? e : crt_err(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
			       numBlocks, f, blockSize, dynamicSMemSize, flags));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, const void *func,
							  int blockSize, size_t dynamicSMemSize)
{
	return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
								      dynamicSMemSize, 0);
}

/*
 * cudaOccupancyMaxPotentialBlockSize and its variants are templates of
 * NVIDIA's cuda_runtime.h, over the calls above and the attributes.
 */
cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, const void *func,
						      int numBlocks, int blockSize)
{
	CUfunction f;
	cudaError_t e;

	if (!dynamicSmemSize)
		return crt_set_error(cudaErrorInvalidValue);
	e = host_func(func, &f);
	return e ? e : crt_err(cuOccupancyAvailableDynamicSMemPerBlock(dynamicSmemSize, f,
									numBlocks, blockSize));
}

/* The cluster queries: @cluster_size picks cuOccupancyMaxPotentialClusterSize. */
static cudaError_t occupancy_clusters(int *out, const void *func,
				      const cudaLaunchConfig_t *config, bool cluster_size)
{
	CUlaunchConfig c;
	CUfunction f;
	cudaError_t e;

	if (!out || !config || (config->numAttrs && !config->attrs) ||
	    config->dynamicSmemBytes > 0xffffffffu)
		return crt_set_error(cudaErrorInvalidValue);
	e = host_func(func, &f);
	if (e)
		return e;
	c = launch_config(config);
	return crt_err(cluster_size ? cuOccupancyMaxPotentialClusterSize(out, f, &c) :
				      cuOccupancyMaxActiveClusters(out, f, &c));
}

cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, const void *func,
						 const cudaLaunchConfig_t *launchConfig)
{
	return occupancy_clusters(clusterSize, func, launchConfig, true);
}

cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, const void *func,
					   const cudaLaunchConfig_t *launchConfig)
{
	return occupancy_clusters(numClusters, func, launchConfig, false);
}

/* ---- symbols ---- */

/* The device address and size of the variable whose host shadow is @symbol. */
static cudaError_t symbol_addr(const void *symbol, CUdeviceptr *dptr, size_t *size)
{
	struct crt_var *v = symbol ? var_find(symbol) : NULL;
	CUlibrary lib;
	cudaError_t e;

	if (!v) {
		crt_warn("%p is not a registered __device__ or __constant__ variable", symbol);
		return crt_set_error(cudaErrorInvalidSymbol);
	}
	e = crt_ctx();
	if (!e)
		e = fatbin_lib(v->fb, &lib);
	if (e)
		return e;
	if (cuLibraryGetGlobal(dptr, size, lib, v->name)) {
		crt_warn("variable %s is not in its fatbin's PTX", v->name);
		return crt_set_error(cudaErrorInvalidSymbol);
	}
	return cudaSuccess;
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *symbol)
{
	CUdeviceptr p;
	size_t n;
	cudaError_t e;

	if (!devPtr)
		return crt_set_error(cudaErrorInvalidValue);
	e = symbol_addr(symbol, &p, &n);
	if (!e)
		*devPtr = (void *)(uintptr_t)p;
	return e;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *symbol)
{
	CUdeviceptr p;

	if (!size)
		return crt_set_error(cudaErrorInvalidValue);
	return symbol_addr(symbol, &p, size);
}

static cudaError_t symbol_copy(void *host, const void *symbol, size_t count, size_t offset,
			       enum cudaMemcpyKind kind, bool to_symbol, cudaStream_t stream,
			       bool async)
{
	CUdeviceptr p;
	size_t n;
	cudaError_t e;

	if (to_symbol ? (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToDevice &&
			 kind != cudaMemcpyDefault)
		      : (kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice &&
			 kind != cudaMemcpyDefault))
		return crt_set_error(cudaErrorInvalidMemcpyDirection);
	e = symbol_addr(symbol, &p, &n);
	if (e)
		return e;
	if (offset > n || count > n - offset)
		return crt_set_error(cudaErrorInvalidValue);
	if (!count)
		return cudaSuccess;
	if (!host)
		return crt_set_error(cudaErrorInvalidValue);
	p += offset;
	if (to_symbol)
		return crt_err(async ? cuMemcpyAsync(p, (CUdeviceptr)(uintptr_t)host, count, stream)
				     : cuMemcpy(p, (CUdeviceptr)(uintptr_t)host, count));
	return crt_err(async ? cuMemcpyAsync((CUdeviceptr)(uintptr_t)host, p, count, stream)
			     : cuMemcpy((CUdeviceptr)(uintptr_t)host, p, count));
}

cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset,
			       enum cudaMemcpyKind kind)
{
	return symbol_copy((void *)(uintptr_t)src, symbol, count, offset, kind, true, NULL, false);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *symbol, size_t count, size_t offset,
				 enum cudaMemcpyKind kind)
{
	return symbol_copy(dst, symbol, count, offset, kind, false, NULL, false);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *symbol, const void *src, size_t count,
				    size_t offset, enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return symbol_copy((void *)(uintptr_t)src, symbol, count, offset, kind, true, stream,
			   true);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *symbol, size_t count, size_t offset,
				      enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return symbol_copy(dst, symbol, count, offset, kind, false, stream, true);
}
