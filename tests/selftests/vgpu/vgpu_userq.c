// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_userq: user-mode queues and user fences (USERQ_*, WAIT_USER_FENCE;
 * uapi/vgpu_drm.h "User-mode queues").  The test plays the process that
 * owns a queue: it writes commands into the mapped ring, rings the mapped
 * doorbell with a store and waits on a 64-bit fence in a BO it maps,
 * without SUBMIT.  Every check is what the device did: values kernels
 * wrote, completion records, the queue's state.
 *
 *   launch + release       a kernel's output, the fence value, the records
 *   WAIT_USER_FENCE        each operator and mask, deadlines, errnos
 *   its poll               ends at the deadline, a signal, a stop, the value
 *   bad commands           the exact error, that queue stopped, others run
 *   garbage doorbell       VGPU_ERR_BAD_DOORBELL on that queue only
 *   another file's memory  the asid field names it in vain: a fault
 *   mmap rules             read-only completions, owner only, SIGBUS after
 *                          destroy, not inherited by fork()
 *   hang                   stopped by the watchdog (HUNG), others run
 *   killed owner           its slot comes back, nothing leaks
 *   VM_BIND                a queue in a VM sees binds and unmaps at once
 *   device reset           a hung kernel job's whole-device reset stops
 *                          every user queue (LOST), a new one works
 *   oversubscription       unprivileged clients with 3x more queues than
 *                          hardware queues all complete every job, exactly
 *                          once; a file at its limit keeps nobody out;
 *                          acquires waiting through many map-outs complete
 *                          once
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include "vgpu_uq.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

#define FENCE_OFF 2048u	/* the fence's offset in the data BO */
#define USERQ_TIMEOUT "/sys/module/vgpu/parameters/userq_timeout_ms"
#define USERQ_TIMESLICE "/sys/module/vgpu/parameters/userq_timeslice_ms"

FIXTURE(userq) {
	int fd;
	uint64_t nuq;
	struct vgpu_prog p;	/* the store kernel: out = data BO */
	volatile uint64_t *fence;
	uint64_t fence_va;
};

FIXTURE_SETUP(userq)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	test_get_param(VGPU_PARAM_USER_QUEUES, &self->nuq);
	if (!self->nuq)
		SKIP(return, "the device keeps no hardware queue for user mode");
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p, vgpu_store_src, 4096));
	*(uint64_t *)self->p.param = self->p.data_va;
	*(uint32_t *)((char *)self->p.param + 8) = 7;
	self->fence = (volatile uint64_t *)((char *)self->p.data + FENCE_OFF);
	self->fence_va = self->p.data_va + FENCE_OFF;
}

FIXTURE_TEARDOWN(userq)
{
	if (self->nuq)
		vgpu_prog_unmap(&self->p);
	close(self->fd);
}

/* Launch the store kernel (4 threads) and release @v; wait for it. */
static void store_and_release(struct __test_metadata *_metadata,
			      FIXTURE_DATA(userq) *self, struct uq *q,
			      uint64_t v)
{
	struct vgpu_cmd_launch l = launch_cmd(&self->p, 4);
	struct vgpu_cmd_sem r = release_cmd(self->fence_va, v);

	uq_put(q, &l);
	uq_put(q, &r);
	uq_ring(q);
	ASSERT_EQ(0, ufence_wait(self->fd, self->fence, VGPU_UFENCE_OP_GTE, v,
				 ~0ull, vgpu_now_ns() + vgpu_wait_ns(30),
				 q->c.queue_id));
}

