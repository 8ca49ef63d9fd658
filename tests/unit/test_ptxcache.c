// SPDX-License-Identifier: MIT
/*
 * The PTX compile cache (libvgpu/ptxcache.c, docs/libvgpu.md): SHA-256
 * against FIPS 180-4's vectors; a miss then a hit give the same program
 * (the same object bytes, kernels, PTX names, directives and results on
 * the sim backend); a corrupt, truncated or foreign entry is refused and
 * the module compiled again; VGPU_CACHE_DISABLE writes nothing; different
 * PTX, different entries; eviction by mtime at VGPU_CACHE_MAXSIZE;
 * several processes filling an empty cache at once; an unusable
 * directory and a failed compile store nothing.  Each test has a cache
 * directory of its own under a fresh temporary directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_host.h"
#include "vgpu.h"
#include "ptxcache.h"
#include "sha256.h"

#define WAIT_NS (60ull * 1000000000ull)
#define N 256
#define LONG_NAME "a_kernel_whose_name_is_longer_than_thirty_one_characters"

/*
 * Module data (gbias), a kernel with parameters, and a kernel whose name
 * the object shortens and whose .reqntid the launch enforces; @add makes
 * modules that differ (5 digits, 10000 and up: the same size each, and
 * no leading 0, which PTX reads as octal).
 */
static char *module_ptx(unsigned int add)
{
	char *s = NULL;

	if (asprintf(&s,
		     ".version 8.5\n.target sm_90a\n.address_size 64\n"
		     ".global .align 4 .u32 gbias = 7;\n"
		     ".visible .entry saxpy(.param .u64 out, .param .u64 in, .param .u32 a)\n{\n"
		     " .reg .b32 %%r<9>;\n .reg .b64 %%rd<7>;\n"
		     " ld.param.u64 %%rd1, [out];\n ld.param.u64 %%rd2, [in];\n"
		     " ld.param.u32 %%r1, [a];\n mov.u32 %%r2, %%tid.x;\n"
		     " mov.u32 %%r3, %%ctaid.x;\n mov.u32 %%r4, %%ntid.x;\n"
		     " mad.lo.u32 %%r5, %%r3, %%r4, %%r2;\n mul.wide.u32 %%rd3, %%r5, 4;\n"
		     " add.u64 %%rd4, %%rd2, %%rd3;\n ld.global.u32 %%r6, [%%rd4];\n"
		     " mov.u64 %%rd6, gbias;\n ld.global.u32 %%r7, [%%rd6];\n"
		     " mad.lo.u32 %%r8, %%r6, %%r1, %%r7;\n add.u32 %%r8, %%r8, %u;\n"
		     " add.u64 %%rd5, %%rd1, %%rd3;\n st.global.u32 [%%rd5], %%r8;\n ret;\n}\n"
		     ".visible .entry " LONG_NAME "(.param .u64 out)\n.reqntid 32, 1, 1\n{\n"
		     " .reg .b32 %%r<3>;\n .reg .b64 %%rd<4>;\n"
		     " ld.param.u64 %%rd1, [out];\n mov.u32 %%r1, %%tid.x;\n"
		     " mul.wide.u32 %%rd2, %%r1, 4;\n add.u64 %%rd3, %%rd1, %%rd2;\n"
		     " mul.lo.u32 %%r2, %%r1, %%r1;\n st.global.u32 [%%rd3], %%r2;\n ret;\n}\n",
		     add) < 0)
		return NULL;
	return s;
}

FIXTURE(cache) {
	char root[64];
	char dir[128];
	struct vgpu_device *dev;
	char log[8192];
};

