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
 * read by the tensor copies (CP.ASYNC.BULK.TENSOR*) from a 64-byte-aligned
 * global address ----
 *
 * Element (x0, .., x4) lies at base + x0 * elem_size + sum over d >= 1 of
 * x_d * strides[d - 1].  Out-of-bounds elements (a coordinate < 0 or >=
 * dims[d] in any dimension) read as zero and are not written by stores.
 * A tile-mode box starts at a 16-byte boundary of a row (coordinate 0 x
 * elem_size a multiple of 16), and a store's or reduction's at no negative
 * coordinate; else ASYNC_COPY (an H200 raises an illegal instruction).
 * A map has a mode, which the instruction names too (PTX's .load_mode):
 *
 * Tile mode (VGPU_TMAP_TILE, CP.ASYNC.BULK.TENSOR[.GLOBAL]): a copy moves
 * a box: for each dimension d it takes ceil(box[d] / elem_strides[d])
 * elements starting at the coordinate the instruction gives and stepping
 * elem_strides[d]; shared memory holds the box densely, dimension 0
 * fastest.
 *
 * Im2col mode (VGPU_TMAP_IM2COL, CP.ASYNC.BULK.TENSOR[.GLOBAL].IM2COL;
 * PTX ISA 5.5.4): the tensor is a batch of images of rank 3, 4 or 5:
 * dimension 0 is the channels C, dimensions 1 .. rank-2 the pixel's W, H,
 * D, dimension rank-1 the image N (NWC, NHWC, NDHWC).  A copy moves
 * @pixels pixels, each @channels consecutive channels from the
 * instruction's coordinate c0 (c0 .. c0 + channels - 1); shared memory
 * holds them densely, pixel after pixel (pixels x channels elements).
 * In spatial dimension d (s = d - 1 indexes lower, upper and the
 * instruction's im2col offsets off[]; a store has none: 0) the pixels
 * lie in the bounding box [lo_d, hi_d], both ends included:
 *
 *   lo_d = lower[s] + off[s]        hi_d = dims[d] - 1 + upper[s] + off[s]
 *
 * The first pixel is at x_d = coord[d] + off[s], n = coord[rank-1]
 * (coord[d] must lie in [lower[s], dims[d] - 1 + upper[s]]: the filter
 * base inside the box; else ASYNC_COPY, where an H200 faults).  The next pixel: x_1 +=
 * elem_strides[1]; past hi_1 it restarts at lo_1 and x_2 +=
 * elem_strides[2], and so on up the spatial dimensions; past the last
 * one's hi it restarts at its lo and n += elem_strides[rank-1] (W
 * fastest, then H, D, N; N's traversal stride steps the images, as an
 * H200 does, though PTX names only D, H and W's).  Pixels past the last
 * image (n >= dims[rank-1]) are out of bounds.  elem_strides[0] (C) does
 * not step anything (CUDA: "ignored").  A store (PTX's .im2col_no_offs)
 * writes the same walk; it requires the box inside the tensor (lower[] >=
 * 0, upper[] <= 0) and coordinates >= 0 (else ASYNC_COPY), so only C and
 * N can leave it.
 *
 * The instruction's im2col offsets are 16-bit unsigned: below 2^16 at
 * rank 3, 2^8 at rank 4, 2^5 at rank 5; its channel coordinate c0 a
 * multiple of 16 bytes (c0 * elem_size; an H200 faults on others).  Else
 * ASYNC_COPY.
 *
 * Tensor reductions (CP.REDUCE.ASYNC.BULK.TENSOR[.IM2COL], PTX's
 * cp.reduce.async.bulk.tensor) walk as stores do (tile, or im2col with no
 * offsets) and reduce each in-bounds element of global memory with its
 * element in shared memory, atomically element by element, in the type
 * dtype names.  The operations each type has (PTX ISA's table, and ADD
 * of F64 which an H200 does; any other pair: TENSOR_MAP, where an H200
 * raises an illegal instruction): ADD on U32 S32 U64 F32 F32_FTZ F64 F16
 * BF16; MIN and MAX on U32 S32 U64 S64 F16 BF16; INC and DEC on U32;
 * AND, OR and XOR on U32 S32 U64 (S64 faults on the H200).  A tile
 * box's coordinates must be >= 0 and its first one's bytes (c0 *
 * elem_size) a multiple of 16, as on the H200; else ASYNC_COPY.  ADD of
 * F32_FTZ flushes subnormal
 * operands and result to zero, of F32, F64, F16 and BF16 it keeps them;
 * a NaN result of F32, F16 and BF16 is the canonical 0x7fffffff / 0x7fff;
 * MIN and MAX of F16 and BF16 are minNum/maxNum, -0 below +0 (the
 * atomics' rules, vgpu_core.h; measured on an H200,
 * tests/cuda/real-gpu/tensor-reduce-h200-2026-11-30).
 *
 * The rules of a map (one broken: TENSOR_MAP at the map's address):
 *   every mode: magic; rank as the instruction's; elem_size 1, 2, 4 or 8;
 *     dtype 0 .. VGPU_TMAP_DT_MAX, and if not 0 of elem_size bytes;
 *     oob_fill, swizzle, interleave and pad1 0; base 16-aligned; for
 *     d < rank: dims[d] >= 1,
 *     elem_strides[d] 1 .. 8, strides[d - 1] a multiple of 16;
 *     mode as the instruction's (0 or 1);
 *   tile mode: box[d] 1 .. 256 for d < rank; channels, pixels, lower[]
 *     and upper[] 0;
 *   im2col mode: rank 3 .. 5; box[] 0; channels 1 .. 256 and a multiple
 *     of 16 bytes (channels * elem_size); pixels 1 .. 1024; lower[s] and
 *     upper[s] for s < rank - 2 in [-2^15, 2^15) at rank 3, [-2^7, 2^7)
 *     at rank 4, [-2^4, 2^4) at rank 5, and a box that is not empty:
 *     lower[s] <= dims[d] - 1 + upper[s]; lower[s] and upper[s] 0 for
 *     s >= rank - 2.
 */
#define VGPU_TMAP_MAGIC 0x50414d54u /* "TMAP" */
#define VGPU_TMAP_MAX_RANK 5
#define VGPU_TMAP_MAX_BOX 256u
#define VGPU_TMAP_MAX_ELEM_STRIDE 8u
#define VGPU_TMAP_TILE 0u
#define VGPU_TMAP_IM2COL 1u
#define VGPU_TMAP_MAX_CHANNELS 256u
#define VGPU_TMAP_MAX_PIXELS 1024u

/*
 * Element types (dtype): PTX's .elemtype numbering (tensormap.replace)
 * plus one; 0 leaves the type unsaid, which copies allow and reductions
 * (CP.REDUCE.ASYNC.BULK.TENSOR) refuse.
 */
#define VGPU_TMAP_DT_NONE 0u
#define VGPU_TMAP_DT_U8 1u
#define VGPU_TMAP_DT_U16 2u
#define VGPU_TMAP_DT_U32 3u
#define VGPU_TMAP_DT_S32 4u
#define VGPU_TMAP_DT_U64 5u
#define VGPU_TMAP_DT_S64 6u
#define VGPU_TMAP_DT_F16 7u
#define VGPU_TMAP_DT_F32 8u
#define VGPU_TMAP_DT_F32_FTZ 9u
#define VGPU_TMAP_DT_F64 10u
#define VGPU_TMAP_DT_BF16 11u
#define VGPU_TMAP_DT_TF32 12u
#define VGPU_TMAP_DT_TF32_FTZ 13u
#define VGPU_TMAP_DT_MAX VGPU_TMAP_DT_TF32_FTZ

/* The bytes of an element of type @dt (1 .. VGPU_TMAP_DT_MAX), else 0. */
static inline __u32 vgpu_tmap_dt_size(__u32 dt)
{
	static const __u8 size[VGPU_TMAP_DT_MAX + 1] = { 0, 1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4 };

	return dt <= VGPU_TMAP_DT_MAX ? size[dt] : 0;
}

struct vgpu_tensor_map {
	__u64 base;		 /* global address of element 0, 16-aligned */
	__u32 magic;		 /* VGPU_TMAP_MAGIC */
	__u8 rank;		 /* 1 .. 5 (im2col: 3 .. 5) */
	__u8 elem_size;		 /* 1, 2, 4 or 8 bytes */
	__u8 oob_fill;		 /* 0: zeros (the only fill mode) */
	__u8 mode;		 /* VGPU_TMAP_TILE or VGPU_TMAP_IM2COL */
	__u32 dims[VGPU_TMAP_MAX_RANK];	/* elements per dimension, >= 1 */
	__u8 swizzle;		 /* must be zero (tensormap.replace's swizzle_mode) */
	__u8 dtype;		 /* VGPU_TMAP_DT_*: element type; 0 untyped */
	__u8 interleave;	 /* must be zero (tensormap.replace's interleave) */
	__u8 pad1;		 /* must be zero */
	__u64 strides[VGPU_TMAP_MAX_RANK - 1]; /* bytes, dims 1..rank-1, 16-multiple */
	__u32 box[VGPU_TMAP_MAX_RANK];	/* tile: 1 .. 256; im2col: 0 */
	__u32 elem_strides[VGPU_TMAP_MAX_RANK]; /* 1 .. 8 */
	/* im2col mode; 0 in tile mode */
	__u16 channels;		 /* channels per pixel, 1 .. 256 */
	__u16 pixels;		 /* pixels per copy (PTX's per column), 1 .. 1024 */
	__s16 lower[3];		 /* bounding box's lower corner: W, H, D */
	__s16 upper[3];		 /* its upper corner, from dims - 1: W, H, D */
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

/* ==== Device interface (QEMU vgpu-pci) ==== */
/*
 * The PCIe device that QEMU's -device vgpu-pci implements (docs/device.md).
 * Everything little-endian.
 *
 * PCI identity: vendor 0x7690, device 0x0001, class 0x1200 (processing
 * accelerator), revision 1.  0x7690 is not an assigned PCI-SIG vendor ID
 * (absent from pci.ids, far from the range the PCI-SIG allocates from
 * today); it names this virtual device only and must never be used by
 * hardware.
 *
 * BARs: BAR0 = the registers below (16 KiB, 32-bit accesses only, aligned);
 * BAR2 = the MSI-X table and PBA (2 vectors); BAR4 = the doorbell pages,
 * one 4 KiB page per queue ("User-mode queues").  Interrupts: MSI-X vector 0
 * for VGPU_IRQ_COMPLETION and VGPU_IRQ_USER, vector 1 for VGPU_IRQ_ERROR;
 * without MSI-X,
 * INTx (pin A) is asserted while (IRQ_STATUS & IRQ_MASK) != 0.
 */
#define VGPU_PCI_VENDOR_ID 0x7690u
#define VGPU_PCI_DEVICE_ID 0x0001u
#define VGPU_PCI_CLASS 0x1200u /* processing accelerator */
#define VGPU_PCI_REVISION 1u
#define VGPU_BAR0_SIZE 0x4000u
#define VGPU_MSIX_BAR 2
#define VGPU_MSIX_VEC_COMPLETION 0u
#define VGPU_MSIX_VEC_ERROR 1u
#define VGPU_MSIX_VECTORS 2u

#define VGPU_ID_MAGIC 0x55504756u /* "VGPU" */
#define VGPU_VERSION_MAJOR 1u
#define VGPU_VERSION_MINOR 1u /* 1.1: CAP_SMEM_CTA .. CAP_CLUSTER_MAX */

/*
 * ---- BAR0 register map ----  (RO) read-only, (RW) read/write,
 * (WO) write-only (reads 0), (W1C) write 1 to clear.  32-bit registers;
 * 64-bit addresses are LO/HI pairs.  Other offsets read 0 and ignore writes.
 */
#define VGPU_REG_ID 0x000		/* (RO) VGPU_ID_MAGIC */
#define VGPU_REG_VERSION 0x004		/* (RO) major << 16 | minor */
#define VGPU_REG_CAP_SMS 0x008		/* (RO) number of SMs (sms=) */
#define VGPU_REG_CAP_SMEM 0x00c		/* (RO) shared-memory bytes per SM (smem=) */
#define VGPU_REG_CAP_MAX_THREADS 0x010	/* (RO) max threads per CTA (1024) */
#define VGPU_REG_CAP_BARRIERS 0x014	/* (RO) named barriers per CTA (16) */
#define VGPU_REG_CAP_FEATURES 0x018	/* (RO) VGPU_FEAT_* */
#define VGPU_REG_CAP_QUEUES 0x01c	/* (RO) hardware queues (queues=, 1..VGPU_QUEUES_MAX) */
#define VGPU_REG_CAP_WARP_SIZE 0x020	/* (RO) 32 */
#define VGPU_REG_CAP_MAX_PARAM 0x024	/* (RO) parameter-buffer bytes (4096) */
#define VGPU_REG_CAP_VA_BITS 0x028	/* (RO) GPU virtual-address bits (48) */
#define VGPU_REG_CAP_MAX_CODE 0x02c	/* (RO) max program bytes per launch */
#define VGPU_REG_CAP_AS_MAX 0x030	/* (RO) max address-space table entries */
#define VGPU_REG_CAP_RING_MAX 0x034	/* (RO) max ring entries per queue */
#define VGPU_REG_CAP_THREADS 0x038	/* (RO) host threads running SMs (threads=) */

#define VGPU_REG_CONTROL 0x040		/* (RW) VGPU_CTRL_* */
#define VGPU_REG_STATUS 0x044		/* (RO) VGPU_STATUS_* */
#define VGPU_REG_WDOG_MS 0x048		/* (RW) wall-clock limit per launch, ms; 0 = default,
					 * at most VGPU_MAX_WDOG_MS */
#define VGPU_REG_IRQ_STATUS 0x050	/* (RO) VGPU_IRQ_* raised and not yet acknowledged */
#define VGPU_REG_IRQ_MASK 0x054		/* (RW) VGPU_IRQ_* that may interrupt; 0 at reset */
#define VGPU_REG_IRQ_ACK 0x058		/* (WO, W1C) clear IRQ_STATUS bits */
#define VGPU_REG_AS_BASE_LO 0x060	/* (RW) address-space table, guest physical, 8-aligned */
#define VGPU_REG_AS_BASE_HI 0x064	/* (RW) */
#define VGPU_REG_AS_COUNT 0x068		/* (RW) entries in the table (<= CAP_AS_MAX) */
#define VGPU_REG_ERR_COUNT 0x070	/* (RO) guest errors seen since reset (all kinds) */
#define VGPU_REG_ERR_LAST 0x074		/* (RO) VGPU_ERR_* of the latest */
#define VGPU_REG_ERR_INFO 0x078		/* (RO) queue << 16 | ring index of the latest */
#define VGPU_REG_CSB_SLOT 0x07c		/* (RW) bytes of one context-save slot: a multiple of
					 * 4096, 0 = no preemption; see "Preemption" */
#define VGPU_REG_PREEMPTIONS 0x080	/* (RO) clusters saved by preemption since reset */
#define VGPU_REG_PREEMPT 0x084		/* (WO) queue index: preempt its launch now */
#define VGPU_REG_TIMESLICE_US 0x088	/* (RW) timeslice, microseconds of device time,
					 * at most VGPU_MAX_TIMESLICE_US; 0 = none;
					 * reset: property timeslice-us; see "Timeslices" */
#define VGPU_REG_INJECT 0x090		/* (RW) arm a fault (VGPU_FEAT_INJECT); see
					 * "Fault injection" */
#define VGPU_REG_INJECT_ARG_LO 0x094	/* (RW) the next armed fault's argument */
#define VGPU_REG_INJECT_ARG_HI 0x098	/* (RW) */
#define VGPU_REG_TLB_FLUSH 0x09c	/* (WO) any value: every TLB drops every entry;
					 * translations after the write walk the
					 * tables (VGPU_FEAT_USER_QUEUES) */

/* Capabilities of interface 1.1: the SM's shape (property model=) */
#define VGPU_REG_CAP_MODEL 0x0a0	/* (RO) VGPU_MODEL_* the device was made as */
#define VGPU_REG_CAP_SMEM_CTA 0x0a4	/* (RO) shared-memory bytes one CTA may use
					 * (<= CAP_SMEM); a launch above: BAD_LAUNCH */
#define VGPU_REG_CAP_CTAS_PER_SM 0x0a8	/* (RO) resident CTAs per SM (occupancy) */
#define VGPU_REG_CAP_WARPS_PER_SM 0x0ac /* (RO) resident warps per SM (occupancy) */
#define VGPU_REG_CAP_REGS_PER_SM 0x0b0	/* (RO) 32-bit registers per SM (65536) */
#define VGPU_REG_CAP_CLUSTER 0x0b4	/* (RO) portable cluster size: CTAs (8) */
#define VGPU_REG_CAP_CLUSTER_MAX 0x0b8	/* (RO) non-portable cluster size (16) */

#define VGPU_CTRL_RESET (1u << 0)	/* (WO) device reset; self-clearing */

#define VGPU_STATUS_BUSY (1u << 0)	/* a command is executing on some queue */

#define VGPU_IRQ_COMPLETION (1u << 0)	/* a command with VGPU_CMD_F_IRQ completed */
#define VGPU_IRQ_ERROR (1u << 1)	/* a queue stopped on an error */
#define VGPU_IRQ_USER (1u << 2)		/* the same as COMPLETION, on a user-mode queue
					 * (VGPU_FEAT_USER_IRQ; else COMPLETION) */
#define VGPU_IRQ_ALL (VGPU_IRQ_COMPLETION | VGPU_IRQ_ERROR | VGPU_IRQ_USER)

#define VGPU_FEAT_MMU (1u << 0)		 /* GPU MMU, always set */
#define VGPU_FEAT_RANDOM_SCHED (1u << 1) /* VGPU_LAUNCH_RANDOM_SCHED */
#define VGPU_FEAT_MBARRIER (1u << 2)	 /* mbarrier unit */
#define VGPU_FEAT_TMA (1u << 3)		 /* TMA engine */
#define VGPU_FEAT_CLUSTERS (1u << 4)	 /* launches with cluster dims > 1 */
#define VGPU_FEAT_SEMAPHORES (1u << 5)	 /* SEM_ACQUIRE/SEM_RELEASE, VGPU_Q_PRIORITY */
#define VGPU_FEAT_PREEMPT (1u << 6)	 /* mid-kernel preemption (VGPU_Q_CSB) */
#define VGPU_FEAT_INJECT (1u << 7)	 /* fault injection (property x-inject) */
#define VGPU_FEAT_NULL_PTE (1u << 8)	 /* VGPU_PTE_NULL at levels 0..2 (sparse mappings) */
#define VGPU_FEAT_USER_QUEUES (1u << 9)	 /* user-mode queues, doorbell BAR */
#define VGPU_FEAT_USER_IRQ (1u << 10)	 /* user queues raise VGPU_IRQ_USER */
#define VGPU_FEAT_QUEUE_SWAP (1u << 11)	 /* VGPU_QCTRL_HOLD, VGPU_QCTRL_RESTORE: a queue
					  * taken off and put back ("Swapping queues") */
#define VGPU_FEAT_DEVICE_LAUNCH (1u << 12) /* device-side launch: a launch's device-launch
					    * area (struct vgpu_cmd_launch's @cdp_area,
					    * struct vgpu_cdp_header) */

/*
 * ---- Fault injection: a device that misbehaves on purpose ----
 * With the property x-inject=on (CAP_FEATURES has VGPU_FEAT_INJECT) the
 * device can be told to fail the way real hardware does, so that a
 * driver's timeout, recovery and reset paths run in tests.  Without it,
 * INJECT reads 0 and writes to it are ignored (a guest error).
 *
 * Writing INJECT arms a fault on one queue, replacing the one armed there:
 *   bits 7..0   VGPU_INJ_* (VGPU_INJ_NONE disarms the queue)
 *   bits 15..8  queue index (others: ignored, a guest error)
 *   bits 31..16 how many times it strikes (0 means once)
 * with INJECT_ARG_LO/HI, written before, as its argument.  Reading INJECT
 * gives the fault armed on the queue last written, with the strikes left
 * (0 once spent).  Disabling the queue and a device reset disarm it.
 *
 *   DROP_IRQ     a command with VGPU_CMD_F_IRQ completes (record written,
 *                COMPLETED counted) but raises no interrupt: a lost MSI
 *   DELAY_IRQ    its interrupt comes ARG milliseconds late (VM time)
 *   MMU_FAULT    a LAUNCH does not run: it completes with VGPU_ERR_EXCEPTION,
 *                exception VGPU_EXC_GLOBAL_FAULT at address ARG
 *                (info[1] VGPU_MMU_F_NOT_PRESENT), and the queue stops,
 *                as for a fault of the kernel's own
 *   HANG         the queue takes its next command and never ends it: no
 *                record, no interrupt, HEAD stays, until the queue is
 *                disabled or the device reset (the device watchdog does
 *                not see it: a hung front end, not a long kernel)
 *   CORRUPT_CPL  the record of a command with VGPU_CMD_F_IRQ is written
 *                with bit 63 of its seq flipped (a corrupt record)
 */
#define VGPU_INJ_NONE 0u
#define VGPU_INJ_DROP_IRQ 1u
#define VGPU_INJ_DELAY_IRQ 2u
#define VGPU_INJ_MMU_FAULT 3u
#define VGPU_INJ_HANG 4u
#define VGPU_INJ_CORRUPT_CPL 5u
#define VGPU_INJ_KINDS 6u
#define VGPU_INJECT(kind, queue, count) \
	((kind) | (queue) << 8 | (count) << 16)

#define VGPU_DEFAULT_WDOG_MS 10000u
#define VGPU_MAX_WDOG_MS 60000u /* WDOG_MS writes above it store this */
#define VGPU_DEFAULT_TIMESLICE_US 2000u /* property timeslice-us */
#define VGPU_MAX_TIMESLICE_US 1000000u /* TIMESLICE_US writes above it store this */
#define VGPU_MAX_CODE_BYTES (1u << 24) /* 16 MiB (cub's device algorithms: over 1) */
#define VGPU_AS_MAX 256u
#define VGPU_RING_MAX 4096u
#define VGPU_QUEUES_MAX 64u /* property queues= at most: registers up to
			     * VGPU_REG_QUEUE(64) = 0x2000, 64 doorbell pages */

/*
 * Per-queue registers: queue q at VGPU_REG_QUEUE(q) + VGPU_Q_*.  Ring base,
 * completion base and size may change only while the queue is disabled.
 */
#define VGPU_REG_QUEUE_BASE 0x1000
#define VGPU_REG_QUEUE_STRIDE 0x40
#define VGPU_REG_QUEUE(q) (VGPU_REG_QUEUE_BASE + (q) * VGPU_REG_QUEUE_STRIDE)
#define VGPU_Q_RING_LO 0x00	/* (RW) command ring, guest physical, 64-aligned */
#define VGPU_Q_RING_HI 0x04	/* (RW) */
#define VGPU_Q_CPL_LO 0x08	/* (RW) completion ring, guest physical, 8-aligned */
#define VGPU_Q_CPL_HI 0x0c	/* (RW) */
#define VGPU_Q_SIZE 0x10	/* (RW) ring entries: power of two, 1..CAP_RING_MAX */
#define VGPU_Q_CONTROL 0x14	/* (RW) VGPU_QCTRL_* */
#define VGPU_Q_STATUS 0x18	/* (RO) VGPU_QSTAT_* */
#define VGPU_Q_HEAD 0x1c	/* (RO; RW while disabled, VGPU_FEAT_QUEUE_SWAP) next
				 * slot the device takes, 0..size-1 */
#define VGPU_Q_TAIL 0x20	/* (RO) tail written by the last doorbell */
#define VGPU_Q_DOORBELL 0x24	/* (WO) new tail (0..size-1): commands up to it are ready */
#define VGPU_Q_ERROR 0x28	/* (RO) VGPU_ERR_* that stopped the queue, 0 when running */
#define VGPU_Q_ERROR_INDEX 0x2c	/* (RO) ring index of the command that stopped it */
#define VGPU_Q_COMPLETED_LO 0x30 /* (RO; RW while disabled, VGPU_FEAT_QUEUE_SWAP)
				  * commands completed since enable, low word */
#define VGPU_Q_COMPLETED_HI 0x34 /* (RO; RW while disabled) high word */
#define VGPU_Q_PRIORITY 0x38	/* (RW) VGPU_QPRIO_* (values above REALTIME store
				 * REALTIME); NORMAL after reset; any time */
#define VGPU_Q_CSB 0x3c		/* (RW) context-save buffer: guest physical page
				 * number (address >> 12), 0 = none; while the
				 * queue is disabled */

/*
 * ---- Queue priority: which launches the SMs serve first ----
 * The SMs take CTAs from the launches in progress on every queue.  A free
 * SM takes its next CTAs from a launch of the highest priority that has
 * CTAs left; among launches of that priority it goes round robin, one
 * claim (a chunk of CTAs) each.  Without preemption (below) a CTA, once
 * started, runs to its end: a higher-priority launch gets SMs as CTAs of
 * lower ones finish.  A priority change applies to the queue's next claim.
 *
 * ---- Timeslices: launches of one priority share the SMs ----
 * When a launch waits for SMs, none is free and no lower-priority launch
 * can be preempted, the device preempts (as below) every running launch
 * of the waiting one's priority that can be preempted and whose claim on
 * an SM has run for TIMESLICE_US or more and made progress (counted
 * warp-instructions since the claim began: a claim whose restore took the
 * whole slice is not preempted before its first instructions); a claim
 * that has not yet run that long is preempted when it has.  The preempted
 * launch goes to the
 * back of the round robin, so the waiting one takes the freed SMs, and
 * two launches that never end alternate on the SMs, one timeslice each.
 * Device time is the host's monotonic clock while the VM runs.  A launch
 * of a queue without a context-save buffer cannot be preempted and keeps
 * its SMs; TIMESLICE_US 0 turns timeslicing off (priorities still
 * preempt).
 */
/*
 * ---- Preemption: stopping a running launch mid-kernel ----
 * With VGPU_FEAT_PREEMPT, a launch of a queue that has a context-save
 * buffer (VGPU_Q_CSB) can be stopped between two warp-instructions when a
 * launch of a higher-priority queue waits for SMs and none is free, or
 * when its timeslice ends while another launch of its priority waits.  Each
 * SM running it stops (within 1024 warp-instructions), drains its copies
 * and saves the cluster it was running into a free slot of the queue's
 * buffer: CAP_THREADS slots of CSB_SLOT bytes each, slot i at
 * CSB + i * CSB_SLOT, holding a state in the "Context save" format; the
 * clusters it had not started go back to the launch.  A freed SM serves
 * the higher priority; the launch goes on later, saved clusters first,
 * each restored from its slot on whichever SM claims it.  A state that
 * does not fit its slot is not saved: that SM goes on with the cluster.
 * A restore that finds its slot damaged (by the guest) fails the launch
 * with VGPU_EXC_BAD_CONTEXT, never anything else; the device reads only
 * the launch's own queue's buffer.  Writing a queue's index to
 * VGPU_REG_PREEMPT preempts its launch the same way (the driver's
 * request; it goes on as soon as an SM takes it again; a queue with no
 * launch running or no buffer: nothing happens).  A timeslice's expiry
 * preempts the same way ("Timeslices").  The device property
 * preempt-every=N (testing) also preempts every launch with a buffer
 * after every N warp-instructions of each SM.
 */

#define VGPU_QPRIO_LOW 0u
#define VGPU_QPRIO_NORMAL 1u
#define VGPU_QPRIO_HIGH 2u
#define VGPU_QPRIO_REALTIME 3u
#define VGPU_QPRIO_COUNT 4u

/*
 * Writing ENABLE 0 -> 1 starts the queue at head = tail = 0 (the ring's
 * configuration is checked then: a bad one stops it at once with
 * VGPU_ERR_BAD_RING).  Writing ENABLE 1 -> 0 aborts the command in
 * progress (its completion reports VGPU_ERR_ABORTED) and stops the queue.
 * Writing RESUME to a stopped queue clears the error and goes on with the
 * command after the one that stopped it.
 */
#define VGPU_QCTRL_ENABLE (1u << 0)
#define VGPU_QCTRL_RESUME (1u << 1) /* (WO) */
#define VGPU_QCTRL_USER (1u << 2)   /* user mode: see "User-mode queues" */
#define VGPU_QCTRL_HOLD (1u << 3)   /* take no new command ("Swapping queues") */
#define VGPU_QCTRL_RESTORE (1u << 4) /* (WO) with ENABLE 0 -> 1: start at the
				      * HEAD and COMPLETED written, not at 0 */
#define VGPU_QCTRL_ASID_SHIFT 16    /* bits 23..16: a user-mode queue's AS */
#define VGPU_QCTRL_ASID_MASK 0xffu

/*
 * ---- User-mode queues: rings that an unprivileged process feeds ----
 * A queue enabled with VGPU_QCTRL_USER (written together with ENABLE, in
 * the same write as the queue's address space in bits 23..16; both are
 * taken at the 0 -> 1 transition and read back while enabled) runs
 * commands that its owner wrote without the kernel looking at them, so
 * the device enforces what the kernel would otherwise check:
 *   - every command runs in the queue's address space: the @asid fields
 *     of LAUNCH, FENCE, SEM_ACQUIRE and SEM_RELEASE are ignored;
 *   - VGPU_CMD_F_FENCE_PHYS and TLB_INVALIDATE are privileged: such a
 *     command fails with VGPU_ERR_BAD_COMMAND;
 *   - a doorbell write beyond the ring stops the queue with
 *     VGPU_ERR_BAD_DOORBELL (a kernel-mode queue ignores it).
 * Any failure stops that queue only (VGPU_IRQ_ERROR), as for every queue.
 * The command and completion rings stay guest physical, set by the kernel.
 * A command with VGPU_CMD_F_IRQ raises VGPU_IRQ_USER, not COMPLETION
 * (VGPU_FEAT_USER_IRQ), so that a driver can mask it while no one sleeps
 * on a user fence (i915 arms its user interrupt only for waiters): a
 * process that polls its fence, or a wait that the fence ends before it
 * sleeps, then costs no interrupt.  Unmasking it delivers one already
 * raised, as for every IRQ_MASK bit; acknowledge it first to drop a
 * stale one.
 *
 * BAR4 holds one 4 KiB page per queue, queue q at q * VGPU_DOORBELL_PAGE,
 * made to be mapped into the owning process (each page is its own queue's
 * only): 32-bit accesses at the offsets below; others read 0 and ignore
 * writes.  Writing VGPU_DB_TAIL is the same as writing VGPU_Q_DOORBELL.
 */
#define VGPU_DOORBELL_BAR 4
#define VGPU_DOORBELL_PAGE 0x1000u
#define VGPU_DB_TAIL 0x00	/* (RW) write: doorbell (new tail); read: tail */
#define VGPU_DB_HEAD 0x04	/* (RO) VGPU_Q_HEAD */
#define VGPU_DB_COMPLETED_LO 0x08 /* (RO) VGPU_Q_COMPLETED_LO */
#define VGPU_DB_COMPLETED_HI 0x0c /* (RO) */
#define VGPU_DB_STATUS 0x10	/* (RO) VGPU_Q_STATUS */
#define VGPU_DB_ERROR 0x14	/* (RO) VGPU_Q_ERROR */

/*
 * ---- Swapping queues: more user-mode queues than hardware queues ----
 * (VGPU_FEAT_QUEUE_SWAP.)  A driver that runs more queues than the device
 * has (AMD's MES does it in firmware) takes one off its hardware queue
 * and later puts it back, on this or another hardware queue, exactly
 * where it stood: no command lost, none run twice.
 *   - Off: write CONTROL with ENABLE | HOLD (the other bits are ignored
 *     while enabled).  A held queue takes no new command; doorbells still
 *     latch TAIL.  The command executing goes on to its end, except a
 *     SEM_ACQUIRE that is waiting: it gives way at once, not completed
 *     (no record, HEAD stays on it; its timeout starts again once the
 *     queue is restored), as it does for a VM stop.  Once STATUS has no BUSY the queue
 *     stands at a command boundary: read HEAD, TAIL and COMPLETED, then
 *     write CONTROL 0, which aborts nothing.  Writing ENABLE without
 *     HOLD lets a held queue go on.
 *   - Back: while disabled, write the ring registers, HEAD and COMPLETED
 *     (LO, HI) as read, then CONTROL with ENABLE | RESTORE (and USER and
 *     the address space): the queue starts at HEAD with TAIL = HEAD and
 *     its COMPLETED count going on (completion records' seq with it);
 *     then ring the doorbell with the TAIL read.  A HEAD at or past SIZE
 *     stops the queue with VGPU_ERR_BAD_RING.
 * Without RESTORE, enable starts at 0 as always (HEAD and COMPLETED
 * written before are dropped).  Disable and reset clear HOLD.
 */
#define VGPU_QSTAT_ENABLED (1u << 0)
#define VGPU_QSTAT_BUSY (1u << 1)    /* a command of this queue is executing */
#define VGPU_QSTAT_STOPPED (1u << 2) /* stopped on an error: see VGPU_Q_ERROR */
#define VGPU_QSTAT_IDLE (1u << 3)    /* enabled, not stopped, head == tail */

/*
 * ---- Status of a command, error of a queue ----
 * A command that ends with any status but VGPU_ERR_NONE stops its queue.
 */
#define VGPU_ERR_NONE 0u	   /* success */
#define VGPU_ERR_EXCEPTION 1u	   /* the launch raised an exception: record in exc */
#define VGPU_ERR_BAD_COMMAND 2u	   /* unknown opcode, reserved field or flag set */
#define VGPU_ERR_BAD_LAUNCH 3u	   /* launch parameters invalid (exc.code BAD_LAUNCH) */
#define VGPU_ERR_MMU_FAULT 4u	   /* code, parameter or fence access faulted (exc) */
#define VGPU_ERR_TIMEOUT 5u	   /* watchdog: wall-clock limit (exc.code ABORTED) */
#define VGPU_ERR_ABORTED 6u	   /* queue disabled while the command executed */
#define VGPU_ERR_BAD_RING 7u	   /* ring configuration invalid or ring not in RAM */
#define VGPU_ERR_CPL_WRITE 8u	   /* the completion record could not be written */
#define VGPU_ERR_BAD_REGISTER 9u   /* bad register offset or access size (ERR_LAST only) */
#define VGPU_ERR_BAD_DOORBELL 10u  /* user-mode queue: doorbell beyond the ring */

/*
 * ---- Commands: 128-byte slots in the command ring ----
 * Every command starts with struct vgpu_cmd_header.  Fields marked
 * "must be 0" make the command VGPU_ERR_BAD_COMMAND when set.
 */
#define VGPU_CMD_BYTES 128u

#define VGPU_CMD_NOP 0u
#define VGPU_CMD_LAUNCH 1u
#define VGPU_CMD_FENCE 2u
#define VGPU_CMD_TLB_INVALIDATE 3u
#define VGPU_CMD_SEM_ACQUIRE 4u
#define VGPU_CMD_SEM_RELEASE 5u

#define VGPU_CMD_F_IRQ (1u << 0)	/* raise VGPU_IRQ_COMPLETION when complete */
#define VGPU_CMD_F_FENCE_PHYS (1u << 1) /* fence: address is guest physical */
#define VGPU_CMD_F_MASK (VGPU_CMD_F_IRQ | VGPU_CMD_F_FENCE_PHYS)

/**
 * struct vgpu_cmd_header - first 8 bytes of every command
 * @opcode: VGPU_CMD_*
 * @flags:  VGPU_CMD_F_*
 */
struct vgpu_cmd_header {
	__u32 opcode;
	__u32 flags;
};

/**
 * struct vgpu_cmd_launch - run a kernel
 * @hdr:         opcode VGPU_CMD_LAUNCH
 * @code_va:     GPU VA of the program (16-aligned); fetched with execute
 *               permission
 * @code_size:   program bytes (multiple of 16, 16..CAP_MAX_CODE)
 * @entry:       byte offset of the first instruction in the program
 * @grid:        CTAs in x, y, z (each >= 1)
 * @block:       threads per CTA in x, y, z (product 1..1024)
 * @cluster:     CTAs per cluster in x, y, z; 0 counts as 1.  Each must
 *               divide the grid's; at most 16 CTAs per cluster.  Only 1x1x1
 *               when CAP_FEATURES lacks VGPU_FEAT_CLUSTERS
 * @smem_bytes:  shared memory per CTA: the program's static .shared bytes
 *               plus its dynamic bytes (<= CAP_SMEM)
 * @param_va:    GPU VA of the parameter buffer (read permission)
 * @param_size:  parameter bytes (0..CAP_MAX_PARAM); @param_va unused if 0
 * @asid:        address space (index into the address-space table)
 * @launch_flags: VGPU_LAUNCH_* (VGPU_LAUNCH_FLAGS_MASK)
 * @pad:         must be 0
 * @seed:        scheduler seed (VGPU_LAUNCH_RANDOM_SCHED)
 * @budget:      warp-instruction limit, 0 = VGPU_DEFAULT_BUDGET
 * @trace_va:    with VGPU_LAUNCH_TIMELINE: GPU VA of the timeline buffer
 *               (8-aligned, write permission), else must be 0
 * @trace_size:  its bytes (at least the header; a multiple of 8), else 0
 * @pad2:        must be 0
 * @cdp_area:    GPU VA of the launch's device-launch area (struct
 *               vgpu_cdp_header, "Device-side launch"): 16-aligned, 0 =
 *               none; must be 0 unless CAP_FEATURES has
 *               VGPU_FEAT_DEVICE_LAUNCH (else VGPU_ERR_BAD_COMMAND, as a
 *               misaligned one).  Its accesses go through the launch's
 *               address space: a bad one is an exception of this launch.
 *               The device runs the grids the launch's kernels launched
 *               there before the command completes; launches on the same
 *               area (and address space) run their children one tree at
 *               a time, whatever their queues
 *
 * The timeline is written when the launch ends, whether it completed, raised
 * an exception or was aborted by disabling the queue (not after a device
 * reset: that voids the command); a launch refused before it started
 * writes none.  A fault writing it fails the command with
 * VGPU_ERR_MMU_FAULT unless the launch had already failed.
 */
struct vgpu_cmd_launch {
	struct vgpu_cmd_header hdr;
	__u64 code_va;
	__u32 code_size;
	__u32 entry;
	__u32 grid[3];
	__u32 block[3];
	__u32 cluster[3];
	__u32 smem_bytes;
	__u64 param_va;
	__u32 param_size;
	__u32 asid;
	__u32 launch_flags;
	__u32 pad;
	__u64 seed;
	__u64 budget;
	__u64 trace_va;
	__u32 trace_size;
	__u32 pad2;
	__u64 cdp_area;
};

/*
 * VGPU_CMD_LAUNCH_SHARED(X): the fields struct vgpu_cmd_launch takes over
 * from a launch as the uAPI states it (struct drm_vgpu_launch in
 * vgpu_drm.h, the same names), listed once for each place that converts
 * between the two or from little-endian: X(field, bits), an array element
 * at a time.  Expanded by the driver's ring (kernel/vgpu_job.c), libvgpu's
 * user queues and the sim's decoder of them (libvgpu/userq.c,
 * sim_userq.c) and the device (qemu-device/vgpu-queue.c).
 */
#define VGPU_CMD_LAUNCH_SHARED(X)					\
	do {								\
		X(code_va, 64); X(code_size, 32); X(entry, 32);		\
		X(grid[0], 32); X(grid[1], 32); X(grid[2], 32);		\
		X(block[0], 32); X(block[1], 32); X(block[2], 32);	\
		X(cluster[0], 32); X(cluster[1], 32);			\
		X(cluster[2], 32);					\
		X(smem_bytes, 32); X(param_va, 64); X(param_size, 32);	\
		X(launch_flags, 32); X(seed, 64); X(budget, 64);	\
	} while (0)

/**
 * struct vgpu_cmd_fence - write a 64-bit value once everything before it
 *                         in the queue has completed
 * @hdr:      opcode VGPU_CMD_FENCE; VGPU_CMD_F_IRQ raises an interrupt,
 *            VGPU_CMD_F_FENCE_PHYS makes @addr guest physical
 * @addr:     8-aligned GPU VA in address space @asid (write permission),
 *            or guest physical address
 * @value:    the value written
 * @asid:     address space of @addr (ignored with VGPU_CMD_F_FENCE_PHYS)
 * @pad:      must be 0
 * @reserved: must be 0
 */
struct vgpu_cmd_fence {
	struct vgpu_cmd_header hdr;
	__u64 addr;
	__u64 value;
	__u32 asid;
	__u32 pad;
	__u64 reserved[12];
};

#define VGPU_TLBI_ALL_AS 0xffffffffu

/**
 * struct vgpu_cmd_tlb_invalidate - drop cached translations
 * @hdr:      opcode VGPU_CMD_TLB_INVALIDATE
 * @asid:     address space, or VGPU_TLBI_ALL_AS
 * @pad:      must be 0
 * @va:       first byte of the range (page-aligned)
 * @size:     bytes of the range; 0 = the whole address space
 * @reserved: must be 0
 *
 * The device may drop more than asked; commands after it in the queue
 * see the page tables as they are in memory when it completes.
 */
struct vgpu_cmd_tlb_invalidate {
	struct vgpu_cmd_header hdr;
	__u32 asid;
	__u32 pad;
	__u64 va;
	__u64 size;
	__u64 reserved[12];
};

/*
 * ---- Semaphores: queues waiting on memory, without the CPU ----
 * A semaphore is a 64-bit little-endian word, 8-aligned, at a GPU VA of
 * address space @asid (read permission for an acquire, write for a
 * release) or, with VGPU_CMD_F_FENCE_PHYS, at a guest physical address.
 */
#define VGPU_SEM_OP_GEQ 0u /* acquire once value >= payload (unsigned) */
#define VGPU_SEM_OP_EQ 1u  /* acquire once value == payload */
#define VGPU_SEM_OP_MAX VGPU_SEM_OP_EQ

/**
 * struct vgpu_cmd_sem - SEM_ACQUIRE or SEM_RELEASE
 * @hdr:        opcode VGPU_CMD_SEM_ACQUIRE or VGPU_CMD_SEM_RELEASE;
 *              VGPU_CMD_F_IRQ raises VGPU_IRQ_COMPLETION when the command
 *              completes, VGPU_CMD_F_FENCE_PHYS makes @addr guest physical
 * @addr:       the semaphore (8-aligned)
 * @payload:    acquire: the value compared; release: the value written
 * @asid:       address space of @addr (ignored with VGPU_CMD_F_FENCE_PHYS)
 * @op:         acquire: VGPU_SEM_OP_*; release: must be 0
 * @timeout_ns: acquire: host nanoseconds after which a wait that is still
 *              unsatisfied fails the command (status VGPU_ERR_EXCEPTION,
 *              exc.code VGPU_EXC_SEM_TIMEOUT, exc.addr = @addr, exc.info =
 *              the value last read (low, high) and @payload (low, high));
 *              0 waits until satisfied, the queue is disabled (status
 *              VGPU_ERR_ABORTED) or the device is reset.  Release: must be 0
 * @reserved:   must be 0
 *
 * SEM_ACQUIRE completes when the semaphore satisfies @op against
 * @payload; the queue takes nothing after it until then.  The device
 * reads the semaphore again whenever a command of any queue completes
 * and at least every VGPU_SEM_POLL_US while it waits (it does not see CPU
 * writes).  SEM_RELEASE writes @payload once every earlier command of the
 * queue has completed (commands complete in order) and their writes are
 * visible, then wakes every waiting acquire.  An access that faults
 * fails the command with VGPU_ERR_MMU_FAULT and the fault in exc.
 */
#define VGPU_SEM_POLL_US 100u

struct vgpu_cmd_sem {
	struct vgpu_cmd_header hdr;
	__u64 addr;
	__u64 payload;
	__u32 asid;
	__u32 op;
	__u64 timeout_ns;
	__u64 reserved[11];
};

_Static_assert(sizeof(struct vgpu_cmd_header) == 8, "command header layout");
_Static_assert(sizeof(struct vgpu_cmd_sem) == VGPU_CMD_BYTES, "semaphore layout");
_Static_assert(sizeof(struct vgpu_trace_header) == 32, "trace header layout");
_Static_assert(sizeof(struct vgpu_trace_event) == 64, "trace record layout");
_Static_assert(sizeof(struct vgpu_cmd_launch) == VGPU_CMD_BYTES, "launch layout");
_Static_assert(sizeof(struct vgpu_cmd_fence) == VGPU_CMD_BYTES, "fence layout");
_Static_assert(sizeof(struct vgpu_cmd_tlb_invalidate) == VGPU_CMD_BYTES,
	       "TLB invalidate layout");

/**
 * struct vgpu_completion - written by the device for every command, at
 *                          completion-ring slot = the command's ring index
 * @status:     VGPU_ERR_* (VGPU_ERR_NONE on success)
 * @opcode:     the command's opcode
 * @index:      the command's ring index
 * @queue:      the queue
 * @seq:        commands completed on the queue since enable, this one
 *              included (1, 2, ...): tells a fresh record from a stale one
 * @warp_insns: launch: warp-instructions executed (all SMs); else 0
 * @elapsed_ns: host time the command took to execute
 * @exc:        for VGPU_ERR_EXCEPTION, _BAD_LAUNCH, _MMU_FAULT, _TIMEOUT
 *              and _ABORTED: what stopped it (code, CTA, warp, pc, and for
 *              VGPU_EXC_GLOBAL_FAULT the virtual address in @exc.addr and
 *              VGPU_MMU_* in @exc.info); zero otherwise
 */
struct vgpu_completion {
	__u32 status;
	__u32 opcode;
	__u32 index;
	__u32 queue;
	__u64 seq;
	__u64 warp_insns;
	__u64 elapsed_ns;
	struct vgpu_exception_record exc;
};

_Static_assert(sizeof(struct vgpu_completion) == 336, "completion layout");

/*
 * Exception-record fields for an MMU fault (exc.code VGPU_EXC_GLOBAL_FAULT,
 * raised by a kernel's access, or status VGPU_ERR_MMU_FAULT for the code,
 * parameter or fence access): exc.addr = the virtual address,
 * exc.info[0] = VGPU_MMU_ACC_* of the access, exc.info[1] = VGPU_MMU_F_*
 * (why), exc.info[2] = the page-table level that failed (3 = root .. 0 =
 * leaf, or 4 for the address-space table), exc.info[3] = the address
 * space; exc.msg says the same in words.
 */
#define VGPU_MMU_ACC_READ 1u
#define VGPU_MMU_ACC_WRITE 2u
#define VGPU_MMU_ACC_EXEC 4u
#define VGPU_MMU_ACC_ATOMIC 8u /* read-modify-write: needs R and W */

#define VGPU_MMU_F_NOT_PRESENT 1u   /* an entry on the walk is not valid */
#define VGPU_MMU_F_PERMISSION 2u    /* the leaf lacks the access's permission */
#define VGPU_MMU_F_NONCANONICAL 3u  /* VA bits 63..48 not zero */
#define VGPU_MMU_F_RESERVED 4u	    /* an entry has reserved bits set */
#define VGPU_MMU_F_TABLE_ACCESS 5u  /* a table lies outside guest RAM */
#define VGPU_MMU_F_BAD_AS 6u	    /* asid >= AS_COUNT or its entry invalid */
#define VGPU_MMU_F_BUS 7u	    /* the page translates to memory outside guest RAM */
#define VGPU_MMU_F_NOT_MULTICAST 8u /* multimem.ld_reduce: not a multicast address */

/*
 * ---- GPU MMU: page tables in guest memory ----
 *
 * Address-space table: AS_COUNT 64-bit entries at AS_BASE; entry asid is
 * VGPU_PTE_VALID | root table address (4 KiB aligned, bits 51..12).
 *
 * 48-bit virtual addresses, 4 KiB pages, four levels of 512 64-bit
 * entries, each table 4 KiB aligned:
 *
 *   level 3 (root): VA[47:39]   level 2: VA[38:30]
 *   level 1:        VA[29:21]   level 0 (leaf): VA[20:12]
 *
 * Entry: bit 0 VALID, bit 1 READ, bit 2 WRITE, bit 3 EXEC (leaf and
 * NULL entries only; 0 in table entries), bits 11..4 ignored (free for
 * software), bits 51..12 the physical address of the next table or of the
 * page, bit 52 NULL (leaf, level 1 and level 2 entries only), bits 63..53
 * reserved (must be 0).  No large pages of memory.  Physical addresses
 * are guest physical; pages must be guest RAM.
 *
 * A NULL leaf (VGPU_PTE_VALID | VGPU_PTE_NULL | permissions, the address
 * bits ignored) maps no memory and faults nothing the permissions allow:
 * reads (and instruction fetches) return zeros, writes are dropped, an
 * atomic returns 0 and stores nothing.  Drivers back sparse ranges with
 * them (VGPU_FEAT_NULL_PTE).
 *
 * A NULL entry at level 1 (2 MiB) or level 2 (1 GiB): the same bits
 * (VGPU_PTE_VALID | VGPU_PTE_NULL | permissions, the address bits
 * ignored) end the walk there, with no table below: every page of the
 * entry's 2 MiB or 1 GiB is a NULL page with the entry's permissions, as
 * if a table of NULL leaves with those bits lay below.  An access its
 * permissions deny is a VGPU_MMU_F_PERMISSION fault whose level
 * (exc.info[2]) is the entry's.  So a sparse range costs a table per
 * 512 GiB plus those at its unaligned ends, however large it is; a driver
 * that later maps part of such a region splits the entry: it writes a
 * table of 512 NULL entries of the level below with the same bits, then
 * points the entry at it.  Part of VGPU_FEAT_NULL_PTE.  NULL in a root
 * (level 3) entry or in the address-space table, and READ, WRITE or EXEC
 * in a table entry without NULL, are reserved-bit faults.
 */
#define VGPU_VA_BITS 48u
#define VGPU_PAGE_SHIFT 12u
#define VGPU_PAGE_SIZE (1u << VGPU_PAGE_SHIFT)
#define VGPU_PT_LEVELS 4u
#define VGPU_PT_ENTRIES 512u
#define VGPU_PT_INDEX(va, level)                                               \
	(((va) >> (VGPU_PAGE_SHIFT + 9u * (level))) & (VGPU_PT_ENTRIES - 1u))

#define VGPU_PTE_VALID (1ull << 0)
#define VGPU_PTE_READ (1ull << 1)
#define VGPU_PTE_WRITE (1ull << 2)
#define VGPU_PTE_EXEC (1ull << 3)
#define VGPU_PTE_SW_MASK 0xff0ull
#define VGPU_PTE_ADDR_MASK 0x000ffffffffff000ull
#define VGPU_PTE_NULL (1ull << 52)
#define VGPU_PTE_RSVD_MASK 0xffe0000000000000ull


/*
 * Device-side launch (CUDA dynamic parallelism, docs/device.md): the
 * device-launch area, in global memory, whose address a launch carries
 * (SUBMIT's VGPU_SUBMIT_EXT_DEVICE_LAUNCH).  A kernel reads it and its own
 * grid's identifier through SR_CDP_AREA_LO/HI and SR_CDP_GRID.  The area
 * is a struct vgpu_cdp_header, then @nslots slots of VGPU_CDP_SLOT_BYTES:
 * a struct vgpu_cdp_record and the child's parameter buffer.  The kernel
 * (the PTX front end's device runtime, libvgpu/ptx/ptx_cdp.c) takes a free
 * slot (CAS of @state FREE -> ALLOC, starting at the atomically bumped
 * @cursor modulo @nslots), fills it, writes the parameters, then sets
 * @seq (an atomic add on the header's) and, last, @state LAUNCHED.  After
 * a grid's CTAs have all completed, the device runs the LAUNCHED records
 * whose @parent is that grid: the NULL-stream and fire-and-forget ones in
 * @seq order, then the tail launches in @seq order, each (with its own
 * children, the same way) before the next; a record's grid identifier is
 * its slot index, a launch from the host gets VGPU_CDP_ROOT | the
 * header's @roots (atomically incremented).  The device looks for a
 * grid's records only in the slots taken while it ran (the @cursor values
 * between its start and its end).  Slots are FREE again when their grid
 * is done (ALLOC ones left by the parent too), their @parent then
 * VGPU_CDP_NO_GRID (the host makes every slot so).  The nesting has no
 * limit but the slots: a grid whose children run holds its slot.  A
 * record that names no kernel descriptor, a bad shape (a grid that the
 * kernel's cluster shape does not tile among them) or an access fault is
 * an exception of the launch (the device runtime refuses such launches
 * before they get there).
 */
#define VGPU_CDP_RECORD_BYTES 64u
#define VGPU_CDP_MAX_PARAM 4096u /* a child's parameter bytes */
#define VGPU_CDP_SLOT_BYTES (VGPU_CDP_RECORD_BYTES + VGPU_CDP_MAX_PARAM)
#define VGPU_CDP_HEADER_BYTES 64u
#define VGPU_CDP_ROOT 0x80000000u
#define VGPU_CDP_NO_GRID 0xffffffffu /* a free slot's @parent */

enum vgpu_cdp_state {
	VGPU_CDP_FREE = 0,
	VGPU_CDP_ALLOC = 1,
	VGPU_CDP_LAUNCHED = 2,
	VGPU_CDP_RUNNING = 3,
};

/* @stream: CUDA's handles (cuda_device_runtime_api.h); others run as NULL */
#define VGPU_CDP_STREAM_NULL 0u
#define VGPU_CDP_STREAM_TAIL 3u
#define VGPU_CDP_STREAM_FIRE_AND_FORGET 4u

/*
 * @nslots, @lmem_va, @lmem_size, @printf_va: written by the host.  The
 * children's local memory (a kernel with VGPU_PARAM_LOCAL: grid threads x
 * its local bytes from @lmem_va, at most @lmem_size, else an exception)
 * and printf buffer (struct vgpu_printf_header; 0: none, and a child that
 * prints is an exception) are the area's: one grid of a tree runs at a
 * time, and the host runs one tree at a time on an area.
 */
struct vgpu_cdp_header {
	__u32 nslots;
	__u32 cursor;
	__u32 seq;
	__u32 roots;
	__u64 lmem_va;
	__u64 lmem_size;
	__u64 printf_va;
	__u32 pad[6];
};

struct vgpu_cdp_record {
	__u32 state; /* enum vgpu_cdp_state */
	__u32 seq;
	__u32 parent; /* the launching grid's identifier */
	__u32 stream;
	__u64 kdesc; /* GPU VA of the child's struct vgpu_kernel_desc */
	__u32 grid[3];
	__u32 block[3];
	__u32 smem_bytes; /* dynamic shared memory */
	__u32 depth; /* nesting depth: 1 for a launch from a host-launched grid */
	__u32 pad[2];
};

/*
 * struct vgpu_kernel_desc - what the device needs to launch a kernel of a
 * program, in the program's module data (PTX's address of an .entry,
 * written by the loader: VGPU_RELOC_KDESC).  @data_off, @params_off,
 * @envregs_off, @local_off, @printf_off: where the parameter buffer holds
 * the hidden parameters the device fills (VGPU_PARAM_DATA with @data_va,
 * VGPU_PARAM_PARAMS with the buffer's own address, VGPU_PARAM_ENVREGS with
 * zeros, VGPU_PARAM_LOCAL with the area's @lmem_va, VGPU_PARAM_PRINTF with
 * its @printf_va), ~0u: none.  @local_bytes: the kernel's local memory
 * per thread.  @cluster: its compiled cluster shape (.reqnctapercluster),
 * 0: none; a device-side launch keeps it, as on the H200.
 */
struct vgpu_kernel_desc {
	__u64 code_va;
	__u32 code_size;
	__u32 entry;
	__u32 smem_static;
	__u32 param_size;
	__u32 data_off;
	__u32 params_off;
	__u32 envregs_off;
	__u32 local_off;
	__u64 data_va;
	__u32 local_bytes;
	__u32 printf_off;
	__u16 cluster[3];
	__u16 pad;
};

_Static_assert(sizeof(struct vgpu_cdp_header) == VGPU_CDP_HEADER_BYTES, "cdp header");
_Static_assert(sizeof(struct vgpu_cdp_record) == VGPU_CDP_RECORD_BYTES, "cdp record");
_Static_assert(sizeof(struct vgpu_kernel_desc) == 64, "kernel descriptor");

#endif /* VGPU_HW_H */
