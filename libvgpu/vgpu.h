/* SPDX-License-Identifier: MIT */
/*
 * libvgpu: open vGPU devices, allocate memory, load kernels and launch them.
 *
 * Two backends stand behind one API:
 *
 *   drm  the vgpu.ko kernel driver (uapi/vgpu_drm.h) through libdrm: a
 *        render node of a vgpu-pci device in a QEMU guest.
 *   sim  the execution core (qemu-device/core) in this process, no kernel:
 *        the same ioctls answered by an in-process model of the driver,
 *        with the same error codes.  Jobs run synchronously when submitted.
 *
 * Every ioctl of either backend passes through one internal function that
 * returns 0 or -errno, so a program sees the same errors on both.
 *
 * Conventions:
 *  - objects are opaque; functions are named vgpu_<object>_<verb>();
 *  - functions that can fail return 0 or a negative errno and write their
 *    result through the last pointer argument only on success;
 *  - the library is thread-safe: any object may be used from any thread,
 *    and distinct objects concurrently; it keeps no global state;
 *  - timeouts are relative, in nanoseconds; VGPU_TIMEOUT_INFINITE waits
 *    forever and 0 polls;
 *  - a buffer, program, syncobj or job keeps its device alive: closing a
 *    device while they exist only marks it closed (new objects and launches
 *    then fail with -ENODEV) and the last one frees it.
 *
 * Hardware facts (launch flags, exception records, tensor maps, limits)
 * come from uapi/vgpu_hw.h and driver parameters from uapi/vgpu_drm.h;
 * both are included here so that there is one definition of each.
 */
#ifndef VGPU_H
#define VGPU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vgpu_hw.h"
#include "vgpu_isa.h"
#include "vgpu_drm.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef VGPU_API
#define VGPU_API __attribute__((visibility("default")))
#endif

#define VGPU_TIMEOUT_INFINITE INT64_MAX

/* ------------------------------------------------------------------ */
/* Devices                                                            */
/* ------------------------------------------------------------------ */

struct vgpu_device;
struct vgpu_bo;
struct vgpu_program;
struct vgpu_kernel;
struct vgpu_args;
struct vgpu_syncobj;
struct vgpu_queue;
struct vgpu_job;

enum vgpu_backend {
	VGPU_BACKEND_AUTO = 0, /* $VGPU_BACKEND, else drm if a device exists, else sim */
	VGPU_BACKEND_DRM = 1,
	VGPU_BACKEND_SIM = 2,
};

/* "auto", "drm", "sim"; NULL for another value. */
VGPU_API const char *vgpu_backend_name(enum vgpu_backend backend);

/**
 * struct vgpu_device_desc - one vgpu device found by vgpu_device_list()
 * @node:      render node ("/dev/dri/renderD128")
 * @pci_slot:  PCI address ("0000:00:03.0")
 * @vendor_id, @device_id, @revision: PCI identification
 */
struct vgpu_device_desc {
	char node[64];
	char pci_slot[32];
	uint32_t vendor_id;
	uint32_t device_id;
	uint32_t revision;
	uint32_t pad;
};

/*
 * The vgpu devices of the drm backend (DRM devices whose driver is
 * "vgpu", through drmGetDevices2()), in PCI order.  Fills at most @max
 * entries of @descs (may be NULL when @max is 0) and sets *@count to the
 * number found.  No device is not an error: *@count = 0.
 */
VGPU_API int vgpu_device_list(struct vgpu_device_desc *descs, unsigned int max,
			      unsigned int *count);

/*
 * Open a device.  @name selects it:
 *   NULL or ""        $VGPU_BACKEND when set ("drm" or "sim"), else the
 *                     first drm device when one exists, else sim
 *   "sim"             a new simulated device (each open is a new device)
 *   "drm"             the first drm device (-ENODEV when none)
 *   "0000:00:03.0"    the drm device at that PCI slot (-ENODEV when none)
 *   "/dev/dri/..."    that render or primary node (-ENODEV when it is not
 *                     a vgpu device)
 * Unknown backends in $VGPU_BACKEND or @name give -EINVAL.  Each open of a
 * drm device is a new DRM file: its own GPU address space and handles.
 */
VGPU_API int vgpu_device_open(const char *name, struct vgpu_device **out);

/*
 * Open a drm device on an open DRM file descriptor (the library dups it,
 * so the caller keeps @fd).  -ENODEV when @fd is not a vgpu device.
 */
VGPU_API int vgpu_device_open_fd(int fd, struct vgpu_device **out);

/* Drop the caller's reference; see "Conventions".  NULL is a no-op. */
VGPU_API void vgpu_device_close(struct vgpu_device *dev);

VGPU_API enum vgpu_backend vgpu_device_backend(const struct vgpu_device *dev);

/*
 * The DRM file descriptor of a drm device (owned by the device: do not
 * close it), or -EOPNOTSUPP on the sim backend.
 */
VGPU_API int vgpu_device_fd(const struct vgpu_device *dev);

/* One driver parameter (enum drm_vgpu_param of uapi/vgpu_drm.h). */
VGPU_API int vgpu_device_get_param(struct vgpu_device *dev, uint32_t param,
				   uint64_t *value);

/**
 * struct vgpu_device_info - what a device is and can do
 * @backend:        VGPU_BACKEND_DRM or VGPU_BACKEND_SIM
 * @node, @pci_slot: as in struct vgpu_device_desc ("" on sim)
 * @driver:         DRM driver name and version ("vgpu 1.0", "vgpu-sim 1.0")
 * @param:          every driver parameter, indexed by enum drm_vgpu_param
 */
