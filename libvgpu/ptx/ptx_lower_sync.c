// SPDX-License-Identifier: MIT
/*
 * PTX lowering: control flow, named barriers, fences, every mbarrier
 * instruction, asynchronous and bulk copies, clusters, votes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"

void pl_bra(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	int k;

	if (!pl_want_ops(L, 1))
		return;
	if (in->ops[0].kind != PTX_O_SYM || (k = pl_label_index(L->f, in->ops[0].sym)) < 0)
		return (void)pl_lerr(L, "unknown branch target");
	v = pl_emit(L, "BRA");
	v->branch = true;
	pl_o_text(v, "K%dL%d", L->kernel, k);
}

void pl_exit(struct lower *L)
{
	struct ptx_vinsn *v = pl_emit(L, "EXIT");

	v->exit = true;
}

/* bar.sync / barrier.sync / bar.arrive / bar.red */
void pl_bar(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool arrive = pl_has_mod(in, ".arrive"), red = pl_has_mod(in, ".red");
	struct ptx_vinsn *v;
	int first = 0, n = in->nops;

	if (pl_has_mod(in, ".warp")) /* bar.warp.sync: lanes always reconverge here */
		return;
	if (!arrive && !red && !pl_has_mod(in, ".sync") && strcmp(in->op, "barrier"))
		return (void)pl_unsupported(L, NULL);
	if (red) {
		/* bar.red.popc.u32 d, a{, b}, {!}p / bar.red.and|or.pred p, a{, b}, {!}q */
		const char *rop = pl_has_mod(in, ".popc") ? "POPC" : pl_has_mod(in, ".and") ? "AND" :
				  pl_has_mod(in, ".or") ? "OR" : NULL;
		int p;

		if (!rop || n < 3 || n > 4)
			return (void)pl_unsupported(L, NULL);
		p = pl_pred_of(L, &in->ops[n - 1]);
		if (p < 0)
			return;
		v = pl_emit(L, "BAR.RED.%s", rop);
		pl_use_src_or_imm(L, v, &in->ops[1], 0);
		if (n == 4)
			pl_use_src_or_imm(L, v, &in->ops[2], 0);
		pl_o_puse(v, p, in->ops[n - 1].neg);
		v = pl_emit(L, "B2R.RESULT");
		if (!strcmp(rop, "POPC")) {
			int d = pl_dst_reg(L, &in->ops[0], PTX_R32);

			if (d < 0)
				return;
			pl_o_def(v, d, 0, false);
		} else {
			int d = pl_dst_reg(L, &in->ops[0], PTX_PRED);

			if (d < 0)
				return;
			pl_o_text(v, "RZ");
			pl_o_pdef(v, d);
		}
		return;
	}
	if (n < 1 || n > 2)
		return (void)pl_lerr(L, "%s takes 1 or 2 operands", in->op);
	v = pl_emit(L, "BAR.%s", arrive ? "ARV" : "SYNC");
	for (int i = first; i < n; i++)
		pl_use_src_or_imm(L, v, &in->ops[i], 0);
}

void pl_fence(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *scope = pl_has_mod(in, ".sys") ? "SYS" :
			    (pl_has_mod(in, ".gl") || pl_has_mod(in, ".gpu")) ? "GPU" : "CTA";

	pl_emit(L, "MEMBAR.%s", scope);
}

/* an mbarrier (or other shared) address operand as one register */
static int shared_addr_reg(struct lower *L, const struct ptx_operand *o)
{
	struct ptx_vinsn *v;
	int t;

	if (o->kind != PTX_O_MEM)
		return pl_lerr(L, "expected [address]"), -2;
	if (o->reg >= 0 && !o->imm)
		return o->reg; /* part 0 of a pair is the shared address */
	t = pl_new_vreg(L, 1);
	if (o->reg >= 0) {
		v = pl_emit(L, "IADD");
		pl_o_def(v, t, 0, false);
		pl_o_use(v, o->reg, 0);
		pl_o_text(v, "0x%" PRIx32, (uint32_t)o->imm);
		return t;
	}
	v = pl_emit(L, "MOV");
	pl_o_def(v, t, 0, false);
	if (o->sym[0]) {
		int sh = pl_shared_index(L, o->sym);

		if (sh < 0)
			return pl_lerr(L, "'%s' is not a .shared variable", o->sym), -2;
		pl_o_text(v, "sh%d+%" PRId64, sh, o->imm);
	} else {
		pl_o_text(v, "0x%" PRIx32, (uint32_t)o->imm);
	}
	return t;
}

