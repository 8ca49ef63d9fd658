/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the vgpu selftests: ioctl wrappers in three flavours
 * (as tools/testing/selftests/iommufd): _test_x() returns 0 or -errno,
 * test_x() asserts success, test_err_x(err, ...) expects -err.
 */
#ifndef VGPU_LIB_H
#define VGPU_LIB_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "drm.h"
#include "vgpu_drm.h"
#include "vgpu_hw.h"
#include "vgpu_asm.h"

_Static_assert(sizeof(struct drm_vgpu_submit) == 152, "submit layout");
_Static_assert(sizeof(struct drm_vgpu_get_job) == 64, "get_job layout");
_Static_assert(sizeof(struct drm_vgpu_queue_get_state) == 48, "queue state layout");

/*
 * With VGPU_MAKE_IT_FAIL in the environment (run-in-guest.sh --fuzz runs
 * the kselftests so, with debugfs fail_vgpu, failslab and fail_page_alloc
 * set for such tasks), each process the program forks (the harness's
 * test processes) marks itself for the kernel's fault injection as it
 * starts, so that a test's own calls meet failing allocations.  The
 * program itself stays unmarked: its loader's allocations and the
 * harness's forks would fail before any test ran.  So do the processes a
 * test forks in turn (another client), and a test's module_load(),
 * module_unload() and vgpu_pci_driver_write() (bind, unbind) drop the
 * mark for the call: a reload under the mark
 * ran the whole module load and PCI probe with allocations failing, and
 * code that is not vgpu.ko's reported (KASAN: a use-after-free in
 * ACPICA's _PRT evaluation, acpi_ex_resolve_to_value; WARNs in the trace
 * events' set-up, event_define_fields).
 *
 * vgpu_fail_mark(): set this task's make-it-fail to @on; its previous
 * value (false if unknown).
 */
static inline bool vgpu_fail_mark(bool on)
{
	int fd = open("/proc/self/make-it-fail", O_RDWR | O_CLOEXEC);
	char old[4] = "0";

	if (fd < 0)
		return false;
	if (read(fd, old, sizeof(old) - 1) < 0)
		old[0] = '0';
	if (pwrite(fd, on ? "1" : "0", 1, 0) != 1)
		fprintf(stderr, "vgpu: VGPU_MAKE_IT_FAIL: make-it-fail: %s\n", strerror(errno));
	close(fd);
	return old[0] == '1';
}

static void vgpu_make_it_fail_child(void)
{
	static int depth;

	vgpu_fail_mark(!depth++);
}

__attribute__((constructor, unused)) static void vgpu_make_it_fail(void)
{
	if (getenv("VGPU_MAKE_IT_FAIL"))
		pthread_atfork(NULL, NULL, vgpu_make_it_fail_child);
}

/*
 * Open the first vgpu render node after minor @after (-1: the first of
 * all); *@minor (if not NULL) gets its number.
 */
static inline int vgpu_open_render_after(int after, int *minor)
{
	char path[64];
	int i, fd;

	for (i = after < 128 ? 128 : after + 1; i < 192; i++) {
		struct drm_version v = { 0 };
		char name[16] = { 0 };

		snprintf(path, sizeof(path), "/dev/dri/renderD%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v.name = name;
		v.name_len = sizeof(name) - 1;
		if (!ioctl(fd, DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgpu")) {
			if (minor)
				*minor = i;
			return fd;
		}
		close(fd);
	}
	return -1;
}

/* Open the vgpu render node; *@minor (if not NULL) gets its number. */
static inline int vgpu_open_render_minor(int *minor)
{
	return vgpu_open_render_after(-1, minor);
}

static inline int vgpu_open_render(void)
{
	return vgpu_open_render_minor(NULL);
}

/* In a forked child: become unprivileged user @uid (and group), or exit 90. */
static inline void vgpu_become_user(uid_t uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		_exit(90);
}

static inline int vgpu_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

static inline int64_t vgpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static inline int _test_get_param(int fd, uint32_t param, uint64_t *val)
{
	struct drm_vgpu_get_param a = { .param = param };
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_GET_PARAM, &a);

	if (!ret && val)
		*val = a.value;
	return ret;
}

static inline int _test_bo_create(int fd, uint64_t size, uint32_t flags,
				  uint32_t *handle, uint64_t *va)
{
	struct drm_vgpu_bo_create a = { .size = size, .flags = flags };
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_BO_CREATE, &a);

	if (!ret) {
		if (handle)
			*handle = a.handle;
		if (va)
			*va = a.va;
	}
	return ret;
}

