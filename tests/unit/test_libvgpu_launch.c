// SPDX-License-Identifier: MIT
/*
 * libvgpu's kernel arguments, launches and jobs on whichever backend
 * vgpu_device_open(NULL) gives (test_libvgpu.c says how each backend runs).
 */

#include "libvgpu_test.h"

/* ==================================================================== */
/* Arguments                                                            */
/* ==================================================================== */

static const char params_src[] =
	".kernel params\n"
	".param ptr out\n"
	".param u32 a\n"
	".param s32 b\n"
	".param f32 c\n"
	".param u64 d\n"
	".param s64 e\n"
	"  LDP.64 R2, [out] ;\n"
	"  LDP.32 R4, [a] ;\n"
	"  STG.32 [R2], R4 ;\n"
	"  LDP.32 R4, [b] ;\n"
	"  STG.32 [R2+0x4], R4 ;\n"
	"  LDP.32 R4, [c] ;\n"
	"  STG.32 [R2+0x8], R4 ;\n"
	"  LDP.64 R4, [d] ;\n"
	"  STG.64 [R2+0x10], R4 ;\n"
	"  LDP.64 R4, [e] ;\n"
	"  STG.64 [R2+0x18], R4 ;\n"
	"  EXIT ;\n";

TEST_F(libvgpu, args_setters)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	uint32_t out[8] = { 0 };
	float f = 0;

	prog = prog_new(dev, params_src);
	ASSERT_NE(NULL, prog);
	k = kern(prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 8192, 0, &bo));
	EXPECT_EQ(-EINVAL, vgpu_args_new(NULL, &args));
	EXPECT_EQ(-EINVAL, vgpu_args_new(k, NULL));
	ASSERT_EQ(0, vgpu_args_new(k, &args));

	/* type checks: -EINVAL */
	EXPECT_EQ(-EINVAL, vgpu_args_set_bo(args, 1, bo, 0));   /* u32 */
	EXPECT_EQ(-EINVAL, vgpu_args_set_bo(args, 3, bo, 0));   /* f32 */
	EXPECT_EQ(-EINVAL, vgpu_args_set_u32(args, 0, 1));      /* ptr */
	EXPECT_EQ(-EINVAL, vgpu_args_set_u32(args, 3, 1));      /* f32 */
	EXPECT_EQ(-EINVAL, vgpu_args_set_u32(args, 4, 1));      /* u64 */
	EXPECT_EQ(-EINVAL, vgpu_args_set_s32(args, 0, 1));
	EXPECT_EQ(-EINVAL, vgpu_args_set_s32(args, 3, 1));
	EXPECT_EQ(-EINVAL, vgpu_args_set_f32(args, 1, 1.0f));
	EXPECT_EQ(-EINVAL, vgpu_args_set_f32(args, 4, 1.0f));
	EXPECT_EQ(-EINVAL, vgpu_args_set_u64(args, 1, 1));
	EXPECT_EQ(-EINVAL, vgpu_args_set_u64(args, 3, 1));
	/* no such parameter: -ENOENT */
	EXPECT_EQ(-EINVAL, vgpu_args_set_u32(args, 5, 1));      /* s64 */
	EXPECT_EQ(-EINVAL, vgpu_args_set_s32(args, 5, 1));
	EXPECT_EQ(-EINVAL, vgpu_args_set_bo(args, 5, bo, 0));
	EXPECT_EQ(-ENOENT, vgpu_args_set_u32(args, 6, 1));
	EXPECT_EQ(-ENOENT, vgpu_args_set_bo(args, 6, bo, 0));
	EXPECT_EQ(-ENOENT, vgpu_args_set_u64(args, 99, 1));
	EXPECT_EQ(-ENOENT, vgpu_args_set_f32(args, 6, 1.0f));
	EXPECT_EQ(-ENOENT, vgpu_args_set_s32(args, UINT_MAX, 1));
	/* bad buffer or offset */
	EXPECT_EQ(-EINVAL, vgpu_args_set_bo(args, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, vgpu_args_set_bo(args, 0, bo, 8193));
	/* declared parameters: no pushing */
	EXPECT_EQ(-EINVAL, vgpu_args_push_u64(args, 1));
	EXPECT_EQ(-EINVAL, vgpu_args_push_bo(args, bo, 0));
	EXPECT_EQ(-EINVAL, vgpu_args_use_bo(args, NULL));

	/* accepted: s32 through set_u32, u32 through set_s32, u64 and s64 by set_u64 */
	EXPECT_EQ(0, vgpu_args_set_bo(args, 0, bo, 4096));
	EXPECT_EQ(0, vgpu_args_set_s32(args, 1, -5));
	EXPECT_EQ(0, vgpu_args_set_u32(args, 2, 0x80000001u));
	EXPECT_EQ(0, vgpu_args_set_f32(args, 3, 2.5f));
	EXPECT_EQ(0, vgpu_args_set_u64(args, 4, 0x123456789abcdef0ull));
	EXPECT_EQ(0, vgpu_args_set_u64(args, 5, (uint64_t)-3));
	EXPECT_EQ(0, vgpu_kernel_launch(k, NULL, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(bo, 4096, out, sizeof(out)));
	EXPECT_EQ((uint32_t)-5, out[0]);
	EXPECT_EQ(0x80000001u, out[1]);
	memcpy(&f, &out[2], 4);
	EXPECT_EQ(2.5f, f);
	EXPECT_EQ(0x9abcdef0u, out[4]);
	EXPECT_EQ(0x12345678u, out[5]);
	EXPECT_EQ(0xfffffffdu, out[6]);
	EXPECT_EQ(0xffffffffu, out[7]);
	/* a set may be changed and reused */
	EXPECT_EQ(0, vgpu_args_set_u32(args, 1, 42));
	EXPECT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	EXPECT_EQ(0, vgpu_kernel_launch(k, NULL, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(bo, 0, out, 8));
	EXPECT_EQ(42u, out[0]);
	EXPECT_EQ(0x80000001u, out[1]);
	/* a kernel with parameters needs an argument set */
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(k, NULL, NULL, NULL));
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(NULL, NULL, args, NULL));
	vgpu_args_free(args);
	vgpu_args_free(NULL); /* a no-op */
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

/* A kernel without declared parameters reads its buffer raw. */
static const char raw_src[] =
	".kernel raw\n"
	"  LDP.64 R2, [0x0] ;\n"	/* pushed bo */
	"  LDP.64 R4, [0x8] ;\n"	/* pushed u64 */
	"  LDP.32 R6, [0xffc] ;\n"	/* set_raw at the very end */
	"  STG.64 [R2], R4 ;\n"
	"  STG.32 [R2+0x8], R6 ;\n"
	"  EXIT ;\n";

/* vgpu_args_bytes: the caller writes the buffer; the setters see the same bytes */
TEST_F(libvgpu, args_bytes)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	uint32_t out[3] = { 0 }, tail = 0xbeef;
	uint64_t va, v = 0x0102030405060708ull;
	uint8_t *p;
	void *got = NULL;

	prog = prog_new(dev, raw_src);
	ASSERT_NE(NULL, prog);
	k = kern(prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(k, &args));
	EXPECT_EQ(-E2BIG, vgpu_args_bytes(args, VGPU_MAX_PARAM_BYTES + 1, &got));
	EXPECT_EQ(-EINVAL, vgpu_args_bytes(args, 16, NULL));
	EXPECT_EQ(-EINVAL, vgpu_args_bytes(NULL, 16, &got));
	ASSERT_EQ(0, vgpu_args_bytes(args, 16, &got));
	p = got;
	va = vgpu_bo_gpu_address(bo) + 128;
	memcpy(p, &va, 8);
	memcpy(p + 8, &v, 8);
	/* a setter past them: the launch passes all of it, the bytes stay */
	EXPECT_EQ(0, vgpu_args_set_raw(args, VGPU_MAX_PARAM_BYTES - 4, &tail, 4));
	EXPECT_EQ(0, vgpu_args_use_bo(args, bo));
	EXPECT_EQ(0, vgpu_kernel_launch(k, NULL, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(bo, 128, out, 12));
	EXPECT_EQ(0x05060708u, out[0]);
	EXPECT_EQ(0x01020304u, out[1]);
	EXPECT_EQ(0xbeefu, out[2]);
	/* the same pointer again, a shorter length does not shrink what is passed */
	ASSERT_EQ(0, vgpu_args_bytes(args, 4, &got));
	EXPECT_EQ((void *)p, got);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, args_raw_and_push)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	uint32_t out[3] = { 0 }, tail = 0xc0ffee;
	uint8_t big[VGPU_MAX_PARAM_BYTES + 1] = { 0 };

	prog = prog_new(dev, raw_src);
	ASSERT_NE(NULL, prog);
	k = kern(prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(k, &args));
	/* no declared parameter to set */
	EXPECT_EQ(-ENOENT, vgpu_args_set_u32(args, 0, 1));
	EXPECT_EQ(-ENOENT, vgpu_args_set_bo(args, 0, bo, 0));
	EXPECT_EQ(0, vgpu_args_push_bo(args, bo, 256));
	EXPECT_EQ(0, vgpu_args_push_u64(args, 0x1122334455667788ull));
	EXPECT_EQ(-EINVAL, vgpu_args_push_bo(args, NULL, 0));
	EXPECT_EQ(-EINVAL, vgpu_args_push_bo(args, bo, 4097));
	EXPECT_EQ(0, vgpu_args_set_raw(args, VGPU_MAX_PARAM_BYTES - 4, &tail, 4));
	/* limits: -E2BIG past VGPU_MAX_PARAM_BYTES */
	EXPECT_EQ(-E2BIG, vgpu_args_set_raw(args, VGPU_MAX_PARAM_BYTES - 3, &tail, 4));
	EXPECT_EQ(-E2BIG, vgpu_args_set_raw(args, 0, big, sizeof(big)));
	EXPECT_EQ(-E2BIG, vgpu_args_set_raw(args, UINT32_MAX, &tail, 4));
	EXPECT_EQ(0, vgpu_args_set_raw(args, VGPU_MAX_PARAM_BYTES, NULL, 0));
	EXPECT_EQ(-EINVAL, vgpu_args_set_raw(args, 0, NULL, 4));
	/* the buffer is full: pushing more does not fit */
	EXPECT_EQ(-E2BIG, vgpu_args_push_u64(args, 1));
	EXPECT_EQ(-E2BIG, vgpu_args_push_bo(args, bo, 0));
	EXPECT_EQ(0, vgpu_kernel_launch(k, NULL, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(bo, 256, out, 12));
	EXPECT_EQ(0x55667788u, out[0]);
	EXPECT_EQ(0x11223344u, out[1]);
	EXPECT_EQ(0xc0ffeeu, out[2]);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, args_too_many_buffers)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo **bos;
	unsigned int n = VGPU_SUBMIT_MAX_BOS - 1, made = 0;
	int ret = 0;
	struct vgpu_job *job = NULL;
	uint32_t *out = NULL;

	prog = prog_new(dev, store_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	bos = calloc(n, sizeof(*bos));
	ASSERT_NE(NULL, bos);
	for (made = 0; made < n; made++)
		if (vgpu_bo_new(dev, 4096, 0, &bos[made]))
			break;
	EXPECT_EQ(n, made);
	/* the launch adds its code and parameter pages: 4094 fit */
	for (unsigned int i = 0; i < made && !ret; i++) {
		ret = vgpu_args_use_bo(args, bos[i]);
		if (ret)
			EXPECT_EQ(VGPU_SUBMIT_MAX_BOS - 2, i);
	}
	EXPECT_EQ(-E2BIG, ret);
	/* a buffer already listed is no new entry */
	EXPECT_EQ(0, vgpu_args_use_bo(args, bos[0]));
	EXPECT_EQ(0, vgpu_args_set_bo(args, 0, bos[0], 0));
	EXPECT_EQ(-E2BIG, vgpu_args_set_bo(args, 0, bos[made - 1], 0));
	EXPECT_EQ(0, vgpu_args_set_u32(args, 1, 9));
	/* and the launch with 4096 buffers goes through */
	EXPECT_EQ(0,
		  vgpu_kernel_launch(kern(prog), &(struct vgpu_launch_config){
				    .block = { 32 } }, args, &job));
	if (job)
		EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	ASSERT_EQ(0, vgpu_bo_map(bos[0], (void **)&out));
	EXPECT_EQ(0u, store_bad(out, 32, 9));
	for (unsigned int i = 0; i < made; i++)
		vgpu_bo_free(bos[i]);
	free(bos);
	vgpu_args_free(args);
	vgpu_program_free(prog);
}

TEST(objects_of_another_device)
{
	struct vgpu_device *da = dev_open(), *db = NULL, *dsim = NULL;
	struct vgpu_program *pa;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bob = NULL, *bsim = NULL;
	struct vgpu_syncobj *sb = NULL;
	bool other_pci;
	struct vgpu_program *raw;
	struct vgpu_args *ra = NULL;

	ASSERT_NE(NULL, da);
	db = second_device(da, &other_pci);
	ASSERT_NE(NULL, db);
	pa = prog_new(da, store_src);
	ASSERT_NE(NULL, pa);
	ASSERT_EQ(0, vgpu_args_new(kern(pa), &args));
	ASSERT_EQ(0, vgpu_bo_new(db, 4096, 0, &bob));
	ASSERT_EQ(0, vgpu_syncobj_new(db, VGPU_SYNCOBJ_SIGNALED, &sb));
	EXPECT_EQ(-EXDEV, vgpu_args_set_bo(args, 0, bob, 0));
	EXPECT_EQ(-EXDEV, vgpu_args_use_bo(args, bob));
	/* a buffer of a sim device in a drm device's launch, or of another sim */
	ASSERT_EQ(0, vgpu_device_open("sim", &dsim));
	ASSERT_EQ(0, vgpu_bo_new(dsim, 4096, 0, &bsim));
	EXPECT_EQ(-EXDEV, vgpu_args_set_bo(args, 0, bsim, 0));
	raw = prog_new(da, raw_src);
	ASSERT_NE(NULL, raw);
	ASSERT_EQ(0, vgpu_args_new(kern(raw), &ra));
	EXPECT_EQ(-EXDEV, vgpu_args_push_bo(ra, bob, 0));
	vgpu_args_free(ra);
	vgpu_program_free(raw);
	/* syncobjs of another device, either direction */
	{
		struct vgpu_sync_point sp = { sb, 0 };
		struct vgpu_launch_config w = { .wait = &sp, .nwait = 1 };
		struct vgpu_launch_config s = { .signal = &sp, .nsignal = 1 };
		struct vgpu_bo *boa = NULL;

		ASSERT_EQ(0, vgpu_bo_new(da, 4096, 0, &boa));
		EXPECT_EQ(0, vgpu_args_set_bo(args, 0, boa, 0));
		EXPECT_EQ(-EXDEV, vgpu_kernel_launch(kern(pa), &w, args, NULL));
		EXPECT_EQ(-EXDEV, vgpu_kernel_launch(kern(pa), &s, args, NULL));
		vgpu_bo_free(boa);
	}
	vgpu_syncobj_free(sb);
	vgpu_bo_free(bob);
	vgpu_bo_free(bsim);
	vgpu_args_free(args);
	vgpu_program_free(pa);
	vgpu_device_close(dsim);
	vgpu_device_close(db);
	vgpu_device_close(da);
}

/* ==================================================================== */
/* Launches, jobs                                                       */
/* ==================================================================== */

TEST_F(libvgpu, launch_store_results_and_status)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_job_status st;
	struct vgpu_job *job = NULL;
	struct store s;
	struct vgpu_exception_record rec;
	char buf[64];

	ASSERT_EQ(0, store_init(&s, dev, NULL, 4 * 4096));
	ASSERT_EQ(0, store_launch(&s, 7, 8, 128, &job));
	EXPECT_EQ(-EINVAL, vgpu_job_status(job, NULL));
	EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	EXPECT_EQ(0, vgpu_job_wait(job, 0)); /* again: the same answer */
	EXPECT_EQ(0u, store_bad(s.out, 1024, 7));
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ(VGPU_JOB_DONE, st.state);
	EXPECT_EQ(0u, st.error);
	EXPECT_EQ(VGPU_ERR_NONE, st.hw_status);
	EXPECT_EQ(0u, st.queue);
	EXPECT_EQ((uint64_t)(8 * 4 * STORE_INSNS), st.warp_insns);
	EXPECT_EQ(-ENODATA, vgpu_job_exception(job, &rec));
	EXPECT_EQ(-EINVAL, vgpu_job_exception(job, NULL));
	EXPECT_EQ(-ENODATA, vgpu_job_describe(job, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, vgpu_job_describe(job, NULL, 5));
	vgpu_job_free(job);
	vgpu_job_free(NULL); /* a no-op */
	store_fini(&s);
}

TEST_F(libvgpu, launch_reduce_bar_sync)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_launch_config cfg = { .block = { 256 } };
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_job *job = NULL;
	uint32_t out[2] = { 0 };

	prog = prog_new(dev, reduce_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 16, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	for (uint64_t seed = 0; seed < 4; seed++) {
		cfg.flags = seed ? VGPU_LAUNCH_RANDOM_SCHED : 0;
		cfg.seed = seed;
		ASSERT_EQ(0, vgpu_bo_write(bo, 0, (uint32_t[2]){ 0, 0 }, 8));
		ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, &job));
		EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
		vgpu_job_free(job);
		EXPECT_EQ(0, vgpu_bo_read(bo, 0, out, 8));
		EXPECT_EQ(5559680u, out[0]);
		EXPECT_EQ(9u, out[1]);
	}
	/* dynamic shared memory on top of the static 1024 bytes */
	cfg = (struct vgpu_launch_config){ .block = { 256 }, .smem_bytes = 4096,
					   .flags = VGPU_LAUNCH_SANITIZE };
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, &job));
	EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	EXPECT_EQ(0, vgpu_bo_read(bo, 0, out, 8));
	EXPECT_EQ(5559680u, out[0]);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, launch_grid_block_3d)
{
	/* out[linear cta * 64 + linear tid] = 1 for a 2x3x2 grid of 4x4x4 */
	static const char src[] =
		".kernel k\n.param ptr out\n"
		"  S2R R0, SR_TID ;\n"
		"  S2R R1, SR_CTAID.X ;\n  S2R R2, SR_CTAID.Y ;\n  S2R R3, SR_CTAID.Z ;\n"
		"  IMAD R2, R3, 0x3, R2 ;\n"	/* y + 3z */
		"  IMAD R1, R2, 0x2, R1 ;\n"	/* x + 2(y + 3z) */
		"  IMAD R0, R1, 0x40, R0 ;\n"
		"  SHL R0, R0, 0x2 ;\n"
		"  LDP.64 R4, [out] ;\n"
		"  IADD R4, R4, R0 ;\n"
		"  MOV R6, 0x1 ;\n"
		"  STG.32 [R4], R6 ;\n"
		"  EXIT ;\n";
	struct vgpu_device *dev = self->dev;
	struct vgpu_launch_config cfg = { .grid = { 2, 3, 2 }, .block = { 4, 4, 4 } };
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	uint32_t *out = NULL;
	unsigned int ones = 0;

	prog = prog_new(dev, src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4 * 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	EXPECT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	ASSERT_EQ(0, vgpu_bo_map(bo, (void **)&out));
	for (int i = 0; i < 4096; i++)
		ones += out[i];
	EXPECT_EQ(12u * 64, ones);
	EXPECT_EQ(1u, out[12 * 64 - 1]);
	EXPECT_EQ(0u, out[12 * 64]);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

/* capable(CAP_SYS_NICE) as the driver asks it: the effective set */
static bool cap_sys_nice(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

/*
 * A queue of each priority: its launches run and report its id; each
 * priority has its own hardware queues when there are at least four; the
 * queue's state counts them.  HIGH and REALTIME need CAP_SYS_NICE.
 */
TEST_F(libvgpu, launch_queues)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_launch_config cfg = { .block = { 32 } };
	struct vgpu_queue_state qs;
	struct vgpu_job_status st;
	struct vgpu_job *job = NULL;
	struct vgpu_queue *q;
	uint32_t nq, hw[4] = { 0 }, ids[4] = { 0 }, np = 0;
	struct store s;

	nq = (uint32_t)param(dev, VGPU_PARAM_QUEUES);
	ASSERT_EQ(0, store_init(&s, dev, NULL, 4096));
	for (uint32_t p = 0; p <= VGPU_QUEUE_PRIORITY_REALTIME; p++) {
		int ret = vgpu_queue_new(dev, p, &q);

		if (p > VGPU_QUEUE_PRIORITY_NORMAL && !cap_sys_nice()) {
			EXPECT_EQ(-EPERM, ret);
			continue;
		}
		ASSERT_EQ(0, ret);
		ids[p] = vgpu_queue_id(q);
		EXPECT_NE(0u, ids[p]);
		for (uint32_t i = 0; i < p; i++)
			EXPECT_NE(ids[i], ids[p]);
		cfg.queue = q;
		for (uint32_t n = 0; n < 2; n++) {
			ASSERT_EQ(0, vgpu_args_set_u32(s.args, 1, 100 + p + n));
			ASSERT_EQ(0, vgpu_kernel_launch(s.k, &cfg, s.args, &job));
			EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
			ASSERT_EQ(0, vgpu_job_status(job, &st));
			EXPECT_EQ(ids[p], st.queue);
			EXPECT_LT(st.hw_queue, nq);
			EXPECT_EQ(VGPU_JOB_DONE, st.state);
			EXPECT_EQ(0u, store_bad(s.out, 32, 100 + p + n));
			vgpu_job_free(job);
		}
		hw[p] = st.hw_queue;
		ASSERT_EQ(0, vgpu_queue_state(dev, q, &qs));
		EXPECT_EQ(VGPU_QUEUE_STATE_ACTIVE, qs.state);
		EXPECT_EQ(p, qs.priority);
		EXPECT_EQ(2u, qs.submitted);
		EXPECT_EQ(2u, qs.completed);
		EXPECT_EQ(0u, qs.guilty_resets);
		EXPECT_EQ(0u, qs.innocent_resets);
		EXPECT_EQ(0u, qs.ban_reason);
		EXPECT_EQ(hw[p], qs.hw_queue);
		vgpu_queue_free(q);
		np++;
	}
	EXPECT_EQ(cap_sys_nice() ? 4u : 2u, np);
	if (nq >= 4 && np == 4) {
		for (uint32_t p = 1; p < 4; p++)
			EXPECT_NE(hw[p - 1], hw[p]);
	}
	/* the default queue: id 0, normal priority, this test's jobs not in it */
	ASSERT_EQ(0, vgpu_queue_state(dev, NULL, &qs));
	EXPECT_EQ(VGPU_QUEUE_PRIORITY_NORMAL, qs.priority);
	EXPECT_EQ(0u, vgpu_queue_id(NULL));
	cfg.queue = NULL;
	ASSERT_EQ(0, vgpu_kernel_launch(s.k, &cfg, s.args, &job));
	EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ(0u, st.queue);
	/*
	 * The queue reports its latest job's hardware queue.  (Not that it
	 * reported before: an idle queue's next job goes to the least busy
	 * hardware queue of its priority, and the jobs of this test's other
	 * queues may not all have been freed yet.)
	 */
	ASSERT_EQ(0, vgpu_queue_state(dev, NULL, &qs));
	EXPECT_EQ(qs.hw_queue, st.hw_queue);
	vgpu_job_free(job);
	EXPECT_EQ(-EINVAL, vgpu_queue_new(dev, VGPU_QUEUE_PRIORITY_REALTIME + 1, &q));
	EXPECT_EQ(-EINVAL, vgpu_queue_new(dev, VGPU_QUEUE_PRIORITY_LOW, NULL));
	EXPECT_EQ(-EINVAL, vgpu_queue_state(dev, NULL, NULL));
	store_fini(&s);
}

/* A destroyed queue's id is not given out again at once; the limit is the driver's. */
TEST_F(libvgpu, queue_ids_and_limit)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_queue *q[64] = { NULL }, *more = NULL;
	uint32_t max = (uint32_t)param(dev, VGPU_PARAM_MAX_QUEUES), first;

	ASSERT_EQ(64u, max);
	for (uint32_t i = 0; i < max; i++)
		ASSERT_EQ(0, vgpu_queue_new(dev, VGPU_QUEUE_PRIORITY_LOW, &q[i]));
	EXPECT_EQ(-EMFILE, vgpu_queue_new(dev, VGPU_QUEUE_PRIORITY_LOW, &more));
	EXPECT_EQ(NULL, more);
	first = vgpu_queue_id(q[0]);
	vgpu_queue_free(q[0]);
	ASSERT_EQ(0, vgpu_queue_new(dev, VGPU_QUEUE_PRIORITY_NORMAL, &q[0]));
	EXPECT_NE(first, vgpu_queue_id(q[0]));
	for (uint32_t i = 0; i < max; i++)
		vgpu_queue_free(q[i]);
}

/* A queue of one device given to a launch on another: -EINVAL, nothing runs. */
TEST_F(libvgpu, queue_of_another_device)
{
	struct vgpu_device *dev = self->dev, *other = NULL;
	struct vgpu_queue *q = NULL;
	struct vgpu_queue_state qs;
	struct vgpu_job *job = (struct vgpu_job *)0x1;
	struct store s;

	bool other_pci;

	other = second_device(dev, &other_pci);
	ASSERT_NE(NULL, other);
	ASSERT_EQ(0, vgpu_queue_new(other, VGPU_QUEUE_PRIORITY_LOW, &q));
	ASSERT_EQ(0, store_init(&s, dev, NULL, 4096));
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &(struct vgpu_launch_config){
						      .queue = q }, s.args, &job));
	EXPECT_EQ((struct vgpu_job *)0x1, job);
	EXPECT_EQ(-EINVAL, vgpu_queue_state(dev, q, &qs));
	ASSERT_EQ(0, vgpu_queue_state(other, q, &qs));
	EXPECT_EQ(0u, qs.submitted);
	store_fini(&s);
	vgpu_queue_free(q);
	vgpu_device_close(other);
}

