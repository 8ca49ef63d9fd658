// SPDX-License-Identifier: MIT
/*
 * PTX instructions -> vGPU instructions over virtual registers.
 *
 * PTX register i is virtual register i (width 1 for 8..32-bit registers,
 * 2 for 64-bit ones, 0 for predicates); lowering adds temporaries.  A
 * 64-bit value is a register pair (low word first), as vGPU's global
 * addresses and mbarrier tokens are.  Shared addresses are the low word
 * (vGPU's 32-bit shared address); a generic shared address (cvta.shared)
 * carries GENERIC_SHARED_HI (ptx_lower.h) in its high word.  P6 is the
 * lowering's scratch predicate; P0..P5 are allocated.
 *
 * Anything not handled is an error naming the PTX line and construct.
 * This file: the shared machinery and the dispatch; the families of
 * instructions are in ptx_lower_{alu,mem,sync}.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_lower.h"
#include "vgpu_isa.h"

/* ---- errors ---- */

__attribute__((format(printf, 2, 3))) bool pl_lerr(struct lower *L,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ptx_error(L->dg, L->in->line, L->in->col, "%s", msg);
	L->failed = true;
	return false;
}

/* The instruction as written (op and modifiers), for messages. */
const char *pl_spelled(const struct ptx_insn *in, char *buf, size_t len)
{
	size_t n = (size_t)snprintf(buf, len, "%s", in->op);

	for (int i = 0; i < in->nmods && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s", in->mods[i]);
	return buf;
}

bool pl_unsupported(struct lower *L, const char *why)
{
	char b[256];

	return pl_lerr(L, "unsupported PTX construct '%s'%s%s",
		    pl_spelled(L->in, b, sizeof(b)), why ? ": " : "", why ? why : "");
}

/* ---- virtual registers and instructions ---- */

int pl_new_vreg(struct lower *L, int width)
{
	struct ptx_code *c = L->c;

	if (c->nv == c->vcap) {
		int ncap = c->vcap ? 2 * c->vcap : 64;
		struct ptx_vreg *p = realloc(c->vregs, (size_t)ncap * sizeof(*p));

		if (!p)
			return pl_lerr(L, "out of memory"), 0;
		c->vregs = p;
		c->vcap = ncap;
	}
	c->vregs[c->nv].width = (uint8_t)width;
	c->vregs[c->nv].fixed = false;
	c->vregs[c->nv].phys = -1;
	return c->nv++;
}

bool pl_room(struct lower *L, int more)
{
	struct ptx_code *c = L->c;

	while (c->n + more > c->cap) {
		int ncap = c->cap ? 2 * c->cap : 256;
		struct ptx_vinsn *p = realloc(c->insns, (size_t)ncap * sizeof(*p));

		if (!p)
			return pl_lerr(L, "out of memory");
		c->insns = p;
		c->cap = ncap;
	}
	return true;
}

/* The instruction being built is complete: put its moves before it. */
void pl_finish(struct lower *L)
{
	struct ptx_code *c = L->c;
	int b = L->building, k = L->npending;

	L->building = -1;
	L->npending = 0;
	if (!k || !pl_room(L, k))
		return;
	if (b < 0) {
		memcpy(&c->insns[c->n], L->pending, (size_t)k * sizeof(L->pending[0]));
	} else {
		memmove(&c->insns[b + k], &c->insns[b], (size_t)(c->n - b) * sizeof(c->insns[0]));
		memcpy(&c->insns[b], L->pending, (size_t)k * sizeof(L->pending[0]));
	}
	c->n += k;
}

/*
 * Start the next instruction (finishing the one before).  The pointer is
 * valid until the next pl_emit() or pl_finish().
 */
struct ptx_vinsn *pl_emit(struct lower *L, const char *fmt, ...)
{
	static struct ptx_vinsn dummy;
	struct ptx_code *c = L->c;
	struct ptx_vinsn *v;
	va_list ap;

	pl_finish(L);
	if (!pl_room(L, 1)) {
		memset(&dummy, 0, sizeof(dummy));
		return &dummy;
	}
	L->building = c->n;
	v = &c->insns[c->n++];
	memset(v, 0, sizeof(*v));
	v->line = L->in->line;
	v->guard = L->in->guard;
	v->guard_not = L->in->guard_not;
	va_start(ap, fmt);
	vsnprintf(v->mnem, sizeof(v->mnem), fmt, ap);
	va_end(ap);
	return v;
}

struct ptx_vop *pl_add_op(struct ptx_vinsn *v)
{
	static struct ptx_vop dummy;

	if (v->nops == (int)(sizeof(v->ops) / sizeof(v->ops[0])))
		return &dummy;
	memset(&v->ops[v->nops], 0, sizeof(v->ops[0]));
	v->ops[v->nops].v = -1;
	return &v->ops[v->nops++];
}

/* Write all of @v (or its last part: @partial = false kills it). */
void pl_o_def(struct ptx_vinsn *vi, int v, int part, bool partial)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_REG;
	o->def = true;
	o->partial = partial;
	o->v = v;
	o->part = (uint8_t)part;
}

