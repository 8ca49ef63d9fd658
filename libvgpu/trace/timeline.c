// SPDX-License-Identifier: MIT
/*
 * Timelines: the records of a VGPU_LAUNCH_TIMELINE launch (uapi/vgpu_hw.h)
 * as one text line each, and as the Chrome trace-event JSON format that
 * ui.perfetto.dev, chrome://tracing and Perfetto's trace_processor open.
 *
 * Mapping (docs/tools.md shows a picture):
 *   a process per CTA ("CTA (x,y,z)"), a thread per warp, and a thread
 *   "copy engine" for what the CTA's copies do when they complete;
 *   RUN -> a complete slice "run" (pc, instructions);
 *   BLOCK..UNBLOCK -> a complete slice named after what the warp waits on
 *   ("barrier 1", "mbarrier 0x10", "sleep", ...), args with the counts;
 *   a warp still blocked at the end (a deadlock) keeps its slice to the
 *   CTA's last event, args.unresolved = true;
 *   BAR/MBAR/CLUSTER_COMPLETE -> a flow ("s" on the completer's track,
 *   "f" bound to the end of each released warp's wait slice);
 *   COPY_ISSUE..COPY_DONE -> an async slice (b/e, id = the copy) on the
 *   copy engine with bytes and addresses, and a flow from COPY_DONE to a
 *   warp its completion released (CP.ASYNC.WAIT_ALL, WAIT_GROUP);
 *   arrivals, polls -> instant events; EXCEPTION -> a process-wide
 *   instant event with the record in args.
 * Time: "ts" is the SM cycle (so 1 us on the viewer's axis is 1 cycle).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

static const char *const type_names[] = {
	[VGPU_TR_CTA_BEGIN] = "CTA_BEGIN",
	[VGPU_TR_CTA_END] = "CTA_END",
	[VGPU_TR_RUN] = "RUN",
	[VGPU_TR_BLOCK] = "BLOCK",
	[VGPU_TR_UNBLOCK] = "UNBLOCK",
	[VGPU_TR_EXIT] = "EXIT",
	[VGPU_TR_BAR_ARRIVE] = "BAR_ARRIVE",
	[VGPU_TR_BAR_COMPLETE] = "BAR_COMPLETE",
	[VGPU_TR_MBAR_ARRIVE] = "MBAR_ARRIVE",
	[VGPU_TR_MBAR_COMPLETE] = "MBAR_COMPLETE",
	[VGPU_TR_MBAR_POLL] = "MBAR_POLL",
	[VGPU_TR_COPY_ISSUE] = "COPY_ISSUE",
	[VGPU_TR_COPY_DONE] = "COPY_DONE",
	[VGPU_TR_CLUSTER_COMPLETE] = "CLUSTER_COMPLETE",
	[VGPU_TR_EXCEPTION] = "EXCEPTION",
};

static const char *const wait_names[] = {
	[VGPU_TRACE_WAIT_BAR] = "barrier",
	[VGPU_TRACE_WAIT_MBAR] = "mbarrier",
	[VGPU_TRACE_WAIT_SLEEP] = "sleep",
	[VGPU_TRACE_WAIT_CLUSTER] = "cluster barrier",
	[VGPU_TRACE_WAIT_ASYNC] = "copies",
};

static const char *const copy_names[] = {
	[VGPU_TRACE_COPY_CP] = "cp.async",
	[VGPU_TRACE_COPY_BULK_LOAD] = "bulk load",
	[VGPU_TRACE_COPY_BULK_STORE] = "bulk store",
	[VGPU_TRACE_COPY_TENSOR_LOAD] = "tensor load",
	[VGPU_TRACE_COPY_TENSOR_STORE] = "tensor store",
};

#define NAME(tab, i)                                                           \
	((size_t)(i) < sizeof(tab) / sizeof(tab[0]) && tab[i] ? tab[i] : "?")

const char *vgpu_trace_type_name(uint32_t type)
{
	return NAME(type_names, type);
}

const char *vgpu_trace_wait_name(uint32_t reason)
{
	return NAME(wait_names, reason);
}

const char *vgpu_trace_copy_name(uint32_t kind)
{
	return NAME(copy_names, kind);
}

void vgpu_trace_print(FILE *f, const struct vgpu_trace_event *ev)
{
	flockfile(f); /* one whole line, whoever else writes to @f */
	fprintf(f, "[%10llu] %-16s cta (%u,%u,%u)", ev->cycle,
		vgpu_trace_type_name(ev->type), ev->cta[0], ev->cta[1], ev->cta[2]);
	if (ev->warp != VGPU_TRACE_NO_WARP)
		fprintf(f, " warp %2u pc 0x%04x", ev->warp, ev->pc);
	else
		fprintf(f, " copy engine");
	switch (ev->type) {
	case VGPU_TR_RUN:
		fprintf(f, " insns %u", ev->count);
		break;
	case VGPU_TR_BLOCK:
	case VGPU_TR_UNBLOCK:
		fprintf(f, " %s", vgpu_trace_wait_name(ev->reason));
		if (ev->reason == VGPU_TRACE_WAIT_BAR)
			fprintf(f, " %u", ev->id);
		if (ev->type == VGPU_TR_BLOCK && ev->reason == VGPU_TRACE_WAIT_BAR)
			fprintf(f, " count %u expected %u", ev->count, ev->expected);
		if (ev->type == VGPU_TR_BLOCK && ev->reason == VGPU_TRACE_WAIT_MBAR)
			fprintf(f, " 0x%llx phase %u", ev->addr, ev->id);
		if (ev->type == VGPU_TR_UNBLOCK && ev->flow)
			fprintf(f, " flow %u", ev->flow);
		break;
	case VGPU_TR_BAR_ARRIVE:
	case VGPU_TR_BAR_COMPLETE:
		fprintf(f, " barid %u count %u expected %u", ev->id, ev->count,
			ev->expected);
		break;
	case VGPU_TR_MBAR_ARRIVE:
		fprintf(f, " 0x%llx arrivals %u pending %u", ev->addr,
			ev->count, ev->expected);
		break;
	case VGPU_TR_MBAR_COMPLETE:
		fprintf(f, " 0x%llx phase %u", ev->addr, ev->id);
		break;
	case VGPU_TR_MBAR_POLL:
		fprintf(f, " 0x%llx phase %u true %u/%u", ev->addr, ev->id,
			ev->count, ev->expected);
		break;
	case VGPU_TR_COPY_ISSUE:
		fprintf(f, " %s %u bytes global 0x%llx shared 0x%llx",
			vgpu_trace_copy_name(ev->id), ev->count, ev->addr, ev->addr2);
		break;
	case VGPU_TR_EXCEPTION:
		fprintf(f, " %s", vgpu_exception_name(ev->id));
		break;
	default:
		break;
	}
	if (ev->flow && ev->type != VGPU_TR_UNBLOCK)
		fprintf(f, " flow %u", ev->flow);
	fputc('\n', f);
	funlockfile(f);
}

