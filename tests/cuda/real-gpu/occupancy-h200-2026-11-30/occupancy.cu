// SPDX-License-Identifier: MIT
#include <cuda.h>
#include <cstdio>
#define N 200
#define U _Pragma("unroll")for(int i=0;i<N;i++)
template<int S>__device__ void b(float*o,int n){float a[N],t=0;U a[i]=o[i*n+threadIdx.x];for(int j=0;j<n;j++)U a[i]=a[i]*a[(i+1)%N]+a[(i+7)%N];U t+=a[i];
if(S){__shared__ float s[S/4+1];s[threadIdx.x%(S/4+1)]=t;__syncthreads();t+=s[(threadIdx.x+1)%(S/4+1)];}o[threadIdx.x]=t;}
#define K(i,s,l) extern "C" __global__ void l k##i(float*o,int n){b<s>(o,n);}
K(0,0,)K(1,1,)K(2,1020,)K(3,49148,)K(4,0,__launch_bounds__(256))K(5,96,__launch_bounds__(96))
#define P printf
#define A(a) (cuFuncGetAttribute(&v,CU_FUNC_ATTRIBUTE_##a,f),v)
#define X(e) P("%d ",(int)(e))
#define Y(e,n) X((q=e)?-q:n)
#define O(a,...) cuOccupancy##a(__VA_ARGS__)
#define F(a,...) for(auto a:{__VA_ARGS__})
size_t c1(int b){return b*64;}
int main(){CUdevice d;CUcontext c;CUmodule m;CUfunction f;int v,n,g,q;size_t z;cuInit(0);cuDeviceGet(&d,0);cuDevicePrimaryCtxRetain(&c,d);cuCtxSetCurrent(c);
static char p[1<<22];p[fread(p,1,1<<22,fopen("k.ptx","r"))]=0;
for(int r=0;r<256;r+=r?13:16){CUjit_option o=CU_JIT_MAX_REGISTERS;void*w=(void*)(size_t)r;cuModuleLoadDataEx(&m,p,r?1:0,&o,&w);
for(int k=0;k<6;k++){char s[4];sprintf(s,"k%d",k);cuModuleGetFunction(&f,m,s);int sh=A(SHARED_SIZE_BYTES);
P("K %d %d %d %d %d %d\n",k,r,A(NUM_REGS),sh,A(MAX_THREADS_PER_BLOCK),A(MAX_DYNAMIC_SHARED_SIZE_BYTES));
for(int st=0;st<(r%3?2:20);st++){int cv=st/2;cuFuncSetCacheConfig(f,(CUfunc_cache)(cv<4?cv:0));
if(cv>3)cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,"\0\n\31\62\74\144"[cv-4]);
cuFuncSetAttribute(f,CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,(st&1?232448:49152)-sh);P("S %d %d\n",st,A(MAX_DYNAMIC_SHARED_SIZE_BYTES));
for(int b=1;b<1056;b+=31){P("O %d ",b);F(e,0,1,1024,49152,102400,232448)F(l,0,1){n=-1;Y(O(MaxActiveBlocksPerMultiprocessorWithFlags,&n,f,b,e,l),n);}P("\n");}
F(e,0,1,1024,49152,102400,232448){P("P %d ",e);F(L,0,200){Y(O(MaxPotentialBlockSize,&g,&n,f,0,e,L),n);X(g);}P("\n");}
P("C ");F(L,0,200){Y(O(MaxPotentialBlockSizeWithFlags,&g,&n,f,c1,0,L,1),n);X(g);}P("\n");
F(u,1,2,3,4,5,7,8,16,32,33){P("A %d ",u);F(b,32,128,256,1000,1024)Y(O(AvailableDynamicSMemPerBlock,&z,f,u,b),z);P("\n");}}}cuModuleUnload(m);}
cuDriverGetVersion(&v);P("V %d\n",v);F(a,1,8,12,16,39,81,82,97,106,111)cuDeviceGetAttribute(&v,(CUdevice_attribute)a,d),P("D %d %d\n",a,v);}
