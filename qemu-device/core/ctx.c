// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Context save and restore of one cluster (uapi/vgpu_hw.h, "Context
 * save"): vgpu_sm_save() writes the state a preemption stopped, and
 * vgpu_ctx_load() puts a saved state back on an SM for vgpu_sm_resume().
 *
 * A state comes back from guest memory, where anything may have happened
 * to it: the loader checks every index, pc, mask and count against the
 * launch and against the rest of the state before the scheduler sees it,
 * and refuses with VGPU_EXC_BAD_CONTEXT.  Register and shared-memory
 * contents are data.
 */
#include <stdio.h>
#include <string.h>

#include "core_priv.h"

_Static_assert(VGPU_CTXW_RUNNABLE == VGPU_WS_RUNNABLE &&
	       VGPU_CTXW_BLOCKED == VGPU_WS_BLOCKED &&
	       VGPU_CTXW_SLEEPING == VGPU_WS_SLEEPING &&
	       VGPU_CTXW_EXITED == VGPU_WS_EXITED &&
	       VGPU_CTXW_MBAR_WAIT == VGPU_WS_MBAR_WAIT &&
	       VGPU_CTXW_CLUSTER_WAIT == VGPU_WS_CLUSTER_WAIT &&
	       VGPU_CTXW_ASYNC_WAIT == VGPU_WS_ASYNC_WAIT,
	       "saved warp states are the scheduler's");

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t warp_bytes(uint32_t nregs)
{
	return sizeof(struct vgpu_ctx_warp) +
	       (size_t)nregs * VGPU_WARP_SIZE * sizeof(uint32_t);
}

/* Bytes of a saved cluster of @nctas CTAs holding @nmbars mbarriers. */
static size_t ctx_bytes(uint32_t nctas, uint32_t nwarps, uint32_t nregs,
			uint32_t smem, uint64_t nmbars)
{
	return sizeof(struct vgpu_ctx_header) +
	       nctas * (sizeof(struct vgpu_ctx_cta) + round8(smem) +
			nwarps * warp_bytes(nregs)) +
	       nmbars * sizeof(struct vgpu_ctx_mbar);
}

/* CTAs of a saved cluster (a cooperative launch's whole grid) */
static uint32_t launch_csize(const struct vgpu_launch *l)
{
	uint32_t n = 1;

	for (int i = 0; i < 3; i++)
		n *= vgpu_group_dim(l, i);
	return n;
}

static uint32_t launch_nwarps(const struct vgpu_launch *l)
{
	return (l->block[0] * l->block[1] * l->block[2] + VGPU_WARP_SIZE - 1) /
	       VGPU_WARP_SIZE;
}

size_t vgpu_ctx_max_bytes(const struct vgpu_launch *l)
{
	uint32_t n = launch_csize(l);

	return ctx_bytes(n, launch_nwarps(l), l->prog->nregs, l->smem_bytes,
			 (uint64_t)n * (l->smem_bytes / 8));
}

size_t vgpu_sm_save_bytes(const struct vgpu_sm *sm)
{
	uint64_t nmbars = 0;

	for (uint32_t s = 0; s < sm->nctas; s++)
		nmbars += sm->ctas[s]->nmbars;
	return ctx_bytes(sm->nctas, sm->nctas ? sm->ctas[0]->nwarps : 0,
			 sm->l->prog->nregs, sm->l->smem_bytes, nmbars);
}

/* ---- save ---- */

static void save_warp(const struct vgpu_warp *w, struct vgpu_ctx_warp *o)
{
	memset(o, 0, sizeof(*o));
	o->exists = w->exists;
	o->live = w->live;
	o->converged = w->converged;
	o->upc = w->upc;
	o->cur_pc = w->cur_pc;
	o->cur_mask = w->cur_mask;
	o->state = w->state;
	o->wait_bar = w->wait_bar;
	o->wait_pc = w->wait_pc;
	o->wait_mask = w->wait_mask;
	o->wake = w->wake;
	o->wait_cta = w->wait_cta;
	o->wait_off = w->wait_off;
	o->try_timed_out = w->try_timed_out;
	o->parked = w->parked;
	o->park_any = w->park_any;
	o->fail_pc = w->fail_pc;
	o->fail_epoch = w->fail_epoch;
	o->spin_epoch = w->spin_epoch;
	o->spin_cta = w->spin_cta;
	o->spin_off = w->spin_off;
	o->spin_pc = w->spin_pc;
	o->spin_mask = w->spin_mask;
	o->wait_groups = w->wait_groups;
	o->red_state = w->red_state;
	o->bulk_committed = w->bulk_committed;
	o->clbar_arrived = w->clbar_arrived;
	o->clbar_phase = w->clbar_phase;
	o->cp_last_done = w->cp_last_done;
	memcpy(o->pred, w->pred, sizeof(o->pred));
	memcpy(o->pc, w->pc, sizeof(o->pc));
	memcpy(o->depth, w->depth, sizeof(o->depth));
}

