/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests through qtest: user-mode queues and the doorbell
 * BAR (uapi/vgpu_hw.h, "User-mode queues").  A user-mode queue's commands
 * were written by a process the kernel does not trust: they run in the
 * queue's address space whatever they name, privileged commands fail, a
 * garbage doorbell stops that queue and no other; its releases raise
 * VGPU_IRQ_USER, which the driver masks while no one waits.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "vgpu_dev.h"
#include "qtest_expect.h"

#define RW (VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE)
#define RO (VGPU_PTE_VALID | VGPU_PTE_READ)

#define UQ 1	/* the user-mode queue */
#define UAS 1	/* its address space */
#define KQ 0	/* a kernel-mode queue */

/* out[tid] = tid * 2 + k */
static const char k_store[] =
	".kernel store\n"
	".param ptr out\n"
	".param u32 k\n"
	"    S2R R0, SR_TID.X ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    LDP.32 R8, [k] ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    IMAD R5, R0, 0x2, R8 ;\n"
	"    STG.32 [R2], R5 ;\n"
	"    EXIT ;\n";

FIXTURE(userq) {
	struct dev d;
};

FIXTURE_SETUP(userq)
{
	ASSERT_EQ(0, dev_open(&self->d, "queues=4", 2));
	dev_queue_init(&self->d, KQ, 16);
	dev_user_queue_init(&self->d, UQ, 16, UAS);
}

FIXTURE_TEARDOWN(userq)
{
	dev_close(&self->d);
}

struct store {
	struct dev_kernel kern;
	uint64_t out_va, out_pa, par_va;
};

/* k_store in address space @as, writing 4 words with k = @k. */
static int store_setup(struct dev *d, unsigned as, struct store *st, uint32_t k)
{
	uint8_t params[16] = { 0 };
	uint64_t par_pa;

	if (dev_kernel_load(d, as, k_store, &st->kern))
		return -1;
	st->out_va = dev_buf(d, as, 16, RW, &st->out_pa);
	st->par_va = dev_buf(d, as, 16, RO, &par_pa);
	memcpy(params, &st->out_va, 8);
	memcpy(params + 8, &k, 4);
	qts_memwrite(d->qts, par_pa, params, sizeof(params));
	return 0;
}

static struct vgpu_cmd_launch store_cmd(const struct store *st, uint32_t asid)
{
	struct vgpu_cmd_launch c =
		dev_launch_cmd(&st->kern, 1, 4, st->par_va,
			       st->kern.k->param_size);

	c.asid = asid;
	return c;
}

static struct vgpu_cmd_fence fence_cmd(uint64_t addr, uint64_t value,
				       uint32_t flags, uint32_t asid)
{
	return (struct vgpu_cmd_fence){
		.hdr = { .opcode = VGPU_CMD_FENCE, .flags = flags },
		.addr = addr,
		.value = value,
		.asid = asid,
	};
}

/* Resume a stopped queue. */
static void resume(struct dev *d, unsigned q, uint32_t ctrl)
{
	qreg_write(d, q, VGPU_Q_CONTROL, ctrl | VGPU_QCTRL_RESUME);
	reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_ALL);
}