struct vgpu_device_info {
	enum vgpu_backend backend;
	char node[64];
	char pci_slot[32];
	char driver[64];
	uint64_t param[VGPU_PARAM_COUNT];
};

VGPU_API int vgpu_device_query(struct vgpu_device *dev,
			       struct vgpu_device_info *info);

/*
 * Simulator settings (sim backend only; -EOPNOTSUPP on drm, where they are
 * properties of the QEMU device).  0 restores the core's default.
 */
enum vgpu_sim_option {
	VGPU_SIM_TMA_LATENCY = 1,   /* cycles to the first byte of a copy */
	VGPU_SIM_TMA_BANDWIDTH = 2, /* bytes the copy engine moves per cycle */
	VGPU_SIM_TRY_WAIT_LIMIT = 3, /* cycles MBAR.TRY_WAIT suspends */
	/*
	 * Preempt every running cluster after this many warp-instructions,
	 * save it (uapi/vgpu_hw.h "Context save"), and resume it from the
	 * saved state on the other of two SMs, as the device does; 0 never.
	 * $VGPU_SIM_PREEMPT_EVERY sets it when a sim device opens.
	 */
	VGPU_SIM_PREEMPT_EVERY = 4,
	/*
	 * SMs on host threads that share each launch's clusters, 1 to 256
	 * (-EINVAL otherwise); 1, the default, runs every launch on one SM
	 * in the calling thread.  The device then has max(4, N) SMs.
	 * $VGPU_SIM_THREADS sets it when a sim device opens (docs/libvgpu.md).
	 */
	VGPU_SIM_THREADS = 5,
	/*
	 * The device model (VGPU_MODEL_*, uapi/vgpu_hw.h), as the device's
	 * model= property: VGPU_MODEL_VGPU (the default) or VGPU_MODEL_H100,
	 * whose 132 SMs, 227 KiB of shared memory a CTA and occupancy limits
	 * GET_PARAM then reports (-EINVAL for another value).
	 * $VGPU_SIM_MODEL=vgpu|h100 sets it when a sim device opens.
	 */
	VGPU_SIM_MODEL = 6
};

VGPU_API int vgpu_device_set_sim_option(struct vgpu_device *dev,
					enum vgpu_sim_option option,
					uint64_t value);

/*
 * Sim backend only (-EOPNOTSUPP on drm): print the core's events (CTA
 * begin/end, barrier arrivals and completions, warps blocking and waking,
 * exceptions) of every later launch to @f, one line each; NULL stops.
 */
VGPU_API int vgpu_device_set_trace(struct vgpu_device *dev, FILE *f);

/* ------------------------------------------------------------------ */
/* Buffer objects                                                     */
/* ------------------------------------------------------------------ */

/*
 * A zero-filled buffer of @size bytes (rounded up to 4 KiB pages) mapped
 * in the device's GPU address space, with its memory from the start
 * (VGPU_BO_POPULATE): a kernel may use its address without the buffer
 * being listed in the launch.  @flags: VGPU_BO_READ_ONLY,
 * VGPU_BO_NO_EXEC.  -EINVAL for size 0 or unknown flags, -E2BIG above
 * VGPU_BO_MAX_SIZE, -ENOMEM past the device's limit of resident memory or
 * the memory cgroup's (uapi/vgpu_drm.h, "BO memory").
 */
VGPU_API int vgpu_bo_new(struct vgpu_device *dev, uint64_t size, uint32_t flags,
			 struct vgpu_bo **out);

/* Unmaps and releases the buffer (NULL is a no-op). */
VGPU_API void vgpu_bo_free(struct vgpu_bo *bo);

VGPU_API uint64_t vgpu_bo_size(const struct vgpu_bo *bo);
VGPU_API uint64_t vgpu_bo_gpu_address(const struct vgpu_bo *bo);
VGPU_API uint32_t vgpu_bo_flags(const struct vgpu_bo *bo);
/* GEM handle (or the sim backend's handle) in the device's file. */
VGPU_API uint32_t vgpu_bo_handle(const struct vgpu_bo *bo);

/*
 * CPU mapping of the whole buffer (read-write, coherent with the device
 * once the jobs writing it have completed).  Mapping twice returns the same
 * pointer; it stays valid until vgpu_bo_unmap() or vgpu_bo_free().
 */
VGPU_API int vgpu_bo_map(struct vgpu_bo *bo, void **ptr);
/*
 * A second CPU mapping of the whole buffer, placed at exactly its GPU
 * address (*@ptr == (void *)vgpu_bo_gpu_address(bo)), so that one pointer
 * reaches the buffer on the host and in kernels (libcuda's managed
 * memory).  The same memory as vgpu_bo_map()'s, coherent in the same way;
 * mapping twice returns the same pointer.  Nothing of the process is
 * replaced (MAP_FIXED_NOREPLACE): -EEXIST when something else is already
 * mapped in [address, address + size), e.g. a buffer of another device
 * that has the same GPU address (each device has its own address space),
 * -ENOMEM when the range lies beyond the process's address space (GPU
 * addresses go up to 2^48, x86-64 user space to 2^47; the device hands
 * them out lowest first from VGPU_PARAM_VA_START, 1 MiB).  Unmapped by
 * vgpu_bo_unmap() (with vgpu_bo_map()'s) or vgpu_bo_free().
 */
