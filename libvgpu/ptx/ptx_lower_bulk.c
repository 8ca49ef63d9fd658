// SPDX-License-Identifier: MIT
/*
 * PTX lowering: the tensor copies (cp.async.bulk.tensor, tile mode) and
 * the multicast forms of the bulk and tensor copies
 * (.multicast::cluster with a ctaMask), which become one copy per
 * destination CTA of the cluster.  The other bulk copies are in
 * ptx_lower_sync.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"

/* the most CTAs a cluster has (PTX: a 16-bit ctaMask) */
#define MC_RANKS 16

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

/* One copy into shared memory that completes its bytes on an mbarrier. */
struct mc_copy {
	int n;	 /* tensor rank 1..5; 0: a bulk copy */
	int src; /* the global source pair (bulk), the tensor map's (tensor) */
	int coords;
	const struct ptx_operand *size; /* bulk */
};

/* the copy to shared @dst completing on mbarrier @mb, under vpred @g */
static void emit_copy(struct lower *L, const struct mc_copy *c, int dst, int mb, int g)
{
	struct ptx_vinsn *v;

	if (c->n) {
		v = pl_emit(L, "CP.ASYNC.BULK.TENSOR.%dD", c->n);
		pl_use_addr(v, dst);
		pl_use_addr(v, c->src);
		pl_o_use(v, c->coords, 0);
	} else {
		v = pl_emit(L, "CP.ASYNC.BULK");
		pl_use_addr(v, dst);
		pl_use_addr(v, c->src);
		pl_use_src_or_imm(L, v, c->size, 0);
	}
	pl_use_addr(v, mb);
	if (g >= 0) {
		v->guard = g;
		v->guard_not = false;
	}
}

/* MAPA @d, @a, @rank under vpred @g (-1: the instruction's guard) */
static int mapa(struct lower *L, int a, int rank, int g)
{
	int d = pl_new_vreg(L, 1);
	struct ptx_vinsn *v = pl_emit(L, "MAPA");

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", rank);
	if (g >= 0) {
		v->guard = g;
		v->guard_not = false;
	}
	return d;
}

/* The CTAs of the kernel's cluster where its directives fix them, else 0. */
static uint32_t known_cluster(const struct lower *L)
{
	const struct ptx_kattrs *a = &L->f->attrs;

	if (!L->f->entry)
		return 0;
	if (a->reqnctapercluster[0])
		return a->reqnctapercluster[0] * (a->reqnctapercluster[1] ? a->reqnctapercluster[1] : 1) *
		       (a->reqnctapercluster[2] ? a->reqnctapercluster[2] : 1);
	return a->maxclusterrank;
}

/*
 * .multicast::cluster (PTX ISA 9.7.9.25.4.1, 9.7.9.27.1.2): the data lands
 * at dst's CTA-relative offset in the shared memory of every CTA of the
 * cluster whose bit is set in the 16-bit @mask, and that CTA's mbarrier at
 * mb's CTA-relative offset gets complete_tx of the bytes written there.
 * vGPU's copies have one destination: for each rank r, under "bit r of
 * ctaMask", MAPA the destination and the mbarrier into rank r's cluster
 * addresses (mapa.shared::cluster) and issue the copy.  An immediate mask
 * issues the copies of its bits only (a bit past a cluster size the
 * kernel's directives fix is a located error); a register mask tests each
 * of the 16 bits, and a set bit past the cluster raises CLUSTER_RANGE at
 * MAPA (PTX leaves it undefined).
 */
static void multicast(struct lower *L, const struct mc_copy *c, int dst, int mb,
		      const struct ptx_operand *mask)
{
	const struct ptx_insn *in = L->in;
	struct ptx_insn un = *in;
	uint32_t ncta = known_cluster(L);
	struct ptx_vinsn *v;
	int done = -1;

	if (mask->kind == PTX_O_IMM) {
		if (mask->imm < 0 || mask->imm > 0xffff)
			return (void)pl_lerr(L, "ctaMask 0x%" PRIx64 " is not a 16-bit mask",
					     (uint64_t)mask->imm);
		for (int r = 0; r < MC_RANKS; r++) {
			if (!(mask->imm >> r & 1))
				continue;
			if (ncta && (uint32_t)r >= ncta)
				return (void)pl_lerr(L, "ctaMask 0x%" PRIx64 " names CTA rank %d of "
						     "a %u-CTA cluster", (uint64_t)mask->imm, r,
						     ncta);
			emit_copy(L, c, mapa(L, dst, r, -1), mapa(L, mb, r, -1), -1);
		}
		return;
	}
	if (!pl_is_reg(L, mask, PTX_R32))
		return (void)pl_lerr(L, "ctaMask must be a 16-bit register or an integer");
	if (in->guard >= 0) {
		/* the guard's lanes only: branch around the copies */
		done = pl_new_label(L);
		pl_bra_label(L, done, in->guard, !in->guard_not);
		un.guard = -1;
		L->in = &un;
	}
	for (int r = 0; r < MC_RANKS; r++) {
		int t = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0);

		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, t, 0, false);
		pl_o_use(v, mask->reg, 0);
		pl_o_text(v, "0x%x", 1u << r);
		v = pl_emit(L, "ISETP.NE.U32");
		pl_o_pdef(v, p);
		pl_o_use(v, t, 0);
		pl_o_text(v, "0x0");
		emit_copy(L, c, mapa(L, dst, r, p), mapa(L, mb, r, p), p);
	}
	if (done >= 0)
		pl_put_label(L, done);
	L->in = in;
}

