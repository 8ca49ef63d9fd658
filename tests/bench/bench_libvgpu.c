// SPDX-License-Identifier: MIT
/*
 * libvgpu's overhead per launch on the sim backend, beside a direct call of
 * the execution core doing the same launch (the baseline, measured in the
 * same run).
 *
 *   library:  vgpu_args_set_u32 + vgpu_kernel_launch + vgpu_job_wait +
 *             vgpu_job_free per launch (the ioctl path of the sim backend:
 *             parameter page, SUBMIT with its checks and buffer list, the
 *             core, the completion syncobj, GET_JOB)
 *   core:     the parameter written + vgpu_sm_launch() per launch, with the
 *             program predecoded once (vgpu_prog_load) and one SM
 *             (vgpu_sm_new), global memory in libvgpu/hostmem.h
 *
 * Two kernels: a small one that does some work (1 CTA of 128 or 32
 * threads, 11 instructions per warp, a store per thread) and an empty one
 * (1 thread, EXIT), whose time is all fixed cost per launch.  Each figure is the best
 * of REPS runs of ITERS launches; the ratio library / core is printed with
 * the target (<= 1.2x) and whether it is met, never asserted.  A last
 * section splits the library's launch into its calls (clock_gettime).
 *
 * (d) issue 32 section 1 through the sim backend: the compute-bound grid
 * (bench/kernels.h: 1024 CTAs of 256 threads, 500 iterations) and the
 * BAR.SYNC-heavy one (1000 rounds) at VGPU_SIM_THREADS=1 and =N (the
 * host's CPUs, at least 2; VGPU_BENCH_SIM_THREADS="1 2 4 ..." chooses,
 * VGPU_BENCH_CTAS the grid): warp-instructions per second and the
 * speed-up over the first, each best of 3, with the CPU time a launch
 * took on all threads (the cost of sharing, where the host's cores are
 * busy with other work); every run's output is
 * checked against the first's, bit for bit.  Then the fixed cost of a
 * launch that uses the pool (64 CTAs of the empty kernel): the first one,
 * which starts the threads, and the next ones.
 *
 * VGPU_BENCH_LAUNCHES=N (for callgrind, as bench_cuda): the empty kernel
 * only, one batch of N launches each side, in functions of their own
 * (lib_batch, core_batch), so that the difference of their inclusive
 * costs between two values of N, divided by the difference of the Ns, is
 * the cost of a launch without the setup.  VGPU_BENCH_KERNEL=I takes the
 * Ith kernel of the table below instead (0: 128 threads, 1: 32).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>
#include <unistd.h>

#include "bench/bench_summary.h"
#include "bench/kernels.h"
#include "hostmem.h"
#include "vgpu.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"

#define REPS 5
#define TARGET 1.2

static const char store_src[] =
	".kernel store\n"
	".param ptr out\n"
	".param u32 k\n"
	"  S2R R0, SR_TID.X ;\n"
	"  S2R R1, SR_CTAID.X ;\n"
	"  S2R R7, SR_NTID.X ;\n"
	"  IMAD R0, R1, R7, R0 ;\n"
	"  LDP.64 R2, [out] ;\n"
	"  LDP.32 R8, [k] ;\n"
	"  SHL R4, R0, 0x2 ;\n"
	"  IADD R2, R2, R4 ;\n"
	"  IMAD R5, R0, 0x2, R8 ;\n"
	"  STG.32 [R2], R5 ;\n"
	"  EXIT ;\n";

static const char empty_src[] =
	".kernel empty\n"
	".param ptr out\n"
	".param u32 k\n"
	"  EXIT ;\n";

struct bench {
	const char *name;
	const char *src;
	uint32_t threads;
	unsigned int iters;
	uint32_t check_words; /* out[i] = 2i + k of the last launch */
};

/* 20 barrier rounds of 8 warps: many events per launch */
static const char rounds_src[] =
	".kernel rounds\n"
	".param ptr out\n"
	".param u32 k\n"
	"  MOV R1, 0x14 ;\n"
	"loop:\n"
	"  BAR.SYNC 0x0 ;\n"
	"  ISUB R1, R1, 0x1 ;\n"
	"  ISETP.GT.S32 P0, R1, 0x0 ;\n"
	"  @P0 BRA loop ;\n"
	"  EXIT ;\n";

