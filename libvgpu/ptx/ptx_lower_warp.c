// SPDX-License-Identifier: MIT
/*
 * PTX lowering: warp-wide functions: vote, activemask, shfl.sync (every
 * mode, whole-warp and segmented, b and c immediate or in registers),
 * elect.sync, redux.sync, match.sync, movmatrix.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"

/*
 * The member-mask check of a .sync warp instruction (vote, shfl, redux,
 * match, elect, bar.warp.sync): WARPSYNC raises ILLEGAL_INSTR when an
 * executing lane is not in its member mask, which the PTX text leaves
 * undefined.  A mask in a register is checked always, as the H200 does;
 * a constant one by WARPSYNC's immediate form, which checks only under
 * the sanitizer, since ptxas drops the check where it finds the warp
 * converged (docs/core.md).  A constant 0xffffffff holds every lane.
 */
void pl_warpsync(struct lower *L, const struct ptx_operand *mask)
{
	int64_t m;

	if (!pl_const_of(L, mask, &m))
		return pl_use_src(L, pl_emit(L, "WARPSYNC"), mask, 0);
	if ((uint32_t)m != 0xffffffffu)
		pl_o_text(pl_emit(L, "WARPSYNC"), "0x%x", (uint32_t)m);
}

/*
 * @m = the lanes a .sync warp instruction with member mask @o acts on: a
 * mask in a register as it is (each lane's own: cooperative groups' tiles
 * give each tile's lanes theirs), a constant one the active lanes.  In a
 * program the PTX text defines the active lanes are then the mask's
 * members; where other lanes run it too (undefined), they take part, as
 * on the H200, where ptxas drops a constant mask's check in converged
 * code (tests/cuda/real-gpu/warpmask-h200-2026-11-30).
 */
static void member_mask(struct lower *L, int m, const struct ptx_operand *o)
{
	struct ptx_vinsn *v;
	int64_t c;

	if (pl_const_of(L, o, &c)) {
		v = pl_emit(L, "VOTE.BALLOT");
		pl_o_def(v, m, 0, false);
		pl_o_text(v, "PT");
		return;
	}
	v = pl_emit(L, "MOV");
	pl_o_def(v, m, 0, false);
	pl_use_src(L, v, o, 0);
}

/*
 * vote.sync with a member mask other than all lanes (PTX ISA 9.7.13.4):
 * only the members take part, also when other lanes run the same
 * instruction with masks of their own (cooperative groups' tiles:
 * __ballot_sync(tile mask, p) from every lane of a converged warp).
 * VOTE sees every active lane: ballot & mask, then any = != 0, all = ==
 * mask.
 */
static void vote_masked(struct lower *L, int p, bool neg)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	int b = pl_new_vreg(L, 1), d;

	v = pl_emit(L, "VOTE.BALLOT");
	pl_o_def(v, b, 0, false);
	pl_o_puse(v, p, neg);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, b, 0, false);
	pl_o_use(v, b, 0);
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
	if (pl_has_mod(in, ".ballot")) {
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0)
			return;
		pl_mov_reg(L, d, 0, false, b, 0);
		return;
	}
	d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	if (pl_has_mod(in, ".any")) {
		v = pl_emit(L, "ISETP.NE.U32");
		pl_o_pdef(v, d);
		pl_o_use(v, b, 0);
		pl_o_text(v, "0x0");
	} else {
		v = pl_emit(L, "ISETP.EQ.U32");
		pl_o_pdef(v, d);
		pl_o_use(v, b, 0);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
	}
}

/*
 * vote.sync.uni.pred d, {!}p, membermask: whether p is the same in every
 * active lane of the member mask: with b = ballot(p) & mask and a =
 * ballot(true) & mask (the active members), b == 0 or b == a.
 */
