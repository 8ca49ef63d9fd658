/* SPDX-License-Identifier: MIT */
/*
 * The device's atomics beyond 32-bit integers, through its GPU MMU into
 * guest RAM: 64-bit integer adds (a carry each time) and max, f64 and
 * f16x2 adds, f16x2 max and bf16 min over NaNs, and 16-bit
 * compare-and-swap counters on the two halves of one word, from 64 CTAs
 * on four SM threads at once, each total exact;
 * a 64-bit atomic on a read-only page faults as an atomic access, and
 * one on a NULL page (sparse) returns 0 and writes nothing.
 */
#include <string.h>

#include "kselftest_host.h"
#include "vgpu_dev.h"
#include "qtest_expect.h"
#include "test_device.h"

/*
 * g: [0] u64 += 0xffffffff, [8] f64 += 1.0, [16 + 2 * (tid & 1)] a u16
 * CAS counter, [20] f16x2 += {1.0, 0.5} by thread 0 of each CTA, [24]
 * max.s64 ctaid - 1000, [32] f16x2 max {tid, 0x8000 | tid} (subnormals of
 * either sign), [36] bf16 min 0x8000 | ctaid.
 */
static const char k_atom[] =
	".kernel atom\n"
	".param ptr g\n"
	"  LDP.64 R2, [g] ;\n"
	"  S2R R0, SR_TID.X ;\n  S2R R1, SR_CTAID.X ;\n"
	"  MOV R10, 0xffffffff ;\n  MOV R11, 0x0 ;\n"
	"  ATOMG.ADD.U64 R30, [R2+0x0], R10 ;\n"
	"  MOV R12, 0x0 ;\n  MOV R13, 0x3ff00000 ;\n"
	"  ATOMG.ADD.F64 RZ, [R2+0x8], R12 ;\n"
	"  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
	"  MOV R14, 0x38003c00 ;\n"
	"  @P0 ATOMG.ADD.F16X2 RZ, [R2+0x14], R14 ;\n"
	"  IADD R16, R1, -0x3e8 ;\n  SHR.S32 R17, R16, 0x1f ;\n"
	"  ATOMG.MAX.S64 RZ, [R2+0x18], R16 ;\n"
	"  SHL R15, R0, 0x10 ;\n  LOP.OR R15, R15, R0 ;\n"
	"  LOP.OR R15, R15, 0x80000000 ;\n"
	"  ATOMG.MAX.F16X2 RZ, [R2+0x20], R15 ;\n"
	"  LOP.OR R18, R1, 0x8000 ;\n"
	"  ATOMG.MIN.BF16 RZ, [R2+0x24], R18 ;\n"
	"  LOP.AND R5, R0, 0x1 ;\n  SHL R5, R5, 0x1 ;\n"
	"  IADD R20, R2, R5 ;\n  MOV R21, R3 ;\n"
	"  LDG.U16 R22, [R20+0x10] ;\n"
	"c:\n  IADD R23, R22, 0x1 ;\n"
	"  ATOMG.CAS.U16 R24, [R20+0x10], R22, R23 ;\n"
	"  ISETP.NE.U32 P2, R24, R22 ;\n"
	"  MOV R22, R24 ;\n"
	"  @P2 BRA c ;\n"
	"  EXIT ;\n";

/* Launch k_atom over @grid x 128 threads on @g_va; the completion. */
static struct vgpu_completion run_atom(struct __test_metadata *_metadata, struct dev *d,
				       uint64_t g_va, uint32_t grid)
{
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t par_pa, par_va;

	memset(&c, 0, sizeof(c));
	if (dev_kernel_load(d, 0, k_atom, &kern)) {
		EXPECT_TRUE(false);
		return c;
	}
	par_va = dev_buf(d, 0, 8, RO, &par_pa);
	qts_memwrite(d->qts, par_pa, &g_va, 8);
	cmd = dev_launch_cmd(&kern, grid, 128, par_va, 8);
	EXPECT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmd), &c));
	dev_kernel_free(&kern);
	return c;
}

TEST(wide_and_float_atomics_on_four_threads)
{
	uint64_t g_pa, g_va, u, f, m;
	uint16_t h[4], mm[3];
	struct vgpu_completion c;
	uint8_t init[64] = { 0 };
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "sms=4,threads=4", 1));
	dev_queue_init(&d, 0, 8);
	g_va = dev_buf(&d, 0, 4096, RW, &g_pa);
	init[31] = 0x80; /* [24]: INT64_MIN */
	/* NaNs, which lose to any number: f16 0x7e01, 0xfc01, bf16 0x7fc1 */
	init[32] = 0x01, init[33] = 0x7e, init[34] = 0x01, init[35] = 0xfc;
	init[36] = 0xc1, init[37] = 0x7f;
	qts_memwrite(d.qts, g_pa, init, sizeof(init));
	c = run_atom(_metadata, &d, g_va, 64);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, g_pa, &u, 8);
	qts_memread(d.qts, g_pa + 8, &f, 8);
	qts_memread(d.qts, g_pa + 16, h, 8);
	qts_memread(d.qts, g_pa + 24, &m, 8);
	qts_memread(d.qts, g_pa + 32, mm, 6);
	EXPECT_EQ(64ull * 128 * 0xffffffffull, u);
	EXPECT_EQ(0x40c0000000000000ull, f); /* 8192.0 */
	EXPECT_EQ(64u * 64, h[0]);	      /* even threads */
	EXPECT_EQ(64u * 64, h[1]);	      /* odd threads */
	EXPECT_EQ(0x5400u, h[2]);	      /* 64.0 in f16 */
	EXPECT_EQ(0x5000u, h[3]);	      /* 32.0 */
	EXPECT_EQ((uint64_t)(63 - 1000), m);
	EXPECT_EQ(0x007fu, mm[0]); /* the largest subnormal, kept */
	EXPECT_EQ(0x8000u, mm[1]); /* -0, above every negative subnormal */
	EXPECT_EQ(0x803fu, mm[2]); /* bf16 -63 x 2^-133 */
	dev_close(&d);
}

TEST(atomic_on_read_only_page_faults_as_an_atomic)
{
	struct vgpu_completion c;
	uint64_t g_pa, g_va;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	dev_queue_init(&d, 0, 8);
	g_va = dev_buf(&d, 0, 4096, RO, &g_pa);
	c = run_atom(_metadata, &d, g_va, 1);
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, c.exc.code);
	EXPECT_EQ(VGPU_MMU_ACC_ATOMIC, c.exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_PERMISSION, c.exc.info[1]);
	EXPECT_EQ(g_va, c.exc.addr);
	EXPECT_CONTAINS(c.exc.msg, "atomic");
	check_recovers(_metadata, &d, 0);
	dev_close(&d);
}

/* a NULL page: every atomic returns 0 and the page behind is untouched */
TEST(atomics_on_a_null_page_return_zero)
{
	uint8_t fill[64], got[64];
	struct vgpu_completion c;
	uint64_t g_pa, g_va;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	dev_queue_init(&d, 0, 8);
	g_va = dev_buf(&d, 0, 4096, RW | VGPU_PTE_NULL, &g_pa);
	memset(fill, 0x55, sizeof(fill));
	qts_memwrite(d.qts, g_pa, fill, sizeof(fill));
	c = run_atom(_metadata, &d, g_va, 2);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, g_pa, got, sizeof(got));
	EXPECT_EQ(0, memcmp(got, fill, sizeof(got)));
	/* and the CAS loops ended: each read 0 and its CAS returned 0 */
	dev_close(&d);
}

TEST_HARNESS_MAIN
