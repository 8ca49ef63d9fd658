/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU PCIe device: state shared by the device's files.
 *
 *   vgpu-pci.c        PCI function, BAR0 registers, interrupts, reset
 *   vgpu-migration.c  VM state changes (quiescing), VMState
 *   vgpu-queue.c      command rings: queue threads, commands, semaphores
 *   vgpu-pool.c       the SM worker pool: jobs, claims, priorities, preemption
 *   vgpu-mmu.c        DMA to guest RAM, the GPU MMU walk and TLB, memory ops
 *   vgpu-userq.c      user-mode queues: doorbell BAR, command restrictions
 *
 * Locking (docs/device.md "Locking and threads"):
 *   BQL      taken by QEMU around MMIO, config, reset, VM state changes and
 *            bottom halves.  Device threads never take it.
 *   s->lock  protects every field marked (L) below.  Taken after the BQL,
 *            held only briefly: never across DMA or a core run.
 *   s->sem_lock  the semaphore wake-up generation; innermost.
 * Order: BQL -> s->lock -> s->sem_lock.
 */
#ifndef HW_MISC_VGPU_PCI_H
#define HW_MISC_VGPU_PCI_H

#include "hw/pci/pci.h"
#include "qemu/bitmap.h"
#include "qemu/thread.h"
#include "qemu/queue.h"
#include "qom/object.h"
#include "sysemu/runstate.h"

#include "vgpu_core.h"

#define TYPE_VGPU_PCI "vgpu-pci"
OBJECT_DECLARE_SIMPLE_TYPE(VGPUState, VGPU_PCI)

#define VGPU_MAX_QUEUES VGPU_QUEUES_MAX /* uapi/vgpu_hw.h */
#define VGPU_MAX_SMS VGPU_SMS_MAX /* uapi/vgpu_hw.h: sms= and threads= */
#define VGPU_TLB_ENTRIES 64
/* inline-budget's default: warp-instructions (docs/device.md "Inline runs") */
#define VGPU_INLINE_BUDGET 4096

typedef struct VGPUJob VGPUJob;

/*
 * Internal statuses of a command (beside VGPU_ERR_*).  YIELD: a semaphore
 * acquire gave way to a VM stop; DEFER: an inline run left the command to
 * the queue thread without starting it.  Neither completes: HEAD stays on
 * the command.  PENDING: an inline run left a launch running on the pool.
 */
#define VGPU_STATUS_YIELD 0xffffffffu
#define VGPU_STATUS_DEFER 0xfffffffeu
#define VGPU_STATUS_PENDING 0xfffffffdu

/* A range of a launch's clusters an SM runs (vgpu-pool.c). */
typedef struct VGPUClaim {
    uint32_t first, count;
    int32_t slot;           /* >= 0: a saved cluster in that slot of the
                             * context-save buffer; VGPU_SLOT_LIVE: in the
                             * worker's @ctx, saved when an inline run's
                             * budget ran out; -1: clusters not started */
} VGPUClaim;
#define VGPU_SLOT_LIVE (-2)

/*
 * VGPUStep - the command a queue executes: on its thread, or in the vCPU
 * thread that rang the doorbell (an inline run, vgpu-queue.c).  Owned by
 * whichever thread set the queue's @busy.
 */
typedef struct VGPUStep {
    uint32_t idx, gen, size, flags;
    uint32_t vec;           /* its completion vector (VGPU_CMD_F_VEC) */
    uint64_t cplb;          /* completion ring when it was taken */
    uint8_t cmd[VGPU_CMD_BYTES];
    struct vgpu_completion cpl;
    VGPUJob *job;           /* a launch an inline run left to the pool */
} VGPUStep;

/**
 * VGPUMMUCtx - one thread's view of an address space: its TLB and the
 * last fault it saw (what the memory callbacks failed on).
 */
