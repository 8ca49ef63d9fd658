/* SPDX-License-Identifier: MIT */
/*
 * A device exception's CUDA error: what libcuda reports for a launch that
 * raised it (cu_stream.c), and its name (test_ptxgen compares it with the
 * error an H200 reported for the same kernel).  GLOBAL_FAULT is an illegal
 * address, MISALIGNED a misaligned one; ILLEGAL_INSTR, and the copy
 * engine's ASYNC_COPY and TENSOR_MAP, an illegal instruction, which is what
 * an H200 raises for a tensor copy's box off a 16-byte boundary or before
 * the tensor and for a reduction its map's type lacks
 * (tests/cuda/real-gpu/tensor-store-h200-2026-11-30,
 * tensor-reduce-h200-2026-11-30); the rest a launch failure.
 */
#ifndef CU_EXC_H
#define CU_EXC_H

#include <stdint.h>

#include "vgpu_hw.h"

#define CUV_EXC_RESULTS(X)                                                     \
	X(VGPU_EXC_GLOBAL_FAULT, CUDA_ERROR_ILLEGAL_ADDRESS)                   \
	X(VGPU_EXC_MISALIGNED, CUDA_ERROR_MISALIGNED_ADDRESS)                  \
	X(VGPU_EXC_ILLEGAL_INSTR, CUDA_ERROR_ILLEGAL_INSTRUCTION)              \
	X(VGPU_EXC_ASYNC_COPY, CUDA_ERROR_ILLEGAL_INSTRUCTION)                 \
	X(VGPU_EXC_TENSOR_MAP, CUDA_ERROR_ILLEGAL_INSTRUCTION)                 \
	X(VGPU_EXC_PC_RANGE, CUDA_ERROR_INVALID_PC)                            \
	X(VGPU_EXC_BUDGET, CUDA_ERROR_LAUNCH_TIMEOUT)                          \
	X(VGPU_EXC_ASSERT, CUDA_ERROR_ASSERT)

static inline const char *cuv_exc_result_name(uint32_t code)
{
#define CUV_X_NAME(exc, res)                                                   \
	if (code == (exc))                                                     \
		return #res;
	CUV_EXC_RESULTS(CUV_X_NAME)
#undef CUV_X_NAME
	return "CUDA_ERROR_LAUNCH_FAILED";
}

#ifdef __cuda_cuda_h__
static inline CUresult cuv_exc_result(uint32_t code)
{
#define CUV_X_RES(exc, res)                                                    \
	if (code == (exc))                                                     \
		return res;
	CUV_EXC_RESULTS(CUV_X_RES)
#undef CUV_X_RES
	return CUDA_ERROR_LAUNCH_FAILED;
}
#endif

#endif
