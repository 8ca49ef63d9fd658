// SPDX-License-Identifier: MIT
/*
 * The multicast bulk and tensor copies (.multicast::cluster with a
 * ctaMask, PTX ISA 9.7.9.25.4.1 and 9.7.9.27.1.2) on clusters of 2 and 4
 * CTAs: CTA rank 0 issues a 256-byte bulk copy and a 2-D 8 x 4 u32 tensor
 * tile to the CTAs of the mask; each CTA expects the 384 bytes it receives
 * (0 when its bit is clear) on its own mbarrier, waits, and stores its
 * shared buffers.  The mask is a register (.b16, from a parameter; the
 * tensor copy with .L2::cache_hint) or an immediate; all CTAs and a
 * partial mask; default and random schedules.  Expected values are the
 * sources (received) or the CTA's own fill pattern (not received).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"
#include "vgpu_hw.h"

#define WAIT_NS (60ull * 1000000000ull)
#define SCHEDULES 4
#define W 16 /* the tensor: W x H u32 */
#define H 8
#define BX 8 /* the box */
#define BY 4
#define X0 4 /* the tile's coordinates */
#define Y0 2
#define SRC_OFF 128    /* the bulk source in `in` (the map at 0) */
#define TENSOR_OFF 512 /* the tensor in `in` */
#define OUT_WORDS 96   /* per CTA: 64 words of the bulk buffer, 32 of the tile */

FIXTURE(mc) {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *out, *in;
	char log[8192];
};

FIXTURE_SETUP(mc)
{
	memset(self, 0, sizeof(*self));
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
}

