// SPDX-License-Identifier: MIT
/*
 * The PTX front end on real compiler output: each kernel of tests/ptx/
 * (CUDA compiled to PTX by Debian's clang at build time, embedded by
 * scripts/ptx-corpus.sh) is loaded with vgpu_program_from_ptx() and run
 * on the device's backend (sim on the host, drm in the guest) under the
 * default and random schedules, with the sanitizer on and off; every
 * result is checked against the same computation done here on the host.
 * Then malformed and unsupported PTX: an error naming file, line and
 * construct, never a crash.
 */
#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"
#include "vgpu_hw.h"
#include "ptx_corpus.h"
#include "ptx_oracle.h"

#define WAIT_NS (60ull * 1000000000ull)
#define NBUF 3

static const char *corpus(const char *name)
{
	for (size_t i = 0; ptx_corpus[i].name; i++)
		if (!strcmp(ptx_corpus[i].name, name))
			return ptx_corpus[i].text;
	return NULL;
}

FIXTURE(ptx) {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *bo[NBUF];
	char log[8192];
};

FIXTURE_SETUP(ptx)
{
	memset(self, 0, sizeof(*self));
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
}

FIXTURE_TEARDOWN(ptx)
{
	for (int i = 0; i < NBUF; i++)
		vgpu_bo_free(self->bo[i]);
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

/* Compile corpus kernel @name (its .entry has the same name). */
static int load(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
		const char *name)
{
	const char *text = corpus(name);
	char file[64];
	int ret;

	if (!text) {
		TH_LOG("no kernel %s in the corpus", name);
		return -ENOENT;
	}
	snprintf(file, sizeof(file), "tests/ptx/%s.ptx", name);
	ret = vgpu_program_from_ptx(self->dev, text, strlen(text), file, &self->prog,
				    self->log, sizeof(self->log));
	if (ret) {
		TH_LOG("%s: %s\n%s", name, strerror(-ret), self->log);
		return ret;
	}
	ret = vgpu_program_find_kernel(self->prog, name, &self->k);
	if (ret)
		TH_LOG("no kernel %s in the program", name);
	return ret;
}

static int buf(FIXTURE_DATA(ptx) *self, int i, const void *data, size_t len)
{
	int ret = vgpu_bo_new(self->dev, len, 0, &self->bo[i]);

	if (!ret && data)
		ret = vgpu_bo_write(self->bo[i], 0, data, len);
	return ret;
}

/*
 * Launch with @args under schedule @seed (0: default) and the sanitizer
 * when @san; 0 on success, else the job's error after logging the record.
 */
static int run(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
	       struct vgpu_args *args, uint32_t grid, uint32_t block, uint64_t seed,
	       bool san)
{
	struct vgpu_launch_config cfg = {
		.grid = { grid },
		.block = { block },
		.seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (san ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_job *job = NULL;
	int ret = vgpu_kernel_launch(self->k, &cfg, args, &job);

	if (ret)
		return ret;
	ret = vgpu_job_wait(job, WAIT_NS);
	if (ret) {
		char text[4096];

		if (vgpu_job_describe(job, text, sizeof(text)) > 0)
			TH_LOG("seed %llu%s:\n%s", (unsigned long long)seed,
			       san ? " (sanitizer)" : "", text);
	}
	vgpu_job_free(job);
	return ret;
}

/* The schedules every kernel runs under: default, then random seeds. */
#define SCHEDULES 6

TEST_F(ptx, reduce)
{
	uint32_t in[4 * 256], out[4];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 4 * 256; i++)
		in[i] = i * 7 + 3;
	ASSERT_EQ(0, load(_metadata, self, "reduce"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, (uint32_t[4]){ 0 }, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 4, 256, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t c = 0; c < 4; c++) {
			uint32_t want = 0;

			for (uint32_t t = 0; t < 256; t++)
				want += in[c * 256 + t];
			EXPECT_EQ(want, out[c])
				TH_LOG("cta %u seed %llu", c, (unsigned long long)s);
		}
	}
	vgpu_args_free(args);
}

TEST_F(ptx, int_arith)
{
	const uint32_t n = 150, total = 3 * 64;
	const int32_t a = -12345;
	uint64_t out64[3 * 64];
	uint32_t out32[3 * 64];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "int_arith"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out64)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out32)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_s32(args, 2, a));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 3, n));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out64, 0xab, sizeof(out64));
		memset(out32, 0xab, sizeof(out32));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out64, sizeof(out64)));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, out32, sizeof(out32)));
		ASSERT_EQ(0, run(_metadata, self, args, 3, 64, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out64, sizeof(out64)));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out32, sizeof(out32)));
		for (uint32_t i = 0; i < total; i++) {
			uint64_t x = (uint64_t)i * 0x100000001ull + ((uint64_t)i << 40);
			int64_t y = (int64_t)(int32_t)(i * 2654435761u) * a;
			uint64_t w64 = 0xababababababababull;
			uint32_t w32 = 0xabababab;

			if (i < n) {
				x ^= x >> 7;
				x += (uint64_t)(y < 0 ? -y : y);
				w64 = x - ((uint64_t)i << 33);
				w32 = (uint32_t)(x >> 29) + (i % 3 == 0 ? 7u : i / 5) +
				      (uint32_t)((int32_t)i - 100 > 0) -
				      (uint32_t)((int32_t)(i * 77) >> 3) +
				      (uint32_t)(i < 10 ? i * i : i ^ 0x55);
			}
			ASSERT_EQ(w64, out64[i]) TH_LOG("thread %u seed %llu", i,
							(unsigned long long)s);
			ASSERT_EQ(w32, out32[i]) TH_LOG("thread %u seed %llu", i,
							(unsigned long long)s);
		}
	}
	vgpu_args_free(args);
}

/* bfe and bfi as the PTX ISA defines them, bit by bit */
static uint32_t ref_bfe(uint32_t a, uint32_t pos, uint32_t len, bool sign)
{
	uint32_t d = 0, sbit = 0, top;

	pos &= 0xff;
	len &= 0xff;
	top = pos + len - 1 < 31 ? pos + len - 1 : 31;
	if (sign && len)
		sbit = a >> top & 1;
	for (uint32_t i = 0; i < 32; i++)
		d |= (i < len && pos + i <= 31 ? a >> (pos + i) & 1 : sbit) << i;
	return d;
}

static uint32_t ref_bfi(uint32_t a, uint32_t b, uint32_t pos, uint32_t len)
{
	pos &= 0xff;
	len &= 0xff;
	for (uint32_t i = 0; i < len && pos + i <= 31; i++)
		b = (b & ~(1u << (pos + i))) | (a >> i & 1) << (pos + i);
	return b;
}

TEST_F(ptx, bitfield)
{
	static const uint32_t f[10][2] = { { 0, 0 },  { 0, 8 },	 { 4, 12 },  { 28, 8 },
					   { 31, 1 }, { 0, 32 }, { 32, 4 },  { 40, 0 },
					   { 17, 300 }, { 260, 5 } };
	const uint32_t seed = 99, threads = 64;
	uint32_t out[64 * 30];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "bitfield"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, seed));
	ASSERT_EQ(0, run(_metadata, self, args, 2, threads / 2, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < threads; i++) {
		uint32_t a = (i + seed) * 2654435761u, b = ~a * 40503u + i;

		for (int k = 0; k < 10; k++) {
			EXPECT_EQ(ref_bfe(a, f[k][0], f[k][1], false), out[i * 30 + k])
			TH_LOG("bfe.u32 %u,%u thread %u", f[k][0], f[k][1], i);
			/* an immediate position past 31 (32, 4 here): all ones, as an
			 * H200 gives bfe.s32 d, a, 60, 8 for every a (tests/ptx/gen's
			 * g_bfe_s32_60_8); the ISA text would give a[31] */
			EXPECT_EQ((f[k][0] & 0xff) > 31 && (f[k][1] & 0xff) ?
					  0xffffffffu : ref_bfe(a, f[k][0], f[k][1], true),
				  out[i * 30 + 10 + k])
			TH_LOG("bfe.s32 %u,%u thread %u", f[k][0], f[k][1], i);
			EXPECT_EQ(ref_bfi(a, b, f[k][0], f[k][1]), out[i * 30 + 20 + k])
			TH_LOG("bfi %u,%u thread %u", f[k][0], f[k][1], i);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/local_generic.cu on the host */
static void ref_local_generic(uint32_t *out, const uint32_t *idx, uint32_t n,
			      uint32_t grid, uint32_t block)
{
	uint32_t total = grid * block, *sh = calloc(total, sizeof(*sh));

	for (uint32_t i = 0; i < total; i++) {
		uint32_t arr[20], s = 0;

		for (uint32_t k = 0; k < 20; k++)
			arr[k] = i * 31 + k * k;
		for (uint32_t k = 0; k < 8; k++) {
			uint32_t j = idx[(i + k) % n] % 20;

			arr[j] += s;
			s += arr[(j * 7 + k) % 20];
		}
		sh[i] = s;
		out[2 * i + 1] = s ^ 0x5555;
	}
	for (uint32_t i = 0; i < total; i++) {
		uint32_t t = i % block;
		uint32_t *p = (t & 1) ? &sh[i ^ 1] : &out[2 * i + 1];

		*p += 5 + i;
	}
	for (uint32_t i = 0; i < total; i++)
		out[2 * i] = sh[i];
	free(sh);
}

TEST_F(ptx, local_generic)
{
	const uint32_t grid = 3, block = 96, n = 37;
	uint32_t out[2 * 3 * 96], want[2 * 3 * 96], idx[37];
	struct vgpu_args *args = NULL;

	for (uint32_t k = 0; k < n; k++)
		idx[k] = k * 2654435761u >> 7;
	ref_local_generic(want, idx, n, grid, block);
	ASSERT_EQ(0, load(_metadata, self, "local_generic"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, idx, sizeof(idx)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, n));
	/* the hidden local-memory parameter is no setter's business */
	EXPECT_EQ(-EINVAL, vgpu_args_set_u64(args, 3, 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xab, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, grid, block, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t i = 0; i < 2 * grid * block; i++) {
			ASSERT_EQ(want[i], out[i]) TH_LOG("word %u seed %llu", i,
							  (unsigned long long)s);
		}
	}
	vgpu_args_free(args);
}

/* A kernel whose only parameter is its local memory launches without args. */
TEST_F(ptx, local_only_kernel_needs_no_args)
{
	static const char src[] =
		".version 8.5\n.target sm_90a\n.address_size 64\n"
		".visible .entry k()\n{\n .local .align 8 .b8 d[24];\n .reg .b32 %r<3>;\n"
		" mov.u32 %r0, %tid.x;\n st.local.u32 [d+20], %r0;\n"
		" ld.local.u32 %r1, [d+20];\n ret;\n}\n";
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info a;
	struct vgpu_launch_config cfg = { .grid = { 2 }, .block = { 64 } };
	struct vgpu_job *job = NULL;

	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, strlen(src), "l.ptx", &self->prog,
					   self->log, sizeof(self->log)))
	TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	vgpu_kernel_info(self->k, &ki);
	ASSERT_EQ(1u, ki.nparams);
	ASSERT_EQ(0, vgpu_kernel_arg(self->k, 0, &a));
	EXPECT_EQ((uint32_t)VGPU_ARG_LOCAL, a.type);
	EXPECT_EQ(8u, a.size);
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, NULL, &job));
	EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
}

