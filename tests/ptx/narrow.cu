// SPDX-License-Identifier: MIT
// 16-bit integer instructions whose results depend on the bits above 16
// (registers hold 16-bit values with any upper bits after add or mul):
// compares, right shifts, min/max, division, widening multiplies.
#include "cuda_min.h"

#define OP16(out, body)                                                        \
	asm("{ .reg .b16 a, b, c, e; .reg .pred p;\n"                          \
	    " cvt.u16.u32 a, %1; cvt.u16.u32 b, %2; add.u16 c, a, b;\n" body   \
	    "}" : "=r"(out) : "r"(x), "r"(y), "r"(x + y))

extern "C" __global__ void narrow(u32 *out, const u32 *in)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	u32 x = in[2 * i], y = in[2 * i + 1], *o = out + i * 16;

	OP16(o[0], " setp.lt.u16 p, c, a; selp.u32 %0, 1, 0, p;\n");
	OP16(o[1], " setp.lt.s16 p, c, 0; selp.u32 %0, 1, 0, p;\n");
	OP16(o[2], " shr.u16 c, c, 3; cvt.u32.u16 %0, c;\n");
	OP16(o[3], " shr.s16 c, c, 3; cvt.s32.s16 %0, c;\n");
	OP16(o[4], " min.s16 c, c, b; cvt.s32.s16 %0, c;\n");
	OP16(o[5], " max.u16 c, c, b; cvt.u32.u16 %0, c;\n");
	OP16(o[6], " or.b16 b, b, 1; and.b16 b, b, 0x7fff; div.s16 c, c, b;"
		   " cvt.s32.s16 %0, c;\n");
	OP16(o[7], " or.b16 b, b, 1; rem.u16 c, c, b; cvt.u32.u16 %0, c;\n");
	OP16(o[8], " mul.wide.s16 %0, c, b;\n");
	OP16(o[9], " mul.wide.u16 %0, c, b;\n");
	OP16(o[10], " mad.wide.u16 %0, c, b, %2;\n");
	OP16(o[11], " cvt.u16.u32 e, %3; setp.eq.u16 p, c, e; selp.u32 %0, 1, 0, p;\n");
	OP16(o[12], " mul.lo.s16 c, c, -21845; setp.lt.u16 p, c, 21846;"
		    " selp.u32 %0, 1, 0, p;\n");
	OP16(o[13], " setp.gt.s16 p, c, -3; selp.u32 %0, 1, 0, p;\n");
	OP16(o[14], " mul.hi.s16 c, c, b; cvt.s32.s16 %0, c;\n");
	OP16(o[15], " mul.hi.u16 c, c, b; cvt.u32.u16 %0, c;\n");
}
