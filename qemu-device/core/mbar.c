/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mbarrier unit: PTX mbarrier objects (seed 001) in CTA shared memory.
 *
 * The object is the 64-bit word whose format uapi/vgpu_hw.h documents
 * (pending, expected, tx-count, phase mod 4, valid).  Beside each live
 * object the unit keeps its full phase number and whether a wait has
 * returned true since its last phase completed (struct vgpu_mbar_meta),
 * and a shadow bit per 8 bytes of shared memory marks live objects.
 *
 * Each warp-instruction applies its lanes' operations to an object as one
 * atomic update (a converged warp's 32 arrivals are one update of 32, as
 * seed 003 describes).  A phase completes exactly when pending and
 * tx-count are both zero; the phase advances and pending is reloaded from
 * expected in the same step, and warps suspended in MBAR.TRY_WAIT on the
 * object wake.
 *
 * With the launch's sanitizer (VGPU_LAUNCH_SANITIZE) every behaviour the
 * PTX text calls undefined raises an exception naming the object's address
 * and state.  Without it the operations act on the word as encoded:
 *   - an uninitialised or invalidated word is used as it reads;
 *   - counts are taken modulo their field widths, except that an arrive
 *     larger than the pending count leaves pending at 0;
 *   - a token is compared with the word's phase modulo 4 (equal: the
 *     current phase, false; otherwise complete, true);
 *   - a .NOCOMPLETE arrive that reaches zero completes the phase;
 *   - waits on another CTA's object read that object.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_priv.h"

#define COUNT_MAX VGPU_MBAR_COUNT_MAX
#define TX_MAX VGPU_MBAR_TX_MAX

struct mbar {
	uint32_t pending;
	uint32_t expected;
	int32_t tx;
	uint32_t phase; /* modulo 4 */
	bool valid;
};

static uint64_t word_get(const struct vgpu_cta *t, uint32_t off)
{
	uint64_t v;

	memcpy(&v, t->smem + off, 8);
	return v;
}

static struct mbar decode(uint64_t v)
{
	struct mbar m;
	uint32_t tx = (uint32_t)((v >> VGPU_MBAR_TX_SHIFT) & VGPU_MBAR_TX_MASK);

	m.pending = (uint32_t)((v >> VGPU_MBAR_PENDING_SHIFT) & VGPU_MBAR_COUNT_MASK);
	m.expected = (uint32_t)((v >> VGPU_MBAR_EXPECTED_SHIFT) & VGPU_MBAR_COUNT_MASK);
	m.tx = (int32_t)(tx << 11) >> 11; /* sign-extend 21 bits */
	m.phase = (uint32_t)((v >> VGPU_MBAR_PHASE_SHIFT) & VGPU_MBAR_PHASE_MASK);
	m.valid = (v >> VGPU_MBAR_VALID_SHIFT) & 1;
	return m;
}

static uint64_t encode(const struct mbar *m)
{
	return ((uint64_t)m->pending & VGPU_MBAR_COUNT_MASK) << VGPU_MBAR_PENDING_SHIFT |
	       ((uint64_t)m->expected & VGPU_MBAR_COUNT_MASK) << VGPU_MBAR_EXPECTED_SHIFT |
	       ((uint64_t)(uint32_t)m->tx & VGPU_MBAR_TX_MASK) << VGPU_MBAR_TX_SHIFT |
	       ((uint64_t)m->phase & VGPU_MBAR_PHASE_MASK) << VGPU_MBAR_PHASE_SHIFT |
	       (uint64_t)m->valid << VGPU_MBAR_VALID_SHIFT;
}

static void word_put(struct vgpu_cta *t, uint32_t off, const struct mbar *m)
{
	uint64_t v = encode(m);

	memcpy(t->smem + off, &v, 8);
}

/* ---- side state ---- */

static struct vgpu_mbar_meta *meta_find(const struct vgpu_cta *t, uint32_t off)
{
	for (uint32_t i = 0; i < t->nmbars; i++)
		if (t->mbars[i].off == off)
			return &t->mbars[i];
	return NULL;
}

/* The side state of @off, created for a word used without MBAR.INIT. */
static struct vgpu_mbar_meta *meta_get(struct vgpu_cta *t, uint32_t off)
{
	struct vgpu_mbar_meta *m = meta_find(t, off);

