// SPDX-License-Identifier: MIT
/*
 * The PTX linker (libvgpu/ptx/ptx_link.c, vgpu_ptx_link()): PTX ISA 11.6.4's
 * linking directives across modules.  Linked programs run on the sim
 * backend and their results are computed here (tw(x) = M * x for the
 * multiplier M of the definition the rules pick); errors are checked to
 * the file, line, column and words.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_host.h"
#include "ptx_fixture.h"
#include "vgpu.h"

#define H ".version 8.0\n.target sm_90a\n.address_size 64\n"
/* k(p): p[0] = tw(7), p[1] = cnt, then cnt += 1 */
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
#define TW(LINK, M)                                                                     \
	LINK " .func (.param .b32 r) tw(.param .b32 x)\n{\n.reg .b32 %q;\n"               \
	     "ld.param.b32 %q, [x];\nmul.lo.u32 %q, %q, " #M ";\nst.param.b32 [r], %q;\nret;\n}\n"
#define CNT(LINK, V) LINK " .global .align 4 .u32 cnt = " #V ";\n"

PTX_FIXTURE(link)

struct linked {
	char *text;
	size_t len;
	int ret;
};

static struct linked do_link(FIXTURE_DATA(link) *self, int n, const char *const *srcs)
{
	size_t lens[8];
	const char *names[8] = { "a.ptx", "b.ptx", "c.ptx", "d.ptx",
				 "e.ptx", "f.ptx", "g.ptx", "h.ptx" };
	struct linked l = { 0 };

	for (int i = 0; i < n; i++)
		lens[i] = strlen(srcs[i]);
	l.ret = vgpu_ptx_link(n, srcs, lens, names, 0, &l.text, &l.len, self->log,
			      sizeof(self->log));
	return l;
}

/* Link, load, run k once on one thread: @out gets p[0], p[1]. */
static int link_run(struct __test_metadata *_metadata, FIXTURE_DATA(link) *self, int n,
		    const char *const *srcs, const char *kernel, uint32_t out[2])
{
	struct linked l = do_link(self, n, srcs);
	struct vgpu_args *args = NULL;
	int ret = l.ret;

	if (ret) {
		TH_LOG("link: %s\n%s", strerror(-ret), self->log);
		return ret;
	}
	ret = ptx_load(_metadata, self, "linked", l.text, kernel);
	free(l.text);
	if (!ret)
		ret = buf(self, 0, NULL, 8);
	if (!ret)
		ret = vgpu_args_new(self->k, &args);
	if (!ret)
		ret = vgpu_args_set_bo(args, 0, self->bo[0], 0);
	if (!ret)
		ret = run(_metadata, self, args, 1, 1, 0);
	vgpu_args_free(args);
	if (!ret)
		ret = vgpu_bo_read(self->bo[0], 0, out, 8);
	return ret;
}

/* an .extern function and variable of one module defined in another */
TEST_F(link, extern_function_and_variable)
{
	const char *srcs[] = { H KERNEL, H TW(".visible", 2) CNT(".visible", 5) };
	const char *rev[] = { srcs[1], srcs[0] };
	uint32_t out[2];

	ASSERT_EQ(0, link_run(_metadata, self, 2, srcs, "k", out));
	EXPECT_EQ(14u, out[0]);
	EXPECT_EQ(5u, out[1]);
	/* the definition first: the order of the modules does not matter */
	vgpu_program_free(self->prog);
	self->prog = NULL;
	vgpu_bo_free(self->bo[0]);
	self->bo[0] = NULL;
	ASSERT_EQ(0, link_run(_metadata, self, 2, rev, "k", out));
	EXPECT_EQ(14u, out[0]);
	EXPECT_EQ(5u, out[1]);
}

/* a .weak definition yields to the .visible one, wherever either is */
TEST_F(link, weak_yields_to_visible)
{
	const char *srcs[] = { H TW(".weak", 3) CNT(".weak", 9), H KERNEL,
			       H TW(".visible", 2) CNT(".visible", 5), H TW(".weak", 4) };
	uint32_t out[2];

	ASSERT_EQ(0, link_run(_metadata, self, 4, srcs, "k", out));
	EXPECT_EQ(14u, out[0]);
	EXPECT_EQ(5u, out[1]);
}

