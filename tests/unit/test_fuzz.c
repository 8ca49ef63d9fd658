// SPDX-License-Identifier: MIT
/*
 * The fuzzing oracles (tests/fuzz/NAME_oracle.h) over what make check can
 * afford: every input in tests/fuzz/regressions/<target>/ (crashers that
 * `make fuzz` found, kept once fixed) and seeds made here from examples/:
 *
 *   asm    each example's text, and the text cut at every 97th byte;
 *   obj    each example's object file, and the same with one byte
 *          flipped at 64 positions (the decoder and the disassembler see
 *          those bytes as instruction words too);
 *   exec   each example's code under 12 launch shapes (grids, blocks,
 *          clusters, flags, seeds, raw or pointer parameters, preemption
 *          every N), global memory seeded with a pattern.
 *
 * The same seeds are what `make fuzz` starts from (test_fuzz --write-seeds
 * DIR writes them, one directory per target).
 */
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include "kselftest_host.h"
#include "test_paths.h"

#include "fuzz/asm_oracle.h"
#include "fuzz/exec_oracle.h"
#include "fuzz/ptx_oracle.h"

typedef int (*oracle_fn)(const uint8_t *data, size_t size);

static const char *seed_dir;	/* --write-seeds: write, don't check */

static uint8_t *slurp_bin(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* Check one input, or write it to seed_dir/@target/@name. */
static int feed(const char *target, const char *name, oracle_fn fn,
		const uint8_t *data, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	if (!seed_dir) {
		if (!fn(data, len))
			return 0;
		fprintf(stderr, "test_fuzz: %s: %s fails the oracle\n", target, name);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", seed_dir, target);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", seed_dir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	return 0;
}

/* Every file of tests/fuzz/regressions/@target through @fn; the count. */
static int replay(struct __test_metadata *_metadata, const char *target,
		  oracle_fn fn)
{
	char dir[PATH_MAX + 64], path[PATH_MAX + 384];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/regressions/%s", test_root, target);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		uint8_t *buf;
		size_t len = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		buf = slurp_bin(path, &len);
		ASSERT_NE(NULL, buf) {
			TH_LOG("%s", path);
		}
		EXPECT_EQ(0, feed(target, de->d_name, fn, buf, len));
		free(buf);
		n++;
	}
	closedir(d);
	return n;
}

/* The examples' texts, sorted by name (stable seed names). */
struct example {
	char name[256];
	char *text;
	size_t len;
};

static int cmp_example(const void *a, const void *b)
{
	return strcmp(((const struct example *)a)->name,
		      ((const struct example *)b)->name);
}

static int examples(struct example **out)
{
	char dir[PATH_MAX + 64], path[PATH_MAX + 384];
	struct example *ex = NULL;
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/examples", test_root);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		struct example *p;

		if (l < 5 || strcmp(de->d_name + l - 4, ".vgs") || l >= sizeof(ex->name))
			continue;
		p = realloc(ex, (n + 1) * sizeof(*ex));
		if (!p)
			break;
		ex = p;
		snprintf(ex[n].name, sizeof(ex[n].name), "%.*s", (int)(l - 4), de->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		ex[n].text = (char *)slurp_bin(path, &ex[n].len);
		if (ex[n].text)
			n++;
	}
	closedir(d);
	qsort(ex, n, sizeof(*ex), cmp_example);
	*out = ex;
	return n;
}

static void examples_free(struct example *ex, int n)
{
	for (int i = 0; i < n; i++)
		free(ex[i].text);
	free(ex);
}

TEST(asm_examples_and_regressions)
{
	struct example *ex;
	char name[300];
	int n = examples(&ex);

	ASSERT_LE(3, n);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s.vgs", ex[i].name);
		EXPECT_EQ(0, feed("asm", name, asm_oracle, (uint8_t *)ex[i].text, ex[i].len));
		/* truncated: errors in the middle of everything */
		for (size_t cut = 1; !seed_dir && cut < ex[i].len; cut += 97) {
			EXPECT_EQ(0, asm_oracle((uint8_t *)ex[i].text, cut)) {
				TH_LOG("%s cut at %zu", ex[i].name, cut);
			}
		}
	}
	examples_free(ex, n);
	replay(_metadata, "asm", asm_oracle);
}

TEST(obj_examples_flipped_and_regressions)
{
	struct example *ex;
	char name[300], err[4096];
	int n = examples(&ex);

	ASSERT_LE(3, n);
	for (int i = 0; i < n; i++) {
		struct vgpu_object obj;
		uint8_t *buf;
		size_t len;

		ASSERT_EQ(0, vgpu_assemble(ex[i].text, ex[i].len, ex[i].name, &obj,
					   err, sizeof(err)));
		ASSERT_EQ(0, vgpu_object_write(&obj, &buf, &len));
		vgpu_object_fini(&obj);
		snprintf(name, sizeof(name), "%s.vgo", ex[i].name);
		EXPECT_EQ(0, feed("obj", name, obj_oracle, buf, len));
		for (int k = 0; !seed_dir && k < 64; k++) {
			size_t at = (size_t)k * 7919 % len;

			buf[at] ^= (uint8_t)(1u << (k % 8));
			EXPECT_EQ(0, obj_oracle(buf, len)) {
				TH_LOG("%s byte %zu flipped", ex[i].name, at);
			}
			buf[at] ^= (uint8_t)(1u << (k % 8));
		}
		free(buf);
	}
	examples_free(ex, n);
	replay(_metadata, "obj", obj_oracle);
}

