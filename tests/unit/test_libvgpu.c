// SPDX-License-Identifier: MIT
/*
 * libvgpu's public API (libvgpu/vgpu.h) on whichever backend
 * vgpu_device_open(NULL) gives: sim on the host (no vgpu device there),
 * drm in the guest, where tests/selftests/vgpu builds this same file
 * statically and runs it after vgpu.ko's kselftests with VGPU_BACKEND=drm.
 *
 * Every call's success and error paths with their exact errnos, results
 * of real kernels, exceptions decoded, concurrent launches, timeline
 * dependencies and dma-buf sharing.  Where the backends legitimately
 * differ (sim runs a job when it is submitted, drm on the device later;
 * sim-only and drm-only calls) a test branches on vgpu_device_backend()
 * and asserts each backend's own behaviour.
 *
 * Environment: VGPU_BACKEND (sim, drm) as the library reads it;
 * VGPU_TEST_DEVICES=N (the guest runner sets it) asserts that the drm
 * backend finds exactly N vgpu devices, so that the tests meant for two
 * devices cannot quietly fall back to two files of one.
 *
 * This file: devices and threads.  Buffer objects and programs:
 * test_libvgpu_bo.c; arguments, launches and jobs: test_libvgpu_launch.c;
 * exceptions, syncobjs and dependencies: test_libvgpu_sync.c.  What they
 * share: libvgpu_test.h.
 */

#include "libvgpu_test.h"

/* ==================================================================== */
/* Devices                                                              */
/* ==================================================================== */

TEST(backend_names)
{
	EXPECT_STREQ("auto", vgpu_backend_name(VGPU_BACKEND_AUTO));
	EXPECT_STREQ("drm", vgpu_backend_name(VGPU_BACKEND_DRM));
	EXPECT_STREQ("sim", vgpu_backend_name(VGPU_BACKEND_SIM));
	EXPECT_EQ(NULL, vgpu_backend_name((enum vgpu_backend)7));
}

TEST_F(libvgpu, device_open_default_backend)
{
	const char *env = getenv("VGPU_BACKEND");
	struct vgpu_device *dev = self->dev;
	enum vgpu_backend want;
	unsigned int n = 99;

	EXPECT_EQ(0, vgpu_device_list(NULL, 0, &n));
	if (env && !strcmp(env, "sim"))
		want = VGPU_BACKEND_SIM;
	else if (env && !strcmp(env, "drm"))
		want = VGPU_BACKEND_DRM;
	else
		want = n ? VGPU_BACKEND_DRM : VGPU_BACKEND_SIM;
	EXPECT_EQ(want, vgpu_device_backend(dev));
	printf("  backend %s, %u vgpu device(s)\n",
	       vgpu_backend_name(vgpu_device_backend(dev)), n);
}

TEST(device_open_errors)
{
	struct vgpu_device *dev = (struct vgpu_device *)0x1;
	int fd;

	EXPECT_EQ(-EINVAL, vgpu_device_open(NULL, NULL));
	EXPECT_EQ(-EINVAL, vgpu_device_open("nosuch", &dev));
	EXPECT_EQ(-EINVAL, vgpu_device_open("0000:00:03", &dev));
	/* not a vgpu device, no such node, no such slot */
	EXPECT_EQ(-ENODEV, vgpu_device_open("/dev/null", &dev));
	EXPECT_EQ(-ENODEV, vgpu_device_open("/dev/dri/renderD255", &dev));
	EXPECT_EQ(-ENODEV, vgpu_device_open("00ff:ff:1f.7", &dev));
	/* nothing written on failure */
	EXPECT_EQ((struct vgpu_device *)0x1, dev);
	EXPECT_EQ(-EINVAL, vgpu_device_open_fd(-1, &dev));
	fd = open("/dev/null", O_RDWR);
	EXPECT_EQ(-EINVAL, vgpu_device_open_fd(fd, NULL));
	EXPECT_EQ(-ENODEV, vgpu_device_open_fd(fd, &dev));
	/* the caller's fd stays open */
	EXPECT_GE(fcntl(fd, F_GETFD), 0);
	close(fd);
	vgpu_device_close(NULL); /* a no-op */
}

