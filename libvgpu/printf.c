// SPDX-License-Identifier: MIT
/*
 * Device-side printf, as CUDA does it: a kernel's vprintf(fmt, args)
 * appends a record to the launch's printf buffer (VGPU_PARAM_PRINTF):
 * the format string's offset in the program's module data and a copy of
 * the argument buffer, laid out as C lays out the promoted arguments
 * (4 bytes for int and char, 8 for long, long long, size_t, pointers and
 * double; each at its own alignment).  The host formats the records when
 * the job completes (vgpu_job_printf()).
 *
 * Buffer: struct vgpu_printf_header, then records of
 * { u32 format offset, u32 argument bytes, arguments } padded to 8.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu_priv.h"

/* The conversion that starts at @fmt[0] == '%': its length and argument layout. */
static size_t conversion(const char *fmt, size_t len, char *conv, int *size, int *stars)
{
	size_t i = 1;
	int l = 0;

	*stars = 0;
	while (i < len && strchr("-+ #0", fmt[i]))
		i++;
	for (int part = 0; part < 2; part++) { /* width, then .precision */
		if (part && (i >= len || fmt[i] != '.'))
			break;
		if (part)
			i++;
		if (i < len && fmt[i] == '*') {
			(*stars)++;
			i++;
		}
		while (i < len && fmt[i] >= '0' && fmt[i] <= '9')
			i++;
	}
	while (i < len && strchr("hljztL", fmt[i])) {
		l += fmt[i] == 'l' || fmt[i] == 'j' || fmt[i] == 'z' || fmt[i] == 't' ? 1 : 0;
		i++;
	}
	*conv = i < len ? fmt[i] : '\0';
	switch (*conv) {
	case 'd': case 'i': case 'u': case 'x': case 'X': case 'o':
		*size = l ? 8 : 4;
		break;
	case 'c':
		*size = 4;
		break;
	case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
	case 's': case 'p':
		*size = 8;
		break;
	case '%':
		*size = 0;
		break;
	default:
		*size = -1; /* %n and anything unknown */
		break;
	}
	return i < len ? i + 1 : i;
}

int vgpu_printf_layout(const char *fmt, size_t len, uint32_t *nbytes, int *nargs)
{
	uint32_t off = 0;
	int n = 0;

	for (size_t i = 0; i < len && fmt[i];) {
		char conv;
		int size, stars;

		if (fmt[i] != '%') {
			i++;
			continue;
		}
		i += conversion(fmt + i, len - i, &conv, &size, &stars);
		if (size < 0)
			return -1;
		off = (off + 3) & ~3u;
		off += 4u * (uint32_t)stars;
		n += stars;
		if (size) {
			off = (off + (uint32_t)size - 1) & ~((uint32_t)size - 1);
			off += (uint32_t)size;
			n++;
		}
	}
	*nbytes = off;
	*nargs = n;
	return 0;
}

struct text {
	char *p;
	size_t n, cap;
	bool oom;
};

