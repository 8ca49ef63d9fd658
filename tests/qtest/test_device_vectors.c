/* SPDX-License-Identifier: MIT */
/*
 * vgpu-pci device tests (qtest, see test_device.c): completion vectors
 * (uapi/vgpu_hw_regs.h "Completion vectors").  A command with
 * VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(v) sends its completion interrupt on
 * MSI-X vector v and on no other, whether it completes inside the doorbell
 * write (an inline run) or on the queue thread (through the bottom half);
 * a vector the table lacks, the error vector, or a vector without
 * VGPU_CMD_F_IRQ fail the command with VGPU_ERR_BAD_COMMAND, stop the
 * queue and interrupt on the error vector; msix-vectors= sizes the table.
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

/* Wait for vector @v's message (the BH may deliver it after the record). */
static uint32_t msi_wait(struct dev *d, unsigned v)
{
	uint32_t m = 0;

	for (int i = 0; i < 200000 && !(m = dev_msi_read(d, v)); i++)
		;
	return m;
}

/* Messages seen on vectors other than @v, of the first @n. */
static unsigned msi_others(struct dev *d, unsigned n, unsigned v)
{
	unsigned others = 0;

	for (unsigned i = 0; i < n; i++)
		if (i != v && dev_msi_read(d, i))
			others++;
	return others;
}

static const unsigned good_vecs[] = { 0, 2, 3, 7, VGPU_MSIX_VECTORS_DEFAULT - 1 };

/* NOP, FENCE and LAUNCH on each vector: the message comes there only. */
static void vectors_named(struct __test_metadata *_metadata, struct dev *d)
{
	struct store_setup st;
	struct vgpu_completion c;
	uint64_t fence_pa, fence_va;
	uint32_t seq = 0;

	ASSERT_EQ(VGPU_MSIX_VECTORS_DEFAULT, reg_read(d, VGPU_REG_CAP_MSIX_VECTORS));
	dev_queue_init(d, 0, 16);
	ASSERT_EQ(0, store_setup(d, &st, 64, 5, RW));
	fence_va = dev_buf(d, 0, 8, RW, &fence_pa);
	for (unsigned i = 0; i < sizeof(good_vecs) / sizeof(good_vecs[0]); i++) {
		unsigned v = good_vecs[i];
		uint32_t flags = VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(v);
		struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
						       .flags = flags } };
		struct vgpu_cmd_fence fence = {
			.hdr = { .opcode = VGPU_CMD_FENCE, .flags = flags },
			.addr = fence_va, .value = 100 + v,
		};
		struct vgpu_cmd_launch launch = store_cmd(&st, 2, 32);

		launch.hdr.flags = flags;
		const void *cmds[] = { &nop, &fence, &launch };

		for (unsigned k = 0; k < 3; k++) {
			dev_msi_clear(d);
			ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, cmds[k]), &c));
			EXPECT_EQ(VGPU_ERR_NONE, c.status);
			EXPECT_EQ(++seq, c.seq);
			EXPECT_EQ(DEV_MSI_DATA + v, msi_wait(d, v)) {
				TH_LOG("vector %u, command %u", v, k);
			}
			EXPECT_EQ(0u, msi_others(d, VGPU_MSIX_VECTORS_DEFAULT, v)) {
				TH_LOG("vector %u, command %u", v, k);
			}
		}
		EXPECT_EQ(100u + v, qts_readl(d->qts, fence_pa));
		for (uint32_t j = 0; j < 64; j++)
			EXPECT_EQ(j * 2 + 5, qts_readl(d->qts, st.out_pa + 4 * j));
	}
	/* no vector named: vector 0, as before */
	{
		struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
						       .flags = VGPU_CMD_F_IRQ } };

		dev_msi_clear(d);
		ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &nop), &c));
		EXPECT_EQ(DEV_MSI_DATA, msi_wait(d, VGPU_MSIX_VEC_COMPLETION));
		EXPECT_EQ(0u, msi_others(d, VGPU_MSIX_VECTORS_DEFAULT, 0));
	}
	EXPECT_EQ(VGPU_IRQ_COMPLETION, reg_read(d, VGPU_REG_IRQ_STATUS));
	EXPECT_EQ(0u, reg_read(d, VGPU_REG_ERR_COUNT));
	dev_kernel_free(&st.kern);
}

/* Completed inside the doorbell write (an inline run) */
TEST(completion_vector_inline)
{
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	vectors_named(_metadata, &d);
	dev_close(&d);
}

/* Completed on the queue thread: the bottom half sends it */
TEST(completion_vector_queue_thread)
{
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, "inline-budget=0", 1));
	vectors_named(_metadata, &d);
	dev_close(&d);
}

/*
 * A launch long enough to leave the doorbell write and a NOP behind it,
 * on two vectors, both completed by device threads: each message on its
 * own vector (the bottom half gathers the vectors raised before it runs).
 */
