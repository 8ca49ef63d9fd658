/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU PCIe device: a hardware queue's BAR0 registers (uapi/vgpu_hw.h,
 * VGPU_REG_QUEUE_BASE + queue x VGPU_REG_QUEUE_STRIDE): the ring's
 * configuration, its control (enable, disable, resume, reset) and status.
 * vgpu-pci.c's MMIO handlers call them under s->lock.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

static bool vgpu_ring_config_ok(const VGPUQueue *q)
{
    return q->size >= 2 && q->size <= VGPU_RING_MAX && is_power_of_2(q->size) &&
           !(q->ring_base % 64) && !(q->cpl_base % 8);
}

uint32_t vgpu_queue_status(const VGPUQueue *q)
{
    uint32_t st = 0;

    if (q->enabled) {
        st |= VGPU_QSTAT_ENABLED;
        if (!q->stopped && q->head == q->tail && !q->busy) {
            st |= VGPU_QSTAT_IDLE;
        }
    }
    if (q->busy) {
        st |= VGPU_QSTAT_BUSY;
    }
    if (q->stopped) {
        st |= VGPU_QSTAT_STOPPED;
    }
    return st;
}

/* Stop @q at its head with @err.  s->lock held. */
void vgpu_queue_stop_locked(VGPUState *s, VGPUQueue *q, uint32_t err,
                            const char *why)
{
    q->stopped = true;
    q->error = err;
    q->error_index = q->head;
    vgpu_note_error_locked(s, err, q->idx, q->head);
    trace_vgpu_queue_stopped(q->idx, q->head, err, why);
    vgpu_raise_irq_locked(s, VGPU_IRQ_ERROR);
}

/* s->lock held */
static void vgpu_queue_control_locked(VGPUState *s, VGPUQueue *q,
                                      uint32_t val)
{
    const uint32_t known = VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME |
        VGPU_QCTRL_USER | VGPU_QCTRL_HOLD | VGPU_QCTRL_RESTORE |
        VGPU_QCTRL_ASID_MASK << VGPU_QCTRL_ASID_SHIFT;
    bool enable = val & VGPU_QCTRL_ENABLE;

    if (val & ~known) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: reserved control "
                      "bits 0x%x ignored\n", q->idx, val & ~known);
    }
    if (enable && !q->enabled) {
        if (q->busy) {
            /*
             * Re-enabled while the command aborted by the disable still
             * winds down: it is void, its completion is not written.
             */
            q->gen++;
        }
        q->enabled = true;
        q->stopped = false;
        q->user = val & VGPU_QCTRL_USER;
        q->user_asid = q->user ? (val >> VGPU_QCTRL_ASID_SHIFT) &
                                 VGPU_QCTRL_ASID_MASK : 0;
        /* RESTORE: where it stood when taken off ("Swapping queues") */
        if (!(val & VGPU_QCTRL_RESTORE)) {
            q->head = 0;
            q->completed = 0;
        }
        q->tail = q->head;
        q->error = q->error_index = 0;
        q->yielded_ns = 0;
        trace_vgpu_queue_enable(q->idx, q->ring_base, q->cpl_base, q->size);
        if (!vgpu_ring_config_ok(q) || q->head >= q->size) {
            qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: bad ring "
                          "configuration (ring 0x%" PRIx64 ", completions 0x%"
                          PRIx64 ", %u entries, head %u)\n", q->idx,
                          q->ring_base, q->cpl_base, q->size, q->head);
            if (q->head >= q->size) {
                q->head = q->tail = 0;
            }
            vgpu_queue_stop_locked(s, q, VGPU_ERR_BAD_RING,
                                   "bad ring configuration");
        }
    } else if (!enable && q->enabled) {
        trace_vgpu_queue_disable(q->idx);
        q->enabled = false;
        q->stopped = false;
        q->hold = false;
        vgpu_inject_disarm_locked(q);
        vgpu_queue_abort_locked(q, VGPU_ERR_ABORTED);
    } else if (enable && (val & VGPU_QCTRL_RESUME) && q->stopped) {
        q->stopped = false;
        q->error = 0;
        trace_vgpu_queue_resume(q->idx, q->head);
        if (!vgpu_ring_config_ok(q)) {
            vgpu_queue_stop_locked(s, q, VGPU_ERR_BAD_RING,
                                   "bad ring configuration");
        }
    }
    if (enable && q->enabled && q->hold != !!(val & VGPU_QCTRL_HOLD)) {
        q->hold = val & VGPU_QCTRL_HOLD;
        trace_vgpu_queue_hold(q->idx, q->hold, q->head);
        /* an acquire waiting on this queue gives way */
        vgpu_sem_wake_locked(s);
    }
    vgpu_queue_kick_locked(q);
}

