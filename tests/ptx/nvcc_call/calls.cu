// SPDX-License-Identifier: MIT
/*
 * Real calls as nvcc 13 emits them (tests/unit/test_ptx_call.c runs each
 * kernel and checks it against the same C on the host).  The Makefile
 * compiles this file at build time with the machine's nvcc:
 *   nvcc -arch=sm_90a -O3 -ptx calls.cu -o calls.ptx
 * What nvcc writes for each construct is in docs/ptx.md "Calls".
 */

/* recursion whose depth differs per thread, with a local array per frame */
__device__ int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__device__ int deep(int n)
{
	volatile int pad[16];

	pad[n & 15] = n * 3;
	return n <= 0 ? pad[0] : deep(n - 1) + pad[n & 15];
}

extern "C" __global__ void call_recursion(int *out, int n)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;

	out[t] = fib(t % 13) + deep(t % 7 + n);
}

/* a deep recursion overflows the 16 KiB call stack: STACK_OVERFLOW */
extern "C" __global__ void call_overflow(int *out, int n)
{
	out[threadIdx.x] = deep(n + threadIdx.x);
}

/* __noinline__ from both sides of a divergent branch */
__device__ __noinline__ int helper(int x, int y)
{
	int r = 0;

	for (int i = 0; i < x; i++)
		r += i * y ^ x;
	return r;
}

extern "C" __global__ void call_noinline(int *out)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;
	int v;

	if (t & 1)
		v = helper(t % 19, 3);
	else
		v = helper(t % 23 + 5, 7) + 1;
	out[t] = v;
}

/* a 12-byte structure passed and returned by value, in a divergent branch */
struct s12 {
	int a, b, c;
};

__device__ __noinline__ s12 mix(s12 s, int k)
{
	s12 r = { s.b + k, s.c * k, s.a ^ k };

	return r;
}

extern "C" __global__ void call_struct(int *out, int k)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;
	s12 s = { t, t + 1, t + 2 };

	if (t % 3)
		s = mix(s, k);
	out[3 * t] = s.a;
	out[3 * t + 1] = s.b;
	out[3 * t + 2] = s.c;
}

/* a table of function pointers in module data, one chosen per thread */
typedef int (*op_t)(int, int);
__device__ __noinline__ int op_add(int a, int b) { return a + b; }
__device__ __noinline__ int op_mul(int a, int b) { return a * b; }
__device__ __noinline__ int op_sub(int a, int b) { return a - b * 3; }
__device__ op_t op_table[3] = { op_add, op_mul, op_sub };

extern "C" __global__ void call_pointer(int *out, const int *in)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;
	op_t f = op_table[t % 3];

	out[t] = f(in[t], t + 1);
}

/* virtual functions: objects built in the kernel, one class per thread */
struct shape {
	__device__ virtual int area(int s) const = 0;
	__device__ virtual ~shape() {}
};

struct square : shape {
	int k;
	__device__ square(int k) : k(k) {}
	__device__ int area(int s) const override { return s * s + k; }
};

struct triangle : shape {
	int k;
	__device__ triangle(int k) : k(k) {}
	__device__ int area(int s) const override { return s * s / 2 - k; }
};

struct circle : shape {
	int k;
	__device__ circle(int k) : k(k) {}
	__device__ int area(int s) const override { return 3 * s * s + (k ^ s); }
};

extern "C" __global__ void call_virtual(int *out)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;
	square sq(t);
	triangle tr(2 * t);
	circle ci(t + 7);
	const shape *s = t % 3 == 0 ? (const shape *)&sq :
			 t % 3 == 1 ? (const shape *)&tr : (const shape *)&ci;

	out[t] = s->area(t % 11 + 3);
}

/* alloca of a size that differs per thread, in the kernel and in a loop */
extern "C" __global__ void call_alloca(int *out, int n)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;
	int s = 0;

	for (int r = 0; r < n; r++) {
		int len = (t + r) % 5 + 1;
		volatile int *a = (volatile int *)__builtin_alloca(len * sizeof(int));

		for (int i = 0; i < len; i++)
			a[i] = i * t + r;
		for (int i = 0; i < len; i++)
			s += a[len - 1 - i] ^ i;
	}
	out[t] = s;
}

/* alloca in a called function: its RET must give the space back */
__device__ __noinline__ int alloca_sum(int x)
{
	int *a = (int *)__builtin_alloca(x * sizeof(int));
	int s = 0;

	for (int i = 0; i < x; i++)
		a[i] = i * i + x;
	for (int i = 0; i < x; i++)
		s += a[x - 1 - i] * (i + 1);
	return s;
}

__device__ int alloca_rec(int x)
{
	int *a = (int *)__builtin_alloca((x + 1) * sizeof(int));

	a[x] = x;
	return x ? alloca_rec(x - 1) + a[x] * alloca_sum(x) : alloca_sum(3);
}

extern "C" __global__ void call_alloca_fn(int *out)
{
	int t = threadIdx.x + blockIdx.x * blockDim.x;

	out[t] = alloca_sum(t % 9 + 1) + alloca_rec(t % 4);
}
