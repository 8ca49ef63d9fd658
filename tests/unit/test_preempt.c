/* SPDX-License-Identifier: MIT */
/*
 * Preemption in the core (vgpu_launch_ctl.preempt/.preempt_every,
 * vgpu_sm_save, vgpu_sm_resume; uapi/vgpu_hw.h "Context save"): a kernel
 * preempted every N warp-instructions, each time saved and resumed on the
 * other of two SMs, computes what it computes unpreempted (TMA copies in
 * flight, warps at barriers and mbarrier waits, random schedules); a
 * restore is bit-exact (a state saved again right after its restore is
 * byte for byte the same, and a kernel without copies executes exactly
 * the same warp-instructions); a deadlock preempted stays a deadlock; and
 * a saved state that is damaged is refused with VGPU_EXC_BAD_CONTEXT, or
 * at worst runs to some end, never outside its buffers (the ASan build).
 */
#include <stdio.h>

#include "core_priv.h"
#include "kernel_util.h"

/* 1D TMA loads with an mbarrier (examples/tma_1d_parity.vgs on one buffer):
 * out[t] = t * t + 4 * t + 1 for 128 threads. */
static const char tma_src[] =
	".kernel k\n.param ptr g\n"
	".shared bar, 8\n.shared smem1, 512\n.shared smem2, 1024\n"
	"        LDP.64 R2, [g] ;\n"
	"        MOV R6, R2 ;\n        MOV R7, R3 ;\n"
	"        IADD R2, R2, 0x1000 ;\n"
	"        MOV R4, R2 ;\n        MOV R5, R3 ;\n        IADD R4, R4, 0x1000 ;\n"
	"        S2R R0, SR_TID ;\n        SHL R1, R0, 0x2 ;\n"
	"        IADD R8, R2, R1 ;\n        MOV R9, R3 ;\n"
	"        IMUL R10, R0, 0x3 ;\n        IADD R10, R10, 0x1 ;\n"
	"        STG.32 [R8], R10 ;\n"
	"        SHL R11, R0, 0x3 ;\n        IADD R12, R4, R11 ;\n        MOV R13, R5 ;\n"
	"        IMUL R14, R0, R0 ;\n        MOV R15, R0 ;\n        STG.64 [R12], R14 ;\n"
	"        MEMBAR.GPU ;\n        BAR.SYNC 0x0 ;\n"
	"        ISETP.EQ.U32 P0, R0, 0x0 ;\n        MOV R16, 0x0 ;\n"
	"        @!P0 BRA all ;\n"
	"        MBAR.INIT [R16], 0x1 ;\n"
	"        MOV R18, 0x10 ;\n        MOV R19, 0x210 ;\n"
	"        MOV R20, 0x200 ;\n        MOV R21, 0x400 ;\n"
	"        CP.ASYNC.BULK [R18], [R2], R20, [R16] ;\n"
	"        CP.ASYNC.BULK [R19], [R4], R21, [R16] ;\n"
	"        MBAR.ARRIVE.EXPECT_TX _, [R16], 0x600 ;\n"
	"all:\n        BAR.SYNC 0x0 ;\n"
	"wait:\n        MBAR.TRY_WAIT.PARITY P1, [R16], 0x0 ;\n        @!P1 BRA wait ;\n"
	"        LDS.32 R26, [R1+0x10] ;\n        LDS.64 R28, [R11+0x210] ;\n"
	"        IADD R26, R26, R28 ;\n        IADD R26, R26, R29 ;\n"
	"        IADD R30, R6, R1 ;\n        MOV R31, R7 ;\n"
	"        STG.32 [R30], R26 ;\n        EXIT ;\n";

/*
 * No copies: a shared-memory tree reduction over 256 threads with
 * BAR.SYNC rounds and divergent branches; out[ctaid] = sum of tid^2,
 * and every thread's partial sum to out[64 + gtid].
 */