/* %smid and %nsmid (SR_SMID, SR_NSMID): an SM below the device's SM count */
TEST_F(ptx, smid_below_nsmid)
{
	static const char src[] =
		".version 8.5\n.target sm_90a\n.address_size 64\n"
		".visible .entry k(.param .u64 out)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<1>;\n"
		" ld.param.u64 %rd0, [out];\n cvta.to.global.u64 %rd0, %rd0;\n"
		" mov.u32 %r0, %smid;\n mov.u32 %r1, %nsmid;\n"
		" st.global.u32 [%rd0], %r0;\n st.global.u32 [%rd0+4], %r1;\n ret;\n}\n";
	uint32_t out[2] = { ~0u, ~0u };
	struct vgpu_args *args = NULL;
	uint64_t sms = 0;

	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, strlen(src), "s.ptx", &self->prog,
					   self->log, sizeof(self->log)))
	TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, vgpu_device_get_param(self->dev, VGPU_PARAM_SMS, &sms));
	ASSERT_EQ(0, buf(self, 0, out, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	EXPECT_EQ(sms, out[1]);
	EXPECT_GT(out[1], out[0]);
	vgpu_args_free(args);
}

/*
 * %dynamic_smem_size, %total_smem_size, %aggr_smem_size: what an H200
 * reported for a kernel with 100 static bytes (tests/ptx/probes/
 * smem_sregs.txt): D; S + D rounded up to 128; S + D + 1024.  The same
 * with an extern .shared (the dynamic region's marker is not S).
 */
TEST_F(ptx, shared_memory_size_registers)
{
	static const char src[] =
		".version 8.5\n.target sm_90a\n.address_size 64\n"
		".extern .shared .align 16 .b8 dsm[];\n"
		".visible .entry s100(.param .u64 out)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<1>;\n"
		" .shared .align 1 .b8 s[100];\n"
		" ld.param.u64 %rd0, [out];\n cvta.to.global.u64 %rd0, %rd0;\n"
		" mov.u32 %r0, %dynamic_smem_size;\n mov.u32 %r1, %total_smem_size;\n"
		" mov.u32 %r2, %aggr_smem_size;\n st.global.u32 [%rd0], %r0;\n"
		" st.global.u32 [%rd0+4], %r1;\n st.global.u32 [%rd0+8], %r2;\n ret;\n}\n"
		".visible .entry ext(.param .u64 out)\n{\n .reg .b32 %r<3>;\n .reg .b64 %rd<2>;\n"
		" .shared .align 4 .b8 s[100];\n"
		" ld.param.u64 %rd0, [out];\n cvta.to.global.u64 %rd0, %rd0;\n"
		" mov.u64 %rd1, dsm;\n st.shared.u32 [%rd1], 7;\n"
		" mov.u32 %r0, %dynamic_smem_size;\n mov.u32 %r1, %total_smem_size;\n"
		" mov.u32 %r2, %aggr_smem_size;\n st.global.u32 [%rd0], %r0;\n"
		" st.global.u32 [%rd0+4], %r1;\n st.global.u32 [%rd0+8], %r2;\n ret;\n}\n";
	/* dynamic bytes; the H200's three answers for S = 100 */
	static const uint32_t want[][4] = {
		{ 0, 0, 128, 1124 },	   { 1, 1, 128, 1125 },	      { 129, 129, 256, 1253 },
		{ 1000, 1000, 1152, 2124 }, { 5000, 5000, 5120, 6124 },
	};
	static const char *const kernels[] = { "s100", "ext" };

	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, strlen(src), "smem.ptx", &self->prog,
					   self->log, sizeof(self->log)))
	TH_LOG("%s", self->log);
	ASSERT_EQ(0, buf(self, 0, NULL, 3 * sizeof(uint32_t)));
	for (unsigned kn = 0; kn < 2; kn++) {
		ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, kernels[kn], &self->k));
		for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
			struct vgpu_launch_config cfg = {
				.grid = { 2 }, .block = { 64 }, .smem_bytes = want[i][0],
			};
			uint32_t out[3] = { ~0u, ~0u, ~0u };
			struct vgpu_args *args = NULL;
			struct vgpu_job *job = NULL;

			ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
			ASSERT_EQ(0, vgpu_args_new(self->k, &args));
			ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
			ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
			EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
			vgpu_job_free(job);
			ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
			EXPECT_EQ(want[i][1], out[0]) TH_LOG("%s, %u dynamic bytes", kernels[kn], want[i][0]);
			EXPECT_EQ(want[i][2], out[1]) TH_LOG("%s, %u dynamic bytes", kernels[kn], want[i][0]);
			EXPECT_EQ(want[i][3], out[2]) TH_LOG("%s, %u dynamic bytes", kernels[kn], want[i][0]);
			vgpu_args_free(args);
		}
	}
}

/* tests/ptx/warp_ops.cu on the host: one warp of @in at a time */
static void ref_warp_ops(const uint32_t *in, uint32_t *o, uint32_t w)
{
	const uint32_t *a = in + 32 * w;
	uint32_t add = 0, umin = ~0u, umax = 0, and = ~0u, or = 0, xor = 0;
	int32_t smin = INT32_MAX, smax = INT32_MIN;
	uint32_t lead_all = 0, lead_div = 32, lead_part = 32;

	for (uint32_t l = 0; l < 32; l++) {
		add += a[l];
		umin = a[l] < umin ? a[l] : umin;
		umax = a[l] > umax ? a[l] : umax;
		smin = (int32_t)a[l] < smin ? (int32_t)a[l] : smin;
		smax = (int32_t)a[l] > smax ? (int32_t)a[l] : smax;
		and &= a[l] | 0x10;
		or |= a[l] & 0xf0f;
		xor ^= a[l];
		if (lead_div == 32 && ((32 * w + l) % 96) % 3)
			lead_div = l;
		if (lead_part == 32 && (0x0f0f0f00u >> l & 1))
			lead_part = l;
	}
	for (uint32_t l = 0; l < 32; l++, o += 14) {
		uint32_t t = (32 * w + l) % 96;

		o[0] = add;
		o[1] = umin;
		o[2] = umax;
		o[3] = (uint32_t)smin;
		o[4] = (uint32_t)smax;
		o[5] = and;
		o[6] = or;
		o[7] = xor;
		o[8] = lead_all << 8 | (l == lead_all);
		o[9] = t % 3 ? lead_div << 8 | (l == lead_div) : 0xdead;
		o[10] = 0x0f0f0f00u >> l & 1 ? lead_part << 8 | (l == lead_part) : 0xbeef;
		o[11] = l >= 3 ? a[l - 3] : 0xffff;
		o[12] = l + 5 <= 31 ? a[l + 5] : 0xffff;
		o[13] = a[l ^ 6];
	}
}

TEST_F(ptx, warp_ops)
{
	const uint32_t grid = 2, block = 96, total = 2 * 96;
	uint32_t in[2 * 96], out[2 * 96 * 14], want[2 * 96 * 14];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < total; i++)
		in[i] = (i * 2654435761u) ^ (i & 8 ? 0x80000000u : 0);
	for (uint32_t w = 0; w < total / 32; w++)
		ref_warp_ops(in, want + w * 32 * 14, w);
	ASSERT_EQ(0, load(_metadata, self, "warp_ops"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xab, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, grid, block, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t i = 0; i < total * 14; i++) {
			ASSERT_EQ(want[i], out[i]) TH_LOG("thread %u word %u seed %llu", i / 14,
							  i % 14, (unsigned long long)s);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/narrow.cu on the host, with C's 16-bit types */
static void ref_narrow(uint32_t x, uint32_t y, uint32_t *o)
{
	uint16_t a = (uint16_t)x, b = (uint16_t)y, c = (uint16_t)(a + b);
	uint16_t b1 = (uint16_t)(b | 1);

	o[0] = c < a;
	o[1] = (int16_t)c < 0;
	o[2] = (uint32_t)(c >> 3);
	o[3] = (uint32_t)(int32_t)(int16_t)((int16_t)c >> 3);
	o[4] = (uint32_t)(int32_t)((int16_t)c < (int16_t)b ? (int16_t)c : (int16_t)b);
	o[5] = c > b ? c : b;
	o[6] = (uint32_t)(int32_t)(int16_t)((int16_t)c / (int16_t)(b1 & 0x7fff));
	o[7] = (uint32_t)(c % b1);
	o[8] = (uint32_t)((int32_t)(int16_t)c * (int32_t)(int16_t)b);
	o[9] = (uint32_t)c * b;
	o[10] = (uint32_t)c * b + y;
	o[11] = c == (uint16_t)(x + y);
	o[12] = (uint16_t)(c * 0xaaabu) < 21846;
	o[13] = (int16_t)c > -3;
	o[14] = (uint32_t)(int32_t)(int16_t)(((int32_t)(int16_t)c * (int16_t)b) >> 16);
	o[15] = (uint32_t)(uint16_t)(((uint32_t)c * b) >> 16);
}

TEST_F(ptx, narrow)
{
	const uint32_t n = 128;
	uint32_t in[2 * 128], out[128 * 16], want[16];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 2 * n; i++)
		in[i] = i * 2654435761u ^ (i * 40503u << 13);
	in[0] = 0xffff; /* c wraps to 0xfffe + ... edge cases */
	in[1] = 0xffff;
	in[2] = 0x7fff;
	in[3] = 1;
	in[4] = 3;
	in[5] = 0;
	ASSERT_EQ(0, load(_metadata, self, "narrow"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 2, n / 2, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < n; i++) {
		ref_narrow(in[2 * i], in[2 * i + 1], want);
		for (int k = 0; k < 16; k++) {
			EXPECT_EQ(want[k], out[i * 16 + k])
			TH_LOG("thread %u op %d (x 0x%x y 0x%x)", i, k, in[2 * i], in[2 * i + 1]);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/calls.cu on the host */
static uint32_t ref_mix(uint32_t x, uint64_t y)
{
	return x * 3 + (uint32_t)(y >> 3);
}

static uint64_t ref_twice(uint64_t y)
{
	return y & 1 ? y * 2 : ref_mix((uint32_t)y, y) + y;
}

TEST_F(ptx, calls)
{
	const uint32_t grid = 2, block = 64, n = 1000003;
	uint32_t out[3 * 128], idx[16];
	struct vgpu_args *args = NULL;

	for (uint32_t k = 0; k < 16; k++)
		idx[k] = k * 2654435761u >> 5;
	ASSERT_EQ(0, load(_metadata, self, "calls"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, idx, sizeof(idx)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, n));
	for (uint64_t s = 0; s < 3; s++) {
		memset(out, 0xab, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, grid, block, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t i = 0; i < grid * block; i++) {
			uint32_t sum = 0;

			for (uint32_t k = 0; k < 6; k++)
				sum += i * (idx[i % 8 + k] % 16) + 7;
			EXPECT_EQ(ref_mix(i, n) + (uint32_t)ref_twice(i + n), out[3 * i]);
			EXPECT_EQ((uint32_t)(ref_twice((uint64_t)i << 32 | n) >> 32), out[3 * i + 1]);
			EXPECT_EQ(sum, out[3 * i + 2]) TH_LOG("thread %u", i);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/recurse.cu on the host: real calls (CALL/RET, ptx_call.c) */
static uint32_t ref_fib(uint32_t n)
{
	return n < 2 ? n : ref_fib(n - 1) + ref_fib(n - 2);
}

static uint32_t ref_sum_down(uint32_t n, uint32_t acc)
{
	return n ? ref_sum_down(n - 1, acc + n * n) + 1 : acc;
}

TEST_F(ptx, recursion_and_structures_by_value)
{
	const uint32_t grid = 2, block = 64, k = 7;
	uint32_t out[4 * 128];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "recurse"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, k));
	for (uint64_t s = 0; s < 3; s++) {
		memset(out, 0xab, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, grid, block, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t i = 0; i < grid * block; i++) {
			uint32_t v = ref_fib(i % 13) + (i & 1 ? ref_sum_down(i % 17, k) : 0);

			EXPECT_EQ(v, out[4 * i]) TH_LOG("thread %u", i);
			EXPECT_EQ(i + 1 + k, out[4 * i + 1]);
			EXPECT_EQ((i + 2) * k, out[4 * i + 2]);
			EXPECT_EQ(i ^ k, out[4 * i + 3]);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/globals.cu: module data, initialised and kept across launches */
TEST_F(ptx, globals)
{
	static const uint32_t table[8] = { 3, 1, 4, 1, 5, 9, 2, 6 };
	static const uint32_t ctab[5] = { 100, 200, 300, 400, 500 };
	static const float ftab[3] = { 1.5f, -2.25f, 1e3f };
	static const uint8_t bytes[5] = { 0xff, 1, 2, 3, 0x80 };
	const uint32_t grid = 2, block = 32, n = 64, k = 5;
	uint32_t out[2 * 64];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "globals"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, k));
	for (uint32_t launch = 0; launch < 2; launch++) {
		uint32_t seen[128] = { 0 };

		ASSERT_EQ(0, run(_metadata, self, args, grid, block, launch, false));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t i = 0; i < n; i++) {
			uint32_t c = out[2 * i + 1];

			EXPECT_EQ(table[(i + k) % 8] + ctab[i % 5] +
					  (uint32_t)(int32_t)(ftab[i % 3] * 2.0f) + bytes[i % 5],
				  out[2 * i]) TH_LOG("thread %u", i);
			/* the counter goes on where the last launch left it */
			ASSERT_GE(c, launch * n);
			ASSERT_LT(c, (launch + 1) * n);
			EXPECT_EQ(0u, seen[c - launch * n]++) TH_LOG("count %u twice", c);
		}
	}
	vgpu_args_free(args);
}

TEST_F(ptx, cvt_f64)
{
	float in[256];
	uint64_t out[256];
	struct vgpu_args *args = NULL;
	uint32_t bits;

	for (uint32_t i = 0; i < 256; i++) {
		bits = i * 0x9e3779b9u; /* all exponents, both signs */
		if (i % 8 == 1)
			bits &= 0x807fffffu; /* subnormals */
		memcpy(&in[i], &bits, 4);
	}
	in[0] = 0.0f;
	in[2] = -0.0f;
	in[3] = INFINITY;
	in[4] = -INFINITY;
	in[5] = 1e-45f; /* the smallest subnormal */
	in[6] = 3.4028235e38f;
	bits = 0x7fc00001u; /* a NaN with payload */
	memcpy(&in[7], &bits, 4);
	ASSERT_EQ(0, load(_metadata, self, "cvt_f64"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 2, 128, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < 256; i++) {
		double d = in[i];
		uint64_t want;

		memcpy(&want, &d, 8);
		EXPECT_EQ(want, out[i]) TH_LOG("%u: %a (0x%08x)", i, (double)in[i],
					       (unsigned)(i * 0x9e3779b9u));
	}
	vgpu_args_free(args);
}

/* tests/ptx/printf.cu: device printf, formatted when the job completes */
TEST_F(ptx, printf)
{
	const uint32_t n = 40;
	struct vgpu_args *args = NULL;
	char want[64][128], *text, *line;
	int nwant = 0, got = 0;

	for (uint32_t i = 0; i < n; i += 2) {
		int64_t big = -((int64_t)n << 33) - (int64_t)i;

		snprintf(want[nwant++], sizeof(want[0]), "thread %u: %d %lld %.3f %x %c|", i,
			 -(int32_t)i, (long long)big, 0.5 * i, n + i, 'a' + (int)(i % 26));
	}
	snprintf(want[nwant++], sizeof(want[0]), "last of them [%*u] %%", 6, n - 1);
	ASSERT_EQ(0, load(_metadata, self, "printk"));
	ASSERT_EQ(0, buf(self, 0, NULL, 4 * n));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, n));
	for (uint64_t s = 0; s < 3; s++) {
		struct vgpu_launch_config cfg = { .grid = { 2 }, .block = { n / 2 }, .seed = s,
						  .flags = s ? VGPU_LAUNCH_RANDOM_SCHED : 0 };
		struct vgpu_job *job = NULL;
		bool seen[64] = { false };

		ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
		ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
		ASSERT_NE(NULL, vgpu_job_printf(job));
		text = strdup(vgpu_job_printf(job));
		ASSERT_NE(NULL, text);
		got = 0;
		/* one line per printf, in whatever order the threads ran */
		for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), got++) {
			int k;

			for (k = 0; k < nwant; k++)
				if (!seen[k] && !strcmp(want[k], line))
					break;
			EXPECT_LT(k, nwant) TH_LOG("unexpected line '%s' (seed %llu)", line,
						   (unsigned long long)s);
			if (k < nwant)
				seen[k] = true;
		}
		EXPECT_EQ(nwant, got);
		free(text);
		vgpu_job_free(job);
	}
	vgpu_args_free(args);
}

/*
 * tests/ptx/tensor2d.cu: a 2-D tile of a 20 x 12 u32 tensor at (15, 6),
 * out of bounds on both axes, then stored back at (7, 6).  Also the same
 * kernel as nvcc writes a __grid_constant__ map: the map's address taken
 * with mov of the parameter's name and cvta.param.
 */
static const char tensor_nvcc_style[] =
	".version 8.5\n.target sm_90a\n.address_size 64\n"
	".visible .entry tmapk(.param .u64 out, .param .align 64 .b8 map[128], .param .u32 x, .param .u32 y)\n{\n"
	" .reg .b32 %r<8>;\n .reg .b64 %rd<8>;\n .reg .pred %p<2>;\n"
	" .shared .align 128 .b8 tile[256];\n .shared .align 8 .u64 bar;\n"
	" ld.param.u64 %rd0, [out];\n ld.param.u32 %r0, [x];\n ld.param.u32 %r1, [y];\n"
	" mov.u64 %rd1, map;\n cvta.param.u64 %rd2, %rd1;\n"
	" mov.u32 %r2, %tid.x;\n setp.ne.u32 %p0, %r2, 0;\n @%p0 bra WAIT;\n"
	" mbarrier.init.shared::cta.b64 [bar], 1;\n"
	" mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], 256;\n"
	" cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [tile], [%rd2, {%r0, %r1}], [bar];\n"
	"WAIT:\n bar.sync 0;\n"
	"LOOP:\n mbarrier.try_wait.parity.shared::cta.b64 %p1, [bar], 0;\n @!%p1 bra LOOP;\n"
	" shl.b32 %r3, %r2, 2;\n mov.u32 %r4, tile;\n add.s32 %r4, %r4, %r3;\n ld.shared.u32 %r5, [%r4];\n"
	" mul.wide.u32 %rd3, %r3, 1;\n add.s64 %rd4, %rd0, %rd3;\n st.global.u32 [%rd4], %r5;\n ret;\n}\n";

static void tensor_run(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
		       bool store)
{
	enum { W = 20, H = 12, X0 = 16, Y0 = 6 }; /* x * 4 bytes: multiples of 16 */
	uint32_t tensor[H][W], out[64], back[H][W];
	struct vgpu_tensor_map map = { 0 };
	struct vgpu_args *args = NULL;

	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			tensor[y][x] = 1000u * y + x;
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, tensor, sizeof(tensor)));
	map.base = vgpu_bo_gpu_address(self->bo[1]);
	map.magic = VGPU_TMAP_MAGIC;
	map.rank = 2;
	map.elem_size = 4;
	map.dims[0] = W;
	map.dims[1] = H;
	map.strides[0] = W * 4;
	map.box[0] = map.box[1] = 8;
	map.elem_strides[0] = map.elem_strides[1] = 1;
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_use_bo(args, self->bo[1]));
	ASSERT_EQ(0, vgpu_args_set_raw(args, 64, &map, sizeof(map))); /* by value, at 64 */
	ASSERT_EQ(0, vgpu_args_set_raw(args, 192, (int32_t[]){ X0, Y0 }, 8));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 64, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, back, sizeof(back)));
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 8; c++) {
			int x = X0 + c, y = Y0 + r;

			EXPECT_EQ(x < W && y < H ? tensor[y][x] : 0u, out[r * 8 + c])
			TH_LOG("tile (%d, %d)", c, r);
		}
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			uint32_t want = tensor[y][x];
			int c = x - (X0 - 8), r = y - Y0;

			/* the stored tile: rows past H are not written */
			if (store && c >= 0 && c < 8 && r >= 0 && r < 8) {
				int sx = X0 + c;

				want = (sx < W ? tensor[y][sx] : 0u) * 2 + 1;
			}
			EXPECT_EQ(want, back[y][x]) TH_LOG("tensor (%d, %d)", x, y);
		}
	vgpu_args_free(args);
}

