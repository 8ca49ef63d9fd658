// SPDX-License-Identifier: MIT
/*
 * libvgpu's buffer objects, programs and kernels on whichever backend
 * vgpu_device_open(NULL) gives (test_libvgpu.c says how each backend runs).
 */

#include "libvgpu_test.h"

/* ==================================================================== */
/* Buffer objects                                                       */
/* ==================================================================== */

TEST_F(libvgpu, bo_sizes)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo = (struct vgpu_bo *)0x1;
	static const struct {
		uint64_t size, rounded;
	} ok[] = { { 1, 4096 }, { 4095, 4096 }, { 4096, 4096 }, { 4097, 8192 },
		   { 1 << 20, 1 << 20 }, { (1 << 20) + 1, (1 << 20) + 4096 } };

	EXPECT_EQ(-EINVAL, vgpu_bo_new(dev, 0, 0, &bo));
	EXPECT_EQ(-E2BIG, vgpu_bo_new(dev, VGPU_BO_MAX_SIZE + 1, 0, &bo));
	EXPECT_EQ(-E2BIG, vgpu_bo_new(dev, VGPU_BO_MAX_SIZE + 4096, 0, &bo));
	EXPECT_EQ(-E2BIG, vgpu_bo_new(dev, UINT64_MAX, 0, &bo));
	EXPECT_EQ(-EINVAL, vgpu_bo_new(dev, 4096, 0, NULL));
	EXPECT_EQ((struct vgpu_bo *)0x1, bo);
	for (unsigned int i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		bo = NULL;
		EXPECT_EQ(0, vgpu_bo_new(dev, ok[i].size, 0, &bo));
		if (!bo)
			continue;
		EXPECT_EQ(ok[i].rounded, vgpu_bo_size(bo));
		vgpu_bo_free(bo);
	}
	vgpu_bo_free(NULL); /* a no-op */
}

TEST_F(libvgpu, bo_flags)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo = NULL;
	static const uint32_t ok[] = { 0, VGPU_BO_READ_ONLY, VGPU_BO_NO_EXEC,
				       VGPU_BO_READ_ONLY | VGPU_BO_NO_EXEC };

	EXPECT_EQ(-EINVAL, vgpu_bo_new(dev, 4096, 1u << 2, &bo));
	EXPECT_EQ(-EINVAL, vgpu_bo_new(dev, 4096, 1u << 31, &bo));
	EXPECT_EQ(-EINVAL, vgpu_bo_new(dev, 4096, ~0u, &bo));
	/* both checks fail: size first, as the driver */
	EXPECT_EQ(-EINVAL, vgpu_bo_new(dev, 0, ~0u, &bo));
	for (unsigned int i = 0; i < 4; i++) {
		bo = NULL;
		EXPECT_EQ(0, vgpu_bo_new(dev, 4096, ok[i], &bo));
		if (!bo)
			continue;
		EXPECT_EQ(ok[i], vgpu_bo_flags(bo));
		vgpu_bo_free(bo);
	}
}

TEST_F(libvgpu, bo_addresses_and_handles)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo[8] = { 0 };
	uint64_t start, end;

	start = param(dev, VGPU_PARAM_VA_START);
	end = start + param(dev, VGPU_PARAM_VA_SIZE);
	for (int i = 0; i < 8; i++)
		ASSERT_EQ(0, vgpu_bo_new(dev, 4096u << i, 0, &bo[i]));
	for (int i = 0; i < 8; i++) {
		uint64_t va = vgpu_bo_gpu_address(bo[i]);

		EXPECT_NE(0u, vgpu_bo_handle(bo[i]));
		EXPECT_EQ(0u, va % 4096);
		EXPECT_TRUE(va >= start && va + vgpu_bo_size(bo[i]) <= end);
		for (int j = 0; j < i; j++) {
			uint64_t vb = vgpu_bo_gpu_address(bo[j]);

			EXPECT_NE(vgpu_bo_handle(bo[i]), vgpu_bo_handle(bo[j]));
			EXPECT_TRUE(va + vgpu_bo_size(bo[i]) <= vb ||
				    vb + vgpu_bo_size(bo[j]) <= va);
		}
	}
	for (int i = 0; i < 8; i++)
		vgpu_bo_free(bo[i]);
}

