// SPDX-License-Identifier: MIT
/*
 * multimem.st / .red / .ld_reduce on the sim backend.  vGPU has no
 * multicast objects, so every address is a unicast one; an H200 without
 * multicast (tests/cuda/real-gpu/multimem-h200-2026-11-30) stores and
 * reduces there for .st and .red and faults on .ld_reduce
 * (cudaErrorIllegalAddress), and so does vGPU: the launch stops with a
 * global fault at the address, reason VGPU_MMU_F_NOT_MULTICAST.  The
 * forms ptxas 13.0 refuses for sm_90a get a located error.
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
#define NT 64

PTX_FIXTURE(multimem)

#define HEAD ".version 9.0\n.target sm_90a\n.address_size 64\n\n"

/*
 * Thread t of two warps: words[t] = 3t by multimem.st.u32, a 16-byte row
 * per thread of f32 (t, t+0.5, -t, 2t) by .v4.f32, a 64-bit word by .b64,
 * two bf16 by .v2.bf16; then into counters at acc: +1 (add.u32), max of
 * t (max.s64), xor of 1 << (t % 32) (xor.b32), +0.25 (add.f32), +1.0 per
 * half of a .v2.f16 add, min of (t, -t) on .v2.bf16x2 elements.
 */
static const char st_red_ptx[] =
	HEAD
	".visible .entry k(.param .u64 out, .param .u64 acc)\n{\n"
	"\t.reg .b32 %r<12>;\n\t.reg .b64 %rd<12>;\n\t.reg .f32 %f<6>;\n\t.reg .b16 %h<6>;\n"
	"\tld.param.u64 %rd1, [out];\n\tld.param.u64 %rd2, [acc];\n"
	"\tmov.u32 %r1, %tid.x;\n\tmul.lo.u32 %r2, %r1, 3;\n"
	"\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd4, %rd1, %rd3;\n"
	"\tmultimem.st.relaxed.sys.global.u32 [%rd4], %r2;\n"
	/* rows of 16 bytes at out + 256 */
	"\tmul.wide.u32 %rd5, %r1, 16;\n\tadd.s64 %rd6, %rd1, %rd5;\n"
	"\tcvt.rn.f32.u32 %f1, %r1;\n\tadd.f32 %f2, %f1, 0f3F000000;\n\tneg.f32 %f3, %f1;\n"
	"\tadd.f32 %f4, %f1, %f1;\n"
	"\tmultimem.st.release.gpu.global.v4.f32 [%rd6+256], {%f1, %f2, %f3, %f4};\n"
	/* 64-bit words at out + 1280: (t << 32) | 7 */
	"\tmul.wide.u32 %rd7, %r1, 8;\n\tadd.s64 %rd8, %rd1, %rd7;\n"
	"\tcvt.u64.u32 %rd9, %r1;\n\tshl.b64 %rd9, %rd9, 32;\n\tor.b64 %rd9, %rd9, 7;\n"
	"\tmultimem.st.weak.global.b64 [%rd8+1280], %rd9;\n"
	/* two bf16 at out + 1792 + 4t: 1.0 (0x3f80) and 2.0 (0x4000) */
	"\tmov.b16 %h1, 0x3f80;\n\tmov.b16 %h2, 0x4000;\n"
	"\tmultimem.st.relaxed.cta.global.v2.bf16 [%rd4+1792], {%h1, %h2};\n"
	/* the counters */
	"\tmultimem.red.relaxed.gpu.global.add.u32 [%rd2], 1;\n"
	"\tcvt.u64.u32 %rd10, %r1;\n"
	"\tmultimem.red.release.sys.global.max.s64 [%rd2+8], %rd10;\n"
	"\tand.b32 %r3, %r1, 31;\n\tmov.u32 %r4, 1;\n\tshl.b32 %r5, %r4, %r3;\n"
	"\tmultimem.red.global.xor.b32 [%rd2+16], %r5;\n"
	"\tmultimem.red.relaxed.cluster.global.add.f32 [%rd2+20], 0f3E800000;\n"
	"\tmov.b16 %h3, 0x3c00;\n"
	"\tmultimem.red.relaxed.sys.global.add.v2.f16 [%rd2+24], {%h3, %h3};\n"
	/* bf16x2 min: (t, -t) as bf16 (the f32's high half) */
	"\tmov.b32 %r6, %f1;\n\tshr.u32 %r6, %r6, 16;\n\tmov.b32 %r7, %f3;\n"
	"\tand.b32 %r7, %r7, 0xffff0000;\n\tor.b32 %r8, %r6, %r7;\n"
	"\tmultimem.red.relaxed.sys.global.min.v2.bf16x2 [%rd2+28], {%r8, %r8};\n"
	"\tret;\n}\n";

