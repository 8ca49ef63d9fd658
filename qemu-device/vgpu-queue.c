/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vGPU PCIe device: command rings and commands (the SM worker pool they
 * hand launches to is vgpu-pool.c).
 *
 * Each hardware queue has a thread that takes commands from its ring in
 * guest memory, one at a time and in order, executes them and writes a
 * completion record for each into the completion ring (same slot index).
 * A launch is handed to the pool of SM worker threads (threads= of them,
 * each with its own struct vgpu_sm): they claim chunks of the grid's CTAs
 * and run them with vgpu_sm_run(), sharing the launch's vgpu_launch_ctl
 * (instruction budget, abort flag, watchdog deadline).  The queue thread
 * meanwhile waits on the wall-clock watchdog.  A free worker takes its next
 * chunk from a launch of the highest queue priority with CTAs left, round
 * robin among launches of that priority.  A launch of one chunk runs on the
 * queue thread itself, on an idle worker's SM that it borrows for the time.
 * A semaphore acquire waits on its queue thread, polling the semaphore and
 * woken whenever a command completes anywhere (vgpu-sem.c).  None of these threads
 * takes the BQL; the MMIO side only latches register state under s->lock
 * and signals them.
 *
 * A command that fails stops its queue (VGPU_QSTAT_STOPPED, VGPU_Q_ERROR)
 * and raises VGPU_IRQ_ERROR; the guest resumes it with VGPU_QCTRL_RESUME.
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

#define VGPU_CODE_ALIGN 16u /* bytes per instruction (uapi/vgpu_isa.h) */
#define VGPU_CLAIM_MAX 16u  /* clusters an SM claims at a time, at most */

/* Completion records and commands are little-endian in guest memory. */
static void vgpu_cpl_to_le(struct vgpu_completion *c)
{
    struct vgpu_exception_record *e = &c->exc;
    int i;

    c->status = cpu_to_le32(c->status);
    c->opcode = cpu_to_le32(c->opcode);
    c->index = cpu_to_le32(c->index);
    c->queue = cpu_to_le32(c->queue);
    c->seq = cpu_to_le64(c->seq);
    c->warp_insns = cpu_to_le64(c->warp_insns);
    c->elapsed_ns = cpu_to_le64(c->elapsed_ns);
    e->code = cpu_to_le32(e->code);
    for (i = 0; i < 3; i++) {
        e->cta[i] = cpu_to_le32(e->cta[i]);
    }
    e->warp = cpu_to_le32(e->warp);
    e->lane_mask = cpu_to_le32(e->lane_mask);
    e->pc = cpu_to_le32(e->pc);
    e->barid = cpu_to_le32(e->barid);
    e->addr = cpu_to_le64(e->addr);
    e->insn[0] = cpu_to_le64(e->insn[0]);
    e->insn[1] = cpu_to_le64(e->insn[1]);
    for (i = 0; i < 4; i++) {
        e->info[i] = cpu_to_le32(e->info[i]);
    }
}

static void vgpu_launch_from_le(struct vgpu_cmd_launch *c)
{
#define X(f, b) (c->f = le##b##_to_cpu(c->f))
    VGPU_CMD_LAUNCH_SHARED(X);
#undef X
    c->asid = le32_to_cpu(c->asid);
    c->pad = le32_to_cpu(c->pad);
    c->trace_va = le64_to_cpu(c->trace_va);
    c->trace_size = le32_to_cpu(c->trace_size);
    c->pad2 = le32_to_cpu(c->pad2);
    c->cdp_area = le64_to_cpu(c->cdp_area);
}

/* Timeline records and their header are little-endian in guest memory. */
static void vgpu_trace_to_le(struct vgpu_trace_event *e)
{
    int i;

    e->cycle = cpu_to_le64(e->cycle);
    e->type = cpu_to_le16(e->type);
    e->warp = cpu_to_le32(e->warp);
    for (i = 0; i < 3; i++) {
        e->cta[i] = cpu_to_le32(e->cta[i]);
    }
    e->pc = cpu_to_le32(e->pc);
    e->id = cpu_to_le32(e->id);
    e->count = cpu_to_le32(e->count);
    e->expected = cpu_to_le32(e->expected);
    e->flow = cpu_to_le32(e->flow);
    e->addr = cpu_to_le64(e->addr);
    e->addr2 = cpu_to_le64(e->addr2);
}

