/* SPDX-License-Identifier: MIT */
/*
 * The PTX front end's fuzzing oracle, shared by the libFuzzer target
 * (fuzz_ptx.c, `make fuzz`) and the mutation test that make check runs
 * (tests/unit/test_ptx_errors.c): any input gives an error or assembly text, the
 * generated assembly always assembles (else the front end has a bug), and
 * a second compilation of the same input gives the same text.
 */
#ifndef VGPU_PTX_ORACLE_H
#define VGPU_PTX_ORACLE_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu.h"
#include "vgpu_asm.h"

/* 0: an error or a program; 1: the oracle failed (message on stderr). */
static inline int ptx_oracle(const uint8_t *data, size_t size)
{
	static char log[1 << 16];
	char *text = NULL, *again = NULL;
	struct vgpu_object obj;
	int ret, bad = 0;

	/* the compiler itself, twice: not libvgpu's compile cache, which
	 * would answer the second call (and keep every input on disk) */
	setenv("VGPU_CACHE_DISABLE", "1", 1);
	ret = vgpu_ptx_to_asm((const char *)data, size, "fuzz.ptx", &text, log,
			      sizeof(log));
	if (ret) {
		if (text || (ret != -EINVAL && ret != -ENOMEM) || !log[0]) {
			fprintf(stderr, "ptx_oracle: error %d without a message or with text\n",
				ret);
			bad = 1;
		}
		free(text);
		return bad;
	}
	if (vgpu_assemble(text, strlen(text), "generated.vgs", &obj, log, sizeof(log))) {
		fprintf(stderr, "ptx_oracle: generated assembly does not assemble:\n%s\n%s",
			log, text);
		bad = 1;
	} else {
		vgpu_object_fini(&obj);
	}
	if (vgpu_ptx_to_asm((const char *)data, size, "fuzz.ptx", &again, log,
			    sizeof(log)) ||
	    strcmp(text, again)) {
		fprintf(stderr, "ptx_oracle: a second compilation differs\n");
		bad = 1;
	}
	free(again);
	free(text);
	return bad;
}

#endif