	if (m)
		return m;
	if (!vgpu_grow((void **)&t->mbars, t->nmbars, &t->mbars_cap, sizeof(*m)))
		return NULL;
	m = &t->mbars[t->nmbars++];
	m->off = off;
	m->phase = decode(word_get(t, off)).phase;
	m->need_wait = false;
	return m;
}

static void meta_drop(struct vgpu_cta *t, uint32_t off)
{
	struct vgpu_mbar_meta *m = meta_find(t, off);

	if (m)
		*m = t->mbars[--t->nmbars];
}

static void shadow_set(struct vgpu_cta *t, uint32_t off, bool live)
{
	uint32_t bit = off / 8;

	if (live)
		t->shadow[bit / 8] |= (uint8_t)(1u << (bit % 8));
	else
		t->shadow[bit / 8] &= (uint8_t)~(1u << (bit % 8));
}

static bool shadow_live(const struct vgpu_cta *t, uint32_t off)
{
	uint32_t bit = off / 8;

	return (t->shadow[bit / 8] >> (bit % 8)) & 1;
}

bool vgpu_mbar_check_access(struct vgpu_cta *c, struct vgpu_warp *w,
			    uint32_t em, const struct vgpu_cta *t, uint32_t off,
			    uint32_t size)
{
	for (uint32_t o = off & ~7u; o < off + size; o += 8) {
		if (!shadow_live(t, o))
			continue;
		vgpu_raise(c, w, VGPU_EXC_MBAR_ACCESS, em,
			   "%u-byte access at shared 0x%x touches the live mbarrier at 0x%x",
			   size, off, o);
		vgpu_mbar_record(t, o, c->sm->exc);
		c->sm->exc->addr = off;
		return false;
	}
	return true;
}

/* ---- exception records ---- */

void vgpu_mbar_record(const struct vgpu_cta *t, uint32_t off,
		      struct vgpu_exception_record *e)
{
	const struct vgpu_mbar_meta *m = meta_find(t, off);
	uint64_t v = word_get(t, off);

	e->addr = off;
	e->info[0] = (uint32_t)v;
	e->info[1] = (uint32_t)(v >> 32);
	e->info[2] = m ? m->phase : decode(v).phase;
}

uint32_t vgpu_mbar_phase(const struct vgpu_cta *t, uint32_t off)
{
	const struct vgpu_mbar_meta *m = meta_find(t, off);

	return m ? m->phase : decode(word_get(t, off)).phase;
}

int vgpu_mbar_describe_wait(const struct vgpu_cta *c, uint32_t warp,
			    const char *verb, uint8_t cta, uint32_t off,
			    char *buf, size_t len)
{
	const struct vgpu_cta *t = c->sm->ctas[cta];
	struct mbar m = decode(word_get(t, off));

	return snprintf(buf, len,
			" warp %u %s on mbarrier 0x%x (phase %u, pending %u of %u, tx %d);",
			warp, verb, off, m.phase, m.pending, m.expected, m.tx);
}

/* Raise @code about the object at (@t, @off). */
__attribute__((format(printf, 7, 8))) static bool
mbar_fail(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em, uint32_t code,
	  const struct vgpu_cta *t, uint32_t off, const char *fmt, ...)
{
	char msg[VGPU_EXC_MSG_LEN];
	struct mbar m = decode(word_get(t, off));
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	n = (size_t)vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n,
			 " [mbarrier 0x%x%s: %s, phase %u, pending %u of %u, tx %d]",
			 off, t == c ? "" : " of another CTA",
			 m.valid ? "valid" : "not valid", m.phase, m.pending,
			 m.expected, m.tx);
	vgpu_raise(c, w, code, em, "%s", msg);
	vgpu_mbar_record(t, off, c->sm->exc);
	return false;
}

/* ---- phases ---- */

/* Release the lanes parked in MBAR.TRY_WAIT on (@t, @off). */
static void wake_waiters(struct vgpu_cta *t, uint32_t off)
{
	for (uint32_t i = 0; i < t->nwarps; i++) {
		struct vgpu_warp *w = &t->warps[i];

		if (w->parked && (w->park_any || (w->wait_off == off &&
						  t->sm->ctas[w->wait_cta] == t)))
			vgpu_warp_wake(t, w);
	}
}

/* Store @m; complete the phase if it is done. */
static void mbar_update(struct vgpu_cta *t, uint32_t off, struct mbar *m,
			struct vgpu_mbar_meta *meta)
{
	bool done = m->pending == 0 && m->tx == 0;

