/* SPDX-License-Identifier: MIT */
/*
 * vGPU instruction table: the single source of truth for mnemonics, operand
 * forms and bit fields.  The assembler, the disassembler, the core's decoder
 * and the overlap test are all driven by these lists (see vgpu_isa.h for the
 * field positions and how the lists are expanded).
 *
 * No include guard: this file is an X-macro list and may be expanded several
 * times.  Each list macro takes the name of the macro to apply.
 */

/*
 * Modifier groups ("__DefBitFieldType" in the seed).  Every group lives at a
 * fixed bit position inside the modifier area that starts at bit 80.
 *
 *   E(GROUP, pos, width, default)     default: value when omitted, or -1 if
 *                                      the modifier is required
 */
#define VGPU_ISA_MODGROUPS(E)                                                  \
	E(BARMODE, 80, 1, -1) /* BAR: SYNC, ARV (fixed per row) */             \
	E(REDOP, 80, 2, -1)   /* BAR.RED reduction */                         \
	E(B2RMODE, 80, 1, -1) /* B2R/R2B: WARP, BAR (fixed per row) */         \
	E(CMP, 80, 3, -1)     /* ISETP/FSETP comparison */                     \
	E(LOP, 80, 2, -1)     /* logic operation */                            \
	E(MNMX, 80, 1, -1)    /* IMNMX/FMNMX */                                \
	E(MSIZE, 80, 3, 4)    /* load/store size, default .32 */              \
	E(ATOMOP, 80, 3, -1)  /* atomic operation (CAS has its own optype) */  \
	E(SHFL, 80, 2, -1)    /* shuffle mode */                               \
	E(MEMBAR, 80, 2, -1)  /* fence scope */                                \
	E(MUFU, 80, 3, -1)    /* MUFU function */                              \
	E(VOTE, 80, 2, -1)    /* vote mode (fixed per row) */                  \
	E(ITYPE, 83, 2, -1)   /* integer type */                               \
	E(ATYPE, 83, 4, -1)   /* atomic operand type (vgpu_isa_atom_ok) */     \
	E(COMB, 85, 2, 0)     /* predicate combine, default .AND */             \
	E(ARVKIND, 80, 2, -1) /* MBAR.ARRIVE[_DROP] kind (fixed per row) */     \
	E(WAITKIND, 80, 1, -1) /* MBAR waits: token or .PARITY (fixed) */       \
	E(CPNOINC, 80, 1, -1) /* CP.ASYNC.MBARRIER.ARRIVE[.NOINC] (fixed) */    \
	E(WGREAD, 80, 1, -1)  /* CP.ASYNC.BULK.WAIT_GROUP[.READ] (fixed) */     \
	E(CLBAR, 80, 1, -1)   /* BAR.CLUSTER.ARRIVE / .WAIT (fixed) */          \
	E(TRAPK, 80, 2, -1)   /* TRAP .ASSERT .MULTIMEM WARPSYNC (fixed) */     \
	E(CPCACHE, 80, 1, 0)  /* CP.ASYNC cache hint, default .CA */            \
	E(TDIM, 80, 3, -1)    /* tensor rank */                                 \
	E(IMDIM, 80, 3, -1)   /* im2col tensor rank: 3D .. 5D only */          \
	E(TRED, 83, 3, -1)    /* tensor reduction (CP.REDUCE.ASYNC.BULK.TENSOR) */ \
	E(MSEMA, 87, 2, 0)    /* arrive semantics, default .RELEASE */          \
	E(MSEMW, 87, 2, 0)    /* wait semantics, default .ACQUIRE */            \
	E(MSEMX, 87, 2, 0)    /* expect/complete_tx semantics: .RELAXED */      \
	E(MSCOPE, 89, 1, 0)   /* scope, default .CTA */                          \
	E(RND, 92, 2, 0)      /* f32 rounding, default .RN (IEEE directions) */ \
	E(IRND, 92, 2, 0)     /* F2I rounding to an integer, default .RZ */   \
	E(FTZ, 94, 1, 0)      /* f32 subnormals flushed to zero: .FTZ */  \
	E(CVTD, 80, 4, -1)    /* CVT destination type (extension) */          \
	E(CVTS, 84, 4, -1)    /* CVT source type */                           \
	E(CVTR, 88, 4, 0)     /* CVT rounding, default .RN */                 \
	E(CVTF, 92, 3, 0)     /* CVT saturation, .FTZ, .RELU */

/*
 * Modifier values.  E(GROUP, NAME, value); NAME is the spelling after the dot.
 * Values not listed for a group are illegal encodings.
 */
