/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests (qtest, see test_device.c): device-side launch
 * (uapi/vgpu_hw.h "Device-side launch", struct vgpu_cmd_launch's
 * @cdp_area).  A parent written in the ISA fills a record of the area and
 * the device runs the child it names after the parent's grid; forged
 * areas and records (no kernel, a bad shape, an area of too many slots,
 * an unmapped area) end the launch with the documented exception, QEMU
 * still answering and the queue recovering; nesting deeper than CDP1's
 * 24 runs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "vgpu_dev.h"
#include "qtest_expect.h"
#include "test_device.h"

#define NSLOTS 64u
#define AREA_BYTES (VGPU_CDP_HEADER_BYTES + NSLOTS * VGPU_CDP_SLOT_BYTES)
#define CHILD_V 7u

/*
 * One thread: moves the area's cursor on by NSLOTS (as though it had
 * taken every slot: the device looks at all of them), fills a slot of its
 * area (SR_CDP_AREA_LO/HI; @slot bytes past slot 0, the area being far
 * from a 4 GiB boundary) with a launch of the kernel of descriptor @kdesc
 * over 2 CTAs of 32 threads, parameters { @out, CHILD_V }, its own grid
 * (SR_CDP_GRID) as the parent, and marks it LAUNCHED last.  Slot 0: the
 * area + 64; its parameters: + 128.
 */
static const char k_parent[] =
	".kernel parent\n"
	".param ptr kdesc\n"
	".param ptr out\n"
	".param u32 slot\n"
	"    S2R R0, SR_CDP_AREA_LO ;\n"
	"    S2R R1, SR_CDP_AREA_HI ;\n"
	"    MOV R11, 0x40 ;\n"
	"    ATOMG.ADD.U32 R12, [R0+0x4], R11 ;\n"
	"    LDP.32 R7, [slot] ;\n"
	"    IADD R0, R0, R7 ;\n"
	"    S2R R6, SR_CDP_GRID ;\n"
	"    LDP.64 R2, [kdesc] ;\n"
	"    LDP.64 R4, [out] ;\n"
	"    STG.32 [R0+0x48], R6 ;\n"
	"    STG.64 [R0+0x50], R2 ;\n"
	"    MOV R8, 0x2 ;\n"
	"    STG.32 [R0+0x58], R8 ;\n"
	"    MOV R8, 0x1 ;\n"
	"    STG.32 [R0+0x5c], R8 ;\n"
	"    STG.32 [R0+0x60], R8 ;\n"
	"    MOV R9, 0x20 ;\n"
	"    STG.32 [R0+0x64], R9 ;\n"
	"    STG.32 [R0+0x68], R8 ;\n"
	"    STG.32 [R0+0x6c], R8 ;\n"
	"    STG.32 [R0+0x74], R8 ;\n"
	"    STG.64 [R0+0x80], R4 ;\n"
	"    MOV R10, 0x7 ;\n"
	"    STG.32 [R0+0x88], R10 ;\n"
	"    MOV R8, 0x2 ;\n"
	"    STG.32 [R0+0x40], R8 ;\n"
	"    EXIT ;\n";

/* every thread adds @v to *@out */
static const char k_child[] =
	".kernel child\n"
	".param ptr out\n"
	".param u32 v\n"
	"    LDP.64 R2, [out] ;\n"
	"    LDP.32 R4, [v] ;\n"
	"    ATOMG.ADD.U32 R5, [R2+0x0], R4 ;\n"
	"    EXIT ;\n";

static const char k_empty[] = ".kernel empty\n    EXIT ;\n";

/*
 * A LAUNCHED record at R0 + 0x40: parent R6, descriptor R2, 1 x 1
 * threads (R8 = 1), parameters { R2, R13 }, launch number @seq.
 */
