// SPDX-License-Identifier: MIT
/*
 * DOC: the PTX compile cache
 *
 * Compiling PTX is the slow part of loading a CUDA module (seconds for
 * the megabyte of PTX that cub's device algorithms make), and every
 * process that loads the same module used to compile it again.  As
 * NVIDIA's driver does (CUDA_CACHE_PATH), libvgpu keeps what the front end
 * makes of a module in a directory, one file per module:
 *
 *   DIR/KEY.vgpc    KEY: 64 hex digits, SHA-256 of a domain string, the
 *                   entry format's version, the compiler's identity and
 *                   the PTX bytes
 *
 * The compiler's identity is the GNU build-id of the ELF module that holds
 * this code (libvgpu.so.2, or the program libvgpu.a was linked into),
 * found with dl_iterate_phdr(); without a build-id, a SHA-256 of its
 * executable segments.  Any change to libvgpu's code changes it, so a
 * rebuilt library never reads an entry an older one wrote.  The front end
 * has no options and the file name it is given only appears in
 * diagnostics (a failed compile is never stored), so neither is in the key.
 *
 * An entry (little-endian):
 *
 *   header   "VGPC", version, KEY, payload size, SHA-256 of the payload
 *   payload  object size, text size, kernel count, 0;
 *            the object (object.c's format: code, kernels, parameters,
 *            module data); the generated assembly (what libcuda reads
 *            its facts from); per kernel its object name, its PTX
 *            directives and its whole PTX name
 *
 * A reader trusts nothing: the size, the key in the header, the checksum
 * and then every field are checked (vgpu_object_read() checks the
 * object); an entry that fails is ignored (the module is compiled and the
 * entry replaced).  A writer writes a temporary file in the directory and
 * rename()s it over the entry, so concurrent processes see a whole entry
 * or none.  A hit sets the entry's mtime; after a store, when the
 * directory holds more than the size bound, the oldest entries by mtime
 * go until it holds 9/10 of it.  The bound is enforced by the process
 * that writes: each process sums the directory once, then adds what it
 * writes, so concurrent writers can overshoot it briefly.
 *
 * Environment (read at each load): VGPU_CACHE_DISABLE=1 turns the cache
 * off, VGPU_CACHE_PATH names the directory (default
 * $XDG_CACHE_HOME/vgpu/ptx, else $HOME/.cache/vgpu/ptx: the project's
 * scripts keep ccache and the debug kernel in ~/.cache/vgpu),
 * VGPU_CACHE_MAXSIZE the bound in bytes (default
 * 256 MiB; an entry larger than it is not stored).  Where a VGPU_ variable
 * is unset its CUDA_CACHE_ namesake counts, so CUDA programs' settings
 * apply.  A directory that cannot be made or written turns storing off
 * silently.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "le.h"
#include "ptxcache.h"
#include "sha256.h"

#define ENTRY_MAGIC 0x43504756u /* "VGPC" */
#define ENTRY_VERSION 1u
#define HDR_BYTES (4 + 4 + VGPU_SHA256_BYTES + 8 + VGPU_SHA256_BYTES)
#define PAYLOAD_HDR_BYTES 16
#define KATTR_WORDS 16 /* struct ptx_kattrs as 32-bit words, then the name's length */
#define KATTR_BYTES (32 + 4 * KATTR_WORDS)
#define DEFAULT_MAXSIZE (256ull << 20)
/* an entry the reader does not even try: far beyond any module */
#define ENTRY_MAX_BYTES (1ull << 31)
#define NAME_MAX_BYTES (1u << 20)
#define SUFFIX ".vgpc"
#define TMP_INFIX ".vgpc.tmp."
/* a temporary file older than this is a crashed writer's: removed */
#define STALE_TMP_SECONDS 3600

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptxcache_stats stats;
/* what this process knows of a directory's size (evict()); under stats_lock */
static char known_dir[PATH_MAX];
static uint64_t known_total;

/* a child forked while another thread held stats_lock gets it free */
static void fork_prepare(void)
{
	pthread_mutex_lock(&stats_lock);
}

