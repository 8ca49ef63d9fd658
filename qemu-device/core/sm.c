/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SM: cluster and CTA set-up, the warp scheduler, deadlock detection
 * and the instruction budget (SIMT group selection: simt.c; exceptions
 * and timeline events: events.c).
 *
 * SIMT model: each lane has its own pc.  The group that runs next is the
 * set of live lanes sharing the lowest pc, so divergent paths of structured
 * code reconverge where they meet again; a warp that is converged keeps one
 * pc (upc) and skips the per-lane bookkeeping.  BAR.SYNC/BAR.RED executed by
 * any group block the whole warp, as the seed specifies.
 *
 * An SM object runs one cluster at a time (a cluster of one CTA without
 * cluster dims): its CTAs are co-resident and their warps interleave, so
 * they can reach each other's shared memory and mbarriers.
 *
 * Scheduling: in the default mode warps run round-robin, each for up to
 * VGPU_QUANTUM warp-instructions or until it blocks.  With
 * VGPU_LAUNCH_RANDOM_SCHED a seeded xorshift generator picks the next warp
 * among the runnable ones and the length of its slice (1..VGPU_RAND_QUANTUM),
 * so different seeds give different interleavings, each reproducible.
 * In the default mode a CTA whose warps are all at one pc may run them in
 * lock-step (lockstep.c), with the same outcome as the round robin.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"

#define VGPU_RAND_QUANTUM 8u
#define VGPU_BUDGET_SLICE VGPU_CTL_CHECK_EVERY

/* ---- Warp state transitions ---- */

static uint8_t trace_reason(uint8_t state)
{
	switch (state) {
	case VGPU_WS_BLOCKED: return VGPU_TRACE_WAIT_BAR;
	case VGPU_WS_SLEEPING: return VGPU_TRACE_WAIT_SLEEP;
	case VGPU_WS_MBAR_WAIT: return VGPU_TRACE_WAIT_MBAR;
	case VGPU_WS_CLUSTER_WAIT: return VGPU_TRACE_WAIT_CLUSTER;
	default: return VGPU_TRACE_WAIT_ASYNC;
	}
}

/* @w has just stopped running: say where and on what. */
static void trace_block(struct vgpu_cta *c, const struct vgpu_warp *w)
{
	struct vgpu_trace_event ev = {
		.type = VGPU_TR_BLOCK,
		.reason = trace_reason(w->state),
		.pc = vgpu_byte_pc(w->wait_pc),
	};

	if (w->state == VGPU_WS_BLOCKED) {
		const struct vgpu_nbar *b = &c->bar[w->wait_bar];

		ev.id = w->wait_bar;
		ev.count = b->count;
		ev.expected = b->expected ? b->expected :
					    (c->nwarps - c->exited_warps) * 32;
	} else if (w->state == VGPU_WS_MBAR_WAIT) {
		const struct vgpu_cta *t = c->sm->ctas[w->wait_cta];

		ev.addr = w->wait_off;
		ev.id = vgpu_mbar_phase(t, w->wait_off);
		ev.count = ev.id & 1;
		ev.expected = t->rank;
	}
	vgpu_trace_emit(c, w, &ev);
}

/*
 * Take warp @w off the runnable set in @state, remembering the instruction
 * and lanes it waits at; @wake (0: none) is the cycle it wakes by itself.
 */
void vgpu_warp_suspend(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t state,
		       uint64_t wake)
{
	w->state = state;
	w->wait_pc = w->cur_pc;
	w->wait_mask = w->cur_mask;
	c->runnable &= ~(1u << w->id);
	if (wake) {
		w->wake = wake;
		c->timed |= 1u << w->id;
	}
	if (vgpu_tracing(c))
		trace_block(c, w);
}

void vgpu_warp_block(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t barid)
{
	w->wait_bar = barid;
	vgpu_warp_suspend(c, w, VGPU_WS_BLOCKED, 0);
}

