/* SPDX-License-Identifier: MIT */
/*
 * Fuzzing oracle for tensor maps and the copy engine's tensor copies
 * (`make fuzz` target tmap; test_fuzz replays its seeds and
 * tests/fuzz/regressions/tmap/): a 128-byte tensor map, coordinates and a
 * shared-memory destination go to one CP.ASYNC.BULK.TENSOR (load) or
 * CP.ASYNC.BULK.TENSOR.GLOBAL (store) of a small kernel, and the outcome
 * must be exactly what the tensor map's definition in uapi/vgpu_hw.h
 * gives, computed here element by element (tmap_expect), independently of
 * the copy engine's row, run and memcpy paths:
 *
 *   - a map that breaks a rule of struct vgpu_tensor_map: TENSOR_MAP at
 *     the map's address; a map not 64-byte aligned: MISALIGNED;
 *   - a box larger than 4 GiB or than the CTA's shared memory from the
 *     destination on: SMEM_RANGE; a destination not 16-aligned:
 *     ASYNC_COPY;
 *   - an in-bounds element outside global memory: GLOBAL_FAULT;
 *   - else a load brings the box into shared memory, out-of-bounds
 *     elements as zeros (the kernel copies it out for comparison), and a
 *     store writes exactly the in-bounds elements, in box order (strides
 *     may alias), and nothing else.
 *
 * In im2col mode (byte 0 bit 6) the copy is CP.ASYNC.BULK.TENSOR[.GLOBAL]
 * .IM2COL of rank 3 to 5, its offsets the tail's first three 16-bit
 * words, the walk computed here pixel by pixel from uapi/vgpu_hw.h (the
 * operand rules raising ASYNC_COPY at the map's address).
 *
 * A store with byte 0 bit 7 is a tensor reduction instead,
 * CP.REDUCE.ASYNC.BULK.TENSOR[.IM2COL].XOR: the store's walk, each
 * in-bounds element XORed with its box element (in any order: aliasing
 * elements XOR twice); a map whose dtype is not u32, s32 or u64 raises
 * TENSOR_MAP at the map.  A tile-mode box whose first coordinate is not
 * a multiple of 16 bytes, and a store's or reduction's that starts at a
 * negative coordinate, raise ASYNC_COPY there (as an H200 faults on each).
 *
 * Input:
 *   byte 0      bit 0 store; bits 1-3 rank - 1 (mod 5; im2col: 3 + mod
 *               3); bit 4 "tame": the map made valid and small (see
 *               tmap_tame) so that most inputs reach the copy; bit 5
 *               random scheduling; bit 6 im2col mode; bit 7 (a store)
 *               a reduction
 *   byte 1      the map's offset in global memory (raw: & 0x7f)
 *   bytes 2-3   the shared-memory destination, less 16 (the kernel's
 *               mbarrier lies below it)
 *   bytes 4-23  five coordinates (int32)
 *   bytes 24-151 the tensor map
 *   the rest    global memory's initial contents after the map's 128 bytes
 * Returns 0, or 1 after a message on stderr.
 */
#ifndef VGPU_TMAP_ORACLE_H
#define VGPU_TMAP_ORACLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmem.h"
#include "oracle.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"
#include "vgpu_hw.h"

#define TMAP_HDR 24
#define TMAP_SPAN (64u * 1024u)	   /* each of the two regions */
#define TMAP_SMEM (32u * 1024u + 16u) /* the launch's shared memory */
#define TMAP_TILE 0x40u		   /* the copy-out / store source in region 1 */

struct tmap_case {
	bool store, tame, random, im2col, reduce;
	uint32_t rank, map_off, smem;
	int32_t coord[VGPU_TMAP_MAX_RANK];
	uint32_t off[3]; /* im2col loads: the offsets (W, H, D) */
	struct vgpu_tensor_map map;
	uint8_t mem[2][TMAP_SPAN]; /* the tensor's region, the kernel's */
	uint64_t base[2];
};

/* The result the definition gives: 0, or an exception code. */
struct tmap_want {
	uint32_t code;
	uint64_t addr; /* for the exceptions raised at the copy's issue */
	uint64_t bytes;
};

static inline uint32_t tmap_elems(const struct vgpu_tensor_map *m, uint32_t d)
{
	return (m->box[d] + m->elem_strides[d] - 1) / m->elem_strides[d];
}