static void vgpu_trace_header_to_le(struct vgpu_trace_header *h)
{
    h->magic = cpu_to_le32(h->magic);
    h->version = cpu_to_le32(h->version);
    h->record_bytes = cpu_to_le32(h->record_bytes);
    h->capacity = cpu_to_le32(h->capacity);
    h->count = cpu_to_le64(h->count);
    h->dropped = cpu_to_le64(h->dropped);
}

static bool vgpu_all_zero(const void *p, size_t n)
{
    return buffer_is_zero(p, n);
}

uint32_t vgpu_mmu_error(const VGPUMMUCtx *ctx, struct vgpu_exception_record *exc,
                        const char *what)
{
    vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "%s", what);
    vgpu_mmu_fault_record(ctx, exc);
    return VGPU_ERR_MMU_FAULT;
}

/*
 * The launch of @job has ended with @status: write its timeline (records
 * first, header last) at @va through the launch's address space, on the
 * queue thread once no worker runs.  A fault fails a launch that had
 * succeeded; one that had already failed keeps its status and record.
 */
static uint32_t vgpu_trace_write(VGPUQueue *q, VGPUJob *job, uint64_t va,
                                 uint32_t status,
                                 struct vgpu_exception_record *exc)
{
    VGPUMMUCtx *ctx = &q->mmu;
    struct vgpu_trace_header h;
    uint32_t kept = vgpu_trace_sink_header(&job->sink, &h), i;
    uint64_t dropped = h.dropped;
    bool fault;

    for (i = 0; i < kept; i++) {
        vgpu_trace_to_le(&job->sink.rec[i]);
    }
    vgpu_trace_header_to_le(&h);
    fault = (kept && vgpu_mmu_copy(ctx, va + sizeof(h), job->sink.rec,
                                   (uint64_t)kept * sizeof(*job->sink.rec),
                                   VGPU_MMU_ACC_WRITE)) ||
            vgpu_mmu_copy(ctx, va, &h, sizeof(h), VGPU_MMU_ACC_WRITE);
    trace_vgpu_timeline(q->idx, va, kept, dropped);
    if (fault && status == VGPU_ERR_NONE) {
        return vgpu_mmu_error(ctx, exc, "launch: timeline write");
    }
    return status;
}

/* ---- commands ---- */

/* A launch's job and what it owns. */
static void vgpu_job_free(VGPUJob *job)
{
    vgpu_prog_free((struct vgpu_prog *)job->launch.prog);
    g_free((void *)job->launch.params);
    g_free(job->sink.rec);
    g_free(job);
}

/*
 * The launch @c of @job has ended with @status (s->lock held; returns
 * without it): its timeline, its completion's count; @job is freed.
 */
static uint32_t vgpu_launch_end_locked(VGPUQueue *q, VGPUJob *job,
                                       const struct vgpu_cmd_launch *c,
                                       uint32_t status,
                                       struct vgpu_completion *cpl)
{
    /* a reset voids the command: nothing more is written to the guest */
    bool timeline = (c->launch_flags & VGPU_LAUNCH_TIMELINE) &&
                    q->exec_gen == q->gen;

    qemu_mutex_unlock(&q->s->lock);
    cpl->warp_insns = atomic_load(&job->ctl.executed);
    if (timeline) {
        status = vgpu_trace_write(q, job, c->trace_va, status, &cpl->exc);
    }
    trace_vgpu_launch_done(q->idx, status, cpl->exc.code, cpl->warp_insns);
    vgpu_job_free(job);
    return status;
}

/* The program's and the parameters' sizes of launch @c: 0, or -1 (@exc). */
static int vgpu_launch_size_check(const struct vgpu_cmd_launch *c,
                                  struct vgpu_exception_record *exc)
{
    if (c->code_size < VGPU_CODE_ALIGN || c->code_size > VGPU_MAX_CODE_BYTES ||
        c->code_size % VGPU_CODE_ALIGN || c->code_va % VGPU_CODE_ALIGN) {
        vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "program of %u bytes at VA "
                     "0x%" PRIx64 ": not 16-aligned, or not 16..%u bytes",
                     c->code_size, (uint64_t)c->code_va, VGPU_MAX_CODE_BYTES);
        return -1;
    }
    if (c->param_size > VGPU_MAX_PARAM_BYTES) {
        vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "parameter buffer of %u "
                     "bytes exceeds %u", c->param_size, VGPU_MAX_PARAM_BYTES);
        return -1;
    }
    return 0;
}

