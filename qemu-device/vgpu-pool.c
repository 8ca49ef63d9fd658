/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU PCIe device: the SM worker pool (vgpu-queue.c's header comment
 * tells how queues hand launches to it).  Its jobs and the chunks of CTAs
 * workers claim from them, priorities and time slices between launches,
 * preemption with the context-save buffer, the worker threads, and a
 * launch run to its end from its queue thread (vgpu_job_run_locked).
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qemu/cutils.h"
#include "qemu/log.h"
#include "qemu/rcu.h"
#include "qemu/timer.h"
#include "hw/pci/pci.h"
#include "vgpu-pci.h"
#include "trace.h"

/* @job has something to claim: it is on s->jobs. */
static bool vgpu_job_claimable(const VGPUJob *job)
{
    return job->next < job->total || job->nback;
}

/* Stop handing out CTAs of @job; mark it done once no worker runs it. */
static void vgpu_job_stop_claims_locked(VGPUState *s, VGPUJob *job)
{
    if (vgpu_job_claimable(job)) {
        QTAILQ_REMOVE(&s->jobs, job, link);
    }
    job->next = job->total;
    job->nback = 0;
    bitmap_zero(job->slots_used, VGPU_MAX_SMS);
}

static void vgpu_job_check_done_locked(VGPUJob *job)
{
    if (!vgpu_job_claimable(job) && !job->running && !job->done) {
        job->done = true;
        /*
         * Only a thread that waits for it: an inline run finishes its
         * launch itself, and a wake-up of the idle queue thread costs
         * the vCPU thread two context switches on a small host.
         */
        if (job->waited) {
            qemu_cond_broadcast(&job->q->cond);
        }
    }
}

static void vgpu_job_abort_locked(VGPUState *s, VGPUJob *job, uint32_t status)
{
    if (!job->abort_status) {
        job->abort_status = status;
    }
    atomic_store(&job->ctl.abort, 1);
    vgpu_job_stop_claims_locked(s, job);
    vgpu_job_check_done_locked(job);
}

/*
 * Abort the command executing on @q.  A launch not yet handed to the
 * workers is aborted as soon as it is (q->abort_pending).
 */
void vgpu_queue_abort_locked(VGPUQueue *q, uint32_t status)
{
    if (!q->busy) {
        return;
    }
    trace_vgpu_launch_abort(q->idx, status);
    if (!q->abort_pending) {
        q->abort_pending = status;
    }
    if (q->job) {
        vgpu_job_abort_locked(q->s, q->job, status);
    }
    vgpu_sem_wake_locked(q->s); /* a semaphore acquire may be waiting */
}

/* What a claim runs: clusters [first, first + count), or the saved
 * cluster in @slot (>= 0) of the launch's context-save buffer. */
/* The next claim of @job (which is claimable); under s->lock. */
static VGPUClaim vgpu_job_claim_locked(VGPUState *s, VGPUJob *job)
{
    VGPUClaim c;

    if (job->nback) {
        /* what preempted SMs gave back goes first, oldest first */
        c.first = job->back[0].first;
        c.count = job->back[0].count;
        c.slot = job->back[0].slot;
        memmove(&job->back[0], &job->back[1], --job->nback * sizeof(job->back[0]));
    } else {
        /*
         * At most a chunk, and with several SMs at most half of what is
         * left over the SMs (guided self-scheduling): the claims shrink
         * towards the end of the grid, so that no SM starts a long claim
         * when the others are about to run dry.
         */
        c.first = job->next;
        c.count = MIN(job->chunk, job->total - c.first);
        if (s->nthreads > 1) {
            c.count = MIN(c.count,
                          MAX(1, (job->total - c.first) / (2 * s->nthreads)));
        }
        c.slot = -1;
        job->next += c.count;
    }
    QTAILQ_REMOVE(&s->jobs, job, link);
    if (vgpu_job_claimable(job)) {
        QTAILQ_INSERT_TAIL(&s->jobs, job, link);
    }
    return c;
}

