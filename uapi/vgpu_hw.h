/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface shared by the core, the QEMU device, the kernel
 * driver and userspace: limits, launch flags, the barrier-state word that
 * B2R/R2B move, and the exception record that a failed launch produces;
 * the rest (the register map, the commands, the MMU, ...) in the
 * vgpu_hw_*.h files it includes at its end.
 *
 * Only fixed-size types; every struct is a multiple of 8 bytes and pinned
 * by a size assertion.
 */
#ifndef VGPU_HW_H
#define VGPU_HW_H

/* the layout checks below, in C++ too (libvgpu's vgpu.h is C and C++) */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#if defined(__KERNEL__) || defined(__linux__)
#include <linux/types.h> /* the same __u* as drm.h and the rest of the uAPI */
#else
#include <stdint.h>
typedef uint8_t __u8;
typedef uint16_t __u16;
typedef int16_t __s16;
typedef uint32_t __u32;
typedef uint64_t __u64;
#endif

/* ---- Limits of one SM (device maxima; capabilities report them) ---- */
#define VGPU_WARP_SIZE 32u
#define VGPU_MAX_THREADS_PER_CTA 1024u
#define VGPU_MAX_WARPS_PER_CTA (VGPU_MAX_THREADS_PER_CTA / VGPU_WARP_SIZE)
#define VGPU_NUM_NAMED_BARRIERS 16u
#define VGPU_DEFAULT_SMEM_PER_SM (228u * 1024u) /* as on Hopper */
#define VGPU_MAX_PARAM_BYTES 4096u
#define VGPU_DEFAULT_BUDGET (1ull << 32) /* warp-instructions per launch */

#define VGPU_MAX_CLUSTER_CTAS 16u /* CTAs per cluster (co-resident) */
#define VGPU_PORTABLE_CLUSTER_CTAS 8u /* without a non-portable opt-in (CUDA) */
#define VGPU_DEFAULT_REGS_PER_SM 65536u /* 32-bit registers (reported) */

/*
 * ---- Device models: presets of the device's shape (property model=) ----
 * What CAP_MODEL reports.  VGPU: the device's own defaults (4 SMs, the
 * per-SM limits of one CTA at a time); H100: the H100 SXM5's 132 SMs and
 * its per-SM limits (228 KiB shared memory of which a CTA may use 227 KiB,
 * 32 CTAs, 64 warps, 64K registers, clusters of 8, 16 non-portable).
 */
#define VGPU_MODEL_VGPU 0u
#define VGPU_MODEL_H100 1u
#define VGPU_SMS_MAX 256u /* property sms= at most (and threads=) */
#define VGPU_H100_SMS 132u
#define VGPU_H100_SMEM_PER_SM (228u * 1024u)
#define VGPU_H100_SMEM_RESERVED 1024u /* per CTA: a CTA may use per SM less this */
#define VGPU_H100_CTAS_PER_SM 32u
#define VGPU_H100_WARPS_PER_SM 64u

/*
 * The H100 model's GPCs as cluster placement sees them: the SMs of each
 * GPC that clusters of more than 2 CTAs may use, one CTA of a cluster an
 * SM (clusters of 1 or 2 CTAs go to any SM, or to both SMs of any TPC).
 * Fitted to an H200's cuOccupancyMaxActiveClusters, which it reproduces
 * for every cluster size and CTAs an SM it answered
 * (tests/cuda/real-gpu/occupancy-h200-2026-11-30, docs/cuda.md
 * "Occupancy"): 124 of its 132 SMs, the other 8 in TPCs of no such GPC.
 * Another die of the same part may be fused otherwise.
 */
#define VGPU_H100_GPC_SMS { 18, 18, 16, 16, 16, 16, 16, 8 }

/*
 * a * b * c for a launch's three dimensions (a grid, a block, a cluster),
 * or ~0 where that overflows: 2^22 * 2^22 * 2^20 is 2^64, which once
 * wrapped to 0 and passed every limit.  Saturating, so that "<= limit"
 * holds only for a product that really is.
 */
static inline __u64 vgpu_dims_volume(__u32 a, __u32 b, __u32 c)
{
	__u64 v = (__u64)a * b;

	return __builtin_mul_overflow(v, (__u64)c, &v) ? ~0ull : v;
}