static void fork_done(void)
{
	pthread_mutex_unlock(&stats_lock);
}

__attribute__((constructor)) static void ptxcache_atfork(void)
{
	pthread_atfork(fork_prepare, fork_done, fork_done);
}

static void count(unsigned long *field, unsigned long n)
{
	pthread_mutex_lock(&stats_lock);
	*field += n;
	pthread_mutex_unlock(&stats_lock);
}

void ptxcache_get_stats(struct ptxcache_stats *out)
{
	pthread_mutex_lock(&stats_lock);
	*out = stats;
	pthread_mutex_unlock(&stats_lock);
}

void ptx_compiled_fini(struct ptx_compiled *c)
{
	if (!c)
		return;
	free(c->text);
	vgpu_object_fini(&c->obj);
	ptx_kernel_attrs_free(c->attrs, c->nattrs);
	memset(c, 0, sizeof(*c));
}

/* ---- configuration ---- */

struct cache_cfg {
	char dir[PATH_MAX];
	uint64_t maxsize;
};

/* $VGPU_NAME, else $CUDA_NAME; unset and empty are alike */
static const char *env2(const char *vgpu, const char *cuda)
{
	const char *v = getenv(vgpu);

	if (v && *v)
		return v;
	v = getenv(cuda);
	return v && *v ? v : NULL;
}

static bool cache_config(struct cache_cfg *cfg)
{
	const char *v = env2("VGPU_CACHE_DISABLE", "CUDA_CACHE_DISABLE");
	const char *home;
	int n;

	if (v && strcmp(v, "0"))
		return false;
	cfg->maxsize = DEFAULT_MAXSIZE;
	v = env2("VGPU_CACHE_MAXSIZE", "CUDA_CACHE_MAXSIZE");
	if (v) {
		char *end;
		unsigned long long m;

		errno = 0;
		m = strtoull(v, &end, 10);
		if (!errno && end != v && !*end && v[0] != '-')
			cfg->maxsize = m;
	}
	v = env2("VGPU_CACHE_PATH", "CUDA_CACHE_PATH");
	if (v)
		n = snprintf(cfg->dir, sizeof(cfg->dir), "%s", v);
	else if ((home = getenv("XDG_CACHE_HOME")) && home[0] == '/')
		n = snprintf(cfg->dir, sizeof(cfg->dir), "%s/vgpu/ptx", home);
	else if ((home = getenv("HOME")) && home[0])
		n = snprintf(cfg->dir, sizeof(cfg->dir), "%s/.cache/vgpu/ptx", home);
	else
		return false;
	/* room for "/KEY.vgpc.tmp.PID.N" */
	return n > 0 && (size_t)n + 128 < sizeof(cfg->dir);
}

/* mkdir -p, the new directories private to the user */
static bool make_dir(const char *dir)
{
	char p[PATH_MAX];
	struct stat st;

	if (!stat(dir, &st))
		return S_ISDIR(st.st_mode);
	snprintf(p, sizeof(p), "%s", dir);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST)
			return false;
		*s = '/';
	}
	if (mkdir(p, 0700) && errno != EEXIST)
		return false;
	return !stat(dir, &st) && S_ISDIR(st.st_mode);
}

/* ---- the compiler's identity ---- */

static pthread_once_t id_once = PTHREAD_ONCE_INIT;
static uint8_t compiler_id[VGPU_SHA256_BYTES];
static bool compiler_id_ok;

struct id_search {
	uintptr_t addr; /* an address of this code */
	bool found;
};