/*
 * Im2col, after the tile-mode taming: channels of 16-byte multiples from
 * a 16-byte-aligned channel coordinate, up to 48 pixels, corners in
 * [-3, 3] around a box that is not empty, the filter base mostly inside
 * it, small offsets (a store: the box inside the tensor, coordinates
 * >= 0).
 */
static inline void tmap_tame_im2col(struct tmap_case *c)
{
	struct vgpu_tensor_map *m = &c->map;
	uint32_t per16 = 16 / m->elem_size, ns = c->rank - 2;

	m->mode = VGPU_TMAP_IM2COL;
	memset(m->box, 0, sizeof(m->box));
	m->channels = (uint16_t)(per16 * (1 + m->channels % 4));
	m->pixels = (uint16_t)(1 + m->pixels % 48);
	c->coord[0] = (int32_t)per16 * ((c->coord[0] % 4 + 4) % 4 - 1);
	for (uint32_t s = 0; s < 3; s++) {
		int32_t lo = s < ns ? m->lower[s] % 4 : 0, up = s < ns ? m->upper[s] % 4 : 0;
		int32_t hi;

		if (c->store) {
			lo = lo < 0 ? -lo : lo;
			up = up > 0 ? -up : up;
		}
		if ((int64_t)m->dims[s + 1] - 1 + up < lo)
			lo = up = 0;
		m->lower[s] = (int16_t)lo;
		m->upper[s] = (int16_t)up;
		hi = (int32_t)m->dims[s + 1] - 1 + up;
		if (s < ns && c->coord[s + 1] % 8) /* 7 in 8: inside the box */
			c->coord[s + 1] = lo + (int32_t)((uint32_t)c->coord[s + 1] % (uint32_t)(hi - lo + 1));
		c->off[s] = s < ns && !c->store ? c->off[s] % 4 : 0;
	}
	if (c->store)
		for (uint32_t d = 0; d < c->rank; d++)
			c->coord[d] = c->coord[d] < 0 ? -c->coord[d] : c->coord[d];
}

/* Valid and small: the copy is reached, in and out of bounds. */
static inline void tmap_tame(struct tmap_case *c)
{
	struct vgpu_tensor_map *m = &c->map;
	uint32_t boxmax = c->rank <= 2 ? 32 : 6;

	m->magic = VGPU_TMAP_MAGIC;
	m->rank = (uint8_t)c->rank;
	m->elem_size = (uint8_t)(1u << (m->elem_size & 3));
	m->oob_fill = m->mode = 0;
	m->swizzle = m->interleave = m->pad1 = 0;
	if (m->dtype && vgpu_tmap_dt_size(m->dtype) != m->elem_size)
		m->dtype = 0;
	if (c->reduce && m->elem_size >= 4) /* a type the reduction takes */
		m->dtype = (uint8_t)(m->elem_size == 4 ? (m->dtype & 1 ? VGPU_TMAP_DT_S32 :
								       VGPU_TMAP_DT_U32) :
					 (m->dtype & 1 ? VGPU_TMAP_DT_S64 : VGPU_TMAP_DT_U64));
	if (!c->im2col) {
		m->channels = m->pixels = 0;
		memset(m->lower, 0, sizeof(m->lower));
		memset(m->upper, 0, sizeof(m->upper));
	}
	m->base = c->base[0] + 128 + ((m->base % 16384) & ~15ull);
	for (uint32_t d = 0; d < VGPU_TMAP_MAX_RANK; d++) {
		uint32_t raw = (uint32_t)c->coord[d];

		m->dims[d] = 1 + m->dims[d] % 24;
		m->box[d] = 1 + m->box[d] % boxmax;
		m->elem_strides[d] = m->elem_strides[d] & 0x80 ? 1 + m->elem_strides[d] % 8 : 1;
		if (d)
			m->strides[d - 1] = 16 * (1 + m->strides[d - 1] % 48);
		c->coord[d] = (int32_t)(raw % (m->dims[d] + m->box[d] + 1)) -
			      (int32_t)(m->box[d] / 2);
	}
	/* most tile boxes start at a 16-byte boundary of a row, most stores'
	 * inside the tensor (tmap_oracle) */
	if (!c->im2col && c->coord[0] % 4) {
		c->coord[0] -= c->coord[0] % (int32_t)(16 / m->elem_size);
		for (uint32_t d = 0; c->store && d < c->rank; d++)
			c->coord[d] = c->coord[d] < 0 ? -c->coord[d] : c->coord[d];
	}
	c->map_off = 0;
	c->smem = 16 * (1 + c->smem % 512);
	if (c->im2col)
		tmap_tame_im2col(c);
}

