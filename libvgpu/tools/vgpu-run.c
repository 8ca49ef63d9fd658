/* SPDX-License-Identifier: MIT */
/*
 * vgpu-run: run one kernel through libvgpu, on either backend: the vgpu
 * DRM driver (drm) or the in-process execution core (sim).
 *
 * Each --buffer is a buffer object of the device, zero-filled or loaded
 * from a file; its GPU address is the device's.  Each --tensor-map is a
 * 128-byte struct vgpu_tensor_map (uapi/vgpu_hw.h) in a small buffer
 * object of its own, describing a tensor stored densely in an earlier
 * buffer (its base is that buffer's GPU address).  The kernel's parameters
 * are the buffers' and tensor maps' addresses, in the order the options
 * are given: pushed back to back for a kernel without .param
 * declarations, else set into its ptr/u64 parameters in turn.
 *
 * Exit status: 0 success, 1 host failure (out of memory, I/O, no device),
 * 2 usage, assembly or launch-parameter error (also a sim-only option on
 * the drm backend), 3 device exception (the record is printed to stderr).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu.h"

#define EXIT_HOST 1
#define EXIT_USAGE 2
#define EXIT_DEVICE 3

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vgpu-run writes tensor maps in host byte order"
#endif

#define BUFFER_MAX VGPU_BO_MAX_SIZE

/* A --buffer, or a --tensor-map (@is_tmap): one buffer object. */
struct buffer {
	char *name;	  /* points into argv */
	const char *file; /* NULL: zero-filled */
	uint64_t size;	  /* bytes asked for (the BO rounds up to pages) */
	struct vgpu_bo *bo;
	bool is_tmap;
	unsigned int target;	  /* tensor map: index of its buffer */
	struct vgpu_tensor_map tm; /* tensor map: the descriptor, less base */
};

struct gmem {
	struct buffer *bufs;
	unsigned int nbufs;
};

/* A --arg TYPE:VALUE: the kernel's parameters, in order, laid out as PTX
 * lays them out (natural alignment; a tensor map by value at 64). */
enum karg_type { KA_U32, KA_S32, KA_F32, KA_U64, KA_S64, KA_F64, KA_PTR, KA_TMAP };

struct karg {
	enum karg_type type;
	uint64_t bits;	  /* the value (a float's bits) */
	unsigned int ref; /* ptr, tmap: index of the buffer or tensor map */
	const char *spec; /* as given, for messages */
};

struct options {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint64_t smem_dyn;
	uint64_t seed;
	uint64_t budget;
	uint64_t tma_latency;
	uint64_t tma_bandwidth;
	bool random_sched;
	bool no_sanitize;
	bool trace;
	const char *timeline;	    /* --timeline FILE */
	const char *deadlock_graph; /* --deadlock-graph FILE */
	uint64_t timeline_bytes;
	struct karg *kargs;
	unsigned int nkargs;
	const char *kernel_name;
	const char *device;
	const char *backend;
	const char *path;
	const char **dumps;
	unsigned int ndumps;
};

static const char usage_text[] =
	"usage: vgpu-run [OPTION]... KERNEL\n"
	"Run a kernel (assembly source or object file) through libvgpu, on the\n"
	"vgpu DRM driver (drm backend) or the in-process vGPU core (sim backend).\n"
	"\n"
	"  --grid X[,Y[,Z]]          CTAs per dimension (default 1)\n"
	"  --block X[,Y[,Z]]         threads per CTA per dimension (default 32)\n"
	"  --cluster X[,Y[,Z]]       CTAs per cluster per dimension (default 1);\n"
	"                            each divides the grid's, at most 16 CTAs\n"
	"  --smem BYTES              dynamic shared memory per CTA, added to the\n"
	"                            kernel's .shared allocations (default 0)\n"
	"  --seed N                  scheduler seed (default 1)\n"
	"  --random-schedule         seeded random interleaving of warps\n"
	"  --budget N                maximum warp-instructions (default: device's)\n"
	"  --no-sanitize             do not turn mbarrier and async-copy undefined\n"
	"                            behaviour into exceptions (on by default)\n"
	"  --tma-latency N           cycles from issue to the first byte of an\n"
	"                            asynchronous copy (default: core's, 500; sim\n"
	"                            only: on drm it is a QEMU device property)\n"
	"  --tma-bandwidth N         bytes the copy engine moves per cycle\n"
	"                            (default: core's, 64; sim only)\n"
	"  --kernel NAME             kernel to run (default: the first)\n"
	"  --buffer NAME:BYTES[:FILE]\n"
	"                            a global-memory buffer, zero-filled or loaded\n"
	"                            from the raw bytes of FILE (at most BYTES)\n"
	"  --tensor-map NAME:BUFFER:ELEMSIZE:DIMS:BOX[:ESTRIDES]\n"
	"                            a 128-byte tensor map (struct vgpu_tensor_map)\n"
	"                            for CP.ASYNC.BULK.TENSOR, describing a tensor\n"
	"                            stored densely in the earlier --buffer BUFFER;\n"
	"                            ELEMSIZE 1, 2, 4 or 8 bytes; DIMS, BOX and\n"
	"                            ESTRIDES are lists like 64x32, innermost\n"
	"                            dimension first, rank = entries of DIMS (1..5);\n"
	"                            BOX 1..256 and ESTRIDES 1..8 (default 1) per\n"
	"                            dimension; each row stride must be a multiple\n"
	"                            of 16 bytes\n"
	"  --arg TYPE:VALUE          the next kernel parameter (with any --arg the\n"
	"                            parameters are exactly the --arg values, in\n"
	"                            order, at PTX's offsets): u32:, s32:, u64:,\n"
	"                            s64:, f32:, f64: a number; ptr:BUFFER the GPU\n"
	"                            address of an earlier --buffer; tmap:MAP an\n"
	"                            earlier --tensor-map, by value for a 128-byte\n"
	"                            parameter (const __grid_constant__ CUtensorMap),\n"
	"                            else its address\n"
	"  --dump NAME               after the run, print buffer or tensor map NAME\n"
	"                            as 32-bit little-endian words in hex, eight\n"
	"                            per line\n"
	"  --trace                   print core events to stderr (sim only)\n"
	"  --timeline FILE           record the launch's timeline (warps, barriers,\n"
	"                            mbarriers, copies) and write it to FILE as\n"
	"                            Chrome trace-event JSON, for ui.perfetto.dev\n"
	"                            or chrome://tracing; also when it fails\n"
	"  --timeline-bytes N        the timeline buffer's size (default 8 MiB);\n"
	"                            events past it are counted as dropped\n"
	"  --deadlock-graph FILE     when the launch raises an exception, write the\n"
	"                            stopped CTA's wait-for graph to FILE as\n"
	"                            Graphviz DOT (records a timeline for it)\n"
	"  --backend drm|sim|auto    the backend (default auto: $VGPU_BACKEND, else\n"
	"                            drm when a vgpu device exists, else sim)\n"
	"  --device NAME             the device, as vgpu_device_open() names it:\n"
	"                            sim, drm, a PCI slot (0000:00:03.0) or a DRM\n"
	"                            node (/dev/dri/renderD128); see vgpu-info\n"
	"  -h, --help                show this help\n"
	"\n"
	"Kernel parameters: the 64-bit GPU addresses of the buffers and tensor\n"
	"maps, in the order the --buffer and --tensor-map options are given; with\n"
	".param declarations, each ptr/u64 parameter in turn takes the next one.\n"
	"Numbers are decimal or 0x-prefixed hex.\n"
	"Exit status: 0 ok, 1 host error (no device, out of memory, I/O),\n"
	"2 usage/assembly/launch error (also a sim-only option on drm),\n"
	"3 device exception (the record is printed to stderr).\n";

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("vgpu-run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'vgpu-run --help' for more information.\n", stderr);
}

