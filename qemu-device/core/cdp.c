/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Device-side launch (CUDA dynamic parallelism): the device's side of the
 * device-launch area (uapi/vgpu_hw.h, struct vgpu_cdp_header).  Plain C
 * over the memory callbacks, so the QEMU device and libvgpu's sim backend
 * walk a launch's tree of grids the same way (struct vgpu_cdp_walk): the
 * caller runs the grid from the host, then each child vgpu_cdp_walk_next()
 * gives it, until it answers 0.
 *
 * The walk is iterative, its state in host memory: a chain of levels (the
 * grids whose children are running, the host's at the bottom), each with
 * its children listed and sorted once, when the grid has completed.  A
 * grid's children are found without reading every slot: the device
 * runtime takes slots at the header's @cursor (an atomic add, the slot
 * its value modulo @nslots), so the slots a grid took lie between the
 * cursor before it ran and the cursor after; only those are read.  A
 * chain holds one slot a level, so it is never deeper than the slots; the
 * pending-launch count bounds the nesting, as on the H200.  A forged area
 * costs its owner their own launches: a record put where the runtime
 * would not has no parent that runs it, a changed one is skipped or an
 * exception, and the walk's memory is bounded by the slots.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core_priv.h"

#define VGPU_CDP_MAX_SLOTS 65536u /* libvgpu's VGPU_CDP_MAX_PENDING */
#define NO_GRID VGPU_CDP_NO_GRID

/* @len bytes at @va (16-aligned pieces of at most 16 bytes) */
static int rd(const struct vgpu_mem_ops *mem, void *opaque, uint64_t va, void *buf,
	      uint32_t len)
{
	for (uint32_t o = 0; o < len; o += 16)
		if (mem->read(opaque, va + o, (uint8_t *)buf + o, len - o < 16 ? len - o : 16))
			return -1;
	return 0;
}

static int wr32(const struct vgpu_mem_ops *mem, void *opaque, uint64_t va, uint32_t v)
{
	return mem->write(opaque, va, &v, 4);
}

static uint64_t slot_va(uint64_t area, uint32_t i)
{
	return area + VGPU_CDP_HEADER_BYTES + (uint64_t)i * VGPU_CDP_SLOT_BYTES;
}

/* Slot @i is free again: no grid's (its @parent first, then @state). */
static void slot_free(const struct vgpu_cdp_walk *w, uint32_t i)
{
	wr32(w->mem, w->opaque, slot_va(w->area, i) + 8, NO_GRID);
	wr32(w->mem, w->opaque, slot_va(w->area, i), VGPU_CDP_FREE);
}

static int fault(struct vgpu_exception_record *exc, uint64_t va, const char *what)
{
	vgpu_exc_set(exc, VGPU_EXC_GLOBAL_FAULT, "device-side launch: %s", what);
	exc->addr = va;
	return -1;
}

int vgpu_cdp_walk_start(struct vgpu_cdp_walk *w, const struct vgpu_mem_ops *mem, void *opaque,
			uint64_t area, uint32_t *grid, struct vgpu_exception_record *exc)
{
	uint32_t h[2];
	uint64_t old = 0;

	*w = (struct vgpu_cdp_walk){ .mem = mem, .opaque = opaque, .area = area };
	if (area % 16) {
		vgpu_exc_set(exc, VGPU_EXC_BAD_LAUNCH, "device-launch area 0x%llx not 16-aligned",
			     (unsigned long long)area);
		return -1;
	}
	if (mem->atomic(opaque, area + 12, 4, VGPU_ATOMIC_ADD, 1, 0, &old))
		return fault(exc, area + 12, "area header");
	if (mem->read(opaque, area, h, 8))
		return fault(exc, area, "area header");
	*grid = VGPU_CDP_ROOT | ((uint32_t)old & ~VGPU_CDP_ROOT);
	w->root = *grid;
	w->nslots = h[0];
	w->cursor = h[1];
	return 0;
}

void vgpu_cdp_walk_end(struct vgpu_cdp_walk *w)
{
	free(w->lv);
	free(w->kids);
	w->lv = NULL;
	w->kids = NULL;
	w->depth = w->nkids = w->lv_cap = w->kids_cap = 0;
	w->over = true;
}

/* Room for one more element of @size in *@a (@cap of them now, @n used). */
static int grow(void **a, uint32_t *cap, uint32_t n, size_t size)
{
	uint32_t c = *cap ? 2 * *cap : 16;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*a, (size_t)c * size);
	if (!p)
		return -1;
	*a = p;
	*cap = c;
	return 0;
}

