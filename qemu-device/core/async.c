/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The copy engine: cp.async, bulk copies and tensor (TMA) copies (their
 * maps and walks: tensor.c).
 *
 * Every asynchronous copy becomes an operation in the SM's queue with a
 * completion time in simulated cycles: issue + latency + bytes/bandwidth
 * (struct vgpu_sm_config).  In the default schedule the engine works
 * through its queue in order; with VGPU_LAUNCH_RANDOM_SCHED each
 * operation gets a random latency (0.5x .. 2.5x) and they complete in
 * any order, so a program that reads a buffer before waiting for it sees
 * the difference.  Data moves when the operation completes: a load reads
 * global memory and writes shared memory then, and only then performs
 * complete-tx on its mbarrier; a store reads shared memory then.
 *
 * When no warp can run, the scheduler lets time pass to the next
 * completion (vgpu_async_next_done), so a warp waiting on an mbarrier that
 * a copy will complete is never reported as deadlocked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"

/* ---- global memory in pieces ---- */

int vgpu_gmem_xfer(const struct vgpu_launch *l, uint64_t addr, void *buf,
		   uint32_t len, bool write, uint64_t *fault)
{
	const struct vgpu_mem_ops *m = l->mem;
	uint8_t *p = buf;

	if (write ? m->write_block != NULL : m->read_block != NULL) {
		int r = write ? m->write_block(l->mem_opaque, addr, buf, len) :
				m->read_block(l->mem_opaque, addr, buf, len);

		*fault = addr;
		return r;
	}
	while (len) {
		uint32_t n = 16;

		while (n > 1 && ((addr & (n - 1)) || n > len))
			n /= 2;
		if (write ? m->write(l->mem_opaque, addr, p, n) :
			    m->read(l->mem_opaque, addr, p, n)) {
			*fault = addr;
			return -1;
		}
		addr += n;
		p += n;
		len -= n;
	}
	return 0;
}

/* ---- the queue ---- */

/*
 * Operations live in a pool of slots (sm->ops, free slots on sm->op_free);
 * the queue is a binary min-heap of small keys (done, seq, slot), so that
 * ordering moves 24 bytes, never a whole operation.  op_new() takes a
 * blank slot; once its fields (done above all) are set, op_queue() puts it
 * in the heap.  A caller that gives up before that hands it back with
 * op_drop().
 */
static struct vgpu_async_op *op_new(struct vgpu_sm *sm, struct vgpu_cta *c,
				    struct vgpu_warp *w, uint8_t kind)
{
	struct vgpu_async_op *op;
	uint32_t slot;

	if (sm->nfree) {
		slot = sm->op_free[--sm->nfree];
	} else {
		uint32_t cap = sm->ops_cap;

		if (!vgpu_grow((void **)&sm->ops, sm->nslots, &sm->ops_cap, sizeof(*op)))
			return NULL;
		if (sm->ops_cap != cap) {
			uint32_t *f = realloc(sm->op_free, sm->ops_cap * sizeof(*f));
			struct vgpu_async_key *k = f ? realloc(sm->op_heap,
							       sm->ops_cap * sizeof(*k)) : NULL;

			if (f)
				sm->op_free = f;
			if (!k) {
				sm->ops_cap = cap; /* the larger pool stays unused */
				return NULL;
			}
			sm->op_heap = k;
		}
		slot = sm->nslots++;
	}
	op = &sm->ops[slot];
	vgpu_zero(op, offsetof(struct vgpu_async_op, map)); /* not rep stosq */
	op->slot = slot;
	op->kind = kind;
	op->cta = (uint8_t)c->rank;
	op->warp = (uint8_t)w->id;
	op->pc = w->cur_pc;
	op->seq = sm->op_seq++;
	op->mbar = ~0u;
	op->flow = ++sm->flow_seq;
	return op;
}

static void op_drop(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	sm->op_free[sm->nfree++] = op->slot;
}

static bool key_before(const struct vgpu_async_key *a, const struct vgpu_async_key *b)
{
	return a->done < b->done || (a->done == b->done && a->seq < b->seq);
}

static void key_swap(struct vgpu_async_key *a, struct vgpu_async_key *b)
{
	struct vgpu_async_key t = *a;

	*a = *b;
	*b = t;
}