static void put(struct text *t, const char *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		char *p;

		while (cap < t->n + n + 1)
			cap *= 2;
		p = realloc(t->p, cap);
		if (!p) {
			t->oom = true;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = '\0';
}

static uint64_t get(const uint8_t *b, uint32_t off, int size)
{
	uint64_t v = 0;

	for (int i = 0; i < size; i++)
		v |= (uint64_t)b[off + (uint32_t)i] << (8 * i);
	return v;
}

/* A string of the program's module data at device address @va, or NULL. */
static const char *data_string(const struct vgpu_program *prog, uint64_t va, size_t *len)
{
	uint64_t off;

	if (!prog->data || va < prog->data->va || va - prog->data->va >= prog->obj.data_size)
		return NULL;
	off = va - prog->data->va;
	*len = strnlen((const char *)prog->obj.data + off, prog->obj.data_size - off);
	return (const char *)prog->obj.data + off;
}

/* One record: format @fmt with the arguments in @a (@n bytes). */
static void format_record(struct text *t, const struct vgpu_program *prog, const char *fmt,
			  size_t len, const uint8_t *a, uint32_t n)
{
	uint32_t off = 0;
	char spec[64], out[512];

	for (size_t i = 0; i < len && fmt[i];) {
		size_t k = i, cl;
		char conv;
		int size, stars, w[2] = { 0, 0 };

		while (k < len && fmt[k] && fmt[k] != '%')
			k++;
		put(t, fmt + i, k - i);
		if (k >= len || !fmt[k])
			break;
		cl = conversion(fmt + k, len - k, &conv, &size, &stars);
		i = k + cl;
		if (size < 0 || cl >= sizeof(spec)) {
			put(t, fmt + k, cl);
			continue;
		}
		for (int s = 0; s < stars; s++) {
			off = (off + 3) & ~3u;
			w[s] = off + 4 <= n ? (int)(int32_t)get(a, off, 4) : 0;
			off += 4;
		}
		if (!size) {
			put(t, "%", 1);
			continue;
		}
		off = (off + (uint32_t)size - 1) & ~((uint32_t)size - 1);
		if (off + (uint32_t)size > n)
			break; /* a record shorter than its format: stop */
		memcpy(spec, fmt + k, cl);
		spec[cl] = '\0';
		{
			uint64_t v = get(a, off, size);
			int r;

			off += (uint32_t)size;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			if (strchr("fFeEgGaA", conv)) {
				double d;

				memcpy(&d, &v, sizeof(d));
				r = stars == 2 ? snprintf(out, sizeof(out), spec, w[0], w[1], d) :
				    stars ? snprintf(out, sizeof(out), spec, w[0], d) :
					    snprintf(out, sizeof(out), spec, d);
			} else if (conv == 's') {
				size_t sl;
				const char *s = data_string(prog, v, &sl);
				char tmp[64];

				if (!s) {
					snprintf(tmp, sizeof(tmp), "(string at 0x%" PRIx64 ")", v);
					s = tmp;
				}
				r = stars == 2 ? snprintf(out, sizeof(out), spec, w[0], w[1], s) :
				    stars ? snprintf(out, sizeof(out), spec, w[0], s) :
					    snprintf(out, sizeof(out), spec, s);
			} else if (conv == 'p') {
				r = snprintf(out, sizeof(out), "0x%" PRIx64, v);
			} else {
				/* integers: the C library sees a long long of the value */
				char ll[72];
				size_t sl = strlen(spec);

				/* drop length modifiers, print as long long */
				size_t j = 0;

				for (size_t q = 0; q + 1 < sl; q++)
					if (!strchr("hljztL", spec[q]))
						ll[j++] = spec[q];
				ll[j++] = 'l';
				ll[j++] = 'l';
				ll[j++] = spec[sl - 1];
				ll[j] = '\0';
				if (size == 4)
					v = strchr("di", conv) ? (uint64_t)(int64_t)(int32_t)v :
					    conv == 'c' ? (uint8_t)v : (uint32_t)v;
				if (conv == 'c')
					ll[j - 3] = 'c', ll[j - 2] = '\0';
				r = conv == 'c' ? (stars ? snprintf(out, sizeof(out), ll, w[0], (int)v) :
						   snprintf(out, sizeof(out), ll, (int)v)) :
				    stars == 2 ? snprintf(out, sizeof(out), ll, w[0], w[1], (long long)v) :
				    stars ? snprintf(out, sizeof(out), ll, w[0], (long long)v) :
					    snprintf(out, sizeof(out), ll, (long long)v);
			}
#pragma GCC diagnostic pop
			if (r > 0)
				put(t, out, (size_t)r < sizeof(out) ? (size_t)r : sizeof(out) - 1);
		}
	}
}

char *vgpu_printf_collect(const struct vgpu_program *prog, const uint8_t *buf)
{
	const struct vgpu_printf_header *h = (const void *)buf;
	/* the kernel can write anything here: trust only our own capacity */
	uint32_t used = h->used, cap = VGPU_PRINTF_BYTES - (uint32_t)sizeof(*h);
	struct text t = { 0 };

	if (!used)
		return NULL;
	for (uint32_t at = 0; at + 8 <= used && at + 8 <= cap;) {
		const uint8_t *r = buf + sizeof(*h) + at;
		uint32_t fo = (uint32_t)get(r, 0, 4), n = (uint32_t)get(r, 4, 4), size;

		if (n > cap - at - 8)
			break; /* a record past the buffer: garbage, stop */
		size = 8 + ((n + 7) & ~7u);
		if (size > cap - at)
			break;
		if (fo < prog->obj.data_size)
			format_record(&t, prog, (const char *)prog->obj.data + fo,
				      strnlen((const char *)prog->obj.data + fo,
					      prog->obj.data_size - fo),
				      r + 8, n);
		at += size;
	}
	if (used > cap) {
		char msg[128];

		snprintf(msg, sizeof(msg),
			 "[vgpu: the printf buffer is full: %" PRIu32 " bytes of records lost]\n",
			 used - cap);
		put(&t, msg, strlen(msg));
	}
	if (t.oom) {
		free(t.p);
		return NULL;
	}
	return t.p;
}
