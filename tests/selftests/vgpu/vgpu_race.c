// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_race: every ioctl that creates an object races a close of the ids
 * it will return, and every ioctl that uses an object races its close.
 *
 * The ids are guessable (GEM handles and syncobjs are the lowest free
 * numbers, queue and VM ids count up from 1), so a second thread of the
 * same process can close an object between the moment its id is
 * published to the file and the end of the ioctl that made it.  Code that
 * touches the object after that (BO_CREATE did: vgpu_bo_va() locked a
 * freed BO, a KASAN slab-use-after-free reported by a user; the queue, VM
 * and user-queue creates read the id back from the object) is caught here
 * by KASAN on the debug kernel (make check-guest-debug) and, on any
 * kernel, by the results: each call returns 0 or a documented errno,
 * nothing leaks (the closers find every id they race), and the device
 * still runs a job afterwards.
 *
 * Each race runs VGPU_RACE_MS (default 1500) milliseconds with
 * RACE_CLOSERS threads closing ids 1..RACE_IDS round robin, and is a test
 * of its own (FIXTURE_VARIANT: one per create or use ioctl).
 */
#include <sched.h>
#include <stdatomic.h>
#include "../kselftest_harness.h"
#include "vgpu_lib.h"

#define RACE_CLOSERS 2
#define RACE_IDS 8

struct race;

/*
 * One race: @make creates (or uses) the object (0 or -errno; *@id the id
 * it made, if any), @close_id closes id @id (errors ignored: most ids do
 * not exist at any moment).  @ok_err: the errnos @make may return besides
 * 0 while its object is being closed under it.
 */
struct race_ops {
	const char *name;
	int (*setup)(struct race *r);
	int (*make)(struct race *r, uint32_t *id);
	void (*close_id)(struct race *r, uint32_t id);
	int ok_err[4];
};

struct race {
	int fd;
	const struct race_ops *ops;
	atomic_bool stop;
	atomic_ulong closed;
	atomic_uint last;	/* the id the maker got last */
	/* objects a use-race needs: a BO, a queue, a VM */
	uint32_t bo;
	struct vgpu_prog p;
};

static void close_gem(struct race *r, uint32_t id)
{
	struct drm_gem_close c = { .handle = id };

	if (!ioctl(r->fd, DRM_IOCTL_GEM_CLOSE, &c))
		atomic_fetch_add(&r->closed, 1);
}

static void close_queue(struct race *r, uint32_t id)
{
	if (!_test_queue_destroy(r->fd, id))
		atomic_fetch_add(&r->closed, 1);
}

static void close_vm(struct race *r, uint32_t id)
{
	struct drm_vgpu_vm_destroy d = { .vm_id = id };

	if (!ioctl(r->fd, DRM_IOCTL_VGPU_VM_DESTROY, &d))
		atomic_fetch_add(&r->closed, 1);
}

static void close_userq(struct race *r, uint32_t id)
{
	struct drm_vgpu_userq_destroy d = { .queue_id = id };

	if (!ioctl(r->fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &d))
		atomic_fetch_add(&r->closed, 1);
}

static void close_syncobj(struct race *r, uint32_t id)
{
	if (!_test_syncobj_destroy(r->fd, id))
		atomic_fetch_add(&r->closed, 1);
}

static int make_bo(struct race *r, uint32_t *id)
{
	return _test_bo_create(r->fd, 4096, 0, id, NULL);
}

static int make_bo_populated(struct race *r, uint32_t *id)
{
	return _test_bo_create(r->fd, 8192, VGPU_BO_POPULATE, id, NULL);
}

static int make_queue(struct race *r, uint32_t *id)
{
	return _test_queue_create(r->fd, VGPU_QUEUE_PRIORITY_NORMAL, id);
}

static int make_vm(struct race *r, uint32_t *id)
{
	struct drm_vgpu_vm_create c = { 0 };
	int ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_VM_CREATE, &c);

	*id = c.vm_id;
	return ret;
}

static int make_userq(struct race *r, uint32_t *id)
{
	struct drm_vgpu_userq_create c = { .priority = VGPU_QUEUE_PRIORITY_NORMAL };
	int ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c);

	*id = c.queue_id;
	return ret;
}

static int make_syncobj(struct race *r, uint32_t *id)
{
	return _test_syncobj_create(r->fd, id);
}

/* PRIME_FD_TO_HANDLE: a new handle for an object exported earlier */
static int prime_setup(struct race *r)
{
	struct drm_prime_handle p = { .flags = DRM_CLOEXEC };
	int ret = _test_bo_create(r->fd, 4096, 0, &r->bo, NULL);

	if (ret)
		return ret;
	p.handle = r->bo;
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	if (ret)
		return ret;
	/* the file keeps it by the dma-buf only: its handle races too */
	close_gem(r, r->bo);
	r->bo = p.fd;
	return 0;
}

