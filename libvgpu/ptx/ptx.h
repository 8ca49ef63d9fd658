/* SPDX-License-Identifier: MIT */
/*
 * The PTX front end: a compiler from PTX text to vGPU assembly, in stages.
 *
 *   ptx_lex.c     characters -> tokens (PTX's identifiers, %regs, 0f floats)
 *   ptx_parse.c   tokens -> module: directives, .global/.const/.shared
 *                 variables, .entry/.func headers with their params
 *   ptx_parse_body.c function bodies: .reg/.local/.shared, labels, insns,
 *                 calls; nested { } scopes flattened
 *   ptx_inline.c  calls of .func inlined into each entry
 *   ptx_lower.c   PTX instructions -> vGPU instructions on virtual registers
 *   ptx_regalloc.c liveness over the control-flow graph, linear scan onto
 *                 R0..R253 (pairs and ranges consecutive) and P0..P5
 *   ptx.c         the driver: emit assembly text, assemble it (../asm/), the
 *                 public API (vgpu_program_from_ptx, vgpu_ptx_to_asm)
 *
 * Every diagnostic names the PTX file, line and column and the construct.
 */
#ifndef VGPU_PTX_H
#define VGPU_PTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PTX_NAME_MAX 96
/* bytes of reserved shared memory a kernel that names it gets (ptx.c) */
#define PTX_RESERVED_SMEM 1024
#define PTX_MAX_OPS 12
#define PTX_MAX_MODS 12

struct ptx_diag {
	const char *file;
	char *log;
	size_t loglen, used;
	int errors;
};

__attribute__((format(printf, 4, 5))) void
ptx_error(struct ptx_diag *dg, int line, int col, const char *fmt, ...);

/* ---- the parsed module ---- */

enum ptx_rclass { PTX_R32, PTX_R64, PTX_PRED, PTX_R128 /* .b128: four words */ };

struct ptx_reg {
	char name[PTX_NAME_MAX];
	uint8_t cls;
	uint8_t bits; /* declared width: 8, 16, 32, 64, 128 (1 for .pred) */
	bool is_float;
	bool is_param; /* a call sequence's .param (ptx_inline.c) */
	uint32_t psize, palign; /* is_param: its bytes and alignment (ptx_call.c) */
};

enum ptx_okind {
	PTX_O_REG,  /* %r1 */
	PTX_O_IMM,  /* 42, -1, 0f3F800000 */
	PTX_O_SYM,  /* a name: label, variable, parameter, special register */
	PTX_O_MEM,  /* [base+off] */
	PTX_O_VEC,  /* {%r1, %r2} */
	PTX_O_SINK, /* _ */
};

struct ptx_operand {
	uint8_t kind;
	bool neg;     /* !%p */
	bool fimm;    /* 0f / 0d literal: imm holds the raw bits */
	int reg;      /* REG; MEM base register or -1 */
	bool has_p;   /* d|p: a second, predicate destination */
	int preg;     /* its register, -1 for _ */
	int64_t imm;  /* IMM; MEM offset */
	char sym[PTX_NAME_MAX]; /* SYM; MEM base symbol ("" if none) */
	int nvec;
	int vec[8];   /* VEC registers (.v8 at most), -1 for _ */
	int col;
};

struct ptx_insn {
	int line, col;
	char label[PTX_NAME_MAX]; /* a label definition: op is empty */
	int guard;		  /* predicate register or -1 */
	bool guard_not;
	char op[32];
	bool call_ret; /* call (ret), f, (args): ops[0] is ret, then f, then args */
	char mods[PTX_MAX_MODS][40];
	int nmods;
	struct ptx_operand ops[PTX_MAX_OPS];
	int nops;
};

struct ptx_var {
	char name[PTX_NAME_MAX];
	uint32_t size, align;
	int line;
};

struct ptx_param {
	char name[PTX_NAME_MAX];
	uint32_t size, align;
	char type[8]; /* u32, s32, f32, u64, s64, b8 (array) ... */
	int line;
	bool reg; /* declared .reg (a .func's): "name$reg", and register "name" */
};

/*
 * An .entry's performance-tuning and cluster directives (PTX ISA 11.4,
 * 11.7), 0 where absent.  The launch checks them (libvgpu/launch.c).
 */
