// SPDX-License-Identifier: MIT
/*
 * The sim backend on several SM threads (VGPU_SIM_THREADS, libvgpu/sim/
 * sim_pool.c): a launch's clusters claimed in linear order by N SMs, the
 * first exception the launch's, the budget shared.  Every outcome asserted
 * here is exact whatever the threads' interleaving: results each CTA
 * writes, a global atomic count, a chain of CTAs where each spins on its
 * predecessor's flag (it must finish: forward progress), an exception in
 * one CTA of many that stops the others, the budget, a cooperative launch
 * (its grid co-resident on one SM), and the option's bounds.  Sim only.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"

#define SEC 1000000000ll
#define THREADS 4

/* ---- helpers ---- */

static struct vgpu_device *open_threads(const char *n)
{
	struct vgpu_device *dev = NULL;
	int ret;

	if (n)
		setenv("VGPU_SIM_THREADS", n, 1);
	else
		unsetenv("VGPU_SIM_THREADS");
	ret = vgpu_device_open("sim", &dev);
	unsetenv("VGPU_SIM_THREADS");
	return ret ? NULL : dev;
}

static const struct vgpu_kernel *kern(struct vgpu_device *dev, const char *src,
				      struct vgpu_program **prog)
{
	const struct vgpu_kernel *k = NULL;
	char log[2048] = "";

	if (vgpu_program_assemble(dev, src, strlen(src), "t.vgs", prog, log,
				  sizeof(log))) {
		fprintf(stderr, "  assemble:\n%s", log);
		return NULL;
	}
	if (vgpu_program_kernel(*prog, 0, &k))
		return NULL;
	return k;
}

/* Launch @k on @grid CTAs of @block threads, wait; vgpu_job_wait()'s result. */
static int run(const struct vgpu_kernel *k, const struct vgpu_args *args,
	       uint32_t grid, uint32_t block, uint32_t flags, uint64_t budget,
	       struct vgpu_exception_record *exc, struct vgpu_job_status *st)
{
	struct vgpu_launch_config cfg = {
		.grid = { grid }, .block = { block }, .flags = flags,
		.budget = budget, .seed = 7,
	};
	struct vgpu_job *job;
	int ret = vgpu_kernel_launch(k, &cfg, args, &job);

	if (ret)
		return ret;
	ret = vgpu_job_wait(job, 600 * SEC);
	if (exc && vgpu_job_exception(job, exc))
		memset(exc, 0, sizeof(*exc));
	if (st)
		vgpu_job_status(job, st);
	vgpu_job_free(job);
	return ret;
}

/*
 * out[gid] = 100 * gid after a loop, count += 1 per thread (ATOMG),
 * smid[ctaid] = SR_SMID.
 */
static const char grid_src[] =
	".kernel grid\n"
	".param ptr out\n"
	".param ptr smid\n"
	".param ptr count\n"
	"  S2R R0, SR_TID.X ;\n"
	"  S2R R1, SR_CTAID.X ;\n"
	"  S2R R7, SR_NTID.X ;\n"
	"  IMAD R0, R1, R7, R0 ;\n"
	"  MOV R10, 0x0 ;\n"
	"  MOV R11, 0x0 ;\n"
	"l:\n"
	"  IADD R11, R11, R0 ;\n"
	"  IADD R10, R10, 0x1 ;\n"
	"  ISETP.LT.U32 P0, R10, 0x64 ;\n"
	"  @P0 BRA l ;\n"
	"  LDP.64 R2, [out] ;\n"
	"  SHL R4, R0, 0x2 ;\n"
	"  IADD R2, R2, R4 ;\n"
	"  STG.32 [R2], R11 ;\n"
	"  LDP.64 R2, [count] ;\n"
	"  MOV R5, 0x1 ;\n"
	"  ATOMG.ADD.U32 RZ, [R2], R5 ;\n"
	"  S2R R6, SR_TID.X ;\n"
	"  ISETP.NE.U32 P1, R6, 0x0 ;\n"
	"  @P1 EXIT ;\n"
	"  S2R R8, SR_SMID ;\n"
	"  LDP.64 R2, [smid] ;\n"
	"  SHL R4, R1, 0x2 ;\n"
	"  IADD R2, R2, R4 ;\n"
	"  STG.32 [R2], R8 ;\n"
	"  EXIT ;\n";

