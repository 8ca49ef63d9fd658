/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: the PCI device: its identity, the BAR0 register
 * map, fault injection, queue priorities, timeslices, preemption,
 * user-mode queues and their swapping.  Part of vgpu_hw.h, which includes
 * it: include that.
 */
#ifndef VGPU_HW_REGS_H
#define VGPU_HW_REGS_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_regs.h"
#endif

/* ==== Device interface (QEMU vgpu-pci) ==== */
/*
 * The PCIe device that QEMU's -device vgpu-pci implements (docs/device.md).
 * Everything little-endian.
 *
 * PCI identity: vendor 0x7690, device 0x0001, class 0x1200 (processing
 * accelerator), revision 1.  0x7690 is not an assigned PCI-SIG vendor ID
 * (absent from pci.ids, far from the range the PCI-SIG allocates from
 * today); it names this virtual device only and must never be used by
 * hardware.
 *
 * BARs: BAR0 = the registers below (16 KiB, 32-bit accesses only, aligned);
 * BAR2 = the MSI-X table and PBA (CAP_MSIX_VECTORS entries, property
 * msix-vectors, 16 by default); BAR4 = the doorbell pages, one 4 KiB page
 * per queue ("User-mode queues").  Interrupts: MSI-X vector 1 for
 * VGPU_IRQ_ERROR; VGPU_IRQ_COMPLETION and VGPU_IRQ_USER on the vector the
 * completed command names ("Completion vectors" below), vector 0 unless it
 * names one; without MSI-X, INTx (pin A) is asserted while (IRQ_STATUS &
 * IRQ_MASK) != 0.
 *
 * ---- Completion vectors ----
 * A command with VGPU_CMD_F_IRQ may name the MSI-X vector its completion
 * interrupt is sent on: VGPU_CMD_F_VEC(v) in its flags, v any entry below
 * CAP_MSIX_VECTORS but VGPU_MSIX_VEC_ERROR (VGPU_FEAT_IRQ_VECTORS).  A
 * driver points each vector at a CPU and names the vector of the CPU that
 * will wait for the command, as NVMe drivers give each CPU its completion
 * queue's vector: the interrupt then arrives where the waiter sleeps, with
 * no second CPU woken to pass the wake-up on.  VGPU_CMD_F_VEC without
 * VGPU_CMD_F_IRQ, v >= CAP_MSIX_VECTORS or v == VGPU_MSIX_VEC_ERROR fail
 * the command with VGPU_ERR_BAD_COMMAND.  IRQ_STATUS and IRQ_ACK are the
 * same for every vector: any vector's handler sees every raised bit.  Bits
 * that IRQ_MASK held back and an unmasking write delivers go on vector 0.
 */
#define VGPU_PCI_VENDOR_ID 0x7690u
#define VGPU_PCI_DEVICE_ID 0x0001u
#define VGPU_PCI_CLASS 0x1200u /* processing accelerator */
#define VGPU_PCI_REVISION 1u
#define VGPU_BAR0_SIZE 0x4000u
#define VGPU_MSIX_BAR 2
#define VGPU_MSIX_VEC_COMPLETION 0u	/* completions that name no vector */
#define VGPU_MSIX_VEC_ERROR 1u
#define VGPU_MSIX_VECTORS_MIN 2u	/* msix-vectors=: 2..64, default 16 */
#define VGPU_MSIX_VECTORS_MAX 64u
#define VGPU_MSIX_VECTORS_DEFAULT 16u

#define VGPU_ID_MAGIC 0x55504756u /* "VGPU" */
#define VGPU_VERSION_MAJOR 1u
#define VGPU_VERSION_MINOR 2u /* 1.1: CAP_SMEM_CTA .. CAP_CLUSTER_MAX;
				* 1.2: CAP_MSIX_VECTORS, VGPU_CMD_F_VEC */

/*
 * ---- BAR0 register map ----  (RO) read-only, (RW) read/write,
 * (WO) write-only (reads 0), (W1C) write 1 to clear.  32-bit registers;
 * 64-bit addresses are LO/HI pairs.  Other offsets read 0 and ignore writes.
 */
