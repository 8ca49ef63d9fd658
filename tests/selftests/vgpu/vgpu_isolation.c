// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_isolation: an attacker process tries to read another process's
 * memory through every path the driver offers, and always gets a fault or
 * an errno, never the data.  The victim (a child process with a file of
 * its own) fills its BOs, and in one test its shared memory, with SECRET;
 * the tests look for that value in whatever the attacker got back.
 *
 *   guessed GPU VAs         a kernel of the attacker's reads the victim's
 *                           VA: an MMU fault at exactly that address
 *   the same VA, own BO     the attacker's own memory there: zeros
 *   handles                 the victim's handle numbers in the attacker's
 *                           file: -ENOENT from every ioctl; GEM names:
 *                           flink and open are refused on a render node
 *   dma-buf fds             an unprivileged attacker cannot take the
 *                           victim's exported fd (/proc/PID/fd, pidfd_getfd)
 *                           and no fd of its own imports
 *   leftover shared memory  a kernel reading shared memory it never wrote,
 *                           after the victim's kernel on the same SMs, and
 *                           while the victim's CTAs are preempted into the
 *                           context-save buffer: never SECRET
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define SECRET 0x5ec12e7au

struct victim_info {
	uint64_t va;		/* of the secret BO, in the victim's file */
	uint32_t handle;
	int dmabuf_fd;		/* its export, a number in the victim */
	pid_t pid;
};

/*
 * The victim: a 1 MiB BO first (so the secret one lies past the
 * attacker's own BOs in VA), then a 64 KiB BO full of SECRET, exported as
 * a dma-buf; reports where, then waits to be killed.
 */
static int victim(int wfd)
{
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	struct victim_info vi = { .pid = getpid() };
	uint32_t pad, *p;
	int fd = vgpu_open_render(), i;

	if (fd < 0 || _test_bo_create(fd, 1 << 20, 0, &pad, NULL) ||
	    _test_bo_create(fd, 65536, 0, &vi.handle, &vi.va) ||
	    _test_bo_map(fd, vi.handle, 65536, (void **)&p))
		return 1;
	for (i = 0; i < 65536 / 4; i++)
		p[i] = SECRET;
	exp.handle = vi.handle;
	if (vgpu_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp))
		return 2;
	vi.dmabuf_fd = exp.fd;
	if (write(wfd, &vi, sizeof(vi)) != sizeof(vi))
		return 3;
	for (;;)
		pause();
}

FIXTURE(iso) {
	int fd;
	pid_t victim;
	struct victim_info vi;
};

FIXTURE_SETUP(iso)
{
	int p[2];

	ASSERT_EQ(0, pipe(p));
	self->victim = fork();
	ASSERT_LE(0, self->victim);
	if (!self->victim)
		_exit(victim(p[1]));
	close(p[1]);
	ASSERT_EQ(sizeof(self->vi), read(p[0], &self->vi, sizeof(self->vi)));
	close(p[0]);
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(iso)
{
	int st;

	if (self->fd > 0)
		close(self->fd);
	if (self->victim > 0) {
		kill(self->victim, SIGKILL);
		waitpid(self->victim, &st, 0);
	}
}

/* out[i] = *(src + 4 * i) for i < 32: one warp reads 128 bytes at src. */
static const char read_src[] =
	".kernel rd\n.param ptr out\n.param ptr src\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R4, [src] ;\n  S2R R0, SR_TID.X ;\n"
	"  SHL R1, R0, 0x2 ;\n  IADD R4, R4, R1 ;\n  IADD R2, R2, R1 ;\n"
	"  LDG.32 R6, [R4] ;\n  STG.32 [R2], R6 ;\n  EXIT ;\n";

static int no_secret(const uint32_t *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i] == SECRET)
			return -1;
	return 0;
}

/* The attacker's kernel reads @va in its own address space. */
static void read_at(struct __test_metadata *_metadata, int fd, uint64_t va,
		    struct vgpu_prog *p, struct drm_vgpu_get_job *j,
		    struct vgpu_exception_record *exc)
{
	struct drm_vgpu_submit s;
	uint32_t h[3];

