// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: kernel launches and tensor maps.  A launch is one
 * vgpu_kernel_launch() on the stream's queue (or, with a priority
 * attribute, on the context's queue of that priority), waiting for the
 * stream's previous point and its cuStreamWaitEvent points and signalling
 * the stream's next point (cu_stream.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cu_occupancy.h"
#include "cuda_priv.h"

static bool over(unsigned int v, unsigned int max)
{
	return !v || v > max;
}

static CUresult check_geometry(const struct CUfunc_st *f, struct cuv_launch *l,
			       const struct cuv_device *d)
{
	uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	unsigned int ncl;

	if (over(l->grid[0], CUV_MAX_GRID_X) || over(l->grid[1], CUV_MAX_GRID_YZ) ||
	    over(l->grid[2], CUV_MAX_GRID_YZ)) {
		cuv_warn("%s: grid %ux%ux%u out of range", f->name, l->grid[0], l->grid[1],
			 l->grid[2]);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (over(l->block[0], CUV_MAX_BLOCK_XY) || over(l->block[1], CUV_MAX_BLOCK_XY) ||
	    over(l->block[2], CUV_MAX_BLOCK_Z) ||
	    threads > d->info.param[VGPU_PARAM_MAX_THREADS]) {
		cuv_warn("%s: block %ux%ux%u: more than %llu threads or a dimension out of range",
			 f->name, l->block[0], l->block[1], l->block[2],
			 (unsigned long long)d->info.param[VGPU_PARAM_MAX_THREADS]);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (l->smem > (unsigned int)f->max_dyn_smem ||
	    (uint64_t)l->smem + f->smem_static > d->info.param[VGPU_PARAM_SMEM]) {
		cuv_warn("%s: %u bytes of dynamic shared memory: more than the function's "
			 "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (%d)", f->name, l->smem,
			 f->max_dyn_smem);
		return CUDA_ERROR_INVALID_VALUE;
	}
	ncl = l->cluster[0] * l->cluster[1] * l->cluster[2];
	if (f->req_cluster[0]) {
		/* the kernel's own shape (__cluster_dims__): used when none is
		 * given, and a given one must be it (as CUDA's launches check) */
		if (ncl > 1 && memcmp(l->cluster, f->req_cluster, sizeof(l->cluster))) {
			cuv_warn("%s: cluster %ux%ux%u: the kernel was compiled for %ux%ux%u "
				 "(__cluster_dims__)", f->name, l->cluster[0], l->cluster[1],
				 l->cluster[2], f->req_cluster[0], f->req_cluster[1],
				 f->req_cluster[2]);
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		}
		memcpy(l->cluster, f->req_cluster, sizeof(l->cluster));
		ncl = l->cluster[0] * l->cluster[1] * l->cluster[2];
	}
	if (ncl > 1) {
		if (!l->cluster[0] || !l->cluster[1] || !l->cluster[2] ||
		    ncl > VGPU_MAX_CLUSTER_CTAS || (ncl > 8 && !f->non_portable_cluster) ||
		    l->grid[0] % l->cluster[0] || l->grid[1] % l->cluster[1] ||
		    l->grid[2] % l->cluster[2]) {
			cuv_warn("%s: cluster %ux%ux%u does not tile grid %ux%ux%u or is larger than "
				 "%u CTAs (8 without CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED)",
				 f->name, l->cluster[0], l->cluster[1], l->cluster[2], l->grid[0],
				 l->grid[1], l->grid[2], VGPU_MAX_CLUSTER_CTAS);
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		}
	}
	/*
	 * A cooperative grid runs co-resident (VGPU_LAUNCH_COOPERATIVE): at
	 * most one CTA per SM (occupancy: one CTA an SM) and at most what the
	 * device runs at once, VGPU_MAX_CLUSTER_CTAS; in clusters of one.
	 */
	if (l->cooperative && ncl > 1) {
		cuv_warn("%s: a cooperative launch in clusters of %u CTAs is not supported",
			 f->name, ncl);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (l->cooperative &&
	    ((uint64_t)l->grid[0] * l->grid[1] * l->grid[2] > d->info.param[VGPU_PARAM_SMS] ||
	     (uint64_t)l->grid[0] * l->grid[1] * l->grid[2] > VGPU_MAX_CLUSTER_CTAS)) {
		cuv_warn("%s: a cooperative grid of %llu CTAs: more than the device holds at once "
			 "(%llu SMs, at most %u CTAs)", f->name,
			 (unsigned long long)l->grid[0] * l->grid[1] * l->grid[2],
			 (unsigned long long)d->info.param[VGPU_PARAM_SMS], VGPU_MAX_CLUSTER_CTAS);
		return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
	}
	return CUDA_SUCCESS;
}

static CUresult fill_args(const struct CUfunc_st *f, void **params, void **extra,
			  struct vgpu_args *args)
{
	const void *buf = NULL;
	size_t bufsize = 0;
	bool have_size = false;

	if (params && extra) {
		cuv_warn("%s: both kernelParams and extra given", f->name);
		return CUDA_ERROR_INVALID_VALUE;
	}
	if (extra) {
		for (unsigned int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
				buf = extra[i + 1];
			} else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
				bufsize = *(size_t *)extra[i + 1];
				have_size = true;
			} else {
				return CUDA_ERROR_INVALID_VALUE;
			}
		}
		if (!buf || !have_size || !bufsize) {
			cuv_warn("%s: extra needs CU_LAUNCH_PARAM_BUFFER_POINTER and a nonzero "
				 "CU_LAUNCH_PARAM_BUFFER_SIZE", f->name);
			return CUDA_ERROR_INVALID_VALUE;
		}
		/* more than the parameters: NVIDIA's driver refuses it (701 on
		 * the H200, tests/cuda/real-gpu/h200-2026-11-29/test_cuda_abi.log) */
		if (bufsize > f->user_bytes) {
			cuv_warn("%s: extra's buffer holds %zu bytes, the parameters take %u",
				 f->name, bufsize, f->user_bytes);
			return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
		}
		if (bufsize == f->user_bytes)
			return cuv_errno(vgpu_args_set_raw(args, 0, buf, f->user_bytes));
		/* CUDA launches with what it is given (NVIDIA's driver: success,
		 * the rest undefined); vGPU zeroes the rest and says so */
		cuv_warn("%s: extra's buffer holds %zu bytes, the parameters take %u: "
			 "the rest are zero", f->name, bufsize, f->user_bytes);
		for (size_t off = bufsize; off < f->user_bytes;) {
			static const uint8_t zero[256];
			size_t n = f->user_bytes - off < sizeof(zero) ? f->user_bytes - off :
									 sizeof(zero);

			if (vgpu_args_set_raw(args, (uint32_t)off, zero, (uint32_t)n))
				return CUDA_ERROR_INVALID_VALUE;
			off += n;
		}
		return cuv_errno(vgpu_args_set_raw(args, 0, buf, (uint32_t)bufsize));
	}
	if (f->nparams && !params) {
		cuv_warn("%s: takes %u parameters and kernelParams is NULL", f->name, f->nparams);
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (unsigned int i = 0; i < f->nparams; i++) {
		if (!params[i]) {
			cuv_warn("%s: kernelParams[%u] is NULL", f->name, i);
			return CUDA_ERROR_INVALID_VALUE;
		}
		if (vgpu_args_set_raw(args, f->param_off[i], params[i], f->param_size[i]))
			return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

/*
 * The grid workspace of a cooperative launch, as NVIDIA's driver passes
 * it: zeroed device memory whose address the kernel reads from %envreg1
 * (high word) and %envreg2 (low word) (CCCL's
 * cooperative_groups/details/driver_abi.h: struct grid_workspace { u32
 * wsSize; u32 barrier; }, the counter grid_group::sync() adds to,
 * details/sync.h).  Other launches get 0 there: grid.sync() traps, as on
 * the GPU.  *@ws: the buffer, freed once the job completes.
 */
static CUresult grid_workspace(struct CUctx_st *ctx, struct CUfunc_st *f, bool cooperative,
			       struct vgpu_args *args, struct vgpu_bo **ws)
{
	uint64_t va = 0;

	*ws = NULL;
	if (cooperative) {
		int ret = vgpu_bo_new(ctx->dev, 8, VGPU_BO_NO_EXEC, ws);

		if (ret)
			return ret == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : cuv_errno(ret);
		va = vgpu_bo_gpu_address(*ws);
	} else if (!f->args_envreg) {
		return CUDA_SUCCESS; /* 0 there already */
	}
	vgpu_args_set_envreg(args, 1, (uint32_t)(va >> 32));
	vgpu_args_set_envreg(args, 2, (uint32_t)va);
	f->args_envreg = cooperative;
	return CUDA_SUCCESS;
}

/* submit() sets each of these fields: a new one must be set there too */
#define CFG_ALIGN _Alignof(struct vgpu_launch_config)
_Static_assert(sizeof(struct vgpu_launch_config) ==
		       (offsetof(struct vgpu_launch_config, nsignal) + sizeof(unsigned int) +
			CFG_ALIGN - 1) / CFG_ALIGN * CFG_ALIGN,
	       "struct vgpu_launch_config changed: set its new fields in submit()");

/*
 * The job of a launch whose waits are known (ctx->lock held): submitted to
 * @q after @w, signalling @s's next point; on success the stream keeps it
 * and @ws (which may be NULL).
 */
CUV_HOT
static CUresult submit(struct CUfunc_st *f, const struct cuv_launch *l, struct CUstream_st *s,
		       struct vgpu_queue *q, struct vgpu_sync_point *w, unsigned int nw,
		       struct vgpu_args *args, struct vgpu_bo *ws)
{
	struct vgpu_launch_config cfg; /* every field set below (no rep stos per launch) */
	struct vgpu_sync_point sig = { s->tl, s->point + 1 };
	struct vgpu_job *job = NULL;
	int ret;

	for (int i = 0; i < 3; i++) {
		cfg.grid[i] = l->grid[i];
		cfg.block[i] = l->block[i];
		cfg.cluster[i] = l->cluster[i] ? l->cluster[i] : 1;
	}
	cfg.smem_bytes = l->smem;
	cfg.flags = l->cooperative ? VGPU_LAUNCH_COOPERATIVE : 0;
	cfg.queue = q;
	cfg.seed = 0;
	cfg.budget = 0;
	if (cuv_sched_random) {
		cfg.flags |= VGPU_LAUNCH_RANDOM_SCHED;
		cfg.seed = cuv_sched_seed + atomic_fetch_add_explicit(&cuv_sched_launches, 1,
								      memory_order_relaxed);
	}
	cfg.wait = w;
	cfg.nwait = nw;
	cfg.signal = &sig;
	cfg.nsignal = 1;
	ret = vgpu_kernel_launch(f->kernel, &cfg, args, &job);
	if (ret) {
		cuv_warn("%s: the launch was refused: %s", f->name, strerror(-ret));
		return ret == -EINVAL ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_LAUNCH_FAILED;
	}
	cuv_stream_launched(s, q, job, ws);
	return CUDA_SUCCESS;
}

/*
 * The launch of @f in @ctx, both checked: @ctx is the calling thread's
 * current context (@t its libcuda state), @f a live function of it.
 */
static CUresult launch_in(struct cuv_thread *t, struct CUctx_st *ctx, struct CUfunc_st *f,
			  struct cuv_launch *l, void **params, void **extra)
{
	struct vgpu_sync_point *w = NULL;
	struct vgpu_queue *q = NULL;
	struct CUstream_st *s;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *ws = NULL;
	unsigned int nw = 0;
	CUresult r = check_geometry(f, l, ctx->cudev);

	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	/*
	 * The function's argument block, kept for its next launch (the job
	 * took a copy); ctx->lock guards it, as f's module is ctx's.
	 */
	args = atomic_load_explicit(&f->args_cache, memory_order_relaxed);
	if (!args) {
		if (vgpu_args_new(f->kernel, &args))
			r = CUDA_ERROR_OUT_OF_MEMORY;
		else
			atomic_store_explicit(&f->args_cache, args, memory_order_relaxed);
		f->args_envreg = false;
		/* launch_fast() writes the parameters there itself */
		if (args) {
			void *b;

			f->args_bytes = vgpu_args_bytes(args, f->user_bytes, &b) ? NULL : b;
		}
	}
	if (!r)
		r = fill_args(f, params, extra, args);
	if (!r)
		r = grid_workspace(ctx, f, l->cooperative, args, &ws);
	if (!r)
		r = cuv_sticky();
	if (!r)
		r = cuv_stream_in(t, ctx, l->stream, &s);
	if (!r) {
		q = s->queue;
		if (l->has_priority) {
			uint32_t p = l->priority >= 0 ? VGPU_QUEUE_PRIORITY_NORMAL :
				     l->priority == -1 ? VGPU_QUEUE_PRIORITY_HIGH :
							 VGPU_QUEUE_PRIORITY_REALTIME;

			if (!ctx->prio_queue[p] &&
			    vgpu_queue_new(ctx->dev, p, &ctx->prio_queue[p]))
				ctx->prio_queue[p] = NULL; /* not allowed: the stream's queue */
			if (ctx->prio_queue[p])
				q = ctx->prio_queue[p];
		}
		r = cuv_stream_waits(s, q, &w, &nw);
	}
	if (!r && nw > VGPU_SUBMIT_MAX_SYNCS) { /* too many for one job: wait here */
		r = cuv_stream_host_fence(s);
		if (!r)
			r = cuv_stream_waits(s, q, &w, &nw);
	}
	if (!r) {
		r = submit(f, l, s, q, w, nw, args, ws);
		if (!r)
			ws = NULL; /* the stream's now */
	}
	pthread_mutex_unlock(&ctx->lock);
	if (ws)
		vgpu_bo_free(ws); /* not launched */
	return r;
}

/*
 * The common launch, its hot path kept short: a plain geometry (no
 * cluster, not cooperative, no priority), the parameters by kernelParams,
 * a created stream of @ctx or the legacy one, the function's argument
 * block made by an earlier launch, nothing sticky, few waits.  @ctx is the
 * calling thread's current context (@t its state), @f a live function of
 * it.  Anything else: CUV_SLOW, having changed nothing that launch_in(),
 * which the caller then runs, would not change the same way.
 */
CUV_HOT
static CUresult launch_fast(struct cuv_thread *t, struct CUctx_st *ctx, struct CUfunc_st *f,
			    const struct cuv_launch *l, void **params)
{
	const uint64_t *dp = ctx->cudev->info.param;
	struct vgpu_sync_point *w;
	struct vgpu_args *args;
	struct CUstream_st *s;
	CUstream h = l->stream;
	uint8_t *bytes;
	unsigned int nw;
	CUresult r;

	/* check_geometry()'s conditions (over(): 0 or above the limit) */
	if (l->grid[0] - 1 >= CUV_MAX_GRID_X || l->grid[1] - 1 >= CUV_MAX_GRID_YZ ||
	    l->grid[2] - 1 >= CUV_MAX_GRID_YZ || l->block[0] - 1 >= CUV_MAX_BLOCK_XY ||
	    l->block[1] - 1 >= CUV_MAX_BLOCK_XY || l->block[2] - 1 >= CUV_MAX_BLOCK_Z ||
	    (uint64_t)l->block[0] * l->block[1] * l->block[2] > dp[VGPU_PARAM_MAX_THREADS] ||
	    l->smem > (unsigned int)f->max_dyn_smem ||
	    (uint64_t)l->smem + f->smem_static > dp[VGPU_PARAM_SMEM] ||
	    (l->cluster[0] | l->cluster[1] | l->cluster[2] | f->req_cluster[0]) ||
	    l->cooperative || l->has_priority || (f->nparams && !params))
		return CUV_SLOW;
	pthread_mutex_lock(&ctx->lock);
	args = atomic_load_explicit(&f->args_cache, memory_order_relaxed);
	bytes = f->args_bytes;
	if (!args || !bytes || f->args_envreg || cuv_sticky())
		goto slow;
	/* the parameters written into the argument block (vgpu_args_bytes),
	 * the common sizes as one move each */
	for (unsigned int i = 0; i < f->nparams; i++) {
		uint8_t *to = bytes + f->param_off[i];
		const void *p = params[i];

		if (!p)
			goto slow;
		switch (f->param_size[i]) {
		case 4:
			memcpy(to, p, 4);
			break;
		case 8:
			memcpy(to, p, 8);
			break;
		default:
			memcpy(to, p, f->param_size[i]);
			break;
		}
	}
	if (!h || h == CU_STREAM_LEGACY)
		s = ctx->null_stream;
	else if (h != CU_STREAM_PER_THREAD && cuv_handle_seen(t, h, CUV_STREAM) && h->ctx == ctx)
		s = h;
	else
		goto slow;
	if (cuv_stream_nothing_pending(s)) {
		w = NULL;
		nw = 0;
	} else if (cuv_stream_waits(s, s->queue, &w, &nw) || nw > VGPU_SUBMIT_MAX_SYNCS) {
		goto slow;
	}
	r = submit(f, l, s, s->queue, w, nw, args, NULL);
	pthread_mutex_unlock(&ctx->lock);
	return r;
slow:
	pthread_mutex_unlock(&ctx->lock);
	return CUV_SLOW;
}

static CUresult launch(CUfunction f, struct cuv_launch *l, void **params, void **extra)
{
	struct cuv_thread *t = cuv_self();
	struct CUctx_st *ctx;
	CUresult r = cuv_current_checked(t, &ctx);

	if (r)
		return r;
	if (!f || !cuv_handle_ok_in(t, f, CUV_FUNC)) {
		if (!f || !cuv_handle_ok_in(t, f, CUV_KERNEL))
			return CUDA_ERROR_INVALID_HANDLE;
		r = cuv_kernel_function((CUkernel)f, &f); /* a CUkernel for a CUfunction */
		if (r)
			return r;
		if (!cuv_handle_ok_in(t, f, CUV_FUNC))
			return CUDA_ERROR_INVALID_HANDLE;
	}
	if (f->mod->ctx != ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	return launch_in(t, ctx, f, l, params, extra);
}

/* launch() with every check made by another path: not inlined in the fast one */
static __attribute__((noinline)) CUresult launch_slow(CUfunction f, struct cuv_launch *l,
						      void **params, void **extra)
{
	return launch(f, l, params, extra);
}

CUV_HOT
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
				unsigned int gridDimZ, unsigned int blockDimX,
				unsigned int blockDimY, unsigned int blockDimZ,
				unsigned int sharedMemBytes, CUstream hStream,
				void **kernelParams, void **extra)
{
	struct cuv_launch l = { .grid = { gridDimX, gridDimY, gridDimZ },
			    .block = { blockDimX, blockDimY, blockDimZ },
			    .smem = sharedMemBytes, .stream = hStream };
	struct cuv_thread *t = cuv_self();
	struct CUctx_st *ctx = cuv_current_in(t);

	/* launch()'s checks passed by what the thread found live before */
	if (cuv_initialized() && ctx && cuv_handle_seen(t, ctx, CUV_CTX) && !ctx->inactive && f &&
	    cuv_handle_seen(t, f, CUV_FUNC) && f->mod->ctx == ctx && !extra) {
		CUresult r = launch_fast(t, ctx, f, &l, kernelParams);

		if (r != CUV_SLOW)
			return r;
	}
	return launch_slow(f, &l, kernelParams, extra);
}

/*
 * libcudart's <<<>>> (cuv_rt.h): cuKernelGetFunction's answer from the
 * thread's cache (found in the current generation: the kernel, @ctx and
 * the function are live, the function is @ctx's), then the fast launch.
 */
CUV_HOT
CUresult cuv_rt_launch(CUcontext want, CUkernel kernel, const struct cuv_launch *l,
		       void **params)
{
	struct cuv_thread *t = cuv_self();
	struct CUctx_st *ctx = cuv_current_in(t);
	struct CUfunc_st *f;

	if (!cuv_initialized() || !ctx || ctx != want || !kernel || ctx->inactive)
		return CUV_SLOW;
	f = cuv_kfunc_find(t, kernel, ctx, cuv_handle_gen());
	if (!f)
		return CUV_SLOW;
	return launch_fast(t, ctx, f, l, params);
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
					   unsigned int gridDimY, unsigned int gridDimZ,
					   unsigned int blockDimX, unsigned int blockDimY,
					   unsigned int blockDimZ, unsigned int sharedMemBytes,
					   CUstream hStream, void **kernelParams)
{
	struct cuv_launch l = { .grid = { gridDimX, gridDimY, gridDimZ },
			    .block = { blockDimX, blockDimY, blockDimZ },
			    .smem = sharedMemBytes, .stream = hStream, .cooperative = true };

	return launch(f, &l, kernelParams, NULL);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
				  void **kernelParams, void **extra)
{
	struct cuv_launch l;

	if (!config || (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	l = (struct cuv_launch){ .grid = { config->gridDimX, config->gridDimY, config->gridDimZ },
			     .block = { config->blockDimX, config->blockDimY, config->blockDimZ },
			     .smem = config->sharedMemBytes, .stream = config->hStream };
	for (unsigned int i = 0; i < config->numAttrs; i++) {
		const CUlaunchAttribute *a = &config->attrs[i];

		switch (a->id) {
		case CU_LAUNCH_ATTRIBUTE_IGNORE:
		case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
		case CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY:
		case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
		case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
		case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
			break; /* hints */
		case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
			l.cooperative = a->value.cooperative != 0;
			break;
		case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
			l.cluster[0] = a->value.clusterDim.x;
			l.cluster[1] = a->value.clusterDim.y;
			l.cluster[2] = a->value.clusterDim.z;
			if (!l.cluster[0] || !l.cluster[1] || !l.cluster[2])
				return CUDA_ERROR_INVALID_CLUSTER_SIZE;
			break;
		case CU_LAUNCH_ATTRIBUTE_PRIORITY:
			l.has_priority = true;
			l.priority = a->value.priority;
			break;
		default:
			cuv_warn("cuLaunchKernelEx: launch attribute %d is not supported", a->id);
			return CUDA_ERROR_NOT_SUPPORTED;
		}
	}
	return launch(f, &l, kernelParams, extra);
}

/*
 * ---- occupancy: CUDA's arithmetic (cu_occupancy.c) over the device's
 * reported limits (the model's: GET_PARAM's SMs' shape) and the
 * function's attributes ----
 */

/* @func, a CUfunction or a CUkernel (in the current context) */
static CUresult occ_func(CUfunction func, struct CUfunc_st **out)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (func && cuv_handle_ok(func, CUV_FUNC)) {
		*out = func;
		return CUDA_SUCCESS;
	}
	if (!func || !cuv_handle_ok(func, CUV_KERNEL))
		return CUDA_ERROR_INVALID_HANDLE;
	return cuv_kernel_function((CUkernel)func, out);
}

/*
 * The h100 model's GPCs (VGPU_H100_GPC_SMS) where it has its own SM
 * count; with another (sms=) the SMs count as one GPC, as the vgpu
 * model's do.
 */
static const uint8_t h100_gpc_sms[] = VGPU_H100_GPC_SMS;

static void occ_device(const struct cuv_device *cudev, struct cuv_occ_device *d)
{
	const uint64_t *p = cudev->info.param;
	bool h100 = p[VGPU_PARAM_MODEL] == VGPU_MODEL_H100 && p[VGPU_PARAM_SMS] == VGPU_H100_SMS;

	*d = (struct cuv_occ_device){
		.sms = (uint32_t)p[VGPU_PARAM_SMS],
		.warp_size = (uint32_t)p[VGPU_PARAM_WARP_SIZE],
		.max_threads = (uint32_t)p[VGPU_PARAM_MAX_THREADS],
		.warps_per_sm = (uint32_t)p[VGPU_PARAM_WARPS_SM],
		.ctas_per_sm = (uint32_t)p[VGPU_PARAM_CTAS_SM],
		.regs_per_sm = (uint32_t)p[VGPU_PARAM_REGS_SM],
		.smem_per_sm = (uint32_t)p[VGPU_PARAM_SMEM_SM],
		.smem_cta = (uint32_t)p[VGPU_PARAM_SMEM],
		.cluster = (uint32_t)p[VGPU_PARAM_CLUSTER],
		.cluster_max = (uint32_t)p[VGPU_PARAM_CLUSTER_MAX],
		.gpc_sms = h100 ? h100_gpc_sms : NULL,
		.gpcs = h100 ? (uint32_t)sizeof(h100_gpc_sms) : 0,
	};
}

/*
 * CU_FUNC_ATTRIBUTE_NUM_REGS: the registers of the generated code, at
 * most those with which a block of MAX_THREADS_PER_BLOCK (1024) threads
 * fits the SM's register file, as ptxas keeps a kernel within its launch
 * bounds.  vGPU's allocator spends registers freely (often 200 and more
 * where ptxas needs 30), and its SMs run any block up to 1024 threads
 * whatever it names: uncapped, the occupancy arithmetic would say 0 for
 * blocks vGPU runs (and cub would size a grid of 0 CTAs from that).
 */
int cuv_func_regs(const struct CUfunc_st *f)
{
	struct cuv_occ_device d;
	int cap;

	occ_device(f->mod->ctx->cudev, &d);
	cap = cuv_occ_regs_cap(&d, VGPU_MAX_THREADS_PER_CTA);
	return f->num_regs < cap ? f->num_regs : cap;
}

void cuv_occ_inputs(const struct CUfunc_st *f, struct cuv_occ_device *d,
		    struct cuv_occ_func *a)
{
	const struct CUctx_st *ctx = f->mod->ctx;

	occ_device(ctx->cudev, d);
	*a = (struct cuv_occ_func){
		.num_regs = cuv_func_regs(f),
		.max_threads = VGPU_MAX_THREADS_PER_CTA, /* cuFuncGetAttribute's */
		.smem_static = f->smem_user,
		.max_dyn_smem = (uint32_t)f->max_dyn_smem,
		.carveout = f->carveout,
		/* the function's configuration, else its context's */
		.cache = f->cache_config ? f->cache_config : ctx->cache_config,
		.barriers = f->barriers,
	};
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks,
								      CUfunction func,
								      int blockSize,
								      size_t dynamicSMemSize,
								      unsigned int flags)
{
	struct cuv_occ_device d;
	struct cuv_occ_func a;
	CUresult r;

	if (!numBlocks || blockSize <= 0 || flags > CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_func(func, &func);
	if (r)
		return r;
	cuv_occ_inputs(func, &d, &a);
	*numBlocks = cuv_occ_blocks(&d, &a, blockSize, dynamicSMemSize);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
							     int blockSize,
							     size_t dynamicSMemSize)
{
	return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize,
								    dynamicSMemSize, 0);
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize,
							   CUfunction func,
							   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
							   size_t dynamicSMemSize, int blockSizeLimit,
							   unsigned int flags)
{
	struct cuv_occ_device d;
	struct cuv_occ_func a;
	CUresult r;

	if (!minGridSize || !blockSize || flags > CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE)
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_func(func, &func);
	if (r)
		return r;
	cuv_occ_inputs(func, &d, &a);
	*blockSize = cuv_occ_best_block(&d, &a, blockSizeToDynamicSMemSize, dynamicSMemSize,
					blockSizeLimit, minGridSize);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize,
						  CUfunction func,
						  CUoccupancyB2DSize blockSizeToDynamicSMemSize,
						  size_t dynamicSMemSize, int blockSizeLimit)
{
	return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func,
							 blockSizeToDynamicSMemSize,
							 dynamicSMemSize, blockSizeLimit, 0);
}

CUresult CUDAAPI cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func,
							 int numBlocks, int blockSize)
{
	struct cuv_occ_device d;
	struct cuv_occ_func a;
	CUresult r;

	if (!dynamicSmemSize) /* NVIDIA's driver crashes on it */
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_func(func, &func);
	if (r)
		return r;
	cuv_occ_inputs(func, &d, &a);
	return cuv_occ_dyn_smem(&d, &a, numBlocks, blockSize, dynamicSmemSize);
}

/*
 * The cluster queries: @potential picks cuOccupancyMaxPotentialClusterSize
 * (which ignores the config's cluster dimensions), else
 * cuOccupancyMaxActiveClusters.  The cluster size: the config's
 * CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, else the function's
 * __cluster_dims__, else none (0 clusters, as the H200 answered); another
 * size than the function's, or one above its limit, is
 * CUDA_ERROR_INVALID_CLUSTER_SIZE.
 */
static CUresult occ_clusters(int *out, CUfunction func, const CUlaunchConfig *config,
			     bool potential)
{
	unsigned int dims[3] = { 0, 0, 0 };
	struct cuv_occ_device d;
	struct cuv_occ_func a;
	struct CUfunc_st *f;
	uint64_t threads, size;
	CUresult r;
	int block;

	if (!out || !config || (config->numAttrs && !config->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	r = occ_func(func, &f);
	if (r)
		return r;
	for (unsigned int i = 0; i < config->numAttrs; i++) {
		const CUlaunchAttribute *at = &config->attrs[i];

		if (at->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			dims[0] = at->value.clusterDim.x;
			dims[1] = at->value.clusterDim.y;
			dims[2] = at->value.clusterDim.z;
		}
	}
	cuv_occ_inputs(f, &d, &a);
	threads = vgpu_dims_volume(config->blockDimX, config->blockDimY, config->blockDimZ);
	block = threads > INT_MAX ? INT_MAX : (int)threads;
	if (potential) {
		*out = cuv_occ_cluster_size(&d, &a, block, config->sharedMemBytes,
					    f->non_portable_cluster);
		return CUDA_SUCCESS;
	}
	if (f->req_cluster[0]) {
		if (dims[0] && memcmp(dims, f->req_cluster, sizeof(dims)))
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
		memcpy(dims, f->req_cluster, sizeof(dims));
	}
	size = vgpu_dims_volume(dims[0], dims[1], dims[2]);
	if (size > (f->non_portable_cluster ? d.cluster_max : d.cluster))
		return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	*out = cuv_occ_clusters(&d, &a, block, config->sharedMemBytes, (unsigned int)size);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func,
					      const CUlaunchConfig *config)
{
	return occ_clusters(numClusters, func, config, false);
}

CUresult CUDAAPI cuOccupancyMaxPotentialClusterSize(int *clusterSize, CUfunction func,
						    const CUlaunchConfig *config)
{
	return occ_clusters(clusterSize, func, config, true);
}

/* ---- tensor maps: CUtensorMap holds vGPU's struct vgpu_tensor_map ---- */

_Static_assert(sizeof(CUtensorMap) == sizeof(struct vgpu_tensor_map), "tensor map size");

static int elem_size(CUtensorMapDataType t)
{
	switch (t) {
	case CU_TENSOR_MAP_DATA_TYPE_UINT8:
		return 1;
	case CU_TENSOR_MAP_DATA_TYPE_UINT16:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
	case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
		return 2;
	case CU_TENSOR_MAP_DATA_TYPE_UINT32:
	case CU_TENSOR_MAP_DATA_TYPE_INT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
		return 4;
	case CU_TENSOR_MAP_DATA_TYPE_UINT64:
	case CU_TENSOR_MAP_DATA_TYPE_INT64:
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
		return 8;
	default:
		return 0; /* the packed 4- and 6-bit types */
	}
}

/* The map's element type (VGPU_TMAP_DT_*, PTX's order) of CUDA's @t, else 0 */
static uint8_t elem_type(CUtensorMapDataType t)
{
	switch (t) {
	case CU_TENSOR_MAP_DATA_TYPE_UINT8: return VGPU_TMAP_DT_U8;
	case CU_TENSOR_MAP_DATA_TYPE_UINT16: return VGPU_TMAP_DT_U16;
	case CU_TENSOR_MAP_DATA_TYPE_UINT32: return VGPU_TMAP_DT_U32;
	case CU_TENSOR_MAP_DATA_TYPE_INT32: return VGPU_TMAP_DT_S32;
	case CU_TENSOR_MAP_DATA_TYPE_UINT64: return VGPU_TMAP_DT_U64;
	case CU_TENSOR_MAP_DATA_TYPE_INT64: return VGPU_TMAP_DT_S64;
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT16: return VGPU_TMAP_DT_F16;
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32: return VGPU_TMAP_DT_F32;
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return VGPU_TMAP_DT_F64;
	case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return VGPU_TMAP_DT_BF16;
	case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ: return VGPU_TMAP_DT_F32_FTZ;
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: return VGPU_TMAP_DT_TF32;
	case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return VGPU_TMAP_DT_TF32_FTZ;
	default: return VGPU_TMAP_DT_NONE;
	}
}

/*
 * What the tiled and im2col encoders check alike (the driver's
 * CUDA_ERROR_INVALID_VALUE cases, and vGPU's NOT_SUPPORTED for what its
 * TMA engine does not do), and the map's fields they share into @tm.
 */
static CUresult encode_common(struct vgpu_tensor_map *tm, const char *fn,
			      CUtensorMapDataType type, cuuint32_t rank, void *globalAddress,
			      const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
			      const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
			      CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion,
			      CUtensorMapFloatOOBfill oobFill)
{
	int es = elem_size(type);

	if (!globalAddress || !globalDim || !elementStrides || (rank > 1 && !globalStrides))
		return CUDA_ERROR_INVALID_VALUE;
	if (!es) {
		cuv_warn("%s: data type %d is not supported (packed types)", fn, type);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE || swizzle != CU_TENSOR_MAP_SWIZZLE_NONE ||
	    oobFill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) {
		cuv_warn("%s: vGPU's TMA engine copies plain tiles and columns: "
			 "interleave, swizzle and NaN fill are not supported", fn);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if ((unsigned int)l2Promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
	    rank < 1 || rank > VGPU_TMAP_MAX_RANK || (uintptr_t)globalAddress % 16)
		return CUDA_ERROR_INVALID_VALUE;
	*tm = (struct vgpu_tensor_map){ .magic = VGPU_TMAP_MAGIC };
	tm->base = (uintptr_t)globalAddress;
	tm->rank = (uint8_t)rank;
	tm->elem_size = (uint8_t)es;
	tm->dtype = elem_type(type); /* reductions take their type from it */
	for (cuuint32_t d = 0; d < rank; d++) {
		if (!globalDim[d] || globalDim[d] > (1ull << 32) || !elementStrides[d] ||
		    elementStrides[d] > VGPU_TMAP_MAX_ELEM_STRIDE)
			return CUDA_ERROR_INVALID_VALUE;
		tm->dims[d] = (uint32_t)(globalDim[d] == (1ull << 32) ? UINT32_MAX : globalDim[d]);
		tm->elem_strides[d] = elementStrides[d];
		if (d) {
			if (globalStrides[d - 1] % 16 || globalStrides[d - 1] >= (1ull << 40))
				return CUDA_ERROR_INVALID_VALUE;
			tm->strides[d - 1] = globalStrides[d - 1];
		}
	}
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType type,
					cuuint32_t rank, void *globalAddress,
					const cuuint64_t *globalDim,
					const cuuint64_t *globalStrides, const cuuint32_t *boxDim,
					const cuuint32_t *elementStrides,
					CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
					CUtensorMapL2promotion l2Promotion,
					CUtensorMapFloatOOBfill oobFill)
{
	struct vgpu_tensor_map tm;
	CUresult r;

	if (!tensorMap || !boxDim)
		return CUDA_ERROR_INVALID_VALUE;
	r = encode_common(&tm, "cuTensorMapEncodeTiled", type, rank, globalAddress, globalDim,
			  globalStrides, elementStrides, interleave, swizzle, l2Promotion, oobFill);
	if (r != CUDA_SUCCESS)
		return r;
	for (cuuint32_t d = 0; d < rank; d++) {
		if (!boxDim[d] || boxDim[d] > VGPU_TMAP_MAX_BOX)
			return CUDA_ERROR_INVALID_VALUE;
		tm.box[d] = boxDim[d];
	}
	memcpy(tensorMap, &tm, sizeof(tm));
	return CUDA_SUCCESS;
}

/* The largest column NVIDIA's driver encodes for an H200 (227 KiB, the
 * shared memory a CTA can have), tests/cuda/real-gpu/probe_im2col.md */
#define IM2COL_MAX_BYTES 232448u

/*
 * The im2col map (struct vgpu_tensor_map's im2col mode): rank 3 to 5; the
 * corners {W, H, D} (rank - 2 of each, the order of globalDim) within
 * [-2^15, 2^15), [-2^7, 2^7) or [-2^4, 2^4) by rank, a box of non-zero
 * area; channelsPerPixel 1 to 256, pixelsPerColumn 1 to 1024.
 * INVALID_VALUE otherwise, as the driver documents, and where NVIDIA's
 * driver refuses what its documentation does not say (measured on an
 * H200): channels of a size not a multiple of 16 bytes, a column larger
 * than IM2COL_MAX_BYTES.  Like that driver, the tensorMap's own alignment
 * is not checked (a kernel takes a copy of the map).
 */
CUresult CUDAAPI cuTensorMapEncodeIm2col(CUtensorMap *tensorMap,
					 CUtensorMapDataType tensorDataType,
					 cuuint32_t tensorRank, void *globalAddress,
					 const cuuint64_t *globalDim,
					 const cuuint64_t *globalStrides,
					 const int *pixelBoxLowerCorner,
					 const int *pixelBoxUpperCorner,
					 cuuint32_t channelsPerPixel, cuuint32_t pixelsPerColumn,
					 const cuuint32_t *elementStrides,
					 CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
					 CUtensorMapL2promotion l2Promotion,
					 CUtensorMapFloatOOBfill oobFill)
{
	int lim = tensorRank == 3 ? 1 << 15 : tensorRank == 4 ? 1 << 7 : 1 << 4;
	struct vgpu_tensor_map tm;
	CUresult r;

	if (!tensorMap || !pixelBoxLowerCorner || !pixelBoxUpperCorner || tensorRank < 3)
		return CUDA_ERROR_INVALID_VALUE;
	r = encode_common(&tm, "cuTensorMapEncodeIm2col", tensorDataType, tensorRank,
			  globalAddress, globalDim, globalStrides, elementStrides, interleave,
			  swizzle, l2Promotion, oobFill);
	if (r != CUDA_SUCCESS)
		return r;
	if (!channelsPerPixel || channelsPerPixel > VGPU_TMAP_MAX_CHANNELS ||
	    channelsPerPixel * tm.elem_size % 16 || !pixelsPerColumn ||
	    pixelsPerColumn > VGPU_TMAP_MAX_PIXELS ||
	    (uint64_t)channelsPerPixel * pixelsPerColumn * tm.elem_size > IM2COL_MAX_BYTES)
		return CUDA_ERROR_INVALID_VALUE;
	for (cuuint32_t s = 0; s + 2 < tensorRank; s++) {
		int lo = pixelBoxLowerCorner[s], up = pixelBoxUpperCorner[s];

		if (lo < -lim || lo >= lim || up < -lim || up >= lim ||
		    (int64_t)globalDim[s + 1] + up - lo <= 0)
			return CUDA_ERROR_INVALID_VALUE;
		tm.lower[s] = (int16_t)lo;
		tm.upper[s] = (int16_t)up;
	}
	tm.mode = VGPU_TMAP_IM2COL;
	tm.channels = (uint16_t)channelsPerPixel;
	tm.pixels = (uint16_t)pixelsPerColumn;
	memcpy(tensorMap, &tm, sizeof(tm));
	return CUDA_SUCCESS;
}
