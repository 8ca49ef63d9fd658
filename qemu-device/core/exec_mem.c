/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-instruction behaviour of the memory instructions: loads and stores
 * to global, shared and parameter memory (LDG/STG, LDS/STS, LDP) and the
 * atomics (ATOMG/ATOMS and their CAS forms: 16, 32, 64 and 128 bits, integer
 * operations, floating-point adds, half min/max).  Their entries in
 * vgpu_exec_table are in exec.c.  Global memory goes through the launch's
 * vgpu_mem_ops (a span of host memory where it offers one), shared memory
 * through vgpu_smem_resolve() (a cluster's CTAs share theirs).
 */
#include <stdio.h>
#include <string.h>

#include "core_priv.h"

/* ---- Memory ---- */

static const uint8_t msize_bytes[] = {
	[VGPU_MOD_MSIZE_U8] = 1,  [VGPU_MOD_MSIZE_S8] = 1,
	[VGPU_MOD_MSIZE_U16] = 2, [VGPU_MOD_MSIZE_S16] = 2,
	[VGPU_MOD_MSIZE_32] = 4,  [VGPU_MOD_MSIZE_64] = 8,
	[VGPU_MOD_MSIZE_128] = 16,
};

enum space { SP_GLOBAL, SP_SHARED, SP_PARAM };
static const char *const space_name[] = { "global", "shared", "parameter" };

/* Load result bytes @buf (little-endian) into the destination rows. */
static void put_loaded(struct vgpu_warp *w, const struct vgpu_dinsn *d,
		       uint32_t lane, const uint8_t *buf, unsigned size)
{
	uint32_t v;

	switch (d->mod[0]) {
	case VGPU_MOD_MSIZE_U8: v = buf[0]; break;
	case VGPU_MOD_MSIZE_S8: v = (uint32_t)(int32_t)(int8_t)buf[0]; break;
	case VGPU_MOD_MSIZE_U16: v = (uint32_t)buf[0] | (uint32_t)buf[1] << 8; break;
	case VGPU_MOD_MSIZE_S16:
		v = (uint32_t)(int32_t)(int16_t)((uint16_t)buf[0] | (uint16_t)(buf[1] << 8));
		break;
	default:
		for (unsigned k = 0; k < size / 4; k++) {
			memcpy(&v, buf + 4 * k, 4);
			vgpu_reg(w, d->rd + k)[lane] = v;
		}
		return;
	}
	vgpu_reg(w, d->rd)[lane] = v;
}

/* The same value for lanes @em (a broadcast of one load). */
static void put_uniform(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			uint32_t em, const uint8_t *buf, unsigned size)
{
	uint32_t lane = __builtin_ctz(em);

	put_loaded(w, d, lane, buf, size);
	for (unsigned k = 0; k < (size > 4 ? size / 4 : 1); k++) {
		uint32_t *row = vgpu_reg(w, d->rd + k), v = row[lane];

		VGPU_LANES(em, l, { row[l] = v; });
	}
}

static inline void get_store(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			     uint32_t lane, uint8_t *buf, unsigned size)
{
	if (size < 4) {
		uint32_t v = vgpu_reg(w, d->rb)[lane];

		memcpy(buf, &v, size < 2 ? 1 : 2);
		return;
	}
	for (unsigned k = 0; k < size / 4; k++)
		memcpy(buf + 4 * k, &vgpu_reg(w, d->rb + k)[lane], 4);
}

static uint64_t lane_addr(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			  enum space sp, uint32_t lane)
{
	uint32_t lo = vgpu_reg(w, d->ra)[lane];

	if (sp == SP_GLOBAL) {
		uint64_t hi = vgpu_reg(w, d->ra + 1)[lane];

		return ((hi << 32) | lo) + (uint64_t)(int64_t)(int32_t)d->imm;
	}
	return (uint32_t)(lo + d->imm);
}

/* The rows of a @size-byte access at @row (@r[k], k < @size / 4). */
static inline __attribute__((always_inline)) void
access_rows(struct vgpu_warp *w, uint32_t row, const unsigned size, uint32_t *r[4])
{
	for (unsigned k = 0; k < 4; k++)
		r[k] = k < size / 4 ? vgpu_reg(w, row + k) : NULL;
}

/*
 * Lanes @em read @size bytes each at their address (less @lo, the span's
 * first) in host memory @h into their destination rows: global memory
 * whole (vgpu_mem_get_whole), shared memory by memcpy.  A span is less
 * than 4 GiB (global_span(), shared_span()), so a lane's place in it is
 * its address register's low word plus the offset less @lo, in 32 bits.
 * Called with @size a constant 4, 8 or 16, so that the loop is the access
 * and the rows' stores.  A lane's address is read before its rows are
 * written (an address register may be a destination).
 */
static inline __attribute__((always_inline)) void
load_rows(struct vgpu_warp *w, const struct vgpu_dinsn *d, uint32_t em,
	  const uint8_t *h, uint64_t lo, enum space sp, const unsigned size)
{
	const uint32_t *ra = vgpu_reg(w, d->ra), sub = (uint32_t)lo - d->imm;
	uint32_t *r[4];

	access_rows(w, d->rd, size, r);
	VGPU_FOR_LANES(em, l) {
		const uint8_t *p = h + (uint32_t)(ra[l] - sub);
		uint32_t v[4];

		if (sp == SP_GLOBAL)
			vgpu_mem_get_whole(v, p, size);
		else
			memcpy(v, p, size);
		for (unsigned k = 0; k < size / 4; k++)
			r[k][l] = v[k];
	}
}

/* The same for stores: the lanes in ascending order (the last to a byte wins). */
static inline __attribute__((always_inline)) void
store_rows(struct vgpu_warp *w, const struct vgpu_dinsn *d, uint32_t em,
	   uint8_t *h, uint64_t lo, enum space sp, const unsigned size)
{
	const uint32_t *ra = vgpu_reg(w, d->ra), sub = (uint32_t)lo - d->imm;
	uint32_t *r[4];

	access_rows(w, d->rb, size, r);
	VGPU_FOR_LANES(em, l) {
		uint8_t *p = h + (uint32_t)(ra[l] - sub);
		uint32_t v[4];

		for (unsigned k = 0; k < size / 4; k++)
			v[k] = r[k][l];
		if (sp == SP_GLOBAL)
			vgpu_mem_put_whole(p, v, size);
		else
			memcpy(p, v, size);
	}
}

/*
 * A span's lanes (global_span(), shared_span()): the word sizes through
 * load_rows() / store_rows(), the sub-word ones lane by lane.  False for
 * a sub-word size: the caller's loop does those.
 */
static bool load_span(struct vgpu_warp *w, const struct vgpu_dinsn *d, uint32_t em,
		      const uint8_t *h, uint64_t lo, enum space sp)
{
	switch (d->mod[0]) {
	case VGPU_MOD_MSIZE_32: load_rows(w, d, em, h, lo, sp, 4); return true;
	case VGPU_MOD_MSIZE_64: load_rows(w, d, em, h, lo, sp, 8); return true;
	case VGPU_MOD_MSIZE_128: load_rows(w, d, em, h, lo, sp, 16); return true;
	default: return false;
	}
}

static bool store_span(struct vgpu_warp *w, const struct vgpu_dinsn *d, uint32_t em,
		       uint8_t *h, uint64_t lo, enum space sp)
{
	switch (d->mod[0]) {
	case VGPU_MOD_MSIZE_32: store_rows(w, d, em, h, lo, sp, 4); return true;
	case VGPU_MOD_MSIZE_64: store_rows(w, d, em, h, lo, sp, 8); return true;
	case VGPU_MOD_MSIZE_128: store_rows(w, d, em, h, lo, sp, 16); return true;
	default: return false;
	}
}

static bool aligned(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
		    enum space sp, uint64_t addr, unsigned size)
{
	if (!(addr % size))
		return true;
	vgpu_raise(c, w, VGPU_EXC_MISALIGNED, em,
		   "%u-byte %s access at 0x%llx is not %u-byte aligned", size,
		   space_name[sp], (unsigned long long)addr, size);
	c->sm->exc->addr = addr;
	return false;
}

/*
 * Host pointer for a shared or parameter access of @size bytes at @addr:
 * alignment, the window, the cluster rank and (sanitizer) live mbarriers
 * checked.  NULL after raising the exception.
 */
static uint8_t *local_ptr(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			  enum space sp, uint64_t addr, unsigned size)
{
	struct vgpu_cta *t;
	uint32_t off;

	if (!aligned(c, w, em, sp, addr, size))
		return NULL;
	if (sp == SP_PARAM) {
		if (addr + size <= c->l->param_size)
			return (uint8_t *)(uintptr_t)c->l->params + addr;
		vgpu_raise(c, w, VGPU_EXC_PARAM_RANGE, em,
			   "%u-byte parameter access at 0x%llx is outside its 0x%x bytes",
			   size, (unsigned long long)addr, c->l->param_size);
		c->sm->exc->addr = addr;
		return NULL;
	}
	t = vgpu_smem_resolve(c, w, em, (uint32_t)addr, size, &off);
	if (!t)
		return NULL;
	if (t->nmbars && c->sm->sanitize &&
	    !vgpu_mbar_check_access(c, w, em, t, off, size))
		return NULL;
	return t->smem + off;
}

/*
 * Fast path for shared accesses: when every lane's address is aligned and
 * in the CTA's own shared memory (no cluster rank), and the sanitizer
 * has no mbarriers to keep accesses off, the CTA's shared memory, which
 * the lanes' addresses index.  Else NULL: local_ptr() per lane then
 * raises what it must.
 */
static uint8_t *shared_span(struct vgpu_cta *c, struct vgpu_warp *w,
			    const struct vgpu_dinsn *d, uint32_t em, unsigned size)
{
	uint64_t mx = 0, bits = 0;

	if (c->nmbars && c->sm->sanitize)
		return NULL;
	if (em == ~0u) { /* a whole warp: one pass the compiler can vectorise */
		const uint32_t *ra = vgpu_reg(w, d->ra);
		uint32_t mx32 = 0, bits32 = 0, imm = d->imm;

		for (uint32_t lane = 0; lane < VGPU_WARP_SIZE; lane++) {
			uint32_t a = ra[lane] + imm;

			mx32 = a > mx32 ? a : mx32;
			bits32 |= a;
		}
		mx = mx32;
		bits = bits32;
	} else {
		VGPU_FOR_LANES(em, lane) {
			uint64_t a = lane_addr(w, d, SP_SHARED, lane);

			mx = a > mx ? a : mx;
			bits |= a;
		}
	}
	if ((bits & (size - 1)) || (bits & ~(uint64_t)(VGPU_SMEM_CLUSTER_BIT - 1)) ||
	    mx + size > c->smem_size)
		return NULL;
	return c->smem;
}

static enum vgpu_xres global_fault(struct vgpu_cta *c, struct vgpu_warp *w,
				   uint32_t em, uint64_t addr, unsigned size,
				   const char *what)
{
	vgpu_raise(c, w, VGPU_EXC_GLOBAL_FAULT, em,
		   "global memory fault: %u-byte %s at 0x%llx", size, what,
		   (unsigned long long)addr);
	c->sm->exc->addr = addr;
	return VGPU_X_EXC;
}

/*
 * Fast path for global accesses: when every lane's address is aligned and
 * all of them lie in one range the memory offers as host memory
 * (vgpu_mem_ops.span), that range's pointer, with *@lo its first address.
 * Else NULL: the per-lane path then raises what it must.
 */
static uint8_t *global_span(struct vgpu_cta *c, struct vgpu_warp *w,
			    const struct vgpu_dinsn *d, uint32_t em,
			    unsigned size, bool write, uint64_t *lo)
{
	const struct vgpu_launch *l = c->l;
	uint64_t mn = UINT64_MAX, mx = 0, bits = 0;

	if (!l->mem->span)
		return NULL;
	if (em == ~0u && vgpu_row_uniform(w, d->ra + 1, em)) {
		/*
		 * A whole warp in one 4 GiB window (the common case): the
		 * low words' least and greatest, in one pass without the
		 * lanes' 64-bit addresses; the offset moves them all alike
		 * and the low bits of a sum are those of its low words'.
		 */
		const uint32_t *lo32 = vgpu_reg(w, d->ra);
		uint32_t lmn = UINT32_MAX, lmx = 0, lbits = 0, imm = d->imm;
		uint64_t base = (uint64_t)vgpu_reg(w, d->ra + 1)[0] << 32;

		for (uint32_t lane = 0; lane < VGPU_WARP_SIZE; lane++) {
			uint32_t v = lo32[lane];

			lmn = v < lmn ? v : lmn;
			lmx = v > lmx ? v : lmx;
			lbits |= v + imm;
		}
		mn = (base | lmn) + (uint64_t)(int64_t)(int32_t)d->imm;
		mx = (base | lmx) + (uint64_t)(int64_t)(int32_t)d->imm;
		bits = lbits;
	} else {
		VGPU_FOR_LANES(em, lane) {
			uint64_t a = lane_addr(w, d, SP_GLOBAL, lane);

			mn = a < mn ? a : mn;
			mx = a > mx ? a : mx;
			bits |= a;
		}
	}
	if ((bits & (size - 1)) || mx - mn > UINT32_MAX)
		return NULL;
	*lo = mn;
	return l->mem->span(l->mem_opaque, mn, mx - mn + size, write);
}

static enum vgpu_xres do_load(struct vgpu_cta *c, struct vgpu_warp *w,
			      const struct vgpu_dinsn *d, uint32_t em,
			      enum space sp)
{
	const struct vgpu_launch *l = c->l;
	unsigned size = msize_bytes[d->mod[0]];
	uint8_t buf[16];
	uint64_t lo;
	uint8_t *h;

	if (sp == SP_GLOBAL && (h = global_span(c, w, d, em, size, false, &lo))) {
		if (load_span(w, d, em, h, lo, sp))
			return VGPU_X_NEXT;
		VGPU_FOR_LANES(em, lane) {
			vgpu_mem_get_whole(buf, h + (lane_addr(w, d, sp, lane) - lo), size);
			put_loaded(w, d, lane, buf, size);
		}
		return VGPU_X_NEXT;
	}
	if (sp != SP_GLOBAL && vgpu_row_uniform(w, d->ra, em)) {
		/* one address (a parameter, a shared variable): read it once */
		const uint8_t *p = local_ptr(c, w, em, sp,
					     lane_addr(w, d, sp, __builtin_ctz(em)), size);

		if (!p)
			return VGPU_X_EXC;
		vgpu_copy_small(buf, p, size);
		put_uniform(w, d, em, buf, size);
		return VGPU_X_NEXT;
	}
	if (sp == SP_SHARED && (h = shared_span(c, w, d, em, size))) {
		if (load_span(w, d, em, h, 0, sp))
			return VGPU_X_NEXT;
		VGPU_FOR_LANES(em, lane) {
			vgpu_copy_small(buf, h + lane_addr(w, d, sp, lane), size);
			put_loaded(w, d, lane, buf, size);
		}
		return VGPU_X_NEXT;
	}
	VGPU_FOR_LANES(em, lane) {
		uint64_t a = lane_addr(w, d, sp, lane);

		if (sp == SP_GLOBAL) {
			if (!aligned(c, w, em, sp, a, size))
				return VGPU_X_EXC;
			if (l->mem->read(l->mem_opaque, a, buf, size))
				return global_fault(c, w, em, a, size, "read");
		} else {
			const uint8_t *p = local_ptr(c, w, em, sp, a, size);

			if (!p)
				return VGPU_X_EXC;
			vgpu_copy_small(buf, p, size);
		}
		put_loaded(w, d, lane, buf, size);
	}
	return VGPU_X_NEXT;
}

static enum vgpu_xres do_store(struct vgpu_cta *c, struct vgpu_warp *w,
			       const struct vgpu_dinsn *d, uint32_t em,
			       enum space sp)
{
	const struct vgpu_launch *l = c->l;
	unsigned size = msize_bytes[d->mod[0]];
	uint8_t buf[16];
	uint64_t lo;
	uint8_t *h;

	/* lanes in ascending order, as below: the last one to a byte wins */
	if (sp == SP_GLOBAL && (h = global_span(c, w, d, em, size, true, &lo))) {
		if (store_span(w, d, em, h, lo, sp))
			return VGPU_X_NEXT;
		VGPU_FOR_LANES(em, lane) {
			get_store(w, d, lane, buf, size);
			vgpu_mem_put_whole(h + (lane_addr(w, d, sp, lane) - lo), buf, size);
		}
		return VGPU_X_NEXT;
	}
	if (sp == SP_SHARED && (h = shared_span(c, w, d, em, size))) {
		if (store_span(w, d, em, h, 0, sp))
			return VGPU_X_NEXT;
		VGPU_FOR_LANES(em, lane) {
			get_store(w, d, lane, buf, size);
			vgpu_copy_small(h + lane_addr(w, d, sp, lane), buf, size);
		}
		return VGPU_X_NEXT;
	}
	VGPU_FOR_LANES(em, lane) {
		uint64_t a = lane_addr(w, d, sp, lane);

		get_store(w, d, lane, buf, size);
		if (sp == SP_GLOBAL) {
			if (!aligned(c, w, em, sp, a, size))
				return VGPU_X_EXC;
			if (l->mem->write(l->mem_opaque, a, buf, size))
				return global_fault(c, w, em, a, size, "write");
		} else {
			uint8_t *p = local_ptr(c, w, em, sp, a, size);

			if (!p)
				return VGPU_X_EXC;
			vgpu_copy_small(p, buf, size);
		}
	}
	return VGPU_X_NEXT;
}

VGPU_EXEC_PROTO(vgpu_exec_ldg) { return do_load(c, w, d, em, SP_GLOBAL); }

/*
 * TRAP.MULTIMEM [Ra+imm]: PTX's multimem.ld_reduce.  vGPU has no multicast
 * objects (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0), so no address
 * is a multimem address, and an H200 without multicast faults on such a
 * load as on an unmapped address (CUDA_ERROR_ILLEGAL_ADDRESS): a global
 * fault at the first active lane's address, reason "not a multicast
 * address".  (multimem.st and .red of a unicast address store and reduce
 * there on that H200; the front end lowers them to STG and ATOMG.)
 */
VGPU_EXEC_PROTO(vgpu_exec_trap_multimem)
{
	uint64_t a = lane_addr(w, d, SP_GLOBAL, (uint32_t)__builtin_ctz(em));

	vgpu_raise(c, w, VGPU_EXC_GLOBAL_FAULT, em,
		   "multimem.ld_reduce at 0x%llx: not a multicast address",
		   (unsigned long long)a);
	c->sm->exc->addr = a;
	c->sm->exc->info[0] = VGPU_MMU_ACC_READ;
	c->sm->exc->info[1] = VGPU_MMU_F_NOT_MULTICAST;
	return VGPU_X_EXC;
}
VGPU_EXEC_PROTO(vgpu_exec_lds) { return do_load(c, w, d, em, SP_SHARED); }
VGPU_EXEC_PROTO(vgpu_exec_ldp) { return do_load(c, w, d, em, SP_PARAM); }
VGPU_EXEC_PROTO(vgpu_exec_stg) { return do_store(c, w, d, em, SP_GLOBAL); }
VGPU_EXEC_PROTO(vgpu_exec_sts) { return do_store(c, w, d, em, SP_SHARED); }

/* ---- Atomics (16, 32 and 64 bits; lanes in ascending order) ---- */

/* .MIN (or .MAX: @max) of the legal ATYPEs @t: integer and half types */
static enum vgpu_atomic_op atomic_minmax(unsigned t, bool max)
{
	switch (t) {
	case VGPU_MOD_ATYPE_F16: return max ? VGPU_ATOMIC_FMAX : VGPU_ATOMIC_FMIN;
	case VGPU_MOD_ATYPE_BF16: return max ? VGPU_ATOMIC_BFMAX : VGPU_ATOMIC_BFMIN;
	case VGPU_MOD_ATYPE_F16X2: return max ? VGPU_ATOMIC_FMAX_X2 : VGPU_ATOMIC_FMIN_X2;
	case VGPU_MOD_ATYPE_BF16X2: return max ? VGPU_ATOMIC_BFMAX_X2 : VGPU_ATOMIC_BFMIN_X2;
	case VGPU_MOD_ATYPE_S32: case VGPU_MOD_ATYPE_S64:
		return max ? VGPU_ATOMIC_MAX_S : VGPU_ATOMIC_MIN_S;
	default: return max ? VGPU_ATOMIC_MAX_U : VGPU_ATOMIC_MIN_U;
	}
}

/* The operation and its size in bytes of an ATOM or CAS word. */
static enum vgpu_atomic_op atomic_op(const struct vgpu_dinsn *d, bool cas,
				     unsigned *size)
{
	unsigned t = d->mod[1];

	if (cas) {
		*size = d->mod[0] == VGPU_MOD_MSIZE_U16 ? 2 :
			d->mod[0] == VGPU_MOD_MSIZE_64 ? 8 : 4;
		return VGPU_ATOMIC_CAS;
	}
	switch (t) {
	case VGPU_MOD_ATYPE_U64: case VGPU_MOD_ATYPE_S64: case VGPU_MOD_ATYPE_F64:
		*size = 8;
		break;
	case VGPU_MOD_ATYPE_F16: case VGPU_MOD_ATYPE_BF16:
		*size = 2;
		break;
	default:
		*size = 4;
	}
	switch (d->mod[0]) {
	case VGPU_MOD_ATOMOP_ADD:
		switch (t) {
		case VGPU_MOD_ATYPE_F32:
			return d->mod[2] ? VGPU_ATOMIC_FADD_FTZ : VGPU_ATOMIC_FADD;
		case VGPU_MOD_ATYPE_F64: case VGPU_MOD_ATYPE_F16:
			return VGPU_ATOMIC_FADD;
		case VGPU_MOD_ATYPE_BF16: return VGPU_ATOMIC_BFADD;
		case VGPU_MOD_ATYPE_F16X2: return VGPU_ATOMIC_FADD_X2;
		case VGPU_MOD_ATYPE_BF16X2: return VGPU_ATOMIC_BFADD_X2;
		default: return VGPU_ATOMIC_ADD;
		}
	case VGPU_MOD_ATOMOP_MIN: return atomic_minmax(t, false);
	case VGPU_MOD_ATOMOP_MAX: return atomic_minmax(t, true);
	case VGPU_MOD_ATOMOP_EXCH: return VGPU_ATOMIC_EXCH;
	case VGPU_MOD_ATOMOP_AND: return VGPU_ATOMIC_AND;
	case VGPU_MOD_ATOMOP_OR: return VGPU_ATOMIC_OR;
	default: return VGPU_ATOMIC_XOR;
	}
}

/* f32 a + b rounded to nearest; @ftz: subnormals in and out are zeros */
static uint32_t fadd32(uint32_t a, uint32_t b, bool ftz)
{
	float x, y, r;
	uint32_t v;

	if (ftz) {
		a = a & 0x7f800000u ? a : a & 0x80000000u;
		b = b & 0x7f800000u ? b : b & 0x80000000u;
	}
	memcpy(&x, &a, 4);
	memcpy(&y, &b, 4);
	r = x + y;
	memcpy(&v, &r, 4);
	if (ftz && !(v & 0x7f800000u))
		v &= 0x80000000u;
	return (v & 0x7fffffffu) > 0x7f800000u ? 0x7fffffffu : v; /* the GPU's NaN */
}

/*
 * f64 a (memory) + b rounded to nearest, NaNs as an H200's global
 * atom.add.f64 makes them: a NaN operand comes out as it is (not made
 * quiet), b's when both are; inf - inf the host's default NaN as DADD's.
 * On shared memory vgpu_dadd_shared() instead.
 */
static uint64_t fadd64(uint64_t a, uint64_t b)
{
	double x, y, r;
	uint64_t v;

	memcpy(&x, &a, 8);
	memcpy(&y, &b, 8);
	if (isnan(y))
		return b;
	if (isnan(x))
		return a;
	r = x + y;
	memcpy(&v, &r, 8);
	return v;
}

/*
 * atom.add.f64 on shared memory, as an H200 computes it: DADD b + a (the
 * GPU's shared f64 add is a compare-and-swap loop around DADD), so a NaN
 * comes out quiet, a's when both are.
 */
static uint64_t dadd_shared(uint64_t a, uint64_t b)
{
	double x, y, r;
	uint64_t v;

	memcpy(&x, &a, 8);
	memcpy(&y, &b, 8);
	r = isnan(x) || isnan(y) ? vgpu_dnan(y, x, 0) : x + y;
	memcpy(&v, &r, 8);
	return v;
}

/*
 * f16 or bf16 (@type, a CVT type) a + b rounded to nearest: in f32, which
 * holds either exactly and rounds the sum only once that matters (24 >=
 * 2 x 11 + 2 bits), then to the half; a NaN comes out as 0x7fff.
 */
static uint32_t fadd16(uint32_t a, uint32_t b, unsigned type)
{
	uint32_t x = (uint32_t)vgpu_cvt_rn(a & 0xffffu, VGPU_MOD_CVTD_F32, type);
	uint32_t y = (uint32_t)vgpu_cvt_rn(b & 0xffffu, VGPU_MOD_CVTD_F32, type);

	return (uint32_t)vgpu_cvt_rn(fadd32(x, y, false), type, VGPU_MOD_CVTS_F32);
}

/*
 * minNum/maxNum (@max) of the halves @a and @b, f16 or bf16 (@bf), as an
 * H200's atomics compute them: a NaN loses to a number, two NaNs give
 * 0x7fff, -0 is less than +0; otherwise one operand's bits as they are.
 */
static uint32_t fminmax16(uint32_t a, uint32_t b, bool bf, bool max)
{
	uint32_t inf = bf ? 0x7f80u : 0x7c00u, ka, kb;
	bool na, nb;

	a &= 0xffffu;
	b &= 0xffffu;
	na = (a & 0x7fffu) > inf;
	nb = (b & 0x7fffu) > inf;
	if (na || nb)
		return na && nb ? 0x7fffu : na ? b : a;
	/* sign and magnitude to one order: -inf .. -0, +0 .. +inf */
	ka = a & 0x8000u ? 0x7fffu - (a & 0x7fffu) : a | 0x8000u;
	kb = b & 0x8000u ? 0x7fffu - (b & 0x7fffu) : b | 0x8000u;
	return (max ? ka > kb : ka < kb) ? a : b;
}

/* FMIN .. BFMAX_X2 on @a and @b: one half, or each of the two */
static uint64_t half_minmax(enum vgpu_atomic_op op, uint64_t a, uint64_t b)
{
	bool max = op == VGPU_ATOMIC_FMAX || op == VGPU_ATOMIC_BFMAX ||
		   op == VGPU_ATOMIC_FMAX_X2 || op == VGPU_ATOMIC_BFMAX_X2;
	bool bf = op == VGPU_ATOMIC_BFMIN || op == VGPU_ATOMIC_BFMAX ||
		  op == VGPU_ATOMIC_BFMIN_X2 || op == VGPU_ATOMIC_BFMAX_X2;
	bool x2 = op == VGPU_ATOMIC_FMIN_X2 || op == VGPU_ATOMIC_FMAX_X2 ||
		  op == VGPU_ATOMIC_BFMIN_X2 || op == VGPU_ATOMIC_BFMAX_X2;
	uint64_t r = fminmax16((uint32_t)a, (uint32_t)b, bf, max);

	if (x2)
		r |= (uint64_t)fminmax16((uint32_t)(a >> 16), (uint32_t)(b >> 16), bf, max) << 16;
	return r;
}

uint64_t vgpu_atomic_apply(enum vgpu_atomic_op op, unsigned size, uint64_t old,
			   uint64_t v, uint64_t cmp)
{
	unsigned sh = 64 - 8 * size;
	uint64_t mask = ~0ull >> sh, r;
	int64_t so = (int64_t)(old << sh) >> sh, sv = (int64_t)(v << sh) >> sh;

	old &= mask;
	v &= mask;
	switch (op) {
	case VGPU_ATOMIC_ADD: r = old + v; break;
	case VGPU_ATOMIC_MIN_U: r = old < v ? old : v; break;
	case VGPU_ATOMIC_MIN_S: r = so < sv ? old : v; break;
	case VGPU_ATOMIC_MAX_U: r = old > v ? old : v; break;
	case VGPU_ATOMIC_MAX_S: r = so > sv ? old : v; break;
	case VGPU_ATOMIC_EXCH: r = v; break;
	case VGPU_ATOMIC_AND: r = old & v; break;
	case VGPU_ATOMIC_OR: r = old | v; break;
	case VGPU_ATOMIC_XOR: r = old ^ v; break;
	case VGPU_ATOMIC_INC: r = old >= v ? 0 : old + 1; break;
	case VGPU_ATOMIC_DEC: r = !old || old > v ? v : old - 1; break;
	case VGPU_ATOMIC_FADD:
		r = size == 8 ? fadd64(old, v) :
		    size == 4 ? fadd32((uint32_t)old, (uint32_t)v, false) :
				fadd16((uint32_t)old, (uint32_t)v, VGPU_MOD_CVTS_F16);
		break;
	case VGPU_ATOMIC_FADD_FTZ: r = fadd32((uint32_t)old, (uint32_t)v, true); break;
	case VGPU_ATOMIC_BFADD: r = fadd16((uint32_t)old, (uint32_t)v, VGPU_MOD_CVTS_BF16); break;
	case VGPU_ATOMIC_FADD_X2:
	case VGPU_ATOMIC_BFADD_X2: {
		unsigned t = op == VGPU_ATOMIC_FADD_X2 ? VGPU_MOD_CVTS_F16 : VGPU_MOD_CVTS_BF16;

		r = fadd16((uint32_t)old, (uint32_t)v, t) |
		    (uint64_t)fadd16((uint32_t)(old >> 16), (uint32_t)(v >> 16), t) << 16;
		break;
	}
	case VGPU_ATOMIC_FMIN: case VGPU_ATOMIC_FMAX:
	case VGPU_ATOMIC_BFMIN: case VGPU_ATOMIC_BFMAX:
	case VGPU_ATOMIC_FMIN_X2: case VGPU_ATOMIC_FMAX_X2:
	case VGPU_ATOMIC_BFMIN_X2: case VGPU_ATOMIC_BFMAX_X2:
		r = half_minmax(op, old, v);
		break;
	default: r = old == (cmp & mask) ? v : old; break;
	}
	return r & mask;
}

/* A lane's 1 or 2 registers from row @row as one value. */
static uint64_t lane_value(struct vgpu_warp *w, uint16_t row, uint32_t lane,
			   unsigned size)
{
	uint64_t v = vgpu_reg(w, row)[lane];

	if (size == 8)
		v |= (uint64_t)vgpu_reg(w, row + 1u)[lane] << 32;
	return v;
}

/*
 * ATOMG.CAS.128 / ATOMS.CAS.128 (atom.cas.b128): Rd..Rd+3 <- the 16 bytes
 * at the address; where they equal Rb..Rb+3 (low word first), Rc..Rc+3
 * replace them.  Global memory through the 16-byte compare-and-swap of
 * the memory callbacks (atomic against other SMs' threads), shared memory
 * as the SM's own.
 */
static enum vgpu_xres do_cas128(struct vgpu_cta *c, struct vgpu_warp *w,
				const struct vgpu_dinsn *d, uint32_t em, enum space sp)
{
	const struct vgpu_launch *l = c->l;

	VGPU_FOR_LANES(em, lane) {
		uint64_t a = lane_addr(w, d, sp, lane);
		uint32_t cmp[4], val[4], old[4];

		for (unsigned k = 0; k < 4; k++) {
			cmp[k] = vgpu_reg(w, d->rb + k)[lane];
			val[k] = vgpu_reg(w, d->rc + k)[lane];
		}
		if (sp == SP_GLOBAL) {
			if (!aligned(c, w, em, sp, a, 16))
				return VGPU_X_EXC;
			if (l->mem->cas16(l->mem_opaque, a, cmp, val, old))
				return global_fault(c, w, em, a, 16, "atomic");
		} else {
			uint8_t *p = local_ptr(c, w, em, sp, a, 16);

			if (!p)
				return VGPU_X_EXC;
			memcpy(old, p, 16); /* little-endian host */
			if (!memcmp(old, cmp, 16))
				memcpy(p, val, 16);
		}
		for (unsigned k = 0; k < 4; k++)
			vgpu_reg(w, d->rd + k)[lane] = old[k];
	}
	return VGPU_X_NEXT;
}

static enum vgpu_xres do_atomic(struct vgpu_cta *c, struct vgpu_warp *w,
				const struct vgpu_dinsn *d, uint32_t em,
				enum space sp, bool cas)
{
	const struct vgpu_launch *l = c->l;
	unsigned size;
	enum vgpu_atomic_op op;

	if (cas && d->mod[0] == VGPU_MOD_MSIZE_128)
		return do_cas128(c, w, d, em, sp);
	op = atomic_op(d, cas, &size);

	VGPU_FOR_LANES(em, lane) {
		uint64_t a = lane_addr(w, d, sp, lane), old = 0;
		/* CAS: Rb is the compare value, Rc the new value */
		uint64_t v = lane_value(w, cas ? d->rc : d->rb, lane, size);
		uint64_t cmp = lane_value(w, d->rb, lane, size);

		if (sp == SP_GLOBAL) {
			if (!aligned(c, w, em, sp, a, size))
				return VGPU_X_EXC;
			if (l->mem->atomic(l->mem_opaque, a, size, op, v, cmp, &old))
				return global_fault(c, w, em, a, size, "atomic");
		} else {
			uint8_t *p = local_ptr(c, w, em, sp, a, size);

			if (!p)
				return VGPU_X_EXC;
			memcpy(&old, p, size); /* little-endian host: the low bytes */
			v = op == VGPU_ATOMIC_FADD && size == 8 ? dadd_shared(old, v) :
				vgpu_atomic_apply(op, size, old, v, cmp);
			memcpy(p, &v, size);
		}
		vgpu_reg(w, d->rd)[lane] = (uint32_t)old;
		if (size == 8)
			vgpu_reg(w, d->rd + 1u)[lane] = (uint32_t)(old >> 32);
	}
	return VGPU_X_NEXT;
}

VGPU_EXEC_PROTO(vgpu_exec_atomg) { return do_atomic(c, w, d, em, SP_GLOBAL, false); }
VGPU_EXEC_PROTO(vgpu_exec_atoms) { return do_atomic(c, w, d, em, SP_SHARED, false); }
VGPU_EXEC_PROTO(vgpu_exec_atomg_cas) { return do_atomic(c, w, d, em, SP_GLOBAL, true); }
VGPU_EXEC_PROTO(vgpu_exec_atoms_cas) { return do_atomic(c, w, d, em, SP_SHARED, true); }
