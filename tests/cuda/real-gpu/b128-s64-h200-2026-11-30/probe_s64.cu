// ld.s64 / ld.u64 / ld.s32 / ld.f64 and cvt.s64.s32 into a .b128 register:
// what an H200 leaves in the high 64 bits.  nvcc -o p p.cu -lcuda && ./p
#include <cuda.h>
#include <cstdio>
const char *ptx = ".version 8.3\n.target sm_90a\n.address_size 64\n"
".visible .entry k(.param .u64 p){\n"
".reg .b128 %q<8>; .reg .b64 %rd<4>; .reg .b32 %r<2>;\n"
"ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1;\n"
"ld.global.s64 %q1,[%rd2];\n st.global.b128 [%rd2+16],%q1;\n"
"ld.global.u64 %q2,[%rd2];\n st.global.b128 [%rd2+32],%q2;\n"
"ld.global.s32 %q3,[%rd2+4];\n st.global.b128 [%rd2+48],%q3;\n"
"ld.global.f64 %q4,[%rd2];\n st.global.b128 [%rd2+64],%q4;\n"
"ld.global.s32 %r1,[%rd2+4]; cvt.s64.s32 %q5,%r1;\n st.global.b128 [%rd2+80],%q5;\n"
"ld.global.v2.s64 {%q6,%q7},[%rd2];\n st.global.b128 [%rd2+96],%q6;\n st.global.b128 [%rd2+112],%q7;\n"
"ret;}\n";
int main()
{
	CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUdeviceptr b;
	unsigned h[32] = {0};
	char log[4096] = "";
	CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *v[2] = {log, (void *)4096};
	cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
	printf("load %d %s\n", cuModuleLoadDataEx(&m, ptx, 2, o, v), log);
	printf("func %d\n", cuModuleGetFunction(&f, m, "k"));
	cuMemAlloc(&b, 128);
	for (int i = 0; i < 32; i++) h[i] = 0x5a5a5a5au;
	h[0] = 0x11223344u; h[1] = 0x85667788u; h[2] = 0x99aabbccu; h[3] = 0xf1f2f3f4u;
	cuMemcpyHtoD(b, h, 128);
	void *a[] = {&b};
	printf("launch %d", cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, a, 0));
	printf(" sync %d\n", cuCtxSynchronize());
	cuMemcpyDtoH(h, b, 128);
	for (int i = 0; i < 32; i++) printf("%08x%c", h[i], i % 4 == 3 ? '\n' : ' ');
	return 0;
}