/* The module's NT_GNU_BUILD_ID note into compiler_id (hashed with its tag). */
static bool build_id(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		const uint8_t *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t name = (nh->n_namesz + 3) & ~(size_t)3;
			size_t desc = (nh->n_descsz + 3) & ~(size_t)3;
			const uint8_t *q = p + sizeof(*nh);

			if (name > (size_t)(end - q) || desc > (size_t)(end - q - name))
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(q, "GNU", 4) && nh->n_descsz) {
				struct vgpu_sha256 s;

				vgpu_sha256_init(&s);
				vgpu_sha256_update(&s, "build-id", 8);
				vgpu_sha256_update(&s, q + name, nh->n_descsz);
				vgpu_sha256_final(&s, compiler_id);
				return true;
			}
			p = q + name + desc;
		}
	}
	return false;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct id_search *s = data;
	bool here = false;

	for (int i = 0; i < info->dlpi_phnum && !here; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		here = ph->p_type == PT_LOAD && s->addr >= start && s->addr - start < ph->p_memsz;
	}
	if (!here)
		return 0;
	s->found = true;
	if (!build_id(info)) {
		/* no build-id: the code itself */
		struct vgpu_sha256 h;

		vgpu_sha256_init(&h);
		vgpu_sha256_update(&h, "text", 4);
		for (int i = 0; i < info->dlpi_phnum; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

			if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
				vgpu_sha256_update(&h, (const void *)(info->dlpi_addr + ph->p_vaddr),
						   ph->p_filesz);
		}
		vgpu_sha256_final(&h, compiler_id);
	}
	return 1;
}

static void compute_compiler_id(void)
{
	struct id_search s = { .addr = (uintptr_t)&ptx_to_vgs_attrs };

	dl_iterate_phdr(find_module, &s);
	compiler_id_ok = s.found;
}

static bool cache_key(const char *src, size_t len, uint8_t key[VGPU_SHA256_BYTES])
{
	static const char domain[] = "vgpu ptx compile cache";
	struct vgpu_sha256 s;
	uint8_t word[8];

	pthread_once(&id_once, compute_compiler_id);
	if (!compiler_id_ok)
		return false;
	vgpu_sha256_init(&s);
	vgpu_sha256_update(&s, domain, sizeof(domain));
	for (int i = 0; i < 4; i++)
		word[i] = (uint8_t)(ENTRY_VERSION >> (8 * i));
	vgpu_sha256_update(&s, word, 4);
	vgpu_sha256_update(&s, compiler_id, sizeof(compiler_id));
	for (int i = 0; i < 8; i++)
		word[i] = (uint8_t)((uint64_t)len >> (8 * i));
	vgpu_sha256_update(&s, word, 8);
	vgpu_sha256_update(&s, src, len);
	vgpu_sha256_final(&s, key);
	return true;
}

static void entry_name(char *out, const uint8_t key[VGPU_SHA256_BYTES])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < VGPU_SHA256_BYTES; i++) {
		out[2 * i] = hex[key[i] >> 4];
		out[2 * i + 1] = hex[key[i] & 15];
	}
	memcpy(out + 2 * VGPU_SHA256_BYTES, SUFFIX, sizeof(SUFFIX));
}

static void kattrs_words(const struct ptx_kattrs *a, uint32_t w[KATTR_WORDS - 1])
{
	for (int i = 0; i < 3; i++) {
		w[i] = a->reqntid[i];
		w[3 + i] = a->maxntid[i];
		w[6 + i] = a->reqnctapercluster[i];
	}
	w[9] = a->maxclusterrank;
	w[10] = a->minnctapersm;
	w[11] = a->maxnreg;
	w[12] = a->explicitcluster;
	w[13] = 0;
	w[14] = 0;
}

/* ---- reading ---- */

/*
 * The payload -> *@out; false when anything is out of place.  The object
 * is checked by vgpu_object_read(); each kernel of it has one entry of
 * directives, under its name.
 */
