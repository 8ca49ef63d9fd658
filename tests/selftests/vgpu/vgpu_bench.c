// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_bench: null-job submit-to-fence latency and jobs/s through vgpu.ko
 * (one job in flight, and 64), beside a DRM syncobj create/signal/wait/
 * destroy loop measured in the same run as the baseline (ratio).  Where
 * that time goes: the same job PHASE_JOBS more times with the driver's
 * tracepoints, the vgpu interrupt's irq_handler_entry and a trace_marker
 * write before SUBMIT and after the wait, the median of each phase.
 *
 * libvgpu's overhead on the drm backend: the same null job launched
 * through the library (vgpu_kernel_launch + vgpu_job_wait + vgpu_job_free:
 * a parameter page polled with WAIT_BO, the code and parameter BOs in the
 * job's list, a pooled completion syncobj, GET_JOB after the wait) beside
 * the raw ioctl path (SUBMIT + SYNCOBJ_WAIT, one syncobj and one parameter
 * BO reused, no BO list).  The two alternate launch by launch, so that
 * drift in the guest's speed falls on both; the ratio of the medians is
 * printed with the target (<= 1.2x), not asserted.  A raw variant that
 * lists the code and parameter BOs as the library does shows the part of
 * the difference that is the driver's implicit synchronisation.
 *
 * Device-side waits: a chain of CHAIN_JOBS dependent null jobs, each
 * waiting for the one before through a timeline syncobj point and
 * alternating between two queues on different hardware queues, behind a
 * first job that spins long enough for the whole chain to be submitted;
 * the time per link from the first job's end to the last's, with the
 * driver's SEM_ACQUIRE path (module parameter sem_deps=1) beside the same
 * chain waited for on the CPU (sem_deps=0), the ratio printed.
 * Preemption: a HIGH null job submitted while a LOW launch of PRE_CTAS
 * long one-thread CTAs (ended by a flag after the last HIGH job) holds
 * every SM, submit to fence, PRE_ITERS times
 * at irregular moments; with mid-kernel preemption (module parameter
 * preempt=1: the device saves LOW CTAs to make room) beside the same
 * without it (preempt=0: the HIGH job waits for a LOW CTA to end), the
 * ratio of the medians printed.
 * User-mode queues: the same null job written into a user queue's mapped
 * ring and started by a store to its doorbell, completion a SEM_RELEASE
 * of a 64-bit fence with an interrupt: waited for with WAIT_USER_FENCE
 * (which polls for up to ufence_spin_us before it sleeps), the same with
 * ufence_spin_us=0 (asleep at once, woken by the interrupt), and, the
 * path without any system call, by reading the fence until it moves.
 * The kinds take turns with the SUBMIT + SYNCOBJ_WAIT path (the
 * baseline), two jobs a turn, the second timed (uq_job() says why);
 * medians, jobs/s and ratios printed, target: the
 * user queue at least 3x faster.  And libvgpu's launch + wait on a user
 * queue beside the same on its default queue.  Issue 32 §3's targets,
 * each beside the syncobj round trip of the same boot: a null job
 * through SUBMIT within 5x, one on a user queue with WAIT_USER_FENCE
 * within 2x, and the device's share (the polled user queue: ring store
 * and doorbell write until the fence is in memory) within 5 us.
 * Run in the guest: `make bench-guest`.
 */
#include <stdbool.h>

#include "bench_summary.h"
#include "vgpu_lib.h"
#include "vgpu.h"

#define LIB_TARGET 1.2
#define UQ_TARGET 3.0

#define ITERS 300
#define DEPTH_JOBS 2000
#define CHAIN_JOBS 400

#define PRE_ITERS 25
#define PRE_CTAS 4096

static const char sem_deps_param[] = "/sys/module/vgpu/parameters/sem_deps";
static const char preempt_param[] = "/sys/module/vgpu/parameters/preempt";
static const char spin_param[] = "/sys/module/vgpu/parameters/ufence_spin_us";

static int64_t now(void)
{
	return vgpu_now_ns();
}

static void die(const char *what, int err)
{
	fprintf(stderr, "vgpu_bench: %s: %s\n", what, strerror(-err));
	exit(1);
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void set_param(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);	/* (O_TRUNC clears a trace) */

	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v))
		die(path, -errno);
	close(fd);
}

static void set_sem_deps(const char *v)
{
	set_param(sem_deps_param, v);
}

/*
 * The median of PRE_ITERS HIGH null jobs (@null on queue @qhigh), submit
 * to fence, each submitted while the LOW launch @low (on its own queue)
 * holds the SMs; the LOW launch must outlast them, and then ends: its
 * CTAs leave once @stop is set.
 */
