// SPDX-License-Identifier: MIT
/*
 * The sim backend's two launch paths (libvgpu/launch.c): a kernel whose
 * parameters need no page of its own goes with its parameter bytes in the
 * SUBMIT (launch_inline()); VGPU_SIM_PARAM_PAGES=1 sends every launch
 * through a parameter page, as the drm backend does.  Each case here runs
 * on one device of each and asserts the outcome itself (results, status,
 * errno, exception record) and that the two agree field for field.  Also
 * the per-thread job record kept for the next launch: made and freed on
 * other threads (ASan's leak check sees a record a thread's exit loses).
 * Sim only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"
#include "vgpu_priv.h" /* dev->nparam_bos: which path a launch took */

#define SEC 1000000000ll
#define WORDS 1024

/* out[2i] = i + a, out[2i + 1] = low word of b; with @fault set, a store to @bad */
static const char mix_src[] =
	".kernel mix\n"
	".param ptr out\n"
	".param u32 a\n"
	".param u64 b\n"
	".param u64 bad\n"
	".param u32 fault\n"
	"  S2R R0, SR_TID.X ;\n"
	"  S2R R1, SR_CTAID.X ;\n"
	"  S2R R7, SR_NTID.X ;\n"
	"  IMAD R0, R1, R7, R0 ;\n"
	"  LDP.32 R6, [fault] ;\n"
	"  ISETP.NE.U32 P0, R6, 0x0 ;\n"
	"  @P0 BRA boom ;\n"
	"  LDP.64 R2, [out] ;\n"
	"  LDP.32 R8, [a] ;\n"
	"  SHL R4, R0, 0x3 ;\n"
	"  IADD R2, R2, R4 ;\n"
	"  IADD R5, R0, R8 ;\n"
	"  STG.32 [R2], R5 ;\n"
	"  LDP.64 R10, [b] ;\n"
	"  STG.32 [R2+0x4], R10 ;\n"
	"  EXIT ;\n"
	"boom:\n"
	"  LDP.64 R2, [bad] ;\n"
	"  STG.32 [R2], R0 ;\n"
	"  EXIT ;\n";
#define MIX_INSNS 16 /* a warp's instructions on the path without the fault */

/* A kernel without parameters. */
static const char empty_src[] = ".kernel empty\n  EXIT ;\n";

/* One device and what the cases launch on it. */
struct side {
	struct vgpu_device *dev;
	struct vgpu_program *prog, *eprog;
	const struct vgpu_kernel *k, *empty;
	struct vgpu_bo *out, *extra;
	uint32_t *o;
	struct vgpu_args *args;
	struct vgpu_queue *queue;
};

/* What a launch gave: enough to compare the two paths. */
struct outcome {
	int launch, wait, exc_ret;
	struct vgpu_job_status st;
	struct vgpu_exception_record exc;
	uint32_t words[WORDS];
};

static const struct vgpu_kernel *kern(struct vgpu_device *dev, const char *src,
				      struct vgpu_program **prog)
{
	const struct vgpu_kernel *k = NULL;
	char log[2048] = "";

	if (vgpu_program_assemble(dev, src, strlen(src), "t.vgs", prog, log, sizeof(log))) {
		fprintf(stderr, "  assemble:\n%s", log);
		return NULL;
	}
	return vgpu_program_kernel(*prog, 0, &k) ? NULL : k;
}

/* 0, or -1 with what failed on stderr; @pages: VGPU_SIM_PARAM_PAGES=1 */
static int side_open(struct side *s, bool pages)
{
	int ret;

	*s = (struct side){ 0 };
	if (pages)
		setenv("VGPU_SIM_PARAM_PAGES", "1", 1);
	else
		unsetenv("VGPU_SIM_PARAM_PAGES");
	ret = vgpu_device_open("sim", &s->dev);
	unsetenv("VGPU_SIM_PARAM_PAGES");
	/* every buffer made before the first launch: the same addresses on both */
	if (ret || !(s->k = kern(s->dev, mix_src, &s->prog)) ||
	    !(s->empty = kern(s->dev, empty_src, &s->eprog)) ||
	    vgpu_bo_new(s->dev, WORDS * 4, 0, &s->out) ||
	    vgpu_bo_new(s->dev, 4096, 0, &s->extra) ||
	    vgpu_bo_map(s->out, (void **)&s->o) || vgpu_args_new(s->k, &s->args) ||
	    vgpu_args_set_bo(s->args, 0, s->out, 0) ||
	    vgpu_queue_new(s->dev, VGPU_QUEUE_PRIORITY_NORMAL, &s->queue)) {
		fprintf(stderr, "  set-up failed\n");
		return -1;
	}
	return 0;
}

