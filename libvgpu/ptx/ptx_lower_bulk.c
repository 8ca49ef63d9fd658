// SPDX-License-Identifier: MIT
/*
 * PTX lowering: the bulk copies.  cp.async.bulk between global and
 * shared memory (CP.ASYNC.BULK, CP.ASYNC.BULK.GLOBAL), the tensor copies
 * (cp.async.bulk.tensor, tile and im2col modes) and reductions
 * (cp.reduce.async.bulk.tensor), the multicast forms of both
 * (.multicast::cluster with a ctaMask: one copy per destination CTA of
 * the cluster), the L2 prefetches (nothing to do), and the forms the
 * copy engine does not do: cp.async.bulk from shared memory to a cluster
 * CTA's and cp.reduce.async.bulk, done at once by the issuing thread in
 * a loop.  commit_group and wait_group are in ptx_lower_sync.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"

/* the most CTAs a cluster has (PTX: a 16-bit ctaMask) */
#define MC_RANKS 16

int pl_global_pair(struct lower *L, const struct ptx_operand *o)
{
	enum space sp = SP_GLOBAL;
	char off[PTX_NAME_MAX + 24];
	struct ptx_vinsn *v;
	int base, d;

	if (o->kind != PTX_O_MEM)
		return pl_lerr(L, "expected a global address [%%rd+imm] or [var]"), -2;
	if (!pl_address(L, o, &sp, &base, off, sizeof(off)))
		return -2;
	if (sp != SP_GLOBAL || base < 0)
		return pl_lerr(L, "expected a global address [%%rd+imm] or [var]"), -2;
	if (!o->imm)
		return base;
	if (o->imm < INT32_MIN || o->imm > (int64_t)UINT32_MAX)
		return pl_lerr(L, "an address offset of more than 32 bits"), -2;
	d = pl_new_vreg(L, 2);
	pl_add64(L, d, base, -1, (uint32_t)o->imm);
	if (o->imm < 0) { /* the high word of the sign extension */
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, true);
		pl_o_use(v, d, 1);
		pl_o_text(v, "0xffffffff");
	}
	return d;
}