static int kid_cmp(const void *a, const void *b)
{
	const struct vgpu_cdp_kid *x = a, *y = b;

	if (x->tail != y->tail)
		return x->tail ? 1 : -1;
	if (x->seq != y->seq)
		return (int32_t)(x->seq - y->seq) < 0 ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/*
 * The children of the chain's top grid, which has completed: its LAUNCHED
 * records among the slots taken since it started, sorted (NULL stream and
 * fire-and-forget in launch order, then tail launches); the ALLOC slots it
 * took and never launched are freed.
 */
static int list_kids(struct vgpu_cdp_walk *w, struct vgpu_exception_record *exc)
{
	struct vgpu_cdp_level *L = &w->lv[w->depth - 1];
	uint32_t h[2], n, first = w->nkids;

	if (w->mem->read(w->opaque, w->area, h, 8))
		return fault(exc, w->area, "area header");
	if (h[0] > VGPU_CDP_MAX_SLOTS || w->nslots > VGPU_CDP_MAX_SLOTS) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH, "device-launch area of %u slots",
			     h[0] > VGPU_CDP_MAX_SLOTS ? h[0] : w->nslots);
		return -1;
	}
	/* every slot, where the count changed or the cursor went round */
	n = h[0] != w->nslots || h[1] - L->cursor >= h[0] ? h[0] : h[1] - L->cursor;
	w->nslots = h[0];
	for (uint32_t j = 0; j < n; j++) {
		uint32_t i = n == h[0] ? j : (L->cursor + j) % h[0], s[4];

		if (rd(w->mem, w->opaque, slot_va(w->area, i), s, 16))
			return fault(exc, slot_va(w->area, i), "record");
		if (s[2] != L->grid)
			continue;
		if (s[0] == VGPU_CDP_ALLOC) {
			slot_free(w, i);
			continue;
		}
		if (s[0] != VGPU_CDP_LAUNCHED)
			continue;
		if (w->nkids >= w->nslots) { /* more pending than slots: forged */
			vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
				     "device-launch area: more launches pending than its %u slots",
				     w->nslots);
			return -1;
		}
		if (grow((void **)&w->kids, &w->kids_cap, w->nkids, sizeof(*w->kids)))
			return fault(exc, w->area, "out of host memory");
		w->kids[w->nkids++] = (struct vgpu_cdp_kid){
			.slot = i, .seq = s[1], .tail = s[3] == VGPU_CDP_STREAM_TAIL,
		};
	}
	/* a slot read twice (the cursor wrapped at 2^32 onto one) runs once */
	if (w->nkids > first) {
		uint32_t o = first + 1;

		qsort(w->kids + first, w->nkids - first, sizeof(*w->kids), kid_cmp);
		for (uint32_t i = first + 1; i < w->nkids; i++)
			if (w->kids[i].slot != w->kids[o - 1].slot)
				w->kids[o++] = w->kids[i];
		w->nkids = o;
	}
	L->first = L->next = first;
	L->listed = true;
	return 0;
}

static bool dims_ok(const uint32_t *grid, const uint32_t *block)
{
	uint64_t t = (uint64_t)block[0] * block[1] * block[2];

	for (int i = 0; i < 3; i++)
		if (!grid[i] || !block[i])
			return false;
	return t <= VGPU_MAX_THREADS_PER_CTA;
}

/* The kernel's compiled cluster shape tiles the grid, and fits. */
static bool cluster_ok(const struct vgpu_kernel_desc *k, const uint32_t *grid, uint32_t *cl)
{
	for (int i = 0; i < 3; i++) {
		cl[i] = k->cluster[i] ? k->cluster[i] : 1;
		if (grid[i] % cl[i])
			return false;
	}
	return cl[0] * cl[1] * cl[2] <= VGPU_MAX_CLUSTER_CTAS;
}

/* Record @r (slot @best) names a kernel (*@kp) and a shape the device can launch. */
static int check(const struct vgpu_cdp_walk *w, const struct vgpu_cdp_record *rp, uint32_t best,
		 struct vgpu_kernel_desc *kp, uint32_t *cl, struct vgpu_exception_record *exc)
{
	const struct vgpu_cdp_record r = *rp;
	struct vgpu_kernel_desc k;

