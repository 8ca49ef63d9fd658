/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU: a virtual GPU as a PCIe device around the vGPU execution core.
 *
 * Copyright (c) 2025 the vGPU authors
 *
 * The interface the guest sees (PCI IDs, BAR0 registers, command and
 * completion formats, page tables) is uapi/vgpu_hw.h, section "Device
 * interface"; docs/device.md explains it.  This file is the PCI function:
 * BAR0 registers, interrupts and reset (a queue's registers are
 * vgpu-qregs.c's).  vgpu-migration.c holds the migration state,
 * vgpu-queue.c runs the command rings, vgpu-mmu.c does DMA and the GPU
 * MMU.
 *
 * Usage: -device vgpu-pci[,model=NAME][,sms=N][,smem=BYTES][,queues=N]
 *                        [,threads=N]
 *
 * Properties:
 *   model=NAME  a preset of the SMs' shape (CAP_MODEL, uapi "Device
 *               models"): "vgpu" (the default) is 4 SMs of 228 KiB shared
 *               memory, all of which one CTA may use, reported as one CTA
 *               and 32 warps per SM; "h100" is the H100 SXM5: 132 SMs of
 *               228 KiB of which a CTA may use 227 KiB, 32 CTAs and 64 warps
 *               (2048 threads) per SM.  Both: 64K registers per SM,
 *               clusters of 8 CTAs portable, 16 non-portable.  sms= and
 *               smem= given with model= override the preset's value, and
 *               the rest follows from them (with h100, a CTA may use smem
 *               less 1 KiB); the per-SM occupancy limits come from the
 *               model only.  Any other name fails realize.
 *   sms=N       SMs the device reports (CAP_SMS, SR_NSMID), 1..256
 *               (VGPU_SMS_MAX); 0 (the default): the model's, 4 or 132.
 *               SR_SMID of a CTA is the host thread that runs it (below
 *               threads=, so below sms=).
 *   smem=BYTES  shared memory per SM (CAP_SMEM), 1 KiB..1 MiB (h100: 2 KiB
 *               ..1 MiB); 0 (the default): the model's, 228 KiB.  A launch
 *               may use at most CAP_SMEM_CTA per CTA: smem, or with h100
 *               smem less 1 KiB.
 *   queues=N    hardware command queues, 1..64 (VGPU_QUEUES_MAX), default
 *               4.  Each has its own ring and thread; queues run
 *               concurrently.
 *   threads=N   host threads that run SMs, 1..sms, default 1 (for every
 *               model: a host resource, not the GPU's shape).  With N > 1
 *               the CTAs of one launch run in parallel on N threads; each
 *               has a context-save slot (CAP_THREADS slots).
 *
 * Interrupts: MSI-X vector 0 for completions, vector 1 for errors; INTx
 * when MSI-X is off.  Reset (CONTROL.RESET, PCI FLR or system reset) aborts
 * the commands in flight without writing their completions and returns
 * every register to its power-on value.
 *
 * Migration: registers and queue state are in the VMState (a queue's
 * priority in a subsection, when not NORMAL).  The device quiesces when
 * the VM stops (a command in flight finishes first; the watchdog, at most
 * VGPU_MAX_WDOG_MS, bounds how long that takes; at shutdown it is aborted;
 * a waiting semaphore acquire gives way and stays at HEAD), so no command
 * is ever in flight in a saved state; queues carry on from their heads
 * after loading (vgpu-migration.c).
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/pci/pci.h"
#include "hw/pci/pcie.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "migration/blocker.h"
#include "migration/vmstate.h"
#include "sysemu/runstate.h"
#include "vgpu-pci.h"
#include "trace.h"

_Static_assert(sizeof(struct vgpu_completion) % 8 == 0, "completion size");
_Static_assert(VGPU_REG_QUEUE(VGPU_MAX_QUEUES) <= VGPU_BAR0_SIZE,
               "queue registers fit BAR0");

/* ---- interrupts ---- */

/*
 * Signal the newly raised @bits: MSI-X messages for the unmasked ones (a
 * completion on each vector of @vecs, VGPU_CMD_F_VEC), or the INTx level
 * for the whole status.  BQL held.
 */
static void vgpu_irq_update(VGPUState *s, uint32_t status, uint32_t mask,
                            uint32_t bits, uint64_t vecs)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (msix_enabled(pdev)) {
        if (bits & mask & (VGPU_IRQ_COMPLETION | VGPU_IRQ_USER)) {
            if (!vecs) {
                vecs = 1ull << VGPU_MSIX_VEC_COMPLETION;
            }
            while (vecs) {
                unsigned v = ctz64(vecs);

                vecs &= vecs - 1;
                trace_vgpu_irq_msix(v);
                msix_notify(pdev, v);
            }
        }
        if (bits & mask & VGPU_IRQ_ERROR) {
            trace_vgpu_irq_msix(VGPU_MSIX_VEC_ERROR);
            msix_notify(pdev, VGPU_MSIX_VEC_ERROR);
        }
        pci_set_irq(pdev, 0);
    } else {
        trace_vgpu_irq_intx(!!(status & mask));
        pci_set_irq(pdev, !!(status & mask));
    }
}

/* Bottom half: deliver what device threads raised.  BQL held. */
static void vgpu_irq_bh(void *opaque)
{
    VGPUState *s = opaque;
    uint32_t bits, status, mask;
    uint64_t vecs;

    qemu_mutex_lock(&s->lock);
    bits = s->irq_pending;
    vecs = s->irq_pending_vecs;
    s->irq_pending = 0;
    s->irq_pending_vecs = 0;
    s->irq_status |= bits;
    status = s->irq_status;
    mask = s->irq_mask;
    qemu_mutex_unlock(&s->lock);
    vgpu_irq_update(s, status, mask, bits, vecs);
}

/*
 * Any thread, s->lock held.  Bits that IRQ_MASK holds back signal
 * nothing: they go straight into IRQ_STATUS, with no bottom half, and an
 * IRQ_MASK write that unmasks them delivers them (both under s->lock).
 * The bottom half needs the BQL, which single-threaded TCG takes from the
 * vCPU by kicking it out of guest code: ~40 us of the guest's time for
 * each release of a user queue whose interrupt the driver masks while no
 * one waits (make bench-guest).
 */
void vgpu_raise_irq_vec_locked(VGPUState *s, uint32_t bits, uint32_t vec)
{
    uint64_t vecs = 0;

    trace_vgpu_irq_raise(bits);
    if (!(bits & s->irq_mask)) {
        s->irq_status |= bits;
        return;
    }
    if (bits & (VGPU_IRQ_COMPLETION | VGPU_IRQ_USER)) {
        assert(vec < s->msix_vectors);
        vecs = 1ull << vec;
    }
    if (qemu_mutex_iothread_locked()) {
        /*
         * An inline run, in the vCPU thread that rang a doorbell: signal
         * now, with what the bottom half has not delivered yet.
         */
        bits |= s->irq_pending;
        vecs |= s->irq_pending_vecs;
        s->irq_pending = 0;
        s->irq_pending_vecs = 0;
        s->irq_status |= bits;
        vgpu_irq_update(s, s->irq_status, s->irq_mask, bits, vecs);
        return;
    }
    s->irq_pending |= bits;
    s->irq_pending_vecs |= vecs;
    qemu_bh_schedule(s->irq_bh);
}

/* The same, a completion on vector 0 (or no completion). */
void vgpu_raise_irq_locked(VGPUState *s, uint32_t bits)
{
    vgpu_raise_irq_vec_locked(s, bits, VGPU_MSIX_VEC_COMPLETION);
}

/* Record a guest error in ERR_COUNT/ERR_LAST/ERR_INFO.  s->lock held. */
void vgpu_note_error_locked(VGPUState *s, uint32_t err, uint32_t queue,
                            uint32_t index)
{
    s->err_count++;
    s->err_last = err;
    s->err_info = (queue & 0xffff) << 16 | (index & 0xffff);
}

static void G_GNUC_PRINTF(2, 3)
vgpu_bad_register(VGPUState *s, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    qemu_log_mask(LOG_GUEST_ERROR, "vgpu: %s\n", msg);
    qemu_mutex_lock(&s->lock);
    vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, 0xffff, 0xffff);
    qemu_mutex_unlock(&s->lock);
}

