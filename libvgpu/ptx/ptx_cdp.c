// SPDX-License-Identifier: MIT
/*
 * Device-side launch (CUDA dynamic parallelism, docs/ptx.md "Device-side
 * launch"): a module that declares libcudadevrt's CDP2 entry points
 * (nvcc -rdc=true: __cudaCDP2GetParameterBufferV2, __cudaCDP2LaunchDeviceV2,
 * __cudaCDP2GetLastError, __cudaCDP2PeekAtLastError) gets them defined by
 * the PTX text below, parsed after its own (ptx_parse_heap()), so its calls
 * of them are ordinary calls of defined functions, inlined like any other;
 * the device runtime's other functions it declares (cudaMalloc, streams,
 * events: ptx_devrt.c) come after them.
 * They work on the launch's device-launch area (uapi/vgpu_hw.h, struct
 * vgpu_cdp_header), which they reach through %vgpu_cdp_area_lo/hi (the
 * core's SR_CDP_AREA_LO/HI) and name the launching grid with
 * %vgpu_cdp_grid (SR_CDP_GRID).  The per-thread last error is
 * %vgpu_cdp_err, a register of the kernel the lowering keeps (zero at its
 * start; ptx_lower_alu.c's mov).
 *
 * An .entry's address (mov.u64 %rd, kernel) is that of a module variable
 * $vgpu$kd$K (K: the kernel's index in the program) that print_globals
 * gives a .kdesc relocation: the loader writes the kernel's struct
 * vgpu_kernel_desc there (libvgpu/program.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx.h"

#include "vgpu.h"
#include "vgpu_hw.h"

_Static_assert(VGPU_CDP_SLOT_BYTES == 4160 && VGPU_CDP_HEADER_BYTES == 64 &&
		       VGPU_CDP_RECORD_BYTES == 64 && VGPU_CDP_ROOT == 0x80000000u &&
		       VGPU_CDP_NO_GRID == 0xffffffffu &&
		       __builtin_offsetof(struct vgpu_kernel_desc, cluster) == 56 &&
		       __builtin_offsetof(struct vgpu_cdp_record, depth) == 52 &&
		       __builtin_offsetof(struct vgpu_cdp_record, smem_bytes) == 48 &&
		       __builtin_offsetof(struct vgpu_cdp_record, kdesc) == 16,
	       "the runtime's constants");

/*
 * __cudaCDP2GetParameterBufferV2's grid and block are 12-byte structures
 * by value, which the inliner does not take: ptx_cdp_rewrite() makes its
 * calls ones of GETBUF with their words as scalar arguments.
 */
#define GETBUF "$vgpu$cdp$GetParameterBuffer"
#define ROOT "0x80000000" /* VGPU_CDP_ROOT */
#define NO_GRID "0xffffffff" /* VGPU_CDP_NO_GRID */

