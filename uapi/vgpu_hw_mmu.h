/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: the GPU MMU: page tables in guest memory.  Part
 * of vgpu_hw.h, which includes it: include that.
 */
#ifndef VGPU_HW_MMU_H
#define VGPU_HW_MMU_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_mmu.h"
#endif

/*
 * ---- GPU MMU: page tables in guest memory ----
 *
 * Address-space table: AS_COUNT 64-bit entries at AS_BASE; entry asid is
 * VGPU_PTE_VALID | root table address (4 KiB aligned, bits 51..12).
 *
 * 48-bit virtual addresses, 4 KiB pages, four levels of 512 64-bit
 * entries, each table 4 KiB aligned:
 *
 *   level 3 (root): VA[47:39]   level 2: VA[38:30]
 *   level 1:        VA[29:21]   level 0 (leaf): VA[20:12]
 *
 * Entry: bit 0 VALID, bit 1 READ, bit 2 WRITE, bit 3 EXEC (leaf and
 * NULL entries only; 0 in table entries), bits 11..4 ignored (free for
 * software), bits 51..12 the physical address of the next table or of the
 * page, bit 52 NULL (leaf, level 1 and level 2 entries only), bits 63..53
 * reserved (must be 0).  No large pages of memory.  Physical addresses
 * are guest physical; pages must be guest RAM.
 *
 * A NULL leaf (VGPU_PTE_VALID | VGPU_PTE_NULL | permissions, the address
 * bits ignored) maps no memory and faults nothing the permissions allow:
 * reads (and instruction fetches) return zeros, writes are dropped, an
 * atomic returns 0 and stores nothing.  Drivers back sparse ranges with
 * them (VGPU_FEAT_NULL_PTE).
 *
 * A NULL entry at level 1 (2 MiB) or level 2 (1 GiB): the same bits
 * (VGPU_PTE_VALID | VGPU_PTE_NULL | permissions, the address bits
 * ignored) end the walk there, with no table below: every page of the
 * entry's 2 MiB or 1 GiB is a NULL page with the entry's permissions, as
 * if a table of NULL leaves with those bits lay below.  An access its
 * permissions deny is a VGPU_MMU_F_PERMISSION fault whose level
 * (exc.info[2]) is the entry's.  So a sparse range costs a table per
 * 512 GiB plus those at its unaligned ends, however large it is; a driver
 * that later maps part of such a region splits the entry: it writes a
 * table of 512 NULL entries of the level below with the same bits, then
 * points the entry at it.  Part of VGPU_FEAT_NULL_PTE.  NULL in a root
 * (level 3) entry or in the address-space table, and READ, WRITE or EXEC
 * in a table entry without NULL, are reserved-bit faults.
 */
#define VGPU_VA_BITS 48u
#define VGPU_PAGE_SHIFT 12u
#define VGPU_PAGE_SIZE (1u << VGPU_PAGE_SHIFT)
#define VGPU_PT_LEVELS 4u
#define VGPU_PT_ENTRIES 512u
#define VGPU_PT_INDEX(va, level)                                               \
	(((va) >> (VGPU_PAGE_SHIFT + 9u * (level))) & (VGPU_PT_ENTRIES - 1u))

#define VGPU_PTE_VALID (1ull << 0)
#define VGPU_PTE_READ (1ull << 1)
#define VGPU_PTE_WRITE (1ull << 2)
#define VGPU_PTE_EXEC (1ull << 3)
#define VGPU_PTE_SW_MASK 0xff0ull
#define VGPU_PTE_ADDR_MASK 0x000ffffffffff000ull
#define VGPU_PTE_NULL (1ull << 52)
#define VGPU_PTE_RSVD_MASK 0xffe0000000000000ull

#endif /* VGPU_HW_MMU_H */
