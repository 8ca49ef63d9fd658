#include <cuda.h>
#include <cstdio>
#include <cstring>
#include <cstdint>
#define OP(n,s) __global__ void k_##n(const __grid_constant__ CUtensorMap m,const uint4*src){\
 __shared__ alignas(128) uint4 b[4]; if(threadIdx.x) return; for(int i=0;i<4;i++)b[i]=src[i];\
 asm volatile("fence.proxy.async.shared::cta;");\
 asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta." s ".tile.bulk_group [%0,{%1,%1}],[%2];"::"l"(&m),"r"(0),"r"((unsigned)__cvta_generic_to_shared(b)):"memory");\
 asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group 0;":::"memory");}
OP(add,"add") OP(min,"min") OP(max,"max") OP(inc,"inc") OP(dec,"dec") OP(and,"and")
typedef void(*K)(CUtensorMap,const uint4*);
void run(const char*nm,K k,CUtensorMapDataType t,int es,const uint32_t*g0,const uint32_t*s0){
 void*g,*s; cudaMalloc(&g,64);cudaMalloc(&s,64);cudaMemcpy(g,g0,64,cudaMemcpyHostToDevice);cudaMemcpy(s,s0,64,cudaMemcpyHostToDevice);
 CUtensorMap m; cuuint64_t d[2]={64u/es,1},gs[1]={64}; cuuint32_t bx[2]={64u/es,1},st[2]={1,1};
 int r=cuTensorMapEncodeTiled(&m,t,2,g,d,gs,bx,st,CU_TENSOR_MAP_INTERLEAVE_NONE,CU_TENSOR_MAP_SWIZZLE_NONE,CU_TENSOR_MAP_L2_PROMOTION_NONE,CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
 if(r){printf("%s enc%d\n",nm,r);return;} k<<<1,32>>>(m,(const uint4*)s); cudaError_t e=cudaDeviceSynchronize(); uint32_t o[16]={0};cudaMemcpy(o,g,64,cudaMemcpyDeviceToHost);
 printf("%s t%d enc%d %s:",nm,(int)t,r,cudaGetErrorString(e));for(int i=0;i<16;i++)printf(" %08x",o[i]);printf("\n");}
int main(int c,char**v){cudaFree(0);
 uint32_t fg[16]={0x00011111,0x3f800000,0x7fc00001,0x80000000,0x00400000,0x7f800000,0xff800000,0x00000001,0x3f800000,0,0,0,0,0,0,0};
 uint32_t fs[16]={0x00022222,0x00400000,0x3f800000,0x00000000,0x00400000,0xff800000,0x7f800001,0x80000001,0x33800000,0,0,0,0,0,0,0};
 uint32_t hg[16]={0x3c007e01,0x7c018000,0x00010000,0xfc003c00,0x7fc17f81,0x00018000,0,0,0,0,0,0,0,0,0,0};
 uint32_t hs[16]={0x7e013c00,0x7e000000,0x80010001,0x7e003c01,0x3f800001,0x80018001,0,0,0,0,0,0,0,0,0,0};
 uint32_t ug[16]={5,10,0,7,0xffffffff,3,0,1,2,3,4,5,6,7,8,9}, us[16]={5,3,4,0,0xffffffff,2,0,1,1,1,1,1,1,1,1,1};
 int x=c>1?atoi(v[1]):0;
 switch(x){case 0:run("f32add",k_add,CU_TENSOR_MAP_DATA_TYPE_FLOAT32,4,fg,fs);break;case 1:run("f32ftzadd",k_add,CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,4,fg,fs);break;
 case 2:run("f16min",k_min,CU_TENSOR_MAP_DATA_TYPE_FLOAT16,2,hg,hs);break;case 3:run("f16max",k_max,CU_TENSOR_MAP_DATA_TYPE_FLOAT16,2,hg,hs);break;
 case 4:run("f16add",k_add,CU_TENSOR_MAP_DATA_TYPE_FLOAT16,2,hg,hs);break;case 5:run("bf16add",k_add,CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,2,hg,hs);break;
 case 6:run("bf16min",k_min,CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,2,hg,hs);break;
 case 7:run("u32inc",k_inc,CU_TENSOR_MAP_DATA_TYPE_UINT32,4,ug,us);break;case 8:run("u32dec",k_dec,CU_TENSOR_MAP_DATA_TYPE_UINT32,4,ug,us);break;
 case 9:run("s32min",k_min,CU_TENSOR_MAP_DATA_TYPE_INT32,4,ug,us);break;case 10:run("u64add",k_add,CU_TENSOR_MAP_DATA_TYPE_UINT64,8,ug,us);break;
 case 11:run("s64add",k_add,CU_TENSOR_MAP_DATA_TYPE_INT64,8,ug,us);break;
 case 12:run("s32inc",k_inc,CU_TENSOR_MAP_DATA_TYPE_INT32,4,ug,us);break;
 case 13:run("f64add",k_add,CU_TENSOR_MAP_DATA_TYPE_FLOAT64,8,fg,fs);break;
 case 14:run("u16add",k_add,CU_TENSOR_MAP_DATA_TYPE_UINT16,2,ug,us);break;
 case 15:run("f32and",k_and,CU_TENSOR_MAP_DATA_TYPE_FLOAT32,4,ug,us);break;}
 return 0;}
