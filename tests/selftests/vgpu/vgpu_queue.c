// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu.ko selftests (kselftest_harness.h), after vgpu_test's: queue
 * objects (uapi/vgpu_drm.h "Queues"), device-side semaphore
 * dependencies, and unplug with queues.
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include <poll.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/sync_file.h>
#include <linux/capability.h>
#include "vgpu_test.h"

/* ---- queue objects (uapi/vgpu_drm.h "Queues") ---- */

FIXTURE(queue) {
	int fd;
};

FIXTURE_SETUP(queue)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(queue)
{
	close(self->fd);
}

/* Every argument rule of QUEUE_CREATE, QUEUE_DESTROY and QUEUE_GET_STATE. */
TEST_F(queue, argument_errors)
{
	struct drm_vgpu_queue_create c;
	struct drm_vgpu_queue_destroy d;
	struct drm_vgpu_queue_get_state st;
	uint32_t id, ids[64];
	uint64_t max;
	int i, fd2;

	c = (struct drm_vgpu_queue_create){ .priority = 4 };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));
	c = (struct drm_vgpu_queue_create){ .priority = ~0u };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));
	c = (struct drm_vgpu_queue_create){ .flags = 1 };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));
	/* the former pad is the VM: a VM the file does not have */
	c = (struct drm_vgpu_queue_create){ .vm_id = 1 };
	ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &c));

	/* the default queue is always there and cannot be destroyed */
	ASSERT_EQ(0, _test_queue_state(self->fd, VGPU_QUEUE_DEFAULT, &st));
	EXPECT_EQ(VGPU_QUEUE_PRIORITY_NORMAL, st.priority);
	EXPECT_EQ(VGPU_QUEUE_STATE_ACTIVE, st.state);
	ASSERT_EQ(-EINVAL, _test_queue_destroy(self->fd, VGPU_QUEUE_DEFAULT));
	ASSERT_EQ(-ENOENT, _test_queue_destroy(self->fd, 12345));
	ASSERT_EQ(-ENOENT, _test_queue_state(self->fd, 12345, &st));
	d = (struct drm_vgpu_queue_destroy){ .queue_id = 1, .pad = 1 };
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_DESTROY, &d));
	memset(&st, 0, sizeof(st));
	st.pad = 1;
	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &st));

	/* a destroyed id is gone, and not handed out again at once */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &id));
	ASSERT_NE(0, id);
	ASSERT_EQ(0, _test_queue_destroy(self->fd, id));
	ASSERT_EQ(-ENOENT, _test_queue_destroy(self->fd, id));
	ASSERT_EQ(-ENOENT, _test_queue_state(self->fd, id, &st));

	/* the per-file limit */
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_MAX_QUEUES, &max));
	ASSERT_EQ(64, max);
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &ids[i])) {
			TH_LOG("queue %d", i);
		}
		ASSERT_NE(id, ids[i]) {
			TH_LOG("queue %d", i);
		}
	}
	ASSERT_EQ(-EMFILE, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &id));
	ASSERT_EQ(0, _test_queue_destroy(self->fd, ids[5]));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &ids[5]));
	/* another file has its own queues and its own limit */
	fd2 = vgpu_open_render();
	ASSERT_LE(0, fd2);
	ASSERT_EQ(-ENOENT, _test_queue_state(fd2, ids[0], &st));
	ASSERT_EQ(0, _test_queue_create(fd2, VGPU_QUEUE_PRIORITY_LOW, &id));
	close(fd2);
}

/* capable(CAP_SYS_NICE) drops from the effective and permitted sets. */
static int drop_cap_sys_nice(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	uint32_t bit = 1u << (CAP_SYS_NICE % 32);

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_SYS_NICE / 32].effective &= ~bit;
	d[CAP_SYS_NICE / 32].permitted &= ~bit;
	d[CAP_SYS_NICE / 32].inheritable &= ~bit;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * HIGH and REALTIME need CAP_SYS_NICE (as xe and panthor): a child that
 * dropped it gets -EPERM for them, and its LOW and NORMAL queues work.
 */
