/* SPDX-License-Identifier: MIT */
/*
 * Core benchmarks.  Every figure is printed beside a baseline measured in
 * the same run, with the ratio; the targets are printed, never enforced.
 *
 *   (a) ALU-bound kernel, 1024 threads: time and instruction rates beside
 *       plain C doing the same arithmetic for 1024 "threads".
 *   (b) BAR.SYNC-heavy kernel, 1024 threads: ns per full-CTA barrier round
 *       beside the same loop with NOP in place of BAR.SYNC, the plain C
 *       cost of the ALU work, and the plain C bookkeeping a barrier needs.
 *   (c) Core state per resident CTA beside plain per-thread register files.
 *   (d) mbarrier arrive + wait round trip beside a C model of the protocol.
 *   (e), (f): the copy engine, in bench_copy.c.
 *   (g) the cost of a launch as the grid (1..4096 CTAs) and the CTA
 *       (32..1024 threads) grow, beside the smallest.
 *
 * Times are the best of REPS runs (CLOCK_MONOTONIC).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_NAME "bench_core"
#include "bench/bench_summary.h"
#include "bench/core_harness.h"
#include "bench/kernels.h"

#define REPS 5
#define THREADS 1024u
#define ALU_ITERS 2000u	 /* loop iterations per thread in (a) */
#define ALU_LOOP_INSNS 7 /* instructions in the loop body of (a) */
#define BAR_ROUNDS 20000u

/* Best-of-REPS time of one launch; @st gets the stats of the last run. */
static uint64_t time_launch(struct vgpu_sm *sm, const struct vgpu_launch *l,
			    struct gmem *gm, struct vgpu_sm_stats *st)
{
	uint64_t best = UINT64_MAX;

	for (int r = 0; r < REPS; r++) {
		struct vgpu_exception_record exc;
		uint64_t t0, t;

		memset(gm->data, 0, gm->size);
		vgpu_sm_reset_stats(sm);
		t0 = now_ns();
		if (vgpu_sm_launch(sm, l, &exc))
			die("launch failed: %s at pc 0x%x: %s",
			    vgpu_exc_name(exc.code), exc.pc, exc.msg);
		t = now_ns() - t0;
		if (t < best)
			best = t;
	}
	vgpu_sm_get_stats(sm, st);
	return best;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

/* ---- (a) ALU-bound ---- */



/* The same computation in plain C, one "thread" after another. */
static __attribute__((noinline)) void alu_c(uint32_t iters, uint32_t *out)
{
	for (uint32_t t = 0; t < THREADS; t++) {
		uint32_t x = t, y = 1;
		float f = (float)t, g = f, h = 0.0f;

		for (uint32_t i = 0; i < iters; i++) {
			x = x * 1664525u + t;
			y = y * x + 1013904223u;
			f = f * 0.5f + g;
			h = h * 0.5f + f;
		}
		out[4 * t + 0] = x;
		out[4 * t + 1] = y;
		out[4 * t + 2] = f2u(f);
		out[4 * t + 3] = f2u(h);
	}
}

static void bench_alu(struct vgpu_sm *sm)
{
	static uint32_t expect[4 * THREADS];
	volatile uint32_t iters_v = ALU_ITERS; /* opaque to the optimiser */
	struct gmem gm;
	struct vgpu_sm_stats st;
	struct kernel kn;
	struct vgpu_launch l;
	uint64_t t_core, t_c = UINT64_MAX;
	char src[sizeof(alu_src_fmt) + 16];

	snprintf(src, sizeof(src), alu_src_fmt, ALU_ITERS);
	kernel_build(&kn, src);
	gmem_init(&gm, sizeof(expect));
	l = launch_of(&kn, THREADS, &gm);

	t_core = time_launch(sm, &l, &gm, &st);
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now_ns(), t;

		alu_c(iters_v, expect);
		t = now_ns() - t0;
		if (t < t_c)
			t_c = t;
	}
	if (memcmp(gm.data, expect, sizeof(expect))) {
		for (uint32_t i = 0; i < 4 * THREADS; i++) {
			uint32_t got;

			memcpy(&got, gm.data + 4 * i, 4);
			if (got != expect[i])
				die("ALU kernel: thread %u word %u: core 0x%08x, "
				    "C 0x%08x", i / 4, i % 4, got, expect[i]);
		}
	}

