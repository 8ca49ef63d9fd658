// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_fuzz: a structured ioctl fuzzer for vgpu.ko, in the spirit of
 * syzkaller's descriptions (syzkaller itself cannot be fetched here), run
 * in the guest on the debug kernel (make fuzz-guest; run-in-guest.sh
 * --fuzz), where lockdep, KASAN, KFENCE, DEBUG_OBJECTS, kmemleak and the
 * rest watch.
 *
 *   vgpu_fuzz [-t SECONDS] [-s SEED] [-p PROCS] [-F]
 *
 * PROCS processes (default 3), each with two threads, call random
 * operations for SECONDS: every vGPU ioctl (GET_PARAM, BO_CREATE,
 * BO_MMAP_OFFSET, BO_INFO, SUBMIT with random launches, BO lists, syncs,
 * queues, extensions, flags and pads; WAIT_BO, GET_JOB, QUEUE_CREATE
 * (in VM 0 or a VM), QUEUE_DESTROY, QUEUE_GET_STATE, VM_CREATE,
 * VM_DESTROY, VM_BIND with arrays of random, mostly well-formed ops,
 * userptr ones on its own memory, synchronous and with syncs,
 * USERQ_CREATE/DESTROY/GET_STATE with the queue's ring filled with random
 * commands and its doorbell rung with random tails through the mapped
 * page, WAIT_USER_FENCE with every operator and bad addresses), DRM
 * syncobjs (create, destroy, wait
 * with every flag, timeline wait, signal, timeline signal, reset, query,
 * transfer, eventfd, export and import as fd and as sync_file), PRIME
 * export and import, GEM close, flink and open, mmap and munmap of BO
 * offsets with random sizes and offsets (and a touch of the pages), the
 * driver's ioctl numbers with random bytes, and fds opened and closed
 * while jobs run; a child process that submits long jobs is killed; and
 * bursts of creates against closes of the ids they will return, by the
 * two threads on a file they share (op_race()).
 * Handles come from the live ones, recently closed ones and random
 * values; sizes and user pointers are random, NULL, bad or good.
 * Nothing waits long: waits have timeouts of a few milliseconds and
 * launches small budgets (some spin until the budget ends).
 *
 * Syncobj arrays stay at most 64 long: DRM core's drm_syncobj_array_find
 * kmallocs the handle array without __GFP_NOWARN, so a huge count gives a
 * page-allocation warning that is DRM's, not the driver's (vgpu.ko's own
 * arrays have documented limits, VGPU_SUBMIT_MAX_*, and -E2BIG).
 *
 * The oracle is the guest's kernel log (run-in-guest.sh: any WARN, BUG,
 * lockdep, KASAN, KFENCE, ODEBUG, list or refcount report, hung task, a
 * kmemleak report after the last rmmod fails the run), then the module
 * reloaded running a kernel correctly.  With KCOV (the debug kernel) it
 * prints the distinct vgpu.ko PCs the calls reached.
 * With -F each calling thread, once set up, marks itself for the kernel's
 * fault injection (/proc/thread-self/make-it-fail): with debugfs
 * fail_vgpu and failslab configured for such tasks (run-in-guest.sh
 * --fuzz does), the driver's and the slab's allocations fail at random
 * under the calls, and the error paths run.
 * Exit status: 0 when it ran; 1 on a setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vgpu_lib.h"

/* 6.12's uapi (include/uapi/drm/drm.h); Debian 12's libdrm predates it */
#ifndef DRM_IOCTL_SYNCOBJ_EVENTFD
struct drm_syncobj_eventfd {
	__u32 handle;
	__u32 flags;
	__u64 point;
	__s32 fd;
	__u32 pad;
};
#define DRM_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct drm_syncobj_eventfd)
#endif

#define NFD 3
#define NH 32
#define KCOV_INIT_TRACE _IOR('c', 1, unsigned long)
#define KCOV_ENABLE _IO('c', 100)
#define KCOV_DISABLE _IO('c', 101)
#define KCOV_TRACE_PC 0
#define KCOV_WORDS (1 << 16)

struct fz {
	uint64_t rng;
	int fd[NFD];
	uint32_t bo[NH], syncobj[NH], queue[NH], vm[NH], userq[NH], stale[NH];
	uint64_t userq_db[NH];	/* doorbell offset of userq[i] */
	int userq_fd[NH];	/* and the fd it was made on */
	uint64_t job[NH];
	struct vgpu_prog prog;	/* a spinning kernel, loaded on fd[0] */
	uint8_t *anon;		/* 16 pages of its own memory, for userptr binds */
	bool prog_ok;
	uint64_t ops, ok, errs;
	unsigned long *kcov;	/* this thread's PC buffer, or NULL */
	int kcov_fd;
};

static atomic_bool stop;
static bool make_it_fail;	/* -F */
static uint64_t mod_lo, mod_hi;	/* vgpu.ko's text, for KCOV */
/* distinct vgpu.ko PCs seen by every process: a hash set in shared memory */
#define PCS_CAP (1 << 16)
struct pcset {
	pthread_mutex_t lock;	/* process-shared */
	size_t n;
	unsigned long pc[PCS_CAP];
};
static struct pcset *pcs;

