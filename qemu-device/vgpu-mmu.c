/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU PCIe device: DMA to guest RAM, the GPU MMU and the core's memory
 * callbacks.
 *
 * DMA goes through the PCI function's bus-master address space and only
 * ever reaches RAM: a target that is not directly accessible RAM (MMIO of
 * any device, this one included; unassigned space) is refused and becomes
 * a fault.  That keeps device threads, which run without the BQL, from
 * dispatching MMIO (which would take the BQL, and could deadlock against a
 * reset that waits for them under it).  Every access translates once,
 * under RCU, and uses the RAM that translation found: a second translation
 * (as address_space_write makes) could find MMIO when the guest turns bus
 * mastering off or moves a BAR in between, and take the BQL (the device
 * fuzzer found that deadlock: a worker waiting for the BQL, the main loop
 * holding it in a device reset that waits for the worker).  Reads copy
 * from that RAM; writes copy into it and then mark it written exactly as
 * QEMU's own DMA does (vgpu_ram_written: dirty tracking for migration and
 * display, TCG's translated code invalidated); atomics use host atomics on
 * it and mark the word the same way, and so do the 64-bit semaphore reads
 * and writes (one access each, never torn).  Writes used to map and unmap
 * the range (address_space_map) for that marking, which takes and drops a
 * reference on the RAM's owner: one atomic counter that every SM thread's
 * every store hit, which kept a 1024-CTA grid at 2x on 16 host threads
 * (a profile on the 16-core machine: 71% of the time in object_ref/unref).

 * Page tables (format in uapi/vgpu_hw.h): a four-level walk from the root
 * that the address-space table names, which ends early at a NULL entry of
 * level 1 or 2 (null pages over 2 MiB or 1 GiB).  Each thread has its own
 * small direct-mapped TLB of leaf entries (a NULL entry of level 1 or 2 is
 * cached for each page it translates); VGPU_CMD_TLB_INVALIDATE bumps
 * s->tlb_gen, and a TLB whose generation is stale empties itself at its
 * next lookup, so running launches see the invalidation too.
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "qemu/rcu.h"
#include "exec/memory.h"
#include "exec/ramblock.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

static AddressSpace *vgpu_as(VGPUState *s)
{
    return pci_get_address_space(PCI_DEVICE(s));
}

/*
 * Host pointer for [pa, pa + *plen) of guest RAM, shortened to what is
 * contiguous; NULL if @pa is not RAM.  Call under RCU.
 */
static void *vgpu_ram_ptr(VGPUState *s, uint64_t pa, hwaddr *plen,
                          bool is_write, MemoryRegion **pmr, hwaddr *pxlat)
{
    MemoryRegion *mr;
    hwaddr xlat;

    mr = address_space_translate(vgpu_as(s), pa, &xlat, plen, is_write,
                                 MEMTXATTRS_UNSPECIFIED);
    if (!memory_access_is_direct(mr, is_write) || !mr->ram_block) {
        return NULL;
    }
    if (pmr) {
        *pmr = mr;
        *pxlat = xlat;
    }
    return qemu_map_ram_ptr(mr->ram_block, xlat);
}

/*
 * [@xlat, @xlat + @len) of RAM region @mr (at host address @ram) was
 * written by the device: what
 * address_space_unmap() does after a DMA write (physmem.c's
 * invalidate_and_set_dirty(), reached through the one exported function
 * that calls it for a RAM pointer: the cache is only its argument).
 * Call under RCU, as the translation that found @mr.
 */
static void vgpu_ram_written(void *ram, MemoryRegion *mr, hwaddr xlat,
                             hwaddr len)
{
    MemoryRegionCache c = {
        .ptr = ram,
        .xlat = xlat,
        .len = len,
        .mrs.mr = mr,
        .is_write = true,
    };

    address_space_cache_invalidate(&c, 0, len);
}

