/* SPDX-License-Identifier: MIT */
/*
 * libvgpu sim backend internals: the state of one simulated device (one
 * "DRM file" of vgpu.ko answered in process) shared by sim.c (device,
 * ioctl dispatch, GET_PARAM), sim_bo.c (buffer objects, GPU address
 * space, PRIME, the core's global memory), sim_job.c (SUBMIT, GET_JOB)
 * and sim_syncobj.c (DRM syncobjs).  See the DOC comment in sim.c.
 */
#ifndef VGPU_SIM_PRIV_H
#define VGPU_SIM_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vgpu_core.h"
#include "vgpu_priv.h"

/* What vgpu.ko and a default vgpu-pci device report (kernel/vgpu_drv.h). */
#define SIM_PAGE_SIZE ((uint64_t)VGPU_PAGE_SIZE)
#define SIM_VA_START (1ull << 20)
#define SIM_VA_END (1ull << VGPU_VA_BITS)
#define SIM_SMS 4u
#define SIM_QUEUES 4u
#define SIM_USER_QUEUES 2u /* hardware queues for user mode, after those */
#define SIM_ASID 1u /* the first file's address space in the guest */
#define SIM_DRIVER_MAJOR 1u
#define SIM_DRIVER_MINOR 1u

/* kmalloc()'s limit on x86-64 (KMALLOC_MAX_SIZE): larger arrays -ENOMEM. */
#define SIM_KMALLOC_MAX (4ull << 20)

#define SIM_PROG_CACHE 8u

/**
 * struct sim_model - a preset of the SMs' shape, as vgpu-pci's model=
 * (qemu-device/vgpu-pci.c vgpu_models[], docs/device.md)
 */
struct sim_model {
	const char *name;
	uint32_t id;		/* VGPU_MODEL_* */
	uint32_t sms;
	uint32_t smem;		/* per SM */
	uint32_t smem_reserved; /* per CTA: a CTA may use smem less this */
	uint32_t ctas_per_sm, warps_per_sm, regs_per_sm;
	uint32_t cluster, cluster_max;
};

/* VGPU_SIM_THREADS: SM threads a launch may run on (sim_pool.c) */
#define SIM_MAX_THREADS 256u

/**
 * struct sim_bo - a buffer object of this device (one GEM handle)
 * @handle:      its handle (1, 2, ...; the lowest free one, as idr)
 * @flags:       VGPU_BO_*: GPU permissions of the mapping
 * @access:      the VGPU_MMU_ACC_* accesses they permit
 * @size:        bytes, a page multiple
 * @va:          GPU VA in this device's address space (a guard page
 *               follows it)
 * @memfd:       the memory (memfd or imported fd), owned
 * @ptr:         MAP_SHARED mapping of @memfd that the core reads/writes
 * @st_dev, @st_ino: identity of the memory, for PRIME import
 * @mmap_offset: fake offset for vgpu_backend_ops.mmap, 0 until asked
 */
struct sim_bo {
	uint32_t handle;
	uint32_t flags;
	uint32_t access;
	uint64_t size;
	uint64_t va;
	int memfd;
	uint8_t *ptr;
	dev_t st_dev;
	ino_t st_ino;
	uint64_t mmap_offset;
};

/**
 * struct sim_syncobj - a DRM syncobj.  Jobs complete inside SUBMIT, so
 * every fence a syncobj can hold has signalled; what remains of DRM's
 * state is whether there is a fence and, for a timeline, the head of its
 * dma_fence_chain (seqno and prev_seqno, see sim_syncobj.c).
 * @refs:       the handle's reference plus one per waiter
 * @fence:      a fence is installed
 * @chain:      it is a dma_fence_chain node (timeline point)
 * @seqno:      the chain node's seqno
 * @prev_seqno: the chain node's prev_seqno (0 when it began a context)
 */
struct sim_syncobj {
	unsigned int refs;
	bool fence;
	bool chain;
	uint64_t seqno;
	uint64_t prev_seqno;
};

/*
 * A thread blocked in a syncobj wait: sim_syncobj_changed() marks the
 * entries whose point became available, as DRM's cb_list callbacks do.
 */
struct sim_waiter {
	struct sim_waiter *next;
	uint32_t count;
	struct sim_syncobj **objs;
	const uint64_t *points;
	bool *got;
};

