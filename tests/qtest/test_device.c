/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests through QEMU's qtest protocol, no guest kernel:
 * each test starts the built qemu-system-x86_64 with -accel qtest and the
 * device, plays the driver (PCI set-up, page tables, rings) and checks
 * what the device wrote back.  Every malformed input must end in the
 * documented error completion with QEMU still answering afterwards.
 *
 * No timing thresholds: waits give up only after 60 s, to keep a broken
 * device from hanging the suite.
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

/* out[gtid] = gtid * 2 + k */
static const char k_store[] =
	".kernel store\n"
	".param ptr out\n"
	".param u32 k\n"
	"    S2R R0, SR_TID.X ;\n"
	"    S2R R1, SR_CTAID.X ;\n"
	"    S2R R7, SR_NTID.X ;\n"
	"    IMAD R0, R1, R7, R0 ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    LDP.32 R8, [k] ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    IMAD R5, R0, 0x2, R8 ;\n"
	"    STG.32 [R2], R5 ;\n"
	"    EXIT ;\n";

/* every thread adds 1 to *counter and stores its SM id */
static const char k_atomic[] =
	".kernel count\n"
	".param ptr counter\n"
	"    LDP.64 R2, [counter] ;\n"
	"    MOV R5, 0x1 ;\n"
	"    ATOMG.ADD.U32 R9, [R2], R5 ;\n"
	"    EXIT ;\n";

static const char k_spin[] =
	".kernel spin\n"
	"loop:\n"
	"    BRA loop ;\n"
	"    EXIT ;\n";

static const char k_empty[] = ".kernel empty\n    EXIT ;\n";

/* out[ctaid] = the SM that ran the CTA */
static const char k_smid[] =
	".kernel smid\n"
	".param ptr out\n"
	"    S2R R0, SR_CTAID.X ;\n"
	"    S2R R1, SR_SMID ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    STG.32 [R2], R1 ;\n"
	"    EXIT ;\n";

/* ---- helpers ---- */

struct store_setup {
	struct dev_kernel kern;
	uint64_t out_va, out_pa, par_va, par_pa;
};

/* Kernel k_store with an output buffer of @n words and k = @k. */
static int store_setup(struct dev *d, struct store_setup *st, uint32_t n,
		       uint32_t k, uint64_t out_flags)
{
	uint8_t params[16] = { 0 };

	if (dev_kernel_load(d, 0, k_store, &st->kern))
		return -1;
	st->out_va = dev_buf(d, 0, 4ull * n, out_flags, &st->out_pa);
	st->par_va = dev_buf(d, 0, 16, RO, &st->par_pa);
	memcpy(params, &st->out_va, 8);
	memcpy(params + 8, &k, 4);
	qts_memwrite(d->qts, st->par_pa, params, sizeof(params));
	return 0;
}

static struct vgpu_cmd_launch store_cmd(struct store_setup *st, uint32_t grid,
					uint32_t block)
{
	return dev_launch_cmd(&st->kern, grid, block, st->par_va,
			      st->kern.k->param_size);
}

/* Launch @src (no parameters) with the given grid/block; its completion. */
static bool run_simple(struct dev *d, unsigned q, const char *src,
		       uint32_t grid, uint32_t block, uint64_t budget,
		       struct vgpu_completion *c)
{
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	bool ok;

	if (dev_kernel_load(d, 0, src, &kern))
		return false;
	cmd = dev_launch_cmd(&kern, grid, block, 0, 0);
	cmd.budget = budget;
	ok = dev_wait(d, q, dev_submit(d, q, &cmd), c);
	dev_kernel_free(&kern);
	return ok;
}

static void wait_msi(struct dev *d, unsigned v)
{
	for (int i = 0; i < 100000 && !dev_msi_read(d, v); i++)
		;
}

/* As EXPECT_STOPPED, and the error interrupt is raised. */
#define EXPECT_STOPPED_IRQ(d, q, err, slot)                                    \
	do {                                                                   \
		EXPECT_STOPPED(d, q, err, slot);                               \
		EXPECT_NE(0u, reg_read(d, VGPU_REG_IRQ_STATUS) &               \
				      VGPU_IRQ_ERROR);                         \
	} while (0)