static inline int _test_bo_map(int fd, uint32_t handle, size_t size, void **p)
{
	struct drm_vgpu_bo_mmap_offset a = { .handle = handle };
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_BO_MMAP_OFFSET, &a);
	void *m;

	if (ret)
		return ret;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, a.offset);
	if (m == MAP_FAILED)
		return -errno;
	*p = m;
	return 0;
}

/*
 * VGPU_TIMEOUT_SCALE (run-in-guest.sh): on a slower kernel (the debug
 * kernel) the job timeouts the tests set (the module's timeout_ms), the
 * tests' waits for jobs (vgpu_wait_ns()) and the harness's per-test
 * timeouts (vgpu_test's main()) are multiplied by it, so that a slow job
 * is never taken for a hung one.
 */
static inline unsigned int vgpu_timeout_scale(void)
{
	const char *e = getenv("VGPU_TIMEOUT_SCALE");
	int v = e ? atoi(e) : 1;

	return v > 0 ? (unsigned int)v : 1;
}

/* @sec seconds times VGPU_TIMEOUT_SCALE, in ns: how long a test waits for a job */
static inline int64_t vgpu_wait_ns(unsigned int sec)
{
	return (int64_t)sec * 1000000000ll * vgpu_timeout_scale();
}

static inline int _test_wait_bo(int fd, uint32_t handle, int64_t rel_ns)
{
	struct drm_vgpu_wait_bo a = { .handle = handle,
				      .timeout_ns = vgpu_now_ns() + rel_ns };

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_WAIT_BO, &a);
}

static inline int _test_submit(int fd, struct drm_vgpu_submit *s)
{
	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_SUBMIT, s);
}

static inline int _test_get_job(int fd, uint64_t id, struct drm_vgpu_get_job *j,
				struct vgpu_exception_record *exc)
{
	memset(j, 0, sizeof(*j));
	j->job_id = id;
	if (exc) {
		j->exception = (uintptr_t)exc;
		j->exception_size = sizeof(*exc);
	}
	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_GET_JOB, j);
}

/* QUEUE_CREATE: 0 and *@id, or -errno */
static inline int _test_queue_create(int fd, uint32_t priority, uint32_t *id)
{
	struct drm_vgpu_queue_create a = { .priority = priority };
	int ret = vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_CREATE, &a);

	if (!ret && id)
		*id = a.queue_id;
	return ret;
}

static inline int _test_queue_destroy(int fd, uint32_t id)
{
	struct drm_vgpu_queue_destroy a = { .queue_id = id };

	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_DESTROY, &a);
}

static inline int _test_queue_state(int fd, uint32_t id,
				    struct drm_vgpu_queue_get_state *st)
{
	memset(st, 0, sizeof(*st));
	st->queue_id = id;
	return vgpu_ioctl(fd, DRM_IOCTL_VGPU_QUEUE_GET_STATE, st);
}

static inline int _test_syncobj_create(int fd, uint32_t *h)
{
	struct drm_syncobj_create a = { 0 };
	int ret = vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &a);

	*h = a.handle;
	return ret;
}

static inline int _test_syncobj_destroy(int fd, uint32_t h)
{
	struct drm_syncobj_destroy a = { .handle = h };

	return vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &a);
}

static inline int _test_syncobj_wait(int fd, uint32_t h, uint64_t point,
				     int64_t rel_ns)
{
	if (point) {
		struct drm_syncobj_timeline_wait a = {
			.handles = (uintptr_t)&h, .points = (uintptr_t)&point,
			.count_handles = 1, .timeout_nsec = vgpu_now_ns() + rel_ns,
		};
		return vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &a);
	} else {
		struct drm_syncobj_wait a = {
			.handles = (uintptr_t)&h, .count_handles = 1,
			.timeout_nsec = vgpu_now_ns() + rel_ns,
		};
		return vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &a);
	}
}

