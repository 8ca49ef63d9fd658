// SPDX-License-Identifier: MIT
/*
 * Device-side launch (CUDA dynamic parallelism) below CUDA: PTX as nvcc
 * -rdc=true writes a <<<>>> in a kernel (__cudaCDP2GetParameterBufferV2,
 * __cudaCDP2LaunchDeviceV2), compiled by the front end (ptx_cdp.c) and run
 * on the sim backend through libvgpu, which carries the device-launch
 * area (libvgpu/cdp.c); the device's side (qemu-device/core/cdp.c) with
 * records a kernel forges in the area: an exception of that job, never a
 * crash, and the device goes on.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu_hw.h"

PTX_FIXTURE(cdp)

#define HEAD ".version 8.0\n.target sm_90a\n.address_size 64\n"
#define DECLS                                                                             \
	".extern .func (.param .b64 r) __cudaCDP2GetParameterBufferV2(.param .b64 f, "    \
	".param .align 4 .b8 g[12], .param .align 4 .b8 b[12], .param .b32 s);\n"         \
	".extern .func (.param .b32 r) __cudaCDP2LaunchDeviceV2(.param .b64 p, "          \
	".param .b64 s);\n"                                                                 \
	".extern .func (.param .b32 r) __cudaCDP2GetLastError();\n"

/* child(p, v): p[tid] = tid + v */
#define CHILD                                                                             \
	".visible .entry child(.param .u64 p, .param .u32 v)\n{\n"                        \
	".reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n"                                            \
	"ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [v];\nmov.u32 %r2, %tid.x;\n"         \
	"add.u32 %r3, %r2, %r1;\nmul.wide.u32 %rd2, %r2, 4;\nadd.u64 %rd3, %rd1, %rd2;\n" \
	"st.global.u32 [%rd3], %r3;\nret;\n}\n"

/*
 * parent(p, bx): child<<<1, bx>>>(p, 10) as nvcc writes it; the launch's
 * result to p[64], cudaGetLastError() to p[65]
 */
static const char parent_ptx[] = HEAD DECLS CHILD
	".visible .entry parent(.param .u64 p, .param .u32 bx)\n{\n"
	".reg .pred %p1;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n"
	"ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [bx];\nmov.u64 %rd2, child;\n"
	"mov.u32 %r3, -1;\n"
	"{\n.param .b64 param0;\nst.param.b64 [param0+0], %rd2;\n"
	".param .align 4 .b8 param1[12];\nst.param.b32 [param1+0], 1;\n"
	"st.param.b32 [param1+4], 1;\nst.param.b32 [param1+8], 1;\n"
	".param .align 4 .b8 param2[12];\nst.param.b32 [param2+0], %r1;\n"
	"st.param.b32 [param2+4], 1;\nst.param.b32 [param2+8], 1;\n"
	".param .b32 param3;\nst.param.b32 [param3+0], 0;\n.param .b64 retval0;\n"
	"call.uni (retval0), __cudaCDP2GetParameterBufferV2, (param0, param1, param2, param3);\n"
	"ld.param.b64 %rd3, [retval0+0];\n}\n"
	"setp.eq.s64 %p1, %rd3, 0;\n@%p1 bra $L1;\n"
	"st.u64 [%rd3], %rd1;\nmov.u32 %r2, 10;\nst.u32 [%rd3+8], %r2;\n"
	"{\n.param .b64 param0;\nst.param.b64 [param0+0], %rd3;\n.param .b64 param1;\n"
	"st.param.b64 [param1+0], 0;\n.param .b32 retval0;\n"
	"call.uni (retval0), __cudaCDP2LaunchDeviceV2, (param0, param1);\n"
	"ld.param.b32 %r3, [retval0+0];\n}\n"
	"$L1:\nst.global.u32 [%rd1+256], %r3;\n"
	"{\n.param .b32 retval0;\ncall.uni (retval0), __cudaCDP2GetLastError, ();\n"
	"ld.param.b32 %r3, [retval0+0];\n}\n"
	"st.global.u32 [%rd1+260], %r3;\nret;\n}\n";

