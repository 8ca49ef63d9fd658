/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU core internals: predecoded instructions, warps, CTAs, the SM.
 */
#ifndef VGPU_CORE_PRIV_H
#define VGPU_CORE_PRIV_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "vgpu_core.h"
#include "vgpu_isa.h"

struct vgpu_warp;
struct vgpu_cta;
struct vgpu_dinsn;

/* What an instruction did to the warp's control flow. */
enum vgpu_xres {
	VGPU_X_NEXT,	 /* every lane of the group goes to pc + 1 */
	VGPU_X_BRANCHED, /* the instruction set the lanes' pcs itself */
	VGPU_X_BLOCK,	 /* pc + 1, and the warp stopped running (blocked) */
	VGPU_X_EXC,	 /* an exception was raised; stop the launch */
	VGPU_X_PARKED,	 /* the lanes stay at this instruction until woken
			  * (vgpu_warp_park); the warp's other lanes go on */
};

typedef enum vgpu_xres (*vgpu_exec_fn)(struct vgpu_cta *c, struct vgpu_warp *w,
				       const struct vgpu_dinsn *d, uint32_t em);

/*
 * A predecoded instruction.  Register fields hold register-file rows, with
 * RZ mapped to a row of zeros (sources) or a scratch row (destinations) so
 * the per-instruction functions never test for RZ.
 */
struct vgpu_dinsn {
	vgpu_exec_fn fn;
	uint16_t id;	   /* enum vgpu_insn_id; VGPU_I__COUNT if illegal */
	uint8_t stype;	   /* enum vgpu_stype of the row */
	bool unguarded;	   /* guard is PT, not negated */
	bool effect;	   /* may change what other warps observe (sm->epoch) */
	uint8_t plain_run; /* plain instructions from here on (vgpu_exec_table), <= 255 */
	uint8_t pg, pg_not;
	uint16_t rd, ra, rb, rc, re; /* register-file rows */
	uint8_t rd_num, ra_num, rb_num, rc_num, re_num; /* architectural */
	uint8_t pp, pp_not, pu;
	uint8_t mod[VGPU_ISA_MAX_MODS];
	uint8_t barid;
	uint16_t cnt;
	uint32_t imm; /* imm32, or sign-extended off24, or sr index */
	uint64_t w[2];
};

struct vgpu_prog {
	uint32_t n;	/* instructions (insns[n] is the fell-off-the-end sentinel) */
	uint32_t nregs; /* architectural GPRs used (max index + 1) */
	uint32_t rows;	/* register-file rows per warp: nregs + zero + scratch */
	struct vgpu_dinsn *insns;
};

/* Extra register-file rows after the architectural ones. */
#define VGPU_ZERO_ROWS 8u /* >= the widest source span (5 coordinates) */
#define VGPU_SCRATCH_ROWS 4u

enum vgpu_warp_state {
	VGPU_WS_RUNNABLE,
	VGPU_WS_BLOCKED,      /* on named barrier wait_bar */
	VGPU_WS_SLEEPING,     /* NANOSLEEP until wake */
	VGPU_WS_EXITED,
	VGPU_WS_MBAR_WAIT,    /* MBAR.TRY_WAIT suspended until the phase
			       * completes or wake (time limit) */
	VGPU_WS_CLUSTER_WAIT, /* BAR.CLUSTER.WAIT */
	VGPU_WS_ASYNC_WAIT,   /* CP.ASYNC.WAIT_ALL / CP.ASYNC.BULK.WAIT_GROUP */
};

#define VGPU_BULK_GROUPS 64u /* bulk async-groups tracked per warp */