static void vote_uni(struct lower *L, int p, bool neg)
{
	const struct ptx_insn *in = L->in;
	bool full = in->nops < 3 ||
		    (in->ops[2].kind == PTX_O_IMM && (uint32_t)in->ops[2].imm == 0xffffffffu);
	int b = pl_new_vreg(L, 1), a = pl_new_vreg(L, 1), d;
	struct ptx_vinsn *v;

	d = pl_dst_reg(L, &in->ops[0], PTX_PRED);
	if (d < 0)
		return;
	for (int k = 0; k < 2; k++) {
		int r = k ? a : b;

		v = pl_emit(L, "VOTE.BALLOT");
		pl_o_def(v, r, 0, false);
		if (k)
			pl_o_text(v, "PT");
		else
			pl_o_puse(v, p, neg);
		if (full)
			continue;
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, r, 0, false);
		pl_o_use(v, r, 0);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
	}
	v = pl_emit(L, "ISETP.EQ.U32");
	pl_o_pdef(v, d);
	pl_o_use(v, b, 0);
	pl_o_text(v, "0x0");
	v = pl_emit(L, "ISETP.EQ.U32.OR");
	pl_o_pdef(v, d);
	pl_o_use(v, b, 0);
	pl_o_use(v, a, 0);
	pl_o_puse(v, d, false);
}

void pl_vote(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	int p;

	if (in->nops < 2)
		return (void)pl_lerr(L, "vote takes a destination and a predicate");
	p = pl_pred_of(L, &in->ops[1]);
	if (p < 0)
		return;
	if (in->nops >= 3 && pl_has_mod(in, ".sync"))
		pl_warpsync(L, &in->ops[2]);
	if (in->nops >= 3 && !pl_const_of(L, &in->ops[2], &(int64_t){ 0 }) &&
	    (pl_has_mod(in, ".ballot") || pl_has_mod(in, ".any") || pl_has_mod(in, ".all")))
		return vote_masked(L, p, in->ops[1].neg);
	if (pl_has_mod(in, ".ballot")) {
		int d = pl_dst_reg(L, &in->ops[0], PTX_R32);

		if (d < 0)
			return;
		v = pl_emit(L, "VOTE.BALLOT");
		pl_o_def(v, d, 0, false);
		pl_o_puse(v, p, in->ops[1].neg);
		return;
	}
	if (pl_has_mod(in, ".all") || pl_has_mod(in, ".any")) {
		int d = pl_dst_reg(L, &in->ops[0], PTX_PRED);

		if (d < 0)
			return;
		v = pl_emit(L, "VOTE.%s", pl_has_mod(in, ".all") ? "ALL" : "ANY");
		pl_o_pdef(v, d);
		pl_o_puse(v, p, in->ops[1].neg);
		return;
	}
	if (pl_has_mod(in, ".uni"))
		return vote_uni(L, p, in->ops[1].neg);
	pl_unsupported(L, NULL);
}

void pl_activemask(struct lower *L)
{
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 1))
		return;
	d = pl_dst_reg(L, &L->in->ops[0], PTX_R32);
	if (d < 0)
		return;
	v = pl_emit(L, "VOTE.BALLOT");
	pl_o_def(v, d, 0, false);
	pl_o_text(v, "PT");
}

/*
 * shfl.sync.MODE.b32 d|p, a, b, c, membermask (PTX ISA 9.7.9.6): the
 * whole-warp forms (a constant c = 0x1f, or 0 for .up) on SHFL; the
 * member mask is not checked.  Any other c (sub-warp segments, c =
 * segmask << 8 | clamp, as __shfl_*_sync(..., width) compiles, or c in a
 * register): the source lane j and whether it is valid computed as
 * PTX's definition does,
 *
 *	segmask = c[12:8]; minLane = lane & segmask;
 *	maxLane = minLane | (c[4:0] & ~segmask);
 *	up: j = lane - b, p = j >= maxLane; down: j = lane + b, p = j <= maxLane;
 *	bfly: j = lane ^ b, p = j <= maxLane;
 *	idx: j = minLane | (b[4:0] & ~segmask), p = j <= maxLane;
 *	if (!p) j = lane;
 *
 * then SHFL.IDX from j.  @cval is c when it is a constant (@creg < 0),
 * else @creg is the register holding it.
 */
