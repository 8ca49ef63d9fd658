/* SPDX-License-Identifier: MIT */
/*
 * Assembler, disassembler, object files and the vgpu-as/vgpu-objdump tools:
 * round trips over every table row and random words, the seed's examples
 * with their exact encodings, every diagnostic with its line:column,
 * labels, directives, object validation and multi-kernel sources; the
 * mbarrier, async-copy and cluster rows (the issue's spellings, modifier
 * positions, register-only addresses, pairs, ranges, the sink, immediate
 * ranges) and every example of docs/ptx-mapping.md.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isa_util.h"
#include "kselftest_host.h"
#include "obj_util.h"
#include "vgpu_asm.h"

#define ERRLEN 8192

static char errbuf[ERRLEN];

static int assemble(const char *src, struct vgpu_object *o)
{
	return vgpu_assemble(src, strlen(src), "t.s", o, errbuf, sizeof(errbuf));
}

static void load_word(const uint8_t *p, uint64_t w[2])
{
	w[0] = w[1] = 0;
	for (unsigned i = 0; i < 16; i++)
		w[i / 8] |= (uint64_t)p[i] << (8 * (i % 8));
}

/* Assemble one statement; its word in @w.  Returns 0 or the error. */
static int asm_one(const char *line, uint64_t w[2])
{
	struct vgpu_object o;
	int ret = assemble(line, &o);

	if (ret)
		return ret;
	if (o.code_size != VGPU_INSN_BYTES) {
		vgpu_object_fini(&o);
		return -ERANGE;
	}
	load_word(o.code, w);
	vgpu_object_fini(&o);
	return 0;
}

/* Expect @src to fail with exactly the diagnostics @expect. */
static void expect_errors(struct __test_metadata *_metadata, const char *src,
			  const char *expect)
{
	struct vgpu_object o;
	int ret = assemble(src, &o);

	EXPECT_EQ(-EINVAL, ret);
	EXPECT_STREQ(expect, errbuf);
	EXPECT_TRUE(o.code == NULL && o.nkernels == 0);
}

static uint64_t field(const uint64_t w[2], unsigned pos, unsigned width)
{
	return vgpu_field_get(w, pos, width);
}

/* Disassemble @w at @pc and assemble the text at @pc (after NOPs). */
static bool round_trip(struct __test_metadata *_metadata, const uint64_t w[2],
		       uint32_t pc, char *text, size_t len)
{
	bool ok;
	char *src = malloc(pc / 4 + len + 16);
	struct vgpu_object o;
	uint64_t back[2];
	bool same;
	int n = vgpu_disasm_insn(w, pc, text, len);

	if (!src || n <= 0 || (size_t)n >= len) {
		free(src);
		return false;
	}
	src[0] = 0;
	for (uint32_t i = 0; i < pc; i += VGPU_INSN_BYTES)
		strcat(src, "NOP\n");
	strcat(src, text);
	ok = !assemble(src, &o);
	EXPECT_TRUE(ok) TH_LOG("\"%s\" does not assemble: %s", text, errbuf);
	if (!ok) {
		free(src);
		return false;
	}
	free(src);
	load_word(o.code + pc, back);
	same = o.code_size == pc + VGPU_INSN_BYTES && back[0] == w[0] &&
	       back[1] == w[1];
	EXPECT_TRUE(same)
		TH_LOG("\"%s\": 0x%016llx 0x%016llx became 0x%016llx 0x%016llx",
		       text, (unsigned long long)w[1], (unsigned long long)w[0],
		       (unsigned long long)back[1], (unsigned long long)back[0]);
	vgpu_object_fini(&o);
	return same;
}

/* ---- (a) round trips ---- */

/* Last defined value of group @g: usually not the default. */
static unsigned last_value(unsigned g)
{
	unsigned v = 0;

	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
		if (vgpu_isa_modvals[i].group == g)
			v = vgpu_isa_modvals[i].value;
	return v;
}

/* Is row @d's fixed modifier @g = @v? */
static bool fixed_as(const struct vgpu_isa_desc *d, unsigned g, unsigned v)
{
	return d->fix_group == g && d->fix_value == v;
}

/*
 * What the 32-bit immediate (operand @i) of row @d means, for the rows
 * whose immediates have a range beyond 32 bits (the brief of the mbarrier,
 * async-copy and cluster rows; see docs/assembly.md).
 */
enum imm_use {
	USE_ANY,
	USE_ARRIVALS,	/* 1 .. 2^20-1 */
	USE_TX,		/* 0 .. 2^20-1 */
	USE_PARITY,	/* 0, 1 */
	USE_CP_SIZE,	/* 4, 8, 16; .CG: 16 */
	USE_BULK_SIZE,	/* 16 .. 2^20-16, multiple of 16 */
	USE_WAIT_GROUP, /* 0 .. 63 */
	USE_RANK,	/* 0 .. 15 */
};

static enum imm_use imm_use(const struct vgpu_isa_desc *d, int i)
{
	switch (d->optype) {
	case VGPU_OPT_MBAR_INIT: return USE_ARRIVALS;
	case VGPU_OPT_MBAR_ARRIVE:
	case VGPU_OPT_MBAR_ARRIVE_DROP:
		return fixed_as(d, VGPU_MG_ARVKIND, VGPU_MOD_ARVKIND_EXPECT_TX)
			       ? USE_TX
			       : USE_ARRIVALS;
	case VGPU_OPT_MBAR_EXPECT_TX:
	case VGPU_OPT_MBAR_COMPLETE_TX: return USE_TX;
	case VGPU_OPT_MBAR_TEST_WAIT:
	case VGPU_OPT_MBAR_TRY_WAIT: /* parity right after the address */
		return fixed_as(d, VGPU_MG_WAITKIND, VGPU_MOD_WAITKIND_PARITY) && i == 2
			       ? USE_PARITY
			       : USE_ANY;
	case VGPU_OPT_CP_ASYNC: return USE_CP_SIZE;
	case VGPU_OPT_CP_BULK:
	case VGPU_OPT_CP_BULK_STORE: return USE_BULK_SIZE;
	case VGPU_OPT_CP_BULK_WAIT: return USE_WAIT_GROUP;
	case VGPU_OPT_MAPA: return USE_RANK;
	default: return USE_ANY;
	}
}

/* A legal immediate for operand @i of row @d: the top of its range, or
 * (@low) the bottom; @w already holds the modifiers. */
static uint32_t legal_imm(const struct vgpu_isa_desc *d, int i,
			  const uint64_t w[2], bool low)
{
	switch (imm_use(d, i)) {
	case USE_ARRIVALS: return low ? 1 : 0xfffff;
	case USE_TX: return low ? 0 : 0xfffff;
	case USE_PARITY: return !low;
	case USE_CP_SIZE:
		return vgpu_isa_mod(w, VGPU_MG_CPCACHE) == VGPU_MOD_CPCACHE_CG || !low
			       ? 16
			       : 4;
	case USE_BULK_SIZE: return low ? 16 : 0xffff0;
	case USE_WAIT_GROUP: return low ? 0 : 63;
	case USE_RANK: return low ? 0 : 15;
	default: return 0x87654321;
	}
}

/* Make immediate @v legal for operand @i of row @d, keeping it random. */
static uint32_t fold_imm(const struct vgpu_isa_desc *d, int i,
			 const uint64_t w[2], uint32_t v)
{
	static const uint32_t cp[3] = { 4, 8, 16 };

	switch (imm_use(d, i)) {
	case USE_ARRIVALS: return v % 0xfffff + 1;
	case USE_TX: return v & 0xfffff;
	case USE_PARITY: return v & 1;
	case USE_CP_SIZE:
		return vgpu_isa_mod(w, VGPU_MG_CPCACHE) == VGPU_MOD_CPCACHE_CG
			       ? 16
			       : cp[v % 3];
	case USE_BULK_SIZE: return (v % 0xffff + 1) * 16;
	case USE_WAIT_GROUP: return v % 64;
	case USE_RANK: return v % 16;
	default: return v;
	}
}

/* Registers of a tensor-coordinate range: the row's TDIM (IMDIM) rank. */
static unsigned coord_regs(const uint64_t w[2])
{
	return vgpu_isa_mod(w, VGPU_MG_TDIM) - VGPU_MOD_TDIM_1D + 1;
}

/* Registers of an im2col-offset range: the rank less 2. */
static unsigned offset_regs(const uint64_t w[2])
{
	return coord_regs(w) - 2;
}

/* A representative word of row @id: non-default everything, or defaults. */
static void sample_word(int id, bool defaults, uint64_t w[2])
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[id];
	bool arv = d->fix_group == VGPU_MG_BARMODE &&
		   d->fix_value == VGPU_MOD_BARMODE_ARV;
	uint64_t mask[2];

	vgpu_isa_match_mask(d, w, mask);
	for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->mods[i]];
		unsigned v = defaults && g->def >= 0 ? (unsigned)g->def
						     : last_value(d->mods[i]);

		vgpu_field_set(w, g->pos, g->width, v);
	}
	isa_make_atom_legal(w, d->optype);
	if (!defaults) {
		vgpu_set(w, VGPU_F_PG, 2);
		vgpu_set(w, VGPU_F_PG_NOT, 1);
		vgpu_set(w, VGPU_F_SCHED, 3);
		vgpu_set(w, VGPU_F_REQ, 5);
		vgpu_set(w, VGPU_F_WSB, 6);
	} else {
		vgpu_set(w, VGPU_F_PG, VGPU_PT);
	}
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		bool dflt = defaults && (d->ops[i] & VGPU_OPK_OPTIONAL);

		switch (VGPU_OPK_KIND(d->ops[i])) {
		case VGPU_OPK_RD: vgpu_set(w, VGPU_F_RD, 4); break;
		case VGPU_OPK_RA: vgpu_set(w, VGPU_F_RA, 9); break;
		case VGPU_OPK_RB: vgpu_set(w, VGPU_F_RB, 12); break;
		case VGPU_OPK_RC: vgpu_set(w, VGPU_F_RC, VGPU_RZ); break;
		case VGPU_OPK_IMM:
			vgpu_set(w, VGPU_F_IMM32, legal_imm(d, i, w, defaults));
			break;
		/* wide registers at the top of their range, or RZ ("_") */
		case VGPU_OPK_RD2: vgpu_set(w, VGPU_F_RD, defaults ? VGPU_RZ : 253); break;
		case VGPU_OPK_RC2: vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 253); break;
		case VGPU_OPK_RCN:
			vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 255 - coord_regs(w));
			break;
		case VGPU_OPK_RDN:
			vgpu_set(w, VGPU_F_RD, defaults ? VGPU_RZ : 255 - offset_regs(w));
			break;
		case VGPU_OPK_SA: vgpu_set(w, VGPU_F_RA, defaults ? VGPU_RZ : 9); break;
		case VGPU_OPK_SC: vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 11); break;
		case VGPU_OPK_SE: vgpu_set(w, VGPU_F_RE, defaults ? VGPU_RZ : 254); break;
		case VGPU_OPK_GA: vgpu_set(w, VGPU_F_RA, defaults ? VGPU_RZ : 253); break;
		case VGPU_OPK_GB: vgpu_set(w, VGPU_F_RB, defaults ? VGPU_RZ : 14); break;
		case VGPU_OPK_GC: vgpu_set(w, VGPU_F_RC, defaults ? VGPU_RZ : 252); break;
		case VGPU_OPK_FIMM: vgpu_set(w, VGPU_F_IMM32, 0x3fc00000); break;
		case VGPU_OPK_BARID: vgpu_set(w, VGPU_F_BARID, dflt ? 0 : 15); break;
		case VGPU_OPK_CNT: /* BAR.ARV cannot take count 0 */
			vgpu_set(w, VGPU_F_CNT, dflt ? arv * 32 : 0xfe0);
			break;
		case VGPU_OPK_PP:
			vgpu_set(w, VGPU_F_PP, dflt ? VGPU_PT : 3);
			vgpu_set(w, VGPU_F_PP_NOT, !dflt);
			break;
		case VGPU_OPK_PU: vgpu_set(w, VGPU_F_PU, dflt ? VGPU_PT : 6); break;
		case VGPU_OPK_SR: vgpu_set(w, VGPU_F_SR, VGPU_SR_NCTAID_Z); break;
		case VGPU_OPK_MEM:
			vgpu_set(w, VGPU_F_RA, defaults ? VGPU_RZ : 6);
			vgpu_set(w, VGPU_F_OFF24, defaults ? 0x7fffff : 0xffffe0);
			break;
		case VGPU_OPK_TARGET: vgpu_set(w, VGPU_F_IMM32, 0x40); break;
		}
	}
}

TEST(round_trip_every_row)
{
	char text[256];

	for (int id = 0; id < (int)VGPU_I__COUNT; id++) {
		for (int dflt = 0; dflt < 2; dflt++) {
			uint64_t w[2];

			sample_word(id, dflt, w);
			ASSERT_EQ(id, vgpu_isa_decode(w));
			EXPECT_TRUE(round_trip(_metadata, w, dflt ? 0x30 : 0, text, sizeof(text)));
			EXPECT_NE(0, strncmp(text, ".word", 5));
			EXPECT_TRUE(strncmp(text, vgpu_isa_table[id].mnemonic,
					    strlen(vgpu_isa_table[id].mnemonic)) == 0 ||
				    text[0] == '@');
		}
	}
}

