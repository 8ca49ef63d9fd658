// SPDX-License-Identifier: MIT
// Local memory (a per-thread array indexed by loaded data, which clang
// keeps in .local) and generic addressing (a pointer that is shared for
// odd threads and global for even ones, read, written and atomically
// incremented through the generic state space).
#include "cuda_min.h"

#define N 20

extern "C" __global__ void local_generic(u32 *out, const u32 *idx, u32 n)
{
	__shared__ u32 sh[128];
	u32 t = tid_x(), i = ctaid_x() * ntid_x() + t;
	u32 arr[N], s = 0;

	for (u32 k = 0; k < N; k++)
		arr[k] = i * 31 + k * k;
	for (u32 k = 0; k < 8; k++) {
		u32 j = idx[(i + k) % n] % N;

		arr[j] += s;
		s += arr[(j * 7 + k) % N];
	}
	sh[t] = s;
	out[2 * i + 1] = s ^ 0x5555;
	__syncthreads();
	u32 *p = (t & 1) ? &sh[t ^ 1] : &out[2 * i + 1];
	*p += 5;
	__atomic_fetch_add(p, i, __ATOMIC_RELAXED);
	__syncthreads();
	out[2 * i] = sh[t];
}