TEST(device_open_env)
{
	const char *old = getenv("VGPU_BACKEND");
	char *saved = old ? strdup(old) : NULL;
	struct vgpu_device *dev = NULL;
	unsigned int n = 0;

	setenv("VGPU_BACKEND", "bogus", 1);
	EXPECT_EQ(-EINVAL, vgpu_device_open(NULL, &dev));
	EXPECT_EQ(-EINVAL, vgpu_device_open("", &dev));
	EXPECT_EQ(-EINVAL, vgpu_device_open("auto", &dev));
	/* an explicit backend does not read the environment */
	EXPECT_EQ(0, vgpu_device_open("sim", &dev));
	vgpu_device_close(dev);

	setenv("VGPU_BACKEND", "sim", 1);
	dev = NULL;
	EXPECT_EQ(0, vgpu_device_open(NULL, &dev));
	if (dev)
		EXPECT_EQ(VGPU_BACKEND_SIM, (int)vgpu_device_backend(dev));
	vgpu_device_close(dev);

	EXPECT_EQ(0, vgpu_device_list(NULL, 0, &n));
	setenv("VGPU_BACKEND", "drm", 1);
	dev = NULL;
	EXPECT_EQ(n ? 0 : -ENODEV, vgpu_device_open(NULL, &dev));
	if (dev)
		EXPECT_EQ(VGPU_BACKEND_DRM, (int)vgpu_device_backend(dev));
	vgpu_device_close(dev);

	setenv("VGPU_BACKEND", "auto", 1);
	dev = NULL;
	EXPECT_EQ(0, vgpu_device_open(NULL, &dev));
	if (dev)
		EXPECT_EQ(n ? VGPU_BACKEND_DRM : VGPU_BACKEND_SIM,
			  (int)vgpu_device_backend(dev));
	vgpu_device_close(dev);

	if (saved)
		setenv("VGPU_BACKEND", saved, 1);
	else
		unsetenv("VGPU_BACKEND");
	free(saved);
}

TEST(device_list)
{
	struct vgpu_device_desc descs[8];
	unsigned int n = 99, n1 = 0, want = expected_devices();

	EXPECT_EQ(-EINVAL, vgpu_device_list(descs, 8, NULL));
	EXPECT_EQ(-EINVAL, vgpu_device_list(NULL, 1, &n));
	EXPECT_EQ(0, vgpu_device_list(NULL, 0, &n));
	ASSERT_EQ(0, vgpu_device_list(descs, 8, &n1));
	EXPECT_EQ(n, n1);
	if (want)
		EXPECT_EQ(want, n);
	for (unsigned int i = 0; i < n && i < 8; i++) {
		struct vgpu_device *dev = NULL;
		struct vgpu_device_info info;

		EXPECT_EQ(0x7690u, descs[i].vendor_id);
		EXPECT_EQ(0x0001u, descs[i].device_id);
		EXPECT_EQ(1u, descs[i].revision);
		EXPECT_EQ(0, strncmp(descs[i].node, "/dev/dri/renderD", 16));
		EXPECT_EQ(12u, strlen(descs[i].pci_slot));
		if (i)
			EXPECT_LT(strcmp(descs[i - 1].pci_slot, descs[i].pci_slot), 0);
		/* by slot and by node: the same device */
		ASSERT_EQ(0, vgpu_device_open(descs[i].pci_slot, &dev));
		ASSERT_EQ(0, vgpu_device_query(dev, &info));
		EXPECT_STREQ(descs[i].pci_slot, info.pci_slot);
		EXPECT_STREQ(descs[i].node, info.node);
		vgpu_device_close(dev);
		ASSERT_EQ(0, vgpu_device_open(descs[i].node, &dev));
		ASSERT_EQ(0, vgpu_device_query(dev, &info));
		EXPECT_STREQ(descs[i].pci_slot, info.pci_slot);
		vgpu_device_close(dev);
	}
	/* fewer entries than devices: count says how many there are */
	if (n > 1) {
		EXPECT_EQ(0, vgpu_device_list(descs, 1, &n1));
		EXPECT_EQ(n, n1);
	}
	if (n) {
		struct vgpu_device *dev = NULL;
		struct vgpu_device_info info;

		ASSERT_EQ(0, vgpu_device_open("drm", &dev));
		ASSERT_EQ(0, vgpu_device_query(dev, &info));
		EXPECT_STREQ(descs[0].pci_slot, info.pci_slot);
		vgpu_device_close(dev);
	} else {
		struct vgpu_device *dev = NULL;

		EXPECT_EQ(-ENODEV, vgpu_device_open("drm", &dev));
	}
}

TEST_F(libvgpu, device_fd_and_open_fd)
{
	struct vgpu_device *dev = self->dev, *d2 = NULL;
	int fd;

	fd = vgpu_device_fd(dev);
	if (is_sim(dev)) {
		EXPECT_EQ(-EOPNOTSUPP, fd);
	} else {
		struct vgpu_device_info a, b;

		ASSERT_GE(fd, 0);
		EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
		ASSERT_EQ(0, vgpu_device_open_fd(fd, &d2));
		EXPECT_EQ(VGPU_BACKEND_DRM, (int)vgpu_device_backend(d2));
		EXPECT_TRUE(vgpu_device_fd(d2) >= 0 && vgpu_device_fd(d2) != fd);
		ASSERT_EQ(0, vgpu_device_query(dev, &a));
		ASSERT_EQ(0, vgpu_device_query(d2, &b));
		EXPECT_STREQ(b.node, a.node);
		EXPECT_STREQ(b.pci_slot, a.pci_slot);
		vgpu_device_close(d2);
		/* the library dup'd: our fd is still open */
		EXPECT_GE(fcntl(fd, F_GETFD), 0);
	}
}