void pl_o_use(struct ptx_vinsn *vi, int v, int part)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_REG;
	o->v = v;
	o->part = (uint8_t)part;
}

void pl_o_pdef(struct ptx_vinsn *vi, int v)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_PRED;
	o->def = true;
	o->v = v;
}

void pl_o_puse(struct ptx_vinsn *vi, int v, bool neg)
{
	struct ptx_vop *o = pl_add_op(vi);

	o->kind = PTX_V_PRED;
	o->v = v;
	o->neg = neg;
}

__attribute__((format(printf, 2, 3))) void pl_o_text(struct ptx_vinsn *vi,
							 const char *fmt, ...)
{
	struct ptx_vop *o = pl_add_op(vi);
	va_list ap;

	o->kind = PTX_V_TEXT;
	va_start(ap, fmt);
	vsnprintf(o->text, sizeof(o->text), fmt, ap);
	va_end(ap);
}

/* [base + text]; base -1 is RZ */
__attribute__((format(printf, 3, 4))) void pl_o_mem(struct ptx_vinsn *vi, int base,
							const char *fmt, ...)
{
	struct ptx_vop *o = pl_add_op(vi);
	va_list ap;

	o->kind = PTX_V_MEM;
	o->v = base;
	va_start(ap, fmt);
	vsnprintf(o->text, sizeof(o->text), fmt, ap);
	va_end(ap);
}

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

/* ---- simple instructions ---- */

bool pl_want_ops(struct lower *L, int n)
{
	if (L->in->nops != n)
		return pl_lerr(L, "'%s' takes %d operands, not %d", L->in->op, n, L->in->nops);
	return true;
}

/* Two-source integer op on 32 bits (commutative ops may swap an immediate). */
void pl_alu32(struct lower *L, const char *mn, int d, int dpart, bool dpartial,
		  const struct ptx_operand *a, const struct ptx_operand *b, int part,
		  bool commutative)
{
	struct ptx_vinsn *v;

	if (a->kind == PTX_O_IMM && b->kind != PTX_O_IMM && commutative) {
		const struct ptx_operand *t = a;

		a = b;
		b = t;
	}
	v = pl_emit(L, "%s", mn);
	pl_o_def(v, d, dpart, dpartial);
	pl_use_src(L, v, a, part);
	pl_use_src_or_imm(L, v, b, part);
}

void pl_mov_reg(struct lower *L, int d, int dpart, bool partial, int s, int spart)
{
	struct ptx_vinsn *v = pl_emit(L, "MOV");

	pl_o_def(v, d, dpart, partial);
	if (s < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, s, spart);
}

const char *pl_int_mod(struct ptype t)
{
	return t.sign ? "S32" : "U32";
}

/* ---- per-instruction lowering ---- */