TEST_F(libvgpu, bo_map)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo = NULL;
	uint8_t *p = NULL, *q = NULL;
	bool zero = true;

	ASSERT_EQ(0, vgpu_bo_new(dev, 3 * 4096, 0, &bo));
	EXPECT_EQ(-EINVAL, vgpu_bo_map(bo, NULL));
	ASSERT_EQ(0, vgpu_bo_map(bo, (void **)&p));
	for (int i = 0; i < 3 * 4096; i++)
		zero &= p[i] == 0;
	EXPECT_TRUE(zero);
	EXPECT_EQ(0, vgpu_bo_map(bo, (void **)&q));
	EXPECT_EQ(q, p);
	memset(p, 0xa5, 3 * 4096);
	EXPECT_EQ(0, vgpu_bo_unmap(bo));
	EXPECT_EQ(0, vgpu_bo_unmap(bo)); /* not mapped: nothing to do */
	q = NULL;
	ASSERT_EQ(0, vgpu_bo_map(bo, (void **)&q));
	EXPECT_EQ(0xa5, q[0]);
	EXPECT_EQ(0xa5, q[3 * 4096 - 1]);
	/* read-only for the GPU only: the CPU may write it */
	vgpu_bo_free(bo);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, VGPU_BO_READ_ONLY, &bo));
	ASSERT_EQ(0, vgpu_bo_map(bo, (void **)&p));
	p[100] = 7;
	EXPECT_EQ(7, p[100]);
	vgpu_bo_free(bo); /* frees the mapping too */
}

/*
 * vgpu_bo_map_at_gpu_address(): the buffer on the host at its GPU
 * address, the same memory as vgpu_bo_map()'s and the kernels'; a range
 * the process already uses is refused, never replaced.
 */
TEST_F(libvgpu, bo_map_at_gpu_address)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo2;
	struct store s;
	uint32_t *p = NULL, *q = NULL, word = 0;
	void *taken;
	uint64_t va;

	ASSERT_EQ(0, store_init(&s, dev, NULL, 4 * 4096));
	va = vgpu_bo_gpu_address(s.bo);
	EXPECT_EQ(-EINVAL, vgpu_bo_map_at_gpu_address(s.bo, NULL));
	ASSERT_EQ(0, vgpu_bo_map_at_gpu_address(s.bo, (void **)&p));
	EXPECT_EQ(va, (uint64_t)(uintptr_t)p);
	EXPECT_EQ(0, vgpu_bo_map_at_gpu_address(s.bo, (void **)&q));
	EXPECT_EQ(p, q); /* mapped once */
	EXPECT_NE(p, s.out); /* beside vgpu_bo_map()'s */
	/* the host writes through one mapping, reads through the other */
	p[4095] = 0xc0ffee;
	EXPECT_EQ(0xc0ffeeu, s.out[4095]);
	/* a kernel's stores, seen at the GPU address */
	ASSERT_EQ(0, store_run(&s, 5, 8, 128));
	EXPECT_EQ(0u, store_bad(p, 1024, 5));
	EXPECT_EQ(0xc0ffeeu, p[4095]); /* past what the kernel wrote */
	EXPECT_EQ(0, vgpu_bo_read(s.bo, 4095 * 4, &word, 4));
	EXPECT_EQ(0xc0ffeeu, word);

	/* the host range taken: -EEXIST, and the taker's pages untouched */
	ASSERT_EQ(0, vgpu_bo_new(dev, 2 * 4096, 0, &bo2));
	va = vgpu_bo_gpu_address(bo2);
	taken = mmap((void *)(uintptr_t)(va + 4096), 4096, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ((void *)(uintptr_t)(va + 4096), taken);
	*(uint32_t *)taken = 77;
	q = NULL;
	EXPECT_EQ(-EEXIST, vgpu_bo_map_at_gpu_address(bo2, (void **)&q));
	EXPECT_EQ(NULL, q);
	EXPECT_EQ(77u, *(uint32_t *)taken);
	EXPECT_EQ(0, munmap(taken, 4096));
	ASSERT_EQ(0, vgpu_bo_map_at_gpu_address(bo2, (void **)&q));
	EXPECT_EQ(va, (uint64_t)(uintptr_t)q);
	q[2047] = 9;
	EXPECT_EQ(0, vgpu_bo_read(bo2, 2047 * 4, &word, 4));
	EXPECT_EQ(9u, word);
	vgpu_bo_free(bo2); /* unmaps the range: free for the host again */
	taken = mmap((void *)(uintptr_t)va, 2 * 4096, PROT_READ,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	EXPECT_EQ((void *)(uintptr_t)va, taken);
	if (taken != MAP_FAILED)
		munmap(taken, 2 * 4096);

	/* vgpu_bo_unmap() removes both mappings; mapping again works */
	EXPECT_EQ(0, vgpu_bo_unmap(s.bo));
	p = NULL;
	ASSERT_EQ(0, vgpu_bo_map_at_gpu_address(s.bo, (void **)&p));
	EXPECT_EQ(0u, store_bad(p, 1024, 5));
	s.out = p; /* store_fini frees the buffer with its mappings */
	store_fini(&s);
}

TEST_F(libvgpu, bo_read_write_ranges)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo = NULL;
	uint8_t buf[64], back[64];

	ASSERT_EQ(0, vgpu_bo_new(dev, 5000, 0, &bo)); /* 8192 bytes */
	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)(i * 3 + 1);
	EXPECT_EQ(0, vgpu_bo_write(bo, 0, buf, 64));
	EXPECT_EQ(0, vgpu_bo_write(bo, 8192 - 64, buf, 64));
	EXPECT_EQ(0, vgpu_bo_read(bo, 8192 - 64, back, 64));
	EXPECT_EQ(0, memcmp(buf, back, 64));
	memset(back, 0, 64);
	EXPECT_EQ(0, vgpu_bo_read(bo, 0, back, 64));
	EXPECT_EQ(0, memcmp(buf, back, 64));
	EXPECT_EQ(0, vgpu_bo_read(bo, 4096 + 7, back, 1));
	EXPECT_EQ(0, back[0]);
	/* empty accesses at the end are fine */
	EXPECT_EQ(0, vgpu_bo_write(bo, 8192, buf, 0));
	EXPECT_EQ(0, vgpu_bo_read(bo, 8192, back, 0));
	/* out of range */
	EXPECT_EQ(-EINVAL, vgpu_bo_write(bo, 8192 - 63, buf, 64));
	EXPECT_EQ(-EINVAL, vgpu_bo_read(bo, 8192 - 63, back, 64));
	EXPECT_EQ(-EINVAL, vgpu_bo_write(bo, 8193, buf, 0));
	EXPECT_EQ(-EINVAL, vgpu_bo_read(bo, 8193, back, 0));
	EXPECT_EQ(-EINVAL, vgpu_bo_read(bo, UINT64_MAX, back, 1));
	EXPECT_EQ(-EINVAL, vgpu_bo_read(bo, 8, back, SIZE_MAX));
	EXPECT_EQ(-EINVAL, vgpu_bo_write(bo, 64, buf, SIZE_MAX - 32));
	EXPECT_EQ(-EINVAL, vgpu_bo_write(bo, 0, NULL, 4));
	EXPECT_EQ(-EINVAL, vgpu_bo_read(bo, 0, NULL, 4));
	vgpu_bo_free(bo);
}

