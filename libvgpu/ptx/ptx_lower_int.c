// SPDX-License-Identifier: MIT
/*
 * PTX lowering: the integer forms vGPU has no single instruction for
 * (PTX ISA 9.7.1 and 9.7.8), as short sequences on 32-bit words:
 *
 *   add/sub.sat.s32, min/max.relu.s32, add/sub/min/max[.relu] on 16x2,
 *   min/max of 64 bits, abs.s16, mul.hi and mad.hi/lo of 64 bits,
 *   mad.hi of 16 and 32 bits (.sat), sad, mul24/mad24, the carry chains
 *   (add/sub/mad.cc, addc, subc, madc: CC.CF in a word of its own, a
 *   borrow for subtraction), brev, bmsk, szext, cnot, lop3 (a Shannon
 *   expansion of the table; .and/.or with a predicate), fns, shf, prmt (every
 *   mode, as selector nibbles), dp4a/dp2a, and %lanemask_*.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ptx_lower.h"

/* a 32-bit source: a register word, RZ or an immediate */
struct w {
	int v, p; /* v -1: RZ (or the immediate k when imm) */
	bool imm;
	uint32_t k;
};

static struct w R(int v) { return (struct w){ v, 0, false, 0 }; }
static struct w RP(int v, int p) { return (struct w){ v, p, false, 0 }; }
static struct w K(uint32_t k) { return (struct w){ -1, 0, true, k }; }
static const struct w Z = { -1, 0, false, 0 };

static int nw(struct lower *L) { return pl_new_vreg(L, 1); }

static void put(struct lower *L, struct ptx_vinsn *v, struct w x)
{
	if (x.imm)
		pl_o_text(v, "0x%" PRIx32, x.k);
	else if (x.v < 0)
		pl_o_text(v, "RZ");
	else
		pl_o_use(v, x.v, x.p);
}

/* an immediate where only a register may stand, moved into one */
static struct w reg(struct lower *L, struct w x)
{
	struct ptx_vinsn *v;
	int t;

	if (!x.imm)
		return x;
	if (!x.k)
		return Z;
	t = nw(L);
	v = pl_emit(L, "MOV");
	pl_o_def(v, t, 0, false);
	put(L, v, x);
	return R(t);
}

/* d = a OP b (and c: IMAD); returns d */
static int e3(struct lower *L, const char *mn, int d, struct w a, struct w b)
{
	struct ptx_vinsn *v;

	a = reg(L, a);
	if (d < 0)
		d = nw(L);
	v = pl_emit(L, "%s", mn);
	pl_o_def(v, d, 0, false);
	put(L, v, a);
	put(L, v, b);
	return d;
}

static int e4(struct lower *L, const char *mn, int d, struct w a, struct w b, struct w c)
{
	struct ptx_vinsn *v;

	a = reg(L, a);
	c = reg(L, c);
	if (d < 0)
		d = nw(L);
	v = pl_emit(L, "%s", mn);
	pl_o_def(v, d, 0, false);
	put(L, v, a);
	put(L, v, b);
	put(L, v, c);
	return d;
}

/* a new word = x */
static int mov1(struct lower *L, struct w x)
{
	struct ptx_vinsn *v;
	int d = nw(L);

	v = pl_emit(L, "MOV");
	pl_o_def(v, d, 0, false);
	put(L, v, x);
	return d;
}

/* a new predicate = a CMP b ("ISETP.LT.U32") */
static int pc(struct lower *L, const char *mn, struct w a, struct w b)
{
	int p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;

	a = reg(L, a);
	v = pl_emit(L, "%s", mn);
	pl_o_pdef(v, p);
	put(L, v, a);
	put(L, v, b);
	return p;
}

/* d = p ? a : b (@neg: !p) */
static int sel(struct lower *L, int d, struct w a, struct w b, int p, bool neg)
{
	struct ptx_vinsn *v;

	a = reg(L, a);
	if (d < 0)
		d = nw(L);
	v = pl_emit(L, "SEL");
	pl_o_def(v, d, 0, false);
	put(L, v, a);
	put(L, v, b);
	pl_o_puse(v, p, neg);
	return d;
}

/* part @part of source @o */
static struct w src(struct lower *L, const struct ptx_operand *o, int part)
{
	int pp, r;

	if (o->kind == PTX_O_IMM)
		return K(part ? (uint32_t)((uint64_t)o->imm >> 32) : (uint32_t)o->imm);
	if (o->kind == PTX_O_REG && pl_preg(L, o->reg)->cls == PTX_R32)
		return part ? K(0) : R(o->reg);
	r = pl_src_reg(L, o, part, &pp);
	return r < 0 ? Z : RP(r, pp);
}

/* the destination: words lo (and hi) into it */
static void dst(struct lower *L, int lo, int hi)
{
	const struct ptx_operand *o = &L->in->ops[0];
	bool w64 = o->kind == PTX_O_REG && pl_preg(L, o->reg)->cls == PTX_R64;
	int d = pl_dst_reg(L, o, -1);

	if (d < 0)
		return;
	pl_mov_reg(L, d, 0, w64, lo, 0);
	if (w64)
		pl_mov_reg(L, d, 1, false, hi, 0);
}

