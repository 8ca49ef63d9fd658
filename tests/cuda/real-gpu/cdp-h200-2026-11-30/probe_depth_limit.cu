// How deep device-side launches nest on an H200, and what
// cudaLimitDevRuntimePendingLaunchCount reads after setting it.
// nvcc -rdc=true -arch=sm_90a -o p probe_depth_limit.cu && ./p
#include <cstdio>
__global__ void nest(int *depths, int d)
{
	depths[d] = d;
	if (d < 40) {
		nest<<<1, 1>>>(depths, d + 1);
		depths[64 + d] = cudaGetLastError();
	}
}
int main()
{
	int *d, h[128];
	size_t lim = 0;
	cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount);
	printf("pending limit default %zu\n", lim);
	for (size_t want : {1, 2, 3, 4, 5, 8, 31, 32, 33, 100, 2048, 65536, 100000}) {
		cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, want);
		cudaDeviceGetLimit(&lim, cudaLimitDevRuntimePendingLaunchCount);
		printf("set %zu -> %s, reads %zu\n", want, cudaGetErrorName(e), lim);
	}
	cudaDeviceGetLimit(&lim, cudaLimitDevRuntimeSyncDepth);
	printf("sync depth limit %zu\n", lim);
	cudaMalloc(&d, sizeof(h));
	cudaMemset(d, 0xff, sizeof(h));
	nest<<<1, 1>>>(d, 0);
	printf("sync %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
	cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
	for (int i = 0; i <= 40; i++)
		printf("depth %d: ran %d, its launch %d\n", i, h[i], h[64 + i]);
	return 0;
}