/* ---- reset ---- */

/*
 * Abort everything in flight, wait until no command executes, and return
 * every register to its power-on value.  BQL held.  Device threads never
 * take the BQL, so waiting for them here cannot deadlock; the wait is as
 * long as an aborted launch takes to notice (at most one budget slice of
 * the core, 1024 warp-instructions).
 */
static void vgpu_reset_state(VGPUState *s)
{
    uint32_t i;

    qemu_mutex_lock(&s->lock);
    for (i = 0; i < s->nqueues; i++) {
        VGPUQueue *q = &s->queues[i];

        /* Disabled before waiting, so that no queue starts anything new. */
        q->gen++;
        vgpu_queue_abort_locked(q, VGPU_ERR_ABORTED);
        q->ring_base = q->cpl_base = 0;
        q->size = q->head = q->tail = 0;
        q->enabled = q->stopped = false;
        q->user = false;
        q->user_asid = 0;
        q->hold = false;
        q->error = q->error_index = 0;
        q->completed = 0;
        q->priority = VGPU_QPRIO_NORMAL;
        q->yielded_ns = 0;
        q->csb = 0;
        vgpu_inject_disarm_locked(q);
    }
    vgpu_wait_idle_locked(s);
    s->inj_arg = 0;
    s->inj_sel = 0;
    s->csb_slot = 0;
    s->preemptions = 0;
    s->irq_status = s->irq_mask = s->irq_pending = 0;
    s->irq_pending_vecs = 0;
    s->as_base = 0;
    s->as_count = 0;
    s->wdog_ms = 0;
    s->timeslice_us = s->timeslice_prop;
    s->err_count = s->err_last = s->err_info = 0;
    qemu_mutex_unlock(&s->lock);
    vgpu_tlb_flush_all(s);
    qemu_bh_cancel(s->irq_bh);
    pci_set_irq(PCI_DEVICE(s), 0);
    trace_vgpu_reset();
}

