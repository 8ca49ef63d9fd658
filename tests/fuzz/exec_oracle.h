/* SPDX-License-Identifier: MIT */
/*
 * Fuzzing oracle for the core executing programs (fuzz_exec.c, `make
 * fuzz`; test_fuzz replays the seeds and tests/fuzz/regressions/exec/).
 *
 * Input: a 16-byte header, then instruction words, then the initial
 * contents of global memory:
 *
 *   byte 0      grid.x - 1 (mod 8)       byte 1   grid.y - 1 (mod 2)
 *   byte 2      cluster.x (mod 3: 0 none, 1, 2; must divide grid.x)
 *   bytes 3-4   block.x - 1 (mod 1024, little-endian)
 *   byte 5      dynamic shared memory, 256-byte units
 *   byte 6      launch flags (raw: unknown bits must be refused)
 *   byte 7      scheduler seed
 *   byte 8      budget: 2000 + 1000 * (byte mod 32) warp-instructions
 *   byte 9      parameters: bit 0 clear: PARAMS pointers to 4 KiB apart
 *               in global memory; set: the 64 bytes after the code, raw;
 *               bits 1-7: preemption every 1 + 37 * (bits) warp-insns
 *               (0: none) for the preempted run below
 *   byte 10     instruction words - 1 (at most what the input holds)
 *   byte 11     entry word index
 *   byte 12     bit 0: well-formed: each instruction word is a recipe for
 *               a valid instruction (wellformed.h), so that every
 *               input runs a program of random real instructions, from
 *               word 0 (byte 11 ignored); clear: the words raw (an
 *               undecodable program is obj's business)
 *   bytes 13-15 padding
 *
 * Global memory is GMEM_SPAN bytes at GMEM_BASE (outside it: a fault),
 * zero but for the input's tail.  The launch runs to completion or to an
 * exception under the budget.  Oracle:
 *   - it ends with 0, or -1 and an exception code the core names;
 *   - the same launch with a timeline (which turns the lock-step of
 *     lockstep.c off) on a fresh SM gives the same end, count and memory;
 *   - the same launch on a fresh SM with fresh memory gives the same end
 *     (code, pc, CTA, warp), the same warp-instruction count and the same
 *     memory; so does the first SM used again after a launch of another
 *     shape (no state left over, buffers grown right), unless the program
 *     reads the SM clock (S2R SR_CLOCKLO/HI): that clock runs on across
 *     launches, as a GPU's %clock does, so such a program may rightly
 *     differ on an SM with a history (a fresh SM starts at the same
 *     time, so the comparison above still holds for it);
 *   - with preemption (byte 9), when the first run completed and the
 *     program is defined and race-free as far as a test can tell (the
 *     same launch with VGPU_LAUNCH_SANITIZE completes too, two other
 *     random interleavings give the same memory, and so does an SM whose
 *     copies land at once): the launch stopped
 *     every N warp-instructions, each stopped cluster saved, restored on
 *     the other SM, completes with the same memory.  A program the sanitizer stops (a stale mbarrier
 *     token, say) is undefined per PTX and may end differently under
 *     another timing of its asynchronous copies, which a preemption's
 *     drain changes: so a preempted run that differs is a failure only
 *     if, under the sanitizer, it does not stop at an undefined mbarrier
 *     use (exec_undefined_preempted).
 * Returns 0, or 1 after a message on stderr.
 */
#ifndef VGPU_EXEC_ORACLE_H
#define VGPU_EXEC_ORACLE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostmem.h"
#include "oracle.h"
#include "wellformed.h"
#include "vgpu_core.h"
#include "vgpu_hw.h"
#include "vgpu_isa.h"

#define EXEC_GMEM_BASE 0x100000000ull
#define EXEC_GMEM_SPAN (64u * 1024u)
#define EXEC_PARAMS 8
#define EXEC_HDR 16

