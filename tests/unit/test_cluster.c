/* SPDX-License-Identifier: MIT */
/*
 * Clusters: co-resident CTAs, cluster special registers, MAPA and
 * distributed shared memory, BAR.CLUSTER, arrive / complete_tx on another
 * CTA's mbarrier (seed 001, example 4), copies that signal a remote
 * mbarrier, and the cluster errors.
 */
#include <stdio.h>

#include "kernel_util.h"

#define SAN VGPU_LAUNCH_SANITIZE
#define NSEEDS 100

TEST(cluster_special_registers)
{
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".param ptr out\n"
			      "  LDP.64 R2, [out] ;\n"
			      "  S2R R0, SR_TID ;\n"
			      "  ISETP.NE.U32 P0, R0, 0x0 ;\n"
			      "  @P0 EXIT ;\n"
			      "  S2R R4, SR_CTAID.X ;\n"
			      "  S2R R5, SR_CTAID.Y ;\n"
			      "  IMAD R4, R5, 0x4, R4 ;\n"      /* linear CTA (grid 4x2) */
			      "  SHL R4, R4, 0x4 ;\n"
			      "  IADD R8, R2, R4 ;\n"
			      "  MOV R9, R3 ;\n"
			      "  S2R R12, SR_CLUSTER_CTARANK ;\n"
			      "  S2R R13, SR_CLUSTER_NCTARANK ;\n"
			      "  S2R R14, SR_CLUSTERID.X ;\n"
			      "  S2R R15, SR_CLUSTERID.Y ;\n"
			      "  STG.128 [R8], R12 ;\n"
			      "  EXIT ;\n"));
	k.grid[0] = 4;
	k.grid[1] = 2;
	k.cluster[0] = 2;
	k.cluster[1] = 2;
	KT_RUN_OK(&k);
	for (uint32_t y = 0; y < 2; y++)
		for (uint32_t x = 0; x < 4; x++) {
			uint32_t i = (y * 4 + x) * 4;

			EXPECT_EQ((x % 2) + 2 * (y % 2), kt_word(&k, i));
			EXPECT_EQ(4u, kt_word(&k, i + 1));
			EXPECT_EQ(x / 2, kt_word(&k, i + 2));
			EXPECT_EQ(y / 2, kt_word(&k, i + 3));
		}
	kt_free(&k);
}

/*
 * One SM, three launches: a cluster of two small CTAs, then one CTA per
 * cluster with 1024 threads and 16 KiB of shared memory (which grew only
 * the first CTA slot's buffers, once), then clusters of two 512-thread
 * CTAs with 8 KiB: the second slot must have grown too (the ASan build
 * caught the overrun; found by the device fuzzer).  Each launch writes
 * out[gtid] = gtid + 7 from a value it staged in shared memory.
 */
TEST(cta_slots_grow_together)
{
	static const struct { uint32_t grid, block, cluster, smem; } runs[] = {
		{ 2, 32, 2, 128 }, { 1, 1024, 0, 16384 }, { 4, 512, 2, 8192 },
	};
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, KT_PROLOGUE
			      "  S2R R4, SR_CTAID.X ;\n"
			      "  S2R R5, SR_NTID.X ;\n"
			      "  IMAD R6, R4, R5, R0 ;\n"	/* gtid */
			      "  IADD R7, R6, 0x7 ;\n"
			      "  STS.32 [R1], R7 ;\n"
			      "  BAR.SYNC 0x0 ;\n"
			      "  LDS.32 R10, [R1] ;\n"
			      "  SHL R11, R4, 0x2 ;\n"
			      "  IMAD R11, R11, R5, R1 ;\n"	/* 4 * gtid */
			      "  IADD R8, R11, R2 ;\n"
			      "  MOV R9, R3 ;\n"
			      "  STG.32 [R8], R10 ;\n"
			      "  EXIT ;\n"));
	for (unsigned r = 0; r < 3; r++) {
		uint32_t n = runs[r].grid * runs[r].block;

		memset(k.mem.buf, 0, 4 * n);
		k.grid[0] = runs[r].grid;
		k.block[0] = runs[r].block;
		k.cluster[0] = runs[r].cluster;
		k.smem = runs[r].smem;
		KT_RUN_OK(&k);
		for (uint32_t t = 0; t < n; t++) {
			ASSERT_EQ(t + 7, kt_word(&k, t)) {
				TH_LOG("launch %u thread %u", r, t);
			}
		}
	}
	kt_free(&k);
}

