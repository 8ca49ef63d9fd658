/* SPDX-License-Identifier: MIT */
/*
 * vgpu-run, end to end: write small kernels to a temporary directory, run
 * build/bin/vgpu-run on them and compare stdout, stderr and exit status.
 * The runner is found next to this binary: BUILD/tests/test_runner runs
 * BUILD/bin/vgpu-run.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "vgpu_asm.h"

static char runner[PATH_MAX];
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

static void cleanup(void)
{
	char cmd[PATH_MAX + 16];

	if (tmpdir[0]) {
		xfmt(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
}

__attribute__((constructor)) static void setup(void)
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
	xfmt(runner, sizeof(runner), "%s/bin/vgpu-run", exe);

	xfmt(tmpdir, sizeof(tmpdir), "%s/vgpu-runner-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		exit(1);
	}
	atexit(cleanup);
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
 * Run "vgpu-run ARGS" in the temporary directory (so kernel and data
 * files are named relative to it), capturing stdout and stderr.
 */
static void run(struct result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void run(struct result *r, const char *fmt, ...)
{
	char args[2048], cmd[2 * PATH_MAX + 2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	xfmt(cmd, sizeof(cmd), "cd '%s' && '%s' %s >stdout 2>stderr",
		 tmpdir, runner, args);
	st = system(cmd);
	r->status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	slurp("stdout", r->out, sizeof(r->out));
	slurp("stderr", r->err, sizeof(r->err));
	if (r->status != 0 && r->status != 2 && r->status != 3)
		fprintf(stderr, "  vgpu-run %s: status %d\n%s", args, r->status,
			r->err);
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

TEST(help_exits_0)
{
	struct result r;

	run(&r, "--help");
	CHECK_EQ(r.status, 0);
	CHECK_CONTAINS(r.out, "usage: vgpu-run");
	CHECK_CONTAINS(r.out, "--buffer NAME:BYTES[:FILE]");
}

TEST(usage_errors_exit_2)
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
	};

	write_text("k.vgs", store_tid);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct result r;

		run(&r, "%s", bad[i]);
		if (r.status != 2)
			TH_FAIL("vgpu-run %s: status %d, want 2", bad[i],
				r.status);
		CHECK_CONTAINS(r.err, "vgpu-run");
		CHECK_STR(r.out, "");
	}
}

TEST(block_over_limit_rejected_by_validation)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--block 2048 --buffer out:8192 k.vgs");
	CHECK_EQ(r.status, 2);
	CHECK_CONTAINS(r.err, "invalid launch");
	run(&r, "--block 32,32,2 --buffer out:8192 k.vgs");
	CHECK_EQ(r.status, 2);
	CHECK_CONTAINS(r.err, "invalid launch");
}

TEST(buffer_count_must_match_params)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "k.vgs");
	CHECK_EQ(r.status, 2);
	CHECK_CONTAINS(r.err, "1 pointer parameter");
	run(&r, "--buffer a:128 --buffer b:128 k.vgs");
	CHECK_EQ(r.status, 2);
}

TEST(assembly_error_exits_2)
{
	struct result r;

	write_text("bad.vgs", "    FROB R0, R1 ;\n    EXIT ;\n");
	run(&r, "bad.vgs");
	CHECK_EQ(r.status, 2);
	CHECK_CONTAINS(r.err, "bad.vgs:1:");
	CHECK_CONTAINS(r.err, "error");
	CHECK_STR(r.out, "");
}

TEST(store_tid_dump_exact)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--buffer out:128 --dump out k.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, store_tid_dump);
	CHECK_STR(r.err, "");

	/* same result with a decimal/hex mix and an explicit default block */
	run(&r, "--block 0x20,1,1 --grid 1 --buffer out:0x80 --dump out k.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, store_tid_dump);
}

