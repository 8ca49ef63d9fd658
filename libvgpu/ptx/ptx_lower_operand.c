// SPDX-License-Identifier: MIT
/*
 * PTX lowering (ptx_lower.c): names (parameters, shared, local and global
 * variables, labels, special and environment registers), an
 * instruction's modifiers and types, and its operands as virtual
 * registers or immediates.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"
#include "vgpu_isa.h"

/* ---- names ---- */

int pl_param_index(const struct ptx_func *f, const char *name)
{
	for (int i = 0; i < f->nparams; i++)
		if (!strcmp(f->params[i].name, name))
			return i;
	return -1;
}

/* Shared variables: the module's first, then the kernel's; -1 if none. */
int pl_shared_index(const struct lower *L, const char *name)
{
	for (int i = 0; i < L->m->nshared; i++)
		if (!strcmp(L->m->shared[i].name, name))
			return i;
	for (int i = 0; i < L->f->nshared; i++)
		if (!strcmp(L->f->shared[i].name, name))
			return L->m->nshared + i;
	/* extern .shared: the dynamic region, after every static variable */
	for (int i = 0; i < L->m->ndyn; i++)
		if (!strcmp(L->m->dyn[i].name, name))
			return L->m->nshared + L->f->nshared;
	return -1;
}

int pl_local_index(const struct lower *L, const char *name)
{
	for (int i = 0; i < L->f->nlocal; i++)
		if (!strcmp(L->f->local[i].name, name))
			return i;
	return -1;
}

/*
 * Is @o a known constant: an immediate, or a register written exactly
 * once in the function, by a mov of an immediate (clang and nvcc keep
 * member masks so)?  The value in *@v.
 */
bool pl_const_of(const struct lower *L, const struct ptx_operand *o, int64_t *v)
{
	const struct ptx_insn *def = NULL;

	if (o->kind == PTX_O_IMM) {
		*v = o->imm;
		return true;
	}
	if (o->kind != PTX_O_REG)
		return false;
	for (int i = 0; i < L->f->ninsns; i++) {
		const struct ptx_insn *in = &L->f->insns[i];

		if (in->nops && in->ops[0].kind == PTX_O_REG && in->ops[0].reg == o->reg) {
			if (def)
				return false;
			def = in;
		}
	}
	if (!def || strcmp(def->op, "mov") || def->guard >= 0 || def->nops != 2 ||
	    def->ops[1].kind != PTX_O_IMM)
		return false;
	*v = def->ops[1].imm;
	return true;
}

int pl_global_index(const struct lower *L, const char *name)
{
	for (int i = 0; i < L->m->nglobals; i++)
		if (!strcmp(L->m->globals[i].name, name))
			return L->global_va && L->global_va[i] >= 0 ? i : -1;
	return -1;
}

/* Parameter @i's byte offset in the buffer (PTX's layout, as ptx.c prints it). */
static uint32_t param_offset(const struct ptx_func *f, int i)
{
	uint32_t off = 0;

	for (int k = 0; k <= i; k++) {
		uint32_t align = f->params[k].align ? f->params[k].align : 1;

		off = (off + align - 1) / align * align;
		if (k < i)
			off += f->params[k].size;
	}
	return off;
}

/*
 * Pair @d = the address of parameter @i (+@add): the parameter buffer's
 * address (pself, filled in by the launch) plus its offset.
 */
void pl_param_addr(struct lower *L, int d, int i, uint32_t add)
{
	int t = pl_new_vreg(L, 2);
	struct ptx_vinsn *v = pl_emit(L, "LDP.64");

	pl_o_def(v, t, 0, false);
	pl_o_mem(v, -1, "pself");
	pl_add64(L, d, t, -1, param_offset(L->f, i) + add);
	L->c->uses_params = true;
}

int pl_label_index(const struct ptx_func *f, const char *name)
{
	for (int i = 0, k = 0; i < f->ninsns; i++) {
		if (!f->insns[i].label[0])
			continue;
		if (!strcmp(f->insns[i].label, name))
			return k;
		k++;
	}
	return -1;
}

