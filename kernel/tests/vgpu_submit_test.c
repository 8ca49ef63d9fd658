// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: GET_JOB's answers and its copy of the exception record, and
 * SUBMIT's argument rules (uapi/vgpu_drm.h), user pointers included, on
 * vgpu_job_test.c's fake device (vgpu_job.c includes both; SUBMIT's checks
 * come from vgpu_submit.c through vgpu_job.h).
 */

/* ---- GET_JOB ---- */

static void vgpu_job_get_job_ids(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	struct drm_vgpu_get_job g = {};

	cpl->warp_insns = cpu_to_le64(77);
	vgpu_job_record(vgpu_test_job(test, 11), 0, VGPU_ERR_NONE, cpl);

	g.job_id = 11;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), 0);
	KUNIT_EXPECT_EQ(test, g.state, VGPU_JOB_DONE);
	KUNIT_EXPECT_EQ(test, g.queue, VGPU_TEST_QUEUE);
	KUNIT_EXPECT_EQ(test, g.warp_insns, 77);
	/* id 0, an id never submitted, an id the history has dropped */
	g = (struct drm_vgpu_get_job){ .job_id = 0 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	g = (struct drm_vgpu_get_job){ .job_id = 12 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	vgpu_test_job(test, 11 + VGPU_JOB_HISTORY);
	g = (struct drm_vgpu_get_job){ .job_id = 11 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	g = (struct drm_vgpu_get_job){ .job_id = 11 + VGPU_JOB_HISTORY };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), 0);
	KUNIT_EXPECT_EQ(test, g.state, VGPU_JOB_QUEUED);
	KUNIT_EXPECT_EQ(test, g.error, 0);
	/* pad: -EINVAL, before the id is looked at */
	g = (struct drm_vgpu_get_job){ .job_id = 11 + VGPU_JOB_HISTORY, .pad = 1 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EINVAL);
	g = (struct drm_vgpu_get_job){ .job_id = 12, .pad = 1u << 31 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EINVAL);
}

/* User memory in the test's own mm, filled with 0xee. */
static void __user *vgpu_test_umem(struct kunit *test, size_t size)
{
	unsigned long addr = kunit_vm_mmap(test, NULL, 0, size, PROT_READ | PROT_WRITE,
					   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	void __user *u = (void __user *)addr;
	u8 *fill;

	KUNIT_ASSERT_NE_MSG(test, addr, 0, "no user mm");
	KUNIT_ASSERT_LT(test, addr, (unsigned long)TASK_SIZE);
	fill = kunit_kmalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fill);
	memset(fill, 0xee, size);
	KUNIT_ASSERT_EQ(test, copy_to_user(u, fill, size), 0);
	return u;
}

/*
 * The end of a page of user memory (filled with 0xee) that no mapping
 * follows: an access running past it faults.
 */
static void __user *vgpu_test_umem_edge(struct kunit *test)
{
	void __user *u = vgpu_test_umem(test, 2 * PAGE_SIZE);

	KUNIT_ASSERT_EQ(test, vm_munmap((unsigned long)u + PAGE_SIZE, PAGE_SIZE), 0);
	return u + PAGE_SIZE;
}

/*
 * The exception record: min(exception_size, sizeof record) bytes are
 * written, nothing after them; an unwritable pointer is -EFAULT.
 */
