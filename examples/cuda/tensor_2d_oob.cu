// vgpu-run: --block 128 --buffer img:960 --tensor-map map:img:4:24x10:16x8 --buffer out:512 --arg ptr:img --arg tmap:map --arg ptr:out --dump out
// SPDX-License-Identifier: MIT
//
// CUDA port of ../tensor_2d_oob.vgs: a 16 x 8 tile of a 24 x 10 image
// (img[y][x] = 100 * y + x + 1, written by the kernel) loaded at (16, 6)
// through a tensor map passed by value; columns 24.. and rows 10.. arrive
// as zeros, and the mbarrier expects the whole box, 512 bytes.
#include "../../tests/ptx/cuda_min.h"

extern "C" __global__ void tile_oob(u32 *img, const __grid_constant__ CUtensorMap map, u32 *out)
{
	__shared__ __attribute__((aligned(128))) u32 tile[16 * 8];
	__shared__ u64 bar;
	u32 t = tid_x(), b = smem_addr(&bar);

	for (u32 i = t; i < 240; i += 128)
		img[i] = 100 * (i / 24) + i % 24 + 1;
	asm volatile("membar.gl;" ::: "memory");
	if (t == 0)
		mbar_init(b, 1);
	__syncthreads();
	if (t == 0) {
		tensor_load_2d(smem_addr(tile), &map, 16, 6, b);
		mbar_arrive_expect_tx(b, 512);
	}
	mbar_wait_parity(b, 0);
	out[t] = tile[t];
}