static int64_t preempt_run(int fd, const struct drm_vgpu_submit *null,
			   uint32_t qhigh, const struct drm_vgpu_submit *low,
			   volatile uint32_t *stop)
{
	struct drm_vgpu_submit s = *low;
	struct drm_vgpu_sync lo = { 0 }, hi = { 0 };
	int64_t t[PRE_ITERS], t0;
	int i, ret;

	ret = _test_syncobj_create(fd, &lo.handle);
	ret = ret ?: _test_syncobj_create(fd, &hi.handle);
	if (ret)
		die("syncobj", ret);
	s.out_syncs = (uintptr_t)&lo;
	s.out_sync_count = 1;
	ret = _test_submit(fd, &s);
	if (ret)
		die("LOW submit", ret);
	usleep(20000);	/* the LOW CTAs are on every SM */
	for (i = 0; i < PRE_ITERS; i++) {
		s = *null;
		s.queue = qhigh;
		s.out_syncs = (uintptr_t)&hi;
		s.out_sync_count = 1;
		t0 = now();
		ret = _test_submit(fd, &s);
		ret = ret ?: _test_syncobj_wait(fd, hi.handle, 0, vgpu_wait_ns(10));
		t[i] = now() - t0;
		if (ret)
			die("HIGH null job", ret);
		usleep(1000 + 997 * (i % 7));	/* a different moment of a LOW CTA */
	}
	if (_test_syncobj_wait(fd, lo.handle, 0, 0) != -ETIME)
		die("preemption: the LOW launch ended before the last HIGH job; spin longer",
		    -EAGAIN);
	*stop = 1;	/* the LOW CTAs left end at once */
	ret = _test_syncobj_wait(fd, lo.handle, 0, vgpu_wait_ns(120));
	if (ret)
		die("LOW wait", ret);
	*stop = 0;
	_test_syncobj_destroy(fd, lo.handle);
	_test_syncobj_destroy(fd, hi.handle);
	qsort(t, PRE_ITERS, sizeof(t[0]), cmp64);
	return t[PRE_ITERS / 2];
}

/*
 * The chain: job i (1..CHAIN_JOBS) on queue q[i % 2] waits for point i - 1
 * of a fresh timeline syncobj and signals point i.  Nanoseconds from the
 * first submit to the last point signalled.
 */
static int64_t chain_run(int fd, const struct drm_vgpu_submit *tmpl,
			 const struct drm_vgpu_submit *spin, const uint32_t q[2])
{
	struct drm_vgpu_submit s = *spin;
	struct drm_vgpu_sync in, out;
	uint32_t tl;
	int64_t t1;
	int i, ret;

	ret = _test_syncobj_create(fd, &tl);
	if (ret)
		die("syncobj", ret);
	for (i = 1; i <= CHAIN_JOBS; i++) {
		in = (struct drm_vgpu_sync){ .handle = tl, .point = i - 1 };
		out = (struct drm_vgpu_sync){ .handle = tl, .point = i };
		if (i == 2)
			s = *tmpl;
		s.queue = q[i % 2];
		s.in_syncs = (uintptr_t)&in;
		s.in_sync_count = i > 1;
		s.out_syncs = (uintptr_t)&out;
		s.out_sync_count = 1;
		ret = _test_submit(fd, &s);
		if (ret)
			die("chain submit", ret);
		if (i == CHAIN_JOBS) {
			/* the chain must be queued before the spinner ends */
			ret = _test_syncobj_wait(fd, tl, 1, 0);
			if (ret != -ETIME)
				die("chain: the first job ended before the chain was submitted; spin longer",
				    -EAGAIN);
		}
	}
	ret = _test_syncobj_wait(fd, tl, 1, vgpu_wait_ns(60));
	t1 = now();
	ret = ret ?: _test_syncobj_wait(fd, tl, CHAIN_JOBS, vgpu_wait_ns(60));
	if (ret)
		die("chain wait", ret);
	return (now() - t1) / (CHAIN_JOBS - 1);
}

struct uq_bench {
	struct drm_vgpu_userq_create c;
	uint8_t *ring;
	volatile uint32_t *db;
	uint32_t tail;
	uint64_t seq;
};

/* A null job and a release of the next sequence number (@flags), rung. */
static void uq_null_job(struct uq_bench *u, const struct drm_vgpu_submit *s,
			uint64_t fence_va, uint32_t flags)
{
	struct vgpu_cmd_launch l = {
		.hdr = { .opcode = VGPU_CMD_LAUNCH },
		.code_va = s->launch.code_va,
		.code_size = s->launch.code_size,
		.entry = s->launch.entry,
		.grid = { 1, 1, 1 },
		.block = { 1, 1, 1 },
		.param_va = s->launch.param_va,
		.param_size = s->launch.param_size,
	};
	struct vgpu_cmd_sem r = {
		.hdr = { .opcode = VGPU_CMD_SEM_RELEASE, .flags = flags },
		.addr = fence_va,
		.payload = ++u->seq,
	};

	memcpy(u->ring + u->tail * VGPU_CMD_BYTES, &l, sizeof(l));
	u->tail = (u->tail + 1) % u->c.entries;
	memcpy(u->ring + u->tail * VGPU_CMD_BYTES, &r, sizeof(r));
	u->tail = (u->tail + 1) % u->c.entries;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	u->db[VGPU_DB_TAIL / 4] = u->tail;
}

/* The kinds of null job userq_bench() alternates. */
enum uq_kind { UQ_WAIT, UQ_WAIT_NO_POLL, UQ_POLL, UQ_POLL_NO_IRQ, UQ_SUBMIT, UQ_KINDS };

