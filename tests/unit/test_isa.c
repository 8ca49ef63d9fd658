/* SPDX-License-Identifier: MIT */
/*
 * Consistency of the instruction table (uapi/vgpu_isa_table.h) and the
 * decoder (uapi/vgpu_isa.h): no two rows accept the same word, every row
 * decodes to itself, a row's fields never overlap, reserved bits make a
 * word illegal, modifier defaults and names are well formed.
 */
#include <stdbool.h>
#include <string.h>

#include "kselftest_host.h"
#include "isa_util.h"
#include "vgpu_isa.h"

#define NROWS ((int)VGPU_I__COUNT)

struct range {
	unsigned pos, width;
	const char *name;
};

#define MAX_RANGES 24

static int add(struct range *r, int n, unsigned pos, unsigned width,
	       const char *name)
{
	if (n < MAX_RANGES)
		r[n] = (struct range){ pos, width, name };
	return n + 1;
}

/* Bit ranges of an operand kind's fields. */
static int kind_fields(unsigned kind, struct range *r, int n)
{
	switch (kind) {
	case VGPU_OPK_RD: return add(r, n, VGPU_F_RD, "rd");
	case VGPU_OPK_RA: return add(r, n, VGPU_F_RA, "ra");
	case VGPU_OPK_RB: return add(r, n, VGPU_F_RB, "rb");
	case VGPU_OPK_RC: return add(r, n, VGPU_F_RC, "rc");
	case VGPU_OPK_IMM:
	case VGPU_OPK_FIMM:
	case VGPU_OPK_TARGET: return add(r, n, VGPU_F_IMM32, "imm32");
	case VGPU_OPK_BARID: return add(r, n, VGPU_F_BARID, "barid");
	case VGPU_OPK_CNT: return add(r, n, VGPU_F_CNT, "cnt");
	case VGPU_OPK_PP:
		n = add(r, n, VGPU_F_PP, "pp");
		return add(r, n, VGPU_F_PP_NOT, "pp.not");
	case VGPU_OPK_PU: return add(r, n, VGPU_F_PU, "pu");
	case VGPU_OPK_SR: return add(r, n, VGPU_F_SR, "sr");
	case VGPU_OPK_MEM:
		n = add(r, n, VGPU_F_RA, "mem.ra");
		return add(r, n, VGPU_F_OFF24, "off24");
	case VGPU_OPK_RD2: return add(r, n, VGPU_F_RD, "rd2");
	case VGPU_OPK_RC2: return add(r, n, VGPU_F_RC, "rc2");
	case VGPU_OPK_RCN: return add(r, n, VGPU_F_RC, "rcn");
	case VGPU_OPK_SA: return add(r, n, VGPU_F_RA, "[ra] shared");
	case VGPU_OPK_SC: return add(r, n, VGPU_F_RC, "[rc] shared");
	case VGPU_OPK_SE: return add(r, n, VGPU_F_RE, "[re] shared");
	case VGPU_OPK_GA: return add(r, n, VGPU_F_RA, "[ra] global");
	case VGPU_OPK_GB: return add(r, n, VGPU_F_RB, "[rb] global");
	case VGPU_OPK_GC: return add(r, n, VGPU_F_RC, "[rc] global");
	case VGPU_OPK_STK: return add(r, n, VGPU_F_RA, "call block");
	case VGPU_OPK_RDN: return add(r, n, VGPU_F_RD, "rdn");
	default: return -100;
	}
}

/* Every field one row uses: common fields, modifiers, operands. */
static int row_fields(const struct vgpu_isa_desc *d, struct range *r)
{
	int n = 0;

	n = add(r, n, VGPU_F_OPTYPE, "optype");
	n = add(r, n, VGPU_F_STYPE, "stype");
	n = add(r, n, VGPU_F_PG, "pg");
	n = add(r, n, VGPU_F_PG_NOT, "pg.not");
	n = add(r, n, VGPU_F_SCHED, "sched");
	n = add(r, n, VGPU_F_REQ, "req");
	n = add(r, n, VGPU_F_WSB, "wsb");
	if (d->fix_group)
		n = add(r, n, vgpu_isa_modgroups[d->fix_group].pos,
			vgpu_isa_modgroups[d->fix_group].width, "fixed modifier");
	for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++)
		n = add(r, n, vgpu_isa_modgroups[d->mods[i]].pos,
			vgpu_isa_modgroups[d->mods[i]].width,
			vgpu_isa_modgroups[d->mods[i]].name);
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++)
		n = kind_fields(VGPU_OPK_KIND(d->ops[i]), r, n);
	return n;
}