/* Decimal or 0x-hex, no sign, no trailing garbage.  Returns 0 or -1. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	char tmp[32], *digits = tmp, *end;
	int base = 10;

	if (len == 0 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (tmp[0] == '0' && (tmp[1] == 'x' || tmp[1] == 'X')) {
		base = 16;
		digits += 2;
	}
	/* strtoull would accept leading blanks and signs: demand a digit */
	if (!(base == 16 ? isxdigit((unsigned char)*digits)
			 : isdigit((unsigned char)*digits)))
		return -1;
	errno = 0;
	*out = strtoull(digits, &end, base);
	if (errno || *end)
		return -1;
	return 0;
}

static int parse_number(const char *opt, const char *s, uint64_t max,
			uint64_t *out)
{
	if (parse_u64(s, strlen(s), out) || *out > max) {
		usage_error("%s: invalid number '%s'", opt, s);
		return -1;
	}
	return 0;
}

/* 1..UINT32_MAX (0 would select the core's default). */
static int parse_positive(const char *opt, const char *s, uint64_t *out)
{
	if (parse_u64(s, strlen(s), out) || !*out || *out > UINT32_MAX) {
		usage_error("%s: invalid number '%s' (1..%u)", opt, s, UINT32_MAX);
		return -1;
	}
	return 0;
}

