/* SPDX-License-Identifier: MIT */
/*
 * sim backend: SUBMIT and GET_JOB.  SUBMIT checks what vgpu_job.c checks,
 * in its order, then does what the device does with the launch command
 * (qemu-device/vgpu-queue.c, vgpu_cmd_launch()) on the device's SM, and
 * records the outcome as the driver does (vgpu_job_record()) before the
 * ioctl returns.
 *
 * Predecoding a program costs more than launching a small kernel, so the
 * device keeps the last few predecoded programs with a copy of the code
 * they came from; a launch reuses one when the code at its VA is still
 * byte for byte the same (whoever may have written it: the CPU, a job, or
 * another device sharing the memory).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim_priv.h"

/* ---- predecoded programs ---- */

static void sim_prog_drop(struct sim_prog *p)
{
	vgpu_prog_free(p->prog);
	free(p->code);
	memset(p, 0, sizeof(*p));
}

/*
 * @size bytes the same at @a and @b: a few instructions inline for a
 * small kernel (whole instructions, 16 bytes each), where the call of
 * memcmp() cost more than the compare.
 */
static inline bool sim_code_same(const uint8_t *a, const uint8_t *b, uint32_t size)
{
	if (size > 256 || size % 16)
		return !memcmp(a, b, size);
	for (uint32_t i = 0; i < size; i += 16) {
		uint64_t x[2], y[2];

		memcpy(x, a + i, 16);
		memcpy(y, b + i, 16);
		if ((x[0] ^ y[0]) | (x[1] ^ y[1]))
			return false;
	}
	return true;
}

static inline bool sim_prog_is(const struct sim_prog *p, uint64_t va,
			       const uint8_t *code, uint32_t size)
{
	return p->prog && p->va == va && p->size == size && sim_code_same(p->code, code, size);
}

/* The predecoded program of @size bytes of @code at @va (cached), or NULL. */
static const struct vgpu_prog *sim_prog_get(struct vgpu_sim *sim, uint64_t va,
					    const uint8_t *code, uint32_t size)
{
	struct sim_prog *p = &sim->progs[sim->prog_last], *victim = &sim->progs[0];

	/* a program is mostly launched again and again: the last one first */
	if (sim_prog_is(p, va, code, size)) {
		p->used = ++sim->prog_clock;
		return p->prog;
	}
	for (uint32_t i = 0; i < SIM_PROG_CACHE; i++) {
		p = &sim->progs[i];
		if (i != sim->prog_last && sim_prog_is(p, va, code, size)) {
			p->used = ++sim->prog_clock;
			sim->prog_last = i;
			return p->prog;
		}
		if (p->used < victim->used)
			victim = p;
	}
	p = victim;
	sim->prog_last = (uint32_t)(p - sim->progs);
	sim_prog_drop(p);
	p->code = malloc(size);
	if (!p->code)
		return NULL;
	/* Decode the copy: another thread may be writing the BO. */
	memcpy(p->code, code, size);
	if (vgpu_prog_load(p->code, size, &p->prog)) {
		sim_prog_drop(p);
		return NULL;
	}
	p->va = va;
	p->size = size;
	p->used = ++sim->prog_clock;
	return p->prog;
}

void vgpu_sim_jobs_fini(struct vgpu_sim *sim)
{
	for (uint32_t i = 0; i < SIM_PROG_CACHE; i++)
		sim_prog_drop(&sim->progs[i]);
}

/* ---- running a job ---- */

/*
 * The launch command on the device: fetch the program and the parameters
 * through the MMU, load, validate, run.  Returns the completion status
 * (VGPU_ERR_*) with @exc filled unless VGPU_ERR_NONE (then zeroed), the
 * warp-instructions executed and the SM cycles they took.
 */
/*
 * Write the timeline of @sink at @va (the records fit: the sink holds no more
 * than the buffer does) as the device does
 * when the launch has ended: the records that fit, then the header.
 * False on a fault.
 */