TEST_F(queue, priority_needs_cap_sys_nice)
{
	uint32_t id;
	int status;
	pid_t pid;

	/* root has it */
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_REALTIME, &id));
	ASSERT_EQ(0, _test_queue_destroy(self->fd, id));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (drop_cap_sys_nice())
			_exit(10);
		fd = vgpu_open_render();
		if (fd < 0)
			_exit(11);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_HIGH, &id) != -EPERM)
			_exit(12);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_REALTIME, &id) != -EPERM)
			_exit(13);
		/* the file opened with the capability does not carry it */
		if (_test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &id) != -EPERM)
			_exit(14);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_LOW, &id))
			_exit(15);
		if (_test_queue_create(fd, VGPU_QUEUE_PRIORITY_NORMAL, &id))
			_exit(16);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * Each CTA spins @n iterations, then takes a ticket from the counter at
 * @ctr (a BO no job lists: unsynchronised) and stores it at out[ctaid].
 */
static const char ticket_src[] =
	".kernel ticket\n.param ptr out\n.param ptr ctr\n.param u32 n\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R10, [ctr] ;\n  LDP.32 R8, [n] ;\n"
	"  MOV R6, 0x0 ;\n"
	"l:\n  IADD R6, R6, 0x1 ;\n  ISETP.LT.U32 P0, R6, R8 ;\n  @P0 BRA l ;\n"
	"  MOV R4, 0x1 ;\n  ATOMG.ADD.U32 R5, [R10+0x0], R4 ;\n"
	"  S2R R1, SR_CTAID.X ;\n  SHL R1, R1, 0x2 ;\n  IADD R2, R2, R1 ;\n"
	"  STG.32 [R2], R5 ;\n  EXIT ;\n";

#define TICKET_CTAS 64u
#define TICKET_SPIN 1000000u

/* A ticket job of @grid one-thread CTAs on queue @qid, counter at @ctr_va. */
static void ticket_submit(struct __test_metadata *_metadata, int fd,
			  struct vgpu_prog *p, uint32_t *h, uint32_t qid,
			  uint64_t ctr_va, uint32_t grid, uint64_t *job)
{
	struct drm_vgpu_submit s;

	((uint64_t *)p->param)[0] = p->data_va;
	((uint64_t *)p->param)[1] = ctr_va;
	((uint32_t *)p->param)[4] = TICKET_SPIN;
	vgpu_prog_submit_args(p, &s, h, grid, 1);
	s.queue = qid;
	ASSERT_EQ(0, _test_submit(fd, &s));
	*job = s.job_id;
}

/*
 * A high-priority job submitted behind a long low-priority kernel (many
 * CTAs, every SM busy) starts, and ends, before that kernel ends: the
 * device hands the next free SM to the higher priority.
 */
TEST_F(queue, high_priority_overtakes_low)
{
	struct vgpu_prog lp, hp;
	uint32_t lh[3], hh[3], qlow, qhigh, gc_h;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	volatile uint32_t *ctr;
	uint64_t ljob, ctr_va;

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qlow));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &qhigh));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &lp, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &hp, vgpu_store_src, 4096));
	ticket_submit(_metadata, self->fd, &lp, lh, qlow, ctr_va, TICKET_CTAS, &ljob);
	wait_running(_metadata, self->fd, ljob);
	while (ctr[0] == 0)	/* its CTAs are on the SMs */
		usleep(100);

	*(uint64_t *)hp.param = hp.data_va;
	*(uint32_t *)((char *)hp.param + 8) = 5;
	vgpu_prog_submit_args(&hp, &s, hh, 1, 32);
	s.queue = qhigh;
	test_submit(&s);
	test_wait_bo(hp.data_h);
	ASSERT_EQ(0, check_store(hp.data, 32, 5));
	/*
	 * The low kernel is still at it, not even half done: the high job
	 * took the first SM that came free, where a first-come device would
	 * have handed out all the low kernel's CTAs first (3/4 of them done).
	 */
	EXPECT_LT(ctr[0], TICKET_CTAS / 2);
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, j.state);
	test_wait_bo(lp.data_h);
	EXPECT_EQ(TICKET_CTAS, ctr[0]);
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	vgpu_prog_unmap(&lp);
	vgpu_prog_unmap(&hp);
}