/* 0/1 word of predicate p */
static int bit_of(struct lower *L, int p)
{
	return sel(L, -1, Z, K(1), p, true);
}

/* d = a + b + cin (words), *cout: the carry (0/1 word), may be NULL */
static int addc_w(struct lower *L, struct w a, struct w b, int cin, int *cout)
{
	int t = e3(L, "IADD", -1, a, b), c1 = -1, d;

	if (cout)
		c1 = bit_of(L, pc(L, "ISETP.LT.U32", R(t), a));
	if (cin < 0) {
		if (cout)
			*cout = c1;
		return t;
	}
	d = e3(L, "IADD", -1, R(t), R(cin));
	if (cout) {
		int c2 = bit_of(L, pc(L, "ISETP.LT.U32", R(d), R(t)));

		*cout = e3(L, "LOP.OR", -1, R(c1), R(c2));
	}
	return d;
}

/* d = a - b - bin, *bout: the borrow */
static int subb_w(struct lower *L, struct w a, struct w b, int bin, int *bout)
{
	int t = e3(L, "ISUB", -1, a, b), b1 = -1, d;

	if (bout)
		b1 = bit_of(L, pc(L, "ISETP.LT.U32", a, b));
	if (bin < 0) {
		if (bout)
			*bout = b1;
		return t;
	}
	d = e3(L, "ISUB", -1, R(t), R(bin));
	if (bout) {
		int b2 = bit_of(L, pc(L, "ISETP.LT.U32", R(t), R(bin)));

		*bout = e3(L, "LOP.OR", -1, R(b1), R(b2));
	}
	return d;
}

/* 64-bit (lo, hi) = a * b: the full product's low or high 64 bits */
static void mul64(struct lower *L, const struct w a[2], const struct w b[2], bool high, bool sign,
		  int r[2])
{
	int p00l = e3(L, "IMUL", -1, a[0], b[0]), p00h = e3(L, "IMUL.HI.U32", -1, a[0], b[0]);
	int c1, c2, c3, c4, c5, w1, w2, w3;

	if (!high) {
		int x = e4(L, "IMAD", -1, a[0], b[1], R(p00h));

		r[0] = p00l;
		r[1] = e4(L, "IMAD", -1, a[1], b[0], R(x));
		return;
	}
	int p01l = e3(L, "IMUL", -1, a[0], b[1]), p01h = e3(L, "IMUL.HI.U32", -1, a[0], b[1]);
	int p10l = e3(L, "IMUL", -1, a[1], b[0]), p10h = e3(L, "IMUL.HI.U32", -1, a[1], b[0]);
	int p11l = e3(L, "IMUL", -1, a[1], b[1]), p11h = e3(L, "IMUL.HI.U32", -1, a[1], b[1]);

	w1 = addc_w(L, R(p00h), R(p01l), -1, &c1);
	w1 = addc_w(L, R(w1), R(p10l), -1, &c2);
	w2 = addc_w(L, R(p11l), R(p01h), -1, &c3);
	w2 = addc_w(L, R(w2), R(p10h), c1, &c4);
	w2 = addc_w(L, R(w2), R(c2), -1, &c5);
	w3 = e3(L, "IADD", -1, R(p11h), R(c3));
	w3 = e3(L, "IADD", -1, R(w3), R(c4));
	w3 = e3(L, "IADD", -1, R(w3), R(c5));
	(void)w1;
	if (sign) { /* minus (a < 0 ? b : 0) and (b < 0 ? a : 0) */
		for (int k = 0; k < 2; k++) {
			const struct w *x = k ? b : a, *y = k ? a : b;
			int m = e3(L, "SHR.S32", -1, x[1], K(31)), bo;
			int lo = e3(L, "LOP.AND", -1, y[0], R(m)), hi = e3(L, "LOP.AND", -1, y[1], R(m));

			w2 = subb_w(L, R(w2), R(lo), -1, &bo);
			w3 = subb_w(L, R(w3), R(hi), bo, NULL);
		}
	}
	r[0] = w2;
	r[1] = w3;
}

/* saturating a + b (s32) */
static int add_sat(struct lower *L, struct w a, struct w b, bool sub)
{
	int r = e3(L, sub ? "ISUB" : "IADD", -1, a, b), x, y, s, p;

	if (sub) {
		x = e3(L, "LOP.XOR", -1, a, b);
		y = e3(L, "LOP.XOR", -1, a, R(r));
	} else {
		x = e3(L, "LOP.XOR", -1, R(r), a);
		y = e3(L, "LOP.XOR", -1, R(r), b);
	}
	x = e3(L, "LOP.AND", -1, R(x), R(y));
	p = pc(L, "ISETP.LT.S32", R(x), K(0));
	s = e3(L, "SHR.S32", -1, a, K(31));
	s = e3(L, "LOP.XOR", -1, R(s), K(0x7fffffff));
	return sel(L, -1, R(s), R(r), p, false);
}

/* the low @bits of x extended (sign or zero) */
static int ext(struct lower *L, struct w x, int bits, bool sign)
{
	if (!sign)
		return e3(L, "LOP.AND", -1, x, K((uint32_t)((1ull << bits) - 1)));
	return e3(L, "SHR.S32", -1, R(e3(L, "SHL", -1, x, K(32u - bits))), K(32u - bits));
}