/* After an error: resume the queue and check that a launch works again. */
static void check_recovers(struct __test_metadata *_metadata, struct dev *d,
			   unsigned q)
{
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t out[4];

	qreg_write(d, q, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_ALL);
	EXPECT_EQ(0u, (qreg_read(d, q, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED));
	if (store_setup(d, &st, 4, 7, RW))
		return;
	cmd = store_cmd(&st, 1, 4);
	EXPECT_TRUE(dev_wait(d, q, dev_submit(d, q, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d->qts, st.out_pa, out, sizeof(out));
	EXPECT_EQ(3u * 2 + 7, out[3]);
	dev_kernel_free(&st.kern);
}

/*
 * Most tests drive one QEMU with the device's default properties and one
 * address space (dev_open), quit after the test, also when it failed.
 */
FIXTURE(device) {
	struct dev d;
};

FIXTURE_SETUP(device)
{
	ASSERT_EQ(0, dev_open(&self->d, NULL, 1));
}

FIXTURE_TEARDOWN(device)
{
	dev_close(&self->d);
}

/* ---- identification, reset values, registers ---- */

TEST(pci_identity_and_reset_values)
{
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "sms=8,smem=65536,queues=3,threads=2", 1));
	EXPECT_EQ(VGPU_PCI_VENDOR_ID, qts_cfg_readw(d.qts, DEV_DEVFN, 0));
	EXPECT_EQ(VGPU_PCI_DEVICE_ID, qts_cfg_readw(d.qts, DEV_DEVFN, 2));
	EXPECT_EQ(VGPU_PCI_CLASS, qts_cfg_readl(d.qts, DEV_DEVFN, 8) >> 16);
	EXPECT_EQ(VGPU_PCI_REVISION, qts_cfg_readl(d.qts, DEV_DEVFN, 8) & 0xff);
	EXPECT_NE(0u, qts_cfg_find_cap(d.qts, DEV_DEVFN, 0x10)); /* PCI Express */
	EXPECT_NE(0u, d.msix_cap);
	EXPECT_EQ(VGPU_MSIX_VECTORS,
		  (qts_cfg_readw(d.qts, DEV_DEVFN, d.msix_cap + 2) & 0x7ff) + 1u);

	EXPECT_EQ(VGPU_ID_MAGIC, reg_read(&d, VGPU_REG_ID));
	EXPECT_EQ(VGPU_VERSION_MAJOR << 16 | VGPU_VERSION_MINOR, reg_read(&d, VGPU_REG_VERSION));
	EXPECT_EQ(8u, reg_read(&d, VGPU_REG_CAP_SMS));
	EXPECT_EQ(65536u, reg_read(&d, VGPU_REG_CAP_SMEM));
	EXPECT_EQ(3u, reg_read(&d, VGPU_REG_CAP_QUEUES));
	EXPECT_EQ(2u, reg_read(&d, VGPU_REG_CAP_THREADS));
	EXPECT_EQ(1024u, reg_read(&d, VGPU_REG_CAP_MAX_THREADS));
	EXPECT_EQ(16u, reg_read(&d, VGPU_REG_CAP_BARRIERS));
	EXPECT_EQ(32u, reg_read(&d, VGPU_REG_CAP_WARP_SIZE));
	EXPECT_EQ(4096u, reg_read(&d, VGPU_REG_CAP_MAX_PARAM));
	EXPECT_EQ(48u, reg_read(&d, VGPU_REG_CAP_VA_BITS));
	EXPECT_EQ(VGPU_MAX_CODE_BYTES, reg_read(&d, VGPU_REG_CAP_MAX_CODE));
	EXPECT_EQ(VGPU_AS_MAX, reg_read(&d, VGPU_REG_CAP_AS_MAX));
	EXPECT_EQ(VGPU_RING_MAX, reg_read(&d, VGPU_REG_CAP_RING_MAX));
	EXPECT_NE(0u, reg_read(&d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_MMU);
	EXPECT_NE(0u, reg_read(&d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_SEMAPHORES);
	EXPECT_EQ(0u, reg_read(&d, VGPU_REG_STATUS));
	EXPECT_EQ(0u, reg_read(&d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(0u, reg_read(&d, VGPU_REG_WDOG_MS));
	EXPECT_EQ(0u, reg_read(&d, VGPU_REG_ERR_COUNT));
	for (unsigned q = 0; q < 3; q++) {
		EXPECT_EQ(0u, qreg_read(&d, q, VGPU_Q_STATUS));
		EXPECT_EQ(0u, qreg_read(&d, q, VGPU_Q_HEAD));
		EXPECT_EQ(0u, qreg_read(&d, q, VGPU_Q_TAIL));
		EXPECT_EQ(0u, qreg_read(&d, q, VGPU_Q_SIZE));
		EXPECT_EQ(0u, qreg_read(&d, q, VGPU_Q_ERROR));
	}
	/* registers written by dev_open read back */
	EXPECT_EQ((uint32_t)DEV_AS_TABLE, reg_read(&d, VGPU_REG_AS_BASE_LO));
	EXPECT_EQ(1u, reg_read(&d, VGPU_REG_AS_COUNT));
	EXPECT_EQ(VGPU_IRQ_ALL, reg_read(&d, VGPU_REG_IRQ_MASK));
	EXPECT_EQ(0u, reg_read(&d, VGPU_REG_ERR_COUNT));
	dev_close(&d);
}

TEST(bad_properties_refused)
{
	/* QEMU refuses to start: qts_start fails or QEMU has exited. */
	struct qts *s = qts_start("-device vgpu-pci,threads=9,sms=4");

	if (s) {
		EXPECT_EQ(0, qts_alive(s));
		qts_quit(s);
	}
}

TEST_F(device, bad_register_accesses_ignored_and_logged)
{
	struct dev *d = &self->d;

	/* wrong sizes, misaligned, unknown offsets, read-only registers */
	EXPECT_EQ(0, qts_readb(d->qts, DEV_BAR0 + VGPU_REG_ID));
	EXPECT_EQ(0, qts_readw(d->qts, DEV_BAR0 + VGPU_REG_ID));
	EXPECT_EQ(0u, qts_readq(d->qts, DEV_BAR0 + VGPU_REG_ID));
	EXPECT_EQ(0u, qts_readl(d->qts, DEV_BAR0 + 2));
	EXPECT_EQ(0u, reg_read(d, 0x3000));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_QUEUE(4))); /* queue 4 of 4 */
	qts_writeq(d->qts, DEV_BAR0 + VGPU_REG_IRQ_MASK, 0);
	qts_writeb(d->qts, DEV_BAR0 + VGPU_REG_IRQ_MASK, 0);
	qts_writel(d->qts, DEV_BAR0 + VGPU_REG_IRQ_MASK + 1, 0);
	reg_write(d, VGPU_REG_ID, 0x1234);
	reg_write(d, VGPU_REG_CAP_SMS, 99);
	reg_write(d, 0x3ffc, 1);
	reg_write(d, VGPU_REG_AS_COUNT, VGPU_AS_MAX + 1);
	qreg_write(d, 0, VGPU_Q_DOORBELL, 5); /* queue disabled */

	EXPECT_TRUE(qts_alive(d->qts));
	EXPECT_EQ(VGPU_ID_MAGIC, reg_read(d, VGPU_REG_ID));
	EXPECT_EQ(4u, reg_read(d, VGPU_REG_CAP_SMS));
	EXPECT_EQ(VGPU_IRQ_ALL, reg_read(d, VGPU_REG_IRQ_MASK));
	EXPECT_EQ(1u, reg_read(d, VGPU_REG_AS_COUNT));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_TAIL));
	EXPECT_EQ(14u, reg_read(d, VGPU_REG_ERR_COUNT));
	EXPECT_EQ(VGPU_ERR_BAD_REGISTER, reg_read(d, VGPU_REG_ERR_LAST));
	EXPECT_CONTAINS(qts_log(d->qts), "vgpu: 1-byte read at 0x0");
	EXPECT_CONTAINS(qts_log(d->qts), "vgpu: read of unknown register 0x3000");
	EXPECT_CONTAINS(qts_log(d->qts), "not a writable register");
	EXPECT_CONTAINS(qts_log(d->qts), "doorbell 5 ignored");
}

/* ---- launches ---- */

TEST_F(device, launch_results_completion_and_msix)
{
	struct dev *d = &self->d;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t out[96];
	uint32_t slot;

	dev_queue_init(d, 0, 8);
	EXPECT_NE(0u, qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_IDLE);
	ASSERT_EQ(0, store_setup(d, &st, 96, 100, RW));
	cmd = store_cmd(&st, 3, 32);
	cmd.hdr.flags = VGPU_CMD_F_IRQ;
	slot = dev_submit(d, 0, &cmd);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_LAUNCH, c.opcode);
	EXPECT_EQ(0u, c.index);
	EXPECT_EQ(0u, c.queue);
	EXPECT_EQ(1u, c.seq);
	EXPECT_EQ(3u * 11, c.warp_insns); /* 3 warps x 11 instructions */
	EXPECT_EQ((uint32_t)VGPU_EXC_NONE, c.exc.code);
	qts_memread(d->qts, st.out_pa, out, sizeof(out));
	for (unsigned i = 0; i < 96; i++)
		EXPECT_EQ(i * 2 + 100, out[i]);

	wait_msi(d, 0);
	EXPECT_EQ(DEV_MSI_DATA + 0, dev_msi_read(d, 0));
	EXPECT_EQ(0u, dev_msi_read(d, 1));
	EXPECT_EQ(VGPU_IRQ_COMPLETION, reg_read(d, VGPU_REG_IRQ_STATUS));
	reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_COMPLETION);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(1u, qreg_read(d, 0, VGPU_Q_HEAD));
	EXPECT_EQ(1u, qreg_read(d, 0, VGPU_Q_TAIL));
	EXPECT_EQ(1u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	EXPECT_NE(0u, qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_IDLE);

	/* Without F_IRQ: no message, no status bit. */
	dev_msi_clear(d);
	cmd.hdr.flags = 0;
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	dev_kernel_free(&st.kern);
}

TEST_F(device, ring_wraps_around)
{
	struct dev *d = &self->d;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t out[4];

	dev_queue_init(d, 1, 2);
	ASSERT_EQ(0, store_setup(d, &st, 4, 0, RW));
	for (uint32_t i = 0; i < 5; i++) {
		uint32_t k = 1000 * i;

		qts_memwrite(d->qts, st.par_pa + 8, &k, 4);
		cmd = store_cmd(&st, 1, 4);
		ASSERT_TRUE(dev_wait(d, 1, dev_submit(d, 1, &cmd), &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ(i % 2, c.index);
		EXPECT_EQ(i + 1, c.seq);
		qts_memread(d->qts, st.out_pa, out, sizeof(out));
		EXPECT_EQ(4 + k, out[2]);
	}
	dev_kernel_free(&st.kern);
}

TEST(parallel_ctas_on_four_threads)
{
	struct dev d;
	struct dev_kernel kern;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t cnt_pa, cnt_va, par_pa, par_va;
	static uint32_t out[64 * 64];
	uint32_t count;

	ASSERT_EQ(0, dev_open(&d, "sms=4,threads=4", 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, store_setup(&d, &st, 64 * 64, 5, RW));
	cmd = store_cmd(&st, 64, 64);
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, st.out_pa, out, sizeof(out));
	for (unsigned i = 0; i < 64 * 64; i++)
		if (out[i] != i * 2 + 5) {
			EXPECT_EQ(i * 2 + 5, out[i]);
			break;
		}

	/* atomics from four threads at once */
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_atomic, &kern));
	cnt_va = dev_buf(&d, 0, 4, RW, &cnt_pa);
	par_va = dev_buf(&d, 0, 8, RO, &par_pa);
	qts_memwrite(d.qts, par_pa, &cnt_va, 8);
	cmd = dev_launch_cmd(&kern, 256, 128, par_va, 8);
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, cnt_pa, &count, 4);
	EXPECT_EQ(256u * 128, count);
	dev_kernel_free(&kern);
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