static const struct bench benches[] = {
	{ "small (1 CTA x 128 threads, 11 insns/warp)", store_src, 128, 20000, 128 },
	{ "small (1 CTA x 32 threads, 11 insns/warp)", store_src, 32, 20000, 32 },
	{ "empty (1 thread, EXIT)", empty_src, 1, 50000, 0 },
};

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "bench_libvgpu: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check_out(const uint32_t *out, uint32_t n, uint32_t k, const char *who)
{
	for (uint32_t i = 0; i < n; i++)
		if (out[i] != 2 * i + k) {
			fprintf(stderr, "bench_libvgpu: %s: out[%u] = %u, expected %u\n",
				who, i, out[i], 2 * i + k);
			exit(1);
		}
}

static int reps = REPS; /* 1 with VGPU_BENCH_LAUNCHES */

/* @n launches of the library, as lib_time_flags() without its options. */
static void __attribute__((noinline))
lib_batch(const struct vgpu_kernel *k, const struct vgpu_launch_config *cfg,
	  struct vgpu_args *args, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct vgpu_job *job;
		int ret = vgpu_args_set_u32(args, 1, i);

		ret = ret ?: vgpu_kernel_launch(k, cfg, args, &job);
		if (ret)
			die("launch", ret);
		ret = vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE);
		if (ret)
			die("wait", ret);
		vgpu_job_free(job);
	}
}

/* @n launches of the core, as core_time()'s. */
static void __attribute__((noinline))
core_batch(struct vgpu_sm *sm, const struct vgpu_launch *l, uint8_t *params,
	   unsigned int n)
{
	struct vgpu_exception_record exc;

	for (unsigned int i = 0; i < n; i++) {
		uint32_t k = i;

		memcpy(params + 8, &k, 4);
		if (vgpu_sm_launch(sm, l, &exc))
			die(exc.msg, EIO);
	}
}

/*
 * ns per launch through the library (best of REPS); with @flags, and with
 * @json the job's timeline converted to JSON (into a memory stream).
 */
static double lib_time_flags(const struct bench *b, struct vgpu_device *dev,
			     uint32_t flags, bool json, uint32_t *events)
{
	struct vgpu_launch_config cfg = { .block = { b->threads }, .flags = flags };
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args;
	struct vgpu_bo *bo;
	uint32_t *out;
	char log[1024];
	double best = 1e30;
	int ret;

	ret = vgpu_program_assemble(dev, b->src, strlen(b->src), "bench", &prog,
				    log, sizeof(log));
	if (ret) {
		fputs(log, stderr);
		die("assemble", ret);
	}
	ret = vgpu_program_kernel(prog, 0, &k);
	ret = ret ?: vgpu_bo_new(dev, 4096, 0, &bo);
	ret = ret ?: vgpu_bo_map(bo, (void **)&out);
	ret = ret ?: vgpu_args_new(k, &args);
	ret = ret ?: vgpu_args_set_bo(args, 0, bo, 0);
	if (ret)
		die("setup", ret);
	for (int r = 0; r < reps; r++) {
		int64_t t0 = now_ns();

		if (!flags && !json && !events) {
			lib_batch(k, &cfg, args, b->iters);
			goto timed;
		}
		for (unsigned int i = 0; i < b->iters; i++) {
			struct vgpu_job *job;

			ret = vgpu_args_set_u32(args, 1, i);
			ret = ret ?: vgpu_kernel_launch(k, &cfg, args, &job);
			if (ret)
				die("launch", ret);
			ret = vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE);
			if (ret)
				die("wait", ret);
			if (events) {
				const struct vgpu_trace_event *ev;
				uint64_t dropped;

				ret = vgpu_job_timeline(job, &ev, events, &dropped);
				if (ret || dropped)
					die("timeline", ret ? ret : -ENOSPC);
			}
			if (json) {
				char *text = NULL;
				size_t len = 0;
				FILE *f = open_memstream(&text, &len);

				if (!f || vgpu_job_write_timeline(job, f))
					die("timeline JSON", -EIO);
				fclose(f);
				free(text);
			}
			vgpu_job_free(job);
		}
timed:;
		double t = (double)(now_ns() - t0) / b->iters;

		if (t < best)
			best = t;
		check_out(out, b->check_words, b->iters - 1, "library");
	}
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
	return best;
}

