// SPDX-License-Identifier: MIT
// bfe.u32 / bfe.s32 / bfi.b32 with immediate positions and lengths,
// including the edge cases PTX defines: an empty field, a field running
// past bit 31, a position past bit 31 (the .s32 result is then the sign
// of the source), positions and lengths above 255 (only bits 0-7 count).
#include "cuda_min.h"

#define BFE(ty, pos, len)                                                       \
	do {                                                                    \
		u32 d;                                                          \
		asm("bfe." ty " %0, %1, " #pos ", " #len ";" : "=r"(d) : "r"(a)); \
		out[k++] = d;                                                   \
	} while (0)
#define BFI(pos, len)                                                           \
	do {                                                                    \
		u32 d;                                                          \
		asm("bfi.b32 %0, %1, %2, " #pos ", " #len ";"                   \
		    : "=r"(d) : "r"(a), "r"(b));                                \
		out[k++] = d;                                                   \
	} while (0)
#define ALL(m, ...)                                                             \
	m(__VA_ARGS__ 0, 0); m(__VA_ARGS__ 0, 8); m(__VA_ARGS__ 4, 12);          \
	m(__VA_ARGS__ 28, 8); m(__VA_ARGS__ 31, 1); m(__VA_ARGS__ 0, 32);        \
	m(__VA_ARGS__ 32, 4); m(__VA_ARGS__ 40, 0); m(__VA_ARGS__ 17, 300);      \
	m(__VA_ARGS__ 260, 5)

extern "C" __global__ void bitfield(u32 *out_all, u32 seed)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	u32 a = (i + seed) * 2654435761u, b = ~a * 40503u + i;
	u32 *out = out_all + i * 30;
	int k = 0;

	ALL(BFE, "u32", );
	ALL(BFE, "s32", );
	ALL(BFI, );
}
