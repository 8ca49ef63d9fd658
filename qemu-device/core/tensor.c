/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The TMA engine's tensor maps and walks: the checks of a map
 * (struct vgpu_tensor_map, uapi/vgpu_hw.h) when a tensor copy issues, and
 * the data movement when it completes, in tile mode (a box, dimension 0
 * fastest) and in im2col mode (pixels of a bounding box, W fastest, then
 * H, D and N; PTX ISA 5.5.4).  A reduction walks as a store does and
 * reduces each in-bounds element with an atomic of the memory's.  The
 * copy engine (async.c) queues the operations and calls
 * vgpu_tensor_move() at their completion.
 */
#include <stdio.h>
#include <string.h>

#include "core_priv.h"

/* ---- the maps ---- */

/* The corners' limit at @rank: |corner| < 2^15, 2^7, 2^4 (PTX ISA 5.5.4.1). */
static int32_t corner_limit(uint32_t rank)
{
	return rank == 3 ? 1 << 15 : rank == 4 ? 1 << 7 : 1 << 4;
}

/* What breaks the tile-mode rules of @m, or NULL. */
static const char *tile_rule(const struct vgpu_tensor_map *m)
{
	if (m->channels || m->pixels || m->lower[0] || m->lower[1] || m->lower[2] ||
	    m->upper[0] || m->upper[1] || m->upper[2])
		return "im2col fields are not zero in tile mode";
	for (uint32_t d = 0; d < m->rank; d++)
		if (!m->box[d] || m->box[d] > VGPU_TMAP_MAX_BOX)
			return "a box size is outside 1..256";
	return NULL;
}

/* What breaks the im2col-mode rules of @m, or NULL. */
static const char *im2col_rule(const struct vgpu_tensor_map *m)
{
	int32_t lim = corner_limit(m->rank);

	if (m->rank < 3)
		return "im2col needs rank 3, 4 or 5";
	for (uint32_t d = 0; d < VGPU_TMAP_MAX_RANK; d++)
		if (m->box[d])
			return "a box size is not zero in im2col mode";
	if (!m->channels || m->channels > VGPU_TMAP_MAX_CHANNELS)
		return "channels per pixel outside 1..256";
	if (m->channels * m->elem_size % 16)
		return "channels per pixel are not a multiple of 16 bytes";
	if (!m->pixels || m->pixels > VGPU_TMAP_MAX_PIXELS)
		return "pixels per column outside 1..1024";
	for (uint32_t s = 0; s < 3; s++) {
		if (s >= m->rank - 2u) {
			if (m->lower[s] || m->upper[s])
				return "a corner of a dimension past the rank is not zero";
			continue;
		}
		if (m->lower[s] < -lim || m->lower[s] >= lim || m->upper[s] < -lim ||
		    m->upper[s] >= lim)
			return "a corner is outside the rank's range";
		if ((int64_t)m->dims[s + 1] - 1 + m->upper[s] < m->lower[s])
			return "the bounding box is empty";
	}
	return NULL;
}

/*
 * Read and check the tensor map at @addr for a copy of rank @rank in mode
 * @mode (VGPU_TMAP_*): the rules of uapi/vgpu_hw.h.
 */
bool vgpu_tensor_map_load(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			  uint64_t addr, uint32_t rank, uint32_t mode,
			  struct vgpu_tensor_map *m)
{
	const char *why = NULL;
	uint64_t fault;

