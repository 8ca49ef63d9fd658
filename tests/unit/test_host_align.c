/* SPDX-License-Identifier: MIT */
/*
 * What a kernel aligns stays aligned on the host: the core's shared memory,
 * register files and warp records, and the host memory that stands for
 * global memory, start on a VGPU_HOST_LINE boundary however they grew (a
 * 128-byte aligned TMA buffer at 16 mod 32 on the host made the host's
 * rep movsb run at a third of its speed).
 */
#include "core_priv.h"
#include "kernel_util.h"

static bool line_aligned(const void *p)
{
	return p && (uintptr_t)p % VGPU_HOST_LINE == 0;
}

TEST(host_memory_regions_are_line_aligned_zeroed_and_mapped)
{
	static const uint64_t sizes[] = { 1, 17, 64, 100, 4096, 4097, 200000, 3 };
	struct vgpu_hostmem hm;

	vgpu_hostmem_init(&hm, 0x10000000ull, 0x20000000ull);
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t addr;
		uint8_t *data;

		ASSERT_EQ(0, vgpu_hostmem_alloc(&hm, sizes[i], &addr, &data));
		EXPECT_TRUE(line_aligned(data)) TH_LOG("region %u at %p", i, data);
		for (uint64_t b = 0; b < sizes[i]; b++)
			ASSERT_EQ(0, data[b]);
		memset(data, 0xa5, sizes[i]); /* the whole size is writable (ASan) */
		EXPECT_EQ(data, vgpu_hostmem_ptr(&hm, addr, sizes[i]));
		EXPECT_EQ(data + sizes[i] - 1, vgpu_hostmem_ptr(&hm, addr + sizes[i] - 1, 1));
		EXPECT_EQ(NULL, vgpu_hostmem_ptr(&hm, addr, sizes[i] + 1));
	}
	vgpu_hostmem_fini(&hm);
}

/*
 * Each thread stores its id at the top of the dynamic shared memory and
 * at 0, reads both back and writes them out: growth of every slot buffer
 * (more shared memory, more warps, more CTAs in a cluster) is checked by
 * the values, and every slot's buffers by their addresses.
 */
TEST(slot_buffers_stay_line_aligned_as_they_grow)
{
	static const struct {
		uint32_t smem, threads, cluster;
	} steps[] = {
		{ 256, 32, 1 }, { 4096 + 48, 64, 1 }, { 1024, 32, 2 },
		{ 70000, 96, 2 }, { 200000, 32, 1 }, { 2048, 256, 4 },
	};
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, KT_PROLOGUE
			     ".param u32 top\n"
			     "  LDP.32 R4, [top] ;\n"
			     "  IADD R4, R4, R1 ;\n"	/* top - 4 * threads + 4 * tid */
			     "  IADD R5, R0, 0x1000 ;\n"
			     "  STS.32 [R4], R5 ;\n"
			     "  STS.32 [R1], R0 ;\n"
			     "  BAR.SYNC 0x0 ;\n"
			     "  LDS.32 R6, [R4] ;\n"
			     "  LDS.32 R7, [R1] ;\n"
			     "  IADD R6, R6, R7 ;\n" KT_STORE("R6", "0x0")
			     "  EXIT ;\n"));
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint32_t n = steps[i].threads, ctas = steps[i].cluster;

		memset(k.mem.buf, 0, 4 * n);
		k.smem = steps[i].smem;
		k.block[0] = n;
		k.grid[0] = ctas;
		k.cluster[0] = ctas > 1 ? ctas : 0;
		k.args[0] = steps[i].smem - 4 * n;
		k.nargs = 1;
		KT_RUN_OK(&k);
		for (uint32_t t = 0; t < n; t++) {
			ASSERT_EQ(2 * t + 0x1000, kt_word(&k, t))
				TH_LOG("step %u thread %u", i, t);
		}
		ASSERT_GE(k.sm->slots_alloc, ctas);
		for (uint32_t s = 0; s < k.sm->slots_alloc; s++) {
			EXPECT_TRUE(line_aligned(k.sm->smem[s])) TH_LOG("step %u smem %u", i, s);
			EXPECT_TRUE(line_aligned(k.sm->regfile[s])) TH_LOG("step %u regs %u", i, s);
			EXPECT_TRUE(line_aligned(k.sm->warpbuf[s])) TH_LOG("step %u warps %u", i, s);
		}
	}
	kt_free(&k);
}

TEST_HARNESS_MAIN
