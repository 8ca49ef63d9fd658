/* SPDX-License-Identifier: MIT */
/*
 * vgpu-as: assemble vGPU assembly text into an object file.
 *
 *   vgpu-as [-o OUT] INPUT
 *
 * INPUT "-" reads standard input; OUT defaults to INPUT with its extension
 * replaced by .vgo (standard output when INPUT is "-"); OUT "-" writes to
 * standard output.  Exit status: 0 success, 1 assembly or I/O error,
 * 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_asm.h"

#define ERR_LEN (64 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vgpu-as [-o OUT] INPUT\n"
		"Assemble vGPU assembly text (see docs/assembly.md) into an object file.\n"
		"\n"
		"  -o, --output OUT  write the object to OUT (default: INPUT with a .vgo\n"
		"                    extension; '-' is standard output)\n"
		"  -h, --help        show this help\n"
		"\n"
		"INPUT '-' reads standard input and writes standard output by default.\n"
		"Exit status: 0 ok, 1 assembly or I/O error, 2 usage error.\n");
}

static char *read_stream(FILE *f, size_t *len)
{
	size_t cap = 4096, n = 0, got;
	char *buf = malloc(cap);

	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

static char *read_input(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	char *buf;

	if (!f) {
		fprintf(stderr, "vgpu-as: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	buf = read_stream(f, len);
	if (!buf)
		fprintf(stderr, "vgpu-as: %s: read error\n", path);
	if (f != stdin)
		fclose(f);
	return buf;
}

/* INPUT with its extension replaced by .vgo; NULL for standard input. */
static char *default_output(const char *in)
{
	const char *base = strrchr(in, '/');
	const char *dot;
	size_t stem;
	char *out;

	if (!strcmp(in, "-"))
		return NULL;
	base = base ? base + 1 : in;
	dot = strrchr(base, '.');
	stem = dot && dot != base ? (size_t)(dot - in) : strlen(in);
	out = malloc(stem + 5);
	if (out) {
		memcpy(out, in, stem);
		memcpy(out + stem, ".vgo", 5);
	}
	return out;
}

static int write_output(const char *path, const uint8_t *buf, size_t len)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "wb") : stdout;
	int ok;

	if (!f) {
		fprintf(stderr, "vgpu-as: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ok = fwrite(buf, 1, len, f) == len;
	ok &= f == stdout ? fflush(f) == 0 : fclose(f) == 0;
	if (!ok)
		fprintf(stderr, "vgpu-as: %s: write error\n", path ? path : "-");
	return ok ? 0 : -1;
}

static int assemble(const char *in, const char *out)
{
	struct vgpu_object obj;
	char *src, *err = malloc(ERR_LEN);
	uint8_t *bin = NULL;
	size_t len, blen;
	int ret;

	src = err ? read_input(in, &len) : NULL;
	if (!src) {
		free(err);
		return 1;
	}
	ret = vgpu_assemble(src, len, strcmp(in, "-") ? in : "<stdin>", &obj,
			    err, ERR_LEN);
	if (ret) {
		if (*err)
			fputs(err, stderr);
		else
			fprintf(stderr, "vgpu-as: %s: %s\n", in, strerror(-ret));
	} else {
		ret = vgpu_object_write(&obj, &bin, &blen);
		if (ret)
			fprintf(stderr, "vgpu-as: %s\n", strerror(-ret));
		else
			ret = write_output(out, bin, blen);
		vgpu_object_fini(&obj);
	}
	free(bin);
	free(src);
	free(err);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL;
	char *def = NULL;
	int c, ret;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
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
	if (optind + 1 != argc) {
		fprintf(stderr, "vgpu-as: expected exactly one input file\n");
		usage(stderr);
		return 2;
	}
	if (!out) {
		def = default_output(argv[optind]);
		if (def && !strcmp(def, argv[optind])) {
			fprintf(stderr, "vgpu-as: output would overwrite %s; use -o\n",
				def);
			free(def);
			return 2;
		}
		out = def;
	}
	ret = assemble(argv[optind], out);
	free(def);
	return ret;
}