typedef struct VGPUMMUCtx {
    VGPUState *s;
    uint32_t asid;
    uint64_t root;          /* guest physical address of the level-3 table */
    uint32_t tlb_gen;       /* s->tlb_gen the entries belong to */
    struct {
        uint64_t tag;       /* (vpn << 1) | 1, 0 = empty */
        uint64_t pte;
    } tlb[VGPU_TLB_ENTRIES];
    /* last fault */
    uint64_t fault_va;
    uint32_t fault_acc;     /* VGPU_MMU_ACC_* */
    uint32_t fault_reason;  /* VGPU_MMU_F_* */
    uint32_t fault_level;
} VGPUMMUCtx;

typedef struct VGPUQueue {
    VGPUState *s;
    uint32_t idx;
    QemuThread thread;
    QemuCond cond;          /* work arrived, or the running job finished */
    struct vgpu_sm *check_sm; /* validates launches; never runs them */
    VGPUMMUCtx mmu;         /* program, parameter and fence accesses */

    /* registers and state (L) */
    uint64_t ring_base;
    uint64_t cpl_base;
    uint32_t size;
    uint32_t head;
    uint32_t tail;
    bool enabled;
    bool stopped;
    bool user;              /* user mode, taken at enable (uapi "User-mode
                             * queues") */
    uint32_t user_asid;     /* its address space when @user */
    bool hold;              /* VGPU_QCTRL_HOLD: takes no new command */
    uint32_t error;
    uint32_t error_index;
    uint64_t completed;
    bool busy;              /* a command is executing */
    VGPUStep step;          /* that command (whoever set @busy) */
    uint64_t inline_left;   /* an inline run's warp-instructions left for
                             * this doorbell (vgpu_queue_inline_locked) */
    bool step_pending;      /* (L) @step.job runs on the pool; the queue
                             * thread waits for it and completes @step */
    uint32_t gen;           /* bumped by reset: the command in flight is void */
    uint32_t exec_gen;      /* @gen when the command in flight was taken */
    VGPUJob *job;           /* launch in flight, NULL otherwise */
    uint32_t abort_pending; /* VGPU_ERR_* aborting the command in flight */
    uint64_t cdp_area;      /* device-launch area whose children it runs, 0:
                             * none (L; vgpu-cdp.c) */
    uint32_t cdp_asid;      /* its address space (L) */
    int64_t cdp_deadline;   /* when the children of the launch in flight
                             * are past the watchdog, 0: none (L) */
    uint32_t cdp_wdog_ms;   /* that watchdog (L) */
    uint32_t priority;      /* VGPU_QPRIO_*: its launches' claims (L) */
    uint64_t csb;           /* context-save buffer, guest physical (L) */
    int64_t yielded_ns;     /* time the command at HEAD spent waiting before
                             * it gave way to a VM stop (L) */
    int64_t cmd_start;      /* get_clock() when the command in flight began,
                             * less @yielded_ns (queue thread only) */
    /* fault injection (vgpu-inject.c) (L) */
    uint32_t inj_kind;      /* VGPU_INJ_* armed */
    uint32_t inj_left;      /* strikes left */
    uint64_t inj_arg;
    bool hung;              /* VGPU_INJ_HANG struck: runs nothing */
    QEMUTimer *irq_timer;   /* VGPU_INJ_DELAY_IRQ */
    uint32_t irq_timer_vec; /* the delayed interrupt's vector */
} VGPUQueue;

/**
 * VGPUJob - one launch handed to the SM workers.  CTAs are claimed in
 * chunks under s->lock; the queue thread that owns it waits on its
 * queue's cond until @done.
 */