TEST_F(ptx, tensor2d)
{
	ASSERT_EQ(0, load(_metadata, self, "tensor2d"));
	tensor_run(_metadata, self, true);
	vgpu_program_free(self->prog);
	self->prog = NULL;
	for (int i = 0; i < NBUF; i++) {
		vgpu_bo_free(self->bo[i]);
		self->bo[i] = NULL;
	}
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, tensor_nvcc_style, strlen(tensor_nvcc_style),
					   "tmapk.ptx", &self->prog, self->log, sizeof(self->log)))
	TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "tmapk", &self->k));
	tensor_run(_metadata, self, false);
}

/* tests/ptx/match.cu on the host */
TEST_F(ptx, match)
{
	uint32_t in[128], out[5 * 128];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 128; i++)
		in[i] = i * 2654435761u >> 7;
	in[70] = in[71] = 0; /* warp 2 ... */
	ASSERT_EQ(0, load(_metadata, self, "match"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 2, 64, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < 128; i++) {
		uint32_t w = i & ~31u, any5 = 0, any64 = 0, odd = 0, t = i % 64;

		for (uint32_t l = 0; l < 32; l++) {
			uint32_t b = in[w + l];

			any5 |= (uint32_t)(b % 5 == in[i] % 5) << l;
			any64 |= (uint32_t)(b % 3 == in[i] % 3 && (b & 1) == (in[i] & 1)) << l;
			odd += b % 2;
		}
		EXPECT_EQ(any5, out[5 * i]) TH_LOG("thread %u", i);
		EXPECT_EQ(any64, out[5 * i + 1]) TH_LOG("thread %u", i);
		EXPECT_EQ(odd == 0 || odd == 32 ? 0xffffffffu : 0u, out[5 * i + 2]);
		EXPECT_EQ(odd == 0 || odd == 32 ? 1u : 0u, out[5 * i + 3]);
		EXPECT_EQ(t % 4 != 1 ? 0xddddddddu : 7u, out[5 * i + 4]) TH_LOG("thread %u", i);
	}
	vgpu_args_free(args);
}

/* tests/ptx/f64.cu on the host, bit for bit */
TEST_F(ptx, f64)
{
	const uint32_t n = 96;
	double in[96];
	uint64_t out[96 * 16];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < n; i++)
		in[i] = ((double)(int32_t)(i * 2654435761u) / 7.0) * (i % 5 ? 1e-3 : 1e5);
	in[1] = 0.0;
	in[2] = -0.0;
	in[3] = INFINITY;
	in[4] = 1e-310; /* subnormal */
	in[5] = -3.5;
	ASSERT_EQ(0, load(_metadata, self, "f64"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, n));
	ASSERT_EQ(0, run(_metadata, self, args, 2, n / 2, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < n; i++) {
		double a = in[i], b = in[(i * 7 + 3) % n], w[9];
		int32_t k = (int32_t)i - 40;
		uint64_t want[16];
		float f = (float)(a * b);
		uint32_t fb;

		w[0] = a + b;
		w[1] = a - b;
		w[2] = a * b;
		w[3] = a / b;
		w[4] = fma(a, b, 0.1);
		w[5] = fmin(a, b);
		w[6] = a < b ? -a : fabs(b);
		w[7] = (double)(float)a;
		w[8] = (double)k * 0.5 + (double)i;
		memcpy(want, w, sizeof(w));
		{
			double x = a * 3.0, y = b >= 0.0 ? b : 0.0;

			want[9] = (uint64_t)(int64_t)(isnan(x) ? 0 : x <= -2147483648.0 ? INT32_MIN :
						      x >= 2147483647.0 ? INT32_MAX : (int32_t)x);
			want[10] = y >= 4294967295.0 ? 0xffffffffu : (uint32_t)y;
		}
		memcpy(&fb, &f, 4);
		want[11] = fb;
		{
			double x[3] = { sqrt(fabs(a)), 1.0 / b,
					(double)((int64_t)i * -123456789012345ll) +
						(double)(uint64_t)(i * 0x123456789abcull) };
			double y = a * 1e6, z = b > 0.0 && b < 1e19 ? b : 1.0;

			memcpy(&want[12], x, sizeof(x));
			want[15] = (uint64_t)(isnan(y) ? 0 : y <= -9223372036854775808.0 ? INT64_MIN :
					      y >= 9223372036854775808.0 ? INT64_MAX : (int64_t)y) ^
				   (uint64_t)z;
		}
		for (int j = 0; j < 16; j++) {
			/* out[16i + 11] is a u64 holding the f32 bits */
			EXPECT_EQ(want[j], out[16 * i + j]) TH_LOG("thread %u result %d: %a %a", i, j, a, b);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/div64.cu on the host (no zero divisors: C leaves them undefined) */
TEST_F(ptx, div64)
{
	uint64_t a[64], b[64], out[4 * 64];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 64; i++) {
		a[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull ^ ((uint64_t)i << 61);
		b[i] = (i % 4 == 0 ? (uint64_t)i * 0x1234567ull : (uint64_t)i * 977 + 1) |
		       (i % 8 == 3 ? 0x8000000000000000ull : 0);
	}
	b[0] = 1;
	a[5] = 0x8000000000000000ull; /* INT64_MIN / 3 */
	ASSERT_EQ(0, load(_metadata, self, "div64"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, a, sizeof(a)));
	ASSERT_EQ(0, buf(self, 2, b, sizeof(b)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 2, self->bo[2], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 2, 32, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < 64; i++) {
		EXPECT_EQ(a[i] / b[i], out[4 * i]) TH_LOG("%u", i);
		EXPECT_EQ(a[i] % b[i], out[4 * i + 1]) TH_LOG("%u", i);
		EXPECT_EQ((uint64_t)((int64_t)a[i] / (int64_t)b[i]), out[4 * i + 2]) TH_LOG("%u", i);
		EXPECT_EQ((uint64_t)((int64_t)a[i] % (int64_t)b[i]), out[4 * i + 3]) TH_LOG("%u", i);
	}
	vgpu_args_free(args);
}

/* tests/ptx/fcmp.cu: PTX's 14 comparisons by their definitions */
static uint32_t ref_cmps(double a, double b)
{
	bool un = isnan(a) || isnan(b);
	bool r[14] = { !un && a == b, !un && a != b, a < b, a <= b, a > b, a >= b,
		       un || a == b, un || a != b, un || a < b, un || a <= b,
		       un || a > b, un || a >= b, !un, un };
	uint32_t m = 0;

	for (int k = 0; k < 14; k++)
		m |= (uint32_t)r[k] << k;
	return m;
}

TEST_F(ptx, fcmp)
{
	float in[8] = { 1.0f, -2.5f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f };
	const uint32_t n = 8;
	uint32_t out[64];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "fcmp"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, n));
	ASSERT_EQ(0, run(_metadata, self, args, 2, 32, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < 64; i++) {
		float a = in[i % n], b = in[i / n];
		uint32_t want = ref_cmps(a, b) | ref_cmps(a, b) << 14 |
				(uint32_t)(a > 0 && (isnan(a) || isnan(b) || a < b)) << 28;

		EXPECT_EQ(want, out[i]) TH_LOG("%g vs %g", a, b);
	}
	vgpu_args_free(args);
}

/* shfl.sync as the PTX ISA defines it, for one lane of a full warp */
static uint32_t ref_shfl(const uint32_t *a, uint32_t lane, char mode, uint32_t b, uint32_t c,
			 uint32_t *pval)
{
	uint32_t segmask = c >> 8 & 0x1f, maxl = (lane & segmask) | (c & 0x1f & ~segmask);
	uint32_t minl = lane & segmask;
	int32_t j;
	bool p;

	b &= 0x1f;
	switch (mode) {
	case 'u': j = (int32_t)lane - (int32_t)b; p = j >= (int32_t)maxl; break;
	case 'd': j = (int32_t)(lane + b); p = j <= (int32_t)maxl; break;
	case 'b': j = (int32_t)(lane ^ b); p = j <= (int32_t)maxl; break;
	default: j = (int32_t)(minl | (b & ~segmask)); p = j <= (int32_t)maxl; break;
	}
	if (!p)
		j = (int32_t)lane;
	if (pval)
		*pval = p;
	return a[j];
}

TEST_F(ptx, shfl_seg)
{
	uint32_t in[64], out[13 * 64];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 64; i++)
		in[i] = i * 2654435761u;
	ASSERT_EQ(0, load(_metadata, self, "shfl_seg"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 2, 32, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t i = 0; i < 64; i++) {
		const uint32_t *a = in + (i & ~31u), l = i % 32;
		uint32_t want[13], p;

		want[0] = ref_shfl(a, l, 'u', 1, 28 << 8, NULL);
		want[1] = ref_shfl(a, l, 'u', 3, 24 << 8, NULL);
		want[2] = ref_shfl(a, l, 'd', 2, 28 << 8 | 0x1f, NULL);
		want[3] = ref_shfl(a, l, 'd', 5, 16 << 8 | 0x1f, NULL);
		want[4] = ref_shfl(a, l, 'b', 1, 24 << 8 | 0x1f, NULL);
		want[5] = ref_shfl(a, l, 'b', 6, 16 << 8 | 0x1f, NULL);
		want[6] = ref_shfl(a, l, 'i', 2, 28 << 8 | 0x1f, NULL);
		want[7] = ref_shfl(a, l, 'i', 13, 24 << 8 | 0x1f, NULL);
		want[8] = ref_shfl(a, l, 'i', i % 7, 16 << 8 | 0x1f, NULL);
		want[9] = ref_shfl(a, l, 'd', 3, 0x181f, &p);
		want[10] = p;
		want[11] = ref_shfl(a, l, 'u', 2, 0x1c00, &p);
		want[12] = p;
		for (int k = 0; k < 13; k++) {
			EXPECT_EQ(want[k], out[13 * i + k]) TH_LOG("lane %u case %d", i, k);
		}
	}
	vgpu_args_free(args);
}

/* tests/ptx/dyn_shared.cu: extern __shared__ sized by the launch */
TEST_F(ptx, dyn_shared)
{
	const uint32_t n = 96;
	uint32_t out[96];
	struct vgpu_args *args = NULL;
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { n }, .smem_bytes = 4 * n };
	struct vgpu_exception_record rec;
	struct vgpu_job *job = NULL;

	ASSERT_EQ(0, load(_metadata, self, "dyn_shared"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (uint32_t t = 0; t < n; t++) {
		EXPECT_EQ(3 * ((t + 1) % n) + 100 * (t % 4) + 3 * t, out[t]) TH_LOG("thread %u", t);
	}
	/* without the dynamic bytes the accesses leave shared memory */
	cfg.smem_bytes = 0;
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	EXPECT_NE(0, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_SMEM_RANGE, rec.code);
	vgpu_job_free(job);
	vgpu_args_free(args);
}

/* A kernel that scribbles over its printf buffer cannot make the host read past it. */
TEST_F(ptx, printf_buffer_garbage)
{
	static const char src[] =
		".global fmt, 16\n.bytes fmt, 37, 100, 10, 0\n" /* "%d\n" */
		".kernel scribble\n.param data d\n.param printf pb\n"
		"        LDP.64 R0, [pb] ;\n"
		"        MOV R2, 0xffffffff ;\n"
		"        STG.32 [R0+4], R2 ;\n"   /* capacity: huge */
		"        MOV R2, 0x40 ;\n"
		"        STG.32 [R0], R2 ;\n"     /* used: 64 */
		"        STG.32 [R0+16], RZ ;\n"  /* record 0: format at 0 */
		"        MOV R2, 0xfffffff9 ;\n"
		"        STG.32 [R0+20], R2 ;\n"  /* with 4 GiB of arguments */
		"        EXIT ;\n";
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 1 } };
	struct vgpu_job *job = NULL;

	ASSERT_EQ(0, vgpu_program_assemble(self->dev, src, strlen(src), "scribble.s", &self->prog,
					   self->log, sizeof(self->log)))
	TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "scribble", &self->k));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, NULL, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	/* the garbage record is dropped; nothing is read past the buffer */
	EXPECT_EQ(NULL, vgpu_job_printf(job));
	vgpu_job_free(job);
}

