// SPDX-License-Identifier: MIT
/*
 * Device malloc and free (docs/ptx.md, "Device heap"): a module that
 * declares either gets the allocator below, PTX text parsed after its own
 * (so its calls of them are ordinary calls of defined functions, inlined
 * like any other), and a module variable PTX_HEAP_VAR that holds the
 * device heap's address: print_globals gives it a .heapaddr relocation,
 * which the launch writes, allocating the heap (libvgpu/heap.c).
 *
 * The heap's first PTX_HEAP_HEADER bytes (libvgpu/heap.c writes them):
 * the bump offset (u64: where fresh blocks start), its limit (u64: the
 * heap's size), then at 64 + 8c the head of size class c's free list,
 * 64 bits: a tag (high half, counting the pushes and pops: ABA-safe CAS)
 * and the offset of the first free block (low half, 0: empty).  A block
 * is a 16-byte header (its class, u32, then in a free block the offset
 * of the next one, u32) and 16 << c bytes, so blocks are 16-aligned.
 * Lock-free: each CAS loop ends once any lane's CAS succeeds, whatever
 * the schedule.  Offsets are 32 bits: a heap is at most 4 GiB.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

static const char allocator[] =
	"\n.global .align 8 .u64 " PTX_HEAP_VAR ";\n"
	".func (.param .b64 $r) malloc(.param .b64 $n)\n"
	"{\n"
	"	.reg .pred %p<3>;\n"
	"	.reg .b32 %c, %z, %x;\n"
	"	.reg .b64 %n, %h, %a, %hd, %o, %nw, %t, %sz, %lim, %r;\n"
	"	ld.param.u64 %n, [$n];\n"
	"	ld.global.u64 %h, [" PTX_HEAP_VAR "];\n"
	"	mov.u32 %c, 0;\n"
	"	setp.le.u64 %p1, %n, 16;\n"
	"	@%p1 bra $cls;\n"
	"	add.u64 %t, %n, -1;\n"
	"	clz.b64 %z, %t;\n"
	"	sub.u32 %c, 60, %z;\n"
	"$cls:\n"
	"	setp.gt.u32 %p1, %c, 27;\n"
	"	@%p1 bra $null;\n"
	"	mul.wide.u32 %t, %c, 8;\n"
	"	add.u64 %a, %h, %t;\n"
	"	add.u64 %a, %a, 64;\n"
	"$pop:\n"
	"	ld.volatile.global.u64 %hd, [%a];\n"
	"	and.b64 %o, %hd, 4294967295;\n"
	"	setp.eq.u64 %p1, %o, 0;\n"
	"	@%p1 bra $bump;\n"
	"	add.u64 %t, %h, %o;\n"
	"	ld.volatile.global.u32 %x, [%t+8];\n"
	"	cvt.u64.u32 %nw, %x;\n"
	"	shr.u64 %t, %hd, 32;\n"
	"	add.u64 %t, %t, 1;\n"
	"	shl.b64 %t, %t, 32;\n"
	"	or.b64 %nw, %nw, %t;\n"
	"	atom.global.cas.b64 %t, [%a], %hd, %nw;\n"
	"	setp.ne.u64 %p1, %t, %hd;\n"
	"	@%p1 bra $pop;\n"
	"	bra.uni $found;\n"
	"$bump:\n"
	"	mov.u64 %sz, 16;\n"
	"	shl.b64 %sz, %sz, %c;\n"
	"	add.u64 %sz, %sz, 16;\n"
	"	ld.global.u64 %lim, [%h+8];\n"
	"$more:\n"
	"	ld.volatile.global.u64 %o, [%h];\n"
	"	add.u64 %t, %o, %sz;\n"
	"	setp.gt.u64 %p1, %t, %lim;\n"
	"	@%p1 bra $null;\n"
	"	atom.global.cas.b64 %nw, [%h], %o, %t;\n"
	"	setp.ne.u64 %p1, %nw, %o;\n"
	"	@%p1 bra $more;\n"
	"	add.u64 %t, %h, %o;\n"
	"	st.global.u32 [%t], %c;\n"
	"$found:\n"
	"	add.u64 %r, %h, %o;\n"
	"	add.u64 %r, %r, 16;\n"
	"	st.param.b64 [$r], %r;\n"
	"	ret;\n"
	"$null:\n"
	"	mov.u64 %r, 0;\n"
	"	st.param.b64 [$r], %r;\n"
	"	ret;\n"
	"}\n"
	".func free(.param .b64 $p)\n"
	"{\n"
	"	.reg .pred %p<3>;\n"
	"	.reg .b32 %c, %x;\n"
	"	.reg .b64 %q, %h, %a, %hd, %o, %nw, %t, %b;\n"
	"	ld.param.u64 %q, [$p];\n"
	"	setp.eq.u64 %p1, %q, 0;\n"
	"	@%p1 bra $done;\n"
	"	ld.global.u64 %h, [" PTX_HEAP_VAR "];\n"
	"	add.u64 %b, %q, -16;\n"
	"	sub.u64 %o, %b, %h;\n"
	"	ld.global.u32 %c, [%b];\n"
	"	mul.wide.u32 %t, %c, 8;\n"
	"	add.u64 %a, %h, %t;\n"
	"	add.u64 %a, %a, 64;\n"
	"$push:\n"
	"	ld.volatile.global.u64 %hd, [%a];\n"
	"	cvt.u32.u64 %x, %hd;\n"
	"	st.volatile.global.u32 [%b+8], %x;\n"
	"	membar.gl;\n"
	"	shr.u64 %t, %hd, 32;\n"
	"	add.u64 %t, %t, 1;\n"
	"	shl.b64 %t, %t, 32;\n"
	"	or.b64 %nw, %o, %t;\n"
	"	atom.global.cas.b64 %t, [%a], %hd, %nw;\n"
	"	setp.ne.u64 %p1, %t, %hd;\n"
	"	@%p1 bra $push;\n"
	"$done:\n"
	"	ret;\n"
	"}\n";

/*
 * Declares malloc or free without defining either (the allocator's names),
 * or defines neither and declares the device runtime's cudaMalloc or
 * cudaFree (ptx_devrt.c), which call them.
 */
