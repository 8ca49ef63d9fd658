/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests through qtest: queue priorities and the
 * semaphore commands (uapi/vgpu_hw.h, "Queue priority" and
 * "Semaphores").  Like test_device.c, each test starts QEMU with the
 * device, plays the driver and checks what the device wrote back.
 *
 * No timing thresholds: waits give up only after 60 s.  Where a test
 * needs the device to have taken a command before it goes on, it waits
 * for STATUS.BUSY and then lets the device run for a while (SETTLE_MS);
 * the order of events it asserts never depends on how long that was,
 * only a slow machine could make such a test fail, never pass.
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

#define WO (VGPU_PTE_VALID | VGPU_PTE_WRITE)

#define SETTLE_MS 200
#define NO_GATE 0xffffffffu
#define UNMAPPED_VA (DEV_VA_BASE + (1ull << 36))

/* *dst = *src */
static const char k_copy[] =
	".kernel copy\n"
	".param ptr src\n"
	".param ptr dst\n"
	"    LDP.64 R2, [src] ;\n"
	"    LDP.64 R4, [dst] ;\n"
	"    LDG.32 R6, [R2] ;\n"
	"    STG.32 [R4], R6 ;\n"
	"    EXIT ;\n";

/*
 * One thread per CTA: out[ctaid] = atomicAdd(counter, 1), the order in
 * which the CTAs started.  CTA gate0 then waits until flags[0] != 0, CTA
 * gate1 until flags[1] != 0 (NO_GATE: none), holding its SM meanwhile.
 */
static const char k_ticket[] =
	".kernel ticket\n"
	".param ptr counter\n"
	".param ptr out\n"
	".param ptr flags\n"
	".param u32 gate0\n"
	".param u32 gate1\n"
	"    S2R R0, SR_CTAID.X ;\n"
	"    LDP.64 R2, [counter] ;\n"
	"    MOV R10, 0x1 ;\n"
	"    ATOMG.ADD.U32 R9, [R2], R10 ;\n"
	"    LDP.64 R4, [out] ;\n"
	"    SHL R11, R0, 0x2 ;\n"
	"    IADD R4, R4, R11 ;\n"
	"    STG.32 [R4], R9 ;\n"
	"    LDP.64 R6, [flags] ;\n"
	"    LDP.32 R12, [gate0] ;\n"
	"    ISETP.EQ.U32 P0, R0, R12 ;\n"
	"    @P0 BRA wait0 ;\n"
	"    LDP.32 R12, [gate1] ;\n"
	"    ISETP.EQ.U32 P1, R0, R12 ;\n"
	"    @P1 BRA wait1 ;\n"
	"    EXIT ;\n"
	"wait0:\n"
	"    LDG.32 R13, [R6] ;\n"
	"    ISETP.EQ.U32 P2, R13, 0x0 ;\n"
	"    @P2 BRA wait0 ;\n"
	"    EXIT ;\n"
	"wait1:\n"
	"    LDG.32 R13, [R6+0x4] ;\n"
	"    ISETP.EQ.U32 P2, R13, 0x0 ;\n"
	"    @P2 BRA wait1 ;\n"
	"    EXIT ;\n";

/* ---- helpers ---- */

static struct vgpu_cmd_sem sem_cmd(uint32_t opcode, uint32_t flags,
				   uint64_t addr, uint64_t payload, uint32_t op,
				   uint64_t timeout_ns)
{
	return (struct vgpu_cmd_sem){
		.hdr = { .opcode = opcode, .flags = flags },
		.addr = addr,
		.payload = payload,
		.op = op,
		.timeout_ns = timeout_ns,
	};
}

static struct vgpu_cmd_sem acquire(uint64_t addr, uint32_t op, uint64_t payload)
{
	return sem_cmd(VGPU_CMD_SEM_ACQUIRE, 0, addr, payload, op, 0);
}

static struct vgpu_cmd_sem release(uint64_t addr, uint64_t payload)
{
	return sem_cmd(VGPU_CMD_SEM_RELEASE, 0, addr, payload, 0, 0);
}

static struct vgpu_cmd_fence fence(uint64_t addr, uint64_t value)
{
	return (struct vgpu_cmd_fence){
		.hdr = { .opcode = VGPU_CMD_FENCE },
		.addr = addr,
		.value = value,
	};
}

/* Wait (up to 60 s) until (Q_STATUS & @bit) == @want; whether it came. */
static bool wait_qstatus(struct dev *d, unsigned q, uint32_t bit, uint32_t want)
{
	uint64_t start = qts_now_ns();

	while ((qreg_read(d, q, VGPU_Q_STATUS) & bit) != want) {
		if (!qts_alive(d->qts) || qts_now_ns() - start > 60000000000ull)
			return false;
	}
	return true;
}

/* Wait (up to 60 s) until the 32-bit word at @pa is at least @v. */
static bool wait_word(struct dev *d, uint64_t pa, uint32_t v)
{
	uint64_t start = qts_now_ns();

	while (qts_readl(d->qts, pa) < v) {
		if (!qts_alive(d->qts) || qts_now_ns() - start > 60000000000ull)
			return false;
	}
	return true;
}

static void sleep_ms(unsigned ms)
{
	usleep(ms * 1000u);
}

/* The queue waits in a command: busy, nothing completed. */
#define EXPECT_WAITING(d, q)                                                   \
	do {                                                                   \
		EXPECT_EQ(VGPU_QSTAT_ENABLED | VGPU_QSTAT_BUSY,                \
			  qreg_read(d, q, VGPU_Q_STATUS));                     \
		EXPECT_EQ(0u, qreg_read(d, q, VGPU_Q_COMPLETED_LO));           \
	} while (0)