static int nops(const struct vgpu_isa_desc *d)
{
	int n = 0;

	while (n < VGPU_ISA_MAX_OPS && d->ops[n])
		n++;
	return n;
}

/* Word of row @d with modifier group values from @vals (or defaults). */
static void build(const struct vgpu_isa_desc *d, const unsigned *vals,
		  uint64_t w[2])
{
	uint64_t mask[2];

	vgpu_isa_match_mask(d, w, mask);
	for (int i = 0; i < VGPU_ISA_MAX_MODS && d->mods[i]; i++) {
		const struct vgpu_isa_modgroup *g = &vgpu_isa_modgroups[d->mods[i]];

		vgpu_field_set(w, g->pos, g->width, vals[i]);
	}
}

/* First defined value of group @g. */
static unsigned first_value(unsigned g)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++)
		if (vgpu_isa_modvals[i].group == g)
			return vgpu_isa_modvals[i].value;
	return 0;
}

TEST(table_has_rows)
{
	EXPECT_GE(NROWS, 60);
	EXPECT_STREQ("BAR.SYNC", vgpu_isa_table[VGPU_I_BAR_SYNC_I].mnemonic);
	EXPECT_EQ(VGPU_ST_RIR, vgpu_isa_table[VGPU_I_BAR_RED_RIR].stype);
	EXPECT_EQ(0x44, vgpu_isa_table[VGPU_I_R2B_WARP].optype);
}

TEST(no_two_rows_accept_one_word)
{
	int bad = 0;

	for (int i = 0; i < NROWS; i++) {
		uint64_t mi[2], ki[2];

		vgpu_isa_match_mask(&vgpu_isa_table[i], mi, ki);
		for (int j = i + 1; j < NROWS; j++) {
			uint64_t mj[2], kj[2];

			bool overlap;

			vgpu_isa_match_mask(&vgpu_isa_table[j], mj, kj);
			overlap = !((mi[0] ^ mj[0]) & ki[0] & kj[0]) &&
				  !((mi[1] ^ mj[1]) & ki[1] & kj[1]);
			EXPECT_FALSE(overlap)
				TH_LOG("rows %d (%s) and %d (%s) overlap", i,
				       vgpu_isa_table[i].mnemonic, j,
				       vgpu_isa_table[j].mnemonic);
			bad += overlap;
		}
	}
	EXPECT_EQ(0, bad);
}

TEST(optype_stype_unique_without_fixed_modifier)
{
	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *a = &vgpu_isa_table[i];

		for (int j = 0; j < NROWS; j++) {
			const struct vgpu_isa_desc *b = &vgpu_isa_table[j];

			if (i == j || a->optype != b->optype || a->stype != b->stype)
				continue;
			EXPECT_NE(0, a->fix_group)
				TH_LOG("%s shares optype 0x%x/stype %u with %s but has no fixed modifier",
				       a->mnemonic, a->optype, a->stype,
				       b->mnemonic);
			EXPECT_EQ(b->fix_group, a->fix_group);
		}
	}
}

