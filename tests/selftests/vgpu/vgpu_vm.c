// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_vm: GPU address spaces that userspace manages (VM_CREATE,
 * VM_DESTROY, VM_BIND; uapi/vgpu_drm.h).  Kernels on a queue of the VM
 * read through the mappings the test made, so every check is what the
 * device translated:
 *
 *   map, partial unmap, remap   a gather kernel reads one word of each
 *                               page: each BO page carries its own tag,
 *                               an unmapped page faults at its exact VA
 *   sparse                      reads zeros, writes vanish, no fault
 *   userptr                     the process's own pages, both ways
 *   read-only                   a store faults (permission)
 *   unmap with a job running    a synchronous unmap returns only after
 *                               the job; an asynchronous one waits for its
 *                               in-sync, and the job saw its memory
 *   external objects            each mapped BO on the VM's extobj list while
 *                               a mapping of it exists
 *   10k random binds            the VM's mappings (debugfs vms) and what
 *                               the GPU reads agree with a model
 *   bad input                   the documented errno, nothing changed
 *   beyond the ASIDs            1000 files and 300 VMs each run a job; with
 *                               vgpu.ko's asids=3, jobs of more VMs than
 *                               ASIDs queued at once wait for one, then
 *                               all complete
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"
#include <pthread.h>
#include <stddef.h>
#include <sys/resource.h>

#define PAGE 4096ull
#define CODE_VA 0x40000000ull
#define PARAM_VA 0x40100000ull
#define OUT_VA 0x40200000ull
#define LIST_VA 0x40300000ull
#define WIN_VA 0x41000000ull	/* the window the tests map BOs into */
#define WIN_PAGES 64u

/* out[tid] = *(u32 *)addrs[tid]: one word of each listed address */
static const char gather_src[] =
	".kernel gather\n.param ptr addrs\n.param ptr out\n"
	"  S2R R0, SR_TID.X ;\n  LDP.64 R2, [addrs] ;\n  LDP.64 R4, [out] ;\n"
	"  SHL R6, R0, 0x3 ;\n  IADD R2, R2, R6 ;\n  LDG.64 R8, [R2] ;\n"
	"  LDG.32 R10, [R8] ;\n  SHL R6, R0, 0x2 ;\n  IADD R4, R4, R6 ;\n"
	"  STG.32 [R4], R10 ;\n  EXIT ;\n";

/* *(u32 *)addrs[tid] = tid + 1 */
static const char scatter_src[] =
	".kernel scatter\n.param ptr addrs\n.param ptr out\n"
	"  S2R R0, SR_TID.X ;\n  LDP.64 R2, [addrs] ;\n"
	"  SHL R6, R0, 0x3 ;\n  IADD R2, R2, R6 ;\n  LDG.64 R8, [R2] ;\n"
	"  IADD R10, R0, 0x1 ;\n  STG.32 [R8], R10 ;\n  EXIT ;\n";

/*
 * Waits until *addrs[0] is not zero (the CPU opens the gate), then
 * out[i] = *(u32 *)addrs[1 + i] for 4 threads' worth of addresses.
 */
static const char gate_src[] =
	".kernel gate\n.param ptr addrs\n.param ptr out\n"
	"  S2R R0, SR_TID.X ;\n  LDP.64 R2, [addrs] ;\n  LDP.64 R4, [out] ;\n"
	"  LDG.64 R12, [R2] ;\n"
	"w:\n  LDG.32 R11, [R12] ;\n  ISETP.EQ.U32 P0, R11, 0x0 ;\n  @P0 BRA w ;\n"
	"  IADD R6, R0, 0x1 ;\n  SHL R6, R6, 0x3 ;\n  IADD R2, R2, R6 ;\n"
	"  LDG.64 R8, [R2] ;\n  LDG.32 R10, [R8] ;\n  SHL R6, R0, 0x2 ;\n"
	"  IADD R4, R4, R6 ;\n  STG.32 [R4], R10 ;\n  EXIT ;\n";

static int vm_create(int fd, uint32_t *id)
{
	struct drm_vgpu_vm_create a = { 0 };
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_CREATE, &a);

	if (!ret && id)
		*id = a.vm_id;
	return ret;
}

static int vm_destroy(int fd, uint32_t id)
{
	struct drm_vgpu_vm_destroy a = { .vm_id = id };

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_DESTROY, &a);
}

static int vm_bind_syncs(int fd, uint32_t vm, struct drm_vgpu_vm_bind_op *ops,
			 uint32_t n, struct drm_vgpu_sync *in, uint32_t nin,
			 struct drm_vgpu_sync *out, uint32_t nout)
{
	struct drm_vgpu_vm_bind a = {
		.vm_id = vm, .ops = (uintptr_t)ops, .op_count = n,
		.in_syncs = (uintptr_t)in, .in_sync_count = nin,
		.out_syncs = (uintptr_t)out, .out_sync_count = nout,
	};

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_VM_BIND, &a);
}

static int vm_op(int fd, uint32_t vm, uint32_t op, uint32_t handle,
		 uint64_t off, uint64_t va, uint64_t range, uint32_t flags)
{
	struct drm_vgpu_vm_bind_op o = {
		.op = op, .flags = flags, .handle = handle, .bo_offset = off,
		.va = va, .range = range,
	};

	return vm_bind_syncs(fd, vm, &o, 1, NULL, 0, NULL, 0);
}

static int vm_map(int fd, uint32_t vm, uint32_t h, uint64_t off, uint64_t va,
		  uint64_t range)
{
	return vm_op(fd, vm, VGPU_VM_BIND_OP_MAP, h, off, va, range, 0);
}

static int vm_unmap(int fd, uint32_t vm, uint64_t va, uint64_t range)
{
	return vm_op(fd, vm, VGPU_VM_BIND_OP_UNMAP, 0, 0, va, range, 0);
}

static int queue_create_vm(int fd, uint32_t vm, uint32_t *id)
{
	struct drm_vgpu_queue_create a = {
		.priority = VGPU_QUEUE_PRIORITY_NORMAL, .vm_id = vm,
	};
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &a);

	if (!ret && id)
		*id = a.queue_id;
	return ret;
}

/* A BO of @pages pages whose page p starts with @tag | p. */
static int tagged_bo(int fd, uint32_t pages, uint32_t tag, uint32_t *h)
{
	uint8_t *p;
	uint64_t va;
	int ret = _test_bo_create(fd, pages * PAGE, VGPU_BO_NO_EXEC, h, &va);

	ret = ret ?: _test_bo_map(fd, *h, pages * PAGE, (void **)&p);
	if (ret)
		return ret;
	for (uint32_t i = 0; i < pages; i++)
		*(uint32_t *)(p + i * PAGE) = tag | i;
	munmap(p, pages * PAGE);
	return 0;
}

FIXTURE(vm) {
	int fd;
	uint32_t vm, q, list_h, syncobj;
	struct vgpu_prog p;
	uint64_t *list;		/* the address list the kernels read */
	uint32_t *out;		/* p.data: what they wrote */
};

FIXTURE_SETUP(vm)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vm_create(self->fd, &self->vm));
	ASSERT_EQ(0, queue_create_vm(self->fd, self->vm, &self->q));
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &self->syncobj));
	ASSERT_EQ(0, _test_bo_create(self->fd, PAGE, VGPU_BO_NO_EXEC,
				     &self->list_h, NULL));
	ASSERT_EQ(0, _test_bo_map(self->fd, self->list_h, PAGE,
				  (void **)&self->list));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, self->list_h, 0, LIST_VA, PAGE));
}

FIXTURE_TEARDOWN(vm)
{
	if (self->list)
		munmap(self->list, PAGE);
	if (self->p.data)
		vgpu_prog_unmap(&self->p);
	close(self->fd);
}

/* Load @src; map its code, parameters (addrs, out) and output in the VM. */
static void load(struct __test_metadata *_metadata,
		 FIXTURE_DATA(vm) *self, const char *src)
{
	uint64_t params[2] = { LIST_VA, OUT_VA };

	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p, src, PAGE));
	memcpy(self->p.param, params, sizeof(params));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, self->p.code_h, 0, CODE_VA,
			    (self->p.code_size + PAGE - 1) & ~(PAGE - 1)));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, self->p.param_h, 0, PARAM_VA, PAGE));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, self->p.data_h, 0, OUT_VA, PAGE));
	self->out = self->p.data;
	/* none of them where VM 0 has them: the kernels use the VM's VAs */
	ASSERT_NE(CODE_VA, self->p.code_va);
}

/*
 * Run the loaded kernel with @threads threads on the VM's queue and wait;
 * the job's fence error (0, or the positive errno) and its record.
 */