/* One job of the history (kernel/vgpu_drv.h, struct vgpu_job_result). */
struct sim_job_result {
	uint64_t id;
	uint32_t state;
	uint32_t error;
	uint32_t hw_status;
	uint32_t queue;
	uint32_t hw_queue;
	uint64_t warp_insns;
	uint64_t elapsed_ns;
	/*
	 * A job without an exception has a zeroed record: it is not written
	 * here (296 bytes, five cache lines of a ring that leaves the cache)
	 * and GET_JOB gives zeros.
	 */
	bool exc_none;
	struct vgpu_exception_record exc;
};

/*
 * A queue object (kernel/vgpu_queue.c): slot 0 is the default queue.
 * Jobs complete inside SUBMIT, so none is ever queued or hung: a queue is
 * never reset or banned here.
 */
struct sim_queue {
	bool live;
	uint32_t id;
	uint32_t priority;
	uint32_t hw_queue;
	uint64_t submitted;
};

/*
 * A user-mode queue (sim_userq.c): its rings and doorbell page in shared
 * memory (@fd: ring, completions, doorbell), mapped here and, by mmap(),
 * in the front end.
 */
struct sim_userq {
	bool live;
	uint32_t id;
	uint32_t hw_queue;
	uint32_t state;
	uint32_t hw_error;
	uint32_t error_index;
	uint32_t head, tail;
	uint64_t completed;
	int fd[3];
	uint8_t *ring;
	struct vgpu_completion *cpl;
	volatile uint32_t *db;
};

/* A predecoded program and the code it was decoded from. */
struct sim_prog {
	uint64_t va;
	uint32_t size;
	uint8_t *code;
	struct vgpu_prog *prog;
	uint64_t used;
};

/**
 * struct vgpu_sim - one simulated device
 * @lock:     protects everything below; held for the whole of an ioctl,
 *            a job's execution included (syncobj waits sleep on @cond)
 * @cond:     broadcast whenever a syncobj gains a fence (CLOCK_MONOTONIC)
 * @bos:      BO handle table, @bos[handle - 1], @nbos slots in use
 *            (@bos_cap allocated)
 * @map:      the BOs sorted by GPU VA, @nmap of them (@map_cap slots)
 * @tables:   page tables that vgpu.ko would have allocated for this
 *            address space (never freed, as in vgpu_mmu.c), sorted keys
 *            of sim_table_key(); they give an MMU fault its level
 * @syncobjs: syncobj handle table, @syncobjs[handle - 1], @nsyncobjs
 *            slots in use (@syncobjs_cap allocated)
 * @waiters:  threads blocked in a syncobj wait
 * @hist:     the last VGPU_JOB_HISTORY jobs, at id % VGPU_JOB_HISTORY
 * @model:    VGPU_SIM_MODEL: the SMs' shape GET_PARAM reports, from
 *            which @cfg's SMs and shared memory come
 * @sm:       the SM every job runs on, built from @cfg (with @nthreads
 *            > 1 the calling thread's SM of the pool)
 * @nthreads: VGPU_SIM_THREADS: SMs on host threads that share a launch's
 *            clusters (1: @sm alone, in the calling thread)
 * @pool:     their threads and SMs (sim_pool.c), made at the first
 *            launch that uses them; NULL until then
 * @trace:    where the core's events go, or NULL
 * @progs:    predecoded programs, validated against the code at launch
 * @params:   the parameter buffer of the running job
 */
struct vgpu_sim {
	bool no_device_launch; /* VGPU_SIM_NO_DEVICE_LAUNCH: as a device without the feature */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int sleepers; /* threads in a wait on @cond (@lock): a wake-up with none is skipped */

	struct sim_bo **bos;
	uint32_t nbos, bos_cap;
	struct sim_bo **map;
	uint32_t nmap, map_cap;
	uint64_t *tables;
	uint32_t ntables, tables_cap;
	uint64_t next_mmap_offset;

	struct sim_syncobj **syncobjs;
	uint32_t nsyncobjs, syncobjs_cap;
	struct sim_waiter *waiters;

	uint64_t next_job_id;
	struct sim_job_result hist[VGPU_JOB_HISTORY];
	struct sim_queue queues[VGPU_MAX_QUEUES_PER_FILE + 1];
	uint32_t next_queue_id;
	struct sim_userq userqs[VGPU_MAX_USERQ_PER_FILE];
	uint32_t next_userq_id;

