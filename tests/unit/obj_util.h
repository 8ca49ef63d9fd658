/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the object-file tests (test_asm_obj.c, test_dataaddr.c).
 */
#ifndef OBJ_UTIL_H
#define OBJ_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_asm.h"

/* The disassembly of @o (malloc'd), or NULL. */
static inline char *obj_disasm_text(const struct vgpu_object *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	if (vgpu_disasm_object(o, f)) {
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	return text;
}

/*
 * Does @text (a disassembly, "t.s" in messages written to @err) assemble
 * to an object whose file is the @len bytes at @buf?
 */
static inline int obj_reassembles_to(const char *text, const uint8_t *buf, size_t len,
				     char *err, size_t errlen)
{
	struct vgpu_object o;
	uint8_t *b;
	size_t n;
	int ret = vgpu_assemble(text, strlen(text), "t.s", &o, err, errlen);

	if (ret)
		return ret;
	ret = vgpu_object_write(&o, &b, &n);
	vgpu_object_fini(&o);
	if (ret)
		return ret;
	ret = n == len && !memcmp(b, buf, len) ? 0 : -EINVAL;
	free(b);
	return ret;
}

#endif