/*
 * Make @w runnable again.  Parked lanes are released: they run their
 * MBAR.TRY_WAIT again.  A warp that is running keeps its current group (the
 * released lanes join when it advances); a suspended one picks a group now.
 */
void vgpu_warp_wake(struct vgpu_cta *c, struct vgpu_warp *w)
{
	if (w->state != VGPU_WS_RUNNABLE)
		VGPU_TRACE(c, w, .type = VGPU_TR_UNBLOCK,
			   .reason = trace_reason(w->state),
			   .pc = vgpu_byte_pc(w->wait_pc),
			   .flow = c->sm->wake_flow, .id = w->wait_bar);
	w->parked = 0;
	w->park_any = false;
	if (!w->cur_mask)
		vgpu_warp_select(w);
	w->state = VGPU_WS_RUNNABLE;
	c->runnable |= 1u << w->id;
	c->timed &= ~(1u << w->id);
}

void vgpu_warp_sleep(struct vgpu_cta *c, struct vgpu_warp *w, uint64_t ns)
{
	vgpu_warp_suspend(c, w, VGPU_WS_SLEEPING, c->sm->clock + (ns ? ns : 1));
}

static void warp_exit(struct vgpu_cta *c, struct vgpu_warp *w)
{
	w->state = VGPU_WS_EXITED;
	c->runnable &= ~(1u << w->id);
	c->exited_warps++;
	VGPU_TRACE(c, w, .type = VGPU_TR_EXIT);
	vgpu_bar_warp_exited(c);
	vgpu_cluster_bar_check(c->sm);
}

/*
 * The current group of @w runs an mbarrier wait on (@cta, @off) again:
 * if the same wait failed last time and nothing observable has changed
 * since, with every other live lane parked, the warp spins.
 */
static void note_spin(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t cta,
		      uint32_t off)
{
	uint64_t now = c->sm->epoch + 1;

	if (w->fail_epoch != now || w->fail_pc != w->cur_pc ||
	    (w->cur_mask | w->parked) != w->live)
		return;
	w->spin_epoch = now;
	w->spin_cta = cta;
	w->spin_off = off;
	w->spin_pc = w->cur_pc;
	w->spin_mask = w->cur_mask;
}

/* An mbarrier wait of @w's current group said false for some of @lanes. */
void vgpu_warp_wait_failed(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t cta,
			   uint32_t off, uint32_t lanes)
{
	(void)lanes;
	note_spin(c, w, cta, off);
	w->fail_epoch = c->sm->epoch + 1;
	w->fail_pc = w->cur_pc;
}

void vgpu_warp_park(struct vgpu_cta *c, struct vgpu_warp *w, uint8_t cta,
		    uint32_t off, uint64_t wake)
{
	note_spin(c, w, cta, off);
	if (w->parked && (w->wait_cta != cta || w->wait_off != off))
		w->park_any = true;
	if (!w->parked || wake < w->wake)
		w->wake = wake;
	w->wait_cta = cta;
	w->wait_off = off;
	w->wait_pc = w->cur_pc;
	w->wait_mask = w->cur_mask;
	c->timed |= 1u << w->id;
	if (w->converged && w->cur_mask == w->live) {
		/*
		 * The whole warp parks: it stays converged at upc, with no
		 * group (cur_pc ~0u, as vgpu_warp_select leaves it), and takes up
		 * its lanes there when woken, as a diverged one would.
		 */
		w->parked = w->cur_mask;
		w->cur_mask = 0;
		w->cur_pc = UINT32_MAX;
		return;
	}
	vgpu_warp_diverge(w);
	w->parked |= w->cur_mask;
	vgpu_warp_select(w);
}

/* ---- Budget ---- */

/*
 * Account the warp-instructions run since the last refill (to the shared
 * counter when several SMs run one launch) and hand out the next slice.
 * @quiet: leave abort, deadline and preemption requests to the next
 * refill (lockstep.c, inside a barrier it cannot stop half-way).
 */