TEST(every_row_decodes_to_itself)
{
	int illegal_pairs = 0;

	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		unsigned vals[VGPU_ISA_MAX_MODS] = { 0 };
		uint64_t w[2], used[2], match[2], mask[2];
		int nm = 0, combos = 0;

		while (nm < VGPU_ISA_MAX_MODS && d->mods[nm])
			nm++;
		/* every combination of defined modifier values (each group's
		 * values below 1 << its width, in one counter) */
		unsigned total = 1;

		for (int m = 0; m < nm; m++)
			total <<= vgpu_isa_modgroups[d->mods[m]].width;
		for (unsigned k = 0; k < total; k++) {
			unsigned v[VGPU_ISA_MAX_MODS] = { 0 }, rest = k;
			bool ok = true;

			for (int m = 0; m < nm; m++) {
				unsigned wd = vgpu_isa_modgroups[d->mods[m]].width;

				v[m] = rest & ((1u << wd) - 1);
				rest >>= wd;
				ok &= vgpu_isa_modval_name(d->mods[m], v[m]) != NULL;
			}
			if (!ok)
				continue;
			memcpy(vals, v, sizeof(vals));
			build(d, vals, w);
			if (vgpu_isa_atom_bad(w, d->optype)) {
				/* each value defined, the pair not (.MIN.F32) */
				EXPECT_EQ(-1, vgpu_isa_decode(w));
				illegal_pairs++;
				continue;
			}
			EXPECT_EQ(i, vgpu_isa_decode(w));
			/* with every operand/common bit set */
			vgpu_isa_used_bits(d, used);
			vgpu_isa_match_mask(d, match, mask);
			w[0] |= used[0] & ~mask[0];
			w[1] |= used[1] & ~mask[1];
			for (int m = 0; m < nm; m++)
				vgpu_field_set(w, vgpu_isa_modgroups[d->mods[m]].pos,
					       vgpu_isa_modgroups[d->mods[m]].width, v[m]);
			EXPECT_EQ(i, vgpu_isa_decode(w));
			combos++;
		}
		EXPECT_GE(combos, 1);
	}
	/*
	 * ATOMG and ATOMS: 7 operations x 10 types x .FTZ or not, of which
	 * .ADD with each type (11 with .ADD.F32.FTZ), the other six with the
	 * 4 integer types and .MIN/.MAX with the 4 half types are legal: 97
	 * refused each; the CAS rows: 3 of the 7 sizes each (U8, S8, S16;
	 * 128 is atom.cas.b128's).
	 */
	EXPECT_EQ(2 * (140 - 43) + 2 * 3, illegal_pairs);
}

TEST(row_fields_do_not_overlap)
{
	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		struct range r[MAX_RANGES];
		int n = row_fields(d, r);

		ASSERT_TRUE(n > 0 && n <= MAX_RANGES);
		for (int a = 0; a < n; a++) {
			EXPECT_TRUE(r[a].width >= 1 && r[a].pos + r[a].width <= 128);
			for (int b = a + 1; b < n; b++) {
				EXPECT_FALSE(r[a].pos < r[b].pos + r[b].width &&
					     r[b].pos < r[a].pos + r[a].width)
					TH_LOG("row %s: %s [%u,+%u) overlaps %s [%u,+%u)",
					       d->mnemonic, r[a].name, r[a].pos,
					       r[a].width, r[b].name, r[b].pos,
					       r[b].width);
			}
		}
	}
}

TEST(used_bits_match_row_fields)
{
	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		struct range r[MAX_RANGES];
		uint64_t used[2], mine[2] = { 0, 0 };
		int n = row_fields(d, r);

		for (int k = 0; k < n; k++)
			vgpu_field_set(mine, r[k].pos, r[k].width, ~0ull);
		vgpu_isa_used_bits(d, used);
		EXPECT_EQ(mine[0], used[0]);
		EXPECT_EQ(mine[1], used[1]);
	}
}

TEST(zero_and_reserved_bits_are_illegal)
{
	uint64_t zero[2] = { 0, 0 };

	EXPECT_EQ(-1, vgpu_isa_decode(zero));
	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		unsigned vals[VGPU_ISA_MAX_MODS];
		uint64_t w[2], used[2];
		int rejected = 0, reserved = 0;

		for (int m = 0; m < VGPU_ISA_MAX_MODS; m++)
			vals[m] = d->mods[m] ? first_value(d->mods[m]) : 0;
		build(d, vals, w);
		isa_make_atom_legal(w, d->optype);
		ASSERT_EQ(i, vgpu_isa_decode(w));
		vgpu_isa_used_bits(d, used);
		for (unsigned bit = 0; bit < 128; bit++) {
			uint64_t x[2] = { w[0], w[1] };

			if (used[bit / 64] >> (bit % 64) & 1)
				continue;
			reserved++;
			x[bit / 64] |= 1ull << (bit % 64);
			rejected += vgpu_isa_decode(x) == -1;
		}
		EXPECT_GT(reserved, 0);
		EXPECT_EQ(reserved, rejected);
	}
}

