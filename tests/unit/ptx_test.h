// SPDX-License-Identifier: MIT
/*
 * What the PTX front end's device tests share (test_ptx.c,
 * test_ptx_kernels.c, test_ptx_numerics.c, test_ptx_errors.c): the corpus,
 * and over ptx_fixture.h's fixture, loading a corpus kernel by name and a
 * launch under a schedule with or without the sanitizer.
 */
#ifndef VGPU_PTX_TEST_H
#define VGPU_PTX_TEST_H

#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"
#include "vgpu_hw.h"
#include "ptx_corpus.h"
#include "ptx_oracle.h"

static inline const char *corpus(const char *name)
{
	for (size_t i = 0; ptx_corpus[i].name; i++)
		if (!strcmp(ptx_corpus[i].name, name))
			return ptx_corpus[i].text;
	return NULL;
}

PTX_FIXTURE_BASE(ptx)

/* Compile corpus kernel @name (its .entry has the same name). */
static inline int load(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
		       const char *name)
{
	const char *text = corpus(name);
	char file[64];

	if (!text) {
		TH_LOG("no kernel %s in the corpus", name);
		return -ENOENT;
	}
	snprintf(file, sizeof(file), "tests/ptx/%s.ptx", name);
	return ptx_load(_metadata, self, file, text, name);
}

/*
 * Launch with @args under schedule @seed (0: default) and the sanitizer
 * when @san; 0 on success, else the job's error after logging the record.
 */
static inline int run(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
		      struct vgpu_args *args, uint32_t grid, uint32_t block, uint64_t seed,
		      bool san)
{
	return ptx_run(_metadata, self, args, grid, block, seed,
		       (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) | (san ? VGPU_LAUNCH_SANITIZE : 0));
}

/* The schedules every kernel runs under: default, then random seeds. */
#define SCHEDULES 6


#endif