/* ---- reading a buffer ---- */

int vgpu_trace_read(const void *buf, uint64_t size, struct vgpu_trace_event **out,
		    uint32_t *count, uint64_t *dropped)
{
	struct vgpu_trace_header h;
	uint64_t room;

	*out = NULL;
	*count = 0;
	*dropped = 0;
	if (size < sizeof(h))
		return -EINVAL;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != VGPU_TRACE_MAGIC)
		return -ENODATA; /* the launch never started */
	room = (size - sizeof(h)) / sizeof(struct vgpu_trace_event);
	/* the buffer is ordinary GPU memory: a kernel may have written it */
	if (h.version != VGPU_TRACE_VERSION ||
	    h.record_bytes != sizeof(struct vgpu_trace_event) ||
	    h.capacity > room || h.count > h.capacity)
		return -EIO;
	if (h.count) {
		*out = malloc(h.count * sizeof(**out));
		if (!*out)
			return -ENOMEM;
		memcpy(*out, (const uint8_t *)buf + sizeof(h),
		       h.count * sizeof(**out));
	}
	*count = (uint32_t)h.count;
	*dropped = h.dropped;
	return 0;
}

/* ---- Chrome trace-event JSON ---- */

#define ENGINE_TID 100u /* the copy engine's track in each CTA */

/* One output event: sorted by track and time before printing. */
struct out {
	uint32_t pid, tid;
	uint64_t ts;
	uint64_t seq;
	char *json;
};