/*
 * A launch of k_ticket: its output and flags, and a counter of its own or
 * the one of @share (then the tickets order the CTAs of both launches).
 */
struct ticket {
	struct dev_kernel kern;
	uint32_t grid;
	uint64_t cnt_va, cnt_pa, out_pa, flags_pa, par_va;
};

static int ticket_setup(struct dev *d, struct ticket *t, uint32_t grid,
			uint32_t gate0, uint32_t gate1,
			const struct ticket *share)
{
	uint8_t params[32] = { 0 };
	uint64_t cnt_va, out_va, flags_va, par_pa;

	if (dev_kernel_load(d, 0, k_ticket, &t->kern))
		return -1;
	t->grid = grid;
	if (share) {
		t->cnt_va = share->cnt_va;
		t->cnt_pa = share->cnt_pa;
	} else {
		t->cnt_va = dev_buf(d, 0, 4, RW, &t->cnt_pa);
	}
	cnt_va = t->cnt_va;
	out_va = dev_buf(d, 0, 4ull * grid, RW, &t->out_pa);
	flags_va = dev_buf(d, 0, 8, RO, &t->flags_pa);
	t->par_va = dev_buf(d, 0, sizeof(params), RO, &par_pa);
	memcpy(params, &cnt_va, 8);
	memcpy(params + 8, &out_va, 8);
	memcpy(params + 16, &flags_va, 8);
	memcpy(params + 24, &gate0, 4);
	memcpy(params + 28, &gate1, 4);
	qts_memwrite(d->qts, par_pa, params, sizeof(params));
	qts_memset(d->qts, t->out_pa, 0xff, 4ull * grid);
	return 0;
}

/* Submit the ticket launch on queue @q; its slot. */
static uint32_t ticket_submit(struct dev *d, struct ticket *t, unsigned q)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(&t->kern, t->grid, 1, t->par_va,
						    t->kern.k->param_size);

	cmd.budget = UINT64_MAX;
	return dev_submit(d, q, &cmd);
}

static void ticket_open(struct dev *d, struct ticket *t, unsigned flag)
{
	qts_writel(d->qts, t->flags_pa + 4 * flag, 1);
}

/* The ticket each CTA drew, in *@out (t->grid words). */
static void ticket_read(struct dev *d, const struct ticket *t, uint32_t *out)
{
	qts_memread(d->qts, t->out_pa, out, 4ull * t->grid);
}

/*
 * Scheduling tests: one SM thread, three queues, the watchdog at its
 * longest.  gate_close() makes a one-CTA launch on queue 0 (run by the
 * queue's own thread, on the SM it borrows) hold the only SM until
 * gate_open(): launches submitted meanwhile wait for the SM together.
 */
FIXTURE(sched) {
	struct dev d;
	struct ticket gate, t[2];
	unsigned nt;
	uint32_t gate_slot;
	bool gated;
};

FIXTURE_SETUP(sched)
{
	ASSERT_EQ(0, dev_open(&self->d, "threads=1,queues=3", 1));
	reg_write(&self->d, VGPU_REG_WDOG_MS, VGPU_MAX_WDOG_MS);
	for (unsigned q = 0; q < 3; q++)
		dev_queue_init(&self->d, q, 8);
}

FIXTURE_TEARDOWN(sched)
{
	if (self->gated)
		dev_kernel_free(&self->gate.kern);
	for (unsigned i = 0; i < self->nt; i++)
		dev_kernel_free(&self->t[i].kern);
	dev_close(&self->d);
}

/* Launch k_ticket in self->t[i] (see ticket_setup). */
#define TICKETS(i, grid, gate0, gate1, share)                                 \
	do {                                                                   \
		ASSERT_EQ(0, ticket_setup(&self->d, &self->t[i], grid, gate0,  \
					  gate1, share));                      \
		self->nt = (i) + 1;                                            \
	} while (0)

static void gate_close(struct __test_metadata *_metadata,
		       FIXTURE_DATA(sched) *self)
{
	ASSERT_EQ(0, ticket_setup(&self->d, &self->gate, 1, 0, NO_GATE, NULL));
	self->gated = true;
	self->gate_slot = ticket_submit(&self->d, &self->gate, 0);
	/* the gate's CTA holds the only SM once it has drawn its ticket */
	ASSERT_TRUE(wait_word(&self->d, self->gate.cnt_pa, 1));
}

