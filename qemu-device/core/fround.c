// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * f32 arithmetic rounded toward zero, -infinity or +infinity (the .RZ,
 * .RM, .RP of FADD, FMUL, FFMA, FDIV and MUFU.RCP/SQRT; PTX's .rz .rm .rp),
 * exactly as IEEE 754 rounds, without touching the host's rounding mode
 * (the core runs inside QEMU's threads and libvgpu's callers).
 *
 * Each operation computes f, the f32 result rounded to nearest, and the
 * sign of v - f, where v is the exact result: from an error-free
 * transformation in double (the sum and its exact error; a product of two
 * f32 is exact in double), or from the residual of f for a quotient or a
 * square root (one fused multiply-add, whose sign is right even when it
 * rounds).  The directed result is f or its neighbour on v's side.
 */
#include <math.h>
#include <float.h>
#include <string.h>

#include "core_priv.h"

static float f32v(uint32_t a)
{
	float f;

	memcpy(&f, &a, 4);
	return f;
}

static uint32_t u32v(float f)
{
	uint32_t a;

	memcpy(&a, &f, 4);
	return a;
}

static int sgn(double x)
{
	return x > 0 ? 1 : x < 0 ? -1 : 0;
}

/* f rounded to nearest; @dir the sign of (exact - f). */
static uint32_t directed(float f, int dir, unsigned rnd)
{
	if (isnan(f) || !dir)
		return u32v(f);
	switch (rnd) {
	case VGPU_MOD_RND_RZ:
		if ((dir < 0 && f > 0) || (dir > 0 && f < 0))
			f = nextafterf(f, 0.0f);
		break;
	case VGPU_MOD_RND_RM:
		if (dir < 0)
			f = nextafterf(f, -INFINITY);
		break;
	default: /* RP */
		if (dir > 0)
			f = nextafterf(f, INFINITY);
		break;
	}
	return u32v(f);
}

/* s + e exactly (TwoSum) */
static void two_sum(double x, double y, double *s, double *e)
{
	double bb;

	*s = x + y;
	bb = *s - x;
	*e = (x - (*s - bb)) + (y - bb);
}

/* sign(s + e - f) for the exact value s + e and its f32 rounding f */
static int dir_of(double s, double e, float f)
{
	if (isinf(f))
		return f > 0 ? -1 : 1; /* finite v rounded to nearest overflowed */
	return sgn((s - (double)f) + e);
}

/*
 * An exact zero sum of operands that are not both +0 or both -0 is -0
 * under RM and +0 otherwise (IEEE 754 6.3); rounding to nearest made +0.
 */
static uint32_t zero_sum(float f, double x, double y, unsigned rnd)
{
	if (f == 0 && rnd == VGPU_MOD_RND_RM && !(x == 0 && y == 0 && signbit(x) == signbit(y)))
		return u32v(-0.0f);
	return u32v(f);
}

static uint32_t add_d(double x, double y, unsigned rnd)
{
	double s, e;
	float f;

	if (!isfinite(x) || !isfinite(y))
		return u32v((float)(x + y));
	two_sum(x, y, &s, &e);
	f = (float)s;
	if (s == 0 && e == 0)
		return zero_sum(f, x, y, rnd);
	return directed(f, dir_of(s, e, f), rnd);
}

uint32_t vgpu_fround_add(uint32_t a, uint32_t b, unsigned rnd)
{
	return add_d(f32v(a), f32v(b), rnd);
}

uint32_t vgpu_fround_mul(uint32_t a, uint32_t b, unsigned rnd)
{
	double p = (double)f32v(a) * f32v(b); /* exact: 24 + 24 bits */
	float f = (float)p;

	if (!isfinite(p))
		return u32v(f);
	return directed(f, dir_of(p, 0, f), rnd);
}

uint32_t vgpu_fround_fma(uint32_t a, uint32_t b, uint32_t c, unsigned rnd)
{
	double p = (double)f32v(a) * f32v(b), z = f32v(c);

	if (!isfinite(p) || !isfinite(z))
		return u32v(fmaf(f32v(a), f32v(b), f32v(c)));
	return add_d(p, z, rnd);
}

uint32_t vgpu_fround_div(uint32_t a, uint32_t b, unsigned rnd)
{
	float x = f32v(a), y = f32v(b), f = x / y;
	double r;

	if (!isfinite(x) || !isfinite(y) || y == 0 || x == 0 || isnan(f))
		return u32v(f);
	if (isinf(f))
		return directed(f, f > 0 ? -1 : 1, rnd);
	/* x - f * y: f * y is exact in double, one rounding keeps the sign */
	r = fma(-(double)f, (double)y, (double)x);
	return directed(f, sgn(r) * (y > 0 ? 1 : -1), rnd);
}

uint32_t vgpu_fround_sqrt(uint32_t a, unsigned rnd)
{
	float x = f32v(a), f = sqrtf(x);

	if (!(x > 0) || isinf(x))
		return u32v(f);
	return directed(f, sgn(fma(-(double)f, (double)f, (double)x)), rnd);
}

uint32_t vgpu_fround_rcp(uint32_t a, unsigned rnd)
{
	return vgpu_fround_div(u32v(1.0f), a, rnd);
}