static void segmented_shfl(struct lower *L, const char *mode, uint32_t cval, int creg)
{
	const struct ptx_insn *in = L->in;
	uint32_t segmask = cval >> 8 & 0x1f, k = cval & 0x1f & ~segmask;
	int l = pl_new_vreg(L, 1), mn = pl_new_vreg(L, 1), mx = pl_new_vreg(L, 1);
	int b = pl_new_vreg(L, 1), j = pl_new_vreg(L, 1), d, nseg = -1;
	int p = in->ops[0].has_p && in->ops[0].preg >= 0 ? in->ops[0].preg : pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 && in->ops[0].kind != PTX_O_SINK)
		return;
	v = pl_emit(L, "S2R");
	pl_o_def(v, l, 0, false);
	pl_o_text(v, "SR_LANEID");
	if (creg >= 0) { /* nseg = ~segmask & 0x1f, mn, mx from the register */
		nseg = pl_new_vreg(L, 1);
		v = pl_emit(L, "SHR.U32");
		pl_o_def(v, nseg, 0, false);
		pl_o_use(v, creg, 0);
		pl_o_text(v, "0x8");
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, nseg, 0, false);
		pl_o_use(v, nseg, 0);
		pl_o_text(v, "0x1f");
		v = pl_emit(L, "LOP.AND"); /* minLane = lane & segmask */
		pl_o_def(v, mn, 0, false);
		pl_o_use(v, l, 0);
		pl_o_use(v, nseg, 0);
		v = pl_emit(L, "LOP.XOR");
		pl_o_def(v, nseg, 0, false);
		pl_o_use(v, nseg, 0);
		pl_o_text(v, "0x1f");
		v = pl_emit(L, "LOP.AND"); /* c[4:0] & ~segmask */
		pl_o_def(v, mx, 0, false);
		pl_o_use(v, creg, 0);
		pl_o_use(v, nseg, 0);
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, mx, 0, false);
		pl_o_use(v, mx, 0);
		pl_o_use(v, mn, 0);
	} else {
		v = pl_emit(L, "LOP.AND"); /* minLane = lane & segmask */
		pl_o_def(v, mn, 0, false);
		pl_o_use(v, l, 0);
		pl_o_text(v, "0x%x", segmask);
		v = pl_emit(L, "LOP.OR"); /* maxLane = minLane | (clamp & ~segmask) */
		pl_o_def(v, mx, 0, false);
		pl_o_use(v, mn, 0);
		pl_o_text(v, "0x%x", k);
	}
	v = pl_emit(L, "MOV");
	pl_o_def(v, b, 0, false);
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, b, 0, false);
	pl_o_use(v, b, 0);
	pl_o_text(v, "0x1f");
	if (!strcmp(mode, "IDX")) { /* j = minLane | (b & ~segmask) */
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, j, 0, false);
		pl_o_use(v, b, 0);
		if (nseg >= 0)
			pl_o_use(v, nseg, 0);
		else
			pl_o_text(v, "0x%x", ~segmask & 0x1f);
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, j, 0, false);
		pl_o_use(v, j, 0);
		pl_o_use(v, mn, 0);
	} else {
		v = pl_emit(L, !strcmp(mode, "UP") ? "ISUB" : !strcmp(mode, "DOWN") ? "IADD" : "LOP.XOR");
		pl_o_def(v, j, 0, false);
		pl_o_use(v, l, 0);
		pl_o_use(v, b, 0);
	}
	v = pl_emit(L, "ISETP.%s.S32", !strcmp(mode, "UP") ? "GE" : "LE");
	pl_o_pdef(v, p);
	pl_o_use(v, j, 0);
	pl_o_use(v, mx, 0);
	v = pl_emit(L, "MOV");
	v->guard = p;
	v->guard_not = true;
	pl_o_def(v, j, 0, false);
	pl_o_use(v, l, 0);
	if (d < 0)
		return;
	v = pl_emit(L, "SHFL.IDX");
	pl_o_def(v, d, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_o_use(v, j, 0);
}