/* Room for @n bytes of saved state at w->ctx. */
static bool vgpu_worker_ctx(VGPUWorker *w, size_t n)
{
    if (n > w->ctx_size) {
        g_free(w->ctx);
        w->ctx = g_try_malloc(n);
        w->ctx_size = w->ctx ? n : 0;
    }
    return w->ctx != NULL;
}

/*
 * @w's SM stopped for a preemption: save the cluster it was running into a
 * free slot of the launch's buffer.  Returns the slot, or -1 when there is
 * nothing to save; -2 when it cannot be saved (too large for a slot, no
 * memory, the buffer outside RAM): then the SM must go on with it.
 */
static int vgpu_job_save(VGPUWorker *w, VGPUJob *job, uint32_t *cluster)
{
    VGPUState *s = w->s;
    size_t need;
    unsigned long i;
    int slot = -1;

    if (!vgpu_sm_preempted(w->sm, cluster)) {
        return -1;
    }
    need = vgpu_sm_save_bytes(w->sm);
    if (need > job->slot_bytes || !vgpu_worker_ctx(w, need) ||
        vgpu_sm_save(w->sm, w->ctx, need) != need) {
        return -2;
    }
    qemu_mutex_lock(&s->lock);
    i = find_first_zero_bit(job->slots_used, s->nthreads);
    if (i < s->nthreads) {
        set_bit(i, job->slots_used);
        slot = (int)i;
    }
    qemu_mutex_unlock(&s->lock);
    if (slot < 0) {
        return -2;
    }
    if (!vgpu_dma_write(s, job->csb + (uint64_t)slot * job->slot_bytes,
                        w->ctx, need)) {
        qemu_mutex_lock(&s->lock);
        clear_bit(slot, job->slots_used);
        qemu_mutex_unlock(&s->lock);
        return -2;
    }
    trace_vgpu_preempt_save(job->q->idx, w->idx, *cluster, slot, need);
    return slot;
}

/*
 * Go on with the clusters @c->first .. of a claim on @w's SM after an
 * inline run's budget stopped it (vgpu_job_run_locked): the cluster it was
 * running from the state it saved in @w->ctx (@c->slot VGPU_SLOT_LIVE),
 * then those not started.
 */
static int vgpu_job_go_on(VGPUWorker *w, struct vgpu_launch *l, VGPUClaim c,
                          struct vgpu_exception_record *exc)
{
    uint32_t end = c.first + c.count, next = c.first;
    int rc = 0;

    if (c.slot == VGPU_SLOT_LIVE) {
        rc = vgpu_sm_resume(w->sm, l, w->ctx, w->ctx_size, exc);
        next++;
    }
    if (!rc && next < end) {
        rc = vgpu_sm_run(w->sm, l, next, end - next, exc);
    }
    return rc;
}

/*
 * Run claim @c of @job on @w's SM, which the caller has marked busy and
 * counted in job->running.  @how: VGPU_CHUNK_RUN; VGPU_CHUNK_INLINE, in
 * the vCPU thread under an inline budget (job->ctl.preempt_every): once
 * it is spent the SM's own thread goes on (@w->cont); VGPU_CHUNK_GO_ON,
 * that thread.  Called without s->lock; returns with it held.
 */
enum { VGPU_CHUNK_RUN, VGPU_CHUNK_INLINE, VGPU_CHUNK_GO_ON };

