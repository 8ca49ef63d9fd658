/* SPDX-License-Identifier: MIT */
/*
 * vGPU DRM uAPI: the ioctls of vgpu.ko (kernel/), driven by libvgpu's drm
 * backend and tests/selftests/vgpu/.
 *
 * Rules (Documentation/process/botching-up-ioctls.rst):
 *  - only __u32, __u64 and __s64; user pointers are __u64;
 *  - every struct is a multiple of 8 bytes, pinned by a size assertion here
 *    and in every layer that uses it;
 *  - every pad and reserved field must be zero, every unknown flag bit
 *    must be clear: otherwise the ioctl fails with -EINVAL;
 *  - timeouts are absolute CLOCK_MONOTONIC times in nanoseconds;
 *  - growth: new fields are only ever appended.  The DRM core zero-fills
 *    the tail of a struct that older userspace passes shorter and drops the
 *    tail of a longer output, so a zero in a new field must mean "as
 *    before".  SUBMIT also takes a chain of extensions (struct
 *    drm_vgpu_extension) for optional inputs.
 *
 * Errors common to every ioctl: -EINVAL for a non-zero pad or reserved
 * field, an unknown flag or parameter; -ENOENT for a handle that names no
 * object of the calling file; -EFAULT for a user pointer that cannot be
 * read or written; -E2BIG for an array longer than its documented limit;
 * -ENODEV once the device is gone (unbound or unplugged).
 *
 * Addresses: each open file of the device has its own GPU virtual address
 * space (VGPU_PARAM_VA_START .. + VGPU_PARAM_VA_SIZE), VM 0.  A buffer
 * object is mapped in VM 0 of every file that holds a handle to it, from
 * the moment the handle exists until it is closed, at an address the
 * driver picks; BO_CREATE and BO_INFO return it.  A file may also create
 * VMs of its own (VM_CREATE, below) whose addresses userspace manages
 * with VM_BIND, as with xe, panthor and nouveau; a queue created in such
 * a VM runs its jobs there.
 *
 * Neither an open file nor a VM holds a hardware address-space slot
 * (ASID) of the device: the kernel binds one when a job of the address
 * space is about to run and takes it back, least recently used first,
 * from an address space with nothing on the device; a user-mode queue
 * keeps its VM's ASID from USERQ_CREATE to USERQ_DESTROY.  The number of
 * open files and VMs is therefore not limited by the device's ASIDs, and
 * fdinfo's vgpu-asid (debugfs likewise) reads 0 while VM 0 has none.
 */
#ifndef VGPU_DRM_H
#define VGPU_DRM_H

/* the layout checks below, in C++ too (libvgpu's vgpu.h is C and C++) */
#if defined(__cplusplus) && !defined(_Static_assert)
#define _Static_assert static_assert
#endif

#ifdef __KERNEL__
#include <drm/drm.h>
#else
#include "drm.h" /* libdrm-dev: -I/usr/include/libdrm (pkg-config libdrm) */
#endif

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_VGPU_GET_PARAM 0x00
#define DRM_VGPU_BO_CREATE 0x01
#define DRM_VGPU_BO_MMAP_OFFSET 0x02
#define DRM_VGPU_BO_INFO 0x03
#define DRM_VGPU_SUBMIT 0x04
#define DRM_VGPU_WAIT_BO 0x05
#define DRM_VGPU_GET_JOB 0x06
#define DRM_VGPU_QUEUE_CREATE 0x07
#define DRM_VGPU_QUEUE_DESTROY 0x08
#define DRM_VGPU_QUEUE_GET_STATE 0x09
#define DRM_VGPU_VM_CREATE 0x0a
#define DRM_VGPU_VM_DESTROY 0x0b
#define DRM_VGPU_VM_BIND 0x0c
#define DRM_VGPU_USERQ_CREATE 0x0d
#define DRM_VGPU_USERQ_DESTROY 0x0e
#define DRM_VGPU_USERQ_GET_STATE 0x0f
#define DRM_VGPU_WAIT_USER_FENCE 0x10

#define DRM_IOCTL_VGPU_GET_PARAM                                               \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_GET_PARAM, struct drm_vgpu_get_param)
#define DRM_IOCTL_VGPU_BO_CREATE                                               \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_BO_CREATE, struct drm_vgpu_bo_create)
#define DRM_IOCTL_VGPU_BO_MMAP_OFFSET                                          \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_BO_MMAP_OFFSET,                   \
		 struct drm_vgpu_bo_mmap_offset)
#define DRM_IOCTL_VGPU_BO_INFO                                                 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_BO_INFO, struct drm_vgpu_bo_info)
#define DRM_IOCTL_VGPU_SUBMIT                                                  \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_SUBMIT, struct drm_vgpu_submit)
#define DRM_IOCTL_VGPU_WAIT_BO                                                 \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGPU_WAIT_BO, struct drm_vgpu_wait_bo)
#define DRM_IOCTL_VGPU_GET_JOB                                                 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_GET_JOB, struct drm_vgpu_get_job)
#define DRM_IOCTL_VGPU_QUEUE_CREATE                                            \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_QUEUE_CREATE,                     \
		 struct drm_vgpu_queue_create)
#define DRM_IOCTL_VGPU_QUEUE_DESTROY                                           \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGPU_QUEUE_DESTROY,                     \
		struct drm_vgpu_queue_destroy)
#define DRM_IOCTL_VGPU_QUEUE_GET_STATE                                         \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_QUEUE_GET_STATE,                  \
		 struct drm_vgpu_queue_get_state)
#define DRM_IOCTL_VGPU_VM_CREATE                                               \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_VM_CREATE, struct drm_vgpu_vm_create)
#define DRM_IOCTL_VGPU_VM_DESTROY                                              \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGPU_VM_DESTROY, struct drm_vgpu_vm_destroy)
#define DRM_IOCTL_VGPU_VM_BIND                                                 \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGPU_VM_BIND, struct drm_vgpu_vm_bind)
#define DRM_IOCTL_VGPU_USERQ_CREATE                                            \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_USERQ_CREATE,                     \
		 struct drm_vgpu_userq_create)
#define DRM_IOCTL_VGPU_USERQ_DESTROY                                           \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGPU_USERQ_DESTROY,                     \
		struct drm_vgpu_userq_destroy)
#define DRM_IOCTL_VGPU_USERQ_GET_STATE                                         \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_VGPU_USERQ_GET_STATE,                  \
		 struct drm_vgpu_userq_get_state)
#define DRM_IOCTL_VGPU_WAIT_USER_FENCE                                         \
	DRM_IOW(DRM_COMMAND_BASE + DRM_VGPU_WAIT_USER_FENCE,                   \
		struct drm_vgpu_wait_user_fence)

/* ---- GET_PARAM ---- */

