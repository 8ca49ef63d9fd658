/* SPDX-License-Identifier: MIT */
/*
 * The PTX compile cache (ptxcache.c, docs/libvgpu.md "The PTX compile
 * cache"): what the front end makes of a PTX module, kept on disk between
 * processes, keyed by the PTX bytes and the identity of the compiler.
 */
#ifndef VGPU_PTXCACHE_H
#define VGPU_PTXCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "ptx/ptx.h"
#include "vgpu_asm.h"

/* What the PTX front end makes of a module: all a program or libcuda needs. */
struct ptx_compiled {
	char *text;			/* the generated assembly, NUL-terminated */
	struct vgpu_object obj;		/* @text assembled */
	struct ptx_kernel_attrs *attrs; /* each .entry's directives and PTX name */
	int nattrs;
};

void ptx_compiled_fini(struct ptx_compiled *c);

/*
 * PTX -> *@out: from the cache when it holds the module, else compiled
 * (diagnostics in @log as ptx_to_vgs_attrs() writes them) and, when that
 * succeeds, stored.  0 or the compile's -errno; the cache's own failures
 * (an unwritable directory, a corrupt entry) are never errors: they only
 * cost a compile.  The caller finishes *@out with ptx_compiled_fini().
 */
int ptx_compile_cached(const char *src, size_t len, const char *file,
		       struct ptx_compiled *out, char *log, size_t loglen);

/* Counters of this process, for tests. */
struct ptxcache_stats {
	unsigned long hits;	/* modules read from the cache */
	unsigned long compiles; /* modules compiled (a miss, or the cache off) */
	unsigned long stores;	/* entries written */
	unsigned long rejected; /* entries found but refused (corrupt, foreign) */
	unsigned long evicted;	/* entries removed to keep under the size bound */
};

void ptxcache_get_stats(struct ptxcache_stats *out);

#endif
