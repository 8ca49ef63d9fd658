// SPDX-License-Identifier: MIT
/*
 * The core's walk of a device-side launch tree (qemu-device/core/cdp.c,
 * struct vgpu_cdp_walk), which the sim backend and the QEMU device share,
 * over a flat memory: the order children run in (launch order, tail
 * launches last, a child's own before its next sibling), the slots it
 * reads (those the cursor passed while a grid ran, also across 2^32), what
 * a failure or a cancel frees (the tree, nothing else), a kernel's cluster
 * shape, and forged areas (a cycle of parents, more records than slots).
 */
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu_core.h"
#include "vgpu_hw.h"

#define AREA 0x1000u
#define KDESC 0x100u /* a good descriptor */
#define KDESC_CL 0x180u /* one with cluster shape 2x1x1 */
#define MAXSLOTS 40u
#define MEMSZ (AREA + VGPU_CDP_HEADER_BYTES + MAXSLOTS * VGPU_CDP_SLOT_BYTES)

static uint8_t mem[MEMSZ];

static int m_read(void *o, uint64_t a, void *b, uint32_t n)
{
	if (a > MEMSZ || n > MEMSZ - a)
		return -1;
	memcpy(b, mem + a, n);
	return 0;
}

static int m_write(void *o, uint64_t a, const void *b, uint32_t n)
{
	if (a > MEMSZ || n > MEMSZ - a)
		return -1;
	memcpy(mem + a, b, n);
	return 0;
}

static int m_atomic(void *o, uint64_t a, unsigned size, enum vgpu_atomic_op op, uint64_t val,
		    uint64_t cmp, uint64_t *old)
{
	uint32_t v;

	if (size != 4 || op != VGPU_ATOMIC_ADD || m_read(o, a, &v, 4))
		return -1;
	*old = v;
	v += (uint32_t)val;
	return m_write(o, a, &v, 4);
}

static const struct vgpu_mem_ops ops = { .read = m_read, .write = m_write, .atomic = m_atomic };

static uint64_t slot_va(uint32_t i)
{
	return AREA + VGPU_CDP_HEADER_BYTES + (uint64_t)i * VGPU_CDP_SLOT_BYTES;
}

static struct vgpu_cdp_record *rec(uint32_t i)
{
	return (struct vgpu_cdp_record *)(mem + slot_va(i));
}

static struct vgpu_cdp_header *hdr(void)
{
	return (struct vgpu_cdp_header *)(mem + AREA);
}

/* An area of @n slots, every one free and of no grid, its cursor at @cursor. */
static void area(uint32_t n, uint32_t cursor)
{
	struct vgpu_kernel_desc k = {
		.code_va = 0x10000, .code_size = 64, .param_size = 8,
		.data_off = ~0u, .params_off = ~0u, .envregs_off = ~0u, .local_off = ~0u,
		.printf_off = ~0u,
	};

	memset(mem, 0, sizeof(mem));
	hdr()->nslots = n;
	hdr()->cursor = cursor;
	for (uint32_t i = 0; i < MAXSLOTS; i++)
		rec(i)->parent = VGPU_CDP_NO_GRID;
	memcpy(mem + KDESC, &k, sizeof(k));
	k.cluster[0] = 2;
	memcpy(mem + KDESC_CL, &k, sizeof(k));
}

/*
 * What the device runtime does for one launch by grid @parent: the slot at
 * the cursor (bumped past taken ones), its record LAUNCHED into @stream
 * with grid @gx; the slot.
 */
static uint32_t launch(uint32_t parent, uint32_t stream, uint32_t gx, uint64_t kdesc)
{
	for (;;) {
		uint32_t i = hdr()->cursor++ % hdr()->nslots;

		if (rec(i)->state != VGPU_CDP_FREE)
			continue;
		*rec(i) = (struct vgpu_cdp_record){
			.state = VGPU_CDP_LAUNCHED, .seq = hdr()->seq++, .parent = parent,
			.stream = stream, .kdesc = kdesc, .grid = { gx, 1, 1 },
			.block = { 32, 1, 1 },
		};
		return i;
	}
}

static uint32_t nfree(void)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < hdr()->nslots; i++)
		n += rec(i)->state == VGPU_CDP_FREE && rec(i)->parent == VGPU_CDP_NO_GRID;
	return n;
}