static void gate_open(struct __test_metadata *_metadata,
		      FIXTURE_DATA(sched) *self)
{
	struct vgpu_completion c;

	ticket_open(&self->d, &self->gate, 0);
	ASSERT_TRUE(dev_wait(&self->d, 0, self->gate_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
}

/* Wait until queue @q has taken its launch, then let it reach the SMs. */
static void settle(struct dev *d, unsigned q)
{
	wait_qstatus(d, q, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY);
	sleep_ms(SETTLE_MS);
}

/*
 * Most tests: default properties (threads=1, 4 queues), one address space,
 * queues 0 and 1 enabled, a zeroed semaphore page (RW) mapped at sem_va.
 */
FIXTURE(sem) {
	struct dev d;
	uint64_t sem_va, sem_pa;
};

FIXTURE_SETUP(sem)
{
	ASSERT_EQ(0, dev_open(&self->d, NULL, 1));
	dev_queue_init(&self->d, 0, 16);
	dev_queue_init(&self->d, 1, 16);
	self->sem_va = dev_buf(&self->d, 0, 4096, RW, &self->sem_pa);
}

FIXTURE_TEARDOWN(sem)
{
	dev_close(&self->d);
}

/* ---- scheduling: threads=1, so every claim waits for the one SM ---- */

/*
 * A LOW launch of 64 CTAs (claims of 16) holds the SM with its first CTA;
 * a HIGH launch of 16 arrives meanwhile.  When the LOW launch's first
 * claim ends, the HIGH one gets the SM: its CTAs draw tickets 16..31, and
 * it completes while the LOW launch's last CTA is still held (so the LOW
 * queue is busy and has completed nothing).  In FIFO order the HIGH
 * launch would never run before that last CTA, which waits for the test.
 */
TEST_F(sched, high_priority_launch_overtakes_a_low_one)
{
	struct dev *d = &self->d;
	struct ticket *low = &self->t[0], *high = &self->t[1];
	struct vgpu_completion c;
	uint32_t low_slot, high_slot, lo[64], hi[16];

	qreg_write(d, 1, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_HIGH);
	TICKETS(0, 64, 0, 63, NULL);
	TICKETS(1, 16, NO_GATE, NO_GATE, low);

	low_slot = ticket_submit(d, low, 1);
	ASSERT_TRUE(wait_word(d, low->cnt_pa, 1)); /* CTA 0 holds the SM */
	high_slot = ticket_submit(d, high, 2);
	settle(d, 2);
	EXPECT_EQ(1u, qts_readl(d->qts, low->cnt_pa)); /* nothing else ran */
	EXPECT_WAITING(d, 2);

	ticket_open(d, low, 0);
	ASSERT_TRUE(dev_wait(d, 2, high_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	/* the LOW launch still runs: its CTA 63 waits */
	EXPECT_WAITING(d, 1);
	dev_read_cpl(d, 1, low_slot, &c);
	EXPECT_EQ(0u, c.seq);
	ticket_read(d, high, hi);
	for (uint32_t i = 0; i < 16; i++)
		EXPECT_EQ(16 + i, hi[i]);

	ticket_open(d, low, 1);
	ASSERT_TRUE(dev_wait(d, 1, low_slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ticket_read(d, low, lo);
	for (uint32_t i = 0; i < 64; i++)
		EXPECT_EQ(i < 16 ? i : i + 16, lo[i]);
}

/*
 * Two NORMAL launches of 64 CTAs, sharing one ticket counter, wait for
 * the SM together: it serves them round robin, one claim (16 CTAs) each,
 * so the tickets 0..127 fall in 8 blocks of 16, alternately of one launch
 * and the other.  In FIFO order there would be 2 blocks of 64.
 */
TEST_F(sched, equal_priority_launches_take_turns)
{
	struct dev *d = &self->d;
	struct ticket *a = &self->t[0], *b = &self->t[1];
	struct vgpu_completion c;
	uint32_t sa, sb, ta[64], tb[64], cta[128];
	int owner[128];

	gate_close(_metadata, self);
	TICKETS(0, 64, NO_GATE, NO_GATE, NULL);
	TICKETS(1, 64, NO_GATE, NO_GATE, a);
	sa = ticket_submit(d, a, 1);
	sb = ticket_submit(d, b, 2);
	settle(d, 1);
	settle(d, 2);
	EXPECT_EQ(0u, qts_readl(d->qts, a->cnt_pa));
	gate_open(_metadata, self);

	ASSERT_TRUE(dev_wait(d, 1, sa, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(d, 2, sb, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);

	EXPECT_EQ(128u, qts_readl(d->qts, a->cnt_pa));
	ticket_read(d, a, ta);
	ticket_read(d, b, tb);
	memset(owner, -1, sizeof(owner));
	for (uint32_t i = 0; i < 64; i++) {
		ASSERT_LT(ta[i], 128u);
		ASSERT_LT(tb[i], 128u);
		EXPECT_EQ(-1, owner[ta[i]]);
		owner[ta[i]] = 0;
		cta[ta[i]] = i;
		EXPECT_EQ(-1, owner[tb[i]]);
		owner[tb[i]] = 1;
		cta[tb[i]] = i;
	}
	/* 8 blocks of 16, alternating; block 2k + 1 or 2k is claim k */
	for (uint32_t t = 0; t < 128; t++) {
		EXPECT_EQ(owner[0] ^ (int)(t / 16 % 2), owner[t]);
		EXPECT_EQ(t / 32 * 16 + t % 16, cta[t]);
	}
}

/*
 * A NORMAL launch (queue 1), then a LOW one (queue 2) wait for the SM;
 * then queue 2 is raised to REALTIME.  The priority counts when the SM
 * claims: the later launch draws tickets 0..31 and the NORMAL one 32..63.
 * In FIFO order, or with the priority a launch had when it came, the
 * NORMAL one would go first.
 */
TEST_F(sched, priority_change_applies_at_the_next_claim)
{
	struct dev *d = &self->d;
	struct ticket *a = &self->t[0], *b = &self->t[1];
	struct vgpu_completion c;
	uint32_t sa, sb, ta[32], tb[32];

	gate_close(_metadata, self);
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	TICKETS(0, 32, NO_GATE, NO_GATE, NULL);
	TICKETS(1, 32, NO_GATE, NO_GATE, a);
	sa = ticket_submit(d, a, 1);
	settle(d, 1);
	sb = ticket_submit(d, b, 2);
	settle(d, 2);
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_REALTIME);
	gate_open(_metadata, self);

	ASSERT_TRUE(dev_wait(d, 1, sa, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(d, 2, sb, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ticket_read(d, a, ta);
	ticket_read(d, b, tb);
	for (uint32_t i = 0; i < 32; i++) {
		EXPECT_EQ(32 + i, ta[i]);
		EXPECT_EQ(i, tb[i]);
	}
}

/* ---- the priority register ---- */

TEST_F(sem, priority_register_reads_back_clamps_and_resets)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 1);
	uint32_t slot, errs = reg_read(d, VGPU_REG_ERR_COUNT);

	for (unsigned q = 0; q < 4; q++)
		EXPECT_EQ(VGPU_QPRIO_NORMAL, qreg_read(d, q, VGPU_Q_PRIORITY));

	/* every value, on a disabled queue */
	for (uint32_t p = VGPU_QPRIO_LOW; p <= VGPU_QPRIO_REALTIME; p++) {
		qreg_write(d, 2, VGPU_Q_PRIORITY, p);
		EXPECT_EQ(p, qreg_read(d, 2, VGPU_Q_PRIORITY));
	}
	/* above REALTIME stores REALTIME; not an error */
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_COUNT);
	EXPECT_EQ(VGPU_QPRIO_REALTIME, qreg_read(d, 2, VGPU_Q_PRIORITY));
	qreg_write(d, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	qreg_write(d, 2, VGPU_Q_PRIORITY, 0xffffffffu);
	EXPECT_EQ(VGPU_QPRIO_REALTIME, qreg_read(d, 2, VGPU_Q_PRIORITY));
	EXPECT_EQ(errs, reg_read(d, VGPU_REG_ERR_COUNT));
	/* each queue has its own */
	for (unsigned q = 0; q < 4; q++)
		EXPECT_EQ(q == 2 ? VGPU_QPRIO_REALTIME : VGPU_QPRIO_NORMAL,
			  qreg_read(d, q, VGPU_Q_PRIORITY));

	/* enabling and disabling leave it; it may change while a command runs */
	qreg_write(d, 3, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	dev_queue_init(d, 3, 8);
	EXPECT_EQ(VGPU_QPRIO_LOW, qreg_read(d, 3, VGPU_Q_PRIORITY));
	slot = dev_submit(d, 3, &acq);
	ASSERT_TRUE(wait_qstatus(d, 3, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	qreg_write(d, 3, VGPU_Q_PRIORITY, VGPU_QPRIO_HIGH);
	EXPECT_EQ(VGPU_QPRIO_HIGH, qreg_read(d, 3, VGPU_Q_PRIORITY));
	qreg_write(d, 3, VGPU_Q_CONTROL, 0);
	ASSERT_TRUE(dev_wait(d, 3, slot, &c));
	EXPECT_EQ(VGPU_ERR_ABORTED, c.status);
	EXPECT_EQ(VGPU_QPRIO_HIGH, qreg_read(d, 3, VGPU_Q_PRIORITY));
	EXPECT_EQ(errs, reg_read(d, VGPU_REG_ERR_COUNT));

	/* a device reset returns every queue to NORMAL */
	reg_write(d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	for (unsigned q = 0; q < 4; q++)
		EXPECT_EQ(VGPU_QPRIO_NORMAL, qreg_read(d, q, VGPU_Q_PRIORITY));
	EXPECT_TRUE(qts_alive(d->qts));
}

/* ---- semaphores ---- */

/*
 * Queue 0: SEM_ACQUIRE (>= 1), a launch that copies B's result, a fence.
 * Queue 1: a launch that stores that result, SEM_RELEASE 1.  Queue 0 waits
 * until queue 1 has been given its commands and has released, then sees
 * the result.
 */
TEST_F(sem, acquire_waits_for_a_release_on_another_queue)
{
	struct dev *d = &self->d;
	struct store_setup st;
	struct dev_kernel copy;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 1);
	struct vgpu_cmd_sem rel = release(self->sem_va, 1);
	struct vgpu_cmd_launch cp, store;
	struct vgpu_cmd_fence f;
	uint64_t dst_pa, dst_va = dev_buf(d, 0, 4096, RW, &dst_pa);
	uint64_t par_pa, par_va = dev_buf(d, 0, 16, RO, &par_pa);
	uint64_t pv[2];
	uint32_t a0, a1, a2, b0, b1;

	ASSERT_EQ(0, store_setup(d, &st, 32, 1000, RW));
	ASSERT_EQ(0, dev_kernel_load(d, 0, k_copy, &copy));
	pv[0] = st.out_va + 4 * 5; /* B's out[5] = 1010 */
	pv[1] = dst_va;
	qts_memwrite(d->qts, par_pa, pv, sizeof(pv));
	cp = dev_launch_cmd(&copy, 1, 1, par_va, 16);
	f = fence(dst_va + 8, 0xa11ce);
	a0 = dev_put(d, 0, &acq);
	a1 = dev_put(d, 0, &cp);
	a2 = dev_put(d, 0, &f);
	dev_doorbell(d, 0);

	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	sleep_ms(50);
	EXPECT_WAITING(d, 0);
	EXPECT_EQ(0u, qts_readq(d->qts, dst_pa + 8));
	EXPECT_EQ(0u, qts_readl(d->qts, dst_pa));
	EXPECT_EQ(VGPU_STATUS_BUSY, reg_read(d, VGPU_REG_STATUS));
	dev_read_cpl(d, 0, a0, &c);
	EXPECT_EQ(0u, c.seq);

	store = dev_launch_cmd(&st.kern, 1, 32, st.par_va, st.kern.k->param_size);
	b0 = dev_put(d, 1, &store);
	b1 = dev_put(d, 1, &rel);
	dev_doorbell(d, 1);
	ASSERT_TRUE(dev_wait(d, 0, a2, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(3u, c.seq);
	/* the fence came after the release, and the copy saw B's store */
	EXPECT_EQ(1u, qts_readq(d->qts, self->sem_pa));
	EXPECT_EQ(0xa11ceu, qts_readq(d->qts, dst_pa + 8));
	EXPECT_EQ(1010u, qts_readl(d->qts, dst_pa));
	dev_read_cpl(d, 0, a0, &c);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, c.opcode);
	EXPECT_EQ(1u, c.seq);
	EXPECT_EQ(0u, c.warp_insns);
	EXPECT_EQ((uint32_t)VGPU_EXC_NONE, c.exc.code);
	/* it waited from before the test slept until queue 1 released */
	EXPECT_GE(c.elapsed_ns, 50000000u);
	dev_read_cpl(d, 0, a1, &c);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);

	ASSERT_TRUE(dev_wait(d, 1, b1, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_RELEASE, c.opcode);
	EXPECT_EQ(2u, c.seq);
	dev_read_cpl(d, 1, b0, &c);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(3u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	EXPECT_EQ(2u, qreg_read(d, 1, VGPU_Q_COMPLETED_LO));
	dev_kernel_free(&copy);
	dev_kernel_free(&st.kern);
}

/*
 * EQ waits for that very value: 5 and then 7 do not satisfy "== 3" (">="
 * would have been), 3 does.
 */
TEST_F(sem, eq_waits_for_the_exact_value)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_EQ, 3);
	struct vgpu_cmd_sem rel7 = release(self->sem_va, 7);
	struct vgpu_cmd_sem rel3 = release(self->sem_va, 3);
	struct vgpu_cmd_fence f = fence(self->sem_va + 8, 0xd0e);
	uint32_t slot;

	qts_writeq(d->qts, self->sem_pa, 5);
	dev_put(d, 0, &acq);
	slot = dev_put(d, 0, &f);
	dev_doorbell(d, 0);
	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));

	ASSERT_TRUE(dev_wait(d, 1, dev_submit(d, 1, &rel7), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(7u, qts_readq(d->qts, self->sem_pa));
	sleep_ms(20);
	EXPECT_WAITING(d, 0);
	EXPECT_EQ(0u, qts_readq(d->qts, self->sem_pa + 8));

	ASSERT_TRUE(dev_wait(d, 1, dev_submit(d, 1, &rel3), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(0xd0eu, qts_readq(d->qts, self->sem_pa + 8));
	EXPECT_EQ(2u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
}

/*
 * Acquires that hold already complete without anyone releasing; values
 * compare as unsigned 64-bit numbers.  F_IRQ interrupts; F_FENCE_PHYS
 * names guest physical memory for both commands.
 */
TEST_F(sem, satisfied_acquires_complete_at_once)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem cmds[6];
	uint32_t slot = 0;
	unsigned n = 0;

	qts_writeq(d->qts, self->sem_pa, 0x100000000ull);
	qts_writeq(d->qts, self->sem_pa + 8, 0x8000000000000000ull);
	cmds[n++] = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 0x100000000ull);
	cmds[n++] = acquire(self->sem_va, VGPU_SEM_OP_EQ, 0x100000000ull);
	cmds[n++] = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 0xffffffffull);
	cmds[n++] = acquire(self->sem_va + 8, VGPU_SEM_OP_GEQ, 1); /* unsigned */
	cmds[n++] = acquire(self->sem_va + 16, VGPU_SEM_OP_GEQ, 0); /* 0 >= 0 */
	cmds[n++] = sem_cmd(VGPU_CMD_SEM_ACQUIRE,
			    VGPU_CMD_F_FENCE_PHYS | VGPU_CMD_F_IRQ,
			    self->sem_pa, 0x100000000ull, VGPU_SEM_OP_EQ, 0);
	for (unsigned i = 0; i < n; i++)
		slot = dev_put(d, 0, &cmds[i]);
	dev_doorbell(d, 0);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	for (unsigned i = 0; i < n; i++) {
		dev_read_cpl(d, 0, i, &c);
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, c.opcode);
		EXPECT_EQ(i + 1, c.seq);
	}
	EXPECT_EQ(n, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	EXPECT_EQ(DEV_MSI_DATA, dev_msi_read(d, 0));
	EXPECT_EQ(VGPU_IRQ_COMPLETION, reg_read(d, VGPU_REG_IRQ_STATUS));

	/* a release to guest physical memory, all 64 bits */
	cmds[0] = sem_cmd(VGPU_CMD_SEM_RELEASE, VGPU_CMD_F_FENCE_PHYS,
			  self->sem_pa + 24, 0x0123456789abcdefull, 0, 0);
	ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &cmds[0]), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_RELEASE, c.opcode);
	EXPECT_EQ(0x0123456789abcdefull, qts_readq(d->qts, self->sem_pa + 24));
	EXPECT_EQ(0u, qts_readq(d->qts, self->sem_pa + 32));
}

/*
 * A write by the CPU satisfies a waiting acquire: nothing completes on
 * the device meanwhile, so only its polling can see it.
 */
TEST_F(sem, cpu_write_satisfies_a_waiting_acquire)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_GEQ,
					  0x123456789abcull);
	uint32_t slot = dev_submit(d, 0, &acq);

	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	qts_writeq(d->qts, self->sem_pa, 0x123456789abbull);
	sleep_ms(20);
	EXPECT_WAITING(d, 0);
	qts_writeq(d->qts, self->sem_pa, 0x123456789abcull);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1u, c.seq);
	EXPECT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_IDLE, VGPU_QSTAT_IDLE));
}

TEST_F(sem, timeout_reports_value_and_payload)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = sem_cmd(VGPU_CMD_SEM_ACQUIRE, 0, self->sem_va,
					  0x0000000900000004ull, VGPU_SEM_OP_GEQ,
					  20000000);
	uint32_t slot;

	qts_writeq(d->qts, self->sem_pa, 0x0000000700000002ull);
	slot = dev_submit(d, 0, &acq);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, c.opcode);
	EXPECT_EQ((uint32_t)VGPU_EXC_SEM_TIMEOUT, c.exc.code);
	EXPECT_EQ(self->sem_va, c.exc.addr);
	EXPECT_EQ(2u, c.exc.info[0]);
	EXPECT_EQ(7u, c.exc.info[1]);
	EXPECT_EQ(4u, c.exc.info[2]);
	EXPECT_EQ(9u, c.exc.info[3]);
	EXPECT_EQ(0xffffffffu, c.exc.barid);
	EXPECT_EQ(0u, c.exc.cta[0]);
	EXPECT_EQ(0u, c.warp_insns);
	EXPECT_GE(c.elapsed_ns, 20000000u);
	EXPECT_CONTAINS(c.exc.msg, "semaphore acquire timed out");
	EXPECT_CONTAINS(c.exc.msg, "value 0x700000002");
	EXPECT_CONTAINS(c.exc.msg, ">= 0x900000004");
	EXPECT_STOPPED(d, 0, VGPU_ERR_EXCEPTION, slot);
	EXPECT_EQ(slot + 1, qreg_read(d, 0, VGPU_Q_HEAD));
	EXPECT_NE(0u, reg_read(d, VGPU_REG_IRQ_STATUS) & VGPU_IRQ_ERROR);
	EXPECT_EQ(DEV_MSI_DATA + 1, dev_msi_read(d, 1));
	qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);

	/* all 64 bits compare: the low words are equal, the high ones not */
	qts_writeq(d->qts, self->sem_pa, 0x100000000ull);
	acq = sem_cmd(VGPU_CMD_SEM_ACQUIRE, VGPU_CMD_F_FENCE_PHYS, self->sem_pa,
		      0, VGPU_SEM_OP_EQ, 1000000);
	slot = dev_submit(d, 0, &acq);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_EXCEPTION, c.status);
	EXPECT_EQ((uint32_t)VGPU_EXC_SEM_TIMEOUT, c.exc.code);
	EXPECT_EQ(self->sem_pa, c.exc.addr);
	EXPECT_EQ(0u, c.exc.info[0]);
	EXPECT_EQ(1u, c.exc.info[1]);
	EXPECT_EQ(0u, c.exc.info[2]);
	EXPECT_EQ(0u, c.exc.info[3]);
	EXPECT_CONTAINS(c.exc.msg, "== 0x0");
	EXPECT_STOPPED(d, 0, VGPU_ERR_EXCEPTION, slot);
	check_recovers(_metadata, d, 0);
}