static void vgpu_job_run_chunk(VGPUWorker *w, VGPUJob *job, VGPUClaim c,
                               int how)
{
    VGPUState *s = w->s;
    /*
     * Zeroed: a failed chunk's record goes whole into guest memory (the
     * completion record).  Every failing path of the core fills it, but
     * one that did not would otherwise hand the guest QEMU's stack.
     */
    struct vgpu_exception_record exc = { 0 };
    struct vgpu_launch l;
    uint32_t end = c.first + c.count, cluster = 0;
    int rc, slot = -1;

    vgpu_mmu_ctx_bind(&w->mmu, s, job->asid, job->root);
    l = job->launch;
    l.mem_opaque = &w->mmu;
    if (how == VGPU_CHUNK_GO_ON) {
        rc = vgpu_job_go_on(w, &l, c, &exc);
    } else if (c.slot >= 0) {
        /* a saved cluster: from its slot, checked by the core */
        trace_vgpu_preempt_restore(job->q->idx, w->idx, c.first, c.slot);
        if (!vgpu_worker_ctx(w, job->slot_bytes) ||
            !vgpu_dma_read(s, job->csb + (uint64_t)c.slot * job->slot_bytes,
                           w->ctx, job->slot_bytes)) {
            vgpu_exc_set(&exc, VGPU_EXC_BAD_CONTEXT,
                         "saved context: slot %d cannot be read", c.slot);
            rc = -1;
        } else {
            rc = vgpu_sm_resume(w->sm, &l, w->ctx, job->slot_bytes, &exc);
        }
        qemu_mutex_lock(&s->lock);
        clear_bit(c.slot, job->slots_used);
        qemu_mutex_unlock(&s->lock);
    } else {
        trace_vgpu_worker_run(w->idx, job->q->idx, c.first, c.count);
        rc = vgpu_sm_run(w->sm, &l, c.first, c.count, &exc);
    }
    if (how == VGPU_CHUNK_INLINE && rc == VGPU_RUN_PREEMPTED &&
        !atomic_load(&job->ctl.preempt)) {
        /*
         * The budget is spent, not asked for by a launch that waits: the
         * SM's thread goes on, from the state saved here (the SM's state
         * points into this thread's stack: @l).
         */
        bool live = vgpu_sm_preempted(w->sm, &cluster);

        if (!live || (vgpu_worker_ctx(w, vgpu_sm_save_bytes(w->sm)) &&
                      vgpu_sm_save(w->sm, w->ctx, w->ctx_size))) {
            qemu_mutex_lock(&s->lock);
            job->ctl.preempt_every = job->preempt_every;
            trace_vgpu_inline_handoff(job->q->idx, w->idx, cluster, live);
            w->cont_job = job;
            w->cont = (VGPUClaim){ cluster, end - cluster,
                                   live ? VGPU_SLOT_LIVE : -1 };
            qemu_cond_broadcast(&s->pool_cond);
            return;
        }
        vgpu_exc_set(&exc, VGPU_EXC_BAD_LAUNCH, "out of host memory");
        rc = -1;
    }
    if (how == VGPU_CHUNK_INLINE) {
        qemu_mutex_lock(&s->lock);
        job->ctl.preempt_every = job->preempt_every;
        qemu_mutex_unlock(&s->lock);
    }
    while (rc == VGPU_RUN_PREEMPTED) {
        slot = vgpu_job_save(w, job, &cluster);
        if (slot != -2) {
            break;
        }
        /* it cannot be saved: this launch is not preempted any more */
        qemu_mutex_lock(&s->lock);
        job->no_preempt = true;
        job->ctl.preempt_every = 0;
        atomic_store(&job->ctl.preempt, 0);
        qemu_mutex_unlock(&s->lock);
        if (!vgpu_worker_ctx(w, vgpu_sm_save_bytes(w->sm))) {
            vgpu_exc_set(&exc, VGPU_EXC_BAD_LAUNCH, "out of host memory");
            rc = -1;
            break;
        }
        vgpu_sm_save(w->sm, w->ctx, w->ctx_size);
        rc = vgpu_sm_resume(w->sm, &l, w->ctx, w->ctx_size, &exc);
        if (!rc && cluster + 1 < end) {
            rc = vgpu_sm_run(w->sm, &l, cluster + 1, end - cluster - 1, &exc);
        }
    }
    if (rc == -1 && exc.code == VGPU_EXC_GLOBAL_FAULT) {
        vgpu_mmu_fault_record(&w->mmu, &exc);
    }

    qemu_mutex_lock(&s->lock);
    job->running--;
    w->busy = false;
    w->job = NULL;
    if (rc == VGPU_RUN_PREEMPTED) {
        uint32_t rest = cluster + (slot >= 0);

        /*
         * To the back of the round robin: a launch of its priority that
         * waits goes first (uapi "Timeslices").
         */
        if (vgpu_job_claimable(job)) {
            QTAILQ_REMOVE(&s->jobs, job, link);
        }
        /* at most a saved cluster and a range per SM (see below) */
        g_assert(job->nback + 2 <= ARRAY_SIZE(job->back));
        if (slot >= 0) {
            /*
             * After the saved clusters given back before it, ahead of
             * every range not started: saved clusters resume before a new
             * cluster starts, so no more are saved at once than there are
             * SMs (slots).
             */
            uint32_t at = 0;

            while (at < job->nback && job->back[at].slot >= 0) {
                at++;
            }
            memmove(&job->back[at + 1], &job->back[at],
                    (job->nback - at) * sizeof(job->back[0]));
            job->back[at] = (typeof(job->back[0])){ cluster, 1, slot };
            job->nback++;
            s->preemptions++;
        }
        if (rest < end) {
            /*
             * Among the ranges given back, in cluster order: the lowest
             * cluster not started starts first, whichever SM gave its
             * range back first.  CTAs that spin until an earlier one has
             * published (a decoupled look-back) otherwise fill the slots
             * while the CTA they wait for sits in a range behind them:
             * saved clusters resume first, so it would never start.
             */
            uint32_t at = job->nback;

            while (at > 0 && job->back[at - 1].slot < 0 &&
                   job->back[at - 1].first > rest) {
                at--;
            }
            memmove(&job->back[at + 1], &job->back[at],
                    (job->nback - at) * sizeof(job->back[0]));
            job->back[at] = (typeof(job->back[0])){ rest, end - rest, -1 };
            job->nback++;
        }
        if (vgpu_job_claimable(job)) {
            QTAILQ_INSERT_TAIL(&s->jobs, job, link);
        }
        qemu_cond_broadcast(&s->pool_cond);
        /* its queue thread watches the timeslices again */
        qemu_cond_broadcast(&job->q->cond);
    } else if (rc) {
        bool real = exc.code != VGPU_EXC_ABORTED;
        bool have_real = job->failed && job->exc.code != VGPU_EXC_ABORTED;

        /*
         * A real exception wins over the aborts it caused; else the
         * lowest CTA's.
         */
        if (!job->failed || (real && !have_real) ||
            (real == have_real && c.first < job->fail_cta)) {
            job->exc = exc;
            job->fail_cta = c.first;
            job->failed = true;
        }
        atomic_store(&job->ctl.abort, 1);
        vgpu_job_stop_claims_locked(s, job);
    }
    /*
     * The request is served once every SM that ran the launch has stopped
     * (preempted, or done): its claims may start again.
     */
    if (!job->running && job->preempting) {
        job->preempting = false;
        atomic_store(&job->ctl.preempt, 0);
        qemu_cond_broadcast(&s->pool_cond);
        qemu_cond_broadcast(&job->q->cond);
    }
    vgpu_job_check_done_locked(job);
}