/*
 * Run the grid of launch @c (fields checked as a command's, in host
 * order) in address space @c->asid whose level-3 table is at @root (q->mmu
 * bound to it): fetch its code and parameters, load it, run it and end it.
 * @host: a launch from a command, whose device-launch area (if any) gives
 * it a root grid identifier; else a child of a device-side launch, grid
 * @grid.  @inl as vgpu_cmd_launch's.  Called and returns without s->lock.
 */
uint32_t vgpu_launch_grid(VGPUQueue *q, const struct vgpu_cmd_launch *c,
                          uint64_t root, bool host, uint32_t grid,
                          struct vgpu_completion *cpl, bool inl)
{
    VGPUState *s = q->s;
    struct vgpu_exception_record *exc = &cpl->exc;
    VGPUMMUCtx *ctx = &q->mmu;
    g_autofree uint8_t *code = NULL;
    g_autofree uint8_t *params = NULL;
    VGPUJob *job;
    struct vgpu_prog *prog = NULL;
    struct vgpu_cdp_walk walk;
    uint32_t status;
    int i;

    if (vgpu_launch_size_check(c, exc)) {
        return VGPU_ERR_BAD_LAUNCH;
    }
    code = g_malloc(c->code_size);
    if (vgpu_mmu_copy(ctx, c->code_va, code, c->code_size,
                      VGPU_MMU_ACC_EXEC)) {
        return vgpu_mmu_error(ctx, exc, "launch: program fetch");
    }
    params = g_malloc0(MAX(c->param_size, 1));
    if (c->param_size && vgpu_mmu_copy(ctx, c->param_va, params,
                                       c->param_size, VGPU_MMU_ACC_READ)) {
        return vgpu_mmu_error(ctx, exc, "launch: parameter fetch");
    }
    if (vgpu_prog_load(code, c->code_size, &prog)) {
        vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "program of %u bytes cannot "
                     "be loaded", c->code_size);
        return VGPU_ERR_BAD_LAUNCH;
    }

    job = g_new0(VGPUJob, 1);
    job->launch = (struct vgpu_launch) {
        .prog = prog,
        .entry = c->entry,
        .grid = { c->grid[0], c->grid[1], c->grid[2] },
        .block = { c->block[0], c->block[1], c->block[2] },
        .cluster = { c->cluster[0], c->cluster[1], c->cluster[2] },
        .smem_bytes = c->smem_bytes,
        .params = g_steal_pointer(&params),
        .param_size = c->param_size,
        .flags = c->launch_flags,
        .seed = c->seed,
        .budget = c->budget,
        .mem = &vgpu_mmu_mem_ops,
        .ctl = &job->ctl,
    };
    job->asid = c->asid;
    job->root = root;
    if (vgpu_launch_validate(q->check_sm, &job->launch, exc)) {
        vgpu_job_free(job);
        return VGPU_ERR_BAD_LAUNCH;
    }
    /* its grid identifier in the device-launch area (vgpu-cdp.c) */
    if (c->cdp_area && host &&
        vgpu_cdp_walk_start(&walk, &vgpu_mmu_mem_ops, ctx, c->cdp_area, &grid,
                            exc)) {
        vgpu_job_free(job);
        return vgpu_mmu_error(ctx, exc, "launch: device-launch area");
    }
    job->launch.cdp_area = c->cdp_area;
    job->launch.cdp_grid = c->cdp_area ? grid : 0;
    /* The unit of work is a cluster (one CTA without cluster dims). */
    job->total = 1; /* a cooperative launch's grid is one group */
    for (i = 0; i < 3 && !(c->launch_flags & VGPU_LAUNCH_COOPERATIVE); i++) {
        job->total *= c->grid[i] / MAX(c->cluster[i], 1);
    }
    /*
     * A few claims per SM thread, and at most VGPU_CLAIM_MAX clusters a
     * claim, so that launches of higher priority get SMs soon.
     */
    job->chunk = s->nthreads == 1 ? job->total : job->total / (s->nthreads * 4);
    job->chunk = MAX(1, MIN(job->chunk, VGPU_CLAIM_MAX));
    if (c->launch_flags & VGPU_LAUNCH_TIMELINE) {
        /* Every worker's copy of the launch feeds this one sink. */
        job->sink.capacity = vgpu_trace_capacity(c->trace_size);
        job->sink.rec = g_new(struct vgpu_trace_event, job->sink.capacity);
        job->launch.event = vgpu_trace_sink_event;
        job->launch.event_opaque = &job->sink;
    }

    qemu_mutex_lock(&s->lock);
    status = vgpu_job_run_locked(q, job, exc, inl);
    if (status == VGPU_STATUS_PENDING) {
        q->step.job = job;
        qemu_mutex_unlock(&s->lock);
        return status;
    }
    status = vgpu_launch_end_locked(q, job, c, status, cpl);
    if (c->cdp_area && host) {
        /* the grids it launched, and theirs (vgpu-cdp.c) */
        status = vgpu_cdp_run(q, c, &walk, status, cpl);
    }
    return status;
}

