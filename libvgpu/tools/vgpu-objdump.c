/* SPDX-License-Identifier: MIT */
/*
 * vgpu-objdump: disassemble a vGPU object file (or assembly text, which is
 * assembled first) to re-assemblable text on standard output.
 *
 *   vgpu-objdump [--raw] INPUT
 *
 * --raw appends "// OFFSET: WORD0 WORD1" to every instruction line.
 * INPUT "-" reads standard input.  Exit status: 0 success, 1 bad input or
 * I/O error, 2 usage error.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_asm.h"

#define ERR_LEN (64 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vgpu-objdump [--raw] INPUT\n"
		"Disassemble a vGPU object file or assembly text to standard output.\n"
		"\n"
		"  -r, --raw   also print each instruction's byte offset and its two\n"
		"              64-bit words as a comment\n"
		"  -h, --help  show this help\n"
		"\n"
		"INPUT '-' reads standard input.\n"
		"Exit status: 0 ok, 1 bad input or I/O error, 2 usage error.\n");
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/*
 * vgpu_disasm_object() indents exactly the instruction lines, one per
 * 16-byte word in code order; annotate those.
 */
static int print_raw(const struct vgpu_object *obj, const char *text,
		     size_t len)
{
	uint32_t pc = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;

		if (text[pos] == '\t' && pc < obj->code_size) {
			const uint8_t *w = obj->code + pc;

			printf("%.*s\t// 0x%04" PRIx32 ": 0x%016" PRIx64 " 0x%016" PRIx64 "\n",
			       (int)n, text + pos, pc, le64(w), le64(w + 8));
			pc += VGPU_INSN_BYTES;
		} else {
			printf("%.*s\n", (int)n, text + pos);
		}
		pos += n + 1;
	}
	return pc == obj->code_size ? 0 : -1;
}

static int dump(const struct vgpu_object *obj, bool raw)
{
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int ret;

	if (!raw)
		return vgpu_disasm_object(obj, stdout);
	mem = open_memstream(&text, &len);
	if (!mem)
		return -1;
	ret = vgpu_disasm_object(obj, mem);
	if (fclose(mem) || !text)
		ret = -1;
	if (!ret)
		ret = print_raw(obj, text, len);
	free(text);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "raw", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct vgpu_object obj;
	const char *in;
	bool raw = false;
	char *err;
	int c, ret;

	while ((c = getopt_long(argc, argv, "rh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			raw = true;
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
		fprintf(stderr, "vgpu-objdump: expected exactly one input file\n");
		usage(stderr);
		return 2;
	}
	in = strcmp(argv[optind], "-") ? argv[optind] : "/dev/stdin";
	err = malloc(ERR_LEN);
	if (!err)
		return 1;
	ret = vgpu_object_load_file(in, &obj, err, ERR_LEN);
	if (ret) {
		size_t n = strlen(err);

		fprintf(stderr, "%s%s", n ? err : "vgpu-objdump: load failed",
			n && err[n - 1] == '\n' ? "" : "\n");
		free(err);
		return 1;
	}
	free(err);
	ret = dump(&obj, raw);
	vgpu_object_fini(&obj);
	if (ret || fflush(stdout)) {
		fprintf(stderr, "vgpu-objdump: output error\n");
		return 1;
	}
	return 0;
}