static uint64_t rnd(struct fz *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static uint32_t pick(struct fz *f, uint32_t n)
{
	return n ? (uint32_t)(rnd(f) % n) : 0;
}

/* A handle: live, stale, 0 or random. */
static uint32_t handle(struct fz *f, const uint32_t *live)
{
	switch (pick(f, 8)) {
	case 0:
		return f->stale[pick(f, NH)];
	case 1:
		return 0;
	case 2:
		return (uint32_t)rnd(f);
	default:
		return live[pick(f, NH)];
	}
}

static int fd_of(struct fz *f)
{
	return f->fd[pick(f, NFD)];
}

static void keep(struct fz *f, uint32_t *table, uint32_t h)
{
	uint32_t i = pick(f, NH);

	f->stale[pick(f, NH)] = table[i];
	table[i] = h;
}

/* A user pointer: good (@good), NULL, a bad address, or misaligned good. */
static uint64_t uptr(struct fz *f, void *good)
{
	switch (pick(f, 10)) {
	case 0:
		return 0;
	case 1:
		return 0x10;
	case 2:
		return (uint64_t)-4096;
	case 3:
		return (uintptr_t)good + 1;
	default:
		return (uintptr_t)good;
	}
}

static int call(struct fz *f, int fd, unsigned long req, void *arg)
{
	int ret = ioctl(fd, req, arg);

	f->ops++;
	if (ret)
		f->errs++;
	else
		f->ok++;
	return ret ? -errno : 0;
}

static void op_bo_create(struct fz *f)
{
	static const uint64_t sizes[] = { 0, 1, 4096, 8192, 65536, 1 << 20,
					  VGPU_BO_MAX_SIZE + 1, ~0ull, 12345 };
	struct drm_vgpu_bo_create a = {
		.size = sizes[pick(f, sizeof(sizes) / sizeof(sizes[0]))],
		.flags = pick(f, 4) ? pick(f, 4) : (uint32_t)rnd(f),
	};

	if (!call(f, fd_of(f), DRM_IOCTL_VGPU_BO_CREATE, &a))
		keep(f, f->bo, a.handle);
}

static void op_mmap(struct fz *f)
{
	struct drm_vgpu_bo_mmap_offset a = { .handle = handle(f, f->bo),
					     .pad = pick(f, 8) ? 0 : 1 };
	int fd = fd_of(f);
	size_t len = 4096u << pick(f, 6);
	uint64_t off;
	bool rw;
	void *p;

	if (call(f, fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &a))
		return;
	off = a.offset + (pick(f, 4) ? 0 : 4096u * pick(f, 16));
	rw = pick(f, 3);
	p = mmap(NULL, len, rw ? PROT_READ | PROT_WRITE : PROT_READ,
		 MAP_SHARED, fd, (off_t)off);
	if (p == MAP_FAILED)
		return;
	/*
	 * Touch the BO's first page only, writable: past the BO is SIGBUS's
	 * business and a read-only mapping SIGSEGV's, not the driver's.
	 */
	if (rw && off == a.offset && pick(f, 2))
		((volatile uint8_t *)p)[pick(f, 4096)] = (uint8_t)rnd(f);
	munmap(p, len);
}

static void op_bo_info(struct fz *f)
{
	struct drm_vgpu_bo_info a = { .handle = handle(f, f->bo),
				      .flags = pick(f, 8) ? 0 : (uint32_t)rnd(f) };

	call(f, fd_of(f), DRM_IOCTL_VGPU_BO_INFO, &a);
}

static void op_gem_close(struct fz *f)
{
	uint32_t i = pick(f, NH);
	struct drm_gem_close a = { .handle = pick(f, 4) ? f->bo[i] : handle(f, f->bo) };

	if (!call(f, fd_of(f), DRM_IOCTL_GEM_CLOSE, &a)) {
		f->stale[pick(f, NH)] = a.handle;
		if (f->bo[i] == a.handle)
			f->bo[i] = 0;
	}
}

static void op_flink_open(struct fz *f)
{
	struct drm_gem_flink fl = { .handle = handle(f, f->bo) };
	struct drm_gem_open op = { .name = (uint32_t)rnd(f) % 16 };

	/* render nodes refuse both: -EACCES, never anything else */
	call(f, fd_of(f), DRM_IOCTL_GEM_FLINK, &fl);
	if (!call(f, fd_of(f), DRM_IOCTL_GEM_OPEN, &op))
		keep(f, f->bo, op.handle);
}

static void op_prime(struct fz *f)
{
	struct drm_prime_handle a = {
		.handle = handle(f, f->bo),
		.flags = pick(f, 4) ? DRM_CLOEXEC | (pick(f, 2) ? DRM_RDWR : 0) :
				      (uint32_t)rnd(f),
	};
	int fd;

	if (call(f, fd_of(f), DRM_IOCTL_PRIME_HANDLE_TO_FD, &a))
		return;
	fd = a.fd;
	a = (struct drm_prime_handle){ .fd = pick(f, 6) ? fd : (int)pick(f, 64) };
	if (!call(f, fd_of(f), DRM_IOCTL_PRIME_FD_TO_HANDLE, &a))
		keep(f, f->bo, a.handle);
	close(fd);
}

static void op_syncobj(struct fz *f)
{
	uint32_t hs[64], n = 1 + pick(f, pick(f, 4) ? 4 : 64);
	uint64_t points[64];
	int fd = fd_of(f);

	for (uint32_t i = 0; i < n; i++) {
		hs[i] = handle(f, f->syncobj);
		points[i] = pick(f, 4) ? pick(f, 8) : rnd(f);
	}
	switch (pick(f, 12)) {
	case 0: {
		struct drm_syncobj_create a = {
			.flags = pick(f, 4) ? pick(f, 2) * DRM_SYNCOBJ_CREATE_SIGNALED :
					      (uint32_t)rnd(f),
		};

		if (!call(f, fd, DRM_IOCTL_SYNCOBJ_CREATE, &a))
			keep(f, f->syncobj, a.handle);
		break;
	}
	case 1: {
		struct drm_syncobj_destroy a = { .handle = hs[0] };

		if (!call(f, fd, DRM_IOCTL_SYNCOBJ_DESTROY, &a))
			f->stale[pick(f, NH)] = hs[0];
		break;
	}
	case 2: {
		struct drm_syncobj_wait a = {
			.handles = uptr(f, hs), .count_handles = n,
			.timeout_nsec = vgpu_now_ns() + 1000000 * pick(f, 3),
			.flags = (uint32_t)rnd(f) & 0xf,
		};

		call(f, fd, DRM_IOCTL_SYNCOBJ_WAIT, &a);
		break;
	}
	case 3: {
		struct drm_syncobj_timeline_wait a = {
			.handles = uptr(f, hs), .points = uptr(f, points),
			.count_handles = n,
			.timeout_nsec = vgpu_now_ns() + 1000000 * pick(f, 3),
			.flags = (uint32_t)rnd(f) & 0xf,
		};

		call(f, fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &a);
		break;
	}
	case 4: {
		struct drm_syncobj_array a = { .handles = uptr(f, hs), .count_handles = n };

		call(f, fd, pick(f, 2) ? DRM_IOCTL_SYNCOBJ_SIGNAL : DRM_IOCTL_SYNCOBJ_RESET, &a);
		break;
	}
	case 5: {
		struct drm_syncobj_timeline_array a = {
			.handles = uptr(f, hs), .points = uptr(f, points),
			.count_handles = n, .flags = pick(f, 4) ? 0 : (uint32_t)rnd(f) & 3,
		};

		call(f, fd, pick(f, 2) ? DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL :
					 DRM_IOCTL_SYNCOBJ_QUERY, &a);
		break;
	}
	case 6: {
		struct drm_syncobj_transfer a = {
			.src_handle = hs[0], .dst_handle = handle(f, f->syncobj),
			.src_point = points[0], .dst_point = pick(f, 8),
			.flags = pick(f, 4) ? 0 : (uint32_t)rnd(f) & 3,
		};

		call(f, fd, DRM_IOCTL_SYNCOBJ_TRANSFER, &a);
		break;
	}
	case 7: {
		struct drm_syncobj_eventfd a = {
			.handle = hs[0], .point = points[0],
			.flags = pick(f, 2) ? DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE : 0,
		};
		int efd = eventfd(0, EFD_CLOEXEC);

		a.fd = pick(f, 6) ? efd : (int)pick(f, 64);
		call(f, fd, DRM_IOCTL_SYNCOBJ_EVENTFD, &a);
		if (efd >= 0)
			close(efd);
		break;
	}
	default: {
		struct drm_syncobj_handle a = {
			.handle = hs[0],
			.flags = pick(f, 2) ? DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE : 0,
		};
		int sfd;

		if (call(f, fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a))
			break;
		sfd = a.fd;
		a = (struct drm_syncobj_handle){
			.fd = sfd, .handle = pick(f, 2) ? handle(f, f->syncobj) : 0,
			.flags = pick(f, 2) ? DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE : 0,
		};
		if (!call(f, fd_of(f), DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a) && !a.flags)
			keep(f, f->syncobj, a.handle);
		close(sfd);
		break;
	}
	}
}

static void op_submit(struct fz *f)
{
	struct drm_vgpu_sync in[8], out[8];
	uint32_t bos[8], nbo = pick(f, 9);
	struct drm_vgpu_ext_timeline tl = {
		.base = { .name = pick(f, 4) ? VGPU_SUBMIT_EXT_TIMELINE : (uint32_t)rnd(f) },
		.va = rnd(f) & ~7ull, .size = 4096u * pick(f, 4),
	};
	struct drm_vgpu_submit s;
	uint32_t h[3];

	if (!f->prog_ok)
		return;
	vgpu_prog_submit_args(&f->prog, &s, h, 1 + pick(f, 8), 1 + pick(f, 256));
	for (uint32_t i = 0; i < nbo; i++)
		bos[i] = pick(f, 3) ? h[pick(f, 3)] : handle(f, f->bo);
	s.bo_handles = uptr(f, bos);
	s.bo_handle_count = pick(f, 16) ? nbo : (uint32_t)rnd(f);
	s.launch.budget = pick(f, 4) ? 2000 + pick(f, 200000) : 0;
	if (!pick(f, 8)) {
		s.launch.grid[pick(f, 3)] = (uint32_t)rnd(f);
		s.launch.block[pick(f, 3)] = pick(f, 2048);
		s.launch.cluster[pick(f, 3)] = pick(f, 5);
		s.launch.smem_bytes = (uint32_t)rnd(f) % (1 << 20);
		s.launch.launch_flags = (uint32_t)rnd(f) & 0xf;
		s.launch.code_size = (uint32_t)rnd(f) % 8192;
	}
	s.launch.seed = rnd(f);
	s.queue = pick(f, 3) ? VGPU_QUEUE_DEFAULT : handle(f, f->queue);
	s.in_sync_count = pick(f, 4) ? pick(f, 3) : pick(f, 9);
	s.out_sync_count = pick(f, 4) ? pick(f, 3) : pick(f, 9);
	for (int i = 0; i < 8; i++) {
		in[i] = (struct drm_vgpu_sync){ .handle = handle(f, f->syncobj),
						.point = pick(f, 4) ? 0 : pick(f, 8),
						.pad = pick(f, 16) ? 0 : 1 };
		out[i] = (struct drm_vgpu_sync){ .handle = handle(f, f->syncobj),
						 .point = pick(f, 4) ? 0 : pick(f, 8) };
	}
	s.in_syncs = uptr(f, in);
	s.out_syncs = uptr(f, out);
	if (!pick(f, 8))
		s.extensions = uptr(f, &tl);
	s.flags = pick(f, 16) ? 0 : (uint32_t)rnd(f);
	s.pad = pick(f, 16) ? 0 : 1;
	if (!call(f, f->fd[0], DRM_IOCTL_VGPU_SUBMIT, &s))
		f->job[pick(f, NH)] = s.job_id;
}

static void op_job(struct fz *f)
{
	uint8_t exc[512];
	struct drm_vgpu_get_job j = {
		.job_id = pick(f, 4) ? f->job[pick(f, NH)] : rnd(f),
		.exception = uptr(f, exc),
		.exception_size = pick(f, 4) ? sizeof(struct vgpu_exception_record) :
					       pick(f, 512),
		.pad = pick(f, 16) ? 0 : 1,
	};
	struct drm_vgpu_wait_bo w = { .handle = handle(f, f->bo),
				      .timeout_ns = pick(f, 4) ? 1000000 * pick(f, 3) :
								 -(int64_t)pick(f, 3) };

	if (pick(f, 2))
		call(f, f->fd[0], DRM_IOCTL_VGPU_GET_JOB, &j);
	else
		call(f, fd_of(f), DRM_IOCTL_VGPU_WAIT_BO, &w);
}

static void op_queue(struct fz *f)
{
	switch (pick(f, 3)) {
	case 0: {
		struct drm_vgpu_queue_create a = {
			.priority = pick(f, 6), .flags = pick(f, 8) ? 0 : (uint32_t)rnd(f),
			.vm_id = pick(f, 2) ? 0 : handle(f, f->vm),
		};

		if (!call(f, fd_of(f), DRM_IOCTL_VGPU_QUEUE_CREATE, &a))
			keep(f, f->queue, a.queue_id);
		break;
	}
	case 1: {
		struct drm_vgpu_queue_destroy a = { .queue_id = handle(f, f->queue) };

		call(f, fd_of(f), DRM_IOCTL_VGPU_QUEUE_DESTROY, &a);
		break;
	}
	default: {
		struct drm_vgpu_queue_get_state a = { .queue_id = handle(f, f->queue) };

		call(f, fd_of(f), DRM_IOCTL_VGPU_QUEUE_GET_STATE, &a);
		break;
	}
	}
}

/* A VM address: near the window the well-formed binds use, or anywhere. */
static uint64_t vm_va(struct fz *f)
{
	switch (pick(f, 8)) {
	case 0:
		return rnd(f);
	case 1:
		return (1ull << 48) - 4096 * pick(f, 4);
	default:
		return 0x40000000ull + 4096ull * pick(f, 64) + (pick(f, 16) ? 0 : 8);
	}
}

static void op_vm(struct fz *f)
{
	switch (pick(f, 4)) {
	case 0: {
		struct drm_vgpu_vm_create a = { .flags = pick(f, 16) ? 0 : 1 };

		if (!call(f, fd_of(f), DRM_IOCTL_VGPU_VM_CREATE, &a))
			keep(f, f->vm, a.vm_id);
		break;
	}
	case 1: {
		struct drm_vgpu_vm_destroy a = { .vm_id = handle(f, f->vm),
						 .pad = pick(f, 16) ? 0 : 1 };

		call(f, fd_of(f), DRM_IOCTL_VGPU_VM_DESTROY, &a);
		break;
	}
	default: {
		struct drm_vgpu_vm_bind_op o[8];
		struct drm_vgpu_sync in[4], out[4];
		uint32_t n = 1 + pick(f, 8);
		struct drm_vgpu_vm_bind a = {
			.vm_id = handle(f, f->vm), .ops = uptr(f, o),
			.op_count = pick(f, 16) ? n : (uint32_t)rnd(f),
			.flags = pick(f, 16) ? 0 : 1, .pad = pick(f, 16) ? 0 : 1,
		};

		for (uint32_t i = 0; i < 8; i++) {
			o[i] = (struct drm_vgpu_vm_bind_op){
				.op = pick(f, 8) ? pick(f, 4) : (uint32_t)rnd(f),
				.flags = pick(f, 4) ? pick(f, 4) : (uint32_t)rnd(f),
				.handle = handle(f, f->bo),
				.bo_offset = 4096ull * pick(f, 4) + (pick(f, 16) ? 0 : 1),
				.va = vm_va(f),
				.range = pick(f, 8) ? 4096ull * (1 + pick(f, 16)) : rnd(f),
				.pad = pick(f, 32) ? 0 : 1,
			};
			if (o[i].op != VGPU_VM_BIND_OP_MAP && pick(f, 4)) {
				o[i].handle = 0;
				o[i].bo_offset = 0;
			}
			/* userptr: its own memory, mostly, or any address */
			if (o[i].op == VGPU_VM_BIND_OP_MAP_USERPTR && pick(f, 4)) {
				o[i].bo_offset = pick(f, 8) ? (uintptr_t)f->anon + 4096ull * pick(f, 16)
							    : rnd(f) & ~4095ull;
				o[i].range = 4096ull * (1 + pick(f, 16));
			}
		}
		if (!pick(f, 3)) {	/* asynchronous */
			for (int i = 0; i < 4; i++) {
				in[i] = (struct drm_vgpu_sync){ .handle = handle(f, f->syncobj),
								.point = pick(f, 4) ? 0 : pick(f, 8) };
				out[i] = (struct drm_vgpu_sync){ .handle = handle(f, f->syncobj),
								 .point = pick(f, 4) ? 0 : pick(f, 8) };
			}
			a.in_syncs = uptr(f, in);
			a.in_sync_count = pick(f, 3);
			a.out_syncs = uptr(f, out);
			a.out_sync_count = 1 + pick(f, 3);
		}
		call(f, fd_of(f), DRM_IOCTL_VGPU_VM_BIND, &a);
		break;
	}
	}
}

static void op_param(struct fz *f)
{
	struct drm_vgpu_get_param a = { .param = pick(f, 4) ? pick(f, 32) : (uint32_t)rnd(f),
					.pad = pick(f, 16) ? 0 : 1 };

	call(f, fd_of(f), DRM_IOCTL_VGPU_GET_PARAM, &a);
}

/* A driver ioctl number with random bytes, any direction and size. */
static void op_raw(struct fz *f)
{
	uint8_t buf[256];
	unsigned long nr = DRM_COMMAND_BASE + pick(f, 16);
	unsigned long size = pick(f, sizeof(buf));
	unsigned long dir = pick(f, 4);

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = pick(f, 4) ? 0 : (uint8_t)rnd(f);
	call(f, fd_of(f), _IOC(dir, DRM_IOCTL_BASE, nr, size), buf);
}

/* Close an fd (its jobs may still run) and open a fresh one. */
static void op_reopen(struct fz *f)
{
	/* fd[0] holds the program, fd[NFD - 1] is shared (op_race()) */
	int i = 1 + pick(f, NFD - 2);
	int fd = vgpu_open_render();

	if (fd < 0)
		return;
	close(f->fd[i]);
	f->fd[i] = fd;
}

/* A child that submits spinning jobs and is killed while they run. */
static void op_kill_child(struct fz *f)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct drm_vgpu_submit s;
		uint32_t h[3];

		for (int i = 0; i < 8; i++) {
			vgpu_prog_submit_args(&f->prog, &s, h, 4, 64);
			s.launch.budget = 2000000;
			ioctl(f->fd[0], DRM_IOCTL_VGPU_SUBMIT, &s);
		}
		pause();
		_exit(0);
	}
	if (pid < 0)
		return;
	usleep(1000 * pick(f, 5));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	f->ops++;
}