static const char reduce_src[] =
	".kernel k\n.param ptr g\n.shared s, 1024\n"
	"        LDP.64 R2, [g] ;\n"
	"        S2R R0, SR_TID ;\n        S2R R9, SR_CTAID.X ;\n"
	"        SHL R1, R0, 0x2 ;\n"
	"        IMUL R4, R0, R0 ;\n        STS.32 [R1], R4 ;\n"
	"        MOV R5, 0x80 ;\n"
	"loop:\n        BAR.SYNC 0x0 ;\n"
	"        ISETP.LT.U32 P0, R0, R5 ;\n        @!P0 BRA skip ;\n"
	"        SHL R6, R5, 0x2 ;\n        IADD R6, R6, R1 ;\n"
	"        LDS.32 R7, [R6] ;\n        LDS.32 R8, [R1] ;\n"
	"        IADD R8, R8, R7 ;\n        STS.32 [R1], R8 ;\n"
	"skip:\n        SHR.U32 R5, R5, 0x1 ;\n"
	"        ISETP.NE.U32 P1, R5, 0x0 ;\n        @P1 BRA loop ;\n"
	"        BAR.SYNC 0x0 ;\n"
	"        LDS.32 R10, [R1] ;\n"
	"        SHL R11, R9, 0x8 ;\n        IADD R11, R11, R0 ;\n"
	"        IADD R11, R11, 0x40 ;\n        SHL R11, R11, 0x2 ;\n"
	"        IADD R12, R2, R11 ;\n        MOV R13, R3 ;\n"
	"        STG.32 [R12], R10 ;\n"
	"        ISETP.NE.U32 P2, R0, 0x0 ;\n        @P2 EXIT ;\n"
	"        SHL R14, R9, 0x2 ;\n        IADD R14, R2, R14 ;\n"
	"        MOV R15, R3 ;\n        STG.32 [R14], R10 ;\n        EXIT ;\n";

/* Two warps, one waiting at BAR.SYNC 0x0, 0x80: a deadlock. */
static const char deadlock_src[] =
	".kernel k\n.param ptr g\n"
	"        BAR.SYNC 0x0, 0x80 ;\n        EXIT ;\n";

struct prun {
	struct vgpu_launch l;
	struct vgpu_launch_ctl ctl;
	uint8_t params[8];
	struct vgpu_sm *sm[2];
	uint8_t *state;
	size_t state_size;
	uint32_t preemptions, resumes;
};

static void prun_init(struct prun *p, struct kt *k)
{
	const struct vgpu_obj_kernel *kn = &k->obj.kernels[0];
	uint64_t base = GMEM_BASE;

	memset(p, 0, sizeof(*p));
	memcpy(p->params, &base, 8);
	p->l.prog = k->prog;
	p->l.entry = kn->entry;
	memcpy(p->l.grid, k->grid, sizeof(p->l.grid));
	memcpy(p->l.block, k->block, sizeof(p->l.block));
	memcpy(p->l.cluster, k->cluster, sizeof(p->l.cluster));
	p->l.smem_bytes = kn->smem_static + k->smem;
	p->l.params = p->params;
	p->l.param_size = 8;
	p->l.flags = k->flags;
	p->l.seed = k->seed;
	p->l.budget = k->budget;
	p->l.mem = &vgpu_hostmem_ops;
	p->l.mem_opaque = &k->hm;
	p->l.ctl = &p->ctl;
	p->sm[0] = vgpu_sm_new(NULL);
	p->sm[1] = vgpu_sm_new(NULL);
}

static void prun_fini(struct prun *p)
{
	vgpu_sm_free(p->sm[0]);
	vgpu_sm_free(p->sm[1]);
	free(p->state);
}

/* Save the cluster @sm stopped into p->state; its size. */
static size_t prun_save(struct prun *p, struct vgpu_sm *sm)
{
	size_t need = vgpu_sm_save_bytes(sm);

	if (need > p->state_size) {
		p->state = realloc(p->state, need);
		p->state_size = need;
	}
	if (vgpu_sm_save(sm, p->state, need - 1) != 0)	/* too small: refused */
		return 0;
	return vgpu_sm_save(sm, p->state, p->state_size);
}

/*
 * Run the grid, preempting every @every warp-instructions: each stopped
 * cluster saved and resumed on the other SM, the clusters not started
 * run there.  Returns as vgpu_sm_run() when the launch has ended.
 */