static void side_close(struct side *s)
{
	vgpu_queue_free(s->queue);
	vgpu_args_free(s->args);
	vgpu_bo_free(s->out);
	vgpu_bo_free(s->extra);
	vgpu_program_free(s->prog);
	vgpu_program_free(s->eprog);
	if (s->dev)
		vgpu_device_close(s->dev);
}

/* Launch mix on @s as @cfg says with parameters a, b, fault; wait. */
static void run(struct side *s, const struct vgpu_launch_config *cfg, uint32_t a,
		uint64_t b, uint32_t fault, bool handle, struct outcome *r)
{
	struct vgpu_job *job = NULL;

	memset(r, 0, sizeof(*r));
	memset(s->o, 0xee, WORDS * 4);
	vgpu_args_set_u32(s->args, 1, a);
	vgpu_args_set_u64(s->args, 2, b);
	vgpu_args_set_u64(s->args, 3, 0xdead0000ull); /* unmapped */
	vgpu_args_set_u32(s->args, 4, fault);
	r->launch = vgpu_kernel_launch(s->k, cfg, s->args, handle ? &job : NULL);
	if (!r->launch && job) {
		r->wait = vgpu_job_wait(job, 60 * SEC);
		vgpu_job_status(job, &r->st);
		r->exc_ret = vgpu_job_exception(job, &r->exc);
		vgpu_job_free(job);
	}
	memcpy(r->words, s->o, sizeof(r->words));
}

/* The two outcomes agree in every field. */
static void expect_same(struct __test_metadata *_metadata, const struct outcome *x,
			const struct outcome *y)
{
	EXPECT_EQ(x->launch, y->launch);
	EXPECT_EQ(x->wait, y->wait);
	EXPECT_EQ(x->exc_ret, y->exc_ret);
	EXPECT_EQ(x->st.state, y->st.state);
	EXPECT_EQ(x->st.error, y->st.error);
	EXPECT_EQ(x->st.hw_status, y->st.hw_status);
	EXPECT_EQ(x->st.queue, y->st.queue);
	EXPECT_EQ(x->st.hw_queue, y->st.hw_queue);
	EXPECT_EQ(x->st.warp_insns, y->st.warp_insns);
	EXPECT_EQ(x->st.elapsed_ns, y->st.elapsed_ns);
	EXPECT_EQ(0, memcmp(&x->exc, &y->exc, sizeof(x->exc)));
	EXPECT_EQ(0, memcmp(x->words, y->words, sizeof(x->words)));
}

/* out[2i] = i + a and out[2i + 1] = b for @n threads, untouched after */
static uint32_t bad_words(const uint32_t *w, uint32_t n, uint32_t a, uint32_t b)
{
	uint32_t bad = 0;

	for (uint32_t i = 0; i < WORDS / 2; i++) {
		bool set = i < n;

		bad += w[2 * i] != (set ? i + a : 0xeeeeeeeeu);
		bad += w[2 * i + 1] != (set ? b : 0xeeeeeeeeu);
	}
	return bad;
}