/* bits [8i, 8i+8) (or 16i for halves) of x, extended */
static int field(struct lower *L, struct w x, int i, int bits, bool sign)
{
	int t = e3(L, "SHL", -1, x, K(32u - bits * (i + 1)));

	return e3(L, sign ? "SHR.S32" : "SHR.U32", -1, R(t), K(32u - bits));
}

/* 64-bit a < b (or a > b with @gt) into a new predicate */
static int lt64(struct lower *L, const struct w a[2], const struct w b[2], bool sign, bool gt)
{
	const struct w *x = gt ? b : a, *y = gt ? a : b;
	int p = pl_new_vreg(L, 0);
	struct ptx_vinsn *v;
	struct w x0 = reg(L, x[0]), x1 = reg(L, x[1]);

	v = pl_emit(L, "ISETP.LT.U32");
	pl_o_text(v, "P6");
	put(L, v, x0);
	put(L, v, y[0]);
	v = pl_emit(L, "ISETP.EQ.U32.AND");
	pl_o_text(v, "P6");
	put(L, v, x1);
	put(L, v, y[1]);
	pl_o_text(v, "P6");
	v = pl_emit(L, "ISETP.LT.%s.OR", sign ? "S32" : "U32");
	pl_o_pdef(v, p);
	put(L, v, x1);
	put(L, v, y[1]);
	pl_o_text(v, "P6");
	return p;
}

static int cc_word(struct lower *L)
{
	if (!L->cc)
		L->cc = nw(L) + 1;
	return L->cc - 1;
}

/* add/sub/mad[.lo|.hi].cc, addc, subc, madc: CC.CF in a word */
static void carry_op(struct lower *L, const char *op, struct ptype t)
{
	const struct ptx_insn *in = L->in;
	bool cin = op[strlen(op) - 1] == 'c', cout = pl_has_mod(in, ".cc");
	bool sub = !strncmp(op, "sub", 3), mad = !strncmp(op, "mad", 3);
	int words = t.bits == 64 ? 2 : 1, r[2] = { -1, -1 }, c = cin ? cc_word(L) : -1, co;
	struct w a[2], b[2], x[2];

	if (!pl_want_ops(L, mad ? 5 - 1 : 3))
		return;
	for (int k = 0; k < 2; k++) {
		a[k] = src(L, &in->ops[1], k);
		b[k] = src(L, &in->ops[2], k);
	}
	if (mad) {
		int m[2];

		if (words == 2) {
			mul64(L, a, b, pl_has_mod(in, ".hi"), t.sign, m);
		} else {
			m[0] = e3(L, pl_has_mod(in, ".hi") ? (t.sign ? "IMUL.HI.S32" : "IMUL.HI.U32") :
							     "IMUL", -1, a[0], b[0]);
			m[1] = -1;
		}
		for (int k = 0; k < 2; k++) {
			a[k] = R(m[k]);
			b[k] = src(L, &in->ops[3], k);
		}
	}
	for (int k = 0; k < words; k++) {
		x[k] = sub ? R(subb_w(L, a[k], b[k], c, &co)) : R(addc_w(L, a[k], b[k], c, &co));
		r[k] = x[k].v;
		c = co;
	}
	if (cout)
		pl_mov_reg(L, cc_word(L), 0, false, c, 0);
	dst(L, r[0], r[1]);
}

/* lop3's function of the truth table @lut over the sources x[0..n) */
static struct w lut_fn(struct lower *L, const struct w *x, int n, uint32_t lut)
{
	uint32_t size = 1u << n, all = (1u << size) - 1; /* size: the table's bits */
	struct w hi, lo;

	lut &= all;
	if (!lut)
		return K(0);
	if (lut == all)
		return K(0xffffffffu);
	/* lut bit i: the value where (x0 x1 x2) is i's bits, x0 the top */
	hi = lut_fn(L, x + 1, n - 1, lut >> (size / 2));
	lo = lut_fn(L, x + 1, n - 1, lut);
	if (hi.imm && lo.imm) /* 0/ones: x0 or ~x0 */
		return R(e3(L, "LOP.XOR", -1, x[0], K(hi.k ? 0 : 0xffffffffu)));
	{
		int t1 = e3(L, "LOP.AND", -1, x[0], hi.imm ? hi : reg(L, hi));
		int nx = e3(L, "LOP.XOR", -1, x[0], K(0xffffffffu));
		int t0 = e3(L, "LOP.AND", -1, R(nx), lo);

		return R(e3(L, "LOP.OR", -1, R(t1), R(t0)));
	}
}