/**
 * enum drm_vgpu_param - what DRM_IOCTL_VGPU_GET_PARAM reports
 * @VGPU_PARAM_DEVICE_ID:   PCI vendor << 16 | device (0x76900001)
 * @VGPU_PARAM_REVISION:    PCI revision
 * @VGPU_PARAM_HW_VERSION:  device interface version, major << 16 | minor
 * @VGPU_PARAM_SMS:         number of SMs
 * @VGPU_PARAM_SMEM:        shared-memory bytes a CTA may use (CAP_SMEM_CTA;
 *                          CAP_SMEM, per SM, before device interface 1.1)
 * @VGPU_PARAM_MAX_THREADS: max threads per CTA
 * @VGPU_PARAM_BARRIERS:    named barriers per CTA
 * @VGPU_PARAM_FEATURES:    VGPU_FEAT_* of uapi/vgpu_hw.h
 * @VGPU_PARAM_QUEUES:      hardware queues (device contexts) the driver
 *                          spreads queue objects over (QUEUE_CREATE)
 * @VGPU_PARAM_WARP_SIZE:   threads per warp
 * @VGPU_PARAM_MAX_PARAM:   max parameter-buffer bytes of a launch
 * @VGPU_PARAM_MAX_CODE:    max program bytes of a launch
 * @VGPU_PARAM_VA_BITS:     GPU virtual-address bits
 * @VGPU_PARAM_VA_START:    first GPU VA the driver hands out
 * @VGPU_PARAM_VA_SIZE:     bytes of GPU VA the driver hands out
 * @VGPU_PARAM_RESET_COUNT: device resets since the driver was loaded
 * @VGPU_PARAM_FILE_RESET_COUNT: resets caused by a job of the calling file
 *                          (its guilty jobs)
 * @VGPU_PARAM_JOB_TIMEOUT_MS: the driver's job timeout (module parameter)
 * @VGPU_PARAM_DRIVER_VERSION: major << 16 | minor of the driver (the DRM
 *                          driver version)
 * @VGPU_PARAM_MAX_QUEUES:  queue objects one file may hold at once
 * @VGPU_PARAM_BAN_AFTER:   faults (guilty resets) after which a queue is
 *                          banned (module parameter ban_after)
 * @VGPU_PARAM_USER_QUEUES: hardware queues kept for user-mode queues
 *                          (USERQ_CREATE), device-wide, which any number
 *                          of user queues share; 0: none
 *
 * The SMs' shape, what a runtime's occupancy arithmetic reads (driver 1.4;
 * a device interface before 1.1 has none of these registers: the vgpu
 * model's values, shared memory per SM being VGPU_PARAM_SMEM):
 * @VGPU_PARAM_MODEL:       VGPU_MODEL_* the device was made as (CAP_MODEL)
 * @VGPU_PARAM_SMEM_SM:     shared-memory bytes per SM (CAP_SMEM); a CTA
 *                          may use VGPU_PARAM_SMEM of them
 * @VGPU_PARAM_CTAS_SM:     resident CTAs per SM (CAP_CTAS_PER_SM)
 * @VGPU_PARAM_WARPS_SM:    resident warps per SM (CAP_WARPS_PER_SM)
 * @VGPU_PARAM_REGS_SM:     32-bit registers per SM (CAP_REGS_PER_SM)
 * @VGPU_PARAM_CLUSTER:     portable cluster size in CTAs (CAP_CLUSTER)
 * @VGPU_PARAM_CLUSTER_MAX: non-portable cluster size (CAP_CLUSTER_MAX)
 */
enum drm_vgpu_param {
	VGPU_PARAM_DEVICE_ID = 0,
	VGPU_PARAM_REVISION = 1,
	VGPU_PARAM_HW_VERSION = 2,
	VGPU_PARAM_SMS = 3,
	VGPU_PARAM_SMEM = 4,
	VGPU_PARAM_MAX_THREADS = 5,
	VGPU_PARAM_BARRIERS = 6,
	VGPU_PARAM_FEATURES = 7,
	VGPU_PARAM_QUEUES = 8,
	VGPU_PARAM_WARP_SIZE = 9,
	VGPU_PARAM_MAX_PARAM = 10,
	VGPU_PARAM_MAX_CODE = 11,
	VGPU_PARAM_VA_BITS = 12,
	VGPU_PARAM_VA_START = 13,
	VGPU_PARAM_VA_SIZE = 14,
	VGPU_PARAM_RESET_COUNT = 15,
	VGPU_PARAM_FILE_RESET_COUNT = 16,
	VGPU_PARAM_JOB_TIMEOUT_MS = 17,
	VGPU_PARAM_DRIVER_VERSION = 18,
	VGPU_PARAM_MAX_QUEUES = 19,
	VGPU_PARAM_BAN_AFTER = 20,
	VGPU_PARAM_USER_QUEUES = 21,
	VGPU_PARAM_MODEL = 22,
	VGPU_PARAM_SMEM_SM = 23,
	VGPU_PARAM_CTAS_SM = 24,
	VGPU_PARAM_WARPS_SM = 25,
	VGPU_PARAM_REGS_SM = 26,
	VGPU_PARAM_CLUSTER = 27,
	VGPU_PARAM_CLUSTER_MAX = 28,
	VGPU_PARAM_COUNT /* not a parameter: -EINVAL */
};

/**
 * struct drm_vgpu_get_param - DRM_IOCTL_VGPU_GET_PARAM
 * @param: (in) enum drm_vgpu_param; unknown values give -EINVAL
 * @pad:   must be 0
 * @value: (out) the value
 */
struct drm_vgpu_get_param {
	__u32 param;
	__u32 pad;
	__u64 value;
};

/* ---- Buffer objects ---- */

/* GPU mappings of the BO lack write permission: device writes MMU-fault. */
#define VGPU_BO_READ_ONLY (1u << 0)
/* GPU mappings of the BO lack execute permission: no program fetch. */
#define VGPU_BO_NO_EXEC (1u << 1)
/*
 * BO_CREATE only: allocate the pages now ("BO memory" below), so that the
 * BO is mapped at its VA from the start, listed in a SUBMIT or not (-ENOMEM
 * from BO_CREATE past a limit).  Not a property of the BO: BO_INFO does
 * not report it.
 */
#define VGPU_BO_POPULATE (1u << 2)
#define VGPU_BO_FLAGS (VGPU_BO_READ_ONLY | VGPU_BO_NO_EXEC | VGPU_BO_POPULATE)

/* Largest BO: 1 GiB (larger sizes give -E2BIG). */
#define VGPU_BO_MAX_SIZE (1ull << 30)

/*
 * BOs one open file may have created and not yet freed (module parameter
 * max_bos_per_file; more: -EMFILE).  Each holds a struct file of the
 * system's file table, so without a bound one client could take the whole
 * table (ENFILE for every other open() of the system).  A BO counts
 * against its creator until it is freed, also after its handle is closed
 * while an export or a CPU mapping keeps it.
 */
#define VGPU_MAX_BOS_PER_FILE 16384u