/*
 * One null job of @kind from start to the caller learning of its end, in
 * ns.  A user-queue release raises an interrupt, which may reach the
 * guest after the waiter has returned (a poll saw the value first) and
 * then costs the job after it: userq_bench() times the second of two
 * jobs of a kind, so that each kind pays for its own interrupts.
 */
static int64_t uq_job(int fd, struct uq_bench *u, enum uq_kind kind,
		      const struct drm_vgpu_submit *s, struct drm_vgpu_submit *s1,
		      uint32_t sync, volatile uint64_t *fence, uint64_t fence_va)
{
	struct drm_vgpu_wait_user_fence w = {
		.addr = (uintptr_t)fence, .mask = ~0ull, .op = VGPU_UFENCE_OP_GTE,
		.queue_id = u->c.queue_id,
	};
	int64_t t0 = now();
	int ret = 0;

	if (kind == UQ_SUBMIT) {
		ret = _test_submit(fd, s1);
		ret = ret ?: _test_syncobj_wait(fd, sync, 0, vgpu_wait_ns(10));
	} else {
		uq_null_job(u, s, fence_va, kind == UQ_POLL_NO_IRQ ? 0 : VGPU_CMD_F_IRQ);
		if (kind == UQ_POLL || kind == UQ_POLL_NO_IRQ) {
			while (*fence < u->seq)
				if (now() - t0 > vgpu_wait_ns(10))
					die("user queue null job (polled)", -ETIME);
		} else {
			w.value = u->seq;
			w.timeout_ns = vgpu_now_ns() + vgpu_wait_ns(10);
			ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w);
		}
	}
	if (ret)
		die("null job", ret);
	return now() - t0;
}

/*
 * Null jobs on a user queue against SUBMIT (@s, completion @sync), kind
 * by kind in turn (uq_kind: @t[kind][i]): waited with WAIT_USER_FENCE,
 * the same with ufence_spin_us=0, by reading the fence, the SUBMIT path;
 * libvgpu on a user queue (@luq) against its default queue (@ldef).  False
 * when the device has no user queues.
 */
static bool userq_bench(int fd, const struct drm_vgpu_submit *s, uint32_t sync,
			struct vgpu_prog *p, int64_t (*t)[ITERS],
			int64_t *luq, int64_t *ldef)
{
	struct drm_vgpu_submit s1 = *s;
	struct drm_vgpu_sync out = { .handle = sync };
	volatile uint64_t *fence = (volatile uint64_t *)((char *)p->data + 2048);
	uint64_t fence_va = p->data_va + 2048, n = 0;
	struct vgpu_launch_config cfg = { .block = { 1 } };
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_queue *q;
	struct uq_bench u = { 0 };
	char log[256], spin[32];
	int64_t t0, t1;
	int i, ret;

	if (_test_get_param(fd, VGPU_PARAM_USER_QUEUES, &n) || !n)
		return false;
	if (read_file(spin_param, spin, sizeof(spin)) <= 0)
		die(spin_param, -ENOENT);
	ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_CREATE, &u.c);
	if (ret)
		die("USERQ_CREATE", ret);
	u.ring = mmap(NULL, u.c.entries * VGPU_CMD_BYTES, PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, u.c.ring_offset);
	u.db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    u.c.doorbell_offset);
	if (u.ring == MAP_FAILED || u.db == MAP_FAILED)
		die("mmap", -errno);
	*fence = 0;
	s1.out_syncs = (uintptr_t)&out;
	s1.out_sync_count = 1;
	for (i = -10; i < ITERS; i++) {	/* 10 rounds of warm-up */
		for (int kind = 0; kind < UQ_KINDS; kind++) {
			int64_t d;

			if (kind == UQ_WAIT_NO_POLL)
				set_param(spin_param, "0");
			uq_job(fd, &u, kind, s, &s1, sync, fence, fence_va);
			d = uq_job(fd, &u, kind, s, &s1, sync, fence, fence_va);
			if (kind == UQ_WAIT_NO_POLL)
				set_param(spin_param, spin);
			if (i >= 0)
				t[kind][i] = d;
		}
	}
	munmap(u.ring, u.c.entries * VGPU_CMD_BYTES);
	munmap((void *)u.db, 4096);
	vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_DESTROY,
		   &(struct drm_vgpu_userq_destroy){ .queue_id = u.c.queue_id });

	ret = vgpu_device_open("drm", &dev);
	ret = ret ?: vgpu_program_assemble(dev, "  EXIT ;\n", 9, "null.vgs", &prog,
					   log, sizeof(log));
	ret = ret ?: vgpu_program_kernel(prog, 0, &k);
	ret = ret ?: vgpu_queue_new_user(dev, VGPU_QUEUE_PRIORITY_NORMAL, &q);
	if (ret)
		die("libvgpu user queue", ret);
	for (i = -10; i < ITERS; i++) {	/* two a turn, the second timed */
		for (int n = 0; n < 4; n++) {	/* user queue twice, then default */
			struct vgpu_job *job;

			t0 = now();
			cfg.queue = n < 2 ? q : NULL;
			ret = vgpu_kernel_launch(k, &cfg, NULL, &job);
			ret = ret ?: vgpu_job_wait(job, vgpu_wait_ns(10));
			vgpu_job_free(job);
			t1 = now();
			if (ret)
				die("libvgpu null jobs", ret);
			if (n % 2 && i >= 0)
				(n < 2 ? luq : ldef)[i] = t1 - t0;
		}
	}
	vgpu_queue_free(q);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
	return true;
}

