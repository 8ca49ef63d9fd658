// SPDX-License-Identifier: MIT
/*
 * The libFuzzer targets of `make fuzz`, one binary per oracle: built with
 * -DORACLE=NAME_oracle -DORACLE_HEADER='"NAME_oracle.h"' (the oracle
 * header says what it checks).  An input the oracle rejects aborts, which
 * libFuzzer reports as a crash and saves.
 */
#include <stdint.h>
#include <stdlib.h>

#include ORACLE_HEADER

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (ORACLE(data, size))
		abort();
	return 0;
}