static int prun_run(struct prun *p, uint64_t every,
		    struct vgpu_exception_record *exc)
{
	uint32_t n = p->l.grid[0] * p->l.grid[1] * p->l.grid[2], cluster;
	int s = 0, ret;

	p->ctl.preempt_every = every;
	ret = vgpu_sm_run(p->sm[s], &p->l, 0, n, exc);
	while (ret == VGPU_RUN_PREEMPTED) {
		struct vgpu_sm *from = p->sm[s];
		size_t size;

		p->preemptions++;
		s ^= 1;
		if (!vgpu_sm_preempted(from, &cluster)) {
			ret = vgpu_sm_run(p->sm[s], &p->l, cluster, n - cluster, exc);
			continue;
		}
		size = prun_save(p, from);
		if (!size)
			return -2;
		p->resumes++;
		ret = vgpu_sm_resume(p->sm[s], &p->l, p->state, size, exc);
		if (!ret && cluster + 1 < n)
			ret = vgpu_sm_run(p->sm[s], &p->l, cluster + 1, n - cluster - 1,
					  exc);
	}
	return ret;
}

static void check_preempted_like_reference(struct __test_metadata *_metadata,
					   const char *src, uint32_t grid,
					   uint32_t block, size_t out_bytes,
					   bool exact)
{
	static const uint64_t every[] = { 1, 2, 3, 5, 17, 64, 333, 5000 };
	uint8_t *want = malloc(out_bytes);
	struct kt k;

	ASSERT_NE(NULL, want);
	for (uint64_t seed = 0; seed < 4; seed++) {
		for (unsigned e = 0; e < sizeof(every) / sizeof(every[0]); e++) {
			struct vgpu_exception_record exc;
			struct vgpu_sm_stats st;
			uint64_t ref_insns;
			struct prun p;
			int ret;

			ASSERT_EQ(0, kt_load(&k, src));
			k.grid[0] = grid;
			k.block[0] = block;
			k.seed = seed;
			k.flags = seed ? VGPU_LAUNCH_RANDOM_SCHED : 0;
			KT_RUN_OK(&k);
			vgpu_sm_get_stats(k.sm, &st);
			ref_insns = st.warp_insns;
			memcpy(want, k.mem.buf, out_bytes);
			memset(k.mem.buf, 0, GMEM_SIZE);

			prun_init(&p, &k);
			/* the SMs one at a time on this thread: plain adds
			 * count the same (every other run) */
			p.ctl.one_sm = e % 2;
			ret = prun_run(&p, every[e], &exc);
			EXPECT_EQ(0, ret) {
				TH_LOG("seed %llu every %llu: %s",
				       (unsigned long long)seed,
				       (unsigned long long)every[e], exc.msg);
			}
			EXPECT_EQ(0, memcmp(want, k.mem.buf, out_bytes)) {
				TH_LOG("seed %llu every %llu: results differ",
				       (unsigned long long)seed,
				       (unsigned long long)every[e]);
			}
			/* every N instructions of a run (a run begins anew
			 * after each resumed cluster): at least that often */
			EXPECT_LE(atomic_load(&p.ctl.executed) / every[e] / 2,
				  (uint64_t)p.preemptions + 1);
			if (every[e] < ref_insns)
				EXPECT_LT(0u, p.resumes);
			if (exact) {
				EXPECT_EQ(ref_insns, atomic_load(&p.ctl.executed)) {
					TH_LOG("seed %llu every %llu",
					       (unsigned long long)seed,
					       (unsigned long long)every[e]);
				}
			}
			prun_fini(&p);
			kt_free(&k);
		}
	}
	free(want);
}

/* TMA copies in flight and warps in MBAR.TRY_WAIT at preemption points. */
TEST(tma_mbarrier_kernel_preempted_computes_the_same)
{
	check_preempted_like_reference(_metadata, tma_src, 1, 128, 0x200, false);
}

/* No copies: the same results and exactly the same warp-instructions. */
TEST(barrier_reduction_preempted_is_exact)
{
	check_preempted_like_reference(_metadata, reduce_src, 3, 256,
				       4 * (64 + 3 * 256), true);
}

