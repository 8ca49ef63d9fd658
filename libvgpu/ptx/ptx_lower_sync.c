// SPDX-License-Identifier: MIT
/*
 * PTX lowering: control flow, named barriers, fences, every mbarrier
 * instruction, asynchronous copies (the bulk ones are in
 * ptx_lower_bulk.c), clusters (the warp-wide functions are in
 * ptx_lower_warp.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"

/* ---- the lowering's own labels (loops inside one PTX instruction) ---- */

int pl_new_label(struct lower *L)
{
	return L->ilabels++;
}

void pl_put_label(struct lower *L, int n)
{
	struct ptx_vinsn *v = pl_emit(L, "%s", "");

	v->guard = -1;
	snprintf(v->label, sizeof(v->label), "K%dI%d", L->kernel, n);
	pl_finish(L);
}

void pl_bra_label(struct lower *L, int n, int g, bool gnot)
{
	struct ptx_vinsn *v = pl_emit(L, "BRA");

	v->branch = true;
	v->guard = g;
	v->guard_not = gnot;
	pl_o_text(v, "K%dI%d", L->kernel, n);
}

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

/*
 * brx.idx[.uni] index, table (PTX ISA 9.7.13.x): a branch to the
 * index-th label of table, a ".branchtargets" list after table's label
 * in this function (its "branchtargets" instructions run nothing).  One
 * compare and guarded BRA per target, so lanes may diverge; an index
 * past the table (undefined in PTX) traps.
 */
void pl_brx(struct lower *L)
{
	const struct ptx_insn *in = L->in, *ins = L->f->insns;
	const struct ptx_operand *ix;
	int at = -1, n = 0, skip = -1, x;
	struct ptx_vinsn *v;

	if (!strcmp(in->op, "branchtargets"))
		return;
	if (!pl_has_mod(in, ".idx") || in->nmods != 1 + pl_has_mod(in, ".uni"))
		return (void)pl_unsupported(L, NULL);
	if (!pl_want_ops(L, 2))
		return;
	ix = &in->ops[0];
	if (in->ops[1].kind != PTX_O_SYM)
		return (void)pl_lerr(L, "brx.idx needs a .branchtargets label");
	for (int i = 0; i < L->f->ninsns; i++)
		if (ins[i].label[0] && !strcmp(ins[i].label, in->ops[1].sym))
			at = i;
	if (at < 0 || at + 1 >= L->f->ninsns || strcmp(ins[at + 1].op, "branchtargets"))
		return (void)pl_lerr(L, "'%s' is not a .branchtargets list of this function",
				     in->ops[1].sym);
	if (ix->kind != PTX_O_IMM && !pl_is_reg(L, ix, PTX_R32))
		return (void)pl_lerr(L, "brx.idx's index must be a 32-bit register or an integer");
	x = pl_new_vreg(L, 1);
	if (in->guard >= 0) {
		skip = pl_new_label(L);
		pl_bra_label(L, skip, in->guard, !in->guard_not);
	}
	v = pl_emit(L, "MOV");
	v->guard = -1;
	pl_o_def(v, x, 0, false);
	pl_use_src_or_imm(L, v, ix, 0);
	for (int i = at + 1; i < L->f->ninsns && !strcmp(ins[i].op, "branchtargets"); i++)
		for (int k = 0; k < ins[i].nops; k++, n++) {
			int lab = pl_label_index(L->f, ins[i].ops[k].sym), p = pl_new_vreg(L, 0);

			if (ins[i].ops[k].kind != PTX_O_SYM || lab < 0)
				return (void)pl_lerr(L, "unknown branch target '%s' in '%s'",
						     ins[i].ops[k].sym, in->ops[1].sym);
			v = pl_emit(L, "ISETP.EQ.U32");
			v->guard = -1;
			pl_o_pdef(v, p);
			pl_o_use(v, x, 0);
			pl_o_text(v, "0x%x", n);
			v = pl_emit(L, "BRA");
			v->branch = true;
			v->guard = p;
			v->guard_not = false;
			pl_o_text(v, "K%dL%d", L->kernel, lab);
		}
	v = pl_emit(L, "TRAP"); /* an index past the table */
	v->guard = -1;
	v->exit = true;
	if (skip >= 0)
		pl_put_label(L, skip);
}