static void vgpu_qdev_reset(DeviceState *dev)
{
    vgpu_reset_state(VGPU_PCI(dev));
}

/* ---- registers (the queues': vgpu-qregs.c) ---- */

static uint64_t vgpu_mmio_read(void *opaque, hwaddr addr, unsigned size)
{
    VGPUState *s = opaque;
    uint64_t val = 0;
    bool ok = true;

    if (size != 4 || addr % 4) {
        trace_vgpu_mmio_bad_access("read", addr, size);
        vgpu_bad_register(s, "%u-byte read at 0x%" HWADDR_PRIx ": only "
                          "aligned 32-bit accesses", size, addr);
        return 0;
    }

    qemu_mutex_lock(&s->lock);
    switch (addr) {
    case VGPU_REG_ID:
        val = VGPU_ID_MAGIC;
        break;
    case VGPU_REG_VERSION:
        val = VGPU_VERSION_MAJOR << 16 | VGPU_VERSION_MINOR;
        break;
    case VGPU_REG_CAP_SMS:
        val = s->sms;
        break;
    case VGPU_REG_CAP_SMEM:
        val = s->smem;
        break;
    case VGPU_REG_CAP_MAX_THREADS:
        val = VGPU_MAX_THREADS_PER_CTA;
        break;
    case VGPU_REG_CAP_BARRIERS:
        val = VGPU_NUM_NAMED_BARRIERS;
        break;
    case VGPU_REG_CAP_FEATURES:
        val = VGPU_FEAT_MMU | VGPU_FEAT_RANDOM_SCHED | VGPU_FEAT_MBARRIER |
              VGPU_FEAT_TMA | VGPU_FEAT_CLUSTERS | VGPU_FEAT_SEMAPHORES |
              VGPU_FEAT_PREEMPT | VGPU_FEAT_NULL_PTE | VGPU_FEAT_USER_QUEUES |
              VGPU_FEAT_USER_IRQ | VGPU_FEAT_QUEUE_SWAP |
              VGPU_FEAT_DEVICE_LAUNCH | VGPU_FEAT_IRQ_VECTORS |
              (s->inject ? VGPU_FEAT_INJECT : 0);
        break;
    case VGPU_REG_CAP_QUEUES:
        val = s->nqueues;
        break;
    case VGPU_REG_CAP_WARP_SIZE:
        val = VGPU_WARP_SIZE;
        break;
    case VGPU_REG_CAP_MAX_PARAM:
        val = VGPU_MAX_PARAM_BYTES;
        break;
    case VGPU_REG_CAP_VA_BITS:
        val = VGPU_VA_BITS;
        break;
    case VGPU_REG_CAP_MAX_CODE:
        val = VGPU_MAX_CODE_BYTES;
        break;
    case VGPU_REG_CAP_AS_MAX:
        val = VGPU_AS_MAX;
        break;
    case VGPU_REG_CAP_RING_MAX:
        val = VGPU_RING_MAX;
        break;
    case VGPU_REG_CAP_THREADS:
        val = s->nthreads;
        break;
    case VGPU_REG_CAP_MODEL:
        val = s->model;
        break;
    case VGPU_REG_CAP_SMEM_CTA:
        val = s->smem_cta;
        break;
    case VGPU_REG_CAP_CTAS_PER_SM:
        val = s->ctas_per_sm;
        break;
    case VGPU_REG_CAP_WARPS_PER_SM:
        val = s->warps_per_sm;
        break;
    case VGPU_REG_CAP_REGS_PER_SM:
        val = s->regs_per_sm;
        break;
    case VGPU_REG_CAP_CLUSTER:
        val = s->cluster;
        break;
    case VGPU_REG_CAP_MSIX_VECTORS:
        val = s->msix_vectors;
        break;
    case VGPU_REG_CAP_CLUSTER_MAX:
        val = s->cluster_max;
        break;
    case VGPU_REG_CONTROL:
        val = 0;
        break;
    case VGPU_REG_STATUS:
        val = vgpu_busy_locked(s) ? VGPU_STATUS_BUSY : 0;
        break;
    case VGPU_REG_WDOG_MS:
        val = s->wdog_ms;
        break;
    case VGPU_REG_CSB_SLOT:
        val = s->csb_slot;
        break;
    case VGPU_REG_PREEMPTIONS:
        val = s->preemptions;
        break;
    case VGPU_REG_PREEMPT:
        val = 0;    /* write-only */
        break;
    case VGPU_REG_TIMESLICE_US:
        val = s->timeslice_us;
        break;
    case VGPU_REG_INJECT:
    case VGPU_REG_INJECT_ARG_LO:
    case VGPU_REG_INJECT_ARG_HI:
        val = vgpu_inject_read_locked(s, addr);
        break;
    case VGPU_REG_IRQ_STATUS:
        val = s->irq_status;
        break;
    case VGPU_REG_IRQ_MASK:
        val = s->irq_mask;
        break;
    case VGPU_REG_IRQ_ACK:
        val = 0;
        break;
    case VGPU_REG_AS_BASE_LO:
        val = (uint32_t)s->as_base;
        break;
    case VGPU_REG_AS_BASE_HI:
        val = s->as_base >> 32;
        break;
    case VGPU_REG_AS_COUNT:
        val = s->as_count;
        break;
    case VGPU_REG_ERR_COUNT:
        val = s->err_count;
        break;
    case VGPU_REG_ERR_LAST:
        val = s->err_last;
        break;
    case VGPU_REG_ERR_INFO:
        val = s->err_info;
        break;
    default:
        if (addr >= VGPU_REG_QUEUE_BASE &&
            addr < VGPU_REG_QUEUE(s->nqueues)) {
            VGPUQueue *q = &s->queues[(addr - VGPU_REG_QUEUE_BASE) /
                                      VGPU_REG_QUEUE_STRIDE];

            val = vgpu_queue_read_locked(q, (addr - VGPU_REG_QUEUE_BASE) %
                                         VGPU_REG_QUEUE_STRIDE, &ok);
        } else {
            ok = false;
        }
        break;
    }
    qemu_mutex_unlock(&s->lock);

    if (!ok) {
        trace_vgpu_mmio_bad_access("read", addr, size);
        vgpu_bad_register(s, "read of unknown register 0x%" HWADDR_PRIx,
                          addr);
        return 0;
    }
    trace_vgpu_mmio_read(addr, val);
    return val;
}