/*
 * A decoupled look-back reduced to its chain: CTA i (i = ctaid ^ rev)
 * spins until flag[i] is set, then val[i + 1] = val[i] + i + 1 and sets
 * flag[i + 1].  The host sets flag[0]; val[i] ends as i (i + 1) / 2.
 * Flags are read and written with atomics, the value with LDG/STG.
 */
static const char chain_src[] =
	".kernel chain\n"
	".param ptr val\n"
	".param ptr flag\n"
	".param u32 rev\n"
	"  S2R R1, SR_CTAID.X ;\n"
	"  LDP.32 R10, [rev] ;\n"
	"  LOP.XOR R1, R1, R10 ;\n"
	"  LDP.64 R2, [val] ;\n"
	"  LDP.64 R4, [flag] ;\n"
	"  SHL R6, R1, 0x2 ;\n"
	"  IADD R2, R2, R6 ;\n"
	"  IADD R4, R4, R6 ;\n"
	"wait:\n"
	"  ATOMG.ADD.U32 R7, [R4], RZ ;\n"
	"  ISETP.EQ.U32 P0, R7, 0x0 ;\n"
	"  @P0 BRA wait ;\n"
	"  LDG.32 R8, [R2] ;\n"
	"  IADD R8, R8, R1 ;\n"
	"  IADD R8, R8, 0x1 ;\n"
	"  STG.32 [R2+0x4], R8 ;\n"
	"  MOV R9, 0x1 ;\n"
	"  ATOMG.EXCH.U32 RZ, [R4+0x4], R9 ;\n"
	"  EXIT ;\n";

/* The chain's device, kernel and buffers (val, flag: grid + 1 words each) */
struct chain {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *val, *flag;
	struct vgpu_args *args;
	uint32_t *v, *f;
};

/* 0, or -1 with what failed on stderr; @threads as open_threads() */
static int chain_open(struct chain *ch, const char *threads, uint32_t grid, uint32_t rev)
{
	*ch = (struct chain){ .dev = open_threads(threads) };
	if (!ch->dev || !(ch->k = kern(ch->dev, chain_src, &ch->prog)) ||
	    vgpu_bo_new(ch->dev, (grid + 1) * 4, 0, &ch->val) ||
	    vgpu_bo_new(ch->dev, (grid + 1) * 4, 0, &ch->flag) ||
	    vgpu_bo_map(ch->val, (void **)&ch->v) || vgpu_bo_map(ch->flag, (void **)&ch->f) ||
	    vgpu_args_new(ch->k, &ch->args) || vgpu_args_set_bo(ch->args, 0, ch->val, 0) ||
	    vgpu_args_set_bo(ch->args, 1, ch->flag, 0) || vgpu_args_set_u32(ch->args, 2, rev)) {
		fprintf(stderr, "  the chain's set-up failed\n");
		return -1;
	}
	ch->f[0] = 1;
	return 0;
}

static void chain_close(struct chain *ch)
{
	vgpu_args_free(ch->args);
	vgpu_bo_free(ch->val);
	vgpu_bo_free(ch->flag);
	vgpu_program_free(ch->prog);
	if (ch->dev)
		vgpu_device_close(ch->dev);
}

/*
 * CTA @which waits until every CTA before it has counted its 32 threads
 * in done (on several SMs some may still run when it starts), then stores
 * to @bad (unmapped: an MMU fault); CTAs after it loop forever.
 */
static const char fault_src[] =
	".kernel fault\n"
	".param ptr done\n"
	".param u64 bad\n"
	".param u32 which\n"
	"  S2R R1, SR_CTAID.X ;\n"
	"  LDP.32 R6, [which] ;\n"
	"  ISETP.EQ.U32 P0, R1, R6 ;\n"
	"  @P0 BRA boom ;\n"
	"  ISETP.LT.U32 P1, R1, R6 ;\n"
	"  @P1 BRA finish ;\n"
	"forever:\n"
	"  BRA forever ;\n"
	"boom:\n"
	"  LDP.64 R2, [done] ;\n"
	"  SHL R7, R6, 0x5 ;\n"
	"before:\n"
	"  ATOMG.ADD.U32 R8, [R2], RZ ;\n"
	"  ISETP.LT.U32 P2, R8, R7 ;\n"
	"  @P2 BRA before ;\n"
	"  LDP.64 R2, [bad] ;\n"
	"  MOV R5, 0x1 ;\n"
	"  STG.32 [R2], R5 ;\n"
	"  EXIT ;\n"
	"finish:\n"
	"  LDP.64 R2, [done] ;\n"
	"  MOV R5, 0x1 ;\n"
	"  ATOMG.ADD.U32 RZ, [R2], R5 ;\n"
	"  EXIT ;\n";