struct VGPUJob {
    VGPUQueue *q;
    struct vgpu_launch launch;
    struct vgpu_launch_ctl ctl;
    uint32_t asid;
    uint64_t root;
    uint32_t total;         /* CTAs in the grid (L) */
    uint32_t next;          /* first unclaimed CTA (L) */
    uint32_t chunk;         /* CTAs per claim */
    uint32_t running;       /* workers inside vgpu_sm_run (L) */
    bool done;              /* (L) */
    bool waited;            /* its queue thread waits on q->cond for
                             * @done: wake it then (L) */
    bool failed;            /* @exc holds the exception to report (L) */
    uint32_t fail_cta;      /* first CTA of the chunk that raised it (L) */
    uint32_t abort_status;  /* VGPU_ERR_TIMEOUT / _ABORTED once aborted (L) */
    struct vgpu_exception_record exc;
    struct vgpu_trace_sink sink; /* VGPU_LAUNCH_TIMELINE: records, shared
                                  * by the workers (lock-free) */
    QTAILQ_ENTRY(VGPUJob) link; /* on s->jobs while CTAs are unclaimed;
                                 * a claim moves it to the tail (L) */
    /*
     * Preemption (uapi "Preemption"): @csb and @slot_bytes are the queue's
     * buffer when the launch began (0: never preempted); @back holds what
     * preempted SMs gave back, served before new claims: a saved cluster
     * (@slot >= 0, in that slot of the buffer) or a range of clusters not
     * started (@slot -1).  @slots_used: a bit per slot holding a state
     * (slot i: worker i, so threads= bits).
     */
    uint64_t csb;
    uint32_t slot_bytes;
    struct {
        uint32_t first, count;
        int32_t slot;
    } back[2 * VGPU_MAX_SMS];
    uint32_t nback;         /* (L) */
    DECLARE_BITMAP(slots_used, VGPU_MAX_SMS); /* (L) */
    bool preempting;        /* (L) ctl.preempt is set for a waiting launch */
    bool no_preempt;        /* (L) a state did not fit: never again */
    uint64_t preempt_every; /* ctl.preempt_every after an inline run */
    uint32_t wdog_ms;       /* the watchdog it runs under */
};

typedef struct VGPUWorker {
    VGPUState *s;
    uint32_t idx;
    QemuThread thread;
    struct vgpu_sm *sm;
    VGPUMMUCtx mmu;
    bool busy;              /* its SM runs CTAs, here or lent to a queue (L) */
    VGPUJob *job;           /* the launch it runs (L) */
    int64_t claim_ns;       /* get_clock() when its claim began (L) */
    uint64_t claim_executed; /* its launch's ctl.executed then (L) */
    void *ctx;              /* a saved cluster on its way to or from a slot */
    size_t ctx_size;
    VGPUJob *cont_job;      /* (L) an inline run's budget ran out on this
                             * SM: its thread goes on with @cont */
    VGPUClaim cont;         /* (L) */
} VGPUWorker;

struct VGPUState {
    PCIDevice parent_obj;
    MemoryRegion mmio;
    MemoryRegion doorbells; /* BAR4 */
    QEMUBH *irq_bh;
    VMChangeStateEntry *vmstate_change;

    /* properties (sms and smem 0: the model's) */
    char *model_name;       /* model=: "vgpu" (NULL) or "h100" */
    uint32_t sms;
    uint32_t smem;
    uint32_t nqueues;
    uint32_t nthreads;
    uint64_t preempt_every; /* testing: preempt after N warp-insns per SM */
    uint64_t inline_budget; /* warp-insns a doorbell's commands may run in
                             * the vCPU thread that rang it (0: none) */
    uint32_t timeslice_prop; /* timeslice-us: TIMESLICE_US after reset */
    uint32_t msix_vectors;  /* msix-vectors: MSI-X table entries */
    bool inject;            /* x-inject: fault injection (vgpu-inject.c) */
    Error *migration_blocker; /* while @inject */

    /* the SM's shape, from the model and the properties at realize */
    uint32_t model;         /* VGPU_MODEL_* (CAP_MODEL) */
    uint32_t smem_cta;      /* CAP_SMEM_CTA: what one CTA may use */
    uint32_t ctas_per_sm;   /* CAP_CTAS_PER_SM */
    uint32_t warps_per_sm;  /* CAP_WARPS_PER_SM */
    uint32_t regs_per_sm;   /* CAP_REGS_PER_SM */
    uint32_t cluster;       /* CAP_CLUSTER */
    uint32_t cluster_max;   /* CAP_CLUSTER_MAX */