static int run_parent(struct __test_metadata *_metadata, FIXTURE_DATA(cdp) *self, uint32_t bx,
		      uint32_t out[66])
{
	struct vgpu_args *args = NULL;
	uint32_t fill[66];
	int ret;

	memset(fill, 0xee, sizeof(fill));
	ret = vgpu_bo_write(self->bo[0], 0, fill, sizeof(fill));
	if (!ret)
		ret = vgpu_args_new(self->k, &args);
	if (!ret)
		ret = vgpu_args_set_bo(args, 0, self->bo[0], 0);
	if (!ret)
		ret = vgpu_args_set_u32(args, 1, bx);
	if (!ret)
		ret = run(_metadata, self, args, 1, 1, 0);
	vgpu_args_free(args);
	if (!ret)
		ret = vgpu_bo_read(self->bo[0], 0, out, 66 * 4);
	return ret;
}

/* the child runs after the parent with the parameters the parent wrote */
TEST_F(cdp, parent_launches_child)
{
	uint32_t out[66];

	ASSERT_EQ(0, ptx_load(_metadata, self, "cdp.ptx", parent_ptx, "parent"));
	ASSERT_EQ(0, buf(self, 0, NULL, 66 * 4));
	ASSERT_EQ(0, run_parent(_metadata, self, 8, out));
	for (uint32_t i = 0; i < 8; i++)
		EXPECT_EQ(i + 10, out[i]);
	EXPECT_EQ(0xeeeeeeeeu, out[8]);
	EXPECT_EQ(0u, out[64]);
	EXPECT_EQ(0u, out[65]);
	/* a block of 2048 threads: cudaErrorInvalidConfiguration (9), as on an
	 * H200, from the launch and from cudaGetLastError; no child */
	ASSERT_EQ(0, run_parent(_metadata, self, 2048, out));
	EXPECT_EQ(0xeeeeeeeeu, out[0]);
	EXPECT_EQ(9u, out[64]);
	EXPECT_EQ(9u, out[65]);
	/* the slot is free again: the next launch works */
	ASSERT_EQ(0, run_parent(_metadata, self, 64, out));
	EXPECT_EQ(73u, out[63]);
	EXPECT_EQ(0u, out[64]);
}

/* one slot: the second launch of a grid gets cudaErrorLaunchPendingCountExceeded */
TEST_F(cdp, pending_limit)
{
	uint32_t n = 0, out[66];

	ASSERT_EQ(0, vgpu_device_cdp_pending(self->dev, &n));
	EXPECT_EQ(VGPU_CDP_DEFAULT_PENDING, n);
	EXPECT_EQ(-EINVAL, vgpu_device_set_cdp_pending(self->dev, 0));
	EXPECT_EQ(-EINVAL, vgpu_device_set_cdp_pending(self->dev, VGPU_CDP_MAX_PENDING + 1));
	ASSERT_EQ(0, vgpu_device_set_cdp_pending(self->dev, 1));
	ASSERT_EQ(0, ptx_load(_metadata, self, "cdp.ptx", parent_ptx, "parent"));
	ASSERT_EQ(0, buf(self, 0, NULL, 66 * 4));
	ASSERT_EQ(0, run_parent(_metadata, self, 4, out));
	EXPECT_EQ(13u, out[3]);
	/* the area is made: more than its room is refused, less is fine */
	EXPECT_EQ(-EBUSY, vgpu_device_set_cdp_pending(self->dev, VGPU_CDP_DEFAULT_PENDING + 1));
	ASSERT_EQ(0, vgpu_device_set_cdp_pending(self->dev, VGPU_CDP_DEFAULT_PENDING));
}

/*
 * forge(area slot 0 := a LAUNCHED record of this grid naming descriptor kd
 * with a block of bx threads, the cursor moved on by the slots); kd 1:
 * the child's own descriptor
 */