/*
 * Faults as a fence reports them: status MMU_FAULT, the fault in exc.
 * Each stops the queue, which resumes.
 */
TEST_F(sem, faults_give_mmu_fault_with_the_address)
{
	struct {
		struct vgpu_cmd_sem cmd;
		uint64_t addr;
		uint32_t acc, reason, asid;
		const char *msg;
	} cases[8];
	struct dev *d = &self->d;
	struct vgpu_completion c;
	uint64_t ro_pa, ro = dev_buf(d, 0, 4096, RO, &ro_pa);
	uint64_t wo_pa, wo = dev_buf(d, 0, 4096, WO, &wo_pa);
	unsigned n = 0;

	qts_writeq(d->qts, ro_pa, 77);
	qts_writeq(d->qts, wo_pa, 77);
#define SEM_FAULT(c, a, ac, r, as, m)                                          \
	do {                                                                   \
		cases[n].cmd = (c);                                            \
		cases[n].addr = (a);                                           \
		cases[n].acc = (ac);                                           \
		cases[n].reason = (r);                                         \
		cases[n].asid = (as);                                          \
		cases[n++].msg = (m);                                          \
	} while (0)
	SEM_FAULT(acquire(UNMAPPED_VA, VGPU_SEM_OP_GEQ, 1), UNMAPPED_VA,
		  VGPU_MMU_ACC_READ, VGPU_MMU_F_NOT_PRESENT, 0,
		  "semaphore acquire: read");
	SEM_FAULT(release(UNMAPPED_VA + 8, 1), UNMAPPED_VA + 8,
		  VGPU_MMU_ACC_WRITE, VGPU_MMU_F_NOT_PRESENT, 0,
		  "semaphore release: write");
	SEM_FAULT(release(ro, 1), ro, VGPU_MMU_ACC_WRITE, VGPU_MMU_F_PERMISSION,
		  0, "permission denied");
	SEM_FAULT(acquire(wo, VGPU_SEM_OP_EQ, 77), wo, VGPU_MMU_ACC_READ,
		  VGPU_MMU_F_PERMISSION, 0, "permission denied");
	SEM_FAULT(acquire(1ull << 52, VGPU_SEM_OP_GEQ, 0), 1ull << 52,
		  VGPU_MMU_ACC_READ, VGPU_MMU_F_NONCANONICAL, 0, "GPU MMU");
	cases[n].cmd = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 0);
	cases[n].cmd.asid = 3; /* beyond AS_COUNT */
	SEM_FAULT(cases[n].cmd, 0, VGPU_MMU_ACC_READ, VGPU_MMU_F_BAD_AS, 3,
		  "address space 3 invalid");
	SEM_FAULT(sem_cmd(VGPU_CMD_SEM_ACQUIRE, VGPU_CMD_F_FENCE_PHYS,
			  0xd0000000ull, 0, VGPU_SEM_OP_GEQ, 0),
		  0xd0000000ull, VGPU_MMU_ACC_READ, VGPU_MMU_F_BUS, 0,
		  "semaphore acquire: guest physical 0xd0000000 is not guest RAM");
	SEM_FAULT(sem_cmd(VGPU_CMD_SEM_RELEASE, VGPU_CMD_F_FENCE_PHYS,
			  DEV_BAR0, 5, 0, 0),
		  DEV_BAR0, VGPU_MMU_ACC_WRITE, VGPU_MMU_F_BUS, 0,
		  "semaphore release: guest physical 0xe0000000 is not guest RAM");
