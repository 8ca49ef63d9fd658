// SPDX-License-Identifier: GPL-2.0
/*
 * What vgpu_test.c, vgpu_reset.c and vgpu_queue.c share.
 */
#ifndef VGPU_TEST_H
#define VGPU_TEST_H

/* dst[t] = src[t] for one CTA */
static const char __attribute__((unused)) copy_src[] =
	".kernel copy\n.param ptr src\n.param ptr dst\n"
	"  S2R R0, SR_TID.X ;\n  LDP.64 R2, [src] ;\n  LDP.64 R4, [dst] ;\n"
	"  SHL R6, R0, 0x2 ;\n  IADD R2, R2, R6 ;\n  IADD R4, R4, R6 ;\n"
	"  LDG.32 R8, [R2] ;\n  STG.32 [R4], R8 ;\n  EXIT ;\n";

/* The job fixture: a render node, the store kernel loaded, a SUBMIT made */
FIXTURE(job) {
	int fd;
	struct vgpu_prog p;
	struct drm_vgpu_submit s;
	uint32_t handles[3];
};

FIXTURE_SETUP(job)
{
	self->fd = vgpu_open_render();
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, vgpu_prog_load(self->fd, &self->p, vgpu_store_src, 4096));
	*(uint64_t *)self->p.param = self->p.data_va;
	*(uint32_t *)((char *)self->p.param + 8) = 7;
	vgpu_prog_submit_args(&self->p, &self->s, self->handles, 4, 64);
}

FIXTURE_TEARDOWN(job)
{
	close(self->fd);
}

static inline int check_store(const uint32_t *out, int n, uint32_t k)
{
	int i;

	for (i = 0; i < n; i++)
		if (out[i] != (uint32_t)i * 2 + k)
			return -1;
	return 0;
}

/*
 * The drm-client-id of @fd, from fdinfo: debugfs address_spaces names VM 0
 * by it (its ASID comes and goes: 0 while it has none).
 */
static inline int fd_client(int fd)
{
	char val[32];

	if (fdinfo_get(fd, "drm-client-id", val, sizeof(val)))
		return -1;
	return atoi(val);
}



/* Export the fence of binary syncobj @h as a sync_file. */
static inline int syncobj_sync_file(int fd, uint32_t h)
{
	struct drm_syncobj_handle a = {
		.handle = h,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
		.fd = -1,
	};
	int ret = vgpu_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &a);

	return ret ?: a.fd;
}

static inline void wait_running(struct __test_metadata *_metadata, int fd, uint64_t id)
{
	struct drm_vgpu_get_job j;

	for (;;) {
		ASSERT_EQ(0, _test_get_job(fd, id, &j, NULL));
		ASSERT_NE(VGPU_JOB_DONE, j.state);
		ASSERT_NE(VGPU_JOB_FAILED, j.state);
		if (j.state == VGPU_JOB_RUNNING)
			return;
		usleep(1000);
	}
}

/* Wait for a sync_file to signal (poll() touches no driver code). */
static inline int sync_file_wait(int sf)
{
	struct pollfd p = { .fd = sf, .events = POLLIN };

	return poll(&p, 1, -1) == 1 && p.revents == POLLIN ? 0 : -1;
}

/*
 * Wait for a sync_file to signal; its status (1, or -errno).  The info
 * ioctl names the fence's timeline through its drm_sched scheduler: only
 * while the device's drm_device exists (see docs/driver.md).
 */
static inline int sync_file_status(int sf)
{
	struct sync_file_info info = { 0 };

	if (sync_file_wait(sf))
		return -1000;
	if (ioctl(sf, SYNC_IOC_FILE_INFO, &info))
		return -1001;
	return info.status;
}

/*
 * On a fresh file: a kernel that never ends on the default queue and the store job
 * behind it, both on the device (RUNNING); sf[] get sync_files of their
 * fences.  The store's data BO stays mapped at *@data.
 */
static inline void jobs_in_flight(struct __test_metadata *_metadata, int fd, int sf[2],
			   struct vgpu_prog *sp_out)
{
	struct vgpu_prog hp, *spp = sp_out, sp;
	struct drm_vgpu_submit s;
	struct drm_vgpu_sync out = { 0 };
	uint32_t h[3];

	ASSERT_EQ(0, vgpu_prog_load(fd, &hp, "l:\n  BRA l ;\n  EXIT ;\n", 4096));
	ASSERT_EQ(0, vgpu_prog_load(fd, &sp, vgpu_store_src, 4096));
	*(uint64_t *)sp.param = sp.data_va;
	*(uint32_t *)((char *)sp.param + 8) = 7;
	vgpu_prog_unmap(&hp);

	ASSERT_EQ(0, _test_syncobj_create(fd, &out.handle));
	vgpu_prog_submit_args(&hp, &s, h, 1, 32);
	s.launch.budget = ~0ull;
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	ASSERT_EQ(0, _test_submit(fd, &s));
	wait_running(_metadata, fd, s.job_id);
	sf[0] = syncobj_sync_file(fd, out.handle);
	ASSERT_LE(0, sf[0]);

	ASSERT_EQ(0, _test_syncobj_create(fd, &out.handle));
	vgpu_prog_submit_args(&sp, &s, h, 4, 64);
	s.out_syncs = (uintptr_t)&out;
	s.out_sync_count = 1;
	ASSERT_EQ(0, _test_submit(fd, &s));
	wait_running(_metadata, fd, s.job_id);
	sf[1] = syncobj_sync_file(fd, out.handle);
	ASSERT_LE(0, sf[1]);
	*spp = sp;
}

/* The device works: a store job on a fresh file computes its result. */
static inline void device_works(struct __test_metadata *_metadata, int fd)
{
	struct drm_vgpu_submit s;
	struct vgpu_prog p;
	uint32_t h[3];

	ASSERT_EQ(0, vgpu_prog_load(fd, &p, vgpu_store_src, 4096));
	*(uint64_t *)p.param = p.data_va;
	*(uint32_t *)((char *)p.param + 8) = 11;
	vgpu_prog_submit_args(&p, &s, h, 4, 64);
	ASSERT_EQ(0, _test_submit(fd, &s));
	ASSERT_EQ(0, _test_wait_bo(fd, p.data_h, vgpu_wait_ns(60)));
	ASSERT_EQ(0, check_store(p.data, 256, 11));
	vgpu_prog_unmap(&p);
}

/* The device's SM threads (debugfs queues), or -errno. */
static inline int sm_threads(const char *dir)
{
	return (int)vgpu_queues_num(dir, "sm_threads");
}

/* Until job @id has ended: its GET_JOB answer in *@j. */
static inline void wait_ended(struct __test_metadata *_metadata, int fd, uint64_t id,
		       struct drm_vgpu_get_job *j)
{
	int64_t end = vgpu_now_ns() + vgpu_wait_ns(60);

	for (;;) {
		ASSERT_EQ(0, _test_get_job(fd, id, j, NULL));
		if (j->state == VGPU_JOB_DONE || j->state == VGPU_JOB_FAILED)
			return;
		ASSERT_LT(vgpu_now_ns(), end);
		usleep(1000);
	}
}

#endif