TEST(paths_agree_on_results_status_and_faults)
{
	struct side in, pg;
	struct outcome x, y;
	struct vgpu_launch_config cfg = { .grid = { 3 }, .block = { 64 }, .seed = 5 };

	ASSERT_EQ(0, side_open(&in, false));
	ASSERT_EQ(0, side_open(&pg, true));

	/* a plain launch: its results and status */
	run(&in, &cfg, 5, 0x123456789ull, 0, true, &x);
	run(&pg, &cfg, 5, 0x123456789ull, 0, true, &y);
	EXPECT_EQ(0, x.launch);
	EXPECT_EQ(0, x.wait);
	EXPECT_EQ(-ENODATA, x.exc_ret);
	EXPECT_EQ((uint32_t)VGPU_JOB_DONE, x.st.state);
	EXPECT_EQ((uint64_t)3 * 2 * MIX_INSNS, x.st.warp_insns);
	EXPECT_EQ(0u, bad_words(x.words, 192, 5, 0x23456789u));
	expect_same(_metadata, &x, &y);
	/* the parameters are read at the launch: new values, new results */
	run(&in, &cfg, 900, 7, 0, true, &x);
	run(&pg, &cfg, 900, 7, 0, true, &y);
	EXPECT_EQ(0u, bad_words(x.words, 192, 900, 7));
	expect_same(_metadata, &x, &y);

	/* a fault: the same errno and exception record */
	run(&in, &cfg, 1, 2, 1, true, &x);
	run(&pg, &cfg, 1, 2, 1, true, &y);
	EXPECT_EQ(0, x.launch);
	EXPECT_EQ(-EFAULT, x.wait);
	EXPECT_EQ(0, x.exc_ret);
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, x.exc.code);
	EXPECT_EQ(0xdead0000ull, x.exc.addr);
	EXPECT_EQ((uint32_t)VGPU_JOB_FAILED, x.st.state);
	expect_same(_metadata, &x, &y);
	/* and the device goes on */
	run(&in, &cfg, 3, 4, 0, true, &x);
	run(&pg, &cfg, 3, 4, 0, true, &y);
	EXPECT_EQ(0u, bad_words(x.words, 192, 3, 4));
	expect_same(_metadata, &x, &y);

	/* on a queue of its own: the job says which */
	cfg.queue = in.queue;
	run(&in, &cfg, 8, 9, 0, true, &x);
	cfg.queue = pg.queue;
	run(&pg, &cfg, 8, 9, 0, true, &y);
	EXPECT_EQ(vgpu_queue_id(in.queue), x.st.queue);
	EXPECT_NE(0u, x.st.queue);
	expect_same(_metadata, &x, &y);
	/* another device's queue */
	run(&in, &cfg, 8, 9, 0, true, &x);
	cfg.queue = in.queue;
	run(&pg, &cfg, 8, 9, 0, true, &y);
	EXPECT_EQ(-EINVAL, x.launch);
	expect_same(_metadata, &x, &y);
	cfg.queue = NULL;

	/* no job handle: it has run when the launch returns */
	run(&in, &cfg, 11, 12, 0, false, &x);
	run(&pg, &cfg, 11, 12, 0, false, &y);
	EXPECT_EQ(0, x.launch);
	EXPECT_EQ(0u, bad_words(x.words, 192, 11, 12));
	expect_same(_metadata, &x, &y);

	/* launch flags the device does not know: SUBMIT's -EINVAL */
	cfg.flags = 1u << 31;
	run(&in, &cfg, 1, 1, 0, true, &x);
	run(&pg, &cfg, 1, 1, 0, true, &y);
	EXPECT_EQ(-EINVAL, x.launch);
	EXPECT_EQ(0u, bad_words(x.words, 0, 0, 0));
	expect_same(_metadata, &x, &y);
	cfg.flags = 0;

	/* the page path made a parameter page; the inline one none */
	EXPECT_EQ(0u, in.dev->nparam_bos);
	EXPECT_NE(0u, pg.dev->nparam_bos);
	side_close(&in);
	side_close(&pg);
}

TEST(paths_agree_on_a_closed_buffer)
{
	struct side in, pg;
	struct outcome x, y;
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 32 } };

	ASSERT_EQ(0, side_open(&in, false));
	ASSERT_EQ(0, side_open(&pg, true));
	/* a buffer in the launch's list, closed before it: SUBMIT's lookup */
	ASSERT_EQ(0, vgpu_args_use_bo(in.args, in.extra));
	ASSERT_EQ(0, vgpu_args_use_bo(pg.args, pg.extra));
	/* once with it open (the page path makes its page now: the closed
	 * handle is not given to that page later) */
	run(&in, &cfg, 1, 2, 0, true, &x);
	run(&pg, &cfg, 1, 2, 0, true, &y);
	EXPECT_EQ(0, x.launch);
	EXPECT_EQ(0u, bad_words(x.words, 32, 1, 2));
	expect_same(_metadata, &x, &y);
	vgpu_bo_free(in.extra);
	vgpu_bo_free(pg.extra);
	in.extra = pg.extra = NULL;
	run(&in, &cfg, 1, 2, 0, true, &x);
	run(&pg, &cfg, 1, 2, 0, true, &y);
	EXPECT_EQ(-ENOENT, x.launch);
	EXPECT_EQ(0u, bad_words(x.words, 0, 0, 0));
	expect_same(_metadata, &x, &y);
	side_close(&in);
	side_close(&pg);
}

/* A launch waiting for point @wp of @so and signalling @sp of @to; its errno. */
static int run_synced(struct side *s, struct vgpu_syncobj *so, uint64_t wp,
		      struct vgpu_syncobj *to, uint64_t sp, struct outcome *r)
{
	struct vgpu_sync_point w = { so, wp }, sig = { to, sp };
	struct vgpu_launch_config cfg = {
		.grid = { 2 }, .block = { 32 }, .wait = &w, .nwait = 1, .signal = &sig, .nsignal = 1,
	};

	run(s, &cfg, 21, 22, 0, true, r);
	return r->launch;
}