#undef SEM_FAULT

	for (unsigned i = 0; i < n; i++) {
		uint32_t slot = dev_submit(d, 0, &cases[i].cmd);

		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(VGPU_ERR_MMU_FAULT, c.status);
		EXPECT_EQ(cases[i].cmd.hdr.opcode, c.opcode);
		EXPECT_EQ((uint32_t)VGPU_EXC_GLOBAL_FAULT, c.exc.code);
		EXPECT_EQ(cases[i].addr, c.exc.addr);
		EXPECT_EQ(cases[i].acc, c.exc.info[0]);
		EXPECT_EQ(cases[i].reason, c.exc.info[1]);
		EXPECT_EQ(cases[i].asid, c.exc.info[3]);
		EXPECT_CONTAINS(c.exc.msg, cases[i].msg);
		EXPECT_STOPPED(d, 0, VGPU_ERR_MMU_FAULT, slot);
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	}
	/* nothing was written where a release faulted */
	EXPECT_EQ(77u, qts_readq(d->qts, ro_pa));
	EXPECT_EQ(VGPU_ID_MAGIC, reg_read(d, VGPU_REG_ID));
	check_recovers(_metadata, d, 0);
}

TEST_F(sem, malformed_semaphore_commands)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem cmds[10];
	unsigned n = 0;

	cmds[n++] = acquire(self->sem_va + 4, VGPU_SEM_OP_GEQ, 0); /* misaligned */
	cmds[n++] = release(self->sem_va + 4, 9);
	cmds[n++] = acquire(self->sem_va, VGPU_SEM_OP_MAX + 1, 0); /* bad op */
	cmds[n++] = acquire(self->sem_va, 0xffffffffu, 0);
	cmds[n] = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 0);
	cmds[n++].reserved[0] = 1;
	cmds[n] = release(self->sem_va, 9);
	cmds[n++].reserved[10] = 1ull << 63;
	cmds[n] = release(self->sem_va, 9); /* release: op and timeout are 0 */
	cmds[n++].op = VGPU_SEM_OP_EQ;
	cmds[n] = release(self->sem_va, 9);
	cmds[n++].timeout_ns = 1;
	cmds[n] = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 0);
	cmds[n++].hdr.flags = 1u << 2; /* unknown flag */
	cmds[n] = release(self->sem_va, 9);
	cmds[n++].hdr.flags = 1u << 31;

	for (unsigned i = 0; i < n; i++) {
		uint32_t slot = dev_submit(d, 0, &cmds[i]);

		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(VGPU_ERR_BAD_COMMAND, c.status);
		EXPECT_EQ(cmds[i].hdr.opcode, c.opcode);
		EXPECT_EQ(slot, c.index);
		EXPECT_EQ((uint32_t)VGPU_EXC_NONE, c.exc.code);
		EXPECT_EQ(0u, c.exc.addr);
		EXPECT_STOPPED(d, 0, VGPU_ERR_BAD_COMMAND, slot);
		EXPECT_EQ(slot + 1, qreg_read(d, 0, VGPU_Q_HEAD));
		qreg_write(d, 0, VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE | VGPU_QCTRL_RESUME);
	}
	/* no refused release wrote anything */
	EXPECT_EQ(0u, qts_readq(d->qts, self->sem_pa));
	EXPECT_EQ(0u, qts_readq(d->qts, self->sem_pa + 8));
	check_recovers(_metadata, d, 0);
}