TEST_F(libvgpu, device_params)
{
	struct vgpu_device *dev = self->dev;
	uint64_t v = 0;

	EXPECT_EQ(0x76900001u, param(dev, VGPU_PARAM_DEVICE_ID));
	EXPECT_EQ(1u, param(dev, VGPU_PARAM_REVISION));
	EXPECT_EQ(VGPU_WARP_SIZE, param(dev, VGPU_PARAM_WARP_SIZE));
	EXPECT_EQ(VGPU_MAX_THREADS_PER_CTA, param(dev, VGPU_PARAM_MAX_THREADS));
	EXPECT_EQ(VGPU_NUM_NAMED_BARRIERS, param(dev, VGPU_PARAM_BARRIERS));
	EXPECT_EQ(VGPU_MAX_PARAM_BYTES, param(dev, VGPU_PARAM_MAX_PARAM));
	EXPECT_GE(param(dev, VGPU_PARAM_SMS), 1u);
	EXPECT_GE(param(dev, VGPU_PARAM_QUEUES), 1u);
	EXPECT_GE(param(dev, VGPU_PARAM_SMEM), 48u * 1024);
	EXPECT_GE(param(dev, VGPU_PARAM_MAX_CODE), 4096u);
	EXPECT_GE(param(dev, VGPU_PARAM_VA_SIZE), VGPU_BO_MAX_SIZE);
	EXPECT_EQ(0u, param(dev, VGPU_PARAM_VA_START) % 4096);
	EXPECT_GE(param(dev, VGPU_PARAM_VA_BITS), 32u);
	EXPECT_LE(param(dev, VGPU_PARAM_VA_START) + param(dev, VGPU_PARAM_VA_SIZE),
		  1ull << param(dev, VGPU_PARAM_VA_BITS));
	EXPECT_GE(param(dev, VGPU_PARAM_DRIVER_VERSION), 1u << 16);
	EXPECT_GE(param(dev, VGPU_PARAM_HW_VERSION), 1u << 16);
	EXPECT_EQ(-EINVAL, vgpu_device_get_param(dev, VGPU_PARAM_COUNT, &v));
	EXPECT_EQ(-EINVAL, vgpu_device_get_param(dev, 0xffffffffu, &v));
	EXPECT_EQ(-EINVAL, vgpu_device_get_param(dev, VGPU_PARAM_SMS, NULL));
}

TEST_F(libvgpu, device_query)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_device_info info;
	uint64_t ver;

	EXPECT_EQ(-EINVAL, vgpu_device_query(dev, NULL));
	ASSERT_EQ(0, vgpu_device_query(dev, &info));
	EXPECT_EQ(info.backend, vgpu_device_backend(dev));
	for (uint32_t p = 0; p < VGPU_PARAM_COUNT; p++) {
		if (p == VGPU_PARAM_RESET_COUNT || p == VGPU_PARAM_FILE_RESET_COUNT)
			continue; /* may move between the two reads */
		EXPECT_EQ(info.param[p], param(dev, p));
	}
	ver = info.param[VGPU_PARAM_DRIVER_VERSION];
	if (is_sim(dev)) {
		char want[64];

		EXPECT_STREQ("", info.node);
		EXPECT_STREQ("", info.pci_slot);
		snprintf(want, sizeof(want), "vgpu-sim %u.%u",
			 (unsigned int)(ver >> 16), (unsigned int)(ver & 0xffff));
		EXPECT_EQ(0, strncmp(info.driver, want, strlen(want)));
	} else {
		char want[64];

		EXPECT_EQ(0, strncmp(info.node, "/dev/dri/", 9));
		EXPECT_EQ(12u, strlen(info.pci_slot));
		snprintf(want, sizeof(want), "vgpu %u.%u",
			 (unsigned int)(ver >> 16), (unsigned int)(ver & 0xffff));
		EXPECT_EQ(0, strncmp(info.driver, want, strlen(want)));
	}
	printf("  %s: %s %s, %llu SMs, %llu queues\n", info.driver, info.node,
	       info.pci_slot, (unsigned long long)info.param[VGPU_PARAM_SMS],
	       (unsigned long long)info.param[VGPU_PARAM_QUEUES]);
}

TEST_F(libvgpu, device_sim_options)
{
	struct vgpu_device *dev = self->dev;

	if (is_sim(dev)) {
		EXPECT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_TMA_LATENCY, 10));
		EXPECT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_TMA_BANDWIDTH, 256));
		EXPECT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_TRY_WAIT_LIMIT, 1000));
		EXPECT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_TMA_LATENCY, 0));
		EXPECT_EQ(-EINVAL, vgpu_device_set_sim_option(dev, (enum vgpu_sim_option)0, 1));
		EXPECT_EQ(-EINVAL, vgpu_device_set_sim_option(dev, (enum vgpu_sim_option)99, 1));
	} else {
		EXPECT_EQ(-EOPNOTSUPP, vgpu_device_set_sim_option(dev, VGPU_SIM_TMA_LATENCY, 10));
		EXPECT_EQ(-EOPNOTSUPP, vgpu_device_set_trace(dev, stderr));
		EXPECT_EQ(-EOPNOTSUPP, vgpu_device_set_trace(dev, NULL));
	}
}

