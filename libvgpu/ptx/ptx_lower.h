/* SPDX-License-Identifier: MIT */
/*
 * The lowering stage's shared parts (ptx_lower.c): the state, emitting
 * vGPU instructions on virtual registers, operand access.  The lowerers
 * of each family of PTX instructions live in ptx_lower_alu.c (moves,
 * integer and float arithmetic, compares, conversions), ptx_lower_math.c
 * (division, MUFU functions, float compares), ptx_lower_bits.c (clz, popc,
 * bfind, bit fields, 64-bit shifts by a register), ptx_lower_f64.c (f64),
 * ptx_lower_mem.c (cvta, ld/st, atomics, printf), ptx_lower_sync.c
 * (control flow, barriers, mbarriers, asynchronous and tensor copies,
 * clusters, setmaxnreg) and ptx_lower_warp.c (votes, warp functions).
 */
#ifndef VGPU_PTX_LOWER_H
#define VGPU_PTX_LOWER_H

#include "ptx.h"

/* the high word of a generic address of shared memory (cvta.shared) */
#define GENERIC_SHARED_HI 0xffffff00u
/* .local variables a function may declare */
#define PTX_MAX_LOCALS 64
/* stand-ins for .b128 registers one instruction may have (pl_b128_wide) */
#define PTX_B128_SHADOWS 12

struct lower {
	const struct ptx_module *m;
	const struct ptx_func *f;
	struct ptx_diag *dg;
	struct ptx_code *c;
	const struct ptx_insn *in;
	bool failed;
	/*
	 * The instruction being built (-1: none) and the moves its sources
	 * need first (an immediate or a special register in a register):
	 * they are put before it when the next one starts.
	 */
	int building;
	struct ptx_vinsn pending[8];
	int npending;
	/*
	 * .local: the thread's frame is a slice of the launch's local memory
	 * (a global-memory buffer; the parameter `lmem` is its address).
	 * local_va[i]: a register pair with the address of .local variable
	 * i, set by the prologue.
	 */
	int local_va[PTX_MAX_LOCALS];
	/*
	 * Module variables (.global/.const): the launch fills in `gdata`, the
	 * address of the program's data; global_va[i] is a pair with the
	 * address of variable i, -1 when the function does not name it.
	 */
	int *global_va;
	/*
	 * An 8- or 16-bit instruction whose result depends on the bits above
	 * its width (compares, right shifts, min/max, division, widening
	 * multiplies): every 32-bit register source is first zero- or
	 * sign-extended from narrow_bits (registers hold narrow values with
	 * any upper bits, as add/mul/shl leave them), immediates likewise.
	 */
	int narrow_bits;
	bool narrow_sign;
	int kernel; /* the entry's index in the module, for label names */
	int cdp_err; /* the device runtime's last error (ptx_cdp.c), -1: none */
	int ilabels; /* labels the lowering made (K<kernel>I<n>) */
	/* real calls (ptx_call.c): per PTX register, a call sequence
	 * .param's offset in the outgoing area (-1: none); the stack pointer
	 * after the prologue (spv) and a function's incoming area (ap),
	 * pairs; the outgoing area's bytes */
	int *call_off;
	int spv, ap;
	uint32_t outgoing;
	/* alloca / stackrestore move the stack pointer: spv follows it, fsp
	 * keeps a function's own (its RETs put it back) */
	bool dyn_stack;
	int fsp;
	/* add.cc/addc...: the word holding CC.CF, plus 1 (0: none yet) */
	int cc;
	/* a pair with the start of this thread's .local frame, plus 1 (0:
	 * none; set by the prologue when isspacep needs it) */
	int frame_va1;
	/* .b128 registers in cvt and vector ld/st (pl_b128_wide): the
	 * stand-in vreg shadow_v[i] reads as PTX register shadow[i] */
	struct ptx_reg shadow[PTX_B128_SHADOWS];
	int shadow_v[PTX_B128_SHADOWS], nshadow;
};

struct ptype {
	int bits;     /* 0 if none */
	bool sign, flt, pred;
};

__attribute__((format(printf, 2, 3))) bool pl_lerr(struct lower *L,
						      const char *fmt, ...);
const char *pl_spelled(const struct ptx_insn *in, char *buf, size_t len);
bool pl_unsupported(struct lower *L, const char *why);
/* ptx_lower_sreg.c: mov of a derived special register into @d */
void pl_is_explicit_cluster(struct lower *L, int d);
/* ... false when @sym is not a shared memory size register */
bool pl_smem_sreg(struct lower *L, int d, const char *sym);
/* "", ".RZ", ".RM" or ".RP": the f32 instruction's rounding modifier */
const char *pl_f32_rnd(const struct lower *L);
/* ".FTZ" or "": the f32 instruction's .ftz */
const char *pl_f32_ftz(const struct lower *L);
int pl_new_vreg(struct lower *L, int width);
bool pl_room(struct lower *L, int more);
void pl_finish(struct lower *L);
__attribute__((format(printf, 2, 3))) struct ptx_vinsn *pl_emit(struct lower *L,
								 const char *fmt, ...);