	if (addr % 64) {
		vgpu_raise(c, w, VGPU_EXC_MISALIGNED, em,
			   "tensor map at 0x%llx is not 64-byte aligned",
			   (unsigned long long)addr);
		c->sm->exc->addr = addr;
		return false;
	}
	if (vgpu_gmem_xfer(c->l, addr, m, sizeof(*m), false, &fault)) {
		vgpu_raise(c, w, VGPU_EXC_GLOBAL_FAULT, em,
			   "global memory fault: reading the tensor map at 0x%llx",
			   (unsigned long long)addr);
		c->sm->exc->addr = fault;
		return false;
	}
	if (m->magic != VGPU_TMAP_MAGIC)
		why = "bad magic";
	else if (m->mode > VGPU_TMAP_IM2COL)
		why = "unknown mode";
	else if (m->mode != mode)
		why = mode == VGPU_TMAP_TILE ? "an im2col map, the instruction copies a tile" :
					       "a tile map, the instruction is im2col";
	else if (m->rank != rank)
		why = "rank differs from the instruction's";
	else if (m->elem_size != 1 && m->elem_size != 2 && m->elem_size != 4 &&
		 m->elem_size != 8)
		why = "element size is not 1, 2, 4 or 8";
	else if (m->oob_fill || m->swizzle || m->interleave || m->pad1)
		why = "reserved fields are not zero";
	else if (m->dtype > VGPU_TMAP_DT_MAX)
		why = "unknown element type";
	else if (m->dtype && vgpu_tmap_dt_size(m->dtype) != m->elem_size)
		why = "the element type's size is not elem_size";
	else if (m->base % 16)
		why = "base is not 16-byte aligned";
	for (uint32_t d = 0; !why && d < rank; d++) {
		if (!m->dims[d])
			why = "a dimension is 0";
		else if (!m->elem_strides[d] || m->elem_strides[d] > VGPU_TMAP_MAX_ELEM_STRIDE)
			why = "an element stride is outside 1..8";
		else if (d && m->strides[d - 1] % 16)
			why = "a stride is not a multiple of 16";
	}
	if (!why)
		why = mode == VGPU_TMAP_TILE ? tile_rule(m) : im2col_rule(m);
	if (!why)
		return true;
	vgpu_raise(c, w, VGPU_EXC_TENSOR_MAP, em, "tensor map at 0x%llx: %s",
		   (unsigned long long)addr, why);
	c->sm->exc->addr = addr;
	return false;
}

/* ---- reductions ---- */

static const char *const red_name[] = { "add", "min", "max", "inc", "dec", "and", "or", "xor" };
static const char *const dt_name[] = {
	"untyped", "u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32.ftz", "f64",
	"bf16", "tf32", "tf32.ftz",
};

/*
 * The atomic operation of reduction @red (VGPU_MOD_TRED_*) on elements of
 * type @dt, or -1 where PTX has no such pair (PTX ISA, cp.reduce.async
 * .bulk.tensor: .add of .u32 .s32 .u64 .f32 .f16 .bf16; .min and .max of
 * .u32 .s32 .u64 .s64 .f16 .bf16; .inc and .dec of .u32; .and .or .xor
 * of .b32 .b64: an H200 takes them of u32, s32 and u64 maps and faults on
 * an s64 map's, as on its .add), and .add of f64, which PTX's table
 * leaves out and an H200 does (tests/cuda/real-gpu/tensor-reduce-h200-
 * 2026-11-30: the other pairs fault there).  .add of an f32 map keeps
 * subnormals, of an f32.ftz map flushes them (measured there too).
 */