bool vgpu_dma_read(VGPUState *s, uint64_t pa, void *buf, uint64_t len)
{
    uint8_t *p = buf;

    if (pa + len < pa) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr l = len;
        void *ram = vgpu_ram_ptr(s, pa, &l, false, NULL, NULL);

        if (!ram || !l) {
            trace_vgpu_dma_error("read", pa, len);
            return false;
        }
        if ((l == 8 || l == 16) && l == len && !(pa % l)) {
            vgpu_mem_get_whole(p, ram, l); /* an SM's load: whole */
        } else {
            memcpy(p, ram, l);
        }
        p += l;
        pa += l;
        len -= l;
    }
    return true;
}

bool vgpu_dma_write(VGPUState *s, uint64_t pa, const void *buf, uint64_t len)
{
    const uint8_t *p = buf;

    if (pa + len < pa) {
        return false;
    }
    RCU_READ_LOCK_GUARD();
    while (len) {
        hwaddr l = len, xlat;
        MemoryRegion *mr;
        void *ram = vgpu_ram_ptr(s, pa, &l, true, &mr, &xlat);

        if (!ram || !l) {
            trace_vgpu_dma_error("write", pa, len);
            return false;
        }
        if ((l == 8 || l == 16) && l == len && !(pa % l)) {
            vgpu_mem_put_whole(ram, p, l); /* an SM's store: whole */
        } else {
            memcpy(ram, p, l);
        }
        vgpu_ram_written(ram, mr, xlat, l);
        p += l;
        pa += l;
        len -= l;
    }
    return true;
}

/*
 * One 8-aligned 64-bit little-endian access at guest physical @pa, atomic
 * with respect to the vCPUs and the other device threads (a semaphore):
 * reads *@val, or writes it and marks the word dirty as the 32-bit
 * atomics do.  Returns false if @pa is not guest RAM.
 */
bool vgpu_dma_rw64(VGPUState *s, uint64_t pa, uint64_t *val, bool is_write)
{
    MemoryRegion *mr;
    hwaddr xlat, l = sizeof(*val);
    uint64_t *p;

    assert(!(pa % sizeof(*val)));
    RCU_READ_LOCK_GUARD();
    p = vgpu_ram_ptr(s, pa, &l, is_write, &mr, &xlat);
    if (!p || l < sizeof(*val)) {
        trace_vgpu_dma_error(is_write ? "write" : "read", pa, sizeof(*val));
        return false;
    }
    if (is_write) {
        qatomic_set_u64(p, cpu_to_le64(*val));
        vgpu_ram_written(p, mr, xlat, sizeof(*val));
    } else {
        *val = le64_to_cpu(qatomic_read_u64(p));
    }
    return true;
}

/* ---- GPU MMU ---- */

static int vgpu_mmu_fault(VGPUMMUCtx *ctx, uint64_t va, uint32_t acc,
                          uint32_t reason, uint32_t level)
{
    ctx->fault_va = va;
    ctx->fault_acc = acc;
    ctx->fault_reason = reason;
    ctx->fault_level = level;
    trace_vgpu_mmu_fault(ctx->asid, va, vgpu_mmu_access_name(acc),
                         vgpu_mmu_fault_name(reason), level);
    return -1;
}

void vgpu_mmu_ctx_bind(VGPUMMUCtx *ctx, VGPUState *s, uint32_t asid,
                       uint64_t root)
{
    if (ctx->s != s || ctx->asid != asid || ctx->root != root) {
        memset(ctx->tlb, 0, sizeof(ctx->tlb));
    }
    ctx->s = s;
    ctx->asid = asid;
    ctx->root = root;
    ctx->fault_reason = 0;
}

void vgpu_tlb_flush_all(VGPUState *s)
{
    qatomic_inc(&s->tlb_gen);
}

/*
 * Root table of address space @asid, from the address-space table.
 * Returns 0, or -1 with the fault in @fault.
 */