/* A bulk size: a 32-bit register or an integer multiple of 16. */
static bool bulk_size(struct lower *L, const struct ptx_operand *o)
{
	if (o->kind == PTX_O_IMM && (o->imm < 0 || o->imm > INT32_MAX || o->imm % 16))
		return pl_lerr(L, "the size %" PRId64 " is not a multiple of 16", o->imm);
	if (o->kind != PTX_O_IMM && !pl_is_reg(L, o, PTX_R32))
		return pl_lerr(L, "the size must be a 32-bit register or an integer");
	return true;
}

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
 * im2colInfo of the .im2col mode {i2cOffW, ..}: the rank - 2 16-bit
 * registers, zero-extended into a range (PTX keeps a .b16 value's upper
 * bits undefined; the core checks each offset against its rank's bits).
 */
static bool im2col_offsets(struct lower *L, const struct ptx_operand *o, int n, int *offs)
{
	int k = n - 2;

	if (o->kind != PTX_O_VEC || o->nvec != k)
		return pl_lerr(L, "expected {%d im2col offsets} after the mbarrier", k);
	for (int i = 0; i < k; i++)
		if (o->vec[i] < 0 || pl_preg(L, o->vec[i])->cls != PTX_R32 ||
		    pl_preg(L, o->vec[i])->bits != 16)
			return pl_lerr(L, "im2col offsets are 16-bit registers");
	*offs = pl_new_vreg(L, k == 3 ? 4 : k);
	for (int i = 0; i < k; i++) {
		struct ptx_vinsn *v = pl_emit(L, "LOP.AND");

		pl_o_def(v, *offs, i, i + 1 < k);
		pl_o_use(v, o->vec[i], 0);
		pl_o_text(v, "0xffff");
	}
	return true;
}

/* One copy into shared memory that completes its bytes on an mbarrier. */
struct mc_copy {
	int n;	 /* tensor rank 1..5; 0: a bulk copy */
	int src; /* the global source pair (bulk), the tensor map's (tensor) */
	int coords;
	int offs; /* im2col: the offsets' range; -1: tile mode */
	const struct ptx_operand *size; /* bulk */
};

/* the copy to shared @dst completing on mbarrier @mb, under vpred @g */
static void emit_copy(struct lower *L, const struct mc_copy *c, int dst, int mb, int g)
{
	struct ptx_vinsn *v;

	if (c->n) {
		v = pl_emit(L, "CP.ASYNC.BULK.TENSOR%s.%dD", c->offs >= 0 ? ".IM2COL" : "", c->n);
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
	if (c->n && c->offs >= 0)
		pl_o_use(v, c->offs, 0);
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

/*
 * .Nd of a tensor copy (0: none); *@store: a copy to global memory (the
 * first state space after .Nd, the destination, is .global)
 */
static int tensor_rank(const struct ptx_insn *in, bool *store)
{
	int n = 0;

	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (strlen(m) == 3 && m[2] == 'd' && m[1] >= '1' && m[1] <= '5') {
			n = m[1] - '0';
		} else if (n && (!strcmp(m, ".global") || !strncmp(m, ".shared", 7))) {
			*store = !strcmp(m, ".global");
			break;
		}
	}
	return n;
}

/* The load modes vGPU copies (PTX's .load_mode; .tile when absent). */
enum load_mode { LM_TILE, LM_IM2COL, LM_IM2COL_NO_OFFS };

/*
 * The instruction's .load_mode, false after a located error: sm_90's
 * .tile, .im2col and (stores) .im2col_no_offs; gather4/scatter4,
 * .im2col::w[::128] and .cta_group are sm_100a's.
 */
static bool load_mode(struct lower *L, enum load_mode *mode)
{
	const struct ptx_insn *in = L->in;
	static const char *const sm100[] = {
		".tile::gather4", ".tile::scatter4", ".im2col::w", ".im2col::w::128",
	};
	char why[96];

	*mode = LM_TILE;
	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];
		bool newer = !strncmp(m, ".cta_group", 10);

		for (size_t k = 0; k < sizeof(sm100) / sizeof(sm100[0]); k++)
			newer |= !strcmp(m, sm100[k]);
		if (newer) {
			snprintf(why, sizeof(why), "%s needs sm_100a (vGPU has sm_90a's tensor copies)",
				 m);
			return pl_unsupported(L, why);
		}
		if (!strcmp(m, ".im2col"))
			*mode = LM_IM2COL;
		else if (!strcmp(m, ".im2col_no_offs"))
			*mode = LM_IM2COL_NO_OFFS;
	}
	return true;
}

/*
 * cp.async.bulk.prefetch.tensor.Nd.L2.global{.tile|.im2col}{.L2::cache_hint}
 *	[tmap, {c..}]{, {offsets}}{, policy}: vGPU has no cache, so nothing is
 * fetched; the operands are checked (and their code is dead).
 */
static void tensor_prefetch(struct lower *L, int n, enum load_mode mode)
{
	const struct ptx_insn *in = L->in;
	int nops = pl_hint_nops(L), map, coords, offs;

	if (nops < 0)
		return;
	if (!pl_has_mod(in, ".L2") || !pl_has_mod(in, ".global") || mode == LM_IM2COL_NO_OFFS)
		return (void)pl_unsupported(L, NULL);
	if (mode == LM_IM2COL && n < 3)
		return (void)pl_lerr(L, ".im2col needs .3d, .4d or .5d");
	if (nops != (mode == LM_IM2COL ? 2 : 1))
		return (void)pl_lerr(L, "wrong number of operands");
	if (tensor_operand(L, &in->ops[0], n, &map, &coords) && mode == LM_IM2COL)
		im2col_offsets(L, &in->ops[1], n, &offs);
}

/*
 * cp.async.bulk.tensor.Nd.shared::{cluster,cta}.global{.tile|.im2col}
 *	.mbarrier::complete_tx::bytes{.multicast::cluster}{.L2::cache_hint}
 *	[dst], [tmap, {c..}], [mbar]{, {offsets}}{, ctaMask}{, policy}
 * cp.async.bulk.tensor.Nd.global.shared::cta{.tile|.im2col_no_offs}.bulk_group
 *	{.L2::cache_hint} [tmap, {c..}], [src]{, policy}
 * on CP.ASYNC.BULK.TENSOR[.GLOBAL][.IM2COL].ND (no cache: the hint is
 * dropped), and the prefetches.
 */
