// SPDX-License-Identifier: MIT
/*
 * The driver API's JIT linker (cuLinkCreate, cuLinkAddData, cuLinkAddFile,
 * cuLinkComplete, cuLinkDestroy; libvgpu/cuda/cu_link.c): PTX modules
 * linked across .extern declarations, the image loaded and run, the
 * return codes and the error and info logs.  The kernel's results are
 * computed here: tw(x) = 2x, cnt starts at 5 and each launch adds 1.
 */
#include "cuda_test.h"

#define H ".version 8.0\n.target sm_90a\n.address_size 64\n"
#define KERNEL                                                                          \
	".extern .func (.param .b32 r) tw(.param .b32 x);\n"                              \
	".extern .global .align 4 .u32 cnt;\n"                                            \
	".visible .entry k(.param .u64 p)\n{\n"                                           \
	".reg .b32 %r<3>;\n.reg .b64 %d;\n"                                                \
	"ld.param.u64 %d, [p];\nmov.u32 %r1, 7;\n"                                        \
	"{\n.param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r1;\n"                     \
	"call (b), tw, (a);\nld.param.b32 %r2, [b];\n}\n"                                 \
	"st.global.u32 [%d], %r2;\nld.global.u32 %r1, [cnt];\n"                           \
	"st.global.u32 [%d+4], %r1;\natom.global.add.u32 %r1, [cnt], 1;\nret;\n}\n"
#define DEFS                                                                            \
	".visible .func (.param .b32 r) tw(.param .b32 x)\n{\n.reg .b32 %q;\n"             \
	"ld.param.b32 %q, [x];\nmul.lo.u32 %q, %q, 2;\nst.param.b32 [r], %q;\nret;\n}\n"  \
	".visible .global .align 4 .u32 cnt = 5;\n"

static const char ptx_a[] = H KERNEL, ptx_b[] = H DEFS;

FIXTURE(link) {
	CUdevice dev;
	CUcontext ctx;
	CUlinkState ls;
	char err[4096], info[4096];
	CUjit_option opt[4];
	void *val[4];
};

FIXTURE_SETUP(link)
{
	memset(self, 0, sizeof(*self));
	CU(cuInit(0));
	CU(cuDeviceGet(&self->dev, 0));
	CU(cuCtxCreate(&self->ctx, NULL, 0, self->dev));
	self->opt[0] = CU_JIT_ERROR_LOG_BUFFER;
	self->val[0] = self->err;
	self->opt[1] = CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
	self->val[1] = (void *)(uintptr_t)sizeof(self->err);
	self->opt[2] = CU_JIT_INFO_LOG_BUFFER;
	self->val[2] = self->info;
	self->opt[3] = CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES;
	self->val[3] = (void *)(uintptr_t)sizeof(self->info);
	CU(cuLinkCreate(4, self->opt, self->val, &self->ls));
}

FIXTURE_TEARDOWN(link)
{
	if (self->ls)
		EXPECT_CU(CUDA_SUCCESS, cuLinkDestroy(self->ls));
	if (self->ctx)
		EXPECT_CU(CUDA_SUCCESS, cuCtxDestroy(self->ctx));
}

static CUresult add(FIXTURE_DATA(link) *self, const char *ptx, const char *name)
{
	return cuLinkAddData(self->ls, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, name, 0,
			     NULL, NULL);
}

/* two modules linked, the image loaded, k run twice: cnt shared */
TEST_F(link, link_load_run)
{
	void *image = NULL;
	size_t size = 0, gsize = 0;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr out, g;
	uint32_t res[2], cnt;
	void *args[] = { &out };

	CU(add(self, ptx_a, "a.ptx"));
	CU(add(self, ptx_b, "b.ptx"));
	CU(cuLinkComplete(self->ls, &image, &size));
	ASSERT_NE(NULL, image);
	EXPECT_EQ(strlen(image) + 1, size);
	EXPECT_STREQ("", self->err);
	EXPECT_NE(NULL, strstr(self->info, "linked 2 PTX modules"));
	EXPECT_EQ(strlen(self->info) + 1, (size_t)(uintptr_t)self->val[3]);
	CU(cuModuleLoadData(&mod, image));
	CU(cuModuleGetFunction(&f, mod, "k"));
	CU(cuMemAlloc(&out, sizeof(res)));
	for (int i = 0; i < 2; i++) {
		CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
		CU(cuCtxSynchronize());
		CU(cuMemcpyDtoH(res, out, sizeof(res)));
		EXPECT_EQ(14u, res[0]);
		EXPECT_EQ(5u + (uint32_t)i, res[1]);
	}
	CU(cuModuleGetGlobal(&g, &gsize, mod, "cnt"));
	EXPECT_EQ(4u, gsize);
	CU(cuMemcpyDtoH(&cnt, g, 4));
	EXPECT_EQ(7u, cnt);
	CU(cuMemFree(out));
	CU(cuModuleUnload(mod));
}

