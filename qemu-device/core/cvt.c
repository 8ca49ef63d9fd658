// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * CVT: a conversion between any two of the core's types (docs/core.md
 * "Conversions", an extension beside seed 002): integers of 8 to 64 bits,
 * f16, bf16, tf32, f32, f64, and the 8-bit floats e4m3 and e5m2, in every
 * rounding direction (.RN to nearest even, .RZ, .RM, .RP, .RNA to nearest
 * away from zero; .RNI .RZI .RMI .RPI to an integral value), with
 * .SAT, .FTZ, .RELU and .SATFINITE.  Exact: the source becomes m * 2^e
 * with a 64-bit m, which is rounded once to the destination, in integer
 * arithmetic only (no host rounding mode, no host float conversion).
 *
 * What a GPU (an H200) computes where IEEE 754 leaves a choice:
 *  - a NaN becomes the destination's canonical NaN: 0x7fffffff (f32),
 *    0x7fff (f16, bf16), 0x7fffffffffffffff (f64), 0x7f (e4m3, e5m2),
 *    0x7fffe000 (tf32; 0x7fffffff with .SATFINITE), except between f64
 *    and the others and from f32 or bf16 to f64, or bf16 to f32, which
 *    keep its sign and payload (quieted, but bf16 to f32 is the bits);
 *    .FTZ first makes the NaN f32's canonical one; with .SAT a NaN is +0;
 *    cvt.rna.tf32.f32 rounds the bits, NaN and infinity too (and with
 *    .SATFINITE takes one unit off an all-ones exponent);
 *  - a NaN converted to an integer is 0, but from f64 or to a 64-bit
 *    integer it is the most negative value's bit pattern (0x80000000 for
 *    .u32 and .s32 alike);
 *  - float to integer conversions always saturate; integer to integer
 *    ones saturate with .SAT and otherwise keep the low bits;
 *  - .SAT on a float destination clamps to [+0, 1.0] (-0 gives +0);
 *  - .FTZ flushes an f32 source's (but not for an f16 result) and an f32
 *    result's subnormals to a zero of their sign;
 *  - cvt.f32.f32 and cvt.f64.f64 without rounding or flags move the bits
 *    (f16 and bf16 to themselves make NaNs canonical);
 *  - .RELU makes a negative result (and -0) +0, keeping NaN;
 *  - .SATFINITE turns what would be infinite into the largest finite
 *    value of that sign, and e4m3 (which has no infinity) always
 *    saturates.
 * Destinations narrower than 32 bits are extended to the register: sign
 * for s8/s16, zeros otherwise.
 */
#include <string.h>

#include "core_priv.h"

enum { XZERO, XFIN, XINF, XNAN };

/* The exact value: (-1)^neg * m * 2^e, or a zero, infinity, NaN. */
struct xv {
	int cls;
	bool neg;
	uint64_t m;
	int e;
};

struct ffmt {
	int ebits, mbits, bias;
	bool inf;  /* has infinities (e4m3 does not) */
	uint64_t nan;
};

static const struct ffmt *fmt_of(unsigned t)
{
	static const struct ffmt f16 = { 5, 10, 15, true, 0x7fff };
	static const struct ffmt bf16 = { 8, 7, 127, true, 0x7fff };
	static const struct ffmt f32 = { 8, 23, 127, true, 0x7fffffff };
	static const struct ffmt tf32 = { 8, 10, 127, true, 0x7fffffff };
	static const struct ffmt f64 = { 11, 52, 1023, true, 0x7fffffffffffffffull };
	static const struct ffmt e4m3 = { 4, 3, 7, false, 0x7f };
	static const struct ffmt e5m2 = { 5, 2, 15, true, 0x7f };

	switch (t) {
	case VGPU_MOD_CVTD_F16: return &f16;
	case VGPU_MOD_CVTD_BF16: return &bf16;
	case VGPU_MOD_CVTD_F32: return &f32;
	case VGPU_MOD_CVTD_TF32: return &tf32;
	case VGPU_MOD_CVTD_F64: return &f64;
	case VGPU_MOD_CVTD_E4M3: return &e4m3;
	case VGPU_MOD_CVTD_E5M2: return &e5m2;
	default: return NULL;
	}
}

/* bits and signedness of an integer type */
static int int_bits(unsigned t, bool *sign)
{
	static const int bits[] = { 8, 8, 16, 16, 32, 32, 64, 64 };

	*sign = t & 1u;
	return bits[t];
}