static void vgpu_mmio_write(void *opaque, hwaddr addr, uint64_t val64,
                            unsigned size)
{
    VGPUState *s = opaque;
    uint32_t val = val64, bits = 0, status = 0, mask = 0;
    bool ok = true, update = false;

    if (size != 4 || addr % 4) {
        trace_vgpu_mmio_bad_access("write", addr, size);
        vgpu_bad_register(s, "%u-byte write at 0x%" HWADDR_PRIx ": only "
                          "aligned 32-bit accesses", size, addr);
        return;
    }
    trace_vgpu_mmio_write(addr, val);

    if (addr == VGPU_REG_CONTROL) {
        if (val & ~VGPU_CTRL_RESET) {
            qemu_log_mask(LOG_GUEST_ERROR, "vgpu: reserved CONTROL bits "
                          "0x%x ignored\n", val & ~VGPU_CTRL_RESET);
        }
        if (val & VGPU_CTRL_RESET) {
            vgpu_reset_state(s);
        }
        return;
    }

    qemu_mutex_lock(&s->lock);
    switch (addr) {
    case VGPU_REG_PREEMPT:
        if (val >= s->nqueues) {
            trace_vgpu_guest_ub("PREEMPT of no queue", addr, val);
            vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, 0xffff, 0xffff);
            break;
        }
        vgpu_queue_preempt_locked(&s->queues[val]);
        break;
    case VGPU_REG_CSB_SLOT:
        if (val % VGPU_PAGE_SIZE) {
            trace_vgpu_guest_ub("CSB_SLOT not a page multiple", addr, val);
            vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, 0xffff, 0xffff);
            break;
        }
        s->csb_slot = val;
        break;
    case VGPU_REG_TIMESLICE_US:
        if (val > VGPU_MAX_TIMESLICE_US) {
            trace_vgpu_guest_ub("TIMESLICE_US above the maximum", addr, val);
            val = VGPU_MAX_TIMESLICE_US;
        }
        s->timeslice_us = val;
        /* the launches waiting for SMs look at their timeslices again */
        vgpu_queues_wake_locked(s);
        break;
    case VGPU_REG_INJECT:
    case VGPU_REG_INJECT_ARG_LO:
    case VGPU_REG_INJECT_ARG_HI:
        vgpu_inject_write_locked(s, addr, val);
        break;
    case VGPU_REG_WDOG_MS:
        if (val > VGPU_MAX_WDOG_MS) {
            trace_vgpu_guest_ub("WDOG_MS above the maximum", addr, val);
            val = VGPU_MAX_WDOG_MS;
        }
        s->wdog_ms = val;
        break;
    case VGPU_REG_IRQ_MASK:
        if (val & ~VGPU_IRQ_ALL) {
            trace_vgpu_guest_ub("reserved IRQ_MASK bits", addr, val);
        }
        /* Unmasking a pending interrupt delivers it. */
        bits = val & ~s->irq_mask & s->irq_status;
        s->irq_mask = val & VGPU_IRQ_ALL;
        update = true;
        break;
    case VGPU_REG_IRQ_ACK:
        s->irq_status &= ~val;
        update = true;
        break;
    case VGPU_REG_TLB_FLUSH:
        vgpu_tlb_flush_all(s);
        break;
    case VGPU_REG_AS_BASE_LO:
        vgpu_set_lo(&s->as_base, val);
        break;
    case VGPU_REG_AS_BASE_HI:
        vgpu_set_hi(&s->as_base, val);
        break;
    case VGPU_REG_AS_COUNT:
        if (val > VGPU_AS_MAX) {
            qemu_log_mask(LOG_GUEST_ERROR, "vgpu: AS_COUNT %u exceeds %u: "
                          "ignored\n", val, VGPU_AS_MAX);
            trace_vgpu_guest_ub("AS_COUNT too large", addr, val);
            vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, 0xffff, 0xffff);
            break;
        }
        s->as_count = val;
        break;
    default:
        if (addr >= VGPU_REG_QUEUE_BASE &&
            addr < VGPU_REG_QUEUE(s->nqueues)) {
            VGPUQueue *q = &s->queues[(addr - VGPU_REG_QUEUE_BASE) /
                                      VGPU_REG_QUEUE_STRIDE];

            ok = vgpu_queue_write_locked(s, q, (addr - VGPU_REG_QUEUE_BASE) %
                                         VGPU_REG_QUEUE_STRIDE, val);
        } else {
            ok = false;
        }
        break;
    }
    status = s->irq_status;
    mask = s->irq_mask;
    qemu_mutex_unlock(&s->lock);

    if (!ok) {
        trace_vgpu_mmio_bad_access("write", addr, size);
        vgpu_bad_register(s, "write of 0x%x to 0x%" HWADDR_PRIx
                          ": not a writable register", val, addr);
        return;
    }
    if (update) {
        vgpu_irq_update(s, status, mask, bits, 0);
    }
}