TEST_F(ptx, collatz)
{
	uint32_t out[2 * 128];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "collatz"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 2, 64, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t i = 1; i <= 128; i++) {
			uint32_t x = i, steps = 0, peak = i;

			while (x != 1) {
				x = x & 1 ? 3 * x + 1 : x >> 1;
				if (x > peak)
					peak = x;
				steps++;
			}
			ASSERT_EQ(steps, out[2 * (i - 1)]) TH_LOG("i %u", i);
			ASSERT_EQ(peak, out[2 * (i - 1) + 1]) TH_LOG("i %u", i);
		}
	}
	vgpu_args_free(args);
}

TEST_F(ptx, mbar_pipeline)
{
	uint32_t in[4 * 64], out[4 * 64];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 4 * 64; i++)
		in[i] = i * i + 1;
	ASSERT_EQ(0, load(_metadata, self, "mbar_pipeline"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	for (uint64_t s = 0; s < 2 * SCHEDULES; s++) {
		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 96, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t r = 0; r < 4; r++)
			for (uint32_t c = 0; c < 64; c++) {
				uint32_t want = 0;

				for (uint32_t k = 0; k <= c; k++)
					want += in[r * 64 + k];
				ASSERT_EQ(want, out[r * 64 + c])
					TH_LOG("round %u consumer %u seed %llu", r, c,
					       (unsigned long long)s);
			}
	}
	vgpu_args_free(args);
}

static uint32_t fbits(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

TEST_F(ptx, math)
{
	uint32_t in[64], out[8 * 64];
	struct vgpu_args *args = NULL;

	for (uint32_t i = 0; i < 64; i++)
		in[i] = (i * 2654435761u) ^ (i << 3);
	in[5] = 0x80000000u; /* INT_MIN / -8 and friends */
	ASSERT_EQ(0, load(_metadata, self, "math"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 64, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t w = 0; w < 2; w++) {
			uint32_t sum[32], x[32], nxt[32];

			for (uint32_t l = 0; l < 32; l++)
				sum[l] = x[l] = in[32 * w + l];
			for (uint32_t o = 16; o > 0; o >>= 1) {
				for (uint32_t l = 0; l < 32; l++)
					nxt[l] = sum[l] + sum[l + o < 32 ? l + o : l];
				memcpy(sum, nxt, sizeof(sum));
			}
			for (uint32_t o = 1; o < 32; o <<= 1) {
				for (uint32_t l = 0; l < 32; l++)
					nxt[l] = x[l] ^ x[l ^ o];
				memcpy(x, nxt, sizeof(x));
			}
			for (uint32_t l = 0; l < 32; l++) {
				uint32_t t = 32 * w + l, a = in[t], b = in[63 - t] % 17;
				int32_t sa = (int32_t)a, sb = (int32_t)b - 8;
				float fa = (float)sa, fb = (float)(sb == 0 ? 3 : sb);
				uint32_t y = in[32 * w + ((t + 5) & 31)];
				uint32_t z = l >= 3 ? in[t - 3] : a;
				uint32_t want[8] = {
					b ? a / b : 0,
					b ? a % b : 0,
					!sb ? 0 : (sa == INT32_MIN && sb == -1) ? a : (uint32_t)(sa / sb),
					!sb ? 0 : (sa == INT32_MIN && sb == -1) ? 0 : (uint32_t)(sa % sb),
					fbits(fa / fb),
					fbits(sqrtf(fa < 0 ? -fa : fa)),
					sum[l] + x[l],
					y ^ z,
				};

				for (int j = 0; j < 8; j++) {
					ASSERT_EQ(want[j], out[8 * t + j])
						TH_LOG("thread %u result %d seed %llu", t, j,
						       (unsigned long long)s);
				}
			}
		}
	}
	vgpu_args_free(args);
}


TEST_F(ptx, float_ops)
{
	const float k = 1.5f;
	float in[64];
	uint32_t out[8 * 64];
	struct vgpu_args *args = NULL;

	for (int i = 0; i < 64; i++)
		in[i] = (float)(i - 20) * 0.37f;
	ASSERT_EQ(0, load(_metadata, self, "float_ops"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, buf(self, 1, in, sizeof(in)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_f32(args, 2, k));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 64, 0, true));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (int i = 0; i < 64; i++) {
		float x = in[i], y = in[63 - i], p = x * k;
		uint32_t want[8] = {
			fbits(x + y),	     fbits(x - y),
			fbits(p),	     fbits(fmaf(x, y, k)),
			fbits(x < y ? x : y), fbits((float)(int32_t)(p * 3.0f)),
			fbits((float)i * 0.25f), fbits(-x),
		};

		for (int j = 0; j < 8; j++) {
			EXPECT_EQ(want[j], out[8 * i + j])
				TH_LOG("thread %d result %d", i, j);
		}
	}
	vgpu_args_free(args);
}

/* ---- nvcc's PTX against what an H100 computed ---- */

/*
 * The words the GPU wrote for kernel @name (tests/ptx/nvcc/kernels.
 * expected: "NAME COUNT" then COUNT hex words); the count, or -1.
 */
/* The nvcc set the GPU's results come from (tests/ptx/nvcc/SET.expected). */
static const char *nvcc_set = "kernels";

static const char *gpu_text(void)
{
	for (size_t i = 0; ptx_expected[i].name; i++)
		if (!strcmp(ptx_expected[i].name, nvcc_set))
			return ptx_expected[i].text;
	return NULL;
}

static int gpu_words(const char *name, uint32_t *out, size_t max)
{
	const char *t = gpu_text(), *p;
	size_t n, len = strlen(name);

	for (p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ')
			break;
	if (!p || !*p || sscanf(p + len, "%zu", &n) != 1 || n > max)
		return -1;
	p = strchr(p, '\n');
	for (size_t i = 0; i < n; i++) {
		char *end;

		if (!p)
			return -1;
		out[i] = (uint32_t)strtoul(p, &end, 16);
		if (end == p)
			return -1;
		p = end;
	}
	return (int)n;
}

/* Run nvcc's kernel @name over @nbuf buffers (inputs given, outputs zero)
 * and compare buffer 0 with the GPU's words. */
static void nvcc_case(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
		      const char *name, uint32_t grid, uint32_t block,
		      const void *in1, size_t len1, const void *in2, size_t len2,
		      const uint32_t *scalars, int nscalars, size_t out_words)
{
	uint32_t want[1024], got[1024];
	struct vgpu_args *args = NULL;
	int n = gpu_words(name, want, 1024);

	ASSERT_EQ((int)out_words, n) TH_LOG("%s: no GPU result", name);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, name, &self->k));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	if (in1) {
		ASSERT_EQ(0, vgpu_bo_write(self->bo[1], 0, in1, len1));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	}
	if (in2) {
		ASSERT_EQ(0, vgpu_bo_write(self->bo[2], 0, in2, len2));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 2, self->bo[2], 0));
	}
	for (int i = 0; i < nscalars; i++) {
		struct vgpu_arg_info a;

		/* by offset: the parameter may be an int or a float */
		ASSERT_EQ(0, vgpu_kernel_arg(self->k, 1 + !!in1 + !!in2 + i, &a));
		ASSERT_EQ(4u, a.size);
		ASSERT_EQ(0, vgpu_args_set_raw(args, a.offset, &scalars[i], 4));
	}
	for (uint64_t s = 0; s < 4; s++) {
		memset(got, 0, sizeof(got));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, got, out_words * 4));
		ASSERT_EQ(0, run(_metadata, self, args, grid, block, s, s & 1));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, got, out_words * 4));
		for (size_t i = 0; i < out_words; i++) {
			ASSERT_EQ(want[i], got[i])
				TH_LOG("%s word %zu seed %llu", name, i, (unsigned long long)s);
		}
	}
	vgpu_args_free(args);
}

TEST_F(ptx, nvcc_kernels_match_the_gpu)
{
	int32_t x[512], y[512];
	uint32_t in[4 * 256];
	float fin[64];
	const char *text = corpus("kernels");

	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, text, strlen(text),
					   "tests/ptx/nvcc/kernels.ptx", &self->prog, self->log,
					   sizeof(self->log)))
		TH_LOG("%s", self->log);
	for (int i = 0; i < NBUF; i++)
		ASSERT_EQ(0, vgpu_bo_new(self->dev, 4096, 0, &self->bo[i]));
	/* the inputs kernels.cu's main() gives them */
	for (int i = 0; i < 512; i++) {
		x[i] = i * 3 - 700;
		y[i] = 1000 - i * i;
	}
	for (uint32_t i = 0; i < 4 * 256; i++)
		in[i] = i * 2654435761u;
	for (int i = 0; i < 64; i++)
		fin[i] = (float)(i - 20) * 0.37f;
	nvcc_case(_metadata, self, "nv_saxpy", 4, 128, x, sizeof(x), y, sizeof(y),
		  (uint32_t[]){ (uint32_t)-37, 500 }, 2, 512);
	nvcc_case(_metadata, self, "nv_reduce", 4, 256, in, sizeof(in), NULL, 0, NULL, 0, 4);
	nvcc_case(_metadata, self, "nv_branches", 2, 64, NULL, 0, NULL, 0, NULL, 0, 3 * 128);
	nvcc_case(_metadata, self, "nv_mbarrier", 1, 128, NULL, 0, NULL, 0, NULL, 0, 3 * 128);
	{
		float k = 1.5f;
		uint32_t kb;

		memcpy(&kb, &k, 4);
		nvcc_case(_metadata, self, "nv_float", 1, 64, fin, sizeof(fin), NULL, 0,
			  (uint32_t[]){ kb }, 1, 6 * 64);
	}
}

