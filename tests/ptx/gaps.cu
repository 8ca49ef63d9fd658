// SPDX-License-Identifier: MIT
// Issue 31's front-end gaps, one kernel each: %globaltimer and the clocks,
// bar.red and bar.sync/arrive with the barrier and the count in registers,
// clz/popc/bfind, bfe/bfi on 64 bits and with register positions and
// lengths, 64-bit shifts by a register, atom.inc/dec, shfl.sync with b and
// c in registers.  test_ptx_gaps.c computes every result on the host.
#include "cuda_min.h"

DEV u64 gtimer64(void)
{
	u64 t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// out[8 * i ..]: t0, (hi:lo), t1 after a 5000 ns spin, clock64, clock, clock64
extern "C" __global__ void gtimer(u64 *out)
{
	u32 i = tid_x(), lo, hi, c;
	u64 t0 = gtimer64(), t1, c0, c1;

	asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(lo));
	asm volatile("mov.u32 %0, %%globaltimer_hi;" : "=r"(hi));
	do
		t1 = gtimer64();
	while (t1 - t0 < 5000);
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c0));
	asm volatile("mov.u32 %0, %%clock;" : "=r"(c));
	asm volatile("mov.u64 %0, %%clock64;" : "=l"(c1));
	out[8 * i + 0] = t0;
	out[8 * i + 1] = (u64)hi << 32 | lo;
	out[8 * i + 2] = t1;
	out[8 * i + 3] = c0;
	out[8 * i + 4] = c;
	out[8 * i + 5] = c1;
}

#define BAR_RED(op, ty, d, out, a, b, p)                                        \
	asm volatile("{ .reg .pred q, r; setp.ne.u32 q, %3, 0;"                 \
		     " bar.red." op "." ty " " d ", %1, %2, q; " out " }"           \
		     : "=r"(res) : "r"(a), "r"(b), "r"(p) : "memory")
#define POPC "u32", "%0", ""
#define LOGIC "selp.u32 %0, 1, 0, r;"

// 128 threads; id and cnt are parameters (registers): out[6 * t ..]
extern "C" __global__ void bar_regs(u32 *out, u32 id, u32 cnt)
{
	__shared__ u32 buf[64];
	u32 t = tid_x(), res;

	BAR_RED("popc", "u32", "%0", "", id, cnt, t % 3 == 0);
	out[6 * t + 0] = res;
	BAR_RED("and", "pred", "r", LOGIC, id, cnt, t < 200);
	out[6 * t + 1] = res;
	BAR_RED("or", "pred", "r", LOGIC, id + 1, cnt, t == 77);
	out[6 * t + 2] = res;
	BAR_RED("and", "pred", "r", LOGIC, id, cnt, t != 5);
	out[6 * t + 3] = res;
	/* register id with an immediate count, and the reverse */
	asm volatile("{ .reg .pred q; setp.lt.u32 q, %1, 100;"
		     " bar.red.popc.u32 %0, %2, 128, q; }"
		     : "=r"(res) : "r"(t), "r"(id) : "memory");
	out[6 * t + 4] = res;
	/* producer/consumer on barrier id + 2: bar.arrive and bar.sync by registers */
	if (t < 64) {
		buf[t] = t * 3 + 1;
		asm volatile("bar.arrive %0, %1;" ::"r"(id + 2), "r"(cnt) : "memory");
	} else {
		asm volatile("barrier.sync.aligned %0, %1;" ::"r"(id + 2), "r"(cnt) : "memory");
		out[6 * t + 5] = buf[t - 64];
	}
}