static const MemoryRegionOps vgpu_mmio_ops = {
    .read = vgpu_mmio_read,
    .write = vgpu_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    VGPU_MR_ANY_ACCESS,
};

/* ---- models: presets of the SMs' shape (property model=) ---- */

typedef struct VGPUModel {
    const char *name;
    uint32_t id;            /* VGPU_MODEL_* */
    uint32_t sms;           /* when sms= is 0 */
    uint32_t smem;          /* per SM, when smem= is 0 */
    uint32_t smem_reserved; /* per CTA: a CTA may use smem less this */
    uint32_t ctas_per_sm;
    uint32_t warps_per_sm;
    uint32_t regs_per_sm;
    uint32_t cluster;       /* portable cluster size */
    uint32_t cluster_max;   /* non-portable */
} VGPUModel;

static const VGPUModel vgpu_models[] = {
    {
        .name = "vgpu", .id = VGPU_MODEL_VGPU,
        .sms = 4, .smem = VGPU_DEFAULT_SMEM_PER_SM, .smem_reserved = 0,
        /* an SM runs one CTA at a time (a cluster's CTAs interleaved) */
        .ctas_per_sm = 1, .warps_per_sm = VGPU_MAX_WARPS_PER_CTA,
        .regs_per_sm = VGPU_DEFAULT_REGS_PER_SM,
        .cluster = VGPU_PORTABLE_CLUSTER_CTAS,
        .cluster_max = VGPU_MAX_CLUSTER_CTAS,
    },
    {
        .name = "h100", .id = VGPU_MODEL_H100,
        .sms = VGPU_H100_SMS, .smem = VGPU_H100_SMEM_PER_SM,
        .smem_reserved = VGPU_H100_SMEM_RESERVED,
        .ctas_per_sm = VGPU_H100_CTAS_PER_SM,
        .warps_per_sm = VGPU_H100_WARPS_PER_SM,
        .regs_per_sm = VGPU_DEFAULT_REGS_PER_SM,
        .cluster = VGPU_PORTABLE_CLUSTER_CTAS,
        .cluster_max = VGPU_MAX_CLUSTER_CTAS,
    },
};

