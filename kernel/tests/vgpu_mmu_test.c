// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: GPU address spaces (vgpu_mmu.c), included at the end of
 * vgpu_mmu.c so that its static helpers are reachable, as xe does.
 *
 * A fake vgpu_device on a KUnit device gives the address-space code real
 * coherent DMA memory.  The tests walk the tables the way the device does
 * (uapi/vgpu_hw.h "GPU MMU": address-space table entry -> four levels of
 * 512 entries, each VALID | next table's address), through the bus
 * addresses written in the entries, not through the driver's shadow.
 */
#include <kunit/device.h>
#include <kunit/test.h>

/* The leaf entry for @va, allocating the tables on the way when @alloc. */
static __le64 *vgpu_pte(struct vgpu_as *as, u64 va, bool alloc)
{
	struct vgpu_pt *leaf = vgpu_walk(as, va, alloc, NULL, NULL);

	return IS_ERR(leaf) ? NULL : &leaf->cpu[VGPU_PT_INDEX(va, 0)];
}

struct vgpu_mmu_test {
	struct vgpu_device *vdev;
	u64 dma_mask;
};

static int vgpu_mmu_test_init(struct kunit *test)
{
	struct vgpu_mmu_test *t;
	struct device *dev;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->vdev = kunit_kzalloc(test, sizeof(*t->vdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vdev);
	dev = kunit_device_register(test, "vgpu-mmu-test");
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dev);
	t->dma_mask = DMA_BIT_MASK(52);
	dev->dma_mask = &t->dma_mask;
	dev->coherent_dma_mask = DMA_BIT_MASK(52);
	t->vdev->drm.dev = dev;
	t->vdev->as_max = 4;
	KUNIT_ASSERT_EQ(test, vgpu_mmu_init(t->vdev), 0);
	test->priv = t;
	return 0;
}

static void vgpu_mmu_test_exit(struct kunit *test)
{
	struct vgpu_mmu_test *t = test->priv;

	vgpu_mmu_fini(t->vdev);
}

/* The table an entry points to, as the device finds it (no IOMMU here). */
static __le64 *vgpu_test_next(struct kunit *test, __le64 entry)
{
	u64 e = le64_to_cpu(entry);

	KUNIT_ASSERT_TRUE(test, e & VGPU_PTE_VALID);
	KUNIT_EXPECT_EQ(test, e & VGPU_PTE_RSVD_MASK, 0);
	return phys_to_virt(e & VGPU_PTE_ADDR_MASK);
}

/*
 * The device's walk of @va in @as: the leaf entry, or the NULL entry of
 * level 1 or 2 that covers it (in *@plevel if not NULL), 0 when not
 * present.
 */
static u64 vgpu_test_walk_level(struct kunit *test, struct vgpu_as *as, u64 va,
				int *plevel)
{
	__le64 *table = vgpu_test_next(test, as->vdev->as_table[as->asid]);
	int level;

	if (plevel)
		*plevel = 0;
	for (level = VGPU_PT_LEVELS - 1; level > 0; level--) {
		__le64 e = table[VGPU_PT_INDEX(va, level)];

		if (!(le64_to_cpu(e) & VGPU_PTE_VALID))
			return 0;
		if (le64_to_cpu(e) & VGPU_PTE_NULL) {
			KUNIT_EXPECT_LT(test, level, VGPU_PT_LEVELS - 1);
			if (plevel)
				*plevel = level;
			return le64_to_cpu(e);
		}
		table = vgpu_test_next(test, e);
	}
	return le64_to_cpu(table[VGPU_PT_INDEX(va, 0)]);
}

static u64 vgpu_test_walk(struct kunit *test, struct vgpu_as *as, u64 va)
{
	return vgpu_test_walk_level(test, as, va, NULL);
}

KUNIT_DEFINE_ACTION_WRAPPER(vgpu_test_sg_free_table, sg_free_table, struct sg_table *);

/* An sg_table of @pages pages at the fake bus address @dma (never touched). */
static struct sg_table *vgpu_test_sgt(struct kunit *test, u64 dma, u32 pages)
{
	struct sg_table *sgt = kunit_kzalloc(test, sizeof(*sgt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, sgt);
	KUNIT_ASSERT_EQ(test, sg_alloc_table(sgt, 1, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vgpu_test_sg_free_table, sgt), 0);
	sg_dma_address(sgt->sgl) = dma;
	sg_dma_len(sgt->sgl) = pages * PAGE_SIZE;
	sgt->nents = 1;
	return sgt;
}

/* An address space bound to an ASID (as a job's would be), not counted busy. */
static struct vgpu_as *vgpu_test_as(struct kunit *test)
{
	struct vgpu_mmu_test *t = test->priv;
	struct vgpu_as *as = vgpu_as_create(t->vdev);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, as);
	spin_lock(&t->vdev->asid_lock);
	KUNIT_EXPECT_EQ(test, vgpu_as_bind_locked(as), 0);
	spin_unlock(&t->vdev->asid_lock);
	return as;
}

static void vgpu_mmu_as_table_entry(struct kunit *test)
{
	struct vgpu_mmu_test *t = test->priv;
	struct vgpu_as *as = vgpu_test_as(test);
	u64 e = le64_to_cpu(t->vdev->as_table[as->asid]);
	u32 asid = as->asid;

	KUNIT_EXPECT_GE(test, as->asid, 1u);
	KUNIT_EXPECT_EQ(test, e, VGPU_PTE_VALID | (as->root.dma & VGPU_PTE_ADDR_MASK));
	KUNIT_EXPECT_EQ(test, as->root.dma % VGPU_PAGE_SIZE, 0);
	/* nothing mapped: the walk stops at the root */
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START), 0);
	vgpu_as_put(as);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(t->vdev->as_table[asid]), 0);
	KUNIT_EXPECT_NULL(test, t->vdev->asid_owner[asid]);
}