static const struct {
	const char *op;
	void (*fn)(struct lower *L);
} lowerers[] = {
	{ "mov", pl_mov },	  { "add", pl_arith },	  { "sub", pl_arith },
	{ "mul", pl_arith },	  { "mad", pl_mad },	  { "fma", pl_mad },
	{ "and", pl_logic },	  { "or", pl_logic },	  { "xor", pl_logic },
	{ "not", pl_not_neg_abs }, { "neg", pl_not_neg_abs }, { "abs", pl_not_neg_abs },
	{ "min", pl_minmax },	  { "max", pl_minmax },	  { "shl", pl_shift },
	{ "shr", pl_shift },	  { "setp", pl_setp },	  { "selp", pl_selp },
	{ "cvt", pl_cvt },	  { "cvta", pl_cvta },	  { "ld", pl_ldst },
	{ "st", pl_ldst },	  { "atom", pl_atom },	  { "red", pl_atom },
	{ "bra", pl_bra },	  { "ret", pl_exit },	  { "exit", pl_exit }, { "brx", pl_brx },
	{ "bar", pl_bar },	  { "barrier", pl_bar },	  { "membar", pl_fence }, { "branchtargets", pl_brx },
	{ "fence", pl_fence },	  { "mbarrier", pl_mbarrier }, { "cp", pl_cp },
	{ "mapa", pl_mapa },	  { "nanosleep", pl_nanosleep }, { "vote", pl_vote },
	{ "activemask", pl_activemask }, { "div", pl_divrem },	  { "rem", pl_divrem },
	{ "rcp", pl_mufu },	  { "sqrt", pl_mufu },	  { "rsqrt", pl_mufu },
	{ "ex2", pl_mufu },	  { "lg2", pl_mufu },	  { "sin", pl_mufu },
	{ "cos", pl_mufu },	  { "shfl", pl_shfl },	  { "bfe", pl_bitfield },
	{ "bfi", pl_bitfield },	  { "elect", pl_elect },  { "redux", pl_redux },
	{ "vprintf", pl_vprintf },  { "match", pl_match }, { "movmatrix", pl_movmatrix },
	{ "tanh", pl_tanh },	  { "assertfail", pl_assertfail },
	{ "clz", pl_bitcount },	  { "popc", pl_bitcount }, { "bfind", pl_bitcount },
	{ "setmaxnreg", pl_setmaxnreg }, { "trap", pl_trap },
	{ "testp", pl_testp },	  { "copysign", pl_copysign },
	{ "ldu", pl_ldst },	  { "prefetch", pl_prefetch }, { "prefetchu", pl_prefetch },
	{ "isspacep", pl_isspacep }, { "createpolicy", pl_createpolicy },
	{ "griddepcontrol", pl_griddepcontrol }, { "getctarank", pl_getctarank },
	{ "applypriority", pl_cache_line }, { "discard", pl_cache_line },
	{ "tensormap", pl_tensormap }, { "multimem", pl_multimem },
};

/*
 * d = a + b + @imm on register pairs (b may be -1: none), carries through
 * P6; d may not alias a or b.
 */
void pl_add64(struct lower *L, int d, int a, int b, uint32_t imm)
{
	int c = pl_new_vreg(L, 1);
	struct ptx_vinsn *v;

	if (b >= 0) {
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 0, true);
		pl_o_use(v, a, 0);
		pl_o_use(v, b, 0);
		v = pl_emit(L, "ISETP.GT.U32"); /* carry: a.lo > d.lo */
		pl_o_text(v, "P6");
		pl_o_use(v, a, 0);
		pl_o_use(v, d, 0);
		v = pl_emit(L, "SEL");
		pl_o_def(v, c, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
		pl_o_text(v, "!P6");
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, true);
		pl_o_use(v, a, 1);
		pl_o_use(v, c, 0);
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, false);
		pl_o_use(v, d, 1);
		pl_o_use(v, b, 1);
	} else {
		pl_mov_reg(L, d, 0, true, a, 0);
		pl_mov_reg(L, d, 1, false, a, 1);
	}
	if (imm) {
		int t = pl_new_vreg(L, 1);

		v = pl_emit(L, "IADD");
		pl_o_def(v, t, 0, false);
		pl_o_use(v, d, 0);
		pl_o_text(v, "0x%x", imm);
		v = pl_emit(L, "ISETP.GT.U32");
		pl_o_text(v, "P6");
		pl_o_use(v, d, 0);
		pl_o_use(v, t, 0);
		v = pl_emit(L, "SEL");
		pl_o_def(v, c, 0, false);
		pl_o_text(v, "RZ");
		pl_o_text(v, "0x1");
		pl_o_text(v, "!P6");
		v = pl_emit(L, "IADD");
		pl_o_def(v, d, 1, true);
		pl_o_use(v, d, 1);
		pl_o_use(v, c, 0);
		pl_mov_reg(L, d, 0, true, t, 0);
	}
}

/*
 * The frame of .local variables: offsets in the thread's slice of the
 * launch's local memory, which starts at lmem + (global linear thread
 * index) * frame.  The prologue puts each variable's address in a pair.
 */
