// SPDX-License-Identifier: MIT
/*
 * What the library's tests share (test_libvgpu.c, test_libvgpu_bo.c,
 * test_libvgpu_launch.c, test_libvgpu_sync.c): opening the device of the
 * default backend, kernels and programs the tests run, and the fixture.
 * See test_libvgpu.c for the backends and the environment.
 */
#ifndef VGPU_LIBVGPU_TEST_H
#define VGPU_LIBVGPU_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "kselftest_host.h"
#include "vgpu.h"

#define SEC 1000000000ll
#define WAIT_NS (120 * SEC) /* generous: the guest runs under TCG */
#define MS 1000000ll

/* ---- helpers ---- */

static inline struct vgpu_device *dev_open(void)
{
	struct vgpu_device *dev = NULL;
	int ret = vgpu_device_open(NULL, &dev);

	if (ret) {
		fprintf(stderr, "  vgpu_device_open: %s\n", strerror(-ret));
		return NULL;
	}
	return dev;
}

static inline bool is_sim(const struct vgpu_device *dev)
{
	return vgpu_device_backend(dev) == VGPU_BACKEND_SIM;
}

static inline uint64_t param(struct vgpu_device *dev, uint32_t p)
{
	uint64_t v = 0;

	if (vgpu_device_get_param(dev, p, &v))
		fprintf(stderr, "  get_param %u failed\n", p);
	return v;
}

static inline struct vgpu_program *prog_new(struct vgpu_device *dev, const char *src)
{
	struct vgpu_program *prog = NULL;
	char log[2048] = "";
	int ret = vgpu_program_assemble(dev, src, strlen(src), "test.vgs", &prog,
					log, sizeof(log));

	if (ret) {
		fprintf(stderr, "  assemble: %s\n%s", strerror(-ret), log);
		return NULL;
	}
	return prog;
}

static inline const struct vgpu_kernel *kern(const struct vgpu_program *prog)
{
	const struct vgpu_kernel *k = NULL;

	if (!prog || vgpu_program_kernel(prog, 0, &k))
		return NULL;
	return k;
}

static inline int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * SEC + ts.tv_nsec;
}

/* out[gid] = gid * 2 + k, gid = ctaid.x * ntid.x + tid.x */
static const char __attribute__((unused)) store_src[] =
	".kernel store\n"
	".param ptr out\n"
	".param u32 k\n"
	"  S2R R0, SR_TID.X ;\n"
	"  S2R R1, SR_CTAID.X ;\n"
	"  S2R R7, SR_NTID.X ;\n"
	"  IMAD R0, R1, R7, R0 ;\n"
	"  LDP.64 R2, [out] ;\n"
	"  LDP.32 R8, [k] ;\n"
	"  SHL R4, R0, 0x2 ;\n"
	"  IADD R2, R2, R4 ;\n"
	"  IMAD R5, R0, 0x2, R8 ;\n"
	"  STG.32 [R2], R5 ;\n"
	"  EXIT ;\n";
#define STORE_INSNS 11 /* per warp */

/* Count to n, then out[0] = n and out[1] = magic. */
static const char __attribute__((unused)) spin_src[] =
	".kernel spin\n"
	".param ptr out\n"
	".param u32 n\n"
	".param u32 magic\n"
	"  LDP.64 R2, [out] ;\n"
	"  LDP.32 R6, [n] ;\n"
	"  MOV R1, 0x0 ;\n"
	"l:\n"
	"  IADD R1, R1, 0x1 ;\n"
	"  ISETP.LT.U32 P0, R1, R6 ;\n"
	"  @P0 BRA l ;\n"
	"  LDP.32 R7, [magic] ;\n"
	"  STG.32 [R2], R1 ;\n"
	"  STG.32 [R2+0x4], R7 ;\n"
	"  EXIT ;\n";
/* Far longer than a millisecond on the device, far shorter than its timeout. */
#define SPIN_LONG 0x100000u

/* dst[0] = *src (src an address outside the launch's buffer list) */
static const char __attribute__((unused)) copy_src[] =
	".kernel copy\n"
	".param u64 src\n"
	".param ptr dst\n"
	"  LDP.64 R2, [src] ;\n"
	"  LDP.64 R4, [dst] ;\n"
	"  LDG.32 R6, [R2] ;\n"
	"  STG.32 [R4], R6 ;\n"
	"  EXIT ;\n";