static double lib_time(const struct bench *b, struct vgpu_device *dev)
{
	return lib_time_flags(b, dev, 0, false, NULL);
}

/*
 * What recording a timeline costs (VGPU_LAUNCH_TIMELINE), beside the same
 * launches without it, and converting it to JSON.
 */
static void timeline_cost(struct vgpu_device *dev)
{
	static const struct bench b = { "rounds", rounds_src, 256, 2000, 0 };
	uint32_t events = 0;
	double off = lib_time_flags(&b, dev, 0, false, NULL);
	double on = lib_time_flags(&b, dev, VGPU_LAUNCH_TIMELINE, false, &events);
	double json = lib_time_flags(&b, dev, VGPU_LAUNCH_TIMELINE, true, NULL);

	printf("  timeline (1 CTA x 256 threads, 20 BAR.SYNC rounds, %u events per launch):\n",
	       events);
	printf("    off %8.0f ns   on %8.0f ns   ratio %.2fx   (%.1f ns per event)\n",
	       off, on, on / off, (on - off) / (events ? events : 1));
	printf("    on + JSON %8.0f ns   (JSON %.0f ns per event)\n", json,
	       (json - on) / (events ? events : 1));
	bench_row("timeline recording, 256 threads", bench_fmt("%.0f ns", on),
		  bench_fmt("off %.0f ns", off), bench_fmt("%.2fx (%.1f ns/event)", on / off,
							  (on - off) / (events ? events : 1)),
		  "", -1);
}

/* ns per launch calling the core directly (best of REPS). */
static double core_time(const struct bench *b)
{
	struct vgpu_object obj;
	struct vgpu_hostmem hm;
	struct vgpu_prog *prog;
	struct vgpu_sm *sm;
	struct vgpu_launch l;
	uint8_t params[16] = { 0 };
	uint64_t addr;
	uint8_t *out;
	char log[1024];
	double best = 1e30;
	int ret;

	ret = vgpu_assemble(b->src, strlen(b->src), "bench", &obj, log, sizeof(log));
	if (ret) {
		fputs(log, stderr);
		die("assemble", ret);
	}
	if (obj.kernels[0].param_size > sizeof(params))
		die("parameter layout", EINVAL);
	ret = vgpu_prog_load(obj.code, obj.code_size, &prog);
	if (ret)
		die("vgpu_prog_load", ret);
	sm = vgpu_sm_new(NULL);
	if (!sm)
		die("vgpu_sm_new", ENOMEM);
	vgpu_hostmem_init(&hm, 0x100000, 0x100000000ull);
	ret = vgpu_hostmem_alloc(&hm, 4096, &addr, &out);
	if (ret)
		die("vgpu_hostmem_alloc", ret);
	memcpy(params, &addr, 8);
	l = (struct vgpu_launch){
		.prog = prog,
		.entry = obj.kernels[0].entry,
		.grid = { 1, 1, 1 },
		.block = { b->threads, 1, 1 },
		.cluster = { 1, 1, 1 },
		.smem_bytes = obj.kernels[0].smem_static,
		.params = params,
		.param_size = obj.kernels[0].param_size,
		.mem = &vgpu_hostmem_ops,
		.mem_opaque = &hm,
	};
	for (int r = 0; r < reps; r++) {
		int64_t t0 = now_ns();

		core_batch(sm, &l, params, b->iters);
		double t = (double)(now_ns() - t0) / b->iters;

		if (t < best)
			best = t;
		check_out((const uint32_t *)out, b->check_words, b->iters - 1, "core");
	}
	vgpu_sm_free(sm);
	vgpu_hostmem_fini(&hm);
	vgpu_prog_free(prog);
	vgpu_object_fini(&obj);
	return best;
}

/*
 * Where the library's time goes: the empty kernel's launch split into
 * its calls, each timed on its own (sums of clock_gettime deltas, so
 * the clock's own cost is in them).
 */