/*
 * The SMs' shape GET_PARAM reports: the model's (the sim's VGPU_SIM_MODEL
 * as the device's model=), what a runtime's occupancy arithmetic reads.
 */
TEST_F(libvgpu, device_model)
{
	struct vgpu_device *dev = self->dev;

	EXPECT_LE(param(dev, VGPU_PARAM_SMEM), param(dev, VGPU_PARAM_SMEM_SM));
	EXPECT_GE(param(dev, VGPU_PARAM_CTAS_SM), 1u);
	EXPECT_GE(param(dev, VGPU_PARAM_WARPS_SM), 32u);
	EXPECT_EQ(VGPU_DEFAULT_REGS_PER_SM, param(dev, VGPU_PARAM_REGS_SM));
	EXPECT_EQ(VGPU_PORTABLE_CLUSTER_CTAS, param(dev, VGPU_PARAM_CLUSTER));
	EXPECT_EQ(VGPU_MAX_CLUSTER_CTAS, param(dev, VGPU_PARAM_CLUSTER_MAX));
	if (!is_sim(dev))
		return;
	if (!getenv("VGPU_SIM_MODEL")) {
		EXPECT_EQ(VGPU_MODEL_VGPU, param(dev, VGPU_PARAM_MODEL));
		EXPECT_EQ(1u, param(dev, VGPU_PARAM_CTAS_SM));
		EXPECT_EQ(32u, param(dev, VGPU_PARAM_WARPS_SM));
		EXPECT_EQ(228u * 1024, param(dev, VGPU_PARAM_SMEM));
		EXPECT_EQ(228u * 1024, param(dev, VGPU_PARAM_SMEM_SM));
	}
	ASSERT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_MODEL, VGPU_MODEL_H100));
	EXPECT_EQ(VGPU_MODEL_H100, param(dev, VGPU_PARAM_MODEL));
	EXPECT_GE(param(dev, VGPU_PARAM_SMS), 132u);
	EXPECT_EQ(227u * 1024, param(dev, VGPU_PARAM_SMEM));
	EXPECT_EQ(228u * 1024, param(dev, VGPU_PARAM_SMEM_SM));
	EXPECT_EQ(32u, param(dev, VGPU_PARAM_CTAS_SM));
	EXPECT_EQ(64u, param(dev, VGPU_PARAM_WARPS_SM));
	EXPECT_EQ(-EINVAL, vgpu_device_set_sim_option(dev, VGPU_SIM_MODEL, 2));
	EXPECT_EQ(VGPU_MODEL_H100, param(dev, VGPU_PARAM_MODEL));
	ASSERT_EQ(0, vgpu_device_set_sim_option(dev, VGPU_SIM_MODEL, VGPU_MODEL_VGPU));
	EXPECT_EQ(228u * 1024, param(dev, VGPU_PARAM_SMEM));
	EXPECT_EQ(1u, param(dev, VGPU_PARAM_CTAS_SM));
}

/* $VGPU_SIM_MODEL picks the model when a sim device opens; a bad name fails. */
TEST(device_sim_model_env)
{
	struct vgpu_device *dev = NULL;
	uint64_t v = 0;

	setenv("VGPU_SIM_MODEL", "h100", 1);
	ASSERT_EQ(0, vgpu_device_open("sim", &dev));
	EXPECT_EQ(0, vgpu_device_get_param(dev, VGPU_PARAM_MODEL, &v));
	EXPECT_EQ(VGPU_MODEL_H100, v);
	EXPECT_EQ(0, vgpu_device_get_param(dev, VGPU_PARAM_CTAS_SM, &v));
	EXPECT_EQ(32u, v);
	vgpu_device_close(dev);
	setenv("VGPU_SIM_MODEL", "a100", 1);
	EXPECT_EQ(-EINVAL, vgpu_device_open("sim", &dev));
	unsetenv("VGPU_SIM_MODEL");
}

TEST_F(libvgpu, device_sim_trace)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_launch_config cfg = { .block = { 256 } };
	char *text = NULL;
	size_t len = 0, len1;
	FILE *f;

	if (!is_sim(dev))
		return; /* device_sim_options checks drm's -EOPNOTSUPP */
	prog = prog_new(dev, reduce_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, vgpu_device_set_trace(dev, f));
	EXPECT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	fflush(f);
	len1 = len;
	EXPECT_GT(len1, 0u);
	/* 8 warps arrive at barrier 0 nine times: arrivals are traced */
	if (text) {
		unsigned int lines = 0;

		for (const char *p = text; *p; p++)
			lines += *p == '\n';
		EXPECT_GE(lines, 9u * 8);
	}
	/* NULL stops tracing */
	EXPECT_EQ(0, vgpu_device_set_trace(dev, NULL));
	EXPECT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	fflush(f);
	EXPECT_EQ(len1, len);
	fclose(f);
	free(text);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

/*
 * Timelines on either backend (the device records on drm, the core on
 * sim): the records agree with the job's own counters and the program's
 * barrier rounds; a small buffer keeps the first records whole and counts
 * the rest as dropped; a launch without the flag has none.
 */