/* A new address space has no ASID: creating one takes none. */
static void vgpu_mmu_create_takes_no_asid(struct kunit *test)
{
	struct vgpu_mmu_test *t = test->priv;
	struct vgpu_as *as[8];
	unsigned int i;

	/* as_max 4: ASIDs 1..3, and more address spaces than that */
	for (i = 0; i < ARRAY_SIZE(as); i++) {
		as[i] = vgpu_as_create(t->vdev);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, as[i]);
		KUNIT_EXPECT_EQ(test, as[i]->asid, 0u);
	}
	for (i = 0; i < t->vdev->as_max; i++)
		KUNIT_EXPECT_EQ(test, le64_to_cpu(t->vdev->as_table[i]), 0);
	for (i = 0; i < ARRAY_SIZE(as); i++)
		vgpu_as_put(as[i]);
}

/* A job's bind (prepare_job): the AS counted busy, a job ends it. */
static struct dma_fence *vgpu_test_job_bind(struct kunit *test, struct vgpu_as *as)
{
	int active = atomic_read(&as->active);
	struct dma_fence *f = vgpu_as_bind_job(as);

	KUNIT_EXPECT_EQ(test, atomic_read(&as->active), active + !f);
	return f;
}

/*
 * ASIDs bound at run time: free ones first, then the least recently used
 * one of an idle AS is taken (its entry repointed, mmu_gen bumped: the
 * queues invalidate their TLBs before the next launch); with every ASID
 * held by an AS with a job on the device, the bind returns a fence that
 * signals when one goes idle.
 */
static void vgpu_mmu_asid_lru_steal_and_wait(struct kunit *test)
{
	struct vgpu_mmu_test *t = test->priv;
	struct vgpu_device *vdev = t->vdev;
	struct vgpu_as *as[4];
	struct dma_fence *f;
	unsigned int i;
	int gen;

	for (i = 0; i < ARRAY_SIZE(as); i++) {
		as[i] = vgpu_as_create(vdev);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, as[i]);
	}
	/* a, b, c get ASIDs 1, 2, 3 */
	for (i = 0; i < 3; i++) {
		gen = atomic_read(&vdev->mmu_gen);
		KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[i]));
		KUNIT_EXPECT_EQ(test, as[i]->asid, i + 1);
		KUNIT_EXPECT_PTR_EQ(test, vdev->asid_owner[i + 1], as[i]);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(vdev->as_table[i + 1]),
				VGPU_PTE_VALID | as[i]->root.dma);
		KUNIT_EXPECT_NE(test, atomic_read(&vdev->mmu_gen), gen);
	}
	/* a second job of a bound AS: the same ASID, no TLB flush */
	gen = atomic_read(&vdev->mmu_gen);
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[0]));
	KUNIT_EXPECT_EQ(test, as[0]->asid, 1u);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->mmu_gen), gen);
	/* every ASID busy: d waits */
	f = vgpu_test_job_bind(test, as[3]);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(f));
	KUNIT_EXPECT_EQ(test, as[3]->asid, 0u);
	/* a's first job ends: a still has one, nothing to take */
	vgpu_as_job_end(as[0]);
	KUNIT_EXPECT_FALSE(test, dma_fence_is_signaled(f));
	/* b's ends: b is idle, the waiter is woken and takes b's ASID */
	vgpu_as_job_end(as[1]);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(f));
	dma_fence_put(f);
	gen = atomic_read(&vdev->mmu_gen);
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[3]));
	KUNIT_EXPECT_EQ(test, as[3]->asid, 2u);
	KUNIT_EXPECT_EQ(test, as[1]->asid, 0u);
	KUNIT_EXPECT_PTR_EQ(test, vdev->asid_owner[2], as[3]);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(vdev->as_table[2]),
			VGPU_PTE_VALID | as[3]->root.dma);
	KUNIT_EXPECT_NE(test, atomic_read(&vdev->mmu_gen), gen);
	KUNIT_EXPECT_EQ(test, vdev->asid_steals, 1);

	/* all idle; LRU order now a (1), c (3), d (2); using a moves it last */
	vgpu_as_job_end(as[0]);
	vgpu_as_job_end(as[2]);
	vgpu_as_job_end(as[3]);
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[0]));
	vgpu_as_job_end(as[0]);
	/* b comes back: c is the least recently used */
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[1]));
	KUNIT_EXPECT_EQ(test, as[1]->asid, 3u);
	KUNIT_EXPECT_EQ(test, as[2]->asid, 0u);
	vgpu_as_job_end(as[1]);
	/* a released AS gives its ASID back and clears its entry */
	vgpu_as_put(as[0]);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(vdev->as_table[1]), 0);
	KUNIT_EXPECT_NULL(test, vdev->asid_owner[1]);
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[2]));
	KUNIT_EXPECT_EQ(test, as[2]->asid, 1u);
	vgpu_as_job_end(as[2]);
	for (i = 1; i < ARRAY_SIZE(as); i++)
		vgpu_as_put(as[i]);
}