	if (done) {
		m->phase = (m->phase + 1) & VGPU_MBAR_PHASE_MASK;
		m->pending = m->expected;
		if (meta) {
			meta->phase++;
			meta->need_wait = true;
		}
	}
	word_put(t, off, m);
	if (done) {
		struct vgpu_sm *sm = t->sm;

		if (vgpu_tracing(t))
			sm->wake_flow = vgpu_trace_complete(t, VGPU_TR_MBAR_COMPLETE,
							    meta ? meta->phase - 1 :
							    ((m->phase - 1) & VGPU_MBAR_PHASE_MASK),
							    off, m->expected, t->rank);
		else
			sm->wake_flow = 0;
		wake_waiters(t, off);
		sm->wake_flow = 0;
	}
}

/*
 * Find the object for shared address @addr: alignment, window, cluster
 * rank.  @local_only: the operation is a wait (local objects only).
 */
static __attribute__((noinline)) struct vgpu_cta *
mbar_at_slow(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em, uint32_t addr,
	     bool local_only, uint32_t *off)
{
	struct vgpu_cta *t;

	if (addr % 8) {
		vgpu_raise(c, w, VGPU_EXC_MISALIGNED, em,
			   "mbarrier address 0x%x is not 8-byte aligned", addr);
		c->sm->exc->addr = addr;
		return NULL;
	}
	t = vgpu_smem_resolve(c, w, em, addr, 8, off);
	if (t && t != c && local_only && c->sm->sanitize) {
		mbar_fail(c, w, em, VGPU_EXC_MBAR_REMOTE_WAIT, t, *off,
			  "waits are only valid on the CTA's own mbarriers (address 0x%x)",
			  addr);
		return NULL;
	}
	return t;
}

/* The common case inline: an aligned object of the CTA's own. */
static inline struct vgpu_cta *mbar_at(struct vgpu_cta *c, struct vgpu_warp *w,
				       uint32_t em, uint32_t addr, bool local_only,
				       uint32_t *off)
{
	if (!(addr % 8) && !(addr & VGPU_SMEM_CLUSTER_BIT) &&
	    (uint64_t)addr + 8 <= c->smem_size) {
		*off = addr;
		return c;
	}
	return mbar_at_slow(c, w, em, addr, local_only, off);
}

static bool check_valid(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			struct vgpu_cta *t, uint32_t off, const char *op)
{
	if (!c->sm->sanitize || decode(word_get(t, off)).valid)
		return true;
	return mbar_fail(c, w, em, VGPU_EXC_MBAR_UNINIT, t, off,
			 "%s on an uninitialised or invalidated mbarrier", op);
}

/* ---- per-lane operands ---- */

/* Value of the count/tx operand (rb or imm32) for @lane. */
static uint32_t operand(struct vgpu_warp *w, const struct vgpu_dinsn *d,
			uint32_t lane)
{
	if (d->stype == VGPU_ST_I || d->stype == VGPU_ST_RI)
		return d->imm;
	if (d->stype == VGPU_ST_R)
		return vgpu_reg(w, d->rb)[lane];
	return 1;
}

/*
 * The lanes of @em whose address register (row @row) holds the same value
 * as the lowest one; they are removed from *@rest.
 */
static uint32_t same_addr(struct vgpu_warp *w, uint16_t row, uint32_t *rest,
			  uint32_t *addr)
{
	const uint32_t *r = vgpu_reg(w, row);
	uint32_t group = 0;

	*addr = r[__builtin_ctz(*rest)];
	if (vgpu_row_uniform(w, row, *rest)) {
		group = *rest;
		*rest = 0;
		return group;
	}
	VGPU_FOR_LANES(*rest, l)
		if (r[l] == *addr)
			group |= 1u << l;
	*rest &= ~group;
	return group;
}

/* ---- instructions ---- */