/* "X[,Y[,Z]]", each 1..UINT32_MAX; missing dimensions are 1. */
static int parse_dim3(const char *opt, const char *s, uint32_t out[3])
{
	const char *p = s;

	for (int i = 0; i < 3; i++) {
		size_t len = strcspn(p, ",");
		uint64_t v;

		if (parse_u64(p, len, &v) || v == 0 || v > UINT32_MAX) {
			usage_error("%s: invalid dimensions '%s' (want X[,Y[,Z]], "
				    "each >= 1)", opt, s);
			return -1;
		}
		out[i] = (uint32_t)v;
		p += len;
		if (!*p) {
			for (i++; i < 3; i++)
				out[i] = 1;
			return 0;
		}
		p++; /* the comma */
	}
	usage_error("%s: too many dimensions in '%s'", opt, s);
	return -1;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fputs("vgpu-run: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static struct buffer *gmem_find_name(struct gmem *gm, const char *name)
{
	for (unsigned int i = 0; i < gm->nbufs; i++)
		if (!strcmp(gm->bufs[i].name, name))
			return &gm->bufs[i];
	return NULL;
}

/* NAME:BYTES[:FILE]; @arg is modified (NAME is NUL-terminated in place). */
static int add_buffer(struct gmem *gm, char *arg)
{
	char *colon = strchr(arg, ':'), *bytes, *file;
	struct buffer *b;
	uint64_t size;
	size_t len;

	if (!colon || colon == arg) {
		usage_error("--buffer: expected NAME:BYTES[:FILE], got '%s'", arg);
		return -1;
	}
	*colon = '\0';
	bytes = colon + 1;
	file = strchr(bytes, ':');
	len = file ? (size_t)(file - bytes) : strlen(bytes);
	if (parse_u64(bytes, len, &size) || size == 0 || size > BUFFER_MAX) {
		usage_error("--buffer %s: invalid size '%.*s' (1..%llu bytes)",
			    arg, (int)len, bytes, (unsigned long long)BUFFER_MAX);
		return -1;
	}
	if (file && !file[1]) {
		usage_error("--buffer %s: empty file name", arg);
		return -1;
	}
	if (gmem_find_name(gm, arg)) {
		usage_error("--buffer: duplicate buffer name '%s'", arg);
		return -1;
	}
	gm->bufs = xrealloc(gm->bufs, (gm->nbufs + 1) * sizeof(*b));
	b = &gm->bufs[gm->nbufs++];
	*b = (struct buffer){ .name = arg, .file = file ? file + 1 : NULL,
			      .size = size };
	return 0;
}

/*
 * "64x32x0x10": 1..@max numbers separated by 'x', each @lo..@hi (a number
 * is decimal or 0x-hex, so the 'x' of "0x" is not a separator).  Returns
 * the count, or -1 after a usage message naming @what.
 */
static int parse_xlist(const char *name, const char *what, const char *s,
		       size_t len, uint32_t lo, uint32_t hi, uint32_t *out,
		       int max)
{
	size_t i = 0;
	int n = 0;

	while (i < len && n < max) {
		size_t start = i;
		uint64_t v;

		if (len - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
		    isxdigit((unsigned char)s[i + 2]))
			for (i += 2; i < len && isxdigit((unsigned char)s[i]); i++)
				;
		else
			while (i < len && isdigit((unsigned char)s[i]))
				i++;
		if (parse_u64(s + start, i - start, &v) || v < lo || v > hi ||
		    (i < len && s[i] != 'x') || (i + 1 == len)) {
			usage_error("--tensor-map %s: invalid %s '%.*s' (want "
				    "N[xN]..., each %u..%u)", name, what,
				    (int)len, s, lo, hi);
			return -1;
		}
		out[n++] = (uint32_t)v;
		i += i < len; /* the 'x' */
	}
	if (i < len || !n) {
		usage_error("--tensor-map %s: invalid %s '%.*s' (%s, at most %d "
			    "dimensions)", name, what, (int)len, s,
			    n ? "too many entries" : "empty", max);
		return -1;
	}
	return n;
}

/*
 * NAME:BUFFER:ELEMSIZE:DIMS:BOX[:ESTRIDES]; @arg is modified (NAME is
 * NUL-terminated in place).  The tensor lies densely in BUFFER, which
 * must be given earlier: strides[d-1] = ELEMSIZE * dims[0] * .. *
 * dims[d-1].
 */
static int add_tensor_map(struct gmem *gm, char *arg)
{
	const char *f[6];
	size_t flen[6];
	char *p = arg, *colon;
	struct vgpu_tensor_map tm = { .magic = VGPU_TMAP_MAGIC };
	uint32_t dims[VGPU_TMAP_MAX_RANK], box[VGPU_TMAP_MAX_RANK];
	uint32_t est[VGPU_TMAP_MAX_RANK] = { 1, 1, 1, 1, 1 };
	const struct buffer *target;
	uint64_t elem, bytes;
	int nf = 0, rank, n;
	unsigned int ti = 0;
	struct buffer *b;

	do {
		colon = strchr(p, ':');
		f[nf] = p;
		flen[nf] = colon ? (size_t)(colon - p) : strlen(p);
		nf++;
		if (colon)
			p = colon + 1;
	} while (colon && nf < 6);
	for (int i = 0; i < nf; i++)
		if (!flen[i])
			nf = -1;
	if (nf < 5 || colon) {
		usage_error("--tensor-map: expected "
			    "NAME:BUFFER:ELEMSIZE:DIMS:BOX[:ESTRIDES], got '%s'",
			    arg);
		return -1;
	}
	arg[flen[0]] = '\0';
	if (gmem_find_name(gm, arg)) {
		usage_error("--tensor-map: duplicate name '%s'", arg);
		return -1;
	}
	target = NULL;
	for (unsigned int i = 0; i < gm->nbufs; i++) {
		if (!gm->bufs[i].is_tmap && strlen(gm->bufs[i].name) == flen[1] &&
		    !strncmp(gm->bufs[i].name, f[1], flen[1])) {
			target = &gm->bufs[i];
			ti = i;
		}
	}
	if (!target) {
		usage_error("--tensor-map %s: no --buffer '%.*s' before it", arg,
			    (int)flen[1], f[1]);
		return -1;
	}
	if (parse_u64(f[2], flen[2], &elem) ||
	    (elem != 1 && elem != 2 && elem != 4 && elem != 8)) {
		usage_error("--tensor-map %s: invalid element size '%.*s' (1, 2, "
			    "4 or 8)", arg, (int)flen[2], f[2]);
		return -1;
	}
	rank = parse_xlist(arg, "dimensions", f[3], flen[3], 1, UINT32_MAX,
			   dims, VGPU_TMAP_MAX_RANK);
	if (rank < 0)
		return -1;
	n = parse_xlist(arg, "box", f[4], flen[4], 1, VGPU_TMAP_MAX_BOX, box,
			VGPU_TMAP_MAX_RANK);
	if (n >= 0 && n != rank) {
		usage_error("--tensor-map %s: %d box sizes for %d dimensions", arg,
			    n, rank);
		return -1;
	}
	if (n < 0)
		return -1;
	n = nf < 6 ? rank
		   : parse_xlist(arg, "element strides", f[5], flen[5], 1,
				 VGPU_TMAP_MAX_ELEM_STRIDE, est, VGPU_TMAP_MAX_RANK);
	if (n >= 0 && n != rank) {
		usage_error("--tensor-map %s: %d element strides for %d "
			    "dimensions", arg, n, rank);
		return -1;
	}
	if (n < 0)
		return -1;
	tm.rank = (uint8_t)rank;
	tm.elem_size = (uint8_t)elem;
	bytes = elem;
	for (int d = 0; d < rank; d++) {
		tm.dims[d] = dims[d];
		tm.box[d] = box[d];
		tm.elem_strides[d] = est[d];
		if (d) {
			tm.strides[d - 1] = bytes;
			if (bytes % 16) {
				usage_error("--tensor-map %s: the stride of dimension "
					    "%d is %" PRIu64 " bytes, not a multiple "
					    "of 16", arg, d, bytes);
				return -1;
			}
		}
		if (__builtin_mul_overflow(bytes, (uint64_t)dims[d], &bytes))
			bytes = UINT64_MAX;
	}
	if (bytes > target->size) {
		usage_error("--tensor-map %s: the tensor needs %" PRIu64 " bytes, "
			    "buffer '%s' has %" PRIu64, arg, bytes, target->name,
			    target->size);
		return -1;
	}
	gm->bufs = xrealloc(gm->bufs, (gm->nbufs + 1) * sizeof(*b));
	b = &gm->bufs[gm->nbufs];
	*b = (struct buffer){ .name = arg, .size = sizeof(tm), .is_tmap = true,
			      .target = ti, .tm = tm };
	gm->nbufs++;
	return 0;
}

/* "vgpu-run: " and a libvgpu error. */
static void lib_error(const char *what, int err)
{
	fprintf(stderr, "vgpu-run: %s: %s\n", what, strerror(-err));
}

/*
 * Create every buffer object, loading FILEs and writing tensor maps.
 * Returns 0, EXIT_USAGE (message printed) or EXIT_HOST.
 */
static int gmem_map(struct vgpu_device *dev, struct gmem *gm)
{
	for (unsigned int i = 0; i < gm->nbufs; i++) {
		struct buffer *b = &gm->bufs[i];
		int err = vgpu_bo_new(dev, b->size, 0, &b->bo);
		void *map;

		if (err) {
			fprintf(stderr, "vgpu-run: cannot allocate %" PRIu64
				" bytes for '%s': %s\n", b->size, b->name,
				strerror(-err));
			return err == -E2BIG || err == -EINVAL ? EXIT_USAGE
							       : EXIT_HOST;
		}
		if (b->is_tmap) {
			/* the host is little-endian, as the descriptor */
			b->tm.base = vgpu_bo_gpu_address(gm->bufs[b->target].bo);
			err = vgpu_bo_write(b->bo, 0, &b->tm, sizeof(b->tm));
			if (err) {
				lib_error(b->name, err);
				return EXIT_HOST;
			}
			continue;
		}
		if (b->file) {
			FILE *f = fopen(b->file, "rb");
			size_t got;

			if (!f) {
				usage_error("--buffer %s: cannot open '%s': %s",
					    b->name, b->file, strerror(errno));
				return EXIT_USAGE;
			}
			err = vgpu_bo_map(b->bo, &map);
			if (err) {
				fclose(f);
				lib_error(b->name, err);
				return EXIT_HOST;
			}
			got = fread(map, 1, b->size, f);
			if (ferror(f)) {
				fprintf(stderr, "vgpu-run: reading '%s': %s\n",
					b->file, strerror(errno));
				fclose(f);
				return EXIT_HOST;
			}
			if (got == b->size && fgetc(f) != EOF) {
				usage_error("--buffer %s: '%s' is larger than "
					    "%" PRIu64 " bytes", b->name,
					    b->file, b->size);
				fclose(f);
				return EXIT_USAGE;
			}
			fclose(f);
		}
	}
	return 0;
}

static void gmem_fini(struct gmem *gm)
{
	for (unsigned int i = 0; i < gm->nbufs; i++)
		vgpu_bo_free(gm->bufs[i].bo);
	free(gm->bufs);
}

/* Returns 0 or EXIT_HOST. */
static int dump_buffer(const struct buffer *b)
{
	uint64_t words = b->size / 4;
	uint8_t *p;
	void *map;
	int err = vgpu_bo_map(b->bo, &map);

	if (err) {
		lib_error(b->name, err);
		return EXIT_HOST;
	}
	p = map;
	printf("%s:\n", b->name);
	for (uint64_t i = 0; i < words; i++, p += 4) {
		uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

		printf("%08" PRIx32 "%c", v,
		       (i % 8 == 7 || i + 1 == words) ? '\n' : ' ');
	}
	return 0;
}

static bool param_is_pointer(uint32_t type)
{
	return type == VGPU_ARG_PTR || type == VGPU_ARG_U64;
}

/*
 * Check that the buffers fit the kernel's parameters before any is
 * created: without declared parameters at most VGPU_MAX_PARAM_BYTES / 8
 * of them, with them exactly one per ptr/u64 parameter.  Returns -1 to go
 * on, or EXIT_USAGE.
 */
static int check_params(const struct vgpu_kernel *k, const struct gmem *gm)
{
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info a;
	unsigned int want = 0;

	vgpu_kernel_info(k, &ki);
	if (!ki.nparams) {
		if (gm->nbufs * 8ull > VGPU_MAX_PARAM_BYTES) {
			usage_error("too many buffers and tensor maps (at most %u)",
				    VGPU_MAX_PARAM_BYTES / 8);
			return EXIT_USAGE;
		}
		return -1;
	}
	for (uint32_t i = 0; i < ki.nparams; i++)
		if (!vgpu_kernel_arg(k, i, &a))
			want += param_is_pointer(a.type);
	if (want != gm->nbufs) {
		usage_error("kernel '%s' takes %u pointer parameter%s but %u "
			    "--buffer/--tensor-map %s given", ki.name, want,
			    want == 1 ? "" : "s", gm->nbufs,
			    gm->nbufs == 1 ? "was" : "were");
		return EXIT_USAGE;
	}
	return -1;
}

/*
 * The launch's arguments: without declared parameters, the addresses of
 * the buffers and tensor maps back to back, in command-line order; with
 * them, each ptr/u64 parameter in turn gets the next one's address.
 * Returns 0, EXIT_USAGE or EXIT_HOST (message printed).
 */
/* The declared parameter that starts at @off, or NULL. */
static bool param_at(const struct vgpu_kernel *k, uint32_t off, struct vgpu_arg_info *a)
{
	for (uint32_t i = 0; !vgpu_kernel_arg(k, i, a); i++)
		if (a->offset == off)
			return true;
	return false;
}

/*
 * --arg values at PTX's offsets.  With declared parameters each value
 * must start where one does, with its size, and none may be left over
 * (but the front end's padding).  Returns 0 or EXIT_USAGE.
 */
static int set_kargs(const struct vgpu_kernel *k, const struct gmem *gm,
		     const struct options *o, struct vgpu_args *args)
{
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info a;
	uint32_t off = 0;

	vgpu_kernel_info(k, &ki);
	for (unsigned int i = 0; i < o->nkargs; i++) {
		const struct karg *ka = &o->kargs[i];
		const struct buffer *b = &gm->bufs[ka->ref];
		uint32_t size = ka->type <= KA_F32 ? 4 : 8, align = size;
		uint8_t data[128];
		uint64_t v = ka->bits;

		if (ka->type == KA_PTR || ka->type == KA_TMAP)
			v = vgpu_bo_gpu_address(b->bo);
		memcpy(data, &v, 8);
		if (ka->type == KA_TMAP) {
			uint32_t at8 = (off + 7) & ~7u;

			/* by value unless the parameter there is a u64/ptr */
			if (!ki.nparams || !param_at(k, at8, &a) || a.size != 8) {
				size = sizeof(b->tm);
				align = 64;
				memcpy(data, &b->tm, sizeof(b->tm));
			}
		}
		off = (off + align - 1) & ~(align - 1);
		if (ki.nparams && (!param_at(k, off, &a) ||
				   (a.size != size && size != sizeof(b->tm)))) {
			usage_error("--arg %s (argument %u): kernel '%s' has no %u-byte "
				    "parameter at offset %u", ka->spec, i + 1, ki.name, size, off);
			return EXIT_USAGE;
		}
		if (off + size > VGPU_MAX_PARAM_BYTES) {
			usage_error("--arg %s: the parameters exceed %u bytes", ka->spec,
				    VGPU_MAX_PARAM_BYTES);
			return EXIT_USAGE;
		}
		if (vgpu_args_set_raw(args, off, data, size))
			return EXIT_USAGE;
		off += size;
	}
	for (uint32_t i = 0; !vgpu_kernel_arg(k, i, &a); i++)
		if (a.offset >= off && strncmp(a.name, "pad", 3) && a.type != VGPU_ARG_LOCAL &&
		    a.type != VGPU_ARG_DATA && a.type != VGPU_ARG_PRINTF &&
		    a.type != VGPU_ARG_PARAMS) {
			usage_error("kernel '%s' takes more parameters than the %u --arg "
				    "value%s given (next: '%s' at offset %u)", ki.name,
				    o->nkargs, o->nkargs == 1 ? "" : "s", a.name, a.offset);
			return EXIT_USAGE;
		}
	/* every buffer is reachable by the kernel (tensor maps' data too) */
	for (unsigned int i = 0; i < gm->nbufs; i++)
		if (vgpu_args_use_bo(args, gm->bufs[i].bo))
			return EXIT_HOST;
	return 0;
}

static int build_args(const struct vgpu_kernel *k, const struct gmem *gm,
		      const struct options *o, struct vgpu_args **out)
{
	struct vgpu_kernel_info ki;
	struct vgpu_args *args;
	unsigned int next = 0;
	int err;

	err = vgpu_args_new(k, &args);
	if (err) {
		lib_error("arguments", err);
		return EXIT_HOST;
	}
	if (o->nkargs) {
		err = set_kargs(k, gm, o, args);
		if (err) {
			vgpu_args_free(args);
			return err;
		}
		*out = args;
		return 0;
	}
	vgpu_kernel_info(k, &ki);
	if (!ki.nparams) {
		for (unsigned int i = 0; i < gm->nbufs && !err; i++)
			err = vgpu_args_push_bo(args, gm->bufs[i].bo, 0);
	} else {
		for (uint32_t i = 0; i < ki.nparams && !err; i++) {
			struct vgpu_arg_info a;

			err = vgpu_kernel_arg(k, i, &a);
			if (!err && param_is_pointer(a.type))
				err = vgpu_args_set_bo(args, i,
						       gm->bufs[next++].bo, 0);
		}
	}
	if (err) {
		vgpu_args_free(args);
		if (err == -E2BIG) {
			usage_error("too many buffers and tensor maps for one "
				    "launch (at most %u)", VGPU_SUBMIT_MAX_BOS - 2);
			return EXIT_USAGE;
		}
		lib_error("arguments", err);
		return err == -ENOMEM ? EXIT_HOST : EXIT_USAGE;
	}
	*out = args;
	return 0;
}

enum {
	OPT_GRID = 256,
	OPT_BLOCK,
	OPT_SMEM,
	OPT_SEED,
	OPT_RANDOM,
	OPT_BUDGET,
	OPT_KERNEL,
	OPT_BUFFER,
	OPT_DUMP,
	OPT_TRACE,
	OPT_CLUSTER,
	OPT_NO_SANITIZE,
	OPT_TMA_LATENCY,
	OPT_TMA_BANDWIDTH,
	OPT_TENSOR_MAP,
	OPT_DEVICE,
	OPT_BACKEND,
	OPT_ARG,
	OPT_TIMELINE,
	OPT_TIMELINE_BYTES,
	OPT_DEADLOCK_GRAPH,
};

static const struct option long_opts[] = {
	{ "grid", required_argument, NULL, OPT_GRID },
	{ "block", required_argument, NULL, OPT_BLOCK },
	{ "smem", required_argument, NULL, OPT_SMEM },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "random-schedule", no_argument, NULL, OPT_RANDOM },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "buffer", required_argument, NULL, OPT_BUFFER },
	{ "dump", required_argument, NULL, OPT_DUMP },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "cluster", required_argument, NULL, OPT_CLUSTER },
	{ "no-sanitize", no_argument, NULL, OPT_NO_SANITIZE },
	{ "tma-latency", required_argument, NULL, OPT_TMA_LATENCY },
	{ "tma-bandwidth", required_argument, NULL, OPT_TMA_BANDWIDTH },
	{ "tensor-map", required_argument, NULL, OPT_TENSOR_MAP },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "arg", required_argument, NULL, OPT_ARG },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "timeline-bytes", required_argument, NULL, OPT_TIMELINE_BYTES },
	{ "deadlock-graph", required_argument, NULL, OPT_DEADLOCK_GRAPH },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * The cluster must tile the grid and hold at most VGPU_MAX_CLUSTER_CTAS
 * CTAs (the device checks the same; this names the option).  Returns -1
 * to go on, or EXIT_USAGE.
 */