static void tensor_copy(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool store = false, mc = pl_has_mod(in, ".multicast::cluster");
	int n = tensor_rank(in, &store), map = -1, coords = -1, offs = -1, a, mb = -1, nops;
	enum load_mode mode;
	struct ptx_vinsn *v;

	if (!n)
		return (void)pl_lerr(L, "a tensor copy needs .1d .. .5d");
	if (!load_mode(L, &mode))
		return;
	if (pl_has_mod(in, ".prefetch"))
		return tensor_prefetch(L, n, mode);
	if (mc && store)
		return (void)pl_unsupported(L, "tensor copies other than tile mode");
	if (mode == (store ? LM_IM2COL : LM_IM2COL_NO_OFFS))
		return (void)pl_lerr(L, store ? "a store's im2col mode is .im2col_no_offs" :
					       ".im2col_no_offs is a store's; a load's is .im2col");
	if (mode != LM_TILE && n < 3)
		return (void)pl_lerr(L, "%s needs .3d, .4d or .5d",
				     store ? ".im2col_no_offs" : ".im2col");
	nops = pl_hint_nops(L);
	if (nops < 0)
		return;
	if (nops != (store ? 2 : 3 + mc + (mode == LM_IM2COL)))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!tensor_operand(L, &in->ops[store ? 0 : 1], n, &map, &coords))
		return;
	if (mode == LM_IM2COL && !im2col_offsets(L, &in->ops[3], n, &offs))
		return;
	a = pl_shared_addr_reg(L, &in->ops[store ? 1 : 0]);
	if (!store)
		mb = pl_shared_addr_reg(L, &in->ops[2]);
	if (a < -1 || mb < -1)
		return;
	if (store) {
		v = pl_emit(L, "CP.ASYNC.BULK.TENSOR.GLOBAL%s.%dD", mode ? ".IM2COL" : "", n);
		pl_use_addr(v, map);
		pl_o_use(v, coords, 0);
		pl_use_addr(v, a);
		return;
	}
	if (mc)
		return multicast(L, &(struct mc_copy){ .n = n, .src = map, .coords = coords,
						       .offs = offs },
				 a, mb, &in->ops[3 + (mode == LM_IM2COL)]);
	emit_copy(L, &(struct mc_copy){ .n = n, .src = map, .coords = coords, .offs = offs }, a,
		  mb, -1);
}

/*
 * cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp{.tile|
 *	.im2col_no_offs}.bulk_group{.L2::cache_hint} [tmap, {c..}], [src]
 *	{, policy}
 * (PTX ISA, cp.reduce.async.bulk.tensor) on CP.REDUCE.ASYNC.BULK.TENSOR
 * [.IM2COL].OP.ND: the copy engine walks the box (or the im2col pixels)
 * as for a tensor store and reduces each in-bounds element into global
 * memory atomically, in the element type the tensor map names (an op
 * the type has not: TENSOR_MAP at run time, as for a bad map).
 */
static void tensor_reduce(struct lower *L)
{
	static const char *const ops[] = { ".add", ".min", ".max", ".inc",
					   ".dec", ".and", ".or", ".xor" };
	static const char *const vgpu_ops[] = { "ADD", "MIN", "MAX", "INC",
						"DEC", "AND", "OR", "XOR" };
	static const char *const types[] = { ".u32", ".s32", ".u64", ".s64", ".b32", ".b64",
					     ".f16", ".bf16", ".f32", ".f64", ".noftz" };
	const struct ptx_insn *in = L->in;
	bool store = false;
	int n = tensor_rank(in, &store), o = -1, map, coords, a;
	enum load_mode mode;
	struct ptx_vinsn *v;
	char b[256];

	if (!n)
		return (void)pl_lerr(L, "a tensor reduction needs .1d .. .5d");
	if (!load_mode(L, &mode))
		return;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (pl_has_mod(in, ops[k]))
			o = o < 0 ? (int)k : -2;
	if (!store || !pl_has_mod(in, ".shared::cta") || !pl_has_mod(in, ".bulk_group"))
		return (void)pl_lerr(L, "'%s': expected cp.reduce.async.bulk.tensor.Nd.global"
				     ".shared::cta.OP{.tile|.im2col_no_offs}.bulk_group",
				     pl_spelled(in, b, sizeof(b)));
	if (o < 0)
		return (void)pl_lerr(L, "'%s' needs one of .add .min .max .inc .dec .and .or .xor",
				     pl_spelled(in, b, sizeof(b)));
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
		if (pl_has_mod(in, types[k]))
			return (void)pl_lerr(L, "'%s': a tensor reduction takes no %s (the tensor "
					     "map gives the element type)",
					     pl_spelled(in, b, sizeof(b)), types[k]);
	if (pl_has_mod(in, ".multicast::cluster"))
		return (void)pl_lerr(L, "a tensor reduction has no .multicast::cluster");
	if (mode == LM_IM2COL)
		return (void)pl_lerr(L, "a tensor reduction's im2col mode is .im2col_no_offs");
	if (mode == LM_IM2COL_NO_OFFS && n < 3)
		return (void)pl_lerr(L, ".im2col_no_offs needs .3d, .4d or .5d");
	if (pl_hint_nops(L) != 2)
		return (void)pl_lerr(L, "wrong number of operands");
	if (!tensor_operand(L, &in->ops[0], n, &map, &coords))
		return;
	a = pl_shared_addr_reg(L, &in->ops[1]);
	if (a < -1)
		return;
	v = pl_emit(L, "CP.REDUCE.ASYNC.BULK.TENSOR%s.%s.%dD",
		    mode == LM_IM2COL_NO_OFFS ? ".IM2COL" : "", vgpu_ops[o], n);
	pl_use_addr(v, map);
	pl_o_use(v, coords, 0);
	pl_use_addr(v, a);
}

