// SPDX-License-Identifier: GPL-2.0
/*
 * GPU address spaces: one per open file, each an entry of the device's
 * address-space table pointing at a four-level page table in the format of
 * uapi/vgpu_hw.h ("GPU MMU").  Tables live in coherent DMA memory and are
 * allocated on demand; they are freed with the address space, which jobs
 * keep alive while they run.
 *
 * TLB: the device caches translations.  Unmapping clears the PTEs and bumps
 * vdev->mmu_gen; a queue emits a TLB_INVALIDATE before the next launch it
 * runs once the generation moved (vgpu_job.c), so no launch translates
 * through an entry of a page that was freed.
 */
#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include "vgpu_drv.h"

static_assert(sizeof(struct vgpu_cmd_tlb_invalidate) == VGPU_CMD_BYTES);

static int vgpu_pt_alloc(struct vgpu_device *vdev, struct vgpu_pt *pt,
			 bool leaf)
{
	pt->cpu = dma_alloc_coherent(&vdev->pdev->dev, VGPU_PAGE_SIZE, &pt->dma,
				     GFP_KERNEL);
	if (!pt->cpu)
		return -ENOMEM;
	pt->child = NULL;
	if (!leaf) {
		pt->child = kcalloc(VGPU_PT_ENTRIES, sizeof(*pt->child),
				    GFP_KERNEL);
		if (!pt->child) {
			dma_free_coherent(&vdev->pdev->dev, VGPU_PAGE_SIZE,
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
	dma_free_coherent(&vdev->pdev->dev, VGPU_PAGE_SIZE, pt->cpu, pt->dma);
}

/* The leaf entry for @va, allocating the tables on the way when @alloc. */
static __le64 *vgpu_pte(struct vgpu_as *as, u64 va, bool alloc)
{
	struct vgpu_pt *pt = &as->root;
	int level;

	for (level = VGPU_PT_LEVELS - 1; level > 0; level--) {
		unsigned int idx = VGPU_PT_INDEX(va, level);

		if (!pt->child[idx]) {
			struct vgpu_pt *n;

			if (!alloc)
				return NULL;
			n = kzalloc(sizeof(*n), GFP_KERNEL);
			if (!n || vgpu_pt_alloc(as->vdev, n, level == 1)) {
				kfree(n);
				return NULL;
			}
			pt->child[idx] = n;
			pt->cpu[idx] = cpu_to_le64(VGPU_PTE_VALID |
						   (n->dma & VGPU_PTE_ADDR_MASK));
		}
		pt = pt->child[idx];
	}
	return &pt->cpu[VGPU_PT_INDEX(va, 0)];
}

struct vgpu_as *vgpu_as_create(struct vgpu_device *vdev)
{
	struct vgpu_as *as;
	int ret;

	as = kzalloc(sizeof(*as), GFP_KERNEL);
	if (!as)
		return ERR_PTR(-ENOMEM);
	ret = ida_alloc_range(&vdev->asid_ida, 1, vdev->as_max - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_free;
	as->asid = ret;
	ret = vgpu_pt_alloc(vdev, &as->root, false);
	if (ret)
		goto err_ida;
	as->vdev = vdev;
	kref_init(&as->refcount);
	mutex_init(&as->lock);
	drm_mm_init(&as->mm, VGPU_VA_START >> PAGE_SHIFT,
		    VGPU_VA_SIZE >> PAGE_SHIFT);
	vdev->as_table[as->asid] = cpu_to_le64(VGPU_PTE_VALID |
					       (as->root.dma & VGPU_PTE_ADDR_MASK));
	vgpu_dbg(vdev, VGPU_DBG_MMU, "asid %u root %pad\n", as->asid,
		 &as->root.dma);
	return as;

err_ida:
	ida_free(&vdev->asid_ida, as->asid);
err_free:
	kfree(as);
	return ERR_PTR(ret == -ENOSPC ? -EBUSY : ret);
}

static void vgpu_as_release(struct kref *kref)
{
	struct vgpu_as *as = container_of(kref, struct vgpu_as, refcount);
	struct vgpu_device *vdev = as->vdev;

	vgpu_dbg(vdev, VGPU_DBG_MMU, "asid %u\n", as->asid);
	vdev->as_table[as->asid] = 0;
	atomic_inc(&vdev->mmu_gen);
	drm_mm_takedown(&as->mm);
	vgpu_pt_free(vdev, &as->root);
	ida_free(&vdev->asid_ida, as->asid);
	mutex_destroy(&as->lock);
	kfree(as);
}

void vgpu_as_put(struct vgpu_as *as)
{
	if (as)
		kref_put(&as->refcount, vgpu_as_release);
}

/**
 * vgpu_as_map - allocate VA for @size bytes and map @sgt there
 * @as:       the address space
 * @node:     filled with the allocation; the caller keeps it until
 *            vgpu_as_unmap()
 * @sgt:      the pages (DMA-mapped)
 * @size:     bytes to map (page multiple)
 * @bo_flags: VGPU_BO_* (permissions)
 *
 * Return: 0 or -errno (-ENOSPC when the VA space is full).
 */
int vgpu_as_map(struct vgpu_as *as, struct drm_mm_node *node,
		struct sg_table *sgt, u64 size, u32 bo_flags)
{
	u64 prot = VGPU_PTE_VALID | VGPU_PTE_READ, va;
	struct sg_dma_page_iter iter;
	int ret;

	if (!(bo_flags & VGPU_BO_READ_ONLY))
		prot |= VGPU_PTE_WRITE;
	if (!(bo_flags & VGPU_BO_NO_EXEC))
		prot |= VGPU_PTE_EXEC;

	mutex_lock(&as->lock);
	/* One guard page after each BO: overruns fault instead of aliasing. */
	ret = drm_mm_insert_node_generic(&as->mm, node,
					 (size >> PAGE_SHIFT) + 1, 1, 0, 0);
	if (ret)
		goto out;
	va = node->start << PAGE_SHIFT;
	for_each_sgtable_dma_page(sgt, &iter, 0) {
		dma_addr_t pa = sg_page_iter_dma_address(&iter);
		__le64 *pte;

		if (va >= ((node->start + node->size - 1) << PAGE_SHIFT))
			break;
		pte = vgpu_pte(as, va, true);
		if (!pte) {
			ret = -ENOMEM;
			break;
		}
		*pte = cpu_to_le64(prot | (pa & VGPU_PTE_ADDR_MASK));
		va += PAGE_SIZE;
	}
	if (ret) {
		mutex_unlock(&as->lock);
		vgpu_as_unmap(as, node);
		return ret;
	}
	as->mapped_bytes += size;
	vgpu_dbg(as->vdev, VGPU_DBG_MMU, "asid %u va 0x%llx size 0x%llx\n",
		 as->asid, node->start << PAGE_SHIFT, size);
out:
	mutex_unlock(&as->lock);
	return ret;
}

void vgpu_as_unmap(struct vgpu_as *as, struct drm_mm_node *node)
{
	u64 va, end;

	mutex_lock(&as->lock);
	if (!drm_mm_node_allocated(node))
		goto out;
	va = node->start << PAGE_SHIFT;
	end = (node->start + node->size) << PAGE_SHIFT;
	for (; va < end; va += PAGE_SIZE) {
		__le64 *pte = vgpu_pte(as, va, false);

		if (pte)
			*pte = 0;
	}
	as->mapped_bytes -= (node->size - 1) << PAGE_SHIFT;
	drm_mm_remove_node(node);
	/* Before the pages can be reused, the next launch flushes the TLB. */
	atomic_inc(&as->vdev->mmu_gen);
out:
	mutex_unlock(&as->lock);
}

int vgpu_mmu_init(struct vgpu_device *vdev)
{
	ida_init(&vdev->asid_ida);
	vdev->as_table = dma_alloc_coherent(&vdev->pdev->dev,
					    vdev->as_max * sizeof(u64),
					    &vdev->as_table_dma, GFP_KERNEL);
	return vdev->as_table ? 0 : -ENOMEM;
}

void vgpu_mmu_fini(struct vgpu_device *vdev)
{
	dma_free_coherent(&vdev->pdev->dev, vdev->as_max * sizeof(u64),
			  vdev->as_table, vdev->as_table_dma);
	ida_destroy(&vdev->asid_ida);
}

/* Point the device at the address-space table (probe and after reset). */
void vgpu_mmu_hw_init(struct vgpu_device *vdev)
{
	vgpu_write(vdev, VGPU_REG_AS_BASE_LO, lower_32_bits(vdev->as_table_dma));
	vgpu_write(vdev, VGPU_REG_AS_BASE_HI, upper_32_bits(vdev->as_table_dma));
	vgpu_write(vdev, VGPU_REG_AS_COUNT, vdev->as_max);
}
