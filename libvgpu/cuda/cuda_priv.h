/* SPDX-License-Identifier: MIT */
/*
 * libcuda.so.1 over libvgpu: the objects behind the driver API's handles.
 *
 *   CUdevice   an index into the devices found by cuInit (VGPU_BACKEND:
 *              sim, one device; drm, one per vgpu DRM device)
 *   CUcontext  a vgpu_device opened for it (its own address space), the
 *              allocations made in it, its streams, events and modules
 *   CUstream   a vgpu queue of the stream's priority and a timeline
 *              syncobj: launch N on the stream signals point N and waits
 *              for point N-1, so the stream is ordered whatever queue runs
 *              a launch; cuStreamWaitEvent adds another timeline's point
 *              to the waits of the stream's next launch (a device-side
 *              dependency, no host wait)
 *   CUevent    a stream's timeline point (the stream's last launch when
 *              recorded)
 *   CUmodule   a vgpu_program compiled from the PTX; CUfunction one of its
 *              kernels with its parameter layout
 *
 * Locks: cuv_lock (cu_init.c) protects the device table, primary contexts
 * and the handle registry; ctx->lock protects a context's lists, its
 * allocations, its streams' points and pending waits, and its jobs.
 */
#ifndef CUDA_PRIV_H
#define CUDA_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cuda.h"
#include "cuv_rt.h"
#include "vgpu.h"

/* Entry points declared outside cuda.h (which exports what it declares). */
#define CUV_EXPORT __attribute__((visibility("default")))
/*
 * The functions of a launch's common path, together in the library (the
 * linker gathers .text.hot.*): fewer instruction-cache lines, and none of
 * them evicting another.
 */
#define CUV_HOT __attribute__((section(".text.hot.cuv")))

enum cuv_kind { CUV_CTX = 1, CUV_MOD, CUV_FUNC, CUV_STREAM, CUV_EVENT, CUV_LIB, CUV_KERNEL, CUV_LINK };

/* CUDA's launch dimension limits (the device attributes say the same) */
#define CUV_MAX_GRID_X 0x7fffffffu
#define CUV_MAX_GRID_YZ 65535u
#define CUV_MAX_BLOCK_XY 1024u
#define CUV_MAX_BLOCK_Z 64u

struct cuv_device {
	char open_name[64]; /* vgpu_device_open()'s name: "sim" or a PCI slot */
	char name[256];
	struct vgpu_device_info info;
	struct CUctx_st *primary;
	unsigned int primary_refs;
	unsigned int primary_flags;
};

/* An allocation: device memory, host memory (a mapped BO), module data. */
/* MANAGED: device memory mapped on the host at its device address */
enum cuv_alloc_kind { CUV_ALLOC_DEVICE, CUV_ALLOC_HOST, CUV_ALLOC_MODULE, CUV_ALLOC_MANAGED };
struct cuv_alloc {
	uint64_t va;
	uint64_t size;
	struct vgpu_bo *bo;
	uint8_t *map;
	enum cuv_alloc_kind kind;
};

struct cuv_job {
	struct vgpu_job *job;
	struct vgpu_bo *ws; /* a cooperative launch's grid workspace, or NULL */
	struct cuv_job *next;
};

struct CUstream_st {
	struct CUctx_st *ctx;
	unsigned int flags;
	int priority;
	bool is_null;		 /* the context's legacy default stream */
	bool per_thread;	 /* a thread's per-thread default stream */
	bool destroyed;		 /* the handle is gone; events may still refer */
	unsigned int refs;	 /* the handle and each event recorded on it */
	unsigned long long id;	 /* cuStreamGetId */
	struct vgpu_queue *queue; /* NULL: the device's default queue */
	bool own_queue;
	struct vgpu_syncobj *tl; /* the stream's timeline */
	uint64_t point;		 /* its last launch's point (0: none) */
	/*
	 * The queue that launch went to (NULL: the device's default queue):
	 * the next launch on the same queue needs no wait for @point, since
	 * a queue runs its jobs one after another (uapi "Queues").
	 */
	struct vgpu_queue *point_queue;
	/*
	 * The legacy default stream's implicit synchronisation, what the last
	 * launch covered (a later one is ordered after it, so it need not wait
	 * again for what did not move): a blocking stream's, the null stream's
	 * point it waited for; the null stream's, ctx->blocking_launches then.
	 */
	uint64_t null_seen;
	unsigned long blocking_seen;
	struct vgpu_sync_point *waits; /* cuStreamWaitEvent's, for the next launch */
	unsigned int nwaits, waits_cap;
	struct vgpu_sync_point *scratch; /* cuv_stream_waits()'s answer */
	unsigned int scratch_cap;
	struct cuv_job *jobs, *jobs_tail; /* launched, not yet reaped */
	struct CUstream_st *next;	  /* in ctx->streams */
};

