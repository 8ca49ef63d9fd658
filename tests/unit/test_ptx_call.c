// SPDX-License-Identifier: MIT
/*
 * Real calls from nvcc's PTX (docs/ptx.md "Calls"): tests/ptx/nvcc_call/
 * calls.cu, compiled at build time by the machine's nvcc 13 (-arch=sm_90a
 * -O3 -ptx) and embedded by scripts/ptx-corpus.sh.  Each kernel runs on
 * the device's backend under the default and random schedules, sanitizer
 * on and off, and every word is checked against the same C computed here:
 * recursion whose depth differs per thread, a __noinline__ function called
 * from both sides of a divergent branch (inlined, and as a real call with
 * .attribute(.noinline)), a 12-byte structure passed and returned by
 * value, a table of function pointers and virtual functions chosen per
 * thread (CALL through a register, divergent targets), alloca in a kernel
 * and in called functions, and a recursion too deep for the stack:
 * STACK_OVERFLOW.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"
#include "vgpu_hw.h"
#include "ptx_call_corpus.h"

#define WAIT_NS (60ull * 1000000000ull)
#define SCHEDULES 4
#define GRID 2
#define BLOCK 64
#define NT (GRID * BLOCK)

static const char *calls_ptx(void)
{
	for (size_t i = 0; ptx_corpus[i].name; i++)
		if (!strcmp(ptx_corpus[i].name, "calls"))
			return ptx_corpus[i].text;
	return NULL;
}

FIXTURE(call) {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *out, *in;
	struct vgpu_args *args;
	char log[8192];
};

FIXTURE_SETUP(call)
{
	memset(self, 0, sizeof(*self));
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
	ASSERT_NE(NULL, calls_ptx());
}

FIXTURE_TEARDOWN(call)
{
	vgpu_args_free(self->args);
	vgpu_bo_free(self->out);
	vgpu_bo_free(self->in);
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

/* Compile @text, find kernel @name, give it an output buffer of @bytes. */
static int load(struct __test_metadata *_metadata, FIXTURE_DATA(call) *self,
		const char *text, const char *name, size_t bytes)
{
	int ret = vgpu_program_from_ptx(self->dev, text, strlen(text),
					"tests/ptx/nvcc_call/calls.ptx", &self->prog,
					self->log, sizeof(self->log));

	if (ret) {
		TH_LOG("%s", self->log);
		return ret;
	}
	ret = vgpu_program_find_kernel(self->prog, name, &self->k);
	if (!ret)
		ret = vgpu_bo_new(self->dev, bytes, 0, &self->out);
	if (!ret)
		ret = vgpu_args_new(self->k, &self->args);
	if (!ret)
		ret = vgpu_args_set_bo(self->args, 0, self->out, 0);
	return ret;
}

/* Launch GRID x BLOCK under schedule @seed; 0, or the job's error. */
static int run(struct __test_metadata *_metadata, FIXTURE_DATA(call) *self, uint64_t seed,
	       struct vgpu_exception_record *rec)
{
	struct vgpu_launch_config cfg = {
		.grid = { GRID },
		.block = { BLOCK },
		.seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (seed & 1 ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_job *job = NULL;
	int ret = vgpu_kernel_launch(self->k, &cfg, self->args, &job);

	if (ret)
		return ret;
	ret = vgpu_job_wait(job, WAIT_NS);
	if (ret && rec)
		vgpu_job_exception(job, rec);
	else if (ret) {
		char text[4096];

		if (vgpu_job_describe(job, text, sizeof(text)) > 0)
			TH_LOG("seed %llu:\n%s", (unsigned long long)seed, text);
	}
	vgpu_job_free(job);
	return ret;
}

/* Run under every schedule; each time @want(t) for every word @t < @n. */
static void check_all(struct __test_metadata *_metadata, FIXTURE_DATA(call) *self,
		      uint32_t n, int32_t (*want)(uint32_t t, uint32_t arg), uint32_t arg)
{
	int32_t *out = malloc(n * sizeof(*out));

	ASSERT_NE(NULL, out);
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xab, n * sizeof(*out));
		ASSERT_EQ(0, vgpu_bo_write(self->out, 0, out, n * sizeof(*out)));
		ASSERT_EQ(0, run(_metadata, self, s, NULL));
		ASSERT_EQ(0, vgpu_bo_read(self->out, 0, out, n * sizeof(*out)));
		for (uint32_t t = 0; t < n; t++) {
			ASSERT_EQ(want(t, arg), out[t])
				TH_LOG("word %u seed %llu", t, (unsigned long long)s);
		}
	}
	free(out);
}