TEST_F(libvgpu, bo_wait)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_job *job = NULL;
	uint32_t out[2];
	int ret;

	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	/* idle: 0 whatever the timeout, a poll included */
	EXPECT_EQ(0, vgpu_bo_wait(bo, 0));
	EXPECT_EQ(0, vgpu_bo_wait(bo, -1));
	EXPECT_EQ(0, vgpu_bo_wait(bo, MS));
	EXPECT_EQ(0, vgpu_bo_wait(bo, VGPU_TIMEOUT_INFINITE));

	prog = prog_new(dev, spin_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, SPIN_LONG));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, 0x5a5a));
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), NULL, args, &job));
	ret = vgpu_bo_wait(bo, MS);
	/* sim ran the job at submit */
	EXPECT_EQ(is_sim(dev) ? 0 : -ETIME, ret);
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_wait(bo, 0));
	EXPECT_EQ(0, vgpu_bo_read(bo, 0, out, 8));
	EXPECT_EQ(SPIN_LONG, out[0]);
	EXPECT_EQ(0x5a5au, out[1]);
	EXPECT_EQ(0, vgpu_job_wait(job, 0));
	vgpu_job_free(job);
	vgpu_args_free(args);
	vgpu_program_free(prog);
	vgpu_bo_free(bo);
}

TEST_F(libvgpu, bo_export_import_errors)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo = NULL, *imp = (struct vgpu_bo *)0x1;
	int pipefd[2], fd = -1;

	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	EXPECT_EQ(-EINVAL, vgpu_bo_export(bo, NULL));
	EXPECT_EQ(-EBADF, vgpu_bo_import(dev, -1, &imp));
	EXPECT_EQ(-EBADF, vgpu_bo_import(dev, 1000, &imp)); /* not open */
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_EQ(-EINVAL, vgpu_bo_import(dev, pipefd[0], &imp)); /* not a dma-buf */
	close(pipefd[0]);
	close(pipefd[1]);
	ASSERT_EQ(0, vgpu_bo_export(bo, &fd));
	EXPECT_EQ(-EINVAL, vgpu_bo_import(dev, fd, NULL));
	EXPECT_EQ((struct vgpu_bo *)0x1, imp);
	close(fd);
	vgpu_bo_free(bo);
}

TEST_F(libvgpu, bo_export_import_same_device)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_bo *bo = NULL, *a = NULL, *b = NULL;
	int fd = -1, fd2 = -1;
	uint32_t v = 0;

	ASSERT_EQ(0, vgpu_bo_new(dev, 8192, VGPU_BO_NO_EXEC, &bo));
	ASSERT_EQ(0, vgpu_bo_write(bo, 4096, &(uint32_t){ 0x1234 }, 4));
	ASSERT_EQ(0, vgpu_bo_export(bo, &fd));
	EXPECT_GE(fd, 0);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_RDWR, fcntl(fd, F_GETFL) & O_ACCMODE);
	/* the device holds it: the same buffer, the same handle */
	ASSERT_EQ(0, vgpu_bo_import(dev, fd, &a));
	EXPECT_EQ(bo, a);
	EXPECT_EQ(vgpu_bo_handle(a), vgpu_bo_handle(bo));
	/* a second export of it imports to the same again */
	ASSERT_EQ(0, vgpu_bo_export(bo, &fd2));
	ASSERT_EQ(0, vgpu_bo_import(dev, fd2, &b));
	EXPECT_EQ(bo, b);
	close(fd);
	close(fd2);
	/* each import is a reference: the buffer survives two frees */
	vgpu_bo_free(bo);
	vgpu_bo_free(a);
	EXPECT_EQ(0, vgpu_bo_read(b, 4096, &v, 4));
	EXPECT_EQ(0x1234u, v);
	EXPECT_EQ(8192u, vgpu_bo_size(b));
	EXPECT_EQ(VGPU_BO_NO_EXEC, vgpu_bo_flags(b));
	vgpu_bo_free(b);
}