/* the same module from a file (cuLinkAddFile) */
TEST_F(link, add_file)
{
	char path[] = "/tmp/vgpu-link-XXXXXX";
	int fd = mkstemp(path);
	void *image;
	FILE *f;

	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	ASSERT_NE(NULL, f);
	fputs(ptx_b, f);
	fclose(f);
	CU(add(self, ptx_a, "a.ptx"));
	CU(cuLinkAddFile(self->ls, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
	unlink(path);
	CU(cuLinkComplete(self->ls, &image, NULL));
	EXPECT_CU(CUDA_ERROR_FILE_NOT_FOUND,
		  cuLinkAddFile(self->ls, CU_JIT_INPUT_PTX, path, 0, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->err, "cannot open the file"));
}

/*
 * An undefined .extern: CUDA_ERROR_INVALID_SOURCE at cuLinkComplete, named
 * in the error log; the module loaded alone is CUDA_ERROR_INVALID_PTX (both
 * as on an H200: tests/cuda/real-gpu/link-h200-2026-11-30).
 */
TEST_F(link, undefined_symbol)
{
	void *image = NULL;
	CUmodule m;

	CU(add(self, ptx_a, "a.ptx"));
	EXPECT_CU(CUDA_ERROR_INVALID_SOURCE, cuLinkComplete(self->ls, &image, NULL));
	EXPECT_EQ(NULL, image);
	EXPECT_NE(NULL, strstr(self->err, "a.ptx:4:31: error: undefined reference to the "
					  ".extern function 'tw'"));
	EXPECT_NE(NULL, strstr(self->err, "a.ptx:5:31: error: undefined reference to the "
					  ".extern variable 'cnt'"));
	EXPECT_EQ(strlen(self->err) + 1, (size_t)(uintptr_t)self->val[1]);
	EXPECT_CU(CUDA_ERROR_INVALID_PTX, cuModuleLoadData(&m, ptx_a));
}

/*
 * A second definition: CUDA_ERROR_INVALID_SOURCE already at the
 * cuLinkAddData that brings it, and at cuLinkComplete (the H200's answers)
 */
TEST_F(link, duplicate_definition)
{
	void *image = NULL;

	CU(add(self, ptx_a, "a.ptx"));
	CU(add(self, ptx_b, "b.ptx"));
	EXPECT_CU(CUDA_ERROR_INVALID_SOURCE, add(self, ptx_b, "c.ptx"));
	EXPECT_NE(NULL, strstr(self->err, "c.ptx:4:32: error: multiple definitions of 'tw' "
					  "(.visible here and at b.ptx:4:32)"));
	EXPECT_CU(CUDA_ERROR_INVALID_SOURCE, cuLinkComplete(self->ls, &image, NULL));
	/* the log has it twice now */
	EXPECT_NE(NULL, strstr(strstr(self->err, "multiple definitions of 'tw'") + 1,
			       "c.ptx:4:32: error: multiple definitions of 'tw'"));
}

/* An .extern of the wrong size: at cuLinkAddData too; a later module that
 * only uses the symbol does not bring the error back by itself */
TEST_F(link, extern_size_mismatch_at_add)
{
	void *image = NULL;

	CU(add(self, H ".extern .global .align 4 .b8 cnt[8];\n.visible .entry k()\n{\nret;\n}\n",
	       "m.ptx"));
	EXPECT_CU(CUDA_ERROR_INVALID_SOURCE, add(self, ptx_b, "b.ptx"));
	EXPECT_NE(NULL, strstr(self->err, "m.ptx:4:30: error: .extern 'cnt' of 8 bytes, but its "
					  "definition at b.ptx:12:32 has 4"));
	EXPECT_CU(CUDA_ERROR_INVALID_SOURCE, cuLinkComplete(self->ls, &image, NULL));
}

/* a module's own PTX error at cuLinkAddData, as CUDA compiles it there */
TEST_F(link, bad_ptx_at_add)
{
	EXPECT_CU(CUDA_ERROR_INVALID_PTX, add(self, H "}\n", "bad.ptx"));
	EXPECT_EQ(0, strncmp(self->err, "bad.ptx:4:1: error: ", 20));
}

/* linked PTX that does not compile for vGPU: at cuLinkComplete */
TEST_F(link, compile_error_at_complete)
{
	void *image = NULL;

	CU(add(self, ptx_a, "a.ptx"));
	CU(add(self, ptx_b, "b.ptx"));
	CU(add(self, H ".visible .entry e()\n{\n.reg .b32 %r;\nbogus.u32 %r, 1;\nret;\n}\n",
	       "e.ptx"));
	EXPECT_CU(CUDA_ERROR_INVALID_PTX, cuLinkComplete(self->ls, &image, NULL));
	/* the third input's line 7, not the linked text's */
	EXPECT_NE(NULL, strstr(self->err, "e.ptx:7:1: error: unsupported PTX instruction "
					  "'bogus.u32'"));
}

/* inputs vGPU cannot link */
TEST_F(link, input_types)
{
	static const char junk[] = "\x7f" "ELF junk", notelf[] = "not an image";
	size_t len;
	void *fatbin = read_file("kernels.fatbin", &len), *image;

	EXPECT_CU(CUDA_ERROR_NO_BINARY_FOR_GPU,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_CUBIN, (void *)junk, sizeof(junk), "j", 0,
				NULL, NULL));
	EXPECT_NE(NULL, strstr(self->err, "j: a cubin is SASS"));
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_CUBIN, (void *)notelf, sizeof(notelf), "n",
				0, NULL, NULL));
	EXPECT_NE(NULL, strstr(self->err, "n: not an ELF image"));
	EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_OBJECT, (void *)junk, sizeof(junk), "j", 0,
				NULL, NULL));
	EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_LIBRARY, (void *)junk, sizeof(junk), "j", 0,
				NULL, NULL));
	EXPECT_CU(CUDA_ERROR_NOT_SUPPORTED,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_NVVM, (void *)junk, sizeof(junk), "j", 0,
				NULL, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuLinkAddData(self->ls, CU_JIT_NUM_INPUT_TYPES, (void *)junk, sizeof(junk), "j",
				0, NULL, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_IMAGE,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_FATBINARY, (void *)junk, sizeof(junk), "j",
				0, NULL, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE,
		  cuLinkAddData(self->ls, CU_JIT_INPUT_PTX, NULL, 10, "j", 0, NULL, NULL));
	/* a fatbin's PTX links like PTX */
	ASSERT_NE(NULL, fatbin);
	CU(cuLinkAddData(self->ls, CU_JIT_INPUT_FATBINARY, fatbin, len, "kernels.fatbin", 0,
			 NULL, NULL));
	CU(cuLinkComplete(self->ls, &image, NULL));
	free(fatbin);
}

