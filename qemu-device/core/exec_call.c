/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Calls: CALL, RET and SALLOC (docs/core.md "Calls", an extension beside
 * seed 002's instructions).
 *
 * Each thread has a stack in its local memory (an ordinary global-memory
 * range the program chooses), described by the instruction's call block
 * Ra..Ra+3: the stack pointer Ra:Ra+1 and the stack limit Ra+2:Ra+3, both
 * 64-bit addresses.  The stack grows down.  CALL pushes a 16-byte record
 * { return byte pc, call depth after the call, VGPU_CALL_MAGIC, 0 } and
 * jumps; RET pops it and returns there.  SALLOC moves the stack pointer.
 * A push or an allocation below the limit raises STACK_OVERFLOW with
 * nothing changed; RET at depth 0, or on a record that is not its call's,
 * raises BAD_RETURN.
 *
 * Every lane keeps its call depth (struct vgpu_warp.depth); the scheduler
 * runs the deepest lanes first (simt.c vgpu_warp_select), so lanes that call,
 * whatever their targets, run their callees to the RET and meet the
 * lanes that did not call at the instruction after the CALL.
 */
#include <string.h>

#include "core_priv.h"

#define VGPU_CALL_MAGIC 0x4c4c4143u /* "CALL" */
#define VGPU_CALL_RECORD 16u
#define VGPU_MAX_DEPTH 0xffffu

static uint64_t pair(struct vgpu_warp *w, uint32_t row, uint32_t lane)
{
	return (uint64_t)vgpu_reg(w, row + 1)[lane] << 32 | vgpu_reg(w, row)[lane];
}

static void set_pair(struct vgpu_warp *w, uint32_t row, uint32_t lane, uint64_t v)
{
	vgpu_reg(w, row)[lane] = (uint32_t)v;
	vgpu_reg(w, row + 1)[lane] = (uint32_t)(v >> 32);
}

static enum vgpu_xres overflow(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
			       uint32_t lane, uint64_t sp, uint64_t lim, const char *what)
{
	vgpu_raise(c, w, VGPU_EXC_STACK_OVERFLOW, em,
		   "call stack overflow: %s in lane %u takes the stack pointer to 0x%llx, "
		   "below its limit 0x%llx", what, lane, (unsigned long long)sp,
		   (unsigned long long)lim);
	c->sm->exc->addr = sp;
	c->sm->exc->info[0] = (uint32_t)lim;
	c->sm->exc->info[1] = (uint32_t)(lim >> 32);
	c->sm->exc->info[2] = lane;
	c->sm->exc->info[3] = w->depth[lane];
	return VGPU_X_EXC;
}

static enum vgpu_xres bad_target(struct vgpu_cta *c, struct vgpu_warp *w, uint32_t em,
				 int64_t target, const char *what)
{
	vgpu_raise(c, w, VGPU_EXC_PC_RANGE, em,
		   "%s 0x%llx is not an instruction of the program", what,
		   (unsigned long long)target);
	c->sm->exc->addr = (uint64_t)target;
	return VGPU_X_EXC;
}

static bool target_ok(const struct vgpu_cta *c, int64_t t)
{
	return t >= 0 && !(t % VGPU_INSN_BYTES) && t / VGPU_INSN_BYTES < c->prog->n;
}

/* CALL Ra, target | Rb: push { return pc, depth } and jump. */
VGPU_EXEC_PROTO(vgpu_exec_call)
{
	const struct vgpu_launch *l = c->l;
	uint32_t pcs[VGPU_WARP_SIZE], ret = vgpu_byte_pc(w->cur_pc + 1);
	int64_t rel = (int64_t)vgpu_byte_pc(w->cur_pc) + (int32_t)d->imm;

	/* check every lane first: an exception changes nothing */
	VGPU_FOR_LANES(em, lane) {
		uint64_t sp = pair(w, d->ra, lane), lim = pair(w, d->ra + 2, lane);
		int64_t t = d->stype == VGPU_ST_I ? rel : (int64_t)vgpu_reg(w, d->rb)[lane];

		if (!target_ok(c, t))
			return bad_target(c, w, em, t, "call target");
		if (sp % VGPU_CALL_RECORD) {
			vgpu_raise(c, w, VGPU_EXC_MISALIGNED, em,
				   "stack pointer 0x%llx of lane %u is not 16-byte aligned",
				   (unsigned long long)sp, lane);
			c->sm->exc->addr = sp;
			return VGPU_X_EXC;
		}
		if (sp < VGPU_CALL_RECORD || sp - VGPU_CALL_RECORD < lim ||
		    w->depth[lane] == VGPU_MAX_DEPTH)
			return overflow(c, w, em, lane, sp - VGPU_CALL_RECORD, lim, "CALL");
		pcs[lane] = (uint32_t)(t / VGPU_INSN_BYTES);
	}
	VGPU_FOR_LANES(em, lane) {
		uint64_t sp = pair(w, d->ra, lane) - VGPU_CALL_RECORD;
		uint32_t rec[4] = { ret, w->depth[lane] + 1u, VGPU_CALL_MAGIC, 0 };

		if (l->mem->write(l->mem_opaque, sp, rec, sizeof(rec))) {
			vgpu_raise(c, w, VGPU_EXC_GLOBAL_FAULT, em,
				   "global memory fault: CALL's 16-byte push at 0x%llx",
				   (unsigned long long)sp);
			c->sm->exc->addr = sp;
			return VGPU_X_EXC;
		}
	}
	VGPU_FOR_LANES(em, lane) {
		set_pair(w, d->ra, lane, pair(w, d->ra, lane) - VGPU_CALL_RECORD);
		w->depth[lane]++;
	}
	w->deep = true;
	vgpu_warp_scatter(w, em, pcs);
	return VGPU_X_BRANCHED;
}

/* RET Ra: pop the record CALL pushed and return there. */
VGPU_EXEC_PROTO(vgpu_exec_ret)
{
	const struct vgpu_launch *l = c->l;
	uint32_t pcs[VGPU_WARP_SIZE];
	bool deep = false;

	VGPU_FOR_LANES(em, lane) {
		uint64_t sp = pair(w, d->ra, lane);
		uint32_t rec[4];

		if (!w->depth[lane]) {
			vgpu_raise(c, w, VGPU_EXC_BAD_RETURN, em,
				   "RET in lane %u with no call to return from", lane);
			return VGPU_X_EXC;
		}
		if (sp % VGPU_CALL_RECORD || l->mem->read(l->mem_opaque, sp, rec, sizeof(rec))) {
			vgpu_raise(c, w, sp % VGPU_CALL_RECORD ? VGPU_EXC_MISALIGNED :
				   VGPU_EXC_GLOBAL_FAULT, em,
				   "RET in lane %u cannot read its call record at 0x%llx", lane,
				   (unsigned long long)sp);
			c->sm->exc->addr = sp;
			return VGPU_X_EXC;
		}
		if (rec[1] != w->depth[lane] || rec[2] != VGPU_CALL_MAGIC) {
			vgpu_raise(c, w, VGPU_EXC_BAD_RETURN, em,
				   "RET in lane %u at depth %u: the stack pointer 0x%llx does not "
				   "point at its call's record", lane, w->depth[lane],
				   (unsigned long long)sp);
			c->sm->exc->addr = sp;
			return VGPU_X_EXC;
		}
		if (!target_ok(c, rec[0]))
			return bad_target(c, w, em, rec[0], "return address");
		pcs[lane] = rec[0] / VGPU_INSN_BYTES;
	}
	VGPU_FOR_LANES(em, lane) {
		set_pair(w, d->ra, lane, pair(w, d->ra, lane) + VGPU_CALL_RECORD);
		w->depth[lane]--;
	}
	VGPU_FOR_LANES(w->live, lane)
		deep |= w->depth[lane] != 0;
	w->deep = deep;
	vgpu_warp_scatter(w, em, pcs);
	return VGPU_X_BRANCHED;
}

/*
 * SALLOC Ra, n | Rb: stack pointer -= n (signed 32 bits).  Allocating
 * (n > 0) below the limit raises STACK_OVERFLOW; n <= 0 releases.
 */
VGPU_EXEC_PROTO(vgpu_exec_salloc)
{
	VGPU_FOR_LANES(em, lane) {
		int32_t n = (int32_t)(d->stype == VGPU_ST_I ? d->imm : vgpu_reg(w, d->rb)[lane]);
		uint64_t sp = pair(w, d->ra, lane), lim = pair(w, d->ra + 2, lane);

		if (n > 0 && (sp < (uint64_t)n || sp - (uint64_t)n < lim))
			return overflow(c, w, em, lane, sp - (uint64_t)n, lim, "SALLOC");
	}
	VGPU_FOR_LANES(em, lane) {
		int32_t n = (int32_t)(d->stype == VGPU_ST_I ? d->imm : vgpu_reg(w, d->rb)[lane]);

		set_pair(w, d->ra, lane, pair(w, d->ra, lane) - (uint64_t)(int64_t)n);
	}
	return VGPU_X_NEXT;
}