static bool sim_timeline_write(struct sim_mem *mem, struct vgpu_trace_sink *sink,
			       uint64_t va)
{
	struct vgpu_trace_header h;
	uint32_t kept = vgpu_trace_sink_header(sink, &h);
	uint64_t len = sizeof(h) + (uint64_t)kept * sizeof(*sink->rec);
	uint8_t *p;

	p = vgpu_sim_xlate(mem, va, len, VGPU_MMU_ACC_WRITE);
	if (!p)
		return false;
	memcpy(p + sizeof(h), sink->rec, len - sizeof(h));
	memcpy(p, &h, sizeof(h));
	return true;
}

/*
 * VGPU_SIM_PREEMPT_EVERY: the launch was preempted on one SM.  As the
 * device does with its SMs: save the cluster it stopped (uapi "Context
 * save"), resume it from that state on the other SM, then go on with the
 * clusters not yet started there, until the launch ends.  Returns as
 * vgpu_sm_run().
 */
static int sim_preempted(struct vgpu_sim *sim, const struct vgpu_launch *l,
			 uint32_t nclusters, struct vgpu_exception_record *exc)
{
	struct vgpu_sm *sm = sim->sm, *other;
	int ret = VGPU_RUN_PREEMPTED;

	if (!sim->sm2) {
		sim->sm2 = vgpu_sm_new(&sim->cfg);
		if (!sim->sm2) {
			vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "out of host memory");
			return -1;
		}
	}
	while (ret == VGPU_RUN_PREEMPTED) {
		uint32_t cluster;
		size_t need;

		sim->preemptions++;
		other = sm == sim->sm ? sim->sm2 : sim->sm;
		if (!vgpu_sm_preempted(sm, &cluster)) {
			ret = vgpu_sm_run(other, l, cluster, nclusters - cluster, exc);
			sm = other;
			continue;
		}
		need = vgpu_sm_save_bytes(sm);
		if (need > sim->ctx_size) {
			void *p = realloc(sim->ctx, need);

			if (!p) {
				vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "out of host memory");
				return -1;
			}
			sim->ctx = p;
			sim->ctx_size = need;
		}
		if (vgpu_sm_save(sm, sim->ctx, sim->ctx_size) != need) {
			vgpu_exc_set(exc, VGPU_EXC_BAD_CONTEXT, "context save failed");
			return -1;
		}
		ret = vgpu_sm_resume(other, l, sim->ctx, need, exc);
		sm = other;
		if (!ret && cluster + 1 < nclusters)
			ret = vgpu_sm_run(sm, l, cluster + 1, nclusters - cluster - 1, exc);
	}
	return ret;
}

