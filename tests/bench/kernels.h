/* SPDX-License-Identifier: MIT */
/*
 * Kernels shared by the benchmarks: the compute-bound kernel that both the
 * host-runner benchmark (bench_core) and the device benchmark
 * (tests/qtest/bench_device) time, so their rates compare, and the
 * BAR.SYNC-heavy one (bench_core (b), bench_device's scaling grid).
 *
 * Per thread: x = x * 1664525 + tid; y = y * x + 1013904223;
 * f = f * 0.5 + g; h = h * 0.5 + f, for N iterations (the format's %x).
 * The float products are exact, so fused and unfused multiply-add give
 * the same bits.  out[1024 ctaid + 4 tid ..] = x, y, f, h: each CTA writes
 * its own 4 KiB, as the CTAs of a real grid write their own tiles (a grid
 * whose CTAs all stored to the same lines measured the host's cache-line
 * transfers, not the SMs).
 */
#ifndef VGPU_BENCH_KERNELS_H
#define VGPU_BENCH_KERNELS_H

static const char alu_src_fmt[] =
	".kernel alu\n"
	".param ptr out\n"
	"    S2R R0, SR_TID.X ;\n"
	"    MOV R1, 0x0 ;\n"		/* i */
	"    MOV R4, R0 ;\n"		/* x = tid */
	"    MOV R9, 0x1 ;\n"		/* y = 1 */
	"    MOV R10, 0x3c6ef35f ;\n"	/* 1013904223 */
	"    I2F.U32 R5, R0 ;\n"	/* f = (float)tid */
	"    MOV R7, R5 ;\n"		/* g = f */
	"    MOV R6, 0x3f000000 ;\n"	/* 0.5f */
	"    MOV R8, 0x0 ;\n"		/* h = 0.0f */
	"loop:\n"
	"    IMAD R4, R4, 0x19660d, R0 ;\n"
	"    IMAD R9, R9, R4, R10 ;\n"
	"    FFMA R5, R5, R6, R7 ;\n"
	"    FFMA R8, R8, R6, R5 ;\n"
	"    IADD R1, R1, 0x1 ;\n"
	"    ISETP.LT.U32 P0, R1, 0x%x ;\n"
	"@P0 BRA loop ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    S2R R12, SR_CTAID.X ;\n"	/* each CTA's 4 KiB of out */
	"    SHL R12, R12, 0xc ;\n"
	"    IADD R2, R2, R12 ;\n"
	"    SHL R11, R0, 0x4 ;\n"
	"    IADD R2, R2, R11 ;\n"
	"    STG.32 [R2], R4 ;\n"
	"    IADD R2, R2, 0x4 ;\n"
	"    STG.32 [R2], R9 ;\n"
	"    IADD R2, R2, 0x4 ;\n"
	"    STG.32 [R2], R5 ;\n"
	"    IADD R2, R2, 0x4 ;\n"
	"    STG.32 [R2], R8 ;\n"
	"    EXIT ;\n";

/* warp-instructions per warp of alu_src_fmt with N iterations */
#define ALU_WARP_INSNS(n) (23ull + 7ull * (n))

/* %s: "BAR.SYNC 0x0" or "NOP"; out[1024 ctaid + tid] = 3 * rounds. */
static const char bar_src_fmt[] =
	".kernel bar\n"
	".param ptr out\n"
	"    S2R R0, SR_TID.X ;\n"
	"    MOV R1, 0x0 ;\n"
	"    MOV R4, 0x0 ;\n"
	"loop:\n"
	"    IADD R4, R4, 0x3 ;\n"
	"    IADD R1, R1, 0x1 ;\n"
	"    ISETP.LT.U32 P0, R1, 0x%x ;\n"
	"    %s ;\n"
	"@P0 BRA loop ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    S2R R6, SR_CTAID.X ;\n"	/* each CTA's 4 KiB of out */
	"    SHL R6, R6, 0xc ;\n"
	"    IADD R2, R2, R6 ;\n"
	"    SHL R5, R0, 0x2 ;\n"
	"    IADD R2, R2, R5 ;\n"
	"    STG.32 [R2], R4 ;\n"
	"    EXIT ;\n";

/* warp-instructions per warp of bar_src_fmt with N rounds */
#define BAR_WARP_INSNS(n) (12ull + 5ull * (n))

#endif
