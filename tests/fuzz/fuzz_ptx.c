// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the PTX front end (make fuzz; seeds: the PTX
 * corpus).  Crashes and sanitizer reports are libFuzzer's to catch; the
 * oracle (ptx_oracle.h) adds: the generated assembly assembles, and
 * compiling twice gives the same text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "ptx_oracle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ptx_oracle(data, size))
		abort();
	return 0;
}