static int red_op(uint32_t red, uint32_t dt)
{
	bool u32 = dt == VGPU_TMAP_DT_U32, s32 = dt == VGPU_TMAP_DT_S32;
	bool u64 = dt == VGPU_TMAP_DT_U64, s64 = dt == VGPU_TMAP_DT_S64;
	bool f16 = dt == VGPU_TMAP_DT_F16, bf16 = dt == VGPU_TMAP_DT_BF16;
	bool max = red == VGPU_MOD_TRED_MAX;

	switch (red) {
	case VGPU_MOD_TRED_ADD:
		if (u32 || s32 || u64)
			return VGPU_ATOMIC_ADD;
		if (dt == VGPU_TMAP_DT_F32_FTZ)
			return VGPU_ATOMIC_FADD_FTZ;
		if (dt == VGPU_TMAP_DT_F32 || dt == VGPU_TMAP_DT_F64 || f16)
			return VGPU_ATOMIC_FADD;
		return bf16 ? VGPU_ATOMIC_BFADD : -1;
	case VGPU_MOD_TRED_MIN:
	case VGPU_MOD_TRED_MAX:
		if (u32 || u64)
			return max ? VGPU_ATOMIC_MAX_U : VGPU_ATOMIC_MIN_U;
		if (s32 || s64)
			return max ? VGPU_ATOMIC_MAX_S : VGPU_ATOMIC_MIN_S;
		if (f16)
			return max ? VGPU_ATOMIC_FMAX : VGPU_ATOMIC_FMIN;
		return bf16 ? (max ? VGPU_ATOMIC_BFMAX : VGPU_ATOMIC_BFMIN) : -1;
	case VGPU_MOD_TRED_INC:
		return u32 ? VGPU_ATOMIC_INC : -1;
	case VGPU_MOD_TRED_DEC:
		return u32 ? VGPU_ATOMIC_DEC : -1;
	case VGPU_MOD_TRED_AND:
		return u32 || s32 || u64 ? VGPU_ATOMIC_AND : -1;
	case VGPU_MOD_TRED_OR:
		return u32 || s32 || u64 ? VGPU_ATOMIC_OR : -1;
	case VGPU_MOD_TRED_XOR:
		return u32 || s32 || u64 ? VGPU_ATOMIC_XOR : -1;
	default:
		return -1;
	}
}

/*
 * Does map @m (at @addr, checked) have an element type that reduction
 * @red takes?  TENSOR_MAP if not, as for a bad map.
 */
bool vgpu_tensor_red_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			const struct vgpu_tensor_map *m, uint64_t addr, uint32_t red)
{
	if (red < sizeof(red_name) / sizeof(red_name[0]) && red_op(red, m->dtype) >= 0)
		return true;
	vgpu_raise(c, w, VGPU_EXC_TENSOR_MAP, em,
		   "tensor map at 0x%llx: a reduction .%s of %s elements (PTX has none)",
		   (unsigned long long)addr,
		   red < sizeof(red_name) / sizeof(red_name[0]) ? red_name[red] : "?",
		   dt_name[m->dtype]);
	c->sm->exc->addr = addr;
	return false;
}

/*
 * Where a tile-mode copy's box may start, as an H200 has it
 * (tests/cuda/real-gpu/tensor-store-h200-2026-11-30 and
 * tensor-reduce-h200-2026-11-30): at a 16-byte boundary of a row, its
 * first coordinate times the element size a multiple of 16 (loads,
 * stores and reductions: the H200 raises an illegal instruction
 * otherwise), and for a store or a reduction (@store) inside the tensor,
 * no coordinate negative (a load's box may start before the tensor and
 * reads zeros there).  A box may run past the upper ends: those elements
 * are filled with zeros or left alone.  ASYNC_COPY if not.
 */
bool vgpu_tensor_tile_coords_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
				const struct vgpu_tensor_map *m, uint64_t addr,
				const int32_t *coord, bool store, bool red)
{
	const char *what = red ? "tensor reduction" : store ? "tensor store" : "tensor load";

	for (uint32_t k = 0; store && k < m->rank; k++) {
		if (coord[k] >= 0)
			continue;
		vgpu_raise(c, w, VGPU_EXC_ASYNC_COPY, em,
			   "%s with the map at 0x%llx: coordinate %u is %d, before the tensor (a "
			   "store's box starts inside it)",
			   what, (unsigned long long)addr, k, coord[k]);
		c->sm->exc->addr = addr;
		return false;
	}
	if ((int64_t)coord[0] * m->elem_size % 16) {
		vgpu_raise(c, w, VGPU_EXC_ASYNC_COPY, em,
			   "%s with the map at 0x%llx: coordinate 0 is %d, %lld bytes into a row "
			   "(a box starts at a multiple of 16)",
			   what, (unsigned long long)addr, coord[0],
			   (long long)coord[0] * m->elem_size);
		c->sm->exc->addr = addr;
		return false;
	}
	return true;
}

