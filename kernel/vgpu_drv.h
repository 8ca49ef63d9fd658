/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgpu.ko: shared driver state.  One file per concern:
 *   vgpu_drv.c      PCI probe/remove, DRM driver, GET_PARAM, fdinfo
 *   vgpu_gem.c      shmem GEM objects, per-file mappings, BO ioctls, PRIME
 *   vgpu_mmu.c      GPU address spaces in the device's format
 *   vgpu_asid.c     the address-space table, ASIDs, jobs holding an AS
 *   vgpu_vm.c       VMs managed by userspace: VM_CREATE/DESTROY/BIND on
 *                   drm_gpuvm, the bind queues
 *   vgpu_userptr.c  pinned process memory for VM_BIND's MAP_USERPTR
 *   vgpu_queue.c    queue objects: QUEUE_CREATE/DESTROY/GET_STATE, priorities
 *   vgpu_userq.c    user-mode queues (USERQ_*), their mmap(), WAIT_USER_FENCE
 *   vgpu_job.c      drm_sched backend: the ring, run/free, completions
 *   vgpu_submit.c   SUBMIT (BO list, syncs, device-side waits), GET_JOB
 *   vgpu_reset.c    job timeout: per-queue and device reset, devcoredump
 *   vgpu_job.h      struct vgpu_job, shared by those three
 *   vgpu_irq.c      MSI-X/INTx, completion records -> fences
 *   vgpu_debugfs.c  debugfs files
 */
#ifndef VGPU_DRV_H
#define VGPU_DRV_H

#include <linux/pci.h>
#include <linux/io.h>
#include <linux/kref.h>
#include <linux/llist.h>
#include <linux/workqueue.h>
#include <linux/idr.h>
#include <linux/mutex.h>
#include <linux/fault-inject.h>
#include <drm/drm_device.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_mm.h>
#include <drm/gpu_scheduler.h>

#include "vgpu_hw.h"
#include "vgpu_drm.h"

#define VGPU_DRIVER_MAJOR 1
#define VGPU_DRIVER_MINOR 4

/* kernel-mode (scheduler) queues at most; user-mode slots: VGPU_QUEUES_MAX */
#define VGPU_MAX_QUEUES 16
#define VGPU_RING_ENTRIES 256u	/* command slots per queue */
#define VGPU_JOBS_IN_FLIGHT 64u	/* per queue, of jobs without semaphore waits */
#define VGPU_VA_START (1ull << 20)
#define VGPU_VA_SIZE ((1ull << VGPU_VA_BITS) - VGPU_VA_START)
#define VGPU_EXC_LOG 16

/* debug mask bits (module parameter debug=) */
#define VGPU_DBG_CORE BIT(0)
#define VGPU_DBG_MMU BIT(1)
#define VGPU_DBG_JOB BIT(2)
#define VGPU_DBG_IRQ BIT(3)

extern unsigned int vgpu_debug;
extern unsigned int vgpu_timeout_ms;

/* debugfs fail_vgpu (vgpu_drv.c): fail one of the driver's allocations */
#ifdef CONFIG_FAULT_INJECTION
extern struct fault_attr vgpu_fail;
static inline bool vgpu_should_fail(void)
{
	return should_fail(&vgpu_fail, 1);
}
#else
static inline bool vgpu_should_fail(void)
{
	return false;
}
#endif
extern unsigned int vgpu_ban_after;

