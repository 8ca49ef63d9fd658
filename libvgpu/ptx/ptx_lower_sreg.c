// SPDX-License-Identifier: MIT
/*
 * PTX special registers the front end derives from the core's (split from
 * ptx_lower_alu.c's mov): %is_explicit_cluster, and the shared memory
 * sizes %dynamic_smem_size, %total_smem_size and %aggr_smem_size.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

/*
 * %is_explicit_cluster: true for a kernel compiled with .explicitcluster
 * or .reqnctapercluster (every launch has that cluster shape, ptx.md);
 * else whether the launch's cluster has more than one CTA.  The core
 * does not tell a launch that asked for a 1x1x1 cluster from one that
 * gave none, so the first reads false here (a GPU says true).
 */
void pl_is_explicit_cluster(struct lower *L, int d)
{
	const struct ptx_kattrs *a = &L->f->attrs;
	struct ptx_vinsn *v;
	int t;

	if (!L->c->fn_mode && (a->explicitcluster || a->reqnctapercluster[0])) {
		v = pl_emit(L, "ISETP.EQ.U32");
		pl_o_pdef(v, d);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x0");
		return;
	}
	t = pl_new_vreg(L, 1);
	v = pl_emit(L, "S2R");
	pl_o_def(v, t, 0, false);
	pl_o_text(v, "SR_CLUSTER_NCTARANK");
	v = pl_emit(L, "ISETP.GT.U32");
	pl_o_pdef(v, d);
	pl_o_use(v, t, 0);
	pl_o_text(v, "0x1");
}

/*
 * @d = the end of the kernel's static shared variables, from the
 * assembler's own placement (the symbol of the last one plus its size):
 * with @gpu as the GPU counts them (the variables the PTX declares, not
 * the reserved region ptx.c appends), else the kernel's whole static size
 * in the object, the 16-byte marker of the dynamic region included
 * (ptx.c prints the module's variables, the kernel's, then the marker).
 */
static void smem_static_end(struct lower *L, int d, bool gpu)
{
	int nm = L->m->nshared, n = nm + L->f->nshared;
	struct ptx_vinsn *v = pl_emit(L, "MOV");
	const struct ptx_var *last;

	pl_o_def(v, d, 0, false);
	if (!gpu && L->m->ndyn) {
		pl_o_text(v, "sh%d+16", n);
		return;
	}
	while (n > 0) {
		last = n > nm ? &L->f->shared[n - 1 - nm] : &L->m->shared[n - 1];
		/* the module's variables the kernel does not use are not in it */
		if (n <= nm && !L->c->fn_mode && !ptx_shared_used(L->m, L->f, n - 1)) {
			n--;
			continue;
		}
		if (!gpu || strcmp(last->name, "$reserved_smem"))
			break;
		n--;
	}
	if (n > 0)
		pl_o_text(v, "sh%d+%" PRIu32, n - 1, last->size);
	else
		pl_o_text(v, "0x0");
}

/* @d = @a + @b (@sub: - @b), registers */
static void add_reg(struct lower *L, int d, int a, int b, bool sub)
{
	struct ptx_vinsn *v = pl_emit(L, sub ? "ISUB" : "IADD");

	pl_o_def(v, d, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, b, 0);
}

/*
 * %dynamic_smem_size, %total_smem_size, %aggr_smem_size (an H200's
 * answers: tests/ptx/probes/smem_sregs.txt): D, the launch's dynamic
 * bytes; S + D rounded up to 128; S + D + 1024 (the 1 KiB of shared
 * memory sm_90 reserves), S the kernel's static bytes.  The core's
 * SR_SMEM_BYTES is the object's static size plus D.  False if @sym is
 * not one of them.
 */
bool pl_smem_sreg(struct lower *L, int d, const char *sym)
{
	bool dyn = !strcmp(sym, "%dynamic_smem_size"), total = !strcmp(sym, "%total_smem_size");
	struct ptx_vinsn *v;
	int t, u;

	if (!dyn && !total && strcmp(sym, "%aggr_smem_size"))
		return false;
	if (L->c->fn_mode) {
		pl_unsupported(L, "the shared memory size registers in a function that is "
				  "called, not inlined");
		return true;
	}
	t = pl_new_vreg(L, 1);
	u = pl_new_vreg(L, 1);
	v = pl_emit(L, "S2R");
	pl_o_def(v, t, 0, false);
	pl_o_text(v, "SR_SMEM_BYTES");
	smem_static_end(L, u, false);
	add_reg(L, dyn ? d : t, t, u, true); /* D */
	if (dyn)
		return true;
	smem_static_end(L, u, true);
	add_reg(L, t, t, u, false); /* S + D */
	v = pl_emit(L, "IADD");
	pl_o_def(v, total ? t : d, 0, false);
	pl_o_use(v, t, 0);
	pl_o_text(v, total ? "0x7f" : "0x400");
	if (total) {
		v = pl_emit(L, "LOP.AND");
		pl_o_def(v, d, 0, false);
		pl_o_use(v, t, 0);
		pl_o_text(v, "0xffffff80");
	}
	return true;
}
