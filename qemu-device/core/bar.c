/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Named-barrier unit (BCU): BAR.SYNC, BAR.ARV, BAR.RED, B2R, B2R.RESULT, R2B.
 * Semantics exactly as seed 002 states them:
 *
 *  - 16 barriers per CTA.  Every warp that executes BAR.SYNC/ARV/RED adds 32
 *    to the barrier's count, however many of its threads are active.
 *  - cnt > 0 completes when count == cnt.  cnt == 0 completes when
 *    count + 32 * (warps that have fully exited) == the CTA's thread count
 *    rounded up to whole warps; an exiting warp can therefore complete it.
 *  - On completion the blocked warps wake and the count returns to 0.
 *  - BAR.SYNC and BAR.RED block the whole warp; BAR.ARV does not.
 *  - Arrivals of one round must agree on the count (BAR_COUNT_MISMATCH) and
 *    must not mix BAR.RED with BAR.SYNC/ARV (BAR_MODE_CONFLICT).  Register
 *    operands use their low 4 (id) and 12 (count) bits, taken from the lowest
 *    active lane; BAR.RED's 2-operand form reads id = Rb[3:0],
 *    count = Rb[15:4].
 *  - BAR.RED reduces the pp predicates of the participating threads; every
 *    participating warp receives a copy of the final state (B2R.WARP) whose
 *    ACC field B2R.RESULT reads.
 *  - Memory ordering: the simulator performs every load and store of a warp
 *    before its next instruction issues, so all accesses issued before a
 *    BAR.SYNC/BAR.RED are complete when it completes, as the seed requires.
 */
#include <stdio.h>
#include <string.h>

#include "core_priv.h"

#define BAR_ID_MASK 0xfu
#define BAR_CNT_MASK 0xfffu

uint32_t vgpu_bar_state(const struct vgpu_nbar *b)
{
	return ((uint32_t)(b->count / 32) & VGPU_BARST_ARRIVED_MASK)
		       << VGPU_BARST_ARRIVED_SHIFT |
	       ((uint32_t)(b->expected / 32) & VGPU_BARST_EXPECTED_MASK)
		       << VGPU_BARST_EXPECTED_SHIFT |
	       ((uint32_t)b->mode & VGPU_BARST_MODE_MASK) << VGPU_BARST_MODE_SHIFT |
	       ((uint32_t)b->redop & VGPU_BARST_REDOP_MASK) << VGPU_BARST_REDOP_SHIFT |
	       ((uint32_t)b->acc & VGPU_BARST_ACC_MASK) << VGPU_BARST_ACC_SHIFT;
}

void vgpu_bar_set_state(struct vgpu_nbar *b, uint32_t v)
{
	b->count = (uint16_t)(((v >> VGPU_BARST_ARRIVED_SHIFT) & VGPU_BARST_ARRIVED_MASK) * 32);
	b->expected = (uint16_t)(((v >> VGPU_BARST_EXPECTED_SHIFT) & VGPU_BARST_EXPECTED_MASK) * 32);
	b->mode = (uint8_t)((v >> VGPU_BARST_MODE_SHIFT) & VGPU_BARST_MODE_MASK);
	b->redop = (uint8_t)((v >> VGPU_BARST_REDOP_SHIFT) & VGPU_BARST_REDOP_MASK);
	b->acc = (uint16_t)((v >> VGPU_BARST_ACC_SHIFT) & VGPU_BARST_ACC_MASK);
}

void vgpu_bar_reset(struct vgpu_cta *c)
{
	vgpu_zero(c->bar, sizeof(c->bar)); /* not rep stosq */
}

static bool bar_done(const struct vgpu_cta *c, const struct vgpu_nbar *b)
{
	if (b->expected)
		return b->count == b->expected;
	return b->count + 32u * c->exited_warps == 32u * c->nwarps;
}

/*
 * Complete barrier @id: hand the reduction result to the participating
 * warps (@extra is the warp that completed it by arriving, if any), wake the
 * blocked ones and start a new round.
 */
static void bar_complete(struct vgpu_cta *c, uint32_t id, struct vgpu_warp *extra)
{
	struct vgpu_nbar *b = &c->bar[id];
	uint32_t waiters = b->waiters;
	uint32_t flow = vgpu_trace_complete(c, VGPU_TR_BAR_COMPLETE, id, 0, b->count,
					    b->expected ? b->expected :
					    (c->nwarps - c->exited_warps) * 32);

	if (b->mode == VGPU_BARMODE_RED) {
		uint32_t copy = vgpu_bar_state(b);
		uint32_t part = waiters | (extra ? 1u << extra->id : 0);

		VGPU_FOR_LANES(part, i)
			c->warps[i].red_state = copy;
	}
	b->count = 0;
	b->expected = 0;
	b->mode = VGPU_BARMODE_IDLE;
	b->redop = 0;
	b->acc = 0;
	b->waiters = 0;
	c->sm->wake_flow = flow;
	VGPU_FOR_LANES(waiters, i)
		vgpu_warp_wake(c, &c->warps[i]);
	c->sm->wake_flow = 0;
	c->lockstep = vgpu_lockstep_allowed(c); /* the warps may be in step again */
}