#define VGPU_REG_ID 0x000		/* (RO) VGPU_ID_MAGIC */
#define VGPU_REG_VERSION 0x004		/* (RO) major << 16 | minor */
#define VGPU_REG_CAP_SMS 0x008		/* (RO) number of SMs (sms=) */
#define VGPU_REG_CAP_SMEM 0x00c		/* (RO) shared-memory bytes per SM (smem=) */
#define VGPU_REG_CAP_MAX_THREADS 0x010	/* (RO) max threads per CTA (1024) */
#define VGPU_REG_CAP_BARRIERS 0x014	/* (RO) named barriers per CTA (16) */
#define VGPU_REG_CAP_FEATURES 0x018	/* (RO) VGPU_FEAT_* */
#define VGPU_REG_CAP_QUEUES 0x01c	/* (RO) hardware queues (queues=, 1..VGPU_QUEUES_MAX) */
#define VGPU_REG_CAP_WARP_SIZE 0x020	/* (RO) 32 */
#define VGPU_REG_CAP_MAX_PARAM 0x024	/* (RO) parameter-buffer bytes (4096) */
#define VGPU_REG_CAP_VA_BITS 0x028	/* (RO) GPU virtual-address bits (48) */
#define VGPU_REG_CAP_MAX_CODE 0x02c	/* (RO) max program bytes per launch */
#define VGPU_REG_CAP_AS_MAX 0x030	/* (RO) max address-space table entries */
#define VGPU_REG_CAP_RING_MAX 0x034	/* (RO) max ring entries per queue */
#define VGPU_REG_CAP_THREADS 0x038	/* (RO) host threads running SMs (threads=) */

#define VGPU_REG_CONTROL 0x040		/* (RW) VGPU_CTRL_* */
#define VGPU_REG_STATUS 0x044		/* (RO) VGPU_STATUS_* */
#define VGPU_REG_WDOG_MS 0x048		/* (RW) wall-clock limit per launch, ms; 0 = default,
					 * at most VGPU_MAX_WDOG_MS */
#define VGPU_REG_IRQ_STATUS 0x050	/* (RO) VGPU_IRQ_* raised and not yet acknowledged */
#define VGPU_REG_IRQ_MASK 0x054		/* (RW) VGPU_IRQ_* that may interrupt; 0 at reset */
#define VGPU_REG_IRQ_ACK 0x058		/* (WO, W1C) clear IRQ_STATUS bits */
#define VGPU_REG_AS_BASE_LO 0x060	/* (RW) address-space table, guest physical, 8-aligned */
#define VGPU_REG_AS_BASE_HI 0x064	/* (RW) */
#define VGPU_REG_AS_COUNT 0x068		/* (RW) entries in the table (<= CAP_AS_MAX) */
#define VGPU_REG_ERR_COUNT 0x070	/* (RO) guest errors seen since reset (all kinds) */
#define VGPU_REG_ERR_LAST 0x074		/* (RO) VGPU_ERR_* of the latest */
#define VGPU_REG_ERR_INFO 0x078		/* (RO) queue << 16 | ring index of the latest */
#define VGPU_REG_CSB_SLOT 0x07c		/* (RW) bytes of one context-save slot: a multiple of
					 * 4096, 0 = no preemption; see "Preemption" */
#define VGPU_REG_PREEMPTIONS 0x080	/* (RO) clusters saved by preemption since reset */
#define VGPU_REG_PREEMPT 0x084		/* (WO) queue index: preempt its launch now */
#define VGPU_REG_TIMESLICE_US 0x088	/* (RW) timeslice, microseconds of device time,
					 * at most VGPU_MAX_TIMESLICE_US; 0 = none;
					 * reset: property timeslice-us; see "Timeslices" */
#define VGPU_REG_INJECT 0x090		/* (RW) arm a fault (VGPU_FEAT_INJECT); see
					 * "Fault injection" */
#define VGPU_REG_INJECT_ARG_LO 0x094	/* (RW) the next armed fault's argument */
#define VGPU_REG_INJECT_ARG_HI 0x098	/* (RW) */
#define VGPU_REG_TLB_FLUSH 0x09c	/* (WO) any value: every TLB drops every entry;
					 * translations after the write walk the
					 * tables (VGPU_FEAT_USER_QUEUES) */

/* Capabilities of interface 1.1: the SM's shape (property model=) */
#define VGPU_REG_CAP_MODEL 0x0a0	/* (RO) VGPU_MODEL_* the device was made as */
#define VGPU_REG_CAP_SMEM_CTA 0x0a4	/* (RO) shared-memory bytes one CTA may use
					 * (<= CAP_SMEM); a launch above: BAD_LAUNCH */