struct CUevent_st {
	struct CUctx_st *ctx;
	unsigned int flags;
	struct CUstream_st *stream; /* where last recorded (a reference), or NULL */
	uint64_t point;
	bool have_time;
	uint64_t time_ns;
	struct CUevent_st *next; /* in ctx->events */
};

struct CUfunc_st {
	struct CUmod_st *mod;
	const struct vgpu_kernel *kernel;
	const char *name;
	char *ptx_name;		   /* @name when the object's is shortened */
	unsigned int nparams;	   /* the CUDA parameters (PTX .param) */
	uint32_t *param_off, *param_size;
	uint32_t user_bytes;	   /* bytes the CUDA parameters span */
	uint32_t smem_static;	   /* what the kernel reserves (vGPU's marker included) */
	uint32_t smem_user;	   /* its static variables: SHARED_SIZE_BYTES, as ptxas counts */
	uint32_t local_bytes;
	int num_regs;
	int max_dyn_smem;	   /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
	int carveout;		   /* ..._PREFERRED_SHARED_MEMORY_CARVEOUT: -1, 0..100 */
	CUfunc_cache cache_config; /* cuFuncSetCacheConfig */
	int barriers;		   /* named barriers it uses: the highest id + 1 */
	int non_portable_cluster;
	unsigned int req_cluster[3]; /* __cluster_dims__ (.reqnctapercluster); 0: none */
	/* an argument set kept for the next launch (atomic exchange): one
	 * vgpu_args (4 KiB) per launch costs more than the rest of it */
	_Atomic(struct vgpu_args *) args_cache;
	uint8_t *args_bytes; /* its parameter bytes (vgpu_args_bytes), or NULL (ctx->lock) */
	bool args_envreg; /* args_cache has a grid workspace's address (ctx->lock) */
};

struct cuv_global {
	char name[128];
	uint64_t offset, size;
};

struct CUmod_st {
	struct CUctx_st *ctx;
	struct vgpu_program *prog;
	struct CUfunc_st *funcs;
	unsigned int nfuncs;
	struct cuv_global *globals;
	unsigned int nglobals;
	uint64_t data_va;
	uint8_t *data_map;	 /* the module data, mapped */
	int64_t occ_off;	 /* VGPU_DEVRT_OCC's offset in it, or -1 */
	struct CUmod_st *next; /* in ctx->modules */
};

struct CUctx_st {
	struct cuv_device *cudev;
	CUdevice ordinal;
	unsigned int flags;
	bool primary;
	struct vgpu_device *dev;
	pthread_mutex_t lock;
	bool inactive;	 /* a primary context after cuDevicePrimaryCtxReset */
	struct cuv_alloc *allocs; /* sorted by va */
	size_t nallocs, allocs_cap;
	struct CUstream_st *null_stream;
	struct CUstream_st *streams; /* created streams, and the null stream */
	struct CUevent_st *events;
	struct CUmod_st *modules;
	struct vgpu_queue *prio_queue[4]; /* launches with a priority attribute */
	unsigned int njobs;		  /* launched, not yet reaped */
	unsigned long blocking_launches;  /* on blocking streams other than the null one */
	struct cuv_job *free_jobs;	  /* reaped, kept for reuse */
	size_t limit_printf, limit_stack;
	CUfunc_cache cache_config;
	unsigned long long id; /* cuCtxGetId */
};

/*
 * What libcuda keeps per thread, in one block allocated on the thread's
 * first use and freed when it exits (cu_init.c, cuv_thread_new): a launch
 * finds all of it with one load of cuv_tls, then passes the pointer on.
 */
#define CUV_CTX_STACK 32
/*
 * The two per-thread caches a launch reads (seen, kfuncs) are sets of
 * CUV_WAYS entries, the newest first: a handle is looked for in the one
 * set its address picks.  A launch checks three handles (context,
 * function, stream) in one cache; direct-mapped, two of them falling on
 * one entry evicted each other on every launch, and where the heap put
 * them decided whether any launch took the fast path (2026-12-02).
 */
