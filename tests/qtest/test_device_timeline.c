/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests (qtest, see test_device.c): a launch's timeline
 * (VGPU_LAUNCH_TIMELINE) as the device writes it into guest memory.
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


TEST_HARNESS_MAIN