uint64_t vgpu_queue_read_locked(VGPUQueue *q, hwaddr reg, bool *ok)
{
    switch (reg) {
    case VGPU_Q_RING_LO:
        return (uint32_t)q->ring_base;
    case VGPU_Q_RING_HI:
        return q->ring_base >> 32;
    case VGPU_Q_CPL_LO:
        return (uint32_t)q->cpl_base;
    case VGPU_Q_CPL_HI:
        return q->cpl_base >> 32;
    case VGPU_Q_SIZE:
        return q->size;
    case VGPU_Q_CONTROL:
        if (!q->enabled) {
            return 0;
        }
        return VGPU_QCTRL_ENABLE | (q->hold ? VGPU_QCTRL_HOLD : 0) |
               (q->user ? VGPU_QCTRL_USER |
                q->user_asid << VGPU_QCTRL_ASID_SHIFT : 0);
    case VGPU_Q_STATUS:
        return vgpu_queue_status(q);
    case VGPU_Q_HEAD:
        return q->head;
    case VGPU_Q_TAIL:
        return q->tail;
    case VGPU_Q_DOORBELL:
        return 0;
    case VGPU_Q_ERROR:
        return q->error;
    case VGPU_Q_ERROR_INDEX:
        return q->error_index;
    case VGPU_Q_COMPLETED_LO:
        return (uint32_t)q->completed;
    case VGPU_Q_COMPLETED_HI:
        return q->completed >> 32;
    case VGPU_Q_PRIORITY:
        return q->priority;
    case VGPU_Q_CSB:
        return (uint32_t)(q->csb >> VGPU_PAGE_SHIFT);
    default:
        *ok = false;
        return 0;
    }
}

/* Returns false for an offset that is no register (or a read-only one). */
bool vgpu_queue_write_locked(VGPUState *s, VGPUQueue *q, hwaddr reg,
                             uint32_t val)
{
    switch (reg) {
    case VGPU_Q_RING_LO:
    case VGPU_Q_RING_HI:
    case VGPU_Q_CPL_LO:
    case VGPU_Q_CPL_HI:
    case VGPU_Q_SIZE:
        if (q->enabled) {
            qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: ring register "
                          "0x%x written while enabled: ignored\n", q->idx,
                          (unsigned)reg);
            trace_vgpu_guest_ub("ring register written while enabled", reg,
                                val);
            vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, q->idx, 0xffff);
            return true;
        }
        switch (reg) {
        case VGPU_Q_RING_LO:
            vgpu_set_lo(&q->ring_base, val);
            break;
        case VGPU_Q_RING_HI:
            vgpu_set_hi(&q->ring_base, val);
            break;
        case VGPU_Q_CPL_LO:
            vgpu_set_lo(&q->cpl_base, val);
            break;
        case VGPU_Q_CPL_HI:
            vgpu_set_hi(&q->cpl_base, val);
            break;
        default:
            q->size = val;
            break;
        }
        return true;
    case VGPU_Q_HEAD:
    case VGPU_Q_COMPLETED_LO:
    case VGPU_Q_COMPLETED_HI:
        /* the start of an enable with RESTORE ("Swapping queues") */
        if (q->enabled) {
            qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: progress "
                          "register 0x%x written while enabled: ignored\n",
                          q->idx, (unsigned)reg);
            trace_vgpu_guest_ub("progress register written while enabled",
                                reg, val);
            vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, q->idx, 0xffff);
            return true;
        }
        if (reg == VGPU_Q_HEAD) {
            q->head = val;
        } else if (reg == VGPU_Q_COMPLETED_LO) {
            vgpu_set_lo(&q->completed, val);
        } else {
            vgpu_set_hi(&q->completed, val);
        }
        return true;
    case VGPU_Q_CONTROL:
        vgpu_queue_control_locked(s, q, val);
        return true;
    case VGPU_Q_DOORBELL:
        vgpu_queue_doorbell_locked(s, q, val);
        return true;
    case VGPU_Q_CSB:
        if (q->enabled) {
            trace_vgpu_guest_ub("CSB written while enabled", reg, val);
            vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, q->idx, 0xffff);
            return true;
        }
        q->csb = (uint64_t)val << VGPU_PAGE_SHIFT;
        return true;
    case VGPU_Q_PRIORITY:
        /* SMs read it at their next claim: nothing to wake */
        if (val > VGPU_QPRIO_REALTIME) {
            trace_vgpu_guest_ub("PRIORITY above REALTIME", reg, val);
            val = VGPU_QPRIO_REALTIME;
        }
        trace_vgpu_queue_priority(q->idx, val);
        q->priority = val;
        return true;
    default:
        return false;
    }
}
