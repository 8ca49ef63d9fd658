// SPDX-License-Identifier: MIT
/*
 * The PTX front end on issue 31's gaps: %globaltimer and the clocks,
 * bar.red / bar.sync / bar.arrive with the barrier and the count in
 * registers, clz popc bfind, bfe/bfi on 64 bits and with register
 * positions, 64-bit shifts by a register, atom.inc/dec, shfl.sync with c
 * in a register, setmaxnreg, 40 predicates live at once, and the kernel
 * directives a launch must honour.  Kernels: tests/ptx/gaps.cu (clang)
 * and PTX written here; every expected value is computed here from the
 * PTX ISA's definition (section numbers of PTX ISA 9.0), under the
 * default and random schedules, the sanitizer on and off.
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
#include "ptx_corpus.h"

#define SCHEDULES 6

static const char *corpus(const char *name)
{
	for (size_t i = 0; ptx_corpus[i].name; i++)
		if (!strcmp(ptx_corpus[i].name, name))
			return ptx_corpus[i].text;
	return NULL;
}

PTX_FIXTURE(gaps)

/* Compile @text (or corpus file @file when @text is NULL), find @kernel. */
static int load(struct __test_metadata *_metadata, FIXTURE_DATA(gaps) *self,
		const char *file, const char *text, const char *kernel)
{
	if (!text)
		text = corpus(file);
	if (!text) {
		TH_LOG("no %s in the corpus", file);
		return -ENOENT;
	}
	return ptx_load(_metadata, self, file, text, kernel);
}


/* PTX ISA 10.24, 10.28: %clock64 counts cycles, %globaltimer nanoseconds;
 * on vGPU both run with the SM clock (docs/core.md), monotonic */
TEST_F(gaps, globaltimer_and_clocks)
{
	uint64_t out[64 * 8];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "gaps", NULL, "gtimer"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, run(_metadata, self, args, 1, 64, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (int t = 0; t < 64; t++) {
			const uint64_t *o = &out[8 * t];

			EXPECT_LE(o[0], o[1]) TH_LOG("t %d seed %llu", t, (unsigned long long)s);
			EXPECT_LE(o[1], o[2]);
			EXPECT_GE(o[2] - o[0], 5000u) TH_LOG("the spin waited 5000 ns");
			EXPECT_LT(o[3], o[5]);
			EXPECT_LE((uint32_t)o[3], o[4]);
			EXPECT_LE(o[4], (uint32_t)o[5]);
			EXPECT_LE(o[2], o[3]) TH_LOG("both clocks are the SM clock");
		}
	}
	vgpu_args_free(args);
}

/* PTX ISA 9.7.13.1 bar/barrier: bar.red with a and b in registers */
TEST_F(gaps, bar_with_registers)
{
	uint32_t out[128 * 6];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "gaps", NULL, "bar_regs"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, 1));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, 128));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 128, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 128; t++) {
			const uint32_t *o = &out[6 * t];

			EXPECT_EQ(43u, o[0]) TH_LOG("t %u seed %llu", t, (unsigned long long)s);
			EXPECT_EQ(1u, o[1]);
			EXPECT_EQ(1u, o[2]);
			EXPECT_EQ(0u, o[3]);
			EXPECT_EQ(100u, o[4]);
			EXPECT_EQ(t < 64 ? 0xeeeeeeeeu : (t - 64) * 3 + 1, o[5]);
		}
	}
	vgpu_args_free(args);
}

/* ---- bit operations (PTX ISA 9.7.1: clz popc bfind bfe bfi; 9.7.8 shl shr) ---- */

static int clz64(uint64_t x)
{
	return x ? __builtin_clzll(x) : 64;
}

static uint64_t ref_bfe(uint64_t a, uint32_t pos, uint32_t len, int bits, int sign)
{
	int msb = bits - 1, sbit = 0;
	uint64_t d = 0;

	pos &= 0xff;
	len &= 0xff;
	if (sign && len)
		sbit = (int)(a >> ((int)(pos + len - 1) < msb ? pos + len - 1 : (uint32_t)msb)) & 1;
	for (int i = 0; i <= msb; i++) {
		int bit = ((uint32_t)i < len && pos + (uint32_t)i <= (uint32_t)msb) ?
				  (int)(a >> (pos + (uint32_t)i)) & 1 : sbit;

		d |= (uint64_t)bit << i;
	}
	return d;
}

