// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_multi: two vgpu devices, what a multi-GPU driver team checks
 * (run-in-guest.sh runs it once every device is bound; it skips with one):
 *
 *   explicit dependency     a job on B waits for a job on A through a
 *                           syncobj (exported from A as a sync_file,
 *                           imported on B), nothing else orders them
 *   A reset under B         A's job hangs and A resets (its queue only, or
 *                           the whole device): A's job fails -ETIMEDOUT,
 *                           B's job, waiting for it, then runs with its own
 *                           status (a dependency's error is not passed on,
 *                           docs/driver.md) and nothing hangs
 *   VM_BIND of an import    B maps A's exported BO in a VM of its own
 *                           while A's job is writing it, and reads what A
 *                           wrote once A's job is done
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"

#define PAGE 4096ull
#define VM_X_VA 0x50000000ull	/* where B's VM maps A's BO */

/* waits until *flag != 0 (unless flag is 0), then *x = 0xa11ce */
static const char gate_store_src[] =
	".kernel gate_store\n.param ptr flag\n.param ptr x\n"
	"  LDP.64 R2, [flag] ;\n  LDP.64 R4, [x] ;\n"
	"  ISETP.EQ.U32 P1, R2, 0x0 ;\n  @P1 BRA s ;\n"
	"w:\n  LDG.32 R6, [R2] ;\n  ISETP.EQ.U32 P0, R6, 0x0 ;\n  @P0 BRA w ;\n"
	"s:\n  MOV R7, 0xa11ce ;\n  STG.32 [R4], R7 ;\n  EXIT ;\n";

/* spins for ever: only a reset ends it */
static const char hang_src[] =
	".kernel hang\n.param ptr flag\n.param ptr x\nl:\n  BRA l ;\n  EXIT ;\n";

/* *dst = *src */
static const char copy_src[] =
	".kernel copy\n.param ptr src\n.param ptr dst\n"
	"  LDP.64 R2, [src] ;\n  LDP.64 R4, [dst] ;\n  LDG.32 R6, [R2] ;\n"
	"  STG.32 [R4], R6 ;\n  EXIT ;\n";

static int syncobj_to_sync_file(int fd, uint32_t h, int *out)
{
	struct drm_syncobj_handle a = {
		.handle = h, .flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	int ret = vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a);

	*out = a.fd;
	return ret;
}

static int syncobj_from_sync_file(int fd, uint32_t h, int sync_file)
{
	struct drm_syncobj_handle a = {
		.handle = h, .flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
		.fd = sync_file,
	};

	return vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &a);
}

struct pair {
	int fa, fb;			/* device A, device B */
	struct vgpu_prog pa, pb;	/* A: gate_store (or hang), B: copy */
	uint32_t x_h, flag_h, xb_h;	/* A's shared BO, A's gate; X on B */
	uint64_t x_va, flag_va, xb_va;
	uint32_t *x, *flag;
	uint32_t sa, sb_in, sb_out;	/* A's out-sync, B's in- and out-sync */
	int dmabuf;
	char saved[256], ko[256];	/* module parameters to restore */
	bool reloaded;
};

/*
 * Both devices, A's program @a_src and B's copy, X shared; @reload: 0 as
 * loaded, 1 with the short job timeout (queue reset), 2 the same with
 * whole-device resets (queue_reset=0).  Returns false (after SKIP) when
 * there is only one device or no module to reload.
 */