#define TREE_RECORD(seq) \
	"    STG.32 [R0+0x48], R6 ;\n" \
	"    STG.64 [R0+0x50], R2 ;\n" \
	"    MOV R9, " seq " ;\n" \
	"    STG.32 [R0+0x44], R9 ;\n" \
	"    STG.32 [R0+0x4c], RZ ;\n" \
	"    STG.32 [R0+0x58], R8 ;\n" \
	"    STG.32 [R0+0x5c], R8 ;\n" \
	"    STG.32 [R0+0x60], R8 ;\n" \
	"    STG.32 [R0+0x64], R8 ;\n" \
	"    STG.32 [R0+0x68], R8 ;\n" \
	"    STG.32 [R0+0x6c], R8 ;\n" \
	"    STG.32 [R0+0x70], RZ ;\n" \
	"    STG.64 [R0+0x80], R2 ;\n" \
	"    STG.32 [R0+0x88], R13 ;\n" \
	"    MOV R9, 0x2 ;\n" \
	"    STG.32 [R0+0x40], R9 ;\n"

/*
 * A binary tree of grids of one thread, 24 levels below the root
 * (2^25 - 2 grids): a grid at @depth launches two, depth + 1, into slots
 * 2 (depth + 1) and 2 (depth + 1) + 1, free by then (depth first: a level's
 * slots are its cousins', done); its parameters { @kdesc, depth + 1 }.
 * Moves the cursor on by NSLOTS: the device looks at every slot.
 */
static const char k_tree[] =
	".kernel tree\n"
	".param ptr kdesc\n"
	".param u32 depth\n"
	"    LDP.32 R5, [depth] ;\n"
	"    ISETP.GE.U32 P0, R5, 0x18 ;\n"
	"    @P0 BRA done ;\n"
	"    S2R R0, SR_CDP_AREA_LO ;\n"
	"    S2R R1, SR_CDP_AREA_HI ;\n"
	"    MOV R11, 0x40 ;\n"
	"    ATOMG.ADD.U32 R12, [R0+0x4], R11 ;\n"
	"    S2R R6, SR_CDP_GRID ;\n"
	"    LDP.64 R2, [kdesc] ;\n"
	"    IADD R13, R5, 0x1 ;\n"
	"    SHL R7, R13, 0x1 ;\n"
	"    IMUL R7, R7, 0x1040 ;\n"
	"    IADD R0, R0, R7 ;\n"
	"    MOV R8, 0x1 ;\n"
	TREE_RECORD("0x0")
	"    IADD R0, R0, 0x1040 ;\n"
	TREE_RECORD("0x1")
	"done:\n"
	"    EXIT ;\n";

/* moves the area's cursor on by NSLOTS: the device looks at every slot */
static const char k_bump[] =
	".kernel bump\n"
	"    S2R R0, SR_CDP_AREA_LO ;\n"
	"    S2R R1, SR_CDP_AREA_HI ;\n"
	"    MOV R8, 0x40 ;\n"
	"    ATOMG.ADD.U32 R9, [R0+0x4], R8 ;\n"
	"    EXIT ;\n";

struct cdp {
	struct dev d;
	struct dev_kernel parent, child, empty, bump;
	uint64_t area_va, area_pa, kdesc_va, kdesc_pa, out_va, out_pa, par_va, par_pa;
	uint64_t par2_va, par2_pa; /* the same, slot 1 */
};

static struct vgpu_kernel_desc kdesc_of(const struct dev_kernel *k, uint32_t param_size)
{
	return (struct vgpu_kernel_desc){
		.code_va = k->code_va,
		.code_size = k->obj.code_size,
		.entry = k->k->entry,
		.param_size = param_size,
		.data_off = ~0u, .params_off = ~0u, .envregs_off = ~0u,
		.local_off = ~0u, .printf_off = ~0u,
	};
}

static uint64_t slot_pa(const struct cdp *t, uint32_t i)
{
	return t->area_pa + VGPU_CDP_HEADER_BYTES + (uint64_t)i * VGPU_CDP_SLOT_BYTES;
}