static uint64_t ref_bfi(uint64_t a, uint64_t b, uint32_t pos, uint32_t len, int bits)
{
	uint64_t f = b;

	pos &= 0xff;
	len &= 0xff;
	for (uint32_t i = 0; i < len && pos + i <= (uint32_t)bits - 1; i++)
		f = (f & ~(1ull << (pos + i))) | (((a >> i) & 1) << (pos + i));
	return bits == 32 ? (uint32_t)f : f;
}

static uint64_t shl64(uint64_t x, uint32_t n) { return n >= 64 ? 0 : x << n; }
static uint64_t shru64(uint64_t x, uint32_t n) { return n >= 64 ? 0 : x >> n; }
static uint64_t shrs64(uint64_t x, uint32_t n)
{
	return (uint64_t)((int64_t)x >> (n >= 64 ? 63 : n));
}

static void ref_bits(uint32_t i, uint32_t seed, uint64_t *o)
{
	uint32_t a = (i + seed) * 2654435761u >> (i % 32), b = ~a * 40503u + i;
	uint64_t A = ((uint64_t)(a ^ 0x5bd1e995u) << 32 | b) >> (i % 64);
	uint64_t B = (uint64_t)b * 0x9e3779b97f4a7c15ull;
	uint32_t pos = (i * 7) % 70, len = (i * 13) % 70, sh = (i * 5) % 101, sa;
	int c32, c64;

	if (i % 16 == 0)
		a = 0, A = 0;
	c32 = a ? __builtin_clz(a) : 32;
	c64 = clz64(A);
	o[0] = (uint32_t)c32;
	o[1] = (uint32_t)c64;
	o[2] = (uint32_t)__builtin_popcount(a);
	o[3] = (uint32_t)__builtin_popcountll(A);
	o[4] = a ? 31u - (uint32_t)c32 : 0xffffffffu;
	sa = (int32_t)a < 0 ? ~a : a;
	o[5] = sa ? 31u - (uint32_t)__builtin_clz(sa) : 0xffffffffu;
	o[6] = a ? (uint32_t)c32 : 0xffffffffu;
	o[7] = A ? 63u - (uint32_t)c64 : 0xffffffffu;
	{
		uint64_t sA = (int64_t)A < 0 ? ~A : A;

		o[8] = sA ? 63u - (uint32_t)clz64(sA) : 0xffffffffu;
	}
	o[9] = A ? (uint32_t)c64 : 0xffffffffu;
	o[10] = ref_bfe(a, pos, len, 32, 0);
	o[11] = ref_bfe(a, pos, len, 32, 1);
	o[12] = ref_bfi(a, b, pos, len, 32);
	o[13] = ref_bfe(A, pos, len, 64, 0);
	o[14] = ref_bfe(A, pos, len, 64, 1);
	o[15] = ref_bfi(A, B, pos, len, 64);
	o[16] = ref_bfe(A, 12, 40, 64, 0);
	o[17] = ref_bfi(A, B, 60, 9, 64);
	o[18] = shl64(A, sh);
	o[19] = shru64(B, sh);
	o[20] = shrs64(B, sh);
	o[21] = shrs64(A | 1ull << 63, sh);
	o[22] = shl64(B, 0xffffffe0u + sh);
	o[23] = 0;
}

