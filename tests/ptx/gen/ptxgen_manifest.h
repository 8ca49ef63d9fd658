/* SPDX-License-Identifier: MIT */
/*
 * ptxgen's files, read by the GPU runner (ptxgen-run.cu, C++ through
 * nvcc) and the checker (tests/unit/test_ptxgen.c, C11): a module's
 * manifest (tests/ptx/gen/ptxgen says what it holds), the hash that ties
 * an .expected file to the PTX and inputs it was computed from, and the
 * .expected files' words.
 */
#ifndef PTXGEN_MANIFEST_H
#define PTXGEN_MANIFEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pg_kernel {
	char name[128];
	char instr[64];
	char form[192];
	unsigned int rows, inwords, outwords, filled;
	uint32_t *in;       /* inwords words */
	const char *ptx;    /* its text in the module: "// ptxgen kernel NAME" on */
	size_t ptx_len;
};

struct pg_module {
	char *ptx, *manifest;
	size_t ptx_len, manifest_len;
	const char *header; /* the module's text before its first kernel */
	size_t header_len;
	struct pg_kernel *k;
	unsigned int nk;
	uint64_t hash;
};

/* The whole of @path, NUL-terminated, or NULL. */
static inline char *pg_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = (char *)malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

/* FNV-1a, 64 bits, continued from @h (start with 0xcbf29ce484222325). */
static inline uint64_t pg_fnv1a(uint64_t h, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
	return h;
}

static inline void pg_module_free(struct pg_module *m)
{
	for (unsigned int i = 0; i < m->nk; i++)
		free(m->k[i].in);
	free(m->k);
	free(m->ptx);
	free(m->manifest);
	memset(m, 0, sizeof(*m));
}

/*
 * Read DIR/NAME.ptx and DIR/NAME.manifest; 0, or -1 with @err set.  The
 * hash covers the PTX text and the manifest (the inputs), in that order.
 */
static inline int pg_module_load(struct pg_module *m, const char *dir, const char *name,
				 char *err, size_t errlen)
{
	char path[4096];
	char *line, *next, *mark;
	unsigned int cap = 0;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "%.3900s/%.100s.ptx", dir, name);
	m->ptx = pg_read_file(path, &m->ptx_len);
	snprintf(path, sizeof(path), "%.3900s/%.100s.manifest", dir, name);
	m->manifest = pg_read_file(path, &m->manifest_len);
	if (!m->ptx || !m->manifest) {
		snprintf(err, errlen, "cannot read %.100s/%.60s.ptx or .manifest", dir, name);
		pg_module_free(m);
		return -1;
	}
	m->hash = pg_fnv1a(pg_fnv1a(0xcbf29ce484222325ull, m->ptx, m->ptx_len), m->manifest,
			   m->manifest_len);
	mark = strstr(m->ptx, "// ptxgen kernel ");
	m->header = m->ptx;
	m->header_len = mark ? (size_t)(mark - m->ptx) : m->ptx_len;
	for (line = m->manifest; line && *line; line = next) {
		struct pg_kernel *k;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, "kernel ", 7)) {
			int pos = 0;

			if (m->nk == cap) {
				struct pg_kernel *nk;

				cap = cap ? 2 * cap : 256;
				nk = (struct pg_kernel *)realloc(m->k, cap * sizeof(*nk));
				if (!nk)
					goto bad;
				m->k = nk;
			}
			k = &m->k[m->nk++];
			memset(k, 0, sizeof(*k));
			if (sscanf(line, "kernel %127s %u %u %u %63s %n", k->name, &k->rows,
				   &k->inwords, &k->outwords, k->instr, &pos) < 5 || !pos ||
			    k->rows == 0 || k->rows > 65536 || k->inwords > (1u << 22) ||
			    k->outwords > (1u << 22))
				goto bad;
			snprintf(k->form, sizeof(k->form), "%s", line + pos);
			k->in = (uint32_t *)calloc(k->inwords ? k->inwords : 1, 4);
			if (!k->in)
				goto bad;
		} else if (!strncmp(line, "in ", 3) && m->nk) {
			char *p = line + 3, *end;

			k = &m->k[m->nk - 1];
			for (;;) {
				unsigned long w = strtoul(p, &end, 16);

				if (end == p)
					break;
				if (k->filled >= k->inwords)
					goto bad;
				k->in[k->filled++] = (uint32_t)w;
				p = end;
			}
		}
	}
	/* the kernels are in the PTX in the manifest's order */
	for (unsigned int i = 0, from = 0; i < m->nk; i++) {
		char tag[192];
		const char *s, *e;

		snprintf(tag, sizeof(tag), "// ptxgen kernel %s:", m->k[i].name);
		s = strstr(m->ptx + from, tag);
		if (!s || m->k[i].filled != m->k[i].inwords) {
			snprintf(err, errlen, "%s: kernel %s: no PTX, or not all its inputs", name,
				 m->k[i].name);
			pg_module_free(m);
			return -1;
		}
		e = strstr(s + 1, "// ptxgen kernel ");
		m->k[i].ptx = s;
		m->k[i].ptx_len = e ? (size_t)(e - s) : strlen(s);
		from = (unsigned int)(s - m->ptx + m->k[i].ptx_len);
	}
	return 0;
bad:
	snprintf(err, errlen, "%s.manifest: malformed near \"%.60s\"", name, line);
	pg_module_free(m);
	return -1;
}

#endif