	if (!r.kdesc || r.kdesc % 8 || rd(w->mem, w->opaque, r.kdesc, &k, sizeof(k))) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
			     "device-side launch record %u names no kernel (0x%llx)", best,
			     (unsigned long long)r.kdesc);
		exc->addr = r.kdesc;
		return -1;
	}
	if (!dims_ok(r.grid, r.block) || k.param_size > VGPU_CDP_MAX_PARAM ||
	    k.smem_static > VGPU_DEFAULT_SMEM_PER_SM ||
	    r.smem_bytes > VGPU_DEFAULT_SMEM_PER_SM - k.smem_static ||
	    !cluster_ok(&k, r.grid, cl)) {
		vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
			     "device-side launch record %u: bad shape (grid %ux%ux%u, block "
			     "%ux%ux%u, cluster %ux%ux%u, %u parameter bytes, %u shared bytes)",
			     best, r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1],
			     r.block[2], k.cluster[0] ? k.cluster[0] : 1u,
			     k.cluster[1] ? k.cluster[1] : 1u, k.cluster[2] ? k.cluster[2] : 1u,
			     k.param_size,
			     r.smem_bytes);
		return -1;
	}
	*kp = k;
	return 0;
}

/* The hidden parameters of record @best's buffer at @pva (the launcher's on the host). */
static int hidden(const struct vgpu_cdp_walk *w, const struct vgpu_cdp_record *r, uint32_t best,
		  const struct vgpu_kernel_desc *k, uint64_t pva, struct vgpu_exception_record *exc)
{
	const struct vgpu_mem_ops *mem = w->mem;
	void *opaque = w->opaque;
	struct vgpu_cdp_header h;

	if (rd(mem, opaque, w->area, &h, sizeof(h)))
		return fault(exc, w->area, "area header");
	if (k->data_off != UINT32_MAX &&
	    ((uint64_t)k->data_off + 8 > k->param_size ||
	     mem->write(opaque, pva + k->data_off, &k->data_va, 8)))
		return fault(exc, pva + k->data_off, "hidden parameter");
	if (k->params_off != UINT32_MAX &&
	    ((uint64_t)k->params_off + 8 > k->param_size ||
	     mem->write(opaque, pva + k->params_off, &pva, 8)))
		return fault(exc, pva + k->params_off, "hidden parameter");
	if (k->local_off != UINT32_MAX) {
		unsigned __int128 need = (unsigned __int128)((uint64_t)r->grid[0] * r->grid[1]) *
					 r->grid[2] * r->block[0] * r->block[1] * r->block[2] *
					 k->local_bytes;

		if (need > h.lmem_size) {
			vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
				     "device-side launch record %u: %llu bytes of local memory, "
				     "the area has %llu", best,
				     need >> 64 ? ~0ull : (unsigned long long)need,
				     (unsigned long long)h.lmem_size);
			return -1;
		}
		if ((uint64_t)k->local_off + 8 > k->param_size ||
		    mem->write(opaque, pva + k->local_off, &h.lmem_va, 8))
			return fault(exc, pva + k->local_off, "hidden parameter");
	}
	if (k->printf_off != UINT32_MAX) {
		if (!h.printf_va) {
			vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
				     "device-side launch record %u: a kernel that prints, and the "
				     "area has no printf buffer", best);
			return -1;
		}
		if ((uint64_t)k->printf_off + 8 > k->param_size ||
		    mem->write(opaque, pva + k->printf_off, &h.printf_va, 8))
			return fault(exc, pva + k->printf_off, "hidden parameter");
	}
	if (k->envregs_off != UINT32_MAX) {
		if ((uint64_t)k->envregs_off + 128u > k->param_size)
			return fault(exc, pva + k->envregs_off, "hidden parameter");
		for (uint32_t o = 0; o < 128u; o += 4)
			if (wr32(mem, opaque, pva + k->envregs_off + o, 0))
				return fault(exc, pva + k->envregs_off + o, "hidden parameter");
	}
	return 0;
}

/*
 * Child @slot of grid @parent, as a launch in *@out (marked RUNNING): 1;
 * the record changed since it was listed (it is not that grid's launch
 * any more): 0; a bad record: -1 with @exc set.
 */
static int take(struct vgpu_cdp_walk *w, uint32_t slot, uint32_t parent,
		struct vgpu_cdp_child *out, struct vgpu_exception_record *exc)
{
	uint64_t rva = slot_va(w->area, slot), pva = rva + VGPU_CDP_RECORD_BYTES;
	struct vgpu_cdp_record r;
	struct vgpu_kernel_desc k;
	uint32_t cl[3];

	if (rd(w->mem, w->opaque, rva, &r, sizeof(r)))
		return fault(exc, rva, "record");
	if (r.state != VGPU_CDP_LAUNCHED || r.parent != parent)
		return 0;
	/* taken: whatever follows, it does not run twice (a bad one is freed) */
	if (wr32(w->mem, w->opaque, rva, VGPU_CDP_RUNNING))
		return fault(exc, rva, "record");
	if (check(w, &r, slot, &k, cl, exc) || hidden(w, &r, slot, &k, pva, exc)) {
		slot_free(w, slot);
		return -1;
	}
	*out = (struct vgpu_cdp_child){
		.record = slot,
		.code_va = k.code_va,
		.code_size = k.code_size,
		.entry = k.entry,
		.grid = { r.grid[0], r.grid[1], r.grid[2] },
		.block = { r.block[0], r.block[1], r.block[2] },
		.cluster = { cl[0], cl[1], cl[2] },
		.smem_bytes = k.smem_static + r.smem_bytes,
		.param_va = pva,
		.param_size = k.param_size,
	};
	return 1;
}

