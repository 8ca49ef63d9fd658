/* SPDX-License-Identifier: MIT */
/*
 * 16-byte global accesses are single-copy atomic between SMs, as on the
 * GPU: an SM never sees half of another SM's LDG.128/STG.128 (cub's
 * decoupled look-back publishes a tile's status and value in one
 * st.relaxed.gpu.v2.u64, which the PTX front end makes one STG.128, and
 * the device runs SMs on several host threads).  A writer SM stores
 * {i, i + 7, i, i + 7} in a loop while a reader SM on another host thread
 * loads the 16 bytes until the writer is done and counts the loads whose
 * two halves differ: none.  The two wait for each other through flags in
 * the same memory, so they certainly overlap.  When each 16-byte access
 * was four 4-byte copies, the reader saw torn values within the loop.
 * The same through the PTX front end: a generic st/ld.relaxed.gpu.v2.u64,
 * as cub writes them (two 64-bit accesses before, torn there too), and
 * an 8-byte st/ld.relaxed.gpu.v2.u32 (two 32-bit accesses before: cub's
 * DeviceScan of 4-byte values failed once in about a dozen guest runs
 * on the drm backend).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "core_priv.h"
#include "kernel_util.h"
#include "vgpu.h"

#define STORES 1000000

/* [g]: the 16 bytes; [g+0x20]: torn loads; [g+0x24]: loads;
 * [g+0x40]: the writer is done; [g+0x44]: the reader has started */
static const char src[] =
	".kernel writer\n.param ptr g\n"
	"        LDP.64 R0, [g] ;\n"
	"        MOV R8, 0x1 ;\n"
	"w:      LDG.32 R9, [R0+0x44] ;\n"
	"        ISETP.EQ.U32 P0, R9, 0x0 ;\n"
	"        @P0 BRA w ;\n"
	"        MOV R10, 0x0 ;\n"
	"l:      IADD R10, R10, 0x1 ;\n"
	"        MOV R4, R10 ;\n        IADD R5, R10, 0x7 ;\n"
	"        MOV R6, R4 ;\n        MOV R7, R5 ;\n"
	"        STG.128 [R0], R4 ;\n"
	"        ISETP.LT.U32 P1, R10, 0xf4240 ;\n" /* STORES */
	"        @P1 BRA l ;\n"
	"        STG.32 [R0+0x40], R8 ;\n"
	"        EXIT ;\n"
	".kernel reader\n.param ptr g\n"
	"        LDP.64 R0, [g] ;\n"
	"        MOV R8, 0x1 ;\n"
	"        STG.32 [R0+0x44], R8 ;\n"
	"        MOV R11, 0x0 ;\n        MOV R12, 0x0 ;\n"
	"r:      LDG.128 R4, [R0] ;\n"
	"        IADD R12, R12, 0x1 ;\n"
	"        ISETP.NE.U32 P0, R4, R6 ;\n"
	"        ISETP.NE.U32.OR P0, R5, R7, P0 ;\n"
	"        @P0 IADD R11, R11, 0x1 ;\n"
	"        LDG.32 R9, [R0+0x40] ;\n"
	"        ISETP.EQ.U32 P1, R9, 0x0 ;\n"
	"        @P1 BRA r ;\n"
	"        STG.32 [R0+0x20], R11 ;\n"
	"        STG.32 [R0+0x24], R12 ;\n"
	"        EXIT ;\n";

struct side {
	struct kt *k;
	struct vgpu_sm *sm;
	unsigned int kernel;
	struct vgpu_exception_record exc;
	int ret;
};

static void *run_side(void *arg)
{
	struct side *s = arg;
	const struct vgpu_obj_kernel *kn = &s->k->obj.kernels[s->kernel];
	uint64_t base = GMEM_BASE;
	struct vgpu_launch l;

	memset(&l, 0, sizeof(l));
	l.prog = s->k->prog;
	l.entry = kn->entry;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = 1;
	l.block[1] = l.block[2] = 1;
	l.params = &base;
	l.param_size = 8;
	l.seed = 1;
	l.mem = &vgpu_hostmem_ops;
	l.mem_opaque = &s->k->hm;
	s->ret = vgpu_sm_launch(s->sm, &l, &s->exc);
	return NULL;
}