uint32_t vgpu_fround_i2f(uint32_t a, bool sign, unsigned rnd)
{
	double v = sign ? (double)(int32_t)a : (double)a; /* exact */
	float f = (float)v;

	return directed(f, sgn(v - (double)f), rnd);
}

uint32_t vgpu_fround_rint(uint32_t a, unsigned rnd)
{
	float x = f32v(a);

	switch (rnd) {
	case VGPU_MOD_RND_RZ: return u32v(truncf(x));
	case VGPU_MOD_RND_RM: return u32v(floorf(x));
	case VGPU_MOD_RND_RP: return u32v(ceilf(x));
	default: return u32v(nearbyintf(x));
	}
}

/* ---- f64 ---- */

typedef __float128 quad;

static int qsgn(quad x)
{
	return x > 0 ? 1 : x < 0 ? -1 : 0;
}

static double dround(double f, int dir, unsigned rnd)
{
	if (isnan(f) || !dir)
		return f;
	switch (rnd) {
	case VGPU_MOD_RND_RZ:
		if ((dir < 0 && f > 0) || (dir > 0 && f < 0))
			f = nextafter(f, 0.0);
		break;
	case VGPU_MOD_RND_RM:
		if (dir < 0)
			f = nextafter(f, -INFINITY);
		break;
	default:
		if (dir > 0)
			f = nextafter(f, INFINITY);
		break;
	}
	return f;
}

/* an exact zero sum: -0 under RM unless both addends are zeros of one sign */
static double dzero(double f, double x, double y, unsigned rnd)
{
	if (rnd == VGPU_MOD_RND_RM && !(x == 0 && y == 0 && signbit(x) == signbit(y)))
		return -0.0;
	return f;
}

double vgpu_dround_add(double x, double y, unsigned rnd)
{
	double s, e;

	if (!isfinite(x) || !isfinite(y))
		return x + y;
	two_sum(x, y, &s, &e);
	if (isinf(s))
		return dround(s, s > 0 ? -1 : 1, rnd);
	if (s == 0 && e == 0)
		return dzero(s, x, y, rnd);
	return dround(s, sgn(e), rnd);
}

double vgpu_dround_mul(double x, double y, unsigned rnd)
{
	double f = x * y;

	if (!isfinite(x) || !isfinite(y) || x == 0 || y == 0)
		return f; /* exact */
	if (isinf(f))
		return dround(f, f > 0 ? -1 : 1, rnd);
	return dround(f, qsgn((quad)x * (quad)y - (quad)f), rnd);
}

double vgpu_dround_fma(double x, double y, double z, unsigned rnd)
{
	double f = fma(x, y, z);
	quad p, q, s, bb, e;

	if (!isfinite(x) || !isfinite(y) || !isfinite(z))
		return f;
	if (isinf(f))
		return dround(f, f > 0 ? -1 : 1, rnd);
	p = (quad)x * (quad)y; /* exact */
	q = (quad)z;
	s = p + q; /* TwoSum in binary128: s + e is x * y + z exactly */
	bb = s - p;
	e = (p - (s - bb)) + (q - bb);
	if (s == 0 && e == 0) {
		double sp = signbit(x) != signbit(y) ? -0.0 : 0.0;

		return dzero(f, p == 0 ? sp : 1.0, z, rnd);
	}
	return dround(f, qsgn((s - (quad)f) + e), rnd);
}

double vgpu_dround_div(double x, double y, unsigned rnd)
{
	double f = x / y;

	if (!isfinite(x) || !isfinite(y) || y == 0 || x == 0 || isnan(f))
		return f;
	if (isinf(f))
		return dround(f, f > 0 ? -1 : 1, rnd);
	/* x - f * y: the product is exact, the difference keeps its sign */
	return dround(f, qsgn((quad)x - (quad)f * (quad)y) * (y > 0 ? 1 : -1), rnd);
}

double vgpu_dround_sqrt(double x, unsigned rnd)
{
	double f = sqrt(x);

	if (!(x > 0) || isinf(x))
		return f;
	return dround(f, qsgn((quad)x - (quad)f * (quad)f), rnd);
}

uint32_t vgpu_dround_d2f(double x, unsigned rnd)
{
	float f = (float)x;

	if (isnan(x) || isinf(x))
		return u32v(f);
	if (isinf(f))
		return directed(f, f > 0 ? -1 : 1, rnd);
	return directed(f, sgn(x - (double)f), rnd);
}

double vgpu_dround_l2d(uint64_t v, bool sign, unsigned rnd)
{
	long double x = sign ? (long double)(int64_t)v : (long double)v; /* exact: 64 bits */
	double f = sign ? (double)(int64_t)v : (double)v;
	long double dd = x - (long double)f;

	return dround(f, dd > 0 ? 1 : dd < 0 ? -1 : 0, rnd);
}

/* f64 to an integral value as F2I's IRND says (before the conversion) */
double vgpu_dround_int(double x, unsigned irnd)
{
	switch (irnd) {
	case VGPU_MOD_IRND_RN: return nearbyint(x);
	case VGPU_MOD_IRND_RM: return floor(x);
	case VGPU_MOD_IRND_RP: return ceil(x);
	default: return x;
	}
}
