// SPDX-License-Identifier: MIT
/*
 * Device assert as nvcc writes it (__assertfail), on the sim backend:
 * the failing thread prints CUDA's line through the printf buffer,
 * "FILE:LINE: FUNCTION: block: [x,y,z], thread: [x,y,z] Assertion `MSG`
 * failed.", and the launch stops with the exception ASSERT; an assert
 * that holds prints nothing; printf and assert in a function that is
 * called rather than inlined.  The PTX is nvcc 13.0's (-arch=sm_90a).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"
#include "vgpu_hw.h"

#define SCHEDULES 6

PTX_FIXTURE(asserts)

#define HEAD ".version 9.0\n.target sm_90a\n.address_size 64\n\n"

/*
 * nvcc 13.0 for
 *   __global__ void k(int *out, int bad)
 *   { int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
 *     assert(t != bad || blockIdx.y != 2); out[t] = t; }
 * in a.cu (the assert on line 5).
 */
static const char assert_ptx[] =
	HEAD
	".extern .func __assertfail\n(\n\t.param .b64 __assertfail_param_0,\n"
	"\t.param .b64 __assertfail_param_1,\n\t.param .b32 __assertfail_param_2,\n"
	"\t.param .b64 __assertfail_param_3,\n\t.param .b64 __assertfail_param_4\n)\n;\n"
	".global .align 1 .b8 __unnamed_1[19] = {118, 111, 105, 100, 32, 107, 40, 105, 110, "
	"116, 32, 42, 44, 32, 105, 110, 116, 41};\n"
	".global .align 1 .b8 $str[28] = {116, 32, 33, 61, 32, 98, 97, 100, 32, 124, 124, 32, "
	"98, 108, 111, 99, 107, 73, 100, 120, 46, 121, 32, 33, 61, 32, 50};\n"
	".global .align 1 .b8 $str$1[5] = {97, 46, 99, 117};\n\n"
	".visible .entry _Z1kPii(\n\t.param .u64 _Z1kPii_param_0,\n"
	"\t.param .u32 _Z1kPii_param_1\n)\n{\n"
	"\t.reg .pred %p<4>;\n\t.reg .b32 %r<10>;\n\t.reg .b64 %rd<11>;\n\n"
	"\tld.param.u64 %rd1, [_Z1kPii_param_0];\n\tld.param.u32 %r2, [_Z1kPii_param_1];\n"
	"\tmov.u32 %r3, %tid.z;\n\tmov.u32 %r4, %ntid.y;\n\tmov.u32 %r5, %tid.y;\n"
	"\tmad.lo.s32 %r6, %r4, %r3, %r5;\n\tmov.u32 %r7, %ntid.x;\n\tmov.u32 %r8, %tid.x;\n"
	"\tmad.lo.s32 %r1, %r6, %r7, %r8;\n\tsetp.ne.s32 %p1, %r1, %r2;\n"
	"\tmov.u32 %r9, %ctaid.y;\n\tsetp.ne.s32 %p2, %r9, 2;\n\tor.pred %p3, %p2, %p1;\n"
	"\t@%p3 bra $L__BB0_2;\n\n"
	"\tmov.u64 %rd2, $str;\n\tcvta.global.u64 %rd3, %rd2;\n"
	"\tmov.u64 %rd4, $str$1;\n\tcvta.global.u64 %rd5, %rd4;\n"
	"\tmov.u64 %rd6, __unnamed_1;\n\tcvta.global.u64 %rd7, %rd6;\n"
	"\t{ // callseq 0, 0\n\t.reg .b32 temp_param_reg;\n"
	"\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd3;\n"
	"\t.param .b64 param1;\n\tst.param.b64 [param1+0], %rd5;\n"
	"\t.param .b32 param2;\n\tst.param.b32 [param2+0], 5;\n"
	"\t.param .b64 param3;\n\tst.param.b64 [param3+0], %rd7;\n"
	"\t.param .b64 param4;\n\tst.param.b64 [param4+0], 1;\n"
	"\tcall.uni \n\t__assertfail, \n\t(\n\tparam0, \n\tparam1, \n\tparam2, \n\tparam3, \n"
	"\tparam4\n\t);\n\t} // callseq 0\n\n"
	"$L__BB0_2:\n\tcvta.to.global.u64 %rd8, %rd1;\n\tmul.wide.s32 %rd9, %r1, 4;\n"
	"\tadd.s64 %rd10, %rd8, %rd9;\n\tst.global.u32 [%rd10], %r1;\n\tret;\n\n}\n";