bool vgpu_refill(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w,
		 const struct vgpu_launch *l, bool quiet)
{
	uint64_t budget = l->budget ? l->budget : VGPU_DEFAULT_BUDGET;
	uint64_t used = sm->slice_given - sm->budget_left;
	uint64_t total;

	if (l->ctl) {
		total = vgpu_ctl_count(l->ctl, used);
		sm->ctl_seen = total;
		if (l->ctl->slice)
			l->ctl->slice(l->ctl->slice_opaque, total);
		if (!quiet && (atomic_load(&l->ctl->abort) ||
			       (l->ctl->clock && l->ctl->clock() >= l->ctl->deadline))) {
			vgpu_raise(c, w, VGPU_EXC_ABORTED, w ? w->cur_mask : 0,
				   "launch aborted after %llu warp-instructions",
				   (unsigned long long)total);
			return false;
		}
		/* a stop between two warp-instructions: no exception */
		if (!quiet && (atomic_load(&l->ctl->preempt) ||
			       (l->ctl->preempt_every &&
				sm->executed >= l->ctl->preempt_every))) {
			sm->budget_left = sm->slice_given = 0;
			sm->preempting = true;
			return false;
		}
	} else {
		total = sm->executed;
	}
	if (total >= budget) {
		vgpu_raise(c, w, VGPU_EXC_BUDGET, w ? w->cur_mask : 0,
			   "instruction budget of %llu warp-instructions exceeded",
			   (unsigned long long)budget);
		sm->exc->info[0] = (uint32_t)budget;
		sm->exc->info[1] = (uint32_t)(budget >> 32);
		return false;
	}
	sm->budget_left = budget - total;
	if (sm->budget_left > VGPU_BUDGET_SLICE)
		sm->budget_left = VGPU_BUDGET_SLICE;
	if (l->ctl && l->ctl->preempt_every &&
	    sm->budget_left > l->ctl->preempt_every - sm->executed)
		sm->budget_left = l->ctl->preempt_every - sm->executed;
	sm->slice_given = sm->budget_left;
	return true;
}

/*
 * A refill before @w's next instruction; one inside what @w ran ahead in
 * lock-step names the pc the round robin has it at.
 */
static bool warp_refill(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w)
{
	return vgpu_refill_at(sm, c, w, vgpu_lockstep_turn_pc(c, w), false);
}

/* vgpu_refill() with @w at @pc for an exception it raises. */
bool vgpu_refill_at(struct vgpu_sm *sm, struct vgpu_cta *c, struct vgpu_warp *w,
		    uint32_t pc, bool quiet)
{
	uint32_t real = w->cur_pc;
	bool ok;

	w->cur_pc = pc;
	ok = vgpu_refill(sm, c, w, c->l, quiet);
	w->cur_pc = real;
	return ok;
}

/* ---- Running a warp ---- */

/* Every lane of @w that could run is parked: suspend the warp. */
static void park_out(struct vgpu_cta *c, struct vgpu_warp *w)
{
	w->state = VGPU_WS_MBAR_WAIT;
	c->runnable &= ~(1u << w->id);
	if (vgpu_tracing(c))
		trace_block(c, w);
}

/*
 * Run warp @w for at most @quantum warp-instructions.  Returns false if an
 * exception stopped the launch.
 */