/* ---- where a null job's time goes: tracepoints ---- */

#define TRACING "/sys/kernel/debug/tracing/"
#define PHASE_JOBS 200

enum phase_mark { PM_BEGIN, PM_SUBMIT, PM_RUN, PM_IRQ, PM_COMPLETE, PM_END, PM_N };

static const char *const phase_names[PM_N - 1] = {
	"ioctl entry -> vgpu_job_submit",
	"vgpu_job_submit -> vgpu_job_run (drm_sched)",
	"vgpu_job_run -> interrupt (device)",
	"interrupt -> vgpu_job_complete",
	"vgpu_job_complete -> wait returns",
};

static void tracing_write(const char *file, const char *v)
{
	char path[128];

	snprintf(path, sizeof(path), TRACING "%s", file);
	set_param(path, v);
}

/* The timestamp (us) before event @ev in trace line @line, or -1. */
static double trace_stamp(const char *line, const char *ev)
{
	const char *p = strstr(line, ev);

	if (!p || p - line < 3)
		return -1;
	p -= 2;			/* back over ": " to the timestamp's end */
	while (p > line && p[-1] != ' ')
		p--;
	return strtod(p, NULL) * 1e6;
}

/*
 * PHASE_JOBS null jobs (@s, completion @sync) with the driver's
 * tracepoints, the vgpu interrupt's irq_handler_entry and a trace_marker
 * write before SUBMIT and after SYNCOBJ_WAIT: the median of each phase in
 * @med (us, PM_N - 1 of them).  False without tracefs.
 */
static bool submit_phases(int fd, struct drm_vgpu_submit *s, uint32_t sync,
			  double *med)
{
	static double ph[PM_N - 1][PHASE_JOBS];
	double t[PM_N];
	int marker, n = 0, i, ret;
	char line[512];
	FILE *f;

	if (access(TRACING "trace_marker", W_OK))
		return false;
	tracing_write("tracing_on", "0");
	tracing_write("trace", "");
	tracing_write("events/irq/irq_handler_entry/filter", "name == \"vgpu\"");
	tracing_write("events/irq/irq_handler_entry/enable", "1");
	tracing_write("events/vgpu/enable", "1");
	marker = open(TRACING "trace_marker", O_WRONLY | O_CLOEXEC);
	if (marker < 0)
		die("trace_marker", -errno);
	tracing_write("tracing_on", "1");
	for (i = 0; i < PHASE_JOBS; i++) {
		if (write(marker, "vgpu_bench B", 12) != 12)
			die("trace_marker", -errno);
		ret = _test_submit(fd, s);
		ret = ret ?: _test_syncobj_wait(fd, sync, 0, vgpu_wait_ns(10));
		if (ret)
			die("null job (traced)", ret);
		if (write(marker, "vgpu_bench E", 12) != 12)
			die("trace_marker", -errno);
	}
	tracing_write("tracing_on", "0");
	close(marker);
	tracing_write("events/vgpu/enable", "0");
	tracing_write("events/irq/irq_handler_entry/enable", "0");
	tracing_write("events/irq/irq_handler_entry/filter", "0");
	f = fopen(TRACING "trace", "r");
	if (!f)
		die("trace", -errno);
	for (i = 0; i < PM_N; i++)
		t[i] = -1;
	while (fgets(line, sizeof(line), f)) {
		double v;

		if ((v = trace_stamp(line, "tracing_mark_write: vgpu_bench B")) >= 0) {
			for (i = 0; i < PM_N; i++)
				t[i] = -1;
			t[PM_BEGIN] = v;
		} else if ((v = trace_stamp(line, "vgpu_job_submit:")) >= 0) {
			t[PM_SUBMIT] = v;
		} else if ((v = trace_stamp(line, "vgpu_job_run:")) >= 0) {
			t[PM_RUN] = v;
		} else if ((v = trace_stamp(line, "irq_handler_entry:")) >= 0) {
			if (t[PM_RUN] >= 0 && t[PM_IRQ] < 0)
				t[PM_IRQ] = v;
		} else if ((v = trace_stamp(line, "vgpu_job_complete:")) >= 0) {
			t[PM_COMPLETE] = v;
		} else if ((v = trace_stamp(line, "tracing_mark_write: vgpu_bench E")) >= 0) {
			bool whole = n < PHASE_JOBS;

			t[PM_END] = v;
			for (i = 0; i + 1 < PM_N; i++)
				whole = whole && t[i] >= 0 && t[i + 1] >= t[i];
			if (whole) {
				for (i = 0; i + 1 < PM_N; i++)
					ph[i][n] = t[i + 1] - t[i];
				n++;
			}
		}
	}
	fclose(f);
	tracing_write("trace", "");
	if (n < PHASE_JOBS / 2)
		die("too few whole traces of a null job", -EPROTO);
	for (i = 0; i + 1 < PM_N; i++) {
		qsort(ph[i], n, sizeof(ph[i][0]), cmpd);
		med[i] = ph[i][n / 2];
	}
	return true;
}