/*
 * Reduce the @n elements at @s (shared memory) into those at global @addr
 * onward, each with one atomic of the reduction's operation.
 */
static bool reduce_run(struct vgpu_sm *sm, const struct vgpu_async_op *op, uint64_t addr,
		       const uint8_t *s, uint32_t n)
{
	const struct vgpu_launch *l = sm->l;
	uint32_t es = op->map.elem_size;
	enum vgpu_atomic_op aop = (enum vgpu_atomic_op)red_op(op->red - 1u, op->map.dtype);

	for (uint32_t i = 0; i < n; i++, addr += es) {
		uint64_t v = 0, old;

		memcpy(&v, s + (size_t)i * es, es); /* little-endian host */
		if (l->mem->atomic(l->mem_opaque, addr, es, aop, v, 0, &old)) {
			vgpu_async_fail(sm, op, VGPU_EXC_GLOBAL_FAULT,
					"global memory fault: tensor reduction at 0x%llx",
					(unsigned long long)addr);
			sm->exc->addr = addr;
			return false;
		}
	}
	return true;
}

/* ---- im2col checks ---- */

static const char dim_name[] = "WHD";

/*
 * An im2col copy's operands against its map @m (at @addr): the offsets
 * @off within the rank's range, the filter base (the spatial coordinates)
 * inside the bounding box (PTX ISA 5.5.4.1), the channel coordinate at a
 * multiple of 16 bytes (an H200 faults otherwise); a store (no offsets)
 * needs the box inside the tensor and coordinates >= 0 (PTX ISA
 * 9.7.9.25.5.1).  ASYNC_COPY if not.
 */
bool vgpu_tensor_im2col_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			   const struct vgpu_tensor_map *m, uint64_t addr,
			   const int32_t *coord, const uint32_t *off, bool store)
{
	uint32_t ns = m->rank - 2u, offmax = m->rank == 3 ? 0xffffu : m->rank == 4 ? 0xffu : 0x1fu;
	char msg[160];

	msg[0] = 0;
	for (uint32_t s = 0; s < ns && !msg[0]; s++) {
		int64_t hi = (int64_t)m->dims[s + 1] - 1 + m->upper[s];

		if (off[s] > offmax)
			snprintf(msg, sizeof(msg),
				 "im2col offset %c = %u is past %u, the most at rank %u",
				 dim_name[s], off[s], offmax, m->rank);
		else if (coord[s + 1] < m->lower[s] || coord[s + 1] > hi)
			snprintf(msg, sizeof(msg),
				 "im2col filter base %c = %d lies outside the bounding box %d..%lld",
				 dim_name[s], coord[s + 1], m->lower[s], (long long)hi);
		else if (store && (m->lower[s] < 0 || m->upper[s] > 0))
			snprintf(msg, sizeof(msg),
				 "im2col store: the bounding box leaves the tensor in %c "
				 "(corners %d, %d)", dim_name[s], m->lower[s], m->upper[s]);
	}
	if (!msg[0] && (int64_t)coord[0] * m->elem_size % 16)
		snprintf(msg, sizeof(msg),
			 "im2col channel coordinate %d is not at a multiple of 16 bytes", coord[0]);
	for (uint32_t d = 0; store && d < m->rank && !msg[0]; d++)
		if (coord[d] < 0)
			snprintf(msg, sizeof(msg), "im2col store: coordinate %u is %d, below 0",
				 d, coord[d]);
	if (!msg[0])
		return true;
	vgpu_raise(c, w, VGPU_EXC_ASYNC_COPY, em, "%s", msg);
	c->sm->exc->addr = addr;
	return false;
}

