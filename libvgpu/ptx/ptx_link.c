// SPDX-License-Identifier: MIT
/*
 * The PTX linker (docs/ptx.md, "Linking"): several PTX modules -> one
 * PTX module, the text the rest of the front end compiles like any other.
 * cuLink* (libvgpu/cuda/cu_link.c) and libcudart's nvcc -rdc=true programs
 * (libvgpu/cudart/crt_register.c) use it.
 *
 * Each module is parsed alone first (its errors name its own file, line
 * and column), then its module-scope declarations are scanned for their
 * linking directives (PTX ISA 11.6.4 .extern, .visible, .weak, .common)
 * and every name with external linkage is resolved across the modules:
 *
 *   - two .visible definitions of one name: an error naming both;
 *   - a .weak definition yields to a .visible one, and of several .weak
 *     ones (no .visible) the first is kept;
 *   - .common variables become one, of the largest size (a .visible or
 *     .weak definition wins over them);
 *   - an .extern declaration refers to the definition: of a function it
 *     stays a prototype, of a variable it is dropped (its size, when it
 *     has one, must be the definition's; a function's name must not be
 *     a variable's);
 *   - an .extern left undefined is an error naming it; vprintf,
 *     __assertfail, malloc and free are the front end's own, and so are
 *     the device runtime's __cudaCDP2GetParameterBufferV2,
 *     __cudaCDP2LaunchDeviceV2, __cudaCDP2GetLastError and
 *     __cudaCDP2PeekAtLastError (device-side launch: ptx_cdp.c); its
 *     other functions (__cudaCDP2Malloc, cudaGetParameterBuffer, ... :
 *     libcudadevrt) are named as unsupported, defined or not (devrt()).
 *
 * A module's internal names (no linking directive: $str, static
 * variables) that another module also has are renamed in it: NAME becomes
 * NAME$vgpu$mN.  The result: the modules' texts in order, with those
 * edits, each followed by a comment naming it (the first module's lines
 * keep their numbers); .extern .shared (the dynamic shared memory) is
 * left alone.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"
#include "vgpu.h"

enum lk_link { LK_INTERNAL, LK_VISIBLE, LK_WEAK, LK_EXTERN, LK_COMMON };

struct lk_sym {
	const char *name;
	size_t len;
	int mod;
	bool func, entry, def;
	enum lk_link link;
	size_t start, end;  /* the statement's bytes in its module */
	size_t lstart, lend; /* the linking directive's token */
	uint64_t size;	    /* a variable's bytes, 0 when unsized */
	int line, col;
	bool drop, strip;   /* dropped whole; its directive dropped */
};

struct lk_edit {
	size_t start, end;
	const char *text; /* NULL: nothing */
	size_t tlen;
};

struct lk {
	int n;
	const char *const *src;
	const size_t *len;
	const char *const *names;
	struct ptx_diag *dg;
	struct lk_sym *syms;
	int nsyms, cap;
	bool partial; /* VGPU_PTX_LINK_PARTIAL: undefined references wait */
};

static const char *mod_name(const struct lk *L, int m)
{
	return L->names && L->names[m] ? L->names[m] : "<ptx>";
}

__attribute__((format(printf, 5, 6))) static void lk_err(struct lk *L, int m, int line, int col,
							  const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	struct ptx_diag d = *L->dg;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	d.file = mod_name(L, m);
	ptx_error(&d, line, col, "%s", msg);
	L->dg->used = d.used;
	L->dg->errors = d.errors;
}

static bool is_ident(const struct ptx_lexer *lx, const char *s)
{
	return lx->tok == PTX_T_IDENT && !strcmp(lx->text, s);
}

static bool is_punct(const struct ptx_lexer *lx, char c)
{
	return lx->tok == PTX_T_PUNCT && lx->text[0] == c;
}

/* Skips a balanced ( ... ) group starting at the current '('. */
static void skip_parens(struct ptx_lexer *lx)
{
	int depth = 0;

	do {
		depth += is_punct(lx, '(') - is_punct(lx, ')');
		ptx_lex_next(lx);
	} while (depth > 0 && lx->tok != PTX_T_EOF);
}

