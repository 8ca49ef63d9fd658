/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vgpu
#define TRACE_INCLUDE_FILE vgpu_trace

#if !defined(VGPU_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define VGPU_TRACE_H

#include <linux/tracepoint.h>

/*
 * @fence: the job's finished fence (context:seqno), what dependants wait on;
 * @file_queue: the queue id SUBMIT named, in the submitter's file (a CUDA
 * stream is one: vgpu-trace gives each its own track)
 */
TRACE_EVENT(vgpu_job_submit,
	TP_PROTO(u32 queue, u64 client, u64 job, u64 ctx, u64 seqno, u32 file_queue),
	TP_ARGS(queue, client, job, ctx, seqno, file_queue),
	TP_STRUCT__entry(__field(u32, queue) __field(u64, client) __field(u64, job)
			 __field(u64, ctx) __field(u64, seqno) __field(u32, file_queue)),
	TP_fast_assign(__entry->queue = queue; __entry->client = client;
		       __entry->job = job; __entry->ctx = ctx;
		       __entry->seqno = seqno; __entry->file_queue = file_queue;),
	TP_printk("queue=%u client=%llu job=%llu fence=%llu:%llu file_queue=%u",
		  __entry->queue, __entry->client, __entry->job, __entry->ctx,
		  __entry->seqno, __entry->file_queue)
);

/* One per fence the job waits for (in-syncs and implicit), at submit. */
TRACE_EVENT(vgpu_job_dep,
	TP_PROTO(u64 client, u64 job, u64 ctx, u64 seqno),
	TP_ARGS(client, job, ctx, seqno),
	TP_STRUCT__entry(__field(u64, client) __field(u64, job) __field(u64, ctx)
			 __field(u64, seqno)),
	TP_fast_assign(__entry->client = client; __entry->job = job;
		       __entry->ctx = ctx; __entry->seqno = seqno;),
	TP_printk("client=%llu job=%llu fence=%llu:%llu", __entry->client,
		  __entry->job, __entry->ctx, __entry->seqno)
);

/* Every dependency has signalled: the scheduler may run the job. */
TRACE_EVENT(vgpu_job_ready,
	TP_PROTO(u32 queue, u64 client, u64 job),
	TP_ARGS(queue, client, job),
	TP_STRUCT__entry(__field(u32, queue) __field(u64, client) __field(u64, job)),
	TP_fast_assign(__entry->queue = queue; __entry->client = client;
		       __entry->job = job;),
	TP_printk("queue=%u client=%llu job=%llu", __entry->queue,
		  __entry->client, __entry->job)
);

TRACE_EVENT(vgpu_job_run,
	TP_PROTO(u32 queue, u64 client, u64 job, u64 seq),
	TP_ARGS(queue, client, job, seq),
	TP_STRUCT__entry(__field(u32, queue) __field(u64, client) __field(u64, job)
			 __field(u64, seq)),
	TP_fast_assign(__entry->queue = queue; __entry->client = client;
		       __entry->job = job; __entry->seq = seq;),
	TP_printk("queue=%u client=%llu job=%llu seq=%llu", __entry->queue,
		  __entry->client, __entry->job, __entry->seq)
);

TRACE_EVENT(vgpu_job_complete,
	TP_PROTO(u32 queue, u64 client, u64 job, int error),
	TP_ARGS(queue, client, job, error),
	TP_STRUCT__entry(__field(u32, queue) __field(u64, client) __field(u64, job)
			 __field(int, error)),
	TP_fast_assign(__entry->queue = queue; __entry->client = client;
		       __entry->job = job; __entry->error = error;),
	TP_printk("queue=%u client=%llu job=%llu error=%d", __entry->queue,
		  __entry->client, __entry->job, __entry->error)
);

TRACE_EVENT(vgpu_reset,
	TP_PROTO(u32 queue, u64 job),
	TP_ARGS(queue, job),
	TP_STRUCT__entry(__field(u32, queue) __field(u64, job)),
	TP_fast_assign(__entry->queue = queue; __entry->job = job;),
	TP_printk("guilty queue=%u job=%llu", __entry->queue, __entry->job)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#include <trace/define_trace.h>