VGPU_API int vgpu_bo_map_at_gpu_address(struct vgpu_bo *bo, void **ptr);
VGPU_API int vgpu_bo_unmap(struct vgpu_bo *bo);

/* Copy to or from the buffer through its mapping (-EINVAL out of range). */
VGPU_API int vgpu_bo_write(struct vgpu_bo *bo, uint64_t offset,
			   const void *data, size_t len);
VGPU_API int vgpu_bo_read(struct vgpu_bo *bo, uint64_t offset, void *data,
			  size_t len);

/*
 * Wait until every job using the buffer has completed (-ETIME when
 * @timeout_ns passes first).
 */
VGPU_API int vgpu_bo_wait(struct vgpu_bo *bo, int64_t timeout_ns);

/*
 * Export as a dma-buf file descriptor (O_CLOEXEC, read-write); the caller
 * owns *@fd.  Import it into any device of the same backend: the same
 * memory, with the importing device's own GPU address.  Importing a buffer
 * a device already holds returns the same struct vgpu_bo, counted: free it
 * once per time it was returned.
 */
VGPU_API int vgpu_bo_export(struct vgpu_bo *bo, int *fd);
VGPU_API int vgpu_bo_import(struct vgpu_device *dev, int fd,
			    struct vgpu_bo **out);

/* ------------------------------------------------------------------ */
/* Programs and kernels                                               */
/* ------------------------------------------------------------------ */

/*
 * Load a program onto the device: from assembly text (@len bytes of @src;
 * @filename names it in messages), from a file holding text or an object
 * (detected by its magic), or from an object in memory (uapi/vgpu_isa.h's
 * format, as vgpu-as writes it).  On an assembly or format error returns
 * -EINVAL and, when @log is not NULL, writes the diagnostics there
 * ("FILE:LINE:COL: error: ...", one per line, truncated to @loglen).
 * The code is copied into a read-only buffer object of the device.
 */
VGPU_API int vgpu_program_assemble(struct vgpu_device *dev, const char *src,
				   size_t len, const char *filename,
				   struct vgpu_program **out, char *log,
				   size_t loglen);
/*
 * The same from PTX text (what nvcc and clang's NVPTX back end emit): each
 * .entry becomes a kernel of the program, its parameters at PTX's offsets.
 * Anything the front end does not support yet is an error naming
 * FILE:LINE:COL and the construct (-EINVAL, in @log).
 */
VGPU_API int vgpu_program_from_ptx(struct vgpu_device *dev, const char *src,
				   size_t len, const char *filename,
				   struct vgpu_program **out, char *log,
				   size_t loglen);
/*
 * PTX text -> the vGPU assembly the front end generates for it (a
 * malloc'd string in *@asm_out, the caller frees it), as vgpu-ptxas -S
 * prints it.
 */
VGPU_API int vgpu_ptx_to_asm(const char *src, size_t len, const char *filename,
			     char **asm_out, char *log, size_t loglen);
/*
 * Both products of the front end at once: the assembly (*@asm_out, as
 * vgpu_ptx_to_asm() gives it) and the object it assembles into (*@obj_out,
 * *@obj_len bytes, as vgpu-ptxas writes it; vgpu_program_load_binary()
 * loads it), each malloc'd for the caller to free, each skipped when its
 * pointer is NULL.  libcuda.so.1 reads its per-kernel facts from the text.
 *
 * vgpu_program_from_ptx(), vgpu_ptx_to_asm() and this go through the PTX
 * compile cache: what the front end makes of a module is kept on disk
 * (VGPU_CACHE_PATH, default ~/.cache/vgpu/ptx; VGPU_CACHE_DISABLE=1 turns it
 * off; docs/libvgpu.md), so that another process loading the same PTX
 * does not compile it again.
 */
VGPU_API int vgpu_ptx_compile(const char *src, size_t len, const char *filename,
			      char **asm_out, void **obj_out, size_t *obj_len,
			      char *log, size_t loglen);
/*
 * Links @n PTX modules into one (docs/ptx.md, "Linking"): each module's
 * .extern functions and variables resolved against the .visible (.weak,
 * .common) definitions of the others, their internal names kept apart.
 * The result is PTX text (*@out, malloc'd, NUL-terminated, *@out_len
 * bytes) that vgpu_program_from_ptx() and vgpu_ptx_compile() take.
 * @names name the modules in diagnostics (NULL: "<ptx>").  -EINVAL: a
 * module's own PTX error; -ENOENT: a link error (an undefined symbol, a
 * symbol defined twice, an .extern that does not match its definition);
 * each with FILE:LINE:COL in @log.  @flags: VGPU_PTX_LINK_CHECK checks each
 * module alone (its own PTX errors) and links nothing (*@out stays NULL);
 * VGPU_PTX_LINK_PARTIAL resolves what the modules define among themselves
 * (a symbol defined twice, an .extern that does not match its definition:
 * -ENOENT), lets undefined references wait for modules still to come, and
 * links nothing (what cuLinkAddData checks as each module comes).
 */
#define VGPU_PTX_LINK_CHECK 1u
#define VGPU_PTX_LINK_PARTIAL 2u
VGPU_API int vgpu_ptx_link(int n, const char *const *srcs, const size_t *lens,
			   const char *const *names, unsigned int flags, char **out,
			   size_t *out_len, char *log, size_t loglen);