static bool parse_payload(const uint8_t *p, uint64_t size, struct ptx_compiled *out)
{
	uint32_t osize, tsize, n;
	const uint8_t *end = p + size;

	if (size < PAYLOAD_HDR_BYTES)
		return false;
	osize = vgpu_get_le32(p);
	tsize = vgpu_get_le32(p + 4);
	n = vgpu_get_le32(p + 8);
	if (vgpu_get_le32(p + 12))
		return false;
	p += PAYLOAD_HDR_BYTES;
	if ((uint64_t)osize + tsize > (uint64_t)(end - p) || !tsize || memchr(p + osize, 0, tsize))
		return false;
	if (vgpu_object_read(p, osize, &out->obj, NULL, 0))
		return false;
	p += osize;
	out->text = malloc((size_t)tsize + 1);
	if (!out->text)
		return false;
	memcpy(out->text, p, tsize);
	out->text[tsize] = '\0';
	p += tsize;
	if (n != out->obj.nkernels)
		return false;
	out->attrs = calloc(n, sizeof(*out->attrs));
	if (!out->attrs)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		struct ptx_kernel_attrs *ka = &out->attrs[i];
		uint32_t w[KATTR_WORDS], flen;

		if ((size_t)(end - p) < KATTR_BYTES)
			return false;
		memcpy(ka->name, p, sizeof(ka->name));
		if (!memchr(ka->name, 0, sizeof(ka->name)) ||
		    strncmp(ka->name, out->obj.kernels[i].name, sizeof(ka->name)))
			return false;
		for (int j = 0; j < KATTR_WORDS; j++)
			w[j] = vgpu_get_le32(p + 32 + 4 * j);
		for (int j = 0; j < 3; j++) {
			ka->attrs.reqntid[j] = w[j];
			ka->attrs.maxntid[j] = w[3 + j];
			ka->attrs.reqnctapercluster[j] = w[6 + j];
		}
		ka->attrs.maxclusterrank = w[9];
		ka->attrs.minnctapersm = w[10];
		ka->attrs.maxnreg = w[11];
		ka->attrs.explicitcluster = w[12];
		flen = w[15];
		if (w[12] > 1 || w[13] || w[14] || !flen || flen > NAME_MAX_BYTES)
			return false;
		p += KATTR_BYTES;
		if ((size_t)(end - p) < flen || memchr(p, 0, flen))
			return false;
		ka->full = strndup((const char *)p, flen);
		if (!ka->full)
			return false;
		out->nattrs = (int)i + 1;
		p += flen;
	}
	return p == end;
}

/* 0 and *@out on a hit, -ENOENT when there is no entry, -EBADMSG when it is refused. */
static int entry_read(const char *path, const uint8_t key[VGPU_SHA256_BYTES],
		      struct ptx_compiled *out)
{
	uint8_t sum[VGPU_SHA256_BYTES], *buf;
	struct stat st;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < HDR_BYTES ||
	    (uint64_t)st.st_size > ENTRY_MAX_BYTES) {
		close(fd);
		return -EBADMSG;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	ok = got == (size_t)st.st_size && vgpu_get_le32(buf) == ENTRY_MAGIC &&
	     vgpu_get_le32(buf + 4) == ENTRY_VERSION && !memcmp(buf + 8, key, VGPU_SHA256_BYTES) &&
	     vgpu_get_le64(buf + 8 + VGPU_SHA256_BYTES) == got - HDR_BYTES;
	if (ok) {
		vgpu_sha256(buf + HDR_BYTES, got - HDR_BYTES, sum);
		ok = !memcmp(sum, buf + 16 + VGPU_SHA256_BYTES, VGPU_SHA256_BYTES) &&
		     parse_payload(buf + HDR_BYTES, got - HDR_BYTES, out);
	}
	if (ok)
		futimens(fd, NULL); /* recently used: the last to be evicted */
	close(fd);
	free(buf);
	if (!ok) {
		ptx_compiled_fini(out);
		return -EBADMSG;
	}
	return 0;
}

/* ---- writing ---- */

/* The directives of the object's kernel @k, or NULL. */
static const struct ptx_kernel_attrs *kernel_attrs(const struct ptx_compiled *c, uint32_t k)
{
	for (int i = 0; i < c->nattrs; i++)
		if (!strncmp(c->attrs[i].name, c->obj.kernels[k].name, sizeof(c->attrs[i].name)))
			return &c->attrs[i];
	return NULL;
}