/*
 * LAUNCH.  @inl: in the vCPU thread that rang the doorbell; it may leave
 * the launch running (VGPU_STATUS_PENDING, the job in q->step.job).  A
 * launch with a device-launch area is left to the queue thread
 * (VGPU_STATUS_DEFER): its children run after it.
 */
static uint32_t vgpu_cmd_launch(VGPUQueue *q, struct vgpu_cmd_launch *c,
                                struct vgpu_completion *cpl, bool inl)
{
    VGPUState *s = q->s;
    struct vgpu_exception_record *exc = &cpl->exc;
    VGPUMMUCtx *ctx = &q->mmu;
    bool timeline;
    uint64_t root;

    vgpu_launch_from_le(c);
    timeline = c->launch_flags & VGPU_LAUNCH_TIMELINE;
    if (c->hdr.flags & ~VGPU_CMD_F_IRQ || c->pad || c->pad2 ||
        (!timeline && (c->trace_va || c->trace_size)) ||
        c->cdp_area % 16) {
        return VGPU_ERR_BAD_COMMAND;
    }
    if (c->cdp_area && inl) {
        return VGPU_STATUS_DEFER;
    }
    trace_vgpu_launch(q->idx, c->code_va, c->code_size, c->entry, c->grid[0],
                      c->grid[1], c->grid[2],
                      (uint64_t)c->block[0] * c->block[1] * c->block[2],
                      c->asid);
    if (vgpu_launch_size_check(c, exc)) {
        return VGPU_ERR_BAD_LAUNCH;
    }
    if (timeline && (c->trace_va % 8 || c->trace_size % 8 ||
                     c->trace_size < sizeof(struct vgpu_trace_header) ||
                     c->trace_size > VGPU_TRACE_MAX_BYTES)) {
        vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "timeline of %u bytes at VA "
                     "0x%" PRIx64 ": not 8-aligned, or not %zu..%u bytes",
                     c->trace_size, (uint64_t)c->trace_va,
                     sizeof(struct vgpu_trace_header), VGPU_TRACE_MAX_BYTES);
        return VGPU_ERR_BAD_LAUNCH;
    }

    if (vgpu_mmu_lookup_as(s, c->asid, &root, ctx)) {
        return vgpu_mmu_error(ctx, exc, "launch: address space");
    }
    vgpu_mmu_ctx_bind(ctx, s, c->asid, root);
    return vgpu_launch_grid(q, c, root, true, 0, cpl, inl);
}

static uint32_t vgpu_cmd_fence(VGPUQueue *q, struct vgpu_cmd_fence *c,
                               struct vgpu_completion *cpl)
{
    VGPUState *s = q->s;
    VGPUMMUCtx *ctx = &q->mmu;
    uint64_t addr = le64_to_cpu(c->addr);
    uint64_t value = c->value; /* stays little-endian */
    uint32_t asid = le32_to_cpu(c->asid);
    uint64_t root;

    if (c->hdr.flags & ~VGPU_CMD_F_MASK || c->pad || addr % 8 ||
        !vgpu_all_zero(c->reserved, sizeof(c->reserved))) {
        return VGPU_ERR_BAD_COMMAND;
    }
    trace_vgpu_fence(q->idx, addr, le64_to_cpu(value), c->hdr.flags);
    if (c->hdr.flags & VGPU_CMD_F_FENCE_PHYS) {
        if (!vgpu_dma_write(s, addr, &value, sizeof(value))) {
            vgpu_exc_set(&cpl->exc, VGPU_EXC_GLOBAL_FAULT,
                         "fence: guest physical 0x%" PRIx64
                         " is not guest RAM", addr);
            cpl->exc.addr = addr;
            cpl->exc.info[0] = VGPU_MMU_ACC_WRITE;
            cpl->exc.info[1] = VGPU_MMU_F_BUS;
            return VGPU_ERR_MMU_FAULT;
        }
        return VGPU_ERR_NONE;
    }
    if (vgpu_mmu_lookup_as(s, asid, &root, ctx)) {
        return vgpu_mmu_error(ctx, &cpl->exc, "fence: address space");
    }
    vgpu_mmu_ctx_bind(ctx, s, asid, root);
    if (vgpu_mmu_copy(ctx, addr, &value, sizeof(value), VGPU_MMU_ACC_WRITE)) {
        return vgpu_mmu_error(ctx, &cpl->exc, "fence: write");
    }
    return VGPU_ERR_NONE;
}