static uint32_t box_elems(const struct vgpu_tensor_map *m, uint32_t d)
{
	return (m->box[d] + m->elem_strides[d] - 1) / m->elem_strides[d];
}

/* Bytes a copy with map @m moves: the box, or pixels x channels. */
uint64_t vgpu_tensor_bytes(const struct vgpu_tensor_map *m)
{
	uint64_t n = m->elem_size;

	if (m->mode == VGPU_TMAP_IM2COL)
		return n * m->pixels * m->channels;
	for (uint32_t d = 0; d < m->rank; d++)
		n *= box_elems(m, d);
	return n;
}

/* ---- tile mode ---- */

/*
 * The whole tensor of @m as host memory, when the memory offers it
 * (vgpu_mem_ops.span): every in-bounds element lies in the
 * dims[0] * elem_size + sum (dims[d] - 1) * strides[d - 1] bytes at base.
 */
static uint8_t *tensor_span(const struct vgpu_launch *l,
			    const struct vgpu_tensor_map *m, bool write)
{
	uint64_t extent = (uint64_t)m->dims[0] * m->elem_size, t;

	if (!l->mem->span)
		return NULL;
	for (uint32_t d = 1; d < m->rank; d++)
		if (__builtin_mul_overflow((uint64_t)(m->dims[d] - 1), m->strides[d - 1], &t) ||
		    __builtin_add_overflow(extent, t, &extent))
			return NULL;
	return l->mem->span(l->mem_opaque, m->base, extent, write);
}

/* Does the box at @coord (@n0, @n elements per dimension) lie inside the
 * tensor in every dimension? */
static bool box_inside(const struct vgpu_tensor_map *m, const int32_t *coord,
		       uint32_t n0, const uint32_t *n)
{
	for (uint32_t d = 0; d < m->rank; d++) {
		int64_t last = (int64_t)coord[d] +
			       (int64_t)((d ? n[d] : n0) - 1) * m->elem_strides[d];

		if (coord[d] < 0 || last >= m->dims[d])
			return false;
	}
	return true;
}

/*
 * The common case of tile_move: a box inside the tensor, element stride
 * 1 in dimension 0, the tensor in host memory (@host): one memcpy a row,
 * the row address stepped like an odometer.
 */
static void tensor_move_dense(const struct vgpu_tensor_map *m,
			      const int32_t *coord, uint8_t *host,
			      uint8_t *sbase, uint32_t n0, const uint32_t *n,
			      uint64_t rows, bool store)
{
	uint32_t i[VGPU_TMAP_MAX_RANK] = { 0 };
	size_t rowbytes = (size_t)n0 * m->elem_size;
	uint64_t step[VGPU_TMAP_MAX_RANK] = { 0 }, off = (uint64_t)coord[0] * m->elem_size;

	for (uint32_t d = 1; d < m->rank; d++) {
		off += (uint64_t)coord[d] * m->strides[d - 1];
		step[d] = (uint64_t)m->elem_strides[d] * m->strides[d - 1];
	}
	/* dimension 1 in a tight loop, the odometer above it */
	for (uint64_t r = 0; r < rows; r += n[1]) {
		uint8_t *g = host + off;

		if (store)
			for (uint32_t k = 0; k < n[1]; k++, sbase += rowbytes, g += step[1])
				memcpy(g, sbase, rowbytes);
		else
			for (uint32_t k = 0; k < n[1]; k++, sbase += rowbytes, g += step[1])
				memcpy(sbase, g, rowbytes);
		for (uint32_t d = 2; d < m->rank; d++) {
			off += step[d];
			if (++i[d] < n[d])
				break;
			off -= step[d] * n[d];
			i[d] = 0;
		}
	}
}