static const struct {
	const char *ptx, *sr;
} sregs[] = {
	{ "%tid.x", "SR_TID.X" },
	{ "%tid.y", "SR_TID.Y" },
	{ "%tid.z", "SR_TID.Z" },
	{ "%ntid.x", "SR_NTID.X" },
	{ "%ntid.y", "SR_NTID.Y" },
	{ "%ntid.z", "SR_NTID.Z" },
	{ "%ctaid.x", "SR_CTAID.X" },
	{ "%ctaid.y", "SR_CTAID.Y" },
	{ "%ctaid.z", "SR_CTAID.Z" },
	{ "%nctaid.x", "SR_NCTAID.X" },
	{ "%nctaid.y", "SR_NCTAID.Y" },
	{ "%nctaid.z", "SR_NCTAID.Z" },
	{ "%laneid", "SR_LANEID" },
	{ "%warpid", "SR_WARPID" },
	{ "%nwarpid", "SR_NWARPID" },
	{ "%smid", "SR_SMID" },
	{ "%nsmid", "SR_NSMID" },
	{ "%clock", "SR_CLOCKLO" },
	{ "%clock_hi", "SR_CLOCKHI" },
	{ "%globaltimer_lo", "SR_GLOBALTIMERLO" },
	{ "%globaltimer_hi", "SR_GLOBALTIMERHI" },
	{ "%cluster_ctarank", "SR_CLUSTER_CTARANK" },
	{ "%cluster_nctarank", "SR_CLUSTER_NCTARANK" },
	{ "%cluster_ctaid.x", "SR_CLUSTER_CTAID.X" },
	{ "%cluster_ctaid.y", "SR_CLUSTER_CTAID.Y" },
	{ "%cluster_ctaid.z", "SR_CLUSTER_CTAID.Z" },
	{ "%cluster_nctaid.x", "SR_CLUSTER_NCTAID.X" },
	{ "%cluster_nctaid.y", "SR_CLUSTER_NCTAID.Y" },
	{ "%cluster_nctaid.z", "SR_CLUSTER_NCTAID.Z" },
	{ "%clusterid.x", "SR_CLUSTERID.X" },
	{ "%clusterid.y", "SR_CLUSTERID.Y" },
	{ "%clusterid.z", "SR_CLUSTERID.Z" },
	{ "%nclusterid.x", "SR_NCLUSTERID.X" },
	{ "%nclusterid.y", "SR_NCLUSTERID.Y" },
	{ "%nclusterid.z", "SR_NCLUSTERID.Z" },
	/* device-side launch (ptx_cdp.c): the launch's area and grid */
	{ "%vgpu_cdp_area_lo", "SR_CDP_AREA_LO" },
	{ "%vgpu_cdp_area_hi", "SR_CDP_AREA_HI" },
	{ "%vgpu_cdp_grid", "SR_CDP_GRID" },
};

int pl_envreg_index(const char *ptx)
{
	char *end;
	long n;

	if (strncmp(ptx, "%envreg", 7) || ptx[7] < '0' || ptx[7] > '9')
		return -1;
	n = strtol(ptx + 7, &end, 10);
	return *end || n > 31 || (ptx[7] == '0' && ptx[8]) ? -1 : (int)n;
}

const char *pl_sreg_name(const char *ptx)
{
	for (size_t i = 0; i < sizeof(sregs) / sizeof(sregs[0]); i++)
		if (!strcmp(sregs[i].ptx, ptx))
			return sregs[i].sr;
	return NULL;
}

/* ---- modifiers and types ---- */

bool pl_has_mod(const struct ptx_insn *in, const char *mod)
{
	for (int i = 0; i < in->nmods; i++)
		if (!strcmp(in->mods[i], mod))
			return true;
	return false;
}


/* The @nth type modifier of the instruction (0 = first). */
struct ptype pl_type_of(const struct ptx_insn *in, int nth)
{
	struct ptype t = { 0 };

	for (int i = 0; i < in->nmods; i++) {
		const char *m = in->mods[i];
		int bits = 0;

		if (!strcmp(m, ".pred")) {
			bits = 1;
		} else if ((m[1] == 'u' || m[1] == 's' || m[1] == 'b' || m[1] == 'f') &&
			   m[2] >= '0' && m[2] <= '9') {
			char *end;
			long b = strtol(m + 2, &end, 10);

			if (*end || (b != 8 && b != 16 && b != 32 && b != 64))
				continue;
			bits = (int)b;
		}
		if (!bits)
			continue;
		if (nth--)
			continue;
		t.bits = bits;
		t.pred = bits == 1;
		t.sign = m[1] == 's';
		t.flt = m[1] == 'f';
		return t;
	}
	return t;
}