struct ptx_kattrs {
	uint32_t reqntid[3], maxntid[3];
	uint32_t reqnctapercluster[3];
	uint32_t maxclusterrank, minnctapersm, maxnreg;
	bool explicitcluster;
};

struct ptx_func {
	char name[PTX_NAME_MAX];
	const char *full; /* the whole name in the PTX text (@name may be
			     shortened: ptx_lex.c) */
	size_t full_len;
	int line;
	bool entry;
	bool noinline;	       /* .attribute(.noinline): always a real call */
	bool decl;	       /* a declaration (.extern .func, prototypes): no body */
	bool has_ret;	       /* .func (.param ... ret) name(...) */
	struct ptx_param ret;
	struct ptx_param *params;
	int nparams;
	struct ptx_reg *regs;
	int nregs, regs_cap;
	struct ptx_var *shared;
	int nshared;
	struct ptx_var *local; /* .local: the thread's frame */
	int nlocal;
	struct ptx_insn *insns;
	int ninsns, insns_cap;
	struct ptx_kattrs attrs; /* .entry only */
};

/*
 * An address in a module variable's initial value (PTX ISA 5.4.4), at
 * byte @off: that of the function @name (a table of function pointers, a
 * virtual table: ptx.c prints .addr) or of the .global/.const variable
 * @name plus @addend (a table of pointers or strings: .dataaddr, which
 * the loader resolves); 8 bytes, or with @byte >= 0 only byte @byte of
 * the address (mask(): 0xFF00(generic(v)) is byte 1).  Where it was
 * written: @line, @col.
 */
struct ptx_aref {
	uint32_t off;
	int byte;
	int64_t addend;
	char name[PTX_NAME_MAX];
	int line, col;
};

/* A module-scope .global or .const variable: module data at @offset. */
struct ptx_gvar {
	char name[PTX_NAME_MAX];
	uint32_t size, align, offset;
	uint8_t *init; /* @size bytes, NULL: zero */
	struct ptx_aref *arefs;
	int narefs;
	int line;
};

struct ptx_module {
	struct ptx_func *funcs;
	int nfuncs;
	struct ptx_gvar *globals;
	int nglobals;
	uint32_t data_size;
	struct ptx_var *shared; /* module-scope .shared */
	int nshared;
	struct ptx_var *dyn; /* extern .shared: all name the dynamic region */
	int ndyn;
	char target[32];
	int addr_size;
};

/* ---- lexer ---- */

enum ptx_tok {
	PTX_T_EOF,
	PTX_T_IDENT, /* names, directives (.entry), %regs, $labels */
	PTX_T_INT,
	PTX_T_FLOAT, /* 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX: value holds the bits */
	PTX_T_STRING,
	PTX_T_PUNCT, /* one character: , ; : [ ] { } ( ) < > + - @ ! = | */
};

struct ptx_lexer {
	const char *p, *end;
	int line, col;
	/* the current token */
	enum ptx_tok tok;
	char text[PTX_NAME_MAX * 2];
	/* an identifier's whole text in the source (@text holds at most
	 * PTX_NAME_MAX - 1 characters of it: ptx_lex.c) */
	const char *ident;
	size_t ident_len;
	int64_t value;
	bool is_double;
	/* an integer literal past 64 bits (a hexadecimal one past 128):
	 * ptxas's "Constant overflow" */
	bool overflow;
	int tline, tcol;
};

void ptx_lex_init(struct ptx_lexer *lx, const char *src, size_t len);
void ptx_lex_next(struct ptx_lexer *lx);
uint64_t ptx_name_hash(const char *s, size_t n);

/* ---- stages ---- */

int ptx_parse(const char *src, size_t len, struct ptx_diag *dg,
	      struct ptx_module *m);
void ptx_module_free(struct ptx_module *m);
/* ptx_heap.c: ptx_parse() with device malloc/free linked in */
int ptx_parse_heap(const char *src, size_t len, struct ptx_diag *dg, struct ptx_module *m,
		   char **text);