TEST(mapa_distributed_shared_memory_and_cluster_barrier)
{
	/* each CTA writes rank*100 + tid into the next rank's shared memory,
	 * the cluster barrier orders it, each reads what it received */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared buf, 256\n" KT_PROLOGUE
			      "  S2R R4, SR_CLUSTER_CTARANK ;\n"
			      "  S2R R5, SR_CLUSTER_NCTARANK ;\n"
			      "  IADD R6, R4, 0x1 ;\n"
			      "  ISETP.GE.U32 P0, R6, R5 ;\n"
			      "  @P0 MOV R6, RZ ;\n"             /* next rank */
			      "  MAPA R7, R1, R6 ;\n"
			      "  IMAD R8, R4, 0x64, R0 ;\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"        /* everyone started */
			      "  BAR.CLUSTER.WAIT ;\n"
			      "  STS.32 [R7], R8 ;\n"
			      "  BAR.CLUSTER.ARRIVE.RELEASE ;\n"
			      "  BAR.CLUSTER.WAIT.ACQUIRE ;\n"
			      "  LDS.32 R10, [R1] ;\n"
			      "  S2R R11, SR_CTAID.X ;\n"
			      "  SHL R11, R11, 0x8 ;\n"
			      "  IADD R12, R1, R11 ;\n"
			      "  IADD R12, R12, R2 ;\n"
			      "  MOV R13, R3 ;\n"
			      "  STG.32 [R12], R10 ;\n"
			      "  EXIT ;\n"));
	k.grid[0] = 8;
	k.cluster[0] = 4;
	k.block[0] = 64;
	for (uint64_t s = 0; s <= NSEEDS; s++) {
		k.flags = SAN | (s ? VGPU_LAUNCH_RANDOM_SCHED : 0);
		k.seed = s;
		KT_RUN_OK(&k);
		for (uint32_t c = 0; c < 8; c++) {
			uint32_t rank = c % 4, from = (rank + 3) % 4;

			EXPECT_EQ(from * 100 + 5, kt_word(&k, c * 64 + 5));
		}
	}
	kt_free(&k);
}

/* seed 001, mbarrier example 4: every thread of the cluster arrives on CTA
 * 0's mbarrier; only CTA 0 waits */
static const char *example4 =
	".shared bar, 8\n" KT_PROLOGUE
	"  S2R R4, SR_CLUSTER_CTARANK ;\n"
	"  ISETP.EQ.U32 P0, R4, 0x0 ;\n"
	"  ISETP.EQ.U32.AND P1, R0, 0x0, P0 ;\n"
	"  MOV R5, 0x0 ;\n"
	"  MOV R6, 0x100 ;\n"                   /* N = 4 CTAs x 64 threads */
	"  @P1 MBAR.INIT [R5], R6 ;\n"
	"  BAR.CLUSTER.ARRIVE ;\n"
	"  BAR.CLUSTER.WAIT ;\n"
	"  MAPA R7, R5, 0x0 ;\n"               /* CTA 0's instance */
	"  MBAR.ARRIVE.RELEASE.CLUSTER _, [R7] ;\n"
	"  @!P0 EXIT ;\n"
	"wait:\n"
	"  MBAR.TRY_WAIT.PARITY.ACQUIRE.CLUSTER P2, [R5], RZ ;\n"
	"  @!P2 BRA wait ;\n"
	"  LDS.64 R10, [R5] ;\n"
	"  ISETP.NE.U32 P3, R0, 0x0 ;\n"
	"  @P3 EXIT ;\n"
	"  S2R R12, SR_CLUSTERID.X ;\n"
	"  SHL R12, R12, 0x3 ;\n"
	"  IADD R12, R12, R2 ;\n"
	"  MOV R13, R3 ;\n"
	"  STG.64 [R12], R10 ;\n"
	"  EXIT ;\n";