/**
 * struct drm_vgpu_bo_create - DRM_IOCTL_VGPU_BO_CREATE
 * @size:   (in) bytes, 1 .. VGPU_BO_MAX_SIZE (0: -EINVAL, larger: -E2BIG);
 *          rounded up to whole 4 KiB pages
 * @flags:  (in) VGPU_BO_*
 * @handle: (out) GEM handle in the calling file
 * @va:     (out) GPU virtual address of the BO in the calling file's
 *          address space (page aligned)
 *
 * BO memory.  The BO is backed by shmem pages, zero-filled, which it gets
 * only when something first needs them: a SUBMIT that lists it in
 * @bo_handles, a CPU mmap(), a dma-buf importer, or VGPU_BO_POPULATE.  Until then it costs
 * no memory and its VA range is reserved but unmapped: a job that touches
 * it without listing it takes an MMU fault (-EFAULT, the VA in its
 * exception record).  From then on the pages stay, pinned and mapped at
 * @va in every file that has a handle, until the BO is freed.
 *
 * The pages are charged to the memory cgroup of the process that created
 * the BO, whichever process makes them resident: past the cgroup's
 * memory.max, the SUBMIT or mmap() that needed them fails with -ENOMEM
 * (BO_CREATE itself allocates no pages).  The resident BOs of every vgpu
 * device together may hold at most the module parameter mem_limit_mb
 * (default: half of RAM), and those one open file created at most
 * client_mem_limit_mb (default: three quarters of mem_limit_mb, so that
 * one client cannot take it all); past either, -ENOMEM too.  Pinned BO
 * memory is in no process's RSS: the global OOM killer would not pick
 * its holder, so these limits, not the OOM killer, stop a client that
 * takes too much.  BO_CREATE fails with -EMFILE when the file has
 * VGPU_MAX_BOS_PER_FILE BOs.  The page tables that map the pages at @va
 * count against the file's pt_limit_mb (VM_BIND): past it, the SUBMIT (or
 * whatever made the pages resident) fails with -ENOSPC and the range
 * stays reserved and unmapped.  fdinfo reports each file's BOs as
 * drm-total-memory, drm-shared-memory, drm-active-memory and
 * drm-resident-memory (Documentation/gpu/drm-usage-stats.rst).
 *
 * CPU access: BO_MMAP_OFFSET then mmap() on the DRM fd (cached, coherent
 * with device writes once the job's fence has signalled), or PRIME export.
 */
struct drm_vgpu_bo_create {
	__u64 size;
	__u32 flags;
	__u32 handle;
	__u64 va;
};

/**
 * struct drm_vgpu_bo_mmap_offset - DRM_IOCTL_VGPU_BO_MMAP_OFFSET
 * @handle: (in) GEM handle
 * @pad:    must be 0
 * @offset: (out) fake offset to pass to mmap() on the DRM fd
 */
struct drm_vgpu_bo_mmap_offset {
	__u32 handle;
	__u32 pad;
	__u64 offset;
};

/**
 * struct drm_vgpu_bo_info - DRM_IOCTL_VGPU_BO_INFO
 * @handle: (in) GEM handle (for example one imported with PRIME)
 * @flags:  (out) VGPU_BO_* it was created with
 * @size:   (out) bytes
 * @va:     (out) GPU virtual address in the calling file's address space
 */
struct drm_vgpu_bo_info {
	__u32 handle;
	__u32 flags;
	__u64 size;
	__u64 va;
};

/* ---- Jobs ---- */

/**
 * struct drm_vgpu_launch - the kernel a job runs (uapi/vgpu_hw.h, struct
 *                          vgpu_cmd_launch, says what the device checks)
 * @code_va:      GPU VA of the program (16-aligned, in a BO of this file)
 * @code_size:    program bytes (multiple of 16, 16 .. VGPU_PARAM_MAX_CODE)
 * @entry:        byte offset of the first instruction
 * @grid:         CTAs in x, y, z (each >= 1)
 * @block:        threads per CTA in x, y, z (product 1 .. MAX_THREADS)
 * @cluster:      CTAs per cluster in x, y, z; 0 counts as 1
 * @smem_bytes:   shared memory per CTA (<= VGPU_PARAM_SMEM)
 * @param_va:     GPU VA of the parameter buffer
 * @param_size:   parameter bytes (0 .. VGPU_PARAM_MAX_PARAM)
 * @launch_flags: VGPU_LAUNCH_* of uapi/vgpu_hw.h
 * @seed:         scheduler seed for VGPU_LAUNCH_RANDOM_SCHED
 * @budget:       warp-instruction limit, 0 = the device's default
 *
 * The driver checks what it can cheaply (zero grid or block, sizes and
 * alignment: -EINVAL); the device checks the rest and reports it as the
 * job's exception (VGPU_EXC_BAD_LAUNCH).
 */
struct drm_vgpu_launch {
	__u64 code_va;
	__u32 code_size;
	__u32 entry;
	__u32 grid[3];
	__u32 block[3];
	__u32 cluster[3];
	__u32 smem_bytes;
	__u64 param_va;
	__u32 param_size;
	__u32 launch_flags;
	__u64 seed;
	__u64 budget;
};

/**
 * struct drm_vgpu_sync - a syncobj and a timeline point
 * @handle: syncobj handle (-ENOENT when it names none)
 * @pad:    must be 0
 * @point:  timeline point; 0 = binary syncobj (its current fence, or for
 *          an out-sync: replace its fence)
 */
struct drm_vgpu_sync {
	__u32 handle;
	__u32 pad;
	__u64 point;
};

/**
 * struct drm_vgpu_extension - header of a SUBMIT extension
 * @next: user pointer to the next extension, 0 ends the chain
 * @name: which extension: VGPU_SUBMIT_EXT_*; another name, or a name
 *        given twice, gives -EINVAL; a chain longer than
 *        VGPU_SUBMIT_MAX_EXTENSIONS gives -E2BIG
 * @pad:  must be 0
 */
struct drm_vgpu_extension {
	__u64 next;
	__u32 name;
	__u32 pad;
};

#define VGPU_SUBMIT_EXT_TIMELINE 1u
#define VGPU_SUBMIT_EXT_DEVICE_LAUNCH 2u
#define VGPU_SUBMIT_MAX_EXTENSIONS 8u

/**
 * struct drm_vgpu_ext_timeline - SUBMIT extension: where the device writes
 *                                the launch's timeline
 * @base: @name VGPU_SUBMIT_EXT_TIMELINE
 * @va:   GPU VA of the buffer: 8-aligned, in a writable BO of this file
 *        that the job lists in @bo_handles (else the job faults)
 * @size: bytes: a multiple of 8, from sizeof(struct vgpu_trace_header)
 *        to VGPU_TRACE_MAX_BYTES (uapi/vgpu_hw.h)
 *
 * Required when the launch has VGPU_LAUNCH_TIMELINE, refused (-EINVAL)
 * without it.  When the job has ended the buffer holds a struct
 * vgpu_trace_header and its records (uapi/vgpu_hw.h, "Timeline").
 */
struct drm_vgpu_ext_timeline {
	struct drm_vgpu_extension base;
	__u64 va;
	__u64 size;
};

/**
 * struct drm_vgpu_ext_device_launch - SUBMIT extension: the launch's
 *                                     device-launch area
 * @base:    @name VGPU_SUBMIT_EXT_DEVICE_LAUNCH
 * @area_va: GPU VA of the area (16-aligned, non-zero: else -EINVAL), in a
 *           writable BO the job lists; uapi/vgpu_hw.h, struct
 *           vgpu_cdp_header, says what the device does with it
 *
 * Device-side launch (CUDA dynamic parallelism): the kernel reaches the
 * area through SR_CDP_AREA_LO/HI, and the device runs the grids it
 * launches there before the job completes.  Only where the device has it
 * (GET_PARAM VGPU_PARAM_FEATURES has VGPU_FEAT_DEVICE_LAUNCH): elsewhere
 * the extension is refused with -EINVAL, as an unknown name is (and as
 * drivers before it refused it).  The area is not checked against the
 * job's BOs: the device's MMU checks every access, and a bad address is
 * an exception of that job only.
 */
