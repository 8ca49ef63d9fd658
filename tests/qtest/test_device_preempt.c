/* SPDX-License-Identifier: MIT */
/*
 * qtest: mid-kernel preemption in vgpu-pci (uapi/vgpu_hw.h "Preemption",
 * "Context save").  A HIGH launch arriving while the only SM runs a LOW
 * CTA that never ends by itself preempts it: the CTA is saved into the
 * LOW queue's context-save buffer (a state with the right header), the
 * HIGH launch completes, and the LOW one goes on from its saved state to
 * the right result.  A buffer damaged by the guest while a state waits
 * in it fails that launch with VGPU_EXC_BAD_CONTEXT and nothing else.  A
 * state too large for a slot is not saved: the LOW CTA keeps its SM.  And
 * kernels preempted every N warp-instructions (property preempt-every)
 * give the results they give unpreempted; the driver's request
 * (VGPU_REG_PREEMPT) preempts a launch that then goes on.
 */
#include <string.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "vgpu_dev.h"

#define RW (VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE)
#define RO (VGPU_PTE_VALID | VGPU_PTE_READ)

/*
 * out[0] = 0x1234, then spin until flag != 0, then out[1] = out[0] + the
 * flag, out[2] = 0x600d.  Its shared memory (a .shared of @SMEM bytes)
 * makes its saved state larger or smaller.
 */
#define K_HOLD(smem)                                                           \
	".kernel hold\n"                                                       \
	".param ptr out\n"                                                     \
	".param ptr flag\n"                                                    \
	".shared pad, " smem "\n"                                              \
	"    LDP.64 R2, [out] ;\n"                                             \
	"    LDP.64 R4, [flag] ;\n"                                            \
	"    MOV R6, 0x1234 ;\n"                                               \
	"    STG.32 [R2], R6 ;\n"                                              \
	"wait:\n"                                                              \
	"    LDG.32 R7, [R4] ;\n"                                              \
	"    ISETP.EQ.U32 P0, R7, 0x0 ;\n"                                     \
	"    @P0 BRA wait ;\n"                                                 \
	"    IADD R8, R6, R7 ;\n"                                              \
	"    STG.32 [R2+0x4], R8 ;\n"                                          \
	"    MOV R9, 0x600d ;\n"                                               \
	"    STG.32 [R2+0x8], R9 ;\n"                                          \
	"    EXIT ;\n"

/* out[gtid] = gtid * 2 + 5 */
static const char k_store[] =
	".kernel store\n.param ptr out\n"
	"    S2R R0, SR_TID.X ;\n    S2R R1, SR_CTAID.X ;\n    S2R R7, SR_NTID.X ;\n"
	"    IMAD R0, R1, R7, R0 ;\n    LDP.64 R2, [out] ;\n"
	"    SHL R4, R0, 0x2 ;\n    IADD R2, R2, R4 ;\n"
	"    IMAD R5, R0, 0x2, RZ ;\n    IADD R5, R5, 0x5 ;\n"
	"    STG.32 [R2], R5 ;\n    EXIT ;\n";

/*
 * Barriers, shared memory, divergence: per CTA of 256 threads a tree sum
 * of tid^2 over BAR.SYNC rounds; out[ctaid] = 5559680.
 */
static const char k_reduce[] =
	".kernel reduce\n.param ptr out\n.shared s, 1024\n"
	"    LDP.64 R2, [out] ;\n"
	"    S2R R0, SR_TID ;\n    S2R R9, SR_CTAID.X ;\n    SHL R1, R0, 0x2 ;\n"
	"    IMUL R4, R0, R0 ;\n    STS.32 [R1], R4 ;\n    MOV R5, 0x80 ;\n"
	"loop:\n    BAR.SYNC 0x0 ;\n"
	"    ISETP.LT.U32 P0, R0, R5 ;\n    @!P0 BRA skip ;\n"
	"    SHL R6, R5, 0x2 ;\n    IADD R6, R6, R1 ;\n"
	"    LDS.32 R7, [R6] ;\n    LDS.32 R8, [R1] ;\n"
	"    IADD R8, R8, R7 ;\n    STS.32 [R1], R8 ;\n"
	"skip:\n    SHR.U32 R5, R5, 0x1 ;\n"
	"    ISETP.NE.U32 P1, R5, 0x0 ;\n    @P1 BRA loop ;\n"
	"    BAR.SYNC 0x0 ;\n"
	"    ISETP.NE.U32 P2, R0, 0x0 ;\n    @P2 EXIT ;\n"
	"    LDS.32 R10, [RZ] ;\n"
	"    SHL R14, R9, 0x2 ;\n    IADD R14, R2, R14 ;\n    MOV R15, R3 ;\n"
	"    STG.32 [R14], R10 ;\n    EXIT ;\n";