TEST(cluster_wide_mbarrier_every_cta_arrives_on_cta0)
{
	struct kt k;

	ASSERT_EQ(0, kt_load(&k, example4));
	k.grid[0] = 8;
	k.cluster[0] = 4;
	k.block[0] = 64;
	for (uint64_t s = 0; s <= NSEEDS; s++) {
		k.flags = s ? VGPU_LAUNCH_RANDOM_SCHED : 0; /* raw read below */
		k.seed = s;
		KT_RUN_OK(&k);
		for (uint32_t c = 0; c < 2; c++) /* phase 1, pending reloaded */
			EXPECT_EQ(256ull | 256ull << 20 | 1ull << 61 | 1ull << 63,
				  kt_dword(&k, 2 * c));
	}
	kt_free(&k);
}

TEST(bulk_copy_into_another_cta_signals_its_mbarrier)
{
	/* CTA 1 copies 256 bytes into CTA 0's buffer, completing CTA 0's
	 * mbarrier; CTA 0 waits on it and publishes what arrived */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared bar, 16\n.shared buf, 256\n" KT_PROLOGUE
			      "  S2R R4, SR_CLUSTER_CTARANK ;\n"
			      "  ISETP.EQ.U32 P0, R0, 0x0 ;\n"
			      "  ISETP.EQ.U32 P1, R4, 0x0 ;\n"
			      "  MOV R5, 0x0 ;\n"
			      "  @P1 BRA cta0 ;\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"
			      "  BAR.CLUSTER.WAIT ;\n"          /* CTA 0's mbarrier is set up */
			      "  MAPA R6, R5, 0x0 ;\n"
			      "  MOV R7, 0x10 ;\n"
			      "  MAPA R7, R7, 0x0 ;\n"
			      "  IADD R8, R2, 0x4000 ;\n"
			      "  MOV R9, R3 ;\n"
			      "  MOV R10, 0x100 ;\n"
			      "  @P0 CP.ASYNC.BULK [R7], [R8], R10, [R6] ;\n"
			      "  EXIT ;\n"
			      "cta0:\n"
			      "  @P0 MBAR.INIT [R5], 0x1 ;\n"
			      "  @P0 MBAR.ARRIVE.EXPECT_TX _, [R5], 0x100 ;\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"
			      "  BAR.CLUSTER.WAIT ;\n"
			      "wait:\n"
			      "  MBAR.TRY_WAIT.PARITY P2, [R5], RZ ;\n"
			      "  @!P2 BRA wait ;\n"
			      "  LDS.32 R11, [R1+0x10] ;\n" KT_STORE("R11", "0x0")
			      "  EXIT ;\n"));
	for (uint32_t i = 0; i < 64; i++)
		kt_set_word(&k, 0x1000 + i, 0xabc000 + i);
	k.grid[0] = 2;
	k.cluster[0] = 2;
	for (uint64_t s = 0; s <= NSEEDS; s++) {
		k.flags = SAN | (s ? VGPU_LAUNCH_RANDOM_SCHED : 0);
		k.seed = s;
		KT_RUN_OK(&k);
		for (uint32_t t = 0; t < 32; t++)
			EXPECT_EQ(0xabc000 + t, kt_word(&k, t));
	}
	kt_free(&k);
}