struct drm_vgpu_ext_device_launch {
	struct drm_vgpu_extension base;
	__u64 area_va;
};

/*
 * A submit locks each listed BO's reservation in one acquire context.
 * lockdep counts the locks of one class nested in one context in 12 bits
 * (at most 4095), and real drivers list far fewer (a VM's private BOs
 * share one reservation): 1024 stays well inside both.
 */
#define VGPU_SUBMIT_MAX_BOS 1024u   /* more: -E2BIG */
#define VGPU_SUBMIT_MAX_SYNCS 256u  /* per direction; more: -E2BIG */

#define VGPU_SUBMIT_FLAGS 0u	/* no submit flag defined yet */

/*
 * Jobs in flight (submitted and not yet freed: queued, waiting for their
 * dependencies, running, or completed with their fence, buffer and
 * address-space references not yet released), as a ring-full GPU bounds
 * them: at most
 * VGPU_MAX_JOBS_PER_QUEUE per queue and VGPU_MAX_JOBS_PER_FILE per open
 * file (vgpu.ko's module parameters max_jobs_per_queue and
 * max_jobs_per_file change them).  A SUBMIT past either waits,
 * interruptibly, until a job of the file or queue is freed; on a file
 * opened with O_NONBLOCK it fails with -EAGAIN instead.  Each job holds
 * about a kilobyte of kernel memory (charged to the submitter's memory
 * cgroup), so one client can no longer queue jobs until the system runs
 * out of memory.
 */
#define VGPU_MAX_JOBS_PER_QUEUE 1024u
#define VGPU_MAX_JOBS_PER_FILE 4096u

/**
 * struct drm_vgpu_submit - DRM_IOCTL_VGPU_SUBMIT: queue one launch
 * @extensions:     user pointer to a chain of struct drm_vgpu_extension,
 *                  0 for none
 * @launch:         the kernel to run
 * @bo_handles:     user pointer to an array of __u32 GEM handles the job
 *                  uses: they stay resident until it completes, the job
 *                  waits for every fence on their reservation objects and
 *                  adds its own as a writer (implicit synchronisation);
 *                  for a VGPU_BO_READ_ONLY BO, which the device cannot
 *                  write, it waits only for writers and adds its fence as
 *                  a reader, so jobs sharing read-only code run
 *                  concurrently (WAIT_BO waits for readers too).
 *                  Each gets its pages here if it has none yet ("BO
 *                  memory" above; -ENOMEM past a limit).  Other BOs of
 *                  the file that have pages (listed by an earlier job,
 *                  mmapped) are reachable too, unsynchronised; one that
 *                  never had pages faults.
 * @bo_handle_count: entries in @bo_handles (0 .. VGPU_SUBMIT_MAX_BOS); a
 *                  handle listed twice counts once
 * @queue:          queue id of the calling file: 0 (the file's default
 *                  queue, normal priority, always there) or an id that
 *                  QUEUE_CREATE returned (-ENOENT otherwise; -ECANCELED
 *                  when that queue is banned)
 * @in_syncs:       user pointer to struct drm_vgpu_sync[]: the job starts
 *                  once each fence has signalled.  Fences are looked up at
 *                  submit time: a syncobj (or timeline point) that has no
 *                  fence yet gives -EINVAL (no wait-before-submit)
 * @out_syncs:      user pointer to struct drm_vgpu_sync[]: each gets the
 *                  job's completion fence (binary: replaced; timeline:
 *                  added at @point)
 * @in_sync_count:  entries in @in_syncs (0 .. VGPU_SUBMIT_MAX_SYNCS)
 * @out_sync_count: entries in @out_syncs (0 .. VGPU_SUBMIT_MAX_SYNCS)
 * @flags:          VGPU_SUBMIT_* (none yet: must be 0)
 * @pad:            must be 0
 * @job_id:         (out) id of the job in the calling file (1, 2, ...),
 *                  for DRM_IOCTL_VGPU_GET_JOB
 *
 * The job's fence signals when the launch completes; with an error when it
 * raised an exception (-EIO; -EFAULT for an MMU fault), was stopped by the
 * driver's timeout (-ETIMEDOUT, the device was reset) or could not run
 * (-ECANCELED: file closed, device unbound).
 *
 * With VGPU_MAX_JOBS_PER_QUEUE jobs of @queue or VGPU_MAX_JOBS_PER_FILE of
 * the file in flight, SUBMIT waits for one to be freed (-EAGAIN with
 * O_NONBLOCK; -EINTR/restart on a signal).
 */
struct drm_vgpu_submit {
	__u64 extensions;
	struct drm_vgpu_launch launch;
	__u64 bo_handles;
	__u32 bo_handle_count;
	__u32 queue;
	__u64 in_syncs;
	__u64 out_syncs;
	__u32 in_sync_count;
	__u32 out_sync_count;
	__u32 flags;
	__u32 pad;
	__u64 job_id;
};

/**
 * struct drm_vgpu_wait_bo - DRM_IOCTL_VGPU_WAIT_BO: wait until every job
 *                           using the BO has completed
 * @handle:     GEM handle
 * @pad:        must be 0
 * @timeout_ns: absolute CLOCK_MONOTONIC time in nanoseconds.  A time
 *              that has already passed (0, any negative value, or any
 *              time before now) does not wait: the ioctl returns at once,
 *              0 when the BO is idle and -ETIME when a job still uses it
 *              (a poll).  Otherwise it returns 0 once the BO is idle, or
 *              -ETIME when the time passes first (-EINTR on a signal:
 *              restart with the same absolute timeout).
 *
 * Idle means every fence on the BO's reservation object has signalled,
 * with or without an error: a failed job does not make WAIT_BO fail
 * (DRM_IOCTL_VGPU_GET_JOB tells how it ended).  That includes jobs that
 * did not list the BO but may reach it through a VM it is mapped in (a
 * queue made with a VM, DRM_VGPU_QUEUE_CREATE's vm_id), and the VM's
 * asynchronous binds: the BO is idle when nothing on the device can
 * still access it.
 */
struct drm_vgpu_wait_bo {
	__u32 handle;
	__u32 pad;
	__s64 timeout_ns;
};

#define VGPU_JOB_QUEUED 0u    /* submitted, not yet on the device */
#define VGPU_JOB_RUNNING 1u   /* handed to the device */
#define VGPU_JOB_DONE 2u      /* completed successfully */
#define VGPU_JOB_FAILED 3u    /* completed with an error: see @error */

