/* SPDX-License-Identifier: MIT */
/*
 * The little of CUDA the corpus needs, without the CUDA headers (Debian's
 * clang compiles with -nocudainc -nocudalib): qualifiers, thread indices,
 * __syncthreads, and the mbarrier/cp.async.bulk wrappers written as
 * cuda::ptx and CUTLASS write them, in inline PTX.
 */
#ifndef VGPU_CUDA_MIN_H
#define VGPU_CUDA_MIN_H

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define DEV static __device__ __attribute__((always_inline)) inline

typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

#define tid_x() __nvvm_read_ptx_sreg_tid_x()
#define ntid_x() __nvvm_read_ptx_sreg_ntid_x()
#define ctaid_x() __nvvm_read_ptx_sreg_ctaid_x()
#define nctaid_x() __nvvm_read_ptx_sreg_nctaid_x()
#define __syncthreads() __nvvm_bar_sync(0)
#define __float_as_uint(f) __builtin_bit_cast(u32, (float)(f))

/* __cvta_generic_to_shared */
DEV u32 smem_addr(const void *p)
{
	u32 a;

	asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }"
		     : "=r"(a) : "l"(p));
	return a;
}

DEV void mbar_init(u32 bar, u32 count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count)
		     : "memory");
}

DEV u64 mbar_arrive(u32 bar)
{
	u64 state;

	asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1];"
		     : "=l"(state) : "r"(bar) : "memory");
	return state;
}

DEV void mbar_arrive_expect_tx(u32 bar, u32 bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;"
		     ::"r"(bar), "r"(bytes) : "memory");
}

/* CUTLASS's ClusterBarrier::wait: a try_wait.parity loop in PTX */
DEV void mbar_wait_parity(u32 bar, u32 parity)
{
	asm volatile("{\n"
		     "  .reg .pred P1;\n"
		     "LAB_WAIT:\n"
		     "  mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\n"
		     "  @P1 bra DONE;\n"
		     "  bra LAB_WAIT;\n"
		     "DONE:\n"
		     "}\n" ::"r"(bar), "r"(parity) : "memory");
}

/* one try: cuda::ptx::mbarrier_try_wait with the state token */
DEV u32 mbar_try_wait(u32 bar, u64 state)
{
	u32 ok;

	asm volatile("{ .reg .pred p; mbarrier.try_wait.shared::cta.b64 p, [%1], %2;"
		     " selp.u32 %0, 1, 0, p; }"
		     : "=r"(ok) : "r"(bar), "l"(state) : "memory");
	return ok;
}

DEV void bulk_load(u32 dst, const void *src, u32 bytes, u32 bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
		     " [%0], [%1], %2, [%3];"
		     ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}

DEV u32 atomic_add_global(u32 *p, u32 v)
{
	u32 old;

	asm volatile("atom.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(v)
		     : "memory");
	return old;
}

DEV void atomic_add_shared(u32 addr, u32 v)
{
	asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

/* CUDA's CUtensorMap: 128 opaque bytes (vGPU's struct vgpu_tensor_map),
 * passed as a const __grid_constant__ parameter.  Debian's clang-19 does
 * not know the attribute: it copies the map into local memory and passes
 * the copy's address, which the tensor copy reads as well. */
struct __attribute__((aligned(64))) CUtensorMap {
	u64 opaque[16];
};
#define __grid_constant__

/* cuda::ptx::cp_async_bulk_tensor, 2-D tile, shared <- global */
DEV void tensor_load_2d(u32 dst, const CUtensorMap *map, s32 x, s32 y, u32 bar)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile"
		     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
		     ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}

/* 1-D tile */
DEV void tensor_load_1d(u32 dst, const CUtensorMap *map, s32 x, u32 bar)
{
	asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile"
		     ".mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
		     ::"r"(dst), "l"(map), "r"(x), "r"(bar) : "memory");
}

/* and global <- shared, in a bulk group */
DEV void tensor_store_2d(const CUtensorMap *map, s32 x, s32 y, u32 src)
{
	asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"
		     " [%0, {%1, %2}], [%3];" ::"l"(map), "r"(x), "r"(y), "r"(src) : "memory");
}
#endif