TEST_F(userq, launch_and_release_without_an_ioctl)
{
	struct drm_vgpu_userq_get_state st;
	char dir[256], buf[8192];
	uint32_t *out = self->p.data;
	struct uq q;

	ASSERT_EQ(0, uq_create(self->fd, &q));
	EXPECT_EQ(VGPU_USERQ_ENTRIES, q.c.entries);
	EXPECT_NE(0, q.c.queue_id);
	store_and_release(_metadata, self, &q, 1);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(i * 2 + 7, out[i]);
	EXPECT_EQ(1u, *self->fence);
	/* both records, in ring order, naming the queue's hardware queue */
	EXPECT_EQ(VGPU_ERR_NONE, q.cpl[0].status);
	EXPECT_EQ(VGPU_CMD_LAUNCH, q.cpl[0].opcode);
	EXPECT_EQ(1u, q.cpl[0].seq);
	EXPECT_EQ(q.c.hw_queue, q.cpl[0].queue);
	EXPECT_LT(0u, q.cpl[0].warp_insns);
	EXPECT_EQ(VGPU_CMD_SEM_RELEASE, q.cpl[1].opcode);
	EXPECT_EQ(2u, q.cpl[1].seq);
	/* the doorbell page shows the progress */
	EXPECT_EQ(2u, q.db[VGPU_DB_HEAD / 4]);
	EXPECT_EQ(2u, q.db[VGPU_DB_COMPLETED_LO / 4]);
	ASSERT_EQ(0, uq_state(self->fd, &q, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_ACTIVE, st.state);
	EXPECT_EQ(2u, st.completed);
	EXPECT_EQ(2u, st.head);
	EXPECT_EQ(2u, st.tail);
	/* debugfs `queues` lists it with its hardware queue */
	if (!vgpu_debugfs_dir(dir, sizeof(dir))) {
		char want[96];

		strncat(dir, "/queues", sizeof(dir) - strlen(dir) - 1);
		ASSERT_LT(0, read_file(dir, buf, sizeof(buf)));
		snprintf(want, sizeof(want), "(hw %u): status 0x%x head 2 tail 2 completed 2 client ",
			 q.c.hw_queue, VGPU_QSTAT_ENABLED | VGPU_QSTAT_IDLE);
		if (!strstr(buf, want))
			TH_LOG("%s", buf);
		EXPECT_NE(NULL, strstr(buf, want));
		snprintf(want, sizeof(want), " id %u asid ", q.c.queue_id);
		EXPECT_NE(NULL, strstr(buf, want));
	}
	/* around the ring twice: the queue keeps going */
	for (uint64_t v = 2; v < 2 + q.c.entries; v++) {
		*(uint32_t *)((char *)self->p.param + 8) = (uint32_t)v;
		store_and_release(_metadata, self, &q, v);
		ASSERT_EQ(3 * 2 + v, out[3]);
	}
	ASSERT_EQ(0, uq_destroy(self->fd, &q));
	EXPECT_EQ(-ENOENT, uq_destroy(self->fd, &q));
}

TEST_F(userq, wait_user_fence_operators_deadlines_and_errors)
{
	static const struct {
		uint32_t op;
		uint64_t value, mask;
		bool holds;
	} c[] = {
		{ VGPU_UFENCE_OP_EQ, 0x1234, ~0ull, true },
		{ VGPU_UFENCE_OP_EQ, 0x1235, ~0ull, false },
		{ VGPU_UFENCE_OP_EQ, 0xff34, 0xff, true },
		{ VGPU_UFENCE_OP_NEQ, 0x1234, ~0ull, false },
		{ VGPU_UFENCE_OP_NEQ, 0x1235, ~0ull, true },
		{ VGPU_UFENCE_OP_GT, 0x1233, ~0ull, true },
		{ VGPU_UFENCE_OP_GT, 0x1234, ~0ull, false },
		{ VGPU_UFENCE_OP_GTE, 0x1234, ~0ull, true },
		{ VGPU_UFENCE_OP_GTE, 0x1235, ~0ull, false },
		{ VGPU_UFENCE_OP_LT, 0x1235, ~0ull, true },
		{ VGPU_UFENCE_OP_LT, 0x1234, ~0ull, false },
		{ VGPU_UFENCE_OP_LTE, 0x1234, ~0ull, true },
		{ VGPU_UFENCE_OP_LTE, 0x1233, ~0ull, false },
		{ VGPU_UFENCE_OP_LT, 0x1234, 0xff, false },
		{ VGPU_UFENCE_OP_GT, 0x1233, 0xf0, false },
	};
	struct drm_vgpu_wait_user_fence w = { 0 };
	volatile uint64_t *shared = self->fence;
	static uint64_t word = 0x1234;
	int64_t t0;
	pid_t pid;
	int status;

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int ret = ufence_wait(self->fd, &word, c[i].op, c[i].value,
				      c[i].mask, 0, 0);

		if (ret != (c[i].holds ? 0 : -ETIME))
			TH_LOG("case %u: %d", i, ret);
		EXPECT_EQ(c[i].holds ? 0 : -ETIME, ret);
	}
	/* a deadline ahead: waits until then, not less */
	t0 = vgpu_now_ns();
	EXPECT_EQ(-ETIME, ufence_wait(self->fd, &word, VGPU_UFENCE_OP_EQ, 1,
				      ~0ull, t0 + 50000000, 0));
	EXPECT_LE(t0 + 50000000, vgpu_now_ns());
	/* a CPU write from another process (shared memory) ends the wait */
	*shared = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		usleep(100000);
		*shared = 5;
		_exit(0);
	}
	EXPECT_EQ(0, ufence_wait(self->fd, shared, VGPU_UFENCE_OP_EQ, 5, ~0ull,
				 vgpu_now_ns() + vgpu_wait_ns(30), 0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* bad input */
	w = (struct drm_vgpu_wait_user_fence){ .addr = (uintptr_t)&word, .op = 6 };
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
	w.op = 0;
	w.flags = 1;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
	w.flags = 0;
	w.pad = 1;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
	w.pad = 0;
	w.addr = (uintptr_t)&word + 4;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
	w.addr = 8;
	EXPECT_EQ(-EFAULT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
	w.addr = (uintptr_t)&word;
	w.value = 1;
	w.mask = ~0ull;
	w.queue_id = 999;
	EXPECT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * WAIT_USER_FENCE polls before it sleeps (ufence_spin_us).  With a poll of
 * 10 s, each thing that must end it early does, long before the 10 s: the
 * deadline, a signal, a queue's stop, and the value itself.  (The bounds
 * are the poll's length, not a speed: a poll that ignored one of them
 * would take 10 s.)
 */
TEST_F(userq, wait_user_fence_polls_no_longer_than_its_deadline_a_signal_or_a_stop)
{
	static const char param[] = "/sys/module/vgpu/parameters/ufence_spin_us";
	const int64_t spin = 10000000000ll, bound = spin / 2;
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct drm_vgpu_wait_user_fence w;
	struct vgpu_cmd_header garbage[16] = { { .opcode = 0x77 } };
	struct vgpu_cmd_sem r = release_cmd(self->fence_va, 1);
	volatile uint64_t *shared = self->fence;
	static uint64_t word = 0x1234;
	char saved[32] = "";
	int64_t t0, t;
	struct uq q;
	pid_t pid;
	int status;

	ASSERT_LT(0, read_file(param, saved, sizeof(saved)));
	ASSERT_EQ(0, sysfs_write(param, "10000000"));
	/* the deadline */
	t0 = vgpu_now_ns();
	EXPECT_EQ(-ETIME, ufence_wait(self->fd, &word, VGPU_UFENCE_OP_EQ, 1, ~0ull,
				      t0 + 50000000, 0));
	t = vgpu_now_ns() - t0;
	EXPECT_LE(50000000, t);
	EXPECT_GT(bound, t);
	/*
	 * a signal (no SA_RESTART: the ioctl's -ERESTARTSYS reaches us as
	 * EINTR; ioctl() itself, vgpu_ioctl() would retry)
	 */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, &old));
	t0 = vgpu_now_ns();
	w = (struct drm_vgpu_wait_user_fence){
		.addr = (uintptr_t)&word, .value = 1, .mask = ~0ull,
		.timeout_ns = t0 + 3 * spin, .op = VGPU_UFENCE_OP_EQ,
	};
	ualarm(50000, 0);
	EXPECT_EQ(-1, ioctl(self->fd, DRM_IOCTL_VGPU_WAIT_USER_FENCE, &w));
	EXPECT_EQ(EINTR, errno);
	t = vgpu_now_ns() - t0;
	EXPECT_GT(bound, t);
	sigaction(SIGALRM, &old, NULL);
	/* the queue's stop (its error interrupt) */
	*self->fence = 0;
	ASSERT_EQ(0, uq_create(self->fd, &q));
	uq_put(&q, garbage);
	uq_put(&q, &r);
	uq_ring(&q);
	t0 = vgpu_now_ns();
	EXPECT_EQ(-EIO, ufence_wait(self->fd, self->fence, VGPU_UFENCE_OP_GTE, 1,
				    ~0ull, t0 + 3 * spin, q.c.queue_id));
	t = vgpu_now_ns() - t0;
	EXPECT_GT(bound, t);
	EXPECT_EQ(0u, *self->fence);
	ASSERT_EQ(0, uq_destroy(self->fd, &q));
	/* a CPU write from another process, which no interrupt announces */
	*shared = 0;
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		usleep(50000);
		*shared = 7;
		_exit(0);
	}
	t0 = vgpu_now_ns();
	EXPECT_EQ(0, ufence_wait(self->fd, shared, VGPU_UFENCE_OP_EQ, 7, ~0ull,
				 t0 + 3 * spin, 0));
	t = vgpu_now_ns() - t0;
	EXPECT_GT(bound, t);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, sysfs_write(param, saved));
}

