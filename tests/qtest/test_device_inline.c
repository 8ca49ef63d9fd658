/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests (qtest, see test_device.c): inline runs
 * (docs/device.md "Inline runs").  A doorbell rung while the device is
 * idle runs its commands in the thread that wrote it (here: qtest's, as a
 * vCPU's under TCG), so a small launch has completed, and its interrupt
 * has been sent, when the write returns; a launch past inline-budget
 * warp-instructions goes on on its SM's thread with the same results and
 * the same instruction count; an acquire that would wait goes to the
 * queue thread; the write never waits for a launch to end.
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

/* out[gtid] = n * (n - 1) / 2 + gtid, by a loop of n rounds */
static const char k_sum[] =
	".kernel sum\n"
	".param ptr out\n"
	".param u32 n\n"
	"    S2R R0, SR_TID.X ;\n"
	"    S2R R1, SR_CTAID.X ;\n"
	"    S2R R7, SR_NTID.X ;\n"
	"    IMAD R0, R1, R7, R0 ;\n"
	"    LDP.32 R8, [n] ;\n"
	"    MOV R5, 0x0 ;\n"
	"    MOV R6, 0x0 ;\n"
	"loop:\n"
	"    IADD R5, R5, R6 ;\n"
	"    IADD R6, R6, 0x1 ;\n"
	"    ISETP.LT.U32 P0, R6, R8 ;\n"
	"    @P0 BRA loop ;\n"
	"    IADD R5, R5, R0 ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    STG.32 [R2], R5 ;\n"
	"    EXIT ;\n";

#define K_STORE_INSNS 11u /* k_store's instructions: one warp runs each */

/*
 * A k_store launch of 2 CTAs of 32 threads, with an interrupt: complete,
 * counted and signalled the moment dev_submit's doorbell write returns.
 */
TEST(small_launch_completes_inside_its_doorbell_write)
{
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t slot;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, store_setup(&d, &st, 64, 7, RW));
	cmd = store_cmd(&st, 2, 32);
	cmd.hdr.flags |= VGPU_CMD_F_IRQ;
	for (unsigned round = 0; round < 3; round++) {
		dev_msi_clear(&d);
		qts_memset(d.qts, st.out_pa, 0, 4 * 64);
		slot = dev_submit(&d, 0, &cmd);
		/* no wait: read what is there now */
		dev_read_cpl(&d, 0, slot, &c);
		EXPECT_EQ(round + 1, c.seq);
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ(2 * K_STORE_INSNS, c.warp_insns);
		EXPECT_EQ(DEV_MSI_DATA + VGPU_MSIX_VEC_COMPLETION,
			  dev_msi_read(&d, VGPU_MSIX_VEC_COMPLETION));
		for (uint32_t i = 0; i < 64; i++)
			EXPECT_EQ(i * 2 + 7, qts_readl(d.qts, st.out_pa + 4 * i));
		EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_IDLE,
			  qreg_read(&d, 0, VGPU_Q_STATUS));
	}
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

/*
 * An inline run leaves its queue's thread asleep: nothing is left for it.
 * Waking it for nothing (the finished job's broadcast, a kick at the end
 * of the run) cost the vCPU thread 6 to 33 us a launch on a 2-core host.
 * The trace event counts the thread's wake-ups; one may come from the
 * queue's enable, whenever that thread gets to run.
 */
static unsigned queue_wakes(struct dev *d)
{
	const char *p = qts_log(d->qts);
	unsigned n = 0;

	while ((p = strstr(p, "vgpu_queue_wake queue 0: its thread woke"))) {
		n++;
		p++;
	}
	return n;
}

TEST(inline_runs_leave_the_queue_thread_asleep)
{
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	unsigned before;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "threads=1 -trace vgpu_queue_wake", 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, store_setup(&d, &st, 64, 7, RW));
	cmd = store_cmd(&st, 2, 32);
	cmd.hdr.flags |= VGPU_CMD_F_IRQ;
	before = queue_wakes(&d);
	for (unsigned round = 0; round < 20; round++) {
		uint32_t slot = dev_submit(&d, 0, &cmd);

		dev_read_cpl(&d, 0, slot, &c);
		ASSERT_EQ(round + 1, c.seq);
		ASSERT_EQ(VGPU_ERR_NONE, c.status);
	}
	/* the loop ran inline: each launch was complete when its write returned */
	EXPECT_LE(queue_wakes(&d), before + 1);
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

/* The same from a user-mode queue's doorbell page. */
TEST(user_queue_doorbell_page_runs_inline)
{
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint32_t slot;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "queues=2", 1));
	dev_user_queue_init(&d, 1, 8, 0);
	ASSERT_EQ(0, store_setup(&d, &st, 32, 3, RW));
	cmd = store_cmd(&st, 1, 32);
	slot = dev_put(&d, 1, &cmd);
	dev_doorbell_page(&d, 1);
	dev_read_cpl(&d, 1, slot, &c);
	EXPECT_EQ(1u, c.seq);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	for (uint32_t i = 0; i < 32; i++)
		EXPECT_EQ(i * 2 + 3, qts_readl(d.qts, st.out_pa + 4 * i));
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

/*
 * A loop of 3000 rounds in 6 warps (about 72,000 warp-instructions): the
 * budget runs out inline after 1, 100 or 4096 (the default) of them and
 * the SM's thread goes on from the saved state; the sums and the count
 * are those of the run that never leaves the queue thread
 * (inline-budget=0), also with two SM threads and a CTA per claim.
 */