int vgpu_mmu_lookup_as(VGPUState *s, uint32_t asid, uint64_t *root,
                       VGPUMMUCtx *fault)
{
    uint64_t base, entry;
    uint32_t count;

    qemu_mutex_lock(&s->lock);
    base = s->as_base;
    count = s->as_count;
    qemu_mutex_unlock(&s->lock);

    /*
     * @fault may be the queue's live context: its asid must change only
     * with a fault, or vgpu_mmu_ctx_bind() would miss an address-space
     * switch and keep the previous space's TLB entries.
     */
    if (asid >= count) {
        fault->asid = asid;
        return vgpu_mmu_fault(fault, 0, VGPU_MMU_ACC_READ, VGPU_MMU_F_BAD_AS,
                              VGPU_PT_LEVELS);
    }
    if (!vgpu_dma_read(s, base + 8ull * asid, &entry, sizeof(entry))) {
        fault->asid = asid;
        return vgpu_mmu_fault(fault, 0, VGPU_MMU_ACC_READ,
                              VGPU_MMU_F_TABLE_ACCESS, VGPU_PT_LEVELS);
    }
    entry = le64_to_cpu(entry);
    if (!(entry & VGPU_PTE_VALID)) {
        fault->asid = asid;
        return vgpu_mmu_fault(fault, 0, VGPU_MMU_ACC_READ, VGPU_MMU_F_BAD_AS,
                              VGPU_PT_LEVELS);
    }
    if (entry & (VGPU_PTE_RSVD_MASK | VGPU_PTE_NULL | VGPU_PTE_READ |
                 VGPU_PTE_WRITE | VGPU_PTE_EXEC)) {
        fault->asid = asid;
        return vgpu_mmu_fault(fault, 0, VGPU_MMU_ACC_READ,
                              VGPU_MMU_F_RESERVED, VGPU_PT_LEVELS);
    }
    *root = entry & VGPU_PTE_ADDR_MASK;
    return 0;
}

static uint64_t vgpu_acc_perm(uint32_t acc)
{
    switch (acc) {
    case VGPU_MMU_ACC_READ:
        return VGPU_PTE_READ;
    case VGPU_MMU_ACC_WRITE:
        return VGPU_PTE_WRITE;
    case VGPU_MMU_ACC_EXEC:
        return VGPU_PTE_EXEC;
    default:
        return VGPU_PTE_READ | VGPU_PTE_WRITE;
    }
}

/* What vgpu_mmu_translate() gives for a VGPU_PTE_NULL page: no memory. */
#define VGPU_PA_NULL UINT64_MAX

/*
 * Translate @va for access @acc; the page's physical address in *@pa
 * (VGPU_PA_NULL for a NULL leaf: reads see zeros, writes go nowhere).
 * Returns 0, or -1 with the fault recorded in @ctx.
 */