static bool run_warp(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t quantum)
{
	struct vgpu_sm *sm = c->sm;
	const struct vgpu_prog *prog = c->prog;
	uint64_t n = 0, threads = 0, start = sm->clock;
	uint32_t start_pc = vgpu_byte_pc(w->cur_pc), ran = 0;
	/* the active-lane count of the last mask seen (vgpu_popcount is a
	 * dozen instructions on baseline x86-64; masks rarely change) */
	uint32_t cnt_mask = 0, cnt = 0;
	bool ok = true;

	sm->run_cta = c;
	sm->run_w = w;
	while (ran < quantum) {
		const struct vgpu_dinsn *d;
		enum vgpu_xres r;
		uint32_t em;

		if (!sm->budget_left) {
			sm->executed += n;
			sm->cluster_executed += n;
			sm->stats.warp_insns += n;
			sm->stats.thread_insns += threads;
			n = threads = 0;
			if (!warp_refill(sm, c, w)) {
				if (sm->preempting) {
					/* it resumes here, with what is left */
					sm->resume_cta = c->rank;
					sm->resume_w = w;
					sm->resume_quantum = quantum - ran;
				}
				ok = false;
				break;
			}
			continue;
		}
		if (__builtin_expect(w->ahead, 0)) {
			/* what it ran in lock-step before its turn (lockstep.c) */
			uint32_t k = w->ahead;

			if (k > quantum - ran)
				k = quantum - ran;
			if (k > sm->budget_left)
				k = (uint32_t)sm->budget_left;
			w->ahead -= k;
			n += k;
			ran += k;
			sm->clock += k;
			sm->budget_left -= k;
			threads += (uint64_t)k * vgpu_popcount(w->cur_mask);
			continue;
		}
		/* insns[n] is a sentinel that raises PC_RANGE: no bounds check */
		d = &prog->insns[w->cur_pc];
		if (d->plain_run > 1 && w->converged && w->cur_mask == w->live) {
			/*
			 * A row of plain instructions (exec.c) on a converged
			 * warp: each returns VGPU_X_NEXT and leaves the warp's
			 * lanes as they are, so the bookkeeping below is the
			 * same for all of them and done once.  The row stops
			 * where the quantum or the budget would have.
			 */
			uint32_t k = d->plain_run, mask = w->cur_mask;

			if (k > quantum - ran)
				k = quantum - ran;
			if (k > sm->budget_left)
				k = (uint32_t)sm->budget_left;
			n += k;
			ran += k;
			sm->budget_left -= k;
			threads += (uint64_t)k * vgpu_popcount(mask);
			for (uint32_t j = 0; j < k; j++, d++) {
				em = d->unguarded ? mask :
				     mask & vgpu_pred_mask(w, d->pg, d->pg_not);
				sm->clock++;
				if (em)
					d->fn(c, w, d, em);
			}
			w->upc += k;
			w->cur_pc = w->upc;
			continue;
		}
		em = d->unguarded ? w->cur_mask :
			w->cur_mask & vgpu_pred_mask(w, d->pg, d->pg_not);
		n++;
		ran++;
		sm->clock++;
		sm->budget_left--;
		if (w->cur_mask != cnt_mask) {
			cnt_mask = w->cur_mask;
			cnt = vgpu_popcount(cnt_mask);
		}
		threads += cnt;
		r = em ? d->fn(c, w, d, em) : VGPU_X_NEXT;
		sm->epoch += em && d->effect;
		if (r == VGPU_X_NEXT) {
			if (!w->live) {
				warp_exit(c, w);
				break;
			}
			vgpu_warp_advance(w);
			if (__builtin_expect(!w->cur_mask, 0)) {
				park_out(c, w);
				break;
			}
			if (__builtin_expect(c->lockstep, 0)) {
				/* @w completed a BAR.SYNC: the CTA may go on in step */
				if (ran < quantum &&
				    vgpu_lockstep_can_start(sm, c, w->cur_pc)) {
					sm->resume_cta = c->rank;
					sm->resume_w = w;
					sm->resume_quantum = quantum - ran;
					break;
				}
				c->lockstep = false;
			}
			continue;
		}
		if (r == VGPU_X_BRANCHED) {
			if (__builtin_expect(!w->cur_mask, 0)) {
				park_out(c, w);
				break;
			}
			continue;
		}
		if (r == VGPU_X_BLOCK) {
			vgpu_warp_advance(w);
			break;
		}
		if (r == VGPU_X_PARKED) {
			if (w->cur_mask)
				continue;
			park_out(c, w);
			break;
		}
		ok = false;
		break;
	}
	sm->executed += n;
	sm->cluster_executed += n;
	sm->stats.warp_insns += n;
	sm->stats.thread_insns += threads;
	sm->run_cta = NULL;
	sm->run_w = NULL;
	if (vgpu_tracing(c) && sm->clock > start) {
		struct vgpu_trace_event ev = {
			.type = VGPU_TR_RUN, .pc = start_pc,
			.count = (uint32_t)(sm->clock - start),
		};

		vgpu_trace_emit_at(c, w, &ev, start);
	}
	return ok;
}