TEST(undefined_modifier_values_are_illegal)
{
	/* BAR.RED with REDOP 3 (undefined) */
	uint64_t w[2], m[2];

	vgpu_isa_match_mask(&vgpu_isa_table[VGPU_I_BAR_RED_R], w, m);
	vgpu_field_set(w, vgpu_isa_modgroups[VGPU_MG_REDOP].pos,
		       vgpu_isa_modgroups[VGPU_MG_REDOP].width, 2);
	EXPECT_EQ(VGPU_I_BAR_RED_R, vgpu_isa_decode(w));
	vgpu_field_set(w, vgpu_isa_modgroups[VGPU_MG_REDOP].pos,
		       vgpu_isa_modgroups[VGPU_MG_REDOP].width, 3);
	EXPECT_EQ(-1, vgpu_isa_decode(w));
	/* unknown optype and stype */
	w[0] = 0x4f;
	w[1] = 0;
	EXPECT_EQ(-1, vgpu_isa_decode(w));
	w[0] = 0x0f40; /* BAR, stype 15 */
	EXPECT_EQ(-1, vgpu_isa_decode(w));
}

TEST(modifier_groups_and_values)
{
	for (unsigned g = 1; g < VGPU_MG__COUNT; g++) {
		const struct vgpu_isa_modgroup *mg = &vgpu_isa_modgroups[g];

		EXPECT_NE(NULL, mg->name);
		EXPECT_TRUE(mg->pos >= 80 && mg->pos + mg->width <= 98);
		if (mg->def >= 0) {
			EXPECT_NE(NULL, vgpu_isa_modval_name(g, (unsigned)mg->def))
				TH_LOG("group %s: default %d is not a defined value",
				       mg->name, mg->def);
		}
	}
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++) {
		const struct vgpu_isa_modval *v = &vgpu_isa_modvals[i];

		EXPECT_TRUE(v->group > 0 && v->group < VGPU_MG__COUNT);
		EXPECT_LT(v->value, (1u << vgpu_isa_modgroups[v->group].width));
		for (unsigned j = i + 1; j < VGPU_ISA_NUM_MODVALS; j++) {
			const struct vgpu_isa_modval *u = &vgpu_isa_modvals[j];

			if (u->group != v->group)
				continue;
			EXPECT_NE(v->value, u->value);
			EXPECT_STRNE(v->name, u->name);
		}
	}
}

/*
 * The assembler matches modifiers by name, in order: a row's groups never
 * share one, except two adjacent required groups (CVT's destination and
 * source types: the first name always goes to the first group).
 */
TEST(row_modifier_names_are_distinct)
{
	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];

		for (int a = 0; a < VGPU_ISA_MAX_MODS && d->mods[a]; a++)
			for (int b = a + 1; b < VGPU_ISA_MAX_MODS && d->mods[b]; b++) {
				if (b == a + 1 && vgpu_isa_modgroups[d->mods[a]].def < 0 &&
				    vgpu_isa_modgroups[d->mods[b]].def < 0)
					continue;
				for (unsigned x = 0; x < VGPU_ISA_NUM_MODVALS; x++) {
					for (unsigned y = 0; y < VGPU_ISA_NUM_MODVALS; y++) {
						if (vgpu_isa_modvals[x].group != d->mods[a] ||
						    vgpu_isa_modvals[y].group != d->mods[b])
							continue;
						EXPECT_STRNE(vgpu_isa_modvals[x].name,
							     vgpu_isa_modvals[y].name)
							TH_LOG("%s: .%s in two groups",
							       d->mnemonic,
							       vgpu_isa_modvals[x].name);
					}
				}
			}
		if (d->fix_group)
			EXPECT_NE(NULL, vgpu_isa_modval_name(d->fix_group, d->fix_value));
	}
}

