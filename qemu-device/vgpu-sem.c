/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU PCIe device: the semaphore commands (VGPU_CMD_SEM_ACQUIRE and
 * _RELEASE, uapi/vgpu_hw.h), executed by a queue thread (vgpu-queue.c).
 * An acquire that does not hold waits on its queue thread, polling the
 * semaphore and woken whenever a command completes anywhere.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

/* ---- semaphores ---- */

/*
 * Every semaphore acquire that waits looks at its semaphore again, and at
 * its queue's abort and the VM's run state.  s->lock held.
 */
void vgpu_sem_wake_locked(VGPUState *s)
{
    if (!s->sem_waiters) {
        return;
    }
    g_mutex_lock(&s->sem_lock);
    s->sem_gen++;
    g_cond_broadcast(&s->sem_cond);
    g_mutex_unlock(&s->sem_lock);
}

static uint64_t vgpu_sem_gen_locked(VGPUState *s)
{
    uint64_t gen;

    g_mutex_lock(&s->sem_lock);
    gen = s->sem_gen;
    g_mutex_unlock(&s->sem_lock);
    return gen;
}

/*
 * Sleep until vgpu_sem_wake_locked() moves s->sem_gen past @gen or @us
 * microseconds have passed.  Called without s->lock.
 */
static void vgpu_sem_sleep(VGPUState *s, uint64_t gen, int64_t us)
{
    gint64 end = g_get_monotonic_time() + us;

    g_mutex_lock(&s->sem_lock);
    while (s->sem_gen == gen &&
           g_cond_wait_until(&s->sem_cond, &s->sem_lock, end)) {
        /* woken, or spuriously: look at the generation again */
    }
    g_mutex_unlock(&s->sem_lock);
}

static void vgpu_sem_from_le(struct vgpu_cmd_sem *c)
{
    c->addr = le64_to_cpu(c->addr);
    c->payload = le64_to_cpu(c->payload);
    c->asid = le32_to_cpu(c->asid);
    c->op = le32_to_cpu(c->op);
    c->timeout_ns = le64_to_cpu(c->timeout_ns);
}

/*
 * Read (acquire) or write (release) the semaphore of @c as a fence writes
 * its value: through the queue's MMU context in address space @c->asid,
 * or at a guest physical address with VGPU_CMD_F_FENCE_PHYS.  Returns
 * VGPU_ERR_NONE, or VGPU_ERR_MMU_FAULT with the fault in @exc.  Called
 * without s->lock.
 */
static uint32_t vgpu_sem_access(VGPUQueue *q, const struct vgpu_cmd_sem *c,
                                uint64_t *val, bool write,
                                struct vgpu_exception_record *exc)
{
    VGPUState *s = q->s;
    VGPUMMUCtx *ctx = &q->mmu;
    uint32_t acc = write ? VGPU_MMU_ACC_WRITE : VGPU_MMU_ACC_READ;
    const char *what = write ? "semaphore release" : "semaphore acquire";
    uint64_t root;

    if (c->hdr.flags & VGPU_CMD_F_FENCE_PHYS) {
        if (!vgpu_dma_rw64(s, c->addr, val, write)) {
            vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "%s: guest physical 0x%"
                         PRIx64 " is not guest RAM", what, (uint64_t)c->addr);
            exc->addr = c->addr;
            exc->info[0] = acc;
            exc->info[1] = VGPU_MMU_F_BUS;
            return VGPU_ERR_MMU_FAULT;
        }
        return VGPU_ERR_NONE;
    }
    if (vgpu_mmu_lookup_as(s, c->asid, &root, ctx)) {
        return vgpu_mmu_error(ctx, exc, write ?
                              "semaphore release: address space" :
                              "semaphore acquire: address space");
    }
    vgpu_mmu_ctx_bind(ctx, s, c->asid, root);
    if (vgpu_mmu_rw64(ctx, c->addr, val, acc)) {
        return vgpu_mmu_error(ctx, exc, write ? "semaphore release: write" :
                                                "semaphore acquire: read");
    }
    return VGPU_ERR_NONE;
}

static bool vgpu_sem_satisfied(const struct vgpu_cmd_sem *c, uint64_t val)
{
    return c->op == VGPU_SEM_OP_EQ ? val == c->payload : val >= c->payload;
}

static const char *const vgpu_sem_op_names[] = {
    [VGPU_SEM_OP_GEQ] = ">=",
    [VGPU_SEM_OP_EQ] = "==",
};

/*
 * The record of an acquire that stopped waiting (@code VGPU_EXC_SEM_TIMEOUT
 * or VGPU_EXC_ABORTED): the semaphore, the value last read, the payload.
 */
static void vgpu_sem_exc(struct vgpu_exception_record *exc, uint32_t code,
                         const struct vgpu_cmd_sem *c, uint64_t val,
                         uint64_t waited_ns, const char *why)
{
    vgpu_exc_set(exc, code, "semaphore acquire %s after %" PRIu64 " ns: "
                 "value 0x%" PRIx64 " at 0x%" PRIx64 ", waiting for %s 0x%"
                 PRIx64, why, waited_ns, val, (uint64_t)c->addr,
                 vgpu_sem_op_names[c->op], (uint64_t)c->payload);
    exc->addr = c->addr;
    exc->info[0] = (uint32_t)val;
    exc->info[1] = val >> 32;
    exc->info[2] = (uint32_t)c->payload;
    exc->info[3] = c->payload >> 32;
}