TEST(round_trip_shows_non_defaults)
{
	char text[256];
	uint64_t w[2];

	sample_word(VGPU_I_BAR_RED_I, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P2 BAR.RED.POPC 0xf, 0xfe0, !P3 $sched=3 $req=5 $wsb=6 ;", text);
	sample_word(VGPU_I_BAR_RED_I, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("BAR.RED.POPC 0xf, !P3 ;", text); /* cnt omitted */
	sample_word(VGPU_I_STG, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P2 STG.128 [R6-0x20], R12 $sched=3 $req=5 $wsb=6 ;", text);
	sample_word(VGPU_I_LDS, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("LDS R4, [0x7fffff] ;", text);
	sample_word(VGPU_I_ISETP_I, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("ISETP.GE.S32 P6, R9, 0x87654321 ;", text);
	sample_word(VGPU_I_R2B_WARP, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("R2B.WARP R9 ;", text);
	sample_word(VGPU_I_BRA, true, w);
	EXPECT_EQ(11, vgpu_disasm_insn(w, 0x100, text, sizeof(text)));
	EXPECT_STREQ("BRA 0x140 ;", text);
	/* the new kinds: pairs and ranges at the top, the sink, [RZ] */
	sample_word(VGPU_I_MBAR_ARRIVE_TX_I, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(text, "@!P2 MBAR.ARRIVE.EXPECT_TX.RELAXED.CLUSTER R253, [R9], 0xfffff "
			   "$sched=3 $req=5 $wsb=6 ;");
	sample_word(VGPU_I_MBAR_ARRIVE_TX_I, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.ARRIVE.EXPECT_TX _, [RZ], 0x0 ;", text);
	sample_word(VGPU_I_CP_TENSOR, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(text, "@!P2 CP.ASYNC.BULK.TENSOR.5D [R9], [R14], R250, [R254] "
			   "$sched=3 $req=5 $wsb=6 ;");
	sample_word(VGPU_I_CP_TENSOR_IM2COL, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(text, "@!P2 CP.ASYNC.BULK.TENSOR.IM2COL.5D [R9], [R14], R250, [R254], R252 "
			   "$sched=3 $req=5 $wsb=6 ;");
	sample_word(VGPU_I_MBAR_TRY_WAIT_PAR_RI, true, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.TRY_WAIT.PARITY P6, [RZ], 0x0 ;", text);
	sample_word(VGPU_I_CP_ASYNC, false, w);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P2 CP.ASYNC.CG [R9], [R252], 0x10 $sched=3 $req=5 $wsb=6 ;", text);
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static unsigned random_value(unsigned g)
{
	unsigned vals[16], n = 0;

	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
		if (vgpu_isa_modvals[i].group == g)
			vals[n++] = vgpu_isa_modvals[i].value;
	return vals[rnd() % n];
}

/* Make a random word of row @id legal for the assembler too. */
static void fix_semantics(int id, uint64_t w[2])
{
	const struct vgpu_isa_desc *d = &vgpu_isa_table[id];

	isa_make_atom_legal(w, d->optype);

	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		switch (VGPU_OPK_KIND(d->ops[i])) {
		case VGPU_OPK_CNT:
			vgpu_set(w, VGPU_F_CNT, vgpu_get(w, VGPU_F_CNT) & ~31ull);
			if (!vgpu_get(w, VGPU_F_CNT) && d->fix_group == VGPU_MG_BARMODE &&
			    d->fix_value == VGPU_MOD_BARMODE_ARV)
				vgpu_set(w, VGPU_F_CNT, 32);
			break;
		case VGPU_OPK_SR:
			vgpu_set(w, VGPU_F_SR,
				 vgpu_isa_sregs[rnd() % VGPU_ISA_NUM_SREGS].index);
			break;
		case VGPU_OPK_RD: /* keep wide ranges below R254, or RZ */
			if (vgpu_get(w, VGPU_F_RD) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RD, vgpu_get(w, VGPU_F_RD) % 250);
			break;
		case VGPU_OPK_RB:
			if (vgpu_get(w, VGPU_F_RB) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RB, vgpu_get(w, VGPU_F_RB) % 250);
			break;
		case VGPU_OPK_RA: /* f64 pairs too */
			if (vgpu_get(w, VGPU_F_RA) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RA, vgpu_get(w, VGPU_F_RA) % 250);
			break;
		case VGPU_OPK_RC:
			if (vgpu_get(w, VGPU_F_RC) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RC, vgpu_get(w, VGPU_F_RC) % 250);
			break;
		case VGPU_OPK_RD2: /* 64-bit pairs end at R254, or are RZ */
			if (vgpu_get(w, VGPU_F_RD) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RD, vgpu_get(w, VGPU_F_RD) % 254);
			break;
		case VGPU_OPK_RC2:
		case VGPU_OPK_GC:
			if (vgpu_get(w, VGPU_F_RC) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RC, vgpu_get(w, VGPU_F_RC) % 254);
			break;
		case VGPU_OPK_GA:
			if (vgpu_get(w, VGPU_F_RA) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RA, vgpu_get(w, VGPU_F_RA) % 254);
			break;
		case VGPU_OPK_GB:
			if (vgpu_get(w, VGPU_F_RB) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RB, vgpu_get(w, VGPU_F_RB) % 254);
			break;
		case VGPU_OPK_STK: /* the call block R..R+3: never RZ, ends at R254 */
			vgpu_set(w, VGPU_F_RA, vgpu_get(w, VGPU_F_RA) % 252);
			break;
		case VGPU_OPK_RCN: /* rank registers ending at R254, or RZ */
			if (vgpu_get(w, VGPU_F_RC) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RC,
					 vgpu_get(w, VGPU_F_RC) % (256 - coord_regs(w)));
			break;
		case VGPU_OPK_RDN: /* rank - 2 registers ending at R254, or RZ */
			if (vgpu_get(w, VGPU_F_RD) != VGPU_RZ)
				vgpu_set(w, VGPU_F_RD,
					 vgpu_get(w, VGPU_F_RD) % (256 - offset_regs(w)));
			break;
		case VGPU_OPK_IMM:
			vgpu_set(w, VGPU_F_IMM32,
				 fold_imm(d, i, w, (uint32_t)vgpu_get(w, VGPU_F_IMM32)));
			break;
		}
	}
}

TEST(round_trip_random_valid_words)
{
	char text[256];
	int ok = 0;

	rng_state = 0x1234567887654321ull;
	for (int n = 0; n < 20000; n++) {
		int id = (int)(rnd() % VGPU_I__COUNT);
		const struct vgpu_isa_desc *d = &vgpu_isa_table[id];
		uint64_t w[2] = { rnd(), rnd() }, match[2], mask[2], used[2];

		vgpu_isa_match_mask(d, match, mask);
		vgpu_isa_used_bits(d, used);
		w[0] = (w[0] & used[0] & ~mask[0]) | match[0];
		w[1] = (w[1] & used[1] & ~mask[1]) | match[1];
		for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++)
			vgpu_field_set(w, vgpu_isa_modgroups[d->mods[i]].pos,
				       vgpu_isa_modgroups[d->mods[i]].width,
				       random_value(d->mods[i]));
		fix_semantics(id, w);
		if (vgpu_isa_decode(w) != id)
			continue;
		if (!round_trip(_metadata, w, 0, text, sizeof(text)))
			break;
		EXPECT_NE(0, strncmp(text, ".word", 5))
			TH_LOG("valid word printed as %s", text);
		if (!strncmp(text, ".word", 5))
			break;
		ok++;
	}
	EXPECT_EQ(20000, ok);
}

/* Any 128 bits survive disassembly and assembly, illegal ones as .word. */
TEST(round_trip_random_raw_words)
{
	char text[256];
	int illegal = 0, n;

	rng_state = 42;
	for (n = 0; n < 5000; n++) {
		uint64_t w[2] = { rnd(), rnd() };

		if (n & 1) /* keep a known optype half of the time */
			w[0] = (w[0] & ~0xffull) | vgpu_isa_table[rnd() % VGPU_I__COUNT].optype;
		if (!round_trip(_metadata, w, (uint32_t)(n % 4) * 16, text, sizeof(text)))
			break;
		illegal += vgpu_isa_decode(w) < 0;
	}
	EXPECT_EQ(5000, n);
	EXPECT_GT(illegal, 4000);
}

TEST(disasm_word_forms)
{
	uint64_t w[2] = { 0, 0 };
	char text[256];
	int n;

	n = vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ(".word 0x0000000000000000, 0x0000000000000000 ; // illegal", text);
	EXPECT_EQ((int)strlen(text), n);
	/* truncation keeps snprintf semantics */
	EXPECT_EQ(n, vgpu_disasm_insn(w, 0, text, 8));
	EXPECT_STREQ(".word 0", text);
	/* decodable, but the assembler would refuse it: still a .word */
	ASSERT_EQ(0, asm_one("BAR.ARV 0x1, 0x20", w));
	vgpu_set(w, VGPU_F_CNT, 0);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_CONTAINS(text, ".word 0x");
	EXPECT_CONTAINS(text, " ; // BAR.ARV needs a non-zero barrier count");
	vgpu_set(w, VGPU_F_CNT, 0x11);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_CONTAINS(text, " ; // BAR.ARV: barrier count 17 is not a multiple of 32");
	ASSERT_EQ(0, asm_one("S2R R1, SR_SMID", w));
	vgpu_set(w, VGPU_F_SR, 200);
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_CONTAINS(text, "unknown special register index 200");
	/* guards */
	ASSERT_EQ(0, asm_one("@!PT NOP", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!PT NOP ;", text);
	ASSERT_EQ(0, asm_one("@pt nop", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("NOP ;", text);
}

/* Decodable words the assembler would refuse print as .word with why. */
TEST(disasm_async_word_forms)
{
	static const struct {
		const char *line;	/* a valid statement */
		unsigned pos, width;	/* a field to break */
		uint64_t val;
		const char *why;	/* the comment of the .word */
	} bad[] = {
		{ "MBAR.INIT [R2], 0x20", VGPU_F_IMM32, 0,
		  "// MBAR.INIT: arrival count 0 out of range (1..1048575)" },
		{ "MBAR.ARRIVE R4, [R2], 1", VGPU_F_IMM32, 0x100000,
		  "// MBAR.ARRIVE: arrival count 1048576 out of range (1..1048575)" },
		{ "MBAR.ARRIVE.EXPECT_TX R4, [R2], 1", VGPU_F_IMM32, 0x100000,
		  "// MBAR.ARRIVE.EXPECT_TX: tx-count 1048576 out of range (0..1048575)" },
		{ "MBAR.COMPLETE_TX [R2], 1", VGPU_F_IMM32, 0xffffffff,
		  "// MBAR.COMPLETE_TX: tx-count 4294967295 out of range (0..1048575)" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], 1", VGPU_F_IMM32, 3,
		  "// MBAR.TRY_WAIT.PARITY: phase parity 3 is not 0 or 1" },
		{ "CP.ASYNC [R6], [R8], 4", VGPU_F_IMM32, 2,
		  "// CP.ASYNC: copy size 2 is not 4, 8 or 16" },
		{ "CP.ASYNC.CG [R6], [R8], 16", VGPU_F_IMM32, 4,
		  "// CP.ASYNC.CG copies 16 bytes only, not 4" },
		{ "CP.ASYNC.BULK.GLOBAL [R8], [R6], 16", VGPU_F_IMM32, 8,
		  "// CP.ASYNC.BULK.GLOBAL: bulk copy size 8 is not a multiple of 16 in 16..1048560" },
		{ "CP.ASYNC.BULK.WAIT_GROUP.READ 1", VGPU_F_IMM32, 64,
		  "// CP.ASYNC.BULK.WAIT_GROUP.READ: pending bulk group count 64 out of range (0..63)" },
		{ "MAPA R1, R2, 1", VGPU_F_IMM32, 31,
		  "// MAPA: CTA rank 31 out of range (0..15)" },
		{ "MBAR.ARRIVE R4, [R2]", VGPU_F_RD, 254,
		  "// MBAR.ARRIVE: 64-bit mbarrier state needs R254..R255, past R254" },
		{ "CP.ASYNC.BULK [R6], [R8], R9, [R2]", VGPU_F_RC, 254,
		  "// CP.ASYNC.BULK: 64-bit global address needs R254..R255, past R254" },
		{ "CP.ASYNC.BULK.TENSOR.4D [R6], [R8], R10, [R2]", VGPU_F_RC, 252,
		  "// CP.ASYNC.BULK.TENSOR: 4D tensor coordinates need R252..R255, past R254" },
	};
	char text[256];
	uint64_t w[2];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(0, asm_one(bad[i].line, w));
		vgpu_field_set(w, bad[i].pos, bad[i].width, bad[i].val);
		ASSERT_GE(vgpu_isa_decode(w), 0);
		vgpu_disasm_insn(w, 0, text, sizeof(text));
		EXPECT_EQ(0, strncmp(text, ".word 0x", 8));
		EXPECT_CONTAINS(text, bad[i].why);
		EXPECT_TRUE(round_trip(_metadata, w, 0, text, sizeof(text)));
	}
	/* the hint of try_wait is any 32-bit value; the sink prints as "_",
	 * an RZ token source as RZ */
	ASSERT_EQ(0, asm_one("MBAR.TRY_WAIT.PARITY P0, [R2], R3, 0xffffffff", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.TRY_WAIT.PARITY P0, [R2], R3, 0xffffffff ;", text);
	ASSERT_EQ(0,
		  asm_one("@!P1 MBAR.ARRIVE_DROP.EXPECT_TX.RELAXED.CLUSTER RZ, [RZ], 0x0 $sched=1", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("@!P1 MBAR.ARRIVE_DROP.EXPECT_TX.RELAXED.CLUSTER _, [RZ], 0x0 $sched=1 ;",
		     text);
	ASSERT_EQ(0, asm_one("MBAR.PENDING_COUNT RZ, RZ", w));
	vgpu_disasm_insn(w, 0, text, sizeof(text));
	EXPECT_STREQ("MBAR.PENDING_COUNT RZ, RZ ;", text);
}

/* ---- (b) the seed's examples ---- */

/* Every line of seed 002's __Examples blocks, verbatim. */
static const char *const seed_bcu[] = {
	"BAR.SYNC 0x0 ; //",
	"BAR.ARV 0x1, 0x80 ;",
	"BAR.ARV 0x1, R5 ;",
	"BAR.ARV R4, 0x80 ;",
	"BAR.ARV R5, R5 ;    // => BAR.ARV R5, R5;",
	"BAR.SYNC R7, R7 ;   // => BAR.SYNC R7, R7;",
	"BAR.SYNC R4 ;",
	"",
	"BAR.RED.OR 0x0, P0 ;",
	"BAR.RED.AND 0x1, 0x80, P0 ;",
	"BAR.RED.AND 0x1, R5, P0 ;",
	"BAR.RED.AND R4, P0 ;",
	"BAR.RED.AND R4, 0x80, P0 ;",
	"BAR.RED.AND R5, R5, P0 ;",
	"",
	"B2R.RESULT RZ, P0 ;",
	"B2R.RESULT R4 ;",
	"B2R.BAR R4, 0x2;",
	"B2R.WARP R4;",
	"",
	"R2B.WARP R4;",
	"R2B.BAR 0x4, R4;",
	NULL,
};

static const char *const seed_bar[] = {
	"BAR.SYNC 0x0, 0x40 ;",
	"BAR.SYNC  R0, R1   ;",
	"BAR.ARV  0x0, R1   ;",
	NULL,
};

static const char *const seed_bar_red[] = {
	"BAR.RED.POPC 0x0, 0x40,  PT; // 在64个线程之间进行popcount归约",
	"BAR.RED.OR          R0, !P1; // 使用barId=R0 & 0xF的barrier，在cnt=(R0 & 0xFFF)>>4个线程之间进行逻辑或归约",
	NULL,
};

static const char *const seed_b2r[] = {
	"B2R R0, 0x0;         // 默认为BAR模式，R0=BARState[0]",
	"B2R.WARP R0, 0x0;    // WARP模式将当前WARP的临时WarpBARState存入R0，忽略输入的BarId",
	"                     // WarpBARState是BAR_RED完成同步后自动下发，其他情形为未定义行为。",
	"",
	"B2R.BAR R0, 0x0;     // 获取barrier-0的状态",
	"",
	"BAR.RED.POPC 0x1, 0x40, PT; // 在64个线程之间进行popcount归约",
	"...",
	"B2R.WARP R1, 0x4;    // 获取上次BAR.RED所用barrier-1的状态，此时第2个立即数是不生效的",
	NULL,
};

static const char *const seed_b2r_result[] = {
	"BAR.RED.POPC 0x0, 0x40, PT; // 在64个线程之间进行popcount归约",
	"BAR.RESULT R0, PT;     // 获取归约结果，写入R0，并舍弃谓词输出",
	NULL,
};

static const char *const seed_r2b[] = {
	"R2B 0x0, R0;    // 默认为BAR模式，BARState[0]=R0",
	"R2B.WARP R0;    // WARP模式将R0存入当前WARP的临时WarpBARState中，忽略输入的BarId",
	"",
	"R2B.BAR 0x0, R0;     // 用R0设置barrier-0的状态",
	"BAR.RED.POPC 0x1, 0x40, PT; // 在64个线程之间进行popcount归约",
	"...",
	"R2B.WARP 0x4, R1;    // 用R1设置上次BAR.RED的状态信息的本地副本，此时第1个立即数是不生效的",
	NULL,
};

static const char *const *const seed_blocks[] = {
	seed_bcu, seed_bar, seed_bar_red, seed_b2r, seed_b2r_result, seed_r2b,
};

#define SEED_BAD_LINE "BAR.RED.AND R5, R5, P0 ;"
#define SEED_BAD_MSG                                                          \
	"t.s:1:1: error: BAR.RED.AND does not take (GPR, GPR, predicate); "   \
	"accepted forms: (UImm4, [UImm12,] predicate), (GPR, predicate), "    \
	"(GPR, UImm12, predicate), (UImm4, GPR, predicate)\n"

/* An instruction line: not blank, not only a comment, not the "..." elision. */
static bool is_insn_line(const char *s)
{
	s += strspn(s, " ");
	return *s && strncmp(s, "//", 2) && strcmp(s, "...");
}

TEST(seed_examples_assemble)
{
	int lines = 0;

	for (size_t b = 0; b < sizeof(seed_blocks) / sizeof(seed_blocks[0]); b++) {
		char src[4096] = "";
		struct vgpu_object o;
		unsigned int insns = 0;

		for (const char *const *l = seed_blocks[b]; *l; l++) {
			uint64_t w[2];

			if (!strcmp(*l, SEED_BAD_LINE) || !strcmp(*l, "..."))
				continue;
			strcat(src, *l);
			strcat(src, "\n");
			if (!is_insn_line(*l))
				continue;
			insns++;
			lines++;
			EXPECT_EQ(0, asm_one(*l, w))
				TH_LOG("seed line \"%s\": %s", *l, errbuf);
		}
		/* each block as one source, too */
		ASSERT_EQ(0, assemble(src, &o));
		EXPECT_EQ(insns * 16, o.code_size);
		vgpu_object_fini(&o);
	}
	EXPECT_EQ(35, lines); /* 36 lines, less BAR.RED.AND R5, R5, P0 */
}

TEST(seed_bar_red_gpr_gpr_is_rejected)
{
	expect_errors(_metadata, SEED_BAD_LINE, SEED_BAD_MSG);
	expect_errors(_metadata, "BAR.RED.AND R5, R5, P0 ;\nBAR.RED.AND R5, R5, P0 ;",
		      "t.s:1:1: error: BAR.RED.AND does not take (GPR, GPR, predicate); "
		      "accepted forms: (UImm4, [UImm12,] predicate), (GPR, predicate), "
		      "(GPR, UImm12, predicate), (UImm4, GPR, predicate)\n"
		      "t.s:2:1: error: BAR.RED.AND does not take (GPR, GPR, predicate); "
		      "accepted forms: (UImm4, [UImm12,] predicate), (GPR, predicate), "
		      "(GPR, UImm12, predicate), (UImm4, GPR, predicate)\n");
}

TEST(seed_elision_is_not_an_instruction)
{
	struct vgpu_object o;

	EXPECT_EQ(-EINVAL, assemble("NOP\n...\n", &o));
	EXPECT_STREQ("t.s:2:1: error: expected a directive name after '.'\n", errbuf);
}

/* Expected fields of one seed example; -1: not checked. */
struct enc {
	const char *line;
	int optype, stype, mode; /* mode: bits 80.. of the row's mode group */
	int rd, ra, rb, barid, cnt, pp, pp_not, pu;
};

static const struct enc seed_encodings[] = {
	{ "BAR.SYNC 0x0 ; //", 0x40, VGPU_ST_I, 0, -1, -1, -1, 0, 0, -1, -1, -1 },
	{ "BAR.ARV 0x1, 0x80 ;", 0x40, VGPU_ST_I, 1, -1, -1, -1, 1, 0x80, -1, -1, -1 },
	{ "BAR.ARV 0x1, R5 ;", 0x40, VGPU_ST_RIR, 1, -1, -1, 5, 1, -1, -1, -1, -1 },
	{ "BAR.ARV R4, 0x80 ;", 0x40, VGPU_ST_RRI, 1, -1, -1, 4, -1, 0x80, -1, -1, -1 },
	{ "BAR.ARV R5, R5 ;", 0x40, VGPU_ST_R, 1, -1, 5, 5, -1, -1, -1, -1, -1 },
	{ "BAR.SYNC R7, R7 ;", 0x40, VGPU_ST_R, 0, -1, 7, 7, -1, -1, -1, -1, -1 },
	{ "BAR.SYNC R4 ;", 0x40, VGPU_ST_RRI, 0, -1, -1, 4, -1, 0, -1, -1, -1 },
	{ "BAR.SYNC 0x0, 0x40 ;", 0x40, VGPU_ST_I, 0, -1, -1, -1, 0, 0x40, -1, -1, -1 },
	{ "BAR.RED.OR 0x0, P0 ;", 0x41, VGPU_ST_I, 1, -1, -1, -1, 0, 0, 0, 0, -1 },
	{ "BAR.RED.AND 0x1, 0x80, P0 ;", 0x41, VGPU_ST_I, 0, -1, -1, -1, 1, 0x80, 0, 0, -1 },
	{ "BAR.RED.AND 0x1, R5, P0 ;", 0x41, VGPU_ST_RIR, 0, -1, -1, 5, 1, -1, 0, 0, -1 },
	{ "BAR.RED.AND R4, P0 ;", 0x41, VGPU_ST_R, 0, -1, -1, 4, -1, -1, 0, 0, -1 },
	{ "BAR.RED.AND R4, 0x80, P0 ;", 0x41, VGPU_ST_RRI, 0, -1, -1, 4, -1, 0x80, 0, 0, -1 },
	{ "BAR.RED.POPC 0x0, 0x40,  PT;", 0x41, VGPU_ST_I, 2, -1, -1, -1, 0, 0x40, 7, 0, -1 },
	{ "BAR.RED.OR          R0, !P1;", 0x41, VGPU_ST_R, 1, -1, -1, 0, -1, -1, 1, 1, -1 },
	{ "B2R.RESULT RZ, P0 ;", 0x43, VGPU_ST_X, -1, 255, -1, -1, -1, -1, -1, -1, 0 },
	{ "B2R.RESULT R4 ;", 0x43, VGPU_ST_X, -1, 4, -1, -1, -1, -1, -1, -1, 7 },
	{ "BAR.RESULT R0, PT;", 0x43, VGPU_ST_X, -1, 0, -1, -1, -1, -1, -1, -1, 7 },
	{ "B2R.BAR R4, 0x2;", 0x42, VGPU_ST_I, 1, 4, -1, -1, 2, -1, -1, -1, -1 },
	{ "B2R.WARP R4;", 0x42, VGPU_ST_I, 0, 4, -1, -1, 0, -1, -1, -1, -1 },
	{ "B2R R0, 0x0;", 0x42, VGPU_ST_I, 1, 0, -1, -1, 0, -1, -1, -1, -1 },
	{ "B2R.WARP R1, 0x4;", 0x42, VGPU_ST_I, 0, 1, -1, -1, 4, -1, -1, -1, -1 },
	{ "R2B.WARP R4;", 0x44, VGPU_ST_RI, 0, -1, 4, -1, 0, -1, -1, -1, -1 },
	{ "R2B.BAR 0x4, R4;", 0x44, VGPU_ST_RI, 1, -1, 4, -1, 4, -1, -1, -1, -1 },
	{ "R2B 0x0, R0;", 0x44, VGPU_ST_RI, 1, -1, 0, -1, 0, -1, -1, -1, -1 },
	{ "R2B.WARP 0x4, R1;", 0x44, VGPU_ST_RI, 0, -1, 1, -1, 4, -1, -1, -1, -1 },
};

static void check_field(struct __test_metadata *_metadata, const char *line,
			const char *name, const uint64_t w[2], unsigned pos,
			unsigned width, int expect)
{
	if (expect >= 0)
		EXPECT_EQ((uint64_t)expect, field(w, pos, width))
			TH_LOG("%s: %s = 0x%llx, expected 0x%x", line, name,
			       (unsigned long long)field(w, pos, width), expect);
}

TEST(seed_example_encodings)
{
	bool ok;

	for (size_t i = 0; i < sizeof(seed_encodings) / sizeof(seed_encodings[0]); i++) {
		const struct enc *e = &seed_encodings[i];
		uint64_t w[2];
		int id;

		ok = !asm_one(e->line, w);
		EXPECT_TRUE(ok) TH_LOG("%s: %s", e->line, errbuf);
		if (!ok)
			continue;
		id = vgpu_isa_decode(w);
		ASSERT_GE(id, 0);
		check_field(_metadata, e->line, "optype", w, VGPU_F_OPTYPE, e->optype);
		check_field(_metadata, e->line, "stype", w, VGPU_F_STYPE, e->stype);
		check_field(_metadata, e->line, "pg", w, VGPU_F_PG, 7);
		check_field(_metadata, e->line, "pg.not", w, VGPU_F_PG_NOT, 0);
		check_field(_metadata, e->line, "mode", w, 80,
			    e->optype == 0x41 ? 2 : 1, e->mode);
		check_field(_metadata, e->line, "rd", w, VGPU_F_RD, e->rd);
		check_field(_metadata, e->line, "ra", w, VGPU_F_RA, e->ra);
		check_field(_metadata, e->line, "rb", w, VGPU_F_RB, e->rb);
		check_field(_metadata, e->line, "barid", w, VGPU_F_BARID, e->barid);
		check_field(_metadata, e->line, "cnt", w, VGPU_F_CNT, e->cnt);
		check_field(_metadata, e->line, "pp", w, VGPU_F_PP, e->pp);
		check_field(_metadata, e->line, "pp.not", w, VGPU_F_PP_NOT, e->pp_not);
		check_field(_metadata, e->line, "pu", w, VGPU_F_PU, e->pu);
		EXPECT_EQ(0u, w[1] >> 48); /* no annotations */
	}
}

TEST(seed_rows_chosen)
{
	static const struct {
		const char *line;
		int id;
	} rows[] = {
		{ "BAR.SYNC 0x0", VGPU_I_BAR_SYNC_I },
		{ "BAR.SYNC R4", VGPU_I_BAR_SYNC_RRI },
		{ "BAR.ARV 0x1, R5", VGPU_I_BAR_ARV_RIR },
		{ "BAR.ARV R5, R5", VGPU_I_BAR_ARV_RR },
		{ "BAR.RED.OR 0x0, P0", VGPU_I_BAR_RED_I },
		{ "BAR.RED.OR R0, !P1", VGPU_I_BAR_RED_R },
		{ "BAR.RED.AND R4, 0x80, P0", VGPU_I_BAR_RED_RRI },
		{ "B2R R0, 0x0", VGPU_I_B2R_BAR },
		{ "B2R.WARP R4", VGPU_I_B2R_WARP },
		{ "BAR.RESULT R0, PT", VGPU_I_B2R_RESULT },
		{ "R2B 0x0, R0", VGPU_I_R2B_BAR },
		{ "R2B.WARP R4", VGPU_I_R2B_WARP },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t w[2];

		ASSERT_EQ(0, asm_one(rows[i].line, w));
		EXPECT_EQ(rows[i].id, vgpu_isa_decode(w));
	}
}

TEST(annotations_and_guards_encode)
{
	uint64_t w[2];

	ASSERT_EQ(0, asm_one("@!P3 BAR.SYNC 0x2, 0x40 $sched=15 $req=63 $wsb=7 ;", w));
	EXPECT_EQ(3u, vgpu_get(w, VGPU_F_PG));
	EXPECT_EQ(1u, vgpu_get(w, VGPU_F_PG_NOT));
	EXPECT_EQ(15u, vgpu_get(w, VGPU_F_SCHED));
	EXPECT_EQ(63u, vgpu_get(w, VGPU_F_REQ));
	EXPECT_EQ(7u, vgpu_get(w, VGPU_F_WSB));
	ASSERT_EQ(0, asm_one("bar.sync 0x2 $sched $req $wsb", w));
	EXPECT_EQ(0u, w[1] >> 48);
	ASSERT_EQ(0, asm_one("@P0 b2r.result r1, p2 // lower case", w));
	EXPECT_EQ(0u, vgpu_get(w, VGPU_F_PG));
	EXPECT_EQ(2u, vgpu_get(w, VGPU_F_PU));
	EXPECT_EQ(1u, vgpu_get(w, VGPU_F_RD));
}

TEST(operands_encode)
{
	uint64_t w[2];

	ASSERT_EQ(0, asm_one("MOV R1, -1", w));
	EXPECT_EQ(0xffffffff, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("MOV R1, 4294967295", w));
	EXPECT_EQ(0xffffffff, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("MOV R1, -2147483648", w));
	EXPECT_EQ(0x80000000, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("FADD R1, R2, 1.5", w));
	EXPECT_EQ(0x3fc00000u, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("FMUL R1, R2, -2e3", w));
	EXPECT_EQ(0xc4fa0000, vgpu_get(w, VGPU_F_IMM32));
	ASSERT_EQ(0, asm_one("FFMA R1, R2, 0x3f800000, R3", w)); /* raw bits */
	EXPECT_EQ(0x3f800000u, vgpu_get(w, VGPU_F_IMM32));
	EXPECT_EQ(3u, vgpu_get(w, VGPU_F_RC));
	ASSERT_EQ(0, asm_one("S2R R7, SR_CTAID.Y", w));
	EXPECT_EQ((uint64_t)VGPU_SR_CTAID_Y, vgpu_get(w, VGPU_F_SR));
	ASSERT_EQ(0, asm_one("S2R R7, sr_tid.x", w));
	EXPECT_EQ((uint64_t)VGPU_SR_TID_X, vgpu_get(w, VGPU_F_SR));
	ASSERT_EQ(0, asm_one("LDG.64 R2, [R4-0x10]", w));
	EXPECT_EQ(4u, vgpu_get(w, VGPU_F_RA));
	EXPECT_EQ(0xfffff0u, vgpu_get(w, VGPU_F_OFF24));
	ASSERT_EQ(0, asm_one("LDS R2, [0x7fffff]", w));
	EXPECT_EQ(VGPU_RZ, vgpu_get(w, VGPU_F_RA));
	EXPECT_EQ(0x7fffffu, vgpu_get(w, VGPU_F_OFF24));
	ASSERT_EQ(0, asm_one("LDS R2, [-0x800000]", w));
	EXPECT_EQ(0x800000u, vgpu_get(w, VGPU_F_OFF24));
	ASSERT_EQ(0, asm_one("STS.U8 [R3 + 4], R9", w));
	EXPECT_EQ(9u, vgpu_get(w, VGPU_F_RB));
	EXPECT_EQ(4u, vgpu_get(w, VGPU_F_OFF24));
	EXPECT_EQ((uint32_t)VGPU_MOD_MSIZE_U8, vgpu_isa_mod(w, VGPU_MG_MSIZE));
	ASSERT_EQ(0, asm_one("LDS.128 R251, [R2]", w));
	ASSERT_EQ(0, asm_one("STG.64 [R2+0x8], RZ", w)); /* 64-bit zero */
	EXPECT_EQ(VGPU_RZ, vgpu_get(w, VGPU_F_RB));
	ASSERT_EQ(0, asm_one("LDG.128 RZ, [R2]", w));	  /* discarded */
	ASSERT_EQ(0, asm_one("ISETP.NE.U32.OR P1, R2, 0x0, !P2", w));
	EXPECT_EQ((uint32_t)VGPU_MOD_CMP_NE, vgpu_isa_mod(w, VGPU_MG_CMP));
	EXPECT_EQ((uint32_t)VGPU_MOD_COMB_OR, vgpu_isa_mod(w, VGPU_MG_COMB));
	EXPECT_EQ(2u, vgpu_get(w, VGPU_F_PP));
	EXPECT_EQ(1u, vgpu_get(w, VGPU_F_PP_NOT));
	ASSERT_EQ(0, asm_one("ISETP.NE.U32 P1, R2, R3", w));
	EXPECT_EQ(VGPU_PT, vgpu_get(w, VGPU_F_PP));
	EXPECT_EQ(0u, vgpu_get(w, VGPU_F_PP_NOT));
	ASSERT_EQ(0, asm_one("IMUL.HI.S32 R1, R2, R3", w));
	EXPECT_EQ(VGPU_I_IMULHI_R, vgpu_isa_decode(w));
	ASSERT_EQ(0, asm_one("ATOMG.CAS R1, [R2], R3, R4", w));
	EXPECT_EQ(VGPU_I_ATOMG_CAS, vgpu_isa_decode(w));
	ASSERT_EQ(0, asm_one("ATOMS.EXCH.U32 R1, [R2+8], R3", w));
	EXPECT_EQ(VGPU_I_ATOMS, vgpu_isa_decode(w));
	ASSERT_NE(0, asm_one(".equ N, 0x20\nBAR.SYNC 0x1, N*0", w)); /* no '*' */
	ASSERT_EQ(0, asm_one("VOTE.BALLOT R3, !P0", w));
	EXPECT_EQ(VGPU_I_VOTE_BALLOT, vgpu_isa_decode(w));
}

/* ---- (b2) mbarrier, asynchronous copies and clusters (issue 3) ---- */

/* Assemble @line, expect row @id, and expect the disassembly @text. */
static void expect_row(struct __test_metadata *_metadata, const char *line,
		       int id, const char *text, uint64_t w[2])
{
	bool ok;
	char buf[256];

	w[0] = w[1] = 0;
	ok = !asm_one(line, w);
	EXPECT_TRUE(ok) TH_LOG("%s: %s", line, errbuf);
	if (!ok)
		return;
	EXPECT_EQ(id, vgpu_isa_decode(w))
		TH_LOG("%s: row %d, expected %d (%s)", line, vgpu_isa_decode(w),
		       id, vgpu_isa_table[id].mnemonic);
	vgpu_disasm_insn(w, 0, buf, sizeof(buf));
	EXPECT_STREQ(text, buf);
}

TEST(async_issue_examples_encode)
{
	uint64_t w[2];

	/* section 5's spellings, field by field */
	expect_row(_metadata, "MBAR.ARRIVE.EXPECT_TX R4, [R2], R5 ;", VGPU_I_MBAR_ARRIVE_TX_R,
		   "MBAR.ARRIVE.EXPECT_TX R4, [R2], R5 ;", w);
	EXPECT_EQ(0x52u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint64_t)VGPU_ST_R, field(w, VGPU_F_STYPE));
	EXPECT_EQ((uint64_t)VGPU_MOD_ARVKIND_EXPECT_TX, field(w, 80, 2));
	EXPECT_EQ(VGPU_PT, field(w, VGPU_F_PG));
	EXPECT_EQ(4u, field(w, VGPU_F_RD));
	EXPECT_EQ(2u, field(w, VGPU_F_RA));
	EXPECT_EQ(5u, field(w, VGPU_F_RB));
	EXPECT_EQ(0u, field(w, 87, 3)); /* .RELEASE.CTA */
	EXPECT_EQ(0x0000000502047252ull, w[0]);
	EXPECT_EQ(0x0000000000010000ull, w[1]);

	expect_row(_metadata, "MBAR.TRY_WAIT.PARITY P1, [R2], R3, 0x989680 ;",
		   VGPU_I_MBAR_TRY_WAIT_PAR_I,
		   "MBAR.TRY_WAIT.PARITY P1, [R2], R3, 0x989680 ;", w);
	EXPECT_EQ(0x57u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint64_t)VGPU_ST_I, field(w, VGPU_F_STYPE));
	EXPECT_EQ((uint64_t)VGPU_MOD_WAITKIND_PARITY, field(w, 80, 1));
	EXPECT_EQ(1u, field(w, VGPU_F_PU));
	EXPECT_EQ(2u, field(w, VGPU_F_RA));
	EXPECT_EQ(3u, field(w, VGPU_F_RC));
	EXPECT_EQ(10000000u, field(w, VGPU_F_IMM32)); /* ns: the suspend hint */
	EXPECT_EQ(0u, field(w, VGPU_F_RD));

	expect_row(_metadata, "CP.ASYNC.BULK [R6], [R8], R9, [R2] ;", VGPU_I_CP_BULK_R,
		   "CP.ASYNC.BULK [R6], [R8], R9, [R2] ;", w);
	EXPECT_EQ(0x73u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint64_t)VGPU_ST_R, field(w, VGPU_F_STYPE));
	EXPECT_EQ(6u, field(w, VGPU_F_RA)); /* shared destination */
	EXPECT_EQ(8u, field(w, VGPU_F_RC)); /* global source R8:R9 */
	EXPECT_EQ(9u, field(w, VGPU_F_RB)); /* size */
	EXPECT_EQ(2u, field(w, VGPU_F_RE)); /* mbarrier */
	EXPECT_EQ(0x0000000906007273ull, w[0]);
	EXPECT_EQ(0x0000000000000208ull, w[1]);

	/* the sink: rd = RZ, and "_" again in the disassembly */
	expect_row(_metadata, "MBAR.ARRIVE _, [R2] ;", VGPU_I_MBAR_ARRIVE_X,
		   "MBAR.ARRIVE _, [R2] ;", w);
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RD));
	EXPECT_EQ(2u, field(w, VGPU_F_RA));
	EXPECT_EQ((uint64_t)VGPU_ST_X, field(w, VGPU_F_STYPE));
	expect_row(_metadata, "MBAR.ARRIVE RZ, [R2]", VGPU_I_MBAR_ARRIVE_X,
		   "MBAR.ARRIVE _, [R2] ;", w);
	expect_row(_metadata, "MBAR.ARRIVE_DROP.NOCOMPLETE _, [RZ], 0x1", VGPU_I_MBAR_DROP_NC_I,
		   "MBAR.ARRIVE_DROP.NOCOMPLETE _, [RZ], 0x1 ;", w);
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RA));
}

TEST(async_rows_chosen)
{
	static const struct {
		const char *line;
		int id;
		const char *text; /* canonical disassembly */
	} rows[] = {
		{ "MBAR.INIT [R2], R3", VGPU_I_MBAR_INIT_R, "MBAR.INIT [R2], R3 ;" },
		{ "MBAR.INIT [R2], 12", VGPU_I_MBAR_INIT_I, "MBAR.INIT [R2], 0xc ;" },
		{ "MBAR.INVAL [R2]", VGPU_I_MBAR_INVAL, "MBAR.INVAL [R2] ;" },
		{ "MBAR.ARRIVE R4, [R2]", VGPU_I_MBAR_ARRIVE_X, "MBAR.ARRIVE R4, [R2] ;" },
		{ "MBAR.ARRIVE R4, [R2], R7", VGPU_I_MBAR_ARRIVE_R,
		  "MBAR.ARRIVE R4, [R2], R7 ;" },
		{ "MBAR.ARRIVE R4, [R2], 4", VGPU_I_MBAR_ARRIVE_I,
		  "MBAR.ARRIVE R4, [R2], 0x4 ;" },
		{ "MBAR.ARRIVE.EXPECT_TX _, [R2], 0x3000", VGPU_I_MBAR_ARRIVE_TX_I,
		  "MBAR.ARRIVE.EXPECT_TX _, [R2], 0x3000 ;" },
		{ "MBAR.ARRIVE.NOCOMPLETE R4, [R2], R5", VGPU_I_MBAR_ARRIVE_NC_R,
		  "MBAR.ARRIVE.NOCOMPLETE R4, [R2], R5 ;" },
		{ "MBAR.ARRIVE.NOCOMPLETE R4, [R2], 2", VGPU_I_MBAR_ARRIVE_NC_I,
		  "MBAR.ARRIVE.NOCOMPLETE R4, [R2], 0x2 ;" },
		{ "MBAR.ARRIVE_DROP _, [R2]", VGPU_I_MBAR_DROP_X,
		  "MBAR.ARRIVE_DROP _, [R2] ;" },
		{ "MBAR.ARRIVE_DROP R4, [R2], R5", VGPU_I_MBAR_DROP_R,
		  "MBAR.ARRIVE_DROP R4, [R2], R5 ;" },
		{ "MBAR.ARRIVE_DROP R4, [R2], 1", VGPU_I_MBAR_DROP_I,
		  "MBAR.ARRIVE_DROP R4, [R2], 0x1 ;" },
		{ "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], R5", VGPU_I_MBAR_DROP_TX_R,
		  "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], R5 ;" },
		{ "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], 0", VGPU_I_MBAR_DROP_TX_I,
		  "MBAR.ARRIVE_DROP.EXPECT_TX R4, [R2], 0x0 ;" },
		{ "MBAR.ARRIVE_DROP.NOCOMPLETE R4, [R2], R5", VGPU_I_MBAR_DROP_NC_R,
		  "MBAR.ARRIVE_DROP.NOCOMPLETE R4, [R2], R5 ;" },
		{ "MBAR.EXPECT_TX [R2], R5", VGPU_I_MBAR_EXPECT_TX_R,
		  "MBAR.EXPECT_TX [R2], R5 ;" },
		{ "MBAR.EXPECT_TX [R2], 512", VGPU_I_MBAR_EXPECT_TX_I,
		  "MBAR.EXPECT_TX [R2], 0x200 ;" },
		{ "MBAR.COMPLETE_TX [R2], R5", VGPU_I_MBAR_COMPLETE_TX_R,
		  "MBAR.COMPLETE_TX [R2], R5 ;" },
		{ "MBAR.COMPLETE_TX [R2], 32", VGPU_I_MBAR_COMPLETE_TX_I,
		  "MBAR.COMPLETE_TX [R2], 0x20 ;" },
		{ "MBAR.TEST_WAIT P0, [R2], R4", VGPU_I_MBAR_TEST_WAIT,
		  "MBAR.TEST_WAIT P0, [R2], R4 ;" },
		{ "MBAR.TEST_WAIT.PARITY P0, [R2], R3", VGPU_I_MBAR_TEST_WAIT_PAR_R,
		  "MBAR.TEST_WAIT.PARITY P0, [R2], R3 ;" },
		{ "MBAR.TEST_WAIT.PARITY P0, [R2], 1", VGPU_I_MBAR_TEST_WAIT_PAR_I,
		  "MBAR.TEST_WAIT.PARITY P0, [R2], 0x1 ;" },
		{ "MBAR.TRY_WAIT P0, [R2], R4", VGPU_I_MBAR_TRY_WAIT_X,
		  "MBAR.TRY_WAIT P0, [R2], R4 ;" },
		{ "MBAR.TRY_WAIT P0, [R2], R4, R6", VGPU_I_MBAR_TRY_WAIT_R,
		  "MBAR.TRY_WAIT P0, [R2], R4, R6 ;" },
		{ "MBAR.TRY_WAIT P0, [R2], R4, 1000", VGPU_I_MBAR_TRY_WAIT_I,
		  "MBAR.TRY_WAIT P0, [R2], R4, 0x3e8 ;" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], R3", VGPU_I_MBAR_TRY_WAIT_PAR_X,
		  "MBAR.TRY_WAIT.PARITY P0, [R2], R3 ;" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], R3, R6", VGPU_I_MBAR_TRY_WAIT_PAR_R,
		  "MBAR.TRY_WAIT.PARITY P0, [R2], R3, R6 ;" },
		{ "MBAR.TRY_WAIT.PARITY P0, [R2], 0", VGPU_I_MBAR_TRY_WAIT_PAR_RI,
		  "MBAR.TRY_WAIT.PARITY P0, [R2], 0x0 ;" },
		{ "MBAR.PENDING_COUNT R1, R4", VGPU_I_MBAR_PENDING_COUNT,
		  "MBAR.PENDING_COUNT R1, R4 ;" },
		{ "CP.ASYNC [R6], [R8], 4", VGPU_I_CP_ASYNC, "CP.ASYNC [R6], [R8], 0x4 ;" },
		{ "CP.ASYNC.CA [R6], [R8], 8", VGPU_I_CP_ASYNC, "CP.ASYNC [R6], [R8], 0x8 ;" },
		{ "CP.ASYNC.MBARRIER.ARRIVE [R2]", VGPU_I_CP_ASYNC_MBAR_ARRIVE,
		  "CP.ASYNC.MBARRIER.ARRIVE [R2] ;" },
		{ "CP.ASYNC.WAIT_ALL", VGPU_I_CP_ASYNC_WAIT_ALL, "CP.ASYNC.WAIT_ALL ;" },
		{ "CP.ASYNC.BULK [R6], [R8], 0x1000, [R2]", VGPU_I_CP_BULK_I,
		  "CP.ASYNC.BULK [R6], [R8], 0x1000, [R2] ;" },
		{ "CP.ASYNC.BULK.GLOBAL [R8], [R6], R9", VGPU_I_CP_BULK_STORE_R,
		  "CP.ASYNC.BULK.GLOBAL [R8], [R6], R9 ;" },
		{ "CP.ASYNC.BULK.GLOBAL [R8], [R6], 16", VGPU_I_CP_BULK_STORE_I,
		  "CP.ASYNC.BULK.GLOBAL [R8], [R6], 0x10 ;" },
		{ "CP.ASYNC.BULK.COMMIT_GROUP", VGPU_I_CP_BULK_COMMIT,
		  "CP.ASYNC.BULK.COMMIT_GROUP ;" },
		{ "CP.ASYNC.BULK.WAIT_GROUP 0", VGPU_I_CP_BULK_WAIT,
		  "CP.ASYNC.BULK.WAIT_GROUP 0x0 ;" },
		{ "CP.ASYNC.BULK.WAIT_GROUP.READ 63", VGPU_I_CP_BULK_WAIT_READ,
		  "CP.ASYNC.BULK.WAIT_GROUP.READ 0x3f ;" },
		{ "MAPA R1, R2, R3", VGPU_I_MAPA_R, "MAPA R1, R2, R3 ;" },
		{ "MAPA R1, R2, 0", VGPU_I_MAPA_I, "MAPA R1, R2, 0x0 ;" },
		{ "BAR.CLUSTER.ARRIVE", VGPU_I_BAR_CLUSTER_ARRIVE, "BAR.CLUSTER.ARRIVE ;" },
		{ "BAR.CLUSTER.WAIT", VGPU_I_BAR_CLUSTER_WAIT, "BAR.CLUSTER.WAIT ;" },
		{ "mbar.try_wait.parity.relaxed.cluster p3, [r2], r3",
		  VGPU_I_MBAR_TRY_WAIT_PAR_X,
		  "MBAR.TRY_WAIT.PARITY.RELAXED.CLUSTER P3, [R2], R3 ;" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t w[2];

		expect_row(_metadata, rows[i].line, rows[i].id, rows[i].text, w);
	}
}

/* Modifier groups land at their bit positions (uapi/vgpu_isa_table.h). */
TEST(async_modifiers_encode)
{
	bool ok;
	static const struct {
		const char *line;
		unsigned pos, width, val; /* one group */
		int pos2, val2;		  /* and a second, or -1 */
	} mods[] = {
		/* MSEMA 87..88, MSCOPE 89 */
		{ "MBAR.ARRIVE.RELAXED.CLUSTER _, [R2], 0x4", 87, 2, 1, 89, 1 },
		{ "MBAR.ARRIVE.RELEASE.CTA R4, [R2]", 87, 2, 0, 89, 0 },
		{ "MBAR.ARRIVE.CLUSTER _, [R2]", 87, 2, 0, 89, 1 },
		{ "MBAR.ARRIVE.RELAXED R4, [R2]", 87, 2, 1, 89, 0 },
		{ "MBAR.ARRIVE.EXPECT_TX.RELAXED.CLUSTER _, [R2], R5", 80, 2, 1, 89, 1 },
		{ "MBAR.ARRIVE_DROP.NOCOMPLETE.RELEASE.CTA R4, [R2], R5", 80, 2, 2, 89, 0 },
		{ "MBAR.ARRIVE_DROP.EXPECT_TX.RELAXED.CLUSTER R4, [R2], 0x10", 87, 2, 1, 89, 1 },
		/* MSEMW 87..88 */
		{ "MBAR.TRY_WAIT.RELAXED.CLUSTER P0, [R2], R4", 87, 2, 1, 89, 1 },
		{ "MBAR.TEST_WAIT.ACQUIRE.CTA P0, [R2], R4", 87, 2, 0, 89, 0 },
		{ "MBAR.TRY_WAIT.PARITY.ACQUIRE.CLUSTER P0, [R2], 0x0", 80, 1, 1, 89, 1 },
		/* MSEMX: .RELAXED only */
		{ "MBAR.EXPECT_TX.RELAXED.CLUSTER [R2], 0x200", 87, 2, 0, 89, 1 },
		{ "MBAR.COMPLETE_TX.RELAXED.CTA [R2], R3", 87, 2, 0, 89, 0 },
		/* fixed groups at bit 80 */
		{ "BAR.CLUSTER.ARRIVE.RELAXED", 80, 1, 0, 87, 1 },
		{ "BAR.CLUSTER.ARRIVE.RELEASE", 80, 1, 0, 87, 0 },
		{ "BAR.CLUSTER.WAIT.ACQUIRE", 80, 1, 1, 87, 0 },
		{ "CP.ASYNC.CG [R1], [R2], 0x10", 80, 1, 1, -1, 0 },
		{ "CP.ASYNC.CA [R1], [R2], 0x4", 80, 1, 0, -1, 0 },
		{ "CP.ASYNC.MBARRIER.ARRIVE.NOINC [R2]", 80, 1, 1, -1, 0 },
		{ "CP.ASYNC.MBARRIER.ARRIVE [R2]", 80, 1, 0, -1, 0 },
		{ "CP.ASYNC.BULK.WAIT_GROUP.READ 0x0", 80, 1, 1, -1, 0 },
		{ "CP.ASYNC.BULK.TENSOR.1D [R6], [R8], R10, [R2]", 80, 3, 0, -1, 0 },
		{ "CP.ASYNC.BULK.TENSOR.3D [R6], [R8], R10, [R2]", 80, 3, 2, -1, 0 },
		{ "CP.ASYNC.BULK.TENSOR.GLOBAL.5D [R8], R10, [R6]", 80, 3, 4, -1, 0 },
	};

	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		char text[256];
		uint64_t w[2];

		ok = !asm_one(mods[i].line, w);
		EXPECT_TRUE(ok) TH_LOG("%s: %s", mods[i].line, errbuf);
		if (!ok)
			continue;
		check_field(_metadata, mods[i].line, "group", w, mods[i].pos, mods[i].width,
			    (int)mods[i].val);
		if (mods[i].pos2 >= 0)
			check_field(_metadata, mods[i].line, "second group", w,
				    (unsigned)mods[i].pos2,
				    mods[i].pos2 == 89 ? 1 : 2, mods[i].val2);
		/* and the word reads back: no stray bits, canonical text */
		EXPECT_TRUE(round_trip(_metadata, w, 0, text, sizeof(text)));
	}
}

TEST(async_tensor_forms)
{
	uint64_t w[2];

	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R10, [R2] ;",
		   VGPU_I_CP_TENSOR, "CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R10, [R2] ;",
		   w);
	EXPECT_EQ(0x77u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));  /* shared destination */
	EXPECT_EQ(8u, field(w, VGPU_F_RB));  /* tensor map R8:R9 */
	EXPECT_EQ(10u, field(w, VGPU_F_RC)); /* coordinates R10, R11 */
	EXPECT_EQ(2u, field(w, VGPU_F_RE));  /* mbarrier */
	EXPECT_EQ((uint32_t)VGPU_MOD_TDIM_2D, vgpu_isa_mod(w, VGPU_MG_TDIM));
	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.2D [R8], R10, [R6] ;",
		   VGPU_I_CP_TENSOR_STORE,
		   "CP.ASYNC.BULK.TENSOR.GLOBAL.2D [R8], R10, [R6] ;", w);
	EXPECT_EQ(0x78u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(8u, field(w, VGPU_F_RB));
	EXPECT_EQ(10u, field(w, VGPU_F_RC));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));
	EXPECT_EQ(0u, field(w, VGPU_F_RE));
	/* ranges that end exactly at R254, and RZ (all coordinates zero) */
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.1D [R6], [R8], R254, [R2]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R253, [R2]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.5D [R6], [R8], R250, [R2]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.GLOBAL.4D [R8], R251, [R6]", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.5D [R6], [R8], RZ, [R2]", w));
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RC));
	/* ... and past it */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.2D [R6], [R8], R254, [R2] ;",
		      "t.s:1:37: error: 2D tensor coordinates need R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.2D [R8], R254, [R6]",
		      "t.s:1:38: error: 2D tensor coordinates need R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.5D [R6], [R8], R251, [R2]",
		      "t.s:1:37: error: 5D tensor coordinates need R251..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.3D [R8], R253, [R6]",
		      "t.s:1:38: error: 3D tensor coordinates need R253..R255, past R254\n");
	/* the rank is required */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR [R6], [R8], R10, [R2]",
		      "t.s:1:1: error: missing required modifier for CP.ASYNC.BULK.TENSOR (one of .1D, .2D, .3D, .4D, .5D)\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.6D [R6], [R8], R10, [R2]",
		      "t.s:1:21: error: unknown modifier '.6D' for CP.ASYNC.BULK.TENSOR\n");
}