struct exec_result {
	int rc;
	struct vgpu_exception_record exc;
	uint64_t warp_insns;
	uint8_t *mem;
};

struct exec_case {
	struct vgpu_launch l;
	uint8_t params[64];
	const uint8_t *init;
	size_t init_len;
	uint64_t preempt_every;
	bool well_formed; /* header byte 12 bit 0 */
};

static inline void exec_no_event(void *opaque, const struct vgpu_trace_event *ev)
{
	(void)opaque;
	(void)ev;
}

/* Whether the program reads the SM clock (S2R SR_CLOCKLO/HI, SR_GLOBALTIMERLO/HI). */
static inline int exec_reads_clock(const uint8_t *code, uint32_t code_size)
{
	for (uint32_t i = 0; i + 16 <= code_size; i += 16) {
		uint64_t w[2];
		unsigned sr;

		memcpy(w, code + i, 16);
		if (vgpu_isa_decode(w) != VGPU_I_S2R)
			continue;
		sr = (unsigned)vgpu_field_get(w, VGPU_F_SR);
		if (sr == VGPU_SR_CLOCK_LO || sr == VGPU_SR_CLOCK_HI ||
		    sr == VGPU_SR_GLOBALTIMER_LO || sr == VGPU_SR_GLOBALTIMER_HI)
			return 1;
	}
	return 0;
}

/* Decode the input; 0: not a case (too short). */
static inline int exec_parse(const uint8_t *d, size_t n, struct exec_case *c,
			     const uint8_t **code, uint32_t *code_size)
{
	size_t words, avail;

	if (n < EXEC_HDR + 16)
		return 0;
	memset(c, 0, sizeof(*c));
	c->l.grid[0] = 1 + d[0] % 8;
	c->l.grid[1] = 1 + d[1] % 2;
	c->l.grid[2] = 1;
	c->l.cluster[0] = d[2] % 3;
	c->l.block[0] = 1 + ((d[3] | d[4] << 8) % 1024);
	c->l.block[1] = c->l.block[2] = 1;
	c->l.smem_bytes = d[5] * 256u;
	c->l.flags = d[6];
	c->l.seed = d[7];
	c->l.budget = 2000 + 1000u * (d[8] % 32);
	c->preempt_every = (d[9] >> 1) ? 1 + 37u * (d[9] >> 1) : 0;
	avail = (n - EXEC_HDR) / 16;
	words = (size_t)d[10] + 1;
	if (words > avail)
		words = avail;
	*code = d + EXEC_HDR;
	*code_size = (uint32_t)(words * 16);
	c->well_formed = d[12] & 1;
	c->l.entry = c->well_formed ? 0 : (d[11] % words) * 16;
	c->init = d + EXEC_HDR + words * 16;
	c->init_len = n - EXEC_HDR - words * 16;
	if (d[9] & 1) {
		size_t k = c->init_len < sizeof(c->params) ? c->init_len : sizeof(c->params);

		memcpy(c->params, c->init, k);
	} else {
		for (int i = 0; i < EXEC_PARAMS; i++) {
			uint64_t p = EXEC_GMEM_BASE + 4096u * i;

			memcpy(c->params + 8 * i, &p, 8);
		}
	}
	c->l.params = c->params;
	c->l.param_size = sizeof(c->params);
	return 1;
}

/* A fresh memory with the case's initial contents. */
static inline int exec_mem(struct vgpu_hostmem *hm, const struct exec_case *c,
			   uint8_t **buf)
{
	uint64_t base;

	vgpu_hostmem_init(hm, EXEC_GMEM_BASE, EXEC_GMEM_BASE + EXEC_GMEM_SPAN);
	if (vgpu_hostmem_alloc(hm, EXEC_GMEM_SPAN, &base, buf) ||
	    base != EXEC_GMEM_BASE)
		return -1;
	memcpy(*buf, c->init,
	       c->init_len < EXEC_GMEM_SPAN ? c->init_len : EXEC_GMEM_SPAN);
	return 0;
}