static void lop3(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *boolop = pl_has_mod(in, ".and") ? "AND" : pl_has_mod(in, ".or") ? "OR" : NULL;
	struct w x[3];
	struct w r;
	int d;

	if (!pl_want_ops(L, boolop ? 6 : 5))
		return;
	if (in->ops[4].kind != PTX_O_IMM)
		return (void)pl_unsupported(L, "a lop3 table not a constant");
	for (int k = 0; k < 3; k++)
		x[k] = reg(L, src(L, &in->ops[1 + k], 0));
	r = lut_fn(L, x, 3, (uint32_t)in->ops[4].imm & 0xff);
	d = r.imm || r.v < 0 ? mov1(L, r) : r.v;
	dst(L, d, -1);
	if (boolop && in->ops[0].has_p && in->ops[0].preg >= 0) {
		struct ptx_vinsn *v = pl_emit(L, "ISETP.NE.U32.%s", boolop);

		pl_o_pdef(v, in->ops[0].preg);
		pl_o_use(v, d, 0);
		pl_o_text(v, "0x0");
		pl_o_puse(v, pl_pred_of(L, &in->ops[5]), in->ops[5].neg);
	}
}

/* prmt: the byte of {b, a} each selector nibble of s names (bit 3: its sign) */
static int permute(struct lower *L, struct w a, struct w b, int s, bool signs)
{
	int d = -1;

	a = reg(L, a);
	b = reg(L, b);
	for (int i = 0; i < 4; i++) {
		int nib = e3(L, "SHR.U32", -1, R(s), K(4u * i)), sh, src4, byte;

		sh = e3(L, "SHL", -1, R(e3(L, "LOP.AND", -1, R(nib), K(3))), K(3));
		src4 = sel(L, -1, b, a, pc(L, "ISETP.NE.U32", R(e3(L, "LOP.AND", -1, R(nib), K(4))), K(0)),
			   false);
		byte = e3(L, "LOP.AND", -1, R(e3(L, "SHR.U32", -1, R(src4), R(sh))), K(0xff));
		if (signs) {
			int rep = e3(L, "SHR.S32", -1, R(e3(L, "SHL", -1, R(byte), K(24))), K(31));
			int p = pc(L, "ISETP.NE.U32", R(e3(L, "LOP.AND", -1, R(nib), K(8))), K(0));

			rep = e3(L, "LOP.AND", -1, R(rep), K(0xff));
			byte = sel(L, -1, R(rep), R(byte), p, false);
		}
		if (i)
			byte = e3(L, "SHL", -1, R(byte), K(8u * i));
		d = i ? e3(L, "LOP.OR", -1, R(d), R(byte)) : byte;
	}
	return d;
}

static void prmt(struct lower *L)
{
	static const struct {
		const char *mode;
		uint16_t sel[4];
	} modes[] = {
		{ ".f4e", { 0x3210, 0x4321, 0x5432, 0x6543 } },
		{ ".b4e", { 0x5670, 0x6701, 0x7012, 0x0123 } },
		{ ".rc8", { 0x0000, 0x1111, 0x2222, 0x3333 } },
		{ ".ecl", { 0x3210, 0x3211, 0x3222, 0x3333 } },
		{ ".ecr", { 0x0000, 0x1110, 0x2210, 0x3210 } },
		{ ".rc16", { 0x1010, 0x3232, 0x1010, 0x3232 } },
	};
	const struct ptx_insn *in = L->in;
	struct w c;
	int s = -1;

	if (!pl_want_ops(L, 4))
		return;
	c = src(L, &in->ops[3], 0);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		int n;

		if (!pl_has_mod(in, modes[m].mode))
			continue;
		n = e3(L, "LOP.AND", -1, c, K(3));
		s = mov1(L, K(modes[m].sel[3]));
		for (int k = 2; k >= 0; k--)
			s = sel(L, -1, K(modes[m].sel[k]), R(s),
				pc(L, "ISETP.EQ.U32", R(n), K((uint32_t)k)), false);
	}
	if (s >= 0) /* the modes name bytes 0..7 only */
		return dst(L, permute(L, src(L, &in->ops[1], 0), src(L, &in->ops[2], 0), s, false),
			   -1);
	s = mov1(L, c);
	dst(L, permute(L, src(L, &in->ops[1], 0), src(L, &in->ops[2], 0), s, true), -1);
}

/* shf.l|r.clamp|wrap.b32 d, a, b, c: the funnel {b, a} shifted by c */
static void shf(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct w a, b, c;
	int n, m, x, y;

	if (!pl_want_ops(L, 4))
		return;
	a = src(L, &in->ops[1], 0);
	b = src(L, &in->ops[2], 0);
	c = src(L, &in->ops[3], 0);
	if (pl_has_mod(in, ".clamp"))
		n = e3(L, "IMNMX.MIN.U32", -1, c, K(32));
	else
		n = e3(L, "LOP.AND", -1, c, K(31));
	m = e3(L, "ISUB", -1, K(32), R(n));
	if (pl_has_mod(in, ".l")) {
		x = e3(L, "SHL", -1, b, R(n));
		y = e3(L, "SHR.U32", -1, a, R(m));
	} else {
		x = e3(L, "SHR.U32", -1, a, R(n));
		y = e3(L, "SHL", -1, b, R(m));
	}
	dst(L, e3(L, "LOP.OR", -1, R(x), R(y)), -1);
}