#define CUV_WAYS 4
#define CUV_SEEN_SETS 16
#define CUV_KFUNC_SETS 4
#define CUV_PT_SLOTS 8
struct cuv_thread {
	/* the current-context stack (cu_ctx.c) */
	struct CUctx_st *ctx_stack[CUV_CTX_STACK];
	int ctx_depth;
	/* handles found live, each with the registry's generation then, the
	 * kind in its low 8 bits (cu_init.c, cuv_handle_ok) */
	struct cuv_seen {
		const void *p;
		unsigned long gen;
	} seen[CUV_SEEN_SETS][CUV_WAYS];
	/* a kernel's function in a context, found in a generation
	 * (cu_library.c, cuv_kernel_function) */
	struct cuv_kfunc {
		CUkernel k;
		struct CUctx_st *ctx;
		struct CUfunc_st *f;
		unsigned long gen;
	} kfuncs[CUV_KFUNC_SETS][CUV_WAYS];
	/* the per-thread default streams of a few contexts (cu_stream.c,
	 * per_thread_stream) */
	struct {
		struct CUctx_st *ctx;
		struct CUstream_st *s;
	} pt_streams[CUV_PT_SLOTS];
	unsigned int pt_next;
};

/*
 * The calling thread's block, or NULL before its first use.  The only
 * thread-local variable of libcuda, and initial-exec: each access is a
 * %fs-relative load (the general-dynamic model of a shared library's TLS
 * is a __tls_get_addr call).  A library loaded by dlopen may use
 * initial-exec TLS only within the few hundred bytes glibc keeps spare in
 * the static TLS block for that; one pointer fits, as Mesa's drivers'
 * does.  A larger variable (the block itself) would not: keep it a pointer.
 */
extern __thread struct cuv_thread *cuv_tls
	__attribute__((tls_model("initial-exec"), visibility("hidden")));
/*
 * A block for the thread (cold): a new one, or, when none can be made
 * (out of memory), cuv_thread_none, read-only: no current context, nothing
 * found.  What would change it checks for it (cuv_thread_writable) and
 * fails with CUDA_ERROR_OUT_OF_MEMORY or does without.
 */
struct cuv_thread *cuv_thread_new(void) __attribute__((cold));
extern const struct cuv_thread cuv_thread_none __attribute__((visibility("hidden")));

static inline bool cuv_thread_writable(const struct cuv_thread *t)
{
	return t != &cuv_thread_none;
}

/* The calling thread's block (never NULL) */
static inline struct cuv_thread *cuv_self(void)
{
	struct cuv_thread *t = cuv_tls;

	if (__builtin_expect(!t, 0))
		t = cuv_thread_new();
	return t;
}

/* cu_init.c */
/* VGPU_RANDOM_SCHEDULE (set by cuInit): launch i gets seed cuv_sched_seed + i */
extern bool cuv_sched_random;
extern uint64_t cuv_sched_seed;
extern atomic_ulong cuv_sched_launches;
extern pthread_mutex_t cuv_lock;
/* set once by cuInit, after the devices */
extern atomic_bool cuv_initialized_flag;
/* the handle registry's generation, bumped by every cuv_handle_del() */
extern atomic_ulong cuv_registry_gen;
/* the process's sticky error (cuv_sticky) */
extern _Atomic CUresult cuv_sticky_error;

static inline bool cuv_initialized(void)
{
	return atomic_load_explicit(&cuv_initialized_flag, memory_order_acquire);
}

/* The process's sticky error (a device exception), or CUDA_SUCCESS. */
static inline CUresult cuv_sticky(void)
{
	return atomic_load_explicit(&cuv_sticky_error, memory_order_acquire);
}

/* Keeps @r as the sticky error unless there is one (prints once). */
void cuv_sticky_set(CUresult r);
CUresult cuv_device(CUdevice dev, struct cuv_device **out);
void cuv_handle_add(void *p, enum cuv_kind kind);
void cuv_handle_del(void *p);
/* cuv_handle_ok's answer from the registry, under cuv_lock (remembered in @t) */
bool cuv_handle_lookup(struct cuv_thread *t, const void *p, enum cuv_kind kind);

/* Bumped by every cuv_handle_del(): what was found live in one generation still is. */
static inline unsigned long cuv_handle_gen(void)
{
	return atomic_load_explicit(&cuv_registry_gen, memory_order_acquire);
}

/* The set of a cache of @nsets (a power of two) that heap object @p falls in. */
static inline unsigned int cuv_cache_set(const void *p, unsigned int nsets)
{
	uintptr_t a = (uintptr_t)p;

	return (unsigned int)(a >> 4 ^ a >> 9 ^ a >> 14) & (nsets - 1);
}

/* Whether @t's seen cache has @p with @key (generation << 8 | kind). */
static inline bool cuv_seen_find(const struct cuv_thread *t, const void *p, unsigned long key)
{
	const struct cuv_seen *s = t->seen[cuv_cache_set(p, CUV_SEEN_SETS)];

	for (unsigned int w = 0; w < CUV_WAYS; w++)
		if (s[w].p == p && s[w].gen == key)
			return p != NULL;
	return false;
}