struct conv {
	const struct vgpu_timeline_info *info;
	const struct vgpu_trace_event *ev;
	uint32_t n;
	int64_t *unblock;   /* per BLOCK: its UNBLOCK's index, -1: none */
	uint64_t *end;	    /* per event: the last cycle of its CTA */
	uint32_t *sources;  /* completions, by (cluster, flow) */
	uint32_t nsources;
	struct out *outs;
	size_t nouts, cap;
	uint64_t seq;
	uint64_t next_flow;
	bool oom;
};

static uint32_t cta_linear(const struct vgpu_timeline_info *in, const uint32_t *cta)
{
	return cta[0] + in->grid[0] * (cta[1] + in->grid[1] * cta[2]);
}

static uint32_t pid_of(const struct conv *cv, const struct vgpu_trace_event *e)
{
	return cta_linear(cv->info, e->cta) + 1 +
	       (cv->info->map ? cv->info->map->pid_base : 0);
}

/*
 * With a map, the first "ts" and "dur" of @s (the event's own: both come
 * before its args) in us; a new string, or NULL without memory.
 */
static char *map_times(const struct vgpu_timeline_map *m, char *s)
{
	static const char *const keys[] = { "\"ts\":", "\"dur\":" };
	char *cur = s;

	for (int k = 0; k < 2; k++) {
		char *p = strstr(cur, keys[k]), *end, *n;
		unsigned long long v;
		double us;

		if (!p)
			continue;
		p += strlen(keys[k]);
		v = strtoull(p, &end, 10);
		us = k ? (double)v * m->us_per_cycle : m->t0_us + (double)v * m->us_per_cycle;
		if (asprintf(&n, "%.*s%.3f%s", (int)(p - cur), cur, us, end) < 0) {
			free(cur);
			return NULL;
		}
		free(cur);
		cur = n;
	}
	return cur;
}

static uint32_t tid_of(const struct vgpu_trace_event *e)
{
	return e->warp == VGPU_TRACE_NO_WARP ? ENGINE_TID : e->warp;
}

/* The cluster of a CTA: flow numbers are unique within one. */
static uint32_t cluster_of(const struct conv *cv, const uint32_t *cta)
{
	const struct vgpu_timeline_info *in = cv->info;
	uint32_t c[3], n[3];

	for (int i = 0; i < 3; i++) {
		uint32_t d = in->cluster[i] ? in->cluster[i] : 1;

		c[i] = cta[i] / d;
		n[i] = (in->grid[i] + d - 1) / d;
	}
	return c[0] + n[0] * (c[1] + n[1] * c[2]);
}

__attribute__((format(printf, 5, 6))) static void
emit(struct conv *cv, uint32_t pid, uint32_t tid, uint64_t ts, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (cv->oom)
		return;
	if (cv->nouts == cv->cap) {
		size_t ncap = cv->cap ? 2 * cv->cap : 256;
		struct out *p = realloc(cv->outs, ncap * sizeof(*p));

		if (!p) {
			cv->oom = true;
			return;
		}
		cv->outs = p;
		cv->cap = ncap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0) {
		cv->oom = true;
		va_end(ap);
		return;
	}
	va_end(ap);
	if (cv->info->map && !(s = map_times(cv->info->map, s))) {
		cv->oom = true;
		return;
	}
	cv->outs[cv->nouts++] = (struct out){ pid, tid, ts, cv->seq++, s };
}

#define HDR "\"pid\":%u,\"tid\":%u,\"ts\":%llu"

