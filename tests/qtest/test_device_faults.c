/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests (qtest, see test_device.c): malformed rings,
 * commands and launches, GPU MMU faults, and runaway kernels stopped by
 * the watchdog or the budget.  Each must end in the documented error
 * completion, the queue stopped, QEMU still answering and the queue
 * recovering.
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
	l.cdp_area = 5; /* a device-launch area not 16-aligned */
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
	const char *why[7];
	struct vgpu_cmd_launch cmds[7];
	unsigned n = 0;

	dev_queue_init(d, 0, 16);
	ASSERT_EQ(0, store_setup(d, &st, 4, 0, RW));
	l = store_cmd(&st, 1, 2048);
	cmds[n] = l, why[n++] = "block of 2048 x 1 x 1 threads";
	/* 2^22 * 2^22 * 2^20 = 2^64 threads: once wrapped to 0 and accepted */
	l.block[0] = 1u << 22;
	l.block[1] = 1u << 22;
	l.block[2] = 1u << 20;
	cmds[n] = l, why[n++] = "threads exceeds 1024";
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

/* Nonzero bytes after the message's terminator (no terminator: all). */
static size_t msg_stale_bytes(const struct vgpu_exception_record *exc)
{
	size_t n = strnlen(exc->msg, sizeof(exc->msg)), stale = 0;

	if (n == sizeof(exc->msg))
		return n;
	for (size_t i = n; i < sizeof(exc->msg); i++)
		stale += exc->msg[i] != 0;
	return stale;
}

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

static void null_in_root_entry(struct dev *d, struct store_setup *st)
{
	/*
	 * The output moves to a 512 GiB region of its own; its root (level
	 * 3) entry gains the NULL bit, which only levels 2..0 may have.
	 */
	uint64_t table = d->root[0] + 8 * VGPU_PT_INDEX(DEV_VA_BASE + (1ull << 39), 3ull);

	st->out_va = DEV_VA_BASE + (1ull << 39);
	dev_map(d, 0, st->out_va, st->out_pa, RW);
	qts_memwrite(d->qts, st->par_pa, &st->out_va, 8);
	qts_writeq(d->qts, table, qts_readq(d->qts, table) | VGPU_PTE_NULL);
}

static void perm_in_table_entry(struct dev *d, struct store_setup *st)
{
	/* a level-1 table entry (not NULL) with a permission bit */
	uint64_t table = d->root[0];

	st->out_va = DEV_VA_BASE + (1ull << 30);
	dev_map(d, 0, st->out_va, st->out_pa, RW);
	qts_memwrite(d->qts, st->par_pa, &st->out_va, 8);
	for (unsigned l = VGPU_PT_LEVELS - 1; l > 1; l--)
		table = qts_readq(d->qts, table + 8 * VGPU_PT_INDEX(st->out_va, (uint64_t)l)) &
			VGPU_PTE_ADDR_MASK;
	table += 8 * VGPU_PT_INDEX(st->out_va, 1ull);
	qts_writeq(d->qts, table, qts_readq(d->qts, table) | VGPU_PTE_READ);
}

/*
 * The output moves into a read-only NULL entry of @level (2: 1 GiB, 1:
 * 2 MiB) of a 512 GiB region of its own: the store faults on permission.
 */
static void out_in_read_only_null(struct dev *d, struct store_setup *st,
				  unsigned level)
{
	uint64_t base = DEV_VA_BASE + (2ull << 39);

	st->out_va = base + (3ull << 30) + (5ull << 21) + 0x3000;
	dev_set_pte(d, 0, st->out_va, level,
		    VGPU_PTE_VALID | VGPU_PTE_NULL | VGPU_PTE_READ);
	qts_memwrite(d->qts, st->par_pa, &st->out_va, 8);
}

static void out_in_read_only_null_1g(struct dev *d, struct store_setup *st)
{
	out_in_read_only_null(d, st, 2);
}

