/* SPDX-License-Identifier: MIT */
/*
 * The tools, end to end: write small kernels to a temporary directory, run
 * build/bin/vgpu-run on them and compare stdout, stderr and exit status.
 * The tools are found next to this binary: BUILD/tests/test_runner runs
 * BUILD/bin/vgpu-run (and vgpu-info, vgpu-as, vgpu-objdump).  vgpu-run
 * goes through libvgpu: with no vgpu DRM device on the host, its automatic
 * backend is sim, and buffers are buffer objects whose GPU addresses the
 * device chooses (the tests compare addresses with each other, never with
 * constants).  Clusters, the sanitizer switch, the copy-engine timing and
 * tensor maps: usage errors, descriptor words and parameter order check
 * the runner alone; launch_options_reach_the_core runs them.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "vgpu.h"
#include "vgpu_asm.h"
#include "vgpu_hw.h"

static char bindir[PATH_MAX];
static char runner[PATH_MAX + 16];
static char tmpdir[PATH_MAX];

struct result {
	int status; /* exit status, or -1 if it did not exit normally */
	char out[16384];
	char err[16384];
};

/* snprintf that treats truncation as fatal */
static void xfmt(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void xfmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "test_runner: string too long: %s\n", buf);
		exit(1);
	}
}

/* The tools' directory, next to this binary: once, before the tests. */
__attribute__((constructor)) static void find_tools(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0) {
		perror("readlink /proc/self/exe");
		exit(1);
	}
	exe[n] = '\0';
	for (int i = 0; i < 2; i++) { /* strip "tests/test_runner" */
		slash = strrchr(exe, '/');
		if (!slash) {
			fprintf(stderr, "unexpected binary path %s\n", exe);
			exit(1);
		}
		*slash = '\0';
	}
	xfmt(bindir, sizeof(bindir), "%s/bin", exe);
	xfmt(runner, sizeof(runner), "%s/vgpu-run", bindir);

	/* the sim backend, unless a test asks for another (its flags and
	 * timing are the simulator's) */
	setenv("VGPU_BACKEND", "sim", 1);
}

/*
 * Every test runs the tools in a temporary directory of its own (tmpdir:
 * each test is a process of its own), removed after the test.
 */
FIXTURE(tool) {
	const char *dir;
};

