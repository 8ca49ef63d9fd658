// SPDX-License-Identifier: MIT
/*
 * CUDA's occupancy arithmetic for compute capability 9.0, the rules of
 * NVIDIA's calculator (cuda_occupancy.h, CUDA 13.0) over the device's
 * reported limits (cu_occupancy.h).  The smallest of five limits:
 *
 *  - warps: CAP_WARPS_PER_SM over the CTA's warps (0 above the device's
 *    threads per CTA; the function's own limit is not one of them);
 *  - CTAs: CAP_CTAS_PER_SM;
 *  - registers: a warp gets NUM_REGS x 32 rounded up to 256; each of the
 *    SM's 4 sub-partitions holds a quarter of CAP_REGS_PER_SM, whole
 *    warps of it; a CTA whose warps, rounded up to a multiple of 4, need
 *    more than CAP_REGS_PER_SM (or more than 256 registers a thread) fits
 *    nowhere;
 *  - shared memory: static + dynamic + what the device keeps of each CTA
 *    (CAP_SMEM - CAP_SMEM_CTA: 1 KiB on h100), rounded up to 128 bytes;
 *    0 when the dynamic part exceeds MAX_DYNAMIC_SHARED_SIZE_BYTES or the
 *    whole exceeds a CTA's limit (48 KiB, or CAP_SMEM_CTA once the
 *    function opted in above 48 KiB, plus the reserve); else the SM's
 *    carveout over it: the preferred carveout (a percentage of CAP_SMEM,
 *    or the cache configuration's: PREFER_L1 0 %, PREFER_EQUAL 50 %,
 *    PREFER_SHARED 100 %, none: all of it), rounded up to the next size
 *    the SM offers (0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KiB, within
 *    CAP_SMEM, then CAP_SMEM), and where one CTA needs more than that,
 *    the size its need rounds up to;
 *  - named barriers: 2 x CAP_CTAS_PER_SM (at least a CTA's 16) over
 *    those the function uses.
 *
 * Clusters: the device as one GPC (vGPU has no GPCs): CAP_SMS times the
 * CTAs an SM holds (at most 8, as the H200 answered), over the cluster
 * size.  An H200 answers that for clusters of 1 and 2; for larger ones
 * fewer (its GPCs: 39 clusters of 3, 30 of 4, 15 of 8, 7 of 16 at one
 * CTA an SM, where vGPU says 44, 33, 16, 8).
 */
#include <limits.h>
#include <stdbool.h>

#include "cu_occupancy.h"

#define OCC_SUBPARTITIONS 4	/* of an SM: each a quarter of its registers */
#define OCC_REG_GRANULE 256	/* registers given to a warp at a time */
#define OCC_MAX_REGS 256	/* a thread's (sm_90) */
#define OCC_SMEM_GRANULE 128	/* shared-memory bytes given at a time */
#define OCC_SMEM_DEFAULT (48 * 1024) /* a CTA's limit without opting in */
#define OCC_NAMED_BARRIERS 16	/* a CTA's */

