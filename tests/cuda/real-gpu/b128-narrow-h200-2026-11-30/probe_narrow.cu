// ld of a narrower type into a .b128 register and st of one from it, and
// elect.sync with a constant mask that lanes outside it run: what an H200
// does.  nvcc -o p probe_narrow.cu -lcuda && ./p
#include <cuda.h>
#include <cstdio>
const char *ptx = ".version 8.3\n.target sm_90a\n.address_size 64\n"
".visible .entry k(.param .u64 p){\n"
".reg .b128 %q<6>; .reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %e;\n"
"ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; mov.u32 %r1,%tid.x;\n"
"setp.ne.u32 %e,%r1,0; @%e bra EL;\n"
"ld.global.s32 %q1,[%rd2];\n st.global.b128 [%rd2+16],%q1;\n"
"ld.global.u16 %q2,[%rd2+4];\n st.global.b128 [%rd2+32],%q2;\n"
"ld.global.s8 %q3,[%rd2+6];\n st.global.b128 [%rd2+48],%q3;\n"
"ld.global.b64 %q4,[%rd2+8];\n st.global.b128 [%rd2+64],%q4;\n"
"ld.global.b128 %q5,[%rd2+96];\n st.global.u16 [%rd2+80],%q5;\n st.global.b32 [%rd2+84],%q5;\n st.global.s64 [%rd2+88],%q5;\n"
"EL: elect.sync %r2|%e, 0x0f0f0f00;\n selp.u32 %r3,1,0,%e;\n"
"mul.wide.u32 %rd3,%r1,4; add.s64 %rd3,%rd3,%rd2; shl.b32 %r2,%r2,8; or.b32 %r2,%r2,%r3; st.global.u32 [%rd3+128],%r2;\n"
"ret;}\n";
int main()
{
	CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUdeviceptr b;
	unsigned h[64] = {0};
	char log[4096] = "";
	CUjit_option o[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *v[2] = {log, (void *)4096};
	cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
	printf("load %d %s\n", cuModuleLoadDataEx(&m, ptx, 2, o, v), log);
	printf("func %d\n", cuModuleGetFunction(&f, m, "k"));
	cuMemAlloc(&b, 256);
	h[0] = 0x8000fff0u; h[1] = 0x00f08123u; h[2] = 0x11223344u; h[3] = 0x85667788u;
	h[24] = 0xa1a2a3a4u; h[25] = 0xb1b2b3b4u; h[26] = 0xc1c2c3c4u; h[27] = 0xd1d2d3d4u;
	cuMemcpyHtoD(b, h, 256);
	void *a[] = {&b};
	printf("launch %d", cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, a, 0));
	printf(" sync %d\n", cuCtxSynchronize());
	cuMemcpyDtoH(h, b, 256);
	for (int i = 0; i < 64; i++) printf("%08x%c", h[i], i % 8 == 7 ? '\n' : ' ');
	return 0;
}