struct vgpu_warp {
	uint32_t id;
	uint32_t exists;    /* lanes that exist (last warp may be partial) */
	uint32_t live;	    /* lanes that have not exited */
	bool converged;	    /* every live lane is at upc */
	uint32_t upc;	    /* pc (instruction index) when converged */
	uint32_t cur_pc;    /* the group that runs next ... */
	uint32_t cur_mask;  /* ... and its lanes */
	uint8_t state;	    /* enum vgpu_warp_state */
	uint8_t wait_bar;   /* when VGPU_WS_BLOCKED ... */
	uint32_t wait_pc;   /* ... at this instruction ... */
	uint32_t wait_mask; /* ... executed by these lanes */
	uint64_t wake;	    /* SLEEPING / MBAR_WAIT: SM cycle to wake at */
	/* MBAR_WAIT: the mbarrier (CTA slot, offset) */
	uint8_t wait_cta;
	uint32_t wait_off;
	bool try_timed_out; /* woken by the time limit: TRY_WAIT says false */
	uint32_t parked;    /* lanes suspended in MBAR.TRY_WAIT */
	bool park_any;	    /* parked lanes wait on more than one mbarrier */
	/*
	 * Spin detection.  fail_pc/fail_epoch: the last MBAR wait that said
	 * false for some lane, and sm->epoch + 1 at that time.  A warp that
	 * runs the same wait again with nothing observable changed since
	 * (same epoch) and no lane elsewhere is spinning: spin_epoch holds
	 * sm->epoch + 1 then, spin_* the object and the wait.
	 */
	uint32_t fail_pc;
	uint64_t fail_epoch;
	uint64_t spin_epoch;
	uint8_t spin_cta;
	uint32_t spin_off;
	uint32_t spin_pc;
	uint32_t spin_mask;
	/* ASYNC_WAIT: groups allowed to stay pending (~0u: WAIT_ALL) */
	uint32_t wait_groups;
	uint32_t red_state; /* BAR.RED result copy (B2R.WARP format) */
	uint32_t cp_pending;	 /* cp.async copies in flight */
	uint64_t cp_last_done;	 /* when its last cp.async completes */
	uint32_t bulk_committed; /* bulk async-groups committed so far */
	uint16_t bulk_pending[VGPU_BULK_GROUPS]; /* ops in flight per group */
	uint32_t clbar_arrived;	 /* lanes arrived in this cluster-barrier phase */
	uint32_t clbar_phase;	 /* cluster-barrier phase of the last arrive + 1 */
	uint32_t ahead;	    /* instructions run in lock-step before its turn (lockstep.c) */
	uint32_t pred[8];   /* predicate lane masks; pred[7] (PT) all ones */
	uint32_t *regs;	    /* rows x 32 lanes */
	uint32_t pc[VGPU_WARP_SIZE]; /* per-lane pc, valid when !converged */
	/*
	 * Per-lane call depth (CALL +1, RET -1; exec_call.c), always valid.
	 * The SIMT group is the deepest lanes, then the lowest pc among them,
	 * so a callee runs until it returns before its caller's other lanes
	 * go on.  @deep: some live lane has a non-zero depth.
	 */
	bool deep;
	uint16_t depth[VGPU_WARP_SIZE];
	/*
	 * What the last selection of a diverged warp's group left aside
	 * (simt.c vgpu_warp_select, when @sel_ok): the candidate lanes outside the
	 * group and their lowest pc.  While those lanes are still the only
	 * others and the group moves to a pc below @sel_min, the group stays
	 * the one a selection would pick, with no scan of the lanes.
	 */
	bool sel_ok;
	uint32_t sel_others;
	uint32_t sel_min;
};

struct vgpu_nbar {
	uint16_t count;	   /* arrivals x 32 */
	uint16_t expected; /* cnt of the round in progress, 0 = all alive */
	uint8_t mode;	   /* VGPU_BARMODE_* */
	uint8_t redop;
	uint16_t acc;	   /* running reduction */
	uint32_t waiters;  /* warps blocked on this barrier */
};

/*
 * What the hardware keeps beside a live mbarrier's word: the full phase
 * number (the word holds it modulo 4), and whether a wait has returned
 * true since the last phase completed (for the sanitizer).
 */
struct vgpu_mbar_meta {
	uint32_t off;
	uint32_t phase;
	bool need_wait;
};


struct vgpu_cta {
	struct vgpu_sm *sm;
	const struct vgpu_launch *l;
	const struct vgpu_prog *prog;
	uint32_t id[3];
	uint32_t rank;	   /* in the cluster */
	uint32_t nthreads;
	uint32_t nwarps;
	uint32_t exited_warps;
	uint32_t runnable; /* bit per warp */
	uint32_t timed;	   /* warps with a wake time (SLEEPING, MBAR_WAIT) */
	uint32_t next;	   /* round-robin position */
	bool lockstep;	   /* its warps may be in lock-step (lockstep.c) */
	uint8_t *smem;
	uint32_t smem_size;
	uint8_t *shadow;   /* bit per 8 bytes of smem: a live mbarrier */
	struct vgpu_mbar_meta *mbars; /* live mbarriers */
	uint32_t nmbars, mbars_cap;
	struct vgpu_nbar bar[VGPU_NUM_NAMED_BARRIERS];
	struct vgpu_warp *warps; /* nwarps, in the SM's per-slot buffer */
};

enum vgpu_async_kind {
	VGPU_AOP_CP,	       /* CP.ASYNC: per-lane 4/8/16-byte copies */
	VGPU_AOP_CP_ARRIVE,    /* CP.ASYNC.MBARRIER.ARRIVE's deferred arrive */
	VGPU_AOP_BULK_LOAD,    /* global -> shared, complete_tx */
	VGPU_AOP_BULK_STORE,   /* shared -> global, bulk group */
	VGPU_AOP_TENSOR_LOAD,  /* tensor box -> shared, complete_tx */
	VGPU_AOP_TENSOR_STORE, /* shared -> tensor box, bulk group */
};