TEST(launch_past_the_budget_goes_on_on_its_sm)
{
	static const char *const props[] = {
		"inline-budget=0", "inline-budget=1", "inline-budget=100", NULL,
		"threads=2", "threads=2,inline-budget=1",
	};
	const uint32_t n = 3000, nthreads = 3 * 64;
	uint64_t first_count = 0;

	for (unsigned p = 0; p < sizeof(props) / sizeof(props[0]); p++) {
		struct dev_kernel kern;
		struct vgpu_cmd_launch cmd;
		struct vgpu_completion c;
		uint64_t out_va, out_pa, par_va, par_pa;
		uint8_t par[12];
		struct dev d;

		ASSERT_EQ(0, dev_open(&d, props[p], 1));
		dev_queue_init(&d, 0, 8);
		ASSERT_EQ(0, dev_kernel_load(&d, 0, k_sum, &kern));
		out_va = dev_buf(&d, 0, 4 * nthreads, RW, &out_pa);
		par_va = dev_buf(&d, 0, sizeof(par), RO, &par_pa);
		memcpy(par, &out_va, 8);
		memcpy(par + 8, &n, 4);
		qts_memwrite(d.qts, par_pa, par, sizeof(par));
		cmd = dev_launch_cmd(&kern, 3, 64, par_va, sizeof(par));
		ASSERT_TRUE(dev_wait(&d, 0, dev_submit(&d, 0, &cmd), &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status) {
			TH_LOG("%s: %s", props[p] ? props[p] : "default", c.exc.msg);
		}
		for (uint32_t i = 0; i < nthreads; i++) {
			EXPECT_EQ(n * (n - 1) / 2 + i,
				  qts_readl(d.qts, out_pa + 4 * i)) {
				TH_LOG("%s: thread %u",
				       props[p] ? props[p] : "default", i);
			}
		}
		if (!p)
			first_count = c.warp_insns;
		EXPECT_EQ(first_count, c.warp_insns) {
			TH_LOG("%s", props[p] ? props[p] : "default");
		}
		EXPECT_LT(3u * 2 * 4 * n, c.warp_insns);
		dev_kernel_free(&kern);
		dev_close(&d);
	}
}

/*
 * One doorbell for a small launch and a kernel that never ends: the write
 * returns with the first complete and the second running on its SM's
 * thread (the queue busy, nothing more completed), and disabling the
 * queue aborts it, not the watchdog.
 */
TEST(endless_kernel_does_not_hold_the_doorbell_write)
{
	struct store_setup st;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd, small;
	struct vgpu_completion c;
	uint32_t slot;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	reg_write(&d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, store_setup(&d, &st, 32, 5, RW));
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_spin, &kern));
	small = store_cmd(&st, 1, 32);
	cmd = dev_launch_cmd(&kern, 1, 32, 0, 0);
	dev_put(&d, 0, &small);
	slot = dev_put(&d, 0, &cmd);
	dev_doorbell(&d, 0);
	dev_read_cpl(&d, 0, 0, &c);
	EXPECT_EQ(1u, c.seq);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(31u * 2 + 5, qts_readl(d.qts, st.out_pa + 4 * 31));
	dev_read_cpl(&d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq);
	EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_BUSY,
		  qreg_read(&d, 0, VGPU_Q_STATUS));
	qreg_write(&d, 0, VGPU_Q_CONTROL, 0);
	ASSERT_TRUE(dev_wait(&d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_ABORTED, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_ABORTED, c.exc.code);
	dev_kernel_free(&kern);
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

static struct vgpu_cmd_sem sem(uint32_t opcode, uint64_t addr, uint64_t v)
{
	return (struct vgpu_cmd_sem){
		.hdr = { .opcode = opcode },
		.addr = addr,
		.payload = v,
		.op = VGPU_SEM_OP_GEQ,
	};
}

/*
 * Queue 0: an acquire that does not hold yet, then a launch.  The
 * doorbell write leaves both to the queue thread (nothing completed);
 * a release on queue 1, itself run inline, lets them through.
 */
TEST(acquire_that_would_wait_goes_to_the_queue_thread)
{
	struct store_setup st;
	struct vgpu_cmd_launch cmd;
	struct vgpu_cmd_sem acq, rel;
	struct vgpu_completion c;
	uint64_t sem_va, sem_pa;
	uint32_t slot;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "queues=2", 1));
	dev_queue_init(&d, 0, 8);
	dev_queue_init(&d, 1, 8);
	sem_va = dev_buf(&d, 0, 4096, RW, &sem_pa);
	ASSERT_EQ(0, store_setup(&d, &st, 32, 9, RW));
	acq = sem(VGPU_CMD_SEM_ACQUIRE, sem_va, 1);
	cmd = store_cmd(&st, 1, 32);
	dev_put(&d, 0, &acq);
	slot = dev_put(&d, 0, &cmd);
	dev_doorbell(&d, 0);
	dev_read_cpl(&d, 0, 0, &c);
	EXPECT_EQ(0u, c.seq);
	EXPECT_EQ(0u, qts_readl(d.qts, st.out_pa + 4));

	rel = sem(VGPU_CMD_SEM_RELEASE, sem_va, 1);
	rel.op = 0;
	dev_read_cpl(&d, 1, dev_submit(&d, 1, &rel), &c);
	EXPECT_EQ(1u, c.seq);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(&d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	for (uint32_t i = 0; i < 32; i++)
		EXPECT_EQ(i * 2 + 9, qts_readl(d.qts, st.out_pa + 4 * i));
	dev_kernel_free(&st.kern);
	dev_close(&d);
}

TEST_HARNESS_MAIN