static float bf16f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

TEST_F(multimem, st_and_red_act_on_the_unicast_address)
{
	ASSERT_EQ(0, ptx_load(_metadata, self, "mm.ptx", st_red_ptx, "k"));
	ASSERT_EQ(0, buf(self, 0, NULL, 2048));
	ASSERT_EQ(0, buf(self, 1, NULL, 64));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		uint8_t zero[2048] = { 0 }, out[2048];
		uint32_t acc[9], init[9] = { 0 };
		struct vgpu_args *args = NULL;
		float fsum;

		/* the min's start: +inf in both halves of both words */
		init[7] = init[8] = 0x7f807f80;
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, zero, sizeof(zero)));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, init, sizeof(init)));
		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
		ASSERT_EQ(0, run(_metadata, self, args, 1, NT, s));
		vgpu_args_free(args);
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, acc, sizeof(acc)));
		for (uint32_t t = 0; t < NT; t++) {
			uint32_t w;
			float f[4];
			uint64_t d;
			uint16_t h[2];

			memcpy(&w, out + 4 * t, 4);
			EXPECT_EQ(3 * t, w);
			memcpy(f, out + 256 + 16 * t, 16);
			EXPECT_EQ((float)t, f[0]);
			EXPECT_EQ((float)t + 0.5f, f[1]);
			EXPECT_EQ(-(float)t, f[2]);
			EXPECT_EQ(2.0f * (float)t, f[3]);
			memcpy(&d, out + 1280 + 8 * t, 8);
			EXPECT_EQ(((uint64_t)t << 32) | 7, d);
			memcpy(h, out + 1792 + 4 * t, 4);
			EXPECT_EQ(0x3f80, h[0]);
			EXPECT_EQ(0x4000, h[1]);
		}
		EXPECT_EQ((uint32_t)NT, acc[0]);
		EXPECT_EQ((uint32_t)(NT - 1), acc[2]); /* max.s64, low word */
		EXPECT_EQ(0u, acc[3]);
		EXPECT_EQ(0u, acc[4]); /* every bit flipped twice */
		memcpy(&fsum, &acc[5], 4);
		EXPECT_EQ(0.25f * NT, fsum);
		EXPECT_EQ(0x54005400u, acc[6]); /* 64.0 in both f16 halves */
		/* min over t of (t, -t): (0, -63) in both words */
		EXPECT_EQ(0.0f, bf16f((uint16_t)acc[7]));
		EXPECT_EQ(-63.0f, bf16f((uint16_t)(acc[7] >> 16)));
		EXPECT_EQ(acc[7], acc[8]);
	}
}

/* multimem.ld_reduce.THIS [a + 16] of thread t: a global fault at a + 16 */
static const char ld_fmt[] =
	HEAD
	".visible .entry k(.param .u64 out)\n{\n"
	"\t.reg .b32 %%r<9>;\n\t.reg .b64 %%rd<4>;\n\t.reg .f32 %%f<5>;\n"
	"\tld.param.u64 %%rd1, [out];\n\tmov.u32 %%r1, %%tid.x;\n"
	"\tst.global.u32 [%%rd1], 5;\n"
	"\tmultimem.ld_reduce.%s %s, [%%rd1+16];\n"
	"\tst.global.u32 [%%rd1+4], %s;\n\tret;\n}\n";

TEST_F(multimem, ld_reduce_faults_as_on_a_gpu_without_multicast)
{
	static const struct {
		const char *form, *dst, *use;
	} forms[] = {
		{ "relaxed.sys.global.add.u32", "%r2", "%r2" },
		{ "acquire.gpu.global.xor.b64", "%rd2", "%r1" },
		{ "weak.global.min.s32", "%r2", "%r2" },
		{ "global.add.v4.f32", "{%f1, %f2, %f3, %f4}", "%r1" },
		{ "relaxed.cta.global.max.acc::f32.v4.bf16x2", "{%r2, %r3, %r4, %r5}", "%r3" },
		{ "add.u64", "%rd2", "%r1" }, /* generic */
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char text[2048];

		snprintf(text, sizeof(text), ld_fmt, forms[i].form, forms[i].dst, forms[i].use);
		vgpu_program_free(self->prog);
		self->prog = NULL;
		ASSERT_EQ(0, ptx_load(_metadata, self, "ld.ptx", text, "k"));
		for (uint64_t s = 0; s < 3; s++) {
			struct vgpu_launch_config cfg = {
				.grid = { 2 }, .block = { 40 }, .seed = s,
				.flags = s ? VGPU_LAUNCH_RANDOM_SCHED : 0,
			};
			struct vgpu_exception_record rec;
			struct vgpu_args *args = NULL;
			struct vgpu_job *job = NULL;
			uint32_t w[2];
			uint64_t va;

			vgpu_bo_free(self->bo[0]);
			self->bo[0] = NULL;
			ASSERT_EQ(0, buf(self, 0, NULL, 64));
			va = vgpu_bo_gpu_address(self->bo[0]);
			ASSERT_EQ(0, vgpu_args_new(self->k, &args));
			ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
			ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
			vgpu_args_free(args);
			EXPECT_EQ(-EFAULT, vgpu_job_wait(job, WAIT_NS)) TH_LOG("%s", forms[i].form);
			ASSERT_EQ(0, vgpu_job_exception(job, &rec));
			EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, rec.code);
			EXPECT_EQ(va + 16, rec.addr);
			EXPECT_EQ(VGPU_MMU_ACC_READ, rec.info[0]);
			EXPECT_EQ(VGPU_MMU_F_NOT_MULTICAST, rec.info[1]);
			EXPECT_NE(NULL, strstr(rec.msg, "not a multicast address"));
			vgpu_job_free(job);
			/* the store before ran, the one after did not */
			ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, w, sizeof(w)));
			EXPECT_EQ(5u, w[0]);
			EXPECT_EQ(0u, w[1]);
		}
	}
}

