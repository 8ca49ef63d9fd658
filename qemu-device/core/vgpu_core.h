/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU execution core: the behaviour of one virtual GPU as plain C11.
 *
 * No QEMU, kernel or libdrm headers.  The QEMU device and libvgpu's sim
 * backend both link this library, so one piece of code defines the
 * semantics.  Global memory is reached only through struct vgpu_mem_ops.
 *
 * Objects:
 *   struct vgpu_prog  a predecoded program: immutable once loaded, may be
 *                     shared by any number of SMs and threads.
 *   struct vgpu_sm    one streaming multiprocessor's execution context
 *                     (warps, registers, shared memory, named barriers).
 *                     Not thread-safe; use one per host thread.  It keeps
 *                     its allocations between runs.
 *
 * A launch runs clusters of CTAs one after another on an SM (a cluster of
 * one CTA without cluster dims); the QEMU glue may hand disjoint CTA ranges
 * of one launch to several SMs on several threads, sharing a struct
 * vgpu_launch_ctl for the budget and abort flag.  A range must hold whole
 * clusters.
 */
#ifndef VGPU_CORE_H
#define VGPU_CORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "vgpu_hw.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VGPU_CORE_API __attribute__((visibility("default")))

/*
 * The host's cache line: the alignment of the core's shared memory and
 * register files, and of host memory that stands for global memory, so
 * that what a kernel aligns is aligned on the host too.
 */
#define VGPU_HOST_LINE 64u

/* ---- Global memory interface ---- */

/*
 * An atomic read-modify-write of 2, 4 or 8 bytes (its size): the integer
 * operations at that width (MIN/MAX signed or not), CAS, and the
 * floating-point adds, each rounded to nearest even: FADD on an f16 (2
 * bytes), f32 (4) or f64 (8), FADD_FTZ an f32 with subnormal operands and
 * result flushed to zero of their sign, BFADD a bf16, FADD_X2/BFADD_X2
 * the two halves of an f16x2/bf16x2 word each on its own.  A NaN result
 * is the GPU's canonical NaN of the format (0x7fff, 0x7fffffff), but an
 * f64 keeps an operand's NaN made quiet (the value's when both are).
 * FMIN/FMAX (an f16, 2 bytes), BFMIN/BFMAX (a bf16) and their _X2 forms
 * (each half of the word on its own) are IEEE 754 minNum/maxNum, as an
 * H200 computes them: a NaN (quiet or signalling) loses to a number, two
 * NaNs give 0x7fff, -0 is less than +0, and the result is one of the
 * operands bit for bit (subnormals kept).
 */
enum vgpu_atomic_op {
	VGPU_ATOMIC_ADD,
	VGPU_ATOMIC_MIN_U,
	VGPU_ATOMIC_MIN_S,
	VGPU_ATOMIC_MAX_U,
	VGPU_ATOMIC_MAX_S,
	VGPU_ATOMIC_EXCH,
	VGPU_ATOMIC_AND,
	VGPU_ATOMIC_OR,
	VGPU_ATOMIC_XOR,
	VGPU_ATOMIC_CAS, /* if (*p == cmp) *p = val */
	VGPU_ATOMIC_FADD,
	VGPU_ATOMIC_FADD_FTZ,
	VGPU_ATOMIC_BFADD,
	VGPU_ATOMIC_FADD_X2,
	VGPU_ATOMIC_BFADD_X2,
	VGPU_ATOMIC_FMIN,
	VGPU_ATOMIC_FMAX,
	VGPU_ATOMIC_BFMIN,
	VGPU_ATOMIC_BFMAX,
	VGPU_ATOMIC_FMIN_X2,
	VGPU_ATOMIC_FMAX_X2,
	VGPU_ATOMIC_BFMIN_X2,
	VGPU_ATOMIC_BFMAX_X2,
	VGPU_ATOMIC_INC, /* *p = *p >= val ? 0 : *p + 1 (unsigned) */
	VGPU_ATOMIC_DEC, /* *p = *p == 0 || *p > val ? val : *p - 1 */
};

/*
 * The value an atomic @op of @size bytes leaves in memory that held @old,
 * given the operand @val (and @cmp for CAS); the bits above @size are
 * ignored in the inputs and zero in the result.  The core uses it for
 * shared memory; memory-callback implementations may use it for global
 * memory.
 */