/*
 * Export from one device, import into another: the same memory, each with
 * its own GPU address; a kernel on either side writes what the other reads.
 */
static void dmabuf_round_trip(struct __test_metadata *_metadata,
			      struct vgpu_device *da, struct vgpu_device *db)
{
	struct store sa, sb;
	struct vgpu_bo *imp = NULL, *imp2 = NULL;
	uint32_t *p = NULL;
	int fd = -1;

	ASSERT_EQ(0, store_init(&sa, da, NULL, 4096));
	ASSERT_EQ(0, vgpu_bo_export(sa.bo, &fd));
	ASSERT_EQ(0, vgpu_bo_import(db, fd, &imp));
	EXPECT_EQ(4096u, vgpu_bo_size(imp));
	EXPECT_EQ(0u, vgpu_bo_flags(imp));
	EXPECT_GE(vgpu_bo_gpu_address(imp), param(db, VGPU_PARAM_VA_START));
	/* imported twice: the same struct, the same handle */
	ASSERT_EQ(0, vgpu_bo_import(db, fd, &imp2));
	EXPECT_EQ(imp, imp2);
	EXPECT_EQ(vgpu_bo_handle(imp2), vgpu_bo_handle(imp));
	vgpu_bo_free(imp2);
	close(fd); /* the import holds the memory */

	/* a writes, b reads */
	EXPECT_EQ(0, store_run(&sa, 5, 4, 256));
	ASSERT_EQ(0, vgpu_bo_map(imp, (void **)&p));
	EXPECT_EQ(0u, store_bad(p, 1024, 5));

	/* b writes through its own address of the buffer, a reads */
	memset(&sb, 0, sizeof(sb));
	sb.prog = prog_new(db, store_src);
	ASSERT_NE(NULL, sb.prog);
	sb.k = kern(sb.prog);
	ASSERT_EQ(0, vgpu_args_new(sb.k, &sb.args));
	ASSERT_EQ(0, vgpu_args_set_bo(sb.args, 0, imp, 0));
	EXPECT_EQ(0, store_run(&sb, 77, 2, 512));
	EXPECT_EQ(0u, store_bad(sa.out, 1024, 77));
	/* CPU writes are seen on the other side too */
	p[5] = 0xabcdef;
	EXPECT_EQ(0xabcdefu, sa.out[5]);

	store_fini(&sb);
	vgpu_bo_free(imp);
	/* the exporter's buffer outlives the importer's */
	EXPECT_EQ(0xabcdefu, sa.out[5]);
	store_fini(&sa);
}

TEST(dmabuf_two_files)
{
	struct vgpu_device *da = dev_open(), *db = NULL;

	ASSERT_NE(NULL, da);
	/* drm: two files of one device; sim: two simulators */
	if (is_sim(da)) {
		ASSERT_EQ(0, vgpu_device_open("sim", &db));
	} else {
		struct vgpu_device_info info;

		ASSERT_EQ(0, vgpu_device_query(da, &info));
		ASSERT_EQ(0, vgpu_device_open(info.node, &db));
	}
	dmabuf_round_trip(_metadata, da, db);
	dmabuf_round_trip(_metadata, db, da);
	vgpu_device_close(db);
	vgpu_device_close(da);
}

TEST(dmabuf_two_devices)
{
	struct vgpu_device *da = dev_open(), *db;
	bool other_pci;

	ASSERT_NE(NULL, da);
	db = second_device(da, &other_pci);
	ASSERT_NE(NULL, db);
	if (!is_sim(da)) {
		if (expected_devices() >= 2)
			EXPECT_TRUE(other_pci);
		if (!other_pci)
			printf("  one vgpu device: two files of it\n");
	}
	dmabuf_round_trip(_metadata, da, db);
	dmabuf_round_trip(_metadata, db, da);
	vgpu_device_close(db);
	vgpu_device_close(da);
}

/*
 * Implicit synchronisation follows the buffer to the other device: a job
 * there that lists the imported buffer waits for the exporter's job, and
 * so does vgpu_bo_wait() on the import.
 */
