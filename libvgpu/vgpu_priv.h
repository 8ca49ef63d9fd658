/* SPDX-License-Identifier: MIT */
/*
 * libvgpu internals: the real structs behind vgpu.h's opaque types and the
 * contract between the front end (device.c, bo.c, program.c, launch.c) and
 * the two backends (drm.c, sim/sim.c).
 *
 * The front end speaks only ioctls: every operation, on either backend, is
 * a call of vgpu_dev_ioctl() with a DRM ioctl request and its uAPI struct
 * (uapi/vgpu_drm.h for the driver's own, <drm.h> for GEM_CLOSE, PRIME and
 * SYNCOBJ), returning 0 or -errno.  The drm backend hands them to the
 * kernel; the sim backend answers them in process with the same checks and
 * the same error codes as vgpu.ko.  Besides ioctls a backend maps and
 * unmaps buffer objects (mmap of the fake offset BO_MMAP_OFFSET returns).
 */
#ifndef VGPU_PRIV_H
#define VGPU_PRIV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "vgpu.h"
#include "vgpu_asm.h"
#include "ptx/ptx.h"

#define VGPU_HIDDEN __attribute__((visibility("hidden")))

struct vgpu_sim;

/**
 * struct vgpu_backend_ops - what differs between drm and sim
 * @ioctl:  one ioctl; 0 or -errno (restarted on EINTR/EAGAIN by drm)
 * @mmap:   map @size bytes at fake offset @offset read-write, shared
 * @munmap: undo @mmap
 * @mmap_ro: the same read-only (a user queue's completion ring)
 * @mmap_at: @mmap at exactly @addr, replacing nothing: -EEXIST when a
 *          mapping of the process already lies in [@addr, @addr + @size)
 *          (vgpu_bo_map_at_gpu_address())
 * @doorbell: ring user queue @id's doorbell, mapped at @db, with @tail:
 *          a store on drm; the sim runs the commands
 * @close:  release the backend's state (the DRM fd, the simulator)
 * @sync_submit: jobs have completed when SUBMIT returns (sim): the front
 *          end then needs no completion syncobj per job and no idle check
 *          before reusing a parameter page
 * @submit_job: optional, with @sync_submit: SUBMIT @s and, once accepted,
 *          read back how the job ended into @g and @exc as GET_JOB with
 *          @s's job id would, in one call (a job handle then needs no
 *          GET_JOB); 0 or SUBMIT's -errno.  @exc comes zeroed and is
 *          written only for a job that raised an exception.  With
 *          @host_params the launch's parameter bytes are those (its
 *          param_size of them), not a parameter page's: @s then names
 *          no parameter page (launch.c, launch_inline())
 */
struct vgpu_backend_ops {
	int (*ioctl)(struct vgpu_device *dev, unsigned long request, void *arg);
	int (*mmap)(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		    void **ptr);
	int (*mmap_ro)(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		       void **ptr);
	int (*mmap_at)(struct vgpu_device *dev, uint64_t offset, uint64_t size,
		       void *addr);
	int (*munmap)(struct vgpu_device *dev, void *ptr, uint64_t size);
	void (*doorbell)(struct vgpu_device *dev, uint32_t id,
			 volatile uint32_t *db, uint32_t tail);
	void (*close)(struct vgpu_device *dev);
	bool sync_submit;
	int (*submit_job)(struct vgpu_device *dev, struct drm_vgpu_submit *s,
			  const void *host_params, struct drm_vgpu_get_job *g,
			  struct vgpu_exception_record *exc);
};

/**
 * struct vgpu_device - an open device (one DRM file, or one simulator)
 * @refs:     the caller's reference plus one per live bo, program,
 *            syncobj and job; the last vgpu_dev_put() frees it
 * @closed:   set by vgpu_device_close(): new objects and launches give
 *            -ENODEV
 * @fd:       the DRM fd (drm backend), -1 on sim
 * @sim:      the simulator (sim backend), NULL on drm
 * @lock:     protects @bos and @job_syncs
 * @param_lock: protects @param_bos; held from taking a page until the
 *            SUBMIT that uses it has attached its fence
 * @bos:      every live struct vgpu_bo of the device, so that importing a
 *            buffer the device already holds finds the same one
 * @job_syncs: free binary syncobjs for jobs' completion (a pool: a job
 *            takes one and gives it back when freed)
 * @param_bos: parameter pages of launches (see param_page_get()); a page
 *            is reused once the job that read it has completed
 * @param_seq: submission counter, to find the oldest busy page
 */