static const char forge_ptx[] = HEAD DECLS CHILD
	/* lchild(p, v): 256 bytes of local memory a thread */
	".visible .entry lchild(.param .u64 p, .param .u32 v)\n{\n"
	".local .align 4 .b8 a[256];\n.reg .pred %p1;\n.reg .b32 %r<4>;\n.reg .b64 %rd<6>;\n"
	"ld.param.u64 %rd1, [p];\nld.param.u32 %r1, [v];\nmov.u32 %r2, %tid.x;\n"
	"and.b32 %r3, %r2, 63;\nmul.wide.u32 %rd2, %r3, 4;\nmov.u64 %rd3, a;\n"
	"add.u64 %rd4, %rd3, %rd2;\nst.local.u32 [%rd4], %r1;\nld.local.u32 %r3, [%rd4];\n"
	"setp.ne.u32 %p1, %r2, 0;\n@%p1 bra $L9;\nst.global.u32 [%rd1], %r3;\n$L9:\nret;\n}\n"
	".visible .entry forge(.param .u64 p, .param .u64 kd, .param .u32 bx, .param .u32 gx)\n{\n"
	".reg .pred %p1;\n.reg .b32 %r<8>;\n.reg .b64 %rd<4>;\n"
	"mov.u32 %r1, %vgpu_cdp_area_lo;\nmov.u32 %r2, %vgpu_cdp_area_hi;\n"
	"mov.b64 %rd1, {%r1, %r2};\nmov.u32 %r3, %vgpu_cdp_grid;\n"
	"ld.param.u64 %rd2, [kd];\nld.param.u32 %r4, [bx];\n"
	"setp.ne.u64 %p1, %rd2, 1;\n@%p1 bra $L1;\nmov.u64 %rd2, child;\n$L1:\n"
	"setp.ne.u64 %p1, %rd2, 2;\n@%p1 bra $L2;\nmov.u64 %rd2, lchild;\n$L2:\n"
	"mov.u32 %r5, 1;\nmov.u32 %r6, 0;\nld.param.u32 %r7, [gx];\n"
	"st.global.u32 [%rd1+72], %r3;\nst.global.u64 [%rd1+80], %rd2;\n"
	"st.global.u32 [%rd1+88], %r7;\nst.global.u32 [%rd1+92], %r5;\n"
	"st.global.u32 [%rd1+96], %r5;\nst.global.u32 [%rd1+100], %r4;\n"
	"st.global.u32 [%rd1+104], %r5;\nst.global.u32 [%rd1+108], %r5;\n"
	"st.global.u32 [%rd1+112], %r6;\nst.global.u32 [%rd1+76], %r6;\n"
	"ld.param.u64 %rd3, [p];\nst.global.u64 [%rd1+128], %rd3;\n"
	"mov.u32 %r7, 7;\nst.global.u32 [%rd1+136], %r7;\n"
	/* a cursor gone round: the device looks at every slot */
	"ld.global.u32 %r7, [%rd1];\natom.global.add.u32 %r7, [%rd1+4], %r7;\n"
	"mov.u32 %r7, 2;\nst.global.u32 [%rd1+64], %r7;\nret;\n}\n";

static void forge_g(struct __test_metadata *_metadata, FIXTURE_DATA(cdp) *self, uint64_t kd,
		    uint32_t bx, uint32_t gx, int want, const char *msg)
{
	struct vgpu_exception_record rec;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { 1 } };

	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, vgpu_args_set_u64(args, 1, kd));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, bx));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 3, gx));
	ASSERT_EQ(0, vgpu_kernel_launch(self->k, &cfg, args, &job));
	vgpu_args_free(args);
	EXPECT_EQ(want, vgpu_job_wait(job, WAIT_NS));
	if (msg) {
		ASSERT_EQ(0, vgpu_job_exception(job, &rec));
		EXPECT_EQ((uint32_t)VGPU_EXC_DEVICE_LAUNCH, rec.code);
		EXPECT_CONTAINS(rec.msg, msg);
	}
	vgpu_job_free(job);
}

