/* SPDX-License-Identifier: MIT */
/*
 * vGPU disassembler: instruction words and whole objects to canonical text
 * that vgpu_assemble() turns back into identical bytes.
 *
 * Canonical means: the table's own mnemonic (never an alias), modifiers
 * omitted only where they equal their group's default, optional operands
 * omitted only where they equal their default, immediates in hex.  A word
 * that vgpu_isa_decode() rejects, or that the assembler would refuse
 * (vgpu_asm_check_insn), is printed as a .word with the reason.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "vgpu_asm.h"


/* Output buffer with snprintf semantics: @n counts what would be written. */
void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	size_t room = b->n < b->cap ? b->cap - b->n : 0;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(room ? b->p + b->n : NULL, room, fmt, ap);
	va_end(ap);
	if (r > 0)
		b->n += (size_t)r;
}

/* Labels for branch targets: NULL prints absolute addresses. */
struct labels {
	const uint8_t *mark; /* one per 16-byte slot, code_size / 16 + 1 */
	uint32_t code_size;
};


static const char *const ptype_names[] = {
	[VGPU_PARAM_U32] = "u32", [VGPU_PARAM_S32] = "s32",
	[VGPU_PARAM_F32] = "f32", [VGPU_PARAM_U64] = "u64",
	[VGPU_PARAM_S64] = "s64", [VGPU_PARAM_PTR] = "ptr",
	[VGPU_PARAM_LOCAL] = "local", [VGPU_PARAM_DATA] = "data",
	[VGPU_PARAM_PRINTF] = "printf", [VGPU_PARAM_PARAMS] = "params",
	[VGPU_PARAM_U8] = "u8", [VGPU_PARAM_U16] = "u16", [VGPU_PARAM_ENVREGS] = "envregs",
};

static void put_reg(struct sbuf *b, unsigned r)
{
	if (r == VGPU_RZ)
		sb_printf(b, "RZ");
	else
		sb_printf(b, "R%u", r);
}

static void put_pred(struct sbuf *b, unsigned p, bool neg)
{
	if (p == VGPU_PT)
		sb_printf(b, "%sPT", neg ? "!" : "");
	else
		sb_printf(b, "%sP%u", neg ? "!" : "", p);
}

static void put_signed(struct sbuf *b, int64_t v)
{
	if (v < 0)
		sb_printf(b, "-0x%" PRIx64, (uint64_t)-(v + 1) + 1);
	else
		sb_printf(b, "0x%" PRIx64, (uint64_t)v);
}

static void put_sreg(struct sbuf *b, unsigned idx)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_SREGS; i++)
		if (vgpu_isa_sregs[i].index == idx)
			sb_printf(b, "%s", vgpu_isa_sregs[i].name);
}

/* [Rn] of a register-only address operand (field @pos, @width). */
static void put_reg_addr(struct sbuf *b, const uint64_t w[2], unsigned pos,
			 unsigned width)
{
	sb_printf(b, "[");
	put_reg(b, (unsigned)vgpu_field_get(w, pos, width));
	sb_printf(b, "]");
}

static void put_mem(struct sbuf *b, const uint64_t w[2])
{
	unsigned ra = (unsigned)vgpu_get(w, VGPU_F_RA);
	int64_t off = (int32_t)((uint32_t)vgpu_get(w, VGPU_F_OFF24) << 8) >> 8;

	sb_printf(b, "[");
	if (ra != VGPU_RZ) {
		put_reg(b, ra);
		if (off)
			sb_printf(b, "%s", off < 0 ? "-" : "+");
		if (off)
			sb_printf(b, "0x%" PRIx64, (uint64_t)(off < 0 ? -off : off));
	} else {
		put_signed(b, off);
	}
	sb_printf(b, "]");
}

static int64_t branch_target(const uint64_t w[2], uint32_t pc)
{
	return (int64_t)pc + (int32_t)(uint32_t)vgpu_get(w, VGPU_F_IMM32);
}

static bool has_label(const struct labels *lb, int64_t t)
{
	return lb && t >= 0 && t <= lb->code_size && !(t % VGPU_INSN_BYTES) &&
	       lb->mark[t / VGPU_INSN_BYTES];
}