static int run(struct __test_metadata *_metadata, FIXTURE_DATA(vm) *self,
	       uint32_t threads, struct vgpu_exception_record *exc,
	       uint64_t *job_id, bool wait)
{
	struct drm_vgpu_sync out = { .handle = self->syncobj };
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	uint32_t handles[3];

	vgpu_prog_submit_args(&self->p, &s, handles, 1, threads);
	s.launch.code_va = CODE_VA;
	s.launch.param_va = PARAM_VA;
	s.queue = self->q;
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	memset(self->out, 0xff, PAGE);	/* what the kernel did not write */
	EXPECT_EQ(0, _test_submit(self->fd, &s));
	if (job_id)
		*job_id = s.job_id;
	if (!wait)
		return 0;
	EXPECT_EQ(0, _test_syncobj_wait(self->fd, self->syncobj, 0, vgpu_wait_ns(60)));
	EXPECT_EQ(0, _test_get_job(self->fd, s.job_id, &j, exc));
	return j.error;
}

/* The VM's mappings as debugfs vms lists them (this file's VM @vm). */
static int vms_listing(int fd, uint32_t vm, char *buf, size_t len)
{
	char dir[256], path[300], *all, *p, head[64];
	unsigned long long client;
	char val[64];
	size_t n = 0;

	if (vgpu_debugfs_dir(dir, sizeof(dir)) ||
	    fdinfo_get(fd, "drm-client-id", val, sizeof(val)))
		return -1;
	client = strtoull(val, NULL, 10);
	snprintf(path, sizeof(path), "%s/vms", dir);
	all = malloc(1 << 20);
	if (!all || read_file(path, all, 1 << 20) < 0) {
		free(all);
		return -1;
	}
	snprintf(head, sizeof(head), "client %llu vm %u asid", client, vm);
	buf[0] = 0;
	p = strstr(all, head);
	if (p) {
		p = strchr(p, '\n');
		while (p && p[1] == ' ' && p[2] == ' ') {
			char *e = strchr(p + 1, '\n');
			size_t l = e ? (size_t)(e - p) : strlen(p);

			if (n + l + 1 >= len)
				break;
			memcpy(buf + n, p + 1, l);
			n += l;
			buf[n] = 0;
			p = e;
		}
	}
	free(all);
	return 0;
}

/* The "extobjs N" of this file's VM @vm in debugfs vms; -1 if unknown. */
static long vm_extobjs(int fd, uint32_t vm)
{
	char dir[256], path[300], val[64], head[96], *all, *p;
	long n = -1;

	if (vgpu_debugfs_dir(dir, sizeof(dir)) ||
	    fdinfo_get(fd, "drm-client-id", val, sizeof(val)))
		return -1;
	snprintf(path, sizeof(path), "%s/vms", dir);
	all = malloc(1 << 20);
	if (all && read_file(path, all, 1 << 20) >= 0) {
		snprintf(head, sizeof(head), "client %llu vm %u asid ",
			 strtoull(val, NULL, 10), vm);
		p = strstr(all, head);
		p = p ? strstr(p, " extobjs ") : NULL;
		if (p)
			n = strtol(p + 9, NULL, 10);
	}
	free(all);
	return n;
}

static uint64_t mmap_key(int fd, uint32_t h)
{
	struct drm_vgpu_bo_mmap_offset a = { .handle = h };

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &a) ? 0 : a.offset;
}

TEST_F(vm, create_destroy_and_their_errors)
{
	struct drm_vgpu_vm_create c = { .flags = 1 };
	struct drm_vgpu_vm_destroy d = { .vm_id = self->vm, .pad = 1 };
	struct drm_vgpu_queue_create q = { .vm_id = 12345 };
	uint32_t ids[VGPU_MAX_VMS_PER_FILE], n = 0, id;
	int ret;

	ASSERT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_CREATE, &c));
	c.flags = 0;
	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_CREATE, &c));
	EXPECT_NE(self->vm, c.vm_id);
	EXPECT_EQ(1ull << 20, c.va_start);
	EXPECT_EQ((1ull << 48) - (1ull << 20), c.va_size);
	ASSERT_EQ(0, vm_destroy(self->fd, c.vm_id));
	EXPECT_EQ(-ENOENT, vm_destroy(self->fd, c.vm_id));
	EXPECT_EQ(-EINVAL, vm_destroy(self->fd, VGPU_VM_DEFAULT));
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_DESTROY, &d));
	EXPECT_EQ(-ENOENT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &q));
	/* the fixture's VM is one of VGPU_MAX_VMS_PER_FILE */
	while ((ret = vm_create(self->fd, &id)) == 0)
		ids[n++] = id;
	EXPECT_EQ(-EMFILE, ret);
	EXPECT_EQ(VGPU_MAX_VMS_PER_FILE - 1, n);
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(0, vm_destroy(self->fd, ids[i]));
	EXPECT_EQ(0, vm_create(self->fd, &id));
}

TEST_F(vm, bad_binds_get_their_errno_and_change_nothing)
{
	struct drm_vgpu_vm_bind_op ops[2];
	struct drm_vgpu_vm_bind b = { .vm_id = self->vm, .op_count = 1 };
	uint32_t h;
	char listing[4096];

	ASSERT_EQ(0, tagged_bo(self->fd, 4, 0x10000, &h));
#define BAD(e, op, hh, off, va, range, fl)                                     \
	EXPECT_EQ(-(e), vm_op(self->fd, self->vm, op, hh, off, va, range, fl))
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, WIN_VA + 1, PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, WIN_VA, PAGE + 8, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 100, WIN_VA, PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, WIN_VA, 0, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, PAGE, WIN_VA, 4 * PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, 0, PAGE, 0);	/* below va_start */
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, (1ull << 48) - PAGE, 2 * PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, ~0ull & ~(PAGE - 1), 2 * PAGE, 0);
	BAD(ENOENT, VGPU_VM_BIND_OP_MAP, h + 1000, 0, WIN_VA, PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP, h, 0, WIN_VA, PAGE, 4);
	BAD(EINVAL, 3, h, 0, WIN_VA, PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_UNMAP, h, 0, WIN_VA, PAGE, 0);
	BAD(EINVAL, VGPU_VM_BIND_OP_UNMAP, 0, 0, WIN_VA, PAGE, VGPU_VM_BIND_READ_ONLY);
	BAD(EINVAL, VGPU_VM_BIND_OP_MAP_SPARSE, h, 0, WIN_VA, PAGE, 0);
	BAD(E2BIG, VGPU_VM_BIND_OP_MAP_SPARSE, 0, 0, WIN_VA,
	    VGPU_VM_BIND_MAX_SPARSE + PAGE, 0);
#undef BAD
	memset(ops, 0, sizeof(ops));
	ops[0].handle = h, ops[0].va = WIN_VA, ops[0].range = PAGE;
	ops[0].pad = 1;
	EXPECT_EQ(-EINVAL, vm_bind_syncs(self->fd, self->vm, ops, 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, vm_bind_syncs(self->fd, VGPU_VM_DEFAULT, ops, 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-ENOENT, vm_bind_syncs(self->fd, 999, ops, 1, NULL, 0, NULL, 0));
	EXPECT_EQ(-EINVAL, vm_bind_syncs(self->fd, self->vm, ops, 0, NULL, 0, NULL, 0));
	EXPECT_EQ(-E2BIG, vm_bind_syncs(self->fd, self->vm, ops,
					VGPU_VM_BIND_MAX_OPS + 1, NULL, 0, NULL, 0));
	b.ops = 8;	/* an unmapped user address */
	EXPECT_EQ(-EFAULT, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_BIND, &b));
	b.ops = (uintptr_t)ops, b.flags = 1;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_BIND, &b));
	b.flags = 0, b.pad = 1;
	EXPECT_EQ(-EINVAL, vgpu_ioctl(self->fd, DRM_IOCTL_VGPU_VM_BIND, &b));

	/* all or nothing: a good op before a bad one is not applied */
	ops[0].pad = 0;
	ops[1] = ops[0];
	ops[1].va = WIN_VA + 1;
	EXPECT_EQ(-EINVAL, vm_bind_syncs(self->fd, self->vm, ops, 2, NULL, 0, NULL, 0));
	ops[1].va = WIN_VA + PAGE, ops[1].handle = 777;
	EXPECT_EQ(-ENOENT, vm_bind_syncs(self->fd, self->vm, ops, 2, NULL, 0, NULL, 0));
	ASSERT_EQ(0, vms_listing(self->fd, self->vm, listing, sizeof(listing)));
	/* only the fixture's list page */
	EXPECT_EQ(NULL, strstr(listing, "0x41000000 ")) {
		TH_LOG("%s", listing);
	}
	/* unmapping what is not mapped is no error */
	EXPECT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA, 16 * PAGE));
}

TEST_F(vm, mapped_pages_read_through_and_unmapped_ones_fault)
{
	struct vgpu_exception_record exc;
	uint32_t a, n = 4;

	load(_metadata, self, gather_src);
	ASSERT_EQ(0, tagged_bo(self->fd, 4, 0xa0000, &a));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 0, WIN_VA, 4 * PAGE));
	for (uint32_t i = 0; i < n; i++)
		self->list[i] = WIN_VA + i * PAGE + 0;
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(0xa0000u | i, self->out[i]);

	/* unmap page 2 only: the mapping splits around it */
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA + 2 * PAGE, PAGE));
	ASSERT_EQ(EFAULT, run(_metadata, self, n, &exc, NULL, true));
	EXPECT_EQ(WIN_VA + 2 * PAGE, exc.addr);
	EXPECT_EQ(VGPU_MMU_ACC_READ, exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, exc.info[1]);
	/* its neighbours are still there, with their own pages */
	self->list[2] = WIN_VA + 3 * PAGE;
	ASSERT_EQ(0, run(_metadata, self, 3, NULL, NULL, true));
	EXPECT_EQ(0xa0000u, self->out[0]);
	EXPECT_EQ(0xa0001u, self->out[1]);
	EXPECT_EQ(0xa0003u, self->out[2]);
}

