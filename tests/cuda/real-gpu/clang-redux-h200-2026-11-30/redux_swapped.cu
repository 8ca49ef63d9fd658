#include <cuda.h>
#include <cstdio>
// clang-19's PTX for __reduce_add_sync(0xffffffff, v): mask and value swapped
const char *ptx = ".version 8.0\n.target sm_90a\n.address_size 64\n"
".visible .entry k(.param .u64 p, .param .u32 sw){\n"
".reg .b32 %r<6>; .reg .b64 %rd<4>; .reg .pred %q;\n"
"ld.param.u64 %rd1,[p]; cvta.to.global.u64 %rd2,%rd1; ld.param.u32 %r5,[sw];\n"
"mov.u32 %r1,%tid.x; mul.lo.u32 %r4,%r1,7; add.u32 %r4,%r4,1; mov.b32 %r2,-1;\n"
"setp.ne.u32 %q,%r5,0;\n"
"@%q redux.sync.add.s32 %r3,%r2,%r4;\n"
"@!%q redux.sync.add.s32 %r3,%r4,%r2;\n"
"mul.wide.u32 %rd3,%r1,4; add.s64 %rd2,%rd2,%rd3; st.global.u32 [%rd2],%r3; ret;}\n";
int main()
{
	CUdevice d; CUcontext c; CUmodule m; CUfunction f; CUdeviceptr b;
	unsigned h[32];
	cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&c, d); cuCtxSetCurrent(c);
	printf("load %d\n", cuModuleLoadData(&m, ptx));
	cuModuleGetFunction(&f, m, "k");
	cuMemAlloc(&b, 128);
	for (unsigned sw = 0; sw < 2; sw++) {
		void *a[] = { &b, &sw };
		cuMemsetD8(b, 0xee, 128);
		printf("sw=%u launch %d", sw, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, a, 0));
		printf(" sync %d:", cuCtxSynchronize());
		if (cuMemcpyDtoH(h, b, 128) == 0)
			for (int i = 0; i < 32; i++) printf(" %x", h[i]);
		printf("\n");
	}
}
