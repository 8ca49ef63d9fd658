// SPDX-License-Identifier: MIT
/*
 * SHA-256 (FIPS 180-4 §6.2): the PTX compile cache (ptxcache.c) hashes a
 * module's PTX for its key and the stored object for its checksum at
 * every load, megabytes for a library like cub's.  Written out plainly
 * (about 60 host instructions a byte), and with the x86 SHA extensions
 * where the processor has them (Intel SDM vol. 2, SHA256RNDS2,
 * SHA256MSG1/2; about 4 a byte), chosen once at run time.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "sha256.h"

static const uint32_t k256[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static void block(struct vgpu_sha256 *s, const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
	e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) +
			      k256[i] + w[i];
		uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

		h = g, g = f, f = e, e = d + t1;
		d = c, c = b, b = a, a = t1 + t2;
	}
	s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
	s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

#if defined(__x86_64__)
/*
 * @n blocks with SHA256RNDS2: the state kept as ABEF and CDGH, each
 * instruction two rounds, the message schedule four words at a time
 * (SHA256MSG1, the W[t-7] term, SHA256MSG2).
 */
__attribute__((target("sha,sse4.1,ssse3"))) static void
blocks_shani(uint32_t h[8], const uint8_t *p, size_t n)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bll, 0x0405060700010203ll);
	__m128i s0, s1, t;

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xb1); /* CDAB */
	s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1b); /* EFGH */
	s0 = _mm_alignr_epi8(t, s1, 8);	     /* ABEF */
	s1 = _mm_blend_epi16(s1, t, 0xf0);   /* CDGH */
	for (; n; n--, p += 64) {
		__m128i abef = s0, cdgh = s1, w[4];

		for (int i = 0; i < 16; i++) {
			__m128i m, k;

			if (i < 4) {
				m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)),
						     bswap);
			} else {
				m = _mm_sha256msg1_epu32(w[(i - 4) & 3], w[(i - 3) & 3]);
				m = _mm_add_epi32(m, _mm_alignr_epi8(w[(i - 1) & 3],
								     w[(i - 2) & 3], 4));
				m = _mm_sha256msg2_epu32(m, w[(i - 1) & 3]);
			}
			w[i & 3] = m;
			k = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&k256[4 * i]));
			s1 = _mm_sha256rnds2_epu32(s1, s0, k);
			s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(k, 0x0e));
		}
		s0 = _mm_add_epi32(s0, abef);
		s1 = _mm_add_epi32(s1, cdgh);
	}
	t = _mm_shuffle_epi32(s0, 0x1b);     /* FEBA */
	s1 = _mm_shuffle_epi32(s1, 0xb1);    /* DCHG */
	s0 = _mm_blend_epi16(t, s1, 0xf0);   /* DCBA */
	s1 = _mm_alignr_epi8(s1, t, 8);	     /* HGFE */
	_mm_storeu_si128((__m128i *)&h[0], s0);
	_mm_storeu_si128((__m128i *)&h[4], s1);
}

static bool have_shani(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#endif

/* 0: not yet chosen, 1: plain C, 2: SHA extensions */
static atomic_int impl;

void vgpu_sha256_portable(bool on)
{
	atomic_store(&impl, on ? 1 : 0);
}

static void blocks(struct vgpu_sha256 *s, const uint8_t *p, size_t n)
{
	int i = atomic_load_explicit(&impl, memory_order_relaxed);

	if (!i) {
#if defined(__x86_64__)
		i = have_shani() ? 2 : 1;
#else
		i = 1;
#endif
		atomic_store_explicit(&impl, i, memory_order_relaxed);
	}
#if defined(__x86_64__)
	if (i == 2) {
		blocks_shani(s->h, p, n);
		return;
	}
#endif
	for (; n; n--, p += 64)
		block(s, p);
}

void vgpu_sha256_init(struct vgpu_sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
					0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(s->h, iv, sizeof(iv));
	s->total = 0;
	s->used = 0;
}

void vgpu_sha256_update(struct vgpu_sha256 *s, const void *data, size_t len)
{
	const uint8_t *p = data;

	s->total += len;
	if (s->used) {
		size_t n = 64 - s->used < len ? 64 - s->used : len;

		memcpy(s->buf + s->used, p, n);
		s->used += n;
		p += n;
		len -= n;
		if (s->used < 64)
			return;
		blocks(s, s->buf, 1);
		s->used = 0;
	}
	blocks(s, p, len / 64);
	p += len / 64 * 64;
	len %= 64;
	memcpy(s->buf, p, len);
	s->used = len;
}

void vgpu_sha256_final(struct vgpu_sha256 *s, uint8_t out[VGPU_SHA256_BYTES])
{
	uint64_t bits = s->total * 8;

	s->buf[s->used++] = 0x80;
	if (s->used > 56) {
		memset(s->buf + s->used, 0, 64 - s->used);
		blocks(s, s->buf, 1);
		s->used = 0;
	}
	memset(s->buf + s->used, 0, 56 - s->used);
	for (int i = 0; i < 8; i++)
		s->buf[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	blocks(s, s->buf, 1);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(s->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)s->h[i];
	}
}

void vgpu_sha256(const void *data, size_t len, uint8_t out[VGPU_SHA256_BYTES])
{
	struct vgpu_sha256 s;

	vgpu_sha256_init(&s);
	vgpu_sha256_update(&s, data, len);
	vgpu_sha256_final(&s, out);
}
