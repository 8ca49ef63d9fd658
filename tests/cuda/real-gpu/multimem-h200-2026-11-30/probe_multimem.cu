#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
__global__ void k_ld(unsigned *p, unsigned *out) {
  unsigned v;
  asm volatile("multimem.ld_reduce.relaxed.sys.global.add.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  out[threadIdx.x] = v;
}
__global__ void k_st(unsigned *p) {
  asm volatile("multimem.st.relaxed.sys.global.u32 [%0], %1;" :: "l"(p + threadIdx.x), "r"(7u) : "memory");
}
__global__ void k_red(unsigned *p) {
  asm volatile("multimem.red.relaxed.sys.global.add.u32 [%0], %1;" :: "l"(p), "r"(1u) : "memory");
}
__global__ void k_nwarp(unsigned *o) { unsigned a; asm("mov.u32 %0, %%nwarpid;" : "=r"(a)); o[0]=a; }
static void run(const char *name, int which) {
  unsigned *p, *o; cudaMalloc(&p, 4096); cudaMalloc(&o, 4096);
  cudaMemset(p, 0, 4096); cudaMemset(o, 0xff, 4096);
  cudaDeviceSynchronize();
  if (which == 0) k_ld<<<1, 32>>>(p, o);
  if (which == 1) k_st<<<1, 32>>>(p);
  if (which == 2) k_red<<<1, 32>>>(p);
  cudaError_t e1 = cudaGetLastError();
  cudaError_t e2 = cudaDeviceSynchronize();
  unsigned h[4] = {0}, g[4] = {0};
  cudaMemcpy(h, p, 16, cudaMemcpyDeviceToHost); cudaMemcpy(g, o, 16, cudaMemcpyDeviceToHost);
  printf("%s: launch %d (%s) sync %d (%s) p=%x %x out=%x %x\n", name, e1, cudaGetErrorName(e1), e2, cudaGetErrorName(e2), h[0], h[1], g[0], g[1]);
}
int main(int argc, char **argv) {
  int which = atoi(argv[1]);
  int dev = 0, v = -1;
  cuInit(0);
  cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, dev);
  printf("MULTICAST_SUPPORTED=%d\n", v);
  if (which == 3) {
    CUmulticastObjectProp prop = {}; prop.numDevices = 1; prop.size = 2 << 20; prop.handleTypes = CU_MEM_HANDLE_TYPE_NONE;
    size_t gran = 0; CUresult r = cuMulticastGetGranularity(&gran, &prop, CU_MULTICAST_GRANULARITY_MINIMUM);
    printf("granularity r=%d gran=%zu\n", r, gran);
    CUmemGenericAllocationHandle h; r = cuMulticastCreate(&h, &prop); printf("create r=%d\n", r);
    unsigned *o; cudaMalloc(&o, 64); k_nwarp<<<1,1>>>(o); unsigned x; cudaMemcpy(&x, o, 4, cudaMemcpyDeviceToHost); printf("nwarpid=%u\n", x);
    return 0;
  }
  run(which == 0 ? "ld_reduce" : which == 1 ? "st" : "red", which);
  return 0;
}