	printf("(a) ALU-bound: %u threads x %u iterations of IMAD/FFMA "
	       "(%d insns/iteration)\n", THREADS, ALU_ITERS, ALU_LOOP_INSNS);
	printf("    core     %10.3f ms   %8.1f M warp-insn/s   %8.1f M "
	       "thread-insn/s\n", ms(t_core),
	       (double)st.warp_insns / (double)t_core * 1e3,
	       (double)st.thread_insns / (double)t_core * 1e3);
	printf("    plain C  %10.3f ms   (same arithmetic, -O2)\n", ms(t_c));
	printf("    ratio core/C = %.2fx   (target: <= 1.5x)   "
	       "results identical\n", (double)t_core / (double)t_c);
	bench_row("ALU-bound kernel, 1024 threads", bench_fmt("%.3f ms", ms(t_core)),
		  bench_fmt("plain C %.3f ms", ms(t_c)),
		  bench_fmt("%.2fx", (double)t_core / (double)t_c), "<= 1.5x",
		  (double)t_core <= 1.5 * (double)t_c);

	vgpu_hostmem_fini(&gm.hm);
	kernel_fini(&kn);
}

/* ---- (b) BAR.SYNC-heavy ---- */

/* The ALU work of the barrier loop, a round at a time, no barrier. */
static __attribute__((noinline)) void bar_alu_c(uint32_t rounds, uint32_t *acc)
{
	memset(acc, 0, THREADS * sizeof(*acc));
	for (uint32_t r = 0; r < rounds; r++) {
		for (uint32_t t = 0; t < THREADS; t++)
			acc[t] += 3;
		__asm__ volatile("" ::: "memory"); /* rounds stay rounds */
	}
}

/* What a barrier must count: 32 warp arrivals, then reset. */
static __attribute__((noinline)) uint32_t bar_bookkeeping_c(uint32_t rounds)
{
	uint32_t count = 0, completed = 0;

	for (uint32_t r = 0; r < rounds; r++) {
		for (uint32_t w = 0; w < THREADS / 32; w++) {
			count += 32;
			__asm__ volatile("" : "+r"(count));
			if (count == THREADS) {
				count = 0;
				completed++;
			}
		}
	}
	return completed;
}

static uint64_t bar_core(struct vgpu_sm *sm, const char *op, struct gmem *gm,
			 struct vgpu_sm_stats *st)
{
	char src[sizeof(bar_src_fmt) + 32];
	struct vgpu_launch l;
	struct kernel kn;
	uint64_t t;

	snprintf(src, sizeof(src), bar_src_fmt, BAR_ROUNDS, op);
	kernel_build(&kn, src);
	l = launch_of(&kn, THREADS, gm);
	t = time_launch(sm, &l, gm, st);
	for (uint32_t i = 0; i < THREADS; i++) {
		uint32_t got;

		memcpy(&got, gm->data + 4 * i, 4);
		if (got != 3 * BAR_ROUNDS)
			die("barrier kernel (%s): thread %u stored %u, want %u",
			    op, i, got, 3 * BAR_ROUNDS);
	}
	kernel_fini(&kn);
	return t;
}

static void bench_bar(struct vgpu_sm *sm)
{
	static uint32_t acc[THREADS];
	volatile uint32_t rounds_v = BAR_ROUNDS;
	struct gmem gm;
	struct vgpu_sm_stats st;
	uint64_t t_bar, t_nop, t_alu = UINT64_MAX, t_book = UINT64_MAX;
	double per_bar, per_nop, per_alu, per_book;

	gmem_init(&gm, 4 * THREADS);
	t_bar = bar_core(sm, "BAR.SYNC 0x0", &gm, &st);
	t_nop = bar_core(sm, "NOP", &gm, &st);
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now_ns(), t;

		bar_alu_c(rounds_v, acc);
		t = now_ns() - t0;
		if (t < t_alu)
			t_alu = t;
		for (uint32_t i = 0; i < THREADS; i++)
			if (acc[i] != 3 * BAR_ROUNDS)
				die("plain C ALU loop miscounted");

		t0 = now_ns();
		if (bar_bookkeeping_c(rounds_v) != BAR_ROUNDS)
			die("plain C bookkeeping miscounted");
		t = now_ns() - t0;
		if (t < t_book)
			t_book = t;
	}
	per_bar = (double)t_bar / BAR_ROUNDS;
	per_nop = (double)t_nop / BAR_ROUNDS;
	per_alu = (double)t_alu / BAR_ROUNDS;
	per_book = (double)t_book / BAR_ROUNDS;

	printf("(b) BAR.SYNC-heavy: %u threads, %u rounds of 4 ALU insns + "
	       "BAR.SYNC 0x0\n", THREADS, BAR_ROUNDS);
	printf("    core, BAR.SYNC      %9.1f ns/round\n", per_bar);
	printf("    core, NOP instead   %9.1f ns/round   (barrier cost %.1f "
	       "ns/round)\n", per_nop, per_bar - per_nop);
	printf("    plain C ALU work    %9.1f ns/round   ratio core/C = %.1fx\n",
	       per_alu, per_bar / per_alu);
	printf("    plain C bookkeeping %9.1f ns/round   (32 warp arrivals + "
	       "reset)\n", per_book);
	printf("    target: whole 1024-thread round (4 ALU warp-instructions "
	       "per warp + BAR.SYNC) < 400 ns: %.0f ns: %s\n",
	       per_bar, per_bar < 400.0 ? "met" : "not met");
	bench_row("BAR.SYNC round, 1024 threads", bench_fmt("%.0f ns", per_bar),
		  bench_fmt("plain C work %.0f ns", per_alu),
		  bench_fmt("%.1fx", per_bar / per_alu), "< 400 ns", per_bar < 400.0);
	bench_row("  of which the barrier", bench_fmt("%.0f ns", per_bar - per_nop),
		  bench_fmt("plain C counting %.0f ns", per_book),
		  bench_fmt("%.1fx", (per_bar - per_nop) / per_book), "", -1);

	vgpu_hostmem_fini(&gm.hm);
}