/* a shuffle's b operand: register @bm, or the immediate @bimm when -1 */
static void use_b(struct ptx_vinsn *v, int bm, uint32_t bimm)
{
	if (bm >= 0)
		pl_o_use(v, bm, 0);
	else
		pl_o_text(v, "0x%x", bimm);
}

void pl_shfl(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *mode = pl_has_mod(in, ".up") ? "UP" : pl_has_mod(in, ".down") ? "DOWN" :
			   pl_has_mod(in, ".bfly") ? "BFLY" : pl_has_mod(in, ".idx") ? "IDX" : NULL;
	struct ptx_vinsn *v;
	int64_t cval;
	uint32_t bimm = 0;
	int d, bm = -1;

	if (!mode || in->nops < 4 || in->nops > 5)
		return (void)pl_unsupported(L, NULL);
	if (in->nops == 5)
		pl_warpsync(L, &in->ops[4]);
	if (!pl_const_of(L, &in->ops[3], &cval)) {
		int pp, c = pl_src_reg(L, &in->ops[3], 0, &pp);

		if (c < 0 || pp)
			return (void)pl_unsupported(L, "a shuffle's c operand");
		return segmented_shfl(L, mode, 0, c);
	}
	if (cval != (!strcmp(mode, "UP") ? 0 : 0x1f))
		return segmented_shfl(L, mode, (uint32_t)cval, -1);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 && in->ops[0].kind != PTX_O_SINK)
		return;
	if (in->ops[2].kind == PTX_O_IMM) { /* PTX takes b[4:0] */
		bimm = (uint32_t)in->ops[2].imm & 0x1f;
	} else {
		bm = pl_new_vreg(L, 1);
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, bm, 0, false);
		pl_use_src(L, v, &in->ops[2], 0);
		pl_o_text(v, "0x1f");
	}
	if (in->ops[0].has_p && in->ops[0].preg >= 0) {
		/* p: the source lane is in the warp (always for .idx and .bfly
		 * with c = 0x1f); computed first, d may be an operand */
		int p = in->ops[0].preg, l = pl_new_vreg(L, 1);

		if (!strcmp(mode, "UP") || !strcmp(mode, "DOWN")) {
			v = pl_emit(L, "S2R");
			pl_o_def(v, l, 0, false);
			pl_o_text(v, "SR_LANEID");
		}
		if (!strcmp(mode, "UP")) { /* lane - b >= 0 */
			v = pl_emit(L, "ISETP.GE.U32");
			pl_o_pdef(v, p);
			pl_o_use(v, l, 0);
			use_b(v, bm, bimm);
		} else if (!strcmp(mode, "DOWN")) { /* lane + b <= 31 */
			v = pl_emit(L, "IADD");
			pl_o_def(v, l, 0, false);
			pl_o_use(v, l, 0);
			use_b(v, bm, bimm);
			v = pl_emit(L, "ISETP.LE.U32");
			pl_o_pdef(v, p);
			pl_o_use(v, l, 0);
			pl_o_text(v, "0x1f");
		} else {
			v = pl_emit(L, "ISETP.EQ.U32");
			pl_o_pdef(v, p);
			pl_o_text(v, "RZ");
			pl_o_text(v, "0x0");
		}
	}
	if (d < 0)
		return;
	v = pl_emit(L, "SHFL.%s", mode);
	pl_o_def(v, d, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
	use_b(v, bm, bimm);
}

/*
 * elect.sync d|p, membermask: the leader is the lowest active lane of
 * membermask (member_mask(): of a constant one, the lowest active lane,
 * as an H200 elects lane 0 when every lane runs elect.sync 0x0f0f0f00:
 * tests/cuda/real-gpu/b128-narrow-h200-2026-11-30); p is true in it, d
 * is its lane number in every lane.
 */
