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
 *
 * Here: identification and registers, launches, reset, interrupts and
 * migration.  Malformed input, MMU faults and runaway kernels are in
 * test_device_faults.c, the timeline in test_device_timeline.c, and what
 * they share in test_device.h.
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

/* every thread adds 1 to *counter and stores its SM id */
static const char k_atomic[] =
	".kernel count\n"
	".param ptr counter\n"
	"    LDP.64 R2, [counter] ;\n"
	"    MOV R5, 0x1 ;\n"
	"    ATOMG.ADD.U32 R9, [R2], R5 ;\n"
	"    EXIT ;\n";

static const char k_empty[] = ".kernel empty\n    EXIT ;\n";

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
	EXPECT_EQ(VGPU_MSIX_VECTORS_DEFAULT,
		  (qts_cfg_readw(d.qts, DEV_DEVFN, d.msix_cap + 2) & 0x7ff) + 1u);
	EXPECT_EQ(VGPU_MSIX_VECTORS_DEFAULT, reg_read(&d, VGPU_REG_CAP_MSIX_VECTORS));
	EXPECT_NE(0u, reg_read(&d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_IRQ_VECTORS);

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

/* ---- models and SM counts (property model=, sms= up to VGPU_SMS_MAX) ---- */

/*
 * Start QEMU with "-device vgpu-pci,@props" and "quit" on its monitor:
 * its exit status (0: the device realized), what it printed in @out.
 */
static int qemu_with_props(const char *props, char *out, size_t len)
{
	const char *bin = getenv("VGPU_QEMU");
	char cmd[512];
	size_t n;
	FILE *f;

	if (!bin || !*bin)
		bin = "build/qemu-build/qemu-system-x86_64";
	snprintf(cmd, sizeof(cmd),
		 "echo quit | timeout 60 %s -M q35 -nodefaults -display none "
		 "-accel qtest -L /usr/share/qemu -L /usr/share/seabios "
		 "-monitor stdio -device vgpu-pci,%s 2>&1", bin, props);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, len - 1, f);
	out[n] = 0;
	return pclose(f);
}

TEST(models_and_sm_counts_refused_with_a_reason)
{
	static const struct {
		const char *props, *msg;
	} bad[] = {
		{ "sms=257", "sms=257: must be 1..256" },
		{ "model=h100,sms=257", "sms=257: must be 1..256" },
		{ "model=a100", "model=a100: unknown model (valid: vgpu, h100)" },
		{ "model=", "model=: unknown model (valid: vgpu, h100)" },
		{ "model=h100,threads=133", "threads=133: must be 1..sms (132)" },
		{ "model=h100,smem=1024", "smem=1024: must be 2 KiB..1 MiB (model=h100)" },
		{ "smem=512", "smem=512: must be 1 KiB..1 MiB (model=vgpu)" },
		{ "msix-vectors=1", "msix-vectors=1: must be 2..64" },
		{ "msix-vectors=65", "msix-vectors=65: must be 2..64" },
	};
	char out[4096];

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_NE(0, qemu_with_props(bad[i].props, out, sizeof(out))) {
			TH_LOG("%s: QEMU started", bad[i].props);
		}
		EXPECT_CONTAINS(out, bad[i].msg);
	}
	/* the largest accepted, and the preset at its own limits */
	EXPECT_EQ(0, qemu_with_props("sms=256,threads=2", out, sizeof(out))) {
		TH_LOG("sms=256: %s", out);
	}
	EXPECT_EQ(0, qemu_with_props("model=h100,threads=132", out, sizeof(out))) {
		TH_LOG("model=h100,threads=132: %s", out);
	}
	EXPECT_EQ(0, qemu_with_props("model=vgpu", out, sizeof(out))) {
		TH_LOG("model=vgpu: %s", out);
	}
}

