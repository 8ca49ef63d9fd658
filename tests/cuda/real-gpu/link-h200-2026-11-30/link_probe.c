// SPDX-License-Identifier: MIT
/*
 * The cuLink* cases of tests/unit/test_cuda_link.c on a real GPU: return
 * codes and error logs of NVIDIA's driver (see README.md: no result yet).
 * Build: nvcc -o link_probe link_probe.c -lcuda
 */
#include <cuda.h>
#include <stdio.h>
#include <string.h>
#define H ".version 8.0\n.target sm_90a\n.address_size 64\n"
#define K ".extern .func (.param .b32 r) tw(.param .b32 x);\n.extern .global .align 4 .u32 cnt;\n.visible .entry k(.param .u64 p){.reg .b32 %r<3>;.reg .b64 %d;ld.param.u64 %d,[p];mov.u32 %r1,7;{.param .b32 a;.param .b32 b;st.param.b32 [a],%r1;call (b),tw,(a);ld.param.b32 %r2,[b];}st.global.u32 [%d],%r2;ld.global.u32 %r1,[cnt];st.global.u32 [%d+4],%r1;ret;}\n"
#define TW(L,M) #L " .func (.param .b32 r) tw(.param .b32 x){.reg .b32 %q;ld.param.b32 %q,[x];mul.lo.u32 %q,%q," #M ";st.param.b32 [r],%q;ret;}\n"
#define CV(L,I) #L " .global .align 4 .u32 cnt = " #I ";\n"
#define P CU_JIT_INPUT_PTX
const char *A = H K, *B = H TW(.visible,2) CV(.visible,5);
char el[4096];
CUmodule L(const char *t, int y, int n, const char **s) {
  CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *v[2] = {el, (void *)4096}; CUlinkState ls; el[0] = 0;
  printf("%s: create %d add", t, cuLinkCreate(2, o, v, &ls));
  for (int i = 0; i < n; i++) printf(" %d", cuLinkAddData(ls, y, (void *)s[i], strlen(s[i]) + 1, "m", 0, 0, 0));
  void *img = 0; size_t sz = 0; int rc = cuLinkComplete(ls, &img, &sz);
  CUmodule m = 0; int rl = rc ? -1 : (int)cuModuleLoadData(&m, img);
  printf(" complete %d load %d err<%s>\n", rc, rl, el);
  cuLinkDestroy(ls); if (!m) return 0;
  CUfunction f; CUdeviceptr d, g; size_t gs = 0; unsigned h[2] = {0, 0};
  cuModuleGetFunction(&f, m, "k"); cuMemAlloc(&d, 8); void *a[] = {&d};
  int e = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, a, 0); e = e ? e : (int)cuCtxSynchronize();
  cuMemcpyDtoH(h, d, 8); int rg = cuModuleGetGlobal(&g, &gs, m, "cnt");
  printf(" run %d: tw(7)=%u cnt=%u global %d size %zu\n", e, h[0], h[1], rg, gs); return m;
}
int main() {
  setvbuf(stdout, NULL, _IONBF, 0); /* the first run crashed with its output still buffered */
  CUdevice dv; CUcontext c; cuInit(0); cuDeviceGet(&dv, 0); cuDevicePrimaryCtxRetain(&c, dv); cuCtxSetCurrent(c);
  const char *ok[] = {A, B}; L("ok", P, 2, ok); L("undef", P, 1, ok);
  const char *uv[] = {A, H TW(.visible,2)}; L("undefvar", P, 2, uv);
  const char *dup[] = {A, B, B}; L("dup", P, 3, dup);
  const char *wk[] = {H TW(.weak,3) CV(.weak,9), A, B, H TW(.weak,4)}; L("weak", P, 4, wk);
  const char *w2[] = {A, H TW(.weak,3) CV(.weak,9), H TW(.weak,4) CV(.weak,8)}; L("weak2", P, 3, w2);
  const char *cm[] = {A, H TW(.visible,2) ".common .global .align 4 .u32 cnt;\n", H ".common .global .align 8 .u64 cnt;\n"}; L("common", P, 3, cm);
  const char *mm[] = {H ".extern .global .align 4 .b8 cnt[8];\n.visible .entry k(){ret;}\n", B}; L("sizemis", P, 2, mm);
  static char junk[4096] = "not an image"; /* no ELF magic: the driver may read a header past a short buffer */
  const char *bad[] = {junk}; L("cubin", CU_JIT_INPUT_CUBIN, 1, bad); L("lib", CU_JIT_INPUT_LIBRARY, 1, bad); L("obj", CU_JIT_INPUT_OBJECT, 1, bad); L("fatbin", CU_JIT_INPUT_FATBINARY, 1, bad);
  const char *sy[] = {H ".visible .entry k(){ bogus.u32 %r1; }\n"}; L("syntax", P, 1, sy); L("none", P, 0, ok);
  CUmodule m; printf("loadA %d\n", cuModuleLoadData(&m, A));
  return 0;
}