/* One operation of the copy engine. */
struct vgpu_async_op {
	uint32_t slot;	      /* in sm->ops */
	uint8_t kind;
	uint8_t cta;	      /* issuing CTA slot */
	uint8_t warp;	      /* issuing warp */
	uint8_t dst_cta;      /* CTA slot of the shared destination/source */
	uint8_t mbar_cta;     /* CTA slot of the mbarrier */
	uint32_t lanes;	      /* CP / CP_ARRIVE: lanes */
	uint32_t pc;	      /* issuing instruction (exceptions) */
	uint64_t seq;	      /* issue order */
	uint64_t done;	      /* SM cycle of completion */
	uint32_t smem;	      /* shared offset */
	uint32_t mbar;	      /* mbarrier offset, ~0u: none */
	uint32_t size;	      /* bytes (CP: per lane) */
	uint32_t group;	      /* bulk group sequence number */
	uint64_t gaddr;	      /* global address */
	uint32_t flow;	      /* timeline flow number */
	int32_t coord[VGPU_TMAP_MAX_RANK];
	uint16_t im2col_off[3]; /* im2col loads: W, H, D offsets */
	uint8_t red;	      /* TENSOR_STORE: 0 a store, else VGPU_MOD_TRED_* + 1 */
	struct vgpu_tensor_map map;
	uint64_t lane_src[VGPU_WARP_SIZE]; /* CP: per lane */
	uint32_t lane_dst[VGPU_WARP_SIZE];
};

/* A queued operation: the copy engine's heap orders these. */
struct vgpu_async_key {
	uint64_t done; /* SM cycle of completion */
	uint64_t seq;  /* issue order */
	uint32_t slot; /* in sm->ops */
};

#define VGPU_LOCKSTEP_HISTORY 256u

struct vgpu_sm {
	struct vgpu_sm_config cfg;
	struct vgpu_sm_stats stats;
	uint64_t clock;
	uint64_t rng;
	uint64_t executed;    /* warp-instructions this launch (local) */
	uint64_t budget_left; /* before the next budget check */
	uint64_t slice_given; /* budget_left at the last refill */
	/* vgpu_launch_ctl.executed as this SM's last refill left it */
	uint64_t ctl_seen;
	struct vgpu_exception_record *exc;
	bool exc_raised;
	bool sanitize;
	/*
	 * Observable changes so far: stores, atomics, barrier and mbarrier
	 * updates, copies issued and completed, warp exits.  A failed wait
	 * repeated under the same epoch is a spin (see struct vgpu_warp).
	 */
	uint64_t epoch;
	const struct vgpu_launch *l;
	/* the cluster being run */
	uint32_t nctas;
	uint32_t cluster_id[3];
	uint32_t next_cta;
	uint32_t clbar_phase; /* cluster barrier phase number */
	struct vgpu_cta *ctas[VGPU_MAX_CLUSTER_CTAS];
	uint32_t *regfile[VGPU_MAX_CLUSTER_CTAS];
	struct vgpu_warp *warpbuf[VGPU_MAX_CLUSTER_CTAS];
	uint8_t *smem[VGPU_MAX_CLUSTER_CTAS];
	uint8_t *shadow[VGPU_MAX_CLUSTER_CTAS];
	size_t regfile_bytes, warpbuf_bytes, smem_alloc;
	uint32_t slots_alloc;	/* slots [0, slots_alloc) hold buffers of those sizes */
	/* copy engine */
	struct vgpu_async_op *ops;	 /* pool: nslots used of ops_cap */
	uint32_t nslots, ops_cap;
	uint32_t *op_free;		 /* free slots */
	uint32_t nfree;
	struct vgpu_async_key *op_heap; /* queued operations (nops) */
	uint32_t nops;
	uint64_t op_seq;
	uint64_t engine_free; /* cycle the engine finishes its queue */
	/* timeline (only with an event hook) */
	uint64_t cluster_t0;	  /* clock when the cluster began */
	uint32_t flow_seq;	  /* flow numbers handed out in the cluster */
	uint32_t wake_flow;	  /* the completion whose wake-ups run now */
	uint32_t copy_flow;	  /* the copy whose effects run now, 0: none */
	struct vgpu_cta *run_cta; /* the warp running now, if any */
	struct vgpu_warp *run_w;
	/*
	 * Preemption (vgpu_launch_ctl.preempt, .preempt_every): @preempting
	 * while the run unwinds; then @preempt_cluster is the first cluster
	 * of the run that did not complete and @preempt_mid says it started
	 * (its state is on the SM for vgpu_sm_save).  @resume_w: the warp
	 * stopped inside its time slice (CTA slot @resume_cta), which runs
	 * first, for @resume_quantum, when the cluster resumes.
	 */
	bool preempting;
	bool preempt_mid;
	uint32_t preempt_cluster;
	uint64_t cluster_executed; /* warp-instructions of the cluster */
	uint32_t resume_cta;
	struct vgpu_warp *resume_w;
	uint32_t resume_quantum;
	/*
	 * Lock-step (lockstep.c; one CTA per SM): instructions run so far and
	 * the pcs of the last VGPU_LOCKSTEP_HISTORY (more than a warp can run
	 * ahead of its turn).
	 */
	uint64_t lockstep_steps;
	uint32_t lockstep_pc[VGPU_LOCKSTEP_HISTORY];
};
/*
 * Make room for one more element in the array *@arr of *@n used out of
 * *@cap elements of @size bytes (doubling, from 8).  False on no memory.
 */