/*
 * Disabling the queue completes a waiting acquire with ABORTED; the queue
 * is enabled again and used.
 */
TEST_F(sem, queue_disable_aborts_a_waiting_acquire)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_EQ, 0x42);
	struct vgpu_cmd_fence f = fence(self->sem_va + 8, 1);
	uint32_t slot;

	qts_writeq(d->qts, self->sem_pa, 0x41);
	slot = dev_put(d, 0, &acq);
	dev_put(d, 0, &f);
	dev_doorbell(d, 0);
	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	qreg_write(d, 0, VGPU_Q_CONTROL, 0);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_ABORTED, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, c.opcode);
	EXPECT_EQ((uint32_t)VGPU_EXC_ABORTED, c.exc.code);
	EXPECT_EQ(self->sem_va, c.exc.addr);
	EXPECT_EQ(0x41u, c.exc.info[0]);
	EXPECT_EQ(0x42u, c.exc.info[2]);
	EXPECT_CONTAINS(c.exc.msg, "queue disabled");
	EXPECT_TRUE(wait_qstatus(d, 0, 0xffffffffu, 0));
	EXPECT_EQ(0u, qts_readq(d->qts, self->sem_pa + 8)); /* fence not run */

	dev_queue_init(d, 0, 16);
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_COMPLETED_LO));
	qts_writeq(d->qts, self->sem_pa, 0x42);
	slot = dev_put(d, 0, &acq);
	slot = dev_put(d, 0, &f);
	dev_doorbell(d, 0);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	EXPECT_EQ(1u, qts_readq(d->qts, self->sem_pa + 8));
	check_recovers(_metadata, d, 0);
}

