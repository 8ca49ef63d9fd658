// SPDX-License-Identifier: MIT
/*
 * The PTX front end on bad input: malformed and unsupported PTX gives an
 * error naming file, line and construct, never a crash; every corpus
 * kernel compiles; mutated corpus text gives errors or programs.
 */
#include "ptx_test.h"

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