static inline bool vgpu_grow(void **arr, uint32_t n, uint32_t *cap, size_t size)
{
	uint32_t ncap;
	void *p;

	if (n < *cap)
		return true;
	ncap = *cap ? 2 * *cap : 8;
	p = realloc(*arr, (size_t)ncap * size);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

/*
 * Add @n warp-instructions to @ctl's shared count and return the new
 * total: one atomic read-modify-write, or a plain load and store where
 * one SM alone counts (@ctl->one_sm).
 */
static inline uint64_t vgpu_ctl_count(struct vgpu_launch_ctl *ctl, uint64_t n)
{
	uint64_t v;

	if (!ctl->one_sm)
		return atomic_fetch_add(&ctl->executed, n) + n;
	v = atomic_load_explicit(&ctl->executed, memory_order_relaxed) + n;
	atomic_store_explicit(&ctl->executed, v, memory_order_relaxed);
	return v;
}

/* The scheduler's seeded xorshift generator. */
static inline uint64_t vgpu_rng(struct vgpu_sm *sm)
{
	uint64_t x = sm->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sm->rng = x;
	return x;
}

/* Raise an exception for warp @w (may be NULL) at its current pc. */
__attribute__((format(printf, 5, 6))) void
vgpu_raise(struct vgpu_cta *c, const struct vgpu_warp *w, uint32_t code,
	   uint32_t lane_mask, const char *fmt, ...);
/*
 * Is @w spinning: re-running an mbarrier wait that failed, with nothing
 * observable changed since (struct vgpu_warp)?
 */
static inline bool vgpu_warp_spinning(const struct vgpu_sm *sm, const struct vgpu_warp *w)
{
	return w->spin_epoch == sm->epoch + 1 && w->state != VGPU_WS_EXITED;
}

/* Is @w waiting: blocked, asleep or parked on something, not exited? */
static inline bool vgpu_warp_waiting(const struct vgpu_warp *w)
{
	return w->state != VGPU_WS_RUNNABLE && w->state != VGPU_WS_EXITED;
}

/*
 * Timeline events.  vgpu_trace_emit() completes @ev (cycle now, CTA, warp
 * @w or none, @w's pc unless set) and hands it to the launch's hook.
 */
void vgpu_trace_emit(struct vgpu_cta *c, const struct vgpu_warp *w,
		     struct vgpu_trace_event *ev);
/* ... at SM cycle @clock instead of now */
void vgpu_trace_emit_at(struct vgpu_cta *c, const struct vgpu_warp *w,
			struct vgpu_trace_event *ev, uint64_t clock);

static inline bool vgpu_tracing(const struct vgpu_cta *c)
{
	return __builtin_expect(c->l->event != NULL, 0);
}

/* VGPU_TRACE(c, w, .type = VGPU_TR_..., fields): free without a hook. */
#define VGPU_TRACE(c, w, ...)                                                  \
	do {                                                                   \
		if (vgpu_tracing(c)) {                                         \
			struct vgpu_trace_event ev_ = { __VA_ARGS__ };         \
			vgpu_trace_emit((c), (w), &ev_);                       \
		}                                                              \
	} while (0)

/*
 * A barrier phase completed in CTA @t: report it (@type, @id, @addr) on
 * the track of whoever completed it (the running warp, else @t's copy
 * engine) and return the flow number its wake-ups carry (0 untraced).
 */
uint32_t vgpu_trace_complete(struct vgpu_cta *t, uint16_t type, uint32_t id,
			     uint64_t addr, uint32_t count, uint32_t expected);

/* f32 with directed rounding, rnd VGPU_MOD_RND_RZ/RM/RP (fround.c) */
uint32_t vgpu_fround_add(uint32_t a, uint32_t b, unsigned rnd);
uint32_t vgpu_fround_mul(uint32_t a, uint32_t b, unsigned rnd);
uint32_t vgpu_fround_fma(uint32_t a, uint32_t b, uint32_t c, unsigned rnd);
uint32_t vgpu_fround_div(uint32_t a, uint32_t b, unsigned rnd);
uint32_t vgpu_fround_sqrt(uint32_t a, unsigned rnd);
uint32_t vgpu_fround_rcp(uint32_t a, unsigned rnd);
/* a 32-bit integer (@sign: signed) to f32, rounded in direction @rnd */
uint32_t vgpu_fround_i2f(uint32_t a, bool sign, unsigned rnd);
/* f32 to an integral f32: .RZ trunc, .RM floor, .RP ceil */
uint32_t vgpu_fround_rint(uint32_t a, unsigned rnd);
/* f64 alike (DADD DMUL DFMA DDIV DSQRT DRCP, D2F, L2D; D2I/D2L's IRND) */
double vgpu_dround_add(double x, double y, unsigned rnd);
double vgpu_dround_mul(double x, double y, unsigned rnd);
double vgpu_dround_fma(double x, double y, double z, unsigned rnd);
double vgpu_dround_div(double x, double y, unsigned rnd);
double vgpu_dround_sqrt(double x, unsigned rnd);
uint32_t vgpu_dround_d2f(double x, unsigned rnd);
double vgpu_dround_l2d(uint64_t v, bool sign, unsigned rnd);
double vgpu_dround_int(double x, unsigned irnd);

/* mbarrier unit (mbar.c) */
int vgpu_mbar_describe_wait(const struct vgpu_cta *c, uint32_t warp,
			    const char *verb, uint8_t cta, uint32_t off,
			    char *buf, size_t len);
void vgpu_mbar_record(const struct vgpu_cta *c, uint32_t off,
		      struct vgpu_exception_record *e);
/* Current phase number of the mbarrier at @off of @t. */
uint32_t vgpu_mbar_phase(const struct vgpu_cta *t, uint32_t off);
/* Shared-memory ordinary access check (sanitizer): false if raised. */
bool vgpu_mbar_check_access(struct vgpu_cta *c, struct vgpu_warp *w,
			    uint32_t em, const struct vgpu_cta *target,
			    uint32_t off, uint32_t size);
/* Asynchronous arrive/complete_tx on mbarrier @off of CTA @t. */
bool vgpu_mbar_async_arrive(struct vgpu_cta *t, uint32_t off, uint32_t count);
bool vgpu_mbar_async_complete_tx(struct vgpu_cta *t, uint32_t off,
				 uint32_t bytes);
bool vgpu_mbar_pending_inc(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			   struct vgpu_cta *t, uint32_t off, uint32_t n);
/* Object at shared address @addr for an asynchronous operation. */
struct vgpu_cta *vgpu_mbar_at(struct vgpu_cta *c, struct vgpu_warp *w,
			      uint32_t em, uint32_t addr, uint32_t *off);

/* Copy engine (async.c) */
uint64_t vgpu_async_next_done(const struct vgpu_sm *sm);
bool vgpu_async_progress(struct vgpu_sm *sm);
/*
 * Global memory through the launch's callbacks, in naturally aligned
 * pieces (or one block): 0, or -1 with the faulting address in @fault.
 */
int vgpu_gmem_xfer(const struct vgpu_launch *l, uint64_t addr, void *buf,
		   uint32_t len, bool write, uint64_t *fault);
/* Raise @code for copy @op at its issuing instruction; returns false. */
__attribute__((format(printf, 4, 5))) bool
vgpu_async_fail(struct vgpu_sm *sm, const struct vgpu_async_op *op, uint32_t code,
		const char *fmt, ...);
/* Tensor maps and the tensor copies' walks (tensor.c) */
bool vgpu_tensor_map_load(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			  uint64_t addr, uint32_t rank, uint32_t mode,
			  struct vgpu_tensor_map *m);
uint64_t vgpu_tensor_bytes(const struct vgpu_tensor_map *m);
bool vgpu_tensor_im2col_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			   const struct vgpu_tensor_map *m, uint64_t addr,
			   const int32_t *coord, const uint32_t *off, bool store);