/* Does kernel @name of the assembly @vgs contain @what? */
static bool kernel_has(const char *vgs, const char *name, const char *what)
{
	char head[64];
	const char *p, *end, *w;

	snprintf(head, sizeof(head), ".kernel %s\n", name);
	p = strstr(vgs, head);
	if (!p)
		return false;
	end = strstr(p + 1, ".kernel ");
	w = strstr(p, what);
	return w && (!end || w < end);
}

/* ---- the host's computation: the same C as calls.cu ---- */

static int32_t fib(int32_t n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int32_t deep(int32_t n)
{
	return n <= 0 ? 0 : deep(n - 1) + n * 3;
}

static int32_t want_recursion(uint32_t t, uint32_t n)
{
	return fib((int32_t)(t % 13)) + deep((int32_t)(t % 7 + n));
}

static int32_t helper(int32_t x, int32_t y)
{
	int32_t r = 0;

	for (int32_t i = 0; i < x; i++)
		r += (int32_t)((uint32_t)i * (uint32_t)y) ^ x;
	return r;
}

static int32_t want_noinline(uint32_t t, uint32_t arg)
{
	int32_t i = (int32_t)t;

	return t & 1 ? helper(i % 19, 3) : helper(i % 23 + 5, 7) + 1;
}

static int32_t want_struct(uint32_t w, uint32_t k)
{
	int32_t t = (int32_t)(w / 3), s[3] = { t, t + 1, t + 2 }, r[3];

	if (t % 3) {
		r[0] = s[1] + (int32_t)k;
		r[1] = s[2] * (int32_t)k;
		r[2] = s[0] ^ (int32_t)k;
		return r[w % 3];
	}
	return s[w % 3];
}

static int32_t in_word(uint32_t t)
{
	return (int32_t)t * 5 - 40;
}

static int32_t want_pointer(uint32_t t, uint32_t arg)
{
	int32_t a = in_word(t), b = (int32_t)t + 1;

	return t % 3 == 0 ? a + b : t % 3 == 1 ? a * b : a - b * 3;
}

static int32_t want_virtual(uint32_t u, uint32_t arg)
{
	int32_t t = (int32_t)u, s = t % 11 + 3;

	if (t % 3 == 0)
		return s * s + t;
	if (t % 3 == 1)
		return s * s / 2 - 2 * t;
	return 3 * s * s + ((t + 7) ^ s);
}

static int32_t want_alloca(uint32_t u, uint32_t n)
{
	int32_t t = (int32_t)u, s = 0, a[5];

	for (int32_t r = 0; r < (int32_t)n; r++) {
		int32_t len = (t + r) % 5 + 1;

		for (int32_t i = 0; i < len; i++)
			a[i] = i * t + r;
		for (int32_t i = 0; i < len; i++)
			s += a[len - 1 - i] ^ i;
	}
	return s;
}

static int32_t alloca_sum(int32_t x)
{
	int32_t s = 0;

	for (int32_t i = 0; i < x; i++)
		s += ((x - 1 - i) * (x - 1 - i) + x) * (i + 1);
	return s;
}

static int32_t alloca_rec(int32_t x)
{
	return x ? alloca_rec(x - 1) + x * alloca_sum(x) : alloca_sum(3);
}

static int32_t want_alloca_fn(uint32_t t, uint32_t arg)
{
	return alloca_sum((int32_t)(t % 9 + 1)) + alloca_rec((int32_t)(t % 4));
}

/* ---- the tests ---- */

TEST_F(call, recursion_depth_per_thread)
{
	ASSERT_EQ(0, load(_metadata, self, calls_ptx(), "call_recursion", NT * 4));
	ASSERT_EQ(0, vgpu_args_set_u32(self->args, 1, 4));
	check_all(_metadata, self, NT, want_recursion, 4);
}

/* deep(2000 + tid): about 130 bytes of stack a level, past the 16 KiB */
TEST_F(call, deep_recursion_is_stack_overflow)
{
	struct vgpu_exception_record rec;

	ASSERT_EQ(0, load(_metadata, self, calls_ptx(), "call_overflow", NT * 4));
	ASSERT_EQ(0, vgpu_args_set_u32(self->args, 1, 2000));
	for (uint64_t s = 0; s < 2; s++) {
		memset(&rec, 0, sizeof(rec));
		ASSERT_EQ(-EIO, run(_metadata, self, s, &rec));
		EXPECT_EQ((uint32_t)VGPU_EXC_STACK_OVERFLOW, rec.code);
		EXPECT_CONTAINS(rec.msg, "call stack overflow");
	}
	/* a depth that fits runs */
	ASSERT_EQ(0, vgpu_args_set_u32(self->args, 1, 20));
	ASSERT_EQ(0, run(_metadata, self, 0, NULL));
}

/*
 * nvcc writes nothing for __noinline__ (the function stays a .func with
 * call.uni): the front end inlines it.  With .attribute(.noinline) added
 * to its definition it is a real call; both give the same results.
 */
TEST_F(call, noinline_from_divergent_branches)
{
	const char *src = calls_ptx(), *def = ".func  (.param .b32 func_retval0) _Z6helperii(";
	const char *at = strstr(src, def);
	size_t n = strlen(src), pre;
	char *text, *vgs = NULL, *vgs2 = NULL;

	ASSERT_NE(NULL, at);
	pre = (size_t)(at - src) + strlen(".func ");
	text = malloc(n + 64);
	ASSERT_NE(NULL, text);
	snprintf(text, n + 64, "%.*s.attribute(.noinline) %s", (int)pre, src, src + pre);
	ASSERT_EQ(0, vgpu_ptx_to_asm(src, n, "calls.ptx", &vgs, self->log, sizeof(self->log)));
	ASSERT_EQ(0, vgpu_ptx_to_asm(text, strlen(text), "calls.ptx", &vgs2, self->log,
				     sizeof(self->log)));
	/* the kernel calls the helper only with the attribute */
	EXPECT_FALSE(kernel_has(vgs, "call_noinline", "CALL R234, F"));
	EXPECT_TRUE(kernel_has(vgs2, "call_noinline", "CALL R234, F"));
	free(vgs);
	free(vgs2);

	ASSERT_EQ(0, load(_metadata, self, src, "call_noinline", NT * 4));
	check_all(_metadata, self, NT, want_noinline, 0);
	vgpu_args_free(self->args);
	vgpu_bo_free(self->out);
	vgpu_program_free(self->prog);
	self->args = NULL;
	self->out = NULL;
	self->prog = NULL;
	ASSERT_EQ(0, load(_metadata, self, text, "call_noinline", NT * 4));
	check_all(_metadata, self, NT, want_noinline, 0);
	free(text);
}

TEST_F(call, struct_of_12_bytes_by_value)
{
	ASSERT_EQ(0, load(_metadata, self, calls_ptx(), "call_struct", NT * 12));
	ASSERT_EQ(0, vgpu_args_set_u32(self->args, 1, 6));
	check_all(_metadata, self, 3 * NT, want_struct, 6);
}

TEST_F(call, function_pointer_table_per_thread)
{
	int32_t in[NT];
	char *vgs = NULL;
	const char *src = calls_ptx();

	for (uint32_t t = 0; t < NT; t++)
		in[t] = in_word(t);
	ASSERT_EQ(0, load(_metadata, self, src, "call_pointer", NT * 4));
	ASSERT_EQ(0, vgpu_bo_new(self->dev, sizeof(in), 0, &self->in));
	ASSERT_EQ(0, vgpu_bo_write(self->in, 0, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_set_bo(self->args, 1, self->in, 0));
	check_all(_metadata, self, NT, want_pointer, 0);
	/* a CALL through a register; the table's entries are .addr data */
	ASSERT_EQ(0, vgpu_ptx_to_asm(src, strlen(src), "calls.ptx", &vgs, self->log,
				     sizeof(self->log)));
	EXPECT_CONTAINS(vgs, ".addr g0+8, F");
	EXPECT_TRUE(kernel_has(vgs, "call_pointer", "CALL R234, R"));
	free(vgs);
}

TEST_F(call, virtual_functions_per_thread)
{
	ASSERT_EQ(0, load(_metadata, self, calls_ptx(), "call_virtual", NT * 4));
	check_all(_metadata, self, NT, want_virtual, 0);
}

TEST_F(call, alloca_per_thread_in_a_loop)
{
	ASSERT_EQ(0, load(_metadata, self, calls_ptx(), "call_alloca", NT * 4));
	ASSERT_EQ(0, vgpu_args_set_u32(self->args, 1, 7));
	check_all(_metadata, self, NT, want_alloca, 7);
}

TEST_F(call, alloca_in_called_functions)
{
	ASSERT_EQ(0, load(_metadata, self, calls_ptx(), "call_alloca_fn", NT * 4));
	check_all(_metadata, self, NT, want_alloca_fn, 0);
}

/* A call through a null function pointer: ILLEGAL_INSTR at address 0. */
TEST_F(call, null_function_pointer)
{
	static const char src[] =
		".version 9.0\n.target sm_90a\n.address_size 64\n"
		".func (.param .b32 r) f(.param .b32 a)\n{\n"
		"\t.reg .b32 %r<2>;\n\tld.param.u32 %r1, [a];\n"
		"\tst.param.b32 [r], %r1;\n\tret;\n}\n"
		".visible .entry k(.param .u64 out)\n{\n"
		"\t.reg .pred %p<2>;\n\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<4>;\n"
		"\tld.param.u64 %rd1, [out];\n\tmov.u64 %rd2, f;\n"
		"\tmov.u32 %r1, %tid.x;\n\tsetp.ne.s32 %p1, %r1, 5;\n"
		"\tselp.b64 %rd3, %rd2, 0, %p1;\n"
		"\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r1;\n"
		"\t.param .b32 retval0;\n"
		"\tprototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);\n"
		"\tcall (retval0), %rd3, (param0), prototype_0;\n"
		"\tld.param.b32 %r2, [retval0+0];\n\t}\n"
		"\tst.global.u32 [%rd1], %r2;\n\tret;\n}\n";
	struct vgpu_exception_record rec;

	/* lane 5 calls address 0, the others f */
	ASSERT_EQ(0, load(_metadata, self, src, "k", 4));
	memset(&rec, 0, sizeof(rec));
	ASSERT_EQ(-EIO, run(_metadata, self, 0, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_ILLEGAL_INSTR, rec.code);
	EXPECT_EQ(0u, rec.pc);
}

/*
 * A called function that needs spills: big() keeps SPILL_N loaded values
 * live at once (more than the 234 registers a function has), then folds
 * them in reverse order; the kernel's values live across the call survive.
 */
#define SPILL_N 260

static size_t spill_ptx(char *b, size_t len)
{
	size_t n = 0;

#define PUT(...) (n += (size_t)snprintf(b + n, n < len ? len - n : 0, __VA_ARGS__))
	PUT(".version 9.0\n.target sm_90a\n.address_size 64\n"
	    ".func .attribute(.noinline) (.param .b32 r) big(.param .b64 p, .param .b32 k)\n{\n"
	    "\t.reg .b32 %%r<%d>;\n\t.reg .b64 %%rd<2>;\n"
	    "\tld.param.u64 %%rd1, [p];\n\tld.param.u32 %%r0, [k];\n", SPILL_N + 2);
	for (int i = 1; i <= SPILL_N; i++)
		PUT("\tld.global.u32 %%r%d, [%%rd1+%d];\n", i, 4 * i);
	PUT("\tmov.u32 %%r%d, %%r0;\n", SPILL_N + 1);
	for (int i = SPILL_N; i > 0; i--)
		PUT("\tmad.lo.s32 %%r%d, %%r%d, 31, %%r%d;\n", SPILL_N + 1, SPILL_N + 1, i);
	PUT("\tst.param.b32 [r], %%r%d;\n\tret;\n}\n"
	    ".visible .entry k(.param .u64 out, .param .u64 in)\n{\n"
	    "\t.reg .b32 %%r<4>;\n\t.reg .b64 %%rd<6>;\n"
	    "\tld.param.u64 %%rd1, [out];\n\tld.param.u64 %%rd2, [in];\n"
	    "\tmov.u32 %%r1, %%tid.x;\n\tmul.wide.u32 %%rd3, %%r1, 4;\n"
	    "\tadd.s64 %%rd4, %%rd2, %%rd3;\n\t{\n\t.param .b64 param0;\n"
	    "\tst.param.b64 [param0+0], %%rd4;\n\t.param .b32 param1;\n"
	    "\tst.param.b32 [param1+0], %%r1;\n\t.param .b32 retval0;\n"
	    "\tcall.uni (retval0), big, (param0, param1);\n"
	    "\tld.param.b32 %%r2, [retval0+0];\n\t}\n"
	    "\tadd.s64 %%rd5, %%rd1, %%rd3;\n\tst.global.u32 [%%rd5], %%r2;\n\tret;\n}\n",
	    SPILL_N + 1);
#undef PUT
	return n;
}

static uint32_t spill_in[BLOCK + SPILL_N + 1];

static int32_t want_spill(uint32_t t, uint32_t arg)
{
	uint32_t r = t;

	for (int i = SPILL_N; i > 0; i--)
		r = r * 31 + spill_in[t + (uint32_t)i];
	return (int32_t)r;
}

TEST_F(call, called_function_with_spills)
{
	size_t len = spill_ptx(NULL, 0) + 1;
	char *src = malloc(len), *vgs = NULL;

	ASSERT_NE(NULL, src);
	spill_ptx(src, len);
	for (uint32_t i = 0; i < BLOCK + SPILL_N + 1; i++)
		spill_in[i] = i * 2654435761u;
	ASSERT_EQ(0, load(_metadata, self, src, "k", BLOCK * 4));
	ASSERT_EQ(0, vgpu_bo_new(self->dev, sizeof(spill_in), 0, &self->in));
	ASSERT_EQ(0, vgpu_bo_write(self->in, 0, spill_in, sizeof(spill_in)));
	ASSERT_EQ(0, vgpu_args_set_bo(self->args, 1, self->in, 0));
	/* GRID CTAs of BLOCK threads all read from tid: compare one CTA's words */
	check_all(_metadata, self, BLOCK, want_spill, 0);
	/* it is a real call, and it spills (reloads through the scratch R239..) */
	ASSERT_EQ(0, vgpu_ptx_to_asm(src, strlen(src), "spill.ptx", &vgs, self->log,
				     sizeof(self->log)));
	EXPECT_TRUE(kernel_has(vgs, "k", "CALL R234, F"));
	EXPECT_CONTAINS(vgs, "R239");
	free(vgs);
	free(src);
}

/*
 * alloca aligned past 16 (ptxas takes any power of two): a block of a
 * register size (40 + 4 tid) aligned to 256 and one of 24 bytes aligned
 * to 64, after a 16-aligned block of 16..64 bytes whose word they must
 * not touch; each thread writes its first and last words and reads them
 * back.  A word:
 * 4 x (tid + 1), 100000 for the untouched first block, 1000000 per
 * misaligned byte of the two pointers.
 */
static const char alloca_aligned_ptx[] =
	".version 8.5\n"
	".target sm_90a\n"
	".address_size 64\n"
	".visible .entry k(.param .u64 out)\n"
	"{\n"
	"\t.reg .pred %p<2>;\n"
	"\t.reg .b32 %r<14>;\n"
	"\t.reg .b64 %rd<10>;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tand.b32 %r2, %r1, 3;\n"
	"\tadd.u32 %r2, %r2, 1;\n"
	"\tshl.b32 %r2, %r2, 4;\n"
	"\tcvt.u64.u32 %rd1, %r2;\n"
	"\talloca.u64 %rd2, %rd1, 16;\n"
	"\tmov.u32 %r3, 23130;\n"
	"\tst.local.u32 [%rd2], %r3;\n"
	"\tshl.b32 %r4, %r1, 2;\n"
	"\tadd.u32 %r4, %r4, 40;\n"
	"\tcvt.u64.u32 %rd3, %r4;\n"
	"\talloca.u64 %rd4, %rd3, 256;\n"
	"\talloca.u64 %rd5, 24, 64;\n"
	"\tadd.u32 %r5, %r1, 1;\n"
	"\tst.local.u32 [%rd4], %r5;\n"
	"\tadd.u64 %rd6, %rd4, %rd3;\n"
	"\tsub.u64 %rd6, %rd6, 4;\n"
	"\tst.local.u32 [%rd6], %r5;\n"
	"\tst.local.u32 [%rd5], %r5;\n"
	"\tst.local.u32 [%rd5+20], %r5;\n"
	"\tld.local.u32 %r6, [%rd4];\n"
	"\tld.local.u32 %r7, [%rd6];\n"
	"\tld.local.u32 %r8, [%rd5];\n"
	"\tld.local.u32 %r9, [%rd5+20];\n"
	"\tadd.u32 %r10, %r6, %r7;\n"
	"\tadd.u32 %r10, %r10, %r8;\n"
	"\tadd.u32 %r10, %r10, %r9;\n"
	"\tld.local.u32 %r11, [%rd2];\n"
	"\tsetp.eq.u32 %p1, %r11, 23130;\n"
	"\tselp.u32 %r11, 100000, 0, %p1;\n"
	"\tadd.u32 %r10, %r10, %r11;\n"
	"\tcvt.u32.u64 %r12, %rd4;\n"
	"\tand.b32 %r12, %r12, 255;\n"
	"\tcvt.u32.u64 %r13, %rd5;\n"
	"\tand.b32 %r13, %r13, 63;\n"
	"\tadd.u32 %r12, %r12, %r13;\n"
	"\tmul.lo.u32 %r12, %r12, 1000000;\n"
	"\tadd.u32 %r10, %r10, %r12;\n"
	"\tld.param.u64 %rd7, [out];\n"
	"\tcvta.to.global.u64 %rd8, %rd7;\n"
	"\tmul.wide.u32 %rd9, %r1, 4;\n"
	"\tadd.u64 %rd8, %rd8, %rd9;\n"
	"\tst.global.u32 [%rd8], %r10;\n"
	"\tret;\n"
	"}\n";

static int32_t want_alloca_aligned(uint32_t t, uint32_t arg)
{
	return 100000 + 4 * (int32_t)(t + 1);
}

TEST_F(call, alloca_aligned_past_16)
{
	char *vgs = NULL;

	ASSERT_EQ(0, load(_metadata, self, alloca_aligned_ptx, "k", BLOCK * 4));
	check_all(_metadata, self, BLOCK, want_alloca_aligned, 0);
	/* the pointers rounded up: LOP.AND with ~255 and ~63 */
	ASSERT_EQ(0, vgpu_ptx_to_asm(alloca_aligned_ptx, strlen(alloca_aligned_ptx), "al.ptx",
				     &vgs, self->log, sizeof(self->log)));
	EXPECT_TRUE(kernel_has(vgs, "k", "0xffffff00"));
	EXPECT_TRUE(kernel_has(vgs, "k", "0xffffffc0"));
	free(vgs);
}

/* @src does not compile: -EINVAL, the log names @where and says @what */
static void expect_located_error(struct __test_metadata *_metadata, FIXTURE_DATA(call) *self,
				 const char *src, const char *file, const char *where,
				 const char *what)
{
	EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, src, strlen(src), file, &self->prog,
						 self->log, sizeof(self->log)));
	EXPECT_CONTAINS(self->log, where);
	EXPECT_CONTAINS(self->log, what);
}

/* Prototypes and targets are checked where they are written. */
TEST_F(call, bad_calls_are_located_errors)
{
	static const char *const bad[][2] = {
		{ "call f, (param0), prototype_0;", "a prototype after a direct call" },
		{ "call %r1, (param0), prototype_0;", "an indirect call needs a 64-bit register" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char src[1024];

		snprintf(src, sizeof(src),
			 ".version 9.0\n.target sm_90a\n.address_size 64\n"
			 ".func f(.param .b32 a)\n{\n\tret;\n}\n"
			 ".visible .entry k()\n{\n\t.reg .b32 %%r<2>;\n"
			 "\t{\n\t.param .b32 param0;\n\tst.param.b32 [param0+0], 1;\n"
			 "\t%s\n\t}\n\tret;\n}\n", bad[i][0]);
		expect_located_error(_metadata, self, src, "bad.ptx", "bad.ptx:14:", bad[i][1]);
	}
}

/* alloca's alignment: a power of two, at most the stack's 16 KiB */
TEST_F(call, alloca_bad_alignment_is_a_located_error)
{
	static const char *const bad[][2] = {
		{ "24", "alloca's alignment is a power of two" },
		{ "32768", "alloca aligned to 32768 bytes (the stack has 16384)" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char src[512];

		snprintf(src, sizeof(src),
			 ".version 8.5\n.target sm_90a\n.address_size 64\n"
			 ".visible .entry k()\n{\n\t.reg .b64 %%rd<2>;\n"
			 "\talloca.u64 %%rd1, 32, %s;\n\tret;\n}\n", bad[i][0]);
		expect_located_error(_metadata, self, src, "al.ptx", "al.ptx:7:", bad[i][1]);
	}
}

TEST_HARNESS_MAIN
