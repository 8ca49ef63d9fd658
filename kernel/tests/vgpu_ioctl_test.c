// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: GET_PARAM (uapi/vgpu_drm.h) on a fake device, and buffer objects
 * on the real DRM driver without hardware (BO_CREATE, BO_INFO, mappings
 * in every file's GPU address space, ASIDs), included at the end of
 * vgpu_drv.c so that its static functions are reachable.  The BO ioctls'
 * argument rules are in vgpu_gem_test.c, SUBMIT's and GET_JOB's in
 * vgpu_job_test.c.
 */
#include <kunit/device.h>
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
	t->vdev->uqs.n = 2;
	t->vdev->warp_size = 32;
	t->vdev->max_param = 4096;
	t->vdev->max_code = 1 << 20;
	t->vdev->va_bits = VGPU_VA_BITS;
	t->vdev->model = VGPU_MODEL_H100;
	t->vdev->smem_sm = 229 << 10;
	t->vdev->ctas_sm = 31;
	t->vdev->warps_sm = 63;
	t->vdev->regs_sm = 65535;
	t->vdev->cluster = 7;
	t->vdev->cluster_max = 15;
	atomic_set(&t->vdev->reset_count, 11);
	atomic_set(&t->vf->reset_count, 9);
	t->vf->vdev = t->vdev;
	t->file.driver_priv = t->vf;
	test->priv = t;
	return 0;
}

#define VGPU_TEST_TIMEOUT_PARAM ~0ull	/* the module parameter's value */
#define VGPU_TEST_BAN_PARAM (~0ull - 1)	/* the module parameter's value */

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
	{ "MAX_QUEUES", VGPU_PARAM_MAX_QUEUES, 64 },
	{ "BAN_AFTER", VGPU_PARAM_BAN_AFTER, VGPU_TEST_BAN_PARAM },
	{ "USER_QUEUES", VGPU_PARAM_USER_QUEUES, 2 },
	{ "MODEL", VGPU_PARAM_MODEL, VGPU_MODEL_H100 },
	{ "SMEM_SM", VGPU_PARAM_SMEM_SM, 229 << 10 },
	{ "CTAS_SM", VGPU_PARAM_CTAS_SM, 31 },
	{ "WARPS_SM", VGPU_PARAM_WARPS_SM, 63 },
	{ "REGS_SM", VGPU_PARAM_REGS_SM, 65535 },
	{ "CLUSTER", VGPU_PARAM_CLUSTER, 7 },
	{ "CLUSTER_MAX", VGPU_PARAM_CLUSTER_MAX, 15 },
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
	if (want == VGPU_TEST_BAN_PARAM)
		want = vgpu_ban_after;
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

/* ---- buffer objects on a DRM device without hardware ---- */

/*
 * The real vgpu_drm_driver on a KUnit device (devm_drm_dev_alloc, as probe
 * does, without registering it), files opened with vgpu_open(): BO_CREATE,
 * BO_INFO, BO_MMAP_OFFSET and WAIT_BO through their handlers, the GPU
 * mappings they make checked entry by entry.  No queues.
 */
#define VGPU_BO_TEST_FILES 4

struct vgpu_bo_test {
	struct vgpu_device *vdev;
	struct drm_file *files[VGPU_BO_TEST_FILES];
	u64 dma_mask;
};

/* A drm_file as drm_file_alloc() would set up what GEM handles use. */
static struct drm_file *vgpu_bo_test_file(struct kunit *test)
{
	struct drm_file *file = kunit_kzalloc(test, sizeof(*file), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, file);
	idr_init_base(&file->object_idr, 1);
	spin_lock_init(&file->table_lock);
	mutex_init(&file->prime.lock);
	return file;
}

/* Open file @i of the device: vgpu_open() as for open(2). */
static int vgpu_bo_test_open(struct kunit *test, unsigned int i)
{
	struct vgpu_bo_test *t = test->priv;
	struct drm_file *file = vgpu_bo_test_file(test);
	int ret;

	file->client_id = 100 + i;
	ret = vgpu_open(&t->vdev->drm, file);
	if (!ret)
		t->files[i] = file;
	return ret;
}

