/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci fault injection through qtest (uapi/vgpu_hw.h, "Fault
 * injection"): with x-inject=on the device drops or delays a completion
 * interrupt, faults a launch, hangs a queue or corrupts a record exactly
 * as many times as it was told, and only then; without the property the
 * registers do nothing.  The driver's side is vgpu_faults (kselftest).
 *
 * No timing thresholds.  Where a test asserts that an interrupt did NOT
 * come, it first lets the device run for SETTLE_MS: a slow machine can
 * only make such a check pass, never fail.  DELAY_IRQ runs on the virtual
 * clock, which under qtest moves only with qts_clock_step(): its test is
 * exact.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "vgpu_dev.h"

#define RW (VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE)
#define RO (VGPU_PTE_VALID | VGPU_PTE_READ)
#define SETTLE_MS 200

/* out[gtid] = gtid + 1 */
static const char k_fill[] =
	".kernel fill\n"
	".param ptr out\n"
	"    S2R R0, SR_TID.X ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    IADD R5, R0, 0x1 ;\n"
	"    STG.32 [R2], R5 ;\n"
	"    EXIT ;\n";

FIXTURE(inj) {
	struct dev d;
	struct dev_kernel kern;
	uint64_t out_va, out_pa, par_va, par_pa;
};

static void inj_open(struct __test_metadata *_metadata,
		     FIXTURE_DATA(inj) *self, const char *props)
{
	ASSERT_EQ(0, dev_open(&self->d, props, 1));
	dev_queue_init(&self->d, 0, 16);
	ASSERT_EQ(0, dev_kernel_load(&self->d, 0, k_fill, &self->kern));
	self->out_va = dev_buf(&self->d, 0, 4096, RW, &self->out_pa);
	self->par_va = dev_buf(&self->d, 0, 4096, RO, &self->par_pa);
	qts_writeq(self->d.qts, self->par_pa, self->out_va);
}

FIXTURE_SETUP(inj)
{
	inj_open(_metadata, self, "x-inject=on");
}

FIXTURE_TEARDOWN(inj)
{
	dev_kernel_free(&self->kern);
	dev_close(&self->d);
}

/* A 32-thread launch of k_fill that asks for a completion interrupt. */
static uint32_t submit_fill(FIXTURE_DATA(inj) *self, unsigned q)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(&self->kern, 1, 32,
						    self->par_va, 8);

	cmd.hdr.flags = VGPU_CMD_F_IRQ;
	return dev_submit(&self->d, q, &cmd);
}

static void arm(struct dev *d, uint32_t kind, unsigned q, uint32_t count,
		uint64_t arg)
{
	reg_write(d, VGPU_REG_INJECT_ARG_LO, (uint32_t)arg);
	reg_write(d, VGPU_REG_INJECT_ARG_HI, arg >> 32);
	reg_write(d, VGPU_REG_INJECT, VGPU_INJECT(kind, q, count));
}

/* Wait (bounded) for an MSI-X message on @v; its count. */
static uint32_t wait_msi(struct dev *d, unsigned v)
{
	uint32_t n = 0;

	for (int i = 0; i < 100000 && !(n = dev_msi_read(d, v)); i++)
		;
	return n;
}

/* Wait (bounded) until queue @q has completed @n commands. */
static uint32_t wait_completed(struct dev *d, unsigned q, uint32_t n)
{
	uint32_t done = 0;

	for (int i = 0; i < 100000; i++)
		if ((done = qreg_read(d, q, VGPU_Q_COMPLETED_LO)) >= n)
			break;
	return done;
}

static void settle(void)
{
	usleep(SETTLE_MS * 1000u);
}

