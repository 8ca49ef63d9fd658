/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vgpu_uq.h: a user-mode queue through the raw uAPI (uapi/vgpu_drm.h
 * "User-mode queues"), for vgpu_userq and vgpu_dos: USERQ_CREATE and the
 * three mappings, commands written at the tail, the doorbell rung with a
 * store, WAIT_USER_FENCE.
 */
#ifndef VGPU_UQ_H
#define VGPU_UQ_H

#include <sys/mman.h>
#include "vgpu_lib.h"

struct uq {
	struct drm_vgpu_userq_create c;
	uint8_t *ring;
	const struct vgpu_completion *cpl;
	volatile uint32_t *db;
	uint32_t tail;
};

static inline size_t cpl_bytes(const struct uq *q)
{
	return (q->c.entries * sizeof(struct vgpu_completion) + 4095) & ~4095ul;
}

static inline int uq_create_vm(int fd, uint32_t vm, struct uq *q)
{
	void *p;
	int ret;

	memset(q, 0, sizeof(*q));
	q->c.vm_id = vm;
	ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_CREATE, &q->c);
	if (ret)
		return ret;
	p = mmap(NULL, q->c.entries * VGPU_CMD_BYTES, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, q->c.ring_offset);
	if (p == MAP_FAILED)
		return -errno;
	q->ring = p;
	p = mmap(NULL, cpl_bytes(q), PROT_READ, MAP_SHARED, fd, q->c.cpl_offset);
	if (p == MAP_FAILED)
		return -errno;
	q->cpl = p;
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 q->c.doorbell_offset);
	if (p == MAP_FAILED)
		return -errno;
	q->db = p;
	return 0;
}

static inline int uq_create(int fd, struct uq *q)
{
	return uq_create_vm(fd, VGPU_VM_DEFAULT, q);
}

static inline void uq_unmap(struct uq *q)
{
	munmap(q->ring, q->c.entries * VGPU_CMD_BYTES);
	munmap((void *)q->cpl, cpl_bytes(q));
	munmap((void *)q->db, 4096);
}

static inline int uq_destroy(int fd, struct uq *q)
{
	struct drm_vgpu_userq_destroy d = { .queue_id = q->c.queue_id };

	uq_unmap(q);
	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &d);
}

/* Write @cmd at the tail (no doorbell); its slot. */
static inline uint32_t uq_put(struct uq *q, const void *cmd)
{
	uint32_t slot = q->tail;

	memcpy(q->ring + slot * VGPU_CMD_BYTES, cmd, VGPU_CMD_BYTES);
	q->tail = (slot + 1) % q->c.entries;
	return slot;
}

static inline void uq_ring(struct uq *q)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	q->db[VGPU_DB_TAIL / 4] = q->tail;
}

static inline int uq_state(int fd, struct uq *q, struct drm_vgpu_userq_get_state *st)
{
	memset(st, 0, sizeof(*st));
	st->queue_id = q->c.queue_id;
	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_GET_STATE, st);
}

static inline int ufence_wait(int fd, const volatile uint64_t *addr, uint32_t op,
		       uint64_t value, uint64_t mask, int64_t deadline,
		       uint32_t queue)
{
	struct drm_vgpu_wait_user_fence w = {
		.addr = (uintptr_t)addr, .value = value, .mask = mask,
		.timeout_ns = deadline, .op = op, .queue_id = queue,
	};

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w);
}

static inline struct vgpu_cmd_launch launch_cmd(const struct vgpu_prog *p, uint32_t block)
{
	return (struct vgpu_cmd_launch){
		.hdr = { .opcode = VGPU_CMD_LAUNCH },
		.code_va = p->code_va,
		.code_size = p->code_size,
		.entry = p->entry,
		.grid = { 1, 1, 1 },
		.block = { block, 1, 1 },
		.smem_bytes = p->smem,
		.param_va = p->param_va,
		.param_size = p->param_size,
	};
}

static inline struct vgpu_cmd_sem release_cmd(uint64_t va, uint64_t value)
{
	return (struct vgpu_cmd_sem){
		.hdr = { .opcode = VGPU_CMD_SEM_RELEASE, .flags = VGPU_CMD_F_IRQ },
		.addr = va,
		.payload = value,
	};
}

/* An acquire of a value nobody writes: the queue hangs. */
static inline struct vgpu_cmd_sem stuck_acquire(uint64_t va)
{
	return (struct vgpu_cmd_sem){
		.hdr = { .opcode = VGPU_CMD_SEM_ACQUIRE },
		.addr = va,
		.payload = 1ull << 62,
		.op = VGPU_SEM_OP_GEQ,
	};
}


/*
 * A user queue's whole life on @fd: the store kernel launched on a new
 * user queue (4 threads, k = 77), a SEM_RELEASE of 1 behind it, the
 * fence waited for, every value checked, the queue destroyed.  0, or the
 * step that failed (1..6): an exit status for a forked client.
 */
static inline int uq_run_store(int fd)
{
	struct vgpu_cmd_launch l;
	struct vgpu_cmd_sem r;
	struct vgpu_prog p;
	struct uq q;
	uint32_t *out;

	if (vgpu_prog_load(fd, &p, vgpu_store_src, 8192))
		return 1;
	*(uint64_t *)p.param = p.data_va + 4096;
	*(uint32_t *)((char *)p.param + 8) = 77;
	if (uq_create(fd, &q))
		return 2;
	l = launch_cmd(&p, 4);
	r = release_cmd(p.data_va, 1);
	uq_put(&q, &l);
	uq_put(&q, &r);
	uq_ring(&q);
	if (ufence_wait(fd, p.data, VGPU_UFENCE_OP_EQ, 1, ~0ull,
			vgpu_now_ns() + vgpu_wait_ns(60), q.c.queue_id))
		return 3;
	out = (uint32_t *)((char *)p.data + 4096);
	for (unsigned int t = 0; t < 4; t++)
		if (out[t] != t * 2 + 77)
			return 4;
	if (uq_destroy(fd, &q))
		return 5;
	vgpu_prog_unmap(&p);
	return 0;
}

#endif