TEST(queues_run_independently)
{
	struct dev d;
	struct store_setup st[3];
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t slot[3], out[32];

	ASSERT_EQ(0, dev_open(&d, "queues=3", 1));
	for (unsigned q = 0; q < 3; q++) {
		dev_queue_init(&d, q, 4);
		ASSERT_EQ(0, store_setup(&d, &st[q], 32, 10 * q, RW));
	}
	for (unsigned q = 0; q < 3; q++) {
		cmd = store_cmd(&st[q], 1, 32);
		slot[q] = dev_submit(&d, q, &cmd);
	}
	for (unsigned q = 0; q < 3; q++) {
		ASSERT_TRUE(dev_wait(&d, q, slot[q], &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ(q, c.queue);
		qts_memread(d.qts, st[q].out_pa, out, sizeof(out));
		EXPECT_EQ(62 + 10 * q, out[31]);
		dev_kernel_free(&st[q].kern);
	}
	dev_close(&d);
}

TEST_F(device, fence_writes_value_and_interrupts)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint64_t pa, va;
	struct vgpu_cmd_fence f = {
		.hdr = { .opcode = VGPU_CMD_FENCE, .flags = VGPU_CMD_F_IRQ },
		.value = 0x1122334455667788ull,
	};

	dev_queue_init(d, 0, 4);
	va = dev_buf(d, 0, 4096, RW, &pa);
	f.addr = va + 8;
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &f), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_FENCE, c.opcode);
	EXPECT_EQ(0x1122334455667788ull, qts_readq(d->qts, pa + 8));
	wait_msi(d, 0);
	EXPECT_EQ(DEV_MSI_DATA, dev_msi_read(d, 0));

	/* guest-physical fence */
	f.hdr.flags = VGPU_CMD_F_FENCE_PHYS;
	f.addr = pa + 16;
	f.value = 42;
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &f), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(42u, qts_readq(d->qts, pa + 16));
}

TEST_F(device, tlb_invalidate_makes_new_mapping_visible)
{
	struct dev *d = &self->d;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	struct vgpu_cmd_tlb_invalidate inv = {
		.hdr = { .opcode = VGPU_CMD_TLB_INVALIDATE },
		.asid = VGPU_TLBI_ALL_AS,
	};
	uint64_t other = 0;
	uint32_t v;

	dev_queue_init(d, 0, 8);
	ASSERT_EQ(0, store_setup(d, &st, 4, 1, RW));
	cmd = store_cmd(&st, 1, 4);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(3u, qts_readl(d->qts, st.out_pa + 4));

	/* move the output page, invalidate, run again */
	other = dev_alloc_pa(d, 4096);
	dev_map(d, 0, st.out_va, other, RW);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &inv), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_TLB_INVALIDATE, c.opcode);
	v = 9;
	qts_memwrite(d->qts, st.par_pa + 8, &v, 4);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(11u, qts_readl(d->qts, other + 4));
	EXPECT_EQ(3u, qts_readl(d->qts, st.out_pa + 4));
	dev_kernel_free(&st.kern);
}

TEST(address_spaces_are_separate)
{
	struct dev d;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;

	ASSERT_EQ(0, dev_open(&d, NULL, 2));
	dev_queue_init(&d, 0, 4);
	ASSERT_EQ(0, store_setup(&d, &st, 4, 1, RW)); /* all in address space 0 */
	cmd = store_cmd(&st, 1, 4);
	cmd.asid = 1; /* nothing mapped there */
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, c.exc.code);
	EXPECT_EQ(st.kern.code_va, c.exc.addr);
	EXPECT_EQ(VGPU_MMU_ACC_EXEC, c.exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, c.exc.info[1]);
	EXPECT_EQ(1u, c.exc.info[3]);
	EXPECT_CONTAINS(c.exc.msg, "program fetch");
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

/* ---- malformed input ---- */

TEST_F(device, bad_ring_address_stops_queue)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;

	/* ring in unassigned space; completions in RAM */
	qreg_write(d, 0, VGPU_Q_RING_LO, 0xd0000000u);
	qreg_write(d, 0, VGPU_Q_CPL_LO, 0x02000000u);
	qreg_write(d, 0, VGPU_Q_SIZE, 4);
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
	qreg_write(d, 0, VGPU_Q_DOORBELL, 1);
	ASSERT_TRUE(dev_wait(d, 0, 0, &c));
	EXPECT_EQ(VGPU_ERR_BAD_RING, c.status);
	EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_BAD_RING, 0);
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_HEAD));
	wait_msi(d, 1);
	EXPECT_EQ(DEV_MSI_DATA + 1, dev_msi_read(d, 1));
	EXPECT_CONTAINS(qts_log(d->qts), "command ring at 0xd0000000 is not guest RAM");

	/* a ring on the device's own registers: refused, no MMIO from DMA */
	qreg_write(d, 1, VGPU_Q_RING_LO, (uint32_t)DEV_BAR0);
	qreg_write(d, 1, VGPU_Q_CPL_LO, 0x02040000u);
	qreg_write(d, 1, VGPU_Q_SIZE, 4);
	qreg_write(d, 1, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
	qreg_write(d, 1, VGPU_Q_DOORBELL, 1);
	ASSERT_TRUE(dev_wait(d, 1, 0, &c));
	EXPECT_EQ(VGPU_ERR_BAD_RING, c.status);
	EXPECT_STOPPED_IRQ(d, 1, VGPU_ERR_BAD_RING, 0);
	EXPECT_EQ(VGPU_ID_MAGIC, reg_read(d, VGPU_REG_ID));
}

TEST_F(device, bad_ring_configuration_refused_at_enable)
{
	static const struct {
		uint32_t ring, cpl, size;
	} bad[] = {
		{ 0x01000000, 0x02000000, 3 },	  /* not a power of two */
		{ 0x01000000, 0x02000000, 1 },	  /* too small */
		{ 0x01000000, 0x02000000, 8192 }, /* too large */
		{ 0x01000020, 0x02000000, 4 },	  /* ring misaligned */
		{ 0x01000000, 0x02000004, 4 },	  /* completions misaligned */
	};
	struct dev *d = &self->d;

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		qreg_write(d, 0, VGPU_Q_CONTROL, 0);
		qreg_write(d, 0, VGPU_Q_RING_LO, bad[i].ring);
		qreg_write(d, 0, VGPU_Q_CPL_LO, bad[i].cpl);
		qreg_write(d, 0, VGPU_Q_SIZE, bad[i].size);
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
		EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_BAD_RING, 0);
		/* resuming a bad configuration stops again */
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
		EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_BAD_RING, 0);
	}
	/* ring registers cannot change while enabled */
	qreg_write(d, 0, VGPU_Q_SIZE, 16);
	EXPECT_EQ(4u, qreg_read(d, 0, VGPU_Q_SIZE));
	qreg_write(d, 0, VGPU_Q_CONTROL, 0);
	dev_queue_init(d, 0, 4);
	check_recovers(_metadata, d, 0);
}

TEST_F(device, completion_ring_outside_ram_stops_queue)
{
	struct dev *d = &self->d;
	struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP } };

	dev_queue_init(d, 0, 4);
	qreg_write(d, 0, VGPU_Q_CONTROL, 0);
	qreg_write(d, 0, VGPU_Q_CPL_LO, 0xd0000000u);
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
	qts_memwrite(d->qts, 0x01000000, &nop, sizeof(nop));
	qreg_write(d, 0, VGPU_Q_DOORBELL, 1);
	for (int i = 0; i < 100000 && !(qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED); i++)
		;
	EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_CPL_WRITE, 0);
}

TEST_F(device, malformed_commands_complete_with_bad_command)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct store_setup st;
	uint8_t raw[VGPU_CMD_BYTES];
	struct vgpu_cmd_launch l;
	struct vgpu_cmd_fence f;
	struct vgpu_cmd_tlb_invalidate t;
	uint32_t slot;

	dev_queue_init(d, 0, 16);
	ASSERT_EQ(0, store_setup(d, &st, 4, 0, RW));

	const void *cmds[8];
	unsigned n = 0;
	static uint8_t bufs[8][VGPU_CMD_BYTES];

	memset(raw, 0, sizeof(raw));
	raw[0] = 0x77; /* unknown opcode */
	memcpy(bufs[n], raw, sizeof(raw));
	cmds[n] = bufs[n], n++;
	memset(raw, 0, sizeof(raw));
	raw[100] = 1; /* NOP with a non-zero byte */
	memcpy(bufs[n], raw, sizeof(raw));
	cmds[n] = bufs[n], n++;
	l = store_cmd(&st, 1, 4);
	l.reserved[0] = 5;
	memcpy(bufs[n], &l, sizeof(l));
	cmds[n] = bufs[n], n++;
	l = store_cmd(&st, 1, 4);
	l.hdr.flags = 0x80;
	memcpy(bufs[n], &l, sizeof(l));
	cmds[n] = bufs[n], n++;
	l = store_cmd(&st, 1, 4);
	l.pad = 1;
	memcpy(bufs[n], &l, sizeof(l));
	cmds[n] = bufs[n], n++;
	f = (struct vgpu_cmd_fence){ .hdr = { .opcode = VGPU_CMD_FENCE }, .addr = 0x1004 };
	memcpy(bufs[n], &f, sizeof(f)); /* misaligned fence */
	cmds[n] = bufs[n], n++;
	t = (struct vgpu_cmd_tlb_invalidate){ .hdr = { .opcode = VGPU_CMD_TLB_INVALIDATE },
					      .asid = 1000 };
	memcpy(bufs[n], &t, sizeof(t));
	cmds[n] = bufs[n], n++;

	for (unsigned i = 0; i < n; i++) {
		slot = dev_submit(d, 0, cmds[i]);
		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(VGPU_ERR_BAD_COMMAND, c.status);
		EXPECT_EQ(slot, c.index);
		EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_BAD_COMMAND, slot);
		EXPECT_EQ(slot + 1, qreg_read(d, 0, VGPU_Q_HEAD));
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	}
	check_recovers(_metadata, d, 0);
	dev_kernel_free(&st.kern);
}