/*
 * The log of a compile of vgpu_ptx_link()'s text @linked (@len bytes)
 * named VGPU_PTX_LINKED_NAME: each "<linked>:LINE:COL: error: ..." is
 * rewritten in place as "MODULE:LINE:COL: error: ..." of the input the
 * line came from.
 */
#define VGPU_PTX_LINKED_NAME "<linked>"
VGPU_API int vgpu_ptx_link_map_log(const char *linked, size_t len, char *log, size_t loglen);
VGPU_API int vgpu_program_load_file(struct vgpu_device *dev, const char *path,
				    struct vgpu_program **out, char *log,
				    size_t loglen);
VGPU_API int vgpu_program_load_binary(struct vgpu_device *dev,
				      const void *data, size_t len,
				      struct vgpu_program **out, char *log,
				      size_t loglen);
VGPU_API void vgpu_program_free(struct vgpu_program *prog);

/* The object file of the program (malloc'd, the caller frees *@data). */
VGPU_API int vgpu_program_binary(const struct vgpu_program *prog, void **data,
				 size_t *len);

/* Re-assemblable text of the whole program, as vgpu-objdump prints it. */
VGPU_API int vgpu_program_disassemble(const struct vgpu_program *prog, FILE *out);

VGPU_API unsigned int vgpu_program_kernel_count(const struct vgpu_program *prog);

/*
 * The buffer holding the program's module data (.global variables, which
 * keep their values from one launch to the next), owned by the program:
 * valid until vgpu_program_free().  -ENOENT when the program has none.
 */
VGPU_API int vgpu_program_data(const struct vgpu_program *prog,
			      struct vgpu_bo **bo);

/*
 * A kernel of the program by index or by name (-ENOENT when there is no
 * such kernel).  Kernels belong to their program: valid until it is freed.
 */
VGPU_API int vgpu_program_kernel(const struct vgpu_program *prog,
				 unsigned int index,
				 const struct vgpu_kernel **out);
VGPU_API int vgpu_program_find_kernel(const struct vgpu_program *prog,
				      const char *name,
				      const struct vgpu_kernel **out);

/* Parameter types (.param TYPE NAME in assembly). */
enum vgpu_arg_type {
	VGPU_ARG_U32 = VGPU_PARAM_U32,
	VGPU_ARG_S32 = VGPU_PARAM_S32,
	VGPU_ARG_F32 = VGPU_PARAM_F32,
	VGPU_ARG_U64 = VGPU_PARAM_U64,
	VGPU_ARG_S64 = VGPU_PARAM_S64,
	VGPU_ARG_PTR = VGPU_PARAM_PTR,
	/* the kernel's local memory (.local): every launch fills it in,
	 * no setter writes it, vgpu-run's --arg skips it */
	VGPU_ARG_LOCAL = VGPU_PARAM_LOCAL,
	/* the program's module data (.global): filled in like LOCAL */
	VGPU_ARG_DATA = VGPU_PARAM_DATA,
	/* the launch's printf buffer: filled in like LOCAL */
	VGPU_ARG_PRINTF = VGPU_PARAM_PRINTF,
	/* the address of the parameter buffer itself: filled in like LOCAL */
	VGPU_ARG_PARAMS = VGPU_PARAM_PARAMS,
	/* 1 and 2 bytes: vgpu_args_set_u32/s32 write the value's low bytes */
	VGPU_ARG_U8 = VGPU_PARAM_U8,
	VGPU_ARG_U16 = VGPU_PARAM_U16,
	/* %envreg0..31 (128 bytes): filled in like LOCAL, from
	 * vgpu_args_set_envreg() */
	VGPU_ARG_ENVREGS = VGPU_PARAM_ENVREGS,
};

/**
 * struct vgpu_kernel_info - a kernel's metadata
 * @name:        as declared with .kernel ("main" without one)
 * @entry:       byte offset of its first instruction in the program
 * @smem_static: bytes of its .shared allocations
 * @param_size:  bytes of its parameter buffer
 * @nparams:     declared parameters (0: the kernel reads an undeclared
 *               buffer; vgpu_args_set_raw() and vgpu_args_push_*() fill it)
 */
struct vgpu_kernel_info {
	const char *name;
	uint32_t entry;
	uint32_t smem_static;
	uint32_t param_size;
	uint32_t nparams;
};

/**
 * struct vgpu_arg_info - one declared parameter
 * @name:   its name
 * @type:   enum vgpu_arg_type
 * @offset: byte offset in the parameter buffer
 * @size:   1, 2, 4 or 8 (128 for VGPU_ARG_ENVREGS)
 */
struct vgpu_arg_info {
	const char *name;
	uint32_t type;
	uint32_t offset;
	uint32_t size;
};

VGPU_API void vgpu_kernel_info(const struct vgpu_kernel *kernel,
			       struct vgpu_kernel_info *info);
/* Parameter @index (-ENOENT past the last). */
VGPU_API int vgpu_kernel_arg(const struct vgpu_kernel *kernel,
			     unsigned int index, struct vgpu_arg_info *info);
/* Index of the parameter named @name, or -ENOENT. */
VGPU_API int vgpu_kernel_arg_index(const struct vgpu_kernel *kernel,
				   const char *name);

/* ------------------------------------------------------------------ */
/* Arguments                                                          */
/* ------------------------------------------------------------------ */