static uint32_t vgpu_cmd_tlbi(VGPUQueue *q, struct vgpu_cmd_tlb_invalidate *c)
{
    uint32_t asid = le32_to_cpu(c->asid);
    uint64_t va = le64_to_cpu(c->va);

    if (c->hdr.flags & ~VGPU_CMD_F_IRQ || c->pad || va % VGPU_PAGE_SIZE ||
        (asid != VGPU_TLBI_ALL_AS && asid >= VGPU_AS_MAX) ||
        !vgpu_all_zero(c->reserved, sizeof(c->reserved))) {
        return VGPU_ERR_BAD_COMMAND;
    }
    trace_vgpu_tlb_invalidate(q->idx, asid, va, le64_to_cpu(c->size));
    /* Every TLB drops everything: allowed ("may drop more than asked"). */
    vgpu_tlb_flush_all(q->s);
    return VGPU_ERR_NONE;
}

static uint32_t vgpu_cmd_execute(VGPUQueue *q, uint8_t *cmd,
                                 struct vgpu_completion *cpl, bool inl)
{
    struct vgpu_cmd_header *hdr = (struct vgpu_cmd_header *)cmd;

    hdr->opcode = le32_to_cpu(hdr->opcode);
    hdr->flags = le32_to_cpu(hdr->flags);
    cpl->opcode = hdr->opcode;
    /* uapi "Completion vectors": checked here, for every command */
    if (!vgpu_cmd_vec_ok(hdr->flags, q->s->msix_vectors)) {
        return VGPU_ERR_BAD_COMMAND;
    }
    if (hdr->flags & VGPU_CMD_F_VEC_MASK) {
        q->step.vec = VGPU_CMD_VEC(hdr->flags);
        hdr->flags &= ~VGPU_CMD_F_VEC_MASK;
    }
    switch (hdr->opcode) {
    case VGPU_CMD_NOP:
        if (hdr->flags & ~VGPU_CMD_F_IRQ ||
            !vgpu_all_zero(cmd + sizeof(*hdr), VGPU_CMD_BYTES - sizeof(*hdr))) {
            return VGPU_ERR_BAD_COMMAND;
        }
        return VGPU_ERR_NONE;
    case VGPU_CMD_LAUNCH:
        return vgpu_cmd_launch(q, (struct vgpu_cmd_launch *)cmd, cpl, inl);
    case VGPU_CMD_FENCE:
        return vgpu_cmd_fence(q, (struct vgpu_cmd_fence *)cmd, cpl);
    case VGPU_CMD_TLB_INVALIDATE:
        return vgpu_cmd_tlbi(q, (struct vgpu_cmd_tlb_invalidate *)cmd);
    case VGPU_CMD_SEM_ACQUIRE:
    case VGPU_CMD_SEM_RELEASE:
        return vgpu_cmd_sem(q, (struct vgpu_cmd_sem *)cmd, cpl, inl);
    default:
        return VGPU_ERR_BAD_COMMAND;
    }
}

static const char *const vgpu_err_names[] = {
    [VGPU_ERR_NONE] = "ok",
    [VGPU_ERR_EXCEPTION] = "exception",
    [VGPU_ERR_BAD_COMMAND] = "malformed command",
    [VGPU_ERR_BAD_LAUNCH] = "invalid launch",
    [VGPU_ERR_MMU_FAULT] = "MMU fault",
    [VGPU_ERR_TIMEOUT] = "watchdog timeout",
    [VGPU_ERR_ABORTED] = "aborted",
    [VGPU_ERR_BAD_RING] = "bad ring",
    [VGPU_ERR_CPL_WRITE] = "completion write failed",
    [VGPU_ERR_BAD_REGISTER] = "bad register",
    [VGPU_ERR_BAD_DOORBELL] = "bad doorbell",
};