VGPU_CORE_API uint64_t vgpu_atomic_apply(enum vgpu_atomic_op op, unsigned size,
					 uint64_t old, uint64_t val, uint64_t cmp);

/**
 * struct vgpu_mem_ops - how the core reaches global memory
 * @read:   copy @len bytes (1..16, @addr aligned to @len) to @buf
 * @write:  copy @len bytes from @buf
 * @atomic: read-modify-write of @size bytes (2, 4 or 8) at @addr,
 *          aligned to @size (vgpu_atomic_apply); the previous value goes
 *          to *@old.  Must be atomic against other threads running other
 *          SMs of the same launch.
 * @cas16:  compare-and-swap of the 16 bytes at @addr (aligned to 16):
 *          where they equal @cmp, @val replaces them; their previous
 *          value goes to @old (16 bytes each, little-endian).  Atomic as
 *          @atomic is (atom.cas.b128; vgpu_cas16_host()).
 *
 * @read_block, @write_block: optional; any length and alignment, used by
 *          the copy engine for bulk and tensor copies.  Without them the
 *          core splits such copies into naturally aligned pieces of at
 *          most 16 bytes.
 *
 * Each returns 0, or non-zero if the access faults; the core then stops
 * the launch with VGPU_EXC_GLOBAL_FAULT naming the address.
 *
 * @span:   optional; a host pointer to the @len bytes at @addr when all of
 *          them are plain host memory the core may read (and, with
 *          @write, write) directly, else NULL.  No side effects: a NULL
 *          answer records no fault, and the core falls back to the
 *          calls above.  A tensor copy asks once for the tensor's extent
 *          and then moves its rows with memcpy.
 */
struct vgpu_mem_ops {
	int (*read)(void *opaque, uint64_t addr, void *buf, uint32_t len);
	int (*write)(void *opaque, uint64_t addr, const void *buf, uint32_t len);
	int (*atomic)(void *opaque, uint64_t addr, unsigned size,
		      enum vgpu_atomic_op op, uint64_t val, uint64_t cmp,
		      uint64_t *old);
	int (*cas16)(void *opaque, uint64_t addr, const void *cmp, const void *val,
		     void *old);
	int (*read_block)(void *opaque, uint64_t addr, void *buf, uint32_t len);
	int (*write_block)(void *opaque, uint64_t addr, const void *buf,
			   uint32_t len);
	void *(*span)(void *opaque, uint64_t addr, uint64_t len, bool write);
};

/*
 * ---- Events (timeline hook) ----
 * With an event hook the core reports what happens as it happens: struct
 * vgpu_trace_event of uapi/vgpu_hw.h (VGPU_TR_*), the same records the
 * device writes for VGPU_LAUNCH_TIMELINE.  The hook runs on the SM's
 * thread; without one, events cost nothing.
 */
typedef void (*vgpu_event_fn)(void *opaque, const struct vgpu_trace_event *ev);

/**
 * struct vgpu_trace_sink - a timeline buffer in host memory
 * @rec:      room for @capacity records
 * @capacity: records that fit
 * @offered:  events offered so far (zero it before the launch)
 * @chain:    optional hook that also sees every event, with @chain_opaque
 *
 * Pass vgpu_trace_sink_event as a launch's event hook and the sink as its
 * opaque: SMs on several threads may share one sink.  Events past
 * @capacity are counted, never written.  The device and libvgpu's sim
 * backend both record VGPU_LAUNCH_TIMELINE this way.
 */
struct vgpu_trace_sink {
	struct vgpu_trace_event *rec;
	uint32_t capacity;
	_Atomic uint64_t offered;
	vgpu_event_fn chain;
	void *chain_opaque;
};

VGPU_CORE_API void vgpu_trace_sink_event(void *sink,
					 const struct vgpu_trace_event *ev);
/*
 * The header for the records in @s (host byte order) and the count of
 * records to copy after it.  Records of a buffer of @bytes bytes fit
 * vgpu_trace_capacity(@bytes).
 */
VGPU_CORE_API uint32_t vgpu_trace_sink_header(struct vgpu_trace_sink *s,
					      struct vgpu_trace_header *h);
VGPU_CORE_API uint32_t vgpu_trace_capacity(uint64_t bytes);

/* ---- Programs ---- */
struct vgpu_prog;