static int check_cluster(const struct options *o)
{
	uint64_t ctas = (uint64_t)o->cluster[0] * o->cluster[1] * o->cluster[2];

	for (int i = 0; i < 3; i++) {
		if (o->grid[i] % o->cluster[i]) {
			usage_error("--cluster: dimension %c (%u) does not divide "
				    "the grid's (%u)", "xyz"[i], o->cluster[i],
				    o->grid[i]);
			return EXIT_USAGE;
		}
	}
	if (ctas > VGPU_MAX_CLUSTER_CTAS) {
		usage_error("--cluster: %" PRIu64 " CTAs per cluster, at most %u",
			    ctas, VGPU_MAX_CLUSTER_CTAS);
		return EXIT_USAGE;
	}
	return -1;
}

/* --arg TYPE:VALUE (a ptr or tmap names an earlier buffer or tensor map) */
static int add_karg(struct options *o, const struct gmem *gm, const char *arg)
{
	static const struct {
		const char *name;
		enum karg_type type;
	} types[] = {
		{ "u32", KA_U32 }, { "s32", KA_S32 }, { "f32", KA_F32 }, { "u64", KA_U64 },
		{ "s64", KA_S64 }, { "f64", KA_F64 }, { "ptr", KA_PTR }, { "tmap", KA_TMAP },
	};
	const char *colon = strchr(arg, ':'), *v;
	struct karg ka = { .spec = arg };
	size_t i;

	for (i = 0; colon && i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].name) == (size_t)(colon - arg) &&
		    !strncmp(arg, types[i].name, (size_t)(colon - arg)))
			break;
	if (!colon || i == sizeof(types) / sizeof(types[0])) {
		usage_error("--arg: expected TYPE:VALUE with TYPE u32, s32, u64, s64, f32, "
			    "f64, ptr or tmap, got '%s'", arg);
		return EXIT_USAGE;
	}
	ka.type = types[i].type;
	v = colon + 1;
	switch (ka.type) {
	case KA_PTR:
	case KA_TMAP: {
		unsigned int b;

		for (b = 0; b < gm->nbufs; b++)
			if (!strcmp(gm->bufs[b].name, v))
				break;
		if (b == gm->nbufs || gm->bufs[b].is_tmap != (ka.type == KA_TMAP)) {
			usage_error("--arg %s: no %s '%s' before it", arg,
				    ka.type == KA_PTR ? "--buffer" : "--tensor-map", v);
			return EXIT_USAGE;
		}
		ka.ref = b;
		break;
	}
	case KA_F32:
	case KA_F64: {
		char *end;
		double d;
		float f;

		errno = 0;
		d = strtod(v, &end);
		if (!*v || *end || errno) {
			usage_error("--arg %s: '%s' is not a number", arg, v);
			return EXIT_USAGE;
		}
		f = (float)d;
		if (ka.type == KA_F32)
			memcpy(&ka.bits, &f, 4);
		else
			memcpy(&ka.bits, &d, 8);
		break;
	}
	case KA_S32:
	case KA_S64: {
		bool neg = *v == '-';
		uint64_t mag, lim = ka.type == KA_S32 ? (neg ? 1ull << 31 : (1ull << 31) - 1) :
							  (neg ? 1ull << 63 : (1ull << 63) - 1);

		if (parse_number("--arg", v + neg, lim, &mag))
			return EXIT_USAGE;
		ka.bits = neg ? (uint64_t)0 - mag : mag;
		if (ka.type == KA_S32)
			ka.bits &= 0xffffffffull;
		break;
	}
	default:
		if (parse_number("--arg", v, ka.type == KA_U32 ? UINT32_MAX : UINT64_MAX,
				 &ka.bits))
			return EXIT_USAGE;
		break;
	}
	o->kargs = xrealloc(o->kargs, (o->nkargs + 1) * sizeof(*o->kargs));
	o->kargs[o->nkargs++] = ka;
	return 0;
}