static void use_addr(struct ptx_vinsn *v, int r)
{
	struct ptx_vop *o = pl_add_op(v);

	o->kind = PTX_V_MEM;
	o->v = r;
	o->text[0] = '\0';
}

/* .release/.relaxed/.acquire and .cta/.cluster, as vGPU spells them */
static void sem_scope(const struct ptx_insn *in, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", pl_has_mod(in, ".relaxed") ? ".RELAXED" : "",
		 pl_has_mod(in, ".cluster") ? ".CLUSTER" : "", "");
}

void pl_mbarrier(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;
	char ss[32];
	int a;

	sem_scope(in, ss, sizeof(ss));
	if (pl_has_mod(in, ".init") || pl_has_mod(in, ".inval") || pl_has_mod(in, ".expect_tx") ||
	    pl_has_mod(in, ".complete_tx")) {
		bool arrive = pl_has_mod(in, ".arrive") || pl_has_mod(in, ".arrive_drop");

		if (!arrive) {
			const char *what = pl_has_mod(in, ".init") ? "INIT" :
					   pl_has_mod(in, ".inval") ? "INVAL" :
					   pl_has_mod(in, ".expect_tx") ? "EXPECT_TX" : "COMPLETE_TX";

			if (in->nops != (!strcmp(what, "INVAL") ? 1 : 2))
				return (void)pl_lerr(L, "wrong number of operands");
			a = shared_addr_reg(L, &in->ops[0]);
			if (a < -1)
				return;
			v = pl_emit(L, "MBAR.%s%s", what,
				 !strcmp(what, "INIT") || !strcmp(what, "INVAL") ? "" : ss);
			use_addr(v, a);
			if (in->nops == 2)
				pl_use_src_or_imm(L, v, &in->ops[1], 0);
			return;
		}
	}
	if (pl_has_mod(in, ".arrive") || pl_has_mod(in, ".arrive_drop")) {
		bool drop = pl_has_mod(in, ".arrive_drop");
		const char *kind = pl_has_mod(in, ".expect_tx") ? ".EXPECT_TX" :
				   pl_has_mod(in, ".noComplete") ? ".NOCOMPLETE" : "";
		int d;

		if (in->nops < 2 || in->nops > 3)
			return (void)pl_lerr(L, "wrong number of operands");
		if (in->ops[0].kind == PTX_O_SINK)
			d = -1;
		else if ((d = pl_dst_reg(L, &in->ops[0], PTX_R64)) < 0)
			return;
		a = shared_addr_reg(L, &in->ops[1]);
		if (a < -1)
			return;
		v = pl_emit(L, "MBAR.%s%s%s%s", drop ? "ARRIVE_DROP" : "ARRIVE", kind,
			 pl_has_mod(in, ".relaxed") ? ".RELAXED" : "",
			 pl_has_mod(in, ".cluster") ? ".CLUSTER" : "");
		if (d < 0)
			pl_o_text(v, "_");
		else
			pl_o_def(v, d, 0, false);
		use_addr(v, a);
		if (in->nops == 3)
			pl_use_src_or_imm(L, v, &in->ops[2], 0);
		return;
	}
	if (pl_has_mod(in, ".test_wait") || pl_has_mod(in, ".try_wait")) {
		bool parity = pl_has_mod(in, ".parity"), try = pl_has_mod(in, ".try_wait");
		const struct ptx_operand *st = &in->ops[2];
		int p, r = -1, rp = 0;

		if (in->nops < 3 || in->nops > (try ? 4 : 3))
			return (void)pl_lerr(L, "wrong number of operands");
		p = pl_dst_reg(L, &in->ops[0], PTX_PRED);
		a = shared_addr_reg(L, &in->ops[1]);
		if (p < 0 || a < -1)
			return;
		if (!parity && !pl_is_reg(L, st, PTX_R64))
			return (void)pl_lerr(L, "the state operand must be a 64-bit register");
		/* an immediate parity with an immediate hint: parity in a register */
		if (parity && st->kind == PTX_O_IMM && in->nops == 4 &&
		    in->ops[3].kind == PTX_O_IMM)
			r = pl_src_reg(L, st, 0, &rp);
		v = pl_emit(L, "MBAR.%s%s%s%s", try ? "TRY_WAIT" : "TEST_WAIT",
			 parity ? ".PARITY" : "", pl_has_mod(in, ".relaxed") ? ".RELAXED" : "",
			 pl_has_mod(in, ".cluster") ? ".CLUSTER" : "");
		pl_o_pdef(v, p);
		use_addr(v, a);
		if (r >= 0)
			pl_o_use(v, r, rp);
		else if (parity && st->kind == PTX_O_IMM && in->nops == 4)
			pl_o_text(v, "RZ");
		else if (parity)
			pl_use_src_or_imm(L, v, st, 0);
		else
			pl_o_use(v, st->reg, 0);
		if (in->nops == 4)
			pl_use_src_or_imm(L, v, &in->ops[3], 0);
		return;
	}
	if (pl_has_mod(in, ".pending_count")) {
		int d;

		if (!pl_want_ops(L, 2))
			return;
		d = pl_dst_reg(L, &in->ops[0], PTX_R32);
		if (d < 0 || !pl_is_reg(L, &in->ops[1], PTX_R64))
			return (void)(d >= 0 && pl_lerr(L, "the state must be a 64-bit register"));
		v = pl_emit(L, "MBAR.PENDING_COUNT");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, in->ops[1].reg, 0);
		return;
	}
	pl_unsupported(L, NULL);
}

