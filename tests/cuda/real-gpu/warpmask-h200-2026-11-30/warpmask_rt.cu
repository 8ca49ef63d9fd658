// Member masks the compiler cannot see (read from memory): which ones make
// the H200 raise an error, and what the others compute.  One process per
// case.  nvcc -arch=sm_90a -o wr warpmask_rt.cu && ./wr
#include <cstdio>
#include <unistd.h>
#include <sys/wait.h>
__global__ void k(int op, const unsigned *masks, unsigned *out) {
  unsigned l = threadIdx.x, r = 0xdead, m = masks[l];
  switch (op) {
  case 0: asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(l), "r"(m)); break;
  case 1: asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, %2;" : "=r"(r) : "r"(l + 100), "r"(m)); break;
  case 2: asm volatile("{.reg .pred p; setp.ne.u32 p, %1, 3; vote.sync.ballot.b32 %0, p, %2;}" : "=r"(r) : "r"(l), "r"(m)); break;
  case 3: asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(l & 3), "r"(m)); break;
  case 4: asm volatile("bar.warp.sync %0;" :: "r"(m)); r = 1; break;
  case 5: asm volatile("{.reg .pred p; elect.sync %0|p, %1;}" : "=r"(r) : "r"(m)); break;
  }
  out[l] = r;
}
int main() {
  const char *ops[] = {"redux.add", "shfl.idx 0", "vote.ballot", "match.any", "bar.warp.sync", "elect"};
  const char *ms[] = {"all 0xffff", "all 0xfffffffe", "halves own", "each 1<<lane", "low 0xffff high full", "7*lane+1", "all full", "all 0", "lane0 full others 0xfffffffe"};
  for (int mc = 0; mc < 9; mc++) for (int op = 0; op < 6; op++) {
    if (fork() == 0) {
      alarm(20);
      unsigned hm[32], h[32], *d, *dm;
      for (unsigned l = 0; l < 32; l++) {
        unsigned v[] = {0xffffu, 0xfffffffeu, l < 16 ? 0xffffu : 0xffff0000u, 1u << l, l < 16 ? 0xffffu : ~0u, 7 * l + 1, ~0u, 0u, l ? 0xfffffffeu : ~0u};
        hm[l] = v[mc];
      }
      cudaMalloc(&d, 128); cudaMalloc(&dm, 128); cudaMemset(d, 0xff, 128);
      cudaMemcpy(dm, hm, 128, cudaMemcpyHostToDevice);
      k<<<1, 32>>>(op, dm, d);
      cudaError_t e = cudaDeviceSynchronize();
      printf("%s | %s: %s", ms[mc], ops[op], cudaGetErrorName(e));
      if (e == cudaSuccess) { cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost); for (int i = 0; i < 32; i++) printf(" %x", h[i]); }
      printf("\n"); fflush(stdout); _exit(0);
    }
    int st; wait(&st); if (!WIFEXITED(st)) printf("%s | %s: killed by signal %d (hang?)\n", ms[mc], ops[op], WTERMSIG(st)), fflush(stdout);
  }
}
