// SPDX-License-Identifier: GPL-2.0
/*
 * GPU address spaces: each open file's VM 0 and each VM of VM_CREATE
 * (vgpu_vm.c), an entry of the device's address-space table pointing at a
 * four-level page table in the format of uapi/vgpu_hw.h ("GPU MMU").
 * Tables live in coherent DMA memory charged to the caller's memory
 * cgroup, reserved in a pool (vgpu_pt_pool_fill()) before @lock is taken
 * to write them: a bind's run_job, which signals fences, takes @lock, so
 * nothing allocates under it; each counts its valid entries, and one left with
 * none is unlinked and freed (the root stays) once no job can walk it:
 * it waits on @deferred like an unmapped BO (below).  Sparse ranges take
 * NULL entries at the highest level that covers an aligned part of them
 * (1 GiB, 2 MiB: vgpu_pt_write_null()), split when part of one changes
 * (vgpu_pt_child()).  An address space holds at most pt_limit_mb of
 * tables (&vgpu_as.pt_bytes, vgpu_pt_new()): past it, -ENOSPC.
 *
 * TLB: the device caches translations.  Unmapping clears the PTEs and bumps
 * vdev->mmu_gen; a queue emits a TLB_INVALIDATE before the next launch it
 * runs once the generation moved (vgpu_job.c), so no launch that starts
 * after the unmap translates through an entry of a page that was freed.
 *
 * A launch of the same address space already running (on another queue,
 * or on this one) may still hold the old entry in its TLB: its queue's
 * invalidate comes only before its next launch.  So the pages must not be
 * freed while such a launch runs (the panfrost/ivpu rule: no reuse before
 * the invalidate).  Each AS counts its jobs on the device (@active,
 * raised in run_job before it reads mmu_gen, dropped when the job is
 * freed); an unmap that sees a job running keeps a reference to the BO on
 * @deferred, dropped when the count falls to zero.  By then every launch
 * that could hold the entry has ended, and every later one is preceded by
 * an invalidate.  The increment/mmu_gen read in run_job and the
 * mmu_gen bump/count read here are ordered by full barriers: either the
 * unmap sees the job, or the job sees the new generation.
 *
 * An address space has a hardware ASID only while it has work on the
 * device, bound at run time and taken back LRU: see vgpu_asid.c, which
 * also holds the address-space table and the jobs' count (@active).
 */
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include "vgpu_drv.h"

static_assert(sizeof(struct vgpu_cmd_tlb_invalidate) == VGPU_CMD_BYTES);

static unsigned int vgpu_pt_limit_mb = 64;
module_param_named(pt_limit_mb, vgpu_pt_limit_mb, uint, 0644);
MODULE_PARM_DESC(pt_limit_mb,
		 "MiB of page tables per address space (VM), beyond which a bind fails with -ENOSPC (0: no limit; default 64)");

/*
 * Bytes a table holding entries of @level costs: its page, and above the
 * leaves its array of children.
 */
static u64 vgpu_pt_cost(int level)
{
	return level ? 2 * VGPU_PAGE_SIZE : VGPU_PAGE_SIZE;
}

/*
 * Page-table memory is charged to the caller's memory cgroup: a client
 * that maps at scattered addresses pays for the tables it makes.
 */
static int vgpu_pt_alloc(struct vgpu_device *vdev, struct vgpu_pt *pt,
			 bool leaf)
{
	pt->vdev = vdev;
	pt->used = 0;
	pt->cpu = vgpu_should_fail() ? NULL :
		  dma_alloc_coherent(vdev->drm.dev, VGPU_PAGE_SIZE, &pt->dma,
				     GFP_KERNEL_ACCOUNT);
	if (!pt->cpu)
		return -ENOMEM;
	pt->child = NULL;
	if (!leaf) {
		pt->child = kcalloc(VGPU_PT_ENTRIES, sizeof(*pt->child),
				    GFP_KERNEL_ACCOUNT);
		if (!pt->child) {
			dma_free_coherent(vdev->drm.dev, VGPU_PAGE_SIZE,
					  pt->cpu, pt->dma);
			return -ENOMEM;
		}
	}
	return 0;
}