/*
 * cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
 *	.multicast::cluster{.L2::cache_hint} [dst], [src], size, [mbar],
 *	ctaMask{, policy}
 */
static void bulk_multicast(struct lower *L)
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
	if (!bulk_size(L, &in->ops[2]))
		return;
	src = pl_global_pair(L, &in->ops[1]);
	dst = pl_shared_addr_reg(L, &in->ops[0]);
	mb = pl_shared_addr_reg(L, &in->ops[3]);
	if (src < -1 || dst < -1 || mb < -1)
		return;
	multicast(L, &(struct mc_copy){ .src = src, .offs = -1, .size = &in->ops[2] }, dst, mb,
		  &in->ops[4]);
}

/* ---- what the copy engine does not do: done at once, in a loop ---- */

/* One element of a bulk operation done by the issuing thread. */
struct elem {
	int bytes;	  /* 2, 4, 8, or 16 (a copy) */
	const char *lds;  /* its load: LDS.U16, .32, .64, .128 */
	const char *atom; /* "ATOMG.ADD.U32", ..; "STS.128": a copy; NULL: inc/dec */
	bool inc;
};

/*
 * A register size, and the addresses, must be multiples of 16 (an
 * immediate size was checked at compile time): else TRAP (PTX leaves it
 * undefined; the copy engine raises ASYNC_COPY for its own copies).
 * Lanes whose guard is false do not get here.
 */
static void check16(struct lower *L, const struct ptx_operand *size, int src, int dst)
{
	int t = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0), ok = pl_new_label(L);
	struct ptx_vinsn *v;

	v = pl_emit(L, "LOP.OR");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, src, 0);
	pl_o_use(v, dst, 0);
	if (size->kind != PTX_O_IMM) {
		v = pl_emit(L, "LOP.OR");
		pl_o_def(v, t, 0, false);
		pl_o_use(v, t, 0);
		pl_o_use(v, size->reg, 0);
	}
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, t, 0, false);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0xf");
	v = pl_emit(L, "ISETP.NE.U32");
	pl_o_pdef(v, p);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x0");
	pl_bra_label(L, ok, p, true);
	v = pl_emit(L, "TRAP");
	v->exit = true;
	pl_put_label(L, ok);
}

/* @p = @i CMP.U32 the size; @p BRA @label */
static void loop_test(struct lower *L, const char *cmp, int i, const struct ptx_operand *size,
		      int p, int label)
{
	struct ptx_vinsn *v = pl_emit(L, "ISETP.%s.U32", cmp);

	pl_o_pdef(v, p);
	pl_o_use(v, i, 0);
	pl_use_src_or_imm(L, v, size, 0);
	pl_bra_label(L, label, p, false);
}

/*
 * The @size bytes at shared @src, element @e at a time, into @dst (a
 * global pair when @global, else a .shared::cluster address) by each lane
 * whose guard holds: LDS, then the atomic (inc/dec: atom's CAS loop) or
 * the store.  With an mbarrier @mb (>= 0), then MBAR.COMPLETE_TX.CLUSTER
 * of the size on it, under the instruction's guard: the release of the
 * writes before it, as for st.async.
 */