/*
 * Clusters [0, n) of @l from @sm, each cluster stopped every
 * ctl.preempt_every warp-instructions saved and resumed on the other SM
 * (as libvgpu's sim does).  Returns as vgpu_sm_run().
 */
static inline int exec_preempted(struct vgpu_sm *sm, struct vgpu_sm *other,
				 const struct vgpu_launch *l, uint32_t n,
				 struct vgpu_exception_record *exc)
{
	uint8_t *state = NULL;
	size_t cap = 0;
	int ret = vgpu_sm_run(sm, l, 0, n, exc);

	while (ret == VGPU_RUN_PREEMPTED) {
		struct vgpu_sm *from = sm;
		uint32_t cluster;
		size_t need;

		sm = other;
		other = from;
		if (!vgpu_sm_preempted(from, &cluster)) {
			ret = vgpu_sm_run(sm, l, cluster, n - cluster, exc);
			continue;
		}
		need = vgpu_sm_save_bytes(from);
		if (need > cap) {
			uint8_t *p = realloc(state, need);

			if (!p) {
				ret = -2;
				break;
			}
			state = p;
			cap = need;
		}
		if (vgpu_sm_save(from, state, cap) != need) {
			fprintf(stderr, "oracle: vgpu_sm_save wrote other than vgpu_sm_save_bytes\n");
			ret = -3;
			break;
		}
		ret = vgpu_sm_resume(sm, l, state, need, exc);
		if (!ret && cluster + 1 < n)
			ret = vgpu_sm_run(sm, l, cluster + 1, n - cluster - 1, exc);
	}
	free(state);
	return ret;
}

/*
 * Run @c on @sm (the whole grid, validated first), memory fresh; with
 * @other, preempted every c->preempt_every warp-instructions and resumed
 * on the other SM each time.  @r->mem is malloc'd.
 */
static inline int exec_run(struct vgpu_sm *sm, struct vgpu_sm *other,
			   const struct exec_case *c, struct exec_result *r)
{
	struct vgpu_launch_ctl ctl = { 0 };
	struct vgpu_launch l = c->l;
	uint32_t n = 1; /* clusters: a cooperative grid is one */
	struct vgpu_sm_stats s0, s1;
	struct vgpu_hostmem hm;
	uint8_t *buf;

	memset(r, 0, sizeof(*r));
	if (exec_mem(&hm, c, &buf))
		return -1;
	l.mem = &vgpu_hostmem_ops;
	l.mem_opaque = &hm;
	l.ctl = &ctl;
	vgpu_sm_get_stats(sm, &s0);
	if (!(l.flags & VGPU_LAUNCH_COOPERATIVE))
		for (int i = 0; i < 3; i++)
			n *= l.grid[i] / (l.cluster[i] ? l.cluster[i] : 1);
	if (other) {
		ctl.preempt_every = c->preempt_every;
		r->rc = exec_preempted(sm, other, &l, n, &r->exc);
	} else {
		r->rc = vgpu_sm_launch(sm, &l, &r->exc);
	}
	vgpu_sm_get_stats(sm, &s1);
	r->warp_insns = s1.warp_insns - s0.warp_insns;
	r->mem = malloc(EXEC_GMEM_SPAN);
	if (r->mem)
		memcpy(r->mem, buf, EXEC_GMEM_SPAN);
	vgpu_hostmem_fini(&hm);
	return r->mem ? 0 : -1;
}