TEST_F(libvgpu, job_timeline)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_launch_config cfg = { .block = { 256 }, .flags = VGPU_LAUNCH_TIMELINE };
	struct vgpu_job *job = NULL, *small = NULL, *none = NULL;
	const struct vgpu_trace_event *ev, *ev2;
	struct vgpu_job_status st;
	uint32_t n = 0, n2 = 0, begin = 0, end = 0, complete = 0, exits = 0;
	uint64_t dropped = 1, dropped2 = 0, insns = 0;
	uint32_t out[2] = { 0, 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	prog = prog_new(dev, reduce_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, &job));
	ASSERT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	ASSERT_EQ(0, vgpu_bo_read(bo, 0, out, sizeof(out)));
	EXPECT_EQ(5559680u, out[0]); /* the sum of 0..255 squared */
	EXPECT_EQ(9u, out[1]);
	ASSERT_EQ(0, vgpu_job_timeline(job, &ev, &n, &dropped));
	ASSERT_EQ(0, vgpu_job_status(job, &st));
	EXPECT_EQ(0u, dropped);
	for (uint32_t i = 0; i < n; i++) {
		switch (ev[i].type) {
		case VGPU_TR_RUN: insns += ev[i].count; break;
		case VGPU_TR_CTA_BEGIN: begin++; break;
		case VGPU_TR_CTA_END: end++; break;
		case VGPU_TR_EXIT: exits++; break;
		case VGPU_TR_BAR_COMPLETE:
			complete++;
			EXPECT_EQ(0u, ev[i].id);
			EXPECT_EQ(256u, ev[i].expected);
			break;
		default: break;
		}
	}
	EXPECT_EQ(st.warp_insns, insns);
	EXPECT_EQ(1u, begin);
	EXPECT_EQ(1u, end);
	EXPECT_EQ(8u, exits);
	EXPECT_EQ(9u, complete); /* the BAR.SYNCs the kernel runs */
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, vgpu_job_write_timeline(job, f));
	fclose(f);
	ASSERT_NE(NULL, text);
	EXPECT_EQ(0, strncmp(text, "{\"displayTimeUnit\"", 18));
	EXPECT_NE(NULL, strstr(text, "\"name\":\"barrier 0\""));
	free(text);

	/* room for 2 records */
	ASSERT_EQ(0, vgpu_device_set_timeline_bytes(dev, 32 + 2 * 64));
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, &small));
	ASSERT_EQ(0, vgpu_job_wait(small, WAIT_NS));
	ASSERT_EQ(0, vgpu_job_timeline(small, &ev2, &n2, &dropped2));
	EXPECT_EQ(2u, n2);
	EXPECT_EQ((uint64_t)n - 2, dropped2);
	EXPECT_EQ(0, memcmp(ev, ev2, 2 * sizeof(*ev)));

	cfg.flags = 0;
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), &cfg, args, &none));
	ASSERT_EQ(0, vgpu_job_wait(none, WAIT_NS));
	EXPECT_EQ(-ENODATA, vgpu_job_timeline(none, &ev2, &n2, NULL));
	vgpu_job_free(none);
	vgpu_job_free(small);
	vgpu_job_free(job);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

/*
 * vgpu-trace's workload (this program run again with
 * VGPU_TEST_TRACE_WORKLOAD set): job A signals a syncobj that job B
 * waits for; job C writes the buffer B wrote (an implicit dependency).
 */
static int trace_workload(void)
{
	struct vgpu_device *dev = dev_open();
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_queue *q = NULL;
	struct vgpu_bo *bo = NULL, *bo2 = NULL;
	struct vgpu_syncobj *sync = NULL;
	struct vgpu_job *job[3] = { NULL };
	struct vgpu_sync_point sp;
	struct vgpu_launch_config cfg = { .block = { 256 } };
	int ret = 1;

	if (!dev)
		return 1;
	prog = prog_new(dev, reduce_src);
	if (!prog || vgpu_bo_new(dev, 4096, 0, &bo) || vgpu_bo_new(dev, 4096, 0, &bo2) ||
	    vgpu_syncobj_new(dev, 0, &sync) || vgpu_args_new(kern(prog), &args))
		goto out;
	sp = (struct vgpu_sync_point){ sync, 0 };
	cfg.signal = &sp;
	cfg.nsignal = 1;
	if (vgpu_args_set_bo(args, 0, bo2, 0) ||
	    vgpu_kernel_launch(kern(prog), &cfg, args, &job[0]))
		goto out;
	cfg = (struct vgpu_launch_config){ .block = { 256 }, .wait = &sp, .nwait = 1 };
	if (vgpu_args_set_bo(args, 0, bo, 0) ||
	    vgpu_kernel_launch(kern(prog), &cfg, args, &job[1]))
		goto out;
	if (vgpu_queue_new(dev, VGPU_QUEUE_PRIORITY_LOW, &q))
		goto out;
	cfg = (struct vgpu_launch_config){ .block = { 256 }, .queue = q };
	if (vgpu_kernel_launch(kern(prog), &cfg, args, &job[2]))
		goto out;
	ret = 0;
	for (int i = 0; i < 3; i++)
		ret |= vgpu_job_wait(job[i], WAIT_NS) != 0;
out:
	for (int i = 0; i < 3; i++)
		vgpu_job_free(job[i]);
	vgpu_queue_free(q);
	vgpu_args_free(args);
	vgpu_syncobj_free(sync);
	vgpu_bo_free(bo);
	vgpu_bo_free(bo2);
	vgpu_program_free(prog);
	vgpu_device_close(dev);
	return ret;
}