/* Returns -1 to go on, or the exit status. */
static int parse_args(int argc, char **argv, struct options *o,
		      struct gmem *gm)
{
	int c;

	while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case OPT_GRID:
			if (parse_dim3("--grid", optarg, o->grid))
				return EXIT_USAGE;
			break;
		case OPT_BLOCK:
			if (parse_dim3("--block", optarg, o->block))
				return EXIT_USAGE;
			break;
		case OPT_CLUSTER:
			if (parse_dim3("--cluster", optarg, o->cluster))
				return EXIT_USAGE;
			break;
		case OPT_NO_SANITIZE:
			o->no_sanitize = true;
			break;
		case OPT_TMA_LATENCY:
			if (parse_positive("--tma-latency", optarg, &o->tma_latency))
				return EXIT_USAGE;
			break;
		case OPT_TMA_BANDWIDTH:
			if (parse_positive("--tma-bandwidth", optarg,
					   &o->tma_bandwidth))
				return EXIT_USAGE;
			break;
		case OPT_TENSOR_MAP:
			if (add_tensor_map(gm, optarg))
				return EXIT_USAGE;
			break;
		case OPT_SMEM:
			if (parse_number("--smem", optarg, UINT32_MAX, &o->smem_dyn))
				return EXIT_USAGE;
			break;
		case OPT_SEED:
			if (parse_number("--seed", optarg, UINT64_MAX, &o->seed))
				return EXIT_USAGE;
			break;
		case OPT_BUDGET:
			if (parse_number("--budget", optarg, UINT64_MAX, &o->budget))
				return EXIT_USAGE;
			break;
		case OPT_RANDOM:
			o->random_sched = true;
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case OPT_TIMELINE:
			o->timeline = optarg;
			break;
		case OPT_TIMELINE_BYTES:
			if (parse_number("--timeline-bytes", optarg, UINT64_MAX,
					 &o->timeline_bytes))
				return EXIT_USAGE;
			break;
		case OPT_DEADLOCK_GRAPH:
			o->deadlock_graph = optarg;
			break;
		case OPT_KERNEL:
			o->kernel_name = optarg;
			break;
		case OPT_BUFFER:
			if (add_buffer(gm, optarg))
				return EXIT_USAGE;
			break;
		case OPT_ARG:
			if (add_karg(o, gm, optarg))
				return EXIT_USAGE;
			break;
		case OPT_DUMP:
			o->dumps = xrealloc(o->dumps,
					    (o->ndumps + 1) * sizeof(*o->dumps));
			o->dumps[o->ndumps++] = optarg;
			break;
		case OPT_DEVICE:
			if (!optarg[0]) {
				usage_error("--device: empty name");
				return EXIT_USAGE;
			}
			o->device = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "drm") && strcmp(optarg, "sim") &&
			    strcmp(optarg, "auto")) {
				usage_error("--backend: '%s' is not drm, sim or auto",
					    optarg);
				return EXIT_USAGE;
			}
			o->backend = optarg;
			break;
		default: /* getopt_long printed the complaint */
			fputs("Try 'vgpu-run --help' for more information.\n",
			      stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage_error(optind == argc ? "no KERNEL file given"
					   : "more than one KERNEL file given");
		return EXIT_USAGE;
	}
	o->path = argv[optind];
	for (unsigned int i = 0; i < o->ndumps; i++) {
		if (!gmem_find_name(gm, o->dumps[i])) {
			usage_error("--dump %s: no such buffer or tensor map",
				    o->dumps[i]);
			return EXIT_USAGE;
		}
	}
	return check_cluster(o);
}