static void local_prologue(struct lower *L)
{
	static const char *const cta[3] = { "SR_CTAID.X", "SR_CTAID.Y", "SR_CTAID.Z" };
	static const char *const ncta[3] = { "SR_NCTAID.X", "SR_NCTAID.Y", "SR_NCTAID.Z" };
	static const char *const ntid[3] = { "SR_NTID.X", "SR_NTID.Y", "SR_NTID.Z" };
	const struct ptx_func *f = L->f;
	int a = pl_new_vreg(L, 1), n = pl_new_vreg(L, 1), b = pl_new_vreg(L, 1);
	int base = pl_new_vreg(L, 2), fr = pl_new_vreg(L, 2);
	uint32_t off = 0, frame;
	struct ptx_vinsn *v;

	if (f->nlocal > PTX_MAX_LOCALS) {
		ptx_error(L->dg, f->line, 1, "unsupported construct: more than %d .local variables",
			  PTX_MAX_LOCALS);
		L->failed = true;
		return;
	}
	for (int i = 0; i < f->nlocal; i++) {
		uint32_t al = f->local[i].align ? f->local[i].align : 1;

		off = (off + al - 1) / al * al;
		off += f->local[i].size;
	}
	frame = (off + 15) & ~15u;
	if (L->c->spill_mode && !frame)
		frame = 16; /* the spill slots come after: regalloc sets the size */
	if (!frame || frame > VGPU_MAX_LOCAL_BYTES) {
		ptx_error(L->dg, f->line, 1,
			  "unsupported construct: %u bytes of .local (at most %u per thread)",
			  off, VGPU_MAX_LOCAL_BYTES);
		L->failed = true;
		return;
	}
	L->c->frame = frame;
	L->c->frame_locals = off;
	/* a = linear CTA index, n = threads per CTA, a = a * n + linear tid */
	v = pl_emit(L, "S2R");
	pl_o_def(v, a, 0, false);
	pl_o_text(v, "%s", cta[2]);
	for (int d = 1; d >= 0; d--) {
		v = pl_emit(L, "S2R");
		pl_o_def(v, n, 0, false);
		pl_o_text(v, "%s", ncta[d]);
		v = pl_emit(L, "S2R");
		pl_o_def(v, b, 0, false);
		pl_o_text(v, "%s", cta[d]);
		v = pl_emit(L, "IMAD");
		pl_o_def(v, a, 0, false);
		pl_o_use(v, a, 0);
		pl_o_use(v, n, 0);
		pl_o_use(v, b, 0);
	}
	v = pl_emit(L, "S2R");
	pl_o_def(v, n, 0, false);
	pl_o_text(v, "%s", ntid[0]);
	for (int d = 1; d < 3; d++) {
		v = pl_emit(L, "S2R");
		pl_o_def(v, b, 0, false);
		pl_o_text(v, "%s", ntid[d]);
		v = pl_emit(L, "IMUL");
		pl_o_def(v, n, 0, false);
		pl_o_use(v, n, 0);
		pl_o_use(v, b, 0);
	}
	v = pl_emit(L, "S2R");
	pl_o_def(v, b, 0, false);
	pl_o_text(v, "SR_TID");
	v = pl_emit(L, "IMAD");
	pl_o_def(v, a, 0, false);
	pl_o_use(v, a, 0);
	pl_o_use(v, n, 0);
	pl_o_use(v, b, 0);
	/* fr = a * frame (64 bits), base = lmem */
	v = pl_emit(L, "IMUL");
	pl_o_def(v, fr, 0, true);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", frame);
	v->ops[v->nops - 1].frame = true;
	v = pl_emit(L, "IMUL.HI.U32");
	pl_o_def(v, fr, 1, false);
	pl_o_use(v, a, 0);
	pl_o_text(v, "0x%x", frame);
	v->ops[v->nops - 1].frame = true;
	v = pl_emit(L, "LDP.64");
	pl_o_def(v, base, 0, false);
	pl_o_mem(v, -1, "lmem");
	/* the spill slots' base before the .local addresses: a reload or a
	 * store of a spilled value may come at any later instruction */
	if (L->c->spill_mode) {
		L->c->spill_base = pl_new_vreg(L, 2);
		pl_add64(L, L->c->spill_base, base, fr, 0);
	}
	for (int i = 0; i < f->ninsns; i++)
		if (!strcmp(f->insns[i].op, "isspacep") && !L->frame_va1) {
			/* isspacep.local/.global test the window of the frame */
			L->frame_va1 = pl_new_vreg(L, 2) + 1;
			pl_add64(L, L->frame_va1 - 1, base, fr, 0);
		}
	off = 0;
	for (int i = 0; i < f->nlocal; i++) {
		uint32_t al = f->local[i].align ? f->local[i].align : 1;
		int va = pl_new_vreg(L, 2);

		off = (off + al - 1) / al * al;
		L->local_va[i] = va;
		pl_add64(L, va, base, fr, off);
		off += f->local[i].size;
	}
}