/*
 * Each CTA writes 0x1234 to out[ctaid * 4], waits until *flag != 0, then
 * writes out[ctaid * 4 + 1] = 0x1234 + *flag.
 */
static const char hold_src[] =
	".kernel hold\n.param ptr out\n.param ptr flag\n.shared pad, 256\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R4, [flag] ;\n"
	"  S2R R0, SR_CTAID.X ;\n  SHL R1, R0, 0x4 ;\n  IADD R2, R2, R1 ;\n"
	"  MOV R6, 0x1234 ;\n  STG.32 [R2], R6 ;\n"
	"wait:\n  LDG.32 R7, [R4] ;\n  ISETP.EQ.U32 P0, R7, 0x0 ;\n  @P0 BRA wait ;\n"
	"  IADD R8, R6, R7 ;\n  STG.32 [R2+0x4], R8 ;\n  EXIT ;\n";

/* The device's SMs, when it can preempt and debugfs says; else 0. */
static uint32_t preempt_sms(int fd)
{
	uint64_t feat;
	char dir[64];
	int n;

	if (_test_get_param(fd, VGPU_PARAM_FEATURES, &feat) ||
	    !(feat & VGPU_FEAT_PREEMPT) || vgpu_debugfs_dir(dir, sizeof(dir)))
		return 0;
	n = sm_threads(dir);
	return n > 0 ? n : 0;
}

/*
 * Mid-kernel preemption (uapi "Preemption"): a LOW launch whose CTAs hold
 * every SM (one per SM thread, each waiting for a flag) would keep a HIGH
 * job off the device for good; the device saves the LOW CTAs into the
 * queue's context-save buffer, the HIGH job completes while the LOW one is
 * still RUNNING, and the LOW CTAs resume from their saved state and
 * finish with what they computed before and after.
 */
TEST_F(queue, high_priority_preempts_running_ctas)
{
	uint32_t lh[3], hh[3], qlow, qhigh, gc_h, n, i;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog lp, hp;
	volatile uint32_t *flag, *out;
	uint64_t ljob, flag_va;

	n = preempt_sms(self->fd);
	if (n < 1)
		SKIP(return, "no preemption, or no debugfs queues");
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qlow));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &qhigh));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &flag_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&flag));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &lp, hold_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &hp, vgpu_store_src, 4096));
	out = lp.data;
	((uint64_t *)lp.param)[0] = lp.data_va;
	((uint64_t *)lp.param)[1] = flag_va;
	vgpu_prog_submit_args(&lp, &s, lh, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qlow;
	test_submit(&s);
	ljob = s.job_id;
	for (i = 0; i < n; i++)	/* every SM holds one of its CTAs */
		while (out[4 * i] != 0x1234)
			usleep(1000);

	*(uint64_t *)hp.param = hp.data_va;
	*(uint32_t *)((char *)hp.param + 8) = 9;
	vgpu_prog_submit_args(&hp, &s, hh, 2, 64);
	s.queue = qhigh;
	test_submit(&s);
	test_wait_bo(hp.data_h);
	ASSERT_EQ(0, check_store(hp.data, 128, 9));
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, j.state);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, out[4 * i + 1]);

	*flag = 5;
	test_wait_bo(lp.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, ljob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0x1234, out[4 * i]);
		EXPECT_EQ(0x1234 + 5, out[4 * i + 1]);
	}
	vgpu_prog_unmap(&lp);
	vgpu_prog_unmap(&hp);
}

/*
 * Timeslices (uapi "Timeslices"): a NORMAL launch whose CTAs hold every
 * SM until a flag is set would keep a second NORMAL launch off the device
 * for good; after a timeslice the device preempts it, so every CTA of the
 * second launch starts while the first one is still RUNNING, and both end
 * with the right values once the flag is set.
 */