/*
 * Predecode @size bytes of code (a multiple of 16).  Words that are not
 * valid instructions are kept and raise VGPU_EXC_ILLEGAL_INSTR only when
 * executed.  Returns 0 or -EINVAL / -ENOMEM.
 */
VGPU_CORE_API int vgpu_prog_load(const void *code, uint32_t size,
				 struct vgpu_prog **out);
VGPU_CORE_API void vgpu_prog_free(struct vgpu_prog *prog);
/* Highest GPR index the program names, plus one (RZ excluded). */
VGPU_CORE_API uint32_t vgpu_prog_nregs(const struct vgpu_prog *prog);

/* ---- Launches ---- */

/*
 * Warp-instructions an SM runs between two looks at a launch's @abort,
 * @clock and @preempt (its budget slice): the bound on how late a stop
 * request takes effect.
 */
#define VGPU_CTL_CHECK_EVERY 1024u

/* Shared by the SMs that run parts of one launch; zero-initialise (or
 * vgpu_launch_ctl_init()). */
struct vgpu_launch_ctl {
	_Atomic int abort;	   /* set non-zero to stop: VGPU_EXC_ABORTED */
	/* optional wall clock: once clock() >= deadline the launch stops as
	 * by abort (checked every VGPU_CTL_CHECK_EVERY warp-instructions) */
	int64_t (*clock)(void);
	int64_t deadline;
	/*
	 * Preemption: once @preempt is non-zero each SM running the launch
	 * stops at its next check (every VGPU_CTL_CHECK_EVERY
	 * warp-instructions, and before each cluster it has not started) and returns
	 * VGPU_RUN_PREEMPTED.  @preempt_every (testing) also stops an SM once
	 * it has run that many warp-instructions since it (re)started.
	 */
	_Atomic int preempt;
	/*
	 * Set when the SMs that run the launch run one at a time, on one
	 * thread, and no other thread reads @executed meanwhile (the sim's
	 * launch outside its pool): they add to @executed with a plain load
	 * and store instead of an atomic read-modify-write, a lock-prefixed
	 * instruction that cost more than the rest of an empty kernel's
	 * refill.  The same counts either way.
	 */
	bool one_sm;
	uint64_t preempt_every;
	/*
	 * Optional: called by each SM at each look (every
	 * VGPU_CTL_CHECK_EVERY warp-instructions, and as vgpu_sm_run()
	 * starts) with @executed so far, from the SM's thread; it must be
	 * cheap and must not touch the SM (the sim's pool wakes its threads
	 * from here once a launch is long enough to share).
	 */
	void (*slice)(void *opaque, uint64_t executed);
	void *slice_opaque;
	/*
	 * Warp-instructions, all SMs together: each SM adds its own at every
	 * refill.  128 bytes from the fields above (which every SM reads at
	 * each lock-step barrier round) and from what follows the struct,
	 * so that no other read shares its cache line, or the adjacent line
	 * the prefetcher pairs with it, and misses each time an SM counts.
	 */
	char pad_executed_[128];
	_Atomic uint64_t executed;
	char pad_after_[120];
};

/*
 * @c with every field cleared (as `= { 0 }`) but its pads left as they
 * are: 312 bytes of which 56 are fields, for a launch of the sim backend.
 */
static inline void vgpu_launch_ctl_init(struct vgpu_launch_ctl *c)
{
	atomic_init(&c->abort, 0);
	c->clock = NULL;
	c->deadline = 0;
	atomic_init(&c->preempt, 0);
	c->one_sm = false;
	c->preempt_every = 0;
	c->slice = NULL;
	c->slice_opaque = NULL;
	atomic_init(&c->executed, 0);
}

/* A field added to struct vgpu_launch_ctl must be set above. */
_Static_assert(offsetof(struct vgpu_launch_ctl, pad_executed_) ==
		       offsetof(struct vgpu_launch_ctl, slice_opaque) + sizeof(void *) &&
	       sizeof(struct vgpu_launch_ctl) ==
		       offsetof(struct vgpu_launch_ctl, executed) + 8 + 120,
	       "vgpu_launch_ctl_init() sets every field of struct vgpu_launch_ctl");

