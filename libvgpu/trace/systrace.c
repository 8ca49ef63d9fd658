// SPDX-License-Identifier: MIT
/*
 * The system timeline (vgpu-trace): the driver's tracepoints, as tracefs
 * prints them, merged with the kernel timelines of the jobs that libvgpu
 * saved under $VGPU_TIMELINE_DIR, into one Chrome trace-event file:
 *
 *   process "vgpu driver": a thread per hardware queue with a slice per
 *     job (vgpu_job_run .. vgpu_job_complete: "job CLIENT:ID", the kernel
 *     nested in it), an async slice "waits for dependencies" from submit
 *     to vgpu_job_ready, flows from each job a job waited for (its
 *     finished fence, vgpu_job_dep) to that job, resets as instants, and
 *     a thread "drm_sched" with the gpu_scheduler tracepoints;
 *   a process "client C" per client (DRM file) with a thread per queue of
 *     that file ("queue Q": SUBMIT's queue id, vgpu_job_submit's
 *     file_queue; a CUDA stream is one) and the same job slices on it, so
 *     two streams' overlapping kernels show side by side (the first
 *     CLIENT_TRACKS_MAX clients; traces without file_queue have none);
 *   a process per CTA of each job with a timeline ("job C:J CTA (x,y,z)"),
 *     its cycles stretched over the job's slice (at most 1 ns a cycle).
 *
 * Time: microseconds since the first event (tracefs with trace_clock
 * "mono").
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

#define DRIVER_PID 1u
#define SCHED_TID 1000u
/* clients' processes: pids 2 .. 999 (the CTAs' start at 1000) */
#define CLIENT_PID0 2u
#define CLIENT_TRACKS_MAX 998u

struct sjob {
	uint64_t client, id;
	uint32_t queue;
	int64_t file_queue; /* SUBMIT's queue id; -1: not in the trace */
	uint64_t ctx, seqno;	   /* its finished fence */
	double submit, ready, run, done; /* us; < 0: not seen */
	int error;
	struct jobtl *tl;
};

struct sdep {
	uint64_t client, job, ctx, seqno;
};

struct jobtl {
	struct vgpu_jobtl_file h;
	struct vgpu_trace_event *ev;
};

struct strace {
	struct sjob *jobs;
	size_t njobs, jcap;
	struct sdep *deps;
	size_t ndeps, dcap;
	double t0, tend;
	bool have_t0;
	FILE *f;
	int first;
	uint32_t queues; /* bit per queue seen */
	uint64_t clients[CLIENT_TRACKS_MAX]; /* with a file_queue, in order seen */
	uint32_t nclients;
};

/* The pid of @client's process (0: it has no tracks). */
static uint32_t client_pid(struct strace *st, uint64_t client, bool add)
{
	for (uint32_t i = 0; i < st->nclients; i++)
		if (st->clients[i] == client)
			return CLIENT_PID0 + i;
	if (!add || st->nclients == CLIENT_TRACKS_MAX)
		return 0;
	st->clients[st->nclients] = client;
	return CLIENT_PID0 + st->nclients++;
}

static struct sjob *job_find(struct strace *st, uint64_t client, uint64_t id,
			     bool create)
{
	for (size_t i = 0; i < st->njobs; i++)
		if (st->jobs[i].client == client && st->jobs[i].id == id)
			return &st->jobs[i];
	if (!create)
		return NULL;
	if (st->njobs == st->jcap) {
		size_t n = st->jcap ? 2 * st->jcap : 16;
		struct sjob *p = realloc(st->jobs, n * sizeof(*p));

		if (!p)
			return NULL;
		st->jobs = p;
		st->jcap = n;
	}
	st->jobs[st->njobs] = (struct sjob){
		.client = client, .id = id, .file_queue = -1, .submit = -1,
		.ready = -1, .run = -1, .done = -1,
	};
	return &st->jobs[st->njobs++];
}