/*
 * Move the box of @op between global memory and its dense copy in shared
 * memory (@store: shared -> global), a row (dimension 0) at a time.  A row
 * that lies outside the tensor in a higher dimension is all out of
 * bounds; inside a row, with element stride 1 the in-bounds elements are
 * one contiguous transfer.  Loads fill out-of-bounds elements with zeros;
 * stores skip them.
 */
static bool tile_move(struct vgpu_sm *sm, const struct vgpu_async_op *op, bool store)
{
	const struct vgpu_tensor_map *m = &op->map;
	uint32_t es = m->elem_size, n0 = box_elems(m, 0), st0 = m->elem_strides[0];
	uint32_t n[VGPU_TMAP_MAX_RANK] = { 1, 1, 1, 1, 1 }, i[VGPU_TMAP_MAX_RANK] = { 0 };
	uint8_t *sbase = sm->ctas[store ? op->cta : op->dst_cta]->smem + op->smem;
	/* a reduction: element by element, atomically */
	uint8_t *host = op->red ? NULL : tensor_span(sm->l, m, store);
	uint64_t rows = 1, fault;

	for (uint32_t d = 1; d < m->rank; d++) {
		n[d] = box_elems(m, d);
		rows *= n[d];
	}
	if (host && st0 == 1 && box_inside(m, op->coord, n0, n)) {
		tensor_move_dense(m, op->coord, host, sbase, n0, n, rows, store);
		return true;
	}
	for (uint64_t r = 0; r < rows; r++) {
		uint8_t *srow = sbase + r * n0 * es;
		uint64_t rowaddr = m->base;
		bool inb = true;

		for (uint32_t d = 1; d < m->rank; d++) {
			int64_t x = (int64_t)op->coord[d] + (int64_t)i[d] * m->elem_strides[d];

			if (x < 0 || x >= m->dims[d])
				inb = false;
			else
				rowaddr += (uint64_t)x * m->strides[d - 1];
		}
		for (uint32_t e = 0; e < n0;) {
			int64_t x = (int64_t)op->coord[0] + (int64_t)e * st0;
			uint32_t run = 1;

			if (!inb || x >= m->dims[0]) {
				/* the rest of the row: x only grows */
				run = n0 - e;
			} else if (x < 0) {
				/* the elements before the tensor's start */
				uint64_t k = ((uint64_t)-x + st0 - 1) / st0;

				run = k < n0 - e ? (uint32_t)k : n0 - e;
			} else {
				/* in bounds: with element stride 1 one contiguous
				 * transfer up to the row's or the tensor's end */
				if (st0 == 1) {
					int64_t k = m->dims[0] - x;

					run = k < (int64_t)(n0 - e) ? (uint32_t)k : n0 - e;
				}
				if (op->red) {
					if (!reduce_run(sm, op, rowaddr + (uint64_t)x * es,
							srow + e * es, run))
						return false;
				} else if (host) {
					uint8_t *g = host + (rowaddr - m->base) + (uint64_t)x * es;

					if (store)
						memcpy(g, srow + e * es, (size_t)run * es);
					else
						memcpy(srow + e * es, g, (size_t)run * es);
				} else if (vgpu_gmem_xfer(sm->l, rowaddr + (uint64_t)x * es,
						     srow + e * es, run * es, store, &fault)) {
					vgpu_async_fail(sm, op, VGPU_EXC_GLOBAL_FAULT,
						"global memory fault: tensor element at 0x%llx",
						(unsigned long long)fault);
					sm->exc->addr = fault;
					return false;
				}
				e += run;
				continue;
			}
			if (!store)
				memset(srow + e * es, 0, (size_t)run * es);
			e += run;
		}
		for (uint32_t d = 1; d < VGPU_TMAP_MAX_RANK; d++) {
			if (++i[d] < n[d])
				break;
			i[d] = 0;
		}
	}
	return true;
}


/* ---- im2col mode ---- */

