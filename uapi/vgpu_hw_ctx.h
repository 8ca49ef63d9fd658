/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: the saved state of a preempted cluster (context
 * save and restore).  Part of vgpu_hw.h, which includes it: include that.
 */
#ifndef VGPU_HW_CTX_H
#define VGPU_HW_CTX_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_ctx.h"
#endif

/*
 * ---- Context save: the state of one preempted cluster ----
 * What a preemption saves of a cluster it stopped between two
 * warp-instructions, and what a restore (on any SM) resumes from,
 * bit-exactly.  Asynchronous copies in flight (cp.async, bulk and tensor
 * copies) are drained before the save: they complete, with their
 * complete_tx/arrive and bulk-group effects, as if the SM's warps had
 * paused while the copy engine finished; nothing is in flight in a saved
 * state.  Little-endian, 8-byte aligned records, in this order:
 *
 *   struct vgpu_ctx_header
 *   per CTA of the cluster, in rank order:
 *     struct vgpu_ctx_cta
 *     struct vgpu_ctx_mbar x nmbars      the live mbarriers' hidden state
 *     shared memory, smem_bytes rounded up to 8
 *     per warp: struct vgpu_ctx_warp, then registers R0..R(nregs-1) x 32
 *               lanes (__u32, register-major)
 *
 * Named barriers are saved as B2R state words and restored as R2B writes
 * them (uapi "Named-barrier state word"); which warps wait on each follows
 * from the warps' states.  The mbarrier words themselves are in shared
 * memory.  A restore checks every field against the launch and against
 * the rest of the state (sizes, CTA ids, pcs inside the program, warp
 * states and lane masks consistent, mbarriers inside shared memory and
 * 8-aligned, nothing in flight) and refuses a state that fails with
 * VGPU_EXC_BAD_CONTEXT; register and shared-memory contents are data and
 * restored as they are.
 */
#define VGPU_CTX_MAGIC 0x58544356u /* "VCTX" */
#define VGPU_CTX_VERSION 2u /* 2: per-lane call depth */

/**
 * struct vgpu_ctx_header - start of a saved cluster
 * @magic, @version: VGPU_CTX_MAGIC, VGPU_CTX_VERSION
 * @bytes:        size of the whole state, this header included
 * @cluster:      linear index of the cluster in the grid (x fastest)
 * @nctas:        CTAs in the cluster
 * @nwarps:       warps per CTA
 * @nregs:        registers saved per thread (the program's)
 * @smem_bytes:   shared memory per CTA
 * @next_cta:     the round-robin scheduler's next CTA
 * @clock:        SM clock (cycles)
 * @rng:          the random scheduler's generator state
 * @epoch:        observable changes so far (spin detection)
 * @cluster_t0:   clock when the cluster began (timeline)
 * @executed:     warp-instructions the cluster has executed
 * @clbar_phase:  cluster-barrier phase number
 * @flow_seq:     timeline flow numbers handed out
 * @run_cta, @run_warp, @quantum: the warp stopped inside its time slice
 *                and the slice it resumes with (run_cta ~0u: none)
 * @reserved:     0
 */
struct vgpu_ctx_header {
	__u32 magic;
	__u32 version;
	__u64 bytes;
	__u32 cluster;
	__u32 nctas;
	__u32 nwarps;
	__u32 nregs;
	__u32 smem_bytes;
	__u32 next_cta;
	__u64 clock;
	__u64 rng;
	__u64 epoch;
	__u64 cluster_t0;
	__u64 executed;
	__u32 clbar_phase;
	__u32 flow_seq;
	__u32 run_cta;
	__u32 run_warp;
	__u32 quantum;
	__u32 reserved[3];
};

/**
 * struct vgpu_ctx_cta - one CTA
 * @id:           its CTA index (x, y, z)
 * @exited_warps: warps whose threads have all exited
 * @runnable:     bit per warp that may be scheduled
 * @timed:        bit per warp with a wake-up time (sleeping, try_wait)
 * @next:         the round-robin scheduler's next warp
 * @nmbars:       live mbarriers (struct vgpu_ctx_mbar records that follow)
 * @bar:          the 16 named barriers, B2R state words
 */