static int vgpu_bo_test_init(struct kunit *test)
{
	struct vgpu_bo_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct vgpu_device *vdev;
	struct device *dev;

	KUNIT_ASSERT_NOT_NULL(test, t);
	test->priv = t;
	dev = kunit_device_register(test, "vgpu-bo-test");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	t->dma_mask = DMA_BIT_MASK(52);
	dev->dma_mask = &t->dma_mask;
	dev->coherent_dma_mask = DMA_BIT_MASK(52);
	vdev = devm_drm_dev_alloc(dev, &vgpu_drm_driver, struct vgpu_device, drm);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, vdev);
	mutex_init(&vdev->reset_lock);
	mutex_init(&vdev->files_lock);
	spin_lock_init(&vdev->exc_lock);
	spin_lock_init(&vdev->irq_lock);
	INIT_LIST_HEAD(&vdev->files);
	vdev->as_max = 2;	/* ASID 1: fewer than the files */
	KUNIT_ASSERT_EQ(test, vgpu_mmu_init(vdev), 0);
	KUNIT_ASSERT_EQ(test, drmm_add_action_or_reset(&vdev->drm, vgpu_drm_release, NULL), 0);
	t->vdev = vdev;
	KUNIT_ASSERT_EQ(test, vgpu_bo_test_open(test, 0), 0);
	return 0;
}

/* close(2): every handle, then vgpu_postclose(). */
static void vgpu_bo_test_close(struct vgpu_bo_test *t, unsigned int i)
{
	struct drm_file *file = t->files[i];
	struct drm_gem_object *obj;
	int id;

	if (!file)
		return;
	for (;;) {
		id = 0;
		spin_lock(&file->table_lock);
		obj = idr_get_next(&file->object_idr, &id);
		spin_unlock(&file->table_lock);
		if (!obj)
			break;
		drm_gem_handle_delete(file, id);
	}
	vgpu_postclose(&t->vdev->drm, file);
	idr_destroy(&file->object_idr);
	t->files[i] = NULL;
}

static void vgpu_bo_test_exit(struct kunit *test)
{
	struct vgpu_bo_test *t = test->priv;
	unsigned int i;

	if (!t || !t->vdev)
		return;
	for (i = 0; i < VGPU_BO_TEST_FILES; i++)
		vgpu_bo_test_close(t, i);
}

static struct vgpu_file *vgpu_bo_test_vf(struct vgpu_bo_test *t, unsigned int i)
{
	return t->files[i]->driver_priv;
}

/* The leaf entry for @va in @as, through the tables' shadow; 0 if none. */
static u64 vgpu_bo_test_pte(struct vgpu_as *as, u64 va)
{
	struct vgpu_pt *pt = &as->root;
	int level;

	for (level = VGPU_PT_LEVELS - 1; level > 0; level--) {
		pt = pt->child[VGPU_PT_INDEX(va, level)];
		if (!pt)
			return 0;
	}
	return le64_to_cpu(pt->cpu[VGPU_PT_INDEX(va, 0)]);
}

static struct drm_vgpu_bo_create vgpu_bo_test_create(struct kunit *test, unsigned int f,
						     u64 size, u32 flags)
{
	struct vgpu_bo_test *t = test->priv;
	struct drm_vgpu_bo_create c = { .size = size, .flags = flags };

	KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_create(&t->vdev->drm, &c, t->files[f]), 0);
	KUNIT_EXPECT_NE(test, c.handle, 0);
	return c;
}

/* Its pages, as the first SUBMIT that lists it or an mmap gives them. */
static void vgpu_bo_test_populate(struct kunit *test, unsigned int f, u32 handle)
{
	struct vgpu_bo_test *t = test->priv;
	struct drm_gem_object *obj = drm_gem_object_lookup(t->files[f], handle);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_EXPECT_EQ(test, vgpu_bo_make_resident(to_vgpu_bo(obj)), 0);
	drm_gem_object_put(obj);
}

/* No page of the BO mapped at its VA, nor the guard page. */
static void vgpu_bo_test_expect_unmapped(struct kunit *test, unsigned int f,
					 u64 va, u64 size)
{
	struct vgpu_bo_test *t = test->priv;
	struct vgpu_as *as = vgpu_bo_test_vf(t, f)->as;
	u64 v;

	for (v = va; v <= va + size; v += PAGE_SIZE)
		KUNIT_EXPECT_EQ(test, vgpu_bo_test_pte(as, v), 0);
}