const struct ptx_reg *pl_preg(const struct lower *L, int r)
{
	if (r >= L->f->nregs)
		for (int i = 0; i < L->nshadow; i++)
			if (L->shadow_v[i] == r)
				return &L->shadow[i];
	return &L->f->regs[r];
}

/* ---- operand access ---- */

/*
 * A move a source needs: before the instruction being built, or right
 * away when none is.
 */
struct ptx_vinsn *pl_pre_move(struct lower *L, const char *mn)
{
	static struct ptx_vinsn dummy;
	struct ptx_vinsn *v;

	if (L->building < 0)
		return pl_emit(L, "%s", mn);
	if (L->npending == (int)(sizeof(L->pending) / sizeof(L->pending[0]))) {
		pl_lerr(L, "internal error: too many operand moves");
		return &dummy;
	}
	v = &L->pending[L->npending++];
	memset(v, 0, sizeof(*v));
	v->line = L->in->line;
	v->guard = L->in->guard;
	v->guard_not = L->in->guard_not;
	snprintf(v->mnem, sizeof(v->mnem), "%s", mn);
	return v;
}

bool pl_is_reg(const struct lower *L, const struct ptx_operand *o, int cls)
{
	return o->kind == PTX_O_REG && pl_preg(L, o->reg)->cls == cls;
}

/* A 32-bit immediate's text for an operand (low word of 64-bit ones). */
/* An immediate as an 8/16-bit instruction sees it (see narrow_bits). */
int64_t pl_narrow_imm(const struct lower *L, int64_t v)
{
	uint32_t m;

	if (!L->narrow_bits)
		return v;
	m = (1u << L->narrow_bits) - 1;
	v &= m;
	if (L->narrow_sign && v >> (L->narrow_bits - 1))
		v -= (int64_t)m + 1;
	return v;
}

void pl_imm_text(char *buf, size_t len, int64_t v, int part)
{
	uint32_t w = part ? (uint32_t)((uint64_t)v >> 32) : (uint32_t)v;

	snprintf(buf, len, "0x%" PRIx32, w);
}

/*
 * Source @o (part @part of it) as a register: registers as they are,
 * immediates, special registers and shared-variable addresses copied
 * into a temporary first.  Returns the vreg (its part in *@pp).
 */
