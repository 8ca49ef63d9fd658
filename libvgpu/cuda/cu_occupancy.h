/* SPDX-License-Identifier: MIT */
/*
 * CUDA's occupancy arithmetic (cu_occupancy.c): how many CTAs of a
 * function an SM holds at once, over a device's limits and the function's
 * attributes, as NVIDIA's occupancy calculator (cuda_occupancy.h of CUDA
 * 13.0) computes it for compute capability 9.0, and as the driver of an
 * H200 answered (tests/cuda/real-gpu/occupancy-h200-2026-11-30/).  Plain
 * arithmetic: no context, no handles, so that tests/unit/test_occupancy.c
 * feeds it the H200's own register counts.
 */
#ifndef CU_OCCUPANCY_H
#define CU_OCCUPANCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda.h"

/**
 * struct cuv_occ_device - what the device reports (uapi/vgpu_hw.h)
 * @sms:           SMs (CAP_SMS)
 * @warp_size:     threads per warp (32)
 * @max_threads:   threads per CTA (CAP_MAX_THREADS)
 * @warps_per_sm:  resident warps per SM (CAP_WARPS_PER_SM)
 * @ctas_per_sm:   resident CTAs per SM (CAP_CTAS_PER_SM)
 * @regs_per_sm:   32-bit registers per SM (CAP_REGS_PER_SM), which one
 *                 CTA may also use all of
 * @smem_per_sm:   shared-memory bytes per SM (CAP_SMEM)
 * @smem_cta:      shared-memory bytes one CTA may use, opted in
 *                 (CAP_SMEM_CTA); the rest of @smem_per_sm is what the
 *                 device keeps of each CTA's share (1 KiB on h100)
 * @cluster:       portable cluster size (CAP_CLUSTER)
 * @cluster_max:   non-portable cluster size (CAP_CLUSTER_MAX)
 * @gpc_sms:       @gpcs GPCs' SMs that clusters of more than 2 CTAs
 *                 use, one CTA of a cluster an SM (the h100 model's
 *                 VGPU_H100_GPC_SMS); NULL: all @sms SMs, as one GPC
 * @gpcs:          entries of @gpc_sms
 */
struct cuv_occ_device {
	uint32_t sms;
	uint32_t warp_size;
	uint32_t max_threads;
	uint32_t warps_per_sm;
	uint32_t ctas_per_sm;
	uint32_t regs_per_sm;
	uint32_t smem_per_sm;
	uint32_t smem_cta;
	uint32_t cluster;
	uint32_t cluster_max;
	const uint8_t *gpc_sms;
	uint32_t gpcs;
};

/**
 * struct cuv_occ_func - a function's attributes (cuFuncGetAttribute)
 * @num_regs:     CU_FUNC_ATTRIBUTE_NUM_REGS
 * @max_threads:  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
 * @smem_static:  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
 * @max_dyn_smem: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
 * @carveout:     CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: -1
 *                (none) or a percentage of @smem_per_sm
 * @cache:        the cache configuration (cuFuncSetCacheConfig, else the
 *                context's), which stands for a carveout when it is -1
 * @barriers:     named barriers the function uses (0: one)
 */
struct cuv_occ_func {
	int num_regs;
	int max_threads;
	uint32_t smem_static;
	uint32_t max_dyn_smem;
	int carveout;
	CUfunc_cache cache;
	int barriers;
};

/*
 * CTAs of @block threads with @dyn bytes of dynamic shared memory one SM
 * holds at once (cuOccupancyMaxActiveBlocksPerMultiprocessor); 0 where
 * one does not fit.  @block > 0.
 */
int cuv_occ_blocks(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int block,
		   size_t dyn);

/*
 * cuv_occ_blocks() is the lesser of these two: the CTAs over the warps,
 * CTA slots, registers and barriers (0 for a @block out of range), and
 * over shared memory alone, which depends on @dyn only through the
 * rounded need, cuv_occ_smem_fixed() + @dyn up to a multiple of 128
 * (and on @dyn being at most @max_dyn_smem): the device runtime's
 * occupancy tables (cu_module.c) are made of them.
 */
int cuv_occ_blocks_but_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
			    int block);
int cuv_occ_blocks_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f, size_t dyn);
uint64_t cuv_occ_smem_fixed(const struct cuv_occ_device *d, const struct cuv_occ_func *f);

/*
 * The most registers a thread (a multiple of 8, at most 255) with which a
 * CTA of @threads threads fits the SM's register file: what ptxas holds a
 * kernel to for launch bounds of @threads (168 for 384, 64 for 1024).
 */
int cuv_occ_regs_cap(const struct cuv_occ_device *d, int threads);

/*
 * cuOccupancyMaxPotentialBlockSize: the block size (a multiple of the warp
 * size up to @limit, or @limit itself) with the most threads resident per
 * SM, the largest of equals; *@grid the CTAs that fill the device at it.
 * @b2d, when not NULL, gives each block size's dynamic shared memory in
 * place of @dyn; @limit 0 is the device's and the function's limit.
 * Returns the block size (0 when none fits).
 */
int cuv_occ_best_block(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
		       CUoccupancyB2DSize b2d, size_t dyn, int limit, int *grid);

/*
 * cuOccupancyAvailableDynamicSMemPerBlock: the dynamic shared memory a CTA
 * of @block threads may have with @nblocks of them on one SM.
 * CUDA_ERROR_INVALID_VALUE when @nblocks < 1 or more than fit without any.
 */
CUresult cuv_occ_dyn_smem(const struct cuv_occ_device *d, const struct cuv_occ_func *f,
			  int nblocks, int block, size_t *out);

/*
 * cuOccupancyMaxActiveClusters: clusters of @size CTAs of @block threads
 * with @dyn bytes each that the device holds at once (0 for @size 0).
 */
int cuv_occ_clusters(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int block,
		     size_t dyn, unsigned int size);

/*
 * cuOccupancyMaxPotentialClusterSize: the largest cluster of such CTAs
 * the device holds, at most its portable size (non-portable size with
 * @non_portable); 0 when no CTA fits.
 */
int cuv_occ_cluster_size(const struct cuv_occ_device *d, const struct cuv_occ_func *f, int block,
			 size_t dyn, bool non_portable);

#endif /* CU_OCCUPANCY_H */