static struct xv decode_float(uint64_t v, const struct ffmt *f)
{
	struct xv x = { 0 };
	int tbits = 1 + f->ebits + f->mbits;
	uint64_t emax = (1ull << f->ebits) - 1;
	uint64_t ex = (v >> f->mbits) & emax, fr = v & ((1ull << f->mbits) - 1);

	x.neg = (v >> (tbits - 1)) & 1u;
	if (ex == emax && (f->inf || fr == (1ull << f->mbits) - 1)) {
		x.cls = f->inf && !fr ? XINF : XNAN;
		x.m = fr; /* a NaN's payload, of e bits */
		x.e = f->mbits;
		return x;
	}
	if (!ex && !fr) {
		x.cls = XZERO;
		return x;
	}
	x.cls = XFIN;
	x.m = ex ? fr | 1ull << f->mbits : fr;
	x.e = (ex ? (int)ex : 1) - f->bias - f->mbits;
	return x;
}

static struct xv decode(uint64_t v, unsigned t, bool ftz)
{
	const struct ffmt *f = fmt_of(t);
	struct xv x = { 0 };
	bool sign;
	int bits;

	if (f) {
		x = decode_float(v, f);
		/* .FTZ: an f32 subnormal source is a zero (by the caller's say) */
		if (ftz && t == VGPU_MOD_CVTD_F32 && x.cls == XFIN && !(v & 0x7f800000u))
			x.cls = XZERO;
		return x;
	}
	bits = int_bits(t, &sign);
	if (bits < 64)
		v &= (1ull << bits) - 1;
	if (sign && bits < 64 && (v >> (bits - 1)) & 1u)
		v |= ~0ull << bits;
	x.neg = sign && (int64_t)v < 0;
	x.m = x.neg ? 0 - v : v;
	x.cls = x.m ? XFIN : XZERO;
	return x;
}

static int msb(uint64_t m)
{
	return 63 - __builtin_clzll(m);
}

/* Whether to add one to the magnitude @q kept, for the rounding @rnd
 * (a CVTR value) of a value of sign @neg; @half and @sticky are what
 * was dropped. */
static bool round_up(unsigned rnd, bool neg, uint64_t q, bool half, bool sticky)
{
	switch (rnd) {
	case VGPU_MOD_CVTR_RN:
	case VGPU_MOD_CVTR_RNI:
		return half && (sticky || (q & 1u));
	case VGPU_MOD_CVTR_RNA:
		return half;
	case VGPU_MOD_CVTR_RM:
	case VGPU_MOD_CVTR_RMI:
		return neg && (half || sticky);
	case VGPU_MOD_CVTR_RP:
	case VGPU_MOD_CVTR_RPI:
		return !neg && (half || sticky);
	default: /* RZ, RZI */
		return false;
	}
}

/* m >> sh rounded as @rnd says (sh may exceed 63) */
static uint64_t shift_round(uint64_t m, int sh, unsigned rnd, bool neg)
{
	uint64_t q;
	bool half, sticky;

	if (sh <= 0)
		return m;
	if (sh > 64) {
		q = 0;
		half = false;
		sticky = m != 0;
	} else if (sh == 64) {
		q = 0;
		half = m >> 63;
		sticky = (m << 1) != 0;
	} else {
		q = m >> sh;
		half = (m >> (sh - 1)) & 1u;
		sticky = (m & ((1ull << (sh - 1)) - 1)) != 0;
	}
	return q + round_up(rnd, neg, q, half, sticky);
}

/* x rounded to an integral value (finite x) */
static struct xv to_integral(struct xv x, unsigned rnd)
{
	if (x.cls != XFIN || x.e >= 0)
		return x;
	x.m = shift_round(x.m, -x.e, rnd, x.neg);
	x.e = 0;
	if (!x.m)
		x.cls = XZERO;
	return x;
}