/* One grid: its CTAs (grid identifier @cdp_grid in device-launch area @cdp_area). */
static uint32_t sim_run_grid(struct vgpu_sim *sim, const struct drm_vgpu_launch *c,
			     const void *host_params,
			     const struct drm_vgpu_ext_timeline *tl, uint64_t cdp_area,
			     uint32_t cdp_grid, struct vgpu_exception_record *exc,
			     uint64_t *warp_insns, uint64_t *cycles)
{
	struct vgpu_trace_sink sink = { 0 };
	uint32_t status;
	struct sim_mem mem = { .sim = sim };
	struct vgpu_launch_ctl ctl;
	const struct vgpu_prog *prog;
	struct vgpu_launch l;
	const uint8_t *code, *params;
	uint32_t nclusters = 1;
	int ret;

	vgpu_launch_ctl_init(&ctl);
	*warp_insns = 0;
	*cycles = 0;
	/* where the last launch found them (the same translation, sooner) */
	mem.last = sim->hint_code;
	code = vgpu_sim_xlate(&mem, c->code_va, c->code_size, VGPU_MMU_ACC_EXEC);
	sim->hint_code = mem.last;
	if (!code) {
		vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "launch: program fetch");
		vgpu_sim_fault_record(&mem, exc);
		return VGPU_ERR_MMU_FAULT;
	}
	if (c->param_size && host_params) {
		/* the caller's bytes (vgpu_sim_submit_params()), read once as well */
		memcpy(sim->params, host_params, c->param_size);
	} else if (c->param_size) {
		mem.last = sim->hint_params;
		params = vgpu_sim_xlate(&mem, c->param_va, c->param_size,
					VGPU_MMU_ACC_READ);
		sim->hint_params = mem.last;
		if (!params) {
			vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT,
				    "launch: parameter fetch");
			vgpu_sim_fault_record(&mem, exc);
			return VGPU_ERR_MMU_FAULT;
		}
		/* The device reads them once: later writes do not show. */
		memcpy(sim->params, params, c->param_size);
	}
	prog = sim_prog_get(sim, c->code_va, code, c->code_size);
	if (!prog) {
		vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH,
			    "program of %u bytes cannot be loaded", c->code_size);
		return VGPU_ERR_BAD_LAUNCH;
	}

	l = (struct vgpu_launch){
		.prog = prog,
		.entry = c->entry,
		.grid = { c->grid[0], c->grid[1], c->grid[2] },
		.block = { c->block[0], c->block[1], c->block[2] },
		.cluster = { c->cluster[0], c->cluster[1], c->cluster[2] },
		.smem_bytes = c->smem_bytes,
		.params = sim->params,
		.param_size = c->param_size,
		.flags = c->launch_flags,
		.seed = c->seed,
		.budget = c->budget,
		.mem = &vgpu_sim_mem_ops,
		.mem_opaque = &mem,
		.event = sim->trace ? vgpu_sim_trace_event : NULL,
		.event_opaque = sim->trace,
		.ctl = &ctl,
		.cdp_area = cdp_area,
		.cdp_grid = cdp_grid,
	};
	if (c->launch_flags & VGPU_LAUNCH_TIMELINE) {
		sink.capacity = vgpu_trace_capacity(tl->size);
		/* not zeroed: only the records written are copied out */
		sink.rec = malloc((sink.capacity ? sink.capacity : 1) * sizeof(*sink.rec));
		if (!sink.rec) {
			vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH,
				     "no host memory for a timeline of %llu bytes",
				     (unsigned long long)tl->size);
			return VGPU_ERR_BAD_LAUNCH;
		}
		sink.chain = l.event;
		sink.chain_opaque = l.event_opaque;
		l.event = vgpu_trace_sink_event;
		l.event_opaque = &sink;
	}
	/* a cooperative launch is one group: the whole grid co-resident */
	if (c->launch_flags & VGPU_LAUNCH_COOPERATIVE)
		;
	else if (c->cluster[0] <= 1 && c->cluster[1] <= 1 && c->cluster[2] <= 1)
		nclusters = c->grid[0] * c->grid[1] * c->grid[2]; /* no division */
	else
		for (int i = 0; i < 3; i++)
			nclusters *= c->grid[i] / (c->cluster[i] ? c->cluster[i] : 1);
	/*
	 * vgpu_sm_run() validates the launch first (the device's check before
	 * it hands the launch to its SMs): a BAD_LAUNCH from it is that.
	 */
	ret = -2;
	if (sim->nthreads > 1 && nclusters > 1 && !sim->preempt_every) {
		/* VGPU_SIM_THREADS: on several SMs, once checked as one does */
		ret = vgpu_launch_validate(sim->sm, &l, exc);
		if (!ret)
			ret = vgpu_sim_pool_run(sim, &l, nclusters, exc, cycles);
	}
	if (ret == -2) {
		*cycles = vgpu_sm_cycles(sim->sm);
		ctl.preempt_every = sim->preempt_every;
		/* this thread's SMs alone count, one at a time: no lock-prefixed adds */
		ctl.one_sm = true;
		ret = vgpu_sm_run(sim->sm, &l, 0, nclusters, exc);
		if (ret == VGPU_RUN_PREEMPTED)
			ret = sim_preempted(sim, &l, nclusters, exc);
		*cycles = vgpu_sm_cycles(sim->sm) - *cycles;
	}
	*warp_insns = atomic_load(&ctl.executed);
	if (sim->trace)
		fflush(sim->trace);
	if (!ret)
		status = VGPU_ERR_NONE;
	else if (exc->code == VGPU_EXC_BAD_LAUNCH)
		status = VGPU_ERR_BAD_LAUNCH;
	else
		status = VGPU_ERR_EXCEPTION;
	if (ret && exc->code == VGPU_EXC_GLOBAL_FAULT)
		vgpu_sim_fault_record(&mem, exc);
	if (sink.rec && !sim_timeline_write(&mem, &sink, tl->va) &&
	    status == VGPU_ERR_NONE) {
		vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "launch: timeline write");
		vgpu_sim_fault_record(&mem, exc);
		status = VGPU_ERR_MMU_FAULT;
	}
	free(sink.rec);
	return status;
}

