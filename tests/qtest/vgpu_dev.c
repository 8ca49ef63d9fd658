/* SPDX-License-Identifier: MIT */
/*
 * Driving a vgpu-pci device through qtest: see vgpu_dev.h.
 */
#include "vgpu_dev.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PT_POOL 0x00300000ull
#define PT_POOL_END 0x00f00000ull
#define DATA_POOL 0x04000000ull
#define DATA_POOL_END 0x0f000000ull
#define RING_AREA 0x01000000ull
#define RING_AREA_STRIDE 0x10000ull

#define PCI_COMMAND 0x04
#define PCI_BAR0 0x10
#define PCI_BAR2 0x18
#define PCI_BAR4 0x20
#define PCI_CAP_ID_MSIX 0x11

uint64_t dev_ring_pa(unsigned q) { return RING_AREA + q * RING_AREA_STRIDE; }
static uint64_t cpl_pa(unsigned q) { return DEV_CPL_PA(q, 0); }

uint32_t reg_read(struct dev *d, uint32_t off)
{
	return qts_readl(d->qts, DEV_BAR0 + off);
}

void reg_write(struct dev *d, uint32_t off, uint32_t v)
{
	qts_writel(d->qts, DEV_BAR0 + off, v);
}

uint32_t qreg_read(struct dev *d, unsigned q, uint32_t off)
{
	return reg_read(d, VGPU_REG_QUEUE(q) + off);
}

void qreg_write(struct dev *d, unsigned q, uint32_t off, uint32_t v)
{
	reg_write(d, VGPU_REG_QUEUE(q) + off, v);
}

static uint64_t pt_alloc(struct dev *d)
{
	uint64_t pa = d->pt_next;

	if (pa >= PT_POOL_END) {
		fprintf(stderr, "vgpu_dev: out of page-table memory\n");
		abort();
	}
	d->pt_next += VGPU_PAGE_SIZE;
	qts_memset(d->qts, pa, 0, VGPU_PAGE_SIZE);
	return pa;
}

uint64_t dev_alloc_pa(struct dev *d, uint64_t size)
{
	uint64_t pa = d->data_next;

	size = (size + VGPU_PAGE_SIZE - 1) & ~(uint64_t)(VGPU_PAGE_SIZE - 1);
	if (pa + size > DATA_POOL_END) {
		fprintf(stderr, "vgpu_dev: out of data memory\n");
		abort();
	}
	d->data_next += size;
	qts_memset(d->qts, pa, 0, size);
	return pa;
}

/* Table holding the entry for @va at @level, creating tables above it. */
static uint64_t pt_table(struct dev *d, unsigned asid, uint64_t va,
			 unsigned level)
{
	uint64_t table = d->root[asid];

	for (unsigned l = VGPU_PT_LEVELS - 1; l > level; l--) {
		uint64_t ea = table + 8 * VGPU_PT_INDEX(va, (uint64_t)l);
		uint64_t pte = qts_readq(d->qts, ea);

		if (!(pte & VGPU_PTE_VALID)) {
			pte = pt_alloc(d) | VGPU_PTE_VALID;
			qts_writeq(d->qts, ea, pte);
		}
		table = pte & VGPU_PTE_ADDR_MASK;
	}
	return table;
}

void dev_set_pte(struct dev *d, unsigned asid, uint64_t va, unsigned level,
		 uint64_t pte)
{
	uint64_t table = pt_table(d, asid, va, level);

	qts_writeq(d->qts, table + 8 * VGPU_PT_INDEX(va, (uint64_t)level), pte);
}

void dev_map(struct dev *d, unsigned asid, uint64_t va, uint64_t pa,
	     uint64_t flags)
{
	dev_set_pte(d, asid, va, 0, (pa & VGPU_PTE_ADDR_MASK) | flags);
}

uint64_t dev_buf(struct dev *d, unsigned asid, uint64_t size, uint64_t flags,
		 uint64_t *pa_out)
{
	uint64_t pa = dev_alloc_pa(d, size), va = d->va_next;

	for (uint64_t off = 0; off < size; off += VGPU_PAGE_SIZE)
		dev_map(d, asid, va + off, pa + off, flags);
	/* leave an unmapped page after each buffer */
	d->va_next += ((size + VGPU_PAGE_SIZE - 1) & ~(uint64_t)(VGPU_PAGE_SIZE - 1)) +
		      VGPU_PAGE_SIZE;
	if (pa_out)
		*pa_out = pa;
	return va;
}