TEST_F(device, invalid_launch_parameters)
{
	struct dev *d = &self->d;
	struct store_setup st;
	struct vgpu_cmd_launch l;
	struct vgpu_completion c;
	const char *why[6];
	struct vgpu_cmd_launch cmds[6];
	unsigned n = 0;

	dev_queue_init(d, 0, 16);
	ASSERT_EQ(0, store_setup(d, &st, 4, 0, RW));
	l = store_cmd(&st, 1, 2048);
	cmds[n] = l, why[n++] = "block of 2048 threads";
	l = store_cmd(&st, 0, 32);
	cmds[n] = l, why[n++] = "grid and block dimensions";
	l = store_cmd(&st, 1, 32);
	l.code_size = 0;
	cmds[n] = l, why[n++] = "not 16..";
	l = store_cmd(&st, 1, 32);
	l.param_size = 8192;
	cmds[n] = l, why[n++] = "parameter buffer of 8192";
	l = store_cmd(&st, 1, 32);
	l.entry = 0x10000;
	cmds[n] = l, why[n++] = "entry";
	l = store_cmd(&st, 3, 32);
	l.cluster[0] = 2;
	cmds[n] = l, why[n++] = "cluster";

	for (unsigned i = 0; i < n; i++) {
		uint32_t slot = dev_submit(d, 0, &cmds[i]);

		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(VGPU_ERR_BAD_LAUNCH, c.status);
		EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, c.exc.code);
		EXPECT_CONTAINS(c.exc.msg, why[i]);
		EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_BAD_LAUNCH, slot);
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	}
	check_recovers(_metadata, d, 0);
	dev_kernel_free(&st.kern);
}

/*
 * ---- GPU MMU faults ----
 *
 * k_store writes through a buffer mapped (or broken after set-up) by the
 * variant's prepare(): the launch completes with @status, a global fault
 * of access @acc for @reason (at the output buffer's address when
 * @va_is_out), the queue stops and recovers.
 */

static void unmap_out(struct dev *d, struct store_setup *st)
{
	dev_map(d, 0, st->out_va, 0, 0);
}

static void reserved_bits(struct dev *d, struct store_setup *st)
{
	dev_map(d, 0, st->out_va, st->out_pa, RW | (1ull << 60));
}

static void table_outside_ram(struct dev *d, struct store_setup *st)
{
	/*
	 * Output at a VA of its own 1 GiB region, whose level-2 entry points
	 * at unassigned space instead of a table.
	 */
	st->out_va = DEV_VA_BASE + (1ull << 30);
	dev_set_pte(d, 0, st->out_va, 2, 0xd0000000ull | VGPU_PTE_VALID);
	qts_memwrite(d->qts, st->par_pa, &st->out_va, 8);
}

static void page_on_mmio(struct dev *d, struct store_setup *st)
{
	/* the output page is the device's own BAR0: DMA must refuse it */
	dev_map(d, 0, st->out_va, DEV_BAR0, RW);
}

static void code_not_executable(struct dev *d, struct store_setup *st)
{
	/* walk to the code's leaf entry and take EXEC away */
	uint64_t table = d->root[0], ea;

	for (unsigned l = VGPU_PT_LEVELS - 1; l > 0; l--)
		table = qts_readq(d->qts, table + 8 * VGPU_PT_INDEX(st->kern.code_va, (uint64_t)l)) &
			VGPU_PTE_ADDR_MASK;
	ea = table + 8 * VGPU_PT_INDEX(st->kern.code_va, 0ull);
	qts_writeq(d->qts, ea, qts_readq(d->qts, ea) & ~VGPU_PTE_EXEC);
}

static void null_in_table_entry(struct dev *d, struct store_setup *st)
{
	/*
	 * The output moves to a 1 GiB region of its own; its level-1 entry
	 * gains the leaf-only NULL bit.
	 */
	uint64_t table = d->root[0];

	st->out_va = DEV_VA_BASE + (1ull << 30);
	dev_map(d, 0, st->out_va, st->out_pa, RW);
	qts_memwrite(d->qts, st->par_pa, &st->out_va, 8);
	for (unsigned l = VGPU_PT_LEVELS - 1; l > 1; l--)
		table = qts_readq(d->qts, table + 8 * VGPU_PT_INDEX(st->out_va, (uint64_t)l)) &
			VGPU_PTE_ADDR_MASK;
	table += 8 * VGPU_PT_INDEX(st->out_va, 1ull);
	qts_writeq(d->qts, table, qts_readq(d->qts, table) | VGPU_PTE_NULL);
}

static void params_unmapped(struct dev *d, struct store_setup *st)
{
	dev_map(d, 0, st->par_va, 0, 0);
}

static void out_noncanonical(struct dev *d, struct store_setup *st)
{
	uint64_t va = 1ull << 52;

	qts_memwrite(d->qts, st->par_pa, &va, 8);
}

FIXTURE(mmu_fault) {
	struct dev d;
	struct store_setup st;
};

FIXTURE_VARIANT(mmu_fault) {
	uint64_t out_flags;
	void (*prepare)(struct dev *d, struct store_setup *st);
	uint32_t status, acc, reason;
	bool va_is_out;
};

FIXTURE_VARIANT_ADD(mmu_fault, store_to_read_only_page) {
	.out_flags = RO, .prepare = NULL,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_PERMISSION, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, store_to_unmapped_page) {
	.out_flags = RW, .prepare = unmap_out,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_NOT_PRESENT, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, reserved_bits_in_pte) {
	.out_flags = RW, .prepare = reserved_bits,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_RESERVED, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, null_bit_in_table_entry) {
	.out_flags = RW, .prepare = null_in_table_entry,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_RESERVED, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, store_to_read_only_null_page) {
	.out_flags = RO | VGPU_PTE_NULL, .prepare = NULL,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_PERMISSION, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, page_table_outside_ram) {
	.out_flags = RW, .prepare = table_outside_ram,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_TABLE_ACCESS, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, dma_outside_guest_ram) {
	.out_flags = RW, .prepare = page_on_mmio,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_BUS, .va_is_out = true,
};

FIXTURE_VARIANT_ADD(mmu_fault, code_without_execute_permission) {
	.out_flags = RW, .prepare = code_not_executable,
	.status = VGPU_ERR_MMU_FAULT, .acc = VGPU_MMU_ACC_EXEC,
	.reason = VGPU_MMU_F_PERMISSION, .va_is_out = false,
};

FIXTURE_VARIANT_ADD(mmu_fault, parameters_unmapped) {
	.out_flags = RW, .prepare = params_unmapped,
	.status = VGPU_ERR_MMU_FAULT, .acc = VGPU_MMU_ACC_READ,
	.reason = VGPU_MMU_F_NOT_PRESENT, .va_is_out = false,
};

FIXTURE_VARIANT_ADD(mmu_fault, address_beyond_48_bits) {
	.out_flags = RW, .prepare = out_noncanonical,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_NONCANONICAL, .va_is_out = false,
};

FIXTURE_SETUP(mmu_fault)
{
	ASSERT_EQ(0, dev_open(&self->d, NULL, 1));
	dev_queue_init(&self->d, 0, 8);
	ASSERT_EQ(0, store_setup(&self->d, &self->st, 32, 0, variant->out_flags));
}

FIXTURE_TEARDOWN(mmu_fault)
{
	dev_kernel_free(&self->st.kern);
	dev_close(&self->d);
}