TEST_F(ptx, nvcc_kernels2_match_the_gpu)
{
	uint32_t idx[64], in[256];
	float fin[128];
	const char *text = corpus("kernels2"), *g, *end;
	char want[32][160];
	int nwant = 0;

	nvcc_set = "kernels2";
	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, text, strlen(text),
					   "tests/ptx/nvcc/kernels2.ptx", &self->prog, self->log,
					   sizeof(self->log)))
		TH_LOG("%s", self->log);
	for (int i = 0; i < NBUF; i++)
		ASSERT_EQ(0, vgpu_bo_new(self->dev, 4096, 0, &self->bo[i]));
	/* the inputs kernels2.cu's main() gives them */
	for (uint32_t k = 0; k < 64; k++)
		idx[k] = k * 2654435761u >> 3;
	for (uint32_t k = 0; k < 256; k++)
		in[k] = k * 2246822519u ^ (k & 4 ? 0x80008000u : 0);
	for (uint32_t k = 0; k < 128; k++) {
		uint32_t b = k * 0x9e3779b9u;

		if (k % 8 == 1)
			b &= 0x807fffffu;
		memcpy(&fin[k], &b, 4);
	}
	nvcc_case(_metadata, self, "nv2_local", 2, 64, idx, sizeof(idx), NULL, 0, NULL, 0, 128);
	nvcc_case(_metadata, self, "nv2_calls", 2, 64, NULL, 0, NULL, 0,
		  (uint32_t[]){ 1000003u }, 1, 256);
	nvcc_case(_metadata, self, "nv2_globals", 1, 96, NULL, 0, NULL, 0, (uint32_t[]){ 5 }, 1,
		  192);
	nvcc_case(_metadata, self, "nv2_narrow", 1, 128, in, sizeof(in), NULL, 0, NULL, 0, 768);
	nvcc_case(_metadata, self, "nv2_warp", 1, 96, in, sizeof(in), NULL, 0, NULL, 0, 768);
	nvcc_case(_metadata, self, "nv2_cvt64", 1, 128, fin, sizeof(fin), NULL, 0, NULL, 0, 256);

	/* printf: the same lines as the GPU printed, in any order */
	g = strstr(gpu_text(), "printf-begin\n");
	ASSERT_NE(NULL, g);
	g += strlen("printf-begin\n");
	end = strstr(g, "printf-end\n");
	ASSERT_NE(NULL, end);
	while (g < end && nwant < 32) {
		const char *nl = strchr(g, '\n');

		snprintf(want[nwant++], sizeof(want[0]), "%.*s", (int)(nl - g), g);
		g = nl + 1;
	}
	ASSERT_EQ(14, nwant);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "nv2_printf", &self->k));
	for (uint64_t s = 0; s < 2; s++) {
		struct vgpu_launch_config cfg = { .grid = { 2 }, .block = { 32 }, .seed = s,
						  .flags = s ? VGPU_LAUNCH_RANDOM_SCHED : 0 };
		struct vgpu_args *args = NULL;
		struct vgpu_job *job = NULL;
		bool seen[32] = { false };
		char *out, *line;
		int got = 0;

		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_u32(args, 0, 50));
		ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
		ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
		ASSERT_NE(NULL, vgpu_job_printf(job));
		out = strdup(vgpu_job_printf(job));
		for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), got++) {
			int k;

			for (k = 0; k < nwant; k++)
				if (!seen[k] && !strcmp(want[k], line))
					break;
			EXPECT_LT(k, nwant) TH_LOG("the GPU printed no line '%s'", line);
			if (k < nwant)
				seen[k] = true;
		}
		EXPECT_EQ(nwant, got);
		free(out);
		vgpu_job_free(job);
		vgpu_args_free(args);
	}
	nvcc_set = "kernels";
}

/* ---- bad input: a clear error with the location, never a crash ---- */

struct bad_ptx {
	const char *name, *src, *msg;
};

static const struct bad_ptx bad[] = {
	{ "no_target", ".version 8.5\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n",
	  "t.ptx:1:1: error: missing .target" },
	{ "unknown_insn",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " .reg .b32 %r<2>;\n frobnicate.b32 %r0, %r1;\n ret;\n}\n",
	  "t.ptx:7:2: error: unsupported PTX instruction 'frobnicate.b32'" },
	{ "tensor_core",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " .reg .b32 %r<8>;\n"
	  " mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r0,%r1,%r2,%r3}, {%r4,%r5}, {%r6}, {%r0,%r1,%r2,%r3};\n"
	  " ret;\n}\n",
	  "t.ptx:7:2: error: unsupported PTX instruction 'mma.sync.aligned.m16n8k8" },
	{ "undeclared_register",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " .reg .b32 %r<2>;\n add.s32 %r0, %r1, %q9;\n ret;\n}\n",
	  "t.ptx:7:2: error: unknown name '%q9'" },
	{ "unknown_label",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " bra NOWHERE;\n}\n",
	  "t.ptx:6:2: error: unknown branch target" },
	{ "missing_brace",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n ret;\n",
	  "error: missing '}' at the end of 'k'" },
	{ "param_through_register",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
	  " .reg .b64 %rd<2>;\n .reg .b32 %r<2>;\n ld.param.u64 %rd0, [p];\n ld.param.u32 %r0, [%rd0];\n ret;\n}\n",
	  "t.ptx:9:2: error: unsupported PTX construct 'ld.param.u32': a parameter address other than [name+offset] or a register set to a kernel parameter's address" },
	/* a copy of a register that is not always a parameter's address */
	{ "param_through_copy_of_other",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
	  " .reg .b64 %rd<4>;\n .reg .b32 %r<2>;\n mov.b64 %rd0, p;\n ld.param.u64 %rd0, [p];\n"
	  " mov.u64 %rd1, %rd0;\n ld.param.u32 %r0, [%rd1];\n ret;\n}\n",
	  "t.ptx:11:2: error: unsupported PTX construct 'ld.param.u32': a parameter address other than [name+offset] or a register set to a kernel parameter's address" },
	{ "global_symbol_initialiser",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.global .u64 p = generic(q);\n"
	  ".visible .entry k()\n{\n ret;\n}\n",
	  "t.ptx:4:" },
	{ "atom_local",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " .local .align 4 .b8 d[16];\n .reg .b32 %r<2>;\n atom.add.u32 %r0, [d], 1;\n ret;\n}\n",
	  "t.ptx:8:2: error: atomics on .local memory are not defined" },
	{ "local_too_big",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " .local .align 4 .b8 d[70000];\n .reg .b32 %r<2>;\n st.local.u32 [d], 1;\n ret;\n}\n",
	  "t.ptx:4:1: error: unsupported construct: 70000 bytes of .local (at most 65536 per thread)" },
	{ "extern_global_undefined",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n"
	  ".extern .global .align 4 .u32 cnt;\n.visible .entry k()\n{\n ret;\n}\n",
	  "t.ptx:4:1: error: undefined reference to the .extern variable 'cnt'" },
	{ "extern_call",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n"
	  ".extern .func (.param .b32 func_retval0) __nv_powf (.param .b64 a, .param .b64 b);\n"
	  ".visible .entry k()\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n"
	  " { .param .b64 p0;\n st.param.b64 [p0+0], %rd0;\n .param .b64 p1;\n"
	  " st.param.b64 [p1+0], %rd0;\n .param .b32 r;\n call.uni (r), __nv_powf, (p0, p1);\n"
	  " ld.param.b32 %r0, [r+0];\n }\n ret;\n}\n",
	  "t.ptx:14:16: error: unsupported construct: a call of the external function '__nv_powf'" },
	{ "printf_format_not_constant",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n"
	  ".extern .func (.param .b32 func_retval0) vprintf (.param .b64 a, .param .b64 b);\n"
	  ".visible .entry k(.param .u64 f)\n{\n .reg .b32 %r<2>;\n .reg .b64 %rd<2>;\n"
	  " ld.param.u64 %rd0, [f];\n { .param .b64 p0;\n st.param.b64 [p0+0], %rd0;\n .param .b64 p1;\n"
	  " st.param.b64 [p1+0], %rd0;\n .param .b32 r;\n call.uni (r), vprintf, (p0, p1);\n"
	  " ld.param.b32 %r0, [r+0];\n }\n ret;\n}\n",
	  "t.ptx:15:2: error: unsupported PTX construct 'vprintf': printf with a format that is not a string constant" },
	{ "unknown_function",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " call.uni nothere;\n ret;\n}\n",
	  "t.ptx:6:11: error: call of an unknown function 'nothere'" },
	{ "barrier_id_out_of_range",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " bar.sync 80;\n ret;\n}\n",
	  "t.ptx:6:1: error: barrier id 80 out of range (0..15)" },
	{ "bad_operand",
	  ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " .reg .b32 %r<2>;\n add.s32 %r0, , %r1;\n ret;\n}\n",
	  "t.ptx:7:15: error: unexpected ',' in an operand" },
};

/*
 * More values live at once than there are registers: 300 32-bit and 100
 * 64-bit loads, all used only at the end (in reverse order), one of them
 * updated under a guard, the 64-bit ones added pairwise (the spilled
 * destination of an add.s64, written a word at a time, is reloaded
 * first: cub's DeviceReduceKernel lost the other word).  The front end spills (the code names the
 * scratch registers R239..) and every thread of two CTAs computes the
 * same result as C.
 */
#define SPILL_N32 300
#define SPILL_N64 100
#define SPILL_THREADS 64

static char *spill_ptx(void)
{
	size_t cap = 1 << 16, len = 0;
	char *p = malloc(cap);

#define OUT(...)                                                               \
	do {                                                                   \
		int k_ = snprintf(p + len, cap - len, __VA_ARGS__);            \
		if (k_ < 0 || (size_t)k_ >= cap - len) {                       \
			char *q_ = realloc(p, cap *= 2);                       \
			if (!q_) {                                             \
				free(p);                                       \
				return NULL;                                   \
			}                                                      \
			p = q_;                                                \
			continue;                                              \
		}                                                              \
		len += (size_t)k_;                                             \
		break;                                                         \
	} while (1)
	if (!p)
		return NULL;
	OUT(".version 8.0\n.target sm_90\n.address_size 64\n"
	    ".visible .entry spill(.param .u64 in, .param .u64 in64, .param .u64 out)\n{\n"
	    "\t.reg .pred %%p<2>;\n\t.reg .b32 %%r<%d>;\n\t.reg .b64 %%rd<%d>;\n",
	    SPILL_N32 + 8, SPILL_N64 + 16);
	OUT("\tld.param.u64 %%rd1, [in];\n\tld.param.u64 %%rd2, [in64];\n"
	    "\tld.param.u64 %%rd3, [out];\n"
	    "\tmov.u32 %%r1, %%tid.x;\n\tmov.u32 %%r2, %%ctaid.x;\n"
	    "\tmov.u32 %%r3, %%ntid.x;\n\tmad.lo.u32 %%r1, %%r2, %%r3, %%r1;\n"
	    "\tmul.wide.u32 %%rd4, %%r1, %d;\n\tadd.s64 %%rd5, %%rd1, %%rd4;\n"
	    "\tmul.wide.u32 %%rd6, %%r1, %d;\n\tadd.s64 %%rd7, %%rd2, %%rd6;\n"
	    "\tmul.wide.u32 %%rd8, %%r1, 16;\n\tadd.s64 %%rd9, %%rd3, %%rd8;\n"
	    "\tsetp.eq.u32 %%p1, %%r1, 3;\n",
	    4 * SPILL_N32, 8 * SPILL_N64);
	for (int i = 0; i < SPILL_N32; i++)
		OUT("\tld.global.u32 %%r%d, [%%rd5+%d];\n", i + 8, 4 * i);
	for (int i = 0; i < SPILL_N64; i++)
		OUT("\tld.global.u64 %%rd%d, [%%rd7+%d];\n", i + 16, 8 * i);
	/* a guarded update of a value that lives long */
	OUT("\t@%%p1 add.u32 %%r8, %%r8, 1000;\n");
	/* 64-bit adds of spilled values into spilled values, a word at a time */
	for (int i = 0; i + 1 < SPILL_N64; i++)
		OUT("\tadd.s64 %%rd%d, %%rd%d, %%rd%d;\n", i + 16, i + 17, i + 16);
	OUT("\tmov.u32 %%r4, 0;\n\tmov.u64 %%rd10, 0;\n");
	for (int i = SPILL_N32 - 1; i >= 0; i--)
		OUT("\tmad.lo.u32 %%r4, %%r%d, %d, %%r4;\n", i + 8, i + 1);
	for (int i = SPILL_N64 - 1; i >= 0; i--)
		OUT("\txor.b64 %%rd10, %%rd10, %%rd%d;\n\tshl.b64 %%rd11, %%rd10, 1;\n"
		    "\tshr.u64 %%rd12, %%rd10, 63;\n\tor.b64 %%rd10, %%rd11, %%rd12;\n", i + 16);
	OUT("\tst.global.u32 [%%rd9], %%r4;\n\tst.global.u64 [%%rd9+8], %%rd10;\n\tret;\n}\n");
#undef OUT
	return p;
}

