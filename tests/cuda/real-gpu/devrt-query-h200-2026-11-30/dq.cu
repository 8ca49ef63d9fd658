// Device-side cudaGetDevice, cudaGetDeviceCount, cudaDeviceGetAttribute,
// cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor on
// an H200, beside the host's answers.  nvcc -rdc=true -arch=sm_90a
#include <cstdio>
__global__ void child(int *p) { __shared__ int s[100]; s[threadIdx.x] = 1; p[0] = s[0]; }
__global__ void k(int *out, cudaFuncAttributes *fa, int dev)
{
	int d = -1, n = -1, v = -1, b = -1;
	out[0] = cudaGetDevice(&d);
	out[1] = d;
	out[2] = cudaGetDeviceCount(&n);
	out[3] = n;
	out[4] = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev);
	out[5] = v;
	out[6] = cudaFuncGetAttributes(fa, (void *)child);
	out[7] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, child, 128, 0);
	out[8] = b;
	v = -7;
	out[9] = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 7);
	out[10] = v;
	v = -7;
	out[11] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)9999, 0);
	out[12] = v;
	v = -7;
	out[13] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)0, 0);
	out[14] = v;
	v = -7;
	out[15] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)128, 0);
	out[16] = v;
	out[17] = cudaGetLastError();
	b = -7;
	out[18] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, child, 0, 0);
	out[19] = b;
	b = -7;
	out[20] = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, child, 2048, 0);
	out[21] = b;
	for (int a = 1; a < 150; a++) {
		v = -7;
		int e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, dev);
		out[32 + 2 * a] = e;
		out[33 + 2 * a] = v;
	}
}
int main()
{
	int *out, h[400];
	cudaFuncAttributes *fa, hf, df;
	cudaMalloc(&out, sizeof(h));
	cudaMalloc(&fa, sizeof(*fa));
	cudaMemset(out, 0xff, sizeof(h));
	cudaMemset(fa, 0xee, sizeof(*fa));
	k<<<1, 1>>>(out, fa, 0);
	printf("sync %d\n", (int)cudaDeviceSynchronize());
	cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost);
	cudaMemcpy(&df, fa, sizeof(df), cudaMemcpyDeviceToHost);
	for (int i = 0; i < 22; i++)
		printf("out[%d] = %d\n", i, h[i]);
	cudaFuncGetAttributes(&hf, child);
	const int *di = (const int *)&df, *hi = (const int *)&hf;
	for (unsigned i = 0; i < sizeof(df) / 4; i++)
		printf("funcattr word %u: device %d host %d\n", i, di[i], hi[i]);
	int hb = -1;
	cudaOccupancyMaxActiveBlocksPerMultiprocessor(&hb, child, 128, 0);
	printf("host occupancy %d\n", hb);
	for (int a = 1; a < 150; a++) {
		int hv = -7;
		int he = cudaDeviceGetAttribute(&hv, (cudaDeviceAttr)a, 0);
		cudaGetLastError();
		if (he != h[32 + 2 * a] || hv != h[33 + 2 * a])
			printf("attr %d: device %d/%d host %d/%d\n", a, h[32 + 2 * a], h[33 + 2 * a], he, hv);
	}
	printf("done\n");
	return 0;
}