void pl_exit(struct lower *L)
{
	struct ptx_vinsn *v = pl_emit(L, "EXIT");

	v->exit = true;
}

/* trap: the exception TRAP; nothing runs after it */
void pl_trap(struct lower *L)
{
	struct ptx_vinsn *v = pl_emit(L, "TRAP");

	v->exit = true;
}

/* bar.sync / barrier.sync / bar.arrive / bar.red */
void pl_bar(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool arrive = pl_has_mod(in, ".arrive"), red = pl_has_mod(in, ".red");
	struct ptx_vinsn *v;
	int first = 0, n = in->nops;

	if (pl_has_mod(in, ".warp")) { /* bar.warp.sync: lanes always reconverge here */
		if (n >= 1)
			pl_warpsync(L, &in->ops[0]);
		return;
	}
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
		if (n == 4 && in->ops[1].kind != PTX_O_IMM && in->ops[2].kind != PTX_O_IMM) {
			/* id and count both in registers: seed 002's
			 * 2-operand form, id in Rb[3:0], count in Rb[15:4] */
			int t = pl_new_vreg(L, 1), u = pl_new_vreg(L, 1);

			v = pl_emit(L, "LOP.AND");
			pl_o_def(v, t, 0, false);
			pl_use_src(L, v, &in->ops[1], 0);
			pl_o_text(v, "0xf");
			v = pl_emit(L, "SHL");
			pl_o_def(v, u, 0, false);
			pl_use_src(L, v, &in->ops[2], 0);
			pl_o_text(v, "0x4");
			v = pl_emit(L, "LOP.AND");
			pl_o_def(v, u, 0, false);
			pl_o_use(v, u, 0);
			pl_o_text(v, "0xfff0");
			v = pl_emit(L, "LOP.OR");
			pl_o_def(v, t, 0, false);
			pl_o_use(v, t, 0);
			pl_o_use(v, u, 0);
			v = pl_emit(L, "BAR.RED.%s", rop);
			pl_o_use(v, t, 0);
		} else {
			v = pl_emit(L, "BAR.RED.%s", rop);
			pl_use_src_or_imm(L, v, &in->ops[1], 0);
			if (n == 4)
				pl_use_src_or_imm(L, v, &in->ops[2], 0);
		}
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
int pl_shared_addr_reg(struct lower *L, const struct ptx_operand *o)
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

void pl_use_addr(struct ptx_vinsn *v, int r)
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
			a = pl_shared_addr_reg(L, &in->ops[0]);
			if (a < -1)
				return;
			v = pl_emit(L, "MBAR.%s%s", what,
				 !strcmp(what, "INIT") || !strcmp(what, "INVAL") ? "" : ss);
			pl_use_addr(v, a);
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
		a = pl_shared_addr_reg(L, &in->ops[1]);
		if (a < -1)
			return;
		v = pl_emit(L, "MBAR.%s%s%s%s", drop ? "ARRIVE_DROP" : "ARRIVE", kind,
			 pl_has_mod(in, ".relaxed") ? ".RELAXED" : "",
			 pl_has_mod(in, ".cluster") ? ".CLUSTER" : "");
		if (d < 0)
			pl_o_text(v, "_");
		else
			pl_o_def(v, d, 0, false);
		pl_use_addr(v, a);
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
		a = pl_shared_addr_reg(L, &in->ops[1]);
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
		pl_use_addr(v, a);
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

/*
 * cp.async.ca|cg.shared.global [dst], [src], cp-size, src-size with
 * src-size (an immediate or a register) other than cp-size (PTX ISA
 * 9.7.9.25.3.1): the first src-size bytes come from src, the others are
 * zeros, and src's bytes past src-size are not read.  vGPU's CP.ASYNC
 * copies whole 4, 8 or 16 bytes, so this copy is done at once, byte by
 * byte (a load only for the bytes below src-size): a copy complete
 * before the wait that PTX requires.  The ignore-src predicate form
 * (cp-size, p) is src-size = p ? 0 : cp-size, computed into @nreg (its
 * vreg; -1: the size is operand 3).
 */
static void cp_async_zfill(struct lower *L, int nreg)
{
	const struct ptx_insn *in = L->in;
	const struct ptx_operand *n = &in->ops[3];
	bool nimm = nreg < 0 && n->kind == PTX_O_IMM;
	int dst, src, size;
	struct ptx_vinsn *v;

	if (in->ops[2].kind != PTX_O_IMM ||
	    (in->ops[2].imm != 4 && in->ops[2].imm != 8 && in->ops[2].imm != 16))
		return (void)pl_lerr(L, "cp.async's copy size must be 4, 8 or 16");
	size = (int)in->ops[2].imm;
	if (nimm && (n->imm < 0 || n->imm > size))
		return (void)pl_lerr(L, "cp.async's source size %lld is past the copy size %d",
				     (long long)n->imm, size);
	if (nreg < 0 && !nimm && !pl_is_reg(L, n, PTX_R32))
		return (void)pl_unsupported(L, "cp.async with a source size other than an "
					    "integer or a 32-bit register");
	if (nreg >= 0) { /* ignore-src: nreg = p ? 0 : size */
		v = pl_emit(L, "SEL");
		pl_o_def(v, nreg, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x%x", size);
		pl_o_puse(v, n->reg, n->neg);
	} else if (!nimm) {
		nreg = n->reg;
	}
	dst = pl_shared_addr_reg(L, &in->ops[0]);
	if (dst < -1 || (src = pl_global_pair(L, &in->ops[1])) < -1)
		return;
	for (int i = 0; i < size; i++) {
		int x = pl_new_vreg(L, 1), p = -1;

		if (nimm && i >= n->imm) {
			x = -1;
		} else {
			if (!nimm) {
				p = pl_new_vreg(L, 0);
				v = pl_emit(L, "ISETP.GT.U32");
				pl_o_pdef(v, p);
				pl_o_use(v, nreg, 0);
				pl_o_text(v, "0x%x", i);
				pl_mov_reg(L, x, 0, false, -1, 0);
			}
			v = pl_emit(L, "LDG.U8");
			if (p >= 0) {
				v->guard = p;
				v->guard_not = false;
			}
			pl_o_def(v, x, 0, false);
			pl_o_mem(v, src, "%d", i);
		}
		v = pl_emit(L, "STS.U8");
		pl_o_mem(v, dst, "%d", i);
		if (x < 0)
			pl_o_text(v, "RZ");
		else
			pl_o_use(v, x, 0);
	}
}

void pl_cp(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptx_vinsn *v;

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
	if (pl_has_mod(in, ".bulk"))
		return pl_bulk(L);
	if (pl_has_mod(in, ".mbarrier")) { /* cp.async.mbarrier.arrive{.noinc} */
		int a;

		if (!pl_want_ops(L, 1))
			return;
		a = pl_shared_addr_reg(L, &in->ops[0]);
		if (a < -1)
			return;
		v = pl_emit(L, "CP.ASYNC.MBARRIER.ARRIVE%s", pl_has_mod(in, ".noinc") ? ".NOINC" : "");
		pl_use_addr(v, a);
		return;
	}
	if (pl_has_mod(in, ".commit_group"))
		return; /* every cp.async is waited for by WAIT_ALL */
	if (pl_has_mod(in, ".wait_group") || pl_has_mod(in, ".wait_all")) {
		pl_emit(L, "CP.ASYNC.WAIT_ALL");
		return;
	}
	{
		/* .L2::cache_hint: its policy operand, ignored */
		int dst, src, nops = pl_hint_nops(L);

		if (nops < 0)
			return;
		/* a source size equal to the copy's (libcu++'s memcpy_async and
		 * cooperative groups write "4, 4"): the plain copy; another one
		 * (an immediate or a register) zero-fills the rest: copied here
		 * byte by byte, at once; so does an ignore-src predicate */
		if (nops == 4 && pl_is_reg(L, &in->ops[3], PTX_PRED))
			return cp_async_zfill(L, pl_new_vreg(L, 1));
		if (nops == 4 && (in->ops[2].kind != PTX_O_IMM || in->ops[3].kind != PTX_O_IMM ||
				  in->ops[2].imm != in->ops[3].imm))
			return cp_async_zfill(L, -1);
		if (nops != 3 && nops != 4)
			return (void)pl_unsupported(L, "cp.async with these operands");
		/* the addresses of a load's and a store's forms, each one
		 * register (an offset or a variable's address added first) */
		dst = pl_shared_addr_reg(L, &in->ops[0]);
		if (dst < -1 || (src = pl_global_pair(L, &in->ops[1])) < -1)
			return;
		v = pl_emit(L, "CP.ASYNC%s", pl_has_mod(in, ".cg") ? ".CG" : "");
		pl_use_addr(v, dst);
		pl_use_addr(v, src);
		pl_use_src_or_imm(L, v, &in->ops[2], 0);
	}
}

/*
 * st.async[.sem.scope].shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type
 *	[a], b, [mbar]
 * red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.op.type
 *	[a], b, [mbar]
 * (PTX ISA, st.async and red.async): a store or a reduction into a
 * cluster CTA's shared memory whose completion is a complete-tx of its
 * byte count on the mbarrier of that CTA.  An asynchronous operation may
 * complete at once: the plain store (STS) or atomic (ATOMS) on the
 * cluster address, then MBAR.COMPLETE_TX.CLUSTER of the bytes.  PTX
 * makes the store weak (the reduction .relaxed.cluster) and the
 * complete-tx a .release at cluster scope: every effect of a
 * warp-instruction of the core is visible before its next one starts, so
 * the store or atomic put before the complete-tx is what the consumer's
 * wait (an acquire) sees once the phase completes.
 */
void pl_async_store(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool red = !strcmp(in->op, "red");
	struct ptx_insn plain = *in;
	struct ptype t;
	int bytes, mb;
	struct ptx_vinsn *v;

	if (!pl_has_mod(in, ".shared::cluster") ||
	    !pl_has_mod(in, ".mbarrier::complete_tx::bytes"))
		return (void)pl_unsupported(L, red ? NULL : "st.async other than "
					    ".shared::cluster.mbarrier::complete_tx::bytes");
	if (in->nops != 3)
		return (void)pl_lerr(L, "'%s.async' takes [address], a value and [mbarrier]",
				     in->op);
	if (red && (!pl_has_mod(in, ".relaxed") || !pl_has_mod(in, ".cluster")))
		return (void)pl_lerr(L, "red.async is .relaxed.cluster");
	/* the same instruction without .async, its completion and its
	 * semantics, on its first two operands */
	plain.nmods = 0;
	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];

		if (!strcmp(m, ".async") || !strcmp(m, ".mbarrier::complete_tx::bytes") ||
		    !strcmp(m, ".relaxed") || !strcmp(m, ".release") || !strcmp(m, ".weak") ||
		    !strcmp(m, ".cluster"))
			continue;
		memcpy(plain.mods[plain.nmods++], m, sizeof(plain.mods[0]));
	}
	plain.nops = 2;
	t = pl_type_of(&plain, 0);
	bytes = t.bits / 8 * (pl_has_mod(in, ".v4") ? 4 : pl_has_mod(in, ".v2") ? 2 : 1);
	if (!t.bits || t.bits < 32)
		return (void)pl_lerr(L, "'%s.async' takes a 32- or 64-bit type", in->op);
	mb = pl_shared_addr_reg(L, &in->ops[2]);
	if (mb < -1)
		return;
	L->in = &plain;
	if (red)
		pl_atom(L);
	else
		pl_ldst(L);
	L->in = in;
	if (L->failed)
		return;
	v = pl_emit(L, "MBAR.COMPLETE_TX.CLUSTER");
	pl_use_addr(v, mb);
	pl_o_text(v, "0x%x", (uint32_t)bytes);
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
	if (t.bits == 64 && !pl_has_mod(in, ".shared::cluster")) {
		/* generic (mapa.u64 of a generic address, as cooperative
		 * groups' map_shared_rank writes it): a generic address of
		 * the other CTA's shared memory, which generic accesses take
		 * to LDS/STS/ATOMS with the cluster address */
		v = pl_emit(L, "MOV");
		pl_o_def(v, d, 1, false);
		pl_o_text(v, "0x%x", GENERIC_SHARED_HI);
	} else if (t.bits == 64) {
		pl_mov_reg(L, d, 1, false, -1, 0);
	}
}