/*
 * User-mode queues: create one (mostly in VM 0), map its ring and
 * doorbell, write random commands (some well-formed NOPs and releases)
 * and ring random tails; destroy, query, wait on user fences.
 */
static void op_userq(struct fz *f)
{
	static __thread uint64_t word;
	int fd = fd_of(f);

	switch (pick(f, 5)) {
	case 0: {
		struct drm_vgpu_userq_create a = {
			.priority = pick(f, 6), .flags = pick(f, 8) ? 0 : (uint32_t)rnd(f),
			.vm_id = pick(f, 3) ? 0 : handle(f, f->vm),
		};
		uint32_t i;

		if (call(f, fd, DRM_IOCTL_VGPU_USERQ_CREATE, &a))
			return;
		i = pick(f, NH);
		f->stale[pick(f, NH)] = f->userq[i];
		f->userq[i] = a.queue_id;
		f->userq_db[i] = a.doorbell_offset;
		f->userq_fd[i] = fd;
		break;
	}
	case 1: {
		struct drm_vgpu_userq_destroy a = { .queue_id = handle(f, f->userq),
						    .pad = pick(f, 8) ? 0 : 1 };

		call(f, fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &a);
		break;
	}
	case 2: {
		struct drm_vgpu_userq_get_state a = { .queue_id = handle(f, f->userq) };

		call(f, fd, DRM_IOCTL_VGPU_USERQ_GET_STATE, &a);
		break;
	}
	case 3: {
		struct drm_vgpu_wait_user_fence a = {
			.addr = uptr(f, &word), .value = pick(f, 3), .mask = rnd(f),
			.timeout_ns = pick(f, 2) ? 0 : vgpu_now_ns() + 1000000 * pick(f, 3),
			.op = pick(f, 8), .flags = pick(f, 8) ? 0 : (uint32_t)rnd(f),
			.queue_id = pick(f, 2) ? 0 : handle(f, f->userq),
		};

		word = pick(f, 3);
		call(f, fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &a);
		break;
	}
	default: {
		uint32_t i = pick(f, NH);
		uint64_t db = f->userq_db[i], ring_off;
		uint8_t *ring;
		volatile uint32_t *page;

		if (!db)
			return;
		ring_off = db - 0x80 * 4096ull;
		ring = mmap(NULL, VGPU_USERQ_ENTRIES * VGPU_CMD_BYTES,
			    PROT_READ | PROT_WRITE, MAP_SHARED, f->userq_fd[i], ring_off);
		page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			    f->userq_fd[i], db);
		if (ring != MAP_FAILED && page != MAP_FAILED) {
			uint32_t n = 1 + pick(f, 8), tail = page[VGPU_DB_TAIL / 4];

			for (uint32_t k = 0; k < n; k++) {
				uint64_t *cmd = (uint64_t *)(ring + ((tail + k) % VGPU_USERQ_ENTRIES) *
							     VGPU_CMD_BYTES);

				for (int w = 0; w < 16; w++)
					cmd[w] = pick(f, 2) ? 0 : rnd(f);
				cmd[0] = pick(f, 2) ? (uint32_t)pick(f, 7) : cmd[0];
			}
			page[VGPU_DB_TAIL / 4] = pick(f, 8) ? (tail + n) % VGPU_USERQ_ENTRIES :
							      (uint32_t)rnd(f);
			(void)page[VGPU_DB_STATUS / 4];
		}
		if (ring != MAP_FAILED)
			munmap(ring, VGPU_USERQ_ENTRIES * VGPU_CMD_BYTES);
		if (page != MAP_FAILED)
			munmap((void *)page, 4096);
		f->ops++;
		break;
	}
	}
}