/* One bad command: the exact error, the queue stopped, -EIO for waiters. */
static void expect_stops(struct __test_metadata *_metadata,
			 FIXTURE_DATA(userq) *self, const void *cmd,
			 uint32_t hw_error, uint64_t fault_va)
{
	struct drm_vgpu_userq_get_state st;
	struct vgpu_cmd_sem r = release_cmd(self->fence_va, 1);
	struct uq q;
	uint32_t slot;

	*self->fence = 0;
	ASSERT_EQ(0, uq_create(self->fd, &q));
	slot = uq_put(&q, cmd);
	uq_put(&q, &r);
	uq_ring(&q);
	EXPECT_EQ(-EIO, ufence_wait(self->fd, self->fence, VGPU_UFENCE_OP_GTE, 1,
				    ~0ull, vgpu_now_ns() + vgpu_wait_ns(30),
				    q.c.queue_id));
	ASSERT_EQ(0, uq_state(self->fd, &q, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_ERROR, st.state);
	EXPECT_EQ(hw_error, st.hw_error);
	EXPECT_EQ(slot, st.error_index);
	EXPECT_EQ(hw_error, q.cpl[slot].status);
	EXPECT_EQ(1u, st.completed); /* nothing after it ran */
	EXPECT_EQ(0u, *self->fence);
	if (fault_va)
		EXPECT_EQ(fault_va, q.cpl[slot].exc.addr);
	ASSERT_EQ(0, uq_destroy(self->fd, &q));
}

TEST_F(userq, bad_commands_stop_their_queue_with_the_exact_error)
{
	struct vgpu_cmd_header garbage[16] = { { .opcode = 0x77 } };
	struct vgpu_cmd_fence phys = {
		.hdr = { .opcode = VGPU_CMD_FENCE, .flags = VGPU_CMD_F_FENCE_PHYS },
		.addr = 0x1000, .value = 1,
	};
	struct vgpu_cmd_tlb_invalidate tlbi = {
		.hdr = { .opcode = VGPU_CMD_TLB_INVALIDATE },
		.asid = VGPU_TLBI_ALL_AS,
	};
	struct vgpu_cmd_sem misaligned = release_cmd(self->fence_va + 4, 1);
	struct vgpu_cmd_sem unmapped = release_cmd(0x7f0000000000ull, 1);
	struct vgpu_cmd_launch l = launch_cmd(&self->p, 4);

	expect_stops(_metadata, self, garbage, VGPU_ERR_BAD_COMMAND, 0);
	expect_stops(_metadata, self, &phys, VGPU_ERR_BAD_COMMAND, 0);
	expect_stops(_metadata, self, &tlbi, VGPU_ERR_BAD_COMMAND, 0);
	expect_stops(_metadata, self, &misaligned, VGPU_ERR_BAD_COMMAND, 0);
	expect_stops(_metadata, self, &unmapped, VGPU_ERR_MMU_FAULT,
		     0x7f0000000000ull);
	l.block[0] = 2048; /* more threads than a CTA may have */
	expect_stops(_metadata, self, &l, VGPU_ERR_BAD_LAUNCH, 0);
	l = launch_cmd(&self->p, 4);
	l.code_va = 0x7f0000000000ull;
	expect_stops(_metadata, self, &l, VGPU_ERR_MMU_FAULT, 0x7f0000000000ull);
}

TEST_F(userq, garbage_doorbell_stops_that_queue_only)
{
	struct drm_vgpu_userq_get_state st;
	struct drm_vgpu_submit s;
	uint32_t handles[3], *out = self->p.data;
	struct uq a, b;

	if (self->nuq < 2)
		SKIP(return, "one user-mode hardware queue");
	ASSERT_EQ(0, uq_create(self->fd, &a));
	ASSERT_EQ(0, uq_create(self->fd, &b));
	EXPECT_NE(a.c.hw_queue, b.c.hw_queue);
	a.db[VGPU_DB_TAIL / 4] = 0xdeadbeef;
	ASSERT_EQ(0, uq_state(self->fd, &a, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_ERROR, st.state);
	EXPECT_EQ(VGPU_ERR_BAD_DOORBELL, st.hw_error);
	EXPECT_EQ(VGPU_ERR_BAD_DOORBELL, a.db[VGPU_DB_ERROR / 4]);
	EXPECT_EQ(-EIO, ufence_wait(self->fd, self->fence, VGPU_UFENCE_OP_EQ, 99,
				    ~0ull, vgpu_now_ns() + vgpu_wait_ns(30),
				    a.c.queue_id));
	/* the other user queue and the kernel's queues go on */
	store_and_release(_metadata, self, &b, 1);
	ASSERT_EQ(0, uq_state(self->fd, &b, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_ACTIVE, st.state);
	memset(out, 0, 16);
	*(uint32_t *)((char *)self->p.param + 8) = 11;
	vgpu_prog_submit_args(&self->p, &s, handles, 1, 4);
	test_submit(&s);
	test_wait_bo(self->p.data_h);
	EXPECT_EQ(3 * 2 + 11, out[3]);
	ASSERT_EQ(0, uq_destroy(self->fd, &a));
	ASSERT_EQ(0, uq_destroy(self->fd, &b));
}

TEST_F(userq, another_files_memory_is_out_of_reach)
{
	struct vgpu_cmd_fence f = { .hdr = { .opcode = VGPU_CMD_FENCE }, .value = 0xbad };
	struct drm_vgpu_userq_get_state st;
	uint64_t va, other_asid;
	uint32_t h, slot;
	char val[32];
	int fd2 = vgpu_open_render();
	uint64_t *p;
	struct uq q;

	ASSERT_LE(0, fd2);
	/* far beyond this file's BOs: the other file's VM 0 maps it */
	for (int i = 0; i < 64; i++)
		ASSERT_EQ(0, _test_bo_create(fd2, 1 << 20, VGPU_BO_NO_EXEC, &h, &va));
	ASSERT_EQ(0, _test_bo_map(fd2, h, 4096, (void **)&p));
	*p = 0x600d;
	ASSERT_EQ(0, fdinfo_get(fd2, "vgpu-asid", val, sizeof(val)));
	other_asid = strtoull(val, NULL, 10);
	ASSERT_EQ(0, uq_create(self->fd, &q));
	f.addr = va;
	f.asid = (uint32_t)other_asid; /* ignored: the queue's own runs it */
	slot = uq_put(&q, &f);
	uq_ring(&q);
	ASSERT_EQ(0, ufence_wait(self->fd, (const volatile uint64_t *)&q.cpl[slot].seq,
				 VGPU_UFENCE_OP_NEQ,
				 0, ~0ull, vgpu_now_ns() + vgpu_wait_ns(30), 0));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, q.cpl[slot].status);
	EXPECT_EQ(va, q.cpl[slot].exc.addr);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, q.cpl[slot].exc.info[1]);
	EXPECT_NE(other_asid, q.cpl[slot].exc.info[3]);
	EXPECT_EQ(0x600du, *p);
	ASSERT_EQ(0, uq_state(self->fd, &q, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_ERROR, st.state);
	/* and it cannot map another file's queue */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				   fd2, q.c.doorbell_offset));
	EXPECT_EQ(EACCES, errno);
	ASSERT_EQ(0, uq_destroy(self->fd, &q));
	munmap(p, 4096);
	close(fd2);
}