/* A device reset voids a waiting acquire; the device works afterwards. */
TEST_F(sem, device_reset_voids_a_waiting_acquire)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 1);
	struct vgpu_cmd_sem rel = release(self->sem_va, 1);
	uint32_t slot;

	qreg_write(d, 0, VGPU_Q_PRIORITY, VGPU_QPRIO_HIGH);
	slot = dev_submit(d, 0, &acq);
	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	reg_write(d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_STATUS));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_STATUS));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_HEAD));
	EXPECT_EQ(VGPU_QPRIO_NORMAL, qreg_read(d, 0, VGPU_Q_PRIORITY));
	dev_read_cpl(d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq); /* void: no completion */

	reg_write(d, VGPU_REG_AS_BASE_LO, (uint32_t)DEV_AS_TABLE);
	reg_write(d, VGPU_REG_AS_COUNT, 1);
	reg_write(d, VGPU_REG_IRQ_MASK, VGPU_IRQ_ALL);
	dev_queue_init(d, 0, 16);
	dev_queue_init(d, 1, 16);
	slot = dev_submit(d, 0, &acq);
	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	ASSERT_TRUE(dev_wait(d, 1, dev_submit(d, 1, &rel), &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1u, c.seq);
	check_recovers(_metadata, d, 0);
}