static const char runtime[] =
	"\n.func (.param .b64 $r) " GETBUF "(.param .b64 $f,\n"
	"	.param .b32 $g0, .param .b32 $g1, .param .b32 $g2,\n"
	"	.param .b32 $b0, .param .b32 $b1, .param .b32 $b2, .param .b32 $s)\n"
	"{\n"
	"	.reg .pred %p<2>;\n"
	"	.reg .b32 %lo, %hi, %n, %c, %i, %o, %t;\n"
	"	.reg .b64 %a, %rec, %w, %f;\n"
	"	mov.u32 %lo, %vgpu_cdp_area_lo;\n"
	"	mov.u32 %hi, %vgpu_cdp_area_hi;\n"
	"	mov.b64 %a, {%lo, %hi};\n"
	"	setp.eq.u64 %p1, %a, 0;\n"
	"	@%p1 bra $none;\n"
	"	ld.global.u32 %n, [%a];\n"
	"	mov.u32 %c, 0;\n"
	"$try:\n"
	"	setp.ge.u32 %p1, %c, %n;\n"
	"	@%p1 bra $full;\n"
	"	atom.global.add.u32 %i, [%a+4], 1;\n"
	"	rem.u32 %i, %i, %n;\n"
	"	mul.wide.u32 %w, %i, 4160;\n"
	"	add.u64 %rec, %a, %w;\n"
	"	add.u64 %rec, %rec, 64;\n"
	"	atom.global.cas.b32 %o, [%rec], 0, 1;\n"
	"	add.u32 %c, %c, 1;\n"
	"	setp.ne.u32 %p1, %o, 0;\n"
	"	@%p1 bra $try;\n"
	"	mov.u32 %t, %vgpu_cdp_grid;\n"
	"	st.global.u32 [%rec+8], %t;\n"
	"	ld.param.u64 %f, [$f];\n"
	"	st.global.u64 [%rec+16], %f;\n"
	"	ld.param.u32 %t, [$g0];\n"
	"	st.global.u32 [%rec+24], %t;\n"
	"	ld.param.u32 %t, [$g1];\n"
	"	st.global.u32 [%rec+28], %t;\n"
	"	ld.param.u32 %t, [$g2];\n"
	"	st.global.u32 [%rec+32], %t;\n"
	"	ld.param.u32 %t, [$b0];\n"
	"	st.global.u32 [%rec+36], %t;\n"
	"	ld.param.u32 %t, [$b1];\n"
	"	st.global.u32 [%rec+40], %t;\n"
	"	ld.param.u32 %t, [$b2];\n"
	"	st.global.u32 [%rec+44], %t;\n"
	"	ld.param.u32 %t, [$s];\n"
	"	st.global.u32 [%rec+48], %t;\n"
	"	add.u64 %w, %rec, 64;\n"
	"	st.param.b64 [$r], %w;\n"
	"	ret;\n"
	"$full:\n"
	"	mov.u32 %t, 69;\n" /* cudaErrorLaunchPendingCountExceeded */
	"	mov.u32 %vgpu_cdp_err, %t;\n"
	"	bra.uni $null;\n"
	"$none:\n"
	"	mov.u32 %t, 801;\n" /* cudaErrorNotSupported: a launch without an area */
	"	mov.u32 %vgpu_cdp_err, %t;\n"
	"$null:\n"
	"	mov.u64 %w, 0;\n"
	"	st.param.b64 [$r], %w;\n"
	"	ret;\n"
	"}\n"
	".func (.param .b32 $r) __cudaCDP2LaunchDeviceV2(.param .b64 $p, .param .b64 $s)\n"
	"{\n"
	"	.reg .pred %p<8>;\n"
	"	.reg .b32 %lo, %hi, %t, %x, %y, %z, %e, %q, %d;\n"
	"	.reg .b64 %a, %rec, %s, %k, %w;\n"
	"	ld.param.u64 %rec, [$p];\n"
	"	sub.u64 %rec, %rec, 64;\n"
	"	mov.u32 %e, 9;\n" /* cudaErrorInvalidConfiguration */
	"	ld.global.u32 %x, [%rec+24];\n"
	"	ld.global.u32 %y, [%rec+28];\n"
	"	ld.global.u32 %z, [%rec+32];\n"
	"	setp.eq.u32 %p1, %x, 0;\n"
	"	setp.eq.or.u32 %p1, %y, 0, %p1;\n"
	"	setp.eq.or.u32 %p1, %z, 0, %p1;\n"
	"	setp.gt.or.u32 %p1, %y, 65535, %p1;\n"
	"	setp.gt.or.u32 %p1, %z, 65535, %p1;\n"
	"	@%p1 bra $bad;\n"
	"	ld.global.u32 %x, [%rec+36];\n"
	"	ld.global.u32 %y, [%rec+40];\n"
	"	ld.global.u32 %z, [%rec+44];\n"
	"	setp.eq.u32 %p1, %x, 0;\n"
	"	setp.eq.or.u32 %p1, %y, 0, %p1;\n"
	"	setp.eq.or.u32 %p1, %z, 0, %p1;\n"
	"	setp.gt.or.u32 %p1, %x, 1024, %p1;\n"
	"	setp.gt.or.u32 %p1, %y, 1024, %p1;\n"
	"	setp.gt.or.u32 %p1, %z, 64, %p1;\n"
	"	@%p1 bra $bad;\n"
	"	mul.lo.u32 %t, %x, %y;\n"
	"	mul.lo.u32 %t, %t, %z;\n"
	"	setp.gt.u32 %p1, %t, 1024;\n"
	"	@%p1 bra $bad;\n"
	"	ld.global.u64 %k, [%rec+16];\n"
	"	mov.u32 %e, 98;\n" /* cudaErrorInvalidDeviceFunction */
	"	setp.eq.u64 %p1, %k, 0;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %e, 9;\n"
	"	ld.global.u32 %t, [%k+16];\n"
	"	ld.global.u32 %q, [%rec+48];\n"
	"	setp.gt.u32 %p1, %q, 49152;\n"
	"	add.u32 %t, %t, %q;\n"
	"	setp.gt.or.u32 %p1, %t, 49152, %p1;\n"
	"	@%p1 bra $bad;\n"
	/* the kernel's compiled cluster shape (0: none) tiles the grid */
	"	mov.u32 %e, 912;\n" /* cudaErrorInvalidClusterSize */
	"	ld.global.u16 %q, [%k+56];\n"
	"	max.u32 %q, %q, 1;\n"
	"	ld.global.u32 %x, [%rec+24];\n"
	"	rem.u32 %t, %x, %q;\n"
	"	setp.ne.u32 %p1, %t, 0;\n"
	"	ld.global.u16 %q, [%k+58];\n"
	"	max.u32 %q, %q, 1;\n"
	"	ld.global.u32 %y, [%rec+28];\n"
	"	rem.u32 %t, %y, %q;\n"
	"	setp.ne.or.u32 %p1, %t, 0, %p1;\n"
	"	ld.global.u16 %q, [%k+60];\n"
	"	max.u32 %q, %q, 1;\n"
	"	ld.global.u32 %z, [%rec+32];\n"
	"	rem.u32 %t, %z, %q;\n"
	"	setp.ne.or.u32 %p1, %t, 0, %p1;\n"
	"	@%p1 bra $bad;\n"
	"	mov.u32 %lo, %vgpu_cdp_area_lo;\n"
	"	mov.u32 %hi, %vgpu_cdp_area_hi;\n"
	"	mov.b64 %a, {%lo, %hi};\n"
	/* the depth: the launching grid's record's plus 1 (1 from the host's) */
	"	mov.u32 %t, %vgpu_cdp_grid;\n"
	"	mov.u32 %d, 1;\n"
	"	setp.ge.u32 %p1, %t, " ROOT ";\n"
	"	@%p1 bra $depth;\n"
	"	mul.wide.u32 %w, %t, 4160;\n"
	"	add.u64 %w, %a, %w;\n"
	"	ld.global.u32 %d, [%w+116];\n" /* 64 + its depth field */
	"	add.u32 %d, %d, 1;\n"
	"$depth:\n"
	"	st.global.u32 [%rec+52], %d;\n"
	"	ld.param.u64 %s, [$s];\n"
	"	cvt.u32.u64 %t, %s;\n"
	"	st.global.u32 [%rec+12], %t;\n"
	"	atom.global.add.u32 %q, [%a+8], 1;\n"
	"	st.global.u32 [%rec+4], %q;\n"
	"	mov.u32 %t, 2;\n"
	"	st.release.gpu.global.u32 [%rec], %t;\n"
	"	mov.u32 %e, 0;\n"
	"	st.param.b32 [$r], %e;\n"
	"	ret;\n"
	"$bad:\n"
	"	mov.u32 %t, " NO_GRID ";\n"
	"	st.global.u32 [%rec+8], %t;\n"
	"	mov.u32 %t, 0;\n"
	"	st.global.u32 [%rec], %t;\n"
	"	mov.u32 %vgpu_cdp_err, %e;\n"
	"	st.param.b32 [$r], %e;\n"
	"	ret;\n"
	"}\n"
	".func (.param .b32 $r) __cudaCDP2GetLastError()\n"
	"{\n"
	"	.reg .b32 %e, %z;\n"
	"	mov.u32 %e, %vgpu_cdp_err;\n"
	"	mov.u32 %z, 0;\n"
	"	mov.u32 %vgpu_cdp_err, %z;\n"
	"	st.param.b32 [$r], %e;\n"
	"	ret;\n"
	"}\n"
	".func (.param .b32 $r) __cudaCDP2PeekAtLastError()\n"
	"{\n"
	"	.reg .b32 %e;\n"
	"	mov.u32 %e, %vgpu_cdp_err;\n"
	"	st.param.b32 [$r], %e;\n"
	"	ret;\n"
	"}\n";