/* Does @f name module variable @g (an operand or an address)? */
static bool names_global(const struct ptx_func *f, const struct ptx_gvar *g)
{
	for (int i = 0; i < f->ninsns; i++)
		for (int k = 0; k < f->insns[i].nops; k++)
			if (!strcmp(f->insns[i].ops[k].sym, g->name))
				return true;
	return false;
}

/* The addresses of the module variables the function names. */
static void globals_prologue(struct lower *L)
{
	int base = -1;

	for (int g = 0; g < L->m->nglobals; g++) {
		if (!names_global(L->f, &L->m->globals[g]))
			continue;
		if (base < 0 && L->c->fn_mode) {
			base = pl_new_vreg(L, 2);
			pl_call_data_base(L, base, false); /* a called function has no gdata */
		} else if (base < 0) {
			struct ptx_vinsn *v = pl_emit(L, "LDP.64");

			base = pl_new_vreg(L, 2);
			pl_o_def(v, base, 0, false);
			pl_o_mem(v, -1, "gdata");
		}
		L->global_va[g] = pl_new_vreg(L, 2);
		pl_add64(L, L->global_va[g], base, -1, L->m->globals[g].offset);
	}
}

/* One instruction of the body (L->in), as the loop lowers it. */
void pl_lower_one(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	size_t k;

	if (pl_b128_misuse(L) || pl_call_hook(L) || pl_cmp_hook(L) || pl_int_hook(L) ||
	    pl_half_hook(L))
		return;
	if (!strcmp(in->op, "barrier") && pl_has_mod(in, ".cluster")) {
		pl_barrier_cluster(L);
		return;
	}
	for (k = 0; k < sizeof(lowerers) / sizeof(lowerers[0]); k++)
		if (!strcmp(lowerers[k].op, in->op))
			break;
	if (k == sizeof(lowerers) / sizeof(lowerers[0])) {
		char b[256];

		pl_lerr(L, "unsupported PTX instruction '%s'", pl_spelled(in, b, sizeof(b)));
		return;
	}
	if (in->nops && in->ops[0].has_p && strcmp(in->op, "elect") &&
	    strcmp(in->op, "shfl") && strcmp(in->op, "match")) {
		pl_unsupported(L, "a second predicate destination ('|')");
		return;
	}
	if (!strcmp(in->op, "barrier") && pl_has_mod(in, ".cta") == false &&
	    !pl_has_mod(in, ".sync") && !pl_has_mod(in, ".arrive") &&
	    !pl_has_mod(in, ".red")) {
		pl_unsupported(L, NULL);
		return;
	}
	{
		static const char *const narrow_ops[] = { "setp", "shr", "min", "max",
							  "div", "rem", "mul", "mad" };
		struct ptype t = pl_type_of(in, 0);

		L->narrow_bits = 0;
		for (size_t j = 0; j < sizeof(narrow_ops) / sizeof(narrow_ops[0]); j++)
			if (!strcmp(in->op, narrow_ops[j]) && t.bits && t.bits < 32 &&
			    !t.flt && !t.pred &&
			    (j < 6 || pl_has_mod(in, ".wide") || pl_has_mod(in, ".hi"))) {
				L->narrow_bits = t.bits;
				L->narrow_sign = t.sign;
			}
	}
	if (pl_ld_narrow(L))
		pl_ld_narrow128(L);
	else if (pl_has_mod(in, ".b128") && (!strcmp(in->op, "ld") || !strcmp(in->op, "ldu") ||
					     !strcmp(in->op, "st")))
		pl_ldst128(L);
	else if (pl_has_mod(in, ".b128") && (!strcmp(in->op, "atom") || !strcmp(in->op, "red")))
		pl_atom128(L);
	else if (pl_has_mod(in, ".b128") && !strcmp(in->op, "mov"))
		pl_mov128(L);
	else if (!pl_f64(L))
		lowerers[k].fn(L);
}

