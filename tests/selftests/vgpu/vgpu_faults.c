// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_faults: the driver's recovery paths, driven by a device that
 * misbehaves on purpose (uapi/vgpu_hw.h, "Fault injection": vgpu-pci's
 * x-inject property, debugfs dri/N/inject).  A lost interrupt, a late one,
 * an MMU fault, a queue that stops answering and a corrupt completion
 * record: each ends the job with the documented outcome, resets no more
 * than it must, and leaves the device running the next job correctly.
 *
 * Fixture alloc (kernels with CONFIG_FAULT_INJECTION_DEBUG_FS: the debug
 * kernel) fails the driver's own allocations one at a time through
 * debugfs fail_vgpu, this process only: each ioctl gives -ENOMEM, leaves
 * nothing behind, and works when tried again.
 *
 * job_storm_frees_as_fences_signal: short jobs from several processes,
 * freed as their fences signal (a race KASAN caught once).
 *
 * Fixture faults reloads vgpu.ko with a short job timeout (reset_timeout_ms(),
 * as vgpu_test's reset fixture does) and puts the suite's parameters back
 * afterwards; it skips where the device has no fault injection.
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include <signal.h>
#include <sys/wait.h>

static int inject(const char *dir, uint32_t val, uint64_t arg)
{
	char path[128], cmd[64];

	snprintf(path, sizeof(path), "%s/inject", dir);
	snprintf(cmd, sizeof(cmd), "0x%x 0x%llx", val, (unsigned long long)arg);
	return sysfs_write(path, cmd);
}

FIXTURE(faults) {
	int fd;
	char dir[64];
	char params[64];
	bool reloaded;
	uint64_t nqueues;
	struct vgpu_prog p;
	struct drm_vgpu_submit s;
	uint32_t handles[3];
};

/* Arm @kind on every queue: the job lands on one of them. */
static int inject_all(FIXTURE_DATA(faults) *self, uint32_t kind, uint64_t arg)
{
	uint32_t q;
	int ret;

	for (q = 0; q < self->nqueues; q++) {
		ret = inject(self->dir, VGPU_INJECT(kind, q, 1), arg);
		if (ret)
			return ret;
	}
	return 0;
}

static void disarm_all(FIXTURE_DATA(faults) *self)
{
	uint32_t q;

	for (q = 0; q < self->nqueues; q++)
		inject(self->dir, VGPU_INJECT(VGPU_INJ_NONE, q, 0), 0);
}

FIXTURE_SETUP(faults)
{
	char ko[256], path[128];
	int ret;

	ret = module_reload_short_timeout(self->params, sizeof(self->params),
					  ko, sizeof(ko));
	if (ret == -ENOENT)
		SKIP(return, "no %s to load", ko);
	self->reloaded = true;
	ASSERT_EQ(0, ret);
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vgpu_debugfs_dir(self->dir, sizeof(self->dir)));
	snprintf(path, sizeof(path), "%s/inject", self->dir);
	if (access(path, W_OK))
		SKIP(return, "the device has no fault injection (vgpu-pci x-inject=on)");
	test_get_param(VGPU_PARAM_QUEUES, &self->nqueues);
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p, vgpu_store_src, 4096));
	*(uint64_t *)self->p.param = self->p.data_va;
	*(uint32_t *)((char *)self->p.param + 8) = 7;
	vgpu_prog_submit_args(&self->p, &self->s, self->handles, 4, 64);
}

FIXTURE_TEARDOWN(faults)
{
	char ko[256];

	if (self->nqueues)
		disarm_all(self);
	if (self->p.param)
		vgpu_prog_unmap(&self->p);
	if (self->fd > 0)
		close(self->fd);
	if (!self->reloaded || module_path(ko, sizeof(ko)))
		return;
	EXPECT_EQ(0, module_unload_settled());
	EXPECT_EQ(0, module_load(ko, self->params));
}

/* out[i] == i * 2 + k for the job's 256 threads */
static int store_ok(const void *data, uint32_t k)
{
	const uint32_t *out = data;
	int i;

	for (i = 0; i < 256; i++)
		if (out[i] != i * 2 + k)
			return -1;
	return 0;
}