static int brev32(struct lower *L, struct w x)
{
	static const uint32_t masks[] = { 0x55555555u, 0x33333333u, 0x0f0f0f0fu, 0x00ff00ffu };
	struct w r = reg(L, x);

	if (r.v < 0)
		return mov1(L, K(0));
	for (int i = 0; i < 4; i++) {
		uint32_t sh = 1u << i;
		int lo = e3(L, "SHL", -1, R(e3(L, "LOP.AND", -1, r, K(masks[i]))), K(sh));
		int hi = e3(L, "LOP.AND", -1, R(e3(L, "SHR.U32", -1, r, K(sh))), K(masks[i]));

		r = R(e3(L, "LOP.OR", -1, R(lo), R(hi)));
	}
	return e3(L, "LOP.OR", -1, R(e3(L, "SHL", -1, r, K(16))),
		  R(e3(L, "SHR.U32", -1, r, K(16))));
}

/*
 * fns.b32 d, mask, base, offset (PTX ISA 9.7.1.x): the position of the
 * offset-th set bit of mask counting up from base (offset > 0), down from
 * it (offset < 0), or base itself if set (offset 0); 0xffffffff if there
 * is none.  Every case is the r-th lowest set bit of a masked m:
 *   up:   m = mask & (~0 << base), r = offset;
 *   down: m = mask & bits 0..base, r = popc(m) + offset + 1;
 *   0:    m = mask & (1 << base), r = 1;
 * found when 1 <= r <= popc(m) (signed), searched through m's SWAR
 * partial counts (16, 8, 4, 2, 1 bits).  A base past 31 (undefined in
 * the ISA text) finds nothing; offset INT_MIN gives 0, as an H200 does
 * (mask 0 included: ptxas's search takes |INT_MIN| as negative).
 */
static void fns(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	struct w mask, base, off;
	int hi, lo, m, cnt[5], tot, r, pos, p, found;
	static const uint32_t fm[] = { 0xffff, 0xff, 0xf, 0x3, 0x1 };

	if (!pl_want_ops(L, 4))
		return;
	mask = src(L, &in->ops[1], 0);
	base = src(L, &in->ops[2], 0);
	off = src(L, &in->ops[3], 0);
	hi = e3(L, "SHL", -1, K(0xffffffffu), base); /* bits base..31 */
	lo = e3(L, "LOP.XOR", -1, R(e3(L, "SHL", -1, R(hi), K(1))), K(0xffffffffu));
	lo = sel(L, -1, Z, R(lo), pc(L, "ISETP.GT.U32", base, K(31)), false);
	p = pc(L, "ISETP.LT.S32", off, K(0));
	m = sel(L, -1, R(lo), R(hi), p, false);
	m = sel(L, -1, R(e3(L, "SHL", -1, K(1), base)), R(m), pc(L, "ISETP.EQ.U32", off, K(0)),
		false);
	m = e3(L, "LOP.AND", -1, R(m), mask);
	/* partial counts: cnt[4] = m, cnt[3] of 2 bits, ..., cnt[0] of 16 */
	cnt[4] = m;
	cnt[3] = e3(L, "ISUB", -1, R(m),
		    R(e3(L, "LOP.AND", -1, R(e3(L, "SHR.U32", -1, R(m), K(1))), K(0x55555555u))));
	cnt[2] = e3(L, "IADD", -1, R(e3(L, "LOP.AND", -1, R(cnt[3]), K(0x33333333u))),
		    R(e3(L, "LOP.AND", -1, R(e3(L, "SHR.U32", -1, R(cnt[3]), K(2))),
			 K(0x33333333u))));
	cnt[1] = e3(L, "LOP.AND", -1,
		    R(e3(L, "IADD", -1, R(cnt[2]), R(e3(L, "SHR.U32", -1, R(cnt[2]), K(4))))),
		    K(0x0f0f0f0fu));
	cnt[0] = e3(L, "LOP.AND", -1,
		    R(e3(L, "IADD", -1, R(cnt[1]), R(e3(L, "SHR.U32", -1, R(cnt[1]), K(8))))),
		    K(0x00ff00ffu));
	tot = e3(L, "LOP.AND", -1,
		 R(e3(L, "IADD", -1, R(cnt[0]), R(e3(L, "SHR.U32", -1, R(cnt[0]), K(16))))),
		 K(0x3f));
	r = e3(L, "IADD", -1, R(e3(L, "IADD", -1, R(tot), off)), K(1));
	r = sel(L, -1, R(r), off, p, false);
	r = sel(L, -1, K(1), R(r), pc(L, "ISETP.EQ.U32", off, K(0)), false);
	found = sel(L, -1, K(1), Z, pc(L, "ISETP.LE.S32", R(r), R(tot)), false);
	found = sel(L, -1, Z, R(found), pc(L, "ISETP.LT.S32", R(r), K(1)), false);
	pos = mov1(L, K(0));
	for (int k = 0; k < 5; k++) {
		int t = e3(L, "LOP.AND", -1, R(e3(L, "SHR.U32", -1, R(cnt[k]), R(pos))), K(fm[k]));

		p = pc(L, "ISETP.GT.S32", R(r), R(t));
		r = sel(L, -1, R(e3(L, "ISUB", -1, R(r), R(t))), R(r), p, false);
		pos = sel(L, -1, R(e3(L, "IADD", -1, R(pos), K(16u >> k))), R(pos), p, false);
	}
	pos = sel(L, -1, R(pos), K(0xffffffffu), pc(L, "ISETP.NE.U32", R(found), K(0)), false);
	dst(L, sel(L, -1, K(0), R(pos), pc(L, "ISETP.EQ.U32", off, K(0x80000000u)), false), -1);
}