TEST_F(libvgpu, launch_config_errors)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_syncobj *fresh = NULL, *done = NULL;
	struct vgpu_sync_point *many;
	struct vgpu_launch_config cfg;
	struct store s;
	struct vgpu_job *job = NULL;
	struct vgpu_program *r;
	struct vgpu_args *ra = NULL;

	ASSERT_EQ(0, store_init(&s, dev, NULL, 4096));
	ASSERT_EQ(0, vgpu_syncobj_new(dev, 0, &fresh));
	ASSERT_EQ(0, vgpu_syncobj_new(dev, VGPU_SYNCOBJ_SIGNALED, &done));
	many = calloc(VGPU_SUBMIT_MAX_SYNCS + 1, sizeof(*many));
	ASSERT_NE(NULL, many);
	for (unsigned int i = 0; i <= VGPU_SUBMIT_MAX_SYNCS; i++)
		many[i] = (struct vgpu_sync_point){ done, 0 };

	/* unknown launch flags */
	/* the lowest flag past the mask */
	cfg = (struct vgpu_launch_config){
		.flags = ~VGPU_LAUNCH_FLAGS_MASK & (0u - ~VGPU_LAUNCH_FLAGS_MASK)
	};
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	cfg.flags = ~VGPU_LAUNCH_FLAGS_MASK;
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	/* shared memory that overflows 32 bits with the static part */
	r = prog_new(dev, reduce_src);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, vgpu_args_new(kern(r), &ra));
	ASSERT_EQ(0, vgpu_args_set_bo(ra, 0, s.bo, 0));
	cfg = (struct vgpu_launch_config){ .smem_bytes = UINT32_MAX };
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(kern(r), &cfg, ra, NULL));
	vgpu_args_free(ra);
	vgpu_program_free(r);
	/* too many sync points: -E2BIG (the job's own completion counts) */
	cfg = (struct vgpu_launch_config){ .wait = many,
					   .nwait = VGPU_SUBMIT_MAX_SYNCS + 1 };
	EXPECT_EQ(-E2BIG, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	cfg = (struct vgpu_launch_config){ .signal = many,
					   .nsignal = VGPU_SUBMIT_MAX_SYNCS };
	EXPECT_EQ(-E2BIG, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	/* at the limit: fine */
	cfg = (struct vgpu_launch_config){ .wait = many,
					   .nwait = VGPU_SUBMIT_MAX_SYNCS };
	EXPECT_EQ(0, vgpu_kernel_launch(s.k, &cfg, s.args, &job));
	if (job)
		EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	job = NULL;
	cfg = (struct vgpu_launch_config){ .signal = many,
					   .nsignal = VGPU_SUBMIT_MAX_SYNCS - 1 };
	EXPECT_EQ(0, vgpu_kernel_launch(s.k, &cfg, s.args, &job));
	if (job)
		EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	/* sync point arrays: NULL array, NULL syncobj */
	cfg = (struct vgpu_launch_config){ .wait = NULL, .nwait = 1 };
	EXPECT_EQ(-EFAULT, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	cfg = (struct vgpu_launch_config){ .signal = NULL, .nsignal = 1 };
	EXPECT_EQ(-EFAULT, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	many[0].syncobj = NULL;
	cfg = (struct vgpu_launch_config){ .wait = many, .nwait = 1 };
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	/* an in-sync without a fence yet: -EINVAL (no wait-before-submit) */
	many[0] = (struct vgpu_sync_point){ fresh, 0 };
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	many[0] = (struct vgpu_sync_point){ fresh, 5 };
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	/* point 5 of a timeline at 3: no fence either; at 3 and below: fine */
	EXPECT_EQ(0, vgpu_syncobj_signal(fresh, 3));
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	many[0].point = 3;
	EXPECT_EQ(0, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	many[0].point = 2;
	EXPECT_EQ(0, vgpu_kernel_launch(s.k, &cfg, s.args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(s.bo, WAIT_NS));
	free(many);
	vgpu_syncobj_free(fresh);
	vgpu_syncobj_free(done);
	store_fini(&s);
}

/* A launch the driver accepts and the device refuses: VGPU_EXC_BAD_LAUNCH. */
static void expect_bad_launch(struct __test_metadata *_metadata,
			      struct vgpu_device *dev,
			      const struct vgpu_kernel *k,
			      const struct vgpu_args *args,
			      const struct vgpu_launch_config *cfg,
			      const char *what)
{
	struct vgpu_exception_record rec;
	struct vgpu_job_status st;
	struct vgpu_job *job = NULL;
	char text[1024];

	ASSERT_EQ(0, vgpu_kernel_launch(k, cfg, args, &job));
	EXPECT_EQ(-EIO, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ(VGPU_JOB_FAILED, st.state);
	EXPECT_EQ((uint32_t)EIO, st.error);
	EXPECT_EQ(VGPU_ERR_BAD_LAUNCH, st.hw_status);
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, rec.code);
	EXPECT_GT(vgpu_job_describe(job, text, sizeof(text)), 0);
	EXPECT_CONTAINS(text, "BAD_LAUNCH");
	EXPECT_CONTAINS(rec.msg, what);
	vgpu_job_free(job);
}

TEST_F(libvgpu, launch_rejected_by_device)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_launch_config cfg;
	struct store s;

	ASSERT_EQ(0, store_init(&s, dev, NULL, 4096));
	cfg = (struct vgpu_launch_config){ .block = { 1024, 2 } };
	expect_bad_launch(_metadata, dev, s.k, s.args, &cfg, "thread");
	cfg = (struct vgpu_launch_config){
		.smem_bytes = (uint32_t)param(dev, VGPU_PARAM_SMEM) + 1 };
	expect_bad_launch(_metadata, dev, s.k, s.args, &cfg, "shared");
	cfg = (struct vgpu_launch_config){ .grid = { 3 }, .cluster = { 2 } };
	expect_bad_launch(_metadata, dev, s.k, s.args, &cfg, "cluster");
	/* the device goes on */
	EXPECT_EQ(0, store_run(&s, 1, 1, 64));
	EXPECT_EQ(0u, store_bad(s.out, 64, 1));
	store_fini(&s);
}

TEST_F(libvgpu, job_wait_timeout_and_poll)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_job *job = NULL;
	struct vgpu_job_status st;
	struct vgpu_exception_record rec;
	char buf[64];
	int64_t t0;
	int ret;

	prog = prog_new(dev, spin_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, SPIN_LONG));
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), NULL, args, &job));
	t0 = now_ns();
	ret = vgpu_job_wait(job, 0);
	if (is_sim(dev)) {
		/* sim ran it at submit */
		EXPECT_EQ(0, ret);
	} else {
		EXPECT_EQ(-ETIME, ret);
		EXPECT_EQ(-ETIME, vgpu_job_wait(job, 2 * MS));
		EXPECT_GE(now_ns() - t0, 2 * MS);
		ASSERT_EQ(0, vgpu_job_status(job, &st));
		EXPECT_TRUE(st.state == VGPU_JOB_QUEUED || st.state == VGPU_JOB_RUNNING);
		EXPECT_EQ(-EBUSY, vgpu_job_exception(job, &rec));
		EXPECT_EQ(-EBUSY, vgpu_job_describe(job, buf, sizeof(buf)));
		EXPECT_EQ(0, vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE));
	}
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ(VGPU_JOB_DONE, st.state);
	EXPECT_EQ(3 + 3ull * SPIN_LONG + 4, st.warp_insns);
	EXPECT_GT(st.elapsed_ns, 0u);
	EXPECT_EQ(-ENODATA, vgpu_job_exception(job, &rec));
	vgpu_job_free(job);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, job_budget_exceeded)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_job *job = NULL;
	struct vgpu_exception_record rec;
	struct vgpu_launch_config cfg = { .budget = 1000 };
	char text[1024];

	prog = prog_new(dev, spin_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, SPIN_LONG));
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, &job));
	EXPECT_EQ(-EIO, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_exception(job, &rec));
	EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, rec.code);
	EXPECT_GT(vgpu_job_describe(job, text, sizeof(text)), 0);
	EXPECT_CONTAINS(text, "device exception BUDGET: instruction budget exceeded");
	vgpu_job_free(job);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

TEST_HARNESS_MAIN