/*
 * Every mapped BO is one of the VM's external objects (drm_gpuvm's extobj
 * list: SUBMIT locks them and adds its fence) for as long as a mapping of
 * it exists, however many; jobs run with them locked.
 */
TEST_F(vm, external_objects_follow_the_mappings)
{
	uint32_t a, b;
	long n0;

	load(_metadata, self, gather_src);
	n0 = vm_extobjs(self->fd, self->vm);
	if (n0 < 0)
		SKIP(return, "no debugfs");
	ASSERT_EQ(0, tagged_bo(self->fd, 4, 0xa0000, &a));
	ASSERT_EQ(0, tagged_bo(self->fd, 1, 0xb0000, &b));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 0, WIN_VA, 2 * PAGE));
	EXPECT_EQ(n0 + 1, vm_extobjs(self->fd, self->vm));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 2 * PAGE, WIN_VA + 8 * PAGE, 2 * PAGE));
	EXPECT_EQ(n0 + 1, vm_extobjs(self->fd, self->vm));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, b, 0, WIN_VA + 16 * PAGE, PAGE));
	EXPECT_EQ(n0 + 2, vm_extobjs(self->fd, self->vm));
	self->list[0] = WIN_VA + PAGE;
	self->list[1] = WIN_VA + 9 * PAGE;
	self->list[2] = WIN_VA + 16 * PAGE;
	ASSERT_EQ(0, run(_metadata, self, 3, NULL, NULL, true));
	EXPECT_EQ(0xa0001u, self->out[0]);
	EXPECT_EQ(0xa0003u, self->out[1]);
	EXPECT_EQ(0xb0000u, self->out[2]);
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA + 16 * PAGE, PAGE));
	EXPECT_EQ(n0 + 1, vm_extobjs(self->fd, self->vm));
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA, 2 * PAGE));
	EXPECT_EQ(n0 + 1, vm_extobjs(self->fd, self->vm));
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA + 8 * PAGE, 2 * PAGE));
	EXPECT_EQ(n0, vm_extobjs(self->fd, self->vm));
}

TEST_F(vm, remap_replaces_part_of_a_mapping)
{
	uint32_t a, b, n = 4;
	char listing[4096], want[1024];
	uint64_t ka, kb;

	load(_metadata, self, gather_src);
	ASSERT_EQ(0, tagged_bo(self->fd, 4, 0xa0000, &a));
	ASSERT_EQ(0, tagged_bo(self->fd, 4, 0xb0000, &b));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 0, WIN_VA, 4 * PAGE));
	/* B's pages 1 and 2 over A's pages 1 and 2 */
	ASSERT_EQ(0, vm_map(self->fd, self->vm, b, PAGE, WIN_VA + PAGE, 2 * PAGE));
	for (uint32_t i = 0; i < n; i++)
		self->list[i] = WIN_VA + i * PAGE;
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	EXPECT_EQ(0xa0000u, self->out[0]);
	EXPECT_EQ(0xb0001u, self->out[1]);
	EXPECT_EQ(0xb0002u, self->out[2]);
	EXPECT_EQ(0xa0003u, self->out[3]);

	/* the VM holds A in two pieces and B between them */
	ka = mmap_key(self->fd, a);
	kb = mmap_key(self->fd, b);
	ASSERT_EQ(0, vms_listing(self->fd, self->vm, listing, sizeof(listing)));
	snprintf(want, sizeof(want),
		 "  0x%llx 0x1000 bo 0x%llx 0x0 rw-\n"
		 "  0x%llx 0x2000 bo 0x%llx 0x1000 rw-\n"
		 "  0x%llx 0x1000 bo 0x%llx 0x3000 rw-\n",
		 WIN_VA, (unsigned long long)ka, WIN_VA + PAGE,
		 (unsigned long long)kb, WIN_VA + 3 * PAGE, (unsigned long long)ka);
	EXPECT_NE(NULL, strstr(listing, want)) {
		TH_LOG("listing:\n%s\nwanted:\n%s", listing, want);
	}
	/* the BOs' handles can go: the VM keeps what it maps */
	struct drm_gem_close cl = { .handle = a };

	ASSERT_EQ(0, vgpu_ioctl(self->fd, DRM_IOCTL_GEM_CLOSE, &cl));
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	EXPECT_EQ(0xa0000u, self->out[0]);
	EXPECT_EQ(0xa0003u, self->out[3]);
}

TEST_F(vm, sparse_reads_zero_and_drops_writes)
{
	struct vgpu_exception_record exc;
	uint32_t n = 4;

	load(_metadata, self, scatter_src);
	ASSERT_EQ(0, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP_SPARSE, 0, 0,
			   WIN_VA, 4 * PAGE, 0));
	for (uint32_t i = 0; i < n; i++)
		self->list[i] = WIN_VA + i * PAGE + 8;
	/* writes: no fault */
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	/* reads: zeros (the writes went nowhere) */
	vgpu_prog_unmap(&self->p);
	self->p.data = NULL;
	load(_metadata, self, gather_src);
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(0u, self->out[i]);
	/* a read-only sparse range: a write is a permission fault */
	vgpu_prog_unmap(&self->p);
	self->p.data = NULL;
	load(_metadata, self, scatter_src);
	ASSERT_EQ(0, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP_SPARSE, 0, 0,
			   WIN_VA + PAGE, PAGE, VGPU_VM_BIND_READ_ONLY));
	ASSERT_EQ(EFAULT, run(_metadata, self, n, &exc, NULL, true));
	EXPECT_EQ(WIN_VA + PAGE + 8, exc.addr);
	EXPECT_EQ(VGPU_MMU_F_PERMISSION, exc.info[1]);
}

TEST_F(vm, read_only_mappings_fault_on_write)
{
	struct vgpu_exception_record exc;
	uint32_t a;

	load(_metadata, self, scatter_src);
	ASSERT_EQ(0, tagged_bo(self->fd, 2, 0xa0000, &a));
	ASSERT_EQ(0, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP, a, 0, WIN_VA,
			   2 * PAGE, VGPU_VM_BIND_READ_ONLY));
	self->list[0] = WIN_VA + PAGE;
	ASSERT_EQ(EFAULT, run(_metadata, self, 1, &exc, NULL, true));
	EXPECT_EQ(WIN_VA + PAGE, exc.addr);
	EXPECT_EQ(VGPU_MMU_ACC_WRITE, exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_PERMISSION, exc.info[1]);
	/* mapped again writable, the same store lands */
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 0, WIN_VA, 2 * PAGE));
	ASSERT_EQ(0, run(_metadata, self, 1, NULL, NULL, true));
}

struct opener {
	uint32_t *gate;
	volatile int started;
};

