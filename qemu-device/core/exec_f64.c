/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The core's f64 instructions (DADD DMUL DDIV DMNMX DFMA DSETP, the
 * conversions F2D D2F I2D D2I L2D D2L, DSQRT DRCP) and 64-bit integer
 * division (IDIV64 IREM64): each double or 64-bit integer in a register
 * pair, low word first.  Rounding modes other than the host's: fround.c.
 */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "exec_inl.h"

/* ---- f64: each double in a register pair, low word first ---- */

INL double pair_get(struct vgpu_warp *w, uint16_t row, uint32_t l)
{
	uint64_t v = (uint64_t)vgpu_reg(w, row + 1u)[l] << 32 | vgpu_reg(w, row)[l];
	double x;

	memcpy(&x, &v, sizeof(x));
	return x;
}

INL void pair_set(struct vgpu_warp *w, uint16_t row, uint32_t l, double x)
{
	uint64_t v;

	memcpy(&v, &x, sizeof(v));
	vgpu_reg(w, row)[l] = (uint32_t)v;
	vgpu_reg(w, row + 1u)[l] = (uint32_t)(v >> 32);
}

#define DALU(name, expr)                                                       \
	VGPU_EXEC_PROTO(name)                                                         \
	{                                                                      \
		VGPU_LANES(em, l, {                                                 \
			double a = pair_get(w, d->ra, l), b = pair_get(w, d->rb, l); \
			pair_set(w, d->rd, l, (expr));                         \
		});                                                            \
		return VGPU_X_NEXT;                                            \
	}
/* DMNMX: a NaN loses, two NaNs give b's (quiet); -0 is less than +0 */
INL double dmnmx(double a, double b, unsigned op)
{
	bool mn = op == VGPU_MOD_MNMX_MIN;

	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b) ? vgpu_dquiet(b) : isnan(a) ? b : a;
	if (a == 0 && b == 0)
		return (signbit(a) != 0) == mn ? a : b;
	return mn ? fmin(a, b) : fmax(a, b);
}

#define DNAN(expr) (isnan(a) || isnan(b) ? vgpu_dnan(a, b, 0) : (expr))
DALU(vgpu_exec_dadd, DNAN(d->mod[0] ? vgpu_dround_add(a, b, d->mod[0]) : a + b))
DALU(vgpu_exec_dmul, DNAN(d->mod[0] ? vgpu_dround_mul(a, b, d->mod[0]) : a * b))
DALU(vgpu_exec_ddiv, d->mod[0] ? vgpu_dround_div(a, b, d->mod[0]) : a / b)
DALU(vgpu_exec_dmnmx, dmnmx(a, b, d->mod[0]))

VGPU_EXEC_PROTO(vgpu_exec_dfma)
{
	VGPU_LANES(em, l, {
		double x = pair_get(w, d->ra, l), y = pair_get(w, d->rb, l), z = pair_get(w, d->rc, l);

		/*
		 * NaNs by the GPU's rule, not the host's (which NaN a host
		 * fma() returns depends on the compiler and the libm: an
		 * ASan build chose x where gcc -O2 chose y): b's, else a's,
		 * else c's, made quiet
		 */
		if (isnan(x) || isnan(y) || isnan(z))
			pair_set(w, d->rd, l, isnan(y) ? vgpu_dquiet(y) : isnan(x) ? vgpu_dquiet(x) : vgpu_dquiet(z));
		else
			pair_set(w, d->rd, l, d->mod[0] ? vgpu_dround_fma(x, y, z, d->mod[0]) :
					      fma(x, y, z));
	});
	return VGPU_X_NEXT;
}

/* DSETP: ordered comparisons of doubles (false with a NaN, but NE), as FSETP */
VGPU_EXEC_PROTO(vgpu_exec_dsetp)
{
	uint32_t m = 0;

	for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++) {
		double x = pair_get(w, d->ra, l), y = pair_get(w, d->rb, l);
		bool t;

		switch (d->mod[0]) {
		case VGPU_MOD_CMP_LT: t = x < y; break;
		case VGPU_MOD_CMP_EQ: t = x == y; break;
		case VGPU_MOD_CMP_LE: t = x <= y; break;
		case VGPU_MOD_CMP_GT: t = x > y; break;
		case VGPU_MOD_CMP_NE: t = x != y; break;
		default: t = x >= y; break;
		}
		m |= (uint32_t)t << l;
	}
	m &= em;
	m = combine(m, vgpu_pred_mask(w, d->pp, d->pp_not), d->mod[1]);
	set_pred(w, d->pu, em, m);
	return VGPU_X_NEXT;
}

/* F2D: f32 -> f64, exact (a signalling NaN comes out quiet) */
VGPU_EXEC_PROTO(vgpu_exec_f2d)
{
	const uint32_t *ra = vgpu_reg(w, d->ra);

	VGPU_LANES(em, l, { pair_set(w, d->rd, l, (double)f32(ra[l])); });
	return VGPU_X_NEXT;
}

/* D2F: f64 -> f32, rounded to nearest even */
VGPU_EXEC_PROTO(vgpu_exec_d2f)
{
	uint32_t *rd = vgpu_reg(w, d->rd);

	VGPU_LANES(em, l, {
		double x = pair_get(w, d->ra, l);

		rd[l] = d->mod[0] ? vgpu_dround_d2f(x, d->mod[0]) : u32((float)x);
	});
	return VGPU_X_NEXT;
}