TEST_F(queue, equal_priorities_timeslice)
{
	uint32_t ah[3], bh[3], qa, qb, gc_h, n, i;
	struct drm_vgpu_get_job ja, jb;
	struct drm_vgpu_submit s;
	struct vgpu_prog a, b;
	volatile uint32_t *flag, *aout, *bout;
	uint64_t joba, jobb, flag_va;

	n = preempt_sms(self->fd);
	if (n < 1)
		SKIP(return, "no preemption, or no debugfs queues");
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qb));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &flag_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&flag));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &a, hold_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &b, hold_src, 4096));
	aout = a.data;
	bout = b.data;
	((uint64_t *)a.param)[0] = a.data_va;
	((uint64_t *)a.param)[1] = flag_va;
	((uint64_t *)b.param)[0] = b.data_va;
	((uint64_t *)b.param)[1] = flag_va;
	vgpu_prog_submit_args(&a, &s, ah, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qa;
	test_submit(&s);
	joba = s.job_id;
	for (i = 0; i < n; i++)	/* every SM holds one of its CTAs */
		while (aout[4 * i] != 0x1234)
			usleep(1000);
	vgpu_prog_submit_args(&b, &s, bh, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qb;
	test_submit(&s);
	jobb = s.job_id;
	for (i = 0; i < n; i++)
		while (bout[4 * i] != 0x1234)
			usleep(1000);
	ASSERT_EQ(0, _test_get_job(self->fd, joba, &ja, NULL));
	ASSERT_EQ(0, _test_get_job(self->fd, jobb, &jb, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, ja.state);
	EXPECT_EQ(VGPU_JOB_RUNNING, jb.state);
	EXPECT_NE(ja.hw_queue, jb.hw_queue);
	*flag = 3;
	test_wait_bo(a.data_h);
	test_wait_bo(b.data_h);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(0x1234 + 3, aout[4 * i + 1]);
		EXPECT_EQ(0x1234 + 3, bout[4 * i + 1]);
	}
	vgpu_prog_unmap(&a);
	vgpu_prog_unmap(&b);
}

/*
 * Two queues of equal priority with a long kernel each share the device:
 * their CTAs' tickets interleave (round robin between the launches),
 * where serving one launch after the other would give the first all of
 * the early tickets.
 */
TEST_F(queue, equal_priorities_share)
{
	struct vgpu_prog a, b;
	uint32_t ah[3], bh[3], qa, qb, gc_h, i, early_b = 0, early_a = 0;
	struct drm_vgpu_get_job ja, jb;
	volatile uint32_t *ctr;
	uint64_t joba, jobb, ctr_va;
	const uint32_t *ta, *tb;

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qa));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_NORMAL, &qb));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, (void **)&ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &a, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &b, ticket_src, 4096));
	ticket_submit(_metadata, self->fd, &a, ah, qa, ctr_va, TICKET_CTAS, &joba);
	ticket_submit(_metadata, self->fd, &b, bh, qb, ctr_va, TICKET_CTAS, &jobb);
	test_wait_bo(a.data_h);
	test_wait_bo(b.data_h);
	ASSERT_EQ(2 * TICKET_CTAS, ctr[0]);
	ASSERT_EQ(0, _test_get_job(self->fd, joba, &ja, NULL));
	ASSERT_EQ(0, _test_get_job(self->fd, jobb, &jb, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, ja.state);
	ASSERT_EQ(VGPU_JOB_DONE, jb.state);
	/* two hardware queues of the normal priority, one each */
	EXPECT_NE(ja.hw_queue, jb.hw_queue);
	ta = a.data;
	tb = b.data;
	for (i = 0; i < TICKET_CTAS; i++) {
		early_a += ta[i] < TICKET_CTAS;
		early_b += tb[i] < TICKET_CTAS;
	}
	/* of the first 64 tickets each got a fair share (~32) */
	EXPECT_LE(16, early_a);
	EXPECT_LE(16, early_b) {
		TH_LOG("b got %u of the first %u tickets", early_b, TICKET_CTAS);
	}
	vgpu_prog_unmap(&a);
	vgpu_prog_unmap(&b);
}