size_t vgpu_sm_save(const struct vgpu_sm *sm, void *buf, size_t size)
{
	size_t need = vgpu_sm_save_bytes(sm), rowbytes;
	uint32_t nregs = sm->l->prog->nregs;
	struct vgpu_ctx_header *h = buf;
	uint8_t *p = buf;

	if (!sm->preempt_mid || size < need)
		return 0;
	memset(buf, 0, need);
	*h = (struct vgpu_ctx_header){
		.magic = VGPU_CTX_MAGIC,
		.version = VGPU_CTX_VERSION,
		.bytes = need,
		.cluster = sm->preempt_cluster,
		.nctas = sm->nctas,
		.nwarps = sm->ctas[0]->nwarps,
		.nregs = nregs,
		.smem_bytes = sm->l->smem_bytes,
		.next_cta = sm->next_cta,
		.clock = sm->clock,
		.rng = sm->rng,
		.epoch = sm->epoch,
		.cluster_t0 = sm->cluster_t0,
		.executed = sm->cluster_executed,
		.clbar_phase = sm->clbar_phase,
		.flow_seq = sm->flow_seq,
		.run_cta = sm->resume_w ? sm->resume_cta : ~0u,
		.run_warp = sm->resume_w ? sm->resume_w->id : ~0u,
		.quantum = sm->resume_w ? sm->resume_quantum : 0,
	};
	p += sizeof(*h);
	rowbytes = VGPU_WARP_SIZE * sizeof(uint32_t);
	for (uint32_t s = 0; s < sm->nctas; s++) {
		const struct vgpu_cta *c = sm->ctas[s];
		struct vgpu_ctx_cta *oc = (struct vgpu_ctx_cta *)p;

		memcpy(oc->id, c->id, sizeof(oc->id));
		oc->exited_warps = c->exited_warps;
		oc->runnable = c->runnable;
		oc->timed = c->timed;
		oc->next = c->next;
		oc->nmbars = c->nmbars;
		for (uint32_t b = 0; b < VGPU_NUM_NAMED_BARRIERS; b++)
			oc->bar[b] = vgpu_bar_state(&c->bar[b]);
		p += sizeof(*oc);
		for (uint32_t i = 0; i < c->nmbars; i++) {
			struct vgpu_ctx_mbar *m = (struct vgpu_ctx_mbar *)p;

			m->off = c->mbars[i].off;
			m->phase = c->mbars[i].phase;
			m->need_wait = c->mbars[i].need_wait;
			p += sizeof(*m);
		}
		memcpy(p, c->smem, c->smem_size);
		p += round8(c->smem_size);
		for (uint32_t i = 0; i < c->nwarps; i++) {
			const struct vgpu_warp *w = &c->warps[i];

			save_warp(w, (struct vgpu_ctx_warp *)p);
			p += sizeof(struct vgpu_ctx_warp);
			memcpy(p, w->regs, nregs * rowbytes);
			p += nregs * rowbytes;
		}
	}
	return need;
}

/* ---- restore ---- */

struct ctx_reader {
	const uint8_t *p, *end;
	struct vgpu_exception_record *exc;
};

__attribute__((format(printf, 2, 3))) static int bad(struct ctx_reader *r,
						     const char *fmt, ...)
{
	char msg[VGPU_EXC_MSG_LEN - 24];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vgpu_exc_set(r->exc, VGPU_EXC_BAD_CONTEXT, "saved context: %s", msg);
	return -1;
}

static const void *take(struct ctx_reader *r, size_t n)
{
	const void *q = r->p;

	if ((size_t)(r->end - r->p) < n)
		return NULL;
	r->p += n;
	return q;
}

static bool pc_ok(const struct vgpu_prog *prog, uint32_t pc)
{
	return pc <= prog->n; /* insns[n] is the sentinel that raises PC_RANGE */
}