static const char *const implemented[] = {
	"__cudaCDP2GetParameterBufferV2",
	"__cudaCDP2LaunchDeviceV2",
	"__cudaCDP2GetLastError",
	"__cudaCDP2PeekAtLastError",
};

bool ptx_cdp_implements(const char *name)
{
	if (ptx_devrt_implements(name))
		return true;
	for (size_t i = 0; i < sizeof(implemented) / sizeof(implemented[0]); i++)
		if (!strcmp(name, implemented[i]))
			return true;
	return false;
}

/* Declares (without defining) one of the entry points the runtime defines. */
bool ptx_cdp_wanted(const struct ptx_module *m)
{
	bool decl = false;

	for (int i = 0; i < m->nfuncs; i++) {
		const struct ptx_func *f = &m->funcs[i];

		if (f->entry || !ptx_cdp_implements(f->name))
			continue;
		if (!f->decl)
			return false;
		decl = true;
	}
	return decl;
}

/*
 * The runtime, the other device-runtime functions @m declares
 * (ptx_devrt.c) and a descriptor variable per kernel of @m: malloc'd
 * text.  A descriptor variable is the struct vgpu_kernel_desc, whose
 * cluster shape (.reqnctapercluster, little-endian 16-bit words at 56)
 * and index (byte 62: the device runtime's occupancy tables are by it)
 * are its initialiser and the loader fills in the rest
 * (libvgpu/program.c), then the kernel's cudaFuncAttributes for a
 * device-side cudaFuncGetAttributes (libvgpu/vgpu.h, VGPU_DEVRT_FUNCATTR_OFF:
 * libcuda fills them).
 */
