/* SPDX-License-Identifier: MIT */
/*
 * vgpu-run: run one kernel on the in-process execution core, no VM.
 *
 * Global memory is host memory: each --buffer gets a distinct, 64 KiB
 * aligned GPU address starting at 0x10000000, with an unmapped guard gap
 * after it, and every access must lie entirely inside one buffer or it
 * faults.  Each --tensor-map is a 128-byte struct vgpu_tensor_map
 * (uapi/vgpu_hw.h) in a region of its own, describing a tensor stored
 * densely in an earlier buffer.  All regions live below 4 GiB, so the low
 * word of an address never carries into the high word within a buffer.
 * The regions' 64-bit addresses are the kernel's parameters, in the order
 * the --buffer and --tensor-map options are given.
 *
 * Exit status: 0 success, 1 host failure (out of memory, I/O), 2 usage,
 * assembly or launch-parameter error, 3 device exception.
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

#include "hostmem.h"
#include "vgpu_asm.h"
#include "vgpu_core.h"

#define EXIT_USAGE 2
#define EXIT_DEVICE 3

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vgpu-run copies tensor maps into global memory in host byte order"
#endif

#define GMEM_BASE 0x10000000ull
#define GMEM_LIMIT 0x100000000ull  /* everything below 4 GiB */
#define BUFFER_MAX (1ull << 30)

/* A --buffer, or a --tensor-map (@is_tmap): one region of global memory. */
struct buffer {
	char *name;	  /* points into argv */
	const char *file; /* NULL: zero-filled */
	uint64_t addr;
	uint64_t size;
	uint8_t *data;
	bool is_tmap;
	unsigned int target;	  /* tensor map: index of its buffer */
	struct vgpu_tensor_map tm; /* tensor map: the descriptor, less base */
};

struct gmem {
	struct buffer *bufs;
	unsigned int nbufs;
	struct vgpu_hostmem hm;
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
	const char *kernel_name;
	const char *path;
	const char **dumps;
	unsigned int ndumps;
};

static const char usage_text[] =
	"usage: vgpu-run [OPTION]... KERNEL\n"
	"Run a kernel (assembly source or object file) on the in-process vGPU core.\n"
	"\n"
	"  --grid X[,Y[,Z]]          CTAs per dimension (default 1)\n"
	"  --block X[,Y[,Z]]         threads per CTA per dimension (default 32)\n"
	"  --cluster X[,Y[,Z]]       CTAs per cluster per dimension (default 1);\n"
	"                            each divides the grid's, at most 16 CTAs\n"
	"  --smem BYTES              dynamic shared memory per CTA, added to the\n"
	"                            kernel's .shared allocations (default 0)\n"
	"  --seed N                  scheduler seed (default 1)\n"
	"  --random-schedule         seeded random interleaving of warps\n"
	"  --budget N                maximum warp-instructions (default: core's)\n"
	"  --no-sanitize             do not turn mbarrier and async-copy undefined\n"
	"                            behaviour into exceptions (on by default)\n"
	"  --tma-latency N           cycles from issue to the first byte of an\n"
	"                            asynchronous copy (default: core's, 500)\n"
	"  --tma-bandwidth N         bytes the copy engine moves per cycle\n"
	"                            (default: core's, 64)\n"
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
	"  --dump NAME               after the run, print buffer or tensor map NAME\n"
	"                            as 32-bit little-endian words in hex, eight\n"
	"                            per line\n"
	"  --trace                   print core events to stderr\n"
	"  -h, --help                show this help\n"
	"\n"
	"Kernel parameters: the 64-bit addresses of the buffers and tensor maps,\n"
	"in the order the --buffer and --tensor-map options are given; with\n"
	".param declarations, each ptr/u64 parameter in turn takes the next one.\n"
	"Numbers are decimal or 0x-prefixed hex.\n"
	"Exit status: 0 ok, 1 host error, 2 usage/assembly/launch error,\n"
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

/*
 * Give every buffer its address and its host memory, loading FILEs.
 * Returns 0, EXIT_USAGE (message printed) or 1 (host failure).
 */