static inline int exec_same(const struct exec_result *a,
			    const struct exec_result *b, const char *what)
{
	if (a->rc != b->rc)
		return ORACLE_FAIL("%s: ended %d, then %d (%s)\n", what, a->rc, b->rc,
				   b->rc ? b->exc.msg : a->exc.msg);
	if (a->rc && (a->exc.code != b->exc.code || a->exc.pc != b->exc.pc ||
		      memcmp(a->exc.cta, b->exc.cta, sizeof(a->exc.cta)) ||
		      a->exc.warp != b->exc.warp))
		return ORACLE_FAIL("%s: exception \"%s\", then \"%s\"\n", what,
				   a->exc.msg, b->exc.msg);
	if (a->warp_insns != b->warp_insns)
		return ORACLE_FAIL("%s: %llu warp-instructions, then %llu\n", what,
				   (unsigned long long)a->warp_insns,
				   (unsigned long long)b->warp_insns);
	if (memcmp(a->mem, b->mem, EXEC_GMEM_SPAN)) {
		size_t i = 0;

		while (a->mem[i] == b->mem[i])
			i++;
		return ORACLE_FAIL("%s: memory differs at +0x%zx\n", what, i);
	}
	return 0;
}

/*
 * @c completes under the sanitizer (no undefined mbarrier or copy use),
 * and under two other random interleavings, and with copies that land at
 * once, it completes with the memory @mem of the first run: its result
 * depends neither on the schedule nor on the copies' timing (a race
 * between warps or CTAs, or with a copy, would make a preempted run
 * differ too).
 */
static inline bool exec_defined(struct vgpu_sm *sm, const struct exec_case *c,
				const uint8_t *mem)
{
	struct exec_case cs = *c;
	struct exec_result rs;
	bool same = true;

	cs.l.flags |= VGPU_LAUNCH_SANITIZE;
	if (exec_run(sm, NULL, &cs, &rs))
		return false;
	free(rs.mem);
	if (rs.rc)
		return false;
	for (int i = 1; i <= 2 && same; i++) {
		cs = *c;
		cs.l.flags |= VGPU_LAUNCH_RANDOM_SCHED;
		cs.l.seed = c->l.seed + 0x9e3779b9u * (uint32_t)i;
		if (exec_run(sm, NULL, &cs, &rs))
			return false;
		same = rs.rc == 0 && !memcmp(rs.mem, mem, EXEC_GMEM_SPAN);
		free(rs.mem);
	}
	if (same) {
		/*
		 * nor on how long copies take: with copies that land at once
		 * (a preemption's drain lands them early too), the same
		 */
		struct vgpu_sm_config fast = { .tma_latency = 1, .tma_bandwidth = 1u << 20 };
		struct vgpu_sm *f = vgpu_sm_new(&fast);

		cs = *c;
		if (!f || exec_run(f, NULL, &cs, &rs)) {
			vgpu_sm_free(f);
			return false;
		}
		same = rs.rc == 0 && !memcmp(rs.mem, mem, EXEC_GMEM_SPAN);
		free(rs.mem);
		vgpu_sm_free(f);
	}
	return same;
}

/*
 * The preempted run of @c, under the sanitizer, stops at an undefined
 * mbarrier use: the preemption's drain landed its copies (and their
 * arrivals) early, and the program then holds a token two phases old, say,
 * which no unpreempted timing showed (found by the fuzzer: a thread's
 * token of phase 0 after copies completed phases 0 and 1 at once).
 */
static inline bool exec_undefined_preempted(struct vgpu_sm *sm, struct vgpu_sm *other,
					    const struct exec_case *c)
{
	struct exec_case cs = *c;
	struct exec_result rs;
	bool undef;

	cs.l.flags |= VGPU_LAUNCH_SANITIZE;
	if (exec_run(sm, other, &cs, &rs))
		return false;
	free(rs.mem);
	undef = rs.rc && rs.exc.code >= VGPU_EXC_MBAR_UNINIT &&
		rs.exc.code <= VGPU_EXC_MBAR_REMOTE_WAIT;
	return undef;
}