static int cdp_open(struct cdp *t)
{
	struct vgpu_cdp_header h = { .nslots = NSLOTS };
	uint8_t params[24] = { 0 };
	uint32_t slot1 = VGPU_CDP_SLOT_BYTES;

	memset(t, 0, sizeof(*t));
	if (dev_open(&t->d, "threads=2", 1) ||
	    dev_kernel_load(&t->d, 0, k_parent, &t->parent) ||
	    dev_kernel_load(&t->d, 0, k_child, &t->child) ||
	    dev_kernel_load(&t->d, 0, k_empty, &t->empty) ||
	    dev_kernel_load(&t->d, 0, k_bump, &t->bump))
		return -1;
	dev_queue_init(&t->d, 0, 64);
	t->area_va = dev_buf(&t->d, 0, AREA_BYTES, RW, &t->area_pa);
	t->kdesc_va = dev_buf(&t->d, 0, 64, RO, &t->kdesc_pa);
	t->out_va = dev_buf(&t->d, 0, 8, RW, &t->out_pa);
	t->par_va = dev_buf(&t->d, 0, sizeof(params), RO, &t->par_pa);
	qts_memset(t->d.qts, t->area_pa, 0, AREA_BYTES);
	qts_memwrite(t->d.qts, t->area_pa, &h, sizeof(h));
	for (uint32_t i = 0; i < NSLOTS; i++) { /* of no grid, as libvgpu makes them */
		uint32_t none = VGPU_CDP_NO_GRID;

		qts_memwrite(t->d.qts, slot_pa(t, i) + 8, &none, 4);
	}
	memcpy(params, &t->kdesc_va, 8);
	memcpy(params + 8, &t->out_va, 8);
	qts_memwrite(t->d.qts, t->par_pa, params, sizeof(params));
	t->par2_va = dev_buf(&t->d, 0, sizeof(params), RO, &t->par2_pa);
	memcpy(params + 16, &slot1, 4);
	qts_memwrite(t->d.qts, t->par2_pa, params, sizeof(params));
	return 0;
}

static void cdp_close(struct cdp *t)
{
	dev_kernel_free(&t->parent);
	dev_kernel_free(&t->child);
	dev_kernel_free(&t->empty);
	dev_kernel_free(&t->bump);
	dev_close(&t->d);
}

/* Launch @k (1 thread) with area @area on queue 0 and wait. */
static bool cdp_launch(struct cdp *t, const struct dev_kernel *k, uint64_t area,
		       struct vgpu_completion *c)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(k, 1, 1, t->par_va, 24);

	cmd.cdp_area = area;
	return dev_wait(&t->d, 0, dev_submit(&t->d, 0, &cmd), c);
}

FIXTURE(cdp) {
	struct cdp t;
};

FIXTURE_SETUP(cdp)
{
	ASSERT_EQ(0, cdp_open(&self->t));
}

FIXTURE_TEARDOWN(cdp)
{
	cdp_close(&self->t);
}

