/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpu-pci VM state changes and migration (vgpu-pci.c registers both
 * with QEMU): the device quiesces when the VM stops, so that no command
 * is ever in flight in a saved state, and the VMState of its registers
 * and queues, with subsections for what differs from the reset values.
 *
 * Saved contexts (the "Context save" format of vgpu_hw.h, version 2 since
 * per-lane call depths) are not part of the stream: they live in guest
 * memory, in the queues' context-save buffers, and the core checks each
 * one when it resumes it (magic, version, sizes, every field), so a state
 * of another version is refused with BAD_CONTEXT, never read with the
 * wrong layout.  The stream carries only CSB_SLOT, checked in post_load;
 * a slot a guest sized for an older, smaller layout only means that a
 * launch whose state does not fit goes on unpreempted (vgpu_job_save).
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "hw/pci/pci.h"
#include "hw/pci/msix.h"
#include "migration/vmstate.h"
#include "sysemu/runstate.h"
#include "vgpu-pci.h"

void vgpu_vm_state_change(void *opaque, bool running, RunState state)
{
    VGPUState *s = opaque;
    uint32_t i;

    qemu_mutex_lock(&s->lock);
    s->paused = !running;
    if (running) {
        for (i = 0; i < s->nqueues; i++) {
            vgpu_queue_kick_locked(&s->queues[i]);
        }
    } else {
        /*
         * Nothing may touch guest memory while the VM is stopped: let the
         * command in flight finish (the watchdog bounds the wait to
         * VGPU_MAX_WDOG_MS), or when QEMU shuts down, abort it.
         */
        if (state == RUN_STATE_SHUTDOWN) {
            for (i = 0; i < s->nqueues; i++) {
                vgpu_queue_abort_locked(&s->queues[i], VGPU_ERR_ABORTED);
            }
        }
        /* a waiting semaphore acquire gives way: HEAD stays on it */
        vgpu_sem_wake_locked(s);
        vgpu_wait_idle_locked(s);
    }
    qemu_mutex_unlock(&s->lock);
}

static int vgpu_pre_save(void *opaque)
{
    VGPUState *s = opaque;
    int ret = 0;

    qemu_mutex_lock(&s->lock);
    if (vgpu_busy_locked(s)) {
        /* Cannot happen: the VM is stopped and the device quiesced. */
        error_report("vgpu: cannot save state while a command executes");
        ret = -EBUSY;
    }
    qemu_mutex_unlock(&s->lock);
    return ret;
}

static int vgpu_post_load(void *opaque, int version_id)
{
    VGPUState *s = opaque;
    uint32_t i;

    qemu_mutex_lock(&s->lock);
    if (s->csb_slot % VGPU_PAGE_SIZE ||
        s->timeslice_us > VGPU_MAX_TIMESLICE_US) {
        qemu_mutex_unlock(&s->lock);
        return -EINVAL;
    }
    for (i = 0; i < s->nqueues; i++) {
        VGPUQueue *q = &s->queues[i];

        if (q->size > VGPU_RING_MAX || q->priority > VGPU_QPRIO_REALTIME ||
            q->user_asid > VGPU_QCTRL_ASID_MASK ||
            q->csb % VGPU_PAGE_SIZE ||
            (q->size && (q->head >= q->size || q->tail >= q->size))) {
            qemu_mutex_unlock(&s->lock);
            return -EINVAL;
        }
        /* an acquire at HEAD waits afresh (its timeout starts again) */
        q->yielded_ns = 0;
        vgpu_queue_kick_locked(q);
    }
    qemu_mutex_unlock(&s->lock);
    vgpu_tlb_flush_all(s);
    return 0;
}

/*
 * The priority travels in a subsection, sent only when it is not the
 * reset value: a stream without it loads into NORMAL.
 */
static bool vgpu_queue_priority_needed(void *opaque)
{
    VGPUQueue *q = opaque;

    return q->priority != VGPU_QPRIO_NORMAL;
}

static int vgpu_queue_pre_load(void *opaque)
{
    VGPUQueue *q = opaque;

    q->priority = VGPU_QPRIO_NORMAL;
    q->csb = 0;
    return 0;
}

/* The context-save buffer, likewise, when there is one. */
static bool vgpu_queue_csb_needed(void *opaque)
{
    VGPUQueue *q = opaque;

    return q->csb != 0;
}