static uint64_t encode_float(struct xv x, const struct ffmt *f, unsigned rnd, bool satfinite)
{
	int p = f->mbits + 1, emin = 1 - f->bias, q;
	uint64_t sgn = (uint64_t)x.neg << (f->ebits + f->mbits), mant, maxfin, inf;
	int64_t bexp;

	maxfin = (((1ull << f->ebits) - (f->inf ? 2 : 1)) << f->mbits) |
		 ((1ull << f->mbits) - (f->inf ? 1 : 2));
	inf = f->inf && !satfinite ? ((1ull << f->ebits) - 1) << f->mbits : maxfin;
	switch (x.cls) {
	case XNAN:
		return f->nan;
	case XZERO:
		return sgn;
	case XINF:
		return sgn | inf;
	}
	/* the quantum 2^q of the result's binade (or of the subnormals) */
	q = msb(x.m) + x.e;
	q = (q < emin ? emin : q) - f->mbits;
	if (x.e >= q) {
		mant = x.m << (x.e - q); /* exact: fewer than p bits */
	} else {
		mant = shift_round(x.m, q - x.e, rnd, x.neg);
		if (mant >> p) { /* carried into the next binade */
			mant >>= 1;
			q++;
		}
	}
	if (!mant)
		return sgn;
	if (!(mant >> f->mbits))
		return sgn | mant; /* subnormal */
	bexp = (int64_t)q + f->mbits + f->bias;
	if (bexp < (int64_t)(1ull << f->ebits) - (f->inf ? 1 : 0)) {
		uint64_t r = (uint64_t)bexp << f->mbits | (mant & ((1ull << f->mbits) - 1));

		if (r <= maxfin)
			return sgn | r;
	}
	/* overflow: infinity or the largest finite value, by direction */
	switch (rnd) {
	case VGPU_MOD_CVTR_RZ:
	case VGPU_MOD_CVTR_RZI:
		return sgn | maxfin;
	case VGPU_MOD_CVTR_RM:
	case VGPU_MOD_CVTR_RMI:
		return sgn | (x.neg ? inf : maxfin);
	case VGPU_MOD_CVTR_RP:
	case VGPU_MOD_CVTR_RPI:
		return sgn | (x.neg ? maxfin : inf);
	default:
		return f->inf || satfinite ? sgn | inf : f->nan;
	}
}

/* x as an integer of @bits (@sign), saturated; a NaN is @nanv */
static uint64_t encode_int(struct xv x, int bits, bool sign, uint64_t nanv)
{
	uint64_t max = sign ? (1ull << (bits - 1)) - 1 : bits == 64 ? ~0ull : (1ull << bits) - 1;
	uint64_t negmax = sign ? 1ull << (bits - 1) : 0, mag;

	if (x.cls == XNAN)
		return nanv;
	if (x.cls == XZERO)
		return 0;
	if (x.cls == XINF || msb(x.m) + x.e >= 64)
		mag = ~0ull;
	else
		mag = x.e >= 0 ? x.m << x.e : x.m >> -x.e;
	if (x.neg)
		return mag > negmax ? 0 - negmax : 0 - mag;
	return mag > max ? max : mag;
}

/*
 * A NaN of @f with the payload of @x (left-aligned, quieted) and its sign:
 * what the GPU gives between f32, f64 and bf16 (not f32 to bf16).
 */
static uint64_t nan_payload(struct xv x, const struct ffmt *f)
{
	uint64_t fr = x.e >= f->mbits ? x.m >> (x.e - f->mbits) : x.m << (f->mbits - x.e);

	return (uint64_t)x.neg << (f->ebits + f->mbits) |
	       ((1ull << f->ebits) - 1) << f->mbits | 1ull << (f->mbits - 1) | fr;
}

static bool keeps_payload(unsigned dt, unsigned st)
{
	switch (dt) {
	case VGPU_MOD_CVTD_F32:
		return st == VGPU_MOD_CVTS_F64 || st == VGPU_MOD_CVTS_BF16;
	case VGPU_MOD_CVTD_F64:
		return st == VGPU_MOD_CVTS_F32 || st == VGPU_MOD_CVTS_BF16 ||
		       st == VGPU_MOD_CVTS_F16 || st == VGPU_MOD_CVTS_F64;
	case VGPU_MOD_CVTD_BF16:
	case VGPU_MOD_CVTD_F16:
		return st == VGPU_MOD_CVTS_F64;
	default:
		return false;
	}
}

/* cvt.rna.tf32.f32 as the GPU does it, on the bits: NaN and infinity too */
static uint64_t tf32_rna(uint64_t v, bool satfinite)
{
	uint32_t r = ((uint32_t)v + 0x1000u) & 0xffffe000u;

	if (satfinite && (r & 0x7f800000u) == 0x7f800000u)
		r -= 0x2000u;
	return r;
}