static void vgpu_pt_free(struct vgpu_device *vdev, struct vgpu_pt *pt)
{
	unsigned int i;

	if (pt->child) {
		for (i = 0; i < VGPU_PT_ENTRIES; i++) {
			if (pt->child[i]) {
				vgpu_pt_free(vdev, pt->child[i]);
				kfree(pt->child[i]);
			}
		}
		kfree(pt->child);
	}
	dma_free_coherent(vdev->drm.dev, VGPU_PAGE_SIZE, pt->cpu, pt->dma);
	/* the root is not counted (no @acct) */
	if (pt->acct)
		atomic64_sub(vgpu_pt_cost(pt->child ? 1 : 0), pt->acct);
}

/**
 * vgpu_pt_new - a new, empty table of @as that holds entries of @level
 * @as:    the address space, charged for it (&vgpu_as.pt_bytes)
 * @level: 0 for a leaf table
 *
 * Return: the table, ERR_PTR(-ENOSPC) when it would take @as past
 * pt_limit_mb, or ERR_PTR(-ENOMEM).
 */
static struct vgpu_pt *vgpu_pt_new(struct vgpu_as *as, int level)
{
	u64 limit = (u64)READ_ONCE(vgpu_pt_limit_mb) << 20;
	u64 cost = vgpu_pt_cost(level);
	struct vgpu_pt *n;

	if (atomic64_add_return(cost, &as->pt_bytes) > limit && limit) {
		atomic64_sub(cost, &as->pt_bytes);
		return ERR_PTR(-ENOSPC);
	}
	n = kzalloc(sizeof(*n), GFP_KERNEL_ACCOUNT);
	if (n && vgpu_pt_alloc(as->vdev, n, level == 0)) {
		kfree(n);
		n = NULL;
	}
	if (!n) {
		atomic64_sub(cost, &as->pt_bytes);
		return ERR_PTR(-ENOMEM);
	}
	n->acct = &as->pt_bytes;
	return n;
}

/* Bytes of @as's page tables, the root's included (fdinfo, debugfs). */
u64 vgpu_as_pt_bytes(struct vgpu_as *as)
{
	return atomic64_read(&as->pt_bytes) + vgpu_pt_cost(VGPU_PT_LEVELS - 1);
}

/* A table freed with nothing in it (its children went before it). */
static void vgpu_pt_free_deferred(struct vgpu_deferred *d)
{
	struct vgpu_pt *pt = container_of(d, struct vgpu_pt, dfr);

	vgpu_pt_free(pt->vdev, pt);
	kfree(pt);
}

/*
 * Tables of @level (those that hold entries of @level: each covers
 * 2^(12 + 9 * (level + 1)) bytes) [@va, @va + @size) touches: all of
 * them, or (@edges) only those that hold an entry of the level above that
 * the range covers in part, at its two ends.
 */
static u64 vgpu_pt_count(u64 va, u64 size, int level, bool edges)
{
	unsigned int shift = VGPU_PAGE_SHIFT + 9 * (level + 1);
	u64 span = 1ull << shift, end = va + size;
	bool head = va & (span - 1), tail = end & (span - 1);

	if (!edges)
		return ((end - 1) >> shift) - (va >> shift) + 1;
	if (head && tail && (va >> shift) == ((end - 1) >> shift))
		return 1;
	return head + tail;
}