// out[24 * i ..]: clz, popc, bfind in every form; bfe/bfi with register
// position and length; 64-bit shifts by a register (amounts up to 100)
extern "C" __global__ void bits(u64 *out, u32 seed)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	u32 a = (i + seed) * 2654435761u >> (i % 32), b = ~a * 40503u + i;
	u64 A = ((u64)(a ^ 0x5bd1e995u) << 32 | b) >> (i % 64), B = (u64)b * 0x9e3779b97f4a7c15ull;
	u32 pos = (i * 7) % 70, len = (i * 13) % 70, sh = (i * 5) % 101;
	u64 *o = out + 24 * i;
	u32 r;
	u64 R;

	if (i % 16 == 0)
		a = 0, A = 0;
	asm("clz.b32 %0, %1;" : "=r"(r) : "r"(a)); o[0] = r;
	asm("clz.b64 %0, %1;" : "=r"(r) : "l"(A)); o[1] = r;
	asm("popc.b32 %0, %1;" : "=r"(r) : "r"(a)); o[2] = r;
	asm("popc.b64 %0, %1;" : "=r"(r) : "l"(A)); o[3] = r;
	asm("bfind.u32 %0, %1;" : "=r"(r) : "r"(a)); o[4] = r;
	asm("bfind.s32 %0, %1;" : "=r"(r) : "r"(a)); o[5] = r;
	asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r) : "r"(a)); o[6] = r;
	asm("bfind.u64 %0, %1;" : "=r"(r) : "l"(A)); o[7] = r;
	asm("bfind.s64 %0, %1;" : "=r"(r) : "l"(A)); o[8] = r;
	asm("bfind.shiftamt.u64 %0, %1;" : "=r"(r) : "l"(A)); o[9] = r;
	asm("bfe.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(pos), "r"(len)); o[10] = r;
	asm("bfe.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(pos), "r"(len)); o[11] = r;
	asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(pos), "r"(len)); o[12] = r;
	asm("bfe.u64 %0, %1, %2, %3;" : "=l"(R) : "l"(A), "r"(pos), "r"(len)); o[13] = R;
	asm("bfe.s64 %0, %1, %2, %3;" : "=l"(R) : "l"(A), "r"(pos), "r"(len)); o[14] = R;
	asm("bfi.b64 %0, %1, %2, %3, %4;" : "=l"(R) : "l"(A), "l"(B), "r"(pos), "r"(len)); o[15] = R;
	asm("bfe.u64 %0, %1, 12, 40;" : "=l"(R) : "l"(A)); o[16] = R;
	asm("bfi.b64 %0, %1, %2, 60, 9;" : "=l"(R) : "l"(A), "l"(B)); o[17] = R;
	asm("shl.b64 %0, %1, %2;" : "=l"(R) : "l"(A), "r"(sh)); o[18] = R;
	asm("shr.u64 %0, %1, %2;" : "=l"(R) : "l"(B), "r"(sh)); o[19] = R;
	asm("shr.s64 %0, %1, %2;" : "=l"(R) : "l"(B), "r"(sh)); o[20] = R;
	asm("shr.s64 %0, %1, %2;" : "=l"(R) : "l"(A | 1ull << 63), "r"(sh)); o[21] = R;
	asm("shl.b64 %0, %1, %2;" : "=l"(R) : "l"(B), "r"(0xffffffe0u + sh)); o[22] = R;
	asm("shr.u64 %0, %1, 64;" : "=l"(R) : "l"(B)); o[23] = R;
}

// atomicInc/atomicDec on shared and global words; out[4 * t ..] the old values
extern "C" __global__ void incdec(u32 *g, u32 *out, u32 bound)
{
	__shared__ u32 s[2];
	u32 t = tid_x(), r;

	if (t == 0)
		s[0] = 0, s[1] = 3;
	__syncthreads();
	asm volatile("atom.shared.inc.u32 %0, [%1], %2;" : "=r"(r) : "r"(smem_addr(&s[0])), "r"(bound)
		     : "memory");
	out[4 * t + 0] = r;
	asm volatile("atom.shared.dec.u32 %0, [%1], %2;" : "=r"(r) : "r"(smem_addr(&s[1])), "r"(bound)
		     : "memory");
	out[4 * t + 1] = r;
	asm volatile("atom.global.inc.u32 %0, [%1], %2;" : "=r"(r) : "l"(g), "r"(bound) : "memory");
	out[4 * t + 2] = r;
	if (t % 2) /* a guarded, generic one */
		asm volatile("atom.dec.u32 %0, [%1], %2;" : "=r"(r) : "l"(g + 1), "r"(bound)
			     : "memory");
	else
		r = 12345;
	out[4 * t + 3] = r;
	__syncthreads();
	if (t == 0)
		g[2] = s[0], g[3] = s[1];
}

// shfl.sync with b and c in registers (c a parameter): out[5 * lane ..]
extern "C" __global__ void shfl_reg(u32 *out, u32 c)
{
	u32 l = tid_x(), v = l * 1000 + 7, b = (l * 3) % 11, r, p;

#define SHFL(m, k)                                                                  \
	asm volatile("{ .reg .pred q; shfl.sync." m ".b32 %0|q, %2, %3, %4, -1;"     \
		     " selp.u32 %1, 1, 0, q; }"                                      \
		     : "=r"(r), "=r"(p) : "r"(v), "r"(b), "r"(c));                   \
	out[10 * l + 2 * k] = r;                                                     \
	out[10 * l + 2 * k + 1] = p
	SHFL("up", 0);
	SHFL("down", 1);
	SHFL("bfly", 2);
	SHFL("idx", 3);
	b += 32; /* only b[4:0] counts */
	SHFL("up", 4);
}