/*
 * A pinned AS (a user-mode queue's) keeps its ASID while idle; one ASID is
 * always left unpinned; unpinning wakes a waiter.
 */
static void vgpu_mmu_asid_pin(struct kunit *test)
{
	struct vgpu_mmu_test *t = test->priv;
	struct vgpu_device *vdev = t->vdev;
	struct vgpu_as *as[4];
	struct dma_fence *f;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(as); i++) {
		as[i] = vgpu_as_create(vdev);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, as[i]);
	}
	KUNIT_ASSERT_EQ(test, vgpu_as_pin(as[0]), 0);
	KUNIT_EXPECT_EQ(test, as[0]->asid, 1u);
	KUNIT_EXPECT_EQ(test, atomic_read(&as[0]->active), 0);
	KUNIT_ASSERT_EQ(test, vgpu_as_pin(as[0]), 0);	/* a second queue */
	KUNIT_ASSERT_EQ(test, vgpu_as_pin(as[1]), 0);
	KUNIT_EXPECT_EQ(test, as[1]->asid, 2u);
	KUNIT_EXPECT_EQ(test, vdev->asid_pinned, 2u);
	/* ASIDs 1..3: the last one is never pinned */
	KUNIT_EXPECT_EQ(test, vgpu_as_pin(as[2]), -EBUSY);
	KUNIT_EXPECT_EQ(test, as[2]->asid, 0u);
	/* c and then d share ASID 3; the idle pinned ones are not taken */
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[2]));
	KUNIT_EXPECT_EQ(test, as[2]->asid, 3u);
	f = vgpu_test_job_bind(test, as[3]);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	vgpu_as_job_end(as[2]);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(f));
	dma_fence_put(f);
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[3]));
	KUNIT_EXPECT_EQ(test, as[3]->asid, 3u);
	KUNIT_EXPECT_EQ(test, as[0]->asid, 1u);
	KUNIT_EXPECT_EQ(test, as[1]->asid, 2u);
	/* d busy, a and b pinned: c waits until b is unpinned */
	f = vgpu_test_job_bind(test, as[2]);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, f);
	vgpu_as_unpin(as[0]);		/* a keeps one pin */
	KUNIT_EXPECT_EQ(test, as[0]->asid, 1u);
	vgpu_as_unpin(as[1]);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(f));
	dma_fence_put(f);
	KUNIT_EXPECT_NULL(test, vgpu_test_job_bind(test, as[2]));
	KUNIT_EXPECT_EQ(test, as[2]->asid, 2u);
	KUNIT_EXPECT_EQ(test, as[1]->asid, 0u);
	vgpu_as_job_end(as[2]);
	vgpu_as_job_end(as[3]);
	vgpu_as_unpin(as[0]);
	KUNIT_EXPECT_EQ(test, vdev->asid_pinned, 0u);
	for (i = 0; i < ARRAY_SIZE(as); i++)
		vgpu_as_put(as[i]);
}

static void vgpu_mmu_map_pte_bits(struct kunit *test)
{
	static const struct {
		u32 flags;
		u64 prot;
	} cases[] = {
		{ 0, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE | VGPU_PTE_EXEC },
		{ VGPU_BO_READ_ONLY, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_EXEC },
		{ VGPU_BO_NO_EXEC, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE },
		{ VGPU_BO_READ_ONLY | VGPU_BO_NO_EXEC, VGPU_PTE_VALID | VGPU_PTE_READ },
	};
	struct vgpu_as *as = vgpu_test_as(test);
	const u64 pa = 0x123450000ull;
	unsigned int i, p;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct drm_mm_node node = {};
		u64 va;

		KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &node, vgpu_test_sgt(test, pa, 3),
						  3 * PAGE_SIZE, cases[i].flags), 0);
		va = node.start << PAGE_SHIFT;
		KUNIT_EXPECT_EQ(test, va, VGPU_VA_START);
		for (p = 0; p < 3; p++)
			KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va + p * PAGE_SIZE),
					cases[i].prot | (pa + p * PAGE_SIZE));
		/* the guard page after the BO is not mapped */
		KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va + 3 * PAGE_SIZE), 0);
		KUNIT_EXPECT_EQ(test, as->mapped_bytes, 3 * PAGE_SIZE);
		vgpu_as_unmap(as, &node);
		KUNIT_EXPECT_EQ(test, as->mapped_bytes, 0);
	}
	vgpu_as_put(as);
}