/* .Nd of a tensor copy (0: none); *@store: a copy to global memory */
static int tensor_rank(const struct ptx_insn *in, bool *store)
{
	int n = 0;

	for (int i = 0; i < in->nmods; i++)
		if (strlen(in->mods[i]) == 3 && in->mods[i][2] == 'd' && in->mods[i][1] >= '1' &&
		    in->mods[i][1] <= '5') {
			n = in->mods[i][1] - '0';
			*store = i + 1 < in->nmods && !strcmp(in->mods[i + 1], ".global");
		}
	return n;
}

/*
 * cp.async.bulk.tensor.Nd.shared::cluster.global[.tile].mbarrier::complete_tx::bytes
 *	{.multicast::cluster}{.L2::cache_hint} [dst], [tmap, {c..}], [mbar]
 *	{, ctaMask}{, policy}
 * cp.async.bulk.tensor.Nd.global.shared::cta[.tile].bulk_group{.L2::cache_hint}
 *	[tmap, {c..}], [src]{, policy}
 * on CP.ASYNC.BULK.TENSOR[.GLOBAL].ND (tile mode only; no cache: the hint
 * is dropped).
 */
void pl_tensor_copy(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool store = false, mc = pl_has_mod(in, ".multicast::cluster");
	int n = tensor_rank(in, &store), map = -1, coords = -1, a, mb = -1, nops;
	struct ptx_vinsn *v;

	if (!n)
		return (void)pl_lerr(L, "a tensor copy needs .1d .. .5d");
	if (pl_has_mod(in, ".im2col") || pl_has_mod(in, ".tile::gather4") ||
	    pl_has_mod(in, ".im2col::w") || pl_has_mod(in, ".im2col::w::128") ||
	    pl_has_mod(in, ".tile::scatter4") || (mc && store))
		return (void)pl_unsupported(L, "tensor copies other than tile mode");
	for (int i = 0; i < in->nmods; i++)
		if (!strncmp(in->mods[i], ".cta_group", 10))
			return (void)pl_unsupported(L, "tensor copies with .cta_group");
	nops = pl_hint_nops(L);
	if (nops < 0)
		return;
	if (nops != (store ? 2 : mc ? 4 : 3))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!tensor_operand(L, &in->ops[store ? 0 : 1], n, &map, &coords))
		return;
	a = pl_shared_addr_reg(L, &in->ops[store ? 1 : 0]);
	if (!store)
		mb = pl_shared_addr_reg(L, &in->ops[2]);
	if (a < -1 || mb < -1)
		return;
	if (store) {
		v = pl_emit(L, "CP.ASYNC.BULK.TENSOR.GLOBAL.%dD", n);
		pl_use_addr(v, map);
		pl_o_use(v, coords, 0);
		pl_use_addr(v, a);
		return;
	}
	if (mc)
		return multicast(L, &(struct mc_copy){ .n = n, .src = map, .coords = coords }, a,
				 mb, &in->ops[3]);
	emit_copy(L, &(struct mc_copy){ .n = n, .src = map, .coords = coords }, a, mb, -1);
}

/*
 * cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
 *	.multicast::cluster{.L2::cache_hint} [dst], [src], size, [mbar],
 *	ctaMask{, policy}
 */
void pl_bulk_multicast(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int nops = pl_hint_nops(L), dst, mb, src;

	if (nops < 0)
		return;
	if (!pl_has_mod(in, ".shared::cluster") || !pl_has_mod(in, ".global") ||
	    !pl_has_mod(in, ".mbarrier::complete_tx::bytes"))
		return (void)pl_unsupported(L, "a multicast bulk copy other than "
					    ".shared::cluster.global.mbarrier::complete_tx::bytes");
	if (nops != 5)
		return (void)pl_lerr(L, "wrong number of operands");
	src = in->ops[1].reg;
	if (in->ops[1].kind != PTX_O_MEM || src < 0 || in->ops[1].imm ||
	    pl_preg(L, src)->cls != PTX_R64)
		return (void)pl_unsupported(L, "a global address other than [%rd]");
	if (in->ops[2].kind != PTX_O_IMM && !pl_is_reg(L, &in->ops[2], PTX_R32))
		return (void)pl_lerr(L, "the size must be a 32-bit register or an integer");
	dst = pl_shared_addr_reg(L, &in->ops[0]);
	mb = pl_shared_addr_reg(L, &in->ops[3]);
	if (dst < -1 || mb < -1)
		return;
	multicast(L, &(struct mc_copy){ .src = src, .size = &in->ops[2] }, dst, mb, &in->ops[4]);
}