/*
 * Open the device: --device NAME, else --backend, else auto.  With both,
 * the device must be of that backend.  Returns 0 or the exit status.
 */
static int open_device(const struct options *o, struct vgpu_device **dev)
{
	const char *name = o->device ? o->device : o->backend;
	int err = vgpu_device_open(name, dev);

	if (err == -EINVAL) {
		if (o->device)
			usage_error("--device: '%s' names no device (sim, drm, "
				    "a PCI slot or a /dev/dri node)", o->device);
		else
			usage_error("VGPU_BACKEND='%s' is not drm, sim or auto",
				    getenv("VGPU_BACKEND") ? getenv("VGPU_BACKEND")
							   : "");
		return EXIT_USAGE;
	}
	if (err) {
		fprintf(stderr, "vgpu-run: cannot open device '%s': %s%s\n",
			name ? name : "auto", strerror(-err),
			err == -ENODEV ? " (no such vgpu device; see vgpu-info)"
				       : "");
		return EXIT_HOST;
	}
	if (o->device && o->backend && strcmp(o->backend, "auto") &&
	    strcmp(o->backend, vgpu_backend_name(vgpu_device_backend(*dev)))) {
		usage_error("--device %s is a %s device, not --backend %s",
			    o->device,
			    vgpu_backend_name(vgpu_device_backend(*dev)),
			    o->backend);
		vgpu_device_close(*dev);
		*dev = NULL;
		return EXIT_USAGE;
	}
	return 0;
}