TEST_F(userq, control_reads_back_mode_and_address_space)
{
	struct dev *d = &self->d;

	EXPECT_NE(0u, reg_read(d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_USER_QUEUES);
	EXPECT_EQ(VGPU_QCTRL_ENABLE | VGPU_QCTRL_USER |
			  UAS << VGPU_QCTRL_ASID_SHIFT,
		  qreg_read(d, UQ, VGPU_Q_CONTROL));
	EXPECT_EQ(VGPU_QCTRL_ENABLE, qreg_read(d, KQ, VGPU_Q_CONTROL));
	/* the mode is taken at enable: a later write cannot change it */
	qreg_write(d, UQ, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
	EXPECT_EQ(VGPU_QCTRL_ENABLE | VGPU_QCTRL_USER |
			  UAS << VGPU_QCTRL_ASID_SHIFT,
		  qreg_read(d, UQ, VGPU_Q_CONTROL));
	qreg_write(d, UQ, VGPU_Q_CONTROL, 0);
	EXPECT_EQ(0u, qreg_read(d, UQ, VGPU_Q_CONTROL));
	/* a device reset returns the queue to kernel mode */
	dev_user_queue_init(d, UQ, 16, UAS);
	reg_write(d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	dev_setup(d, 2);
	dev_queue_init(d, UQ, 16);
	EXPECT_EQ(VGPU_QCTRL_ENABLE, qreg_read(d, UQ, VGPU_Q_CONTROL));
}

TEST_F(userq, doorbell_page_runs_commands_and_reports_progress)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_launch cmd;
	struct store st;
	uint32_t slot;

	ASSERT_EQ(0, store_setup(d, UAS, &st, 5));
	cmd = store_cmd(&st, UAS);
	slot = dev_put(d, UQ, &cmd);
	slot = dev_put(d, UQ, &cmd);
	EXPECT_EQ(0u, db_read(d, UQ, VGPU_DB_TAIL));
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	for (uint32_t i = 0; i < 4; i++)
		EXPECT_EQ(i * 2 + 5, qts_readl(d->qts, st.out_pa + 4 * i));
	/* the page shows the queue's progress, as BAR0 does */
	EXPECT_EQ(2u, db_read(d, UQ, VGPU_DB_TAIL));
	EXPECT_EQ(2u, db_read(d, UQ, VGPU_DB_HEAD));
	EXPECT_EQ(2u, db_read(d, UQ, VGPU_DB_COMPLETED_LO));
	EXPECT_EQ(0u, db_read(d, UQ, VGPU_DB_COMPLETED_HI));
	EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_IDLE,
		  db_read(d, UQ, VGPU_DB_STATUS));
	EXPECT_EQ(0u, db_read(d, UQ, VGPU_DB_ERROR));
	EXPECT_EQ(0u, db_read(d, UQ, 0x800));
	/* another queue's page shows that queue */
	EXPECT_EQ(0u, db_read(d, KQ, VGPU_DB_TAIL));
	EXPECT_EQ(0u, db_read(d, KQ, VGPU_DB_COMPLETED_LO));
	dev_kernel_free(&st.kern);
}

TEST_F(userq, commands_run_in_the_queues_address_space_only)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_launch cmd;
	struct vgpu_cmd_fence f;
	struct store st;
	uint64_t pa0, va0;
	uint32_t slot;

	/* the launch names AS 0 and still runs in AS 1, where its code is */
	ASSERT_EQ(0, store_setup(d, UAS, &st, 9));
	cmd = store_cmd(&st, 0);
	slot = dev_put(d, UQ, &cmd);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(3u * 2 + 9, qts_readl(d->qts, st.out_pa + 12));

	/* a fence at a VA that only AS 0 maps faults in AS 1 */
	va0 = dev_buf(d, 0, 8, RW, &pa0);
	qts_writeq(d->qts, pa0, 0x1111);
	f = fence_cmd(va0, 0xbad, 0, 0);
	slot = dev_put(d, UQ, &f);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(va0, c.exc.addr);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, c.exc.info[1]);
	EXPECT_EQ((uint32_t)UAS, c.exc.info[3]);
	EXPECT_EQ(0x1111u, qts_readq(d->qts, pa0));
	EXPECT_STOPPED(d, UQ, VGPU_ERR_MMU_FAULT, slot);

	/* the same fence from the kernel-mode queue reaches AS 0 */
	slot = dev_submit(d, KQ, &f);
	ASSERT_TRUE(dev_wait(d, KQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(0xbadu, qts_readq(d->qts, pa0));
	dev_kernel_free(&st.kern);
}

/* IRQ_STATUS once the bottom half raised @bit (up to 60 s). */
static uint32_t irq_status_with(struct dev *d, uint32_t bit)
{
	for (int i = 0; i < 60000 && !(reg_read(d, VGPU_REG_IRQ_STATUS) & bit); i++)
		usleep(1000);
	return reg_read(d, VGPU_REG_IRQ_STATUS);
}

TEST_F(userq, a_release_raises_the_user_interrupt_masked_apart)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_fence f, nop = { .hdr = { .opcode = VGPU_CMD_NOP,
						  .flags = VGPU_CMD_F_IRQ } };
	uint64_t pa, va;
	uint32_t slot;

	EXPECT_NE(0u, reg_read(d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_USER_IRQ);
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_COMPLETION | VGPU_IRQ_ERROR);
	reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_ALL);
	dev_msi_clear(d);
	/* the user queue's release: VGPU_IRQ_USER, held back by its mask */
	va = dev_buf(d, UAS, 8, RW, &pa);
	f = fence_cmd(va, 41, VGPU_CMD_F_IRQ, 0);
	slot = dev_put(d, UQ, &f);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(41u, qts_readq(d->qts, pa));
	EXPECT_EQ(VGPU_IRQ_USER, irq_status_with(d, VGPU_IRQ_USER));
	EXPECT_EQ(0u, dev_msi_read(d, VGPU_MSIX_VEC_COMPLETION));
	/* unmasked: delivered on the completion vector */
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
	EXPECT_EQ(DEV_MSI_DATA + VGPU_MSIX_VEC_COMPLETION,
		  dev_msi_read(d, VGPU_MSIX_VEC_COMPLETION));
	EXPECT_EQ(0u, dev_msi_read(d, VGPU_MSIX_VEC_ERROR));
	/* acknowledged, then unmasked again: nothing more comes */
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_COMPLETION | VGPU_IRQ_ERROR);
	reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_USER);
	dev_msi_clear(d);
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(0u, dev_msi_read(d, VGPU_MSIX_VEC_COMPLETION));
	/* a kernel-mode queue's: VGPU_IRQ_COMPLETION, as before */
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_COMPLETION | VGPU_IRQ_ERROR);
	slot = dev_submit(d, KQ, &nop);
	ASSERT_TRUE(dev_wait(d, KQ, slot, &c));
	EXPECT_EQ(VGPU_IRQ_COMPLETION, irq_status_with(d, VGPU_IRQ_COMPLETION));
	EXPECT_EQ(DEV_MSI_DATA + VGPU_MSIX_VEC_COMPLETION,
		  dev_msi_read(d, VGPU_MSIX_VEC_COMPLETION));
}