struct ptx_vop *pl_add_op(struct ptx_vinsn *v);
void pl_o_def(struct ptx_vinsn *vi, int v, int part, bool partial);
void pl_o_use(struct ptx_vinsn *vi, int v, int part);
void pl_o_pdef(struct ptx_vinsn *vi, int v);
void pl_o_puse(struct ptx_vinsn *vi, int v, bool neg);
__attribute__((format(printf, 2, 3))) void pl_o_text(struct ptx_vinsn *vi,
							 const char *fmt, ...);
__attribute__((format(printf, 3, 4))) void pl_o_mem(struct ptx_vinsn *vi, int base,
							const char *fmt, ...);
int pl_param_index(const struct ptx_func *f, const char *name);
int pl_shared_index(const struct lower *L, const char *name);
int pl_local_index(const struct lower *L, const char *name);
int pl_global_index(const struct lower *L, const char *name);
bool pl_const_of(const struct lower *L, const struct ptx_operand *o, int64_t *v);
int pl_label_index(const struct ptx_func *f, const char *name);
const char *pl_sreg_name(const char *ptx);
/* N of %envregN (0..31), else -1 */
int pl_envreg_index(const char *ptx);
bool pl_has_mod(const struct ptx_insn *in, const char *mod);
struct ptype pl_type_of(const struct ptx_insn *in, int nth);
const struct ptx_reg *pl_preg(const struct lower *L, int r);
struct ptx_vinsn *pl_pre_move(struct lower *L, const char *mn);
bool pl_is_reg(const struct lower *L, const struct ptx_operand *o, int cls);
void pl_imm_text(char *buf, size_t len, int64_t v, int part);
int64_t pl_narrow_imm(const struct lower *L, int64_t v);
int pl_src_reg(struct lower *L, const struct ptx_operand *o, int part, int *pp);
/* @o as a register pair: a 64-bit register as it is, an immediate in a
 * new pair (ptx_lower_f64.c); -1 after an error */
int pl_pair_src(struct lower *L, const struct ptx_operand *o);
void pl_use_src(struct lower *L, struct ptx_vinsn *v, const struct ptx_operand *o,
		    int part);
void pl_use_src_or_imm(struct lower *L, struct ptx_vinsn *v,
			   const struct ptx_operand *o, int part);
int pl_dst_reg(struct lower *L, const struct ptx_operand *o, int cls);
int pl_pred_of(struct lower *L, const struct ptx_operand *o);
bool pl_want_ops(struct lower *L, int n);
/* A new label K<kernel>I<n> of the lowering's own (its number). */
int pl_new_label(struct lower *L);
void pl_put_label(struct lower *L, int n);
/* BRA to label @n of pl_new_label(), guarded by vpred @g (-1: none) */
void pl_bra_label(struct lower *L, int n, int g, bool gnot);
void pl_alu32(struct lower *L, const char *mn, int d, int dpart, bool dpartial,
		  const struct ptx_operand *a, const struct ptx_operand *b, int part,
		  bool commutative);
void pl_mov_reg(struct lower *L, int d, int dpart, bool partial, int s, int spart);
void pl_add64(struct lower *L, int d, int a, int b, uint32_t imm);
void pl_param_addr(struct lower *L, int d, int i, uint32_t add);
const char *pl_int_mod(struct ptype t);
/* cvt's float, saturating and packed forms (ptx_lower_cvt.c): false for
 * the integer moves pl_cvt does itself */
bool pl_cvt_ext(struct lower *L);

/* real calls (ptx_call.c): the prologue's part; false on an error.
 * pl_call_hook: lowers call, a function's ret and the .param accesses
 * of calls; false if @L->in is none of them. */
bool pl_call_setup(struct lower *L);
void pl_call_data_base(struct lower *L, int d, bool printf);
bool pl_call_hook(struct lower *L);
/* comparisons of every type (ptx_lower_cmp.c): setp, set, slct; false
 * if @L->in is none of them */
bool pl_cmp_hook(struct lower *L);
/* integer and bit forms without a vGPU instruction of their own
 * (ptx_lower_int.c); false if @L->in is none of them */