__attribute__((constructor)) static void maybe_trace_workload(void)
{
	if (getenv("VGPU_TEST_TRACE_WORKLOAD"))
		_exit(trace_workload());
}

/* "key":NUMBER of a line of the trace (-1 if absent) */
static double line_num(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtod(p + strlen(key), NULL) : -1;
}

/*
 * vgpu-trace records the driver's tracepoints and each job's timeline
 * (drm only: tracefs, root): three jobs as slices on their queues, each
 * with its kernel and its CTAs, a dependency flow for each dependency the
 * driver recorded (A -> B through the syncobj at least), the scheduler's
 * events; one event per line, in time order on each track.
 */
TEST_F(libvgpu, system_timeline)
{
	char exe[PATH_MAX], tool[PATH_MAX + 16], cmd[3 * PATH_MAX + 128], line[4096];
	char fences[16][40];
	int nf, want;
	const char *out = "/tmp/vgpu-system-timeline.json";
	int jobs = 0, kernels = 0, deps = 0, sched = 0, ctas = 0, bad_order = 0;
	double last_pid = -1, last_tid = -1, last_ts = -1;
	ssize_t n;
	FILE *f;

	if (is_sim(self->dev) || geteuid())
		SKIP(return, "needs the drm backend, tracefs and root");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = '\0';
	/* the kselftest install puts vgpu-trace beside this program */
	snprintf(tool, sizeof(tool), "%.*s/vgpu-trace",
		 (int)(strrchr(exe, '/') - exe), exe);
	if (access(tool, X_OK))
		snprintf(tool, sizeof(tool), "vgpu-trace");
	snprintf(cmd, sizeof(cmd), "VGPU_TRACE_KEEP=1 VGPU_TEST_TRACE_WORKLOAD=1 '%s' -o %s -- '%s'",
		 tool, out, exe);
	ASSERT_EQ(0, system(cmd));
	f = fopen(out, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		double pid = line_num(line, "\"pid\":"), tid = line_num(line, "\"tid\":");
		double ts = line_num(line, "\"ts\":");

		jobs += !!strstr(line, "\"cat\":\"job\"");
		kernels += !!strstr(line, "\"cat\":\"kernel\"");
		deps += !!strstr(line, "\"cat\":\"dependency\"");
		sched += !!strstr(line, "\"cat\":\"drm_sched\"");
		ctas += strstr(line, "\"process_name\"") && strstr(line, " CTA (0,0,0)");
		if (ts < 0)
			continue;
		if (pid == last_pid && tid == last_tid && ts < last_ts)
			bad_order++;
		last_pid = pid;
		last_tid = tid;
		last_ts = ts;
	}
	fclose(f);
	EXPECT_EQ(3, jobs);
	EXPECT_EQ(3, kernels);
	EXPECT_EQ(3, ctas);
	/* A -> B and B -> C: a start and a finish each (C may also wait for
	 * A through the buffer B and A share: at least the two) */
	/*
	 * A dependency is a flow when the driver recorded it: every
	 * vgpu_job_dep naming a traced job's finished fence.  A -> B (the
	 * syncobj) always is; C's on B's buffer only while B has not
	 * completed when C is submitted (a slow kernel may finish B first).
	 */
	f = fopen("/tmp/vgpu-system-timeline.json.txt", "r");
	ASSERT_NE(NULL, f);
	nf = 0;
	want = 0;
	{
		while (fgets(line, sizeof(line), f)) {
			const char *p = strstr(line, "fence=");

			if (!p || nf == 16)
				continue;
			if (strstr(line, "vgpu_job_submit:"))
				sscanf(p + 6, "%39s", fences[nf++]);
		}
		rewind(f);
		while (fgets(line, sizeof(line), f)) {
			const char *p = strstr(line, "fence=");
			char fe[40];

			if (!p || !strstr(line, "vgpu_job_dep:") || sscanf(p + 6, "%39s", fe) != 1)
				continue;
			for (int k = 0; k < nf; k++)
				if (!strcmp(fe, fences[k])) {
					want++;
					break;
				}
		}
		fclose(f);
		EXPECT_GE(want, 1); /* A -> B */
		EXPECT_EQ(2 * want, deps);
	}
	EXPECT_GE(sched, 3);
	EXPECT_EQ(0, bad_order);
	if (deps < 2) { /* what the trace says of the jobs */
		f = fopen(out, "r");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "\"cat\":\"job\"") || strstr(line, "dependency") ||
			    strstr(line, "waits for"))
				TH_LOG("%s", line);
		if (f)
			fclose(f);
		f = fopen("/tmp/vgpu-system-timeline.json.txt", "r");
		while (f && fgets(line, sizeof(line), f))
			if (strstr(line, "vgpu_job"))
				TH_LOG("%s", line);
		if (f)
			fclose(f);
	}
	remove(out);
	remove("/tmp/vgpu-system-timeline.json.txt");
}