static void *open_gate_later(void *arg)
{
	struct opener *o = arg;

	o->started = 1;
	usleep(200 * 1000);
	__atomic_store_n(o->gate, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * The gate kernel's job on the VM's queue, not waited for: held until the
 * CPU writes the page returned (mapped at WIN_VA + 16 pages), then it
 * reads the tagged BO mapped at WIN_VA, one word per page of four.
 */
static uint32_t *gated_job(struct __test_metadata *_metadata,
			   FIXTURE_DATA(vm) *self, uint64_t *id, uint32_t *win)
{
	uint32_t a = 0, g, *gate = NULL;

	load(_metadata, self, gate_src);
	EXPECT_EQ(0, tagged_bo(self->fd, 4, 0xa0000, &a));
	EXPECT_EQ(0, vm_map(self->fd, self->vm, a, 0, WIN_VA, 4 * PAGE));
	EXPECT_EQ(0, _test_bo_create(self->fd, PAGE, VGPU_BO_NO_EXEC, &g, NULL));
	EXPECT_EQ(0, _test_bo_map(self->fd, g, PAGE, (void **)&gate));
	EXPECT_EQ(0, vm_map(self->fd, self->vm, g, 0, WIN_VA + 16 * PAGE, PAGE));
	self->list[0] = WIN_VA + 16 * PAGE;
	for (uint32_t i = 0; i < 4; i++)
		self->list[1 + i] = WIN_VA + i * PAGE;
	EXPECT_EQ(0, run(_metadata, self, 4, NULL, id, false));
	if (win)
		*win = a;
	return gate;
}

/*
 * A job spins until the CPU opens its gate, then reads the window.  A
 * synchronous UNMAP of the window, made while it spins, returns only once
 * the job is done, and the job read the pages, not a fault.
 */
TEST_F(vm, synchronous_unmap_waits_for_the_running_job)
{
	struct drm_vgpu_get_job j;
	struct opener o = { 0 };
	pthread_t t;
	uint64_t id;
	uint32_t *gate;

	gate = gated_job(_metadata, self, &id, NULL);
	ASSERT_NE(NULL, gate);
	o.gate = gate;
	ASSERT_EQ(0, pthread_create(&t, NULL, open_gate_later, &o));
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA, 4 * PAGE));
	/* returned: the job has ended, with the pages it read */
	ASSERT_EQ(0, _test_get_job(self->fd, id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	EXPECT_EQ(0u, j.error);
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(0xa0000u | i, self->out[i]);
	pthread_join(t, NULL);
	munmap(gate, PAGE);
}

/*
 * WAIT_BO on a BO that a VM queue's job reaches through the VM without
 * listing it (the window it reads, the gate it spins on): busy while the
 * job spins, idle once it has ended, never before.
 */
TEST_F(vm, wait_bo_waits_for_a_job_that_reaches_the_bo_through_the_vm)
{
	struct drm_vgpu_get_job j;
	uint32_t *gate, h;
	uint64_t id;

	gate = gated_job(_metadata, self, &id, &h);
	ASSERT_NE(NULL, gate);
	usleep(100 * 1000);
	EXPECT_EQ(-ETIME, _test_wait_bo(self->fd, h, 0));
	EXPECT_EQ(-ETIME, _test_wait_bo(self->fd, h, vgpu_wait_ns(0) + 20 * 1000 * 1000));
	ASSERT_EQ(0, _test_get_job(self->fd, id, &j, NULL));
	EXPECT_NE(VGPU_JOB_DONE, j.state);
	__atomic_store_n(gate, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, _test_wait_bo(self->fd, h, vgpu_wait_ns(60)));
	/* returned: the job has ended, with the pages it read */
	ASSERT_EQ(0, _test_get_job(self->fd, id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	EXPECT_EQ(0u, j.error);
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(0xa0000u | i, self->out[i]);
	munmap(gate, PAGE);
}

/*
 * An asynchronous UNMAP ordered after the job by the job's out-sync:
 * VM_BIND returns at once, its out-sync stays unsignalled while the job
 * is held at its gate, and signals after the job, which read the pages.
 */
TEST_F(vm, asynchronous_unmap_runs_after_its_in_sync)
{
	struct drm_vgpu_sync in = { 0 }, out = { 0 };
	struct drm_vgpu_vm_bind_op op = {
		.op = VGPU_VM_BIND_OP_UNMAP, .va = WIN_VA, .range = 4 * PAGE,
	};
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job j;
	uint32_t *gate, done;
	uint64_t id;

	gate = gated_job(_metadata, self, &id, NULL);
	ASSERT_NE(NULL, gate);
	ASSERT_EQ(0, _test_syncobj_create(self->fd, &done));
	in.handle = self->syncobj;	/* the job's out-sync */
	out.handle = done;
	ASSERT_EQ(0, vm_bind_syncs(self->fd, self->vm, &op, 1, &in, 1, &out, 1));
	/* the job is at its gate: the unmap cannot have run */
	EXPECT_EQ(-ETIME, _test_syncobj_wait(self->fd, done, 0, 0));
	__atomic_store_n(gate, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, _test_syncobj_wait(self->fd, done, 0, vgpu_wait_ns(60)));
	ASSERT_EQ(0, _test_get_job(self->fd, id, &j, NULL));
	EXPECT_EQ(VGPU_JOB_DONE, j.state);
	EXPECT_EQ(0u, j.error);
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(0xa0000u | i, self->out[i]);
	/* and now the window is unmapped */
	*gate = 1;
	ASSERT_EQ(EFAULT, run(_metadata, self, 4, &exc, NULL, true));
	EXPECT_EQ(WIN_VA, exc.addr);
	munmap(gate, PAGE);
}

TEST_F(vm, destroyed_vm_lives_on_in_its_queue)
{
	uint32_t a;

	load(_metadata, self, gather_src);
	ASSERT_EQ(0, tagged_bo(self->fd, 1, 0xa0000, &a));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 0, WIN_VA, PAGE));
	self->list[0] = WIN_VA;
	ASSERT_EQ(0, vm_destroy(self->fd, self->vm));
	EXPECT_EQ(-ENOENT, vm_map(self->fd, self->vm, a, 0, WIN_VA, PAGE));
	ASSERT_EQ(0, run(_metadata, self, 1, NULL, NULL, true));
	EXPECT_EQ(0xa0000u, self->out[0]);
	EXPECT_EQ(0, _test_queue_destroy(self->fd, self->q));
}

/* ---- userptr ---- */

/* Anonymous memory of @pages pages whose page p starts with @tag | p. */
static uint32_t *tagged_anon(uint32_t pages, uint32_t tag)
{
	uint8_t *p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	for (uint32_t i = 0; i < pages; i++)
		*(uint32_t *)(p + i * PAGE) = tag | i;
	return (uint32_t *)p;
}

static int vm_userptr(int fd, uint32_t vm, void *p, uint64_t va, uint64_t range,
		      uint32_t flags)
{
	return vm_op(fd, vm, VGPU_VM_BIND_OP_MAP_USERPTR, 0, (uintptr_t)p, va,
		     range, flags);
}

TEST_F(vm, userptr_is_the_process_memory)
{
	uint32_t *mem = tagged_anon(4, 0xc0000);

	ASSERT_NE(NULL, mem);
	load(_metadata, self, gather_src);
	ASSERT_EQ(0, vm_userptr(self->fd, self->vm, mem, WIN_VA, 4 * PAGE, 0));
	for (uint32_t i = 0; i < 4; i++)
		self->list[i] = WIN_VA + i * PAGE;
	ASSERT_EQ(0, run(_metadata, self, 4, NULL, NULL, true));
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(0xc0000u | i, self->out[i]);
	/* a CPU store after the bind is what the GPU reads next */
	mem[PAGE / 4] = 0x12345;
	ASSERT_EQ(0, run(_metadata, self, 4, NULL, NULL, true));
	EXPECT_EQ(0x12345u, self->out[1]);

	/* and the GPU's stores are in the process's memory */
	vgpu_prog_unmap(&self->p);
	self->p.data = NULL;
	load(_metadata, self, scatter_src);
	for (uint32_t i = 0; i < 4; i++)
		self->list[i] = WIN_VA + i * PAGE + 4;
	ASSERT_EQ(0, run(_metadata, self, 4, NULL, NULL, true));
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(i + 1, mem[i * PAGE / 4 + 1]);

	/* split: page 1 unmapped, the others still the process's */
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA + PAGE, PAGE));
	vgpu_prog_unmap(&self->p);
	self->p.data = NULL;
	load(_metadata, self, gather_src);
	self->list[0] = WIN_VA, self->list[1] = WIN_VA + 3 * PAGE;
	ASSERT_EQ(0, run(_metadata, self, 2, NULL, NULL, true));
	EXPECT_EQ(0xc0000u, self->out[0]);
	EXPECT_EQ(0xc0003u, self->out[1]);

	/* munmap: the GPU keeps the pages it had, and reads their last value */
	mem[3 * PAGE / 4] = 0x777;
	ASSERT_EQ(0, munmap(mem, 4 * PAGE));
	ASSERT_EQ(0, run(_metadata, self, 2, NULL, NULL, true));
	EXPECT_EQ(0x777u, self->out[1]);
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA, 4 * PAGE));
}

TEST_F(vm, userptr_errors)
{
	uint32_t *mem = tagged_anon(2, 0), *ro;
	struct vgpu_exception_record exc;

	ASSERT_NE(NULL, mem);
	ro = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	/* misaligned, handle set, too large, not mapped, read-only memory */
	EXPECT_EQ(-EINVAL, vm_userptr(self->fd, self->vm, (char *)mem + 8, WIN_VA, PAGE, 0));
	EXPECT_EQ(-EINVAL, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP_USERPTR, 1,
				 (uintptr_t)mem, WIN_VA, PAGE, 0));
	EXPECT_EQ(-E2BIG, vm_userptr(self->fd, self->vm, mem, WIN_VA,
				     VGPU_VM_BIND_MAX_USERPTR + PAGE, 0));
	EXPECT_EQ(-EFAULT, vm_userptr(self->fd, self->vm, mem, WIN_VA, 64 * PAGE, 0));
	EXPECT_EQ(-EFAULT, vm_userptr(self->fd, self->vm, (void *)PAGE, WIN_VA, PAGE, 0));
	EXPECT_EQ(-EFAULT, vm_userptr(self->fd, self->vm, ro, WIN_VA, PAGE, 0));
	/* read-only memory maps read-only, and a GPU store there faults */
	ASSERT_EQ(0, vm_userptr(self->fd, self->vm, ro, WIN_VA, PAGE,
				VGPU_VM_BIND_READ_ONLY));
	load(_metadata, self, scatter_src);
	self->list[0] = WIN_VA;
	ASSERT_EQ(EFAULT, run(_metadata, self, 1, &exc, NULL, true));
	EXPECT_EQ(WIN_VA, exc.addr);
	EXPECT_EQ(VGPU_MMU_F_PERMISSION, exc.info[1]);
	munmap(ro, PAGE);
	munmap(mem, 2 * PAGE);
}