/* A sim-only setting: -EOPNOTSUPP on drm is a usage error. */
static int sim_setting(struct vgpu_device *dev, const char *opt, int err)
{
	if (!err)
		return 0;
	if (err == -EOPNOTSUPP) {
		usage_error("%s: only the sim backend has this setting (the %s "
			    "backend's device is QEMU's: set it there)", opt,
			    vgpu_backend_name(vgpu_device_backend(dev)));
		return EXIT_USAGE;
	}
	fprintf(stderr, "vgpu-run: %s: %s\n", opt, strerror(-err));
	return err == -EINVAL || err == -ERANGE ? EXIT_USAGE : EXIT_HOST;
}

static int apply_sim_settings(struct vgpu_device *dev, const struct options *o)
{
	int status = 0;

	if (o->tma_latency)
		status = sim_setting(dev, "--tma-latency",
				     vgpu_device_set_sim_option(dev,
								VGPU_SIM_TMA_LATENCY,
								o->tma_latency));
	if (!status && o->tma_bandwidth)
		status = sim_setting(dev, "--tma-bandwidth",
				     vgpu_device_set_sim_option(dev,
								VGPU_SIM_TMA_BANDWIDTH,
								o->tma_bandwidth));
	if (!status && o->trace)
		status = sim_setting(dev, "--trace",
				     vgpu_device_set_trace(dev, stderr));
	return status;
}

/* Load the program.  Returns 0 or the exit status. */
static int load_program(struct vgpu_device *dev, const char *path,
			struct vgpu_program **prog)
{
	static char log[16384];
	FILE *f = fopen(path, "rb");
	int err;

