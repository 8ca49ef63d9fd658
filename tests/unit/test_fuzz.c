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
 *          every N), global memory seeded with a pattern, and random
 *          well-formed programs under four of them;
 *   tmap   tensor copies of test_async's and the examples' shapes, loads
 *          and stores, in and out of bounds, element strides, and maps
 *          and destinations each copy check refuses;
 *   launch launch shapes, clusters included, at and past every limit.
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
#include "fuzz/launch_oracle.h"
#include "fuzz/ptx_oracle.h"
#include "fuzz/tmap_oracle.h"

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
	/* random well-formed programs (byte 12 bit 0) under four of the shapes */
	for (size_t s = 0; s < 4; s++) {
		static const size_t shape[4] = { 0, 2, 5, 6 };
		uint8_t in[EXEC_HDR + 64 * 16 + 4096];
		uint64_t x = 0x9e3779b97f4a7c15ull * (s + 1);

		for (size_t b = 0; b < sizeof(in); b++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			in[b] = (uint8_t)x;
		}
		memcpy(in, exec_shapes[shape[s]], EXEC_HDR);
		in[5] = 16;	/* 4 KiB of shared memory */
		in[10] = 63;
		in[12] = 1;
		snprintf(name, sizeof(name), "well-formed.%zu", s);
		EXPECT_EQ(0, feed("exec", name, exec_oracle, in, sizeof(in)));
	}
	replay(_metadata, "exec", exec_oracle);
}

/* One tmap input (tmap_oracle.h): a map of @rank dims over global memory. */
struct tmap_seed {
	const char *name;
	uint8_t flags; /* byte 0 but the rank: store, tame, random */
	uint32_t rank, elem, smem, map_off;
	uint32_t dims[5], box[5], estr[5];
	int32_t coord[5];
	uint32_t patch; /* 1 bad magic, 2 an im2col field set */
};

/* An im2col input (flags 0x40): channels, pixels, corners, offsets too. */
struct tmap_i2c_seed {
	struct tmap_seed t;
	uint32_t channels, pixels;
	int32_t lower[3], upper[3];
	uint16_t off[3];
};

static const struct tmap_seed tmap_seeds[] = {
	{ "oob-2d-load", 0, 2, 4, 16, 0, { 24, 10 }, { 16, 8 }, { 0 }, { 16, 6 }, 0 },
	{ "oob-2d-store", 1, 2, 4, 16, 0, { 24, 10 }, { 16, 8 }, { 0 }, { 16, 6 }, 0 },
	{ "inside-2d-load", 0, 2, 4, 16, 0, { 20, 10 }, { 8, 4 }, { 0 }, { 12, 6 }, 0 },
	{ "inside-3d-store", 1, 3, 2, 32, 0, { 8, 5, 4 }, { 4, 2, 3 }, { 0 }, { 2, 1, 1 }, 0 },
	{ "oob-5d-load", 0, 5, 4, 16, 0, { 4, 2, 2, 2, 3 }, { 4, 2, 1, 2, 2 }, { 0 },
	  { 0, 0, 1, 1, 2 }, 0 },
	{ "inside-estr-rows", 0, 2, 4, 16, 0, { 32, 8 }, { 16, 6 }, { 1, 2 }, { 4, 1 }, 0 },
	{ "inside-estr-rows-store", 1, 3, 2, 16, 0, { 32, 8, 3 }, { 16, 6, 2 }, { 1, 2, 2 },
	  { 4, 1, 0 }, 0 },
	{ "estr-before-start", 0, 2, 4, 16, 0, { 32, 8 }, { 16, 6 }, { 3, 2 }, { -7, -3 }, 0 },
	{ "estr-store", 1, 2, 8, 16, 0, { 32, 8 }, { 16, 6 }, { 3, 2 }, { 20, 3 }, 0 },
	{ "bytes-1d", 0, 1, 1, 48, 0, { 100 }, { 40 }, { 0 }, { 80 }, 0 },
	{ "box-past-4-gib", 0, 5, 8, 16, 0, { 4, 4, 4, 4, 4 }, { 256, 256, 256, 256, 256 },
	  { 0 }, { 0 }, 0 },
	{ "box-past-4-gib-store", 1, 5, 8, 16, 0, { 4, 4, 4, 4, 4 },
	  { 256, 256, 256, 256, 256 }, { 0 }, { 0 }, 0 },
	{ "box-past-shared", 0, 2, 8, 16, 0, { 4, 4 }, { 256, 256 }, { 0 }, { 0 }, 0 },
	{ "bad-magic", 0, 2, 4, 16, 0, { 24, 10 }, { 16, 8 }, { 0 }, { 0 }, 1 },
	{ "reserved-set", 1, 3, 4, 16, 0, { 8, 5, 4 }, { 4, 2, 3 }, { 0 }, { 0 }, 2 },
	{ "map-misaligned", 0, 1, 4, 16, 32, { 100 }, { 40 }, { 0 }, { 0 }, 0 },
	{ "smem-misaligned", 0, 1, 4, 24, 0, { 100 }, { 40 }, { 0 }, { 0 }, 0 },
	{ "tame-random", 0x30, 3, 4, 0x1234, 0, { 7, 9, 11 }, { 13, 3, 200 }, { 0x81, 0, 2 },
	  { 5, 77, 1000 }, 0 },
	{ "tame-store", 0x11, 4, 1, 0x77, 0, { 5, 6, 7, 8 }, { 9, 10, 11, 12 }, { 0 },
	  { 1, 2, 3, 4 }, 0 },
	/* reductions (flags 0x81): XOR of u32 / u64 maps, a u16 one refused */
	{ "reduce-oob-2d", 0x81, 2, 4, 16, 0, { 24, 10 }, { 16, 8 }, { 0 }, { 16, 6 }, 0 },
	{ "reduce-estr-3d-u64", 0x81, 3, 8, 16, 0, { 32, 8, 3 }, { 16, 6, 2 }, { 3, 2, 2 },
	  { 20, 1, 0 }, 0 },
	{ "reduce-before-the-tensor", 0x81, 3, 8, 16, 0, { 32, 8, 3 }, { 16, 6, 2 }, { 3, 2, 2 },
	  { -4, 1, 0 }, 0 },
	{ "reduce-inside-5d", 0x81, 5, 4, 32, 0, { 4, 2, 2, 2, 3 }, { 4, 2, 1, 2, 2 }, { 0 },
	  { 0, 0, 1, 0, 1 }, 0 },
	{ "reduce-u16-refused", 0x81, 2, 2, 16, 0, { 24, 10 }, { 16, 8 }, { 0 }, { 0 }, 0 },
	{ "reduce-tame-random", 0xb1, 3, 4, 0x1234, 0, { 7, 9, 11 }, { 13, 3, 200 },
	  { 0x81, 0, 2 }, { 5, 77, 1000 }, 0 },
};

