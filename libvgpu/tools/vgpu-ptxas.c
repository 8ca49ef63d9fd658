/* SPDX-License-Identifier: MIT */
/*
 * vgpu-ptxas: compile PTX text into a vGPU object file.
 *
 *   vgpu-ptxas [-S] [-o OUT] INPUT.ptx [MORE.ptx ...]
 *
 * -S writes the vGPU assembly the front end generated (each line says the
 * PTX line it came from) instead of the object.  Several inputs are
 * linked first (vgpu_ptx_link: .extern declarations resolved across them,
 * as nvcc -rdc=true programs need).  OUT defaults to the first INPUT with
 * its extension replaced by .vgo (.vgs with -S); "-" is standard output.  Exit status: 0 success, 1 unsupported or malformed PTX or an
 * I/O error, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu.h"
#include "vgpu_asm.h"

#define ERR_LEN (64 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vgpu-ptxas [-S] [-o OUT] INPUT.ptx [MORE.ptx ...]\n"
		"Compile PTX (from nvcc or clang) into a vGPU object file; several\n"
		"inputs are linked into one program first.\n"
		"\n"
		"  -S                write the generated vGPU assembly instead\n"
		"  -o, --output OUT  write to OUT (default: INPUT with a .vgo or, with\n"
		"                    -S, .vgs extension; '-' is standard output)\n"
		"  -h, --help        show this help\n"
		"\n"
		"Exit status: 0 ok, 1 PTX or I/O error, 2 usage error.\n");
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	size_t cap = 4096, n = 0, got;
	char *buf;

	if (!f) {
		fprintf(stderr, "vgpu-ptxas: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	buf = malloc(cap);
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
	}
	if (!buf)
		fprintf(stderr, "vgpu-ptxas: %s: read error\n", path);
	if (f != stdin)
		fclose(f);
	*len = n;
	return buf;
}

static char *default_output(const char *in, const char *ext)
{
	const char *base = strrchr(in, '/'), *dot;
	size_t stem;
	char *out;

	if (!strcmp(in, "-"))
		return NULL;
	base = base ? base + 1 : in;
	dot = strrchr(base, '.');
	stem = dot && dot != base ? (size_t)(dot - in) : strlen(in);
	out = malloc(stem + strlen(ext) + 1);
	if (out) {
		memcpy(out, in, stem);
		strcpy(out + stem, ext);
	}
	return out;
}

static int write_out(const char *path, const void *buf, size_t len)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "wb") : stdout;
	int ok;

	if (!f) {
		fprintf(stderr, "vgpu-ptxas: %s: %s\n", path, strerror(errno));
		return 1;
	}
	ok = fwrite(buf, 1, len, f) == len;
	ok &= f == stdout ? fflush(f) == 0 : fclose(f) == 0;
	if (!ok)
		fprintf(stderr, "vgpu-ptxas: %s: write error\n", path ? path : "-");
	return ok ? 0 : 1;
}

/* The inputs linked into one PTX text (malloc'd), or NULL after a message. */
static char *link_inputs(int n, const char *const *paths, size_t *len, char *err)
{
	char **srcs = calloc((size_t)n, sizeof(*srcs)), *out = NULL;
	size_t *lens = calloc((size_t)n, sizeof(*lens));
	int ok = srcs && lens, ret;

	for (int i = 0; ok && i < n; i++)
		ok = (srcs[i] = read_file(paths[i], &lens[i])) != NULL;
	if (ok) {
		err[0] = '\0';
		ret = vgpu_ptx_link(n, (const char *const *)srcs, lens, paths, 0, &out, len, err,
				    ERR_LEN);
		if (ret)
			fputs(*err ? err : "vgpu-ptxas: out of memory\n", stderr);
	} else if (!srcs || !lens) {
		fprintf(stderr, "vgpu-ptxas: out of memory\n");
	}
	for (int i = 0; srcs && i < n; i++)
		free(srcs[i]);
	free(srcs);
	free(lens);
	return out;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in, *out = NULL;
	char *def = NULL, *src = NULL, *text = NULL, *err;
	bool asm_only = false;
	size_t len = 0;
	int c, ret;

	while ((c = getopt_long(argc, argv, "So:h", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			asm_only = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	in = argv[optind];
	if (!out)
		out = def = default_output(in, asm_only ? ".vgs" : ".vgo");
	err = malloc(ERR_LEN);
	if (err && optind == argc - 1)
		src = read_file(in, &len);
	else if (err)
		src = link_inputs(argc - optind, (const char *const *)argv + optind, &len, err);
	if (!src) {
		free(err);
		free(def);
		return 1;
	}
	err[0] = '\0';
	ret = vgpu_ptx_to_asm(src, len,
			      optind < argc - 1 ? VGPU_PTX_LINKED_NAME :
			      strcmp(in, "-") ? in : "<stdin>",
			      &text, err, ERR_LEN);
	if (ret && optind < argc - 1)
		vgpu_ptx_link_map_log(src, len, err, ERR_LEN); /* each input's lines */
	if (ret) {
		fputs(*err ? err : "vgpu-ptxas: out of memory\n", stderr);
		ret = 1;
	} else if (asm_only) {
		ret = write_out(out, text, strlen(text));
	} else {
		struct vgpu_object obj;
		uint8_t *bin = NULL;
		size_t blen;

		ret = vgpu_assemble(text, strlen(text), in, &obj, err, ERR_LEN);
		if (ret) {
			fprintf(stderr, "%svgpu-ptxas: internal error: the generated assembly does not assemble\n",
				err);
			ret = 1;
		} else if (vgpu_object_write(&obj, &bin, &blen)) {
			fprintf(stderr, "vgpu-ptxas: out of memory\n");
			vgpu_object_fini(&obj);
			ret = 1;
		} else {
			ret = write_out(out, bin, blen);
			free(bin);
			vgpu_object_fini(&obj);
		}
	}
	free(text);
	free(src);
	free(err);
	free(def);
	return ret;
}