/* The writer (kernel 0) and the reader (kernel 1) of @k at once, on two SMs. */
static void run_pair(struct kt *k, struct side *w, struct side *r)
{
	pthread_t tw, tr;

	*w = (struct side){ .k = k, .sm = k->sm, .kernel = 0 };
	*r = (struct side){ .k = k, .sm = vgpu_sm_new(NULL), .kernel = 1, .ret = -1 };
	if (!r->sm)
		return;
	if (pthread_create(&tw, NULL, run_side, w)) {
		w->ret = -1;
		return;
	}
	if (pthread_create(&tr, NULL, run_side, r))
		r->ret = -1;
	else
		pthread_join(tr, NULL);
	pthread_join(tw, NULL);
	vgpu_sm_free(r->sm);
}

/*
 * Run @k's writer and reader at once and check what every variant shares:
 * both ended, the reader loaded the 16 bytes at least once and never saw
 * them torn, and the last store is there whole (word @second is the
 * first's + 7).
 */
static void check_pair(struct __test_metadata *_metadata, struct kt *k, unsigned int second)
{
	struct side w, r;

	run_pair(k, &w, &r);
	EXPECT_EQ(0, w.ret) {
		TH_LOG("writer: %s", w.exc.msg);
	}
	EXPECT_EQ(0, r.ret) {
		TH_LOG("reader: %s", r.exc.msg);
	}
	TH_LOG("%u loads of the vector while %u stores went on, %u torn",
	       kt_word(k, 9), STORES, kt_word(k, 8));
	EXPECT_EQ((uint32_t)STORES, kt_word(k, 0));
	EXPECT_EQ((uint32_t)STORES + 7, kt_word(k, second));
	EXPECT_LT(0u, kt_word(k, 9));
	EXPECT_EQ(0u, kt_word(k, 8));
}

TEST(a_16_byte_access_is_never_torn_between_sms)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, src));
	ASSERT_EQ(2u, k.obj.nkernels);
	check_pair(_metadata, &k, 1);
	/* {i, i + 7} twice */
	EXPECT_EQ(kt_word(&k, 0), kt_word(&k, 2));
	EXPECT_EQ(kt_word(&k, 1), kt_word(&k, 3));
	kt_free(&k);
}

/* the same in PTX: element 1 is always element 0 + 7 */
static const char ptx_src[] =
	".version 8.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry writer(.param .u64 g)\n{\n"
	"\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<2>;\n\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [g];\n"
	"W:\n\tld.volatile.global.u32 %r1, [%rd1+68];\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra W;\n"
	"\tmov.u64 %rd2, 0;\n"
	"L:\n\tadd.u64 %rd2, %rd2, 1;\n\tadd.u64 %rd3, %rd2, 7;\n"
	"\tst.relaxed.gpu.v2.u64 [%rd1], {%rd2, %rd3};\n"
	"\tsetp.lt.u64 %p1, %rd2, 1000000;\n\t@%p1 bra L;\n"
	"\tmov.u32 %r1, 1;\n\tst.volatile.global.u32 [%rd1+64], %r1;\n\tret;\n}\n"
	".visible .entry reader(.param .u64 g)\n{\n"
	"\t.reg .b64 %rd<5>;\n\t.reg .b32 %r<7>;\n\t.reg .pred %p<3>;\n"
	"\tld.param.u64 %rd1, [g];\n"
	"\tmov.u32 %r1, 1;\n\tst.volatile.global.u32 [%rd1+68], %r1;\n"
	"\tmov.u32 %r5, 0;\n\tmov.u32 %r6, 0;\n"
	"R:\n\tld.relaxed.gpu.v2.u64 {%rd2, %rd3}, [%rd1];\n"
	"\tadd.u32 %r6, %r6, 1;\n"
	"\tsub.u64 %rd4, %rd3, %rd2;\n\tsetp.ne.u64 %p1, %rd4, 7;\n"
	"\t@%p1 add.u32 %r5, %r5, 1;\n"
	"\tld.volatile.global.u32 %r1, [%rd1+64];\n"
	"\tsetp.eq.u32 %p2, %r1, 0;\n\t@%p2 bra R;\n"
	"\tst.global.u32 [%rd1+32], %r5;\n\tst.global.u32 [%rd1+36], %r6;\n\tret;\n}\n";