/* Submit the store job with k = @k and wait for it; 0 or -errno. */
static int run_store(FIXTURE_DATA(faults) *self, uint32_t k,
		     struct drm_vgpu_get_job *j,
		     struct vgpu_exception_record *exc)
{
	int ret;

	memset(self->p.data, 0, 4096);
	*(uint32_t *)((char *)self->p.param + 8) = k;
	ret = _test_submit(self->fd, &self->s);
	if (!ret)
		ret = _test_wait_bo(self->fd, self->p.data_h, vgpu_wait_ns(60));
	if (!ret)
		ret = _test_get_job(self->fd, self->s.job_id, j, exc);
	return ret;
}

/*
 * A completion whose interrupt is lost: the job's timeout finds it done
 * and completes it with its own result; nothing is reset.
 */
TEST_F(faults, lost_interrupt_found_by_timeout)
{
	long long lost = vgpu_queues_num(self->dir, "lost_irqs");
	long long resets = vgpu_queues_num(self->dir, "resets");
	struct drm_vgpu_get_job j;

	ASSERT_LE(0, lost);
	ASSERT_EQ(0, inject_all(self, VGPU_INJ_DROP_IRQ, 0));
	ASSERT_EQ(0, run_store(self, 7, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, j.error);
	ASSERT_EQ(0, store_ok(self->p.data, 7));
	ASSERT_EQ(lost + 1, vgpu_queues_num(self->dir, "lost_irqs"));
	ASSERT_EQ(resets, vgpu_queues_num(self->dir, "resets"));

	disarm_all(self);
	ASSERT_EQ(0, run_store(self, 8, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 8));
	ASSERT_EQ(lost + 1, vgpu_queues_num(self->dir, "lost_irqs"));
}

/* An interrupt that comes late, inside the timeout: nothing to recover. */
TEST_F(faults, late_interrupt_within_timeout)
{
	long long lost = vgpu_queues_num(self->dir, "lost_irqs");
	long long resets = vgpu_queues_num(self->dir, "resets");
	uint64_t delay_ms = reset_timeout_ms() / 4;
	struct drm_vgpu_get_job j;
	int64_t t0;

	ASSERT_EQ(0, inject_all(self, VGPU_INJ_DELAY_IRQ, delay_ms));
	t0 = vgpu_now_ns();
	ASSERT_EQ(0, run_store(self, 9, &j, NULL));
	/* the fence signals with the interrupt, not before */
	ASSERT_LE((int64_t)delay_ms * 1000000 / 2, vgpu_now_ns() - t0);
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 9));
	ASSERT_EQ(lost, vgpu_queues_num(self->dir, "lost_irqs"));
	ASSERT_EQ(resets, vgpu_queues_num(self->dir, "resets"));
}

/* An MMU fault the device reports: -EFAULT with its address; the queue goes on. */
TEST_F(faults, mmu_fault_reported)
{
	const uint64_t va = 0xdead0000ull;
	struct vgpu_exception_record exc;
	long long resets = vgpu_queues_num(self->dir, "resets");
	struct drm_vgpu_get_job j;
	int i;

	ASSERT_EQ(0, inject_all(self, VGPU_INJ_MMU_FAULT, va));
	ASSERT_EQ(0, run_store(self, 3, &j, &exc));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EFAULT, j.error);
	ASSERT_EQ(VGPU_ERR_EXCEPTION, j.hw_status);
	ASSERT_EQ(VGPU_EXC_GLOBAL_FAULT, exc.code);
	ASSERT_EQ(va, exc.addr);
	ASSERT_EQ(VGPU_MMU_F_NOT_PRESENT, exc.info[1]);
	/* the launch never ran */
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, ((uint32_t *)self->p.data)[i]);
	ASSERT_EQ(resets, vgpu_queues_num(self->dir, "resets"));

	disarm_all(self);
	ASSERT_EQ(0, run_store(self, 4, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 4));
}

