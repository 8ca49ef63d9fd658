/* SPDX-License-Identifier: MIT */
/*
 * Fuzzing oracles for the assembler, the disassembler, the object-file
 * reader and the core's decoder (vgpu_prog_load), shared by the libFuzzer
 * targets (fuzz_asm.c, fuzz_obj.c: `make fuzz`) and by test_fuzz, which
 * make check runs over the seeds and tests/fuzz/regressions/.
 *
 * asm_oracle(text): vgpu_assemble() gives an object or -EINVAL with a
 * message; an object round-trips: its disassembly (vgpu_disasm_object)
 * assembles to the same code, kernels and parameters, and writing it as
 * an object file and reading that back gives it again.
 *
 * obj_oracle(bytes): vgpu_object_read() of any bytes gives an object or
 * -EINVAL with a message (an object read round-trips as above); the same
 * bytes taken as 128-bit instruction words: vgpu_prog_load() gives a
 * program or -EINVAL, and each word disassembles (vgpu_disasm_insn) to a
 * NUL-terminated line that assembles back to a word that disassembles the
 * same.
 *
 * Each returns 0, or 1 after a message on stderr when the oracle failed.
 */
#ifndef VGPU_ASM_ORACLE_H
#define VGPU_ASM_ORACLE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"

/* The same code, kernels (name, entry, sizes) and parameters. */
static inline int obj_same(const struct vgpu_object *a,
			   const struct vgpu_object *b, const char *what)
{
	if (a->code_size != b->code_size ||
	    memcmp(a->code, b->code, a->code_size))
		return ORACLE_FAIL("%s: the code differs\n", what);
	if (a->nkernels != b->nkernels ||
	    memcmp(a->kernels, b->kernels, a->nkernels * sizeof(*a->kernels)))
		return ORACLE_FAIL("%s: the kernels differ\n", what);
	if (a->nparams != b->nparams ||
	    memcmp(a->params, b->params, a->nparams * sizeof(*a->params)))
		return ORACLE_FAIL("%s: the parameters differ\n", what);
	if (a->data_size != b->data_size ||
	    (a->data_size && memcmp(a->data, b->data, a->data_size)))
		return ORACLE_FAIL("%s: the module data differs\n", what);
	return 0;
}

/* An assembled or read object: disassembly and object file round trips. */
static inline int obj_round_trips(const struct vgpu_object *obj)
{
	static char err[1 << 14];
	struct vgpu_object again;
	char *text = NULL;
	size_t len = 0;
	uint8_t *buf = NULL;
	size_t blen = 0;
	FILE *f;
	int bad = 0;

	f = open_memstream(&text, &len);
	if (!f)
		return 0; /* out of memory: nothing to check */
	if (vgpu_disasm_object(obj, f)) {
		fclose(f);
		free(text);
		return ORACLE_FAIL("vgpu_disasm_object failed on an object\n");
	}
	fclose(f);
	if (vgpu_assemble(text, len, "disasm.vgs", &again, err, sizeof(err))) {
		bad = ORACLE_FAIL("the disassembly does not assemble:\n%s\n%s", err, text);
	} else {
		bad = obj_same(obj, &again, "disassembly -> assembly");
		if (bad)
			fprintf(stderr, "%s", text);
		vgpu_object_fini(&again);
	}
	free(text);
	if (bad)
		return bad;
	if (vgpu_object_write(obj, &buf, &blen))
		return 0; /* out of memory */
	if (vgpu_object_read(buf, blen, &again, err, sizeof(err))) {
		bad = ORACLE_FAIL("an object file written does not read back: %s\n", err);
	} else {
		bad = obj_same(obj, &again, "object file write -> read");
		vgpu_object_fini(&again);
	}
	free(buf);
	return bad;
}

/* An error: -EINVAL with a message (or -ENOMEM). */
static inline int error_is_clean(int ret, const char *err, const char *what)
{
	if (ret == -ENOMEM)
		return 0;
	if (ret != -EINVAL)
		return ORACLE_FAIL("%s returned %d\n", what, ret);
	if (!err[0])
		return ORACLE_FAIL("%s failed without a message\n", what);
	return 0;
}

