// SPDX-License-Identifier: MIT
/*
 * The device runtime's functions other than device-side launch (docs/ptx.md
 * "Device-side launch", docs/cuda.md): what nvcc 13 -rdc=true compiles
 * cudaMalloc, cudaFree, cudaStreamCreateWithFlags, cudaStreamDestroy,
 * cudaEventCreateWithFlags, cudaEventRecord, cudaStreamWaitEvent,
 * cudaEventDestroy, cudaGetDevice, cudaGetDeviceCount,
 * cudaDeviceGetAttribute and cudaFuncGetAttributes in device code to
 * (__cudaCDP2Malloc ...).  ptx_cdp.c
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
#include "vgpu.h"

#define HANDLES "$vgpu$devrt$handles"
#define XSTR(x) STR(x)
#define STR(x) #x
#define INFO VGPU_DEVRT_INFO
_Static_assert(sizeof(struct vgpu_devrt_info) == 8 + 8 * VGPU_DEVRT_DEVICES * VGPU_DEVRT_ATTRS,
	       "the device-info layout the queries read");
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

/*
 * The queries (libvgpu/vgpu.h, VGPU_DEVRT_INFO): the host's answers,
 * which libcuda put in the module's variables.  As on an H200
 * (tests/cuda/real-gpu/devrt-query-h200-2026-11-30): a device past the
 * count is cudaErrorInvalidDevice, an attribute past CUDA 13's last
 * cudaErrorInvalidValue, attribute 0 reads 0; the value is left as it
 * was on an error.  A NULL pointer is cudaErrorInvalidValue (vGPU's).
 */
#define ONE_WORD(off)                            \
	"(.param .b64 $pv)\n"                        \
	"{\n"                                        \
	"	.reg .pred %p<2>;\n"                      \
	"	.reg .b32 %e, %v;\n"                      \
	"	.reg .b64 %pv;\n"                         \
	"	ld.param.u64 %pv, [$pv];\n"               \
	"	mov.u32 %e, 1;\n"                         \
	"	setp.eq.u64 %p1, %pv, 0;\n"               \
	"	@%p1 bra $bad;\n"                         \
	"	ld.global.u32 %v, [" INFO off "];\n"      \
	"	st.u32 [%pv], %v;\n"                      \
	"	mov.u32 %e, 0;\n" RET_E

static const char get_device_body[] = ONE_WORD("");
static const char get_device_count_body[] = ONE_WORD("+4");

/* cudaDeviceGetAttribute(value, attr, device) */
static const char get_attribute_body[] =
	"(.param .b64 $pv, .param .b32 $a, .param .b32 $d)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %e, %a, %d, %n, %v, %i;\n"
	"	.reg .b64 %pv, %w, %b;\n"
	"	ld.param.u64 %pv, [$pv];\n"
	"	ld.param.u32 %a, [$a];\n"
	"	ld.param.u32 %d, [$d];\n"
	"	mov.u32 %e, 1;\n"
	"	setp.eq.u64 %p1, %pv, 0;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %e, 101;\n" /* cudaErrorInvalidDevice */
	"	ld.global.u32 %n, [" INFO "+4];\n"
	"	min.u32 %n, %n, " XSTR(VGPU_DEVRT_DEVICES) ";\n"
	"	setp.ge.u32 %p1, %d, %n;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %e, 1;\n"
	"	setp.ge.u32 %p1, %a, " XSTR(VGPU_DEVRT_ATTRS) ";\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %v, 0;\n"
	"	setp.eq.u32 %p1, %a, 0;\n"
	"	@%p1 bra $store;\n"
	"	mad.lo.u32 %i, %d, " XSTR(VGPU_DEVRT_ATTRS) ", %a;\n"
	"	mul.wide.u32 %w, %i, 8;\n"
	"	mov.u64 %b, " INFO ";\n"
	"	add.u64 %w, %w, %b;\n"
	"	ld.global.u32 %e, [%w+8];\n"
	"	setp.ne.u32 %p1, %e, 0;\n"
	"	@%p1 bra $bad;\n"
	"	ld.global.u32 %v, [%w+12];\n"
	"$store:\n"
	"	st.u32 [%pv], %v;\n"
	"	mov.u32 %e, 0;\n" RET_E;

