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
 * or -1.  Defined in asm/asm_check.c.
 */
int vgpu_asm_check_insn(const uint64_t w[2], int id, char *msg, size_t len);
/* vgpu_asm_check_insn's answer when the fault is the mnemonic's (its
 * modifiers), not an operand's */
#define VGPU_ASM_CHECK_MNEMONIC VGPU_ISA_MAX_OPS

/*
 * Can @name (NUL-terminated) name a kernel, parameter or shared
 * allocation in assembly text: an identifier that is no register,
 * predicate, special register or sink?  Defined in asm/asm_parse.c; the
 * object reader holds names to it.
 */
int vgpu_asm_name_ok(const char *name);

/*
 * Write into @data (a copy of @obj's module data) the addresses its
 * relocations name, the data lying at device address @va.  Defined in
 * object.c; the object reader has checked every relocation.
 */
struct vgpu_object;
__attribute__((visibility("hidden")))
void vgpu_object_relocate(const struct vgpu_object *obj, uint64_t va, uint8_t *data);

/*
 * Text built into a caller's buffer of @cap bytes at @p, snprintf-style:
 * @n counts what the whole text needs, even past @cap (which truncates).
 */
struct sbuf {
	char *p;
	size_t cap, n;
};

/* Defined in disasm.c. */
__attribute__((visibility("hidden"), format(printf, 2, 3)))
void sb_printf(struct sbuf *b, const char *fmt, ...);

#endif
