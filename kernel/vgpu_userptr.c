// SPDX-License-Identifier: GPL-2.0
/*
 * userptr: a process's own memory for VM_BIND's MAP_USERPTR (vgpu_vm.c),
 * pinned as xe's and amdgpu's pinned userptr is: pin_user_pages_fast()
 * with FOLL_LONGTERM (FOLL_WRITE unless read-only), counted in the
 * process's locked_vm so that RLIMIT_MEMLOCK holds, DMA-mapped once, and
 * unpinned (dirtied if writable) with the last reference.  While pinned
 * the pages cannot move: the GPU sees what the process had mapped at the
 * bind, never memory reused after an munmap.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "vgpu_drv.h"

static void vgpu_userptr_release(struct kref *kref)
{
	struct vgpu_userptr *up = container_of(kref, struct vgpu_userptr,
					       refcount);

	dma_unmap_sgtable(up->dev, &up->sgt, DMA_BIDIRECTIONAL, 0);
	sg_free_table(&up->sgt);
	unpin_user_pages_dirty_lock(up->pages, up->npages, up->write);
	account_locked_vm(up->mm, up->npages, false);
	mmdrop(up->mm);
	kvfree(up->pages);
	kfree(up);
}

void vgpu_userptr_put(struct vgpu_userptr *up)
{
	if (up)
		kref_put(&up->refcount, vgpu_userptr_release);
}

/*
 * Pin @size bytes of the calling process at @uaddr (page aligned) and map
 * them for @dev's DMA.  -EFAULT when a page cannot be pinned for the
 * access, -ENOMEM past RLIMIT_MEMLOCK or without memory.
 */
struct vgpu_userptr *vgpu_userptr_pin(struct device *dev, u64 uaddr,
					     u64 size, bool write)
{
	unsigned long n = size >> PAGE_SHIFT, pinned = 0;
	struct vgpu_userptr *up;
	int ret;

	up = vgpu_should_fail() ? NULL : kzalloc(sizeof(*up), GFP_KERNEL_ACCOUNT);
	if (!up)
		return ERR_PTR(-ENOMEM);
	up->pages = kvmalloc_array(n, sizeof(*up->pages), GFP_KERNEL_ACCOUNT);
	if (!up->pages) {
		kfree(up);
		return ERR_PTR(-ENOMEM);
	}
	ret = account_locked_vm(current->mm, n, true);
	if (ret)
		goto err_free;
	up->mm = current->mm;
	mmgrab(up->mm);
	while (pinned < n) {
		ret = pin_user_pages_fast(uaddr + (pinned << PAGE_SHIFT),
					  min(n - pinned, 512ul),
					  FOLL_LONGTERM | (write ? FOLL_WRITE : 0),
					  up->pages + pinned);
		if (ret <= 0) {
			ret = ret ?: -EFAULT;
			goto err_unpin;
		}
		pinned += ret;
	}
	ret = sg_alloc_table_from_pages(&up->sgt, up->pages, n, 0, size,
					GFP_KERNEL);
	if (ret)
		goto err_unpin;
	ret = dma_map_sgtable(dev, &up->sgt, DMA_BIDIRECTIONAL, 0);
	if (ret) {
		sg_free_table(&up->sgt);
		goto err_unpin;
	}
	kref_init(&up->refcount);
	up->dev = dev;
	up->uaddr = uaddr;
	up->npages = n;
	up->write = write;
	return up;

err_unpin:
	unpin_user_pages(up->pages, pinned);
	account_locked_vm(up->mm, n, false);
	mmdrop(up->mm);
err_free:
	kvfree(up->pages);
	kfree(up);
	/* a page that is not there, or not writable: the caller's fault */
	return ERR_PTR(ret == -ENOMEM ? -ENOMEM : -EFAULT);
}