/*
 * Creates against closes of the ids they will return: both threads of a
 * process share the file fd[NFD - 1] (one_process()).  A burst of creates
 * of one kind there, each followed by a close of the id after the last
 * one either thread made (queue, VM and user-queue ids count up) or of a
 * low handle (GEM handles and syncobjs take the lowest free number): when
 * the two threads' bursts overlap, a close lands on an id while its create
 * is still in the ioctl (BO_CREATE once used the BO after that).
 */
enum { RACE_BO, RACE_SYNCOBJ, RACE_QUEUE, RACE_VM, RACE_USERQ, RACE_KINDS };
static _Atomic uint32_t race_made[RACE_KINDS];

static int race_create(int fd, int kind, uint32_t *id)
{
	int ret;

	switch (kind) {
	case RACE_BO: {
		struct drm_vgpu_bo_create a = { .size = 4096, .flags = VGPU_BO_POPULATE };

		ret = ioctl(fd, DRM_IOCTL_VGPU_BO_CREATE, &a);
		*id = a.handle;
		break;
	}
	case RACE_SYNCOBJ: {
		struct drm_syncobj_create a = { 0 };

		ret = ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &a);
		*id = a.handle;
		break;
	}
	case RACE_QUEUE: {
		struct drm_vgpu_queue_create a = { .priority = VGPU_QUEUE_PRIORITY_NORMAL };

		ret = ioctl(fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &a);
		*id = a.queue_id;
		break;
	}
	case RACE_VM: {
		struct drm_vgpu_vm_create a = { 0 };

		ret = ioctl(fd, DRM_IOCTL_VGPU_VM_CREATE, &a);
		*id = a.vm_id;
		break;
	}
	default: {
		struct drm_vgpu_userq_create a = { .priority = VGPU_QUEUE_PRIORITY_NORMAL };

		ret = ioctl(fd, DRM_IOCTL_VGPU_USERQ_CREATE, &a);
		*id = a.queue_id;
		break;
	}
	}
	return ret;
}