static inline int tmap_parse(const uint8_t *d, size_t n, struct tmap_case *c)
{
	size_t tail;

	if (n < TMAP_HDR + sizeof(c->map))
		return 0;
	memset(c, 0, sizeof(*c));
	c->store = d[0] & 1;
	c->rank = 1 + (d[0] >> 1 & 7) % 5;
	c->tame = d[0] & 0x10;
	c->random = d[0] & 0x20;
	c->im2col = d[0] & 0x40;
	c->reduce = c->store && (d[0] & 0x80);
	if (c->im2col)
		c->rank = 3 + (d[0] >> 1 & 7) % 3;
	c->map_off = d[1] & 0x7f;
	/* past the mbarrier at 0: a copy onto it is undefined, not a finding */
	c->smem = 16 + (uint32_t)(d[2] | d[3] << 8);
	memcpy(c->coord, d + 4, sizeof(c->coord));
	memcpy(&c->map, d + TMAP_HDR, sizeof(c->map));
	tail = n - TMAP_HDR - sizeof(c->map);
	for (uint32_t i = 0; c->im2col && !c->store && i < 3 && 2 * i + 1 < tail; i++)
		c->off[i] = d[TMAP_HDR + sizeof(c->map) + 2 * i] |
			    d[TMAP_HDR + sizeof(c->map) + 2 * i + 1] << 8;
	if (tail > TMAP_SPAN - 256)
		tail = TMAP_SPAN - 256;
	memcpy(c->mem[0] + 256, d + TMAP_HDR + sizeof(c->map), tail);
	return 1;
}

/* Host pointer of [addr, addr + len) in the case's memory, or NULL. */
static inline uint8_t *tmap_at(uint8_t mem[2][TMAP_SPAN], const uint64_t *base,
			       uint64_t addr, uint64_t len)
{
	for (int r = 0; r < 2; r++)
		if (addr >= base[r] && addr - base[r] <= TMAP_SPAN &&
		    len <= TMAP_SPAN - (addr - base[r]))
			return mem[r] + (addr - base[r]);
	return NULL;
}

/*
 * The box element by element, dimension 0 fastest (the order the
 * definition gives shared memory): @fn(element index, its address or
 * NULL when out of bounds).  Returns false if @fn does.
 */
static inline bool tmap_walk_tile(const struct vgpu_tensor_map *m, const int32_t *coord,
				  bool (*fn)(void *opaque, uint64_t e, const uint64_t *addr),
				  void *opaque)
{
	uint32_t n[VGPU_TMAP_MAX_RANK], i[VGPU_TMAP_MAX_RANK] = { 0 };
	uint64_t total = 1;

	for (uint32_t d = 0; d < m->rank; d++) {
		n[d] = tmap_elems(m, d);
		total *= n[d];
	}
	for (uint64_t e = 0; e < total; e++) {
		uint64_t addr = m->base;
		bool inb = true;

		for (uint32_t d = 0; d < m->rank; d++) {
			int64_t x = (int64_t)coord[d] + (int64_t)i[d] * m->elem_strides[d];

			if (x < 0 || x >= m->dims[d])
				inb = false;
			else
				addr += (uint64_t)x * (d ? m->strides[d - 1] : m->elem_size);
		}
		if (!fn(opaque, e, inb ? &addr : NULL))
			return false;
		for (uint32_t d = 0; d < m->rank && ++i[d] == n[d]; d++)
			i[d] = 0;
	}
	return true;
}

/*
 * Im2col (uapi/vgpu_hw.h): pixel by pixel from the filter base plus the
 * offsets @off, W stepping first inside the shifted bounding box, then H,
 * D and N; each pixel's channels from coord[0]; @fn as tmap_walk_tile's.
 */
