// SPDX-License-Identifier: MIT
//
// The second set of nvcc kernels: what the front end learned after the
// first (local memory, device functions, module variables, 16-bit
// arithmetic, warp reductions and elect, f32 -> f64, printf).  On the
// accelerator machine (the `device` tool; see docs/ptx.md):
//
//   nvcc -arch=sm_90a -O3 -ptx kernels2.cu -o kernels2.ptx
//   nvcc -arch=sm_90a -O3 kernels2.cu -o k2 && ./k2 > kernels2.expected
//
// As for kernels.cu: inputs by a formula test_ptx_kernels.c computes too, outputs
// "NAME WORDS" then hex words; nv2_printf's lines come between the
// "printf-begin" and "printf-end" lines (any order between threads).
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>

typedef unsigned int u32;
typedef unsigned long long u64;

// a dynamically indexed per-thread array: local memory
extern "C" __global__ void nv2_local(u32 *out, const u32 *idx)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	u32 a[32], s = 0;

	for (u32 k = 0; k < 32; k++)
		a[k] = i * 7 + k * k;
	for (u32 k = 0; k < 10; k++) {
		u32 j = idx[(i + k) & 63] & 31;

		a[j] ^= s;
		s += a[(j * 5 + k) & 31];
	}
	out[i] = s;
}

__device__ __noinline__ u64 nv2_mix(u32 x, u64 y)
{
	return (y ^ ((u64)x << 17)) * 0x9e3779b97f4a7c15ull;
}

__device__ __noinline__ u32 nv2_fold(u64 v, u32 r)
{
	if (r & 1)
		return (u32)(v >> 32) + r;
	return (u32)v ^ (u32)nv2_mix(r, v);
}

extern "C" __global__ void nv2_calls(u32 *out, u32 n)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	u64 m = nv2_mix(i, (u64)n << 20);

	out[2 * i] = nv2_fold(m, i);
	out[2 * i + 1] = (u32)(nv2_mix(i + 1, m) >> 29);
}

__device__ u32 nv2_table[16] = { 5, 3, 8, 1, 9, 2, 7, 4, 6, 0, 11, 15, 13, 12, 14, 10 };
__constant__ float nv2_ctab[4] = { 0.5f, -1.25f, 3.0f, 1e-3f };
__device__ unsigned short nv2_shorts[6] = { 1, 65535, 300, 40000, 7, 12345 };

extern "C" __global__ void nv2_globals(u32 *out, u32 k)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;

	out[2 * i] = nv2_table[(i + k) & 15] * 1000u + nv2_shorts[i % 6];
	out[2 * i + 1] = __float_as_uint(nv2_ctab[i & 3] * (float)i);
}

extern "C" __global__ void nv2_narrow(u32 *out, const u32 *in)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	unsigned short a = (unsigned short)in[2 * i], b = (unsigned short)in[2 * i + 1];
	short sa = (short)a, sb = (short)b;
	unsigned short c = (unsigned short)(a + b);
	short sc = (short)(sa + sb);

	out[6 * i] = c < a;
	out[6 * i + 1] = (u32)(int)(short)(sc >> 3);
	out[6 * i + 2] = (u32)(c / (unsigned short)(b | 1));
	out[6 * i + 3] = (u32)(int)(sc < sb ? sc : sb);
	out[6 * i + 4] = (u32)((int)sa * (int)sb);
	out[6 * i + 5] = (u32)(unsigned short)(a * 3u + b) % 7u;
}

extern "C" __global__ void nv2_warp(u32 *out, const u32 *in)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;
	u32 a = in[i], lead, is;

	out[8 * i] = __reduce_add_sync(0xffffffffu, a);
	out[8 * i + 1] = __reduce_min_sync(0xffffffffu, a);
	out[8 * i + 2] = (u32)__reduce_max_sync(0xffffffffu, (int)a);
	out[8 * i + 3] = __reduce_or_sync(0xffffffffu, a & 0x0f0f);
	out[8 * i + 4] = __reduce_xor_sync(0xffffffffu, a);
	out[8 * i + 5] = __shfl_up_sync(0xffffffffu, a, 3);
	asm volatile("{ .reg .pred p; elect.sync %0|p, 0xffffffff; selp.u32 %1, 1, 0, p; }"
		     : "=r"(lead), "=r"(is));
	out[8 * i + 6] = lead << 8 | is;
	if (threadIdx.x % 3) {
		asm volatile("{ .reg .pred p; elect.sync %0|p, 0xffffffff; selp.u32 %1, 1, 0, p; }"
			     : "=r"(lead), "=r"(is));
		out[8 * i + 7] = lead << 8 | is;
	} else {
		out[8 * i + 7] = 0xdead;
	}
}

extern "C" __global__ void nv2_cvt64(u64 *out, const float *in)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;

	out[i] = (u64)__double_as_longlong((double)in[i]);
}

extern "C" __global__ void nv2_printf(u32 n)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i % 5 == 0)
		printf("t%u %d %lld %.2f %08x %c|\n", i, -(int)i, -((long long)n << 34) + i,
		       0.25f * (float)i - 3.0f, n * i, 'A' + (int)(i % 26));
	if (i == n - 1)
		printf("last %s [%*u] %%\n", "thread", 5, i);
}

static void dump(const char *name, const void *dev, size_t words)
{
	u32 *h = (u32 *)malloc(words * 4);

	cudaMemcpy(h, dev, words * 4, cudaMemcpyDeviceToHost);
	printf("%s %zu\n", name, words);
	for (size_t i = 0; i < words; i++)
		printf("%08x%c", h[i], i % 8 == 7 || i + 1 == words ? '\n' : ' ');
	free(h);
}

template <typename T> static T *upload(const T *h, size_t n)
{
	T *d;

	cudaMalloc(&d, n * sizeof(T));
	cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice);
	return d;
}

int main()
{
	u32 idx[64], in[256], *out;
	float fin[128];

	for (u32 k = 0; k < 64; k++)
		idx[k] = k * 2654435761u >> 3;
	for (u32 k = 0; k < 256; k++)
		in[k] = k * 2246822519u ^ (k & 4 ? 0x80008000u : 0);
	for (u32 k = 0; k < 128; k++) {
		u32 b = k * 0x9e3779b9u;

		if (k % 8 == 1)
			b &= 0x807fffffu;
		memcpy(&fin[k], &b, 4);
	}

	cudaMalloc(&out, 4096 * 4);
	cudaMemset(out, 0, 4096 * 4);
	nv2_local<<<2, 64>>>(out, upload(idx, 64));
	dump("nv2_local", out, 128);
	nv2_calls<<<2, 64>>>(out, 1000003u);
	dump("nv2_calls", out, 256);
	nv2_globals<<<1, 96>>>(out, 5);
	dump("nv2_globals", out, 192);
	nv2_narrow<<<1, 128>>>(out, upload(in, 256));
	dump("nv2_narrow", out, 768);
	nv2_warp<<<1, 96>>>(out, upload(in, 256));
	dump("nv2_warp", out, 768);
	nv2_cvt64<<<1, 128>>>((u64 *)out, upload(fin, 128));
	dump("nv2_cvt64", out, 256);
	fflush(stdout);
	printf("printf-begin\n");
	fflush(stdout);
	nv2_printf<<<2, 32>>>(50);
	cudaError_t e = cudaDeviceSynchronize();
	fflush(stdout);
	printf("printf-end\n");
	if (e != cudaSuccess) {
		fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
		return 1;
	}
	return 0;
}