/* The vGPU mnemonic of an immediate-parity try_wait needs RZ as parity 0. */

/*
 * The tensor map operand [tmap, {c0, ..}]: a pair with the map's address
 * (a 64-bit register, or a parameter by value: its address in the
 * parameter buffer) and a register range with the N coordinates.
 */
static bool tensor_operand(struct lower *L, const struct ptx_operand *o, int n, int *map,
			   int *coords)
{
	int p;

	if (o->kind != PTX_O_MEM || o->nvec != n)
		return pl_lerr(L, "expected [tensor-map, {%d coordinates}]", n);
	if (o->reg >= 0 && pl_preg(L, o->reg)->cls == PTX_R64 && !o->imm) {
		*map = o->reg;
	} else if (o->reg < 0 && (p = pl_param_index(L->f, o->sym)) >= 0) {
		*map = pl_new_vreg(L, 2);
		pl_param_addr(L, *map, p, (uint32_t)o->imm);
	} else {
		return pl_unsupported(L, "a tensor map other than a 64-bit register or a parameter");
	}
	*coords = pl_new_vreg(L, n == 3 ? 4 : n);
	for (int i = 0; i < n; i++) {
		struct ptx_vinsn *v = pl_emit(L, "MOV");

		pl_o_def(v, *coords, i, i + 1 < n);
		if (o->vec[i] < 0)
			pl_o_text(v, "RZ");
		else
			pl_o_use(v, o->vec[i], 0);
	}
	return true;
}

/*
 * cp.async.bulk.tensor.Nd.shared::cluster.global[.tile].mbarrier::complete_tx::bytes
 *	[dst], [tmap, {c..}], [mbar]
 * cp.async.bulk.tensor.Nd.global.shared::cta[.tile].bulk_group [tmap, {c..}], [src]
 * on CP.ASYNC.BULK.TENSOR[.GLOBAL].ND (tile mode only).
 */
static void tensor_copy(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool store = false;
	int n = 0, map = -1, coords = -1, a, mb = -1;
	struct ptx_vinsn *v;

	/* .Nd, then the destination's state space */
	for (int i = 0; i < in->nmods; i++)
		if (strlen(in->mods[i]) == 3 && in->mods[i][2] == 'd' && in->mods[i][1] >= '1' &&
		    in->mods[i][1] <= '5') {
			n = in->mods[i][1] - '0';
			store = i + 1 < in->nmods && !strcmp(in->mods[i + 1], ".global");
		}
	if (!n)
		return (void)pl_lerr(L, "a tensor copy needs .1d .. .5d");
	if (pl_has_mod(in, ".im2col") || pl_has_mod(in, ".multicast::cluster") ||
	    pl_has_mod(in, ".tile::gather4") || pl_has_mod(in, ".L2::cache_hint"))
		return (void)pl_unsupported(L, "tensor copies other than tile mode to one CTA");
	if (in->nops != (store ? 2 : 3))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!tensor_operand(L, &in->ops[store ? 0 : 1], n, &map, &coords))
		return;
	a = shared_addr_reg(L, &in->ops[store ? 1 : 0]);
	if (!store)
		mb = shared_addr_reg(L, &in->ops[2]);
	if (a < -1 || mb < -1)
		return;
	if (store) {
		v = pl_emit(L, "CP.ASYNC.BULK.TENSOR.GLOBAL.%dD", n);
		use_addr(v, map);
		pl_o_use(v, coords, 0);
		use_addr(v, a);
		return;
	}
	v = pl_emit(L, "CP.ASYNC.BULK.TENSOR.%dD", n);
	use_addr(v, a);
	use_addr(v, map);
	pl_o_use(v, coords, 0);
	use_addr(v, mb);
}