static void breakdown(struct vgpu_device *dev)
{
	struct vgpu_launch_config cfg = { .block = { 1 } };
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args;
	struct vgpu_bo *bo;
	const unsigned int n = 50000;
	int64_t t_set = 0, t_launch = 0, t_wait = 0, t_free = 0, t_nojob = 0;
	int64_t t_param;
	char log[256];
	int ret;

	ret = vgpu_program_assemble(dev, empty_src, strlen(empty_src), "bench",
				    &prog, log, sizeof(log));
	ret = ret ?: vgpu_program_kernel(prog, 0, &k);
	ret = ret ?: vgpu_bo_new(dev, 4096, 0, &bo);
	ret = ret ?: vgpu_args_new(k, &args);
	ret = ret ?: vgpu_args_set_bo(args, 0, bo, 0);
	if (ret)
		die("setup", ret);
	for (unsigned int i = 0; i < n; i++) {
		struct vgpu_job *job;
		int64_t t0, t1, t2, t3, t4;

		t0 = now_ns();
		vgpu_args_set_u32(args, 1, i);
		t1 = now_ns();
		if (vgpu_kernel_launch(k, &cfg, args, &job))
			die("launch", EIO);
		t2 = now_ns();
		if (vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE))
			die("wait", EIO);
		t3 = now_ns();
		vgpu_job_free(job);
		t4 = now_ns();
		t_set += t1 - t0;
		t_launch += t2 - t1;
		t_wait += t3 - t2;
		t_free += t4 - t3;
	}
	for (unsigned int i = 0; i < n; i++) {
		int64_t t0 = now_ns();

		if (vgpu_kernel_launch(k, &cfg, args, NULL))
			die("launch", EIO);
		t_nojob += now_ns() - t0;
	}
	{
		int64_t t0 = now_ns();
		uint64_t v;

		for (unsigned int i = 0; i < n; i++)
			if (vgpu_device_get_param(dev, VGPU_PARAM_SMS, &v))
				die("get_param", EIO);
		t_param = now_ns() - t0;
	}
	printf("  where the library's time goes (empty kernel, mean of %u, ns):\n", n);
	printf("    vgpu_args_set_u32 %6.0f   vgpu_kernel_launch %6.0f   vgpu_job_wait %6.0f   vgpu_job_free %6.0f\n",
	       (double)t_set / n, (double)t_launch / n, (double)t_wait / n,
	       (double)t_free / n);
	printf("    vgpu_kernel_launch without a job handle (fire and forget) %6.0f\n",
	       (double)t_nojob / n);
	printf("    one ioctl through the sim backend (vgpu_device_get_param) %6.0f\n"
	       "    (on sim a launch and its wait are two: SUBMIT, GET_JOB; the rest is\n"
	       "    the front end's bookkeeping and SUBMIT's checks and lookups)\n",
	       (double)t_param / n);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

/* ---- (d) VGPU_SIM_THREADS ---- */

struct sim_grid {
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args;
	struct vgpu_bo *bo;
	uint8_t *out;
	uint64_t bytes;
};

static void sim_grid_init(struct sim_grid *g, struct vgpu_device *dev,
			  const char *src, uint32_t ctas)
{
	char log[1024];
	int ret;

	g->bytes = (uint64_t)ctas * 4096;
	ret = vgpu_program_assemble(dev, src, strlen(src), "bench", &g->prog, log,
				    sizeof(log));
	if (ret) {
		fputs(log, stderr);
		die("assemble", ret);
	}
	ret = vgpu_program_kernel(g->prog, 0, &g->k);
	ret = ret ?: vgpu_bo_new(dev, g->bytes, 0, &g->bo);
	ret = ret ?: vgpu_bo_map(g->bo, (void **)&g->out);
	ret = ret ?: vgpu_args_new(g->k, &g->args);
	ret = ret ?: vgpu_args_set_bo(g->args, 0, g->bo, 0);
	if (ret)
		die("setup", ret);
}

static void sim_grid_fini(struct sim_grid *g)
{
	vgpu_args_free(g->args);
	vgpu_bo_free(g->bo);
	vgpu_program_free(g->prog);
}