TEST(dmabuf_implicit_sync_across_devices)
{
	struct vgpu_device *da = dev_open(), *db;
	struct vgpu_program *pspin, *pcopy;
	struct vgpu_args *aa = NULL, *ab = NULL;
	struct vgpu_bo *bo = NULL, *imp = NULL, *outb = NULL;
	struct vgpu_job *ja = NULL, *jb = NULL;
	uint32_t v[2] = { 0 };
	bool other_pci;
	int fd = -1, ret;

	ASSERT_NE(NULL, da);
	db = second_device(da, &other_pci);
	ASSERT_NE(NULL, db);
	pspin = prog_new(da, spin_src);
	pcopy = prog_new(db, copy_src);
	ASSERT_TRUE(pspin && pcopy);
	ASSERT_EQ(0, vgpu_bo_new(da, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_bo_export(bo, &fd));
	ASSERT_EQ(0, vgpu_bo_import(db, fd, &imp));
	close(fd);
	ASSERT_EQ(0, vgpu_bo_new(db, 4096, 0, &outb));
	ASSERT_EQ(0, vgpu_args_new(kern(pspin), &aa));
	ASSERT_EQ(0, vgpu_args_set_bo(aa, 0, bo, 0));
	ASSERT_EQ(0, vgpu_args_set_u32(aa, 1, SPIN_LONG));
	ASSERT_EQ(0, vgpu_args_set_u32(aa, 2, 0xd0d0));
	ASSERT_EQ(0, vgpu_args_new(kern(pcopy), &ab));
	ASSERT_EQ(0, vgpu_args_set_u64(ab, 0, vgpu_bo_gpu_address(imp) + 4));
	ASSERT_EQ(0, vgpu_args_use_bo(ab, imp)); /* listed: implicit sync */
	ASSERT_EQ(0, vgpu_args_set_bo(ab, 1, outb, 0));

	ASSERT_EQ(0, vgpu_kernel_launch(kern(pspin), NULL, aa, &ja));
	ret = vgpu_bo_wait(imp, MS);
	EXPECT_EQ(ret, is_sim(da) ? 0 : -ETIME);
	ASSERT_EQ(0, vgpu_kernel_launch(kern(pcopy), NULL, ab, &jb));
	EXPECT_EQ(0, vgpu_job_wait(jb, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(outb, 0, v, 4));
	EXPECT_EQ(0xd0d0u, v[0]);
	EXPECT_EQ(0, vgpu_job_wait(ja, 0));
	EXPECT_EQ(0, vgpu_bo_wait(imp, 0));
	EXPECT_EQ(0, vgpu_bo_read(imp, 0, v, 8));
	EXPECT_EQ(SPIN_LONG, v[0]);
	EXPECT_EQ(0xd0d0u, v[1]);
	vgpu_job_free(ja);
	vgpu_job_free(jb);
	vgpu_args_free(aa);
	vgpu_args_free(ab);
	vgpu_bo_free(imp);
	vgpu_bo_free(outb);
	vgpu_bo_free(bo);
	vgpu_program_free(pspin);
	vgpu_program_free(pcopy);
	vgpu_device_close(db);
	vgpu_device_close(da);
}

/* ==================================================================== */
/* Programs and kernels                                                 */
/* ==================================================================== */

static const char two_kernels_src[] =
	".kernel first\n"
	".param ptr out\n"
	".param u32 a\n"
	".param u64 b\n"
	".shared tmp, 64\n"
	"  LDP.64 R2, [out] ;\n"
	"  LDP.32 R4, [a] ;\n"
	"  STG.32 [R2], R4 ;\n"
	"  EXIT ;\n"
	".kernel second\n"
	".param ptr out\n"
	"  LDP.64 R2, [out] ;\n"
	"  MOV R4, 0x2222 ;\n"
	"  STG.32 [R2+0x4], R4 ;\n"
	"  EXIT ;\n";

TEST_F(libvgpu, program_kernels_and_params)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k0 = NULL, *k1 = NULL, *k = NULL;
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info ai;
	struct vgpu_bo *bo = NULL;
	struct vgpu_args *a0 = NULL, *a1 = NULL;
	uint32_t out[2] = { 0 };

	prog = prog_new(dev, two_kernels_src);
	ASSERT_NE(NULL, prog);
	EXPECT_EQ(2u, vgpu_program_kernel_count(prog));
	ASSERT_EQ(0, vgpu_program_kernel(prog, 0, &k0));
	ASSERT_EQ(0, vgpu_program_kernel(prog, 1, &k1));
	EXPECT_EQ(-ENOENT, vgpu_program_kernel(prog, 2, &k));
	EXPECT_EQ(-ENOENT, vgpu_program_kernel(prog, UINT_MAX, &k));
	EXPECT_EQ(-EINVAL, vgpu_program_kernel(prog, 0, NULL));
	EXPECT_EQ(0, vgpu_program_find_kernel(prog, "second", &k));
	EXPECT_EQ(k1, k);
	EXPECT_EQ(0, vgpu_program_find_kernel(prog, "first", &k));
	EXPECT_EQ(k0, k);
	EXPECT_EQ(-ENOENT, vgpu_program_find_kernel(prog, "third", &k));
	EXPECT_EQ(-ENOENT, vgpu_program_find_kernel(prog, "firs", &k));
	EXPECT_EQ(-ENOENT, vgpu_program_find_kernel(prog, "", &k));
	EXPECT_EQ(-EINVAL, vgpu_program_find_kernel(prog, NULL, &k));
	EXPECT_EQ(-EINVAL, vgpu_program_find_kernel(prog, "first", NULL));

	vgpu_kernel_info(k0, &ki);
	EXPECT_STREQ("first", ki.name);
	EXPECT_EQ(0u, ki.entry);
	EXPECT_EQ(64u, ki.smem_static);
	EXPECT_EQ(24u, ki.param_size);
	EXPECT_EQ(3u, ki.nparams);
	vgpu_kernel_info(k1, &ki);
	EXPECT_STREQ("second", ki.name);
	EXPECT_EQ(4u * 16, ki.entry);
	EXPECT_EQ(0u, ki.smem_static);
	EXPECT_EQ(8u, ki.param_size);
	EXPECT_EQ(1u, ki.nparams);

	ASSERT_EQ(0, vgpu_kernel_arg(k0, 1, &ai));
	EXPECT_STREQ("a", ai.name);
	EXPECT_EQ((uint32_t)VGPU_ARG_U32, ai.type);
	EXPECT_EQ(8u, ai.offset);
	EXPECT_EQ(4u, ai.size);
	ASSERT_EQ(0, vgpu_kernel_arg(k0, 2, &ai));
	EXPECT_STREQ("b", ai.name);
	EXPECT_EQ((uint32_t)VGPU_ARG_U64, ai.type);
	EXPECT_EQ(16u, ai.offset);
	EXPECT_EQ(8u, ai.size);
	ASSERT_EQ(0, vgpu_kernel_arg(k0, 0, &ai));
	EXPECT_STREQ("out", ai.name);
	EXPECT_EQ((uint32_t)VGPU_ARG_PTR, ai.type);
	EXPECT_EQ(-ENOENT, vgpu_kernel_arg(k0, 3, &ai));
	EXPECT_EQ(-ENOENT, vgpu_kernel_arg(k1, 1, &ai));
	EXPECT_EQ(-EINVAL, vgpu_kernel_arg(k0, 0, NULL));
	EXPECT_EQ(0, vgpu_kernel_arg_index(k0, "out"));
	EXPECT_EQ(2, vgpu_kernel_arg_index(k0, "b"));
	EXPECT_EQ(-ENOENT, vgpu_kernel_arg_index(k1, "a"));
	EXPECT_EQ(-EINVAL, vgpu_kernel_arg_index(k0, NULL));

	/* both kernels run, each at its entry */
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(k0, &a0));
	ASSERT_EQ(0, vgpu_args_new(k1, &a1));
	EXPECT_EQ(0, vgpu_args_set_bo(a0, 0, bo, 0));
	EXPECT_EQ(0, vgpu_args_set_u32(a0, 1, 0x1111));
	EXPECT_EQ(0, vgpu_args_set_bo(a1, 0, bo, 0));
	EXPECT_EQ(0, vgpu_kernel_launch(k0, NULL, a0, NULL));
	EXPECT_EQ(0, vgpu_kernel_launch(k1, NULL, a1, NULL));
	/* args of another kernel */
	EXPECT_EQ(-EINVAL, vgpu_kernel_launch(k1, NULL, a0, NULL));
	EXPECT_EQ(0, vgpu_bo_wait(bo, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(bo, 0, out, 8));
	EXPECT_EQ(0x1111u, out[0]);
	EXPECT_EQ(0x2222u, out[1]);
	vgpu_args_free(a0);
	vgpu_args_free(a1);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
	vgpu_program_free(NULL); /* a no-op */
}

TEST_F(libvgpu, program_unnamed_kernel_is_main)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	const struct vgpu_kernel *k = NULL;
	struct vgpu_kernel_info ki;
	struct vgpu_job *job = NULL;

	prog = prog_new(dev, "  NOP ;\n  EXIT ;\n");
	ASSERT_NE(NULL, prog);
	EXPECT_EQ(1u, vgpu_program_kernel_count(prog));
	EXPECT_EQ(0, vgpu_program_find_kernel(prog, "main", &k));
	ASSERT_NE(NULL, k);
	vgpu_kernel_info(k, &ki);
	EXPECT_STREQ("main", ki.name);
	EXPECT_EQ(0u, ki.nparams);
	EXPECT_EQ(0u, ki.param_size);
	/* no parameters: NULL args is allowed */
	EXPECT_EQ(0, vgpu_kernel_launch(k, NULL, NULL, &job));
	if (job)
		EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	vgpu_job_free(job);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, program_assembly_errors)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog = (struct vgpu_program *)0x1;
	static const char bad[] = ".kernel k\n  FOO R1 ;\n  EXIT ;\n  MOV R1, 0x100000000 ;\n";
	char log[512], small[16];

	memset(log, 'x', sizeof(log));
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, bad, strlen(bad), "bad.vgs", &prog,
					log, sizeof(log)));
	EXPECT_CONTAINS(log, "bad.vgs:2:3: error: unknown mnemonic 'FOO'\n");
	EXPECT_CONTAINS(log, "bad.vgs:4:11: error: immediate 0x100000000 out of range");
	EXPECT_EQ((struct vgpu_program *)0x1, prog);
	/* the log is truncated to its length and terminated */
	memset(small, 'x', sizeof(small));
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, bad, strlen(bad), "bad.vgs", &prog,
					small, sizeof(small)));
	EXPECT_EQ(sizeof(small) - 1, strnlen(small, sizeof(small)));
	EXPECT_EQ(0, strncmp(small, "bad.vgs:2:3: er", sizeof(small) - 1));
	/* no log at all */
	EXPECT_EQ(-EINVAL, vgpu_program_assemble(dev, bad, strlen(bad), NULL, &prog, NULL, 0));
	/* without a file name: "<source>" */
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, bad, strlen(bad), NULL, &prog, log,
					sizeof(log)));
	EXPECT_CONTAINS(log, "<source>:2:3: error: unknown mnemonic 'FOO'");
	/* only the first len bytes count: the error line is cut off */
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, bad, 10, "bad.vgs", &prog, log,
					sizeof(log))); /* ".kernel k\n": no code */
	EXPECT_CONTAINS(log, "bad.vgs:1:9: error: kernel 'k' has no instructions");
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, "", 0, "e.vgs", &prog, log,
					sizeof(log)));
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, NULL, 0, "e.vgs", &prog, log,
					sizeof(log)));
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, NULL, 5, "e.vgs", &prog, log,
					sizeof(log)));
	EXPECT_EQ(-EINVAL,
		  vgpu_program_assemble(dev, bad, strlen(bad), "e.vgs", NULL, log,
					sizeof(log)));
	EXPECT_EQ((struct vgpu_program *)0x1, prog);
}