#define VGPU_ISA_MODVALS(E)                                                    \
	E(BARMODE, SYNC, 0)                                                    \
	E(BARMODE, ARV, 1)                                                     \
	E(REDOP, AND, 0)                                                       \
	E(REDOP, OR, 1)                                                        \
	E(REDOP, POPC, 2)                                                      \
	E(B2RMODE, WARP, 0)                                                    \
	E(B2RMODE, BAR, 1)                                                     \
	E(CMP, LT, 0)                                                          \
	E(CMP, EQ, 1)                                                          \
	E(CMP, LE, 2)                                                          \
	E(CMP, GT, 3)                                                          \
	E(CMP, NE, 4)                                                          \
	E(CMP, GE, 5)                                                          \
	E(LOP, AND, 0)                                                         \
	E(LOP, OR, 1)                                                          \
	E(LOP, XOR, 2)                                                         \
	E(MNMX, MIN, 0)                                                        \
	E(MNMX, MAX, 1)                                                        \
	E(MSIZE, U8, 0)                                                        \
	E(MSIZE, S8, 1)                                                        \
	E(MSIZE, U16, 2)                                                       \
	E(MSIZE, S16, 3)                                                       \
	E(MSIZE, 32, 4)                                                        \
	E(MSIZE, 64, 5)                                                        \
	E(MSIZE, 128, 6)                                                       \
	E(ATOMOP, ADD, 0)                                                      \
	E(ATOMOP, MIN, 1)                                                      \
	E(ATOMOP, MAX, 2)                                                      \
	E(ATOMOP, EXCH, 3)                                                     \
	E(ATOMOP, AND, 4)                                                      \
	E(ATOMOP, OR, 5)                                                       \
	E(ATOMOP, XOR, 6)                                                      \
	E(SHFL, IDX, 0)                                                        \
	E(SHFL, UP, 1)                                                         \
	E(SHFL, DOWN, 2)                                                       \
	E(SHFL, BFLY, 3)                                                       \
	E(MEMBAR, CTA, 0)                                                      \
	E(MEMBAR, GPU, 1)                                                      \
	E(MEMBAR, SYS, 2)                                                      \
	E(MUFU, RCP, 0)                                                        \
	E(MUFU, SQRT, 1)                                                       \
	E(MUFU, RSQ, 2)                                                        \
	E(MUFU, EX2, 3)                                                        \
	E(MUFU, LG2, 4)                                                        \
	E(MUFU, SIN, 5)                                                        \
	E(MUFU, COS, 6)                                                        \
	E(RND, RN, 0)                                                          \
	E(RND, RZ, 1)                                                          \
	E(RND, RM, 2)                                                          \
	E(RND, RP, 3)                                                          \
	E(IRND, RZ, 0)                                                         \
	E(IRND, RN, 1)                                                         \
	E(IRND, RM, 2)                                                         \
	E(IRND, RP, 3)                                                         \
	E(MUFU, RINT, 7)                                                       \
	E(FTZ, IEEE, 0)                                                        \
	E(FTZ, FTZ, 1)                                                         \
	E(VOTE, ALL, 0)                                                        \
	E(VOTE, ANY, 1)                                                        \
	E(VOTE, BALLOT, 2)                                                     \
	E(ITYPE, U32, 0)                                                       \
	E(ITYPE, S32, 1)                                                       \
	E(ATYPE, U32, 0)                                                       \
	E(ATYPE, S32, 1)                                                       \
	E(ATYPE, U64, 2)                                                       \
	E(ATYPE, S64, 3)                                                       \
	E(ATYPE, F32, 4)                                                       \
	E(ATYPE, F64, 5)                                                       \
	E(ATYPE, F16, 6)                                                       \
	E(ATYPE, BF16, 7)                                                      \
	E(ATYPE, F16X2, 8)                                                     \
	E(ATYPE, BF16X2, 9)                                                    \
	E(COMB, AND, 0)                                                        \
	E(COMB, OR, 1)                                                         \
	E(COMB, XOR, 2)                                                        \
	E(ARVKIND, ARRIVE, 0)                                                  \
	E(ARVKIND, EXPECT_TX, 1)                                               \
	E(ARVKIND, NOCOMPLETE, 2)                                              \
	E(WAITKIND, TOKEN, 0)                                                  \
	E(WAITKIND, PARITY, 1)                                                 \
	E(CPNOINC, INC, 0)                                                     \
	E(CPNOINC, NOINC, 1)                                                   \
	E(WGREAD, ALL, 0)                                                      \
	E(WGREAD, READ, 1)                                                     \
	E(CLBAR, ARRIVE, 0)                                                    \
	E(CLBAR, WAIT, 1)                                                      \
	E(TRAPK, TRAP, 0)                                                      \
	E(TRAPK, ASSERT, 1)                                                    \
	E(TRAPK, MULTIMEM, 2)                                                  \
	E(TRAPK, WARPSYNC, 3)                                                  \
	E(CPCACHE, CA, 0)                                                      \
	E(CPCACHE, CG, 1)                                                      \
	E(TDIM, 1D, 0)                                                         \
	E(TDIM, 2D, 1)                                                         \
	E(TDIM, 3D, 2)                                                         \
	E(TDIM, 4D, 3)                                                         \
	E(TDIM, 5D, 4)                                                         \
	E(TRED, ADD, 0)                                                        \
	E(TRED, MIN, 1)                                                        \
	E(TRED, MAX, 2)                                                        \
	E(TRED, INC, 3)                                                        \
	E(TRED, DEC, 4)                                                        \
	E(TRED, AND, 5)                                                        \
	E(TRED, OR, 6)                                                         \
	E(TRED, XOR, 7)                                                        \
	E(IMDIM, 3D, 2)                                                        \
	E(IMDIM, 4D, 3)                                                        \
	E(IMDIM, 5D, 4)                                                        \
	E(MSEMA, RELEASE, 0)                                                   \
	E(MSEMA, RELAXED, 1)                                                   \
	E(MSEMW, ACQUIRE, 0)                                                   \
	E(MSEMW, RELAXED, 1)                                                   \
	E(MSEMX, RELAXED, 0)                                                   \
	E(MSCOPE, CTA, 0)                                                      \
	E(MSCOPE, CLUSTER, 1)                                                  \
	E(CVTD, U8, 0)                                                \
	E(CVTD, S8, 1)                                                \
	E(CVTD, U16, 2)                                               \
	E(CVTD, S16, 3)                                               \
	E(CVTD, U32, 4)                                               \
	E(CVTD, S32, 5)                                               \
	E(CVTD, U64, 6)                                               \
	E(CVTD, S64, 7)                                               \
	E(CVTD, F16, 8)                                               \
	E(CVTD, BF16, 9)                                              \
	E(CVTD, F32, 10)                                              \
	E(CVTD, F64, 11)                                              \
	E(CVTD, TF32, 12)                                             \
	E(CVTD, E4M3, 13)                                             \
	E(CVTD, E5M2, 14)                                             \
	E(CVTS, U8, 0)                                                \
	E(CVTS, S8, 1)                                                \
	E(CVTS, U16, 2)                                               \
	E(CVTS, S16, 3)                                               \
	E(CVTS, U32, 4)                                               \
	E(CVTS, S32, 5)                                               \
	E(CVTS, U64, 6)                                               \
	E(CVTS, S64, 7)                                               \
	E(CVTS, F16, 8)                                               \
	E(CVTS, BF16, 9)                                              \
	E(CVTS, F32, 10)                                              \
	E(CVTS, F64, 11)                                              \
	E(CVTS, TF32, 12)                                             \
	E(CVTS, E4M3, 13)                                             \
	E(CVTS, E5M2, 14)                                             \
	E(CVTR, RN, 0)                                                \
	E(CVTR, RZ, 1)                                                \
	E(CVTR, RM, 2)                                                \
	E(CVTR, RP, 3)                                                \
	E(CVTR, RNA, 4)                                               \
	E(CVTR, RNI, 5)                                               \
	E(CVTR, RZI, 6)                                               \
	E(CVTR, RMI, 7)                                               \
	E(CVTR, RPI, 8)                                               \
	E(CVTF, NONE, 0)                                              \
	E(CVTF, SAT, 1)                                               \
	E(CVTF, FTZ, 2)                                               \
	E(CVTF, FTZ_SAT, 3)                                           \
	E(CVTF, RELU, 4)                                              \
	E(CVTF, SATFINITE, 5)                                         \
	E(CVTF, RELU_SATFINITE, 6)

