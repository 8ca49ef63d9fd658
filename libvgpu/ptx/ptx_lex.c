// SPDX-License-Identifier: MIT
/*
 * PTX lexer.  Identifiers keep their dots and "::" (ld.global.u32,
 * %tid.x, mbarrier.arrive.shared::cta.b64 are one token each; the parser
 * splits the modifiers); comments are skipped; 0fXXXXXXXX and
 * 0dXXXXXXXXXXXXXXXX are floats given by their bits.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

void ptx_lex_init(struct ptx_lexer *lx, const char *src, size_t len)
{
	memset(lx, 0, sizeof(*lx));
	lx->p = src;
	lx->end = src + len;
	lx->line = 1;
	lx->col = 1;
	ptx_lex_next(lx);
}

static int peek(const struct ptx_lexer *lx, size_t k)
{
	return lx->p + k < lx->end ? (unsigned char)lx->p[k] : -1;
}

static void adv(struct ptx_lexer *lx)
{
	if (lx->p >= lx->end)
		return;
	if (*lx->p == '\n') {
		lx->line++;
		lx->col = 1;
	} else {
		lx->col++;
	}
	lx->p++;
}

static bool ident_start(int c)
{
	return c >= 0 && (isalpha(c) || c == '_' || c == '$' || c == '%' || c == '.');
}

static bool ident_char(int c)
{
	return c >= 0 && (isalnum(c) || c == '_' || c == '$' || c == '.');
}

static void skip_space(struct ptx_lexer *lx)
{
	for (;;) {
		int c = peek(lx, 0);

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f') {
			adv(lx);
		} else if (c == '/' && peek(lx, 1) == '/') {
			while (lx->p < lx->end && *lx->p != '\n')
				adv(lx);
		} else if (c == '/' && peek(lx, 1) == '*') {
			adv(lx);
			adv(lx);
			while (lx->p < lx->end && !(peek(lx, 0) == '*' && peek(lx, 1) == '/'))
				adv(lx);
			adv(lx);
			adv(lx);
		} else {
			return;
		}
	}
}

uint64_t ptx_name_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
	return h;
}

/*
 * An identifier of PTX_NAME_MAX characters or more (C++ names mangled
 * from templates: cub's kernels run to hundreds) becomes its first 77
 * characters, "_h" and 16 hex digits of a hash of the whole, so that
 * names which share a long prefix stay apart; the parser keeps an
 * entry's whole name (@ident) for the launcher.
 */
static void shorten_ident(struct ptx_lexer *lx)
{
	snprintf(lx->text + PTX_NAME_MAX - 19, 19, "_h%016" PRIx64,
		 ptx_name_hash(lx->ident, lx->ident_len));
}

static void put(struct ptx_lexer *lx, size_t *n, int c)
{
	if (*n + 1 < sizeof(lx->text))
		lx->text[(*n)++] = (char)c;
}