/* ---- queue threads ---- */

static bool vgpu_queue_runnable_locked(VGPUQueue *q)
{
    return q->enabled && !q->stopped && !q->hung && !q->hold && !q->busy &&
           q->head != q->tail && !q->s->paused;
}

void vgpu_queue_kick_locked(VGPUQueue *q)
{
    qemu_cond_broadcast(&q->cond);
}

static void vgpu_step_end_locked(VGPUQueue *q, uint32_t status);

/*
 * Take the command at the head and execute it; complete it unless an
 * inline run (@inl: the vCPU thread that rang the doorbell) left it to
 * the queue thread.  Lock held.
 */
static uint32_t vgpu_queue_step_locked(VGPUQueue *q, bool inl)
{
    VGPUState *s = q->s;
    VGPUStep *st = &q->step;
    uint32_t user_asid = q->user ? q->user_asid : UINT32_MAX;
    uint64_t ring = q->ring_base;
    uint8_t *cmd = st->cmd;
    uint32_t status;
    bool fault = false;
    uint64_t fault_va = 0;

    if (vgpu_inject_take_locked(q, VGPU_INJ_HANG)) {
        /* takes the command and never ends it, until disabled or reset */
        q->hung = true;
        return VGPU_STATUS_DEFER;
    }
    st->idx = q->head;
    st->gen = q->gen;
    st->size = q->size;
    st->cplb = q->cpl_base;
    st->flags = 0;
    st->vec = VGPU_MSIX_VEC_COMPLETION;
    st->job = NULL;
    q->busy = true;
    q->abort_pending = 0;
    q->exec_gen = st->gen;
    /* an acquire that gave way to a VM stop goes on with its time so far */
    q->cmd_start = get_clock() - q->yielded_ns;
    q->yielded_ns = 0;
    qemu_mutex_unlock(&s->lock);

    memset(&st->cpl, 0, sizeof(st->cpl));
    if (!vgpu_dma_read(s, ring + (uint64_t)st->idx * VGPU_CMD_BYTES, cmd,
                       VGPU_CMD_BYTES)) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: command ring at 0x%"
                      PRIx64 " is not guest RAM\n", q->idx, ring);
        status = VGPU_ERR_BAD_RING;
    } else {
        trace_vgpu_cmd(q->idx, st->idx, le32_to_cpu(*(uint32_t *)cmd));
        /* a user-mode queue's command runs in its address space only */
        status = user_asid == UINT32_MAX ? VGPU_ERR_NONE :
                 vgpu_user_cmd_filter(cmd, user_asid);
        if (status == VGPU_ERR_NONE &&
            le32_to_cpu(*(uint32_t *)cmd) == VGPU_CMD_LAUNCH) {
            qemu_mutex_lock(&s->lock);
            fault = vgpu_inject_take_locked(q, VGPU_INJ_MMU_FAULT);
            fault_va = q->inj_arg;
            qemu_mutex_unlock(&s->lock);
        }
        if (status != VGPU_ERR_NONE) {
            struct vgpu_cmd_header *hdr = (struct vgpu_cmd_header *)cmd;

            hdr->opcode = le32_to_cpu(hdr->opcode);
            hdr->flags = le32_to_cpu(hdr->flags);
            st->cpl.opcode = hdr->opcode;
        } else if (fault) {
            status = vgpu_inject_mmu_fault(&st->cpl, fault_va,
                le32_to_cpu(((struct vgpu_cmd_launch *)cmd)->asid));
        } else {
            status = vgpu_cmd_execute(q, cmd, &st->cpl, inl);
        }
        st->flags = ((struct vgpu_cmd_header *)cmd)->flags;
    }

    qemu_mutex_lock(&s->lock);
    if (status == VGPU_STATUS_PENDING) {
        /* the queue thread waits for the launch and completes it */
        q->step_pending = true;
        vgpu_queue_kick_locked(q);
        return status;
    }
    vgpu_step_end_locked(q, status);
    return status;
}

/*
 * The command of q->step has ended with @status: complete it (or, for a
 * YIELD or DEFER, leave HEAD on it), and let go of the queue.  Lock held.
 */