static inline bool tmap_walk_im2col(const struct vgpu_tensor_map *m, const int32_t *coord,
				    const uint32_t *off,
				    bool (*fn)(void *opaque, uint64_t e, const uint64_t *addr),
				    void *opaque)
{
	uint32_t ns = m->rank - 2u;
	int64_t x[3] = { 0 }, n = coord[m->rank - 1];

	for (uint32_t s = 0; s < ns; s++)
		x[s] = (int64_t)coord[s + 1] + off[s];
	for (uint64_t p = 0; p < m->pixels; p++) {
		bool pin = n >= 0 && n < m->dims[m->rank - 1];
		uint64_t at = m->base + (pin ? (uint64_t)n * m->strides[m->rank - 2] : 0);
		uint32_t s;

		for (s = 0; s < ns; s++) {
			pin = pin && x[s] >= 0 && x[s] < m->dims[s + 1];
			at += pin ? (uint64_t)x[s] * m->strides[s] : 0;
		}
		for (uint32_t ch = 0; ch < m->channels; ch++) {
			int64_t c = (int64_t)coord[0] + ch;
			uint64_t addr = at + (uint64_t)c * m->elem_size;
			bool in = pin && c >= 0 && c < m->dims[0];

			if (!fn(opaque, p * m->channels + ch, in ? &addr : NULL))
				return false;
		}
		for (s = 0; s < ns; s++) {
			x[s] += m->elem_strides[s + 1];
			if (x[s] <= (int64_t)m->dims[s + 1] - 1 + m->upper[s] + off[s])
				break;
			x[s] = m->lower[s] + (int64_t)off[s];
		}
		if (s == ns)
			n += m->elem_strides[m->rank - 1];
	}
	return true;
}

/* The copy of @c element by element, in shared memory's order. */
static inline bool tmap_walk(const struct tmap_case *c,
			     bool (*fn)(void *opaque, uint64_t e, const uint64_t *addr),
			     void *opaque)
{
	if (c->im2col)
		return tmap_walk_im2col(&c->map, c->coord, c->off, fn, opaque);
	return tmap_walk_tile(&c->map, c->coord, fn, opaque);
}

struct tmap_apply {
	struct tmap_case *c;
	const uint8_t *src; /* store: the box as shared memory held it */
	uint8_t *tile;	    /* load: the box as it must arrive */
};

static inline bool tmap_inside(void *opaque, uint64_t e, const uint64_t *addr)
{
	struct tmap_apply *a = opaque;

	(void)e;
	return !addr || tmap_at(a->c->mem, a->c->base, *addr, a->c->map.elem_size);
}

static inline bool tmap_move(void *opaque, uint64_t e, const uint64_t *addr)
{
	struct tmap_apply *a = opaque;
	uint32_t es = a->c->map.elem_size;
	uint8_t *g = addr ? tmap_at(a->c->mem, a->c->base, *addr, es) : NULL;

	if (a->c->reduce) {
		for (uint32_t b = 0; g && b < es; b++)
			g[b] ^= a->src[e * es + b];
	} else if (a->c->store) {
		if (g)
			memcpy(g, a->src + e * es, es);
	} else if (g) {
		memcpy(a->tile + e * es, g, es);
	} else {
		memset(a->tile + e * es, 0, es);
	}
	return true;
}

/* Does @m keep the rules of its mode (uapi/vgpu_hw.h) for a copy of @c? */
static inline bool tmap_rules(const struct tmap_case *c, const struct vgpu_tensor_map *m)
{
	int32_t lim = c->rank == 3 ? 1 << 15 : c->rank == 4 ? 1 << 7 : 1 << 4;
	bool ok = m->magic == VGPU_TMAP_MAGIC && m->rank == c->rank &&
		  m->mode == (c->im2col ? VGPU_TMAP_IM2COL : VGPU_TMAP_TILE) &&
		  (m->elem_size == 1 || m->elem_size == 2 || m->elem_size == 4 ||
		   m->elem_size == 8) &&
		  !m->oob_fill && !m->swizzle && !m->interleave && !m->pad1 &&
		  (!m->dtype || vgpu_tmap_dt_size(m->dtype) == m->elem_size) &&
		  m->base % 16 == 0;

	for (uint32_t d = 0; ok && d < c->rank; d++)
		ok = m->dims[d] >= 1 && m->elem_strides[d] >= 1 && m->elem_strides[d] <= 8 &&
		     (!d || m->strides[d - 1] % 16 == 0) &&
		     (c->im2col || (m->box[d] >= 1 && m->box[d] <= 256));
	if (!c->im2col)
		return ok && !m->channels && !m->pixels && !m->lower[0] && !m->lower[1] &&
		       !m->lower[2] && !m->upper[0] && !m->upper[1] && !m->upper[2];
	for (uint32_t d = 0; ok && d < VGPU_TMAP_MAX_RANK; d++)
		ok = !m->box[d];
	ok = ok && m->channels >= 1 && m->channels <= 256 && m->channels * m->elem_size % 16 == 0 &&
	     m->pixels >= 1 && m->pixels <= 1024;
	for (uint32_t s = 0; ok && s < 3; s++)
		ok = s >= c->rank - 2 ? !m->lower[s] && !m->upper[s] :
				       m->lower[s] >= -lim && m->lower[s] < lim &&
				       m->upper[s] >= -lim && m->upper[s] < lim &&
				       (int64_t)m->dims[s + 1] - 1 + m->upper[s] >= m->lower[s];
	return ok;
}