int pl_src_reg(struct lower *L, const struct ptx_operand *o, int part, int *pp)
{
	struct ptx_vinsn *v;
	int t;

	*pp = 0;
	if (o->kind == PTX_O_REG) {
		if (pl_preg(L, o->reg)->cls == PTX_PRED)
			return pl_lerr(L, "a predicate where a value is expected"), 0;
		*pp = pl_preg(L, o->reg)->cls == PTX_R64 ? part : 0;
		if (L->narrow_bits && pl_preg(L, o->reg)->cls == PTX_R32) {
			int sh = 32 - L->narrow_bits;

			t = pl_new_vreg(L, 1);
			if (!L->narrow_sign) {
				v = pl_pre_move(L, "LOP.AND");
				pl_o_def(v, t, 0, false);
				pl_o_use(v, o->reg, 0);
				pl_o_text(v, "0x%x", (1u << L->narrow_bits) - 1);
				return t;
			}
			v = pl_pre_move(L, "SHL");
			pl_o_def(v, t, 0, false);
			pl_o_use(v, o->reg, 0);
			pl_o_text(v, "0x%x", sh);
			v = pl_pre_move(L, "SHR.S32");
			pl_o_def(v, t, 0, false);
			pl_o_use(v, t, 0);
			pl_o_text(v, "0x%x", sh);
			return t;
		}
		return o->reg;
	}
	t = pl_new_vreg(L, 1);
	if (o->kind == PTX_O_IMM) {
		char b[32];

		pl_imm_text(b, sizeof(b), pl_narrow_imm(L, o->imm), part);
		if (!strcmp(b, "0x0"))
			return -1; /* RZ */
		v = pl_pre_move(L, "MOV");
		pl_o_def(v, t, 0, false);
		pl_o_text(v, "%s", b);
		return t;
	}
	if (o->kind == PTX_O_SYM) {
		const char *sr = pl_sreg_name(o->sym);
		int sh = pl_shared_index(L, o->sym), lo = pl_local_index(L, o->sym);

		int gl = pl_global_index(L, o->sym);

		if (lo >= 0 && !o->imm) { /* a .local variable's address */
			*pp = part;
			return L->local_va[lo];
		}
		if (gl >= 0 && !o->imm) { /* a module variable's address */
			*pp = part;
			return L->global_va[gl];
		}
		if (gl >= 0)
			return pl_unsupported(L, "an offset module-variable address outside [ ]"), 0;
		if (lo >= 0)
			return pl_unsupported(L, "an offset .local address outside [ ]"), 0;
		if (part && (sr || sh >= 0 || pl_envreg_index(o->sym) >= 0))
			return -1; /* high word of a 32-bit value */
		if (pl_envreg_index(o->sym) >= 0) {
			/* the launch's environment registers: .param envregs penv */
			if (L->c->fn_mode)
				return pl_unsupported(L, "%envreg in a called function"), 0;
			v = pl_pre_move(L, "LDP.32");
			pl_o_def(v, t, 0, false);
			pl_o_mem(v, -1, "penv+%d", 4 * pl_envreg_index(o->sym));
			L->c->uses_envregs = true;
			return t;
		}
		if (sr) {
			v = pl_pre_move(L, "S2R");
			pl_o_def(v, t, 0, false);
			pl_o_text(v, "%s", sr);
			return t;
		}
		if (sh >= 0) {
			v = pl_pre_move(L, "MOV");
			pl_o_def(v, t, 0, false);
			pl_o_text(v, "sh%d+%" PRId64, sh, o->imm);
			return t;
		}
		if (!strncmp(o->sym, "%reserved_smem_offset_", 22) &&
		    (sh = pl_shared_index(L, "$reserved_smem")) >= 0) { /* ptx.c */
			const char *w = o->sym + 22;
			uint32_t off = !strcmp(w, "1") ? PTX_RESERVED_SMEM / 2 :
				       !strcmp(w, "end") ? PTX_RESERVED_SMEM : 0;

			if (part)
				return -1;
			v = pl_pre_move(L, "MOV");
			pl_o_def(v, t, 0, false);
			if (!strcmp(w, "cap"))
				pl_o_text(v, "%u", PTX_RESERVED_SMEM);
			else if (!strcmp(w, "0") || !strcmp(w, "1") || !strcmp(w, "begin") ||
				 !strcmp(w, "end"))
				pl_o_text(v, "sh%d+%u", sh, off);
			else
				return pl_lerr(L, "unknown name '%s'", o->sym), 0;
			return t;
		}
		return pl_lerr(L, "unknown name '%s'", o->sym), 0;
	}
	return pl_lerr(L, "expected a register or a value"), 0;
}

/* Add a use of @o (part) as a register operand: RZ for a zero. */
void pl_use_src(struct lower *L, struct ptx_vinsn *v, const struct ptx_operand *o,
		    int part)
{
	int pp, r = pl_src_reg(L, o, part, &pp);

	if (r < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, r, pp);
}

/* Emit a source that may be an immediate in a vGPU I form. */
void pl_use_src_or_imm(struct lower *L, struct ptx_vinsn *v,
			   const struct ptx_operand *o, int part)
{
	char b[32];

	if (o->kind == PTX_O_IMM) {
		pl_imm_text(b, sizeof(b), pl_narrow_imm(L, o->imm), part);
		pl_o_text(v, "%s", b);
		return;
	}
	pl_use_src(L, v, o, part);
}

int pl_dst_reg(struct lower *L, const struct ptx_operand *o, int cls)
{
	if (o->kind == PTX_O_SINK)
		return -1;
	if (o->kind != PTX_O_REG)
		return pl_lerr(L, "expected a destination register"), -1;
	if (cls >= 0 && pl_preg(L, o->reg)->cls != cls)
		return pl_lerr(L, "destination '%s' has the wrong type for this instruction",
			    pl_preg(L, o->reg)->name),
		       -1;
	return o->reg;
}

int pl_pred_of(struct lower *L, const struct ptx_operand *o)
{
	if (!pl_is_reg(L, o, PTX_PRED))
		return pl_lerr(L, "expected a predicate register"), -1;
	return o->reg;
}