int main(void)
{
	static int64_t lat[ITERS], base[ITERS], raw[ITERS], lib[ITERS], rawbo[ITERS];
	static int64_t ut[UQ_KINDS][ITERS], luq[ITERS], ldef[ITERS];
	int64_t *ufw = ut[UQ_WAIT], *ufs = ut[UQ_WAIT_NO_POLL];
	int64_t *upoll = ut[UQ_POLL], *upni = ut[UQ_POLL_NO_IRQ], *usub = ut[UQ_SUBMIT];
	bool have_uq, have_phases;
	double phase[PM_N - 1];
	struct vgpu_device *dev;
	struct vgpu_program *lprog;
	const struct vgpu_kernel *lk;
	struct vgpu_launch_config lcfg = { .block = { 1 } };
	char log[512];
	double lib_ratio;
	struct drm_vgpu_submit s;
	struct drm_vgpu_sync out = { 0 };
	struct vgpu_prog p;
	uint32_t h[3], tl;
	int64_t t0, t1, sum_lat = 0, sum_base = 0;
	double one_jps, deep_jps, chain_ratio;
	int64_t chain_dev, chain_cpu;
	struct drm_vgpu_submit ss, ls;
	struct vgpu_prog sp, lowp;
	uint32_t sh[3], lh[3], pre_q[2];
	int64_t pre_on, pre_off;
	uint32_t chain_q[2];
	int fd, i, ret;

	fd = vgpu_open_render();
	if (fd < 0)
		die("open", -ENODEV);
	ret = vgpu_prog_load(fd, &p, "  EXIT ;\n", 4096);
	if (ret)
		die("load", ret);
	vgpu_prog_submit_args(&p, &s, h, 1, 1);
	s.bo_handle_count = 0;	/* no implicit sync: the bare path */

	/* baseline: a syncobj created, signalled, waited for and destroyed */
	for (i = 0; i < ITERS; i++) {
		struct drm_syncobj_create c = { 0 };
		struct drm_syncobj_array a = { .count_handles = 1 };
		struct drm_syncobj_destroy d = { 0 };

		t0 = now();
		ret = vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);
		a.handles = (uintptr_t)&c.handle;
		ret = ret ?: vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
		ret = ret ?: _test_syncobj_wait(fd, c.handle, 0, vgpu_wait_ns(10));
		d.handle = c.handle;
		ret = ret ?: vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		t1 = now();
		if (ret)
			die("syncobj loop", ret);
		base[i] = t1 - t0;
		sum_base += base[i];
	}

	/* one job at a time: submit, wait for its fence */
	ret = _test_syncobj_create(fd, &out.handle);
	if (ret)
		die("syncobj", ret);
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	for (i = 0; i < ITERS; i++) {
		t0 = now();
		ret = _test_submit(fd, &s);
		ret = ret ?: _test_syncobj_wait(fd, out.handle, 0, vgpu_wait_ns(10));
		t1 = now();
		if (ret)
			die("null job", ret);
		lat[i] = t1 - t0;
		sum_lat += lat[i];
	}
	one_jps = 1e9 * ITERS / sum_lat;
	have_phases = submit_phases(fd, &s, out.handle, phase);

	/*
	 * The same null job through libvgpu, alternating with the raw path;
	 * rawbo: the raw path with the code and parameter BOs listed.
	 */
	ret = vgpu_device_open("drm", &dev);
	if (ret)
		die("vgpu_device_open", ret);
	ret = vgpu_program_assemble(dev, "  EXIT ;\n", 9, "null.vgs", &lprog, log,
				    sizeof(log));
	if (!ret)
		ret = vgpu_program_kernel(lprog, 0, &lk);
	if (ret)
		die("vgpu_program_assemble", ret);
	for (i = -10; i < ITERS; i++) {	/* 10 rounds of warm-up */
		struct drm_vgpu_submit sb = s;
		struct vgpu_job *job;
		int64_t t2, t3;

		t0 = now();
		ret = _test_submit(fd, &s);
		ret = ret ?: _test_syncobj_wait(fd, out.handle, 0, vgpu_wait_ns(10));
		t1 = now();
		if (ret)
			die("raw null job", ret);
		ret = vgpu_kernel_launch(lk, &lcfg, NULL, &job);
		ret = ret ?: vgpu_job_wait(job, vgpu_wait_ns(10));
		vgpu_job_free(job);
		t2 = now();
		if (ret)
			die("libvgpu null job", ret);
		sb.bo_handles = (uintptr_t)h;
		sb.bo_handle_count = 2;	/* code, parameters */
		ret = _test_submit(fd, &sb);
		ret = ret ?: _test_syncobj_wait(fd, out.handle, 0, vgpu_wait_ns(10));
		t3 = now();
		if (ret)
			die("raw null job with BOs", ret);
		if (i >= 0) {
			raw[i] = t1 - t0;
			lib[i] = t2 - t1;
			rawbo[i] = t3 - t2;
		}
	}
	vgpu_program_free(lprog);
	vgpu_device_close(dev);

	have_uq = userq_bench(fd, &s, out.handle, &p, ut, luq, ldef);

	/* 64 in flight: job n signals timeline point n; wait point n - 64 */
	ret = _test_syncobj_create(fd, &tl);
	if (ret)
		die("syncobj", ret);
	t0 = now();
	for (i = 1; i <= DEPTH_JOBS; i++) {
		if (i > 64) {
			ret = _test_syncobj_wait(fd, tl, i - 64, vgpu_wait_ns(10));
			if (ret)
				die("wait", ret);
		}
		out = (struct drm_vgpu_sync){ .handle = tl, .point = i };
		s.out_syncs = (uintptr_t)&out;
		ret = _test_submit(fd, &s);
		if (ret)
			die("submit", ret);
	}
	ret = _test_syncobj_wait(fd, tl, DEPTH_JOBS, vgpu_wait_ns(10));
	if (ret)
		die("wait", ret);
	t1 = now();
	deep_jps = 1e9 * DEPTH_JOBS / (t1 - t0);

	/* the chain across two queues (normal and low: two hardware queues) */
	s.out_syncs = 0;
	s.out_sync_count = 0;
	chain_q[0] = VGPU_QUEUE_DEFAULT;
	ret = _test_queue_create(fd, VGPU_QUEUE_PRIORITY_LOW, &chain_q[1]);
	if (ret)
		die("queue", ret);
	ret = vgpu_prog_load(fd, &sp, "  MOV R1, 0x0 ;\nl:\n  IADD R1, R1, 0x1 ;\n"
			     "  ISETP.LT.U32 P0, R1, 0x2000000 ;\n  @P0 BRA l ;\n  EXIT ;\n",
			     4096);
	if (ret)
		die("load", ret);
	vgpu_prog_submit_args(&sp, &ss, sh, 1, 1);
	ss.bo_handle_count = 0;
	ss.launch.budget = ~0ull;
	set_sem_deps("1");
	chain_run(fd, &s, &ss, chain_q);	/* warm-up */
	chain_dev = chain_run(fd, &s, &ss, chain_q);
	set_sem_deps("0");
	chain_cpu = chain_run(fd, &s, &ss, chain_q);
	set_sem_deps("1");
	chain_ratio = (double)chain_cpu / chain_dev;

	/* a HIGH null job while LOW CTAs hold the SMs */
	ret = _test_queue_create(fd, VGPU_QUEUE_PRIORITY_HIGH, &pre_q[0]);
	ret = ret ?: _test_queue_create(fd, VGPU_QUEUE_PRIORITY_LOW, &pre_q[1]);
	if (ret)
		die("queue", ret);
	ret = vgpu_prog_load(fd, &lowp, ".kernel low\n.param ptr stop\n  LDP.64 R2, [stop] ;\n"
			     "  MOV R1, 0x0 ;\nl:\n  IADD R1, R1, 0x1 ;\n"
			     "  LDG.32 R4, [R2] ;\n  ISETP.NE.U32 P1, R4, 0x0 ;\n  @P1 EXIT ;\n"
			     "  ISETP.LT.U32 P0, R1, 0x40000 ;\n  @P0 BRA l ;\n  EXIT ;\n",
			     4096);
	if (ret)
		die("load", ret);
	*(uint64_t *)lowp.param = lowp.data_va;
	*(volatile uint32_t *)lowp.data = 0;
	vgpu_prog_submit_args(&lowp, &ls, lh, PRE_CTAS, 1);
	ls.bo_handle_count = 0;
	ls.launch.budget = ~0ull;
	ls.queue = pre_q[1];
	s.out_syncs = 0;
	s.out_sync_count = 0;
	pre_on = preempt_run(fd, &s, pre_q[0], &ls, lowp.data);
	set_param(preempt_param, "0");
	pre_off = preempt_run(fd, &s, pre_q[0], &ls, lowp.data);
	set_param(preempt_param, "1");

	qsort(lat, ITERS, sizeof(lat[0]), cmp64);
	qsort(base, ITERS, sizeof(base[0]), cmp64);
	qsort(raw, ITERS, sizeof(raw[0]), cmp64);
	qsort(lib, ITERS, sizeof(lib[0]), cmp64);
	qsort(rawbo, ITERS, sizeof(rawbo[0]), cmp64);
	lib_ratio = (double)lib[ITERS / 2] / raw[ITERS / 2];
	if (have_uq) {
		double rw, rs, rp, rn;

		qsort(ufw, ITERS, sizeof(ufw[0]), cmp64);
		qsort(ufs, ITERS, sizeof(ufs[0]), cmp64);
		qsort(upoll, ITERS, sizeof(upoll[0]), cmp64);
		qsort(upni, ITERS, sizeof(upni[0]), cmp64);
		qsort(usub, ITERS, sizeof(usub[0]), cmp64);
		qsort(luq, ITERS, sizeof(luq[0]), cmp64);
		qsort(ldef, ITERS, sizeof(ldef[0]), cmp64);
		rw = (double)usub[ITERS / 2] / ufw[ITERS / 2];
		rs = (double)usub[ITERS / 2] / ufs[ITERS / 2];
		rp = (double)usub[ITERS / 2] / upoll[ITERS / 2];
		rn = (double)usub[ITERS / 2] / upni[ITERS / 2];
		printf("vgpu_bench: null job on a user-mode queue (ring + doorbell store, fence\n"
		       "  release with IRQ) vs SUBMIT + SYNCOBJ_WAIT, in turns, %d each\n", ITERS);
		printf("  SUBMIT + SYNCOBJ_WAIT                 median %8.1f us  %8.0f jobs/s   (baseline)\n",
		       usub[ITERS / 2] / 1e3, 1e9 / usub[ITERS / 2]);
		printf("  user queue, WAIT_USER_FENCE           median %8.1f us  %8.0f jobs/s   %.1fx faster   target >= %.0fx: %s\n",
		       ufw[ITERS / 2] / 1e3, 1e9 / ufw[ITERS / 2], rw, UQ_TARGET,
		       rw >= UQ_TARGET ? "met" : "not met");
		printf("  ... with ufence_spin_us=0 (no poll)   median %8.1f us  %8.0f jobs/s   %.1fx faster\n",
		       ufs[ITERS / 2] / 1e3, 1e9 / ufs[ITERS / 2], rs);
		printf("  user queue, fence polled (no syscall) median %8.1f us  %8.0f jobs/s   %.1fx faster\n",
		       upoll[ITERS / 2] / 1e3, 1e9 / upoll[ITERS / 2], rp);
		printf("  ... released without VGPU_CMD_F_IRQ   median %8.1f us  %8.0f jobs/s   %.1fx faster\n",
		       upni[ITERS / 2] / 1e3, 1e9 / upni[ITERS / 2], rn);
		printf("  libvgpu launch + wait, user queue     median %8.1f us   default queue %.1f us   %.2fx\n",
		       luq[ITERS / 2] / 1e3, ldef[ITERS / 2] / 1e3,
		       (double)ldef[ITERS / 2] / luq[ITERS / 2]);
		bench_row("guest, user queue null job (WAIT_USER_FENCE)",
			  bench_fmt("%.1f us", ufw[ITERS / 2] / 1e3),
			  bench_fmt("SUBMIT %.1f us", usub[ITERS / 2] / 1e3),
			  bench_fmt("%.1fx faster", rw), bench_fmt(">= %.0fx", UQ_TARGET),
			  rw >= UQ_TARGET);
		bench_row("guest, user queue null job (WAIT_USER_FENCE, no poll)",
			  bench_fmt("%.1f us", ufs[ITERS / 2] / 1e3),
			  bench_fmt("SUBMIT %.1f us", usub[ITERS / 2] / 1e3),
			  bench_fmt("%.1fx faster", rs), "", -1);
		bench_row("guest, user queue null job (fence polled)",
			  bench_fmt("%.1f us", upoll[ITERS / 2] / 1e3),
			  bench_fmt("SUBMIT %.1f us", usub[ITERS / 2] / 1e3),
			  bench_fmt("%.1fx faster", rp), bench_fmt(">= %.0fx", UQ_TARGET),
			  rp >= UQ_TARGET);
		bench_row("guest, user queue null job (fence polled, no interrupt)",
			  bench_fmt("%.1f us", upni[ITERS / 2] / 1e3),
			  bench_fmt("SUBMIT %.1f us", usub[ITERS / 2] / 1e3),
			  bench_fmt("%.1fx faster", rn), "", -1);
		bench_row("guest, libvgpu launch + wait on a user queue",
			  bench_fmt("%.1f us", luq[ITERS / 2] / 1e3),
			  bench_fmt("default queue %.1f us", ldef[ITERS / 2] / 1e3),
			  bench_fmt("%.2fx faster", (double)ldef[ITERS / 2] / luq[ITERS / 2]),
			  "", -1);
	}
	printf("vgpu_bench: null job (1 thread, EXIT), %d iterations, guest CLOCK_MONOTONIC\n", ITERS);
	printf("  syncobj create/signal/wait/destroy  median %8.1f us  mean %8.1f us   (baseline)\n",
	       base[ITERS / 2] / 1e3, sum_base / 1e3 / ITERS);
	printf("  null job submit -> fence signalled  median %8.1f us  mean %8.1f us   ratio %.1fx baseline (median)\n",
	       lat[ITERS / 2] / 1e3, sum_lat / 1e3 / ITERS,
	       (double)lat[ITERS / 2] / base[ITERS / 2]);
	printf("  jobs/s, 1 in flight                 %8.0f\n", one_jps);
	printf("  jobs/s, 64 in flight (%d jobs)    %8.0f   (%.1fx the 1-in-flight rate)\n",
	       DEPTH_JOBS, deep_jps, deep_jps / one_jps);
	if (have_phases) {
		double sum = 0;

		printf("vgpu_bench: where a null job's time goes (%d traced jobs, medians;\n"
		       "  tracepoints vgpu_job_*, irq_handler_entry, trace_marker)\n", PHASE_JOBS);
		for (i = 0; i < PM_N - 1; i++) {
			printf("  %-44s %8.1f us\n", phase_names[i], phase[i]);
			bench_row(bench_fmt("guest, null job: %s", phase_names[i]),
				  bench_fmt("%.1f us", phase[i]), "", "", "", -1);
			sum += phase[i];
		}
		printf("  %-44s %8.1f us   (traced; untraced median %.1f us)\n", "sum",
		       sum, lat[ITERS / 2] / 1e3);
	}
	printf("vgpu_bench: libvgpu overhead per launch, drm backend (null job, alternating, %d each)\n",
	       ITERS);
	printf("  raw SUBMIT + SYNCOBJ_WAIT             median %8.1f us   (baseline)\n",
	       raw[ITERS / 2] / 1e3);
	printf("  libvgpu launch + wait + free          median %8.1f us   ratio %.2fx   target <= %.1fx: %s\n",
	       lib[ITERS / 2] / 1e3, lib_ratio, LIB_TARGET,
	       lib_ratio <= LIB_TARGET ? "met" : "not met");
	printf("  raw, code + parameter BOs listed      median %8.1f us   ratio %.2fx   (the BO list's share)\n",
	       rawbo[ITERS / 2] / 1e3, (double)rawbo[ITERS / 2] / raw[ITERS / 2]);
	printf("vgpu_bench: chain of %d dependent null jobs alternating between two queues,\n"
	       "  queued behind a spinning job, timed from its end to the last job's\n",
	       CHAIN_JOBS);
	printf("  device-side waits (SEM_ACQUIRE)       %8.0f jobs/s  %8.1f us per link\n",
	       1e9 / chain_dev, chain_dev / 1e3);
	printf("  CPU waits (sem_deps=0)                %8.0f jobs/s  %8.1f us per link   (baseline)\n",
	       1e9 / chain_cpu, chain_cpu / 1e3);
	printf("  ratio                                 %8.2fx faster with device-side waits\n",
	       chain_ratio);
	printf("vgpu_bench: HIGH null job submit -> fence while %d long LOW CTAs hold the SMs,\n"
	       "  median of %d\n", PRE_CTAS, PRE_ITERS);
	printf("  with preemption (preempt=1)           median %8.1f us\n", pre_on / 1e3);
	printf("  without (preempt=0: waits for claims) median %8.1f us   (baseline)\n",
	       pre_off / 1e3);
	printf("  ratio                                 %8.1fx faster with preemption\n",
	       (double)pre_off / pre_on);
	bench_row("guest, HIGH null job behind LOW CTAs",
		  bench_fmt("%.1f us", pre_on / 1e3),
		  bench_fmt("no preemption %.1f us", pre_off / 1e3),
		  bench_fmt("%.1fx", (double)pre_off / pre_on), "", -1);
	bench_row("guest, dependent chain across 2 queues",
		  bench_fmt("%.1f us/link", chain_dev / 1e3),
		  bench_fmt("CPU waits %.1f us/link", chain_cpu / 1e3),
		  bench_fmt("%.2fx", chain_ratio), "", -1);
	/* issue 32 §3's targets, each beside the syncobj round trip */
	bench_row("guest, null job submit -> fence", bench_fmt("%.1f us", lat[ITERS / 2] / 1e3),
		  bench_fmt("syncobj round trip %.1f us", base[ITERS / 2] / 1e3),
		  bench_fmt("%.1fx", (double)lat[ITERS / 2] / base[ITERS / 2]), "<= 5x",
		  lat[ITERS / 2] <= 5 * base[ITERS / 2]);
	if (have_uq) {
		bench_row("guest, user queue null job (WAIT_USER_FENCE) vs syncobj",
			  bench_fmt("%.1f us", ufw[ITERS / 2] / 1e3),
			  bench_fmt("syncobj round trip %.1f us", base[ITERS / 2] / 1e3),
			  bench_fmt("%.2fx", (double)ufw[ITERS / 2] / base[ITERS / 2]),
			  "<= 2x", ufw[ITERS / 2] <= 2 * base[ITERS / 2]);
		/* ring store + doorbell write -> the fence in memory: the device's share */
		bench_row("guest, user queue doorbell -> fence polled (device share)",
			  bench_fmt("%.1f us", upoll[ITERS / 2] / 1e3),
			  bench_fmt("syncobj round trip %.1f us", base[ITERS / 2] / 1e3),
			  bench_fmt("%.2fx", (double)upoll[ITERS / 2] / base[ITERS / 2]),
			  "<= 5 us", upoll[ITERS / 2] <= 5000);
	}
	bench_row("guest, jobs/s with 64 in flight", bench_fmt("%.0f", deep_jps),
		  bench_fmt("1 in flight %.0f", one_jps), bench_fmt("%.1fx", deep_jps / one_jps),
		  "", -1);
	bench_row("guest, libvgpu launch + wait", bench_fmt("%.1f us", lib[ITERS / 2] / 1e3),
		  bench_fmt("raw ioctls %.1f us", raw[ITERS / 2] / 1e3),
		  bench_fmt("%.2fx", lib_ratio), bench_fmt("<= %.1fx", LIB_TARGET),
		  lib_ratio <= LIB_TARGET);
	close(fd);
	return 0;
}