void pl_elect(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *o = &in->ops[0];
	int b = pl_new_vreg(L, 1), n = pl_new_vreg(L, 1), d;
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 2))
		return;
	if (!o->has_p)
		return (void)pl_lerr(L, "elect.sync takes d|p");
	pl_warpsync(L, &in->ops[1]);
	d = pl_dst_reg(L, o, PTX_R32);
	if (d < 0 && o->kind != PTX_O_SINK)
		return;
	v = pl_emit(L, "VOTE.BALLOT");
	pl_o_def(v, b, 0, false);
	pl_o_text(v, "PT");
	if (!pl_const_of(L, &in->ops[1], &(int64_t){ 0 })) { /* member_mask() */
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, b, 0, false);
		pl_o_use(v, b, 0);
		pl_use_src(L, v, &in->ops[1], 0);
	}
	v = pl_emit(L, "ISUB"); /* the lowest set bit: b & -b */
	pl_o_def(v, n, 0, false);
	pl_o_text(v, "RZ");
	pl_o_use(v, b, 0);
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, b, 0, false);
	pl_o_use(v, b, 0);
	pl_o_use(v, n, 0);
	if (o->preg >= 0) { /* p: that bit is this lane's */
		v = pl_emit(L, "S2R");
		pl_o_def(v, n, 0, false);
		pl_o_text(v, "SR_LANEID");
		v = pl_emit(L, "SHR.U32");
		pl_o_def(v, n, 0, false);
		pl_o_use(v, b, 0);
		pl_o_use(v, n, 0);
		v = pl_emit(L, "ISETP.EQ.U32");
		pl_o_pdef(v, o->preg);
		pl_o_use(v, n, 0);
		pl_o_text(v, "0x1");
	}
	if (d >= 0) { /* the bit's index: the exponent of its exact float */
		v = pl_emit(L, "I2F.U32");
		pl_o_def(v, n, 0, false);
		pl_o_use(v, b, 0);
		v = pl_emit(L, "SHR.U32");
		pl_o_def(v, n, 0, false);
		pl_o_use(v, n, 0);
		pl_o_text(v, "0x17");
		v = pl_emit(L, "ISUB");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, n, 0);
		pl_o_text(v, "0x7f");
	}
}

/*
 * redux.sync.OP.TYPE d, a, membermask (add min max on .u32/.s32, and or
 * xor on .b32).  With every lane a member (a constant 0xffffffff: then
 * PTX requires all 32 to execute it) a butterfly of SHFL.BFLY; with any
 * other mask each lane folds the members' values in lane order (SHFL.IDX
 * from each lane, kept where its mask bit is set).
 */