/* ---- (c) memory ---- */
static void bench_mem(void)
{
	char src[sizeof(alu_src_fmt) + 16];
	struct gmem gm = { 0 };
	struct kernel kn;
	uint32_t nregs;

	snprintf(src, sizeof(src), alu_src_fmt, ALU_ITERS);
	kernel_build(&kn, src);
	nregs = vgpu_prog_nregs(kn.prog);
	printf("(c) core state per resident CTA, ALU kernel (%u registers):\n",
	       nregs);
	for (uint32_t threads = THREADS; threads >= 32; threads /= 32) {
		struct vgpu_launch l = launch_of(&kn, threads, &gm);
		size_t core = vgpu_sm_cta_state_bytes(&l);
		size_t plain = (size_t)threads * nregs * 4;

		printf("    %4u threads: core %8zu bytes   plain registers "
		       "%8zu bytes   ratio %.2fx\n", threads, core, plain,
		       plain ? (double)core / (double)plain : 0.0);
		bench_row(bench_fmt("CTA state, %u threads", threads),
			  bench_fmt("%zu B", core), bench_fmt("registers %zu B", plain),
			  bench_fmt("%.2fx", (double)core / (double)plain),
			  threads == 32 ? "<= 3x" : "", threads == 32 ?
			  (double)core <= 3.0 * (double)plain : -1);
	}
	kernel_fini(&kn);
}

/* ---- (d) mbarrier arrive + parity wait round trip ---- */

static const char mbar_src_fmt[] =
	".kernel mbar\n"
	".param ptr out\n"
	".shared bar, 8\n"
	"    S2R R0, SR_TID ;\n"
	"    ISETP.EQ.U32 P0, R0, 0x0 ;\n"
	"    MOV R4, 0x0 ;\n"
	"    MOV R5, 0x80 ;\n"
	"@P0 MBAR.INIT [R4], R5 ;\n"
	"    BAR.SYNC 0x0 ;\n"
	"    MOV R10, 0x0 ;\n"
	"    MOV R11, 0x0 ;\n"
	"loop:\n"
	"    MBAR.ARRIVE _, [R4] ;\n"
	"wait:\n"
	"    MBAR.TRY_WAIT.PARITY P1, [R4], R11 ;\n"
	"@!P1 BRA wait ;\n"
	"    LOP.XOR R11, R11, 0x1 ;\n"
	"    IADD R10, R10, 0x1 ;\n"
	"    ISETP.LT.U32 P2, R10, 0x%x ;\n"
	"@P2 BRA loop ;\n"
	"    EXIT ;\n";

#define MBAR_PHASES 20000

/* The bookkeeping of a phase in C: 128 arrivals counted down, a flip. */
static __attribute__((noinline)) uint32_t mbar_c(uint32_t phases)
{
	_Atomic uint32_t pending = 128, phase = 0;

	for (uint32_t p = 0; p < phases; p++)
		for (uint32_t t = 0; t < 128; t++)
			if (atomic_fetch_sub(&pending, 1) == 1) {
				atomic_store(&pending, 128);
				atomic_fetch_add(&phase, 1);
			}
	return atomic_load(&phase);
}