struct vgpu_device {
	const struct vgpu_backend_ops *ops;
	enum vgpu_backend backend;
	atomic_uint refs;
	atomic_bool closed;
	int fd;
	struct vgpu_sim *sim;
	char node[64];
	char pci_slot[32];
	char driver[64];
	pthread_mutex_t lock;
	struct vgpu_bo **bos;
	unsigned int nbos, bos_cap;
	uint32_t *job_syncs;
	unsigned int njob_syncs, job_syncs_cap;
	pthread_mutex_t param_lock;
	uint64_t timeline_bytes; /* 0: VGPU_TIMELINE_DEFAULT_BYTES */
	char *timeline_dir;	 /* $VGPU_TIMELINE_DIR when opened, or NULL */
	bool inline_params;	 /* plain launches hand their parameters to
				    ops->submit_job (launch.c, launch_inline()) */
	struct vgpu_param_bo *param_bos;
	unsigned int nparam_bos, param_bos_cap;
	uint64_t param_seq;
	/* the device heap (heap.c), made by the first launch that wants it */
	pthread_mutex_t heap_lock; /* protects the heap_ fields */
	uint64_t heap_size;	   /* 0: VGPU_HEAP_DEFAULT_BYTES */
	uint32_t heap_handle;	   /* 0: not made yet */
	uint64_t heap_va;
	uint8_t *heap_map;
	/* the device-launch area (cdp.c), made by the first launch that wants
	 * it; under heap_lock */
	uint32_t cdp_pending;  /* slots wanted, 0: VGPU_CDP_DEFAULT_PENDING */
	uint32_t cdp_capacity; /* slots made */
	uint32_t cdp_handle;   /* 0: not made yet */
	uint64_t cdp_va, cdp_size;
	uint8_t *cdp_map;
	/* a launch with the area: its SUBMIT and the collection of its
	 * children's printf records, one at a time */
	pthread_mutex_t cdp_run_lock;
	/* the children's local memory and printf buffer (struct vgpu_cdp_header) */
	uint32_t cdp_lmem_handle, cdp_printf_handle;
	uint64_t cdp_lmem_va, cdp_printf_va;
	uint8_t *cdp_lmem_map, *cdp_printf_map;
};

/* A parameter page: one launch's parameter buffer at a time. */
enum vgpu_param_state {
	PARAM_IDLE, /* its last job is known to have completed */
	PARAM_BUSY, /* submitted; WAIT_BO tells when it is idle */
	PARAM_HELD, /* submitted; its job handle gives it back */
	PARAM_USERQ, /* launched on user queue @uq as job @useq */
};

struct vgpu_param_bo {
	uint32_t handle;
	uint8_t state; /* enum vgpu_param_state */
	uint64_t seq;  /* when it was last submitted */
	struct vgpu_userq *uq; /* PARAM_USERQ (no reference: a queue that
				* goes makes its pages idle) */
	uint64_t useq;
	uint64_t va;
	uint8_t *map;
	/* the local memory of the page's launch (0: none yet), grown on
	 * demand, idle when the page is */
	uint32_t local_handle;
	uint64_t local_va, local_size;
	/* the printf buffer of the page's launch (0: none yet) */
	uint32_t printf_handle;
	uint64_t printf_va;
	uint8_t *printf_map;
	/* the timeline buffer of the page's launch (0: none yet) */
	uint32_t tl_handle;
	uint64_t tl_va, tl_size;
	uint8_t *tl_map;
};

/* Bytes of a launch's printf buffer (header included), as CUDA's default. */
#define VGPU_PRINTF_BYTES (1u << 20)

/* @refs: imports of a buffer the device holds return the same struct. */
struct vgpu_bo {
	struct vgpu_device *dev;
	atomic_uint refs;
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t va;
	pthread_mutex_t lock; /* protects @map and @gpu_map */
	void *map;
	void *gpu_map; /* vgpu_bo_map_at_gpu_address()'s, at @va, or NULL */
};