bool vgpu_tensor_red_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			const struct vgpu_tensor_map *m, uint64_t addr, uint32_t red);
bool vgpu_tensor_tile_coords_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
				const struct vgpu_tensor_map *m, uint64_t addr,
				const int32_t *coord, bool store, bool red);
bool vgpu_tensor_move(struct vgpu_sm *sm, const struct vgpu_async_op *op, bool store);

/* Clusters (cluster.c) */
void vgpu_cluster_bar_check(struct vgpu_sm *sm);
/*
 * Resolve shared address @addr of an access of @size bytes by CTA @c:
 * the target CTA (itself, or another of the cluster for an address with
 * VGPU_SMEM_CLUSTER_BIT) and the offset in it.  Raises and returns NULL
 * when the rank or the range is bad.
 */
struct vgpu_cta *vgpu_smem_resolve_slow(struct vgpu_cta *c, struct vgpu_warp *w,
					uint32_t em, uint32_t addr, uint32_t size,
					uint32_t *off);

/* The common case inline: the CTA's own shared memory, in range. */
static inline struct vgpu_cta *vgpu_smem_resolve(struct vgpu_cta *c, struct vgpu_warp *w,
						 uint32_t em, uint32_t addr, uint32_t size,
						 uint32_t *off)
{
	if (!(addr & VGPU_SMEM_CLUSTER_BIT) && (uint64_t)addr + size <= c->smem_size) {
		*off = addr;
		return c;
	}
	return vgpu_smem_resolve_slow(c, w, em, addr, size, off);
}