static void out_in_read_only_null_2m(struct dev *d, struct store_setup *st)
{
	out_in_read_only_null(d, st, 1);
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
	uint32_t level;	/* the faulting level + 1 (exc.info[2]); 0: not checked */
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

FIXTURE_VARIANT_ADD(mmu_fault, null_bit_in_root_entry) {
	.out_flags = RW, .prepare = null_in_root_entry,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_RESERVED, .va_is_out = true, .level = 3 + 1,
};

FIXTURE_VARIANT_ADD(mmu_fault, permission_bit_in_table_entry) {
	.out_flags = RW, .prepare = perm_in_table_entry,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_RESERVED, .va_is_out = true, .level = 1 + 1,
};

FIXTURE_VARIANT_ADD(mmu_fault, store_to_read_only_null_1g_entry) {
	.out_flags = RW, .prepare = out_in_read_only_null_1g,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_PERMISSION, .va_is_out = true, .level = 2 + 1,
};

FIXTURE_VARIANT_ADD(mmu_fault, store_to_read_only_null_2m_entry) {
	.out_flags = RW, .prepare = out_in_read_only_null_2m,
	.status = VGPU_ERR_EXCEPTION, .acc = VGPU_MMU_ACC_WRITE,
	.reason = VGPU_MMU_F_PERMISSION, .va_is_out = true, .level = 1 + 1,
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
	if (variant->level)
		EXPECT_EQ(variant->level - 1, c.exc.info[2]);
	EXPECT_CONTAINS(c.exc.msg, "GPU MMU");
	/* past the message only zeros: no byte of QEMU's stack in the guest */
	EXPECT_EQ(0u, msg_stale_bytes(&c.exc));
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

/*
 * NULL entries of level 2 (1 GiB) and level 1 (2 MiB): the whole region
 * is null pages with the entry's permissions, no table below.  Each entry
 * keeps the address of a page full of 0x55, which a device that walked on
 * would find (as a table: its entries have reserved bits set).
 */
TEST(mmu_null_entries_of_1g_and_2m)
{
	uint64_t base = DEV_VA_BASE + (3ull << 39), g1 = base + (1ull << 30),
		 m2 = base + (7ull << 30) + (9ull << 21);
	uint32_t fill[1024], got[64], params[6];
	uint64_t junk_pa, out_va, out_pa, cnt_va, cnt_pa, par_va, par_pa;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_read_add, &kern));
	for (unsigned i = 0; i < 1024; i++)
		fill[i] = 0x55555555u;
	junk_pa = dev_alloc_pa(&d, 4096);
	qts_memwrite(d.qts, junk_pa, fill, sizeof(fill));
	dev_set_pte(&d, 0, g1, 2, junk_pa | VGPU_PTE_VALID | VGPU_PTE_NULL |
				  VGPU_PTE_READ | VGPU_PTE_WRITE);
	dev_set_pte(&d, 0, m2, 1, junk_pa | VGPU_PTE_VALID | VGPU_PTE_NULL |
				  VGPU_PTE_READ | VGPU_PTE_WRITE);
	out_va = dev_buf(&d, 0, 4096, RW, &out_pa);
	cnt_va = dev_buf(&d, 0, 4096, RW, &cnt_pa);
	par_va = dev_buf(&d, 0, 4096, RO, &par_pa);

	/* in: deep inside the 1 GiB entry; counter: the 2 MiB one (atomic) */
	uint64_t in_va = g1 + (123ull << 21) + 0x5000, ctr = m2 + 0x1ff000;

	memcpy(&params[0], &in_va, 8);
	memcpy(&params[2], &out_va, 8);
	memcpy(&params[4], &ctr, 8);
	qts_memwrite(d.qts, par_pa, params, sizeof(params));
	cmd = dev_launch_cmd(&kern, 1, 64, par_va, sizeof(params));
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, out_pa, got, sizeof(got));
	for (unsigned i = 0; i < 64; i++) {
		EXPECT_EQ(1u, got[i]) {
			TH_LOG("out[%u]: the 1 GiB NULL entry did not read as zero", i);
		}
	}

	/* in: the 2 MiB entry; out: the 1 GiB one (dropped); a real counter */
	in_va = m2 + 0x7000;
	out_va = g1 + (1ull << 30) - 4096;
	memcpy(&params[0], &in_va, 8);
	memcpy(&params[2], &out_va, 8);
	memcpy(&params[4], &cnt_va, 8);
	qts_memwrite(d.qts, par_pa, params, sizeof(params));
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	qts_memread(d.qts, cnt_pa, got, 4);
	EXPECT_EQ(64u, got[0]);
	/* the page behind both entries is untouched */
	qts_memread(d.qts, junk_pa, got, sizeof(got));
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


TEST_HARNESS_MAIN
