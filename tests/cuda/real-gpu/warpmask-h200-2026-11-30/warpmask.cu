// Each case in its own process: a warp-synchronous instruction executed by
// lanes whose bit the member mask lacks (and controls).
#include <cstdio>
#include <unistd.h>
#include <sys/wait.h>
__global__ void k(int c, unsigned *out) {
  unsigned l = threadIdx.x, r = 0xdead;
  switch (c) {
  case 0: // redux, every lane runs it, mask = lanes 0..15 only
    asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 1: // redux, lanes 0..15 run it, mask = 0..15 (control)
    if (l < 16) asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 2: // shfl idx, all lanes, mask 0xffff
    asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, %2;" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 3: // shfl idx, lanes 0..15 with 0xffff (control)
    if (l < 16) asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, %2;" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 4: // vote ballot, all lanes, mask 0xffff
    asm volatile("{.reg .pred p; setp.ne.u32 p, %1, 3; vote.sync.ballot.b32 %0, p, %2;}" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 5: // vote any, all lanes, mask 0xffff
    asm volatile("{.reg .pred p; .reg .pred q; setp.ne.u32 p, %1, 3; vote.sync.any.pred q, p, %2; selp.u32 %0, 1, 0, q;}" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 6: // match.any, all lanes, mask 0xffff
    asm volatile("match.any.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(l & 3), "r"(0xffffu)); break;
  case 7: // match.all
    asm volatile("match.all.sync.b32 %0, %1, %2;" : "=r"(r) : "r"(1u), "r"(0xffffu)); break;
  case 8: // bar.warp.sync, all lanes, mask 0xffff
    asm volatile("bar.warp.sync %0;" :: "r"(0xffffu)); r = 1; break;
  case 9: // elect.sync, all lanes, mask 0xffff
    asm volatile("{.reg .pred p; elect.sync %0|p, %1;}" : "=r"(r) : "r"(0xffffu)); break;
  case 10: // shfl bfly, all lanes, mask 0xffff
    asm volatile("shfl.sync.bfly.b32 %0, %1, 1, 0x1f, %2;" : "=r"(r) : "r"(l), "r"(0xffffu)); break;
  case 11: // redux with a constant mask 0xffff, all lanes run it
    asm volatile("redux.sync.add.u32 %0, %1, 0xffff;" : "=r"(r) : "r"(l)); break;
  case 12: // vote.sync.all with a mask missing only lane 31
    asm volatile("{.reg .pred p; .reg .pred q; setp.ne.u32 p, %1, 99; vote.sync.all.pred q, p, %2; selp.u32 %0, 1, 0, q;}" : "=r"(r) : "r"(l), "r"(0x7fffffffu)); break;
  case 13: // shfl with mask 0 from all lanes
    asm volatile("shfl.sync.idx.b32 %0, %1, 0, 0x1f, %2;" : "=r"(r) : "r"(l), "r"(0u)); break;
  case 14: // activemask-based: lanes 0..15 active, mask 0xffffffff redux (lanes 16..31 exited)
    if (l >= 16) return;
    asm volatile("redux.sync.add.u32 %0, %1, %2;" : "=r"(r) : "r"(l), "r"(0xffffffffu)); break;
  case 15: // lanes 0..15 in if, 16..31 in else, both shfl with full mask
    if (l < 16) asm volatile("shfl.sync.idx.b32 %0, %1, 20, 0x1f, %2;" : "=r"(r) : "r"(l), "r"(0xffffffffu));
    else asm volatile("shfl.sync.idx.b32 %0, %1, 3, 0x1f, %2;" : "=r"(r) : "r"(l + 100), "r"(0xffffffffu));
    break;
  case 16: // match.any with mask 0x0000ffff in 2 warps' worth? no: mask missing self in lane 0 only
    asm volatile("shfl.sync.idx.b32 %0, %1, 1, 0x1f, %2;" : "=r"(r) : "r"(l), "r"(0xfffffffeu)); break;
  }
  out[l] = r;
}
int main() {
  const char *nm[] = {"redux all lanes mask 0xffff", "redux lanes<16 mask 0xffff", "shfl.idx all mask 0xffff", "shfl.idx lanes<16 mask 0xffff", "vote.ballot all mask 0xffff", "vote.any all mask 0xffff", "match.any all mask 0xffff", "match.all all mask 0xffff", "bar.warp.sync all mask 0xffff", "elect all mask 0xffff", "shfl.bfly all mask 0xffff", "redux imm mask 0xffff all lanes", "vote.all mask 0x7fffffff all", "shfl mask 0 all", "redux full mask lanes 16+ exited", "shfl full mask both branches", "shfl mask 0xfffffffe all"};
  for (int c = 0; c < 17; c++) {
    if (fork() == 0) {
      alarm(20);
      unsigned *d, h[32]; cudaMalloc(&d, 128); cudaMemset(d, 0xff, 128);
      k<<<1, 32>>>(c, d);
      cudaError_t e = cudaDeviceSynchronize();
      printf("case %d (%s): %s", c, nm[c], cudaGetErrorName(e));
      if (e == cudaSuccess) { cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost); for (int i = 0; i < 32; i++) printf(" %x", h[i]); }
      printf("\n"); fflush(stdout); _exit(0);
    }
    int st; wait(&st); if (!WIFEXITED(st)) printf("case %d: killed (signal %d: hang?)\n", c, WTERMSIG(st)), fflush(stdout);
  }
}