/* Events by CTA, warp, then order of production. */
static int by_track(const void *a, const void *b, void *ctx)
{
	const struct conv *sort_cv = ctx;
	const struct vgpu_trace_event *x = &sort_cv->ev[*(const uint32_t *)a];
	const struct vgpu_trace_event *y = &sort_cv->ev[*(const uint32_t *)b];
	uint32_t px = pid_of(sort_cv, x), py = pid_of(sort_cv, y);

	if (px != py)
		return px < py ? -1 : 1;
	if (x->warp != y->warp)
		return x->warp < y->warp ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static bool is_source(const struct vgpu_trace_event *e)
{
	return e->flow && (e->type == VGPU_TR_BAR_COMPLETE ||
			   e->type == VGPU_TR_MBAR_COMPLETE ||
			   e->type == VGPU_TR_CLUSTER_COMPLETE ||
			   e->type == VGPU_TR_COPY_DONE);
}

static int source_cmp3(const struct conv *cv, uint32_t cl, uint32_t flow,
		       const struct vgpu_trace_event *e)
{
	uint32_t ce = cluster_of(cv, e->cta);

	if (cl != ce)
		return cl < ce ? -1 : 1;
	return flow < e->flow ? -1 : flow > e->flow;
}

static int by_source(const void *a, const void *b, void *ctx)
{
	const struct conv *sort_cv = ctx;
	const struct vgpu_trace_event *x = &sort_cv->ev[*(const uint32_t *)a];

	return source_cmp3(sort_cv, cluster_of(sort_cv, x->cta), x->flow,
			   &sort_cv->ev[*(const uint32_t *)b]);
}

/*
 * Index the events: each BLOCK's UNBLOCK (the warp's next BLOCK, UNBLOCK
 * or EXIT, if an UNBLOCK; a RUN is reported when it ends, after the
 * events inside it, so it says nothing here), each CTA's last cycle, and the
 * completions that wake-ups name.  O(n log n).
 */
static int index_events(struct conv *cv)
{
	uint32_t *idx = malloc((cv->n ? cv->n : 1) * sizeof(*idx));

	cv->unblock = malloc((cv->n ? cv->n : 1) * sizeof(*cv->unblock));
	cv->end = malloc((cv->n ? cv->n : 1) * sizeof(*cv->end));
	cv->sources = malloc((cv->n ? cv->n : 1) * sizeof(*cv->sources));
	if (!idx || !cv->unblock || !cv->end || !cv->sources) {
		free(idx);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cv->n; i++) {
		idx[i] = i;
		cv->unblock[i] = -1;
		if (is_source(&cv->ev[i]))
			cv->sources[cv->nsources++] = i;
	}
	qsort_r(idx, cv->n, sizeof(*idx), by_track, cv);
	qsort_r(cv->sources, cv->nsources, sizeof(*cv->sources), by_source, cv);
	for (uint32_t k = 0; k < cv->n;) {
		uint32_t pid = pid_of(cv, &cv->ev[idx[k]]), k0 = k;
		uint64_t end = 0;
		int64_t open = -1;

		for (; k < cv->n && pid_of(cv, &cv->ev[idx[k]]) == pid; k++) {
			const struct vgpu_trace_event *e = &cv->ev[idx[k]];
			uint64_t t = e->cycle + (e->type == VGPU_TR_RUN ? e->count : 0);

			if (t > end)
				end = t;
			if (k > k0 && e->warp != cv->ev[idx[k - 1]].warp)
				open = -1;
			switch (e->type) {
			case VGPU_TR_UNBLOCK:
				if (open >= 0)
					cv->unblock[open] = idx[k];
				open = -1;
				break;
			case VGPU_TR_BLOCK:
				open = idx[k];
				break;
			case VGPU_TR_EXIT:
				open = -1;
				break;
			default:
				break;
			}
		}
		for (uint32_t j = k0; j < k; j++)
			cv->end[idx[j]] = end;
	}
	free(idx);
	return 0;
}

/* The completion that wake-up @u names, or NULL. */
static const struct vgpu_trace_event *flow_source(const struct conv *cv,
						  const struct vgpu_trace_event *u)
{
	uint32_t cl = cluster_of(cv, u->cta), lo = 0, hi = cv->nsources;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = source_cmp3(cv, cl, u->flow, &cv->ev[cv->sources[mid]]);

		if (!c)
			return &cv->ev[cv->sources[mid]];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

static void wait_slice(struct conv *cv, const struct vgpu_trace_event *b,
		       uint64_t end, bool resolved)
{
	uint32_t pid = pid_of(cv, b), tid = tid_of(b);
	unsigned long long dur = end > b->cycle ? end - b->cycle : 0;
	char name[64];

	switch (b->reason) {
	case VGPU_TRACE_WAIT_BAR:
		snprintf(name, sizeof(name), "barrier %u", b->id);
		emit(cv, pid, tid, b->cycle,
		     "{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"%s\"," HDR
		     ",\"dur\":%llu,\"args\":{\"barrier\":%u,\"arrived\":%u,"
		     "\"expected\":%u,\"pc\":\"0x%x\"%s}}",
		     name, pid, tid, b->cycle, dur, b->id, b->count, b->expected,
		     b->pc, resolved ? "" : ",\"unresolved\":true");
		break;
	case VGPU_TRACE_WAIT_MBAR:
		snprintf(name, sizeof(name), "mbarrier 0x%llx", b->addr);
		emit(cv, pid, tid, b->cycle,
		     "{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"%s\"," HDR
		     ",\"dur\":%llu,\"args\":{\"address\":\"0x%llx"
		     "\",\"phase\":%u,\"parity\":%u,\"cta_rank\":%u,\"pc\":\"0x%x\"%s}}",
		     name, pid, tid, b->cycle, dur, b->addr, b->id, b->count,
		     b->expected, b->pc, resolved ? "" : ",\"unresolved\":true");
		break;
	default:
		emit(cv, pid, tid, b->cycle,
		     "{\"ph\":\"X\",\"cat\":\"wait\",\"name\":\"%s\"," HDR
		     ",\"dur\":%llu,\"args\":{\"pc\":\"0x%x\"%s}}",
		     vgpu_trace_wait_name(b->reason), pid, tid, b->cycle, dur, b->pc,
		     resolved ? "" : ",\"unresolved\":true");
		break;
	}
}

/* The flow from the completion @src to the wake-up @u. */
static void flow(struct conv *cv, const struct vgpu_trace_event *src,
		 const struct vgpu_trace_event *u)
{
	unsigned long long id = ++cv->next_flow +
				(cv->info->map ? cv->info->map->id_base : 0);
	uint32_t spid = pid_of(cv, src), stid = tid_of(src);

	emit(cv, spid, stid, src->cycle,
	     "{\"ph\":\"s\",\"cat\":\"release\",\"name\":\"release\",\"id\":%llu"
	     "," HDR "}", id, spid, stid, src->cycle);
	emit(cv, pid_of(cv, u), tid_of(u), u->cycle,
	     "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"release\",\"name\":\"release\",\"id\":%llu"
	     "," HDR "}", id, pid_of(cv, u), tid_of(u), u->cycle);
}

static unsigned long long id_base(const struct conv *cv)
{
	return cv->info->map ? cv->info->map->id_base : 0;
}

static void convert_event(struct conv *cv, uint32_t i)
{
	const struct vgpu_trace_event *e = &cv->ev[i];
	uint32_t pid = pid_of(cv, e), tid = tid_of(e);
	const struct vgpu_exception_record *x = cv->info->exc;

	switch (e->type) {
	case VGPU_TR_CTA_BEGIN:
		emit(cv, pid, 0, 0,
		     "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,"
		     "\"args\":{\"name\":\"%s%sCTA (%u,%u,%u)\"}}", pid,
		     cv->info->map && cv->info->map->label ? cv->info->map->label : "",
		     cv->info->map && cv->info->map->label ? " " : "",
		     e->cta[0], e->cta[1], e->cta[2]);
		emit(cv, pid, 0, 0,
		     "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%u,\"tid\":0,"
		     "\"args\":{\"sort_index\":%u}}", pid, pid);
		for (uint32_t w = 0; w < cv->info->nwarps; w++)
			emit(cv, pid, w, 0,
			     "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
			     "\"args\":{\"name\":\"warp %u\"}}", pid, w, w);
		emit(cv, pid, ENGINE_TID, 0,
		     "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
		     "\"args\":{\"name\":\"copy engine\"}}", pid, ENGINE_TID);
		break;
	case VGPU_TR_RUN:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"X\",\"cat\":\"run\",\"name\":\"run\"," HDR
		     ",\"dur\":%u,\"args\":{\"pc\":\"0x%x\",\"instructions\":%u}}",
		     pid, tid, e->cycle, e->count, e->pc, e->count);
		break;
	case VGPU_TR_BLOCK:
		if (cv->unblock[i] >= 0)
			wait_slice(cv, e, cv->ev[cv->unblock[i]].cycle, true);
		else
			wait_slice(cv, e, cv->end[i], false);
		break;
	case VGPU_TR_UNBLOCK:
		if (e->flow) {
			const struct vgpu_trace_event *src = flow_source(cv, e);

			if (src)
				flow(cv, src, e);
		}
		break;
	case VGPU_TR_EXIT:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"warp\",\"name\":\"exit\"," HDR "}",
		     pid, tid, e->cycle);
		break;
	case VGPU_TR_BAR_ARRIVE:
	case VGPU_TR_BAR_COMPLETE:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"barrier\",\"name\":\"%s %u\"," HDR
		     ",\"args\":{\"barrier\":%u,\"count\":%u,\"expected\":%u}}",
		     e->type == VGPU_TR_BAR_ARRIVE ? "arrive" : "complete", e->id,
		     pid, tid, e->cycle, e->id, e->count, e->expected);
		break;
	case VGPU_TR_MBAR_ARRIVE:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mbarrier\",\"name\":\"arrive 0x%llx"
		     "\"," HDR ",\"args\":{\"address\":\"0x%llx\",\"phase\":%u,"
		     "\"arrivals\":%u,\"pending\":%u}}",
		     e->addr, pid, tid, e->cycle, e->addr, e->id, e->count, e->expected);
		break;
	case VGPU_TR_MBAR_COMPLETE:
		/* on the copy engine, a slice for the flow to start in */
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"%s\",\"s\":\"t\",\"cat\":\"mbarrier\",\"name\":\"phase %u of 0x%llx"
		     " complete\"," HDR "%s,\"args\":{\"address\":\"0x%llx\",\"phase\":%u}}",
		     tid == ENGINE_TID ? "X" : "i", e->id, e->addr, pid, tid, e->cycle,
		     tid == ENGINE_TID ? ",\"dur\":1" : "", e->addr, e->id);
		break;
	case VGPU_TR_CLUSTER_COMPLETE:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"barrier\",\"name\":\"cluster barrier %u complete\","
		     HDR "}", e->id, pid, tid, e->cycle);
		break;
	case VGPU_TR_MBAR_POLL:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"mbarrier\",\"name\":\"%s 0x%llx\","
		     HDR ",\"args\":{\"address\":\"0x%llx\",\"phase\":%u,"
		     "\"true_lanes\":%u,\"lanes\":%u}}",
		     e->count == e->expected ? "wait ok" : "wait false", e->addr,
		     pid, tid, e->cycle, e->addr, e->id, e->count, e->expected);
		break;
	case VGPU_TR_COPY_ISSUE:
		emit(cv, pid, ENGINE_TID, e->cycle,
		     "{\"ph\":\"b\",\"cat\":\"copy\",\"name\":\"%s\",\"id\":\"%llu.%u.%u\","
		     "\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"args\":{\"bytes\":%u,"
		     "\"global\":\"0x%llx\",\"shared\":\"0x%llx\","
		     "\"mbarrier\":\"0x%x\",\"warp\":%u,\"pc\":\"0x%x\"}}",
		     vgpu_trace_copy_name(e->id), id_base(cv), cluster_of(cv, e->cta),
		     e->flow, pid, ENGINE_TID, e->cycle, e->count, e->addr, e->addr2,
		     e->expected, e->warp, e->pc);
		break;
	case VGPU_TR_COPY_DONE:
		emit(cv, pid, ENGINE_TID, e->cycle,
		     "{\"ph\":\"e\",\"cat\":\"copy\",\"name\":\"%s\",\"id\":\"%llu.%u.%u\","
		     "\"pid\":%u,\"tid\":%u,\"ts\":%llu}",
		     vgpu_trace_copy_name(e->id), id_base(cv), cluster_of(cv, e->cta), e->flow,
		     pid, ENGINE_TID, e->cycle);
		emit(cv, pid, ENGINE_TID, e->cycle,
		     "{\"ph\":\"X\",\"cat\":\"copy\",\"name\":\"%s done\"," HDR
		     ",\"dur\":1}", vgpu_trace_copy_name(e->id), pid, ENGINE_TID,
		     e->cycle);
		break;
	case VGPU_TR_EXCEPTION:
		emit(cv, pid, tid, e->cycle,
		     "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"exception\",\"name\":\"exception: %s\","
		     HDR ",\"args\":{\"code\":%u,\"lanes\":\"0x%08x\",\"pc\":\"0x%x\","
		     "\"address\":\"0x%llx\"",
		     vgpu_exception_name(e->id), pid, tid, e->cycle, e->id, e->count,
		     e->pc, e->addr);
		if (x && x->code == e->id && cv->nouts) {
			/* the record, as the job reported it */
			char *old = cv->outs[cv->nouts - 1].json, *s;
			char msg[2 * sizeof(x->msg) + 1];
			size_t k = 0;

			for (size_t m = 0; m < sizeof(x->msg) && x->msg[m]; m++) {
				char ch = x->msg[m];

				if (ch == '"' || ch == '\\')
					msg[k++] = '\\';
				msg[k++] = (ch >= 0x20 && ch < 0x7f) ? ch : '?';
			}
			msg[k] = '\0';
			if (asprintf(&s, "%s,\"message\":\"%s\",\"barid\":%u,"
				     "\"info\":[%u,%u,%u,%u]}}", old, msg, x->barid,
				     x->info[0], x->info[1], x->info[2], x->info[3]) < 0) {
				cv->oom = true;
				break;
			}
			free(old);
			cv->outs[cv->nouts - 1].json = s;
		} else if (cv->nouts) {
			char *old = cv->outs[cv->nouts - 1].json, *s;

			if (asprintf(&s, "%s}}", old) < 0) {
				cv->oom = true;
				break;
			}
			free(old);
			cv->outs[cv->nouts - 1].json = s;
		}
		break;
	default:
		break;
	}
}