TEST_F(inj, feature_and_register_read_back)
{
	struct dev *d = &self->d;

	EXPECT_NE(0u, reg_read(d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_INJECT);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_INJECT));
	arm(d, VGPU_INJ_DELAY_IRQ, 0, 0, 0x123456789ull);
	/* count 0 means once */
	EXPECT_EQ(VGPU_INJECT(VGPU_INJ_DELAY_IRQ, 0, 1), reg_read(d, VGPU_REG_INJECT));
	EXPECT_EQ(0x23456789u, reg_read(d, VGPU_REG_INJECT_ARG_LO));
	EXPECT_EQ(0x1u, reg_read(d, VGPU_REG_INJECT_ARG_HI));
	arm(d, VGPU_INJ_HANG, 3, 7, 0);
	EXPECT_EQ(VGPU_INJECT(VGPU_INJ_HANG, 3, 7), reg_read(d, VGPU_REG_INJECT));
	/* no such queue, no such fault: refused, a guest error */
	reg_write(d, VGPU_REG_INJECT, VGPU_INJECT(VGPU_INJ_HANG, 200, 1));
	EXPECT_EQ(VGPU_ERR_BAD_REGISTER, reg_read(d, VGPU_REG_ERR_LAST));
	reg_write(d, VGPU_REG_INJECT, VGPU_INJECT(VGPU_INJ_KINDS, 0, 1));
	EXPECT_EQ(2u, reg_read(d, VGPU_REG_ERR_COUNT));
	EXPECT_EQ(VGPU_INJECT(VGPU_INJ_HANG, 3, 7), reg_read(d, VGPU_REG_INJECT));
	/* a device reset disarms every queue */
	reg_write(d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_INJECT));
	arm(d, VGPU_INJ_NONE, 3, 0, 0);
	EXPECT_EQ(VGPU_INJECT(VGPU_INJ_NONE, 3, 0), reg_read(d, VGPU_REG_INJECT));
}

/* Without x-inject the registers read 0 and a write is a guest error. */
TEST_F(inj, off_without_the_property)
{
	struct vgpu_completion c;
	struct dev *d = &self->d;

	dev_kernel_free(&self->kern);
	dev_close(d);
	inj_open(_metadata, self, NULL);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_INJECT);
	arm(d, VGPU_INJ_DROP_IRQ, 0, 1, 5);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_INJECT));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_INJECT_ARG_LO));
	EXPECT_EQ(3u, reg_read(d, VGPU_REG_ERR_COUNT));
	EXPECT_EQ(VGPU_ERR_BAD_REGISTER, reg_read(d, VGPU_REG_ERR_LAST));
	dev_msi_clear(d);
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(DEV_MSI_DATA + 0, wait_msi(d, 0));
}

/* DROP_IRQ x2: two completions counted and recorded without an interrupt. */
TEST_F(inj, drop_irq_twice)
{
	struct vgpu_completion c;
	struct dev *d = &self->d;
	int i;

	arm(d, VGPU_INJ_DROP_IRQ, 0, 2, 0);
	dev_msi_clear(d);
	for (i = 0; i < 2; i++) {
		ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ((uint64_t)i + 1, c.seq);
		EXPECT_EQ((uint32_t)i + 1, wait_completed(d, 0, i + 1));
		EXPECT_EQ(VGPU_INJECT(i ? VGPU_INJ_NONE : VGPU_INJ_DROP_IRQ, 0, 1 - i),
			  reg_read(d, VGPU_REG_INJECT));
	}
	EXPECT_EQ(32u, qts_readl(d->qts, self->out_pa + 31 * 4));
	settle();
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_IRQ_STATUS) & VGPU_IRQ_COMPLETION);
	/* spent: the third interrupt comes */
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(DEV_MSI_DATA + 0, wait_msi(d, 0));
}