/**
 * vgpu_pt_pool_fill_how - reserve the page tables [@va, @va + @size) may need
 * @as:   the address space (charged for them, within pt_limit_mb)
 * @pool: gets the tables, by level, for vgpu_as_write_range() and
 *        vgpu_as_clear_range()
 * @va:   page aligned
 * @size: bytes, page aligned, not 0
 * @how:  VGPU_PT_FILL_PAGES: every table the range touches (a mapping of
 *        pages); VGPU_PT_FILL_NULL: a sparse range, written with NULL
 *        entries at the highest level that covers an aligned part of it
 *        (level 2 or 1: uapi/vgpu_hw.h), which needs the level-2 tables
 *        and, below them, only the tables at its two ends;
 *        VGPU_PT_FILL_EDGES: an unmap, which may split a NULL entry at
 *        either end (the table below it, filled with NULL entries)
 *
 * A bind applies its ops later, where it may allocate nothing: every
 * table a range could lack, whatever the ops before it free, is reserved
 * here.  An op splits NULL entries only at its own two ends (a NULL entry
 * lies inside one sparse mapping), so each of its ends needs at most one
 * table per level, which the counts above include.  vgpu_pt_pool_fini()
 * frees what was not used.
 *
 * Return: 0, -ENOSPC past pt_limit_mb, or -ENOMEM (what was reserved
 * stays in @pool).
 */
int vgpu_pt_pool_fill_how(struct vgpu_as *as, struct vgpu_pt_pool *pool,
			  u64 va, u64 size, enum vgpu_pt_fill how)
{
	int level;

	for (level = 0; level < VGPU_PT_LEVELS - 1; level++) {
		u64 n;

		if (how == VGPU_PT_FILL_PAGES || (how == VGPU_PT_FILL_NULL && level == 2))
			n = vgpu_pt_count(va, size, level, false);
		else if (level < 2)
			n = vgpu_pt_count(va, size, level, true);
		else
			n = 0;
		while (n--) {
			struct vgpu_pt *pt = vgpu_pt_new(as, level);

			if (IS_ERR(pt))
				return PTR_ERR(pt);
			list_add(&pt->dfr.link, &pool->free[level]);
			cond_resched();
		}
	}
	return 0;
}

/* vgpu_pt_pool_fill_how(VGPU_PT_FILL_PAGES) */
int vgpu_pt_pool_fill(struct vgpu_as *as, struct vgpu_pt_pool *pool, u64 va,
		      u64 size)
{
	return vgpu_pt_pool_fill_how(as, pool, va, size, VGPU_PT_FILL_PAGES);
}

void vgpu_pt_pool_init(struct vgpu_pt_pool *pool)
{
	int level;

	for (level = 0; level < VGPU_PT_LEVELS - 1; level++)
		INIT_LIST_HEAD(&pool->free[level]);
}

void vgpu_pt_pool_fini(struct vgpu_pt_pool *pool)
{
	struct vgpu_pt *pt, *tmp;
	int level;

	for (level = 0; level < VGPU_PT_LEVELS - 1; level++) {
		list_for_each_entry_safe(pt, tmp, &pool->free[level], dfr.link) {
			list_del(&pt->dfr.link);
			vgpu_pt_free(pt->vdev, pt);
			kfree(pt);
		}
	}
}

/*
 * The table below entry @idx of @pt, which holds entries of @level (>= 1):
 * the one there, else one from @pool, or allocated when @alloc, that
 * takes the entry's place.  Under a NULL entry (VGPU_PTE_NULL at level 1
 * or 2) the new table is filled with NULL entries of the same permissions
 * before it is linked, so the device sees the same null pages throughout:
 * the entry is split.  Returns ERR_PTR(-ENOENT) when neither @pool nor
 * @alloc gives one, or vgpu_pt_new()'s error.  Under @as->lock.
 */
static struct vgpu_pt *vgpu_pt_child(struct vgpu_as *as, struct vgpu_pt *pt,
				     int level, unsigned int idx, bool alloc,
				     struct vgpu_pt_pool *pool)
{
	struct vgpu_pt *n = pt->child[idx];
	__le64 old = pt->cpu[idx];
	unsigned int i;

	if (n)
		return n;
	if (pool) {
		n = list_first_entry_or_null(&pool->free[level - 1],
					     struct vgpu_pt, dfr.link);
		if (!n)
			return ERR_PTR(-ENOENT);
		list_del(&n->dfr.link);
	} else if (alloc) {
		n = vgpu_pt_new(as, level - 1);
		if (IS_ERR(n))
			return n;
	} else {
		return ERR_PTR(-ENOENT);
	}
	if (old) {
		for (i = 0; i < VGPU_PT_ENTRIES; i++)
			n->cpu[i] = old;
		n->used = VGPU_PT_ENTRIES;
		dma_wmb();	/* the entries before the link */
	} else {
		pt->used++;
	}
	pt->child[idx] = n;
	WRITE_ONCE(pt->cpu[idx], cpu_to_le64(VGPU_PTE_VALID |
					     (n->dma & VGPU_PTE_ADDR_MASK)));
	return n;
}

