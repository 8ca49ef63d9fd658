/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4), for the PTX compile cache's keys and checksums
 * (ptxcache.c).  Checked against the standard's vectors by test_ptxcache,
 * both ways where the processor has the SHA extensions.
 */
#ifndef VGPU_SHA256_H
#define VGPU_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VGPU_SHA256_BYTES 32

struct vgpu_sha256 {
	uint32_t h[8];
	uint64_t total; /* bytes hashed */
	uint8_t buf[64];
	size_t used;	/* bytes in @buf */
};

void vgpu_sha256_init(struct vgpu_sha256 *s);
void vgpu_sha256_update(struct vgpu_sha256 *s, const void *data, size_t len);
void vgpu_sha256_final(struct vgpu_sha256 *s, uint8_t out[VGPU_SHA256_BYTES]);
/* one call: the digest of @len bytes at @data */
void vgpu_sha256(const void *data, size_t len, uint8_t out[VGPU_SHA256_BYTES]);
/* for the tests: the plain C rounds (@on), or the processor's choice again */
void vgpu_sha256_portable(bool on);

#endif
