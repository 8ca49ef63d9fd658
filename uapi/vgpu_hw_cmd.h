/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: command statuses, the command ring's commands,
 * semaphores and completion records.  Part of vgpu_hw.h, which includes
 * it: include that.
 */
#ifndef VGPU_HW_CMD_H
#define VGPU_HW_CMD_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_cmd.h"
#endif

/*
 * ---- Status of a command, error of a queue ----
 * A command that ends with any status but VGPU_ERR_NONE stops its queue.
 */
#define VGPU_ERR_NONE 0u	   /* success */
#define VGPU_ERR_EXCEPTION 1u	   /* the launch raised an exception: record in exc */
#define VGPU_ERR_BAD_COMMAND 2u	   /* unknown opcode, reserved field or flag set */
#define VGPU_ERR_BAD_LAUNCH 3u	   /* launch parameters invalid (exc.code BAD_LAUNCH) */
#define VGPU_ERR_MMU_FAULT 4u	   /* code, parameter or fence access faulted (exc) */
#define VGPU_ERR_TIMEOUT 5u	   /* watchdog: wall-clock limit (exc.code ABORTED) */
#define VGPU_ERR_ABORTED 6u	   /* queue disabled while the command executed */
#define VGPU_ERR_BAD_RING 7u	   /* ring configuration invalid or ring not in RAM */
#define VGPU_ERR_CPL_WRITE 8u	   /* the completion record could not be written */
#define VGPU_ERR_BAD_REGISTER 9u   /* bad register offset or access size (ERR_LAST only) */
#define VGPU_ERR_BAD_DOORBELL 10u  /* user-mode queue: doorbell beyond the ring */

/*
 * ---- Commands: 128-byte slots in the command ring ----
 * Every command starts with struct vgpu_cmd_header.  Fields marked
 * "must be 0" make the command VGPU_ERR_BAD_COMMAND when set.
 */
#define VGPU_CMD_BYTES 128u

#define VGPU_CMD_NOP 0u
#define VGPU_CMD_LAUNCH 1u
#define VGPU_CMD_FENCE 2u
#define VGPU_CMD_TLB_INVALIDATE 3u
#define VGPU_CMD_SEM_ACQUIRE 4u
#define VGPU_CMD_SEM_RELEASE 5u

#define VGPU_CMD_F_IRQ (1u << 0)	/* raise VGPU_IRQ_COMPLETION when complete */
#define VGPU_CMD_F_FENCE_PHYS (1u << 1) /* fence: address is guest physical */
#define VGPU_CMD_F_MASK (VGPU_CMD_F_IRQ | VGPU_CMD_F_FENCE_PHYS)
/*
 * With VGPU_CMD_F_IRQ, any command: the MSI-X vector of its completion
 * interrupt (VGPU_FEAT_IRQ_VECTORS; vgpu_hw_regs.h "Completion vectors").
 * 0 = VGPU_MSIX_VEC_COMPLETION.  Checked, then left out of the flags each
 * command checks against its own VGPU_CMD_F_*.
 */
#define VGPU_CMD_F_VEC_SHIFT 8
#define VGPU_CMD_F_VEC_MASK (0xffu << VGPU_CMD_F_VEC_SHIFT)
#define VGPU_CMD_F_VEC(v) (((__u32)(v) << VGPU_CMD_F_VEC_SHIFT) & VGPU_CMD_F_VEC_MASK)
#define VGPU_CMD_VEC(flags) (((flags) & VGPU_CMD_F_VEC_MASK) >> VGPU_CMD_F_VEC_SHIFT)

/*
 * Whether the vector field of command flags @flags is one a device with
 * @table MSI-X entries takes: none, or with VGPU_CMD_F_IRQ an entry below
 * @table other than VGPU_MSIX_VEC_ERROR (vgpu_hw_regs.h).
 */
static inline int vgpu_cmd_vec_ok(__u32 flags, __u32 table)
{
	__u32 v = VGPU_CMD_VEC(flags);

	if (!(flags & VGPU_CMD_F_VEC_MASK))
		return 1;
	return (flags & VGPU_CMD_F_IRQ) && v < table && v != VGPU_MSIX_VEC_ERROR;
}