TEST_F(gaps, bit_operations)
{
	static const char *const what[24] = {
		"clz.b32", "clz.b64", "popc.b32", "popc.b64", "bfind.u32", "bfind.s32",
		"bfind.shiftamt.u32", "bfind.u64", "bfind.s64", "bfind.shiftamt.u64",
		"bfe.u32", "bfe.s32", "bfi.b32", "bfe.u64", "bfe.s64", "bfi.b64",
		"bfe.u64 12,40", "bfi.b64 60,9", "shl.b64", "shr.u64", "shr.s64",
		"shr.s64 negative", "shl.b64 wrapped amount", "shr.u64 64",
	};
	const uint32_t n = 2 * 64, seed = 977;
	uint64_t *out = calloc(n * 24, sizeof(*out)), want[24];
	struct vgpu_args *args = NULL;

	ASSERT_NE(NULL, out);
	ASSERT_EQ(0, load(_metadata, self, "gaps", NULL, "bits"));
	ASSERT_EQ(0, buf(self, 0, NULL, n * 24 * sizeof(*out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, seed));
	for (uint64_t s = 0; s < 3; s++) {
		ASSERT_EQ(0, run(_metadata, self, args, 2, 64, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, n * 24 * sizeof(*out)));
		for (uint32_t i = 0; i < n; i++) {
			ref_bits(i, seed, want);
			for (int k = 0; k < 24; k++) {
				ASSERT_EQ(want[k], out[24 * i + k])
					TH_LOG("thread %u: %s", i, what[k]);
			}
		}
	}
	vgpu_args_free(args);
	free(out);
}

/* ---- atom.inc / atom.dec (PTX ISA 9.7.13.5) ---- */

static uint32_t ref_inc(uint32_t v, uint32_t b) { return v >= b ? 0 : v + 1; }
static uint32_t ref_dec(uint32_t v, uint32_t b) { return v == 0 || v > b ? b : v - 1; }

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Whatever the order of the @n operations, the values they saw are the
 * first @n of the sequence from @start: compare sorted, and the final one.
 */
static void want_seq(struct __test_metadata *_metadata, const uint32_t *got, int stride,
		     int n, uint32_t start, uint32_t bound, bool inc, uint32_t final,
		     const char *what)
{
	uint32_t g[64], w[64], v = start;

	for (int k = 0; k < n; k++) {
		g[k] = got[k * stride];
		w[k] = v;
		v = inc ? ref_inc(v, bound) : ref_dec(v, bound);
	}
	qsort(g, (size_t)n, sizeof(g[0]), cmp_u32);
	qsort(w, (size_t)n, sizeof(w[0]), cmp_u32);
	for (int k = 0; k < n; k++) {
		ASSERT_EQ(w[k], g[k]) TH_LOG("%s: value %d", what, k);
	}
	ASSERT_EQ(v, final) TH_LOG("%s: the final value", what);
}

TEST_F(gaps, atom_inc_dec)
{
	const uint32_t bound = 5;
	uint32_t out[64 * 4], g[4], odd[32];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "gaps", NULL, "incdec"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(g)));
	ASSERT_EQ(0, buf(self, 1, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 1, self->bo[1], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, bound));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, (uint32_t[4]){ 0, 7, 0, 0 }, sizeof(g)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 64, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, g, sizeof(g)));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[1], 0, out, sizeof(out)));
		want_seq(_metadata, &out[0], 4, 64, 0, bound, true, g[2], "atom.shared.inc");
		want_seq(_metadata, &out[1], 4, 64, 3, bound, false, g[3], "atom.shared.dec");
		want_seq(_metadata, &out[2], 4, 64, 0, bound, true, g[0], "atom.global.inc");
		for (int t = 0; t < 64; t++) {
			if (t % 2)
				odd[t / 2] = out[4 * t + 3];
			else
				ASSERT_EQ(12345u, out[4 * t + 3]) TH_LOG("guard false at %d", t);
		}
		want_seq(_metadata, odd, 1, 32, 7, bound, false, g[1], "generic atom.dec");
	}
	vgpu_args_free(args);
}

/* ---- shfl.sync with c in a register (PTX ISA 9.7.9.6) ---- */

static void ref_shfl(uint32_t lane, int mode, uint32_t b, uint32_t c, uint32_t *d, uint32_t *p)
{
	uint32_t seg = c >> 8 & 0x1f, mn = lane & seg, mx = mn | (c & 0x1f & ~seg);
	int32_t j;
	bool ok;

	b &= 0x1f;
	switch (mode) {
	case 0: j = (int32_t)lane - (int32_t)b; ok = j >= (int32_t)mx; break;
	case 1: j = (int32_t)(lane + b); ok = j <= (int32_t)mx; break;
	case 2: j = (int32_t)(lane ^ b); ok = j <= (int32_t)mx; break;
	default: j = (int32_t)(mn | (b & ~seg)); ok = j <= (int32_t)mx; break;
	}
	if (!ok)
		j = (int32_t)lane;
	*d = (uint32_t)j * 1000 + 7;
	*p = ok;
}