static void race_close(int fd, int kind, uint32_t id)
{
	switch (kind) {
	case RACE_BO: {
		struct drm_gem_close a = { .handle = id };

		ioctl(fd, DRM_IOCTL_GEM_CLOSE, &a);
		break;
	}
	case RACE_SYNCOBJ: {
		struct drm_syncobj_destroy a = { .handle = id };

		ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &a);
		break;
	}
	case RACE_QUEUE: {
		struct drm_vgpu_queue_destroy a = { .queue_id = id };

		ioctl(fd, DRM_IOCTL_VGPU_QUEUE_DESTROY, &a);
		break;
	}
	case RACE_VM: {
		struct drm_vgpu_vm_destroy a = { .vm_id = id };

		ioctl(fd, DRM_IOCTL_VGPU_VM_DESTROY, &a);
		break;
	}
	default: {
		struct drm_vgpu_userq_destroy a = { .queue_id = id };

		ioctl(fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &a);
		break;
	}
	}
}

static void op_race(struct fz *f)
{
	int fd = f->fd[NFD - 1], kind = pick(f, RACE_KINDS);

	for (int i = 0; i < 32 && !atomic_load(&stop); i++) {
		uint32_t id = 0;

		f->ops++;
		if (!race_create(fd, kind, &id)) {
			f->ok++;
			atomic_store(&race_made[kind], id);
		} else {
			f->errs++;
		}
		/* the next id, or a low handle */
		if (kind == RACE_BO || kind == RACE_SYNCOBJ)
			race_close(fd, kind, 1 + pick(f, 8));
		else
			race_close(fd, kind, atomic_load(&race_made[kind]) + 1 + pick(f, 2));
		if (!pick(f, 4))
			race_close(fd, kind, id);
	}
}