static sigjmp_buf probe_env;

static void probe_handler(int sig)
{
	siglongjmp(probe_env, sig);
}

/* The signal a write to @p raises, 0 for none. */
static int probe_write(volatile uint32_t *p)
{
	struct sigaction sa = { .sa_handler = probe_handler }, o1, o2;
	int sig;

	sigaction(SIGBUS, &sa, &o1);
	sigaction(SIGSEGV, &sa, &o2);
	sig = sigsetjmp(probe_env, 1);
	if (!sig)
		*p = 0;
	sigaction(SIGBUS, &o1, NULL);
	sigaction(SIGSEGV, &o2, NULL);
	return sig;
}

TEST_F(userq, mappings_belong_to_the_queue_and_its_file)
{
	struct drm_vgpu_userq_destroy d = { 0 };
	volatile uint32_t *db;
	struct uq q;
	pid_t pid;
	int status;
	void *m;

	ASSERT_EQ(0, uq_create(self->fd, &q));
	/* completions are read-only; nothing past an area; unknown offsets */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				   MAP_SHARED, self->fd, q.c.cpl_offset));
	EXPECT_EQ(EACCES, errno);
	m = mmap(NULL, cpl_bytes(&q), PROT_READ, MAP_SHARED, self->fd, q.c.cpl_offset);
	ASSERT_NE(MAP_FAILED, m);
	EXPECT_NE(0, mprotect(m, 4096, PROT_READ | PROT_WRITE));
	munmap(m, cpl_bytes(&q));
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->fd, q.c.doorbell_offset));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				   self->fd, q.c.doorbell_offset + 4096));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->fd, 4096));
	/* a fork()ed child does not inherit the doorbell */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(probe_write(&q.db[VGPU_DB_TAIL / 4]) == SIGSEGV ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* after destroy, the old mappings are dead, never another queue's */
	db = q.db;
	EXPECT_EQ(0, probe_write(&db[VGPU_DB_HEAD / 4]));
	d.queue_id = q.c.queue_id;
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &d));
	EXPECT_EQ(SIGBUS, probe_write(&db[VGPU_DB_TAIL / 4]));
	EXPECT_EQ(SIGBUS, probe_write((volatile uint32_t *)q.ring));
	ASSERT_EQ(0, uq_create(self->fd, &q)); /* maybe the same slot */
	EXPECT_EQ(SIGBUS, probe_write(&db[VGPU_DB_TAIL / 4]));
	munmap((void *)db, 4096);
	ASSERT_EQ(0, uq_destroy(self->fd, &q));
}

TEST_F(userq, create_errors_and_limits)
{
	struct drm_vgpu_userq_create c = { 0 };
	struct drm_vgpu_userq_destroy d = { .pad = 1 };
	struct uq q[VGPU_MAX_USERQ_PER_FILE];
	uint64_t n;

	c.flags = 1;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c));
	c.flags = 0;
	c.priority = 4;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c));
	c.priority = 0;
	c.vm_id = 77;
	EXPECT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c));
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &d));
	d.pad = 0;
	d.queue_id = 12345;
	EXPECT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &d));
	c.vm_id = 0;
	/*
	 * More than the hardware queues kept for user mode (they are mapped
	 * in and out): the file's limit, then -EMFILE, never -EBUSY
	 */
	n = VGPU_MAX_USERQ_PER_FILE;
	EXPECT_LT(self->nuq, n);
	for (uint64_t i = 0; i < n; i++) {
		ASSERT_EQ(0, uq_create(self->fd, &q[i]));
		/* a free slot's hardware queue, or none */
		if (i >= self->nuq)
			EXPECT_EQ(VGPU_USERQ_HW_NONE, q[i].c.hw_queue);
	}
	EXPECT_EQ(-EMFILE, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c));
	ASSERT_EQ(0, uq_destroy(self->fd, &q[0]));
	ASSERT_EQ(0, uq_create(self->fd, &q[0]));
	store_and_release(_metadata, self, &q[0], 1);
	/* the last one, mapped out when made, runs as well */
	store_and_release(_metadata, self, &q[n - 1], 2);
	for (uint64_t i = 0; i < n; i++)
		ASSERT_EQ(0, uq_destroy(self->fd, &q[i]));
}