FIXTURE_SETUP(cache)
{
	memset(self, 0, sizeof(*self));
	snprintf(self->root, sizeof(self->root), "%s", "/tmp/vgpu-ptxcache-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->root));
	/* a directory that does not exist yet: the cache makes it */
	snprintf(self->dir, sizeof(self->dir), "%s/a/cache", self->root);
	ASSERT_EQ(0, setenv("VGPU_CACHE_PATH", self->dir, 1));
	unsetenv("VGPU_CACHE_DISABLE");
	unsetenv("VGPU_CACHE_MAXSIZE");
	unsetenv("CUDA_CACHE_DISABLE");
	unsetenv("CUDA_CACHE_PATH");
	unsetenv("CUDA_CACHE_MAXSIZE");
	ASSERT_EQ(0, vgpu_device_open("sim", &self->dev));
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

FIXTURE_TEARDOWN(cache)
{
	vgpu_device_close(self->dev);
	if (self->root[0])
		nftw(self->root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The cache directory's entries (*.vgpc) and other files, counted. */
static int count_files(const char *dir, int *others)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (others)
		*others = 0;
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.')
			continue;
		if (l > 5 && !strcmp(de->d_name + l - 5, ".vgpc"))
			n++;
		else if (others)
			(*others)++;
	}
	closedir(d);
	return n;
}

/* The path of the directory's only entry (or its first). */
static int entry_path(const char *dir, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = -ENOENT;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".vgpc") && !strstr(de->d_name, ".tmp.")) {
			snprintf(out, len, "%s/%s", dir, de->d_name);
			ret = 0;
			break;
		}
	closedir(d);
	return ret;
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0 || fstat(fd, &st)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*buf = malloc((size_t)st.st_size + 1);
	n = *buf ? read(fd, *buf, (size_t)st.st_size) : -1;
	close(fd);
	if (n != st.st_size) {
		free(*buf);
		return -1;
	}
	*len = (size_t)n;
	return 0;
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, buf, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static int run_kernel(const struct vgpu_kernel *k, uint32_t grid, uint32_t block,
		      struct vgpu_args *args)
{
	struct vgpu_launch_config cfg = { .grid = { grid }, .block = { block } };
	struct vgpu_job *job = NULL;
	int ret = vgpu_kernel_launch(k, &cfg, args, &job);

	if (!ret)
		ret = vgpu_job_wait(job, WAIT_NS);
	vgpu_job_free(job);
	return ret;
}

/*
 * Run both kernels of a module_ptx(@add) program and check every word:
 * saxpy's out[i] = in[i] * 3 + 7 + @add, the other's out[t] = t * t; and
 * the directive: a launch of the second with 64 threads is refused.
 * 0 when all holds, else the first mismatch's -1 or the -errno.
 */
static int check_program(struct __test_metadata *_metadata, struct vgpu_device *dev,
			 const struct vgpu_program *prog, unsigned int add)
{
	const struct vgpu_kernel *k;
	struct vgpu_launch_config bad = { .grid = { 1 }, .block = { 64 } };
	struct vgpu_bo *in = NULL, *out = NULL;
	struct vgpu_args *args = NULL;
	uint32_t hin[N], hout[N];
	int ret;

	for (int i = 0; i < N; i++)
		hin[i] = (uint32_t)i * 2654435761u;
	ret = vgpu_bo_new(dev, sizeof(hin), 0, &in);
	if (!ret)
		ret = vgpu_bo_new(dev, sizeof(hout), 0, &out);
	if (!ret)
		ret = vgpu_bo_write(in, 0, hin, sizeof(hin));
	if (!ret)
		ret = vgpu_program_find_kernel(prog, "saxpy", &k);
	if (!ret)
		ret = vgpu_args_new(k, &args);
	if (!ret)
		ret = vgpu_args_set_bo(args, 0, out, 0);
	if (!ret)
		ret = vgpu_args_set_bo(args, 1, in, 0);
	if (!ret)
		ret = vgpu_args_set_u32(args, 2, 3);
	if (!ret)
		ret = run_kernel(k, N / 64, 64, args);
	if (!ret)
		ret = vgpu_bo_read(out, 0, hout, sizeof(hout));
	for (int i = 0; !ret && i < N; i++)
		if (hout[i] != hin[i] * 3 + 7 + add) {
			TH_LOG("saxpy out[%d] = %u, want %u", i, hout[i], hin[i] * 3 + 7 + add);
			ret = -1;
		}
	vgpu_args_free(args);
	args = NULL;
	if (!ret)
		ret = vgpu_program_find_kernel(prog, LONG_NAME, &k);
	if (!ret && vgpu_kernel_launch_check(k, &bad, NULL, 0) != -EINVAL) {
		TH_LOG("the kernel's .reqntid 32, 1, 1 was not enforced");
		ret = -1;
	}
	if (!ret)
		ret = vgpu_args_new(k, &args);
	if (!ret)
		ret = vgpu_args_set_bo(args, 0, out, 0);
	if (!ret)
		ret = run_kernel(k, 1, 32, args);
	if (!ret)
		ret = vgpu_bo_read(out, 0, hout, 32 * sizeof(uint32_t));
	for (uint32_t t = 0; !ret && t < 32; t++)
		if (hout[t] != t * t) {
			TH_LOG("long-named kernel out[%u] = %u", t, hout[t]);
			ret = -1;
		}
	vgpu_args_free(args);
	vgpu_bo_free(out);
	vgpu_bo_free(in);
	return ret;
}

/* Load module_ptx(@add) and check it; the program in *@out when not NULL. */
static int load_check(struct __test_metadata *_metadata, FIXTURE_DATA(cache) *self,
		      unsigned int add, struct vgpu_program **out)
{
	char *ptx = module_ptx(add);
	struct vgpu_program *prog = NULL;
	int ret;

	if (!ptx)
		return -ENOMEM;
	ret = vgpu_program_from_ptx(self->dev, ptx, strlen(ptx), "m.ptx", &prog, self->log,
				    sizeof(self->log));
	free(ptx);
	if (ret) {
		TH_LOG("%s\n%s", strerror(-ret), self->log);
		return ret;
	}
	ret = check_program(_metadata, self->dev, prog, add);
	if (out && !ret)
		*out = prog;
	else
		vgpu_program_free(prog);
	return ret;
}

static void hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < VGPU_SHA256_BYTES; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* FIPS 180-4 / NIST's examples, fed whole and in awkward pieces. */
static void sha256_vectors(struct __test_metadata *_metadata)
{
	static const struct {
		const char *msg;
		const char *digest;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnop"
		  "jklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	uint8_t d[VGPU_SHA256_BYTES];
	char h[2 * VGPU_SHA256_BYTES + 1];
	struct vgpu_sha256 s;
	static char million[1000000];

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t len = strlen(v[i].msg);

		vgpu_sha256(v[i].msg, len, d);
		hex(d, h);
		EXPECT_STREQ(v[i].digest, h) TH_LOG("vector %zu", i);
		/* one byte at a time */
		vgpu_sha256_init(&s);
		for (size_t j = 0; j < len; j++)
			vgpu_sha256_update(&s, v[i].msg + j, 1);
		vgpu_sha256_final(&s, d);
		hex(d, h);
		EXPECT_STREQ(v[i].digest, h) TH_LOG("vector %zu bytewise", i);
	}
	/* a million 'a's, in pieces of 1..127 bytes */
	memset(million, 'a', sizeof(million));
	vgpu_sha256_init(&s);
	for (size_t off = 0, step = 1; off < sizeof(million); off += step, step = step % 127 + 1)
		vgpu_sha256_update(&s, million + off,
				   step < sizeof(million) - off ? step : sizeof(million) - off);
	vgpu_sha256_final(&s, d);
	hex(d, h);
	EXPECT_STREQ("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", h);
}

/* The processor's choice (the SHA extensions where it has them), then the
 * plain C rounds; and the two agree on every length up to 300 bytes. */
TEST(sha256_known_vectors)
{
	static uint8_t buf[300];
	uint8_t a[VGPU_SHA256_BYTES], b[VGPU_SHA256_BYTES];

	sha256_vectors(_metadata);
	vgpu_sha256_portable(true);
	sha256_vectors(_metadata);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	for (size_t len = 0; len <= sizeof(buf); len++) {
		vgpu_sha256_portable(true);
		vgpu_sha256(buf, len, a);
		vgpu_sha256_portable(false);
		vgpu_sha256(buf, len, b);
		EXPECT_EQ(0, memcmp(a, b, sizeof(a))) TH_LOG("%zu bytes", len);
	}
}

/*
 * A miss compiles and stores; a hit reads it back: the same object bytes,
 * kernel names (the long one whole), parameters, directives and results.
 */
TEST_F(cache, miss_then_hit_is_the_same_program)
{
	struct vgpu_program *a = NULL, *b = NULL;
	struct ptxcache_stats st;
	void *ba = NULL, *bb = NULL, *obj = NULL;
	size_t la = 0, lb = 0, lo = 0;
	char *ptx = module_ptx(11111), *t1 = NULL, *t2 = NULL;

	ASSERT_NE(NULL, ptx);
	ASSERT_EQ(0, load_check(_metadata, self, 11111, &a));
	ptxcache_get_stats(&st);
	EXPECT_EQ(1ul, st.compiles);
	EXPECT_EQ(0ul, st.hits);
	EXPECT_EQ(1ul, st.stores);
	EXPECT_EQ(1, count_files(self->dir, NULL));

	ASSERT_EQ(0, load_check(_metadata, self, 11111, &b));
	ptxcache_get_stats(&st);
	EXPECT_EQ(1ul, st.compiles);
	EXPECT_EQ(1ul, st.hits);
	EXPECT_EQ(1ul, st.stores);

	ASSERT_EQ(0, vgpu_program_binary(a, &ba, &la));
	ASSERT_EQ(0, vgpu_program_binary(b, &bb, &lb));
	ASSERT_EQ(la, lb);
	EXPECT_EQ(0, memcmp(ba, bb, la));
	ASSERT_EQ(vgpu_program_kernel_count(a), vgpu_program_kernel_count(b));
	for (unsigned int i = 0; i < vgpu_program_kernel_count(a); i++) {
		const struct vgpu_kernel *ka, *kb;
		struct vgpu_kernel_info ia, ib;
		struct vgpu_arg_info aa, ab;

		ASSERT_EQ(0, vgpu_program_kernel(a, i, &ka));
		ASSERT_EQ(0, vgpu_program_kernel(b, i, &kb));
		vgpu_kernel_info(ka, &ia);
		vgpu_kernel_info(kb, &ib);
		EXPECT_STREQ(ia.name, ib.name);
		EXPECT_EQ(ia.entry, ib.entry);
		EXPECT_EQ(ia.smem_static, ib.smem_static);
		EXPECT_EQ(ia.param_size, ib.param_size);
		ASSERT_EQ(ia.nparams, ib.nparams);
		for (unsigned int j = 0; j < ia.nparams; j++) {
			ASSERT_EQ(0, vgpu_kernel_arg(ka, j, &aa));
			ASSERT_EQ(0, vgpu_kernel_arg(kb, j, &ab));
			EXPECT_STREQ(aa.name, ab.name);
			EXPECT_EQ(aa.type, ab.type);
			EXPECT_EQ(aa.offset, ab.offset);
			EXPECT_EQ(aa.size, ab.size);
		}
	}
	{
		const struct vgpu_kernel *k;
		struct vgpu_kernel_info ki;

		ASSERT_EQ(0, vgpu_program_kernel(b, 1, &k));
		vgpu_kernel_info(k, &ki);
		EXPECT_STREQ(LONG_NAME, ki.name);
	}
	/* the text and the object through the other entry points: hits too */
	ASSERT_EQ(0, vgpu_ptx_to_asm(ptx, strlen(ptx), "m.ptx", &t1, NULL, 0));
	ASSERT_EQ(0, vgpu_ptx_compile(ptx, strlen(ptx), "m.ptx", &t2, &obj, &lo, NULL, 0));
	EXPECT_STREQ(t1, t2);
	EXPECT_NE(NULL, strstr(t1, ".kernel saxpy"));
	ASSERT_EQ(la, lo);
	EXPECT_EQ(0, memcmp(ba, obj, la));
	ptxcache_get_stats(&st);
	EXPECT_EQ(1ul, st.compiles);
	EXPECT_EQ(3ul, st.hits);
	/* and the same text with the cache off */
	setenv("VGPU_CACHE_DISABLE", "1", 1);
	free(t2);
	ASSERT_EQ(0, vgpu_ptx_to_asm(ptx, strlen(ptx), "m.ptx", &t2, NULL, 0));
	EXPECT_STREQ(t1, t2);
	free(t1);
	free(t2);
	free(obj);
	free(ba);
	free(bb);
	free(ptx);
	vgpu_program_free(a);
	vgpu_program_free(b);
}

/*
 * Entries damaged every way a crash, a full disk or another program could
 * leave them: each refused, the module compiled again (right results),
 * the entry rewritten (the next load hits).
 */
TEST_F(cache, corrupt_entry_is_recompiled)
{
	struct ptxcache_stats st;
	char path[512], other[512];
	uint8_t *good = NULL, *foreign = NULL;
	size_t glen = 0, flen = 0;
	unsigned long rejected = 0, compiles = 0, hits = 0;

	/* another module's entry, to copy over this one's */
	ASSERT_EQ(0, load_check(_metadata, self, 22222, NULL));
	ASSERT_EQ(0, entry_path(self->dir, other, sizeof(other)));
	ASSERT_EQ(0, read_file(other, &foreign, &flen));
	ASSERT_EQ(0, unlink(other));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ASSERT_EQ(0, entry_path(self->dir, path, sizeof(path)));
	ASSERT_EQ(0, read_file(path, &good, &glen));
	ASSERT_GT(glen, 200u);
	compiles = 2;

	for (int how = 0; how < 8; how++) {
		uint8_t *bad = malloc(glen + 1);
		size_t blen = glen;

		ASSERT_NE(NULL, bad);
		memcpy(bad, good, glen);
		switch (how) {
		case 0: /* a flipped bit in the payload */
			bad[glen / 2] ^= 0x10;
			break;
		case 1: /* cut in half */
			blen = glen / 2;
			break;
		case 2: /* shorter than the header */
			blen = 10;
			break;
		case 3: /* empty */
			blen = 0;
			break;
		case 4: /* another module's entry under this name */
			free(bad);
			bad = malloc(flen);
			ASSERT_NE(NULL, bad);
			memcpy(bad, foreign, flen);
			blen = flen;
			break;
		case 5: /* a flipped bit in the checksum (after magic, version, key, size) */
			bad[4 + 4 + 32 + 8 + 3] ^= 1;
			break;
		case 7: /* a flipped bit in the key */
			bad[12] ^= 4;
			break;
		case 6: /* a byte more */
			bad[glen] = 0;
			blen = glen + 1;
			break;
		}
		ASSERT_EQ(0, write_file(path, bad, blen));
		free(bad);
		ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL)) TH_LOG("damage %d", how);
		rejected++;
		compiles++;
		ptxcache_get_stats(&st);
		EXPECT_EQ(rejected, st.rejected) TH_LOG("damage %d", how);
		EXPECT_EQ(compiles, st.compiles) TH_LOG("damage %d", how);
		/* rewritten whole: the next load hits */
		ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
		hits++;
		ptxcache_get_stats(&st);
		EXPECT_EQ(hits, st.hits) TH_LOG("damage %d", how);
		EXPECT_EQ(compiles, st.compiles) TH_LOG("damage %d", how);
	}
	free(good);
	free(foreign);
}