FIXTURE_TEARDOWN(mc)
{
	vgpu_bo_free(self->out);
	vgpu_bo_free(self->in);
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

/*
 * The kernel for clusters of @ncta; @mask is the ctaMask operand's text:
 * "%rs1" (the parameter) or an integer.
 */
static void kernel_text(char *buf, size_t len, int ncta, const char *mask)
{
	const char *hint = mask[0] == '%' ? ".L2::cache_hint" : "";
	const char *policy = mask[0] == '%' ? ", %rd7" : "";

	snprintf(buf, len,
		 ".version 8.7\n.target sm_90a\n.address_size 64\n"
		 ".visible .entry mc(.param .u64 out, .param .u64 in, .param .u32 mask)"
		 " .reqnctapercluster %d, 1, 1\n{\n"
		 "  .shared .align 8 .b64 mbar;\n  .shared .align 128 .b8 buf[256];\n"
		 "  .shared .align 128 .b8 tile[128];\n"
		 "  .reg .b16 %%rs<4>;\n  .reg .b32 %%r<40>;\n  .reg .b64 %%rd<12>;\n"
		 "  .reg .pred %%p<8>;\n"
		 "  ld.param.u64 %%rd1, [out];\n  ld.param.u64 %%rd2, [in];\n"
		 "  ld.param.u16 %%rs1, [mask];\n  cvt.u32.u16 %%r30, %%rs1;\n"
		 "  mov.u32 %%r1, %%tid.x;\n  mov.u32 %%r2, %%cluster_ctarank;\n"
		 "  mov.u32 %%r3, %%ctaid.x;\n"
		 /* the fill pattern: 0xdead0000 | tid */
		 "  shl.b32 %%r4, %%r1, 2;\n  mov.u32 %%r5, buf;\n  add.u32 %%r6, %%r5, %%r4;\n"
		 "  or.b32 %%r7, %%r1, 0xdead0000;\n"
		 "  st.shared.u32 [%%r6], %%r7;\n  st.shared.u32 [%%r6+128], %%r7;\n"
		 "  mov.u32 %%r8, tile;\n  add.u32 %%r9, %%r8, %%r4;\n  st.shared.u32 [%%r9], %%r7;\n"
		 "  mov.u32 %%r10, mbar;\n  setp.eq.u32 %%p1, %%r1, 0;\n"
		 "  shr.u32 %%r11, %%r30, %%r2;\n  and.b32 %%r11, %%r11, 1;\n"
		 "  setp.ne.u32 %%p2, %%r11, 0;\n  selp.u32 %%r12, 384, 0, %%p2;\n"
		 "  @%%p1 mbarrier.init.shared::cta.b64 [%%r10], 1;\n"
		 "  @%%p1 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%r10], %%r12;\n"
		 "  barrier.cluster.arrive.release.aligned;\n"
		 "  barrier.cluster.wait.acquire.aligned;\n"
		 "  setp.eq.u32 %%p4, %%r2, 0;\n  and.pred %%p5, %%p4, %%p1;\n"
		 "  add.u64 %%rd3, %%rd2, %d;\n  mov.u32 %%r20, %d;\n  mov.u32 %%r21, %d;\n"
		 "  mov.b64 %%rd7, 0x1000000000000000;\n"
		 "  @%%p5 cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
		 ".multicast::cluster [buf], [%%rd3], 256, [mbar], %s;\n"
		 "  @%%p5 cp.async.bulk.tensor.2d.shared::cluster.global.tile"
		 ".mbarrier::complete_tx::bytes.multicast::cluster%s"
		 " [%%r8], [%%rd2, {%%r20, %%r21}], [%%r10], %s%s;\n"
		 "$Lw:\n  mbarrier.try_wait.parity.shared::cta.b64 %%p3, [%%r10], 0;\n"
		 "  @!%%p3 bra $Lw;\n"
		 "  mul.lo.u32 %%r13, %%r3, %d;\n  add.u32 %%r13, %%r13, %%r4;\n"
		 "  cvt.u64.u32 %%rd4, %%r13;\n  add.u64 %%rd5, %%rd1, %%rd4;\n"
		 "  ld.shared.u32 %%r14, [%%r6];\n  st.global.u32 [%%rd5], %%r14;\n"
		 "  ld.shared.u32 %%r14, [%%r6+128];\n  st.global.u32 [%%rd5+128], %%r14;\n"
		 "  ld.shared.u32 %%r14, [%%r9];\n  st.global.u32 [%%rd5+256], %%r14;\n"
		 "  barrier.cluster.arrive.aligned;\n  barrier.cluster.wait.aligned;\n"
		 "  ret;\n}\n",
		 ncta, SRC_OFF, X0, Y0, mask, hint, mask, policy, OUT_WORDS * 4);
}

static int load(struct __test_metadata *_metadata, FIXTURE_DATA(mc) *self, const char *text)
{
	int ret;

	vgpu_program_free(self->prog);
	self->prog = NULL;
	ret = vgpu_program_from_ptx(self->dev, text, strlen(text), "multicast.ptx", &self->prog,
				    self->log, sizeof(self->log));
	if (ret) {
		TH_LOG("%s\n%s", strerror(-ret), self->log);
		return ret;
	}
	return vgpu_program_find_kernel(self->prog, "mc", &self->k);
}

/* `in`: the tensor map, the bulk source and the tensor */
static uint32_t in_words[(TENSOR_OFF + W * H * 4) / 4];

static int make_in(FIXTURE_DATA(mc) *self)
{
	struct vgpu_tensor_map map = { 0 };
	int ret;

	vgpu_bo_free(self->in);
	self->in = NULL;
	ret = vgpu_bo_new(self->dev, sizeof(in_words), 0, &self->in);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < 64; i++)
		in_words[SRC_OFF / 4 + i] = 0x51000000u + i * 7919u;
	for (uint32_t y = 0; y < H; y++)
		for (uint32_t x = 0; x < W; x++)
			in_words[TENSOR_OFF / 4 + y * W + x] = 1000u * y + x + 7;
	map.base = vgpu_bo_gpu_address(self->in) + TENSOR_OFF;
	map.magic = VGPU_TMAP_MAGIC;
	map.rank = 2;
	map.elem_size = 4;
	map.dims[0] = W;
	map.dims[1] = H;
	map.strides[0] = W * 4;
	map.box[0] = BX;
	map.box[1] = BY;
	map.elem_strides[0] = map.elem_strides[1] = 1;
	memcpy(in_words, &map, sizeof(map));
	return vgpu_bo_write(self->in, 0, in_words, sizeof(in_words));
}