/*
 * The leaf table for @va, with the tables above it in @path[1..3] (@path
 * may be NULL); a missing table comes from @pool, or is allocated when
 * @alloc; a NULL entry on the way is split (vgpu_pt_child()).  Returns
 * ERR_PTR(-ENOENT) when a table is missing and may not be made,
 * -ENOSPC or -ENOMEM.  Under @as->lock.
 */
static struct vgpu_pt *vgpu_walk(struct vgpu_as *as, u64 va, bool alloc,
				 struct vgpu_pt_pool *pool,
				 struct vgpu_pt **path)
{
	struct vgpu_pt *pt = &as->root;
	int level;

	for (level = VGPU_PT_LEVELS - 1; level > 0; level--) {
		if (path)
			path[level] = pt;
		pt = vgpu_pt_child(as, pt, level, VGPU_PT_INDEX(va, level),
				   alloc, pool);
		if (IS_ERR(pt))
			return pt;
	}
	if (path)
		path[0] = pt;
	return pt;
}

/* Set @va's entry in its leaf table @leaf (counting the valid ones). */
static void vgpu_pte_set(struct vgpu_pt *leaf, u64 va, u64 val)
{
	__le64 *e = &leaf->cpu[VGPU_PT_INDEX(va, 0)];

	if (!*e)
		leaf->used++;
	*e = cpu_to_le64(val);
}

/* The end of the entry of @level holding @va, or @end if that comes first. */
static u64 vgpu_pt_entry_end(u64 va, u64 end, int level)
{
	u64 span = 1ull << (VGPU_PAGE_SHIFT + 9 * level);

	return min((va | (span - 1)) + 1, end);
}

/*
 * Write NULL entries (@pte: VALID | NULL | permissions) over [@va, @end)
 * below @pt, which holds entries of @level: at level 2 and 1 an empty
 * entry the range covers whole becomes one NULL entry; elsewhere the
 * table below is taken (from @pool) or walked.  Under @as->lock.
 */
static void vgpu_pt_write_null(struct vgpu_as *as, struct vgpu_pt *pt,
			       int level, u64 va, u64 end, u64 pte,
			       struct vgpu_pt_pool *pool)
{
	u64 span = 1ull << (VGPU_PAGE_SHIFT + 9 * level);

	while (va < end) {
		unsigned int idx = VGPU_PT_INDEX(va, level);
		u64 next = vgpu_pt_entry_end(va, end, level);
		struct vgpu_pt *child;

		if (!level) {
			vgpu_pte_set(pt, va, pte);
		} else if (level < VGPU_PT_LEVELS - 1 && next - va == span &&
			   !pt->child[idx]) {
			if (!pt->cpu[idx])
				pt->used++;
			pt->cpu[idx] = cpu_to_le64(pte);
		} else {
			child = vgpu_pt_child(as, pt, level, idx, false, pool);
			if (WARN_ON(IS_ERR(child)))
				return;
			vgpu_pt_write_null(as, child, level - 1, va, next, pte,
					   pool);
		}
		va = next;
	}
}

/*
 * Clear the entries of [@va, @end) below @pt, which holds entries of
 * @level.  A NULL entry of level 2 or 1 the range covers in part is split
 * first (its table from @pool; without one it stays as it is: null pages,
 * never memory).  A table left empty is unlinked and freed (never the
 * root): at once when no job of @as runs, else once none does (a job may
 * still walk it, TLB or not).  Under @as->lock.
 */