struct vgpu_kernel {
	const struct vgpu_program *prog;
	const struct vgpu_obj_kernel *obj; /* in prog->obj */
	struct ptx_kattrs attrs; /* PTX directives the launch honours (launch.c) */
	/* what every launch would otherwise work out again (program.c) */
	uint32_t param_types;	 /* a bit per enum vgpu_param_type (< 32) among
				    its parameters */
	uint32_t extra_bos;	 /* vgpu_kernel_extra_bos() */
	bool needs_args;	 /* parameters the launch does not fill in */
	bool inline_params;	 /* its parameters need no page: no parameter
				    the launch fills in, no extra buffer
				    (launch.c, launch_inline()) */
	bool has_attrs;		 /* @attrs has a directive launch_check() checks
				    (vgpu_kernel_attrs_set()) */
	char *ptx_name;		 /* its .entry's name (from PTX; malloc'd), or NULL:
				    the object's name may be shortened (ptx.c) */
};

struct vgpu_program {
	struct vgpu_device *dev;
	struct vgpu_object obj;
	struct vgpu_kernel *kernels; /* obj.nkernels */
	struct vgpu_bo *code;	     /* the code, read-only */
	struct vgpu_bo *data;	     /* module data (VGPU_PARAM_DATA), or NULL */
	bool uses_heap;		     /* its data has VGPU_RELOC_HEAP64 words */
	atomic_bool heap_set;	     /* ... and they hold the heap's address */
	bool uses_cdp;		     /* device-side launch: VGPU_RELOC_KDESC words */
};

/* heap.c: the device heap of device malloc (docs/ptx.md) */
#define VGPU_HEAP_HEADER_BYTES 512 /* bump, limit, free lists (ptx_heap.c) */
/* Make the heap if need be, write its address into @prog's data; its handle. */
int vgpu_heap_attach(const struct vgpu_program *prog, uint32_t *handle);
void vgpu_heap_fini(struct vgpu_device *dev);
/*
 * cdp.c: the device-launch area (device-side launch); made if need be.
 * @handles: its 3 buffer objects (VGPU_CDP_BOS), for the launch's list.
 */
#define VGPU_CDP_BOS 3
#define VGPU_CDP_LOCAL_BYTES (64ull << 20) /* the children's local memory */
int vgpu_cdp_attach(struct vgpu_device *dev, uint32_t *handles, uint64_t *va);
/* What the children of the launch just run printed (the sim: synchronous). */
char *vgpu_cdp_printf_collect(struct vgpu_device *dev, const struct vgpu_program *prog);
void vgpu_cdp_fini(struct vgpu_device *dev);
int vgpu_mapped_bo(struct vgpu_device *dev, uint64_t size, uint32_t *handle, uint64_t *va,
		   uint8_t **map);

struct vgpu_args {
	const struct vgpu_kernel *kernel;
	uint8_t data[VGPU_MAX_PARAM_BYTES];
	uint32_t size;	   /* bytes of @data passed to the launch */
	uint32_t envreg[VGPU_ENVREGS]; /* .param envregs (vgpu_args_set_envreg) */
	uint32_t *handles; /* BO handles the launch uses */
	unsigned int nhandles, cap;
	struct vgpu_device *dev; /* of the first BO, to reject others' */
};

struct vgpu_syncobj {
	struct vgpu_device *dev;
	uint32_t handle;
};

struct vgpu_queue {
	struct vgpu_device *dev;
	uint32_t id;
	struct vgpu_userq *uq; /* a user-mode queue (userq.c), or NULL */
};

/*
 * A user-mode queue's mappings and launch state (userq.c).  @refs: the
 * queue and each of its jobs; the last one destroys it (and makes the
 * parameter pages of its launches idle).  @lock protects @tail and @seq.
 */
struct vgpu_userq {
	atomic_uint refs;
	struct vgpu_device *dev;
	uint32_t id;
	uint32_t hw_queue;
	uint32_t entries;
	uint64_t cpl_bytes;
	uint8_t *ring;
	const volatile struct vgpu_completion *cpl;
	volatile uint32_t *db;
	struct vgpu_bo *fence;
	volatile uint64_t *fence_map;
	uint64_t fence_va;
	pthread_mutex_t lock;
	uint32_t tail;
	uint64_t seq;
	atomic_bool stopped;	/* a wait saw it stop: launches -EIO */
};