static int make_prime(struct race *r, uint32_t *id)
{
	struct drm_prime_handle p = { .fd = (int)r->bo };
	int ret = vgpu_ioctl(r->fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	*id = p.handle;
	return ret;
}

/* uses of an object whose id the closers race */
/* BO_INFO, BO_MMAP_OFFSET and WAIT_BO on handle 1..RACE_IDS */
static int use_bo(struct race *r, uint32_t *id)
{
	static _Thread_local uint32_t next;
	struct drm_vgpu_bo_info info = { .handle = next % RACE_IDS + 1 };
	struct drm_vgpu_bo_mmap_offset mo = { .handle = info.handle };
	int ret;

	next++;
	if (_test_bo_create(r->fd, 4096, 0, id, NULL))
		*id = 0;
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_BO_INFO, &info);
	if (ret && ret != -ENOENT)
		return ret;
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &mo);
	if (ret && ret != -ENOENT)
		return ret;
	return _test_wait_bo(r->fd, info.handle, 0);
}

/* QUEUE_GET_STATE and a SUBMIT of a store on queue 1..RACE_IDS */
static int queue_use_setup(struct race *r)
{
	int ret = vgpu_prog_load(r->fd, &r->p, vgpu_store_src, 4096);

	if (!ret)
		*(uint64_t *)r->p.param = r->p.data_va;
	return ret;
}

static int use_queue(struct race *r, uint32_t *id)
{
	static _Thread_local uint32_t next;
	/* the queue made last, or the one before (ids count up) */
	struct drm_vgpu_queue_get_state st = { .queue_id = atomic_load(&r->last) - next % 2 };
	struct drm_vgpu_submit s;
	uint32_t h[3];
	int ret;

	next++;
	vgpu_prog_submit_args(&r->p, &s, h, 1, 32);
	s.queue = st.queue_id;
	if (make_queue(r, id))
		*id = 0;
	else
		atomic_store(&r->last, *id);
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, &st);
	if (ret && ret != -ENOENT)
		return ret;
	return _test_submit(r->fd, &s);
}

/* VM_BIND (MAP of the fixture's BO, then UNMAP) and QUEUE_CREATE on VM 1..RACE_IDS */
static int vm_use_setup(struct race *r)
{
	return _test_bo_create(r->fd, 4096, 0, &r->bo, NULL);
}

static int use_vm(struct race *r, uint32_t *id)
{
	static _Thread_local uint32_t next;
	/* the VM made last, or the one before (ids count up) */
	uint32_t vm = atomic_load(&r->last) - next++ % 2;
	struct drm_vgpu_vm_bind_op op = { .op = VGPU_VM_BIND_OP_MAP, .handle = r->bo,
					  .va = 0x100000000ull, .range = 4096 };
	struct drm_vgpu_vm_bind b = { .vm_id = vm, .ops = (uintptr_t)&op, .op_count = 1 };
	struct drm_vgpu_queue_create qc = { .priority = VGPU_QUEUE_PRIORITY_NORMAL,
					    .vm_id = vm };
	int ret;

	if (!vm)	/* VM 0 is the file's own: VM_BIND refuses it (-EINVAL) */
		vm = 1;
	b.vm_id = qc.vm_id = vm;
	if (make_vm(r, id))
		*id = 0;
	else
		atomic_store(&r->last, *id);
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_VM_BIND, &b);
	if (ret && ret != -ENOENT)
		return ret;
	op.op = VGPU_VM_BIND_OP_UNMAP;
	op.handle = 0;
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_VM_BIND, &b);
	if (ret && ret != -ENOENT)
		return ret;
	ret = vgpu_ioctl(r->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &qc);
	if (!ret)
		_test_queue_destroy(r->fd, qc.queue_id);
	return ret;
}

FIXTURE(race) {
	struct race r;
};

FIXTURE_VARIANT(race) {
	struct race_ops ops;
};

FIXTURE_VARIANT_ADD(race, bo_create) {
	/* EMFILE: max_bos_per_file, when the closers fall behind */
	.ops = { "BO_CREATE", NULL, make_bo, close_gem, { ENOMEM, EMFILE } },
};

FIXTURE_VARIANT_ADD(race, bo_create_populate) {
	.ops = { "BO_CREATE(POPULATE)", NULL, make_bo_populated, close_gem, { ENOMEM, EMFILE } },
};

FIXTURE_VARIANT_ADD(race, prime_fd_to_handle) {
	.ops = { "PRIME_FD_TO_HANDLE", prime_setup, make_prime, close_gem, { 0 } },
};

FIXTURE_VARIANT_ADD(race, queue_create) {
	.ops = { "QUEUE_CREATE", NULL, make_queue, close_queue, { EMFILE } },
};

FIXTURE_VARIANT_ADD(race, vm_create) {
	.ops = { "VM_CREATE", NULL, make_vm, close_vm, { EMFILE, EBUSY } },
};

FIXTURE_VARIANT_ADD(race, userq_create) {
	/* EBUSY: every hardware slot taken (by this file's other queues) */
	.ops = { "USERQ_CREATE", NULL, make_userq, close_userq, { EMFILE, EBUSY, ENODEV } },
};