/* An im2col copy's operands (offsets, filter base, channel coordinate, a
 * store's box and coordinates) as uapi/vgpu_hw.h allows them. */
static inline bool tmap_im2col_operands(const struct tmap_case *c)
{
	const struct vgpu_tensor_map *m = &c->map;
	uint32_t offmax = c->rank == 3 ? 0xffff : c->rank == 4 ? 0xff : 0x1f;

	for (uint32_t s = 0; s < c->rank - 2; s++)
		if (c->off[s] > offmax || c->coord[s + 1] < m->lower[s] ||
		    c->coord[s + 1] > (int64_t)m->dims[s + 1] - 1 + m->upper[s] ||
		    (c->store && (m->lower[s] < 0 || m->upper[s] > 0)))
			return false;
	if ((int64_t)c->coord[0] * m->elem_size % 16)
		return false;
	for (uint32_t d = 0; c->store && d < c->rank; d++)
		if (c->coord[d] < 0)
			return false;
	return true;
}

/* What the definition says the copy of @c does (the map as written). */
static inline struct tmap_want tmap_expect(const struct tmap_case *c)
{
	const struct vgpu_tensor_map *m = &c->map;
	struct tmap_want w = { 0, c->base[0] + c->map_off, 1 };
	struct tmap_apply a = { (struct tmap_case *)c, NULL, NULL };

	if (c->map_off % 64) {
		w.code = VGPU_EXC_MISALIGNED;
		return w;
	}
	if (!tmap_rules(c, m) ||
	    (c->reduce && m->dtype != VGPU_TMAP_DT_U32 && m->dtype != VGPU_TMAP_DT_S32 &&
	     m->dtype != VGPU_TMAP_DT_U64)) {
		w.code = VGPU_EXC_TENSOR_MAP;
		return w;
	}
	for (uint32_t d = 0; c->store && !c->im2col && d < c->rank; d++)
		if (c->coord[d] < 0) {
			w.code = VGPU_EXC_ASYNC_COPY;
			return w;
		}
	if (!c->im2col && (int64_t)c->coord[0] * m->elem_size % 16) {
		w.code = VGPU_EXC_ASYNC_COPY;
		return w;
	}
	if (c->im2col && !tmap_im2col_operands(c)) {
		w.code = VGPU_EXC_ASYNC_COPY;
		return w;
	}
	w.bytes = m->elem_size;
	if (c->im2col)
		w.bytes *= (uint64_t)m->channels * m->pixels;
	for (uint32_t d = 0; !c->im2col && d < c->rank; d++)
		w.bytes *= tmap_elems(m, d);
	w.addr = c->smem;
	if (w.bytes > UINT32_MAX)
		w.code = VGPU_EXC_SMEM_RANGE;
	else if (c->smem % 16)
		w.code = VGPU_EXC_ASYNC_COPY;
	else if (c->smem + w.bytes > TMAP_SMEM)
		w.code = VGPU_EXC_SMEM_RANGE;
	else if (!tmap_walk(c, tmap_inside, &a))
		w.code = VGPU_EXC_GLOBAL_FAULT;
	return w;
}

/*
 * The kernel: the warp fills the box's shared memory from region 1 +
 * TMAP_TILE (a store's source; a load must overwrite every byte of it,
 * zero-filled elements included), thread 0 issues the copy (a load waits
 * on an mbarrier at shared 0, a store on its bulk group), and a load's
 * box goes back to region 1 + TMAP_TILE, a byte a lane.  Region 1 holds
 * the arguments: +0 destination, +4 box bytes, +8 coordinates, +0x20 the
 * map's address, +0x28 the im2col offsets.
 */