/* ---- 10k random binds against a model ---- */

#define NBO 3
#define BO_PAGES 16u

/* what each page of the window maps: 0 nothing, 1 sparse, 2+k BO k */
struct page_model {
	uint8_t kind;
	uint8_t page;	/* in the BO */
	uint8_t ro;
};

/* drm_gpuvm's mappings: intervals, split but never merged */
struct ival {
	uint32_t start, n;	/* pages of the window */
	uint8_t kind, page, ro;
};

struct model {
	struct ival iv[4 * WIN_PAGES];
	uint32_t niv;
};

static void model_remove(struct model *m, uint32_t s, uint32_t n)
{
	struct ival out[4 * WIN_PAGES];
	uint32_t k = 0, e = s + n;

	for (uint32_t i = 0; i < m->niv; i++) {
		struct ival v = m->iv[i];
		uint32_t ve = v.start + v.n;

		if (ve <= s || v.start >= e) {
			out[k++] = v;
			continue;
		}
		if (v.start < s) {
			struct ival p = v;

			p.n = s - v.start;
			out[k++] = p;
		}
		if (ve > e) {
			struct ival q = v;

			q.start = e;
			q.n = ve - e;
			if (v.kind >= 2)
				q.page = v.page + (e - v.start);
			out[k++] = q;
		}
	}
	memcpy(m->iv, out, k * sizeof(out[0]));
	m->niv = k;
}

static void model_insert(struct model *m, struct ival v)
{
	uint32_t i = 0;

	while (i < m->niv && m->iv[i].start < v.start)
		i++;
	memmove(&m->iv[i + 1], &m->iv[i], (m->niv - i) * sizeof(v));
	m->iv[i] = v;
	m->niv++;
}

static void model_listing(const struct model *m, const uint64_t *keys,
			  char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < m->niv; i++) {
		const struct ival *v = &m->iv[i];

		n += snprintf(buf + n, len - n, "  0x%llx 0x%llx %s 0x%llx 0x%llx r%c%c\n",
			      WIN_VA + v->start * PAGE, (unsigned long long)v->n * PAGE,
			      v->kind == 1 ? "sparse" : "bo",
			      v->kind == 1 ? 0ull : (unsigned long long)keys[v->kind - 2],
			      v->kind == 1 ? 0ull : (unsigned long long)v->page * PAGE,
			      v->ro ? '-' : 'w', v->kind == 1 ? 'x' : '-');
	}
}

static uint32_t lines(const char *s)
{
	uint32_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

TEST_F_TIMEOUT(vm, random_binds_agree_with_a_model, 300)
{
	static char got[1 << 16], want[1 << 16];
	uint32_t h[NBO], seed = 12345;
	uint64_t keys[NBO];
	struct model m = { .niv = 0 };
	unsigned int nops = 10000, checks = 0;

	load(_metadata, self, gather_src);
	for (int k = 0; k < NBO; k++) {
		ASSERT_EQ(0, tagged_bo(self->fd, BO_PAGES, (uint32_t)(k + 1) << 16, &h[k]));
		keys[k] = mmap_key(self->fd, h[k]);
	}
	for (unsigned int i = 0; i < nops; i++) {
		uint32_t r, s, n, k, off;
		struct ival v = { 0 };

		seed = seed * 1103515245u + 12345u;
		r = seed >> 8;
		s = r % WIN_PAGES;
		n = 1 + (r >> 8) % 8;
		if (s + n > WIN_PAGES)
			n = WIN_PAGES - s;
		k = (r >> 12) % NBO;
		off = (r >> 16) % (BO_PAGES - n + 1);
		switch ((r >> 20) % 4) {
		case 0:
		case 1:
			v = (struct ival){ s, n, (uint8_t)(2 + k), (uint8_t)off, (r >> 23) & 1 };
			ASSERT_EQ(0, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP, h[k],
					   off * PAGE, WIN_VA + s * PAGE, n * PAGE,
					   v.ro ? VGPU_VM_BIND_READ_ONLY : 0));
			model_remove(&m, s, n);
			model_insert(&m, v);
			break;
		case 2:
			ASSERT_EQ(0, vm_unmap(self->fd, self->vm, WIN_VA + s * PAGE, n * PAGE));
			model_remove(&m, s, n);
			break;
		default:
			v = (struct ival){ s, n, 1, 0, 0 };
			ASSERT_EQ(0, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP_SPARSE, 0,
					   0, WIN_VA + s * PAGE, n * PAGE, 0));
			model_remove(&m, s, n);
			model_insert(&m, v);
			break;
		}
		if (i % 500 != 499)
			continue;
		/*
		 * The VM's mappings, exactly: the fixed four (list, code,
		 * parameters, output, all below the window), then the window's.
		 */
		ASSERT_EQ(0, vms_listing(self->fd, self->vm, got, sizeof(got)));
		model_listing(&m, keys, want, sizeof(want));
		ASSERT_TRUE(strlen(got) >= strlen(want) &&
			    !strcmp(got + strlen(got) - strlen(want), want) &&
			    lines(got) == 4 + m.niv) {
			TH_LOG("after %u ops:\nVM:\n%s\nmodel:\n%s", i + 1, got, want);
		}
		/* what the GPU reads at each page that is mapped */
		uint32_t np = 0, expect[WIN_PAGES];

		for (uint32_t j = 0; j < m.niv; j++) {
			for (uint32_t p = 0; p < m.iv[j].n; p++) {
				self->list[np] = WIN_VA + (m.iv[j].start + p) * PAGE;
				expect[np++] = m.iv[j].kind == 1 ? 0 :
					((uint32_t)(m.iv[j].kind - 1) << 16) |
					(m.iv[j].page + p);
			}
		}
		if (!np)
			continue;
		ASSERT_EQ(0, run(_metadata, self, np, NULL, NULL, true));
		for (uint32_t j = 0; j < np; j++) {
			EXPECT_EQ(expect[j], self->out[j]) {
				TH_LOG("after %u ops: page at 0x%llx", i + 1,
				       (unsigned long long)self->list[j]);
			}
		}
		checks++;
	}
	EXPECT_EQ(nops / 500, checks);
}

#define GIB (1ull << 30)
#define TIB (1ull << 40)

/* The file's page-table bytes (fdinfo vgpu-pt-bytes). */
static unsigned long long pt_bytes(struct __test_metadata *_metadata, int fd)
{
	return fdinfo_num(_metadata, fd, "vgpu-pt-bytes", "");
}

/* vgpu-pt-bytes once it has not moved for 150 ms (no bind's reserve left). */
static unsigned long long pt_bytes_stable(struct __test_metadata *_metadata, int fd)
{
	unsigned long long n = pt_bytes(_metadata, fd), m;

	for (int i = 0, same = 0; i < 200 && same < 3; i++) {
		usleep(50 * 1000);
		m = pt_bytes(_metadata, fd);
		same = m == n ? same + 1 : 0;
		n = m;
	}
	return n;
}

/*
 * vgpu-pt-bytes once it is at most @bound: the tables a bind reserved and
 * did not use go back when its job is freed, a moment after it signals.
 */
static unsigned long long pt_bytes_settled(struct __test_metadata *_metadata,
					   int fd, unsigned long long bound)
{
	unsigned long long n = pt_bytes(_metadata, fd);

	for (int i = 0; i < 200 && n > bound; i++) {
		usleep(50 * 1000);
		n = pt_bytes(_metadata, fd);
	}
	return n;
}

/*
 * One VM_BIND of VGPU_VM_BIND_MAX_OPS MAP_SPARSE ops of 1 GiB each: 1 TiB
 * of null pages in 1 GiB NULL entries, a few KiB of tables (it took 2 GiB
 * of leaf tables when each page had its entry); a kernel reads zeros.
 */
TEST_F(vm, sparse_1024_gib_takes_a_few_kib_of_tables)
{
	static struct drm_vgpu_vm_bind_op ops[VGPU_VM_BIND_MAX_OPS];
	unsigned long long before, after;
	uint32_t n = 5;

	load(_metadata, self, gather_src);
	before = pt_bytes_stable(_metadata, self->fd);
	for (uint32_t i = 0; i < VGPU_VM_BIND_MAX_OPS; i++)
		ops[i] = (struct drm_vgpu_vm_bind_op){
			.op = VGPU_VM_BIND_OP_MAP_SPARSE,
			.va = TIB + i * GIB, .range = GIB,
		};
	ASSERT_EQ(0, vm_bind_syncs(self->fd, self->vm, ops, VGPU_VM_BIND_MAX_OPS,
				   NULL, 0, NULL, 0));
	/* two level-2 tables (one per 512 GiB), 8 KiB each */
	after = pt_bytes_settled(_metadata, self->fd, before + 16384);
	EXPECT_EQ(before + 16384, after) {
		TH_LOG("1 TiB sparse took %llu bytes of page tables", after - before);
	}
	self->list[0] = TIB + 8;
	self->list[1] = TIB + 517 * GIB + 123 * PAGE + 4;
	self->list[2] = TIB + 511 * GIB + GIB - 4;
	self->list[3] = TIB + 512 * GIB;
	self->list[4] = 2 * TIB - 4;
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	for (uint32_t i = 0; i < n; i++)
		EXPECT_EQ(0u, self->out[i]);
	/* unmapped whole, the tables go with it */
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, TIB, TIB));
	EXPECT_EQ(before, pt_bytes_settled(_metadata, self->fd, before));
}