int ptx_lower(const struct ptx_module *m, const struct ptx_func *f,
	      struct ptx_diag *dg, struct ptx_code *code)
{
	struct lower L = { .m = m, .f = f, .dg = dg, .c = code, .building = -1 };
	int labels = 0;

	/* labels are K<index of the entry in the module>L<n> */
	for (int i = 0; i < m->nfuncs; i++)
		if (!m->funcs[i].decl && m->funcs[i].entry == f->entry &&
		    !strcmp(m->funcs[i].name, f->name))
			L.kernel = i;

	{
		bool spill = code->spill_mode, fn = code->fn_mode;

		memset(code, 0, sizeof(*code));
		code->spill_mode = spill;
		code->fn_mode = fn;
		code->spill_base = -1;
	}
	L.spv = L.ap = L.fsp = -1;
	L.call_off = malloc(((size_t)f->nregs + 1) * sizeof(*L.call_off));
	if (!L.call_off)
		return -ENOMEM;
	for (int r = 0; r < f->nregs; r++)
		L.call_off[r] = -1;
	for (int r = 0; r < f->nregs; r++)
		pl_new_vreg(&L, f->regs[r].cls == PTX_PRED ? 0 : f->regs[r].cls == PTX_R64 ? 2 :
				f->regs[r].cls == PTX_R128 ? 4 : 1);
	if (m->nglobals) {
		L.global_va = malloc((size_t)m->nglobals * sizeof(*L.global_va));
		if (!L.global_va)
			return -ENOMEM;
		for (int g = 0; g < m->nglobals; g++)
			L.global_va[g] = -1;
	}
	L.cdp_err = -1;
	for (int i = 0; i < f->ninsns && L.cdp_err < 0; i++)
		for (int k = 0; k < f->insns[i].nops; k++)
			if (f->insns[i].ops[k].kind == PTX_O_SYM &&
			    !strcmp(f->insns[i].ops[k].sym, PTX_CDP_ERR)) {
				L.cdp_err = pl_new_vreg(&L, 1);
				break;
			}
	if (f->nlocal || m->nglobals || code->spill_mode || L.cdp_err >= 0) {
		static const struct ptx_insn entry = { .guard = -1 };
		struct ptx_insn at = entry;

		at.line = f->line;
		L.in = &at;
		if (L.cdp_err >= 0) {
			struct ptx_vinsn *v = pl_emit(&L, "MOV");

			/* the device runtime's last error: none yet (ptx_cdp.c) */
			if (code->fn_mode)
				pl_unsupported(&L, "a device-runtime call in a called function");
			pl_o_def(v, L.cdp_err, 0, false);
			pl_o_text(v, "0x0");
		}
		if ((f->nlocal || code->spill_mode) && !code->fn_mode)
			local_prologue(&L);
		if (m->nglobals)
			globals_prologue(&L);
		pl_finish(&L);
		L.in = &entry;
	}
	{
		static const struct ptx_insn entry = { .guard = -1 };
		struct ptx_insn at = entry;

		at.line = f->line;
		L.in = &at;
		pl_call_setup(&L);
		pl_finish(&L);
		L.in = &entry;
	}
	for (int i = 0; i < f->ninsns && dg->errors < 50; i++) {
		const struct ptx_insn *in = &f->insns[i];

		L.in = in;
		if (in->label[0]) {
			struct ptx_vinsn *v = pl_emit(&L, "%s", "");

			v->guard = -1;
			snprintf(v->label, sizeof(v->label), "K%dL%d", L.kernel, labels++);
			pl_finish(&L);
			continue;
		}
		if (!pl_b128_wide(&L))
			pl_lower_one(&L);
		pl_finish(&L);
		L.narrow_bits = 0;
	}
	pl_finish(&L);
	free(L.global_va);
	free(L.call_off);
	return L.failed || dg->errors ? -EINVAL : 0;
}

void ptx_code_free(struct ptx_code *code)
{
	free(code->insns);
	free(code->vregs);
	memset(code, 0, sizeof(*code));
}