/*
 * Optypes (field<0,8>).  E(NAME, value).  0x00 is never a valid optype, so
 * zeroed memory decodes as an illegal instruction.
 *
 * Groups:
 *   0x01-0x3f  general purpose (0x29-0x2b: calls, an extension beside
 *              seed 002: CALL, RET, SALLOC; 0x2e: CVT, conversions
 *              between any two types, also an extension; 0x2f: TRAP,
 *              PTX's trap: the exception VGPU_EXC_TRAP, TRAP.ASSERT,
 *              a failed device assert: VGPU_EXC_ASSERT, and
 *              TRAP.MULTIMEM [Ra+imm], multimem.ld_reduce of an address
 *              that is not a multicast one: VGPU_EXC_GLOBAL_FAULT, and
 *              WARPSYNC Ra|imm, the member-mask check of PTX's .sync
 *              warp instructions: VGPU_EXC_ILLEGAL_INSTR for an active
 *              lane outside its mask, the immediate form only under the
 *              sanitizer)
 *   0x40-0x4f  BCU: named barriers (seed 002)
 *   0x50-0x6f  mbarrier unit (MBAR.*)
 *   0x70-0x7f  asynchronous copies and the TMA engine (CP.ASYNC.*)
 *   0x80-0x8f  clusters (MAPA, BAR.CLUSTER)
 * Unlisted values decode as illegal instructions.
 */
#define VGPU_ISA_OPTYPES(E)                                                    \
	E(NOP, 0x01)                                                           \
	E(MOV, 0x02)                                                           \
	E(S2R, 0x03)                                                           \
	E(IADD, 0x04)                                                          \
	E(ISUB, 0x05)                                                          \
	E(IMUL, 0x06)                                                          \
	E(IMAD, 0x07)                                                          \
	E(IMNMX, 0x08)                                                         \
	E(ISETP, 0x09)                                                         \
	E(LOP, 0x0a)                                                           \
	E(SHL, 0x0b)                                                           \
	E(SHR, 0x0c)                                                           \
	E(SEL, 0x0d)                                                           \
	E(IMULHI, 0x0e)                                                        \
	E(IDIV, 0x0f)                                                          \
	E(FADD, 0x10)                                                          \
	E(FMUL, 0x11)                                                          \
	E(FFMA, 0x12)                                                          \
	E(FSETP, 0x13)                                                         \
	E(FMNMX, 0x14)                                                         \
	E(F2I, 0x15)                                                           \
	E(I2F, 0x16)                                                           \
	E(IREM, 0x17)                                                          \
	E(FDIV, 0x18)                                                          \
	E(MUFU, 0x19)                                                          \
	E(DADD, 0x1a)                                                          \
	E(DMUL, 0x1b)                                                          \
	E(DFMA, 0x1c)                                                          \
	E(DSETP, 0x1d)                                                         \
	E(DMNMX, 0x1e)                                                         \
	E(DDIV, 0x1f)                                                          \
	E(LDG, 0x20)                                                           \
	E(STG, 0x21)                                                           \
	E(LDS, 0x22)                                                           \
	E(STS, 0x23)                                                           \
	E(LDP, 0x24)                                                           \
	E(ATOMG, 0x25)                                                         \
	E(ATOMS, 0x26)                                                         \
	E(ATOMG_CAS, 0x27)                                                     \
	E(ATOMS_CAS, 0x28)                                                     \
	E(CALL, 0x29)                                                          \
	E(RET, 0x2a)                                                           \
	E(SALLOC, 0x2b)                                                        \
	E(CVT, 0x2e)                                                           \
	E(TRAP, 0x2f)                                                          \
	E(BRA, 0x30)                                                           \
	E(EXIT, 0x31)                                                          \
	E(NANOSLEEP, 0x32)                                                     \
	E(MEMBAR, 0x33)                                                        \
	E(VOTE, 0x34)                                                          \
	E(SHFL, 0x35)                                                          \
	E(F2D, 0x36)                                                           \
	E(D2F, 0x37)                                                           \
	E(I2D, 0x38)                                                           \
	E(D2I, 0x39)                                                           \
	E(IDIV64, 0x3a)                                                        \
	E(IREM64, 0x3b)                                                        \
	E(DSQRT, 0x3c)                                                         \
	E(DRCP, 0x3d)                                                          \
	E(L2D, 0x3e)                                                           \
	E(D2L, 0x3f)                                                           \
	E(BAR, 0x40)                                                           \
	E(BAR_RED, 0x41)                                                       \
	E(B2R, 0x42)                                                           \
	E(B2R_RESULT, 0x43)                                                    \
	E(R2B, 0x44)                                                           \
	E(MBAR_INIT, 0x50)                                                     \
	E(MBAR_INVAL, 0x51)                                                    \
	E(MBAR_ARRIVE, 0x52)                                                   \
	E(MBAR_ARRIVE_DROP, 0x53)                                              \
	E(MBAR_EXPECT_TX, 0x54)                                                \
	E(MBAR_COMPLETE_TX, 0x55)                                              \
	E(MBAR_TEST_WAIT, 0x56)                                                \
	E(MBAR_TRY_WAIT, 0x57)                                                 \
	E(MBAR_PENDING_COUNT, 0x58)                                            \
	E(CP_ASYNC, 0x70)                                                      \
	E(CP_ASYNC_MBAR_ARRIVE, 0x71)                                          \
	E(CP_ASYNC_WAIT_ALL, 0x72)                                             \
	E(CP_BULK, 0x73)                                                       \
	E(CP_BULK_STORE, 0x74)                                                 \
	E(CP_BULK_COMMIT, 0x75)                                                \
	E(CP_BULK_WAIT, 0x76)                                                  \
	E(CP_TENSOR, 0x77)                                                     \
	E(CP_TENSOR_STORE, 0x78)                                               \
	E(CP_TENSOR_IM2COL, 0x79)                                              \
	E(CP_TENSOR_STORE_IM2COL, 0x7a)                                        \
	E(CP_TENSOR_RED, 0x7b)                                                 \
	E(CP_TENSOR_RED_IM2COL, 0x7c)                                          \
	E(MAPA, 0x80)                                                          \
	E(BAR_CLUSTER, 0x81)

/*
 * Instructions: one row per (mnemonic, operand form).
 *
 *   E(ID, "MNEMONIC", OPTYPE, STYPE, FIXED, MODS, OPS)
 *
 * MNEMONIC  the spelling before any variable modifiers ("BAR.SYNC").
 * STYPE     the operand-source type field<8,4> (VGPU_ST_*).
 * FIXED     FIX(group, VALUE) when the mnemonic itself names a modifier
 *           value (BAR.SYNC is BAR with BARMODE=SYNC), or NOFIX.
 * MODS      MODS0() .. MODS3(g1, g2, g3): the variable modifier groups that
 *           follow the mnemonic, in order.
 * OPS       OPS0() .. OPS5(k1, ...): operand kinds in syntax order
 *           (VGPU_OPK_*); OPT(k) marks an operand that may be omitted, in
 *           which case it takes the kind's default (CNT 0, BARID 0, PU PT,
 *           PP PT not negated).
 */
