/* SPDX-License-Identifier: MIT */
/* What the fuzzing oracles (tests/fuzz/NAME_oracle.h) share. */
#ifndef VGPU_ORACLE_H
#define VGPU_ORACLE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_asm.h"
#include "vgpu_core.h"
#include "vgpu_isa.h"

/* Report an oracle failure on stderr; evaluates to 1. */
#define ORACLE_FAIL(...) (fprintf(stderr, "oracle: " __VA_ARGS__), 1)

/*
 * An oracle's own kernel @src, assembled and loaded (a failure is a bug
 * in the oracle: abort); its instruction count in *@ninsns if not NULL.
 */
static inline struct vgpu_prog *oracle_prog(const char *src, uint32_t *ninsns)
{
	struct vgpu_prog *prog;
	struct vgpu_object obj;
	char err[512];

	if (vgpu_assemble(src, strlen(src), "oracle", &obj, err, sizeof(err))) {
		fprintf(stderr, "oracle: its kernel: %s\n", err);
		abort();
	}
	if (vgpu_prog_load(obj.code, obj.code_size, &prog))
		abort();
	if (ninsns)
		*ninsns = obj.code_size / VGPU_INSN_BYTES;
	vgpu_object_fini(&obj);
	return prog;
}

#endif