/*
 * A queue that stops answering (no record, no interrupt, HEAD stuck): the
 * timeout resets that queue alone, not the device; the job ends
 * -ETIMEDOUT and the next one runs.
 */
TEST_F(faults, hung_queue_reset_alone)
{
	long long resets = vgpu_queues_num(self->dir, "resets");
	long long dev_resets = vgpu_queues_num(self->dir, "device_resets");
	struct drm_vgpu_get_job j;

	ASSERT_LE(0, dev_resets);
	ASSERT_EQ(0, inject_all(self, VGPU_INJ_HANG, 0));
	ASSERT_EQ(0, run_store(self, 5, &j, NULL));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(ETIMEDOUT, j.error);
	ASSERT_EQ(resets + 1, vgpu_queues_num(self->dir, "resets"));
	ASSERT_EQ(dev_resets, vgpu_queues_num(self->dir, "device_resets"));

	disarm_all(self);
	ASSERT_EQ(0, run_store(self, 6, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 6));
}

/* A corrupt completion record (wrong sequence number): the job fails -EIO. */
TEST_F(faults, corrupt_record_fails_job)
{
	long long resets = vgpu_queues_num(self->dir, "resets");
	struct drm_vgpu_get_job j;

	ASSERT_EQ(0, inject_all(self, VGPU_INJ_CORRUPT_CPL, 0));
	ASSERT_EQ(0, run_store(self, 1, &j, NULL));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EIO, j.error);
	ASSERT_EQ(resets, vgpu_queues_num(self->dir, "resets"));

	disarm_all(self);
	ASSERT_EQ(0, run_store(self, 2, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 2));
}

/* What is armed reads back; disarming and a spent fault read as none. */
TEST_F(faults, inject_register_reads_back)
{
	char path[128], buf[64];
	uint32_t q = self->nqueues - 1;

	snprintf(path, sizeof(path), "%s/inject", self->dir);
	ASSERT_EQ(0, inject(self->dir, VGPU_INJECT(VGPU_INJ_DROP_IRQ, q, 3), 0));
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(VGPU_INJECT(VGPU_INJ_DROP_IRQ, q, 3), strtoul(buf, NULL, 0));
	ASSERT_EQ(0, inject(self->dir, VGPU_INJECT(VGPU_INJ_NONE, q, 0), 0));
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(VGPU_INJECT(VGPU_INJ_NONE, q, 0), strtoul(buf, NULL, 0));
	/* a queue the device does not have: refused, nothing armed */
	ASSERT_EQ(0, inject(self->dir, VGPU_INJECT(VGPU_INJ_HANG, 200, 1), 0));
	ASSERT_LT(0, read_file(path, buf, sizeof(buf)));
	ASSERT_EQ(VGPU_INJECT(VGPU_INJ_NONE, q, 0), strtoul(buf, NULL, 0));
}

/* ---- the driver's own allocations failing (debugfs fail_vgpu) ---- */

#define FAIL_DIR "/sys/kernel/debug/fail_vgpu"

static int fail_write(const char *file, const char *val)
{
	char path[96];

	snprintf(path, sizeof(path), FAIL_DIR "/%s", file);
	return sysfs_write(path, val);
}

/*
 * The @nth of the driver's allocation points this process reaches next
 * fails, once (fail_vgpu: interval @nth, times 1, this task only).
 */
static int fail_nth(unsigned int nth)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", nth);
	if (fail_write("task-filter", "Y") || fail_write("verbose", "0") ||
	    fail_write("space", "0") || fail_write("probability", "100") ||
	    fail_write("interval", v) || fail_write("times", "1"))
		return -1;
	return sysfs_write("/proc/self/make-it-fail", "1");
}

static void fail_off(void)
{
	fail_write("probability", "0");
	fail_write("times", "0");
	sysfs_write("/proc/self/make-it-fail", "0");
}

/* "times" left: 0 once the armed failure happened */
static long fail_times_left(void)
{
	char buf[32];

	if (read_file(FAIL_DIR "/times", buf, sizeof(buf)) <= 0)
		return -1;
	return atol(buf);
}

