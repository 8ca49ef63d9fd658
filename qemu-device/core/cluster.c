/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Clusters: the CTAs of a cluster run co-resident on one SM object, can
 * address each other's shared memory (.shared::cluster addresses that MAPA
 * makes, see uapi/vgpu_hw.h), and synchronise with BAR.CLUSTER.ARRIVE /
 * BAR.CLUSTER.WAIT (PTX barrier.cluster).
 */
#include <stdio.h>

#include "core_priv.h"

struct vgpu_cta *vgpu_smem_resolve_slow(struct vgpu_cta *c, struct vgpu_warp *w,
					uint32_t em, uint32_t addr, uint32_t size,
					uint32_t *off)
{
	struct vgpu_cta *t = c;
	uint32_t o = addr;

	if (addr & VGPU_SMEM_CLUSTER_BIT) {
		uint32_t rank = (addr >> VGPU_SMEM_RANK_SHIFT) & VGPU_SMEM_RANK_MASK;
		uint32_t n = vgpu_coop(c) ? 1 : c->sm->nctas;

		if (rank >= n) {
			vgpu_raise(c, w, VGPU_EXC_CLUSTER_RANGE, em,
				   "shared::cluster address 0x%x names CTA rank %u of a %u-CTA cluster",
				   addr, rank, n);
			c->sm->exc->addr = addr;
			return NULL;
		}
		t = vgpu_coop(c) ? c : c->sm->ctas[rank];
		o = addr & VGPU_SMEM_OFFSET_MASK;
	}
	if ((uint64_t)o + size > t->smem_size) {
		vgpu_raise(c, w, VGPU_EXC_SMEM_RANGE, em,
			   "%u-byte shared access at 0x%x is outside %s 0x%x bytes",
			   size, addr, t == c ? "its" : "the target CTA's",
			   t->smem_size);
		c->sm->exc->addr = addr;
		return NULL;
	}
	*off = o;
	return t;
}

/* MAPA Rd, Ra, Rb|imm: Ra's offset in the shared memory of CTA rank Rb. */
VGPU_EXEC_PROTO(vgpu_exec_mapa)
{
	const uint32_t *ra = vgpu_reg(w, d->ra), *rb = vgpu_reg(w, d->rb);
	uint32_t *rd = vgpu_reg(w, d->rd);
	uint32_t n = vgpu_coop(c) ? 1 : c->sm->nctas;

	VGPU_FOR_LANES(em, l) {
		uint32_t rank = d->stype == VGPU_ST_I ? d->imm : rb[l];

		if (rank >= n) {
			vgpu_raise(c, w, VGPU_EXC_CLUSTER_RANGE, 1u << l,
				   "MAPA to CTA rank %u of a %u-CTA cluster", rank, n);
			return VGPU_X_EXC;
		}
		rd[l] = VGPU_SMEM_CLUSTER_BIT | rank << VGPU_SMEM_RANK_SHIFT |
			(ra[l] & VGPU_SMEM_OFFSET_MASK);
	}
	return VGPU_X_NEXT;
}

/*
 * The cluster barrier completes once every thread of the cluster that has
 * not exited has arrived (and at least one has: exits alone do not make
 * phases).
 */
void vgpu_cluster_bar_check(struct vgpu_sm *sm)
{
	bool any = false;

	for (uint32_t s = 0; s < sm->nctas; s++) {
		const struct vgpu_cta *c = sm->ctas[s];

		for (uint32_t i = 0; i < c->nwarps; i++) {
			const struct vgpu_warp *w = &c->warps[i];

			if ((w->clbar_arrived | ~w->live) != ~0u)
				return;
			any |= w->clbar_arrived != 0;
		}
	}
	if (!any)
		return;
	sm->clbar_phase++;
	sm->wake_flow = vgpu_trace_complete(sm->run_cta ? sm->run_cta : sm->ctas[0],
					    VGPU_TR_CLUSTER_COMPLETE,
					    sm->clbar_phase - 1, 0, 0, 0);
	for (uint32_t s = 0; s < sm->nctas; s++) {
		struct vgpu_cta *c = sm->ctas[s];

		for (uint32_t i = 0; i < c->nwarps; i++) {
			struct vgpu_warp *w = &c->warps[i];

			w->clbar_arrived = 0;
			if (w->state == VGPU_WS_CLUSTER_WAIT &&
			    w->clbar_phase <= sm->clbar_phase)
				vgpu_warp_wake(c, w);
		}
	}
	sm->wake_flow = 0;
}

/*
 * BAR.CLUSTER.ARRIVE marks the lanes arrived in the current phase;
 * BAR.CLUSTER.WAIT waits until the phase of the warp's last arrive has
 * completed.
 */
VGPU_EXEC_PROTO(vgpu_exec_bar_cluster)
{
	struct vgpu_sm *sm = c->sm;

	if (d->mod[0] == VGPU_MOD_CLBAR_ARRIVE) {
		w->clbar_arrived |= em;
		w->clbar_phase = sm->clbar_phase + 1;
		vgpu_cluster_bar_check(sm);
		return VGPU_X_NEXT;
	}
	if (sm->clbar_phase >= w->clbar_phase)
		return VGPU_X_NEXT;
	vgpu_warp_suspend(c, w, VGPU_WS_CLUSTER_WAIT, 0);
	return VGPU_X_BLOCK;
}