static void vgpu_mmu_guard_page_between_bos(struct kunit *test)
{
	struct drm_mm_node a = {}, b = {};
	struct vgpu_as *as = vgpu_test_as(test);

	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &a, vgpu_test_sgt(test, 0x100000, 2),
					  2 * PAGE_SIZE, 0), 0);
	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &b, vgpu_test_sgt(test, 0x200000, 1),
					  PAGE_SIZE, 0), 0);
	KUNIT_EXPECT_EQ(test, a.start << PAGE_SHIFT, VGPU_VA_START);
	KUNIT_EXPECT_EQ(test, b.start << PAGE_SHIFT, VGPU_VA_START + 3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START + 2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, b.start << PAGE_SHIFT) &
			VGPU_PTE_ADDR_MASK, 0x200000);
	KUNIT_EXPECT_EQ(test, as->mapped_bytes, 3 * PAGE_SIZE);
	vgpu_as_unmap(as, &a);
	vgpu_as_unmap(as, &b);
	vgpu_as_put(as);
}

static void vgpu_mmu_unmap_clears_and_bumps_gen(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	struct drm_mm_node node = {};
	int gen;

	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &node, vgpu_test_sgt(test, 0x400000, 4),
					  4 * PAGE_SIZE, 0), 0);
	gen = atomic_read(&as->vdev->mmu_gen);
	vgpu_as_unmap(as, &node);
	KUNIT_EXPECT_EQ(test, atomic_read(&as->vdev->mmu_gen), gen + 1);
	KUNIT_EXPECT_FALSE(test, drm_mm_node_allocated(&node));
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START + 3 * PAGE_SIZE), 0);
	/* a second unmap of the same node does nothing */
	vgpu_as_unmap(as, &node);
	KUNIT_EXPECT_EQ(test, atomic_read(&as->vdev->mmu_gen), gen + 1);
	KUNIT_EXPECT_EQ(test, as->mapped_bytes, 0);
	vgpu_as_put(as);
}

static void vgpu_mmu_va_reused_after_free(struct kunit *test)
{
	struct drm_mm_node a = {}, b = {}, c = {};
	struct vgpu_as *as = vgpu_test_as(test);

	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &a, vgpu_test_sgt(test, 0x10000, 4),
					  4 * PAGE_SIZE, 0), 0);
	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &b, vgpu_test_sgt(test, 0x20000, 1),
					  PAGE_SIZE, 0), 0);
	vgpu_as_unmap(as, &a);
	/* the hole a left (5 pages with its guard) takes a BO of 4 again */
	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &c, vgpu_test_sgt(test, 0x30000, 4),
					  4 * PAGE_SIZE, 0), 0);
	KUNIT_EXPECT_EQ(test, c.start << PAGE_SHIFT, VGPU_VA_START);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START) & VGPU_PTE_ADDR_MASK,
			0x30000);
	vgpu_as_unmap(as, &b);
	vgpu_as_unmap(as, &c);
	vgpu_as_put(as);
}

/* 600 pages from VA_START (1 MiB) cross the 2 MiB line: two leaf tables. */
static void vgpu_mmu_map_across_leaf_tables(struct kunit *test)
{
	const u32 pages = 600;
	struct vgpu_as *as = vgpu_test_as(test);
	struct drm_mm_node node = {};
	struct vgpu_pt *l2, *l1;
	u32 p;

	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &node, vgpu_test_sgt(test, 1ull << 32, pages),
					  (u64)pages * PAGE_SIZE, 0), 0);
	for (p = 0; p < pages; p++) {
		u64 va = VGPU_VA_START + (u64)p * PAGE_SIZE;

		KUNIT_ASSERT_EQ(test, vgpu_test_walk(test, as, va) & VGPU_PTE_ADDR_MASK,
				(1ull << 32) + (u64)p * PAGE_SIZE);
	}
	l2 = as->root.child[0]->child[0];
	KUNIT_ASSERT_NOT_NULL(test, l2);
	l1 = l2->child[0];
	KUNIT_EXPECT_NOT_NULL(test, l1);
	KUNIT_EXPECT_NOT_NULL(test, l2->child[1]);
	KUNIT_EXPECT_NULL(test, l2->child[2]);
	/* the shadow and the device's view agree */
	KUNIT_EXPECT_EQ(test, le64_to_cpu(l2->cpu[1]) & VGPU_PTE_ADDR_MASK,
			l2->child[1]->dma);
	vgpu_as_unmap(as, &node);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START + 300 * PAGE_SIZE), 0);
	vgpu_as_put(as);
}

