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

/*
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags](n, func,
 * block, dynamic bytes, flags): from the kernel's table (libvgpu/vgpu.h,
 * VGPU_DEVRT_OCC; its index at byte 62 of its descriptor), the lesser of
 * the CTAs over all but shared memory (by warps) and over shared memory
 * (by the rounded need), as the host's calculator.  As on an H200: a
 * block of 0 or less writes 0 and is cudaErrorInvalidValue, one past the
 * device's largest writes 0 and succeeds.  Flags past
 * cudaOccupancyDisableCachingOverride (1): cudaErrorInvalidValue, as the
 * host says.
 */
#define OCC VGPU_DEVRT_OCC
_Static_assert(__builtin_offsetof(struct vgpu_devrt_occ, but_smem) == 16 &&
		       __builtin_offsetof(struct vgpu_devrt_occ, by_need) == 272 &&
		       VGPU_DEVRT_OCC_WARPS == 64 && VGPU_DEVRT_OCC_NEEDS == 8192 &&
		       sizeof(struct vgpu_devrt_occ) == 16656,
	       "occupancy_body's offsets");
static const char occupancy_body[] =
	"(.param .b64 $pn, .param .b64 $f, .param .b32 $bs, .param .b64 $dyn, .param .b32 $fl)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %e, %bs, %fl, %k, %n, %t, %w;\n"
	"	.reg .b64 %pn, %f, %dyn, %b, %x, %y;\n"
	"	ld.param.u64 %pn, [$pn];\n"
	"	ld.param.u64 %f, [$f];\n"
	"	ld.param.u32 %bs, [$bs];\n"
	"	ld.param.u64 %dyn, [$dyn];\n"
	"	ld.param.u32 %fl, [$fl];\n"
	"	mov.u32 %e, 1;\n"
	"	setp.eq.u64 %p1, %pn, 0;\n"
	"	@%p1 bra $bad;\n"
	"	setp.gt.u32 %p1, %fl, 1;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %e, 98;\n" /* cudaErrorInvalidDeviceFunction */
	"	setp.eq.u64 %p1, %f, 0;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %e, 1;\n"
	"	setp.lt.s32 %p1, %bs, 1;\n"
	"	@%p1 bra $zero;\n"
	"	mov.u32 %e, 0;\n"
	"	ld.global.u16 %k, [%f+62];\n"
	"	mul.wide.u32 %x, %k, 16656;\n"
	"	mov.u64 %b, " OCC ";\n"
	"	add.u64 %b, %b, %x;\n"
	"	ld.global.u32 %t, [%b+8];\n"
	"	setp.gt.u32 %p1, %bs, %t;\n"
	"	@%p1 bra $zero;\n"
	"	ld.global.u32 %t, [%b+12];\n"
	"	setp.eq.u32 %p1, %t, 0;\n"
	"	@%p1 bra $zero;\n"
	"	add.u32 %w, %bs, %t;\n"
	"	sub.u32 %w, %w, 1;\n"
	"	div.u32 %w, %w, %t;\n"
	"	setp.ge.u32 %p1, %w, 64;\n"
	"	@%p1 bra $zero;\n"
	"	mul.wide.u32 %x, %w, 4;\n"
	"	add.u64 %x, %x, %b;\n"
	"	ld.global.u32 %n, [%x+16];\n"
	"	ld.global.u32 %t, [%b];\n"
	"	cvt.u64.u32 %y, %t;\n"
	"	setp.gt.u64 %p1, %dyn, %y;\n"
	"	@%p1 bra $zero;\n"
	"	ld.global.u32 %t, [%b+4];\n"
	"	cvt.u64.u32 %y, %t;\n"
	"	add.u64 %y, %y, %dyn;\n"
	"	add.u64 %y, %y, 127;\n"
	"	shr.u64 %y, %y, 7;\n"
	"	setp.ge.u64 %p1, %y, 8192;\n"
	"	@%p1 bra $zero;\n"
	"	shl.b64 %y, %y, 1;\n"
	"	add.u64 %y, %y, %b;\n"
	"	ld.global.u16 %t, [%y+272];\n"
	"	min.u32 %n, %n, %t;\n"
	"	bra.uni $store;\n"
	"$zero:\n"
	"	mov.u32 %n, 0;\n"
	"$store:\n"
	"	st.u32 [%pn], %n;\n"
	"	setp.ne.u32 %p1, %e, 0;\n"
	"	@%p1 bra $bad;\n" RET_E;

static const struct fn {
	const char *name;
	const char *body;
	bool heap;    /* calls malloc/free */
	bool handles; /* uses HANDLES */
	bool info;    /* reads INFO */
	bool occ;     /* reads OCC */
} fns[] = {
	{ .name = "__cudaCDP2Malloc", .body = malloc_body, .heap = true },
	{ .name = "__cudaCDP2Free", .body = free_body, .heap = true },
	{ .name = "__cudaCDP2StreamCreateWithFlags", .body = stream_create_body, .handles = true },
	{ .name = "__cudaCDP2StreamDestroy", .body = stream_destroy_body },
	{ .name = "__cudaCDP2EventCreateWithFlags", .body = event_create_body, .handles = true },
	{ .name = "__cudaCDP2EventDestroy", .body = event_destroy_body },
	{ .name = "__cudaCDP2EventRecord", .body = record_body },
	{ .name = "__cudaCDP2EventRecord_ptsz", .body = record_body },
	{ .name = "__cudaCDP2StreamWaitEvent", .body = wait_body },
	{ .name = "__cudaCDP2StreamWaitEvent_ptsz", .body = wait_body },
	{ .name = "__cudaCDP2GetDevice", .body = get_device_body, .info = true },
	{ .name = "__cudaCDP2GetDeviceCount", .body = get_device_count_body, .info = true },
	{ .name = "__cudaCDP2DeviceGetAttribute", .body = get_attribute_body, .info = true },
	{ .name = "__cudaCDP2FuncGetAttributes", .body = func_attributes_body },
	{ .name = "__cudaCDP2OccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
	  .body = occupancy_body,
	  .occ = true },
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
	size_t len = 1, at = 0, nk = 0;
	bool handles = false, info = false, occ = false;
	char *t;

	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		nk += m->funcs[i].entry;
		if (d) {
			len += 64 + strlen(d->name) + strlen(d->body);
			handles |= d->handles;
			info |= d->info;
			occ |= d->occ;
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
	if (occ)
		at += (size_t)snprintf(t + at, len - at, ".global .align 16 .b8 " OCC "[%zu];\n",
				       (nk ? nk : 1) * sizeof(struct vgpu_devrt_occ));
	for (int i = 0; i < m->nfuncs; i++) {
		const struct fn *d = declared(m, i);

		if (d)
			at += (size_t)snprintf(t + at, len - at, ".func (.param .b32 $r) %s%s",
					       d->name, d->body);
	}
	return t;
}