/* a dropped .weak array's initializer goes with it, { } and ; */
TEST_F(link, weak_array_dropped_whole)
{
	const char *srcs[] = {
		H ".extern .global .align 4 .b8 arr[8];\n"
		".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r;\n.reg .b64 %d;\n"
		"ld.param.u64 %d, [p];\nld.global.u32 %r, [arr];\nst.global.u32 [%d], %r;\n"
		"ld.global.u32 %r, [arr+4];\nst.global.u32 [%d+4], %r;\nret;\n}\n",
		H ".weak .global .align 4 .u32 arr[2] = {1, 2};\n",
		H ".visible .global .align 4 .u32 arr[2] = {30, 40};\n",
	};
	uint32_t out[2];

	ASSERT_EQ(0, link_run(_metadata, self, 3, srcs, "k", out));
	EXPECT_EQ(30u, out[0]);
	EXPECT_EQ(40u, out[1]);
}

/* of several .weak definitions (no .visible) the first is kept */
TEST_F(link, first_weak_wins)
{
	const char *srcs[] = { H KERNEL, H TW(".weak", 3) CNT(".weak", 9),
			       H TW(".weak", 4) CNT(".weak", 8) };
	uint32_t out[2];

	ASSERT_EQ(0, link_run(_metadata, self, 3, srcs, "k", out));
	EXPECT_EQ(21u, out[0]);
	EXPECT_EQ(9u, out[1]);
}

/*
 * .common variables become one of the largest size: the linked text
 * defines cnt once, as the 16-byte declaration; k's atom.add and a second
 * kernel of another module (reading cnt[3], a word only the 16-byte one
 * has) share it.
 */
TEST_F(link, common_merges_to_largest)
{
	const char *srcs[] = {
		H KERNEL,
		H TW(".visible", 2) ".common .global .align 4 .u32 cnt;\n",
		H ".common .global .align 4 .b8 cnt[16];\n"
		".visible .entry k2(.param .u64 p)\n{\n.reg .b32 %r;\n.reg .b64 %d;\n"
		"ld.param.u64 %d, [p];\nld.global.u32 %r, [cnt];\nst.global.u32 [%d], %r;\n"
		"ld.global.u32 %r, [cnt+12];\nst.global.u32 [%d+4], %r;\nret;\n}\n",
	};
	struct linked l = do_link(self, 3, srcs);
	struct vgpu_args *args = NULL;
	uint32_t out[2];
	const char *p;
	int defs = 0;

	ASSERT_EQ(0, l.ret);
	for (p = l.text; (p = strstr(p, " cnt")); p++)
		defs += !strncmp(p, " cnt[16];", 9) || !strncmp(p, " cnt;", 5);
	EXPECT_EQ(1, defs);
	EXPECT_NE(NULL, strstr(l.text, ".global .align 4 .b8 cnt[16];"));
	EXPECT_EQ(NULL, strstr(l.text, ".common"));
	free(l.text);
	ASSERT_EQ(0, link_run(_metadata, self, 3, srcs, "k", out));
	EXPECT_EQ(14u, out[0]);
	EXPECT_EQ(0u, out[1]);
	/* the same program again, k then k2: k2 sees k's increment */
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "k2", &self->k));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, 8));
	EXPECT_EQ(1u, out[0]);
	EXPECT_EQ(0u, out[1]);
}

/*
 * Internal names (no linking directive) stay each module's own: both
 * define a .global priv and a .func tw; each kernel gets its module's.
 */