TEST(at_most_one_optional_operand)
{
	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		int opt = 0;

		for (int k = 0; k < nops(d); k++) {
			unsigned kind = VGPU_OPK_KIND(d->ops[k]);

			EXPECT_TRUE(kind > VGPU_OPK_NONE && kind < VGPU_OPK__COUNT);
			EXPECT_EQ(0u, (d->ops[k] & ~(VGPU_OPK_OPTIONAL | 0x1fu)));
			if (d->ops[k] & VGPU_OPK_OPTIONAL) {
				opt++;
				EXPECT_TRUE(kind == VGPU_OPK_CNT || kind == VGPU_OPK_BARID ||
					    kind == VGPU_OPK_PU || kind == VGPU_OPK_PP);
			}
		}
		EXPECT_LE(opt, 1);
	}
}

/* Operand classes as the assembler sees them. */
static char op_class(unsigned kind)
{
	switch (VGPU_OPK_KIND(kind)) {
	case VGPU_OPK_RD:
	case VGPU_OPK_RA:
	case VGPU_OPK_RB:
	case VGPU_OPK_RC:
	case VGPU_OPK_RD2:
	case VGPU_OPK_RC2:
	case VGPU_OPK_STK:
	case VGPU_OPK_RCN:
	case VGPU_OPK_RDN: return 'R';
	case VGPU_OPK_PP:
	case VGPU_OPK_PU: return 'P';
	case VGPU_OPK_SR: return 'S';
	case VGPU_OPK_MEM:
	case VGPU_OPK_SA:
	case VGPU_OPK_SC:
	case VGPU_OPK_SE:
	case VGPU_OPK_GA:
	case VGPU_OPK_GB:
	case VGPU_OPK_GC: return 'M';
	case VGPU_OPK_IMM:
	case VGPU_OPK_FIMM:
	case VGPU_OPK_BARID:
	case VGPU_OPK_CNT:
	case VGPU_OPK_TARGET: return 'I';
	default: return '?'; /* a kind this test does not know: fails below */
	}
}

/* Class strings a row accepts: the full form and, if any, the short one. */
static int row_class_forms(const struct vgpu_isa_desc *d, char forms[2][8])
{
	int n = nops(d), k = 0, nf = 1;

	for (int i = 0; i < n; i++)
		forms[0][i] = op_class(d->ops[i]);
	forms[0][n] = 0;
	for (int i = 0; i < n; i++) {
		if (d->ops[i] & VGPU_OPK_OPTIONAL) {
			nf = 2;
			continue;
		}
		forms[1][k++] = op_class(d->ops[i]);
	}
	forms[1][k] = 0;
	return nf;
}

/* Rows of one mnemonic never accept the same sequence of operand classes. */
TEST(operand_forms_are_unambiguous)
{
	for (int i = 0; i < NROWS; i++) {
		for (int j = i + 1; j < NROWS; j++) {
			const struct vgpu_isa_desc *a = &vgpu_isa_table[i];
			const struct vgpu_isa_desc *b = &vgpu_isa_table[j];
			char fa[2][8], fb[2][8];
			int na, nb;

			if (strcmp(a->mnemonic, b->mnemonic))
				continue;
			na = row_class_forms(a, fa);
			nb = row_class_forms(b, fb);
			for (int x = 0; x < na; x++) {
				for (int y = 0; y < nb; y++) {
					EXPECT_STRNE(fa[x], fb[y])
						TH_LOG("%s: rows %d and %d both take \"%s\"",
						       a->mnemonic, i, j, fa[x]);
				}
			}
		}
	}
}

/* Every operand kind a row uses has fields and an operand class here. */
TEST(every_operand_kind_is_known)
{
	bool used[VGPU_OPK__COUNT] = { false };

	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];

		for (int k = 0; k < nops(d); k++) {
			struct range r[MAX_RANGES];
			unsigned kind = VGPU_OPK_KIND(d->ops[k]);

			EXPECT_FALSE(op_class(kind) == '?' || kind_fields(kind, r, 0) < 0)
				TH_LOG("%s: operand kind %u unknown to this test",
				       d->mnemonic, kind);
			if (kind < VGPU_OPK__COUNT)
				used[kind] = true;
		}
	}
	/* ... and every kind but NONE is used by some row */
	for (unsigned k = 1; k < VGPU_OPK__COUNT; k++) {
		EXPECT_TRUE(used[k])
			TH_LOG("operand kind %u is used by no row", k);
	}
}

/*
 * The mbarrier, async-copy and cluster rows sit in their optype groups;
 * the register-only address and register-span kinds belong to them alone;
 * a row with tensor coordinates names the rank (TDIM) that sizes them.
 */