TEST_F(gaps, shfl_c_in_a_register)
{
	static const uint32_t cs[] = { 0x1f, 0, 0x181f, 0x1800, 0x1007, 0x1c03, 0x1e00 };
	uint32_t out[32 * 10];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, "gaps", NULL, "shfl_reg"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (size_t ci = 0; ci < sizeof(cs) / sizeof(cs[0]); ci++) {
		ASSERT_EQ(0, vgpu_args_set_u32(args, 1, cs[ci]));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 32, ci));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t l = 0; l < 32; l++)
			for (int k = 0; k < 5; k++) {
				uint32_t d, p;

				ref_shfl(l, k == 4 ? 0 : k, (l * 3) % 11, cs[ci], &d, &p);
				ASSERT_EQ(d, out[10 * l + 2 * k]) TH_LOG("c %#x lane %u mode %d", cs[ci], l, k);
				ASSERT_EQ(p, out[10 * l + 2 * k + 1]) TH_LOG("c %#x lane %u mode %d |p", cs[ci], l, k);
			}
	}
	vgpu_args_free(args);
}

/* ---- 40 predicates live at once (issue 31 §3): some live in registers ---- */

#define NP 40

static uint32_t pred_limit(int k)
{
	return (uint32_t)k * 0x06000000u + 12345u * (uint32_t)k;
}

/*
 * p_k = x > limit(k) for all 40, all live until the end; in between, one
 * instruction guarded by p5, a branch on !p7 and a setp combining p9 and
 * p11 into p12; then acc = acc * 3 + p_k for k = 39..0.
 */
static char *preds_ptx(void)
{
	size_t cap = 16384, n = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
#define P(...) (n += (size_t)snprintf(s + n, cap - n, __VA_ARGS__))
	P(".version 8.5\n.target sm_90a\n.address_size 64\n"
	  ".visible .entry preds40(.param .u64 out, .param .u32 seed)\n{\n"
	  " .reg .pred %%p<%d>;\n .reg .b32 %%r<8>;\n .reg .b64 %%rd<4>;\n"
	  " ld.param.u64 %%rd1, [out];\n ld.param.u32 %%r1, [seed];\n"
	  " mov.u32 %%r2, %%tid.x;\n add.u32 %%r3, %%r2, 1;\n mul.lo.u32 %%r1, %%r1, %%r3;\n"
	  " mul.lo.u32 %%r1, %%r1, -1640531535;\n", NP);
	for (int k = 0; k < NP; k++)
		P(" setp.gt.u32 %%p%d, %%r1, %u;\n", k, pred_limit(k));
	P(" mov.u32 %%r4, 0;\n @%%p5 add.u32 %%r4, %%r4, 1000;\n @!%%p7 bra SKIP;\n"
	  " add.u32 %%r4, %%r4, 7;\nSKIP:\n"
	  " setp.ne.and.u32 %%p12, %%r1, 0, %%p9;\n"
	  " setp.eq.or.u32 %%p12, %%r1, 77, %%p12;\n"
	  " mov.u32 %%r5, 0;\n");
	for (int k = NP - 1; k >= 0; k--)
		P(" mul.lo.u32 %%r5, %%r5, 3;\n selp.u32 %%r6, 1, 0, %%p%d;\n"
		  " add.u32 %%r5, %%r5, %%r6;\n", k);
	P(" selp.u32 %%r6, 1, 0, %%p12;\n"
	  " mul.wide.u32 %%rd2, %%r2, 12;\n add.u64 %%rd3, %%rd1, %%rd2;\n"
	  " st.global.u32 [%%rd3], %%r5;\n st.global.u32 [%%rd3+4], %%r4;\n"
	  " st.global.u32 [%%rd3+8], %%r6;\n ret;\n}\n");
#undef P
	return s;
}