FIXTURE(alloc) {
	int fd;
};

FIXTURE_SETUP(alloc)
{
	if (access(FAIL_DIR "/probability", W_OK))
		SKIP(return, "no %s (a kernel without CONFIG_FAULT_INJECTION_DEBUG_FS)",
		     FAIL_DIR);
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(alloc)
{
	fail_off();
	if (self->fd > 0)
		close(self->fd);
}

/*
 * BO_CREATE failing at each of its allocations (the BO, its mapping in the
 * file, with VGPU_BO_POPULATE its pages): -ENOMEM, no handle, no memory
 * left behind, and the next BO_CREATE works.
 */
TEST_F(alloc, bo_create)
{
	unsigned long long total = fdinfo_num(_metadata, self->fd, "drm-total-memory", "");
	uint32_t h;
	unsigned int nth;

	ASSERT_EQ(0, total);
	for (nth = 1; nth <= 3; nth++) {
		ASSERT_EQ(0, fail_nth(nth));
		ASSERT_EQ(-ENOMEM, _test_bo_create(self->fd, 8192, VGPU_BO_POPULATE,
						   &h, NULL));
		ASSERT_EQ(0, fail_times_left());
		ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-total-memory", ""));
	}
	fail_off();
	test_bo_create(8192, VGPU_BO_POPULATE, &h, NULL);
	ASSERT_EQ(8, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " KiB"));
}

/*
 * SUBMIT failing at each allocation of a file's first job (its history,
 * the job, a listed BO's pages, a page table for them): -ENOMEM, nothing
 * queued, no job id used; the same SUBMIT then runs to the right result.
 */
TEST_F(alloc, submit)
{
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t handles[4], h;
	uint64_t va;
	unsigned int nth;
	uint32_t *out;
	int fd;

	for (nth = 1; nth <= 4; nth++) {
		/* a fresh file each time: its first SUBMIT, a BO without pages */
		fd = vgpu_open_render();
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, vgpu_prog_load(fd, &p, vgpu_store_src, 4096));
		/* 4 MiB: its pages need page tables of their own */
		ASSERT_EQ(0, _test_bo_create(fd, 4 << 20, VGPU_BO_NO_EXEC, &h, &va));
		*(uint64_t *)p.param = va + 32768;
		*(uint32_t *)((char *)p.param + 8) = nth;
		vgpu_prog_submit_args(&p, &s, handles, 1, 32);
		handles[3] = h;
		s.bo_handle_count = 4;
		ASSERT_EQ(0, fail_nth(nth));
		ASSERT_EQ(-ENOMEM, _test_submit(fd, &s)) {
			TH_LOG("allocation %u", nth);
		}
		ASSERT_EQ(0, fail_times_left());
		fail_off();
		ASSERT_EQ(-ENOENT, _test_get_job(fd, 1, &j, NULL));
		ASSERT_EQ(0, _test_submit(fd, &s));
		ASSERT_EQ(1, s.job_id);
		ASSERT_EQ(0, _test_wait_bo(fd, h, vgpu_wait_ns(30)));
		ASSERT_EQ(0, _test_get_job(fd, 1, &j, NULL));
		ASSERT_EQ(VGPU_JOB_DONE, j.state);
		ASSERT_EQ(0, _test_bo_map(fd, h, 4 << 20, (void **)&out));
		ASSERT_EQ(31 * 2 + nth, out[32768 / 4 + 31]);
		munmap(out, 4 << 20);
		vgpu_prog_unmap(&p);
		close(fd);
	}
}

