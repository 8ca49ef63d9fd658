// SPDX-License-Identifier: MIT
//
// Kernels for the nvcc half of the PTX corpus.  On the accelerator machine
// (the `device` tool; see docs/ptx.md):
//
//   nvcc -arch=sm_90a -O3 -ptx kernels.cu -o kernels.ptx     (the PTX text)
//   nvcc -arch=sm_90a -O3 kernels.cu -o k && ./k > kernels.expected
//
// The host part runs each kernel on the GPU with inputs computed by a
// formula that tests/unit/test_ptx_kernels.c computes too, and prints what the GPU
// wrote: "NAME WORDS" then the 32-bit words in hex.  Both outputs are
// committed; test_ptx_kernels runs kernels.ptx through the front end on both
// backends and compares with the GPU's words.
#include <cstdio>
#include <cstdint>
#include <cuda/barrier>

typedef unsigned int u32;

extern "C" __global__ void nv_saxpy(int *out, const int *x, const int *y, int a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = a * x[i] + y[i];
}

extern "C" __global__ void nv_reduce(u32 *out, const u32 *in)
{
	__shared__ u32 buf[256];
	u32 t = threadIdx.x;

	buf[t] = in[blockIdx.x * 256 + t];
	__syncthreads();
	for (u32 s = 128; s > 0; s >>= 1) {
		if (t < s)
			buf[t] += buf[t + s];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = buf[0];
}

extern "C" __global__ void nv_branches(u32 *out)
{
	u32 i = blockIdx.x * blockDim.x + threadIdx.x + 1;
	u32 x = i, steps = 0;
	unsigned long long acc = 0;

	while (x != 1) {
		x = (x & 1) ? 3 * x + 1 : x >> 1;
		acc = acc * 31 + x;
		steps++;
	}
	out[3 * (i - 1)] = steps;
	out[3 * (i - 1) + 1] = (u32)acc;
	out[3 * (i - 1) + 2] = (u32)(acc >> 32);
}

// Producer/consumer with an mbarrier in inline PTX, as CUTLASS's
// ClusterBarrier does it: thread 0 arrives after writing, the others wait
// on the phase parity.
__device__ static inline u32 smem_u32(const void *p)
{
	return static_cast<u32>(__cvta_generic_to_shared(p));
}

extern "C" __global__ void nv_mbarrier(u32 *out)
{
	__shared__ u32 data[128];
	__shared__ alignas(8) unsigned long long bar;
	u32 t = threadIdx.x;

	if (t == 0)
		asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(&bar)), "r"(1));
	__syncthreads();
	for (u32 round = 0; round < 3; round++) {
		if (t == 0) {
			for (u32 k = 0; k < 128; k++)
				data[k] = k * k + round;
			asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_u32(&bar))
				     : "memory");
		} else {
			asm volatile("{\n .reg .pred P1;\nWAIT:\n"
				     " mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
				     " @!P1 bra WAIT;\n}\n" ::"r"(smem_u32(&bar)), "r"(round & 1)
				     : "memory");
			out[round * 128 + t] = data[t] + data[127 - t];
		}
		__syncthreads();
	}
}

extern "C" __global__ void nv_float(float *out, const float *in, float k)
{
	u32 i = threadIdx.x;
	float x = in[i], y = in[63 - i];

	out[6 * i + 0] = x + y;
	out[6 * i + 1] = x * k;
	out[6 * i + 2] = __fmaf_rn(x, y, k);
	out[6 * i + 3] = fminf(x, y);
	out[6 * i + 4] = (float)(int)(x * 3.0f);
	out[6 * i + 5] = x > 0.5f ? x : -x;
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
	int x[512], y[512];
	u32 in[4 * 256];
	float fin[64];
	int *dout;
	u32 *uout;
	float *fout;

	for (int i = 0; i < 512; i++) {
		x[i] = i * 3 - 700;
		y[i] = 1000 - i * i;
	}
	for (int i = 0; i < 4 * 256; i++)
		in[i] = (u32)i * 2654435761u;
	for (int i = 0; i < 64; i++)
		fin[i] = (float)(i - 20) * 0.37f;

	cudaMalloc(&dout, 512 * 4);
	cudaMemset(dout, 0, 512 * 4);
	nv_saxpy<<<4, 128>>>(dout, upload(x, 512), upload(y, 512), -37, 500);
	dump("nv_saxpy", dout, 512);

	cudaMalloc(&uout, 4 * 4);
	nv_reduce<<<4, 256>>>(uout, upload(in, 4 * 256));
	dump("nv_reduce", uout, 4);

	cudaMalloc(&uout, 3 * 128 * 4);
	nv_branches<<<2, 64>>>(uout);
	dump("nv_branches", uout, 3 * 128);

	cudaMalloc(&uout, 3 * 128 * 4);
	cudaMemset(uout, 0, 3 * 128 * 4);
	nv_mbarrier<<<1, 128>>>(uout);
	dump("nv_mbarrier", uout, 3 * 128);

	cudaMalloc(&fout, 6 * 64 * 4);
	nv_float<<<1, 64>>>(fout, upload(fin, 64), 1.5f);
	dump("nv_float", fout, 6 * 64);

	cudaError_t e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
		return 1;
	}
	return 0;
}
