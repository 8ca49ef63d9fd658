// SPDX-License-Identifier: MIT
// Real calls (docs/ptx.md "Calls"): recursion whose depth differs per
// thread (divergent recursion), a 12-byte structure passed and returned by
// value, a recursive function called from one side of a divergent branch.
#include "cuda_min.h"

#define NOINLINE extern "C" __device__ __attribute__((noinline))

struct s3 {
	u32 a, b, c;
};

NOINLINE u32 fib(u32 n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

NOINLINE struct s3 rot(struct s3 s, u32 k)
{
	struct s3 r = { s.b + k, s.c * k, s.a ^ k };

	return r;
}

NOINLINE u32 sum_down(u32 n, u32 acc)
{
	return n ? sum_down(n - 1, acc + n * n) + 1 : acc;
}

extern "C" __global__ void recurse(u32 *out, u32 k)
{
	u32 i = ctaid_x() * ntid_x() + tid_x();
	struct s3 s = { i, i + 1, i + 2 };
	struct s3 r = rot(s, k);
	u32 v = fib(i % 13);

	if (i & 1)
		v += sum_down(i % 17, k);
	out[4 * i] = v;
	out[4 * i + 1] = r.a;
	out[4 * i + 2] = r.b;
	out[4 * i + 3] = r.c;
}