TEST_F(ptx, spill)
{
	enum { T = 2 * SPILL_THREADS };
	uint32_t *in = malloc(sizeof(uint32_t) * T * SPILL_N32);
	uint64_t *in64 = malloc(sizeof(uint64_t) * T * SPILL_N64), out[2 * T];
	struct vgpu_args *args = NULL;
	char *text = spill_ptx(), *dis = NULL;
	size_t dlen = 0;
	FILE *f;
	int ret;

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, in64);
	ASSERT_NE(NULL, text);
	for (int i = 0; i < T * SPILL_N32; i++)
		in[i] = (uint32_t)i * 2654435761u;
	for (int i = 0; i < T * SPILL_N64; i++)
		in64[i] = (uint64_t)i * 0x9e3779b97f4a7c15ull;
	ret = vgpu_program_from_ptx(self->dev, text, strlen(text), "spill.ptx", &self->prog,
				    self->log, sizeof(self->log));
	ASSERT_EQ(0, ret) TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "spill", &self->k));
	/* it did spill: reloads into the scratch registers */
	f = open_memstream(&dis, &dlen);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, vgpu_program_disassemble(self->prog, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(dis, "R239"));
	free(dis);
	ASSERT_EQ(0, buf(self, 0, in, sizeof(uint32_t) * T * SPILL_N32));
	ASSERT_EQ(0, buf(self, 1, in64, sizeof(uint64_t) * T * SPILL_N64));
	ASSERT_EQ(0, buf(self, 2, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, vgpu_args_set_bo(args, (unsigned)i, self->bo[i], 0));
	for (uint64_t seed = 0; seed < 3; seed++) {
		ASSERT_EQ(0, vgpu_bo_write(self->bo[2], 0, (uint64_t[2 * T]){ 0 }, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 2, SPILL_THREADS, seed, seed == 2));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[2], 0, out, sizeof(out)));
		for (int t = 0; t < T; t++) {
			uint32_t sum = 0;
			uint64_t x = 0;

			for (int i = SPILL_N32 - 1; i >= 0; i--)
				sum += (in[t * SPILL_N32 + i] + (i == 0 && t == 3 ? 1000u : 0u)) *
				       (uint32_t)(i + 1);
			for (int i = SPILL_N64 - 1; i >= 0; i--) {
				x ^= in64[t * SPILL_N64 + i] +
				     (i + 1 < SPILL_N64 ? in64[t * SPILL_N64 + i + 1] : 0);
				x = x << 1 | x >> 63;
			}
			EXPECT_EQ(sum, (uint32_t)out[2 * t]) TH_LOG("thread %d seed %llu", t,
								    (unsigned long long)seed);
			EXPECT_EQ(x, out[2 * t + 1]);
		}
	}
	vgpu_args_free(args);
	free(text);
	free(in);
	free(in64);
}

/*
 * A 64-bit add whose temporary and first source are both spilled (nvcc
 * -G's code, cg::reduce(tile16, v, cg::less) in the corpus): add64()
 * writes the temporary's high word last, the write that kills it for the
 * liveness ("partial" unset) though its low word is already in the slot,
 * and the reload for the carry's ISETP had left the source's low word in
 * the scratch register the temporary's low word takes.  The spill code
 * stored that stale word as the sum's low word unless it reloads a wide
 * register's words before an instruction that may write only part of it
 * (or stores only the word a one-word instruction writes).  250 32-bit
 * and 40 64-bit values live to the end, a chain of 64-bit adds over the
 * 64-bit ones in between; each thread's result as C computes it.
 */
#define SPILL64_N32 250
#define SPILL64_N64 40
#define SPILL64_THREADS 64

static char *spill_add64_ptx(void)
{
	char *p = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&p, &len);

	if (!f)
		return NULL;
	fprintf(f, ".version 8.0\n.target sm_90\n.address_size 64\n"
		   ".visible .entry k(.param .u64 in, .param .u64 out)\n{\n"
		   "\t.reg .b32 %%r<%d>;\n\t.reg .b64 %%rd<%d>;\n"
		   "\tld.param.u64 %%rd1, [in];\n\tld.param.u64 %%rd3, [out];\n"
		   "\tmov.u32 %%r1, %%tid.x;\n\tmul.wide.u32 %%rd4, %%r1, 8;\n"
		   "\tadd.s64 %%rd5, %%rd1, %%rd4;\n\tadd.s64 %%rd9, %%rd3, %%rd4;\n",
		SPILL64_N32 + 8, SPILL64_N64 + 16);
	for (int i = 0; i < SPILL64_N32; i++)
		fprintf(f, "\tld.global.u32 %%r%d, [%%rd5+%d];\n", i + 8, 4 * i);
	for (int i = 0; i < SPILL64_N64; i++)
		fprintf(f, "\tld.global.u64 %%rd%d, [%%rd5+%d];\n", i + 16, 4 * SPILL64_N32 + 8 * i);
	fprintf(f, "\tmov.u64 %%rd10, 0;\n");
	for (int i = 0; i < SPILL64_N64; i++)
		fprintf(f, "\tadd.s64 %%rd11, %%rd%d, %%rd10;\n\tadd.s64 %%rd10, %%rd11, 1;\n", i + 16);
	fprintf(f, "\tmov.u32 %%r4, 0;\n");
	for (int i = 0; i < SPILL64_N32; i++)
		fprintf(f, "\tadd.u32 %%r4, %%r4, %%r%d;\n", i + 8);
	for (int i = 0; i < SPILL64_N64; i++)
		fprintf(f, "\txor.b64 %%rd10, %%rd10, %%rd%d;\n", i + 16);
	fprintf(f, "\tcvt.u64.u32 %%rd12, %%r4;\n\tadd.s64 %%rd10, %%rd10, %%rd12;\n"
		   "\tst.global.u64 [%%rd9], %%rd10;\n\tret;\n}\n");
	if (fclose(f)) {
		free(p);
		return NULL;
	}
	return p;
}

TEST_F(ptx, spill_add64)
{
	enum { W = 2 * SPILL64_THREADS + SPILL64_N32 + 2 * SPILL64_N64 };
	uint32_t in[W];
	uint64_t out[SPILL64_THREADS];
	struct vgpu_args *args = NULL;
	char *text = spill_add64_ptx(), *dis = NULL;
	size_t dlen = 0;
	FILE *f;
	int ret;

	ASSERT_NE(NULL, text);
	for (int i = 0; i < W; i++)
		in[i] = (uint32_t)i * 2654435761u;
	ret = vgpu_program_from_ptx(self->dev, text, strlen(text), "spill_add64.ptx",
				    &self->prog, self->log, sizeof(self->log));
	ASSERT_EQ(0, ret) TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	/* it did spill */
	f = open_memstream(&dis, &dlen);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, vgpu_program_disassemble(self->prog, f));
	fclose(f);
	EXPECT_NE(NULL, strstr(dis, "R239"));
	free(dis);
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, vgpu_args_set_bo(args, (unsigned)i, self->bo[i], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, SPILL64_THREADS, 0, true));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
	for (int t = 0; t < SPILL64_THREADS; t++) {
		const uint32_t *w = in + 2 * t;
		uint64_t acc = 0;
		uint32_t sum = 0;

		for (int i = 0; i < SPILL64_N64; i++)
			acc += ((uint64_t)w[SPILL64_N32 + 2 * i + 1] << 32 | w[SPILL64_N32 + 2 * i]) + 1;
		for (int i = 0; i < SPILL64_N32; i++)
			sum += w[i];
		for (int i = 0; i < SPILL64_N64; i++)
			acc ^= (uint64_t)w[SPILL64_N32 + 2 * i + 1] << 32 | w[SPILL64_N32 + 2 * i];
		EXPECT_EQ(acc + sum, out[t]) TH_LOG("thread %d", t);
	}
	vgpu_args_free(args);
	free(text);
}

/*
 * rcp.approx.ftz.f64 as the GPU computes it (tests/ptx/gen): 1 / (x's
 * high word alone), truncated to its high word; for normal x not near
 * the range's ends.
 */
static double rcp64h(double x)
{
	uint64_t v;
	double r;

	memcpy(&v, &x, 8);
	v &= 0xffffffff00000000ull;
	memcpy(&r, &v, 8);
	fesetround(FE_TOWARDZERO);
	r = 1.0 / r;
	fesetround(FE_TONEAREST);
	memcpy(&v, &r, 8);
	v &= 0xffffffff00000000ull;
	memcpy(&r, &v, 8);
	return r;
}

/* rsqrt.approx.f64: within PTX's error, here 1/sqrt rounded twice; rcp.approx.ftz.f64: rcp64h */
TEST_F(ptx, f64_approx)
{
	static const char src[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k(.param .u64 p)\n{\n"
		"\t.reg .f64 %fd<4>;\n\t.reg .b64 %rd<4>;\n\t.reg .b32 %r<2>;\n"
		"\tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, %tid.x;\n"
		"\tmul.wide.u32 %rd2, %r1, 24;\n\tadd.s64 %rd3, %rd1, %rd2;\n"
		"\tld.global.f64 %fd1, [%rd3];\n"
		"\trsqrt.approx.f64 %fd2, %fd1;\n\trcp.approx.ftz.f64 %fd3, %fd1;\n"
		"\tst.global.f64 [%rd3+8], %fd2;\n\tst.global.f64 [%rd3+16], %fd3;\n\tret;\n}\n";
	double io[32 * 3];
	struct vgpu_args *args = NULL;

	for (int t = 0; t < 32; t++) {
		io[3 * t] = 0.1 + t * 7.25;
		io[3 * t + 1] = io[3 * t + 2] = 0;
	}
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, strlen(src), "f64_approx.ptx",
					   &self->prog, self->log, sizeof(self->log)))
		TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, buf(self, 0, io, sizeof(io)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 32, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, io, sizeof(io)));
	for (int t = 0; t < 32; t++) {
		double x = 0.1 + t * 7.25;

		EXPECT_EQ(1.0 / sqrt(x), io[3 * t + 1]) TH_LOG("rsqrt(%g)", x);
		EXPECT_EQ(rcp64h(x), io[3 * t + 2]) TH_LOG("rcp(%g)", x);
		/* PTX: a maximum relative error of 2^-20 or so */
		EXPECT_TRUE(fabs(io[3 * t + 2] * x - 1.0) < 0x1p-19) TH_LOG("rcp(%g)", x);
	}
	vgpu_args_free(args);
}

/*
 * f32 add sub mul fma div sqrt rcp in each IEEE direction (.rn .rz .rm
 * .rp): the device's results equal the host's under fesetround, bit for
 * bit, over random values and the awkward ones (ties, subnormals,
 * overflow, exact cancellation to zero, infinities, NaN).
 */
#define RND_N 1024
static const char *const rnd_ops[] = { "add", "sub", "mul", "fma", "div", "sqrt", "rcp" };
static const char *const rnd_modes[] = { "rn", "rz", "rm", "rp" };
static const int rnd_fe[] = { FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD };

/* noinline: the compiler must not move the arithmetic across fesetround */
__attribute__((noinline)) static float rnd_ref(int op, float a, float b, float c)
{
	volatile float x = a, y = b, z = c;

	switch (op) {
	case 0: return x + y;
	case 1: return x - y;
	case 2: return x * y;
	case 3: return fmaf(x, y, z);
	case 4: return x / y;
	case 5: return sqrtf(x);
	default: return 1.0f / x;
	}
}

TEST_F(ptx, f32_rounding)
{
	char src[16384];
	size_t n = 0;
	float *in = malloc(3 * RND_N * sizeof(float));
	uint32_t *out = malloc(7 * 4 * RND_N * sizeof(uint32_t));
	struct vgpu_args *args = NULL;
	uint64_t rng = 12345;
	static const uint32_t odd[] = {
		0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff,
		0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0xbf800000, 0x33800000,
		0x00000000, 0x80000000, 0x4b800001, 0x34000000,
	};

	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	for (int i = 0; i < 3 * RND_N; i++) {
		uint32_t r;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		r = (uint32_t)rng;
		if (i % 7 == 0)
			r = odd[(rng >> 40) % (sizeof(odd) / sizeof(odd[0]))];
		else if (i % 3 == 0) /* near in magnitude to its neighbour: cancellation */
			r = (i ? ((uint32_t *)in)[i - 1] : r) ^ (r & 0x8000000f);
		memcpy(&in[i], &r, 4);
	}
	n += (size_t)snprintf(src + n, sizeof(src) - n,
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
		"\t.reg .f32 %%f<8>;\n\t.reg .b64 %%rd<8>;\n\t.reg .b32 %%r<4>;\n"
		"\tld.param.u64 %%rd1, [pin];\n\tld.param.u64 %%rd2, [pout];\n"
		"\tmov.u32 %%r1, %%ctaid.x;\n\tmov.u32 %%r2, %%ntid.x;\n\tmov.u32 %%r3, %%tid.x;\n"
		"\tmad.lo.u32 %%r1, %%r1, %%r2, %%r3;\n"
		"\tmul.wide.u32 %%rd3, %%r1, 12;\n\tadd.s64 %%rd4, %%rd1, %%rd3;\n"
		"\tmul.wide.u32 %%rd5, %%r1, 112;\n\tadd.s64 %%rd6, %%rd2, %%rd5;\n"
		"\tld.global.f32 %%f1, [%%rd4];\n\tld.global.f32 %%f2, [%%rd4+4];\n"
		"\tld.global.f32 %%f3, [%%rd4+8];\n");
	for (int o = 0; o < 7; o++)
		for (int m = 0; m < 4; m++) {
			const char *mode = rnd_modes[m];

			switch (o) {
			case 3: n += (size_t)snprintf(src + n, sizeof(src) - n,
					"\tfma.%s.f32 %%f4, %%f1, %%f2, %%f3;\n", mode); break;
			case 5: case 6: n += (size_t)snprintf(src + n, sizeof(src) - n,
					"\t%s.%s.f32 %%f4, %%f1;\n", rnd_ops[o], mode); break;
			default: n += (size_t)snprintf(src + n, sizeof(src) - n,
					"\t%s.%s.f32 %%f4, %%f1, %%f2;\n", rnd_ops[o], mode); break;
			}
			n += (size_t)snprintf(src + n, sizeof(src) - n,
				"\tst.global.f32 [%%rd6+%d], %%f4;\n", 4 * (4 * o + m));
		}
	n += (size_t)snprintf(src + n, sizeof(src) - n, "\tret;\n}\n");
	ASSERT_LT(n, sizeof(src));
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, n, "f32_rounding.ptx", &self->prog,
					   self->log, sizeof(self->log)))
		TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, buf(self, 0, in, 3 * RND_N * sizeof(float)));
	ASSERT_EQ(0, buf(self, 1, NULL, 7 * 4 * RND_N * sizeof(uint32_t)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, RND_N / 128, 128, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, 7 * 4 * RND_N * sizeof(uint32_t)));
	for (int t = 0, nbad = 0; t < RND_N && nbad < 10; t++)
		for (int o = 0; o < 7; o++)
			for (int m = 0; m < 4; m++) {
				float want;
				uint32_t w, got = out[28 * t + 4 * o + m];

				fesetround(rnd_fe[m]);
				want = rnd_ref(o, in[3 * t], in[3 * t + 1], in[3 * t + 2]);
				fesetround(FE_TONEAREST);
				memcpy(&w, &want, 4);
				if (isnan(want) && ((got & 0x7f800000) == 0x7f800000) && (got & 0x7fffff))
					continue; /* any NaN */
				if (w != got) {
					nbad++;
					EXPECT_EQ(w, got) TH_LOG("%s.%s(%a, %a, %a) = 0x%08x, want 0x%08x",
							    rnd_ops[o], rnd_modes[m], in[3 * t],
							    in[3 * t + 1], in[3 * t + 2], got, w);
				}
			}
	vgpu_args_free(args);
	free(in);
	free(out);
}