static void vgpu_job_get_job_exception_copy(struct kunit *test)
{
	static const u32 sizes[] = { 0, 1, 8, 295, 296, 297, 4096 };
	const size_t rec = sizeof(struct vgpu_exception_record);
	struct vgpu_job_test *t = test->priv;
	struct vgpu_completion *cpl = vgpu_test_new(test, struct vgpu_completion);
	struct drm_vgpu_get_job g;
	u8 *back = kunit_kmalloc(test, PAGE_SIZE, GFP_KERNEL);
	void __user *u;
	unsigned int i, k;

	KUNIT_ASSERT_NOT_NULL(test, back);
	KUNIT_ASSERT_EQ(test, rec, 296);
	cpl->exc.code = cpu_to_le32(VGPU_EXC_BAR_COUNT_MISMATCH);
	for (k = 0; k < sizeof(cpl->exc.msg) - 1; k++)
		cpl->exc.msg[k] = 'a' + k % 26;
	vgpu_job_record(vgpu_test_job(test, 4), -EIO, VGPU_ERR_EXCEPTION, cpl);

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = min_t(size_t, sizes[i], rec);

		u = vgpu_test_umem(test, PAGE_SIZE);
		g = (struct drm_vgpu_get_job){ .job_id = 4, .exception = (u64)(uintptr_t)u,
					       .exception_size = sizes[i] };
		KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), 0);
		KUNIT_EXPECT_EQ(test, g.state, VGPU_JOB_FAILED);
		KUNIT_ASSERT_EQ(test, copy_from_user(back, u, PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(back, &cpl->exc, n), 0, "size %u", sizes[i]);
		KUNIT_EXPECT_NULL_MSG(test, memchr_inv(back + n, 0xee, PAGE_SIZE - n),
				      "size %u: bytes written past %zu", sizes[i], n);
	}
	/* an address that is not mapped, a kernel address */
	g = (struct drm_vgpu_get_job){ .job_id = 4, .exception = 16, .exception_size = 296 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EFAULT);
	g = (struct drm_vgpu_get_job){ .job_id = 4, .exception = (u64)(uintptr_t)back,
				       .exception_size = 296 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -EFAULT);
	/* an unknown job: -ENOENT, and nothing is written */
	u = vgpu_test_umem(test, PAGE_SIZE);
	g = (struct drm_vgpu_get_job){ .job_id = 5, .exception = (u64)(uintptr_t)u,
				       .exception_size = 296 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_job(NULL, &g, t->file), -ENOENT);
	KUNIT_ASSERT_EQ(test, copy_from_user(back, u, PAGE_SIZE), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(back, 0xee, PAGE_SIZE));
}

/* ---- SUBMIT's arguments ---- */

static struct drm_vgpu_submit vgpu_test_submit_ok(void)
{
	return (struct drm_vgpu_submit){
		.launch = {
			.code_va = 0x100000, .code_size = 32,
			.grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .cluster = { 1, 1, 1 },
			.param_size = 8,
		},
		.bo_handle_count = VGPU_SUBMIT_MAX_BOS,
		.in_sync_count = VGPU_SUBMIT_MAX_SYNCS,
		.out_sync_count = VGPU_SUBMIT_MAX_SYNCS,
		.queue = 3,
	};
}

static void vgpu_job_submit_check(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_device *vdev = t->vdev;
	struct drm_vgpu_submit s = vgpu_test_submit_ok();
	int i;

	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), 0);
#define BAD(errno_, field, value)						\
	do {									\
		s = vgpu_test_submit_ok();					\
		s.field = value;						\
		KUNIT_EXPECT_EQ_MSG(test, vgpu_submit_check(vdev, &s), errno_,	\
				    #field " = " #value);			\
		/* the handler applies it before anything else */		\
		KUNIT_EXPECT_EQ_MSG(test, vgpu_ioctl_submit(&vdev->drm, &s, t->file), \
				    errno_, "ioctl: " #field " = " #value);	\
	} while (0)
	BAD(-EINVAL, flags, 1);
	BAD(-EINVAL, flags, 1u << 31);
	BAD(-EINVAL, pad, 1);
	BAD(-EINVAL, pad, 1u << 31);
	BAD(-E2BIG, bo_handle_count, VGPU_SUBMIT_MAX_BOS + 1);
	BAD(-E2BIG, bo_handle_count, ~0u);
	BAD(-E2BIG, in_sync_count, VGPU_SUBMIT_MAX_SYNCS + 1);
	BAD(-E2BIG, out_sync_count, VGPU_SUBMIT_MAX_SYNCS + 1);
	BAD(-EINVAL, launch.launch_flags, ~VGPU_LAUNCH_FLAGS_MASK);
	/* the lowest flag past the defined ones (the mask is the low bits) */
	BAD(-EINVAL, launch.launch_flags, ~VGPU_LAUNCH_FLAGS_MASK & (VGPU_LAUNCH_FLAGS_MASK + 1));
	BAD(-EINVAL, launch.code_size, 0);
	BAD(-EINVAL, launch.code_size, 24);
	BAD(-EINVAL, launch.code_size, 8);
	BAD(-EINVAL, launch.code_va, 0x100008);
	BAD(-EINVAL, launch.code_va, 0x100001);
	BAD(-EINVAL, launch.code_size, (1 << 16) + 16);
	BAD(-EINVAL, launch.param_size, 4097);
	for (i = 0; i < 3; i++) {
		BAD(-EINVAL, launch.grid[i], 0);
		BAD(-EINVAL, launch.block[i], 0);
	}
	/* -EINVAL for flags or pad comes before -E2BIG for the counts */
	s = vgpu_test_submit_ok();
	s.pad = 1;
	s.bo_handle_count = ~0u;
	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), -EINVAL);