/* ---- CTAs and clusters ---- */

static void cta_init(struct vgpu_sm *sm, uint32_t slot, const struct vgpu_launch *l,
		     const uint32_t id[3])
{
	struct vgpu_cta *c = sm->ctas[slot];
	const struct vgpu_prog *prog = l->prog;
	size_t rowbytes = (size_t)prog->rows * VGPU_WARP_SIZE * sizeof(uint32_t);

	c->sm = sm;
	c->l = l;
	c->prog = prog;
	memcpy(c->id, id, sizeof(c->id));
	c->rank = slot;
	c->nthreads = l->block[0] * l->block[1] * l->block[2];
	c->nwarps = (c->nthreads + VGPU_WARP_SIZE - 1) / VGPU_WARP_SIZE;
	c->exited_warps = 0;
	c->timed = 0;
	c->next = 0;
	c->runnable = c->nwarps == 32 ? ~0u : (1u << c->nwarps) - 1;
	c->smem = sm->smem[slot];
	c->smem_size = l->smem_bytes;
	c->shadow = sm->shadow[slot];
	c->warps = sm->warpbuf[slot];
	c->nmbars = 0;
	c->lockstep = vgpu_lockstep_allowed(c);
	memset(c->smem, 0, l->smem_bytes);
	memset(c->shadow, 0, (l->smem_bytes + 63) / 64);
	memset(sm->regfile[slot], 0, rowbytes * c->nwarps);
	vgpu_bar_reset(c);
	for (uint32_t i = 0; i < c->nwarps; i++) {
		struct vgpu_warp *w = &c->warps[i];
		uint32_t lanes = c->nthreads - i * VGPU_WARP_SIZE;

		vgpu_zero(w, sizeof(*w)); /* not rep stosq */
		w->id = i;
		w->exists = lanes >= VGPU_WARP_SIZE ? ~0u : (1u << lanes) - 1;
		w->live = w->exists;
		w->converged = true;
		w->upc = l->entry / VGPU_INSN_BYTES;
		w->cur_pc = w->upc;
		w->cur_mask = w->live;
		w->state = VGPU_WS_RUNNABLE;
		w->pred[VGPU_PT] = ~0u;
		w->regs = (uint32_t *)((uint8_t *)sm->regfile[slot] + rowbytes * i);
	}
}

/* Set up cluster (or cooperative grid) @linear: its CTAs, in rank order
 * (x fastest). */
void vgpu_cluster_setup(struct vgpu_sm *sm, const struct vgpu_launch *l,
			uint32_t linear)
{
	uint32_t cd[3] = { vgpu_group_dim(l, 0), vgpu_group_dim(l, 1), vgpu_group_dim(l, 2) };
	uint32_t nx = l->grid[0] / cd[0], ny = l->grid[1] / cd[1];
	uint32_t slot = 0;

	sm->cluster_id[0] = linear % nx;
	sm->cluster_id[1] = (linear / nx) % ny;
	sm->cluster_id[2] = linear / (nx * ny);
	sm->nctas = cd[0] * cd[1] * cd[2];
	sm->next_cta = 0;
	sm->clbar_phase = 0;
	for (uint32_t z = 0; z < cd[2]; z++)
		for (uint32_t y = 0; y < cd[1]; y++)
			for (uint32_t x = 0; x < cd[0]; x++) {
				uint32_t id[3] = { sm->cluster_id[0] * cd[0] + x,
						   sm->cluster_id[1] * cd[1] + y,
						   sm->cluster_id[2] * cd[2] + z };

				cta_init(sm, slot++, l, id);
			}
}