/* I2D.S32|U32: a 32-bit integer to f64 (exact) */
VGPU_EXEC_PROTO(vgpu_exec_i2d)
{
	const uint32_t *ra = vgpu_reg(w, d->ra);

	VGPU_LANES(em, l, {
		pair_set(w, d->rd, l, d->mod[0] == VGPU_MOD_ITYPE_S32 ? (double)(int32_t)ra[l] :
									(double)ra[l]);
	});
	return VGPU_X_NEXT;
}

/* D2I.S32|U32: f64 to a 32-bit integer, toward zero, saturating; NaN is 0 */
INL uint32_t d2i(double x, unsigned type)
{
	if (isnan(x))
		return 0;
	if (type == VGPU_MOD_ITYPE_S32) {
		if (x <= -2147483648.0)
			return 0x80000000u;
		if (x >= 2147483647.0)
			return 0x7fffffffu;
		return (uint32_t)(int32_t)x;
	}
	if (x <= 0.0)
		return 0;
	if (x >= 4294967295.0)
		return 0xffffffffu;
	return (uint32_t)x;
}

/*
 * IDIV64/IREM64 (.U32: unsigned, .S32: signed 64-bit integers in pairs),
 * with IDIV's rules: x / 0 and x % 0 are all ones, INT64_MIN / -1 wraps.
 */
INL uint64_t idiv64(uint64_t a, uint64_t b, unsigned type, bool rem)
{
	if (!b)
		return ~0ull;
	if (type == VGPU_MOD_ITYPE_S32) {
		int64_t x = (int64_t)a, y = (int64_t)b;

		if (x == INT64_MIN && y == -1)
			return rem ? 0 : a;
		return (uint64_t)(rem ? x % y : x / y);
	}
	return rem ? a % b : a / b;
}

#define IDIV64(name, rem)                                                      \
	VGPU_EXEC_PROTO(name)                                                         \
	{                                                                      \
		VGPU_LANES(em, l, {                                                 \
			uint64_t a = (uint64_t)vgpu_reg(w, d->ra + 1u)[l] << 32 | vgpu_reg(w, d->ra)[l]; \
			uint64_t b = (uint64_t)vgpu_reg(w, d->rb + 1u)[l] << 32 | vgpu_reg(w, d->rb)[l]; \
			uint64_t r = idiv64(a, b, d->mod[0], rem);             \
			vgpu_reg(w, d->rd)[l] = (uint32_t)r;                   \
			vgpu_reg(w, d->rd + 1u)[l] = (uint32_t)(r >> 32);      \
		});                                                            \
		return VGPU_X_NEXT;                                            \
	}
IDIV64(vgpu_exec_idiv64, false)
IDIV64(vgpu_exec_irem64, true)

/* DSQRT, DRCP: correctly rounded (sqrt.rn.f64, rcp.rn.f64) */
VGPU_EXEC_PROTO(vgpu_exec_dsqrt)
{
	VGPU_LANES(em, l, {
		double x = pair_get(w, d->ra, l);

		pair_set(w, d->rd, l, d->mod[0] ? vgpu_dround_sqrt(x, d->mod[0]) : sqrt(x));
	});
	return VGPU_X_NEXT;
}

VGPU_EXEC_PROTO(vgpu_exec_drcp)
{
	VGPU_LANES(em, l, {
		double x = pair_get(w, d->ra, l);

		pair_set(w, d->rd, l, d->mod[0] ? vgpu_dround_div(1.0, x, d->mod[0]) : 1.0 / x);
	});
	return VGPU_X_NEXT;
}

/* L2D.U32|S32: a 64-bit integer (pair) to f64, rounded to nearest even */
VGPU_EXEC_PROTO(vgpu_exec_l2d)
{
	VGPU_LANES(em, l, {
		uint64_t v = (uint64_t)vgpu_reg(w, d->ra + 1u)[l] << 32 | vgpu_reg(w, d->ra)[l];

		pair_set(w, d->rd, l,
			 d->mod[1] ? vgpu_dround_l2d(v, d->mod[0] == VGPU_MOD_ITYPE_S32, d->mod[1]) :
			 d->mod[0] == VGPU_MOD_ITYPE_S32 ? (double)(int64_t)v : (double)v);
	});
	return VGPU_X_NEXT;
}

/* D2L.U32|S32: f64 to a 64-bit integer toward zero, saturating, NaN 0 */
INL uint64_t d2l(double x, unsigned type)
{
	if (isnan(x))
		return 0;
	if (type == VGPU_MOD_ITYPE_S32) {
		if (x <= -9223372036854775808.0)
			return 0x8000000000000000ull;
		if (x >= 9223372036854775808.0)
			return 0x7fffffffffffffffull;
		return (uint64_t)(int64_t)x;
	}
	if (x <= 0.0)
		return 0;
	if (x >= 18446744073709551616.0)
		return ~0ull;
	return (uint64_t)x;
}

VGPU_EXEC_PROTO(vgpu_exec_d2l)
{
	VGPU_LANES(em, l, {
		uint64_t v = d2l(vgpu_dround_int(pair_get(w, d->ra, l), d->mod[1]), d->mod[0]);

		vgpu_reg(w, d->rd)[l] = (uint32_t)v;
		vgpu_reg(w, d->rd + 1u)[l] = (uint32_t)(v >> 32);
	});
	return VGPU_X_NEXT;
}

VGPU_EXEC_PROTO(vgpu_exec_d2i)
{
	uint32_t *rd = vgpu_reg(w, d->rd);

	VGPU_LANES(em, l, { rd[l] = d2i(vgpu_dround_int(pair_get(w, d->ra, l), d->mod[1]), d->mod[0]); });
	return VGPU_X_NEXT;
}