/* The entry's bytes (malloc'd), or NULL; the directives in the object's kernel order. */
static uint8_t *serialize(const uint8_t key[VGPU_SHA256_BYTES], const struct ptx_compiled *c,
			  size_t *len)
{
	uint8_t *obj, *buf, *p;
	size_t olen, tlen = strlen(c->text), total;

	if ((uint32_t)c->nattrs != c->obj.nkernels || tlen > UINT32_MAX)
		return NULL;
	total = HDR_BYTES + PAYLOAD_HDR_BYTES + tlen;
	for (uint32_t k = 0; k < c->obj.nkernels; k++) {
		const struct ptx_kernel_attrs *ka = kernel_attrs(c, k);

		if (!ka || !ka->full || !ka->full[0] || strlen(ka->full) > NAME_MAX_BYTES)
			return NULL;
		total += KATTR_BYTES + strlen(ka->full);
	}
	if (vgpu_object_write(&c->obj, &obj, &olen))
		return NULL;
	total += olen;
	if (total > ENTRY_MAX_BYTES || !(buf = calloc(1, total))) {
		free(obj);
		return NULL;
	}
	vgpu_put_le32(buf, ENTRY_MAGIC);
	vgpu_put_le32(buf + 4, ENTRY_VERSION);
	memcpy(buf + 8, key, VGPU_SHA256_BYTES);
	vgpu_put_le64(buf + 8 + VGPU_SHA256_BYTES, total - HDR_BYTES);
	p = buf + HDR_BYTES;
	vgpu_put_le32(p, (uint32_t)olen);
	vgpu_put_le32(p + 4, (uint32_t)tlen);
	vgpu_put_le32(p + 8, c->obj.nkernels);
	p += PAYLOAD_HDR_BYTES;
	memcpy(p, obj, olen);
	p += olen;
	free(obj);
	memcpy(p, c->text, tlen);
	p += tlen;
	for (uint32_t k = 0; k < c->obj.nkernels; k++) {
		const struct ptx_kernel_attrs *ka = kernel_attrs(c, k);
		uint32_t w[KATTR_WORDS - 1];
		size_t flen = strlen(ka->full);

		memcpy(p, ka->name, strnlen(ka->name, sizeof(ka->name) - 1));
		kattrs_words(&ka->attrs, w);
		for (int j = 0; j < KATTR_WORDS - 1; j++)
			vgpu_put_le32(p + 32 + 4 * j, w[j]);
		vgpu_put_le32(p + 32 + 4 * (KATTR_WORDS - 1), (uint32_t)flen);
		p += KATTR_BYTES;
		memcpy(p, ka->full, flen);
		p += flen;
	}
	vgpu_sha256(buf + HDR_BYTES, total - HDR_BYTES, buf + 16 + VGPU_SHA256_BYTES);
	*len = total;
	return buf;
}

static bool write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

struct dent {
	char name[2 * VGPU_SHA256_BYTES + sizeof(SUFFIX)];
	uint64_t size;
	struct timespec mtime;
};