#undef BAD
	/* the limits themselves are allowed; cluster 0 counts as 1 */
	s = vgpu_test_submit_ok();
	s.queue = 0;
	s.launch.code_size = 1 << 16;
	s.launch.param_size = 4096;
	s.launch.launch_flags = VGPU_LAUNCH_FLAGS_MASK;
	s.launch.cluster[0] = s.launch.cluster[1] = s.launch.cluster[2] = 0;
	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), 0);
	s.launch.code_size = 16;
	s.launch.param_size = 0;
	s.bo_handle_count = s.in_sync_count = s.out_sync_count = 0;
	KUNIT_EXPECT_EQ(test, vgpu_submit_check(vdev, &s), 0);
}

/*
 * Extensions: the timeline extension goes with VGPU_LAUNCH_TIMELINE (both
 * or neither) and is checked as the uAPI says; an unknown name, a name
 * given twice or a non-zero pad is -EINVAL; unreadable is -EFAULT.
 */
static void vgpu_job_submit_extensions(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct drm_vgpu_extension e = { .name = 0 };
	struct drm_vgpu_ext_timeline tl = {
		.base.name = VGPU_SUBMIT_EXT_TIMELINE, .va = 0x200000, .size = 4096,
	}, got;
	struct drm_vgpu_submit s = vgpu_test_submit_ok();
	struct drm_vgpu_launch l = s.launch, lt = s.launch;
	void __user *u = vgpu_test_umem(test, PAGE_SIZE);
	void __user *edge = vgpu_test_umem_edge(test);
	u64 uu = (u64)(uintptr_t)u, area;

	lt.launch_flags = VGPU_LAUNCH_TIMELINE;
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(0, &l, 0, &got, &area), 0);
	KUNIT_EXPECT_EQ(test, got.size, 0);
	/* the flag without the extension */
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(0, &lt, 0, &got, &area), -EINVAL);
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &e, sizeof(e)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, 0, &got, &area), -EINVAL);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(16, &l, 0, &got, &area), -EFAULT);
	/* the header's last 8 bytes past the mapping */
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 8, &l, 0, &got, &area), -EFAULT);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 16, &l, 0, &got, &area), -EINVAL);

	/* the timeline: accepted with the flag, refused without */
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, 0, &got, &area), 0);
	KUNIT_EXPECT_EQ(test, got.va, 0x200000);
	KUNIT_EXPECT_EQ(test, got.size, 4096);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, 0, &got, &area), -EINVAL);
	/* its body past the mapping */
	KUNIT_ASSERT_EQ(test, copy_to_user(edge - 16, &tl, 16), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 16, &lt, 0, &got, &area), -EFAULT);
	/* sizes and alignment */
	{
		static const struct { u64 va, size; } bad[] = {
			{ 0x200004, 4096 }, { 0x200000, 4092 }, { 0x200000, 24 },
			{ 0x200000, 0 }, { 0x200000, VGPU_TRACE_MAX_BYTES + 8ull },
		};

		for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
			struct drm_vgpu_ext_timeline b = tl;

			b.va = bad[i].va;
			b.size = bad[i].size;
			KUNIT_ASSERT_EQ(test, copy_to_user(u, &b, sizeof(b)), 0);
			KUNIT_EXPECT_EQ_MSG(test, vgpu_submit_extensions(uu, &lt, 0, &got, &area),
					    -EINVAL, "case %u", i);
		}
		tl.size = 32; /* just the header: allowed */
		KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
		KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, 0, &got, &area), 0);
		tl.size = VGPU_TRACE_MAX_BYTES;
		KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
		KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, 0, &got, &area), 0);
	}
	/* pad, and the same name twice (the chain points at itself) */
	tl.base.pad = 1;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, 0, &got, &area), -EINVAL);
	tl.base.pad = 0;
	tl.base.next = uu;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, 0, &got, &area), -EINVAL);

	/* in the handler: checked after the arguments, before the device */
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &e, sizeof(e)), 0);
	s.extensions = uu;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_submit(&t->vdev->drm, &s, t->file), -EINVAL);
	s.extensions = 16;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_submit(&t->vdev->drm, &s, t->file), -EFAULT);
	s.pad = 1;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_submit(&t->vdev->drm, &s, t->file), -EINVAL);
}

