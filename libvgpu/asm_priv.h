/* SPDX-License-Identifier: MIT */
/*
 * libvgpu internals shared by the assembler and the disassembler.
 */
#ifndef VGPU_ASM_PRIV_H
#define VGPU_ASM_PRIV_H

#include <stddef.h>
#include <stdint.h>

/*
 * Semantic checks the field widths alone do not make (barrier counts,
 * register spans and 64-bit pairs, special-register indices, the ranges of
 * the mbarrier, async-copy and cluster immediates) for a word of table
 * row @id.
 * Returns the index of the first offending operand with a message in @msg,
 * or -1.  Defined in asm.c.
 */
int vgpu_asm_check_insn(const uint64_t w[2], int id, char *msg, size_t len);

#endif