#define VGPU_REG_CAP_CTAS_PER_SM 0x0a8	/* (RO) resident CTAs per SM (occupancy) */
#define VGPU_REG_CAP_WARPS_PER_SM 0x0ac /* (RO) resident warps per SM (occupancy) */
#define VGPU_REG_CAP_REGS_PER_SM 0x0b0	/* (RO) 32-bit registers per SM (65536) */
#define VGPU_REG_CAP_CLUSTER 0x0b4	/* (RO) portable cluster size: CTAs (8) */
#define VGPU_REG_CAP_CLUSTER_MAX 0x0b8	/* (RO) non-portable cluster size (16) */
#define VGPU_REG_CAP_MSIX_VECTORS 0x0bc /* (RO) MSI-X table entries (msix-vectors=; 1.2) */

#define VGPU_CTRL_RESET (1u << 0)	/* (WO) device reset; self-clearing */

#define VGPU_STATUS_BUSY (1u << 0)	/* a command is executing on some queue */

#define VGPU_IRQ_COMPLETION (1u << 0)	/* a command with VGPU_CMD_F_IRQ completed */
#define VGPU_IRQ_ERROR (1u << 1)	/* a queue stopped on an error */
#define VGPU_IRQ_USER (1u << 2)		/* the same as COMPLETION, on a user-mode queue
					 * (VGPU_FEAT_USER_IRQ; else COMPLETION) */
#define VGPU_IRQ_ALL (VGPU_IRQ_COMPLETION | VGPU_IRQ_ERROR | VGPU_IRQ_USER)

#define VGPU_FEAT_MMU (1u << 0)		 /* GPU MMU, always set */
#define VGPU_FEAT_RANDOM_SCHED (1u << 1) /* VGPU_LAUNCH_RANDOM_SCHED */
#define VGPU_FEAT_MBARRIER (1u << 2)	 /* mbarrier unit */
#define VGPU_FEAT_TMA (1u << 3)		 /* TMA engine */
#define VGPU_FEAT_CLUSTERS (1u << 4)	 /* launches with cluster dims > 1 */
#define VGPU_FEAT_SEMAPHORES (1u << 5)	 /* SEM_ACQUIRE/SEM_RELEASE, VGPU_Q_PRIORITY */
#define VGPU_FEAT_PREEMPT (1u << 6)	 /* mid-kernel preemption (VGPU_Q_CSB) */
#define VGPU_FEAT_INJECT (1u << 7)	 /* fault injection (property x-inject) */
#define VGPU_FEAT_NULL_PTE (1u << 8)	 /* VGPU_PTE_NULL at levels 0..2 (sparse mappings) */
#define VGPU_FEAT_USER_QUEUES (1u << 9)	 /* user-mode queues, doorbell BAR */
#define VGPU_FEAT_USER_IRQ (1u << 10)	 /* user queues raise VGPU_IRQ_USER */
#define VGPU_FEAT_QUEUE_SWAP (1u << 11)	 /* VGPU_QCTRL_HOLD, VGPU_QCTRL_RESTORE: a queue
					  * taken off and put back ("Swapping queues") */
#define VGPU_FEAT_DEVICE_LAUNCH (1u << 12) /* device-side launch: a launch's device-launch
					    * area (struct vgpu_cmd_launch's @cdp_area,
					    * struct vgpu_cdp_header) */
#define VGPU_FEAT_IRQ_VECTORS (1u << 13) /* VGPU_CMD_F_VEC: completion vectors */

/*
 * ---- Fault injection: a device that misbehaves on purpose ----
 * With the property x-inject=on (CAP_FEATURES has VGPU_FEAT_INJECT) the
 * device can be told to fail the way real hardware does, so that a
 * driver's timeout, recovery and reset paths run in tests.  Without it,
 * INJECT reads 0 and writes to it are ignored (a guest error).
 *
 * Writing INJECT arms a fault on one queue, replacing the one armed there:
 *   bits 7..0   VGPU_INJ_* (VGPU_INJ_NONE disarms the queue)
 *   bits 15..8  queue index (others: ignored, a guest error)
 *   bits 31..16 how many times it strikes (0 means once)
 * with INJECT_ARG_LO/HI, written before, as its argument.  Reading INJECT
 * gives the fault armed on the queue last written, with the strikes left
 * (0 once spent).  Disabling the queue and a device reset disarm it.
 *
 *   DROP_IRQ     a command with VGPU_CMD_F_IRQ completes (record written,
 *                COMPLETED counted) but raises no interrupt: a lost MSI
 *   DELAY_IRQ    its interrupt comes ARG milliseconds late (VM time)
 *   MMU_FAULT    a LAUNCH does not run: it completes with VGPU_ERR_EXCEPTION,
 *                exception VGPU_EXC_GLOBAL_FAULT at address ARG
 *                (info[1] VGPU_MMU_F_NOT_PRESENT), and the queue stops,
 *                as for a fault of the kernel's own
 *   HANG         the queue takes its next command and never ends it: no
 *                record, no interrupt, HEAD stays, until the queue is
 *                disabled or the device reset (the device watchdog does
 *                not see it: a hung front end, not a long kernel)
 *   CORRUPT_CPL  the record of a command with VGPU_CMD_F_IRQ is written
 *                with bit 63 of its seq flipped (a corrupt record)
 */