static void put_target(struct sbuf *b, const uint64_t w[2], uint32_t pc,
		       const struct labels *lb)
{
	int64_t t = branch_target(w, pc);

	if (has_label(lb, t))
		sb_printf(b, "L_0x%" PRIx64, (uint64_t)t);
	else
		put_signed(b, t);
}

static void put_operand(struct sbuf *b, const uint64_t w[2], unsigned kind,
			uint32_t pc, const struct labels *lb)
{
	switch (kind) {
	case VGPU_OPK_RD:
	case VGPU_OPK_RDN: put_reg(b, (unsigned)vgpu_get(w, VGPU_F_RD)); break;
	case VGPU_OPK_RA:
	case VGPU_OPK_STK: put_reg(b, (unsigned)vgpu_get(w, VGPU_F_RA)); break;
	case VGPU_OPK_RB: put_reg(b, (unsigned)vgpu_get(w, VGPU_F_RB)); break;
	case VGPU_OPK_RC: put_reg(b, (unsigned)vgpu_get(w, VGPU_F_RC)); break;
	case VGPU_OPK_IMM:
	case VGPU_OPK_FIMM:
		sb_printf(b, "0x%" PRIx64, vgpu_get(w, VGPU_F_IMM32));
		break;
	case VGPU_OPK_BARID: sb_printf(b, "0x%" PRIx64, vgpu_get(w, VGPU_F_BARID)); break;
	case VGPU_OPK_CNT: sb_printf(b, "0x%" PRIx64, vgpu_get(w, VGPU_F_CNT)); break;
	case VGPU_OPK_PP:
		put_pred(b, (unsigned)vgpu_get(w, VGPU_F_PP),
			 vgpu_get(w, VGPU_F_PP_NOT));
		break;
	case VGPU_OPK_PU: put_pred(b, (unsigned)vgpu_get(w, VGPU_F_PU), false); break;
	case VGPU_OPK_SR: put_sreg(b, (unsigned)vgpu_get(w, VGPU_F_SR)); break;
	case VGPU_OPK_MEM: put_mem(b, w); break;
	case VGPU_OPK_TARGET: put_target(b, w, pc, lb); break;
	case VGPU_OPK_RD2: /* RZ: the sink, "_" */
		if (vgpu_get(w, VGPU_F_RD) == VGPU_RZ)
			sb_printf(b, "_");
		else
			put_reg(b, (unsigned)vgpu_get(w, VGPU_F_RD));
		break;
	case VGPU_OPK_RC2:
	case VGPU_OPK_RCN: put_reg(b, (unsigned)vgpu_get(w, VGPU_F_RC)); break;
	case VGPU_OPK_SA:
	case VGPU_OPK_GA: put_reg_addr(b, w, VGPU_F_RA); break;
	case VGPU_OPK_GB: put_reg_addr(b, w, VGPU_F_RB); break;
	case VGPU_OPK_SC:
	case VGPU_OPK_GC: put_reg_addr(b, w, VGPU_F_RC); break;
	case VGPU_OPK_SE: put_reg_addr(b, w, VGPU_F_RE); break;
	default: break;
	}
}

/* Does optional operand @kind hold the value it takes when omitted? */
static bool is_default(const uint64_t w[2], unsigned kind)
{
	switch (kind) {
	case VGPU_OPK_BARID: return !vgpu_get(w, VGPU_F_BARID);
	case VGPU_OPK_CNT: return !vgpu_get(w, VGPU_F_CNT);
	case VGPU_OPK_PU: return vgpu_get(w, VGPU_F_PU) == VGPU_PT;
	case VGPU_OPK_PP:
		return vgpu_get(w, VGPU_F_PP) == VGPU_PT && !vgpu_get(w, VGPU_F_PP_NOT);
	default: return false;
	}
}

static void put_word(struct sbuf *b, const uint64_t w[2], const char *why)
{
	sb_printf(b, ".word 0x%016" PRIx64 ", 0x%016" PRIx64 " ; // %s", w[0],
		  w[1], why);
}

static void put_mnemonic(struct sbuf *b, const uint64_t w[2],
			 const struct vgpu_isa_desc *d)
{
	unsigned pg = (unsigned)vgpu_get(w, VGPU_F_PG);
	bool pg_not = vgpu_get(w, VGPU_F_PG_NOT);

	if (pg != VGPU_PT || pg_not) {
		sb_printf(b, "@");
		put_pred(b, pg, pg_not);
		sb_printf(b, " ");
	}
	sb_printf(b, "%s", d->mnemonic);
	for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->mods[i]];
		unsigned v = vgpu_isa_mod(w, d->mods[i]);

		if (g->def < 0 || v != (unsigned)g->def)
			sb_printf(b, ".%s", vgpu_isa_modval_name(d->mods[i], v));
	}
}