/* ---- Launch flags ---- */
#define VGPU_LAUNCH_RANDOM_SCHED (1u << 0) /* seeded random interleaving */
#define VGPU_LAUNCH_SANITIZE (1u << 1)	   /* mbarrier/async UB -> exception */
#define VGPU_LAUNCH_TIMELINE (1u << 2)	   /* record events (struct vgpu_trace_event) */
/*
 * Cooperative (CUDA's cooperative launch): every CTA of the grid is
 * co-resident, so CTAs may wait on each other (a grid-wide barrier).  The
 * device runs the whole grid at once on one SM, interleaved as a
 * cluster's CTAs are; each CTA is still a cluster of one (cluster
 * registers, .shared::cluster addresses, MAPA), except that BAR.CLUSTER
 * waits for the whole grid.  The cluster must be 1x1x1 and the grid at
 * most VGPU_MAX_CLUSTER_CTAS CTAs (else VGPU_EXC_BAD_LAUNCH).
 */
#define VGPU_LAUNCH_COOPERATIVE (1u << 3)
#define VGPU_LAUNCH_FLAGS_MASK                                                 \
	(VGPU_LAUNCH_RANDOM_SCHED | VGPU_LAUNCH_SANITIZE | VGPU_LAUNCH_TIMELINE | \
	 VGPU_LAUNCH_COOPERATIVE)

/*
 * ---- Shared-memory addresses ----
 *
 * A shared address with bit 31 clear is an offset in the executing CTA's
 * shared memory (.shared::cta).  With bit 31 set it names another CTA of
 * the cluster (.shared::cluster, what MAPA returns):
 *
 *   [31] 1   [30:24] CTA rank in the cluster   [23:0] offset
 */
#define VGPU_SMEM_CLUSTER_BIT (1u << 31)
#define VGPU_SMEM_RANK_SHIFT 24
#define VGPU_SMEM_RANK_MASK 0x7fu
#define VGPU_SMEM_OFFSET_MASK 0xffffffu

/*
 * ---- mbarrier object: one 64-bit word in shared memory, 8-aligned ----
 *
 *   [19:0]  PENDING   arrivals still expected in the current phase
 *   [39:20] EXPECTED  arrivals expected in each later phase
 *   [60:40] TX        tx-count, 21-bit two's complement,
 *                     -(2^20-1) .. 2^20-1
 *   [62:61] PHASE     current phase, modulo 4
 *   [63]    VALID     set by MBAR.INIT, cleared by MBAR.INVAL
 *
 * A phase completes when PENDING == 0 and TX == 0: PHASE advances and
 * PENDING is reloaded from EXPECTED, in one step.
 */
#define VGPU_MBAR_PENDING_SHIFT 0
#define VGPU_MBAR_EXPECTED_SHIFT 20
#define VGPU_MBAR_TX_SHIFT 40
#define VGPU_MBAR_PHASE_SHIFT 61
#define VGPU_MBAR_VALID_SHIFT 63
#define VGPU_MBAR_COUNT_MASK 0xfffffull /* 20 bits */
#define VGPU_MBAR_TX_MASK 0x1fffffull	/* 21 bits */
#define VGPU_MBAR_PHASE_MASK 0x3ull
#define VGPU_MBAR_COUNT_MAX ((1u << 20) - 1)
#define VGPU_MBAR_TX_MAX ((1 << 20) - 1)

/*
 * ---- mbarrier state token (MBAR.ARRIVE's 64-bit result) ----
 *
 *   [19:0]  PENDING   pending count before the arrive (MBAR.PENDING_COUNT)
 *   [51:20] PHASE     phase of the arrive (low 32 bits of the phase number)
 *   [60:52] 0
 *   [61]    NOCOMPLETE  the token comes from a .NOCOMPLETE arrive
 *   [62]    0
 *   [63]    1         marks a token
 */
#define VGPU_TOKEN_PHASE_SHIFT 20
#define VGPU_TOKEN_NOCOMPLETE (1ull << 61)
#define VGPU_TOKEN_MARK (1ull << 63)

