/* SPDX-License-Identifier: MIT */
/*
 * Host memory as vGPU global memory (see hostmem.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostmem.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

void vgpu_hostmem_init(struct vgpu_hostmem *hm, uint64_t base, uint64_t limit)
{
	memset(hm, 0, sizeof(*hm));
	hm->next = align_up(base ? base : VGPU_HOSTMEM_ALIGN, VGPU_HOSTMEM_ALIGN);
	hm->limit = limit;
}

void vgpu_hostmem_fini(struct vgpu_hostmem *hm)
{
	for (unsigned int i = 0; i < hm->nregions; i++)
		free(hm->regions[i].alloc);
	free(hm->regions);
	memset(hm, 0, sizeof(*hm));
}

int vgpu_hostmem_alloc(struct vgpu_hostmem *hm, uint64_t size, uint64_t *addr,
		       uint8_t **data)
{
	struct vgpu_hostmem_region *r;
	uint64_t at = hm->next;

	if (!size || size > hm->limit || at > hm->limit - size)
		return -ENOSPC;
	r = realloc(hm->regions, (hm->nregions + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	hm->regions = r;
	r = &hm->regions[hm->nregions];
	/* calloc's zero pages, VGPU_HOST_LINE aligned as the address is */
	r->alloc = calloc(1, size + VGPU_HOST_LINE);
	if (!r->alloc)
		return -ENOMEM;
	r->data = (uint8_t *)align_up((uintptr_t)r->alloc, VGPU_HOST_LINE);
	r->addr = at;
	r->size = size;
	hm->nregions++;
	hm->next = align_up(at + size + VGPU_HOSTMEM_GUARD, VGPU_HOSTMEM_ALIGN);
	*addr = at;
	*data = r->data;
	return 0;
}

uint8_t *vgpu_hostmem_ptr(const struct vgpu_hostmem *hm, uint64_t addr,
			  uint64_t len)
{
	for (unsigned int i = 0; i < hm->nregions; i++) {
		const struct vgpu_hostmem_region *r = &hm->regions[i];

		if (addr >= r->addr && len <= r->size && addr - r->addr <= r->size - len)
			return r->data + (addr - r->addr);
	}
	return NULL;
}

static int hostmem_read(void *opaque, uint64_t addr, void *buf, uint32_t len)
{
	const uint8_t *p = vgpu_hostmem_ptr(opaque, addr, len);

	if (!p)
		return -1;
	memcpy(buf, p, len);
	return 0;
}

static int hostmem_write(void *opaque, uint64_t addr, const void *buf,
			 uint32_t len)
{
	uint8_t *p = vgpu_hostmem_ptr(opaque, addr, len);

	if (!p)
		return -1;
	memcpy(p, buf, len);
	return 0;
}

static void *hostmem_span(void *opaque, uint64_t addr, uint64_t len, bool write)
{
	(void)write;
	return vgpu_hostmem_ptr(opaque, addr, len);
}

/* Every operation as a compare-and-swap loop over the core's own rule. */
static int hostmem_atomic(void *opaque, uint64_t addr, unsigned size,
			  enum vgpu_atomic_op op, uint64_t val, uint64_t cmp,
			  uint64_t *old)
{
	void *p = vgpu_hostmem_ptr(opaque, addr, size);

	if (!p || (addr & (size - 1)))
		return -1;
	*old = vgpu_atomic_host(p, size, op, val, cmp);
	return 0;
}

static int hostmem_cas16(void *opaque, uint64_t addr, const void *cmp, const void *val,
			 void *old)
{
	void *p = vgpu_hostmem_ptr(opaque, addr, 16);

	if (!p || (addr & 15))
		return -1;
	vgpu_cas16_host(p, cmp, val, old);
	return 0;
}

const struct vgpu_mem_ops vgpu_hostmem_ops = {
	.read = hostmem_read,
	.write = hostmem_write,
	.atomic = hostmem_atomic,
	.cas16 = hostmem_cas16,
	.read_block = hostmem_read,
	.write_block = hostmem_write,
	.span = hostmem_span,
};