/* Logging helpers: prefix the function, gated by the debug mask. */
#define vgpu_dbg(vdev, cat, fmt, ...)                                          \
	do {                                                                   \
		if (vgpu_debug & (cat))                                        \
			drm_info(&(vdev)->drm, "%s: " fmt, __func__,           \
				 ##__VA_ARGS__);                               \
	} while (0)
#define vgpu_err(vdev, fmt, ...)                                               \
	drm_err(&(vdev)->drm, "%s: " fmt, __func__, ##__VA_ARGS__)
#define vgpu_warn(vdev, fmt, ...)                                              \
	drm_warn(&(vdev)->drm, "%s: " fmt, __func__, ##__VA_ARGS__)

struct vgpu_device;
struct vgpu_vm;
struct vgpu_job;

/*
 * A BO reference (or, @obj NULL, memory of @free's) that waits on
 * vgpu_as.deferred until no job of the address space runs
 * (vgpu_as_defer()); then @free frees its container.
 */
struct vgpu_deferred {
	struct list_head link;
	struct drm_gem_object *obj;
	void (*free)(struct vgpu_deferred *d);
};

/**
 * struct vgpu_pt - one 4 KiB page-table page and its software shadow
 * @cpu:   the table as the device reads it (coherent DMA memory)
 * @dma:   its bus address (guest physical: no IOMMU in front of the device)
 * @child: next-level tables (NULL for leaves), allocated on demand
 * @used:  valid entries: a table (not the root) that has none is freed
 * @vdev:  the device of its DMA memory
 * @acct:  its address space's &vgpu_as.pt_bytes, which it counts in
 *         (NULL for the root)
 * @dfr:   a freed table while a job may still walk it; its link also
 *         holds it in a &vgpu_pt_pool
 *
 * An entry of a table above the leaves is empty, a table (@child set), or
 * at levels 1 and 2 a NULL entry (VGPU_PTE_NULL, @child NULL: null pages
 * over the whole 2 MiB or 1 GiB, uapi/vgpu_hw.h).
 */
struct vgpu_pt {
	__le64 *cpu;
	dma_addr_t dma;
	struct vgpu_pt **child;
	u32 used;
	struct vgpu_device *vdev;
	atomic64_t *acct;
	struct vgpu_deferred dfr;
};

/* What vgpu_pt_pool_fill_how() reserves for a range. */
enum vgpu_pt_fill {
	VGPU_PT_FILL_PAGES,	/* a mapping of pages: every table */
	VGPU_PT_FILL_NULL,	/* a sparse range: NULL entries at 1 GiB / 2 MiB */
	VGPU_PT_FILL_EDGES,	/* an unmap: splits at its two ends */
};

/* Tables reserved for a bind (vgpu_pt_pool_fill()), by level (0: leaves). */
struct vgpu_pt_pool {
	struct list_head free[VGPU_PT_LEVELS - 1];
};

/**
 * struct vgpu_as - a GPU address space (each open file's VM 0, each VM)
 * @refcount: the file and every job of it hold one
 * @asid:     its hardware ASID while bound, 0 when it has none (ASIDs
 *            come and go: vgpu_asid.c "ASIDs"); written under
 *            vgpu_device.asid_lock, stable while @active or @pins is not 0
 * @lru:      on vgpu_device.asid_lru while bound (least recently used first)
 * @pins:     user-mode queues that need @asid kept (vgpu_as_pin()), under
 *            vgpu_device.asid_lock
 * @lock:     protects @mm and the page tables
 */
struct vgpu_as {
	struct vgpu_device *vdev;
	struct kref refcount;
	u32 asid;
	u32 pins;
	struct list_head lru;
	struct mutex lock;
	struct drm_mm mm;
	struct vgpu_pt root;
	u64 mapped_bytes;
	/*
	 * Stale TLB entries (vgpu_mmu.c): @active counts this AS's jobs on
	 * the device; @deferred holds the BOs unmapped while one ran, until
	 * none does.  @deferred_lock protects @deferred and orders it with
	 * the last decrement of @active.
	 */
	atomic_t active;
	spinlock_t deferred_lock;
	struct list_head deferred;
	u32 ndeferred;
	u64 deferred_total;
	u64 tables_freed;	/* page tables freed since it was created */
	/*
	 * Bytes of its page tables below the root, those a bind reserved
	 * included (4 KiB a leaf table, 8 KiB one above: the array of
	 * children); at most pt_limit_mb (vgpu_pt_new()).
	 */
	atomic64_t pt_bytes;
	/* user-mode queues running in it: unmaps flush the TLBs at once */
	atomic_t userqs;
};

struct vgpu_job_result {
	u64 id;
	u32 state;
	u32 error;
	u32 hw_status;
	u32 queue;	/* queue id */
	u32 hw_queue;
	u64 warp_insns;
	u64 elapsed_ns;
	struct vgpu_exception_record exc;
};

/**
 * struct vgpu_xqueue - a queue object (QUEUE_CREATE; id 0 is the file's
 * default queue)
 * @refcount: the file's table and every job of the queue hold one
 * @vf:       the file (not counted: jobs hold the file themselves)
 * @entity:   its drm_sched entity, at the priority's drm_sched priority,
 *            over the hardware queues of its priority
 * @banned:   1 once banned; the entity's guilty flag (drm_sched cancels
 *            the jobs it pops afterwards)
 * @link:     on vf->xqueues while @entity is still on the schedulers'
 *            run queues (under vdev->files_lock: queue destroy, file
 *            close and device removal each tear it down, whichever comes
 *            first)
 */
struct vgpu_xqueue {
	struct kref refcount;
	struct vgpu_file *vf;
	struct vgpu_vm *vm;	/* its VM (a reference), NULL: the file's VM 0 */
	u32 id;
	u32 priority;
	struct drm_sched_entity entity;
	atomic_t banned;
	atomic_t guilty_resets;
	atomic_t innocent_resets;
	u32 ban_reason;
	u32 hw_queue;
	u32 last_reset;		/* vdev->queue_resets seen by innocent counting */
	atomic64_t submitted;
	atomic64_t completed;
	atomic_t jobs;		/* not yet freed: vgpu_jobs_reserve() bounds it */
	struct list_head link;
	struct mutex lock;	/* SUBMIT's entity use against destroy */
	bool dead;		/* destroyed (under @lock) */
};

/**
 * struct vgpu_file - per open file
 * @hist_lock: protects @hist
 * @queues:    queue objects by id (its lock guards lookups against
 *             destroy); @nqueues counts them
 */
struct vgpu_file {
	struct vgpu_device *vdev;
	struct kref refcount;
	struct vgpu_as *as;
	struct xarray queues;
	u32 next_queue_id;
	atomic_t nqueues;
	struct list_head xqueues;	/* under vdev->files_lock */
	atomic64_t next_job_id;
	/*
	 * Jobs and binds not yet freed, and where SUBMIT and VM_BIND wait for
	 * one to go (vgpu_jobs_reserve())
	 */
	atomic_t jobs;
	wait_queue_head_t jobs_wq;
	atomic_t reset_count;
	atomic64_t engine_ns;
	u64 client_id;		/* drm_file.client_id: fdinfo's drm-client-id */
	/* On vdev->files, under vdev->files_lock. */
	struct list_head link;
	spinlock_t hist_lock;
	/* VGPU_JOB_HISTORY entries, from the first submit (vgpu_hist_alloc) */
	struct vgpu_job_result *hist;
	/* user-mode queues by id, and their count (under vdev->uqs.lock) */
	struct xarray userqs;
	u32 next_userq_id;
	u32 nuserqs;
	/*
	 * BOs this file created that still exist, and the bytes of those
	 * resident: charged to it for as long as they exist, whoever holds
	 * them then (each holds a reference to the file: an export or a CPU
	 * mapping outlives its handle); bounded by max_bos_per_file and
	 * client_mem_limit_mb (vgpu_gem.c)
	 */
	atomic_t bos;
	atomic64_t resident;
	/* VMs of VM_CREATE by id; each on @vm_list under vdev->files_lock */
	struct xarray vms;
	u32 next_vm_id;
	atomic_t nvms;
	struct list_head vm_list;
};

/**
 * struct vgpu_queue - a hardware queue and its scheduler
 * @lock:       protects the ring tail, @emitted, @flushed_gen and @inflight
 * @fence_lock: the lock of this queue's hardware fences
 */
struct vgpu_queue {
	struct vgpu_device *vdev;
	u32 idx;
	struct drm_gpu_scheduler sched;
	spinlock_t lock;
	spinlock_t fence_lock;
	u32 priority;		/* VGPU_QPRIO_* it serves */
	/*
	 * Its semaphore (vdev->sems[idx]): SEM_RELEASE writes each job's
	 * @fence seqno there after the job's launch, in ring order; jobs of
	 * other queues SEM_ACQUIRE it.  @sem_done (under @lock): the largest
	 * seqno of a job that ended, for resets to write.
	 */
	u64 sem_done;
	/* context-save buffer: vdev->nthreads slots of vdev->csb_slot bytes */
	void *csb;
	dma_addr_t csb_dma;
	u8 *ring;
	dma_addr_t ring_dma;
	struct vgpu_completion *cpl;
	dma_addr_t cpl_dma;
	u32 tail;
	u64 emitted;
	u32 flushed_gen;
	struct list_head inflight;
	u64 fence_context;
	u64 fence_seqno;
	u64 jobs_done;
	u64 jobs_failed;
	/* jobs armed on it whose finished fence has not signalled (the pick) */
	atomic_t load;
};

/**
 * struct vgpu_userq - a user-mode queue (vgpu_userq.c)
 * @ring, @cpl:  its command and completion rings (the queue's, not a
 *               slot's: they stay while it is mapped out)
 * @shadow:      the page its doorbell mapping shows while it is mapped out
 *               (VGPU_DB_* layout; the process's tail lands in it)
 * @gidx:        its mmap() window, device-wide; @serial names the mappings
 *               made for it (a later queue in the window has another)
 * @live:        in vdev->uqs.all: not yet detached (destroy, device gone)
 * @slot:        the hardware slot it is mapped into, -1: mapped out
 * @hwq:         that slot's hardware queue (while @slot >= 0)
 * @draining:    HOLD written: being mapped out at its next command boundary
 * @since:       ktime_get_ns() when mapped in (its timeslice runs from
 *               there), or mapped out (its turn for a slot)
 * @state: VGPU_USERQ_STATE_*; @hw_error, @error_index: why it stopped
 * @completed, @head, @tail: as last read (exact while it is mapped out)
 * @wd_completed, @wd_last, @wd_stall: the watchdog's view: the count it
 *               last saw, when, and for how long (ns of time mapped in
 *               with work) the queue has completed nothing
 * All under vdev->uqs.lock.
 */
struct vgpu_userq {
	struct vgpu_file *vf;
	kuid_t uid;		/* its creator's euid, counted in uqs.users while @live */
	struct vgpu_vm *vm;	/* a reference, NULL: the file's VM 0 */
	struct vgpu_as *as;	/* a reference */
	u32 id;
	u32 gidx;
	u64 serial;
	void *ring;
	dma_addr_t ring_dma;
	struct vgpu_completion *cpl;
	dma_addr_t cpl_dma;
	u32 *shadow;
	bool live;
	bool draining;
	bool skip;		/* vgpu_userq_schedule()'s, for one pass */
	int slot;
	u32 hwq;
	u32 priority;
	u32 state;
	u32 hw_error;
	u32 error_index;
	u64 completed;
	u32 head, tail;
	u64 since;
	u64 wd_completed;
	u64 wd_last;
	u64 wd_stall;
	bool pinned;		/* in a slot, holds a pin of @as (vgpu_as_try_pin()) */
};

/* A hardware queue kept for user mode, and the queue mapped into it. */
struct vgpu_uq_slot {
	u32 hwq;
	struct vgpu_userq *owner;	/* under &vgpu_userqs.lock */
	atomic_t stopped;		/* the interrupt handler saw it stopped */
};

/**
 * struct vgpu_userqs - the device's user-mode queues
 * @n:     hardware queues kept for them (slots), after vdev->nqueues
 * @lock:  guards the slots, @all and every user queue's state
 * @all:   every live user queue by its mmap() window (@gidx)
 * @serial: the last &vgpu_userq.serial given
 * @wq:    WAIT_USER_FENCE sleeps here; @seq counts the wake-ups
 * @live:  user queues that exist (the scheduler runs while > 0)
 * @map_outs: queues mapped out of a slot so far (debugfs `queues`)
 */
struct vgpu_userqs {
	u32 n;
	struct vgpu_uq_slot slot[VGPU_QUEUES_MAX];
	struct mutex lock;
	struct xarray all;
	u64 serial;
	wait_queue_head_t wq;
	atomic_t seq;
	atomic_t live;
	struct delayed_work wdog;
	/*
	 * a device reset's bookkeeping, out of the reset (a fence-signalling
	 * section may not take @lock, which page faults and allocations are
	 * under): @resetting is raised from the reset until @reset_work has
	 * marked the queues LOST; nothing is mapped in meanwhile
	 */
	struct work_struct reset_work;
	atomic_t resetting;
	resource_size_t db_phys;
	unsigned long map_outs;
	struct xarray users;	/* live queues per user: uid -> xa_mk_value(n), under @lock */
};

struct vgpu_exc_log {
	u32 queue;	/* queue id */
	u32 hw_queue;
	u32 hw_status;
	u64 client_id;
	u64 job_id;
	struct vgpu_exception_record exc;
};

/**
 * struct vgpu_device - the driver's device
 * @reset_lock: serialises device resets with each other and with
 *              probe/remove's hardware setup
 * @exc_lock:   protects @exc_log and @exc_head
 * @files_lock: protects @files
 */
struct vgpu_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *mmio;

	u32 hw_version, sms, smem, max_threads, barriers, features;
	/* the SMs' shape (CAP_MODEL .. CAP_CLUSTER_MAX; the vgpu model's before 1.1) */
	u32 model, smem_sm, ctas_sm, warps_sm, regs_sm, cluster, cluster_max;
	u32 nqueues, warp_size, max_param, va_bits, max_code, as_max, ring_max;
	u32 nthreads;		/* SM threads: context-save slots per queue */
	u32 csb_slot;		/* bytes per slot, 0: no preemption */
	u32 csb_slot_hw;	/* CSB_SLOT as last written (param preempt) */

	__le64 *as_table;
	dma_addr_t as_table_dma;
	/*
	 * ASIDs 1..as_max - 1, bound to address spaces on demand
	 * (vgpu_asid.c "ASIDs").  @asid_lock protects @asid_owner,
	 * @asid_lru, @asid_pinned, @asid_wait and each AS's asid, lru and
	 * pins; it is also @asid_wait's fence lock.
	 */
	spinlock_t asid_lock;
	struct vgpu_as **asid_owner;	/* [as_max], NULL: free */
	struct list_head asid_lru;	/* bound ASes, least recently used first */
	u32 asid_pinned;		/* ASes with pins */
	struct dma_fence *asid_wait;	/* signalled when an ASID may be free */
	u64 asid_wait_context, asid_wait_seqno;
	u64 asid_binds, asid_steals, asid_waits;
	atomic_t mmu_gen;	/* bumped when a mapping goes away */

	struct vgpu_queue queues[VGPU_MAX_QUEUES];
	__le64 *sems;		/* one semaphore per queue (coherent) */
	dma_addr_t sems_dma;
	/* hardware queues serving each priority (drm_sched_entity sched_list) */
	struct drm_gpu_scheduler *band[VGPU_QPRIO_COUNT][VGPU_MAX_QUEUES];
	u32 band_n[VGPU_QPRIO_COUNT];
	spinlock_t pick_lock;	/* a queue's pick of a hardware queue and its arm */
	atomic_t queue_resets;	/* per-queue resets so far */
	bool sched_live;	/* the queues' schedulers are initialised */
	struct workqueue_struct *reset_wq;
	/*
	 * What free_job leaves for later (vgpu_release_defer()): the
	 * references a job or a bind holds on BOs, its address space, VM,
	 * queue and file, whose last put may take reservation locks or
	 * allocate, which nothing under @reset_lock may do.
	 */
	struct llist_head release_list;
	struct work_struct release_work;
	/*
	 * Releases deferred and not yet run, and the most at once since
	 * load (debugfs queues).  Each job or bind counts in its file's jobs
	 * in flight until its release has run, so they are bounded by the
	 * open files times max_jobs_per_file.
	 */
	atomic_t releases_pending;
	atomic_t releases_peak;
	bool release_hold;	/* debugfs release_hold (vgpu_release_set_hold) */
	struct mutex reset_lock;
	atomic_t reset_count;
	bool gone;
	/*
	 * debugfs irq_hold (fault injection): the interrupt handler leaves
	 * completions unprocessed until cleared or the next device reset.
	 */
	bool irq_hold;
	atomic_t lost_irqs;	/* jobs a timeout found completed */
	atomic_t device_resets;	/* whole-device resets (reset_count: all) */

	int nvec;
	/*
	 * the Linux IRQ of each vector, read once at init: pci_irq_vector()
	 * takes the MSI domain's mutex, which a reset (a fence-signalling
	 * section) may not
	 */
	int irq[VGPU_MSIX_VECTORS_MAX];
	bool msix;
	/*
	 * Completion vectors (vgpu_irq.c): @cpu_vec[cpu] is the MSI-X vector
	 * aimed at that CPU, named by the launches its tasks submit; NULL
	 * when the device has no vector beyond the two.
	 */
	u8 *cpu_vec;
	/*
	 * IRQ_MASK: COMPLETION and ERROR while @irq_on, and VGPU_IRQ_USER
	 * while @irq_user_waiters (WAIT_USER_FENCE callers about to sleep)
	 * is non-zero; under @irq_lock.
	 */
	spinlock_t irq_lock;
	bool irq_on;
	u32 irq_user_waiters;

	spinlock_t exc_lock;
	struct vgpu_exc_log exc_log[VGPU_EXC_LOG];
	u32 exc_head;

	struct mutex files_lock;
	struct list_head files;

	/* a timeout's preallocated record and devcoredump (vgpu_reset.c) */
	struct vgpu_coredump *coredump;

	/*
	 * bytes of this device's resident BOs (vgpu_gem.c); all devices'
	 * together are at most vgpu_mem_limit()
	 */
	atomic64_t resident;

	struct vgpu_userqs uqs;

	/* runs every VM's binds (vgpu_vm.c), one entity per VM */
	struct drm_gpu_scheduler bind_sched;
	bool bind_live;
};

#define to_vgpu(d) container_of(d, struct vgpu_device, drm)

static inline u32 vgpu_read(struct vgpu_device *vdev, u32 reg)
{
	return readl(vdev->mmio + reg);
}

static inline void vgpu_write(struct vgpu_device *vdev, u32 reg, u32 val)
{
	writel(val, vdev->mmio + reg);
}

static inline u32 vgpu_qread(struct vgpu_queue *q, u32 reg)
{
	return vgpu_read(q->vdev, VGPU_REG_QUEUE(q->idx) + reg);
}

static inline void vgpu_qwrite(struct vgpu_queue *q, u32 reg, u32 val)
{
	vgpu_write(q->vdev, VGPU_REG_QUEUE(q->idx) + reg, val);
}

/* vgpu_drv.c */
void vgpu_file_put(struct vgpu_file *vf);

/* vgpu_queue.c */
void vgpu_entity_fini(struct vgpu_device *vdev, struct drm_sched_entity *e,
		      bool flush);

/* vgpu_gem.c */
/**
 * struct vgpu_bo - a buffer object (vgpu_gem.c)
 * @flags:    VGPU_BO_*
 * @lock:     protects @mappings and each one's @filled
 * @mappings: one per address space that holds a handle
 * @memcg:    the creator's memory cgroup: the pages are charged there,
 *            whoever makes them resident (NULL for an import)
 * @owner:    the file that created it (a reference; NULL for an
 *            import), which its count and resident bytes are charged to
 * @state:    VGPU_BO_RESIDENT once the pages exist (counted in
 *            vgpu_device.resident, the module's total and @owner's
 *            until the BO is freed)
 * @mapped:   every mapping points at the pages: set (release, under
 *            @lock) once vgpu_bo_make_resident() has filled them all;
 *            cleared only when a handle opens in the window before the
 *            pages came (a BO with pages is filled when a handle opens), so
 *            that SUBMIT's check of each listed BO is one load (acquire)
 * @gpuva_lock: protects the GEM object's list of drm_gpuvm_bo (its
 *            VM_BIND mappings, vgpu_vm.c; drm_gem_gpuva_set_lock())
 */
struct vgpu_bo {
	struct drm_gem_shmem_object base;
	u32 flags;
	struct mutex lock;
	struct mutex gpuva_lock;
	struct list_head mappings;
	struct mem_cgroup *memcg;
	struct vgpu_file *owner;
	unsigned long state;
	bool mapped;
};

#define VGPU_BO_RESIDENT 0

struct vgpu_mapping {
	struct list_head link;
	struct vgpu_deferred dfr;
	struct vgpu_as *as;
	struct drm_mm_node node;
	bool filled;			/* the PTEs point at the pages */
};

#define to_vgpu_bo(o) container_of(to_drm_gem_shmem_obj(o), struct vgpu_bo, base)
struct drm_gem_object *vgpu_gem_create_object(struct drm_device *dev,
					      size_t size);
u64 vgpu_bo_va(struct vgpu_bo *bo, struct vgpu_as *as);
int vgpu_bo_make_resident(struct vgpu_bo *bo);
int vgpu_bo_pages(struct vgpu_bo *bo, struct sg_table **sgt);
extern unsigned int vgpu_mem_limit_mb;
u64 vgpu_mem_limit(void);
u64 vgpu_client_mem_limit(void);
s64 vgpu_mem_total(void);
int vgpu_ioctl_bo_create(struct drm_device *dev, void *data,
			 struct drm_file *file);
int vgpu_ioctl_bo_mmap_offset(struct drm_device *dev, void *data,
			      struct drm_file *file);
int vgpu_ioctl_bo_info(struct drm_device *dev, void *data,
		       struct drm_file *file);
int vgpu_ioctl_wait_bo(struct drm_device *dev, void *data,
		       struct drm_file *file);
long vgpu_jiffies_until(s64 deadline_ns);

/* vgpu_mmu.c (page tables) and vgpu_asid.c (the table, ASIDs) */
int vgpu_mmu_init(struct vgpu_device *vdev);
void vgpu_mmu_fini(struct vgpu_device *vdev);
void vgpu_mmu_hw_init(struct vgpu_device *vdev);
void vgpu_tlb_flush_now(struct vgpu_device *vdev);
struct vgpu_as *vgpu_as_create(struct vgpu_device *vdev);
void vgpu_as_put(struct vgpu_as *as);
static inline struct vgpu_as *vgpu_as_get(struct vgpu_as *as)
{
	kref_get(&as->refcount);
	return as;
}
int vgpu_as_reserve(struct vgpu_as *as, struct drm_mm_node *node, u64 size);
int vgpu_as_fill(struct vgpu_as *as, struct drm_mm_node *node,
		 struct sg_table *sgt, u32 bo_flags);
int vgpu_as_map(struct vgpu_as *as, struct drm_mm_node *node,
		struct sg_table *sgt, u64 size, u32 bo_flags);
void vgpu_as_unmap(struct vgpu_as *as, struct drm_mm_node *node);
bool vgpu_as_defer(struct vgpu_as *as, struct drm_gem_object *obj,
		   struct vgpu_deferred *d);
void vgpu_pt_pool_init(struct vgpu_pt_pool *pool);
int vgpu_pt_pool_fill(struct vgpu_as *as, struct vgpu_pt_pool *pool, u64 va,
		      u64 size);
int vgpu_pt_pool_fill_how(struct vgpu_as *as, struct vgpu_pt_pool *pool,
			  u64 va, u64 size, enum vgpu_pt_fill how);
u64 vgpu_as_pt_bytes(struct vgpu_as *as);
void vgpu_pt_pool_fini(struct vgpu_pt_pool *pool);
void vgpu_as_write_range(struct vgpu_as *as, u64 va, u64 size,
			 struct sg_table *sgt, u64 offset, u32 flags,
			 struct vgpu_pt_pool *pool);
void vgpu_as_clear_range(struct vgpu_as *as, u64 va, u64 size,
			 struct vgpu_pt_pool *pool);
void vgpu_as_job_begin(struct vgpu_as *as);
void vgpu_as_job_end(struct vgpu_as *as);
struct dma_fence *vgpu_as_bind_job(struct vgpu_as *as);
int vgpu_as_pin(struct vgpu_as *as);
int vgpu_as_try_pin(struct vgpu_as *as);
void vgpu_as_unpin(struct vgpu_as *as);
void vgpu_asid_kick_locked(struct vgpu_device *vdev);
int vgpu_as_bind_locked(struct vgpu_as *as); /* and KUnit */

/**
 * struct vgpu_userptr - pinned pages of a process (MAP_USERPTR)
 * @refcount: each mapping of them and the bind that pins them
 * @dev:      the device they are DMA-mapped for
 * @mm:       the process's mm (mmgrab: its locked_vm is unaccounted)
 * @uaddr:    their address in the process
 * @npages:   pages
 * @pages:    the pinned pages
 * @sgt:      the pages, DMA-mapped
 * @write:    pinned for writing (dirtied when unpinned)
 */
struct vgpu_userptr {
	struct kref refcount;
	struct device *dev;
	struct mm_struct *mm;
	u64 uaddr;
	unsigned long npages;
	struct page **pages;
	struct sg_table sgt;
	bool write;
};

struct vgpu_userptr *vgpu_userptr_pin(struct device *dev, u64 uaddr,
				     u64 size, bool write);
void vgpu_userptr_put(struct vgpu_userptr *up);

/* vgpu_vm.c */
int vgpu_bind_sched_init(struct vgpu_device *vdev);
void vgpu_bind_sched_fini(struct vgpu_device *vdev);
void vgpu_file_vms_init(struct vgpu_file *vf);
void vgpu_file_vms_fini(struct vgpu_file *vf, bool flush);
void vgpu_file_vms_free(struct vgpu_file *vf);
u64 vgpu_file_vms_pt_bytes(struct vgpu_file *vf);
struct vgpu_vm *vgpu_vm_lookup(struct vgpu_file *vf, u32 id);
void vgpu_vm_put(struct vgpu_vm *vm);
struct vgpu_as *vgpu_vm_as(struct vgpu_vm *vm);
struct drm_exec;
int vgpu_vm_lock_objects(struct vgpu_vm *vm, struct drm_exec *exec);
struct drm_gem_object *vgpu_vm_resv_obj(struct vgpu_vm *vm);
int vgpu_debugfs_vms_show(struct seq_file *m, struct vgpu_device *vdev);
int vgpu_ioctl_vm_create(struct drm_device *dev, void *data,
			 struct drm_file *file);
int vgpu_ioctl_vm_destroy(struct drm_device *dev, void *data,
			  struct drm_file *file);
int vgpu_ioctl_vm_bind(struct drm_device *dev, void *data,
		       struct drm_file *file);

/* vgpu_userq.c */
u32 vgpu_userq_split(struct vgpu_device *vdev, u32 total);
int vgpu_userq_init(struct vgpu_device *vdev);
void vgpu_userq_fini(struct vgpu_device *vdev);
void vgpu_userq_irq(struct vgpu_device *vdev, u32 status);
void vgpu_userq_reset_begin(struct vgpu_device *vdev);
void vgpu_userq_device_reset(struct vgpu_device *vdev);
void vgpu_userq_watchdog(struct work_struct *work);
void vgpu_file_userqs_fini(struct vgpu_file *vf);
void vgpu_userq_debugfs(struct vgpu_device *vdev, struct seq_file *m);
int vgpu_userq_mmap(struct file *filp, struct vm_area_struct *vma);
int vgpu_ioctl_userq_create(struct drm_device *dev, void *data,
			    struct drm_file *file);
int vgpu_ioctl_userq_destroy(struct drm_device *dev, void *data,
			     struct drm_file *file);
int vgpu_ioctl_userq_get_state(struct drm_device *dev, void *data,
			       struct drm_file *file);
int vgpu_userq_check(struct vgpu_device *vdev, struct vgpu_file *vf, u32 id,
		     bool full);
int vgpu_ioctl_wait_user_fence(struct drm_device *dev, void *data,
			       struct drm_file *file);

/* vgpu_queue.c */
void vgpu_bands_init(struct vgpu_device *vdev);
int vgpu_xqueue_new(struct vgpu_file *vf, u32 priority, struct vgpu_vm *vm,
		    u32 *id);
struct vgpu_xqueue *vgpu_xqueue_lookup(struct vgpu_file *vf, u32 id);
void vgpu_xqueue_put(struct vgpu_xqueue *xq);
void vgpu_xqueue_arm(struct vgpu_xqueue *xq, struct vgpu_job *job);
int vgpu_file_sched_init(struct vgpu_device *vdev, struct vgpu_file *vf);
void vgpu_file_sched_fini(struct vgpu_file *vf, bool flush);
void vgpu_file_queues_free(struct vgpu_file *vf);
void vgpu_files_sched_fini(struct vgpu_device *vdev);
int vgpu_ioctl_queue_create(struct drm_device *dev, void *data,
			    struct drm_file *file);
int vgpu_ioctl_queue_destroy(struct drm_device *dev, void *data,
			     struct drm_file *file);
int vgpu_ioctl_queue_get_state(struct drm_device *dev, void *data,
			       struct drm_file *file);

/* vgpu_job.c */
int vgpu_sched_init(struct vgpu_device *vdev);
void vgpu_sched_fini(struct vgpu_device *vdev);

/**
 * struct vgpu_release - the heavy half of a free_job, run later
 * @node: on &vgpu_device.release_list
 * @fn:   frees the object it is embedded in
 */
struct vgpu_release {
	struct llist_node node;
	void (*fn)(struct vgpu_release *r);
};
void vgpu_release_init(struct vgpu_device *vdev);
void vgpu_release_set_hold(struct vgpu_device *vdev, bool hold);
void vgpu_release_defer(struct vgpu_device *vdev, struct vgpu_release *r,
			void (*fn)(struct vgpu_release *r));
void vgpu_release_flush(struct vgpu_device *vdev);
void vgpu_queue_hw_init(struct vgpu_queue *q);
void vgpu_queue_process(struct vgpu_queue *q, bool stops);
void vgpu_jobs_fail_all(struct vgpu_device *vdev, int error);

/* vgpu_submit.c */
int vgpu_ioctl_submit(struct drm_device *dev, void *data,
		      struct drm_file *file);
/* a syncobj (or timeline point) that is to get a job's or a bind's fence */
struct vgpu_out_sync {
	struct drm_syncobj *syncobj;
	struct dma_fence_chain *chain;
	u64 point;
};
int vgpu_in_syncs(struct drm_sched_job *sj, struct drm_file *file, u64 ptr,
		  u32 count);
int vgpu_out_syncs_get(struct drm_file *file, u64 ptr, u32 count,
		       struct vgpu_out_sync **out);
void vgpu_out_syncs_signal(struct vgpu_out_sync *out, u32 count,
			   struct dma_fence *fence);
void vgpu_out_syncs_put(struct vgpu_out_sync *out, u32 count);
int vgpu_ioctl_get_job(struct drm_device *dev, void *data,
		       struct drm_file *file);

/* vgpu_irq.c */
u32 vgpu_irq_cpu_vector(struct vgpu_device *vdev, u32 cpu);
int vgpu_irq_init(struct vgpu_device *vdev);
void vgpu_irq_fini(struct vgpu_device *vdev);
void vgpu_irq_disable(struct vgpu_device *vdev);
void vgpu_irq_enable(struct vgpu_device *vdev);
bool vgpu_irq_user_arm(struct vgpu_device *vdev);
void vgpu_irq_user_disarm(struct vgpu_device *vdev);

/* vgpu_debugfs.c */
void vgpu_debugfs_init(struct drm_minor *minor);

#endif