/* Each page of the BO at its VA, with @prot; the guard page after it not. */
static void vgpu_bo_test_expect_mapped(struct kunit *test, unsigned int f, u32 handle,
				       u64 va, u64 prot)
{
	struct vgpu_bo_test *t = test->priv;
	struct vgpu_as *as = vgpu_bo_test_vf(t, f)->as;
	struct drm_gem_object *obj = drm_gem_object_lookup(t->files[f], handle);
	struct sg_dma_page_iter iter;
	u64 v = va;

	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_ASSERT_NOT_NULL(test, to_vgpu_bo(obj)->base.sgt);
	for_each_sgtable_dma_page(to_vgpu_bo(obj)->base.sgt, &iter, 0) {
		KUNIT_EXPECT_EQ(test, vgpu_bo_test_pte(as, v),
				prot | sg_page_iter_dma_address(&iter));
		v += PAGE_SIZE;
	}
	KUNIT_EXPECT_EQ(test, v - va, obj->size);
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_pte(as, v), 0);
	drm_gem_object_put(obj);
}

static void vgpu_bo_create_maps_every_page(struct kunit *test)
{
	const u64 rwx = VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC;
	struct vgpu_bo_test *t = test->priv;
	struct drm_vgpu_bo_create a, b;
	struct drm_vgpu_bo_info info = {};

	/* 3 pages and a byte: four pages */
	a = vgpu_bo_test_create(test, 0, 3 * PAGE_SIZE + 1, 0);
	KUNIT_EXPECT_EQ(test, a.va, VGPU_VA_START);
	info.handle = a.handle;
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_info(&t->vdev->drm, &info, t->files[0]), 0);
	KUNIT_EXPECT_EQ(test, info.size, 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, info.flags, 0);
	KUNIT_EXPECT_EQ(test, info.va, a.va);
	/* VA only, until something needs the pages */
	vgpu_bo_test_expect_unmapped(test, 0, a.va, info.size);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->resident), 0);
	vgpu_bo_test_populate(test, 0, a.handle);
	vgpu_bo_test_expect_mapped(test, 0, a.handle, a.va, rwx);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->resident), 4 * PAGE_SIZE);
	/* the next BO after the guard page; VGPU_BO_POPULATE maps it at once */
	b = vgpu_bo_test_create(test, 0, 1, VGPU_BO_POPULATE);
	KUNIT_EXPECT_EQ(test, b.va, VGPU_VA_START + 5 * PAGE_SIZE);
	KUNIT_EXPECT_NE(test, b.handle, a.handle);
	vgpu_bo_test_expect_mapped(test, 0, b.handle, b.va, rwx);
	info.handle = b.handle;
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_info(&t->vdev->drm, &info, t->files[0]), 0);
	KUNIT_EXPECT_EQ(test, info.flags, 0);	/* an action, not a property */
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_vf(t, 0)->as->mapped_bytes, 5 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->resident), 5 * PAGE_SIZE);
	/* freed: the device's count goes back */
	KUNIT_ASSERT_EQ(test, drm_gem_handle_delete(t->files[0], a.handle), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->resident), PAGE_SIZE);
}

/* Past the device's limit, a BO does not get its pages: -ENOMEM. */
static void vgpu_bo_resident_limit(struct kunit *test)
{
	struct vgpu_bo_test *t = test->priv;
	unsigned int limit = vgpu_mem_limit_mb;
	struct drm_vgpu_bo_create a, b, c = { .size = SZ_1M, .flags = VGPU_BO_POPULATE };

	vgpu_mem_limit_mb = 2;
	KUNIT_EXPECT_EQ(test, vgpu_mem_limit(), 2 * SZ_1M);
	a = vgpu_bo_test_create(test, 0, SZ_1M + PAGE_SIZE, 0);
	b = vgpu_bo_test_create(test, 0, SZ_1M, 0);
	vgpu_bo_test_populate(test, 0, a.handle);
	{
		struct drm_gem_object *obj = drm_gem_object_lookup(t->files[0], b.handle);

		KUNIT_ASSERT_NOT_NULL(test, obj);
		KUNIT_EXPECT_EQ(test, vgpu_bo_make_resident(to_vgpu_bo(obj)), -ENOMEM);
		KUNIT_EXPECT_FALSE(test, test_bit(VGPU_BO_RESIDENT, &to_vgpu_bo(obj)->state));
		drm_gem_object_put(obj);
	}
	vgpu_bo_test_expect_unmapped(test, 0, b.va, SZ_1M);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->resident), SZ_1M + PAGE_SIZE);
	/* BO_CREATE with VGPU_BO_POPULATE fails whole: no handle left behind */
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_create(&t->vdev->drm, &c, t->files[0]), -ENOMEM);
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_vf(t, 0)->as->mapped_bytes, 2 * SZ_1M + PAGE_SIZE);
	/* room again once a BO is freed */
	KUNIT_ASSERT_EQ(test, drm_gem_handle_delete(t->files[0], a.handle), 0);
	vgpu_bo_test_populate(test, 0, b.handle);
	vgpu_bo_test_expect_mapped(test, 0, b.handle, b.va,
				   VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC);
	vgpu_mem_limit_mb = limit;
}