static int load_warp(struct ctx_reader *r, struct vgpu_cta *c, uint32_t i,
		     const struct vgpu_ctx_warp *o, uint32_t nctas)
{
	const struct vgpu_prog *prog = c->prog;
	struct vgpu_warp *w = &c->warps[i];
	uint32_t lanes = c->nthreads - i * VGPU_WARP_SIZE;
	uint32_t exists = lanes >= VGPU_WARP_SIZE ? ~0u : (1u << lanes) - 1;
	bool running = o->state == VGPU_WS_RUNNABLE;

	if (o->exists != exists || o->live & ~o->exists)
		return bad(r, "CTA %u warp %u: lanes 0x%x/0x%x", c->rank, i,
			   o->exists, o->live);
	if (o->state > VGPU_WS_CLUSTER_WAIT)
		return bad(r, "CTA %u warp %u: state %u", c->rank, i, o->state);
	if ((o->state == VGPU_WS_EXITED) != !o->live)
		return bad(r, "CTA %u warp %u: exited with live lanes 0x%x",
			   c->rank, i, o->live);
	/* an exited warp keeps its last group's lanes: never scheduled again */
	if ((o->state != VGPU_WS_EXITED &&
	     (o->cur_mask & ~o->live || o->parked & ~o->live)) ||
	    o->cur_mask & ~o->exists || o->parked & ~o->exists ||
	    o->wait_mask & ~o->exists || o->spin_mask & ~o->exists ||
	    (running && !o->cur_mask))
		return bad(r, "CTA %u warp %u: lane masks", c->rank, i);
	/* with no group (every lane parked) cur_pc is ~0u */
	if (!pc_ok(prog, o->upc) ||
	    (!pc_ok(prog, o->cur_pc) && (o->cur_pc != ~0u || o->cur_mask)) ||
	    !pc_ok(prog, o->wait_pc) || !pc_ok(prog, o->fail_pc) ||
	    !pc_ok(prog, o->spin_pc))
		return bad(r, "CTA %u warp %u: pc outside the program (%u %u %u %u %u of %u)",
			   c->rank, i, o->upc, o->cur_pc, o->wait_pc, o->fail_pc,
			   o->spin_pc, prog->n);
	for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
		if (!pc_ok(prog, o->pc[l]))
			return bad(r, "CTA %u warp %u lane %u: pc %u outside the program",
				   c->rank, i, l, o->pc[l]);
	if (running && !o->converged) {
		VGPU_FOR_LANES(o->cur_mask, l)
			if (o->pc[l] != o->cur_pc)
				return bad(r, "CTA %u warp %u: lane %u not at the group's pc",
					   c->rank, i, l);
	}
	if (o->converged) {
		VGPU_FOR_LANES(o->live, l)
			if (o->depth[l] != o->depth[__builtin_ctz(o->live)])
				return bad(r, "CTA %u warp %u: converged lanes at different call depths",
					   c->rank, i);
	}
	if (o->converged > 1 || o->try_timed_out > 1 || o->park_any > 1 ||
	    o->wait_bar >= VGPU_NUM_NAMED_BARRIERS || o->wait_cta >= nctas ||
	    o->spin_cta >= nctas || o->wait_off % 8 || o->spin_off % 8 ||
	    (o->wait_off && o->wait_off + 8 > c->smem_size) ||
	    (o->state == VGPU_WS_MBAR_WAIT && o->wait_off + 8 > c->smem_size) ||
	    o->pad)
		return bad(r, "CTA %u warp %u: wait fields", c->rank, i);
	if (o->pred[VGPU_PT] != ~0u)
		return bad(r, "CTA %u warp %u: PT is not all ones", c->rank, i);
	w->id = i;
	w->exists = o->exists;
	w->live = o->live;
	w->converged = o->converged;
	w->upc = o->upc;
	w->cur_pc = o->cur_pc;
	w->cur_mask = o->cur_mask;
	w->state = (uint8_t)o->state;
	w->wait_bar = (uint8_t)o->wait_bar;
	w->wait_pc = o->wait_pc;
	w->wait_mask = o->wait_mask;
	w->wake = o->wake;
	w->wait_cta = (uint8_t)o->wait_cta;
	w->wait_off = o->wait_off;
	w->try_timed_out = o->try_timed_out;
	w->parked = o->parked;
	w->park_any = o->park_any;
	w->fail_pc = o->fail_pc;
	w->fail_epoch = o->fail_epoch;
	w->spin_epoch = o->spin_epoch;
	w->spin_cta = (uint8_t)o->spin_cta;
	w->spin_off = o->spin_off;
	w->spin_pc = o->spin_pc;
	w->spin_mask = o->spin_mask;
	w->wait_groups = o->wait_groups;
	w->red_state = o->red_state;
	w->cp_pending = 0;
	w->cp_last_done = o->cp_last_done;
	w->bulk_committed = o->bulk_committed;
	memset(w->bulk_pending, 0, sizeof(w->bulk_pending));
	w->clbar_arrived = o->clbar_arrived;
	w->clbar_phase = o->clbar_phase;
	memcpy(w->pred, o->pred, sizeof(w->pred));
	memcpy(w->pc, o->pc, sizeof(w->pc));
	memcpy(w->depth, o->depth, sizeof(w->depth));
	w->deep = false;
	for (uint32_t l = 0; l < VGPU_WARP_SIZE; l++)
		w->deep |= w->depth[l] != 0;
	w->sel_ok = false; /* the next selection scans */
	return 0;
}

