// SPDX-License-Identifier: MIT
/*
 * PTX lowering: tensormap.replace and tensormap.cp_fenceproxy (PTX ISA
 * 9.7.9.26, 9.7.9.27) on vGPU's own tensor map, struct vgpu_tensor_map
 * (uapi/vgpu_hw.h), the 128 bytes CP.ASYNC.BULK.TENSOR reads.
 *
 * tensormap.replace writes the field's word in the map: global_address
 * (base), rank (new_val + 1, new_val being zero-based; a rank past 5 is
 * stored as 0), global_dim, box_dim and element_stride (dims[ord],
 * box[ord], elem_strides[ord]), global_stride (strides[ord], ord 0..3),
 * elemtype (elem_size: 1, 2, 4 or 8 bytes by PTX's table of types, and
 * dtype, the type itself, that reductions use), fill_mode (oob_fill).
 * What vGPU does not do is recorded in a field the
 * copy engine requires to be zero, so that a copy through the map raises
 * TENSOR_MAP until a later replace puts a supported value back:
 * interleave_layout in interleave, swizzle_mode in swizzle,
 * fill_mode 1 (NaN fill) in oob_fill, elemtype 13..15 (sub-byte types)
 * as element size 0; global_stride of ord 4, for which the map has no
 * room, sets channels (nonzero only in an im2col map) for good.  The copy engine checks the values it reads
 * (box 1..256, element strides 1..8, strides multiples of 16, a 16-byte
 * aligned base, the rank the instruction names) when a copy uses the map.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"
#include "ptx_lower_mem.h"
#include "vgpu_hw.h"

#define TM_OFF(f) ((int)offsetof(struct vgpu_tensor_map, f))

/* @o (an immediate or a register of its width) in a vreg: -1 after an error */
static int value_vreg(struct lower *L, const struct ptx_operand *o, bool wide)
{
	int r;

	if (o->kind == PTX_O_REG) {
		if (!pl_is_reg(L, o, wide ? PTX_R64 : PTX_R32))
			return pl_lerr(L, "the new value must be a %d-bit register or an integer",
				       wide ? 64 : 32), -1;
		return o->reg;
	}
	if (o->kind != PTX_O_IMM)
		return pl_lerr(L, "the new value must be a %d-bit register or an integer",
			       wide ? 64 : 32), -1;
	r = pl_new_vreg(L, wide ? 2 : 1);
	for (int i = 0; i < (wide ? 2 : 1); i++) {
		struct ptx_vinsn *v = pl_emit(L, "MOV");

		pl_o_def(v, r, i, wide && !i);
		pl_o_text(v, "0x%x", (unsigned)((uint64_t)o->imm >> (32 * i)));
	}
	return r;
}

/* a constant @x in a new 32-bit vreg */
static int const_vreg(struct lower *L, uint32_t x)
{
	struct ptx_operand o = { .kind = PTX_O_IMM, .imm = x };

	return value_vreg(L, &o, false);
}

static const struct {
	const char *name;
	bool ord, wide, imm; /* takes ord; .b64; new_val an immediate */
	int max;	     /* the largest immediate PTX defines (imm) */
} fields[] = {
	{ ".global_address", false, true, false, 0 },
	{ ".rank", false, false, false, 0 },
	{ ".box_dim", true, false, false, 0 },
	{ ".global_dim", true, false, false, 0 },
	{ ".global_stride", true, true, false, 0 },
	{ ".element_stride", true, false, false, 0 },
	{ ".elemtype", false, false, true, 15 },
	{ ".interleave_layout", false, false, true, 2 },
	{ ".swizzle_mode", false, false, true, 4 },
	{ ".fill_mode", false, false, true, 1 },
};

/* PTX's .elemtype values (u8 u16 u32 s32 u64 s64 f16 f32 f32.ftz f64 bf16
 * tf32 tf32.ftz) as element sizes; 13..15, the packed sub-byte types: 0 */
static const uint8_t elem_bytes[16] = { 1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4, 0, 0, 0 };