static int vgpu_mmu_translate(VGPUMMUCtx *ctx, uint64_t va, uint32_t acc,
                              uint64_t *pa)
{
    VGPUState *s = ctx->s;
    uint64_t vpn = va >> VGPU_PAGE_SHIFT;
    uint32_t slot = vpn % VGPU_TLB_ENTRIES;
    uint32_t gen = qatomic_read(&s->tlb_gen);
    uint64_t pte, table;
    int level;

    if (va >> VGPU_VA_BITS) {
        return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_NONCANONICAL,
                              VGPU_PT_LEVELS - 1);
    }
    if (ctx->tlb_gen != gen) {
        memset(ctx->tlb, 0, sizeof(ctx->tlb));
        ctx->tlb_gen = gen;
    }
    if (ctx->tlb[slot].tag == ((vpn << 1) | 1)) {
        pte = ctx->tlb[slot].pte;
    } else {
        table = ctx->root;
        for (level = VGPU_PT_LEVELS - 1;; level--) {
            uint64_t ea = table + 8ull * VGPU_PT_INDEX(va, (uint64_t)level);

            if (!vgpu_dma_read(s, ea, &pte, sizeof(pte))) {
                return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_TABLE_ACCESS,
                                      level);
            }
            pte = le64_to_cpu(pte);
            if (!(pte & VGPU_PTE_VALID)) {
                return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_NOT_PRESENT,
                                      level);
            }
            /*
             * A NULL entry of level 1 or 2 (2 MiB, 1 GiB) ends the walk:
             * its region is null pages with its permissions.  Permission
             * bits without NULL above the leaves, and NULL at the root,
             * are reserved.
             */
            if ((pte & VGPU_PTE_RSVD_MASK) ||
                (level == VGPU_PT_LEVELS - 1 && (pte & VGPU_PTE_NULL)) ||
                (level && !(pte & VGPU_PTE_NULL) &&
                 (pte & (VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC)))) {
                return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_RESERVED,
                                      level);
            }
            if (!level || (pte & VGPU_PTE_NULL)) {
                break;
            }
            table = pte & VGPU_PTE_ADDR_MASK;
        }
        /* the TLB keeps the entry's level in its software bits */
        pte = (pte & ~VGPU_PTE_SW_MASK) | ((uint64_t)level << 4);
        ctx->tlb[slot].tag = (vpn << 1) | 1;
        ctx->tlb[slot].pte = pte;
    }
    if ((pte & vgpu_acc_perm(acc)) != vgpu_acc_perm(acc)) {
        return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_PERMISSION,
                              (pte & VGPU_PTE_SW_MASK) >> 4);
    }
    if (pte & VGPU_PTE_NULL) {
        *pa = VGPU_PA_NULL;
        return 0;
    }
    *pa = (pte & VGPU_PTE_ADDR_MASK) | (va & (VGPU_PAGE_SIZE - 1));
    return 0;
}

/*
 * Copy @len bytes between @buf and GPU virtual memory at @va, page by
 * page: acc VGPU_MMU_ACC_WRITE writes, READ or EXEC read.  Returns 0 or
 * -1 with the fault in @ctx.
 */
int vgpu_mmu_copy(VGPUMMUCtx *ctx, uint64_t va, void *buf, uint64_t len,
                  uint32_t acc)
{
    uint8_t *p = buf;

    while (len) {
        uint64_t l = MIN(len, VGPU_PAGE_SIZE - (va & (VGPU_PAGE_SIZE - 1)));
        uint64_t pa;
        bool ok;

        if (vgpu_mmu_translate(ctx, va, acc, &pa)) {
            return -1;
        }
        if (pa == VGPU_PA_NULL) {
            ok = true;
            if (acc != VGPU_MMU_ACC_WRITE) {
                memset(p, 0, l);
            }
        } else {
            ok = acc == VGPU_MMU_ACC_WRITE ? vgpu_dma_write(ctx->s, pa, p, l)
                                           : vgpu_dma_read(ctx->s, pa, p, l);
        }
        if (!ok) {
            return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_BUS, 0);
        }
        p += l;
        va += l;
        len -= l;
    }
    return 0;
}

/*
 * vgpu_dma_rw64() at GPU VA @va (8-aligned) for access @acc
 * (VGPU_MMU_ACC_READ or _WRITE).  Returns 0 or -1 with the fault in @ctx.
 */
int vgpu_mmu_rw64(VGPUMMUCtx *ctx, uint64_t va, uint64_t *val, uint32_t acc)
{
    uint64_t pa;

    if (vgpu_mmu_translate(ctx, va, acc, &pa)) {
        return -1;
    }
    if (pa == VGPU_PA_NULL) {
        if (acc != VGPU_MMU_ACC_WRITE) {
            *val = 0;
        }
        return 0;
    }
    if (!vgpu_dma_rw64(ctx->s, pa, val, acc == VGPU_MMU_ACC_WRITE)) {
        return vgpu_mmu_fault(ctx, va, acc, VGPU_MMU_F_BUS, 0);
    }
    return 0;
}