static int type_bytes(const char *t)
{
	static const char *const b1[] = { ".b8", ".u8", ".s8", ".pred" };
	static const char *const b2[] = { ".b16", ".u16", ".s16", ".f16", ".bf16" };
	static const char *const b4[] = { ".b32", ".u32", ".s32", ".f32", ".f16x2", ".bf16x2" };
	static const char *const b8[] = { ".b64", ".u64", ".s64", ".f64" };

	for (size_t i = 0; i < sizeof(b1) / sizeof(*b1); i++)
		if (!strcmp(t, b1[i]))
			return 1;
	for (size_t i = 0; i < sizeof(b2) / sizeof(*b2); i++)
		if (!strcmp(t, b2[i]))
			return 2;
	for (size_t i = 0; i < sizeof(b4) / sizeof(*b4); i++)
		if (!strcmp(t, b4[i]))
			return 4;
	for (size_t i = 0; i < sizeof(b8) / sizeof(*b8); i++)
		if (!strcmp(t, b8[i]))
			return 8;
	if (!strcmp(t, ".b128"))
		return 16;
	return 0;
}

static int add_sym(struct lk *L, const struct lk_sym *s)
{
	if (L->nsyms == L->cap) {
		int ncap = L->cap ? 2 * L->cap : 64;
		struct lk_sym *p = realloc(L->syms, (size_t)ncap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		L->syms = p;
		L->cap = ncap;
	}
	L->syms[L->nsyms++] = *s;
	return 0;
}

/*
 * Past the current statement: its ';' or its body's closing '}' (and a
 * ';' after it: a variable's initializer); returns where it ends (just
 * after that character).
 */
static const char *skip_statement(struct ptx_lexer *lx)
{
	int depth = 0;

	while (lx->tok != PTX_T_EOF) {
		if (is_punct(lx, '{')) {
			depth++;
		} else if ((is_punct(lx, '}') && --depth <= 0) || (is_punct(lx, ';') && !depth)) {
			const char *end = lx->p;

			ptx_lex_next(lx);
			if (is_punct(lx, ';')) { /* an initializer's { } then ; */
				end = lx->p;
				ptx_lex_next(lx);
			}
			return end;
		}
		ptx_lex_next(lx);
	}
	return lx->end;
}

/* The module-scope declarations of module @m. */
static int scan(struct lk *L, int m)
{
	const char *src = L->src[m];
	struct ptx_lexer lx;

	ptx_lex_init(&lx, src, L->len[m]);
	while (lx.tok != PTX_T_EOF) {
		struct lk_sym s;

		memset(&s, 0, sizeof(s));
		s.mod = m;
		if (lx.tok != PTX_T_IDENT || lx.text[0] != '.') {
			ptx_lex_next(&lx);
			continue;
		}
		s.start = (size_t)(lx.ident - src);
		s.line = lx.tline;
		s.col = lx.tcol;
		if (is_ident(&lx, ".extern") || is_ident(&lx, ".visible") || is_ident(&lx, ".weak") ||
		    is_ident(&lx, ".common")) {
			s.link = lx.text[1] == 'e' ? LK_EXTERN : lx.text[1] == 'v' ? LK_VISIBLE :
				 lx.text[1] == 'w' ? LK_WEAK : LK_COMMON;
			s.lstart = s.start;
			s.lend = s.start + lx.ident_len;
			ptx_lex_next(&lx);
		}
		if (is_ident(&lx, ".entry") || is_ident(&lx, ".func")) {
			s.func = true;
			s.entry = lx.text[1] == 'e';
			if (s.entry && s.link == LK_INTERNAL)
				s.link = LK_VISIBLE; /* a kernel is the program's */
			ptx_lex_next(&lx);
			if (is_ident(&lx, ".attribute"))
				ptx_lex_next(&lx), skip_parens(&lx);
			if (is_punct(&lx, '(') && !s.entry)
				skip_parens(&lx);
			if (lx.tok != PTX_T_IDENT) {
				skip_statement(&lx);
				continue;
			}
			s.name = lx.ident;
			s.len = lx.ident_len;
			s.line = lx.tline;
			s.col = lx.tcol;
			while (lx.tok != PTX_T_EOF && !is_punct(&lx, ';') && !is_punct(&lx, '{'))
				ptx_lex_next(&lx);
			s.def = is_punct(&lx, '{');
		} else if (is_ident(&lx, ".global") || is_ident(&lx, ".const") ||
			   is_ident(&lx, ".shared")) {
			uint64_t elem = 0, count = 1;

			if (is_ident(&lx, ".shared") && s.link == LK_EXTERN) {
				skip_statement(&lx); /* the dynamic shared memory */
				continue;
			}
			ptx_lex_next(&lx);
			while (lx.tok == PTX_T_IDENT && lx.text[0] == '.') {
				int b = type_bytes(lx.text);

				if (!strncmp(lx.text, ".v", 2))
					count *= (uint64_t)strtoul(lx.text + 2, NULL, 10);
				if (b)
					elem = (uint64_t)b;
				ptx_lex_next(&lx);
				if (lx.tok == PTX_T_INT) /* .align N */
					ptx_lex_next(&lx);
			}
			if (lx.tok != PTX_T_IDENT) {
				skip_statement(&lx);
				continue;
			}
			s.name = lx.ident;
			s.len = lx.ident_len;
			s.line = lx.tline;
			s.col = lx.tcol;
			ptx_lex_next(&lx);
			while (is_punct(&lx, '[')) {
				ptx_lex_next(&lx);
				if (lx.tok == PTX_T_INT) {
					count *= (uint64_t)lx.value;
					ptx_lex_next(&lx);
				} else {
					count = 0; /* unsized: name[] */
				}
				if (is_punct(&lx, ']'))
					ptx_lex_next(&lx);
			}
			s.size = elem * count;
			s.def = s.link != LK_EXTERN;
		} else {
			ptx_lex_next(&lx);
			continue;
		}
		s.end = (size_t)(skip_statement(&lx) - src);
		if (add_sym(L, &s))
			return -ENOMEM;
	}
	return 0;
}

static bool same(const struct lk_sym *a, const struct lk_sym *b)
{
	return a->len == b->len && !memcmp(a->name, b->name, a->len);
}

static bool builtin(const struct lk_sym *s)
{
	static const char *const names[] = { "vprintf", "__assertfail", "malloc", "free" };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (s->len == strlen(names[i]) && !memcmp(s->name, names[i], s->len))
			return s->func;
	return false;
}

/*
 * The device runtime (libcudadevrt: device-side kernel launch, cudaMalloc,
 * streams and events ... in device code).  vGPU defines device-side launch,
 * cudaGetLastError/cudaPeekAtLastError, cudaMalloc/cudaFree, the
 * device-side streams and events, cudaGetDevice, cudaGetDeviceCount,
 * cudaDeviceGetAttribute, cudaFuncGetAttributes and
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor (ptx_cdp_implements());
 * a call of one of its other entry points (CUDA 12/13's __cudaCDP2*:
 * cudaEventRecordWithFlags, which CUDA 13 lacks too ...; CDP1's
 * cudaLaunchDevice*, cudaGetParameterBuffer*) is refused even where
 * nvcc's device link brought libcudadevrt's own PTX, which defines them;
 * an undefined cuda* function (CDP1's cudaDeviceSynchronize), or cnp*
 * (what libcudadevrt's PTX calls in the driver), is one too.
 */
static bool prefix(const struct lk_sym *s, const char *p)
{
	size_t n = strlen(p);

	return s->len > n && !memcmp(s->name, p, n);
}

/* One the compile defines (ptx_cdp.c): left .extern, like builtin()'s. */
static bool devrt_implemented(const struct lk_sym *s)
{
	char name[64];

	if (!s->func || s->len >= sizeof(name))
		return false;
	memcpy(name, s->name, s->len);
	name[s->len] = '\0';
	return ptx_cdp_implements(name);
}

static bool devrt_entry(const struct lk_sym *s)
{
	return s->func && !devrt_implemented(s) &&
	       (prefix(s, "__cudaCDP") || prefix(s, "cudaLaunchDevice") ||
		prefix(s, "cudaGetParameterBuffer"));
}

static bool devrt(const struct lk_sym *s)
{
	return s->func && (devrt_entry(s) || prefix(s, "cuda") || prefix(s, "cnp"));
}

/*
 * Why nvcc 13 would not have it either: CUDA 13's libcudadevrt does not
 * define __cudaCDP2EventRecordWithFlags (nvlink: undefined reference), and
 * the CDP1 device-side cudaDeviceSynchronize is gone on sm_90 (nvcc
 * refuses it there; PTX for an older target may call it).  The device
 * runtime vGPU has: ptx_cdp.c and ptx_devrt.c (the functions they name).
 */
static const char *devrt_note(const struct lk_sym *s)
{
	size_t n = strlen("__cudaCDP2EventRecordWithFlags");

	if (s->len >= n && !memcmp(s->name, "__cudaCDP2EventRecordWithFlags", n))
		return " (nor does CUDA 13's libcudadevrt define it: nvlink reports an "
		       "undefined reference)";
	if (s->len == strlen("cudaDeviceSynchronize") &&
	    !memcmp(s->name, "cudaDeviceSynchronize", s->len))
		return " (CDP1's device-side synchronize, removed on sm_90 and later: nvcc 13 "
		       "refuses it in device code for sm_90)";
	return "";
}

static const char *kind_name(const struct lk_sym *s)
{
	return s->func ? "function" : "variable";
}

/* Resolves the symbols named like L->syms[@i] (the first of them). */
static void resolve(struct lk *L, int i)
{
	struct lk_sym *first = &L->syms[i], *vis = NULL, *weak = NULL, *common = NULL, *def;

	for (int j = i; j < L->nsyms; j++) {
		struct lk_sym *s = &L->syms[j];

		if (s->link == LK_INTERNAL || !same(s, first))
			continue;
		if (s->def && s->link == LK_VISIBLE) {
			if (vis) {
				lk_err(L, s->mod, s->line, s->col,
				       "multiple definitions of '%.*s' (.visible here and at %s:%d:%d)",
				       (int)s->len, s->name, mod_name(L, vis->mod), vis->line,
				       vis->col);
				continue;
			}
			vis = s;
		} else if (s->def && s->link == LK_WEAK) {
			if (weak)
				s->drop = true;
			else
				weak = s;
		} else if (s->link == LK_COMMON) {
			if (s->func) {
				lk_err(L, s->mod, s->line, s->col,
				       ".common '%.*s': only .global variables can be .common",
				       (int)s->len, s->name);
				continue;
			}
			if (common && s->size <= common->size) {
				s->drop = true;
			} else {
				if (common)
					common->drop = true;
				common = s;
			}
		}
	}
	def = vis ? vis : weak ? weak : common;
	if (def && def != weak && weak)
		weak->drop = true;
	if (def && def != common && common)
		common->drop = true;
	if (def && def == common)
		def->strip = true; /* .common .global x -> .global x */
	for (int j = i; j < L->nsyms; j++) {
		struct lk_sym *s = &L->syms[j];

		if (s->link != LK_EXTERN || !same(s, first))
			continue;
		if (!def || devrt_entry(s)) {
			if (builtin(s) || devrt_implemented(s) || L->partial)
				continue;
			if (devrt(s))
				lk_err(L, s->mod, s->line, s->col,
				       "unsupported construct: '%.*s' is a device-runtime function "
				       "(device-side launch, CUDA dynamic parallelism: libcudadevrt), "
				       "which vGPU does not support%s",
				       (int)s->len, s->name, devrt_note(s));
			else
				lk_err(L, s->mod, s->line, s->col,
				       "undefined reference to the .extern %s '%.*s'", kind_name(s),
				       (int)s->len, s->name);
			continue;
		}
		if (def->func != s->func) {
			lk_err(L, s->mod, s->line, s->col,
			       "'%.*s' is declared a %s here but defined a %s at %s:%d:%d",
			       (int)s->len, s->name, kind_name(s), kind_name(def),
			       mod_name(L, def->mod), def->line, def->col);
			continue;
		}
		if (!s->func && s->size && def->size && s->size != def->size && def != common) {
			lk_err(L, s->mod, s->line, s->col,
			       ".extern '%.*s' of %llu bytes, but its definition at %s:%d:%d has %llu",
			       (int)s->len, s->name, (unsigned long long)s->size,
			       mod_name(L, def->mod), def->line, def->col,
			       (unsigned long long)def->size);
			continue;
		}
		if (s->func)
			s->strip = true; /* a prototype */
		else
			s->drop = true;
	}
	for (int j = i; j < L->nsyms; j++) /* no other definition (prototypes stay) */
		if (L->syms[j].link != LK_INTERNAL && L->syms[j].link != LK_EXTERN &&
		    L->syms[j].def && &L->syms[j] != def && same(&L->syms[j], first))
			L->syms[j].drop = true;
}

static int cmp_edit(const void *a, const void *b)
{
	const struct lk_edit *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Appends module @m's text with its edits to @out. */
static int emit(struct lk *L, int m, char **out, size_t *olen, size_t *ocap)
{
	struct lk_edit *ed = NULL;
	int ned = 0, edcap = 0, ret = 0;
	struct {
		size_t len; /* of the original name */
		char *text; /* the new one (malloc'd) */
	} *names = NULL;
	int nnames = 0;
	struct ptx_lexer lx;
	const char *src = L->src[m];
	size_t at = 0;
	char head[256];

#define PUSH_EDIT(S, E, T, TL)                                                               \
	do {                                                                                   \
		if (ned == edcap) {                                                            \
			struct lk_edit *p_ = realloc(ed, (size_t)(edcap ? 2 * edcap : 32) *   \
								 sizeof(*p_));                 \
			if (!p_) {                                                             \
				ret = -ENOMEM;                                                 \
				goto out;                                                      \
			}                                                                      \
			ed = p_;                                                               \
			edcap = edcap ? 2 * edcap : 32;                                        \
		}                                                                              \
		ed[ned++] = (struct lk_edit){ (S), (E), (T), (TL) };                           \
	} while (0)
#define APPEND(P, N)                                                                         \
	do {                                                                                   \
		size_t n_ = (N);                                                               \
		if (*olen + n_ + 1 > *ocap) {                                                  \
			size_t c_ = (*ocap + n_) * 2 + 256;                                    \
			char *p_ = realloc(*out, c_);                                          \
			if (!p_) {                                                             \
				ret = -ENOMEM;                                                 \
				goto out;                                                      \
			}                                                                      \
			*out = p_;                                                             \
			*ocap = c_;                                                            \
		}                                                                              \
		memcpy(*out + *olen, (P), n_);                                                 \
		*olen += n_;                                                                   \
		(*out)[*olen] = '\0';                                                          \
	} while (0)

	for (int i = 0; i < L->nsyms; i++) {
		const struct lk_sym *s = &L->syms[i];

		if (s->mod != m)
			continue;
		if (s->drop)
			PUSH_EDIT(s->start, s->end, NULL, 0);
		else if (s->strip)
			PUSH_EDIT(s->lstart, s->lend, NULL, 0);
	}
	/* internal names another module also has */
	for (int i = 0; i < L->nsyms; i++) {
		const struct lk_sym *s = &L->syms[i];
		bool clash = false;

		if (s->mod != m || s->link != LK_INTERNAL || s->drop)
			continue;
		for (int j = 0; j < L->nsyms && !clash; j++)
			clash = L->syms[j].mod != m && same(&L->syms[j], s);
		if (!clash)
			continue;
		{
			void *p = realloc(names, (size_t)(nnames + 1) * sizeof(*names));
			size_t tl = s->len + 32;

			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			names = p;
			names[nnames].len = s->len;
			names[nnames].text = malloc(tl);
			if (!names[nnames].text) {
				ret = -ENOMEM;
				goto out;
			}
			snprintf(names[nnames++].text, tl, "%.*s$vgpu$m%d", (int)s->len, s->name, m);
		}
	}
	if (nnames) {
		ptx_lex_init(&lx, src, L->len[m]);
		for (; lx.tok != PTX_T_EOF; ptx_lex_next(&lx)) {
			if (lx.tok != PTX_T_IDENT)
				continue;
			for (int k = 0; k < nnames; k++) {
				size_t nl = names[k].len;

				if (nl == lx.ident_len && !memcmp(names[k].text, lx.ident, nl)) {
					PUSH_EDIT((size_t)(lx.ident - src),
						  (size_t)(lx.ident - src) + nl, names[k].text,
						  strlen(names[k].text));
					break;
				}
			}
		}
	}
	if (ned)
		qsort(ed, (size_t)ned, sizeof(*ed), cmp_edit);
	for (int i = 0; i < ned; i++) {
		if (ed[i].start < at)
			continue; /* inside a dropped statement */
		APPEND(src + at, ed[i].start - at);
		if (ed[i].text)
			APPEND(ed[i].text, ed[i].tlen);
		at = ed[i].end;
	}
	APPEND(src + at, L->len[m] - at);
	/* after the module, so that the first one's lines stay its own */
	snprintf(head, sizeof(head), "\n// vgpu link: the end of module %d, %s\n", m,
		 mod_name(L, m));
	APPEND(head, strlen(head));
out:
	free(ed);
	for (int k = 0; k < nnames; k++)
		free(names[k].text);
	free(names);
	return ret;
#undef PUSH_EDIT
#undef APPEND
}

/*
 * Parses module @m alone, its errors naming it: its .extern variables
 * blanked out first (an unsized one, name[], is no variable the parser
 * takes alone), lines and columns kept.
 */
static int check_module(struct lk *L, int m)
{
	struct ptx_module pm;
	struct ptx_diag d = *L->dg;
	char *text = malloc(L->len[m] + 1);
	int ret;

	if (!text)
		return -ENOMEM;
	if (L->len[m])
		memcpy(text, L->src[m], L->len[m]);
	text[L->len[m]] = '\0';
	for (int i = 0; i < L->nsyms; i++) {
		const struct lk_sym *s = &L->syms[i];

		if (s->mod != m || s->func || s->link != LK_EXTERN)
			continue;
		for (size_t k = s->start; k < s->end; k++)
			if (text[k] != '\n')
				text[k] = ' ';
	}
	d.file = mod_name(L, m);
	ret = ptx_parse(text, L->len[m], &d, &pm);
	ptx_module_free(&pm);
	free(text);
	L->dg->used = d.used;
	L->dg->errors = d.errors;
	return ret == -ENOMEM ? ret : 0;
}

/*
 * Is module @m libcudadevrt's own PTX (nvcc's device link of a program
 * with device-side launch brings it: it defines __cudaCDP2LaunchDeviceV2
 * and the rest over the driver's cnp* calls)?  The link leaves it out:
 * the front end defines the entry points it implements (ptx_cdp.c), and
 * names the others unsupported.
 */
static bool libcudadevrt(const struct lk *L, int m)
{
	static const char name[] = "__cudaCDP2LaunchDeviceV2";

	for (int i = 0; i < L->nsyms; i++) {
		const struct lk_sym *s = &L->syms[i];

		if (s->mod == m && s->func && s->def && s->link != LK_EXTERN &&
		    s->len == sizeof(name) - 1 && !memcmp(s->name, name, s->len))
			return true;
	}
	return false;
}

static int link_modules(int n, const char *const *srcs, const size_t *lens,
			const char *const *names, unsigned int flags, char **out, size_t *out_len,
			char *log, size_t loglen, bool drop_devrt);

int ptx_link(int n, const char *const *srcs, const size_t *lens, const char *const *names,
	     unsigned int flags, char **out, size_t *out_len, char *log, size_t loglen)
{
	return link_modules(n, srcs, lens, names, flags, out, out_len, log, loglen, true);
}

static int link_modules(int n, const char *const *srcs, const size_t *lens,
			const char *const *names, unsigned int flags, char **out, size_t *out_len,
			char *log, size_t loglen, bool drop_devrt)
{
	struct ptx_diag dg = { .file = "<ptx>", .log = log, .loglen = loglen };
	struct lk L = { .n = n, .src = srcs, .len = lens, .names = names, .dg = &dg,
			.partial = flags & VGPU_PTX_LINK_PARTIAL };
	bool check_only = flags & VGPU_PTX_LINK_CHECK;
	size_t olen = 0, ocap = 0;
	int ret = 0;

	*out = NULL;
	if (out_len)
		*out_len = 0;
	if (log && loglen)
		log[0] = '\0';
	if (n < 1) {
		ptx_error(&dg, 1, 1, "nothing to link: no PTX module");
		return -EINVAL;
	}
	for (int m = 0; !ret && m < n; m++)
		ret = scan(&L, m);
	if (!ret && drop_devrt && n > 1) {
		int keep = 0;

		for (int m = 0; m < n; m++)
			keep += !libcudadevrt(&L, m);
		if (keep < n && keep > 0) {
			const char **ks = calloc((size_t)keep, sizeof(*ks));
			const char **kn = calloc((size_t)keep, sizeof(*kn));
			size_t *kl = calloc((size_t)keep, sizeof(*kl));

			ret = -ENOMEM;
			if (ks && kn && kl) {
				for (int m = 0, k = 0; m < n; m++) {
					if (libcudadevrt(&L, m))
						continue;
					ks[k] = srcs[m];
					kl[k] = lens[m];
					kn[k++] = names ? names[m] : NULL;
				}
				ret = link_modules(keep, ks, kl, names ? kn : NULL, flags, out,
						   out_len, log, loglen, false);
			}
			free(ks);
			free(kn);
			free(kl);
			free(L.syms);
			return ret;
		}
	}
	for (int m = 0; !ret && m < n; m++) /* each module's own errors first */
		ret = check_module(&L, m);
	if (!ret && dg.errors)
		ret = -EINVAL;
	if (check_only) {
		free(L.syms);
		return ret;
	}
	for (int i = 0; !ret && i < L.nsyms; i++) {
		bool seen = false;

		if (L.syms[i].link == LK_INTERNAL)
			continue;
		for (int j = 0; j < i && !seen; j++)
			seen = L.syms[j].link != LK_INTERNAL && same(&L.syms[j], &L.syms[i]);
		if (!seen)
			resolve(&L, i);
	}
	if (!ret && dg.errors)
		ret = -ENOENT;
	for (int m = 0; !ret && !L.partial && m < n; m++)
		ret = emit(&L, m, out, &olen, &ocap);
	free(L.syms);
	if (ret) {
		free(*out);
		*out = NULL;
		return ret;
	}
	if (out_len)
		*out_len = olen;
	return 0;
}

/*
 * Where line @line of the linked text @text came from: the module's name
 * (*@name, *@nlen bytes, pointing into @text's marker comment) and its
 * line there; false for a marker line or past the text.
 */
static bool locate(const char *text, size_t len, int line, const char **name, size_t *nlen,
		   int *mline)
{
	static const char marker[] = "// vgpu link: the end of module ";
	const char *p = text, *end = text + len;
	int start = 1, cur = 1;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;

		if ((size_t)(eol - p) > sizeof(marker) - 1 &&
		    !memcmp(p, marker, sizeof(marker) - 1)) {
			const char *comma = memchr(p, ',', (size_t)(eol - p));

			if (comma && line >= start && line < cur) {
				*name = comma + 2 <= eol ? comma + 2 : eol;
				*nlen = (size_t)(eol - *name);
				*mline = line - start + 1;
				return true;
			}
			start = cur + 1;
		}
		if (!nl)
			break;
		p = nl + 1;
		cur++;
	}
	return false;
}

int ptx_link_map_log(const char *text, size_t len, char *log, size_t loglen)
{
	static const char pfx[] = PTX_LINKED_NAME ":";
	size_t used, cap;
	char *buf, *o;
	const char *p;

	if (!log || !loglen)
		return 0;
	used = strnlen(log, loglen);
	cap = used * 2 + 1024;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	o = buf;
	p = log;
	while (*p && (size_t)(o - buf) + 600 < cap) {
		const char *nl = strchr(p, '\n');
		size_t ll = nl ? (size_t)(nl - p) + 1 : strlen(p);
		char *after;
		long line;
		const char *name;
		size_t nlen;
		int mline;

		if (!strncmp(p, pfx, sizeof(pfx) - 1) &&
		    (line = strtol(p + sizeof(pfx) - 1, &after, 10)) > 0 && *after == ':' &&
		    locate(text, len, (int)line, &name, &nlen, &mline) &&
		    (size_t)(o - buf) + nlen + ll + 32 < cap) {
			o += snprintf(o, cap - (size_t)(o - buf), "%.*s:%d", (int)nlen, name, mline);
			memcpy(o, after, ll - (size_t)(after - p));
			o += ll - (size_t)(after - p);
		} else if ((size_t)(o - buf) + ll < cap) {
			memcpy(o, p, ll);
			o += ll;
		}
		p += ll;
	}
	*o = '\0';
	snprintf(log, loglen, "%s", buf);
	free(buf);
	return 0;
}