static bool pair_setup(struct __test_metadata *_metadata, struct pair *self,
		      const char *a_src, int reload)
{
	struct drm_prime_handle exp = { 0 }, imp = { 0 };
	struct drm_vgpu_bo_info info = { 0 };
	int ma = -1, mb = -1;

	self->fa = self->fb = self->dmabuf = -1;
	if (reload) {
		int ret = module_reload_short_timeout(self->saved, sizeof(self->saved),
						      self->ko, sizeof(self->ko));

		if (ret == -ENOENT)
			SKIP(return false, "no vgpu.ko to reload");
		if (ret) {
			TH_LOG("reloading vgpu.ko: %s", strerror(-ret));
			return false;
		}
		self->reloaded = true;
		if (reload == 2 &&
		    sysfs_write("/sys/module/vgpu/parameters/queue_reset", "0")) {
			TH_LOG("queue_reset=0: %s", strerror(errno));
			return false;
		}
	}
	self->fa = vgpu_open_render_after(-1, &ma);
	if (self->fa < 0) {
		TH_LOG("no vgpu render node");
		return false;
	}
	self->fb = vgpu_open_render_after(ma, &mb);
	if (self->fb < 0)
		SKIP(return false, "one vgpu device");

	ASSERT_EQ(0, vgpu_prog_load(self->fa, &self->pa, a_src, PAGE));
	ASSERT_EQ(0, vgpu_prog_load(self->fb, &self->pb, copy_src, PAGE));
	ASSERT_EQ(0, _test_bo_create(self->fa, PAGE, VGPU_BO_NO_EXEC, &self->x_h, &self->x_va));
	ASSERT_EQ(0, _test_bo_map(self->fa, self->x_h, PAGE, (void **)&self->x));
	ASSERT_EQ(0, _test_bo_create(self->fa, PAGE, VGPU_BO_NO_EXEC, &self->flag_h,
				     &self->flag_va));
	ASSERT_EQ(0, _test_bo_map(self->fa, self->flag_h, PAGE, (void **)&self->flag));
	self->x[0] = 0x5eed;
	/* X on device B, through a dma-buf */
	exp.handle = self->x_h;
	exp.flags = DRM_CLOEXEC | DRM_RDWR;
	ASSERT_EQ(0, vgpu_ioctl(self->fa, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp));
	self->dmabuf = exp.fd;
	imp.fd = exp.fd;
	ASSERT_EQ(0, vgpu_ioctl(self->fb, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp));
	self->xb_h = imp.handle;
	info.handle = imp.handle;
	ASSERT_EQ(0, vgpu_ioctl(self->fb, DRM_IOCTL_VGPU_BO_INFO, &info));
	self->xb_va = info.va;
	ASSERT_EQ(0, _test_syncobj_create(self->fa, &self->sa));
	ASSERT_EQ(0, _test_syncobj_create(self->fb, &self->sb_in));
	ASSERT_EQ(0, _test_syncobj_create(self->fb, &self->sb_out));
	return true;
}

static void pair_teardown(struct pair *self)
{
	if (self->pa.data)
		vgpu_prog_unmap(&self->pa);
	if (self->pb.data)
		vgpu_prog_unmap(&self->pb);
	if (self->x)
		munmap(self->x, PAGE);
	if (self->flag)
		munmap(self->flag, PAGE);
	if (self->dmabuf >= 0)
		close(self->dmabuf);
	if (self->fa >= 0)
		close(self->fa);
	if (self->fb >= 0)
		close(self->fb);
	if (self->reloaded) {
		if (module_unload_settled() || module_load(self->ko, self->saved))
			fprintf(stderr, "vgpu_multi: could not restore vgpu.ko (%s)\n",
				self->saved);
	}
}

FIXTURE(two) {
	struct pair d;
	bool ok;
};

FIXTURE_SETUP(two)
{
	self->ok = pair_setup(_metadata, &self->d, gate_store_src, 0);
	ASSERT_TRUE(self->ok || _metadata->exit_code == KSFT_SKIP);
}

FIXTURE_TEARDOWN(two)
{
	pair_teardown(&self->d);
}

FIXTURE(reset) {
	struct pair d;
	bool ok;
};

FIXTURE_VARIANT(reset) {
	int reload;
};

FIXTURE_VARIANT_ADD(reset, a_queue_reset) { .reload = 1 };
FIXTURE_VARIANT_ADD(reset, a_device_reset) { .reload = 2 };

FIXTURE_SETUP(reset)
{
	self->ok = pair_setup(_metadata, &self->d, hang_src, variant->reload);
	ASSERT_TRUE(self->ok || _metadata->exit_code == KSFT_SKIP);
}

FIXTURE_TEARDOWN(reset)
{
	pair_teardown(&self->d);
}