TEST(dump_partial_line_and_trailing_bytes)
{
	struct result r;

	write_text("k.vgs", store_tid);
	/* 10 words: one full line and a partial one; 2 stray bytes ignored */
	run(&r, "--block 10 --buffer out:42 --dump out k.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out,
		  "out:\n"
		  "00000000 00000002 00000004 00000006 00000008 0000000a "
		  "0000000c 0000000e\n"
		  "00000010 00000012\n");
	/* a dump smaller than a word prints only its name */
	run(&r, "--block 1 --buffer out:4 --dump out --dump out k.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "out:\n00000000\nout:\n00000000\n");
}

TEST(random_schedule_same_result)
{
	struct result r;

	write_text("k.vgs", store_tid);
	run(&r, "--random-schedule --seed 12345 --buffer out:128 --dump out "
		"k.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, store_tid_dump);
}

TEST(object_file_input)
{
	struct vgpu_object obj = { 0 };
	uint8_t *bytes = NULL;
	struct result r;
	char err[1024];
	size_t len = 0;

	REQUIRE(vgpu_assemble(store_tid, strlen(store_tid), "store_tid.vgs",
			      &obj, err, sizeof(err)) == 0);
	REQUIRE(vgpu_object_write(&obj, &bytes, &len) == 0);
	write_file("k.vgo", bytes, len);
	free(bytes);
	vgpu_object_fini(&obj);

	run(&r, "--buffer out:128 --dump out k.vgo");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, store_tid_dump);
}

/* in[tid] += tid, on a buffer initialised from a file */
TEST(buffer_from_file)
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
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "data:\n11111111 22222223 00000002 00000003\n");

	/* a file larger than the buffer is a usage error */
	run(&r, "--block 1 --buffer data:4:init.bin --dump data add.vgs");
	CHECK_EQ(r.status, 2);
	CHECK_CONTAINS(r.err, "larger than");
}

/* Two parameters: buffers bind in the order given. */
TEST(params_in_order_and_kernel_selection)
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
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "b:\n00000000 00000003 00000006 00000009\n"
			 "a:\n00000000 00000001 00000002 00000003\n");

	/* the first kernel is the default, and takes one buffer */
	run(&r, "--buffer x:4 --dump x two.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "x:\n00000000\n");

	run(&r, "--kernel third --buffer x:4 two.vgs");
	CHECK_EQ(r.status, 2);
	CHECK_CONTAINS(r.err, "third");
}

/* Global index over a 2-CTA grid: out[ctaid * ntid + tid] = that index. */
TEST(grid_of_ctas)
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
	CHECK_EQ(r.status, 0);
	CHECK_STR(r.out, "out:\n00000000 00000001 00000002 00000003 "
			 "00000004 00000005 00000006 00000007\n");
}

TEST(store_past_end_faults)
{
	struct result r;

	/* each thread stores one word past the end of a 128-byte buffer */
	write_text("oob.vgs", ".kernel oob\n"
			      ".param ptr out\n"
			      "    S2R R0, SR_TID.X ;\n"
			      "    LDP.64 R2, [out] ;\n"
			      "    SHL R4, R0, 0x2 ;\n"
			      "    IADD R2, R2, R4 ;\n"
			      "    IADD R2, R2, 0x80 ;\n"
			      "    STG.32 [R2], R0 ;\n"
			      "    EXIT ;\n");
	run(&r, "--buffer out:128 --dump out oob.vgs");
	CHECK_EQ(r.status, 3);
	CHECK_CONTAINS(r.err, "global memory fault");
	CHECK_CONTAINS(r.err, "STG");
	CHECK_CONTAINS(r.err, "cta (0,0,0)");
	CHECK_STR(r.out, ""); /* no dump after a failed run */
}

TEST(budget_exceeded)
{
	struct result r;

	write_text("loop.vgs", "loop:\n"
			       "    BRA loop ;\n");
	run(&r, "--budget 1000 loop.vgs");
	CHECK_EQ(r.status, 3);
	CHECK_CONTAINS(r.err, "budget");
}

/* Warp 0 waits for 64 arrivals on barrier 1; warp 1 exits instead. */
TEST(deadlock_reports_warp_states)
{
	struct result r;

	write_text("dl.vgs", "    S2R R0, SR_WARPID ;\n"
			     "    ISETP.NE.U32 P0, R0, 0x0 ;\n"
			     "@P0 EXIT ;\n"
			     "    BAR.SYNC 0x1, 0x40 ;\n"
			     "    EXIT ;\n");
	run(&r, "--block 64 dl.vgs");
	CHECK_EQ(r.status, 3);
	CHECK_CONTAINS(r.err, "deadlock");
	CHECK_CONTAINS(r.err, "warp  0: barrier 1");
	CHECK_CONTAINS(r.err, "warp  1: exited");
	CHECK_CONTAINS(r.err, "BAR.SYNC");
}

TEST(trace_prints_events)
{
	struct result r;

	write_text("bar.vgs", "    BAR.SYNC 0x0 ;\n"
			      "    EXIT ;\n");
	run(&r, "--block 64 --trace bar.vgs");
	CHECK_EQ(r.status, 0);
	CHECK_CONTAINS(r.err, "CTA_BEGIN");
	CHECK_CONTAINS(r.err, "BAR_ARRIVE");
	CHECK_CONTAINS(r.err, "BAR_COMPLETE");
	CHECK_CONTAINS(r.err, "CTA_END");
	CHECK_STR(r.out, "");
}

TEST_MAIN()
