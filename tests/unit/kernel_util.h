/* SPDX-License-Identifier: MIT */
/*
 * Helpers for core tests: assemble a kernel from text, run it on an SM
 * with a flat simulated global memory, read results back.
 *
 * Global memory is one host-memory region [GMEM_BASE, GMEM_BASE +
 * GMEM_SIZE) (libvgpu/hostmem.h); anything outside faults.  Kernels get the window's base as their first parameter
 * (a .param ptr), followed by any extra 32-bit parameters.
 */
#ifndef VGPU_TEST_KERNEL_UTIL_H
#define VGPU_TEST_KERNEL_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "hostmem.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"

#define GMEM_BASE 0x100000000ull /* above 4 GiB: exercises the high word */
#define GMEM_SIZE (1u << 20)

/**
 * struct kt - one kernel under test
 * @grid, @block, @smem (dynamic, added to .shared), @seed, @flags, @budget:
 *   launch settings, set before kt_run()
 * @args: extra 32-bit parameters after the global base pointer
 * @mem_ops: global memory's callbacks (NULL: vgpu_hostmem_ops; a copy
 *   without span or the block calls takes the paths the QEMU device takes)
 * @exc:  the exception record of the last run
 * @gmem: global memory contents (GMEM_SIZE bytes, zeroed by kt_load)
 */
struct kt {
	struct vgpu_object obj;
	struct vgpu_prog *prog;
	struct vgpu_sm *sm;
	struct vgpu_hostmem hm;
	struct {
		uint8_t *buf; /* the GMEM_SIZE bytes at GMEM_BASE */
	} mem;
	uint32_t grid[3], block[3], cluster[3];
	uint32_t smem, flags;
	uint64_t seed, budget;
	uint32_t args[8];
	uint32_t nargs;
	vgpu_event_fn event;
	void *event_opaque;
	/* global memory's callbacks over @hm; NULL: vgpu_hostmem_ops */
	const struct vgpu_mem_ops *mem_ops;
	struct vgpu_exception_record exc;
	char err[4096];
};

static inline int kt_load(struct kt *k, const char *src)
{
	uint64_t base;

	memset(k, 0, sizeof(*k));
	k->grid[0] = k->grid[1] = k->grid[2] = 1;
	k->block[0] = 32;
	k->block[1] = k->block[2] = 1;
	k->seed = 1;
	if (vgpu_assemble(src, strlen(src), "test.vgs", &k->obj, k->err,
			  sizeof(k->err))) {
		fprintf(stderr, "assembly failed:\n%s", k->err);
		return -1;
	}
	if (vgpu_prog_load(k->obj.code, k->obj.code_size, &k->prog))
		return -1;
	k->sm = vgpu_sm_new(NULL);
	vgpu_hostmem_init(&k->hm, GMEM_BASE, GMEM_BASE + GMEM_SIZE);
	if (vgpu_hostmem_alloc(&k->hm, GMEM_SIZE, &base, &k->mem.buf) ||
	    base != GMEM_BASE)
		return -1;
	return k->sm ? 0 : -1;
}

static inline void kt_free(struct kt *k)
{
	vgpu_sm_free(k->sm);
	vgpu_prog_free(k->prog);
	vgpu_object_fini(&k->obj);
	vgpu_hostmem_fini(&k->hm);
}

/* Run the first kernel; returns vgpu_sm_launch()'s result (0 / -1). */
static inline int kt_run(struct kt *k)
{
	const struct vgpu_obj_kernel *kn = &k->obj.kernels[0];
	uint8_t params[8 + 4 * 8];
	uint64_t base = GMEM_BASE;
	struct vgpu_launch l;

	memcpy(params, &base, 8);
	memcpy(params + 8, k->args, 4 * k->nargs);
	memset(&l, 0, sizeof(l));
	l.prog = k->prog;
	l.entry = kn->entry;
	memcpy(l.grid, k->grid, sizeof(l.grid));
	memcpy(l.block, k->block, sizeof(l.block));
	memcpy(l.cluster, k->cluster, sizeof(l.cluster));
	l.smem_bytes = kn->smem_static + k->smem;
	l.params = params;
	l.param_size = 8 + 4 * k->nargs;
	l.flags = k->flags;
	l.seed = k->seed;
	l.budget = k->budget;
	l.mem = k->mem_ops ? k->mem_ops : &vgpu_hostmem_ops;
	l.mem_opaque = &k->hm;
	l.event = k->event;
	l.event_opaque = k->event_opaque;
	return vgpu_sm_launch(k->sm, &l, &k->exc);
}

