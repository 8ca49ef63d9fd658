// SPDX-License-Identifier: MIT
/*
 * The PTX front end on real compiler output: each kernel of tests/ptx/
 * (CUDA compiled to PTX by Debian's clang at build time, embedded by
 * scripts/ptx-corpus.sh) is loaded with vgpu_program_from_ptx() and run
 * on the device's backend (sim on the host, drm in the guest) under the
 * default and random schedules, with the sanitizer on and off; every
 * result is checked against the same computation done here on the host.
 * This file: integer, bitfield, local, warp, call, global, printf kernels.
 * More kernels and nvcc's PTX against an H100's results:
 * test_ptx_kernels.c; spills and floating-point rounding:
 * test_ptx_numerics.c; malformed and unsupported PTX (an error naming
 * file, line and construct, never a crash): test_ptx_errors.c.
 */
#include "ptx_test.h"

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

TEST_HARNESS_MAIN