#define CSB_SLOT (256u * 1024)

struct hold {
	struct dev_kernel kern;
	uint64_t out_pa, flag_pa, par_va;
};

static int hold_setup(struct dev *d, struct hold *h, const char *src)
{
	uint64_t out_va, flag_va, par_pa;
	uint8_t params[16];

	if (dev_kernel_load(d, 0, src, &h->kern))
		return -1;
	out_va = dev_buf(d, 0, 16, RW, &h->out_pa);
	flag_va = dev_buf(d, 0, 4, RO, &h->flag_pa);
	h->par_va = dev_buf(d, 0, sizeof(params), RO, &par_pa);
	memcpy(params, &out_va, 8);
	memcpy(params + 8, &flag_va, 8);
	qts_memwrite(d->qts, par_pa, params, sizeof(params));
	return 0;
}

static uint32_t hold_submit(struct dev *d, struct hold *h, unsigned q)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(&h->kern, 1, 32, h->par_va,
						    h->kern.k->param_size);

	cmd.budget = UINT64_MAX;
	return dev_submit(d, q, &cmd);
}

static bool wait_word(struct dev *d, uint64_t pa, uint32_t v)
{
	for (int i = 0; i < 20000; i++) {
		if (qts_readl(d->qts, pa) == v)
			return true;
		usleep(500);
	}
	return false;
}

/*
 * One SM thread; queue 1 LOW with a context-save buffer (csb_pa), queue 2
 * HIGH with one, queue 0 NORMAL without.
 */
FIXTURE(preempt) {
	struct dev d;
	uint64_t csb_pa[3];
};

