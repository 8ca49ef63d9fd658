/* SPDX-License-Identifier: MIT */
/*
 * What the vgpu-pci device tests share (kselftest_harness.h, vgpu_dev.h
 * and qtest_expect.h included first): page permissions, the k_store and
 * k_spin kernels, a k_store launch set up in guest memory, the check that
 * a stopped queue recovers, and the "device" fixture (one QEMU, the
 * default properties, one address space).
 */
#ifndef VGPU_TEST_DEVICE_H
#define VGPU_TEST_DEVICE_H

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

static const char k_spin[] =
	".kernel spin\n"
	"loop:\n"
	"    BRA loop ;\n"
	"    EXIT ;\n";

struct store_setup {
	struct dev_kernel kern;
	uint64_t out_va, out_pa, par_va, par_pa;
};

/* Kernel k_store with an output buffer of @n words and k = @k. */
static inline int store_setup(struct dev *d, struct store_setup *st, uint32_t n,
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

static inline struct vgpu_cmd_launch store_cmd(struct store_setup *st, uint32_t grid,
					uint32_t block)
{
	return dev_launch_cmd(&st->kern, grid, block, st->par_va,
			      st->kern.k->param_size);
}

/* Launch @src (no parameters) with the given grid/block; its completion. */
static inline bool run_simple(struct dev *d, unsigned q, const char *src,
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

static inline void wait_msi(struct dev *d, unsigned v)
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
static inline void check_recovers(struct __test_metadata *_metadata, struct dev *d,
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


#endif