/* ---- the tests ---- */

/* Every CTA's block, the atomic count and the SM ids, on 1 and 4 threads. */
TEST(grid_results_exact)
{
	const uint32_t grid = 1024, block = 64, n = grid * block;
	const char *threads[] = { NULL, "4" };
	uint64_t insns = 0;

	for (int t = 0; t < 2; t++) {
		struct vgpu_device *dev = open_threads(threads[t]);
		struct vgpu_program *prog = NULL;
		const struct vgpu_kernel *k;
		struct vgpu_bo *out, *smid, *count;
		struct vgpu_args *args;
		struct vgpu_job_status st;
		uint32_t *o, *s, *c;
		uint64_t nsms = 0;
		unsigned int bad = 0, used = 0;

		ASSERT_NE(NULL, dev);
		ASSERT_EQ(0, vgpu_device_get_param(dev, VGPU_PARAM_SMS, &nsms));
		EXPECT_EQ(4u, nsms);
		k = kern(dev, grid_src, &prog);
		ASSERT_NE(NULL, k);
		ASSERT_EQ(0, vgpu_bo_new(dev, n * 4, 0, &out));
		ASSERT_EQ(0, vgpu_bo_new(dev, grid * 4, 0, &smid));
		ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &count));
		ASSERT_EQ(0, vgpu_bo_map(out, (void **)&o));
		ASSERT_EQ(0, vgpu_bo_map(smid, (void **)&s));
		ASSERT_EQ(0, vgpu_bo_map(count, (void **)&c));
		memset(s, 0xff, grid * 4);
		ASSERT_EQ(0, vgpu_args_new(k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, out, 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, smid, 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 2, count, 0));
		ASSERT_EQ(0, run(k, args, grid, block, 0, 0, NULL, &st));
		for (uint32_t i = 0; i < n; i++)
			if (o[i] != 100 * i && !bad++)
				fprintf(stderr, "  out[%u] = %u\n", i, o[i]);
		EXPECT_EQ(0u, bad);
		EXPECT_EQ(n, c[0]);
		for (uint32_t i = 0; i < grid; i++) {
			if (s[i] >= nsms && !bad++)
				fprintf(stderr, "  CTA %u on SM %u\n", i, s[i]);
			used |= 1u << (s[i] & 31);
		}
		EXPECT_EQ(0u, bad);
		if (!t)
			EXPECT_EQ(1u, used); /* SM 0 alone */
		/* which SMs ran CTAs depends on the host: shown, not asserted */
		printf("# VGPU_SIM_THREADS=%s: SMs that ran CTAs: 0x%x\n",
		       threads[t] ? threads[t] : "(unset)", used);
		/* every warp-instruction counted once, whichever SM ran it */
		if (!t)
			insns = st.warp_insns;
		EXPECT_EQ(insns, st.warp_insns);
		EXPECT_LT((uint64_t)grid * 2 * 400, st.warp_insns);
		vgpu_args_free(args);
		vgpu_bo_free(out);
		vgpu_bo_free(smid);
		vgpu_bo_free(count);
		vgpu_program_free(prog);
		vgpu_device_close(dev);
	}
}

/* The chain finishes on 4 threads (CTAs start in order) and is exact. */
TEST(lookback_chain_progresses)
{
	const uint32_t grid = 512;
	struct chain ch;
	unsigned int bad = 0;

	ASSERT_EQ(0, chain_open(&ch, "4", grid, 0));
	for (int rep = 0; rep < 3; rep++) {
		memset(ch.v, 0, (grid + 1) * 4);
		memset(ch.f, 0, (grid + 1) * 4);
		ch.f[0] = 1;
		/* also under the random schedule: each SM seeded alike */
		ASSERT_EQ(0, run(ch.k, ch.args, grid, 1, rep ? VGPU_LAUNCH_RANDOM_SCHED : 0,
				 0, NULL, NULL));
		for (uint32_t i = 0; i <= grid; i++)
			if (ch.v[i] != i * (i + 1) / 2 && !bad++)
				fprintf(stderr, "  val[%u] = %u\n", i, ch.v[i]);
		EXPECT_EQ(0u, bad);
		EXPECT_EQ(1u, ch.f[grid]);
	}
	chain_close(&ch);
}