/* Until job @id has left QUEUED (it is on the device, or done). */
static void wait_started(struct __test_metadata *_metadata, int fd, uint64_t id)
{
	struct drm_vgpu_get_job j;

	for (;;) {
		ASSERT_EQ(0, _test_get_job(fd, id, &j, NULL));
		if (j.state != VGPU_JOB_QUEUED)
			return;
		usleep(1000);
	}
}

/*
 * This device's vgpu interrupts in /proc/interrupts: @count[v] the
 * interrupts of MSI-X vector v so far, on every CPU.  Returns the number
 * of vectors listed.
 */
static int vgpu_vector_counts(const char *addr, unsigned long long *count, int max)
{
	char tag[300], *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f = fopen("/proc/interrupts", "r");

	if (!f)
		return -errno;
	snprintf(tag, sizeof(tag), "PCI-MSIX-%s", addr);
	while (getline(&line, &cap, f) > 0) {
		unsigned long long sum = 0;
		char *p, *end, *at = strstr(line, tag);
		long v;

		if (!at || !strstr(at, "vgpu"))
			continue;
		p = strchr(line, ':');
		if (!p)
			continue;
		for (p++; p < at;) {	/* the per-CPU columns */
			unsigned long long c = strtoull(p, &end, 10);

			if (end == p)
				break;
			sum += c;
			p = end;
		}
		v = strtol(at + strlen(tag), &end, 10);
		if (strncmp(end, "-edge", 5) || v < 0 || v >= max)
			continue;
		count[v] = sum;
		n++;
	}
	free(line);
	fclose(f);
	return n;
}

/*
 * Completion vectors (kernel/vgpu_irq.c): a job's interrupt arrives on
 * the MSI-X vector aimed at the CPU its SUBMIT ran on, so that the CPU
 * where the submitter waits signals its fence.  Pinned to each CPU in
 * turn, 20 null jobs each waited for: that CPU's vector (2 + its index
 * modulo the vectors beyond 0 and 1) counts 20 more interrupts and the
 * device's other vectors none.
 */
TEST_F(queue, completion_irq_on_the_submitters_cpu)
{
	enum { JOBS = 20, MAXV = 64 };
	unsigned long long before[MAXV], after[MAXV];
	struct drm_vgpu_submit s;
	struct drm_vgpu_sync out = { 0 };
	struct vgpu_prog p;
	cpu_set_t saved, one;
	char addr[256], possible[32] = "";
	uint32_t h[3];
	int ncpu, nvec, nper, cpu, v, i;
	FILE *f;

	ASSERT_EQ(0, vgpu_pci_addr(addr, sizeof(addr)));
	memset(before, 0, sizeof(before));
	nvec = vgpu_vector_counts(addr, before, MAXV);
	if (nvec <= 2)
		SKIP(return, "no completion vector per CPU (%d vectors)", nvec);
	nper = nvec - 2;
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	f = fopen("/sys/devices/system/cpu/possible", "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(possible, sizeof(possible), f));
	fclose(f);
	/* the driver counts possible CPUs in order: here CPU i is the ith */
	if (strncmp(possible, "0", 1) || (ncpu > 1 && possible[1] != '-'))
		SKIP(return, "possible CPUs %s", possible);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &p, "  EXIT ;\n", 4096));
	vgpu_prog_submit_args(&p, &s, h, 1, 1);
	s.bo_handle_count = 0;
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &out.handle));
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	for (cpu = 0; cpu < ncpu && cpu < 8; cpu++) {
		int want = 2 + cpu % nper;

		if (!CPU_ISSET(cpu, &saved))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
		memset(before, 0, sizeof(before));
		ASSERT_EQ(nvec, vgpu_vector_counts(addr, before, MAXV));
		for (i = 0; i < JOBS; i++) {
			ASSERT_EQ(0, _test_submit(self->fd, &s));
			ASSERT_EQ(0, _test_syncobj_wait(self->fd, out.handle, 0,
							vgpu_wait_ns(10)));
		}
		memset(after, 0, sizeof(after));
		ASSERT_EQ(nvec, vgpu_vector_counts(addr, after, MAXV));
		for (v = 0; v < nvec; v++)
			EXPECT_EQ(v == want ? JOBS : 0, after[v] - before[v]) {
				TH_LOG("CPU %d: vector %d (the CPU's: %d)", cpu, v, want);
			}
	}
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(saved), &saved));
	vgpu_prog_unmap(&p);
}

