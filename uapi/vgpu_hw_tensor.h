/* SPDX-License-Identifier: MIT */
/*
 * vGPU hardware interface: the tensor map, the descriptor of a tensor that
 * the tensor copies read.  Part of vgpu_hw.h, which includes it: include
 * that.
 */
#ifndef VGPU_HW_TENSOR_H
#define VGPU_HW_TENSOR_H

#ifndef VGPU_HW_H
#error "include vgpu_hw.h, not vgpu_hw_tensor.h"
#endif

/*
 * ---- Tensor map: the 128-byte descriptor of a tensor in global memory,
 * read by the tensor copies (CP.ASYNC.BULK.TENSOR*) from a 64-byte-aligned
 * global address ----
 *
 * Element (x0, .., x4) lies at base + x0 * elem_size + sum over d >= 1 of
 * x_d * strides[d - 1].  Out-of-bounds elements (a coordinate < 0 or >=
 * dims[d] in any dimension) read as zero and are not written by stores.
 * A tile-mode box starts at a 16-byte boundary of a row (coordinate 0 x
 * elem_size a multiple of 16), and a store's or reduction's at no negative
 * coordinate; else ASYNC_COPY (an H200 raises an illegal instruction).
 * A map has a mode, which the instruction names too (PTX's .load_mode):
 *
 * Tile mode (VGPU_TMAP_TILE, CP.ASYNC.BULK.TENSOR[.GLOBAL]): a copy moves
 * a box: for each dimension d it takes ceil(box[d] / elem_strides[d])
 * elements starting at the coordinate the instruction gives and stepping
 * elem_strides[d]; shared memory holds the box densely, dimension 0
 * fastest.
 *
 * Im2col mode (VGPU_TMAP_IM2COL, CP.ASYNC.BULK.TENSOR[.GLOBAL].IM2COL;
 * PTX ISA 5.5.4): the tensor is a batch of images of rank 3, 4 or 5:
 * dimension 0 is the channels C, dimensions 1 .. rank-2 the pixel's W, H,
 * D, dimension rank-1 the image N (NWC, NHWC, NDHWC).  A copy moves
 * @pixels pixels, each @channels consecutive channels from the
 * instruction's coordinate c0 (c0 .. c0 + channels - 1); shared memory
 * holds them densely, pixel after pixel (pixels x channels elements).
 * In spatial dimension d (s = d - 1 indexes lower, upper and the
 * instruction's im2col offsets off[]; a store has none: 0) the pixels
 * lie in the bounding box [lo_d, hi_d], both ends included:
 *
 *   lo_d = lower[s] + off[s]        hi_d = dims[d] - 1 + upper[s] + off[s]
 *
 * The first pixel is at x_d = coord[d] + off[s], n = coord[rank-1]
 * (coord[d] must lie in [lower[s], dims[d] - 1 + upper[s]]: the filter
 * base inside the box; else ASYNC_COPY, where an H200 faults).  The next pixel: x_1 +=
 * elem_strides[1]; past hi_1 it restarts at lo_1 and x_2 +=
 * elem_strides[2], and so on up the spatial dimensions; past the last
 * one's hi it restarts at its lo and n += elem_strides[rank-1] (W
 * fastest, then H, D, N; N's traversal stride steps the images, as an
 * H200 does, though PTX names only D, H and W's).  Pixels past the last
 * image (n >= dims[rank-1]) are out of bounds.  elem_strides[0] (C) does
 * not step anything (CUDA: "ignored").  A store (PTX's .im2col_no_offs)
 * writes the same walk; it requires the box inside the tensor (lower[] >=
 * 0, upper[] <= 0) and coordinates >= 0 (else ASYNC_COPY), so only C and
 * N can leave it.
 *
 * The instruction's im2col offsets are 16-bit unsigned: below 2^16 at
 * rank 3, 2^8 at rank 4, 2^5 at rank 5; its channel coordinate c0 a
 * multiple of 16 bytes (c0 * elem_size; an H200 faults on others).  Else
 * ASYNC_COPY.
 *
 * Tensor reductions (CP.REDUCE.ASYNC.BULK.TENSOR[.IM2COL], PTX's
 * cp.reduce.async.bulk.tensor) walk as stores do (tile, or im2col with no
 * offsets) and reduce each in-bounds element of global memory with its
 * element in shared memory, atomically element by element, in the type
 * dtype names.  The operations each type has (PTX ISA's table, and ADD
 * of F64 which an H200 does; any other pair: TENSOR_MAP, where an H200
 * raises an illegal instruction): ADD on U32 S32 U64 F32 F32_FTZ F64 F16
 * BF16; MIN and MAX on U32 S32 U64 S64 F16 BF16; INC and DEC on U32;
 * AND, OR and XOR on U32 S32 U64 (S64 faults on the H200).  A tile
 * box's coordinates must be >= 0 and its first one's bytes (c0 *
 * elem_size) a multiple of 16, as on the H200; else ASYNC_COPY.  ADD of
 * F32_FTZ flushes subnormal
 * operands and result to zero, of F32, F64, F16 and BF16 it keeps them;
 * a NaN result of F32, F16 and BF16 is the canonical 0x7fffffff / 0x7fff;
 * MIN and MAX of F16 and BF16 are minNum/maxNum, -0 below +0 (the
 * atomics' rules, vgpu_core.h; measured on an H200,
 * tests/cuda/real-gpu/tensor-reduce-h200-2026-11-30).
 *
 * The rules of a map (one broken: TENSOR_MAP at the map's address):
 *   every mode: magic; rank as the instruction's; elem_size 1, 2, 4 or 8;
 *     dtype 0 .. VGPU_TMAP_DT_MAX, and if not 0 of elem_size bytes;
 *     oob_fill, swizzle, interleave and pad1 0; base 16-aligned; for
 *     d < rank: dims[d] >= 1,
 *     elem_strides[d] 1 .. 8, strides[d - 1] a multiple of 16;
 *     mode as the instruction's (0 or 1);
 *   tile mode: box[d] 1 .. 256 for d < rank; channels, pixels, lower[]
 *     and upper[] 0;
 *   im2col mode: rank 3 .. 5; box[] 0; channels 1 .. 256 and a multiple
 *     of 16 bytes (channels * elem_size); pixels 1 .. 1024; lower[s] and
 *     upper[s] for s < rank - 2 in [-2^15, 2^15) at rank 3, [-2^7, 2^7)
 *     at rank 4, [-2^4, 2^4) at rank 5, and a box that is not empty:
 *     lower[s] <= dims[d] - 1 + upper[s]; lower[s] and upper[s] 0 for
 *     s >= rank - 2.
 */