/* VGPU_CACHE_DISABLE=1 (or CUDA_CACHE_DISABLE=1 alone): nothing read or written. */
TEST_F(cache, disabled_writes_nothing)
{
	struct ptxcache_stats st;
	struct stat sb;

	ASSERT_EQ(0, setenv("VGPU_CACHE_DISABLE", "1", 1));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(2ul, st.compiles);
	EXPECT_EQ(0ul, st.hits);
	EXPECT_EQ(0ul, st.stores);
	EXPECT_NE(0, stat(self->dir, &sb)) TH_LOG("the cache directory was made");

	unsetenv("VGPU_CACHE_DISABLE");
	ASSERT_EQ(0, setenv("CUDA_CACHE_DISABLE", "1", 1));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(0ul, st.stores);
	EXPECT_NE(0, stat(self->dir, &sb));

	/* VGPU_ wins over CUDA_ */
	ASSERT_EQ(0, setenv("VGPU_CACHE_DISABLE", "0", 1));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(1ul, st.stores);
	EXPECT_EQ(1, count_files(self->dir, NULL));
}

/* CUDA_CACHE_PATH counts where VGPU_CACHE_PATH is unset. */
TEST_F(cache, cuda_cache_path)
{
	char cdir[160];

	snprintf(cdir, sizeof(cdir), "%s/cuda", self->root);
	unsetenv("VGPU_CACHE_PATH");
	ASSERT_EQ(0, setenv("CUDA_CACHE_PATH", cdir, 1));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	EXPECT_EQ(1, count_files(cdir, NULL));
	EXPECT_EQ(0, count_files(self->dir, NULL));
}