TEST_F(link, internal_names_kept_apart)
{
	const char *srcs[] = {
		H ".global .align 4 .u32 priv = 100;\n" TW("", 2)
		".visible .entry ka(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %d;\n"
		"ld.param.u64 %d, [p];\nmov.u32 %r1, 7;\n"
		"{\n.param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r1;\n"
		"call (b), tw, (a);\nld.param.b32 %r2, [b];\n}\n"
		"st.global.u32 [%d], %r2;\nld.global.u32 %r1, [priv];\nst.global.u32 [%d+4], %r1;\n"
		"ret;\n}\n",
		H ".global .align 4 .u32 priv = 200;\n" TW("", 5)
		".visible .entry kb(.param .u64 p)\n{\n.reg .b32 %r<3>;\n.reg .b64 %d;\n"
		"ld.param.u64 %d, [p];\nmov.u32 %r1, 7;\n"
		"{\n.param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r1;\n"
		"call (b), tw, (a);\nld.param.b32 %r2, [b];\n}\n"
		"st.global.u32 [%d], %r2;\nld.global.u32 %r1, [priv];\nst.global.u32 [%d+4], %r1;\n"
		"ret;\n}\n",
	};
	uint32_t out[2];
	struct vgpu_args *args = NULL;

	ASSERT_EQ(0, link_run(_metadata, self, 2, srcs, "ka", out));
	EXPECT_EQ(14u, out[0]);
	EXPECT_EQ(100u, out[1]);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "kb", &self->k));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, 8));
	EXPECT_EQ(35u, out[0]);
	EXPECT_EQ(200u, out[1]);
}

/* internal names longer than the lexer keeps (hashed there) kept apart too */
TEST_F(link, long_internal_names_kept_apart)
{
	char name[461], a[2048], b[2048];
	const char *srcs[] = { a, b };
	uint32_t out[2];
	struct vgpu_args *args = NULL;

	memset(name, 'x', sizeof(name) - 1);
	name[0] = '_';
	name[sizeof(name) - 1] = '\0';
	snprintf(a, sizeof(a),
		 H ".global .align 4 .u32 %s = 11;\n"
		 ".visible .entry ka(.param .u64 p)\n{\n.reg .b32 %%r;\n.reg .b64 %%d;\n"
		 "ld.param.u64 %%d, [p];\nld.global.u32 %%r, [%s];\nst.global.u32 [%%d], %%r;\n"
		 "st.global.u32 [%%d+4], %%r;\nret;\n}\n",
		 name, name);
	snprintf(b, sizeof(b),
		 H ".global .align 4 .u32 %s = 22;\n"
		 ".visible .entry kb(.param .u64 p)\n{\n.reg .b32 %%r;\n.reg .b64 %%d;\n"
		 "ld.param.u64 %%d, [p];\nld.global.u32 %%r, [%s];\nst.global.u32 [%%d], %%r;\n"
		 "st.global.u32 [%%d+4], %%r;\nret;\n}\n",
		 name, name);
	ASSERT_EQ(0, link_run(_metadata, self, 2, srcs, "ka", out));
	EXPECT_EQ(11u, out[0]);
	ASSERT_EQ(0, vgpu_program_find_kernel(self->prog, "kb", &self->k));
	ASSERT_EQ(0, vgpu_args_new(self->k, &args));
	ASSERT_EQ(0, vgpu_args_set_bo(args, 0, self->bo[0], 0));
	ASSERT_EQ(0, run(_metadata, self, args, 1, 1, 0));
	vgpu_args_free(args);
	ASSERT_EQ(0, vgpu_bo_read(self->bo[0], 0, out, 8));
	EXPECT_EQ(22u, out[0]);
}

/* Link errors: -ENOENT, the symbol and where, in the log. */
static void expect_link_error(struct __test_metadata *_metadata, FIXTURE_DATA(link) *self,
			      int n, const char *const *srcs, int err, const char *msg)
{
	struct linked l = do_link(self, n, srcs);

	EXPECT_EQ(err, l.ret);
	EXPECT_EQ(NULL, l.text);
	if (!strstr(self->log, msg))
		TH_LOG("log:\n%s\nwanted: %s", self->log, msg);
	EXPECT_NE(NULL, strstr(self->log, msg));
}

TEST_F(link, undefined_function)
{
	const char *srcs[] = { H KERNEL, H CNT(".visible", 5) };

	expect_link_error(_metadata, self, 2, srcs, -ENOENT,
			  "a.ptx:4:31: error: undefined reference to the .extern function 'tw'");
}

