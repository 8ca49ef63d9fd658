/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpu-pci device-side launch (CUDA dynamic parallelism, uapi/vgpu_hw.h
 * "Device-side launch"): after a launch with a device-launch area
 * (struct vgpu_cmd_launch's @cdp_area) has run its grid, its queue thread
 * runs the grids it launched there, each with its own children before the
 * next, in the order the core's walk (vgpu_cdp_walk_next()) gives them
 * (the sim backend's order too, libvgpu/sim/sim_job.c).  Each child is a launch of
 * its own on the pool (vgpu_launch_grid: code and parameters fetched
 * through the launch's address space, checked as a command's), taking the
 * flags, seed and budget of its parent.  The watchdog bounds the tree:
 * its children run within one watchdog period together (each child's
 * deadline is at most the tree's, and the queue checks it between two).
 *
 * The children of one area use its local memory and printf buffer: two
 * trees on the same area (of the same address space) would corrupt each
 * other's, so a queue runs its tree's children only while no other queue
 * runs children on that area (q->cdp_area); the grids from the host run
 * concurrently as any.  Between two children the queue looks at a reset
 * (the command is void: nothing more is written) and at a disable or
 * abort (the command ends VGPU_ERR_ABORTED, what is left is cancelled).
 *
 * A forged area or record is an exception of this launch only
 * (VGPU_EXC_DEVICE_LAUNCH, or an MMU fault of the area), never a crash.
 */
#include "qemu/osdep.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

/* Whether the command of @q is to stop: 0, or its status (@exc set). s->lock held. */
static uint32_t vgpu_cdp_stop_locked(VGPUQueue *q, struct vgpu_exception_record *exc)
{
    if (q->exec_gen != q->gen) {
        return VGPU_ERR_ABORTED; /* reset: the command is void */
    }
    if (q->abort_pending || q->s->exiting) {
        vgpu_exc_set(exc, VGPU_EXC_ABORTED,
                     "launch aborted: queue disabled (device-side launches)");
        return q->abort_pending ? q->abort_pending : VGPU_ERR_ABORTED;
    }
    if (q->cdp_deadline && get_clock() >= q->cdp_deadline) {
        trace_vgpu_watchdog(q->idx, q->cdp_wdog_ms);
        vgpu_exc_set(exc, VGPU_EXC_ABORTED,
                     "watchdog: the launch's device-side launches ran longer "
                     "than %u ms", q->cdp_wdog_ms);
        return VGPU_ERR_TIMEOUT;
    }
    return 0;
}

static uint32_t vgpu_cdp_stop(VGPUQueue *q, struct vgpu_exception_record *exc)
{
    uint32_t st;

    qemu_mutex_lock(&q->s->lock);
    st = vgpu_cdp_stop_locked(q, exc);
    qemu_mutex_unlock(&q->s->lock);
    return st;
}

/* Whether a reset voided the command of @q (nothing more is written). */
static bool vgpu_cdp_void(VGPUQueue *q)
{
    bool v;

    qemu_mutex_lock(&q->s->lock);
    v = q->exec_gen != q->gen;
    qemu_mutex_unlock(&q->s->lock);
    return v;
}

/* A failure of vgpu_cdp_walk_next(): its status, the fault described. */
static uint32_t vgpu_cdp_error(VGPUQueue *q, struct vgpu_exception_record *exc)
{
    if (exc->code == VGPU_EXC_GLOBAL_FAULT && q->mmu.fault_reason) {
        vgpu_mmu_fault_record(&q->mmu, exc);
        return VGPU_ERR_MMU_FAULT;
    }
    return VGPU_ERR_EXCEPTION;
}

/*
 * The grids of the tree of launch @root (its grid has run), one at a time
 * in the order of walk @w, each taking @root's flags, seed and budget.
 * Without s->lock; q->mmu bound to the launch's address space.
 */
static uint32_t vgpu_cdp_children(VGPUQueue *q, const struct vgpu_cmd_launch *root,
                                  struct vgpu_cdp_walk *w,
                                  struct vgpu_completion *cpl)
{
    struct vgpu_exception_record *exc = &cpl->exc;

    for (;;) {
        struct vgpu_cdp_child ch;
        struct vgpu_cmd_launch c;
        uint64_t before = cpl->warp_insns;
        uint32_t status = vgpu_cdp_stop(q, exc);
        int r;

        if (status) {
            if (!vgpu_cdp_void(q)) {
                vgpu_cdp_walk_cancel(w);
            }
            return status;
        }
        q->mmu.fault_reason = 0;
        r = vgpu_cdp_walk_next(w, &ch, exc);
        if (r < 0) {
            trace_vgpu_cdp_bad(q->idx, w->root, exc->code, exc->addr);
            return vgpu_cdp_error(q, exc);
        }
        if (!r) {
            return VGPU_ERR_NONE;
        }
        trace_vgpu_cdp_child(q->idx, w->lv[w->depth - 1].grid, ch.record,
                             w->depth, ch.code_va,
                             ch.grid[0], ch.grid[1], ch.grid[2]);
        c = (struct vgpu_cmd_launch) {
            .hdr = root->hdr,
            .asid = root->asid,
            .cdp_area = w->area,
        };
        VGPU_CDP_CHILD_LAUNCH(&c, &ch, root);
        status = vgpu_launch_grid(q, &c, q->mmu.root, false, ch.record, cpl, false);
        cpl->warp_insns += before;
        if (status == VGPU_ERR_ABORTED && vgpu_cdp_void(q)) {
            return status; /* reset: nothing more is written */
        }
        if (status != VGPU_ERR_NONE) { /* what the tree launched is void */
            vgpu_cdp_walk_cancel(w);
            return status;
        }
    }
}

/* Whether another queue runs children on @q's area. s->lock held. */
static bool vgpu_cdp_area_busy_locked(VGPUQueue *q, uint32_t asid, uint64_t area)
{
    VGPUState *s = q->s;
    uint32_t i;

    for (i = 0; i < s->nqueues; i++) {
        VGPUQueue *o = &s->queues[i];

        if (o != q && o->cdp_area == area && o->cdp_asid == asid) {
            return true;
        }
    }
    return false;
}

uint32_t vgpu_cdp_run(VGPUQueue *q, const struct vgpu_cmd_launch *c,
                      struct vgpu_cdp_walk *w, uint32_t status,
                      struct vgpu_completion *cpl)
{
    VGPUState *s = q->s;
    uint32_t i, st;

    qemu_mutex_lock(&s->lock);
    if (status != VGPU_ERR_NONE) {
        /* what the failed grid launched does not run (unless void) */
        bool live = q->exec_gen == q->gen;

        qemu_mutex_unlock(&s->lock);
        if (live) {
            vgpu_cdp_walk_cancel(w);
        }
        vgpu_cdp_walk_end(w);
        return status;
    }
    /* one tree at a time on an area */
    while (!(st = vgpu_cdp_stop_locked(q, &cpl->exc)) &&
           vgpu_cdp_area_busy_locked(q, c->asid, c->cdp_area)) {
        qemu_cond_timedwait(&q->cond, &s->lock, 10);
    }
    if (st) {
        bool live = q->exec_gen == q->gen;

        qemu_mutex_unlock(&s->lock);
        if (live) {
            vgpu_cdp_walk_cancel(w);
        }
        vgpu_cdp_walk_end(w);
        return st;
    }
    q->cdp_area = c->cdp_area;
    q->cdp_asid = c->asid;
    /* the tree's grids run within one watchdog period together */
    q->cdp_wdog_ms = s->wdog_ms ? s->wdog_ms : VGPU_DEFAULT_WDOG_MS;
    q->cdp_deadline = get_clock() + (int64_t)q->cdp_wdog_ms * SCALE_MS;
    qemu_mutex_unlock(&s->lock);

    status = vgpu_cdp_children(q, c, w, cpl);
    vgpu_cdp_walk_end(w);

    qemu_mutex_lock(&s->lock);
    q->cdp_area = 0;
    q->cdp_deadline = 0;
    for (i = 0; i < s->nqueues; i++) {
        qemu_cond_broadcast(&s->queues[i].cond);
    }
    qemu_mutex_unlock(&s->lock);
    return status;
}