/* An SM no worker is running, or NULL. */
static VGPUWorker *vgpu_idle_worker_locked(VGPUState *s)
{
    for (uint32_t i = 0; i < s->nthreads; i++) {
        if (!s->workers[i].busy) {
            return &s->workers[i];
        }
    }
    return NULL;
}

/* No launch waits for SMs and one is free: an inline run may start. */
bool vgpu_pool_idle_locked(VGPUState *s)
{
    return QTAILQ_EMPTY(&s->jobs) && vgpu_idle_worker_locked(s);
}

/*
 * @j runs on some SM: start preempting it (for a launch of queue @by) if
 * it can be preempted and is not already.
 */
static bool vgpu_job_preempt_locked(VGPUJob *j, VGPUQueue *by)
{
    if (!j->running || !j->csb || j->no_preempt || j->preempting) {
        return false;
    }
    trace_vgpu_preempt_request(j->q->idx, by->idx);
    j->preempting = true;
    atomic_store(&j->ctl.preempt, 1);
    return true;
}

/* VGPU_REG_PREEMPT: preempt the launch @q runs, if it can be. */
void vgpu_queue_preempt_locked(VGPUQueue *q)
{
    if (q->job) {
        vgpu_job_preempt_locked(q->job, q);
    }
}

/*
 * @job waits for SMs (uapi "Timeslices"): preempt the launches of its
 * priority whose claim on an SM has run for a timeslice and counted some
 * progress (the core counts a launch's warp-instructions at each budget
 * slice, VGPU_CTL_CHECK_EVERY).  Returns the
 * time until it should look again, in ns (INT64_MAX: only when woken).
 */