static void vgpu_pt_clear(struct vgpu_as *as, struct vgpu_pt *pt, int level,
			  u64 va, u64 end, struct vgpu_pt_pool *pool)
{
	u64 span = 1ull << (VGPU_PAGE_SHIFT + 9 * level);

	while (va < end) {
		unsigned int idx = VGPU_PT_INDEX(va, level);
		u64 next = vgpu_pt_entry_end(va, end, level);
		struct vgpu_pt *child = level ? pt->child[idx] : NULL;

		if (!pt->cpu[idx]) {
			va = next;
			continue;
		}
		if (!child && (!level || next - va == span)) {
			/* a page, or a NULL entry the range covers whole */
			pt->cpu[idx] = 0;
			pt->used--;
			va = next;
			continue;
		}
		if (!child) {
			child = vgpu_pt_child(as, pt, level, idx, false, pool);
			if (WARN_ON_ONCE(IS_ERR(child))) {
				va = next;
				continue;
			}
		}
		vgpu_pt_clear(as, child, level - 1, va, next, pool);
		if (!child->used) {
			pt->cpu[idx] = 0;
			pt->child[idx] = NULL;
			pt->used--;
			child->dfr.free = vgpu_pt_free_deferred;
			if (!vgpu_as_defer(as, NULL, &child->dfr))
				vgpu_pt_free_deferred(&child->dfr);
			as->tables_freed++;
		}
		va = next;
	}
}

struct vgpu_as *vgpu_as_create(struct vgpu_device *vdev)
{
	struct vgpu_as *as;
	int ret;

	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!as)
		return ERR_PTR(-ENOMEM);
	ret = vgpu_pt_alloc(vdev, &as->root, false);
	if (ret)
		goto err_free;
	as->vdev = vdev;
	kref_init(&as->refcount);
	mutex_init(&as->lock);
	spin_lock_init(&as->deferred_lock);
	INIT_LIST_HEAD(&as->deferred);
	INIT_LIST_HEAD(&as->lru);
	drm_mm_init(&as->mm, VGPU_VA_START >> PAGE_SHIFT,
		    VGPU_VA_SIZE >> PAGE_SHIFT);
	/* no ASID yet: its first job binds one (vgpu_as_bind_job()) */
	vgpu_dbg(vdev, VGPU_DBG_MMU, "root %pad\n", &as->root.dma);
	return as;

err_free:
	kfree(as);
	return ERR_PTR(ret);
}

static void vgpu_as_release(struct kref *kref)
{
	struct vgpu_as *as = container_of(kref, struct vgpu_as, refcount);
	struct vgpu_device *vdev = as->vdev;

	vgpu_dbg(vdev, VGPU_DBG_MMU, "asid %u\n", as->asid);
	WARN_ON(!list_empty(&as->deferred));
	WARN_ON(as->pins);
	spin_lock(&vdev->asid_lock);
	if (as->asid) {
		vdev->as_table[as->asid] = 0;
		vdev->asid_owner[as->asid] = NULL;
		list_del_init(&as->lru);
		as->asid = 0;
		vgpu_asid_kick_locked(vdev);
	}
	spin_unlock(&vdev->asid_lock);
	atomic_inc(&vdev->mmu_gen);
	drm_mm_takedown(&as->mm);
	vgpu_pt_free(vdev, &as->root);
	mutex_destroy(&as->lock);
	kfree(as);
}

void vgpu_as_put(struct vgpu_as *as)
{
	if (as)
		kref_put(&as->refcount, vgpu_as_release);
}

/*
 * Clear the PTEs of [@va, @va + @size) (under @as->lock); @pool, if not
 * NULL, has the tables to split NULL entries at the ends.
 */
static void vgpu_as_clear_range_locked(struct vgpu_as *as, u64 va, u64 size,
				       struct vgpu_pt_pool *pool)
{
	vgpu_pt_clear(as, &as->root, VGPU_PT_LEVELS - 1, va, va + size, pool);
	/* Before the pages can be reused, the next launch flushes the TLB. */
	atomic_inc(&as->vdev->mmu_gen);
	/*
	 * A user-mode queue has no "next launch" the kernel sees: flush now.
	 * Pairs with USERQ_CREATE's count and flush (vgpu_userq.c).
	 */
	smp_mb();
	if (atomic_read(&as->userqs))
		vgpu_tlb_flush_now(as->vdev);
}