TEST_F(link, undefined_variable)
{
	const char *srcs[] = { H KERNEL, H TW(".visible", 2) };

	expect_link_error(_metadata, self, 2, srcs, -ENOENT,
			  "a.ptx:5:31: error: undefined reference to the .extern variable 'cnt'");
}

TEST_F(link, duplicate_visible)
{
	const char *srcs[] = { H KERNEL, H TW(".visible", 2) CNT(".visible", 5),
			       H TW(".visible", 3) };

	expect_link_error(_metadata, self, 3, srcs, -ENOENT,
			  "c.ptx:4:32: error: multiple definitions of 'tw' (.visible here and at "
			  "b.ptx:4:32)");
}

TEST_F(link, duplicate_kernel)
{
	const char *srcs[] = { H KERNEL, H TW(".visible", 2) CNT(".visible", 5), H KERNEL };

	/* c.ptx's own .extern declarations resolve; its k is k's second definition */
	expect_link_error(_metadata, self, 3, srcs, -ENOENT,
			  "c.ptx:6:17: error: multiple definitions of 'k' (.visible here and at "
			  "a.ptx:6:17)");
}

TEST_F(link, extern_size_mismatch)
{
	const char *srcs[] = { H ".extern .global .align 4 .b8 cnt[8];\n"
				 ".visible .entry e()\n{\nret;\n}\n",
			       H CNT(".visible", 5) };

	expect_link_error(_metadata, self, 2, srcs, -ENOENT,
			  "a.ptx:4:30: error: .extern 'cnt' of 8 bytes, but its definition at "
			  "b.ptx:4:32 has 4");
}

TEST_F(link, function_declared_variable_defined)
{
	const char *srcs[] = { H ".extern .func cnt();\n.visible .entry e()\n{\nret;\n}\n",
			       H CNT(".visible", 5) };

	expect_link_error(_metadata, self, 2, srcs, -ENOENT,
			  "a.ptx:4:15: error: 'cnt' is declared a function here but defined a "
			  "variable at b.ptx:4:32");
}

/* an unsized .extern array (extern __device__ int a[]) takes any size */
TEST_F(link, unsized_extern_array)
{
	const char *srcs[] = {
		H ".extern .global .align 4 .b8 arr[];\n"
		".visible .entry k(.param .u64 p)\n{\n.reg .b32 %r;\n.reg .b64 %d;\n"
		"ld.param.u64 %d, [p];\nld.global.u32 %r, [arr+4];\nst.global.u32 [%d], %r;\n"
		"st.global.u32 [%d+4], %r;\nret;\n}\n",
		H ".visible .global .align 4 .u32 arr[2] = {3, 4};\n",
	};
	uint32_t out[2];

	ASSERT_EQ(0, link_run(_metadata, self, 2, srcs, "k", out));
	EXPECT_EQ(4u, out[0]);
	EXPECT_EQ(4u, out[1]);
}

/* device-side launch (dynamic parallelism) is named as unsupported */
TEST_F(link, device_runtime_unsupported)
{
	const char *srcs[] = {
		H ".extern .func (.param .b64 r) cudaGetParameterBuffer(.param .b64 a, "
		  ".param .b64 b);\n.visible .entry e()\n{\nret;\n}\n",
	};

	expect_link_error(_metadata, self, 1, srcs, -ENOENT,
			  "a.ptx:4:31: error: unsupported construct: 'cudaGetParameterBuffer' is a "
			  "device-runtime function (device-side launch, CUDA dynamic parallelism: "
			  "libcudadevrt), which vGPU does not support");
}

/*
 * CUDA 13's device-side launch <<<>>> (nvcc -rdc=true, as nvcc writes it):
 * the front end defines those entry points (ptx_cdp.c), they stay .extern;
 * the device runtime's others are named as unsupported
 */
#define CDP2_DECLS                                                                        \
	".extern .func (.param .b64 r) __cudaCDP2GetParameterBufferV2(.param .b64 f, "    \
	".param .align 4 .b8 g[12], .param .align 4 .b8 b[12], .param .b32 s);\n"         \
	".extern .func (.param .b32 r) __cudaCDP2LaunchDeviceV2(.param .b64 p, "          \
	".param .b64 s);\n"

