/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A CTA in lock-step.
 *
 * While every warp of a CTA is full, converged, runnable and at the same
 * pc (at its start, and whenever a BAR.SYNC of all its warps has just
 * completed), the warps run instruction by instruction together, without
 * the scheduler between warps: each plain instruction (exec.c's table;
 * S2R of the clock aside) for every warp in turn, a BAR.SYNC of all the
 * warps as the arrivals that complete it, and a branch that every lane of
 * every warp takes, or none does.  Anything else (a memory access, a
 * partial branch, a barrier of fewer warps) ends the lock-step there.
 *
 * The round robin stays exact.  The lock-step replays it on counters: the
 * warp it would run (@cw) and what is left of that warp's slice (@rq),
 * the other warps' positions, the clock, the budget, the statistics.  A
 * warp that ran instructions in lock-step before its turn owes them
 * (vgpu_warp.ahead): when its turn comes, run_warp() counts them first,
 * as the round robin would have spent that part of the slice running
 * them.  Plain instructions touch only their own warp's registers and
 * predicates, so when they ran is unobservable; everything observable
 * (the first instruction after the lock-step, which warp runs it, the
 * clock it sees, the budget's slices) comes out as the round robin has
 * it.  Only one CTA per SM (no clusters), and not with a random
 * schedule, a timeline, a copy in flight or a timed warp.
 */
#include "core_priv.h"

static bool ls_ready(const struct vgpu_sm *sm, const struct vgpu_cta *c)
{
	uint32_t pc = c->warps[0].cur_pc;

	if (sm->nctas != 1 || c->nwarps < 2 || c->exited_warps ||
	    c->nthreads != c->nwarps * VGPU_WARP_SIZE ||
	    c->runnable != (c->nwarps == 32 ? ~0u : (1u << c->nwarps) - 1) ||
	    c->timed || sm->nops || !vgpu_lockstep_allowed(c))
		return false;
	for (uint32_t i = 0; i < c->nwarps; i++) {
		const struct vgpu_warp *w = &c->warps[i];

		if (!w->converged || w->live != ~0u || w->cur_mask != ~0u ||
		    w->parked || w->ahead || w->cur_pc != pc)
			return false;
	}
	return true;
}

/* Can the lock-step run @d (vgpu_lockstep_run decides the rest)? */
static bool ls_starts(const struct vgpu_dinsn *d)
{
	return (d->plain_run && (d->id != VGPU_I_S2R ||
				 (d->imm != VGPU_SR_CLOCK_LO && d->imm != VGPU_SR_CLOCK_HI &&
				  d->imm != VGPU_SR_GLOBALTIMER_LO &&
				  d->imm != VGPU_SR_GLOBALTIMER_HI))) ||
	       d->id == VGPU_I_BRA ||
	       (d->id == VGPU_I_BAR_SYNC_I && d->mod[0] != VGPU_MOD_BARMODE_ARV);
}

/* The guard of @d over the lanes of every warp: all (~0u), none (0), or
 * mixed (1). */
static uint32_t ls_guard(const struct vgpu_cta *c, const struct vgpu_dinsn *d)
{
	uint32_t m;

	if (d->unguarded)
		return ~0u;
	m = vgpu_pred_mask(&c->warps[0], d->pg, d->pg_not);
	if (m && m != ~0u)
		return 1;
	for (uint32_t i = 1; i < c->nwarps; i++)
		if (vgpu_pred_mask(&c->warps[i], d->pg, d->pg_not) != m)
			return 1;
	return m;
}

/* Can CTA @c go on in lock-step at @pc (a BAR.SYNC has just completed)? */
bool vgpu_lockstep_can_start(const struct vgpu_sm *sm, const struct vgpu_cta *c, uint32_t pc)
{
	return ls_ready(sm, c) && ls_starts(&c->prog->insns[pc]);
}

/* The round robin's counters while a CTA runs in lock-step. */
struct lockstep {
	uint32_t n;	    /* warps */
	uint32_t cw, rq;    /* the warp the round robin runs, what is left of its slice */
	uint64_t g;	    /* instructions each warp has run in lock-step */
	uint64_t pos[32];   /* ... of which the round robin has counted */
	uint64_t counted;   /* warp-instructions counted */
	uint64_t base;	    /* c->sm->lockstep_steps when the lock-step began */
};

/* Lock-step instruction @g (of @gs) is at @pc. */
static void ls_note_pc(struct vgpu_cta *c, const struct lockstep *gs, uint64_t g,
			 uint32_t pc)
{
	c->sm->lockstep_pc[(gs->base + g) % VGPU_LOCKSTEP_HISTORY] = pc;
}

/*
 * The pc where the round robin has warp @w, which ran @w->ahead
 * instructions in lock-step before its turn: exceptions name it.
 */
uint32_t vgpu_lockstep_turn_pc(const struct vgpu_cta *c, const struct vgpu_warp *w)
{
	if (!w->ahead || w->ahead > VGPU_LOCKSTEP_HISTORY)
		return w->cur_pc;
	return c->sm->lockstep_pc[(c->sm->lockstep_steps - w->ahead) % VGPU_LOCKSTEP_HISTORY];
}

/* Count @k warp-instructions as the round robin runs them. */
static void ls_tally(struct vgpu_sm *sm, struct lockstep *gs, uint64_t k)
{
	gs->counted += k;
	sm->clock += k;
	sm->budget_left -= k;
	sm->executed += k;
	sm->cluster_executed += k;
	sm->stats.warp_insns += k;
	sm->stats.thread_insns += k * VGPU_WARP_SIZE;
}

/* ... those of warp @i. */
static void ls_count(struct vgpu_sm *sm, struct lockstep *gs, uint32_t i, uint64_t k)
{
	gs->pos[i] += k;
	ls_tally(sm, gs, k);
}

/*
 * A refill while the round robin runs warp @i at lock-step position
 * @gs->pos[i]: an exception names that position's pc.
 */
static bool ls_refill(struct vgpu_sm *sm, struct vgpu_cta *c, const struct lockstep *gs,
			uint32_t i, bool quiet)
{
	return vgpu_refill_at(sm, c, &c->warps[i],
			      sm->lockstep_pc[(gs->base + gs->pos[i]) % VGPU_LOCKSTEP_HISTORY],
			      quiet);
}

/*
 * @gs->cw's slice is used up: the round robin's next warps take their
 * turns, each first counting what it ran ahead, until one has slice left.
 * False if a refill on the way stopped the launch (exception raised, or
 * a preemption: the warp whose turn it is resumes first).
 */
static bool ls_next_turn(struct vgpu_sm *sm, struct vgpu_cta *c, struct lockstep *gs)
{
	while (!gs->rq) {
		uint32_t i = c->next < gs->n ? c->next : 0;
		uint64_t owed = gs->g - gs->pos[i], k = owed < VGPU_QUANTUM ? owed : VGPU_QUANTUM;

		c->next = i + 1;
		gs->cw = i;
		gs->rq = VGPU_QUANTUM;
		while (k) {
			uint64_t x = k < sm->budget_left ? k : sm->budget_left;

			if (!x) {
				if (!ls_refill(sm, c, gs, i, false))
					return false;
				continue;
			}
			ls_count(sm, gs, i, x);
			gs->rq -= (uint32_t)x;
			k -= x;
		}
	}
	return true;
}

/*
 * Every warp arrives on the BAR.SYNC @d at lock-step position @gs->g: the
 * current warp first, then the others in round-robin order, each after
 * counting what it ran ahead.  The last to arrive completes the barrier
 * and goes on with the rest of its slice.  1: done; 0: left to the round
 * robin, nothing changed (a warp would need more than one turn, or the
 * budget or a preemption point falls inside); -1: the budget ran out
 * (exception raised).
 */
static int ls_barrier(struct vgpu_sm *sm, struct vgpu_cta *c, struct lockstep *gs,
			const struct vgpu_dinsn *d, uint32_t pc)
{
	const struct vgpu_launch *l = c->l;
	uint64_t budget = l->budget ? l->budget : VGPU_DEFAULT_BUDGET, total = 1, now;
	uint32_t order[32], m = 0, last, last_need;
	uint32_t i = c->next < gs->n ? c->next : 0;

	/* the others' turns come in round-robin order from c->next */
	for (uint32_t k = 0; k < gs->n; k++, i = i + 1 < gs->n ? i + 1 : 0) {
		uint64_t need = gs->g - gs->pos[i] + 1;

		if (i == gs->cw)
			continue;
		if (need > VGPU_QUANTUM)
			return 0;
		order[m++] = i;
		total += need;
	}
	/*
	 * The count as of this SM's last refill, not the shared counter: the
	 * other SMs add to it all the time, and a read at every round would
	 * miss each time (a 16-thread BAR.SYNC grid took 28% more CPU than
	 * one thread).  What they ran since is counted at the next refill,
	 * which stops the launch then, as it would have a slice later.
	 */
	now = l->ctl ? sm->ctl_seen + sm->slice_given - sm->budget_left : sm->executed;
	if (now + total >= budget ||
	    (l->ctl && l->ctl->preempt_every && sm->executed + total >= l->ctl->preempt_every))
		return 0;
	last = order[m - 1];
	last_need = (uint32_t)(gs->g + 1 - gs->pos[last]);
	ls_note_pc(c, gs, gs->g, pc);
	if (sm->budget_left >= total) {
		/* no refill on the way: count it all at once */
		for (uint32_t k = 0; k < m; k++)
			gs->pos[order[k]] = gs->g + 1;
		gs->pos[gs->cw] = gs->g + 1;
		ls_tally(sm, gs, total);
	} else {
		ls_count(sm, gs, gs->cw, 1);
		for (uint32_t k = 0; k < m; k++) {
			uint64_t need = gs->g + 1 - gs->pos[order[k]];

			while (need) {
				uint64_t x = need < sm->budget_left ? need : sm->budget_left;

				if (!x) {
					if (!ls_refill(sm, c, gs, order[k], true))
						return -1;
					continue;
				}
				ls_count(sm, gs, order[k], x);
				need -= x;
			}
		}
	}
	for (uint32_t k = 0; k < gs->n; k++) {
		struct vgpu_warp *w = &c->warps[k];

		if (k != last) { /* as vgpu_warp_block() left them */
			w->wait_bar = d->barid;
			w->wait_pc = pc;
			w->wait_mask = w->cur_mask;
		}
	}
	sm->epoch += d->effect ? gs->n : 0;
	gs->rq = VGPU_QUANTUM - last_need;
	gs->g++;
	gs->cw = last;
	c->next = last + 1;
	return 1;
}

/*
 * Run CTA @c in lock-step from warp @w's turn, @quantum left of its slice.
 * 0: the lock-step does not apply (nothing changed: the caller runs @w);
 * 1: it ran, and the round robin goes on from where it ended: with the
 * warp whose slice it was (sm->resume_w) or, that slice used up, with the
 * next warp; -1: an exception or a preemption stopped the launch (as
 * run_warp() leaves it).
 */
int vgpu_lockstep_run(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w,
		    uint32_t quantum)
{
	const struct vgpu_prog *prog = c->prog;
	uint32_t pc = w->cur_pc;
	struct lockstep gs = { .n = c->nwarps, .cw = w->id, .rq = quantum,
			   .base = c->sm->lockstep_steps };
	int r = 1;

	c->lockstep = false;
	if (!quantum || !ls_ready(sm, c) || !ls_starts(&prog->insns[pc]))
		return 0;
	for (;;) {
		const struct vgpu_dinsn *d = &prog->insns[pc];
		uint32_t g, next = pc + 1;

		if (!ls_starts(d))
			break;
		if (!gs.rq && !ls_next_turn(sm, c, &gs)) {
			r = -1;
			break;
		}
		if (!sm->budget_left) {
			/* the current warp is at @pc (an exception names it) */
			c->warps[gs.cw].cur_pc = pc;
			if (!vgpu_refill(sm, c, &c->warps[gs.cw], c->l, false)) {
				r = -1;
				break;
			}
		}
		if (d->plain_run) {
			/*
			 * A row of plain instructions, a warp at a time (its
			 * registers stay in cache), up to the end of the
			 * current warp's slice or of the budget.
			 */
			uint32_t k = d->plain_run;

			if (k > gs.rq)
				k = gs.rq;
			if (k > sm->budget_left)
				k = (uint32_t)sm->budget_left;
			for (uint32_t j = 1; j < k; j++)
				if (!ls_starts(&d[j]))
					k = j;
			for (uint32_t i = 0; i < gs.n; i++) {
				struct vgpu_warp *x = &c->warps[i];

				for (uint32_t j = 0; j < k; j++) {
					uint32_t em = d[j].unguarded ? ~0u :
						      vgpu_pred_mask(x, d[j].pg, d[j].pg_not);

					if (em)
						d[j].fn(c, x, &d[j], em);
				}
			}
			for (uint32_t j = 0; j < k; j++)
				ls_note_pc(c, &gs, gs.g + j, pc + j);
			sm->stats.lockstep_insns += (uint64_t)k * gs.n;
			gs.g += k;
			gs.rq -= k;
			ls_count(sm, &gs, gs.cw, k);
			pc += k;
			continue;
		}
		g = ls_guard(c, d);
		if (g == 1)
			break;
		if (d->id == VGPU_I_BRA) {
			int64_t target = (int64_t)vgpu_byte_pc(pc) + (int32_t)d->imm;

			if (target < 0 || target % VGPU_INSN_BYTES ||
			    target / VGPU_INSN_BYTES >= prog->n)
				break;
			if (g)
				next = (uint32_t)(target / VGPU_INSN_BYTES);
		} else if (g) {
			/* BAR.SYNC: of all the warps, or the round robin's */
			const struct vgpu_nbar *b = &c->bar[d->barid];
			int done = 0;

			if (b->mode == VGPU_BARMODE_IDLE &&
			    (!d->cnt || d->cnt == gs.n * VGPU_WARP_SIZE))
				done = ls_barrier(sm, c, &gs, d, pc);
			if (done < 0)
				r = -1;
			if (done <= 0)
				break;
			sm->stats.lockstep_insns += gs.n;
			pc = next;
			continue;
		}
		/* the current warp's instruction; the others run it ahead */
		ls_note_pc(c, &gs, gs.g, pc);
		sm->stats.lockstep_insns += gs.n;
		gs.g++;
		gs.rq--;
		ls_count(sm, &gs, gs.cw, 1);
		pc = next;
	}
	if (r > 0 && !gs.counted)
		return 0;
	c->sm->lockstep_steps = gs.base + gs.g;
	for (uint32_t i = 0; i < gs.n; i++) {
		c->warps[i].upc = pc;
		c->warps[i].cur_pc = pc;
		c->warps[i].ahead = (uint32_t)(gs.g - gs.pos[i]);
	}
	if (gs.rq && (r > 0 || sm->preempting)) {
		sm->resume_cta = c->rank;
		sm->resume_w = &c->warps[gs.cw];
		sm->resume_quantum = gs.rq;
	}
	return r;
}