/*
 * A warp whose lane 0 is parked in MBAR.TRY_WAIT while its other lanes
 * wait at a named barrier (the producer lane of a warp-specialised
 * kernel waiting on an empty slot while the rest sync): saved in state
 * BLOCKED with a parked lane and a time limit, which a restore once
 * refused ("warp sets disagree"; the corpus's tma_multicast in the
 * guest's preempt lanes).  out[0] = 7, out[1..31] = 5, out[32..63] = 9.
 */
static const char park_block_src[] =
	".kernel k\n.param ptr g\n.shared bar, 8\n"
	"        LDP.64 R2, [g] ;\n"
	"        S2R R0, SR_TID ;\n        SHL R1, R0, 0x2 ;\n        MOV R16, 0x0 ;\n"
	"        ISETP.EQ.U32 P0, R0, 0x0 ;\n"
	"        @P0 MBAR.INIT [R16], 0x1 ;\n"
	"        BAR.SYNC 0x0 ;\n"
	"        ISETP.GE.U32 P2, R0, 0x20 ;\n        @P2 BRA w1 ;\n"
	"        @!P0 BRA b1 ;\n"
	"wait:\n        MBAR.TRY_WAIT.PARITY P1, [R16], 0x0 ;\n        @!P1 BRA wait ;\n"
	"        MOV R10, 0x7 ;\n        BRA out ;\n"
	"b1:\n        BAR.SYNC 0x1, 0x40 ;\n        MOV R10, 0x5 ;\n        BRA out ;\n"
	"w1:\n        BAR.SYNC 0x1, 0x40 ;\n"
	"        ISETP.EQ.U32 P3, R0, 0x20 ;\n        @P3 MBAR.ARRIVE _, [R16] ;\n"
	"        MOV R10, 0x9 ;\n"
	"out:\n        IADD R8, R2, R1 ;\n        MOV R9, R3 ;\n"
	"        STG.32 [R8], R10 ;\n        EXIT ;\n";

TEST(parked_lane_in_a_blocked_warp_is_saved_and_restored)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, park_block_src));
	k.block[0] = 64;
	KT_RUN_OK(&k);
	EXPECT_EQ(7u, kt_word(&k, 0));
	for (uint32_t t = 1; t < 64; t++)
		EXPECT_EQ(t < 32 ? 5u : 9u, kt_word(&k, t));
	kt_free(&k);
	check_preempted_like_reference(_metadata, park_block_src, 1, 64, 4 * 64, false);
}

/* A state saved right after its restore (nothing run) is the same bytes. */
TEST(restore_then_save_is_byte_identical)
{
	struct vgpu_exception_record exc;
	uint8_t *first;
	size_t size, size2;
	struct prun p;
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, tma_src));
	k.block[0] = 128;
	prun_init(&p, &k);
	p.ctl.preempt_every = 120;	/* copies in flight, warps waiting */
	ASSERT_EQ(VGPU_RUN_PREEMPTED, vgpu_sm_run(p.sm[0], &p.l, 0, 1, &exc));
	size = prun_save(&p, p.sm[0]);
	ASSERT_LT(sizeof(struct vgpu_ctx_header), size);
	first = malloc(size);
	ASSERT_NE(NULL, first);
	memcpy(first, p.state, size);
	/* resume on the other SM with a preemption already requested */
	atomic_store(&p.ctl.preempt, 1);
	ASSERT_EQ(VGPU_RUN_PREEMPTED, vgpu_sm_resume(p.sm[1], &p.l, first, size, &exc));
	size2 = prun_save(&p, p.sm[1]);
	ASSERT_EQ(size, size2);
	EXPECT_EQ(0, memcmp(first, p.state, size));
	/* and it finishes from there */
	atomic_store(&p.ctl.preempt, 0);
	p.ctl.preempt_every = 0;
	EXPECT_EQ(0, vgpu_sm_resume(p.sm[0], &p.l, first, size, &exc)) {
		TH_LOG("%s", exc.msg);
	}
	for (uint32_t t = 0; t < 128; t++)
		EXPECT_EQ(t * t + 4 * t + 1, kt_word(&k, t));
	free(first);
	prun_fini(&p);
	kt_free(&k);
}