#define PTX_HEAP_VAR "$vgpu$heap" /* the device heap's address (.heapaddr) */
/* ptx_cdp.c: the device runtime of device-side launch */
#define PTX_CDP_KDESC "$vgpu$kd$" /* + kernel index: its descriptor (.kdesc) */
#define PTX_CDP_ERR "%vgpu_cdp_err" /* the thread's last device-runtime error */
bool ptx_cdp_implements(const char *name);
bool ptx_cdp_wanted(const struct ptx_module *m);
char *ptx_cdp_text(const struct ptx_module *m);
int ptx_cdp_rewrite(struct ptx_module *m);
/* ptx_devrt.c: its other functions (cudaMalloc, streams, events ...) */
bool ptx_devrt_implements(const char *name);
bool ptx_devrt_wants_heap(const struct ptx_module *m);
char *ptx_devrt_text(const struct ptx_module *m);
int ptx_find_reg(const struct ptx_func *f, const char *name);

/* Lowered code: vGPU instructions over virtual registers. */
enum ptx_vkind {
	PTX_V_REG,  /* a virtual register (or a part of one: @part) */
	PTX_V_PRED, /* a virtual predicate */
	PTX_V_TEXT, /* verbatim: immediates, labels, RZ, PT, P6, SR_*, _ */
	PTX_V_MEM,  /* [vreg-or-RZ + text] */
};

struct ptx_vop {
	uint8_t kind;
	bool def;     /* written by the instruction */
	bool partial; /* writes only part of the register: not a kill */
	bool neg;     /* !P */
	uint8_t part; /* 32-bit word of a wide register */
	bool frame;   /* TEXT: the frame size (regalloc sets it after spilling) */
	int v;	      /* REG, PRED, MEM base (-1: RZ) */
	char text[PTX_NAME_MAX + 24];
};

struct ptx_vinsn {
	int line;
	char label[PTX_NAME_MAX + 8]; /* a label: no mnemonic */
	char mnem[64];
	int guard; /* virtual predicate or -1 */
	bool guard_not;
	bool branch, exit; /* control flow: BRA (target in ops[0]), EXIT */
	struct ptx_vop ops[6];
	int nops;
};

struct ptx_vreg {
	uint8_t width; /* 32-bit words (1, 2, 4, 5) or 0 for a predicate */
	bool fixed;    /* a scratch register the allocator placed itself */
	int phys;      /* assigned register, -1 before allocation */
};

struct ptx_code {
	struct ptx_vinsn *insns;
	int n, cap;
	uint32_t frame; /* bytes of .local per thread (0: none) */
	bool uses_params; /* takes a parameter's address (.param params pself) */
	bool uses_envregs; /* reads %envregN (.param envregs penv) */
	/*
	 * Register spilling.  Set spill_mode before ptx_lower() (it survives
	 * the reset there) when a first allocation ran out of registers
	 * (ptx_regalloc() returned -ENOSPC): the lowering then always sets up
	 * the thread's frame and keeps its address in the pair spill_base;
	 * the allocator keeps R239..R254 for reloads, spills what does not
	 * fit to slots after the .local variables (frame_locals bytes) and
	 * grows frame.
	 */
	bool spill_mode;
	/* predicates spilled to registers: P3..P5 kept for their reloads */
	bool pred_spill;
	int spill_base;
	/*
	 * Real calls (ptx_call.c): @fn_mode (set before ptx_lower(), kept
	 * like spill_mode) lowers a .func as a called function; @calls: the
	 * code calls or is called, so R234..R238 stay out of the allocation.
	 */
	bool fn_mode;
	bool calls;
	uint32_t frame_locals;
	struct ptx_vreg *vregs;
	int nv, vcap;
};

/*
 * Real calls (ptx_call.c): a callee over PTX_INLINE_LIMIT PTX
 * instructions, a recursive call or one passing or returning a structure
 * by value is not inlined; a kernel that calls gets PTX_STACK_BYTES of
 * stack per thread; PTX_FRAME16 is the placeholder for a function's frame
 * size + 16 until allocation.
 */
#define PTX_INLINE_LIMIT 400
#define PTX_STACK_BYTES 16384u
#define PTX_FRAME16 "@FRAME16"
bool ptx_call_real(const struct ptx_func *callee, bool recursive);
/*
 * Does the module declare vprintf or __assertfail?  Then a kernel that
 * calls gets the printf buffer and keeps its address for the functions
 * it calls (ptx_call.c), beside the module data's.
 */
bool ptx_module_prints(const struct ptx_module *m);
/* call, alloca, stacksave, stackrestore: the code needs the call stack */
bool ptx_uses_stack(const struct ptx_insn *in);
/*
 * Does the kernel @f (inlined: its callees' code in it) use the module's
 * .shared variable @i?  As ptxas allocates a module-scope .shared
 * variable in the kernels that use it, not in every kernel: clang puts a
 * kernel's function-scope __shared__ variables at module scope (`.weak
 * .shared`), cub's temp_storage of every kernel of the module.  A kernel
 * that still calls (ptx_call.c: its "$stack") keeps every variable, for
 * the functions it calls.
 */