void vgpu_bar_warp_exited(struct vgpu_cta *c)
{
	for (uint32_t id = 0; id < VGPU_NUM_NAMED_BARRIERS; id++) {
		struct vgpu_nbar *b = &c->bar[id];

		if (b->mode != VGPU_BARMODE_IDLE && !b->expected && bar_done(c, b))
			bar_complete(c, id, NULL);
	}
}

/* Barrier id and count of a BAR/BAR.RED instruction, per its operand form. */
static void bar_operands(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			 uint32_t em, uint32_t *id, uint32_t *cnt)
{
	switch (d->stype) {
	case VGPU_ST_I:
		*id = d->barid;
		*cnt = d->cnt;
		break;
	case VGPU_ST_R:
		if (d->id == VGPU_I_BAR_RED_R) {
			uint32_t v = vgpu_uniform(w, d->rb, em);

			*id = v & BAR_ID_MASK;
			*cnt = (v >> 4) & BAR_CNT_MASK;
		} else {
			*id = vgpu_uniform(w, d->ra, em) & BAR_ID_MASK;
			*cnt = vgpu_uniform(w, d->rb, em) & BAR_CNT_MASK;
		}
		break;
	case VGPU_ST_RRI:
		*id = vgpu_uniform(w, d->rb, em) & BAR_ID_MASK;
		*cnt = d->cnt;
		break;
	default: /* VGPU_ST_RIR */
		*id = d->barid;
		*cnt = vgpu_uniform(w, d->rb, em) & BAR_CNT_MASK;
		break;
	}
}

static const char *const mode_name[] = { "idle", "BAR.SYNC/BAR.ARV", "BAR.RED",
					"reserved-mode" };
static const char *const redop_name[] = { "AND", "OR", "POPC", "?" };

static enum vgpu_xres bar_error(struct vgpu_cta *c, struct vgpu_warp *w,
				uint32_t em, uint32_t code, uint32_t id,
				uint32_t cnt, const char *msg)
{
	struct vgpu_nbar *b = &c->bar[id];

	vgpu_raise(c, w, code, em, "%s", msg);
	c->sm->exc->barid = id;
	c->sm->exc->info[0] = b->expected;
	c->sm->exc->info[1] = cnt;
	c->sm->exc->info[2] = vgpu_bar_state(b);
	return VGPU_X_EXC;
}

/*
 * One warp arrives on barrier @id.  @mode is SYNC or RED, @block says
 * whether the warp waits (BAR.SYNC, BAR.RED) or not (BAR.ARV).
 */