static const uint8_t trace_kind[] = {
	[VGPU_AOP_CP] = VGPU_TRACE_COPY_CP,
	[VGPU_AOP_BULK_LOAD] = VGPU_TRACE_COPY_BULK_LOAD,
	[VGPU_AOP_BULK_STORE] = VGPU_TRACE_COPY_BULK_STORE,
	[VGPU_AOP_TENSOR_LOAD] = VGPU_TRACE_COPY_TENSOR_LOAD,
	[VGPU_AOP_TENSOR_STORE] = VGPU_TRACE_COPY_TENSOR_STORE,
};

/* Timeline: copy @op has been issued (a deferred arrive is no copy). */
static void trace_issue(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *c = sm->ctas[op->cta];
	struct vgpu_trace_event ev = {
		.type = VGPU_TR_COPY_ISSUE,
		.id = trace_kind[op->kind],
		.flow = op->flow,
		.pc = vgpu_byte_pc(op->pc),
		.addr = op->kind == VGPU_AOP_CP ?
				op->lane_src[__builtin_ctz(op->lanes)] : op->gaddr,
		.addr2 = op->kind == VGPU_AOP_CP ?
				 op->lane_dst[__builtin_ctz(op->lanes)] : op->smem,
		.count = op->kind == VGPU_AOP_CP ?
				 op->size * vgpu_popcount(op->lanes) : op->size,
		.expected = op->mbar,
	};

	if (op->kind == VGPU_AOP_TENSOR_LOAD || op->kind == VGPU_AOP_TENSOR_STORE)
		ev.addr = op->map.base;
	vgpu_trace_emit(c, &c->warps[op->warp], &ev);
}