static void elementwise(struct lower *L, const struct elem *e, int src, int dst, bool global,
			const struct ptx_operand *size, int mb)
{
	const struct ptx_insn *in = L->in;
	struct ptx_insn un = *in;
	int i = pl_new_vreg(L, 1), x = pl_new_vreg(L, e->bytes > 4 ? e->bytes / 4 : 1);
	int da = pl_new_vreg(L, global ? 2 : 1), ip = global ? pl_new_vreg(L, 2) : -1;
	int sa = pl_new_vreg(L, 1), p = pl_new_vreg(L, 0), loop = pl_new_label(L);
	int done = pl_new_label(L);
	struct ptx_vinsn *v;

	if (in->guard >= 0)
		pl_bra_label(L, done, in->guard, !in->guard_not);
	un.guard = -1; /* inside: the lanes whose guard holds */
	L->in = &un;
	check16(L, size, src, dst);
	pl_mov_reg(L, i, 0, false, -1, 0);
	if (global)
		pl_mov_reg(L, ip, 1, false, -1, 0);
	loop_test(L, "GE", i, size, p, done);
	pl_put_label(L, loop);
	v = pl_emit(L, "IADD");
	pl_o_def(v, sa, 0, false);
	pl_o_use(v, src, 0);
	pl_o_use(v, i, 0);
	v = pl_emit(L, "LDS.%s", e->lds);
	pl_o_def(v, x, 0, false);
	pl_o_mem(v, sa, "0");
	if (global) {
		pl_mov_reg(L, ip, 0, true, i, 0);
		pl_add64(L, da, dst, ip, 0);
	} else {
		v = pl_emit(L, "IADD");
		pl_o_def(v, da, 0, false);
		pl_o_use(v, dst, 0);
		pl_o_use(v, i, 0);
	}
	if (!e->atom) {
		pl_atom_incdec(L, e->inc, !global, da, x);
	} else if (!strncmp(e->atom, "STS", 3)) {
		v = pl_emit(L, "%s", e->atom);
		pl_o_mem(v, da, "0");
		pl_o_use(v, x, 0);
	} else {
		v = pl_emit(L, "%s", e->atom);
		pl_o_text(v, "RZ");
		pl_o_mem(v, da, "0");
		pl_o_use(v, x, 0);
	}
	v = pl_emit(L, "IADD");
	pl_o_def(v, i, 0, false);
	pl_o_use(v, i, 0);
	pl_o_text(v, "0x%x", (unsigned int)e->bytes);
	loop_test(L, "LT", i, size, p, loop);
	pl_put_label(L, done);
	L->in = in;
	if (mb < 0)
		return;
	v = pl_emit(L, "MBAR.COMPLETE_TX.CLUSTER");
	pl_use_addr(v, mb);
	pl_use_src_or_imm(L, v, size, 0);
}

/* Is @t (".u32") one of the dot-separated @list (".u32.s32")? */
static bool in_list(const char *list, const char *t)
{
	size_t n = strlen(t);

	for (const char *s = strstr(list, t); s; s = strstr(s + 1, t))
		if (s[n] == '.' || s[n] == '\0')
			return true;
	return false;
}

/*
 * cp.reduce.async.bulk.global.shared::cta.bulk_group[.L2::cache_hint].op.type
 *	[dst], [src], size[, policy]
 * cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
 *	.op.type [dst], [src], size, [mbar]
 * (PTX ISA, cp.reduce.async.bulk): each element of the size bytes at src
 * in shared memory reduced into the one at dst, in global memory or in
 * the shared memory of a CTA of the cluster, element by element
 * atomically; the second form then completes size bytes of transaction
 * count on the mbarrier at mbar, in dst's CTA.  vGPU's copy engine does
 * not reduce; an asynchronous operation may complete at once, so the
 * issuing thread does it in a loop (elementwise): LDS of the element,
 * then ATOMG or ATOMS of the operation (inc and dec: atom's CAS loop),
 * then for the second form MBAR.COMPLETE_TX.CLUSTER of the size.  The
 * first form, complete before the instruction's end, is in no bulk
 * group: a later commit_group / wait_group has nothing of it to wait
 * for.  .add.f32 flushes subnormals, as atom.global.add.f32 does on an
 * H200; the halves' .add is .noftz, their .min/.max those of the vector
 * atomics (ATOMG.MIN.F16: a NaN loses, -0 < +0).  The operations and
 * types are those ptxas takes for sm_90a: fewer to shared memory (no .f32
 * .f64 .f16 .bf16 .s64, no 64-bit .min .max .and .or .xor).
 */
