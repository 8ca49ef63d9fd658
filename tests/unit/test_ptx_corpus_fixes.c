// SPDX-License-Identifier: MIT
/*
 * The PTX front end on what the corpus of real CUDA code
 * (tests/corpus/, docs/ptx-corpus.md) found missing or wrong: each test a
 * small kernel in the form nvcc 13 wrote it, its expected result computed
 * here from the PTX ISA's definition, under the default and random
 * schedules, the sanitizer on and off.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu.h"

#define WAIT_NS (60ull * 1000000000ull)
#define NBUF 3
#define SCHEDULES 6

FIXTURE(fixes) {
	struct vgpu_device *dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_bo *bo[NBUF];
	char log[8192];
};

FIXTURE_SETUP(fixes)
{
	memset(self, 0, sizeof(*self));
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
}

FIXTURE_TEARDOWN(fixes)
{
	for (int i = 0; i < NBUF; i++)
		vgpu_bo_free(self->bo[i]);
	vgpu_program_free(self->prog);
	vgpu_device_close(self->dev);
}

static int load(struct __test_metadata *_metadata, FIXTURE_DATA(fixes) *self,
		const char *text, const char *kernel)
{
	int ret = vgpu_program_from_ptx(self->dev, text, strlen(text), "fix.ptx", &self->prog,
					self->log, sizeof(self->log));

	if (ret) {
		TH_LOG("%s\n%s", strerror(-ret), self->log);
		return ret;
	}
	ret = vgpu_program_find_kernel(self->prog, kernel, &self->k);
	if (ret)
		TH_LOG("no kernel %s", kernel);
	return ret;
}

static int buf(FIXTURE_DATA(fixes) *self, int i, const void *data, size_t len)
{
	int ret = vgpu_bo_new(self->dev, len, 0, &self->bo[i]);

	if (!ret && data)
		ret = vgpu_bo_write(self->bo[i], 0, data, len);
	return ret;
}

static int run(struct __test_metadata *_metadata, FIXTURE_DATA(fixes) *self,
	       struct vgpu_args *args, uint32_t grid, uint32_t block, uint64_t seed)
{
	struct vgpu_launch_config cfg = {
		.grid = { grid },
		.block = { block },
		.seed = seed,
		.flags = (seed ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (seed & 1 ? VGPU_LAUNCH_SANITIZE : 0),
	};
	struct vgpu_job *job = NULL;
	int ret = vgpu_kernel_launch(self->k, &cfg, args, &job);

	if (ret)
		return ret;
	ret = vgpu_job_wait(job, WAIT_NS);
	if (ret) {
		char text[4096];

		if (vgpu_job_describe(job, text, sizeof(text)) > 0)
			TH_LOG("seed %llu:\n%s", (unsigned long long)seed, text);
	}
	vgpu_job_free(job);
	return ret;
}

/*
 * PTX ISA 5.2 (predefined identifiers): WARP_SZ, the warp size as a
 * run-time constant; nvcc 13 writes warpSize as `mov.u32 %r, WARP_SZ;`
 * (the CUDA samples' reduce7, cooperative groups' tile sizes).
 */
static const char warp_sz_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry warp_sz(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<6>;\n\t.reg .b64 %rd<4>;\n\t.reg .pred %p<2>;\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tmov.u32 %r2, WARP_SZ;\n"
	"\tdiv.u32 %r3, %r1, %r2;\n"
	"\tsetp.lt.s32 %p1, %r2, 2;\n"
	"\tselp.b32 %r4, 7, %r3, %p1;\n"
	"\tmul.wide.u32 %rd3, %r1, 4;\n\tadd.s64 %rd2, %rd2, %rd3;\n"
	"\tst.global.u32 [%rd2], %r4;\n\tret;\n}\n";

TEST_F(fixes, warp_sz)
{
	uint32_t out[128];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, warp_sz_ptx, "warp_sz"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		memset(out, 0xee, sizeof(out));
		ASSERT_EQ(0, vgpu_bo_write(self->bo[0], 0, out, sizeof(out)));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 128, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 128; t++)
			ASSERT_EQ(t / 32, out[t]);
	}
	vgpu_args_free(args);
}

/*
 * C++ kernels have mangled names far past the object's 31 characters
 * (cub's run to hundreds, sharing long prefixes): each keeps its PTX name
 * for vgpu_program_find_kernel() and vgpu_kernel_info(), and two names
 * that differ only at their ends stay two kernels.
 */
