/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpu-pci fault injection (uapi/vgpu_hw.h, "Fault injection"): with the
 * property x-inject=on the device loses or delays a completion interrupt,
 * faults a launch, hangs a queue or corrupts a completion record when told
 * to, so that a driver's recovery paths can be tested.  One fault is armed
 * per queue (VGPUQueue.inj_*); vgpu-queue.c asks at each point where one
 * could strike.  State under s->lock.  The armed faults are not migrated:
 * the property blocks migration.
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

static const char *const vgpu_inj_names[VGPU_INJ_KINDS] = {
    [VGPU_INJ_NONE] = "none",
    [VGPU_INJ_DROP_IRQ] = "drop-irq",
    [VGPU_INJ_DELAY_IRQ] = "delay-irq",
    [VGPU_INJ_MMU_FAULT] = "mmu-fault",
    [VGPU_INJ_HANG] = "hang",
    [VGPU_INJ_CORRUPT_CPL] = "corrupt-cpl",
};

/* A write to INJECT or its argument.  s->lock held. */
void vgpu_inject_write_locked(VGPUState *s, hwaddr addr, uint32_t val)
{
    uint32_t kind = val & 0xff, qi = (val >> 8) & 0xff, count = val >> 16;
    VGPUQueue *q;

    if (!s->inject) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: fault injection is off "
                      "(x-inject): write 0x%x at 0x%" HWADDR_PRIx " ignored\n",
                      val, addr);
        vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, 0xffff, 0xffff);
        return;
    }
    switch (addr) {
    case VGPU_REG_INJECT_ARG_LO:
        s->inj_arg = (s->inj_arg & ~0xffffffffull) | val;
        return;
    case VGPU_REG_INJECT_ARG_HI:
        s->inj_arg = (s->inj_arg & 0xffffffffull) | (uint64_t)val << 32;
        return;
    }
    if (qi >= s->nqueues || kind >= VGPU_INJ_KINDS) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: INJECT 0x%x: no %s\n", val,
                      qi >= s->nqueues ? "such queue" : "such fault");
        vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, 0xffff, 0xffff);
        return;
    }
    q = &s->queues[qi];
    q->inj_kind = kind;
    q->inj_left = kind ? (count ? count : 1) : 0;
    q->inj_arg = s->inj_arg;
    s->inj_sel = qi;
    trace_vgpu_inject(qi, vgpu_inj_names[kind], q->inj_left, q->inj_arg);
}

uint32_t vgpu_inject_read_locked(VGPUState *s, hwaddr addr)
{
    VGPUQueue *q;

    if (!s->inject) {
        return 0;
    }
    switch (addr) {
    case VGPU_REG_INJECT_ARG_LO:
        return (uint32_t)s->inj_arg;
    case VGPU_REG_INJECT_ARG_HI:
        return s->inj_arg >> 32;
    }
    q = &s->queues[s->inj_sel];
    return VGPU_INJECT(q->inj_left ? q->inj_kind : 0, s->inj_sel,
                       MIN(q->inj_left, 0xffffu));
}

/* Does the fault @kind armed on @q strike now?  It counts down.  (L) */
bool vgpu_inject_take_locked(VGPUQueue *q, uint32_t kind)
{
    if (q->inj_kind != kind || !q->inj_left) {
        return false;
    }
    if (!--q->inj_left) {
        q->inj_kind = VGPU_INJ_NONE;
    }
    trace_vgpu_inject_strike(q->idx, vgpu_inj_names[kind], q->inj_left);
    return true;
}

/* Queue disabled or device reset: nothing armed, not hung.  (L) */
void vgpu_inject_disarm_locked(VGPUQueue *q)
{
    q->inj_kind = VGPU_INJ_NONE;
    q->inj_left = 0;
    q->hung = false;
    if (q->irq_timer) {
        timer_del(q->irq_timer);
    }
}

/* The IRQ_STATUS bit of @q's VGPU_CMD_F_IRQ completions. */
static uint32_t vgpu_completion_bit(const VGPUQueue *q)
{
    return q->user ? VGPU_IRQ_USER : VGPU_IRQ_COMPLETION;
}

/* A delayed completion interrupt comes.  Main loop, BQL held. */
static void vgpu_inject_irq_timer(void *opaque)
{
    VGPUQueue *q = opaque;

    qemu_mutex_lock(&q->s->lock);
    vgpu_raise_irq_vec_locked(q->s, vgpu_completion_bit(q), q->irq_timer_vec);
    qemu_mutex_unlock(&q->s->lock);
}

/*
 * A command of @q with VGPU_CMD_F_IRQ completed: its interrupt, on @vec.
 * (L)
 */
void vgpu_inject_completion_irq_locked(VGPUQueue *q, uint32_t vec)
{
    if (vgpu_inject_take_locked(q, VGPU_INJ_DROP_IRQ)) {
        return;
    }
    if (vgpu_inject_take_locked(q, VGPU_INJ_DELAY_IRQ)) {
        q->irq_timer_vec = vec;
        timer_mod(q->irq_timer, qemu_clock_get_ms(QEMU_CLOCK_VIRTUAL) +
                  (int64_t)MIN(q->inj_arg, (uint64_t)INT32_MAX));
        return;
    }
    vgpu_raise_irq_vec_locked(q->s, vgpu_completion_bit(q), vec);
}

/*
 * An injected MMU fault in place of launch @c's run: the record a fault of
 * the kernel's own at @va would give.  Returns the completion status.
 */
uint32_t vgpu_inject_mmu_fault(struct vgpu_completion *cpl, uint64_t va,
                               uint32_t asid)
{
    struct vgpu_exception_record *exc = &cpl->exc;

    exc->code = VGPU_EXC_GLOBAL_FAULT;
    exc->addr = va;
    exc->info[0] = VGPU_MMU_ACC_READ;
    exc->info[1] = VGPU_MMU_F_NOT_PRESENT;
    exc->info[2] = 0;
    exc->info[3] = asid;
    snprintf(exc->msg, sizeof(exc->msg),
             "injected MMU fault: read of 0x%" PRIx64 " in AS %u", va, asid);
    return VGPU_ERR_EXCEPTION;
}

void vgpu_inject_init(VGPUState *s)
{
    uint32_t i;

    for (i = 0; i < s->nqueues; i++) {
        s->queues[i].irq_timer = timer_new_ms(QEMU_CLOCK_VIRTUAL,
                                              vgpu_inject_irq_timer,
                                              &s->queues[i]);
    }
}

void vgpu_inject_exit(VGPUState *s)
{
    uint32_t i;

    for (i = 0; i < s->nqueues; i++) {
        timer_free(s->queues[i].irq_timer);
        s->queues[i].irq_timer = NULL;
    }
}