static uint64_t round_up(uint64_t x, uint64_t g)
{
	return (x + g - 1) / g * g;
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

static uint32_t reserved_smem(const struct cuv_occ_device *d)
{
	return d->smem_per_sm > d->smem_cta ? d->smem_per_sm - d->smem_cta : 0;
}

/* the carveout sizes of an sm_90 SM, then CAP_SMEM: the first >= @bytes */
static uint64_t carveout_size(const struct cuv_occ_device *d, uint64_t bytes)
{
	static const uint16_t kib[] = { 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 };

	for (size_t i = 0; i < sizeof(kib) / sizeof(kib[0]); i++) {
		uint64_t size = (uint64_t)kib[i] * 1024;

		if (size > d->smem_per_sm)
			break;
		if (bytes <= size)
			return size;
	}
	return d->smem_per_sm;
}

/* the shared memory the function would have its SM carve out */
static uint64_t carveout_preferred(const struct cuv_occ_device *d, const struct cuv_occ_func *f)
{
	int pct = f->carveout;

	if (pct < 0) {
		switch (f->cache) {
		case CU_FUNC_CACHE_PREFER_L1:
			pct = 0;
			break;
		case CU_FUNC_CACHE_PREFER_SHARED:
			pct = 100;
			break;
		case CU_FUNC_CACHE_PREFER_EQUAL:
			pct = 50;
			break;
		default:
			return carveout_size(d, d->smem_per_sm);
		}
	}
	if (pct > 100)
		pct = 100;
	return carveout_size(d, (uint64_t)pct * d->smem_per_sm / 100);
}

/* a CTA's shared-memory limit, the reserve included */
static uint64_t smem_cta_limit(const struct cuv_occ_device *d, const struct cuv_occ_func *f)
{
	uint64_t reserve = reserved_smem(d);
	uint64_t deflt = d->smem_cta < OCC_SMEM_DEFAULT ? d->smem_cta : OCC_SMEM_DEFAULT;
	uint64_t most = (uint64_t)f->smem_static + reserve + f->max_dyn_smem;

	return (most > deflt ? d->smem_cta : deflt) + reserve;
}

static int limit_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f, size_t dyn)
{
	uint64_t need, per_sm, blocks;

	if (dyn > f->max_dyn_smem)
		return 0;
	need = round_up((uint64_t)f->smem_static + reserved_smem(d) + dyn, OCC_SMEM_GRANULE);
	if (need > smem_cta_limit(d, f))
		return 0;
	if (!need)
		return INT_MAX;
	per_sm = carveout_preferred(d, f);
	if (per_sm < need)
		per_sm = carveout_size(d, need);
	blocks = per_sm / need;
	return blocks > INT_MAX ? INT_MAX : (int)blocks;
}

static int limit_regs(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int warps)
{
	uint64_t per_warp = round_up((uint64_t)f->num_regs * d->warp_size, OCC_REG_GRANULE);
	uint64_t per_part;

	if (f->num_regs > OCC_MAX_REGS ||
	    per_warp * round_up((uint64_t)warps, OCC_SUBPARTITIONS) > d->regs_per_sm)
		return 0;
	if (!per_warp)
		return INT_MAX;
	per_part = d->regs_per_sm / OCC_SUBPARTITIONS / per_warp;
	return (int)(per_part * OCC_SUBPARTITIONS / (uint64_t)warps);
}

static int limit_barriers(const struct cuv_occ_device *d, const struct cuv_occ_func *f)
{
	uint64_t slots = 2ull * d->ctas_per_sm;

	if (f->barriers <= 1)
		return INT_MAX;
	if (slots < OCC_NAMED_BARRIERS)
		slots = OCC_NAMED_BARRIERS;
	return (int)(slots / (uint64_t)f->barriers);
}

int cuv_occ_regs_cap(const struct cuv_occ_device *d, int threads)
{
	uint64_t warps, per_warp;

	if (threads <= 0 || !d->warp_size)
		return OCC_MAX_REGS - 1;
	warps = round_up(((uint64_t)threads + d->warp_size - 1) / d->warp_size, OCC_SUBPARTITIONS);
	per_warp = d->regs_per_sm / warps / OCC_REG_GRANULE * OCC_REG_GRANULE;
	return min_int((int)(per_warp / d->warp_size), OCC_MAX_REGS - 1);
}

int cuv_occ_blocks_but_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
			    int block)
{
	int warps, n;

	if (block <= 0 || (uint32_t)block > d->max_threads || !d->warp_size)
		return 0;
	warps = (int)(((uint32_t)block + d->warp_size - 1) / d->warp_size);
	n = (int)(d->warps_per_sm / (uint32_t)warps);
	n = min_int(n, d->ctas_per_sm > INT_MAX ? INT_MAX : (int)d->ctas_per_sm);
	n = min_int(n, limit_regs(d, f, warps));
	return min_int(n, limit_barriers(d, f));
}

int cuv_occ_blocks_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f, size_t dyn)
{
	return limit_smem(d, f, dyn);
}

uint64_t cuv_occ_smem_fixed(const struct cuv_occ_device *d, const struct cuv_occ_func *f)
{
	return (uint64_t)f->smem_static + reserved_smem(d);
}

int cuv_occ_blocks(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int block,
		   size_t dyn)
{
	return min_int(cuv_occ_blocks_but_smem(d, f, block), limit_smem(d, f, dyn));
}

