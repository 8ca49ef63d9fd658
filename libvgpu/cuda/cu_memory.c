// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: memory.  Device memory is a vgpu buffer object whose GPU
 * address is the CUdeviceptr; host memory (cuMemAllocHost, cuMemHostAlloc)
 * is a buffer object too, mapped on the host, so that kernels reach it
 * through cuMemHostGetDevicePointer on either backend.  Managed memory
 * (cuMemAllocManaged) is device memory mapped on the host a second time, at
 * its device address, so that the CUdeviceptr is the host pointer too
 * (vgpu_bo_map_at_gpu_address).  Copies and memsets
 * run on the host through the buffers' mappings, after the work that
 * precedes them on their stream (docs/cuda.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_priv.h"

/* index of the first allocation with va > @va */
static size_t upper(const struct CUctx_st *ctx, uint64_t va)
{
	size_t lo = 0, hi = ctx->nallocs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ctx->allocs[mid].va <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

CUresult cuv_alloc_add(struct CUctx_st *ctx, const struct cuv_alloc *a)
{
	size_t i;

	if (ctx->nallocs == ctx->allocs_cap) {
		size_t cap = ctx->allocs_cap ? ctx->allocs_cap * 2 : 64;
		struct cuv_alloc *n = realloc(ctx->allocs, cap * sizeof(*n));

		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		ctx->allocs = n;
		ctx->allocs_cap = cap;
	}
	i = upper(ctx, a->va);
	memmove(&ctx->allocs[i + 1], &ctx->allocs[i], (ctx->nallocs - i) * sizeof(*a));
	ctx->allocs[i] = *a;
	ctx->nallocs++;
	return CUDA_SUCCESS;
}

struct cuv_alloc *cuv_alloc_find(struct CUctx_st *ctx, uint64_t va, uint64_t len)
{
	size_t i = upper(ctx, va);
	struct cuv_alloc *a;

	if (!i)
		return NULL;
	a = &ctx->allocs[i - 1];
	if (va - a->va >= a->size || len > a->size - (va - a->va))
		return NULL;
	return a;
}

static void alloc_remove(struct CUctx_st *ctx, size_t i)
{
	vgpu_bo_free(ctx->allocs[i].bo);
	memmove(&ctx->allocs[i], &ctx->allocs[i + 1],
		(ctx->nallocs - i - 1) * sizeof(ctx->allocs[0]));
	ctx->nallocs--;
}

/* A module's data buffer belongs to its program: only forget it. */
void cuv_alloc_remove_bo(struct CUctx_st *ctx, struct vgpu_bo *bo)
{
	for (size_t i = 0; i < ctx->nallocs; i++)
		if (ctx->allocs[i].bo == bo) {
			memmove(&ctx->allocs[i], &ctx->allocs[i + 1],
				(ctx->nallocs - i - 1) * sizeof(ctx->allocs[0]));
			ctx->nallocs--;
			return;
		}
}

void cuv_allocs_free(struct CUctx_st *ctx)
{
	for (size_t i = 0; i < ctx->nallocs; i++)
		if (ctx->allocs[i].kind != CUV_ALLOC_MODULE)
			vgpu_bo_free(ctx->allocs[i].bo);
	free(ctx->allocs);
	ctx->allocs = NULL;
	ctx->nallocs = ctx->allocs_cap = 0;
}

/*
 * Map *@bo on the host at its device address.  When the host already has
 * something there (the program's own mappings, or another context's
 * managed memory: each context has its own device address space), keep
 * the buffer so that the device hands out another address, and try again
 * a few times; *@bo is then the buffer that got mapped.
 */
static int map_managed(struct CUctx_st *ctx, struct vgpu_bo **bo, void **map)
{
	enum { TRIES = 8 };
	struct vgpu_bo *taken[TRIES];
	unsigned int n = 0;
	int ret;

	for (;;) {
		ret = vgpu_bo_map_at_gpu_address(*bo, map);
		if (ret != -EEXIST || n == TRIES)
			break;
		taken[n++] = *bo;
		ret = vgpu_bo_new(ctx->dev, vgpu_bo_size(taken[0]), 0, bo);
		if (ret) {
			*bo = taken[--n];
			ret = -EEXIST;
			break;
		}
	}
	if (ret == -EEXIST || ret == -ENOMEM)
		cuv_warn("cuMemAllocManaged: the host already uses the device address range "
			 "0x%llx..0x%llx (+%llu bytes), or cannot map it: managed memory on "
			 "vGPU is mapped on the host at its device address (%s)",
			 (unsigned long long)vgpu_bo_gpu_address(*bo),
			 (unsigned long long)(vgpu_bo_gpu_address(*bo) + vgpu_bo_size(*bo)),
			 (unsigned long long)vgpu_bo_size(*bo), strerror(-ret));
	while (n)
		vgpu_bo_free(taken[--n]);
	return ret;
}

static CUresult alloc_bo(struct CUctx_st *ctx, size_t size, enum cuv_alloc_kind kind,
			 struct cuv_alloc *out)
{
	struct cuv_alloc a = { .size = size, .kind = kind };
	void *map;
	int ret;
	CUresult r;

	if (!size)
		return CUDA_ERROR_INVALID_VALUE;
	if (size > VGPU_BO_MAX_SIZE)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ret = vgpu_bo_new(ctx->dev, size, 0, &a.bo);
	if (ret)
		return ret == -EINVAL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
	ret = kind == CUV_ALLOC_MANAGED ? map_managed(ctx, &a.bo, &map) :
					  vgpu_bo_map(a.bo, &map);
	if (ret) {
		vgpu_bo_free(a.bo);
		return ret == -EEXIST ? CUDA_ERROR_OUT_OF_MEMORY : cuv_errno(ret);
	}
	a.map = map;
	a.va = vgpu_bo_gpu_address(a.bo);
	r = cuv_alloc_add(ctx, &a);
	if (r) {
		vgpu_bo_free(a.bo);
		return r;
	}
	*out = a;
	return CUDA_SUCCESS;
}

/* The current context, unless it carries a sticky error. */
static CUresult usable(struct CUctx_st **ctx)
{
	CUresult r = cuv_current(ctx);

	if (r)
		return r;
	return cuv_sticky();
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytesize)
{
	struct CUctx_st *ctx;
	struct cuv_alloc a;
	CUresult r;

	if (!dptr)
		return CUDA_ERROR_INVALID_VALUE;
	r = usable(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = alloc_bo(ctx, bytesize, CUV_ALLOC_DEVICE, &a);
	pthread_mutex_unlock(&ctx->lock);
	if (!r)
		*dptr = a.va;
	return r;
}

static CUresult free_kind(uint64_t va, enum cuv_alloc_kind kind, const char *what)
{
	struct CUctx_st *ctx;
	CUresult r = usable(&ctx);
	size_t i;

	if (r)
		return r;
	if (!va) /* as CUDA's: nothing to free */
		return CUDA_SUCCESS;
	pthread_mutex_lock(&ctx->lock);
	i = upper(ctx, va);
	if (!i || ctx->allocs[i - 1].va != va ||
	    (ctx->allocs[i - 1].kind != kind &&
	     !(kind == CUV_ALLOC_DEVICE && ctx->allocs[i - 1].kind == CUV_ALLOC_MANAGED))) {
		pthread_mutex_unlock(&ctx->lock);
		cuv_warn("%s(0x%llx): not the start of a live allocation (freed twice?)", what,
			 (unsigned long long)va);
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* as CUDA's, freeing waits for the work that may still use it */
	r = cuv_ctx_sync_locked(ctx);
	alloc_remove(ctx, i - 1);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* device and managed memory */
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr)
{
	return free_kind(dptr, CUV_ALLOC_DEVICE, "cuMemFree");
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr)
{
	struct CUctx_st *ctx;
	struct cuv_alloc *a;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	a = cuv_alloc_find(ctx, dptr, 0);
	if (a) {
		if (pbase)
			*pbase = a->va;
		if (psize)
			*psize = a->size;
	}
	pthread_mutex_unlock(&ctx->lock);
	return a ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
	struct CUctx_st *ctx;
	struct cuv_alloc a;
	CUresult r;

	if (!pp || (Flags & ~7u))
		return CUDA_ERROR_INVALID_VALUE;
	r = usable(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = alloc_bo(ctx, bytesize, CUV_ALLOC_HOST, &a);
	pthread_mutex_unlock(&ctx->lock);
	if (!r)
		*pp = a.map;
	return r;
}

CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

/* The host allocation holding @p (ctx->lock held), or NULL. */
static struct cuv_alloc *host_find(struct CUctx_st *ctx, const void *p)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < ctx->nallocs; i++) {
		struct cuv_alloc *a = &ctx->allocs[i];

		if (a->kind == CUV_ALLOC_HOST && b >= a->map && b < a->map + a->size)
			return a;
	}
	return NULL;
}

CUresult CUDAAPI cuMemFreeHost(void *p)
{
	struct CUctx_st *ctx;
	struct cuv_alloc *a;
	uint64_t va = 0;
	CUresult r = usable(&ctx);

	if (r)
		return r;
	if (!p) /* as CUDA's: nothing to free */
		return CUDA_SUCCESS;
	pthread_mutex_lock(&ctx->lock);
	a = host_find(ctx, p);
	if (a && a->map == p)
		va = a->va;
	pthread_mutex_unlock(&ctx->lock);
	if (!va) {
		cuv_warn("cuMemFreeHost(%p): not host memory of this context (freed twice?)", p);
		return CUDA_ERROR_INVALID_VALUE;
	}
	return free_kind(va, CUV_ALLOC_HOST, "cuMemFreeHost");
}

CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int Flags)
{
	struct CUctx_st *ctx;
	struct cuv_alloc *a;
	CUresult r;

	if (!pdptr || !p || Flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	a = host_find(ctx, p);
	if (a)
		*pdptr = a->va + (uint64_t)((uint8_t *)p - a->map);
	pthread_mutex_unlock(&ctx->lock);
	return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
				       CUdeviceptr ptr)
{
	struct CUctx_st *ctx;
	struct cuv_alloc *a, copy;
	CUresult r;

	if (!data)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	a = cuv_alloc_find(ctx, ptr, 0);
	if (!a)
		a = host_find(ctx, (void *)(uintptr_t)ptr);
	if (a)
		copy = *a;
	pthread_mutex_unlock(&ctx->lock);
	if (!a)
		return CUDA_ERROR_INVALID_VALUE;
	switch (attribute) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = ctx;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data =
			copy.kind == CUV_ALLOC_HOST ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		*(CUdeviceptr *)data = copy.va;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		if (copy.kind != CUV_ALLOC_HOST && copy.kind != CUV_ALLOC_MANAGED)
			return CUDA_ERROR_INVALID_VALUE;
		*(void **)data = copy.map;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
		*(int *)data = copy.kind == CUV_ALLOC_MANAGED;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = ctx->ordinal;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = copy.va;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = copy.size;
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(int *)data = 1;
		break;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/* ---- copies and memsets ---- */

/*
 * The host address of [va, va + len): device memory through its mapping,
 * else (unified addressing) a host pointer, which @dev_only refuses.
 */
static CUresult resolve(struct CUctx_st *ctx, uint64_t va, size_t len, bool dev_only,
			uint8_t **out)
{
	struct cuv_alloc *a = cuv_alloc_find(ctx, va, len);

	if (a) {
		*out = a->map + (va - a->va);
		return CUDA_SUCCESS;
	}
	if (dev_only || !va) {
		cuv_warn("0x%llx (+%zu bytes) is not device memory of this context",
			 (unsigned long long)va, len);
		return CUDA_ERROR_INVALID_VALUE;
	}
	*out = (uint8_t *)(uintptr_t)va;
	return CUDA_SUCCESS;
}

/* dst/src: CUdeviceptr values; @dev_dst/@dev_src say which must be device memory */
static CUresult copy(uint64_t dst, bool dev_dst, uint64_t src, bool dev_src, size_t n,
		     CUstream hs, bool sync)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	uint8_t *d, *p;
	CUresult r;

	r = usable(&ctx);
	if (r)
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream(ctx, sync ? NULL : hs, &s);
	if (!r)
		r = resolve(ctx, dst, n, dev_dst, &d);
	if (!r)
		r = resolve(ctx, src, n, dev_src, &p);
	if (!r)
		r = cuv_stream_host_fence(s);
	if (!r)
		memmove(d, p, n);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
	return copy(dst, false, src, false, ByteCount, NULL, true);
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
			       CUstream hStream)
{
	return copy(dst, false, src, false, ByteCount, hStream, false);
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
	return copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount, NULL, true);
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount, NULL, true);
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
	return copy(dstDevice, true, srcDevice, true, ByteCount, NULL, true);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost,
				   size_t ByteCount, CUstream hStream)
{
	return copy(dstDevice, true, (uintptr_t)srcHost, false, ByteCount, hStream, false);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,
				   CUstream hStream)
{
	return copy((uintptr_t)dstHost, false, srcDevice, true, ByteCount, hStream, false);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
				   size_t ByteCount, CUstream hStream)
{
	return copy(dstDevice, true, srcDevice, true, ByteCount, hStream, false);
}

static CUresult memset_n(uint64_t dst, uint32_t value, unsigned int width, size_t n,
			 CUstream hs, bool sync)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	uint8_t *d;
	CUresult r;

	r = usable(&ctx);
	if (r)
		return r;
	if (!n)
		return CUDA_SUCCESS;
	if (dst % width || n > SIZE_MAX / width)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream(ctx, sync ? NULL : hs, &s);
	if (!r)
		r = resolve(ctx, dst, n * width, true, &d);
	if (!r)
		r = cuv_stream_host_fence(s);
	if (!r) {
		if (width == 1) {
			memset(d, (int)value, n);
		} else if (width == 2) {
			uint16_t v = (uint16_t)value;

			for (size_t i = 0; i < n; i++)
				memcpy(d + 2 * i, &v, 2);
		} else {
			for (size_t i = 0; i < n; i++)
				memcpy(d + 4 * i, &value, 4);
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
	return memset_n(dstDevice, uc, 1, N, NULL, true);
}

CUresult CUDAAPI cuMemsetD16(CUdeviceptr dstDevice, unsigned short us, size_t N)
{
	return memset_n(dstDevice, us, 2, N, NULL, true);
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
	return memset_n(dstDevice, ui, 4, N, NULL, true);
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
				 CUstream hStream)
{
	return memset_n(dstDevice, uc, 1, N, hStream, false);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
				  CUstream hStream)
{
	return memset_n(dstDevice, us, 2, N, hStream, false);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
				  CUstream hStream)
{
	return memset_n(dstDevice, ui, 4, N, hStream, false);
}

/* ---- pitched memory and 2-D copies ---- */

/* The pitch cuMemAllocPitch chooses: rows start 512-byte aligned
 * (CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT). */
#define CUV_PITCH_ALIGN 512

CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr *dptr, size_t *pPitch, size_t WidthInBytes,
				 size_t Height, unsigned int ElementSizeBytes)
{
	size_t pitch;
	CUresult r;

	if (!dptr || !pPitch || !WidthInBytes || !Height ||
	    (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	if (WidthInBytes > SIZE_MAX - CUV_PITCH_ALIGN)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pitch = (WidthInBytes + CUV_PITCH_ALIGN - 1) / CUV_PITCH_ALIGN * CUV_PITCH_ALIGN;
	if (Height > SIZE_MAX / pitch)
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = cuMemAlloc(dptr, pitch * Height);
	if (!r)
		*pPitch = pitch;
	return r;
}

/*
 * One side of a 2-D copy: its first byte on the host and the bytes it
 * spans (ctx->lock held).
 */
static CUresult side_2d(struct CUctx_st *ctx, CUmemorytype type, const void *host,
			CUdeviceptr dev, size_t x, size_t y, size_t pitch, size_t width,
			size_t height, uint8_t **out)
{
	uint64_t start, span;

	if (type == CU_MEMORYTYPE_ARRAY) {
		cuv_warn("cuMemcpy2D: CUDA arrays are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE &&
	    type != CU_MEMORYTYPE_UNIFIED)
		return CUDA_ERROR_INVALID_VALUE;
	if ((height > 1 && width > pitch) || (pitch && height > (UINT64_MAX - x) / pitch))
		return CUDA_ERROR_INVALID_VALUE;
	start = (uint64_t)y * pitch + x;
	span = (uint64_t)(height - 1) * pitch + width;
	if (type == CU_MEMORYTYPE_HOST) {
		if (!host)
			return CUDA_ERROR_INVALID_VALUE;
		*out = (uint8_t *)host + start;
		return CUDA_SUCCESS;
	}
	if (!dev)
		return CUDA_ERROR_INVALID_VALUE;
	return resolve(ctx, dev + start, span, type == CU_MEMORYTYPE_DEVICE, out);
}

static CUresult copy_2d(const CUDA_MEMCPY2D *c, CUstream hs, bool sync)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	uint8_t *d = NULL, *p = NULL;
	CUresult r;

	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	r = usable(&ctx);
	if (r || !c->WidthInBytes || !c->Height)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream(ctx, sync ? NULL : hs, &s);
	if (!r)
		r = side_2d(ctx, c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes,
			    c->dstY, c->dstPitch, c->WidthInBytes, c->Height, &d);
	if (!r)
		r = side_2d(ctx, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes,
			    c->srcY, c->srcPitch, c->WidthInBytes, c->Height, &p);
	if (!r)
		r = cuv_stream_host_fence(s);
	for (size_t row = 0; !r && row < c->Height; row++)
		memmove(d + row * c->dstPitch, p + row * c->srcPitch, c->WidthInBytes);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D *pCopy)
{
	return copy_2d(pCopy, NULL, true);
}

CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *pCopy)
{
	return copy_2d(pCopy, NULL, true);
}

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
	return copy_2d(pCopy, hStream, false);
}

/* ---- stream-ordered allocation: at once (allocating orders nothing) ---- */

CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r = usable(&ctx);

	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream(ctx, hStream, &s);
	pthread_mutex_unlock(&ctx->lock);
	return r ? r : cuMemAlloc(dptr, bytesize);
}