static uint64_t cvt1(uint64_t v, unsigned dt, unsigned st, unsigned rnd, unsigned fl)
{
	const struct ffmt *df = fmt_of(dt), *sf = fmt_of(st);
	bool ftz = fl == VGPU_MOD_CVTF_FTZ || fl == VGPU_MOD_CVTF_FTZ_SAT;
	bool sat = fl == VGPU_MOD_CVTF_SAT || fl == VGPU_MOD_CVTF_FTZ_SAT;
	bool relu = fl == VGPU_MOD_CVTF_RELU || fl == VGPU_MOD_CVTF_RELU_SATFINITE;
	bool satfinite = fl == VGPU_MOD_CVTF_SATFINITE || fl == VGPU_MOD_CVTF_RELU_SATFINITE;
	struct xv x;
	uint64_t r;
	bool sign;
	int bits;

	if (dt == VGPU_MOD_CVTD_TF32 && rnd == VGPU_MOD_CVTR_RNA && st == VGPU_MOD_CVTS_F32)
		return tf32_rna(v, satfinite);
	if (dt == st && (dt == VGPU_MOD_CVTD_F32 || dt == VGPU_MOD_CVTD_F64) &&
	    rnd == VGPU_MOD_CVTR_RN && fl == VGPU_MOD_CVTF_NONE)
		return v; /* cvt.f32.f32, cvt.f64.f64: the bits, NaNs as they are */
	/* .FTZ flushes an f32 source, but not for an f16 result */
	x = decode(v, st, ftz && dt != VGPU_MOD_CVTD_F16);
	if (x.cls == XNAN && ftz && st != VGPU_MOD_CVTS_F64) /* f32's canonical NaN */
		x = decode(0x7fffffffu, VGPU_MOD_CVTS_F32, false);
	else if (x.cls == XNAN && st == VGPU_MOD_CVTS_BF16 && dt == VGPU_MOD_CVTD_F32)
		return (v & 0xffffu) << 16; /* the bits, not quieted */

	if (rnd >= VGPU_MOD_CVTR_RNI)
		x = to_integral(x, rnd);
	if (!df) {
		bits = int_bits(dt, &sign);
		if (!sf && !sat) { /* integer to integer: the low bits */
			r = x.neg ? 0 - x.m : x.m;
		} else {
			uint64_t nanv = st == VGPU_MOD_CVTS_F64 || bits == 64 ? 1ull << (bits - 1) : 0;

			r = encode_int(sf ? to_integral(x, rnd) : x, bits, sign, nanv);
		}
		if (bits < 64)
			r &= (1ull << bits) - 1;
		if (sign && bits < 64 && (r >> (bits - 1)) & 1u)
			r |= ~0ull << bits;
		return bits < 64 ? r & 0xffffffffu : r;
	}
	if (sat) { /* [+0, 1] */
		if (x.cls == XNAN || x.cls == XZERO || x.neg)
			return 0;
		if (x.cls == XINF || msb(x.m) + x.e >= 0) {
			x.cls = XFIN;
			x.m = 1;
			x.e = 0;
		}
	}
	if (relu && x.neg && x.cls != XNAN)
		return 0;
	if (x.cls == XNAN && keeps_payload(dt, st))
		return nan_payload(x, df);
	if (x.cls == XNAN && dt == VGPU_MOD_CVTD_TF32)
		return satfinite ? 0x7fffffffu : 0x7fffe000u;
	r = encode_float(x, df, rnd, satfinite);
	/* .FTZ: an f32 subnormal result is a zero of its sign */
	if (ftz && dt == VGPU_MOD_CVTD_F32 && !(r & 0x7f800000u))
		r &= 0x80000000u;
	if (dt == VGPU_MOD_CVTD_TF32 && x.cls != XNAN) /* f32's layout, 13 low bits clear */
		r <<= 13;
	return r;
}

uint64_t vgpu_cvt_rn(uint64_t v, unsigned dt, unsigned st)
{
	return cvt1(v, dt, st, VGPU_MOD_CVTR_RN, VGPU_MOD_CVTF_NONE);
}

VGPU_EXEC_PROTO(vgpu_exec_cvt)
{
	unsigned dt = d->mod[0], st = d->mod[1], rnd = d->mod[2], fl = d->mod[3];
	bool dw = vgpu_isa_cvt_wide(dt), sw = vgpu_isa_cvt_wide(st);

	(void)c;
	VGPU_FOR_LANES(em, l) {
		uint64_t v = vgpu_reg(w, d->ra)[l], r;

		if (sw)
			v |= (uint64_t)vgpu_reg(w, d->ra + 1u)[l] << 32;
		if (st == VGPU_MOD_CVTS_TF32)
			v = (v >> 13) & 0x7ffff; /* as f32's bits */
		r = cvt1(v, dt, st, rnd, fl);
		vgpu_reg(w, d->rd)[l] = (uint32_t)r;
		if (dw)
			vgpu_reg(w, d->rd + 1u)[l] = (uint32_t)(r >> 32);
	}
	return VGPU_X_NEXT;
}
