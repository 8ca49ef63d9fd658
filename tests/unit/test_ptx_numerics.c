// SPDX-License-Identifier: MIT
/*
 * The PTX front end, after test_ptx.c: more live values than registers
 * (spills), and floating-point rounding (f32, f64, cvt, ftz) checked
 * against the host's.
 */
#include "ptx_test.h"

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

TEST_HARNESS_MAIN