static int load_cta(struct ctx_reader *r, struct vgpu_sm *sm, uint32_t slot,
		    const struct vgpu_launch *l, const uint32_t want_id[3])
{
	struct vgpu_cta *c = sm->ctas[slot];
	const struct vgpu_ctx_cta *oc = take(r, sizeof(*oc));
	size_t rowbytes = VGPU_WARP_SIZE * sizeof(uint32_t);
	uint32_t nregs = l->prog->nregs, exited = 0, runnable = 0, timed = 0;
	const void *smem;

	if (!oc)
		return bad(r, "truncated at CTA %u", slot);
	/* the CTA as it starts (buffers, ids, zeroed registers), then its state */
	if (memcmp(oc->id, want_id, sizeof(oc->id)))
		return bad(r, "CTA %u is (%u,%u,%u), the cluster has (%u,%u,%u)",
			   slot, oc->id[0], oc->id[1], oc->id[2], want_id[0],
			   want_id[1], want_id[2]);
	if (oc->next > VGPU_MAX_WARPS_PER_CTA || oc->exited_warps > c->nwarps ||
	    oc->nmbars > c->smem_size / 8)
		return bad(r, "CTA %u: counts", slot);
	for (uint32_t i = 0; i < oc->nmbars; i++) {
		const struct vgpu_ctx_mbar *m = take(r, sizeof(*m));

		if (!m)
			return bad(r, "truncated in CTA %u's mbarriers", slot);
		if (m->off % 8 || m->off >= c->smem_size || m->need_wait > 1 || m->pad)
			return bad(r, "CTA %u: mbarrier at 0x%x", slot, m->off);
		for (uint32_t j = 0; j < c->nmbars; j++)
			if (c->mbars[j].off == m->off)
				return bad(r, "CTA %u: mbarrier 0x%x twice", slot, m->off);
		if (!vgpu_grow((void **)&c->mbars, c->nmbars, &c->mbars_cap,
			       sizeof(*c->mbars)))
			return bad(r, "out of host memory");
		c->mbars[c->nmbars++] = (struct vgpu_mbar_meta){
			.off = m->off, .phase = m->phase, .need_wait = m->need_wait,
		};
		c->shadow[m->off / 64] |= (uint8_t)(1u << (m->off / 8 % 8));
	}
	smem = take(r, round8(c->smem_size));
	if (!smem)
		return bad(r, "truncated in CTA %u's shared memory", slot);
	memcpy(c->smem, smem, c->smem_size);
	for (uint32_t i = 0; i < c->nwarps; i++) {
		const struct vgpu_ctx_warp *o = take(r, sizeof(*o));
		const void *regs = take(r, nregs * rowbytes);

		if (!o || !regs)
			return bad(r, "truncated in CTA %u warp %u", slot, i);
		if (load_warp(r, c, i, o, sm->nctas))
			return -1;
		memcpy(c->warps[i].regs, regs, nregs * rowbytes);
		exited += o->state == VGPU_WS_EXITED;
		runnable |= (uint32_t)(o->state == VGPU_WS_RUNNABLE) << i;
		/* a warp with lanes parked in MBAR.TRY_WAIT keeps its time
		 * limit whatever its other lanes do (run, or wait at a
		 * barrier: a producer lane waits while the rest sync) */
		timed |= (uint32_t)(o->state == VGPU_WS_SLEEPING ||
				    o->state == VGPU_WS_MBAR_WAIT ||
				    (o->state != VGPU_WS_EXITED && o->parked)) << i;
	}
	if (oc->exited_warps != exited || oc->runnable != runnable ||
	    oc->timed & ~timed)
		return bad(r, "CTA %u: warp sets disagree with the warps", slot);
	c->exited_warps = exited;
	c->runnable = runnable;
	c->timed = oc->timed;
	c->next = oc->next;
	for (uint32_t b = 0; b < VGPU_NUM_NAMED_BARRIERS; b++) {
		struct vgpu_nbar *nb = &c->bar[b];
		uint32_t waiters = 0;

		vgpu_bar_set_state(nb, oc->bar[b]);
		for (uint32_t i = 0; i < c->nwarps; i++)
			if (c->warps[i].state == VGPU_WS_BLOCKED &&
			    c->warps[i].wait_bar == b)
				waiters |= 1u << i;
		/* counts are what the 7-bit fields hold: a count the CTA cannot
		 * reach is a deadlock the scheduler reports, as before */
		if (nb->mode > VGPU_BARMODE_RED || nb->redop > 2 ||
		    (waiters && nb->mode == VGPU_BARMODE_IDLE))
			return bad(r, "CTA %u: named barrier %u state 0x%x", slot, b,
				   oc->bar[b]);
		nb->waiters = waiters;
	}
	return 0;
}