	struct vgpu_sm *sm;
	struct vgpu_sm_config cfg;
	const struct sim_model *model;
	uint32_t nthreads;
	struct sim_pool *pool;
	/* VGPU_SIM_PREEMPT_EVERY: the second SM, the saved state's buffer */
	uint64_t preempt_every;
	struct vgpu_sm *sm2;
	void *ctx;
	size_t ctx_size;
	uint64_t preemptions;
	FILE *trace;
	struct sim_prog progs[SIM_PROG_CACHE];
	uint64_t prog_clock;
	uint32_t prog_last; /* the entry the last launch used: looked at first */
	uint8_t params[VGPU_MAX_PARAM_BYTES];
	/* the BOs of the last launch's code and parameters, where the next
	 * launch looks first (sim_mem's @last); a BO freed is forgotten */
	const struct sim_bo *hint_code, *hint_params;
};

/**
 * struct sim_mem - the core's global memory during one job (mem_opaque)
 * @last:         BO of the last access (a one-entry TLB)
 * @fault_*:      the last MMU fault, as VGPUMMUCtx records it in QEMU
 */
struct sim_mem {
	struct vgpu_sim *sim;
	const struct sim_bo *last;
	uint64_t fault_va;
	uint32_t fault_acc;
	uint32_t fault_reason;
	uint32_t fault_level;
};

#define SIM_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Whether an array of @n elements of @size bytes is more than kmalloc gives. */
static inline bool sim_too_big(uint64_t n, uint64_t size)
{
	return n > SIM_KMALLOC_MAX / size;
}

static inline void *sim_uptr(uint64_t p)
{
	return (void *)(uintptr_t)p;
}

