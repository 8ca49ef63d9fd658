/* SPDX-License-Identifier: MIT */
/*
 * Fuzzing oracle for launch validation and the launch's shape (`make
 * fuzz` target launch; test_fuzz replays its seeds and
 * tests/fuzz/regressions/launch/): a struct vgpu_launch with raw 32-bit
 * dimensions, shared memory, parameter size, flags and entry goes to
 * vgpu_launch_validate(), which must accept it exactly when the limits
 * of vgpu_core.h and uapi/vgpu_hw.h hold (launch_ok, computed here in
 * 128-bit arithmetic) and refuse it otherwise with BAD_LAUNCH and a
 * message.  An accepted launch of at most LAUNCH_MAX_THREADS threads then
 * runs a kernel in which every thread adds 1 to its own slot (indexed by
 * its CTA and thread ids) and to a total, and stores its rank in its
 * cluster: every slot must be 1, the total the grid's thread count, and
 * each rank the CTA's place in its cluster (x fastest).
 *
 * Input (little-endian):
 *   bytes 0-35  grid[3], block[3], cluster[3] (u32 each)
 *   bytes 36-51 smem_bytes, param_size, flags, entry (u32 each)
 *   byte 52     bit 0 "small": each dimension 1 + (value mod 4) and the
 *               cluster (value mod 3), the shared memory value mod 64 KiB,
 *               the parameter size 8 + value mod 64, entry 0, so that
 *               most inputs run; bit 1 no program (prog NULL)
 * Returns 0, or 1 after a message on stderr.
 */
#ifndef VGPU_LAUNCH_ORACLE_H
#define VGPU_LAUNCH_ORACLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmem.h"
#include "oracle.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"
#include "vgpu_hw.h"

#define LAUNCH_IN 53
#define LAUNCH_MAX_THREADS 4096u
#define LAUNCH_MAX_CTAS 256u

static inline unsigned __int128 launch_volume(const uint32_t d[3])
{
	return (unsigned __int128)d[0] * d[1] * d[2];
}

/* The limits as vgpu_core.h and uapi/vgpu_hw.h state them. */
static inline bool launch_ok(const struct vgpu_launch *l, uint32_t ninsns)
{
	uint32_t cl[3];

	if (!l->prog || l->entry % VGPU_INSN_BYTES || l->entry / VGPU_INSN_BYTES >= ninsns)
		return false;
	for (int i = 0; i < 3; i++) {
		if (!l->grid[i] || !l->block[i])
			return false;
		cl[i] = l->cluster[i] ? l->cluster[i] : 1;
		if (l->grid[i] % cl[i])
			return false;
	}
	return launch_volume(l->grid) <= UINT32_MAX &&
	       launch_volume(l->block) <= VGPU_MAX_THREADS_PER_CTA &&
	       l->smem_bytes <= VGPU_DEFAULT_SMEM_PER_SM && /* vgpu_sm_new(NULL)'s */
	       l->param_size <= VGPU_MAX_PARAM_BYTES &&
	       !(l->flags & ~VGPU_LAUNCH_FLAGS_MASK) &&
	       launch_volume(cl) <= VGPU_MAX_CLUSTER_CTAS &&
	       /* a cooperative grid runs co-resident: clusters of one CTA, at
		* most a cluster's worth of them (uapi VGPU_LAUNCH_COOPERATIVE) */
	       (!(l->flags & VGPU_LAUNCH_COOPERATIVE) ||
		(launch_volume(cl) == 1 && launch_volume(l->grid) <= VGPU_MAX_CLUSTER_CTAS));
}

/*
 * Every thread: slot[1 + global id] += 1, slot[0] += 1, and
 * rank[global id] = its SR_CLUSTER_CTARANK + 1, where the global id is
 * (CTA's linear id, x fastest) * threads per CTA + (thread's, x fastest).
 */
static inline struct vgpu_prog *launch_prog(uint32_t *ninsns)
{
	static struct vgpu_prog *prog;
	static uint32_t n;
	static const char src[] =
		".kernel shape\n.param ptr out\n"
		"  LDP.64 R2, [out] ;\n"
		"  S2R R4, SR_TID.X ;\n  S2R R5, SR_TID.Y ;\n  S2R R6, SR_TID.Z ;\n"
		"  S2R R7, SR_NTID.X ;\n  S2R R8, SR_NTID.Y ;\n  S2R R14, SR_NTID.Z ;\n"
		"  S2R R9, SR_CTAID.X ;\n  S2R R10, SR_CTAID.Y ;\n  S2R R11, SR_CTAID.Z ;\n"
		"  S2R R12, SR_NCTAID.X ;\n  S2R R13, SR_NCTAID.Y ;\n"
		"  IMAD R15, R13, R11, R10 ;\n  IMAD R15, R12, R15, R9 ;\n"
		"  IMAD R16, R8, R6, R5 ;\n  IMAD R16, R7, R16, R4 ;\n"
		"  IMAD R17, R7, R8, RZ ;\n  IMAD R17, R17, R14, RZ ;\n"
		"  IMAD R18, R15, R17, R16 ;\n"
		"  SHL R19, R18, 0x2 ;\n  IADD R20, R2, R19 ;\n  MOV R21, R3 ;\n"
		"  MOV R22, 0x1 ;\n"
		"  ATOMG.ADD.U32 RZ, [R20+0x4], R22 ;\n"
		"  ATOMG.ADD.U32 RZ, [R2+0x0], R22 ;\n"
		"  S2R R23, SR_CLUSTER_CTARANK ;\n  IADD R23, R23, 0x1 ;\n"
		"  STG.32 [R20+0x8000], R23 ;\n"
		"  EXIT ;\n";

	if (!prog)
		prog = oracle_prog(src, &n);
	*ninsns = n;
	return prog;
}