/*
 * Take the model model= names and fill in what sms= and smem= left at 0;
 * the SMs' shape follows from the result.  Errors name the valid models.
 */
static bool vgpu_apply_model(VGPUState *s, Error **errp)
{
    const char *name = s->model_name ? s->model_name : "vgpu";
    const VGPUModel *m = NULL;
    uint32_t smem_min;

    for (size_t i = 0; i < ARRAY_SIZE(vgpu_models); i++) {
        if (!strcmp(name, vgpu_models[i].name)) {
            m = &vgpu_models[i];
            break;
        }
    }
    if (!m) {
        g_autoptr(GString) names = g_string_new(NULL);

        for (size_t i = 0; i < ARRAY_SIZE(vgpu_models); i++) {
            g_string_append_printf(names, "%s%s", i ? ", " : "",
                                   vgpu_models[i].name);
        }
        error_setg(errp, "vgpu-pci: model=%s: unknown model (valid: %s)",
                   name, names->str);
        return false;
    }
    if (!s->sms) {
        s->sms = m->sms;
    }
    if (!s->smem) {
        s->smem = m->smem;
    }
    smem_min = 1 * KiB + m->smem_reserved;
    if (s->sms > VGPU_MAX_SMS) {
        error_setg(errp, "vgpu-pci: sms=%u: must be 1..%u", s->sms,
                   VGPU_MAX_SMS);
        return false;
    }
    if (s->smem < smem_min || s->smem > 1 * MiB) {
        error_setg(errp, "vgpu-pci: smem=%u: must be %u KiB..1 MiB "
                   "(model=%s)", s->smem, (uint32_t)(smem_min / KiB),
                   m->name);
        return false;
    }
    s->model = m->id;
    s->smem_cta = s->smem - m->smem_reserved;
    s->ctas_per_sm = m->ctas_per_sm;
    s->warps_per_sm = m->warps_per_sm;
    s->regs_per_sm = m->regs_per_sm;
    s->cluster = m->cluster;
    s->cluster_max = m->cluster_max;
    return true;
}