/* im2col: the offsets a range in rd (rank - 2 registers), ranks 3 to 5 */
TEST(async_tensor_im2col_forms)
{
	uint64_t w[2];

	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.IM2COL.4D [R6], [R8], R10, [R2], R20 ;",
		   VGPU_I_CP_TENSOR_IM2COL,
		   "CP.ASYNC.BULK.TENSOR.IM2COL.4D [R6], [R8], R10, [R2], R20 ;", w);
	EXPECT_EQ(0x79u, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));  /* shared destination */
	EXPECT_EQ(8u, field(w, VGPU_F_RB));  /* tensor map R8:R9 */
	EXPECT_EQ(10u, field(w, VGPU_F_RC)); /* coordinates R10..R13 */
	EXPECT_EQ(2u, field(w, VGPU_F_RE));  /* mbarrier */
	EXPECT_EQ(20u, field(w, VGPU_F_RD)); /* offsets R20, R21 */
	EXPECT_EQ((uint32_t)VGPU_MOD_IMDIM_4D, vgpu_isa_mod(w, VGPU_MG_IMDIM));
	expect_row(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.3D [R8], R10, [R6] ;",
		   VGPU_I_CP_TENSOR_STORE_IM2COL,
		   "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.3D [R8], R10, [R6] ;", w);
	EXPECT_EQ(0x7au, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ(8u, field(w, VGPU_F_RB));
	EXPECT_EQ(10u, field(w, VGPU_F_RC));
	EXPECT_EQ(6u, field(w, VGPU_F_RA));
	EXPECT_EQ(0u, field(w, VGPU_F_RD));
	/* offsets that end exactly at R254, and RZ (all offsets zero) */
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.IM2COL.3D [R6], [R8], R10, [R2], R254", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.IM2COL.5D [R6], [R8], R10, [R2], R252", w));
	ASSERT_EQ(0, asm_one("CP.ASYNC.BULK.TENSOR.IM2COL.5D [R6], [R8], R10, [R2], RZ", w));
	EXPECT_EQ(VGPU_RZ, field(w, VGPU_F_RD));
	/* ... and past it */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.IM2COL.5D [R6], [R8], R10, [R2], R253",
		      "t.s:1:55: error: 5D im2col offsets need R253..R255, past R254\n");
	/* only ranks 3 to 5 */
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.IM2COL.2D [R6], [R8], R10, [R2], R20",
		      "t.s:1:28: error: unknown modifier '.2D' for CP.ASYNC.BULK.TENSOR.IM2COL\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL.1D [R8], R10, [R6]",
		      "t.s:1:35: error: unknown modifier '.1D' for "
		      "CP.ASYNC.BULK.TENSOR.GLOBAL.IM2COL\n");
}