/* NULL stream and fire-and-forget in launch order, then tail launches. */
TEST(launch_order_tail_last)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root, s[5];

	area(8, 0);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	EXPECT_EQ(VGPU_CDP_ROOT, root);
	s[0] = launch(root, VGPU_CDP_STREAM_TAIL, 1, KDESC);
	s[1] = launch(root, VGPU_CDP_STREAM_NULL, 2, KDESC);
	s[2] = launch(root, VGPU_CDP_STREAM_FIRE_AND_FORGET, 3, KDESC);
	s[3] = launch(root, VGPU_CDP_STREAM_TAIL, 4, KDESC);
	s[4] = launch(root, VGPU_CDP_STREAM_NULL, 5, KDESC);
	static const int want[] = { 1, 2, 4, 0, 3 };
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
		EXPECT_EQ(s[want[i]], ch.record);
		EXPECT_EQ((uint32_t)want[i] + 1, ch.grid[0]);
		EXPECT_EQ(32u, ch.block[0]);
		EXPECT_EQ(1u, ch.cluster[0]);
		EXPECT_EQ(slot_va(ch.record) + VGPU_CDP_RECORD_BYTES, ch.param_va);
		EXPECT_EQ((uint32_t)VGPU_CDP_RUNNING, rec(ch.record)->state);
	}
	EXPECT_EQ(0, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(8u, nfree());
	vgpu_cdp_walk_end(&w);
}

/* A child's own children run before its next sibling; 3 levels. */
TEST(depth_first)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root, a, b, a1, a2, a1x;

	area(8, 5);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	a = launch(root, 0, 1, KDESC);
	b = launch(root, 0, 1, KDESC);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(a, ch.record);
	EXPECT_EQ(1u, w.depth);
	a1 = launch(a, VGPU_CDP_STREAM_TAIL, 1, KDESC);
	a2 = launch(a, 0, 1, KDESC);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(a2, ch.record);
	EXPECT_EQ(2u, w.depth);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(a1, ch.record);
	a1x = launch(a1, 0, 1, KDESC);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(a1x, ch.record);
	EXPECT_EQ(3u, w.depth);
	/* a's slot is still held (RUNNING) while its children run */
	EXPECT_EQ((uint32_t)VGPU_CDP_RUNNING, rec(a)->state);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(b, ch.record);
	EXPECT_EQ(VGPU_CDP_NO_GRID, rec(a)->parent);
	EXPECT_EQ(0, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(8u, nfree());
}

/*
 * Only the slots the cursor passed while the grid ran are read: a record
 * put elsewhere is not run (nor freed); the cursor wrapping at 2^32 with a
 * count that is not a power of two (a slot taken twice: run once).
 */
TEST(cursor_range_and_wrap)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root, s[3], stray;

	area(5, 0xfffffffeu);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	s[0] = launch(root, 0, 1, KDESC); /* 0xfffffffe % 5 = 4 */
	s[1] = launch(root, 0, 1, KDESC); /* 0xffffffff % 5 = 0 */
	s[2] = launch(root, 0, 1, KDESC); /* 0: slot 0 taken, 1 % 5 = 1 */
	EXPECT_EQ(4u, s[0]);
	EXPECT_EQ(0u, s[1]);
	EXPECT_EQ(1u, s[2]);
	EXPECT_EQ(2u, hdr()->cursor);
	/* a record of this grid where the runtime would not have put it */
	stray = 3;
	*rec(stray) = (struct vgpu_cdp_record){ .state = VGPU_CDP_LAUNCHED, .parent = root,
						.kdesc = KDESC, .grid = { 1, 1, 1 },
						.block = { 1, 1, 1 } };
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
		EXPECT_EQ(s[i], ch.record);
	}
	EXPECT_EQ(0, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ((uint32_t)VGPU_CDP_LAUNCHED, rec(stray)->state);
	EXPECT_EQ(4u, nfree());
}

/*
 * A bad record: -1 with the exception, and every record of the tree is
 * freed (the chain running at the time too); another root's are not.
 */