static inline int exec_oracle(const uint8_t *data, size_t size)
{
	struct exec_result r1, r2, r3, rp;
	struct vgpu_sm *sm[2];
	struct vgpu_prog *prog = NULL;
	const uint8_t *code;
	struct exec_case c;
	uint32_t code_size;
	uint8_t *copy;
	int bad = 0;

	if (!exec_parse(data, size, &c, &code, &code_size))
		return 0;
	copy = malloc(code_size);
	if (!copy)
		return 0;
	memcpy(copy, code, code_size);
	if (c.well_formed)
		vgpu_wf_program(copy, code_size);
	if (vgpu_prog_load(copy, code_size, &prog)) {
		free(copy);
		return 0; /* the decoder's oracle is obj_oracle's */
	}
	c.l.prog = prog;
	sm[0] = vgpu_sm_new(NULL);
	sm[1] = vgpu_sm_new(NULL);
	if (!sm[0] || !sm[1] || exec_run(sm[0], NULL, &c, &r1)) {
		vgpu_sm_free(sm[0]);
		vgpu_sm_free(sm[1]);
		vgpu_prog_free(prog);
		free(copy);
		return 0;
	}
	if (r1.rc != 0 && r1.rc != -1)
		bad = ORACLE_FAIL("vgpu_sm_launch returned %d\n", r1.rc);
	else if (r1.rc && !strcmp(vgpu_exc_name(r1.exc.code), "unknown exception"))
		bad = ORACLE_FAIL("exception code %u has no name (%s)\n", r1.exc.code,
				  r1.exc.msg);
	else if (r1.rc && !memchr(r1.exc.msg, 0, sizeof(r1.exc.msg)))
		bad = ORACLE_FAIL("exception message not NUL-terminated\n");
	if (!bad && !exec_run(sm[1], NULL, &c, &r2)) {
		bad = exec_same(&r1, &r2, "a fresh SM");
		free(r2.mem);
	}
	if (!bad) {
		/*
		 * A timeline turns the lock-step off (lockstep.c): the round
		 * robin alone ends the same, to the clock, on a fresh SM.
		 */
		struct exec_case traced = c;
		struct vgpu_sm *fresh = vgpu_sm_new(NULL);
		struct exec_result rt;

		traced.l.event = exec_no_event;
		if (fresh && !exec_run(fresh, NULL, &traced, &rt)) {
			bad = exec_same(&r1, &rt, "with a timeline (no lock-step)");
			free(rt.mem);
		}
		vgpu_sm_free(fresh);
	}
	if (!bad) {
		/* another shape on the first SM first: its buffers grow */
		struct exec_case shake = c;
		struct exec_result rs;

		shake.l.block[0] = 1024;
		shake.l.cluster[0] = 0;
		shake.l.smem_bytes = 16384;
		if (!exec_run(sm[0], NULL, &shake, &rs))
			free(rs.mem);
	}
	if (!bad && !exec_reads_clock(copy, code_size) &&
	    !exec_run(sm[0], NULL, &c, &r3)) {
		bad = exec_same(&r1, &r3, "the first SM again, after another launch");
		free(r3.mem);
	}
	if (!bad && c.preempt_every && r1.rc == 0 && exec_defined(sm[0], &c, r1.mem) &&
	    !exec_run(sm[0], sm[1], &c, &rp)) {
		if ((rp.rc || memcmp(r1.mem, rp.mem, EXEC_GMEM_SPAN)) &&
		    exec_undefined_preempted(sm[0], sm[1], &c))
			; /* undefined under the preemption's timing */
		else if (rp.rc)
			bad = ORACLE_FAIL("preempted every %llu: ended %d (%s), unpreempted 0\n",
					  (unsigned long long)c.preempt_every, rp.rc,
					  rp.exc.msg);
		else if (memcmp(r1.mem, rp.mem, EXEC_GMEM_SPAN))
			bad = ORACLE_FAIL("preempted every %llu: memory differs\n",
					  (unsigned long long)c.preempt_every);
		free(rp.mem);
	}
	free(r1.mem);
	vgpu_sm_free(sm[0]);
	vgpu_sm_free(sm[1]);
	vgpu_prog_free(prog);
	free(copy);
	return bad;
}

#endif