static bool wants_heap(const struct ptx_module *m)
{
	bool decl = ptx_cdp_wanted(m) && ptx_devrt_wants_heap(m);

	for (int i = 0; i < m->nfuncs; i++) {
		const struct ptx_func *f = &m->funcs[i];

		if (f->entry || (strcmp(f->name, "malloc") && strcmp(f->name, "free")))
			continue;
		if (!f->decl)
			return false;
		decl = true;
	}
	return decl;
}

/*
 * ptx_parse(), with the allocator after @src when the module wants it:
 * then *@text gets the text parsed, which @m points into (the caller
 * frees it after ptx_module_free()); else NULL.
 */
int ptx_parse_heap(const char *src, size_t len, struct ptx_diag *dg, struct ptx_module *m,
		   char **text)
{
	struct ptx_diag keep = *dg;
	int ret = ptx_parse(src, len, dg, m);
	bool heap, cdp;
	char *rt = NULL;
	size_t rlen, alen;

	*text = NULL;
	if (ret)
		return ret;
	heap = wants_heap(m);
	cdp = ptx_cdp_wanted(m); /* ptx_cdp.c: device-side launch */
	if (!heap && !cdp)
		return ret;
	if (cdp) {
		rt = ptx_cdp_text(m);
		if (!rt) {
			ptx_module_free(m);
			return -ENOMEM;
		}
	}
	ptx_module_free(m);
	*dg = keep;
	alen = heap ? sizeof(allocator) - 1 : 0;
	rlen = rt ? strlen(rt) : 0;
	*text = malloc(len + alen + rlen + 1);
	if (!*text) {
		free(rt);
		return -ENOMEM;
	}
	memcpy(*text, src, len);
	memcpy(*text + len, allocator, alen);
	if (rt)
		memcpy(*text + len + alen, rt, rlen);
	(*text)[len + alen + rlen] = '\0';
	free(rt);
	ret = ptx_parse(*text, len + alen + rlen, dg, m);
	if (!ret && cdp)
		ret = ptx_cdp_rewrite(m);
	return ret;
}
