/* SPDX-License-Identifier: MIT */
/*
 * vGPU assembler, third stage: a statement's mnemonic and modifiers into
 * the candidate rows of the ISA table, and the classes of its operands
 * into the one row it is; the "accepted forms" error when none fits.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "asm_int.h"

/* ---- mnemonics and modifiers ---- */

static int split_dots(const char *p, int len, int col, struct mtok *m, int max)
{
	int n = 0, start = 0;

	for (int i = 0; i <= len; i++) {
		if (i < len && p[i] != '.')
			continue;
		if (i == start || n == max)
			return -1;
		m[n++] = (struct mtok){ p + start, i - start, col + start };
		start = i + 1;
	}
	return n;
}

static bool mtok_eq(const struct mtok *a, const struct mtok *b)
{
	return a->len == b->len && !strncasecmp(a->p, b->p, a->len);
}

/* Number of parts of @str if they are a prefix of @m, else 0. */
static int prefix_len(const char *str, const struct mtok *m, int nm)
{
	struct mtok s[MAX_MTOKS];
	int ns = split_dots(str, (int)strlen(str), 0, s, MAX_MTOKS);

	if (ns <= 0 || ns > nm)
		return 0;
	for (int i = 0; i < ns; i++)
		if (!mtok_eq(&s[i], &m[i]))
			return 0;
	return ns;
}

/* Rows whose mnemonic is the longest prefix of @m; *@used gets its length. */
static int match_rows(const struct mtok *m, int nm, int *ids, int *used)
{
	int best = 0, n = 0;

	for (int i = 0; i < (int)VGPU_I__COUNT; i++) {
		int k = prefix_len(vgpu_isa_table[i].mnemonic, m, nm);

		if (k > best) {
			best = k;
			n = 0;
		}
		if (k && k == best)
			ids[n++] = i;
	}
	*used = best;
	return n;
}

/* Rewrite @m through the first alias that is a prefix of it. */
static int apply_alias(const struct mtok *m, int nm, struct mtok *out)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_ALIASES; i++) {
		const struct vgpu_isa_alias *a = &vgpu_isa_aliases[i];
		int na = prefix_len(a->alias, m, nm);
		int nc = na ? split_dots(a->canonical, (int)strlen(a->canonical),
					 m[0].col, out, MAX_MTOKS)
			    : -1;

		if (nc < 0 || nc + nm - na > MAX_MTOKS)
			continue;
		for (int k = 0; k < nc; k++)
			out[k].col = m[0].col;
		memcpy(out + nc, m + na, (size_t)(nm - na) * sizeof(*m));
		return nc + nm - na;
	}
	return -1;
}

static int modval_lookup(unsigned g, const struct mtok *t)
{
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS; i++) {
		const struct vgpu_isa_modval *v = &vgpu_isa_modvals[i];

		if (v->group == g && (size_t)t->len == strlen(v->name) &&
		    !strncasecmp(v->name, t->p, t->len))
			return v->value;
	}
	return -1;
}

static bool row_knows(const struct vgpu_isa_desc *d, const struct mtok *t)
{
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++)
		if (modval_lookup(d->mods[g], t) >= 0)
			return true;
	return false;
}

/* The values of group @g as ".A, .B" (@sep ", ") or ".A|.B" (@sep "|"). */
static size_t group_values_sep(unsigned g, char *buf, size_t len,
			       const char *sep)
{
	size_t used = 0;
	bool first = true;

	buf[0] = 0;
	for (unsigned i = 0; i < VGPU_ISA_NUM_MODVALS && used < len; i++) {
		if (vgpu_isa_modvals[i].group != g)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s.%s",
					 first ? "" : sep, vgpu_isa_modvals[i].name);
		first = false;
	}
	return used < len ? used : len;
}

static void group_values(unsigned g, char *buf, size_t len)
{
	group_values_sep(g, buf, len, ", ");
}

/* "[.RELEASE|.RELAXED] [.CTA|.CLUSTER]": the row's groups in order. */
static void group_order(const struct vgpu_isa_desc *d, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g] && used + 4 < len; g++) {
		bool opt = vgpu_isa_modgroups[d->mods[g]].def >= 0;

		if (g)
			buf[used++] = ' ';
		if (opt)
			buf[used++] = '[';
		used += group_values_sep(d->mods[g], buf + used, len - used - 2, "|");
		if (opt)
			buf[used++] = ']';
		buf[used] = 0;
	}
}

/*
 * Match the modifier parts @m against the groups of row @d, in order;
 * omitted groups take their default.  Reports only when @report.
 */
static int parse_mods(struct asm_ctx *c, const struct vgpu_isa_desc *d,
		      const struct mtok *m, int nm, int mcol, uint8_t *vals,
		      bool report)
{
	bool written[VGPU_ISA_MAX_MODS] = { false };
	int k = 0;

	for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
		const struct vgpu_isa_modgroup *mg = &vgpu_isa_modgroups[d->mods[g]];
		int v = k < nm ? modval_lookup(d->mods[g], &m[k]) : -1;
		char list[160];

		if (v >= 0) {
			vals[g] = (uint8_t)v;
			written[g] = true;
			k++;
			continue;
		}
		if (mg->def >= 0) {
			vals[g] = (uint8_t)mg->def;
			continue;
		}
		if (!report)
			return -1;
		if (k < nm && !row_knows(d, &m[k])) {
			asm_err_at(c, m[k].col - 1, "unknown modifier '.%.*s' for %s",
				   m[k].len, m[k].p, d->mnemonic);
			return -1;
		}
		group_values(d->mods[g], list, sizeof(list));
		asm_err_at(c, k < nm ? m[k].col - 1 : mcol,
			   "missing required modifier for %s (one of %s)",
			   d->mnemonic, list);
		return -1;
	}
	if (k < nm && report) {
		/* a value of a group that was left at its default: misplaced */
		for (int g = 0; g < VGPU_ISA_MAX_MODS && d->mods[g]; g++) {
			char order[200];

			if (written[g] || modval_lookup(d->mods[g], &m[k]) < 0)
				continue;
			group_order(d, order, sizeof(order));
			asm_err_at(c, m[k].col - 1,
				   "modifier '.%.*s' out of order for %s (order: %s)",
				   m[k].len, m[k].p, d->mnemonic, order);
			return -1;
		}
		asm_err_at(c, m[k].col - 1, "unknown modifier '.%.*s' for %s",
			   m[k].len, m[k].p, d->mnemonic);
	}
	return k < nm ? -1 : 0;
}