TEST(device_closed_with_objects_alive)
{
	struct vgpu_device *dev = dev_open(), *other;
	struct vgpu_program *prog = NULL, *p2 = NULL;
	struct vgpu_syncobj *sync = NULL, *s2 = NULL;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL, *b2 = NULL;
	struct vgpu_job *job = NULL;
	struct vgpu_device_info info;
	uint32_t *map = NULL, word = 0;
	uint64_t v;
	char log[256];
	int fd = -1;

	ASSERT_NE(NULL, dev);
	prog = prog_new(dev, store_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_syncobj_new(dev, 0, &sync));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, 3));
	/* a job launched before the close completes and can be waited for */
	ASSERT_EQ(0,
		  vgpu_kernel_launch(kern(prog), &(struct vgpu_launch_config){
					     .block = { 64 } }, args, &job));
	ASSERT_EQ(0, vgpu_bo_export(bo, &fd));

	vgpu_device_close(dev);

	/* new objects, launches and queries: -ENODEV */
	EXPECT_EQ(-ENODEV, vgpu_bo_new(dev, 4096, 0, &b2));
	EXPECT_EQ(-ENODEV, vgpu_bo_import(dev, fd, &b2));
	EXPECT_EQ(-ENODEV, vgpu_syncobj_new(dev, 0, &s2));
	EXPECT_EQ(-ENODEV,
		  vgpu_program_assemble(dev, store_src, strlen(store_src), NULL,
					&p2, log, sizeof(log)));
	EXPECT_EQ(-ENODEV, vgpu_kernel_launch(kern(prog), NULL, args, NULL));
	EXPECT_EQ(-ENODEV, vgpu_device_get_param(dev, VGPU_PARAM_SMS, &v));
	EXPECT_EQ(-ENODEV, vgpu_device_query(dev, &info));
	EXPECT_EQ(-ENODEV, vgpu_device_set_sim_option(dev, VGPU_SIM_TMA_LATENCY, 1));
	EXPECT_EQ(-ENODEV, vgpu_device_set_trace(dev, NULL));
	EXPECT_TRUE(b2 == NULL && s2 == NULL && p2 == NULL);

	/* what exists keeps working */
	EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	EXPECT_EQ(0, vgpu_bo_map(bo, (void **)&map));
	if (map)
		EXPECT_EQ(0u, store_bad(map, 64, 3));
	EXPECT_EQ(0, vgpu_bo_write(bo, 4092, &(uint32_t){ 0xfeed }, 4));
	EXPECT_EQ(0, vgpu_bo_read(bo, 4092, &word, 4));
	EXPECT_EQ(0xfeedu, word);
	EXPECT_EQ(0, vgpu_bo_wait(bo, 0));
	EXPECT_EQ(0, vgpu_syncobj_signal(sync, 0));
	EXPECT_EQ(0, vgpu_syncobj_wait(sync, 0, 0));
	/* the exported buffer lives on in another device */
	ASSERT_NE(NULL, (other = dev_open()));
	if (vgpu_device_backend(other) == vgpu_device_backend(dev)) {
		EXPECT_EQ(0, vgpu_bo_import(other, fd, &b2));
		if (b2) {
			EXPECT_EQ(0, vgpu_bo_read(b2, 4092, &word, 4));
			EXPECT_EQ(0xfeedu, word);
		}
	}
	close(fd);
	vgpu_args_free(args);
	vgpu_syncobj_free(sync);
	vgpu_program_free(prog);
	vgpu_bo_free(bo); /* the last reference: frees the device (ASan: no leak) */
	vgpu_bo_free(b2);
	vgpu_device_close(other);
}

/* ==================================================================== */
/* Threads                                                              */
/* ==================================================================== */

#define NTHREADS 4
#define LAUNCHES 25

struct worker {
	struct vgpu_device *dev;     /* shared, or NULL: open one's own */
	struct vgpu_program *prog;   /* shared, or NULL: assemble one's own */
	uint32_t id;
	unsigned int failures;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct vgpu_device *dev = w->dev;
	struct store s;

	if (!dev && vgpu_device_open(NULL, &dev)) {
		w->failures++;
		return NULL;
	}
	if (store_init(&s, dev, w->prog, 2 * 4096)) {
		w->failures++;
		goto out;
	}
	for (uint32_t i = 0; i < LAUNCHES; i++) {
		uint32_t k = w->id * 1000 + i;
		uint32_t grid = 1 + (i + w->id) % 4;
		int ret = store_run(&s, k, grid, 128);

		if (ret) {
			fprintf(stderr, "  worker %u launch %u: %s\n", w->id, i,
				strerror(-ret));
			w->failures++;
			continue;
		}
		if (store_bad(s.out, grid * 128, k))
			w->failures++;
	}
	store_fini(&s);
out:
	if (!w->dev)
		vgpu_device_close(dev);
	return NULL;
}