/*
 * The parameter buffer of one launch of @kernel, zero-filled, and the
 * buffers the launch uses.  An argument set may be reused for any number
 * of launches and changed between them; it is not locked: one thread at a
 * time.
 *
 * Setters address a declared parameter by index; their type must match
 * (-EINVAL otherwise: set_bo for ptr/u64, set_u64 for ptr/u64/s64 parameters, set_u32
 * for u32/s32, set_s32 for s32/u32, set_f32 for f32).  vgpu_args_set_bo()
 * writes the buffer's GPU address plus @offset and adds the buffer to the
 * launch's buffer list (implicit synchronisation: the job waits for earlier
 * jobs on it and later waits on it see this one).
 *
 * For kernels without declared parameters, vgpu_args_push_bo() and
 * vgpu_args_push_u64() append 8-byte values and vgpu_args_set_raw()
 * writes bytes at any offset (-E2BIG past VGPU_MAX_PARAM_BYTES).
 */
VGPU_API int vgpu_args_new(const struct vgpu_kernel *kernel,
			   struct vgpu_args **out);
VGPU_API void vgpu_args_free(struct vgpu_args *args);
VGPU_API int vgpu_args_set_bo(struct vgpu_args *args, unsigned int index,
			      struct vgpu_bo *bo, uint64_t offset);
VGPU_API int vgpu_args_set_u64(struct vgpu_args *args, unsigned int index,
			       uint64_t value);
VGPU_API int vgpu_args_set_u32(struct vgpu_args *args, unsigned int index,
			       uint32_t value);
VGPU_API int vgpu_args_set_s32(struct vgpu_args *args, unsigned int index,
			       int32_t value);
VGPU_API int vgpu_args_set_f32(struct vgpu_args *args, unsigned int index,
			       float value);
VGPU_API int vgpu_args_push_bo(struct vgpu_args *args, struct vgpu_bo *bo,
			       uint64_t offset);
VGPU_API int vgpu_args_push_u64(struct vgpu_args *args, uint64_t value);
VGPU_API int vgpu_args_set_raw(struct vgpu_args *args, uint32_t offset,
			       const void *data, uint32_t len);
/*
 * The first @len bytes of the parameter buffer (at most
 * VGPU_MAX_PARAM_BYTES, -E2BIG past it), for a caller that writes them
 * itself: the launches with @args pass at least @len bytes from then on.
 * *@out stays valid, and the bytes written there are what launches see,
 * until vgpu_args_free(); the setters above write the same bytes.
 */
VGPU_API int vgpu_args_bytes(struct vgpu_args *args, uint32_t len, void **out);
/* Add a buffer to the launch's buffer list without writing its address. */
VGPU_API int vgpu_args_use_bo(struct vgpu_args *args, struct vgpu_bo *bo);
/*
 * Environment register @index (0..VGPU_ENVREGS - 1, -EINVAL past them) of
 * the launches with @args: PTX's %envregN reads @value, and reads 0 for
 * the ones never set.  Any kernel takes them (one that reads none ignores
 * them); a buffer the value points into must be added (vgpu_args_use_bo()).
 */
VGPU_API int vgpu_args_set_envreg(struct vgpu_args *args, unsigned int index,
				  uint32_t value);

/* ------------------------------------------------------------------ */
/* Syncobjs                                                           */
/* ------------------------------------------------------------------ */

/*
 * DRM syncobjs (binary, or timeline when used with points).  Jobs wait on
 * and signal them through struct vgpu_sync_point; the host can signal,
 * wait and query them.
 */
#define VGPU_SYNCOBJ_SIGNALED (1u << 0) /* created already signalled */

VGPU_API int vgpu_syncobj_new(struct vgpu_device *dev, uint32_t flags,
			      struct vgpu_syncobj **out);
VGPU_API void vgpu_syncobj_free(struct vgpu_syncobj *s);
VGPU_API uint32_t vgpu_syncobj_handle(const struct vgpu_syncobj *s);

/* Signal @point from the host (0: the binary syncobj). */
VGPU_API int vgpu_syncobj_signal(struct vgpu_syncobj *s, uint64_t point);

/*
 * Wait until @point (0: the binary fence) has signalled, also waiting for
 * it to be submitted.  -ETIME when @timeout_ns passes first.
 */
VGPU_API int vgpu_syncobj_wait(struct vgpu_syncobj *s, uint64_t point,
			       int64_t timeout_ns);

/* The last signalled timeline point. */
VGPU_API int vgpu_syncobj_query(struct vgpu_syncobj *s, uint64_t *point);

/* ------------------------------------------------------------------ */
/* Queues                                                             */
/* ------------------------------------------------------------------ */

/*
 * Queue objects (DRM_IOCTL_VGPU_QUEUE_*, uapi/vgpu_drm.h "Queues"): an
 * ordered stream of launches with a priority, VGPU_QUEUE_PRIORITY_LOW ..
 * _REALTIME (HIGH and REALTIME need CAP_SYS_NICE: -EPERM).  A launch
 * without a queue goes to the device's default queue (normal priority).
 * vgpu_queue_destroy(): launches already on the device complete, those
 * still waiting for dependencies end with -ESRCH (drm_sched's killed
 * entity).
 */
VGPU_API int vgpu_queue_new(struct vgpu_device *dev, uint32_t priority,
			    struct vgpu_queue **out);