static inline uint32_t launch_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Check the kernel's slots in @mem for the accepted launch @l. */
static inline int launch_check(const struct vgpu_launch *l, const uint8_t *mem)
{
	uint32_t threads = l->block[0] * l->block[1] * l->block[2];
	uint32_t ctas = l->grid[0] * l->grid[1] * l->grid[2], cl[3], v;

	for (int i = 0; i < 3; i++)
		cl[i] = l->cluster[i] ? l->cluster[i] : 1;
	memcpy(&v, mem, 4);
	if (v != threads * ctas)
		return ORACLE_FAIL("%u threads ran, want %u x %u\n", v, ctas, threads);
	for (uint32_t cta = 0; cta < ctas; cta++) {
		uint32_t x = cta % l->grid[0], y = cta / l->grid[0] % l->grid[1];
		uint32_t z = cta / l->grid[0] / l->grid[1];
		uint32_t rank = x % cl[0] + cl[0] * (y % cl[1] + cl[1] * (z % cl[2]));

		for (uint32_t t = 0; t < threads; t++) {
			uint32_t g = cta * threads + t;

			memcpy(&v, mem + 4 + 4 * g, 4);
			if (v != 1)
				return ORACLE_FAIL("CTA %u thread %u ran %u times\n", cta, t, v);
			memcpy(&v, mem + 0x8000 + 4 * g, 4);
			if (v != rank + 1)
				return ORACLE_FAIL("CTA %u (%u,%u,%u) of clusters %ux%ux%u: rank %d, want %u\n",
						   cta, x, y, z, cl[0], cl[1], cl[2],
						   (int)v - 1, rank);
		}
	}
	return 0;
}

static inline int launch_oracle(const uint8_t *data, size_t size)
{
	static uint8_t params[VGPU_MAX_PARAM_BYTES + 64];
	struct vgpu_exception_record exc;
	struct vgpu_launch l = { 0 };
	struct vgpu_hostmem hm;
	uint32_t ninsns;
	struct vgpu_sm *sm;
	uint64_t out;
	uint8_t *buf;
	bool ok;
	int bad = 0, rc;

	if (size < LAUNCH_IN)
		return 0;
	l.prog = launch_prog(&ninsns);
	for (int i = 0; i < 3; i++) {
		l.grid[i] = launch_u32(data + 4 * i);
		l.block[i] = launch_u32(data + 12 + 4 * i);
		l.cluster[i] = launch_u32(data + 24 + 4 * i);
	}
	l.smem_bytes = launch_u32(data + 36);
	l.param_size = launch_u32(data + 40);
	l.flags = launch_u32(data + 44);
	l.entry = launch_u32(data + 48);
	if (data[52] & 1) {
		for (int i = 0; i < 3; i++) {
			l.grid[i] = 1 + l.grid[i] % 4;
			l.block[i] = 1 + l.block[i] % (i ? 4 : 64);
			l.cluster[i] = l.cluster[i] % 3;
		}
		l.smem_bytes %= 65536;
		l.param_size = 8 + l.param_size % 64;
		l.flags &= VGPU_LAUNCH_RANDOM_SCHED | VGPU_LAUNCH_SANITIZE | 0x100;
		l.entry = 0;
	}
	if (data[52] & 2)
		l.prog = NULL;
	l.params = params;
	l.seed = data[36];
	l.budget = 1000000;
	sm = vgpu_sm_new(NULL);
	if (!sm)
		return 0;
	vgpu_hostmem_init(&hm, 0x100000000ull, 0x200000000ull);
	if (vgpu_hostmem_alloc(&hm, 0x10000, &out, &buf))
		goto done;
	memcpy(params, &out, 8);
	l.mem = &vgpu_hostmem_ops;
	l.mem_opaque = &hm;
	ok = launch_ok(&l, ninsns);
	rc = vgpu_launch_validate(sm, &l, &exc);
	if (rc != (ok ? 0 : -1)) {
		bad = ORACLE_FAIL("grid %ux%ux%u block %ux%ux%u cluster %ux%ux%u smem %u params %u flags 0x%x entry 0x%x: %s (%s), want %s\n",
				  l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
				  l.block[2], l.cluster[0], l.cluster[1], l.cluster[2],
				  l.smem_bytes, l.param_size, l.flags, l.entry,
				  rc ? "refused" : "accepted", rc ? exc.msg : "",
				  ok ? "accepted" : "refused");
	} else if (rc && (exc.code != VGPU_EXC_BAD_LAUNCH || !exc.msg[0] ||
			  !memchr(exc.msg, 0, sizeof(exc.msg)))) {
		bad = ORACLE_FAIL("refused with %s \"%.64s\"\n", vgpu_exc_name(exc.code),
				  exc.msg);
	} else if (!rc && l.entry == 0 && l.param_size >= 8 &&
		   launch_volume(l.grid) <= LAUNCH_MAX_CTAS &&
		   launch_volume(l.grid) * launch_volume(l.block) <= LAUNCH_MAX_THREADS) {
		rc = vgpu_sm_launch(sm, &l, &exc);
		if (rc)
			bad = ORACLE_FAIL("an accepted launch stopped: %s: %s\n",
					  vgpu_exc_name(exc.code), exc.msg);
		else
			bad = launch_check(&l, buf);
	}
done:
	vgpu_hostmem_fini(&hm);
	vgpu_sm_free(sm);
	return bad;
}

#endif