TEST_F(gaps, forty_live_predicates)
{
	const uint32_t seed = 0x1234567;
	uint32_t out[64 * 3];
	struct vgpu_args *args = NULL;
	char *text = preds_ptx();

	ASSERT_NE(NULL, text);
	ASSERT_EQ(0, load(_metadata, self, "preds40.ptx", text, "preds40"));
	free(text);
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, seed));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, run(_metadata, self, args, 1, 64, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 64; t++) {
			uint32_t x = seed * (t + 1) * 2654435761u, acc = 0, extra = 0;
			bool p[NP];

			for (int k = 0; k < NP; k++)
				p[k] = x > pred_limit(k);
			if (p[5])
				extra += 1000;
			if (p[7])
				extra += 7;
			p[12] = (x != 0 && p[9]) || x == 77;
			for (int k = NP - 1; k >= 0; k--)
				acc = acc * 3 + p[k];
			ASSERT_EQ(acc, out[3 * t]) TH_LOG("thread %u", t);
			ASSERT_EQ(extra, out[3 * t + 1]) TH_LOG("thread %u", t);
			ASSERT_EQ((uint32_t)p[12], out[3 * t + 2]) TH_LOG("thread %u", t);
		}
	}
	vgpu_args_free(args);
}

/* ---- kernel directives (PTX ISA 11.4, 11.7) at launch ---- */

static const char directives_ptx[] =
	".version 8.5\n.target sm_90a\n.address_size 64\n"
	".visible .entry req(.param .u64 out)\n.reqntid 64, 1, 1\n.maxnreg 128\n{\n"
	" ret;\n}\n"
	".visible .entry maxt(.param .u64 out)\n.maxntid 32, 2, 1\n.minnctapersm 4\n{\n"
	" ret;\n}\n"
	/* what __cluster_dims__(4, 1, 1) compiles to */
	".visible .entry clus(.param .u64 out)\n.explicitcluster\n.reqnctapercluster 4, 1, 1\n{\n"
	" .reg .b32 %r<4>;\n .reg .b64 %rd<4>;\n"
	" ld.param.u64 %rd1, [out];\n mov.u32 %r1, %ctaid.x;\n"
	" mov.u32 %r2, %cluster_nctarank;\n mul.wide.u32 %rd2, %r1, 4;\n"
	" add.u64 %rd3, %rd1, %rd2;\n st.global.u32 [%rd3], %r2;\n ret;\n}\n"
	".visible .entry expl(.param .u64 out)\n.explicitcluster\n.maxclusterrank 2\n{\n"
	" ret;\n}\n";

static int try_launch(FIXTURE_DATA(gaps) *self, const char *name, uint32_t block0,
		      uint32_t block1, uint32_t cluster0, char *msg, size_t len)
{
	struct vgpu_launch_config cfg = {
		.grid = { 8 }, .block = { block0, block1 }, .cluster = { cluster0 },
	};
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	int ret = vgpu_program_find_kernel(self->prog, name, &self->k), ret2;

	if (ret)
		return ret;
	ret = vgpu_kernel_launch_check(self->k, &cfg, msg, len);
	if (!vgpu_args_new(self->k, &args))
		vgpu_args_set_bo(args, 0, self->bo[0], 0);
	ret2 = vgpu_kernel_launch(self->k, &cfg, args, &job);
	vgpu_args_free(args);
	if (ret2 != ret)
		return -1000; /* the launch and the check must agree */
	if (!ret2)
		ret2 = vgpu_job_wait(job, WAIT_NS);
	vgpu_job_free(job);
	return ret2;
}