/* Named-barrier unit (bar.c) */
void vgpu_bar_reset(struct vgpu_cta *c);
void vgpu_bar_warp_exited(struct vgpu_cta *c);
uint32_t vgpu_bar_state(const struct vgpu_nbar *b);
/* R2B: the barrier from a state word (waiters are the caller's) */
void vgpu_bar_set_state(struct vgpu_nbar *b, uint32_t v);

/* Context save/restore (ctx.c, sm.c) */
/* Set up cluster @linear of @l on @sm as it starts (no warp has run). */
void vgpu_cluster_setup(struct vgpu_sm *sm, const struct vgpu_launch *l,
			uint32_t linear);
/* Put the saved cluster @state on @sm (after vgpu_cluster_setup's buffers
 * are reserved): 0, or -1 with VGPU_EXC_BAD_CONTEXT in @exc. */
int vgpu_ctx_load(struct vgpu_sm *sm, const struct vgpu_launch *l,
		  const void *state, size_t size, struct vgpu_exception_record *exc);

/* A launch's cluster size in dimension @i (0 in the launch: 1). */
static inline uint32_t vgpu_cluster_dim(const struct vgpu_launch *l, int i)
{
	return l->cluster[i] ? l->cluster[i] : 1;
}

/*
 * The CTAs an SM runs co-resident, in dimension @i: a cluster, or the
 * whole grid of a cooperative launch (VGPU_LAUNCH_COOPERATIVE: its CTAs
 * are clusters of one otherwise).
 */
static inline uint32_t vgpu_group_dim(const struct vgpu_launch *l, int i)
{
	return l->flags & VGPU_LAUNCH_COOPERATIVE ? l->grid[i] : vgpu_cluster_dim(l, i);
}

static inline bool vgpu_coop(const struct vgpu_cta *c)
{
	return c->l->flags & VGPU_LAUNCH_COOPERATIVE;
}

/* Run the cluster set up on @sm (new or restored) until it completes or
 * stops (sm.c); false: an exception or a preemption. */
bool vgpu_cluster_loop(struct vgpu_sm *sm, const struct vgpu_launch *l);

/* The round robin's time slice, in warp-instructions (sm.c, lockstep.c) */
#define VGPU_QUANTUM 64u

/*
 * Account what ran since the last refill and hand out the next budget
 * slice (sm.c).  False: an exception was raised on (@c, @w), or a
 * preemption stops the launch here.  @quiet leaves abort, deadline and
 * preemption requests to the next refill.
 */
bool vgpu_refill(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w,
		 const struct vgpu_launch *l, bool quiet);
/* The same, with @w at @pc for an exception it raises (sm.c). */
bool vgpu_refill_at(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w,
		    uint32_t pc, bool quiet);

/*
 * Lock-step (lockstep.c): run CTA @c's warps together from @w's turn,
 * @quantum left of its slice; 0: not applicable, nothing changed; 1: it
 * ran (the round robin goes on from sm->resume_w, or its next warp); -1:
 * an exception or a preemption stopped the launch.
 */
int vgpu_lockstep_run(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w,
		      uint32_t quantum);
/* Can CTA @c go on in lock-step at @pc? */
bool vgpu_lockstep_can_start(const struct vgpu_sm *sm, const struct vgpu_cta *c,
			     uint32_t pc);
