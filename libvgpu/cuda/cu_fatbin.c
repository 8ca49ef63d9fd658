// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: the PTX entry of a fatbin.
 *
 * The layout relied on (little-endian; what nvcc 13.0 writes, checked on
 * the build machine; docs/cuda.md "Fatbins"):
 *
 *   wrapper (nvcc's __fatBinC_Wrapper_t, optional): u32 magic 0x466243b1,
 *     u32 version, u64 pointer to the fatbin, u64 (unused here)
 *   header: u32 magic 0xBA55ED50, u16 version, u16 header size (16),
 *     u64 bytes of entries after the header
 *   entry:  +0 u16 kind (1 PTX, 2 ELF cubin), +4 u32 entry header size,
 *     +8 u64 payload bytes (padded), +0x10 u32 compressed bytes,
 *     +0x1c u32 architecture (90 for compute_90a), +0x28 u64 flags
 *     (0x8000: the payload is compressed; nvcc 13 compresses with zstd
 *     by default, older toolkits with LZ4 (0x2000)), +0x38 u64
 *     uncompressed bytes; the payload follows the entry header.
 *
 * A zstd payload is a standard frame (magic 28 b5 2f fd): libzstd
 * decompresses it.  The PTX chosen is the entry for architecture 90, else
 * the newest PTX below it, else any.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "cu_fatbin.h"
#include "cuda_priv.h"

#define FATBIN_MAGIC 0xBA55ED50u
#define WRAPPER_MAGIC 0x466243b1u
#define KIND_PTX 1
#define KIND_ELF 2
#define FLAG_COMPRESSED 0x8000ull
#define FLAG_LZ4 0x2000ull

static const char gencode_hint[] =
	"rebuild with nvcc -gencode arch=compute_90a,code=[sm_90a,compute_90a] "
	"(code=sm_90a alone embeds only SASS, which vGPU cannot run)";

static uint64_t rd(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static CUresult decompress(const uint8_t *payload, uint64_t bytes, uint64_t flags,
			   uint64_t csize, uint64_t usize, char **out, size_t *len)
{
	unsigned long long want;
	size_t got;
	char *buf;

	if (!(flags & FLAG_COMPRESSED) && bytes < 4) {
		*out = calloc(1, 1);
		*len = 0;
		return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (bytes < 4 || memcmp(payload, "\x28\xb5\x2f\xfd", 4)) {
		if (flags & (FLAG_COMPRESSED | FLAG_LZ4)) {
			cuv_warn("the fatbin's PTX is compressed in a format other than zstd "
				 "(an older toolkit's LZ4?): rebuild with nvcc --no-compress");
			return CUDA_ERROR_INVALID_IMAGE;
		}
		/* plain text, NUL-padded */
		got = strnlen((const char *)payload, bytes);
		buf = malloc(got + 1);
		if (!buf)
			return CUDA_ERROR_OUT_OF_MEMORY;
		memcpy(buf, payload, got);
		buf[got] = '\0';
		*out = buf;
		*len = got;
		return CUDA_SUCCESS;
	}
	if (!csize || csize > bytes)
		csize = bytes;
	want = ZSTD_getFrameContentSize(payload, csize);
	if (want == ZSTD_CONTENTSIZE_ERROR)
		return CUDA_ERROR_INVALID_IMAGE;
	if (want == ZSTD_CONTENTSIZE_UNKNOWN)
		want = usize;
	if (!want || want > (256ull << 20))
		return CUDA_ERROR_INVALID_IMAGE;
	buf = malloc(want + 1);
	if (!buf)
		return CUDA_ERROR_OUT_OF_MEMORY;
	got = ZSTD_decompress(buf, want, payload, ZSTD_findFrameCompressedSize(payload, csize));
	if (ZSTD_isError(got)) {
		cuv_warn("the fatbin's PTX does not decompress: %s", ZSTD_getErrorName(got));
		free(buf);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	buf[got] = '\0';
	*out = buf;
	*len = strnlen(buf, got);
	return CUDA_SUCCESS;
}

/*
 * Does @p start with the 4-byte @magic?  Byte by byte, stopping at the
 * first difference: a short NUL-terminated PTX string is never read past
 * its end.
 */
static bool has_magic(const uint8_t *p, uint32_t magic)
{
	for (unsigned int i = 0; i < 4; i++)
		if (p[i] != (uint8_t)(magic >> (8 * i)))
			return false;
	return true;
}

#define ELF_MAGIC 0x464c457fu /* "\x7fELF" */

CUresult cuv_fatbin_ptx(const void *image, size_t size, char **ptx, size_t *len)
{
	const uint8_t *p = image, *best = NULL;
	uint64_t total, off, best_arch = 0;
	unsigned int hsize, nelf = 0;

	if (size && size < 16)
		return CUDA_ERROR_NOT_FOUND;
	if (has_magic(p, WRAPPER_MAGIC)) {
		p = (const uint8_t *)(uintptr_t)rd(p + 8, 8);
		size = 0;
		if (!p)
			return CUDA_ERROR_INVALID_IMAGE;
	}
	if (has_magic(p, ELF_MAGIC)) {
		/* a cubin: a 64-bit ELF of machine EM_CUDA (190), else not an image */
		if (p[4] != 2 || rd(p + 18, 2) != 190) {
			cuv_warn("the image starts as an ELF file but is not a cubin (64-bit, EM_CUDA)");
			return CUDA_ERROR_INVALID_IMAGE;
		}
		cuv_warn("the image is a cubin (machine code for NVIDIA GPUs), with no PTX: %s",
			 gencode_hint);
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	}
	if (!has_magic(p, FATBIN_MAGIC))
		return CUDA_ERROR_NOT_FOUND;
	hsize = (unsigned int)rd(p + 6, 2);
	total = rd(p + 8, 8);
	if (hsize < 16 || (size && hsize + total > size))
		return CUDA_ERROR_INVALID_IMAGE;
	for (off = hsize; off + 0x40 <= hsize + total;) {
		const uint8_t *e = p + off;
		unsigned int kind = (unsigned int)rd(e, 2), ehsize = (unsigned int)rd(e + 4, 4);
		uint64_t bytes = rd(e + 8, 8), arch = rd(e + 0x1c, 4);

		if (ehsize < 0x40 || bytes > total || off + ehsize + bytes > hsize + total)
			return CUDA_ERROR_INVALID_IMAGE;
		if (kind == KIND_PTX &&
		    (!best || (arch <= 90 && (best_arch > 90 || arch > best_arch)))) {
			best = e;
			best_arch = arch;
		} else if (kind == KIND_ELF) {
			nelf++;
		}
		off += ehsize + bytes;
	}
	if (!best) {
		cuv_warn("the fatbin holds %u cubin(s) and no PTX: %s", nelf, gencode_hint);
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	}
	return decompress(best + rd(best + 4, 4), rd(best + 8, 8), rd(best + 0x28, 8),
			  rd(best + 0x10, 4), rd(best + 0x38, 8), ptx, len);
}

/*
 * NVIDIA's rule (tests/cuda/real-gpu/probe.h200.log): text is PTX when its
 * first directive, after white space and comments, is .version; anything
 * else that is no fatbin or ELF is CUDA_ERROR_INVALID_IMAGE (PTX that then
 * fails to compile is CUDA_ERROR_INVALID_PTX).  A .version above CUDA
 * 13.0's PTX ISA (9.0) is CUDA_ERROR_UNSUPPORTED_PTX_VERSION.
 */
static CUresult ptx_version_ok(const char *t, size_t n)
{
	const char *end = t + n;
	unsigned int major = 0, minor = 0;

	while (t < end) {
		if (*t == ' ' || *t == '\t' || *t == '\n' || *t == '\r') {
			t++;
		} else if (end - t >= 2 && t[0] == '/' && t[1] == '/') {
			while (t < end && *t != '\n')
				t++;
		} else if (end - t >= 2 && t[0] == '/' && t[1] == '*') {
			const char *c = t + 2;

			while (c + 1 < end && !(c[0] == '*' && c[1] == '/'))
				c++;
			if (c + 1 >= end)
				break;
			t = c + 2;
		} else {
			break;
		}
	}
	if (end - t < 9 || strncmp(t, ".version", 8) || (t[8] != ' ' && t[8] != '\t')) {
		cuv_warn("the image is not PTX (text whose first directive is .version), "
			 "a fatbin or a cubin");
		return CUDA_ERROR_INVALID_IMAGE;
	}
	if (sscanf(t + 8, "%u.%u", &major, &minor) == 2 && major * 10 + minor > 90) {
		cuv_warn("PTX .version %u.%u: CUDA 13.0 (and vGPU) know PTX ISA 9.0 and older",
			 major, minor);
		return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
	}
	return CUDA_SUCCESS;
}

CUresult cuv_image_ptx(const void *image, size_t size, char **ptx, size_t *len)
{
	CUresult r = cuv_fatbin_ptx(image, size, ptx, len);
	size_t n;

	if (r != CUDA_ERROR_NOT_FOUND)
		return r;
	n = strnlen(image, size ? size : SIZE_MAX); /* not a fatbin: PTX text? */
	r = ptx_version_ok(image, n);
	if (r)
		return r;
	*ptx = malloc(n + 1);
	if (!*ptx)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memcpy(*ptx, image, n);
	(*ptx)[n] = '\0';
	*len = n;
	return CUDA_SUCCESS;
}