/* tensor reductions: a store's operands, the operation at bit 83 */
TEST(async_tensor_reduce_forms)
{
	static const char *const ops[] = { "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR" };
	uint64_t w[2];
	char line[96];

	for (unsigned o = 0; o < 8; o++) {
		snprintf(line, sizeof(line), "CP.REDUCE.ASYNC.BULK.TENSOR.%s.3D [R8], R10, [R6] ;",
			 ops[o]);
		expect_row(_metadata, line, VGPU_I_CP_TENSOR_RED, line, w);
		EXPECT_EQ(0x7bu, field(w, VGPU_F_OPTYPE));
		EXPECT_EQ(8u, field(w, VGPU_F_RB));  /* tensor map R8:R9 */
		EXPECT_EQ(10u, field(w, VGPU_F_RC)); /* coordinates R10..R12 */
		EXPECT_EQ(6u, field(w, VGPU_F_RA));  /* shared source */
		EXPECT_EQ(o, vgpu_isa_mod(w, VGPU_MG_TRED));
		EXPECT_EQ((uint32_t)VGPU_MOD_TDIM_3D, vgpu_isa_mod(w, VGPU_MG_TDIM));
		check_field(_metadata, line, "operation", w, 83, 3, (int)o);
	}
	expect_row(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.XOR.5D [R8], R10, [R6] ;",
		   VGPU_I_CP_TENSOR_RED_IM2COL,
		   "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.XOR.5D [R8], R10, [R6] ;", w);
	EXPECT_EQ(0x7cu, field(w, VGPU_F_OPTYPE));
	EXPECT_EQ((uint32_t)VGPU_MOD_TRED_XOR, vgpu_isa_mod(w, VGPU_MG_TRED));
	EXPECT_EQ((uint32_t)VGPU_MOD_IMDIM_5D, vgpu_isa_mod(w, VGPU_MG_IMDIM));
	ASSERT_EQ(0, asm_one("CP.REDUCE.ASYNC.BULK.TENSOR.ADD.1D [R8], R254, [R6]", w));
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.ADD.2D [R8], R254, [R6]",
		      "t.s:1:42: error: 2D tensor coordinates need R254..R255, past R254\n");
	/* the operation, then the rank, both required; im2col ranks 3 to 5 */
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.2D [R8], R10, [R6]",
		      "t.s:1:28: error: missing required modifier for CP.REDUCE.ASYNC.BULK.TENSOR "
		      "(one of .ADD, .MIN, .MAX, .INC, .DEC, .AND, .OR, .XOR)\n");
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.EXCH.2D [R8], R10, [R6]",
		      "t.s:1:28: error: unknown modifier '.EXCH' for CP.REDUCE.ASYNC.BULK.TENSOR\n");
	expect_errors(_metadata, "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL.ADD.2D [R8], R10, [R6]",
		      "t.s:1:39: error: unknown modifier '.2D' for "
		      "CP.REDUCE.ASYNC.BULK.TENSOR.IM2COL\n");
}