static enum vgpu_xres exec_init(struct vgpu_cta *c, struct vgpu_warp *w,
				const struct vgpu_dinsn *d, uint32_t em)
{
	uint32_t rest = em;

	while (rest) {
		uint32_t addr, off, lanes = same_addr(w, d->ra, &rest, &addr);
		uint32_t count = operand(w, d, (uint32_t)__builtin_ctz(lanes));
		struct vgpu_cta *t = mbar_at(c, w, lanes, addr, true, &off);
		struct mbar m = { 0 };
		struct vgpu_mbar_meta *meta;

		if (!t)
			return VGPU_X_EXC;
		if (c->sm->sanitize) {
			if (decode(word_get(t, off)).valid || shadow_live(t, off))
				return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_REINIT, t, off,
						 "MBAR.INIT of a live mbarrier"),
				       VGPU_X_EXC;
			if (count < 1 || count > COUNT_MAX)
				return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_RANGE, t, off,
						 "MBAR.INIT count %u is outside 1..%u",
						 count, COUNT_MAX),
				       VGPU_X_EXC;
		}
		m.pending = m.expected = count & COUNT_MAX;
		m.valid = true;
		word_put(t, off, &m);
		meta = meta_get(t, off);
		if (meta) {
			meta->phase = 0;
			meta->need_wait = false;
		}
		shadow_set(t, off, true);
	}
	return VGPU_X_NEXT;
}

static enum vgpu_xres exec_inval(struct vgpu_cta *c, struct vgpu_warp *w,
				 const struct vgpu_dinsn *d, uint32_t em)
{
	uint32_t rest = em;

	while (rest) {
		uint32_t addr, off, lanes = same_addr(w, d->ra, &rest, &addr);
		struct vgpu_cta *t = mbar_at(c, w, lanes, addr, true, &off);
		uint64_t zero = 0;

		if (!t || !check_valid(c, w, lanes, t, off, "MBAR.INVAL"))
			return VGPU_X_EXC;
		memcpy(t->smem + off, &zero, 8);
		meta_drop(t, off);
		shadow_set(t, off, false);
	}
	return VGPU_X_NEXT;
}

static uint64_t make_token(uint32_t pending, uint32_t phase, bool nocomplete)
{
	return VGPU_TOKEN_MARK | (nocomplete ? VGPU_TOKEN_NOCOMPLETE : 0) |
	       (uint64_t)phase << VGPU_TOKEN_PHASE_SHIFT | (pending & COUNT_MAX);
}

/*
 * MBAR.ARRIVE / MBAR.ARRIVE_DROP and their .EXPECT_TX / .NOCOMPLETE forms.
 * Per object: expect-tx (the sum of the lanes' tx counts), then the drop
 * of the expected count, then the arrive-on of every lane, as one update.
 */
static enum vgpu_xres exec_arrive(struct vgpu_cta *c, struct vgpu_warp *w,
				  const struct vgpu_dinsn *d, uint32_t em)
{
	bool drop = vgpu_isa_table[d->id].optype == VGPU_OPT_MBAR_ARRIVE_DROP;
	unsigned kind = d->mod[0];
	bool san = c->sm->sanitize;
	uint32_t rest = em;

	while (rest) {
		uint32_t addr, off, lanes = same_addr(w, d->ra, &rest, &addr);
		struct vgpu_cta *t = mbar_at(c, w, lanes, addr, false, &off);
		uint64_t arrivals = 0, tx = 0;
		struct vgpu_mbar_meta *meta;
		struct mbar m;
		uint32_t before, phase;

		if (!t || !check_valid(c, w, lanes, t, off, "MBAR.ARRIVE"))
			return VGPU_X_EXC;
		m = decode(word_get(t, off));
		meta = meta_get(t, off);
		VGPU_FOR_LANES(lanes, l) {
			uint32_t v = operand(w, d, l);

			if (kind == VGPU_MOD_ARVKIND_EXPECT_TX) {
				tx += v;
				arrivals++;
			} else {
				if (san && (v < 1 || v > COUNT_MAX))
					return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_RANGE, t,
							 off, "arrive count %u is outside 1..%u",
							 v, COUNT_MAX),
					       VGPU_X_EXC;
				arrivals += v;
			}
		}
		if (san && meta && meta->need_wait)
			return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_PHASE_ORDER, t, off,
					 "arrive in phase %u before any wait on phase %u returned true",
					 meta->phase, meta->phase - 1),
			       VGPU_X_EXC;
		if (san && (int64_t)m.tx + (int64_t)tx > TX_MAX)
			return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_RANGE, t, off,
					 "expect_tx of %llu takes tx-count past %d",
					 (unsigned long long)tx, TX_MAX),
			       VGPU_X_EXC;
		if (san && drop && arrivals > m.expected)
			return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_RANGE, t, off,
					 "arrive_drop of %llu exceeds the expected count",
					 (unsigned long long)arrivals),
			       VGPU_X_EXC;
		if (san && arrivals > m.pending)
			return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_RANGE, t, off,
					 "%llu arrivals exceed the %u pending",
					 (unsigned long long)arrivals, m.pending),
			       VGPU_X_EXC;
		before = m.pending;
		phase = meta ? meta->phase : m.phase;
		m.tx = (int32_t)((uint32_t)m.tx + (uint32_t)tx);
		m.tx = (int32_t)((uint32_t)m.tx << 11) >> 11;
		if (drop)
			m.expected = (m.expected - (uint32_t)arrivals) & COUNT_MAX;
		m.pending = arrivals >= m.pending ? 0 : m.pending - (uint32_t)arrivals;
		if (san && kind == VGPU_MOD_ARVKIND_NOCOMPLETE && !m.pending && !m.tx)
			return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_NOCOMPLETE, t, off,
					 ".NOCOMPLETE arrive of %llu would complete phase %u",
					 (unsigned long long)arrivals, phase),
			       VGPU_X_EXC;
		VGPU_TRACE(c, w, .type = VGPU_TR_MBAR_ARRIVE, .addr = off,
			   .count = (uint32_t)arrivals, .expected = m.pending,
			   .id = phase);
		mbar_update(t, off, &m, meta);
		if (t == c) { /* a remote arrive returns no state */
			uint64_t tok = make_token(before, phase,
						  kind == VGPU_MOD_ARVKIND_NOCOMPLETE);
			uint32_t *lo = vgpu_reg(w, d->rd), *hi = vgpu_reg(w, d->rd + 1);

			VGPU_FOR_LANES(lanes, l) {
				lo[l] = (uint32_t)tok;
				hi[l] = (uint32_t)(tok >> 32);
			}
		}
	}
	return VGPU_X_NEXT;
}

