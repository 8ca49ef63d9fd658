// SPDX-License-Identifier: MIT
/*
 * The member mask of PTX's .sync warp instructions (redux, shfl, vote,
 * match, bar.warp.sync, elect) on the sim backend, against what an H200
 * does (tests/cuda/real-gpu/warpmask-h200-2026-11-30):
 *
 * - a mask in a register (the H200's WARPSYNC always runs): a lane that
 *   executes the instruction outside its own mask is an illegal
 *   instruction (VGPU_EXC_ILLEGAL_INSTR, info[0] the lanes outside, info[1]
 *   the first one's mask); masks that hold their lanes compute what the
 *   H200 computes, also when lanes give different masks;
 * - a constant mask (ptxas drops the check where the warp is converged):
 *   lanes outside it take part as on the H200, and the sanitizer reports
 *   them.
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

PTX_FIXTURE(warpsync)

/* thread t: r3 = 0xdead; OP with the mask masks[t] in %r2; out[t] = r3 */
static const char fmt[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n\n"
	".visible .entry k(.param .u64 out, .param .u64 masks)\n{\n"
	"\t.reg .b32 %%r<8>;\n\t.reg .b64 %%rd<6>;\n\t.reg .pred %%p<3>;\n"
	"\tld.param.u64 %%rd1, [out];\n\tld.param.u64 %%rd2, [masks];\n"
	"\tmov.u32 %%r1, %%tid.x;\n\tmul.wide.u32 %%rd3, %%r1, 4;\n"
	"\tadd.s64 %%rd4, %%rd2, %%rd3;\n\tld.global.u32 %%r2, [%%rd4];\n"
	"\tmov.u32 %%r3, 0xdead;\n"
	"%s\n"
	"\tadd.s64 %%rd5, %%rd1, %%rd3;\n\tst.global.u32 [%%rd5], %%r3;\n\tret;\n}\n";

/* the H200 probe's operations, in its order (warpmask_rt.cu) */
static const char *const ops[] = {
	"\tredux.sync.add.u32 %r3, %r1, %r2;",
	"\tadd.u32 %r4, %r1, 100;\n\tshfl.sync.idx.b32 %r3, %r4, 0, 0x1f, %r2;",
	"\tsetp.ne.u32 %p1, %r1, 3;\n\tvote.sync.ballot.b32 %r3, %p1, %r2;",
	"\tand.b32 %r4, %r1, 3;\n\tmatch.any.sync.b32 %r3, %r4, %r2;",
	"\tbar.warp.sync %r2;\n\tmov.u32 %r3, 1;",
	"\telect.sync %r3|%p1, %r2;",
};
#define NOPS (sizeof(ops) / sizeof(ops[0]))

/* Launch op @op for one warp with per-lane @masks; 0 or -EIO with @rec */
static int run_op(struct __test_metadata *_metadata, FIXTURE_DATA(warpsync) *self,
		  const char *body, const uint32_t *masks, uint64_t seed, bool sanitize,
		  uint32_t *out, struct vgpu_exception_record *rec)
{
	char text[4096];
	struct vgpu_launch_config cfg = {
		.grid = { 1 }, .block = { 32 }, .seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (sanitize ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	int ret;

	snprintf(text, sizeof(text), fmt, body);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	if (ptx_load(_metadata, self, "ws.ptx", text, "k"))
		return -EINVAL;
	memset(out, 0xee, 128);
	if (vgpu_bo_write(self->bo[0], 0, out, 128) || vgpu_bo_write(self->bo[1], 0, masks, 128) ||
	    vgpu_args_new(self->k, &args))
		return -ENOMEM;
	vgpu_args_set_bo(args, 0, self->bo[0], 0);
	vgpu_args_set_bo(args, 1, self->bo[1], 0);
	ret = vgpu_kernel_launch(self->k, &cfg, args, &job);
	vgpu_args_free(args);
	if (ret)
		return ret;
	ret = vgpu_job_wait(job, WAIT_NS);
	if (ret == -EIO && vgpu_job_exception(job, rec))
		ret = -EPROTO;
	vgpu_job_free(job);
	if (!ret && vgpu_bo_read(self->bo[0], 0, out, 128))
		ret = -EFAULT;
	return ret;
}

/* lanes l whose mask m[l] lacks bit l */
static uint32_t outside(const uint32_t *m)
{
	uint32_t bad = 0;

	for (uint32_t l = 0; l < 32; l++)
		if (!(m[l] >> l & 1))
			bad |= 1u << l;
	return bad;
}

/*
 * Masks in registers that leave lanes outside: an illegal instruction for
 * every operation (the H200: cudaErrorIllegalInstruction for all 24).
 */
TEST_F(warpsync, lane_outside_its_register_mask_is_an_illegal_instruction)
{
	uint32_t m[4][32], out[32];

	ASSERT_EQ(0, buf(self, 0, NULL, 128));
	ASSERT_EQ(0, buf(self, 1, NULL, 128));
	for (uint32_t l = 0; l < 32; l++) {
		m[0][l] = 0xffff;	    /* lanes 16..31 outside */
		m[1][l] = 0xfffffffe;	    /* lane 0 outside */
		m[2][l] = 7 * l + 1;	    /* clang-19's swapped __reduce_add_sync */
		m[3][l] = 0;		    /* every lane outside */
	}
	for (int c = 0; c < 4; c++)
		for (size_t op = 0; op < NOPS; op++)
			for (uint64_t s = 0; s < 3; s++) {
				struct vgpu_exception_record rec;
				uint32_t bad = outside(m[c]);
				char want[96];

				memset(&rec, 0, sizeof(rec));
				ASSERT_EQ(-EIO, run_op(_metadata, self, ops[op], m[c], s, s == 2,
						       out, &rec))
					TH_LOG("case %d op %zu seed %llu", c, op,
					       (unsigned long long)s);
				EXPECT_EQ((uint32_t)VGPU_EXC_ILLEGAL_INSTR, rec.code);
				EXPECT_EQ(bad, rec.info[0]);
				EXPECT_EQ(m[c][__builtin_ctz(bad)], rec.info[1]);
				EXPECT_EQ(0xffffffffu, rec.lane_mask);
				snprintf(want, sizeof(want),
					 "lane %d is not in its member mask 0x%08x",
					 __builtin_ctz(bad), m[c][__builtin_ctz(bad)]);
				EXPECT_NE(NULL, strstr(rec.msg, want)) TH_LOG("%s", rec.msg);
			}
}

/*
 * Masks in registers that hold their own lanes: each lane's group as on
 * the H200 (warpmask_rt.h200.log), lanes giving different masks included.
 * An entry ~0 is not checked: the PTX text leaves it undefined (a shfl
 * from a lane outside the group, a lane whose mask names lanes that ran
 * with another one) and vGPU's value is its own.
 */
TEST_F(warpsync, register_masks_that_hold_their_lanes)
{
	enum { HALVES, EACH, LOWHALF, FULL, LANE0, NCASES };
	uint32_t m[NCASES][32], want[NCASES][NOPS][32], out[32];

	ASSERT_EQ(0, buf(self, 0, NULL, 128));
	ASSERT_EQ(0, buf(self, 1, NULL, 128));
	memset(want, 0xff, sizeof(want));
	for (uint32_t l = 0; l < 32; l++) {
		uint32_t hi = l >= 16;

		m[HALVES][l] = hi ? 0xffff0000u : 0xffffu;
		m[EACH][l] = 1u << l;
		m[LOWHALF][l] = hi ? ~0u : 0xffffu;
		m[FULL][l] = ~0u;
		m[LANE0][l] = l ? 0xfffffffeu : ~0u;
		/* redux.add of the lane numbers */
		want[HALVES][0][l] = hi ? 0x178 : 0x78;
		want[EACH][0][l] = l;
		want[FULL][0][l] = 0x1f0;
		if (!hi)
			want[LOWHALF][0][l] = 0x78;
		if (l)
			want[LANE0][0][l] = 0x1f0;
		/* shfl.idx from lane 0 of l + 100 */
		if (!hi)
			want[HALVES][1][l] = want[LOWHALF][1][l] = 0x64;
		want[FULL][1][l] = 0x64;
		if (!l)
			want[EACH][1][l] = want[LANE0][1][l] = 0x64;
		/* vote.ballot of l != 3 */
		want[HALVES][2][l] = hi ? 0xffff0000u : 0xfff7;
		want[EACH][2][l] = l == 3 ? 0 : 1u << l;
		want[FULL][2][l] = 0xfffffff7u;
		if (!hi)
			want[LOWHALF][2][l] = 0xfff7;
		if (l)
			want[LANE0][2][l] = 0xfffffff6u;
		/* match.any of l & 3 */
		want[HALVES][3][l] = (hi ? 0x11110000u : 0x1111u) << (l & 3);
		want[EACH][3][l] = 1u << l;
		want[FULL][3][l] = 0x11111111u << (l & 3);
		if (!hi)
			want[LOWHALF][3][l] = 0x1111u << (l & 3);
		if (l)
			want[LANE0][3][l] = (0x11111111u << (l & 3)) & 0xfffffffeu;
		/* bar.warp.sync */
		for (int c = 0; c < NCASES; c++)
			want[c][4][l] = 1;
		/* elect: the lowest lane of the group */
		want[HALVES][5][l] = hi ? 16 : 0;
		want[EACH][5][l] = l;
		want[FULL][5][l] = 0;
		if (!hi)
			want[LOWHALF][5][l] = 0;
		if (l)
			want[LANE0][5][l] = 1;
	}
	for (int c = 0; c < NCASES; c++)
		for (size_t op = 0; op < NOPS; op++)
			for (uint64_t s = 0; s < 4; s++) {
				struct vgpu_exception_record rec;

				ASSERT_EQ(0, run_op(_metadata, self, ops[op], m[c], s, s & 1, out,
						    &rec))
					TH_LOG("case %d op %zu seed %llu", c, op,
					       (unsigned long long)s);
				for (uint32_t l = 0; l < 32; l++) {
					if (want[c][op][l] == ~0u)
						continue;
					ASSERT_EQ(want[c][op][l], out[l])
					TH_LOG("case %d op %zu lane %u seed %llu", c, op, l,
					       (unsigned long long)s);
				}
			}
}

/*
 * A constant mask that leaves executing lanes outside: those lanes take
 * part, as on the H200 (warpmask.h200.log: redux 0x1f0, ballot
 * 0xfffffff7, match over the whole warp; elect.sync 0x0f0f0f00 elects
 * lane 0); with the sanitizer an illegal instruction naming them.
 */
TEST_F(warpsync, constant_mask_outside_lanes_take_part_and_the_sanitizer_reports)
{
	static const struct {
		const char *body;
		uint32_t want0, want31;
	} cs[] = {
		{ "\tredux.sync.add.u32 %r3, %r1, 0xffff;", 0x1f0, 0x1f0 },
		{ "\tsetp.ne.u32 %p1, %r1, 3;\n\tvote.sync.ballot.b32 %r3, %p1, 0xffff;",
		  0xfffffff7u, 0xfffffff7u },
		{ "\tand.b32 %r4, %r1, 3;\n\tmatch.any.sync.b32 %r3, %r4, 0xffff;", 0x11111111u,
		  0x88888888u },
		{ "\tadd.u32 %r4, %r1, 100;\n\tshfl.sync.bfly.b32 %r3, %r4, 1, 0x1f, 0xfffffffe;",
		  101, 130 },
		/* the H200 elects lane 0 (b128-narrow-h200-2026-11-30) */
		{ "\telect.sync %r3|%p1, 0x0f0f0f00;", 0, 0 },
		{ "\tsetp.ne.u32 %p1, %r1, 99;\n\tvote.sync.all.pred %p2, %p1, 0x7fffffff;\n"
		  "\tselp.u32 %r3, 1, 0, %p2;",
		  1, 1 },
	};
	uint32_t masks[32] = { 0 }, out[32];

	ASSERT_EQ(0, buf(self, 0, NULL, 128));
	ASSERT_EQ(0, buf(self, 1, NULL, 128));
	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		for (uint64_t s = 0; s < 3; s++) {
			struct vgpu_exception_record rec;

			ASSERT_EQ(0, run_op(_metadata, self, cs[i].body, masks, s, false, out, &rec))
				TH_LOG("%s", cs[i].body);
			EXPECT_EQ(cs[i].want0, out[0]) TH_LOG("%s", cs[i].body);
			EXPECT_EQ(cs[i].want31, out[31]) TH_LOG("%s", cs[i].body);
			memset(&rec, 0, sizeof(rec));
			ASSERT_EQ(-EIO, run_op(_metadata, self, cs[i].body, masks, s, true, out, &rec));
			EXPECT_EQ((uint32_t)VGPU_EXC_ILLEGAL_INSTR, rec.code);
			EXPECT_NE(NULL, strstr(rec.msg, "is not in its member mask"));
		}
}

/* Lowered: a register-form check, an immediate-form one, none for all lanes */
TEST_F(warpsync, lowered_forms)
{
	static const char body[] = "\tredux.sync.add.u32 %r3, %r1, %r2;\n"
				   "\tredux.sync.add.u32 %r3, %r3, 0xff;\n"
				   "\tredux.sync.add.u32 %r3, %r3, 0xffffffff;";
	char text[4096], *dis = NULL, *p;
	size_t len = 0;
	FILE *f;
	int n = 0;

	snprintf(text, sizeof(text), fmt, body);
	ASSERT_EQ(0, ptx_load(_metadata, self, "ws.ptx", text, "k"));
	f = open_memstream(&dis, &len);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, vgpu_program_disassemble(self->prog, f));
	fclose(f);
	for (p = dis; (p = strstr(p, "WARPSYNC")); p++)
		n++;
	EXPECT_EQ(2, n) TH_LOG("%s", dis);
	EXPECT_NE(NULL, strstr(dis, "WARPSYNC 0xff")) TH_LOG("%s", dis);
	free(dis);
}

TEST_HARNESS_MAIN