/*
 * After the grid from the host (@status) has run: the grids of its tree,
 * one at a time, in the order the core's walk gives them (as the device
 * does: qemu-device/vgpu-cdp.c).  They take @root's flags, seed and
 * budget.
 */
static uint32_t sim_run_tree(struct vgpu_sim *sim, const struct drm_vgpu_launch *root,
			     struct vgpu_cdp_walk *w, struct sim_mem *mem, uint32_t status,
			     struct vgpu_exception_record *exc, uint64_t *warp_insns,
			     uint64_t *cycles)
{
	struct vgpu_cdp_child ch;
	int r = 0;

	while (status == VGPU_ERR_NONE && (r = vgpu_cdp_walk_next(w, &ch, exc)) > 0) {
		struct drm_vgpu_launch c = { 0 };
		uint64_t wi = 0, cy = 0;

		VGPU_CDP_CHILD_LAUNCH(&c, &ch, root);
		status = sim_run_grid(sim, &c, NULL, NULL, w->area, ch.record, exc, &wi, &cy);
		*warp_insns += wi;
		*cycles += cy;
	}
	if (r < 0) {
		if (exc->code == VGPU_EXC_GLOBAL_FAULT && mem->fault_va) {
			vgpu_sim_fault_record(mem, exc);
			return VGPU_ERR_MMU_FAULT;
		}
		return VGPU_ERR_EXCEPTION;
	}
	if (status != VGPU_ERR_NONE) /* what the tree launched is void */
		vgpu_cdp_walk_cancel(w);
	vgpu_cdp_walk_end(w);
	return status;
}

uint32_t vgpu_sim_run(struct vgpu_sim *sim, const struct drm_vgpu_launch *c,
		      const void *host_params,
		      const struct drm_vgpu_ext_timeline *tl, uint64_t cdp_area,
		      struct vgpu_exception_record *exc, uint64_t *warp_insns,
		      uint64_t *cycles)
{
	struct sim_mem mem = { .sim = sim };
	struct vgpu_cdp_walk w;
	uint32_t grid = 0, status;

	if (cdp_area && vgpu_cdp_walk_start(&w, &vgpu_sim_mem_ops, &mem, cdp_area, &grid, exc)) {
		*warp_insns = *cycles = 0;
		if (exc->code != VGPU_EXC_GLOBAL_FAULT)
			return VGPU_ERR_BAD_LAUNCH;
		vgpu_sim_fault_record(&mem, exc);
		return VGPU_ERR_MMU_FAULT;
	}
	status = sim_run_grid(sim, c, host_params, tl, cdp_area, grid, exc, warp_insns, cycles);
	if (cdp_area)
		status = sim_run_tree(sim, c, &w, &mem, status, exc, warp_insns, cycles);
	return status;
}

/* vgpu_hw_status_errno() */
static int sim_status_errno(uint32_t status,
			    const struct vgpu_exception_record *exc)
{
	switch (status) {
	case VGPU_ERR_NONE:
		return 0;
	case VGPU_ERR_MMU_FAULT:
		return -EFAULT;
	case VGPU_ERR_TIMEOUT:
		return -ETIMEDOUT;
	case VGPU_ERR_ABORTED:
		return -ECANCELED;
	case VGPU_ERR_EXCEPTION:
		return exc->code == VGPU_EXC_GLOBAL_FAULT ? -EFAULT : -EIO;
	default:
		return -EIO;
	}
}