struct vgpu_job {
	struct vgpu_device *dev;
	char kernel[VGPU_OBJ_NAME_MAX];	 /* what it ran, for describing */
	uint32_t entry;			 /* its exception */
	uint64_t id;			 /* driver job id */
	uint32_t sync;			 /* binary syncobj signalled at its end
					    (0 with ops->sync_submit) */
	uint32_t nwarps;		 /* warps per CTA, for describe */
	int param_idx;			 /* its parameter page, -1 once given
					    back (dev->param_lock) */
	bool done;			 /* status fetched after the end */
	const struct vgpu_program *printf_prog; /* its kernel prints */
	/* device-side launches on an asynchronous backend: the area's printf
	 * records are collected when it has completed (cdp.c) */
	const struct vgpu_program *cdp_prog;
	char *printf_text;		 /* what it printed, once collected */
	uint32_t grid[3], block[3], cluster[3];
	bool tl_wanted;			 /* VGPU_LAUNCH_TIMELINE */
	bool tl_collected;
	int tl_status;			 /* of reading it, once collected */
	struct vgpu_trace_event *tl_ev;
	uint32_t tl_n;
	uint64_t tl_dropped;
	struct drm_vgpu_get_job status;
	struct vgpu_userq *uq;		 /* launched on a user queue (a
					    reference), its sequence number
					    and the ring slot of its LAUNCH */
	uint64_t useq;
	uint32_t uslot;
	/*
	 * Last: a new record zeroes what comes before and @exc.code alone
	 * (vgpu_job_alloc()); the rest is read only where the code is not
	 * VGPU_EXC_NONE, after whatever set the code wrote the whole record.
	 */
	struct vgpu_exception_record exc;
};

/* ---- device-side printf (printf.c) ---- */
/* Argument bytes and count of format @fmt; -1 for a conversion C cannot pass (%n). */
VGPU_HIDDEN int vgpu_printf_layout(const char *fmt, size_t len, uint32_t *nbytes,
				   int *nargs);
/* The records of printf buffer @buf formatted (malloc'd), NULL if none. */
VGPU_HIDDEN char *vgpu_printf_collect(const struct vgpu_program *prog, const uint8_t *buf);

/* ---- front end helpers (device.c) ---- */
/*
 * mmap(@addr, @size, @prot, MAP_SHARED | MAP_FIXED_NOREPLACE, @fd, @off):
 * exactly at @addr or -EEXIST (also on kernels before 4.17, which took
 * the flag for a hint), -ENOMEM past the process's address space.
 */
VGPU_HIDDEN int vgpu_mmap_fixed(void *addr, uint64_t size, int prot, int fd,
				uint64_t off);
VGPU_HIDDEN int vgpu_dev_ioctl(struct vgpu_device *dev, unsigned long request,
			       void *arg);
VGPU_HIDDEN void vgpu_dev_get(struct vgpu_device *dev);
VGPU_HIDDEN void vgpu_dev_put(struct vgpu_device *dev);
/* ---- jobs (job.c) and their parameter pages (launch.c) ---- */
/* A binary syncobj for a job's completion, from @dev's pool; back to it. */
VGPU_HIDDEN int vgpu_job_sync_get(struct vgpu_device *dev, uint32_t *handle);
VGPU_HIDDEN void vgpu_job_sync_put(struct vgpu_device *dev, uint32_t handle);
/* A zeroed job record (the thread's spare, or new), NULL without memory. */
VGPU_HIDDEN struct vgpu_job *vgpu_job_alloc(void);
/* @job's launch @l of @k was accepted as job @id of @dev. */
VGPU_HIDDEN void vgpu_job_launched(struct vgpu_job *job, struct vgpu_device *dev,
				   const struct vgpu_obj_kernel *k, uint64_t id,
				   const struct drm_vgpu_launch *l);