/* A's job: gate_store/hang (@gated: behind the flag), out-sync sa. */
static uint64_t submit_a(struct __test_metadata *_metadata,
			 struct pair *self, bool gated)
{
	struct drm_vgpu_sync out = { .handle = self->sa };
	uint32_t h[5];
	uint64_t params[2] = { gated ? self->flag_va : 0, self->x_va };
	struct drm_vgpu_submit s;

	memcpy(self->pa.param, params, sizeof(params));
	vgpu_prog_submit_args(&self->pa, &s, h, 1, 1);
	h[3] = self->flag_h, h[4] = self->x_h;
	s.bo_handle_count = 5;
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	EXPECT_EQ(0, _test_submit(self->fa, &s));
	return s.job_id;
}

/*
 * B's job: copy *@src_va to its own output, after A's job through sb_in
 * (A's out-sync as a sync_file), out-sync sb_out; on @queue of B.
 */
static uint64_t submit_b(struct __test_metadata *_metadata,
			 struct pair *self, uint64_t src_va, uint32_t queue,
			 uint64_t code_va, uint64_t param_va, uint64_t out_va)
{
	struct drm_vgpu_sync in = { .handle = self->sb_in };
	struct drm_vgpu_sync out = { .handle = self->sb_out };
	uint64_t params[2] = { src_va, out_va };
	struct drm_vgpu_submit s;
	uint32_t h[3];
	int sf = -1;

	EXPECT_EQ(0, syncobj_to_sync_file(self->fa, self->sa, &sf));
	EXPECT_EQ(0, syncobj_from_sync_file(self->fb, self->sb_in, sf));
	close(sf);
	memcpy(self->pb.param, params, sizeof(params));
	((uint32_t *)self->pb.data)[0] = 0xdead;
	vgpu_prog_submit_args(&self->pb, &s, h, 1, 1);
	/* X is not listed: nothing but the syncobj orders B after A */
	s.launch.code_va = code_va;
	s.launch.param_va = param_va;
	s.queue = queue;
	s.in_syncs = (uintptr_t)&in;
	s.in_sync_count = 1;
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	EXPECT_EQ(0, _test_submit(self->fb, &s));
	return s.job_id;
}

/*
 * Open A's gate: A's job (@ida) stores, then B's (@idb), after it, copies;
 * both end DONE and B read what A wrote.
 */
static void open_gate_and_check(struct __test_metadata *_metadata,
				struct pair *d, uint64_t ida, uint64_t idb)
{
	struct drm_vgpu_get_job ja, jb;