/* ---- queues (kernel/vgpu_queue.c) ---- */

/*
 * The hardware queue vgpu.ko gives a queue of @priority first on the
 * sim's SIM_QUEUES (vgpu_bands_init(): with 4, one per priority).
 */
static uint32_t sim_band_first(uint32_t priority)
{
	_Static_assert(SIM_QUEUES == VGPU_QPRIO_COUNT, "one queue per priority");
	return priority;
}

void vgpu_sim_queues_init(struct vgpu_sim *sim)
{
	sim->queues[0] = (struct sim_queue){
		.live = true,
		.id = VGPU_QUEUE_DEFAULT,
		.priority = VGPU_QUEUE_PRIORITY_NORMAL,
		.hw_queue = sim_band_first(VGPU_QUEUE_PRIORITY_NORMAL),
	};
}

static struct sim_queue *sim_queue_lookup(struct vgpu_sim *sim, uint32_t id)
{
	for (uint32_t i = 0; i < SIM_ARRAY_SIZE(sim->queues); i++)
		if (sim->queues[i].live && sim->queues[i].id == id)
			return &sim->queues[i];
	return NULL;
}

/* capable(CAP_SYS_NICE), asked of the calling thread's effective set */
bool vgpu_sim_capable_sys_nice(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32));
}

int vgpu_sim_queue_create(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_queue_create *args = data;
	struct sim_queue *q = NULL;

	if (args->flags & ~VGPU_QUEUE_CREATE_FLAGS ||
	    args->priority > VGPU_QUEUE_PRIORITY_REALTIME)
		return -EINVAL;
	if (args->priority > VGPU_QUEUE_PRIORITY_NORMAL && !vgpu_sim_capable_sys_nice())
		return -EPERM;
	/* the sim has no VM but each file's VM 0 (no VM_CREATE) */
	if (args->vm_id != VGPU_VM_DEFAULT)
		return -ENOENT;
	for (uint32_t i = 1; i < SIM_ARRAY_SIZE(sim->queues) && !q; i++)
		if (!sim->queues[i].live)
			q = &sim->queues[i];
	if (!q)
		return -EMFILE;
	/* xa_alloc_cyclic() from 1: a destroyed id is not reused at once */
	do {
		if (++sim->next_queue_id == 0)
			sim->next_queue_id = 1;
	} while (sim_queue_lookup(sim, sim->next_queue_id));
	*q = (struct sim_queue){
		.live = true,
		.id = sim->next_queue_id,
		.priority = args->priority,
		.hw_queue = sim_band_first(args->priority),
	};
	args->queue_id = q->id;
	return 0;
}

int vgpu_sim_queue_destroy(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_queue_destroy *args = data;
	struct sim_queue *q;

	if (args->pad || args->queue_id == VGPU_QUEUE_DEFAULT)
		return -EINVAL;
	q = sim_queue_lookup(sim, args->queue_id);
	if (!q)
		return -ENOENT;
	q->live = false;
	return 0;
}

int vgpu_sim_queue_get_state(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_queue_get_state *args = data;
	const struct sim_queue *q;

	if (args->pad)
		return -EINVAL;
	q = sim_queue_lookup(sim, args->queue_id);
	if (!q)
		return -ENOENT;
	args->state = VGPU_QUEUE_STATE_ACTIVE;
	args->priority = q->priority;
	args->guilty_resets = 0;
	args->innocent_resets = 0;
	args->ban_reason = 0;
	args->hw_queue = q->hw_queue;
	args->submitted = q->submitted;
	args->completed = q->submitted; /* every job completes inside SUBMIT */
	return 0;
}

/* ---- SUBMIT ---- */