/*
 * A grid too small to share (fewer warp-instructions than the pool's
 * SIM_ALONE_BUDGET, 4096) runs on the calling thread's SM alone: no
 * thread is woken for it.
 */
TEST(small_grid_stays_on_the_calling_thread)
{
	const uint32_t grid = 8, block = 32;
	struct vgpu_device *dev = open_threads("4");
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_bo *out, *smid, *count;
	struct vgpu_args *args;
	struct vgpu_job_status st;
	uint32_t *s, *c;

	ASSERT_NE(NULL, dev);
	k = kern(dev, grid_src, &prog);
	ASSERT_NE(NULL, k);
	ASSERT_EQ(0, vgpu_bo_new(dev, grid * block * 4, 0, &out));
	ASSERT_EQ(0, vgpu_bo_new(dev, grid * 4, 0, &smid));
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &count));
	ASSERT_EQ(0, vgpu_bo_map(smid, (void **)&s));
	ASSERT_EQ(0, vgpu_bo_map(count, (void **)&c));
	memset(s, 0xff, grid * 4);
	ASSERT_EQ(0, vgpu_args_new(k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, out, 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, smid, 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 2, count, 0));
	for (int rep = 0; rep < 3; rep++) {
		memset(s, 0xff, grid * 4);
		ASSERT_EQ(0, run(k, args, grid, block, 0, 0, NULL, &st));
		EXPECT_GT(4096u, st.warp_insns); /* the premise */
		for (uint32_t i = 0; i < grid; i++)
			EXPECT_EQ(0u, s[i]);
	}
	EXPECT_EQ(3 * grid * block, c[0]);
	vgpu_args_free(args);
	vgpu_bo_free(out);
	vgpu_bo_free(smid);
	vgpu_bo_free(count);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
}

/*
 * The threads are woken inside a long CTA, not only between claims: CTA
 * 0 spins until CTA 1 sets its flag (the chain reversed, not
 * cooperative), which only another SM can run while CTA 0 spins.  On one
 * thread the spin ends with the budget.
 */
TEST(long_cta_wakes_the_others)
{
	const uint32_t grid = 2;
	const char *threads[] = { "4", NULL };

	for (int t = 0; t < 2; t++) {
		struct vgpu_exception_record exc;
		struct chain ch;

		ASSERT_EQ(0, chain_open(&ch, threads[t], grid, grid - 1));
		if (threads[t]) {
			ASSERT_EQ(0, run(ch.k, ch.args, grid, 1, 0, 1ull << 26, NULL, NULL));
			for (uint32_t i = 0; i <= grid; i++)
				EXPECT_EQ(i * (i + 1) / 2, ch.v[i]);
		} else {
			EXPECT_EQ(-EIO, run(ch.k, ch.args, grid, 1, 0, 100000, &exc, NULL));
			EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, exc.code);
			EXPECT_EQ(0u, ch.v[2]);
		}
		chain_close(&ch);
	}
}

/*
 * A cooperative launch keeps its grid co-resident on one SM: CTA 0 waits
 * for the last CTA (the chain reversed), which only co-residence allows.
 */
TEST(cooperative_grid_coresident)
{
	const uint32_t grid = 16;
	struct chain ch;

	ASSERT_EQ(0, chain_open(&ch, "4", grid, grid - 1));
	ASSERT_EQ(0, run(ch.k, ch.args, grid, 1, VGPU_LAUNCH_COOPERATIVE, 0, NULL, NULL));
	for (uint32_t i = 0; i <= grid; i++)
		EXPECT_EQ(i * (i + 1) / 2, ch.v[i]);
	chain_close(&ch);
}