VGPU_API void vgpu_queue_free(struct vgpu_queue *queue);
/*
 * A user-mode queue (DRM_IOCTL_VGPU_USERQ_*, uapi/vgpu_drm.h "User-mode
 * queues"), in the device's VM 0 like every libvgpu buffer: launches on it
 * (vgpu_launch_config.queue) write the ring and ring the doorbell with no
 * ioctl; vgpu_job_wait() reads the job's user fence and sleeps in
 * WAIT_USER_FENCE only when it has to.  Such launches take no sync points
 * (a user queue makes no dma_fence: @wait or @signal set is -EINVAL) and
 * do not appear in GET_JOB's history.  The first failed launch stops the
 * queue: its job reports the failure, jobs behind it -ECANCELED, and once
 * a wait has seen the stop, later launches -EIO (vgpu_queue_state():
 * BANNED with ban_reason).  -ENODEV
 * where the device keeps no hardware queue for user mode
 * (VGPU_PARAM_USER_QUEUES), -EBUSY while all are taken.  The sim backend
 * models them: the doorbell runs the commands at once.
 */
VGPU_API int vgpu_queue_new_user(struct vgpu_device *dev, uint32_t priority,
				 struct vgpu_queue **out);
/* The queue id SUBMIT names (0 for the default queue: @queue NULL). */
VGPU_API uint32_t vgpu_queue_id(const struct vgpu_queue *queue);

/**
 * struct vgpu_queue_state - DRM_IOCTL_VGPU_QUEUE_GET_STATE's answer
 * @state:           VGPU_QUEUE_STATE_ACTIVE or _BANNED
 * @priority:        VGPU_QUEUE_PRIORITY_*
 * @guilty_resets:   resets its jobs caused
 * @innocent_resets: resets its jobs were caught in (and run again)
 * @ban_reason:      positive errno that banned it, 0 if not banned
 * @hw_queue:        hardware queue of its latest job
 * @submitted:       jobs submitted to it
 * @completed:       of those, jobs whose fence has signalled
 */
struct vgpu_queue_state {
	uint32_t state;
	uint32_t priority;
	uint32_t guilty_resets;
	uint32_t innocent_resets;
	uint32_t ban_reason;
	uint32_t hw_queue;
	uint64_t submitted;
	uint64_t completed;
};

/* The state of @queue of @dev (NULL: the default queue). */
VGPU_API int vgpu_queue_state(struct vgpu_device *dev,
			      const struct vgpu_queue *queue,
			      struct vgpu_queue_state *st);

/* ------------------------------------------------------------------ */
/* Launches and jobs                                                  */
/* ------------------------------------------------------------------ */

/**
 * struct vgpu_sync_point - a syncobj and a timeline point (0 = binary)
 */
struct vgpu_sync_point {
	struct vgpu_syncobj *syncobj;
	uint64_t point;
};

/**
 * struct vgpu_launch_config - how to launch a kernel
 * @grid:       CTAs in x, y, z; 0 counts as 1
 * @block:      threads per CTA in x, y, z; 0 counts as 1
 * @cluster:    CTAs per cluster in x, y, z; 0 counts as 1
 * @smem_bytes: dynamic shared memory per CTA, added to the kernel's
 *              .shared bytes
 * @queue:      the queue (vgpu_queue_new(), same device), NULL for the
 *              default queue
 * @flags:      VGPU_LAUNCH_RANDOM_SCHED, VGPU_LAUNCH_SANITIZE,
 *              VGPU_LAUNCH_COOPERATIVE (uapi/vgpu_hw.h)
 * @seed:       scheduler seed for VGPU_LAUNCH_RANDOM_SCHED
 * @budget:     warp-instruction limit, 0 = the device's default
 * @wait:       the job starts when every one of these has signalled; each
 *              must already have a fence (-EINVAL otherwise, as the driver)
 * @nwait:      entries in @wait
 * @signal:     each gets the job's completion fence
 * @nsignal:    entries in @signal
 *
 * A zero-initialised config launches one CTA of one thread on the
 * default queue.
 */
struct vgpu_launch_config {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint32_t smem_bytes;
	uint32_t flags;
	struct vgpu_queue *queue;
	uint64_t seed;
	uint64_t budget;
	const struct vgpu_sync_point *wait;
	unsigned int nwait;
	const struct vgpu_sync_point *signal;
	unsigned int nsignal;
};

/*
 * Check @config against the directives @kernel was compiled with (PTX
 * .reqntid, .maxntid, .reqnctapercluster, .explicitcluster,
 * .maxclusterrank): 0, or -EINVAL with a message naming the directive in
 * @msg (may be NULL).  vgpu_kernel_launch() makes the same check; a
 * config whose cluster is 1x1x1 (or zero) gets the kernel's
 * .reqnctapercluster shape there, as CUDA launches a kernel compiled with
 * __cluster_dims__.
 */
VGPU_API int vgpu_kernel_launch_check(const struct vgpu_kernel *kernel,
				      const struct vgpu_launch_config *config, char *msg,
				      size_t len);

/*
 * Launch @kernel (on its program's device) with @args (NULL: an empty
 * parameter buffer, allowed only for kernels without parameters).  On
 * success *@job is the completion handle (NULL @job: fire and forget).
 * Errors are the driver's: -EINVAL for a bad config, -E2BIG for too many
 * buffers or sync points, -ENOENT for a syncobj of another device,
 * -ENODEV for a closed device.  Problems only the device sees (too much
 * shared memory, a cluster that does not tile the grid) are the job's
 * exception (VGPU_EXC_BAD_LAUNCH).
 */
VGPU_API int vgpu_kernel_launch(const struct vgpu_kernel *kernel,
				const struct vgpu_launch_config *config,
				const struct vgpu_args *args,
				struct vgpu_job **job);