/* CPU time of the process (every thread), ns */
static double cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
}

/* ns of one launch of @ctas CTAs of @threads threads, its warp-insns. */
static double sim_grid_run(struct sim_grid *g, uint32_t ctas, uint32_t threads,
			   uint64_t *insns)
{
	struct vgpu_launch_config cfg = { .grid = { ctas }, .block = { threads } };
	struct vgpu_job_status st;
	struct vgpu_job *job;
	int64_t t0 = now_ns();
	int ret = vgpu_kernel_launch(g->k, &cfg, g->args, &job);

	ret = ret ?: vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE);
	if (ret)
		die("grid launch", ret);
	t0 = now_ns() - t0;
	vgpu_job_status(job, &st);
	vgpu_job_free(job);
	if (insns)
		*insns = st.warp_insns;
	return (double)t0;
}

static void sim_threads_scaling(void)
{
	const char *list = getenv("VGPU_BENCH_SIM_THREADS");
	const char *ctas_env = getenv("VGPU_BENCH_CTAS");
	uint32_t ctas = ctas_env && *ctas_env ? (uint32_t)strtoul(ctas_env, NULL, 0) : 1024;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int n[16], nn = 0;
	char dflt[32], *copy, *tok, *save;
	struct {
		const char *name;
		char src[sizeof(alu_src_fmt) + sizeof(bar_src_fmt) + 32];
	} grids[2];

	snprintf(dflt, sizeof(dflt), "1 %ld", cpus > 2 ? cpus : 2);
	copy = strdup(list && *list ? list : dflt);
	for (tok = strtok_r(copy, " ,", &save); tok && nn < 16;
	     tok = strtok_r(NULL, " ,", &save))
		if ((n[nn] = (unsigned int)strtoul(tok, NULL, 0)) >= 1)
			nn++;
	free(copy);
	if (!nn || !ctas || ctas > 65536)
		die("VGPU_BENCH_SIM_THREADS / VGPU_BENCH_CTAS", EINVAL);
	grids[0].name = "compute";
	snprintf(grids[0].src, sizeof(grids[0].src), alu_src_fmt, 500u);
	grids[1].name = "BAR.SYNC";
	snprintf(grids[1].src, sizeof(grids[1].src), bar_src_fmt, 1000u, "BAR.SYNC 0x0");
	printf("  (d) VGPU_SIM_THREADS: %u independent CTAs x 256 threads (%ld CPUs online), "
	       "best of 3:\n", ctas, cpus);
	for (unsigned int gi = 0; gi < 2; gi++) {
		uint8_t *ref = NULL;
		double t1 = 0;

		for (unsigned int i = 0; i < nn; i++) {
			struct vgpu_device *dev;
			struct sim_grid g;
			uint64_t insns = 0;
			double best = 1e30, cpu, wips;
			int ret = vgpu_device_open("sim", &dev);

			ret = ret ?: vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, n[i]);
			if (ret)
				die("sim device", ret);
			sim_grid_init(&g, dev, grids[gi].src, ctas);
			cpu = cpu_ns();
			for (int r = 0; r < 3; r++) {
				double t;

				memset(g.out, 0, g.bytes);
				t = sim_grid_run(&g, ctas, 256, &insns);
				if (t < best)
					best = t;
			}
			cpu = (cpu_ns() - cpu) / 3;
			if (!ref) {
				ref = malloc(g.bytes);
				if (!ref)
					die("malloc", ENOMEM);
				memcpy(ref, g.out, g.bytes);
				t1 = best;
			} else if (memcmp(ref, g.out, g.bytes)) {
				die("VGPU_SIM_THREADS changed a grid's results", EIO);
			}
			wips = (double)insns / (best / 1e9);
			/* CPU time per launch, all threads: what sharing costs */
			printf("    %-8s threads=%-3u %9.2f ms  %7.1f M warp-insns/s  speed-up %.2fx over "
			       "threads=%u   (CPU %.2f ms per launch)\n", grids[gi].name, n[i],
			       best / 1e6, wips / 1e6, t1 / best, n[0], cpu / 1e6);
			bench_row(bench_fmt("sim %s, %u CTAs, VGPU_SIM_THREADS=%u", grids[gi].name,
					    ctas, n[i]),
				  bench_fmt("%.2f ms (%.0f M warp-insns/s)", best / 1e6, wips / 1e6),
				  bench_fmt("threads=%u %.2f ms", n[0], t1 / 1e6),
				  bench_fmt("%.2fx speed-up", t1 / best), "", -1);
			sim_grid_fini(&g);
			vgpu_device_close(dev);
		}
		free(ref);
	}

	/* the pool's fixed cost: 64 CTAs of the empty kernel */
	for (unsigned int i = 0; i < nn; i++) {
		struct vgpu_device *dev;
		struct sim_grid g;
		double first, best = 1e30;
		int ret = vgpu_device_open("sim", &dev);

		ret = ret ?: vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, n[i]);
		if (ret)
			die("sim device", ret);
		sim_grid_init(&g, dev, empty_src, 64);
		first = sim_grid_run(&g, 64, 32, NULL);
		for (int r = 0; r < 5; r++) {
			int64_t t0 = now_ns();

			for (int j = 0; j < 200; j++)
				sim_grid_run(&g, 64, 32, NULL);
			if ((double)(now_ns() - t0) / 200 < best)
				best = (double)(now_ns() - t0) / 200;
		}
		printf("    empty kernel, 64 CTAs, threads=%-3u first launch %8.0f ns   "
		       "then %8.0f ns per launch\n", n[i], first, best);
		sim_grid_fini(&g);
		vgpu_device_close(dev);
	}
}

