// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Helpers that every implementation of the core's memory callbacks shares
 * (the QEMU device's GPU MMU, libvgpu's sim backend, the host runner's
 * memory): host atomics and the text of MMU-fault records.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vgpu_core.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vgpu_atomic_host() treats host memory as little-endian"
#endif

/* atomic_host_N(): a compare-and-swap loop over vgpu_atomic_apply() */
#define ATOMIC_HOST(bits)                                                       \
	static uint64_t atomic_host_##bits(uint##bits##_t *p, enum vgpu_atomic_op op, \
					   uint64_t val, uint64_t cmp)          \
	{                                                                       \
		uint##bits##_t cur = __atomic_load_n(p, __ATOMIC_RELAXED), next;  \
                                                                                \
		do {                                                            \
			next = (uint##bits##_t)vgpu_atomic_apply(op, bits / 8, cur, \
								 val, cmp);     \
		} while (!__atomic_compare_exchange_n(p, &cur, next, 0,          \
						      __ATOMIC_SEQ_CST,          \
						      __ATOMIC_RELAXED));        \
		return cur;                                                     \
	}
ATOMIC_HOST(16)
ATOMIC_HOST(32)
ATOMIC_HOST(64)

uint64_t vgpu_atomic_host(void *p, unsigned size, enum vgpu_atomic_op op,
			  uint64_t val, uint64_t cmp)
{
	switch (size) {
	case 2:
		return atomic_host_16(p, op, val, cmp);
	case 4:
		return atomic_host_32(p, op, val, cmp);
	default:
		return atomic_host_64(p, op, val, cmp);
	}
}

void vgpu_cas16_host(void *p, const void *cmp, const void *val, void *old)
{
	uint64_t c[2], v[2];

	memcpy(c, cmp, 16);
	memcpy(v, val, 16);
#if defined(__x86_64__)
	/* rdx:rax the expected value (and, on a mismatch, what was there) */
	__asm__ __volatile__("lock cmpxchg16b %0"
			     : "+m"(*(volatile unsigned __int128 *)p), "+a"(c[0]), "+d"(c[1])
			     : "b"(v[0]), "c"(v[1])
			     : "memory", "cc");
#else
	{
		unsigned __int128 e, n;

		memcpy(&e, c, 16);
		memcpy(&n, v, 16);
		__atomic_compare_exchange_n((unsigned __int128 *)p, &e, n, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		memcpy(c, &e, 16);
	}
#endif
	memcpy(old, c, 16);
}

const char *vgpu_mmu_access_name(uint32_t acc)
{
	switch (acc) {
	case VGPU_MMU_ACC_READ:
		return "read";
	case VGPU_MMU_ACC_WRITE:
		return "write";
	case VGPU_MMU_ACC_EXEC:
		return "execute";
	case VGPU_MMU_ACC_ATOMIC:
		return "atomic";
	default:
		return "access";
	}
}

const char *vgpu_mmu_fault_name(uint32_t reason)
{
	static const char *const names[] = {
		[VGPU_MMU_F_NOT_PRESENT] = "entry not present",
		[VGPU_MMU_F_PERMISSION] = "permission denied",
		[VGPU_MMU_F_NONCANONICAL] = "address beyond 48 bits",
		[VGPU_MMU_F_RESERVED] = "reserved bits set in entry",
		[VGPU_MMU_F_TABLE_ACCESS] = "page table outside guest RAM",
		[VGPU_MMU_F_BAD_AS] = "invalid address space",
		[VGPU_MMU_F_BUS] = "page outside guest RAM",
		[VGPU_MMU_F_NOT_MULTICAST] = "not a multicast address",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "unknown fault";
}

void vgpu_exc_set_mmu_fault(struct vgpu_exception_record *exc, uint64_t va,
			   uint32_t acc, uint32_t reason, uint32_t level,
			   uint32_t asid)
{
	char msg[2 * VGPU_EXC_MSG_LEN + 32];
	int n;

	exc->addr = va;
	exc->info[0] = acc;
	exc->info[1] = reason;
	exc->info[2] = level;
	exc->info[3] = asid;
	if (reason == VGPU_MMU_F_BAD_AS)
		n = snprintf(msg, sizeof(msg),
			     "GPU MMU: address space %" PRIu32 " invalid", asid);
	else if (reason == VGPU_MMU_F_BUS)
		n = snprintf(msg, sizeof(msg),
			     "GPU MMU: %s at VA 0x%" PRIx64
			     " (address space %" PRIu32 "): %s",
			     vgpu_mmu_access_name(acc), va, asid,
			     vgpu_mmu_fault_name(reason));
	else
		n = snprintf(msg, sizeof(msg),
			     "GPU MMU: %s at VA 0x%" PRIx64
			     " (address space %" PRIu32 "): %s at level %" PRIu32,
			     vgpu_mmu_access_name(acc), va, asid,
			     vgpu_mmu_fault_name(reason), level);
	if (exc->msg[0] && n > 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, " [%.*s]",
			 (int)strnlen(exc->msg, sizeof(exc->msg)), exc->msg);
	/*
	 * The string only, the rest of the field zeroed: past its end @msg
	 * holds whatever this stack had, which the record must not carry
	 * (the device writes it into guest memory, GET_JOB to the user).
	 */
	n = (int)strnlen(msg, sizeof(exc->msg) - 1);
	memcpy(exc->msg, msg, (size_t)n);
	memset(exc->msg + n, 0, sizeof(exc->msg) - (size_t)n);
}