/**
 * struct drm_vgpu_get_job - DRM_IOCTL_VGPU_GET_JOB: a job's status and,
 *                           when it failed on the device, its exception
 * @job_id:         (in) as SUBMIT returned it; the driver keeps the last
 *                  VGPU_JOB_HISTORY jobs of each file (older: -ENOENT)
 * @exception:      (in) user pointer to a struct vgpu_exception_record
 *                  (uapi/vgpu_hw.h) to fill, or 0
 * @exception_size: (in) bytes at @exception; the driver writes
 *                  min(this, sizeof(struct vgpu_exception_record)) bytes
 * @state:          (out) VGPU_JOB_*
 * @error:          (out) positive errno the job's fence carries, 0 if none
 * @hw_status:      (out) VGPU_ERR_* of its completion record
 * @queue:          (out) the queue id it was submitted to
 * @pad:            must be 0
 * @warp_insns:     (out) warp-instructions it executed
 * @elapsed_ns:     (out) device time it took
 * @hw_queue:       (out) the hardware queue (device context) it ran on,
 *                  or the one it was assigned to if it did not run
 * @pad2:           must be 0
 */
struct drm_vgpu_get_job {
	__u64 job_id;
	__u64 exception;
	__u32 exception_size;
	__u32 state;
	__u32 error;
	__u32 hw_status;
	__u32 queue;
	__u32 pad;
	__u64 warp_insns;
	__u64 elapsed_ns;
	__u32 hw_queue;
	__u32 pad2;
};

#define VGPU_JOB_HISTORY 256u

/* ---- Queues ---- */

/*
 * A queue is an ordered stream of jobs with a priority.  Jobs of one queue
 * run one at a time in submission order: each starts once its own
 * dependencies have signalled and the job before it has completed, its
 * memory writes visible (a job that waits on the one before it on the
 * same queue needs no sync for it: libcuda's streams rely on this); jobs
 * of different queues are independent unless their syncs or BOs order
 * them.
 * Each priority has its own hardware queues (device contexts, whose
 * VGPU_Q_PRIORITY the driver sets): a queue's jobs go to the least busy
 * hardware queue of its priority whenever the queue is idle, and the
 * device hands SMs to higher-priority launches first (uapi/vgpu_hw.h,
 * "Queue priority").  When a job depends on a job of another hardware
 * queue of this device, the driver puts it on the device at once behind a
 * SEM_ACQUIRE instead of waiting on the CPU (docs/driver.md).
 *
 * A hang or fatal fault resets only the hardware queue it happened on
 * (docs/driver.md, "Per-queue reset"): jobs of other hardware queues go
 * on untouched.  The queue of the guilty job counts a fault; after
 * VGPU_PARAM_BAN_AFTER of them it is banned: its jobs that had not
 * started end with -ECANCELED, SUBMIT to it fails with -ECANCELED, and
 * QUEUE_GET_STATE says so.  A banned queue stays until destroyed; the file
 * can create new ones.
 */
#define VGPU_QUEUE_PRIORITY_LOW 0u
#define VGPU_QUEUE_PRIORITY_NORMAL 1u
#define VGPU_QUEUE_PRIORITY_HIGH 2u	/* needs CAP_SYS_NICE */
#define VGPU_QUEUE_PRIORITY_REALTIME 3u	/* needs CAP_SYS_NICE */

#define VGPU_QUEUE_CREATE_FLAGS 0u	/* no flag defined yet */
#define VGPU_VM_DEFAULT 0u		/* the file's VM 0: implicit mappings */
#define VGPU_QUEUE_DEFAULT 0u		/* the default queue's id */
#define VGPU_MAX_QUEUES_PER_FILE 64u

/**
 * struct drm_vgpu_queue_create - DRM_IOCTL_VGPU_QUEUE_CREATE
 * @flags:    (in) must be 0
 * @priority: (in) VGPU_QUEUE_PRIORITY_*: a larger value -EINVAL; HIGH and
 *            REALTIME without CAP_SYS_NICE -EPERM (as xe and panthor)
 * @queue_id: (out) id for SUBMIT, 1 and up, unique in the file while the
 *            queue exists
 * @vm_id:    (in) the VM its jobs run in: VGPU_VM_DEFAULT (0, the file's
 *            implicit address space) or a VM of the file (VM_CREATE;
 *            -ENOENT otherwise).  The queue keeps the VM alive after
 *            VM_DESTROY.
 *
 * -EMFILE when the file already holds VGPU_MAX_QUEUES_PER_FILE queues.
 */
struct drm_vgpu_queue_create {
	__u32 flags;
	__u32 priority;
	__u32 queue_id;
	__u32 vm_id;
};

/**
 * struct drm_vgpu_queue_destroy - DRM_IOCTL_VGPU_QUEUE_DESTROY
 * @queue_id: (in) a queue QUEUE_CREATE returned (the default queue: -EINVAL;
 *            any other id the file does not hold: -ENOENT)
 * @pad:      must be 0
 *
 * The id is free at once.  Jobs of the queue already on the device run to
 * completion; jobs still waiting for their dependencies never run: their
 * fences signal with -ECANCELED (GET_JOB: VGPU_JOB_FAILED, error
 * ECANCELED).
 */
struct drm_vgpu_queue_destroy {
	__u32 queue_id;
	__u32 pad;
};

#define VGPU_QUEUE_STATE_ACTIVE 0u
#define VGPU_QUEUE_STATE_BANNED 1u

/**
 * struct drm_vgpu_queue_get_state - DRM_IOCTL_VGPU_QUEUE_GET_STATE
 * @queue_id:       (in) queue id (0: the default queue)
 * @pad:            must be 0
 * @state:          (out) VGPU_QUEUE_STATE_*
 * @priority:       (out) VGPU_QUEUE_PRIORITY_*
 * @guilty_resets:  (out) resets this queue's jobs caused (timeouts and
 *                  faults that stopped a hardware queue)
 * @innocent_resets: (out) resets of a hardware queue this queue's jobs
 *                  were caught in without causing them (they were run
 *                  again)
 * @ban_reason:     (out) positive errno of the fault that banned it
 *                  (ETIMEDOUT for a hang), 0 while not banned
 * @hw_queue:       (out) hardware queue of its latest job (its priority's
 *                  first before any)
 * @submitted:      (out) jobs submitted to it
 * @completed:      (out) of those, jobs whose fence has signalled
 */
struct drm_vgpu_queue_get_state {
	__u32 queue_id;
	__u32 pad;
	__u32 state;
	__u32 priority;
	__u32 guilty_resets;
	__u32 innocent_resets;
	__u32 ban_reason;
	__u32 hw_queue;
	__u64 submitted;
	__u64 completed;
};

/* ---- GPU virtual address spaces managed by userspace (VM_BIND) ---- */

/*
 * VMs per file: a bound on the kernel memory one file pins (each VM has a
 * root page table, a bind queue and its bookkeeping, charged to the
 * caller's memory cgroup), not a hardware limit: a VM takes a hardware
 * ASID only while a job of it runs (below).
 */
#define VGPU_MAX_VMS_PER_FILE 1024u
#define VGPU_VM_CREATE_FLAGS 0u		/* no flag defined yet */