/* Pages from several sg entries, each at its own bus address, in order. */
static void vgpu_mmu_map_scattered(struct kunit *test)
{
	static const struct { u64 dma; u32 pages; } chunks[] = {
		{ 0x7000000, 2 }, { 0x1000, 1 }, { 0xfffff000000ull, 3 },
	};
	struct vgpu_as *as = vgpu_test_as(test);
	struct sg_table *sgt = kunit_kzalloc(test, sizeof(*sgt), GFP_KERNEL);
	struct drm_mm_node node = {};
	struct scatterlist *sg;
	u64 va = VGPU_VA_START;
	unsigned int i, p;

	KUNIT_ASSERT_NOT_NULL(test, sgt);
	KUNIT_ASSERT_EQ(test, sg_alloc_table(sgt, ARRAY_SIZE(chunks), GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vgpu_test_sg_free_table, sgt), 0);
	for_each_sgtable_sg(sgt, sg, i) {
		sg_dma_address(sg) = chunks[i].dma;
		sg_dma_len(sg) = chunks[i].pages * PAGE_SIZE;
	}
	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &node, sgt, 6 * PAGE_SIZE,
					  VGPU_BO_NO_EXEC), 0);
	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		for (p = 0; p < chunks[i].pages; p++, va += PAGE_SIZE)
			KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va),
					VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE |
					(chunks[i].dma + p * PAGE_SIZE));
	}
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va), 0);
	vgpu_as_unmap(as, &node);
	vgpu_as_put(as);
}

/* More pages in the sg_table than the BO's size: only the size is mapped. */
static void vgpu_mmu_map_stops_at_size(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	struct drm_mm_node node = {};

	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &node, vgpu_test_sgt(test, 0x300000, 5),
					  2 * PAGE_SIZE, 0), 0);
	KUNIT_EXPECT_EQ(test, node.size, 3);	/* two pages and the guard */
	KUNIT_EXPECT_NE(test, vgpu_test_walk(test, as, VGPU_VA_START + PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START + 2 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START + 3 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, as->mapped_bytes, 2 * PAGE_SIZE);
	vgpu_as_unmap(as, &node);
	KUNIT_EXPECT_EQ(test, as->mapped_bytes, 0);
	vgpu_as_put(as);
}

/* Two address spaces: the same VA, each its own tables and pages. */
static void vgpu_mmu_address_spaces_apart(struct kunit *test)
{
	struct vgpu_as *a = vgpu_test_as(test), *b = vgpu_test_as(test);
	struct drm_mm_node na = {}, nb = {};

	KUNIT_ASSERT_EQ(test, vgpu_as_map(a, &na, vgpu_test_sgt(test, 0xa000, 1),
					  PAGE_SIZE, 0), 0);
	KUNIT_ASSERT_EQ(test, vgpu_as_map(b, &nb, vgpu_test_sgt(test, 0xb000, 1),
					  PAGE_SIZE, VGPU_BO_READ_ONLY), 0);
	KUNIT_EXPECT_EQ(test, na.start, nb.start);
	KUNIT_EXPECT_NE(test, a->root.dma, b->root.dma);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, a, VGPU_VA_START) & VGPU_PTE_ADDR_MASK, 0xa000);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, b, VGPU_VA_START) & VGPU_PTE_ADDR_MASK, 0xb000);
	vgpu_as_unmap(a, &na);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, a, VGPU_VA_START), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, b, VGPU_VA_START),
			VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_EXEC | 0xb000);
	vgpu_as_unmap(b, &nb);
	vgpu_as_put(a);
	vgpu_as_put(b);
}

/*
 * The top of the VA space: the leaf lookup builds the last table of each
 * level, linked from the last entry of the one above.  (Through vgpu_pte()
 * directly: a BO reaching that far would make the unmap walk 2^36 pages.)
 */
static void vgpu_mmu_walk_top_of_va(struct kunit *test)
{
	const u64 top = (1ull << VGPU_VA_BITS) - PAGE_SIZE;
	struct vgpu_as *as = vgpu_test_as(test);
	struct vgpu_pt *pt = &as->root;
	__le64 *pte;
	int level;

	for (level = VGPU_PT_LEVELS - 1; level >= 0; level--)
		KUNIT_EXPECT_EQ(test, VGPU_PT_INDEX(top, level), VGPU_PT_ENTRIES - 1);
	pte = vgpu_pte(as, top, true);
	KUNIT_ASSERT_NOT_NULL(test, pte);
	*pte = cpu_to_le64(VGPU_PTE_VALID | VGPU_PTE_READ | 0x5000);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, top),
			VGPU_PTE_VALID | VGPU_PTE_READ | 0x5000);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, top - PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, VGPU_VA_START), 0);
	for (level = VGPU_PT_LEVELS - 1; level > 0; level--) {
		KUNIT_ASSERT_NOT_NULL(test, pt->child[VGPU_PT_ENTRIES - 1]);
		KUNIT_EXPECT_EQ(test, le64_to_cpu(pt->cpu[VGPU_PT_ENTRIES - 1]),
				VGPU_PTE_VALID | pt->child[VGPU_PT_ENTRIES - 1]->dma);
		KUNIT_EXPECT_NULL(test, pt->child[0]);
		pt = pt->child[VGPU_PT_ENTRIES - 1];
	}
	KUNIT_EXPECT_PTR_EQ(test, pte, &pt->cpu[VGPU_PT_ENTRIES - 1]);
	vgpu_as_put(as);
}

