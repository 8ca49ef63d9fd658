/* SPDX-License-Identifier: MIT */
/* libcuda.so.1: the PTX of a fatbin (cu_fatbin.c). */
#ifndef CU_FATBIN_H
#define CU_FATBIN_H

#include <stddef.h>

#include "cuda.h"

/*
 * If @image is a fatbin (or nvcc's wrapper of one), its PTX for vGPU:
 * a malloc'd NUL-terminated copy in *@ptx (zstd-decompressed when nvcc
 * compressed it), its length in *@len.  CUDA_ERROR_NOT_FOUND when @image
 * is no fatbin; CUDA_ERROR_NO_BINARY_FOR_GPU (with a message naming the
 * nvcc flag) when it holds no PTX, or @image is a bare cubin;
 * CUDA_ERROR_INVALID_IMAGE when it is damaged.  @size: the bytes known to
 * be readable at @image, 0 when unknown (the fatbin header says).
 */
CUresult cuv_fatbin_ptx(const void *image, size_t size, char **ptx, size_t *len);

/*
 * The PTX of any image cuModuleLoadData takes: a fatbin's as above, else
 * the image itself as NUL-terminated text (a malloc'd copy either way).
 */
CUresult cuv_image_ptx(const void *image, size_t size, char **ptx, size_t *len);

#endif /* CU_FATBIN_H */