TEST_F(link, device_launch_links)
{
	const char *srcs[] = { H CDP2_DECLS ".visible .entry e()\n{\nret;\n}\n" };
	const char *bad[] = {
		H CDP2_DECLS ".extern .func (.param .b32 r) __cudaCDP2EventRecordWithFlags(.param .b64 p"
		  ");\n.visible .entry e()\n{\nret;\n}\n",
	};
	struct linked l = do_link(self, 1, srcs);

	ASSERT_EQ(0, l.ret);
	EXPECT_NE(NULL, strstr(l.text, ".extern .func (.param .b32 r) __cudaCDP2LaunchDeviceV2("));
	free(l.text);
	expect_link_error(_metadata, self, 1, bad, -ENOENT,
			  "a.ptx:6:31: error: unsupported construct: "
			  "'__cudaCDP2EventRecordWithFlags' is a device-runtime function");
}

/*
 * the device runtime's cudaMalloc, cudaFree, streams and events (as nvcc
 * 13 declares them) link and stay .extern (ptx_devrt.c defines them);
 * cudaEventRecordWithFlags (which CUDA 13's libcudadevrt lacks) and
 * CDP1's cudaDeviceSynchronize are refused, saying why
 */
TEST_F(link, device_runtime_streams_events_link)
{
	const char *srcs[] = {
		H ".extern .func (.param .b32 r) __cudaCDP2Malloc(.param .b64 p, .param .b64 n);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2Free(.param .b64 p);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2StreamCreateWithFlags(.param .b64 p, "
		  ".param .b32 f);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2StreamDestroy(.param .b64 s);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2EventCreateWithFlags(.param .b64 p, "
		  ".param .b32 f);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2EventRecord(.param .b64 e, "
		  ".param .b64 s);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2StreamWaitEvent(.param .b64 s, "
		  ".param .b64 e, .param .b32 f);\n"
		  ".extern .func (.param .b32 r) __cudaCDP2EventDestroy(.param .b64 e);\n"
		  ".visible .entry e()\n{\nret;\n}\n",
	};
	const char *flags[] = {
		H ".extern .func (.param .b32 r) __cudaCDP2EventRecordWithFlags(.param .b64 e, "
		  ".param .b64 s, .param .b32 f);\n.visible .entry e()\n{\nret;\n}\n",
	};
	const char *sync[] = {
		H ".extern .func (.param .b32 r) cudaDeviceSynchronize();\n"
		  ".visible .entry e()\n{\nret;\n}\n",
	};
	struct linked l = do_link(self, 1, srcs);

	ASSERT_EQ(0, l.ret);
	EXPECT_NE(NULL, strstr(l.text, ".extern .func (.param .b32 r) __cudaCDP2Malloc("));
	EXPECT_NE(NULL, strstr(l.text, ".extern .func (.param .b32 r) __cudaCDP2EventDestroy("));
	free(l.text);
	expect_link_error(_metadata, self, 1, flags, -ENOENT,
			  "a.ptx:4:31: error: unsupported construct: "
			  "'__cudaCDP2EventRecordWithFlags' is a device-runtime function (device-side "
			  "launch, CUDA dynamic parallelism: libcudadevrt), which vGPU does not "
			  "support (nor does CUDA 13's libcudadevrt define it: nvlink reports an "
			  "undefined reference)");
	expect_link_error(_metadata, self, 1, sync, -ENOENT,
			  "a.ptx:4:31: error: unsupported construct: 'cudaDeviceSynchronize' is a "
			  "device-runtime function (device-side launch, CUDA dynamic parallelism: "
			  "libcudadevrt), which vGPU does not support (CDP1's device-side "
			  "synchronize, removed on sm_90 and later: nvcc 13 refuses it in device "
			  "code for sm_90)");
}

/*
 * libcudadevrt's PTX (nvcc's device link brings it: it defines the CDP2
 * entry points over the driver's cnp* calls) is left out of the link
 */
