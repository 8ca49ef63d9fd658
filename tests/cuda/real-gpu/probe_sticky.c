// SPDX-License-Identifier: MIT
// probe_sticky: a fault in one context, then the other context, new contexts and
// device queries (output: probe_sticky.h200.log, NVIDIA H200, driver 580.159.04).
#include <cuda.h>
#include <stdio.h>
#define P(c) printf("%-44s = %d\n", #c, (int)(c))
int main(void){CUcontext a,o,p,c2;CUmodule m;CUfunction f;CUdeviceptr d,d2;CUstream s;int v;size_t fr,t;void*pr[]={&d};
cuInit(0);cuCtxCreate(&a,NULL,0,0);cuCtxCreate(&o,NULL,0,0);cuCtxPopCurrent(&p);
P(cuModuleLoad(&m,"/tmp/k/kernels.ptx"));P(cuModuleGetFunction(&f,m,"fault"));cuMemAlloc(&d,256);
P(cuMemFreeHost(NULL));P(cuMemFree(0));
P(cuLaunchKernel(f,1,1,1,32,1,1,0,NULL,pr,NULL));P(cuCtxSynchronize());
P(cuMemGetInfo(&fr,&t));P(cuModuleGetFunction(&f,m,"saxpy"));P(cuMemFree(d));P(cuModuleUnload(m));
P(cuCtxPushCurrent(o));P(cuMemAlloc(&d2,16));P(cuStreamCreate(&s,0));P(cuCtxPopCurrent(&p));
P(cuCtxCreate(&c2,NULL,0,0));P(cuCtxDestroy(o));P(cuCtxDestroy(a));
P(cuCtxCreate(&c2,NULL,0,0));P(cuDevicePrimaryCtxRetain(&c2,0));P(cuDeviceGetCount(&v));P(cuDriverGetVersion(&v));return 0;}