typedef void (*op_fn)(struct fz *f);

static const op_fn ops[] = {
	op_bo_create, op_bo_create, op_mmap, op_bo_info, op_gem_close,
	op_flink_open, op_prime, op_syncobj, op_syncobj, op_syncobj,
	op_submit, op_submit, op_submit, op_job, op_job, op_queue, op_param,
	op_raw, op_reopen, op_vm, op_vm, op_userq, op_userq, op_race, op_race,
};

static void kcov_start(struct fz *f)
{
	f->kcov = NULL;
	f->kcov_fd = open("/sys/kernel/debug/kcov", O_RDWR);
	if (f->kcov_fd < 0)
		return;
	if (ioctl(f->kcov_fd, KCOV_INIT_TRACE, KCOV_WORDS))
		goto fail;
	f->kcov = mmap(NULL, KCOV_WORDS * sizeof(unsigned long), PROT_READ | PROT_WRITE,
		       MAP_SHARED, f->kcov_fd, 0);
	if (f->kcov == MAP_FAILED)
		goto fail;
	if (ioctl(f->kcov_fd, KCOV_ENABLE, KCOV_TRACE_PC)) {
		munmap(f->kcov, KCOV_WORDS * sizeof(unsigned long));
		goto fail;
	}
	__atomic_store_n(&f->kcov[0], 0, __ATOMIC_RELAXED);
	return;
fail:
	f->kcov = NULL;
	close(f->kcov_fd);
}