TEST(ptx_v2_u64_is_one_access_between_sms)
{
	char *text = NULL;
	struct kt k;

	ASSERT_EQ(0, vgpu_ptx_to_asm(ptx_src, strlen(ptx_src), "wide.ptx", &text, NULL, 0));
	ASSERT_EQ(0, kt_load(&k, text));
	free(text);
	ASSERT_EQ(2u, k.obj.nkernels);
	kt_set_word(&k, 2, 7); /* {0, 7} before the first store */
	check_pair(_metadata, &k, 2);
	kt_free(&k);
}

/* an 8-byte vector of 32-bit elements, as cub's ScanTileState of a 4-byte
 * value publishes status and value: element 1 is always element 0 + 7 */
static const char ptx_src32[] =
	".version 8.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry writer(.param .u64 g)\n{\n"
	"\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [g];\n"
	"W:\n\tld.volatile.global.u32 %r1, [%rd1+68];\n"
	"\tsetp.eq.u32 %p1, %r1, 0;\n\t@%p1 bra W;\n"
	"\tmov.u32 %r2, 0;\n"
	"L:\n\tadd.u32 %r2, %r2, 1;\n\tadd.u32 %r3, %r2, 7;\n"
	"\tst.relaxed.gpu.v2.u32 [%rd1], {%r2, %r3};\n"
	"\tsetp.lt.u32 %p1, %r2, 1000000;\n\t@%p1 bra L;\n"
	"\tmov.u32 %r1, 1;\n\tst.volatile.global.u32 [%rd1+64], %r1;\n\tret;\n}\n"
	".visible .entry reader(.param .u64 g)\n{\n"
	"\t.reg .b64 %rd<2>;\n\t.reg .b32 %r<8>;\n\t.reg .pred %p<3>;\n"
	"\tld.param.u64 %rd1, [g];\n"
	"\tmov.u32 %r1, 1;\n\tst.volatile.global.u32 [%rd1+68], %r1;\n"
	"\tmov.u32 %r5, 0;\n\tmov.u32 %r6, 0;\n"
	"R:\n\tld.relaxed.gpu.v2.u32 {%r2, %r3}, [%rd1];\n"
	"\tadd.u32 %r6, %r6, 1;\n"
	"\tsub.u32 %r7, %r3, %r2;\n\tsetp.ne.u32 %p1, %r7, 7;\n"
	"\t@%p1 add.u32 %r5, %r5, 1;\n"
	"\tld.volatile.global.u32 %r1, [%rd1+64];\n"
	"\tsetp.eq.u32 %p2, %r1, 0;\n\t@%p2 bra R;\n"
	"\tst.global.u32 [%rd1+32], %r5;\n\tst.global.u32 [%rd1+36], %r6;\n\tret;\n}\n";

TEST(ptx_v2_u32_is_one_access_between_sms)
{
	char *text = NULL;
	struct kt k;

	ASSERT_EQ(0, vgpu_ptx_to_asm(ptx_src32, strlen(ptx_src32), "wide32.ptx", &text, NULL, 0));
	/* one 64-bit access each way, not two 32-bit ones */
	EXPECT_NE(NULL, strstr(text, "STG.64"));
	EXPECT_NE(NULL, strstr(text, "LDG.64"));
	ASSERT_EQ(0, kt_load(&k, text));
	free(text);
	ASSERT_EQ(2u, k.obj.nkernels);
	kt_set_word(&k, 1, 7); /* {0, 7} before the first store */
	check_pair(_metadata, &k, 1);
	kt_free(&k);
}

TEST_HARNESS_MAIN