/*
 * The device-launch extension: only where the device reports
 * VGPU_FEAT_DEVICE_LAUNCH (else -EINVAL, as an unknown name); a non-zero,
 * 16-aligned area; once; beside the timeline; -EFAULT for a body past the
 * mapping.
 */
static void vgpu_job_submit_ext_device_launch(struct kunit *test)
{
	struct drm_vgpu_ext_device_launch dl = {
		.base.name = VGPU_SUBMIT_EXT_DEVICE_LAUNCH, .area_va = 0x300000,
	};
	struct drm_vgpu_ext_timeline tl = {
		.base.name = VGPU_SUBMIT_EXT_TIMELINE, .va = 0x200000, .size = 4096,
	}, got;
	struct drm_vgpu_submit s = vgpu_test_submit_ok();
	struct drm_vgpu_launch l = s.launch, lt = s.launch;
	u8 __user *u = vgpu_test_umem(test, PAGE_SIZE);
	u8 __user *edge = vgpu_test_umem_edge(test);
	u64 uu = (u64)(uintptr_t)u, area = 1;
	const u32 feat = VGPU_FEAT_MMU | VGPU_FEAT_DEVICE_LAUNCH;
	static const u64 bad[] = { 0, 8, 0x300004, 0x30000f };

	lt.launch_flags = VGPU_LAUNCH_TIMELINE;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &dl, sizeof(dl)), 0);
	/* a device without the feature refuses it */
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, VGPU_FEAT_MMU, &got, &area), -EINVAL);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, feat, &got, &area), 0);
	KUNIT_EXPECT_EQ(test, area, 0x300000);
	KUNIT_EXPECT_EQ(test, got.size, 0);
	/* none: 0 */
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(0, &l, feat, &got, &area), 0);
	KUNIT_EXPECT_EQ(test, area, 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		struct drm_vgpu_ext_device_launch b = dl;

		b.area_va = bad[i];
		KUNIT_ASSERT_EQ(test, copy_to_user(u, &b, sizeof(b)), 0);
		KUNIT_EXPECT_EQ_MSG(test, vgpu_submit_extensions(uu, &l, feat, &got, &area),
				    -EINVAL, "area 0x%llx", bad[i]);
	}
	/* pad */
	dl.base.pad = 1;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &dl, sizeof(dl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, feat, &got, &area), -EINVAL);
	dl.base.pad = 0;
	/* twice (the chain points at itself) */
	dl.base.next = uu;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &dl, sizeof(dl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &l, feat, &got, &area), -EINVAL);
	/* beside the timeline: both taken */
	dl.base.next = uu + 64;
	KUNIT_ASSERT_EQ(test, copy_to_user(u, &dl, sizeof(dl)), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(u + 64, &tl, sizeof(tl)), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions(uu, &lt, feat, &got, &area), 0);
	KUNIT_EXPECT_EQ(test, area, 0x300000);
	KUNIT_EXPECT_EQ(test, got.va, 0x200000);
	/* its area past the mapping */
	dl.base.next = 0;
	KUNIT_ASSERT_EQ(test, copy_to_user(edge - 16, &dl, 16), 0);
	KUNIT_EXPECT_EQ(test, vgpu_submit_extensions((u64)(uintptr_t)edge - 16, &l, feat, &got,
						     &area), -EFAULT);
}