/* open(2), QUEUE_CREATE and mmap(2) failing: -ENOMEM, then they work. */
TEST_F(alloc, open_queue_mmap)
{
	char node[32];
	uint32_t id, h;
	unsigned int nth;
	int fd, minor;
	void *m;

	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(node, sizeof(node), "/dev/dri/renderD%d", minor);
	/* the file, then its address space's root table */
	for (nth = 1; nth <= 2; nth++) {
		ASSERT_EQ(0, fail_nth(nth));
		ASSERT_EQ(-1, open(node, O_RDWR | O_CLOEXEC));
		ASSERT_EQ(ENOMEM, errno);
		ASSERT_EQ(0, fail_times_left());
	}
	fail_off();
	fd = open(node, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	close(fd);

	ASSERT_EQ(0, fail_nth(1));
	ASSERT_EQ(-ENOMEM, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &id));
	fail_off();
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &id));

	test_bo_create(4096, 0, &h, NULL);
	ASSERT_EQ(0, fail_nth(1));
	ASSERT_EQ(-ENOMEM, _test_bo_map(self->fd, h, 4096, &m));
	fail_off();
	ASSERT_EQ(0, fdinfo_num(_metadata, self->fd, "drm-resident-memory", ""));
	ASSERT_EQ(0, _test_bo_map(self->fd, h, 4096, &m));
	ASSERT_EQ(4, fdinfo_num(_metadata, self->fd, "drm-resident-memory", " KiB"));
	munmap(m, 4096);
}

/* ---- lifecycle: load, work, unbind with jobs in flight, rebind, unload ---- */

/* A long job: every thread counts to 2^20 (a budget ends it if need be). */
static const char spin_src[] =
	".kernel spin\n.param ptr out\n"
	"  LDP.64 R2, [out] ;\n  S2R R0, SR_TID.X ;\n  MOV R5, 0x0 ;\n"
	"l:\n  IADD R5, R5, 0x1 ;\n  ISETP.LT.U32 P0, R5, 0x100000 ;\n  @P0 BRA l ;\n"
	"  SHL R1, R0, 0x2 ;\n  IADD R2, R2, R1 ;\n  STG.32 [R2], R5 ;\n  EXIT ;\n";

/*
 * A client: a store job and a long one, a BO mapped, a VM with a queue, a
 * BO bound and an unmap waiting on its bind queue for the long job, and
 * (while a hardware queue for user mode is free) a user-mode queue running
 * the long kernel with a stuck acquire behind it, its ring and doorbell
 * mapped; then it tells the parent and waits to be killed.  Exit status 0
 * when it got that far.
 */
/* The client's user-mode queue, if one is free: 0, or -errno. */
static int lifecycle_userq(int fd, const struct vgpu_prog *sp)
{
	struct drm_vgpu_userq_create c = { 0 };
	struct vgpu_cmd_launch l = {
		.hdr = { .opcode = VGPU_CMD_LAUNCH },
		.code_va = sp->code_va, .code_size = sp->code_size,
		.entry = sp->entry, .grid = { 2, 1, 1 }, .block = { 64, 1, 1 },
		.param_va = sp->param_va, .param_size = sp->param_size,
		.budget = ~0ull,
	};
	struct vgpu_cmd_sem acq = {
		.hdr = { .opcode = VGPU_CMD_SEM_ACQUIRE },
		.addr = sp->data_va + 2048, .payload = 1ull << 62,
	};
	volatile uint32_t *db;
	uint8_t *ring;
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c);

	if (ret == -ENODEV)
		return 0;	/* the device keeps no hardware queue for user mode */
	if (ret)
		return ret;
	ring = mmap(NULL, c.entries * VGPU_CMD_BYTES, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, c.ring_offset);
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  c.doorbell_offset);
	if (ring == MAP_FAILED || db == MAP_FAILED)
		return -errno;
	memcpy(ring, &l, sizeof(l));
	memcpy(ring + VGPU_CMD_BYTES, &acq, sizeof(acq));
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	db[VGPU_DB_TAIL / 4] = 2;
	return 0;	/* the mappings stay until the process dies */
}