/* Wake the warps whose time has come (sleepers, TRY_WAIT time limits). */
static void wake_due(struct vgpu_sm *sm)
{
	for (uint32_t s = 0; s < sm->nctas; s++) {
		struct vgpu_cta *c = sm->ctas[s];

		VGPU_FOR_LANES(c->timed, i) {
			struct vgpu_warp *w = &c->warps[i];

			if (w->wake > sm->clock)
				continue;
			if (w->parked)
				w->try_timed_out = true;
			vgpu_warp_wake(c, w);
		}
	}
}

/* The earliest wake-up of any timed warp, and (@sleep) of any sleeper. */
static uint64_t next_timed2(const struct vgpu_sm *sm, uint64_t *sleep)
{
	uint64_t next = UINT64_MAX, next_sleep = UINT64_MAX;

	for (uint32_t s = 0; s < sm->nctas; s++) {
		const struct vgpu_cta *c = sm->ctas[s];

		VGPU_FOR_LANES(c->timed, i) {
			const struct vgpu_warp *w = &c->warps[i];

			if (w->wake < next)
				next = w->wake;
			if (w->state == VGPU_WS_SLEEPING && w->wake < next_sleep)
				next_sleep = w->wake;
		}
	}
	*sleep = next_sleep;
	return next;
}

static uint64_t next_timed(const struct vgpu_sm *sm, bool sleepers_only)
{
	uint64_t sleep, next = next_timed2(sm, &sleep);

	return sleepers_only ? sleep : next;
}

static int describe_wait(const struct vgpu_cta *c, const struct vgpu_warp *w,
			 char *buf, size_t len)
{
	const struct vgpu_nbar *b;

	switch (w->state) {
	case VGPU_WS_BLOCKED:
		b = &c->bar[w->wait_bar];
		return snprintf(buf, len, " warp %u waits on barrier %u (%u/%u)%s;",
				w->id, w->wait_bar, b->count,
				b->expected ? b->expected :
					      (c->nwarps - c->exited_warps) * 32,
				w->converged ? "" : " diverged");
	case VGPU_WS_MBAR_WAIT:
		return vgpu_mbar_describe_wait(c, w->id, "waits", w->wait_cta,
					       w->wait_off, buf, len);
	case VGPU_WS_RUNNABLE:
		if (!vgpu_warp_spinning(c->sm, w))
			return 0;
		return vgpu_mbar_describe_wait(c, w->id, "spins", w->spin_cta,
					       w->spin_off, buf, len);
	case VGPU_WS_CLUSTER_WAIT:
		return snprintf(buf, len, " warp %u waits on the cluster barrier;",
				w->id);
	case VGPU_WS_ASYNC_WAIT:
		return snprintf(buf, len, " warp %u waits for its copies;", w->id);
	default:
		return 0;
	}
}

/* Nothing in @c can ever run again: say who waits on what. */
static void raise_deadlock(struct vgpu_cta *c)
{
	char buf[VGPU_EXC_MSG_LEN];
	const struct vgpu_warp *first = NULL;
	size_t off;

	off = (size_t)snprintf(buf, sizeof(buf), "deadlock:");
	for (uint32_t i = 0; i < c->nwarps && off < sizeof(buf); i++) {
		const struct vgpu_warp *w = &c->warps[i];

		if (!vgpu_warp_waiting(w) && !vgpu_warp_spinning(c->sm, w))
			continue;
		if (!first)
			first = w;
		off += (size_t)describe_wait(c, w, buf + off, sizeof(buf) - off);
	}
	if (off < sizeof(buf))
		snprintf(buf + off, sizeof(buf) - off, " %u warp(s) exited",
			 c->exited_warps);
	vgpu_raise(c, first, VGPU_EXC_DEADLOCK,
		   !first		       ? 0 :
		   first->state == VGPU_WS_RUNNABLE ? first->spin_mask :
						      first->wait_mask,
		   "%s", buf);
	if (first && first->state == VGPU_WS_BLOCKED) {
		const struct vgpu_nbar *b = &c->bar[first->wait_bar];

		c->sm->exc->barid = first->wait_bar;
		c->sm->exc->info[0] = b->expected;
		c->sm->exc->info[1] = b->count;
		c->sm->exc->info[2] = vgpu_bar_state(b);
	} else if (first && first->state == VGPU_WS_MBAR_WAIT) {
		vgpu_mbar_record(c->sm->ctas[first->wait_cta], first->wait_off,
				 c->sm->exc);
	} else if (first && first->state == VGPU_WS_RUNNABLE) {
		vgpu_mbar_record(c->sm->ctas[first->spin_cta], first->spin_off,
				 c->sm->exc);
	}
}