/* The pc of warp @w at its round-robin position (behind what it ran ahead). */
uint32_t vgpu_lockstep_turn_pc(const struct vgpu_cta *c, const struct vgpu_warp *w);

/* Scheduler services used by instructions. */
void vgpu_warp_suspend(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t state,
		       uint64_t wake);
void vgpu_warp_block(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t barid);
void vgpu_warp_wake(struct vgpu_cta *c, struct vgpu_warp *w);
void vgpu_warp_park(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t cta,
		    uint32_t off, uint64_t wake);
void vgpu_warp_sleep(struct vgpu_cta *c, struct vgpu_warp *w, uint64_t ns);
void vgpu_warp_wait_failed(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t cta,
			   uint32_t off, uint32_t lanes);

#define VGPU_EXEC_PROTO(name)                                                  \
	enum vgpu_xres name(struct vgpu_cta *c, struct vgpu_warp *w,           \
			    const struct vgpu_dinsn *d, uint32_t em)
/* Loop over the lanes of @em; a straight loop when all 32 are active. */
#define VGPU_LANES(em, l, ...)                                                  \
	do {                                                                   \
		if ((em) == ~0u) {                                             \
			for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++) {        \
				__VA_ARGS__                                    \
			}                                                      \
		} else {                                                       \
			VGPU_FOR_LANES(em, l) {                                \
				__VA_ARGS__                                    \
			}                                                      \
		}                                                              \
	} while (0)

/* Memory and atomics (exec_mem.c) */
VGPU_EXEC_PROTO(vgpu_exec_ldg);
VGPU_EXEC_PROTO(vgpu_exec_trap_multimem);
VGPU_EXEC_PROTO(vgpu_exec_lds);
VGPU_EXEC_PROTO(vgpu_exec_ldp);
VGPU_EXEC_PROTO(vgpu_exec_stg);
VGPU_EXEC_PROTO(vgpu_exec_sts);
VGPU_EXEC_PROTO(vgpu_exec_atomg);
VGPU_EXEC_PROTO(vgpu_exec_atoms);
VGPU_EXEC_PROTO(vgpu_exec_atomg_cas);
VGPU_EXEC_PROTO(vgpu_exec_atoms_cas);
/* Named-barrier instructions (bar.c) */
VGPU_EXEC_PROTO(vgpu_exec_bar);
VGPU_EXEC_PROTO(vgpu_exec_bar_red);
VGPU_EXEC_PROTO(vgpu_exec_b2r);
VGPU_EXEC_PROTO(vgpu_exec_b2r_result);
VGPU_EXEC_PROTO(vgpu_exec_r2b);
/* mbarrier instructions (mbar.c) */
VGPU_EXEC_PROTO(vgpu_exec_mbar_init);
VGPU_EXEC_PROTO(vgpu_exec_mbar_inval);
VGPU_EXEC_PROTO(vgpu_exec_mbar_arrive);
VGPU_EXEC_PROTO(vgpu_exec_mbar_tx);
VGPU_EXEC_PROTO(vgpu_exec_mbar_wait);
VGPU_EXEC_PROTO(vgpu_exec_mbar_pending);
/* asynchronous copies (async.c) */
VGPU_EXEC_PROTO(vgpu_exec_cp_async);
VGPU_EXEC_PROTO(vgpu_exec_cp_async_arrive);
VGPU_EXEC_PROTO(vgpu_exec_cp_async_wait_all);
VGPU_EXEC_PROTO(vgpu_exec_cp_bulk);
VGPU_EXEC_PROTO(vgpu_exec_cp_bulk_store);
VGPU_EXEC_PROTO(vgpu_exec_cp_bulk_commit);
VGPU_EXEC_PROTO(vgpu_exec_cp_bulk_wait);
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor);
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_store);
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_im2col);
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_store_im2col);
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_red);
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_red_im2col);
/* calls (exec_call.c) */
VGPU_EXEC_PROTO(vgpu_exec_call);
VGPU_EXEC_PROTO(vgpu_exec_ret);
VGPU_EXEC_PROTO(vgpu_exec_salloc);
/* conversions (cvt.c) */
VGPU_EXEC_PROTO(vgpu_exec_cvt);
/* CVT.dt.st.RN of the bits @v (types as VGPU_MOD_CVTD_/CVTS_ values) */
uint64_t vgpu_cvt_rn(uint64_t v, unsigned dt, unsigned st);
/* clusters (cluster.c) */
VGPU_EXEC_PROTO(vgpu_exec_mapa);
VGPU_EXEC_PROTO(vgpu_exec_bar_cluster);