static int64_t vgpu_timeslice_locked(VGPUState *s, VGPUJob *job)
{
    int64_t slice = (int64_t)s->timeslice_us * SCALE_US;
    int64_t now, next = slice;

    /* woken when that changes (vgpu_job_run_chunk) */
    if (!slice || !vgpu_job_claimable(job) || job->preempting) {
        return INT64_MAX;
    }
    if (vgpu_idle_worker_locked(s)) {
        return slice;   /* a worker is on its way */
    }
    now = get_clock();
    for (uint32_t i = 0; i < s->nthreads; i++) {
        VGPUWorker *w = &s->workers[i];
        VGPUJob *j = w->job;
        int64_t left;

        if (!j || j == job || j->q->priority != job->q->priority ||
            !j->csb || j->no_preempt || j->preempting) {
            continue;
        }
        left = w->claim_ns + slice - now;
        if (left > 0) {
            next = MIN(next, left);
        } else if (atomic_load(&j->ctl.executed) == w->claim_executed) {
            /*
             * Its slice is over, but it has not yet counted a warp-
             * instruction since the claim (a restore, a worker the host
             * did not run): preempting it now would take its turn for
             * nothing, every time on a loaded host.  Look again soon.
             */
            next = MIN(next, slice / 4 + 1);
        } else {
            vgpu_job_preempt_locked(j, job->q);
        }
    }
    return next;
}

/* TIMESLICE_US changed: the launches waiting for SMs look again. */
void vgpu_queues_wake_locked(VGPUState *s)
{
    for (uint32_t i = 0; i < s->nqueues; i++) {
        qemu_cond_broadcast(&s->queues[i].cond);
    }
}

/*
 * A launch of @q waits for SMs and none is free: preempt the running
 * launches of lower priority that can be (uapi "Preemption").
 */
static void vgpu_preempt_lower_locked(VGPUState *s, VGPUQueue *q)
{
    for (uint32_t i = 0; i < s->nthreads; i++) {
        VGPUJob *j = s->workers[i].job;

        if (j && j->q->priority < q->priority) {
            vgpu_job_preempt_locked(j, q);
        }
    }
}

/*
 * The launch a free SM serves next: the first on s->jobs of those whose
 * queue has the highest priority now.  A claim moves its launch to the
 * tail, so launches of one priority take turns, one claim each.  Few
 * launches are ever in progress: a scan is cheap.
 */
static VGPUJob *vgpu_job_pick_locked(VGPUState *s)
{
    VGPUJob *job, *best = NULL;

    QTAILQ_FOREACH(job, &s->jobs, link) {
        /* a launch being preempted waits until all its SMs have stopped */
        if (job->preempting) {
            continue;
        }
        if (!best || job->q->priority > best->q->priority) {
            best = job;
        }
    }
    return best;
}