static void bulk_reduce(struct lower *L)
{
	static const struct {
		const char *op, *global, *cluster, *vgpu;
	} ops[] = {
		{ ".add", ".u32.s32.u64.f32.f64.f16.bf16", ".u32.s32.u64", "ADD" },
		{ ".min", ".u32.s32.u64.s64.f16.bf16", ".u32.s32", "MIN" },
		{ ".max", ".u32.s32.u64.s64.f16.bf16", ".u32.s32", "MAX" },
		{ ".and", ".b32.b64", ".b32", "AND" },
		{ ".or", ".b32.b64", ".b32", "OR" },
		{ ".xor", ".b32.b64", ".b32", "XOR" },
		{ ".inc", ".u32", ".u32", NULL },
		{ ".dec", ".u32", ".u32", NULL },
	};
	static const struct {
		const char *ptx, *atype, *lds;
		int bytes;
	} types[] = {
		{ ".u32", "U32", "32", 4 }, { ".s32", "S32", "32", 4 }, { ".b32", "U32", "32", 4 },
		{ ".u64", "U64", "64", 8 }, { ".s64", "S64", "64", 8 }, { ".b64", "U64", "64", 8 },
		{ ".f32", "F32.FTZ", "32", 4 }, { ".f64", "F64", "64", 8 },
		{ ".f16", "F16", "U16", 2 }, { ".bf16", "BF16", "U16", 2 },
	};
	const struct ptx_insn *in = L->in;
	bool cluster = pl_has_mod(in, ".shared::cluster");
	int o = -1, t = -1, src, dst, mb = -1;
	char b[256], atom[40];

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (pl_has_mod(in, ops[k].op))
			o = (int)k;
	for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++)
		if (pl_has_mod(in, types[k].ptx))
			t = (int)k;
	if (cluster ? !pl_has_mod(in, ".shared::cta") ||
			      !pl_has_mod(in, ".mbarrier::complete_tx::bytes") :
		      !pl_has_mod(in, ".global") || !pl_has_mod(in, ".shared::cta") ||
			      !pl_has_mod(in, ".bulk_group"))
		return (void)pl_unsupported(L, "cp.reduce.async.bulk other than "
					    ".global.shared::cta.bulk_group and .shared::cluster"
					    ".shared::cta.mbarrier::complete_tx::bytes");
	if (o < 0 || t < 0)
		return (void)pl_lerr(L, "'%s' needs an operation and a type",
				     pl_spelled(in, b, sizeof(b)));
	/* .f16 and .bf16 need .noftz with .add (ptxas refuses them without) */
	if ((t >= 8 && o == 0 && !pl_has_mod(in, ".noftz")) ||
	    (pl_has_mod(in, ".noftz") && (t < 8 || o != 0)))
		return (void)pl_lerr(L, "'%s': .noftz goes with .add.f16 and .add.bf16 alone",
				     pl_spelled(in, b, sizeof(b)));
	if (!in_list(cluster ? ops[o].cluster : ops[o].global, types[t].ptx))
		return (void)pl_lerr(L, "'%s': PTX has no %s of %s here",
				     pl_spelled(in, b, sizeof(b)), ops[o].op, types[t].ptx);
	if (cluster && pl_has_mod(in, ".L2::cache_hint"))
		return (void)pl_lerr(L, "'%s' takes no cache hint", pl_spelled(in, b, sizeof(b)));
	if (pl_hint_nops(L) != (cluster ? 4 : 3))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!bulk_size(L, &in->ops[2]))
		return;
	dst = cluster ? pl_shared_addr_reg(L, &in->ops[0]) : pl_global_pair(L, &in->ops[0]);
	src = pl_shared_addr_reg(L, &in->ops[1]);
	if (cluster)
		mb = pl_shared_addr_reg(L, &in->ops[3]);
	if (dst < -1 || src < -1 || mb < -1)
		return;
	snprintf(atom, sizeof(atom), "%s.%s.%s", cluster ? "ATOMS" : "ATOMG", ops[o].vgpu,
		 types[t].atype);
	elementwise(L,
		    &(struct elem){ .bytes = types[t].bytes, .lds = types[t].lds,
				    .atom = ops[o].vgpu ? atom : NULL, .inc = o == 6 },
		    src, dst, !cluster, &in->ops[2], mb);
}