static void replace(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	enum space sp = pl_space_of(in);
	int f = -1, nops, val, off, bits = 32;
	const struct ptx_operand *nv;
	struct ptx_vinsn *v;

	for (int i = 0; i < (int)(sizeof(fields) / sizeof(fields[0])); i++)
		if (pl_has_mod(in, fields[i].name))
			f = i;
	if (f < 0 || !pl_has_mod(in, ".tile"))
		return (void)pl_unsupported(L, "tensormap.replace other than .tile of a field "
					    "sm_90a has");
	if (!pl_has_mod(in, ".b1024"))
		return (void)pl_lerr(L, "tensormap.replace takes .b1024");
	if (!pl_has_mod(in, fields[f].wide ? ".b64" : ".b32"))
		return (void)pl_lerr(L, "%s takes .%s", fields[f].name, fields[f].wide ? "b64" : "b32");
	if (pl_has_mod(in, ".shared") || (sp != SP_NONE && sp != SP_GLOBAL &&
					  !pl_has_mod(in, ".shared::cta")))
		return (void)pl_lerr(L, "tensormap.replace takes .global, .shared::cta or a "
				     "generic address");
	nops = fields[f].ord ? 3 : 2;
	if (!pl_want_ops(L, nops))
		return;
	if (in->ops[0].kind != PTX_O_MEM)
		return (void)pl_lerr(L, "tensormap.replace takes the map's address");
	nv = &in->ops[nops - 1];
	if (fields[f].ord && (in->ops[1].kind != PTX_O_IMM || in->ops[1].imm < 0 ||
			      in->ops[1].imm > 4))
		return (void)pl_lerr(L, "the ordinal must be an integer 0..4");
	if (fields[f].imm && (nv->kind != PTX_O_IMM || nv->imm < 0 || nv->imm > fields[f].max))
		return (void)pl_lerr(L, "%s takes an integer 0..%d", fields[f].name, fields[f].max);
	switch (f) {
	case 0: /* global_address */
		off = TM_OFF(base);
		bits = 64;
		val = value_vreg(L, nv, true);
		break;
	case 1: { /* rank: new_val + 1, 0 (no copy's rank) past 5 */
		int x = value_vreg(L, nv, false), p = pl_new_vreg(L, 0);

		if (x < 0)
			return;
		val = pl_new_vreg(L, 1);
		v = pl_emit(L, "IADD");
		pl_o_def(v, val, 0, false);
		pl_o_use(v, x, 0);
		pl_o_text(v, "0x1");
		v = pl_emit(L, "ISETP.GT.U32");
		pl_o_pdef(v, p);
		pl_o_use(v, x, 0);
		pl_o_text(v, "0x%x", VGPU_TMAP_MAX_RANK - 1);
		v = pl_emit(L, "SEL");
		pl_o_def(v, val, 0, false);
		pl_o_text(v, "RZ");
		pl_o_use(v, val, 0);
		pl_o_puse(v, p, false);
		off = TM_OFF(rank);
		bits = 8;
		break;
	}
	case 2:
	case 3:
	case 5: /* box_dim, global_dim, element_stride */
		off = (f == 2 ? TM_OFF(box) : f == 3 ? TM_OFF(dims) : TM_OFF(elem_strides)) +
		      4 * (int)in->ops[1].imm;
		val = value_vreg(L, nv, false);
		break;
	case 4: /* global_stride: strides[ord]; ord 4 has no room */
		if (in->ops[1].imm == VGPU_TMAP_MAX_RANK - 1) {
			/* a tile map with channels: invalid from now on */
			off = TM_OFF(channels);
			bits = 8;
			val = const_vreg(L, 1);
		} else {
			off = TM_OFF(strides) + 8 * (int)in->ops[1].imm;
			bits = 64;
			val = value_vreg(L, nv, true);
		}
		break;
	case 6: /* elemtype: elem_size, then dtype */
		off = TM_OFF(elem_size);
		bits = 8;
		val = const_vreg(L, elem_bytes[nv->imm]);
		if (!L->failed) {
			pl_mem_vreg(L, false, &in->ops[0], sp, off, bits, val);
			off = TM_OFF(dtype);
			val = const_vreg(L, elem_bytes[nv->imm] ? (uint32_t)nv->imm + 1 : 0);
		}
		break;
	default: /* interleave_layout, swizzle_mode, fill_mode: 0 the only one */
		/* swizzle and interleave must be 0 (vGPU has neither) */
		off = f == 7 ? TM_OFF(interleave) : f == 8 ? TM_OFF(swizzle) : TM_OFF(oob_fill);
		bits = 8;
		val = nv->imm ? const_vreg(L, (uint32_t)nv->imm) : -1;
		break;
	}
	if (L->failed)
		return;
	pl_mem_vreg(L, false, &in->ops[0], sp, off, bits, val);
}

/*
 * tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.scope
 *	.sync.aligned [dst], [src], 128
 * The 128 bytes from shared to global memory, 8 at a time, between two
 * MEMBARs of the scope: the release orders this thread's writes (of the
 * map in shared memory among them) before the copy, and the proxy fence
 * (vGPU's copy engine reads the one memory the warps write: nothing more)
 * the copy before what follows.
 */
static void cp_fenceproxy(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *scope = pl_has_mod(in, ".sys") ? "SYS" : pl_has_mod(in, ".cta") ? "CTA" :
			    (pl_has_mod(in, ".gpu") || pl_has_mod(in, ".cluster")) ? "GPU" : NULL;

	if (!pl_has_mod(in, ".global") || !pl_has_mod(in, ".shared::cta") ||
	    !pl_has_mod(in, ".tensormap::generic") || !pl_has_mod(in, ".release") || !scope ||
	    !pl_has_mod(in, ".sync") || !pl_has_mod(in, ".aligned"))
		return (void)pl_lerr(L, "expected tensormap.cp_fenceproxy.global.shared::cta"
				     ".tensormap::generic.release.SCOPE.sync.aligned");
	if (!pl_want_ops(L, 3))
		return;
	if (in->ops[0].kind != PTX_O_MEM || in->ops[1].kind != PTX_O_MEM ||
	    in->ops[2].kind != PTX_O_IMM || in->ops[2].imm != 128)
		return (void)pl_lerr(L, "tensormap.cp_fenceproxy takes [dst], [src], 128");
	pl_emit(L, "MEMBAR.%s", scope);
	for (int i = 0; i < 128 && !L->failed; i += 8) {
		int t = pl_new_vreg(L, 2);

		if (pl_mem_vreg(L, true, &in->ops[1], SP_SHARED, i, 64, t))
			pl_mem_vreg(L, false, &in->ops[0], SP_GLOBAL, i, 64, t);
	}
	pl_emit(L, "MEMBAR.%s", scope);
}

void pl_tensormap(struct lower *L)
{
	if (pl_has_mod(L->in, ".replace"))
		replace(L);
	else if (pl_has_mod(L->in, ".cp_fenceproxy"))
		cp_fenceproxy(L);
	else
		pl_unsupported(L, NULL);
}
