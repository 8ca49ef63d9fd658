/* SPDX-License-Identifier: MIT */
/*
 * Timelines (VGPU_LAUNCH_TIMELINE) on the sim backend:
 *  - the JSON of every example is a valid Chrome trace-event file: every
 *    event has its required fields, complete slices nest on each track,
 *    async copies begin and end once, every flow has one start and one
 *    finish, timestamps never go back on a track (parsed with jansson);
 *  - a seeded run gives the same bytes twice (default and random
 *    schedules);
 *  - the records agree with the core's own counters: instructions with
 *    the job's warp_insns, barrier completions with the program's rounds,
 *    copied bytes with the copies' sizes;
 *  - a full buffer keeps whole records, counts the rest as dropped, and
 *    still converts to a valid file;
 *  - a deadlock's DOT graph names the cycle, or the missing arrival.
 * The drm backend's timeline is tested by test_libvgpu in the guest and
 * by the device's qtests.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "test_paths.h"
#include "vgpu.h"

static char root[PATH_MAX], runner[PATH_MAX + 32], tmpdir[64];

__attribute__((constructor(102))) static void find_paths(void)
{
	snprintf(root, sizeof(root), "%s", test_root);
	snprintf(runner, sizeof(runner), "%s/bin/vgpu-run", test_build);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vgpu-timeline-XXXXXX");
	if (!mkdtemp(tmpdir))
		exit(1);
}

__attribute__((destructor)) static void remove_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* The directory of @path (a static copy). */
static const char *dirname_of(const char *path)
{
	static char buf[PATH_MAX + 32];
	char *s;

	snprintf(buf, sizeof(buf), "%s", path);
	s = strrchr(buf, '/');
	if (s)
		*s = '\0';
	return buf;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0) {
		rewind(f);
		buf = calloc(1, (size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (len)
			*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* vgpu-run @flags --timeline @out @file; its exit status. */
static int run_tool(const char *flags, const char *out, const char *file)
{
	char cmd[4 * PATH_MAX];

	snprintf(cmd, sizeof(cmd), "'%s' --backend sim %s --timeline '%s' '%s' >/dev/null 2>&1",
		 runner, flags, out, file);
	return system(cmd);
}

/* ---- the trace-event format ---- */

struct slice {
	long long pid, tid;
	double ts, end;
};

static int slice_cmp(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* the longer one first: it encloses */
	return x->end > y->end ? -1 : x->end < y->end;
}

/*
 * Check @text against the trace-event format; returns NULL or what is
 * wrong (static).  *@stats: counts of what it holds.
 */
struct stats {
	long long runs, run_insns, waits, flows, copies, copy_bytes, exceptions,
		unresolved, dropped;
};

static const char *check_trace(const char *text, struct stats *st)
{
	static char why[256];
	json_error_t err;
	json_t *jroot = json_loads(text, 0, &err), *evs, *e;
	json_t *open_async = NULL, *flows = NULL;
	struct slice *sl = NULL;
	size_t nsl = 0, i;
	long long last_pid = -1, last_tid = -1;
	double last_ts = -1;
	const char *res = NULL;

	memset(st, 0, sizeof(*st));
	if (!jroot) {
		snprintf(why, sizeof(why), "not JSON: line %d: %s", err.line, err.text);
		return why;
	}
	evs = json_object_get(jroot, "traceEvents");
	if (!json_is_array(evs)) {
		res = "no traceEvents array";
		goto out;
	}
	st->dropped = json_integer_value(json_object_get(json_object_get(jroot, "otherData"),
							 "dropped_events"));
	open_async = json_object();
	flows = json_object();
	sl = calloc(json_array_size(evs) + 1, sizeof(*sl));
	json_array_foreach(evs, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *pid = json_object_get(e, "pid"), *tid = json_object_get(e, "tid");
		json_t *ts = json_object_get(e, "ts");
		double t;

		snprintf(why, sizeof(why), "event %zu: ", i);
		if (!ph || !name || !json_is_integer(pid) || !json_is_integer(tid)) {
			strcat(why, "no ph, name, pid or tid");
			res = why;
			goto out;
		}
		if (!strcmp(ph, "M"))
			continue;
		if (!json_is_number(ts) || json_number_value(ts) < 0) {
			strcat(why, "no ts");
			res = why;
			goto out;
		}
		t = json_number_value(ts);
		/* per track, in time order */
		if (json_integer_value(pid) == last_pid && json_integer_value(tid) == last_tid &&
		    t < last_ts) {
			strcat(why, "time goes back on its track");
			res = why;
			goto out;
		}
		last_pid = json_integer_value(pid);
		last_tid = json_integer_value(tid);
		last_ts = t;
		if (!strcmp(ph, "X")) {
			json_t *dur = json_object_get(e, "dur"), *args = json_object_get(e, "args");

			if (!json_is_number(dur) || json_number_value(dur) < 0) {
				strcat(why, "X without dur");
				res = why;
				goto out;
			}
			sl[nsl++] = (struct slice){ last_pid, last_tid, t,
						     t + json_number_value(dur) };
			if (!strcmp(name, "run")) {
				st->runs++;
				st->run_insns += json_integer_value(json_object_get(args, "instructions"));
			} else if (!strcmp(json_string_value(json_object_get(e, "cat")), "wait")) {
				st->waits++;
				st->unresolved += json_is_true(json_object_get(args, "unresolved"));
			}
		} else if (!strcmp(ph, "b") || !strcmp(ph, "e")) {
			const char *id = json_string_value(json_object_get(e, "id"));
			json_t *b;

			if (!id) {
				strcat(why, "async event without id");
				res = why;
				goto out;
			}
			b = json_object_get(open_async, id);
			if (!strcmp(ph, "b")) {
				if (b) {
					strcat(why, "copy begins twice");
					res = why;
					goto out;
				}
				json_object_set_new(open_async, id, json_real(t));
				st->copies++;
				st->copy_bytes += json_integer_value(json_object_get(
					json_object_get(e, "args"), "bytes"));
			} else {
				if (!json_is_number(b) || json_number_value(b) > t) {
					strcat(why, "copy ends without a begin, or before it");
					res = why;
					goto out;
				}
				json_object_set_new(open_async, id, json_string("done"));
			}
		} else if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
			/* paired after the loop: the file is in track order */
			char id[40];
			json_t *f;

			snprintf(id, sizeof(id), "%lld",
				 json_integer_value(json_object_get(e, "id")));
			f = json_object_get(flows, id);
			if (!f) {
				f = json_array();
				json_array_append_new(f, json_null());
				json_array_append_new(f, json_null());
				json_object_set_new(flows, id, f);
			}
			if (!json_is_null(json_array_get(f, ph[0] == 'f'))) {
				strcat(why, ph[0] == 's' ? "flow starts twice" : "flow finishes twice");
				res = why;
				goto out;
			}
			if (ph[0] == 'f' && strcmp(json_string_value(json_object_get(e, "bp")) ?: "", "e")) {
				strcat(why, "flow finish not bound to its enclosing slice");
				res = why;
				goto out;
			}
			json_array_set_new(f, ph[0] == 'f', json_real(t));
		} else if (!strcmp(ph, "i")) {
			const char *s = json_string_value(json_object_get(e, "s"));

			if (!s || (strcmp(s, "t") && strcmp(s, "p"))) {
				strcat(why, "instant event without scope");
				res = why;
				goto out;
			}
			st->exceptions += !strcmp(json_string_value(json_object_get(e, "cat")),
						  "exception");
		} else {
			strcat(why, "unknown ph");
			res = why;
			goto out;
		}
	}
	{
		const char *k;
		json_t *v;

		json_object_foreach(open_async, k, v)
			if (!json_is_string(v)) {
				snprintf(why, sizeof(why), "copy %s never ends", k);
				res = why;
				goto out;
			}
		json_object_foreach(flows, k, v) {
			json_t *s = json_array_get(v, 0), *f = json_array_get(v, 1);

			if (!json_is_number(s) || !json_is_number(f) ||
			    json_number_value(f) < json_number_value(s)) {
				snprintf(why, sizeof(why),
					 "flow %s lacks its start or finish, or ends before it starts", k);
				res = why;
				goto out;
			}
			st->flows++;
		}
	}
	/* complete slices on a track nest: none overlaps another partly */
	qsort(sl, nsl, sizeof(*sl), slice_cmp);
	for (size_t a = 0; a < nsl && !res; a++) {
		for (size_t b = a + 1; b < nsl; b++) {
			/* times in us with 3 decimals: allow for rounding */
			if (sl[b].pid != sl[a].pid || sl[b].tid != sl[a].tid ||
			    sl[b].ts >= sl[a].end - 1e-6)
				break;
			if (sl[b].end > sl[a].end + 1e-6) {
				snprintf(why, sizeof(why),
					 "slices [%g,%g) and [%g,%g) of pid %lld tid %lld overlap",
					 sl[a].ts, sl[a].end, sl[b].ts, sl[b].end, sl[a].pid,
					 sl[a].tid);
				res = why;
				break;
			}
		}
	}
out:
	free(sl);
	json_decref(open_async);
	json_decref(flows);
	json_decref(jroot);
	return res;
}

/* ---- every example ---- */

TEST(every_example_valid_and_deterministic)
{
	char dir[PATH_MAX + 16];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/examples", root);
	d = opendir(dir);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		static const char *const sched[] = { "", "--random-schedule --seed 7" };
		char path[PATH_MAX + 300], flags[600], a[128], b[128];
		const char *tag = "// vgpu-run:";
		char *src, *nl;
		size_t la, lb;

		if (!strstr(de->d_name, ".vgs"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		src = slurp(path, NULL);
		ASSERT_NE(NULL, src);
		nl = strchr(src, '\n');
		ASSERT_EQ(0, strncmp(src, tag, strlen(tag)));
		for (int s = 0; s < 2; s++) {
			char *ja, *jb;
			struct stats st;
			const char *why;

			snprintf(flags, sizeof(flags), "%.*s %s",
				 (int)(nl - src - strlen(tag)), src + strlen(tag), sched[s]);
			snprintf(a, sizeof(a), "%s/a.json", tmpdir);
			snprintf(b, sizeof(b), "%s/b.json", tmpdir);
			EXPECT_EQ(0, run_tool(flags, a, path)) TH_LOG("%s %s", de->d_name, sched[s]);
			EXPECT_EQ(0, run_tool(flags, b, path));
			ja = slurp(a, &la);
			jb = slurp(b, &lb);
			ASSERT_NE(NULL, ja);
			ASSERT_NE(NULL, jb);
			EXPECT_TRUE(la == lb && !memcmp(ja, jb, la))
				TH_LOG("%s %s: two runs gave different timelines", de->d_name, sched[s]);
			why = check_trace(ja, &st);
			EXPECT_EQ(NULL, why) TH_LOG("%s %s: %s", de->d_name, sched[s], why);
			EXPECT_GT(st.runs, 0);
			EXPECT_EQ(0, st.unresolved) TH_LOG("%s: a wait never ended", de->d_name);
			EXPECT_EQ(0, st.exceptions);
			EXPECT_EQ(0, st.dropped);
			free(ja);
			free(jb);
		}
		free(src);
		n++;
	}
	closedir(d);
	EXPECT_GE(n, 10);
}

/* The example's copies, as the JSON says: 512 + 1024 bytes in two. */
TEST(copy_bytes_match_the_program)
{
	char path[PATH_MAX + 64], out[128];
	struct stats st;
	char *j;

	snprintf(path, sizeof(path), "%s/examples/tma_1d_parity.vgs", root);
	snprintf(out, sizeof(out), "%s/tma.json", tmpdir);
	ASSERT_EQ(0, run_tool("--block 128 --buffer gmem1:512 --buffer gmem2:1024 --buffer out:512",
			      out, path));
	j = slurp(out, NULL);
	ASSERT_NE(NULL, j);
	EXPECT_EQ(NULL, check_trace(j, &st));
	EXPECT_EQ(2, st.copies);
	EXPECT_EQ(1536, st.copy_bytes);
	/* the leader's arrive.expect_tx and the copies' complete_tx: the
	 * phase completes once, releasing the 3 waiting warps (or fewer if
	 * some had not blocked yet): at least one flow */
	EXPECT_GT(st.flows, 0);
	free(j);
}

/* ---- the API: records against the core's counters ---- */

static const char rounds_src[] =
	".kernel rounds\n"
	"        MOV R1, 0x5 ;\n"
	"loop:\n"
	"        BAR.SYNC 0x1 ;\n"
	"        ISUB R1, R1, 0x1 ;\n"
	"        ISETP.GT.S32 P0, R1, 0x0 ;\n"
	"    @P0 BRA loop ;\n"
	"        EXIT ;\n";

FIXTURE(api)
{
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
};

FIXTURE_SETUP(api)
{
	ASSERT_EQ(0, vgpu_device_open("sim", &self->dev));
	ASSERT_EQ(0, vgpu_program_assemble(self->dev, rounds_src, strlen(rounds_src),
					   "rounds.vgs", &self->prog, NULL, 0));
	ASSERT_EQ(0, vgpu_program_kernel(self->prog, 0, &self->k));
}

FIXTURE_TEARDOWN(api)
{
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

static struct vgpu_job *launch(struct __test_metadata *_metadata,
			       const struct vgpu_kernel *k, uint32_t flags)
{
	struct vgpu_launch_config cfg = {
		.grid = { 3, 1, 1 }, .block = { 128, 1, 1 }, .flags = flags,
	};
	struct vgpu_job *job = NULL;

	EXPECT_EQ(0, vgpu_kernel_launch(k, &cfg, NULL, &job));
	if (job)
		EXPECT_EQ(0, vgpu_job_wait(job, -1));
	return job;
}

TEST_F(api, records_match_counters)
{
	struct vgpu_job *job = launch(_metadata, self->k, VGPU_LAUNCH_TIMELINE);
	const struct vgpu_trace_event *ev;
	struct vgpu_job_status js;
	uint32_t n, begin = 0, end = 0, complete = 0, exits = 0, blocks = 0, unblocks = 0;
	uint64_t dropped, insns = 0;

	ASSERT_NE(NULL, job);
	ASSERT_EQ(0, vgpu_job_timeline(job, &ev, &n, &dropped));
	ASSERT_EQ(0, vgpu_job_status(job, &js));
	EXPECT_EQ(0u, dropped);
	for (uint32_t i = 0; i < n; i++) {
		switch (ev[i].type) {
		case VGPU_TR_RUN: insns += ev[i].count; break;
		case VGPU_TR_CTA_BEGIN: begin++; break;
		case VGPU_TR_CTA_END: end++; break;
		case VGPU_TR_BAR_COMPLETE:
			complete++;
			EXPECT_EQ(1u, ev[i].id);
			EXPECT_NE(0u, ev[i].flow);
			break;
		case VGPU_TR_EXIT: exits++; break;
		case VGPU_TR_BLOCK:
			blocks++;
			EXPECT_EQ(VGPU_TRACE_WAIT_BAR, ev[i].reason);
			EXPECT_EQ(128u, ev[i].expected);
			break;
		case VGPU_TR_UNBLOCK: unblocks++; break;
		default: break;
		}
	}
	EXPECT_EQ(js.warp_insns, insns);
	EXPECT_EQ(3u, begin);
	EXPECT_EQ(3u, end);
	EXPECT_EQ(3u * 5, complete); /* 5 rounds in each of 3 CTAs */
	EXPECT_EQ(3u * 4, exits);
	/* each round the last warp to arrive goes on; 3 block and wake */
	EXPECT_EQ(3u * 5 * 3, blocks);
	EXPECT_EQ(blocks, unblocks);
	EXPECT_EQ(VGPU_TR_CTA_BEGIN, ev[0].type);
	vgpu_job_free(job);
}

TEST_F(api, full_buffer_drops_whole_records)
{
	struct vgpu_job *job = launch(_metadata, self->k, VGPU_LAUNCH_TIMELINE), *j3, *j0;
	const struct vgpu_trace_event *ev, *ev3;
	uint32_t n, n3;
	uint64_t dropped, dropped3;
	char *text = NULL;
	size_t len = 0;
	struct stats st;
	FILE *f;

	ASSERT_NE(NULL, job);
	ASSERT_EQ(0, vgpu_job_timeline(job, &ev, &n, &dropped));
	ASSERT_GT(n, 3u);
	EXPECT_EQ(0, vgpu_device_set_timeline_bytes(self->dev, 32 + 3 * 64));
	j3 = launch(_metadata, self->k, VGPU_LAUNCH_TIMELINE);
	{
		ASSERT_NE(NULL, j3);
		ASSERT_EQ(0, vgpu_job_timeline(j3, &ev3, &n3, &dropped3));
		EXPECT_EQ(3u, n3);
		EXPECT_EQ((uint64_t)n - 3, dropped3);
		EXPECT_EQ(0, memcmp(ev, ev3, 3 * sizeof(*ev)));
		f = open_memstream(&text, &len);
		ASSERT_NE(NULL, f);
		EXPECT_EQ(0, vgpu_job_write_timeline(j3, f));
		fclose(f);
		EXPECT_EQ(NULL, check_trace(text, &st));
		EXPECT_EQ((long long)n - 3, st.dropped);
		free(text);
		vgpu_job_free(j3);
	}
	/* just the header: every event dropped */
	EXPECT_EQ(0, vgpu_device_set_timeline_bytes(self->dev, 32));
	j0 = launch(_metadata, self->k, VGPU_LAUNCH_TIMELINE);
	{
		ASSERT_NE(NULL, j0);
		ASSERT_EQ(0, vgpu_job_timeline(j0, &ev3, &n3, &dropped3));
		EXPECT_EQ(0u, n3);
		EXPECT_EQ((uint64_t)n, dropped3);
		vgpu_job_free(j0);
	}
	vgpu_job_free(job);
}

TEST_F(api, errors)
{
	struct vgpu_job *job = launch(_metadata, self->k, 0);
	const struct vgpu_trace_event *ev;
	uint32_t n;
	FILE *f = fopen("/dev/null", "w");

	ASSERT_NE(NULL, job);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(-ENODATA, vgpu_job_timeline(job, &ev, &n, NULL));
	EXPECT_EQ(-ENODATA, vgpu_job_write_timeline(job, f));
	EXPECT_EQ(-ENOENT, vgpu_job_write_deadlock_graph(job, f)); /* no exception */
	EXPECT_EQ(-EINVAL, vgpu_job_timeline(job, NULL, &n, NULL));
	EXPECT_EQ(-EINVAL, vgpu_device_set_timeline_bytes(self->dev, 24));
	EXPECT_EQ(-EINVAL, vgpu_device_set_timeline_bytes(self->dev, 100));
	EXPECT_EQ(-EINVAL, vgpu_device_set_timeline_bytes(self->dev,
							  (64ull << 20) + 8));
	fclose(f);
	vgpu_job_free(job);
}

/* ---- deadlock graphs ---- */

static char *deadlock_dot(struct __test_metadata *_metadata,
			  struct vgpu_device *dev, const char *src, uint32_t threads,
			  bool timeline)
{
	struct vgpu_launch_config cfg = {
		.block = { threads, 1, 1 },
		.flags = VGPU_LAUNCH_SANITIZE | (timeline ? VGPU_LAUNCH_TIMELINE : 0),
	};
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_job *job = NULL;
	struct vgpu_exception_record rec;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	EXPECT_EQ(0, vgpu_program_assemble(dev, src, strlen(src), "dl.vgs", &prog, NULL, 0));
	if (!prog)
		return NULL;
	EXPECT_EQ(0, vgpu_program_kernel(prog, 0, &k));
	EXPECT_EQ(0, vgpu_kernel_launch(k, &cfg, NULL, &job));
	EXPECT_EQ(-EIO, vgpu_job_wait(job, -1));
	EXPECT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_DEADLOCK, rec.code);
	f = open_memstream(&text, &len);
	EXPECT_EQ(0, vgpu_job_write_deadlock_graph(job, f));
	fclose(f);
	vgpu_job_free(job);
	vgpu_program_free(prog);
	return text;
}

/* warp 0 waits on barrier 1 for warp 1, which waits on barrier 2 for warp 0 */
static const char cycle_src[] =
	".kernel cycle\n"
	"        S2R R0, SR_WARPID ;\n"
	"        ISETP.EQ.U32 P0, R0, 0x0 ;\n"
	"    @P0 BAR.SYNC 0x1 ;\n"
	"    @P0 BAR.SYNC 0x2 ;\n"
	"   @!P0 BAR.SYNC 0x2 ;\n"
	"   @!P0 BAR.SYNC 0x1 ;\n"
	"        EXIT ;\n";

/* an mbarrier expecting 2 arrivals; only warp 0 arrives, then all wait */
static const char lost_src[] =
	".kernel lost\n"
	".shared bar, 8\n"
	"        S2R R0, SR_TID ;\n"
	"        MOV R2, bar ;\n"
	"        ISETP.EQ.U32 P0, R0, 0x0 ;\n"
	"    @P0 MBAR.INIT [R2], 0x2 ;\n"
	"        BAR.SYNC 0x0 ;\n"
	"    @P0 MBAR.ARRIVE R4, [R2] ;\n"
	"wait:\n"
	"        MBAR.TRY_WAIT.PARITY P1, [R2], 0x0 ;\n"
	"   @!P1 BRA wait ;\n"
	"        EXIT ;\n";

TEST(deadlock_graph_cycle)
{
	struct vgpu_device *dev;
	char *dot;

	ASSERT_EQ(0, vgpu_device_open("sim", &dev));
	for (int tl = 0; tl < 2; tl++) {
		dot = deadlock_dot(_metadata, dev, cycle_src, 64, tl);
		ASSERT_NE(NULL, dot);
		EXPECT_NE(NULL, strstr(dot, "digraph deadlock"));
		EXPECT_NE(NULL, strstr(dot, "w0 -> b1 [label=\"waits\", color=red"))
			TH_LOG("%s", dot);
		EXPECT_NE(NULL, strstr(dot, "w1 -> b2 [label=\"waits\", color=red"));
		EXPECT_NE(NULL, strstr(dot, "b1 -> w1 [label=\"would arrive\", style=dashed, color=red"));
		EXPECT_NE(NULL, strstr(dot, "b2 -> w0 [label=\"would arrive\", style=dashed, color=red"));
		EXPECT_EQ(NULL, strstr(dot, "missing"));
		free(dot);
	}
	vgpu_device_close(dev);
}

TEST(deadlock_graph_missing_arrival)
{
	struct vgpu_device *dev;
	char *dot;

	ASSERT_EQ(0, vgpu_device_open("sim", &dev));
	dot = deadlock_dot(_metadata, dev, lost_src, 64, true);
	ASSERT_NE(NULL, dot);
	/* both warps wait (or spin) on the mbarrier at 0x0; nobody live would
	 * arrive on it: the missing arrival */
	EXPECT_NE(NULL, strstr(dot, "w0 -> m0")) TH_LOG("%s", dot);
	EXPECT_NE(NULL, strstr(dot, "w1 -> m0"));
	EXPECT_NE(NULL, strstr(dot, "missing arrival"));
	EXPECT_NE(NULL, strstr(dot, "1 pending"));
	free(dot);
	vgpu_device_close(dev);
}

/* ---- the system timeline (vgpu-trace --merge) ---- */

static bool near(double want, double got)
{
	return got > want - 0.01 && got < want + 0.01;
}

/*
 * Two jobs on the sim backend with $VGPU_TIMELINE_DIR set (libvgpu saves
 * their timelines), a tracefs text as the driver would print it for them
 * (job 2 waits for job 1's fence), merged by vgpu-trace: valid, with both
 * jobs, the dependency, the drm_sched and reset events, and each kernel's
 * CTA events inside its job's slice.
 */
TEST(system_timeline_merge)
{
	char dir[PATH_MAX], ftrace[PATH_MAX], out[PATH_MAX], cmd[6 * PATH_MAX];
	struct vgpu_launch_config cfg = { .grid = { 2, 1, 1 }, .block = { 64, 1, 1 } };
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_job *j1 = NULL, *j2 = NULL;
	unsigned long long id1, id2;
	json_t *jr, *evs, *e;
	struct stats st;
	double lo[3] = { 0 }, hi[3] = { 0 };
	int deps = 0, sched = 0, resets = 0, kernels = 0, outside = 0, streams = 0;
	const char *why;
	size_t i;
	char *text;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/jobs", tmpdir);
	ASSERT_EQ(0, mkdir(dir, 0700));
	ASSERT_EQ(0, setenv("VGPU_TIMELINE_DIR", dir, 1));
	ASSERT_EQ(0, vgpu_device_open("sim", &dev));
	ASSERT_EQ(0, vgpu_program_assemble(dev, rounds_src, strlen(rounds_src),
					   "rounds.vgs", &prog, NULL, 0));
	ASSERT_EQ(0, vgpu_program_kernel(prog, 0, &k));
	/* no VGPU_LAUNCH_TIMELINE: the environment asks for it */
	ASSERT_EQ(0, vgpu_kernel_launch(k, &cfg, NULL, &j1));
	ASSERT_EQ(0, vgpu_kernel_launch(k, &cfg, NULL, &j2));
	EXPECT_EQ(0, vgpu_job_wait(j1, -1));
	EXPECT_EQ(0, vgpu_job_wait(j2, -1));
	unsetenv("VGPU_TIMELINE_DIR");
	{
		const struct vgpu_trace_event *ev;
		uint32_t n;
		struct vgpu_job_status s1, s2;

		EXPECT_EQ(0, vgpu_job_timeline(j1, &ev, &n, NULL));
		ASSERT_EQ(0, vgpu_job_status(j1, &s1));
		ASSERT_EQ(0, vgpu_job_status(j2, &s2));
		(void)s1;
		(void)s2;
	}
	/* the jobs' driver ids: the saved files say them */
	{
		struct dirent *de;
		DIR *d = opendir(dir);
		unsigned long long c, idv[2];
		int nf = 0;

		ASSERT_NE(NULL, d);
		while ((de = readdir(d)))
			if (sscanf(de->d_name, "job-%llu-%llu.vgtl", &c, &idv[nf < 2 ? nf : 1]) == 2) {
				EXPECT_EQ(0ull, c);
				nf++;
			}
		closedir(d);
		ASSERT_EQ(2, nf);
		id1 = idv[0] < idv[1] ? idv[0] : idv[1];
		id2 = idv[0] < idv[1] ? idv[1] : idv[0];
	}
	vgpu_job_free(j1);
	vgpu_job_free(j2);
	vgpu_program_free(prog);
	vgpu_device_close(dev);

	snprintf(ftrace, sizeof(ftrace), "%s/trace.txt", tmpdir);
	f = fopen(ftrace, "w");
	ASSERT_NE(NULL, f);
	fprintf(f,
		"# tracer: nop\n#\n"
		"        test-95      [000] .....   100.000000: vgpu_job_submit: queue=0 client=0 job=%llu fence=5:1 file_queue=3\n"
		"        test-95      [000] .....   100.000010: vgpu_job_submit: queue=1 client=0 job=%llu fence=6:1 file_queue=7\n"
		"        test-95      [000] .....   100.000011: vgpu_job_dep: client=0 job=%llu fence=5:1\n"
		"        test-95      [000] .....   100.000012: drm_sched_job: entity=00000000a1b2c3d4, id=1, fence=00000000deadbeef, ring=vgpu-q0, job count:0, hw job count:0\n"
		"     kworker/0:1-12  [000] .....   100.000020: vgpu_job_ready: queue=0 client=0 job=%llu\n"
		"     kworker/0:1-12  [000] .....   100.000021: drm_run_job: entity=00000000a1b2c3d4, id=1, fence=00000000deadbeef, ring=vgpu-q0, job count:0, hw job count:1\n"
		"     kworker/0:1-12  [000] .....   100.000022: vgpu_job_run: queue=0 client=0 job=%llu seq=1\n"
		"          <idle>-0     [001] d.h1.   100.000500: vgpu_job_complete: queue=0 client=0 job=%llu error=0\n"
		"     kworker/1:1-13  [001] .....   100.000510: vgpu_job_ready: queue=1 client=0 job=%llu\n"
		"     kworker/1:1-13  [001] .....   100.000520: vgpu_job_run: queue=1 client=0 job=%llu seq=1\n"
		"          <idle>-0     [001] d.h1.   100.000900: vgpu_job_complete: queue=1 client=0 job=%llu error=0\n"
		"     kworker/1:1-13  [001] .....   100.000950: vgpu_reset: guilty queue=1 job=%llu\n",
		id1, id2, id2, id1, id1, id1, id2, id2, id2, id2);
	fclose(f);
	snprintf(out, sizeof(out), "%s/system.json", tmpdir);
	snprintf(cmd, sizeof(cmd), "'%s/vgpu-trace' --merge '%s' --timelines '%s' -o '%s'",
		 dirname_of(runner), ftrace, dir, out);
	ASSERT_EQ(0, system(cmd));
	text = slurp(out, NULL);
	ASSERT_NE(NULL, text);
	why = check_trace(text, &st);
	EXPECT_EQ(NULL, why) TH_LOG("%s", why);
	EXPECT_GT(st.runs, 0);
	EXPECT_EQ(0, st.unresolved);

	jr = json_loads(text, 0, NULL);
	ASSERT_NE(NULL, jr);
	evs = json_object_get(jr, "traceEvents");
	/* the jobs' slices, then everything of their kernels inside them */
	json_array_foreach(evs, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *cat = json_string_value(json_object_get(e, "cat"));
		const char *ph = json_string_value(json_object_get(e, "ph"));
		char want[64];

		for (int jn = 1; jn <= 2; jn++) {
			snprintf(want, sizeof(want), "job 0:%llu", jn == 1 ? id1 : id2);
			if (!strcmp(ph, "X") && !strcmp(name, want)) {
				lo[jn] = json_number_value(json_object_get(e, "ts"));
				hi[jn] = lo[jn] + json_number_value(json_object_get(e, "dur"));
			}
		}
		if (!cat)
			continue;
		/* the same jobs on their streams' tracks, in the client's process */
		if (!strcmp(cat, "stream")) {
			json_int_t tid = json_integer_value(json_object_get(e, "tid"));
			double ts = json_number_value(json_object_get(e, "ts"));

			EXPECT_EQ(2, json_integer_value(json_object_get(e, "pid")));
			EXPECT_TRUE(tid == 4 ? near(22.0, ts) : tid == 8 ? near(520.0, ts) : false)
				TH_LOG("stream slice on tid %lld at %f", (long long)tid, ts);
			EXPECT_EQ(0, strncmp(name, "kernel ", 7));
			streams++;
		}
		deps += !strcmp(cat, "dependency");
		sched += !strcmp(cat, "drm_sched");
		resets += !strcmp(cat, "reset");
		kernels += !strcmp(cat, "kernel");
	}
	/* us since the first event */
	EXPECT_TRUE(near(22.0, lo[1])) TH_LOG("job 1 runs at %f", lo[1]);
	EXPECT_TRUE(near(500.0, hi[1])) TH_LOG("job 1 ends at %f", hi[1]);
	EXPECT_TRUE(near(520.0, lo[2])) TH_LOG("job 2 runs at %f", lo[2]);
	EXPECT_EQ(2, deps); /* one flow: its start and its finish */
	EXPECT_EQ(2, sched);
	EXPECT_EQ(1, resets);
	EXPECT_EQ(2, kernels);
	EXPECT_EQ(2, streams);
	EXPECT_NE(NULL, strstr(text, "\"pid\":2,\"tid\":0,\"args\":{\"name\":\"client 0\"}"));
	EXPECT_NE(NULL, strstr(text, "\"pid\":2,\"tid\":4,\"args\":{\"name\":\"queue 3\"}"));
	EXPECT_NE(NULL, strstr(text, "\"pid\":2,\"tid\":8,\"args\":{\"name\":\"queue 7\"}"));
	json_array_foreach(evs, i, e) {
		json_int_t pid = json_integer_value(json_object_get(e, "pid"));
		double ts = json_number_value(json_object_get(e, "ts"));
		int jn = (int)(pid / 1000);

		if (pid < 1000 || !strcmp(json_string_value(json_object_get(e, "ph")), "M"))
			continue;
		if (jn < 1 || jn > 2 || ts < lo[jn] - 1e-6 || ts > hi[jn] + 1e-6)
			outside++;
	}
	EXPECT_EQ(0, outside);
	EXPECT_NE(NULL, strstr(text, "CTA (1,0,0)"));
	json_decref(jr);
	free(text);
}

TEST_HARNESS_MAIN