struct vgpu_ctx_cta {
	__u32 id[3];
	__u32 exited_warps;
	__u32 runnable;
	__u32 timed;
	__u32 next;
	__u32 nmbars;
	__u32 bar[VGPU_NUM_NAMED_BARRIERS];
};

/**
 * struct vgpu_ctx_mbar - what the unit keeps beside a live mbarrier's word
 * @off:       its shared-memory offset (8-aligned)
 * @phase:     the full phase number (the word holds it modulo 4)
 * @need_wait: a completed phase nobody has waited on yet (sanitizer)
 * @pad:       0
 */
struct vgpu_ctx_mbar {
	__u32 off;
	__u32 phase;
	__u32 need_wait;
	__u32 pad;
};

/* struct vgpu_ctx_warp.state */
#define VGPU_CTXW_RUNNABLE 0u
#define VGPU_CTXW_BLOCKED 1u	  /* on named barrier wait_bar */
#define VGPU_CTXW_SLEEPING 2u	  /* NANOSLEEP until wake */
#define VGPU_CTXW_EXITED 3u
#define VGPU_CTXW_MBAR_WAIT 4u	  /* MBAR.TRY_WAIT suspended */
#define VGPU_CTXW_CLUSTER_WAIT 5u /* BAR.CLUSTER.WAIT */
#define VGPU_CTXW_ASYNC_WAIT 6u	  /* waiting for its copies (none after a save) */

/**
 * struct vgpu_ctx_warp - one warp (pcs are instruction indexes, not bytes)
 * @exists, @live:  lanes that exist, lanes not exited
 * @converged:      1 when every live lane is at @upc, else per-lane @pc
 * @upc, @cur_pc, @cur_mask: the converged pc, the group that runs next
 * @state:          VGPU_CTXW_*
 * @wait_bar, @wait_pc, @wait_mask: where a BLOCKED warp waits
 * @wake:           SLEEPING / MBAR_WAIT: the cycle it wakes at
 * @wait_cta, @wait_off: MBAR_WAIT: the mbarrier (CTA rank, offset)
 * @try_timed_out:  woken by the try_wait time limit
 * @parked, @park_any: lanes suspended in MBAR.TRY_WAIT
 * @fail_pc, @fail_epoch, @spin_*: spin detection
 * @wait_groups:    bulk groups an ASYNC_WAIT lets stay pending
 * @red_state:      BAR.RED result copy (B2R.WARP)
 * @bulk_committed: bulk async-groups committed
 * @clbar_arrived, @clbar_phase: cluster-barrier arrival
 * @cp_last_done:   when its last cp.async completed
 * @pred:           P0..P6, PT: lane masks (PT all ones)
 * @pc:             per-lane pc when not converged
 * @depth:          per-lane call depth (CALL/RET, docs/core.md "Calls"); a
 *                  converged warp's live lanes share one
 */
struct vgpu_ctx_warp {
	__u32 exists;
	__u32 live;
	__u32 converged;
	__u32 upc;
	__u32 cur_pc;
	__u32 cur_mask;
	__u32 state;
	__u32 wait_bar;
	__u32 wait_pc;
	__u32 wait_mask;
	__u64 wake;
	__u32 wait_cta;
	__u32 wait_off;
	__u32 try_timed_out;
	__u32 parked;
	__u32 park_any;
	__u32 fail_pc;
	__u64 fail_epoch;
	__u64 spin_epoch;
	__u32 spin_cta;
	__u32 spin_off;
	__u32 spin_pc;
	__u32 spin_mask;
	__u32 wait_groups;
	__u32 red_state;
	__u32 bulk_committed;
	__u32 clbar_arrived;
	__u32 clbar_phase;
	__u32 pad;
	__u64 cp_last_done;
	__u32 pred[8];
	__u32 pc[VGPU_WARP_SIZE];
	__u16 depth[VGPU_WARP_SIZE];
};

_Static_assert(sizeof(struct vgpu_ctx_header) == 112, "ctx header layout");
_Static_assert(sizeof(struct vgpu_ctx_cta) == 96, "ctx CTA layout");
_Static_assert(sizeof(struct vgpu_ctx_mbar) == 16, "ctx mbarrier layout");
_Static_assert(sizeof(struct vgpu_ctx_warp) == 360, "ctx warp layout");

#endif /* VGPU_HW_CTX_H */
