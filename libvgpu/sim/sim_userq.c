// SPDX-License-Identifier: MIT
/*
 * sim backend: user-mode queues and user fences (kernel/vgpu_userq.c,
 * uapi/vgpu_drm.h "User-mode queues").  A queue's command ring, completion
 * ring and doorbell page are shared memory (memfd) that the front end maps
 * as it maps vgpu.ko's; ringing the doorbell (vgpu_backend_ops.doorbell)
 * runs the commands up to the new tail at once, as the device's queue
 * thread would, with the device's user-mode rules: every command in the
 * file's address space, FENCE_PHYS and TLB_INVALIDATE refused, a doorbell
 * beyond the ring stops the queue (qemu-device/vgpu-userq.c).  The
 * doorbell page shows the queue's progress (VGPU_DB_*) as BAR4 does.
 *
 * Differences, all documented in docs/libvgpu.md: a SEM_ACQUIRE that is
 * not satisfied stays at the head and is tried again at the next doorbell
 * or user-fence wait (its timeout is not modelled); nothing hangs, so no
 * watchdog; jobs complete inside the doorbell, so every queue (up to
 * VGPU_MAX_USERQ_PER_FILE, then -EMFILE as vgpu.ko) runs at once: none is
 * ever mapped out, and its records name one of the SIM_USER_QUEUES
 * hardware queues it shares.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "sim_priv.h"

#define SIM_UQ_RING_BYTES (VGPU_USERQ_ENTRIES * VGPU_CMD_BYTES)
#define SIM_UQ_CPL_BYTES                                                       \
	((VGPU_USERQ_ENTRIES * sizeof(struct vgpu_completion) + 4095) & ~4095ul)
/* mmap offsets: below the BOs' (4 GiB and up), as vgpu.ko's */
#define SIM_UQ_OFFSET(slot, area) ((0x10000ull + (slot) * 0x100ull + (area)) << 12)

static int sim_shm(size_t size, int *fd, void **ptr)
{
	*fd = memfd_create("vgpu-sim-userq", MFD_CLOEXEC);
	if (*fd < 0)
		return -errno;
	if (ftruncate(*fd, (off_t)size)) {
		close(*fd);
		return -errno;
	}
	*ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (*ptr == MAP_FAILED) {
		close(*fd);
		return -errno;
	}
	return 0;
}

static void sim_uq_free(struct sim_userq *uq)
{
	if (uq->ring)
		munmap(uq->ring, SIM_UQ_RING_BYTES);
	if (uq->cpl)
		munmap(uq->cpl, SIM_UQ_CPL_BYTES);
	if (uq->db)
		munmap((void *)uq->db, SIM_PAGE_SIZE);
	for (int i = 0; i < 3; i++)
		if (uq->fd[i] > 0)
			close(uq->fd[i]);
	memset(uq, 0, sizeof(*uq));
}

void vgpu_sim_userqs_fini(struct vgpu_sim *sim)
{
	for (uint32_t i = 0; i < VGPU_MAX_USERQ_PER_FILE; i++)
		if (sim->userqs[i].live)
			sim_uq_free(&sim->userqs[i]);
}

static struct sim_userq *sim_uq_lookup(struct vgpu_sim *sim, uint32_t id)
{
	for (uint32_t i = 0; id && i < VGPU_MAX_USERQ_PER_FILE; i++)
		if (sim->userqs[i].live && sim->userqs[i].id == id)
			return &sim->userqs[i];
	return NULL;
}

/* The doorbell page as BAR4 shows it. */
static void sim_uq_publish(struct sim_userq *uq)
{
	uq->db[VGPU_DB_TAIL / 4] = uq->tail;
	uq->db[VGPU_DB_HEAD / 4] = uq->head;
	uq->db[VGPU_DB_COMPLETED_LO / 4] = (uint32_t)uq->completed;
	uq->db[VGPU_DB_COMPLETED_HI / 4] = (uint32_t)(uq->completed >> 32);
	uq->db[VGPU_DB_STATUS / 4] =
		uq->state == VGPU_USERQ_STATE_ACTIVE ?
			VGPU_QSTAT_ENABLED |
				(uq->head == uq->tail ? VGPU_QSTAT_IDLE : 0) :
			VGPU_QSTAT_ENABLED | VGPU_QSTAT_STOPPED;
	uq->db[VGPU_DB_ERROR / 4] = uq->hw_error;
}

static bool sim_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