/* BO handles: -ENOENT for one the file does not hold, -EFAULT unreadable. */
static void vgpu_job_submit_bo_handles(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct drm_vgpu_submit s = {};
	struct vgpu_job *job = vgpu_test_job(test, 1);
	static const u32 handles[] = { 1, 2, 3 };
	void __user *u = vgpu_test_umem(test, PAGE_SIZE);
	void __user *edge = vgpu_test_umem_edge(test);

	KUNIT_ASSERT_EQ(test, copy_to_user(u, handles, sizeof(handles)), 0);
	/* none */
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), 0);
	KUNIT_EXPECT_NULL(test, job->bos);
	s.bo_handles = (u64)(uintptr_t)u;
	s.bo_handle_count = ARRAY_SIZE(handles);
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), -ENOENT);
	kvfree(job->bos);
	job->bos = NULL;
	s.bo_handles = 16;
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), -EFAULT);
	kvfree(job->bos);
	job->bos = NULL;
	/* the array runs past the mapping */
	s.bo_handles = (u64)(uintptr_t)edge - 4;
	KUNIT_EXPECT_EQ(test, vgpu_submit_bos(job, t->file, &s), -EFAULT);
	kvfree(job->bos);
	job->bos = NULL;
}

/* Syncobjs: pad -EINVAL, unknown handle -ENOENT, unreadable -EFAULT. */
static void vgpu_job_submit_syncs(struct kunit *test)
{
	struct vgpu_job_test *t = test->priv;
	struct vgpu_job *job = vgpu_test_job(test, 1);
	struct drm_vgpu_sync pad[2] = { { .handle = 1, .pad = 1 } };
	struct drm_vgpu_sync unknown[2] = { { .handle = 1 }, { .handle = 2 } };
	struct drm_vgpu_sync timeline[1] = { { .handle = 1, .point = 5 } };
	void __user *upad = vgpu_test_umem(test, PAGE_SIZE);
	void __user *uunknown = vgpu_test_umem(test, PAGE_SIZE);
	void __user *utimeline = vgpu_test_umem(test, PAGE_SIZE);
	struct vgpu_out_sync *out;
	u64 p;

	KUNIT_ASSERT_EQ(test, copy_to_user(upad, pad, sizeof(pad)), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(uunknown, unknown, sizeof(unknown)), 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(utimeline, timeline, sizeof(timeline)), 0);

	/* none */
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, 0, 0, &out), 0);
	KUNIT_EXPECT_NULL(test, out);

	p = (u64)(uintptr_t)upad;
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, p, 2), -EINVAL);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, p, 2, &out), -EINVAL);
	vgpu_out_syncs_put(out, 2);
	p = (u64)(uintptr_t)uunknown;
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, p, 2), -ENOENT);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, p, 2, &out), -ENOENT);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_NULL(test, out[0].syncobj);
	vgpu_out_syncs_put(out, 2);
	p = (u64)(uintptr_t)utimeline;
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, p, 1), -ENOENT);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, p, 1, &out), -ENOENT);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_NULL(test, out[0].chain);
	vgpu_out_syncs_put(out, 1);
	KUNIT_EXPECT_EQ(test, vgpu_in_syncs(&job->base, t->file, 16, 1), -EFAULT);
	KUNIT_EXPECT_EQ(test, vgpu_out_syncs_get(t->file, 16, 1, &out), -EFAULT);
	vgpu_out_syncs_put(out, 1);
}

static struct kunit_case vgpu_submit_cases[] = {
	KUNIT_CASE(vgpu_job_get_job_ids),
	KUNIT_CASE(vgpu_job_get_job_exception_copy),
	KUNIT_CASE(vgpu_job_submit_check),
	KUNIT_CASE(vgpu_job_submit_extensions),
	KUNIT_CASE(vgpu_job_submit_ext_device_launch),
	KUNIT_CASE(vgpu_job_submit_bo_handles),
	KUNIT_CASE(vgpu_job_submit_syncs),
	{}
};

static struct kunit_suite vgpu_submit_suite = {
	.name = "vgpu_submit",
	.init = vgpu_job_test_init,
	.test_cases = vgpu_submit_cases,
};

kunit_test_suite(vgpu_submit_suite);
