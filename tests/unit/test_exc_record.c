// SPDX-License-Identifier: MIT
/*
 * An exception record carries nothing but what it says: past the end of
 * its message every byte is zero.  The device writes the record into
 * guest memory and GET_JOB copies it to the user, so a byte left over
 * from the host's stack there would leak it (the GPU MMU's fault message
 * was built in a stack buffer and copied whole, 2026-12-02).  The core's
 * record builders called directly, after the stack below them was
 * filled with a pattern, for every fault reason.
 */
#include <stdint.h>
#include <string.h>

#include "kselftest_host.h"
#include "vgpu_core.h"

/* The stack this deep below the caller filled with 0xa5 (and left). */
static void __attribute__((noinline)) stack_poison(void)
{
	volatile char buf[8192];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)0xa5;
}

/* Nonzero bytes after the message's terminator (its length: all). */
static size_t stale_bytes(const struct vgpu_exception_record *exc)
{
	size_t n = strnlen(exc->msg, sizeof(exc->msg)), stale = 0;

	if (n == sizeof(exc->msg))
		return n;
	for (size_t i = n; i < sizeof(exc->msg); i++)
		stale += exc->msg[i] != 0;
	return stale;
}

TEST(mmu_fault_message_has_no_stale_bytes)
{
	static const uint32_t reasons[] = {
		VGPU_MMU_F_NOT_PRESENT, VGPU_MMU_F_PERMISSION, VGPU_MMU_F_NONCANONICAL,
		VGPU_MMU_F_RESERVED,	VGPU_MMU_F_TABLE_ACCESS, VGPU_MMU_F_BAD_AS,
	};

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		struct vgpu_exception_record exc;

		/* as the core leaves it: its own message, then the MMU's */
		vgpu_exc_set(&exc, VGPU_EXC_GLOBAL_FAULT, "global memory fault: 4-byte write");
		stack_poison();
		vgpu_exc_set_mmu_fault(&exc, 0xdead0000ull, VGPU_MMU_ACC_WRITE, reasons[i], 2, 1);
		EXPECT_NE(NULL, strstr(exc.msg, "GPU MMU"));
		EXPECT_NE(NULL, strstr(exc.msg, "[global memory fault: 4-byte write]"));
		EXPECT_EQ(0u, stale_bytes(&exc));
		/* and without a message of the core's */
		vgpu_exc_set(&exc, VGPU_EXC_GLOBAL_FAULT, "%s", "");
		stack_poison();
		vgpu_exc_set_mmu_fault(&exc, 0xdead0000ull, VGPU_MMU_ACC_READ, reasons[i], 0, 3);
		EXPECT_EQ(0u, stale_bytes(&exc));
	}
}

TEST(long_message_is_cut_and_terminated)
{
	struct vgpu_exception_record exc;
	char longmsg[400];

	memset(longmsg, 'x', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	vgpu_exc_set(&exc, VGPU_EXC_GLOBAL_FAULT, "%s", longmsg);
	EXPECT_EQ(sizeof(exc.msg) - 1, strnlen(exc.msg, sizeof(exc.msg)));
	stack_poison();
	vgpu_exc_set_mmu_fault(&exc, 1ull << 60, VGPU_MMU_ACC_WRITE, VGPU_MMU_F_NONCANONICAL, 0, 1);
	EXPECT_EQ(sizeof(exc.msg) - 1, strnlen(exc.msg, sizeof(exc.msg)));
	EXPECT_EQ(0, strncmp(exc.msg, "GPU MMU", 7));
	EXPECT_EQ(0u, stale_bytes(&exc));
}

TEST_HARNESS_MAIN