static const char sem_deps_param[] = "/sys/module/vgpu/parameters/sem_deps";

/*
 * Destroying a queue: its id is gone at once (SUBMIT, GET_STATE: -ENOENT);
 * its job on the device runs to completion; its job still waiting for a
 * dependency (a fence of another queue, waited on by the CPU: sem_deps=0)
 * never runs: -ESRCH, drm_sched's killed entity.
 */
TEST_F(queue, destroy_with_jobs)
{
	struct vgpu_prog lp, rp, dp;
	uint32_t lh[3], rh[3], dh[3], qid, gc_h;
	struct drm_vgpu_sync sync = { 0 };
	struct drm_vgpu_queue_get_state st;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	uint64_t ctr_va, rjob, djob;
	char old[8] = "";
	void *ctr;

	if (read_file(sem_deps_param, old, sizeof(old)) <= 0)
		SKIP(return, "no sem_deps parameter");
	ASSERT_EQ(0, sysfs_write(sem_deps_param, "0"));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qid));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, &ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &lp, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &rp, vgpu_store_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &dp, vgpu_store_src, 4096));

	/* L: a long job on the default queue, signalling the syncobj */
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &sync.handle));
	((uint64_t *)lp.param)[0] = lp.data_va;
	((uint64_t *)lp.param)[1] = ctr_va;
	((uint32_t *)lp.param)[4] = TICKET_SPIN;
	vgpu_prog_submit_args(&lp, &s, lh, TICKET_CTAS, 1);
	s.out_syncs = (uintptr_t)&sync;
	s.out_sync_count = 1;
	test_submit(&s);

	/* R: on the queue, no dependency: it reaches the device */
	*(uint64_t *)rp.param = rp.data_va;
	*(uint32_t *)((char *)rp.param + 8) = 3;
	vgpu_prog_submit_args(&rp, &s, rh, 1, 32);
	s.queue = qid;
	test_submit(&s);
	rjob = s.job_id;
	wait_started(_metadata, self->fd, rjob);

	/* D: on the queue, waiting for L */
	*(uint64_t *)dp.param = dp.data_va;
	*(uint32_t *)((char *)dp.param + 8) = 4;
	vgpu_prog_submit_args(&dp, &s, dh, 1, 32);
	s.queue = qid;
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	test_submit(&s);
	djob = s.job_id;
	ASSERT_EQ(0, _test_get_job(self->fd, djob, &j, NULL));
	ASSERT_EQ(VGPU_JOB_QUEUED, j.state);

	ASSERT_EQ(0, _test_queue_destroy(self->fd, qid));
	ASSERT_EQ(-ENOENT, _test_queue_state(self->fd, qid, &st));
	s.in_sync_count = 0;
	test_err_submit(ENOENT, &s);

	test_wait_bo(rp.data_h);
	ASSERT_EQ(0, check_store(rp.data, 32, 3));
	ASSERT_EQ(0, _test_get_job(self->fd, rjob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	test_wait_bo(dp.data_h);
	ASSERT_EQ(0, _test_get_job(self->fd, djob, &j, NULL));
	EXPECT_EQ(VGPU_JOB_FAILED, j.state);
	EXPECT_EQ(ESRCH, j.error);
	EXPECT_EQ(0, ((uint32_t *)dp.data)[1]);	/* it never ran */
	test_wait_bo(lp.data_h);
	sysfs_write(sem_deps_param, old);
	vgpu_prog_unmap(&lp);
	vgpu_prog_unmap(&rp);
	vgpu_prog_unmap(&dp);
}

/*
 * Same-device dependencies (uapi/vgpu_drm.h "Queues"): job B on the
 * default queue waits (through a syncobj only) for a long job A on a
 * low-priority queue and copies what A wrote.  With device-side waits
 * (sem_deps=1) B goes onto the device at once, behind a SEM_ACQUIRE, and
 * is RUNNING while A still runs; with CPU waits (sem_deps=0) B stays
 * QUEUED until A is done.  Either way B sees all of A's results.
 */
FIXTURE(semdep) {
	int fd;
	char old[8];
};

FIXTURE_VARIANT(semdep) {
	bool device;
};

FIXTURE_VARIANT_ADD(semdep, device_waits) {
	.device = true,
};

FIXTURE_VARIANT_ADD(semdep, cpu_waits) {
	.device = false,
};

FIXTURE_SETUP(semdep)
{
	uint64_t feat;

	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, _test_get_param(self->fd, VGPU_PARAM_FEATURES, &feat));
	ASSERT_NE(0, feat & VGPU_FEAT_SEMAPHORES);
	ASSERT_LT(0, read_file(sem_deps_param, self->old, sizeof(self->old)));
	ASSERT_EQ(0, sysfs_write(sem_deps_param, variant->device ? "1" : "0"));
}

