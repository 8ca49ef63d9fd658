/* SPDX-License-Identifier: MIT */
/*
 * Little-endian fields of libvgpu's file formats (the object format,
 * object.c; the PTX compile cache, ptxcache.c), byte by byte whatever
 * the host's order and alignment.
 */
#ifndef VGPU_LE_H
#define VGPU_LE_H

#include <stdint.h>

static inline void vgpu_put_le32(uint8_t *p, uint32_t v)
{
	for (unsigned i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void vgpu_put_le64(uint8_t *p, uint64_t v)
{
	vgpu_put_le32(p, (uint32_t)v);
	vgpu_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t vgpu_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t vgpu_get_le64(const uint8_t *p)
{
	return vgpu_get_le32(p) | (uint64_t)vgpu_get_le32(p + 4) << 32;
}

#endif /* VGPU_LE_H */