    QemuMutex lock;
    QemuCond pool_cond;     /* a job has CTAs to claim, or exiting */
    QemuCond idle_cond;     /* a queue became idle */
    bool exiting;           /* (L) unrealize: threads leave */
    bool paused;            /* (L) VM stopped: start no new command */
    QTAILQ_HEAD(, VGPUJob) jobs; /* (L) */
    uint32_t sem_waiters;   /* (L) semaphore acquires waiting */

    /*
     * Semaphore wake-ups: @sem_gen is bumped (under @sem_lock, with
     * s->lock held: order s->lock -> sem_lock) whenever an acquire may
     * have to look again: a command completed, a release wrote, a queue
     * was aborted, the VM stopped.  A GCond, because an acquire also
     * polls every VGPU_SEM_POLL_US and QemuCond waits in milliseconds.
     */
    GMutex sem_lock;
    GCond sem_cond;
    uint64_t sem_gen;       /* (sem_lock) */

    /* registers (L) */
    uint32_t irq_status;
    uint32_t irq_mask;
    uint32_t irq_pending;   /* raised by device threads, for the BH */
    uint64_t irq_pending_vecs; /* the completion vectors they named */
    uint64_t as_base;
    uint32_t as_count;
    uint32_t wdog_ms;
    uint32_t err_count;
    uint32_t err_last;
    uint32_t err_info;
    uint32_t csb_slot;      /* bytes per context-save slot, 0: off */
    uint32_t preemptions;   /* clusters saved since reset */
    uint32_t timeslice_us;  /* uapi "Timeslices", 0: none */
    uint64_t inj_arg;       /* INJECT_ARG */
    uint32_t inj_sel;       /* queue INJECT was last written for */

    uint32_t tlb_gen;       /* atomic: bumped to flush every TLB */

    VGPUQueue *queues;
    VGPUWorker *workers;
};

/* MemoryRegionOps: every size and alignment reaches the handlers, which
 * log and ignore the bad ones (BAR0 and BAR4). */
#define VGPU_MR_ANY_ACCESS                                                     \
    .valid = { .min_access_size = 1, .max_access_size = 8, .unaligned = true }, \
    .impl = { .min_access_size = 1, .max_access_size = 8, .unaligned = true }

/* vgpu-pci.c */
void vgpu_raise_irq_locked(VGPUState *s, uint32_t bits);
void vgpu_raise_irq_vec_locked(VGPUState *s, uint32_t bits, uint32_t vec);
void vgpu_note_error_locked(VGPUState *s, uint32_t err, uint32_t queue,
                            uint32_t index);

/* vgpu-qregs.c */
uint32_t vgpu_queue_status(const VGPUQueue *q);
void vgpu_queue_stop_locked(VGPUState *s, VGPUQueue *q, uint32_t err,
                            const char *why);
uint64_t vgpu_queue_read_locked(VGPUQueue *q, hwaddr reg, bool *ok);
bool vgpu_queue_write_locked(VGPUState *s, VGPUQueue *q, hwaddr reg,
                             uint32_t val);

/* A 64-bit register's low or high half, written. */
static inline void vgpu_set_lo(uint64_t *r, uint32_t v)
{
    *r = (*r & ~0xffffffffull) | v;
}

static inline void vgpu_set_hi(uint64_t *r, uint32_t v)
{
    *r = (*r & 0xffffffffull) | (uint64_t)v << 32;
}

/* vgpu-migration.c */
void vgpu_vm_state_change(void *opaque, bool running, RunState state);
extern const VMStateDescription vmstate_vgpu;

/* vgpu-userq.c */
void vgpu_queue_doorbell_locked(VGPUState *s, VGPUQueue *q, uint32_t tail);
uint32_t vgpu_user_cmd_filter(uint8_t *cmd, uint32_t asid);
void vgpu_userq_init(VGPUState *s);