/* A 64-bit access at @va for @acc: 0 or an MMU fault in @exc. */
static uint32_t sim_uq_rw64(struct vgpu_sim *sim, uint64_t va, uint64_t *val,
			    uint32_t acc, struct vgpu_exception_record *exc)
{
	struct sim_mem mem = { .sim = sim };
	uint8_t *p = vgpu_sim_xlate(&mem, va, 8, acc);

	if (!p) {
		vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "semaphore access");
		vgpu_sim_fault_record(&mem, exc);
		return VGPU_ERR_MMU_FAULT;
	}
	if (acc == VGPU_MMU_ACC_WRITE)
		memcpy(p, val, 8);
	else
		memcpy(val, p, 8);
	return VGPU_ERR_NONE;
}

/*
 * Command @c of a user-mode queue.  VGPU_STATUS_YIELD-like: *@wait set
 * when a SEM_ACQUIRE is not satisfied yet (nothing completes).
 */
static uint32_t sim_uq_exec(struct vgpu_sim *sim, const uint8_t *raw,
			    struct vgpu_completion *cpl, bool *wait)
{
	struct vgpu_cmd_header hdr;
	uint64_t v;

	memcpy(&hdr, raw, sizeof(hdr));
	cpl->opcode = hdr.opcode;
	/* the device's vector check, for its default table (no MSI-X here) */
	if (!vgpu_cmd_vec_ok(hdr.flags, VGPU_MSIX_VECTORS_DEFAULT))
		return VGPU_ERR_BAD_COMMAND;
	hdr.flags &= ~VGPU_CMD_F_VEC_MASK;
	if (hdr.flags & ~VGPU_CMD_F_MASK || hdr.flags & VGPU_CMD_F_FENCE_PHYS)
		return VGPU_ERR_BAD_COMMAND;
	switch (hdr.opcode) {
	case VGPU_CMD_NOP:
		return sim_zero(raw + 8, VGPU_CMD_BYTES - 8) ? VGPU_ERR_NONE :
							       VGPU_ERR_BAD_COMMAND;
	case VGPU_CMD_LAUNCH: {
		struct vgpu_cmd_launch c;
		struct drm_vgpu_launch l;
		struct drm_vgpu_ext_timeline tl = { 0 };
		uint64_t cycles, insns;
		uint32_t st;

		memcpy(&c, raw, sizeof(c));
		if (c.pad || c.pad2 || c.cdp_area % 16 ||
		    (c.cdp_area && sim->no_device_launch) ||
		    c.launch_flags & ~VGPU_LAUNCH_FLAGS_MASK ||
		    (!(c.launch_flags & VGPU_LAUNCH_TIMELINE) &&
		     (c.trace_va || c.trace_size)))
			return VGPU_ERR_BAD_COMMAND;
#define X(f, b)	(l.f = c.f)
		VGPU_CMD_LAUNCH_SHARED(X);
#undef X
		tl.va = c.trace_va;
		tl.size = c.trace_size;
		st = vgpu_sim_run(sim, &l, NULL, &tl, c.cdp_area, &cpl->exc, &insns, &cycles);
		cpl->warp_insns = insns;
		return st;
	}
	case VGPU_CMD_FENCE: {
		struct vgpu_cmd_fence c;

		memcpy(&c, raw, sizeof(c));
		if (c.pad || c.addr % 8 || !sim_zero(c.reserved, sizeof(c.reserved)))
			return VGPU_ERR_BAD_COMMAND;
		v = c.value;
		return sim_uq_rw64(sim, c.addr, &v, VGPU_MMU_ACC_WRITE, &cpl->exc);
	}
	case VGPU_CMD_SEM_ACQUIRE:
	case VGPU_CMD_SEM_RELEASE: {
		bool acquire = hdr.opcode == VGPU_CMD_SEM_ACQUIRE;
		struct vgpu_cmd_sem c;
		uint32_t st;

		memcpy(&c, raw, sizeof(c));
		if (c.addr % 8 || !sim_zero(c.reserved, sizeof(c.reserved)) ||
		    (acquire ? c.op > VGPU_SEM_OP_MAX : c.op || c.timeout_ns))
			return VGPU_ERR_BAD_COMMAND;
		if (!acquire) {
			v = c.payload;
			return sim_uq_rw64(sim, c.addr, &v, VGPU_MMU_ACC_WRITE,
					   &cpl->exc);
		}
		st = sim_uq_rw64(sim, c.addr, &v, VGPU_MMU_ACC_READ, &cpl->exc);
		if (st == VGPU_ERR_NONE &&
		    !(c.op == VGPU_SEM_OP_EQ ? v == c.payload : v >= c.payload))
			*wait = true;
		return st;
	}
	default: /* TLB_INVALIDATE is privileged; the rest unknown */
		return VGPU_ERR_BAD_COMMAND;
	}
}