#define PT_LIMIT_PARAM "/sys/module/vgpu/parameters/pt_limit_mb"

/*
 * pt_limit_mb bounds a VM's page tables: single-page binds 1 GiB apart
 * (12 KiB of tables each) succeed until one fails with -ENOSPC, which
 * changes nothing; the VM still runs jobs, and another client is not
 * affected.  The limit is lowered to 4 MiB meanwhile, to keep it short.
 */
TEST_F(vm, page_table_limit_refuses_with_enospc)
{
	char saved[32] = "";
	static char want[1 << 16], got[1 << 16];
	uint32_t a, q2 = 0, vm2, nmapped = 0, i;
	int fd2, err = 0;

	ASSERT_LT(0, read_file(PT_LIMIT_PARAM, saved, sizeof(saved)));
	saved[strcspn(saved, "\n")] = 0;
	load(_metadata, self, gather_src);
	ASSERT_EQ(0, tagged_bo(self->fd, 1, 0xb0000, &a));
	ASSERT_EQ(0, sysfs_write(PT_LIMIT_PARAM, "4"));
	for (i = 0; i < 100000; i++) {
		err = vm_map(self->fd, self->vm, a, 0, TIB + i * GIB, PAGE);
		if (err)
			break;
		nmapped++;
	}
	EXPECT_EQ(-ENOSPC, err);
	/* 4 MiB / 12 KiB: about 340, less what binds in flight reserved */
	EXPECT_LE(300u, nmapped);
	EXPECT_GE(350u, nmapped);
	/* the refused bind changed nothing, and binds keep being refused */
	ASSERT_EQ(0, vms_listing(self->fd, self->vm, want, sizeof(want)));
	EXPECT_EQ(4 + nmapped, lines(want));
	EXPECT_EQ(-ENOSPC, vm_map(self->fd, self->vm, a, 0, TIB + nmapped * GIB, PAGE));
	ASSERT_EQ(0, vms_listing(self->fd, self->vm, got, sizeof(got)));
	EXPECT_STREQ(want, got);

	/* the VM still works: a job reads through the first and last pages */
	self->list[0] = TIB;
	self->list[1] = TIB + (nmapped - 1) * GIB + 4;
	ASSERT_EQ(0, run(_metadata, self, 2, NULL, NULL, true));
	EXPECT_EQ(0xb0000u, self->out[0]);
	EXPECT_EQ(0u, self->out[1]);	/* word 1 of the page */

	/* another client's VM has its own budget */
	fd2 = vgpu_open_render();
	EXPECT_LE(0, fd2);
	EXPECT_EQ(0, vm_create(fd2, &vm2));
	EXPECT_EQ(0, queue_create_vm(fd2, vm2, &q2));
	EXPECT_EQ(0, vm_op(fd2, vm2, VGPU_VM_BIND_OP_MAP_SPARSE, 0, 0, TIB, GIB, 0));
	for (i = 0; i < 64; i++)
		EXPECT_EQ(0, vm_op(fd2, vm2, VGPU_VM_BIND_OP_MAP_SPARSE, 0, 0,
				   2 * TIB + i * GIB + 5 * PAGE, PAGE, 0));
	close(fd2);
	/* and once the limit is back (or raised), this VM binds again */
	ASSERT_EQ(0, sysfs_write(PT_LIMIT_PARAM, saved));
	EXPECT_EQ(0, vm_map(self->fd, self->vm, a, 0, TIB + nmapped * GIB, PAGE));
}

/*
 * Inside a sparse 1 GiB region (one NULL entry), a MAP and an UNMAP of a
 * few pages split it: the mapped pages read the BO's data, the unmapped
 * one faults, everything else still reads zeros; unmapping the region
 * whole gives every table back.
 */
TEST_F(vm, partial_map_and_unmap_inside_sparse_gib)
{
	struct vgpu_exception_record exc;
	uint64_t s = 2 * TIB, m = s + 5 * (2ull << 20) + 3 * PAGE,
		 u = s + GIB / 2 + 2 * PAGE;
	unsigned long long before;
	uint32_t a, n = 0;
	uint32_t want[16];

	load(_metadata, self, gather_src);
	ASSERT_EQ(0, tagged_bo(self->fd, 4, 0xc0000, &a));
	before = pt_bytes_stable(_metadata, self->fd);
	ASSERT_EQ(0, vm_op(self->fd, self->vm, VGPU_VM_BIND_OP_MAP_SPARSE, 0, 0,
			   s, GIB, 0));
	ASSERT_EQ(0, vm_map(self->fd, self->vm, a, 0, m, 4 * PAGE));
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, u, PAGE));
#define READ_AT(va, v) (self->list[n] = (va), want[n++] = (v))
	for (uint32_t i = 0; i < 4; i++)
		READ_AT(m + i * PAGE, 0xc0000u | i);
	READ_AT(m - 4, 0);
	READ_AT(m + 4 * PAGE, 0);
	READ_AT(s, 0);
	READ_AT(s + GIB - 4, 0);
	READ_AT(u - 4, 0);
	READ_AT(u + PAGE, 0);
	READ_AT(s + (2ull << 20), 0);
	READ_AT(s + 300 * (2ull << 20) + 8, 0);
#undef READ_AT
	ASSERT_EQ(0, run(_metadata, self, n, NULL, NULL, true));
	for (uint32_t i = 0; i < n; i++) {
		EXPECT_EQ(want[i], self->out[i]) {
			TH_LOG("read %u at 0x%llx", i, (unsigned long long)self->list[i]);
		}
	}
	/* the unmapped page faults at its address */
	self->list[0] = u + 8;
	ASSERT_EQ(EFAULT, run(_metadata, self, 1, &exc, NULL, true));
	EXPECT_EQ(u + 8, exc.addr);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, exc.info[1]);
	/* the whole region goes: every table with it */
	ASSERT_EQ(0, vm_unmap(self->fd, self->vm, s, GIB));
	EXPECT_EQ(before, pt_bytes_settled(_metadata, self->fd, before));
	self->list[0] = s + 8;
	ASSERT_EQ(EFAULT, run(_metadata, self, 1, &exc, NULL, true));
	EXPECT_EQ(s + 8, exc.addr);
}

/* ---- address spaces beyond the hardware ASIDs ---- */

/*
 * Files and VMs take no hardware ASID of their own (the kernel binds one
 * while a job runs: docs/driver.md "Address spaces and ASIDs"): many more
 * of them than the device's 255 ASIDs each run a job that stores its own
 * value.  Variant "three" reloads vgpu.ko with asids=3, so that the jobs
 * take each other's ASIDs all the time, and, with jobs held at a gate,
 * more address spaces than ASIDs have jobs queued at once: the others
 * wait in the scheduler for an ASID, none fails.
 */

/* once *gate != 0: out[tid] = k */
static const char kstore_src[] =
	".kernel kstore\n.param ptr out\n.param ptr gate\n.param u32 k\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R4, [gate] ;\n  LDP.32 R8, [k] ;\n"
	"w:\n  LDG.32 R7, [R4] ;\n  ISETP.EQ.U32 P0, R7, 0x0 ;\n  @P0 BRA w ;\n"
	"  S2R R0, SR_TID.X ;\n  SHL R6, R0, 0x2 ;\n  IADD R2, R2, R6 ;\n"
	"  STG.32 [R2], R8 ;\n  EXIT ;\n";

#define KSTORE_THREADS 32u
#define MAX_FILES 1000u

struct kstore_param {
	uint64_t out, gate;
	uint32_t k, pad;
	uint32_t open;		/* a gate that is open */
};

FIXTURE(asids) {
	char params[96];
	bool reloaded;
	int fds[MAX_FILES];
	unsigned long long steals0;
};

FIXTURE_VARIANT(asids) {
	unsigned int asids;	/* 0: all the device has */
	unsigned int files, vms;
};

FIXTURE_VARIANT_ADD(asids, device) {
	.asids = 0, .files = MAX_FILES, .vms = 300,
};

FIXTURE_VARIANT_ADD(asids, three) {
	.asids = 3, .files = 100, .vms = 40,
};

/*
 * From debugfs address_spaces' first line: the ASIDs in use, the steals
 * and the waits so far.  0 or -errno.
 */
static int asid_stats(unsigned long long *asids, unsigned long long *steals,
		      unsigned long long *waits)
{
	char dir[64], path[128], buf[256];

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/address_spaces", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -EIO;
	if (sscanf(buf, "asids %llu bound %*u pinned %*u binds %*u steals %llu waits %llu",
		   asids, steals, waits) != 3)
		return -EINVAL;
	return 0;
}