/**
 * struct vgpu_cmd_header - first 8 bytes of every command
 * @opcode: VGPU_CMD_*
 * @flags:  VGPU_CMD_F_*
 */
struct vgpu_cmd_header {
	__u32 opcode;
	__u32 flags;
};

/**
 * struct vgpu_cmd_launch - run a kernel
 * @hdr:         opcode VGPU_CMD_LAUNCH
 * @code_va:     GPU VA of the program (16-aligned); fetched with execute
 *               permission
 * @code_size:   program bytes (multiple of 16, 16..CAP_MAX_CODE)
 * @entry:       byte offset of the first instruction in the program
 * @grid:        CTAs in x, y, z (each >= 1)
 * @block:       threads per CTA in x, y, z (product 1..1024)
 * @cluster:     CTAs per cluster in x, y, z; 0 counts as 1.  Each must
 *               divide the grid's; at most 16 CTAs per cluster.  Only 1x1x1
 *               when CAP_FEATURES lacks VGPU_FEAT_CLUSTERS
 * @smem_bytes:  shared memory per CTA: the program's static .shared bytes
 *               plus its dynamic bytes (<= CAP_SMEM)
 * @param_va:    GPU VA of the parameter buffer (read permission)
 * @param_size:  parameter bytes (0..CAP_MAX_PARAM); @param_va unused if 0
 * @asid:        address space (index into the address-space table)
 * @launch_flags: VGPU_LAUNCH_* (VGPU_LAUNCH_FLAGS_MASK)
 * @pad:         must be 0
 * @seed:        scheduler seed (VGPU_LAUNCH_RANDOM_SCHED)
 * @budget:      warp-instruction limit, 0 = VGPU_DEFAULT_BUDGET
 * @trace_va:    with VGPU_LAUNCH_TIMELINE: GPU VA of the timeline buffer
 *               (8-aligned, write permission), else must be 0
 * @trace_size:  its bytes (at least the header; a multiple of 8), else 0
 * @pad2:        must be 0
 * @cdp_area:    GPU VA of the launch's device-launch area (struct
 *               vgpu_cdp_header, "Device-side launch"): 16-aligned, 0 =
 *               none; must be 0 unless CAP_FEATURES has
 *               VGPU_FEAT_DEVICE_LAUNCH (else VGPU_ERR_BAD_COMMAND, as a
 *               misaligned one).  Its accesses go through the launch's
 *               address space: a bad one is an exception of this launch.
 *               The device runs the grids the launch's kernels launched
 *               there before the command completes; launches on the same
 *               area (and address space) run their children one tree at
 *               a time, whatever their queues
 *
 * The timeline is written when the launch ends, whether it completed, raised
 * an exception or was aborted by disabling the queue (not after a device
 * reset: that voids the command); a launch refused before it started
 * writes none.  A fault writing it fails the command with
 * VGPU_ERR_MMU_FAULT unless the launch had already failed.
 */
struct vgpu_cmd_launch {
	struct vgpu_cmd_header hdr;
	__u64 code_va;
	__u32 code_size;
	__u32 entry;
	__u32 grid[3];
	__u32 block[3];
	__u32 cluster[3];
	__u32 smem_bytes;
	__u64 param_va;
	__u32 param_size;
	__u32 asid;
	__u32 launch_flags;
	__u32 pad;
	__u64 seed;
	__u64 budget;
	__u64 trace_va;
	__u32 trace_size;
	__u32 pad2;
	__u64 cdp_area;
};

/*
 * VGPU_CMD_LAUNCH_SHARED(X): the fields struct vgpu_cmd_launch takes over
 * from a launch as the uAPI states it (struct drm_vgpu_launch in
 * vgpu_drm.h, the same names), listed once for each place that converts
 * between the two or from little-endian: X(field, bits), an array element
 * at a time.  Expanded by the driver's ring (kernel/vgpu_job.c), libvgpu's
 * user queues and the sim's decoder of them (libvgpu/userq.c,
 * sim_userq.c) and the device (qemu-device/vgpu-queue.c).
 */
