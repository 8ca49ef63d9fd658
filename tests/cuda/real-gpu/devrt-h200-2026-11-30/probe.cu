#include <cstdio>
#include <cstdlib>
#define S cudaStreamCreateWithFlags
#define E cudaEventCreateWithFlags
#define L(x) (int)(size_t)(x)
#define H(x) (int)((size_t)(x)>>32)
__device__ int o[64];
__global__ void c(int*p,int v){*p=v;}
__global__ void w(int*p,int*q){*q=*p+1;}
__global__ void k(int m){
void*p=(void*)0xdead;cudaStream_t s=(cudaStream_t)0xbeef,t;cudaEvent_t e=(cudaEvent_t)0xcafe;
if(m==0){o[0]=cudaMalloc(&p,1<<30);o[1]=L(p);o[2]=H(p);p=(void*)0xdead;o[3]=cudaMalloc(&p,0);o[4]=L(p);o[5]=H(p);
o[6]=cudaFree(0);o[7]=cudaMalloc(&p,64);o[8]=cudaFree(p);o[9]=S(&s,0);o[10]=L(s);o[11]=E(&e,0);o[12]=L(e);
o[13]=S(&s,1);o[14]=E(&e,2);o[16]=cudaStreamWaitEvent(s,e,1);
o[17]=cudaEventRecord(e,0);o[18]=cudaStreamWaitEvent(0,e,0);o[19]=cudaStreamDestroy(0);o[20]=cudaStreamDestroy(s);
o[21]=cudaEventDestroy(e);int d=-1;o[22]=cudaGetDevice(&d);o[23]=d;o[24]=cudaGetDeviceCount(&d);o[25]=d;
o[26]=cudaDeviceGetAttribute(&d,cudaDevAttrMaxThreadsPerBlock,0);o[27]=d;o[28]=cudaDeviceGetAttribute(&d,cudaDevAttrMaxThreadsPerBlock,7);
o[29]=E(&e,3);o[30]=S(&s,3);o[31]=cudaEventDestroy(0);o[32]=cudaGetLastError();cudaFuncAttributes fa;o[33]=cudaFuncGetAttributes(&fa,(const void*)c);o[34]=fa.numRegs;o[35]=fa.maxThreadsPerBlock;o[36]=cudaOccupancyMaxActiveBlocksPerMultiprocessor(&d,c,32,0);o[37]=d;}
if(m==1){S(&s,1);o[0]=cudaStreamDestroy(s);o[1]=cudaStreamDestroy(s);o[2]=cudaGetLastError();}
if(m==2){E(&e,2);o[0]=cudaEventDestroy(e);o[1]=cudaEventDestroy(e);o[2]=cudaGetLastError();}
if(m==3){o[0]=cudaStreamDestroy((cudaStream_t)0x1000);}
if(m==4){o[0]=cudaEventDestroy((cudaEvent_t)0x1000);}
if(m==5){int*a=o+40;S(&s,1);S(&t,1);E(&e,2);c<<<1,1,0,s>>>(a,7);o[1]=cudaEventRecord(e,s);o[2]=cudaStreamWaitEvent(t,e,0);
w<<<1,1,0,t>>>(a,a+1);o[0]=cudaGetLastError();o[3]=cudaEventDestroy(e);o[4]=cudaStreamDestroy(s);o[5]=cudaStreamDestroy(t);
o[6]=L(s);o[7]=H(s);o[8]=L(t);o[9]=H(t);o[10]=L(e);o[11]=H(e);}
if(m==6){int*q=(int*)malloc(600000);o[0]=q!=0;o[1]=cudaMalloc(&p,600000);o[2]=L(p);o[3]=H(p);free(q);o[4]=cudaMalloc(&p,600000);o[5]=p!=0;}
}
int main(int,char**v){int m=atoi(v[1]);cudaDeviceSetLimit(cudaLimitMallocHeapSize,1<<20);k<<<1,1>>>(m);
int e=cudaDeviceSynchronize();int h[64];cudaMemcpyFromSymbol(h,o,256);printf("m%d sync=%d:",m,e);
for(int i=0;i<48;i++)printf(" %d",h[i]);printf("\n");}
