// SPDX-License-Identifier: MIT
/*
 * CALL, RET and SALLOC in assembly on the core (docs/core.md "Calls"):
 * direct and indirect calls, recursion whose depth differs per lane,
 * divergent calls and returns reconverging (VOTE.BALLOT after the call
 * sees every lane), stack allocation, and the exceptions: stack overflow
 * with its exact record, RET without a call, a clobbered call record, a
 * call through a register outside the program.
 */
#include "kernel_util.h"

/*
 * Each thread's stack: 1 KiB at GMEM_BASE + 0x10000 + tid * 0x400; the
 * call block is R20..R23 (stack pointer at the top, limit at the bottom).
 */
#define STACK_SETUP                                                            \
	"  IMUL R20, R0, 0x400 ;\n"                                            \
	"  IADD R22, R20, 0x10000 ;\n"                                         \
	"  IADD R20, R22, 0x400 ;\n"                                           \
	"  MOV R21, R3 ;\n"                                                    \
	"  MOV R23, R3 ;\n"

TEST(direct_call_and_return)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE STACK_SETUP
			     "  MOV R5, 0x7 ;\n"
			     "  CALL R20, twice ;\n"
			     "  CALL R20, twice ;\n"
			     "  VOTE.BALLOT R10, PT ;\n"
			     KT_STORE("R5", "0x0") KT_STORE("R10", "0x100")
			     KT_STORE("R20", "0x200")
			     "  EXIT ;\n"
			     "twice:\n"
			     "  IADD R5, R5, R5 ;\n"
			     "  RET R20 ;\n"));
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		EXPECT_EQ(28u, kt_word(&k, t));
		EXPECT_EQ(~0u, kt_word(&k, 64 + t));
		/* the stack pointer is back at the top */
		EXPECT_EQ(0x10400u + t * 0x400u, kt_word(&k, 128 + t));
	}
	kt_free(&k);
}

/*
 * fact(n) recursive, n = tid % 9: every lane recurses to its own depth;
 * after the outer call the warp is whole again.
 */
TEST(divergent_recursion_reconverges)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE STACK_SETUP
			     "  IREM.U32 R5, R0, 0x9 ;\n"
			     "  CALL R20, fact ;\n"
			     "  VOTE.BALLOT R10, PT ;\n"
			     KT_STORE("R6", "0x0") KT_STORE("R10", "0x100")
			     "  EXIT ;\n"
			     /* fact: R6 = R5!, R5 kept (saved on the stack) */
			     "fact:\n"
			     "  ISETP.GT.U32 P0, R5, 0x1 ;\n"
			     "  @P0 BRA rec ;\n"
			     "  MOV R6, 0x1 ;\n"
			     "  RET R20 ;\n"
			     "rec:\n"
			     "  SALLOC R20, 0x10 ;\n"
			     "  STG.32 [R20], R5 ;\n"
			     "  IADD R5, R5, -0x1 ;\n"
			     "  CALL R20, fact ;\n"
			     "  LDG.32 R5, [R20] ;\n"
			     "  SALLOC R20, -0x10 ;\n"
			     "  IMUL R6, R6, R5 ;\n"
			     "  RET R20 ;\n"));
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		uint32_t f = 1;

		for (uint32_t i = 2; i <= t % 9; i++)
			f *= i;
		EXPECT_EQ(f, kt_word(&k, t));
		EXPECT_EQ(~0u, kt_word(&k, 64 + t));
	}
	kt_free(&k);
}

/*
 * Indirect calls: each lane calls one of three functions by address
 * (a table in R11..R13 chosen by tid % 3), odd lanes only (a guarded
 * CALL: the even ones go on); inside, lanes of one function diverge
 * again and return from two different RETs.  After the call every lane is
 * back (ballot), and a ballot inside a callee sees only its callers.
 */