FIXTURE_TEARDOWN(semdep)
{
	if (self->old[0])
		sysfs_write(sem_deps_param, self->old);
	close(self->fd);
}

TEST_F(semdep, waits_for_other_queue)
{
	struct vgpu_prog ap, bp;
	uint32_t ah[3], bh[3], qa, gc_h, i, seen = 0;
	struct drm_vgpu_sync sync = { 0 };
	struct drm_vgpu_get_job ja, jb;
	struct drm_vgpu_submit s;
	const uint32_t *a, *b;
	uint64_t ajob, ctr_va;
	void *ctr;

	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_LOW, &qa));
	ASSERT_EQ(0, _test_bo_create(self->fd, 4096, 0, &gc_h, &ctr_va));
	ASSERT_EQ(0, _test_bo_map(self->fd, gc_h, 4096, &ctr));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &ap, ticket_src, 4096));
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &bp, copy_src, 4096));
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &sync.handle));

	/* A: 16 CTAs, each writes its ticket; signals the syncobj */
	((uint64_t *)ap.param)[0] = ap.data_va;
	((uint64_t *)ap.param)[1] = ctr_va;
	((uint32_t *)ap.param)[4] = TICKET_SPIN;
	vgpu_prog_submit_args(&ap, &s, ah, 16, 1);
	s.queue = qa;
	s.out_syncs = (uintptr_t)&sync;
	s.out_sync_count = 1;
	test_submit(&s);
	ajob = s.job_id;
	wait_running(_metadata, self->fd, ajob);

	/* B: copies A's 16 words; only the syncobj orders it after A */
	((uint64_t *)bp.param)[0] = ap.data_va;
	((uint64_t *)bp.param)[1] = bp.data_va;
	memset(bp.data, 0xff, 64);
	vgpu_prog_submit_args(&bp, &s, bh, 1, 16);
	s.bo_handle_count = 2;	/* code and parameters: not A's data */
	s.in_syncs = (uintptr_t)&sync;
	s.in_sync_count = 1;
	test_submit(&s);

	if (variant->device) {
		wait_running(_metadata, self->fd, s.job_id);
	} else {
		usleep(20000);
		ASSERT_EQ(0, _test_get_job(self->fd, s.job_id, &jb, NULL));
		EXPECT_EQ(VGPU_JOB_QUEUED, jb.state);
	}
	ASSERT_EQ(0, _test_get_job(self->fd, ajob, &ja, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, ja.state) {
		TH_LOG("A ended before B's state was seen: make A longer");
	}

	ASSERT_EQ(0, _test_syncobj_wait(self->fd, sync.handle, 0, vgpu_wait_ns(30)));
	/* B lists no data BO: its end is its GET_JOB state */
	wait_ended(_metadata, self->fd, s.job_id, &jb);
	EXPECT_EQ(VGPU_JOB_DONE, jb.state);
	a = ap.data;
	b = bp.data;
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(a[i], b[i]);
		if (a[i] < 16)
			seen |= 1u << a[i];
	}
	EXPECT_EQ(0xffffu, seen);	/* A's tickets: 0..15, all of them */
	vgpu_prog_unmap(&ap);
	vgpu_prog_unmap(&bp);
}

