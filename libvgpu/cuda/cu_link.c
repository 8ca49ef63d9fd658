// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: the JIT linker API (cuLink*) over libvgpu's PTX linker
 * (vgpu_ptx_link, docs/ptx.md "Linking").
 *
 * cuLinkAddData takes PTX (CU_JIT_INPUT_PTX) and the PTX of a fatbin
 * (CU_JIT_INPUT_FATBINARY), each parsed at once (its own errors:
 * CUDA_ERROR_INVALID_PTX, the error log naming it) and linked with the
 * modules before it as far as they go (a symbol defined twice, an .extern
 * of the wrong size: CUDA_ERROR_INVALID_SOURCE there, and again at
 * cuLinkComplete, as an H200's driver answers: tests/cuda/real-gpu/
 * link-h200-2026-11-30); a cubin is SASS, which vGPU cannot run
 * (CUDA_ERROR_NO_BINARY_FOR_GPU, as cuModuleLoadData answers a cubin; a
 * buffer that is not an ELF image CUDA_ERROR_INVALID_IMAGE); host objects,
 * libraries and NVVM IR are CUDA_ERROR_NOT_SUPPORTED.  cuLinkComplete
 * links the inputs, compiles the result (so its errors come here, not at
 * load) and returns the linked PTX text as the image: cuModuleLoadData
 * takes it, and it is owned by the state until cuLinkDestroy.  A link
 * error (an undefined or doubly defined symbol) is
 * CUDA_ERROR_INVALID_SOURCE, one that the linked PTX does not compile for
 * vGPU CUDA_ERROR_INVALID_PTX, the message in the error log.  A link of
 * no input completes with an image of no kernel, as on the H200.
 * CU_JIT_ERROR_LOG_BUFFER(_SIZE_BYTES) and CU_JIT_INFO_LOG_BUFFER(_SIZE_BYTES)
 * of cuLinkCreate get the messages; the _SIZE_BYTES values are set to the
 * bytes written, as CUDA's are (the option arrays must outlive the state).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu_fatbin.h"
#include "cuda_priv.h"

struct CUlinkState_st {
	char **srcs;
	size_t *lens;
	char **names;
	int n, cap;
	char *errlog, *infolog;
	size_t errlen, infolen;
	void **errlen_out, **infolen_out; /* the caller's _SIZE_BYTES values */
	size_t errused, infoused;
	char *image;
	size_t image_len;
};

__attribute__((format(printf, 3, 4))) static void lk_log(struct CUlinkState_st *st, bool err,
							  const char *fmt, ...)
{
	char *buf = err ? st->errlog : st->infolog;
	size_t cap = err ? st->errlen : st->infolen, *used = err ? &st->errused : &st->infoused;
	void **out = err ? st->errlen_out : st->infolen_out;
	va_list ap;
	int k;

	if (!buf || !cap || *used + 1 >= cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *used, cap - *used, fmt, ap);
	va_end(ap);
	if (k > 0)
		*used += (size_t)k < cap - *used ? (size_t)k : cap - *used - 1;
	if (out)
		*out = (void *)(uintptr_t)(*used + 1);
}

CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options,
					    void **optionValues, CUlinkState *stateOut)
{
	struct CUlinkState_st *st;
	struct CUctx_st *ctx;
	CUresult r;

	if (!stateOut || (numOptions && (!options || !optionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (r)
		return r;
	for (unsigned int i = 0; i < numOptions; i++)
		if ((int)options[i] < 0 || options[i] >= CU_JIT_NUM_OPTIONS)
			return CUDA_ERROR_INVALID_VALUE;
	st = calloc(1, sizeof(*st));
	if (!st)
		return CUDA_ERROR_OUT_OF_MEMORY;
	for (unsigned int i = 0; i < numOptions; i++) {
		switch (options[i]) {
		case CU_JIT_ERROR_LOG_BUFFER:
			st->errlog = optionValues[i];
			break;
		case CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES:
			st->errlen = (size_t)(uintptr_t)optionValues[i];
			st->errlen_out = &optionValues[i];
			break;
		case CU_JIT_INFO_LOG_BUFFER:
			st->infolog = optionValues[i];
			break;
		case CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES:
			st->infolen = (size_t)(uintptr_t)optionValues[i];
			st->infolen_out = &optionValues[i];
			break;
		default: /* they tune a compiler vGPU does not have: accepted */
			break;
		}
	}
	if (st->errlog && st->errlen)
		st->errlog[0] = '\0';
	if (st->infolog && st->infolen)
		st->infolog[0] = '\0';
	cuv_handle_add(st, CUV_LINK);
	*stateOut = st;
	return CUDA_SUCCESS;
}

/* Keep a copy of module @ptx (@len bytes) called @name in @st */
static CUresult add_src(struct CUlinkState_st *st, const char *ptx, size_t len,
			const char *name)
{
	char *copy, *nm;

	if (st->n == st->cap) {
		int ncap = st->cap ? 2 * st->cap : 8;
		char **s = realloc(st->srcs, (size_t)ncap * sizeof(*s));
		size_t *l;
		char **nms;

		if (!s)
			return CUDA_ERROR_OUT_OF_MEMORY;
		st->srcs = s;
		l = realloc(st->lens, (size_t)ncap * sizeof(*l));
		if (!l)
			return CUDA_ERROR_OUT_OF_MEMORY;
		st->lens = l;
		nms = realloc(st->names, (size_t)ncap * sizeof(*nms));
		if (!nms)
			return CUDA_ERROR_OUT_OF_MEMORY;
		st->names = nms;
		st->cap = ncap;
	}
	copy = malloc(len + 1);
	nm = strdup(name);
	if (!copy || !nm) {
		free(copy);
		free(nm);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	memcpy(copy, ptx, len);
	copy[len] = '\0';
	st->srcs[st->n] = copy;
	st->lens[st->n] = len;
	st->names[st->n++] = nm;
	return CUDA_SUCCESS;
}

static CUresult add_ptx(struct CUlinkState_st *st, const char *ptx, size_t len, const char *name)
{
	char log[4096] = "", *out = NULL;
	const char *srcs[1] = { ptx };
	const char *names[1] = { name };
	CUresult r;
	int ret;

	/* the module's own errors now, as CUDA compiles PTX here */
	ret = vgpu_ptx_link(1, srcs, &len, names, VGPU_PTX_LINK_CHECK, &out, NULL, log,
			    sizeof(log));
	free(out);
	if (ret == -ENOMEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ret) {
		lk_log(st, true, "%s", log);
		return CUDA_ERROR_INVALID_PTX;
	}
	r = add_src(st, ptx, len, name);
	if (r || st->n < 2)
		return r;
	/* linked with those before it: what they define between them */
	ret = vgpu_ptx_link(st->n, (const char *const *)st->srcs, st->lens,
			    (const char *const *)st->names, VGPU_PTX_LINK_PARTIAL, &out, NULL, log,
			    sizeof(log));
	if (ret == -ENOMEM)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ret) {
		lk_log(st, true, "%s", log);
		return CUDA_ERROR_INVALID_SOURCE; /* kept: cuLinkComplete fails too */
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data,
					     size_t size, const char *name,
					     unsigned int numOptions, CUjit_option *options,
					     void **optionValues)
{
	char *ptx = NULL;
	size_t len;
	CUresult r;

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!state || !cuv_handle_ok(state, CUV_LINK))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!data || !size || (numOptions && (!options || !optionValues)))
		return CUDA_ERROR_INVALID_VALUE;
	if (!name || !name[0])
		name = "<input>";
	switch (type) {
	case CU_JIT_INPUT_PTX:
		len = strnlen(data, size);
		return add_ptx(state, data, len, name);
	case CU_JIT_INPUT_FATBINARY:
		r = cuv_fatbin_ptx(data, size, &ptx, &len);
		if (r == CUDA_ERROR_NOT_FOUND)
			r = CUDA_ERROR_INVALID_IMAGE;
		if (r) {
			lk_log(state, true, "%s: %s\n", name,
			       r == CUDA_ERROR_NO_BINARY_FOR_GPU ?
				       "the fatbin holds no PTX (vGPU runs PTX: build with "
				       "-gencode arch=compute_XX,code=compute_XX)" :
				       "not a fatbin");
			return r;
		}
		r = add_ptx(state, ptx, len, name);
		free(ptx);
		return r;
	case CU_JIT_INPUT_CUBIN:
		if (size < 4 || memcmp(data, "\177ELF", 4)) {
			lk_log(state, true, "%s: not an ELF image\n", name);
			return CUDA_ERROR_INVALID_IMAGE;
		}
		lk_log(state, true,
		       "%s: a cubin is SASS, which vGPU cannot run: link its PTX instead\n", name);
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	case CU_JIT_INPUT_OBJECT:
	case CU_JIT_INPUT_LIBRARY:
	case CU_JIT_INPUT_NVVM:
		lk_log(state, true,
		       "%s: vGPU links PTX and fatbins only, not %s\n", name,
		       type == CU_JIT_INPUT_NVVM ? "NVVM IR (LTO)" :
		       type == CU_JIT_INPUT_OBJECT ? "host objects" : "libraries");
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type,
					     const char *path, unsigned int numOptions,
					     CUjit_option *options, void **optionValues)
{
	char *buf;
	size_t size;
	CUresult r;

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!state || !cuv_handle_ok(state, CUV_LINK))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!path)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_read_file(path, &buf, &size);
	if (r) {
		lk_log(state, true, "%s: cannot %s the file\n", path,
		       r == CUDA_ERROR_OUT_OF_MEMORY ? "hold" : "open");
		return r;
	}
	r = cuLinkAddData(state, type, buf, size, path, numOptions, options, optionValues);
	free(buf);
	return r;
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
	char log[8192] = "", *out = NULL;
	size_t len = 0;
	int ret;

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!state || !cuv_handle_ok(state, CUV_LINK))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!cubinOut)
		return CUDA_ERROR_INVALID_VALUE;
	free(state->image);
	state->image = NULL;
	if (!state->n) { /* an image of no kernel, as on the H200 */
		static const char empty[] = ".version 8.0\n.target sm_90a\n.address_size 64\n";

		out = strdup(empty);
		if (!out)
			return CUDA_ERROR_OUT_OF_MEMORY;
		len = sizeof(empty) - 1;
		lk_log(state, false, "vgpu: nothing was added: an image of no kernel\n");
		goto done;
	}
	ret = vgpu_ptx_link(state->n, (const char *const *)state->srcs, state->lens,
			    (const char *const *)state->names, 0, &out, &len, log, sizeof(log));
	if (ret) {
		lk_log(state, true, "%s", log);
		return ret == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY :
		       ret == -ENOENT ? CUDA_ERROR_INVALID_SOURCE :
					CUDA_ERROR_INVALID_PTX;
	}
	/* compiled now, its errors here (and in libvgpu's cache for the load) */
	ret = vgpu_ptx_compile(out, len, VGPU_PTX_LINKED_NAME, NULL, NULL, NULL, log,
			       sizeof(log));
	if (ret) {
		vgpu_ptx_link_map_log(out, len, log, sizeof(log)); /* each input's lines */
		lk_log(state, true, "%s", log);
		free(out);
		return ret == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_PTX;
	}
	lk_log(state, false, "vgpu: linked %d PTX module%s into %zu bytes of PTX\n", state->n,
	       state->n == 1 ? "" : "s", len);
done:
	state->image = out;
	state->image_len = len + 1;
	*cubinOut = out;
	if (sizeOut)
		*sizeOut = state->image_len;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!state || !cuv_handle_ok(state, CUV_LINK))
		return CUDA_ERROR_INVALID_HANDLE;
	cuv_handle_del(state);
	for (int i = 0; i < state->n; i++) {
		free(state->srcs[i]);
		free(state->names[i]);
	}
	free(state->srcs);
	free(state->lens);
	free(state->names);
	free(state->image);
	free(state);
	return CUDA_SUCCESS;
}