static int out_cmp(const void *a, const void *b)
{
	const struct out *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Convert @ev into cv->outs, sorted by track and time. */
static int convert(struct conv *cv)
{
	int ret = index_events(cv);

	if (ret)
		return ret;
	for (uint32_t i = 0; i < cv->n && !cv->oom; i++)
		convert_event(cv, i);
	if (cv->oom)
		return -ENOMEM;
	qsort(cv->outs, cv->nouts, sizeof(*cv->outs), out_cmp);
	return 0;
}

static void conv_free(struct conv *cv)
{
	for (size_t i = 0; i < cv->nouts; i++)
		free(cv->outs[i].json);
	free(cv->outs);
	free(cv->unblock);
	free(cv->end);
	free(cv->sources);
}

/* CTA order, then the order the SM produced them (the index). */
static int by_cta(const void *a, const void *b, void *ctx)
{
	const struct vgpu_timeline_info *in = ctx;
	const struct vgpu_trace_event *x = *(const struct vgpu_trace_event *const *)a;
	const struct vgpu_trace_event *y = *(const struct vgpu_trace_event *const *)b;
	uint32_t cx = cta_linear(in, x->cta), cy = cta_linear(in, y->cta);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

int vgpu_trace_write_events(FILE *f, const struct vgpu_trace_event *ev, uint32_t n,
			    const struct vgpu_timeline_info *info, int *first)
{
	/*
	 * Records of different clusters interleave as the device's SMs ran
	 * them; each cluster's own are in order.  Put them in CTA order
	 * first, so that the file (flow numbers included) does not depend on
	 * how the clusters were spread over SMs: the drm backend's file is
	 * then the sim backend's.
	 */
	const struct vgpu_trace_event **ptr = malloc((n ? n : 1) * sizeof(*ptr));
	struct vgpu_trace_event *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	struct conv cv = { .info = info, .ev = sorted, .n = n };
	int ret;

	if (!ptr || !sorted) {
		free(ptr);
		free(sorted);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		ptr[i] = &ev[i];
	qsort_r(ptr, n, sizeof(*ptr), by_cta, (void *)info);
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = *ptr[i];
	free(ptr);
	ret = convert(&cv);

	for (size_t i = 0; !ret && i < cv.nouts; i++) {
		fprintf(f, "%s%s", *first ? "" : ",\n", cv.outs[i].json);
		*first = 0;
	}
	conv_free(&cv);
	free(sorted);
	return ret;
}

int vgpu_trace_write_json(FILE *f, const struct vgpu_trace_event *ev, uint32_t n,
			  uint64_t dropped, const struct vgpu_timeline_info *info)
{
	int first = 1, ret;

	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"vgpu\","
		"\"kernel\":\"%s\",\"time_unit\":\"1 us = 1 SM cycle\","
		"\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"cluster\":[%u,%u,%u],"
		"\"events\":%u,\"dropped_events\":%llu},\n\"traceEvents\":[\n",
		info->kernel ? info->kernel : "", info->grid[0], info->grid[1],
		info->grid[2], info->block[0], info->block[1], info->block[2],
		info->cluster[0], info->cluster[1], info->cluster[2], n,
		(unsigned long long)dropped);
	ret = vgpu_trace_write_events(f, ev, n, info, &first);
	fprintf(f, "\n]}\n");
	if (!ret && (fflush(f) || ferror(f)))
		ret = -EIO;
	return ret;
}