	__atomic_store_n(d->flag, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, _test_syncobj_wait(d->fb, d->sb_out, 0, vgpu_wait_ns(60)));
	ASSERT_EQ(0, _test_get_job(d->fa, ida, &ja, NULL));
	ASSERT_EQ(0, _test_get_job(d->fb, idb, &jb, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, ja.state);
	EXPECT_EQ(VGPU_JOB_DONE, jb.state);
	EXPECT_EQ(0xa11ceu, ((uint32_t *)d->pb.data)[0]);
}

TEST_F(two, explicit_dependency_across_devices)
{
	struct pair *d = &self->d;
	uint64_t ida, idb;

	ida = submit_a(_metadata, d, true);
	idb = submit_b(_metadata, d, d->xb_va, VGPU_QUEUE_DEFAULT,
		       d->pb.code_va, d->pb.param_va, d->pb.data_va);
	/* A's job is held at its gate: B's cannot have run */
	EXPECT_EQ(-ETIME, _test_syncobj_wait(d->fb, d->sb_out, 0, 0));
	EXPECT_EQ(0xdeadu, ((uint32_t *)d->pb.data)[0]);
	open_gate_and_check(_metadata, d, ida, idb);
}

TEST_F(reset, of_a_while_b_waits)
{
	struct pair *d = &self->d;
	struct drm_vgpu_get_job ja, jb;
	uint64_t ida, idb;
	long long resets_b, resets_a;
	uint64_t v;

	ASSERT_EQ(0, _test_get_param(d->fb, VGPU_PARAM_RESET_COUNT, &v));
	resets_b = (long long)v;
	ASSERT_EQ(0, _test_get_param(d->fa, VGPU_PARAM_RESET_COUNT, &v));
	resets_a = (long long)v;
	ida = submit_a(_metadata, d, false);
	idb = submit_b(_metadata, d, d->xb_va, VGPU_QUEUE_DEFAULT,
		       d->pb.code_va, d->pb.param_va, d->pb.data_va);
	/* A's timeout resets A; B's job then runs: nothing hangs */
	ASSERT_EQ(0, _test_syncobj_wait(d->fb, d->sb_out, 0, vgpu_wait_ns(60)));
	ASSERT_EQ(0, _test_get_job(d->fa, ida, &ja, NULL));
	EXPECT_EQ(VGPU_JOB_FAILED, ja.state);
	EXPECT_EQ((uint32_t)ETIMEDOUT, ja.error);
	ASSERT_EQ(0, _test_get_job(d->fb, idb, &jb, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, jb.state);
	EXPECT_EQ(0u, jb.error);
	/* A never wrote X: B copied what it held */
	EXPECT_EQ(0x5eedu, ((uint32_t *)d->pb.data)[0]);
	ASSERT_EQ(0, _test_get_param(d->fa, VGPU_PARAM_RESET_COUNT, &v));
	EXPECT_LT(resets_a, (long long)v);
	ASSERT_EQ(0, _test_get_param(d->fb, VGPU_PARAM_RESET_COUNT, &v));
	EXPECT_EQ(resets_b, (long long)v);
	/* and A works again */
	vgpu_prog_unmap(&d->pa);
	d->pa.data = NULL;
	ASSERT_EQ(0, vgpu_prog_load(d->fa, &d->pa, gate_store_src, PAGE));
	ida = submit_a(_metadata, d, false);
	ASSERT_EQ(0, _test_syncobj_wait(d->fa, d->sa, 0, vgpu_wait_ns(60)));
	ASSERT_EQ(0, _test_get_job(d->fa, ida, &ja, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, ja.state);
	EXPECT_EQ(0xa11ceu, d->x[0]);
}

/* B maps A's BO with VM_BIND while A's job writes it. */
TEST_F(two, vm_bind_of_an_import_while_a_writes)
{
	struct pair *d = &self->d;
	struct drm_vgpu_vm_create vc = { 0 };
	struct drm_vgpu_queue_create qc = { .priority = VGPU_QUEUE_PRIORITY_NORMAL };
	struct drm_vgpu_vm_bind_op ops[4] = {
		{ .op = VGPU_VM_BIND_OP_MAP, .handle = d->xb_h, .va = VM_X_VA,
		  .range = PAGE },
		{ .op = VGPU_VM_BIND_OP_MAP, .handle = d->pb.code_h, .va = 0x60000000,
		  .range = PAGE },
		{ .op = VGPU_VM_BIND_OP_MAP, .handle = d->pb.param_h, .va = 0x60100000,
		  .range = PAGE },
		{ .op = VGPU_VM_BIND_OP_MAP, .handle = d->pb.data_h, .va = 0x60200000,
		  .range = PAGE },
	};
	struct drm_vgpu_vm_bind b = { .ops = (uintptr_t)ops, .op_count = 4 };
	uint64_t ida, idb;

	ASSERT_EQ(0, vgpu_ioctl(d->fb, DRM_IOCTL_VGPU_VM_CREATE, &vc));
	qc.vm_id = vc.vm_id;
	ASSERT_EQ(0, vgpu_ioctl(d->fb, DRM_IOCTL_VGPU_QUEUE_CREATE, &qc));
	ida = submit_a(_metadata, d, true);
	/* A's job runs (held at its gate): the bind does not wait for it */
	b.vm_id = vc.vm_id;
	ASSERT_EQ(0, vgpu_ioctl(d->fb, DRM_IOCTL_VGPU_VM_BIND, &b));
	EXPECT_EQ(-ETIME, _test_syncobj_wait(d->fa, d->sa, 0, 0));
	idb = submit_b(_metadata, d, VM_X_VA, qc.queue_id, 0x60000000, 0x60100000,
		       0x60200000);
	open_gate_and_check(_metadata, d, ida, idb);
}

VGPU_TEST_HARNESS_MAIN