static void bench_mbar(struct vgpu_sm *sm)
{
	char src[sizeof(mbar_src_fmt) + 16];
	struct vgpu_sm_stats st;
	struct kernel kn;
	struct gmem gm;
	struct vgpu_launch l;
	uint64_t t_core, t_c = UINT64_MAX;

	snprintf(src, sizeof(src), mbar_src_fmt, MBAR_PHASES);
	kernel_build(&kn, src);
	gmem_init(&gm, 256);
	l = launch_of(&kn, 128, &gm);
	l.flags = VGPU_LAUNCH_SANITIZE;
	t_core = time_launch(sm, &l, &gm, &st);
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = now_ns(), t;

		if (mbar_c(MBAR_PHASES) != MBAR_PHASES)
			die("mbar_c miscounted");
		t = now_ns() - t0;
		if (t < t_c)
			t_c = t;
	}
	printf("(d) mbarrier round trip, 128 threads: arrive + parity wait per phase\n");
	printf("    core        %9.1f ns/phase   (sanitizer on)\n",
	       (double)t_core / MBAR_PHASES);
	printf("    plain C     %9.1f ns/phase   (128 atomic decrements + flip)   ratio %.2fx"
	       "   (target <= 1.5x)\n",
	       (double)t_c / MBAR_PHASES, (double)t_core / (double)t_c);
	bench_row("mbarrier round trip, 128 threads",
		  bench_fmt("%.0f ns", (double)t_core / MBAR_PHASES),
		  bench_fmt("C model %.0f ns", (double)t_c / MBAR_PHASES),
		  bench_fmt("%.2fx", (double)t_core / (double)t_c), "<= 1.5x",
		  (double)t_core <= 1.5 * (double)t_c);
	kernel_fini(&kn);
	vgpu_hostmem_fini(&gm.hm);
}

/* ---- (g) scale: the cost of a launch as the grid and the CTAs grow ---- */

/* Each thread stores its global index: out[ctaid * ntid + tid] = that. */
static const char scale_src[] =
	".kernel scale\n"
	".param ptr out\n"
	"    S2R R0, SR_TID.X ;\n"
	"    S2R R1, SR_CTAID.X ;\n"
	"    S2R R2, SR_NTID.X ;\n"
	"    IMAD R3, R1, R2, R0 ;\n"
	"    LDP.64 R4, [out] ;\n"
	"    SHL R6, R3, 0x2 ;\n"
	"    IADD R4, R4, R6 ;\n"
	"    STG.32 [R4], R3 ;\n"
	"    EXIT ;\n";

static uint64_t scale_launch(struct vgpu_sm *sm, struct kernel *kn, struct gmem *gm,
			     uint32_t ctas, uint32_t threads)
{
	struct vgpu_launch l = launch_of(kn, threads, gm);
	struct vgpu_sm_stats st;
	uint64_t t;

	l.grid[0] = ctas;
	t = time_launch(sm, &l, gm, &st);
	for (uint32_t i = 0; i < ctas * threads; i++) {
		uint32_t got;

		memcpy(&got, gm->data + 4 * i, 4);
		if (got != i)
			die("scale kernel: thread %u stored %u", i, got);
	}
	return t;
}

static void bench_scale(struct vgpu_sm *sm)
{
	static const uint32_t grids[] = { 1, 16, 256, 4096 };
	static const uint32_t blocks[] = { 32, 64, 128, 256, 512, 1024 };
	struct kernel kn;
	struct gmem gm;
	uint64_t t1 = 0;

	kernel_build(&kn, scale_src);
	gmem_init(&gm, 4096 * 32 * 4);
	printf("(g) launch cost as the grid grows (32-thread CTAs, 9 insns a thread)\n");
	for (unsigned i = 0; i < 4; i++) {
		uint64_t t = scale_launch(sm, &kn, &gm, grids[i], 32);

		if (!i)
			t1 = t;
		printf("    %4u CTAs   %10.1f us   %7.1f ns per CTA   %6.2fx the 1-CTA launch\n",
		       grids[i], (double)t / 1e3, (double)t / grids[i],
		       (double)t / (double)t1);
		bench_row(bench_fmt("launch, %u x 32-thread CTAs", grids[i]),
			  bench_fmt("%.1f us", (double)t / 1e3),
			  bench_fmt("1 CTA %.1f us", (double)t1 / 1e3),
			  bench_fmt("%.1fx (%.0f ns/CTA)", (double)t / (double)t1,
				    (double)t / grids[i]), "", -1);
	}
	printf("    launch cost as the CTA grows (1 CTA)\n");
	for (unsigned i = 0; i < 6; i++) {
		uint64_t t = scale_launch(sm, &kn, &gm, 1, blocks[i]);

		if (!i)
			t1 = t;
		printf("    %4u threads %9.1f us   %7.1f ns per warp   %6.2fx the 32-thread launch\n",
		       blocks[i], (double)t / 1e3, (double)t * 32 / blocks[i],
		       (double)t / (double)t1);
		bench_row(bench_fmt("launch, 1 CTA of %u threads", blocks[i]),
			  bench_fmt("%.1f us", (double)t / 1e3),
			  bench_fmt("32 threads %.1f us", (double)t1 / 1e3),
			  bench_fmt("%.1fx (%.0f ns/warp)", (double)t / (double)t1,
				    (double)t * 32 / blocks[i]), "", -1);
	}
	kernel_fini(&kn);
	vgpu_hostmem_fini(&gm.hm);
}