static void vgpu_mmu_va_space_full(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	struct drm_mm_node node = {};
	struct sg_table *sgt = vgpu_test_sgt(test, 0x1000, 1);

	/* more pages than the VA space holds: -ENOSPC, nothing mapped */
	KUNIT_EXPECT_EQ(test, vgpu_as_map(as, &node, sgt, VGPU_VA_SIZE, 0), -ENOSPC);
	KUNIT_EXPECT_FALSE(test, drm_mm_node_allocated(&node));
	KUNIT_EXPECT_EQ(test, as->mapped_bytes, 0);
	/* a failed map leaves the space usable */
	KUNIT_EXPECT_EQ(test, vgpu_as_map(as, &node, sgt, PAGE_SIZE, 0), 0);
	KUNIT_EXPECT_EQ(test, node.start << PAGE_SHIFT, VGPU_VA_START);
	vgpu_as_unmap(as, &node);
	vgpu_as_put(as);
}

static void vgpu_mmu_pte_lookup_no_alloc(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);

	KUNIT_EXPECT_NULL(test, vgpu_pte(as, VGPU_VA_START, false));
	KUNIT_EXPECT_NULL(test, as->root.child[0]);
	KUNIT_EXPECT_NOT_NULL(test, vgpu_pte(as, VGPU_VA_START, true));
	KUNIT_EXPECT_NOT_NULL(test, as->root.child[0]);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(*vgpu_pte(as, VGPU_VA_START, false)), 0);
	vgpu_as_put(as);
}

/*
 * Unmapping the last page of a table frees it, and the tables above it
 * that it leaves empty, never the root; while a job of the address space
 * runs they wait on the deferred list (the device may still walk them).
 */
static void vgpu_mmu_empty_tables_freed(struct kunit *test)
{
	const u32 pages = 600;	/* from 1 MiB: two leaf tables */
	struct vgpu_as *as = vgpu_test_as(test);
	struct drm_mm_node a = {}, b = {};

	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &a, vgpu_test_sgt(test, 1ull << 32, pages),
					  (u64)pages * PAGE_SIZE, 0), 0);
	KUNIT_ASSERT_NOT_NULL(test, as->root.child[0]);
	KUNIT_EXPECT_EQ(test, as->root.used, 1);
	KUNIT_EXPECT_EQ(test, as->root.child[0]->child[0]->used, 2);
	KUNIT_EXPECT_EQ(test, as->root.child[0]->child[0]->child[0]->used, 256);
	vgpu_as_unmap(as, &a);
	/* two leaf tables, the level-1 and the level-2 table above them */
	KUNIT_EXPECT_EQ(test, as->tables_freed, 4);
	KUNIT_EXPECT_NULL(test, as->root.child[0]);
	KUNIT_EXPECT_EQ(test, as->root.used, 0);
	KUNIT_EXPECT_EQ(test, le64_to_cpu(as->root.cpu[0]), 0);

	/* a job runs: the tables wait for its end */
	KUNIT_ASSERT_EQ(test, vgpu_as_map(as, &b, vgpu_test_sgt(test, 1ull << 32, 1),
					  PAGE_SIZE, 0), 0);
	vgpu_as_job_begin(as);
	vgpu_as_unmap(as, &b);
	KUNIT_EXPECT_EQ(test, as->tables_freed, 7);
	KUNIT_EXPECT_EQ(test, as->ndeferred, 3);
	KUNIT_EXPECT_NULL(test, as->root.child[0]);
	vgpu_as_job_end(as);
	KUNIT_EXPECT_EQ(test, as->ndeferred, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&as->deferred));
	vgpu_as_put(as);
}