TEST_F(link, libcudadevrt_module_left_out)
{
	const char *srcs[] = {
		H CDP2_DECLS ".visible .entry e()\n{\nret;\n}\n",
		H ".extern .func (.param .b32 r) cnpLaunchDeviceV2(.param .b64 p, .param .b64 s);\n"
		  ".visible .func (.param .b32 r) __cudaCDP2LaunchDeviceV2(.param .b64 p, "
		  ".param .b64 s)\n{\n.reg .b32 %e;\n.reg .b64 %a, %b;\n"
		  "ld.param.b64 %a, [p];\nld.param.b64 %b, [s];\n"
		  "{\n.param .b64 q0;\nst.param.b64 [q0], %a;\n.param .b64 q1;\n"
		  "st.param.b64 [q1], %b;\n.param .b32 q2;\n"
		  "call.uni (q2), cnpLaunchDeviceV2, (q0, q1);\nld.param.b32 %e, [q2];\n}\n"
		  "st.param.b32 [r], %e;\nret;\n}\n",
	};
	struct linked l = do_link(self, 2, srcs);

	ASSERT_EQ(0, l.ret);
	EXPECT_EQ(NULL, strstr(l.text, "cnpLaunchDeviceV2"));
	free(l.text);
}

/* vprintf, __assertfail, malloc and free are the front end's own */
TEST_F(link, builtins_need_no_definition)
{
	const char *srcs[] = {
		H ".extern .func (.param .b64 r) malloc(.param .b64 n);\n"
		  ".extern .func free(.param .b64 p);\n"
		  ".visible .entry e()\n{\nret;\n}\n",
	};
	struct linked l = do_link(self, 1, srcs);

	EXPECT_EQ(0, l.ret);
	free(l.text);
}

/* a module's own PTX error names that module, line and column */
TEST_F(link, module_error_names_its_file)
{
	const char *srcs[] = { H KERNEL, H ".visible .entry e()\n{\nret;\n}\n}\n" };
	struct linked l = do_link(self, 2, srcs);

	EXPECT_EQ(-EINVAL, l.ret);
	EXPECT_EQ(NULL, l.text);
	EXPECT_EQ(0, strncmp(self->log, "b.ptx:8:1: error: ", 18));
}

/* the compile's messages of the linked text, mapped back to each input */
TEST_F(link, compile_errors_name_their_module)
{
	const char *srcs[] = { H ".visible .entry e()\n{\n.reg .b32 %r;\nbogus.u32 %r, 1;\nret;\n}\n",
			       H KERNEL, H TW(".visible", 2) CNT(".visible", 5),
			       H ".visible .entry f()\n{\n.reg .b32 %r;\nmore.bogus %r;\nret;\n}\n" };
	struct linked l = do_link(self, 4, srcs);
	char *text = NULL;

	ASSERT_EQ(0, l.ret);
	EXPECT_EQ(-EINVAL, vgpu_ptx_to_asm(l.text, l.len, VGPU_PTX_LINKED_NAME, &text, self->log,
					   sizeof(self->log)));
	EXPECT_EQ(0, vgpu_ptx_link_map_log(l.text, l.len, self->log, sizeof(self->log)));
	if (!strstr(self->log, "a.ptx:7:1: error: unsupported PTX instruction 'bogus.u32'"))
		TH_LOG("%s", self->log);
	EXPECT_NE(NULL, strstr(self->log, "a.ptx:7:1: error: unsupported PTX instruction "
					  "'bogus.u32'"));
	EXPECT_EQ(NULL, strstr(self->log, "<linked>"));
	/* a line of no module (past the text) is left as it is */
	snprintf(self->log, sizeof(self->log), "<linked>:100000:1: error: x\nother\n");
	EXPECT_EQ(0, vgpu_ptx_link_map_log(l.text, l.len, self->log, sizeof(self->log)));
	EXPECT_STREQ("<linked>:100000:1: error: x\nother\n", self->log);
	free(l.text);
	free(text);
}

TEST_F(link, nothing_to_link)
{
	struct linked l = do_link(self, 0, NULL);

	EXPECT_EQ(-EINVAL, l.ret);
	EXPECT_NE(NULL, strstr(self->log, "nothing to link"));
}

TEST_HARNESS_MAIN
