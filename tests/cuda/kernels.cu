// SPDX-License-Identifier: MIT
// Kernels of the driver-API tests (tests/unit/test_cuda.c), compiled by
// nvcc at build time: `nvcc -arch=sm_90a -ptx` for the PTX and `nvcc
// -fatbin -gencode arch=compute_90a,code=[sm_90a,compute_90a]` for the
// fatbin (zstd-compressed PTX beside the SASS).

// y = a * x + y
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] = a * x[i] + y[i];
}

// one partial sum per block: a tree in shared memory with __syncthreads
extern "C" __global__ void reduce_sum(const int *in, int *out, int n)
{
	__shared__ int s[256];
	unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + t;
	int v = 0;

	if (i < n)
		v = in[i];
	if (i + blockDim.x < n)
		v += in[i + blockDim.x];
	s[t] = v;
	__syncthreads();
	for (unsigned int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (t < k)
			s[t] += s[t + k];
		__syncthreads();
	}
	if (t == 0)
		out[blockIdx.x] = s[0];
}

// p[i] = p[i] * mul + add: applied twice in some order, the order shows
extern "C" __global__ void mul_add(int *p, int n, int mul, int add)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = p[i] * mul + add;
}

// dynamic shared memory of n ints: fill, reverse through it, write out
extern "C" __global__ void dyn_reverse(const int *in, int *out, int n)
{
	extern __shared__ int buf[];

	for (int i = threadIdx.x; i < n; i += blockDim.x)
		buf[i] = in[i];
	__syncthreads();
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		out[i] = buf[n - 1 - i];
}

// a module variable: cuModuleGetGlobal finds it
__device__ int counter;
__device__ int table[4] = { 10, 20, 30, 40 };

extern "C" __global__ void bump(int *out)
{
	atomicAdd(&counter, 1);
	if (threadIdx.x < 4)
		out[threadIdx.x] = table[threadIdx.x];
}

// parameters of several sizes and alignments
extern "C" __global__ void params(int *out, int a, long long b, float c, double d,
				  unsigned int e)
{
	out[0] = a;
	out[1] = (int)(b >> 32);
	out[2] = (int)b;
	out[3] = (int)(c * 4.0f);
	out[4] = (int)(d * 8.0);
	out[5] = (int)e;
}

// writes far outside any buffer: an illegal address
extern "C" __global__ void fault(int *p)
{
	p[threadIdx.x + (1 << 28)] = 1;
}

// a 4-byte store at an odd address: misaligned
extern "C" __global__ void misaligned(int *p)
{
	*(int *)((char *)p + 1 + threadIdx.x * 4) = 1;
}

// the order in which the warps' lane 0 take 4 tickets each: the schedule
extern "C" __global__ void warp_order(unsigned int *counter, unsigned int *order)
{
	if ((threadIdx.x & 31) == 0)
		for (int i = 0; i < 4; i++)
			order[atomicAdd(counter, 1u)] = threadIdx.x / 32;
}