static void vgpu_step_end_locked(VGPUQueue *q, uint32_t status)
{
    VGPUState *s = q->s;
    VGPUStep *st = &q->step;
    struct vgpu_completion *cpl = &st->cpl;
    uint32_t idx = st->idx, gen = st->gen, size = st->size, flags = st->flags;
    bool cpl_ok;

    cpl->elapsed_ns = get_clock() - q->cmd_start;
    if (gen != q->gen) {
        /* Reset while executing: the command is void, nothing is written. */
        goto out;
    }
    if (status == VGPU_STATUS_YIELD) {
        /* not complete: HEAD stays, the VM's next run takes it again */
        q->yielded_ns = cpl->elapsed_ns;
        goto out;
    }
    if (status == VGPU_STATUS_DEFER) {
        /* not started: HEAD stays, the queue thread takes it */
        vgpu_queue_kick_locked(q);
        goto out;
    }
    cpl->status = status;
    cpl->index = idx;
    cpl->queue = q->idx;
    cpl->seq = q->completed + 1;
    if ((flags & VGPU_CMD_F_IRQ) &&
        vgpu_inject_take_locked(q, VGPU_INJ_CORRUPT_CPL)) {
        cpl->seq ^= 1ull << 63;
    }
    qemu_mutex_unlock(&s->lock);

    trace_vgpu_complete(q->idx, idx, status, vgpu_err_names[status]);
    vgpu_cpl_to_le(cpl);
    cpl_ok = vgpu_dma_write(s, st->cplb + (uint64_t)idx * sizeof(*cpl), cpl,
                            sizeof(*cpl));

    qemu_mutex_lock(&s->lock);
    if (gen != q->gen || !q->enabled || q->size != size) {
        goto out;
    }
    if (!cpl_ok) {
        qemu_log_mask(LOG_GUEST_ERROR, "vgpu: queue %u: completion ring at "
                      "0x%" PRIx64 " is not guest RAM\n", q->idx, st->cplb);
        if (status == VGPU_ERR_NONE) {
            status = VGPU_ERR_CPL_WRITE;
        }
        vgpu_note_error_locked(s, VGPU_ERR_CPL_WRITE, q->idx, idx);
    }
    q->completed++;
    /* A ring that cannot be read stays at the command it could not read. */
    q->head = status == VGPU_ERR_BAD_RING ? idx : (idx + 1) & (size - 1);
    if (status != VGPU_ERR_NONE) {
        q->stopped = true;
        q->error = status;
        q->error_index = idx;
        vgpu_note_error_locked(s, status, q->idx, idx);
        trace_vgpu_queue_stopped(q->idx, idx, status, vgpu_err_names[status]);
        vgpu_raise_irq_locked(s, VGPU_IRQ_ERROR);
    } else if (flags & VGPU_CMD_F_IRQ) {
        vgpu_inject_completion_irq_locked(q, st->vec);
    }
out:
    q->busy = false;
    qemu_cond_broadcast(&s->idle_cond);
    /* a command completed (or was voided): acquires look again */
    vgpu_sem_wake_locked(s);
}

/* A launch an inline run left to the pool has ended: complete it. */
static void vgpu_step_finish_pending_locked(VGPUQueue *q)
{
    VGPUStep *st = &q->step;
    VGPUJob *job = st->job;
    uint32_t status;

    q->step_pending = false;
    st->job = NULL;
    status = vgpu_job_wait_locked(q, job, &st->cpl.exc);
    status = vgpu_launch_end_locked(q, job, (struct vgpu_cmd_launch *)st->cmd,
                                    status, &st->cpl);
    qemu_mutex_lock(&q->s->lock);
    vgpu_step_end_locked(q, status);
}

/*
 * The doorbell of @q rang in a vCPU thread (BQL held) while the device is
 * idle: run its commands here, sparing the queue thread's wake-up and the
 * interrupt's bottom half (docs/device.md "Inline runs").  The doorbell's
 * launches run here for inline-budget warp-instructions in all, the one
 * that spends it goes on on its SM's thread; a semaphore acquire that
 * would wait goes to the queue thread.  At most a few commands, then the
 * queue thread takes the rest.  Lock held.
 */
#define VGPU_INLINE_CMDS 8

