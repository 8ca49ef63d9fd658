// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: streams and events.
 *
 * A stream is a vgpu queue of its priority and a timeline syncobj.  Its
 * Nth launch signals point N and waits for point N-1 (and, for the legacy
 * default stream's implicit synchronisation, for the other blocking
 * streams' last points, or they for its), so a stream stays ordered
 * whichever queue runs the launch.  cuStreamWaitEvent adds the event's
 * point to the waits of the stream's next launch: the device orders them,
 * the host does not wait.  Host operations on a stream (copies, memsets)
 * wait on the host for the same points first.  An event is the timeline
 * point of its stream's last launch when it was recorded.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_priv.h"
#include "cu_exc.h" /* after cuda.h */

/* stream ids are unique in the process, as CUDA's */
static atomic_ullong next_stream_id = 1;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CUDA priority (0 least .. -2 greatest) -> vGPU queue priority */
static uint32_t vgpu_priority(int priority)
{
	return priority >= 0 ? VGPU_QUEUE_PRIORITY_NORMAL :
	       priority == -1 ? VGPU_QUEUE_PRIORITY_HIGH : VGPU_QUEUE_PRIORITY_REALTIME;
}

static int clamp_priority(int priority)
{
	return priority > 0 ? 0 : priority < -2 ? -2 : priority;
}

CUresult cuv_stream_new(struct CUctx_st *ctx, unsigned int flags, int priority, bool is_null,
			struct CUstream_st **out)
{
	struct CUstream_st *s = calloc(1, sizeof(*s));
	int ret;

	if (!s)
		return CUDA_ERROR_OUT_OF_MEMORY;
	s->ctx = ctx;
	s->flags = flags;
	s->priority = clamp_priority(priority);
	s->is_null = is_null;
	s->refs = 1;
	s->id = atomic_fetch_add(&next_stream_id, 1);
	ret = vgpu_syncobj_new(ctx->dev, 0, &s->tl);
	if (ret) {
		free(s);
		return cuv_errno(ret);
	}
	if (!is_null) {
		ret = vgpu_queue_new(ctx->dev, vgpu_priority(s->priority), &s->queue);
		if (ret == -EPERM) {
			cuv_warn("stream priority %d needs CAP_SYS_NICE: the stream runs at "
				 "normal priority", s->priority);
			ret = vgpu_queue_new(ctx->dev, VGPU_QUEUE_PRIORITY_NORMAL, &s->queue);
		}
		/* out of queues (a file holds 64): the device's default queue;
		 * the timeline still orders the stream */
		s->own_queue = ret == 0;
		if (ret)
			s->queue = NULL;
	}
	s->next = ctx->streams;
	ctx->streams = s;
	if (!is_null)
		cuv_handle_add(s, CUV_STREAM);
	*out = s;
	return CUDA_SUCCESS;
}

static void stream_unlink(struct CUstream_st *s)
{
	struct CUstream_st **pp = &s->ctx->streams;

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
}

static void stream_free(struct CUstream_st *s)
{
	struct cuv_job *j = s->jobs;

	while (j) {
		struct cuv_job *n = j->next;

		vgpu_job_free(j->job);
		vgpu_bo_free(j->ws);
		s->ctx->njobs--;
		free(j);
		j = n;
	}
	if (s->own_queue)
		vgpu_queue_free(s->queue);
	vgpu_syncobj_free(s->tl);
	free(s->waits);
	free(s->scratch);
	free(s);
}

/* Drop a reference (ctx->lock held); the last one frees the stream. */
void cuv_stream_put(struct CUstream_st *s)
{
	if (--s->refs)
		return;
	stream_free(s);
}

void cuv_streams_free(struct CUctx_st *ctx)
{
	struct CUstream_st *s = ctx->streams;

	while (s) {
		struct CUstream_st *n = s->next;

		if (!s->is_null)
			cuv_handle_del(s);
		stream_free(s);
		s = n;
	}
	ctx->streams = NULL;
	while (ctx->free_jobs) {
		struct cuv_job *j = ctx->free_jobs;

		ctx->free_jobs = j->next;
		free(j);
	}
}

/*
 * The calling thread's per-thread default stream of @ctx (ctx->lock
 * held): a blocking stream made on first use, remembered per thread for a
 * few contexts (one made again after that is kept until its context goes).
 */
static CUresult per_thread_stream(struct CUctx_st *ctx, struct CUstream_st **out)
{
	struct cuv_thread *t = cuv_self();
	unsigned int slot;
	CUresult r;

	for (unsigned int i = 0; i < CUV_PT_SLOTS; i++)
		if (t->pt_streams[i].ctx == ctx &&
		    cuv_handle_ok_in(t, t->pt_streams[i].s, CUV_STREAM) &&
		    t->pt_streams[i].s->ctx == ctx && t->pt_streams[i].s->per_thread) {
			*out = t->pt_streams[i].s;
			return CUDA_SUCCESS;
		}
	if (!cuv_thread_writable(t)) /* a stream made would be lost */
		return CUDA_ERROR_OUT_OF_MEMORY;
	r = cuv_stream_new(ctx, 0, 0, false, out);
	if (r)
		return r;
	(*out)->per_thread = true;
	slot = t->pt_next++ % CUV_PT_SLOTS;
	t->pt_streams[slot].ctx = ctx;
	t->pt_streams[slot].s = *out;
	return CUDA_SUCCESS;
}

/*
 * The stream a handle names (ctx->lock held): NULL and CU_STREAM_LEGACY
 * are the context's legacy default stream, CU_STREAM_PER_THREAD the
 * calling thread's (what the _ptsz/_ptds entry points pass for NULL).
 */
CUresult cuv_stream(struct CUctx_st *ctx, CUstream h, struct CUstream_st **out)
{
	if (h == CU_STREAM_PER_THREAD)
		return per_thread_stream(ctx, out);
	if (!h || h == CU_STREAM_LEGACY) {
		*out = ctx->null_stream;
		return CUDA_SUCCESS;
	}
	if (!cuv_handle_ok(h, CUV_STREAM) || h->ctx != ctx)
		return CUDA_ERROR_INVALID_HANDLE;
	*out = h;
	return CUDA_SUCCESS;
}

/* How a job ended -> CUDA's error; prints the exception record. */
static CUresult job_result(struct vgpu_job *job, int ret)
{
	struct vgpu_exception_record rec;
	char text[4096];

	if (!ret)
		return CUDA_SUCCESS;
	if (vgpu_job_describe(job, text, sizeof(text)) > 0)
		cuv_warn("a kernel raised a device exception:\n%s", text);
	else
		cuv_warn("a launch failed: %s", strerror(-ret));
	if (ret == -EFAULT)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	if (ret == -ETIMEDOUT)
		return CUDA_ERROR_LAUNCH_TIMEOUT;
	if (ret == -EIO && !vgpu_job_exception(job, &rec))
		return cuv_exc_result(rec.code);
	return CUDA_ERROR_LAUNCH_FAILED;
}

/* Reap @s's finished jobs in order (all of them when @block). */
CUV_HOT
static CUresult reap_stream(struct CUstream_st *s, bool block)
{
	struct CUctx_st *ctx = s->ctx;

	while (s->jobs) {
		struct cuv_job *j = s->jobs;
		int ret = vgpu_job_wait(j->job, block ? VGPU_TIMEOUT_INFINITE : 0);
		CUresult r;

		if (ret == -ETIME)
			break;
		if (vgpu_job_printf(j->job)) { /* device printf, at reaping as CUDA's */
			fputs(vgpu_job_printf(j->job), stdout);
			fflush(stdout);
		}
		r = job_result(j->job, ret);
		if (r)
			cuv_sticky_set(r); /* as CUDA's: the process is unusable now */
		s->jobs = j->next;
		if (!s->jobs)
			s->jobs_tail = NULL;
		vgpu_job_free(j->job);
		if (j->ws) /* a cooperative launch's: no call for the others */
			vgpu_bo_free(j->ws);
		j->next = ctx->free_jobs; /* kept for the next launch */
		ctx->free_jobs = j;
		ctx->njobs--;
	}
	return cuv_sticky();
}

CUresult cuv_reap(struct CUctx_st *ctx, bool block)
{
	for (struct CUstream_st *s = ctx->streams; s; s = s->next)
		reap_stream(s, block);
	return cuv_sticky();
}

/* The driver remembers VGPU_JOB_HISTORY jobs per file: reap before that. */
#define CUV_MAX_JOBS (VGPU_JOB_HISTORY / 2)

CUV_HOT
void cuv_stream_launched(struct CUstream_st *s, struct vgpu_queue *q, struct vgpu_job *job,
			 struct vgpu_bo *ws)
{
	struct cuv_job *j = s->ctx->free_jobs;

	if (j)
		s->ctx->free_jobs = j->next;
	else
		j = malloc(sizeof(*j));
	s->point++;
	s->point_queue = q;
	s->nwaits = 0;
	/* what its waits covered (cuv_stream_waits) */
	if (s->is_null)
		s->blocking_seen = s->ctx->blocking_launches;
	else if (!(s->flags & CU_STREAM_NON_BLOCKING))
		s->null_seen = s->ctx->null_stream->point, s->ctx->blocking_launches++;
	if (!j) { /* cannot track it: wait for it now */
		CUresult r = job_result(job, vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE));

		cuv_sticky_set(r);
		vgpu_job_free(job);
		vgpu_bo_free(ws);
		return;
	}
	j->job = job;
	j->ws = ws;
	j->next = NULL;
	if (s->jobs_tail)
		s->jobs_tail->next = j;
	else
		s->jobs = j;
	s->jobs_tail = j;
	s->ctx->njobs++;
	/* this stream's finished jobs; every stream's when too many are kept */
	reap_stream(s, false);
	if (s->ctx->njobs > CUV_MAX_JOBS / 2)
		cuv_reap(s->ctx, false);
	if (s->ctx->njobs > CUV_MAX_JOBS)
		cuv_reap(s->ctx, true);
}