/* Tree reduction (examples/reduce_bar_sync.vgs): out = {5559680, 9}. */
static const char __attribute__((unused)) reduce_src[] =
	".kernel reduce\n"
	".param ptr out\n"
	".shared buf, 1024\n"
	"        LDP.64 R2, [out] ;\n"
	"        S2R R0, SR_TID ;\n"
	"        SHL R1, R0, 0x2 ;\n"
	"        IMUL R4, R0, R0 ;\n"
	"        STS.32 [R1], R4 ;\n"
	"        BAR.SYNC 0x0 ;\n"
	"        MOV R5, 0x80 ;\n"
	"        MOV R10, 0x1 ;\n"
	"step:\n"
	"        ISETP.LT.U32 P0, R5, R0 ;\n"
	"        ISETP.EQ.U32.OR P0, R5, R0, P0 ;\n"
	"        @P0 BRA skip ;\n"
	"        SHL R6, R5, 0x2 ;\n"
	"        IADD R6, R6, R1 ;\n"
	"        LDS.32 R7, [R6] ;\n"
	"        LDS.32 R4, [R1] ;\n"
	"        IADD R4, R4, R7 ;\n"
	"        STS.32 [R1], R4 ;\n"
	"skip:\n"
	"        BAR.SYNC 0x0 ;\n"
	"        IADD R10, R10, 0x1 ;\n"
	"        SHR.U32 R5, R5, 0x1 ;\n"
	"        ISETP.NE.U32 P1, R5, 0x0 ;\n"
	"        @P1 BRA step ;\n"
	"        ISETP.NE.U32 P2, R0, 0x0 ;\n"
	"        @P2 EXIT ;\n"
	"        LDS.32 R4, [0x0] ;\n"
	"        STG.32 [R2], R4 ;\n"
	"        STG.32 [R2+0x4], R10 ;\n"
	"        EXIT ;\n";

/* A store kernel, its BO and argument set, ready to launch. */
struct store {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args;
	struct vgpu_bo *bo;
	uint32_t *out;
};

static inline int store_init(struct store *s, struct vgpu_device *dev,
		      struct vgpu_program *shared_prog, uint64_t bo_size)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->dev = dev;
	if (shared_prog) {
		s->k = kern(shared_prog);
	} else {
		s->prog = prog_new(dev, store_src);
		s->k = kern(s->prog);
	}
	if (!s->k)
		return -EINVAL;
	ret = vgpu_bo_new(dev, bo_size, 0, &s->bo);
	ret = ret ?: vgpu_bo_map(s->bo, (void **)&s->out);
	ret = ret ?: vgpu_args_new(s->k, &s->args);
	ret = ret ?: vgpu_args_set_bo(s->args, 0, s->bo, 0);
	return ret;
}

static inline void store_fini(struct store *s)
{
	vgpu_args_free(s->args);
	vgpu_bo_free(s->bo);
	vgpu_program_free(s->prog);
}

static inline int store_launch(struct store *s, uint32_t k, uint32_t grid,
			uint32_t block, struct vgpu_job **job)
{
	struct vgpu_launch_config cfg = { .grid = { grid }, .block = { block } };
	int ret = vgpu_args_set_u32(s->args, 1, k);

	return ret ?: vgpu_kernel_launch(s->k, &cfg, s->args, job);
}

/* Number of words of out[0..n) that are not i * 2 + k. */
static inline unsigned int store_bad(const uint32_t *out, uint32_t n, uint32_t k)
{
	unsigned int bad = 0;

	for (uint32_t i = 0; i < n; i++)
		if (out[i] != i * 2 + k) {
			if (!bad)
				fprintf(stderr, "  out[%u] = %u, expected %u\n", i,
					out[i], i * 2 + k);
			bad++;
		}
	return bad;
}

/* Launch, wait and free; returns vgpu_job_wait()'s result. */
static inline int store_run(struct store *s, uint32_t k, uint32_t grid, uint32_t block)
{
	struct vgpu_job *job;
	int ret = store_launch(s, k, grid, block, &job);

	if (ret)
		return ret;
	ret = vgpu_job_wait(job, WAIT_NS);
	vgpu_job_free(job);
	return ret;
}

/*
 * A second device for sharing tests: on drm the next vgpu device when
 * there are two or more, else another open of the same one (a new DRM
 * file: its own address space and handles); on sim a new simulator.
 */
static inline struct vgpu_device *second_device(struct vgpu_device *dev, bool *other_pci)
{
	struct vgpu_device_desc descs[8];
	struct vgpu_device *d2 = NULL;
	struct vgpu_device_info info;
	unsigned int n = 0;

	*other_pci = false;
	if (is_sim(dev))
		return vgpu_device_open("sim", &d2) ? NULL : d2;
	if (vgpu_device_list(descs, 8, &n) || vgpu_device_query(dev, &info))
		return NULL;
	for (unsigned int i = 0; i < n && i < 8; i++) {
		if (strcmp(descs[i].pci_slot, info.pci_slot)) {
			*other_pci = true;
			return vgpu_device_open(descs[i].pci_slot, &d2) ? NULL : d2;
		}
	}
	return vgpu_device_open(info.node, &d2) ? NULL : d2;
}

static inline unsigned int expected_devices(void)
{
	const char *e = getenv("VGPU_TEST_DEVICES");

	return e ? (unsigned int)atoi(e) : 0;
}

/*
 * Most tests run on a device of the default backend, opened for the test
 * (vgpu_device_open(NULL): VGPU_BACKEND decides) and closed after it.
 */
FIXTURE(libvgpu) {
	struct vgpu_device *dev;
};

FIXTURE_SETUP(libvgpu)
{
	self->dev = dev_open();
	ASSERT_NE(NULL, self->dev);
}

FIXTURE_TEARDOWN(libvgpu)
{
	vgpu_device_close(self->dev);
}

#endif