/* A pool holds every table a range could need; writing takes from it. */
static void vgpu_mmu_pool_covers_range(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	u64 va = (1ull << 30) - PAGE_SIZE;	/* one page each side of 1 GiB */
	struct vgpu_pt_pool pool;
	struct vgpu_pt *pt;
	u32 n[3] = {};
	int level;

	vgpu_pt_pool_init(&pool);
	KUNIT_ASSERT_EQ(test, vgpu_pt_pool_fill(as, &pool, va, 2 * PAGE_SIZE), 0);
	for (level = 0; level < 3; level++)
		list_for_each_entry(pt, &pool.free[level], dfr.link)
			n[level]++;
	KUNIT_EXPECT_EQ(test, n[0], 2);	/* two 2 MiB regions */
	KUNIT_EXPECT_EQ(test, n[1], 2);	/* two 1 GiB regions */
	KUNIT_EXPECT_EQ(test, n[2], 1);	/* one 512 GiB region */
	vgpu_as_write_range(as, va, 2 * PAGE_SIZE, NULL, 0, 0, &pool);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va) & VGPU_PTE_NULL, VGPU_PTE_NULL);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va + PAGE_SIZE) & VGPU_PTE_NULL,
			VGPU_PTE_NULL);
	/* all five used: the level-2 table was missing too */
	for (level = 0; level < 3; level++)
		KUNIT_EXPECT_TRUE(test, list_empty(&pool.free[level]));
	vgpu_as_clear_range(as, va, 2 * PAGE_SIZE, NULL);
	KUNIT_EXPECT_EQ(test, as->tables_freed, 5);
	vgpu_pt_pool_fini(&pool);
	vgpu_as_put(as);
}

static u32 vgpu_test_pool_count(struct vgpu_pt_pool *pool, int level)
{
	struct vgpu_pt *pt;
	u32 n = 0;

	list_for_each_entry(pt, &pool->free[level], dfr.link)
		n++;
	return n;
}

#define VGPU_TEST_NULL_PROT (VGPU_PTE_VALID | VGPU_PTE_NULL | VGPU_PTE_READ | \
			     VGPU_PTE_WRITE | VGPU_PTE_EXEC)

/*
 * A sparse range is written with NULL entries at the highest level that
 * covers an aligned part of it: [1 GiB, 2 GiB + 2 MiB + 4 KiB) takes one
 * level-2 entry, one level-1 entry and one leaf entry, and only the three
 * tables that hold them.
 */
static void vgpu_mmu_null_high_entries(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	u64 va = 1ull << 30, size = (1ull << 30) + (2ull << 20) + PAGE_SIZE;
	struct vgpu_pt_pool pool;
	int level;

	vgpu_pt_pool_init(&pool);
	KUNIT_ASSERT_EQ(test, vgpu_pt_pool_fill_how(as, &pool, va, size,
						    VGPU_PT_FILL_NULL), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 2), 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 1), 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 0), 1);
	vgpu_as_write_range(as, va, size, NULL, 0, 0, &pool);
	for (level = 0; level < 3; level++)
		KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, level), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, va, &level),
			VGPU_TEST_NULL_PROT);
	KUNIT_EXPECT_EQ(test, level, 2);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, 2 * va - PAGE_SIZE, &level),
			VGPU_TEST_NULL_PROT);
	KUNIT_EXPECT_EQ(test, level, 2);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, 2 * va + 4096, &level),
			VGPU_TEST_NULL_PROT);
	KUNIT_EXPECT_EQ(test, level, 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, va + size - PAGE_SIZE, &level),
			VGPU_TEST_NULL_PROT);
	KUNIT_EXPECT_EQ(test, level, 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va + size), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, va - PAGE_SIZE), 0);
	/* a level-2 table, a level-1 table (8 KiB each) and a leaf */
	KUNIT_EXPECT_EQ(test, atomic64_read(&as->pt_bytes), 5 * PAGE_SIZE);
	vgpu_as_clear_range(as, va, size, NULL);
	KUNIT_EXPECT_EQ(test, as->tables_freed, 3);
	KUNIT_EXPECT_EQ(test, atomic64_read(&as->pt_bytes), 0);
	vgpu_pt_pool_fini(&pool);
	vgpu_as_put(as);
}

/*
 * Unmapping a page inside a 1 GiB NULL entry splits it twice (a level-1
 * table of NULL entries, then a leaf table of NULL pages), with the two
 * tables an unmap reserves at its ends; the rest stays null pages with the
 * same permissions.  Mapping pages there later walks the split tables.
 */
