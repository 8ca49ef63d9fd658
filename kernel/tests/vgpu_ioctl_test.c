// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: GET_PARAM (uapi/vgpu_drm.h) on a fake device, included at the
 * end of vgpu_drv.c so that the static handler is reachable.  The BO
 * ioctls' rules are in vgpu_gem_test.c, SUBMIT's and GET_JOB's in
 * vgpu_job_test.c.
 */
#include <kunit/test.h>

struct vgpu_ioctl_test {
	struct vgpu_device *vdev;
	struct vgpu_file *vf;
	struct pci_dev *pdev;
	struct drm_file file;
};

/* Every capability a different value, so that no two can be swapped. */
static int vgpu_ioctl_test_init(struct kunit *test)
{
	struct vgpu_ioctl_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->vdev = kunit_kzalloc(test, sizeof(*t->vdev), GFP_KERNEL);
	t->vf = kunit_kzalloc(test, sizeof(*t->vf), GFP_KERNEL);
	t->pdev = kunit_kzalloc(test, sizeof(*t->pdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vdev);
	KUNIT_ASSERT_NOT_NULL(test, t->vf);
	KUNIT_ASSERT_NOT_NULL(test, t->pdev);
	t->pdev->vendor = VGPU_PCI_VENDOR_ID;
	t->pdev->device = VGPU_PCI_DEVICE_ID;
	t->pdev->revision = 7;
	t->vdev->pdev = t->pdev;
	t->vdev->hw_version = VGPU_VERSION_MAJOR << 16 | 3;
	t->vdev->sms = 6;
	t->vdev->smem = 228 << 10;
	t->vdev->max_threads = 1024;
	t->vdev->barriers = 16;
	t->vdev->features = 0x1d;
	t->vdev->nqueues = 5;
	t->vdev->warp_size = 32;
	t->vdev->max_param = 4096;
	t->vdev->max_code = 1 << 20;
	t->vdev->va_bits = VGPU_VA_BITS;
	atomic_set(&t->vdev->reset_count, 11);
	atomic_set(&t->vf->reset_count, 9);
	t->vf->vdev = t->vdev;
	t->file.driver_priv = t->vf;
	test->priv = t;
	return 0;
}

#define VGPU_TEST_TIMEOUT_PARAM ~0ull	/* the module parameter's value */

struct vgpu_param_case {
	const char *name;
	u32 param;
	u64 value;
};

static const struct vgpu_param_case vgpu_param_cases[] = {
	{ "DEVICE_ID", VGPU_PARAM_DEVICE_ID, 0x76900001 },
	{ "REVISION", VGPU_PARAM_REVISION, 7 },
	{ "HW_VERSION", VGPU_PARAM_HW_VERSION, VGPU_VERSION_MAJOR << 16 | 3 },
	{ "SMS", VGPU_PARAM_SMS, 6 },
	{ "SMEM", VGPU_PARAM_SMEM, 228 << 10 },
	{ "MAX_THREADS", VGPU_PARAM_MAX_THREADS, 1024 },
	{ "BARRIERS", VGPU_PARAM_BARRIERS, 16 },
	{ "FEATURES", VGPU_PARAM_FEATURES, 0x1d },
	{ "QUEUES", VGPU_PARAM_QUEUES, 5 },
	{ "WARP_SIZE", VGPU_PARAM_WARP_SIZE, 32 },
	{ "MAX_PARAM", VGPU_PARAM_MAX_PARAM, 4096 },
	{ "MAX_CODE", VGPU_PARAM_MAX_CODE, 1 << 20 },
	{ "VA_BITS", VGPU_PARAM_VA_BITS, 48 },
	{ "VA_START", VGPU_PARAM_VA_START, 1ull << 20 },
	{ "VA_SIZE", VGPU_PARAM_VA_SIZE, (1ull << 48) - (1ull << 20) },
	{ "RESET_COUNT", VGPU_PARAM_RESET_COUNT, 11 },
	{ "FILE_RESET_COUNT", VGPU_PARAM_FILE_RESET_COUNT, 9 },
	{ "JOB_TIMEOUT_MS", VGPU_PARAM_JOB_TIMEOUT_MS, VGPU_TEST_TIMEOUT_PARAM },
	{ "DRIVER_VERSION", VGPU_PARAM_DRIVER_VERSION,
	  VGPU_DRIVER_MAJOR << 16 | VGPU_DRIVER_MINOR },
};

static_assert(ARRAY_SIZE(vgpu_param_cases) == VGPU_PARAM_COUNT);

static void vgpu_param_case_desc(const struct vgpu_param_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(vgpu_param, vgpu_param_cases, vgpu_param_case_desc);

/* Each parameter: its value, from the field the uAPI names. */
static void vgpu_ioctl_get_param_value(struct kunit *test)
{
	const struct vgpu_param_case *c = test->param_value;
	struct vgpu_ioctl_test *t = test->priv;
	struct drm_vgpu_get_param a = { .param = c->param, .value = 0xbad };
	u64 want = c->value;

	if (want == VGPU_TEST_TIMEOUT_PARAM)
		want = vgpu_timeout_ms;
	KUNIT_EXPECT_EQ(test, c->param, (u32)(c - vgpu_param_cases));
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_get_param(&t->vdev->drm, &a, &t->file), 0);
	KUNIT_EXPECT_EQ(test, a.value, want);
	KUNIT_EXPECT_EQ(test, a.param, c->param);
	KUNIT_EXPECT_EQ(test, a.pad, 0);
}

/* VA_START .. VA_START + VA_SIZE is exactly the device's VA space above 1 MiB. */
static void vgpu_ioctl_va_range(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, VGPU_VA_START + VGPU_VA_SIZE, 1ull << VGPU_VA_BITS);
	KUNIT_EXPECT_EQ(test, VGPU_VA_START % VGPU_PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, VGPU_VA_SIZE % VGPU_PAGE_SIZE, 0);
}

