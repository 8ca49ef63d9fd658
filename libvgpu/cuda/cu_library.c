// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: libraries (cuLibrary*, cuKernel*), CUDA 12's
 * context-independent loading.  A library keeps its PTX and compiles it
 * into a module of a context the first time that context needs it (a
 * function, the module, a global); a CUkernel is a kernel name of the
 * library, resolved to that context's CUfunction, and cuLaunchKernel takes
 * it in place of a CUfunction (cu_launch.c).
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cu_fatbin.h"
#include "cuda_priv.h"

struct cuv_lib_mod {
	struct CUctx_st *ctx;
	struct CUmod_st *mod;
};

struct CUkern_st {
	struct CUlib_st *lib;
	char *name;
};

/* @lock protects @mods */
struct CUlib_st {
	char *ptx;
	size_t len;
	pthread_mutex_t lock;
	struct cuv_lib_mod *mods;
	unsigned int nmods, mods_cap;
	struct CUkern_st *kernels;
	unsigned int nkernels;
};

static void lib_free(struct CUlib_st *lib)
{
	for (unsigned int i = 0; i < lib->nmods; i++)
		if (cuv_handle_ok(lib->mods[i].mod, CUV_MOD))
			cuModuleUnload(lib->mods[i].mod);
	for (unsigned int i = 0; i < lib->nkernels; i++) {
		cuv_handle_del(&lib->kernels[i]);
		free(lib->kernels[i].name);
	}
	free(lib->kernels);
	free(lib->mods);
	free(lib->ptx);
	pthread_mutex_destroy(&lib->lock);
	free(lib);
}

/* The kernel names, from the assembly the front end makes of the PTX. */
static CUresult lib_kernels(struct CUlib_st *lib, char *errlog, size_t errlen)
{
	char *text = NULL, log[4096] = "";
	unsigned int n = 0;
	int ret = vgpu_ptx_to_asm(lib->ptx, lib->len, "<library>", &text, log, sizeof(log));

	if (ret) {
		cuv_warn("<library>: the PTX does not compile for vGPU:\n%s", log);
		if (errlog && errlen)
			snprintf(errlog, errlen, "%s", log);
		return CUDA_ERROR_INVALID_PTX;
	}
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, ".kernel ", 8);
	lib->kernels = calloc(n ? n : 1, sizeof(*lib->kernels));
	if (!lib->kernels) {
		free(text);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t k;

		if (strncmp(p, ".kernel ", 8))
			continue;
		p += 8;
		k = strcspn(p, " \t\n;");
		/* a kernel whose PTX name is too long for the object: the front
		 * end writes ".kernel SHORT // PTX-NAME" (docs/ptx.md) */
		if (!strncmp(p + k, " // ", 4)) {
			p += k + 4;
			k = strcspn(p, " \t\n;");
		}
		lib->kernels[lib->nkernels].lib = lib;
		/* ".kernel SHORT // PTXNAME" for a long name (cu_module.c asm_kernels_index()) */
		if (!strncmp(p + k, " // ", 4)) {
			p += k + 4;
			k = strcspn(p, "\n");
		}
		lib->kernels[lib->nkernels].name = strndup(p, k);
		if (!lib->kernels[lib->nkernels].name)
			break;
		lib->nkernels++;
	}
	free(text);
	return lib->nkernels == n ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult lib_load(CUlibrary *library, const void *code, size_t size,
			 CUjit_option *jitOptions, void **jitOptionsValues,
			 unsigned int numJitOptions, CUlibraryOption *libraryOptions,
			 void **libraryOptionValues, unsigned int numLibraryOptions)
{
	struct CUlib_st *lib;
	char *errlog;
	size_t errlen;
	CUresult r;

	if (!library || !code || (numLibraryOptions && (!libraryOptions || !libraryOptionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	for (unsigned int i = 0; i < numLibraryOptions; i++)
		if ((unsigned int)libraryOptions[i] > CU_LIBRARY_BINARY_IS_PRESERVED)
			return CUDA_ERROR_INVALID_VALUE;
	r = cuv_jit_options(numJitOptions, jitOptions, jitOptionsValues, &errlog, &errlen);
	if (r)
		return r;
	lib = calloc(1, sizeof(*lib));
	if (!lib)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_init(&lib->lock, NULL);
	r = cuv_image_ptx(code, size, &lib->ptx, &lib->len);
	if (!r)
		r = lib_kernels(lib, errlog, errlen);
	if (r) {
		lib_free(lib);
		return r;
	}
	for (unsigned int i = 0; i < lib->nkernels; i++)
		cuv_handle_add(&lib->kernels[i], CUV_KERNEL);
	cuv_handle_add(lib, CUV_LIB);
	*library = lib;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code,
				   CUjit_option *jitOptions, void **jitOptionsValues,
				   unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				   void **libraryOptionValues, unsigned int numLibraryOptions)
{
	return lib_load(library, code, 0, jitOptions, jitOptionsValues, numJitOptions,
			libraryOptions, libraryOptionValues, numLibraryOptions);
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
				       CUjit_option *jitOptions, void **jitOptionsValues,
				       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				       void **libraryOptionValues, unsigned int numLibraryOptions)
{
	FILE *f;
	char *buf;
	long size;
	CUresult r;

	if (!library || !fileName)
		return CUDA_ERROR_INVALID_VALUE;
	f = fopen(fileName, "rb");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	buf = malloc((size_t)size + 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		free(buf);
		return buf ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_OUT_OF_MEMORY;
	}
	fclose(f);
	buf[size] = '\0';
	r = lib_load(library, buf, (size_t)size + 1, jitOptions, jitOptionsValues, numJitOptions,
		     libraryOptions, libraryOptionValues, numLibraryOptions);
	free(buf);
	return r;
}

static CUresult lib_ok(CUlibrary lib)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return lib && cuv_handle_ok(lib, CUV_LIB) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult kernel_ok(CUkernel k)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	return k && cuv_handle_ok(k, CUV_KERNEL) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
	CUresult r = lib_ok(library);

	if (r)
		return r;
	cuv_handle_del(library);
	lib_free(library);
	return CUDA_SUCCESS;
}

/* The library's module in the current context, compiled there on first use. */
static CUresult lib_module(struct CUlib_st *lib, struct CUmod_st **out)
{
	struct CUctx_st *ctx;
	struct CUmod_st *m;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	pthread_mutex_lock(&lib->lock);
	for (unsigned int i = 0; i < lib->nmods; i++)
		if (lib->mods[i].ctx == ctx && cuv_handle_ok(lib->mods[i].mod, CUV_MOD) &&
		    lib->mods[i].mod->ctx == ctx) {
			*out = lib->mods[i].mod;
			pthread_mutex_unlock(&lib->lock);
			return CUDA_SUCCESS;
		}
	if (lib->nmods == lib->mods_cap) {
		unsigned int cap = lib->mods_cap ? lib->mods_cap * 2 : 4;
		struct cuv_lib_mod *n = realloc(lib->mods, cap * sizeof(*n));

		if (!n) {
			pthread_mutex_unlock(&lib->lock);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		lib->mods = n;
		lib->mods_cap = cap;
	}
	r = cuv_module_from_ptx(lib->ptx, lib->len, "<library>", NULL, 0, &m);
	if (!r) {
		lib->mods[lib->nmods++] = (struct cuv_lib_mod){ ctx, m };
		*out = m;
	}
	pthread_mutex_unlock(&lib->lock);
	return r;
}

CUresult CUDAAPI cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
	CUresult r;

	if (!pMod)
		return CUDA_ERROR_INVALID_VALUE;
	r = lib_ok(library);
	return r ? r : lib_module(library, pMod);
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	CUresult r;

	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	r = lib_ok(library);
	if (r)
		return r;
	for (unsigned int i = 0; i < library->nkernels; i++)
		if (!strcmp(library->kernels[i].name, name)) {
			*pKernel = &library->kernels[i];
			return CUDA_SUCCESS;
		}
	return CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
	CUresult r;

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	r = lib_ok(lib);
	if (!r)
		*count = lib->nkernels;
	return r;
}

CUresult CUDAAPI cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels,
					   CUlibrary lib)
{
	CUresult r;

	if (!kernels)
		return CUDA_ERROR_INVALID_VALUE;
	r = lib_ok(lib);
	if (r)
		return r;
	if (numKernels > lib->nkernels)
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned int i = 0; i < numKernels; i++)
		kernels[i] = &lib->kernels[i];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
				    const char *name)
{
	struct CUmod_st *m;
	CUresult r = lib_ok(library);

	if (!r)
		r = lib_module(library, &m);
	return r ? r : cuModuleGetGlobal(dptr, bytes, m, name);
}

