// SPDX-License-Identifier: MIT
/*
 * The device runtime's functions other than device-side launch (docs/ptx.md
 * "Device-side launch", docs/cuda.md): what nvcc 13 -rdc=true compiles
 * cudaMalloc, cudaFree, cudaStreamCreateWithFlags, cudaStreamDestroy,
 * cudaEventCreateWithFlags, cudaEventRecord, cudaStreamWaitEvent and
 * cudaEventDestroy in device code to (__cudaCDP2Malloc ...).  ptx_cdp.c
 * appends the text of those a module declares after the launch runtime.
 *
 * cudaMalloc and cudaFree are the device heap's malloc and free
 * (ptx_heap.c: the same heap, as CUDA has it), which a module declaring
 * either gets.  As on an H200 (tests/cuda/real-gpu/devrt-h200-2026-11-30):
 * 0 bytes is cudaErrorInvalidValue, an exhausted heap
 * cudaErrorMemoryAllocation, and the pointer is left as it was then.
 *
 * vGPU runs a grid's children one at a time, in launch order (the
 * NULL-stream and fire-and-forget ones, then the tail launches): a launch
 * into a stream created here runs as a NULL-stream launch, which keeps
 * every order CUDA promises (a stream's launches in order; a wait for an
 * event after the work recorded before it).  So a stream or an event is
 * only a handle: a tag in bits 28..31 (STREAM_TAG, EVENT_TAG: a stream's
 * low word, which a launch record keeps, is never 0, 3 or 4) over a
 * counter (the module's $vgpu$devrt$handles), as an H200's stream handles
 * are (0xc08a0004, 0xc08a0005).  A call given a value without the tag, the
 * NULL stream to destroy included, returns cudaErrorInvalidValue (an H200
 * does so for streams; its events are pointers it reads, and a bogus one
 * is an illegal address there); destroying a handle twice succeeds, as
 * on the H200.  Each error is also the thread's last error (cudaGetLastError).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

#define HANDLES "$vgpu$devrt$handles"
#define STREAM_TAG "12" /* 0xc0000000 >> 28 */
#define EVENT_TAG "13"	/* 0xd0000000 >> 28 */

/* the error in %e: the thread's last error too */
#define RET_E                                \
	"	st.param.b32 [$r], %e;\n"        \
	"	ret;\n"                          \
	"$bad:\n"                            \
	"	mov.u32 " PTX_CDP_ERR ", %e;\n" \
	"	st.param.b32 [$r], %e;\n"        \
	"	ret;\n"                          \
	"}\n"

/* %p1 = @reg is not a handle of @tag (cudaErrorInvalidValue in %e) */
#define CHECK(reg, tag)                          \
	"	shr.u64 %t, " reg ", 28;\n"              \
	"	setp.ne.u64 %p1, %t, " tag ";\n"          \
	"	@%p1 bra $bad;\n"
#define CHECK_STREAM_OR_NULL(reg)                \
	"	shr.u64 %t, " reg ", 28;\n"              \
	"	setp.ne.u64 %p1, %t, " STREAM_TAG ";\n"   \
	"	setp.ne.and.u64 %p1, " reg ", 0, %p1;\n"  \
	"	@%p1 bra $bad;\n"

static const char malloc_body[] =
	"(.param .b64 $pp, .param .b64 $n)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %e;\n"
	"	.reg .b64 %pp, %n, %q;\n"
	"	ld.param.u64 %pp, [$pp];\n"
	"	ld.param.u64 %n, [$n];\n"
	"	mov.u32 %e, 1;\n" /* cudaErrorInvalidValue: 0 bytes */
	"	setp.eq.u64 %p1, %n, 0;\n"
	"	@%p1 bra $bad;\n"
	"	{\n"
	"	.param .b64 $a;\n"
	"	st.param.b64 [$a], %n;\n"
	"	.param .b64 $v;\n"
	"	call.uni ($v), malloc, ($a);\n"
	"	ld.param.b64 %q, [$v];\n"
	"	}\n"
	"	mov.u32 %e, 2;\n" /* cudaErrorMemoryAllocation */
	"	setp.eq.u64 %p1, %q, 0;\n"
	"	@%p1 bra $bad;\n"
	"	st.u64 [%pp], %q;\n"
	"	mov.u32 %e, 0;\n" RET_E;

static const char free_body[] =
	"(.param .b64 $q)\n"
	"{\n"
	"	.reg .b32 %e;\n"
	"	.reg .b64 %q;\n"
	"	ld.param.u64 %q, [$q];\n"
	"	{\n"
	"	.param .b64 $a;\n"
	"	st.param.b64 [$a], %q;\n"
	"	call.uni free, ($a);\n"
	"	}\n"
	"	mov.u32 %e, 0;\n"
	"	st.param.b32 [$r], %e;\n"
	"	ret;\n"
	"}\n";

/* a new handle of tag @tag (0xc.. / 0xd..): flags outside @mask, or
 * without @need, are cudaErrorInvalidValue */