TEST(paths_agree_on_syncobjs)
{
	struct side in, pg;
	struct vgpu_syncobj *a, *b;
	struct outcome x, y;
	uint64_t pa = 0, pb = 0;

	ASSERT_EQ(0, side_open(&in, false));
	ASSERT_EQ(0, side_open(&pg, true));
	ASSERT_EQ(0, vgpu_syncobj_new(in.dev, 0, &a));
	ASSERT_EQ(0, vgpu_syncobj_new(pg.dev, 0, &b));
	ASSERT_EQ(0, vgpu_syncobj_signal(a, 1));
	ASSERT_EQ(0, vgpu_syncobj_signal(b, 1));
	/* point 1 signalled: the job runs and signals point 2 */
	EXPECT_EQ(0, run_synced(&in, a, 1, a, 2, &x));
	EXPECT_EQ(0, run_synced(&pg, b, 1, b, 2, &y));
	EXPECT_EQ(0u, bad_words(x.words, 64, 21, 22));
	expect_same(_metadata, &x, &y);
	ASSERT_EQ(0, vgpu_syncobj_query(a, &pa));
	ASSERT_EQ(0, vgpu_syncobj_query(b, &pb));
	EXPECT_EQ(2u, pa);
	EXPECT_EQ(pa, pb);
	EXPECT_EQ(0, vgpu_syncobj_wait(a, 2, 0));
	/* a point not yet submitted: SUBMIT says -EINVAL (drm_syncobj_find_fence) */
	run_synced(&in, a, 9, a, 10, &x);
	run_synced(&pg, b, 9, b, 10, &y);
	EXPECT_EQ(-EINVAL, x.launch);
	EXPECT_EQ(0u, bad_words(x.words, 0, 0, 0));
	expect_same(_metadata, &x, &y);
	/* another device's syncobj */
	EXPECT_EQ(-EXDEV, run_synced(&in, b, 1, a, 3, &x));
	EXPECT_EQ(-EXDEV, run_synced(&pg, b, 1, a, 3, &y));
	expect_same(_metadata, &x, &y);
	ASSERT_EQ(0, vgpu_syncobj_query(a, &pa));
	EXPECT_EQ(2u, pa);
	EXPECT_EQ(0u, in.dev->nparam_bos);
	vgpu_syncobj_free(a);
	vgpu_syncobj_free(b);
	side_close(&in);
	side_close(&pg);
}

TEST(kernel_without_parameters)
{
	struct side in;
	struct vgpu_job *job = NULL;
	struct vgpu_job_status st;

	ASSERT_EQ(0, side_open(&in, false));
	ASSERT_EQ(0, vgpu_kernel_launch(in.empty, NULL, NULL, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, 0));
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ((uint32_t)VGPU_JOB_DONE, st.state);
	EXPECT_EQ(1u, st.warp_insns);
	vgpu_job_free(job);
	EXPECT_EQ(0u, in.dev->nparam_bos);
	side_close(&in);
}

/* ---- the job record kept per thread ---- */

struct thread_arg {
	struct side *s;
	struct vgpu_job *keep; /* a job left for the main thread to free */
	int ret;
};

/* Launches on their own thread: records freed here are this thread's spare. */
static void *launcher(void *p)
{
	struct thread_arg *t = p;
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 32 } };

	for (int i = 0; i < 3 && !t->ret; i++) {
		struct vgpu_job *job = NULL;

		t->ret = vgpu_kernel_launch(t->s->empty, &cfg, NULL, &job);
		if (!t->ret)
			t->ret = vgpu_job_wait(job, 60 * SEC);
		vgpu_job_free(job);
	}
	if (!t->ret)
		t->ret = vgpu_kernel_launch(t->s->empty, &cfg, NULL, &t->keep);
	return NULL;
}

TEST(job_records_across_threads)
{
	struct side in;
	struct thread_arg t[4];
	pthread_t th[4];
	struct vgpu_job_status st;

	ASSERT_EQ(0, side_open(&in, false));
	for (int i = 0; i < 4; i++) {
		t[i] = (struct thread_arg){ .s = &in };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, launcher, &t[i]));
	}
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, pthread_join(th[i], NULL));
		EXPECT_EQ(0, t[i].ret);
	}
	/* jobs made on threads that have exited: whole, freed here */
	for (int i = 0; i < 4; i++) {
		ASSERT_NE(NULL, t[i].keep);
		ASSERT_EQ(0, vgpu_job_status(t[i].keep, &st));
		EXPECT_EQ((uint32_t)VGPU_JOB_DONE, st.state);
		vgpu_job_free(t[i].keep);
	}
	side_close(&in);
}

TEST_HARNESS_MAIN