TEST(async_rows_in_their_groups)
{
	int mbar = 0, cp = 0, cluster = 0;

	for (int i = 0; i < NROWS; i++) {
		const struct vgpu_isa_desc *d = &vgpu_isa_table[i];
		bool async_kind = false, rcn = false, tdim = false;

		if (!strncmp(d->mnemonic, "MBAR.", 5)) {
			EXPECT_TRUE(d->optype >= 0x50 && d->optype <= 0x6f);
			mbar++;
		} else if (!strncmp(d->mnemonic, "CP.", 3)) {
			EXPECT_TRUE(d->optype >= 0x70 && d->optype <= 0x7f);
			cp++;
		} else if (!strcmp(d->mnemonic, "MAPA") ||
			   !strncmp(d->mnemonic, "BAR.CLUSTER.", 12)) {
			EXPECT_TRUE(d->optype >= 0x80 && d->optype <= 0x8f);
			cluster++;
		} else {
			EXPECT_LT(d->optype, 0x50);
		}
		for (int k = 0; k < nops(d); k++) {
			unsigned kind = VGPU_OPK_KIND(d->ops[k]);

			async_kind |= (kind >= VGPU_OPK_RD2 && kind <= VGPU_OPK_GC) ||
				      kind == VGPU_OPK_RDN;
			rcn |= kind == VGPU_OPK_RCN;
		}
		for (int m = 0; m < VGPU_ISA_MAX_MODS && d->mods[m]; m++)
			tdim |= d->mods[m] == VGPU_MG_TDIM || d->mods[m] == VGPU_MG_IMDIM;
		EXPECT_FALSE(async_kind && d->optype < 0x50)
			TH_LOG("%s uses an mbarrier/async operand kind", d->mnemonic);
		EXPECT_EQ(tdim, rcn)
			TH_LOG("%s: tensor coordinates and TDIM go together", d->mnemonic);
	}
	EXPECT_GE(mbar, 32);
	EXPECT_GE(cp, 13);
	EXPECT_GE(cluster, 4);
}

TEST(aliases_name_table_mnemonics)
{
	EXPECT_EQ(3u, VGPU_ISA_NUM_ALIASES);
	for (unsigned i = 0; i < VGPU_ISA_NUM_ALIASES; i++) {
		int found = 0;

		for (int r = 0; r < NROWS; r++) {
			found += !strcmp(vgpu_isa_table[r].mnemonic,
					 vgpu_isa_aliases[i].canonical);
			EXPECT_NE(0,
				  strcmp(vgpu_isa_table[r].mnemonic,
					 vgpu_isa_aliases[i].alias));
		}
		EXPECT_GT(found, 0);
	}
}

TEST(special_registers_unique)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_SREGS; i++)
		for (unsigned j = i + 1; j < VGPU_ISA_NUM_SREGS; j++) {
			EXPECT_NE(vgpu_isa_sregs[j].index, vgpu_isa_sregs[i].index);
			EXPECT_STRNE(vgpu_isa_sregs[i].name, vgpu_isa_sregs[j].name);
		}
	EXPECT_EQ(0, VGPU_SR_TID_X);
	EXPECT_EQ(18, VGPU_SR_SMID);
}

TEST(field_helpers)
{
	uint64_t w[2] = { 0, 0 };

	vgpu_field_set(w, 60, 8, 0xab); /* straddles the two words */
	EXPECT_EQ(0xb000000000000000ull, w[0]);
	EXPECT_EQ(0xau, w[1]);
	EXPECT_EQ(0xabu, vgpu_field_get(w, 60, 8));
	vgpu_set(w, VGPU_F_IMM32, 0xdeadbeef);
	EXPECT_EQ(0xefu, vgpu_get(w, VGPU_F_RB));
	EXPECT_EQ(0xadbu, vgpu_get(w, VGPU_F_CNT));
	vgpu_set(w, VGPU_F_PU, 5);
	EXPECT_EQ(5u, vgpu_get(w, VGPU_F_PU));
	EXPECT_EQ(5u, w[1] >> 42 & 7);
}

TEST_HARNESS_MAIN