TEST_F(userq, privileged_commands_fail)
{
	struct dev *d = &self->d;
	const uint32_t uctrl = VGPU_QCTRL_ENABLE | VGPU_QCTRL_USER |
			       UAS << VGPU_QCTRL_ASID_SHIFT;
	struct vgpu_cmd_tlb_invalidate tlbi = {
		.hdr = { .opcode = VGPU_CMD_TLB_INVALIDATE },
		.asid = VGPU_TLBI_ALL_AS,
	};
	struct vgpu_cmd_sem rel = {
		.hdr = { .opcode = VGPU_CMD_SEM_RELEASE,
			 .flags = VGPU_CMD_F_FENCE_PHYS },
		.payload = 7,
	};
	struct vgpu_cmd_fence f;
	struct vgpu_completion c;
	uint64_t pa;
	uint32_t slot;

	pa = dev_alloc_pa(d, 4096);
	qts_writeq(d->qts, pa, 0x2222);
	rel.addr = pa;
	f = fence_cmd(pa, 0xbad, VGPU_CMD_F_FENCE_PHYS, 0);

	slot = dev_put(d, UQ, &f);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_BAD_COMMAND, c.status);
	EXPECT_EQ(VGPU_CMD_FENCE, c.opcode);
	EXPECT_STOPPED(d, UQ, VGPU_ERR_BAD_COMMAND, slot);

	resume(d, UQ, uctrl);
	slot = dev_put(d, UQ, &rel);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_BAD_COMMAND, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_RELEASE, c.opcode);

	resume(d, UQ, uctrl);
	slot = dev_put(d, UQ, &tlbi);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_BAD_COMMAND, c.status);
	EXPECT_EQ(VGPU_CMD_TLB_INVALIDATE, c.opcode);
	EXPECT_EQ(0x2222u, qts_readq(d->qts, pa));

	/* the kernel-mode queue may do all three */
	dev_put(d, KQ, &f);
	dev_put(d, KQ, &tlbi);
	slot = dev_submit(d, KQ, &rel);
	ASSERT_TRUE(dev_wait(d, KQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(7u, qts_readq(d->qts, pa));
}

TEST_F(userq, garbage_doorbell_stops_that_queue_only)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_launch cmd;
	struct store st;
	uint32_t slot, errs;

	ASSERT_EQ(0, store_setup(d, 0, &st, 3));
	dev_msi_clear(d);
	db_write(d, UQ, VGPU_DB_TAIL, 0xdeadbeef);
	EXPECT_STOPPED(d, UQ, VGPU_ERR_BAD_DOORBELL, 0);
	EXPECT_EQ(VGPU_ERR_BAD_DOORBELL, db_read(d, UQ, VGPU_DB_ERROR));
	EXPECT_EQ(VGPU_ERR_BAD_DOORBELL, reg_read(d, VGPU_REG_ERR_LAST));
	/* the interrupt comes from a bottom half: wait (up to 60 s) */
	for (int i = 0; i < 60000 && !dev_msi_read(d, VGPU_MSIX_VEC_ERROR); i++)
		usleep(1000);
	EXPECT_EQ(DEV_MSI_DATA + VGPU_MSIX_VEC_ERROR,
		  dev_msi_read(d, VGPU_MSIX_VEC_ERROR));
	EXPECT_NE(0u, reg_read(d, VGPU_REG_IRQ_STATUS) & VGPU_IRQ_ERROR);
	EXPECT_EQ(0u, qreg_read(d, UQ, VGPU_Q_TAIL));
	/* a second one while stopped changes nothing */
	db_write(d, UQ, VGPU_DB_TAIL, 16);
	EXPECT_EQ(0u, qreg_read(d, UQ, VGPU_Q_TAIL));

	/* a kernel-mode queue ignores one, through either BAR */
	errs = reg_read(d, VGPU_REG_ERR_COUNT);
	db_write(d, KQ, VGPU_DB_TAIL, 16);
	qreg_write(d, KQ, VGPU_Q_DOORBELL, 99);
	EXPECT_EQ(errs + 2, reg_read(d, VGPU_REG_ERR_COUNT));
	EXPECT_EQ(VGPU_ERR_BAD_REGISTER, reg_read(d, VGPU_REG_ERR_LAST));
	EXPECT_EQ(0u, qreg_read(d, KQ, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED);
	/* ... and runs on; so do wrong sizes and offsets on the page */
	qts_writeq(d->qts, DEV_BAR4 + KQ * VGPU_DOORBELL_PAGE, 5);
	db_write(d, KQ, VGPU_DB_HEAD, 5);
	EXPECT_EQ(0u, qreg_read(d, KQ, VGPU_Q_TAIL));
	cmd = store_cmd(&st, 0);
	slot = dev_put(d, KQ, &cmd);
	dev_doorbell_page(d, KQ);
	ASSERT_TRUE(dev_wait(d, KQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1u * 2 + 3, qts_readl(d->qts, st.out_pa + 4));
	dev_kernel_free(&st.kern);
}

TEST_F(userq, tlb_flush_register_makes_remaps_visible)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_fence f;
	uint64_t va, pa_a, pa_b;
	uint32_t slot;

	va = dev_buf(d, UAS, 4096, RW, &pa_a);
	pa_b = dev_alloc_pa(d, 4096);
	f = fence_cmd(va, 0xa, 0, 0);
	slot = dev_put(d, UQ, &f);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(0xau, qts_readq(d->qts, pa_a));
	/* the kernel remaps the page and flushes: the queue writes the new one */
	dev_map(d, UAS, va, pa_b, RW);
	reg_write(d, VGPU_REG_TLB_FLUSH, 1);
	f = fence_cmd(va, 0xb, 0, 0);
	slot = dev_put(d, UQ, &f);
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(0xbu, qts_readq(d->qts, pa_b));
	EXPECT_EQ(0xau, qts_readq(d->qts, pa_a));
}

/* STATUS of @q shows BUSY (@busy) or not, within 60 s. */
static bool wait_busy(struct dev *d, unsigned q, bool busy)
{
	uint64_t start = qts_now_ns();

	while (!!(qreg_read(d, q, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY) != busy)
		if (!qts_alive(d->qts) || qts_now_ns() - start > 60000000000ull)
			return false;
	return true;
}

/*
 * "Swapping queues": a queue held at a command boundary (a waiting
 * acquire gives way, uncompleted), read back, disabled, and restored on
 * another hardware queue goes on exactly where it stood: the acquire and
 * the command rung while it was held run once each, records keep their
 * slots and seq.
 */
TEST_F(userq, hold_and_restore_move_a_queue_between_hardware_queues)
{
	const uint32_t ctrl = VGPU_QCTRL_ENABLE | VGPU_QCTRL_USER |
			      UAS << VGPU_QCTRL_ASID_SHIFT;
	const unsigned other = 2;
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_fence f1, f2;
	struct vgpu_cmd_sem acq = {
		.hdr = { .opcode = VGPU_CMD_SEM_ACQUIRE },
		.op = VGPU_SEM_OP_GEQ,
		.payload = 1,
	};
	uint64_t va1, pa1, va2, pa2, vsem, psem, completed;
	uint32_t head, tail;

	EXPECT_NE(0u, reg_read(d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_QUEUE_SWAP);
	va1 = dev_buf(d, UAS, 8, RW, &pa1);
	va2 = dev_buf(d, UAS, 8, RW, &pa2);
	vsem = dev_buf(d, UAS, 8, RW, &psem);
	qts_writeq(d->qts, psem, 0);
	acq.addr = vsem;
	f1 = fence_cmd(va1, 0x11, 0, 0);
	f2 = fence_cmd(va2, 0x22, 0, 0);
	ASSERT_EQ(0u, dev_put(d, UQ, &f1));
	ASSERT_EQ(1u, dev_put(d, UQ, &acq));
	dev_doorbell_page(d, UQ);
	ASSERT_TRUE(dev_wait(d, UQ, 0, &c));
	EXPECT_EQ(1u, c.seq);
	ASSERT_TRUE(wait_busy(d, UQ, true));	/* the acquire waits */

	/* held: the acquire gives way, uncompleted; HEAD stays on it */
	qreg_write(d, UQ, VGPU_Q_CONTROL, ctrl | VGPU_QCTRL_HOLD);
	ASSERT_TRUE(wait_busy(d, UQ, false));
	EXPECT_EQ(ctrl | VGPU_QCTRL_HOLD, qreg_read(d, UQ, VGPU_Q_CONTROL));
	EXPECT_EQ(1u, qreg_read(d, UQ, VGPU_Q_HEAD));
	EXPECT_EQ(1u, qreg_read(d, UQ, VGPU_Q_COMPLETED_LO));
	dev_read_cpl(d, UQ, 1, &c);
	EXPECT_EQ(0u, c.seq);
	/* a doorbell while held latches TAIL and starts nothing */
	ASSERT_EQ(2u, dev_put(d, UQ, &f2));
	dev_doorbell_page(d, UQ);
	EXPECT_EQ(3u, qreg_read(d, UQ, VGPU_Q_TAIL));
	EXPECT_EQ(1u, qreg_read(d, UQ, VGPU_Q_HEAD));
	EXPECT_EQ(0u, qreg_read(d, UQ, VGPU_Q_STATUS) &
		      (VGPU_QSTAT_BUSY | VGPU_QSTAT_IDLE | VGPU_QSTAT_STOPPED));
	/* progress registers are read-only while enabled */
	qreg_write(d, UQ, VGPU_Q_HEAD, 7);
	EXPECT_EQ(1u, qreg_read(d, UQ, VGPU_Q_HEAD));
	EXPECT_EQ((uint32_t)VGPU_ERR_BAD_REGISTER, reg_read(d, VGPU_REG_ERR_LAST));

	/* taken off at the boundary: the disable aborts nothing */
	head = qreg_read(d, UQ, VGPU_Q_HEAD);
	tail = qreg_read(d, UQ, VGPU_Q_TAIL);
	completed = qreg_read(d, UQ, VGPU_Q_COMPLETED_LO) |
		    (uint64_t)qreg_read(d, UQ, VGPU_Q_COMPLETED_HI) << 32;
	qreg_write(d, UQ, VGPU_Q_CONTROL, 0);
	dev_read_cpl(d, UQ, 1, &c);
	EXPECT_EQ(0u, c.seq);
	EXPECT_EQ(0u, qts_readq(d->qts, pa2));

	/* put back on another hardware queue, same rings */
	qts_writeq(d->qts, psem, 1);
	qreg_write(d, other, VGPU_Q_RING_LO, (uint32_t)dev_ring_pa(UQ));
	qreg_write(d, other, VGPU_Q_RING_HI, 0);
	qreg_write(d, other, VGPU_Q_CPL_LO, (uint32_t)DEV_CPL_PA(UQ, 0));
	qreg_write(d, other, VGPU_Q_CPL_HI, 0);
	qreg_write(d, other, VGPU_Q_SIZE, 16);
	qreg_write(d, other, VGPU_Q_HEAD, head);
	qreg_write(d, other, VGPU_Q_COMPLETED_LO, (uint32_t)completed);
	qreg_write(d, other, VGPU_Q_COMPLETED_HI, completed >> 32);
	qreg_write(d, other, VGPU_Q_CONTROL, ctrl | VGPU_QCTRL_RESTORE);
	EXPECT_EQ(1u, qreg_read(d, other, VGPU_Q_HEAD));
	EXPECT_EQ(1u, qreg_read(d, other, VGPU_Q_TAIL));
	EXPECT_EQ(ctrl, qreg_read(d, other, VGPU_Q_CONTROL));
	qreg_write(d, other, VGPU_Q_DOORBELL, tail);
	ASSERT_TRUE(dev_wait(d, UQ, 2, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(3u, c.seq);
	EXPECT_EQ(other, c.queue);
	dev_read_cpl(d, UQ, 1, &c);
	EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, c.opcode);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	EXPECT_EQ(0x11u, qts_readq(d->qts, pa1));
	EXPECT_EQ(0x22u, qts_readq(d->qts, pa2));
	EXPECT_EQ(3u, qreg_read(d, other, VGPU_Q_COMPLETED_LO));
	EXPECT_EQ(3u, qreg_read(d, other, VGPU_Q_HEAD));

	/* without RESTORE, enable starts at 0 whatever was written */
	qreg_write(d, other, VGPU_Q_CONTROL, 0);
	qreg_write(d, other, VGPU_Q_HEAD, 5);
	qreg_write(d, other, VGPU_Q_COMPLETED_LO, 9);
	qreg_write(d, other, VGPU_Q_CONTROL, ctrl);
	EXPECT_EQ(0u, qreg_read(d, other, VGPU_Q_HEAD));
	EXPECT_EQ(0u, qreg_read(d, other, VGPU_Q_COMPLETED_LO));
	/* a HEAD past the ring: stopped with BAD_RING */
	qreg_write(d, other, VGPU_Q_CONTROL, 0);
	qreg_write(d, other, VGPU_Q_HEAD, 16);
	qreg_write(d, other, VGPU_Q_CONTROL, ctrl | VGPU_QCTRL_RESTORE);
	EXPECT_STOPPED(d, other, VGPU_ERR_BAD_RING, 0);
	/* a disable lets go of HOLD */
	qreg_write(d, other, VGPU_Q_CONTROL, 0);
	EXPECT_EQ(0u, qreg_read(d, other, VGPU_Q_CONTROL));
}

TEST_HARNESS_MAIN