#define VGPU_ISA_INSNS(E)                                                          \
	E(NOP, "NOP", NOP, X, NOFIX, MODS0(), OPS0())                              \
	E(MOV_R, "MOV", MOV, R, NOFIX, MODS0(), OPS2(RD, RA))                      \
	E(MOV_I, "MOV", MOV, I, NOFIX, MODS0(), OPS2(RD, IMM))                     \
	E(S2R, "S2R", S2R, X, NOFIX, MODS0(), OPS2(RD, SR))                        \
	E(IADD_R, "IADD", IADD, R, NOFIX, MODS0(), OPS3(RD, RA, RB))               \
	E(IADD_I, "IADD", IADD, I, NOFIX, MODS0(), OPS3(RD, RA, IMM))              \
	E(ISUB_R, "ISUB", ISUB, R, NOFIX, MODS0(), OPS3(RD, RA, RB))               \
	E(ISUB_I, "ISUB", ISUB, I, NOFIX, MODS0(), OPS3(RD, RA, IMM))              \
	E(IMUL_R, "IMUL", IMUL, R, NOFIX, MODS0(), OPS3(RD, RA, RB))               \
	E(IMUL_I, "IMUL", IMUL, I, NOFIX, MODS0(), OPS3(RD, RA, IMM))              \
	E(IMULHI_R, "IMUL.HI", IMULHI, R, NOFIX, MODS1(ITYPE), OPS3(RD, RA, RB))   \
	E(IMULHI_I, "IMUL.HI", IMULHI, I, NOFIX, MODS1(ITYPE), OPS3(RD, RA, IMM))  \
	E(IMAD_R, "IMAD", IMAD, R, NOFIX, MODS0(), OPS4(RD, RA, RB, RC))           \
	E(IMAD_I, "IMAD", IMAD, I, NOFIX, MODS0(), OPS4(RD, RA, IMM, RC))          \
	E(IMNMX_R, "IMNMX", IMNMX, R, NOFIX, MODS2(MNMX, ITYPE), OPS3(RD, RA, RB)) \
	E(IMNMX_I, "IMNMX", IMNMX, I, NOFIX, MODS2(MNMX, ITYPE), OPS3(RD, RA, IMM)) \
	E(ISETP_R, "ISETP", ISETP, R, NOFIX, MODS3(CMP, ITYPE, COMB),               \
	  OPS4(PU, RA, RB, OPT(PP)))                                                \
	E(ISETP_I, "ISETP", ISETP, I, NOFIX, MODS3(CMP, ITYPE, COMB),               \
	  OPS4(PU, RA, IMM, OPT(PP)))                                               \
	E(LOP_R, "LOP", LOP, R, NOFIX, MODS1(LOP), OPS3(RD, RA, RB))                \
	E(LOP_I, "LOP", LOP, I, NOFIX, MODS1(LOP), OPS3(RD, RA, IMM))               \
	E(SHL_R, "SHL", SHL, R, NOFIX, MODS0(), OPS3(RD, RA, RB))                   \
	E(SHL_I, "SHL", SHL, I, NOFIX, MODS0(), OPS3(RD, RA, IMM))                  \
	E(SHR_R, "SHR", SHR, R, NOFIX, MODS1(ITYPE), OPS3(RD, RA, RB))              \
	E(SHR_I, "SHR", SHR, I, NOFIX, MODS1(ITYPE), OPS3(RD, RA, IMM))             \
	E(SEL_R, "SEL", SEL, R, NOFIX, MODS0(), OPS4(RD, RA, RB, PP))               \
	E(SEL_I, "SEL", SEL, I, NOFIX, MODS0(), OPS4(RD, RA, IMM, PP))              \
	E(FADD_R, "FADD", FADD, R, NOFIX, MODS2(RND, FTZ), OPS3(RD, RA, RB))                \
	E(FADD_I, "FADD", FADD, I, NOFIX, MODS2(RND, FTZ), OPS3(RD, RA, FIMM))              \
	E(FMUL_R, "FMUL", FMUL, R, NOFIX, MODS2(RND, FTZ), OPS3(RD, RA, RB))                \
	E(FMUL_I, "FMUL", FMUL, I, NOFIX, MODS2(RND, FTZ), OPS3(RD, RA, FIMM))              \
	E(FFMA_R, "FFMA", FFMA, R, NOFIX, MODS2(RND, FTZ), OPS4(RD, RA, RB, RC))            \
	E(FFMA_I, "FFMA", FFMA, I, NOFIX, MODS2(RND, FTZ), OPS4(RD, RA, FIMM, RC))          \
	E(FSETP_R, "FSETP", FSETP, R, NOFIX, MODS3(CMP, COMB, FTZ),                      \
	  OPS4(PU, RA, RB, OPT(PP)))                                                \
	E(FSETP_I, "FSETP", FSETP, I, NOFIX, MODS3(CMP, COMB, FTZ),                      \
	  OPS4(PU, RA, FIMM, OPT(PP)))                                              \
	E(FMNMX_R, "FMNMX", FMNMX, R, NOFIX, MODS2(MNMX, FTZ), OPS3(RD, RA, RB))         \
	E(FMNMX_I, "FMNMX", FMNMX, I, NOFIX, MODS2(MNMX, FTZ), OPS3(RD, RA, FIMM))       \
	E(F2I, "F2I", F2I, X, NOFIX, MODS2(ITYPE, IRND), OPS2(RD, RA))                    \
	E(I2F, "I2F", I2F, X, NOFIX, MODS2(ITYPE, RND), OPS2(RD, RA))                    \
	E(IDIV_R, "IDIV", IDIV, R, NOFIX, MODS1(ITYPE), OPS3(RD, RA, RB))           \
	E(IDIV_I, "IDIV", IDIV, I, NOFIX, MODS1(ITYPE), OPS3(RD, RA, IMM))          \
	E(IREM_R, "IREM", IREM, R, NOFIX, MODS1(ITYPE), OPS3(RD, RA, RB))           \
	E(IREM_I, "IREM", IREM, I, NOFIX, MODS1(ITYPE), OPS3(RD, RA, IMM))          \
	E(FDIV_R, "FDIV", FDIV, R, NOFIX, MODS2(RND, FTZ), OPS3(RD, RA, RB))                \
	E(FDIV_I, "FDIV", FDIV, I, NOFIX, MODS2(RND, FTZ), OPS3(RD, RA, FIMM))              \
	E(MUFU, "MUFU", MUFU, X, NOFIX, MODS3(MUFU, RND, FTZ), OPS2(RD, RA))                  \
	E(DADD, "DADD", DADD, X, NOFIX, MODS1(RND), OPS3(RD, RA, RB))                  \
	E(DMUL, "DMUL", DMUL, X, NOFIX, MODS1(RND), OPS3(RD, RA, RB))                  \
	E(DFMA, "DFMA", DFMA, X, NOFIX, MODS1(RND), OPS4(RD, RA, RB, RC))              \
	E(DDIV, "DDIV", DDIV, X, NOFIX, MODS1(RND), OPS3(RD, RA, RB))                  \
	E(DSETP, "DSETP", DSETP, X, NOFIX, MODS2(CMP, COMB),                        \
	  OPS4(PU, RA, RB, OPT(PP)))                                                \
	E(DMNMX, "DMNMX", DMNMX, X, NOFIX, MODS1(MNMX), OPS3(RD, RA, RB))           \
	E(F2D, "F2D", F2D, X, NOFIX, MODS0(), OPS2(RD, RA))                         \
	E(D2F, "D2F", D2F, X, NOFIX, MODS1(RND), OPS2(RD, RA))                         \
	E(I2D, "I2D", I2D, X, NOFIX, MODS1(ITYPE), OPS2(RD, RA))                    \
	E(D2I, "D2I", D2I, X, NOFIX, MODS2(ITYPE, IRND), OPS2(RD, RA))                    \
	E(IDIV64, "IDIV64", IDIV64, X, NOFIX, MODS1(ITYPE), OPS3(RD, RA, RB))       \
	E(IREM64, "IREM64", IREM64, X, NOFIX, MODS1(ITYPE), OPS3(RD, RA, RB))       \
	E(DSQRT, "DSQRT", DSQRT, X, NOFIX, MODS1(RND), OPS2(RD, RA))                   \
	E(DRCP, "DRCP", DRCP, X, NOFIX, MODS1(RND), OPS2(RD, RA))                      \
	E(L2D, "L2D", L2D, X, NOFIX, MODS2(ITYPE, RND), OPS2(RD, RA))                    \
	E(D2L, "D2L", D2L, X, NOFIX, MODS2(ITYPE, IRND), OPS2(RD, RA))                    \
	/* extension (docs/core.md "Conversions"): Rd (a pair if 64-bit) <- Ra */ \
	E(CVT, "CVT", CVT, X, NOFIX, MODS4(CVTD, CVTS, CVTR, CVTF), OPS2(RD, RA))        \
	E(LDG, "LDG", LDG, X, NOFIX, MODS1(MSIZE), OPS2(RD, MEM))                   \
	E(STG, "STG", STG, X, NOFIX, MODS1(MSIZE), OPS2(MEM, RB))                   \
	E(LDS, "LDS", LDS, X, NOFIX, MODS1(MSIZE), OPS2(RD, MEM))                   \
	E(STS, "STS", STS, X, NOFIX, MODS1(MSIZE), OPS2(MEM, RB))                   \
	E(LDP, "LDP", LDP, X, NOFIX, MODS1(MSIZE), OPS2(RD, MEM))                   \
	/* atomics: 64-bit types (U64, S64, F64) in pairs; .FTZ: F32 ADD only */ \
	E(ATOMG, "ATOMG", ATOMG, X, NOFIX, MODS3(ATOMOP, ATYPE, FTZ),               \
	  OPS3(RD, MEM, RB))                                                        \
	E(ATOMS, "ATOMS", ATOMS, X, NOFIX, MODS3(ATOMOP, ATYPE, FTZ),               \
	  OPS3(RD, MEM, RB))                                                        \
	/* MSIZE: U16, 32 (the default), 64 (pairs) or 128 (Rd, Rb, Rc: 4 each) */                           \
	E(ATOMG_CAS, "ATOMG.CAS", ATOMG_CAS, X, NOFIX, MODS1(MSIZE),                \
	  OPS4(RD, MEM, RB, RC))                                                    \
	E(ATOMS_CAS, "ATOMS.CAS", ATOMS_CAS, X, NOFIX, MODS1(MSIZE),                \
	  OPS4(RD, MEM, RB, RC))                                                    \
	E(BRA, "BRA", BRA, I, NOFIX, MODS0(), OPS1(TARGET))                         \
	E(EXIT, "EXIT", EXIT, X, NOFIX, MODS0(), OPS0())                            \
	E(TRAP, "TRAP", TRAP, X, FIX(TRAPK, 0), MODS0(), OPS0())                    \
	E(TRAP_ASSERT, "TRAP.ASSERT", TRAP, X, FIX(TRAPK, 1), MODS0(), OPS0())      \
	/* multimem.ld_reduce: no address is a multicast one (docs/core.md) */     \
	E(TRAP_MULTIMEM, "TRAP.MULTIMEM", TRAP, X, FIX(TRAPK, 2), MODS0(),          \
	  OPS1(MEM))                                                                \
	/* a lane not in its member mask (docs/core.md "Warp-synchronous") */   \
	E(WARPSYNC_R, "WARPSYNC", TRAP, R, FIX(TRAPK, 3), MODS0(), OPS1(RA))        \
	E(WARPSYNC_I, "WARPSYNC", TRAP, I, FIX(TRAPK, 3), MODS0(), OPS1(IMM))       \
	/* ---- calls (extension, docs/core.md "Calls") ---- */                     \
	E(CALL_I, "CALL", CALL, I, NOFIX, MODS0(), OPS2(STK, TARGET))               \
	E(CALL_R, "CALL", CALL, R, NOFIX, MODS0(), OPS2(STK, RB))                   \
	E(RET, "RET", RET, X, NOFIX, MODS0(), OPS1(STK))                            \
	E(SALLOC_I, "SALLOC", SALLOC, I, NOFIX, MODS0(), OPS2(STK, IMM))            \
	E(SALLOC_R, "SALLOC", SALLOC, R, NOFIX, MODS0(), OPS2(STK, RB))             \
	E(NANOSLEEP_R, "NANOSLEEP", NANOSLEEP, R, NOFIX, MODS0(), OPS1(RA))         \
	E(NANOSLEEP_I, "NANOSLEEP", NANOSLEEP, I, NOFIX, MODS0(), OPS1(IMM))        \
	E(MEMBAR, "MEMBAR", MEMBAR, X, NOFIX, MODS1(MEMBAR), OPS0())                \
	E(VOTE_ALL, "VOTE.ALL", VOTE, X, FIX(VOTE, 0), MODS0(), OPS2(PU, PP))       \
	E(VOTE_ANY, "VOTE.ANY", VOTE, X, FIX(VOTE, 1), MODS0(), OPS2(PU, PP))       \
	E(VOTE_BALLOT, "VOTE.BALLOT", VOTE, X, FIX(VOTE, 2), MODS0(),               \
	  OPS2(RD, PP))                                                             \
	E(SHFL_R, "SHFL", SHFL, R, NOFIX, MODS1(SHFL), OPS3(RD, RA, RB))            \
	E(SHFL_I, "SHFL", SHFL, I, NOFIX, MODS1(SHFL), OPS3(RD, RA, IMM))           \
	/* ---- BCU group, exactly as seed 002 ---- */                              \
	E(BAR_SYNC_I, "BAR.SYNC", BAR, I, FIX(BARMODE, 0), MODS0(),                 \
	  OPS2(BARID, OPT(CNT)))                                                    \
	E(BAR_SYNC_RR, "BAR.SYNC", BAR, R, FIX(BARMODE, 0), MODS0(),                \
	  OPS2(RA, RB))                                                             \
	E(BAR_SYNC_RRI, "BAR.SYNC", BAR, RRI, FIX(BARMODE, 0), MODS0(),             \
	  OPS2(RB, OPT(CNT)))                                                       \
	E(BAR_SYNC_RIR, "BAR.SYNC", BAR, RIR, FIX(BARMODE, 0), MODS0(),             \
	  OPS2(BARID, RB))                                                          \
	E(BAR_ARV_I, "BAR.ARV", BAR, I, FIX(BARMODE, 1), MODS0(),                   \
	  OPS2(BARID, OPT(CNT)))                                                    \
	E(BAR_ARV_RR, "BAR.ARV", BAR, R, FIX(BARMODE, 1), MODS0(), OPS2(RA, RB))    \
	E(BAR_ARV_RRI, "BAR.ARV", BAR, RRI, FIX(BARMODE, 1), MODS0(),               \
	  OPS2(RB, OPT(CNT)))                                                       \
	E(BAR_ARV_RIR, "BAR.ARV", BAR, RIR, FIX(BARMODE, 1), MODS0(),               \
	  OPS2(BARID, RB))                                                          \
	E(BAR_RED_I, "BAR.RED", BAR_RED, I, NOFIX, MODS1(REDOP),                    \
	  OPS3(BARID, OPT(CNT), PP))                                                \
	E(BAR_RED_R, "BAR.RED", BAR_RED, R, NOFIX, MODS1(REDOP), OPS2(RB, PP))      \
	E(BAR_RED_RRI, "BAR.RED", BAR_RED, RRI, NOFIX, MODS1(REDOP),                \
	  OPS3(RB, CNT, PP))                                                        \
	E(BAR_RED_RIR, "BAR.RED", BAR_RED, RIR, NOFIX, MODS1(REDOP),                \
	  OPS3(BARID, RB, PP))                                                      \
	E(B2R_BAR, "B2R.BAR", B2R, I, FIX(B2RMODE, 1), MODS0(), OPS2(RD, BARID))    \
	E(B2R_WARP, "B2R.WARP", B2R, I, FIX(B2RMODE, 0), MODS0(),                   \
	  OPS2(RD, OPT(BARID)))                                                     \
	E(B2R_RESULT, "B2R.RESULT", B2R_RESULT, X, NOFIX, MODS0(),                  \
	  OPS2(RD, OPT(PU)))                                                        \
	E(R2B_BAR, "R2B.BAR", R2B, RI, FIX(B2RMODE, 1), MODS0(), OPS2(BARID, RA))   \
	E(R2B_WARP, "R2B.WARP", R2B, RI, FIX(B2RMODE, 0), MODS0(),                  \
	  OPS2(OPT(BARID), RA))                                                     \
	/* ---- mbarrier unit (PTX mbarrier.*, seed 001) ---- */                 \
	E(MBAR_INIT_R, "MBAR.INIT", MBAR_INIT, R, NOFIX, MODS0(), OPS2(SA, RB))     \
	E(MBAR_INIT_I, "MBAR.INIT", MBAR_INIT, I, NOFIX, MODS0(), OPS2(SA, IMM))    \
	E(MBAR_INVAL, "MBAR.INVAL", MBAR_INVAL, X, NOFIX, MODS0(), OPS1(SA))        \
	E(MBAR_ARRIVE_X, "MBAR.ARRIVE", MBAR_ARRIVE, X, FIX(ARVKIND, 0), MODS2(MSEMA, MSCOPE),	\
	  OPS2(RD2, SA))                                                            \
	E(MBAR_ARRIVE_R, "MBAR.ARRIVE", MBAR_ARRIVE, R, FIX(ARVKIND, 0), MODS2(MSEMA, MSCOPE),	\
	  OPS3(RD2, SA, RB))                                                        \
	E(MBAR_ARRIVE_I, "MBAR.ARRIVE", MBAR_ARRIVE, I, FIX(ARVKIND, 0), MODS2(MSEMA, MSCOPE),	\
	  OPS3(RD2, SA, IMM))                                                       \
	E(MBAR_ARRIVE_TX_R, "MBAR.ARRIVE.EXPECT_TX", MBAR_ARRIVE, R, FIX(ARVKIND, 1),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, RB))                                  \
	E(MBAR_ARRIVE_TX_I, "MBAR.ARRIVE.EXPECT_TX", MBAR_ARRIVE, I, FIX(ARVKIND, 1),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, IMM))                                 \
	E(MBAR_ARRIVE_NC_R, "MBAR.ARRIVE.NOCOMPLETE", MBAR_ARRIVE, R, FIX(ARVKIND, 2),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, RB))                                  \
	E(MBAR_ARRIVE_NC_I, "MBAR.ARRIVE.NOCOMPLETE", MBAR_ARRIVE, I, FIX(ARVKIND, 2),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, IMM))                                 \
	E(MBAR_DROP_X, "MBAR.ARRIVE_DROP", MBAR_ARRIVE_DROP, X, FIX(ARVKIND, 0), MODS2(MSEMA, MSCOPE),	\
	  OPS2(RD2, SA))                                                            \
	E(MBAR_DROP_R, "MBAR.ARRIVE_DROP", MBAR_ARRIVE_DROP, R, FIX(ARVKIND, 0), MODS2(MSEMA, MSCOPE),	\
	  OPS3(RD2, SA, RB))                                                        \
	E(MBAR_DROP_I, "MBAR.ARRIVE_DROP", MBAR_ARRIVE_DROP, I, FIX(ARVKIND, 0), MODS2(MSEMA, MSCOPE),	\
	  OPS3(RD2, SA, IMM))                                                       \
	E(MBAR_DROP_TX_R, "MBAR.ARRIVE_DROP.EXPECT_TX", MBAR_ARRIVE_DROP, R, FIX(ARVKIND, 1),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, RB))                                  \
	E(MBAR_DROP_TX_I, "MBAR.ARRIVE_DROP.EXPECT_TX", MBAR_ARRIVE_DROP, I, FIX(ARVKIND, 1),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, IMM))                                 \
	E(MBAR_DROP_NC_R, "MBAR.ARRIVE_DROP.NOCOMPLETE", MBAR_ARRIVE_DROP, R, FIX(ARVKIND, 2),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, RB))                                  \
	E(MBAR_DROP_NC_I, "MBAR.ARRIVE_DROP.NOCOMPLETE", MBAR_ARRIVE_DROP, I, FIX(ARVKIND, 2),		\
	  MODS2(MSEMA, MSCOPE), OPS3(RD2, SA, IMM))                                 \
	E(MBAR_EXPECT_TX_R, "MBAR.EXPECT_TX", MBAR_EXPECT_TX, R, NOFIX,            \
	  MODS2(MSEMX, MSCOPE), OPS2(SA, RB))                                       \
	E(MBAR_EXPECT_TX_I, "MBAR.EXPECT_TX", MBAR_EXPECT_TX, I, NOFIX,            \
	  MODS2(MSEMX, MSCOPE), OPS2(SA, IMM))                                      \
	E(MBAR_COMPLETE_TX_R, "MBAR.COMPLETE_TX", MBAR_COMPLETE_TX, R, NOFIX,      \
	  MODS2(MSEMX, MSCOPE), OPS2(SA, RB))                                       \
	E(MBAR_COMPLETE_TX_I, "MBAR.COMPLETE_TX", MBAR_COMPLETE_TX, I, NOFIX,      \
	  MODS2(MSEMX, MSCOPE), OPS2(SA, IMM))                                      \
	E(MBAR_TEST_WAIT, "MBAR.TEST_WAIT", MBAR_TEST_WAIT, R, FIX(WAITKIND, 0),   \
	  MODS2(MSEMW, MSCOPE), OPS3(PU, SA, RC2))                                  \
	E(MBAR_TEST_WAIT_PAR_R, "MBAR.TEST_WAIT.PARITY", MBAR_TEST_WAIT, R,        \
	  FIX(WAITKIND, 1), MODS2(MSEMW, MSCOPE), OPS3(PU, SA, RC))                 \
	E(MBAR_TEST_WAIT_PAR_I, "MBAR.TEST_WAIT.PARITY", MBAR_TEST_WAIT, I,        \
	  FIX(WAITKIND, 1), MODS2(MSEMW, MSCOPE), OPS3(PU, SA, IMM))                \
	E(MBAR_TRY_WAIT_X, "MBAR.TRY_WAIT", MBAR_TRY_WAIT, X, FIX(WAITKIND, 0),    \
	  MODS2(MSEMW, MSCOPE), OPS3(PU, SA, RC2))                                  \
	E(MBAR_TRY_WAIT_R, "MBAR.TRY_WAIT", MBAR_TRY_WAIT, R, FIX(WAITKIND, 0),    \
	  MODS2(MSEMW, MSCOPE), OPS4(PU, SA, RC2, RB))                              \
	E(MBAR_TRY_WAIT_I, "MBAR.TRY_WAIT", MBAR_TRY_WAIT, I, FIX(WAITKIND, 0),    \
	  MODS2(MSEMW, MSCOPE), OPS4(PU, SA, RC2, IMM))                             \
	E(MBAR_TRY_WAIT_PAR_X, "MBAR.TRY_WAIT.PARITY", MBAR_TRY_WAIT, X,           \
	  FIX(WAITKIND, 1), MODS2(MSEMW, MSCOPE), OPS3(PU, SA, RC))                 \
	E(MBAR_TRY_WAIT_PAR_R, "MBAR.TRY_WAIT.PARITY", MBAR_TRY_WAIT, R,           \
	  FIX(WAITKIND, 1), MODS2(MSEMW, MSCOPE), OPS4(PU, SA, RC, RB))             \
	E(MBAR_TRY_WAIT_PAR_I, "MBAR.TRY_WAIT.PARITY", MBAR_TRY_WAIT, I,           \
	  FIX(WAITKIND, 1), MODS2(MSEMW, MSCOPE), OPS4(PU, SA, RC, IMM))            \
	E(MBAR_TRY_WAIT_PAR_RI, "MBAR.TRY_WAIT.PARITY", MBAR_TRY_WAIT, RI,         \
	  FIX(WAITKIND, 1), MODS2(MSEMW, MSCOPE), OPS3(PU, SA, IMM))                \
	E(MBAR_PENDING_COUNT, "MBAR.PENDING_COUNT", MBAR_PENDING_COUNT, X, NOFIX,  \
	  MODS0(), OPS2(RD, RC2))                                                   \
	/* ---- asynchronous copies and the TMA engine ---- */                      \
	E(CP_ASYNC, "CP.ASYNC", CP_ASYNC, I, NOFIX, MODS1(CPCACHE),                \
	  OPS3(SA, GC, IMM))                                                        \
	E(CP_ASYNC_MBAR_ARRIVE, "CP.ASYNC.MBARRIER.ARRIVE", CP_ASYNC_MBAR_ARRIVE,  \
	  X, FIX(CPNOINC, 0), MODS0(), OPS1(SA))                                    \
	E(CP_ASYNC_MBAR_ARRIVE_NOINC, "CP.ASYNC.MBARRIER.ARRIVE.NOINC",            \
	  CP_ASYNC_MBAR_ARRIVE, X, FIX(CPNOINC, 1), MODS0(), OPS1(SA))              \
	E(CP_ASYNC_WAIT_ALL, "CP.ASYNC.WAIT_ALL", CP_ASYNC_WAIT_ALL, X, NOFIX,     \
	  MODS0(), OPS0())                                                          \
	E(CP_BULK_R, "CP.ASYNC.BULK", CP_BULK, R, NOFIX, MODS0(),                  \
	  OPS4(SA, GC, RB, SE))                                                     \
	E(CP_BULK_I, "CP.ASYNC.BULK", CP_BULK, I, NOFIX, MODS0(),                  \
	  OPS4(SA, GC, IMM, SE))                                                    \
	E(CP_BULK_STORE_R, "CP.ASYNC.BULK.GLOBAL", CP_BULK_STORE, R, NOFIX,        \
	  MODS0(), OPS3(GA, SC, RB))                                                \
	E(CP_BULK_STORE_I, "CP.ASYNC.BULK.GLOBAL", CP_BULK_STORE, I, NOFIX,        \
	  MODS0(), OPS3(GA, SC, IMM))                                               \
	E(CP_BULK_COMMIT, "CP.ASYNC.BULK.COMMIT_GROUP", CP_BULK_COMMIT, X, NOFIX,  \
	  MODS0(), OPS0())                                                          \
	E(CP_BULK_WAIT, "CP.ASYNC.BULK.WAIT_GROUP", CP_BULK_WAIT, I,               \
	  FIX(WGREAD, 0), MODS0(), OPS1(IMM))                                       \
	E(CP_BULK_WAIT_READ, "CP.ASYNC.BULK.WAIT_GROUP.READ", CP_BULK_WAIT, I,     \
	  FIX(WGREAD, 1), MODS0(), OPS1(IMM))                                       \
	E(CP_TENSOR, "CP.ASYNC.BULK.TENSOR", CP_TENSOR, X, NOFIX, MODS1(TDIM),     \
	  OPS4(SA, GB, RCN, SE))                                                    \
	E(CP_TENSOR_STORE, "CP.ASYNC.BULK.TENSOR.GLOBAL", CP_TENSOR_STORE, X,      \
	  NOFIX, MODS1(TDIM), OPS3(GB, RCN, SA))                                    \
	/* im2col mode: the offsets in rd .. rd+rank-3, a store has none */        \
	E(CP_TENSOR_IM2COL, "CP.ASYNC.BULK.TENSOR.IM2COL", CP_TENSOR_IM2COL, X,    \
	  NOFIX, MODS1(IMDIM), OPS5(SA, GB, RCN, SE, RDN))                          \
	E(CP_TENSOR_STORE_IM2COL, "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL",            \
	  CP_TENSOR_STORE_IM2COL, X, NOFIX, MODS1(IMDIM), OPS3(GB, RCN, SA))        \
	/* tensor reductions: a store's walk, each element reduced atomically */  \
	E(CP_TENSOR_RED, "CP.REDUCE.ASYNC.BULK.TENSOR", CP_TENSOR_RED, X, NOFIX,   \
	  MODS2(TRED, TDIM), OPS3(GB, RCN, SA))                                     \
	E(CP_TENSOR_RED_IM2COL, "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL",              \
	  CP_TENSOR_RED_IM2COL, X, NOFIX, MODS2(TRED, IMDIM), OPS3(GB, RCN, SA))    \
	/* ---- clusters ---- */                                                    \
	E(MAPA_R, "MAPA", MAPA, R, NOFIX, MODS0(), OPS3(RD, RA, RB))               \
	E(MAPA_I, "MAPA", MAPA, I, NOFIX, MODS0(), OPS3(RD, RA, IMM))              \
	E(BAR_CLUSTER_ARRIVE, "BAR.CLUSTER.ARRIVE", BAR_CLUSTER, X,                \
	  FIX(CLBAR, 0), MODS1(MSEMA), OPS0())                                      \
	E(BAR_CLUSTER_WAIT, "BAR.CLUSTER.WAIT", BAR_CLUSTER, X, FIX(CLBAR, 1),     \
	  MODS1(MSEMW), OPS0())