static void vgpu_bo_create_flags_to_pte(struct kunit *test)
{
	static const struct { u32 flags; u64 prot; } cases[] = {
		{ 0, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC },
		{ VGPU_BO_READ_ONLY, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_EXEC },
		{ VGPU_BO_NO_EXEC, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE },
		{ VGPU_BO_FLAGS, VGPU_PTE_VALID | VGPU_PTE_READ },
	};
	struct vgpu_bo_test *t = test->priv;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct drm_vgpu_bo_create c = vgpu_bo_test_create(test, 0, 2 * PAGE_SIZE,
								  cases[i].flags);
		struct drm_vgpu_bo_info info = { .handle = c.handle };

		vgpu_bo_test_populate(test, 0, c.handle);
		vgpu_bo_test_expect_mapped(test, 0, c.handle, c.va, cases[i].prot);
		KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_info(&t->vdev->drm, &info, t->files[0]), 0);
		KUNIT_EXPECT_EQ(test, info.flags, cases[i].flags & ~VGPU_BO_POPULATE);
	}
}

/* Closing the handle unmaps the BO and frees its VA for the next one. */
static void vgpu_bo_close_unmaps_and_reuses(struct kunit *test)
{
	struct vgpu_bo_test *t = test->priv;
	struct vgpu_as *as = vgpu_bo_test_vf(t, 0)->as;
	struct drm_vgpu_bo_create a, b, c;
	struct drm_vgpu_bo_info info = {};
	int gen;

	a = vgpu_bo_test_create(test, 0, 2 * PAGE_SIZE, VGPU_BO_POPULATE);
	b = vgpu_bo_test_create(test, 0, PAGE_SIZE, VGPU_BO_POPULATE);
	KUNIT_EXPECT_EQ(test, b.va, VGPU_VA_START + 3 * PAGE_SIZE);
	gen = atomic_read(&t->vdev->mmu_gen);
	KUNIT_ASSERT_EQ(test, drm_gem_handle_delete(t->files[0], a.handle), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->mmu_gen), gen + 1);
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_pte(as, a.va), 0);
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_pte(as, a.va + PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, as->mapped_bytes, PAGE_SIZE);
	info.handle = a.handle;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_bo_info(&t->vdev->drm, &info, t->files[0]), -ENOENT);
	/* the hole takes a BO of its size again; b is untouched */
	c = vgpu_bo_test_create(test, 0, 2 * PAGE_SIZE, VGPU_BO_POPULATE);
	KUNIT_EXPECT_EQ(test, c.va, VGPU_VA_START);
	vgpu_bo_test_expect_mapped(test, 0, c.handle, c.va,
				   VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC);
	vgpu_bo_test_expect_mapped(test, 0, b.handle, b.va,
				   VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC);
}

/* A BO is mapped in every file that holds a handle, each at its own VA. */
static void vgpu_bo_shared_between_files(struct kunit *test)
{
	const u64 rwx = VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC;
	struct vgpu_bo_test *t = test->priv;
	struct drm_vgpu_bo_create pad, a;
	struct drm_vgpu_bo_info info = {};
	struct drm_gem_object *obj;
	u32 h1;

	KUNIT_ASSERT_EQ(test, vgpu_bo_test_open(test, 1), 0);
	pad = vgpu_bo_test_create(test, 0, PAGE_SIZE, VGPU_BO_POPULATE);
	a = vgpu_bo_test_create(test, 0, PAGE_SIZE, VGPU_BO_NO_EXEC);
	KUNIT_EXPECT_EQ(test, a.va, VGPU_VA_START + 2 * PAGE_SIZE);
	/* file 1 gets a handle (as a PRIME import does) */
	obj = drm_gem_object_lookup(t->files[0], a.handle);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_ASSERT_EQ(test, drm_gem_handle_create(t->files[1], obj, &h1), 0);
	drm_gem_object_put(obj);
	info.handle = h1;
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_info(&t->vdev->drm, &info, t->files[1]), 0);
	KUNIT_EXPECT_EQ(test, info.va, VGPU_VA_START);
	KUNIT_EXPECT_EQ(test, info.flags, VGPU_BO_NO_EXEC);
	/* no pages yet: reserved in both files; the pages map in both */
	vgpu_bo_test_expect_unmapped(test, 0, a.va, PAGE_SIZE);
	vgpu_bo_test_expect_unmapped(test, 1, VGPU_VA_START, PAGE_SIZE);
	vgpu_bo_test_populate(test, 1, h1);
	vgpu_bo_test_expect_mapped(test, 0, a.handle, a.va,
				   VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE);
	vgpu_bo_test_expect_mapped(test, 1, h1, VGPU_VA_START,
				   VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE);
	/* the creator closes it: the other file's mapping stays */
	KUNIT_ASSERT_EQ(test, drm_gem_handle_delete(t->files[0], a.handle), 0);
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_pte(vgpu_bo_test_vf(t, 0)->as, a.va), 0);
	vgpu_bo_test_expect_mapped(test, 1, h1, VGPU_VA_START,
				   VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE);
	vgpu_bo_test_expect_mapped(test, 0, pad.handle, pad.va, rwx);
	/* ...until the file closes */
	vgpu_bo_test_close(t, 1);
	KUNIT_EXPECT_EQ(test, vgpu_bo_test_vf(t, 0)->as->mapped_bytes, PAGE_SIZE);
}

