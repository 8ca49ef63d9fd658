/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-instruction behaviour of the general-purpose groups: integer and
 * float ALU, predicates, special registers, control flow, vote and
 * shuffle, and the table of every instruction's function.  Memory and
 * atomics live in exec_mem.c, f64 and 64-bit division in exec_f64.c, the
 * named-barrier unit in bar.c; what they share in exec_inl.h.
 *
 * Every function gets the warp and @em, the lanes of the current SIMT group
 * whose guard predicate holds (never 0).  Register rows come predecoded
 * (RZ already mapped), so the bodies are plain loops over lanes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core_priv.h"
#include "exec_inl.h"

/*
 * Two-operand ALU instructions in a register (_r) and an immediate (_i)
 * flavour from one expression over a, b (uint32_t) and d (the instruction).
 */
#define ALU_LANES(load_c, imm, expr)                                            \
	VGPU_LANES(em, l, {                                                         \
		uint32_t a = ra[l], b = imm ? d->imm : rb[l];                  \
		uint32_t cc = load_c ? rc[l] : 0;                              \
		(void)a; (void)b; (void)cc;                                    \
		rd[l] = (expr);                                                \
	})

/*
 * The expressions read the instruction's modifiers and immediate through
 * @d, a copy on the stack: a store to rd[] cannot change it, so the
 * compiler keeps them out of the lane loop and vectorises it (through
 * the program's struct vgpu_dinsn it reloaded them per lane: LOP ran a
 * scalar loop).
 */
struct alu_fields {
	uint32_t imm;
	uint8_t mod[VGPU_ISA_MAX_MODS];
};

/*
 * @plain: a condition on d under which @pexpr computes @expr (float
 * instructions without rounding or flush modifiers), tested once per
 * instruction so that the lane loop is a plain vector loop.
 */