void *vgpu_worker_thread(void *opaque)
{
    VGPUWorker *w = opaque;
    VGPUState *s = w->s;

    rcu_register_thread();
    qemu_mutex_lock(&s->lock);
    while (!s->exiting) {
        VGPUJob *job;
        VGPUClaim claim;

        if (w->cont_job) {
            /* an inline run left its launch to this SM */
            job = w->cont_job;
            claim = w->cont;
            w->cont_job = NULL;
            w->claim_ns = get_clock();
            w->claim_executed = atomic_load(&job->ctl.executed);
            qemu_mutex_unlock(&s->lock);
            vgpu_job_run_chunk(w, job, claim, VGPU_CHUNK_GO_ON);
            continue;
        }
        /* busy here: a queue thread has borrowed this SM */
        job = w->busy ? NULL : vgpu_job_pick_locked(s);
        if (!job) {
            qemu_cond_wait(&s->pool_cond, &s->lock);
            continue;
        }
        claim = vgpu_job_claim_locked(s, job);
        job->running++;
        w->busy = true;
        w->job = job;
        w->claim_ns = get_clock();
        w->claim_executed = atomic_load(&job->ctl.executed);
        qemu_mutex_unlock(&s->lock);
        vgpu_job_run_chunk(w, job, claim, VGPU_CHUNK_RUN);
    }
    qemu_mutex_unlock(&s->lock);
    rcu_unregister_thread();
    return NULL;
}

static int64_t vgpu_clock_ns(void)
{
    return get_clock();
}

/*
 * Run @job on the pool and wait for it, enforcing the watchdog.  Called
 * and returns with s->lock held.  Returns the command status.  @inl: in
 * the vCPU thread that rang the doorbell (vgpu-queue.c), which does not
 * wait: a launch of one chunk runs here on an idle SM for at most
 * q->inline_left warp-instructions, then that SM's thread goes on with
 * it; a larger one goes to the pool.  VGPU_STATUS_PENDING then: the queue
 * thread waits for it (vgpu_job_wait_locked).
 */
uint32_t vgpu_job_run_locked(VGPUQueue *q, VGPUJob *job,
                             struct vgpu_exception_record *exc, bool inl)
{
    VGPUState *s = q->s;
    VGPUJob *waiting;
    VGPUWorker *w = NULL;

    job->q = q;
    q->job = job;
    job->wdog_ms = s->wdog_ms ? s->wdog_ms : VGPU_DEFAULT_WDOG_MS;
    /* preemption needs the queue's buffer (uapi "Preemption") */
    if (q->csb && s->csb_slot) {
        job->csb = q->csb;
        job->slot_bytes = s->csb_slot;
        job->preempt_every = s->preempt_every;
    }
    job->ctl.preempt_every = job->preempt_every;
    /* the watchdog also reaches CTAs this thread runs itself */
    job->ctl.clock = vgpu_clock_ns;
    job->ctl.deadline = get_clock() + (int64_t)job->wdog_ms * SCALE_MS;
    if (q->cdp_deadline && q->cdp_deadline < job->ctl.deadline) {
        job->ctl.deadline = q->cdp_deadline; /* a child: the tree's (vgpu-cdp.c) */
    }
    /* a launch waiting for SMs comes first unless its priority is lower */
    waiting = vgpu_job_pick_locked(s);
    if (job->total <= job->chunk && !q->abort_pending &&
        (!waiting || waiting->q->priority < q->priority)) {
        w = vgpu_idle_worker_locked(s);
    }
    if (w) {
        /*
         * One chunk and an idle SM: run it on this thread with that SM,
         * sparing two thread hand-offs (the pool's wake-up and the
         * completion's); the SM stays one of threads= SMs.
         */
        job->next = job->total;
        job->running++;
        w->busy = true;
        w->job = job;
        w->claim_ns = get_clock();
        w->claim_executed = atomic_load(&job->ctl.executed);
        if (inl) {
            job->ctl.preempt_every = job->preempt_every ?
                MIN(job->preempt_every, q->inline_left) : q->inline_left;
        }
        qemu_mutex_unlock(&s->lock);
        vgpu_job_run_chunk(w, job, (VGPUClaim){ 0, job->total, -1 },
                           inl ? VGPU_CHUNK_INLINE : VGPU_CHUNK_RUN);
        /* its worker may have skipped work meanwhile */
        if (!QTAILQ_EMPTY(&s->jobs)) {
            qemu_cond_broadcast(&s->pool_cond);
        }
    } else {
        QTAILQ_INSERT_TAIL(&s->jobs, job, link);
        qemu_cond_broadcast(&s->pool_cond);
        if (q->abort_pending) {
            vgpu_job_abort_locked(s, job, q->abort_pending);
        } else if (!vgpu_idle_worker_locked(s)) {
            vgpu_preempt_lower_locked(s, q);
        }
    }
    if (inl && !job->done) {
        return VGPU_STATUS_PENDING;
    }
    return vgpu_job_wait_locked(q, job, exc);
}