#define test_get_param(p, v) ASSERT_EQ(0, _test_get_param(self->fd, p, v))
#define test_err_get_param(e, p) ASSERT_EQ(-(e), _test_get_param(self->fd, p, NULL))
#define test_bo_create(sz, fl, h, va) ASSERT_EQ(0, _test_bo_create(self->fd, sz, fl, h, va))
#define test_err_bo_create(e, sz, fl) ASSERT_EQ(-(e), _test_bo_create(self->fd, sz, fl, NULL, NULL))
#define test_submit(s) ASSERT_EQ(0, _test_submit(self->fd, s))
#define test_err_submit(e, s) ASSERT_EQ(-(e), _test_submit(self->fd, s))
#define test_wait_bo(h) ASSERT_EQ(0, _test_wait_bo(self->fd, h, vgpu_wait_ns(30)))
#define test_err_wait_bo(e, h, ns) ASSERT_EQ(-(e), _test_wait_bo(self->fd, h, ns))

/*
 * A program and its buffers in one file's address space: code BO, param
 * BO, data BO (mapped on the CPU).
 */
struct vgpu_prog {
	uint32_t code_h, param_h, data_h;
	uint64_t code_va, param_va, data_va;
	void *param, *data;
	uint32_t code_size, entry, param_size, smem;
	size_t data_size;
};

static inline int vgpu_prog_load(int fd, struct vgpu_prog *p, const char *src,
				 size_t data_size)
{
	struct vgpu_object obj;
	char err[512];
	void *code;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = vgpu_assemble(src, strlen(src), "test.vgs", &obj, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "%s", err);
		return ret;
	}
	p->code_size = obj.code_size;
	p->entry = obj.kernels[0].entry;
	p->param_size = obj.kernels[0].param_size;
	p->smem = obj.kernels[0].smem_static;
	p->data_size = data_size;
	ret = _test_bo_create(fd, obj.code_size, VGPU_BO_READ_ONLY, &p->code_h, &p->code_va);
	ret = ret ?: _test_bo_map(fd, p->code_h, obj.code_size, &code);
	if (!ret) {
		memcpy(code, obj.code, obj.code_size);
		munmap(code, obj.code_size);
	}
	ret = ret ?: _test_bo_create(fd, 4096, VGPU_BO_NO_EXEC, &p->param_h, &p->param_va);
	ret = ret ?: _test_bo_map(fd, p->param_h, 4096, &p->param);
	ret = ret ?: _test_bo_create(fd, data_size, VGPU_BO_NO_EXEC, &p->data_h, &p->data_va);
	ret = ret ?: _test_bo_map(fd, p->data_h, data_size, &p->data);
	vgpu_object_fini(&obj);
	return ret;
}

/* Drop the CPU mappings of @p (they hold the DRM file open). */
static inline void vgpu_prog_unmap(struct vgpu_prog *p)
{
	munmap(p->param, 4096);
	munmap(p->data, p->data_size);
}

static inline void vgpu_prog_submit_args(struct vgpu_prog *p,
					 struct drm_vgpu_submit *s,
					 uint32_t *handles, uint32_t grid,
					 uint32_t block)
{
	memset(s, 0, sizeof(*s));
	s->launch.code_va = p->code_va;
	s->launch.code_size = p->code_size;
	s->launch.entry = p->entry;
	s->launch.grid[0] = grid;
	s->launch.grid[1] = s->launch.grid[2] = 1;
	s->launch.block[0] = block;
	s->launch.block[1] = s->launch.block[2] = 1;
	s->launch.param_va = p->param_va;
	s->launch.param_size = p->param_size;
	s->launch.smem_bytes = p->smem;
	handles[0] = p->code_h;
	handles[1] = p->param_h;
	handles[2] = p->data_h;
	s->bo_handles = (uintptr_t)handles;
	s->bo_handle_count = 3;
}