TEST_F(gaps, directives_at_launch)
{
	uint32_t out[8];
	char msg[256];

	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, directives_ptx, sizeof(directives_ptx) - 1,
					   "d.ptx", &self->prog, self->log, sizeof(self->log)))
		TH_LOG("%s", self->log);
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	EXPECT_EQ(0, try_launch(self, "req", 64, 1, 0, msg, sizeof(msg)));
	EXPECT_EQ(-EINVAL, try_launch(self, "req", 32, 1, 0, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, ".reqntid 64, 1, 1")) TH_LOG("%s", msg);
	EXPECT_EQ(0, try_launch(self, "maxt", 64, 1, 0, msg, sizeof(msg)));
	EXPECT_EQ(0, try_launch(self, "maxt", 16, 4, 0, msg, sizeof(msg)));
	EXPECT_EQ(-EINVAL, try_launch(self, "maxt", 65, 1, 0, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, ".maxntid 32, 2, 1")) TH_LOG("%s", msg);
	/* no cluster given: the compiled one, 4 CTAs */
	ASSERT_EQ(0, try_launch(self, "clus", 32, 1, 0, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(4u, out[i]) TH_LOG("CTA %d", i);
	}
	EXPECT_EQ(0, try_launch(self, "clus", 32, 1, 4, msg, sizeof(msg)));
	EXPECT_EQ(-EINVAL, try_launch(self, "clus", 32, 1, 2, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, ".reqnctapercluster 4, 1, 1")) TH_LOG("%s", msg);
	EXPECT_EQ(-EINVAL, try_launch(self, "expl", 32, 1, 0, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, ".explicitcluster")) TH_LOG("%s", msg);
	EXPECT_EQ(0, try_launch(self, "expl", 32, 1, 2, msg, sizeof(msg)));
	EXPECT_EQ(-EINVAL, try_launch(self, "expl", 32, 1, 4, msg, sizeof(msg)));
	EXPECT_NE(NULL, strstr(msg, ".maxclusterrank 2")) TH_LOG("%s", msg);
}

/* ---- located errors ---- */

static const struct {
	const char *src, *msg;
} bad[] = {
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " setmaxnreg.inc.sync.aligned.u32 20;\n ret;\n}\n",
	  "t.ptx:6:2: error: setmaxnreg register count 20: a multiple of 8 in 24..256" },
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " setmaxnreg.dec.sync.aligned.u32 100;\n ret;\n}\n",
	  "t.ptx:6:2: error: setmaxnreg register count 100: a multiple of 8 in 24..256" },
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n{\n"
	  " setmaxnreg.inc.u32 240;\n ret;\n}\n",
	  "t.ptx:6:2: error: setmaxnreg must be .sync.aligned.u32" },
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.maxnreg 168\n{\n"
	  " setmaxnreg.inc.sync.aligned.u32 232;\n setmaxnreg.inc.sync.aligned.u32 200;\n ret;\n}\n",
	  "t.ptx:8:2: error: setmaxnreg.inc to 200 registers, fewer than the 232 the warp owns here" },
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.maxnreg 168\n{\n"
	  " setmaxnreg.dec.sync.aligned.u32 240;\n ret;\n}\n",
	  "t.ptx:7:2: error: setmaxnreg.dec to 240 registers, more than the 168 the warp owns here" },
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqntid 64, 32, 1\n{\n"
	  " ret;\n}\n",
	  "t.ptx:5:1: error: .reqntid 64, 32, 1: 2048 threads per CTA, at most 1024" },
	{ ".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.reqnctapercluster 0\n{\n"
	  " ret;\n}\n",
	  "t.ptx:5:20: error: bad value or extra operand in .reqnctapercluster" },
};

TEST_F(gaps, bad_input_is_a_located_error)
{
	/* a warp-specialised kernel's budgets are fine: 168, then 40 or 232 */
	static const char ok[] =
		".version 8.5\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.maxnreg 168\n{\n"
		" .reg .pred %p<2>;\n .reg .b32 %r<2>;\n mov.u32 %r1, %tid.x;\n"
		" setp.lt.u32 %p1, %r1, 128;\n @%p1 bra PROD;\n"
		" setmaxnreg.inc.sync.aligned.u32 232;\n ret;\nPROD:\n"
		" setmaxnreg.dec.sync.aligned.u32 40;\n ret;\n}\n";
	struct vgpu_program *prog = NULL;

	ASSERT_EQ(0, vgpu_program_from_ptx(self->dev, ok, sizeof(ok) - 1, "t.ptx", &prog,
					   self->log, sizeof(self->log))) TH_LOG("%s", self->log);
	vgpu_program_free(prog);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		prog = NULL;
		self->log[0] = '\0';
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, bad[i].src, strlen(bad[i].src),
							 "t.ptx", &prog, self->log,
							 sizeof(self->log)));
		EXPECT_EQ(NULL, prog);
		EXPECT_NE(NULL, strstr(self->log, bad[i].msg))
			TH_LOG("%zu: wanted '%s' in:\n%s", i, bad[i].msg, self->log);
	}
}

TEST_HARNESS_MAIN