/*
 * Wait until @job, which runs on the pool, has ended, enforcing the
 * watchdog and the timeslices of its priority.  s->lock held.  Returns
 * the command status, @exc the exception record.
 */
uint32_t vgpu_job_wait_locked(VGPUQueue *q, VGPUJob *job,
                              struct vgpu_exception_record *exc)
{
    VGPUState *s = q->s;
    uint32_t wdog_ms = job->wdog_ms, status = VGPU_ERR_NONE;
    int64_t deadline = job->ctl.deadline;

    job->waited = true;
    while (!job->done) {
        int64_t left = deadline - get_clock();

        if (job->abort_status) {
            qemu_cond_wait(&q->cond, &s->lock);
        } else if (left <= 0) {
            trace_vgpu_watchdog(q->idx, wdog_ms);
            vgpu_job_abort_locked(s, job, VGPU_ERR_TIMEOUT);
        } else {
            /* waiting for SMs: the timeslices of its priority */
            left = MIN(left, vgpu_timeslice_locked(s, job));
            qemu_cond_timedwait(&q->cond, &s->lock,
                                (int)MIN(DIV_ROUND_UP(left, SCALE_MS), 1000));
        }
    }
    q->job = NULL;

    /* CTAs stopped by the deadline (vgpu_launch_ctl.clock) */
    if (!job->abort_status && job->failed &&
        job->exc.code == VGPU_EXC_ABORTED && get_clock() >= deadline) {
        trace_vgpu_watchdog(q->idx, wdog_ms);
        job->abort_status = VGPU_ERR_TIMEOUT;
    }
    if (job->failed) {
        *exc = job->exc;
        status = VGPU_ERR_EXCEPTION;
    }
    if (job->abort_status) {
        uint64_t n = atomic_load(&job->ctl.executed);

        status = job->abort_status;
        if (!job->failed || job->exc.code == VGPU_EXC_ABORTED) {
            if (!job->failed) {
                vgpu_exc_set(exc, VGPU_EXC_ABORTED, "launch aborted");
            }
            if (status == VGPU_ERR_TIMEOUT) {
                snprintf(exc->msg, sizeof(exc->msg),
                         "watchdog: launch ran longer than %u ms (stopped "
                         "after %" PRIu64 " warp-instructions)", wdog_ms, n);
            } else {
                snprintf(exc->msg, sizeof(exc->msg),
                         "launch aborted: queue disabled (after %" PRIu64
                         " warp-instructions)", n);
            }
        } else {
            /* A real exception raced with the abort: report it. */
            status = VGPU_ERR_EXCEPTION;
        }
    }
    return status;
}