TEST_F(libvgpu, program_binary_round_trip)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog, *p2 = NULL, *p3 = NULL;
	const struct vgpu_kernel *k = NULL;
	struct vgpu_kernel_info ki;
	void *bin = NULL, *bin2 = NULL;
	size_t len = 0, len2 = 0;
	char log[512];

	prog = prog_new(dev, two_kernels_src);
	ASSERT_NE(NULL, prog);
	EXPECT_EQ(-EINVAL, vgpu_program_binary(prog, NULL, &len));
	EXPECT_EQ(-EINVAL, vgpu_program_binary(prog, &bin, NULL));
	ASSERT_EQ(0, vgpu_program_binary(prog, &bin, &len));
	EXPECT_GT(len, 4u * 16);
	EXPECT_EQ(VGPU_OBJ_MAGIC, ((uint32_t *)bin)[0]);
	ASSERT_EQ(0, vgpu_program_load_binary(dev, bin, len, &p2, log, sizeof(log)));
	EXPECT_EQ(2u, vgpu_program_kernel_count(p2));
	ASSERT_EQ(0, vgpu_program_find_kernel(p2, "first", &k));
	vgpu_kernel_info(k, &ki);
	EXPECT_EQ(64u, ki.smem_static);
	EXPECT_EQ(3u, ki.nparams);
	EXPECT_EQ(2, vgpu_kernel_arg_index(k, "b"));
	ASSERT_EQ(0, vgpu_program_binary(p2, &bin2, &len2));
	EXPECT_EQ(len, len2);
	EXPECT_TRUE(len2 == len && !memcmp(bin, bin2, len));

	/* corrupt objects: -EINVAL and a log */
	log[0] = 0;
	EXPECT_EQ(-EINVAL, vgpu_program_load_binary(dev, bin, 3, &p3, log, sizeof(log)));
	EXPECT_NE(0, log[0]);
	log[0] = 0;
	EXPECT_EQ(-EINVAL, vgpu_program_load_binary(dev, bin, len - 1, &p3, log, sizeof(log)));
	EXPECT_NE(0, log[0]);
	((uint8_t *)bin2)[0] ^= 0xff; /* magic */
	log[0] = 0;
	EXPECT_EQ(-EINVAL, vgpu_program_load_binary(dev, bin2, len, &p3, log, sizeof(log)));
	EXPECT_NE(0, log[0]);
	EXPECT_EQ(-EINVAL, vgpu_program_load_binary(dev, NULL, len, &p3, log, sizeof(log)));
	EXPECT_EQ(-EINVAL, vgpu_program_load_binary(dev, bin, len, NULL, log, sizeof(log)));
	EXPECT_EQ(NULL, p3);
	free(bin);
	free(bin2);
	vgpu_program_free(p2);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, program_load_file)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog = NULL, *p2 = NULL, *p3 = NULL;
	char dir[] = "/tmp/test_libvgpu.XXXXXX", path[96], bpath[96], log[512];
	void *bin = NULL;
	size_t len = 0;
	FILE *f;
	struct store s;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/store.vgs", dir);
	snprintf(bpath, sizeof(bpath), "%s/store.vgo", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs(store_src, f);
	fclose(f);
	ASSERT_EQ(0, vgpu_program_load_file(dev, path, &prog, log, sizeof(log)));
	EXPECT_EQ(1u, vgpu_program_kernel_count(prog));
	ASSERT_EQ(0, vgpu_program_binary(prog, &bin, &len));
	f = fopen(bpath, "wb");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(fwrite(bin, 1, len, f), len);
	fclose(f);
	/* an object file: recognised by its magic */
	ASSERT_EQ(0, vgpu_program_load_file(dev, bpath, &p2, log, sizeof(log)));
	ASSERT_EQ(0, store_init(&s, dev, p2, 4096));
	EXPECT_EQ(0, store_run(&s, 11, 1, 128));
	EXPECT_EQ(0u, store_bad(s.out, 128, 11));
	store_fini(&s);
	/* errors in a file are reported with its name */
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs(".kernel k\n  EXIT ;\n  BRA nowhere ;\n", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, vgpu_program_load_file(dev, path, &p3, log, sizeof(log)));
	EXPECT_CONTAINS(log, "store.vgs:3:");
	EXPECT_CONTAINS(log, "nowhere");
	snprintf(path, sizeof(path), "%s/missing.vgs", dir);
	EXPECT_EQ(-ENOENT, vgpu_program_load_file(dev, path, &p3, log, sizeof(log)));
	EXPECT_CONTAINS(log, "missing.vgs");
	EXPECT_EQ(-EINVAL, vgpu_program_load_file(dev, NULL, &p3, log, sizeof(log)));
	EXPECT_EQ(-EINVAL, vgpu_program_load_file(dev, bpath, NULL, log, sizeof(log)));
	EXPECT_EQ(NULL, p3);
	unlink(bpath);
	snprintf(path, sizeof(path), "%s/store.vgs", dir);
	unlink(path);
	rmdir(dir);
	free(bin);
	vgpu_program_free(p2);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, program_disassemble)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog, *p2 = NULL;
	void *b1 = NULL, *b2 = NULL;
	size_t l1 = 0, l2 = 0, len = 0;
	char *text = NULL, log[512];
	FILE *f;

	prog = prog_new(dev, two_kernels_src);
	ASSERT_NE(NULL, prog);
	EXPECT_EQ(-EINVAL, vgpu_program_disassemble(prog, NULL));
	f = open_memstream(&text, &len);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, vgpu_program_disassemble(prog, f));
	fclose(f);
	ASSERT_NE(NULL, text);
	EXPECT_CONTAINS(text, ".kernel first\n");
	EXPECT_CONTAINS(text, ".kernel second\n");
	EXPECT_CONTAINS(text, ".param ptr out\n");
	EXPECT_CONTAINS(text, ".param u64 b\n");
	EXPECT_CONTAINS(text, "STG [R2+0x4], R4 ;\n");
	/* re-assemblable: the same object */
	ASSERT_EQ(0,
		  vgpu_program_assemble(dev, text, strlen(text), "dis.vgs", &p2, log,
					sizeof(log)));
	ASSERT_EQ(0, vgpu_program_binary(prog, &b1, &l1));
	ASSERT_EQ(0, vgpu_program_binary(p2, &b2, &l2));
	EXPECT_EQ(l2, l1);
	EXPECT_TRUE(l1 == l2 && !memcmp(b1, b2, l1));
	/* to a tmpfile too */
	f = tmpfile();
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, vgpu_program_disassemble(p2, f));
	EXPECT_EQ((size_t)ftell(f), strlen(text));
	fclose(f);
	free(b1);
	free(b2);
	free(text);
	vgpu_program_free(p2);
	vgpu_program_free(prog);
}

