/* SPDX-License-Identifier: MIT */
/*
 * What the benchmarks of the core called directly share (bench_core,
 * bench_copy): one host-memory region as global memory, a kernel
 * assembled from text with its one pointer parameter, a launch of it,
 * the clock.
 */
#ifndef VGPU_BENCH_CORE_HARNESS_H
#define VGPU_BENCH_CORE_HARNESS_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hostmem.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name, for its error messages)"
#endif

#define GMEM_BASE 0x10000000ull

/* ---- a single host-memory region as global memory (libvgpu/hostmem.h) ---- */
struct gmem {
	uint8_t *data;
	uint64_t size;
	struct vgpu_hostmem hm;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs(BENCH_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static inline void gmem_init(struct gmem *gm, uint64_t size)
{
	uint64_t addr;

	gm->size = size;
	vgpu_hostmem_init(&gm->hm, GMEM_BASE, GMEM_BASE + size);
	if (vgpu_hostmem_alloc(&gm->hm, size, &addr, &gm->data) || addr != GMEM_BASE)
		die("out of memory");
}

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A kernel assembled from text, loaded, with its one pointer parameter. */
struct kernel {
	struct vgpu_object obj;
	struct vgpu_prog *prog;
	const struct vgpu_obj_kernel *k;
	uint8_t params[8];
};

static inline void kernel_build(struct kernel *kn, const char *src)
{
	char err[2048];
	const struct vgpu_obj_param *p;

	memset(kn, 0, sizeof(*kn));
	if (vgpu_assemble(src, strlen(src), BENCH_NAME, &kn->obj, err, sizeof(err)))
		die("assembly failed:\n%s", err);
	if (vgpu_prog_load(kn->obj.code, kn->obj.code_size, &kn->prog))
		die("vgpu_prog_load failed");
	kn->k = &kn->obj.kernels[0];
	if (kn->k->nparams != 1 || kn->k->param_size != 8)
		die("kernel '%s' should take one pointer", kn->k->name);
	p = &kn->obj.params[kn->k->first_param];
	if (p->offset != 0 || p->size != 8)
		die("unexpected parameter layout");
	for (int i = 0; i < 8; i++)
		kn->params[i] = (uint8_t)(GMEM_BASE >> (8 * i));
}

static inline void kernel_fini(struct kernel *kn)
{
	vgpu_prog_free(kn->prog);
	vgpu_object_fini(&kn->obj);
}

static inline struct vgpu_launch launch_of(const struct kernel *kn, uint32_t threads,
					   struct gmem *gm)
{
	return (struct vgpu_launch){
		.prog = kn->prog,
		.entry = kn->k->entry,
		.grid = { 1, 1, 1 },
		.block = { threads, 1, 1 },
		.smem_bytes = kn->k->smem_static,
		.params = kn->params,
		.param_size = sizeof(kn->params),
		.seed = 1,
		.mem = &vgpu_hostmem_ops,
		.mem_opaque = &gm->hm,
	};
}

#endif