/* Run @uq's commands from its head to its tail (sim->lock held). */
static void sim_uq_run(struct vgpu_sim *sim, struct sim_userq *uq)
{
	while (uq->state == VGPU_USERQ_STATE_ACTIVE && uq->head != uq->tail) {
		uint8_t raw[VGPU_CMD_BYTES];
		struct vgpu_completion cpl;
		bool wait = false;
		uint32_t status;

		memcpy(raw, uq->ring + (size_t)uq->head * VGPU_CMD_BYTES,
		       sizeof(raw));
		memset(&cpl, 0, sizeof(cpl));
		status = sim_uq_exec(sim, raw, &cpl, &wait);
		if (wait)
			break;
		cpl.status = status;
		cpl.index = uq->head;
		cpl.queue = uq->hw_queue;
		cpl.seq = ++uq->completed;
		memcpy(&uq->cpl[uq->head], &cpl, sizeof(cpl));
		if (status != VGPU_ERR_NONE) {
			uq->state = VGPU_USERQ_STATE_ERROR;
			uq->hw_error = status;
			uq->error_index = uq->head;
		}
		uq->head = (uq->head + 1) % VGPU_USERQ_ENTRIES;
	}
	sim_uq_publish(uq);
}

/* Acquires may see new values: run every queue that waits (lock held). */
static void sim_uq_run_all(struct vgpu_sim *sim)
{
	for (uint32_t i = 0; i < VGPU_MAX_USERQ_PER_FILE; i++)
		if (sim->userqs[i].live)
			sim_uq_run(sim, &sim->userqs[i]);
}