/* Sections, as bench_core's: (a) launch overhead, (b) its breakdown, (c)
 * the timeline, (d) VGPU_SIM_THREADS; none named: all (perf record of one
 * thing at a time). */
static bool section(int argc, char **argv, char c)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (strchr(argv[i], c))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct vgpu_device *dev;
	const char *e = getenv("VGPU_BENCH_LAUNCHES");
	int ret = vgpu_device_open("sim", &dev);

	if (ret)
		die("vgpu_device_open(\"sim\")", ret);
	if (e && *e) {
		/* VGPU_BENCH_KERNEL=i: benches[i] (default: the empty kernel) */
		const char *ki = getenv("VGPU_BENCH_KERNEL");
		size_t nb = sizeof(benches) / sizeof(benches[0]);
		size_t i = ki && *ki ? strtoul(ki, NULL, 0) : nb - 1;
		struct bench b = benches[i < nb ? i : nb - 1];
		double core, lib;

		reps = 1;
		b.iters = (unsigned int)strtoul(e, NULL, 0);
		if (!b.iters)
			b.iters = 1;
		core = core_time(&b);
		lib = lib_time(&b, dev);
		printf("bench_libvgpu: %u launches of the %s kernel: core %.0f ns, libvgpu %.0f ns\n",
		       b.iters, b.name, core, lib);
		vgpu_device_close(dev);
		return 0;
	}
	printf("bench_libvgpu: library overhead per launch, sim backend, best of %d runs\n",
	       REPS);
	for (size_t i = 0; section(argc, argv, 'a') &&
			   i < sizeof(benches) / sizeof(benches[0]); i++) {
		const struct bench *b = &benches[i];
		double core = core_time(b), lib = lib_time(b, dev);
		double ratio = lib / core;

		printf("  %-44s core %8.0f ns   libvgpu %8.0f ns   (+%.0f ns)   ratio %.2fx   target <= %.1fx: %s\n",
		       b->name, core, lib, lib - core, ratio, TARGET,
		       ratio <= TARGET ? "met" : "not met");
		bench_row(bench_fmt("sim backend, %s", b->name), bench_fmt("%.0f ns", lib),
			  bench_fmt("core %.0f ns", core), bench_fmt("%.2fx", ratio),
			  bench_fmt("<= %.1fx", TARGET), ratio <= TARGET);
	}
	if (section(argc, argv, 'b'))
		breakdown(dev);
	if (section(argc, argv, 'c'))
		timeline_cost(dev);
	if (section(argc, argv, 'd'))
		sim_threads_scaling();
	vgpu_device_close(dev);
	return 0;
}