#define KDESC_VAR (VGPU_DEVRT_FUNCATTR_OFF + VGPU_DEVRT_FUNCATTR_BYTES)
#define KDESC_TEXT (64 + 4 * KDESC_VAR) /* one descriptor's declaration, at most */
_Static_assert(VGPU_DEVRT_FUNCATTR_OFF == sizeof(struct vgpu_kernel_desc), "after the descriptor");
char *ptx_cdp_text(const struct ptx_module *m)
{
	char *devrt = ptx_devrt_text(m);
	size_t dlen = devrt ? strlen(devrt) : 0;
	size_t len = sizeof(runtime) + dlen + KDESC_TEXT * (size_t)(m->nfuncs + 1);
	char *t = devrt ? malloc(len) : NULL, *p;
	int k = 0;

	if (!t) {
		free(devrt);
		return NULL;
	}
	memcpy(t, runtime, sizeof(runtime));
	p = t + sizeof(runtime) - 1;
	memcpy(p, devrt, dlen + 1);
	p += dlen;
	free(devrt);
	for (int i = 0; i < m->nfuncs; i++) {
		const uint32_t *c = m->funcs[i].attrs.reqnctapercluster;

		if (!m->funcs[i].entry)
			continue;
		p += snprintf(p, KDESC_TEXT, ".global .align 8 .b8 " PTX_CDP_KDESC "%d[%d] = {", k++,
			      KDESC_VAR);
		for (int b = 0; b < 56; b++)
			p += snprintf(p, 8, "0, ");
		for (int d = 0; d < 3; d++) /* at most VGPU_MAX_CLUSTER_CTAS: the parse */
			p += snprintf(p, 16, "%u, %u, ", c[d] & 0xff, c[d] >> 8 & 0xff);
		p += snprintf(p, 16, "%d, %d", (k - 1) & 0xff, (k - 1) >> 8 & 0xff); /* its index */
		for (int b = 64; b < KDESC_VAR; b++)
			p += snprintf(p, 8, ", 0");
		p += snprintf(p, 8, "};\n");
	}
	return t;
}