#define VGPU_CMD_LAUNCH_SHARED(X)					\
	do {								\
		X(code_va, 64); X(code_size, 32); X(entry, 32);		\
		X(grid[0], 32); X(grid[1], 32); X(grid[2], 32);		\
		X(block[0], 32); X(block[1], 32); X(block[2], 32);	\
		X(cluster[0], 32); X(cluster[1], 32);			\
		X(cluster[2], 32);					\
		X(smem_bytes, 32); X(param_va, 64); X(param_size, 32);	\
		X(launch_flags, 32); X(seed, 64); X(budget, 64);	\
	} while (0)

/**
 * struct vgpu_cmd_fence - write a 64-bit value once everything before it
 *                         in the queue has completed
 * @hdr:      opcode VGPU_CMD_FENCE; VGPU_CMD_F_IRQ raises an interrupt,
 *            VGPU_CMD_F_FENCE_PHYS makes @addr guest physical
 * @addr:     8-aligned GPU VA in address space @asid (write permission),
 *            or guest physical address
 * @value:    the value written
 * @asid:     address space of @addr (ignored with VGPU_CMD_F_FENCE_PHYS)
 * @pad:      must be 0
 * @reserved: must be 0
 */
struct vgpu_cmd_fence {
	struct vgpu_cmd_header hdr;
	__u64 addr;
	__u64 value;
	__u32 asid;
	__u32 pad;
	__u64 reserved[12];
};

#define VGPU_TLBI_ALL_AS 0xffffffffu

/**
 * struct vgpu_cmd_tlb_invalidate - drop cached translations
 * @hdr:      opcode VGPU_CMD_TLB_INVALIDATE
 * @asid:     address space, or VGPU_TLBI_ALL_AS
 * @pad:      must be 0
 * @va:       first byte of the range (page-aligned)
 * @size:     bytes of the range; 0 = the whole address space
 * @reserved: must be 0
 *
 * The device may drop more than asked; commands after it in the queue
 * see the page tables as they are in memory when it completes.
 */
struct vgpu_cmd_tlb_invalidate {
	struct vgpu_cmd_header hdr;
	__u32 asid;
	__u32 pad;
	__u64 va;
	__u64 size;
	__u64 reserved[12];
};

/*
 * ---- Semaphores: queues waiting on memory, without the CPU ----
 * A semaphore is a 64-bit little-endian word, 8-aligned, at a GPU VA of
 * address space @asid (read permission for an acquire, write for a
 * release) or, with VGPU_CMD_F_FENCE_PHYS, at a guest physical address.
 */
#define VGPU_SEM_OP_GEQ 0u /* acquire once value >= payload (unsigned) */
#define VGPU_SEM_OP_EQ 1u  /* acquire once value == payload */
#define VGPU_SEM_OP_MAX VGPU_SEM_OP_EQ

/**
 * struct vgpu_cmd_sem - SEM_ACQUIRE or SEM_RELEASE
 * @hdr:        opcode VGPU_CMD_SEM_ACQUIRE or VGPU_CMD_SEM_RELEASE;
 *              VGPU_CMD_F_IRQ raises VGPU_IRQ_COMPLETION when the command
 *              completes, VGPU_CMD_F_FENCE_PHYS makes @addr guest physical
 * @addr:       the semaphore (8-aligned)
 * @payload:    acquire: the value compared; release: the value written
 * @asid:       address space of @addr (ignored with VGPU_CMD_F_FENCE_PHYS)
 * @op:         acquire: VGPU_SEM_OP_*; release: must be 0
 * @timeout_ns: acquire: host nanoseconds after which a wait that is still
 *              unsatisfied fails the command (status VGPU_ERR_EXCEPTION,
 *              exc.code VGPU_EXC_SEM_TIMEOUT, exc.addr = @addr, exc.info =
 *              the value last read (low, high) and @payload (low, high));
 *              0 waits until satisfied, the queue is disabled (status
 *              VGPU_ERR_ABORTED) or the device is reset.  Release: must be 0
 * @reserved:   must be 0
 *
 * SEM_ACQUIRE completes when the semaphore satisfies @op against
 * @payload; the queue takes nothing after it until then.  The device
 * reads the semaphore again whenever a command of any queue completes
 * and at least every VGPU_SEM_POLL_US while it waits (it does not see CPU
 * writes).  SEM_RELEASE writes @payload once every earlier command of the
 * queue has completed (commands complete in order) and their writes are
 * visible, then wakes every waiting acquire.  An access that faults
 * fails the command with VGPU_ERR_MMU_FAULT and the fault in exc.
 */