/* Launch shapes for the examples' code: the header of exec_oracle.h. */
static const uint8_t exec_shapes[][EXEC_HDR] = {
	/* grid-1 gy cl  blk lo/hi  smem flags seed budget par words entry */
	{ 0, 0, 0, 127, 0, 0, 0, 0, 31, 0, 255, 0 },		/* 128 threads */
	{ 0, 0, 0, 255, 0, 4, 1, 7, 31, 0, 255, 0 },		/* random sched */
	{ 3, 1, 0, 31, 0, 0, 1, 3, 31, 0, 255, 0 },		/* 4x2 CTAs */
	{ 1, 0, 2, 63, 0, 0, 0, 0, 31, 0, 255, 0 },		/* a cluster of 2 */
	{ 0, 0, 0, 127, 0, 0, 2, 0, 31, 0, 255, 0 },		/* sanitizer */
	{ 0, 0, 0, 127, 0, 0, 0, 0, 31, 2 * 1, 255, 0 },	/* preempt every 38 */
	{ 0, 0, 0, 127, 0, 0, 1, 5, 31, 2 * 27, 255, 0 },	/* random, every 1000 */
	{ 1, 0, 2, 63, 0, 0, 0, 0, 31, 2 * 3, 255, 0 },	/* cluster, every 112 */
	{ 0, 0, 0, 255, 3, 200, 0, 0, 31, 0, 255, 0 },		/* 1024 threads */
	{ 0, 0, 0, 127, 0, 0, 0, 0, 31, 1, 255, 0 },		/* raw parameters */
	{ 0, 0, 0, 127, 0, 0, 0xf8, 0, 31, 0, 255, 0 },	/* unknown flags */
	{ 2, 0, 0, 127, 0, 0, 0, 0, 0, 0, 255, 0 },		/* smallest budget */
};

TEST(exec_examples_under_launch_shapes_and_regressions)
{
	struct example *ex;
	char name[300], err[4096];
	int n = examples(&ex);

	ASSERT_LE(3, n);
	for (int i = 0; i < n; i++) {
		struct vgpu_object obj;

		ASSERT_EQ(0, vgpu_assemble(ex[i].text, ex[i].len, ex[i].name, &obj,
					   err, sizeof(err)));
		for (size_t s = 0; s < sizeof(exec_shapes) / sizeof(exec_shapes[0]); s++) {
			size_t words = obj.code_size / 16, len;
			uint32_t smem;
			uint8_t *in;

			if (words > 256)
				words = 256;
			len = EXEC_HDR + words * 16 + 8192;
			in = malloc(len);
			ASSERT_NE(NULL, in);
			memcpy(in, exec_shapes[s], EXEC_HDR);
			in[10] = (uint8_t)(words - 1);
			in[11] = (uint8_t)(obj.kernels[0].entry / 16);
			/* at least the kernel's .shared (else every seed faults) */
			smem = (obj.kernels[0].smem_static + 255) / 256;
			if (in[5] < smem)
				in[5] = (uint8_t)(smem < 255 ? smem : 255);
			memcpy(in + EXEC_HDR, obj.code, words * 16);
			for (size_t b = EXEC_HDR + words * 16; b < len; b++)
				in[b] = (uint8_t)(b * 131 + s);
			snprintf(name, sizeof(name), "%s.%zu", ex[i].name, s);
			EXPECT_EQ(0, feed("exec", name, exec_oracle, in, len));
			free(in);
		}
		vgpu_object_fini(&obj);
	}
	examples_free(ex, n);
	replay(_metadata, "exec", exec_oracle);
}

/*
 * Seeds for the device fuzzer (qemu-device/fuzz/vgpu-fuzz.c, make
 * fuzz-device), which runs inside QEMU: only written (--write-seeds).
 * Operations: 3 QUEUE q size, 5 LAUNCH q as shape[8] nwords, 7 WAIT ms,
 * 9 CSB q slot raw page32, 6 PTE as va32 level pte64, 4 CMD q fix cmd[128].
 */
static const uint8_t dev_seed_launch[] = {
	3, 0, 3,  5, 0, 0, 0, 0, 0, 63, 0, 0, 0, 10, 0,  7, 10,
};
static const uint8_t dev_seed_preempt[] = {
	9, 1, 1, 2, 0, 0, 0, 0,  3, 1, 3,  5, 1, 0, 3, 0, 0, 255, 3, 0, 1, 63, 0,
	9, 1, 1, 2, 0, 0, 0, 0,  7, 5,
};
static const uint8_t dev_seed_pte_loop[] = {
	6, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0,  3, 0, 3,
	5, 0, 0, 0, 0, 0, 31, 0, 0, 0, 10, 0,  7, 10,
};
static const uint8_t dev_seed_fence[] = {
	3, 2, 2,  4, 2, 1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0,
	7, 5,
};

static int write_device_seeds(void)
{
	return feed("device", "launch", NULL, dev_seed_launch, sizeof(dev_seed_launch)) |
	       feed("device", "preempt", NULL, dev_seed_preempt, sizeof(dev_seed_preempt)) |
	       feed("device", "pte_loop", NULL, dev_seed_pte_loop, sizeof(dev_seed_pte_loop)) |
	       feed("device", "fence", NULL, dev_seed_fence, sizeof(dev_seed_fence));
}

TEST(ptx_regressions)
{
	replay(_metadata, "ptx", ptx_oracle);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--write-seeds")) {
		seed_dir = argv[2];
		mkdir(seed_dir, 0755);
		if (write_device_seeds())
			return 1;
		argc = 1;
	}
	return test_harness_run(argc, argv);
}
