/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: the timeline: what the SMs did during one
 * launch (VGPU_LAUNCH_TIMELINE).  Part of vgpu_hw.h, which includes it:
 * include that.
 */
#ifndef VGPU_HW_TIMELINE_H
#define VGPU_HW_TIMELINE_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_timeline.h"
#endif

/*
 * ---- Timeline: what the SMs did during one launch ----
 * A launch with VGPU_LAUNCH_TIMELINE records events into a buffer: a
 * struct vgpu_trace_header, then up to @capacity records of struct
 * vgpu_trace_event.  Events that do not fit are counted in @dropped and
 * lost; the records that fit are always whole.  Records of one CTA appear
 * in the order the SM produced them (a RUN record when the run ends, with
 * the cycle it began); records of different clusters may interleave.
 *
 * Time is the SM's clock in cycles since the cluster began: one cycle per
 * warp-instruction issued on the SM, and jumps while every warp waits for
 * a copy or a sleeper.  It depends only on the program, the launch and
 * the seed, so a timeline is reproducible.
 *
 * @flow links the event that completed a barrier phase (BAR_COMPLETE,
 * MBAR_COMPLETE, CLUSTER_COMPLETE) to the UNBLOCK of each warp it
 * released; a COPY_ISSUE and its COPY_DONE share @flow as well.  Flow
 * numbers are unique within a cluster.
 */
#define VGPU_TRACE_MAGIC 0x4c544756u /* "VGTL" */
#define VGPU_TRACE_VERSION 1u
#define VGPU_TRACE_MAX_BYTES (64u << 20) /* largest timeline buffer */

/**
 * struct vgpu_trace_header - start of a timeline buffer
 * @magic:        VGPU_TRACE_MAGIC once the launch has ended
 * @version:      VGPU_TRACE_VERSION
 * @record_bytes: sizeof(struct vgpu_trace_event)
 * @capacity:     records that fit after the header
 * @count:        records written (<= @capacity)
 * @dropped:      events that did not fit
 */
struct vgpu_trace_header {
	__u32 magic;
	__u32 version;
	__u32 record_bytes;
	__u32 capacity;
	__u64 count;
	__u64 dropped;
};

enum vgpu_trace_type {
	VGPU_TR_CTA_BEGIN = 1,
	VGPU_TR_CTA_END,
	VGPU_TR_RUN,	      /* @warp issued @count instructions from @cycle on,
			       * the first at @pc */
	VGPU_TR_BLOCK,	      /* @warp stopped at @pc: @reason; BAR: barrier @id,
			       * @count arrived of @expected; MBAR: object @addr,
			       * phase @id, parity @count */
	VGPU_TR_UNBLOCK,      /* @warp runnable again (@reason as its BLOCK);
			       * @flow: the completion that released it, 0 when
			       * time did (a sleep or try_wait time limit) */
	VGPU_TR_EXIT,	      /* every thread of @warp exited */
	VGPU_TR_BAR_ARRIVE,   /* named barrier @id: @count arrived of @expected */
	VGPU_TR_BAR_COMPLETE, /* named barrier @id completed, @flow */
	VGPU_TR_MBAR_ARRIVE,  /* mbarrier @addr: @count arrivals, @expected left
			       * pending; by @warp, or the copy @addr2 (flow) */
	VGPU_TR_MBAR_COMPLETE, /* mbarrier @addr completed phase @id (now @id+1),
				* @flow; by @warp, or the copy whose flow is
				* @addr2 (@warp VGPU_TRACE_NO_WARP) */
	VGPU_TR_MBAR_POLL,    /* TEST_WAIT/TRY_WAIT on @addr (phase @id) returned
			       * true in @count of @expected lanes */
	VGPU_TR_COPY_ISSUE,   /* @warp issued copy @flow: kind @id
			       * (VGPU_TRACE_COPY_*), @count bytes, global @addr,
			       * shared @addr2 (mbarrier in @expected, ~0u none) */
	VGPU_TR_COPY_DONE,    /* copy @flow finished (its complete_tx/arrive,
			       * or its bulk group's progress, happens now) */
	VGPU_TR_CLUSTER_COMPLETE, /* the cluster barrier completed, @flow */
	VGPU_TR_EXCEPTION,    /* exception @id (VGPU_EXC_*) raised at @pc */
};

/* @reason of BLOCK/UNBLOCK */
enum vgpu_trace_wait {
	VGPU_TRACE_WAIT_BAR = 1, /* BAR.SYNC / BAR.RED */
	VGPU_TRACE_WAIT_MBAR,	 /* MBAR.TRY_WAIT */
	VGPU_TRACE_WAIT_SLEEP,	 /* NANOSLEEP */
	VGPU_TRACE_WAIT_CLUSTER, /* BAR.CLUSTER.WAIT */
	VGPU_TRACE_WAIT_ASYNC,	 /* CP.ASYNC.WAIT_ALL / CP.ASYNC.BULK.WAIT_GROUP */
};

/* @id of COPY_ISSUE */
enum vgpu_trace_copy {
	VGPU_TRACE_COPY_CP = 1,	   /* CP.ASYNC (per lane; @count: all lanes) */
	VGPU_TRACE_COPY_BULK_LOAD, /* global -> shared */
	VGPU_TRACE_COPY_BULK_STORE,
	VGPU_TRACE_COPY_TENSOR_LOAD,
	VGPU_TRACE_COPY_TENSOR_STORE,
};

#define VGPU_TRACE_NO_WARP 0xffffffffu

/**
 * struct vgpu_trace_event - one timeline record (64 bytes)
 * @cycle:   SM cycles since the cluster began
 * @type:    VGPU_TR_*
 * @reason:  BLOCK/UNBLOCK: VGPU_TRACE_WAIT_*
 * @pad:     0
 * @warp:    warp of the CTA, or VGPU_TRACE_NO_WARP
 * @cta:     the CTA (x, y, z)
 * @pc:      byte offset of the instruction
 * @id, @count, @expected, @flow, @addr, @addr2: as the type says
 */
struct vgpu_trace_event {
	__u64 cycle;
	__u16 type;
	__u8 reason;
	__u8 pad;
	__u32 warp;
	__u32 cta[3];
	__u32 pc;
	__u32 id;
	__u32 count;
	__u32 expected;
	__u32 flow;
	__u64 addr;
	__u64 addr2;
};

#endif /* VGPU_HW_TIMELINE_H */