/* ---- sim_job.c: queues ---- */
VGPU_HIDDEN void vgpu_sim_queues_init(struct vgpu_sim *sim);
VGPU_HIDDEN int vgpu_sim_queue_create(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_queue_destroy(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_queue_get_state(struct vgpu_sim *sim, void *data);

/* ---- sim.c ---- */
/* The core's event hook: one line per event to the FILE @opaque. */
VGPU_HIDDEN void vgpu_sim_trace_event(void *opaque,
				      const struct vgpu_trace_event *ev);

/* ---- sim_bo.c ---- */
VGPU_HIDDEN struct sim_bo *vgpu_sim_bo_lookup(struct vgpu_sim *sim,
					      uint32_t handle);
VGPU_HIDDEN int vgpu_sim_bo_create(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_bo_mmap_offset(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_bo_info(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_wait_bo(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_gem_close(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_prime_handle_to_fd(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_prime_fd_to_handle(struct vgpu_sim *sim, void *data);
/* A CPU mapping of the BO at fake offset @offset: anywhere when @addr is
 * NULL, else exactly at @addr (vgpu_mmap_fixed(): -EEXIST when taken). */
VGPU_HIDDEN int vgpu_sim_bo_mmap(struct vgpu_sim *sim, uint64_t offset,
				 uint64_t size, void *addr, void **ptr);
VGPU_HIDDEN void vgpu_sim_bos_fini(struct vgpu_sim *sim);

/* Host pointer of [@va, @va + @len) for access @acc (VGPU_MMU_ACC_*), or
 * NULL with the fault recorded in @m. */
VGPU_HIDDEN uint8_t *vgpu_sim_xlate(struct sim_mem *m, uint64_t va,
				    uint64_t len, uint32_t acc);
/* Fill @exc's MMU fields from the fault in @m (vgpu_mmu_fault_record). */
VGPU_HIDDEN void vgpu_sim_fault_record(const struct sim_mem *m,
				       struct vgpu_exception_record *exc);
VGPU_HIDDEN extern const struct vgpu_mem_ops vgpu_sim_mem_ops;

/* ---- sim_job.c ---- */
/*
 * What the device does with one launch: VGPU_ERR_*, @exc, counts.
 * @cdp_area: its device-launch area (0: none): the grids it launches run
 * after it (uapi/vgpu_hw.h, struct vgpu_cdp_header).  @host_params: its
 * parameters' bytes in host memory, or NULL: read at @c->param_va.
 */
VGPU_HIDDEN uint32_t vgpu_sim_run(struct vgpu_sim *sim,
				  const struct drm_vgpu_launch *c, const void *host_params,
				  const struct drm_vgpu_ext_timeline *tl, uint64_t cdp_area,
				  struct vgpu_exception_record *exc,
				  uint64_t *warp_insns, uint64_t *cycles);
VGPU_HIDDEN bool vgpu_sim_capable_sys_nice(void);
VGPU_HIDDEN int vgpu_sim_submit(struct vgpu_sim *sim, void *data);
/*
 * SUBMIT, the launch's parameter bytes taken from @host_params (when not
 * NULL) rather than read at @args->launch.param_va: what the front end's
 * launch on sim does for a kernel whose parameters need no page of their
 * own (sim.c, sim_submit_job()).  Everything else as SUBMIT.
 */
VGPU_HIDDEN int vgpu_sim_submit_params(struct vgpu_sim *sim, struct drm_vgpu_submit *args,
				       const void *host_params);
VGPU_HIDDEN int vgpu_sim_get_job(struct vgpu_sim *sim, void *data);
/*
 * GET_JOB of job @job_id, just submitted (its record is the newest), into
 * @g: the status, and the exception into @exc where the job had one (as
 * a GET_JOB asking for it then does, @g->exception left pointing at it).
 */
VGPU_HIDDEN void vgpu_sim_submitted_job(const struct vgpu_sim *sim, uint64_t job_id,
					struct drm_vgpu_get_job *g,
					struct vgpu_exception_record *exc);
VGPU_HIDDEN void vgpu_sim_jobs_fini(struct vgpu_sim *sim);

/* ---- sim_pool.c ---- */
/*
 * VGPU_SIM_THREADS from the environment into *@n: 0, or -EINVAL (with a
 * message on stderr) when it is set but not a number in 1..SIM_MAX_THREADS.
 */
VGPU_HIDDEN int vgpu_sim_threads_env(uint32_t *n);
/*
 * Run clusters [0, @nclusters) of @l on the pool's SMs (@l->ctl shared,
 * its abort set on the first exception): 0, or -1 with @exc the launch's
 * exception; *@cycles the most SM cycles one SM spent.  Returns -2 (and
 * runs nothing) when the pool cannot be made: run on one SM instead.
 */
VGPU_HIDDEN int vgpu_sim_pool_run(struct vgpu_sim *sim, const struct vgpu_launch *l,
				  uint32_t nclusters, struct vgpu_exception_record *exc,
				  uint64_t *cycles);
/* Stop and free the pool's threads and SMs (made again when needed). */
VGPU_HIDDEN void vgpu_sim_pool_free(struct vgpu_sim *sim);

/* ---- sim_syncobj.c ---- */
VGPU_HIDDEN struct sim_syncobj *vgpu_sim_syncobj_lookup(struct vgpu_sim *sim,
							uint32_t handle);
/* drm_syncobj_find_fence() without waiting: 0, -ENOENT or -EINVAL. */
VGPU_HIDDEN int vgpu_sim_syncobj_find_fence(struct vgpu_sim *sim,
					    uint32_t handle, uint64_t point);
/* Install a signalled fence: binary (@point 0) or a timeline point. */
VGPU_HIDDEN void vgpu_sim_syncobj_replace(struct vgpu_sim *sim,
					  struct sim_syncobj *s);
VGPU_HIDDEN void vgpu_sim_syncobj_add_point(struct vgpu_sim *sim,
					    struct sim_syncobj *s,
					    uint64_t point);
VGPU_HIDDEN int vgpu_sim_syncobj_create(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_destroy(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_wait(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_timeline_wait(struct vgpu_sim *sim,
					       void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_reset(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_signal(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_timeline_signal(struct vgpu_sim *sim,
						 void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_query(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_syncobj_transfer(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN void vgpu_sim_syncobjs_fini(struct vgpu_sim *sim);

/* ---- sim_userq.c ---- */
VGPU_HIDDEN int vgpu_sim_userq_create(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_userq_destroy(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_userq_get_state(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_wait_user_fence(struct vgpu_sim *sim, void *data);
VGPU_HIDDEN int vgpu_sim_userq_mmap(struct vgpu_sim *sim, uint64_t offset,
				    uint64_t size, bool writable, void **ptr);
/* Takes sim->lock itself. */
VGPU_HIDDEN int vgpu_sim_doorbell(struct vgpu_sim *sim, uint32_t id,
				  uint32_t tail);
VGPU_HIDDEN void vgpu_sim_userqs_fini(struct vgpu_sim *sim);

#endif /* VGPU_SIM_PRIV_H */