bool pl_int_hook(struct lower *L);
/* f16, bf16, f16x2 and bf16x2 arithmetic (ptx_lower_half.c); false if
 * @L->in is none of it */
bool pl_half_hook(struct lower *L);

/* the lowerers */
void pl_activemask(struct lower *L);
void pl_arith(struct lower *L);
void pl_atom(struct lower *L);
void pl_multimem(struct lower *L); /* multimem.ld_reduce/.st/.red */
/* st.async / red.async (ptx_lower_sync.c), from pl_ldst and pl_atom */
void pl_async_store(struct lower *L);
/* red.global.inc/dec.u32 [@base], @b (@base a pair) or, @shared,
 * red.shared (a shared or shared::cluster address) as atom lowers it: a
 * CAS loop (for cp.reduce.async.bulk); the instruction's guard is the
 * caller's */
void pl_atom_incdec(struct lower *L, bool inc, bool shared, int base, int b);
void pl_bar(struct lower *L);
void pl_bra(struct lower *L);
void pl_cp(struct lower *L);
void pl_cvt(struct lower *L);
void pl_cvta(struct lower *L);
void pl_exit(struct lower *L);
void pl_trap(struct lower *L);
void pl_fence(struct lower *L);
void pl_ldst(struct lower *L);
void pl_prefetch(struct lower *L);
void pl_cache_line(struct lower *L); /* applypriority, discard */
void pl_tensormap(struct lower *L); /* ptx_lower_tmap.c */
void pl_isspacep(struct lower *L);
void pl_createpolicy(struct lower *L);
void pl_griddepcontrol(struct lower *L);
void pl_logic(struct lower *L);
void pl_mad(struct lower *L);
void pl_mapa(struct lower *L);
void pl_getctarank(struct lower *L);
void pl_brx(struct lower *L);
void pl_mbarrier(struct lower *L);
void pl_minmax(struct lower *L);
void pl_mov(struct lower *L);
/* mov with a vector operand (ptx_lower_vmov.c) */
void pl_mov_vector(struct lower *L);
/* ptx_lower_b128.c: .b128 registers; true (after the error) when the
 * instruction names one but is not one of the forms that take it */
bool pl_b128_misuse(struct lower *L);
void pl_mov128(struct lower *L);
void pl_ldst128(struct lower *L);
/* ld of a narrower type into a .b128 register: is this one, lower it */
bool pl_ld_narrow(const struct lower *L);
void pl_ld_narrow128(struct lower *L);
void pl_atom128(struct lower *L);
/* cvt naming a .b128 register, ld/ldu/st with one as a vector element:
 * lowered (true) through stand-ins of the type's width */
bool pl_b128_wide(struct lower *L);
/* ptx_lower.c: one instruction of the body, as the loop lowers it */
void pl_lower_one(struct lower *L);
void pl_nanosleep(struct lower *L);
void pl_not_neg_abs(struct lower *L);
void pl_selp(struct lower *L);
void pl_setp(struct lower *L);
void pl_shift(struct lower *L);
void pl_vote(struct lower *L);
void pl_barrier_cluster(struct lower *L);
void pl_divrem(struct lower *L);
void pl_mufu(struct lower *L);
void pl_shfl(struct lower *L);
void pl_bitfield(struct lower *L);
void pl_bitcount(struct lower *L);
void pl_shift64_reg(struct lower *L);
void pl_setmaxnreg(struct lower *L);
void pl_elect(struct lower *L);
void pl_warpsync(struct lower *L, const struct ptx_operand *mask);
void pl_redux(struct lower *L);
void pl_vprintf(struct lower *L);
void pl_assertfail(struct lower *L);
void pl_match(struct lower *L);
void pl_movmatrix(struct lower *L);
/* tanh.approx.f32 (ptx_lower_half.c, beside the half forms' tanh) */
void pl_tanh(struct lower *L);
/* f64 arithmetic and conversions (ptx_lower_f64.c); false if not one */
bool pl_f64(struct lower *L);
/* f32 forms of more than one instruction (ptx_lower_fp.c) */
void pl_f32_sat(struct lower *L, int d);
void pl_f32_neg_abs(struct lower *L, int d, const struct ptx_operand *a, bool abs);
void pl_f32_minmax(struct lower *L, int d, bool mn);
void pl_f32_minmax_regs(struct lower *L, int d, int a, int b, bool mn);
void pl_testp(struct lower *L);
void pl_f32_div_approx(struct lower *L, int d);
void pl_copysign(struct lower *L);
bool pl_fcmp(struct lower *L, const char *mn, const char *cmp, int a, int b, int p);
void pl_fsetp(struct lower *L, bool f64, int a, int b);

#endif
