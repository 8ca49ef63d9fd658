/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpu-pci user-mode queues (uapi/vgpu_hw.h, "User-mode queues"): the
 * doorbell BAR, one page per queue that a driver maps into the queue's
 * owner, and what the device enforces on commands nobody privileged has
 * read: the queue's own address space, no guest-physical accesses, no TLB
 * maintenance.  A garbage doorbell stops that queue only.
 */
#include "qemu/osdep.h"
#include "qemu/log.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

/*
 * The doorbell of @q: commands up to @tail are ready.  From BAR0's
 * VGPU_Q_DOORBELL or BAR4's VGPU_DB_TAIL, in the vCPU thread (BQL held),
 * which may run them (vgpu_queue_inline_locked: s->lock is dropped
 * meanwhile).  s->lock held.
 */
void vgpu_queue_doorbell_locked(VGPUState *s, VGPUQueue *q, uint32_t tail)
{
    if (q->enabled && q->user && tail >= q->size) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: user queue %u: doorbell %u "
                      "beyond its %u-entry ring: queue stopped\n", q->idx,
                      tail, q->size);
        trace_vgpu_guest_ub("user doorbell beyond the ring", q->idx, tail);
        if (!q->stopped) {
            vgpu_queue_stop_locked(s, q, VGPU_ERR_BAD_DOORBELL,
                                   "doorbell beyond the ring");
        }
        return;
    }
    if (!q->enabled || tail >= q->size) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: doorbell %u "
                      "ignored (%s)\n", q->idx, tail,
                      q->enabled ? "beyond the ring" : "queue disabled");
        trace_vgpu_guest_ub("doorbell ignored", q->idx, tail);
        vgpu_note_error_locked(s, VGPU_ERR_BAD_REGISTER, q->idx, tail);
        return;
    }
    trace_vgpu_doorbell(q->idx, tail);
    q->tail = tail;
    vgpu_queue_inline_locked(q);
}

/*
 * A command of a user-mode queue, as read from its ring (little-endian):
 * VGPU_ERR_BAD_COMMAND for what only the kernel may ask, else its address
 * space fields overwritten with the queue's @asid and VGPU_ERR_NONE.
 */
uint32_t vgpu_user_cmd_filter(uint8_t *cmd, uint32_t asid)
{
    struct vgpu_cmd_header hdr;
    uint32_t le_asid = cpu_to_le32(asid);
    size_t off;

    memcpy(&hdr, cmd, sizeof(hdr));
    if (le32_to_cpu(hdr.flags) & VGPU_CMD_F_FENCE_PHYS) {
        return VGPU_ERR_BAD_COMMAND;
    }
    switch (le32_to_cpu(hdr.opcode)) {
    case VGPU_CMD_LAUNCH:
        off = offsetof(struct vgpu_cmd_launch, asid);
        break;
    case VGPU_CMD_FENCE:
        off = offsetof(struct vgpu_cmd_fence, asid);
        break;
    case VGPU_CMD_SEM_ACQUIRE:
    case VGPU_CMD_SEM_RELEASE:
        off = offsetof(struct vgpu_cmd_sem, asid);
        break;
    case VGPU_CMD_TLB_INVALIDATE:
        return VGPU_ERR_BAD_COMMAND;
    default:
        return VGPU_ERR_NONE; /* NOP, or unknown: rejected as such */
    }
    memcpy(cmd + off, &le_asid, sizeof(le_asid));
    return VGPU_ERR_NONE;
}

/* ---- BAR4: doorbell pages ---- */

static uint64_t vgpu_db_read(void *opaque, hwaddr addr, unsigned size)
{
    VGPUState *s = opaque;
    uint32_t qi = addr / VGPU_DOORBELL_PAGE, off = addr % VGPU_DOORBELL_PAGE;
    uint64_t val = 0;
    VGPUQueue *q;

    if (size != 4 || addr % 4 || qi >= s->nqueues) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: doorbell BAR: %u-byte read at "
                      "0x%" HWADDR_PRIx " ignored\n", size, addr);
        return 0;
    }
    q = &s->queues[qi];
    qemu_mutex_lock(&s->lock);
    switch (off) {
    case VGPU_DB_TAIL:
        val = q->tail;
        break;
    case VGPU_DB_HEAD:
        val = q->head;
        break;
    case VGPU_DB_COMPLETED_LO:
        val = (uint32_t)q->completed;
        break;
    case VGPU_DB_COMPLETED_HI:
        val = q->completed >> 32;
        break;
    case VGPU_DB_STATUS:
        val = vgpu_queue_status(q);
        break;
    case VGPU_DB_ERROR:
        val = q->error;
        break;
    default:
        break;
    }
    qemu_mutex_unlock(&s->lock);
    return val;
}

static void vgpu_db_write(void *opaque, hwaddr addr, uint64_t val,
                          unsigned size)
{
    VGPUState *s = opaque;
    uint32_t qi = addr / VGPU_DOORBELL_PAGE, off = addr % VGPU_DOORBELL_PAGE;

    if (size != 4 || off != VGPU_DB_TAIL || qi >= s->nqueues) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: doorbell BAR: %u-byte write of "
                      "0x%" PRIx64 " at 0x%" HWADDR_PRIx " ignored\n", size,
                      val, addr);
        return;
    }
    qemu_mutex_lock(&s->lock);
    vgpu_queue_doorbell_locked(s, &s->queues[qi], val);
    qemu_mutex_unlock(&s->lock);
}

static const MemoryRegionOps vgpu_db_ops = {
    .read = vgpu_db_read,
    .write = vgpu_db_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    VGPU_MR_ANY_ACCESS,
};

void vgpu_userq_init(VGPUState *s)
{
    memory_region_init_io(&s->doorbells, OBJECT(s), &vgpu_db_ops, s,
                          "vgpu-doorbells",
                          VGPU_MAX_QUEUES * VGPU_DOORBELL_PAGE);
    pci_register_bar(PCI_DEVICE(s), VGPU_DOORBELL_BAR,
                     PCI_BASE_ADDRESS_SPACE_MEMORY, &s->doorbells);
}
