/* SPDX-License-Identifier: MIT */
/*
 * The fixture of the PTX tests that compile a kernel and run it on the
 * sim backend (test_ptx_gaps.c, test_ptx_corpus_fixes.c, test_ptx_forms.c
 * and the others; ptx_test.h builds test_ptx.c's on it).
 * PTX_FIXTURE_BASE(name) defines FIXTURE(name) (a device, a program and
 * its kernel, NBUF buffers, the compiler's log), its setup and teardown,
 * and over it:
 *   ptx_load(_metadata, self, file, text, kernel): compile @text (called
 *     @file in messages), find @kernel;
 *   buf(self, i, data, len): buffer @i of @len bytes, @data copied in;
 *   ptx_run(_metadata, self, args, grid, block, seed, flags): launch the
 *     kernel with launch @flags under schedule @seed and wait; a failed
 *     job's description in the log.
 * PTX_FIXTURE(name) adds run(_metadata, self, args, grid, block, seed):
 * @seed 0 the default schedule, else random, odd seeds with the
 * sanitizer.
 */
#ifndef PTX_FIXTURE_H
#define PTX_FIXTURE_H

#include <errno.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"

#define WAIT_NS (60ull * 1000000000ull)
#define NBUF 3

#define PTX_FIXTURE_BASE(name)                                                          \
	FIXTURE(name) {                                                                 \
		struct vgpu_device *dev;                                                \
		struct vgpu_program *prog;                                              \
		const struct vgpu_kernel *k;                                            \
		struct vgpu_bo *bo[NBUF];                                               \
		char log[8192];                                                         \
	};                                                                              \
                                                                                        \
	FIXTURE_SETUP(name)                                                             \
	{                                                                               \
		memset(self, 0, sizeof(*self));                                         \
		ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));                       \
	}                                                                               \
                                                                                        \
	FIXTURE_TEARDOWN(name)                                                          \
	{                                                                               \
		for (int i = 0; i < NBUF; i++)                                          \
			vgpu_bo_free(self->bo[i]);                                      \
		vgpu_program_free(self->prog);                                          \
		vgpu_device_close(self->dev);                                           \
	}                                                                               \
                                                                                        \
	static __attribute__((unused)) int ptx_load(struct __test_metadata *_metadata,   \
						    FIXTURE_DATA(name) *self,            \
						    const char *file, const char *text,  \
						    const char *kernel)                  \
	{                                                                               \
		int ret = vgpu_program_from_ptx(self->dev, text, strlen(text), file,     \
						&self->prog, self->log,                  \
						sizeof(self->log));                      \
                                                                                        \
		if (ret) {                                                              \
			TH_LOG("%s: %s\n%s", file, strerror(-ret), self->log);           \
			return ret;                                                     \
		}                                                                       \
		ret = vgpu_program_find_kernel(self->prog, kernel, &self->k);           \
		if (ret)                                                                \
			TH_LOG("no kernel %s", kernel);                                 \
		return ret;                                                             \
	}                                                                               \
                                                                                        \
	static __attribute__((unused)) int buf(FIXTURE_DATA(name) *self, int i,          \
					       const void *data, size_t len)            \
	{                                                                               \
		int ret = vgpu_bo_new(self->dev, len, 0, &self->bo[i]);                 \
                                                                                        \
		if (!ret && data)                                                       \
			ret = vgpu_bo_write(self->bo[i], 0, data, len);                 \
		return ret;                                                             \
	}                                                                               \
                                                                                        \
	static __attribute__((unused)) int ptx_run(struct __test_metadata *_metadata,    \
						   FIXTURE_DATA(name) *self,             \
						   struct vgpu_args *args, uint32_t grid,\
						   uint32_t block, uint64_t seed,        \
						   uint32_t flags)                       \
	{                                                                               \
		struct vgpu_launch_config cfg = {                                       \
			.grid = { grid },                                               \
			.block = { block },                                             \
			.seed = seed,                                                   \
			.flags = flags,                                                 \
		};                                                                      \
		struct vgpu_job *job = NULL;                                            \
		int ret = vgpu_kernel_launch(self->k, &cfg, args, &job);                 \
                                                                                        \
		if (ret)                                                                \
			return ret;                                                     \
		ret = vgpu_job_wait(job, WAIT_NS);                                      \
		if (ret) {                                                              \
			char text[4096];                                                \
                                                                                        \
			if (vgpu_job_describe(job, text, sizeof(text)) > 0)              \
				TH_LOG("seed %llu%s:\n%s", (unsigned long long)seed,      \
				       flags & VGPU_LAUNCH_SANITIZE ? " (sanitizer)" : "", \
				       text);                                           \
		}                                                                       \
		vgpu_job_free(job);                                                     \
		return ret;                                                             \
	}

#define PTX_FIXTURE(name)                                                               \
	PTX_FIXTURE_BASE(name)                                                          \
                                                                                        \
	static __attribute__((unused)) int run(struct __test_metadata *_metadata,        \
					       FIXTURE_DATA(name) *self,                 \
					       struct vgpu_args *args, uint32_t grid,    \
					       uint32_t block, uint64_t seed)            \
	{                                                                               \
		return ptx_run(_metadata, self, args, grid, block, seed,                 \
			       (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |                   \
			       (seed & 1 ? VGPU_LAUNCH_SANITIZE : 0));                   \
	}

#endif