	if (!f) {
		usage_error("cannot open '%s': %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	fclose(f);
	log[0] = '\0';
	err = vgpu_program_load_file(dev, path, prog, log, sizeof(log));
	if (!err)
		return 0;
	if (log[0])
		fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
	else
		fprintf(stderr, "vgpu-run: %s: %s\n", path, strerror(-err));
	return err == -ENOMEM || err == -EIO ? EXIT_HOST : EXIT_USAGE;
}

/* The kernel to run, or NULL after a message. */
static const struct vgpu_kernel *pick_kernel(const struct vgpu_program *prog,
					     const char *name)
{
	const struct vgpu_kernel *k;
	struct vgpu_kernel_info ki;

	if (!name)
		return vgpu_program_kernel(prog, 0, &k) ? NULL : k;
	if (!vgpu_program_find_kernel(prog, name, &k))
		return k;
	fprintf(stderr, "vgpu-run: no kernel named '%s'; the program has:", name);
	for (unsigned int i = 0; i < vgpu_program_kernel_count(prog); i++) {
		if (vgpu_program_kernel(prog, i, &k))
			continue;
		vgpu_kernel_info(k, &ki);
		fprintf(stderr, " %.*s", VGPU_OBJ_NAME_MAX, ki.name);
	}
	fputc('\n', stderr);
	return NULL;
}

/*
 * How a failed job is reported: its exception record described (exit 3),
 * except a launch the device refused (VGPU_EXC_BAD_LAUNCH), which is a
 * launch-parameter error (exit 2) as before the job ran.
 */
static int report_failure(struct vgpu_job *job, int err)
{
	struct vgpu_exception_record rec;
	char text[8192];
	int n;

	fflush(stdout);
	if (!vgpu_job_exception(job, &rec)) {
		if (rec.code == VGPU_EXC_BAD_LAUNCH) {
			usage_error("invalid launch: %.*s",
				    (int)strnlen(rec.msg, sizeof(rec.msg)),
				    rec.msg[0] ? rec.msg
					       : vgpu_exception_name(rec.code));
			return EXIT_USAGE;
		}
		n = vgpu_job_describe(job, text, sizeof(text));
		if (n >= 0) {
			fprintf(stderr, "vgpu-run: %s%s", text,
				n && text[strlen(text) - 1] == '\n' ? "" : "\n");
			return EXIT_DEVICE;
		}
	}
	switch (err) {
	case -ETIMEDOUT:
		fprintf(stderr, "vgpu-run: the job ran past the driver's timeout "
				"and was stopped (the device was reset)\n");
		return EXIT_DEVICE;
	case -ECANCELED:
		fprintf(stderr, "vgpu-run: the job could not run: %s\n",
			strerror(-err));
		return EXIT_DEVICE;
	default:
		fprintf(stderr, "vgpu-run: the job failed: %s\n", strerror(-err));
		return err == -EIO || err == -EFAULT ? EXIT_DEVICE : EXIT_HOST;
	}
}

/* Open, load, launch, report.  Returns the exit status. */
/* Write @what of @job to @path; non-zero (said on stderr) on failure. */
static int write_file(const char *path, struct vgpu_job *job,
		      int (*what)(struct vgpu_job *, FILE *))
{
	FILE *f = fopen(path, "w");
	uint32_t n = 0;
	uint64_t dropped = 0;
	const struct vgpu_trace_event *ev;
	int err;

	if (!f) {
		fprintf(stderr, "vgpu-run: %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = what(job, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "vgpu-run: %s: %s\n", path,
			err == -ENODATA ? "the launch recorded no timeline" :
			err == -EIO ? "the timeline buffer is corrupt, or writing failed" :
				      strerror(-err));
		return -1;
	}
	if (!vgpu_job_timeline(job, &ev, &n, &dropped) && dropped)
		fprintf(stderr, "vgpu-run: %s: %llu events did not fit the timeline buffer and were dropped (--timeline-bytes)\n",
			path, (unsigned long long)dropped);
	return 0;
}

static int run(const struct options *o, struct gmem *gm)
{
	struct vgpu_launch_config cfg = { 0 };
	struct vgpu_device *dev = NULL;
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_kernel_info ki;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	int status, err;

	status = open_device(o, &dev);
	if (status)
		return status;
	status = apply_sim_settings(dev, o);
	if (status)
		goto out;
	status = load_program(dev, o->path, &prog);
	if (status)
		goto out;
	status = EXIT_USAGE;
	k = pick_kernel(prog, o->kernel_name);
	if (!k)
		goto out;
	vgpu_kernel_info(k, &ki);
	if (o->smem_dyn + ki.smem_static > UINT32_MAX) {
		usage_error("--smem: too much shared memory");
		goto out;
	}
	status = o->nkargs ? -1 : check_params(k, gm);
	if (status >= 0)
		goto out;
	status = gmem_map(dev, gm);
	if (status)
		goto out;
	status = build_args(k, gm, o, &args);
	if (status)
		goto out;

	memcpy(cfg.grid, o->grid, sizeof(cfg.grid));
	memcpy(cfg.block, o->block, sizeof(cfg.block));
	memcpy(cfg.cluster, o->cluster, sizeof(cfg.cluster));
	cfg.smem_bytes = (uint32_t)o->smem_dyn;
	cfg.flags = (o->random_sched ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
		    (o->no_sanitize ? 0 : VGPU_LAUNCH_SANITIZE) |
		    (o->timeline || o->deadlock_graph ? VGPU_LAUNCH_TIMELINE : 0);
	if (o->timeline_bytes) {
		err = vgpu_device_set_timeline_bytes(dev, o->timeline_bytes);
		if (err) {
			usage_error("--timeline-bytes %llu: a multiple of 8 from 32 to %u",
				    (unsigned long long)o->timeline_bytes,
				    VGPU_TRACE_MAX_BYTES);
			status = EXIT_USAGE;
			goto out;
		}
	}
	cfg.seed = o->seed;
	cfg.budget = o->budget;
	err = vgpu_kernel_launch(k, &cfg, args, &job);
	if (err) {
		if (err == -EINVAL || err == -E2BIG) {
			usage_error("invalid launch: %s", strerror(-err));
			status = EXIT_USAGE;
		} else {
			lib_error("launch", err);
			status = EXIT_HOST;
		}
		goto out;
	}
	err = vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE);
	if (vgpu_job_printf(job)) /* what the kernel printed, as CUDA shows it */
		fputs(vgpu_job_printf(job), stdout);
	if (o->timeline && write_file(o->timeline, job, vgpu_job_write_timeline))
		status = EXIT_HOST;
	if (err && o->deadlock_graph &&
	    write_file(o->deadlock_graph, job, vgpu_job_write_deadlock_graph))
		status = EXIT_HOST;
	if (err) {
		fflush(stdout);
		if (!status)
			status = report_failure(job, err);
		else
			report_failure(job, err);
		goto out;
	}
	if (status)
		goto out;
	status = 0;
	for (unsigned int i = 0; i < o->ndumps && !status; i++)
		status = dump_buffer(gmem_find_name(gm, o->dumps[i]));
	if (fflush(stdout))
		status = EXIT_HOST;
out:
	vgpu_job_free(job);
	vgpu_args_free(args);
	/* the buffers go before the device's last reference */
	for (unsigned int i = 0; i < gm->nbufs; i++) {
		vgpu_bo_free(gm->bufs[i].bo);
		gm->bufs[i].bo = NULL;
	}
	vgpu_program_free(prog);
	vgpu_device_close(dev);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {
		.grid = { 1, 1, 1 },
		.block = { 32, 1, 1 },
		.cluster = { 1, 1, 1 },
		.seed = 1,
	};
	struct gmem gm = { 0 };
	int status;

	status = parse_args(argc, argv, &o, &gm);
	if (status < 0)
		status = run(&o, &gm);
	gmem_fini(&gm);
	free(o.dumps);
	free(o.kargs);
	return status;
}