FIXTURE_SETUP(preempt)
{
	ASSERT_EQ(0, dev_open(&self->d, "threads=1,queues=3", 1));
	ASSERT_NE(0u, reg_read(&self->d, VGPU_REG_CAP_FEATURES) & VGPU_FEAT_PREEMPT);
	reg_write(&self->d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	reg_write(&self->d, VGPU_REG_CSB_SLOT, CSB_SLOT);
	EXPECT_EQ(CSB_SLOT, reg_read(&self->d, VGPU_REG_CSB_SLOT));
	for (unsigned q = 1; q < 3; q++) {
		self->csb_pa[q] = dev_alloc_pa(&self->d, CSB_SLOT);
		qreg_write(&self->d, q, VGPU_Q_CSB,
			   (uint32_t)(self->csb_pa[q] >> VGPU_PAGE_SHIFT));
		EXPECT_EQ((uint32_t)(self->csb_pa[q] >> VGPU_PAGE_SHIFT),
			  qreg_read(&self->d, q, VGPU_Q_CSB));
	}
	for (unsigned q = 0; q < 3; q++)
		dev_queue_init(&self->d, q, 8);
	qreg_write(&self->d, 1, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	qreg_write(&self->d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_HIGH);
}

FIXTURE_TEARDOWN(preempt)
{
	dev_close(&self->d);
}

/*
 * The LOW CTA holds the only SM (it waits for its flag); a HIGH launch
 * preempts it: saved in slot 0 of queue 1's buffer, the HIGH launch
 * completes while queue 1 is still busy, then the LOW CTA resumes from its
 * state and finishes with what it had computed before (out[0]) and after.
 */
TEST_F(preempt, high_priority_preempts_a_running_cta)
{
	struct dev *d = &self->d;
	struct vgpu_ctx_header h;
	struct dev_kernel store;
	struct vgpu_completion c;
	uint64_t out_va, out_pa;
	uint32_t low_slot, high_slot;
	struct hold low;

	ASSERT_EQ(0, hold_setup(d, &low, K_HOLD("64")));
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_store, &store));
	out_va = dev_buf(d, 0, 4 * 64, RW, &out_pa);
	{
		uint64_t par_pa, par_va = dev_buf(d, 0, 8, RO, &par_pa);
		struct vgpu_cmd_launch cmd;

		qts_memwrite(d->qts, par_pa, &out_va, 8);
		low_slot = hold_submit(d, &low, 1);
		ASSERT_TRUE(wait_word(d, low.out_pa, 0x1234));
		EXPECT_EQ(0u, reg_read(d, VGPU_REG_PREEMPTIONS));
		cmd = dev_launch_cmd(&store, 2, 32, par_va, 8);
		high_slot = dev_submit(d, 2, &cmd);
	}
	ASSERT_TRUE(dev_wait(d, 2, high_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	for (uint32_t i = 0; i < 64; i++)
		EXPECT_EQ(i * 2 + 5, qts_readl(d->qts, out_pa + 4 * i));
	/* the LOW launch was saved, not finished */
	EXPECT_EQ(1u, reg_read(d, VGPU_REG_PREEMPTIONS));
	EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_BUSY, qreg_read(d, 1, VGPU_Q_STATUS));
	EXPECT_EQ(0u, qreg_read(d, 1, VGPU_Q_COMPLETED_LO));
	qts_memread(d->qts, self->csb_pa[1], &h, sizeof(h));
	EXPECT_EQ(VGPU_CTX_MAGIC, h.magic);
	EXPECT_EQ(VGPU_CTX_VERSION, h.version);
	EXPECT_EQ(0u, h.cluster);
	EXPECT_EQ(1u, h.nctas);
	EXPECT_EQ(1u, h.nwarps);
	EXPECT_EQ(64u, h.smem_bytes);
	EXPECT_LT(0u, h.executed);

	qts_writel(d->qts, low.flag_pa, 7);
	ASSERT_TRUE(dev_wait(d, 1, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	EXPECT_EQ(0x1234u, qts_readl(d->qts, low.out_pa));
	EXPECT_EQ(0x1234u + 7, qts_readl(d->qts, low.out_pa + 4));
	EXPECT_EQ(0x600du, qts_readl(d->qts, low.out_pa + 8));
	dev_kernel_free(&low.kern);
	dev_kernel_free(&store);
}

/*
 * The driver's request (VGPU_REG_PREEMPT): the held CTA of queue 1 is
 * saved (PREEMPTIONS counts it, slot 0 holds its state) and, with nothing
 * else to run, resumes at once and finishes; a request for a queue with
 * no launch or no buffer changes nothing, one for no queue is an error.
 */
TEST_F(preempt, driver_request_preempts_and_resumes)
{
	struct dev *d = &self->d;
	struct vgpu_ctx_header h;
	struct vgpu_completion c;
	uint32_t slot, errs;
	struct hold low;

	ASSERT_EQ(0, hold_setup(d, &low, K_HOLD("64")));
	reg_write(d, VGPU_REG_PREEMPT, 1);	/* nothing runs: nothing */
	reg_write(d, VGPU_REG_PREEMPT, 0);	/* no buffer: nothing */
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_PREEMPTIONS));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_PREEMPT));
	slot = hold_submit(d, &low, 1);
	ASSERT_TRUE(wait_word(d, low.out_pa, 0x1234));
	/* three times: each request finds it running again (a request while
	 * it is between its save and its restore finds nothing to stop) */
	for (uint32_t n = 1; n <= 3; n++) {
		for (int i = 0; i < 2000 && reg_read(d, VGPU_REG_PREEMPTIONS) < n; i++) {
			reg_write(d, VGPU_REG_PREEMPT, 1);
			usleep(5000);
		}
		EXPECT_EQ(n, reg_read(d, VGPU_REG_PREEMPTIONS));
	}
	qts_memread(d->qts, self->csb_pa[1], &h, sizeof(h));
	EXPECT_EQ(VGPU_CTX_MAGIC, h.magic);
	EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_BUSY, qreg_read(d, 1, VGPU_Q_STATUS));
	errs = reg_read(d, VGPU_REG_ERR_COUNT);
	reg_write(d, VGPU_REG_PREEMPT, 3);	/* no such queue */
	EXPECT_EQ(errs + 1, reg_read(d, VGPU_REG_ERR_COUNT));
	EXPECT_EQ(VGPU_ERR_BAD_REGISTER, reg_read(d, VGPU_REG_ERR_LAST));
	qts_writel(d->qts, low.flag_pa, 4);
	ASSERT_TRUE(dev_wait(d, 1, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(0x1234u + 4, qts_readl(d->qts, low.out_pa + 4));
	EXPECT_EQ(0x600du, qts_readl(d->qts, low.out_pa + 8));
	dev_kernel_free(&low.kern);
}

/*
 * The saved LOW state is damaged while the HIGH launch (itself held)
 * has the SM: when the LOW launch resumes it fails with BAD_CONTEXT, QEMU
 * answers, and the queue works again after RESUME.
 */
TEST_F(preempt, damaged_saved_state_fails_only_that_launch)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint32_t low_slot, high_slot;
	struct hold low, high;

	ASSERT_EQ(0, hold_setup(d, &low, K_HOLD("64")));
	ASSERT_EQ(0, hold_setup(d, &high, K_HOLD("8")));
	low_slot = hold_submit(d, &low, 1);
	ASSERT_TRUE(wait_word(d, low.out_pa, 0x1234));
	high_slot = hold_submit(d, &high, 2);
	ASSERT_TRUE(wait_word(d, high.out_pa, 0x1234)); /* HIGH has the SM */
	EXPECT_EQ(1u, reg_read(d, VGPU_REG_PREEMPTIONS));
	/* a warp record's pc far outside the program */
	qts_writel(d->qts, self->csb_pa[1] + sizeof(struct vgpu_ctx_header) +
		   sizeof(struct vgpu_ctx_cta) + 64 +
		   offsetof(struct vgpu_ctx_warp, upc), 0x7fffffff);
	qts_writel(d->qts, high.flag_pa, 1);
	ASSERT_TRUE(dev_wait(d, 2, high_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(d, 1, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_CONTEXT, c.exc.code);
	EXPECT_NE(NULL, strstr(c.exc.msg, "pc outside the program")) {
		TH_LOG("%s", c.exc.msg);
	}
	EXPECT_TRUE(qts_alive(d->qts));
	/* the queue goes on after the error */
	qreg_write(d, 1, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	qts_writel(d->qts, low.flag_pa, 1);
	low_slot = hold_submit(d, &low, 1);
	ASSERT_TRUE(dev_wait(d, 1, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	dev_kernel_free(&low.kern);
	dev_kernel_free(&high.kern);
}

/*
 * A state larger than a slot (8 KiB of shared memory, 4 KiB slots) is
 * not saved: the LOW CTA keeps the SM and the HIGH launch waits for it.
 */
TEST_F(preempt, state_larger_than_a_slot_is_not_preempted)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint32_t low_slot, high_slot;
	struct hold low, high;

	reg_write(d, VGPU_REG_CSB_SLOT, 4096);
	ASSERT_EQ(0, hold_setup(d, &low, K_HOLD("8192")));
	ASSERT_EQ(0, hold_setup(d, &high, K_HOLD("8")));
	qts_writel(d->qts, high.flag_pa, 1);
	low_slot = hold_submit(d, &low, 1);
	ASSERT_TRUE(wait_word(d, low.out_pa, 0x1234));
	high_slot = hold_submit(d, &high, 2);
	usleep(300 * 1000);
	EXPECT_EQ(0u, qts_readl(d->qts, high.out_pa)); /* it has not run */
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_PREEMPTIONS));
	qts_writel(d->qts, low.flag_pa, 2);
	ASSERT_TRUE(dev_wait(d, 1, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(0x1234u + 2, qts_readl(d->qts, low.out_pa + 4));
	ASSERT_TRUE(dev_wait(d, 2, high_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	dev_kernel_free(&low.kern);
	dev_kernel_free(&high.kern);
}

/*
 * Two SM threads; queue 0 LOW with a context-save buffer of two slots,
 * queue 1 HIGH without.
 */
static int two_sm_dev(struct dev *d)
{
	uint64_t csb_pa;

	if (dev_open(d, "threads=2,queues=2", 1))
		return -1;
	reg_write(d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	reg_write(d, VGPU_REG_CSB_SLOT, CSB_SLOT);
	csb_pa = dev_alloc_pa(d, 2 * CSB_SLOT);
	qreg_write(d, 0, VGPU_Q_CSB, (uint32_t)(csb_pa >> VGPU_PAGE_SHIFT));
	dev_queue_init(d, 0, 8);
	dev_queue_init(d, 1, 8);
	qreg_write(d, 0, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	qreg_write(d, 1, VGPU_Q_PRIORITY, VGPU_QPRIO_HIGH);
	return 0;
}

/*
 * Two SMs, both held by CTAs of one LOW launch; a HIGH launch of two CTAs
 * preempts both (two saved states, two slots), completes, and the LOW
 * CTAs resume and finish.
 */
TEST(two_sms_both_preempted)
{
	struct dev_kernel store;
	struct vgpu_completion c;
	struct vgpu_cmd_launch cmd;
	uint64_t out_va, out_pa, par_va, par_pa, lout_va, lout_pa;
	uint64_t flag_va, flag_pa, lpar_va, lpar_pa;
	uint32_t low_slot, high_slot;
	struct dev_kernel hold;
	uint8_t params[16];
	struct dev d;

	ASSERT_EQ(0, two_sm_dev(&d));
	ASSERT_EQ(0, dev_kernel_load(&d, 0, K_HOLD("64"), &hold));
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_store, &store));
	lout_va = dev_buf(&d, 0, 64, RW, &lout_pa);
	flag_va = dev_buf(&d, 0, 4, RO, &flag_pa);
	lpar_va = dev_buf(&d, 0, 16, RO, &lpar_pa);
	memcpy(params, &lout_va, 8);
	memcpy(params + 8, &flag_va, 8);
	qts_memwrite(d.qts, lpar_pa, params, 16);
	cmd = dev_launch_cmd(&hold, 2, 32, lpar_va, 16);
	cmd.budget = UINT64_MAX;
	low_slot = dev_submit(&d, 0, &cmd);
	ASSERT_TRUE(wait_word(&d, lout_pa, 0x1234));
	usleep(100 * 1000);
	out_va = dev_buf(&d, 0, 4 * 64, RW, &out_pa);
	par_va = dev_buf(&d, 0, 8, RO, &par_pa);
	qts_memwrite(d.qts, par_pa, &out_va, 8);
	cmd = dev_launch_cmd(&store, 2, 32, par_va, 8);
	high_slot = dev_submit(&d, 1, &cmd);
	ASSERT_TRUE(dev_wait(&d, 1, high_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_LE(1u, reg_read(&d, VGPU_REG_PREEMPTIONS));
	qts_writel(d.qts, flag_pa, 3);
	ASSERT_TRUE(dev_wait(&d, 0, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	EXPECT_EQ(0x1234u + 3, qts_readl(d.qts, lout_pa + 4));
	dev_kernel_free(&hold);
	dev_kernel_free(&store);
	dev_close(&d);
}

/* Each one-thread CTA spins @n iterations, then out[ctaid] = ticket. */
static const char k_spin_ticket[] =
	".kernel ticket\n.param ptr out\n.param ptr ctr\n.param u32 n\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R10, [ctr] ;\n  LDP.32 R8, [n] ;\n"
	"  MOV R6, 0x0 ;\n"
	"l:\n  IADD R6, R6, 0x1 ;\n  ISETP.LT.U32 P0, R6, R8 ;\n  @P0 BRA l ;\n"
	"  MOV R4, 0x1 ;\n  ATOMG.ADD.U32 R5, [R10+0x0], R4 ;\n"
	"  S2R R1, SR_CTAID.X ;\n  SHL R1, R1, 0x2 ;\n  IADD R2, R2, R1 ;\n"
	"  STG.32 [R2], R5 ;\n  EXIT ;\n";

/*
 * As the kselftest queue.high_priority_overtakes_low: two SMs, a LOW
 * launch of 64 long one-thread CTAs, a HIGH one-CTA launch: the HIGH one
 * preempts and completes first, the LOW one completes with 64 tickets.
 */
TEST(many_ctas_preempted_by_a_small_launch)
{
	struct dev_kernel spin, store;
	struct vgpu_completion c;
	struct vgpu_cmd_launch cmd;
	uint64_t out_va, out_pa, par_va, par_pa, lout_va, lout_pa;
	uint64_t ctr_va, ctr_pa, lpar_va, lpar_pa;
	uint32_t low_slot, high_slot, n = 1000000;
	uint64_t seen = 0;
	uint8_t params[20];
	uint32_t t[64];
	struct dev d;

	ASSERT_EQ(0, two_sm_dev(&d));
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_spin_ticket, &spin));
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_store, &store));
	lout_va = dev_buf(&d, 0, 256, RW, &lout_pa);
	ctr_va = dev_buf(&d, 0, 4, RW, &ctr_pa);
	lpar_va = dev_buf(&d, 0, 24, RO, &lpar_pa);
	memcpy(params, &lout_va, 8);
	memcpy(params + 8, &ctr_va, 8);
	memcpy(params + 16, &n, 4);
	qts_memwrite(d.qts, lpar_pa, params, 20);
	cmd = dev_launch_cmd(&spin, 64, 1, lpar_va, 20);
	cmd.budget = UINT64_MAX;
	low_slot = dev_submit(&d, 0, &cmd);
	for (int i = 0; i < 20000 && !qts_readl(d.qts, ctr_pa); i++)
		usleep(500);
	out_va = dev_buf(&d, 0, 4 * 64, RW, &out_pa);
	par_va = dev_buf(&d, 0, 8, RO, &par_pa);
	qts_memwrite(d.qts, par_pa, &out_va, 8);
	cmd = dev_launch_cmd(&store, 1, 32, par_va, 8);
	high_slot = dev_submit(&d, 1, &cmd);
	ASSERT_TRUE(dev_wait(&d, 1, high_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_LT(qts_readl(d.qts, ctr_pa), 32u);
	ASSERT_TRUE(dev_wait(&d, 0, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	/* every CTA ran once: its ticket is one of 0..63, each once */
	qts_memread(d.qts, lout_pa, t, sizeof(t));
	for (uint32_t i = 0; i < 64; i++) {
		EXPECT_LT(t[i], 64u);
		if (t[i] < 64)
			seen |= 1ull << t[i];
	}
	EXPECT_EQ(~0ull, seen);
	EXPECT_EQ(64u, qts_readl(d.qts, ctr_pa));
	dev_kernel_free(&spin);
	dev_kernel_free(&store);
	dev_close(&d);
}

/*
 * Timeslices (uapi "Timeslices").  Each one-thread CTA takes tickets from
 * ctr[0] until its flag is set; a ticket that does not follow its own
 * last one starts a new run (the other launch took tickets in between):
 * it counts it in ctr[1] and in mine[1].  mine[0] counts its tickets.
 */
static const char k_slice[] =
	".kernel slice\n.param ptr ctr\n.param ptr flag\n.param ptr mine\n"
	"  LDP.64 R2, [ctr] ;\n  LDP.64 R4, [flag] ;\n  LDP.64 R10, [mine] ;\n"
	"  MOV R6, 0xfffffff0 ;\n  MOV R12, 0x1 ;\n  MOV R14, 0x0 ;\n"
	"l:\n  ATOMG.ADD.U32 R7, [R2+0x0], R12 ;\n"
	"  IADD R8, R6, 0x1 ;\n  ISETP.EQ.U32 P0, R7, R8 ;\n  @P0 BRA same ;\n"
	"  ATOMG.ADD.U32 R9, [R2+0x4], R12 ;\n"
	"  ATOMG.ADD.U32 R9, [R10+0x4], R12 ;\n"
	"same:\n  MOV R6, R7 ;\n  IADD R14, R14, 0x1 ;\n  STG.32 [R10], R14 ;\n"
	"  LDG.32 R13, [R4] ;\n  ISETP.EQ.U32 P1, R13, 0x0 ;\n  @P1 BRA l ;\n"
	"  EXIT ;\n";

struct slice {
	struct dev_kernel kern;
	uint64_t ctr_pa, flag_pa, mine_pa[3], par_va[3];
};

/* Both launches share ctr and flag; each has its own mine. */
static int slice_setup(struct dev *d, struct slice *sl)
{
	uint64_t ctr_va, flag_va, mine_va, par_pa;
	uint8_t params[24];

	if (dev_kernel_load(d, 0, k_slice, &sl->kern))
		return -1;
	ctr_va = dev_buf(d, 0, 8, RW, &sl->ctr_pa);
	flag_va = dev_buf(d, 0, 4, RO, &sl->flag_pa);
	for (unsigned q = 1; q < 3; q++) {
		mine_va = dev_buf(d, 0, 8, RW, &sl->mine_pa[q]);
		sl->par_va[q] = dev_buf(d, 0, sizeof(params), RO, &par_pa);
		memcpy(params, &ctr_va, 8);
		memcpy(params + 8, &flag_va, 8);
		memcpy(params + 16, &mine_va, 8);
		qts_memwrite(d->qts, par_pa, params, sizeof(params));
	}
	return 0;
}

static uint32_t slice_submit(struct dev *d, struct slice *sl, unsigned q)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(&sl->kern, 1, 1, sl->par_va[q],
						    sl->kern.k->param_size);

	cmd.budget = UINT64_MAX;
	return dev_submit(d, q, &cmd);
}

/*
 * Queues 1 and 2 NORMAL; the launch of queue 1 started (it took a ticket),
 * then the one of queue 2 submitted; their ring slots in @slot[1..2].
 */
static int slice_start(struct dev *d, struct slice *sl, uint32_t slot[3])
{
	qreg_write(d, 1, VGPU_Q_PRIORITY, VGPU_QPRIO_NORMAL);
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_NORMAL);
	if (slice_setup(d, sl))
		return -1;
	slot[1] = slice_submit(d, sl, 1);
	for (int i = 0; i < 20000 && !qts_readl(d->qts, sl->mine_pa[1]); i++)
		usleep(500);
	slot[2] = slice_submit(d, sl, 2);
	return 0;
}

/*
 * Two NORMAL launches that never end by themselves, one SM, 1 ms
 * timeslices: they alternate.  Each gets SLICE_RUNS runs within the
 * test's patience of 20 s, 250 times the 80 ms they take (a launch whose
 * turn came only when its queue thread's 1 s poll ended, as it once did,
 * needs 40 s); every change of launch but the first start of the second
 * and the last one (when the flag ends the first) is a preemption; both
 * finish.
 */
#define SLICE_RUNS 40u
TEST_F(preempt, equal_priorities_share_the_sm_by_timeslices)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint32_t slot[3], runs[3], total, pre;
	struct slice sl;

	EXPECT_EQ(VGPU_DEFAULT_TIMESLICE_US, reg_read(d, VGPU_REG_TIMESLICE_US));
	reg_write(d, VGPU_REG_TIMESLICE_US, 1000);
	EXPECT_EQ(1000u, reg_read(d, VGPU_REG_TIMESLICE_US));
	ASSERT_EQ(0, slice_start(d, &sl, slot));
	for (int i = 0; i < 40000; i++) {
		if (qts_readl(d->qts, sl.mine_pa[1] + 4) >= SLICE_RUNS &&
		    qts_readl(d->qts, sl.mine_pa[2] + 4) >= SLICE_RUNS)
			break;
		usleep(500);
	}
	qts_writel(d->qts, sl.flag_pa, 1);
	for (unsigned q = 1; q < 3; q++) {
		ASSERT_TRUE(dev_wait(d, q, slot[q], &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status) {
			TH_LOG("queue %u: %s", q, c.exc.msg);
		}
		runs[q] = qts_readl(d->qts, sl.mine_pa[q] + 4);
		EXPECT_LE(SLICE_RUNS, runs[q]) {
			TH_LOG("queue %u ran %u times", q, runs[q]);
		}
	}
	total = qts_readl(d->qts, sl.ctr_pa + 4);
	pre = reg_read(d, VGPU_REG_PREEMPTIONS);
	EXPECT_EQ(runs[1] + runs[2], total);
	EXPECT_LE(total - 2, pre);
	EXPECT_GE(total + 1, pre);
	dev_kernel_free(&sl.kern);
}

/*
 * TIMESLICE_US 0: the first launch keeps the only SM however long it
 * runs (a million tickets); the second starts when the first ends.
 * Writes above the maximum store the maximum.
 */
TEST_F(preempt, no_timeslice_keeps_the_sm)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint32_t slot[3];
	struct slice sl;

	reg_write(d, VGPU_REG_TIMESLICE_US, 0xffffffff);
	EXPECT_EQ(VGPU_MAX_TIMESLICE_US, reg_read(d, VGPU_REG_TIMESLICE_US));
	reg_write(d, VGPU_REG_TIMESLICE_US, 0);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_TIMESLICE_US));
	ASSERT_EQ(0, slice_start(d, &sl, slot));
	for (int i = 0; i < 120000 && qts_readl(d->qts, sl.mine_pa[1]) < 1000000; i++)
		usleep(500);
	EXPECT_LE(1000000u, qts_readl(d->qts, sl.mine_pa[1]));
	EXPECT_EQ(0u, qts_readl(d->qts, sl.mine_pa[2]));
	EXPECT_EQ(1u, qts_readl(d->qts, sl.ctr_pa + 4));
	qts_writel(d->qts, sl.flag_pa, 1);
	ASSERT_TRUE(dev_wait(d, 1, slot[1], &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(d, 2, slot[2], &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	/* it found the flag set: one ticket, one run */
	EXPECT_EQ(1u, qts_readl(d->qts, sl.mine_pa[2]));
	EXPECT_EQ(2u, qts_readl(d->qts, sl.ctr_pa + 4));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_PREEMPTIONS));
	dev_kernel_free(&sl.kern);
}

/*
 * Each one-thread CTA arrives on a counter, spins until the flag is set,
 * then out[ctaid] = SR_SMID.
 */
static const char k_arrive_hold[] =
	".kernel arrivehold\n.param ptr out\n.param ptr ctr\n.param ptr flag\n"
	"  LDP.64 R2, [out] ;\n  LDP.64 R10, [ctr] ;\n  LDP.64 R12, [flag] ;\n"
	"  MOV R4, 0x1 ;\n  ATOMG.ADD.U32 R5, [R10+0x0], R4 ;\n"
	"w:\n  LDG.32 R7, [R12] ;\n  ISETP.EQ.U32 P0, R7, 0x0 ;\n  @P0 BRA w ;\n"
	"  S2R R1, SR_CTAID.X ;\n  SHL R1, R1, 0x2 ;\n  IADD R2, R2, R1 ;\n"
	"  S2R R6, SR_SMID ;\n  STG.32 [R2], R6 ;\n  EXIT ;\n";

/*
 * model=h100 with 132 SM threads: 132 CTAs that spin, one on each SM, all
 * preempted by the driver's request: 132 states saved at once, in slots
 * 0..131 of the buffer (the launch's slot bitmap past 64 bits), then
 * restored, and the launch completes with SMIDs below 132.
 */
TEST(h100_all_132_sms_preempted_into_132_slots)
{
	uint64_t out_va, out_pa, ctr_va, ctr_pa, flag_va, flag_pa, par_va, par_pa;
	uint32_t slot, n = VGPU_H100_SMS;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t csb_pa;
	uint8_t params[24];
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "model=h100,threads=132", 1));
	reg_write(&d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	reg_write(&d, VGPU_REG_CSB_SLOT, CSB_SLOT);
	csb_pa = dev_alloc_pa(&d, (uint64_t)n * CSB_SLOT);
	qreg_write(&d, 0, VGPU_Q_CSB, (uint32_t)(csb_pa >> VGPU_PAGE_SHIFT));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_arrive_hold, &kern));
	out_va = dev_buf(&d, 0, 4 * n, RW, &out_pa);
	ctr_va = dev_buf(&d, 0, 4, RW, &ctr_pa);
	flag_va = dev_buf(&d, 0, 4, RO, &flag_pa);
	par_va = dev_buf(&d, 0, sizeof(params), RO, &par_pa);
	memcpy(params, &out_va, 8);
	memcpy(params + 8, &ctr_va, 8);
	memcpy(params + 16, &flag_va, 8);
	qts_memwrite(d.qts, par_pa, params, sizeof(params));
	qts_memset(d.qts, out_pa, 0xff, 4 * n);
	cmd = dev_launch_cmd(&kern, n, 1, par_va, sizeof(params));
	cmd.budget = UINT64_MAX;
	slot = dev_submit(&d, 0, &cmd);
	/* every CTA spins on an SM of its own */
	ASSERT_TRUE(wait_word(&d, ctr_pa, n));
	reg_write(&d, VGPU_REG_PREEMPT, 0);
	for (int i = 0; i < 20000 && reg_read(&d, VGPU_REG_PREEMPTIONS) < n; i++)
		usleep(500);
	EXPECT_EQ(n, reg_read(&d, VGPU_REG_PREEMPTIONS));
	/* each slot holds a saved state: its header's magic */
	for (uint32_t i = 0; i < n; i++) {
		EXPECT_EQ(VGPU_CTX_MAGIC, qts_readl(d.qts, csb_pa + (uint64_t)i * CSB_SLOT)) {
			TH_LOG("slot %u", i);
		}
	}
	qts_writel(d.qts, flag_pa, 1);
	ASSERT_TRUE(dev_wait(&d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status) {
		TH_LOG("%s", c.exc.msg);
	}
	for (uint32_t k = 0; k < n; k++) {
		EXPECT_GT(n, qts_readl(d.qts, out_pa + 4 * k)) {
			TH_LOG("CTA %u", k);
		}
	}
	dev_kernel_free(&kern);
	dev_close(&d);
}

/*
 * preempt-every=N: every SM stops and saves after N warp-instructions,
 * and the launch resumes on whichever of the two SMs is free; 12 CTAs of
 * the barrier reduction give the unpreempted sums, for several N.  With
 * one SM thread the launch starts inline (docs/device.md "Inline runs"):
 * its budget, smaller or larger than N, hands it to the SM's thread,
 * which goes on being preempted every N.
 */
TEST(forced_preemption_gives_the_same_results)
{
	static const char *const props[] = {
		"threads=2,preempt-every=7", "threads=2,preempt-every=13",
		"threads=2,preempt-every=200", "threads=2,preempt-every=400",
		"preempt-every=200,inline-budget=50",
		"preempt-every=13,inline-budget=1000",
	};

	for (unsigned p = 0; p < sizeof(props) / sizeof(props[0]); p++) {
		struct dev_kernel kern;
		struct vgpu_completion c;
		struct vgpu_cmd_launch cmd;
		uint64_t out_va, out_pa, par_va, par_pa, csb_pa;
		struct dev d;

		ASSERT_EQ(0, dev_open(&d, props[p], 1));
		reg_write(&d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
		reg_write(&d, VGPU_REG_CSB_SLOT, CSB_SLOT);
		csb_pa = dev_alloc_pa(&d, 2 * CSB_SLOT);
		qreg_write(&d, 0, VGPU_Q_CSB, (uint32_t)(csb_pa >> VGPU_PAGE_SHIFT));
		dev_queue_init(&d, 0, 8);
		ASSERT_EQ(0, dev_kernel_load(&d, 0, k_reduce, &kern));
		out_va = dev_buf(&d, 0, 4 * 12, RW, &out_pa);
		par_va = dev_buf(&d, 0, 8, RO, &par_pa);
		qts_memwrite(d.qts, par_pa, &out_va, 8);
		cmd = dev_launch_cmd(&kern, 12, 256, par_va, 8);
		ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status) {
			TH_LOG("%s: %s", props[p], c.exc.msg);
		}
		for (uint32_t i = 0; i < 12; i++) {
			EXPECT_EQ(5559680u, qts_readl(d.qts, out_pa + 4 * i)) {
				TH_LOG("%s: CTA %u", props[p], i);
			}
		}
		EXPECT_LT(0u, reg_read(&d, VGPU_REG_PREEMPTIONS)) {
			TH_LOG("%s", props[p]);
		}
		dev_kernel_free(&kern);
		dev_close(&d);
	}
}

TEST_HARNESS_MAIN
