/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device-side launch (CUDA dynamic parallelism): the device's side of the
 * device-launch area (uapi/vgpu_hw.h, struct vgpu_cdp_header).  Plain C
 * over the memory callbacks, so the QEMU device and libvgpu's sim backend
 * take a grid's children from the area the same way: after the grid's
 * CTAs have completed, vgpu_cdp_next() gives the next child to run (the
 * caller runs it as a launch, then its children the same way, then calls
 * vgpu_cdp_done()), until it answers 0.
 */
#include <stdio.h>

#include "core_priv.h"

/* @len bytes at @va (16-aligned pieces of at most 16 bytes) */
static int rd(const struct vgpu_mem_ops *mem, void *opaque, uint64_t va, void *buf,
	      uint32_t len)
{
	for (uint32_t o = 0; o < len; o += 16)
		if (mem->read(opaque, va + o, (uint8_t *)buf + o, len - o < 16 ? len - o : 16))
			return -1;
	return 0;
}

static int wr32(const struct vgpu_mem_ops *mem, void *opaque, uint64_t va, uint32_t v)
{
	return mem->write(opaque, va, &v, 4);
}

#define VGPU_CDP_MAX_SLOTS 65536u /* libvgpu's VGPU_CDP_MAX_PENDING */

static uint64_t slot_va(uint64_t area, uint32_t i)
{
	return area + VGPU_CDP_HEADER_BYTES + (uint64_t)i * VGPU_CDP_SLOT_BYTES;
}

static int fault(struct vgpu_exception_record *exc, uint64_t va, const char *what)
{
	vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "device-side launch: %s", what);
	exc->addr = va;
	return -1;
}

int vgpu_cdp_root(const struct vgpu_mem_ops *mem, void *opaque, uint64_t area,
		  uint32_t *grid, struct vgpu_exception_record *exc)
{
	uint64_t old = 0;

	if (area % 16) {
		vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "device-launch area 0x%llx not 16-aligned",
			     (unsigned long long)area);
		return -1;
	}
	if (mem->atomic(opaque, area + 12, 4, VGPU_ATOMIC_ADD, 1, 0, &old))
		return fault(exc, area + 12, "area header");
	*grid = VGPU_CDP_ROOT | ((uint32_t)old & ~VGPU_CDP_ROOT);
	return 0;
}

/* Frees the ALLOC slots of @parent (taken, never launched). */
static int free_unlaunched(const struct vgpu_mem_ops *mem, void *opaque, uint64_t area,
			   uint32_t nslots, uint32_t parent, struct vgpu_exception_record *exc)
{
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t h[4];

		if (rd(mem, opaque, slot_va(area, i), h, 16))
			return fault(exc, slot_va(area, i), "record");
		if (h[2] == parent && h[0] == VGPU_CDP_ALLOC && wr32(mem, opaque, slot_va(area, i), 0))
			return fault(exc, slot_va(area, i), "record");
	}
	return 0;
}

static bool dims_ok(const uint32_t *grid, const uint32_t *block)
{
	uint64_t t = (uint64_t)block[0] * block[1] * block[2];

	for (int i = 0; i < 3; i++)
		if (!grid[i] || !block[i])
			return false;
	return t <= VGPU_MAX_THREADS_PER_CTA;
}

/* Record @r (slot @best) names a kernel (*@kp) and a shape the device can launch. */
static int check(const struct vgpu_mem_ops *mem, void *opaque, const struct vgpu_cdp_record *rp,
		 uint32_t best, uint32_t depth, struct vgpu_kernel_desc *kp,
		 struct vgpu_exception_record *exc)
{
	const struct vgpu_cdp_record r = *rp;
	struct vgpu_kernel_desc k;

	if (depth > VGPU_CDP_MAX_DEPTH) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
			     "device-side launch nested deeper than %u", VGPU_CDP_MAX_DEPTH);
		return -1;
	}
	if (!r.kdesc || r.kdesc % 8 || rd(mem, opaque, r.kdesc, &k, sizeof(k))) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
			     "device-side launch record %u names no kernel (0x%llx)", best,
			     (unsigned long long)r.kdesc);
		exc->addr = r.kdesc;
		return -1;
	}
	if (!dims_ok(r.grid, r.block) || k.param_size > VGPU_CDP_MAX_PARAM ||
	    k.smem_static > VGPU_DEFAULT_SMEM_PER_SM ||
	    r.smem_bytes > VGPU_DEFAULT_SMEM_PER_SM - k.smem_static) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
			     "device-side launch record %u: bad shape (grid %ux%ux%u, block "
			     "%ux%ux%u, %u parameter bytes, %u shared bytes)", best, r.grid[0],
			     r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2], k.param_size,
			     r.smem_bytes);
		return -1;
	}
	*kp = k;
	return 0;
}

