#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda/ptx>
#include <cstdio>
#include <unistd.h>
#include <sys/wait.h>
namespace ptx = cuda::ptx;
static bool mk(CUtensorMap *m, CUtensorMapDataType t, size_t es, void *p, int r, const cuuint64_t *d, const cuuint32_t *b) {
  void *fn; cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
  auto e = (PFN_cuTensorMapEncodeTiled_v12000)fn;
  cuuint64_t st[4]; cuuint32_t el[5] = {1,1,1,1,1}; cuuint64_t s = es;
  for (int i = 0; i + 1 < r; i++) { s *= d[i]; st[i] = s; }
  return e(m, t, r, p, d, st, b, el, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == 0;
}
template <class Op, int R> __global__ void k(const __grid_constant__ CUtensorMap m, int x, int y, int z) {
  __shared__ alignas(128) unsigned long long b[64];
  b[threadIdx.x] = threadIdx.x + 1;
  ptx::fence_proxy_async(ptx::space_shared); __syncthreads();
  if (threadIdx.x == 0) {
    int32_t c[3] = {x, y, z};
    if constexpr (R == 2) ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, Op{}, &m, (const int32_t(&)[2])c, b);
    else ptx::cp_reduce_async_bulk_tensor(ptx::space_global, ptx::space_shared, Op{}, &m, c, b);
    ptx::cp_async_bulk_commit_group(); ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>());
  }
}
typedef void (*K)(CUtensorMap, int, int, int);
int main() {
  K ks[] = {k<ptx::op_min_t,2>, k<ptx::op_max_t,2>, k<ptx::op_inc_t,2>, k<ptx::op_dec_t,2>, k<ptx::op_and_op_t,2>, k<ptx::op_or_op_t,2>, k<ptx::op_xor_op_t,2>, k<ptx::op_add_t,2>, k<ptx::op_add_t,3>};
  const char *nm[] = {"min","max","inc","dec","and","or","xor","add","add3d"};
  CUtensorMapDataType ty[] = {CU_TENSOR_MAP_DATA_TYPE_UINT32, CU_TENSOR_MAP_DATA_TYPE_INT32, CU_TENSOR_MAP_DATA_TYPE_UINT64, CU_TENSOR_MAP_DATA_TYPE_INT64};
  int pos[][3] = {{0,0,0},{16,6,0},{-3,-5,0},{6,-1,1}};
  for (int o = 0; o < 9; o++) for (int t = 0; t < 4; t++) for (int p = 0; p < 4; p++) {
    if (fork() == 0) {
      int es = t < 2 ? 4 : 8, r = o == 8 ? 3 : 2; void *g; cudaMalloc(&g, 1 << 16); cudaMemset(g, 0, 1 << 16);
      cuuint64_t d[3] = {24, 12, 3}; cuuint32_t bx[3] = {r == 3 ? 4u : (unsigned)(32 / es), 4, 4};
      CUtensorMap m; bool ok = mk(&m, ty[t], es, g, r, d, bx);
      ks[o]<<<1, 64>>>(m, pos[p][0], pos[p][1], pos[p][2]);
      cudaError_t e = cudaDeviceSynchronize();
      printf("%s type%d pos%d: map %d -> %s\n", nm[o], t, p, ok, cudaGetErrorName(e)); fflush(stdout); _exit(0);
    }
    wait(0);
  }
}