/*
 * @p found live with @key: first in its set, the entries before its old
 * place (or all but the oldest) one way down.
 */
static inline void cuv_seen_put(struct cuv_thread *t, const void *p, unsigned long key)
{
	struct cuv_seen *s = t->seen[cuv_cache_set(p, CUV_SEEN_SETS)];
	unsigned int w = 0;

	while (w < CUV_WAYS - 1 && s[w].p != p)
		w++;
	for (; w > 0; w--)
		s[w] = s[w - 1];
	s[0] = (struct cuv_seen){ .p = p, .gen = key };
}

/*
 * Whether the thread @t found @p live as a handle of @kind in the
 * registry's current generation: then it still is (no cuv_lock: a launch
 * checks three handles).  A pointer freed and reused for another object
 * was deleted first, so a stale entry never answers for it.  Handles are
 * heap objects of 16 bytes and more.
 */
static inline bool cuv_handle_seen(struct cuv_thread *t, const void *p, enum cuv_kind kind)
{
	return cuv_seen_find(t, p, cuv_handle_gen() << 8 | kind);
}

/*
 * The function of kernel @k in @ctx that @t found in generation @gen, or
 * NULL (cuv_kernel_function).
 */
static inline struct CUfunc_st *cuv_kfunc_find(const struct cuv_thread *t, CUkernel k,
					       const struct CUctx_st *ctx, unsigned long gen)
{
	const struct cuv_kfunc *s = t->kfuncs[cuv_cache_set(k, CUV_KFUNC_SETS)];

	for (unsigned int w = 0; w < CUV_WAYS; w++)
		if (s[w].k == k && s[w].ctx == ctx && s[w].gen == gen)
			return k ? s[w].f : NULL;
	return NULL;
}

/* @f is @k's function in @ctx in @gen: first in its set (cuv_seen_put) */
static inline void cuv_kfunc_put(struct cuv_thread *t, CUkernel k, struct CUctx_st *ctx,
				 struct CUfunc_st *f, unsigned long gen)
{
	struct cuv_kfunc *s = t->kfuncs[cuv_cache_set(k, CUV_KFUNC_SETS)];
	unsigned int w = 0;

	while (w < CUV_WAYS - 1 && !(s[w].k == k && s[w].ctx == ctx))
		w++;
	for (; w > 0; w--)
		s[w] = s[w - 1];
	s[0] = (struct cuv_kfunc){ .k = k, .ctx = ctx, .f = f, .gen = gen };
}

/* Whether @p is a live handle of @kind (@t: the calling thread's state). */
static inline bool cuv_handle_ok_in(struct cuv_thread *t, const void *p, enum cuv_kind kind)
{
	return __builtin_expect(cuv_handle_seen(t, p, kind), 1) ||
	       cuv_handle_lookup(t, p, kind);
}

static inline bool cuv_handle_ok(const void *p, enum cuv_kind kind)
{
	return cuv_handle_ok_in(cuv_self(), p, kind);
}

/* The calling thread's current context as it stands, not checked (or NULL). */
static inline struct CUctx_st *cuv_current_in(struct cuv_thread *t)
{
	return t->ctx_depth ? t->ctx_stack[t->ctx_depth - 1] : NULL;
}

static inline struct CUctx_st *cuv_current_unchecked(void)
{
	return cuv_current_in(cuv_self());
}

/* The calling thread's current context, checked (CUDA's error otherwise). */
static inline CUresult cuv_current_checked(struct cuv_thread *t, struct CUctx_st **out)
{
	struct CUctx_st *ctx;

	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	ctx = cuv_current_in(t);
	if (!ctx || !cuv_handle_ok_in(t, ctx, CUV_CTX))
		return CUDA_ERROR_INVALID_CONTEXT;
	if (ctx->inactive) /* a primary context reset and not retained since */
		return CUDA_ERROR_CONTEXT_IS_DESTROYED;
	*out = ctx;
	return CUDA_SUCCESS;
}

CUresult cuv_current(struct CUctx_st **out);
CUresult cuv_errno(int err);
/* cold: the paths that warn are error paths, kept out of the hot code */
void cuv_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2), cold));
CUresult cuv_ctx_init(struct CUctx_st *ctx);
void cuv_ctx_fini(struct CUctx_st *ctx);