static CUresult add_wait(struct vgpu_sync_point **w, unsigned int *nw, unsigned int *cap,
			 struct vgpu_syncobj *so, uint64_t point)
{
	if (!point)
		return CUDA_SUCCESS;
	for (unsigned int i = 0; i < *nw; i++)
		if ((*w)[i].syncobj == so) {
			if ((*w)[i].point < point)
				(*w)[i].point = point;
			return CUDA_SUCCESS;
		}
	if (*nw == *cap) {
		unsigned int c = *cap ? *cap * 2 : 8;
		struct vgpu_sync_point *n = realloc(*w, c * sizeof(*n));

		if (!n)
			return CUDA_ERROR_OUT_OF_MEMORY;
		*w = n;
		*cap = c;
	}
	(*w)[(*nw)++] = (struct vgpu_sync_point){ so, point };
	return CUDA_SUCCESS;
}

/*
 * What @s's next launch or host operation waits for: its own last point,
 * cuStreamWaitEvent's points, and the legacy default stream's implicit
 * synchronisation.  *@w is the stream's scratch array (ctx->lock held;
 * valid until the next call for @s).
 */
CUV_HOT
CUresult cuv_stream_waits(struct CUstream_st *s, struct vgpu_queue *q,
			  struct vgpu_sync_point **w, unsigned int *nw)
{
	struct CUctx_st *ctx = s->ctx;
	CUresult r = CUDA_SUCCESS;