/* ---- (c) diagnostics ---- */

TEST(error_unknown_mnemonic)
{
	expect_errors(_metadata, "NOP\n  FOO R1, R2\n",
		      "t.s:2:3: error: unknown mnemonic 'FOO'\n");
	expect_errors(_metadata, "BAR R1", "t.s:1:1: error: unknown mnemonic 'BAR'\n");
}

TEST(error_unknown_modifier)
{
	expect_errors(_metadata, "BAR.RED.XOR R4, P0",
		      "t.s:1:8: error: unknown modifier '.XOR' for BAR.RED\n");
	expect_errors(_metadata, "BAR.SYNC.ALL 0x0",
		      "t.s:1:9: error: unknown modifier '.ALL' for BAR.SYNC\n");
	expect_errors(_metadata, "LDG.64.64 R2, [R4]",
		      "t.s:1:7: error: unknown modifier '.64' for LDG\n");
	expect_errors(_metadata, "B2R.FOO R1, 0x0",
		      "t.s:1:4: error: unknown modifier '.FOO' for B2R.BAR\n");
}

TEST(error_missing_modifier)
{
	expect_errors(_metadata, "  BAR.RED R4, P0",
		      "t.s:1:3: error: missing required modifier for BAR.RED (one of .AND, .OR, .POPC)\n");
	expect_errors(_metadata, "ISETP.LT P0, R1, R2",
		      "t.s:1:1: error: missing required modifier for ISETP (one of .U32, .S32)\n");
	expect_errors(_metadata, "ISETP.S32.LT P0, R1, R2",
		      "t.s:1:6: error: missing required modifier for ISETP (one of .LT, .EQ, .LE, .GT, .NE, .GE)\n");
}

TEST(error_wrong_operand_form)
{
	expect_errors(_metadata, "BAR.SYNC P0",
		      "t.s:1:1: error: BAR.SYNC does not take (predicate); accepted forms: "
		      "(UImm4[, UImm12]), (GPR, GPR), (GPR[, UImm12]), (UImm4, GPR)\n");
	expect_errors(_metadata, "R2B.WARP",
		      "t.s:1:1: error: R2B.WARP does not take (); accepted forms: ([UImm4,] GPR)\n");
	expect_errors(_metadata, "B2R.RESULT R1, R2",
		      "t.s:1:1: error: B2R.RESULT does not take (GPR, GPR); accepted forms: (GPR[, predicate])\n");
	expect_errors(_metadata, "LDG.64 R1, R2",
		      "t.s:1:1: error: LDG.64 does not take (GPR, GPR); accepted forms: (GPR, memory)\n");
	expect_errors(_metadata, "S2R R1, 0x3",
		      "t.s:1:1: error: S2R does not take (GPR, immediate); accepted forms: (GPR, special register)\n");
}

TEST(error_barrier_operands)
{
	expect_errors(_metadata, "BAR.SYNC 0x10, 0x40",
		      "t.s:1:10: error: barrier id 16 out of range (0..15)\n");
	expect_errors(_metadata, "BAR.SYNC 0x1, 0x41",
		      "t.s:1:15: error: barrier count 65 is not a multiple of 32\n");
	expect_errors(_metadata, "BAR.RED.OR R1, 0x1000, P0",
		      "t.s:1:16: error: barrier count 4096 out of range (0..4095)\n");
	expect_errors(_metadata, "BAR.SYNC 0x10, 0x1000",
		      "t.s:1:10: error: barrier id 16 out of range (0..15)\n"
		      "t.s:1:16: error: barrier count 4096 out of range (0..4095)\n");
	expect_errors(_metadata, "R2B.BAR -1, R0",
		      "t.s:1:9: error: barrier id -1 out of range (0..15)\n");
}