int vgpu_sim_doorbell(struct vgpu_sim *sim, uint32_t id, uint32_t tail)
{
	struct sim_userq *uq;

	pthread_mutex_lock(&sim->lock);
	uq = sim_uq_lookup(sim, id);
	if (!uq) {
		pthread_mutex_unlock(&sim->lock);
		return -ENOENT;
	}
	if (uq->state == VGPU_USERQ_STATE_ACTIVE) {
		if (tail >= VGPU_USERQ_ENTRIES) {
			uq->state = VGPU_USERQ_STATE_ERROR;
			uq->hw_error = VGPU_ERR_BAD_DOORBELL;
			uq->error_index = uq->head;
		} else {
			uq->tail = tail;
		}
	}
	sim_uq_run_all(sim);
	pthread_cond_broadcast(&sim->cond);
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

int vgpu_sim_userq_mmap(struct vgpu_sim *sim, uint64_t offset, uint64_t size,
			bool writable, void **ptr)
{
	for (uint32_t i = 0; i < VGPU_MAX_USERQ_PER_FILE; i++) {
		struct sim_userq *uq = &sim->userqs[i];
		int area = -1;
		uint64_t max = 0;
		void *p;

		if (!uq->live)
			continue;
		if (offset == SIM_UQ_OFFSET(i, 0x00)) {
			area = 0;
			max = SIM_UQ_RING_BYTES;
		} else if (offset == SIM_UQ_OFFSET(i, 0x40)) {
			area = 1;
			max = SIM_UQ_CPL_BYTES;
			if (writable)
				return -EACCES;
		} else if (offset == SIM_UQ_OFFSET(i, 0x80)) {
			area = 2;
			max = SIM_PAGE_SIZE;
		}
		if (area < 0)
			continue;
		if (!size || size > max)
			return -EINVAL;
		p = mmap(NULL, size, PROT_READ | (writable ? PROT_WRITE : 0),
			 MAP_SHARED, uq->fd[area], 0);
		if (p == MAP_FAILED)
			return -errno;
		*ptr = p;
		return 0;
	}
	return -EINVAL;
}

int vgpu_sim_userq_create(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_userq_create *args = data;
	struct sim_userq *uq = NULL;
	uint32_t slot = 0, n = 0;
	int ret;

	if (args->flags || args->priority > VGPU_QUEUE_PRIORITY_REALTIME)
		return -EINVAL;
	if (args->priority > VGPU_QUEUE_PRIORITY_NORMAL && !vgpu_sim_capable_sys_nice())
		return -EPERM;
	if (args->vm_id != VGPU_VM_DEFAULT)
		return -ENOENT; /* the sim has no VMs of VM_CREATE */
	for (uint32_t i = 0; i < VGPU_MAX_USERQ_PER_FILE; i++) {
		if (sim->userqs[i].live)
			n++;
		else if (!uq)
			uq = &sim->userqs[slot = i];
	}
	/* more queues than hardware ones, as vgpu.ko maps them in and out */
	if (n >= VGPU_MAX_USERQ_PER_FILE || !uq)
		return -EMFILE;
	memset(uq, 0, sizeof(*uq));
	ret = sim_shm(SIM_UQ_RING_BYTES, &uq->fd[0], (void **)&uq->ring);
	if (!ret)
		ret = sim_shm(SIM_UQ_CPL_BYTES, &uq->fd[1], (void **)&uq->cpl);
	if (!ret)
		ret = sim_shm(SIM_PAGE_SIZE, &uq->fd[2], (void **)&uq->db);
	if (ret) {
		sim_uq_free(uq);
		return ret;
	}
	uq->live = true;
	uq->id = ++sim->next_userq_id;
	/* every queue runs in its doorbell: it shares a hardware queue */
	uq->hw_queue = SIM_QUEUES + slot % SIM_USER_QUEUES;
	uq->state = VGPU_USERQ_STATE_ACTIVE;
	sim_uq_publish(uq);
	args->queue_id = uq->id;
	args->entries = VGPU_USERQ_ENTRIES;
	args->hw_queue = uq->hw_queue;
	args->ring_offset = SIM_UQ_OFFSET(slot, 0x00);
	args->cpl_offset = SIM_UQ_OFFSET(slot, 0x40);
	args->doorbell_offset = SIM_UQ_OFFSET(slot, 0x80);
	return 0;
}

int vgpu_sim_userq_destroy(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_userq_destroy *args = data;
	struct sim_userq *uq;

	if (args->pad)
		return -EINVAL;
	uq = sim_uq_lookup(sim, args->queue_id);
	if (!uq)
		return -ENOENT;
	sim_uq_free(uq);
	pthread_cond_broadcast(&sim->cond);
	return 0;
}

int vgpu_sim_userq_get_state(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_userq_get_state *args = data;
	struct sim_userq *uq = sim_uq_lookup(sim, args->queue_id);

	if (!uq)
		return -ENOENT;
	sim_uq_run_all(sim);
	args->state = uq->state;
	args->hw_error = uq->hw_error;
	args->error_index = uq->error_index;
	args->completed = uq->completed;
	args->head = uq->head;
	args->tail = uq->tail;
	return 0;
}

static int64_t sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * As vgpu.ko's: the process's own memory read as get_user() would (a bad
 * address is -EFAULT, not a crash), checked at every doorbell of another
 * thread and every millisecond; sim->lock is released while it sleeps.
 */
int vgpu_sim_wait_user_fence(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_wait_user_fence *args = data;

	if (args->flags || args->pad || args->op > VGPU_UFENCE_OP_MAX ||
	    args->addr % 8)
		return -EINVAL;
	for (;;) {
		struct iovec local, remote;
		struct sim_userq *uq = NULL;
		struct timespec ts;
		int64_t now, until;
		uint64_t v;

		sim_uq_run_all(sim);
		local = (struct iovec){ .iov_base = &v, .iov_len = 8 };
		remote = (struct iovec){ .iov_base = sim_uptr(args->addr),
					 .iov_len = 8 };
		if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 8)
			return -EFAULT;
		if (vgpu_ufence_satisfied(v, args->op, args->value, args->mask))
			return 0;
		if (args->queue_id) {
			uq = sim_uq_lookup(sim, args->queue_id);
			if (!uq)
				return -ENOENT;
			if (uq->state != VGPU_USERQ_STATE_ACTIVE)
				return -EIO;
		}
		now = sim_now_ns();
		if (args->timeout_ns <= now)
			return -ETIME;
		until = now + 1000000;
		if (args->timeout_ns < until)
			until = args->timeout_ns;
		ts.tv_sec = until / 1000000000;
		ts.tv_nsec = until % 1000000000;
		sim->sleepers++;
		pthread_cond_timedwait(&sim->cond, &sim->lock, &ts);
		sim->sleepers--;
	}
}
