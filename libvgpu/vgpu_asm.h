/* SPDX-License-Identifier: MIT */
/*
 * libvgpu assembler, disassembler and object files.
 *
 * Text syntax (see docs/assembly.md):
 *   [@[!]Pn] MNEMONIC[.MOD...] op, op, ... [$sched[=N]] [$req[=N]] [$wsb[=N]] ;
 *   label:            // comment
 *   .kernel NAME      .param TYPE NAME      .shared [NAME,] BYTES[, ALIGN]
 *
 * All functions return 0 or a negative errno.
 */
#ifndef VGPU_ASM_H
#define VGPU_ASM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "vgpu_isa.h"

#define VGPU_API __attribute__((visibility("default")))

/**
 * struct vgpu_object - an assembled program: code plus kernel metadata
 * @code:      @code_size bytes of instructions (multiple of 16)
 * @kernels:   @nkernels kernels; a source without .kernel gets one kernel
 *             named "main" at entry 0
 * @params:    @nparams parameters, all kernels' (see vgpu_obj_kernel)
 * @relocs:    @nrelocs relocations of @data: program_create() writes the
 *             addresses they name into the program's copy of the data
 *
 * Owned by the caller; free with vgpu_object_fini().
 */
struct vgpu_object {
	uint8_t *code;
	uint32_t code_size;
	struct vgpu_obj_kernel *kernels;
	uint32_t nkernels;
	struct vgpu_obj_param *params;
	uint32_t nparams;
	uint8_t *data; /* module data (.global), @data_size bytes, may be NULL */
	uint32_t data_size;
	/* addresses in the module data, for the loader (.dataaddr) */
	struct vgpu_obj_reloc *relocs;
	uint32_t nrelocs;
};

/*
 * Assemble @len bytes of @src.  @filename is used in messages.  On error
 * returns -EINVAL and writes every diagnostic, one per line, as
 * "FILE:LINE:COL: error: MESSAGE" into @err (truncated to @errlen).
 */
VGPU_API int vgpu_assemble(const char *src, size_t len, const char *filename,
			   struct vgpu_object *out, char *err, size_t errlen);

VGPU_API void vgpu_object_fini(struct vgpu_object *obj);

/* Object file <-> memory (format in uapi/vgpu_isa.h). */
VGPU_API int vgpu_object_write(const struct vgpu_object *obj, uint8_t **buf,
			       size_t *len);
VGPU_API int vgpu_object_read(const void *buf, size_t len,
			      struct vgpu_object *out, char *err, size_t errlen);

/*
 * Load either an object file or assembly text (detected by the magic)
 * from @path.
 */
VGPU_API int vgpu_object_load_file(const char *path, struct vgpu_object *out,
				   char *err, size_t errlen);

VGPU_API const struct vgpu_obj_kernel *
vgpu_object_find_kernel(const struct vgpu_object *obj, const char *name);

/*
 * Disassemble one instruction at byte offset @pc into @buf (no trailing
 * newline), e.g. "BAR.SYNC 0x0, 0x40 ;".  Invalid words print as
 * ".word 0x..., 0x... ; // illegal".  Returns the length written.
 */
VGPU_API int vgpu_disasm_insn(const uint64_t w[2], uint32_t pc, char *buf,
			      size_t len);

/*
 * Disassemble a whole object to @out as re-assemblable text: directives,
 * generated labels for branch targets, one instruction per line.
 * Assembling the result gives identical bytes.
 */
VGPU_API int vgpu_disasm_object(const struct vgpu_object *obj, FILE *out);

#endif /* VGPU_ASM_H */