static const VMStateDescription vmstate_vgpu_queue_csb = {
    .name = "vgpu-pci/queue/csb",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vgpu_queue_csb_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(csb, VGPUQueue),
        VMSTATE_END_OF_LIST()
    },
};

static bool vgpu_queue_user_needed(void *opaque)
{
    VGPUQueue *q = opaque;

    return q->user;
}

static bool vgpu_queue_hold_needed(void *opaque)
{
    VGPUQueue *q = opaque;

    return q->hold;
}

/* VGPU_QCTRL_HOLD: a queue the driver is taking off its hardware queue */
static const VMStateDescription vmstate_vgpu_queue_hold = {
    .name = "vgpu-pci/queue/hold",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vgpu_queue_hold_needed,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(hold, VGPUQueue),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_vgpu_queue_user = {
    .name = "vgpu-pci/queue/user",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vgpu_queue_user_needed,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(user, VGPUQueue),
        VMSTATE_UINT32(user_asid, VGPUQueue),
        VMSTATE_END_OF_LIST()
    },
};

static bool vgpu_csb_slot_needed(void *opaque)
{
    VGPUState *s = opaque;

    return s->csb_slot || s->preemptions;
}

static const VMStateDescription vmstate_vgpu_preempt = {
    .name = "vgpu-pci/preempt",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vgpu_csb_slot_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(csb_slot, VGPUState),
        VMSTATE_UINT32(preemptions, VGPUState),
        VMSTATE_END_OF_LIST()
    },
};

/* TIMESLICE_US, likewise, when the guest changed it */
static bool vgpu_timeslice_needed(void *opaque)
{
    VGPUState *s = opaque;

    return s->timeslice_us != s->timeslice_prop;
}

static const VMStateDescription vmstate_vgpu_timeslice = {
    .name = "vgpu-pci/timeslice",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vgpu_timeslice_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(timeslice_us, VGPUState),
        VMSTATE_END_OF_LIST()
    },
};

static int vgpu_pre_load(void *opaque)
{
    VGPUState *s = opaque;

    s->timeslice_us = s->timeslice_prop;
    return 0;
}

static const VMStateDescription vmstate_vgpu_queue_priority = {
    .name = "vgpu-pci/queue/priority",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = vgpu_queue_priority_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(priority, VGPUQueue),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_vgpu_queue = {
    .name = "vgpu-pci/queue",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = vgpu_queue_pre_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(ring_base, VGPUQueue),
        VMSTATE_UINT64(cpl_base, VGPUQueue),
        VMSTATE_UINT32(size, VGPUQueue),
        VMSTATE_UINT32(head, VGPUQueue),
        VMSTATE_UINT32(tail, VGPUQueue),
        VMSTATE_BOOL(enabled, VGPUQueue),
        VMSTATE_BOOL(stopped, VGPUQueue),
        VMSTATE_UINT32(error, VGPUQueue),
        VMSTATE_UINT32(error_index, VGPUQueue),
        VMSTATE_UINT64(completed, VGPUQueue),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_vgpu_queue_priority,
        &vmstate_vgpu_queue_csb,
        &vmstate_vgpu_queue_user,
        &vmstate_vgpu_queue_hold,
        NULL
    },
};

const VMStateDescription vmstate_vgpu = {
    .name = TYPE_VGPU_PCI,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = vgpu_pre_save,
    .pre_load = vgpu_pre_load,
    .post_load = vgpu_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, VGPUState),
        VMSTATE_MSIX(parent_obj, VGPUState),
        VMSTATE_UINT32(irq_status, VGPUState),
        VMSTATE_UINT32(irq_mask, VGPUState),
        VMSTATE_UINT64(as_base, VGPUState),
        VMSTATE_UINT32(as_count, VGPUState),
        VMSTATE_UINT32(wdog_ms, VGPUState),
        VMSTATE_UINT32(err_count, VGPUState),
        VMSTATE_UINT32(err_last, VGPUState),
        VMSTATE_UINT32(err_info, VGPUState),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(queues, VGPUState, nqueues,
                                             vmstate_vgpu_queue, VGPUQueue),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_vgpu_preempt,
        &vmstate_vgpu_timeslice,
        NULL
    },
};
