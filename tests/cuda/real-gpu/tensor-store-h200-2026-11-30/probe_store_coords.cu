// Tile tensor stores and loads (cp.async.bulk.tensor.2d) of a 24 x 12 map
// (u32 box 8 x 4, u64 box 4 x 4) at coordinates before the tensor, past
// its upper ends and off a 16-byte boundary of a row: which run on an
// H200, and what a store wrote / a load read.  One process per case.
// nvcc -arch=sm_90a -o p probe_store_coords.cu -lcuda && ./p
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda/ptx>
#include <cstdio>
#include <unistd.h>
#include <sys/wait.h>
namespace ptx = cuda::ptx;
static bool mk(CUtensorMap *m, CUtensorMapDataType t, size_t es, void *p, const cuuint64_t *d, const cuuint32_t *b) {
  void *fn; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  auto e = (PFN_cuTensorMapEncodeTiled_v12000)fn;
  cuuint64_t st[1] = {d[0] * es}; cuuint32_t el[2] = {1, 1};
  return e(m, t, 2, p, d, st, b, el, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == 0;
}
__global__ void st(const __grid_constant__ CUtensorMap m, int x, int y) {
  __shared__ alignas(128) unsigned b[32];
  b[threadIdx.x] = 0x100 + threadIdx.x;
  ptx::fence_proxy_async(ptx::space_shared); __syncthreads();
  if (threadIdx.x == 0) {
    int32_t c[2] = {x, y};
    ptx::cp_async_bulk_tensor(ptx::space_global, ptx::space_shared, &m, c, b);
    ptx::cp_async_bulk_commit_group(); ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  }
}
__global__ void ld(const __grid_constant__ CUtensorMap m, int x, int y, unsigned *out) {
  __shared__ alignas(128) unsigned b[32];
  __shared__ alignas(8) uint64_t bar;
  if (threadIdx.x == 0) { ptx::mbarrier_init(&bar, 1); ptx::fence_proxy_async(ptx::space_shared); }
  __syncthreads();
  if (threadIdx.x == 0) {
    int32_t c[2] = {x, y};
    ptx::cp_async_bulk_tensor(ptx::space_shared, ptx::space_global, &b, &m, c, &bar);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, 128);
  }
  while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}
  out[threadIdx.x] = b[threadIdx.x];
}
int main() {
  int pos[][2] = {{0, 0}, {16, 6}, {20, 10}, {17, 0}, {3, 1}, {-3, 0}, {0, -1}, {-4, -2}};
  for (int t = 0; t < 2; t++) for (int load = 0; load < 2; load++) for (int p = 0; p < 8; p++) {
    if (fork() == 0) {
      unsigned es = t ? 8 : 4, *g, *o, h[24 * 12 * 2], ho[32];
      cudaMalloc(&g, sizeof(h)); cudaMalloc(&o, 128);
      for (unsigned i = 0; i < 24 * 12 * 2; i++) h[i] = i;
      cudaMemcpy(g, h, sizeof(h), cudaMemcpyHostToDevice); cudaMemset(o, 0xff, 128);
      cuuint64_t d[2] = {24, 12}; cuuint32_t bx[2] = {32 / es, 4};
      CUtensorMap m; bool ok = mk(&m, t ? CU_TENSOR_MAP_DATA_TYPE_UINT64 : CU_TENSOR_MAP_DATA_TYPE_UINT32, es, g, d, bx);
      if (load) ld<<<1, 32>>>(m, pos[p][0], pos[p][1], o); else st<<<1, 32>>>(m, pos[p][0], pos[p][1]);
      cudaError_t e = cudaDeviceSynchronize();
      printf("%s %s at (%d, %d): map %d -> %s", load ? "load" : "store", t ? "u64" : "u32", pos[p][0], pos[p][1], ok, cudaGetErrorName(e));
      if (!e && load) { cudaMemcpy(ho, o, 128, cudaMemcpyDeviceToHost); for (int i = 0; i < 32; i++) printf(" %x", ho[i]); }
      if (!e && !load) { cudaMemcpy(h, g, sizeof(h), cudaMemcpyDeviceToHost); int n = 0, first = -1; for (unsigned i = 0; i < 24 * 12 * (es / 4); i++) if (h[i] != i) { n++; if (first < 0) first = (int)i; } printf(" words changed %d, first at word %d", n, first); }
      printf("\n"); fflush(stdout); _exit(0);
    }
    wait(0);
  }
}