/* bmsk.mode.b32 d, a, b: b ones from bit a; szext.mode.T d, a, b */
static void bmsk_szext(struct lower *L, bool bmsk, struct ptype t)
{
	const struct ptx_insn *in = L->in;
	bool clamp = pl_has_mod(in, ".clamp");
	struct w a, b;
	int n, m;

	if (!pl_want_ops(L, 3))
		return;
	a = src(L, &in->ops[1], 0);
	b = src(L, &in->ops[2], 0);
	n = e3(L, clamp ? "IMNMX.MIN.U32" : "LOP.AND", -1, b, K(clamp ? 32 : 31));
	if (bmsk) {
		int pos = e3(L, clamp ? "IMNMX.MIN.U32" : "LOP.AND", -1, a, K(clamp ? 32 : 31));

		m = e3(L, "LOP.XOR", -1, R(e3(L, "SHL", -1, K(0xffffffffu), R(n))), K(0xffffffffu));
		return dst(L, e3(L, "SHL", -1, R(m), R(pos)), -1);
	}
	if (!t.sign) {
		m = e3(L, "LOP.XOR", -1, R(e3(L, "SHL", -1, K(0xffffffffu), R(n))), K(0xffffffffu));
		return dst(L, e3(L, "LOP.AND", -1, a, R(m)), -1);
	}
	m = e3(L, "ISUB", -1, K(32), R(n));
	dst(L, e3(L, "SHR.S32", -1, R(e3(L, "SHL", -1, a, R(m))), R(m)), -1);
}

/* dp4a.atype.btype d, a, b, c; dp2a.lo|hi.atype.btype */
static void dp(struct lower *L, bool four)
{
	const struct ptx_insn *in = L->in;
	struct ptype ta = pl_type_of(in, 0), tb = pl_type_of(in, 1);
	int base = four ? 0 : pl_has_mod(in, ".hi") ? 2 : 0, d;
	struct w a, b;

	if (!pl_want_ops(L, 4))
		return;
	a = src(L, &in->ops[1], 0);
	b = src(L, &in->ops[2], 0);
	d = mov1(L, src(L, &in->ops[3], 0));
	for (int i = 0; i < (four ? 4 : 2); i++) {
		int x = field(L, a, i, four ? 8 : 16, ta.sign);
		int y = field(L, b, base + i, 8, tb.sign);

		d = e4(L, "IMAD", -1, R(x), R(y), R(d));
	}
	dst(L, d, -1);
}

/* sad.T d, a, b, c: c + |a - b| */
static void sad(struct lower *L, struct ptype t)
{
	const struct ptx_insn *in = L->in;
	struct w a[2], b[2], c[2];
	int p, r[2] = { -1, -1 }, bo, co;

	if (!pl_want_ops(L, 4))
		return;
	for (int k = 0; k < 2; k++) {
		a[k] = src(L, &in->ops[1], k);
		b[k] = src(L, &in->ops[2], k);
		c[k] = src(L, &in->ops[3], k);
	}
	if (t.bits == 16) {
		a[0] = R(ext(L, a[0], 16, t.sign));
		b[0] = R(ext(L, b[0], 16, t.sign));
	}
	if (t.bits < 64) {
		int x = e3(L, "ISUB", -1, a[0], b[0]), y = e3(L, "ISUB", -1, b[0], a[0]);

		p = pc(L, t.sign ? "ISETP.LT.S32" : "ISETP.LT.U32", a[0], b[0]);
		return dst(L, e3(L, "IADD", -1, R(sel(L, -1, R(y), R(x), p, false)), c[0]), -1);
	}
	p = lt64(L, a, b, t.sign, false);
	{
		int x0 = subb_w(L, a[0], b[0], -1, &bo), x1 = subb_w(L, a[1], b[1], bo, NULL);
		int y0 = subb_w(L, b[0], a[0], -1, &bo), y1 = subb_w(L, b[1], a[1], bo, NULL);
		int s0 = sel(L, -1, R(y0), R(x0), p, false), s1 = sel(L, -1, R(y1), R(x1), p, false);

		r[0] = addc_w(L, R(s0), c[0], -1, &co);
		r[1] = addc_w(L, R(s1), c[1], co, NULL);
	}
	dst(L, r[0], r[1]);
}