/**
 * struct drm_vgpu_vm_create - DRM_IOCTL_VGPU_VM_CREATE: a new, empty GPU
 *                             virtual address space
 * @flags:    (in) must be 0
 * @vm_id:    (out) its id in the calling file, 1 and up
 * @va_start: (out) its first usable address (VGPU_PARAM_VA_START)
 * @va_size:  (out) bytes from @va_start that VM_BIND may map
 *
 * Nothing is mapped in it until VM_BIND says so: BO_CREATE maps only in
 * VM 0.  It takes no hardware address space (ASID, an entry of the
 * device's table: CAP_AS_MAX of uapi/vgpu_hw.h): a VM, like every open
 * file's VM 0, is bound to one only while a job of it runs, or a user-mode
 * queue of it exists; when every ASID is busy the job waits in the
 * scheduler for one, it does not fail.  So VMs are limited by memory
 * (-ENOMEM), and per file by VGPU_MAX_VMS_PER_FILE (-EMFILE).
 */
struct drm_vgpu_vm_create {
	__u32 flags;
	__u32 vm_id;
	__u64 va_start;
	__u64 va_size;
};

/**
 * struct drm_vgpu_vm_destroy - DRM_IOCTL_VGPU_VM_DESTROY
 * @vm_id: (in) a VM of the calling file (0: -EINVAL, unknown: -ENOENT)
 * @pad:   must be 0
 *
 * The id is free at once.  Queues created in the VM keep it, and every BO
 * mapped in it, until they are destroyed and their jobs have ended.
 */
struct drm_vgpu_vm_destroy {
	__u32 vm_id;
	__u32 pad;
};

#define VGPU_VM_BIND_OP_MAP 0u		/* map BO pages */
#define VGPU_VM_BIND_OP_UNMAP 1u	/* unmap whatever lies in the range */
#define VGPU_VM_BIND_OP_MAP_SPARSE 2u	/* map no memory: reads see 0 */
#define VGPU_VM_BIND_OP_MAP_USERPTR 3u	/* map the caller's own memory */

/* MAP and MAP_SPARSE: the GPU may not write (writes MMU-fault). */
#define VGPU_VM_BIND_READ_ONLY (1u << 0)
/* MAP and MAP_SPARSE: the GPU may not fetch instructions there. */
#define VGPU_VM_BIND_NO_EXEC (1u << 1)
#define VGPU_VM_BIND_OP_FLAGS (VGPU_VM_BIND_READ_ONLY | VGPU_VM_BIND_NO_EXEC)

#define VGPU_VM_BIND_MAX_OPS 1024u	/* per VM_BIND; more: -E2BIG */
/*
 * The largest MAP_SPARSE range.  A sparse range takes NULL entries of
 * 1 GiB and 2 MiB (uapi/vgpu_hw.h), so its page tables no longer grow with
 * its size; the limit stays so that one VM_BIND (VGPU_VM_BIND_MAX_OPS of
 * them) stays bounded in the time it holds the VM and in the tables it
 * reserves, and so that a program written against it keeps working.
 */
#define VGPU_VM_BIND_MAX_SPARSE (1ull << 30)
/* The largest MAP_USERPTR range (its pages are pinned). */
#define VGPU_VM_BIND_MAX_USERPTR (1ull << 30)

/**
 * struct drm_vgpu_vm_bind_op - one operation of a VM_BIND
 * @op:        VGPU_VM_BIND_OP_*
 * @flags:     VGPU_VM_BIND_* (the MAP ops; UNMAP: must be 0)
 * @handle:    MAP: the GEM handle of the BO (-ENOENT if none); else 0
 * @pad:       must be 0
 * @bo_offset: MAP: byte offset in the BO of the page mapped at @va;
 *             MAP_USERPTR: the address, in the calling process, of the
 *             memory mapped at @va; else 0
 * @va:        first GPU virtual address
 * @range:     bytes
 *
 * @va, @range and @bo_offset are multiples of 4 KiB, @range is not 0,
 * [@va, @va + @range) lies in [va_start, va_start + va_size) of the VM
 * and, for MAP, [@bo_offset, @bo_offset + @range) in the BO: -EINVAL
 * otherwise.  MAP_SPARSE ranges are at most VGPU_VM_BIND_MAX_SPARSE
 * bytes (-E2BIG).
 *
 * MAP and MAP_SPARSE replace whatever was mapped in the range (existing
 * mappings are split, as drm_gpuvm does: the parts outside the range stay
 * as they were).  UNMAP unmaps every page of the range that is mapped, and
 * may split mappings too; an unmapped range is no error.  A BO mapped
 * with MAP is writable only if it was not created VGPU_BO_READ_ONLY and
 * the op has no VGPU_VM_BIND_READ_ONLY; it gets its pages here if it had
 * none (-ENOMEM past a limit, "BO memory") and keeps them, referenced by
 * the VM, until its last mapping goes, even after its handles are closed.
 * A MAP_SPARSE range maps no memory (device NULL pages,
 * uapi/vgpu_hw.h): the GPU reads zeros there, its writes are dropped, and
 * nothing faults.  Its aligned 1 GiB and 2 MiB parts take one page-table
 * entry each, so 1024 ops of 1 GiB cost a few KiB of tables; a later MAP
 * or UNMAP of part of such a region splits it.  A job that touches an address the VM does not map
 * takes an MMU fault with that address in its exception record (-EFAULT).
 *
 * MAP_USERPTR maps the calling process's own memory (anonymous or
 * shared memory it can write, or only read with VGPU_VM_BIND_READ_ONLY),
 * as xe's and amdgpu's userptr: the pages are pinned (FOLL_LONGTERM) and
 * counted in the process's locked memory (RLIMIT_MEMLOCK, unless
 * CAP_IPC_LOCK: -ENOMEM past it) until their last mapping goes.  The GPU
 * sees the pages that were there at the bind: CPU and GPU stay coherent
 * while the process keeps the memory mapped (fork copies pinned pages for
 * the child, so the parent keeps them); after an munmap the GPU still
 * reaches the old pages, never other memory.  -EFAULT when a page of the
 * range cannot be pinned (not mapped, or read-only without
 * VGPU_VM_BIND_READ_ONLY); ranges of at most VGPU_VM_BIND_MAX_USERPTR
 * bytes (-E2BIG).
 */
struct drm_vgpu_vm_bind_op {
	__u32 op;
	__u32 flags;
	__u32 handle;
	__u32 pad;
	__u64 bo_offset;
	__u64 va;
	__u64 range;
};

#define VGPU_VM_BIND_FLAGS 0u	/* no flag defined yet */