/*
 * A CTA whose live warps all wait on its named barriers can never go on,
 * whatever the rest of the cluster does.
 */
static bool cta_stuck_on_named(const struct vgpu_cta *c)
{
	for (uint32_t i = 0; i < c->nwarps; i++) {
		uint8_t st = c->warps[i].state;

		if (st != VGPU_WS_BLOCKED && st != VGPU_WS_EXITED)
			return false;
	}
	return c->exited_warps < c->nwarps;
}

/*
 * Parked lanes of warps that do not spin give up their MBAR.TRY_WAIT now
 * (it says false): nothing else can change the phases they wait for.
 * False if there were none.
 */
static bool time_out_parked(struct vgpu_sm *sm)
{
	bool any = false;

	for (uint32_t s = 0; s < sm->nctas; s++) {
		struct vgpu_cta *c = sm->ctas[s];

		VGPU_FOR_LANES(c->timed, i) {
			struct vgpu_warp *w = &c->warps[i];

			if (!w->parked || vgpu_warp_spinning(sm, w))
				continue;
			w->try_timed_out = true;
			vgpu_warp_wake(c, w);
			any = true;
		}
	}
	return any;
}

/*
 * No warp can run, or every one that can spins on an mbarrier wait.  Let
 * time pass to the next event that can change that: a copy completing, a
 * sleeper waking, or, while either is pending, a MBAR.TRY_WAIT reaching
 * its time limit.  With neither, no other warp can complete the phase a
 * try_wait waits for, so it says false at once; and when every live warp
 * is blocked or spins, the cluster is deadlocked.
 */
static bool idle_step(struct vgpu_sm *sm)
{
	uint64_t t_op = vgpu_async_next_done(sm), t_sleep, t_any;

	t_any = next_timed2(sm, &t_sleep);
	if (t_op != UINT64_MAX || t_sleep != UINT64_MAX) {
		uint64_t t = t_any;

		if (t_op < t)
			t = t_op;
		if (sm->clock < t)
			sm->clock = t;
		if (t_any <= sm->clock)
			wake_due(sm);
		return true;
	}
	if (time_out_parked(sm))
		return true;
	for (uint32_t s = 0; s < sm->nctas; s++)
		if (sm->ctas[s]->exited_warps < sm->ctas[s]->nwarps) {
			raise_deadlock(sm->ctas[s]);
			return false;
		}
	return true;
}

/*
 * Nothing is in flight, nothing sleeps and every runnable warp spins: time
 * alone changes nothing (while a copy or a sleeper is pending, spinners
 * keep running as on the hardware).
 */
static bool quiescent(const struct vgpu_sm *sm)
{
	if (sm->nops || next_timed(sm, true) != UINT64_MAX)
		return false;
	for (uint32_t s = 0; s < sm->nctas; s++) {
		const struct vgpu_cta *c = sm->ctas[s];

		VGPU_FOR_LANES(c->runnable, i)
			if (!vgpu_warp_spinning(sm, &c->warps[i]))
				return false;
	}
	return true;
}

static bool pick_random(struct vgpu_sm *sm, struct vgpu_cta **pc,
			struct vgpu_warp **pw)
{
	uint32_t total = 0, k;