/*
 * getctarank[.shared::cluster].u32|u64 d, a (PTX ISA 9.7.9.x): the rank
 * of the CTA whose shared memory a names.  A .shared::cluster address of
 * vGPU (bit 31 set) carries the rank in bits 30:24; a CTA's own window
 * (bit 31 clear, what a .shared::cta address is) is this CTA's
 * %cluster_ctarank.  A generic address (no state space) is a shared one
 * in its low word (mapa's generic form keeps the cluster address there).
 */
void pl_getctarank(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct ptype t = pl_type_of(in, 0);
	int d, r, own, p;
	struct ptx_vinsn *v;

	if (!pl_want_ops(L, 2))
		return;
	if (t.bits != 32 && t.bits != 64)
		return (void)pl_lerr(L, "getctarank takes .u32 or .u64");
	d = pl_dst_reg(L, &in->ops[0], PTX_R32);
	if (d < 0)
		return;
	r = pl_new_vreg(L, 1);
	own = pl_new_vreg(L, 1);
	p = pl_new_vreg(L, 0);
	v = pl_emit(L, "SHR.U32");
	pl_o_def(v, r, 0, false);
	pl_use_src(L, v, &in->ops[1], 0);
	pl_o_text(v, "0x18");
	v = pl_emit(L, "ISETP.GT.U32"); /* bit 31 set */
	pl_o_pdef(v, p);
	pl_o_use(v, r, 0);
	pl_o_text(v, "0x7f");
	v = pl_emit(L, "LOP.AND");
	pl_o_def(v, r, 0, false);
	pl_o_use(v, r, 0);
	pl_o_text(v, "0x7f");
	v = pl_emit(L, "S2R");
	pl_o_def(v, own, 0, false);
	pl_o_text(v, "SR_CLUSTER_CTARANK");
	v = pl_emit(L, "SEL");
	pl_o_def(v, d, 0, false);
	pl_o_use(v, r, 0);
	pl_o_use(v, own, 0);
	pl_o_puse(v, p, false);
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

/* The meet of two budgets: -2 not reached, -1 unknown (paths differ). */
static int budget_meet(int x, int y)
{
	return x == -2 ? y : y == -2 ? x : x == y ? x : -1;
}

/* A valid setmaxnreg's count, or -1. */
static int setmaxnreg_count(const struct ptx_insn *in)
{
	if (strcmp(in->op, "setmaxnreg") || in->nops != 1 || in->ops[0].kind != PTX_O_IMM ||
	    in->ops[0].imm < 24 || in->ops[0].imm > 256 || in->ops[0].imm % 8)
		return -1;
	return (int)in->ops[0].imm;
}

/*
 * The per-thread register budget the warp owns when it reaches
 * instruction @at: .maxnreg at the entry, then each setmaxnreg's count,
 * along every path of the function (forward dataflow over its
 * instructions); -1 when unknown (no .maxnreg, or paths that differ).
 */
static int budget_at(struct lower *L, int at)
{
	const struct ptx_func *f = L->f;
	const struct ptx_func *e = &L->m->funcs[L->kernel];
	int n = f->ninsns, *st = malloc(((size_t)n + 1) * sizeof(int)), ret;
	bool changed = true;

	if (!st)
		return -1;
	for (int i = 0; i <= n; i++)
		st[i] = -2;
	st[0] = e->attrs.maxnreg ? (int)e->attrs.maxnreg : -1;
	while (changed) {
		changed = false;
		for (int i = 0; i < n; i++) {
			const struct ptx_insn *in = &f->insns[i];
			int out = st[i], k, succ[2] = { i + 1, -1 };

			if (out == -2)
				continue;
			if (setmaxnreg_count(in) >= 0)
				out = in->guard >= 0 ? budget_meet(out, setmaxnreg_count(in)) :
						       setmaxnreg_count(in);
			if (!strcmp(in->op, "bra") && in->nops == 1 && in->ops[0].kind == PTX_O_SYM) {
				for (k = 0; k < n; k++)
					if (f->insns[k].label[0] && !strcmp(f->insns[k].label, in->ops[0].sym))
						break;
				succ[1] = k < n ? k : -1;
				if (in->guard < 0)
					succ[0] = -1;
			} else if ((!strcmp(in->op, "ret") || !strcmp(in->op, "exit")) &&
				   in->guard < 0) {
				succ[0] = -1;
			}
			for (int s = 0; s < 2; s++) {
				int m;

				if (succ[s] < 0)
					continue;
				m = budget_meet(st[succ[s]], out);
				if (m != st[succ[s]]) {
					st[succ[s]] = m;
					changed = true;
				}
			}
		}
	}
	ret = st[at] == -2 ? -1 : st[at];
	free(st);
	return ret;
}

/*
 * setmaxnreg.inc|dec.sync.aligned.u32 N (PTX ISA 9.7.19.x): N a constant,
 * a multiple of 8 in 24..256 (else a located error); the warp's
 * per-thread register budget becomes N.  PTX leaves .inc to fewer or .dec
 * to more registers than the warp owns undefined: where the budget is
 * known here (.maxnreg, then the setmaxnreg on every path before), that
 * is a located error too.  vGPU gives every warp the registers the
 * program names for its whole life, so the budget never blocks and the
 * instruction emits nothing.
 */
void pl_setmaxnreg(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	bool inc = pl_has_mod(in, ".inc"), dec = pl_has_mod(in, ".dec");
	int have, n, at = (int)(in - L->f->insns);

	if (inc == dec)
		return (void)pl_lerr(L, "setmaxnreg needs .inc or .dec");
	if (!pl_has_mod(in, ".sync") || !pl_has_mod(in, ".aligned") || !pl_has_mod(in, ".u32"))
		return (void)pl_lerr(L, "setmaxnreg must be .sync.aligned.u32");
	if (!pl_want_ops(L, 1))
		return;
	if (in->ops[0].kind != PTX_O_IMM)
		return (void)pl_lerr(L, "setmaxnreg's register count must be an integer constant");
	n = setmaxnreg_count(in);
	if (n < 0)
		return (void)pl_lerr(L, "setmaxnreg register count %lld: a multiple of 8 in 24..256",
				     (long long)in->ops[0].imm);
	have = budget_at(L, at);
	if (have >= 0 && inc && n < have)
		return (void)pl_lerr(L, "setmaxnreg.inc to %d registers, fewer than the %d the warp "
				     "owns here (undefined in PTX)", n, have);
	if (have >= 0 && dec && n > have)
		return (void)pl_lerr(L, "setmaxnreg.dec to %d registers, more than the %d the warp "
				     "owns here (undefined in PTX)", n, have);
}

/*
 * griddepcontrol.wait / griddepcontrol.launch_dependents (PTX ISA
 * 9.7.13.12, programmatic dependent launch): vGPU has no programmatic
 * dependent launch, so a grid starts only after the grids before it in
 * its stream have completed and flushed their memory: .wait has nothing
 * to wait for, and .launch_dependents, a hint that dependents may start
 * early, changes nothing.  Both emit nothing.
 */
void pl_griddepcontrol(struct lower *L)
{
	const struct ptx_insn *in = L->in;

	if (in->nmods != 1 || (!pl_has_mod(in, ".wait") &&
			       !pl_has_mod(in, ".launch_dependents")))
		return (void)pl_unsupported(L, NULL);
	pl_want_ops(L, 0);
}