TEST_F(link, handles_and_values)
{
	CUlinkState ls;
	CUmodule m;
	CUfunction f;
	void *image;

	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLinkCreate(0, NULL, NULL, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLinkCreate(1, NULL, NULL, &ls));
	EXPECT_CU(CUDA_ERROR_INVALID_VALUE, cuLinkComplete(self->ls, NULL, NULL));
	/* nothing added: an image of no kernel, as on the H200 */
	image = NULL;
	CU(cuLinkComplete(self->ls, &image, NULL));
	ASSERT_NE(NULL, image);
	CU(cuModuleLoadData(&m, image));
	EXPECT_CU(CUDA_ERROR_NOT_FOUND, cuModuleGetFunction(&f, m, "k"));
	CU(cuModuleUnload(m));
	VGPU_ONLY();
	CU(cuLinkCreate(0, NULL, NULL, &ls));
	CU(cuLinkDestroy(ls));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLinkDestroy(ls));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, cuLinkComplete(ls, &image, NULL));
	EXPECT_CU(CUDA_ERROR_INVALID_HANDLE, add(&(FIXTURE_DATA(link)){ .ls = ls }, ptx_a, "a"));
}

/*
 * A module of no kernel loads (an H200's does), and one that defines what
 * it declares .extern is whole
 */
TEST_F(link, modules_without_kernels_or_links)
{
	static const char data[] = H ".visible .global .align 4 .u32 g = 9;\n",
			  both[] = H ".extern .global .align 4 .u32 g;\n"
				     ".visible .global .align 4 .u32 g = 3;\n"
				     ".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r;\n"
				     ".reg .b64 %d;\nld.param.u64 %d, [p];\n"
				     "ld.global.u32 %r, [g];\nst.global.u32 [%d], %r;\nret;\n}\n";
	CUmodule m;
	CUdeviceptr g, out;
	CUfunction f;
	size_t size;
	uint32_t v = 0;
	void *args[] = { &out };

	CU(cuModuleLoadData(&m, data));
	CU(cuModuleGetGlobal(&g, &size, m, "g"));
	EXPECT_EQ(4u, size);
	CU(cuMemcpyDtoH(&v, g, 4));
	EXPECT_EQ(9u, v);
	CU(cuModuleUnload(m));
	CU(cuModuleLoadData(&m, both));
	CU(cuModuleGetFunction(&f, m, "k"));
	CU(cuMemAlloc(&out, 4));
	CU(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
	CU(cuMemcpyDtoH(&v, out, 4));
	EXPECT_EQ(3u, v);
	CU(cuMemFree(out));
	CU(cuModuleUnload(m));
}

/* cuGetProcAddress finds the link API by its names */
TEST_F(link, proc_address)
{
	void *fn = NULL;
	CUdriverProcAddressQueryResult st;

	CU(cuGetProcAddress("cuLinkCreate", &fn, 13000, 0, &st));
	EXPECT_EQ((void *)cuLinkCreate, fn);
	CU(cuGetProcAddress("cuLinkComplete", &fn, 13000, 0, &st));
	EXPECT_EQ((void *)cuLinkComplete, fn);
}

TEST_HARNESS_MAIN
