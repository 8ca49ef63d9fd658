/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A job of vgpu.ko's scheduler backend, shared by its three stages:
 * vgpu_job.c (the ring, the scheduler's run/free and completion),
 * vgpu_submit.c (the SUBMIT and GET_JOB ioctls) and vgpu_reset.c (the
 * timeout handler and the queue and device resets).
 */
#ifndef VGPU_JOB_H
#define VGPU_JOB_H

#include <drm/gpu_scheduler.h>
#include "vgpu_drv.h"

/*
 * Credits are ring slots.  A job takes at most a TLB_INVALIDATE, one
 * SEM_ACQUIRE per other hardware queue it waits for (those come on top),
 * its LAUNCH and a SEM_RELEASE.  Its credits come back when its launch
 * completes, when at most the SEM_RELEASE of the last job is still to
 * execute: a scheduler within its credit_limit never laps the ring.
 */
#define VGPU_JOB_CREDITS 3u
static_assert(VGPU_JOBS_IN_FLIGHT * VGPU_JOB_CREDITS + VGPU_MAX_QUEUES <
	      VGPU_RING_ENTRIES);

struct vgpu_job {
	struct drm_sched_job base;
	struct vgpu_device *vdev;
	struct vgpu_file *vf;	/* holds a reference */
	struct vgpu_as *as;	/* holds a reference */
	struct vgpu_xqueue *xq;	/* holds a reference */
	struct dma_fence_cb done_cb;	/* on its finished fence: counts xq->completed */
	u32 queue;		/* hardware queue (once armed) */
	u32 cpu;		/* SUBMIT's CPU: its completion's vector */
	u64 id;
	struct drm_vgpu_launch launch;
	u64 trace_va;	/* VGPU_SUBMIT_EXT_TIMELINE, else 0 */
	u64 cdp_area;	/* VGPU_SUBMIT_EXT_DEVICE_LAUNCH, else 0 */
	/*
	 * Finished fences of jobs of other hardware queues of this device
	 * that it waits for on the device (SEM_ACQUIRE), each referenced;
	 * drm_sched waits only for their scheduled fences.
	 */
	struct dma_fence **sem_deps;
	u32 nsem_deps;
	u64 sem_seq;	/* its hardware fences' seqno, kept across resubmits */
	u32 trace_size;
	struct drm_gem_object **bos;
	u32 bo_count;

	/* on the hardware; under the queue's lock */
	struct dma_fence *hw_fence;
	struct list_head link;
	u32 slot;
	u64 seq;
	u64 start_ns;
	bool guilty;
	bool completed;	/* its completion record was processed */
	bool on_device;	/* counted in as->active (vgpu_as_job_begin) */
	bool counted;	/* in its file's and queue's @jobs (vgpu_jobs_reserve) */
	/* its first hardware fence, allocated by SUBMIT for run_job */
	struct dma_fence *hw_fence_mem;
	struct vgpu_release release;	/* free_job's second half */
};

#define to_vgpu_job(j) container_of(j, struct vgpu_job, base)

extern bool vgpu_sem_deps;
extern bool vgpu_queue_reset;

/* vgpu_job.c */
extern const struct dma_fence_ops vgpu_fence_ops;
extern const struct drm_sched_backend_ops vgpu_sched_ops;
struct vgpu_job_result *vgpu_hist(struct vgpu_file *vf, u64 id);
int vgpu_hist_alloc(struct vgpu_file *vf);
void vgpu_job_record(struct vgpu_job *job, int error, u32 hw_status,
		     const struct vgpu_completion *cpl);
void vgpu_sync_preempt(struct vgpu_device *vdev, bool force);
bool vgpu_has_sems(struct vgpu_device *vdev);
void vgpu_queue_harvest(struct vgpu_queue *q);
void vgpu_queue_cancel_inflight(struct vgpu_queue *q, int error, bool final);
bool vgpu_sem_target(struct vgpu_device *vdev, struct dma_fence *f,
		     u32 *queue, u64 *seq);

/* vgpu_submit.c (KUnit tests them from vgpu_job.c) */
void vgpu_job_count(struct vgpu_job *job, struct dma_fence *done);
int vgpu_jobs_reserve(struct vgpu_file *vf, atomic_t *qjobs, bool nonblock);
void vgpu_jobs_release(struct vgpu_file *vf, atomic_t *qjobs);
int vgpu_submit_check(struct vgpu_device *vdev,
		      const struct drm_vgpu_submit *args);
int vgpu_submit_extensions(u64 ext, const struct drm_vgpu_launch *l,
			   u32 features, struct drm_vgpu_ext_timeline *tl,
			   u64 *cdp_area);
int vgpu_submit_bos(struct vgpu_job *job, struct drm_file *file,
		    const struct drm_vgpu_submit *args);

/* vgpu_reset.c */
enum drm_gpu_sched_stat vgpu_job_timedout(struct drm_sched_job *sched_job);
int vgpu_reset_init(struct vgpu_device *vdev);
void vgpu_reset_fini(struct vgpu_device *vdev);

#endif
