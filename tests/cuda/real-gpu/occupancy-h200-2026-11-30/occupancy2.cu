// SPDX-License-Identifier: MIT
#include <cuda.h>
#include <cstdio>
#define U _Pragma("unroll")for(int i=0;i<200;i++)
#define K(m,l) __global__ void l k##m(float*o,int n){float a[200],t=0;U a[i]=o[i*n+threadIdx.x];for(int j=0;j<n;j++)U a[i]=a[i]*a[(i+1)%200]+a[(i+7)%200];U t+=a[i];o[threadIdx.x]=t;}
K(0,)K(1,__launch_bounds__(1024))K(2,__launch_bounds__(384))K(3,__launch_bounds__(128,3))
__global__ void kb(float*o){asm volatile("bar.sync 15;");*o=1;}__global__ void kc(float*o){asm volatile("bar.sync 2;");*o=1;}
__global__ void __cluster_dims__(2,1,1) kd(float*o){*o=1;}__global__ void ke(float*o){*o=1;}
#define P(...) fprintf(stderr,__VA_ARGS__)
#define X(e) P("%d ",(int)(e))
#define Y(e,n) X((q=e)?-q:n)
#define O(a,...) cuOccupancy##a(__VA_ARGS__)
#define R(a,...) cudaOccupancy##a(__VA_ARGS__)
#define F(a,...) for(auto a:{__VA_ARGS__})
int main(){CUfunction f;int v,n,g,q;size_t z;cudaFree(0);void*H[]={(void*)k0,(void*)k1,(void*)k2,(void*)k3,(void*)kb,(void*)kc,(void*)kd,(void*)ke};
for(int k=0;k<8;k++){void*h=H[k];cudaGetFuncBySymbol(&f,h);cuFuncGetAttribute(&v,CU_FUNC_ATTRIBUTE_NUM_REGS,f);P("K %d %d ",k,v);cuFuncGetAttribute(&v,CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,f);P("%d\n",v);
F(b,1,32,64,96,128,256,512,1024)F(e,0,1024,49152){P("R %d %d ",b,e);Y(R(MaxActiveBlocksPerMultiprocessor,&n,h,b,e),n);Y(O(MaxActiveBlocksPerMultiprocessor,&n,f,b,e),n);
Y(R(AvailableDynamicSMemPerBlock,&z,h,b>32?2:b,e/32+1),z);Y(O(AvailableDynamicSMemPerBlock,&z,f,b>32?2:b,e/32+1),z);P("\n");}
F(e,0,1024,49152){P("Q %d ",e);Y(R(MaxPotentialBlockSize,&g,&n,h,e,0),n);X(g);Y(R(MaxPotentialBlockSizeVariableSMem,&g,&n,h,[](int b){return (size_t)b*64;},0),n);X(g);P("\n");}
cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,200000);
F(np,0,1)F(b,64,128,256,1024)F(e,0,100000,200000){cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,np);CUlaunchAttribute at={CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION};
CUlaunchConfig lc={2112,1,1,(unsigned)b,1,1,(unsigned)e,0,&at,1};P("Z %d %d %d ",np,b,e);F(c,1,2,3,4,8,16){at.value.clusterDim={(unsigned)c,1,1};Y(O(MaxActiveClusters,&n,f,&lc),n);}
lc.numAttrs=0;Y(O(MaxPotentialClusterSize,&n,f,&lc),n);Y(O(MaxActiveClusters,&n,f,&lc),n);Y(O(MaxActiveBlocksPerMultiprocessor,&n,f,b,e),n);P("\n");}}
cudaGetFuncBySymbol(&f,(void*)k1);P("E ");X(O(MaxActiveBlocksPerMultiprocessor,0,f,32,0));X(O(MaxActiveBlocksPerMultiprocessor,&n,0,32,0));
F(b,0,-1,1025)Y(O(MaxActiveBlocksPerMultiprocessor,&n,f,b,0),n);F(l,2,3,256)X(O(MaxActiveBlocksPerMultiprocessorWithFlags,&n,f,32,0,l));Y(O(MaxActiveBlocksPerMultiprocessor,&n,f,32,1<<30),n);
F(u,0,-1,33,64)Y(O(AvailableDynamicSMemPerBlock,&z,f,u,32),z);F(b,0,-1,1025)Y(O(AvailableDynamicSMemPerBlock,&z,f,1,b),z);X(O(AvailableDynamicSMemPerBlock,0,f,1,32));
X(O(MaxPotentialBlockSize,0,&n,f,0,0,0));X(O(MaxPotentialBlockSize,&g,0,f,0,0,0));Y(O(MaxPotentialBlockSize,&g,&n,f,0,0,-1),n);Y(O(MaxPotentialBlockSize,&g,&n,f,0,0,2000),n);
Y(O(MaxPotentialBlockSize,&g,&n,f,0,1<<30,0),n);X(g);X(O(MaxPotentialBlockSizeWithFlags,&g,&n,f,0,0,0,2));X(R(MaxActiveBlocksPerMultiprocessor,&n,(void*)main,32,0));
X(cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,101));X(cuFuncSetCacheConfig(f,(CUfunc_cache)4));
X(cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,232449));P("\nG ");cudaGetFuncBySymbol(&f,(void*)ke);
int T[][3]={{0,0,-9},{2,0,-9},{0,2,-9},{0,2,50},{0,2,-1},{0,2,100},{0,0,0},{0,1,0}};for(auto&t:T){cuCtxSetCacheConfig((CUfunc_cache)t[0]);cuFuncSetCacheConfig(f,(CUfunc_cache)t[1]);if(t[2]>-9)cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,t[2]);
Y(O(MaxActiveBlocksPerMultiprocessor,&n,f,32,1),n);Y(O(MaxPotentialBlockSize,&g,&n,f,0,1,0),n);X(g);}P("\n");}