/*
 * Wait until the semaphore satisfies @c->op against @c->payload.  The
 * semaphore is read again whenever vgpu_sem_wake_locked() is called (a
 * command completed on any queue, the queue was aborted, the VM stopped)
 * and at least every VGPU_SEM_POLL_US, since the device does not see CPU
 * writes.  A VM stop makes it give way (VGPU_STATUS_YIELD); it runs again,
 * its time so far counted, when the VM runs.  An inline run (@inl) that
 * finds it unsatisfied leaves it to the queue thread (VGPU_STATUS_DEFER).
 */
static uint32_t vgpu_cmd_sem_acquire(VGPUQueue *q, struct vgpu_cmd_sem *c,
                                     struct vgpu_completion *cpl, bool inl)
{
    VGPUState *s = q->s;
    uint64_t val = 0, waited, gen;
    uint32_t status;

    trace_vgpu_sem_acquire(q->idx, c->addr, c->op, c->payload, c->timeout_ns,
                           c->hdr.flags);
    qemu_mutex_lock(&s->lock);
    s->sem_waiters++;
    for (;;) {
        /* the generation first: a wake-up after the checks is not lost */
        gen = vgpu_sem_gen_locked(s);
        if (q->abort_pending) {
            status = q->abort_pending;
            vgpu_sem_exc(&cpl->exc, VGPU_EXC_ABORTED, c, val,
                         get_clock() - q->cmd_start, "aborted: queue disabled");
            break;
        }
        /* a VM stop, or a hold: give way, not completed, HEAD stays */
        if (s->paused || q->hold) {
            status = VGPU_STATUS_YIELD;
            break;
        }
        qemu_mutex_unlock(&s->lock);

        status = vgpu_sem_access(q, c, &val, false, &cpl->exc);
        waited = get_clock() - q->cmd_start;
        if (status != VGPU_ERR_NONE) {
            /* the fault is in cpl->exc */
        } else if (vgpu_sem_satisfied(c, val)) {
            trace_vgpu_sem_acquired(q->idx, c->addr, val, waited);
        } else if (inl) {
            /* an inline run does not wait: the queue thread does */
            status = VGPU_STATUS_DEFER;
        } else if (c->timeout_ns && waited >= c->timeout_ns) {
            trace_vgpu_sem_timeout(q->idx, c->addr, val, c->payload, waited);
            vgpu_sem_exc(&cpl->exc, VGPU_EXC_SEM_TIMEOUT, c, val, waited,
                         "timed out");
            status = VGPU_ERR_EXCEPTION;
        } else {
            int64_t us = VGPU_SEM_POLL_US;

            if (c->timeout_ns) {
                us = MIN(us, (int64_t)DIV_ROUND_UP(c->timeout_ns - waited,
                                                   SCALE_US));
            }
            vgpu_sem_sleep(s, gen, us);
            qemu_mutex_lock(&s->lock);
            continue;
        }
        qemu_mutex_lock(&s->lock);
        break;
    }
    s->sem_waiters--;
    qemu_mutex_unlock(&s->lock);
    return status;
}

/*
 * Commands of a queue complete in order, so everything before the release
 * has completed and written what it writes: write the payload and wake
 * the acquires.
 */
static uint32_t vgpu_cmd_sem_release(VGPUQueue *q, struct vgpu_cmd_sem *c,
                                     struct vgpu_completion *cpl)
{
    VGPUState *s = q->s;
    uint64_t val = c->payload;
    uint32_t status;

    trace_vgpu_sem_release(q->idx, c->addr, c->payload, c->hdr.flags);
    status = vgpu_sem_access(q, c, &val, true, &cpl->exc);
    if (status == VGPU_ERR_NONE) {
        qemu_mutex_lock(&s->lock);
        vgpu_sem_wake_locked(s);
        qemu_mutex_unlock(&s->lock);
    }
    return status;
}

uint32_t vgpu_cmd_sem(VGPUQueue *q, struct vgpu_cmd_sem *c,
                      struct vgpu_completion *cpl, bool inl)
{
    bool acquire = c->hdr.opcode == VGPU_CMD_SEM_ACQUIRE;

    vgpu_sem_from_le(c);
    if (c->hdr.flags & ~VGPU_CMD_F_MASK || c->addr % 8 ||
        (acquire ? c->op > VGPU_SEM_OP_MAX : c->op || c->timeout_ns) ||
        !buffer_is_zero(c->reserved, sizeof(c->reserved))) {
        return VGPU_ERR_BAD_COMMAND;
    }
    return acquire ? vgpu_cmd_sem_acquire(q, c, cpl, inl) :
                     vgpu_cmd_sem_release(q, c, cpl);
}