#define VGPU_INJ_NONE 0u
#define VGPU_INJ_DROP_IRQ 1u
#define VGPU_INJ_DELAY_IRQ 2u
#define VGPU_INJ_MMU_FAULT 3u
#define VGPU_INJ_HANG 4u
#define VGPU_INJ_CORRUPT_CPL 5u
#define VGPU_INJ_KINDS 6u
#define VGPU_INJECT(kind, queue, count) \
	((kind) | (queue) << 8 | (count) << 16)

#define VGPU_DEFAULT_WDOG_MS 10000u
#define VGPU_MAX_WDOG_MS 60000u /* WDOG_MS writes above it store this */
#define VGPU_DEFAULT_TIMESLICE_US 2000u /* property timeslice-us */
#define VGPU_MAX_TIMESLICE_US 1000000u /* TIMESLICE_US writes above it store this */
#define VGPU_MAX_CODE_BYTES (1u << 24) /* 16 MiB (cub's device algorithms: over 1) */
#define VGPU_AS_MAX 256u
#define VGPU_RING_MAX 4096u
#define VGPU_QUEUES_MAX 64u /* property queues= at most: registers up to
			     * VGPU_REG_QUEUE(64) = 0x2000, 64 doorbell pages */

/*
 * Per-queue registers: queue q at VGPU_REG_QUEUE(q) + VGPU_Q_*.  Ring base,
 * completion base and size may change only while the queue is disabled.
 */
#define VGPU_REG_QUEUE_BASE 0x1000
#define VGPU_REG_QUEUE_STRIDE 0x40
#define VGPU_REG_QUEUE(q) (VGPU_REG_QUEUE_BASE + (q) * VGPU_REG_QUEUE_STRIDE)
#define VGPU_Q_RING_LO 0x00	/* (RW) command ring, guest physical, 64-aligned */
#define VGPU_Q_RING_HI 0x04	/* (RW) */
#define VGPU_Q_CPL_LO 0x08	/* (RW) completion ring, guest physical, 8-aligned */
#define VGPU_Q_CPL_HI 0x0c	/* (RW) */
#define VGPU_Q_SIZE 0x10	/* (RW) ring entries: power of two, 1..CAP_RING_MAX */
#define VGPU_Q_CONTROL 0x14	/* (RW) VGPU_QCTRL_* */
#define VGPU_Q_STATUS 0x18	/* (RO) VGPU_QSTAT_* */
#define VGPU_Q_HEAD 0x1c	/* (RO; RW while disabled, VGPU_FEAT_QUEUE_SWAP) next
				 * slot the device takes, 0..size-1 */
#define VGPU_Q_TAIL 0x20	/* (RO) tail written by the last doorbell */
#define VGPU_Q_DOORBELL 0x24	/* (WO) new tail (0..size-1): commands up to it are ready */
#define VGPU_Q_ERROR 0x28	/* (RO) VGPU_ERR_* that stopped the queue, 0 when running */
#define VGPU_Q_ERROR_INDEX 0x2c	/* (RO) ring index of the command that stopped it */
#define VGPU_Q_COMPLETED_LO 0x30 /* (RO; RW while disabled, VGPU_FEAT_QUEUE_SWAP)
				  * commands completed since enable, low word */
#define VGPU_Q_COMPLETED_HI 0x34 /* (RO; RW while disabled) high word */
#define VGPU_Q_PRIORITY 0x38	/* (RW) VGPU_QPRIO_* (values above REALTIME store
				 * REALTIME); NORMAL after reset; any time */
#define VGPU_Q_CSB 0x3c		/* (RW) context-save buffer: guest physical page
				 * number (address >> 12), 0 = none; while the
				 * queue is disabled */