static int gmem_map(struct gmem *gm)
{
	vgpu_hostmem_init(&gm->hm, GMEM_BASE, GMEM_LIMIT);
	for (unsigned int i = 0; i < gm->nbufs; i++) {
		struct buffer *b = &gm->bufs[i];
		int err = vgpu_hostmem_alloc(&gm->hm, b->size, &b->addr, &b->data);

		if (err == -ENOSPC) {
			usage_error("buffers exceed the 4 GiB address space "
				    "(at '%s')", b->name);
			return EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "vgpu-run: cannot allocate %" PRIu64
				" bytes for buffer '%s'\n", b->size, b->name);
			return 1;
		}
		if (b->is_tmap) {
			/* the host is little-endian, as the descriptor */
			b->tm.base = gm->bufs[b->target].addr;
			memcpy(b->data, &b->tm, sizeof(b->tm));
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
			got = fread(b->data, 1, b->size, f);
			if (ferror(f)) {
				fprintf(stderr, "vgpu-run: reading '%s': %s\n",
					b->file, strerror(errno));
				fclose(f);
				return 1;
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
	vgpu_hostmem_fini(&gm->hm); /* frees the buffers' data */
	free(gm->bufs);
}

static const char *const event_names[] = {
	[VGPU_EV_CTA_BEGIN] = "CTA_BEGIN",
	[VGPU_EV_CTA_END] = "CTA_END",
	[VGPU_EV_WARP_BLOCK] = "WARP_BLOCK",
	[VGPU_EV_WARP_UNBLOCK] = "WARP_UNBLOCK",
	[VGPU_EV_WARP_EXIT] = "WARP_EXIT",
	[VGPU_EV_BAR_ARRIVE] = "BAR_ARRIVE",
	[VGPU_EV_BAR_COMPLETE] = "BAR_COMPLETE",
	[VGPU_EV_EXCEPTION] = "EXCEPTION",
};

static const char *const reason_names[] = {
	[VGPU_WR_NONE] = "none",
	[VGPU_WR_BARRIER] = "barrier",
	[VGPU_WR_SLEEP] = "sleep",
};

static void trace_event(void *opaque, const struct vgpu_event *ev)
{
	const char *type = (unsigned)ev->type < sizeof(event_names) /
							sizeof(event_names[0])
				   ? event_names[ev->type]
				   : NULL;

	(void)opaque;
	fprintf(stderr, "[%10" PRIu64 "] %-12s cta (%u,%u,%u) warp %2u pc 0x%04x",
		ev->cycle, type ? type : "?", ev->cta[0], ev->cta[1],
		ev->cta[2], ev->warp, ev->pc);
	switch (ev->type) {
	case VGPU_EV_WARP_BLOCK:
	case VGPU_EV_WARP_UNBLOCK:
		fprintf(stderr, " %s",
			(unsigned)ev->reason < sizeof(reason_names) /
						       sizeof(reason_names[0])
				? reason_names[ev->reason]
				: "?");
		if (ev->reason == VGPU_WR_BARRIER)
			fprintf(stderr, " barid %u", ev->barid);
		break;
	case VGPU_EV_BAR_ARRIVE:
	case VGPU_EV_BAR_COMPLETE:
		fprintf(stderr, " barid %u count %u expected %u", ev->barid,
			ev->count, ev->expected);
		break;
	case VGPU_EV_EXCEPTION:
		if (ev->exc)
			fprintf(stderr, " %s", vgpu_exc_name(ev->exc->code));
		break;
	default:
		break;
	}
	fputc('\n', stderr);
}

static void print_exception(const struct vgpu_exception_record *exc,
			    uint32_t nwarps)
{
	char insn[160];

	vgpu_disasm_insn((const uint64_t[2]){ exc->insn[0], exc->insn[1] }, exc->pc,
			 insn, sizeof(insn));
	fprintf(stderr, "vgpu-run: device exception: %s\n",
		vgpu_exc_name(exc->code));
	fprintf(stderr, "  cta (%u,%u,%u) warp %u lanes 0x%08x\n", exc->cta[0],
		exc->cta[1], exc->cta[2], exc->warp, exc->lane_mask);
	fprintf(stderr, "  pc 0x%04x: %s\n", exc->pc, insn);
	if (exc->barid != 0xffffffffu)
		fprintf(stderr, "  barrier %u\n", exc->barid);
	if (exc->addr)
		fprintf(stderr, "  address 0x%" PRIx64 "\n", (uint64_t)exc->addr);
	if (exc->msg[0])
		fprintf(stderr, "  %.*s\n", (int)sizeof(exc->msg), exc->msg);
	if (exc->code != VGPU_EXC_DEADLOCK)
		return;
	fprintf(stderr, "  warps:\n");
	for (uint32_t w = 0; w < nwarps && w < VGPU_MAX_WARPS_PER_CTA; w++) {
		uint8_t s = exc->warp_wait[w];

		switch (s) {
		case VGPU_WAIT_NONE:
			fprintf(stderr, "    warp %2u: runnable\n", w);
			break;
		case VGPU_WAIT_EXITED:
			fprintf(stderr, "    warp %2u: exited\n", w);
			break;
		case VGPU_WAIT_SLEEP:
			fprintf(stderr, "    warp %2u: sleeping\n", w);
			break;
		case VGPU_WAIT_MBAR:
			fprintf(stderr, "    warp %2u: mbarrier (MBAR.TRY_WAIT)\n", w);
			break;
		case VGPU_WAIT_CLUSTER:
			fprintf(stderr, "    warp %2u: cluster barrier\n", w);
			break;
		case VGPU_WAIT_ASYNC:
			fprintf(stderr, "    warp %2u: asynchronous copies\n", w);
			break;
		case VGPU_WAIT_ABSENT:
			break;
		default:
			if (s < VGPU_NUM_NAMED_BARRIERS)
				fprintf(stderr, "    warp %2u: barrier %u\n", w, s);
			else
				fprintf(stderr, "    warp %2u: state 0x%02x\n", w, s);
			break;
		}
	}
}

static void dump_buffer(const struct buffer *b)
{
	uint64_t words = b->size / 4;

	printf("%s:\n", b->name);
	for (uint64_t i = 0; i < words; i++) {
		const uint8_t *p = b->data + 4 * i;
		uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

		printf("%08" PRIx32 "%c", v,
		       (i % 8 == 7 || i + 1 == words) ? '\n' : ' ');
	}
}

static bool param_is_pointer(uint32_t type)
{
	return type == VGPU_PARAM_PTR || type == VGPU_PARAM_U64;
}

/*
 * The parameter buffer: without declared parameters, the addresses of
 * the buffers and tensor maps back to back, in command-line order; with
 * them, each ptr/u64 parameter in turn gets the next one's address at its
 * declared offset.  Returns 0 or
 * EXIT_USAGE (message printed).
 */
static int build_params(const struct vgpu_object *obj,
			const struct vgpu_obj_kernel *k, const struct gmem *gm,
			uint8_t *params, uint32_t *size)
{
	unsigned int want = 0, next = 0;

	if (!k->nparams) {
		if (gm->nbufs * 8ull > VGPU_MAX_PARAM_BYTES) {
			usage_error("too many buffers and tensor maps (at most %u)",
				    VGPU_MAX_PARAM_BYTES / 8);
			return EXIT_USAGE;
		}
		for (unsigned int i = 0; i < gm->nbufs; i++)
			for (int j = 0; j < 8; j++)
				params[8 * i + j] =
					(uint8_t)(gm->bufs[i].addr >> (8 * j));
		*size = gm->nbufs * 8;
		return 0;
	}

	if (k->param_size > VGPU_MAX_PARAM_BYTES ||
	    k->first_param > obj->nparams ||
	    k->nparams > obj->nparams - k->first_param) {
		usage_error("kernel '%s': corrupt parameter table", k->name);
		return EXIT_USAGE;
	}
	for (uint32_t i = 0; i < k->nparams; i++)
		want += param_is_pointer(obj->params[k->first_param + i].type);
	if (want != gm->nbufs) {
		usage_error("kernel '%s' takes %u pointer parameter%s but %u "
			    "--buffer/--tensor-map %s given", k->name, want,
			    want == 1 ? "" : "s", gm->nbufs,
			    gm->nbufs == 1 ? "was" : "were");
		return EXIT_USAGE;
	}
	memset(params, 0, k->param_size);
	for (uint32_t i = 0; i < k->nparams; i++) {
		const struct vgpu_obj_param *p = &obj->params[k->first_param + i];

		if (!param_is_pointer(p->type))
			continue;
		if (p->size != 8 || p->offset + 8ull > k->param_size) {
			usage_error("kernel '%s': parameter '%s' out of range",
				    k->name, p->name);
			return EXIT_USAGE;
		}
		for (int j = 0; j < 8; j++)
			params[p->offset + j] =
				(uint8_t)(gm->bufs[next].addr >> (8 * j));
		next++;
	}
	*size = k->param_size;
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
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * The cluster must tile the grid and hold at most VGPU_MAX_CLUSTER_CTAS
 * CTAs (the core checks the same; this names the option).  Returns -1 to
 * go on, or EXIT_USAGE.
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
		case OPT_KERNEL:
			o->kernel_name = optarg;
			break;
		case OPT_BUFFER:
			if (add_buffer(gm, optarg))
				return EXIT_USAGE;
			break;
		case OPT_DUMP:
			o->dumps = xrealloc(o->dumps,
					    (o->ndumps + 1) * sizeof(*o->dumps));
			o->dumps[o->ndumps++] = optarg;
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

static const struct vgpu_obj_kernel *pick_kernel(const struct vgpu_object *obj,
						 const char *name)
{
	const struct vgpu_obj_kernel *k;

	if (!obj->nkernels) {
		usage_error("no kernel in the program");
		return NULL;
	}
	if (!name)
		return &obj->kernels[0];
	k = vgpu_object_find_kernel(obj, name);
	if (!k) {
		fprintf(stderr, "vgpu-run: no kernel named '%s'; the program has:",
			name);
		for (uint32_t i = 0; i < obj->nkernels; i++)
			fprintf(stderr, " %.*s", VGPU_OBJ_NAME_MAX,
				obj->kernels[i].name);
		fputc('\n', stderr);
	}
	return k;
}

/* Load, launch, report.  Returns the exit status. */
static int run(const struct options *o, struct gmem *gm)
{
	static uint8_t params[VGPU_MAX_PARAM_BYTES];
	struct vgpu_exception_record exc;
	const struct vgpu_obj_kernel *k;
	struct vgpu_object obj = { 0 };
	struct vgpu_prog *prog = NULL;
	struct vgpu_sm *sm = NULL;
	struct vgpu_launch l;
	uint32_t param_size = 0;
	char err[4096] = "";
	int ret, status;
	FILE *f;

	f = fopen(o->path, "rb");
	if (!f) {
		usage_error("cannot open '%s': %s", o->path, strerror(errno));
		return EXIT_USAGE;
	}
	fclose(f);
	ret = vgpu_object_load_file(o->path, &obj, err, sizeof(err));
	if (ret) {
		if (err[0])
			fprintf(stderr, "%s%s", err,
				err[strlen(err) - 1] == '\n' ? "" : "\n");
		else
			fprintf(stderr, "vgpu-run: %s: %s\n", o->path,
				strerror(-ret));
		return EXIT_USAGE;
	}

	status = EXIT_USAGE;
	k = pick_kernel(&obj, o->kernel_name);
	if (!k)
		goto out;
	if (o->smem_dyn + k->smem_static > UINT32_MAX) {
		usage_error("--smem: too much shared memory");
		goto out;
	}
	status = gmem_map(gm);
	if (status)
		goto out;
	status = build_params(&obj, k, gm, params, &param_size);
	if (status)
		goto out;

	ret = vgpu_prog_load(obj.code, obj.code_size, &prog);
	if (ret) {
		fprintf(stderr, "vgpu-run: %s: cannot load program: %s\n",
			o->path, strerror(-ret));
		status = ret == -ENOMEM ? 1 : EXIT_USAGE;
		goto out;
	}
	sm = vgpu_sm_new(&(struct vgpu_sm_config){
		.tma_latency = (uint32_t)o->tma_latency,
		.tma_bandwidth = (uint32_t)o->tma_bandwidth,
	});
	if (!sm) {
		fprintf(stderr, "vgpu-run: cannot create the SM\n");
		status = 1;
		goto out;
	}

	l = (struct vgpu_launch){
		.prog = prog,
		.entry = k->entry,
		.grid = { o->grid[0], o->grid[1], o->grid[2] },
		.block = { o->block[0], o->block[1], o->block[2] },
		.cluster = { o->cluster[0], o->cluster[1], o->cluster[2] },
		.smem_bytes = (uint32_t)(k->smem_static + o->smem_dyn),
		.params = params,
		.param_size = param_size,
		.flags = (o->random_sched ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
			 (o->no_sanitize ? 0 : VGPU_LAUNCH_SANITIZE),
		.seed = o->seed,
		.budget = o->budget,
		.mem = &vgpu_hostmem_ops,
		.mem_opaque = &gm->hm,
		.event = o->trace ? trace_event : NULL,
	};
	memset(&exc, 0, sizeof(exc));
	if (vgpu_launch_validate(sm, &l, &exc)) {
		usage_error("invalid launch: %.*s", (int)sizeof(exc.msg),
			    exc.msg[0] ? exc.msg : vgpu_exc_name(exc.code));
		status = EXIT_USAGE;
		goto out;
	}
	if (vgpu_sm_launch(sm, &l, &exc)) {
		/* block dims were validated: the product is at most 1024 */
		uint32_t threads = l.block[0] * l.block[1] * l.block[2];

		fflush(stdout);
		print_exception(&exc, (threads + VGPU_WARP_SIZE - 1) /
					      VGPU_WARP_SIZE);
		status = EXIT_DEVICE;
		goto out;
	}
	for (unsigned int i = 0; i < o->ndumps; i++)
		dump_buffer(gmem_find_name(gm, o->dumps[i]));
	status = fflush(stdout) ? 1 : 0;
out:
	if (sm)
		vgpu_sm_free(sm);
	if (prog)
		vgpu_prog_free(prog);
	vgpu_object_fini(&obj);
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
	return status;
}