static inline struct vgpu_prog *tmap_prog(bool store, uint32_t rank, bool im2col, bool reduce)
{
	static struct vgpu_prog *progs[2][3][VGPU_TMAP_MAX_RANK];
	struct vgpu_prog **p = &progs[im2col][store + reduce][rank - 1];
	const char *mode = im2col ? ".IM2COL" : "";
	char src[2048];

	if (*p)
		return *p;
	snprintf(src, sizeof(src),
		 ".kernel tmap\n.param ptr args\n.shared bar, 16\n"
		 "  LDP.64 R2, [args] ;\n  S2R R0, SR_TID ;\n"
		 "  ISETP.EQ.U32 P6, R0, 0x0 ;\n"
		 "  LDG.32 R6, [R2+0x0] ;\n  LDG.32 R12, [R2+0x4] ;\n"
		 "  LDG.32 R20, [R2+0x8] ;\n  LDG.32 R21, [R2+0xc] ;\n"
		 "  LDG.32 R22, [R2+0x10] ;\n  LDG.32 R23, [R2+0x14] ;\n"
		 "  LDG.32 R24, [R2+0x18] ;\n  LDG.64 R10, [R2+0x20] ;\n"
		 "  LDG.32 R26, [R2+0x28] ;\n  LDG.32 R27, [R2+0x2c] ;\n"
		 "  LDG.32 R28, [R2+0x30] ;\n"
		 "  MOV R4, 0x0 ;\n  MOV R13, R0 ;\n"
		 "fill:\n  ISETP.GE.U32 P2, R13, R12 ;\n  @P2 BRA filled ;\n"
		 "  IADD R16, R2, R13 ;\n  MOV R17, R3 ;\n"
		 "  LDG.U8 R15, [R16+0x40] ;\n  IADD R14, R6, R13 ;\n"
		 "  STS.U8 [R14], R15 ;\n  IADD R13, R13, 0x20 ;\n  BRA fill ;\n"
		 "filled:\n  MOV R13, R0 ;\n%s",
		 store ? "  BAR.SYNC 0x0 ;\n" :
		 "  @P6 MBAR.INIT [R4], 0x1 ;\n  BAR.SYNC 0x0 ;\n");
	snprintf(src + strlen(src), sizeof(src) - strlen(src),
		 reduce ?
		 "  @P6 CP.REDUCE.ASYNC.BULK.TENSOR%s.XOR.%uD [R10], R20, [R6]%s ;\n"
		 "  @P6 CP.ASYNC.BULK.COMMIT_GROUP ;\n"
		 "  @P6 CP.ASYNC.BULK.WAIT_GROUP 0x0 ;\n  EXIT ;\n" :
		 store ?
		 "  @P6 CP.ASYNC.BULK.TENSOR.GLOBAL%s.%uD [R10], R20, [R6]%s ;\n"
		 "  @P6 CP.ASYNC.BULK.COMMIT_GROUP ;\n"
		 "  @P6 CP.ASYNC.BULK.WAIT_GROUP 0x0 ;\n  EXIT ;\n" :
		 "  @P6 CP.ASYNC.BULK.TENSOR%s.%uD [R6], [R10], R20, [R4]%s ;\n"
		 "  @P6 MBAR.ARRIVE.EXPECT_TX _, [R4], R12 ;\n"
		 "wait:\n  MBAR.TRY_WAIT.PARITY P1, [R4], RZ ;\n  @!P1 BRA wait ;\n"
		 "out:\n  ISETP.GE.U32 P2, R13, R12 ;\n  @P2 EXIT ;\n"
		 "  IADD R14, R6, R13 ;\n  LDS.U8 R15, [R14] ;\n"
		 "  IADD R16, R2, R13 ;\n  MOV R17, R3 ;\n"
		 "  STG.U8 [R16+0x40], R15 ;\n  IADD R13, R13, 0x20 ;\n  BRA out ;\n",
		 mode, rank, im2col && !store ? ", R26" : "");
	*p = oracle_prog(src, NULL);
	return *p;
}