TEST(failure_frees_the_tree_only)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root, a, other;

	area(8, 0);
	other = launch(VGPU_CDP_ROOT | 7, 0, 1, KDESC);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	a = launch(root, 0, 1, KDESC);
	launch(root, 0, 1, KDESC);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(a, ch.record);
	launch(a, 0, 1, KDESC);
	launch(a, 0, 1, 0x12345678); /* names no kernel */
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(-1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ((uint32_t)VGPU_EXC_DEVICE_LAUNCH, exc.code);
	EXPECT_CONTAINS(exc.msg, "names no kernel (0x12345678)");
	EXPECT_EQ(7u, nfree());
	EXPECT_EQ((uint32_t)VGPU_CDP_LAUNCHED, rec(other)->state);
	/* over: nothing more */
	EXPECT_EQ(0, vgpu_cdp_walk_next(&w, &ch, &exc));
	vgpu_cdp_walk_end(&w);
}

/* The caller's cancel (a child failed, the launch was aborted) frees the tree. */
TEST(cancel_mid_tree)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root, a;

	area(8, 0);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	a = launch(root, 0, 1, KDESC);
	launch(root, VGPU_CDP_STREAM_TAIL, 1, KDESC);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	launch(a, 0, 1, KDESC); /* what the failed child launched */
	vgpu_cdp_walk_cancel(&w);
	EXPECT_EQ(8u, nfree());
	EXPECT_EQ(0, vgpu_cdp_walk_next(&w, &ch, &exc));
}

/* A kernel's compiled cluster shape: kept, and a grid it does not tile refused. */
TEST(cluster_shape)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root;

	area(8, 0);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	launch(root, 0, 4, KDESC_CL);
	launch(root, 0, 3, KDESC_CL);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ(2u, ch.cluster[0]);
	EXPECT_EQ(1u, ch.cluster[1]);
	EXPECT_EQ(1u, ch.cluster[2]);
	EXPECT_EQ(-1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ((uint32_t)VGPU_EXC_DEVICE_LAUNCH, exc.code);
	EXPECT_CONTAINS(exc.msg, "grid 3x1x1, block 32x1x1, cluster 2x1x1");
	EXPECT_EQ(8u, nfree());
}

/*
 * Forged areas: a cycle of parents and a self-parent, not below the root,
 * are left alone by a cancel (and it ends); a count past vGPU's limit is
 * an exception; an area outside memory a fault, a misaligned one a bad
 * launch.
 */
TEST(forged_areas)
{
	struct vgpu_exception_record exc;
	struct vgpu_cdp_walk w;
	struct vgpu_cdp_child ch;
	uint32_t root, a;

	area(8, 0);
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	a = launch(root, 0, 1, KDESC);
	ASSERT_EQ(1, vgpu_cdp_walk_next(&w, &ch, &exc));
	*rec(4) = (struct vgpu_cdp_record){ .state = VGPU_CDP_LAUNCHED, .parent = a };
	*rec(5) = (struct vgpu_cdp_record){ .state = VGPU_CDP_LAUNCHED, .parent = 6 };
	*rec(6) = (struct vgpu_cdp_record){ .state = VGPU_CDP_LAUNCHED, .parent = 5 };
	*rec(7) = (struct vgpu_cdp_record){ .state = VGPU_CDP_LAUNCHED, .parent = 7 };
	vgpu_cdp_walk_cancel(&w);
	EXPECT_EQ((uint32_t)VGPU_CDP_FREE, rec(a)->state);
	EXPECT_EQ((uint32_t)VGPU_CDP_FREE, rec(4)->state);
	for (uint32_t i = 5; i < 8; i++)
		EXPECT_EQ((uint32_t)VGPU_CDP_LAUNCHED, rec(i)->state);

	area(8, 0);
	hdr()->nslots = 70000;
	ASSERT_EQ(0, vgpu_cdp_walk_start(&w, &ops, NULL, AREA, &root, &exc));
	EXPECT_EQ(-1, vgpu_cdp_walk_next(&w, &ch, &exc));
	EXPECT_EQ((uint32_t)VGPU_EXC_DEVICE_LAUNCH, exc.code);
	EXPECT_CONTAINS(exc.msg, "device-launch area of 70000 slots");

	ASSERT_EQ(-1, vgpu_cdp_walk_start(&w, &ops, NULL, MEMSZ, &root, &exc));
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, exc.code);
	ASSERT_EQ(-1, vgpu_cdp_walk_start(&w, &ops, NULL, AREA + 8, &root, &exc));
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, exc.code);
}

TEST_HARNESS_MAIN