#define NT 64 /* threads of a block (8, 4, 2) */

/* Launch the assert kernel on a grid (1, 3, 1) of blocks (8, 4, 2). */
static int run_assert(struct __test_metadata *_metadata, FIXTURE_DATA(asserts) *self,
		      int32_t bad, uint64_t seed, struct vgpu_job **job)
{
	struct vgpu_launch_config cfg = {
		.grid = { 1, 3, 1 },
		.block = { 8, 4, 2 },
		.seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (seed & 1 ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_args *args = NULL;
	int ret;

	if (!self->k) {
		ret = ptx_load(_metadata, self, "a.ptx", assert_ptx, "_Z1kPii");
		if (!ret)
			ret = buf(self, 0, NULL, NT * 4);
		if (ret)
			return ret;
	}
	ret = vgpu_args_new(self->k, &args);
	if (!ret)
		ret = vgpu_args_set_bo(args, 0, self->bo[0], 0);
	if (!ret)
		ret = vgpu_args_set_u32(args, 1, (uint32_t)bad);
	if (!ret)
		ret = vgpu_kernel_launch(self->k, &cfg, args, job);
	vgpu_args_free(args);
	return ret ? ret : vgpu_job_wait(*job, WAIT_NS);
}

/* An assert that holds: no output, no exception, the stores done */
TEST_F(asserts, assert_that_passes)
{
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		struct vgpu_job *job = NULL;
		int32_t out[NT];

		ASSERT_EQ(0, run_assert(_metadata, self, -1, s, &job));
		EXPECT_EQ(NULL, vgpu_job_printf(job));
		vgpu_job_free(job);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (int t = 0; t < NT; t++)
			EXPECT_EQ(t, out[t]);
	}
}

/*
 * The assert fails in one thread, tid (5, 2, 1) = 53 of block (0, 2, 0):
 * it prints CUDA's line and the launch stops with ASSERT, raised by that
 * lane alone (warp 1, lane 21).
 */
TEST_F(asserts, assert_that_fails_in_one_thread)
{
	static const char want[] = "a.cu:5: void k(int *, int): block: [0,2,0], thread: [5,2,1] "
				   "Assertion `t != bad || blockIdx.y != 2` failed.\n";

	for (uint64_t s = 0; s < SCHEDULES; s++) {
		struct vgpu_exception_record rec;
		struct vgpu_job *job = NULL;

		ASSERT_EQ(-EIO, run_assert(_metadata, self, 53, s, &job));
		ASSERT_NE(NULL, vgpu_job_printf(job));
		EXPECT_STREQ(want, vgpu_job_printf(job)) TH_LOG("seed %llu", (unsigned long long)s);
		ASSERT_EQ(0, vgpu_job_exception(job, &rec));
		EXPECT_EQ((uint32_t)VGPU_EXC_ASSERT, rec.code);
		EXPECT_EQ(0u, rec.cta[0]);
		EXPECT_EQ(2u, rec.cta[1]);
		EXPECT_EQ(0u, rec.cta[2]);
		EXPECT_EQ(1u, rec.warp);
		EXPECT_EQ(1u << 21, rec.lane_mask);
		EXPECT_STREQ("ASSERT", vgpu_exception_name(rec.code));
		EXPECT_CONTAINS(rec.msg, "assertion failed");
		vgpu_job_free(job);
	}
}

/*
 * nvcc 13.0 for
 *   __device__ __noinline__ int check(int t, int bad)
 *   { assert(t != bad); printf("t %d\n", t); return t * 2; }
 *   __global__ void k(int *out, int bad) { out[threadIdx.x] = check(threadIdx.x, bad); }
 * in b.cu, with .attribute(.noinline) added so that the call is a real
 * one (nvcc writes none): the kernel keeps the printf buffer's address
 * for the function (ptx_call.c).
 */
static const char called_ptx[] =
	HEAD
	".extern .func  (.param .b32 func_retval0) vprintf\n(\n\t.param .b64 vprintf_param_0,\n"
	"\t.param .b64 vprintf_param_1\n)\n;\n"
	".extern .func __assertfail\n(\n\t.param .b64 __assertfail_param_0,\n"
	"\t.param .b64 __assertfail_param_1,\n\t.param .b32 __assertfail_param_2,\n"
	"\t.param .b64 __assertfail_param_3,\n\t.param .b64 __assertfail_param_4\n)\n;\n"
	".global .align 1 .b8 __unnamed_1[20] = {105, 110, 116, 32, 99, 104, 101, 99, 107, 40, "
	"105, 110, 116, 44, 32, 105, 110, 116, 41};\n"
	".global .align 1 .b8 $str[9] = {116, 32, 33, 61, 32, 98, 97, 100};\n"
	".global .align 1 .b8 $str$1[5] = {98, 46, 99, 117};\n"
	".global .align 1 .b8 $str$2[6] = {116, 32, 37, 100, 10};\n\n"
	".func .attribute(.noinline) (.param .b32 func_retval0) _Z5checkii(\n"
	"\t.param .b32 _Z5checkii_param_0,\n\t.param .b32 _Z5checkii_param_1\n)\n{\n"
	"\t.local .align 8 .b8 __local_depot0[8];\n\t.reg .b64 %SP;\n\t.reg .b64 %SPL;\n"
	"\t.reg .pred %p<2>;\n\t.reg .b32 %r<5>;\n\t.reg .b64 %rd<11>;\n\n"
	"\tmov.u64 %SPL, __local_depot0;\n\tcvta.local.u64 %SP, %SPL;\n"
	"\tld.param.u32 %r1, [_Z5checkii_param_0];\n\tld.param.u32 %r2, [_Z5checkii_param_1];\n"
	"\tsetp.ne.s32 %p1, %r1, %r2;\n\t@%p1 bra $L__BB0_2;\n\n"
	"\tmov.u64 %rd1, $str;\n\tcvta.global.u64 %rd2, %rd1;\n"
	"\tmov.u64 %rd3, $str$1;\n\tcvta.global.u64 %rd4, %rd3;\n"
	"\tmov.u64 %rd5, __unnamed_1;\n\tcvta.global.u64 %rd6, %rd5;\n"
	"\t{ // callseq 0, 0\n\t.reg .b32 temp_param_reg;\n"
	"\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd2;\n"
	"\t.param .b64 param1;\n\tst.param.b64 [param1+0], %rd4;\n"
	"\t.param .b32 param2;\n\tst.param.b32 [param2+0], 5;\n"
	"\t.param .b64 param3;\n\tst.param.b64 [param3+0], %rd6;\n"
	"\t.param .b64 param4;\n\tst.param.b64 [param4+0], 1;\n"
	"\tcall.uni \n\t__assertfail, \n\t(\n\tparam0, \n\tparam1, \n\tparam2, \n\tparam3, \n"
	"\tparam4\n\t);\n\t} // callseq 0\n\n"
	"$L__BB0_2:\n\tadd.u64 %rd7, %SP, 0;\n\tadd.u64 %rd8, %SPL, 0;\n"
	"\tst.local.u32 [%rd8], %r1;\n\tmov.u64 %rd9, $str$2;\n\tcvta.global.u64 %rd10, %rd9;\n"
	"\t{ // callseq 1, 0\n\t.reg .b32 temp_param_reg;\n"
	"\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd10;\n"
	"\t.param .b64 param1;\n\tst.param.b64 [param1+0], %rd7;\n\t.param .b32 retval0;\n"
	"\tcall.uni (retval0), \n\tvprintf, \n\t(\n\tparam0, \n\tparam1\n\t);\n"
	"\tld.param.b32 %r3, [retval0+0];\n\t} // callseq 1\n"
	"\tshl.b32 %r4, %r1, 1;\n\tst.param.b32 [func_retval0+0], %r4;\n\tret;\n\n}\n"
	".visible .entry _Z1kPii(\n\t.param .u64 _Z1kPii_param_0,\n"
	"\t.param .u32 _Z1kPii_param_1\n)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<5>;\n\n"
	"\tld.param.u64 %rd1, [_Z1kPii_param_0];\n\tld.param.u32 %r1, [_Z1kPii_param_1];\n"
	"\tcvta.to.global.u64 %rd2, %rd1;\n\tmov.u32 %r2, %tid.x;\n"
	"\t{ // callseq 2, 0\n\t.reg .b32 temp_param_reg;\n"
	"\t.param .b32 param0;\n\tst.param.b32 [param0+0], %r2;\n"
	"\t.param .b32 param1;\n\tst.param.b32 [param1+0], %r1;\n\t.param .b32 retval0;\n"
	"\tcall.uni (retval0), \n\t_Z5checkii, \n\t(\n\tparam0, \n\tparam1\n\t);\n"
	"\tld.param.b32 %r3, [retval0+0];\n\t} // callseq 2\n"
	"\tmul.wide.u32 %rd3, %r2, 4;\n\tadd.s64 %rd4, %rd2, %rd3;\n"
	"\tst.global.u32 [%rd4], %r3;\n\tret;\n\n}\n";

/* printf and assert in a function called for real: both print, the
 * failed assert stops the launch with ASSERT */
TEST_F(asserts, assert_in_a_called_function)
{
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 4 } };
	struct vgpu_exception_record rec;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	int32_t out[4];

	ASSERT_EQ(0, ptx_load(_metadata, self, "b.ptx", called_ptx, "_Z1kPii"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, (uint32_t)-1));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	EXPECT_STREQ("t 0\nt 1\nt 2\nt 3\n", vgpu_job_printf(job));
	vgpu_job_free(job);
	job = NULL;
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (int t = 0; t < 4; t++)
		EXPECT_EQ(2 * t, out[t]);
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, 2));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	ASSERT_EQ(-EIO, vgpu_job_wait(job, WAIT_NS));
	ASSERT_NE(NULL, vgpu_job_printf(job));
	EXPECT_CONTAINS(vgpu_job_printf(job), "b.cu:5: int check(int, int): block: [0,0,0], "
					      "thread: [2,0,0] Assertion `t != bad` failed.\n");
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_ASSERT, rec.code);
	EXPECT_EQ(1u << 2, rec.lane_mask);
	vgpu_job_free(job);
	vgpu_args_free(args);
}