/* Last in the suite: these take the device away and bring it back. */
FIXTURE(unplug) {
	int unused;
};

FIXTURE_SETUP(unplug)
{
}

FIXTURE_TEARDOWN(unplug)
{
}

TEST_F(unplug, module_unload_busy)
{
	int fd = vgpu_open_render();

	ASSERT_LE(0, fd);
	/* an open file holds the module */
	ASSERT_EQ(-EWOULDBLOCK, module_unload());
	close(fd);
}

/*
 * Unbind the PCI device while two jobs are on it and the file is open:
 * both fences signal -ENODEV, ioctls on the file give -ENODEV, the CPU
 * mapping stays readable; after close and rebind the device works and
 * gets the same render minor back (the old drm_device was freed).
 */
TEST_F(unplug, unbind_rebind_jobs_in_flight)
{
	char addr[256], path[256];
	struct vgpu_prog sp;
	int fd, fd2, sf[2], minor, minor2, i;

	ASSERT_EQ(0, vgpu_pci_addr(addr, sizeof(addr)));
	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	jobs_in_flight(_metadata, fd, sf, &sp);

	ASSERT_EQ(0, vgpu_pci_driver_write("unbind", addr));
	ASSERT_EQ(-ENODEV, sync_file_status(sf[0]));
	ASSERT_EQ(-ENODEV, sync_file_status(sf[1]));
	ASSERT_EQ(-ENODEV, _test_get_param(fd, VGPU_PARAM_QUEUES, NULL));
	for (i = 0; i < 256; i++)
		ASSERT_EQ(0, ((uint32_t *)sp.data)[i]);
	vgpu_prog_unmap(&sp);
	close(sf[0]);
	close(sf[1]);
	close(fd);

	ASSERT_EQ(-ENODEV, vgpu_pci_addr(path, sizeof(path)));
	ASSERT_EQ(0, vgpu_pci_driver_write("bind", addr));
	fd2 = vgpu_open_render_minor(&minor2);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(minor, minor2);
	device_works(_metadata, fd2);
	close(fd2);
}

/*
 * Unload the module while jobs are on the device (their file closed, a
 * sync_file of each fence kept): the fences signal, the module goes, the
 * sync_files outlive it and close cleanly; loaded again, the device works
 * under the same render minor.  (The -ENODEV error of such fences is
 * checked by unbind_rebind_jobs_in_flight: the timeline name the info
 * ioctl prints is gone with the module.)
 */
TEST_F(unplug, module_reload_jobs_in_flight)
{
	char ko[256], params[64];
	struct vgpu_prog sp;
	int fd, sf[2], minor, minor2;

	if (module_path(ko, sizeof(ko)))
		SKIP(return, "no %s to load again", ko);
	module_params(params, sizeof(params));
	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	jobs_in_flight(_metadata, fd, sf, &sp);
	/* closing waits for nothing: both jobs are on the device already */
	vgpu_prog_unmap(&sp);
	close(fd);

	ASSERT_EQ(0, module_unload());
	ASSERT_EQ(0, sync_file_wait(sf[0]));
	ASSERT_EQ(0, sync_file_wait(sf[1]));
	ASSERT_EQ(-ENOENT, access("/sys/module/vgpu", F_OK) ? -errno : 0);
	close(sf[0]);
	close(sf[1]);

	ASSERT_EQ(0, module_load(ko, params));
	fd = vgpu_open_render_minor(&minor2);
	ASSERT_LE(0, fd);
	ASSERT_EQ(minor, minor2);
	device_works(_metadata, fd);
	close(fd);
}

/*
 * TEST_HARNESS_MAIN, with every test's timeout (the harness's 30 s, or a
 * TEST_F_TIMEOUT's) multiplied by VGPU_TIMEOUT_SCALE: the harness kills a
 * test that runs longer, and on the debug kernel everything is slower.
 */
VGPU_TEST_HARNESS_MAIN