static const struct tmap_i2c_seed tmap_i2c_seeds[] = {
	{ { "im2col-4d-load", 0x40, 4, 4, 16, 0, { 8, 5, 4, 2 }, { 0 }, { 0 }, { 4, -1, -1, 0 }, 0 },
	  4, 40, { -1, -1 }, { -1, -1 }, { 1, 2 } },
	{ { "im2col-3d-store", 0x41, 3, 2, 32, 0, { 16, 10, 2 }, { 0 }, { 0 }, { 8, 1, 0 }, 0 },
	  8, 12, { 1 }, { -2 }, { 0 } },
	{ { "im2col-5d-strides-random", 0x60, 5, 8, 16, 0, { 4, 3, 4, 3, 3 }, { 0 },
	    { 1, 1, 2, 1, 2 }, { 2, 0, -2, 1, 0 }, 0 },
	  2, 50, { -1, -2, -1 }, { 0, -1, 1 }, { 1, 0, 2 } },
	{ { "im2col-channel-misaligned", 0x40, 4, 4, 16, 0, { 8, 5, 4, 2 }, { 0 }, { 0 },
	    { 2, 0, 0, 0 }, 0 },
	  4, 8, { 0, 0 }, { 0, 0 }, { 0 } },
	{ { "im2col-base-outside-box", 0x40, 3, 4, 16, 0, { 4, 8, 2 }, { 0 }, { 0 }, { 0, 7, 0 }, 0 },
	  4, 8, { 0 }, { -1 }, { 0 } },
	{ { "im2col-tame", 0x50, 4, 2, 0x123, 0, { 7, 9, 11, 5 }, { 3, 5, 7, 9 }, { 0x81, 0x82, 0, 2 },
	    { 5, 77, 1000, 3 }, 0 },
	  3, 33, { 5, -6 }, { -7, 2 }, { 9, 3 } },
	{ { "im2col-tame-store", 0x51, 5, 4, 0x77, 0, { 5, 6, 7, 8, 3 }, { 0 }, { 0 },
	    { -1, 2, -3, 4, 1 }, 0 },
	  2, 20, { -1, 2, 3 }, { 1, -1, 0 }, { 0 } },
	{ { "im2col-3d-reduce", 0xc1, 3, 4, 32, 0, { 8, 10, 3 }, { 0 }, { 0 }, { 4, 1, 1 }, 0 },
	  4, 30, { 1 }, { -2 }, { 0 } },
};