/* A new call-sequence .param register of 4 bytes in @f, or -1. */
static int new_param(struct ptx_func *f)
{
	if (f->nregs == f->regs_cap) {
		int cap = f->regs_cap ? 2 * f->regs_cap : 16;
		struct ptx_reg *r = realloc(f->regs, (size_t)cap * sizeof(*r));

		if (!r)
			return -1;
		f->regs = r;
		f->regs_cap = cap;
	}
	memset(&f->regs[f->nregs], 0, sizeof(f->regs[0]));
	f->regs[f->nregs].cls = PTX_R32;
	f->regs[f->nregs].bits = 32;
	f->regs[f->nregs].is_param = true;
	f->regs[f->nregs].psize = 4;
	f->regs[f->nregs].palign = 4;
	return f->nregs++;
}

/*
 * call (r), __cudaCDP2GetParameterBufferV2, (f, grid, block, smem): a call
 * of GETBUF with grid's and block's words (st.param.b32 [grid+4*i]) as
 * their own .param registers.
 */
static int split_getbuf(struct ptx_func *f, struct ptx_insn *c)
{
	int words[6];

	if (c->nops != 6 || !c->call_ret)
		return 0; /* the inliner names the mismatch */
	for (int a = 0; a < 2; a++) {
		int agg = c->ops[3 + a].reg;

		if (c->ops[3 + a].kind != PTX_O_REG || agg < 0 || !f->regs[agg].is_param ||
		    f->regs[agg].psize != 12)
			return 0;
		for (int w = 0; w < 3; w++) {
			words[3 * a + w] = new_param(f);
			if (words[3 * a + w] < 0)
				return -ENOMEM;
		}
		for (int i = 0; i < f->ninsns; i++) {
			struct ptx_insn *x = &f->insns[i];

			if (strcmp(x->op, "st") || x->nops != 2 || x->ops[0].kind != PTX_O_MEM ||
			    x->ops[0].reg != agg || x->ops[0].imm % 4 || x->ops[0].imm < 0 ||
			    x->ops[0].imm > 8)
				continue;
			x->ops[0].reg = words[3 * a + x->ops[0].imm / 4];
			x->ops[0].imm = 0;
		}
	}
	c->ops[9] = c->ops[5];
	for (int w = 0; w < 6; w++) {
		c->ops[3 + w] = c->ops[3];
		c->ops[3 + w].reg = words[w];
	}
	c->nops = 10;
	snprintf(c->ops[1].sym, sizeof(c->ops[1].sym), "%s", GETBUF);
	return 0;
}

/*
 * mov.u64 %rd, kernel: the address of its descriptor variable; calls of
 * __cudaCDP2GetParameterBufferV2: split_getbuf().
 */
int ptx_cdp_rewrite(struct ptx_module *m)
{
	for (int i = 0; i < m->nfuncs; i++) {
		struct ptx_func *f = &m->funcs[i];

		for (int n = 0; n < f->ninsns; n++) {
			struct ptx_insn *in = &f->insns[n];

			if (!strcmp(in->op, "call")) {
				int ret = 0;

				if (in->call_ret && in->nops > 1 && in->ops[1].kind == PTX_O_SYM &&
				    !strcmp(in->ops[1].sym, "__cudaCDP2GetParameterBufferV2"))
					ret = split_getbuf(f, in);
				if (ret)
					return ret;
				continue;
			}
			for (int o = 0; o < in->nops; o++) {
				struct ptx_operand *op = &in->ops[o];
				int k = 0;

				if (op->kind != PTX_O_SYM || !op->sym[0])
					continue;
				for (int e = 0; e < m->nfuncs; e++) {
					if (!m->funcs[e].entry)
						continue;
					if (!strcmp(m->funcs[e].name, op->sym)) {
						snprintf(op->sym, sizeof(op->sym), PTX_CDP_KDESC "%d", k);
						break;
					}
					k++;
				}
			}
		}
	}
	return 0;
}