/* The job gives its parameter page back (@completed: idle, else busy). */
VGPU_HIDDEN void vgpu_param_page_release(struct vgpu_job *job, bool completed);
/* -ENODEV once vgpu_device_close() was called, else 0. */
VGPU_HIDDEN int vgpu_dev_check(const struct vgpu_device *dev);
/* Absolute CLOCK_MONOTONIC nanoseconds @timeout_ns from now (saturating). */
VGPU_HIDDEN int64_t vgpu_abs_timeout(int64_t timeout_ns);
/*
 * A wait with absolute @deadline (vgpu_abs_timeout) that returned -ETIME
 * early: DRM's syncobj waits round the time left down to whole jiffies
 * (drm_timeout_abs_to_jiffies), so they can end up to a tick before the
 * deadline.  True while the deadline is still ahead: wait again.
 */
VGPU_HIDDEN bool vgpu_deadline_ahead(int64_t deadline);

/* ---- argument sets (args.c) ---- */
/* Does the kernel have a parameter of @type (one the launch fills in)? */
static inline unsigned vgpu_kernel_has_param(const struct vgpu_kernel *kernel, uint32_t type)
{
	return type < 32 && (kernel->param_types >> type & 1);
}
/* The buffers the launch adds for the kernel beyond code and parameters. */
static inline unsigned vgpu_kernel_extra_bos(const struct vgpu_kernel *kernel)
{
	return kernel->extra_bos;
}
/* Set @kernel's param_types, extra_bos and needs_args (its program made). */
VGPU_HIDDEN void vgpu_kernel_facts(struct vgpu_kernel *kernel);
/* Set @kernel's has_attrs from its @attrs (after any change to them). */
static inline void vgpu_kernel_attrs_set(struct vgpu_kernel *kernel)
{
	const struct ptx_kattrs *a = &kernel->attrs;

	kernel->has_attrs = a->reqntid[0] || a->maxntid[0] || a->reqnctapercluster[0] ||
			    a->explicitcluster || a->maxclusterrank;
}
/* @v's low @size bytes, little-endian, at @p. */
VGPU_HIDDEN void vgpu_put_le(uint8_t *p, uint64_t v, uint32_t size);

/* ---- syncobjs (syncobj.c) ---- */
/* Wait for @handle's @point (0: a binary syncobj), @timeout_ns relative. */
VGPU_HIDDEN int vgpu_sync_wait(struct vgpu_device *dev, uint32_t handle,
			       uint64_t point, int64_t timeout_ns);

/* ---- user-mode queues (userq.c) ---- */
VGPU_HIDDEN void vgpu_userq_get(struct vgpu_userq *uq);
VGPU_HIDDEN void vgpu_userq_put(struct vgpu_userq *uq);
VGPU_HIDDEN bool vgpu_userq_seq_done(const struct vgpu_userq *uq, uint64_t seq);
VGPU_HIDDEN int vgpu_userq_wait_seq(struct vgpu_userq *uq, uint64_t seq,
				    int64_t deadline);
/* Write @l (and its timeline buffer) and a release of the next sequence
 * number, ring the doorbell: the job's *@seq and LAUNCH slot *@slot. */
VGPU_HIDDEN int vgpu_userq_launch(struct vgpu_userq *uq,
				  const struct drm_vgpu_launch *l,
				  uint64_t trace_va, uint64_t trace_size,
				  uint64_t *seq, uint32_t *slot);
/* Wait up to @timeout_ns (relative) for @job, then fill its status: 0,
 * -ETIME. */
VGPU_HIDDEN int vgpu_userq_job_fetch(struct vgpu_job *job, int64_t timeout_ns);

/* ---- backends ---- */
/* drm.c: adopt @fd (owned from now on); -ENODEV when it is not vgpu. */
VGPU_HIDDEN int vgpu_drm_init(struct vgpu_device *dev, int fd);
/* sim/sim.c: a new simulated device behind @dev. */
VGPU_HIDDEN int vgpu_sim_init(struct vgpu_device *dev);
VGPU_HIDDEN int vgpu_sim_set_option(struct vgpu_device *dev,
				    enum vgpu_sim_option option,
				    uint64_t value);
VGPU_HIDDEN int vgpu_sim_set_trace(struct vgpu_device *dev, FILE *f);

#endif /* VGPU_PRIV_H */
