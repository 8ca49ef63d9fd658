// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the BO ioctls' argument rules (uapi/vgpu_drm.h) and WAIT_BO's
 * deadline, included at the end of vgpu_gem.c (as xe includes its tests)
 * so that the static helpers are reachable.  No device: the checks run
 * before any object is made, and handle lookups run against an empty file.
 */
#include <kunit/test.h>

/* A drm_file with no handle: what the lookups need of one. */
static struct drm_file *vgpu_gem_test_file(struct kunit *test)
{
	struct drm_file *file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, file);
	idr_init_base(&file->object_idr, 1);
	spin_lock_init(&file->table_lock);
	return file;
}

struct vgpu_bo_create_case {
	const char *name;
	u64 size;
	u32 flags;
	int ret;
};

static const struct vgpu_bo_create_case vgpu_bo_create_cases[] = {
	{ "one byte", 1, 0, 0 },
	{ "one page", PAGE_SIZE, 0, 0 },
	{ "largest", VGPU_BO_MAX_SIZE, 0, 0 },
	{ "read-only", 4096, VGPU_BO_READ_ONLY, 0 },
	{ "no-exec", 4096, VGPU_BO_NO_EXEC, 0 },
	{ "populate", 4096, VGPU_BO_POPULATE, 0 },
	{ "every flag", 4096, VGPU_BO_FLAGS, 0 },
	{ "size 0", 0, 0, -EINVAL },
	{ "size 0 read-only", 0, VGPU_BO_READ_ONLY, -EINVAL },
	{ "largest + 1", VGPU_BO_MAX_SIZE + 1, 0, -E2BIG },
	{ "largest + 1 page", VGPU_BO_MAX_SIZE + PAGE_SIZE, 0, -E2BIG },
	{ "size ~0", ~0ull, VGPU_BO_READ_ONLY, -E2BIG },
	{ "size 2^63", 1ull << 63, 0, -E2BIG },
	{ "flag bit 3", 4096, 1u << 3, -EINVAL },
	{ "flag bit 31", 4096, 1u << 31, -EINVAL },
	{ "unknown flags with known", 4096, ~0u, -EINVAL },
	/* an unknown flag is -EINVAL whatever the size */
	{ "unknown flag, size too big", VGPU_BO_MAX_SIZE + 1, 1u << 7, -EINVAL },
};

static void vgpu_bo_create_case_desc(const struct vgpu_bo_create_case *c,
				     char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vgpu_bo_create, vgpu_bo_create_cases, vgpu_bo_create_case_desc);

/* BO_CREATE's rules; the handler applies them before it allocates. */
static void vgpu_gem_bo_create_args(struct kunit *test)
{
	const struct vgpu_bo_create_case *c = test->param_value;
	struct drm_vgpu_bo_create args = { .size = c->size, .flags = c->flags };

	KUNIT_EXPECT_EQ(test, vgpu_bo_create_check(&args), c->ret);
	if (c->ret) {
		/* no device behind it: the handler must fail before using one */
		KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_create(NULL, &args,
							   vgpu_gem_test_file(test)), c->ret);
		KUNIT_EXPECT_EQ(test, args.handle, 0);
		KUNIT_EXPECT_EQ(test, args.va, 0);
	}
}

/* -EINVAL for a non-zero pad comes before -ENOENT for the handle. */
static void vgpu_gem_pad_before_handle(struct kunit *test)
{
	struct drm_file *file = vgpu_gem_test_file(test);
	struct drm_vgpu_bo_mmap_offset m = { .handle = 1, .pad = 1 };
	struct drm_vgpu_wait_bo w = { .handle = 1, .pad = 1 };

	KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_mmap_offset(NULL, &m, file), -EINVAL);
	m.pad = 1u << 31;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_mmap_offset(NULL, &m, file), -EINVAL);
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_wait_bo(NULL, &w, file), -EINVAL);
	w.pad = 1u << 31;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_wait_bo(NULL, &w, file), -EINVAL);
}

