/* SPDX-License-Identifier: MIT */
/*
 * What the assembler's tests share (test_asm.c, test_asm_async.c,
 * test_asm_obj.c): assembling a source into errbuf's diagnostics, one
 * statement's word, the expected diagnostics, and a disassembly round trip.
 */
#ifndef VGPU_ASM_TEST_H
#define VGPU_ASM_TEST_H

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isa_util.h"
#include "kselftest_host.h"
#include "obj_util.h"
#include "vgpu_asm.h"

#define ERRLEN 8192

static char errbuf[ERRLEN] __attribute__((unused));

static inline int assemble(const char *src, struct vgpu_object *o)
{
	return vgpu_assemble(src, strlen(src), "t.s", o, errbuf, sizeof(errbuf));
}

static inline void load_word(const uint8_t *p, uint64_t w[2])
{
	w[0] = w[1] = 0;
	for (unsigned i = 0; i < 16; i++)
		w[i / 8] |= (uint64_t)p[i] << (8 * (i % 8));
}

/* Assemble one statement; its word in @w.  Returns 0 or the error. */
static inline int asm_one(const char *line, uint64_t w[2])
{
	struct vgpu_object o;
	int ret = assemble(line, &o);

	if (ret)
		return ret;
	if (o.code_size != VGPU_INSN_BYTES) {
		vgpu_object_fini(&o);
		return -ERANGE;
	}
	load_word(o.code, w);
	vgpu_object_fini(&o);
	return 0;
}

/* Expect @src to fail with exactly the diagnostics @expect. */
static inline void expect_errors(struct __test_metadata *_metadata, const char *src,
			  const char *expect)
{
	struct vgpu_object o;
	int ret = assemble(src, &o);

	EXPECT_EQ(-EINVAL, ret);
	EXPECT_STREQ(expect, errbuf);
	EXPECT_TRUE(o.code == NULL && o.nkernels == 0);
}

static inline uint64_t field(const uint64_t w[2], unsigned pos, unsigned width)
{
	return vgpu_field_get(w, pos, width);
}

/* Disassemble @w at @pc and assemble the text at @pc (after NOPs). */
static inline bool round_trip(struct __test_metadata *_metadata, const uint64_t w[2],
		       uint32_t pc, char *text, size_t len)
{
	bool ok;
	char *src = malloc(pc / 4 + len + 16);
	struct vgpu_object o;
	uint64_t back[2];
	bool same;
	int n = vgpu_disasm_insn(w, pc, text, len);

	if (!src || n <= 0 || (size_t)n >= len) {
		free(src);
		return false;
	}
	src[0] = 0;
	for (uint32_t i = 0; i < pc; i += VGPU_INSN_BYTES)
		strcat(src, "NOP\n");
	strcat(src, text);
	ok = !assemble(src, &o);
	EXPECT_TRUE(ok) TH_LOG("\"%s\" does not assemble: %s", text, errbuf);
	if (!ok) {
		free(src);
		return false;
	}
	free(src);
	load_word(o.code + pc, back);
	same = o.code_size == pc + VGPU_INSN_BYTES && back[0] == w[0] &&
	       back[1] == w[1];
	EXPECT_TRUE(same)
		TH_LOG("\"%s\": 0x%016llx 0x%016llx became 0x%016llx 0x%016llx",
		       text, (unsigned long long)w[1], (unsigned long long)w[0],
		       (unsigned long long)back[1], (unsigned long long)back[0]);
	vgpu_object_fini(&o);
	return same;
}


static inline void check_field(struct __test_metadata *_metadata, const char *line,
			const char *name, const uint64_t w[2], unsigned pos,
			unsigned width, int expect)
{
	if (expect >= 0)
		EXPECT_EQ((uint64_t)expect, field(w, pos, width))
			TH_LOG("%s: %s = 0x%llx, expected 0x%x", line, name,
			       (unsigned long long)field(w, pos, width), expect);
}

static inline void check_same_object(struct __test_metadata *_metadata,
			      const struct vgpu_object *a,
			      const struct vgpu_object *b)
{
	ASSERT_EQ(b->code_size, a->code_size);
	ASSERT_EQ(b->nkernels, a->nkernels);
	ASSERT_EQ(b->nparams, a->nparams);
	EXPECT_EQ(0, memcmp(a->code, b->code, a->code_size));
	EXPECT_EQ(0, memcmp(a->kernels, b->kernels, a->nkernels * sizeof(*a->kernels)));
	EXPECT_EQ(0, memcmp(a->params, b->params, a->nparams * sizeof(*a->params)));
}

static inline void object_round_trip(struct __test_metadata *_metadata,
			      const char *src)
{
	bool ok;
	struct vgpu_object o, r;
	char *text;

	ASSERT_EQ(0, assemble(src, &o));
	text = obj_disasm_text(&o);
	ASSERT_NE(NULL, text);
	ok = !assemble(text, &r);
	EXPECT_TRUE(ok)
		TH_LOG("disassembly does not assemble:\n%s\n%s", text, errbuf);
	if (ok) {
		check_same_object(_metadata, &o, &r);
		vgpu_object_fini(&r);
	}
	free(text);
	vgpu_object_fini(&o);
}

#endif