/* The input of seed @t, with @x's im2col fields when not NULL. */
static void tmap_seed_bytes(const struct tmap_seed *t, const struct tmap_i2c_seed *x,
			    uint8_t *in, size_t len)
{
	struct vgpu_tensor_map m = { 0 };
	uint64_t stride;

	memset(in, 0, len);
	in[0] = (uint8_t)(t->flags | (t->rank - (x ? 3 : 1)) << 1);
	in[1] = (uint8_t)t->map_off;
	in[2] = (uint8_t)t->smem;
	in[3] = (uint8_t)(t->smem >> 8);
	memcpy(in + 4, t->coord, sizeof(t->coord));
	m.base = 0x100000000ull + 256; /* region 0's data (tmap_parse) */
	m.magic = t->patch == 1 ? 0x50414d55u : VGPU_TMAP_MAGIC;
	m.rank = (uint8_t)t->rank;
	m.elem_size = (uint8_t)t->elem;
	if (t->flags & 0x80) /* a reduction's type: u16, u32 or u64 by the size */
		m.dtype = (uint8_t)(t->elem == 2 ? VGPU_TMAP_DT_U16 :
				    t->elem == 4 ? VGPU_TMAP_DT_U32 : VGPU_TMAP_DT_U64);
	if (t->patch == 2)
		m.upper[2] = 1; /* an im2col field of a tile map */
	if (x) {
		m.mode = VGPU_TMAP_IM2COL;
		m.channels = (uint16_t)x->channels;
		m.pixels = (uint16_t)x->pixels;
		for (int i = 0; i < 3; i++) {
			m.lower[i] = (int16_t)x->lower[i];
			m.upper[i] = (int16_t)x->upper[i];
		}
	}
	for (uint32_t d = 0; d < t->rank; d++) {
		m.dims[d] = t->dims[d];
		m.box[d] = t->box[d];
		m.elem_strides[d] = t->estr[d] ? t->estr[d] : 1;
	}
	/* strides: each dimension packed after the one below, 16-aligned */
	stride = ((uint64_t)t->dims[0] * t->elem + 15) & ~15ull;
	for (uint32_t d = 1; d < t->rank; d++) {
		m.strides[d - 1] = stride;
		stride *= t->dims[d];
	}
	memcpy(in + TMAP_HDR, &m, sizeof(m));
	for (size_t b = TMAP_HDR + sizeof(m); b < len; b++)
		in[b] = (uint8_t)(b * 37 + 11);
	if (x) /* the offsets: the tail's first words */
		memcpy(in + TMAP_HDR + sizeof(m), x->off, sizeof(x->off));
}

TEST(tmap_copies_and_regressions)
{
	for (size_t i = 0; i < sizeof(tmap_seeds) / sizeof(tmap_seeds[0]); i++) {
		uint8_t in[TMAP_HDR + 128 + 4096];

		tmap_seed_bytes(&tmap_seeds[i], NULL, in, sizeof(in));
		EXPECT_EQ(0, feed("tmap", tmap_seeds[i].name, tmap_oracle, in, sizeof(in)));
	}
	for (size_t i = 0; i < sizeof(tmap_i2c_seeds) / sizeof(tmap_i2c_seeds[0]); i++) {
		uint8_t in[TMAP_HDR + 128 + 4096];

		tmap_seed_bytes(&tmap_i2c_seeds[i].t, &tmap_i2c_seeds[i], in, sizeof(in));
		EXPECT_EQ(0, feed("tmap", tmap_i2c_seeds[i].t.name, tmap_oracle, in, sizeof(in)));
	}
	replay(_metadata, "tmap", tmap_oracle);
}

