#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) child(int *out)
{
	unsigned r, n, cx, ncx;
	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
	asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cx));
	asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(ncx));
	if (threadIdx.x == 0) {
		int b = blockIdx.x;
		out[b * 4 + 0] = r; out[b * 4 + 1] = n; out[b * 4 + 2] = cx; out[b * 4 + 3] = ncx;
	}
	/* a cluster barrier and DSMEM: does the cluster really exist? */
	__shared__ int s;
	cg::cluster_group cl = cg::this_cluster();
	if (threadIdx.x == 0) s = 100 + blockIdx.x;
	cl.sync();
	int *peer = cl.map_shared_rank(&s, r ^ 1);
	if (threadIdx.x == 0) out[64 + blockIdx.x] = *peer;
	cl.sync();
}
__global__ void child2(int *out) { if (threadIdx.x == 0) out[blockIdx.x] = 7; }
__global__ void parent(int *out, int *err, int g)
{
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		child<<<g, 32>>>(out);
		err[0] = cudaGetLastError();
	}
}
int main()
{
	int *out, *err, h[128], e;
	cudaMalloc(&out, 512); cudaMalloc(&err, 16);
	for (int g = 4; g >= 3; g--) {
		cudaMemset(out, 0xff, 512); cudaMemset(err, 0xff, 16);
		parent<<<1, 1>>>(out, err, g);
		int rc = cudaDeviceSynchronize();
		printf("grid %d: sync %d (%s)\n", g, rc, cudaGetErrorName((cudaError_t)rc));
		if (rc) { cudaGetLastError(); break; }
		cudaMemcpy(h, out, 512, cudaMemcpyDeviceToHost);
		cudaMemcpy(&e, err, 4, cudaMemcpyDeviceToHost);
		printf("  device err %d (%s)\n", e, cudaGetErrorName((cudaError_t)e));
		for (int b = 0; b < g; b++)
			printf("  cta %d: rank %d nrank %d clusterid %d nclusterid %d peer %d\n", b,
			       h[b * 4], h[b * 4 + 1], h[b * 4 + 2], h[b * 4 + 3], h[64 + b]);
	}
	return 0;
}
