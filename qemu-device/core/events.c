/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The SM's events and exceptions: exception names, timeline events (the
 * launch's hook and the trace sink of struct vgpu_trace_sink), and
 * vgpu_raise(), which fills the SM's exception record with the warp's
 * pc, instruction and every warp's wait.  Split from sm.c.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core_priv.h"

static const char *const exc_names[] = {
#define VGPU_X_EXC(name, val, str) [val] = str,
	VGPU_EXC_CODES(VGPU_X_EXC)
#undef VGPU_X_EXC
};

const char *vgpu_exc_name(uint32_t code)
{
	if (code < sizeof(exc_names) / sizeof(exc_names[0]) && exc_names[code])
		return exc_names[code];
	return "unknown exception";
}

/* ---- Timeline events ---- */

void vgpu_trace_emit_at(struct vgpu_cta *c, const struct vgpu_warp *w,
			struct vgpu_trace_event *ev, uint64_t clock)
{
	const struct vgpu_launch *l = c->l;

	ev->cycle = clock - c->sm->cluster_t0;
	memcpy(ev->cta, c->id, sizeof(ev->cta));
	ev->warp = w ? w->id : VGPU_TRACE_NO_WARP;
	if (w && !ev->pc)
		ev->pc = vgpu_byte_pc(w->cur_pc);
	l->event(l->event_opaque, ev);
}

void vgpu_trace_emit(struct vgpu_cta *c, const struct vgpu_warp *w,
		     struct vgpu_trace_event *ev)
{
	vgpu_trace_emit_at(c, w, ev, c->sm->clock);
}

uint32_t vgpu_trace_complete(struct vgpu_cta *t, uint16_t type, uint32_t id,
			     uint64_t addr, uint32_t count, uint32_t expected)
{
	struct vgpu_sm *sm = t->sm;
	struct vgpu_trace_event ev = {
		.type = type, .id = id, .addr = addr,
		.count = count, .expected = expected,
		.addr2 = sm->run_w ? 0 : sm->copy_flow,
	};

	if (!vgpu_tracing(t))
		return 0;
	ev.flow = ++sm->flow_seq;
	if (sm->run_w)
		vgpu_trace_emit(sm->run_cta, sm->run_w, &ev);
	else
		vgpu_trace_emit(t, NULL, &ev);
	return ev.flow;
}

void vgpu_trace_sink_event(void *sink, const struct vgpu_trace_event *ev)
{
	struct vgpu_trace_sink *s = sink;
	uint64_t i = atomic_fetch_add(&s->offered, 1);

	if (i < s->capacity)
		s->rec[i] = *ev;
	if (s->chain)
		s->chain(s->chain_opaque, ev);
}

uint32_t vgpu_trace_sink_header(struct vgpu_trace_sink *s,
				struct vgpu_trace_header *h)
{
	uint64_t n = atomic_load(&s->offered);
	uint32_t kept = n < s->capacity ? (uint32_t)n : s->capacity;

	*h = (struct vgpu_trace_header){
		.magic = VGPU_TRACE_MAGIC,
		.version = VGPU_TRACE_VERSION,
		.record_bytes = sizeof(struct vgpu_trace_event),
		.capacity = s->capacity,
		.count = kept,
		.dropped = n - kept,
	};
	return kept;
}

uint32_t vgpu_trace_capacity(uint64_t bytes)
{
	if (bytes > VGPU_TRACE_MAX_BYTES)
		bytes = VGPU_TRACE_MAX_BYTES;
	if (bytes < sizeof(struct vgpu_trace_header))
		return 0;
	return (uint32_t)((bytes - sizeof(struct vgpu_trace_header)) /
			  sizeof(struct vgpu_trace_event));
}

static uint8_t warp_wait_code(const struct vgpu_cta *c, uint32_t i)
{
	const struct vgpu_warp *w = &c->warps[i];

	if (i >= c->nwarps)
		return VGPU_WAIT_ABSENT;
	if (w->state == VGPU_WS_RUNNABLE && vgpu_warp_spinning(c->sm, w))
		return VGPU_WAIT_MBAR;
	switch (w->state) {
	case VGPU_WS_BLOCKED: return w->wait_bar;
	case VGPU_WS_SLEEPING: return VGPU_WAIT_SLEEP;
	case VGPU_WS_EXITED: return VGPU_WAIT_EXITED;
	case VGPU_WS_MBAR_WAIT: return VGPU_WAIT_MBAR;
	case VGPU_WS_CLUSTER_WAIT: return VGPU_WAIT_CLUSTER;
	case VGPU_WS_ASYNC_WAIT: return VGPU_WAIT_ASYNC;
	default: return VGPU_WAIT_NONE;
	}
}

void vgpu_raise(struct vgpu_cta *c, const struct vgpu_warp *w, uint32_t code,
		uint32_t lane_mask, const char *fmt, ...)
{
	struct vgpu_sm *sm = c->sm;
	struct vgpu_exception_record *e = sm->exc;
	va_list ap;

	if (sm->exc_raised)
		return;
	sm->exc_raised = true;
	memset(e, 0, sizeof(*e));
	e->code = code;
	memcpy(e->cta, c->id, sizeof(e->cta));
	e->barid = 0xffffffffu;
	if (w) {
		uint32_t pc = vgpu_warp_waiting(w)	? w->wait_pc :
			      vgpu_warp_spinning(sm, w) ? w->spin_pc :
							  w->cur_pc;

		e->warp = w->id;
		e->lane_mask = lane_mask;
		e->pc = vgpu_byte_pc(pc);
		if (pc < c->prog->n) {
			e->insn[0] = c->prog->insns[pc].w[0];
			e->insn[1] = c->prog->insns[pc].w[1];
		}
	}
	for (uint32_t i = 0; i < VGPU_MAX_WARPS_PER_CTA; i++)
		e->warp_wait[i] = warp_wait_code(c, i);
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	VGPU_TRACE(c, w, .type = VGPU_TR_EXCEPTION, .id = code,
		   .count = lane_mask, .pc = e->pc, .addr = e->addr);
}