/* out[i] = i * 2 + k */
static const char vgpu_store_src[] =
	".kernel store\n.param ptr out\n.param u32 k\n"
	"  S2R R0, SR_TID.X ;\n  S2R R1, SR_CTAID.X ;\n  S2R R7, SR_NTID.X ;\n"
	"  IMAD R0, R1, R7, R0 ;\n  LDP.64 R2, [out] ;\n  LDP.32 R8, [k] ;\n"
	"  SHL R4, R0, 0x2 ;\n  IADD R2, R2, R4 ;\n  IMAD R5, R0, 0x2, R8 ;\n"
	"  STG.32 [R2], R5 ;\n  EXIT ;\n";

/* ---- files: sysfs, debugfs, fdinfo ---- */

/* Read a whole (small) file into @buf, NUL-terminated; bytes or -errno. */
static inline ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n < len - 1 && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += r;
	buf[n] = 0;
	close(fd);
	return n;
}

/* The debugfs dri/N directory of the vgpu device, or -ENOENT. */
static inline int vgpu_debugfs_dir(char *dir, size_t len)
{
	char path[96], buf[128];
	int i;

	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/sys/kernel/debug/dri/%d/name", i);
		if (read_file(path, buf, sizeof(buf)) > 0 && !strncmp(buf, "vgpu ", 5)) {
			snprintf(dir, len, "/sys/kernel/debug/dri/%d", i);
			return 0;
		}
	}
	return -ENOENT;
}

/* The value of fdinfo key @key of @fd (the text after the tab). */
static inline int fdinfo_get(int fd, const char *key, char *val, size_t len)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			char *v = line + kl + 1;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = 0;
			snprintf(val, len, "%s", v);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

static inline int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* ---- the module: reload with other parameters ---- */

static inline int module_path(char *path, size_t len)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	snprintf(path, len, "/lib/modules/%s/extra/vgpu.ko", u.release);
	return access(path, R_OK) ? -errno : 0;
}

/* Both run unmarked under VGPU_MAKE_IT_FAIL (see vgpu_make_it_fail). */
static inline int module_load(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	bool marked;

	if (fd < 0)
		return -errno;
	marked = getenv("VGPU_MAKE_IT_FAIL") && vgpu_fail_mark(false);
	if (syscall(__NR_finit_module, fd, params, 0))
		ret = -errno;
	if (marked)
		vgpu_fail_mark(true);
	close(fd);
	return ret;
}

static inline int module_unload(void)
{
	bool marked = getenv("VGPU_MAKE_IT_FAIL") && vgpu_fail_mark(false);
	int ret = syscall(__NR_delete_module, "vgpu", O_NONBLOCK) ? -errno : 0;

	if (marked)
		vgpu_fail_mark(true);
	return ret;
}

/*
 * rmmod, retried for up to 5 s while the last references go: files of
 * clients that just exited, and what their teardown finishes on
 * workqueues (a VM's last bind, a dma-buf an import still held).
 */
static inline int module_unload_settled(void)
{
	int ret = -EBUSY, i;

	for (i = 0; i < 500 && ret; i++) {
		ret = module_unload();
		if (ret)
			usleep(10000);
	}
	return ret;
}

/* The module parameters to load it again with, as it runs now. */
static inline void module_params(char *buf, size_t len)
{
	char v[32] = "2000";
	FILE *f = fopen("/sys/module/vgpu/parameters/timeout_ms", "r");

	if (f) {
		if (!fgets(v, sizeof(v), f))
			strcpy(v, "2000");
		v[strcspn(v, "\n")] = 0;
		fclose(f);
	}
	snprintf(buf, len, "timeout_ms=%s", v);
}

/*
 * Tests that need a job timeout.  The suite runs with a long timeout
 * (run-in-guest.sh: VGPU_TIMEOUT_MS, 30 s) so that no job that is merely
 * slow on a loaded host is ever timed out; these reload the module with
 * reset_timeout_ms() and put the suite's parameters back afterwards.
 */
static inline unsigned int reset_timeout_ms(void)
{
	return 2000 * vgpu_timeout_scale();
}

#define VGPU_PCI_DRIVER "/sys/bus/pci/drivers/vgpu"