/* Move the PCs this thread collected into the set, then start again. */
static void kcov_collect(struct fz *f)
{
	unsigned long n;

	if (!f->kcov)
		return;
	n = __atomic_load_n(&f->kcov[0], __ATOMIC_RELAXED);
	if (n > KCOV_WORDS - 1)
		n = KCOV_WORDS - 1;
	pthread_mutex_lock(&pcs->lock);
	for (unsigned long i = 1; i <= n; i++) {
		unsigned long pc = f->kcov[i];
		size_t slot;

		if (pc < mod_lo || pc >= mod_hi || pcs->n >= PCS_CAP / 2)
			continue;
		for (slot = (pc * 0x9e3779b97f4a7c15ull) >> 48; pcs->pc[slot];
		     slot = (slot + 1) % PCS_CAP)
			if (pcs->pc[slot] == pc)
				break;
		if (!pcs->pc[slot]) {
			pcs->pc[slot] = pc;
			pcs->n++;
		}
	}
	pthread_mutex_unlock(&pcs->lock);
	__atomic_store_n(&f->kcov[0], 0, __ATOMIC_RELAXED);
}

static void *worker(void *arg)
{
	struct fz *f = arg;

	kcov_start(f);
	if (make_it_fail) {
		int fd = open("/proc/thread-self/make-it-fail", O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, "1", 1) != 1)
			fprintf(stderr, "vgpu_fuzz: -F: no make-it-fail (%s)\n", strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	while (!atomic_load(&stop)) {
		if (!pick(f, 400))
			op_kill_child(f);
		else
			ops[pick(f, sizeof(ops) / sizeof(ops[0]))](f);
		if ((f->ops & 63) == 0)
			kcov_collect(f);
	}
	kcov_collect(f);
	return NULL;
}

/* The spinning kernel: loops @budget-bounded, writes its data page. */
static const char spin_src[] =
	".kernel spin\n.param ptr out\n"
	"  LDP.64 R2, [out] ;\n  S2R R0, SR_TID ;\n  MOV R5, 0x0 ;\n"
	"l:\n  IADD R5, R5, 0x1 ;\n  ISETP.LT.U32 P0, R5, 0x400 ;\n  @P0 BRA l ;\n"
	"  SHL R1, R0, 0x2 ;\n  IADD R2, R2, R1 ;\n  STG.32 [R2], R5 ;\n  EXIT ;\n";

static int fz_init(struct fz *f, uint64_t seed)
{
	memset(f, 0, sizeof(*f));
	f->rng = seed * 0x9e3779b97f4a7c15ull + 1;
	for (int i = 0; i < NFD; i++) {
		f->fd[i] = vgpu_open_render();
		if (f->fd[i] < 0)
			return -1;
	}
	f->anon = mmap(NULL, 16 * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f->anon == MAP_FAILED)
		return -1;
	f->prog_ok = !vgpu_prog_load(f->fd[0], &f->prog, spin_src, 4096);
	if (f->prog_ok)
		*(uint64_t *)f->prog.param = f->prog.data_va;
	return 0;
}

/* vgpu.ko's text, from sysfs, for the coverage count. */
static void module_text(void)
{
	FILE *p = fopen("/sys/module/vgpu/sections/.text", "r");
	unsigned long lo = 0;

	if (p && fscanf(p, "%lx", &lo) == 1) {
		mod_lo = lo;
		mod_hi = lo + (4u << 20);	/* generously: the module is smaller */
	}
	if (p)
		fclose(p);
}

static int one_process(uint64_t seed, unsigned secs, int out_fd)
{
	struct fz f[2];
	pthread_t t[2];
	uint64_t sums[3] = { 0 };

	for (int i = 0; i < 2; i++)
		if (fz_init(&f[i], seed * 2 + i))
			return 1;
	/* the file both threads share (op_race()) */
	close(f[1].fd[NFD - 1]);
	f[1].fd[NFD - 1] = f[0].fd[NFD - 1];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &f[i]);
	sleep(secs);
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		sums[0] += f[i].ops;
		sums[1] += f[i].ok;
		sums[2] += f[i].errs;
	}
	if (write(out_fd, sums, sizeof(sums)) != sizeof(sums))
		return 1;
	return 0;	/* the fds close with the process: jobs still run */
}