TEST(remote_expect_tx_and_complete_tx)
{
	/* CTA 1 raises CTA 0's tx-count and then completes it: CTA 0's phase
	 * (count 1, its own arrive) completes only after both */
	struct kt k;

	ASSERT_EQ(0,
		  kt_load(&k, ".shared bar, 8\n" KT_PROLOGUE
			      "  S2R R4, SR_CLUSTER_CTARANK ;\n"
			      "  ISETP.EQ.U32 P1, R4, 0x0 ;\n"
			      "  MOV R5, 0x0 ;\n"
			      "  @P1 MBAR.INIT [R5], 0x1 ;\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"
			      "  BAR.CLUSTER.WAIT ;\n"
			      "  @P1 BRA cta0 ;\n"
			      "  MAPA R6, R5, 0x0 ;\n"
			      "  MBAR.EXPECT_TX.RELAXED.CLUSTER [R6], 0x30 ;\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"           /* CTA 0 may arrive now */
			      "  NANOSLEEP 0x3e8 ;\n"
			      "  MBAR.COMPLETE_TX [R6], 0x30 ;\n"
			      "  EXIT ;\n"
			      "cta0:\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"
			      "  BAR.CLUSTER.WAIT ;\n"
			      "  MBAR.ARRIVE _, [R5] ;\n"
			      "  S2R R7, SR_CLOCKLO ;\n"
			      "wait:\n"
			      "  MBAR.TRY_WAIT.PARITY P2, [R5], RZ ;\n"
			      "  @!P2 BRA wait ;\n"
			      "  S2R R8, SR_CLOCKLO ;\n"
			      "  ISUB R8, R8, R7 ;\n"
			      "  STG.32 [R2], R8 ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	k.grid[0] = 2;
	k.cluster[0] = 2;
	k.flags = SAN;
	KT_RUN_OK(&k);
	EXPECT_GE(kt_word(&k, 0), 1000u); /* waited for CTA 1's complete_tx */
	kt_free(&k);
}

TEST(cluster_errors)
{
	struct kt k;

	/* waiting on another CTA's mbarrier */
	ASSERT_EQ(0,
		  kt_load(&k, ".shared bar, 8\n" KT_PROLOGUE
			      "  MOV R5, 0x0 ;\n"
			      "  MOV R6, 0x1 ;\n"
			      "  MBAR.INIT [R5], R6 ;\n"
			      "  BAR.CLUSTER.ARRIVE ;\n"
			      "  BAR.CLUSTER.WAIT ;\n"
			      "  MAPA R7, R5, 0x1 ;\n"
			      "  S2R R4, SR_CLUSTER_CTARANK ;\n"
			      "  ISETP.EQ.U32 P0, R4, 0x0 ;\n"
			      "  @P0 MBAR.TEST_WAIT.PARITY P1, [R7], RZ ;\n"
			      "  EXIT ;\n"));
	k.block[0] = 1;
	k.grid[0] = 2;
	k.cluster[0] = 2;
	k.flags = SAN;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_MBAR_REMOTE_WAIT, k.exc.code);
	EXPECT_CONTAINS(k.exc.msg, "only valid on the CTA's own mbarriers");
	kt_free(&k);

	/* MAPA past the cluster, and a cluster address past it */
	ASSERT_EQ(0, kt_load(&k, "  MAPA R7, RZ, 0x2 ;\n  EXIT ;\n"));
	k.grid[0] = 2;
	k.cluster[0] = 2;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_CLUSTER_RANGE, k.exc.code);
	EXPECT_CONTAINS(k.exc.msg, "rank 2 of a 2-CTA cluster");
	kt_free(&k);
	ASSERT_EQ(0,
		  kt_load(&k, ".shared b, 16\n  MOV R7, 0x83000000 ;\n  LDS.32 R8, [R7] ;\n  EXIT ;\n"));
	k.grid[0] = 2;
	k.cluster[0] = 2;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_CLUSTER_RANGE, k.exc.code);
	EXPECT_EQ(0x83000000u, k.exc.addr);
	kt_free(&k);

	/* cluster dims must divide the grid and hold at most 16 CTAs */
	ASSERT_EQ(0, kt_load(&k, "  EXIT ;\n"));
	k.grid[0] = 6;
	k.cluster[0] = 4;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_EQ((uint32_t)VGPU_EXC_BAD_LAUNCH, k.exc.code);
	EXPECT_CONTAINS(k.exc.msg, "does not divide");
	k.grid[0] = 32;
	k.cluster[0] = 32;
	EXPECT_EQ(-1, kt_run(&k));
	EXPECT_CONTAINS(k.exc.msg, "more than 16 CTAs");
	kt_free(&k);
}

TEST_HARNESS_MAIN
