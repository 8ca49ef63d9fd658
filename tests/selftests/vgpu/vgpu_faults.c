// SPDX-License-Identifier: GPL-2.0
/*
 * vgpu_faults: the driver's recovery paths, driven by a device that
 * misbehaves on purpose (uapi/vgpu_hw.h, "Fault injection": vgpu-pci's
 * x-inject property, debugfs dri/N/inject).  A lost interrupt, a late one,
 * an MMU fault, a queue that stops answering and a corrupt completion
 * record: each ends the job with the documented outcome, resets no more
 * than it must, and leaves the device running the next job correctly.
 *
 * The fixture reloads vgpu.ko with a short job timeout (reset_timeout_ms(),
 * as vgpu_test's reset fixture does) and puts the suite's parameters back
 * afterwards; it skips where the device has no fault injection.
 */
#include "../kselftest_harness.h"
#include "vgpu_lib.h"

/* a number after @key in the first line of debugfs queues */
static long long queues_num(const char *dir, const char *key)
{
	char path[128], buf[4096], *p;

	snprintf(path, sizeof(path), "%s/queues", dir);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	p = strstr(buf, key);
	if (!p || p[strlen(key)] != ' ')
		return -1;
	return atoll(p + strlen(key) + 1);
}

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
	char ko[256], param[32], path[128];

	snprintf(param, sizeof(param), "timeout_ms=%u", reset_timeout_ms());
	if (module_path(ko, sizeof(ko)))
		SKIP(return, "no %s to load with %s", ko, param);
	module_params(self->params, sizeof(self->params));
	ASSERT_EQ(0, module_unload());
	self->reloaded = true;
	ASSERT_EQ(0, module_load(ko, param));
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
	EXPECT_EQ(0, module_unload());
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
	long long lost = queues_num(self->dir, "lost_irqs");
	long long resets = queues_num(self->dir, "resets");
	struct drm_vgpu_get_job j;

	ASSERT_LE(0, lost);
	ASSERT_EQ(0, inject_all(self, VGPU_INJ_DROP_IRQ, 0));
	ASSERT_EQ(0, run_store(self, 7, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, j.error);
	ASSERT_EQ(0, store_ok(self->p.data, 7));
	ASSERT_EQ(lost + 1, queues_num(self->dir, "lost_irqs"));
	ASSERT_EQ(resets, queues_num(self->dir, "resets"));

	disarm_all(self);
	ASSERT_EQ(0, run_store(self, 8, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 8));
	ASSERT_EQ(lost + 1, queues_num(self->dir, "lost_irqs"));
}

/* An interrupt that comes late, inside the timeout: nothing to recover. */
TEST_F(faults, late_interrupt_within_timeout)
{
	long long lost = queues_num(self->dir, "lost_irqs");
	long long resets = queues_num(self->dir, "resets");
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
	ASSERT_EQ(lost, queues_num(self->dir, "lost_irqs"));
	ASSERT_EQ(resets, queues_num(self->dir, "resets"));
}

/* An MMU fault the device reports: -EFAULT with its address; the queue goes on. */
TEST_F(faults, mmu_fault_reported)
{
	const uint64_t va = 0xdead0000ull;
	struct vgpu_exception_record exc;
	long long resets = queues_num(self->dir, "resets");
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
	ASSERT_EQ(resets, queues_num(self->dir, "resets"));

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
	long long resets = queues_num(self->dir, "resets");
	long long dev_resets = queues_num(self->dir, "device_resets");
	struct drm_vgpu_get_job j;

	ASSERT_LE(0, dev_resets);
	ASSERT_EQ(0, inject_all(self, VGPU_INJ_HANG, 0));
	ASSERT_EQ(0, run_store(self, 5, &j, NULL));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(ETIMEDOUT, j.error);
	ASSERT_EQ(resets + 1, queues_num(self->dir, "resets"));
	ASSERT_EQ(dev_resets, queues_num(self->dir, "device_resets"));

	disarm_all(self);
	ASSERT_EQ(0, run_store(self, 6, &j, NULL));
	ASSERT_EQ(VGPU_JOB_DONE, j.state);
	ASSERT_EQ(0, store_ok(self->p.data, 6));
}

/* A corrupt completion record (wrong sequence number): the job fails -EIO. */
TEST_F(faults, corrupt_record_fails_job)
{
	long long resets = queues_num(self->dir, "resets");
	struct drm_vgpu_get_job j;

	ASSERT_EQ(0, inject_all(self, VGPU_INJ_CORRUPT_CPL, 0));
	ASSERT_EQ(0, run_store(self, 1, &j, NULL));
	ASSERT_EQ(VGPU_JOB_FAILED, j.state);
	ASSERT_EQ(EIO, j.error);
	ASSERT_EQ(resets, queues_num(self->dir, "resets"));

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

int main(int argc, char **argv)
{
	unsigned int scale = vgpu_timeout_scale();
	struct __fixture_metadata *f;
	struct __test_metadata *t;

	for (f = __fixture_list; f; f = f->next)
		for (t = f->tests; t; t = t->next)
			t->timeout *= scale;
	return test_harness_run(argc, argv);
}