/* launch_oracle.h inputs: grid, block, cluster, smem, params, flags, entry */
static const struct {
	const char *name;
	uint32_t w[13];
	uint8_t mode;
} launch_seeds[] = {
	{ "one-warp", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0, 0 }, 0 },
	{ "3d-grid-3d-block", { 3, 2, 2, 5, 3, 2, 0, 0, 0, 1024, 8, 1, 0 }, 0 },
	{ "clusters-2x2x1", { 4, 2, 3, 7, 2, 1, 2, 2, 1, 0, 8, 0, 0 }, 0 },
	{ "cluster-of-16", { 16, 1, 1, 1, 1, 1, 16, 1, 1, 0, 8, 0, 0 }, 0 },
	{ "cluster-of-17", { 17, 1, 1, 1, 1, 1, 17, 1, 1, 0, 8, 0, 0 }, 0 },
	{ "cluster-not-dividing", { 6, 1, 1, 32, 1, 1, 4, 1, 1, 0, 8, 0, 0 }, 0 },
	{ "block-1024", { 2, 1, 1, 8, 8, 16, 0, 0, 0, 0, 8, 2, 0 }, 0 },
	{ "block-1025", { 1, 1, 1, 1025, 1, 1, 0, 0, 0, 0, 8, 0, 0 }, 0 },
	{ "block-2-to-the-64", { 1, 1, 1, 1u << 22, 1u << 22, 1u << 20, 0, 0, 0, 0, 8, 0, 0 }, 0 },
	{ "grid-2-to-the-64", { 1u << 22, 1u << 22, 1u << 20, 32, 1, 1, 0, 0, 0, 0, 8, 0, 0 }, 0 },
	{ "grid-2-to-the-32", { 65536, 65536, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0, 0 }, 0 },
	{ "smem-max", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 228 * 1024, 8, 0, 0 }, 0 },
	{ "smem-past-max", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 228 * 1024 + 1, 8, 0, 0 }, 0 },
	{ "params-max", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 4096, 0, 0 }, 0 },
	{ "params-past-max", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 4097, 0, 0 }, 0 },
	{ "unknown-flag", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0x100, 0 }, 0 },
	{ "entry-misaligned", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0, 8 }, 0 },
	{ "entry-past-the-end", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0, 0x10000 }, 0 },
	{ "zero-dimension", { 1, 0, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0, 0 }, 0 },
	{ "no-program", { 1, 1, 1, 32, 1, 1, 0, 0, 0, 0, 8, 0, 0 }, 2 },
	{ "small", { 7, 5, 9, 100, 7, 3, 5, 4, 1, 777, 3, 3, 5 }, 1 },
};

TEST(launch_shapes_and_regressions)
{
	for (size_t i = 0; i < sizeof(launch_seeds) / sizeof(launch_seeds[0]); i++) {
		uint8_t in[LAUNCH_IN];

		for (int k = 0; k < 13; k++)
			for (int b = 0; b < 4; b++)
				in[4 * k + b] = (uint8_t)(launch_seeds[i].w[k] >> 8 * b);
		in[52] = launch_seeds[i].mode;
		EXPECT_EQ(0, feed("launch", launch_seeds[i].name, launch_oracle, in, sizeof(in)));
	}
	replay(_metadata, "launch", launch_oracle);
}

/*
 * Seeds for the device fuzzer (qemu-device/fuzz/vgpu-fuzz.c, make
 * fuzz-device), which runs inside QEMU: only written (--write-seeds).
 * Operations: 3 QUEUE q size, 5 LAUNCH q as shape[8] n8 (words, dims), 7 WAIT ms,
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

/* a launch of 2^22 x 2^22 x 2^20 threads: n8 = 17 * 2, nine raw dims */
static const uint8_t dev_seed_dims[] = {
	3, 0, 3,  5, 0, 0, 0, 0, 0, 63, 0, 0, 0, 10, 34,
	1, 0, 0, 0,  0, 0, 0x40, 0,  0, 0, 0, 0,
	1, 0, 0, 0,  0, 0, 0x40, 0,  0, 0, 0, 0,
	1, 0, 0, 0,  0, 0, 0x10, 0,  0, 0, 0, 0,
	7, 10,
};

static int write_device_seeds(void)
{
	/* a random well-formed program of 16 words: n8 = 17 + 16 */
	uint8_t wf[3 + 12 + 256 + 2] = { 3, 0, 3,  5, 0, 0,  0, 0, 0, 127, 0, 16, 0, 10,  33 };
	uint64_t x = 0x2545f4914f6cdd1dull;

	for (size_t b = 15; b < 15 + 256; b++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		wf[b] = (uint8_t)x;
	}
	wf[15 + 256] = 7;
	wf[16 + 256] = 10;
	return feed("device", "launch", NULL, dev_seed_launch, sizeof(dev_seed_launch)) |
	       feed("device", "preempt", NULL, dev_seed_preempt, sizeof(dev_seed_preempt)) |
	       feed("device", "pte_loop", NULL, dev_seed_pte_loop, sizeof(dev_seed_pte_loop)) |
	       feed("device", "fence", NULL, dev_seed_fence, sizeof(dev_seed_fence)) |
	       feed("device", "dims-2-to-the-64", NULL, dev_seed_dims, sizeof(dev_seed_dims)) |
	       feed("device", "well-formed", NULL, wf, sizeof(wf));
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