/*
 * Alternative spellings accepted by the assembler.  The disassembler always
 * prints the canonical one.  X("ALIAS", "CANONICAL")
 */
#define VGPU_ISA_ALIASES(E)                                                    \
	E("B2R", "B2R.BAR")         /* seed: B2R defaults to BAR mode */       \
	E("R2B", "R2B.BAR")         /* seed: R2B defaults to BAR mode */       \
	E("BAR.RESULT", "B2R.RESULT") /* seed's __Syntax spelling */

/*
 * Scheduling annotations "$name[=N]" after the operands, and the field each
 * is recorded in (VGPU_F_<FIELD>).  E(name, FIELD)
 */
#define VGPU_ISA_ANNOTS(E)                                                     \
	E(sched, SCHED)                                                        \
	E(req, REQ)                                                            \
	E(wsb, WSB)

/*
 * Special registers read by S2R.  X(NAME, "SPELLING", index)
 */
#define VGPU_ISA_SREGS(E)                                                      \
	E(TID_X, "SR_TID.X", 0)                                                \
	E(TID_Y, "SR_TID.Y", 1)                                                \
	E(TID_Z, "SR_TID.Z", 2)                                                \
	E(CTAID_X, "SR_CTAID.X", 3)                                            \
	E(CTAID_Y, "SR_CTAID.Y", 4)                                            \
	E(CTAID_Z, "SR_CTAID.Z", 5)                                            \
	E(NTID_X, "SR_NTID.X", 6)                                              \
	E(NTID_Y, "SR_NTID.Y", 7)                                              \
	E(NTID_Z, "SR_NTID.Z", 8)                                              \
	E(NCTAID_X, "SR_NCTAID.X", 9)                                          \
	E(NCTAID_Y, "SR_NCTAID.Y", 10)                                         \
	E(NCTAID_Z, "SR_NCTAID.Z", 11)                                         \
	E(LANEID, "SR_LANEID", 12)                                             \
	E(WARPID, "SR_WARPID", 13)                                             \
	E(NWARPS, "SR_NWARPS", 14)                                             \
	E(TID, "SR_TID", 15) /* flattened thread index in the CTA */           \
	E(CLOCK_LO, "SR_CLOCKLO", 16)                                          \
	E(CLOCK_HI, "SR_CLOCKHI", 17)                                          \
	E(SMID, "SR_SMID", 18)                                                 \
	E(NSMID, "SR_NSMID", 19) /* SMs: every SR_SMID is below it */          \
	E(CLUSTER_CTARANK, "SR_CLUSTER_CTARANK", 20)                           \
	E(CLUSTER_NCTARANK, "SR_CLUSTER_NCTARANK", 21)                         \
	E(CLUSTER_CTAID_X, "SR_CLUSTER_CTAID.X", 22)                           \
	E(CLUSTER_CTAID_Y, "SR_CLUSTER_CTAID.Y", 23)                           \
	E(CLUSTER_CTAID_Z, "SR_CLUSTER_CTAID.Z", 24)                           \
	E(CLUSTER_NCTAID_X, "SR_CLUSTER_NCTAID.X", 25)                         \
	E(CLUSTER_NCTAID_Y, "SR_CLUSTER_NCTAID.Y", 26)                         \
	E(CLUSTER_NCTAID_Z, "SR_CLUSTER_NCTAID.Z", 27)                         \
	E(CLUSTERID_X, "SR_CLUSTERID.X", 28)                                   \
	E(CLUSTERID_Y, "SR_CLUSTERID.Y", 29)                                   \
	E(CLUSTERID_Z, "SR_CLUSTERID.Z", 30)                                   \
	E(NCLUSTERID_X, "SR_NCLUSTERID.X", 31)                                 \
	E(NCLUSTERID_Y, "SR_NCLUSTERID.Y", 32)                                 \
	E(NCLUSTERID_Z, "SR_NCLUSTERID.Z", 33)                                 \
	/* extension (docs/core.md): PTX %globaltimer, nanoseconds */           \
	E(GLOBALTIMER_LO, "SR_GLOBALTIMERLO", 34)                              \
	E(GLOBALTIMER_HI, "SR_GLOBALTIMERHI", 35)                              \
	/* extension (docs/core.md): the CTA's shared memory in bytes, static   \
	 * and dynamic (the launch's smem_bytes), for PTX's %dynamic_smem_size */ \
	E(SMEM_BYTES, "SR_SMEM_BYTES", 36)                                     \
	/* extension: warp identifiers of an SM (its resident warps: PTX's     \
	 * %nwarpid); SR_NWARPS is the CTA's warps */                          \
	E(NWARPID, "SR_NWARPID", 37)                                           \
	/* extension: device-side launch (uapi/vgpu_hw.h, struct             \
	 * vgpu_cdp_header): the launch's area and its grid's identifier */  \
	E(CDP_AREA_LO, "SR_CDP_AREA_LO", 38)                                   \
	E(CDP_AREA_HI, "SR_CDP_AREA_HI", 39)                                   \
	E(CDP_GRID, "SR_CDP_GRID", 40)
