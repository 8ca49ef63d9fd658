/* SPDX-License-Identifier: MIT */
/*
 * Every kernel in examples/ runs with the flags of its first line
 * ("// vgpu-run: FLAGS") and prints exactly examples/NAME.expected, under
 * the default schedule and under 100 random-schedule seeds.  So does the
 * PTX that clang-19 made of each CUDA port examples/cuda/NAME.cu
 * (BUILD/ptx/examples/NAME.ptx): the same flags, the same NAME.expected.
 * And each .vgs example again with every running cluster preempted,
 * saved and resumed on the other SM every N warp-instructions
 * (VGPU_SIM_PREEMPT_EVERY, several N, default and random schedules): the
 * same output.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "test_paths.h"

#define NSEEDS 100

static char root[PATH_MAX], build[PATH_MAX], runner[PATH_MAX + 32];
static char env[64]; /* prefix of the vgpu-run command line */
static const char *seed_list; /* NULL: 0..NSEEDS */

__attribute__((constructor(102))) static void find_paths(void)
{
	snprintf(root, sizeof(root), "%s", test_root);
	snprintf(build, sizeof(build), "%s", test_build);
	snprintf(runner, sizeof(runner), "%s/bin/vgpu-run", test_build);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Run vgpu-run; returns its stdout (malloc'd) and exit status. */
static char *run(const char *flags, const char *extra, const char *file,
		 int *status)
{
	char cmd[3 * PATH_MAX];
	size_t cap = 1 << 16, len = 0;
	char *out = calloc(1, cap);
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s '%s' %s %s '%s' 2>&1", env, runner, flags,
		 extra, file);
	p = popen(cmd, "r");
	if (!p || !out) {
		free(out);
		*status = -1;
		return NULL;
	}
	len = fread(out, 1, cap - 1, p);
	out[len] = '\0';
	*status = pclose(p);
	return out;
}

/*
 * Example @name of examples/@sub ("" or "cuda/"); a CUDA port runs as the
 * PTX the build made of it and must print the .vgs version's output.
 */
static void check_example(struct __test_metadata *_metadata, const char *sub,
			  const char *name)
{
	char path[PATH_MAX + 300], exp_path[PATH_MAX + 300], run_path[PATH_MAX + 300];
	char flags[512] = "", stem[256];
	char *src, *expected, *nl;
	const char *tag = "// vgpu-run:";
	bool ok;

	snprintf(stem, sizeof(stem), "%s", name);
	*strrchr(stem, '.') = '\0';
	snprintf(path, sizeof(path), "%s/examples/%s%s", root, sub, name);
	snprintf(exp_path, sizeof(exp_path), "%s/examples/%s.expected", root, stem);
	if (*sub)
		snprintf(run_path, sizeof(run_path), "%s/ptx/examples/%s.ptx", build, stem);
	else
		snprintf(run_path, sizeof(run_path), "%s", path);
	src = slurp(path);
	expected = slurp(exp_path);
	ok = src && expected;
	EXPECT_TRUE(ok) TH_LOG("%s: missing source or %s", name, exp_path);
	if (!ok)
		goto out;
	EXPECT_EQ(0, strncmp(src, tag, strlen(tag)))
		TH_LOG("%s: first line is not \"%s FLAGS\"", name, tag);
	if (strncmp(src, tag, strlen(tag)))
		goto out;
	nl = strchr(src, '\n');
	snprintf(flags, sizeof(flags), "%.*s", (int)(nl - src - strlen(tag)),
		 src + strlen(tag));
	for (int seed = 0; seed <= NSEEDS; seed++) {
		char extra[64] = "";
		int status;
		char *out;

		if (seed_list && !strchr(seed_list, '0' + seed))
			continue;
		if (seed)
			snprintf(extra, sizeof(extra), "--random-schedule --seed %d",
				 seed);
		out = run(flags, extra, run_path, &status);
		ok = out && !status && !strcmp(out, expected);
		EXPECT_TRUE(ok)
			TH_LOG("%s %s %s: status %d, output:\n%s\nexpected:\n%s", env,
			       name, extra, status, out ? out : "", expected);
		free(out);
		if (!ok)
			break;
	}
out:
	free(src);
	free(expected);
}

/* Check every examples/@sub*@ext; returns how many. */
static int check_all(struct __test_metadata *_metadata, const char *sub, const char *ext)
{
	char dir[PATH_MAX + 16];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/examples/%s", root, sub);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name), el = strlen(ext);

		char vgs[PATH_MAX + 300];

		if (len <= el || strcmp(de->d_name + len - el, ext))
			continue;
		/* a CUDA port has its examples/NAME.vgs; other programs there
		 * (vectorAdd.cu, the runtime-API example) are not ports */
		snprintf(vgs, sizeof(vgs), "%s/examples/%.*s.vgs", root, (int)(len - el),
			 de->d_name);
		if (*sub && access(vgs, R_OK))
			continue;
		check_example(_metadata, sub, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

TEST(examples_match_expected_under_100_seeds)
{
	EXPECT_GE(check_all(_metadata, "", ".vgs"), 3);
}

TEST(cuda_ports_match_the_vgs_expected_under_100_seeds)
{
	EXPECT_GE(check_all(_metadata, "cuda/", ".cu"), 12);
}

TEST(examples_match_expected_when_preempted)
{
	static const unsigned every[] = { 1, 7, 61, 400 };

	seed_list = "0123";	/* the default schedule and 3 random seeds */
	for (unsigned i = 0; i < sizeof(every) / sizeof(every[0]); i++) {
		snprintf(env, sizeof(env), "VGPU_SIM_PREEMPT_EVERY=%u", every[i]);
		EXPECT_GE(check_all(_metadata, "", ".vgs"), 3);
	}
	env[0] = '\0';
	seed_list = NULL;
}

TEST_HARNESS_MAIN