static void display_name(struct resolved *r, const char *mn,
			 const struct mtok *m, int nm)
{
	size_t used = (size_t)snprintf(r->name, sizeof(r->name), "%s", mn);

	for (int i = 0; i < nm && used + 2 < sizeof(r->name); i++) {
		r->name[used++] = '.';
		for (int k = 0; k < m[i].len && used + 1 < sizeof(r->name); k++)
			r->name[used++] = (char)toupper((unsigned char)m[i].p[k]);
		r->name[used] = 0;
	}
}

int asm_resolve_mnemonic(struct asm_ctx *c, const struct tok *mn,
			 struct resolved *r)
{
	struct mtok m[MAX_MTOKS], a[MAX_MTOKS];
	const struct mtok *tk = m;
	int ids[VGPU_I__COUNT], nm, n, used;

	nm = split_dots(mn->p, mn->len, mn->col, m, MAX_MTOKS);
	if (nm < 0) {
		asm_err_at(c, mn->col, "malformed mnemonic '" TOKF "'", TOKA(mn));
		return -1;
	}
	n = match_rows(m, nm, ids, &used);
	if (!n) {
		nm = apply_alias(m, nm, a);
		tk = a;
		n = nm > 0 ? match_rows(a, nm, ids, &used) : 0;
	}
	if (!n) {
		asm_err_at(c, mn->col, "unknown mnemonic '" TOKF "'", TOKA(mn));
		return -1;
	}
	r->n = 0;
	for (int i = 0; i < n; i++) {
		struct cand *cd = &r->cand[r->n];

		cd->id = ids[i];
		if (!parse_mods(c, &vgpu_isa_table[ids[i]], tk + used, nm - used,
				mn->col, cd->mod, false))
			r->n++;
	}
	if (!r->n) {
		parse_mods(c, &vgpu_isa_table[ids[0]], tk + used, nm - used,
			   mn->col, r->cand[0].mod, true);
		return -1;
	}
	display_name(r, vgpu_isa_table[ids[0]].mnemonic, tk + used, nm - used);
	return 0;
}

/* ---- operand forms ---- */

static bool row_takes(const struct vgpu_isa_desc *d, const struct stmt *s,
		      int *map)
{
	int m = 0, opt = -1;

	while (m < VGPU_ISA_MAX_OPS && d->ops[m]) {
		if (d->ops[m] & VGPU_OPK_OPTIONAL)
			opt = m;
		m++;
	}
	if (s->nops != m && !(s->nops == m - 1 && opt >= 0))
		return false;
	for (int i = 0, k = 0; i < m; i++) {
		if (s->nops < m && i == opt) {
			map[i] = -1;
			continue;
		}
		if (asm_kinds[VGPU_OPK_KIND(d->ops[i])].cls != s->ops[k].cls)
			return false;
		map[i] = k++;
	}
	return true;
}

const struct cand *asm_pick_row(const struct resolved *r,
				const struct stmt *s, int *map)
{
	for (int i = 0; i < r->n; i++)
		if (row_takes(&vgpu_isa_table[r->cand[i].id], s, map))
			return &r->cand[i];
	return NULL;
}

__attribute__((format(printf, 3, 4))) static void
append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* "(UImm4, [UImm12,] predicate)", "(GPR[, UImm12])", "([UImm4,] GPR)" */
static void row_form(const struct vgpu_isa_desc *d, char *buf, size_t len)
{
	const char *sep = "";

	append(buf, len, "(");
	for (int i = 0; i < VGPU_ISA_MAX_OPS && d->ops[i]; i++) {
		const char *f = asm_kinds[VGPU_OPK_KIND(d->ops[i])].form;
		bool last = i + 1 == VGPU_ISA_MAX_OPS || !d->ops[i + 1];

		if (!(d->ops[i] & VGPU_OPK_OPTIONAL)) {
			append(buf, len, "%s%s", sep, f);
			sep = ", ";
		} else if (last && i) {
			append(buf, len, "[, %s]", f);
		} else {
			append(buf, len, "%s[%s,]", sep, f);
			sep = " ";
		}
	}
	append(buf, len, ")");
}

void asm_form_error(struct asm_ctx *c, const struct stmt *s,
		    const struct resolved *r)
{
	char buf[1024] = "";

	append(buf, sizeof(buf), "(");
	for (int i = 0; i < s->nops; i++)
		append(buf, sizeof(buf), "%s%s", i ? ", " : "",
		       asm_class_names[s->ops[i].cls]);
	append(buf, sizeof(buf), "); accepted forms: ");
	for (int i = 0; i < r->n; i++) {
		if (i)
			append(buf, sizeof(buf), ", ");
		row_form(&vgpu_isa_table[r->cand[i].id], buf, sizeof(buf));
	}
	asm_err_at(c, s->mn->col, "%s does not take %s", r->name, buf);
}