void pl_cp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;

	if (pl_has_mod(in, ".bulk") && pl_has_mod(in, ".tensor"))
		return tensor_copy(L);
	if (pl_has_mod(in, ".bulk") && (pl_has_mod(in, ".commit_group") || pl_has_mod(in, ".wait_group"))) {
		if (pl_has_mod(in, ".commit_group")) {
			pl_emit(L, "CP.ASYNC.BULK.COMMIT_GROUP");
			return;
		}
		if (!pl_want_ops(L, 1) || in->ops[0].kind != PTX_O_IMM)
			return (void)pl_lerr(L, "wait_group takes an immediate count");
		v = pl_emit(L, "CP.ASYNC.BULK.WAIT_GROUP%s", pl_has_mod(in, ".read") ? ".READ" : "");
		pl_o_text(v, "%" PRId64, in->ops[0].imm);
		return;
	}
	if (pl_has_mod(in, ".bulk")) {
		bool to_global = in->nmods > 1 && !strcmp(in->mods[1], ".global");
		int dst, src, mb = -1;

		if (in->nops != (to_global ? 3 : 4))
			return (void)pl_lerr(L, "wrong number of operands");
		if (to_global) {
			src = shared_addr_reg(L, &in->ops[1]);
			if (src < -1)
				return;
			if (in->ops[0].reg < 0 || in->ops[0].imm ||
			    pl_preg(L, in->ops[0].reg)->cls != PTX_R64)
				return (void)pl_unsupported(L, "a global address other than [%rd]");
			v = pl_emit(L, "CP.ASYNC.BULK.GLOBAL");
			use_addr(v, in->ops[0].reg);
			use_addr(v, src);
			pl_use_src_or_imm(L, v, &in->ops[2], 0);
			return;
		}
		dst = shared_addr_reg(L, &in->ops[0]);
		mb = shared_addr_reg(L, &in->ops[3]);
		if (dst < -1 || mb < -1)
			return;
		src = in->ops[1].reg;
		if (in->ops[1].kind != PTX_O_MEM || src < 0 || in->ops[1].imm ||
		    pl_preg(L, src)->cls != PTX_R64)
			return (void)pl_unsupported(L, "a global address other than [%rd]");
		v = pl_emit(L, "CP.ASYNC.BULK");
		use_addr(v, dst);
		use_addr(v, src);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
		use_addr(v, mb);
		return;
	}
	if (pl_has_mod(in, ".mbarrier")) { /* cp.async.mbarrier.arrive{.noinc} */
		int a;

		if (!pl_want_ops(L, 1))
			return;
		a = shared_addr_reg(L, &in->ops[0]);
		if (a < -1)
			return;
		v = pl_emit(L, "CP.ASYNC.MBARRIER.ARRIVE%s", pl_has_mod(in, ".noinc") ? ".NOINC" : "");
		use_addr(v, a);
		return;
	}
	if (pl_has_mod(in, ".commit_group"))
		return; /* every cp.async is waited for by WAIT_ALL */
	if (pl_has_mod(in, ".wait_group") || pl_has_mod(in, ".wait_all")) {
		pl_emit(L, "CP.ASYNC.WAIT_ALL");
		return;
	}
	{
		int dst, src;

		if (in->nops != 3)
			return (void)pl_unsupported(L, "cp.async with a source size");
		dst = shared_addr_reg(L, &in->ops[0]);
		src = in->ops[1].reg;
		if (dst < -1)
			return;
		if (in->ops[1].kind != PTX_O_MEM || src < 0 || in->ops[1].imm ||
		    pl_preg(L, src)->cls != PTX_R64)
			return (void)pl_unsupported(L, "a global address other than [%rd]");
		v = pl_emit(L, "CP.ASYNC%s", pl_has_mod(in, ".cg") ? ".CG" : "");
		use_addr(v, dst);
		use_addr(v, src);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
	}
}

void pl_mapa(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	struct ptx_vinsn *v;
	int d;

	if (!pl_want_ops(L, 3))
		return;
	d = pl_dst_reg(L, &in->ops[0], t.bits == 64 ? PTX_R64 : PTX_R32);
	if (d < 0)
		return;
	v = pl_emit(L, "MAPA");
	pl_o_def(v, d, 0, t.bits == 64);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
	if (t.bits == 64)
		pl_mov_reg(L, d, 1, false, -1, 0);
}