/* MBAR.EXPECT_TX / MBAR.COMPLETE_TX */
static enum vgpu_xres exec_tx(struct vgpu_cta *c, struct vgpu_warp *w,
			      const struct vgpu_dinsn *d, uint32_t em)
{
	bool complete = vgpu_isa_table[d->id].optype == VGPU_OPT_MBAR_COMPLETE_TX;
	uint32_t rest = em;

	while (rest) {
		uint32_t addr, off, lanes = same_addr(w, d->ra, &rest, &addr);
		struct vgpu_cta *t = mbar_at(c, w, lanes, addr, false, &off);
		int64_t sum = 0, nt;
		struct mbar m;

		if (!t || !check_valid(c, w, lanes, t, off,
				       complete ? "MBAR.COMPLETE_TX" : "MBAR.EXPECT_TX"))
			return VGPU_X_EXC;
		VGPU_FOR_LANES(lanes, l)
			sum += operand(w, d, l);
		m = decode(word_get(t, off));
		nt = m.tx + (complete ? -sum : sum);
		if (c->sm->sanitize && (nt > TX_MAX || nt < -TX_MAX))
			return mbar_fail(c, w, lanes, VGPU_EXC_MBAR_RANGE, t, off,
					 "tx-count %d %c %lld leaves its range",
					 m.tx, complete ? '-' : '+', (long long)sum),
			       VGPU_X_EXC;
		m.tx = (int32_t)((uint32_t)nt << 11) >> 11;
		mbar_update(t, off, &m, meta_find(t, off));
	}
	return VGPU_X_NEXT;
}

/*
 * Has the phase a lane names completed?  @tok: a token, or the parity for
 * the .PARITY forms.
 */
static int phase_done(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t lane_mask,
		      struct vgpu_cta *t, uint32_t off, bool parity, uint64_t tok,
		      struct vgpu_mbar_meta **metap)
{
	struct mbar m = decode(word_get(t, off));
	struct vgpu_mbar_meta *meta = meta_find(t, off);
	uint32_t cur = meta ? meta->phase : m.phase;