int vgpu_cdp_next(const struct vgpu_mem_ops *mem, void *opaque, uint64_t area, uint32_t parent,
		  uint32_t depth, struct vgpu_cdp_child *out, struct vgpu_exception_record *exc)
{
	struct vgpu_cdp_header h;
	struct vgpu_cdp_record r;
	struct vgpu_kernel_desc k;
	uint32_t best = UINT32_MAX, best_seq = 0;
	bool best_tail = false;
	uint64_t rva, pva;

	if (rd(mem, opaque, area, &h, sizeof(h)))
		return fault(exc, area, "area header");
	if (h.nslots > VGPU_CDP_MAX_SLOTS) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH, "device-launch area of %u slots",
			     h.nslots);
		return -1;
	}
	for (uint32_t i = 0; i < h.nslots; i++) {
		uint32_t s[4];
		bool tail;

		if (rd(mem, opaque, slot_va(area, i), s, 16))
			return fault(exc, slot_va(area, i), "record");
		if (s[2] != parent || s[0] != VGPU_CDP_LAUNCHED)
			continue;
		tail = s[3] == VGPU_CDP_STREAM_TAIL;
		if (best == UINT32_MAX || (tail != best_tail ? !tail : (int32_t)(s[1] - best_seq) < 0)) {
			best = i;
			best_seq = s[1];
			best_tail = tail;
		}
	}
	if (best == UINT32_MAX)
		return free_unlaunched(mem, opaque, area, h.nslots, parent, exc);
	rva = slot_va(area, best);
	pva = rva + VGPU_CDP_RECORD_BYTES;
	if (rd(mem, opaque, rva, &r, sizeof(r)))
		return fault(exc, rva, "record");
	/* taken: whatever follows, it does not run twice (a bad one is freed) */
	if (wr32(mem, opaque, rva, VGPU_CDP_RUNNING))
		return fault(exc, rva, "record");
	if (check(mem, opaque, &r, best, depth, &k, exc)) {
		wr32(mem, opaque, rva, VGPU_CDP_FREE);
		return -1;
	}
	/* the hidden parameters (the launcher's on the host) */
	if (k.data_off != UINT32_MAX &&
	    ((uint64_t)k.data_off + 8 > k.param_size || mem->write(opaque, pva + k.data_off, &k.data_va, 8)))
		return fault(exc, pva + k.data_off, "hidden parameter");
	if (k.params_off != UINT32_MAX &&
	    ((uint64_t)k.params_off + 8 > k.param_size || mem->write(opaque, pva + k.params_off, &pva, 8)))
		return fault(exc, pva + k.params_off, "hidden parameter");
	if (k.local_off != UINT32_MAX) {
		unsigned __int128 need = (unsigned __int128)((uint64_t)r.grid[0] * r.grid[1]) *
					 r.grid[2] * r.block[0] * r.block[1] * r.block[2] *
					 k.local_bytes;

		if (need > h.lmem_size) {
			vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
				     "device-side launch record %u: %llu bytes of local memory, "
				     "the area has %llu", best,
				     need >> 64 ? ~0ull : (unsigned long long)need,
				     (unsigned long long)h.lmem_size);
			wr32(mem, opaque, rva, VGPU_CDP_FREE);
			return -1;
		}
		if ((uint64_t)k.local_off + 8 > k.param_size ||
		    mem->write(opaque, pva + k.local_off, &h.lmem_va, 8))
			return fault(exc, pva + k.local_off, "hidden parameter");
	}
	if (k.printf_off != UINT32_MAX) {
		if (!h.printf_va) {
			vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
				     "device-side launch record %u: a kernel that prints, and the "
				     "area has no printf buffer", best);
			wr32(mem, opaque, rva, VGPU_CDP_FREE);
			return -1;
		}
		if ((uint64_t)k.printf_off + 8 > k.param_size ||
		    mem->write(opaque, pva + k.printf_off, &h.printf_va, 8))
			return fault(exc, pva + k.printf_off, "hidden parameter");
	}
	if (k.envregs_off != UINT32_MAX) {
		if ((uint64_t)k.envregs_off + 128u > k.param_size)
			return fault(exc, pva + k.envregs_off, "hidden parameter");
		for (uint32_t o = 0; o < 128u; o += 4)
			if (wr32(mem, opaque, pva + k.envregs_off + o, 0))
				return fault(exc, pva + k.envregs_off + o, "hidden parameter");
	}
	*out = (struct vgpu_cdp_child){
		.record = best,
		.code_va = k.code_va,
		.code_size = k.code_size,
		.entry = k.entry,
		.grid = { r.grid[0], r.grid[1], r.grid[2] },
		.block = { r.block[0], r.block[1], r.block[2] },
		.smem_bytes = k.smem_static + r.smem_bytes,
		.param_va = pva,
		.param_size = k.param_size,
	};
	return 1;
}

void vgpu_cdp_done(const struct vgpu_mem_ops *mem, void *opaque, uint64_t area, uint32_t record)
{
	wr32(mem, opaque, slot_va(area, record), VGPU_CDP_FREE);
}

/* The records of grid @grid and their own, @level deep at most (a forged cycle ends). */
static void cancel(const struct vgpu_mem_ops *mem, void *opaque, uint64_t area, uint32_t nslots,
		   uint32_t grid, uint32_t level)
{
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t s[4];

		if (rd(mem, opaque, slot_va(area, i), s, 16))
			return;
		if (s[0] == VGPU_CDP_FREE || s[2] != grid)
			continue;
		if (level && i != grid)
			cancel(mem, opaque, area, nslots, i, level - 1);
		wr32(mem, opaque, slot_va(area, i), VGPU_CDP_FREE);
	}
}

void vgpu_cdp_cancel(const struct vgpu_mem_ops *mem, void *opaque, uint64_t area, uint32_t grid)
{
	uint32_t nslots;

	if (mem->read(opaque, area, &nslots, 4) || nslots > VGPU_CDP_MAX_SLOTS)
		return;
	cancel(mem, opaque, area, nslots, grid, VGPU_CDP_MAX_DEPTH + 1);
}