FIXTURE_SETUP(asids)
{
	unsigned long long asids, waits;
	char ko[256], p[160];

	for (unsigned int i = 0; i < MAX_FILES; i++)
		self->fds[i] = -1;
	if (variant->asids) {
		if (module_path(ko, sizeof(ko)))
			SKIP(return, "no %s to load with asids=%u", ko, variant->asids);
		module_params(self->params, sizeof(self->params));
		ASSERT_EQ(0, module_unload_settled());
		self->reloaded = true;
		snprintf(p, sizeof(p), "%s asids=%u", self->params, variant->asids);
		ASSERT_EQ(0, module_load(ko, p));
	}
	if (!asid_stats(&asids, &self->steals0, &waits) && variant->asids)
		ASSERT_EQ(variant->asids, asids);
}

FIXTURE_TEARDOWN(asids)
{
	char ko[256];

	for (unsigned int i = 0; i < MAX_FILES; i++)
		if (self->fds[i] >= 0)
			close(self->fds[i]);
	if (!self->reloaded || module_path(ko, sizeof(ko)))
		return;
	EXPECT_EQ(0, module_unload_settled());
	EXPECT_EQ(0, module_load(ko, self->params));
}

/* The steals since the fixture began are at least @n (when debugfs tells). */
static void expect_steals(struct __test_metadata *_metadata,
			  FIXTURE_DATA(asids) *self, unsigned long long n)
{
	unsigned long long asids, steals, waits;

	if (asid_stats(&asids, &steals, &waits))
		return;
	TH_LOG("%llu ASIDs: %llu taken from idle address spaces, %llu waits",
	       asids, steals - self->steals0, waits);
	EXPECT_LE(n, steals - self->steals0);
}

/*
 * Many more open files than ASIDs at once (RLIMIT_NOFILE raised), each
 * runs a job in its VM 0 that stores its own value: every open succeeds,
 * every job stores the right value.
 */
TEST_F_TIMEOUT(asids, files_each_run_a_job, 600)
{
	struct vgpu_prog *p = calloc(variant->files, sizeof(*p));
	unsigned long long asids, steals, waits;
	struct drm_vgpu_submit s;
	uint32_t handles[3];
	struct rlimit rl;
	unsigned int i;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < variant->files + 64) {
		rl.rlim_cur = variant->files + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	for (i = 0; i < variant->files; i++) {
		struct kstore_param *kp;

		self->fds[i] = vgpu_open_render();
		ASSERT_LE(0, self->fds[i]) {
			TH_LOG("open %u: %s", i + 1, strerror(errno));
		}
		ASSERT_EQ(0, vgpu_prog_load(self->fds[i], &p[i], kstore_src, 4096));
		kp = p[i].param;
		kp->out = p[i].data_va;
		kp->gate = p[i].param_va + offsetof(struct kstore_param, open);
		kp->k = 0x10000 + i;
		kp->open = 1;
		vgpu_prog_submit_args(&p[i], &s, handles, 1, KSTORE_THREADS);
		ASSERT_EQ(0, _test_submit(self->fds[i], &s)) {
			TH_LOG("submit on file %u", i + 1);
		}
	}
	for (i = 0; i < variant->files; i++) {
		const uint32_t *out = p[i].data;

		ASSERT_EQ(0, _test_wait_bo(self->fds[i], p[i].data_h, vgpu_wait_ns(60)));
		for (uint32_t t = 0; t < KSTORE_THREADS; t++) {
			ASSERT_EQ(0x10000 + i, out[t]) {
				TH_LOG("file %u thread %u", i + 1, t);
			}
		}
		vgpu_prog_unmap(&p[i]);
	}
	/* every AS had an ASID for its job: the ones over the count took one */
	if (!asid_stats(&asids, &steals, &waits) && variant->files > asids)
		expect_steals(_metadata, self, variant->files - asids);
	free(p);
}

/*
 * Many more VMs than ASIDs on one file, all alive at once, each running a
 * job on a queue of its own (queues made and destroyed in batches: a file
 * holds at most VGPU_MAX_QUEUES_PER_FILE): each stores its own value
 * through its own mappings.
 */
TEST_F_TIMEOUT(asids, vms_each_run_a_job, 600)
{
	unsigned int n = variant->vms, batch = 50, i, j;
	uint32_t *vm = calloc(n, sizeof(*vm)), q[50], sync[50], code, par, out, h[3];
	uint64_t *id = calloc(n, sizeof(*id));
	struct vgpu_exception_record exc;
	struct drm_vgpu_get_job gj;
	struct drm_vgpu_sync os;
	unsigned int early;
	unsigned long long asids, steals, waits;
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint8_t *params;
	uint32_t *outs;
	int fd;

	ASSERT_NE(NULL, vm);
	fd = self->fds[0] = vgpu_open_render();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vgpu_prog_load(fd, &p, kstore_src, 4096));
	code = p.code_h;
	ASSERT_EQ(0, _test_bo_create(fd, n * PAGE, VGPU_BO_NO_EXEC, &par, NULL));
	ASSERT_EQ(0, _test_bo_map(fd, par, n * PAGE, (void **)&params));
	ASSERT_EQ(0, _test_bo_create(fd, n * PAGE, VGPU_BO_NO_EXEC, &out, NULL));
	ASSERT_EQ(0, _test_bo_map(fd, out, n * PAGE, (void **)&outs));
	memset(outs, 0xff, n * PAGE);
	for (i = 0; i < n; i++) {
		struct kstore_param *kp = (void *)(params + i * PAGE);

		ASSERT_EQ(0, vm_create(fd, &vm[i])) {
			TH_LOG("VM_CREATE %u", i + 1);
		}
		ASSERT_EQ(0, vm_map(fd, vm[i], code, 0, CODE_VA,
				    (p.code_size + PAGE - 1) & ~(PAGE - 1)));
		ASSERT_EQ(0, vm_map(fd, vm[i], par, i * PAGE, PARAM_VA, PAGE));
		ASSERT_EQ(0, vm_map(fd, vm[i], out, i * PAGE, OUT_VA, PAGE));
		kp->out = OUT_VA;
		kp->gate = PARAM_VA + offsetof(struct kstore_param, open);
		kp->k = 0x20000 + i;
		kp->open = 1;
	}
	for (j = 0; j < batch; j++)
		ASSERT_EQ(0, _test_syncobj_create(fd, &sync[j]));
	for (i = 0; i < n; i += batch) {
		unsigned int m = n - i < batch ? n - i : batch;

		for (j = 0; j < m; j++) {
			ASSERT_EQ(0, queue_create_vm(fd, vm[i + j], &q[j]));
			vgpu_prog_submit_args(&p, &s, h, 1, KSTORE_THREADS);
			s.launch.code_va = CODE_VA;
			s.launch.param_va = PARAM_VA;
			s.queue = q[j];
			os = (struct drm_vgpu_sync){ .handle = sync[j] };
			s.out_syncs = (uintptr_t)&os;
			s.out_sync_count = 1;
			ASSERT_EQ(0, _test_submit(fd, &s));
			id[i + j] = s.job_id;
		}
		/*
		 * WAIT_BO on the out BO, which no job lists (each reaches it
		 * through its VM): it returns only once every job is done.
		 */
		ASSERT_EQ(0, _test_wait_bo(fd, out, vgpu_wait_ns(60)));
		early = 0;
		for (j = 0; j < m; j++) {
			ASSERT_EQ(0, _test_get_job(fd, id[i + j], &gj, NULL));
			early += gj.state != VGPU_JOB_DONE;
		}
		EXPECT_EQ(0u, early) {
			TH_LOG("WAIT_BO returned with %u of %u jobs not done", early, m);
		}
		for (j = 0; j < m; j++) {
			ASSERT_EQ(0, _test_syncobj_wait(fd, sync[j], 0, vgpu_wait_ns(60)));
			ASSERT_EQ(0, _test_get_job(fd, id[i + j], &gj, &exc));
			EXPECT_EQ(VGPU_JOB_DONE, gj.state) {
				TH_LOG("VM %u: job %llu state %u error %u hw_status %u exc %u at 0x%llx: %s",
				       i + j + 1, (unsigned long long)id[i + j], gj.state,
				       gj.error, gj.hw_status, exc.code,
				       (unsigned long long)exc.addr, exc.msg);
			}
			ASSERT_EQ(0, _test_queue_destroy(fd, q[j]));
		}
	}
	for (i = 0; i < n; i++) {
		for (uint32_t t = 0; t < KSTORE_THREADS; t++) {
			ASSERT_EQ(0x20000 + i, outs[i * PAGE / 4 + t]) {
				TH_LOG("VM %u thread %u", i + 1, t);
			}
		}
	}
	if (!asid_stats(&asids, &steals, &waits) && n > asids)
		expect_steals(_metadata, self, n - asids);
	munmap(params, n * PAGE);
	munmap(outs, n * PAGE);
	vgpu_prog_unmap(&p);
	free(vm);
	free(id);
}