void pl_barrier_cluster(struct lower *L)
{
	const struct ptx_insn *in = L->in;

	if (pl_has_mod(in, ".arrive"))
		pl_emit(L, "BAR.CLUSTER.ARRIVE%s", pl_has_mod(in, ".relaxed") ? ".RELAXED" : "");
	else if (pl_has_mod(in, ".wait"))
		pl_emit(L, "BAR.CLUSTER.WAIT");
	else
		pl_unsupported(L, NULL);
}

void pl_nanosleep(struct lower *L)
{
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 1))
		return;
	v = pl_emit(L, "NANOSLEEP");
	pl_use_src_or_imm(L, v, &L->in->ops[0], 0);
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
 * shfl.sync.MODE.b32 d, a, b, c, membermask: the whole-warp forms (c =
 * 0x1f, or 0 for .up) on SHFL; the member mask is not checked.
 */
/*
 * shfl.sync with sub-warp segments (c = segmask << 8 | clamp, as
 * __shfl_*_sync(..., width) compiles): the source lane j and whether it
 * is valid computed as PTX's definition does, then SHFL.IDX from j (the
 * lane itself when it is not valid).
 */
static void segmented_shfl(struct lower *L, const char *mode, uint32_t c)
{
	const struct ptx_insn *in = L->in;
	uint32_t segmask = c >> 8 & 0x1f, k = c & 0x1f & ~segmask;
	int l = pl_new_vreg(L, 1), mn = pl_new_vreg(L, 1), mx = pl_new_vreg(L, 1);
	int b = pl_new_vreg(L, 1), j = pl_new_vreg(L, 1), d;
	int p = in->ops[0].has_p && in->ops[0].preg >= 0 ? in->ops[0].preg : pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 && in->ops[0].kind != PTX_O_SINK)
		return;
	v = pl_emit(L, "S2R");
	pl_o_def(v, l, 0, false);
	pl_o_text(v, "SR_LANEID");
	v = pl_emit(L, "LOP.AND"); /* minLane = lane & segmask */
	pl_o_def(v, mn, 0, false);
	pl_o_use(v, l, 0);
	pl_o_text(v, "0x%x", segmask);
	v = pl_emit(L, "LOP.OR"); /* maxLane = minLane | (clamp & ~segmask) */
	pl_o_def(v, mx, 0, false);
	pl_o_use(v, mn, 0);
	pl_o_text(v, "0x%x", k);
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

void pl_shfl(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *mode = pl_has_mod(in, ".up") ? "UP" : pl_has_mod(in, ".down") ? "DOWN" :
			   pl_has_mod(in, ".bfly") ? "BFLY" : pl_has_mod(in, ".idx") ? "IDX" : NULL;
	struct ptx_vinsn *v;
	int64_t cval;
	int d;

	if (!mode || in->nops < 4 || in->nops > 5)
		return (void)pl_unsupported(L, NULL);
	if (!pl_const_of(L, &in->ops[3], &cval))
		return (void)pl_unsupported(L, "a shuffle whose c operand is not a constant");
	if (cval != (!strcmp(mode, "UP") ? 0 : 0x1f))
		return segmented_shfl(L, mode, (uint32_t)cval);
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 && in->ops[0].kind != PTX_O_SINK)
		return;
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
			pl_use_src_or_imm(L, v, &in->ops[2], 0);
		} else if (!strcmp(mode, "DOWN")) { /* lane + b <= 31 */
			v = pl_emit(L, "IADD");
			pl_o_def(v, l, 0, false);
			pl_o_use(v, l, 0);
			pl_use_src_or_imm(L, v, &in->ops[2], 0);
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
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
}

/*
 * elect.sync d|p, membermask: the leader is the lowest active lane of
 * membermask; p is true in it, d is its lane number in every lane.
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
	d = pl_dst_reg(L, o, PTX_R32);
	if (d < 0 && o->kind != PTX_O_SINK)
		return;
	v = pl_emit(L, "VOTE.BALLOT");
	pl_o_def(v, b, 0, false);
	pl_o_text(v, "PT");
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, b, 0, false);
	pl_o_use(v, b, 0);
	pl_use_src_or_imm(L, v, &in->ops[1], 0);
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

		v = pl_emit(L, "MOV");
		pl_o_def(v, m, 0, false);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
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
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0 && in->ops[0].kind != PTX_O_SINK)
		return;
	v = pl_emit(L, "MOV");
	pl_o_def(v, m, 0, false);
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
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