static void op_queue(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_async_key *h = sm->op_heap;
	uint32_t i = sm->nops++;

	if (vgpu_tracing(sm->ctas[op->cta]) && op->kind != VGPU_AOP_CP_ARRIVE)
		trace_issue(sm, op);
	h[i] = (struct vgpu_async_key){ .done = op->done, .seq = op->seq,
					.slot = op->slot };
	while (i && key_before(&h[i], &h[(i - 1) / 2])) {
		key_swap(&h[i], &h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

/* Take the earliest operation off the heap; its slot stays taken. */
static struct vgpu_async_op *op_pop(struct vgpu_sm *sm)
{
	struct vgpu_async_key *h = sm->op_heap;
	uint32_t i = 0, slot = h[0].slot;

	h[0] = h[--sm->nops];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < sm->nops && key_before(&h[l], &h[m]))
			m = l;
		if (r < sm->nops && key_before(&h[r], &h[m]))
			m = r;
		if (m == i)
			break;
		key_swap(&h[i], &h[m]);
		i = m;
	}
	return &sm->ops[slot];
}

static enum vgpu_xres no_memory(struct vgpu_cta *c, struct vgpu_warp *w,
				uint32_t em)
{
	vgpu_raise(c, w, VGPU_EXC_ABORTED, em, "copy engine out of host memory");
	return VGPU_X_EXC;
}

/* When an operation of @bytes issued now completes. */
static uint64_t op_done(struct vgpu_sm *sm, uint64_t bytes)
{
	uint64_t lat = sm->cfg.tma_latency, bw = sm->cfg.tma_bandwidth;
	uint64_t xfer = (bytes + bw - 1) / bw, start;

	if (sm->l->flags & VGPU_LAUNCH_RANDOM_SCHED) {
		lat = lat / 2 + vgpu_rng(sm) % (2 * lat + 1);
		return sm->clock + lat + xfer;
	}
	start = sm->clock + lat;
	if (start < sm->engine_free)
		start = sm->engine_free;
	sm->engine_free = start + xfer;
	return sm->engine_free;
}

uint64_t vgpu_async_next_done(const struct vgpu_sm *sm)
{
	return sm->nops ? sm->op_heap[0].done : UINT64_MAX;
}

/* Raise @code for operation @op, naming the instruction that issued it. */
bool vgpu_async_fail(struct vgpu_sm *sm, const struct vgpu_async_op *op, uint32_t code,
		     const char *fmt, ...)
{
	struct vgpu_cta *c = sm->ctas[op->cta];
	struct vgpu_warp *w = &c->warps[op->warp];
	struct vgpu_exception_record *e = sm->exc;
	char msg[VGPU_EXC_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vgpu_raise(c, w, code, op->lanes ? op->lanes : 1, "%s", msg);
	e->pc = vgpu_byte_pc(op->pc);
	e->insn[0] = c->prog->insns[op->pc].w[0];
	e->insn[1] = c->prog->insns[op->pc].w[1];
	return false;
}

/* ---- waiting for copies ---- */

static bool wait_satisfied(const struct vgpu_warp *w)
{
	if (w->wait_groups == ~0u)
		return w->cp_pending == 0;
	for (uint32_t g = 0; g < VGPU_BULK_GROUPS && g < w->bulk_committed; g++) {
		uint32_t seq = w->bulk_committed - 1 - g;

		if (g >= w->wait_groups && w->bulk_pending[seq % VGPU_BULK_GROUPS])
			return false;
	}
	return true;
}

static void recheck_waiter(struct vgpu_cta *c, struct vgpu_warp *w)
{
	if (w->state == VGPU_WS_ASYNC_WAIT && wait_satisfied(w))
		vgpu_warp_wake(c, w);
}

/* ---- completing operations ---- */

/* Sanitizer: a copy into shared memory must not overwrite a live mbarrier. */
static bool smem_dst_ok(struct vgpu_sm *sm, const struct vgpu_async_op *op,
			const struct vgpu_cta *t, uint32_t off, uint32_t len)
{
	if (!sm->sanitize || !t->nmbars)
		return true;
	for (uint32_t o = off & ~7u; o < off + len; o += 8)
		if ((t->shadow[o / 64] >> ((o / 8) % 8)) & 1)
			return vgpu_async_fail(sm, op, VGPU_EXC_MBAR_ACCESS,
				       "asynchronous copy into shared 0x%x..0x%x overwrites the live mbarrier at 0x%x",
				       off, off + len - 1, o);
	return true;
}

static bool smem_write_checked(struct vgpu_sm *sm, const struct vgpu_async_op *op,
			       struct vgpu_cta *t, uint32_t off, const void *src,
			       uint32_t len)
{
	if (!smem_dst_ok(sm, op, t, off, len))
		return false;
	memcpy(t->smem + off, src, len);
	return true;
}

static bool signal_mbar(struct vgpu_sm *sm, const struct vgpu_async_op *op,
			uint32_t bytes)
{
	struct vgpu_cta *t = sm->ctas[op->mbar_cta];

	if (!vgpu_mbar_async_complete_tx(t, op->mbar, bytes))
		return vgpu_async_fail(sm, op, VGPU_EXC_MBAR_RANGE,
			       "complete_tx of %u bytes on mbarrier 0x%x: not valid or tx-count out of range",
			       bytes, op->mbar);
	return true;
}

static bool do_cp(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *c = sm->ctas[op->cta];
	uint8_t buf[16];
	uint64_t fault;

	VGPU_FOR_LANES(op->lanes, l) {
		if (vgpu_gmem_xfer(sm->l, op->lane_src[l], buf, op->size, false, &fault)) {
			vgpu_async_fail(sm, op, VGPU_EXC_GLOBAL_FAULT,
				"global memory fault: cp.async of %u bytes from 0x%llx",
				op->size, (unsigned long long)fault);
			sm->exc->addr = fault;
			return false;
		}
		if (!smem_write_checked(sm, op, c, op->lane_dst[l], buf, op->size))
			return false;
	}
	c->warps[op->warp].cp_pending--;
	recheck_waiter(c, &c->warps[op->warp]);
	return true;
}

static bool do_bulk_load(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *t = sm->ctas[op->dst_cta];
	uint64_t fault;

	if (!smem_dst_ok(sm, op, t, op->smem, op->size))
		return false;
	if (vgpu_gmem_xfer(sm->l, op->gaddr, t->smem + op->smem, op->size, false, &fault)) {
		vgpu_async_fail(sm, op, VGPU_EXC_GLOBAL_FAULT,
			"global memory fault: bulk copy of %u bytes from 0x%llx",
			op->size, (unsigned long long)op->gaddr);
		sm->exc->addr = fault;
		return false;
	}
	return signal_mbar(sm, op, op->size);
}

static void group_done(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *c = sm->ctas[op->cta];
	struct vgpu_warp *w = &c->warps[op->warp];

	w->bulk_pending[op->group % VGPU_BULK_GROUPS]--;
	recheck_waiter(c, w);
}

static bool do_bulk_store(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *c = sm->ctas[op->cta];
	uint64_t fault;

	if (vgpu_gmem_xfer(sm->l, op->gaddr, c->smem + op->smem, op->size, true, &fault)) {
		vgpu_async_fail(sm, op, VGPU_EXC_GLOBAL_FAULT,
			"global memory fault: bulk store of %u bytes to 0x%llx",
			op->size, (unsigned long long)op->gaddr);
		sm->exc->addr = fault;
		return false;
	}
	group_done(sm, op);
	return true;
}

/* ---- tensors (the walks: tensor.c) ---- */

static bool do_tensor_load(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	if (!smem_dst_ok(sm, op, sm->ctas[op->dst_cta], op->smem, op->size))
		return false;
	return vgpu_tensor_move(sm, op, false) && signal_mbar(sm, op, op->size);
}

static bool do_tensor_store(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	if (!vgpu_tensor_move(sm, op, true))
		return false;
	group_done(sm, op);
	return true;
}

static bool do_cp_arrive(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *t = sm->ctas[op->mbar_cta];
	uint32_t n = vgpu_popcount(op->lanes);

	if (!vgpu_mbar_async_arrive(t, op->mbar, n))
		return vgpu_async_fail(sm, op, VGPU_EXC_MBAR_RANGE,
			       "cp.async.mbarrier.arrive of %u on mbarrier 0x%x: not valid or more than pending",
			       n, op->mbar);
	return true;
}

static bool op_run(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	switch (op->kind) {
	case VGPU_AOP_CP: return do_cp(sm, op);
	case VGPU_AOP_CP_ARRIVE: return do_cp_arrive(sm, op);
	case VGPU_AOP_BULK_LOAD: return do_bulk_load(sm, op);
	case VGPU_AOP_BULK_STORE: return do_bulk_store(sm, op);
	case VGPU_AOP_TENSOR_LOAD: return do_tensor_load(sm, op);
	default: return do_tensor_store(sm, op);
	}
}

/*
 * Complete @op.  On the timeline its COPY_DONE comes first; what it
 * completes (an mbarrier phase, a waiting warp) names it as the cause.
 */
static bool op_complete(struct vgpu_sm *sm, const struct vgpu_async_op *op)
{
	struct vgpu_cta *c = sm->ctas[op->cta];
	bool ok;

	sm->epoch++;
	if (op->kind != VGPU_AOP_CP_ARRIVE)
		VGPU_TRACE(c, NULL, .type = VGPU_TR_COPY_DONE, .flow = op->flow,
			   .id = trace_kind[op->kind]);
	sm->copy_flow = op->flow;
	sm->wake_flow = op->flow;
	ok = op_run(sm, op);
	sm->copy_flow = 0;
	sm->wake_flow = 0;
	return ok;
}

/* Complete every operation whose time has come, in time (then issue) order. */
bool vgpu_async_progress(struct vgpu_sm *sm)
{
	while (sm->nops && sm->op_heap[0].done <= sm->clock) {
		/* completing issues nothing: the slot stays put until freed */
		struct vgpu_async_op *op = op_pop(sm);
		bool ok = op_complete(sm, op);

		op_drop(sm, op);
		if (!ok)
			return false;
	}
	return true;
}

/* ---- instructions ---- */

static bool copy_fail(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
		      const char *what, uint64_t addr)
{
	vgpu_raise(c, w, VGPU_EXC_ASYNC_COPY, em, "%s", what);
	c->sm->exc->addr = addr;
	return false;
}

static uint64_t gaddr_of(struct vgpu_warp *w, uint16_t row, uint32_t lane)
{
	return (uint64_t)vgpu_reg(w, row + 1)[lane] << 32 | vgpu_reg(w, row)[lane];
}

/* CP.ASYNC [dst], [src], 4|8|16: one operation for the warp's lanes. */
VGPU_EXEC_PROTO(vgpu_exec_cp_async)
{
	uint32_t size = d->imm;
	struct vgpu_async_op *op;

	if (size != 4 && size != 8 && size != 16) {
		copy_fail(c, w, em, "cp.async size must be 4, 8 or 16 bytes", size);
		return VGPU_X_EXC;
	}
	op = op_new(c->sm, c, w, VGPU_AOP_CP);
	if (!op)
		return no_memory(c, w, em);
	op->lanes = em;
	op->size = size;
	VGPU_FOR_LANES(em, l) {
		uint32_t dst = vgpu_reg(w, d->ra)[l], off;
		uint64_t src = gaddr_of(w, d->rc, l);
		struct vgpu_cta *t;

		if (dst % size || src % size) {
			op_drop(c->sm, op);
			vgpu_raise(c, w, VGPU_EXC_MISALIGNED, em,
				   "cp.async of %u bytes: shared 0x%x / global 0x%llx not aligned",
				   size, dst, (unsigned long long)src);
			c->sm->exc->addr = dst % size ? dst : src;
			return VGPU_X_EXC;
		}
		t = vgpu_smem_resolve(c, w, em, dst, size, &off);
		if (!t || t != c) {
			op_drop(c->sm, op);
			if (t)
				copy_fail(c, w, em,
					  "cp.async writes the CTA's own shared memory only", dst);
			return VGPU_X_EXC;
		}
		op->lane_dst[l] = off;
		op->lane_src[l] = src;
	}
	op->done = op_done(c->sm, (uint64_t)size * vgpu_popcount(em));
	if (op->done > w->cp_last_done)
		w->cp_last_done = op->done;
	op_queue(c->sm, op);
	w->cp_pending++;
	return VGPU_X_NEXT;
}

/* CP.ASYNC.MBARRIER.ARRIVE[.NOINC] [mbar] */
VGPU_EXEC_PROTO(vgpu_exec_cp_async_arrive)
{
	bool noinc = d->mod[0] == VGPU_MOD_CPNOINC_NOINC;
	uint32_t off, n = vgpu_popcount(em);
	struct vgpu_cta *t = vgpu_mbar_at(c, w, em, vgpu_uniform(w, d->ra, em), &off);
	struct vgpu_async_op *op;
	uint64_t done = c->sm->clock + 1;

	if (!t)
		return VGPU_X_EXC;
	if (!noinc && !vgpu_mbar_pending_inc(c, w, em, t, off, n))
		return VGPU_X_EXC;
	/* after every cp.async this warp has issued */
	if (w->cp_last_done >= done)
		done = w->cp_last_done + 1;
	op = op_new(c->sm, c, w, VGPU_AOP_CP_ARRIVE);
	if (!op)
		return no_memory(c, w, em);
	op->lanes = em;
	op->mbar_cta = (uint8_t)t->rank;
	op->mbar = off;
	op->done = done;
	op_queue(c->sm, op);
	return VGPU_X_NEXT;
}

static enum vgpu_xres wait_copies(struct vgpu_cta *c, struct vgpu_warp *w,
				  uint32_t groups)
{
	w->wait_groups = groups;
	if (wait_satisfied(w))
		return VGPU_X_NEXT;
	vgpu_warp_suspend(c, w, VGPU_WS_ASYNC_WAIT, 0);
	return VGPU_X_BLOCK;
}

VGPU_EXEC_PROTO(vgpu_exec_cp_async_wait_all)
{
	return wait_copies(c, w, ~0u);
}

VGPU_EXEC_PROTO(vgpu_exec_cp_bulk_commit)
{
	uint32_t next = w->bulk_committed + 1;

	if (w->bulk_pending[next % VGPU_BULK_GROUPS]) {
		vgpu_raise(c, w, VGPU_EXC_ASYNC_COPY, em,
			   "more than %u bulk async-groups in flight", VGPU_BULK_GROUPS);
		return VGPU_X_EXC;
	}
	w->bulk_committed = next;
	return VGPU_X_NEXT;
}

VGPU_EXEC_PROTO(vgpu_exec_cp_bulk_wait)
{
	return wait_copies(c, w, d->imm);
}

static bool bulk_args_ok(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			 uint32_t smem, uint64_t gaddr, uint32_t size)
{
	char msg[128];

	if (size && !(size % 16) && !(smem % 16) && !(gaddr % 16))
		return true;
	snprintf(msg, sizeof(msg),
		 "bulk copy of %u bytes between shared 0x%x and global 0x%llx: "
		 "size and addresses must be non-zero multiples of 16",
		 size, smem, (unsigned long long)gaddr);
	return copy_fail(c, w, em, msg, size % 16 ? size : smem % 16 ? smem : gaddr);
}

static uint32_t size_operand(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			     uint32_t lane)
{
	return d->stype == VGPU_ST_I ? d->imm : vgpu_reg(w, d->rb)[lane];
}

/* CP.ASYNC.BULK [dst], [src], size, [mbar]: each active lane issues one. */
VGPU_EXEC_PROTO(vgpu_exec_cp_bulk)
{
	VGPU_FOR_LANES(em, l) {
		uint32_t dst = vgpu_reg(w, d->ra)[l], size = size_operand(w, d, l);
		uint64_t src = gaddr_of(w, d->rc, l);
		uint32_t off, moff;
		struct vgpu_cta *t, *mt;
		struct vgpu_async_op *op;

		if (!bulk_args_ok(c, w, 1u << l, dst, src, size))
			return VGPU_X_EXC;
		t = vgpu_smem_resolve(c, w, 1u << l, dst, size, &off);
		if (!t)
			return VGPU_X_EXC;
		mt = vgpu_mbar_at(c, w, 1u << l, vgpu_reg(w, d->re)[l], &moff);
		if (!mt)
			return VGPU_X_EXC;
		op = op_new(c->sm, c, w, VGPU_AOP_BULK_LOAD);
		if (!op)
			return no_memory(c, w, em);
		op->lanes = 1u << l;
		op->dst_cta = (uint8_t)t->rank;
		op->smem = off;
		op->gaddr = src;
		op->size = size;
		op->mbar_cta = (uint8_t)mt->rank;
		op->mbar = moff;
		op->done = op_done(c->sm, size);
		op_queue(c->sm, op);
	}
	return VGPU_X_NEXT;
}

/* CP.ASYNC.BULK.GLOBAL [dst], [src], size: into the open bulk group. */
VGPU_EXEC_PROTO(vgpu_exec_cp_bulk_store)
{
	VGPU_FOR_LANES(em, l) {
		uint64_t dst = gaddr_of(w, d->ra, l);
		uint32_t src = vgpu_reg(w, d->rc)[l], size = size_operand(w, d, l), off;
		struct vgpu_cta *t;
		struct vgpu_async_op *op;

		if (!bulk_args_ok(c, w, 1u << l, src, dst, size))
			return VGPU_X_EXC;
		t = vgpu_smem_resolve(c, w, 1u << l, src, size, &off);
		if (!t)
			return VGPU_X_EXC;
		if (t != c) {
			copy_fail(c, w, 1u << l,
				  "bulk stores read the CTA's own shared memory only", src);
			return VGPU_X_EXC;
		}
		op = op_new(c->sm, c, w, VGPU_AOP_BULK_STORE);
		if (!op)
			return no_memory(c, w, em);
		op->lanes = 1u << l;
		op->smem = off;
		op->gaddr = dst;
		op->size = size;
		op->group = w->bulk_committed;
		op->done = op_done(c->sm, size);
		op_queue(c->sm, op);
		w->bulk_pending[op->group % VGPU_BULK_GROUPS]++;
	}
	return VGPU_X_NEXT;
}

/*
 * The tensor copies: one operation per active lane.  @mode: the tile or
 * im2col instruction (VGPU_TMAP_*), whose offsets a load has in rd; @red:
 * a reduction's VGPU_MOD_TRED_* (a store's walk), else -1.
 */
static enum vgpu_xres tensor_issue(struct vgpu_cta *c, struct vgpu_warp *w,
				   const struct vgpu_dinsn *d, uint32_t em,
				   bool store, uint32_t mode, int red)
{
	uint32_t rank = (red >= 0 ? d->mod[1] : d->mod[0]) + 1u;

	VGPU_FOR_LANES(em, l) {
		uint32_t smem = vgpu_reg(w, d->ra)[l], off, moff = 0, bytes;
		uint64_t maddr = gaddr_of(w, d->rb, l), box;
		int32_t coord[VGPU_TMAP_MAX_RANK] = { 0 };
		uint32_t ioff[3] = { 0 };
		struct vgpu_tensor_map map;
		struct vgpu_cta *t, *mt = NULL;
		struct vgpu_async_op *op;

		if (!vgpu_tensor_map_load(c, w, 1u << l, maddr, rank, mode, &map))
			return VGPU_X_EXC;
		if (red >= 0 && !vgpu_tensor_red_ok(c, w, 1u << l, &map, maddr, (uint32_t)red))
			return VGPU_X_EXC;
		for (uint32_t k = 0; k < rank; k++)
			coord[k] = (int32_t)vgpu_reg(w, d->rc + k)[l];
		if (mode != VGPU_TMAP_IM2COL &&
		    !vgpu_tensor_tile_coords_ok(c, w, 1u << l, &map, maddr, coord, store, red >= 0))
			return VGPU_X_EXC;
		if (mode == VGPU_TMAP_IM2COL) {
			for (uint32_t k = 0; !store && k < rank - 2; k++)
				ioff[k] = vgpu_reg(w, d->rd + k)[l];
			if (!vgpu_tensor_im2col_ok(c, w, 1u << l, &map, maddr, coord, ioff,
						   store))
				return VGPU_X_EXC;
		}
		/*
		 * A valid map's box can be 256^5 elements of 8 bytes (8 TiB):
		 * never truncate it to fit the size shared memory is checked with
		 */
		box = vgpu_tensor_bytes(&map);
		if (box > UINT32_MAX) {
			vgpu_raise(c, w, VGPU_EXC_SMEM_RANGE, 1u << l,
				   "tensor copy: a %llu-byte box is larger than any shared memory",
				   (unsigned long long)box);
			c->sm->exc->addr = smem;
			return VGPU_X_EXC;
		}
		bytes = (uint32_t)box;
		if (smem % 16) {
			copy_fail(c, w, 1u << l,
				  "tensor copy: shared address must be 16-byte aligned", smem);
			return VGPU_X_EXC;
		}
		t = vgpu_smem_resolve(c, w, 1u << l, smem, bytes, &off);
		if (!t)
			return VGPU_X_EXC;
		if (store && t != c) {
			copy_fail(c, w, 1u << l,
				  "tensor stores read the CTA's own shared memory only", smem);
			return VGPU_X_EXC;
		}
		if (!store) {
			mt = vgpu_mbar_at(c, w, 1u << l, vgpu_reg(w, d->re)[l], &moff);
			if (!mt)
				return VGPU_X_EXC;
		}
		op = op_new(c->sm, c, w, store ? VGPU_AOP_TENSOR_STORE : VGPU_AOP_TENSOR_LOAD);
		if (!op)
			return no_memory(c, w, em);
		op->lanes = 1u << l;
		op->red = (uint8_t)(red + 1);
		op->map = map;
		memcpy(op->coord, coord, sizeof(coord));
		for (uint32_t k = 0; k < 3; k++) /* checked: 16 bits */
			op->im2col_off[k] = (uint16_t)ioff[k];
		op->dst_cta = (uint8_t)t->rank;
		op->smem = off;
		op->size = bytes;
		if (store) {
			op->group = w->bulk_committed;
			w->bulk_pending[op->group % VGPU_BULK_GROUPS]++;
		} else {
			op->mbar_cta = (uint8_t)mt->rank;
			op->mbar = moff;
		}
		op->done = op_done(c->sm, bytes);
		op_queue(c->sm, op);
	}
	return VGPU_X_NEXT;
}

VGPU_EXEC_PROTO(vgpu_exec_cp_tensor)
{
	return tensor_issue(c, w, d, em, false, VGPU_TMAP_TILE, -1);
}

VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_store)
{
	return tensor_issue(c, w, d, em, true, VGPU_TMAP_TILE, -1);
}

/* CP.ASYNC.BULK.TENSOR.IM2COL.ND [dst], [map], coords, [mbar], offsets */
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_im2col)
{
	return tensor_issue(c, w, d, em, false, VGPU_TMAP_IM2COL, -1);
}

/* CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.ND [map], coords, [src] */
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_store_im2col)
{
	return tensor_issue(c, w, d, em, true, VGPU_TMAP_IM2COL, -1);
}

/*
 * CP.REDUCE.ASYNC.BULK.TENSOR.OP.ND [map], coords, [src] (and .IM2COL):
 * a store's walk, each element reduced into global memory (tensor.c)
 */
VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_red)
{
	return tensor_issue(c, w, d, em, true, VGPU_TMAP_TILE, (int)d->mod[0]);
}

VGPU_EXEC_PROTO(vgpu_exec_cp_tensor_red_im2col)
{
	return tensor_issue(c, w, d, em, true, VGPU_TMAP_IM2COL, (int)d->mod[0]);
}