static void put_insn(struct sbuf *b, const uint64_t w[2], uint32_t pc,
		     const struct labels *lb)
{
	int id = vgpu_isa_decode(w);
	const struct vgpu_isa_desc *d;
	const char *sep = " ";
	char msg[160], why[200];

	if (id < 0) {
		put_word(b, w, "illegal");
		return;
	}
	d = &vgpu_isa_table[id];
	if (vgpu_asm_check_insn(w, id, msg, sizeof(msg)) >= 0) {
		/* name the instruction unless the message already does */
		if (strncmp(msg, d->mnemonic, strlen(d->mnemonic)))
			snprintf(why, sizeof(why), "%s: %s", d->mnemonic, msg);
		else
			snprintf(why, sizeof(why), "%s", msg);
		put_word(b, w, why);
		return;
	}
	put_mnemonic(b, w, d);
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		unsigned kind = VGPU_OPK_KIND(d->ops[i]);

		if ((d->ops[i] & VGPU_OPK_OPTIONAL) && is_default(w, kind))
			continue;
		sb_printf(b, "%s", sep);
		put_operand(b, w, kind, pc, lb);
		sep = ", ";
	}
	for (unsigned i = 0; i < VGPU_ISA_NUM_ANNOTS; i++) {
		uint64_t v = vgpu_field_get(w, vgpu_isa_annots[i].pos, vgpu_isa_annots[i].width);

		if (v)
			sb_printf(b, " $%s=%" PRIu64, vgpu_isa_annots[i].name, v);
	}
	sb_printf(b, " ;");
}

int vgpu_disasm_insn(const uint64_t w[2], uint32_t pc, char *buf, size_t len)
{
	struct sbuf b = { buf, len, 0 };

	if (buf && len)
		buf[0] = 0;
	put_insn(&b, w, pc, NULL);
	return b.n > INT32_MAX ? INT32_MAX : (int)b.n;
}

/* ---- whole objects ---- */

static void load_word(const uint8_t *p, uint64_t w[2])
{
	w[0] = w[1] = 0;
	for (unsigned i = 0; i < 16; i++)
		w[i / 8] |= (uint64_t)p[i] << (8 * (i % 8));
}

static bool is_branch(const struct vgpu_isa_desc *d)
{
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++)
		if (VGPU_OPK_KIND(d->ops[i]) == VGPU_OPK_TARGET)
			return true;
	return false;
}

static void mark_targets(const struct vgpu_object *obj, uint8_t *mark)
{
	char msg[160];

	for (uint32_t pc = 0; pc < obj->code_size; pc += VGPU_INSN_BYTES) {
		uint64_t w[2];
		int id;
		int64_t t;

		load_word(obj->code + pc, w);
		id = vgpu_isa_decode(w);
		if (id < 0 || !is_branch(&vgpu_isa_table[id]) ||
		    vgpu_asm_check_insn(w, id, msg, sizeof(msg)) >= 0)
			continue;
		t = branch_target(w, pc);
		if (t >= 0 && t <= obj->code_size && !(t % VGPU_INSN_BYTES))
			mark[t / VGPU_INSN_BYTES] = 1;
	}
}

static void print_kernel(const struct vgpu_object *obj,
			 const struct vgpu_obj_kernel *k, bool first, FILE *out)
{
	fprintf(out, "%s.kernel %.*s\n", first ? "" : "\n", VGPU_OBJ_NAME_MAX,
		k->name);
	for (uint32_t i = 0; i < k->nparams; i++) {
		const struct vgpu_obj_param *p;
		const char *ty;

		if ((uint64_t)k->first_param + i >= obj->nparams)
			break;
		p = &obj->params[k->first_param + i];
		ty = p->type < sizeof(ptype_names) / sizeof(ptype_names[0]) &&
				     ptype_names[p->type]
			     ? ptype_names[p->type]
			     : "u32";
		fprintf(out, ".param %s %.*s\n", ty, VGPU_OBJ_NAME_MAX, p->name);
	}
	if (k->smem_static)
		fprintf(out, ".shared %" PRIu32 "\n", k->smem_static);
	if (k->local_bytes)
		fprintf(out, ".local %" PRIu32 "\n", k->local_bytes);
}