/*
 * ---- Named-barrier state word (B2R reads it, R2B writes it) ----
 *
 *   [6:0]   ARRIVED   arrivals so far / 32 (each warp arrival adds 32)
 *   [13:7]  EXPECTED  expected count / 32; 0 means "every warp that has not
 *                     exited" (the cnt = 0 rule)
 *   [15:14] MODE      0 idle, 1 SYNC/ARV in progress, 2 RED in progress
 *   [17:16] REDOP     reduction of a RED round (AND 0, OR 1, POPC 2)
 *   [28:18] ACC       reduction value: running AND/OR (bit 18) or POPC count
 *   [31:29] reserved, read as zero, ignored on write
 *
 * The per-warp copy that BAR.RED leaves behind (B2R.WARP / R2B.WARP) uses
 * the same format: ARRIVED/EXPECTED/REDOP as at completion, MODE = 2 once
 * the warp has taken part in a reduction (0 before), ACC = the result that
 * B2R.RESULT returns.
 */
#define VGPU_BARST_ARRIVED_SHIFT 0
#define VGPU_BARST_ARRIVED_MASK 0x7fu
#define VGPU_BARST_EXPECTED_SHIFT 7
#define VGPU_BARST_EXPECTED_MASK 0x7fu
#define VGPU_BARST_MODE_SHIFT 14
#define VGPU_BARST_MODE_MASK 0x3u
#define VGPU_BARST_REDOP_SHIFT 16
#define VGPU_BARST_REDOP_MASK 0x3u
#define VGPU_BARST_ACC_SHIFT 18
#define VGPU_BARST_ACC_MASK 0x7ffu

#define VGPU_BARMODE_IDLE 0u
#define VGPU_BARMODE_SYNC 1u
#define VGPU_BARMODE_RED 2u

/* ---- Exception codes ---- */
#define VGPU_EXC_CODES(E)                                                      \
	E(NONE, 0, "no exception")                                             \
	E(ILLEGAL_INSTR, 1, "illegal instruction")                             \
	E(BAR_COUNT_MISMATCH, 2, "barrier count mismatch")                     \
	E(BAR_MODE_CONFLICT, 3, "barrier mode conflict")                       \
	E(SMEM_RANGE, 4, "shared memory out of range")                         \
	E(MISALIGNED, 5, "misaligned access")                                  \
	E(GLOBAL_FAULT, 6, "global memory fault")                              \
	E(DEADLOCK, 7, "deadlock")                                             \
	E(BUDGET, 8, "instruction budget exceeded")                            \
	E(BAR_BAD_COUNT, 9, "invalid barrier count")                           \
	E(PARAM_RANGE, 10, "parameter space out of range")                     \
	E(PC_RANGE, 11, "pc out of program")                                   \
	E(BAD_LAUNCH, 12, "invalid launch parameters")                         \
	E(ABORTED, 13, "launch aborted")                                       \
	E(MBAR_UNINIT, 16, "mbarrier not initialised")                         \
	E(MBAR_ACCESS, 17, "ordinary access to a live mbarrier")               \
	E(MBAR_REINIT, 18, "init of a live mbarrier")                          \
	E(MBAR_RANGE, 19, "mbarrier count out of range")                       \
	E(MBAR_OVERFLOW, 20, "mbarrier pending count overflow")                \
	E(MBAR_PHASE_ORDER, 21, "arrive before the previous phase was waited on") \
	E(MBAR_NOCOMPLETE, 22, ".noComplete arrive would complete the phase")  \
	E(MBAR_BAD_TOKEN, 23, "token names neither current nor preceding phase") \
	E(MBAR_REMOTE_WAIT, 24, "wait on another CTA's mbarrier")              \
	E(ASYNC_COPY, 25, "invalid asynchronous copy")                         \
	E(TENSOR_MAP, 26, "invalid tensor map")                                \
	E(CLUSTER_RANGE, 27, "cluster rank out of range")                      \
	E(SEM_TIMEOUT, 28, "semaphore acquire timed out")                     \
	E(BAD_CONTEXT, 29, "invalid saved context")                           \
	E(STACK_OVERFLOW, 30, "call stack overflow")                           \
	E(BAD_RETURN, 31, "return without a call")                             \
	E(TRAP, 32, "trap instruction")                                        \
	E(ASSERT, 33, "assertion failed")                                      \
	E(DEVICE_LAUNCH, 34, "invalid device-side launch")

