/* SPDX-License-Identifier: MIT */
/*
 * vgpu-run's command line (vgpu-run.c runs what it describes): the
 * options, and the --buffer, --tensor-map and --arg specifications checked
 * and gathered into struct options and struct gmem (run_priv.h) before
 * any device is opened.
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

#include "run_priv.h"

#define BUFFER_MAX VGPU_BO_MAX_SIZE

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
	"                            ELEMSIZE 1, 2, 4 or 8 bytes, or a type (u32,\n"
	"                            s32, f16, bf16, f32, ..: the map's dtype, which\n"
	"                            CP.REDUCE.ASYNC.BULK.TENSOR needs); DIMS, BOX and\n"
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

void run_usage_error(const char *fmt, ...)
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
		run_usage_error("%s: invalid number '%s'", opt, s);
		return -1;
	}
	return 0;
}

/* 1..UINT32_MAX (0 would select the core's default). */
static int parse_positive(const char *opt, const char *s, uint64_t *out)
{
	if (parse_u64(s, strlen(s), out) || !*out || *out > UINT32_MAX) {
		run_usage_error("%s: invalid number '%s' (1..%u)", opt, s, UINT32_MAX);
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
			run_usage_error("%s: invalid dimensions '%s' (want X[,Y[,Z]], "
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
	run_usage_error("%s: too many dimensions in '%s'", opt, s);
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

struct buffer *gmem_find_name(struct gmem *gm, const char *name)
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
		run_usage_error("--buffer: expected NAME:BYTES[:FILE], got '%s'", arg);
		return -1;
	}
	*colon = '\0';
	bytes = colon + 1;
	file = strchr(bytes, ':');
	len = file ? (size_t)(file - bytes) : strlen(bytes);
	if (parse_u64(bytes, len, &size) || size == 0 || size > BUFFER_MAX) {
		run_usage_error("--buffer %s: invalid size '%.*s' (1..%llu bytes)",
				arg, (int)len, bytes, (unsigned long long)BUFFER_MAX);
		return -1;
	}
	if (file && !file[1]) {
		run_usage_error("--buffer %s: empty file name", arg);
		return -1;
	}
	if (gmem_find_name(gm, arg)) {
		run_usage_error("--buffer: duplicate buffer name '%s'", arg);
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
			run_usage_error("--tensor-map %s: invalid %s '%.*s' (want "
					"N[xN]..., each %u..%u)", name, what,
					(int)len, s, lo, hi);
			return -1;
		}
		out[n++] = (uint32_t)v;
		i += i < len; /* the 'x' */
	}
	if (i < len || !n) {
		run_usage_error("--tensor-map %s: invalid %s '%.*s' (%s, at most %d "
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
/* the map's element types by name (VGPU_TMAP_DT_*, PTX's spelling) */
static const char *const dt_names[VGPU_TMAP_DT_MAX + 1] = {
	"", "u8", "u16", "u32", "s32", "u64", "s64", "f16", "f32", "f32.ftz", "f64", "bf16",
	"tf32", "tf32.ftz",
};

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
		run_usage_error("--tensor-map: expected "
				"NAME:BUFFER:ELEMSIZE:DIMS:BOX[:ESTRIDES], got '%s'",
				arg);
		return -1;
	}
	arg[flen[0]] = '\0';
	if (gmem_find_name(gm, arg)) {
		run_usage_error("--tensor-map: duplicate name '%s'", arg);
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
		run_usage_error("--tensor-map %s: no --buffer '%.*s' before it", arg,
				(int)flen[1], f[1]);
		return -1;
	}
	for (uint32_t t = 1; t <= VGPU_TMAP_DT_MAX; t++) /* a type: size and dtype */
		if (strlen(dt_names[t]) == flen[2] && !strncmp(f[2], dt_names[t], flen[2])) {
			tm.dtype = (uint8_t)t;
			elem = vgpu_tmap_dt_size(t);
		}
	if (!tm.dtype && (parse_u64(f[2], flen[2], &elem) ||
			  (elem != 1 && elem != 2 && elem != 4 && elem != 8))) {
		run_usage_error("--tensor-map %s: invalid element size '%.*s' (1, 2, "
				"4 or 8, or a type: u32, f16, ..)", arg, (int)flen[2], f[2]);
		return -1;
	}
	rank = parse_xlist(arg, "dimensions", f[3], flen[3], 1, UINT32_MAX,
			   dims, VGPU_TMAP_MAX_RANK);
	if (rank < 0)
		return -1;
	n = parse_xlist(arg, "box", f[4], flen[4], 1, VGPU_TMAP_MAX_BOX, box,
			VGPU_TMAP_MAX_RANK);
	if (n >= 0 && n != rank) {
		run_usage_error("--tensor-map %s: %d box sizes for %d dimensions", arg,
				n, rank);
		return -1;
	}
	if (n < 0)
		return -1;
	n = nf < 6 ? rank
		   : parse_xlist(arg, "element strides", f[5], flen[5], 1,
				 VGPU_TMAP_MAX_ELEM_STRIDE, est, VGPU_TMAP_MAX_RANK);
	if (n >= 0 && n != rank) {
		run_usage_error("--tensor-map %s: %d element strides for %d "
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
				run_usage_error("--tensor-map %s: the stride of dimension "
						"%d is %" PRIu64 " bytes, not a multiple "
						"of 16", arg, d, bytes);
				return -1;
			}
		}
		if (__builtin_mul_overflow(bytes, (uint64_t)dims[d], &bytes))
			bytes = UINT64_MAX;
	}
	if (bytes > target->size) {
		run_usage_error("--tensor-map %s: the tensor needs %" PRIu64 " bytes, "
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
	uint64_t ctas = vgpu_dims_volume(o->cluster[0], o->cluster[1], o->cluster[2]);

	for (int i = 0; i < 3; i++) {
		if (o->grid[i] % o->cluster[i]) {
			run_usage_error("--cluster: dimension %c (%u) does not divide "
					"the grid's (%u)", "xyz"[i], o->cluster[i],
					o->grid[i]);
			return EXIT_USAGE;
		}
	}
	if (ctas > VGPU_MAX_CLUSTER_CTAS) {
		run_usage_error("--cluster: %" PRIu64 " CTAs per cluster, at most %u",
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
		run_usage_error("--arg: expected TYPE:VALUE with TYPE u32, s32, u64, s64, f32, "
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
			run_usage_error("--arg %s: no %s '%s' before it", arg,
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
			run_usage_error("--arg %s: '%s' is not a number", arg, v);
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
int run_parse_args(int argc, char **argv, struct options *o,
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
				run_usage_error("--device: empty name");
				return EXIT_USAGE;
			}
			o->device = optarg;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "drm") && strcmp(optarg, "sim") &&
			    strcmp(optarg, "auto")) {
				run_usage_error("--backend: '%s' is not drm, sim or auto",
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
		run_usage_error(optind == argc ? "no KERNEL file given"
					       : "more than one KERNEL file given");
		return EXIT_USAGE;
	}
	o->path = argv[optind];
	for (unsigned int i = 0; i < o->ndumps; i++) {
		if (!gmem_find_name(gm, o->dumps[i])) {
			run_usage_error("--dump %s: no such buffer or tensor map",
					o->dumps[i]);
			return EXIT_USAGE;
		}
	}
	return check_cluster(o);
}