bool ptx_shared_used(const struct ptx_module *m, const struct ptx_func *f, int i);
/*
 * A kernel with a barrier and a join laid out before one of the blocks
 * that reach it forward (clang's loop latches): its blocks in reverse
 * post-order, so that a diverged warp's lanes meet at the join before
 * they reach the barrier (ptx_layout.c).  0 or -ENOMEM; other kernels
 * are left as they are.
 */
int ptx_layout_barriers(struct ptx_func *f);

/*
 * CUDA's message for a failed device assert (__assertfail), printed by
 * the failing thread: a module variable that ptx.c adds to a module that
 * declares __assertfail, for pl_assertfail's printf record.
 */
#define PTX_ASSERT_FORMAT_VAR "$assertfail$format"
#define PTX_ASSERT_FORMAT \
	"%s:%d: %s: block: [%d,%d,%d], thread: [%d,%d,%d] Assertion `%s` failed.\n"

/* A copy of entry @e with every call inlined (ptx_inline.c). */
int ptx_inline(const struct ptx_module *m, const struct ptx_func *e, struct ptx_diag *dg,
	       struct ptx_func *out);
void ptx_func_free(struct ptx_func *f);
int ptx_lower(const struct ptx_module *m, const struct ptx_func *f,
	      struct ptx_diag *dg, struct ptx_code *code);
/* Dead-code elimination on the lowered code (ptx_opt.c). */
int ptx_optimize(struct ptx_code *code);
/* Does @t read and write single words (a word of a wide register alone)? */
bool ptx_vinsn_one_word(const struct ptx_vinsn *t);
int ptx_regalloc(const struct ptx_func *f, struct ptx_diag *dg,
		 struct ptx_code *code);
void ptx_code_free(struct ptx_code *code);

/* An entry's directives, for the launcher: by kernel name. */
struct ptx_kernel_attrs {
	char name[32];	/* the object's kernel name (ptx_kernel_obj_name) */
	char *full;	/* the PTX name (malloc'd) */
	struct ptx_kattrs attrs;
};

/*
 * The name a kernel has in the object (at most 31 characters): its PTX
 * name, or for a longer one the first 20 characters, "_h" and 8 hex
 * digits of a hash of the whole.
 */
void ptx_kernel_obj_name(const char *name, char out[32]);

/*
 * The whole translation: PTX text -> vGPU assembly text (malloc'd).  With
 * @attrs, *@attrs (malloc'd, *@nattrs entries) gets each entry's
 * directives; with @obj, *@obj the object the text assembles into (the
 * translation assembles it to check it; the caller finishes it).
 */
struct vgpu_object;
int ptx_to_vgs(const char *src, size_t len, const char *file, char **out,
	       char *log, size_t loglen);
int ptx_to_vgs_attrs(const char *src, size_t len, const char *file, char **out,
		     char *log, size_t loglen, struct ptx_kernel_attrs **attrs,
		     int *nattrs, struct vgpu_object *obj);
void ptx_kernel_attrs_free(struct ptx_kernel_attrs *attrs, int n);

/*
 * The linker (ptx_link.c): @n PTX modules (@srcs, @lens bytes each, named
 * @names in diagnostics) -> one PTX text (*@out, malloc'd, NUL-terminated,
 * *@out_len bytes).  -EINVAL: a module's own PTX error; -ENOENT: a link
 * error (an undefined or doubly defined symbol, an .extern that does not
 * match its definition), each named in @log.  @check_only: each module's
 * own errors only, nothing linked.
 */
int ptx_link(int n, const char *const *srcs, const size_t *lens, const char *const *names,
	     unsigned int flags, char **out, size_t *out_len, char *log, size_t loglen);
/*
 * The messages of a compile of linked text @text named PTX_LINKED_NAME:
 * "<linked>:LINE:" becomes "MODULE:LINE:" of the module the line came
 * from (the link's markers say), in @log in place.
 */
#define PTX_LINKED_NAME "<linked>"
int ptx_link_map_log(const char *text, size_t len, char *log, size_t loglen);

#endif