enum vgpu_exc_code {
#define VGPU_X_EXC(name, val, str) VGPU_EXC_##name = (val),
	VGPU_EXC_CODES(VGPU_X_EXC)
#undef VGPU_X_EXC
};

/* Warp wait state in an exception record (warp_wait[]) */
#define VGPU_WAIT_NONE 0xffu	/* runnable */
#define VGPU_WAIT_EXITED 0xfeu	/* all threads exited */
#define VGPU_WAIT_ABSENT 0xfdu	/* warp does not exist in this CTA */
#define VGPU_WAIT_SLEEP 0xfcu	/* NANOSLEEP */
#define VGPU_WAIT_MBAR 0xfbu	/* MBAR.TRY_WAIT on an mbarrier */
#define VGPU_WAIT_CLUSTER 0xfau /* BAR.CLUSTER.WAIT */
#define VGPU_WAIT_ASYNC 0xf9u	/* waiting for its asynchronous copies */
/* 0..15: blocked on named barrier N */

#define VGPU_EXC_MSG_LEN 192

/**
 * struct vgpu_exception_record - why a launch stopped
 * @code:      enum vgpu_exc_code
 * @cta:       CTA index (x, y, z) that raised it
 * @warp:      warp index within the CTA
 * @lane_mask: threads of the warp that executed the faulting instruction
 * @pc:        byte offset of the instruction in the program
 * @barid:     barrier id involved, or 0xffffffff
 * @addr:      faulting address (global, shared or parameter space), or 0
 * @insn:      the raw 128-bit instruction (insn[0] = bits 0..63)
 * @info:      code-specific values (for barriers: expected count, count
 *             supplied, barrier state word; for budget: instructions run;
 *             for mbarriers: state word low, high, phase number, and the
 *             operand at fault; for WARPSYNC's ILLEGAL_INSTR: the lanes
 *             outside their member masks, the first one's mask)
 * @warp_wait: per warp of the CTA, what it waits on (VGPU_WAIT_* or a
 *             barrier id); filled for every exception, essential for
 *             deadlocks
 * @msg:       NUL-terminated human-readable description
 */
struct vgpu_exception_record {
	__u32 code;
	__u32 cta[3];
	__u32 warp;
	__u32 lane_mask;
	__u32 pc;
	__u32 barid;
	__u64 addr;
	__u64 insn[2];
	__u32 info[4];
	__u8 warp_wait[VGPU_MAX_WARPS_PER_CTA];
	char msg[VGPU_EXC_MSG_LEN];
};

_Static_assert(sizeof(struct vgpu_exception_record) == 296,
	       "exception record layout");

/*
 * The rest of the interface, a file a part, each included only through
 * this one:
 *   vgpu_hw_timeline.h: the timeline: what the SMs did during one launch
 *     (VGPU_LAUNCH_TIMELINE);
 *   vgpu_hw_tensor.h: the tensor map, the descriptor of a tensor that the
 *     tensor copies read;
 *   vgpu_hw_ctx.h: the saved state of a preempted cluster (context save
 *     and restore);
 *   vgpu_hw_regs.h: the PCI device: its identity, the BAR0 register map,
 *     fault injection, queue priorities, timeslices, preemption, user-mode
 *     queues and their swapping;
 *   vgpu_hw_cmd.h: command statuses, the command ring's commands,
 *     semaphores and completion records;
 *   vgpu_hw_mmu.h: the GPU MMU: page tables in guest memory;
 *   vgpu_hw_cdp.h: device-side launch: the device-launch area and the
 *     kernel descriptor.
 */
#include "vgpu_hw_timeline.h"
#include "vgpu_hw_tensor.h"
#include "vgpu_hw_ctx.h"
#include "vgpu_hw_regs.h"
#include "vgpu_hw_cmd.h"
#include "vgpu_hw_mmu.h"
#include "vgpu_hw_cdp.h"

#endif /* VGPU_HW_H */