/* vgpu_submit_check() */
static int sim_submit_check(const struct drm_vgpu_submit *args)
{
	const struct drm_vgpu_launch *l = &args->launch;

	if (args->flags & ~VGPU_SUBMIT_FLAGS || args->pad)
		return -EINVAL;
	if (args->bo_handle_count > VGPU_SUBMIT_MAX_BOS ||
	    args->in_sync_count > VGPU_SUBMIT_MAX_SYNCS ||
	    args->out_sync_count > VGPU_SUBMIT_MAX_SYNCS)
		return -E2BIG;
	if (l->launch_flags & ~VGPU_LAUNCH_FLAGS_MASK)
		return -EINVAL;
	if (!l->code_size || l->code_size % 16 || l->code_va % 16 ||
	    l->code_size > VGPU_MAX_CODE_BYTES ||
	    l->param_size > VGPU_MAX_PARAM_BYTES)
		return -EINVAL;
	if (!l->grid[0] || !l->grid[1] || !l->grid[2] ||
	    !l->block[0] || !l->block[1] || !l->block[2])
		return -EINVAL;
	return 0;
}

/* vgpu_submit_extensions() */
static int sim_submit_extensions(const struct vgpu_sim *sim, uint64_t ext,
				 const struct drm_vgpu_launch *l,
				 struct drm_vgpu_ext_timeline *tl, uint64_t *cdp_area)
{
	const struct drm_vgpu_extension *e;
	uint32_t seen = 0, n = 0;

	memset(tl, 0, sizeof(*tl));
	*cdp_area = 0;
	for (; ext; ext = e->next) {
		if (++n > VGPU_SUBMIT_MAX_EXTENSIONS)
			return -E2BIG;
		e = sim_uptr(ext);
		if (e->pad || (e->name != VGPU_SUBMIT_EXT_TIMELINE &&
			       e->name != VGPU_SUBMIT_EXT_DEVICE_LAUNCH) ||
		    seen & (1u << e->name))
			return -EINVAL;
		seen |= 1u << e->name;
		if (e->name == VGPU_SUBMIT_EXT_DEVICE_LAUNCH) {
			const struct drm_vgpu_ext_device_launch *d = (const void *)e;

			/* as vgpu.ko: only where the device has the feature */
			if (sim->no_device_launch || !d->area_va || d->area_va % 16)
				return -EINVAL;
			*cdp_area = d->area_va;
			continue;
		}
		memcpy(tl, e, sizeof(*tl));
		if (tl->va % 8 || tl->size % 8 ||
		    tl->size < sizeof(struct vgpu_trace_header) ||
		    tl->size > VGPU_TRACE_MAX_BYTES)
			return -EINVAL;
	}
	if (!!(l->launch_flags & VGPU_LAUNCH_TIMELINE) !=
	    !!(seen & (1u << VGPU_SUBMIT_EXT_TIMELINE)))
		return -EINVAL;
	return 0;
}