/* The default: $XDG_CACHE_HOME/vgpu/ptx (an absolute one), else $HOME/.cache/vgpu/ptx. */
TEST_F(cache, default_directory)
{
	char xdg[160], home[160], want[200];

	snprintf(xdg, sizeof(xdg), "%s/xdg", self->root);
	snprintf(home, sizeof(home), "%s/home", self->root);
	unsetenv("VGPU_CACHE_PATH");
	ASSERT_EQ(0, setenv("XDG_CACHE_HOME", xdg, 1));
	ASSERT_EQ(0, setenv("HOME", home, 1));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	snprintf(want, sizeof(want), "%s/vgpu/ptx", xdg);
	EXPECT_EQ(1, count_files(want, NULL));

	ASSERT_EQ(0, setenv("XDG_CACHE_HOME", "relative", 1)); /* not absolute: ignored */
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	snprintf(want, sizeof(want), "%s/.cache/vgpu/ptx", home);
	EXPECT_EQ(1, count_files(want, NULL));

	unsetenv("XDG_CACHE_HOME");
	unsetenv("HOME"); /* nowhere to keep it: compiled each time */
	ASSERT_EQ(0, load_check(_metadata, self, 22222, NULL));
	EXPECT_EQ(1, count_files(want, NULL));
}

/* Modules that differ in one constant: two entries, each its own results. */
TEST_F(cache, different_ptx_different_entry)
{
	struct ptxcache_stats st;

	ASSERT_EQ(0, load_check(_metadata, self, 10000, NULL));
	ASSERT_EQ(0, load_check(_metadata, self, 10001, NULL));
	EXPECT_EQ(2, count_files(self->dir, NULL));
	ASSERT_EQ(0, load_check(_metadata, self, 10000, NULL));
	ASSERT_EQ(0, load_check(_metadata, self, 10001, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(2ul, st.compiles);
	EXPECT_EQ(2ul, st.hits);
}

static int set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = { { .tv_sec = t }, { .tv_sec = t } };

	return utimensat(AT_FDCWD, path, ts, 0);
}

/* The path of an entry of @dir other than @not. */
static int other_entry(const char *dir, const char *not, char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -errno;
	out[0] = '\0';
	while ((de = readdir(d)))
		if (strstr(de->d_name, ".vgpc") && strcmp(strrchr(not, '/') + 1, de->d_name))
			snprintf(out, len, "%s/%s", dir, de->d_name);
	closedir(d);
	return out[0] ? 0 : -ENOENT;
}

/*
 * VGPU_CACHE_MAXSIZE of 2.5 entries: the third store removes the oldest
 * by mtime (a hit refreshes it); an entry larger than the bound is not
 * stored at all.
 */
TEST_F(cache, eviction_at_maxsize)
{
	char pa[512], pb[512], max[32];
	struct ptxcache_stats st;
	struct stat sb;
	time_t now = time(NULL);

	/* the entry's size, from a first cache */
	ASSERT_EQ(0, load_check(_metadata, self, 10000, NULL));
	ASSERT_EQ(0, entry_path(self->dir, pa, sizeof(pa)));
	ASSERT_EQ(0, stat(pa, &sb));
	snprintf(max, sizeof(max), "%lld", (long long)sb.st_size * 5 / 2);
	ASSERT_EQ(0, setenv("VGPU_CACHE_MAXSIZE", max, 1));
	ASSERT_EQ(0, unlink(pa));

	strcat(self->dir, "2"); /* a fresh directory */
	ASSERT_EQ(0, setenv("VGPU_CACHE_PATH", self->dir, 1));
	ASSERT_EQ(0, load_check(_metadata, self, 10001, NULL));
	ASSERT_EQ(0, entry_path(self->dir, pa, sizeof(pa)));
	ASSERT_EQ(0, set_mtime(pa, now - 100));
	ASSERT_EQ(0, load_check(_metadata, self, 10002, NULL));
	ASSERT_EQ(2, count_files(self->dir, NULL));
	/* B: the one that is not A */
	ASSERT_EQ(0, other_entry(self->dir, pa, pb, sizeof(pb)));
	ASSERT_NE('\0', pb[0]);
	ASSERT_EQ(0, set_mtime(pb, now - 50));
	/* a hit on A makes it the newest: B is the oldest now */
	ASSERT_EQ(0, load_check(_metadata, self, 10001, NULL));
	ASSERT_EQ(0, stat(pa, &sb));
	EXPECT_GE(sb.st_mtime, now - 1);
	ASSERT_EQ(0, load_check(_metadata, self, 10003, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(1ul, st.evicted);
	EXPECT_EQ(2, count_files(self->dir, NULL));
	EXPECT_EQ(0, stat(pa, &sb)) TH_LOG("the recently used entry was evicted");
	EXPECT_NE(0, stat(pb, &sb)) TH_LOG("the oldest entry was kept");

	/* an entry larger than the bound: not stored */
	ASSERT_EQ(0, setenv("VGPU_CACHE_MAXSIZE", "100", 1));
	ASSERT_EQ(0, load_check(_metadata, self, 10004, NULL));
	EXPECT_EQ(2, count_files(self->dir, NULL));
	/* a bound that is not a number: the default */
	ASSERT_EQ(0, setenv("VGPU_CACHE_MAXSIZE", "lots", 1));
	ASSERT_EQ(0, load_check(_metadata, self, 10004, NULL));
	EXPECT_EQ(3, count_files(self->dir, NULL));
}

/*
 * Six processes load the same module into an empty cache at once: each
 * compiles or reads a whole entry, all get the right results, and one
 * entry remains, no temporary file.
 */
TEST_F(cache, concurrent_writers)
{
	enum { NPROC = 6 };
	pid_t pids[NPROC];
	int others = 0, failed = 0;
	struct ptxcache_stats st;

	int go[2];

	/* the children start together: when the parent closes the pipe */
	ASSERT_EQ(0, pipe(go));
	for (int i = 0; i < NPROC; i++) {
		pids[i] = fork();
		ASSERT_NE(-1, pids[i]);
		if (pids[i] == 0) {
			struct vgpu_device *dev = NULL;
			char *ptx = module_ptx(14242), c;
			struct vgpu_program *prog = NULL;
			int ret;

			close(go[1]);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
			ret = vgpu_device_open("sim", &dev);

			if (!ret)
				ret = vgpu_program_from_ptx(dev, ptx, strlen(ptx), "m.ptx", &prog,
							    NULL, 0);
			if (!ret)
				ret = check_program(_metadata, dev, prog, 14242);
			vgpu_program_free(prog);
			vgpu_device_close(dev);
			free(ptx);
			_exit(ret ? 1 : 0);
		}
	}
	close(go[0]);
	close(go[1]);
	for (int i = 0; i < NPROC; i++) {
		int status = 0;

		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	EXPECT_EQ(0, failed);
	EXPECT_EQ(1, count_files(self->dir, &others));
	EXPECT_EQ(0, others);
	ASSERT_EQ(0, load_check(_metadata, self, 14242, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(1ul, st.hits);
	EXPECT_EQ(0ul, st.compiles);
}

/* A directory that cannot be made: loads work, nothing is stored. */
TEST_F(cache, unusable_directory)
{
	char file[160], dir[200];
	struct ptxcache_stats st;

	snprintf(file, sizeof(file), "%s/file", self->root);
	ASSERT_EQ(0, write_file(file, "x", 1));
	snprintf(dir, sizeof(dir), "%s/cache", file); /* under a regular file */
	ASSERT_EQ(0, setenv("VGPU_CACHE_PATH", dir, 1));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ASSERT_EQ(0, load_check(_metadata, self, 11111, NULL));
	ptxcache_get_stats(&st);
	EXPECT_EQ(2ul, st.compiles);
	EXPECT_EQ(0ul, st.stores);
}

/* A module that does not compile: the error each time, never an entry. */
TEST_F(cache, failed_compile_is_not_stored)
{
	static const char bad[] = ".version 8.5\n.target sm_90a\n.address_size 64\n"
				  ".visible .entry k()\n{\n frobnicate.u32 1;\n ret;\n}\n";
	struct vgpu_program *prog = NULL;
	struct ptxcache_stats st;

	for (int i = 0; i < 2; i++) {
		self->log[0] = '\0';
		EXPECT_EQ(-EINVAL, vgpu_program_from_ptx(self->dev, bad, sizeof(bad) - 1, "bad.ptx",
							 &prog, self->log, sizeof(self->log)));
		EXPECT_NE(NULL, strstr(self->log, "bad.ptx:6:")) TH_LOG("%s", self->log);
	}
	ptxcache_get_stats(&st);
	EXPECT_EQ(2ul, st.compiles);
	EXPECT_EQ(0ul, st.stores);
	EXPECT_EQ(0, count_files(self->dir, NULL));
}

TEST_HARNESS_MAIN