/* ---- (h) preemption: save and restore of a 1024-thread CTA ---- */

static const char preempt_src[] =
	".kernel p\n.param ptr g\n.shared s, 49152\n"
	"  S2R R0, SR_TID ;\n  SHL R1, R0, 0x2 ;\n  MOV R5, 0x0 ;\n"
	"l:\n  STS.32 [R1], R5 ;\n  BAR.SYNC 0x0 ;\n  IADD R5, R5, 0x1 ;\n"
	"  ISETP.LT.U32 P0, R5, 0x100 ;\n  @P0 BRA l ;\n  EXIT ;\n";

/*
 * Request -> state saved: another thread sets ctl.preempt @delay_ns after
 * @t0 (CLOCK_MONOTONIC) while the SM runs the CTA.
 */
struct preempt_req {
	struct vgpu_launch_ctl *ctl;
	uint64_t t0, delay_ns, at;
};

static void *preempt_requester(void *arg)
{
	struct preempt_req *r = arg;

	while (now_ns() < r->t0 + r->delay_ns)
		;
	r->at = now_ns();
	atomic_store(&r->ctl->preempt, 1);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median ns from the request to the end of the save; 0: none landed. */
static uint64_t preempt_latency(struct vgpu_sm *sm, struct vgpu_launch *l,
				struct vgpu_launch_ctl *ctl, uint8_t *buf)
{
	uint64_t lat[REPS * 4];
	int n = 0;

	for (int r = 0; r < REPS * 4; r++) {
		struct preempt_req req = { .ctl = ctl, .delay_ns = 50000 + 7919 * r };
		struct vgpu_exception_record exc;
		pthread_t th;
		int rc;

		ctl->preempt_every = 0;
		atomic_store(&ctl->preempt, 0);
		req.t0 = now_ns();
		if (pthread_create(&th, NULL, preempt_requester, &req))
			die("pthread_create");
		rc = vgpu_sm_run(sm, l, 0, 1, &exc);
		if (rc == VGPU_RUN_PREEMPTED) {
			if (!vgpu_sm_save(sm, buf, vgpu_ctx_max_bytes(l)))
				die("save failed");
			lat[n++] = now_ns() - req.at;
		}
		pthread_join(th, NULL);
	}
	if (!n)
		return 0;
	qsort(lat, n, sizeof(lat[0]), cmp_u64);
	return lat[n / 2];
}

static void bench_preempt(struct vgpu_sm *sm)
{
	struct vgpu_sm *sm2 = vgpu_sm_new(NULL);
	struct vgpu_exception_record exc;
	uint64_t best_save = UINT64_MAX, best_load = UINT64_MAX, best_copy = UINT64_MAX;
	struct vgpu_launch_ctl ctl = { 0 };
	struct vgpu_launch l;
	struct kernel kn;
	struct gmem gm;
	uint8_t *buf, *copy;
	size_t bytes = 0;
	uint64_t t0, per_insn, lat;
	struct vgpu_sm_stats st;

	kernel_build(&kn, preempt_src);
	gmem_init(&gm, 4096);
	l = launch_of(&kn, 1024, &gm);
	per_insn = time_launch(sm, &l, &gm, &st);
	per_insn = st.warp_insns ? per_insn * 1000 / st.warp_insns : 0; /* ps */
	l.ctl = &ctl;
	buf = malloc(vgpu_ctx_max_bytes(&l));
	copy = malloc(vgpu_ctx_max_bytes(&l));
	if (!sm2 || !buf || !copy)
		die("out of memory");
	for (int r = 0; r < REPS; r++) {
		ctl.preempt_every = 2000;	/* mid-kernel, warps at BAR.SYNC */
		atomic_store(&ctl.preempt, 0);
		if (vgpu_sm_run(sm, &l, 0, 1, &exc) != VGPU_RUN_PREEMPTED)
			die("not preempted");
		t0 = now_ns();
		bytes = vgpu_sm_save(sm, buf, vgpu_ctx_max_bytes(&l));
		t0 = now_ns() - t0;
		if (!bytes)
			die("save failed");
		if (t0 < best_save)
			best_save = t0;
		t0 = now_ns();
		memcpy(copy, buf, bytes);
		t0 = now_ns() - t0;
		if (t0 < best_copy)
			best_copy = t0;
		/* restore, stopping at once: the load and its checks alone */
		atomic_store(&ctl.preempt, 1);
		t0 = now_ns();
		if (vgpu_sm_resume(sm2, &l, buf, bytes, &exc) != VGPU_RUN_PREEMPTED)
			die("resume: %s", exc.msg);
		t0 = now_ns() - t0;
		if (t0 < best_load)
			best_load = t0;
	}
	lat = preempt_latency(sm, &l, &ctl, buf);
	printf("(h) preemption of one 1024-thread CTA with 48 KiB shared memory (warps at BAR.SYNC)\n");
	printf("    saved state %zu bytes; save %.1f us, restore %.1f us, memcpy of it %.1f us\n",
	       bytes, (double)best_save / 1e3, (double)best_load / 1e3,
	       (double)best_copy / 1e3);
	printf("    request -> stop: at most %u warp-instructions, %.1f us at %.2f ns each\n",
	       VGPU_CTL_CHECK_EVERY, VGPU_CTL_CHECK_EVERY * (double)per_insn / 1e6,
	       (double)per_insn / 1e3);
	bench_row("preemption: save of a 1024-thread CTA, 48 KiB smem",
		  bench_fmt("%.1f us (%zu B)", (double)best_save / 1e3, bytes),
		  bench_fmt("memcpy %.1f us", (double)best_copy / 1e3),
		  bench_fmt("%.1fx", (double)best_save / (double)best_copy), "", -1);
	bench_row("preemption: restore of it (checked)",
		  bench_fmt("%.1f us", (double)best_load / 1e3),
		  bench_fmt("memcpy %.1f us", (double)best_copy / 1e3),
		  bench_fmt("%.1fx", (double)best_load / (double)best_copy), "", -1);
	printf("    request (another thread) -> state saved: median %.1f us\n",
	       (double)lat / 1e3);
	bench_row("preemption: request -> stop, worst case",
		  bench_fmt("%.1f us", VGPU_CTL_CHECK_EVERY * (double)per_insn / 1e6),
		  bench_fmt("%u warp-instructions", VGPU_CTL_CHECK_EVERY), "", "", -1);
	bench_row("preemption: request -> state saved, median",
		  bench_fmt("%.1f us", (double)lat / 1e3),
		  bench_fmt("save alone %.1f us", (double)best_save / 1e3),
		  bench_fmt("%.1fx", (double)lat / (double)best_save), "", -1);
	free(buf);
	free(copy);
	vgpu_sm_free(sm2);
	kernel_fini(&kn);
	vgpu_hostmem_fini(&gm.hm);
}

/* Section @s (a letter) runs when no section is named or it is named. */
static bool want(int argc, char **argv, const char *s)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], s))
			return true;
	return false;
}

/* bench_core [a|b|c|d|g|h ...]: every section, or the ones named (perf). */
int main(int argc, char **argv)
{
	struct vgpu_sm *sm = vgpu_sm_new(&(struct vgpu_sm_config){ 0 });

	if (!sm)
		die("vgpu_sm_new failed");
	printf("bench_core: best of %d runs each\n", REPS);
	if (want(argc, argv, "a"))
		bench_alu(sm);
	if (want(argc, argv, "b"))
		bench_bar(sm);
	if (want(argc, argv, "c"))
		bench_mem();
	if (want(argc, argv, "d"))
		bench_mbar(sm);
	if (want(argc, argv, "g"))
		bench_scale(sm);
	if (want(argc, argv, "h"))
		bench_preempt(sm);
	vgpu_sm_free(sm);
	return 0;
}