	ASSERT_EQ(0, vgpu_prog_load(fd, p, read_src, 4096));
	((uint64_t *)p->param)[0] = p->data_va;
	((uint64_t *)p->param)[1] = va;
	vgpu_prog_submit_args(p, &s, h, 1, 32);
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p->data_h, vgpu_wait_ns(30)));
	ASSERT_EQ(0, _test_get_job(fd, s.job_id, j, exc));
}

TEST_F(iso, guessed_va_faults)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	struct vgpu_prog p;

	read_at(_metadata, self->fd, self->vi.va, &p, &j, &exc);
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EFAULT, j.error);
	ASSERT_EQ(VGPU_EXC_GLOBAL_FAULT, exc.code);
	ASSERT_EQ(self->vi.va, exc.addr);
	ASSERT_EQ(0, no_secret(p.data, 1024));
	vgpu_prog_unmap(&p);
}

TEST_F(iso, same_va_is_own_memory)
{
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	struct vgpu_prog p;
	uint64_t va = 0;
	uint32_t h;
	int i;

	/* BOs of the attacker's own until one covers the victim's VA */
	for (i = 0; i < 64 && va + (1 << 20) <= self->vi.va; i++)
		test_bo_create(1 << 20, VGPU_BO_POPULATE, &h, &va);
	ASSERT_LE(va, self->vi.va);
	ASSERT_GT(va + (1 << 20), self->vi.va);
	read_at(_metadata, self->fd, self->vi.va, &p, &j, &exc);
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	for (i = 0; i < 32; i++)
		ASSERT_EQ(0, ((uint32_t *)p.data)[i]);
	vgpu_prog_unmap(&p);
}

/* Handles are per file: the victim's numbers mean nothing here. */
TEST_F(iso, foreign_handles_and_names)
{
	struct drm_vgpu_bo_mmap_offset mo = { 0 };
	struct drm_vgpu_bo_info bi = { 0 };
	struct drm_prime_handle exp = { .flags = DRM_CLOEXEC };
	struct drm_gem_flink fl = { 0 };
	struct drm_gem_open op = { 0 };
	struct drm_vgpu_submit s = { 0 };
	uint32_t h;

	for (h = 1; h <= 64; h++) {
		bi.handle = mo.handle = exp.handle = fl.handle = h;
		ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_BO_INFO, &bi));
		ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &mo));
		ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
		/* GEM names are not for render nodes: no flink, no open */
		ASSERT_EQ(-EACCES, vgpu_ioctl(self->fd, DRM_IOCTL_GEM_FLINK, &fl));
		op.name = h;
		ASSERT_EQ(-EACCES, vgpu_ioctl(self->fd, DRM_IOCTL_GEM_OPEN, &op));
	}
	/* a SUBMIT naming the victim's handle */
	h = self->vi.handle;
	s.launch.code_va = 0x100000;
	s.launch.code_size = 16;
	s.launch.grid[0] = s.launch.grid[1] = s.launch.grid[2] = 1;
	s.launch.block[0] = s.launch.block[1] = s.launch.block[2] = 1;
	s.bo_handles = (uintptr_t)&h;
	s.bo_handle_count = 1;
	ASSERT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_SUBMIT, &s));
}

/*
 * The victim's dma-buf fd, for an attacker that was not given it: not
 * through /proc/PID/fd, not with pidfd_getfd(); none of its own fds is a
 * dma-buf to import.  (Unprivileged: root may ptrace anyone.)
 */