TEST(two_vectors_one_bottom_half)
{
	static const char k_loop[] =
		".kernel loop\n"
		"    MOV R1, 0x0 ;\n"
		"l:\n"
		"    IADD R1, R1, 0x1 ;\n"
		"    ISETP.LT.U32 P0, R1, 0x4000 ;\n"
		"    @P0 BRA l ;\n"
		"    EXIT ;\n";
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
					       .flags = VGPU_CMD_F_IRQ |
							VGPU_CMD_F_VEC(9) } };
	struct vgpu_completion c;
	uint32_t slot;
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	dev_queue_init(&d, 0, 8);
	ASSERT_EQ(0, dev_kernel_load(&d, 0, k_loop, &kern));
	cmd = dev_launch_cmd(&kern, 1, 32, 0, 0);
	cmd.hdr.flags = VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(4);
	dev_put(&d, 0, &cmd);
	slot = dev_put(&d, 0, &nop);
	dev_doorbell(&d, 0);
	ASSERT_TRUE(dev_wait(&d, 0, slot, &c));
	EXPECT_EQ(VGPU_ERR_NONE, c.status);
	EXPECT_EQ(2u, c.seq);
	EXPECT_EQ(DEV_MSI_DATA + 4, msi_wait(&d, 4));
	EXPECT_EQ(DEV_MSI_DATA + 9, msi_wait(&d, 9));
	EXPECT_EQ(0u, dev_msi_read(&d, 0));
	EXPECT_EQ(0u, dev_msi_read(&d, VGPU_MSIX_VEC_ERROR));
	dev_kernel_free(&kern);
	dev_close(&d);
}

/*
 * A vector the table lacks, the error vector, a vector without F_IRQ:
 * VGPU_ERR_BAD_COMMAND, the queue stopped at that command, the error
 * vector's message, nothing on the named one; then the queue recovers.
 */
static void bad_vectors(struct __test_metadata *_metadata, struct dev *d,
			unsigned table)
{
	const uint32_t bad[] = {
		VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(table),
		VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(VGPU_MSIX_VECTORS_MAX - 1),
		VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(0xff),
		VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(VGPU_MSIX_VEC_ERROR),
		VGPU_CMD_F_VEC(table - 1),
	};
	struct vgpu_completion c;
	uint32_t errs = 0;

	ASSERT_EQ(table, reg_read(d, VGPU_REG_CAP_MSIX_VECTORS));
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vgpu_cmd_fence nop = { .hdr = { .opcode = VGPU_CMD_NOP,
						       .flags = bad[i] } };
		uint32_t slot;

		qreg_write(d, 0, VGPU_Q_CONTROL, 0); /* off: the ring can change */
		dev_queue_init(d, 0, 4);
		dev_msi_clear(d);
		slot = dev_submit(d, 0, &nop);
		ASSERT_TRUE(dev_wait(d, 0, slot, &c));
		EXPECT_EQ(VGPU_ERR_BAD_COMMAND, c.status) {
			TH_LOG("flags 0x%x", bad[i]);
		}
		EXPECT_EQ(VGPU_ERR_BAD_COMMAND, qreg_read(d, 0, VGPU_Q_ERROR));
		EXPECT_EQ(slot, qreg_read(d, 0, VGPU_Q_ERROR_INDEX));
		EXPECT_EQ(++errs, reg_read(d, VGPU_REG_ERR_COUNT));
		EXPECT_EQ(VGPU_ERR_BAD_COMMAND, reg_read(d, VGPU_REG_ERR_LAST));
		EXPECT_EQ(DEV_MSI_DATA + VGPU_MSIX_VEC_ERROR,
			  msi_wait(d, VGPU_MSIX_VEC_ERROR));
		EXPECT_EQ(0u, msi_others(d, VGPU_MSIX_VECTORS_MAX,
					 VGPU_MSIX_VEC_ERROR)) {
			TH_LOG("flags 0x%x", bad[i]);
		}
		reg_write(d, VGPU_REG_IRQ_ACK, VGPU_IRQ_ALL);
	}
	/* the queue, enabled again, runs a good one */
	{
		unsigned good = table - 1 == VGPU_MSIX_VEC_ERROR ? 0 : table - 1;
		struct vgpu_cmd_fence nop = {
			.hdr = { .opcode = VGPU_CMD_NOP,
				 .flags = VGPU_CMD_F_IRQ | VGPU_CMD_F_VEC(good) } };

		qreg_write(d, 0, VGPU_Q_CONTROL, 0);
		dev_queue_init(d, 0, 4);
		dev_msi_clear(d);
		ASSERT_TRUE(dev_wait(d, 0, dev_submit(d, 0, &nop), &c));
		EXPECT_EQ(VGPU_ERR_NONE, c.status);
		EXPECT_EQ(DEV_MSI_DATA + good, msi_wait(d, good));
	}
}

TEST(bad_vector_stops_the_queue)
{
	struct dev d;

	ASSERT_EQ(0, dev_open(&d, NULL, 1));
	bad_vectors(_metadata, &d, VGPU_MSIX_VECTORS_DEFAULT);
	dev_close(&d);
}

/* msix-vectors=: the table's size, in the capability and the register */
TEST(msix_vectors_property)
{
	static const unsigned sizes[] = { VGPU_MSIX_VECTORS_MIN, 5, VGPU_MSIX_VECTORS_MAX };

	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char props[32];
		struct dev d;

		snprintf(props, sizeof(props), "msix-vectors=%u", sizes[i]);
		ASSERT_EQ(0, dev_open(&d, props, 1));
		EXPECT_EQ(sizes[i],
			  (qts_cfg_readw(d.qts, DEV_DEVFN, d.msix_cap + 2) & 0x7ff) + 1u);
		if (sizes[i] < VGPU_MSIX_VECTORS_MAX)
			bad_vectors(_metadata, &d, sizes[i]);
		dev_close(&d);
	}
}

TEST_HARNESS_MAIN