static int dent_older(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;

	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool is_entry_name(const char *n)
{
	size_t hexlen = 2 * VGPU_SHA256_BYTES;

	if (strlen(n) != hexlen + strlen(SUFFIX) || strcmp(n + hexlen, SUFFIX))
		return false;
	for (size_t i = 0; i < hexlen; i++)
		if (!((n[i] >= '0' && n[i] <= '9') || (n[i] >= 'a' && n[i] <= 'f')))
			return false;
	return true;
}

/*
 * After writing @added bytes as @keep: when the directory may be over the
 * bound, sum it (and remove crashed writers' temporary files) and, when it
 * is over, remove the oldest entries but @keep until it holds 9/10 of it.
 */
static void evict(const struct cache_cfg *cfg, uint64_t added, const char *keep)
{
	struct dent *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	unsigned long removed = 0;
	struct timespec now;
	struct dirent *de;
	DIR *d;
	int dfd;

	pthread_mutex_lock(&stats_lock);
	if (!strcmp(known_dir, cfg->dir) && known_total + added <= cfg->maxsize) {
		known_total += added;
		pthread_mutex_unlock(&stats_lock);
		return;
	}
	pthread_mutex_unlock(&stats_lock);
	d = opendir(cfg->dir);
	if (!d)
		return;
	dfd = dirfd(d);
	clock_gettime(CLOCK_REALTIME, &now);
	while ((de = readdir(d))) {
		struct stat st;

		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (strstr(de->d_name, TMP_INFIX)) {
			if (now.tv_sec - st.st_mtim.tv_sec > STALE_TMP_SECONDS)
				unlinkat(dfd, de->d_name, 0);
			continue;
		}
		if (!is_entry_name(de->d_name))
			continue;
		if (n == cap) {
			struct dent *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", de->d_name);
		v[n].size = (uint64_t)st.st_size;
		v[n].mtime = st.st_mtim;
		total += v[n++].size;
	}
	if (total > cfg->maxsize && v) {
		uint64_t target = cfg->maxsize / 10 * 9;

		qsort(v, n, sizeof(*v), dent_older);
		for (size_t i = 0; i < n && total > target; i++) {
			if (!strcmp(v[i].name, keep) || unlinkat(dfd, v[i].name, 0))
				continue;
			total -= v[i].size;
			removed++;
		}
	}
	closedir(d);
	free(v);
	pthread_mutex_lock(&stats_lock);
	snprintf(known_dir, sizeof(known_dir), "%s", cfg->dir);
	known_total = total;
	stats.evicted += removed;
	pthread_mutex_unlock(&stats_lock);
}

static void entry_write(const struct cache_cfg *cfg, const uint8_t key[VGPU_SHA256_BYTES],
			const struct ptx_compiled *c)
{
	static atomic_uint seq;
	char name[2 * VGPU_SHA256_BYTES + sizeof(SUFFIX)], path[PATH_MAX + 128], tmp[PATH_MAX + 256];
	size_t len;
	uint8_t *buf = serialize(key, c, &len);
	bool ok;
	int fd;

	if (!buf)
		return;
	if (len > cfg->maxsize || !make_dir(cfg->dir)) {
		free(buf);
		return;
	}
	entry_name(name, key);
	snprintf(path, sizeof(path), "%s/%s", cfg->dir, name);
	snprintf(tmp, sizeof(tmp), "%s/%.64s" TMP_INFIX "%ld.%u", cfg->dir, name, (long)getpid(),
		 atomic_fetch_add(&seq, 1));
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		free(buf);
		return;
	}
	ok = write_all(fd, buf, len);
	ok = !close(fd) && ok;
	free(buf);
	if (!ok || rename(tmp, path)) {
		unlink(tmp);
		return;
	}
	count(&stats.stores, 1);
	evict(cfg, len, name);
}

/* ---- the entry point ---- */

int ptx_compile_cached(const char *src, size_t len, const char *file,
		       struct ptx_compiled *out, char *log, size_t loglen)
{
	struct cache_cfg cfg;
	uint8_t key[VGPU_SHA256_BYTES];
	char name[2 * VGPU_SHA256_BYTES + sizeof(SUFFIX)], path[PATH_MAX + 128];
	bool use = cache_config(&cfg) && cache_key(src, len, key);
	int ret;

	memset(out, 0, sizeof(*out));
	if (log && loglen)
		log[0] = '\0';
	if (use) {
		entry_name(name, key);
		snprintf(path, sizeof(path), "%s/%s", cfg.dir, name);
		ret = entry_read(path, key, out);
		if (!ret) {
			count(&stats.hits, 1);
			return 0;
		}
		if (ret == -EBADMSG)
			count(&stats.rejected, 1);
	}
	count(&stats.compiles, 1);
	ret = ptx_to_vgs_attrs(src, len, file, &out->text, log, loglen, &out->attrs,
			       &out->nattrs, &out->obj);
	if (ret) {
		memset(out, 0, sizeof(*out));
		return ret;
	}
	if (use)
		entry_write(&cfg, key, out);
	return 0;
}