void pl_redux(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	static const struct {
		const char *ptx, *mn;
		uint32_t ident_u, ident_s;
	} ops[] = { { ".add", "IADD", 0, 0 },
		    { ".min", "IMNMX.MIN", 0xffffffffu, 0x7fffffffu },
		    { ".max", "IMNMX.MAX", 0, 0x80000000u },
		    { ".and", "LOP.AND", 0xffffffffu, 0xffffffffu },
		    { ".or", "LOP.OR", 0, 0 },
		    { ".xor", "LOP.XOR", 0, 0 } };
	char mn[24] = "";
	uint32_t ident = 0;
	struct ptx_vinsn *v;
	int64_t mask;
	int d, x = pl_new_vreg(L, 1), y = pl_new_vreg(L, 1);

	if (!pl_want_ops(L, 3))
		return;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (pl_has_mod(in, ops[i].ptx)) {
			snprintf(mn, sizeof(mn), "%s%s", ops[i].mn,
				 strncmp(ops[i].mn, "IMNMX", 5) ? "" : t.sign ? ".S32" : ".U32");
			ident = t.sign ? ops[i].ident_s : ops[i].ident_u;
		}
	if (!mn[0] || t.bits != 32 || t.flt)
		return (void)pl_unsupported(L, "redux other than add/min/max/and/or/xor on 32 bits");
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	pl_warpsync(L, &in->ops[2]);
	v = pl_emit(L, "MOV");
	pl_o_def(v, x, 0, false);
	pl_use_src_or_imm(L, v, &in->ops[1], 0);
	if (pl_const_of(L, &in->ops[2], &mask) && (uint32_t)mask == 0xffffffffu) {
		for (int k = 16; k; k /= 2) {
			v = pl_emit(L, "SHFL.BFLY");
			pl_o_def(v, y, 0, false);
			pl_o_use(v, x, 0);
			pl_o_text(v, "0x%x", k);
			v = pl_emit(L, "%s", mn);
			pl_o_def(v, x, 0, false);
			pl_o_use(v, x, 0);
			pl_o_use(v, y, 0);
		}
		pl_mov_reg(L, d, 0, false, x, 0);
		return;
	}
	{
		int acc = pl_new_vreg(L, 1), m = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0);
		int bit = pl_new_vreg(L, 1);

		member_mask(L, m, &in->ops[2]);
		v = pl_emit(L, "MOV");
		pl_o_def(v, acc, 0, false);
		pl_o_text(v, "0x%x", ident);
		for (int j = 0; j < 32; j++) {
			v = pl_emit(L, "SHFL.IDX");
			pl_o_def(v, y, 0, false);
			pl_o_use(v, x, 0);
			pl_o_text(v, "0x%x", j);
			v = pl_emit(L, "LOP.AND");
			pl_o_def(v, bit, 0, false);
			pl_o_use(v, m, 0);
			pl_o_text(v, "0x%x", 1u << j);
			v = pl_emit(L, "ISETP.NE.U32");
			pl_o_pdef(v, p);
			pl_o_use(v, bit, 0);
			pl_o_text(v, "0x0");
			v = pl_emit(L, "SEL");
			pl_o_def(v, y, 0, false);
			pl_o_use(v, y, 0);
			pl_o_text(v, "0x%x", ident);
			pl_o_puse(v, p, false);
			v = pl_emit(L, "%s", mn);
			pl_o_def(v, acc, 0, false);
			pl_o_use(v, acc, 0);
			pl_o_use(v, y, 0);
		}
		pl_mov_reg(L, d, 0, false, acc, 0);
	}
}

/*
 * match.any.sync.b32|b64 d, a, membermask: the members whose a equals
 * this lane's; match.all.sync d{|p}, a, membermask: membermask if every
 * member's a is equal, else 0 (p: whether they are).  Each lane compares
 * with every member lane in turn (SHFL.IDX), 32 steps.
 */
void pl_match(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	bool all = pl_has_mod(in, ".all");
	int m = pl_new_vreg(L, 1), acc = pl_new_vreg(L, 1), x = pl_new_vreg(L, 1);
	int y = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0), d;
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 3))
		return;
	if ((!all && !pl_has_mod(in, ".any")) || (t.bits != 32 && t.bits != 64))
		return (void)pl_unsupported(L, NULL);
	if (in->ops[0].has_p && !all)
		return (void)pl_lerr(L, "only match.all has a predicate destination");
	pl_warpsync(L, &in->ops[2]);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 && in->ops[0].kind != PTX_O_SINK)
		return;
	member_mask(L, m, &in->ops[2]);
	v = pl_emit(L, "MOV");
	pl_o_def(v, acc, 0, false);
	pl_o_text(v, "RZ");
	for (int j = 0; j < 32; j++) {
		for (int part = 0; part < (t.bits == 64 ? 2 : 1); part++) {
			v = pl_emit(L, "MOV");
			pl_o_def(v, x, 0, false);
			pl_use_src(L, v, &in->ops[1], part);
			v = pl_emit(L, "SHFL.IDX");
			pl_o_def(v, y, 0, false);
			pl_o_use(v, x, 0);
			pl_o_text(v, "0x%x", j);
			v = pl_emit(L, part ? "ISETP.EQ.U32.AND" : "ISETP.EQ.U32");
			pl_o_pdef(v, p);
			pl_o_use(v, y, 0);
			pl_o_use(v, x, 0);
			if (part)
				pl_o_puse(v, p, false);
		}
		v = pl_emit(L, "LOP.OR");
		v->guard = p;
		v->guard_not = false;
		pl_o_def(v, acc, 0, false);
		pl_o_use(v, acc, 0);
		pl_o_text(v, "0x%x", 1u << j);
	}
	v = pl_emit(L, "LOP.AND"); /* members only */
	pl_o_def(v, acc, 0, false);
	pl_o_use(v, acc, 0);
	pl_o_use(v, m, 0);
	if (!all) {
		if (d >= 0)
			pl_mov_reg(L, d, 0, false, acc, 0);
		return;
	}
	v = pl_emit(L, "ISETP.EQ.U32"); /* all equal: every member matched */
	pl_o_pdef(v, p);
	pl_o_use(v, acc, 0);
	pl_o_use(v, m, 0);
	if (d >= 0) {
		v = pl_emit(L, "SEL");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, m, 0);
		pl_o_text(v, "RZ");
		pl_o_puse(v, p, false);
	}
	if (in->ops[0].has_p && in->ops[0].preg >= 0) {
		v = pl_emit(L, "ISETP.EQ.U32");
		pl_o_pdef(v, in->ops[0].preg);
		pl_o_use(v, acc, 0);
		pl_o_use(v, m, 0);
	}
}