/* The counters follow the device and the file as they move. */
static void vgpu_ioctl_get_param_live(struct kunit *test)
{
	struct vgpu_ioctl_test *t = test->priv;
	struct drm_vgpu_get_param a = { .param = VGPU_PARAM_RESET_COUNT };

	atomic_inc(&t->vdev->reset_count);
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_get_param(&t->vdev->drm, &a, &t->file), 0);
	KUNIT_EXPECT_EQ(test, a.value, 12);
	a.param = VGPU_PARAM_FILE_RESET_COUNT;
	atomic_inc(&t->vf->reset_count);
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_get_param(&t->vdev->drm, &a, &t->file), 0);
	KUNIT_EXPECT_EQ(test, a.value, 10);
}

/* -EINVAL for a non-zero pad and for an unknown parameter. */
static void vgpu_ioctl_get_param_bad(struct kunit *test)
{
	static const u32 bad[] = { VGPU_PARAM_COUNT, VGPU_PARAM_COUNT + 1, 0x100,
				   0x7fffffff, 0x80000000, ~0u };
	struct vgpu_ioctl_test *t = test->priv;
	struct drm_vgpu_get_param a;
	unsigned int i;

	for (i = 0; i < VGPU_PARAM_COUNT; i++) {
		a = (struct drm_vgpu_get_param){ .param = i, .pad = 1 };
		KUNIT_EXPECT_EQ_MSG(test, vgpu_ioctl_get_param(&t->vdev->drm, &a, &t->file),
				    -EINVAL, "param %u with pad", i);
	}
	a = (struct drm_vgpu_get_param){ .param = VGPU_PARAM_SMS, .pad = 1u << 31 };
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_get_param(&t->vdev->drm, &a, &t->file), -EINVAL);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		a = (struct drm_vgpu_get_param){ .param = bad[i] };
		KUNIT_EXPECT_EQ_MSG(test, vgpu_ioctl_get_param(&t->vdev->drm, &a, &t->file),
				    -EINVAL, "param 0x%x", bad[i]);
	}
}

static struct kunit_case vgpu_ioctl_cases[] = {
	KUNIT_CASE_PARAM(vgpu_ioctl_get_param_value, vgpu_param_gen_params),
	KUNIT_CASE(vgpu_ioctl_va_range),
	KUNIT_CASE(vgpu_ioctl_get_param_live),
	KUNIT_CASE(vgpu_ioctl_get_param_bad),
	{}
};

static struct kunit_suite vgpu_ioctl_suite = {
	.name = "vgpu_ioctl",
	.init = vgpu_ioctl_test_init,
	.test_cases = vgpu_ioctl_cases,
};

kunit_test_suite(vgpu_ioctl_suite);