static inline int tmap_oracle(const uint8_t *data, size_t size)
{
	struct tmap_case *c = malloc(sizeof(*c)), *want = malloc(sizeof(*c));
	struct vgpu_exception_record exc;
	struct vgpu_launch l = { 0 };
	struct vgpu_hostmem hm;
	struct tmap_want w;
	uint8_t *buf[2], *tile = NULL;
	uint64_t mapaddr;
	struct vgpu_sm *sm = NULL;
	int bad = 0, rc;

	if (!c || !want || !tmap_parse(data, size, c))
		goto out;
	vgpu_hostmem_init(&hm, 0x100000000ull, 0x200000000ull);
	for (int r = 0; r < 2; r++)
		if (vgpu_hostmem_alloc(&hm, TMAP_SPAN, &c->base[r], &buf[r]))
			goto out_mem;
	if (c->tame)
		tmap_tame(c);
	memcpy(c->mem[0] + c->map_off, &c->map, sizeof(c->map));
	/* region 1: the arguments, and a store's source */
	mapaddr = c->base[0] + c->map_off;
	memcpy(c->mem[1], &c->smem, 4);
	memcpy(c->mem[1] + 8, c->coord, sizeof(c->coord));
	memcpy(c->mem[1] + 0x20, &mapaddr, 8);
	memcpy(c->mem[1] + 0x28, c->off, sizeof(c->off));
	for (uint32_t i = TMAP_TILE; i < TMAP_SPAN; i++)
		c->mem[1][i] = (uint8_t)(i * 131 + 7);
	w = tmap_expect(c);
	/* the bytes to fill, expect and copy out: none where the issue fails */
	memcpy(c->mem[1] + 4,
	       &(uint32_t){ !w.code || w.code == VGPU_EXC_GLOBAL_FAULT ? (uint32_t)w.bytes : 0 },
	       4);
	memcpy(buf[0], c->mem[0], TMAP_SPAN);
	memcpy(buf[1], c->mem[1], TMAP_SPAN);
	*want = *c;
	if (!w.code) {
		struct tmap_apply a = { want, c->mem[1] + TMAP_TILE, NULL };

		tile = calloc(1, w.bytes);
		a.tile = tile;
		if (!tile)
			goto out_mem;
		tmap_walk(c, tmap_move, &a);
		if (!c->store)
			memcpy(want->mem[1] + TMAP_TILE, tile, w.bytes);
	}
	sm = vgpu_sm_new(NULL);
	if (!sm)
		goto out_mem;
	l.prog = tmap_prog(c->store, c->rank, c->im2col, c->reduce);
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = 32;
	l.block[1] = l.block[2] = 1;
	l.smem_bytes = TMAP_SMEM;
	l.params = &c->base[1];
	l.param_size = 8;
	l.flags = c->random ? VGPU_LAUNCH_RANDOM_SCHED : 0;
	l.seed = data[1];
	l.budget = 200000;
	l.mem = &vgpu_hostmem_ops;
	l.mem_opaque = &hm;
	rc = vgpu_sm_launch(sm, &l, &exc);
	if (rc != (w.code ? -1 : 0) || (rc && exc.code != w.code)) {
		bad = ORACLE_FAIL("%s of rank %u: want %s, got %s (%s)\n",
				  c->reduce ? "reduction" : c->store ? "store" : "load", c->rank,
				  w.code ? vgpu_exc_name(w.code) : "completion",
				  rc ? vgpu_exc_name(exc.code) : "completion",
				  rc ? exc.msg : "");
	} else if (w.code && w.code != VGPU_EXC_GLOBAL_FAULT && exc.addr != w.addr) {
		bad = ORACLE_FAIL("%s at 0x%llx, want 0x%llx (%s)\n", vgpu_exc_name(w.code),
				  (unsigned long long)exc.addr,
				  (unsigned long long)w.addr, exc.msg);
	} else if (!w.code) {
		for (int r = 0; r < 2 && !bad; r++) {
			size_t i = 0;

			if (!memcmp(buf[r], want->mem[r], TMAP_SPAN))
				continue;
			while (buf[r][i] == want->mem[r][i])
				i++;
			bad = ORACLE_FAIL("%s of rank %u: region %d differs at +0x%zx: 0x%02x, want 0x%02x\n",
					  c->reduce ? "reduction" : c->store ? "store" : "load", c->rank, r, i,
					  buf[r][i], want->mem[r][i]);
		}
	}
	vgpu_sm_free(sm);
out_mem:
	free(tile);
	vgpu_hostmem_fini(&hm);
out:
	free(c);
	free(want);
	return bad;
}

#endif