static inline uint32_t kt_word(const struct kt *k, uint32_t index)
{
	uint32_t v;

	memcpy(&v, k->mem.buf + 4 * index, 4);
	return v;
}

static inline void kt_set_word(struct kt *k, uint32_t index, uint32_t v)
{
	memcpy(k->mem.buf + 4 * index, &v, 4);
}

/* Replace the SM with one built from @cfg (copy-engine timing etc.). */
static inline void kt_config(struct kt *k, const struct vgpu_sm_config *cfg)
{
	vgpu_sm_free(k->sm);
	k->sm = vgpu_sm_new(cfg);
}

static inline uint64_t kt_dword(const struct kt *k, uint32_t index)
{
	return (uint64_t)kt_word(k, index + 1) << 32 | kt_word(k, index);
}

/*
 * Put a tensor map at byte offset @at of global memory (64-aligned)
 * describing a dense tensor at byte offset @data: @rank dims, element
 * size @esize, sizes @dims, box @box, element strides @estr (NULL: 1).
 */
static inline void kt_tensor_map(struct kt *k, uint32_t at, uint32_t data,
				 uint32_t rank, uint32_t esize,
				 const uint32_t *dims, const uint32_t *box,
				 const uint32_t *estr)
{
	struct vgpu_tensor_map m;
	uint64_t stride = esize;

	memset(&m, 0, sizeof(m));
	m.base = GMEM_BASE + data;
	m.magic = VGPU_TMAP_MAGIC;
	m.rank = (uint8_t)rank;
	m.elem_size = (uint8_t)esize;
	for (uint32_t d = 0; d < rank; d++) {
		m.dims[d] = dims[d];
		m.box[d] = box[d];
		m.elem_strides[d] = estr ? estr[d] : 1;
		if (d)
			m.strides[d - 1] = stride;
		stride *= dims[d];
	}
	memcpy(k->mem.buf + at, &m, sizeof(m));
}

/*
 * Run, expect success; on failure print the record.  In a TEST() or a
 * helper that has the test's _metadata.
 */
#define KT_RUN_OK(k)                                                           \
	EXPECT_EQ(0, kt_run(k))                                                \
		TH_LOG("kernel raised %s: %s (pc 0x%x warp %u)",               \
		       vgpu_exc_name((k)->exc.code), (k)->exc.msg,             \
		       (k)->exc.pc, (k)->exc.warp)

/*
 * Prologue used by most kernels: R2:R3 = global base, R0 = flat thread id,
 * R1 = R2 + 4 * tid (address of out[tid], low word; base is 4 GiB-aligned
 * and the window is 1 MiB so there is no carry).
 */
#define KT_PROLOGUE                                                            \
	".param ptr out\n"                                                     \
	"  LDP.64 R2, [out] ;\n"                                               \
	"  S2R R0, SR_TID ;\n"                                                 \
	"  SHL R1, R0, 0x2 ;\n"

/* Store register @reg (string) to out + @byteoff (string) + 4 * tid. */
#define KT_STORE(reg, byteoff)                                                 \
	"  IADD R8, R1, " byteoff " ;\n"                                       \
	"  IADD R8, R8, R2 ;\n"                                                \
	"  MOV R9, R3 ;\n"                                                     \
	"  STG.32 [R8], " reg " ;\n"

#endif