int dev_open(struct dev *d, const char *props, unsigned nas)
{
	char args[256];

	memset(d, 0, sizeof(*d));
	snprintf(args, sizeof(args), "-device vgpu-pci,addr=04.0%s%s",
		 props && *props ? "," : "", props ? props : "");
	d->qts = qts_start(args);
	if (!d->qts)
		return -1;
	dev_setup(d, nas);
	return 0;
}

void dev_setup(struct dev *d, unsigned nas)
{
	unsigned cap;

	d->pt_next = PT_POOL;
	d->data_next = DATA_POOL;
	d->va_next = DEV_VA_BASE;

	qts_cfg_writel(d->qts, DEV_DEVFN, PCI_BAR0, (uint32_t)DEV_BAR0);
	qts_cfg_writel(d->qts, DEV_DEVFN, PCI_BAR2, (uint32_t)DEV_BAR2);
	qts_cfg_writel(d->qts, DEV_DEVFN, PCI_BAR2 + 4, 0);
	qts_cfg_writel(d->qts, DEV_DEVFN, PCI_BAR4, (uint32_t)DEV_BAR4);
	qts_cfg_writew(d->qts, DEV_DEVFN, PCI_COMMAND, 0x6); /* memory, master */

	cap = qts_cfg_find_cap(d->qts, DEV_DEVFN, PCI_CAP_ID_MSIX);
	d->msix_cap = cap;
	if (cap) {
		uint32_t table = qts_cfg_readl(d->qts, DEV_DEVFN, cap + 4);
		uint64_t base = DEV_BAR2 + (table & ~7u);
		unsigned n = (qts_cfg_readw(d->qts, DEV_DEVFN, cap + 2) & 0x7ff) + 1;

		for (unsigned v = 0; v < n && v < VGPU_MSIX_VECTORS_MAX; v++) {
			qts_writel(d->qts, base + 16 * v, (uint32_t)(DEV_MSI_ADDR + 4 * v));
			qts_writel(d->qts, base + 16 * v + 4, 0);
			qts_writel(d->qts, base + 16 * v + 8, DEV_MSI_DATA + v);
			qts_writel(d->qts, base + 16 * v + 12, 0); /* unmasked */
		}
		qts_cfg_writew(d->qts, DEV_DEVFN, cap + 2, 0x8000); /* enable */
	}
	dev_msi_clear(d);

	if (nas > DEV_MAX_AS)
		nas = DEV_MAX_AS;
	for (unsigned a = 0; a < nas; a++) {
		d->root[a] = pt_alloc(d);
		qts_writeq(d->qts, DEV_AS_TABLE + 8 * a, d->root[a] | VGPU_PTE_VALID);
	}
	reg_write(d, VGPU_REG_AS_BASE_LO, (uint32_t)DEV_AS_TABLE);
	reg_write(d, VGPU_REG_AS_BASE_HI, 0);
	reg_write(d, VGPU_REG_AS_COUNT, nas);
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
}

int dev_open_incoming(struct dev *to, const struct dev *from, const char *props,
		      const char *state_file)
{
	char args[512];

	*to = *from;
	snprintf(args, sizeof(args), "-device vgpu-pci,addr=04.0%s%s -incoming exec:cat<%s",
		 props && *props ? "," : "", props ? props : "", state_file);
	to->qts = qts_start(args);
	if (!to->qts)
		return -1;
	/* BAR0 answers once the incoming state (PCI config) is loaded */
	for (int i = 0; i < 100000; i++) {
		if (reg_read(to, VGPU_REG_ID) == VGPU_ID_MAGIC)
			return 0;
		if (!qts_alive(to->qts))
			break;
		usleep(1000);
	}
	return -1;
}

void dev_close(struct dev *d)
{
	qts_quit(d->qts);
	d->qts = NULL;
}

static void queue_init(struct dev *d, unsigned q, uint32_t size, uint32_t ctrl)
{
	qts_memset(d->qts, cpl_pa(q), 0, (size_t)size * sizeof(struct vgpu_completion));
	qreg_write(d, q, VGPU_Q_RING_LO, (uint32_t)dev_ring_pa(q));
	qreg_write(d, q, VGPU_Q_RING_HI, 0);
	qreg_write(d, q, VGPU_Q_CPL_LO, (uint32_t)cpl_pa(q));
	qreg_write(d, q, VGPU_Q_CPL_HI, 0);
	qreg_write(d, q, VGPU_Q_SIZE, size);
	qreg_write(d, q, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | ctrl);
	d->ring_size[q] = size;
	d->tail[q] = 0;
}

void dev_queue_init(struct dev *d, unsigned q, uint32_t size)
{
	queue_init(d, q, size, 0);
}