static inline int asm_oracle(const uint8_t *data, size_t size)
{
	static char err[1 << 14];
	struct vgpu_object obj;
	int ret, bad;

	err[0] = 0;
	ret = vgpu_assemble((const char *)data, size, "fuzz.vgs", &obj, err,
			    sizeof(err));
	if (ret)
		return error_is_clean(ret, err, "vgpu_assemble");
	bad = obj_round_trips(&obj);
	if (!bad && obj.code_size) {
		struct vgpu_prog *prog = NULL;

		/* .word takes any bits: the decoder may refuse them, cleanly */
		ret = vgpu_prog_load(obj.code, obj.code_size, &prog);
		if (ret && ret != -EINVAL && ret != -ENOMEM)
			bad = ORACLE_FAIL("vgpu_prog_load returned %d\n", ret);
		vgpu_prog_free(prog);
	}
	vgpu_object_fini(&obj);
	return bad;
}

/* One 128-bit word: disassembly -> assembly -> the same disassembly. */
static inline int word_oracle(const uint64_t w[2])
{
	static char err[4096];
	char line[512], src[600], again[512];
	struct vgpu_object obj;
	uint64_t w2[2];
	int n;

	memset(line, 0x5a, sizeof(line));
	n = vgpu_disasm_insn(w, 0, line, sizeof(line));
	if (n < 0 || (size_t)n >= sizeof(line) || memchr(line, 0, sizeof(line)) == NULL ||
	    strlen(line) != (size_t)n)
		return ORACLE_FAIL("vgpu_disasm_insn: bad length %d\n", n);
	/* a branch target is printed as an offset: give it a home */
	snprintf(src, sizeof(src), "%s\n", line);
	if (vgpu_assemble(src, strlen(src), "word.vgs", &obj, err, sizeof(err)))
		return ORACLE_FAIL("the disassembly of %016llx %016llx does not assemble: %s\n%s",
				   (unsigned long long)w[1], (unsigned long long)w[0],
				   line, err);
	if (obj.code_size != 16) {
		vgpu_object_fini(&obj);
		return ORACLE_FAIL("the disassembly of one word assembles to %u bytes: %s\n",
				   obj.code_size, line);
	}
	memcpy(w2, obj.code, 16);
	vgpu_object_fini(&obj);
	vgpu_disasm_insn(w2, 0, again, sizeof(again));
	if (strcmp(line, again))
		return ORACLE_FAIL("%016llx %016llx disassembles to \"%s\", which assembles to a word that disassembles to \"%s\"\n",
				   (unsigned long long)w[1], (unsigned long long)w[0],
				   line, again);
	return 0;
}

static inline int obj_oracle(const uint8_t *data, size_t size)
{
	static char err[1 << 14];
	struct vgpu_object obj;
	struct vgpu_prog *prog = NULL;
	size_t words = size / 16;
	uint8_t *code;
	int ret, bad = 0;

	err[0] = 0;
	ret = vgpu_object_read(data, size, &obj, err, sizeof(err));
	if (ret) {
		bad = error_is_clean(ret, err, "vgpu_object_read");
	} else {
		bad = obj_round_trips(&obj);
		vgpu_object_fini(&obj);
	}
	if (bad || !words)
		return bad;
	/* the bytes as instruction words (aligned copy) */
	code = malloc(words * 16);
	if (!code)
		return 0;
	memcpy(code, data, words * 16);
	ret = vgpu_prog_load(code, (uint32_t)(words * 16), &prog);
	if (ret && ret != -EINVAL && ret != -ENOMEM)
		bad = ORACLE_FAIL("vgpu_prog_load returned %d\n", ret);
	vgpu_prog_free(prog);
	for (size_t i = 0; i < words && i < 64 && !bad; i++) {
		uint64_t w[2];

		memcpy(w, code + 16 * i, 16);
		bad = word_oracle(w);
	}
	free(code);
	return bad;
}

#endif