/* after the stream's earlier work (cuMemFree then waits for the rest) */
CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r = usable(&ctx);

	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream(ctx, hStream, &s);
	if (!r)
		r = cuv_stream_host_fence(s);
	pthread_mutex_unlock(&ctx->lock);
	return r ? r : cuMemFree(dptr);
}

/*
 * Managed memory: one pointer for the host and the device.  vGPU does not
 * migrate pages: the memory is the device's, mapped on the host at its
 * device address, and coherent as cuMemAllocHost's is: the host sees what
 * kernels wrote once they have completed (cuCtxSynchronize, an event, a
 * synchronous copy), and kernels see what the host wrote before their
 * launch (CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS is 0).  Both
 * attach flags give the same memory: no stream is ever kept from it.
 */
CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	struct CUctx_st *ctx;
	struct cuv_alloc a;
	CUresult r;

	if (!dptr || !bytesize ||
	    (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
		return CUDA_ERROR_INVALID_VALUE;
	r = usable(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = alloc_bo(ctx, bytesize, CUV_ALLOC_MANAGED, &a);
	pthread_mutex_unlock(&ctx->lock);
	if (!r)
		*dptr = a.va;
	return r;
}

/* ---- refused: memory vGPU's device cannot reach or share ---- */

CUresult CUDAAPI cuMemHostRegister(void *p, size_t bytesize, unsigned int Flags)
{
	if (!p || !bytesize)
		return CUDA_ERROR_INVALID_VALUE;
	cuv_warn("cuMemHostRegister: vGPU cannot map memory the program allocated for the "
		 "device; allocate it with cuMemAllocHost or cuMemHostAlloc instead");
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuMemHostUnregister(void *p)
{
	return p ? CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED : CUDA_ERROR_INVALID_VALUE;
}


