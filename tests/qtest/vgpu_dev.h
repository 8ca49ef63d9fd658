/* SPDX-License-Identifier: MIT */
/*
 * Driving a vgpu-pci device through qtest, as a driver would: PCI set-up,
 * MSI-X, GPU page tables built in guest memory, queues, commands and
 * completions.  Used by the device tests and the device benchmark.
 *
 * Guest-physical layout (256 MiB of RAM):
 *   DEV_MSI_ADDR   MSI-X messages land here: vector v at + 4 * v
 *   DEV_AS_TABLE   address-space table
 *   page tables    from 0x00300000, data pages from 0x04000000
 *   rings          queue q at 0x01000000 + q * 0x10000
 *   completions    queue q at 0x02000000 + q * 0x40000
 * GPU virtual addresses handed out start at DEV_VA_BASE (above 4 GiB).
 */
#ifndef VGPU_DEV_H
#define VGPU_DEV_H

#include <stdbool.h>
#include <stdint.h>

#include "qtest_client.h"
#include "vgpu_asm.h"
#include "vgpu_hw.h"

#define DEV_DEVFN (4u << 3)
#define DEV_BAR0 0xe0000000ull
#define DEV_BAR2 0xe0100000ull
#define DEV_BAR4 0xe0200000ull /* doorbell pages */
#define DEV_MSI_ADDR 0x00100000ull
#define DEV_MSI_DATA 0x5a00u /* vector v sends DEV_MSI_DATA + v */
#define DEV_AS_TABLE 0x00200000ull
#define DEV_VA_BASE 0x100000000ull
#define DEV_MAX_AS 4
#define DEV_MAX_QUEUES 16

struct dev {
	struct qts *qts;
	uint64_t pt_next, data_next, va_next;
	uint64_t root[DEV_MAX_AS];
	uint32_t ring_size[DEV_MAX_QUEUES];
	uint32_t tail[DEV_MAX_QUEUES];
	unsigned msix_cap;
};

/*
 * Start QEMU with "-device vgpu-pci,addr=04.0[,PROPS]" (@props may be NULL
 * or "threads=2,..."), map BAR0/BAR2, enable bus mastering and MSI-X with
 * both vectors aimed at DEV_MSI_ADDR, and set up @nas address spaces
 * (empty page tables).  Returns 0 or -1.
 */
int dev_open(struct dev *d, const char *props, unsigned nas);
/*
 * The same on a QEMU already running with the device at DEV_DEVFN (after
 * a reset too): BARs, MSI-X, fresh page-table and data pools, @nas
 * address spaces, IRQ_MASK.
 */
void dev_setup(struct dev *d, unsigned nas);
void dev_close(struct dev *d);
/*
 * Start a second QEMU that takes its state from @from's migration stream
 * in @state_file (written with "migrate exec:cat>FILE"); @to continues
 * @from's allocations.  Waits until the device answers.  0 or -1.
 */
int dev_open_incoming(struct dev *to, const struct dev *from, const char *props,
		      const char *state_file);

uint32_t reg_read(struct dev *d, uint32_t off);
void reg_write(struct dev *d, uint32_t off, uint32_t v);
uint32_t qreg_read(struct dev *d, unsigned q, uint32_t off);
void qreg_write(struct dev *d, unsigned q, uint32_t off, uint32_t v);

/* Map one 4 KiB page; creates tables as needed.  @flags VGPU_PTE_*. */
void dev_map(struct dev *d, unsigned asid, uint64_t va, uint64_t pa,
	     uint64_t flags);
/* Write a raw entry at @level on the walk of @va (tables created above it). */
void dev_set_pte(struct dev *d, unsigned asid, uint64_t va, unsigned level,
		 uint64_t pte);
/* Zeroed guest RAM (page-aligned); its physical address. */
uint64_t dev_alloc_pa(struct dev *d, uint64_t size);
/* Zeroed buffer mapped at a fresh VA with @flags; its VA (PA in *pa). */
uint64_t dev_buf(struct dev *d, unsigned asid, uint64_t size, uint64_t flags,
		 uint64_t *pa);

/* Configure queue @q with @size slots and enable it. */
/* Guest-physical address of queue @q's command ring. */
uint64_t dev_ring_pa(unsigned q);
void dev_queue_init(struct dev *d, unsigned q, uint32_t size);
/* The same in user mode, running in address space @asid. */
void dev_user_queue_init(struct dev *d, unsigned q, uint32_t size,
			 uint32_t asid);
/* Queue @q's doorbell page (BAR4) at @off. */
uint32_t db_read(struct dev *d, unsigned q, uint32_t off);
void db_write(struct dev *d, unsigned q, uint32_t off, uint32_t v);
/* Put @cmd (128 bytes) in the next slot and ring the doorbell; the slot. */
uint32_t dev_submit(struct dev *d, unsigned q, const void *cmd);
/* Write commands without ringing; dev_doorbell() rings for all of them. */
uint32_t dev_put(struct dev *d, unsigned q, const void *cmd);
void dev_doorbell(struct dev *d, unsigned q);
/* The same through the doorbell page (BAR4), as a user-mode process would. */
void dev_doorbell_page(struct dev *d, unsigned q);
/* Wait (up to 60 s) for slot @slot's completion record; false on timeout. */
bool dev_wait(struct dev *d, unsigned q, uint32_t slot,
	      struct vgpu_completion *c);
/* Guest-physical address of queue @q's completion record for @slot. */
#define DEV_CPL_PA(q, slot)                                                   \
	(0x02000000ull + (q) * 0x40000ull +                                    \
	 (uint64_t)(slot) * sizeof(struct vgpu_completion))
/* Read the completion record of @slot as it is now. */
void dev_read_cpl(struct dev *d, unsigned q, uint32_t slot,
		  struct vgpu_completion *c);

/* An assembled kernel, its code uploaded and mapped R|X. */
struct dev_kernel {
	struct vgpu_object obj;
	const struct vgpu_obj_kernel *k;
	uint64_t code_va;
};

/*
 * Assemble @src and upload it into address space @asid.  0 or -1.  (Not
 * with VGPU_DEV_NO_ASM: the device fuzzer, inside QEMU, has no assembler.)
 */
int dev_kernel_load(struct dev *d, unsigned asid, const char *src,
		    struct dev_kernel *kern);
void dev_kernel_free(struct dev_kernel *kern);

/* A launch command of @kern: grid and block x sizes, parameters at @pva. */
struct vgpu_cmd_launch dev_launch_cmd(const struct dev_kernel *kern,
				      uint32_t grid, uint32_t block,
				      uint64_t pva, uint32_t psize);

/* MSI-X message count seen at DEV_MSI_ADDR for vector @v (data written). */
uint32_t dev_msi_read(struct dev *d, unsigned v);
void dev_msi_clear(struct dev *d);

#endif