TEST_F(userq, a_hang_is_stopped_by_the_watchdog_and_only_it)
{
	struct drm_vgpu_userq_get_state st;
	struct vgpu_cmd_sem acq = stuck_acquire(self->fence_va);
	char saved[32] = "0", ms[32];
	int64_t t0;
	struct uq a, b;

	if (self->nuq < 2)
		SKIP(return, "one user-mode hardware queue");
	ASSERT_LT(0, read_file(USERQ_TIMEOUT, saved, sizeof(saved)));
	snprintf(ms, sizeof(ms), "%u", 300 * vgpu_timeout_scale());
	ASSERT_EQ(0, sysfs_write(USERQ_TIMEOUT, ms));
	ASSERT_EQ(0, uq_create(self->fd, &a));
	ASSERT_EQ(0, uq_create(self->fd, &b));
	t0 = vgpu_now_ns();
	uq_put(&a, &acq);
	uq_ring(&a);
	EXPECT_EQ(-EIO, ufence_wait(self->fd, self->fence, VGPU_UFENCE_OP_EQ,
				    1ull << 62, ~0ull,
				    vgpu_now_ns() + vgpu_wait_ns(60), a.c.queue_id));
	EXPECT_LE(t0 + 300000000ll * vgpu_timeout_scale(), vgpu_now_ns());
	ASSERT_EQ(0, uq_state(self->fd, &a, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_HUNG, st.state);
	EXPECT_EQ(VGPU_ERR_ABORTED, st.hw_error);
	EXPECT_EQ(0u, st.error_index);
	EXPECT_EQ(0u, st.completed);
	/* the other queue is untouched */
	store_and_release(_metadata, self, &b, 3);
	ASSERT_EQ(0, uq_state(self->fd, &b, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_ACTIVE, st.state);
	sysfs_write(USERQ_TIMEOUT, saved);
	ASSERT_EQ(0, uq_destroy(self->fd, &a));
	ASSERT_EQ(0, uq_destroy(self->fd, &b));
}

TEST_F(userq, a_killed_owner_gives_its_queues_back)
{
	struct uq q[VGPU_MAX_USERQ_PER_FILE];
	uint64_t n = self->nuq < VGPU_MAX_USERQ_PER_FILE ? self->nuq :
							   VGPU_MAX_USERQ_PER_FILE;
	int pfd[2], status;
	char c;
	pid_t pid;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = vgpu_open_render();
		struct vgpu_cmd_sem acq = stuck_acquire(0);
		struct uq cq;
		uint64_t va;
		uint32_t h;

		if (fd < 0 || _test_bo_create(fd, 4096, VGPU_BO_POPULATE, &h, &va))
			_exit(1);
		/* every slot it can get, each stuck in an acquire */
		for (uint64_t i = 0; i < n; i++) {
			if (uq_create(fd, &cq))
				_exit(2);
			acq.addr = va;
			uq_put(&cq, &acq);
			uq_ring(&cq);
		}
		if (write(pfd[1], "x", 1) != 1)
			_exit(3);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	/* its file is closed: every slot is free again and works */
	for (uint64_t i = 0; i < n; i++)
		ASSERT_EQ(0, uq_create(self->fd, &q[i]));
	for (uint64_t i = 0; i < n; i++) {
		*(uint32_t *)((char *)self->p.param + 8) = (uint32_t)i;
		store_and_release(_metadata, self, &q[i], i + 1);
	}
	for (uint64_t i = 0; i < n; i++)
		ASSERT_EQ(0, uq_destroy(self->fd, &q[i]));
}

TEST_F(userq, a_queue_in_a_vm_sees_binds_and_unmaps_at_once)
{
	const uint64_t base = 0x50000000ull, code = base, param = base + 0x100000,
		       out = base + 0x200000, fence = base + 0x300000;
	struct drm_vgpu_vm_create vc = { 0 };
	struct drm_vgpu_vm_bind_op ops[4];
	struct drm_vgpu_vm_bind b = { 0 };
	struct vgpu_cmd_launch l = launch_cmd(&self->p, 4);
	struct vgpu_cmd_sem r = release_cmd(fence, 1);
	uint32_t fh, oh, slot, *o;
	uint64_t *fmap;
	uint8_t *pm;
	struct uq q;

	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_CREATE, &vc));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, VGPU_BO_NO_EXEC, &fh, NULL));
	ASSERT_EQ(0, _test_bo_map(self->fd, fh, 4096, (void **)&fmap));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, VGPU_BO_NO_EXEC, &oh, NULL));
	ASSERT_EQ(0, _test_bo_map(self->fd, oh, 4096, (void **)&o));
	ops[0] = (struct drm_vgpu_vm_bind_op){ .op = VGPU_VM_BIND_OP_MAP,
		.handle = self->p.code_h, .va = code, .range = 4096 };
	ops[1] = (struct drm_vgpu_vm_bind_op){ .op = VGPU_VM_BIND_OP_MAP,
		.handle = self->p.param_h, .va = param, .range = 4096 };
	ops[2] = (struct drm_vgpu_vm_bind_op){ .op = VGPU_VM_BIND_OP_MAP,
		.handle = oh, .va = out, .range = 4096 };
	ops[3] = (struct drm_vgpu_vm_bind_op){ .op = VGPU_VM_BIND_OP_MAP,
		.handle = fh, .va = fence, .range = 4096 };
	b.vm_id = vc.vm_id;
	b.ops = (uintptr_t)ops;
	b.op_count = 4;
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_BIND, &b));
	pm = self->p.param;
	*(uint64_t *)pm = out;
	ASSERT_EQ(0, uq_create_vm(self->fd, vc.vm_id, &q));
	l.code_va = code;
	l.param_va = param;
	uq_put(&q, &l);
	uq_put(&q, &r);
	uq_ring(&q);
	ASSERT_EQ(0, ufence_wait(self->fd, fmap, VGPU_UFENCE_OP_EQ, 1, ~0ull,
				 vgpu_now_ns() + vgpu_wait_ns(30), q.c.queue_id));
	EXPECT_EQ(3 * 2 + 7, o[3]);
	/* unmap the output: the next launch faults there at once */
	ops[0] = (struct drm_vgpu_vm_bind_op){ .op = VGPU_VM_BIND_OP_UNMAP,
		.va = out, .range = 4096 };
	b.op_count = 1;
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_BIND, &b));
	r.payload = 2;
	slot = uq_put(&q, &l);
	uq_put(&q, &r);
	uq_ring(&q);
	EXPECT_EQ(-EIO, ufence_wait(self->fd, fmap, VGPU_UFENCE_OP_EQ, 2, ~0ull,
				    vgpu_now_ns() + vgpu_wait_ns(30), q.c.queue_id));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, q.cpl[slot].status);
	EXPECT_EQ(VGPU_EXC_GLOBAL_FAULT, q.cpl[slot].exc.code);
	EXPECT_EQ(out, q.cpl[slot].exc.addr & ~0xfffull);
	ASSERT_EQ(0, uq_destroy(self->fd, &q));
	munmap(fmap, 4096);
	munmap(o, 4096);
	*(uint64_t *)pm = self->p.data_va;
}