/*
 * CTA 37 of 256 faults: its record is the launch's (not the other SMs'
 * aborts), the CTAs before it completed, those after it (which never end)
 * stopped; the same on one thread.
 */
TEST(exception_stops_launch)
{
	const uint32_t grid = 256, which = 37;
	const char *threads[] = { NULL, "4" };
	const uint64_t bad_va = 0x1230; /* below the first VA: not mapped */

	for (int t = 0; t < 2; t++) {
		struct vgpu_device *dev = open_threads(threads[t]);
		struct vgpu_program *prog = NULL;
		const struct vgpu_kernel *k;
		struct vgpu_exception_record exc;
		struct vgpu_bo *done;
		struct vgpu_args *args;
		uint32_t *d;

		ASSERT_NE(NULL, dev);
		k = kern(dev, fault_src, &prog);
		ASSERT_NE(NULL, k);
		ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &done));
		ASSERT_EQ(0, vgpu_bo_map(done, (void **)&d));
		ASSERT_EQ(0, vgpu_args_new(k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, done, 0));
		ASSERT_EQ(0, vgpu_args_set_u64(args, 1, bad_va));
		ASSERT_EQ(0, vgpu_args_set_u32(args, 2, which));
		EXPECT_EQ(-EFAULT, run(k, args, grid, 32, 0, 0, &exc, NULL));
		EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, exc.code);
		EXPECT_EQ(which, exc.cta[0]);
		EXPECT_EQ(0u, exc.cta[1]);
		EXPECT_EQ(0u, exc.warp);
		EXPECT_EQ(0xffffffffu, exc.lane_mask);
		EXPECT_EQ(bad_va, exc.addr);
		EXPECT_EQ(which * 32, d[0]); /* a count per thread */
		vgpu_args_free(args);
		vgpu_bo_free(done);
		vgpu_program_free(prog);
		vgpu_device_close(dev);
	}
}

/* The budget is the launch's, all SMs together: BUDGET, not an abort. */
TEST(budget_shared)
{
	const uint64_t budget = 300000;
	struct vgpu_device *dev = open_threads("4");
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_exception_record exc;
	struct vgpu_job_status st;
	struct vgpu_bo *done;
	struct vgpu_args *args;

	ASSERT_NE(NULL, dev);
	k = kern(dev, fault_src, &prog);
	ASSERT_NE(NULL, k);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &done));
	ASSERT_EQ(0, vgpu_args_new(k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, done, 0));
	/* CTA 0 stores to done (no fault) and exits; the others loop */
	ASSERT_EQ(0, vgpu_args_set_u64(args, 1, vgpu_bo_gpu_address(done)));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, 0));
	EXPECT_EQ(-EIO, run(k, args, 64, 32, 0, budget, &exc, &st));
	EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, exc.code);
	EXPECT_EQ((uint32_t)budget, exc.info[0]);
	EXPECT_EQ(0u, exc.info[1]);
	EXPECT_GE(st.warp_insns, budget);
	vgpu_args_free(args);
	vgpu_bo_free(done);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
}

/*
 * A timeline and a text trace of a launch on 4 SMs: every CTA's begin and
 * end once in each (the sink and the trace are shared by the SMs).
 */
