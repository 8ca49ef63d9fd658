// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: contexts.  Each thread has its own stack of current
 * contexts, as in CUDA; a context opens its own vgpu_device (its own GPU
 * address space) and owns the allocations, modules, streams and events
 * made in it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_priv.h"

/* serialises cuDevicePrimaryCtxReset with the retain that makes it again
 * (taken before cuv_lock) */
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
/* context ids are unique in the process (cuCtxGetId) */
static atomic_ullong next_ctx_id = 1;

CUresult cuv_current(struct CUctx_st **out)
{
	return cuv_current_checked(cuv_self(), out);
}

CUresult cuv_ctx_init(struct CUctx_st *ctx)
{
	int ret = vgpu_device_open(ctx->cudev->open_name, &ctx->dev);
	CUresult r;

	if (ret) {
		cuv_warn("cannot open vGPU device %s: %s", ctx->cudev->open_name,
			 strerror(-ret));
		return cuv_errno(ret);
	}
	ctx->limit_printf = 1u << 20;
	ctx->limit_stack = 1024;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream_new(ctx, 0, 0, true, &ctx->null_stream);
	pthread_mutex_unlock(&ctx->lock);
	if (r) {
		vgpu_device_close(ctx->dev);
		ctx->dev = NULL;
	} else {
		ctx->inactive = false;
	}
	return r;
}

/* Frees everything made in the context (its handles become invalid). */
void cuv_ctx_fini(struct CUctx_st *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	cuv_ctx_sync_locked(ctx);
	cuv_modules_free(ctx);
	cuv_events_free(ctx);
	cuv_streams_free(ctx);
	ctx->null_stream = NULL;
	for (int i = 0; i < 4; i++) {
		vgpu_queue_free(ctx->prio_queue[i]);
		ctx->prio_queue[i] = NULL;
	}
	cuv_allocs_free(ctx);
	pthread_mutex_unlock(&ctx->lock);
	vgpu_device_close(ctx->dev);
	ctx->dev = NULL;
}

static CUresult ctx_new(CUdevice dev, unsigned int flags, bool primary,
			struct CUctx_st **out)
{
	struct cuv_device *d;
	struct CUctx_st *ctx;
	CUresult r = cuv_device(dev, &d);

	if (r)
		return r;
	if (flags & ~(unsigned int)CU_CTX_FLAGS_MASK)
		return CUDA_ERROR_INVALID_VALUE;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	ctx->cudev = d;
	ctx->ordinal = dev;
	ctx->id = atomic_fetch_add(&next_ctx_id, 1);
	ctx->flags = flags;
	ctx->primary = primary;
	pthread_mutex_init(&ctx->lock, NULL);
	r = cuv_ctx_init(ctx);
	if (r) {
		pthread_mutex_destroy(&ctx->lock);
		free(ctx);
		return r;
	}
	cuv_handle_add(ctx, CUV_CTX);
	*out = ctx;
	return CUDA_SUCCESS;
}