/* The SM's shape: exact capabilities of each model, and overrides. */
TEST(model_capabilities)
{
	static const struct {
		const char *props;
		uint32_t model, sms, smem, smem_cta, ctas, warps;
	} m[] = {
		/* today's defaults */
		{ NULL, VGPU_MODEL_VGPU, 4, 228 * 1024, 228 * 1024, 1, 32 },
		{ "model=vgpu,sms=8", VGPU_MODEL_VGPU, 8, 228 * 1024, 228 * 1024, 1, 32 },
		/* the H100 SXM5 */
		{ "model=h100", VGPU_MODEL_H100, 132, 228 * 1024, 227 * 1024, 32, 64 },
		/* an H100 PCIe's SM count; smem= keeps the 1 KiB a CTA cannot use */
		{ "model=h100,sms=114,smem=102400", VGPU_MODEL_H100, 114, 100 * 1024,
		  99 * 1024, 32, 64 },
	};

	for (unsigned i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct dev d;

		ASSERT_EQ(0, dev_open(&d, m[i].props, 1));
		EXPECT_EQ(VGPU_VERSION_MAJOR << 16 | VGPU_VERSION_MINOR, reg_read(&d, VGPU_REG_VERSION));
		EXPECT_EQ(m[i].model, reg_read(&d, VGPU_REG_CAP_MODEL));
		EXPECT_EQ(m[i].sms, reg_read(&d, VGPU_REG_CAP_SMS));
		EXPECT_EQ(m[i].smem, reg_read(&d, VGPU_REG_CAP_SMEM));
		EXPECT_EQ(m[i].smem_cta, reg_read(&d, VGPU_REG_CAP_SMEM_CTA));
		EXPECT_EQ(m[i].ctas, reg_read(&d, VGPU_REG_CAP_CTAS_PER_SM));
		EXPECT_EQ(m[i].warps, reg_read(&d, VGPU_REG_CAP_WARPS_PER_SM));
		EXPECT_EQ(65536u, reg_read(&d, VGPU_REG_CAP_REGS_PER_SM));
		EXPECT_EQ(8u, reg_read(&d, VGPU_REG_CAP_CLUSTER));
		EXPECT_EQ(16u, reg_read(&d, VGPU_REG_CAP_CLUSTER_MAX));
		EXPECT_EQ(1u, reg_read(&d, VGPU_REG_CAP_THREADS));
		EXPECT_EQ(1024u, reg_read(&d, VGPU_REG_CAP_MAX_THREADS));
		EXPECT_EQ(0u, reg_read(&d, VGPU_REG_ERR_COUNT)) {
			TH_LOG("%s: a capability register is no register", m[i].props);
		}
		dev_close(&d);
	}
}

/* With model=h100 a CTA may use 227 KiB of shared memory, not 228. */
TEST(h100_cta_shared_memory_limit)
{
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "model=h100", 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_empty, &kern));
	cmd = dev_launch_cmd(&kern, 1, 32, 0, 0);
	cmd.smem_bytes = 227 * 1024;
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	cmd.smem_bytes = 227 * 1024 + 1;
	ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
	EXPECT_EQ(VGPU_ERR_BAD_LAUNCH, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, c.exc.code);
	EXPECT_CONTAINS(c.exc.msg, "232449 bytes of shared memory exceed the SM's 232448");
	dev_kernel_free(&kern);
	dev_close(&d);
}

/*
 * Every one-thread CTA arrives on a counter and spins until all @n have
 * arrived, then out[ctaid] = { SR_SMID, SR_NSMID }.  A CTA that spins
 * keeps its SM, so n CTAs on n SMs each run on an SM of their own.
 */
static const char k_grid_smid[] =
	".kernel gridsmid\n.param ptr out\n.param ptr ctr\n.param u32 n\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R10, [ctr] ;\n  LDP.32 R8, [n] ;\n"
	"  MOV R4, 0x1 ;\n  ATOMG.ADD.U32 R5, [R10+0x0], R4 ;\n"
	"w:\n  LDG.32 R5, [R10] ;\n  ISETP.LT.U32 P0, R5, R8 ;\n  @P0 BRA w ;\n"
	"  S2R R1, SR_CTAID.X ;\n  SHL R1, R1, 0x3 ;\n  IADD R2, R2, R1 ;\n"
	"  S2R R6, SR_SMID ;\n  S2R R7, SR_NSMID ;\n"
	"  STG.32 [R2], R6 ;\n  STG.32 [R2+0x4], R7 ;\n  EXIT ;\n";

/*
 * Launch @grid CTAs of k_grid_smid that wait for @n arrivals; their
 * { SMID, NSMID } pairs in @out.  The completion's status.
 */