TEST_F(mmu_fault, faults_and_recovers)
{
	struct dev *d = &self->d;
	struct store_setup *st = &self->st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;

	if (variant->prepare)
		variant->prepare(d, st);
	cmd = store_cmd(st, 1, 32);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmd), &c));
	EXPECT_EQ(variant->status, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, c.exc.code);
	EXPECT_EQ(variant->acc, c.exc.info[0]);
	EXPECT_EQ(variant->reason, c.exc.info[1]);
	if (variant->va_is_out)
		EXPECT_EQ(st->out_va, c.exc.addr);
	EXPECT_CONTAINS(c.exc.msg, "GPU MMU");
	EXPECT_STOPPED_IRQ(d, 0, variant->status, 0);
	check_recovers(_metadata, d, 0);
}

/* in[i] + 1 -> out[i]; then atomically counter += 1 */
static const char k_read_add[] =
	".kernel read_add\n"
	".param ptr in\n"
	".param ptr out\n"
	".param ptr counter\n"
	"    S2R R0, SR_TID.X ;\n"
	"    SHL R0, R0, 0x2 ;\n"
	"    LDP.64 R2, [in] ;\n"
	"    LDP.64 R4, [out] ;\n"
	"    LDP.64 R10, [counter] ;\n"
	"    IADD R2, R2, R0 ;\n"
	"    IADD R4, R4, R0 ;\n"
	"    LDG.32 R6, [R2] ;\n"
	"    IADD R6, R6, 0x1 ;\n"
	"    STG.32 [R4], R6 ;\n"
	"    MOV R7, 0x1 ;\n"
	"    ATOMG.ADD.U32 R9, [R10], R7 ;\n"
	"    EXIT ;\n";

/*
 * NULL leaves (VGPU_FEAT_NULL_PTE): reads see zeros, writes and atomics go
 * nowhere, with no fault.  Each NULL entry keeps the address of a page full
 * of 0x55: a device that ignored the bit would read or write it.
 */
TEST(mmu_null_pages_read_zero_and_drop_writes)
{
	uint32_t fill[64], got[64], params[6];
	uint64_t in_va, in_pa, out_va, out_pa, cnt_va, cnt_pa, par_va, par_pa;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	EXPECT_NE(0u, reg_read(&d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_NULL_PTE);
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_read_add, &kern));
	memset(fill, 0x55, sizeof(fill));
	in_va = dev_buf(&d, 0, 4096, RO | VGPU_PTE_NULL, &in_pa);
	qts_memwrite(d.qts, in_pa, fill, sizeof(fill));
	out_va = dev_buf(&d, 0, 4096, RW, &out_pa);
	cnt_va = dev_buf(&d, 0, 4096, RW | VGPU_PTE_NULL, &cnt_pa);
	qts_memwrite(d.qts, cnt_pa, fill, sizeof(fill));
	par_va = dev_buf(&d, 0, 4096, RO, &par_pa);
	memcpy(&params[0], &in_va, 8);
	memcpy(&params[2], &out_va, 8);
	memcpy(&params[4], &cnt_va, 8);
	qts_memwrite(d.qts, par_pa, params, sizeof(params));

	cmd = dev_launch_cmd(&kern, 1, 64, par_va, sizeof(params));
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, out_pa, got, sizeof(got));
	for (unsigned i = 0; i < 64; i++) {
		EXPECT_EQ(1u, got[i]) {
			TH_LOG("out[%u]: the NULL page did not read as zero", i);
		}
	}
	/* the pages behind the NULL entries are untouched */
	qts_memread(d.qts, cnt_pa, got, sizeof(got));
	EXPECT_EQ(0, memcmp(got, fill, sizeof(got)));
	qts_memread(d.qts, in_pa, got, sizeof(got));
	EXPECT_EQ(0, memcmp(got, fill, sizeof(got)));

	/* writes to a NULL output go nowhere either */
	out_va = dev_buf(&d, 0, 4096, RW | VGPU_PTE_NULL, &out_pa);
	qts_memwrite(d.qts, out_pa, fill, sizeof(fill));
	memcpy(&params[2], &out_va, 8);
	qts_memwrite(d.qts, par_pa, params, sizeof(params));
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, out_pa, got, sizeof(got));
	EXPECT_EQ(0, memcmp(got, fill, sizeof(got)));
	dev_kernel_free(&kern);
	dev_close(&d);
}

TEST(mmu_bad_address_space)
{
	struct dev d;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;

	ASSERT_EQ(0, dev_open(&d, NULL, 2));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, store_setup(&d, &st, 4, 0, RW));
	cmd = store_cmd(&st, 1, 4);
	cmd.asid = 7; /* beyond AS_COUNT */
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(VGPU_MMU_F_BAD_AS, c.exc.info[1]);
	EXPECT_CONTAINS(c.exc.msg, "address space 7 invalid");
	qreg_write(&d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	/* an invalid entry in the table */
	qts_writeq(d.qts, DEV_AS_TABLE + 8, 0);
	cmd.asid = 1;
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(VGPU_MMU_F_BAD_AS, c.exc.info[1]);
	qreg_write(&d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	/* the table itself outside RAM */
	reg_write(&d, VGPU_REG_AS_BASE_LO, 0xd0000000u);
	cmd.asid = 0;
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(VGPU_MMU_F_TABLE_ACCESS, c.exc.info[1]);
	EXPECT_EQ(4u, c.exc.info[2]);
	reg_write(&d, VGPU_REG_AS_BASE_LO, (uint32_t)DEV_AS_TABLE);
	check_recovers(_metadata, &d, 0);
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

TEST_F(device, fence_faults)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_fence f = {
		.hdr = { .opcode = VGPU_CMD_FENCE, .flags = VGPU_CMD_F_FENCE_PHYS },
		.addr = 0xd0000000,
	};

	dev_queue_init(d, 0, 8);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &f), &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(VGPU_MMU_F_BUS, c.exc.info[1]);
	EXPECT_EQ(0xd0000000, c.exc.addr);
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	f.hdr.flags = 0;
	f.addr = DEV_VA_BASE + 0x100000; /* unmapped */
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &f), &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(VGPU_MMU_ACC_WRITE, c.exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, c.exc.info[1]);
	EXPECT_EQ(DEV_VA_BASE + 0x100000, c.exc.addr);
	check_recovers(_metadata, d, 0);
}

/* A kernel that never ends, on a device with @props: the watchdog stops it. */
static void watchdog_case(struct __test_metadata *_metadata, const char *props,
			  uint32_t grid, uint32_t block)
{
	struct dev d;
	struct vgpu_completion c;

	ASSERT_EQ(0, dev_open(&d, props, 1));
	dev_queue_init(&d, 0, 8);
	reg_write(&d, VGPU_REG_WDOG_MS, 200);
	EXPECT_EQ(200u, reg_read(&d, VGPU_REG_WDOG_MS));
	ASSERT_TRUE(run_simple(&d, 0, k_spin, grid, block, UINT64_MAX, &c));
	EXPECT_EQ(VGPU_ERR_TIMEOUT, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_ABORTED, c.exc.code);
	EXPECT_CONTAINS(c.exc.msg, "watchdog: launch ran longer than 200 ms");
	EXPECT_GT(c.warp_insns, 0u);
	EXPECT_STOPPED_IRQ(&d, 0, VGPU_ERR_TIMEOUT, 0);
	check_recovers(_metadata, &d, 0);
	dev_close(&d);
}

/* Several chunks: the pool's SM threads run them. */
TEST(runaway_kernel_stopped_by_watchdog)
{
	watchdog_case(_metadata, "threads=2,sms=2", 4, 64);
}

/* One chunk (threads=1): the queue thread runs it on the SM it borrows,
 * and the watchdog reaches it through the launch's deadline. */
TEST(runaway_kernel_run_by_its_queue_stopped_by_watchdog)
{
	watchdog_case(_metadata, "threads=1", 1, 32);
}

/*
 * A one-CTA launch runs on its queue's thread, on an SM it borrows from
 * the pool; a larger one on the pool's threads.  Either way a CTA runs on
 * one of the threads= SMs, which SR_SMID names.
 */
TEST(every_cta_runs_on_one_of_the_sms)
{
	static const uint32_t grids[] = { 1, 16, 1 };
	struct dev d;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t out_va, out_pa, par_va, par_pa;
	uint32_t out[16];

	ASSERT_EQ(0, dev_open(&d, "threads=2", 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_smid, &kern));
	out_va = dev_buf(&d, 0, sizeof(out), RW, &out_pa);
	par_va = dev_buf(&d, 0, 8, RO, &par_pa);
	qts_memwrite(d.qts, par_pa, &out_va, 8);
	for (unsigned i = 0; i < 3; i++) {
		memset(out, 0xff, sizeof(out));
		qts_memwrite(d.qts, out_pa, out, sizeof(out));
		cmd = dev_launch_cmd(&kern, grids[i], 32, par_va, 8);
		ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		qts_memread(d.qts, out_pa, out, sizeof(out));
		for (uint32_t k = 0; k < grids[i]; k++) {
			EXPECT_GT(2u, out[k]) {
				TH_LOG("grid %u, CTA %u: SMID %u", grids[i], k, out[k]);
			}
		}
	}
	dev_kernel_free(&kern);
	dev_close(&d);
}