/*
 * cvt in every rounding: f32 to s32/u32 (.rni .rzi .rmi .rpi, saturating,
 * NaN to 0), s32/u32 to f32 (.rn .rz .rm .rp) and f32 to an integral f32
 * (rintf truncf floorf ceilf), against the host.
 */
__attribute__((noinline)) static float i2f_ref(uint32_t i, bool sign)
{
	volatile int32_t si = (int32_t)i;
	volatile uint32_t ui = i;

	return sign ? (float)si : (float)ui;
}

static uint32_t cvt_sat(float f, bool sign)
{
	if (isnan(f))
		return 0;
	if (sign)
		return f <= -2147483648.0f ? 0x80000000u :
		       f >= 2147483648.0f  ? 0x7fffffffu : (uint32_t)(int32_t)f;
	return f <= 0 ? 0 : f >= 4294967296.0f ? 0xffffffffu : (uint32_t)f;
}

TEST_F(ptx, cvt_rounding)
{
	static const char *const ir[] = { "rni", "rzi", "rmi", "rpi" };
	static const char *const fr[] = { "rn", "rz", "rm", "rp" };
	enum { N = 512, W = 20 };
	char src[8192];
	size_t n = 0;
	uint32_t in[2 * N], out[W * N];
	struct vgpu_args *args = NULL;
	uint64_t rng = 99;

	for (int i = 0; i < 2 * N; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		in[i] = (uint32_t)rng;
		if (i % 2 == 0 && i % 6 != 0) { /* floats around the integers */
			float f = (float)((int32_t)(rng >> 40) % 4000) / 4.0f;

			memcpy(&in[i], &f, 4);
		}
	}
	n += (size_t)snprintf(src + n, sizeof(src) - n,
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
		"\t.reg .f32 %%f<4>;\n\t.reg .b64 %%rd<8>;\n\t.reg .b32 %%r<8>;\n"
		"\tld.param.u64 %%rd1, [pin];\n\tld.param.u64 %%rd2, [pout];\n"
		"\tmov.u32 %%r1, %%ctaid.x;\n\tmov.u32 %%r2, %%ntid.x;\n\tmov.u32 %%r3, %%tid.x;\n"
		"\tmad.lo.u32 %%r1, %%r1, %%r2, %%r3;\n"
		"\tmul.wide.u32 %%rd3, %%r1, 8;\n\tadd.s64 %%rd4, %%rd1, %%rd3;\n"
		"\tmul.wide.u32 %%rd5, %%r1, %d;\n\tadd.s64 %%rd6, %%rd2, %%rd5;\n"
		"\tld.global.f32 %%f1, [%%rd4];\n\tld.global.u32 %%r4, [%%rd4+4];\n", 4 * W);
	for (int m = 0; m < 4; m++)
		n += (size_t)snprintf(src + n, sizeof(src) - n,
			"\tcvt.%s.s32.f32 %%r5, %%f1;\n\tst.global.u32 [%%rd6+%d], %%r5;\n"
			"\tcvt.%s.u32.f32 %%r5, %%f1;\n\tst.global.u32 [%%rd6+%d], %%r5;\n"
			"\tcvt.%s.f32.s32 %%f2, %%r4;\n\tst.global.f32 [%%rd6+%d], %%f2;\n"
			"\tcvt.%s.f32.u32 %%f2, %%r4;\n\tst.global.f32 [%%rd6+%d], %%f2;\n"
			"\tcvt.%s.f32.f32 %%f2, %%f1;\n\tst.global.f32 [%%rd6+%d], %%f2;\n",
			ir[m], 4 * (5 * m), ir[m], 4 * (5 * m + 1), fr[m], 4 * (5 * m + 2),
			fr[m], 4 * (5 * m + 3), ir[m], 4 * (5 * m + 4));
	n += (size_t)snprintf(src + n, sizeof(src) - n, "\tret;\n}\n");
	ASSERT_LT(n, sizeof(src));
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, n, "cvt_rounding.ptx", &self->prog,
					   self->log, sizeof(self->log)))
		TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, N / 128, 128, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
	for (int t = 0, nbad = 0; t < N && nbad < 10; t++) {
		float f, r;
		uint32_t i = in[2 * t + 1], want[W];

		memcpy(&f, &in[2 * t], 4);
		for (int m = 0; m < 4; m++) {
			float a, b;

			r = m == 0 ? nearbyintf(f) : m == 1 ? truncf(f) : m == 2 ? floorf(f) : ceilf(f);
			want[5 * m] = cvt_sat(r, true);
			want[5 * m + 1] = cvt_sat(r, false);
			fesetround(rnd_fe[m]);
			a = i2f_ref(i, true);
			b = i2f_ref(i, false);
			fesetround(FE_TONEAREST);
			memcpy(&want[5 * m + 2], &a, 4);
			memcpy(&want[5 * m + 3], &b, 4);
			memcpy(&want[5 * m + 4], &r, 4);
		}
		for (int k = 0; k < W; k++) {
			uint32_t got = out[W * t + k];

			if (isnan(f) && k % 5 == 4 && (got & 0x7f800000) == 0x7f800000)
				continue;
			if (got != want[k]) {
				nbad++;
				EXPECT_EQ(want[k], got) TH_LOG("case %d of %a / 0x%08x", k, f, i);
			}
		}
	}
	vgpu_args_free(args);
}

/* f64 the same: arithmetic and conversions, each in every rounding */
__attribute__((noinline)) static double d_ref(int op, double a, double b, double c)
{
	volatile double x = a, y = b, z = c;

	switch (op) {
	case 0: return x + y;
	case 1: return x - y;
	case 2: return x * y;
	case 3: return fma(x, y, z);
	case 4: return x / y;
	case 5: return sqrt(x);
	default: return 1.0 / x;
	}
}

__attribute__((noinline)) static float d2f_ref(double a)
{
	volatile double x = a;

	return (float)x;
}

/*
 * Through long double (exact for 64-bit integers; fesetround sets the x87
 * rounding too): clang's inline u64 -> double sequence subtracts two
 * equal doubles and gives 0 the sign -0 under FE_DOWNWARD.
 */
__attribute__((noinline)) static double l2d_ref(uint64_t v, bool sign)
{
	volatile long double x = sign ? (long double)(int64_t)v : (long double)v;

	return (double)x;
}

static uint64_t d2l_sat(double r, bool sign, int bits)
{
	if (isnan(r))
		return 0;
	if (bits == 32)
		return sign ? (r <= -2147483648.0 ? 0x80000000u : r >= 2147483647.0 ? 0x7fffffffu :
			       (uint32_t)(int32_t)r) :
			      (r <= 0 ? 0 : r >= 4294967295.0 ? 0xffffffffu : (uint32_t)r);
	return sign ? (r <= -9223372036854775808.0 ? 0x8000000000000000ull :
		       r >= 9223372036854775808.0 ? 0x7fffffffffffffffull : (uint64_t)(int64_t)r) :
		      (r <= 0 ? 0 : r >= 18446744073709551616.0 ? ~0ull : (uint64_t)r);
}