/* Clear the PTEs of @node (under @as->lock); the VA stays reserved. */
static void vgpu_as_clear_locked(struct vgpu_as *as, struct drm_mm_node *node)
{
	vgpu_as_clear_range_locked(as, node->start << PAGE_SHIFT,
				   node->size << PAGE_SHIFT, NULL);
}

/* The PTE permission bits of VGPU_BO_* flags. */
static u64 vgpu_pte_prot(u32 bo_flags)
{
	u64 prot = VGPU_PTE_VALID | VGPU_PTE_READ;

	if (!(bo_flags & VGPU_BO_READ_ONLY))
		prot |= VGPU_PTE_WRITE;
	if (!(bo_flags & VGPU_BO_NO_EXEC))
		prot |= VGPU_PTE_EXEC;
	return prot;
}

/**
 * vgpu_as_write_range - point [@va, @va + @size) at pages
 * @as:     the address space
 * @va:     page aligned
 * @size:   bytes, page aligned
 * @sgt:    the pages (DMA-mapped), or NULL for NULL entries (VGPU_PTE_NULL:
 *          reads see zeros, writes are dropped), at the highest level
 *          that covers an aligned part of the range (2 MiB, 1 GiB)
 * @offset: byte offset into @sgt of the page mapped at @va (page aligned)
 * @flags:  VGPU_BO_READ_ONLY, VGPU_BO_NO_EXEC
 * @pool:   the tables the range may lack (vgpu_pt_pool_fill_how(), with
 *          VGPU_PT_FILL_NULL for a NULL range): this allocates nothing
 *          (a bind's run_job)
 */
void vgpu_as_write_range(struct vgpu_as *as, u64 va, u64 size,
			 struct sg_table *sgt, u64 offset, u32 flags,
			 struct vgpu_pt_pool *pool)
{
	u64 prot = vgpu_pte_prot(flags), end = va + size;
	struct sg_dma_page_iter iter;
	struct vgpu_pt *leaf;

	mutex_lock(&as->lock);
	if (!sgt) {
		vgpu_pt_write_null(as, &as->root, VGPU_PT_LEVELS - 1, va, end,
				   prot | VGPU_PTE_NULL, pool);
	} else {
		for_each_sgtable_dma_page(sgt, &iter, offset >> PAGE_SHIFT) {
			if (va >= end)
				break;
			leaf = vgpu_walk(as, va, false, pool, NULL);
			if (WARN_ON(IS_ERR(leaf)))
				break;
			vgpu_pte_set(leaf, va, prot | (sg_page_iter_dma_address(&iter) &
						       VGPU_PTE_ADDR_MASK));
			va += PAGE_SIZE;
		}
	}
	mutex_unlock(&as->lock);
}

/*
 * Unmap [@va, @va + @size); the next launch of the device flushes its TLB.
 * A NULL entry the range covers in part is split with a table of @pool
 * (vgpu_pt_pool_fill_how(VGPU_PT_FILL_EDGES) or more; may be NULL where
 * no NULL entry can be).
 */
void vgpu_as_clear_range(struct vgpu_as *as, u64 va, u64 size,
			 struct vgpu_pt_pool *pool)
{
	mutex_lock(&as->lock);
	vgpu_as_clear_range_locked(as, va, size, pool);
	mutex_unlock(&as->lock);
}

/**
 * vgpu_as_reserve - allocate VA for @size bytes, with no page behind it
 * @as:   the address space
 * @node: filled with the allocation; the caller keeps it until
 *        vgpu_as_unmap()
 * @size: bytes (page multiple); one guard page follows, so that overruns
 *        fault instead of aliasing the next BO
 *
 * Until vgpu_as_fill(), every access to the range faults.
 *
 * Return: 0 or -errno (-ENOSPC when the VA space is full).
 */