int vgpu_cdp_walk_next(struct vgpu_cdp_walk *w, struct vgpu_cdp_child *out,
		       struct vgpu_exception_record *exc)
{
	if (w->over)
		return 0;
	if (!w->depth || w->handed) { /* the root, or the child handed out, ran */
		uint32_t grid = w->depth ? w->lv[w->depth - 1].child : w->root;

		if (w->depth > w->nslots) { /* a chain of slots longer than the slots */
			vgpu_exc_set(exc, VGPU_EXC_DEVICE_LAUNCH,
				     "device-side launch nested deeper than the area's %u slots",
				     w->nslots);
			vgpu_cdp_walk_cancel(w);
			return -1;
		}
		if (grow((void **)&w->lv, &w->lv_cap, w->depth, sizeof(*w->lv))) {
			fault(exc, w->area, "out of host memory");
			vgpu_cdp_walk_cancel(w);
			return -1;
		}
		w->lv[w->depth++] = (struct vgpu_cdp_level){ .grid = grid,
							     .cursor = w->cursor };
		w->handed = false;
	}
	while (w->depth) {
		struct vgpu_cdp_level *L = &w->lv[w->depth - 1];
		int r;

		if (!L->listed && list_kids(w, exc)) {
			vgpu_cdp_walk_cancel(w);
			return -1;
		}
		if (L->next == w->nkids) { /* its children have all run: it is done */
			w->nkids = L->first;
			if (--w->depth)
				slot_free(w, L->grid);
			continue;
		}
		/* the cursor before the child runs: where its own launches start */
		if (w->mem->read(w->opaque, w->area + 4, &w->cursor, 4)) {
			fault(exc, w->area + 4, "area header");
			vgpu_cdp_walk_cancel(w);
			return -1;
		}
		r = take(w, w->kids[L->next++].slot, L->grid, out, exc);
		if (r < 0) {
			vgpu_cdp_walk_cancel(w);
			return -1;
		}
		if (r) {
			L->child = out->record;
			w->handed = true;
			return 1;
		}
	}
	vgpu_cdp_walk_end(w);
	return 0;
}

/* The slots the walk holds: its chain's, the child out (whatever they hold now). */
static void chain_free(struct vgpu_cdp_walk *w)
{
	for (uint32_t d = 1; d < w->depth && d < w->lv_cap; d++)
		slot_free(w, w->lv[d].grid);
	if (w->handed && w->depth)
		slot_free(w, w->lv[w->depth - 1].child);
}

/*
 * Frees every record of the tree below the host's grid: one pass over the
 * slots for their parents, then the tree walked in host memory; and the
 * slots the walk holds, even where their records were overwritten.
 */
void vgpu_cdp_walk_cancel(struct vgpu_cdp_walk *w)
{
	uint32_t n = w->nslots, *par, *head, *next, *todo, ntodo = 0;

	if (w->over || !n || n > VGPU_CDP_MAX_SLOTS) {
		vgpu_cdp_walk_end(w);
		return;
	}
	par = malloc((size_t)n * 4 * sizeof(*par));
	if (!par) { /* at least the chain */
		chain_free(w);
		vgpu_cdp_walk_end(w);
		return;
	}
	head = par + n;
	next = head + n;
	todo = next + n;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s[4];

		head[i] = next[i] = NO_GRID;
		par[i] = NO_GRID;
		if (!rd(w->mem, w->opaque, slot_va(w->area, i), s, 16) && s[0] != VGPU_CDP_FREE)
			par[i] = s[2];
	}
	for (uint32_t i = n; i--;) {
		if (par[i] == w->root) {
			todo[ntodo++] = i;
		} else if (par[i] < n && par[i] != i) {
			next[i] = head[par[i]];
			head[par[i]] = i;
		}
	}
	/* each slot is pushed at most once: by its one parent, or as the root's */
	while (ntodo) {
		uint32_t g = todo[--ntodo];

		for (uint32_t c = head[g]; c != NO_GRID; c = next[c])
			todo[ntodo++] = c;
		head[g] = NO_GRID;
		slot_free(w, g);
	}
	free(par);
	chain_free(w);
	vgpu_cdp_walk_end(w);
}