int vgpu_ctx_load(struct vgpu_sm *sm, const struct vgpu_launch *l,
		  const void *state, size_t size, struct vgpu_exception_record *exc)
{
	struct ctx_reader r = { state, (const uint8_t *)state + size, exc };
	const struct vgpu_ctx_header *h = take(&r, sizeof(*h));
	uint32_t csize = launch_csize(l), nwarps = launch_nwarps(l), nclusters;

	if (!h)
		return bad(&r, "%zu bytes: no header", size);
	nclusters = (l->grid[0] / vgpu_group_dim(l, 0)) * (l->grid[1] / vgpu_group_dim(l, 1)) *
		    (l->grid[2] / vgpu_group_dim(l, 2));
	if (h->magic != VGPU_CTX_MAGIC || h->version != VGPU_CTX_VERSION)
		return bad(&r, "magic 0x%x version %u", h->magic, h->version);
	if (h->nctas != csize || h->nwarps != nwarps ||
	    h->nregs != l->prog->nregs || h->smem_bytes != l->smem_bytes ||
	    h->cluster >= nclusters)
		return bad(&r, "made for another launch (cluster %u of %u, %u CTAs, "
			   "%u warps, %u registers, %u bytes of shared memory)",
			   h->cluster, nclusters, h->nctas, h->nwarps, h->nregs,
			   h->smem_bytes);
	if (h->bytes > size || h->bytes < ctx_bytes(csize, nwarps, h->nregs,
						    h->smem_bytes, 0))
		return bad(&r, "%llu bytes in a buffer of %zu",
			   (unsigned long long)h->bytes, size);
	r.end = (const uint8_t *)state + h->bytes;
	if (h->next_cta >= csize || h->reserved[0] || h->reserved[1] ||
	    h->reserved[2] ||
	    (h->run_cta != ~0u && (h->run_cta >= csize || h->run_warp >= nwarps ||
				   !h->quantum || h->quantum > 1u << 16)))
		return bad(&r, "scheduler fields");

	/* the cluster as it starts, then its saved state on top */
	vgpu_cluster_setup(sm, l, h->cluster);
	for (uint32_t s = 0; s < csize; s++)
		if (load_cta(&r, sm, s, l, sm->ctas[s]->id))
			return -1;
	if (r.p != r.end)
		return bad(&r, "%zu bytes left over", (size_t)(r.end - r.p));
	if (h->run_cta != ~0u &&
	    sm->ctas[h->run_cta]->warps[h->run_warp].state != VGPU_WS_RUNNABLE)
		return bad(&r, "the interrupted warp is not runnable");
	sm->next_cta = h->next_cta;
	sm->clock = h->clock;
	sm->rng = h->rng ? h->rng : 1;
	sm->epoch = h->epoch;
	sm->cluster_t0 = h->cluster_t0;
	sm->cluster_executed = h->executed;
	sm->clbar_phase = h->clbar_phase;
	sm->flow_seq = h->flow_seq;
	sm->resume_cta = h->run_cta;
	sm->resume_w = h->run_cta != ~0u ?
		&sm->ctas[h->run_cta]->warps[h->run_warp] : NULL;
	sm->resume_quantum = h->quantum;
	return 0;
}