int vgpu_as_reserve(struct vgpu_as *as, struct drm_mm_node *node, u64 size)
{
	int ret;

	mutex_lock(&as->lock);
	ret = drm_mm_insert_node_generic(&as->mm, node,
					 (size >> PAGE_SHIFT) + 1, 1, 0, 0);
	if (!ret) {
		as->mapped_bytes += size;
		vgpu_dbg(as->vdev, VGPU_DBG_MMU, "asid %u va 0x%llx size 0x%llx\n",
			 as->asid, node->start << PAGE_SHIFT, size);
	}
	mutex_unlock(&as->lock);
	return ret;
}

/**
 * vgpu_as_fill - point a reserved range at its pages
 * @as:       the address space
 * @node:     from vgpu_as_reserve()
 * @sgt:      the pages (DMA-mapped), at least the range's size
 * @bo_flags: VGPU_BO_* (permissions)
 *
 * Return: 0, or -ENOMEM when a page table could not be allocated, or
 * -ENOSPC when it would take @as past pt_limit_mb: then the range is left
 * as it was, reserved with no page behind it.
 */
int vgpu_as_fill(struct vgpu_as *as, struct drm_mm_node *node,
		 struct sg_table *sgt, u32 bo_flags)
{
	u64 prot = vgpu_pte_prot(bo_flags), va, end;
	struct sg_dma_page_iter iter;
	struct vgpu_pt_pool pool;
	int ret = 0;

	/*
	 * No allocation under @as->lock: a bind's run_job, which signals
	 * fences, takes it.  A missing table is allocated with the lock
	 * dropped (the tables of @va's entry at every level, into @pool;
	 * what is not used is freed at the end), then the walk goes on.
	 * The range is ours and the entries written so far keep their
	 * tables alive meanwhile.
	 */
	vgpu_pt_pool_init(&pool);
	mutex_lock(&as->lock);
	va = node->start << PAGE_SHIFT;
	end = (node->start + node->size - 1) << PAGE_SHIFT;	/* the guard */
	for_each_sgtable_dma_page(sgt, &iter, 0) {
		dma_addr_t pa = sg_page_iter_dma_address(&iter);
		struct vgpu_pt *leaf;

		if (va >= end)
			break;
		leaf = vgpu_walk(as, va, false, &pool, NULL);
		if (leaf == ERR_PTR(-ENOENT)) {
			mutex_unlock(&as->lock);
			ret = vgpu_pt_pool_fill(as, &pool, va, PAGE_SIZE);
			mutex_lock(&as->lock);
			leaf = ret ? ERR_PTR(ret) : vgpu_walk(as, va, false, &pool, NULL);
		}
		if (IS_ERR(leaf)) {
			ret = PTR_ERR(leaf);
			break;
		}
		vgpu_pte_set(leaf, va, prot | (pa & VGPU_PTE_ADDR_MASK));
		va += PAGE_SIZE;
	}
	if (ret)
		vgpu_as_clear_locked(as, node);
	mutex_unlock(&as->lock);
	vgpu_pt_pool_fini(&pool);
	return ret;
}

/* vgpu_as_reserve() and vgpu_as_fill() in one (the pages exist already). */
int vgpu_as_map(struct vgpu_as *as, struct drm_mm_node *node,
		struct sg_table *sgt, u64 size, u32 bo_flags)
{
	int ret = vgpu_as_reserve(as, node, size);

	if (ret)
		return ret;
	ret = vgpu_as_fill(as, node, sgt, bo_flags);
	if (ret)
		vgpu_as_unmap(as, node);
	return ret;
}

void vgpu_as_unmap(struct vgpu_as *as, struct drm_mm_node *node)
{
	mutex_lock(&as->lock);
	if (drm_mm_node_allocated(node)) {
		vgpu_as_clear_locked(as, node);
		as->mapped_bytes -= (node->size - 1) << PAGE_SHIFT;
		drm_mm_remove_node(node);
	}
	mutex_unlock(&as->lock);
}

#if IS_ENABLED(CONFIG_DRM_VGPU_KUNIT_TEST)
#include "tests/vgpu_mmu_test.c"
#endif