TEST_F(device, runaway_kernel_stopped_by_budget)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;

	dev_queue_init(d, 0, 8);
	ASSERT_TRUE(run_simple(d, 0, k_spin, 1, 32, 100000, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, c.exc.code);
	EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_EXCEPTION, 0);
	check_recovers(_metadata, d, 0);
}

/*
 * ---- timeline (VGPU_LAUNCH_TIMELINE) ----
 *
 * k_bar: every warp passes TL_ROUNDS barrier rounds (BAR.SYNC over the
 * CTA's 64 threads), then exits.  Its timeline is checked against what the
 * program must have done.
 */
#define TL_ROUNDS 2u
#define TL_HDR sizeof(struct vgpu_trace_header)
#define TL_REC sizeof(struct vgpu_trace_event)

static const char k_bar[] =
	".kernel bar\n"
	"    BAR.SYNC 0x0 ;\n"
	"    BAR.SYNC 0x0 ;\n"
	"    EXIT ;\n";

/* Launch @kern over @grid CTAs of @block threads, timeline at @va. */
static bool run_timeline(struct dev *d, const struct dev_kernel *kern,
			 uint32_t grid, uint32_t block, uint64_t budget,
			 uint64_t va, uint32_t size, struct vgpu_completion *c)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(kern, grid, block, 0, 0);

	cmd.launch_flags = VGPU_LAUNCH_TIMELINE;
	cmd.trace_va = va;
	cmd.trace_size = size;
	cmd.budget = budget;
	return dev_wait(d, 0, dev_submit(d, 0, &cmd), c);
}

/* The header at @pa and its records (malloc'ed, h->count of them). */
static struct vgpu_trace_event *read_timeline(struct dev *d, uint64_t pa,
					      struct vgpu_trace_header *h)
{
	struct vgpu_trace_event *r;

	qts_memread(d->qts, pa, h, sizeof(*h));
	r = calloc(h->count ? h->count : 1, TL_REC);
	if (r && h->count && h->count <= h->capacity)
		qts_memread(d->qts, pa + TL_HDR, r, h->count * TL_REC);
	return r;
}

/*
 * A whole timeline of k_bar over @grid CTAs in a buffer of @size bytes:
 * each CTA's records begin with its CTA_BEGIN and end with its only
 * CTA_END, one BAR_COMPLETE per round and CTA, RUN counts add up to the
 * launch's warp-instructions.  With @ordered (one SM thread) the first
 * record is CTA 0's CTA_BEGIN.
 */
static void check_timeline(struct __test_metadata *_metadata,
			   const struct vgpu_trace_header *h,
			   const struct vgpu_trace_event *r, uint32_t size,
			   uint32_t grid, const struct vgpu_completion *c,
			   bool ordered)
{
	uint32_t begins[16] = { 0 }, ends[16] = { 0 }, bars = 0;
	int32_t last[16];
	uint64_t run = 0;

	ASSERT_LE(grid, 16u);
	EXPECT_EQ(VGPU_TRACE_MAGIC, h->magic);
	EXPECT_EQ(VGPU_TRACE_VERSION, h->version);
	EXPECT_EQ((uint32_t)TL_REC, h->record_bytes);
	EXPECT_EQ((uint32_t)((size - TL_HDR) / TL_REC), h->capacity);
	ASSERT_GT(h->count, 0u);
	ASSERT_LE(h->count, (uint64_t)h->capacity);
	EXPECT_EQ(0u, h->dropped);
	if (ordered) {
		EXPECT_EQ(VGPU_TR_CTA_BEGIN, r[0].type);
		EXPECT_EQ(0u, r[0].cta[0] | r[0].cta[1] | r[0].cta[2]);
	}
	for (uint32_t i = 0; i < grid; i++)
		last[i] = -1;
	for (uint64_t i = 0; i < h->count; i++) {
		uint32_t x = r[i].cta[0];

		ASSERT_LT(x, grid);
		EXPECT_EQ(0u, r[i].cta[1] | r[i].cta[2] | r[i].pad);
		if (last[x] < 0)
			EXPECT_EQ(VGPU_TR_CTA_BEGIN, r[i].type);
		EXPECT_EQ(0u, ends[x]); /* nothing after a CTA's end */
		last[x] = (int32_t)i;
		switch (r[i].type) {
		case VGPU_TR_CTA_BEGIN:
			begins[x]++;
			break;
		case VGPU_TR_CTA_END:
			ends[x]++;
			break;
		case VGPU_TR_BAR_COMPLETE:
			bars++;
			EXPECT_NE(0u, r[i].flow);
			break;
		case VGPU_TR_RUN:
			run += r[i].count;
			break;
		}
	}
	for (uint32_t i = 0; i < grid; i++) {
		EXPECT_EQ(1u, begins[i]);
		EXPECT_EQ(1u, ends[i]);
	}
	EXPECT_EQ(grid * TL_ROUNDS, bars);
	EXPECT_EQ(c->warp_insns, run);
}

TEST_F(device, timeline_records_a_launch)
{
	struct dev *d = &self->d;
	struct dev_kernel kern;
	struct vgpu_completion c;
	struct vgpu_trace_header h;
	struct vgpu_trace_event *r;
	uint64_t pa, va = dev_buf(d, 0, 65536, RW, &pa);

	dev_queue_init(d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_bar, &kern));
	ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, va, 65536, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_GT(c.warp_insns, 0u);
	r = read_timeline(d, pa, &h);
	ASSERT_NE(NULL, r);
	check_timeline(_metadata, &h, r, 65536, 2, &c, true);
	free(r);
	/* the same launch again: the same timeline (the clock is the SM's) */
	{
		struct vgpu_trace_header h2;
		struct vgpu_trace_event *r2;

		qts_memset(d->qts, pa, 0, 4096);
		ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, va, 65536, &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		r = read_timeline(d, pa, &h);
		ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, va, 65536, &c));
		r2 = read_timeline(d, pa, &h2);
		ASSERT_NE(NULL, r);
		ASSERT_NE(NULL, r2);
		EXPECT_EQ(0, memcmp(&h, &h2, sizeof(h)));
		EXPECT_EQ(0, memcmp(r, r2, h.count * TL_REC));
		free(r);
		free(r2);
	}
	dev_kernel_free(&kern);
}

/* SM threads of one launch share its timeline. */
TEST(timeline_shared_by_sm_threads)
{
	struct dev d;
	struct dev_kernel kern;
	struct vgpu_completion c;
	struct vgpu_trace_header h;
	struct vgpu_trace_event *r;
	uint64_t pa, va;

	ASSERT_EQ(0, dev_open(&d, "threads=4", 1));
	dev_queue_init(&d, 0, 8);
	va = dev_buf(&d, 0, 65536, RW, &pa);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_bar, &kern));
	ASSERT_TRUE(run_timeline(&d, &kern, 16, 64, 0, va, 65536, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	r = read_timeline(&d, pa, &h);
	ASSERT_NE(NULL, r);
	check_timeline(_metadata, &h, r, 65536, 16, &c, false);
	free(r);
	dev_kernel_free(&kern);
	dev_close(&d);
}

TEST_F(device, timeline_keeps_what_fits)
{
	struct dev *d = &self->d;
	struct dev_kernel kern;
	struct vgpu_completion c;
	struct vgpu_trace_header h, h3;
	struct vgpu_trace_event *all, *r3;
	uint64_t pa, va = dev_buf(d, 0, 65536, RW, &pa);
	uint64_t pa3, va3 = dev_buf(d, 0, 4096, RW, &pa3);
	/* room for 3 records and 56 bytes that hold none */
	uint32_t size3 = TL_HDR + 3 * TL_REC + 56;
	uint8_t after[64];

	dev_queue_init(d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_bar, &kern));
	ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, va, 65536, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	all = read_timeline(d, pa, &h);
	ASSERT_NE(NULL, all);
	ASSERT_GT(h.count, 3u);
	EXPECT_EQ(0u, h.dropped);

	qts_memset(d->qts, pa3, 0xa5, 4096);
	ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, va3, size3, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	r3 = read_timeline(d, pa3, &h3);
	ASSERT_NE(NULL, r3);
	EXPECT_EQ(VGPU_TRACE_MAGIC, h3.magic);
	EXPECT_EQ(3u, h3.capacity);
	EXPECT_EQ(3u, h3.count);
	EXPECT_EQ(h.count - 3, h3.dropped);
	EXPECT_EQ(0, memcmp(all, r3, 3 * TL_REC));
	qts_memread(d->qts, pa3 + TL_HDR + 3 * TL_REC, after, sizeof(after));
	for (unsigned i = 0; i < sizeof(after); i++)
		EXPECT_EQ(0xa5, after[i]);
	free(r3);

	/* just the header: nothing kept, everything counted */
	qts_memset(d->qts, pa3, 0xa5, 4096);
	ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, va3, TL_HDR, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d->qts, pa3, &h3, sizeof(h3));
	EXPECT_EQ(VGPU_TRACE_MAGIC, h3.magic);
	EXPECT_EQ(0u, h3.capacity);
	EXPECT_EQ(0u, h3.count);
	EXPECT_EQ(h.count, h3.dropped);
	EXPECT_EQ(0xa5, qts_readb(d->qts, pa3 + TL_HDR));
	free(all);
	dev_kernel_free(&kern);
}