int cuv_occ_best_block(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
		       CUoccupancyB2DSize b2d, size_t dyn, int limit, int *grid)
{
	int best = 0, best_blocks = 0, best_threads = 0;
	int full = (int)(d->warps_per_sm * d->warp_size);
	int gran = (int)d->warp_size;
	struct cuv_occ_func g = *f;

	/*
	 * The H200's driver searches with a preferred carveout of 0 or 100 %
	 * and no other: another percentage counts as none there (the cache
	 * configuration still counts).
	 */
	if (g.carveout > 0 && g.carveout < 100)
		g.carveout = -1;
	if (!limit || limit > (int)d->max_threads)
		limit = (int)d->max_threads;
	if (g.max_threads > 0 && g.max_threads < limit)
		limit = g.max_threads;
	*grid = 0;
	if (gran <= 0)
		return 0;
	for (int aligned = (limit + gran - 1) / gran * gran; aligned > 0; aligned -= gran) {
		int block = min_int(limit, aligned);
		int blocks = cuv_occ_blocks(d, &g, block, b2d ? b2d(block) : dyn);

		if (block * blocks > best_threads) {
			best = block;
			best_blocks = blocks;
			best_threads = block * blocks;
		}
		if (best_threads == full)
			break;
	}
	*grid = best_blocks * (int)d->sms;
	return best;
}

CUresult cuv_occ_dyn_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
			  int nblocks, int block, size_t *out)
{
	uint64_t per_sm, avail, cap;

	if (nblocks <= 0 || block <= 0 || cuv_occ_blocks(d, f, block, 0) < nblocks)
		return CUDA_ERROR_INVALID_VALUE;
	/* one CTA may have the whole of a CTA's limit, more share the carveout */
	cap = (uint64_t)d->smem_cta + reserved_smem(d);
	if (nblocks == 1) {
		per_sm = cap;
	} else {
		per_sm = carveout_preferred(d, f);
		if (!per_sm)
			per_sm = carveout_size(d, 1);
	}
	avail = per_sm / (uint64_t)nblocks / OCC_SMEM_GRANULE * OCC_SMEM_GRANULE;
	if (avail > cap)
		avail = cap;
	avail = avail > f->smem_static ? avail - f->smem_static : 0;
	if (avail > f->max_dyn_smem)
		avail = f->max_dyn_smem;
	*out = (size_t)avail;
	return CUDA_SUCCESS;
}

/*
 * CTAs of a cluster launch an SM holds: the H200 answered at most 8 for
 * clusters of any size, whatever fits without clusters.
 */
#define OCC_CLUSTER_CTAS_PER_SM 8

static int cluster_ctas_per_sm(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
			       int block, size_t dyn)
{
	return min_int(cuv_occ_blocks(d, f, block, dyn), OCC_CLUSTER_CTAS_PER_SM);
}

/*
 * Clusters of @size CTAs the device holds at once, @c CTAs of a cluster
 * launch an SM: clusters of 1 or 2 CTAs on any SM (a TPC's two), larger
 * ones on as many distinct SMs of one GPC (the H200's answers:
 * VGPU_H100_GPC_SMS).
 */
static uint64_t clusters_of(const struct cuv_occ_device *d, uint64_t c, unsigned int size)
{
	uint64_t n = 0;

	if (size <= 2 || !d->gpc_sms)
		return (uint64_t)d->sms * c / size;
	for (uint32_t i = 0; i < d->gpcs; i++)
		if (d->gpc_sms[i] >= size)
			n += d->gpc_sms[i] * c / size;
	return n;
}

int cuv_occ_clusters(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int block,
		     size_t dyn, unsigned int size)
{
	uint64_t n;

	if (!size)
		return 0;
	n = clusters_of(d, (uint64_t)cluster_ctas_per_sm(d, f, block, dyn), size);
	return n > INT_MAX ? INT_MAX : (int)n;
}

int cuv_occ_cluster_size(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int block,
			 size_t dyn, bool non_portable)
{
	uint64_t c = (uint64_t)cluster_ctas_per_sm(d, f, block, dyn);
	uint32_t size = non_portable ? d->cluster_max : d->cluster;

	/* the largest size up to the limit of which one cluster fits */
	while (size && !clusters_of(d, c, size))
		size--;
	return (int)size;
}
