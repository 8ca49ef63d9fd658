// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of vgpu_userq.c's mmap() offsets, included at the end of
 * vgpu_userq.c (CONFIG_DRM_VGPU_KUNIT_TEST): each offset USERQ_CREATE
 * returns decodes to its queue's window and area, every page of an area
 * is inside it, and everything else (below the windows, past an area,
 * past the last window) decodes to nothing, so that mmap() refuses it.
 */
#include <kunit/test.h>

static void vgpu_userq_offsets_decode(struct kunit *test)
{
	struct vgpu_device *vdev = kunit_kzalloc(test, sizeof(*vdev), GFP_KERNEL);
	static const struct {
		unsigned long area;
		enum vgpu_uq_area kind;
		unsigned long pages;
	} a[] = {
		{ VGPU_UQ_RING_PGOFF, VGPU_UQ_RING, VGPU_UQ_RING_BYTES >> PAGE_SHIFT },
		{ VGPU_UQ_CPL_PGOFF, VGPU_UQ_CPL, VGPU_UQ_CPL_BYTES >> PAGE_SHIFT },
		{ VGPU_UQ_DB_PGOFF, VGPU_UQ_DB, 1 },
	};
	unsigned long page, npages;
	enum vgpu_uq_area area;
	static const u32 windows[] = { 0, 1, 2, VGPU_UQ_WINDOWS - 1 };
	u32 slot, s, w, i;

	KUNIT_ASSERT_NOT_NULL(test, vdev);
	for (w = 0; w < ARRAY_SIZE(windows); w++) {
		s = windows[w];
		for (i = 0; i < ARRAY_SIZE(a); i++) {
			unsigned long base = vgpu_uq_offset(s, a[i].area) >> PAGE_SHIFT;

			KUNIT_EXPECT_TRUE(test, vgpu_uq_decode(vdev, base, &slot, &area,
							       &page, &npages));
			KUNIT_EXPECT_EQ(test, slot, s);
			KUNIT_EXPECT_EQ(test, area, a[i].kind);
			KUNIT_EXPECT_EQ(test, page, 0ul);
			KUNIT_EXPECT_EQ(test, npages, a[i].pages);
			/* its last page, and the one after it: nothing */
			KUNIT_EXPECT_TRUE(test, vgpu_uq_decode(vdev, base + a[i].pages - 1,
							       &slot, &area, &page, &npages));
			KUNIT_EXPECT_EQ(test, page, a[i].pages - 1);
			KUNIT_EXPECT_FALSE(test, vgpu_uq_decode(vdev, base + a[i].pages,
								&slot, &area, &page, &npages));
		}
	}
	KUNIT_EXPECT_FALSE(test, vgpu_uq_decode(vdev, VGPU_UQ_PGOFF_BASE - 1, &slot,
						&area, &page, &npages));
	KUNIT_EXPECT_FALSE(test, vgpu_uq_decode(vdev, 0, &slot, &area, &page, &npages));
	KUNIT_EXPECT_FALSE(test, vgpu_uq_decode(vdev,
						vgpu_uq_offset(VGPU_UQ_WINDOWS, 0) >> PAGE_SHIFT,
						&slot, &area, &page, &npages));
	/* the windows stay below the GEM objects' offsets */
	KUNIT_EXPECT_LE(test, (unsigned long)(vgpu_uq_offset(VGPU_UQ_WINDOWS, 0) >> PAGE_SHIFT),
			(unsigned long)DRM_FILE_PAGE_OFFSET_START);
}

static void vgpu_userq_split_keeps_a_scheduler_queue(struct kunit *test)
{
	struct vgpu_device *vdev = kunit_kzalloc(test, sizeof(*vdev), GFP_KERNEL);
	int saved = vgpu_user_queues;

	KUNIT_ASSERT_NOT_NULL(test, vdev);
	vdev->features = VGPU_FEAT_USER_QUEUES | VGPU_FEAT_QUEUE_SWAP;
	vgpu_user_queues = -1;
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 4), 1u);
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 10), 2u);
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 16), 4u);
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 1), 0u);
	vgpu_user_queues = 16;
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 8), 7u);
	vgpu_user_queues = 0;
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 8), 0u);
	vgpu_user_queues = 100;
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 64), 63u);
	vdev->features = VGPU_FEAT_USER_QUEUES;	/* no map-out: no user queues */
	vgpu_user_queues = 2;
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 8), 0u);
	vdev->features = 0;
	KUNIT_EXPECT_EQ(test, vgpu_userq_split(vdev, 8), 0u);
	vgpu_user_queues = saved;
}

static struct kunit_case vgpu_userq_cases[] = {
	KUNIT_CASE(vgpu_userq_offsets_decode),
	KUNIT_CASE(vgpu_userq_split_keeps_a_scheduler_queue),
	{}
};

static struct kunit_suite vgpu_userq_suite = {
	.name = "vgpu_userq",
	.test_cases = vgpu_userq_cases,
};

kunit_test_suite(vgpu_userq_suite);