#define ALU_BODY(name, load_c, plain, pexpr, expr)                             \
	INL void name##_body(struct vgpu_warp *w, const struct vgpu_dinsn *di, \
			     uint32_t em, const int imm)                       \
	{                                                                      \
		struct alu_fields f = { .imm = di->imm };                      \
		const struct alu_fields *d = &f;                               \
		uint32_t *rd = vgpu_reg(w, di->rd);                            \
		const uint32_t *ra = vgpu_reg(w, di->ra);                      \
		const uint32_t *rb = vgpu_reg(w, di->rb);                      \
		const uint32_t *rc = vgpu_reg(w, di->rc);                      \
		memcpy(f.mod, di->mod, sizeof(f.mod));                         \
		(void)rc;                                                      \
		if (plain)                                                     \
			ALU_LANES(load_c, imm, pexpr);                         \
		else                                                           \
			ALU_LANES(load_c, imm, expr);                          \
	}                                                                      \
	EXEC(exec_##name##_r)                                                  \
	{                                                                      \
		name##_body(w, d, em, 0);                                      \
		return VGPU_X_NEXT;                                            \
	}                                                                      \
	EXEC(exec_##name##_i)                                                  \
	{                                                                      \
		name##_body(w, d, em, 1);                                      \
		return VGPU_X_NEXT;                                            \
	}

/*
 * ALU instructions in a register (_r) and an immediate (_i) flavour from
 * one expression over a, b (and cc, the third source, for ALU3); FALU2/3
 * for float instructions, with the expression for no modifiers.
 */
#define ALU2(name, expr) ALU_BODY(name, 0, 0, 0, expr)
#define ALU3(name, expr) ALU_BODY(name, 1, 0, 0, expr)
#define FALU2(name, pexpr, expr) ALU_BODY(name, 0, !d->mod[0] && !d->mod[1], pexpr, expr)
#define FALU3(name, pexpr, expr) ALU_BODY(name, 1, !d->mod[0] && !d->mod[1], pexpr, expr)

INL uint32_t imulhi(uint32_t a, uint32_t b, unsigned type)
{
	if (type == VGPU_MOD_ITYPE_S32)
		return (uint32_t)((uint64_t)((int64_t)(int32_t)a * (int32_t)b) >> 32);
	return (uint32_t)(((uint64_t)a * b) >> 32);
}

INL uint32_t imnmx(uint32_t a, uint32_t b, unsigned op, unsigned type)
{
	bool lt = type == VGPU_MOD_ITYPE_S32 ? (int32_t)a < (int32_t)b : a < b;

	return (op == VGPU_MOD_MNMX_MIN) == lt ? a : b;
}

INL uint32_t shr(uint32_t a, uint32_t b, unsigned type)
{
	if (type == VGPU_MOD_ITYPE_S32)
		return (uint32_t)((int32_t)a >> (b > 31 ? 31 : b));
	return b > 31 ? 0 : a >> b;
}

/* The GPU's f32 NaN: every f32 result that is a NaN is this one */
#define FNAN 0x7fffffffu

INL bool fisnan(uint32_t a)
{
	return (a & 0x7fffffffu) > 0x7f800000u;
}

INL uint32_t fcanon(uint32_t r)
{
	return fisnan(r) ? FNAN : r;
}

/*
 * FMNMX: a NaN operand loses (either kind), two NaNs give FNAN, and -0 is
 * less than +0.
 */
INL uint32_t fmnmx(uint32_t a, uint32_t b, unsigned op)
{
	bool mn = op == VGPU_MOD_MNMX_MIN;

	if (fisnan(a))
		return fisnan(b) ? FNAN : b;
	if (fisnan(b))
		return a;
	if (!((a | b) & 0x7fffffffu)) /* two zeros */
		return mn ? a | b : a & b;
	return u32(mn ? fminf(f32(a), f32(b)) : fmaxf(f32(a), f32(b)));
}

/*
 * Integer division as PTX leaves it to the machine, as an H200 computes
 * it: x / 0 and x % 0 are all ones; INT_MIN / -1 wraps to INT_MIN, INT_MIN % -1 is 0.
 */
INL uint32_t idiv(uint32_t a, uint32_t b, unsigned type, bool rem)
{
	if (!b)
		return 0xffffffffu;
	if (type == VGPU_MOD_ITYPE_S32) {
		int32_t x = (int32_t)a, y = (int32_t)b;

		if (x == INT32_MIN && y == -1)
			return rem ? 0 : a;
		return (uint32_t)(rem ? x % y : x / y);
	}
	return rem ? a % b : a / b;
}

/* MUFU: correctly rounded where PTX asks for it (rcp.rn, sqrt.rn), the
 * C library's float functions for the .approx ones (not the hardware's
 * approximations: the last bits may differ from a GPU's). */
INL uint32_t mufu(uint32_t a, unsigned fn)
{
	float x = f32(a);

	switch (fn) {
	case VGPU_MOD_MUFU_RCP: return u32(1.0f / x);
	case VGPU_MOD_MUFU_SQRT: return u32(sqrtf(x));
	case VGPU_MOD_MUFU_RSQ: return u32((float)(1.0 / sqrt((double)x)));
	case VGPU_MOD_MUFU_EX2: return u32(exp2f(x));
	case VGPU_MOD_MUFU_LG2: return u32(log2f(x));
	case VGPU_MOD_MUFU_SIN: return u32(sinf(x));
	case VGPU_MOD_MUFU_RINT: return u32(nearbyintf(x)); /* .RN: to nearest even */
	default: return u32(cosf(x));
	}
}

ALU2(iadd, a + b)
ALU2(isub, a - b)
ALU2(imul, a * b)
ALU2(imulhi, imulhi(a, b, d->mod[0]))
ALU3(imad, a * b + cc)
ALU2(imnmx, imnmx(a, b, d->mod[0], d->mod[1]))
/* LOP: one loop per operation, each a plain vector loop */
ALU2(lop_and, a & b)
ALU2(lop_or, a | b)
ALU2(lop_xor, a ^ b)
#define LOP(name, form)                                                        \
	EXEC(name)                                                             \
	{                                                                      \
		switch (d->mod[0]) {                                           \
		case VGPU_MOD_LOP_AND: return exec_lop_and_##form(c, w, d, em); \
		case VGPU_MOD_LOP_OR: return exec_lop_or_##form(c, w, d, em);  \
		default: return exec_lop_xor_##form(c, w, d, em);              \
		}                                                              \
	}
LOP(exec_lop_r, r)
LOP(exec_lop_i, i)
ALU2(shl, b > 31 ? 0 : a << b)
ALU2(shr, shr(a, b, d->mod[0]))
/*
 * .FTZ: a subnormal operand counts as a zero of its sign, and so does a
 * subnormal result (PTX's .ftz).
 */
INL uint32_t ftz(uint32_t a)
{
	return (a & 0x7f800000u) ? a : a & 0x80000000u;
}

INL uint32_t fadd_(uint32_t a, uint32_t b, unsigned rnd)
{
	return rnd ? vgpu_fround_add(a, b, rnd) : u32(f32(a) + f32(b));
}

INL uint32_t fmul_(uint32_t a, uint32_t b, unsigned rnd)
{
	return rnd ? vgpu_fround_mul(a, b, rnd) : u32(f32(a) * f32(b));
}

INL uint32_t ffma_(uint32_t a, uint32_t b, uint32_t c, unsigned rnd)
{
	return rnd ? vgpu_fround_fma(a, b, c, rnd) : u32(fmaf(f32(a), f32(b), f32(c)));
}

INL uint32_t fdiv_(uint32_t a, uint32_t b, unsigned rnd)
{
	return rnd ? vgpu_fround_div(a, b, rnd) : u32(f32(a) / f32(b));
}

/* f32 results: a NaN is always FNAN (the GPU's, whatever the operands') */
FALU2(fadd, fcanon(u32(f32(a) + f32(b))),
      fcanon(d->mod[1] ? ftz(fadd_(ftz(a), ftz(b), d->mod[0])) : fadd_(a, b, d->mod[0])))
FALU2(fmul, fcanon(u32(f32(a) * f32(b))),
      fcanon(d->mod[1] ? ftz(fmul_(ftz(a), ftz(b), d->mod[0])) : fmul_(a, b, d->mod[0])))
FALU3(ffma, fcanon(u32(fmaf(f32(a), f32(b), f32(cc)))),
      fcanon(d->mod[1] ? ftz(ffma_(ftz(a), ftz(b), ftz(cc), d->mod[0])) :
			 ffma_(a, b, cc, d->mod[0])))
ALU2(fmnmx, d->mod[1] ? fmnmx(ftz(a), ftz(b), d->mod[0]) : fmnmx(a, b, d->mod[0]))
ALU2(idiv, idiv(a, b, d->mod[0], false))
ALU2(irem, idiv(a, b, d->mod[0], true))
ALU2(fdiv, fcanon(d->mod[1] ? ftz(fdiv_(ftz(a), ftz(b), d->mod[0])) : fdiv_(a, b, d->mod[0])))

EXEC(exec_mufu)
{
	uint32_t *rd = vgpu_reg(w, d->rd);
	const uint32_t *ra = vgpu_reg(w, d->ra);

	/* .RZ/.RM/.RP: for RCP, SQRT and RINT (PTX's rcp/sqrt .rz .rm .rp,
	 * cvt.r*i.f32.f32); the approximations ignore it.  .FTZ flushes a
	 * subnormal operand and result. */
	VGPU_LANES(em, l, {
		uint32_t a = d->mod[2] ? ftz(ra[l]) : ra[l], r;

		if (d->mod[1] && d->mod[0] == VGPU_MOD_MUFU_RCP)
			r = vgpu_fround_rcp(a, d->mod[1]);
		else if (d->mod[1] && d->mod[0] == VGPU_MOD_MUFU_SQRT)
			r = vgpu_fround_sqrt(a, d->mod[1]);
		else if (d->mod[1] && d->mod[0] == VGPU_MOD_MUFU_RINT)
			r = vgpu_fround_rint(a, d->mod[1]);
		else
			r = mufu(a, d->mod[0]);
		rd[l] = fcanon(d->mod[2] ? ftz(r) : r);
	});
	return VGPU_X_NEXT;
}

EXEC(exec_mov_i)
{
	uint32_t *rd = vgpu_reg(w, d->rd);

	VGPU_LANES(em, l, { rd[l] = d->imm; });
	return VGPU_X_NEXT;
}

EXEC(exec_mov_ra)
{
	uint32_t *rd = vgpu_reg(w, d->rd);
	const uint32_t *ra = vgpu_reg(w, d->ra);

	VGPU_LANES(em, l, { rd[l] = ra[l]; });
	return VGPU_X_NEXT;
}

/* Lane mask of (a OP b) over @em, a and b converted to T. */
#define CMP_MASK(T, conv, OP)                                                  \
	do {                                                                   \
		for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++) {                \
			T x = conv(ra[l]), y = conv(imm ? d->imm : rb[l]);     \
			m |= (uint32_t)(x OP y) << l;                          \
		}                                                              \
		m &= em;                                                       \
	} while (0)

#define CMP_SWITCH(cmp, T, conv)                                               \
	do {                                                                   \
		switch (cmp) {                                                 \
		case VGPU_MOD_CMP_LT: CMP_MASK(T, conv, <); break;             \
		case VGPU_MOD_CMP_EQ: CMP_MASK(T, conv, ==); break;            \
		case VGPU_MOD_CMP_LE: CMP_MASK(T, conv, <=); break;            \
		case VGPU_MOD_CMP_GT: CMP_MASK(T, conv, >); break;             \
		case VGPU_MOD_CMP_NE: CMP_MASK(T, conv, !=); break;            \
		default: CMP_MASK(T, conv, >=); break;                         \
		}                                                              \
	} while (0)

#define AS_U32(v) (v)
#define AS_S32(v) ((int32_t)(v))
#define AS_F32(v) f32(v)
#define AS_F32Z(v) f32(ftz(v))

/*
 * ISETP/FSETP: Pu = (a CMP b) COMB {!}Pp.  Float comparisons are ordered
 * (false when either side is NaN) except NE, as in C.
 */
INL void setp_body(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			     uint32_t em, const int imm, const int fp)
{
	const uint32_t *ra = vgpu_reg(w, d->ra);
	const uint32_t *rb = vgpu_reg(w, d->rb);
	unsigned comb = fp ? d->mod[1] : d->mod[2];
	uint32_t m = 0;

	if (fp && d->mod[2])
		CMP_SWITCH(d->mod[0], float, AS_F32Z);
	else if (fp)
		CMP_SWITCH(d->mod[0], float, AS_F32);
	else if (d->mod[1] == VGPU_MOD_ITYPE_S32)
		CMP_SWITCH(d->mod[0], int32_t, AS_S32);
	else
		CMP_SWITCH(d->mod[0], uint32_t, AS_U32);
	m = combine(m, vgpu_pred_mask(w, d->pp, d->pp_not), comb);
	set_pred(w, d->pu, em, m);
}

EXEC(exec_isetp_r)
{
	setp_body(w, d, em, 0, 0);
	return VGPU_X_NEXT;
}

EXEC(exec_isetp_i)
{
	setp_body(w, d, em, 1, 0);
	return VGPU_X_NEXT;
}

EXEC(exec_fsetp_r)
{
	setp_body(w, d, em, 0, 1);
	return VGPU_X_NEXT;
}

EXEC(exec_fsetp_i)
{
	setp_body(w, d, em, 1, 1);
	return VGPU_X_NEXT;
}


/* SEL Rd, Ra, Rb|imm, {!}Pp: Pp ? Ra : Rb */
#define SEL(name, use_imm)                                                         \
	EXEC(name)                                                             \
	{                                                                      \
		uint32_t *rd = vgpu_reg(w, d->rd);                             \
		const uint32_t *ra = vgpu_reg(w, d->ra);                       \
		const uint32_t *rb = vgpu_reg(w, d->rb);                       \
		uint32_t p = vgpu_pred_mask(w, d->pp, d->pp_not);              \
		const uint32_t imm = d->imm; /* not reloaded per lane */       \
		VGPU_LANES(em, l, {                                                 \
			rd[l] = (p >> l) & 1 ? ra[l] : (use_imm ? imm : rb[l]);   \
		});                                                            \
		return VGPU_X_NEXT;                                            \
	}
SEL(exec_sel_r, 0)
SEL(exec_sel_i, 1)

/*
 * F2I rounds to an integer (toward zero by default; .RN to nearest even,
 * .RM down, .RP up) and saturates; NaN gives 0.
 */
INL uint32_t f2i(uint32_t a, unsigned type, unsigned rnd)
{
	float f = f32(a);

	if (isnan(f))
		return 0;
	switch (rnd) {
	case VGPU_MOD_IRND_RN: f = nearbyintf(f); break; /* the host rounds to nearest */
	case VGPU_MOD_IRND_RM: f = floorf(f); break;
	case VGPU_MOD_IRND_RP: f = ceilf(f); break;
	default: break;
	}
	if (type == VGPU_MOD_ITYPE_S32) {
		if (f <= -2147483648.0f)
			return 0x80000000u;
		if (f >= 2147483648.0f)
			return 0x7fffffffu;
		return (uint32_t)(int32_t)f;
	}
	if (f <= 0.0f)
		return 0;
	if (f >= 4294967296.0f)
		return 0xffffffffu;
	return (uint32_t)f;
}

EXEC(exec_f2i)
{
	uint32_t *rd = vgpu_reg(w, d->rd);
	const uint32_t *ra = vgpu_reg(w, d->ra);

	VGPU_LANES(em, l, { rd[l] = f2i(ra[l], d->mod[0], d->mod[1]); });
	return VGPU_X_NEXT;
}

EXEC(exec_i2f)
{
	uint32_t *rd = vgpu_reg(w, d->rd);
	const uint32_t *ra = vgpu_reg(w, d->ra);

	VGPU_LANES(em, l, {
		rd[l] = d->mod[1] ? vgpu_fround_i2f(ra[l], d->mod[0] == VGPU_MOD_ITYPE_S32,
						    d->mod[1]) :
			u32(d->mod[0] == VGPU_MOD_ITYPE_S32 ? (float)(int32_t)ra[l] :
							      (float)ra[l]);
	});
	return VGPU_X_NEXT;
}

static uint32_t sreg(const struct vgpu_cta *c, const struct vgpu_warp *w,
		     uint32_t sr, uint32_t lane)
{
	const struct vgpu_launch *l = c->l;
	uint32_t t = w->id * VGPU_WARP_SIZE + lane;

	switch (sr) {
	case VGPU_SR_TID_X: return t % l->block[0];
	case VGPU_SR_TID_Y: return (t / l->block[0]) % l->block[1];
	case VGPU_SR_TID_Z: return t / (l->block[0] * l->block[1]);
	case VGPU_SR_CTAID_X: return c->id[0];
	case VGPU_SR_CTAID_Y: return c->id[1];
	case VGPU_SR_CTAID_Z: return c->id[2];
	case VGPU_SR_NTID_X: return l->block[0];
	case VGPU_SR_NTID_Y: return l->block[1];
	case VGPU_SR_NTID_Z: return l->block[2];
	case VGPU_SR_NCTAID_X: return l->grid[0];
	case VGPU_SR_NCTAID_Y: return l->grid[1];
	case VGPU_SR_NCTAID_Z: return l->grid[2];
	case VGPU_SR_LANEID: return lane;
	case VGPU_SR_WARPID: return w->id;
	case VGPU_SR_NWARPS: return c->nwarps;
	case VGPU_SR_TID: return t;
	case VGPU_SR_CLOCK_LO: return (uint32_t)c->sm->clock;
	case VGPU_SR_CLOCK_HI: return (uint32_t)(c->sm->clock >> 32);
	/* the SM clock at 1 GHz: NANOSLEEP's time base (docs/core.md) */
	case VGPU_SR_GLOBALTIMER_LO: return (uint32_t)c->sm->clock;
	case VGPU_SR_GLOBALTIMER_HI: return (uint32_t)(c->sm->clock >> 32);
	case VGPU_SR_SMEM_BYTES: return l->smem_bytes;
	case VGPU_SR_SMID: return c->sm->cfg.sm_id;
	case VGPU_SR_NSMID: return c->sm->cfg.nsms;
	case VGPU_SR_NWARPID: return c->sm->cfg.nwarpids;
	case VGPU_SR_CDP_AREA_LO: return (uint32_t)l->cdp_area;
	case VGPU_SR_CDP_AREA_HI: return (uint32_t)(l->cdp_area >> 32);
	case VGPU_SR_CDP_GRID: return l->cdp_grid;
	case VGPU_SR_CLUSTER_CTARANK: return vgpu_coop(c) ? 0 : c->rank;
	case VGPU_SR_CLUSTER_NCTARANK: return vgpu_coop(c) ? 1 : c->sm->nctas;
	case VGPU_SR_CLUSTER_CTAID_X: return c->id[0] % (l->cluster[0] ? l->cluster[0] : 1);
	case VGPU_SR_CLUSTER_CTAID_Y: return c->id[1] % (l->cluster[1] ? l->cluster[1] : 1);
	case VGPU_SR_CLUSTER_CTAID_Z: return c->id[2] % (l->cluster[2] ? l->cluster[2] : 1);
	case VGPU_SR_CLUSTER_NCTAID_X: return l->cluster[0] ? l->cluster[0] : 1;
	case VGPU_SR_CLUSTER_NCTAID_Y: return l->cluster[1] ? l->cluster[1] : 1;
	case VGPU_SR_CLUSTER_NCTAID_Z: return l->cluster[2] ? l->cluster[2] : 1;
	case VGPU_SR_CLUSTERID_X: return vgpu_coop(c) ? c->id[0] : c->sm->cluster_id[0];
	case VGPU_SR_CLUSTERID_Y: return vgpu_coop(c) ? c->id[1] : c->sm->cluster_id[1];
	case VGPU_SR_CLUSTERID_Z: return vgpu_coop(c) ? c->id[2] : c->sm->cluster_id[2];
	case VGPU_SR_NCLUSTERID_X: return l->grid[0] / (l->cluster[0] ? l->cluster[0] : 1);
	case VGPU_SR_NCLUSTERID_Y: return l->grid[1] / (l->cluster[1] ? l->cluster[1] : 1);
	case VGPU_SR_NCLUSTERID_Z: return l->grid[2] / (l->cluster[2] ? l->cluster[2] : 1);
	default: return 0;
	}
}

EXEC(exec_s2r)
{
	uint32_t *rd = vgpu_reg(w, d->rd);
	uint32_t base = w->id * VGPU_WARP_SIZE, v;

	switch (d->imm) {
	case VGPU_SR_TID_X:
		if (c->l->block[0] % VGPU_WARP_SIZE)
			break;
		base %= c->l->block[0];
		/* the warp's lanes are consecutive in x */
		__attribute__((fallthrough));
	case VGPU_SR_TID:
		VGPU_LANES(em, l, { rd[l] = base + l; });
		return VGPU_X_NEXT;
	case VGPU_SR_TID_Y:
	case VGPU_SR_TID_Z:
	case VGPU_SR_LANEID:
		break;
	default: /* the same for every lane */
		v = sreg(c, w, d->imm, 0);
		VGPU_LANES(em, l, { rd[l] = v; });
		return VGPU_X_NEXT;
	}
	VGPU_LANES(em, l, { rd[l] = sreg(c, w, d->imm, l); });
	return VGPU_X_NEXT;
}

EXEC(exec_nop)
{
	return VGPU_X_NEXT;
}

/* ---- Control ---- */

EXEC(exec_bra)
{
	int64_t target = (int64_t)vgpu_byte_pc(w->cur_pc) + (int32_t)d->imm;

	if (target < 0 || target % VGPU_INSN_BYTES ||
	    target / VGPU_INSN_BYTES >= c->prog->n) {
		vgpu_raise(c, w, VGPU_EXC_PC_RANGE, em,
			   "branch target 0x%llx is not an instruction of the program",
			   (unsigned long long)target);
		c->sm->exc->addr = (uint64_t)target;
		return VGPU_X_EXC;
	}
	vgpu_warp_branch(w, em, (uint32_t)(target / VGPU_INSN_BYTES));
	return VGPU_X_BRANCHED;
}

EXEC(exec_exit)
{
	w->live &= ~em;
	return VGPU_X_NEXT;
}

/* PTX's trap (CUDA's __trap()): the launch stops */
EXEC(exec_trap)
{
	vgpu_raise(c, w, VGPU_EXC_TRAP, em, "trap instruction");
	return VGPU_X_EXC;
}

/* a failed device assert (PTX's __assertfail, after its message) */
EXEC(exec_trap_assert)
{
	vgpu_raise(c, w, VGPU_EXC_ASSERT, em, "assertion failed");
	return VGPU_X_EXC;
}

/*
 * WARPSYNC Ra|imm: the member-mask check the front end puts before each
 * of PTX's .sync warp instructions (vote, shfl, redux, match, elect,
 * bar.warp.sync) whose mask is not the constant 0xffffffff.  An active
 * lane whose mask lacks its own bit is an illegal instruction: the PTX
 * text leaves it undefined, and the H200 raises it whenever its WARPSYNC
 * runs, which is always for a mask in a register (lanes may give
 * different masks), while ptxas drops the check of a constant mask where
 * it finds the warp converged, and such a lane then takes part
 * (tests/cuda/real-gpu/warpmask-h200-2026-11-30).  So the immediate form
 * checks only under the sanitizer, and otherwise lets the instruction run.
 */
static enum vgpu_xres warpsync(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			       const uint32_t *ra, uint32_t imm)
{
	uint32_t bad = 0;

	VGPU_LANES(em, l, {
		if (!((ra ? ra[l] : imm) >> l & 1))
			bad |= 1u << l;
	});
	if (bad) {
		unsigned l = (unsigned)__builtin_ctz(bad);
		uint32_t m = ra ? ra[l] : imm;

		vgpu_raise(c, w, VGPU_EXC_ILLEGAL_INSTR, em,
			   "warp-synchronous instruction: lane %u is not in its member mask 0x%08x",
			   l, m);
		c->sm->exc->info[0] = bad;
		c->sm->exc->info[1] = m;
		return VGPU_X_EXC;
	}
	return VGPU_X_NEXT;
}

EXEC(exec_warpsync_r) { return warpsync(c, w, em, vgpu_reg(w, d->ra), 0); }
EXEC(exec_warpsync_i)
{
	return c->sm->sanitize ? warpsync(c, w, em, NULL, d->imm) : VGPU_X_NEXT;
}

static enum vgpu_xres nanosleep_ns(struct vgpu_cta *c, struct vgpu_warp *w,
				   uint32_t ns)
{
	vgpu_warp_sleep(c, w, ns);
	return VGPU_X_BLOCK;
}

EXEC(exec_nanosleep_r) { return nanosleep_ns(c, w, vgpu_uniform(w, d->ra, em)); }
EXEC(exec_nanosleep_i) { return nanosleep_ns(c, w, d->imm); }

EXEC(exec_vote)
{
	uint32_t p = vgpu_pred_mask(w, d->pp, d->pp_not) & em;

	switch (d->mod[0]) {
	case VGPU_MOD_VOTE_ALL:
		set_pred(w, d->pu, em, p == em ? ~0u : 0);
		break;
	case VGPU_MOD_VOTE_ANY:
		set_pred(w, d->pu, em, p ? ~0u : 0);
		break;
	default: {
		uint32_t *rd = vgpu_reg(w, d->rd);

		VGPU_LANES(em, l, { rd[l] = p; });
		break;
	}
	}
	return VGPU_X_NEXT;
}

/*
 * SHFL: each active lane reads Ra of a source lane.  A source lane outside
 * the warp or not active returns the lane's own Ra.
 */
INL void shfl_body(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			     uint32_t em, const int imm)
{
	uint32_t src[VGPU_WARP_SIZE], *rd = vgpu_reg(w, d->rd);
	const uint32_t *rb = vgpu_reg(w, d->rb);

	memcpy(src, vgpu_reg(w, d->ra), sizeof(src));
	if (em == ~0u && (imm || vgpu_row_uniform(w, d->rb, em))) {
		/* the common case: a whole warp, one offset; every source
		 * lane in the warp is active */
		uint32_t b = imm ? d->imm : rb[0];

		switch (d->mod[0]) {
		case VGPU_MOD_SHFL_IDX: {
			uint32_t v = src[b & 31];

			for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
				rd[l] = v;
			break;
		}
		/* lane loops, not memcpy()s of a variable size: rep movsq (vgpu_core.h) */
		case VGPU_MOD_SHFL_UP: /* lanes below b keep their own */
			b = b < VGPU_WARP_SIZE ? b : VGPU_WARP_SIZE;
			for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
				rd[l] = l < b ? src[l] : src[l - b];
			break;
		case VGPU_MOD_SHFL_DOWN: /* lanes from 32 - b keep their own */
			b = b < VGPU_WARP_SIZE ? b : VGPU_WARP_SIZE;
			for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
				rd[l] = l + b < VGPU_WARP_SIZE ? src[l + b] : src[l];
			break;
		default:
			for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
				rd[l] = src[l ^ (b & 31)];
			break;
		}
		return;
	}
	VGPU_FOR_LANES(em, l) {
		uint32_t b = imm ? d->imm : rb[l];
		int64_t s;

		switch (d->mod[0]) {
		case VGPU_MOD_SHFL_IDX: s = b & 31; break;
		case VGPU_MOD_SHFL_UP: s = (int64_t)l - b; break;
		case VGPU_MOD_SHFL_DOWN: s = (int64_t)l + b; break;
		default: s = l ^ (b & 31); break;
		}
		if (s < 0 || s >= VGPU_WARP_SIZE || !((em >> s) & 1))
			s = l;
		rd[l] = src[s];
	}
}

EXEC(exec_shfl_r)
{
	shfl_body(w, d, em, 0);
	return VGPU_X_NEXT;
}

EXEC(exec_shfl_i)
{
	shfl_body(w, d, em, 1);
	return VGPU_X_NEXT;
}

enum vgpu_xres vgpu_exec_fell_off(struct vgpu_cta *c, struct vgpu_warp *w,
				  const struct vgpu_dinsn *d, uint32_t em)
{
	vgpu_raise(c, w, VGPU_EXC_PC_RANGE, em,
		   "pc 0x%x is past the end of the program (0x%x bytes)",
		   vgpu_byte_pc(w->cur_pc), vgpu_byte_pc(c->prog->n));
	return VGPU_X_EXC;
}

enum vgpu_xres vgpu_exec_illegal(struct vgpu_cta *c, struct vgpu_warp *w,
				 const struct vgpu_dinsn *d, uint32_t em)
{
	vgpu_raise(c, w, VGPU_EXC_ILLEGAL_INSTR, em,
		   "illegal instruction 0x%016llx 0x%016llx",
		   (unsigned long long)d->w[0], (unsigned long long)d->w[1]);
	return VGPU_X_EXC;
}

/*
 * Each row's function, and whether it is plain: it only computes (ALU,
 * conversions, S2R, MOV, NOP), always returns VGPU_X_NEXT and changes
 * neither the warp's lanes, pcs and state nor what other warps observe, so
 * a converged warp may run a row of plain instructions without the
 * scheduler's bookkeeping between them (run_warp(), struct vgpu_dinsn's
 * plain_run).
 */
const struct vgpu_exec_row vgpu_exec_table[VGPU_I__COUNT] = {
	[VGPU_I_NOP] = { exec_nop, true },
	[VGPU_I_MOV_R] = { exec_mov_ra, true },
	[VGPU_I_MOV_I] = { exec_mov_i, true },
	[VGPU_I_S2R] = { exec_s2r, true },
	[VGPU_I_IADD_R] = { exec_iadd_r, true },
	[VGPU_I_IADD_I] = { exec_iadd_i, true },
	[VGPU_I_ISUB_R] = { exec_isub_r, true },
	[VGPU_I_ISUB_I] = { exec_isub_i, true },
	[VGPU_I_IMUL_R] = { exec_imul_r, true },
	[VGPU_I_IMUL_I] = { exec_imul_i, true },
	[VGPU_I_IMULHI_R] = { exec_imulhi_r, true },
	[VGPU_I_IMULHI_I] = { exec_imulhi_i, true },
	[VGPU_I_IMAD_R] = { exec_imad_r, true },
	[VGPU_I_IMAD_I] = { exec_imad_i, true },
	[VGPU_I_IMNMX_R] = { exec_imnmx_r, true },
	[VGPU_I_IMNMX_I] = { exec_imnmx_i, true },
	[VGPU_I_ISETP_R] = { exec_isetp_r, true },
	[VGPU_I_ISETP_I] = { exec_isetp_i, true },
	[VGPU_I_LOP_R] = { exec_lop_r, true },
	[VGPU_I_LOP_I] = { exec_lop_i, true },
	[VGPU_I_SHL_R] = { exec_shl_r, true },
	[VGPU_I_SHL_I] = { exec_shl_i, true },
	[VGPU_I_SHR_R] = { exec_shr_r, true },
	[VGPU_I_SHR_I] = { exec_shr_i, true },
	[VGPU_I_SEL_R] = { exec_sel_r, true },
	[VGPU_I_SEL_I] = { exec_sel_i, true },
	[VGPU_I_FADD_R] = { exec_fadd_r, true },
	[VGPU_I_FADD_I] = { exec_fadd_i, true },
	[VGPU_I_FMUL_R] = { exec_fmul_r, true },
	[VGPU_I_FMUL_I] = { exec_fmul_i, true },
	[VGPU_I_FFMA_R] = { exec_ffma_r, true },
	[VGPU_I_FFMA_I] = { exec_ffma_i, true },
	[VGPU_I_FSETP_R] = { exec_fsetp_r, true },
	[VGPU_I_FSETP_I] = { exec_fsetp_i, true },
	[VGPU_I_FMNMX_R] = { exec_fmnmx_r, true },
	[VGPU_I_FMNMX_I] = { exec_fmnmx_i, true },
	[VGPU_I_IDIV_R] = { exec_idiv_r, true },
	[VGPU_I_IDIV_I] = { exec_idiv_i, true },
	[VGPU_I_IREM_R] = { exec_irem_r, true },
	[VGPU_I_IREM_I] = { exec_irem_i, true },
	[VGPU_I_FDIV_R] = { exec_fdiv_r, true },
	[VGPU_I_FDIV_I] = { exec_fdiv_i, true },
	[VGPU_I_MUFU] = { exec_mufu, true },
	[VGPU_I_DADD] = { vgpu_exec_dadd, true },
	[VGPU_I_DMUL] = { vgpu_exec_dmul, true },
	[VGPU_I_DFMA] = { vgpu_exec_dfma, true },
	[VGPU_I_DDIV] = { vgpu_exec_ddiv, true },
	[VGPU_I_DSETP] = { vgpu_exec_dsetp, true },
	[VGPU_I_DMNMX] = { vgpu_exec_dmnmx, true },
	[VGPU_I_F2D] = { vgpu_exec_f2d, true },
	[VGPU_I_D2F] = { vgpu_exec_d2f, true },
	[VGPU_I_I2D] = { vgpu_exec_i2d, true },
	[VGPU_I_D2I] = { vgpu_exec_d2i, true },
	[VGPU_I_IDIV64] = { vgpu_exec_idiv64, true },
	[VGPU_I_IREM64] = { vgpu_exec_irem64, true },
	[VGPU_I_DSQRT] = { vgpu_exec_dsqrt, true },
	[VGPU_I_DRCP] = { vgpu_exec_drcp, true },
	[VGPU_I_L2D] = { vgpu_exec_l2d, true },
	[VGPU_I_D2L] = { vgpu_exec_d2l, true },
	[VGPU_I_CVT] = { vgpu_exec_cvt, true },
	[VGPU_I_F2I] = { exec_f2i, true },
	[VGPU_I_I2F] = { exec_i2f, true },
	[VGPU_I_LDG] = { vgpu_exec_ldg, false },
	[VGPU_I_STG] = { vgpu_exec_stg, false },
	[VGPU_I_LDS] = { vgpu_exec_lds, false },
	[VGPU_I_STS] = { vgpu_exec_sts, false },
	[VGPU_I_LDP] = { vgpu_exec_ldp, false },
	[VGPU_I_ATOMG] = { vgpu_exec_atomg, false },
	[VGPU_I_ATOMS] = { vgpu_exec_atoms, false },
	[VGPU_I_ATOMG_CAS] = { vgpu_exec_atomg_cas, false },
	[VGPU_I_ATOMS_CAS] = { vgpu_exec_atoms_cas, false },
	[VGPU_I_BRA] = { exec_bra, false },
	[VGPU_I_EXIT] = { exec_exit, false },
	[VGPU_I_TRAP] = { exec_trap, false },
	[VGPU_I_TRAP_ASSERT] = { exec_trap_assert, false },
	[VGPU_I_TRAP_MULTIMEM] = { vgpu_exec_trap_multimem, false },
	[VGPU_I_WARPSYNC_R] = { exec_warpsync_r, false },
	[VGPU_I_WARPSYNC_I] = { exec_warpsync_i, false },
	[VGPU_I_CALL_I] = { vgpu_exec_call, false },
	[VGPU_I_CALL_R] = { vgpu_exec_call, false },
	[VGPU_I_RET] = { vgpu_exec_ret, false },
	[VGPU_I_SALLOC_I] = { vgpu_exec_salloc, false },
	[VGPU_I_SALLOC_R] = { vgpu_exec_salloc, false },
	[VGPU_I_NANOSLEEP_R] = { exec_nanosleep_r, false },
	[VGPU_I_NANOSLEEP_I] = { exec_nanosleep_i, false },
	[VGPU_I_MEMBAR] = { exec_nop, true }, /* accesses complete in order already */
	[VGPU_I_VOTE_ALL] = { exec_vote, false },
	[VGPU_I_VOTE_ANY] = { exec_vote, false },
	[VGPU_I_VOTE_BALLOT] = { exec_vote, false },
	[VGPU_I_SHFL_R] = { exec_shfl_r, false },
	[VGPU_I_SHFL_I] = { exec_shfl_i, false },
	[VGPU_I_BAR_SYNC_I] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_SYNC_RR] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_SYNC_RRI] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_SYNC_RIR] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_ARV_I] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_ARV_RR] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_ARV_RRI] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_ARV_RIR] = { vgpu_exec_bar, false },
	[VGPU_I_BAR_RED_I] = { vgpu_exec_bar_red, false },
	[VGPU_I_BAR_RED_R] = { vgpu_exec_bar_red, false },
	[VGPU_I_BAR_RED_RRI] = { vgpu_exec_bar_red, false },
	[VGPU_I_BAR_RED_RIR] = { vgpu_exec_bar_red, false },
	[VGPU_I_B2R_BAR] = { vgpu_exec_b2r, false },
	[VGPU_I_B2R_WARP] = { vgpu_exec_b2r, false },
	[VGPU_I_B2R_RESULT] = { vgpu_exec_b2r_result, false },
	[VGPU_I_R2B_BAR] = { vgpu_exec_r2b, false },
	[VGPU_I_R2B_WARP] = { vgpu_exec_r2b, false },
	[VGPU_I_MBAR_INIT_R] = { vgpu_exec_mbar_init, false },
	[VGPU_I_MBAR_INIT_I] = { vgpu_exec_mbar_init, false },
	[VGPU_I_MBAR_INVAL] = { vgpu_exec_mbar_inval, false },
	[VGPU_I_MBAR_ARRIVE_X] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_ARRIVE_R] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_ARRIVE_I] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_ARRIVE_TX_R] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_ARRIVE_TX_I] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_ARRIVE_NC_R] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_ARRIVE_NC_I] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_X] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_R] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_I] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_TX_R] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_TX_I] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_NC_R] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_DROP_NC_I] = { vgpu_exec_mbar_arrive, false },
	[VGPU_I_MBAR_EXPECT_TX_R] = { vgpu_exec_mbar_tx, false },
	[VGPU_I_MBAR_EXPECT_TX_I] = { vgpu_exec_mbar_tx, false },
	[VGPU_I_MBAR_COMPLETE_TX_R] = { vgpu_exec_mbar_tx, false },
	[VGPU_I_MBAR_COMPLETE_TX_I] = { vgpu_exec_mbar_tx, false },
	[VGPU_I_MBAR_TEST_WAIT] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TEST_WAIT_PAR_R] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TEST_WAIT_PAR_I] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_X] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_R] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_I] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_PAR_X] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_PAR_R] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_PAR_I] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_TRY_WAIT_PAR_RI] = { vgpu_exec_mbar_wait, false },
	[VGPU_I_MBAR_PENDING_COUNT] = { vgpu_exec_mbar_pending, false },
	[VGPU_I_CP_ASYNC] = { vgpu_exec_cp_async, false },
	[VGPU_I_CP_ASYNC_MBAR_ARRIVE] = { vgpu_exec_cp_async_arrive, false },
	[VGPU_I_CP_ASYNC_MBAR_ARRIVE_NOINC] = { vgpu_exec_cp_async_arrive, false },
	[VGPU_I_CP_ASYNC_WAIT_ALL] = { vgpu_exec_cp_async_wait_all, false },
	[VGPU_I_CP_BULK_R] = { vgpu_exec_cp_bulk, false },
	[VGPU_I_CP_BULK_I] = { vgpu_exec_cp_bulk, false },
	[VGPU_I_CP_BULK_STORE_R] = { vgpu_exec_cp_bulk_store, false },
	[VGPU_I_CP_BULK_STORE_I] = { vgpu_exec_cp_bulk_store, false },
	[VGPU_I_CP_BULK_COMMIT] = { vgpu_exec_cp_bulk_commit, false },
	[VGPU_I_CP_BULK_WAIT] = { vgpu_exec_cp_bulk_wait, false },
	[VGPU_I_CP_BULK_WAIT_READ] = { vgpu_exec_cp_bulk_wait, false },
	[VGPU_I_CP_TENSOR] = { vgpu_exec_cp_tensor, false },
	[VGPU_I_CP_TENSOR_STORE] = { vgpu_exec_cp_tensor_store, false },
	[VGPU_I_CP_TENSOR_IM2COL] = { vgpu_exec_cp_tensor_im2col, false },
	[VGPU_I_CP_TENSOR_STORE_IM2COL] = { vgpu_exec_cp_tensor_store_im2col, false },
	[VGPU_I_CP_TENSOR_RED] = { vgpu_exec_cp_tensor_red, false },
	[VGPU_I_CP_TENSOR_RED_IM2COL] = { vgpu_exec_cp_tensor_red_im2col, false },
	[VGPU_I_MAPA_R] = { vgpu_exec_mapa, false },
	[VGPU_I_MAPA_I] = { vgpu_exec_mapa, false },
	[VGPU_I_BAR_CLUSTER_ARRIVE] = { vgpu_exec_bar_cluster, false },
	[VGPU_I_BAR_CLUSTER_WAIT] = { vgpu_exec_bar_cluster, false },
};