static int lifecycle_client(int ready_fd)
{
	struct drm_vgpu_vm_create vc = { 0 };
	struct drm_vgpu_queue_create qc = { .priority = VGPU_QUEUE_PRIORITY_NORMAL };
	struct drm_vgpu_vm_bind_op op = { .op = VGPU_VM_BIND_OP_MAP, .va = 0x40000000,
					  .range = 4096 };
	struct drm_vgpu_vm_bind bind = { .ops = (uintptr_t)&op, .op_count = 1 };
	struct drm_vgpu_sync sync = { 0 };
	struct drm_vgpu_submit s;
	struct vgpu_prog p, sp;
	uint32_t h[3], sh[3];
	int fd = vgpu_open_render();

	if (fd < 0 || vgpu_prog_load(fd, &p, vgpu_store_src, 4096) ||
	    vgpu_prog_load(fd, &sp, spin_src, 4096))
		return 1;
	*(uint64_t *)p.param = p.data_va;
	vgpu_prog_submit_args(&p, &s, h, 4, 64);
	if (_test_submit(fd, &s) || _test_wait_bo(fd, p.data_h, vgpu_wait_ns(30)))
		return 2;
	*(uint64_t *)sp.param = sp.data_va;
	vgpu_prog_submit_args(&sp, &s, sh, 2, 64);
	if (_test_syncobj_create(fd, &sync.handle))
		return 3;
	s.out_syncs = (uintptr_t)&sync;
	s.out_sync_count = 1;
	if (_test_submit(fd, &s))
		return 3;
	/*
	 * A VM with a queue, a BO mapped, and an unmap queued on its bind
	 * queue behind the spinning job: the unbind finds a bind pending.
	 */
	if (vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_CREATE, &vc))
		return 5;
	qc.vm_id = vc.vm_id;
	op.handle = p.data_h;
	bind.vm_id = vc.vm_id;
	if (vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &qc) ||
	    vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_BIND, &bind))
		return 6;
	op = (struct drm_vgpu_vm_bind_op){ .op = VGPU_VM_BIND_OP_UNMAP,
					   .va = 0x40000000, .range = 4096 };
	bind.in_syncs = (uintptr_t)&sync;
	bind.in_sync_count = 1;
	if (vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_BIND, &bind))
		return 7;
	if (lifecycle_userq(fd, &sp))
		return 8;
	if (write(ready_fd, "r", 1) != 1)
		return 4;
	for (;;)
		pause();
}

/*
 * A storm of short jobs: STORM_CLIENTS processes, each STORM_JOBS null jobs
 * on one queue, every job listing the same BOs (so each waits for the one
 * before through its finished fence), waited for STORM_BATCH at a time.
 * drm_sched frees a job as soon as its finished fence reads signalled,
 * while the interrupt that signalled it may still be running the fence's
 * callbacks on another CPU: the job's own callback among them once
 * KASAN caught reading the freed job there (vgpu_job_free now waits for
 * that walk).  Every job ends DONE; on the debug kernel KASAN watches
 * every free (run-in-guest.sh fails on a report).  A race: a run without
 * a report proves nothing, one with a report proves the bug.
 */
#define STORM_CLIENTS 4
#define STORM_JOBS 400
#define STORM_BATCH 8

static int storm_client(void)
{
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t handles[3];
	int fd = vgpu_open_render();

	if (fd < 0 || vgpu_prog_load(fd, &p, ".kernel null\n  EXIT ;\n", 4096))
		return 1;
	vgpu_prog_submit_args(&p, &s, handles, 1, 32);
	for (unsigned int i = 1; i <= STORM_JOBS; i++) {
		if (_test_submit(fd, &s))
			return 2;
		if ((i % STORM_BATCH == 0 || i == STORM_JOBS) &&
		    _test_wait_bo(fd, p.data_h, vgpu_wait_ns(30)))
			return 3;
	}
	if (_test_get_job(fd, s.job_id, &j, NULL) || j.state != VGPU_JOB_DONE)
		return 4;
	return 0;
}

TEST(job_storm_frees_as_fences_signal)
{
	pid_t pid[STORM_CLIENTS];
	int status;

	for (int i = 0; i < STORM_CLIENTS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i])
			_exit(storm_client());
	}
	for (int i = 0; i < STORM_CLIENTS; i++) {
		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("client %d", i);
	}
}

FIXTURE(lifecycle) {
	char params[64];
	char ko[256];
	bool reloaded;
};

