// How deep a chain of device-side launches (each grid launching one child
// into the NULL stream) goes on an H200, under the default pending-launch
// limit and under 65536.  nvcc -rdc=true -arch=sm_90a -o p probe_deep.cu && ./p
#include <cstdio>
#define MAX 5000
__global__ void nest(int *depths, int *errs, int d)
{
	depths[d] = d;
	if (d < MAX - 1) {
		nest<<<1, 1>>>(depths, errs, d + 1);
		errs[d] = cudaGetLastError();
	}
}
int main()
{
	static int h[MAX], e[MAX];
	int *d, *er;
	cudaMalloc(&d, sizeof(h));
	cudaMalloc(&er, sizeof(e));
	for (size_t lim : {(size_t)2048, (size_t)65536}) {
		cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, lim);
		cudaMemset(d, 0xff, sizeof(h));
		cudaMemset(er, 0xff, sizeof(e));
		nest<<<1, 1>>>(d, er, 0);
		cudaError_t s = cudaDeviceSynchronize();
		cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
		cudaMemcpy(e, er, sizeof(e), cudaMemcpyDeviceToHost);
		int deepest = -1, firsterr = -1;
		for (int i = 0; i < MAX; i++) {
			if (h[i] == i) deepest = i;
			if (firsterr < 0 && e[i] != 0 && e[i] != -1) firsterr = i;
		}
		printf("limit %zu: sync %s, deepest grid that ran %d, first failed launch at depth %d (%s)\n",
		       lim, cudaGetErrorName(s), deepest, firsterr,
		       firsterr >= 0 ? cudaGetErrorName((cudaError_t)e[firsterr]) : "-");
		fflush(stdout);
	}
	return 0;
}