/* cu_memory.c */
CUresult cuv_alloc_add(struct CUctx_st *ctx, const struct cuv_alloc *a);
/* The allocation holding [va, va + len), or NULL. */
struct cuv_alloc *cuv_alloc_find(struct CUctx_st *ctx, uint64_t va, uint64_t len);
void cuv_alloc_remove_bo(struct CUctx_st *ctx, struct vgpu_bo *bo);
void cuv_allocs_free(struct CUctx_st *ctx);

/* cu_stream.c */
CUresult cuv_stream(struct CUctx_st *ctx, CUstream h, struct CUstream_st **out);

/* cuv_stream(), a created stream of @ctx found without a call (@t: the thread's state) */
static inline CUresult cuv_stream_in(struct cuv_thread *t, struct CUctx_st *ctx, CUstream h,
				     struct CUstream_st **out)
{
	if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD &&
	    cuv_handle_ok_in(t, h, CUV_STREAM) && h->ctx == ctx) {
		*out = h;
		return CUDA_SUCCESS;
	}
	return cuv_stream(ctx, h, out);
}
CUresult cuv_stream_new(struct CUctx_st *ctx, unsigned int flags, int priority,
			bool is_null, struct CUstream_st **out);
void cuv_stream_put(struct CUstream_st *s);
/* Wait on the host for what must precede a host operation on @s (ctx->lock held). */
CUresult cuv_stream_host_fence(struct CUstream_st *s);
CUresult cuv_ctx_sync_locked(struct CUctx_st *ctx);
/* Reap finished jobs of every stream; @block waits for them all. */
CUresult cuv_reap(struct CUctx_st *ctx, bool block);
/* Launch bookkeeping: the waits of @s's next launch, in @s's scratch
 * array (ctx->lock held); @q: the queue it goes to (its own last launch
 * there needs no wait), or CUV_HOST for work the CPU does. */
#define CUV_HOST ((struct vgpu_queue *)1)
CUresult cuv_stream_waits(struct CUstream_st *s, struct vgpu_queue *q,
			  struct vgpu_sync_point **w, unsigned int *nw);
/* @job went to queue @q; @ws (may be NULL) is freed with the job, once it
 * has completed */
void cuv_stream_launched(struct CUstream_st *s, struct vgpu_queue *q, struct vgpu_job *job,
			 struct vgpu_bo *ws);

/*
 * Whether @s's next launch on its own queue waits for nothing, known
 * without cuv_stream_waits() (ctx->lock held): its last launch went to
 * that queue, no cuStreamWaitEvent is pending, and the legacy default
 * stream's implicit synchronisation has nothing new since its last launch
 * (no launch on another blocking stream after the null stream's, no
 * launch on the null stream after a blocking stream's).
 */
static inline bool cuv_stream_nothing_pending(const struct CUstream_st *s)
{
	if (s->point_queue != s->queue || s->nwaits)
		return false;
	if (s->is_null)
		return s->ctx->blocking_launches == s->blocking_seen;
	return (s->flags & CU_STREAM_NON_BLOCKING) || s->ctx->null_stream->point == s->null_seen;
}
void cuv_events_free(struct CUctx_st *ctx);
void cuv_streams_free(struct CUctx_st *ctx);

/* cu_library.c: a CUkernel's function in the current context */
CUresult cuv_kernel_function(CUkernel kernel, struct CUfunc_st **out);

/* cu_launch.c: CU_FUNC_ATTRIBUTE_NUM_REGS (what occupancy counts) */
int cuv_func_regs(const struct CUfunc_st *f);
struct cuv_occ_device;
struct cuv_occ_func;
/* The occupancy calculator's inputs for @f (cu_occupancy.h). */
void cuv_occ_inputs(const struct CUfunc_st *f, struct cuv_occ_device *d, struct cuv_occ_func *a);
/* @f's occupancy table for the device runtime, again (its settings changed). */
void cuv_devrt_occ_refresh(const struct CUfunc_st *f);

/* cu_ptds.c: an API name's per-thread-default-stream entry point, or NULL */
void *cuv_ptds_entry(const char *api_name);

/* cu_module.c */
void cuv_modules_free(struct CUctx_st *ctx);
CUresult cuv_module_from_ptx(const char *ptx, size_t len, const char *name, char *errlog,
			     size_t errlen, struct CUmod_st **out);
/*
 * The whole file at @path, NUL-terminated (*@size counts the NUL), in
 * *@buf for the caller to free: FILE_NOT_FOUND if it cannot be read.
 */
CUresult cuv_read_file(const char *path, char **buf, size_t *size);
/* cuModuleLoadDataEx's options: the error log buffer, the rest checked. */
CUresult cuv_jit_options(unsigned int n, const CUjit_option *options, void **values,
			 char **errlog, size_t *errlen);

#endif /* CUDA_PRIV_H */