static void run_workers(struct __test_metadata *_metadata,
			struct vgpu_device *dev, struct vgpu_program *prog)
{
	struct worker w[NTHREADS];
	pthread_t t[NTHREADS];

	for (uint32_t i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){ .dev = dev, .prog = prog, .id = i + 1 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker_main, &w[i]));
	}
	for (uint32_t i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0u, w[i].failures);
	}
}

TEST_F(libvgpu, threads_share_device_and_program)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;

	prog = prog_new(dev, store_src);
	ASSERT_NE(NULL, prog);
	run_workers(_metadata, dev, prog);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, threads_share_device_own_programs)
{
	struct vgpu_device *dev = self->dev;

	run_workers(_metadata, dev, NULL);
}

TEST(threads_own_devices)
{
	run_workers(_metadata, NULL, NULL);
}

/* Several devices at once: on drm every vgpu device, one thread each. */
TEST(threads_several_devices)
{
	struct vgpu_device_desc descs[8];
	struct vgpu_device *devs[8] = { 0 };
	struct worker w[8];
	pthread_t t[8];
	unsigned int n = 0, want = expected_devices();
	struct vgpu_device *probe = dev_open();

	ASSERT_NE(NULL, probe);
	if (is_sim(probe)) {
		n = 3;
		for (unsigned int i = 0; i < n; i++)
			ASSERT_EQ(0, vgpu_device_open("sim", &devs[i]));
	} else {
		ASSERT_EQ(0, vgpu_device_list(descs, 8, &n));
		if (want)
			EXPECT_EQ(want, n);
		if (n > 8)
			n = 8;
		for (unsigned int i = 0; i < n; i++)
			ASSERT_EQ(0, vgpu_device_open(descs[i].pci_slot, &devs[i]));
	}
	vgpu_device_close(probe);
	for (unsigned int i = 0; i < n; i++) {
		w[i] = (struct worker){ .dev = devs[i], .id = i + 1 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, worker_main, &w[i]));
	}
	for (unsigned int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0u, w[i].failures);
		vgpu_device_close(devs[i]);
	}
}

struct bo_churn {
	struct vgpu_device *dev;
	unsigned int failures;
};

static void *bo_churn_main(void *arg)
{
	struct bo_churn *c = arg;

	for (int i = 0; i < 50; i++) {
		struct vgpu_bo *bo = NULL, *imp = NULL;
		uint32_t v = (uint32_t)i, r = 0;
		int fd = -1;

		if (vgpu_bo_new(c->dev, 4096 * (1 + i % 3), 0, &bo) ||
		    vgpu_bo_write(bo, 8, &v, 4) || vgpu_bo_export(bo, &fd) ||
		    vgpu_bo_import(c->dev, fd, &imp) || imp != bo ||
		    vgpu_bo_read(imp, 8, &r, 4) || r != v)
			c->failures++;
		if (fd >= 0)
			close(fd);
		vgpu_bo_free(imp);
		vgpu_bo_free(bo);
	}
	return NULL;
}

TEST_F(libvgpu, threads_buffer_churn)
{
	struct vgpu_device *dev = self->dev;
	struct bo_churn c[NTHREADS];
	pthread_t t[NTHREADS];

	for (int i = 0; i < NTHREADS; i++) {
		c[i] = (struct bo_churn){ .dev = dev };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, bo_churn_main, &c[i]));
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0u, c[i].failures);
	}
}

/* Many launches in flight at once reuse parameter pages correctly. */
TEST_F(libvgpu, many_launches_in_flight)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_job *jobs[200];
	uint32_t *out = NULL;
	unsigned int bad = 0;

	prog = prog_new(dev, ".kernel put\n.param u64 p\n.param u32 v\n"
			     "  LDP.64 R2, [p] ;\n  LDP.32 R4, [v] ;\n"
			     "  STG.32 [R2], R4 ;\n  EXIT ;\n");
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 200 * 4, 0, &bo));
	ASSERT_EQ(0, vgpu_bo_map(bo, (void **)&out));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	for (uint32_t i = 0; i < 200; i++) {
		jobs[i] = NULL;
		/* the address alone: no implicit sync, all may be in flight */
		ASSERT_EQ(0, vgpu_args_set_u64(args, 0, vgpu_bo_gpu_address(bo) + 4 * i));
		ASSERT_EQ(0, vgpu_args_set_u32(args, 1, 0x1000 + i));
		ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), NULL, args, &jobs[i]));
	}
	for (uint32_t i = 0; i < 200; i++) {
		EXPECT_EQ(0, vgpu_job_wait(jobs[i], WAIT_NS));
		vgpu_job_free(jobs[i]);
	}
	for (uint32_t i = 0; i < 200; i++)
		bad += out[i] != 0x1000 + i;
	EXPECT_EQ(0u, bad);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
}

TEST_HARNESS_MAIN