/*
 * A queue made after another on the same hardware queue, with a fence BO
 * at the VA a freed BO had: its release lands in the new BO, never in the
 * freed one's page through a translation the device kept (the driver
 * flushes the TLBs when it creates a user queue).
 */
TEST_F(userq, a_new_queue_never_uses_a_stale_translation)
{
	uint64_t va_x, va_y, *x, *y, *z;
	uint32_t hx, hy, hz, slot, stray = 0;
	struct vgpu_cmd_sem r;
	struct uq a, b;

	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, VGPU_BO_NO_EXEC, &hx, &va_x));
	ASSERT_EQ(0, _test_bo_map(self->fd, hx, 4096, (void **)&x));
	ASSERT_EQ(0, uq_create(self->fd, &a));
	r = release_cmd(va_x, 1);
	slot = uq_put(&a, &r);
	uq_ring(&a);
	ASSERT_EQ(0, ufence_wait(self->fd, x, VGPU_UFENCE_OP_EQ, 1, ~0ull,
				 vgpu_now_ns() + vgpu_wait_ns(30), a.c.queue_id));
	EXPECT_EQ(1u, a.cpl[slot].seq);
	ASSERT_EQ(0, uq_destroy(self->fd, &a));
	munmap(x, 4096);
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_GEM_CLOSE,
				&(struct drm_gem_close){ .handle = hx }));
	/*
	 * The allocator hands the freed VA out again (BO_CREATE, no pages
	 * yet); another BO, made resident first, likely takes the freed page
	 * (the page allocator's lists are last in, first out), so a stale
	 * translation would land there, not in Y.
	 */
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, VGPU_BO_NO_EXEC, &hy, &va_y));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4 << 20, VGPU_BO_NO_EXEC, &hz, NULL));
	ASSERT_EQ(0, _test_bo_map(self->fd, hz, 4 << 20, (void **)&z));
	ASSERT_EQ(0, _test_bo_map(self->fd, hy, 4096, (void **)&y));
	if (va_y != va_x)
		TH_LOG("VA not reused (0x%llx, 0x%llx): the check is weaker",
		       (unsigned long long)va_x, (unsigned long long)va_y);
	ASSERT_EQ(0, uq_create(self->fd, &b));
	EXPECT_EQ(a.c.hw_queue, b.c.hw_queue);
	r = release_cmd(va_y, 0x5eed);
	uq_put(&b, &r);
	uq_ring(&b);
	EXPECT_EQ(0, ufence_wait(self->fd, y, VGPU_UFENCE_OP_EQ, 0x5eed, ~0ull,
				 vgpu_now_ns() + vgpu_wait_ns(10), b.c.queue_id));
	EXPECT_EQ(0x5eedu, *y);
	for (size_t i = 0; i < (4 << 20) / 8; i++)
		stray += z[i] == 0x5eed;
	EXPECT_EQ(0u, stray);	/* nothing went to the freed page */
	ASSERT_EQ(0, uq_destroy(self->fd, &b));
	munmap(y, 4096);
	munmap(z, 4 << 20);
}

/*
 * Oversubscription (docs/driver.md "User-mode queues"): unprivileged
 * clients, each a forked process with its own file (opened, then
 * setresuid to nobody), together hold three times as many user queues as
 * the device has hardware queues for them.  Every queue runs JOBS jobs
 * (a LAUNCH of the store kernel with its own parameters, then a
 * SEM_RELEASE of the job's number), each rung with its own doorbell, so
 * doorbells land on queues mapped out, under a 1 ms timeslice, so queues
 * are taken off with commands pending; all of them complete, each with
 * its outputs, its fence and its records in ring order (seq), so none
 * was lost or run twice across the map-outs.
 */
#define OVER_CLIENTS 3
#define OVER_JOBS 12
#define OVER_MAXQ 16

/* A client's life: @nq queues, every job, every check; an exit code. */
static int over_client(int fd, unsigned int nq, unsigned int who, int ready,
		       int go)
{
	struct vgpu_cmd_launch l;
	struct vgpu_cmd_sem r;
	struct uq q[OVER_MAXQ];
	struct vgpu_prog p;
	volatile uint64_t *fence;
	uint8_t *par;
	uint32_t *out;
	char c;

	if (vgpu_prog_load(fd, &p, vgpu_store_src, 4096 + OVER_MAXQ * OVER_JOBS * 16))
		return 20;
	fence = p.data;
	out = (uint32_t *)((char *)p.data + 4096);
	par = p.param;
	for (unsigned int i = 0; i < nq; i++)
		if (uq_create(fd, &q[i]))
			return 21;
	/* every client holds its queues before any job is rung */
	if (write(ready, "x", 1) != 1 || read(go, &c, 1) != 0)
		return 22;
	for (unsigned int j = 0; j < OVER_JOBS; j++) {
		for (unsigned int i = 0; i < nq; i++) {
			unsigned int n = i * OVER_JOBS + j;
			uint64_t o = p.data_va + 4096 + n * 16;
			uint32_t k = who * 100000 + n;

			memcpy(par + n * 16, &o, 8);
			memcpy(par + n * 16 + 8, &k, 4);
			l = launch_cmd(&p, 4);
			l.param_va = p.param_va + n * 16;
			r = release_cmd(p.data_va + i * 8, j + 1);
			uq_put(&q[i], &l);
			uq_put(&q[i], &r);
			uq_ring(&q[i]);
		}
	}
	for (unsigned int i = 0; i < nq; i++)
		if (ufence_wait(fd, &fence[i], VGPU_UFENCE_OP_EQ, OVER_JOBS, ~0ull,
				vgpu_now_ns() + vgpu_wait_ns(100), q[i].c.queue_id))
			return 30 + i;
	for (unsigned int i = 0; i < nq; i++) {
		for (unsigned int j = 0; j < OVER_JOBS; j++) {
			unsigned int n = i * OVER_JOBS + j;

			for (unsigned int t = 0; t < 4; t++)
				if (out[n * 4 + t] != t * 2 + who * 100000 + n)
					return 50;
			/* records in ring order: no command lost, none twice */
			if (q[i].cpl[2 * j].seq != 2 * j + 1 ||
			    q[i].cpl[2 * j].status != VGPU_ERR_NONE ||
			    q[i].cpl[2 * j + 1].seq != 2 * j + 2 ||
			    q[i].cpl[2 * j + 1].status != VGPU_ERR_NONE)
				return 51;
		}
		if (q[i].db[VGPU_DB_COMPLETED_LO / 4] != 2 * OVER_JOBS)
			return 52;
	}
	for (unsigned int i = 0; i < nq; i++)
		if (uq_destroy(fd, &q[i]))
			return 53;
	vgpu_prog_unmap(&p);
	return 0;
}