/* A deadlocked CTA preempted (every instruction) is reported deadlocked. */
TEST(deadlock_preempted_is_still_a_deadlock)
{
	struct vgpu_exception_record exc;
	struct prun p;
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, deadlock_src));
	k.block[0] = 64;
	prun_init(&p, &k);
	EXPECT_EQ(-1, prun_run(&p, 1, &exc));
	EXPECT_EQ((uint32_t)VGPU_EXC_DEADLOCK, exc.code);
	EXPECT_EQ(0u, exc.barid);
	EXPECT_LT(0u, p.resumes);
	prun_fini(&p);
	kt_free(&k);
}

/* A saved TMA-kernel state, preempted mid-way, for the corruption tests. */
static size_t saved_state(struct __test_metadata *_metadata, struct kt *k,
			  struct prun *p, uint64_t at)
{
	struct vgpu_exception_record exc;

	EXPECT_EQ(0, kt_load(k, tma_src));
	k->block[0] = 128;
	k->budget = 200000;	/* a damaged state that loops ends */
	prun_init(p, k);
	p->ctl.preempt_every = at;
	EXPECT_EQ(VGPU_RUN_PREEMPTED, vgpu_sm_run(p->sm[0], &p->l, 0, 1, &exc));
	p->ctl.preempt_every = 0;
	return prun_save(p, p->sm[0]);
}

static int resume_copy(struct prun *p, const uint8_t *state, size_t size,
		       struct vgpu_exception_record *exc)
{
	uint8_t *copy = malloc(size);
	int ret;

	memcpy(copy, state, size);
	ret = vgpu_sm_resume(p->sm[1], &p->l, copy, size, exc);
	free(copy);
	return ret;
}

#define CTX_WARP0 (sizeof(struct vgpu_ctx_header) + sizeof(struct vgpu_ctx_cta) + \
		   16 /* one mbarrier */ + 0x610 /* 8 + 512 + 1024, rounded */)

/* Damaged fields: each refused with BAD_CONTEXT, nothing run. */
TEST(damaged_state_is_refused)
{
	struct vgpu_exception_record exc;
	struct vgpu_ctx_header *h;
	struct vgpu_ctx_warp *w;
	struct vgpu_ctx_cta *c;
	uint8_t *good, *s;
	struct prun p;
	struct kt k;
	size_t size, len;

	size = saved_state(_metadata, &k, &p, 120);
	ASSERT_LT(CTX_WARP0 + sizeof(*w), size);
	good = malloc(size);
	s = malloc(size);
	ASSERT_TRUE(good && s);
	memcpy(good, p.state, size);
	h = (struct vgpu_ctx_header *)s;
	c = (struct vgpu_ctx_cta *)(s + sizeof(*h));
	w = (struct vgpu_ctx_warp *)(s + CTX_WARP0);
	memcpy(s, good, size);
	ASSERT_EQ(1u, c->nmbars);	/* the layout the offsets assume */
	ASSERT_EQ(0u, w->pad);

#define DAMAGE(what, stmt)							\
	do {									\
		memcpy(s, good, size);						\
		len = size;							\
		stmt;								\
		memset(&exc, 0, sizeof(exc));					\
		EXPECT_EQ(-1, resume_copy(&p, s, len, &exc)) {			\
			TH_LOG("%s", what);					\
		}								\
		EXPECT_EQ((uint32_t)VGPU_EXC_BAD_CONTEXT, exc.code) {		\
			TH_LOG("%s: %s", what, exc.msg);			\
		}								\
	} while (0)
	DAMAGE("magic", h->magic ^= 1);
	DAMAGE("version", h->version = VGPU_CTX_VERSION + 1);
	/* a state saved before call depths were (version 1, 64 bytes a warp
	 * shorter): refused, never read with today's layout */
	DAMAGE("old version 1", h->version = 1);
	DAMAGE("bytes larger than the buffer", h->bytes = size + 8);
	DAMAGE("bytes short", h->bytes = size - 8);
	DAMAGE("cluster outside the grid", h->cluster = 1);
	DAMAGE("nwarps", h->nwarps = 5);
	DAMAGE("nregs", h->nregs++);
	DAMAGE("smem_bytes", h->smem_bytes += 8);
	DAMAGE("next_cta", h->next_cta = 1);
	DAMAGE("reserved", h->reserved[1] = 1);
	DAMAGE("run_warp outside the CTA", (h->run_cta = 0, h->run_warp = 4, h->quantum = 1));
	DAMAGE("quantum 0", (h->run_cta = 0, h->run_warp = 0, h->quantum = 0));
	DAMAGE("CTA id", c->id[0] = 3);
	DAMAGE("exited_warps", c->exited_warps = 5);
	DAMAGE("runnable disagrees", c->runnable ^= 1);
	DAMAGE("mbarrier offset unaligned", *(uint32_t *)(s + sizeof(*h) + sizeof(*c)) = 4);
	DAMAGE("mbarrier outside shared memory",
	       *(uint32_t *)(s + sizeof(*h) + sizeof(*c)) = 0x10000);
	DAMAGE("too many mbarriers", c->nmbars = 100000);
	DAMAGE("barrier mode 3", c->bar[2] = 3u << VGPU_BARST_MODE_SHIFT);
	DAMAGE("warp state 7", w->state = 7);
	DAMAGE("exists", w->exists = 1);
	DAMAGE("no live lane but not exited", w->live = 0);
	DAMAGE("upc outside the program", w->upc = 100000);
	DAMAGE("lane pc outside the program", w->pc[5] = 0x7fffffff);
	DAMAGE("wait_bar", w->wait_bar = 16);
	DAMAGE("wait_cta", w->wait_cta = 1);
	DAMAGE("wait_off unaligned", w->wait_off = 3);
	DAMAGE("PT", w->pred[7] = 0);
	DAMAGE("pad", w->pad = 1);
	DAMAGE("truncated", len = size - 1);
#undef DAMAGE
	/* the good state still runs to the right answer */
	memset(&exc, 0, sizeof(exc));
	EXPECT_EQ(0, resume_copy(&p, good, size, &exc)) {
		TH_LOG("%s", exc.msg);
	}
	for (uint32_t t = 0; t < 128; t++)
		EXPECT_EQ(t * t + 4 * t + 1, kt_word(&k, t));
	free(good);
	free(s);
	prun_fini(&p);
	kt_free(&k);
}