int vgpu_sim_submit_params(struct vgpu_sim *sim, struct drm_vgpu_submit *args,
			   const void *host_params)
{
	const struct drm_vgpu_sync *in = sim_uptr(args->in_syncs);
	const struct drm_vgpu_sync *out = sim_uptr(args->out_syncs);
	const uint32_t *handles = sim_uptr(args->bo_handles);
	struct sim_syncobj *outs[VGPU_SUBMIT_MAX_SYNCS];
	struct drm_vgpu_ext_timeline tl;
	struct vgpu_exception_record exc;
	struct sim_job_result *r;
	uint64_t cdp_area;
	struct sim_queue *q;
	int ret, err;

	ret = sim_submit_check(args);
	if (ret)
		return ret;
	ret = sim_submit_extensions(sim, args->extensions, &args->launch, &tl, &cdp_area);
	if (ret)
		return ret;
	q = sim_queue_lookup(sim, args->queue);
	if (!q)
		return -ENOENT;

	/* drm_gem_objects_lookup(): the jobs's BOs (kept busy: trivially). */
	if (args->bo_handle_count && !handles)
		return -EFAULT;
	for (uint32_t i = 0; i < args->bo_handle_count; i++)
		if (!vgpu_sim_bo_lookup(sim, handles[i]))
			return -ENOENT;

	for (uint32_t i = 0; i < args->in_sync_count; i++) {
		if (!in)
			return -EFAULT;
		if (in[i].pad)
			return -EINVAL;
		ret = vgpu_sim_syncobj_find_fence(sim, in[i].handle, in[i].point);
		if (ret)
			return ret;
	}
	for (uint32_t i = 0; i < args->out_sync_count; i++) {
		if (!out)
			return -EFAULT;
		if (out[i].pad)
			return -EINVAL;
		outs[i] = vgpu_sim_syncobj_lookup(sim, out[i].handle);
		if (!outs[i])
			return -ENOENT;
	}

	/* Its dependencies have all signalled: the job runs at once. */
	args->job_id = ++sim->next_job_id;
	r = &sim->hist[args->job_id % VGPU_JOB_HISTORY];
	r->id = args->job_id;
	r->queue = args->queue;
	r->hw_queue = q->hw_queue;
	q->submitted++;
	if (cdp_area)
		r->hw_status = vgpu_sim_run(sim, &args->launch, host_params, &tl, cdp_area,
					    &exc, &r->warp_insns, &r->elapsed_ns);
	else /* no tree to walk: vgpu_sim_run() is the grid alone */
		r->hw_status = sim_run_grid(sim, &args->launch, host_params, &tl, 0, 0, &exc,
					    &r->warp_insns, &r->elapsed_ns);
	/* VGPU_ERR_NONE comes with a zeroed record (vgpu_sim_run()) */
	r->exc_none = r->hw_status == VGPU_ERR_NONE;
	if (!r->exc_none)
		r->exc = exc;
	err = sim_status_errno(r->hw_status, &exc);
	r->state = err ? VGPU_JOB_FAILED : VGPU_JOB_DONE;
	r->error = (uint32_t)-err;

	for (uint32_t i = 0; i < args->out_sync_count; i++) {
		if (out[i].point)
			vgpu_sim_syncobj_add_point(sim, outs[i], out[i].point);
		else
			vgpu_sim_syncobj_replace(sim, outs[i]);
	}
	return 0;
}

int vgpu_sim_submit(struct vgpu_sim *sim, void *data)
{
	return vgpu_sim_submit_params(sim, data, NULL);
}

/* ---- GET_JOB ---- */

/* GET_JOB's answer from @r (the exception where @args asks for it) */
static inline void sim_job_answer(const struct sim_job_result *r,
				  struct drm_vgpu_get_job *args)
{
	uint32_t n;

	args->state = r->state;
	args->error = r->error;
	args->hw_status = r->hw_status;
	args->queue = r->queue;
	args->hw_queue = r->hw_queue;
	args->warp_insns = r->warp_insns;
	args->elapsed_ns = r->elapsed_ns;
	if (args->exception) {
		n = args->exception_size < sizeof(r->exc) ? args->exception_size
							  : sizeof(r->exc);
		if (r->exc_none)
			memset(sim_uptr(args->exception), 0, n);
		else
			memcpy(sim_uptr(args->exception), &r->exc, n);
	}
}

int vgpu_sim_get_job(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_get_job *args = data;
	const struct sim_job_result *r;

	if (args->pad || args->pad2)
		return -EINVAL;
	r = &sim->hist[args->job_id % VGPU_JOB_HISTORY];
	if (!args->job_id || r->id != args->job_id)
		return -ENOENT;
	sim_job_answer(r, args);
	return 0;
}

void vgpu_sim_submitted_job(const struct vgpu_sim *sim, uint64_t job_id,
			    struct drm_vgpu_get_job *g, struct vgpu_exception_record *exc)
{
	const struct sim_job_result *r = &sim->hist[job_id % VGPU_JOB_HISTORY];

	*g = (struct drm_vgpu_get_job){ .job_id = job_id };
	if (r->hw_status != VGPU_ERR_NONE) {
		g->exception = (uintptr_t)exc;
		g->exception_size = sizeof(*exc);
	}
	sim_job_answer(r, g);
}