/**
 * struct vgpu_launch - one kernel launch
 * @prog:       program to run
 * @entry:      byte offset of the first instruction (16-aligned)
 * @grid:       CTAs in x, y, z (each >= 1)
 * @block:      threads per CTA in x, y, z (product 1..1024)
 * @cluster:    CTAs per cluster in x, y, z; 0 counts as 1.  Each dimension
 *              must divide the grid's; the product is at most 16.  The
 *              CTAs of a cluster run co-resident on one SM object.
 * @smem_bytes: shared memory per CTA (<= the SM's smem_max)
 * @params:     kernel-parameter buffer (LDP reads it), @param_size bytes
 * @seed:       scheduler seed
 * @flags:      VGPU_LAUNCH_* (uapi/vgpu_hw.h)
 * @budget:     maximum warp-instructions for the launch, 0 = default
 * @mem:        global-memory callbacks and their @mem_opaque
 * @event:      optional event hook and its @event_opaque
 * @ctl:        optional shared budget counter / abort flag
 */
struct vgpu_launch {
	const struct vgpu_prog *prog;
	uint32_t entry;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint32_t smem_bytes;
	const void *params;
	uint32_t param_size;
	uint32_t flags;
	uint64_t seed;
	uint64_t budget;
	const struct vgpu_mem_ops *mem;
	void *mem_opaque;
	vgpu_event_fn event;
	void *event_opaque;
	struct vgpu_launch_ctl *ctl;
	uint64_t cdp_area; /* device-launch area (SR_CDP_AREA_LO/HI), 0: none */
	uint32_t cdp_grid; /* this grid's identifier (SR_CDP_GRID) */
};

/**
 * struct vgpu_sm_config - one SM's parameters (0 = default)
 * @smem_max:       shared memory per CTA in bytes (228 KiB)
 * @sm_id:          reported by SR_SMID
 * @nsms:           reported by SR_NSMID, the SMs of the device (0: sm_id + 1)
 * @tma_latency:    cycles from issue to the first byte of an asynchronous
 *                  copy (500)
 * @tma_bandwidth:  bytes the copy engine moves per cycle (64)
 * @try_wait_limit: cycles MBAR.TRY_WAIT suspends without a hint (100000)
 * @nwarpids:       reported by SR_NWARPID, the warps an SM holds
 *                  (VGPU_MAX_WARPS_PER_CTA)
 */
struct vgpu_sm_config {
	uint32_t smem_max;
	uint32_t sm_id;
	uint32_t nsms;
	uint32_t tma_latency;
	uint32_t tma_bandwidth;
	uint32_t try_wait_limit;
	uint32_t nwarpids;
};

struct vgpu_sm_stats {
	uint64_t warp_insns;   /* warp-instructions issued */
	uint64_t thread_insns; /* sum of active threads over those */
	uint64_t cycles;       /* SM clock */
	uint64_t ctas;	       /* CTAs completed */
	uint64_t lockstep_insns; /* of warp_insns, those run with all the CTA's
				  * warps in lock-step (lockstep.c) */
};

struct vgpu_sm;

VGPU_CORE_API struct vgpu_sm *vgpu_sm_new(const struct vgpu_sm_config *cfg);
VGPU_CORE_API void vgpu_sm_free(struct vgpu_sm *sm);

/*
 * Check a launch against the SM's limits.  Returns 0, or -1 with @exc
 * filled (VGPU_EXC_BAD_LAUNCH and a message).
 */
VGPU_CORE_API int vgpu_launch_validate(const struct vgpu_sm *sm,
				       const struct vgpu_launch *l,
				       struct vgpu_exception_record *exc);

/*
 * Run the clusters with linear index [first, first + count) of launch @l
 * (x fastest; without cluster dims a cluster is one CTA, so these are CTA
 * indices).  Returns 0 when all completed, or -1 with @exc describing the
 * exception that stopped the run.
 */
VGPU_CORE_API int vgpu_sm_run(struct vgpu_sm *sm, const struct vgpu_launch *l,
			      uint32_t first, uint32_t count,
			      struct vgpu_exception_record *exc);