TEST_F(device, timeline_bad_buffers)
{
	struct dev *d = &self->d;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmds[8];
	uint32_t want[8];
	const char *why[8];
	struct vgpu_completion c;
	uint64_t pa, va = dev_buf(d, 0, 4096, RW, &pa);
	unsigned n = 0;

	dev_queue_init(d, 0, 16);
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_bar, &kern));
#define TL_CASE(st, w, flags, tva, tsize, p2)                                 \
	do {                                                                   \
		cmds[n] = dev_launch_cmd(&kern, 1, 64, 0, 0);                  \
		cmds[n].launch_flags = (flags);                                \
		cmds[n].trace_va = (tva);                                      \
		cmds[n].trace_size = (tsize);                                  \
		cmds[n].pad2 = (p2);                                           \
		want[n] = (st), why[n++] = (w);                                \
	} while (0)
	TL_CASE(VGPU_ERR_BAD_LAUNCH, "timeline of 24 bytes", VGPU_LAUNCH_TIMELINE, va, 24, 0);
	TL_CASE(VGPU_ERR_BAD_LAUNCH, "timeline of 0 bytes", VGPU_LAUNCH_TIMELINE, va, 0, 0);
	TL_CASE(VGPU_ERR_BAD_LAUNCH, "not 8-aligned", VGPU_LAUNCH_TIMELINE, va + 4, 4096, 0);
	TL_CASE(VGPU_ERR_BAD_LAUNCH, "timeline of 4092 bytes", VGPU_LAUNCH_TIMELINE, va, 4092, 0);
	TL_CASE(VGPU_ERR_BAD_LAUNCH, "timeline of", VGPU_LAUNCH_TIMELINE, va,
		VGPU_TRACE_MAX_BYTES + 8, 0);
	TL_CASE(VGPU_ERR_BAD_COMMAND, NULL, 0, va, 0, 0);
	TL_CASE(VGPU_ERR_BAD_COMMAND, NULL, 0, 0, 4096, 0);
	TL_CASE(VGPU_ERR_BAD_COMMAND, NULL, VGPU_LAUNCH_TIMELINE, va, 4096, 1);
#undef TL_CASE

	for (unsigned i = 0; i < n; i++) {
		uint32_t slot = dev_submit(d, 0, &cmds[i]);

		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(want[i], c.status);
		if (why[i]) {
			EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, c.exc.code);
			EXPECT_CONTAINS(c.exc.msg, why[i]);
		}
		EXPECT_STOPPED_IRQ(d, 0, want[i], slot);
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	}
	/* nothing was written for a refused launch */
	EXPECT_EQ(0u, qts_readl(d->qts, pa));
	check_recovers(_metadata, d, 0);
	dev_kernel_free(&kern);
}

TEST_F(device, timeline_write_faults)
{
	struct dev *d = &self->d;
	struct dev_kernel kern, spin;
	struct vgpu_completion c;
	struct vgpu_trace_header h;
	uint64_t unmapped = DEV_VA_BASE + (1ull << 36);
	uint64_t ro_pa, ro = dev_buf(d, 0, 4096, RO, &ro_pa);
	uint64_t pa, va = dev_buf(d, 0, 4096, RW, &pa);

	dev_queue_init(d, 0, 16);
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_bar, &kern));
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_spin, &spin));

	/* not mapped: the launch ran, its timeline cannot be written */
	ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, unmapped, 4096, &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, c.exc.code);
	EXPECT_EQ(VGPU_MMU_ACC_WRITE, c.exc.info[0]);
	EXPECT_EQ(VGPU_MMU_F_NOT_PRESENT, c.exc.info[1]);
	EXPECT_EQ(unmapped + TL_HDR, c.exc.addr); /* records first */
	EXPECT_GT(c.warp_insns, 0u);
	EXPECT_CONTAINS(c.exc.msg, "launch: timeline write");
	EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_MMU_FAULT, 0);
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);

	/* read-only: no record and no header written */
	ASSERT_TRUE(run_timeline(d, &kern, 2, 64, 0, ro, 4096, &c));
	EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
	EXPECT_EQ(VGPU_MMU_F_PERMISSION, c.exc.info[1]);
	EXPECT_EQ(ro + TL_HDR, c.exc.addr);
	EXPECT_EQ(0u, qts_readl(d->qts, ro_pa));
	EXPECT_EQ(0u, qts_readl(d->qts, ro_pa + TL_HDR));
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);

	/* a launch that failed keeps its own status and record */
	ASSERT_TRUE(run_timeline(d, &spin, 1, 32, 100000, unmapped, 4096, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, c.exc.code);
	EXPECT_STOPPED_IRQ(d, 0, VGPU_ERR_EXCEPTION, 2);
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);

	/* ... and its timeline is written when it can be */
	ASSERT_TRUE(run_timeline(d, &spin, 1, 32, 100000, va, 4096, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_BUDGET, c.exc.code);
	qts_memread(d->qts, pa, &h, sizeof(h));
	EXPECT_EQ(VGPU_TRACE_MAGIC, h.magic);
	EXPECT_EQ((uint32_t)((4096 - TL_HDR) / TL_REC), h.capacity);
	EXPECT_GT(h.count, 0u);
	EXPECT_LE(h.count, (uint64_t)h.capacity);
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);

	check_recovers(_metadata, d, 0);
	dev_kernel_free(&spin);
	dev_kernel_free(&kern);
}

/* ---- reset ---- */

/* Start a spinning launch on queue 0 and wait until it executes. */
static void start_spin(struct __test_metadata *_metadata, struct dev *d,
		       struct dev_kernel *kern, uint32_t *slot)
{
	struct vgpu_cmd_launch cmd;

	reg_write(d, VGPU_REG_WDOG_MS, 600000);
	EXPECT_EQ(VGPU_MAX_WDOG_MS, reg_read(d, VGPU_REG_WDOG_MS)); /* clamped */
	dev_queue_init(d, 0, 8);
	if (dev_kernel_load(d, 0, k_spin, kern))
		return;
	cmd = dev_launch_cmd(kern, 8, 256, 0, 0);
	cmd.budget = UINT64_MAX;
	*slot = dev_submit(d, 0, &cmd);
	for (int i = 0; i < 100000 && !(qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY); i++)
		;
}

static void check_power_on_state(struct __test_metadata *_metadata,
				 struct dev *d)
{
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_STATUS));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_IRQ_MASK));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_AS_COUNT));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_AS_BASE_LO));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_WDOG_MS));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_STATUS));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_CONTROL));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_SIZE));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_RING_LO));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_HEAD));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_TAIL));
}

/* Program the registers dev_open sets, after a reset. */
static void reinit(struct dev *d)
{
	reg_write(d, VGPU_REG_AS_BASE_LO, (uint32_t)DEV_AS_TABLE);
	reg_write(d, VGPU_REG_AS_COUNT, 1);
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
	dev_queue_init(d, 0, 8);
}