	*nw = 0;
	if (q != s->point_queue)
		r = add_wait(&s->scratch, nw, &s->scratch_cap, s->tl, s->point);
	for (unsigned int i = 0; !r && i < s->nwaits; i++)
		r = add_wait(&s->scratch, nw, &s->scratch_cap, s->waits[i].syncobj,
			     s->waits[i].point);
	/*
	 * The legacy default stream's implicit synchronisation: what moved
	 * since the stream's last launch, which waited for the rest (and which
	 * this one follows: on its queue, or by the wait for its point above)
	 */
	if (s->is_null) {
		for (struct CUstream_st *o = ctx->streams;
		     !r && o && ctx->blocking_launches != s->blocking_seen; o = o->next)
			if (!(o->flags & CU_STREAM_NON_BLOCKING) && !o->destroyed)
				r = add_wait(&s->scratch, nw, &s->scratch_cap, o->tl, o->point);
	} else if (!(s->flags & CU_STREAM_NON_BLOCKING) &&
		   ctx->null_stream->point != s->null_seen) {
		r = add_wait(&s->scratch, nw, &s->scratch_cap, ctx->null_stream->tl,
			     ctx->null_stream->point);
	}
	*w = s->scratch;
	return r;
}

CUresult cuv_stream_host_fence(struct CUstream_st *s)
{
	struct vgpu_sync_point *w;
	unsigned int nw;
	CUresult r = cuv_stream_waits(s, CUV_HOST, &w, &nw);

	for (unsigned int i = 0; !r && i < nw; i++) {
		int ret = vgpu_syncobj_wait(w[i].syncobj, w[i].point, VGPU_TIMEOUT_INFINITE);

		if (ret)
			r = cuv_errno(ret);
	}
	if (!r)
		s->nwaits = 0;
	cuv_reap(s->ctx, false);
	return r ? r : cuv_sticky();
}

