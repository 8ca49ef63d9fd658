// SPDX-License-Identifier: MIT
/*
 * What the PTX front end's device tests share (test_ptx.c,
 * test_ptx_kernels.c, test_ptx_numerics.c, test_ptx_errors.c): the corpus,
 * the fixture, loading a corpus kernel, buffers and a launch under a
 * schedule.
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
#include "vgpu.h"
#include "vgpu_hw.h"
#include "ptx_corpus.h"
#include "ptx_oracle.h"

#define WAIT_NS (60ull * 1000000000ull)
#define NBUF 3

static inline const char *corpus(const char *name)
{
	for (size_t i = 0; ptx_corpus[i].name; i++)
		if (!strcmp(ptx_corpus[i].name, name))
			return ptx_corpus[i].text;
	return NULL;
}

FIXTURE(ptx) {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *bo[NBUF];
	char log[8192];
};

FIXTURE_SETUP(ptx)
{
	memset(self, 0, sizeof(*self));
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
}

FIXTURE_TEARDOWN(ptx)
{
	for (int i = 0; i < NBUF; i++)
		vgpu_bo_free(self->bo[i]);
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

/* Compile corpus kernel @name (its .entry has the same name). */
static inline int load(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
		const char *name)
{
	const char *text = corpus(name);
	char file[64];
	int ret;

	if (!text) {
		TH_LOG("no kernel %s in the corpus", name);
		return -ENOENT;
	}
	snprintf(file, sizeof(file), "tests/ptx/%s.ptx", name);
	ret = vgpu_program_from_ptx(self->dev, text, strlen(text), file, &self->prog,
				    self->log, sizeof(self->log));
	if (ret) {
		TH_LOG("%s: %s\n%s", name, strerror(-ret), self->log);
		return ret;
	}
	ret = vgpu_program_find_kernel(self->prog, name, &self->k);
	if (ret)
		TH_LOG("no kernel %s in the program", name);
	return ret;
}

static inline int buf(FIXTURE_DATA(ptx) *self, int i, const void *data, size_t len)
{
	int ret = vgpu_bo_new(self->dev, len, 0, &self->bo[i]);

	if (!ret && data)
		ret = vgpu_bo_write(self->bo[i], 0, data, len);
	return ret;
}

/*
 * Launch with @args under schedule @seed (0: default) and the sanitizer
 * when @san; 0 on success, else the job's error after logging the record.
 */
static inline int run(struct __test_metadata *_metadata, FIXTURE_DATA(ptx) *self,
	       struct vgpu_args *args, uint32_t grid, uint32_t block, uint64_t seed,
	       bool san)
{
	struct vgpu_launch_config cfg = {
		.grid = { grid },
		.block = { block },
		.seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (san ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_job *job = NULL;
	int ret = vgpu_kernel_launch(self->k, &cfg, args, &job);

	if (ret)
		return ret;
	ret = vgpu_job_wait(job, WAIT_NS);
	if (ret) {
		char text[4096];

		if (vgpu_job_describe(job, text, sizeof(text)) > 0)
			TH_LOG("seed %llu%s:\n%s", (unsigned long long)seed,
			       san ? " (sanitizer)" : "", text);
	}
	vgpu_job_free(job);
	return ret;
}

/* The schedules every kernel runs under: default, then random seeds. */
#define SCHEDULES 6


#endif