/*
 * Random damage to the scheduler records (not registers or shared
 * memory, which are data): resumed, it is refused or runs to some end
 * (completion, an exception, the budget), with no memory error (ASan).
 */
TEST(random_damage_never_escapes)
{
	struct vgpu_exception_record exc;
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint32_t refused = 0, ran = 0;
	uint8_t *good, *s;
	struct prun p;
	struct kt k;
	size_t size;

	size = saved_state(_metadata, &k, &p, 110);
	ASSERT_LT(CTX_WARP0, size);
	good = malloc(size);
	s = malloc(size);
	ASSERT_TRUE(good && s);
	memcpy(good, p.state, size);
	for (int i = 0; i < 3000; i++) {
		size_t warp = CTX_WARP0 +
			(i % 4) * (sizeof(struct vgpu_ctx_warp) +
				   (size_t)k.prog->nregs * 128);
		size_t off;
		int ret;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* the header, the CTA record, the mbarrier, or a warp record */
		switch (rng % 4) {
		case 0:
			off = (rng >> 8) % sizeof(struct vgpu_ctx_header);
			break;
		case 1:
			off = sizeof(struct vgpu_ctx_header) + (rng >> 8) % (96 + 16);
			break;
		default:
			off = warp + (rng >> 8) % sizeof(struct vgpu_ctx_warp);
			break;
		}
		memcpy(s, good, size);
		s[off] ^= (uint8_t)(1u << ((rng >> 40) % 8));
		if (rng & (1ull << 50))
			s[off] = (uint8_t)(rng >> 52);
		memset(k.mem.buf, 0, 0x200);
		ret = resume_copy(&p, s, size, &exc);
		if (ret == -1 && exc.code == VGPU_EXC_BAD_CONTEXT)
			refused++;
		else
			ran++;
		EXPECT_TRUE(ret == 0 || ret == -1) {
			TH_LOG("damage at %zu: %d", off, ret);
		}
	}
	EXPECT_LT(0u, refused);
	EXPECT_LT(0u, ran);
	free(good);
	free(s);
	prun_fini(&p);
	kt_free(&k);
}

TEST_HARNESS_MAIN