static uint32_t grid_smid(struct dev *d, uint32_t grid, uint32_t n,
			  uint32_t (*out)[2])
{
	uint64_t out_va, out_pa, ctr_va, ctr_pa, par_va, par_pa;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint8_t params[20];

	if (dev_kernel_load(d, 0, k_grid_smid, &kern))
		return ~0u;
	out_va = dev_buf(d, 0, 8 * grid, RW, &out_pa);
	ctr_va = dev_buf(d, 0, 4, RW, &ctr_pa);
	par_va = dev_buf(d, 0, sizeof(params), RO, &par_pa);
	memcpy(params, &out_va, 8);
	memcpy(params + 8, &ctr_va, 8);
	memcpy(params + 16, &n, 4);
	qts_memwrite(d->qts, par_pa, params, sizeof(params));
	qts_memset(d->qts, out_pa, 0xff, 8 * grid);
	cmd = dev_launch_cmd(&kern, grid, 1, par_va, sizeof(params));
	cmd.budget = UINT64_MAX;
	if (!dev_wait(d, 0, dev_submit(d, 0, &cmd), &c))
		c.status = ~0u;
	qts_memread(d->qts, out_pa, out, 8 * grid);
	dev_kernel_free(&kern);
	return c.status;
}

/*
 * model=h100 with a host thread per SM: 132 CTAs that wait for each other
 * run on 132 SMs at once, SR_SMID 0..131 each once (SMs past 64: the
 * worker pool's bitmaps are wide enough), SR_NSMID 132.
 */
TEST(h100_grid_runs_on_all_132_sms)
{
	static uint32_t out[VGPU_H100_SMS][2];
	bool seen[VGPU_H100_SMS] = { false };
	unsigned above64 = 0;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "model=h100,threads=132", 1));
	reg_write(&d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	EXPECT_EQ(132u, reg_read(&d, VGPU_REG_CAP_SMS));
	EXPECT_EQ(132u, reg_read(&d, VGPU_REG_CAP_THREADS));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(VGPU_ERR_NONE, grid_smid(&d, VGPU_H100_SMS, VGPU_H100_SMS, out));
	for (uint32_t k = 0; k < VGPU_H100_SMS; k++) {
		EXPECT_GT(132u, out[k][0]) {
			TH_LOG("CTA %u: SMID %u", k, out[k][0]);
		}
		EXPECT_EQ(132u, out[k][1]);
		if (out[k][0] < VGPU_H100_SMS) {
			EXPECT_FALSE(seen[out[k][0]]) {
				TH_LOG("CTA %u: SMID %u twice", k, out[k][0]);
			}
			seen[out[k][0]] = true;
			above64 += out[k][0] >= 64;
		}
	}
	EXPECT_EQ(132u - 64, above64);
	dev_close(&d);
}

/* More SMs than 64 reported, fewer threads: SMIDs below threads=. */
TEST(sms_100_threads_16)
{
	static uint32_t out[200][2];
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "sms=100,threads=16", 1));
	EXPECT_EQ(100u, reg_read(&d, VGPU_REG_CAP_SMS));
	EXPECT_EQ(16u, reg_read(&d, VGPU_REG_CAP_THREADS));
	EXPECT_EQ(VGPU_MODEL_VGPU, reg_read(&d, VGPU_REG_CAP_MODEL));
	dev_queue_init(&d, 0, 8);
	/* 200 CTAs that wait for nothing (n = 0) */
	ASSERT_EQ(VGPU_ERR_NONE, grid_smid(&d, 200, 0, out));
	for (uint32_t k = 0; k < 200; k++) {
		EXPECT_GT(16u, out[k][0]) {
			TH_LOG("CTA %u: SMID %u", k, out[k][0]);
		}
		EXPECT_EQ(100u, out[k][1]);
	}
	/* 16 that wait for each other: one on each of the 16 SMs */
	ASSERT_EQ(VGPU_ERR_NONE, grid_smid(&d, 16, 16, out));
	for (uint32_t k = 0; k < 16; k++)
		for (uint32_t j = 0; j < k; j++)
			EXPECT_NE(out[j][0], out[k][0]);
	dev_close(&d);
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