TEST(timeline_and_trace)
{
	const uint32_t grid = 64, block = 32;
	struct vgpu_device *dev = open_threads("4");
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_bo *out, *smid, *count;
	struct vgpu_args *args;
	struct vgpu_launch_config cfg = {
		.grid = { grid }, .block = { block }, .flags = VGPU_LAUNCH_TIMELINE,
	};
	const struct vgpu_trace_event *ev;
	struct vgpu_job *job;
	uint32_t nev = 0, begins[64] = { 0 }, ends[64] = { 0 }, lines = 0;
	uint64_t dropped = 1;
	char *text = NULL, *p;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ASSERT_NE(NULL, dev);
	ASSERT_NE(NULL, f);
	k = kern(dev, grid_src, &prog);
	ASSERT_NE(NULL, k);
	ASSERT_EQ(0, vgpu_bo_new(dev, grid * block * 4, 0, &out));
	ASSERT_EQ(0, vgpu_bo_new(dev, grid * 4, 0, &smid));
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &count));
	ASSERT_EQ(0, vgpu_args_new(k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, out, 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, smid, 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 2, count, 0));
	ASSERT_EQ(0, vgpu_device_set_trace(dev, f));
	ASSERT_EQ(0, vgpu_kernel_launch(k, &cfg, args, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, 600 * SEC));
	ASSERT_EQ(0, vgpu_device_set_trace(dev, NULL));
	fclose(f);
	ASSERT_EQ(0, vgpu_job_timeline(job, &ev, &nev, &dropped));
	EXPECT_EQ(0u, dropped);
	for (uint32_t i = 0; i < nev; i++) {
		ASSERT_GT(grid, ev[i].cta[0]);
		begins[ev[i].cta[0]] += ev[i].type == VGPU_TR_CTA_BEGIN;
		ends[ev[i].cta[0]] += ev[i].type == VGPU_TR_CTA_END;
	}
	for (uint32_t i = 0; i < grid; i++) {
		EXPECT_EQ(1u, begins[i]);
		EXPECT_EQ(1u, ends[i]);
	}
	/* one whole line per event, as many as the timeline's records */
	for (p = text; p && (p = strchr(p, '\n')); p++)
		lines++;
	EXPECT_EQ(nev, lines);
	free(text);
	vgpu_job_free(job);
	vgpu_args_free(args);
	vgpu_bo_free(out);
	vgpu_bo_free(smid);
	vgpu_bo_free(count);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
}

/* The bounds: environment and option, and the SMs the device presents. */
TEST(threads_option_bounds)
{
	static const char *const bad[] = { "0", "257", "x", "4x", "-1", "" };
	struct vgpu_device *dev;
	uint64_t nsms = 0;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!bad[i][0])
			continue; /* empty: as unset */
		EXPECT_EQ(NULL, open_threads(bad[i]));
	}
	dev = open_threads("");
	ASSERT_NE(NULL, dev);
	vgpu_device_close(dev);
	dev = open_threads("256");
	ASSERT_NE(NULL, dev);
	ASSERT_EQ(0, vgpu_device_get_param(dev, VGPU_PARAM_SMS, &nsms));
	EXPECT_EQ(256u, nsms);
	EXPECT_EQ(-EINVAL, vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, 0));
	EXPECT_EQ(-EINVAL, vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, 257));
	ASSERT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, 8));
	ASSERT_EQ(0, vgpu_device_get_param(dev, VGPU_PARAM_SMS, &nsms));
	EXPECT_EQ(8u, nsms);
	ASSERT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, 1));
	ASSERT_EQ(0, vgpu_device_get_param(dev, VGPU_PARAM_SMS, &nsms));
	EXPECT_EQ(4u, nsms);
	vgpu_device_close(dev);
}

/* 8 threads, the option set after a launch made the pool: SM ids below 8. */
TEST(threads_option_rebuilds_pool)
{
	const uint32_t grid = 256, block = 32;
	struct vgpu_device *dev = open_threads("2");
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_bo *out, *smid, *count;
	struct vgpu_args *args;
	uint32_t *s, *c;

	ASSERT_NE(NULL, dev);
	k = kern(dev, grid_src, &prog);
	ASSERT_NE(NULL, k);
	ASSERT_EQ(0, vgpu_bo_new(dev, grid * block * 4, 0, &out));
	ASSERT_EQ(0, vgpu_bo_new(dev, grid * 4, 0, &smid));
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &count));
	ASSERT_EQ(0, vgpu_bo_map(smid, (void **)&s));
	ASSERT_EQ(0, vgpu_bo_map(count, (void **)&c));
	ASSERT_EQ(0, vgpu_args_new(k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, out, 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, smid, 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 2, count, 0));
	ASSERT_EQ(0, run(k, args, grid, block, 0, 0, NULL, NULL));
	for (uint32_t i = 0; i < grid; i++)
		ASSERT_GT(2u, s[i]);
	ASSERT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_THREADS, 8));
	ASSERT_EQ(0, run(k, args, grid, block, 0, 0, NULL, NULL));
	for (uint32_t i = 0; i < grid; i++)
		ASSERT_GT(8u, s[i]);
	EXPECT_EQ(2 * grid * block, c[0]);
	vgpu_args_free(args);
	vgpu_bo_free(out);
	vgpu_bo_free(smid);
	vgpu_bo_free(count);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
}

TEST_HARNESS_MAIN