#define VGPU_TMAP_MAGIC 0x50414d54u /* "TMAP" */
#define VGPU_TMAP_MAX_RANK 5
#define VGPU_TMAP_MAX_BOX 256u
#define VGPU_TMAP_MAX_ELEM_STRIDE 8u
#define VGPU_TMAP_TILE 0u
#define VGPU_TMAP_IM2COL 1u
#define VGPU_TMAP_MAX_CHANNELS 256u
#define VGPU_TMAP_MAX_PIXELS 1024u

/*
 * Element types (dtype): PTX's .elemtype numbering (tensormap.replace)
 * plus one; 0 leaves the type unsaid, which copies allow and reductions
 * (CP.REDUCE.ASYNC.BULK.TENSOR) refuse.
 */
#define VGPU_TMAP_DT_NONE 0u
#define VGPU_TMAP_DT_U8 1u
#define VGPU_TMAP_DT_U16 2u
#define VGPU_TMAP_DT_U32 3u
#define VGPU_TMAP_DT_S32 4u
#define VGPU_TMAP_DT_U64 5u
#define VGPU_TMAP_DT_S64 6u
#define VGPU_TMAP_DT_F16 7u
#define VGPU_TMAP_DT_F32 8u
#define VGPU_TMAP_DT_F32_FTZ 9u
#define VGPU_TMAP_DT_F64 10u
#define VGPU_TMAP_DT_BF16 11u
#define VGPU_TMAP_DT_TF32 12u
#define VGPU_TMAP_DT_TF32_FTZ 13u
#define VGPU_TMAP_DT_MAX VGPU_TMAP_DT_TF32_FTZ

/* The bytes of an element of type @dt (1 .. VGPU_TMAP_DT_MAX), else 0. */
static inline __u32 vgpu_tmap_dt_size(__u32 dt)
{
	static const __u8 size[VGPU_TMAP_DT_MAX + 1] = { 0, 1, 2, 4, 4, 8, 8, 2, 4, 4, 8, 2, 4, 4 };

	return dt <= VGPU_TMAP_DT_MAX ? size[dt] : 0;
}

struct vgpu_tensor_map {
	__u64 base;		 /* global address of element 0, 16-aligned */
	__u32 magic;		 /* VGPU_TMAP_MAGIC */
	__u8 rank;		 /* 1 .. 5 (im2col: 3 .. 5) */
	__u8 elem_size;		 /* 1, 2, 4 or 8 bytes */
	__u8 oob_fill;		 /* 0: zeros (the only fill mode) */
	__u8 mode;		 /* VGPU_TMAP_TILE or VGPU_TMAP_IM2COL */
	__u32 dims[VGPU_TMAP_MAX_RANK];	/* elements per dimension, >= 1 */
	__u8 swizzle;		 /* must be zero (tensormap.replace's swizzle_mode) */
	__u8 dtype;		 /* VGPU_TMAP_DT_*: element type; 0 untyped */
	__u8 interleave;	 /* must be zero (tensormap.replace's interleave) */
	__u8 pad1;		 /* must be zero */
	__u64 strides[VGPU_TMAP_MAX_RANK - 1]; /* bytes, dims 1..rank-1, 16-multiple */
	__u32 box[VGPU_TMAP_MAX_RANK];	/* tile: 1 .. 256; im2col: 0 */
	__u32 elem_strides[VGPU_TMAP_MAX_RANK]; /* 1 .. 8 */
	/* im2col mode; 0 in tile mode */
	__u16 channels;		 /* channels per pixel, 1 .. 256 */
	__u16 pixels;		 /* pixels per copy (PTX's per column), 1 .. 1024 */
	__s16 lower[3];		 /* bounding box's lower corner: W, H, D */
	__s16 upper[3];		 /* its upper corner, from dims - 1: W, H, D */
};

_Static_assert(sizeof(struct vgpu_tensor_map) == 128, "tensor map layout");

#endif /* VGPU_HW_TENSOR_H */