/*
 * ---- Queue priority: which launches the SMs serve first ----
 * The SMs take CTAs from the launches in progress on every queue.  A free
 * SM takes its next CTAs from a launch of the highest priority that has
 * CTAs left; among launches of that priority it goes round robin, one
 * claim (a chunk of CTAs) each.  Without preemption (below) a CTA, once
 * started, runs to its end: a higher-priority launch gets SMs as CTAs of
 * lower ones finish.  A priority change applies to the queue's next claim.
 *
 * ---- Timeslices: launches of one priority share the SMs ----
 * When a launch waits for SMs, none is free and no lower-priority launch
 * can be preempted, the device preempts (as below) every running launch
 * of the waiting one's priority that can be preempted and whose claim on
 * an SM has run for TIMESLICE_US or more and made progress (counted
 * warp-instructions since the claim began: a claim whose restore took the
 * whole slice is not preempted before its first instructions); a claim
 * that has not yet run that long is preempted when it has.  The preempted
 * launch goes to the
 * back of the round robin, so the waiting one takes the freed SMs, and
 * two launches that never end alternate on the SMs, one timeslice each.
 * Device time is the host's monotonic clock while the VM runs.  A launch
 * of a queue without a context-save buffer cannot be preempted and keeps
 * its SMs; TIMESLICE_US 0 turns timeslicing off (priorities still
 * preempt).
 */
/*
 * ---- Preemption: stopping a running launch mid-kernel ----
 * With VGPU_FEAT_PREEMPT, a launch of a queue that has a context-save
 * buffer (VGPU_Q_CSB) can be stopped between two warp-instructions when a
 * launch of a higher-priority queue waits for SMs and none is free, or
 * when its timeslice ends while another launch of its priority waits.  Each
 * SM running it stops (within 1024 warp-instructions), drains its copies
 * and saves the cluster it was running into a free slot of the queue's
 * buffer: CAP_THREADS slots of CSB_SLOT bytes each, slot i at
 * CSB + i * CSB_SLOT, holding a state in the "Context save" format; the
 * clusters it had not started go back to the launch.  A freed SM serves
 * the higher priority; the launch goes on later, saved clusters first,
 * each restored from its slot on whichever SM claims it.  A state that
 * does not fit its slot is not saved: that SM goes on with the cluster.
 * A restore that finds its slot damaged (by the guest) fails the launch
 * with VGPU_EXC_BAD_CONTEXT, never anything else; the device reads only
 * the launch's own queue's buffer.  Writing a queue's index to
 * VGPU_REG_PREEMPT preempts its launch the same way (the driver's
 * request; it goes on as soon as an SM takes it again; a queue with no
 * launch running or no buffer: nothing happens).  A timeslice's expiry
 * preempts the same way ("Timeslices").  The device property
 * preempt-every=N (testing) also preempts every launch with a buffer
 * after every N warp-instructions of each SM.
 */

#define VGPU_QPRIO_LOW 0u
#define VGPU_QPRIO_NORMAL 1u
#define VGPU_QPRIO_HIGH 2u
#define VGPU_QPRIO_REALTIME 3u
#define VGPU_QPRIO_COUNT 4u

/*
 * Writing ENABLE 0 -> 1 starts the queue at head = tail = 0 (the ring's
 * configuration is checked then: a bad one stops it at once with
 * VGPU_ERR_BAD_RING).  Writing ENABLE 1 -> 0 aborts the command in
 * progress (its completion reports VGPU_ERR_ABORTED) and stops the queue.
 * Writing RESUME to a stopped queue clears the error and goes on with the
 * command after the one that stopped it.
 */
#define VGPU_QCTRL_ENABLE (1u << 0)
#define VGPU_QCTRL_RESUME (1u << 1) /* (WO) */
#define VGPU_QCTRL_USER (1u << 2)   /* user mode: see "User-mode queues" */
#define VGPU_QCTRL_HOLD (1u << 3)   /* take no new command ("Swapping queues") */
#define VGPU_QCTRL_RESTORE (1u << 4) /* (WO) with ENABLE 0 -> 1: start at the
				      * HEAD and COMPLETED written, not at 0 */
#define VGPU_QCTRL_ASID_SHIFT 16    /* bits 23..16: a user-mode queue's AS */
#define VGPU_QCTRL_ASID_MASK 0xffu