TEST_F(ptx, f64_rounding)
{
	static const char *const ir[] = { "rni", "rzi", "rmi", "rpi" };
	enum { N = 512, W = 7 * 4 + 7 * 4 + 4 }; /* 64-bit words per thread */
	char *src = malloc(32768);
	size_t n = 0;
	uint64_t *in = malloc(4 * N * 8), *out = malloc((size_t)W * N * 8);
	struct vgpu_args *args = NULL;
	uint64_t rng = 4242;
	static const uint64_t odd[] = {
		0x0000000000000001ull, 0x8000000000000001ull, 0x000fffffffffffffull,
		0x7fefffffffffffffull, 0xffefffffffffffffull, 0x7ff0000000000000ull,
		0x3ff0000000000000ull, 0xbff0000000000000ull, 0x3ca0000000000000ull,
		0x0000000000000000ull, 0x8000000000000000ull, 0x4330000000000001ull,
		0x43e0000000000000ull, 0xc3e0000000000000ull, 0x41dfffffffc00000ull,
	};

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	for (int i = 0; i < 4 * N; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		in[i] = rng;
		if (i % 7 == 0)
			in[i] = odd[(rng >> 40) % (sizeof(odd) / sizeof(odd[0]))];
		else if (i % 4 == 3 && i % 8 != 7) { /* an integer-ish double for the conversions */
			double dv = (double)(int64_t)(rng >> 20) / 8.0;

			memcpy(&in[i], &dv, 8);
		} else if (i % 5 == 1 && i) {
			in[i] = in[i - 1] ^ (rng & 0x800000000000000full);
		}
	}
	n += (size_t)snprintf(src + n, 32768 - n,
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
		"\t.reg .f64 %%fd<8>;\n\t.reg .f32 %%f<2>;\n\t.reg .b64 %%rd<12>;\n\t.reg .b32 %%r<6>;\n"
		"\tld.param.u64 %%rd1, [pin];\n\tld.param.u64 %%rd2, [pout];\n"
		"\tmov.u32 %%r1, %%ctaid.x;\n\tmov.u32 %%r2, %%ntid.x;\n\tmov.u32 %%r3, %%tid.x;\n"
		"\tmad.lo.u32 %%r1, %%r1, %%r2, %%r3;\n"
		"\tmul.wide.u32 %%rd3, %%r1, 32;\n\tadd.s64 %%rd4, %%rd1, %%rd3;\n"
		"\tmul.wide.u32 %%rd5, %%r1, %d;\n\tadd.s64 %%rd6, %%rd2, %%rd5;\n"
		"\tld.global.f64 %%fd1, [%%rd4];\n\tld.global.f64 %%fd2, [%%rd4+8];\n"
		"\tld.global.f64 %%fd3, [%%rd4+16];\n\tld.global.u64 %%rd7, [%%rd4+24];\n", 8 * W);
	for (int o = 0; o < 7; o++)
		for (int m = 0; m < 4; m++) {
			const char *mode = rnd_modes[m];

			switch (o) {
			case 3: n += (size_t)snprintf(src + n, 32768 - n,
					"\tfma.%s.f64 %%fd4, %%fd1, %%fd2, %%fd3;\n", mode); break;
			case 5: case 6: n += (size_t)snprintf(src + n, 32768 - n,
					"\t%s.%s.f64 %%fd4, %%fd1;\n", rnd_ops[o], mode); break;
			default: n += (size_t)snprintf(src + n, 32768 - n,
					"\t%s.%s.f64 %%fd4, %%fd1, %%fd2;\n", rnd_ops[o], mode); break;
			}
			n += (size_t)snprintf(src + n, 32768 - n, "\tst.global.f64 [%%rd6+%d], %%fd4;\n",
					      8 * (4 * o + m));
		}
	for (int m = 0; m < 4; m++)
		n += (size_t)snprintf(src + n, 32768 - n,
			"\tcvt.%s.f32.f64 %%f1, %%fd1;\n\tst.global.f32 [%%rd6+%d], %%f1;\n"
			"\tcvt.%s.s32.f64 %%r4, %%fd3;\n\tst.global.u32 [%%rd6+%d], %%r4;\n"
			"\tcvt.%s.u32.f64 %%r4, %%fd3;\n\tst.global.u32 [%%rd6+%d], %%r4;\n"
			"\tcvt.%s.s64.f64 %%rd8, %%fd3;\n\tst.global.u64 [%%rd6+%d], %%rd8;\n"
			"\tcvt.%s.u64.f64 %%rd8, %%fd3;\n\tst.global.u64 [%%rd6+%d], %%rd8;\n"
			"\tcvt.%s.f64.s64 %%fd5, %%rd7;\n\tst.global.f64 [%%rd6+%d], %%fd5;\n"
			"\tcvt.%s.f64.u64 %%fd5, %%rd7;\n\tst.global.f64 [%%rd6+%d], %%fd5;\n",
			rnd_modes[m], 8 * (28 + 7 * m), ir[m], 8 * (28 + 7 * m + 1),
			ir[m], 8 * (28 + 7 * m + 2), ir[m], 8 * (28 + 7 * m + 3),
			ir[m], 8 * (28 + 7 * m + 4), rnd_modes[m], 8 * (28 + 7 * m + 5),
			rnd_modes[m], 8 * (28 + 7 * m + 6));
	for (int m = 0; m < 4; m++) /* to an integral f64 */
		n += (size_t)snprintf(src + n, 32768 - n,
			"\tcvt.%s.f64.f64 %%fd6, %%fd3;\n\tst.global.f64 [%%rd6+%d], %%fd6;\n",
			ir[m], 8 * (56 + m));
	n += (size_t)snprintf(src + n, 32768 - n, "\tret;\n}\n");
	ASSERT_LT(n, (size_t)32768);
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, n, "f64_rounding.ptx", &self->prog,
					   self->log, sizeof(self->log)))
		TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, buf(self, 0, in, 4 * N * 8));
	ASSERT_EQ(0, buf(self, 1, NULL, (size_t)W * N * 8));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, N / 128, 128, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, (size_t)W * N * 8));
	for (int t = 0, nbad = 0; t < N && nbad < 10; t++) {
		double a, b, c, r;
		uint64_t want[W];

		memcpy(&a, &in[4 * t], 8);
		memcpy(&b, &in[4 * t + 1], 8);
		memcpy(&c, &in[4 * t + 2], 8);
		for (int o = 0; o < 7; o++)
			for (int m = 0; m < 4; m++) {
				fesetround(rnd_fe[m]);
				r = d_ref(o, a, b, c);
				fesetround(FE_TONEAREST);
				memcpy(&want[4 * o + m], &r, 8);
			}
		for (int m = 0; m < 4; m++) {
			float f;
			double ri = m == 0 ? nearbyint(c) : m == 1 ? trunc(c) : m == 2 ? floor(c) : ceil(c);

			fesetround(rnd_fe[m]);
			f = d2f_ref(a);
			want[28 + 7 * m + 5] = 0;
			r = l2d_ref(in[4 * t + 3], true);
			memcpy(&want[28 + 7 * m + 5], &r, 8);
			r = l2d_ref(in[4 * t + 3], false);
			memcpy(&want[28 + 7 * m + 6], &r, 8);
			fesetround(FE_TONEAREST);
			want[28 + 7 * m] = 0;
			memcpy(&want[28 + 7 * m], &f, 4);
			want[28 + 7 * m + 1] = d2l_sat(ri, true, 32);
			want[28 + 7 * m + 2] = d2l_sat(ri, false, 32);
			want[28 + 7 * m + 3] = d2l_sat(ri, true, 64);
			want[28 + 7 * m + 4] = d2l_sat(ri, false, 64);
			memcpy(&want[56 + m], &ri, 8);
		}
		for (int k = 0; k < W; k++) {
			uint64_t got = out[W * t + k], w = want[k];

			if (k >= 28 && k < 56 && ((k - 28) % 7 == 0 || (k - 28) % 7 == 1 || (k - 28) % 7 == 2))
				got &= 0xffffffffull; /* 32-bit results: the word written */
			if ((k < 28 || k >= 56) && (w & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
			    (w & 0xfffffffffffffull) && (got & 0x7ff0000000000000ull) == 0x7ff0000000000000ull &&
			    (got & 0xfffffffffffffull))
				continue; /* any NaN */
			if (k >= 28 && k < 56 && (k - 28) % 7 == 0 && (w & 0x7f800000) == 0x7f800000 && (w & 0x7fffff) &&
			    (got & 0x7f800000) == 0x7f800000 && (got & 0x7fffff))
				continue;
			if (got != w) {
				nbad++;
				EXPECT_EQ(w, got) TH_LOG("case %d of %a, %a, %a, 0x%016llx", k, a, b, c,
							 (unsigned long long)in[4 * t + 3]);
			}
		}
	}
	vgpu_args_free(args);
	free(src);
	free(in);
	free(out);
}

/* .ftz: subnormal operands and results are zeros of their sign */
static float flush(float x)
{
	return fpclassify(x) == FP_SUBNORMAL ? copysignf(0.0f, x) : x;
}

TEST_F(ptx, f32_ftz)
{
	static const char src[] =
		".version 8.0\n.target sm_90\n.address_size 64\n"
		".visible .entry k(.param .u64 pin, .param .u64 pout)\n{\n"
		"\t.reg .f32 %f<12>;\n\t.reg .b64 %rd<8>;\n\t.reg .b32 %r<4>;\n\t.reg .pred %p1;\n"
		"\tld.param.u64 %rd1, [pin];\n\tld.param.u64 %rd2, [pout];\n"
		"\tmov.u32 %r1, %tid.x;\n"
		"\tmul.wide.u32 %rd3, %r1, 12;\n\tadd.s64 %rd4, %rd1, %rd3;\n"
		"\tmul.wide.u32 %rd5, %r1, 32;\n\tadd.s64 %rd6, %rd2, %rd5;\n"
		"\tld.global.f32 %f1, [%rd4];\n\tld.global.f32 %f2, [%rd4+4];\n"
		"\tld.global.f32 %f3, [%rd4+8];\n"
		"\tadd.ftz.f32 %f4, %f1, %f2;\n\tst.global.f32 [%rd6], %f4;\n"
		"\tmul.rn.ftz.f32 %f5, %f1, %f2;\n\tst.global.f32 [%rd6+4], %f5;\n"
		"\tfma.rn.ftz.f32 %f6, %f1, %f2, %f3;\n\tst.global.f32 [%rd6+8], %f6;\n"
		"\tdiv.rn.ftz.f32 %f7, %f1, %f2;\n\tst.global.f32 [%rd6+12], %f7;\n"
		"\tsqrt.rn.ftz.f32 %f8, %f3;\n\tst.global.f32 [%rd6+16], %f8;\n"
		"\tmin.ftz.f32 %f9, %f1, %f2;\n\tst.global.f32 [%rd6+20], %f9;\n"
		"\tsetp.gt.ftz.f32 %p1, %f1, 0f00000000;\n\tselp.u32 %r2, 1, 0, %p1;\n"
		"\tst.global.u32 [%rd6+24], %r2;\n"
		"\tsub.rz.ftz.f32 %f10, %f1, %f2;\n\tst.global.f32 [%rd6+28], %f10;\n"
		"\tret;\n}\n";
	enum { T = 128 };
	float in[3 * T], out[8 * T];
	struct vgpu_args *args = NULL;
	uint64_t rng = 7;

	for (int i = 0; i < 3 * T; i++) {
		uint32_t r;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* mostly subnormal or near the bottom of the normals */
		r = (uint32_t)rng & (i % 3 == 2 ? 0x00ffffffu : 0x80ffffffu);
		if (i % 5 == 0)
			r |= 0x3f000000u;
		memcpy(&in[i], &r, 4);
	}
	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, src, strlen(src), "ftz.ptx", &self->prog,
					   self->log, sizeof(self->log)))
		TH_LOG("%s", self->log);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k", &self->k));
	ASSERT_EQ(0, buf(self, 0, in, sizeof(in)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, T, 0, false));
	ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
	for (int t = 0; t < T; t++) {
		float a = flush(in[3 * t]), b = flush(in[3 * t + 1]), c = flush(in[3 * t + 2]);
		float want[8], rz;
		uint32_t g, w1;

		want[0] = flush(a + b);
		want[1] = flush(a * b);
		want[2] = flush(fmaf(a, b, c));
		want[3] = flush(a / b);
		want[4] = flush(sqrtf(c));
		/* min: -0 is less than +0 (the GPU's min) */
		want[5] = a == 0 && b == 0 ? (signbit(a) ? a : b) : flush(fminf(a, b));
		g = a > 0;
		memcpy(&want[6], &g, 4);
		fesetround(FE_TOWARDZERO);
		rz = rnd_ref(1, a, b, 0);
		fesetround(FE_TONEAREST);
		want[7] = flush(rz);
		for (int k = 0; k < 8; k++) {
			memcpy(&g, &out[8 * t + k], 4);
			memcpy(&w1, &want[k], 4);
			if (isnan(want[k]) && isnan(out[8 * t + k]))
				continue;
			EXPECT_EQ(w1, g) TH_LOG("thread %d result %d: %a, %a, %a", t, k,
						in[3 * t], in[3 * t + 1], in[3 * t + 2]);
		}
	}
	vgpu_args_free(args);
}

TEST_F(ptx, bad_input_is_a_located_error)
{
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vgpu_program *prog = NULL;
		char *text = NULL;

		self->log[0] = '\0';
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, bad[i].src,
							 strlen(bad[i].src), "t.ptx", &prog,
							 self->log, sizeof(self->log)))
			TH_LOG("%s", bad[i].name);
		EXPECT_EQ(NULL, prog);
		EXPECT_NE(NULL, strstr(self->log, bad[i].msg))
			TH_LOG("%s: wanted '%s' in:\n%s", bad[i].name, bad[i].msg, self->log);
		EXPECT_EQ(-EINVAL, vgpu_ptx_to_asm(bad[i].src, strlen(bad[i].src), "t.ptx",
						   &text, NULL, 0));
		EXPECT_EQ(NULL, text);
	}
}

/* -S output: every corpus kernel compiles, names its PTX lines */
TEST_F(ptx, every_corpus_kernel_compiles)
{
	for (size_t i = 0; ptx_corpus[i].name; i++) {
		char *text = NULL;

		self->log[0] = '\0';
		ASSERT_EQ(0, vgpu_ptx_to_asm(ptx_corpus[i].text, strlen(ptx_corpus[i].text),
					     ptx_corpus[i].name, &text, self->log,
					     sizeof(self->log)))
			TH_LOG("%s:\n%s", ptx_corpus[i].name, self->log);
		EXPECT_NE(NULL, strstr(text, ".kernel "));
		EXPECT_NE(NULL, strstr(text, " ; // line "));
		free(text);
	}
}

/*
 * A short mutation fuzz of the front end (the libFuzzer target is
 * tests/fuzz/fuzz_ptx.c, `make fuzz`): the corpus with bytes changed,
 * ranges deleted or repeated, lines swapped and ends cut, through the
 * same oracle: an error or a program that assembles, never a crash (the
 * ASan+UBSan variant of make check watches memory).
 */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static size_t mutate(uint64_t *rng, char *buf, size_t len, size_t cap)
{
	static const char alphabet[] = "%.;,[]{}()<>+-@!_:0123456789abcdefxrpdsu \n\t\"/*|";
	size_t a = len ? rng_next(rng) % len : 0, b = len ? rng_next(rng) % len : 0, n;

	if (a > b) {
		size_t t = a;

		a = b;
		b = t;
	}
	switch (rng_next(rng) % 6) {
	case 0: /* change a byte */
		if (len)
			buf[a] = alphabet[rng_next(rng) % (sizeof(alphabet) - 1)];
		return len;
	case 1: /* delete a short range */
		n = b - a > 40 ? 40 : b - a;
		memmove(buf + a, buf + a + n, len - a - n);
		return len - n;
	case 2: /* repeat a short range */
		n = b - a > 40 ? 40 : b - a;
		if (len + n > cap)
			return len;
		memmove(buf + b + n, buf + b, len - b);
		memcpy(buf + b, buf + a, n);
		return len + n;
	case 3: /* cut the end */
		return b;
	case 4: /* a random byte, any value */
		if (len)
			buf[a] = (char)(rng_next(rng) & 0xff);
		return len;
	default: /* swap two bytes */
		if (len) {
			char t = buf[a];

			buf[a] = buf[b];
			buf[b] = t;
		}
		return len;
	}
}

TEST(mutated_corpus_gives_errors_or_programs)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	size_t nk = 0, errors = 0, programs = 0;

	while (ptx_corpus[nk].name)
		nk++;
	for (int i = 0; i < 3000; i++) {
		const char *src = ptx_corpus[rng_next(&rng) % nk].text;
		size_t len = strlen(src), cap = len + 4096;
		char *buf = malloc(cap);
		char *text = NULL;

		ASSERT_NE(NULL, buf);
		memcpy(buf, src, len);
		for (int m = 1 + (int)(rng_next(&rng) % 4); m > 0; m--)
			len = mutate(&rng, buf, len, cap);
		ASSERT_EQ(0, ptx_oracle((const uint8_t *)buf, len)) TH_LOG("mutation %d", i);
		if (vgpu_ptx_to_asm(buf, len, "m.ptx", &text, NULL, 0))
			errors++;
		else
			programs++;
		free(text);
		free(buf);
	}
	/* both outcomes occur: the mutations are neither all fatal nor all harmless */
	EXPECT_GT(errors, 100u);
	EXPECT_GT(programs, 40u);
}

TEST_HARNESS_MAIN
