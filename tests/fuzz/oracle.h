/* SPDX-License-Identifier: MIT */
/* What the fuzzing oracles (tests/fuzz/NAME_oracle.h) share. */
#ifndef VGPU_ORACLE_H
#define VGPU_ORACLE_H

#include <stdio.h>

/* Report an oracle failure on stderr; evaluates to 1. */
#define ORACLE_FAIL(...) (fprintf(stderr, "oracle: " __VA_ARGS__), 1)

#endif