/* ---- PCI function ---- */

static void vgpu_write_config(PCIDevice *pdev, uint32_t addr, uint32_t val,
                              int len)
{
    pci_default_write_config(pdev, addr, val, len);
    pcie_cap_flr_write_config(pdev, addr, val, len);
}

static void vgpu_realize(PCIDevice *pdev, Error **errp)
{
    VGPUState *s = VGPU_PCI(pdev);
    Error *err = NULL;

    if (!vgpu_apply_model(s, errp)) {
        return;
    }
    if (s->nqueues < 1 || s->nqueues > VGPU_MAX_QUEUES) {
        error_setg(errp, "vgpu-pci: queues=%u: must be 1..%u", s->nqueues,
                   VGPU_MAX_QUEUES);
        return;
    }
    if (s->nthreads < 1 || s->nthreads > s->sms) {
        error_setg(errp, "vgpu-pci: threads=%u: must be 1..sms (%u)",
                   s->nthreads, s->sms);
        return;
    }
    if (s->timeslice_prop > VGPU_MAX_TIMESLICE_US) {
        error_setg(errp, "vgpu-pci: timeslice-us=%u: must be 0..%u",
                   s->timeslice_prop, VGPU_MAX_TIMESLICE_US);
        return;
    }
    s->timeslice_us = s->timeslice_prop;
    if (s->msix_vectors < VGPU_MSIX_VECTORS_MIN ||
        s->msix_vectors > VGPU_MSIX_VECTORS_MAX) {
        error_setg(errp, "vgpu-pci: msix-vectors=%u: must be %u..%u",
                   s->msix_vectors, VGPU_MSIX_VECTORS_MIN,
                   VGPU_MSIX_VECTORS_MAX);
        return;
    }
    if (s->inject) {
        /* the armed faults are test state, not device state: not migrated */
        error_setg(&s->migration_blocker,
                   "vgpu-pci: x-inject (fault injection) is on");
        if (migrate_add_blocker(s->migration_blocker, errp) < 0) {
            error_free(s->migration_blocker);
            s->migration_blocker = NULL;
            return;
        }
    }

    pci_config_set_interrupt_pin(pdev->config, 1);
    memory_region_init_io(&s->mmio, OBJECT(s), &vgpu_mmio_ops, s, "vgpu-mmio",
                          VGPU_BAR0_SIZE);
    pci_register_bar(pdev, 0, PCI_BASE_ADDRESS_SPACE_MEMORY, &s->mmio);

    pcie_endpoint_cap_init(pdev, 0x80);
    pcie_cap_flr_init(pdev);
    if (msix_init_exclusive_bar(pdev, s->msix_vectors, VGPU_MSIX_BAR,
                                &err)) {
        /* No MSI-X on this machine: INTx only. */
        warn_report_err(err);
    } else {
        for (uint32_t v = 0; v < s->msix_vectors; v++) {
            msix_vector_use(pdev, v);
        }
    }

    qemu_mutex_init(&s->lock);
    qemu_cond_init(&s->pool_cond);
    qemu_cond_init(&s->idle_cond);
    s->irq_bh = qemu_bh_new(vgpu_irq_bh, s);
    vgpu_userq_init(s);
    vgpu_queues_init(s);
    vgpu_inject_init(s);
    s->vmstate_change = qemu_add_vm_change_state_handler(vgpu_vm_state_change,
                                                         s);
}