FIXTURE_VARIANT_ADD(race, syncobj_create) {
	.ops = { "SYNCOBJ_CREATE", NULL, make_syncobj, close_syncobj, { 0 } },
};

FIXTURE_VARIANT_ADD(race, bo_use) {
	.ops = { "BO_INFO/BO_MMAP_OFFSET/WAIT_BO", NULL, use_bo, close_gem, { ENOENT, EMFILE } },
};

FIXTURE_VARIANT_ADD(race, queue_use) {
	.ops = { "QUEUE_GET_STATE/SUBMIT", queue_use_setup, use_queue, close_queue, { ENOENT, EMFILE } },
};

FIXTURE_VARIANT_ADD(race, vm_use) {
	.ops = { "VM_BIND/QUEUE_CREATE(vm)", vm_use_setup, use_vm, close_vm,
		 { ENOENT, EMFILE, EBUSY } },
};

static void *closer(void *arg)
{
	struct race *r = arg;
	uint32_t id = 0;

	/*
	 * Low ids (GEM handles and syncobjs take the lowest free number) and
	 * the last id made and the two after it (queue, VM and user-queue
	 * ids count up): the one a create in progress is about to return.
	 */
	while (!atomic_load(&r->stop)) {
		r->ops->close_id(r, id % RACE_IDS + 1);
		r->ops->close_id(r, atomic_load(&r->last) + id % 3);
		id++;
		if (!(id % 64))
			sched_yield();
	}
	return NULL;
}

static bool race_errno_ok(const struct race_ops *ops, int err)
{
	unsigned int i;

	for (i = 0; i < sizeof(ops->ok_err) / sizeof(ops->ok_err[0]); i++)
		if (ops->ok_err[i] && err == -ops->ok_err[i])
			return true;
	return false;
}

static unsigned int race_ms(void)
{
	const char *s = getenv("VGPU_RACE_MS");

	return s ? (unsigned int)strtoul(s, NULL, 0) : 1500;
}

FIXTURE_SETUP(race)
{
	self->r.fd = vgpu_open_render();
	ASSERT_LE(0, self->r.fd);
	self->r.ops = &variant->ops;
	if (variant->ops.setup)
		ASSERT_EQ(0, variant->ops.setup(&self->r));
}

FIXTURE_TEARDOWN(race)
{
	if (self->r.p.param)
		vgpu_prog_unmap(&self->r.p);
	close(self->r.fd);
}

/* the device still runs a job for this file and for a new one */
static void race_job(struct __test_metadata *_metadata, int fd)
{
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];
	unsigned int i;

	ASSERT_EQ(0, vgpu_prog_load(fd, &p, vgpu_store_src, 4096));
	*(uint64_t *)p.param = p.data_va;
	((uint32_t *)p.param)[2] = 7;
	vgpu_prog_submit_args(&p, &s, h, 2, 32);
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p.data_h, vgpu_wait_ns(30)));
	for (i = 0; i < 64; i++)
		ASSERT_EQ(i * 2 + 7, ((uint32_t *)p.data)[i]);
	vgpu_prog_unmap(&p);
}

TEST_F_TIMEOUT(race, create_against_close, 120)
{
	struct race *r = &self->r;
	pthread_t t[RACE_CLOSERS];
	unsigned long made = 0, refused = 0, calls = 0;
	int64_t end = vgpu_now_ns() + (int64_t)race_ms() * 1000000;
	unsigned int i;
	int other;

	for (i = 0; i < RACE_CLOSERS; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, closer, r));
	while (vgpu_now_ns() < end) {
		uint32_t id = 0;
		int ret = r->ops->make(r, &id);

		calls++;
		if (!ret) {
			made++;
			if (id)
				atomic_store(&r->last, id);
			continue;
		}
		if (!race_errno_ok(r->ops, ret)) {
			atomic_store(&r->stop, true);
			for (i = 0; i < RACE_CLOSERS; i++)
				pthread_join(t[i], NULL);
			TH_LOG("%s: %s", r->ops->name, strerror(-ret));
			ASSERT_TRUE(race_errno_ok(r->ops, ret));
		}
		refused++;
	}
	atomic_store(&r->stop, true);
	for (i = 0; i < RACE_CLOSERS; i++)
		ASSERT_EQ(0, pthread_join(t[i], NULL));
	TH_LOG("%s: %lu calls, %lu made, %lu refused, %lu closes", r->ops->name,
	       calls, made, refused, atomic_load(&r->closed));
	/* the races happened: objects were made and closed under the maker */
	ASSERT_LT(0, made);
	ASSERT_LT(0, atomic_load(&r->closed));

	/* whatever is left closes, and the device serves this file and another */
	for (i = 1; i <= 4 * RACE_IDS; i++)
		r->ops->close_id(r, i);
	for (i = 0; i < 4 * RACE_IDS; i++)
		r->ops->close_id(r, atomic_load(&r->last) - i);
	race_job(_metadata, r->fd);
	other = vgpu_open_render();
	ASSERT_LE(0, other);
	race_job(_metadata, other);
	close(other);
}

VGPU_TEST_HARNESS_MAIN