/*
 * cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
 *	[dst], [src], size, [mbar]	(also a .shared::cta destination)
 * cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size
 *	on CP.ASYNC.BULK and CP.ASYNC.BULK.GLOBAL ({.L2::cache_hint}: the
 *	policy is dropped);
 * cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
 *	[dst], [src], size, [mbar]
 *	(shared memory to a cluster CTA's, which the copy engine does not
 *	do): 16 bytes at a time, LDS.128 then STS.128 on the cluster
 *	address, then MBAR.COMPLETE_TX.CLUSTER of the size (elementwise).
 */
static void bulk_copy(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool to_global = in->nmods > 2 && !strcmp(in->mods[2], ".global");
	bool from_shared = !to_global && pl_has_mod(in, ".shared::cta") &&
			   pl_has_mod(in, ".shared::cluster");
	int nops = pl_hint_nops(L), dst, src, mb = -1;
	struct ptx_vinsn *v;

	if (nops < 0)
		return;
	if (nops != (to_global ? 3 : 4))
		return (void)pl_lerr(L, "wrong number of operands");
	if (!bulk_size(L, &in->ops[2]))
		return;
	if (from_shared && pl_has_mod(in, ".L2::cache_hint"))
		return (void)pl_lerr(L, "a copy from shared memory takes no cache hint");
	dst = to_global ? pl_global_pair(L, &in->ops[0]) : pl_shared_addr_reg(L, &in->ops[0]);
	src = from_shared || to_global ? pl_shared_addr_reg(L, &in->ops[1]) :
					 pl_global_pair(L, &in->ops[1]);
	if (!to_global)
		mb = pl_shared_addr_reg(L, &in->ops[3]);
	if (dst < -1 || src < -1 || mb < -1)
		return;
	if (from_shared)
		return elementwise(L, &(struct elem){ .bytes = 16, .lds = "128", .atom = "STS.128" },
				   src, dst, false, &in->ops[2], mb);
	v = pl_emit(L, to_global ? "CP.ASYNC.BULK.GLOBAL" : "CP.ASYNC.BULK");
	pl_use_addr(v, dst);
	pl_use_addr(v, src);
	pl_use_src_or_imm(L, v, &in->ops[2], 0);
	if (!to_global)
		pl_use_addr(v, mb);
}

/*
 * cp.async.bulk.prefetch.L2.global{.L2::cache_hint} [a], size{, policy}:
 * there is no cache to fill: the operands are checked, nothing is done
 * (as prefetch does; the tensor prefetches: tensor_prefetch).
 */
static void bulk_prefetch(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	int nops = pl_hint_nops(L);

	if (!pl_has_mod(in, ".L2") || !pl_has_mod(in, ".global"))
		return (void)pl_unsupported(L, NULL);
	if (nops < 0)
		return;
	if (nops != 2)
		return (void)pl_lerr(L, "wrong number of operands");
	if (in->ops[0].kind != PTX_O_MEM ||
	    (in->ops[0].reg >= 0 ? pl_preg(L, in->ops[0].reg)->cls != PTX_R64 : !in->ops[0].sym[0]))
		return (void)pl_lerr(L, "expected a global address [%%rd+imm] or [var]");
	if (in->ops[1].kind != PTX_O_IMM && !pl_is_reg(L, &in->ops[1], PTX_R32))
		return (void)pl_lerr(L, "the size must be a 32-bit register or an integer");
}

/* cp.async.bulk* and cp.reduce.async.bulk* but commit_group / wait_group */
void pl_bulk(struct lower *L)
{
	const struct ptx_insn *in = L->in;

	if (pl_has_mod(in, ".reduce") && pl_has_mod(in, ".tensor"))
		return tensor_reduce(L);
	if (pl_has_mod(in, ".tensor")) /* and the tensor prefetches */
		return tensor_copy(L);
	if (pl_has_mod(in, ".prefetch"))
		return bulk_prefetch(L);
	if (pl_has_mod(in, ".reduce"))
		return bulk_reduce(L);
	if (pl_has_mod(in, ".multicast::cluster"))
		return bulk_multicast(L);
	bulk_copy(L);
}
