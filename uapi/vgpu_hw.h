/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface shared by the core, the QEMU device, the kernel
 * driver and userspace: limits, launch flags, the barrier-state word that
 * B2R/R2B move, and the exception record that a failed launch produces.
 *
 * Only fixed-size types; every struct is a multiple of 8 bytes and pinned
 * by a size assertion.
 */
#ifndef VGPU_HW_H
#define VGPU_HW_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
typedef uint8_t __u8;
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

/* ---- Launch flags ---- */
#define VGPU_LAUNCH_RANDOM_SCHED (1u << 0) /* seeded random interleaving */
#define VGPU_LAUNCH_SANITIZE (1u << 1)	   /* mbarrier/async UB -> exception */
#define VGPU_LAUNCH_FLAGS_MASK (VGPU_LAUNCH_RANDOM_SCHED | VGPU_LAUNCH_SANITIZE)

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
 * ---- Tensor map: the 128-byte descriptor of a tensor in global memory,
 * read by CP.ASYNC.BULK.TENSOR from a 64-byte-aligned global address ----
 *
 * Element (x0, .., x4) lies at base + x0 * elem_size + sum over d >= 1 of
 * x_d * strides[d - 1].  A copy moves a box: for each dimension d it takes
 * ceil(box[d] / elem_strides[d]) elements starting at the coordinate the
 * instruction gives and stepping elem_strides[d]; shared memory holds the
 * box densely, dimension 0 fastest.  Out-of-bounds elements (a coordinate
 * < 0 or >= dims[d]) read as zero and are not written by stores.
 */
#define VGPU_TMAP_MAGIC 0x50414d54u /* "TMAP" */
#define VGPU_TMAP_MAX_RANK 5
#define VGPU_TMAP_MAX_BOX 256u
#define VGPU_TMAP_MAX_ELEM_STRIDE 8u

struct vgpu_tensor_map {
	__u64 base;		 /* global address of element 0, 16-aligned */
	__u32 magic;		 /* VGPU_TMAP_MAGIC */
	__u8 rank;		 /* 1 .. 5 */
	__u8 elem_size;		 /* 1, 2, 4 or 8 bytes */
	__u8 oob_fill;		 /* 0: zeros (the only fill mode) */
	__u8 pad0;		 /* must be zero */
	__u32 dims[VGPU_TMAP_MAX_RANK];	/* elements per dimension, >= 1 */
	__u32 pad1;		 /* must be zero */
	__u64 strides[VGPU_TMAP_MAX_RANK - 1]; /* bytes, dims 1..rank-1, 16-multiple */
	__u32 box[VGPU_TMAP_MAX_RANK];	/* 1 .. 256 */
	__u32 elem_strides[VGPU_TMAP_MAX_RANK]; /* 1 .. 8 */
	__u32 reserved[4];	 /* must be zero */
};

_Static_assert(sizeof(struct vgpu_tensor_map) == 128, "tensor map layout");

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
	E(CLUSTER_RANGE, 27, "cluster rank out of range")

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
 *             operand at fault)
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

#endif /* VGPU_HW_H */