/*
 * What a thread last found for a kernel in a context (a <<<>>> launch asks
 * each time): valid while no handle has been deleted since, for a library
 * unload, a module unload or a context's end deletes theirs.
 */
CUresult cuv_kernel_function(CUkernel kernel, struct CUfunc_st **out)
{
	struct cuv_thread *t = cuv_self();
	unsigned long gen = cuv_handle_gen();
	struct CUctx_st *ctx = cuv_current_in(t);
	struct CUfunc_st *f;
	struct CUmod_st *m;
	CUresult r;

	/* the kernel and the context were live in @gen: still are */
	f = kernel && ctx ? cuv_kfunc_find(t, kernel, ctx, gen) : NULL;
	if (f) {
		*out = f;
		return CUDA_SUCCESS;
	}
	r = kernel_ok(kernel);
	if (!r)
		r = cuv_current(&ctx);
	if (r)
		return r;
	r = lib_module(kernel->lib, &m);
	if (!r)
		r = cuModuleGetFunction(out, m, kernel->name);
	if (!r && cuv_thread_writable(t))
		cuv_kfunc_put(t, kernel, ctx, *out, gen);
	return r;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	return cuv_kernel_function(kernel, pFunc);
}

CUresult CUDAAPI cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	CUresult r;

	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	r = kernel_ok(kernel);
	if (!r)
		*pLib = kernel->lib;
	return r;
}

CUresult CUDAAPI cuKernelGetName(const char **name, CUkernel hfunc)
{
	CUresult r;

	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	r = kernel_ok(hfunc);
	if (!r)
		*name = hfunc->name;
	return r;
}

/* The kernel's function in the current context, which must be @dev's. */
static CUresult kernel_on(CUkernel kernel, CUdevice dev, struct CUfunc_st **f)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	if (ctx->ordinal != dev)
		return CUDA_ERROR_INVALID_DEVICE;
	return cuv_kernel_function(kernel, f);
}

CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
				      CUdevice dev)
{
	struct CUfunc_st *f;
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = kernel_on(kernel, dev, &f);
	return r ? r : cuFuncGetAttribute(pi, attrib, f);
}

CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val, CUkernel kernel,
				      CUdevice dev)
{
	struct CUfunc_st *f;
	CUresult r = kernel_on(kernel, dev, &f);

	return r ? r : cuFuncSetAttribute(f, attrib, val);
}

CUresult CUDAAPI cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset,
				      size_t *paramSize)
{
	struct CUfunc_st *f;
	CUresult r = cuv_kernel_function(kernel, &f);

	return r ? r : cuFuncGetParamInfo(f, paramIndex, paramOffset, paramSize);
}