/**
 * struct drm_vgpu_vm_bind - DRM_IOCTL_VGPU_VM_BIND: change a VM's mappings
 * @vm_id:          a VM of the calling file (0, the implicit VM: -EINVAL;
 *                  unknown: -ENOENT)
 * @flags:          VGPU_VM_BIND_FLAGS (none yet: must be 0)
 * @ops:            user pointer to struct drm_vgpu_vm_bind_op[]
 * @op_count:       entries in @ops (1 .. VGPU_VM_BIND_MAX_OPS)
 * @in_sync_count:  entries in @in_syncs (0 .. VGPU_SUBMIT_MAX_SYNCS)
 * @in_syncs:       user pointer to struct drm_vgpu_sync[] (as SUBMIT's)
 * @out_syncs:      user pointer to struct drm_vgpu_sync[]
 * @out_sync_count: entries in @out_syncs (0 .. VGPU_SUBMIT_MAX_SYNCS)
 * @pad:            must be 0
 *
 * The ops apply in array order, all of them or none: every op is checked,
 * and every BO's pages and every page table obtained, before the first
 * changes anything.
 *
 * Page tables: each VM (and each file's implicit VM 0) may hold at most
 * the module parameter pt_limit_mb of page tables (default 64 MiB; 0: no
 * limit), counting those a bind reserves before it runs: a MAP reserves
 * every table its range could lack (4 KiB per 2 MiB of range, plus 8 KiB
 * per 1 GiB and per 512 GiB), MAP_SPARSE and UNMAP only those at their
 * unaligned ends (and MAP_SPARSE 8 KiB per 512 GiB), and what a bind does
 * not use is given back when it completes.  A bind that would pass the
 * limit fails with -ENOSPC before it changes anything: the VM stays as
 * it was and keeps working.  fdinfo's vgpu-pt-bytes shows the file's
 * page-table bytes (all its VMs), debugfs vms each VM's.
 *
 * Without syncs the bind is synchronous: it returns once the mappings are
 * in place.  An op that removes or replaces a mapping first waits for
 * every job already submitted to a queue of the VM (an interrupted wait
 * changes nothing: -EINTR or -ERESTARTSYS), so no job sees a mapping
 * change under it.
 *
 * With syncs the bind is asynchronous, on the VM's bind queue: it runs in
 * order after the VM's earlier binds, once each in-sync's fence has
 * signalled, and signals the out-syncs when done.  It does not wait for
 * jobs: order it after them with their out-syncs.  Either way a BO
 * unmapped while a job of the VM runs stays allocated until that job
 * ends, so a job never reaches freed memory.
 *
 * Binds are jobs in flight too (see VGPU_MAX_JOBS_PER_QUEUE): each counts
 * in its file's VGPU_MAX_JOBS_PER_FILE, and a VM's bind queue holds at
 * most VGPU_MAX_JOBS_PER_QUEUE of them.  A VM_BIND past either waits for
 * one to be freed, or fails with -EAGAIN on an O_NONBLOCK file.
 */
struct drm_vgpu_vm_bind {
	__u32 vm_id;
	__u32 flags;
	__u64 ops;
	__u32 op_count;
	__u32 in_sync_count;
	__u64 in_syncs;
	__u64 out_syncs;
	__u32 out_sync_count;
	__u32 pad;
};

/*
 * ---- User-mode queues (USERQ_*) and user fences (WAIT_USER_FENCE) ----
 *
 * A user-mode queue is a hardware queue of its own, run in user mode
 * (uapi/vgpu_hw.h "User-mode queues") in one VM of the file: the process
 * maps its command ring (read/write), its completion ring (read-only) and
 * its doorbell page with mmap() at the offsets USERQ_CREATE returns,
 * writes commands (struct vgpu_cmd_*) into the ring and rings the
 * doorbell with a 32-bit store of the new tail at VGPU_DB_TAIL: no ioctl
 * per launch.  The kernel reads none of it; the device runs every command
 * in the queue's VM only and refuses privileged ones, and a bad command,
 * fault or garbage doorbell stops that queue alone (USERQ_GET_STATE).
 *
 * Completion is a user fence: a SEM_RELEASE (or FENCE) that writes a
 * 64-bit value at a VA of the VM, usually memory the process also maps
 * (a BO's mmap, or its own memory bound with MAP_USERPTR), with
 * VGPU_CMD_F_IRQ when a WAIT_USER_FENCE should wake at once.  Such a
 * queue is long-running: it makes no dma_fence, so no other driver and
 * no kernel path ever waits on it (docs/driver.md "User-mode queues").
 *
 * Oversubscription: a file may hold VGPU_MAX_USERQ_PER_FILE user queues
 * however few hardware queues the device keeps for them
 * (VGPU_PARAM_USER_QUEUES, "slots"): the driver maps queues in and out of
 * the slots, by priority and by a timeslice (module parameter
 * userq_timeslice_ms, default 10), so that no client can hold the
 * hardware.  A queue mapped out keeps its rings and its progress exactly
 * (no command lost or run twice); its doorbell page then shows the state
 * it had when mapped out, and a doorbell written there is taken when it
 * is mapped in again.  Only a command that never ends (a launch that
 * does not finish; a waiting SEM_ACQUIRE gives way) keeps its slot, until
 * the hang timeout below.  Completion records name the hardware queue
 * that ran the command.
 *
 * Hangs: a queue that has work (head != tail, or a command executing) and
 * completes nothing for the module parameter userq_timeout_ms (0, the
 * default: the job timeout timeout_ms) of time mapped in (waiting for a
 * slot does not count) is stopped by the driver
 * (VGPU_USERQ_STATE_HUNG); a device reset stops
 * every user-mode queue (VGPU_USERQ_STATE_LOST).  A stopped queue stays
 * stopped: destroy it and create another.
 *
 * Memory unmapped from the queue's VM (VM_BIND UNMAP, BO close) while the
 * queue exists stays allocated until the queue is destroyed, as the
 * device may still hold translations of it (the TLBs are flushed at once,
 * so later commands see the new mappings).
 */
#define VGPU_USERQ_CREATE_FLAGS 0u	/* no flag defined yet */
#define VGPU_USERQ_ENTRIES 256u		/* command slots of a user-mode ring */
#define VGPU_MAX_USERQ_PER_FILE 32u	/* user queues one file may hold: -EMFILE */
#define VGPU_USERQ_MAX_PER_USER 256u	/* of one user, every file: -EDQUOT */
#define VGPU_USERQ_MAX_DEVICE 8192u	/* user queues of all files: -ENOSPC */
#define VGPU_USERQ_HW_NONE 0xffffffffu	/* @hw_queue of a queue created mapped out */

/**
 * struct drm_vgpu_userq_create - DRM_IOCTL_VGPU_USERQ_CREATE
 * @flags:       (in) must be 0
 * @vm_id:       (in) VGPU_VM_DEFAULT (the file's VM 0, implicit BO
 *               mappings) or a VM of VM_CREATE (-ENOENT otherwise); the
 *               queue keeps it alive
 * @priority:    (in) VGPU_QUEUE_PRIORITY_*, as QUEUE_CREATE (above NORMAL
 *               without CAP_SYS_NICE: -EPERM)
 * @queue_id:    (out) id, 1 and up, in the file's user-queue ids
 * @entries:     (out) ring slots (VGPU_USERQ_ENTRIES), each
 *               VGPU_CMD_BYTES; completion record i (struct
 *               vgpu_completion) belongs to slot i
 * @hw_queue:    (out) the hardware queue it was mapped into at once
 *               (a free slot; completion records name the one that ran
 *               each command, which may change as it is mapped out and
 *               in), VGPU_USERQ_HW_NONE when none was free
 * @ring_offset: (out) mmap() offset of the ring, entries * VGPU_CMD_BYTES
 *               bytes, PROT_READ | PROT_WRITE
 * @cpl_offset:  (out) mmap() offset of the completion ring, entries *
 *               sizeof(struct vgpu_completion) bytes rounded up to a page,
 *               PROT_READ only (PROT_WRITE: -EACCES)
 * @doorbell_offset: (out) mmap() offset of the doorbell page (4096 bytes,
 *               uncached), PROT_READ | PROT_WRITE
 *
 * -ENODEV when the device keeps no hardware queue for user mode
 * (VGPU_PARAM_USER_QUEUES 0), -EMFILE past VGPU_MAX_USERQ_PER_FILE of
 * the file, -EDQUOT past VGPU_USERQ_MAX_PER_USER of the calling user
 * (its effective uid, over every file and process; module parameter
 * max_userq_per_user), -ENOSPC past VGPU_USERQ_MAX_DEVICE of every file;
 * never -EBUSY: queues beyond the hardware's wait for a slot.  Each
 * queue holds about 120 KiB of kernel memory (its rings and records),
 * charged to the creator's memory cgroup: the per-user bound keeps one
 * user, however many files it opens, from taking the device's queues or
 * that much memory from the others.  A queue's VM
 * holds a hardware ASID while the queue is in a slot (QCTRL names it), so
 * user queues hold at most as many ASIDs as there are slots; a queue that
 * can get none waits for its slot longer.  The mappings belong to the file that created
 * the queue: another file's mmap() of them gets -EACCES, a fork()ed child
 * does not inherit them, and they stop working (SIGBUS) once the queue is
 * destroyed or the device is gone.
 */
