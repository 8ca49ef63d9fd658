// SPDX-License-Identifier: MIT
// Every PTX float comparison, ordered and unordered, on f32 and f64,
// with NaN, infinities and signed zeros; and a combined (.and) form.
#include "cuda_min.h"

#define CMP(ty, reg, c)                                                         \
	asm("{ .reg .pred p; setp." #c "." #ty " p, %1, %2; selp.u32 %0, 1, 0, p; }" \
	    : "=r"(r) : reg(a), reg(b));                                       \
	m |= r << k++;

#define ALL(ty, reg)                                                            \
	CMP(ty, reg, eq) CMP(ty, reg, ne) CMP(ty, reg, lt) CMP(ty, reg, le)      \
	CMP(ty, reg, gt) CMP(ty, reg, ge) CMP(ty, reg, equ) CMP(ty, reg, neu)    \
	CMP(ty, reg, ltu) CMP(ty, reg, leu) CMP(ty, reg, gtu) CMP(ty, reg, geu)  \
	CMP(ty, reg, num) CMP(ty, reg, nan)

extern "C" __global__ void fcmp(u32 *out, const float *in, u32 n)
{
	u32 i = ctaid_x() * ntid_x() + tid_x(), r, m = 0, k = 0;

	{
		float a = in[i % n], b = in[i / n];

		ALL(f32, "f")
	}
	{
		double a = in[i % n], b = in[i / n];

		ALL(f64, "d")
	}
	{
		float a = in[i % n], b = in[i / n];

		asm("{ .reg .pred p, q; setp.gt.f32 q, %1, 0f00000000;"
		    " setp.ltu.and.f32 p, %1, %2, q; selp.u32 %0, 1, 0, p; }"
		    : "=r"(r) : "f"(a), "f"(b));
		m |= r << 28;
	}
	out[i] = m;
}