static enum vgpu_xres bar_arrive(struct vgpu_cta *c, struct vgpu_warp *w,
				 const struct vgpu_dinsn *d, uint32_t em,
				 uint8_t mode, bool block)
{
	const char *mn = vgpu_isa_table[d->id].mnemonic;
	uint32_t id, cnt;
	struct vgpu_nbar *b;
	char msg[VGPU_EXC_MSG_LEN];

	bar_operands(w, d, em, &id, &cnt);
	b = &c->bar[id];
	if (cnt % 32) {
		snprintf(msg, sizeof(msg),
			 "%s on barrier %u: count %u is not a multiple of 32",
			 mn, id, cnt);
		return bar_error(c, w, em, VGPU_EXC_BAR_BAD_COUNT, id, cnt, msg);
	}
	if (!block && !cnt) {
		snprintf(msg, sizeof(msg),
			 "BAR.ARV on barrier %u: count must be > 0", id);
		return bar_error(c, w, em, VGPU_EXC_BAR_BAD_COUNT, id, cnt, msg);
	}
	if (b->mode != VGPU_BARMODE_IDLE) {
		if (b->mode != mode) {
			snprintf(msg, sizeof(msg),
				 "%s on barrier %u while a %s round is in progress (%u arrived)",
				 mn, id, mode_name[b->mode & 3], b->count);
			return bar_error(c, w, em, VGPU_EXC_BAR_MODE_CONFLICT, id,
					 cnt, msg);
		}
		if (mode == VGPU_BARMODE_RED && b->redop != d->mod[0]) {
			snprintf(msg, sizeof(msg),
				 "BAR.RED.%s on barrier %u while a BAR.RED.%s round is in progress",
				 redop_name[d->mod[0] & 3], id, redop_name[b->redop & 3]);
			return bar_error(c, w, em, VGPU_EXC_BAR_MODE_CONFLICT, id,
					 cnt, msg);
		}
		if (b->expected != cnt) {
			snprintf(msg, sizeof(msg),
				 "%s on barrier %u with count %u, but the round in progress expects %u (%u arrived)",
				 mn, id, cnt, b->expected, b->count);
			return bar_error(c, w, em, VGPU_EXC_BAR_COUNT_MISMATCH, id,
					 cnt, msg);
		}
	} else {
		b->mode = mode;
		b->expected = (uint16_t)cnt;
		if (mode == VGPU_BARMODE_RED) {
			b->redop = d->mod[0];
			b->acc = b->redop == VGPU_MOD_REDOP_AND;
		}
	}
	if (mode == VGPU_BARMODE_RED) {
		uint32_t p = vgpu_pred_mask(w, d->pp, d->pp_not) & em;

		switch (b->redop) {
		case VGPU_MOD_REDOP_AND: b->acc &= p == em; break;
		case VGPU_MOD_REDOP_OR: b->acc |= p != 0; break;
		default: b->acc = (uint16_t)(b->acc + __builtin_popcount(p)); break;
		}
	}
	if (b->count < BAR_CNT_MASK + 1 - 32)
		b->count += 32;
	VGPU_TRACE(c, w, .type = VGPU_TR_BAR_ARRIVE, .id = id, .count = b->count,
		   .expected = b->expected ? b->expected :
					     (c->nwarps - c->exited_warps) * 32);
	if (bar_done(c, b)) {
		bar_complete(c, id, mode == VGPU_BARMODE_RED ? w : NULL);
		return VGPU_X_NEXT;
	}
	if (!block)
		return VGPU_X_NEXT;
	b->waiters |= 1u << w->id;
	vgpu_warp_block(c, w, (uint8_t)id);
	return VGPU_X_BLOCK;
}

enum vgpu_xres vgpu_exec_bar(struct vgpu_cta *c, struct vgpu_warp *w,
			       const struct vgpu_dinsn *d, uint32_t em)
{
	bool arv = d->mod[0] == VGPU_MOD_BARMODE_ARV;

	return bar_arrive(c, w, d, em, VGPU_BARMODE_SYNC, !arv);
}

enum vgpu_xres vgpu_exec_bar_red(struct vgpu_cta *c, struct vgpu_warp *w,
				   const struct vgpu_dinsn *d, uint32_t em)
{
	return bar_arrive(c, w, d, em, VGPU_BARMODE_RED, true);
}

static void write_lanes(struct vgpu_warp *w, uint16_t row, uint32_t em,
			uint32_t v)
{
	uint32_t *rd = vgpu_reg(w, row);

	VGPU_FOR_LANES(em, l)
		rd[l] = v;
}

enum vgpu_xres vgpu_exec_b2r(struct vgpu_cta *c, struct vgpu_warp *w,
			       const struct vgpu_dinsn *d, uint32_t em)
{
	uint32_t v = d->mod[0] == VGPU_MOD_B2RMODE_BAR ?
			     vgpu_bar_state(&c->bar[d->barid]) : w->red_state;

	write_lanes(w, d->rd, em, v);
	return VGPU_X_NEXT;
}

enum vgpu_xres vgpu_exec_b2r_result(struct vgpu_cta *c, struct vgpu_warp *w,
				      const struct vgpu_dinsn *d, uint32_t em)
{
	uint32_t acc = (w->red_state >> VGPU_BARST_ACC_SHIFT) & VGPU_BARST_ACC_MASK;

	write_lanes(w, d->rd, em, acc);
	if (d->pu != VGPU_PT)
		w->pred[d->pu] = (w->pred[d->pu] & ~em) | (acc ? em : 0);
	return VGPU_X_NEXT;
}

enum vgpu_xres vgpu_exec_r2b(struct vgpu_cta *c, struct vgpu_warp *w,
			       const struct vgpu_dinsn *d, uint32_t em)
{
	uint32_t v = vgpu_uniform(w, d->ra, em);

	if (d->mod[0] == VGPU_MOD_B2RMODE_BAR)
		vgpu_bar_set_state(&c->bar[d->barid], v);
	else
		w->red_state = v & ~(7u << 29);
	return VGPU_X_NEXT;
}