/* Rd = Ra <op> imm (an integer instruction of two sources) */
static void op_imm(struct lower *L, const char *mn, int d, int a, uint32_t imm)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", imm);
}

/* Rd = Ra <op> Rb */
static void op_reg(struct lower *L, const char *mn, int d, int a, int b)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", mn);

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
}

/*
 * movmatrix.sync.aligned.m8n8.trans.b16 d, a (PTX ISA 9.7.16.x): the warp
 * holds an 8x8 matrix of 16-bit elements, lane t row t / 4, columns
 * 2 (t % 4) and 2 (t % 4) + 1 (low half first); d holds the transpose
 * in the same layout.  Element i of lane t's d is A[2 (t % 4) + i][t / 4],
 * half (t / 4) % 2 of lane 4 (2 (t % 4) + i) + t / 8: two shuffles from
 * lanes 8 (t % 4) + t / 8 and that + 4, then the halves.
 */
void pl_movmatrix(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int lane, src, sh, x0, x1, d;
	struct ptx_vinsn *v;

	if (!pl_has_mod(in, ".m8n8") || !pl_has_mod(in, ".trans") || !pl_has_mod(in, ".b16"))
		return (void)pl_unsupported(L, NULL);
	if (!pl_want_ops(L, 2))
		return;
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	lane = pl_new_vreg(L, 1);
	src = pl_new_vreg(L, 1);
	sh = pl_new_vreg(L, 1);
	x0 = pl_new_vreg(L, 1);
	x1 = pl_new_vreg(L, 1);
	v = pl_emit(L, "S2R");
	pl_o_def(v, lane, 0, false);
	pl_o_text(v, "SR_LANEID");
	op_imm(L, "SHR.U32", src, lane, 3);		/* t / 8 */
	op_imm(L, "LOP.AND", sh, lane, 3);
	op_imm(L, "SHL", sh, sh, 3);			/* 8 (t % 4) */
	op_reg(L, "LOP.OR", src, src, sh);
	op_imm(L, "LOP.AND", sh, lane, 4);
	op_imm(L, "SHL", sh, sh, 2);			/* 16 ((t / 4) % 2) */
	v = pl_emit(L, "SHFL.IDX");
	pl_o_def(v, x0, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_o_use(v, src, 0);
	op_imm(L, "IADD", src, src, 4);
	v = pl_emit(L, "SHFL.IDX");
	pl_o_def(v, x1, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_o_use(v, src, 0);
	op_reg(L, "SHR.U32", x0, x0, sh);
	op_imm(L, "LOP.AND", x0, x0, 0xffff);
	op_reg(L, "SHR.U32", x1, x1, sh);
	op_imm(L, "SHL", x1, x1, 16);
	op_reg(L, "LOP.OR", d, x0, x1);
}