CUresult cuv_ctx_sync_locked(struct CUctx_st *ctx)
{
	if (!ctx->null_stream)
		return cuv_sticky();
	for (struct CUstream_st *s = ctx->streams; s; s = s->next)
		if (s->point)
			vgpu_syncobj_wait(s->tl, s->point, VGPU_TIMEOUT_INFINITE);
	return cuv_reap(ctx, true);
}

/* ---- the stream API ---- */

static CUresult current(struct CUctx_st **ctx)
{
	CUresult r = cuv_current(ctx);

	return r ? r : cuv_sticky();
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
	struct CUctx_st *ctx;
	struct CUstream_st *s;
	CUresult r;

	if (!phStream || (flags & ~(unsigned int)CU_STREAM_NON_BLOCKING))
		return CUDA_ERROR_INVALID_VALUE;
	r = current(&ctx);
	if (r)
		return r;
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream_new(ctx, flags, priority, false, &s);
	pthread_mutex_unlock(&ctx->lock);
	if (!r)
		*phStream = s;
	return r;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
	return cuStreamCreateWithPriority(phStream, Flags, 0);
}

/* A handle's stream and its context, locked on success. */
static CUresult lock_stream(CUstream h, struct CUstream_st **s)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	if (h && h != CU_STREAM_LEGACY && h != CU_STREAM_PER_THREAD) {
		if (!cuv_handle_ok(h, CUV_STREAM))
			return CUDA_ERROR_INVALID_HANDLE;
		ctx = h->ctx;
	}
	pthread_mutex_lock(&ctx->lock);
	r = cuv_stream(ctx, h, s);
	if (r)
		pthread_mutex_unlock(&ctx->lock);
	return r;
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
	struct CUstream_st *s;
	CUresult r;

	if (!priority)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	*priority = s->priority;
	pthread_mutex_unlock(&s->ctx->lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
	struct CUstream_st *s;
	CUresult r;

	if (!flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	*flags = s->flags;
	pthread_mutex_unlock(&s->ctx->lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
	struct CUstream_st *s;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	*pctx = s->ctx;
	pthread_mutex_unlock(&s->ctx->lock);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
	struct CUstream_st *s;
	CUresult r = lock_stream(hStream, &s);

	if (r)
		return r;
	r = cuv_stream_host_fence(s);
	if (!r)
		r = reap_stream(s, true);
	pthread_mutex_unlock(&s->ctx->lock);
	return r;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
	struct CUstream_st *s;
	uint64_t done = 0;
	CUresult r = lock_stream(hStream, &s);

	if (r)
		return r;
	r = cuv_sticky();
	if (!r && s->point) {
		int ret = vgpu_syncobj_query(s->tl, &done);

		r = ret ? cuv_errno(ret) : done >= s->point ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
	}
	if (!r)
		r = reap_stream(s, false);
	pthread_mutex_unlock(&s->ctx->lock);
	return r;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
	struct CUstream_st *s;
	CUresult r;

	if (Flags & ~(unsigned int)CU_EVENT_WAIT_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	if (!cuv_handle_ok(hEvent, CUV_EVENT) || hEvent->ctx != s->ctx)
		r = CUDA_ERROR_INVALID_HANDLE;
	else if (hEvent->stream && hEvent->stream != s && hEvent->point)
		/* a device-side wait: the stream's next launch waits for it */
		r = add_wait(&s->waits, &s->nwaits, &s->waits_cap, hEvent->stream->tl,
			     hEvent->point);
	pthread_mutex_unlock(&s->ctx->lock);
	return r;
}

/*
 * Host functions run when what precedes them on the stream has completed:
 * here, at once on the calling thread after waiting for it (the stream's
 * later work is submitted after the call returns, so it follows them).
 */
CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
	struct CUstream_st *s;
	CUresult r;

	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	r = cuv_stream_host_fence(s);
	pthread_mutex_unlock(&s->ctx->lock);
	if (!r)
		fn(userData);
	return r;
}

CUresult CUDAAPI cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData,
				     unsigned int flags)
{
	struct CUstream_st *s;
	CUresult r;

	if (!callback || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	r = cuv_stream_host_fence(s);
	pthread_mutex_unlock(&s->ctx->lock);
	callback(hStream, r, userData); /* called with the stream's error, as CUDA's */
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
	struct CUstream_st *s;
	CUresult r;

	if (!streamId)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	*streamId = s->id;
	pthread_mutex_unlock(&s->ctx->lock);
	return CUDA_SUCCESS;
}

/* Stream capture (CUDA graphs) is not there: refused, never capturing. */
CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode)
{
	struct CUstream_st *s;
	CUresult r = lock_stream(hStream, &s);

	if (r)
		return r;
	pthread_mutex_unlock(&s->ctx->lock);
	if ((unsigned int)mode > CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_INVALID_VALUE;
	cuv_warn("cuStreamBeginCapture: stream capture and CUDA graphs are not supported by "
		 "vGPU's libcuda; launch the work directly");
	return CUDA_ERROR_NOT_SUPPORTED;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
	struct CUstream_st *s;
	CUresult r;

	if (!phGraph)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	pthread_mutex_unlock(&s->ctx->lock);
	return CUDA_ERROR_ILLEGAL_STATE; /* it was not capturing */
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
	struct CUstream_st *s;
	CUresult r;

	if (!captureStatus)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_stream(hStream, &s);
	if (r)
		return r;
	pthread_mutex_unlock(&s->ctx->lock);
	*captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
	struct CUctx_st *ctx;
	CUresult r = cuv_current(&ctx);

	if (r)
		return r;
	if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD ||
	    !cuv_handle_ok(hStream, CUV_STREAM))
		return CUDA_ERROR_INVALID_HANDLE;
	ctx = hStream->ctx;
	pthread_mutex_lock(&ctx->lock);
	cuv_handle_del(hStream);
	/* its work completes first (CUDA returns at once; the work still runs) */
	if (hStream->point)
		vgpu_syncobj_wait(hStream->tl, hStream->point, VGPU_TIMEOUT_INFINITE);
	reap_stream(hStream, true);
	hStream->destroyed = true;
	stream_unlink(hStream);
	cuv_stream_put(hStream);
	pthread_mutex_unlock(&ctx->lock);
	return CUDA_SUCCESS;
}

/* ---- events ---- */

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
	struct CUctx_st *ctx;
	struct CUevent_st *e;
	CUresult r;

	if (!phEvent || (Flags & ~7u))
		return CUDA_ERROR_INVALID_VALUE;
	if (Flags & CU_EVENT_INTERPROCESS) {
		cuv_warn("cuEventCreate: interprocess events are not supported");
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = current(&ctx);
	if (r)
		return r;
	e = calloc(1, sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	e->ctx = ctx;
	e->flags = Flags;
	pthread_mutex_lock(&ctx->lock);
	e->next = ctx->events;
	ctx->events = e;
	pthread_mutex_unlock(&ctx->lock);
	cuv_handle_add(e, CUV_EVENT);
	*phEvent = e;
	return CUDA_SUCCESS;
}

static void event_unrecord(struct CUevent_st *e)
{
	if (e->stream)
		cuv_stream_put(e->stream);
	e->stream = NULL;
	e->point = 0;
}

void cuv_events_free(struct CUctx_st *ctx)
{
	struct CUevent_st *e = ctx->events;

	while (e) {
		struct CUevent_st *n = e->next;

		cuv_handle_del(e);
		event_unrecord(e);
		free(e);
		e = n;
	}
	ctx->events = NULL;
}

/* An event handle, its context locked on success. */
static CUresult lock_event(CUevent h)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!h || !cuv_handle_ok(h, CUV_EVENT))
		return CUDA_ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&h->ctx->lock);
	return CUDA_SUCCESS;
}