/* The device still answers: the parent's tree runs, its child's result right. */
static void good_tree_runs(struct __test_metadata *_metadata, struct cdp *t)
{
	struct vgpu_kernel_desc kd = kdesc_of(&t->child, 16);
	struct vgpu_completion c;
	uint32_t out = 0;

	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	qts_memwrite(t->d.qts, t->out_pa, &out, 4);
	ASSERT_TRUE(cdp_launch(t, &t->parent, t->area_va, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	qts_memread(t->d.qts, t->out_pa, &out, 4);
	EXPECT_EQ(64u * CHILD_V, out);
}

/* The device reports the feature. */
TEST_F(cdp, feature_bit)
{
	EXPECT_NE(0u, reg_read(&self->t.d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_DEVICE_LAUNCH);
}

/*
 * The parent's record runs its child after the parent: 64 threads each
 * add CHILD_V; the host launch took root grid identifier
 * VGPU_CDP_ROOT | 0 (the header's roots now 1, twice 2), the slot is FREE
 * again, the completion counts both grids' warp-instructions.
 */
TEST_F(cdp, parent_launches_child)
{
	struct cdp *t = &self->t;
	struct vgpu_kernel_desc kd = kdesc_of(&t->child, 16);
	struct vgpu_cdp_record r;
	struct vgpu_completion c, c0;
	uint32_t out = 0, roots;

	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	qts_memwrite(t->d.qts, t->out_pa, &out, 4);
	ASSERT_TRUE(cdp_launch(t, &t->parent, t->area_va, &c));
	ASSERT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	qts_memread(t->d.qts, t->out_pa, &out, 4);
	EXPECT_EQ(64u * CHILD_V, out);
	qts_memread(t->d.qts, slot_pa(t, 0), &r, sizeof(r));
	EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state);
	EXPECT_EQ(VGPU_CDP_NO_GRID, r.parent);
	qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
	EXPECT_EQ(1u, roots);
	/* the parent alone (no area): its warp-instructions are fewer */
	ASSERT_TRUE(cdp_launch(t, &t->empty, 0, &c0));
	EXPECT_GT(c.warp_insns, c0.warp_insns + 2);
	/* again: the second root grid, the child again */
	ASSERT_TRUE(cdp_launch(t, &t->parent, t->area_va, &c));
	ASSERT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(t->d.qts, t->out_pa, &out, 4);
	EXPECT_EQ(2 * 64u * CHILD_V, out);
	qts_memread(t->d.qts, slot_pa(t, 0), &r, sizeof(r));
	EXPECT_EQ(VGPU_CDP_NO_GRID, r.parent);
	qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
	EXPECT_EQ(2u, roots);
}

/*
 * Two trees on one area from two queues at once (the parents on slots 0
 * and 1): each child runs once, whichever order the device's one-tree-
 * at-a-time gives; 20 rounds.
 */
TEST_F(cdp, two_queues_one_area)
{
	struct cdp *t = &self->t;
	struct vgpu_kernel_desc kd = kdesc_of(&t->child, 16);
	struct vgpu_cmd_launch a = dev_launch_cmd(&t->parent, 1, 1, t->par_va, 24);
	struct vgpu_cmd_launch b = dev_launch_cmd(&t->parent, 1, 1, t->par2_va, 24);
	uint32_t out = 0;

	a.cdp_area = b.cdp_area = t->area_va;
	dev_queue_init(&t->d, 1, 64);
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	qts_memwrite(t->d.qts, t->out_pa, &out, 4);
	for (int round = 0; round < 20; round++) {
		struct vgpu_completion ca, cb;
		uint32_t sa = dev_put(&t->d, 0, &a), sb = dev_put(&t->d, 1, &b);

		dev_doorbell(&t->d, 0);
		dev_doorbell(&t->d, 1);
		ASSERT_TRUE(dev_wait(&t->d, 0, sa, &ca));
		ASSERT_TRUE(dev_wait(&t->d, 1, sb, &cb));
		ASSERT_EQ(VGPU_ERR_NONE, ca.status) {
			TH_LOG("round %d: %s", round, ca.exc.msg);
		}
		ASSERT_EQ(VGPU_ERR_NONE, cb.status) {
			TH_LOG("round %d: %s", round, cb.exc.msg);
		}
	}
	qts_memread(t->d.qts, t->out_pa, &out, 4);
	EXPECT_EQ(20u * 2 * 64 * CHILD_V, out);
}

/* A record of @parent naming @kdesc (grid 1, block 32) in slot @i. */
static void put_record(struct cdp *t, uint32_t i, uint32_t parent, uint64_t kdesc,
		       uint32_t grid, uint32_t block)
{
	struct vgpu_cdp_record r = {
		.state = VGPU_CDP_LAUNCHED, .seq = i, .parent = parent, .kdesc = kdesc,
		.grid = { grid, 1, 1 }, .block = { block, 1, 1 }, .depth = 1,
	};

	qts_memwrite(t->d.qts, slot_pa(t, i), &r, sizeof(r));
}

/* The launch ended with @status and exception @code; the queue resumes. */
#define EXPECT_CDP_FAIL(t, c, st, xcode, what)                                   \
	do {                                                                    \
		EXPECT_EQ((uint32_t)(st), (c).status) {                         \
			TH_LOG("%s: %s", what, (c).exc.msg);                    \
		}                                                               \
		EXPECT_EQ((uint32_t)(xcode), (c).exc.code) {                     \
			TH_LOG("%s: %s", what, (c).exc.msg);                    \
		}                                                               \
		qreg_write(&(t)->d, 0, VGPU_Q_CONTROL,                          \
			   VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);              \
	} while (0)

/*
 * Forged records from the host (the bump parent launches nothing of its
 * own, but makes the device look at every slot): each is
 * VGPU_EXC_DEVICE_LAUNCH, the record freed, and the next good launch
 * works.
 */
TEST_F(cdp, forged_records)
{
	struct cdp *t = &self->t;
	struct vgpu_kernel_desc kd = kdesc_of(&t->empty, 0);
	struct vgpu_completion c;
	struct vgpu_cdp_record r;
	uint32_t roots = 0;

	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	/* no kernel: 0, misaligned, unmapped */
	static const uint64_t bad_kdesc[] = { 0, 4, 0x7f0000000000ull };
	for (unsigned i = 0; i < 3; i++) {
		qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
		put_record(t, 3, VGPU_CDP_ROOT | roots, bad_kdesc[i], 1, 32);
		ASSERT_TRUE(cdp_launch(t, &t->bump, t->area_va, &c));
		EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_DEVICE_LAUNCH, "no kernel");
		EXPECT_CONTAINS(c.exc.msg, "names no kernel");
		qts_memread(t->d.qts, slot_pa(t, 3), &r, sizeof(r));
		EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state);
	}
	/* bad shapes: a zero grid, 2048 threads, too many parameter bytes */
	qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
	put_record(t, 5, VGPU_CDP_ROOT | roots, t->kdesc_va, 0, 32);
	ASSERT_TRUE(cdp_launch(t, &t->bump, t->area_va, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_DEVICE_LAUNCH, "zero grid");
	EXPECT_CONTAINS(c.exc.msg, "bad shape");
	qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
	put_record(t, 5, VGPU_CDP_ROOT | roots, t->kdesc_va, 1, 2048);
	ASSERT_TRUE(cdp_launch(t, &t->bump, t->area_va, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_DEVICE_LAUNCH, "2048 threads");
	kd.param_size = VGPU_CDP_MAX_PARAM + 4;
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
	put_record(t, 5, VGPU_CDP_ROOT | roots, t->kdesc_va, 1, 32);
	ASSERT_TRUE(cdp_launch(t, &t->bump, t->area_va, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_DEVICE_LAUNCH, "parameters");
	/* a kernel descriptor of a bad program: the child's BAD_LAUNCH */
	kd = kdesc_of(&t->empty, 0);
	kd.code_size = 24;
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
	put_record(t, 5, VGPU_CDP_ROOT | roots, t->kdesc_va, 1, 32);
	ASSERT_TRUE(cdp_launch(t, &t->bump, t->area_va, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_BAD_LAUNCH, VGPU_EXC_BAD_LAUNCH, "code size");
	qts_memread(t->d.qts, slot_pa(t, 5), &r, sizeof(r));
	EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state);

	/* still answering: a good child runs */
	kd = kdesc_of(&t->child, 16);
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	ASSERT_TRUE(cdp_launch(t, &t->parent, t->area_va, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
}

/*
 * Records chained from the host, slot i the child of slot i - 1, each a
 * bump (the device looks at every slot after it): all NSLOTS levels run,
 * deeper than CDP1's 24, and every slot is FREE again.  The same chain
 * whose last record names no kernel: the exception, and the whole tree
 * (NSLOTS - 1 grids running at the time) is freed.
 */
TEST_F(cdp, deep_nesting)
{
	struct cdp *t = &self->t;
	struct vgpu_kernel_desc kd = kdesc_of(&t->bump, 0);
	struct vgpu_completion c;
	uint32_t roots = 0, cursor0 = 0, cursor = 0;

	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	for (int round = 0; round < 2; round++) {
		qts_memread(t->d.qts, t->area_pa + 12, &roots, 4);
		qts_memread(t->d.qts, t->area_pa + 4, &cursor0, 4);
		for (uint32_t i = 0; i < NSLOTS; i++)
			put_record(t, i, i ? i - 1 : (VGPU_CDP_ROOT | roots),
				   round && i == NSLOTS - 1 ? 0 : t->kdesc_va, 1, 1);
		ASSERT_TRUE(cdp_launch(t, &t->bump, t->area_va, &c));
		if (!round) {
			EXPECT_EQ(VGPU_ERR_NONE, c.status) {
				TH_LOG("%s", c.exc.msg);
			}
			/* the root and each of the NSLOTS children bumped it */
			qts_memread(t->d.qts, t->area_pa + 4, &cursor, 4);
			EXPECT_EQ(cursor0 + (NSLOTS + 1) * NSLOTS, cursor);
		} else {
			EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_DEVICE_LAUNCH,
					"last names no kernel");
			EXPECT_CONTAINS(c.exc.msg, "record 63 names no kernel");
		}
		for (uint32_t i = 0; i < NSLOTS; i++) {
			struct vgpu_cdp_record r;

			qts_memread(t->d.qts, slot_pa(t, i), &r, sizeof(r));
			EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state) {
				TH_LOG("round %d slot %u", round, i);
			}
			EXPECT_EQ(VGPU_CDP_NO_GRID, r.parent) {
				TH_LOG("round %d slot %u", round, i);
			}
		}
	}
}

/*
 * Forged areas: too many slots (VGPU_EXC_DEVICE_LAUNCH), an unmapped
 * area (an MMU fault of the launch, before its grid runs), a misaligned
 * one (VGPU_ERR_BAD_COMMAND).
 */
TEST_F(cdp, forged_areas)
{
	struct cdp *t = &self->t;
	struct vgpu_completion c;
	uint32_t n = 0x7fffffffu;

	qts_memwrite(t->d.qts, t->area_pa, &n, 4);
	ASSERT_TRUE(cdp_launch(t, &t->empty, t->area_va, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_DEVICE_LAUNCH, "slots");
	EXPECT_CONTAINS(c.exc.msg, "device-launch area of 2147483647 slots");
	n = NSLOTS;
	qts_memwrite(t->d.qts, t->area_pa, &n, 4);

	ASSERT_TRUE(cdp_launch(t, &t->empty, 0x7f0000000000ull, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_MMU_FAULT, VGPU_EXC_GLOBAL_FAULT, "unmapped");
	EXPECT_EQ(0x7f000000000cull, c.exc.addr);
	EXPECT_EQ((uint32_t)VGPU_MMU_ACC_ATOMIC, c.exc.info[0]);

	ASSERT_TRUE(cdp_launch(t, &t->empty, t->area_va + 8, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_BAD_COMMAND, VGPU_EXC_NONE, "misaligned");

	/* the area on a read-only page: the root's identifier faults */
	ASSERT_TRUE(cdp_launch(t, &t->empty, t->kdesc_va, &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_MMU_FAULT, VGPU_EXC_GLOBAL_FAULT, "read-only");

	ASSERT_TRUE(cdp_launch(t, &t->empty, t->area_va, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
}

/*
 * A child that never ends: the parent's budget stops it (its exception is
 * the launch's), then with the budget unlimited the watchdog (200 ms, the
 * child's own); each time the record is freed and the queue recovers.
 */
TEST_F(cdp, runaway_child_stopped)
{
	struct cdp *t = &self->t;
	struct dev_kernel spin;
	struct vgpu_kernel_desc kd;
	struct vgpu_cmd_launch cmd = dev_launch_cmd(&t->parent, 1, 1, t->par_va, 24);
	struct vgpu_completion c;
	struct vgpu_cdp_record r;

	ASSERT_EQ(0, dev_kernel_load(&t->d, 0, k_spin, &spin));
	kd = kdesc_of(&spin, 16);
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	cmd.cdp_area = t->area_va;
	cmd.budget = 100000;
	ASSERT_TRUE(dev_wait(&t->d, 0, dev_submit(&t->d, 0, &cmd), &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_EXCEPTION, VGPU_EXC_BUDGET, "budget");
	EXPECT_GE(c.warp_insns, 100000u);
	qts_memread(t->d.qts, slot_pa(t, 0), &r, sizeof(r));
	EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state);

	reg_write(&t->d, VGPU_REG_WDOG_MS, 200);
	cmd.budget = UINT64_MAX;
	ASSERT_TRUE(dev_wait(&t->d, 0, dev_submit(&t->d, 0, &cmd), &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_TIMEOUT, VGPU_EXC_ABORTED, "watchdog");
	EXPECT_CONTAINS(c.exc.msg, "watchdog: launch ran longer than 200 ms");
	qts_memread(t->d.qts, slot_pa(t, 0), &r, sizeof(r));
	EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state);

	/* recovered: a good child runs */
	good_tree_runs(_metadata, t);
	dev_kernel_free(&spin);
}

/*
 * The watchdog bounds a launch's tree, not each child: a tree of 2^25 - 2
 * grids of one thread each (each far within 200 ms, together minutes)
 * ends the launch with VGPU_ERR_TIMEOUT after 200 ms of children; the
 * slots are freed and the queue recovers.
 */
TEST_F(cdp, watchdog_bounds_the_tree)
{
	struct cdp *t = &self->t;
	struct dev_kernel tree;
	struct vgpu_kernel_desc kd;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t par_va, par_pa, params[2];

	ASSERT_EQ(0, dev_kernel_load(&t->d, 0, k_tree, &tree));
	kd = kdesc_of(&tree, 16);
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	par_va = dev_buf(&t->d, 0, sizeof(params), RO, &par_pa);
	params[0] = t->kdesc_va;
	params[1] = 0; /* the root: depth 0 */
	qts_memwrite(t->d.qts, par_pa, params, sizeof(params));
	cmd = dev_launch_cmd(&tree, 1, 1, par_va, sizeof(params));
	cmd.cdp_area = t->area_va;
	reg_write(&t->d, VGPU_REG_WDOG_MS, 200);
	ASSERT_TRUE(dev_wait(&t->d, 0, dev_submit(&t->d, 0, &cmd), &c));
	EXPECT_CDP_FAIL(t, c, VGPU_ERR_TIMEOUT, VGPU_EXC_ABORTED, "tree watchdog");
	EXPECT_CONTAINS(c.exc.msg, "watchdog: ");
	EXPECT_CONTAINS(c.exc.msg, "than 200 ms");
	for (uint32_t i = 0; i < NSLOTS; i++) {
		struct vgpu_cdp_record r;

		qts_memread(t->d.qts, slot_pa(t, i), &r, sizeof(r));
		EXPECT_EQ((uint32_t)VGPU_CDP_FREE, r.state) {
			TH_LOG("slot %u", i);
		}
	}
	reg_write(&t->d, VGPU_REG_WDOG_MS, 0);
	good_tree_runs(_metadata, t);
	dev_kernel_free(&tree);
}

/*
 * A device reset while a child spins: the reset waits for the queue (the
 * queue thread stops between its grids), writes no completion, and the
 * device runs a good tree afterwards.
 */
TEST_F(cdp, reset_while_child_runs)
{
	struct cdp *t = &self->t;
	struct dev_kernel spin;
	struct vgpu_kernel_desc kd;
	struct vgpu_cmd_launch cmd = dev_launch_cmd(&t->parent, 1, 1, t->par_va, 24);
	struct vgpu_completion c;
	uint32_t slot, state = 0;

	ASSERT_EQ(0, dev_kernel_load(&t->d, 0, k_spin, &spin));
	kd = kdesc_of(&spin, 16);
	qts_memwrite(t->d.qts, t->kdesc_pa, &kd, sizeof(kd));
	cmd.cdp_area = t->area_va;
	cmd.budget = UINT64_MAX;
	reg_write(&t->d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	slot = dev_submit(&t->d, 0, &cmd);
	/* the child runs: its record is RUNNING */
	for (int i = 0; i < 200000 && state != VGPU_CDP_RUNNING; i++)
		qts_memread(t->d.qts, slot_pa(t, 0), &state, 4);
	ASSERT_EQ((uint32_t)VGPU_CDP_RUNNING, state);
	EXPECT_NE(0u, qreg_read(&t->d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY);
	reg_write(&t->d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	EXPECT_EQ(0u, reg_read(&t->d, VGPU_REG_STATUS));
	EXPECT_EQ(0u, qreg_read(&t->d, 0, VGPU_Q_STATUS));
	dev_read_cpl(&t->d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq); /* void: no completion */

	/* the registers dev_open sets, again; a good tree runs */
	reg_write(&t->d, VGPU_REG_AS_BASE_LO, (uint32_t)DEV_AS_TABLE);
	reg_write(&t->d, VGPU_REG_AS_COUNT, 1);
	reg_write(&t->d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
	dev_queue_init(&t->d, 0, 64);
	qts_memset(t->d.qts, slot_pa(t, 0), 0, VGPU_CDP_RECORD_BYTES);
	good_tree_runs(_metadata, t);
	dev_kernel_free(&spin);
}

TEST_HARNESS_MAIN