/* cudaFuncGetAttributes(attr, func): func is a kernel descriptor (ptx_cdp.c) */
static const char func_attributes_body[] =
	"(.param .b64 $fa, .param .b64 $f)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %e;\n"
	"	.reg .b64 %fa, %f, %x;\n"
	"	ld.param.u64 %fa, [$fa];\n"
	"	ld.param.u64 %f, [$f];\n"
	"	mov.u32 %e, 1;\n"
	"	setp.eq.u64 %p1, %fa, 0;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %e, 98;\n" /* cudaErrorInvalidDeviceFunction */
	"	setp.eq.u64 %p1, %f, 0;\n"
	"	@%p1 bra $bad;\n"
	"	ld.global.u64 %x, [%f+64];\n"
	"	st.u64 [%fa], %x;\n"
	"	ld.global.u64 %x, [%f+72];\n"
	"	st.u64 [%fa+8], %x;\n"
	"	ld.global.u64 %x, [%f+80];\n"
	"	st.u64 [%fa+16], %x;\n"
	"	ld.global.u64 %x, [%f+88];\n"
	"	st.u64 [%fa+24], %x;\n"
	"	ld.global.u64 %x, [%f+96];\n"
	"	st.u64 [%fa+32], %x;\n"
	"	mov.u32 %e, 0;\n" RET_E;
_Static_assert(VGPU_DEVRT_FUNCATTR_OFF == 64 && VGPU_DEVRT_FUNCATTR_BYTES == 40,
	       "func_attributes_body's offsets");

static const struct fn {
	const char *name;
	const char *body;
	bool heap;    /* calls malloc/free */
	bool handles; /* uses HANDLES */
	bool info;    /* reads INFO */
} fns[] = {
	{ "__cudaCDP2Malloc", malloc_body, true, false, false },
	{ "__cudaCDP2Free", free_body, true, false, false },
	{ "__cudaCDP2StreamCreateWithFlags", stream_create_body, false, true, false },
	{ "__cudaCDP2StreamDestroy", stream_destroy_body, false, false, false },
	{ "__cudaCDP2EventCreateWithFlags", event_create_body, false, true, false },
	{ "__cudaCDP2EventDestroy", event_destroy_body, false, false, false },
	{ "__cudaCDP2EventRecord", record_body, false, false, false },
	{ "__cudaCDP2EventRecord_ptsz", record_body, false, false, false },
	{ "__cudaCDP2StreamWaitEvent", wait_body, false, false, false },
	{ "__cudaCDP2StreamWaitEvent_ptsz", wait_body, false, false, false },
	{ "__cudaCDP2GetDevice", get_device_body, false, false, true },
	{ "__cudaCDP2GetDeviceCount", get_device_count_body, false, false, true },
	{ "__cudaCDP2DeviceGetAttribute", get_attribute_body, false, false, true },
	{ "__cudaCDP2FuncGetAttributes", func_attributes_body, false, false, false },
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
	bool handles = false, info = false;
	char *t;

	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		if (d) {
			len += 64 + strlen(d->name) + strlen(d->body);
			handles |= d->handles;
			info |= d->info;
		}
	}
	len += 128;
	t = malloc(len);
	if (!t)
		return NULL;
	t[0] = '\0';
	if (handles)
		at += (size_t)snprintf(t + at, len - at, ".global .align 4 .u32 " HANDLES ";\n");
	if (info)
		at += (size_t)snprintf(t + at, len - at, ".global .align 8 .b8 " INFO "[%zu];\n",
				       sizeof(struct vgpu_devrt_info));
	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		if (d)
			at += (size_t)snprintf(t + at, len - at, ".func (.param .b32 $r) %s%s",
					       d->name, d->body);
	}
	return t;
}