/* Kernel indices in entry order (stable), for printing at their entries. */
static uint32_t *kernel_order(const struct vgpu_object *obj)
{
	uint32_t *ord = malloc((obj->nkernels ? obj->nkernels : 1) * sizeof(*ord));

	if (!ord)
		return NULL;
	for (uint32_t i = 0; i < obj->nkernels; i++) {
		uint32_t j = i;

		while (j && obj->kernels[ord[j - 1]].entry > obj->kernels[i].entry) {
			ord[j] = ord[j - 1];
			j--;
		}
		ord[j] = i;
	}
	return ord;
}

static void print_code(const struct vgpu_object *obj, const uint32_t *ord,
		       const struct labels *lb, FILE *out)
{
	uint32_t k = 0;
	char line[512];

	for (uint32_t pc = 0; pc <= obj->code_size; pc += VGPU_INSN_BYTES) {
		struct sbuf b = { line, sizeof(line), 0 };
		uint64_t w[2];

		for (; k < obj->nkernels && obj->kernels[ord[k]].entry <= pc; k++)
			print_kernel(obj, &obj->kernels[ord[k]], !k, out);
		if (lb->mark[pc / VGPU_INSN_BYTES])
			fprintf(out, "L_0x%" PRIx32 ":\n", pc);
		if (pc == obj->code_size)
			break;
		load_word(obj->code + pc, w);
		put_insn(&b, w, pc, lb);
		fprintf(out, "\t%s\n", line);
	}
	for (; k < obj->nkernels; k++)
		print_kernel(obj, &obj->kernels[ord[k]], !k, out);
}

int vgpu_disasm_object(const struct vgpu_object *obj, FILE *out)
{
	struct labels lb;
	uint8_t *mark;
	uint32_t *ord;

	if (!obj || !out || obj->code_size % VGPU_INSN_BYTES ||
	    (obj->code_size && !obj->code) || (obj->nkernels && !obj->kernels) ||
	    (obj->nparams && !obj->params))
		return -EINVAL;
	mark = calloc(obj->code_size / VGPU_INSN_BYTES + 1, 1);
	ord = kernel_order(obj);
	if (!mark || !ord) {
		free(mark);
		free(ord);
		return -ENOMEM;
	}
	mark_targets(obj, mark);
	lb = (struct labels){ mark, obj->code_size };
	if (obj->data_size && obj->data) { /* module data first: its name is its offset */
		fprintf(out, ".global __data, %" PRIu32 ", 16\n", obj->data_size);
		for (uint32_t i = 0; i < obj->data_size; i += 16) {
			uint32_t n = obj->data_size - i < 16 ? obj->data_size - i : 16;
			bool zero = true;

			for (uint32_t j = 0; j < n; j++)
				zero &= !obj->data[i + j];
			if (zero)
				continue;
			fprintf(out, ".bytes __data+%" PRIu32, i);
			for (uint32_t j = 0; j < n; j++)
				fprintf(out, ", %u", obj->data[i + j]);
			fputc('\n', out);
		}
		for (uint32_t i = 0; i < obj->nrelocs; i++) {
			const struct vgpu_obj_reloc *x = &obj->relocs[i];

			if (x->kind == VGPU_RELOC_HEAP64) {
				fprintf(out, ".heapaddr __data+%" PRIu32 "\n", x->offset);
				continue;
			}
			if (x->kind == VGPU_RELOC_KDESC) {
				fprintf(out, ".kdesc __data+%" PRIu32 ", %" PRIu64 "\n", x->offset,
					x->target);
				continue;
			}
			fprintf(out, ".dataaddr __data+%" PRIu32 ", __data%+" PRId64, x->offset,
				(int64_t)x->target);
			if (x->kind != VGPU_RELOC_ADDR64)
				fprintf(out, ", %u", x->kind - VGPU_RELOC_ADDR_BYTE0);
			fputc('\n', out);
		}
	}
	print_code(obj, ord, &lb, out);
	free(mark);
	free(ord);
	return ferror(out) ? -EIO : 0;
}