FIXTURE_SETUP(lifecycle)
{
	if (module_path(self->ko, sizeof(self->ko)))
		SKIP(return, "no %s to load", self->ko);
	module_params(self->params, sizeof(self->params));
}

FIXTURE_TEARDOWN(lifecycle)
{
	if (access("/sys/module/vgpu", F_OK))
		EXPECT_EQ(0, module_load(self->ko, self->params));
}


/*
 * VGPU_LIFECYCLE times (default 100, divided by VGPU_TIMEOUT_SCALE): load
 * vgpu.ko, 4 clients each run a job and leave a long one on the device,
 * the device is unbound under them and bound again, the clients are
 * killed, the module unloaded.  Nothing oopses (run-in-guest.sh scans the
 * log; kmemleak on the debug kernel checks every object), every step
 * succeeds, and the kernel's unreclaimable slab grows by less than a page
 * per round (a leaked job history, page table or BO per round would not;
 * on a kernel with kmemleak, kmemleak judges instead).
 */
#define LIFECYCLE_WARMUP 10

TEST_F_TIMEOUT(lifecycle, load_work_unbind_unload, 300)
{
	const char *e = getenv("VGPU_LIFECYCLE");
	unsigned int rounds = e ? strtoul(e, NULL, 0) : 100 / vgpu_timeout_scale();
	unsigned int measured = rounds;
	long long slab0, slab1;
	char addr[256];
	unsigned int r, i;

	ASSERT_EQ(0, vgpu_pci_addr(addr, sizeof(addr)));
	ASSERT_EQ(0, module_unload_settled());
	ASSERT_EQ(0, sysfs_write("/proc/sys/vm/drop_caches", "3"));
	slab0 = meminfo_kib("SUnreclaim");
	for (r = 0; r < rounds; r++) {
		int ready[2], status;
		pid_t pid[4];
		char c;

		/*
		 * The baseline after a few rounds: the first ones fill the
		 * slab caches a fresh boot has not used yet (676 KiB once,
		 * run alone), which is no leak of a round.
		 */
		if (r == (rounds >= 20 ? LIFECYCLE_WARMUP : 0)) {
			ASSERT_EQ(0, sysfs_write("/proc/sys/vm/drop_caches", "3"));
			slab0 = meminfo_kib("SUnreclaim");
			measured = rounds - r;
		}

		ASSERT_EQ(0, module_load(self->ko, self->params));
		ASSERT_EQ(0, pipe(ready));
		for (i = 0; i < 4; i++) {
			pid[i] = fork();
			ASSERT_LE(0, pid[i]);
			if (!pid[i])
				_exit(lifecycle_client(ready[1]));
		}
		close(ready[1]);
		for (i = 0; i < 4; i++)
			ASSERT_EQ(1, read(ready[0], &c, 1)) {
				TH_LOG("round %u: a client did not get ready", r);
			}
		close(ready[0]);
		ASSERT_EQ(0, vgpu_pci_driver_write("unbind", addr));
		ASSERT_EQ(0, vgpu_pci_driver_write("bind", addr));
		for (i = 0; i < 4; i++) {
			kill(pid[i], SIGKILL);
			ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
			ASSERT_TRUE(WIFSIGNALED(status));
		}
		ASSERT_EQ(0, module_unload_settled()) {
			TH_LOG("round %u: rmmod", r);
		}
	}
	ASSERT_EQ(0, sysfs_write("/proc/sys/vm/drop_caches", "3"));
	slab1 = meminfo_kib("SUnreclaim");
	TH_LOG("%u rounds: SUnreclaim %lld -> %lld KiB over the last %u", rounds, slab0,
	       slab1, measured);
	/*
	 * Where kmemleak runs (the debug kernel) it checks every object
	 * after the last unload (run-in-guest.sh), and KASAN's quarantine
	 * keeps freed objects in the slab: no bound there.
	 */
	if (access("/sys/kernel/debug/kmemleak", F_OK))
		EXPECT_GT(slab0 + 4 * (long long)measured, slab1);
	ASSERT_EQ(0, module_load(self->ko, self->params));
}

VGPU_TEST_HARNESS_MAIN