/*
 * Opening a file takes no ASID (its VM 0 gets one when a job of it runs):
 * more files than ASIDs open, none with an entry in the table.
 */
static void vgpu_bo_open_takes_no_asid(struct kunit *test)
{
	struct vgpu_bo_test *t = test->priv;
	unsigned int i;

	for (i = 1; i < VGPU_BO_TEST_FILES; i++)
		KUNIT_ASSERT_EQ(test, vgpu_bo_test_open(test, i), 0);
	for (i = 0; i < VGPU_BO_TEST_FILES; i++)
		KUNIT_EXPECT_EQ(test, vgpu_bo_test_vf(t, i)->as->asid, 0u);
	for (i = 0; i < t->vdev->as_max; i++)
		KUNIT_EXPECT_EQ(test, le64_to_cpu(t->vdev->as_table[i]), 0);
}

static void vgpu_bo_mmap_offset_and_wait(struct kunit *test)
{
	struct vgpu_bo_test *t = test->priv;
	struct drm_vgpu_bo_create c = vgpu_bo_test_create(test, 0, PAGE_SIZE, 0);
	struct drm_vgpu_bo_mmap_offset m = { .handle = c.handle };
	struct drm_vgpu_wait_bo w = { .handle = c.handle };
	u64 offset;

	KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_mmap_offset(&t->vdev->drm, &m, t->files[0]), 0);
	KUNIT_EXPECT_NE(test, m.offset, 0);
	KUNIT_EXPECT_EQ(test, m.offset % PAGE_SIZE, 0);
	offset = m.offset;
	m.offset = 0;
	KUNIT_ASSERT_EQ(test, vgpu_ioctl_bo_mmap_offset(&t->vdev->drm, &m, t->files[0]), 0);
	KUNIT_EXPECT_EQ(test, m.offset, offset);
	/* idle: a poll and a wait both return 0 at once */
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_wait_bo(&t->vdev->drm, &w, t->files[0]), 0);
	w.timeout_ns = ktime_get_ns() + NSEC_PER_SEC;
	KUNIT_EXPECT_EQ(test, vgpu_ioctl_wait_bo(&t->vdev->drm, &w, t->files[0]), 0);
	KUNIT_EXPECT_LT(test, ktime_get_ns(), w.timeout_ns);
}

static struct kunit_case vgpu_bo_cases[] = {
	KUNIT_CASE(vgpu_bo_create_maps_every_page),
	KUNIT_CASE(vgpu_bo_resident_limit),
	KUNIT_CASE(vgpu_bo_create_flags_to_pte),
	KUNIT_CASE(vgpu_bo_close_unmaps_and_reuses),
	KUNIT_CASE(vgpu_bo_shared_between_files),
	KUNIT_CASE(vgpu_bo_open_takes_no_asid),
	KUNIT_CASE(vgpu_bo_mmap_offset_and_wait),
	{}
};

static struct kunit_suite vgpu_bo_suite = {
	.name = "vgpu_bo",
	.init = vgpu_bo_test_init,
	.exit = vgpu_bo_test_exit,
	.test_cases = vgpu_bo_cases,
};

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

kunit_test_suites(&vgpu_ioctl_suite, &vgpu_bo_suite);
