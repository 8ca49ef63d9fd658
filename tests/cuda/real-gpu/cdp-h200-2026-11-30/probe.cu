#include <cstdio>
__device__ int ctr;
__global__ void rec(int *log, int tag) { if (threadIdx.x == 0 && blockIdx.x == 0) log[atomicAdd(&ctr, 1)] = tag; }
__global__ void bad(int *log) { log[60] = 1; }
__global__ void parent(int *log, int *errs)
{
	rec<<<1, 1, 0, cudaStreamTailLaunch>>>(log, 100);
	rec<<<1, 1>>>(log, 1);
	rec<<<1, 1, 0, cudaStreamTailLaunch>>>(log, 101);
	rec<<<1, 1>>>(log, 2);
	rec<<<1, 1, 0, cudaStreamFireAndForget>>>(log, 50);
	log[atomicAdd(&ctr, 1)] = 999;
	errs[0] = cudaGetLastError();
	bad<<<1, 2048>>>(log);
	errs[1] = cudaPeekAtLastError();
	errs[2] = cudaGetLastError();
	errs[3] = cudaGetLastError();
	bad<<<dim3(1, 1, 0), 1>>>(log);
	errs[4] = cudaGetLastError();
	bad<<<1, 32, 1 << 20>>>(log);
	errs[5] = cudaGetLastError();
}
__global__ void pend(int *log, int *errs, int n)
{
	for (int i = 0; i < n; i++) {
		rec<<<1, 1>>>(log, i);
		errs[i] = cudaGetLastError();
	}
}
int main()
{
	int *log, *errs, h[64], e[64];
	cudaMalloc(&log, 256); cudaMalloc(&errs, 256);
	cudaMemset(log, 0xff, 256); cudaMemset(errs, 0xff, 256);
	parent<<<1, 1>>>(log, errs);
	printf("parent sync %d\n", (int)cudaDeviceSynchronize());
	cudaMemcpy(h, log, 256, cudaMemcpyDeviceToHost); cudaMemcpy(e, errs, 256, cudaMemcpyDeviceToHost);
	printf("log:"); for (int i = 0; i < 10; i++) printf(" %d", h[i]); printf(" bad=%d\nerrs:", h[60]);
	for (int i = 0; i < 6; i++) printf(" %d", e[i]); printf("\n");
	size_t lim = 0; cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount);
	printf("default pending limit %zu\n", lim);
	printf("setlimit %d\n", (int)cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4));
	int z = 0; cudaMemcpyToSymbol(ctr, &z, 4);
	cudaMemset(errs, 0xff, 256);
	pend<<<1, 1>>>(log, errs, 8);
	printf("pend sync %d\n", (int)cudaDeviceSynchronize());
	cudaMemcpy(e, errs, 256, cudaMemcpyDeviceToHost);
	printf("pend errs:"); for (int i = 0; i < 8; i++) printf(" %d", e[i]); printf("\n");
	cudaMemcpyFromSymbol(&z, ctr, 4); printf("pend ran %d\n", z);
	return 0;
}