static void forge(struct __test_metadata *_metadata, FIXTURE_DATA(cdp) *self, uint64_t kd,
		  uint32_t bx, int want, const char *msg)
{
	forge_g(_metadata, self, kd, bx, 1, want, msg);
}

/* a record that names garbage or a bad shape: that job's exception */
TEST_F(cdp, forged_records)
{
	uint32_t out[4];

	ASSERT_EQ(0, ptx_load(_metadata, self, "forge.ptx", forge_ptx, "forge"));
	ASSERT_EQ(0, buf(self, 0, NULL, 64));
	forge(_metadata, self, 0x123456780ull, 1, -EIO,
	      "device-side launch record 0 names no kernel (0x123456780)");
	forge(_metadata, self, 0, 1, -EIO, "names no kernel (0x0)");
	forge(_metadata, self, 1, 0, -EIO, "record 0: bad shape (grid 1x1x1, block 0x1x1");
	forge(_metadata, self, 1, 4096, -EIO, "bad shape");
	/* the device goes on; a good record runs: child(p, 7) */
	forge(_metadata, self, 1, 2, 0, NULL);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	EXPECT_EQ(7u, out[0]);
	EXPECT_EQ(8u, out[1]);
	/* a child with local memory: the area's (64 MiB: 262144 threads of 256
	 * bytes); one more block is the job's exception */
	forge_g(_metadata, self, 2, 1024, 256, 0, NULL);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, sizeof(out)));
	EXPECT_EQ(7u, out[0]);
	forge_g(_metadata, self, 2, 1024, 257, -EIO,
		"record 0: 67371008 bytes of local memory, the area has 67108864");
}

/*
 * a device without VGPU_FEAT_DEVICE_LAUNCH (the drm backend's today; the
 * sim's with VGPU_SIM_NO_DEVICE_LAUNCH): the launch carries no area, a
 * kernel's launch returns cudaErrorNotSupported (801)
 */
TEST_F(cdp, device_without_the_feature)
{
	uint64_t feat = 0;
	uint32_t out[66];

	vgpu_device_close(self->dev);
	self->dev = NULL;
	setenv("VGPU_SIM_NO_DEVICE_LAUNCH", "1", 1);
	ASSERT_EQ(0, vgpu_device_open(NULL, &self->dev));
	unsetenv("VGPU_SIM_NO_DEVICE_LAUNCH");
	ASSERT_EQ(0, vgpu_device_get_param(self->dev, VGPU_PARAM_FEATURES, &feat));
	EXPECT_EQ(0u, feat & VGPU_FEAT_DEVICE_LAUNCH);
	ASSERT_EQ(0, ptx_load(_metadata, self, "cdp.ptx", parent_ptx, "parent"));
	ASSERT_EQ(0, buf(self, 0, NULL, 66 * 4));
	ASSERT_EQ(0, run_parent(_metadata, self, 8, out));
	EXPECT_EQ(0xeeeeeeeeu, out[0]);
	EXPECT_EQ(0xffffffffu, out[64]); /* no buffer: no launch */
	EXPECT_EQ(801u, out[65]);
}

/* the runtime's other functions are refused by name */
TEST_F(cdp, other_device_runtime_functions)
{
	static const char src[] = HEAD
		".extern .func (.param .b32 r) __cudaCDP2EventRecordWithFlags(.param .b64 p);\n"
		".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r;\n.reg .b64 %d;\n"
		"ld.param.u64 %d, [p];\n{\n.param .b64 a;\nst.param.b64 [a], %d;\n"
		".param .b32 rv;\n"
		"call.uni (rv), __cudaCDP2EventRecordWithFlags, (a);\nld.param.b32 %r, [rv];\n}\nret;\n}\n";
	struct vgpu_program *prog = NULL;

	EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, src, strlen(src), "m.ptx", &prog,
						 self->log, sizeof(self->log)));
	EXPECT_CONTAINS(self->log, "m.ptx:14:16: error: unsupported construct: a call of the external");
	EXPECT_CONTAINS(self->log, "'__cudaCDP2EventRecordWithFlags'");
}

TEST_HARNESS_MAIN
