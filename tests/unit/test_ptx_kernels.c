// SPDX-License-Identifier: MIT
/*
 * The PTX front end on the corpus, after test_ptx.c: tensors, match,
 * f64, compares, shuffles, dynamic shared memory, mbarrier pipelines, math;
 * then nvcc's PTX against what an H100 computed.
 */
#include "ptx_test.h"

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


TEST_HARNESS_MAIN