static void vgpu_mmu_null_split(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	u64 gib = 1ull << 30, hole = gib + (4ull << 20) + PAGE_SIZE;
	u64 prot = VGPU_PTE_VALID | VGPU_PTE_NULL | VGPU_PTE_READ;
	struct vgpu_pt_pool pool;
	int level;

	vgpu_pt_pool_init(&pool);
	KUNIT_ASSERT_EQ(test, vgpu_pt_pool_fill_how(as, &pool, gib, gib,
						    VGPU_PT_FILL_NULL), 0);
	vgpu_as_write_range(as, gib, gib, NULL, 0,
			    VGPU_BO_READ_ONLY | VGPU_BO_NO_EXEC, &pool);
	vgpu_pt_pool_fini(&pool);
	KUNIT_EXPECT_EQ(test, atomic64_read(&as->pt_bytes), 2 * PAGE_SIZE);

	vgpu_pt_pool_init(&pool);
	KUNIT_ASSERT_EQ(test, vgpu_pt_pool_fill_how(as, &pool, hole, PAGE_SIZE,
						    VGPU_PT_FILL_EDGES), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 1), 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 0), 1);
	vgpu_as_clear_range(as, hole, PAGE_SIZE, &pool);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 1), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 0), 0);
	vgpu_pt_pool_fini(&pool);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, hole), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, hole - PAGE_SIZE, &level), prot);
	KUNIT_EXPECT_EQ(test, level, 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, hole + PAGE_SIZE, &level), prot);
	KUNIT_EXPECT_EQ(test, level, 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, gib, &level), prot);
	KUNIT_EXPECT_EQ(test, level, 1);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk_level(test, as, 2 * gib - PAGE_SIZE, &level), prot);
	KUNIT_EXPECT_EQ(test, level, 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&as->pt_bytes), 5 * PAGE_SIZE);

	/* map one page in the hole: the tables are there */
	vgpu_pt_pool_init(&pool);
	KUNIT_ASSERT_EQ(test, vgpu_pt_pool_fill(as, &pool, hole, PAGE_SIZE), 0);
	vgpu_as_write_range(as, hole, PAGE_SIZE, vgpu_test_sgt(test, 0x123000, 1),
			    0, 0, &pool);
	KUNIT_EXPECT_EQ(test, vgpu_test_pool_count(&pool, 0), 1);
	vgpu_pt_pool_fini(&pool);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, hole) & VGPU_PTE_ADDR_MASK, 0x123000);

	/* the whole GiB goes, and every table with it */
	vgpu_as_clear_range(as, gib, gib, NULL);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, gib), 0);
	KUNIT_EXPECT_EQ(test, vgpu_test_walk(test, as, hole), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&as->pt_bytes), 0);
	vgpu_as_put(as);
}

/* pt_limit_mb: a table past it is -ENOSPC, and nothing is charged. */
static void vgpu_mmu_pt_limit(struct kunit *test)
{
	struct vgpu_as *as = vgpu_test_as(test);
	unsigned int saved = vgpu_pt_limit_mb;
	struct vgpu_pt_pool pool;
	u64 before;

	vgpu_pt_limit_mb = 1;
	vgpu_pt_pool_init(&pool);
	/* 1 MiB: 1 GiB of pages needs 512 leaves (2 MiB) */
	KUNIT_EXPECT_EQ(test, vgpu_pt_pool_fill(as, &pool, 1ull << 30, 1ull << 30),
			-ENOSPC);
	before = atomic64_read(&as->pt_bytes);
	KUNIT_EXPECT_LE(test, before, 1ull << 20);
	vgpu_pt_pool_fini(&pool);
	KUNIT_EXPECT_EQ(test, atomic64_read(&as->pt_bytes), 0);
	/* the same range sparse takes two tables */
	vgpu_pt_pool_init(&pool);
	KUNIT_EXPECT_EQ(test, vgpu_pt_pool_fill_how(as, &pool, 1ull << 30, 1ull << 30,
						    VGPU_PT_FILL_NULL), 0);
	vgpu_pt_pool_fini(&pool);
	vgpu_pt_limit_mb = saved;
	vgpu_as_put(as);
}

static struct kunit_case vgpu_mmu_cases[] = {
	KUNIT_CASE(vgpu_mmu_as_table_entry),
	KUNIT_CASE(vgpu_mmu_create_takes_no_asid),
	KUNIT_CASE(vgpu_mmu_asid_lru_steal_and_wait),
	KUNIT_CASE(vgpu_mmu_asid_pin),
	KUNIT_CASE(vgpu_mmu_map_pte_bits),
	KUNIT_CASE(vgpu_mmu_guard_page_between_bos),
	KUNIT_CASE(vgpu_mmu_unmap_clears_and_bumps_gen),
	KUNIT_CASE(vgpu_mmu_va_reused_after_free),
	KUNIT_CASE(vgpu_mmu_map_across_leaf_tables),
	KUNIT_CASE(vgpu_mmu_map_scattered),
	KUNIT_CASE(vgpu_mmu_map_stops_at_size),
	KUNIT_CASE(vgpu_mmu_address_spaces_apart),
	KUNIT_CASE(vgpu_mmu_walk_top_of_va),
	KUNIT_CASE(vgpu_mmu_va_space_full),
	KUNIT_CASE(vgpu_mmu_pte_lookup_no_alloc),
	KUNIT_CASE(vgpu_mmu_empty_tables_freed),
	KUNIT_CASE(vgpu_mmu_pool_covers_range),
	KUNIT_CASE(vgpu_mmu_null_high_entries),
	KUNIT_CASE(vgpu_mmu_null_split),
	KUNIT_CASE(vgpu_mmu_pt_limit),
	{}
};

static struct kunit_suite vgpu_mmu_suite = {
	.name = "vgpu_mmu",
	.init = vgpu_mmu_test_init,
	.exit = vgpu_mmu_test_exit,
	.test_cases = vgpu_mmu_cases,
};

kunit_test_suite(vgpu_mmu_suite);