	*metap = meta;
	if (parity) {
		if (c->sm->sanitize && tok > 1)
			return mbar_fail(c, w, lane_mask, VGPU_EXC_MBAR_BAD_TOKEN, t, off,
					 "phase parity %llu is not 0 or 1",
					 (unsigned long long)tok),
			       -1;
		return (tok & 1) != (cur & 1);
	}
	if (c->sm->sanitize) {
		uint32_t tp = (uint32_t)(tok >> VGPU_TOKEN_PHASE_SHIFT);

		if (!(tok & VGPU_TOKEN_MARK) || (tp != cur && tp != cur - 1))
			return mbar_fail(c, w, lane_mask, VGPU_EXC_MBAR_BAD_TOKEN, t, off,
					 "token 0x%016llx names phase %u, not the current %u or the preceding one",
					 (unsigned long long)tok, tp, cur),
			       -1;
		return tp != cur;
	}
	/* as the hardware: by the parity of the phase the token names, so a
	 * token two phases old reads as incomplete */
	return ((tok >> VGPU_TOKEN_PHASE_SHIFT) & 1) != (m.phase & 1);
}

/*
 * MBAR.TEST_WAIT / MBAR.TRY_WAIT.  TRY_WAIT suspends the warp while any of
 * its lanes' phases is incomplete; it runs again when the object completes
 * a phase, or says false once its time limit has passed.
 */
static enum vgpu_xres exec_wait(struct vgpu_cta *c, struct vgpu_warp *w,
				const struct vgpu_dinsn *d, uint32_t em)
{
	bool parity = d->mod[0] == VGPU_MOD_WAITKIND_PARITY;
	bool try = vgpu_isa_table[d->id].optype == VGPU_OPT_MBAR_TRY_WAIT;
	const uint32_t *ra = vgpu_reg(w, d->ra);
	const uint32_t *tlo = vgpu_reg(w, d->rc), *thi = vgpu_reg(w, d->rc + 1);
	/* the parity is an immediate in TEST_WAIT.PARITY's I form and in
	 * TRY_WAIT.PARITY's RI form, else in rc; imm32 is TRY_WAIT's hint */
	bool parity_imm = try ? d->stype == VGPU_ST_RI : d->stype == VGPU_ST_I;
	uint32_t result = 0, wait_off = 0, lanes = em;
	struct vgpu_cta *wait_t = NULL;

	/* every lane names the same object and token (the common case): the
	 * first lane answers for all */
	if (em & (em - 1) && vgpu_row_uniform(w, d->ra, em) &&
	    (parity ? parity_imm || vgpu_row_uniform(w, d->rc, em) :
		      vgpu_row_uniform(w, d->rc, em) &&
			      vgpu_row_uniform(w, d->rc + 1, em)))
		lanes = em & -em;
	VGPU_FOR_LANES(lanes, l) {
		uint32_t off;
		struct vgpu_cta *t = mbar_at(c, w, 1u << l, ra[l], true, &off);
		struct vgpu_mbar_meta *meta;
		uint64_t tok;
		int done;

		if (!t || !check_valid(c, w, 1u << l, t, off,
				       try ? "MBAR.TRY_WAIT" : "MBAR.TEST_WAIT"))
			return VGPU_X_EXC;
		if (parity)
			tok = parity_imm ? d->imm : tlo[l];
		else
			tok = (uint64_t)thi[l] << 32 | tlo[l];
		done = phase_done(c, w, 1u << l, t, off, parity, tok, &meta);
		if (done < 0)
			return VGPU_X_EXC;
		if (done) {
			result |= 1u << l;
			if (meta)
				meta->need_wait = false;
		} else if (!wait_t) {
			wait_t = t;
			wait_off = off;
		}
	}
	if (lanes != em && result)
		result = em;
	if (try && result != em && !w->try_timed_out) {
		uint32_t hint = d->stype == VGPU_ST_I ? d->imm :
				d->stype == VGPU_ST_R ? vgpu_uniform(w, d->rb, em) :
							c->sm->cfg.try_wait_limit;

		vgpu_warp_park(c, w, (uint8_t)wait_t->rank, wait_off,
			       c->sm->clock + (hint ? hint : 1));
		return VGPU_X_PARKED;
	}
	w->try_timed_out = false;
	if (vgpu_tracing(c)) {
		uint32_t a = ra[__builtin_ctz(em)], poff;
		struct vgpu_cta *pt = vgpu_smem_resolve(c, w, em, a, 8, &poff);

		VGPU_TRACE(c, w, .type = VGPU_TR_MBAR_POLL, .addr = poff,
			   .id = pt ? vgpu_mbar_phase(pt, poff) : 0,
			   .count = vgpu_popcount(result),
			   .expected = vgpu_popcount(em));
	}
	if (result != em)
		vgpu_warp_wait_failed(c, w, (uint8_t)wait_t->rank, wait_off, em);
	if (d->pu != VGPU_PT)
		w->pred[d->pu] = (w->pred[d->pu] & ~em) | result;
	return VGPU_X_NEXT;
}