struct drm_vgpu_userq_create {
	__u32 flags;
	__u32 vm_id;
	__u32 priority;
	__u32 queue_id;
	__u32 entries;
	__u32 hw_queue;
	__u64 ring_offset;
	__u64 cpl_offset;
	__u64 doorbell_offset;
};

/**
 * struct drm_vgpu_userq_destroy - DRM_IOCTL_VGPU_USERQ_DESTROY
 * @queue_id: (in) a user queue of the file (-ENOENT otherwise)
 * @pad:      must be 0
 *
 * Stops the queue (a command executing is aborted) and returns only once
 * the device has let go of it; its mappings are gone.  Closing the file
 * does the same for every user queue it holds.
 */
struct drm_vgpu_userq_destroy {
	__u32 queue_id;
	__u32 pad;
};

#define VGPU_USERQ_STATE_ACTIVE 0u /* running or idle */
#define VGPU_USERQ_STATE_ERROR 1u  /* the device stopped it: @hw_error */
#define VGPU_USERQ_STATE_HUNG 2u   /* no progress for the timeout: stopped */
#define VGPU_USERQ_STATE_LOST 3u   /* a device reset stopped it */

/**
 * struct drm_vgpu_userq_get_state - DRM_IOCTL_VGPU_USERQ_GET_STATE
 * @queue_id:    (in) a user queue of the file
 * @state:       (out) VGPU_USERQ_STATE_*
 * @hw_error:    (out) VGPU_ERR_* that stopped it (STATE_ERROR; ABORTED for
 *               HUNG), 0 while active
 * @error_index: (out) ring slot of the command that stopped it
 * @completed:   (out) commands the device completed on it
 * @head:        (out) next slot the device takes
 * @tail:        (out) tail of the last doorbell
 */
struct drm_vgpu_userq_get_state {
	__u32 queue_id;
	__u32 state;
	__u32 hw_error;
	__u32 error_index;
	__u64 completed;
	__u32 head;
	__u32 tail;
};

#define VGPU_UFENCE_OP_EQ 0u	/* (*addr & mask) == (value & mask) */
#define VGPU_UFENCE_OP_NEQ 1u
#define VGPU_UFENCE_OP_GT 2u	/* unsigned */
#define VGPU_UFENCE_OP_GTE 3u
#define VGPU_UFENCE_OP_LT 4u
#define VGPU_UFENCE_OP_LTE 5u
#define VGPU_UFENCE_OP_MAX VGPU_UFENCE_OP_LTE
#define VGPU_UFENCE_FLAGS 0u	/* no flag defined yet */

/* Whether @v satisfies @op against @value under @mask (op <= OP_MAX). */
static inline int vgpu_ufence_satisfied(__u64 v, __u32 op, __u64 value,
					__u64 mask)
{
	__u64 x = v & mask, y = value & mask;

	switch (op) {
	case VGPU_UFENCE_OP_EQ:
		return x == y;
	case VGPU_UFENCE_OP_NEQ:
		return x != y;
	case VGPU_UFENCE_OP_GT:
		return x > y;
	case VGPU_UFENCE_OP_GTE:
		return x >= y;
	case VGPU_UFENCE_OP_LT:
		return x < y;
	default:
		return x <= y;
	}
}

/**
 * struct drm_vgpu_wait_user_fence - DRM_IOCTL_VGPU_WAIT_USER_FENCE
 * @addr:       (in) the calling process's address of a 64-bit value,
 *              8-aligned (-EINVAL), readable (-EFAULT)
 * @value:      (in) compared with it under @mask by @op
 * @mask:       (in) bits that take part (~0: all)
 * @timeout_ns: (in) absolute CLOCK_MONOTONIC deadline; one in the past
 *              tests once; INT64_MAX waits forever
 * @op:         (in) VGPU_UFENCE_OP_*
 * @flags:      (in) must be 0
 * @queue_id:   (in) a user queue of the file whose stop ends the wait
 *              with -EIO (-ENOENT if it is none), or 0
 * @pad:        must be 0
 *
 * Returns 0 once the condition holds (it is checked first), -ETIME at the
 * deadline, -EIO when @queue_id stopped (any state but ACTIVE),
 * -ERESTARTSYS on a signal (restarted with the same deadline).  The
 * value is read again at every user-queue interrupt and at least every
 * millisecond (a scheduler tick), so a release without VGPU_CMD_F_IRQ,
 * or a CPU write, is seen too, only later.
 */
struct drm_vgpu_wait_user_fence {
	__u64 addr;
	__u64 value;
	__u64 mask;
	__s64 timeout_ns;
	__u32 op;
	__u32 flags;
	__u32 queue_id;
	__u32 pad;
};

#ifdef __KERNEL__
#define VGPU_DRM_ASSERT(c, m) static_assert(c, m)
#else
#define VGPU_DRM_ASSERT(c, m) _Static_assert(c, m)
#endif
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_get_param) == 16, "get_param layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_bo_create) == 24, "bo_create layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_bo_mmap_offset) == 16, "mmap_offset layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_bo_info) == 24, "bo_info layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_launch) == 88, "launch layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_sync) == 16, "sync layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_extension) == 16, "extension layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_submit) == 152, "submit layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_wait_bo) == 16, "wait_bo layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_get_job) == 64, "get_job layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_queue_create) == 16, "queue_create layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_queue_destroy) == 8, "queue_destroy layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_queue_get_state) == 48,
		"queue_get_state layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_vm_create) == 24, "vm_create layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_vm_destroy) == 8, "vm_destroy layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_vm_bind_op) == 40, "vm_bind_op layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_vm_bind) == 48, "vm_bind layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_userq_create) == 48, "userq_create layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_userq_destroy) == 8, "userq_destroy layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_userq_get_state) == 32,
		"userq_get_state layout");
VGPU_DRM_ASSERT(sizeof(struct drm_vgpu_wait_user_fence) == 48,
		"wait_user_fence layout");

#if defined(__cplusplus)
}
#endif

#endif /* VGPU_DRM_H */
