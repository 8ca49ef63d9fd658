/* SPDX-License-Identifier: MIT */
/*
 * Checks shared by the device tests (kselftest_harness.h and vgpu_dev.h
 * included first).
 */
#ifndef VGPU_QTEST_EXPECT_H
#define VGPU_QTEST_EXPECT_H

/* The queue stopped on @err at @slot, and QEMU still answers. */
#define EXPECT_STOPPED(d, q, err, slot)                                        \
	do {                                                                   \
		EXPECT_TRUE(qts_alive((d)->qts));                              \
		EXPECT_NE(0u, qreg_read(d, q, VGPU_Q_STATUS) &                 \
				      VGPU_QSTAT_STOPPED);                     \
		EXPECT_EQ((uint32_t)(err), qreg_read(d, q, VGPU_Q_ERROR));     \
		EXPECT_EQ((uint32_t)(slot),                                    \
			  qreg_read(d, q, VGPU_Q_ERROR_INDEX));                \
		EXPECT_EQ((uint32_t)(err), reg_read(d, VGPU_REG_ERR_LAST));    \
	} while (0)

#endif