TEST_F(libvgpu, program_freed_while_job_runs)
{
	struct vgpu_device *dev = self->dev;
	struct vgpu_program *prog;
	struct vgpu_args *args = NULL;
	struct vgpu_bo *bo = NULL;
	struct vgpu_job *job = NULL;
	uint32_t out[2] = { 0 };

	prog = prog_new(dev, spin_src);
	ASSERT_NE(NULL, prog);
	ASSERT_EQ(0, vgpu_bo_new(dev, 4096, 0, &bo));
	ASSERT_EQ(0, vgpu_args_new(kern(prog), &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, bo, 0));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 1, SPIN_LONG / 4));
	ASSERT_EQ(0, vgpu_args_set_u32(args, 2, 77));
	ASSERT_EQ(0, vgpu_kernel_launch(kern(prog), NULL, args, &job));
	vgpu_args_free(args);
	vgpu_program_free(prog); /* the job keeps its code */
	EXPECT_EQ(0, vgpu_job_wait(job, WAIT_NS));
	EXPECT_EQ(0, vgpu_bo_read(bo, 0, out, 8));
	EXPECT_EQ(SPIN_LONG / 4, out[0]);
	EXPECT_EQ(77u, out[1]);
	vgpu_job_free(job);
	vgpu_bo_free(bo);
}

TEST_HARNESS_MAIN