	for (uint32_t s = 0; s < sm->nctas; s++)
		total += (uint32_t)__builtin_popcount(sm->ctas[s]->runnable);
	if (!total)
		return false;
	k = (uint32_t)(vgpu_rng(sm) % total);
	for (uint32_t s = 0; s < sm->nctas; s++) {
		struct vgpu_cta *c = sm->ctas[s];
		uint32_t n = (uint32_t)__builtin_popcount(c->runnable), m = c->runnable;

		if (k >= n) {
			k -= n;
			continue;
		}
		while (k--)
			m &= m - 1;
		*pc = c;
		*pw = &c->warps[__builtin_ctz(m)];
		return true;
	}
	return false;
}

/* Round-robin: CTAs in turn, and inside a CTA the first runnable warp at or
 * after its position. */
static bool pick_rr(struct vgpu_sm *sm, struct vgpu_cta **pc,
		    struct vgpu_warp **pw)
{
	for (uint32_t i = 0, s = sm->next_cta; i < sm->nctas;
	     i++, s = s + 1 < sm->nctas ? s + 1 : 0) {
		struct vgpu_cta *c = sm->ctas[s];
		uint32_t m;

		if (!c->runnable)
			continue;
		m = c->next < 32 ? c->runnable & ~((1u << c->next) - 1) : 0;
		*pc = c;
		*pw = &c->warps[__builtin_ctz(m ? m : c->runnable)];
		c->next = (*pw)->id + 1;
		sm->next_cta = s + 1 < sm->nctas ? s + 1 : 0;
		return true;
	}
	return false;
}

static bool cluster_done(const struct vgpu_sm *sm)
{
	for (uint32_t s = 0; s < sm->nctas; s++)
		if (sm->ctas[s]->exited_warps < sm->ctas[s]->nwarps)
			return false;
	return true;
}

/* Run the cluster set up on @sm (new or restored) until it completes. */
bool vgpu_cluster_loop(struct vgpu_sm *sm, const struct vgpu_launch *l)
{
	bool random = l->flags & VGPU_LAUNCH_RANDOM_SCHED;

	while (!cluster_done(sm) || sm->nops) {
		struct vgpu_cta *c;
		struct vgpu_warp *w;
		uint32_t quantum = VGPU_QUANTUM;
		bool resumed;

		if (sm->nops && !vgpu_async_progress(sm))
			return false;
		wake_due(sm);
		resumed = sm->resume_w;
		if (resumed) {
			/* a restored cluster: the interrupted slice goes on */
			c = sm->ctas[sm->resume_cta];
			w = sm->resume_w;
			quantum = sm->resume_quantum;
			sm->resume_w = NULL;
		} else if (!(random ? pick_random(sm, &c, &w) : pick_rr(sm, &c, &w))) {
			c = NULL;
			w = NULL;
		}
		if (!w || (vgpu_warp_spinning(sm, w) && quiescent(sm))) {
			for (uint32_t s = 0; s < sm->nctas; s++)
				if (!sm->ctas[s]->timed && cta_stuck_on_named(sm->ctas[s])) {
					raise_deadlock(sm->ctas[s]);
					return false;
				}
			if (!idle_step(sm))
				return false;
			if (sm->exc_raised)
				return false;
			continue;
		}
		if (random && !resumed)
			quantum = 1 + (uint32_t)(vgpu_rng(sm) % VGPU_RAND_QUANTUM);
		if (c->lockstep) {
			int g = vgpu_lockstep_run(sm, c, w, quantum);

			if (g < 0)
				return false;
			if (g > 0)
				continue;
		}
		if (!run_warp(c, w, quantum))
			return false;
		/* the moment a CTA's last warp waits on its named barriers */
		if (!c->runnable && !c->timed && cta_stuck_on_named(c)) {
			raise_deadlock(c);
			return false;
		}
	}
	for (uint32_t s = 0; s < sm->nctas; s++) {
		sm->stats.ctas++;
		VGPU_TRACE(sm->ctas[s], NULL, .type = VGPU_TR_CTA_END);
	}
	return true;
}
