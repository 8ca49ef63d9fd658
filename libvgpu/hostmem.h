/* SPDX-License-Identifier: MIT */
/*
 * Host memory as vGPU global memory: regions of host buffers placed at GPU
 * addresses, and the struct vgpu_mem_ops that lets the core reach them.
 * Used by vgpu-run, the host tests and benchmarks (and the sim backend).
 *
 * Regions are 64 KiB aligned with an unmapped guard gap after each, so a
 * kernel that runs off the end of a buffer faults instead of landing in
 * the next one.  Atomics are real host atomics: several SMs on several
 * threads may share one vgpu_hostmem.
 */
#ifndef VGPU_HOSTMEM_H
#define VGPU_HOSTMEM_H

#include <stdint.h>

#include "vgpu_core.h"

#define VGPU_API __attribute__((visibility("default")))

#define VGPU_HOSTMEM_ALIGN (64u * 1024u) /* readable addresses; >= 256 */
#define VGPU_HOSTMEM_GUARD (64u * 1024u)

struct vgpu_hostmem_region {
	uint64_t addr;
	uint64_t size;
	uint8_t *data;	/* VGPU_HOST_LINE aligned, in... */
	void *alloc;	/* ...this allocation */
};

struct vgpu_hostmem {
	struct vgpu_hostmem_region *regions;
	unsigned int nregions;
	uint64_t next;	/* address of the next region */
	uint64_t limit; /* regions end at or below this address */
};

/* Addresses from @base (aligned up) to @limit. */
VGPU_API void vgpu_hostmem_init(struct vgpu_hostmem *hm, uint64_t base,
				uint64_t limit);
VGPU_API void vgpu_hostmem_fini(struct vgpu_hostmem *hm);

/*
 * A zero-filled region of @size bytes; its GPU address in *@addr and host
 * pointer in *@data.  Returns 0, -ENOSPC past the limit, -ENOMEM.
 */
VGPU_API int vgpu_hostmem_alloc(struct vgpu_hostmem *hm, uint64_t size,
				uint64_t *addr, uint8_t **data);

/* Host pointer for [addr, addr + len) if it lies in one region, or NULL. */
VGPU_API uint8_t *vgpu_hostmem_ptr(const struct vgpu_hostmem *hm, uint64_t addr,
				   uint64_t len);

/* opaque = struct vgpu_hostmem * */
VGPU_API extern const struct vgpu_mem_ops vgpu_hostmem_ops;

#endif