void vgpu_queue_inline_locked(VGPUQueue *q)
{
    VGPUState *s = q->s;
    uint32_t status;
    int n;

    q->inline_left = s->inline_budget;
    for (n = 0; n < VGPU_INLINE_CMDS && q->inline_left; n++) {
        if (!vgpu_queue_runnable_locked(q) || q->step_pending ||
            !vgpu_pool_idle_locked(s)) {
            break;
        }
        trace_vgpu_inline(q->idx, q->head);
        status = vgpu_queue_step_locked(q, true);
        if (status == VGPU_STATUS_PENDING) {
            return;     /* a launch goes on: the queue thread waits for it */
        }
        if (status == VGPU_STATUS_DEFER || status == VGPU_STATUS_YIELD) {
            break;
        }
        q->inline_left -= MIN(q->inline_left,
                              le64_to_cpu(q->step.cpl.warp_insns));
    }
    /* what is left (the queue thread's wake-up costs the vCPU a switch) */
    if (vgpu_queue_runnable_locked(q)) {
        vgpu_queue_kick_locked(q);
    }
}

static void *vgpu_queue_thread(void *opaque)
{
    VGPUQueue *q = opaque;
    VGPUState *s = q->s;

    rcu_register_thread();
    qemu_mutex_lock(&s->lock);
    for (;;) {
        if (q->step_pending) {
            /* even when exiting: the launch was aborted, it ends */
            vgpu_step_finish_pending_locked(q);
        } else if (s->exiting) {
            break;
        } else if (vgpu_queue_runnable_locked(q)) {
            vgpu_queue_step_locked(q, false);
        } else {
            qemu_cond_wait(&q->cond, &s->lock);
            trace_vgpu_queue_wake(q->idx);
        }
    }
    qemu_mutex_unlock(&s->lock);
    rcu_unregister_thread();
    return NULL;
}

bool vgpu_busy_locked(VGPUState *s)
{
    uint32_t i;

    for (i = 0; i < s->nqueues; i++) {
        if (s->queues[i].busy) {
            return true;
        }
    }
    return false;
}

void vgpu_wait_idle_locked(VGPUState *s)
{
    while (vgpu_busy_locked(s)) {
        qemu_cond_wait(&s->idle_cond, &s->lock);
    }
}

void vgpu_queues_init(VGPUState *s)
{
    /* a launch's shared memory is checked against what one CTA may use */
    struct vgpu_sm_config cfg = { .smem_max = s->smem_cta, .nsms = s->sms,
                                  .nwarpids = s->warps_per_sm };
    char name[32];
    uint32_t i;

    QTAILQ_INIT(&s->jobs);
    g_mutex_init(&s->sem_lock);
    g_cond_init(&s->sem_cond);
    s->queues = g_new0(VGPUQueue, s->nqueues);
    s->workers = g_new0(VGPUWorker, s->nthreads);
    for (i = 0; i < s->nthreads; i++) {
        VGPUWorker *w = &s->workers[i];

        w->s = s;
        w->idx = i;
        cfg.sm_id = i;
        w->sm = vgpu_sm_new(&cfg);
        snprintf(name, sizeof(name), "vgpu-sm%u", i);
        qemu_thread_create(&w->thread, name, vgpu_worker_thread, w,
                           QEMU_THREAD_JOINABLE);
    }
    for (i = 0; i < s->nqueues; i++) {
        VGPUQueue *q = &s->queues[i];

        q->s = s;
        q->idx = i;
        q->priority = VGPU_QPRIO_NORMAL;
        q->check_sm = vgpu_sm_new(&cfg);
        qemu_cond_init(&q->cond);
        snprintf(name, sizeof(name), "vgpu-q%u", i);
        qemu_thread_create(&q->thread, name, vgpu_queue_thread, q,
                           QEMU_THREAD_JOINABLE);
    }
}

void vgpu_queues_exit(VGPUState *s)
{
    uint32_t i;

    qemu_mutex_lock(&s->lock);
    s->exiting = true;
    for (i = 0; i < s->nqueues; i++) {
        vgpu_queue_abort_locked(&s->queues[i], VGPU_ERR_ABORTED);
        qemu_cond_broadcast(&s->queues[i].cond);
    }
    qemu_cond_broadcast(&s->pool_cond);
    qemu_mutex_unlock(&s->lock);

    for (i = 0; i < s->nqueues; i++) {
        qemu_thread_join(&s->queues[i].thread);
        qemu_cond_destroy(&s->queues[i].cond);
        vgpu_sm_free(s->queues[i].check_sm);
    }
    for (i = 0; i < s->nthreads; i++) {
        qemu_thread_join(&s->workers[i].thread);
        vgpu_sm_free(s->workers[i].sm);
        g_free(s->workers[i].ctx);
    }
    g_free(s->queues);
    g_free(s->workers);
    g_cond_clear(&s->sem_cond);
    g_mutex_clear(&s->sem_lock);
}