/* mul24/mad24.lo|hi[.sat].T */
static void mul24(struct lower *L, struct ptype t, bool mad)
{
	const struct ptx_insn *in = L->in;
	int a, b, r;

	if (!pl_want_ops(L, mad ? 4 : 3))
		return;
	a = ext(L, src(L, &in->ops[1], 0), 24, t.sign);
	b = ext(L, src(L, &in->ops[2], 0), 24, t.sign);
	if (pl_has_mod(in, ".hi")) { /* bits 16..47 of the 48-bit product */
		int lo = e3(L, "IMUL", -1, R(a), R(b));
		int hi = e3(L, t.sign ? "IMUL.HI.S32" : "IMUL.HI.U32", -1, R(a), R(b));

		r = e3(L, "LOP.OR", -1, R(e3(L, "SHR.U32", -1, R(lo), K(16))),
		       R(e3(L, "SHL", -1, R(hi), K(16))));
	} else {
		r = e3(L, "IMUL", -1, R(a), R(b));
	}
	if (mad)
		r = pl_has_mod(in, ".sat") ? add_sat(L, R(r), src(L, &in->ops[3], 0), false) :
					     e3(L, "IADD", -1, R(r), src(L, &in->ops[3], 0));
	dst(L, r, -1);
}

/* mul.hi/mad.hi/mad.lo of 64 bits, mad.hi of 16 and 32 (.sat) */
static void mulhi(struct lower *L, struct ptype t, bool mad)
{
	const struct ptx_insn *in = L->in;
	bool hi = pl_has_mod(in, ".hi");
	struct w a[2], b[2];
	int r[2] = { -1, -1 }, co;

	if (!pl_want_ops(L, mad ? 4 : 3))
		return;
	for (int k = 0; k < 2; k++) {
		a[k] = src(L, &in->ops[1], k);
		b[k] = src(L, &in->ops[2], k);
	}
	if (t.bits == 64) {
		mul64(L, a, b, hi, t.sign, r);
		if (mad) {
			r[0] = addc_w(L, R(r[0]), src(L, &in->ops[3], 0), -1, &co);
			r[1] = addc_w(L, R(r[1]), src(L, &in->ops[3], 1), co, NULL);
		}
		return dst(L, r[0], r[1]);
	}
	if (t.bits == 16) {
		int x = e3(L, "IMUL", -1, R(ext(L, a[0], 16, t.sign)), R(ext(L, b[0], 16, t.sign)));

		r[0] = e3(L, "SHR.U32", -1, R(x), K(16));
	} else {
		r[0] = e3(L, t.sign ? "IMUL.HI.S32" : "IMUL.HI.U32", -1, a[0], b[0]);
	}
	if (pl_has_mod(in, ".sat"))
		r[0] = add_sat(L, R(r[0]), src(L, &in->ops[3], 0), false);
	else
		r[0] = e3(L, "IADD", -1, R(r[0]), src(L, &in->ops[3], 0));
	dst(L, r[0], -1);
}

/* add/sub/min/max[.relu] on u16x2/s16x2 */
static void x2(struct lower *L, const char *op, bool sign)
{
	const struct ptx_insn *in = L->in;
	struct w a = src(L, &in->ops[1], 0), b = src(L, &in->ops[2], 0);
	int h[2];

	for (int i = 0; i < 2; i++) {
		int x = field(L, a, i, 16, sign), y = field(L, b, i, 16, sign);

		if (!strcmp(op, "add") || !strcmp(op, "sub"))
			h[i] = e3(L, !strcmp(op, "add") ? "IADD" : "ISUB", -1, R(x), R(y));
		else
			h[i] = e3(L, !strcmp(op, "min") ? (sign ? "IMNMX.MIN.S32" : "IMNMX.MIN.U32") :
				  (sign ? "IMNMX.MAX.S32" : "IMNMX.MAX.U32"), -1, R(x), R(y));
		if (pl_has_mod(in, ".relu"))
			h[i] = e3(L, "IMNMX.MAX.S32", -1, R(h[i]), K(0));
	}
	dst(L, e3(L, "LOP.OR", -1, R(e3(L, "LOP.AND", -1, R(h[0]), K(0xffff))),
		  R(e3(L, "SHL", -1, R(h[1]), K(16)))), -1);
}

/* %lanemask_eq/lt/le/gt/ge */
static bool lanemask(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *s;
	int lane, eq, lt, r;

	if (strcmp(in->op, "mov") || in->nops != 2 || in->ops[1].kind != PTX_O_SYM ||
	    strncmp(in->ops[1].sym, "%lanemask_", 10))
		return false;
	s = in->ops[1].sym + 10;
	lane = nw(L);
	{
		struct ptx_vinsn *v = pl_emit(L, "S2R");

		pl_o_def(v, lane, 0, false);
		pl_o_text(v, "SR_LANEID");
	}
	eq = e3(L, "SHL", -1, K(1), R(lane));
	lt = e3(L, "IADD", -1, R(eq), K(0xffffffffu));
	if (!strcmp(s, "eq"))
		r = eq;
	else if (!strcmp(s, "lt"))
		r = lt;
	else if (!strcmp(s, "le"))
		r = e3(L, "LOP.OR", -1, R(lt), R(eq));
	else if (!strcmp(s, "gt"))
		r = e3(L, "LOP.XOR", -1, R(e3(L, "LOP.OR", -1, R(lt), R(eq))), K(0xffffffffu));
	else if (!strcmp(s, "ge"))
		r = e3(L, "LOP.XOR", -1, R(lt), K(0xffffffffu));
	else
		return pl_lerr(L, "unknown name '%s'", in->ops[1].sym), true;
	dst(L, r, -1);
	return true;
}

