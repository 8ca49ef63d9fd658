/* SPDX-License-Identifier: MIT */
/*
 * PTX lowering: what the memory lowerers share (ptx_lower_mem.c, which
 * defines these, and ptx_lower_atom.c).
 */
#ifndef PTX_LOWER_MEM_H
#define PTX_LOWER_MEM_H

#include "ptx_lower.h"

enum space { SP_NONE, SP_PARAM, SP_GLOBAL, SP_SHARED, SP_LOCAL, SP_OTHER };

/* The state space an instruction names (SP_NONE: generic). */
enum space pl_space_of(const struct ptx_insn *in);
/*
 * The address of a memory operand in *@sp: sets *base (vreg or -1) and the
 * offset text.  Global (and local) addresses are pairs; shared ones the
 * low word.  A generic operand naming a variable takes the variable's
 * space; one in a register stays SP_NONE (decided at run time).
 */
bool pl_address(struct lower *L, const struct ptx_operand *o, enum space *sp,
		int *base, char *off, size_t len);
/*
 * A generic access through register pair @base: sets *@sh and *@gl to
 * predicates that select the shared and the global form (each also
 * under the instruction's own guard).
 */
void pl_generic_split(struct lower *L, int base, int *sh, int *gl);
/*
 * The operands of a load, store or atomic without its .L2::cache_hint
 * policy (the last operand): -1 on an error.
 */
int pl_hint_nops(struct lower *L);
/* an mbarrier (or other shared) address operand as one register; -2: an
 * error (ptx_lower_sync.c) */
int pl_shared_addr_reg(struct lower *L, const struct ptx_operand *o);
/*
 * A global address operand of an asynchronous copy ([%rd], [%rd+imm],
 * [var], [var+imm]) as one register pair (the core's copies take [Rn]
 * only): the register itself without an offset, else a new pair; -2: an
 * error (ptx_lower_bulk.c).
 */
int pl_global_pair(struct lower *L, const struct ptx_operand *o);
/* a [Rn] operand of register @r */
void pl_use_addr(struct ptx_vinsn *v, int r);
/* a load or store of @bits (8, 32, 64) of vreg @val at @mem + @add, in
 * shared, global or generic memory; false after an error */
bool pl_mem_vreg(struct lower *L, bool load, const struct ptx_operand *mem, enum space sp,
		 int add, int bits, int val);
/* ptx_lower_bulk.c: cp.async.bulk, cp.reduce.async.bulk and their
 * tensor and prefetch forms (not commit_group / wait_group) */
void pl_bulk(struct lower *L);

#endif