/* SIMT group selection (simt.c) */
/* The group to run next: cur_pc and cur_mask (converged: every live lane) */
void vgpu_warp_select(struct vgpu_warp *w);
/* Make the lanes individually addressable (before they part) */
void vgpu_warp_diverge(struct vgpu_warp *w);
/* Lanes @taken of the current group jump to @target, the rest fall through */
void vgpu_warp_branch(struct vgpu_warp *w, uint32_t taken, uint32_t target);
/* Lanes @em of the current group go to their own pcs @pcs */
void vgpu_warp_scatter(struct vgpu_warp *w, uint32_t em, const uint32_t *pcs);
void vgpu_warp_advance_diverged(struct vgpu_warp *w);

/* The group at cur_pc moves on to cur_pc + 1 (exited lanes drop out). */
static inline void vgpu_warp_advance(struct vgpu_warp *w)
{
	if (w->converged) {
		w->upc = w->cur_pc + 1;
		w->cur_pc = w->upc;
		w->cur_mask = w->live;
		return;
	}
	vgpu_warp_advance_diverged(w);
}

/* Per-instruction functions, indexed by enum vgpu_insn_id (exec.c). */
struct vgpu_exec_row {
	vgpu_exec_fn fn;
	bool plain;
};
extern const struct vgpu_exec_row vgpu_exec_table[VGPU_I__COUNT];
enum vgpu_xres vgpu_exec_fell_off(struct vgpu_cta *c, struct vgpu_warp *w,
				  const struct vgpu_dinsn *d, uint32_t em);
enum vgpu_xres vgpu_exec_illegal(struct vgpu_cta *c, struct vgpu_warp *w,
				 const struct vgpu_dinsn *d, uint32_t em);

/* an f64 NaN made quiet (its sign and payload kept) */
static inline double vgpu_dquiet(double x)
{
	uint64_t v;

	memcpy(&v, &x, sizeof(v));
	v |= 1ull << 51;
	memcpy(&x, &v, sizeof(v));
	return x;
}

/*
 * f64 NaN results keep an operand's NaN, made quiet: b's when both are
 * NaNs (as the GPU's DADD, DMUL and DMNMX), else the NaN operand's; r
 * (the host's default NaN) when neither is, as for inf - inf.
 */
static inline double vgpu_dnan(double a, double b, double r)
{
	if (isnan(b))
		return vgpu_dquiet(b);
	if (isnan(a))
		return vgpu_dquiet(a);
	return r;
}

static inline uint32_t *vgpu_reg(struct vgpu_warp *w, uint32_t row)
{
	return w->regs + (size_t)row * VGPU_WARP_SIZE;
}

static inline uint32_t vgpu_pred_mask(const struct vgpu_warp *w, uint8_t p,
				      uint8_t neg)
{
	return neg ? ~w->pred[p] : w->pred[p];
}

/* Value of a uniform operand: the lowest active lane's. */
static inline uint32_t vgpu_uniform(struct vgpu_warp *w, uint32_t row,
				    uint32_t em)
{
	return vgpu_reg(w, row)[__builtin_ctz(em)];
}

/*
 * May CTA @c's warps run in lock-step (lockstep.c)?  Not under a random
 * schedule or with a timeline: both observe the order of warps.
 */
static inline bool vgpu_lockstep_allowed(const struct vgpu_cta *c)
{
	return !(c->l->flags & VGPU_LAUNCH_RANDOM_SCHED) && !vgpu_tracing(c);
}

/* popcount without a libgcc call on baseline x86-64 */
static inline uint32_t vgpu_popcount(uint32_t m)
{
	if (m == ~0u)
		return 32;
	m = m - ((m >> 1) & 0x55555555u);
	m = (m & 0x33333333u) + ((m >> 2) & 0x33333333u);
	return (((m + (m >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

static inline uint32_t vgpu_byte_pc(uint32_t idx)
{
	return idx * VGPU_INSN_BYTES;
}

#define VGPU_FOR_LANES(mask, l)                                                \
	for (uint32_t l##_m = (mask), l = 0; l##_m && ((l = (uint32_t)__builtin_ctz(l##_m)), 1); \
	     l##_m &= l##_m - 1)

/* Do all lanes of @em hold the same value in @row?  (A branch-free,
 * vectorisable loop for a full warp.) */
static inline bool vgpu_row_uniform(struct vgpu_warp *w, uint32_t row,
				    uint32_t em)
{
	const uint32_t *r = vgpu_reg(w, row);
	uint32_t v = r[__builtin_ctz(em)], diff = 0;

	if (em == ~0u) {
		for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
			diff |= r[l] ^ v;
		return !diff;
	}
	VGPU_FOR_LANES(em, l)
		if (r[l] != v)
			return false;
	return true;
}

#endif /* VGPU_CORE_PRIV_H */