/*
 * Wait for the job.  0 when it completed successfully; -ETIME when
 * @timeout_ns passed first (the job goes on); otherwise how it failed:
 * -EIO a device exception (vgpu_job_exception() has the record), -EFAULT
 * an MMU fault (also a record), -ETIMEDOUT stopped by the driver's timeout
 * (the device was reset), -ECANCELED it could not run.  -ENOENT: the
 * driver no longer remembers the job (it keeps the last VGPU_JOB_HISTORY
 * jobs of each device file; wait before launching that many more).  On
 * sim the job has run when vgpu_kernel_launch() returns and its handle
 * holds how it ended: never -ENOENT there.
 */
VGPU_API int vgpu_job_wait(struct vgpu_job *job, int64_t timeout_ns);

/**
 * struct vgpu_job_status - how a job ended (or where it is)
 * @state:      VGPU_JOB_QUEUED, _RUNNING, _DONE or _FAILED (uapi/vgpu_drm.h)
 * @error:      positive errno of its failure, 0 if none
 * @hw_status:  the device's completion status (VGPU_ERR_*)
 * @queue:      queue id it was submitted to (vgpu_queue_id())
 * @hw_queue:   hardware queue it ran on
 * @warp_insns: warp-instructions it executed
 * @elapsed_ns: device time it took
 */
struct vgpu_job_status {
	uint32_t state;
	uint32_t error;
	uint32_t hw_status;
	uint32_t queue;
	uint32_t hw_queue;
	uint64_t warp_insns;
	uint64_t elapsed_ns;
};

VGPU_API int vgpu_job_status(struct vgpu_job *job, struct vgpu_job_status *st);

/*
 * What the job's kernel printed (device-side printf, a kernel with a
 * VGPU_ARG_PRINTF parameter: PTX's vprintf), formatted once the job has
 * completed (vgpu_job_wait()); NULL if it printed nothing or has not
 * completed.  Valid until vgpu_job_free().  Records that did not fit the
 * launch's 1 MiB buffer are counted in a closing line.  A launch without
 * a job handle prints nowhere.
 */
VGPU_API const char *vgpu_job_printf(struct vgpu_job *job);

/*
 * Timelines.  A launch with VGPU_LAUNCH_TIMELINE in its config's flags
 * records what its warps, barriers, mbarriers and copies did (struct
 * vgpu_trace_event, uapi/vgpu_hw.h "Timeline") into a buffer of
 * vgpu_device_set_timeline_bytes() bytes (VGPU_TIMELINE_DEFAULT_BYTES
 * unless set; a multiple of 8 from 32 to VGPU_TRACE_MAX_BYTES, -EINVAL
 * otherwise), on sim and drm alike.  Events that do not fit are counted
 * as dropped.  Once the job has completed (also with an exception):
 *
 * vgpu_job_timeline(): its records, valid until vgpu_job_free(), and the
 *   number dropped.  -ENODATA: the launch had no VGPU_LAUNCH_TIMELINE or
 *   never started; -EBUSY: not completed yet; -EIO: the buffer does not
 *   hold a timeline the device wrote (a kernel overwrote it).
 * vgpu_job_write_timeline(): the Chrome trace-event JSON that
 *   ui.perfetto.dev and chrome://tracing open (docs/tools.md).
 * vgpu_job_write_deadlock_graph(): for a job that raised an exception,
 *   the wait-for graph as Graphviz DOT (warps, barriers and mbarriers;
 *   who waits on what, who would arrive, the cycle or the missing
 *   arrival highlighted); from the exception record alone when there is
 *   no timeline.  -ENOENT when the job raised none.
 */
#define VGPU_TIMELINE_DEFAULT_BYTES (8u << 20)

VGPU_API int vgpu_device_set_timeline_bytes(struct vgpu_device *dev,
					    uint64_t bytes);

/*
 * The device heap: where kernels' malloc and new take memory from (PTX's
 * malloc/free, docs/ptx.md).  One per device, made by the first launch of
 * a kernel whose program calls malloc or free, kept until the device is
 * closed: a block malloc'd by one launch may be used and freed by later
 * ones.  vgpu_device_set_heap_size(): its size, from
 * VGPU_HEAP_DEFAULT_BYTES (8 MiB, CUDA's default), 1 KiB to
 * VGPU_HEAP_MAX_BYTES (-EINVAL otherwise), -EBUSY once the heap is made.
 * vgpu_device_heap_size(): the size set (or made).
 */
#define VGPU_HEAP_DEFAULT_BYTES (8ull << 20)
#define VGPU_HEAP_MIN_BYTES 1024ull
#define VGPU_HEAP_MAX_BYTES (4ull << 30) /* its offsets are 32-bit */

VGPU_API int vgpu_device_set_heap_size(struct vgpu_device *dev, uint64_t bytes);
VGPU_API int vgpu_device_heap_size(struct vgpu_device *dev, uint64_t *bytes);

/*
 * Device-side launch (CUDA dynamic parallelism): the launches of a
 * program whose kernels launch kernels carry the device's device-launch
 * area (uapi/vgpu_hw.h, struct vgpu_cdp_header), made by the first such
 * launch with room for the pending launches vgpu_device_set_cdp_pending()
 * set (1..VGPU_CDP_MAX_PENDING, else -EINVAL; CUDA's
 * cudaLimitDevRuntimePendingLaunchCount, default 2048): a kernel's launch
 * past them fails with cudaErrorLaunchPendingCountExceeded.  Once the area
 * is made, a count above its room gives -EBUSY; a smaller one applies to
 * the launches that follow.  Not with user queues (their launches carry
 * no area: a device-side launch there fails with cudaErrorNotSupported).
 */