TEST(divergent_indirect_calls_and_returns)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, ".equ FA, 0x210\n.equ FB, 0x250\n.equ FC, 0x270\n"
			     KT_PROLOGUE STACK_SETUP               /* 8 insns */
			     "  MOV R5, 0x0 ;\n"
			     "  MOV R15, 0x0 ;\n"
			     "  IREM.U32 R4, R0, 0x3 ;\n"
			     "  MOV R11, FA ;\n"
			     "  ISETP.EQ.U32 P1, R4, 0x1 ;\n"
			     "  SEL R11, R11, FB, !P1 ;\n"
			     "  ISETP.EQ.U32 P1, R4, 0x2 ;\n"
			     "  SEL R11, R11, FC, !P1 ;\n"         /* 16 */
			     "  LOP.AND R7, R0, 0x1 ;\n"
			     "  ISETP.NE.U32 P2, R7, 0x0 ;\n"
			     "  @P2 CALL R20, R11 ;\n"
			     "  VOTE.BALLOT R10, PT ;\n"           /* 20 */
			     KT_STORE("R5", "0x0") KT_STORE("R10", "0x100")
			     KT_STORE("R15", "0x200")              /* 32 */
			     "  EXIT ;\n"
			     /* FA at 0x210 (insn 33): lanes with tid & 2 return early */
			     "  LOP.AND R8, R0, 0x2 ;\n"
			     "  ISETP.NE.U32 P3, R8, 0x0 ;\n"
			     "  @P3 MOV R5, 0xa ;\n"
			     "  @P3 RET R20 ;\n"
			     /* FB at 0x250 (insn 37) */
			     "  MOV R5, 0xb ;\n"
			     "  RET R20 ;\n"
			     /* FC at 0x270 (insn 39) */
			     "  VOTE.BALLOT R15, PT ;\n"
			     "  MOV R5, 0xc ;\n"
			     "  RET R20 ;\n"));
	/* check the addresses the test hard-codes */
	ASSERT_EQ(0x2a0u, k.obj.code_size);
	KT_RUN_OK(&k);
	{
		uint32_t fc_callers = 0;

		for (uint32_t t = 0; t < 32; t++)
			if ((t & 1) && t % 3 == 2)
				fc_callers |= 1u << t;
		for (uint32_t t = 0; t < 32; t++) {
			uint32_t want = 0;

			if (t & 1)
				want = t % 3 == 0 ? ((t & 2) ? 0xa : 0xb) : t % 3 == 1 ? 0xb : 0xc;
			EXPECT_EQ(want, kt_word(&k, t)) TH_LOG("lane %u", t);
			EXPECT_EQ(~0u, kt_word(&k, 64 + t));
			EXPECT_EQ(want == 0xc ? fc_callers : 0u, kt_word(&k, 128 + t));
		}
	}
	kt_free(&k);
}

/* SALLOC by a register: each lane allocates tid * 16 bytes, writes there. */
TEST(salloc_by_register)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE STACK_SETUP
			     "  SHL R6, R0, 0x4 ;\n"
			     "  SALLOC R20, R6 ;\n"
			     "  STG.32 [R20], R0 ;\n"
			     "  MOV R24, R20 ;\n"
			     "  ISUB R6, RZ, R6 ;\n"
			     "  SALLOC R20, R6 ;\n"
			     KT_STORE("R24", "0x0") KT_STORE("R20", "0x100")
			     "  EXIT ;\n"));
	KT_RUN_OK(&k);
	for (uint32_t t = 0; t < 32; t++) {
		uint32_t top = 0x10400u + t * 0x400u;

		EXPECT_EQ(top - 16 * t, kt_word(&k, t));
		EXPECT_EQ(top, kt_word(&k, 64 + t));
		EXPECT_EQ(t, kt_word(&k, (top - 16 * t) / 4));
	}
	kt_free(&k);
}

/*
 * Unbounded recursion in lane 5 only: the push that would go below the
 * limit raises STACK_OVERFLOW, with the address it would have written,
 * the limit and the lane and depth in the record.
 */
TEST(stack_overflow_record)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE STACK_SETUP
			     "  ISETP.EQ.U32 P0, R0, 0x5 ;\n"
			     "  @P0 CALL R20, forever ;\n"
			     "  EXIT ;\n"
			     "forever:\n"
			     "  CALL R20, forever ;\n"
			     "  RET R20 ;\n"));
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_STACK_OVERFLOW, k.exc.code);
	EXPECT_EQ(0, strcmp("call stack overflow", vgpu_exc_name(k.exc.code)));
	EXPECT_EQ(0xb0u, k.exc.pc); /* forever: insn 11 */
	EXPECT_EQ(1u << 5, k.exc.lane_mask);
	EXPECT_EQ(GMEM_BASE + 0x10000 + 5 * 0x400 - 16, k.exc.addr);
	EXPECT_EQ(0x10000u + 5 * 0x400, k.exc.info[0]);
	EXPECT_EQ(1u, k.exc.info[1]);
	EXPECT_EQ(5u, k.exc.info[2]);
	EXPECT_EQ(64u, k.exc.info[3]); /* 1 KiB holds 64 records */
	EXPECT_CONTAINS(k.exc.msg, "below its limit");
	kt_free(&k);
}