static void ctx_free(struct CUctx_st *ctx)
{
	cuv_handle_del(ctx);
	if (!ctx->inactive) /* else cuDevicePrimaryCtxReset did it */
		cuv_ctx_fini(ctx);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

static CUresult push(struct CUctx_st *ctx)
{
	struct cuv_thread *t = cuv_self();

	if (!cuv_thread_writable(t) || t->ctx_depth == CUV_CTX_STACK)
		return CUDA_ERROR_OUT_OF_MEMORY;
	t->ctx_stack[t->ctx_depth++] = ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags,
			     CUdevice dev)
{
	struct CUctx_st *ctx;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (params && (params->numExecAffinityParams || params->cigParams)) {
		cuv_warn("cuCtxCreate: execution affinity and CIG parameters are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (cuv_initialized() && cuv_sticky())
		return cuv_sticky(); /* as CUDA's: no new context after a device exception */
	r = ctx_new(dev, flags, false, &ctx);
	if (r)
		return r;
	r = push(ctx);
	if (r) {
		ctx_free(ctx);
		return r;
	}
	*pctx = ctx;
	return CUDA_SUCCESS;
}

/* The CUDA 11.x and 12.x signatures, for cuGetProcAddress callers. */
CUV_EXPORT CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
	return cuCtxCreate(pctx, NULL, flags, dev);
}

CUV_EXPORT CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, void *paramsArray, int numParams,
					   unsigned int flags, CUdevice dev);
CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, void *paramsArray, int numParams,
				unsigned int flags, CUdevice dev)
{
	if (numParams) {
		cuv_warn("cuCtxCreate: execution affinity parameters are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	return cuCtxCreate(pctx, NULL, flags, dev);
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
	struct cuv_thread *t = cuv_self();

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE; /* as CUDA's */
	if (!cuv_handle_ok(ctx, CUV_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx->primary)
		return CUDA_ERROR_INVALID_CONTEXT; /* cuDevicePrimaryCtxRelease's */
	/* off this thread's stack (other threads' stacks see it dead) */
	for (int i = 0; i < t->ctx_depth; i++)
		if (t->ctx_stack[i] == ctx) {
			memmove(&t->ctx_stack[i], &t->ctx_stack[i + 1],
				(size_t)(t->ctx_depth - i - 1) * sizeof(t->ctx_stack[0]));
			t->ctx_depth--;
			i--;
		}
	ctx_free(ctx);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx)
		return CUDA_ERROR_INVALID_VALUE; /* as CUDA's */
	if (!cuv_handle_ok(ctx, CUV_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	return push(ctx);
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *pctx)
{
	struct cuv_thread *t = cuv_self();

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!t->ctx_depth) /* cuv_thread_none's too */
		return CUDA_ERROR_INVALID_CONTEXT;
	t->ctx_depth--;
	if (pctx)
		*pctx = t->ctx_stack[t->ctx_depth];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
	struct cuv_thread *t = cuv_self();

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!ctx) {
		if (t->ctx_depth) /* not cuv_thread_none's */
			t->ctx_depth--;
		return CUDA_SUCCESS;
	}
	if (!cuv_handle_ok_in(t, ctx, CUV_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!cuv_thread_writable(t))
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (t->ctx_depth)
		t->ctx_stack[t->ctx_depth - 1] = ctx;
	else
		t->ctx_stack[t->ctx_depth++] = ctx;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	*pctx = cuv_current_unchecked();
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
	struct CUctx_st *ctx;
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (r)
		return r;
	*device = ctx->ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags)
{
	struct CUctx_st *ctx;
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (r)
		return r;
	*flags = ctx->flags;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version)
{
	CUresult r;

	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx) {
		r = cuv_current(&ctx);
		if (r)
			return r;
	} else if (!cuv_handle_ok(ctx, CUV_CTX)) {
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	*version = 13000;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
	CUresult r;

	if (!ctxId)
		return CUDA_ERROR_INVALID_VALUE;
	if (!ctx) {
		r = cuv_current(&ctx);
		if (r)
			return r;
	} else if (!cuv_handle_ok(ctx, CUV_CTX)) {
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	*ctxId = ctx->id;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_ctx_sync_locked(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

/* CUDA's numbers: 0 the least priority, -2 the greatest (vGPU: NORMAL..REALTIME). */
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	if (leastPriority)
		*leastPriority = 0;
	if (greatestPriority)
		*greatestPriority = -2;
	return CUDA_SUCCESS;
}

#define CUV_HEAP_MIN (4ull << 20) /* the least heap CUDA 13 makes on an H200 */

static size_t *limit_of(struct CUctx_st *ctx, CUlimit limit)
{
	switch (limit) {
	case CU_LIMIT_PRINTF_FIFO_SIZE:
		return &ctx->limit_printf;
	case CU_LIMIT_STACK_SIZE:
		return &ctx->limit_stack;
	default:
		return NULL;
	}
}

CUresult CUDAAPI cuCtxGetLimit(size_t *pvalue, CUlimit limit)
{
	struct CUctx_st *ctx;
	CUresult r;
	size_t *l;

	if (!pvalue)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (r)
		return r;
	if (limit == CU_LIMIT_MALLOC_HEAP_SIZE) { /* the device heap's */
		uint64_t bytes;

		if (vgpu_device_heap_size(ctx->dev, &bytes))
			return CUDA_ERROR_INVALID_CONTEXT;
		*pvalue = (size_t)bytes;
		return CUDA_SUCCESS;
	}
	if (limit == CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) { /* device-side launch */
		uint32_t n;

		if (vgpu_device_cdp_pending(ctx->dev, &n))
			return CUDA_ERROR_INVALID_CONTEXT;
		*pvalue = n;
		return CUDA_SUCCESS;
	}
	l = limit_of(ctx, limit);
	if (!l)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	*pvalue = *l;
	return CUDA_SUCCESS;
}

/*
 * Recorded and reported; vGPU's printf buffer is 1 MiB per launch whatever
 * is set.  CU_LIMIT_MALLOC_HEAP_SIZE sizes the device heap (docs/cuda.md):
 * below 4 MiB it is 4 MiB (as an H200 with CUDA 13 rounds it); over 4 GiB,
 * or once a kernel that calls malloc or free has been launched in the
 * context (as CUDA documents), CUDA_ERROR_INVALID_VALUE.
 * CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT sizes the device-launch area
 * (libvgpu/cdp.c: 32..65536, a smaller value is 32 as on an H200
 * (tests/cuda/real-gpu/cdp-h200-2026-11-30/probe_depth_limit); above 2048
 * only before the first launch of a kernel that launches kernels).
 */
#define CUV_CDP_MIN_PENDING 32u

CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);
	size_t *l;

	if (r)
		return r;
	if (limit == CU_LIMIT_MALLOC_HEAP_SIZE) {
		uint64_t bytes = value < CUV_HEAP_MIN ? CUV_HEAP_MIN : value;

		return vgpu_device_set_heap_size(ctx->dev, bytes) ? CUDA_ERROR_INVALID_VALUE :
								   CUDA_SUCCESS;
	}
	if (limit == CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT) { /* the device-launch area's */
		/* below 32 it is 32, as an H200 reads it back */
		size_t n = value < CUV_CDP_MIN_PENDING ? CUV_CDP_MIN_PENDING : value;

		return n > VGPU_CDP_MAX_PENDING || vgpu_device_set_cdp_pending(ctx->dev, (uint32_t)n) ?
			       CUDA_ERROR_INVALID_VALUE :
			       CUDA_SUCCESS;
	}
	l = limit_of(ctx, limit);
	if (!l)
		return CUDA_ERROR_UNSUPPORTED_LIMIT;
	*l = value;
	return CUDA_SUCCESS;
}

/* vGPU has no L1 to trade against shared memory: kept for the occupancy arithmetic. */
CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache config)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	if ((unsigned int)config > CU_FUNC_CACHE_PREFER_EQUAL)
		return CUDA_ERROR_INVALID_VALUE;
	ctx->cache_config = config;
	/* the device runtime's occupancy tables of its modules */
	pthread_mutex_lock(&ctx->lock);
	for (struct CUmod_st *m = ctx->modules; m; m = m->next)
		for (unsigned int i = 0; i < m->nfuncs; i++)
			cuv_devrt_occ_refresh(&m->funcs[i]);
	pthread_mutex_unlock(&ctx->lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *pconfig)
{
	struct CUctx_st *ctx;
	CUresult r;

	if (!pconfig)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (!r)
		*pconfig = ctx->cache_config;
	return r;
}

/* ---- primary contexts ---- */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	struct cuv_device *d;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	if (cuv_sticky())
		return cuv_sticky(); /* as CUDA's, even after cuDevicePrimaryCtxReset */
	pthread_mutex_lock(&primary_lock);
	pthread_mutex_lock(&cuv_lock);
	if (d->primary && d->primary->inactive) { /* reset: make it again */
		struct CUctx_st *ctx = d->primary;

		pthread_mutex_unlock(&cuv_lock); /* cuv_ctx_init takes it */
		r = cuv_ctx_init(ctx);
		if (r) {
			pthread_mutex_unlock(&primary_lock);
			return r;
		}
		pthread_mutex_lock(&cuv_lock);
	}
	pthread_mutex_unlock(&primary_lock);
	if (!d->primary) {
		struct CUctx_st *ctx;

		pthread_mutex_unlock(&cuv_lock); /* ctx_new takes it */
		r = ctx_new(dev, d->primary_flags, true, &ctx);
		if (r)
			return r;
		pthread_mutex_lock(&cuv_lock);
		if (d->primary) { /* another thread was first */
			pthread_mutex_unlock(&cuv_lock);
			ctx_free(ctx);
			pthread_mutex_lock(&cuv_lock);
		} else {
			d->primary = ctx;
		}
	}
	d->primary_refs++;
	*pctx = d->primary;
	pthread_mutex_unlock(&cuv_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
	struct CUctx_st *ctx = NULL;
	struct cuv_device *d;
	CUresult r = cuv_device(dev, &d);

	if (r)
		return r;
	pthread_mutex_lock(&primary_lock);
	pthread_mutex_lock(&cuv_lock);
	if (!d->primary_refs) {
		pthread_mutex_unlock(&cuv_lock);
		pthread_mutex_unlock(&primary_lock);
		return CUDA_ERROR_INVALID_CONTEXT;
	}
	if (!--d->primary_refs) {
		ctx = d->primary;
		d->primary = NULL;
	}
	pthread_mutex_unlock(&cuv_lock);
	if (ctx)
		ctx_free(ctx);
	pthread_mutex_unlock(&primary_lock);
	return CUDA_SUCCESS;
}

/*
 * Frees everything of the primary context and leaves it inactive, as
 * CUDA's: the handle stays valid and retained (the references are kept),
 * calls made with it current return CUDA_ERROR_CONTEXT_IS_DESTROYED until
 * cuDevicePrimaryCtxRetain makes it again.
 */
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev)
{
	struct CUctx_st *ctx;
	struct cuv_device *d;
	CUresult r = cuv_device(dev, &d);

	if (r)
		return r;
	pthread_mutex_lock(&primary_lock);
	pthread_mutex_lock(&cuv_lock);
	ctx = d->primary;
	pthread_mutex_unlock(&cuv_lock);
	if (ctx && !ctx->inactive) {
		ctx->inactive = true;
		cuv_ctx_fini(ctx); /* takes cuv_lock (the handle registry) */
	}
	pthread_mutex_unlock(&primary_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags)
{
	struct cuv_device *d;
	CUresult r = cuv_device(dev, &d);

	if (r)
		return r;
	if (flags & ~(unsigned int)CU_CTX_FLAGS_MASK)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&cuv_lock);
	d->primary_flags = flags;
	if (d->primary)
		d->primary->flags = flags;
	pthread_mutex_unlock(&cuv_lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
	struct cuv_device *d;
	CUresult r;

	if (!flags || !active)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	pthread_mutex_lock(&cuv_lock);
	*flags = d->primary_flags;
	*active = d->primary && !d->primary->inactive;
	pthread_mutex_unlock(&cuv_lock);
	return CUDA_SUCCESS;
}