/*
 * ---- Preemption (struct vgpu_launch_ctl.preempt) ----
 * vgpu_sm_run() and vgpu_sm_resume() return VGPU_RUN_PREEMPTED when a
 * preemption stopped them.  vgpu_sm_preempted() then gives the first
 * cluster of the run that did not complete, and says whether it had
 * started: if so, its state is on the SM (asynchronous copies drained)
 * until the next run, for vgpu_sm_save(); if not, it and the rest of the
 * range are still to run with vgpu_sm_run().  A saved state (uapi/
 * vgpu_hw.h "Context save") resumes with vgpu_sm_resume() on any SM, as
 * often as it is preempted again; it returns 0 when that cluster has
 * completed, or -1 with VGPU_EXC_BAD_CONTEXT for a state that does not
 * belong to @l or is malformed.  Preemption needs a struct
 * vgpu_launch_ctl: the budget counts across runs there.
 */
#define VGPU_RUN_PREEMPTED 1

VGPU_CORE_API bool vgpu_sm_preempted(const struct vgpu_sm *sm, uint32_t *cluster);
/* Bytes vgpu_sm_save() needs for the preempted cluster. */
VGPU_CORE_API size_t vgpu_sm_save_bytes(const struct vgpu_sm *sm);
/* Write it to @buf: the bytes written, 0 when @size is too small or no
 * started cluster was preempted. */
VGPU_CORE_API size_t vgpu_sm_save(const struct vgpu_sm *sm, void *buf,
				  size_t size);
/* The most a saved cluster of @l can take (every 8 bytes an mbarrier). */
VGPU_CORE_API size_t vgpu_ctx_max_bytes(const struct vgpu_launch *l);
VGPU_CORE_API int vgpu_sm_resume(struct vgpu_sm *sm, const struct vgpu_launch *l,
				 const void *state, size_t size,
				 struct vgpu_exception_record *exc);

/* Validate, then run the whole grid on @sm. */
VGPU_CORE_API int vgpu_sm_launch(struct vgpu_sm *sm, const struct vgpu_launch *l,
				 struct vgpu_exception_record *exc);

/* Counters accumulated since vgpu_sm_new() or the last reset. */
VGPU_CORE_API void vgpu_sm_get_stats(const struct vgpu_sm *sm,
				     struct vgpu_sm_stats *st);
/* vgpu_sm_get_stats()'s @cycles alone (the SM clock) */
VGPU_CORE_API uint64_t vgpu_sm_cycles(const struct vgpu_sm *sm);
VGPU_CORE_API void vgpu_sm_reset_stats(struct vgpu_sm *sm);

/* Bytes of core state held for one resident CTA of launch @l. */
VGPU_CORE_API size_t vgpu_sm_cta_state_bytes(const struct vgpu_launch *l);

/* Name of an exception code ("barrier count mismatch"). */
VGPU_CORE_API const char *vgpu_exc_name(uint32_t code);

/*
 * An exception record for a failure outside the core's execution (a bad
 * launch, a fault fetching the program): @code and the message, no CTA or
 * warp (barid 0xffffffff, every warp VGPU_WAIT_ABSENT).
 */