/*
 * Stopping the VM while an acquire waits: the acquire gives way (the
 * queue is no longer busy, HEAD stays on it, nothing completes), and
 * once the VM runs again it waits on and completes.
 */
TEST_F(sem, vm_stop_while_an_acquire_waits)
{
	struct dev *d = &self->d;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq = acquire(self->sem_va, VGPU_SEM_OP_GEQ, 2);
	struct vgpu_cmd_sem rel = release(self->sem_va, 1);
	uint32_t slot;

	slot = dev_submit(d, 0, &acq);
	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	ASSERT_EQ(0, qts_hmp(d->qts, "stop", NULL, 0));
	EXPECT_EQ(VGPU_QSTAT_ENABLED, qreg_read(d, 0, VGPU_Q_STATUS));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_STATUS));
	EXPECT_EQ(0u, qreg_read(d, 0, VGPU_Q_HEAD));
	/* a release submitted while stopped does not run either */
	dev_submit(d, 1, &rel);
	sleep_ms(20);
	EXPECT_EQ(0u, qts_readq(d->qts, self->sem_pa));
	dev_read_cpl(d, 0, slot, &c);
	EXPECT_EQ(0u, c.seq);

	ASSERT_EQ(0, qts_hmp(d->qts, "cont", NULL, 0));
	ASSERT_TRUE(wait_qstatus(d, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	EXPECT_TRUE(wait_qstatus(d, 1, VGPU_QSTAT_IDLE, VGPU_QSTAT_IDLE));
	EXPECT_EQ(1u, qts_readq(d->qts, self->sem_pa)); /* 1 < 2: still waits */
	EXPECT_WAITING(d, 0);
	qts_writeq(d->qts, self->sem_pa, 2);
	ASSERT_TRUE(dev_wait(d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(1u, c.seq);
}

/*
 * Migration while an acquire waits: the source's acquire gives way at
 * the stop, the destination takes it up from HEAD and completes it.
 * Queue priorities travel (a NORMAL one needs no subsection).
 */
FIXTURE(migration) {
	struct dev a, b;
	char file[256];
};

FIXTURE_SETUP(migration)
{
	ASSERT_EQ(0, dev_open(&self->a, "queues=3", 1));
	snprintf(self->file, sizeof(self->file), "%s/state", qts_dir(self->a.qts));
}

FIXTURE_TEARDOWN(migration)
{
	if (self->b.qts)
		dev_close(&self->b);
	unlink(self->file);
	dev_close(&self->a);
}

TEST_F(migration, with_a_waiting_acquire_and_priorities)
{
	struct dev *a = &self->a, *b = &self->b;
	struct vgpu_completion c;
	struct vgpu_cmd_sem acq;
	struct vgpu_cmd_fence f;
	uint64_t sem_pa, sem_va;
	char cmd[1024];
	uint32_t slot;

	dev_queue_init(a, 0, 8);
	qreg_write(a, 0, VGPU_Q_PRIORITY, VGPU_QPRIO_REALTIME);
	qreg_write(a, 2, VGPU_Q_PRIORITY, VGPU_QPRIO_LOW);
	sem_va = dev_buf(a, 0, 4096, RW, &sem_pa);
	acq = acquire(sem_va, VGPU_SEM_OP_EQ, 9);
	f = fence(sem_va + 8, 0xf00d);
	dev_put(a, 0, &acq);
	slot = dev_put(a, 0, &f);
	dev_doorbell(a, 0);
	ASSERT_TRUE(wait_qstatus(a, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));

	snprintf(cmd, sizeof(cmd), "migrate exec:cat>%s", self->file);
	ASSERT_EQ(0, qts_hmp(a->qts, cmd, NULL, 0));
	EXPECT_EQ(VGPU_QSTAT_ENABLED, qreg_read(a, 0, VGPU_Q_STATUS));
	EXPECT_EQ(0u, qreg_read(a, 0, VGPU_Q_HEAD));

	ASSERT_EQ(0, dev_open_incoming(b, a, "queues=3", self->file));
	EXPECT_EQ(VGPU_QPRIO_REALTIME, qreg_read(b, 0, VGPU_Q_PRIORITY));
	EXPECT_EQ(VGPU_QPRIO_NORMAL, qreg_read(b, 1, VGPU_Q_PRIORITY));
	EXPECT_EQ(VGPU_QPRIO_LOW, qreg_read(b, 2, VGPU_Q_PRIORITY));
	ASSERT_TRUE(wait_qstatus(b, 0, VGPU_QSTAT_BUSY, VGPU_QSTAT_BUSY));
	EXPECT_WAITING(b, 0);
	qts_writeq(b->qts, sem_pa, 9);
	ASSERT_TRUE(dev_wait(b, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	EXPECT_EQ(0xf00du, qts_readq(b->qts, sem_pa + 8));
	dev_read_cpl(b, 0, 0, &c);
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(VGPU_CMD_SEM_ACQUIRE, c.opcode);
	EXPECT_EQ(1u, c.seq);
}

TEST_HARNESS_MAIN