/*
 * Describe the fault in @ctx in an exception record whose code, addr and
 * msg the core (or the caller) may already have filled: the address, the
 * access, the reason and level go to addr and info[0..3], and the message
 * gains the MMU's reason.
 */
void vgpu_mmu_fault_record(const VGPUMMUCtx *ctx,
                           struct vgpu_exception_record *exc)
{
    if (ctx->fault_reason) {
        vgpu_exc_set_mmu_fault(exc, ctx->fault_va, ctx->fault_acc,
                               ctx->fault_reason, ctx->fault_level, ctx->asid);
    }
}

/* ---- the core's memory callbacks: opaque = VGPUMMUCtx of the thread ---- */

static int vgpu_mem_read(void *opaque, uint64_t va, void *buf, uint32_t len)
{
    return vgpu_mmu_copy(opaque, va, buf, len, VGPU_MMU_ACC_READ);
}

static int vgpu_mem_write(void *opaque, uint64_t va, const void *buf,
                          uint32_t len)
{
    return vgpu_mmu_copy(opaque, va, (void *)buf, len, VGPU_MMU_ACC_WRITE);
}

static int vgpu_mem_atomic(void *opaque, uint64_t va, unsigned size,
                           enum vgpu_atomic_op op, uint64_t val, uint64_t cmp,
                           uint64_t *old)
{
    VGPUMMUCtx *ctx = opaque;
    MemoryRegion *mr;
    void *p;
    hwaddr xlat, l = size;
    uint64_t pa;

    if (vgpu_mmu_translate(ctx, va, VGPU_MMU_ACC_ATOMIC, &pa)) {
        return -1;
    }
    if (pa == VGPU_PA_NULL) {
        *old = 0;
        return 0;
    }
    RCU_READ_LOCK_GUARD();
    p = vgpu_ram_ptr(ctx->s, pa, &l, true, &mr, &xlat);
    if (!p || l < size) {
        return vgpu_mmu_fault(ctx, va, VGPU_MMU_ACC_ATOMIC, VGPU_MMU_F_BUS, 0);
    }
    /* guest RAM is little-endian, as vgpu_atomic_host() assumes */
    *old = vgpu_atomic_host(p, size, op, val, cmp);
    vgpu_ram_written(p, mr, xlat, size);
    return 0;
}

static int vgpu_mem_cas16(void *opaque, uint64_t va, const void *cmp,
                          const void *val, void *old)
{
    VGPUMMUCtx *ctx = opaque;
    MemoryRegion *mr;
    void *p;
    hwaddr xlat, l = 16;
    uint64_t pa;

    if (vgpu_mmu_translate(ctx, va, VGPU_MMU_ACC_ATOMIC, &pa)) {
        return -1;
    }
    if (pa == VGPU_PA_NULL) {
        memset(old, 0, 16);
        return 0;
    }
    RCU_READ_LOCK_GUARD();
    p = vgpu_ram_ptr(ctx->s, pa, &l, true, &mr, &xlat);
    if (!p || l < 16) {
        return vgpu_mmu_fault(ctx, va, VGPU_MMU_ACC_ATOMIC, VGPU_MMU_F_BUS, 0);
    }
    /* guest RAM is little-endian, as vgpu_cas16_host() assumes */
    vgpu_cas16_host(p, cmp, val, old);
    vgpu_ram_written(p, mr, xlat, 16);
    return 0;
}

const struct vgpu_mem_ops vgpu_mmu_mem_ops = {
    .read = vgpu_mem_read,
    .write = vgpu_mem_write,
    .atomic = vgpu_mem_atomic,
    .cas16 = vgpu_mem_cas16,
    /* vgpu_mmu_copy() takes any length and alignment, page by page */
    .read_block = vgpu_mem_read,
    .write_block = vgpu_mem_write,
};
