/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: device-side launch: the device-launch area and
 * the kernel descriptor.  Part of vgpu_hw.h, which includes it: include
 * that.
 */
#ifndef VGPU_HW_CDP_H
#define VGPU_HW_CDP_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_cdp.h"
#endif

/*
 * Device-side launch (CUDA dynamic parallelism, docs/device.md): the
 * device-launch area, in global memory, whose address a launch carries
 * (SUBMIT's VGPU_SUBMIT_EXT_DEVICE_LAUNCH).  A kernel reads it and its own
 * grid's identifier through SR_CDP_AREA_LO/HI and SR_CDP_GRID.  The area
 * is a struct vgpu_cdp_header, then @nslots slots of VGPU_CDP_SLOT_BYTES:
 * a struct vgpu_cdp_record and the child's parameter buffer.  The kernel
 * (the PTX front end's device runtime, libvgpu/ptx/ptx_cdp.c) takes a free
 * slot (CAS of @state FREE -> ALLOC, starting at the atomically bumped
 * @cursor modulo @nslots), fills it, writes the parameters, then sets
 * @seq (an atomic add on the header's) and, last, @state LAUNCHED.  After
 * a grid's CTAs have all completed, the device runs the LAUNCHED records
 * whose @parent is that grid: the NULL-stream and fire-and-forget ones in
 * @seq order, then the tail launches in @seq order, each (with its own
 * children, the same way) before the next; a record's grid identifier is
 * its slot index, a launch from the host gets VGPU_CDP_ROOT | the
 * header's @roots (atomically incremented).  The device looks for a
 * grid's records only in the slots taken while it ran (the @cursor values
 * between its start and its end).  Slots are FREE again when their grid
 * is done (ALLOC ones left by the parent too), their @parent then
 * VGPU_CDP_NO_GRID (the host makes every slot so).  The nesting has no
 * limit but the slots: a grid whose children run holds its slot.  A
 * record that names no kernel descriptor, a bad shape (a grid that the
 * kernel's cluster shape does not tile among them) or an access fault is
 * an exception of the launch (the device runtime refuses such launches
 * before they get there).
 */
#define VGPU_CDP_RECORD_BYTES 64u
#define VGPU_CDP_MAX_PARAM 4096u /* a child's parameter bytes */
#define VGPU_CDP_SLOT_BYTES (VGPU_CDP_RECORD_BYTES + VGPU_CDP_MAX_PARAM)
#define VGPU_CDP_HEADER_BYTES 64u
#define VGPU_CDP_ROOT 0x80000000u
#define VGPU_CDP_NO_GRID 0xffffffffu /* a free slot's @parent */

enum vgpu_cdp_state {
	VGPU_CDP_FREE = 0,
	VGPU_CDP_ALLOC = 1,
	VGPU_CDP_LAUNCHED = 2,
	VGPU_CDP_RUNNING = 3,
};

/* @stream: CUDA's handles (cuda_device_runtime_api.h); others run as NULL */
#define VGPU_CDP_STREAM_NULL 0u
#define VGPU_CDP_STREAM_TAIL 3u
#define VGPU_CDP_STREAM_FIRE_AND_FORGET 4u

/*
 * @nslots, @lmem_va, @lmem_size, @printf_va: written by the host.  The
 * children's local memory (a kernel with VGPU_PARAM_LOCAL: grid threads x
 * its local bytes from @lmem_va, at most @lmem_size, else an exception)
 * and printf buffer (struct vgpu_printf_header; 0: none, and a child that
 * prints is an exception) are the area's: one grid of a tree runs at a
 * time, and the host runs one tree at a time on an area.
 */
struct vgpu_cdp_header {
	__u32 nslots;
	__u32 cursor;
	__u32 seq;
	__u32 roots;
	__u64 lmem_va;
	__u64 lmem_size;
	__u64 printf_va;
	__u32 pad[6];
};

struct vgpu_cdp_record {
	__u32 state; /* enum vgpu_cdp_state */
	__u32 seq;
	__u32 parent; /* the launching grid's identifier */
	__u32 stream;
	__u64 kdesc; /* GPU VA of the child's struct vgpu_kernel_desc */
	__u32 grid[3];
	__u32 block[3];
	__u32 smem_bytes; /* dynamic shared memory */
	__u32 depth; /* nesting depth: 1 for a launch from a host-launched grid */
	__u32 pad[2];
};

/*
 * struct vgpu_kernel_desc - what the device needs to launch a kernel of a
 * program, in the program's module data (PTX's address of an .entry,
 * written by the loader: VGPU_RELOC_KDESC).  @data_off, @params_off,
 * @envregs_off, @local_off, @printf_off: where the parameter buffer holds
 * the hidden parameters the device fills (VGPU_PARAM_DATA with @data_va,
 * VGPU_PARAM_PARAMS with the buffer's own address, VGPU_PARAM_ENVREGS with
 * zeros, VGPU_PARAM_LOCAL with the area's @lmem_va, VGPU_PARAM_PRINTF with
 * its @printf_va), ~0u: none.  @local_bytes: the kernel's local memory
 * per thread.  @cluster: its compiled cluster shape (.reqnctapercluster),
 * 0: none; a device-side launch keeps it, as on the H200.
 */
struct vgpu_kernel_desc {
	__u64 code_va;
	__u32 code_size;
	__u32 entry;
	__u32 smem_static;
	__u32 param_size;
	__u32 data_off;
	__u32 params_off;
	__u32 envregs_off;
	__u32 local_off;
	__u64 data_va;
	__u32 local_bytes;
	__u32 printf_off;
	__u16 cluster[3];
	__u16 pad;
};

_Static_assert(sizeof(struct vgpu_cdp_header) == VGPU_CDP_HEADER_BYTES, "cdp header");
_Static_assert(sizeof(struct vgpu_cdp_record) == VGPU_CDP_RECORD_BYTES, "cdp record");
_Static_assert(sizeof(struct vgpu_kernel_desc) == 64, "kernel descriptor");

#endif /* VGPU_HW_CDP_H */