/* Has the event completed?  Notes the time it was first seen complete. */
static bool event_done(struct CUevent_st *e)
{
	uint64_t done = 0;

	if (e->stream && e->point && (vgpu_syncobj_query(e->stream->tl, &done) || done < e->point))
		return false;
	if (!e->have_time) {
		e->have_time = true;
		e->time_ns = now_ns();
	}
	return true;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
	struct CUstream_st *s;
	CUresult r = lock_event(hEvent);

	if (r)
		return r;
	r = cuv_sticky();
	if (!r)
		r = cuv_stream(hEvent->ctx, hStream, &s);
	if (!r && s->nwaits) /* pending waits: the event includes them */
		r = cuv_stream_host_fence(s);
	if (!r) {
		event_unrecord(hEvent);
		hEvent->stream = s;
		s->refs++;
		hEvent->point = s->point;
		hEvent->have_time = false;
		event_done(hEvent);
	}
	pthread_mutex_unlock(&hEvent->ctx->lock);
	return r;
}

/* CU_EVENT_RECORD_EXTERNAL matters only in a capture, which never happens */
CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
	if (flags & ~(unsigned int)CU_EVENT_RECORD_EXTERNAL)
		return CUDA_ERROR_INVALID_VALUE;
	return cuEventRecord(hEvent, hStream);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
	CUresult r = lock_event(hEvent);

	if (r)
		return r;
	r = event_done(hEvent) ? cuv_reap(hEvent->ctx, false) : CUDA_ERROR_NOT_READY;
	pthread_mutex_unlock(&hEvent->ctx->lock);
	return r;
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
	CUresult r = lock_event(hEvent);

	if (r)
		return r;
	if (hEvent->stream && hEvent->point)
		vgpu_syncobj_wait(hEvent->stream->tl, hEvent->point, VGPU_TIMEOUT_INFINITE);
	event_done(hEvent);
	r = cuv_reap(hEvent->ctx, false);
	pthread_mutex_unlock(&hEvent->ctx->lock);
	return r;
}

CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
	CUresult r;

	if (!pMilliseconds)
		return CUDA_ERROR_INVALID_VALUE;
	r = lock_event(hStart);
	if (r)
		return r;
	if (!cuv_handle_ok(hEnd, CUV_EVENT) || hEnd->ctx != hStart->ctx) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING) {
		r = CUDA_ERROR_INVALID_HANDLE;
	} else if (!hStart->stream || !hEnd->stream) {
		r = CUDA_ERROR_INVALID_HANDLE; /* never recorded */
	} else if (!event_done(hStart) || !event_done(hEnd)) {
		r = CUDA_ERROR_NOT_READY;
	} else {
		*pMilliseconds = (float)((double)((int64_t)(hEnd->time_ns - hStart->time_ns)) / 1e6);
	}
	pthread_mutex_unlock(&hStart->ctx->lock);
	return r;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
	struct CUevent_st **pp;
	CUresult r = lock_event(hEvent);

	if (r)
		return r;
	cuv_handle_del(hEvent);
	for (pp = &hEvent->ctx->events; *pp && *pp != hEvent; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = hEvent->next;
	event_unrecord(hEvent);
	pthread_mutex_unlock(&hEvent->ctx->lock);
	free(hEvent);
	return CUDA_SUCCESS;
}