/* DELAY_IRQ 50 ms: the interrupt comes when the virtual clock has moved 50 ms. */
TEST_F(inj, delay_irq_on_the_virtual_clock)
{
	struct vgpu_completion c;
	struct dev *d = &self->d;

	arm(d, VGPU_INJ_DELAY_IRQ, 0, 1, 50);
	dev_msi_clear(d);
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	settle();
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	qts_clock_step(d->qts, 49 * 1000000ull);
	settle();
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	qts_clock_step(d->qts, 1 * 1000000ull);
	EXPECT_EQ(DEV_MSI_DATA + 0, wait_msi(d, 0));
	EXPECT_NE(0u, reg_read(d, VGPU_REG_IRQ_STATUS) & VGPU_IRQ_COMPLETION);
}

/* MMU_FAULT: the launch does not run; the record of a fault at ARG; stopped. */
TEST_F(inj, mmu_fault_instead_of_the_launch)
{
	const uint64_t va = 0x7654321000ull;
	struct vgpu_completion c;
	struct dev *d = &self->d;
	uint32_t slot;

	arm(d, VGPU_INJ_MMU_FAULT, 0, 1, va);
	slot = submit_fill(self, 0);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, c.exc.code);
	EXPECT_EQ(va, c.exc.addr);
	EXPECT_EQ(VGPU_MMU_ACC_READ, c.exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, c.exc.info[1]);
	EXPECT_EQ(0u, c.exc.info[3]);
	EXPECT_NE(NULL, strstr(c.exc.msg, "injected"));
	EXPECT_NE(0u, qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED);
	EXPECT_EQ(VGPU_ERR_EXCEPTION, qreg_read(d, 0, VGPU_Q_ERROR));
	EXPECT_EQ(slot, qreg_read(d, 0, VGPU_Q_ERROR_INDEX));
	EXPECT_EQ(0u, qts_readl(d->qts, self->out_pa));
	/* resumed, the next launch runs */
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1u, qts_readl(d->qts, self->out_pa));
}

/* HANG: the command is taken and never ends, until the queue is disabled. */
TEST_F(inj, hang_until_the_queue_is_disabled)
{
	struct vgpu_completion c;
	struct dev *d = &self->d;
	uint32_t slot;

	arm(d, VGPU_INJ_HANG, 0, 1, 0);
	slot = submit_fill(self, 0);
	settle();
	EXPECT_EQ(VGPU_QSTAT_ENABLED, qreg_read(d, 0, VGPU_Q_STATUS));
	EXPECT_EQ(slot, qreg_read(d, 0, VGPU_Q_HEAD));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	dev_read_cpl(d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq);
	EXPECT_EQ(0u, qts_readl(d->qts, self->out_pa));
	/* a second command waits behind it */
	submit_fill(self, 0);
	settle();
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	/* disabled and set up again: the queue runs */
	qreg_write(d, 0, VGPU_Q_CONTROL, 0);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_INJECT));
	dev_queue_init(d, 0, 16);
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1u, qts_readl(d->qts, self->out_pa));
}

/* CORRUPT_CPL: that record's seq has bit 63 flipped; the next is right. */
TEST_F(inj, corrupt_record_seq)
{
	struct vgpu_completion c;
	struct dev *d = &self->d;

	arm(d, VGPU_INJ_CORRUPT_CPL, 0, 1, 0);
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1ull | 1ull << 63, c.seq);
	EXPECT_EQ(1u, wait_completed(d, 0, 1));
	ASSERT_TRUE(dev_wait(d, 0, submit_fill(self, 0), &c));
	EXPECT_EQ(2ull, c.seq);
}

/* A fault armed on one queue leaves the others alone. */
TEST_F(inj, other_queues_unaffected)
{
	struct vgpu_completion c;
	struct dev *d = &self->d;

	dev_queue_init(d, 1, 16);
	arm(d, VGPU_INJ_HANG, 0, 1, 0);
	ASSERT_TRUE(dev_wait(d, 1, submit_fill(self, 1), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1ull, c.seq);
	EXPECT_EQ(VGPU_INJECT(VGPU_INJ_HANG, 0, 1), reg_read(d, VGPU_REG_INJECT));
}

TEST_HARNESS_MAIN