#define VGPU_SEM_POLL_US 100u

struct vgpu_cmd_sem {
	struct vgpu_cmd_header hdr;
	__u64 addr;
	__u64 payload;
	__u32 asid;
	__u32 op;
	__u64 timeout_ns;
	__u64 reserved[11];
};

_Static_assert(sizeof(struct vgpu_cmd_header) == 8, "command header layout");
_Static_assert(sizeof(struct vgpu_cmd_sem) == VGPU_CMD_BYTES, "semaphore layout");
_Static_assert(sizeof(struct vgpu_trace_header) == 32, "trace header layout");
_Static_assert(sizeof(struct vgpu_trace_event) == 64, "trace record layout");
_Static_assert(sizeof(struct vgpu_cmd_launch) == VGPU_CMD_BYTES, "launch layout");
_Static_assert(sizeof(struct vgpu_cmd_fence) == VGPU_CMD_BYTES, "fence layout");
_Static_assert(sizeof(struct vgpu_cmd_tlb_invalidate) == VGPU_CMD_BYTES,
	       "TLB invalidate layout");

/**
 * struct vgpu_completion - written by the device for every command, at
 *                          completion-ring slot = the command's ring index
 * @status:     VGPU_ERR_* (VGPU_ERR_NONE on success)
 * @opcode:     the command's opcode
 * @index:      the command's ring index
 * @queue:      the queue
 * @seq:        commands completed on the queue since enable, this one
 *              included (1, 2, ...): tells a fresh record from a stale one
 * @warp_insns: launch: warp-instructions executed (all SMs); else 0
 * @elapsed_ns: host time the command took to execute
 * @exc:        for VGPU_ERR_EXCEPTION, _BAD_LAUNCH, _MMU_FAULT, _TIMEOUT
 *              and _ABORTED: what stopped it (code, CTA, warp, pc, and for
 *              VGPU_EXC_GLOBAL_FAULT the virtual address in @exc.addr and
 *              VGPU_MMU_* in @exc.info); zero otherwise
 */
struct vgpu_completion {
	__u32 status;
	__u32 opcode;
	__u32 index;
	__u32 queue;
	__u64 seq;
	__u64 warp_insns;
	__u64 elapsed_ns;
	struct vgpu_exception_record exc;
};

_Static_assert(sizeof(struct vgpu_completion) == 336, "completion layout");

/*
 * Exception-record fields for an MMU fault (exc.code VGPU_EXC_GLOBAL_FAULT,
 * raised by a kernel's access, or status VGPU_ERR_MMU_FAULT for the code,
 * parameter or fence access): exc.addr = the virtual address,
 * exc.info[0] = VGPU_MMU_ACC_* of the access, exc.info[1] = VGPU_MMU_F_*
 * (why), exc.info[2] = the page-table level that failed (3 = root .. 0 =
 * leaf, or 4 for the address-space table), exc.info[3] = the address
 * space; exc.msg says the same in words.
 */
#define VGPU_MMU_ACC_READ 1u
#define VGPU_MMU_ACC_WRITE 2u
#define VGPU_MMU_ACC_EXEC 4u
#define VGPU_MMU_ACC_ATOMIC 8u /* read-modify-write: needs R and W */

#define VGPU_MMU_F_NOT_PRESENT 1u   /* an entry on the walk is not valid */
#define VGPU_MMU_F_PERMISSION 2u    /* the leaf lacks the access's permission */
#define VGPU_MMU_F_NONCANONICAL 3u  /* VA bits 63..48 not zero */
#define VGPU_MMU_F_RESERVED 4u	    /* an entry has reserved bits set */
#define VGPU_MMU_F_TABLE_ACCESS 5u  /* a table lies outside guest RAM */
#define VGPU_MMU_F_BAD_AS 6u	    /* asid >= AS_COUNT or its entry invalid */
#define VGPU_MMU_F_BUS 7u	    /* the page translates to memory outside guest RAM */
#define VGPU_MMU_F_NOT_MULTICAST 8u /* multimem.ld_reduce: not a multicast address */

#endif /* VGPU_HW_CMD_H */