bool pl_int_hook(struct lower *L)
{
	const struct ptx_insn *in = L->in;
	const char *op = in->op;
	struct ptype t = pl_type_of(in, 0);
	bool x2t = pl_has_mod(in, ".u16x2") || pl_has_mod(in, ".s16x2");

	if (lanemask(L))
		return true;
	if (in->nops && in->ops[0].has_p && strcmp(op, "lop3"))
		return false;
	if (!strcmp(op, "addc") || !strcmp(op, "subc") || !strcmp(op, "madc") ||
	    ((!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mad")) &&
	     pl_has_mod(in, ".cc"))) {
		carry_op(L, op, t);
	} else if (x2t && (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "min") ||
			   !strcmp(op, "max"))) {
		if (pl_want_ops(L, 3))
			x2(L, op, pl_has_mod(in, ".s16x2"));
	} else if ((!strcmp(op, "add") || !strcmp(op, "sub")) && pl_has_mod(in, ".sat") &&
		   t.sign && t.bits == 32 && !t.flt) {
		if (pl_want_ops(L, 3))
			dst(L, add_sat(L, src(L, &in->ops[1], 0), src(L, &in->ops[2], 0),
				       !strcmp(op, "sub")), -1);
	} else if ((!strcmp(op, "min") || !strcmp(op, "max")) && !t.flt && t.bits == 32 &&
		   pl_has_mod(in, ".relu")) {
		if (pl_want_ops(L, 3)) {
			int r = e3(L, !strcmp(op, "min") ? "IMNMX.MIN.S32" : "IMNMX.MAX.S32", -1,
				   src(L, &in->ops[1], 0), src(L, &in->ops[2], 0));

			dst(L, e3(L, "IMNMX.MAX.S32", -1, R(r), K(0)), -1);
		}
	} else if ((!strcmp(op, "min") || !strcmp(op, "max")) && !t.flt && t.bits == 64) {
		struct w a[2], b[2];
		int p;

		if (!pl_want_ops(L, 3))
			return true;
		for (int k = 0; k < 2; k++) {
			a[k] = src(L, &in->ops[1], k);
			b[k] = src(L, &in->ops[2], k);
		}
		p = lt64(L, a, b, t.sign, !strcmp(op, "max"));
		dst(L, sel(L, -1, reg(L, a[0]), b[0], p, false),
		    sel(L, -1, reg(L, a[1]), b[1], p, false));
	} else if (!strcmp(op, "abs") && !t.flt && t.bits == 16) {
		if (pl_want_ops(L, 2)) {
			int x = ext(L, src(L, &in->ops[1], 0), 16, true);
			int s = e3(L, "SHR.S32", -1, R(x), K(31));

			dst(L, e3(L, "ISUB", -1, R(e3(L, "LOP.XOR", -1, R(x), R(s))), R(s)), -1);
		}
	} else if (!strcmp(op, "mul") && !t.flt && t.bits == 64 && pl_has_mod(in, ".hi")) {
		mulhi(L, t, false);
	} else if (!strcmp(op, "mad") && !t.flt &&
		   ((t.bits == 64 && !pl_has_mod(in, ".wide")) ||
		    (t.bits <= 32 && pl_has_mod(in, ".hi")))) {
		mulhi(L, t, true);
	} else if (!strcmp(op, "sad")) {
		sad(L, t);
	} else if (!strcmp(op, "mul24") || !strcmp(op, "mad24")) {
		mul24(L, t, !strcmp(op, "mad24"));
	} else if (!strcmp(op, "brev")) {
		if (pl_want_ops(L, 2)) {
			if (t.bits == 64)
				dst(L, brev32(L, src(L, &in->ops[1], 1)), brev32(L, src(L, &in->ops[1], 0)));
			else
				dst(L, brev32(L, src(L, &in->ops[1], 0)), -1);
		}
	} else if (!strcmp(op, "bmsk") || !strcmp(op, "szext")) {
		bmsk_szext(L, !strcmp(op, "bmsk"), t);
	} else if (!strcmp(op, "fns")) {
		fns(L);
	} else if (!strcmp(op, "cnot")) {
		if (pl_want_ops(L, 2)) {
			struct w lo = src(L, &in->ops[1], 0);
			int x = t.bits == 16 ? e3(L, "LOP.AND", -1, lo, K(0xffff)) :
				t.bits == 64 ? e3(L, "LOP.OR", -1, lo, src(L, &in->ops[1], 1)) :
					       reg(L, lo).v;
			int r = x < 0 ? mov1(L, K(1)) :
					bit_of(L, pc(L, "ISETP.EQ.U32", R(x), K(0)));

			dst(L, r, t.bits == 64 ? mov1(L, K(0)) : -1);
		}
	} else if (!strcmp(op, "lop3")) {
		lop3(L);
	} else if (!strcmp(op, "shf")) {
		shf(L);
	} else if (!strcmp(op, "prmt")) {
		prmt(L);
	} else if (!strcmp(op, "dp4a") || !strcmp(op, "dp2a")) {
		dp(L, !strcmp(op, "dp4a"));
	} else {
		return false;
	}
	return true;
}