#define CREATE(mask, need, tagbits)                           \
	"(.param .b64 $ph, .param .b32 $fl)\n"                    \
	"{\n"                                                     \
	"	.reg .pred %p<2>;\n"                                    \
	"	.reg .b32 %e, %f, %n;\n"                                \
	"	.reg .b64 %ph, %h;\n"                                   \
	"	ld.param.u64 %ph, [$ph];\n"                             \
	"	ld.param.u32 %f, [$fl];\n"                              \
	"	mov.u32 %e, 1;\n"                                       \
	"	and.b32 %n, %f, " mask ";\n"                            \
	"	setp.ne.u32 %p1, %n, %f;\n"                             \
	"	and.b32 %n, %f, " need ";\n"                            \
	"	setp.ne.or.u32 %p1, %n, " need ", %p1;\n"               \
	"	@%p1 bra $bad;\n"                                       \
	"	atom.global.add.u32 %n, [" HANDLES "], 1;\n"            \
	"	and.b32 %n, %n, 268435455;\n"                           \
	"	or.b32 %n, %n, " tagbits ";\n"                          \
	"	cvt.u64.u32 %h, %n;\n"                                  \
	"	st.u64 [%ph], %h;\n"                                    \
	"	mov.u32 %e, 0;\n" RET_E

/* cudaStreamNonBlocking (1) is all a device stream takes; 0 works too */
static const char stream_create_body[] = CREATE("1", "0", "3221225472");
/* cudaEventDisableTiming (2) is required, cudaEventBlockingSync (1) taken */
static const char event_create_body[] = CREATE("3", "2", "3489660928");

#define DESTROY(tag)                      \
	"(.param .b64 $h)\n"                  \
	"{\n"                                 \
	"	.reg .pred %p<2>;\n"                \
	"	.reg .b32 %e;\n"                    \
	"	.reg .b64 %h, %t;\n"                \
	"	ld.param.u64 %h, [$h];\n"           \
	"	mov.u32 %e, 1;\n" CHECK("%h", tag) \
	"	mov.u32 %e, 0;\n" RET_E

static const char stream_destroy_body[] = DESTROY(STREAM_TAG);
static const char event_destroy_body[] = DESTROY(EVENT_TAG);

/* cudaEventRecord(event, stream): all work is in one order already */
static const char record_body[] =
	"(.param .b64 $ev, .param .b64 $st)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %e;\n"
	"	.reg .b64 %ev, %st, %t;\n"
	"	ld.param.u64 %ev, [$ev];\n"
	"	ld.param.u64 %st, [$st];\n"
	"	mov.u32 %e, 1;\n" CHECK("%ev", EVENT_TAG) CHECK_STREAM_OR_NULL("%st")
	"	mov.u32 %e, 0;\n" RET_E;

/* cudaStreamWaitEvent(stream, event, flags): flags 0 or cudaEventWaitExternal */
static const char wait_body[] =
	"(.param .b64 $st, .param .b64 $ev, .param .b32 $fl)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %e, %f;\n"
	"	.reg .b64 %ev, %st, %t;\n"
	"	ld.param.u64 %st, [$st];\n"
	"	ld.param.u64 %ev, [$ev];\n"
	"	ld.param.u32 %f, [$fl];\n"
	"	mov.u32 %e, 1;\n"
	"	setp.gt.u32 %p1, %f, 1;\n"
	"	@%p1 bra $bad;\n" CHECK("%ev", EVENT_TAG) CHECK_STREAM_OR_NULL("%st")
	"	mov.u32 %e, 0;\n" RET_E;

static const struct fn {
	const char *name;
	const char *body;
	bool heap;    /* calls malloc/free */
	bool handles; /* uses HANDLES */
} fns[] = {
	{ "__cudaCDP2Malloc", malloc_body, true, false },
	{ "__cudaCDP2Free", free_body, true, false },
	{ "__cudaCDP2StreamCreateWithFlags", stream_create_body, false, true },
	{ "__cudaCDP2StreamDestroy", stream_destroy_body, false, false },
	{ "__cudaCDP2EventCreateWithFlags", event_create_body, false, true },
	{ "__cudaCDP2EventDestroy", event_destroy_body, false, false },
	{ "__cudaCDP2EventRecord", record_body, false, false },
	{ "__cudaCDP2EventRecord_ptsz", record_body, false, false },
	{ "__cudaCDP2StreamWaitEvent", wait_body, false, false },
	{ "__cudaCDP2StreamWaitEvent_ptsz", wait_body, false, false },
};

#define NFNS (sizeof(fns) / sizeof(fns[0]))

bool ptx_devrt_implements(const char *name)
{
	for (size_t i = 0; i < NFNS; i++)
		if (!strcmp(name, fns[i].name))
			return true;
	return false;
}

/* The entry of fns[] that @m declares as @i (first), or NULL. */
static const struct fn *declared(const struct ptx_module *m, int i)
{
	const struct ptx_func *f = &m->funcs[i];

	if (f->entry || !f->decl)
		return NULL;
	for (int j = 0; j < i; j++)
		if (!m->funcs[j].entry && !strcmp(m->funcs[j].name, f->name))
			return NULL;
	for (size_t k = 0; k < NFNS; k++)
		if (!strcmp(f->name, fns[k].name))
			return &fns[k];
	return NULL;
}

bool ptx_devrt_wants_heap(const struct ptx_module *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		if (d && d->heap)
			return true;
	}
	return false;
}

/* The functions @m declares: malloc'd text ("" for none), or NULL. */
char *ptx_devrt_text(const struct ptx_module *m)
{
	size_t len = 1, at = 0;
	bool handles = false;
	char *t;

	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		if (d) {
			len += 64 + strlen(d->name) + strlen(d->body);
			handles |= d->handles;
		}
	}
	len += 64;
	t = malloc(len);
	if (!t)
		return NULL;
	t[0] = '\0';
	if (handles)
		at += (size_t)snprintf(t + at, len - at, ".global .align 4 .u32 " HANDLES ";\n");
	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		if (d)
			at += (size_t)snprintf(t + at, len - at, ".func (.param .b32 $r) %s%s",
					       d->name, d->body);
	}
	return t;
}