int main(int argc, char **argv)
{
	unsigned secs = 30, procs = 3;
	uint64_t seed = 1, tot[3] = { 0 };
	int opt, pfd[2], bad = 0;

	while ((opt = getopt(argc, argv, "t:s:p:F")) != -1) {
		if (opt == 't')
			secs = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (opt == 'p')
			procs = strtoul(optarg, NULL, 0);
		else if (opt == 'F')
			make_it_fail = true;
		else
			return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	pcs = mmap(NULL, sizeof(*pcs), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (pcs == MAP_FAILED || pipe(pfd))
		return 1;
	{
		pthread_mutexattr_t a;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
		pthread_mutex_init(&pcs->lock, &a);
	}
	module_text();
	for (unsigned p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(one_process(seed * 131 + p, secs, pfd[1]));
		if (pid < 0)
			return 1;
	}
	close(pfd[1]);
	for (unsigned p = 0; p < procs; p++) {
		uint64_t s[3];
		int st;

		if (read(pfd[0], s, sizeof(s)) == sizeof(s))
			for (int i = 0; i < 3; i++)
				tot[i] += s[i];
		else
			bad = 1;
		wait(&st);
		if (WIFSIGNALED(st))
			fprintf(stderr, "vgpu_fuzz: a process died of signal %d\n", WTERMSIG(st));
		else if (WEXITSTATUS(st))
			fprintf(stderr, "vgpu_fuzz: a process could not set up (status %d)\n",
				WEXITSTATUS(st));
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad = 1;
	}
	printf("vgpu_fuzz: seed %llu, %u processes x 2 threads, %u s: %llu calls "
	       "(%llu succeeded, %llu errnos), %llu distinct vgpu.ko PCs (KCOV%s)\n",
	       (unsigned long long)seed, procs, secs, (unsigned long long)tot[0],
	       (unsigned long long)tot[1], (unsigned long long)tot[2],
	       (unsigned long long)pcs->n, mod_lo ? "" : ": none");
	return bad;
}