#define ARV0 "needs a non-zero barrier count (count 0 means all warps only for BAR.SYNC and BAR.RED)\n"

TEST(error_bar_arv_count_zero)
{
	expect_errors(_metadata, "BAR.ARV 0x1, 0x0", "t.s:1:14: error: BAR.ARV " ARV0);
	expect_errors(_metadata, "\tBAR.ARV 0x1 ;", "t.s:1:2: error: BAR.ARV " ARV0);
	expect_errors(_metadata, "BAR.ARV R4", "t.s:1:1: error: BAR.ARV " ARV0);
	expect_errors(_metadata, "BAR.ARV R4, 0", "t.s:1:13: error: BAR.ARV " ARV0);
	/* BAR.SYNC and BAR.RED take count 0; register counts are checked at run time */
	struct vgpu_object o;

	EXPECT_EQ(0,
		  assemble("BAR.SYNC 0x1, 0x0\nBAR.SYNC R4\nBAR.RED.OR 0x0, P0\n"
			   "BAR.ARV 0x1, R2\nBAR.ARV R1, R2\n", &o));
	vgpu_object_fini(&o);
}

TEST(error_labels)
{
	expect_errors(_metadata, "BRA nowhere\nEXIT",
		      "t.s:1:5: error: unknown label 'nowhere'\n");
	expect_errors(_metadata, "a:\nNOP\n  a: NOP",
		      "t.s:3:3: error: duplicate label 'a' (first defined at line 1)\n");
	expect_errors(_metadata, "R1: NOP",
		      "t.s:1:1: error: 'R1' is a register name, not a valid label\n");
	expect_errors(_metadata, "x.y: NOP", "t.s:1:1: error: expected label, got 'x.y'\n");
}

TEST(error_registers)
{
	expect_errors(_metadata, "MOV R255, R1",
		      "t.s:1:5: error: register R255 out of range (R0..R254, RZ)\n");
	expect_errors(_metadata, "@P7 NOP",
		      "t.s:1:2: error: predicate P7 out of range (P0..P6, PT)\n");
	/* a name as guard after a valid guard: parse_guard() once read an
	 * uninitialised operand and sometimes accepted it */
	expect_errors(_metadata, "@P1 EXIT ;\n@foo EXIT ;",
		      "t.s:2:2: error: guard must be a predicate (P0..P6, PT), not 'foo'\n");
	expect_errors(_metadata, "DADD R2, R254, R4 ;",
		      "t.s:1:10: error: a 64-bit pair needs R254..R255, past R254\n");
	expect_errors(_metadata, "@R1 NOP",
		      "t.s:1:2: error: guard must be a predicate (P0..P6, PT), not 'R1'\n");
	expect_errors(_metadata, "LDG.64 R254, [R2]",
		      "t.s:1:8: error: 64-bit data needs R254..R255, past R254\n");
	expect_errors(_metadata, "LDS.128 R252, [R2]",
		      "t.s:1:9: error: 128-bit data needs R252..R255, past R254\n");
	expect_errors(_metadata, "STG.128 [R2], R253",
		      "t.s:1:15: error: 128-bit data needs R253..R256, past R254\n");
	expect_errors(_metadata, "LDS R1, [P0]",
		      "t.s:1:10: error: memory base must be a GPR, not 'P0'\n");
}

TEST(error_immediates)
{
	expect_errors(_metadata, "MOV R1, 0x100000000",
		      "t.s:1:9: error: immediate 0x100000000 out of range (-0x80000000..0xffffffff)\n");
	expect_errors(_metadata, "MOV R1, -2147483649",
		      "t.s:1:9: error: immediate -0x80000001 out of range (-0x80000000..0xffffffff)\n");
	expect_errors(_metadata, "MOV R1, 99999999999999999999",
		      "t.s:1:9: error: number '99999999999999999999' is too large\n");
	expect_errors(_metadata, "MOV R1, 12ab", "t.s:1:9: error: bad number '12ab'\n");
	expect_errors(_metadata, "MOV R1, 1.5",
		      "t.s:1:9: error: immediate must be an integer, not a float literal\n");
	expect_errors(_metadata, "FADD R1, R2, 1e39",
		      "t.s:1:14: error: float literal '1e39' out of range\n");
	expect_errors(_metadata, "LDS R1, [R2+0x800000]",
		      "t.s:1:9: error: memory offset 0x800000 out of range (-0x800000..0x7fffff)\n");
	expect_errors(_metadata, "LDS R1, [R2-0x800001]",
		      "t.s:1:9: error: memory offset -0x800001 out of range (-0x800000..0x7fffff)\n");
	expect_errors(_metadata, "LDP R1, [nosuch]", "t.s:1:10: error: unknown symbol 'nosuch'\n");
}

/* Every diagnostic of the mbarrier, async-copy and cluster operands. */
TEST(error_async_operands)
{
	/* register-only addresses */
	expect_errors(_metadata, "MBAR.INIT [R2+0x8], 0x20",
		      "t.s:1:14: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "MBAR.ARRIVE _, [R2-4], 1",
		      "t.s:1:19: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "MBAR.INVAL [0x40]",
		      "t.s:1:13: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, ".shared bar, 8\nMBAR.INIT [bar], 1",
		      "t.s:2:12: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "CP.ASYNC.BULK [R6], [R8+16], R9, [R2]",
		      "t.s:1:24: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.1D [R6], [R8], R10, [R2+8]",
		      "t.s:1:45: error: MBAR and CP.ASYNC address operands take no offset; add it with IADD\n");
	/* 64-bit pairs */
	expect_errors(_metadata, "MBAR.ARRIVE R254, [R2]",
		      "t.s:1:13: error: 64-bit mbarrier state needs R254..R255, past R254\n");
	expect_errors(_metadata, "MBAR.TEST_WAIT P0, [R2], R254",
		      "t.s:1:26: error: 64-bit mbarrier state needs R254..R255, past R254\n");
	expect_errors(_metadata, "MBAR.PENDING_COUNT R1, R254",
		      "t.s:1:24: error: 64-bit mbarrier state needs R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC [R6], [R254], 0x4",
		      "t.s:1:16: error: 64-bit global address needs R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.GLOBAL [R254], [R6], 0x10",
		      "t.s:1:22: error: 64-bit global address needs R254..R255, past R254\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.TENSOR.1D [R6], [R254], R10, [R2]",
		      "t.s:1:31: error: 64-bit global address needs R254..R255, past R254\n");
	/* immediates: counts, tx-counts, parities, sizes, groups, ranks */
	expect_errors(_metadata, "MBAR.INIT [R2], 0x0",
		      "t.s:1:17: error: arrival count 0 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.INIT [R2], 0x100000",
		      "t.s:1:17: error: arrival count 1048576 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE R4, [R2], 0",
		      "t.s:1:23: error: arrival count 0 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE.NOCOMPLETE R4, [R2], 0x100000",
		      "t.s:1:34: error: arrival count 1048576 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE_DROP _, [R2], -1",
		      "t.s:1:27: error: arrival count 4294967295 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE_DROP.NOCOMPLETE _, [R2], 0",
		      "t.s:1:38: error: arrival count 0 out of range (1..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE.EXPECT_TX _, [R2], 0x100000",
		      "t.s:1:32: error: tx-count 1048576 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.ARRIVE_DROP.EXPECT_TX _, [R2], 0x100000",
		      "t.s:1:37: error: tx-count 1048576 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.EXPECT_TX [R2], 0x100000",
		      "t.s:1:22: error: tx-count 1048576 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.COMPLETE_TX [R2], -1",
		      "t.s:1:24: error: tx-count 4294967295 out of range (0..1048575)\n");
	expect_errors(_metadata, "MBAR.TEST_WAIT.PARITY P0, [R2], 2",
		      "t.s:1:33: error: phase parity 2 is not 0 or 1\n");
	expect_errors(_metadata, "MBAR.TRY_WAIT.PARITY P0, [R2], 0x2",
		      "t.s:1:32: error: phase parity 2 is not 0 or 1\n");
	expect_errors(_metadata, "CP.ASYNC [R6], [R8], 12",
		      "t.s:1:22: error: copy size 12 is not 4, 8 or 16\n");
	expect_errors(_metadata, "CP.ASYNC.CA [R6], [R8], 0",
		      "t.s:1:25: error: copy size 0 is not 4, 8 or 16\n");
	expect_errors(_metadata, "CP.ASYNC.CG [R6], [R8], 8",
		      "t.s:1:25: error: CP.ASYNC.CG copies 16 bytes only, not 8\n");
	expect_errors(_metadata, "CP.ASYNC.BULK [R6], [R8], 0x18, [R2]",
		      "t.s:1:27: error: bulk copy size 24 is not a multiple of 16 in 16..1048560\n");
	expect_errors(_metadata, "CP.ASYNC.BULK [R6], [R8], 0, [R2]",
		      "t.s:1:27: error: bulk copy size 0 is not a multiple of 16 in 16..1048560\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.GLOBAL [R8], [R6], 0x100000",
		      "t.s:1:34: error: bulk copy size 1048576 is not a multiple of 16 in 16..1048560\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.WAIT_GROUP 64",
		      "t.s:1:26: error: pending bulk group count 64 out of range (0..63)\n");
	expect_errors(_metadata, "CP.ASYNC.BULK.WAIT_GROUP.READ -1",
		      "t.s:1:31: error: pending bulk group count 4294967295 out of range (0..63)\n");
	expect_errors(_metadata, "MAPA R1, R2, 16",
		      "t.s:1:14: error: CTA rank 16 out of range (0..15)\n");
	/* forms that have no row */
	expect_errors(_metadata, "MBAR.ARRIVE.NOCOMPLETE R4, [R2]",
		      "t.s:1:1: error: MBAR.ARRIVE.NOCOMPLETE does not take (GPR, memory); "
		      "accepted forms: (GPR pair, [GPR], GPR), (GPR pair, [GPR], Imm32)\n");
	expect_errors(_metadata, "MBAR.TRY_WAIT.PARITY P1, [R2], 0x0, 0x989680",
		      "t.s:1:1: error: MBAR.TRY_WAIT.PARITY does not take (predicate, memory, immediate, immediate); "
		      "accepted forms: (predicate, [GPR], GPR), (predicate, [GPR], GPR, GPR), "
		      "(predicate, [GPR], GPR, Imm32), (predicate, [GPR], Imm32)\n");
	expect_errors(_metadata, "CP.ASYNC.BULK R6, [R8], R9, [R2]",
		      "t.s:1:1: error: CP.ASYNC.BULK does not take (GPR, memory, GPR, memory); "
		      "accepted forms: ([GPR], [GPR pair], GPR, [GPR]), ([GPR], [GPR pair], Imm32, [GPR])\n");
	/* modifiers: qualifiers in PTX order, each group once */
	expect_errors(_metadata, "MBAR.ARRIVE.CLUSTER.RELAXED _, [R2]",
		      "t.s:1:20: error: modifier '.RELAXED' out of order for MBAR.ARRIVE "
		      "(order: [.RELEASE|.RELAXED] [.CTA|.CLUSTER])\n");
	expect_errors(_metadata, "MBAR.ARRIVE.RELAXED.CTA.CLUSTER _, [R2]",
		      "t.s:1:24: error: unknown modifier '.CLUSTER' for MBAR.ARRIVE\n");
	expect_errors(_metadata, "MBAR.TRY_WAIT.RELEASE P0, [R2], R4",
		      "t.s:1:14: error: unknown modifier '.RELEASE' for MBAR.TRY_WAIT\n");
	expect_errors(_metadata, "MBAR.EXPECT_TX.RELEASE [R2], 0x10",
		      "t.s:1:15: error: unknown modifier '.RELEASE' for MBAR.EXPECT_TX\n");
	expect_errors(_metadata, "MBAR.INIT.CLUSTER [R2], 0x10",
		      "t.s:1:10: error: unknown modifier '.CLUSTER' for MBAR.INIT\n");
}

/* "_" is the sink of a 64-bit state destination and nothing else. */
TEST(error_sink)
{
	expect_errors(_metadata, "MOV _, R1",
		      "t.s:1:5: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a destination register\n");
	expect_errors(_metadata, "MBAR.PENDING_COUNT _, R4",
		      "t.s:1:20: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a destination register\n");
	expect_errors(_metadata, "MBAR.TEST_WAIT P0, [R2], _",
		      "t.s:1:26: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a 64-bit mbarrier state\n");
	expect_errors(_metadata, "MBAR.INIT [_], 1",
		      "t.s:1:12: error: memory base must be a GPR, not '_'\n");
	expect_errors(_metadata, "_: NOP",
		      "t.s:1:1: error: '_' is a sink operand, not a valid label\n");
	expect_errors(_metadata, ".equ _, 1\nNOP",
		      "t.s:1:6: error: '_' is a sink operand, not a valid symbol name\n");
	expect_errors(_metadata, "MOV R1, _",
		      "t.s:1:9: error: the sink '_' is only allowed as the state destination of "
		      "MBAR.ARRIVE and MBAR.ARRIVE_DROP, not as a register\n");
}

TEST(error_special_registers)
{
	expect_errors(_metadata, "S2R R0, SR_FOO",
		      "t.s:1:9: error: unknown special register 'SR_FOO'\n");
	expect_errors(_metadata, "S2R R0, SR_TID.W",
		      "t.s:1:9: error: unknown special register 'SR_TID.W'\n");
}

TEST(error_negation)
{
	expect_errors(_metadata, "ISETP.LT.S32 !P0, R1, R2",
		      "t.s:1:14: error: negation '!' is only allowed on a source predicate, not on a destination predicate\n");
	expect_errors(_metadata, "MOV R1, !R2",
		      "t.s:1:9: error: negation '!' is only allowed on a source predicate, not on a register\n");
	expect_errors(_metadata, "B2R.RESULT R1, !P2",
		      "t.s:1:16: error: negation '!' is only allowed on a source predicate, not on a destination predicate\n");
}

TEST(error_annotations)
{
	expect_errors(_metadata, "NOP $foo",
		      "t.s:1:5: error: unknown annotation '$foo' (expected $sched, $req or $wsb)\n");
	expect_errors(_metadata, "NOP $sched=16",
		      "t.s:1:12: error: $sched value 16 out of range (0..15)\n");
	expect_errors(_metadata, "NOP $req=64",
		      "t.s:1:10: error: $req value 64 out of range (0..63)\n");
	expect_errors(_metadata, "NOP $wsb=8",
		      "t.s:1:10: error: $wsb value 8 out of range (0..7)\n");
	expect_errors(_metadata, "NOP $wsb $wsb=1",
		      "t.s:1:10: error: duplicate annotation '$wsb'\n");
}