/* -ENOENT for a handle that names no object of the calling file. */
static void vgpu_gem_unknown_handle(struct kunit *test)
{
	struct drm_file *file = vgpu_gem_test_file(test);
	static const u32 handles[] = { 0, 1, 2, 0x7fffffff, 0xffffffff };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(handles); i++) {
		struct drm_vgpu_bo_mmap_offset m = { .handle = handles[i] };
		struct drm_vgpu_bo_info b = { .handle = handles[i] };
		struct drm_vgpu_wait_bo w = { .handle = handles[i], .timeout_ns = 1 };

		KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_mmap_offset(NULL, &m, file), -ENOENT);
		KUNIT_EXPECT_EQ(test, m.offset, 0);
		KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_info(NULL, &b, file), -ENOENT);
		KUNIT_EXPECT_EQ(test, b.size, 0);
		KUNIT_EXPECT_EQ(test, vgpu_ioctl_wait_bo(NULL, &w, file), -ENOENT);
	}
}

/* The arithmetic: whole ticks rounded up, plus the tick in progress. */
static void vgpu_gem_jiffies_left(struct kunit *test)
{
	const s64 tick = NSEC_PER_SEC / HZ;

	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(0), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(-1), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(S64_MIN), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(1), 2);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(tick / 2), 2);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(tick), 2);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(tick + 1), 3);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(5 * tick + tick / 3), 7);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(NSEC_PER_SEC), HZ + 1);
	/* the far future: no overflow, below MAX_SCHEDULE_TIMEOUT */
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_left(S64_MAX),
			(long)DIV_ROUND_UP_ULL((u64)S64_MAX, tick) + 1);
	KUNIT_EXPECT_LT(test, vgpu_jiffies_left(S64_MAX), MAX_SCHEDULE_TIMEOUT);
}

/* Absolute deadlines: a past one (0, negative, before now) is a poll. */
static void vgpu_gem_jiffies_until(struct kunit *test)
{
	s64 now = ktime_get_ns();
	long j;

	KUNIT_EXPECT_EQ(test, vgpu_jiffies_until(0), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_until(-5), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_until(S64_MIN), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_until(now - 1000), 0);
	KUNIT_EXPECT_EQ(test, vgpu_jiffies_until(1), 0);
	/* one second ahead: HZ + 1, less the ticks this test took */
	j = vgpu_jiffies_until(ktime_get_ns() + NSEC_PER_SEC);
	KUNIT_EXPECT_LE(test, j, HZ + 1);
	KUNIT_EXPECT_GE(test, j, HZ / 2);
}

/* Sleeping that long never wakes before the deadline. */
static void vgpu_gem_wait_never_early(struct kunit *test)
{
	static const u32 us[] = { 1, 500, 1000, 2000, 4000, 4001, 10000 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(us); i++) {
		s64 deadline = ktime_get_ns() + us[i] * NSEC_PER_USEC;
		s64 woke;

		schedule_timeout_uninterruptible(vgpu_jiffies_until(deadline));
		woke = ktime_get_ns();
		KUNIT_EXPECT_GE_MSG(test, woke, deadline, "%u us: woke %lld ns early",
				    us[i], deadline - woke);
	}
}

static struct kunit_case vgpu_gem_cases[] = {
	KUNIT_CASE_PARAM(vgpu_gem_bo_create_args, vgpu_bo_create_gen_params),
	KUNIT_CASE(vgpu_gem_pad_before_handle),
	KUNIT_CASE(vgpu_gem_unknown_handle),
	KUNIT_CASE(vgpu_gem_jiffies_left),
	KUNIT_CASE(vgpu_gem_jiffies_until),
	KUNIT_CASE(vgpu_gem_wait_never_early),
	{}
};

static struct kunit_suite vgpu_gem_suite = {
	.name = "vgpu_gem",
	.test_cases = vgpu_gem_cases,
};

kunit_test_suite(vgpu_gem_suite);