/* A guarded call of vprintf: a record for the guard's lanes alone */
static const char guarded_ptx[] =
	HEAD
	".extern .func (.param .b32 func_retval0) vprintf\n"
	"(\n\t.param .b64 vprintf_param_0,\n\t.param .b64 vprintf_param_1\n)\n;\n"
	".global .align 1 .b8 $str[4] = {104, 105, 10};\n"
	".visible .entry g()\n{\n\t.reg .pred %p<3>;\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n"
	"\tmov.u32 %r1, %tid.x;\n\tsetp.ge.u32 %p2, %r1, 3;\n\tsetp.lt.u32 %p1, %r1, 2;\n"
	"\tmov.u64 %rd1, $str;\n\tcvta.global.u64 %rd2, %rd1;\n\tmov.u64 %rd3, 0;\n"
	"\t{\n\t.param .b64 param0;\n\tst.param.b64 [param0+0], %rd2;\n"
	"\t.param .b64 param1;\n\tst.param.b64 [param1+0], %rd3;\n\t.param .b32 retval0;\n"
	"\t@%p1 call.uni (retval0), vprintf, (param0, param1);\n"
	"\t@%p2 call.uni (retval0), vprintf, (param0, param1);\n"
	"\tld.param.b32 %r2, [retval0+0];\n\t}\n\tret;\n}\n";

TEST_F(asserts, guarded_printf)
{
	char want[64 * 3 + 1] = "hi\nhi\n";
	struct vgpu_job *job = NULL;
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 64 } };

	for (int t = 3; t < 64; t++)
		strcat(want, "hi\n");
	ASSERT_EQ(0, ptx_load(_metadata, self, "g.ptx", guarded_ptx, "g"));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, NULL, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	EXPECT_STREQ(want, vgpu_job_printf(job));
	vgpu_job_free(job);
}

TEST_HARNESS_MAIN