FIXTURE(call_exception) {
	struct kt k;
};

FIXTURE_VARIANT(call_exception) {
	const char *src;
	uint32_t code, pc;
	const char *msg;
};

FIXTURE_VARIANT_ADD(call_exception, ret_without_call) {
	.src = KT_PROLOGUE STACK_SETUP "  RET R20 ;\n",
	.code = VGPU_EXC_BAD_RETURN, .pc = 0x80, .msg = "no call",
};

/* the callee moves the stack pointer and returns: not its record */
FIXTURE_VARIANT_ADD(call_exception, ret_on_a_moved_stack_pointer) {
	.src = KT_PROLOGUE STACK_SETUP "  CALL R20, f ;\n  EXIT ;\n"
	       "f:\n  SALLOC R20, 0x10 ;\n  RET R20 ;\n",
	.code = VGPU_EXC_BAD_RETURN, .pc = 0xb0, .msg = "does not point at its call",
};

FIXTURE_VARIANT_ADD(call_exception, indirect_call_outside_the_program) {
	.src = KT_PROLOGUE STACK_SETUP "  MOV R6, 0x10000 ;\n  CALL R20, R6 ;\n  EXIT ;\n",
	.code = VGPU_EXC_PC_RANGE, .pc = 0x90, .msg = "call target 0x10000",
};

FIXTURE_VARIANT_ADD(call_exception, salloc_past_the_limit) {
	.src = KT_PROLOGUE STACK_SETUP "  SALLOC R20, 0x401 ;\n  EXIT ;\n",
	.code = VGPU_EXC_STACK_OVERFLOW, .pc = 0x80, .msg = "SALLOC",
};

/* a call block of RZ is an illegal instruction (the block is written) */
FIXTURE_VARIANT_ADD(call_exception, call_block_rz_is_illegal) {
	.src = "  .word 0x0000ff0000000229, 0x0 ;\n  EXIT ;\n",
	.code = VGPU_EXC_ILLEGAL_INSTR, .pc = 0, .msg = "illegal",
};

FIXTURE_SETUP(call_exception)
{
	ASSERT_EQ(0, kt_load(&self->k, variant->src));
}

FIXTURE_TEARDOWN(call_exception)
{
	kt_free(&self->k);
}

TEST_F(call_exception, raised)
{
	EXPECT_EQ(-1, kt_run(&self->k));
	EXPECT_EQ(variant->code, self->k.exc.code);
	EXPECT_EQ(variant->pc, self->k.exc.pc);
	EXPECT_CONTAINS(self->k.exc.msg, variant->msg);
}

TEST(assembler_round_trip_and_errors)
{
	static const char src[] = "  CALL R20, f ;\n  CALL R20, R6 ;\nf:\n"
				  "  SALLOC R20, 0x20 ;\n  SALLOC R20, R7 ;\n  RET R20 ;\n";
	struct vgpu_object obj;
	char log[2048], text[4096] = "";
	FILE *f;

	ASSERT_EQ(0, vgpu_assemble(src, strlen(src), "t.vgs", &obj, log, sizeof(log)))
		TH_LOG("%s", log);
	f = fmemopen(text, sizeof(text) - 1, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, vgpu_disasm_object(&obj, f));
	fclose(f);
	EXPECT_CONTAINS(text, "CALL R20, L_0x20");
	EXPECT_CONTAINS(text, "CALL R20, R6");
	EXPECT_CONTAINS(text, "SALLOC R20, 0x20");
	EXPECT_CONTAINS(text, "SALLOC R20, R7");
	EXPECT_CONTAINS(text, "RET R20");
	vgpu_object_fini(&obj);
	/* the call block spans 4 registers and is written */
	EXPECT_NE(0, vgpu_assemble("RET R252 ;\n", 11, "t.vgs", &obj, log, sizeof(log)));
	EXPECT_CONTAINS(log, "R252..R255, past R254");
	EXPECT_NE(0, vgpu_assemble("RET RZ ;\n", 9, "t.vgs", &obj, log, sizeof(log)));
	EXPECT_CONTAINS(log, "cannot be RZ");
}

TEST_HARNESS_MAIN