/*
 * Move the pixels of im2col copy @op between global memory and their
 * dense copy in shared memory (uapi/vgpu_hw.h): each pixel's channels
 * coord[0] .. + channels - 1, the pixels walked W fastest inside the
 * bounding box (shifted by the offsets), then H, D, and N.  A pixel out of
 * bounds in N or a spatial dimension is all zeros (a load) or skipped (a
 * store); inside one, the in-bounds channels are one transfer.
 */
static bool im2col_move(struct vgpu_sm *sm, const struct vgpu_async_op *op, bool store)
{
	const struct vgpu_tensor_map *m = &op->map;
	uint32_t es = m->elem_size, ns = m->rank - 2u, nc = m->channels;
	uint8_t *sp = sm->ctas[store ? op->cta : op->dst_cta]->smem + op->smem;
	uint8_t *host = op->red ? NULL : tensor_span(sm->l, m, store);
	int64_t x[3], lo[3], hi[3], n = op->coord[m->rank - 1], c0 = op->coord[0];
	int64_t cb = c0 < 0 ? -c0 : 0, ce = (int64_t)m->dims[0] - c0;
	size_t pix = (size_t)nc * es;
	uint64_t fault;

	/* the channels in bounds: [cb, ce) of the pixel's nc */
	if (cb > nc)
		cb = nc;
	if (ce > nc)
		ce = nc;
	if (ce < cb)
		ce = cb;
	for (uint32_t s = 0; s < ns; s++) {
		int64_t off = op->im2col_off[s];

		lo[s] = m->lower[s] + off;
		hi[s] = (int64_t)m->dims[s + 1] - 1 + m->upper[s] + off;
		x[s] = op->coord[s + 1] + off;
	}
	for (uint32_t p = 0; p < m->pixels; p++, sp += pix) {
		uint64_t addr = m->base + (uint64_t)(c0 + cb) * es;
		bool inb = n >= 0 && n < m->dims[m->rank - 1] && ce > cb;
		uint32_t s;

		for (s = 0; inb && s < ns; s++) {
			if (x[s] < 0 || x[s] >= m->dims[s + 1])
				inb = false;
			else
				addr += (uint64_t)x[s] * m->strides[s];
		}
		if (inb)
			addr += (uint64_t)n * m->strides[m->rank - 2];
		if (!inb) {
			if (!store)
				memset(sp, 0, pix);
		} else {
			uint8_t *sbuf = sp + cb * es;
			uint32_t len = (uint32_t)(ce - cb) * es;

			if (!store) {
				memset(sp, 0, (size_t)cb * es);
				memset(sp + ce * es, 0, (size_t)(nc - ce) * es);
			}
			if (op->red) {
				if (!reduce_run(sm, op, addr, sbuf, (uint32_t)(ce - cb)))
					return false;
			} else if (host) {
				uint8_t *g = host + (addr - m->base);

				memcpy(store ? g : sbuf, store ? sbuf : g, len);
			} else if (vgpu_gmem_xfer(sm->l, addr, sbuf, len, store, &fault)) {
				vgpu_async_fail(sm, op, VGPU_EXC_GLOBAL_FAULT,
						"global memory fault: im2col pixel at 0x%llx",
						(unsigned long long)fault);
				sm->exc->addr = fault;
				return false;
			}
		}
		/* the next pixel: W, wrapping into H, D, then the next image
		 * (N steps by its traversal stride too, as an H200 does) */
		for (s = 0; s < ns; s++) {
			x[s] += m->elem_strides[s + 1];
			if (x[s] <= hi[s])
				break;
			x[s] = lo[s];
		}
		if (s == ns)
			n += m->elem_strides[m->rank - 1];
	}
	return true;
}

/* Move the data of tensor copy @op (@store: shared -> global). */
bool vgpu_tensor_move(struct vgpu_sm *sm, const struct vgpu_async_op *op, bool store)
{
	return op->map.mode == VGPU_TMAP_IM2COL ? im2col_move(sm, op, store) :
						 tile_move(sm, op, store);
}