TEST(error_directives)
{
	expect_errors(_metadata, ".foo 1\nNOP", "t.s:1:1: error: unknown directive '.foo'\n");
	expect_errors(_metadata, ".param u128 x\nNOP",
		      "t.s:1:8: error: bad .param type 'u128' (expected u8, u16, u32, s32, f32, u64, s64, ptr, local, data, printf, params or envregs)\n");
	expect_errors(_metadata, ".local 0\nNOP",
		      "t.s:1:8: error: .local size 0 out of range (1..65536)\n");
	expect_errors(_metadata, ".param local l\nNOP",
		      "t.s:1:1: error: kernel 'main' has a '.param local' but no .local size\n");
	expect_errors(_metadata, ".local 16\nNOP",
		      "t.s:1:1: error: kernel 'main' has .local memory but no '.param local NAME' for its address\n");
	expect_errors(_metadata, ".param local l\n.local 16\n.local 32\nNOP",
		      "t.s:3:1: error: a second .local for kernel 'main' (first at line 2)\n");
	expect_errors(_metadata, ".param local l\n.param local m\n.local 16\nNOP",
		      "t.s:1:1: error: kernel 'main' has more than one '.param local' but takes at most one\n");
	expect_errors(_metadata, ".param u32 a\n.param u64 a\nNOP",
		      "t.s:2:12: error: duplicate symbol 'a' (first defined at line 1)\n");
	expect_errors(_metadata, ".kernel a\nNOP\n.kernel a\nNOP",
		      "t.s:3:9: error: duplicate kernel 'a' (first defined at line 1)\n");
	expect_errors(_metadata, ".kernel a\n.kernel b\nNOP",
		      "t.s:1:9: error: kernel 'a' has no instructions\n");
	expect_errors(_metadata, "", "t.s:1:1: error: kernel 'main' has no instructions\n");
	expect_errors(_metadata, ".kernel a_name_that_is_far_too_long_for_it\nNOP",
		      "t.s:1:9: error: kernel name 'a_name_that_is_far_too_long_for_it' is too long (at most 31 characters)\n");
	expect_errors(_metadata, ".shared x, 16, 3\nNOP",
		      "t.s:1:16: error: shared alignment 3 is not a power of two up to 65536\n");
	expect_errors(_metadata, ".shared 0\nNOP",
		      "t.s:1:9: error: shared size 0 out of range (1..4294967295)\n");
	expect_errors(_metadata, ".word 1\n", "t.s:1:8: error: expected ',' before end of line\n");
	expect_errors(_metadata, ".param u64 big\n.equ X, 1\n.equ X, 2\nNOP",
		      "t.s:3:6: error: duplicate symbol 'X' (first defined at line 2)\n");
}

TEST(error_syntax)
{
	expect_errors(_metadata, "MOV R1 R2", "t.s:1:8: error: expected ',' or ';', got 'R2'\n");
	expect_errors(_metadata, "MOV R1, R2 ; NOP",
		      "t.s:1:14: error: unexpected 'NOP' after the statement\n");
	expect_errors(_metadata, "MOV R1, #3", "t.s:1:9: error: unexpected character '#'\n");
	expect_errors(_metadata, "LDS R1, [R2",
		      "t.s:1:12: error: expected '+', '-' or ']' before end of line\n");
	expect_errors(_metadata, "MOV R1,",
		      "t.s:1:8: error: expected an operand before end of line\n");
}

/* Errors on many lines are all reported, in order, and nothing is returned. */
TEST(error_all_collected)
{
	expect_errors(_metadata, "BRA later\n"
		      "BAR.SYNC 0x10\n"
		      "NOP\n"
		      "FOO\n"
		      "BAR.ARV 0x1\n"
		      "S2R R1, SR_X\n",
		      "t.s:1:5: error: unknown label 'later'\n"
		      "t.s:2:10: error: barrier id 16 out of range (0..15)\n"
		      "t.s:4:1: error: unknown mnemonic 'FOO'\n"
		      "t.s:5:1: error: BAR.ARV " ARV0
		      "t.s:6:9: error: unknown special register 'SR_X'\n");
}

TEST(error_buffer_truncates)
{
	struct vgpu_object o;
	char small[20];

	EXPECT_EQ(-EINVAL,
		  vgpu_assemble("FOO", 3, "long-file-name.s", &o, small,
				sizeof(small)));
	EXPECT_EQ(sizeof(small) - 1, strlen(small));
	EXPECT_EQ(-EINVAL, vgpu_assemble("FOO", 3, "x.s", &o, NULL, 0));
}

/* ---- (d) labels, directives, objects ---- */

static uint32_t imm_at(const struct vgpu_object *o, uint32_t pc)
{
	uint64_t w[2];

	load_word(o->code + pc, w);
	return (uint32_t)vgpu_get(w, VGPU_F_IMM32);
}

TEST(labels_and_branches)
{
	struct vgpu_object o;

	ASSERT_EQ(0,
		  assemble("start:\n"
			   "\tNOP\n"
			   "\tBRA fwd            // 0x10 -> 0x40\n"
			   "\tNOP\n"
			   "back: NOP          // 0x30\n"
			   "fwd:  @P1 BRA back // 0x40 -> 0x30\n"
			   "\tBRA start          // 0x50 -> 0x00\n"
			   "\tBRA 0x20           // 0x60 -> 0x20\n"
			   "a: b:\n"
			   "\tBRA end            // 0x70 -> 0x80\n"
			   "end:\n",
			   &o));
	EXPECT_EQ(0x80u, o.code_size);
	EXPECT_EQ(0x30u, imm_at(&o, 0x10));
	EXPECT_EQ((uint32_t)-0x10, imm_at(&o, 0x40));
	EXPECT_EQ((uint32_t)-0x50, imm_at(&o, 0x50));
	EXPECT_EQ((uint32_t)-0x40, imm_at(&o, 0x60));
	EXPECT_EQ(0x10u, imm_at(&o, 0x70));
	vgpu_object_fini(&o);
}

static const char multi_src[] =
	"// two kernels\n"
	".kernel k1\n"
	".param u32 a        // 0\n"
	".param u64 b        // 8\n"
	".param u32 c        // 16\n"
	".param f32 d        // 20\n"
	".shared s1, 100     // 0\n"
	".shared s2, 8, 64   // 128\n"
	".shared 4           // 144: total 148\n"
	".equ FOUR, 4\n"
	"\tLDP R1, [c] ;\n"
	"\tLDP.64 R2, [b]\n"
	"\tMOV R3, s2\n"
	"\tLDS R4, [R0+s2+FOUR]\n"
	"loop: ISETP.LT.U32 P0, R1, FOUR\n"
	"\t@P0 BRA loop\n"
	"\tEXIT\n"
	".kernel k2\n"
	".param ptr p        // 0\n"
	".param u32 a        // 8: same name as k1's, own scope\n"
	".shared buf, 32\n"
	"\tLDP R1, [a]\n"
	"\tMOV R2, buf+16\n"
	"\tBRA loop          // labels are global\n"
	"\tEXIT\n";

TEST(directives_kernels_params_shared)
{
	struct vgpu_object o;
	const struct vgpu_obj_kernel *k;

	ASSERT_EQ(0, assemble(multi_src, &o));
	ASSERT_TRUE(o.nkernels == 2 && o.nparams == 6);
	EXPECT_EQ(11u * 16, o.code_size);
	k = vgpu_object_find_kernel(&o, "k1");
	ASSERT_TRUE(k == &o.kernels[0]);
	EXPECT_EQ(0u, k->entry);
	EXPECT_EQ(24u, k->param_size);
	EXPECT_EQ(148u, k->smem_static);
	EXPECT_EQ(0u, k->first_param);
	EXPECT_EQ(4u, k->nparams);
	EXPECT_STREQ("a", o.params[0].name);
	EXPECT_EQ(0u, o.params[0].offset);
	EXPECT_EQ(8u, o.params[1].offset);
	EXPECT_EQ(8u, o.params[1].size);
	EXPECT_EQ((uint32_t)VGPU_PARAM_U64, o.params[1].type);
	EXPECT_EQ(16u, o.params[2].offset);
	EXPECT_EQ(20u, o.params[3].offset);
	EXPECT_EQ((uint32_t)VGPU_PARAM_F32, o.params[3].type);
	k = vgpu_object_find_kernel(&o, "k2");
	ASSERT_TRUE(k == &o.kernels[1]);
	EXPECT_EQ(7u * 16, k->entry);
	EXPECT_EQ(16u, k->param_size);
	EXPECT_EQ(32u, k->smem_static);
	EXPECT_EQ(4u, k->first_param);
	EXPECT_EQ(2u, k->nparams);
	EXPECT_EQ((uint32_t)VGPU_PARAM_PTR, o.params[4].type);
	EXPECT_EQ(8u, o.params[5].offset);
	EXPECT_TRUE(vgpu_object_find_kernel(&o, NULL) == &o.kernels[0]);
	EXPECT_EQ(NULL, vgpu_object_find_kernel(&o, "k3"));
	/* symbol values in operands */
	EXPECT_EQ(16u, imm_at(&o, 0x00) >> 8);	 /* LDP [c]: off24 = 16 */
	EXPECT_EQ(8u, imm_at(&o, 0x10) >> 8);	 /* LDP.64 [b] */
	EXPECT_EQ(128u, imm_at(&o, 0x20));	 /* MOV R3, s2 */
	EXPECT_EQ(132u, imm_at(&o, 0x30) >> 8);	 /* [R0+s2+FOUR] */
	EXPECT_EQ(4u, imm_at(&o, 0x40));		 /* ISETP ..., FOUR */
	EXPECT_EQ((uint32_t)-0x10, imm_at(&o, 0x50));
	EXPECT_EQ(8u, imm_at(&o, 0x70) >> 8);	 /* k2: LDP [a] */
	EXPECT_EQ(16u, imm_at(&o, 0x80));		 /* MOV R2, buf+16 */
	EXPECT_EQ((uint32_t)(0x40 - 0x90), imm_at(&o, 0x90));
	vgpu_object_fini(&o);
}

TEST(implicit_main_kernel)
{
	struct vgpu_object o;

	ASSERT_EQ(0, assemble("NOP\n.param ptr out\n.shared 12\nLDP.64 R2, [out]\nEXIT\n", &o));
	ASSERT_EQ(1u, o.nkernels);
	EXPECT_STREQ("main", o.kernels[0].name);
	EXPECT_EQ(0u, o.kernels[0].entry);
	EXPECT_EQ(8u, o.kernels[0].param_size);
	EXPECT_EQ(12u, o.kernels[0].smem_static);
	EXPECT_EQ(1u, o.nparams);
	vgpu_object_fini(&o);
	ASSERT_EQ(0, assemble(".word 0x1, 0xffffffffffffffff\n", &o));
	EXPECT_EQ(16u, o.code_size);
	EXPECT_EQ(1, o.code[0]);
	EXPECT_EQ(0xff, o.code[8]);
	EXPECT_EQ(0xff, o.code[15]);
	vgpu_object_fini(&o);
}

static void check_same_object(struct __test_metadata *_metadata,
			      const struct vgpu_object *a,
			      const struct vgpu_object *b)
{
	ASSERT_EQ(b->code_size, a->code_size);
	ASSERT_EQ(b->nkernels, a->nkernels);
	ASSERT_EQ(b->nparams, a->nparams);
	EXPECT_EQ(0, memcmp(a->code, b->code, a->code_size));
	EXPECT_EQ(0, memcmp(a->kernels, b->kernels, a->nkernels * sizeof(*a->kernels)));
	EXPECT_EQ(0, memcmp(a->params, b->params, a->nparams * sizeof(*a->params)));
}

TEST(object_write_read_round_trip)
{
	struct vgpu_object o, r;
	uint8_t *buf, *buf2;
	size_t len, len2;

	ASSERT_EQ(0, assemble(multi_src, &o));
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	EXPECT_EQ(32u + 2 * 56 + 6 * 48 + 11 * 16, len);
	EXPECT_EQ('V', buf[0]);
	EXPECT_EQ('U', buf[3]);
	ASSERT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf)));
	check_same_object(_metadata, &o, &r);
	ASSERT_EQ(0, vgpu_object_write(&r, &buf2, &len2));
	EXPECT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(buf, buf2, len));
	free(buf);
	free(buf2);
	vgpu_object_fini(&r);
	vgpu_object_fini(&o);
	EXPECT_TRUE(o.code == NULL && o.nkernels == 0);
}

static void expect_reject(struct __test_metadata *_metadata, const uint8_t *good,
			  size_t len, size_t off, uint32_t v, const char *msg);