TEST_F_TIMEOUT(userq, unprivileged_clients_share_three_times_the_hardware_queues, 120)
{
	unsigned int nq = (3 * self->nuq + OVER_CLIENTS - 1) / OVER_CLIENTS;
	long long outs0 = -1, outs1;
	char saved[32] = "10";
	int go[2], done[2], status;
	pid_t pid[OVER_CLIENTS];
	char dir[64];
	char c;

	if (!vgpu_debugfs_dir(dir, sizeof(dir)))
		outs0 = vgpu_queues_num(dir, "userq_map_outs");
	/* the shortest timeslice: queues are taken off with work pending */
	ASSERT_LT(0, read_file(USERQ_TIMESLICE, saved, sizeof(saved)));
	ASSERT_EQ(0, sysfs_write(USERQ_TIMESLICE, "1"));

	ASSERT_GE(OVER_MAXQ, nq);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	TH_LOG("%u clients, %u user queues each, on %llu hardware queues",
	       OVER_CLIENTS, nq, (unsigned long long)self->nuq);
	for (int c_ = 0; c_ < OVER_CLIENTS; c_++) {
		pid[c_] = fork();
		ASSERT_LE(0, pid[c_]);
		if (!pid[c_]) {
			int fd = vgpu_open_render();

			close(go[1]);
			close(done[0]);
			if (fd < 0)
				_exit(19);
			vgpu_become_user(65534);
			_exit(over_client(fd, nq, c_, done[1], go[0]));
		}
	}
	close(go[0]);
	close(done[1]);
	for (int c_ = 0; c_ < OVER_CLIENTS; c_++)
		ASSERT_EQ(1, read(done[0], &c, 1));
	close(go[1]);	/* all hold their queues: go */
	for (int c_ = 0; c_ < OVER_CLIENTS; c_++) {
		ASSERT_EQ(pid[c_], waitpid(pid[c_], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	close(done[0]);
	sysfs_write(USERQ_TIMESLICE, saved);
	/*
	 * How often the slots changed hands depends on timing (a client
	 * whose queues all got slots finishes and frees them with no
	 * map-out): a_waiting_acquire_survives_map_outs_exactly forces them.
	 */
	if (outs0 >= 0) {
		outs1 = vgpu_queues_num(dir, "userq_map_outs");
		TH_LOG("%lld map-outs", outs1 - outs0);
	}
}

/*
 * A hostile client holds as many user queues as its file may
 * (VGPU_MAX_USERQ_PER_FILE; one more: -EMFILE), each busy for ever in a
 * SEM_ACQUIRE nobody releases.  Another unprivileged client still makes
 * a queue and runs a job on it.
 */
TEST_F_TIMEOUT(userq, a_file_at_its_limit_does_not_keep_another_client_out, 90)
{
	int pfd[2], status;
	pid_t hog, other;
	char c;

	ASSERT_EQ(0, pipe(pfd));
	hog = fork();
	ASSERT_LE(0, hog);
	if (!hog) {
		struct drm_vgpu_userq_create cc = { 0 };
		int fd = vgpu_open_render();
		struct vgpu_cmd_sem acq;
		struct uq q;
		uint32_t h;
		uint64_t va;

		close(pfd[0]);
		if (fd < 0)
			_exit(1);
		vgpu_become_user(65534);
		if (_test_bo_create(fd, 4096, VGPU_BO_POPULATE, &h, &va))
			_exit(2);
		acq = stuck_acquire(va);
		for (unsigned int i = 0; i < VGPU_MAX_USERQ_PER_FILE; i++) {
			if (uq_create(fd, &q))
				_exit(3);
			uq_put(&q, &acq);
			uq_ring(&q);
		}
		if (vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_CREATE, &cc) != -EMFILE)
			_exit(4);
		if (write(pfd[1], "x", 1) != 1)
			_exit(5);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(1, read(pfd[0], &c, 1));
	close(pfd[0]);
	other = fork();
	ASSERT_LE(0, other);
	if (!other) {
		int fd = vgpu_open_render();

		if (fd < 0)
			_exit(11);
		vgpu_become_user(65534);
		_exit(uq_run_store(fd));
	}
	ASSERT_EQ(other, waitpid(other, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, kill(hog, SIGKILL));
	ASSERT_EQ(hog, waitpid(hog, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
}

/*
 * More queues than slots, each waiting in a SEM_ACQUIRE, under a 1 ms
 * timeslice: they take turns, each acquire giving way uncompleted at
 * every map-out.  Once the slots have changed hands twice per queue the
 * semaphores are released: every acquire completes once, its release
 * after it, with seq 1 and 2 in their ring slots; nothing ran twice and
 * nothing was lost.
 */
TEST_F_TIMEOUT(userq, a_waiting_acquire_survives_map_outs_exactly, 90)
{
	unsigned int nq = self->nuq + 2;
	struct drm_vgpu_userq_get_state st;
	volatile uint64_t *mem;
	char dir[64], saved[32] = "10";
	long long outs0, outs;
	struct uq q[OVER_MAXQ];
	int64_t until;
	uint64_t va;
	uint32_t h;

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		SKIP(return, "no debugfs");
	ASSERT_GE(OVER_MAXQ, nq);
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, VGPU_BO_NO_EXEC, &h, &va));
	ASSERT_EQ(0, _test_bo_map(self->fd, h, 4096, (void **)&mem));
	ASSERT_LT(0, read_file(USERQ_TIMESLICE, saved, sizeof(saved)));
	ASSERT_EQ(0, sysfs_write(USERQ_TIMESLICE, "1"));
	outs0 = vgpu_queues_num(dir, "userq_map_outs");
	ASSERT_LE(0, outs0);
	for (unsigned int i = 0; i < nq; i++) {
		struct vgpu_cmd_sem acq = {
			.hdr = { .opcode = VGPU_CMD_SEM_ACQUIRE },
			.addr = va + i * 8, .payload = 1, .op = VGPU_SEM_OP_GEQ,
		};
		struct vgpu_cmd_sem r = release_cmd(va + 1024 + i * 8, 1);

		mem[i] = 0;
		mem[128 + i] = 0;
		ASSERT_EQ(0, uq_create(self->fd, &q[i]));
		uq_put(&q[i], &acq);
		uq_put(&q[i], &r);
		uq_ring(&q[i]);
	}
	/* the slots change hands, twice per queue */
	until = vgpu_now_ns() + vgpu_wait_ns(30);
	do {
		usleep(2000);
		outs = vgpu_queues_num(dir, "userq_map_outs");
	} while (outs < outs0 + 2 * nq && vgpu_now_ns() < until);
	TH_LOG("%lld map-outs before the release", outs - outs0);
	EXPECT_LE(outs0 + 2 * nq, outs);
	for (unsigned int i = 0; i < nq; i++) {
		ASSERT_EQ(0, uq_state(self->fd, &q[i], &st));
		EXPECT_EQ(VGPU_USERQ_STATE_ACTIVE, st.state);
		EXPECT_EQ(0u, st.completed);
		EXPECT_EQ(0u, q[i].cpl[0].seq);
	}
	for (unsigned int i = 0; i < nq; i++)
		mem[i] = 1;
	for (unsigned int i = 0; i < nq; i++) {
		ASSERT_EQ(0, ufence_wait(self->fd, &mem[128 + i], VGPU_UFENCE_OP_EQ, 1,
					 ~0ull, vgpu_now_ns() + vgpu_wait_ns(30),
					 q[i].c.queue_id));
		EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, q[i].cpl[0].opcode);
		EXPECT_EQ(VGPU_ERR_NONE, q[i].cpl[0].status);
		EXPECT_EQ(1u, q[i].cpl[0].seq);
		EXPECT_EQ(VGPU_CMD_SEM_RELEASE, q[i].cpl[1].opcode);
		EXPECT_EQ(2u, q[i].cpl[1].seq);
		ASSERT_EQ(0, uq_state(self->fd, &q[i], &st));
		EXPECT_EQ(VGPU_USERQ_STATE_ACTIVE, st.state);
		EXPECT_EQ(2u, st.completed);
		EXPECT_EQ(2u, st.head);
		EXPECT_EQ(2u, st.tail);
	}
	sysfs_write(USERQ_TIMESLICE, saved);
	for (unsigned int i = 0; i < nq; i++)
		ASSERT_EQ(0, uq_destroy(self->fd, &q[i]));
	munmap((void *)mem, 4096);
}

/* spins for ever: only a reset ends it */
static const char hang_src[] = "l:\n  BRA l ;\n  EXIT ;\n";

TEST(a_device_reset_stops_every_user_queue)
{
	char saved[256], ko[256];
	struct drm_vgpu_userq_get_state st;
	struct drm_vgpu_submit s;
	struct drm_vgpu_sync out = { 0 };
	struct vgpu_prog p, hp;
	uint32_t hh[3];
	struct vgpu_cmd_launch l;
	struct vgpu_cmd_sem acq, r;
	struct uq idle, busy;
	uint64_t n = 0;
	int fd, ret;

	ret = module_reload_short_timeout(saved, sizeof(saved), ko, sizeof(ko));
	if (ret == -ENOENT)
		SKIP(return, "no vgpu.ko to reload");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, sysfs_write("/sys/module/vgpu/parameters/queue_reset", "0"));
	/* the reset, not the user-queue watchdog, must stop the busy queue */
	ASSERT_EQ(0, sysfs_write(USERQ_TIMEOUT, "600000"));
	fd = vgpu_open_render();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, _test_get_param(fd, VGPU_PARAM_USER_QUEUES, &n));
	if (n < 2) {
		close(fd);
		module_unload_settled();
		module_load(ko, saved);
		SKIP(return, "fewer than two user-mode hardware queues");
	}
	ASSERT_EQ(0, vgpu_prog_load(fd, &p, vgpu_store_src, 4096));
	*(uint64_t *)p.param = p.data_va;
	ASSERT_EQ(0, uq_create(fd, &idle));
	ASSERT_EQ(0, uq_create(fd, &busy));
	acq = stuck_acquire(p.data_va + FENCE_OFF);
	uq_put(&busy, &acq);
	uq_ring(&busy);
	/* a kernel job that hangs: the driver resets the whole device */
	ASSERT_EQ(0, vgpu_prog_load(fd, &hp, hang_src, 4096));
	vgpu_prog_submit_args(&hp, &s, hh, 1, 1);
	s.launch.budget = ~0ull;
	ASSERT_EQ(0, _test_syncobj_create(fd, &out.handle));
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_syncobj_wait(fd, out.handle, 0, vgpu_wait_ns(120)));
	/* both user queues were stopped by it, busy or idle */
	EXPECT_EQ(-EIO, ufence_wait(fd, (volatile uint64_t *)((char *)p.data + FENCE_OFF),
				    VGPU_UFENCE_OP_EQ, 1ull << 62, ~0ull,
				    vgpu_now_ns() + vgpu_wait_ns(30), busy.c.queue_id));
	ASSERT_EQ(0, uq_state(fd, &busy, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_LOST, st.state);
	EXPECT_EQ(VGPU_ERR_ABORTED, st.hw_error);
	ASSERT_EQ(0, uq_state(fd, &idle, &st));
	EXPECT_EQ(VGPU_USERQ_STATE_LOST, st.state);
	/* a new one in a freed slot works */
	ASSERT_EQ(0, uq_destroy(fd, &idle));
	ASSERT_EQ(0, uq_create(fd, &idle));
	l = launch_cmd(&p, 4);
	r = release_cmd(p.data_va + FENCE_OFF, 9);
	*(uint32_t *)((char *)p.param + 8) = 3;
	uq_put(&idle, &l);
	uq_put(&idle, &r);
	uq_ring(&idle);
	EXPECT_EQ(0, ufence_wait(fd, (volatile uint64_t *)((char *)p.data + FENCE_OFF),
				 VGPU_UFENCE_OP_EQ, 9, ~0ull,
				 vgpu_now_ns() + vgpu_wait_ns(30), idle.c.queue_id));
	EXPECT_EQ(3u * 2 + 3, ((uint32_t *)p.data)[3]);
	ASSERT_EQ(0, uq_destroy(fd, &idle));
	ASSERT_EQ(0, uq_destroy(fd, &busy));
	vgpu_prog_unmap(&p);
	vgpu_prog_unmap(&hp);
	close(fd);
	EXPECT_EQ(0, module_unload_settled());
	EXPECT_EQ(0, module_load(ko, saved));
}

VGPU_TEST_HARNESS_MAIN