FIXTURE_SETUP(tool)
{
	xfmt(tmpdir, sizeof(tmpdir), "%s/vgpu-runner-XXXXXX",
	     getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT_NE(NULL, mkdtemp(tmpdir));
	self->dir = tmpdir;
}

FIXTURE_TEARDOWN(tool)
{
	char cmd[PATH_MAX + 16];

	xfmt(cmd, sizeof(cmd), "rm -rf '%s'", self->dir);
	if (system(cmd))
		TH_LOG("could not remove %s", self->dir);
}

/* Path of @name inside the temporary directory, written to @buf. */
static const char *tmp_path(const char *name, char *buf, size_t len)
{
	xfmt(buf, len, "%s/%s", tmpdir, name);
	return buf;
}

static void write_file(const char *name, const void *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f = fopen(tmp_path(name, path, sizeof(path)), "wb");

	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void write_text(const char *name, const char *text)
{
	write_file(name, text, strlen(text));
}

static void slurp(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	FILE *f = fopen(tmp_path(name, path, sizeof(path)), "rb");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/*
 * Run "TOOL ARGS" (a tool of BUILD/bin) in the temporary directory, so
 * kernel and data files are named relative to it, capturing stdout and
 * stderr.  ARGS may start with environment assignments ("VAR=x vgpu-run"
 * is not what runs: the assignments go before the tool's path).
 */
static void run_tool(struct result *r, const char *tool, const char *env,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void run_tool(struct result *r, const char *tool, const char *env,
		     const char *fmt, ...)
{
	char args[2048], cmd[3 * PATH_MAX + 2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	xfmt(cmd, sizeof(cmd), "cd '%s' && %s '%s/%s' %s >stdout 2>stderr",
	     tmpdir, env ? env : "", bindir, tool, args);
	st = system(cmd);
	r->status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp("stdout", r->out, sizeof(r->out));
	slurp("stderr", r->err, sizeof(r->err));
	if (r->status != 0 && r->status != 1 && r->status != 2 && r->status != 3)
		fprintf(stderr, "  %s %s: status %d\n%s", tool, args, r->status,
			r->err);
}

/* Run "vgpu-run ARGS" (see run_tool). */
static void run(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void run(struct result *r, const char *fmt, ...)
{
	char args[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	run_tool(r, "vgpu-run", NULL, "%s", args);
}

/* Is there a vgpu DRM device here (the automatic backend is then drm)? */
static bool have_drm_device(void)
{
	unsigned int n = 0;

	return !vgpu_device_list(NULL, 0, &n) && n > 0;
}

/* out[tid] = tid * 2 */
static const char store_tid[] =
	".kernel store_tid\n"
	".param ptr out\n"
	"    S2R R0, SR_TID.X ;\n"
	"    LDP.64 R2, [out] ;          // R2:R3 = out\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;           // buffers lie below 4 GiB: no carry\n"
	"    IMUL R5, R0, 0x2 ;\n"
	"    STG.32 [R2], R5 ;\n"
	"    EXIT ;\n";

static const char store_tid_dump[] =
	"out:\n"
	"00000000 00000002 00000004 00000006 00000008 0000000a 0000000c 0000000e\n"
	"00000010 00000012 00000014 00000016 00000018 0000001a 0000001c 0000001e\n"
	"00000020 00000022 00000024 00000026 00000028 0000002a 0000002c 0000002e\n"
	"00000030 00000032 00000034 00000036 00000038 0000003a 0000003c 0000003e\n";

TEST_F(tool, help_exits_0)
{
	struct result r;

	run(&r, "--help");
	EXPECT_EQ(0, r.status);
	EXPECT_CONTAINS(r.out, "usage: vgpu-run");
	EXPECT_CONTAINS(r.out, "--buffer NAME:BYTES[:FILE]");
	EXPECT_CONTAINS(r.out, "--cluster X[,Y[,Z]]");
	EXPECT_CONTAINS(r.out, "--no-sanitize");
	EXPECT_CONTAINS(r.out, "--tma-latency N");
	EXPECT_CONTAINS(r.out, "--tma-bandwidth N");
	EXPECT_CONTAINS(r.out, "--tensor-map NAME:BUFFER:ELEMSIZE:DIMS:BOX[:ESTRIDES]");
	EXPECT_CONTAINS(r.out, "in the order the --buffer and --tensor-map options are given");
	EXPECT_CONTAINS(r.out, "--backend drm|sim|auto");
	EXPECT_CONTAINS(r.out, "--device NAME");
	EXPECT_CONTAINS(r.out, "Exit status: 0 ok, 1 host error");
	EXPECT_STREQ("", r.err);
}

TEST_F(tool, usage_errors_exit_2)
{
	static const char *const bad[] = {
		"",				     /* no kernel */
		"--frobnicate k.vgs",		     /* unknown flag */
		"k.vgs k.vgs",			     /* two kernels */
		"--grid 0 k.vgs",		     /* zero dimension */
		"--grid 1,0 k.vgs",		     /* zero dimension */
		"--grid abc k.vgs",		     /* garbage */
		"--grid 1,2,3,4 k.vgs",		     /* too many dims */
		"--grid 1, k.vgs",		     /* empty dim */
		"--block -32 k.vgs",		     /* sign */
		"--block 0x k.vgs",		     /* bare prefix */
		"--block 12q k.vgs",		     /* trailing garbage */
		"--seed 99999999999999999999 k.vgs", /* overflow */
		"--budget ' 5' k.vgs",		     /* leading blank */
		"--smem 010x k.vgs",		     /* garbage */
		"--buffer out k.vgs",		     /* no size */
		"--buffer :16 k.vgs",		     /* no name */
		"--buffer out:0 k.vgs",		     /* empty buffer */
		"--buffer out:16: k.vgs",	     /* empty file name */
		"--buffer out:16 --buffer out:16 k.vgs", /* duplicate */
		"--buffer out:128 --dump nope k.vgs",	 /* unknown dump */
		"--buffer out:128 missing.vgs",		 /* no such file */
		"--buffer out:128:missing.bin k.vgs",	 /* no such file */
		"--grid",				 /* missing argument */
		"--backend cuda k.vgs",			 /* unknown backend */
		"--backend k.vgs",			 /* missing argument */
		"--device '' k.vgs",			 /* empty device name */
	};

	write_text("k.vgs", store_tid);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct result r;

		run(&r, "%s", bad[i]);
		EXPECT_EQ(2, r.status)
			TH_LOG("vgpu-run %s: status %d, want 2", bad[i], r.status);
		EXPECT_CONTAINS(r.err, "vgpu-run");
		EXPECT_STREQ("", r.out);
	}
}

/* Malformed --cluster, --tma-* and --tensor-map values: exit 2, the why. */
TEST_F(tool, new_option_usage_errors_exit_2)
{
	static const struct {
		const char *args, *why;
	} bad[] = {
		{ "--cluster 0 k.vgs", "--cluster: invalid dimensions '0'" },
		{ "--cluster 1,0 k.vgs", "--cluster: invalid dimensions '1,0'" },
		{ "--cluster two k.vgs", "--cluster: invalid dimensions 'two'" },
		{ "--cluster 1,1,1,1 k.vgs", "--cluster: too many dimensions" },
		{ "--cluster 2, k.vgs", "--cluster: invalid dimensions '2,'" },
		{ "--cluster k.vgs", "--cluster: invalid dimensions 'k.vgs'" },
		{ "--grid 3 --cluster 2 k.vgs",
		  "--cluster: dimension x (2) does not divide the grid's (3)" },
		{ "--cluster 2 --grid 3 k.vgs",
		  "--cluster: dimension x (2) does not divide the grid's (3)" },
		{ "--grid 1,4 --cluster 1,8 k.vgs",
		  "--cluster: dimension y (8) does not divide the grid's (4)" },
		{ "--cluster 2 k.vgs", /* the default grid is 1 */
		  "--cluster: dimension x (2) does not divide the grid's (1)" },
		{ "--grid 32 --cluster 32 k.vgs", "--cluster: 32 CTAs per cluster, at most 16" },
		{ "--grid 4,4,2 --cluster 4,4,2 k.vgs",
		  "--cluster: 32 CTAs per cluster, at most 16" },
		{ "--tma-latency 0 k.vgs", "--tma-latency: invalid number '0' (1..4294967295)" },
		{ "--tma-latency 4294967296 k.vgs", "--tma-latency: invalid number" },
		{ "--tma-bandwidth x k.vgs", "--tma-bandwidth: invalid number 'x'" },
		{ "--tma-bandwidth 0 k.vgs", "--tma-bandwidth: invalid number '0'" },
		{ "--no-sanitize=1 k.vgs", "doesn't allow an argument" },
		{ "--tensor-map m k.vgs",
		  "--tensor-map: expected NAME:BUFFER:ELEMSIZE:DIMS:BOX[:ESTRIDES], got 'm'" },
		{ "--buffer a:64 --tensor-map m:a:4:16 k.vgs", "expected NAME:BUFFER" },
		{ "--buffer a:64 --tensor-map :a:4:16:16 k.vgs", "expected NAME:BUFFER" },
		{ "--buffer a:64 --tensor-map m:a:4:16:16:1:1 k.vgs", "expected NAME:BUFFER" },
		{ "--buffer a:64 --tensor-map m:a:4::16 k.vgs", "expected NAME:BUFFER" },
		{ "--buffer a:64 --tensor-map m:a:4:4x4:4x4: k.vgs", "expected NAME:BUFFER" },
		{ "--tensor-map m:a:4:16:16 k.vgs", "--tensor-map m: no --buffer 'a' before it" },
		{ "--tensor-map m:a:4:16:16 --buffer a:64 k.vgs",
		  "--tensor-map m: no --buffer 'a' before it" },
		{ "--buffer a:64 --tensor-map m:a:4:16:16 --tensor-map n:m:4:4:4 k.vgs",
		  "--tensor-map n: no --buffer 'm' before it" }, /* a map of a map */
		{ "--buffer a:64 --tensor-map m:a:3:16:16 k.vgs",
		  "--tensor-map m: invalid element size '3' (1, 2, 4 or 8, or a type: u32, f16, ..)" },
		{ "--buffer a:64 --tensor-map m:a:16:4:4 k.vgs", "invalid element size '16'" },
		{ "--buffer a:64 --tensor-map m:a:0:16:16 k.vgs", "invalid element size '0'" },
		{ "--buffer a:64 --tensor-map m:a:4:0:16 k.vgs",
		  "--tensor-map m: invalid dimensions '0' (want N[xN]..., each 1..4294967295)" },
		{ "--buffer a:64 --tensor-map m:a:4:4x:4x1 k.vgs", "invalid dimensions '4x'" },
		{ "--buffer a:64 --tensor-map m:a:4:x4:1x4 k.vgs", "invalid dimensions 'x4'" },
		{ "--buffer a:64 --tensor-map m:a:4:4xx4:4x4 k.vgs", "invalid dimensions '4xx4'" },
		{ "--buffer a:64 --tensor-map m:a:4:4x-4:4x4 k.vgs", "invalid dimensions '4x-4'" },
		{ "--buffer a:64 --tensor-map m:a:4:4x0x:4x4 k.vgs", "invalid dimensions '4x0x'" },
		{ "--buffer a:64 --tensor-map 'm:a:4:17 :16' k.vgs", "invalid dimensions '17 '" },
		{ "--buffer a:64 --tensor-map m:a:1:1x1x1x1x1x1:1x1x1x1x1x1 k.vgs",
		  "--tensor-map m: invalid dimensions '1x1x1x1x1x1' (too many entries, at most 5 dimensions)" },
		{ "--buffer a:64 --tensor-map m:a:4:16:257 k.vgs",
		  "--tensor-map m: invalid box '257' (want N[xN]..., each 1..256)" },
		{ "--buffer a:64 --tensor-map m:a:4:16:0 k.vgs", "invalid box '0'" },
		{ "--buffer a:64 --tensor-map m:a:4:4x4:4 k.vgs",
		  "--tensor-map m: 1 box sizes for 2 dimensions" },
		{ "--buffer a:64 --tensor-map m:a:4:4x4:4x4x4 k.vgs",
		  "--tensor-map m: 3 box sizes for 2 dimensions" },
		{ "--buffer a:64 --tensor-map m:a:4:16:16:9 k.vgs",
		  "--tensor-map m: invalid element strides '9' (want N[xN]..., each 1..8)" },
		{ "--buffer a:64 --tensor-map m:a:4:16:16:0 k.vgs", "invalid element strides '0'" },
		{ "--buffer a:64 --tensor-map m:a:4:4x4:4x4:1 k.vgs",
		  "--tensor-map m: 1 element strides for 2 dimensions" },
		{ "--buffer a:64 --tensor-map m:a:4:17:16 k.vgs",
		  "--tensor-map m: the tensor needs 68 bytes, buffer 'a' has 64" },
		{ "--buffer a:64 --tensor-map m:a:4:4x4x2:1x1x1 k.vgs",
		  "--tensor-map m: the tensor needs 128 bytes, buffer 'a' has 64" },
		{ "--buffer a:64 --tensor-map m:a:8:65536x65536x65536x65536:1x1x1x1 k.vgs",
		  "--tensor-map m: the tensor needs 18446744073709551615 bytes" }, /* overflow */
		{ "--buffer a:4096 --tensor-map m:a:4:3x4:3x4 k.vgs",
		  "--tensor-map m: the stride of dimension 1 is 12 bytes, not a multiple of 16" },
		{ "--buffer a:4096 --tensor-map m:a:1:8x3:8x3 k.vgs",
		  "--tensor-map m: the stride of dimension 1 is 8 bytes, not a multiple of 16" },
		/* a good map is one more pointer parameter */
		{ "--buffer a:4096 --tensor-map m:a:2:8x3x4:8x3x4 k.vgs",
		  "kernel 'store_tid' takes 1 pointer parameter but 2 --buffer/--tensor-map were given" },
		{ "--buffer a:64 --tensor-map a:a:4:16:16 k.vgs", "--tensor-map: duplicate name 'a'" },
		{ "--buffer a:64 --tensor-map m:a:4:16:16 --tensor-map m:a:4:16:16 k.vgs",
		  "--tensor-map: duplicate name 'm'" },
		{ "--buffer a:64 --tensor-map m:a:4:16:16 --buffer m:16 k.vgs",
		  "--buffer: duplicate buffer name 'm'" },
		{ "--buffer a:64 --dump m k.vgs", "--dump m: no such buffer or tensor map" },
	};

	write_text("k.vgs", store_tid);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct result r;

		run(&r, "%s", bad[i].args);
		EXPECT_EQ(2, r.status)
			TH_LOG("vgpu-run %s: status %d, want 2", bad[i].args,
			       r.status);
		EXPECT_CONTAINS(r.err, bad[i].why)
			TH_LOG("vgpu-run %s", bad[i].args);
		EXPECT_CONTAINS(r.err, "Try 'vgpu-run --help'");
		EXPECT_STREQ("", r.out);
	}
}

/* A kernel that only exits: the runner's own work is all there is. */
static const char just_exit[] = "    EXIT ;\n";

/*
 * The first two words after "NAME:\n" in @out are a GPU address (a
 * tensor map's base): check it is a page-aligned, non-zero address, the
 * same as *@base when that is not 0 (else store it there), and replace the
 * words by "BASE____ BASE____" so that the rest compares exactly.
 */
static void mask_base(struct __test_metadata *_metadata, char *out,
		      const char *name, uint64_t *base)
{
	char head[64];
	char *p;
	unsigned long long lo, hi;
	uint64_t addr;

	snprintf(head, sizeof(head), "%s:\n", name);
	p = strstr(out, head);
	ASSERT_NE(NULL, p);
	p += strlen(head);
	ASSERT_EQ(2, sscanf(p, "%8llx %8llx", &lo, &hi));
	addr = (uint64_t)lo | (uint64_t)hi << 32;
	EXPECT_NE(0u, addr);
	EXPECT_EQ(0u, addr % 4096);
	if (*base)
		EXPECT_EQ(*base, addr);
	*base = addr;
	memcpy(p, "BASE____ BASE____", 17);
}

/* An element type for the size: the map's dtype (byte 1 of the word after
 * dims), which tensor reductions take their type from. */
TEST_F(tool, tensor_map_element_type)
{
	struct result r;
	uint64_t base = 0;

	write_text("exit.vgs", just_exit);
	run(&r, "--buffer data:4096 --tensor-map m:data:f32.ftz:16x8x2:8x4x1:1x2x1 "
		"--dump m exit.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	mask_base(_metadata, r.out, "m", &base);
	EXPECT_STREQ(r.out,
		     "m:\n"
		     "BASE____ BASE____ 50414d54 00000403 "
		     /* dims[5], then swizzle 0, dtype 9 (f32.ftz), interleave, pad1 */
		     "00000010 00000008 00000002 00000000\n"
		     "00000000 00000900 "
		     "00000040 00000000 00000200 00000000 00000000 00000000\n"
		     "00000000 00000000 "
		     "00000008 00000004 00000001 00000000 00000000 "
		     "00000001\n00000002 00000001 00000000 00000000 "
		     "00000000 00000000 00000000 00000000\n");
	run(&r, "--buffer data:4096 --tensor-map m:data:bf16:64:16 --dump m exit.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_CONTAINS(r.out, "50414d54 00000201 00000040"); /* rank 1, 2-byte elements */
	EXPECT_CONTAINS(r.out, "00000000 00000b00 "); /* dtype 11: bf16 */
	run(&r, "--buffer data:4096 --tensor-map m:data:f33:64:16 exit.vgs");
	EXPECT_NE(0, r.status);
	EXPECT_CONTAINS(r.err, "invalid element size 'f33' (1, 2, 4 or 8, or a type: u32, f16, ..)");
}

/* Every word of the descriptor a --tensor-map writes (uapi/vgpu_hw.h). */
TEST_F(tool, tensor_map_descriptor_words)
{
	struct result r;
	uint64_t base = 0;

	write_text("exit.vgs", just_exit);
	/* 3-D: 16 x 8 x 2 floats, box 8 x 4 x 1, element strides 1 x 2 x 1 */
	run(&r, "--buffer data:4096 --tensor-map m:data:4:16x8x2:8x4x1:1x2x1 "
		"--dump m exit.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	mask_base(_metadata, r.out, "m", &base);
	EXPECT_STREQ(r.out,
		     "m:\n"
		     /* base (data's address)   magic     rank 3, elem 4 */
		     "BASE____ BASE____ 50414d54 00000403 "
		     /* dims[5]                                    pad1 */
		     "00000010 00000008 00000002 00000000\n"
		     "00000000 00000000 "
		     /* strides[4] (64-bit): 16*4, 16*8*4, 0, 0 */
		     "00000040 00000000 00000200 00000000 00000000 00000000\n"
		     "00000000 00000000 "
		     /* box[5] */
		     "00000008 00000004 00000001 00000000 00000000 "
		     /* elem_strides[5] */
		     "00000001\n00000002 00000001 00000000 00000000 "
		     /* reserved[4] */
		     "00000000 00000000 00000000 00000000\n");

	/* 1-D with hex lists (the x of 0x is no separator), and 5-D; the
	 * buffer itself is not touched; both maps describe the same buffer */
	run(&r, "--buffer data:0x1000 --tensor-map t:data:1:0x40:0x10 "
		"--tensor-map f:data:2:8x2x2x2x2:8x2x2x2x2:8x1x1x1x2 "
		"--dump t --dump f exit.vgs");
	EXPECT_EQ(0, r.status);
	base = 0;
	mask_base(_metadata, r.out, "t", &base);
	mask_base(_metadata, r.out, "f", &base);
	EXPECT_STREQ(r.out,
		     "t:\n"
		     "BASE____ BASE____ 50414d54 00000101 00000040 00000000 00000000 00000000\n"
		     "00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
		     "00000000 00000000 00000010 00000000 00000000 00000000 00000000 00000001\n"
		     "00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000\n"
		     "f:\n"
		     "BASE____ BASE____ 50414d54 00000205 00000008 00000002 00000002 00000002\n"
		     "00000002 00000000 00000010 00000000 00000020 00000000 00000040 00000000\n"
		     "00000080 00000000 00000008 00000002 00000002 00000002 00000002 00000008\n"
		     "00000001 00000001 00000001 00000002 00000000 00000000 00000000 00000000\n");

	/* a tensor that fills its buffer exactly is fine */
	run(&r, "--buffer data:64 --tensor-map m:data:4:4x4:4x4 --dump data exit.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(r.out, "data:\n00000000 00000000 00000000 00000000 00000000 00000000 "
			    "00000000 00000000\n00000000 00000000 00000000 00000000 "
			    "00000000 00000000 00000000 00000000\n");
}

/* Parse the hex words of a --dump printed as NAME:\n...; returns the count. */
static int dump_words(const char *out, const char *name, uint32_t *w, int max)
{
	char head[64];
	const char *p;
	int n = 0;

	snprintf(head, sizeof(head), "%s:\n", name);
	p = strstr(out, head);
	if (!p)
		return -1;
	p += strlen(head);
	while (n < max) {
		char *end;
		unsigned long v;

		p += strspn(p, " \n");
		v = strtoul(p, &end, 16);
		if (end == p || *end == ':') /* the end, or the next dump */
			break;
		w[n++] = (uint32_t)v;
		p = end;
	}
	return n;
}

/*
 * The kernel parameters are the buffers and tensor maps in command-line
 * order: p0 = out, p1 = map of out, p2 = x, p3 = map of x.  The kernel
 * stores its parameters, the bases of both maps and their magics in out.
 */
TEST_F(tool, params_are_buffers_and_tensor_maps_in_order)
{
	static const char store_params[] =
		"    LDP.64 R2, [0x0] ;\n"
		"    LDP.64 R4, [0x8] ;\n"
		"    LDP.64 R6, [0x10] ;\n"
		"    LDP.64 R8, [0x18] ;\n"
		"    LDG.64 R10, [R4] ;          // base of the first map\n"
		"    LDG.64 R12, [R8] ;          // base of the second\n"
		"    LDG R14, [R4+0x8] ;         // magics\n"
		"    LDG R15, [R8+0x8] ;\n"
		"    STG.64 [R2], R2 ;\n"
		"    STG.64 [R2+0x8], R4 ;\n"
		"    STG.64 [R2+0x10], R6 ;\n"
		"    STG.64 [R2+0x18], R8 ;\n"
		"    STG.64 [R2+0x20], R10 ;\n"
		"    STG.64 [R2+0x28], R12 ;\n"
		"    STG.64 [R2+0x30], R14 ;\n"
		"    EXIT ;\n";
	uint32_t w[16];
	uint64_t p[7];
	struct result r;

	write_text("params.vgs", store_params);
	run(&r, "--block 1 --buffer out:64 --tensor-map m:out:4:16:16 --buffer x:16 "
		"--tensor-map n:x:4:4:4 --dump out params.vgs");
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(16, dump_words(r.out, "out", w, 16));
	for (int i = 0; i < 7; i++)
		p[i] = w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
	EXPECT_NE(0u, p[0]);
	/* four distinct buffer objects, page-aligned */
	EXPECT_TRUE(p[0] != p[1] && p[0] != p[2] && p[0] != p[3] && p[1] != p[2] &&
		    p[1] != p[3] && p[2] != p[3]);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0u, p[i] % 4096);
	EXPECT_EQ(p[0], p[4]);		 /* m describes out */
	EXPECT_EQ(p[2], p[5]);		 /* n describes x */
	EXPECT_EQ(0x50414d5450414d54ull, p[6]); /* both magics */
	EXPECT_EQ(VGPU_TMAP_MAGIC, w[12]);

	/* declared parameters: each ptr/u64 takes the next region, in order */
	write_text("decl.vgs", ".kernel decl\n"
			       ".param ptr a\n"
			       ".param u32 n\n"
			       ".param ptr m\n"
			       "    LDP.64 R2, [a] ;\n"
			       "    LDP.64 R4, [m] ;\n"
			       "    LDG.64 R6, [R4] ;\n"
			       "    STG.64 [R2], R6 ;\n"
			       "    LDG R8, [R4+0xc] ;       // rank and element size\n"
			       "    STG [R2+0x8], R8 ;\n"
			       "    LDP R9, [n] ;\n"
			       "    STG [R2+0xc], R9 ;\n"
			       "    STG.64 [R2+0x10], R2 ;   // a itself\n"
			       "    EXIT ;\n");
	run(&r, "--block 1 --buffer a:24 --tensor-map m:a:2:8:8 --dump a decl.vgs");
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(6, dump_words(r.out, "a", w, 16));
	EXPECT_NE(0u, w[0] | w[1]);
	EXPECT_EQ(w[4], w[0]); /* m's base is a's address */
	EXPECT_EQ(w[5], w[1]);
	EXPECT_EQ(0x201u, w[2]); /* rank 1, element size 2 */
	EXPECT_EQ(0u, w[3]);     /* n: zero, nothing sets it */
	/* one region short: the usual count error */
	run(&r, "--block 1 --buffer a:16 decl.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "kernel 'decl' takes 2 pointer parameters but 1 "
			       "--buffer/--tensor-map was given");
}

/*
 * The launch options reach the core: sanitizer on by default (an
 * ordinary store onto a live mbarrier is an exception) and off with
 * --no-sanitize; --cluster sets the cluster dims; --tma-latency and
 * --tma-bandwidth set the copy engine's timing (a copy cannot complete
 * before its latency, nor faster than its bandwidth).
 */
TEST_F(tool, launch_options_reach_the_core)
{
	struct result r;
	uint32_t w[8];

	write_text("san.vgs", ".shared bar, 8\n"
			      "    MOV R2, bar ;\n"
			      "    MBAR.INIT [R2], 0x1 ;\n"
			      "    STS [R2], RZ ;\n"
			      "    EXIT ;\n");
	run(&r, "--block 1 san.vgs");
	EXPECT_EQ(3, r.status);
	EXPECT_CONTAINS(r.err, "ordinary access to a live mbarrier");
	run(&r, "--block 1 --no-sanitize san.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);

	write_text("cl.vgs", ".param ptr out\n"
			     "    S2R R0, SR_CTAID.X ;\n"
			     "    S2R R1, SR_CLUSTER_NCTARANK ;\n"
			     "    S2R R5, SR_CLUSTER_CTARANK ;\n"
			     "    LDP.64 R2, [out] ;\n"
			     "    SHL R4, R0, 0x3 ;\n"
			     "    IADD R2, R2, R4 ;\n"
			     "    STG [R2], R1 ;\n"
			     "    STG [R2+0x4], R5 ;\n"
			     "    EXIT ;\n");
	run(&r, "--block 1 --grid 4 --cluster 2 --buffer out:32 --dump out cl.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(r.out, "out:\n00000002 00000000 00000002 00000001 "
			    "00000002 00000000 00000002 00000001\n");
	run(&r, "--block 1 --grid 4 --buffer out:32 --dump out cl.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(r.out, "out:\n00000001 00000000 00000001 00000000 "
			    "00000001 00000000 00000001 00000000\n");

	/* cycles one 4 KiB bulk copy takes, from issue to the phase flip */
	write_text("lat.vgs", ".param ptr out\n"
			      ".param ptr src\n"
			      ".shared bar, 8\n"
			      ".shared buf, 4096\n"
			      "    MOV R2, bar ;\n"
			      "    MBAR.INIT [R2], 0x1 ;\n"
			      "    MOV R6, buf ;\n"
			      "    LDP.64 R8, [src] ;\n"
			      "    S2R R10, SR_CLOCKLO ;\n"
			      "    CP.ASYNC.BULK [R6], [R8], 0x1000, [R2] ;\n"
			      "    MBAR.ARRIVE.EXPECT_TX _, [R2], 0x1000 ;\n"
			      "wait:\n"
			      "    MBAR.TRY_WAIT.PARITY P0, [R2], 0x0 ;\n"
			      "@!P0 BRA wait ;\n"
			      "    S2R R11, SR_CLOCKLO ;\n"
			      "    ISUB R11, R11, R10 ;\n"
			      "    LDP.64 R12, [out] ;\n"
			      "    STG [R12], R11 ;\n"
			      "    EXIT ;\n");
	run(&r, "--block 1 --buffer out:4 --buffer src:4096 --dump out lat.vgs");
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(1, dump_words(r.out, "out", w, 1));
	EXPECT_LT(w[0], 100000u);
	run(&r, "--block 1 --tma-latency 100000 --buffer out:4 --buffer src:4096 "
		"--dump out lat.vgs");
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(1, dump_words(r.out, "out", w, 1));
	EXPECT_TRUE(w[0] >= 100000 && w[0] < 200000);
	run(&r, "--block 1 --tma-latency 1 --tma-bandwidth 1 --buffer out:4 "
		"--buffer src:4096 --dump out lat.vgs");
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(1, dump_words(r.out, "out", w, 1));
	EXPECT_TRUE(w[0] >= 4096 && w[0] < 100000);
}

TEST_F(tool, block_over_limit_rejected_by_validation)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--block 2048 --buffer out:8192 k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "invalid launch");
	run(&r, "--block 32,32,2 --buffer out:8192 k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "invalid launch");
}

TEST_F(tool, buffer_count_must_match_params)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "1 pointer parameter");
	run(&r, "--buffer a:128 --buffer b:128 k.vgs");
	EXPECT_EQ(2, r.status);
}

TEST_F(tool, assembly_error_exits_2)
{
	struct result r;

	write_text("bad.vgs", "    FROB R0, R1 ;\n    EXIT ;\n");
	run(&r, "bad.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "bad.vgs:1:");
	EXPECT_CONTAINS(r.err, "error");
	EXPECT_STREQ("", r.out);
}

TEST_F(tool, store_tid_dump_exact)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--buffer out:128 --dump out k.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(store_tid_dump, r.out);
	EXPECT_STREQ("", r.err);

	/* same result with a decimal/hex mix and an explicit default block */
	run(&r, "--block 0x20,1,1 --grid 1 --buffer out:0x80 --dump out k.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(store_tid_dump, r.out);
}

TEST_F(tool, dump_partial_line_and_trailing_bytes)
{
	struct result r;

	write_text("k.vgs", store_tid);
	/* 10 words: one full line and a partial one; 2 stray bytes ignored */
	run(&r, "--block 10 --buffer out:42 --dump out k.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(r.out,
		     "out:\n"
		     "00000000 00000002 00000004 00000006 00000008 0000000a "
		     "0000000c 0000000e\n"
		     "00000010 00000012\n");
	/* a dump smaller than a word prints only its name */
	run(&r, "--block 1 --buffer out:4 --dump out --dump out k.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("out:\n00000000\nout:\n00000000\n", r.out);
}

TEST_F(tool, random_schedule_same_result)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--random-schedule --seed 12345 --buffer out:128 --dump out "
		"k.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(store_tid_dump, r.out);
}

TEST_F(tool, object_file_input)
{
	struct vgpu_object obj = { 0 };
	uint8_t *bytes = NULL;
	struct result r;
	char err[1024];
	size_t len = 0;

	ASSERT_EQ(0,
		  vgpu_assemble(store_tid, strlen(store_tid), "store_tid.vgs",
				&obj, err, sizeof(err)));
	ASSERT_EQ(0, vgpu_object_write(&obj, &bytes, &len));
	write_file("k.vgo", bytes, len);
	free(bytes);
	vgpu_object_fini(&obj);

	run(&r, "--buffer out:128 --dump out k.vgo");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(store_tid_dump, r.out);
}

/* in[tid] += tid, on a buffer initialised from a file */
TEST_F(tool, buffer_from_file)
{
	static const uint8_t init[8] = { 0x11, 0x11, 0x11, 0x11,
					 0x22, 0x22, 0x22, 0x22 };
	struct result r;

	write_text("add.vgs", ".kernel add_tid\n"
			      ".param ptr data\n"
			      "    S2R R0, SR_TID.X ;\n"
			      "    LDP.64 R2, [data] ;\n"
			      "    SHL R4, R0, 0x2 ;\n"
			      "    IADD R2, R2, R4 ;\n"
			      "    LDG.32 R5, [R2] ;\n"
			      "    IADD R5, R5, R0 ;\n"
			      "    STG.32 [R2], R5 ;\n"
			      "    EXIT ;\n");
	write_file("init.bin", init, sizeof(init));
	run(&r, "--block 4 --buffer data:16:init.bin --dump data add.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("data:\n11111111 22222223 00000002 00000003\n", r.out);

	/* a file larger than the buffer is a usage error */
	run(&r, "--block 1 --buffer data:4:init.bin --dump data add.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "larger than");
}

/* Two parameters: buffers bind in the order given. */
TEST_F(tool, params_in_order_and_kernel_selection)
{
	struct result r;

	write_text("two.vgs", ".kernel first\n"
			      ".param ptr x\n"
			      "    EXIT ;\n"
			      ".kernel second\n"
			      ".param ptr a\n"
			      ".param ptr b\n"
			      "    S2R R0, SR_TID.X ;\n"
			      "    SHL R4, R0, 0x2 ;\n"
			      "    LDP.64 R2, [a] ;\n"
			      "    IADD R2, R2, R4 ;\n"
			      "    STG.32 [R2], R0 ;\n"
			      "    LDP.64 R6, [b] ;\n"
			      "    IADD R6, R6, R4 ;\n"
			      "    IMUL R5, R0, 0x3 ;\n"
			      "    STG.32 [R6], R5 ;\n"
			      "    EXIT ;\n");
	run(&r, "--kernel second --block 4 --buffer a:16 --buffer b:16 "
		"--dump b --dump a two.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(r.out, "b:\n00000000 00000003 00000006 00000009\n"
			    "a:\n00000000 00000001 00000002 00000003\n");

	/* the first kernel is the default, and takes one buffer */
	run(&r, "--buffer x:4 --dump x two.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("x:\n00000000\n", r.out);

	run(&r, "--kernel third --buffer x:4 two.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "third");
}

/* Global index over a 2-CTA grid: out[ctaid * ntid + tid] = that index. */
TEST_F(tool, grid_of_ctas)
{
	struct result r;

	write_text("gid.vgs", ".kernel gid\n"
			      ".param ptr out\n"
			      "    S2R R0, SR_TID.X ;\n"
			      "    S2R R1, SR_CTAID.X ;\n"
			      "    S2R R6, SR_NTID.X ;\n"
			      "    IMAD R0, R1, R6, R0 ;\n"
			      "    SHL R4, R0, 0x2 ;\n"
			      "    LDP.64 R2, [out] ;\n"
			      "    IADD R2, R2, R4 ;\n"
			      "    STG.32 [R2], R0 ;\n"
			      "    EXIT ;\n");
	run(&r, "--grid 2 --block 4 --buffer out:32 --dump out gid.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(r.out, "out:\n00000000 00000001 00000002 00000003 "
			    "00000004 00000005 00000006 00000007\n");
}

TEST_F(tool, store_past_end_faults)
{
	struct result r;

	/*
	 * each thread stores one word past the end of a 128-byte buffer, in
	 * the page after it: buffer objects are whole pages, and the page
	 * after one is never mapped
	 */
	write_text("oob.vgs", ".kernel oob\n"
			      ".param ptr out\n"
			      "    S2R R0, SR_TID.X ;\n"
			      "    LDP.64 R2, [out] ;\n"
			      "    SHL R4, R0, 0x2 ;\n"
			      "    IADD R2, R2, R4 ;\n"
			      "    IADD R2, R2, 0x1000 ;\n"
			      "    STG.32 [R2], R0 ;\n"
			      "    EXIT ;\n");
	run(&r, "--buffer out:128 --dump out oob.vgs");
	EXPECT_EQ(3, r.status);
	EXPECT_CONTAINS(r.err, "global memory fault");
	EXPECT_CONTAINS(r.err, "STG");
	EXPECT_CONTAINS(r.err, "cta (0,0,0)");
	EXPECT_STREQ("", r.out); /* no dump after a failed run */
}

TEST_F(tool, budget_exceeded)
{
	struct result r;

	write_text("loop.vgs", "loop:\n"
			       "    BRA loop ;\n");
	run(&r, "--budget 1000 loop.vgs");
	EXPECT_EQ(3, r.status);
	EXPECT_CONTAINS(r.err, "budget");
}

/* Warp 0 waits for 64 arrivals on barrier 1; warp 1 exits instead. */
TEST_F(tool, deadlock_reports_warp_states)
{
	struct result r;

	write_text("dl.vgs", "    S2R R0, SR_WARPID ;\n"
			     "    ISETP.NE.U32 P0, R0, 0x0 ;\n"
			     "@P0 EXIT ;\n"
			     "    BAR.SYNC 0x1, 0x40 ;\n"
			     "    EXIT ;\n");
	run(&r, "--block 64 dl.vgs");
	EXPECT_EQ(3, r.status);
	EXPECT_CONTAINS(r.err, "deadlock");
	EXPECT_CONTAINS(r.err, "warp  0: barrier 1");
	EXPECT_CONTAINS(r.err, "warp  1: exited");
	EXPECT_CONTAINS(r.err, "BAR.SYNC");
}

TEST_F(tool, trace_prints_events)
{
	struct result r;

	write_text("bar.vgs", "    BAR.SYNC 0x0 ;\n"
			      "    EXIT ;\n");
	run(&r, "--block 64 --trace bar.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_CONTAINS(r.err, "CTA_BEGIN");
	EXPECT_CONTAINS(r.err, "BAR_ARRIVE");
	EXPECT_CONTAINS(r.err, "BAR_COMPLETE");
	EXPECT_CONTAINS(r.err, "CTA_END");
	EXPECT_STREQ("", r.out);
}

/*
 * --backend and --device choose the device as vgpu_device_open() does; the
 * automatic choice (no flag, VGPU_BACKEND unset) is sim without a vgpu DRM
 * device.  Conflicts and unknown names are usage errors (2); a drm device
 * that is not there is a host error (1).
 */
TEST_F(tool, backend_and_device_flags)
{
	static const char *const same[] = {
		"--backend sim", "--backend auto", "--device sim",
		"--device sim --backend sim", "--device sim --backend auto",
	};
	struct result r;

	write_text("k.vgs", store_tid);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		run(&r, "%s --buffer out:128 --dump out k.vgs", same[i]);
		EXPECT_EQ(0, r.status);
		EXPECT_STREQ(store_tid_dump, r.out);
		EXPECT_STREQ("", r.err);
	}

	/* VGPU_BACKEND: unset is auto, sim is sim, anything else an error */
	run_tool(&r, "vgpu-run", "env -u VGPU_BACKEND",
		 "--buffer out:128 --dump out k.vgs");
	if (!have_drm_device()) {
		EXPECT_EQ(0, r.status);
		EXPECT_STREQ(store_tid_dump, r.out);
	}
	run_tool(&r, "vgpu-run", "VGPU_BACKEND=cuda",
		 "--buffer out:128 --dump out k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "VGPU_BACKEND='cuda' is not drm, sim or auto");
	EXPECT_STREQ("", r.out);
	/* --backend sim wins over the environment */
	run_tool(&r, "vgpu-run", "VGPU_BACKEND=cuda",
		 "--backend sim --buffer out:128 --dump out k.vgs");
	EXPECT_EQ(0, r.status);

	run(&r, "--device sim --backend drm --buffer out:128 k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "--device sim is a sim device, not --backend drm");
	run(&r, "--device gpu0 --buffer out:128 k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "--device: 'gpu0' names no device");
	EXPECT_CONTAINS(r.err, "Try 'vgpu-run --help'");

	if (have_drm_device())
		return;
	/* no vgpu device here: drm, a slot or a node cannot be opened */
	run(&r, "--backend drm --buffer out:128 k.vgs");
	EXPECT_EQ(1, r.status);
	EXPECT_CONTAINS(r.err, "vgpu-run: cannot open device 'drm'");
	run(&r, "--device 0000:00:03.0 --buffer out:128 k.vgs");
	EXPECT_EQ(1, r.status);
	EXPECT_CONTAINS(r.err, "0000:00:03.0");
	run(&r, "--device /dev/null --buffer out:128 k.vgs");
	EXPECT_EQ(1, r.status);
	EXPECT_STREQ("", r.out);
}

/* A launch the device refuses is a launch error (2), not an exception. */
TEST_F(tool, bad_launch_exits_2)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--smem 0xfffffff0 --buffer out:128 k.vgs");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "vgpu-run: invalid launch");
	EXPECT_STREQ("", r.out);
}

/* ---- the other tools ---- */

TEST_F(tool, vgpu_info_sim)
{
	static const char *const params[] = {
		"DEVICE_ID", "REVISION", "HW_VERSION", "SMS", "SMEM",
		"MAX_THREADS", "BARRIERS", "FEATURES", "QUEUES", "WARP_SIZE",
		"MAX_PARAM", "MAX_CODE", "VA_BITS", "VA_START", "VA_SIZE",
		"RESET_COUNT", "FILE_RESET_COUNT", "JOB_TIMEOUT_MS",
		"DRIVER_VERSION",
	};
	struct result r;
	char line[64];

	run_tool(&r, "vgpu-info", NULL, "--backend sim");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("", r.err);
	EXPECT_CONTAINS(r.out, "device sim\n");
	EXPECT_CONTAINS(r.out, "  backend: sim\n");
	EXPECT_CONTAINS(r.out, "  ids:     7690:0001 revision 1\n");
	for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
		snprintf(line, sizeof(line), "\n    %-18s ", params[i]);
		EXPECT_CONTAINS(r.out, line);
	}
	EXPECT_CONTAINS(r.out, "    WARP_SIZE          32\n");
	EXPECT_CONTAINS(r.out, "  features: MMU");
	EXPECT_CONTAINS(r.out, " MBARRIER");
	EXPECT_CONTAINS(r.out, " TMA");

	/* the same device through --device, and one parameter alone */
	run_tool(&r, "vgpu-info", NULL, "--device sim");
	EXPECT_EQ(0, r.status);
	EXPECT_CONTAINS(r.out, "  backend: sim\n");
	run_tool(&r, "vgpu-info", NULL, "--device sim --param warp_size");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("32\n", r.out);
	run_tool(&r, "vgpu-info", NULL, "-b sim -p VGPU_PARAM_DEVICE_ID");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ("1989148673\n", r.out); /* 0x76900001 */

	/* no option: the drm devices (none on this host), then sim */
	if (!have_drm_device()) {
		run_tool(&r, "vgpu-info", "env -u VGPU_BACKEND", "%s", "");
		EXPECT_EQ(0, r.status);
		EXPECT_EQ(0, strncmp(r.out, "drm devices: 0\ndevice sim\n", 26));
		run_tool(&r, "vgpu-info", NULL, "--list");
		EXPECT_EQ(0, r.status);
		EXPECT_STREQ("drm devices: 0\n", r.out);
		run_tool(&r, "vgpu-info", NULL, "--backend drm");
		EXPECT_EQ(1, r.status);
		EXPECT_CONTAINS(r.err, "vgpu-info: no drm device");
		run_tool(&r, "vgpu-info", NULL, "--device 0000:00:03.0");
		EXPECT_EQ(1, r.status);
		EXPECT_CONTAINS(r.err, "vgpu-info: cannot open device '0000:00:03.0'");
	}
}

TEST_F(tool, tools_help_and_usage_errors)
{
	static const struct {
		const char *tool, *args;
		int status;
		const char *text;
	} cases[] = {
		{ "vgpu-info", "--help", 0, "Exit status: 0 ok, 1 no such device" },
		{ "vgpu-info", "-h", 0, "usage: vgpu-info" },
		{ "vgpu-info", "--frob", 2, "Try 'vgpu-info --help'" },
		{ "vgpu-info", "extra", 2, "unexpected argument 'extra'" },
		{ "vgpu-info", "--backend cuda", 2, "--backend: not drm, sim or auto: 'cuda'" },
		{ "vgpu-info", "--param NOPE", 2, "--param: no such parameter: 'NOPE'" },
		{ "vgpu-info", "--device sim --backend sim", 2, "exclude each other" },
		{ "vgpu-info", "--list --param SMS", 2, "exclude each other" },
		{ "vgpu-info", "--device ''", 2, "--device: empty name" },
		{ "vgpu-info", "--device gpu0", 1, "cannot open device 'gpu0'" },
		{ "vgpu-as", "--help", 0, "Exit status: 0 ok, 1 assembly or I/O error, 2 usage error" },
		{ "vgpu-as", "", 2, "expected exactly one input file" },
		{ "vgpu-as", "--frob k.vgs", 2, "usage: vgpu-as" },
		{ "vgpu-as", "missing.vgs", 1, "missing.vgs" },
		{ "vgpu-as", "-o - bad.vgs", 1, "bad.vgs:1:" },
		{ "vgpu-objdump", "--help", 0, "Exit status: 0 ok, 1 bad input or I/O error, 2 usage error" },
		{ "vgpu-objdump", "", 2, "expected exactly one input file" },
		{ "vgpu-objdump", "a b", 2, "expected exactly one input file" },
		{ "vgpu-objdump", "missing.vgo", 1, "missing.vgo" },
		{ "vgpu-objdump", "bad.vgs", 1, "bad.vgs:1:" },
	};

	write_text("k.vgs", store_tid);
	write_text("bad.vgs", "    FROB R0 ;\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct result r;

		run_tool(&r, cases[i].tool, NULL, "%s", cases[i].args);
		EXPECT_EQ(cases[i].status, r.status)
			TH_LOG("%s %s: status %d, want %d", cases[i].tool,
			       cases[i].args, r.status, cases[i].status);
		EXPECT_CONTAINS(cases[i].status ? r.err : r.out, cases[i].text)
			TH_LOG("%s %s: no \"%s\" in:\n%s%s", cases[i].tool,
			       cases[i].args, cases[i].text, r.out, r.err);
	}
}

/* vgpu-as, vgpu-objdump and vgpu-run agree on an object file. */
TEST_F(tool, as_objdump_run_round_trip)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run_tool(&r, "vgpu-as", NULL, "-o k.vgo k.vgs");
	EXPECT_EQ(0, r.status);
	run_tool(&r, "vgpu-objdump", NULL, "k.vgo");
	EXPECT_EQ(0, r.status);
	EXPECT_CONTAINS(r.out, ".kernel store_tid");
	write_text("k2.vgs", r.out);
	run(&r, "--buffer out:128 --dump out k2.vgs");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(store_tid_dump, r.out);
	run(&r, "--buffer out:128 --dump out k.vgo");
	EXPECT_EQ(0, r.status);
	EXPECT_STREQ(store_tid_dump, r.out);
}

/*
 * PTX: vgpu-run takes a .ptx file through the front end, --arg gives the
 * parameters in order at PTX's offsets, --kernel picks an .entry;
 * vgpu-ptxas -S shows the generated assembly.  (Clang's output for
 * out[t] = a + hi(b) + lo(b) + (u32)(2f) + in[t], one more kernel.)
 */
static const char args_ptx[] =
	"//\n// Generated by LLVM NVPTX Back-End\n//\n\n"
	".version 8.5\n.target sm_90a\n.address_size 64\n\n"
	".visible .entry args(\n"
	"\t.param .u64 args_param_0,\n\t.param .u32 args_param_1,\n"
	"\t.param .u64 args_param_2,\n\t.param .f32 args_param_3,\n"
	"\t.param .u64 args_param_4\n)\n{\n"
	"\t.reg .b32 \t%r<11>;\n\t.reg .f32 \t%f<3>;\n\t.reg .b64 \t%rd<9>;\n\n"
	"\tld.param.u64 \t%rd1, [args_param_0];\n"
	"\tld.param.u64 \t%rd2, [args_param_4];\n"
	"\tcvta.to.global.u64 \t%rd3, %rd2;\n"
	"\tld.param.u32 \t%r1, [args_param_1];\n"
	"\tcvta.to.global.u64 \t%rd4, %rd1;\n"
	"\tld.param.u64 \t%rd5, [args_param_2];\n"
	"\tmov.u32 \t%r2, %tid.x;\n"
	"\tld.param.f32 \t%f1, [args_param_3];\n"
	"\t{ .reg .b32 tmp; mov.b64 {tmp, %r3}, %rd5; }\n"
	"\tcvt.u32.u64 \t%r4, %rd5;\n"
	"\tadd.f32 \t%f2, %f1, %f1;\n"
	"\tcvt.rzi.u32.f32 \t%r5, %f2;\n"
	"\tmul.wide.u32 \t%rd6, %r2, 4;\n"
	"\tadd.s64 \t%rd7, %rd3, %rd6;\n"
	"\tld.global.u32 \t%r6, [%rd7];\n"
	"\tadd.s32 \t%r7, %r4, %r1;\n"
	"\tadd.s32 \t%r8, %r7, %r3;\n"
	"\tadd.s32 \t%r9, %r8, %r5;\n"
	"\tadd.s32 \t%r10, %r9, %r6;\n"
	"\tadd.s64 \t%rd8, %rd4, %rd6;\n"
	"\tst.global.u32 \t[%rd8], %r10;\n"
	"\tret;\n}\n\n"
	".visible .entry seven(\n\t.param .u64 seven_param_0\n)\n{\n"
	"\t.reg .b32 \t%r<3>;\n\t.reg .b64 \t%rd<3>;\n"
	"\tld.param.u64 \t%rd1, [seven_param_0];\n"
	"\tcvta.to.global.u64 \t%rd2, %rd1;\n"
	"\tmov.u32 \t%r1, 7;\n"
	"\tst.global.u32 \t[%rd2], %r1;\n"
	"\tret;\n}\n";

TEST_F(tool, ptx_kernels_and_args)
{
	static const uint8_t in[8] = { 1, 0, 0, 0, 2, 0, 0, 0 };
	struct result r;

	write_text("k.ptx", args_ptx);
	write_file("in.bin", in, sizeof(in));
	/* -5 + 3 + 4 + (u32)(2 * 2.5) + in[t] */
	run(&r, "--block 2 --buffer out:8 --buffer in:8:in.bin --arg ptr:out "
		"--arg s32:-5 --arg u64:0x300000004 --arg f32:2.5 --arg ptr:in "
		"--dump out k.ptx");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("out:\n00000008 00000009\n", r.out);
	/* the second .entry */
	run(&r, "--kernel seven --buffer o:4 --arg ptr:o --dump o k.ptx");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("o:\n00000007\n", r.out);
	/* a --buffer named by no --arg is no parameter */
	run(&r, "--kernel seven --buffer spare:4 --buffer o:4 --arg ptr:o --dump o k.ptx");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("o:\n00000007\n", r.out);

	/* wrong count, type, reference, value: usage errors */
	run(&r, "--block 2 --buffer out:8 --arg ptr:out --arg s32:-5 k.ptx");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "kernel 'args' takes more parameters than the 2 --arg values given");
	run(&r, "--block 2 --buffer out:8 --buffer in:8 --arg ptr:out --arg u64:1 "
		"--arg u64:0 --arg f32:1 --arg ptr:in k.ptx");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "--arg u64:1 (argument 2): kernel 'args' has no 8-byte parameter at offset 8");
	run(&r, "--buffer out:8 --arg x32:1 k.ptx");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "--arg: expected TYPE:VALUE");
	run(&r, "--buffer out:8 --arg ptr:nope k.ptx");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "--arg ptr:nope: no --buffer 'nope' before it");
	run(&r, "--buffer out:8 --arg s32:3000000000 k.ptx");
	EXPECT_EQ(2, r.status);
	run(&r, "--buffer out:8 --arg f32:pi k.ptx");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "'pi' is not a number");

	/* unsupported PTX: the file, line and construct; exit status 2 */
	write_text("bad.ptx", ".version 8.5\n.target sm_90a\n.address_size 64\n"
			      ".visible .entry k()\n{\n .reg .f64 %fd<2>;\n"
			      " wgmma.fence.sync.aligned;\n ret;\n}\n");
	run(&r, "bad.ptx");
	EXPECT_EQ(2, r.status);
	EXPECT_CONTAINS(r.err, "bad.ptx:7:2: error: unsupported PTX instruction 'wgmma.fence.sync.aligned'");

	/* vgpu-ptxas: -S prints the assembly, else an object vgpu-run runs */
	run_tool(&r, "vgpu-ptxas", NULL, "-S -o - k.ptx");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_CONTAINS(r.out, ".kernel args\n.param u64 arg0\n.param u32 arg1\n");
	EXPECT_CONTAINS(r.out, ".kernel seven\n");
	EXPECT_CONTAINS(r.out, "LDG.32 ");
	run_tool(&r, "vgpu-ptxas", NULL, "-o k.vgo k.ptx");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	run(&r, "--kernel seven --buffer o:4 --dump o k.vgo");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("o:\n00000007\n", r.out);
	run_tool(&r, "vgpu-ptxas", NULL, "bad.ptx");
	EXPECT_EQ(1, r.status);
	EXPECT_CONTAINS(r.err, "bad.ptx:7:2: error: unsupported PTX instruction");
	run_tool(&r, "vgpu-ptxas", NULL, "%s", "-S");
	EXPECT_EQ(2, r.status);

	/* several inputs are linked: k2 calls tw, defined in the other file */
	write_text("use.ptx", ".version 8.0\n.target sm_90a\n.address_size 64\n"
			      ".extern .func (.param .b32 r) tw(.param .b32 x);\n"
			      ".visible .entry k2(.param .u64 p)\n{\n.reg .b32 %r<3>;\n"
			      ".reg .b64 %d;\nld.param.u64 %d, [p];\nmov.u32 %r1, 21;\n"
			      "{\n.param .b32 a;\n.param .b32 b;\nst.param.b32 [a], %r1;\n"
			      "call (b), tw, (a);\nld.param.b32 %r2, [b];\n}\n"
			      "st.global.u32 [%d], %r2;\nret;\n}\n");
	write_text("def.ptx", ".version 8.0\n.target sm_90a\n.address_size 64\n"
			      ".visible .func (.param .b32 r) tw(.param .b32 x)\n{\n"
			      ".reg .b32 %q;\nld.param.b32 %q, [x];\nshl.b32 %q, %q, 1;\n"
			      "st.param.b32 [r], %q;\nret;\n}\n");
	run_tool(&r, "vgpu-ptxas", NULL, "-o linked.vgo use.ptx def.ptx");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	run(&r, "--kernel k2 --buffer o:4 --arg ptr:o --dump o linked.vgo");
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_STREQ("o:\n0000002a\n", r.out);
	run_tool(&r, "vgpu-ptxas", NULL, "-o linked.vgo use.ptx");
	EXPECT_EQ(1, r.status);
	run_tool(&r, "vgpu-ptxas", NULL, "-o linked.vgo use.ptx k.ptx");
	EXPECT_EQ(1, r.status);
	EXPECT_CONTAINS(r.err, "use.ptx:4:31: error: undefined reference to the .extern function 'tw'");
	/* the compile's errors name the input and its line */
	run_tool(&r, "vgpu-ptxas", NULL, "-o linked.vgo use.ptx def.ptx bad.ptx");
	EXPECT_EQ(1, r.status);
	EXPECT_CONTAINS(r.err, "bad.ptx:7:2: error: unsupported PTX instruction 'wgmma.fence.sync.aligned'");
}

TEST_HARNESS_MAIN