/* vgpu-queue.c */
void vgpu_queues_init(VGPUState *s);
void vgpu_queues_exit(VGPUState *s);
void vgpu_queue_kick_locked(VGPUQueue *q);
void vgpu_queue_inline_locked(VGPUQueue *q);
void vgpu_wait_idle_locked(VGPUState *s);
bool vgpu_busy_locked(VGPUState *s);
uint32_t vgpu_launch_grid(VGPUQueue *q, const struct vgpu_cmd_launch *c,
                          uint64_t root, bool host, uint32_t grid,
                          struct vgpu_completion *cpl, bool inl);
uint32_t vgpu_mmu_error(const VGPUMMUCtx *ctx, struct vgpu_exception_record *exc,
                        const char *what);

/* vgpu-sem.c */
void vgpu_sem_wake_locked(VGPUState *s);
uint32_t vgpu_cmd_sem(VGPUQueue *q, struct vgpu_cmd_sem *c,
                      struct vgpu_completion *cpl, bool inl);

/* vgpu-cdp.c */
uint32_t vgpu_cdp_run(VGPUQueue *q, const struct vgpu_cmd_launch *c,
                      struct vgpu_cdp_walk *w, uint32_t status,
                      struct vgpu_completion *cpl);

/* vgpu-pool.c */
void vgpu_queues_wake_locked(VGPUState *s);
bool vgpu_pool_idle_locked(VGPUState *s);
void vgpu_queue_preempt_locked(VGPUQueue *q);
void vgpu_queue_abort_locked(VGPUQueue *q, uint32_t status);
void *vgpu_worker_thread(void *opaque);
uint32_t vgpu_job_run_locked(VGPUQueue *q, VGPUJob *job,
                             struct vgpu_exception_record *exc, bool inl);
uint32_t vgpu_job_wait_locked(VGPUQueue *q, VGPUJob *job,
                              struct vgpu_exception_record *exc);

/* vgpu-inject.c */
void vgpu_inject_write_locked(VGPUState *s, hwaddr addr, uint32_t val);
uint32_t vgpu_inject_read_locked(VGPUState *s, hwaddr addr);
bool vgpu_inject_take_locked(VGPUQueue *q, uint32_t kind);
void vgpu_inject_disarm_locked(VGPUQueue *q);
void vgpu_inject_completion_irq_locked(VGPUQueue *q, uint32_t vec);
uint32_t vgpu_inject_mmu_fault(struct vgpu_completion *cpl, uint64_t va,
                               uint32_t asid);
void vgpu_inject_init(VGPUState *s);
void vgpu_inject_exit(VGPUState *s);

/* vgpu-mmu.c */
bool vgpu_dma_read(VGPUState *s, uint64_t pa, void *buf, uint64_t len);
bool vgpu_dma_write(VGPUState *s, uint64_t pa, const void *buf, uint64_t len);
void vgpu_mmu_ctx_bind(VGPUMMUCtx *ctx, VGPUState *s, uint32_t asid,
                       uint64_t root);
int vgpu_mmu_lookup_as(VGPUState *s, uint32_t asid, uint64_t *root,
                       VGPUMMUCtx *fault);
int vgpu_mmu_copy(VGPUMMUCtx *ctx, uint64_t va, void *buf, uint64_t len,
                  uint32_t acc);
int vgpu_mmu_rw64(VGPUMMUCtx *ctx, uint64_t va, uint64_t *val, uint32_t acc);
bool vgpu_dma_rw64(VGPUState *s, uint64_t pa, uint64_t *val, bool is_write);
void vgpu_mmu_fault_record(const VGPUMMUCtx *ctx,
                           struct vgpu_exception_record *exc);
void vgpu_tlb_flush_all(VGPUState *s);
extern const struct vgpu_mem_ops vgpu_mmu_mem_ops;

#endif