/* "key=value" of @args as an unsigned number; false if absent. */
static bool arg_u64(const char *args, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);

	for (const char *p = args; (p = strstr(p, key)); p += kl) {
		if ((p == args || p[-1] == ' ') && p[kl] == '=') {
			*v = strtoull(p + kl + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

/* "fence=CTX:SEQNO" */
static bool arg_fence(const char *args, uint64_t *ctx, uint64_t *seqno)
{
	const char *p = strstr(args, "fence=");
	char *end;

	if (!p)
		return false;
	*ctx = strtoull(p + 6, &end, 10);
	if (*end != ':')
		return false;
	*seqno = strtoull(end + 1, NULL, 10);
	return true;
}

static void json_escape(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fputc('\\', f);
		fputc(c >= 0x20 && c < 0x7f ? c : '?', f);
	}
}

static void out(struct strace *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void out(struct strace *st, const char *fmt, ...)
{
	va_list ap;

	fputs(st->first ? "" : ",\n", st->f);
	st->first = 0;
	va_start(ap, fmt);
	vfprintf(st->f, fmt, ap);
	va_end(ap);
}

/*
 * One line of tracefs text: "TASK-PID [CPU] FLAGS TIMESTAMP: EVENT: ARGS".
 * Returns false for lines that are not events (comments, blank).
 */
static bool parse_line(const char *line, double *ts, char *event, size_t elen,
		       const char **args)
{
	const char *p, *colon, *name;
	char *end;

	if (line[0] == '#')
		return false;
	/* the event name follows the timestamp's ": " */
	for (p = line; (colon = strstr(p, ": ")); p = colon + 1) {
		const char *t = colon;

		while (t > line && t[-1] != ' ')
			t--;
		*ts = strtod(t, &end);
		if (end != colon || t == colon)
			continue;
		name = colon + 2;
		p = strstr(name, ": ");
		if (!p || (size_t)(p - name) >= elen)
			return false;
		memcpy(event, name, (size_t)(p - name));
		event[p - name] = '\0';
		*args = p + 2;
		return true;
	}
	return false;
}

static int add_dep(struct strace *st, const struct sdep *d)
{
	if (st->ndeps == st->dcap) {
		size_t n = st->dcap ? 2 * st->dcap : 16;
		struct sdep *p = realloc(st->deps, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		st->deps = p;
		st->dcap = n;
	}
	st->deps[st->ndeps++] = *d;
	return 0;
}

static double rel(const struct strace *st, double ts_s)
{
	return (ts_s - st->t0) * 1e6;
}

/*
 * The next event line of tracefs text at *@pos (advanced past it): its
 * time, name and arguments (in @buf); false at the end.
 */
struct tline {
	char buf[1024], event[64];
	const char *args;
	double ts;
};

static bool next_event(const char **pos, struct tline *t)
{
	while (*pos && **pos) {
		const char *line = *pos, *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len >= sizeof(t->buf))
			len = sizeof(t->buf) - 1;
		memcpy(t->buf, line, len);
		t->buf[len] = '\0';
		*pos = nl ? nl + 1 : NULL;
		if (parse_line(t->buf, &t->ts, t->event, sizeof(t->event), &t->args))
			return true;
	}
	return false;
}

/* First pass: the jobs and their dependencies. */
static int collect(struct strace *st, const char *text)
{
	const char *pos = text;
	struct tline tl;

	while (next_event(&pos, &tl)) {
		const char *args = tl.args, *event = tl.event;
		uint64_t client = 0, id = 0, q = 0;
		double ts = tl.ts;
		struct sjob *j;

		if (!st->have_t0) {
			st->t0 = ts;
			st->have_t0 = true;
		}
		if (rel(st, ts) > st->tend)
			st->tend = rel(st, ts);
		if (strncmp(event, "vgpu_job_", 9))
			continue;
		if (!arg_u64(args, "client", &client) || !arg_u64(args, "job", &id))
			continue;
		if (!strcmp(event, "vgpu_job_dep")) {
			struct sdep d = { .client = client, .job = id };

			if (arg_fence(args, &d.ctx, &d.seqno) && add_dep(st, &d))
				return -ENOMEM;
			continue;
		}
		j = job_find(st, client, id, true);
		if (!j)
			return -ENOMEM;
		if (arg_u64(args, "queue", &q) && q < 32) {
			j->queue = (uint32_t)q;
			st->queues |= 1u << q;
		}
		if (!strcmp(event, "vgpu_job_submit")) {
			uint64_t fq;

			j->submit = rel(st, ts);
			arg_fence(args, &j->ctx, &j->seqno);
			if (arg_u64(args, "file_queue", &fq) && fq <= UINT32_MAX &&
			    client_pid(st, client, true))
				j->file_queue = (int64_t)fq;
		} else if (!strcmp(event, "vgpu_job_ready")) {
			j->ready = rel(st, ts);
		} else if (!strcmp(event, "vgpu_job_run")) {
			j->run = rel(st, ts);
		} else if (!strcmp(event, "vgpu_job_complete")) {
			const char *e = strstr(args, "error=");

			j->done = rel(st, ts);
			j->error = e ? atoi(e + 6) : 0;
		}
	}
	return 0;
}

/* Second pass: resets and the scheduler's own events, as instants. */
static void instants(struct strace *st, const char *text)
{
	const char *pos = text;
	struct tline tl;

	while (next_event(&pos, &tl)) {
		const char *args = tl.args, *event = tl.event;
		double ts = tl.ts;

		if (!strcmp(event, "vgpu_reset")) {
			out(st, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"reset\",\"name\":\"reset\","
				"\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"args\":{\"text\":\"",
			    DRIVER_PID, SCHED_TID, rel(st, ts));
			json_escape(st->f, args, strlen(args));
			fputs("\"}}", st->f);
		} else if (!strncmp(event, "drm_", 4)) {
			out(st, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"drm_sched\",\"name\":\"%s\","
				"\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"args\":{\"text\":\"",
			    event, DRIVER_PID, SCHED_TID, rel(st, ts));
			json_escape(st->f, args, strlen(args));
			fputs("\"}}", st->f);
		}
	}
}

/* The timelines libvgpu saved: DIR/job-CLIENT-ID.vgtl */
static void load_timelines(struct strace *st, const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d))) {
		unsigned long long client, id;
		char path[4096];
		struct jobtl *tl;
		struct sjob *j;
		FILE *f;

		if (sscanf(de->d_name, "job-%llu-%llu.vgtl", &client, &id) != 2)
			continue;
		j = job_find(st, client, id, false);
		if (!j || j->tl)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "rb");
		tl = calloc(1, sizeof(*tl));
		if (f && tl && fread(&tl->h, sizeof(tl->h), 1, f) == 1 &&
		    !memcmp(tl->h.magic, VGPU_JOBTL_MAGIC, sizeof(tl->h.magic)) &&
		    tl->h.count <= VGPU_TRACE_MAX_BYTES / sizeof(*tl->ev) &&
		    (tl->ev = malloc((tl->h.count ? tl->h.count : 1) * sizeof(*tl->ev))) &&
		    fread(tl->ev, sizeof(*tl->ev), tl->h.count, f) == tl->h.count) {
			tl->h.kernel[sizeof(tl->h.kernel) - 1] = '\0';
			j->tl = tl;
		} else if (tl) {
			free(tl->ev);
			free(tl);
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

static void job_events(struct strace *st, size_t k)
{
	struct sjob *j = &st->jobs[k];
	uint32_t tid = j->queue + 1;
	double end = j->done >= 0 ? j->done : st->tend;
	const char *kernel = j->tl ? j->tl->h.kernel : NULL;
	char kname[2 * sizeof(j->tl->h.kernel) + 1] = "", jname[48];

	for (size_t i = 0, o = 0; kernel && kernel[i]; i++) {
		char c = kernel[i];

		if (c == '"' || c == '\\')
			kname[o++] = '\\';
		kname[o++] = c >= 0x20 && c < 0x7f ? c : '?';
		kname[o] = '\0';
	}
	if (j->submit >= 0) {
		out(st, "{\"ph\":\"b\",\"cat\":\"queue\",\"name\":\"waits for dependencies\","
			"\"id\":\"dep.%llu.%llu\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
			"\"args\":{\"client\":%llu,\"job\":%llu}}",
		    (unsigned long long)j->client, (unsigned long long)j->id, DRIVER_PID,
		    tid, j->submit, (unsigned long long)j->client,
		    (unsigned long long)j->id);
		out(st, "{\"ph\":\"e\",\"cat\":\"queue\",\"name\":\"waits for dependencies\","
			"\"id\":\"dep.%llu.%llu\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f}",
		    (unsigned long long)j->client, (unsigned long long)j->id, DRIVER_PID,
		    tid, j->ready >= 0 ? j->ready : j->run >= 0 ? j->run : end);
	}
	if (j->run < 0)
		return;
	snprintf(jname, sizeof(jname), " %llu:%llu", (unsigned long long)j->client,
		 (unsigned long long)j->id);
	out(st, "{\"ph\":\"X\",\"cat\":\"job\",\"name\":\"job %llu:%llu\",\"pid\":%u,"
		"\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"client\":%llu,\"job\":%llu,"
		"\"queue\":%u,\"error\":%d%s%s%s%s}}",
	    (unsigned long long)j->client, (unsigned long long)j->id, DRIVER_PID, tid,
	    j->run, end - j->run, (unsigned long long)j->client,
	    (unsigned long long)j->id, j->queue, j->error,
	    j->done < 0 ? ",\"unfinished\":true" : "", kernel ? ",\"kernel\":\"" : "",
	    kname, kernel ? "\"" : "");
	/* on its stream's track: the kernel's name where libvgpu saved it */
	if (j->file_queue >= 0)
		out(st, "{\"ph\":\"X\",\"cat\":\"stream\",\"name\":\"%s%s\",\"pid\":%u,"
			"\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"client\":%llu,"
			"\"job\":%llu,\"queue\":%u,\"error\":%d%s}}",
		    kernel ? "kernel " : "job", kernel ? kname : jname,
		    client_pid(st, j->client, false), (unsigned long long)j->file_queue + 1,
		    j->run, end - j->run, (unsigned long long)j->client,
		    (unsigned long long)j->id, j->queue, j->error,
		    j->done < 0 ? ",\"unfinished\":true" : "");
	if (j->tl) {
		struct vgpu_timeline_map map = {
			.pid_base = 1000u * (uint32_t)(k + 1),
			.id_base = (uint64_t)(k + 1) << 32,
			.t0_us = j->run,
		};
		struct vgpu_timeline_info info = {
			.kernel = kernel,
			.nwarps = j->tl->h.nwarps,
			.map = &map,
		};
		uint64_t cycles = 1;
		char label[64];

		for (uint32_t i = 0; i < j->tl->h.count; i++) {
			const struct vgpu_trace_event *e = &j->tl->ev[i];
			uint64_t t = e->cycle + (e->type == VGPU_TR_RUN ? e->count : 0);

			if (t > cycles)
				cycles = t;
		}
		map.us_per_cycle = (end - j->run) / (double)cycles;
		if (map.us_per_cycle > 0.001)
			map.us_per_cycle = 0.001; /* 1 ns a cycle at most */
		snprintf(label, sizeof(label), "job %llu:%llu",
			 (unsigned long long)j->client, (unsigned long long)j->id);
		map.label = label;
		memcpy(info.grid, j->tl->h.grid, sizeof(info.grid));
		memcpy(info.block, j->tl->h.block, sizeof(info.block));
		memcpy(info.cluster, j->tl->h.cluster, sizeof(info.cluster));
		out(st, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kernel %s\",\"pid\":%u,"
			"\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"cycles\":%llu,"
			"\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"dropped_events\":%llu}}",
		    kname, DRIVER_PID, tid, j->run, (double)cycles * map.us_per_cycle,
		    (unsigned long long)cycles, info.grid[0], info.grid[1], info.grid[2],
		    info.block[0], info.block[1], info.block[2],
		    (unsigned long long)j->tl->h.dropped);
		vgpu_trace_write_events(st->f, j->tl->ev, j->tl->h.count, &info,
					&st->first);
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Names of the clients' processes and of their queues' threads. */
static int client_tracks(struct strace *st)
{
	uint64_t *keys = malloc((st->njobs ? st->njobs : 1) * sizeof(*keys));
	size_t n = 0;

	if (!keys)
		return -ENOMEM;
	for (uint32_t c = 0; c < st->nclients; c++)
		out(st, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,"
			 "\"args\":{\"name\":\"client %llu\"}}", CLIENT_PID0 + c,
		    (unsigned long long)st->clients[c]);
	/* (pid, queue) of every job with a file_queue, each once */
	for (size_t k = 0; k < st->njobs; k++)
		if (st->jobs[k].file_queue >= 0)
			keys[n++] = (uint64_t)client_pid(st, st->jobs[k].client, false) << 32 |
				    (uint64_t)st->jobs[k].file_queue;
	qsort(keys, n, sizeof(*keys), u64_cmp);
	for (size_t i = 0; i < n; i++)
		if (!i || keys[i] != keys[i - 1])
			out(st, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,"
				 "\"tid\":%llu,\"args\":{\"name\":\"queue %llu\"}}",
			    (uint32_t)(keys[i] >> 32),
			    (unsigned long long)(keys[i] & UINT32_MAX) + 1,
			    (unsigned long long)(keys[i] & UINT32_MAX));
	free(keys);
	return 0;
}

/* A flow from each job a job waited for to the job. */
static void dep_flows(struct strace *st)
{
	unsigned long long id = 1;

	for (size_t i = 0; i < st->ndeps; i++) {
		const struct sdep *d = &st->deps[i];
		struct sjob *w = job_find(st, d->client, d->job, false), *src = NULL;

		for (size_t k = 0; k < st->njobs && w; k++)
			if (st->jobs[k].ctx == d->ctx && st->jobs[k].seqno == d->seqno &&
			    (st->jobs[k].ctx || st->jobs[k].seqno))
				src = &st->jobs[k];
		if (!w || !src || src->done < 0 || w->run < 0)
			continue;
		out(st, "{\"ph\":\"s\",\"cat\":\"dependency\",\"name\":\"dependency\","
			"\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":%.3f}",
		    id, DRIVER_PID, src->queue + 1, src->done);
		out(st, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dependency\",\"name\":\"dependency\","
			"\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":%.3f}",
		    id, DRIVER_PID, w->queue + 1, w->run);
		id++;
	}
}

/* An output line's track and time, for sorting ("ts" absent: -1). */
struct line {
	char *text;
	unsigned long long pid, tid;
	double ts;
	size_t seq;
};

static int line_cmp(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static double field(const char *s, const char *key)
{
	const char *p = strstr(s, key);

	return p ? strtod(p + strlen(key), NULL) : -1;
}

/* Write the events of @buf (one per line, ",\n" between) sorted by track and time. */
static int write_sorted(FILE *f, char *buf)
{
	struct line *lines = NULL;
	size_t n = 0, cap = 0;

	for (char *p = buf, *nl; p && *p; p = nl) {
		nl = strstr(p, ",\n");
		if (nl) {
			*nl = '\0';
			nl += 2;
		}
		if (n == cap) {
			size_t c = cap ? 2 * cap : 256;
			struct line *q = realloc(lines, c * sizeof(*q));

			if (!q) {
				free(lines);
				return -ENOMEM;
			}
			lines = q;
			cap = c;
		}
		/* the event's own fields come before its args */
		lines[n] = (struct line){
			.text = p,
			.pid = (unsigned long long)field(p, "\"pid\":"),
			.tid = (unsigned long long)field(p, "\"tid\":"),
			.ts = field(p, "\"ts\":"),
			.seq = n,
		};
		n++;
	}
	qsort(lines, n, sizeof(*lines), line_cmp);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ",\n" : "", lines[i].text);
	free(lines);
	return 0;
}

int vgpu_systrace_write(FILE *f, const char *ftrace_text, const char *timeline_dir)
{
	struct strace st = { .first = 1 };
	char *buf = NULL;
	size_t len = 0;
	int ret = collect(&st, ftrace_text);

	if (ret)
		goto out;
	st.f = open_memstream(&buf, &len);
	if (!st.f) {
		ret = -ENOMEM;
		goto out;
	}
	load_timelines(&st, timeline_dir);
	out(&st, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,"
		 "\"args\":{\"name\":\"vgpu driver\"}}", DRIVER_PID);
	for (uint32_t q = 0; q < 32; q++)
		if (st.queues >> q & 1)
			out(&st, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
				 "\"args\":{\"name\":\"queue %u\"}}", DRIVER_PID, q + 1, q);
	out(&st, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%u,"
		 "\"args\":{\"name\":\"drm_sched\"}}", DRIVER_PID, SCHED_TID);
	ret = client_tracks(&st);
	if (ret) {
		fclose(st.f);
		goto out;
	}
	instants(&st, ftrace_text);
	for (size_t k = 0; k < st.njobs; k++)
		job_events(&st, k);
	dep_flows(&st);
	if (fclose(st.f) || !buf) {
		ret = -ENOMEM;
		goto out;
	}
	fprintf(f, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"vgpu-trace\","
		"\"time_unit\":\"us since the first event\",\"jobs\":%zu},\n"
		"\"traceEvents\":[\n", st.njobs);
	ret = write_sorted(f, buf);
	fprintf(f, "\n]}\n");
	if (!ret && (fflush(f) || ferror(f)))
		ret = -EIO;
out:
	free(buf);
	for (size_t k = 0; k < st.njobs; k++) {
		if (st.jobs[k].tl) {
			free(st.jobs[k].tl->ev);
			free(st.jobs[k].tl);
		}
	}
	free(st.jobs);
	free(st.deps);
	return ret;
}