TEST(register_reset_aborts_running_launch)
{
	struct dev d;
	struct dev_kernel kern;
	struct vgpu_completion c;
	uint32_t slot = 0;

	ASSERT_EQ(0, dev_open(&d, "threads=2,sms=2", 1));
	start_spin(_metadata, &d, &kern, &slot);
	EXPECT_NE(0u, qreg_read(&d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY);
	EXPECT_EQ(VGPU_STATUS_BUSY, reg_read(&d, VGPU_REG_STATUS));
	reg_write(&d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	check_power_on_state(_metadata, &d);
	dev_read_cpl(&d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq); /* an aborted command writes no completion */
	reinit(&d);
	check_recovers(_metadata, &d, 0);
	dev_kernel_free(&kern);
	dev_close(&d);
}

TEST_F(device, function_level_reset_aborts_running_launch)
{
	struct dev *d = &self->d;
	struct dev_kernel kern;
	struct vgpu_completion c;
	unsigned exp;
	uint32_t slot = 0;

	exp = qts_cfg_find_cap(d->qts, DEV_DEVFN, 0x10);
	ASSERT_NE(0u, exp);
	EXPECT_NE(0u, qts_cfg_readl(d->qts, DEV_DEVFN, exp + 4) & (1u << 28)); /* FLR capable */
	start_spin(_metadata, d, &kern, &slot);
	EXPECT_NE(0u, qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_BUSY);
	qts_cfg_writew(d->qts, DEV_DEVFN, exp + 8,
		       qts_cfg_readw(d->qts, DEV_DEVFN, exp + 8) | 0x8000);
	/* FLR cleared the BARs and the command register: set up again */
	EXPECT_EQ(0, qts_cfg_readw(d->qts, DEV_DEVFN, 4) & 0x6);
	qts_cfg_writel(d->qts, DEV_DEVFN, 0x10, (uint32_t)DEV_BAR0);
	qts_cfg_writew(d->qts, DEV_DEVFN, 4, 0x6);
	check_power_on_state(_metadata, d);
	dev_read_cpl(d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq);
	reinit(d);
	check_recovers(_metadata, d, 0);
	dev_kernel_free(&kern);
}

TEST_F(device, queue_disable_aborts_launch_with_completion)
{
	struct dev *d = &self->d;
	struct dev_kernel kern;
	struct vgpu_completion c;
	uint32_t slot = 0;

	start_spin(_metadata, d, &kern, &slot);
	qreg_write(d, 0, VGPU_Q_CONTROL, 0);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_ABORTED, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_ABORTED, c.exc.code);
	EXPECT_CONTAINS(c.exc.msg, "queue disabled");
	for (int i = 0; i < 100000 && qreg_read(d, 0, VGPU_Q_STATUS); i++)
		;
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_STATUS));
	dev_queue_init(d, 0, 8);
	check_recovers(_metadata, d, 0);
	dev_kernel_free(&kern);
}

/* ---- interrupts ---- */

TEST_F(device, msix_masked_vector_sets_pba_then_delivers)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint32_t table, pba;
	struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
					       .flags = VGPU_CMD_F_IRQ } };

	ASSERT_NE(0u, d->msix_cap);
	table = qts_cfg_readl(d->qts, DEV_DEVFN, d->msix_cap + 4) & ~7u;
	pba = qts_cfg_readl(d->qts, DEV_DEVFN, d->msix_cap + 8) & ~7u;
	qts_writel(d->qts, DEV_BAR2 + table + 12, 1); /* mask vector 0 */
	dev_queue_init(d, 0, 4);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &nop), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	for (int i = 0; i < 100000 && !(qts_readl(d->qts, DEV_BAR2 + pba) & 1); i++)
		;
	EXPECT_EQ(1u, qts_readl(d->qts, DEV_BAR2 + pba) & 1);
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	qts_writel(d->qts, DEV_BAR2 + table + 12, 0); /* unmask: delivered */
	EXPECT_EQ(DEV_MSI_DATA, dev_msi_read(d, 0));
	EXPECT_EQ(0u, qts_readl(d->qts, DEV_BAR2 + pba) & 1);
}

TEST_F(device, irq_mask_holds_back_status)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
					       .flags = VGPU_CMD_F_IRQ } };

	reg_write(d, VGPU_REG_IRQ_MASK, 0);
	dev_queue_init(d, 0, 4);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &nop), &c));
	for (int i = 0; i < 100000 && !reg_read(d, VGPU_REG_IRQ_STATUS); i++)
		;
	EXPECT_EQ(VGPU_IRQ_COMPLETION, reg_read(d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_COMPLETION); /* delivers */
	EXPECT_EQ(DEV_MSI_DATA, dev_msi_read(d, 0));
}

TEST_F(device, empty_kernel_many_launches)
{
	struct dev *d = &self->d;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t slot = 0;

	/* 200 launches, in batches that fit the 64-slot ring */
	dev_queue_init(d, 0, 64);
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_empty, &kern));
	cmd = dev_launch_cmd(&kern, 1, 32, 0, 0);
	for (int batch = 0; batch < 4; batch++) {
		for (int i = 0; i < 50; i++)
			slot = dev_put(d, 0, &cmd);
		dev_doorbell(d, 0);
		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ(50u * (batch + 1), c.seq);
	}
	EXPECT_EQ(200u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	dev_kernel_free(&kern);
}

TEST_F(device, intx_when_msix_is_off)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
					       .flags = VGPU_CMD_F_IRQ } };

	qts_cfg_writew(d->qts, DEV_DEVFN, d->msix_cap + 2, 0); /* MSI-X off */
	EXPECT_EQ(1, qts_cfg_readw(d->qts, DEV_DEVFN, 0x3c) >> 8); /* pin A */
	dev_queue_init(d, 0, 4);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &nop), &c));
	for (int i = 0; i < 100000 && !(qts_cfg_readw(d->qts, DEV_DEVFN, 6) & 0x8); i++)
		;
	/* PCI status bit 3: the function asserts INTx */
	EXPECT_TRUE(qts_cfg_readw(d->qts, DEV_DEVFN, 6) & 0x8);
	EXPECT_EQ(0u, dev_msi_read(d, 0));
	reg_write(d, VGPU_REG_IRQ_MASK, 0); /* masked: deasserted */
	EXPECT_FALSE((qts_cfg_readw(d->qts, DEV_DEVFN, 6) & 0x8));
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
	EXPECT_TRUE(qts_cfg_readw(d->qts, DEV_DEVFN, 6) & 0x8);
	reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_COMPLETION); /* acknowledged */
	EXPECT_FALSE((qts_cfg_readw(d->qts, DEV_DEVFN, 6) & 0x8));
}

TEST(migration_keeps_registers_and_queue_state)
{
	struct dev a, b;
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	char file[256], out[1024];
	uint32_t v, slot;

	ASSERT_EQ(0, dev_open(&a, "queues=2", 1));
	dev_queue_init(&a, 1, 8);
	reg_write(&a, VGPU_REG_WDOG_MS, 1234);
	ASSERT_EQ(0, store_setup(&a, &st, 32, 5, RW));
	cmd = store_cmd(&st, 1, 32);
	ASSERT_TRUE(dev_wait(&a, 1, dev_submit(&a, 1, &cmd), &c));
	EXPECT_EQ(1u, c.seq);
	/* a second command in the ring, not yet rung */
	v = 500;
	qts_memwrite(a.qts, st.par_pa + 8, &v, 4);
	slot = dev_put(&a, 1, &cmd);

	snprintf(file, sizeof(file), "%s/state", qts_dir(a.qts));
	snprintf(out, sizeof(out), "migrate exec:cat>%s", file);
	ASSERT_EQ(0, qts_hmp(a.qts, out, NULL, 0));
	ASSERT_EQ(0, dev_open_incoming(&b, &a, "queues=2", file));
	EXPECT_EQ(1234u, reg_read(&b, VGPU_REG_WDOG_MS));
	EXPECT_EQ(1u, reg_read(&b, VGPU_REG_AS_COUNT));
	EXPECT_EQ(VGPU_IRQ_ALL, reg_read(&b, VGPU_REG_IRQ_MASK));
	EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_IDLE, qreg_read(&b, 1, VGPU_Q_STATUS));
	EXPECT_EQ(1u, qreg_read(&b, 1, VGPU_Q_HEAD));
	EXPECT_EQ(1u, qreg_read(&b, 1, VGPU_Q_COMPLETED_LO));
	EXPECT_EQ(8u, qreg_read(&b, 1, VGPU_Q_SIZE));
	dev_doorbell(&b, 1);
	ASSERT_TRUE(dev_wait(&b, 1, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	EXPECT_EQ(62u + 500, qts_readl(b.qts, st.out_pa + 4 * 31));
	dev_close(&b);
	unlink(file);
	dev_kernel_free(&st.kern);
	dev_close(&a);
}

TEST_HARNESS_MAIN