static void vgpu_exit(PCIDevice *pdev)
{
    VGPUState *s = VGPU_PCI(pdev);

    qemu_del_vm_change_state_handler(s->vmstate_change);
    vgpu_queues_exit(s);
    vgpu_inject_exit(s);
    if (s->migration_blocker) {
        migrate_del_blocker(s->migration_blocker);
        error_free(s->migration_blocker);
        s->migration_blocker = NULL;
    }
    qemu_bh_delete(s->irq_bh);
    qemu_cond_destroy(&s->idle_cond);
    qemu_cond_destroy(&s->pool_cond);
    qemu_mutex_destroy(&s->lock);
    if (msix_present(pdev)) {
        msix_uninit_exclusive_bar(pdev);
    }
    pcie_cap_exit(pdev);
}

static Property vgpu_properties[] = {
    DEFINE_PROP_STRING("model", VGPUState, model_name),
    /* 0: the model's */
    DEFINE_PROP_UINT32("sms", VGPUState, sms, 0),
    DEFINE_PROP_UINT32("smem", VGPUState, smem, 0),
    DEFINE_PROP_UINT32("queues", VGPUState, nqueues, 4),
    DEFINE_PROP_UINT32("threads", VGPUState, nthreads, 1),
    DEFINE_PROP_UINT64("preempt-every", VGPUState, preempt_every, 0),
    DEFINE_PROP_UINT64("inline-budget", VGPUState, inline_budget,
                       VGPU_INLINE_BUDGET),
    DEFINE_PROP_UINT32("timeslice-us", VGPUState, timeslice_prop,
                       VGPU_DEFAULT_TIMESLICE_US),
    DEFINE_PROP_UINT32("msix-vectors", VGPUState, msix_vectors,
                       VGPU_MSIX_VECTORS_DEFAULT),
    DEFINE_PROP_BOOL("x-inject", VGPUState, inject, false),
    DEFINE_PROP_END_OF_LIST(),
};

static void vgpu_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);

    k->realize = vgpu_realize;
    k->exit = vgpu_exit;
    k->config_write = vgpu_write_config;
    k->vendor_id = VGPU_PCI_VENDOR_ID;
    k->device_id = VGPU_PCI_DEVICE_ID;
    k->revision = VGPU_PCI_REVISION;
    k->class_id = VGPU_PCI_CLASS;
    dc->desc = "vGPU virtual GPU (SM barrier hardware)";
    dc->reset = vgpu_qdev_reset;
    dc->vmsd = &vmstate_vgpu;
    device_class_set_props(dc, vgpu_properties);
    set_bit(DEVICE_CATEGORY_MISC, dc->categories);
}

static const TypeInfo vgpu_info = {
    .name = TYPE_VGPU_PCI,
    .parent = TYPE_PCI_DEVICE,
    .instance_size = sizeof(VGPUState),
    .class_init = vgpu_class_init,
    .interfaces = (InterfaceInfo[]) {
        { INTERFACE_PCIE_DEVICE },
        { },
    },
};

static void vgpu_register_types(void)
{
    type_register_static(&vgpu_info);
}

type_init(vgpu_register_types)