VGPU_CORE_API void vgpu_exc_set(struct vgpu_exception_record *exc,
				uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- Device-side launch (cdp.c; uapi/vgpu_hw.h, struct vgpu_cdp_header) ---- */

/**
 * struct vgpu_cdp_child - a launch the device takes from a record
 * @record:     its slot: the child grid's identifier (SR_CDP_GRID)
 * @cluster:    the kernel's compiled cluster shape (1x1x1: none)
 * @param_va:   its parameter buffer (in the slot; the hidden parameters
 *              filled in)
 * The other fields as struct vgpu_cmd_launch's.
 */
struct vgpu_cdp_child {
	uint32_t record;
	uint64_t code_va;
	uint32_t code_size;
	uint32_t entry;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint32_t smem_bytes;
	uint64_t param_va;
	uint32_t param_size;
};

/*
 * VGPU_CDP_CHILD_LAUNCH(c, ch, root): fills launch *@c (a struct
 * vgpu_cmd_launch or a struct drm_vgpu_launch: the same names) for child
 * *@ch of a tree whose launch from the host is *@root: its shape, code and
 * parameters; the root's flags (less timeline and cooperative), seed and
 * budget.  The other fields are the caller's.
 */
#define VGPU_CDP_CHILD_LAUNCH(c, ch, root)					\
	do {									\
		(c)->code_va = (ch)->code_va;					\
		(c)->code_size = (ch)->code_size;				\
		(c)->entry = (ch)->entry;					\
		for (int d_ = 0; d_ < 3; d_++) {				\
			(c)->grid[d_] = (ch)->grid[d_];				\
			(c)->block[d_] = (ch)->block[d_];			\
			(c)->cluster[d_] = (ch)->cluster[d_];			\
		}								\
		(c)->smem_bytes = (ch)->smem_bytes;				\
		(c)->param_va = (ch)->param_va;					\
		(c)->param_size = (ch)->param_size;				\
		(c)->launch_flags = (root)->launch_flags &			\
				    ~(VGPU_LAUNCH_TIMELINE | VGPU_LAUNCH_COOPERATIVE); \
		(c)->seed = (root)->seed;					\
		(c)->budget = (root)->budget;					\
	} while (0)

/* The walk's state (cdp.c); the fields are its own. */
struct vgpu_cdp_kid {
	uint32_t slot, seq;
	bool tail;
};

struct vgpu_cdp_level {
	uint32_t grid;	 /* its identifier */
	uint32_t cursor; /* the area's cursor before it ran */
	uint32_t first;	 /* its children: kids[first ..] */
	uint32_t next;	 /* the next of them to run */
	uint32_t child;	 /* the one handed out last */
	bool listed;
};

struct vgpu_cdp_walk {
	const struct vgpu_mem_ops *mem;
	void *opaque;
	uint64_t area;
	uint32_t root, nslots, cursor;
	struct vgpu_cdp_level *lv; /* the chain: lv[0] the root's */
	uint32_t depth, lv_cap;
	struct vgpu_cdp_kid *kids;
	uint32_t nkids, kids_cap;
	bool handed; /* a child is out: it runs before the next call */
	bool over;
};

/*
 * A launch from the host with device-launch area @area, before its grid
 * runs: its grid identifier in *@grid, walk *@w started.  0, or -1 with
 * @exc set (the area faults).  Allocates nothing.
 */
VGPU_CORE_API int vgpu_cdp_walk_start(struct vgpu_cdp_walk *w, const struct vgpu_mem_ops *mem,
				      void *opaque, uint64_t area, uint32_t *grid,
				      struct vgpu_exception_record *exc);

/*
 * After the last grid (the host's, or the child the last call gave) has
 * run without error: the next child to run, marked RUNNING, in *@out: 1
 * (each grid's children after it, in launch order: NULL-stream and
 * fire-and-forget, then tail launches; a child's own before its next
 * sibling); the tree is done, every slot free again: 0; a bad record or
 * a fault: -1 with @exc set, what the tree had left freed.  After 0 or
 * -1 the walk is over.
 */
VGPU_CORE_API int vgpu_cdp_walk_next(struct vgpu_cdp_walk *w, struct vgpu_cdp_child *out,
				     struct vgpu_exception_record *exc);

/*
 * A grid of the tree failed, or the launch was aborted: every record the
 * tree has left is freed without running.  The walk is over.
 */
VGPU_CORE_API void vgpu_cdp_walk_cancel(struct vgpu_cdp_walk *w);

/* The walk is over (a reset voided it: nothing is written); any time. */
VGPU_CORE_API void vgpu_cdp_walk_end(struct vgpu_cdp_walk *w);

/* ---- Helpers for memory-callback implementations (mmu.c) ---- */

/*
 * An atomic @op on the little-endian value of @size bytes (2, 4 or 8) at
 * @p (aligned to @size) of host memory that other threads may access at
 * the same time; returns the previous value.
 */
VGPU_CORE_API uint64_t vgpu_atomic_host(void *p, unsigned size,
					enum vgpu_atomic_op op, uint64_t val,
					uint64_t cmp);

/*
 * A 16-byte compare-and-swap at @p (aligned to 16) of host memory that
 * other threads may access at the same time: where the 16 bytes equal
 * @cmp they become @val; *@old gets what they were.  One lock cmpxchg16b
 * on x86-64, else the compiler's 16-byte atomic.
 */
VGPU_CORE_API void vgpu_cas16_host(void *p, const void *cmp, const void *val, void *old);

/* "read", "write", "execute", "atomic" for VGPU_MMU_ACC_* */
VGPU_CORE_API const char *vgpu_mmu_access_name(uint32_t acc);
/* "entry not present", ... for VGPU_MMU_F_* */
VGPU_CORE_API const char *vgpu_mmu_fault_name(uint32_t reason);

/*
 * Turn a GLOBAL_FAULT record into an MMU-fault record (uapi/vgpu_hw.h):
 * @exc->addr = @va, info[0..3] = access, reason, level, address space, and
 * the message "GPU MMU: ..." followed by the core's own in brackets.  The
 * QEMU device and libvgpu's sim backend both use it, so that a fault reads
 * the same on both.
 */
VGPU_CORE_API void vgpu_exc_set_mmu_fault(struct vgpu_exception_record *exc,
					 uint64_t va, uint32_t acc,
					 uint32_t reason, uint32_t level,
					 uint32_t asid);

/*
 * Small copies and zeroing on hot paths.  GCC expands a memcpy() of a
 * size it does not know but can bound, and a memset() of a known size
 * past 128 bytes, as `rep movsq` / `rep stosq`, whose microcode start-up
 * (30-odd cycles on the Intel machines measured, docs/performance.md)
 * costs more than the whole copy.  vgpu_copy_small() copies @size bytes
 * for the core's access sizes (1, 2, 4, 8, 16) with moves of that size;
 * vgpu_zero() zeroes through the C library's memset, out of line.
 */
static inline void vgpu_copy_small(void *dst, const void *src, size_t size)
{
	/* compares, most frequent first: a switch's jump table per lane cost more */
	if (size == 4)
		memcpy(dst, src, 4);
	else if (size == 8)
		memcpy(dst, src, 8);
	else if (size == 16)
		memcpy(dst, src, 16);
	else if (size == 2)
		memcpy(dst, src, 2);
	else if (size == 1)
		memcpy(dst, src, 1);
	else
		memcpy(dst, src, size);
}
VGPU_CORE_API void vgpu_zero(void *p, size_t n);

/*
 * Global memory is shared with the SMs that other host threads run: an
 * aligned 8- or 16-byte access must reach it whole, as on the GPU, where
 * another SM never sees half of one (cub's decoupled look-back publishes
 * a tile's status and value in one 16-byte st.relaxed.gpu.v2.u64 and
 * reads them in one ld.relaxed.gpu.v2.u64: a torn read mixes a new status
 * with an old value).  vgpu_mem_get_whole() reads @size bytes at @mem
 * (aligned to @size) into @buf, vgpu_mem_put_whole() writes them there:
 * 8 bytes as one relaxed atomic access; 16 as one aligned SSE move, which
 * processors with AVX perform atomically (Intel SDM vol. 3, 9.1.1; AMD
 * APM vol. 2, 7.3.2), elsewhere the compiler's 16-byte atomic; other
 * sizes with memcpy.  The core's global loads and stores, and the
 * device's DMA of one such access, go through them.
 */
static inline void vgpu_mem_get_whole(void *buf, const void *mem, size_t size)
{
	if (size == 8) {
		uint64_t v = __atomic_load_n((const uint64_t *)mem, __ATOMIC_RELAXED);

		memcpy(buf, &v, 8);
	} else if (size == 16) {
#if defined(__x86_64__)
		__m128i v = _mm_load_si128((const __m128i *)mem);

		/* v in a register: inlined where the words are used one by
		 * one, the compiler may otherwise make the load four */
		__asm__("" : "+x"(v));
		_mm_storeu_si128((__m128i *)buf, v);
#else
		unsigned __int128 v = __atomic_load_n((const unsigned __int128 *)mem,
						      __ATOMIC_RELAXED);

		memcpy(buf, &v, 16);
#endif
	} else {
		vgpu_copy_small(buf, mem, size);
	}
}

static inline void vgpu_mem_put_whole(void *mem, const void *buf, size_t size)
{
	if (size == 8) {
		uint64_t v;

		memcpy(&v, buf, 8);
		__atomic_store_n((uint64_t *)mem, v, __ATOMIC_RELAXED);
	} else if (size == 16) {
#if defined(__x86_64__)
		__m128i v = _mm_loadu_si128((const __m128i *)buf);

		__asm__("" : "+x"(v)); /* one store, as the load above */
		_mm_store_si128((__m128i *)mem, v);
#else
		unsigned __int128 v;

		memcpy(&v, buf, 16);
		__atomic_store_n((unsigned __int128 *)mem, v, __ATOMIC_RELAXED);
#endif
	} else {
		vgpu_copy_small(mem, buf, size);
	}
}

#ifdef __cplusplus
}
#endif

#endif /* VGPU_CORE_H */