/* Launch 2 clusters of @ncta with the parameter @mask: the job's result. */
static int launch(struct __test_metadata *_metadata, FIXTURE_DATA(mc) *self, int ncta,
		  uint32_t mask, uint64_t seed, struct vgpu_exception_record *rec)
{
	struct vgpu_launch_config cfg = {
		.grid = { 2 * ncta },
		.block = { 32 },
		.cluster = { ncta },
		.seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (seed & 1 ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	int ret = vgpu_args_new(self->k, &args);

	if (!ret)
		ret = vgpu_args_set_bo(args, 0, self->out, 0);
	if (!ret)
		ret = vgpu_args_set_bo(args, 1, self->in, 0);
	if (!ret)
		ret = vgpu_args_set_u32(args, 2, mask);
	if (!ret)
		ret = vgpu_kernel_launch(self->k, &cfg, args, &job);
	vgpu_args_free(args);
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

/* Run the kernel for @ncta with @mask (register: @reg) and check out. */
static void check(struct __test_metadata *_metadata, FIXTURE_DATA(mc) *self, int ncta,
		  uint32_t mask, bool reg)
{
	static char text[8192];
	uint32_t out[2 * 4 * OUT_WORDS];
	char imm[16];

	snprintf(imm, sizeof(imm), "%u", mask);
	kernel_text(text, sizeof(text), ncta, reg ? "%rs1" : imm);
	ASSERT_EQ(0, load(_metadata, self, text));
	ASSERT_EQ(0, make_in(self));
	vgpu_bo_free(self->out);
	self->out = NULL;
	ASSERT_EQ(0, vgpu_bo_new(self->dev, sizeof(out), 0, &self->out));
	for (uint64_t seed = 0; seed < SCHEDULES; seed++) {
		memset(out, 0xcc, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->out, 0, out, sizeof(out)));
		ASSERT_EQ(0, launch(_metadata, self, ncta, mask, seed, NULL));
		ASSERT_EQ(0, vgpu_bo_read(self->out, 0, out, sizeof(out)));
		for (int g = 0; g < 2 * ncta; g++) {
			bool got = mask >> (g % ncta) & 1;

			for (uint32_t i = 0; i < OUT_WORDS; i++) {
				uint32_t want, o = out[g * OUT_WORDS + i];

				if (!got)
					want = 0xdead0000u | (i % 32);
				else if (i < 64)
					want = in_words[SRC_OFF / 4 + i];
				else
					want = in_words[TENSOR_OFF / 4 + (Y0 + (i - 64) / BX) * W +
							X0 + (i - 64) % BX];
				if (o != want)
					TH_LOG("%d CTAs, mask 0x%x%s, seed %llu: CTA %d word %u: "
					       "%08x, want %08x", ncta, mask, reg ? " (register)" : "",
					       (unsigned long long)seed, g, i, o, want);
				ASSERT_EQ(want, o);
			}
		}
	}
}

TEST_F(mc, cluster2)
{
	check(_metadata, self, 2, 0x3, true);
	check(_metadata, self, 2, 0x3, false);
	check(_metadata, self, 2, 0x2, true);
	check(_metadata, self, 2, 0x1, false);
	check(_metadata, self, 2, 0x0, true);
}

TEST_F(mc, cluster4)
{
	check(_metadata, self, 4, 0xf, true);
	check(_metadata, self, 4, 0xf, false);
	check(_metadata, self, 4, 0x5, true);
	check(_metadata, self, 4, 0x5, false);
	check(_metadata, self, 4, 0xa, true);
}

/* a register mask bit past the cluster: CLUSTER_RANGE at the MAPA */
TEST_F(mc, mask_past_cluster)
{
	static char text[8192];
	struct vgpu_exception_record rec;

	kernel_text(text, sizeof(text), 2, "%rs1");
	ASSERT_EQ(0, load(_metadata, self, text));
	ASSERT_EQ(0, make_in(self));
	ASSERT_EQ(0, vgpu_bo_new(self->dev, 2 * 2 * OUT_WORDS * 4, 0, &self->out));
	memset(&rec, 0, sizeof(rec));
	ASSERT_EQ(-EIO, launch(_metadata, self, 2, 0x5, 0, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_CLUSTER_RANGE, rec.code);
	EXPECT_NE(NULL, strstr(rec.msg, "rank 2 of a 2-CTA cluster")) TH_LOG("%s", rec.msg);
}

/* an immediate mask naming a rank past .reqnctapercluster, or wider than 16 bits */
TEST_F(mc, mask_refused)
{
	static const struct {
		int ncta;
		const char *mask, *what;
	} cases[] = {
		{ 2, "4", "multicast.ptx:45:8: error: ctaMask 0x4 names CTA rank 2 of a 2-CTA cluster" },
		{ 4, "0x10001", "ctaMask 0x10001 is not a 16-bit mask" },
		{ 4, "%p1", "ctaMask must be a 16-bit register or an integer" },
	};
	static char text[8192];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vgpu_program *p = NULL;
		int ret;

		kernel_text(text, sizeof(text), cases[i].ncta, cases[i].mask);
		ret = vgpu_program_from_ptx(self->dev, text, strlen(text), "multicast.ptx", &p,
					    self->log, sizeof(self->log));
		vgpu_program_free(p);
		EXPECT_NE(0, ret);
		EXPECT_NE(NULL, strstr(self->log, cases[i].what))
		TH_LOG("log: %s (want '%s')", self->log, cases[i].what);
	}
}

TEST_HARNESS_MAIN