static enum vgpu_xres exec_pending_count(struct vgpu_cta *c, struct vgpu_warp *w,
					 const struct vgpu_dinsn *d, uint32_t em)
{
	const uint32_t *tlo = vgpu_reg(w, d->rc), *thi = vgpu_reg(w, d->rc + 1);
	uint32_t *rd = vgpu_reg(w, d->rd);

	VGPU_FOR_LANES(em, l) {
		if (c->sm->sanitize && (!(thi[l] & (1u << 31)) || !(thi[l] & (1u << 29)))) {
			vgpu_raise(c, w, VGPU_EXC_MBAR_BAD_TOKEN, 1u << l,
				   "MBAR.PENDING_COUNT of 0x%08x%08x, which is not a .NOCOMPLETE token",
				   thi[l], tlo[l]);
			return VGPU_X_EXC;
		}
		rd[l] = tlo[l] & COUNT_MAX;
	}
	return VGPU_X_NEXT;
}

/* ---- asynchronous updates (the copy engine) ---- */

bool vgpu_mbar_async_arrive(struct vgpu_cta *t, uint32_t off, uint32_t count)
{
	struct mbar m = decode(word_get(t, off));

	if (t->sm->sanitize && (!m.valid || count > m.pending))
		return false;
	m.pending = count >= m.pending ? 0 : m.pending - count;
	VGPU_TRACE(t, NULL, .type = VGPU_TR_MBAR_ARRIVE, .addr = off,
		   .count = count, .expected = m.pending,
		   .addr2 = t->sm->copy_flow, .id = vgpu_mbar_phase(t, off));
	mbar_update(t, off, &m, meta_find(t, off));
	return true;
}

bool vgpu_mbar_async_complete_tx(struct vgpu_cta *t, uint32_t off, uint32_t bytes)
{
	struct mbar m = decode(word_get(t, off));
	int64_t nt = (int64_t)m.tx - bytes;

	if (t->sm->sanitize && (!m.valid || nt < -TX_MAX))
		return false;
	m.tx = (int32_t)((uint32_t)nt << 11) >> 11;
	mbar_update(t, off, &m, meta_find(t, off));
	return true;
}

/* cp.async.mbarrier.arrive without .noinc: pending += n now. */
bool vgpu_mbar_pending_inc(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			   struct vgpu_cta *t, uint32_t off, uint32_t n)
{
	struct mbar m = decode(word_get(t, off));

	if (c->sm->sanitize && m.pending + n > COUNT_MAX)
		return mbar_fail(c, w, em, VGPU_EXC_MBAR_OVERFLOW, t, off,
				 "cp.async.mbarrier.arrive takes pending %u + %u past %u",
				 m.pending, n, COUNT_MAX);
	m.pending = (m.pending + n) & COUNT_MAX;
	word_put(t, off, &m);
	return true;
}

/* Address checks shared with the copy engine. */
struct vgpu_cta *vgpu_mbar_at(struct vgpu_cta *c, struct vgpu_warp *w,
			      uint32_t em, uint32_t addr, uint32_t *off)
{
	struct vgpu_cta *t = mbar_at(c, w, em, addr, false, off);

	if (t && !check_valid(c, w, em, t, *off, "asynchronous copy"))
		return NULL;
	return t;
}

VGPU_EXEC_PROTO(vgpu_exec_mbar_init) { return exec_init(c, w, d, em); }
VGPU_EXEC_PROTO(vgpu_exec_mbar_inval) { return exec_inval(c, w, d, em); }
VGPU_EXEC_PROTO(vgpu_exec_mbar_arrive) { return exec_arrive(c, w, d, em); }
VGPU_EXEC_PROTO(vgpu_exec_mbar_tx) { return exec_tx(c, w, d, em); }
VGPU_EXEC_PROTO(vgpu_exec_mbar_wait) { return exec_wait(c, w, d, em); }
VGPU_EXEC_PROTO(vgpu_exec_mbar_pending) { return exec_pending_count(c, w, d, em); }
