/* SPDX-License-Identifier: MIT */
/*
 * The im2col tests' reference (test_im2col, test_ptx_im2col): a copy's
 * parameters, and where each byte of its column comes from by the
 * definition in uapi/vgpu_hw.h, computed by another road than the copy
 * engine's walk: a pixel's place in the column is a mixed-radix number
 * (W fastest, then H, D, N) of the grid points of the bounding box, counted
 * from the box's lower corner, as a convolution numbers its output pixels;
 * the engine steps and wraps coordinates instead.  The start must lie on
 * the traversal strides' grid.
 */
#ifndef VGPU_TEST_IM2COL_REF_H
#define VGPU_TEST_IM2COL_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vgpu_hw.h"

struct icase {
	uint32_t rank, es, channels, pixels;
	uint32_t dims[5], estr[5]; /* estr 0: 1 */
	int32_t lower[3], upper[3];
	int32_t coord[5];
	uint32_t off[3];
	bool off_rz; /* the offsets operand RZ (all zero) */
};

/* Bytes of the tensor: dense, each dimension's stride 16-aligned. */
static inline uint64_t strides_of(const struct icase *t, uint64_t *st)
{
	uint64_t s = ((uint64_t)t->dims[0] * t->es + 15) & ~15ull;

	for (uint32_t d = 1; d < t->rank; d++) {
		st[d - 1] = s;
		s *= t->dims[d];
	}
	return s;
}

/* The im2col map of @t over a tensor at @base. */
static inline void icase_map(const struct icase *t, uint64_t base, struct vgpu_tensor_map *m)
{
	uint64_t st[4] = { 0 };

	memset(m, 0, sizeof(*m));
	m->base = base;
	m->magic = VGPU_TMAP_MAGIC;
	m->rank = (uint8_t)t->rank;
	m->elem_size = (uint8_t)t->es;
	m->mode = VGPU_TMAP_IM2COL;
	for (uint32_t d = 0; d < t->rank; d++) {
		m->dims[d] = t->dims[d];
		m->elem_strides[d] = t->estr[d] ? t->estr[d] : 1;
	}
	strides_of(t, st);
	memcpy(m->strides, st, sizeof(st));
	m->channels = (uint16_t)t->channels;
	m->pixels = (uint16_t)t->pixels;
	for (uint32_t s = 0; s < 3; s++) {
		m->lower[s] = (int16_t)t->lower[s];
		m->upper[s] = (int16_t)t->upper[s];
	}
}

static inline uint8_t data_byte(uint64_t i)
{
	return (uint8_t)((i * 131 + 7) % 251);
}

/*
 * Where byte @b of channel @ch of pixel @p comes from (offset in the
 * tensor), or -1 when the element is out of bounds: the pixel's place in
 * the mixed-radix grid of the bounding box, from the start's.
 */
static inline int64_t ref_source(const struct icase *t, uint32_t p, uint32_t ch, uint32_t b)
{
	uint32_t ns = t->rank - 2;
	uint64_t st[4];
	int64_t cnt[3], lo[3], idx = 0, mul = 1, x[3], n, c = (int64_t)t->coord[0] + ch;
	int64_t src;

	strides_of(t, st);
	for (uint32_t s = 0; s < ns; s++) {
		int64_t step = t->estr[s + 1] ? t->estr[s + 1] : 1;
		int64_t off = t->off_rz ? 0 : t->off[s];
		int64_t hi = (int64_t)t->dims[s + 1] - 1 + t->upper[s] + off;

		lo[s] = t->lower[s] + off;
		cnt[s] = (hi - lo[s]) / step + 1;
		/* the start lies on the grid in these cases */
		idx += mul * ((t->coord[s + 1] + off - lo[s]) / step);
		mul *= cnt[s];
	}
	idx += p;
	n = t->coord[t->rank - 1] + idx / mul * (t->estr[t->rank - 1] ? t->estr[t->rank - 1] : 1);
	idx %= mul;
	for (uint32_t s = 0; s < ns; s++) {
		int64_t step = t->estr[s + 1] ? t->estr[s + 1] : 1;

		x[s] = lo[s] + (idx % cnt[s]) * step;
		idx /= cnt[s];
	}
	if (c < 0 || c >= t->dims[0] || n < 0 || n >= t->dims[t->rank - 1])
		return -1;
	src = c * t->es + b + n * (int64_t)st[t->rank - 2];
	for (uint32_t s = 0; s < ns; s++) {
		if (x[s] < 0 || x[s] >= t->dims[s + 1])
			return -1;
		src += x[s] * (int64_t)st[s];
	}
	return src;
}

static inline uint32_t column_bytes(const struct icase *t)
{
	return t->pixels * t->channels * t->es;
}

#endif