#define VGPU_CDP_DEFAULT_PENDING 2048u
#define VGPU_CDP_MAX_PENDING 65536u

VGPU_API int vgpu_device_set_cdp_pending(struct vgpu_device *dev, uint32_t count);
VGPU_API int vgpu_device_cdp_pending(struct vgpu_device *dev, uint32_t *count);

/*
 * The device runtime's queries in device code (the PTX front end's
 * cudaGetDevice, cudaGetDeviceCount, cudaDeviceGetAttribute and
 * cudaFuncGetAttributes: libvgpu/ptx/ptx_devrt.c) answer from module
 * variables that whoever loads the module fills with the host's answers
 * (libcuda does, when it loads a module): VGPU_DEVRT_INFO, a struct
 * vgpu_devrt_info (the module's device's ordinal, the device count, and
 * for each of the first VGPU_DEVRT_DEVICES devices and each attribute
 * 1..VGPU_DEVRT_ATTRS-1 the host's error (0 or a cudaError_t) and value),
 * and VGPU_DEVRT_FUNCATTR_BYTES at VGPU_DEVRT_FUNCATTR_OFF of each kernel
 * descriptor variable ("$vgpu$kd$K", K the kernel's index): the first
 * fields of its struct cudaFuncAttributes (shared, const and local sizes
 * as 64-bit values, then maximum threads per block, registers, PTX and
 * binary versions), what a device-side cudaFuncGetAttributes writes, as
 * on an H200; and, in a module that declares the device-side occupancy
 * function, VGPU_DEVRT_OCC: a struct vgpu_devrt_occ for each kernel, in
 * the order of their indices (a descriptor's index is its 16-bit word at
 * byte 62), from which cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * answers as the host's calculator does (libvgpu/cuda/cu_occupancy.c;
 * libcuda fills them again when a function's or its context's shared
 * memory settings change).  Zeros where nobody filled them.
 */
#define VGPU_DEVRT_INFO "$vgpu$devinfo"
#define VGPU_DEVRT_DEVICES 8
#define VGPU_DEVRT_ATTRS 148 /* CUDA 13's CU_DEVICE_ATTRIBUTE_MAX */
#define VGPU_DEVRT_FUNCATTR_OFF 64
#define VGPU_DEVRT_FUNCATTR_BYTES 40

#define VGPU_DEVRT_OCC "$vgpu$occ"
#define VGPU_DEVRT_OCC_WARPS 64
#define VGPU_DEVRT_OCC_NEEDS 8192 /* 128-byte units: 1 MiB */

/*
 * @max_dyn:     the most dynamic shared memory (more: 0 CTAs)
 * @fixed:       static shared memory and what the device reserves of a CTA
 * @max_threads: the device's (a larger block: 0 CTAs)
 * @warp_size:   threads per warp
 * @but_smem:    by the block's warps (1..): CTAs over all but shared memory
 * @by_need:     by fixed + dynamic bytes rounded up to 128, in 128-byte
 *               units: CTAs over shared memory (at most 65535)
 */
struct vgpu_devrt_occ {
	uint32_t max_dyn;
	uint32_t fixed;
	uint32_t max_threads;
	uint32_t warp_size;
	uint32_t but_smem[VGPU_DEVRT_OCC_WARPS];
	uint16_t by_need[VGPU_DEVRT_OCC_NEEDS];
};

struct vgpu_devrt_info {
	int32_t ordinal;
	int32_t count;
	struct {
		int32_t err;
		int32_t value;
	} attr[VGPU_DEVRT_DEVICES][VGPU_DEVRT_ATTRS];
};
VGPU_API int vgpu_job_timeline(struct vgpu_job *job,
			       const struct vgpu_trace_event **events,
			       uint32_t *count, uint64_t *dropped);
VGPU_API int vgpu_job_write_timeline(struct vgpu_job *job, FILE *f);
VGPU_API int vgpu_job_write_deadlock_graph(struct vgpu_job *job, FILE *f);

/*
 * The job's exception record (-ENODATA when it raised none, -EBUSY while
 * it has not completed).
 */
VGPU_API int vgpu_job_exception(struct vgpu_job *job,
				struct vgpu_exception_record *rec);

/*
 * A readable account of the job's exception: its name, CTA, warp and
 * lanes, the faulting instruction disassembled from the job's program,
 * barrier, address, message, and for a deadlock what each warp waits
 * for; several lines, truncated to @len.  Returns the length it wanted
 * (like snprintf) or -ENODATA / -EBUSY as vgpu_job_exception().
 */
VGPU_API int vgpu_job_describe(struct vgpu_job *job, char *buf, size_t len);

/* Frees the handle; the job itself runs to completion.  NULL is a no-op. */
VGPU_API void vgpu_job_free(struct vgpu_job *job);

/*
 * The same text for a record got elsewhere (the instruction is
 * disassembled from the record's own copy of it; @nwarps: warps per CTA of
 * the launch, for a deadlock's per-warp lines).
 */
VGPU_API int vgpu_exception_describe(const struct vgpu_exception_record *rec,
				     uint32_t nwarps, char *buf, size_t len);

/* Name of an exception code ("DEADLOCK"), or "UNKNOWN". */
VGPU_API const char *vgpu_exception_name(uint32_t code);

#ifdef __cplusplus
}
#endif

#endif /* VGPU_H */