void dev_user_queue_init(struct dev *d, unsigned q, uint32_t size,
			 uint32_t asid)
{
	queue_init(d, q, size, VGPU_QCTRL_USER | asid << VGPU_QCTRL_ASID_SHIFT);
}

uint32_t db_read(struct dev *d, unsigned q, uint32_t off)
{
	return qts_readl(d->qts, DEV_BAR4 + q * VGPU_DOORBELL_PAGE + off);
}

void db_write(struct dev *d, unsigned q, uint32_t off, uint32_t v)
{
	qts_writel(d->qts, DEV_BAR4 + q * VGPU_DOORBELL_PAGE + off, v);
}

void dev_doorbell_page(struct dev *d, unsigned q)
{
	db_write(d, q, VGPU_DB_TAIL, d->tail[q]);
}

uint32_t dev_put(struct dev *d, unsigned q, const void *cmd)
{
	uint32_t slot = d->tail[q];

	/* A fresh record has seq 0 until the device completes the slot. */
	qts_memset(d->qts, cpl_pa(q) + (uint64_t)slot * sizeof(struct vgpu_completion),
		   0, sizeof(struct vgpu_completion));
	qts_memwrite(d->qts, dev_ring_pa(q) + (uint64_t)slot * VGPU_CMD_BYTES, cmd,
		     VGPU_CMD_BYTES);
	d->tail[q] = (slot + 1) % d->ring_size[q];
	return slot;
}

void dev_doorbell(struct dev *d, unsigned q)
{
	qreg_write(d, q, VGPU_Q_DOORBELL, d->tail[q]);
}

uint32_t dev_submit(struct dev *d, unsigned q, const void *cmd)
{
	uint32_t slot = dev_put(d, q, cmd);

	dev_doorbell(d, q);
	return slot;
}

void dev_read_cpl(struct dev *d, unsigned q, uint32_t slot,
		  struct vgpu_completion *c)
{
	qts_memread(d->qts, cpl_pa(q) + (uint64_t)slot * sizeof(*c), c, sizeof(*c));
}

bool dev_wait(struct dev *d, unsigned q, uint32_t slot, struct vgpu_completion *c)
{
	uint64_t seq_pa = cpl_pa(q) + (uint64_t)slot * sizeof(*c) +
			  offsetof(struct vgpu_completion, seq);
	uint64_t start = qts_now_ns();

	/* No time limit is asserted: 60 s only stops a test from hanging. */
	while (!qts_readq(d->qts, seq_pa)) {
		if (!qts_alive(d->qts) || qts_now_ns() - start > 60000000000ull) {
			memset(c, 0, sizeof(*c));
			return false;
		}
	}
	dev_read_cpl(d, q, slot, c);
	return true;
}

#ifndef VGPU_DEV_NO_ASM
int dev_kernel_load(struct dev *d, unsigned asid, const char *src,
		    struct dev_kernel *kern)
{
	char err[2048];
	uint64_t pa;

	memset(kern, 0, sizeof(*kern));
	if (vgpu_assemble(src, strlen(src), "test.vgs", &kern->obj, err,
			  sizeof(err))) {
		fprintf(stderr, "%s", err);
		return -1;
	}
	kern->k = &kern->obj.kernels[0];
	kern->code_va = dev_buf(d, asid, kern->obj.code_size,
				VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_EXEC, &pa);
	qts_memwrite(d->qts, pa, kern->obj.code, kern->obj.code_size);
	return 0;
}

void dev_kernel_free(struct dev_kernel *kern)
{
	vgpu_object_fini(&kern->obj);
}
#endif

struct vgpu_cmd_launch dev_launch_cmd(const struct dev_kernel *kern,
				      uint32_t grid, uint32_t block,
				      uint64_t pva, uint32_t psize)
{
	return (struct vgpu_cmd_launch){
		.hdr = { .opcode = VGPU_CMD_LAUNCH },
		.code_va = kern->code_va,
		.code_size = kern->obj.code_size,
		.entry = kern->k->entry,
		.grid = { grid, 1, 1 },
		.block = { block, 1, 1 },
		.smem_bytes = kern->k->smem_static,
		.param_va = pva,
		.param_size = psize,
	};
}

uint32_t dev_msi_read(struct dev *d, unsigned v)
{
	return qts_readl(d->qts, DEV_MSI_ADDR + 4 * v);
}

void dev_msi_clear(struct dev *d)
{
	qts_memset(d->qts, DEV_MSI_ADDR, 0, 4 * VGPU_MSIX_VECTORS_MAX);
}