/*
 * More address spaces than ASIDs with jobs queued at once: jobs in
 * ASIDs + 5 VMs, each held at one gate.  Only as many run (hold an ASID)
 * as there are ASIDs; the others wait in the scheduler, QUEUED, for an
 * ASID to come free.  The gate opens: every job completes with its value.
 */
TEST_F_TIMEOUT(asids, more_address_spaces_than_asids_wait, 300)
{
	unsigned long long asids, steals, waits, a2, s2, w2;
	uint32_t vm[16], q[16], sync[16], code, par, out, gate, h[4];
	unsigned int n, i, running, queued;
	struct drm_vgpu_sync os;
	struct drm_vgpu_get_job j;
	struct drm_vgpu_submit s;
	uint64_t id[16];
	struct vgpu_prog p;
	uint8_t *params;
	uint32_t *outs, *g;
	int64_t end;
	int fd;

	if (!variant->asids)
		SKIP(return, "needs fewer ASIDs than the queues hold jobs (variant three)");
	if (asid_stats(&asids, &steals, &waits))
		SKIP(return, "no debugfs address_spaces");
	n = asids + 5;
	ASSERT_GE(16, n);
	fd = self->fds[0] = vgpu_open_render();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vgpu_prog_load(fd, &p, kstore_src, 4096));
	code = p.code_h;
	ASSERT_EQ(0, _test_bo_create(fd, n * PAGE, VGPU_BO_NO_EXEC, &par, NULL));
	ASSERT_EQ(0, _test_bo_map(fd, par, n * PAGE, (void **)&params));
	ASSERT_EQ(0, _test_bo_create(fd, n * PAGE, VGPU_BO_NO_EXEC, &out, NULL));
	ASSERT_EQ(0, _test_bo_map(fd, out, n * PAGE, (void **)&outs));
	ASSERT_EQ(0, _test_bo_create(fd, PAGE, VGPU_BO_NO_EXEC, &gate, NULL));
	ASSERT_EQ(0, _test_bo_map(fd, gate, PAGE, (void **)&g));
	memset(outs, 0xff, n * PAGE);
	h[0] = code;
	h[1] = par;
	h[2] = out;
	h[3] = gate;
	for (i = 0; i < n; i++) {
		struct kstore_param *kp = (void *)(params + i * PAGE);

		ASSERT_EQ(0, vm_create(fd, &vm[i]));
		ASSERT_EQ(0, vm_map(fd, vm[i], code, 0, CODE_VA,
				    (p.code_size + PAGE - 1) & ~(PAGE - 1)));
		ASSERT_EQ(0, vm_map(fd, vm[i], par, i * PAGE, PARAM_VA, PAGE));
		ASSERT_EQ(0, vm_map(fd, vm[i], out, i * PAGE, OUT_VA, PAGE));
		ASSERT_EQ(0, vm_map(fd, vm[i], gate, 0, WIN_VA, PAGE));
		kp->out = OUT_VA;
		kp->gate = WIN_VA;
		kp->k = 0x30000 + i;
		ASSERT_EQ(0, queue_create_vm(fd, vm[i], &q[i]));
		ASSERT_EQ(0, _test_syncobj_create(fd, &sync[i]));
	}
	for (i = 0; i < n; i++) {
		vgpu_prog_submit_args(&p, &s, h, 1, KSTORE_THREADS);
		s.bo_handle_count = 4;
		s.launch.code_va = CODE_VA;
		s.launch.param_va = PARAM_VA;
		s.queue = q[i];
		os = (struct drm_vgpu_sync){ .handle = sync[i] };
		s.out_syncs = (uintptr_t)&os;
		s.out_sync_count = 1;
		ASSERT_EQ(0, _test_submit(fd, &s));
		id[i] = s.job_id;
	}
	/* as many run as there are ASIDs, and stay at the gate */
	end = vgpu_now_ns() + vgpu_wait_ns(30);
	do {
		usleep(20000);
		running = queued = 0;
		for (i = 0; i < n; i++) {
			ASSERT_EQ(0, _test_get_job(fd, id[i], &j, NULL));
			running += j.state == VGPU_JOB_RUNNING;
			queued += j.state == VGPU_JOB_QUEUED;
		}
	} while (running < asids && vgpu_now_ns() < end);
	ASSERT_EQ(asids, running);
	usleep(300000);
	running = queued = 0;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, _test_get_job(fd, id[i], &j, NULL));
		running += j.state == VGPU_JOB_RUNNING;
		queued += j.state == VGPU_JOB_QUEUED;
	}
	EXPECT_EQ(asids, running);
	EXPECT_EQ(n - asids, queued);
	ASSERT_EQ(0, asid_stats(&a2, &s2, &w2));
	EXPECT_LT(waits, w2);	/* they waited for an ASID */
	__atomic_store_n(g, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, _test_syncobj_wait(fd, sync[i], 0, vgpu_wait_ns(60)));
		ASSERT_EQ(0, _test_get_job(fd, id[i], &j, NULL));
		EXPECT_EQ(VGPU_JOB_DONE, j.state);
		EXPECT_EQ(0u, j.error);
		for (uint32_t t = 0; t < KSTORE_THREADS; t++) {
			ASSERT_EQ(0x30000 + i, outs[i * PAGE / 4 + t]) {
				TH_LOG("VM %u thread %u", i + 1, t);
			}
		}
	}
	/* the waiting ones took the ASIDs of the idle ones */
	expect_steals(_metadata, self, n - asids);
	munmap(params, n * PAGE);
	munmap(outs, n * PAGE);
	munmap(g, PAGE);
	vgpu_prog_unmap(&p);
}

/* fdinfo vgpu-asid of @fd (0: none), or -1 */
static int fd_asid(int fd)
{
	char val[32];

	if (fdinfo_get(fd, "vgpu-asid", val, sizeof(val)))
		return -1;
	return atoi(val);
}

/* debugfs address_spaces: the address spaces pinned by user queues, or -1 */
static int asids_pinned(void)
{
	char dir[64], path[128], buf[256];
	unsigned int pinned;

	if (vgpu_debugfs_dir(dir, sizeof(dir)))
		return -1;
	snprintf(path, sizeof(path), "%s/address_spaces", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0 ||
	    sscanf(buf, "asids %*u bound %*u pinned %u", &pinned) != 1)
		return -1;
	return pinned;
}

/* A new file (self->fds[@slot]) runs a kstore job in its VM 0 and checks it. */
static void file_job(struct __test_metadata *_metadata,
		     FIXTURE_DATA(asids) *self, unsigned int slot)
{
	struct drm_vgpu_submit s;
	struct kstore_param *kp;
	struct vgpu_prog p;
	uint32_t handles[3];
	int fd;

	fd = self->fds[slot] = vgpu_open_render();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, vgpu_prog_load(fd, &p, kstore_src, 4096));
	kp = p.param;
	kp->out = p.data_va;
	kp->gate = p.param_va + offsetof(struct kstore_param, open);
	kp->k = 0x40000 + slot;
	kp->open = 1;
	vgpu_prog_submit_args(&p, &s, handles, 1, KSTORE_THREADS);
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p.data_h, vgpu_wait_ns(60)));
	for (uint32_t t = 0; t < KSTORE_THREADS; t++)
		ASSERT_EQ(0x40000 + slot, ((uint32_t *)p.data)[t]);
	vgpu_prog_unmap(&p);
}

/*
 * A user-mode queue pins its VM's ASID: jobs of more address spaces than
 * the other ASIDs take each other's, never the queue's.  Destroyed, the
 * queue unpins it, and the idle address space loses it (least recently
 * used) to the next jobs.
 */
TEST_F_TIMEOUT(asids, user_queue_keeps_its_asid, 300)
{
	struct drm_vgpu_userq_create c = {
		.vm_id = VGPU_VM_DEFAULT, .priority = VGPU_QUEUE_PRIORITY_NORMAL,
	};
	struct drm_vgpu_userq_destroy d = { 0 };
	int fd, asid, ret;
	unsigned int i;

	if (!variant->asids)
		SKIP(return, "needs few ASIDs (variant three)");
	if (asids_pinned() < 0)
		SKIP(return, "no debugfs address_spaces");
	fd = self->fds[0] = vgpu_open_render();
	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fd_asid(fd));	/* opening took none */
	ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_CREATE, &c);
	if (ret == -ENODEV)
		SKIP(return, "the device keeps no queue for user mode");
	ASSERT_EQ(0, ret);
	asid = fd_asid(fd);
	ASSERT_LT(0, asid);
	EXPECT_EQ(1, asids_pinned());
	for (i = 1; i <= 4 * variant->asids; i++) {
		file_job(_metadata, self, i);
		ASSERT_EQ(asid, fd_asid(fd));
	}
	d.queue_id = c.queue_id;
	ASSERT_EQ(0, vgpu_ioctl(fd, DRM_IOCTL_VGPU_USERQ_DESTROY, &d));
	EXPECT_EQ(0, asids_pinned());
	for (; i <= 5 * variant->asids; i++)
		file_job(_metadata, self, i);
	EXPECT_EQ(0, fd_asid(fd));
}


VGPU_TEST_HARNESS_MAIN