void ptx_lex_next(struct ptx_lexer *lx)
{
	size_t n = 0;
	int c;

	skip_space(lx);
	lx->tline = lx->line;
	lx->tcol = lx->col;
	lx->value = 0;
	lx->is_double = false;
	lx->overflow = false;
	lx->text[0] = '\0';
	c = peek(lx, 0);
	if (c < 0) {
		lx->tok = PTX_T_EOF;
		return;
	}
	if (c == '0' && (peek(lx, 1) == 'f' || peek(lx, 1) == 'F' ||
			 peek(lx, 1) == 'd' || peek(lx, 1) == 'D') &&
	    isxdigit(peek(lx, 2))) {
		lx->is_double = peek(lx, 1) == 'd' || peek(lx, 1) == 'D';
		put(lx, &n, c);
		adv(lx);
		put(lx, &n, peek(lx, 0));
		adv(lx);
		while (isxdigit(peek(lx, 0))) {
			put(lx, &n, peek(lx, 0));
			adv(lx);
		}
		lx->text[n] = '\0';
		lx->value = (int64_t)strtoull(lx->text + 2, NULL, 16);
		lx->tok = PTX_T_FLOAT;
		return;
	}
	if (isdigit(c)) {
		bool is_float = false;

		while (isalnum(peek(lx, 0)) || peek(lx, 0) == '.' ||
		       ((peek(lx, 0) == '-' || peek(lx, 0) == '+') &&
			(lx->text[n - 1] == 'e' || lx->text[n - 1] == 'E') &&
			!(lx->text[0] == '0' && (lx->text[1] == 'x' || lx->text[1] == 'X')))) {
			if (peek(lx, 0) == '.')
				is_float = true;
			put(lx, &n, peek(lx, 0));
			lx->text[n] = '\0';
			adv(lx);
		}
		lx->text[n] = '\0';
		if (is_float || (!strchr(lx->text, 'x') && !strchr(lx->text, 'X') &&
				 (strchr(lx->text, 'e') || strchr(lx->text, 'E')))) {
			double d = strtod(lx->text, NULL);

			memcpy(&lx->value, &d, sizeof(d));
			lx->is_double = true;
			lx->tok = PTX_T_FLOAT;
			return;
		}
		{
			size_t k = n;

			/* a U suffix (PTX allows 1U) */
			if (k && (lx->text[k - 1] == 'U' || lx->text[k - 1] == 'u'))
				lx->text[--k] = '\0';
			errno = 0;
			lx->value = (int64_t)strtoull(lx->text, NULL, 0);
			lx->overflow = errno == ERANGE;
			if (lx->overflow && (lx->text[1] == 'x' || lx->text[1] == 'X')) {
				/*
				 * ptxas 13.0 reads a hexadecimal literal wider than
				 * 64 bits into 64 bits, digit by digit, and calls it
				 * a constant overflow only when a digit comes with
				 * the value's top bit set: it keeps the low 64 bits
				 * of 0x10000000000000000 or 0x123456789abcdef0123,
				 * refuses 0x8000000000000000f and 17 f's (found
				 * with ptxas -arch=sm_90a on every 2^n and 2^n - 1
				 * from n = 64 to 128, in .b64 and .b128 operands)
				 */
				uint64_t v = 0;

				lx->overflow = false;
				for (const char *d = lx->text + 2; *d && !lx->overflow; d++) {
					lx->overflow = v >> 63;
					v = v << 4 | (uint64_t)(isdigit((unsigned char)*d) ?
							*d - '0' : (tolower((unsigned char)*d) - 'a' + 10));
				}
				lx->value = (int64_t)v;
			}
		}
		lx->tok = PTX_T_INT;
		return;
	}
	if (ident_start(c)) {
		lx->ident = lx->p;
		put(lx, &n, c);
		adv(lx);
		for (;;) {
			c = peek(lx, 0);
			if (ident_char(c)) {
				put(lx, &n, c);
				adv(lx);
			} else if (c == ':' && peek(lx, 1) == ':') {
				put(lx, &n, ':');
				put(lx, &n, ':');
				adv(lx);
				adv(lx);
			} else {
				break;
			}
		}
		lx->text[n] = '\0';
		lx->ident_len = (size_t)(lx->p - lx->ident);
		if (lx->ident_len >= PTX_NAME_MAX)
			shorten_ident(lx);
		lx->tok = PTX_T_IDENT;
		return;
	}
	if (c == '"') {
		adv(lx);
		while (lx->p < lx->end && peek(lx, 0) != '"' && peek(lx, 0) != '\n') {
			put(lx, &n, peek(lx, 0));
			adv(lx);
		}
		adv(lx);
		lx->text[n] = '\0';
		lx->tok = PTX_T_STRING;
		return;
	}
	put(lx, &n, c);
	lx->text[n] = '\0';
	adv(lx);
	lx->tok = PTX_T_PUNCT;
}