static char *long_names_ptx(char *a, char *b, size_t n)
{
	static const char body[] =
		"(.param .u64 out)\n{\n\t.reg .b32 %%r<2>;\n\t.reg .b64 %%rd<3>;\n"
		"\tld.param.u64 %%rd1, [out];\n\tcvta.to.global.u64 %%rd2, %%rd1;\n"
		"\tst.global.u32 [%%rd2], %d;\n\tret;\n}\n";
	char *text = malloc(4 * n + 1024), *p = text;

	/* 200 characters, the same but for the last */
	memset(a, 'x', n - 1);
	memcpy(a, "_ZN3cub6detail", 14);
	a[n - 1] = '\0';
	memcpy(b, a, n);
	a[n - 2] = 'A';
	b[n - 2] = 'B';
	p += sprintf(p, ".version 9.0\n.target sm_90a\n.address_size 64\n");
	p += sprintf(p, ".visible .entry %s", a);
	p += sprintf(p, body, 11);
	p += sprintf(p, ".visible .entry %s", b);
	p += sprintf(p, body, 22);
	return text;
}

TEST_F(fixes, long_kernel_names)
{
	char a[201], b[201];
	char *text = long_names_ptx(a, b, sizeof(a));
	const struct vgpu_kernel *ka, *kb;
	struct vgpu_kernel_info info;
	struct vgpu_args *args = NULL;
	uint32_t out;

	ASSERT_EQ(0, load(_metadata, self, text, a));
	free(text);
	ka = self->k;
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, b, &kb));
	ASSERT_NE(ka, kb);
	vgpu_kernel_info(ka, &info);
	ASSERT_STREQ(a, info.name);
	vgpu_kernel_info(kb, &info);
	ASSERT_STREQ(b, info.name);
	ASSERT_EQ(-ENOENT, vgpu_program_find_kernel(self->prog, "_ZN3cub6detailxxxxxx", &kb));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	for (int i = 0; i < 2; i++) {
		self->k = i ? kb : ka;
		ASSERT_EQ(0, vgpu_args_new(self->k, &args));
		ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
		ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, &out, sizeof(out)));
		ASSERT_EQ(i ? 22u : 11u, out);
		vgpu_args_free(args);
	}
}

/*
 * nvcc -G: DWARF in .section blocks (skipped), and cooperative groups'
 * scratch at %reserved_smem_offset_1 (PTX ISA 10.37; the driver's
 * reserved shared memory, 1 KiB here): the region holds what is stored
 * there, lies after the kernel's own .shared variable, and _cap is its
 * size.
 */
static const char reserved_ptx[] =
	".version 9.0\n.target sm_90a\n.address_size 64\n"
	".visible .entry rsv(.param .u64 out)\n{\n"
	"\t.reg .b32 %r<8>;\n\t.reg .b64 %rd<8>;\n"
	"\t.shared .align 4 .b8 mine[64];\n"
	"\tld.param.u64 %rd1, [out];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\t{\n\t .reg .u32 start;\n\t .reg .u64 extended;\n"
	"\t mov.u32 start, %reserved_smem_offset_1;\n"
	"\t cvt.u64.u32 extended, start;\n\t cvta.shared.u64 %rd3, extended;\n\t}\n"
	"\tmul.wide.u32 %rd4, %r1, 4;\n\tadd.s64 %rd5, %rd3, %rd4;\n"
	"\tmul.lo.u32 %r2, %r1, 7;\n\tst.u32 [%rd5], %r2;\n"
	"\tmov.u32 %r5, mine;\n\tshl.b32 %r6, %r1, 2;\n\tadd.s32 %r5, %r5, %r6;\n"
	"\tst.shared.u32 [%r5], 99;\n"
	"\tbar.sync 0;\n"
	"\tsub.s32 %r3, 63, %r1;\n\tmul.wide.u32 %rd4, %r3, 4;\n\tadd.s64 %rd5, %rd3, %rd4;\n"
	"\tld.u32 %r4, [%rd5];\n"
	"\tmov.u32 %r7, %reserved_smem_offset_cap;\n\tadd.s32 %r4, %r4, %r7;\n"
	"\tadd.s64 %rd6, %rd2, %rd4;\n\tst.global.u32 [%rd6], %r4;\n\tret;\n}\n"
	"\t.section\t.debug_abbrev\n\t{\n.b8 1\n.b8 17\n.b64 $L__tmp1\n\t}\n"
	"\t.section\t.debug_macinfo\n\t{\n.b8 0\n\n\t}\n";

TEST_F(fixes, reserved_smem_and_debug_sections)
{
	uint32_t out[64];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, load(_metadata, self, reserved_ptx, "rsv"));
	ASSERT_EQ(0, buf(self, 0, NULL, sizeof(out)));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	for (uint64_t s = 0; s < SCHEDULES; s++) {
		ASSERT_EQ(0, run(_metadata, self, args, 2, 64, s));
		ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
		for (uint32_t t = 0; t < 64; t++)
			ASSERT_EQ(t * 7 + 1024, out[t]);
	}
	vgpu_args_free(args);
}

TEST_HARNESS_MAIN