TEST_F(iso, dmabuf_fd_not_given)
{
	char node[32], path[64];
	struct stat st;
	int minor, fd, status;
	pid_t pid;

	fd = vgpu_open_render_minor(&minor);
	ASSERT_LE(0, fd);
	close(fd);
	snprintf(node, sizeof(node), "/dev/dri/renderD%d", minor);
	ASSERT_EQ(0, stat(node, &st));
	/* render nodes are for everyone on a desktop; here only for the test */
	ASSERT_EQ(0, chmod(node, 0666));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct drm_prime_handle imp = { 0 };
		int dfd, pfd, afd, n;

		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", self->vi.pid,
			 self->vi.dmabuf_fd);
		dfd = open(path, O_RDWR);
		if (dfd >= 0 || errno != EACCES)
			_exit(11);
		pfd = syscall(SYS_pidfd_open, self->vi.pid, 0);
		if (pfd >= 0 && syscall(SYS_pidfd_getfd, pfd, self->vi.dmabuf_fd, 0) >= 0)
			_exit(12);
		afd = open(node, O_RDWR | O_CLOEXEC);
		if (afd < 0)
			_exit(13);
		for (n = 0; n < 64; n++) {
			imp.fd = n;
			if (!ioctl(afd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp))
				_exit(14);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	chmod(node, st.st_mode & 07777);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/* ---- shared memory left over on an SM ---- */

#define SMEM 16384

/*
 * The victim's kernel: each CTA (32 threads) fills its 16 KiB of shared
 * memory with SECRET, marks out[cta] = 1, then waits until *flag != 0.
 */
static const char fill_src[] =
	".kernel fill\n.param ptr out\n.param ptr flag\n.shared buf, 16384\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R4, [flag] ;\n  S2R R0, SR_TID.X ;\n"
	"  MOV R6, 0x5ec12e7a ;\n  SHL R1, R0, 0x2 ;\n  MOV R7, 0x0 ;\n"
	"f:\n  STS.32 [R1], R6 ;\n  IADD R1, R1, 0x80 ;\n  IADD R7, R7, 0x1 ;\n"
	"  ISETP.LT.U32 P0, R7, 0x80 ;\n  @P0 BRA f ;\n"
	"  S2R R8, SR_CTAID.X ;\n  SHL R9, R8, 0x2 ;\n  IADD R2, R2, R9 ;\n"
	"  MOV R10, 0x1 ;\n  STG.32 [R2], R10 ;\n"
	"w:\n  LDG.32 R11, [R4] ;\n  ISETP.EQ.U32 P0, R11, 0x0 ;\n  @P0 BRA w ;\n"
	"  EXIT ;\n";

/* The attacker's: each CTA copies its 16 KiB of shared memory, unwritten, out. */
static const char peek_src[] =
	".kernel peek\n.param ptr out\n.shared buf, 16384\n"
	"  LDP.64 R2, [out] ;\n  S2R R0, SR_TID.X ;\n  SHL R1, R0, 0x2 ;\n"
	"  S2R R8, SR_CTAID.X ;\n  SHL R9, R8, 0xe ;\n  IADD R2, R2, R9 ;\n"
	"  IADD R2, R2, R1 ;\n  MOV R7, 0x0 ;\n"
	"p:\n  LDS.32 R12, [R1] ;\n  STG.32 [R2], R12 ;\n  IADD R1, R1, 0x80 ;\n"
	"  IADD R2, R2, 0x80 ;\n  IADD R7, R7, 0x1 ;\n"
	"  ISETP.LT.U32 P0, R7, 0x80 ;\n  @P0 BRA p ;\n  EXIT ;\n";

/*
 * The attacker runs @ctas CTAs of peek on queue @queue (0: its default) and
 * gets their shared memory back: no SECRET in it.
 */
static void peek(struct __test_metadata *_metadata, int fd, uint32_t queue,
		 uint32_t ctas)
{
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];

	ASSERT_EQ(0, vgpu_prog_load(fd, &p, peek_src, (size_t)ctas * SMEM));
	*(uint64_t *)p.param = p.data_va;
	vgpu_prog_submit_args(&p, &s, h, ctas, 32);
	s.queue = queue;
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p.data_h, vgpu_wait_ns(30)));
	ASSERT_EQ(0, _test_get_job(fd, s.job_id, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, no_secret(p.data, (size_t)ctas * SMEM / 4));
	vgpu_prog_unmap(&p);
}

/* The SM threads of the device (debugfs queues), at least 1. */
static uint32_t sm_threads(void)
{
	char dir[64];
	long long n = 1;

	if (!vgpu_debugfs_dir(dir, sizeof(dir)))
		n = vgpu_queues_num(dir, "sm_threads");
	return n > 0 ? (uint32_t)n : 1;
}