/*
 * ---- User-mode queues: rings that an unprivileged process feeds ----
 * A queue enabled with VGPU_QCTRL_USER (written together with ENABLE, in
 * the same write as the queue's address space in bits 23..16; both are
 * taken at the 0 -> 1 transition and read back while enabled) runs
 * commands that its owner wrote without the kernel looking at them, so
 * the device enforces what the kernel would otherwise check:
 *   - every command runs in the queue's address space: the @asid fields
 *     of LAUNCH, FENCE, SEM_ACQUIRE and SEM_RELEASE are ignored;
 *   - VGPU_CMD_F_FENCE_PHYS and TLB_INVALIDATE are privileged: such a
 *     command fails with VGPU_ERR_BAD_COMMAND;
 *   - a doorbell write beyond the ring stops the queue with
 *     VGPU_ERR_BAD_DOORBELL (a kernel-mode queue ignores it).
 * Any failure stops that queue only (VGPU_IRQ_ERROR), as for every queue.
 * The command and completion rings stay guest physical, set by the kernel.
 * A command with VGPU_CMD_F_IRQ raises VGPU_IRQ_USER, not COMPLETION
 * (VGPU_FEAT_USER_IRQ), so that a driver can mask it while no one sleeps
 * on a user fence (i915 arms its user interrupt only for waiters): a
 * process that polls its fence, or a wait that the fence ends before it
 * sleeps, then costs no interrupt.  Unmasking it delivers one already
 * raised, as for every IRQ_MASK bit; acknowledge it first to drop a
 * stale one.
 *
 * BAR4 holds one 4 KiB page per queue, queue q at q * VGPU_DOORBELL_PAGE,
 * made to be mapped into the owning process (each page is its own queue's
 * only): 32-bit accesses at the offsets below; others read 0 and ignore
 * writes.  Writing VGPU_DB_TAIL is the same as writing VGPU_Q_DOORBELL.
 */
#define VGPU_DOORBELL_BAR 4
#define VGPU_DOORBELL_PAGE 0x1000u
#define VGPU_DB_TAIL 0x00	/* (RW) write: doorbell (new tail); read: tail */
#define VGPU_DB_HEAD 0x04	/* (RO) VGPU_Q_HEAD */
#define VGPU_DB_COMPLETED_LO 0x08 /* (RO) VGPU_Q_COMPLETED_LO */
#define VGPU_DB_COMPLETED_HI 0x0c /* (RO) */
#define VGPU_DB_STATUS 0x10	/* (RO) VGPU_Q_STATUS */
#define VGPU_DB_ERROR 0x14	/* (RO) VGPU_Q_ERROR */

/*
 * ---- Swapping queues: more user-mode queues than hardware queues ----
 * (VGPU_FEAT_QUEUE_SWAP.)  A driver that runs more queues than the device
 * has (AMD's MES does it in firmware) takes one off its hardware queue
 * and later puts it back, on this or another hardware queue, exactly
 * where it stood: no command lost, none run twice.
 *   - Off: write CONTROL with ENABLE | HOLD (the other bits are ignored
 *     while enabled).  A held queue takes no new command; doorbells still
 *     latch TAIL.  The command executing goes on to its end, except a
 *     SEM_ACQUIRE that is waiting: it gives way at once, not completed
 *     (no record, HEAD stays on it; its timeout starts again once the
 *     queue is restored), as it does for a VM stop.  Once STATUS has no BUSY the queue
 *     stands at a command boundary: read HEAD, TAIL and COMPLETED, then
 *     write CONTROL 0, which aborts nothing.  Writing ENABLE without
 *     HOLD lets a held queue go on.
 *   - Back: while disabled, write the ring registers, HEAD and COMPLETED
 *     (LO, HI) as read, then CONTROL with ENABLE | RESTORE (and USER and
 *     the address space): the queue starts at HEAD with TAIL = HEAD and
 *     its COMPLETED count going on (completion records' seq with it);
 *     then ring the doorbell with the TAIL read.  A HEAD at or past SIZE
 *     stops the queue with VGPU_ERR_BAD_RING.
 * Without RESTORE, enable starts at 0 as always (HEAD and COMPLETED
 * written before are dropped).  Disable and reset clear HOLD.
 */
#define VGPU_QSTAT_ENABLED (1u << 0)
#define VGPU_QSTAT_BUSY (1u << 1)    /* a command of this queue is executing */
#define VGPU_QSTAT_STOPPED (1u << 2) /* stopped on an error: see VGPU_Q_ERROR */
#define VGPU_QSTAT_IDLE (1u << 3)    /* enabled, not stopped, head == tail */

#endif /* VGPU_HW_REGS_H */