/* Module data: .global/.bytes/.param data, object version 2, disassembly. */
TEST(module_data)
{
	static const char src[] = ".global tab, 20, 4\n.global cnt, 8\n"
				  ".bytes tab+1, 7, 255, -1\n.bytes cnt, 9\n"
				  ".kernel k\n.param ptr out\n.param data d\n"
				  "LDP.64 R0, [d] ;\nLDG R2, [R0+tab] ;\nEXIT ;\n";
	static const uint8_t want[40] = { [1] = 7, [2] = 255, [3] = 255, [32] = 9 };
	struct vgpu_object o, r;
	uint8_t *buf;
	size_t len;
	char *text;

	ASSERT_EQ(0, assemble(src, &o)) TH_LOG("%s", errbuf);
	ASSERT_EQ(40u, o.data_size);
	EXPECT_EQ(0, memcmp(want, o.data, 40));
	EXPECT_EQ((uint32_t)VGPU_PARAM_DATA, o.params[1].type);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	EXPECT_EQ(2u, buf[4]); /* version 2: it has data */
	ASSERT_EQ(0, vgpu_object_read(buf, len, &r, errbuf, sizeof(errbuf))) TH_LOG("%s", errbuf);
	ASSERT_EQ(40u, r.data_size);
	EXPECT_EQ(0, memcmp(want, r.data, 40));
	/* the disassembly assembles to the same object */
	text = obj_disasm_text(&r);
	ASSERT_NE(NULL, text);
	EXPECT_NE(NULL, strstr(text, ".global __data, 40, 16\n.bytes __data+0, 0, 7, 255, 255,"));
	EXPECT_EQ(0, obj_reassembles_to(text, buf, len, errbuf, sizeof(errbuf)))
		TH_LOG("%s\n%s", errbuf, text);
	/* a corrupt data section is rejected */
	expect_reject(_metadata, buf, len, 36, 1u << 30, "data of 1073741824 bytes");
	free(text);
	free(buf);
	vgpu_object_fini(&o);
	vgpu_object_fini(&r);

	expect_errors(_metadata, ".bytes 0, 1\nNOP",
		      "t.s:1:8: error: data offset 0 outside the 0 bytes of .global data\n");
	expect_errors(_metadata, ".global x, 0\nNOP",
		      "t.s:1:12: error: data size 0 out of range (1..16777216)\n");
	expect_errors(_metadata, ".global x, 4, 3\nNOP",
		      "t.s:1:15: error: data alignment 3 is not a power of two up to 4096\n");
	expect_errors(_metadata, ".global x, 4\n.bytes x, 300\nNOP",
		      "t.s:2:11: error: byte 300 out of range (-128..255)\n");
	expect_errors(_metadata, ".param data d\nNOP",
		      "t.s:1:1: error: kernel 'main' has a '.param data' but the program has no .global data\n");
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Corrupt a copy of @good at byte @off with @v and expect a rejection. */
static void expect_reject(struct __test_metadata *_metadata,
			  const uint8_t *good, size_t len, size_t off,
			  uint32_t v, const char *msg)
{
	uint8_t *b = malloc(len);
	struct vgpu_object r;

	ASSERT_NE(NULL, b);
	memcpy(b, good, len);
	put32(b + off, v);
	EXPECT_EQ(-EINVAL, vgpu_object_read(b, len, &r, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, msg);
	EXPECT_EQ(NULL, r.code);
	free(b);
}

TEST(object_read_rejects_corruption)
{
	struct vgpu_object o, r;
	uint8_t *buf;
	size_t len, k0 = 32, p0 = 32 + 2 * 56;

	ASSERT_EQ(0, assemble(multi_src, &o));
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	expect_reject(_metadata, buf, len, 0, 0x12345678, "bad magic 0x12345678");
	expect_reject(_metadata, buf, len, 4, 4, "unsupported version 4");
	/* version 2 promises a data section the file does not have */
	expect_reject(_metadata, buf, len, 4, 2, "invalid object: data of 0 bytes");
	expect_reject(_metadata, buf, len, 8, 0, "no kernels");
	expect_reject(_metadata, buf, len, 8, 0x10000000, "kernel table outside the file");
	expect_reject(_metadata, buf, len, 12, 1000, "parameter table outside the file");
	expect_reject(_metadata, buf, len, 16, (uint32_t)len, "kernel table outside the file");
	expect_reject(_metadata, buf, len, 16, 4, "kernel table outside the file");
	expect_reject(_metadata, buf, len, 24, 0x1f8, "not a multiple of 16");
	expect_reject(_metadata, buf, len, 28, 0x18, "not a multiple of 16");
	expect_reject(_metadata, buf, len, 28, 0x1000, "code outside the file");
	expect_reject(_metadata, buf, len, k0 + 32, 0x1000, "entry 0x1000 outside the code");
	expect_reject(_metadata, buf, len, k0 + 32, 0x8, "entry 0x8 outside the code");
	expect_reject(_metadata, buf, len, k0 + 40, 8192, "parameter size 8192 too large");
	expect_reject(_metadata, buf, len, k0 + 40, 20,
		      "kernel 'k1': 20 parameter bytes for parameters ending at 24");
	/* more than the parameters take: the assembler cannot write it */
	expect_reject(_metadata, buf, len, k0 + 40, 32,
		      "kernel 'k1': 32 parameter bytes for parameters ending at 24");
	/* names the assembler would not take: a register, a space */
	expect_reject(_metadata, buf, len, k0, 0x003152, "kernel 0: bad name");
	expect_reject(_metadata, buf, len, p0, 0x00207870, "parameter 0: bad name");
	/* a parameter off the layout (in order, naturally aligned) */
	expect_reject(_metadata, buf, len, p0 + 32, 8, "(the layout puts it at 0)");
	expect_reject(_metadata, buf, len, k0 + 48, 7, "parameters out of range");
	expect_reject(_metadata, buf, len, k0 + 44, 3, "parameters out of range");
	expect_reject(_metadata, buf, len, k0 + 52, 1,
		      "kernel 'k1': 1 bytes of local memory (a multiple of 16, at most 65536)");
	expect_reject(_metadata, buf, len, k0 + 52, 16,
		      "kernel 'k1': 16 bytes of local memory and 0 local parameters (want one)");
	expect_reject(_metadata, buf, len, k0, 0, "kernel 0: bad name");
	expect_reject(_metadata, buf, len, k0 + 56, 0x00316b, "duplicate kernel 'k1'");
	/* the second kernel's parameters where the first's are */
	expect_reject(_metadata, buf, len, k0 + 56 + 44, 0, "(the layout puts them at ");
	expect_reject(_metadata, buf, len, p0 + 36, 8, "type 1 with size 8");
	expect_reject(_metadata, buf, len, p0 + 40, 4, "type 4 with size 4");
	expect_reject(_metadata, buf, len, p0 + 40, 9, "type 9 with size 4");
	expect_reject(_metadata, buf, len, p0 + 32, 2, "misaligned offset 2");
	{
		uint8_t *b = malloc(len);

		ASSERT_NE(NULL, b);
		memcpy(b, buf, len);
		memset(b + k0, 'x', 32); /* no NUL */
		EXPECT_EQ(-EINVAL, vgpu_object_read(b, len, &r, errbuf, sizeof(errbuf)));
		EXPECT_CONTAINS(errbuf, "kernel 0: bad name");
		EXPECT_EQ(-EINVAL, vgpu_object_read(b, 31, &r, errbuf, sizeof(errbuf)));
		EXPECT_CONTAINS(errbuf, "shorter than the header");
		EXPECT_EQ(-EINVAL, vgpu_object_read(buf, len - 16, &r, errbuf, sizeof(errbuf)));
		EXPECT_CONTAINS(errbuf, "code outside the file");
		free(b);
	}
	free(buf);
	vgpu_object_fini(&o);
}

static void object_round_trip(struct __test_metadata *_metadata,
			      const char *src)
{
	bool ok;
	struct vgpu_object o, r;
	char *text;

	ASSERT_EQ(0, assemble(src, &o));
	text = obj_disasm_text(&o);
	ASSERT_NE(NULL, text);
	ok = !assemble(text, &r);
	EXPECT_TRUE(ok)
		TH_LOG("disassembly does not assemble:\n%s\n%s", text, errbuf);
	if (ok) {
		check_same_object(_metadata, &o, &r);
		vgpu_object_fini(&r);
	}
	free(text);
	vgpu_object_fini(&o);
}

TEST(disasm_object_round_trip)
{
	struct vgpu_object o;
	char *text;

	object_round_trip(_metadata, multi_src);
	ASSERT_EQ(0, assemble(multi_src, &o));
	text = obj_disasm_text(&o);
	ASSERT_NE(NULL, text);
	EXPECT_CONTAINS(text, ".kernel k1\n.param u32 a\n.param u64 b\n.param u32 c\n"
			      ".param f32 d\n.shared 148\n\tLDP R1, [0x10] ;\n");
	EXPECT_CONTAINS(text, "L_0x40:\n\tISETP.LT.U32 P0, R1, 0x4 ;\n\t@P0 BRA L_0x40 ;\n");
	EXPECT_CONTAINS(text, "\n\n.kernel k2\n.param ptr p\n.param u32 a\n.shared 32\n");
	EXPECT_CONTAINS(text, "\tBRA L_0x40 ;\n\tEXIT ;\n");
	free(text);
	vgpu_object_fini(&o);
	object_round_trip(_metadata, "NOP\n.kernel late\nBRA 0x1230\nBRA -0x20\n.word 0, 0\n"
			  "BAR.SYNC 0x0\nend: BRA end\n.word 0x20140, 0\n");
}

/* Every table row in one object, branches to labels included. */
TEST(disasm_object_every_row)
{
	size_t cap = 2 * VGPU_I__COUNT * 96 + 64, used = 0;
	char *src = malloc(cap), text[256];

	ASSERT_NE(NULL, src);
	src[0] = 0;
	for (int id = 0; id < (int)VGPU_I__COUNT; id++) {
		for (int dflt = 0; dflt < 2; dflt++) {
			uint64_t w[2];

			sample_word(id, dflt, w); /* BRA: absolute 0x40 */
			vgpu_disasm_insn(w, 0, text, sizeof(text));
			used += (size_t)snprintf(src + used, cap - used, "%s\n", text);
		}
	}
	object_round_trip(_metadata, src);
	free(src);
}

TEST(load_file_text_and_object)
{
	char dir[] = "/tmp/vgpu-test-asm-XXXXXX", path[PATH_MAX];
	struct vgpu_object o, a, b;
	uint8_t *buf;
	size_t len;
	FILE *f;

	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, assemble(multi_src, &o));
	snprintf(path, sizeof(path), "%s/k.s", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs(multi_src, f);
	fclose(f);
	ASSERT_EQ(0, vgpu_object_load_file(path, &a, errbuf, sizeof(errbuf)));
	check_same_object(_metadata, &o, &a);
	ASSERT_EQ(0, vgpu_object_write(&o, &buf, &len));
	snprintf(path, sizeof(path), "%s/k.vgo", dir);
	f = fopen(path, "wb");
	ASSERT_NE(NULL, f);
	fwrite(buf, 1, len, f);
	fclose(f);
	ASSERT_EQ(0, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	check_same_object(_metadata, &o, &b);
	vgpu_object_fini(&b);
	/* a truncated object file is rejected, naming the path */
	f = fopen(path, "wb");
	ASSERT_NE(NULL, f);
	fwrite(buf, 1, 40, f);
	fclose(f);
	EXPECT_EQ(-EINVAL, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, "k.vgo: invalid object: kernel table outside the file");
	remove(path);
	/* assembly errors name the path */
	snprintf(path, sizeof(path), "%s/bad.s", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("NOP\nFOO\n", f);
	fclose(f);
	EXPECT_EQ(-EINVAL, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, "bad.s:2:1: error: unknown mnemonic 'FOO'");
	remove(path);
	snprintf(path, sizeof(path), "%s/missing.s", dir);
	EXPECT_EQ(-ENOENT, vgpu_object_load_file(path, &b, errbuf, sizeof(errbuf)));
	EXPECT_CONTAINS(errbuf, "missing.s: No such file or directory");
	snprintf(path, sizeof(path), "%s/k.s", dir);
	remove(path);
	rmdir(dir);
	free(buf);
	vgpu_object_fini(&a);
	vgpu_object_fini(&o);
}

/* ---- (e) the tools ---- */

static char bindir[PATH_MAX + 16];

static bool find_bindir(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = 0;
	snprintf(bindir, sizeof(bindir), "%s/../bin", exe);
	return true;
}

__attribute__((format(printf, 1, 2))) static int run(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc(n > 0 ? (size_t)n : 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return b;
}

static bool same_files(const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *x = slurp(a, &la), *y = slurp(b, &lb);
	bool same = x && y && la == lb && !memcmp(x, y, la);

	free(x);
	free(y);
	return same;
}

/* Every ```vgpu block of docs/ptx-mapping.md assembles. */
TEST(ptx_mapping_examples_assemble)
{
	bool ok;
	char path[PATH_MAX + 64];
	size_t len;
	uint8_t *doc;
	char *p;
	int blocks = 0;

	ASSERT_TRUE(find_bindir());
	snprintf(path, sizeof(path), "%s/../../docs/ptx-mapping.md", bindir);
	doc = slurp(path, &len);
	ASSERT_NE(NULL, doc);
	doc = realloc(doc, len + 1);
	ASSERT_NE(NULL, doc);
	doc[len] = 0;
	for (p = (char *)doc; (p = strstr(p, "```vgpu\n")); blocks++) {
		char *src = p + 8, *end = strstr(src, "```");
		struct vgpu_object o;
		int line = 1;

		ASSERT_NE(NULL, end);
		*end = 0;
		for (char *q = (char *)doc; q < src; q++)
			line += *q == '\n';
		ok = !assemble(src, &o);
		EXPECT_TRUE(ok)
			TH_LOG("docs/ptx-mapping.md block at line %d:\n%s", line,
			       errbuf);
		if (ok)
			vgpu_object_fini(&o);
		p = end + 3;
	}
	EXPECT_GE(blocks, 20);
	free(doc);
}

TEST(tools_round_trip)
{
	char dir[] = "/tmp/vgpu-test-tools-XXXXXX", p[PATH_MAX];
	char x[PATH_MAX], y[PATH_MAX];
	const char *b = bindir;
	const char *d = dir;
	FILE *f;

	ASSERT_TRUE(find_bindir());
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/a.s", dir);
	f = fopen(p, "w");
	ASSERT_NE(NULL, f);
	fputs(multi_src, f);
	fputs(".kernel seed\nBAR.SYNC 0x0 ;\nBAR.RED.OR R0, !P1;\nB2R R0, 0x0;\n"
	      "BAR.RESULT R0, PT;\nR2B.WARP 0x4, R1;\n.word 0, 7\nEXIT\n", f);
	fclose(f);
	EXPECT_EQ(0, run("%s/vgpu-as %s/a.s", b, d)); /* default output a.vgo */
	EXPECT_EQ(0, run("%s/vgpu-objdump %s/a.vgo > %s/b.s", b, d, d));
	EXPECT_EQ(0, run("%s/vgpu-as -o %s/b.vgo %s/b.s", b, d, d));
	snprintf(x, sizeof(x), "%s/a.vgo", dir);
	snprintf(y, sizeof(y), "%s/b.vgo", dir);
	EXPECT_TRUE(same_files(x, y));
	/* --raw output assembles too; text input is accepted */
	EXPECT_EQ(0, run("%s/vgpu-objdump --raw %s/a.s > %s/c.s", b, d, d));
	EXPECT_EQ(0, run("%s/vgpu-as --output %s/c.vgo %s/c.s", b, d, d));
	snprintf(y, sizeof(y), "%s/c.vgo", dir);
	EXPECT_TRUE(same_files(x, y));
	/* stdin and stdout */
	EXPECT_EQ(0, run("%s/vgpu-as - < %s/a.s > %s/d.vgo", b, d, d));
	snprintf(y, sizeof(y), "%s/d.vgo", dir);
	EXPECT_TRUE(same_files(x, y));
	EXPECT_EQ(0, run("%s/vgpu-objdump - < %s/d.vgo > %s/e.s", b, d, d));
	snprintf(x, sizeof(x), "%s/b.s", dir);
	snprintf(y, sizeof(y), "%s/e.s", dir);
	EXPECT_TRUE(same_files(x, y));
	EXPECT_EQ(0, run("grep -q '// 0x0000: 0x' %s/c.s", d));
	EXPECT_EQ(0,
		  run("cd %s && rm -f a.s a.vgo b.s b.vgo c.s c.vgo d.vgo e.s bad.s && cd / && rmdir %s",
		      d, d));
}

TEST(tools_exit_codes)
{
	char dir[] = "/tmp/vgpu-test-tools-XXXXXX";
	const char *b = bindir, *d = dir;

	ASSERT_TRUE(find_bindir());
	ASSERT_NE(NULL, mkdtemp(dir));
	EXPECT_EQ(0, run("%s/vgpu-as --help > /dev/null", b));
	EXPECT_EQ(0, run("%s/vgpu-objdump --help | grep -q usage", b));
	EXPECT_EQ(2, run("%s/vgpu-as > /dev/null 2>&1", b));
	EXPECT_EQ(2, run("%s/vgpu-as --bogus x.s > /dev/null 2>&1", b));
	EXPECT_EQ(2, run("%s/vgpu-objdump > /dev/null 2>&1", b));
	EXPECT_EQ(2, run("%s/vgpu-objdump a b > /dev/null 2>&1", b));
	EXPECT_EQ(0, run("printf 'NOP\\nFOO\\n' > %s/bad.s", d));
	EXPECT_EQ(1, run("%s/vgpu-as -o %s/bad.vgo %s/bad.s 2> %s/err.txt", b, d, d, d));
	EXPECT_EQ(0, run("grep -q 'bad.s:2:1: error: unknown mnemonic' %s/err.txt", d));
	EXPECT_EQ(0, run("test ! -e %s/bad.vgo", d));
	EXPECT_EQ(1, run("%s/vgpu-objdump %s/bad.s > /dev/null 2>&1", b, d));
	EXPECT_EQ(1, run("%s/vgpu-objdump %s/missing.vgo > /dev/null 2>&1", b, d));
	EXPECT_EQ(1, run("%s/vgpu-as %s/missing.s > /dev/null 2>&1", b, d));
	EXPECT_EQ(0, run("printf 'VGPU' > %s/trunc.vgo", d));
	EXPECT_EQ(0, run("%s/vgpu-objdump %s/trunc.vgo 2>&1 | grep -q 'invalid object'", b, d));
	EXPECT_EQ(0, run("rm -f %s/bad.s %s/err.txt %s/trunc.vgo && rmdir %s", d, d, d, d));
}

TEST_HARNESS_MAIN