/*
 * The victim's CTAs run to their end (flag already set), then the
 * attacker's, on the same SMs: what it reads of its shared memory is not
 * what the victim left there.
 */
TEST_F(iso, leftover_shared_memory_after_a_kernel)
{
	uint32_t n = sm_threads(), h[3], fh, *flag;
	struct drm_vgpu_submit s;
	struct vgpu_prog vp;
	uint64_t flag_va;
	int vfd = vgpu_open_render();

	/* (the victim's kernel, from a file of the victim's own) */
	ASSERT_LE(0, vfd);
	ASSERT_EQ(0, vgpu_prog_load(vfd, &vp, fill_src, 4096));
	ASSERT_EQ(0, _test_bo_create(vfd, 4096, VGPU_BO_POPULATE, &fh, &flag_va));
	ASSERT_EQ(0, _test_bo_map(vfd, fh, 4096, (void **)&flag));
	*flag = 1;
	((uint64_t *)vp.param)[0] = vp.data_va;
	((uint64_t *)vp.param)[1] = flag_va;
	vgpu_prog_submit_args(&vp, &s, h, 4 * n, 32);
	ASSERT_EQ(0, _test_submit(vfd, &s));
	ASSERT_EQ(0, _test_wait_bo(vfd, vp.data_h, vgpu_wait_ns(30)));
	ASSERT_EQ(1, ((uint32_t *)vp.data)[4 * n - 1]);

	peek(_metadata, self->fd, 0, 4 * n);
	vgpu_prog_unmap(&vp);
	close(vfd);
}

/*
 * The victim's CTAs hold every SM, waiting, their shared memory full of
 * SECRET, on a LOW queue; the attacker's HIGH launch preempts them (their
 * state goes to the queue's context-save buffer) and reads its own
 * shared memory on those SMs: no SECRET.  Then the victim's CTAs resume
 * and end.
 */
TEST_F(iso, leftover_shared_memory_under_preemption)
{
	uint32_t n = sm_threads(), h[3], fh, qlow, qhigh, i;
	volatile uint32_t *flag, *marks;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	struct vgpu_prog vp;
	uint64_t flag_va, feat;
	int vfd = vgpu_open_render();

	ASSERT_LE(0, vfd);
	ASSERT_EQ(0, _test_get_param(vfd, VGPU_PARAM_FEATURES, &feat));
	if (!(feat & VGPU_FEAT_PREEMPT))
		SKIP(return, "no preemption");
	ASSERT_EQ(0, _test_queue_create(vfd, VGPU_QUEUE_PRIORITY_LOW, &qlow));
	ASSERT_EQ(0, _test_queue_create(self->fd, VGPU_QUEUE_PRIORITY_HIGH, &qhigh));
	ASSERT_EQ(0, vgpu_prog_load(vfd, &vp, fill_src, 4096));
	ASSERT_EQ(0, _test_bo_create(vfd, 4096, VGPU_BO_POPULATE, &fh, &flag_va));
	ASSERT_EQ(0, _test_bo_map(vfd, fh, 4096, (void **)&flag));
	((uint64_t *)vp.param)[0] = vp.data_va;
	((uint64_t *)vp.param)[1] = flag_va;
	vgpu_prog_submit_args(&vp, &s, h, n, 32);
	s.launch.budget = ~0ull;
	s.queue = qlow;
	ASSERT_EQ(0, _test_submit(vfd, &s));
	marks = vp.data;
	for (i = 0; i < n; i++)	/* every SM holds one of its CTAs */
		while (marks[i] != 1)
			usleep(1000);

	peek(_metadata, self->fd, qhigh, 2 * n);
	ASSERT_EQ(0, _test_get_job(vfd, s.job_id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_RUNNING, j.state);

	*flag = 1;
	ASSERT_EQ(0, _test_wait_bo(vfd, vp.data_h, vgpu_wait_ns(30)));
	ASSERT_EQ(0, _test_get_job(vfd, s.job_id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	vgpu_prog_unmap(&vp);
	close(vfd);
}

VGPU_TEST_HARNESS_MAIN