/*
 * Write @addr to vgpu.ko's PCI driver's @what ("bind", "unbind"),
 * unmarked under VGPU_MAKE_IT_FAIL as module_load() is: a bind runs the
 * PCI probe, whose ACPI _PRT evaluation (pcim_enable_device) leaves
 * ACPICA's reference counts wrong when its allocations fail ("ACPI
 * Error: AE_NO_MEMORY, Could not update object reference count"), and the
 * next probe then reads a freed object (KASAN in
 * acpi_ns_get_attached_object, make check's guest fuzz lane, 2026-12-02).
 */
static inline int vgpu_pci_driver_write(const char *what, const char *addr)
{
	bool marked = getenv("VGPU_MAKE_IT_FAIL") && vgpu_fail_mark(false);
	char path[128];
	int ret;

	snprintf(path, sizeof(path), VGPU_PCI_DRIVER "/%s", what);
	ret = sysfs_write(path, addr);
	if (marked)
		vgpu_fail_mark(true);
	return ret;
}

/* The PCI address of the device vgpu.ko is bound to. */
static inline int vgpu_pci_addr(char *addr, size_t len)
{
	DIR *d = opendir(VGPU_PCI_DRIVER);
	struct dirent *e;
	int ret = -ENODEV;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (strchr(e->d_name, ':')) {
			snprintf(addr, len, "%s", e->d_name);
			ret = 0;
			break;
		}
	closedir(d);
	return ret;
}

/*
 * The number after "KEY" and @sep on a line of @path (/proc/meminfo: ':';
 * /proc/vmstat, a cgroup's memory.events: ' '), or -1.
 */
static inline long long file_key_num(const char *path, const char *key, char sep)
{
	char line[256];
	size_t kl = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == sep) {
			v = atoll(line + kl + 1);
			break;
		}
	fclose(f);
	return v;
}

/* A number of kB from /proc/meminfo ("MemTotal", ...), or -1. */
static inline long long meminfo_kib(const char *key)
{
	return file_key_num("/proc/meminfo", key, ':');
}

/*
 * The number after the word @key in the first line of debugfs dri/N/queues
 * in @dir ("resets", "sm_threads", "lost_irqs", ...), or -1.
 */
static inline long long vgpu_queues_num(const char *dir, const char *key)
{
	char path[128], buf[4096], *p;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "%s/queues", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	for (p = buf; (p = strstr(p, key)); p += kl)
		if ((p == buf || p[-1] == ' ') && p[kl] == ' ')
			return atoll(p + kl + 1);
	return -1;
}

/*
 * Load vgpu.ko again with timeout_ms=reset_timeout_ms(), for the tests
 * that need a job timeout; @saved gets the parameters to put back
 * (module_params()), @ko the module's path.  0, -ENOENT when there is no
 * module file to load, or another -errno.
 */
static inline int module_reload_short_timeout(char *saved, size_t slen,
					      char *ko, size_t klen)
{
	char param[32];
	int ret;

	snprintf(param, sizeof(param), "timeout_ms=%u", reset_timeout_ms());
	if (module_path(ko, klen))
		return -ENOENT;
	module_params(saved, slen);
	ret = module_unload_settled();
	return ret ?: module_load(ko, param);
}

#ifdef __KSELFTEST_HARNESS_H
/* fdinfo_get() of a number with the unit @unit after it ("" for none). */
static inline unsigned long long fdinfo_num(struct __test_metadata *_metadata,
					    int fd, const char *key,
					    const char *unit)
{
	char val[128], *end;
	unsigned long long n;

	ASSERT_EQ(0, fdinfo_get(fd, key, val, sizeof(val)));
	n = strtoull(val, &end, 10);
	ASSERT_TRUE(end != val);
	ASSERT_STREQ(unit, end);
	return n;
}

/*
 * The harness's main, with every test's timeout multiplied by
 * VGPU_TIMEOUT_SCALE (a slower kernel: vgpu_timeout_scale()).
 */
#define VGPU_TEST_HARNESS_MAIN						\
	int main(int argc, char **argv)					\
	{								\
		unsigned int scale = vgpu_timeout_scale();		\
		struct __fixture_metadata *f;				\
		struct __test_metadata *t;				\
									\
		for (f = __fixture_list; f; f = f->next)		\
			for (t = f->tests; t; t = t->next)		\
				t->timeout *= scale;			\
		return test_harness_run(argc, argv);			\
	}
#endif

#endif