/* Forms ptxas 13.0 refuses for sm_90a: each a located error naming it */
TEST_F(multimem, forms_ptxas_refuses_are_errors)
{
	static const struct {
		const char *insn, *msg;
	} bad[] = {
		{ "multimem.ld_reduce.global.add.s64 %rd2, [%rd1];", "multimem.ld_reduce.add of .s64" },
		{ "multimem.ld_reduce.global.add.b32 %r2, [%rd1];", "multimem.ld_reduce.add of .b32" },
		{ "multimem.ld_reduce.global.min.f32 %f1, [%rd1];", "multimem.ld_reduce.min of .f32" },
		{ "multimem.ld_reduce.global.and.u32 %r2, [%rd1];", "multimem.ld_reduce.and of .u32" },
		{ "multimem.ld_reduce.global.add.f16 %h1, [%rd1];", "is not 32, 64 or 128 bits" },
		{ "multimem.ld_reduce.global.add.acc::f32.f32 %f1, [%rd1];", ".acc::f32 with .f32" },
		{ "multimem.ld_reduce.global.add.acc::f16.v2.f16 {%h1, %h2}, [%rd1];",
		  "needs sm_100a" },
		{ "multimem.red.global.min.f32 [%rd1], %f1;", "multimem.red.min of .f32" },
		{ "multimem.red.global.inc.u32 [%rd1], %r1;", "unexpected modifier .inc" },
		{ "multimem.red.weak.global.add.u32 [%rd1], %r1;", "multimem.red.weak is not a form" },
		{ "multimem.red.global.add.v2.u32 [%rd1], {%r1, %r2};", "a vector qualifier with .u32" },
		{ "multimem.red.shared.add.u32 [%rd1], %r1;", "the state space is .global" },
		{ "multimem.st.relaxed.global.b32 [%rd1], %r1;", "multimem.st.relaxed needs a scope" },
		{ "multimem.st.global.v2.f64 [%rd1], {%fd1, %fd2};", ".f64 with .v2" },
		{ "multimem.st.global.e5m2x4 [%rd1], %r1;", "with .e5m2x4 needs sm_100a" },
		{ "multimem.st.acquire.gpu.global.b32 [%rd1], %r1;", "multimem.st.acquire is not a form" },
		{ "multimem.ld.global.b32 %r1, [%rd1];", "expected .ld_reduce, .st or .red" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[1024], want[256];
		struct vgpu_program *p = NULL;

		snprintf(text, sizeof(text),
			 HEAD ".visible .entry k(.param .u64 out)\n{\n"
			      "\t.reg .b32 %%r<4>;\n\t.reg .b64 %%rd<4>;\n\t.reg .f32 %%f<3>;\n"
			      "\t.reg .f64 %%fd<3>;\n\t.reg .b16 %%h<3>;\n"
			      "\tld.param.u64 %%rd1, [out];\n\t%s\n\tret;\n}\n",
			 bad[i].insn);
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, text, strlen(text), "bad.ptx", &p,
							 self->log, sizeof(self->log)))
			TH_LOG("%s", bad[i].insn);
		vgpu_program_free(p);
		snprintf(want, sizeof(want), "bad.ptx:13:2: error:");
		EXPECT_NE(NULL, strstr(self->log, want)) TH_LOG("%s: %s", bad[i].insn, self->log);
		EXPECT_NE(NULL, strstr(self->log, bad[i].msg)) TH_LOG("%s: %s", bad[i].insn, self->log);
	}
}

TEST_HARNESS_MAIN
