// SPDX-License-Identifier: MIT
/*
 * TMA im2col mode as a convolution kernel uses it (CUTLASS's
 * SM90_TMA_LOAD_IM2COL, implicit GEMM): the activation tensor (NWC, NHWC
 * or NDHWC) is described once by cuTensorMapEncodeIm2col with the
 * convolution's padding in the bounding box's corners (lower = -pad,
 * upper = pad - (filter - 1) * dilation, in W, H, D order) and its
 * strides as the traversal strides; each CTA computes a tile of BM
 * output pixels by loading, for every filter tap and channel block, the
 * column of BM pixels x BK channels with cp.async.bulk.tensor...im2col
 * from its first output pixel's filter base, the tap as the im2col
 * offsets.  Then single loads that show the definition's corners: the
 * bounding box's positive corners, channels and images out of bounds,
 * traversal strides, 16-bit elements, the multicast form, the
 * .im2col_no_offs store.
 *
 * Every expected value is computed on the host from the documentation
 * alone: the convolutions from their definition (zero padding), the
 * columns from the PTX ISA's im2col mode (5.5.4: the pixels of the
 * bounding box [lower + offset, dims - 1 + upper + offset] walked W
 * fastest from coordinate + offset, then H, D and the next image, each
 * channelsPerPixel channels from the channel coordinate; out of the
 * tensor zero) and cuTensorMapEncodeIm2col's parameters.  Each case
 * prints PASS or FAIL and its name.
 *
 * Runs on vGPU (make check) and unchanged on a GPU of compute capability
 * 9.0: nvcc -arch=sm_90a -o tma_im2col tests/corpus/tma_im2col.cu -lcuda
 */
#include <cuda.h>
#include <cudaTypedefs.h> /* PFN_cuTensorMapEncodeIm2col */
#include <cuda/ptx>
#include <cooperative_groups.h>

#include "corpus.h"

namespace cg = cooperative_groups;
namespace ptx = cuda::ptx;

/* ---- device ---- */

/*
 * The im2col load of NS spatial dimensions (a 3-D, 4-D or 5-D map):
 * coordinates c = {channel, w, (h, (d,)) n}, offsets o = {w, (h, (d))}.
 */
template <int NS>
__device__ static void im2col_load(void *dst, const CUtensorMap *map, uint64_t *bar, const int *c,
				   const uint16_t *o)
{
	uint32_t d = (uint32_t)__cvta_generic_to_shared(dst);
	uint32_t b = (uint32_t)__cvta_generic_to_shared(bar);

	if (NS == 1)
		asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.im2col"
			     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5], {%6};"
			     :
			     : "r"(d), "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(b), "h"(o[0])
			     : "memory");
	else if (NS == 2)
		asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col"
			     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6],"
			     " {%7, %8};"
			     :
			     : "r"(d), "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(b),
			       "h"(o[0]), "h"(o[1])
			     : "memory");
	else
		asm volatile("cp.async.bulk.tensor.5d.shared::cluster.global.im2col"
			     ".mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5, %6}], [%7],"
			     " {%8, %9, %10};"
			     :
			     : "r"(d), "l"(map), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]),
			       "r"(b), "h"(o[0]), "h"(o[1]), "h"(o[2])
			     : "memory");
}

__device__ static void wait(uint64_t *bar, uint32_t phase)
{
	while (!ptx::mbarrier_try_wait_parity(bar, phase))
		;
}

/* A convolution's shape; spatial arrays in W, H, D order (unused: 1, 0) */
struct conv {
	int n, c, k;
	int in[3], f[3], pad[3], str[3], dil[3], out[3];
};

enum { BM = 32, BK = 8, KMAX = 8 };

/*
 * Forward convolution as an implicit GEMM, output y (N, outputs..., K):
 * CTA b computes output pixels b*BM .. b*BM+BM-1 (pixel index q fastest,
 * then p, z, n), thread t pixel t % BM and output channel t / BM.  For
 * each filter tap and block of BK channels thread 0 loads the column
 * (BM pixels x BK channels) from the tile's first pixel's filter base with
 * the tap as the offsets; every thread then accumulates its product.
 */
template <int NS>
__global__ void __launch_bounds__(BM *KMAX)
	conv_im2col(const __grid_constant__ CUtensorMap map, const int *w, int *y, conv cv)
{
	__shared__ alignas(128) int col[BM * BK];
	__shared__ uint64_t bar;
	int m0 = blockIdx.x * BM, m = threadIdx.x % BM, k = threadIdx.x / BM, acc = 0;
	int base[3], rem = m0, mtotal = cv.n, taps = 1;
	uint32_t phase = 0;

	for (int i = 0; i < NS; i++) {
		base[i] = rem % cv.out[i] * cv.str[i] - cv.pad[i];
		rem /= cv.out[i];
		mtotal *= cv.out[i];
		taps *= cv.f[i];
	}
	if (threadIdx.x == 0) {
		ptx::mbarrier_init(&bar, 1);
		ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
	}
	__syncthreads();
	for (int tap = 0; tap < taps; tap++) {
		int fi[3] = { 0, 0, 0 }, t = tap;

		for (int i = 0; i < NS; i++) {
			fi[i] = t % cv.f[i];
			t /= cv.f[i];
		}
		for (int c0 = 0; c0 < cv.c; c0 += BK) {
			if (threadIdx.x == 0) {
				int c[5] = { c0 };
				uint16_t o[3];

				for (int i = 0; i < NS; i++) {
					c[1 + i] = base[i];
					o[i] = (uint16_t)(fi[i] * cv.dil[i]);
				}
				c[1 + NS] = rem; /* the tile's first image */
				(void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta,
								    ptx::space_shared, &bar,
								    sizeof(col));
				im2col_load<NS>(col, &map, &bar, c, o);
			}
			wait(&bar, phase);
			phase ^= 1;
			if (k < cv.k) {
				/* the filter KTRSC: taps in the order W fastest */
				const int *wk = w + ((size_t)k * taps + tap) * cv.c + c0;

				for (int c = 0; c < BK; c++)
					acc += col[m * BK + c] * wk[c];
			}
			__syncthreads(); /* the column is read before the next load */
		}
	}
	if (k < cv.k && m0 + m < mtotal)
		y[(size_t)(m0 + m) * cv.k + k] = acc;
}

/* One column of @bytes bytes, loaded and copied out (32 threads). */
template <int NS>
__global__ void column(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2, int c3,
		       int c4, int o0, int o1, int o2, unsigned char *out, int bytes)
{
	__shared__ alignas(128) unsigned char buf[4096];
	__shared__ uint64_t bar;
	int c[5] = { c0, c1, c2, c3, c4 };
	uint16_t o[3] = { (uint16_t)o0, (uint16_t)o1, (uint16_t)o2 };

	if (threadIdx.x == 0) {
		ptx::mbarrier_init(&bar, 1);
		ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
		(void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
						    &bar, bytes);
		im2col_load<NS>(buf, &map, &bar, c, o);
	}
	wait(&bar, 0);
	for (int i = threadIdx.x; i < bytes; i += blockDim.x)
		out[i] = buf[i];
}

/* The 4-D column multicast from CTA rank 0 to both CTAs of the cluster. */
__global__ void __cluster_dims__(2, 1, 1)
	column_multicast(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2, int c3,
			 int o0, int o1, unsigned char *out, int bytes)
{
	__shared__ alignas(128) unsigned char buf[4096];
	__shared__ uint64_t bar;
	cg::cluster_group cluster = cg::this_cluster();

	if (threadIdx.x == 0) {
		ptx::mbarrier_init(&bar, 1);
		ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
		(void)ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared,
						    &bar, bytes);
	}
	cluster.sync(); /* both CTAs' barriers exist and expect the bytes */
	if (cluster.block_rank() == 0 && threadIdx.x == 0) {
		uint32_t d = (uint32_t)__cvta_generic_to_shared(buf);
		uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);

		asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.im2col"
			     ".mbarrier::complete_tx::bytes.multicast::cluster"
			     " [%0], [%1, {%2, %3, %4, %5}], [%6], {%7, %8}, %9;"
			     :
			     : "r"(d), "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(b),
			       "h"((uint16_t)o0), "h"((uint16_t)o1), "h"((uint16_t)3)
			     : "memory");
	}
	wait(&bar, 0);
	for (int i = threadIdx.x; i < bytes; i += blockDim.x)
		out[blockIdx.x * bytes + i] = buf[i];
	cluster.sync(); /* no multicast reaches an exited CTA */
}

/* A column written from shared memory with the .im2col_no_offs store. */
__global__ void column_store(const __grid_constant__ CUtensorMap map, int c0, int c1, int c2,
			     int c3, const unsigned char *src, int bytes)
{
	__shared__ alignas(128) unsigned char buf[4096];

	for (int i = threadIdx.x; i < bytes; i += blockDim.x)
		buf[i] = src[i];
	asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
	__syncthreads();
	if (threadIdx.x == 0) {
		asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.im2col_no_offs.bulk_group"
			     " [%0, {%1, %2, %3, %4}], [%5];"
			     :
			     : "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
			       "r"((uint32_t)__cvta_generic_to_shared(buf))
			     : "memory");
		asm volatile("cp.async.bulk.commit_group;" ::: "memory");
		asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
	}
}

/* ---- host ---- */

static PFN_cuTensorMapEncodeIm2col_v12000 encode_im2col(void)
{
	cudaDriverEntryPointQueryResult q;
	void *fn = nullptr;

	if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeIm2col", &fn, 12000,
					     cudaEnableDefault, &q) != cudaSuccess ||
	    q != cudaDriverEntryPointSuccess)
		return nullptr;
	return reinterpret_cast<PFN_cuTensorMapEncodeIm2col_v12000>(fn);
}

/*
 * A dense tensor of @rank dims (dims[0] the channels), @es-byte elements,
 * and an im2col map of it: corners lo/up in W, H, D order, @cpp channels
 * per pixel, @ppc pixels per column, element strides @estr (NULL: 1).
 */
struct tensor {
	int rank, es;
	uint64_t dims[5];
	std::vector<unsigned char> host;
	unsigned char *dev = nullptr;

	tensor(int r, int e, const uint64_t *d) : rank(r), es(e)
	{
		uint64_t n = es;

		for (int i = 0; i < rank; i++)
			n *= dims[i] = d[i];
		host.resize(n);
	}
	tensor(int r, int e, std::initializer_list<uint64_t> d) : tensor(r, e, d.begin()) {}
	~tensor()
	{
		if (dev)
			cudaFree(dev);
	}
	tensor(const tensor &) = delete;
	tensor &operator=(const tensor &) = delete;
	uint64_t stride(int d) const /* bytes between elements of dimension d */
	{
		uint64_t s = es;

		for (int i = 0; i < d; i++)
			s *= dims[i];
		return s;
	}
	bool upload()
	{
		return cudaMalloc(&dev, host.size()) == cudaSuccess &&
		       cudaMemcpy(dev, host.data(), host.size(), cudaMemcpyHostToDevice) == cudaSuccess;
	}
	bool map(CUtensorMap *m, CUtensorMapDataType type, const int *lo, const int *up, int cpp,
		 int ppc, const cuuint32_t *estr = nullptr) const
	{
		auto encode = encode_im2col();
		cuuint64_t st[4];
		cuuint32_t e[5] = { 1, 1, 1, 1, 1 };

		for (int d = 1; d < rank; d++)
			st[d - 1] = stride(d);
		if (estr)
			memcpy(e, estr, rank * sizeof(*e));
		return encode &&
		       encode(m, type, rank, dev, dims, st, lo, up, cpp, ppc, e,
			      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
			      CU_TENSOR_MAP_L2_PROMOTION_NONE,
			      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
	}
};

/* "PASS name" / "FAIL name", and the test's result */
static int report(const char *name, int r)
{
	printf("%s %s\n", r ? "FAIL" : "PASS", name);
	return r;
}

/* ---- the convolutions ---- */

/*
 * y[n][o...][k] = sum over the filter taps f and channels c of
 * x[n][o * str - pad + f * dil][c] * w[k][f][c], x zero outside.
 */
static std::vector<int> ref_conv(const conv &cv, int ns, const std::vector<int> &x,
				 const std::vector<int> &w)
{
	int pix = 1, taps = 1, inpix = 1;

	for (int i = 0; i < ns; i++) {
		pix *= cv.out[i];
		taps *= cv.f[i];
		inpix *= cv.in[i];
	}
	std::vector<int> y((size_t)cv.n * pix * cv.k);
	for (int n = 0; n < cv.n; n++)
		for (int p = 0; p < pix; p++)
			for (int k = 0; k < cv.k; k++) {
				int s = 0;

				for (int tap = 0; tap < taps; tap++) {
					int idx = 0, mul = 1, rp = p, rt = tap;
					bool in = true;

					for (int i = 0; i < ns; i++) {
						int o = rp % cv.out[i], f = rt % cv.f[i];
						int xi = o * cv.str[i] - cv.pad[i] + f * cv.dil[i];

						rp /= cv.out[i];
						rt /= cv.f[i];
						in = in && xi >= 0 && xi < cv.in[i];
						idx += xi * mul;
						mul *= cv.in[i];
					}
					if (!in)
						continue;
					for (int c = 0; c < cv.c; c++)
						s += x[((size_t)n * inpix + idx) * cv.c + c] *
						     w[((size_t)k * taps + tap) * cv.c + c];
				}
				y[((size_t)n * pix + p) * cv.k + k] = s;
			}
	return y;
}

template <int NS> static int run_conv(conv cv)
{
	int pix = 1, taps = 1, inpix = 1, lo[3], up[3];

	for (int i = 0; i < NS; i++) {
		cv.out[i] = (cv.in[i] + 2 * cv.pad[i] - (cv.f[i] - 1) * cv.dil[i] - 1) / cv.str[i] + 1;
		pix *= cv.out[i];
		taps *= cv.f[i];
		inpix *= cv.in[i];
		lo[i] = -cv.pad[i];
		up[i] = cv.pad[i] - (cv.f[i] - 1) * cv.dil[i];
	}
	uint64_t xd[5] = { (uint64_t)cv.c };

	for (int i = 0; i < NS; i++)
		xd[1 + i] = cv.in[i];
	xd[NS + 1] = cv.n;
	tensor x(NS + 2, 4, xd);
	std::vector<int> xv = corpus_ints<int>((size_t)cv.n * inpix * cv.c, 500 + NS, 19);
	std::vector<int> w = corpus_ints<int>((size_t)cv.k * taps * cv.c, 600 + NS, 9);

	for (auto &v : xv)
		v -= 9;
	for (auto &v : w)
		v -= 4;
	memcpy(x.host.data(), xv.data(), x.host.size());
	CHECK(x.upload());
	CUtensorMap map{};
	cuuint32_t estr[5] = { 1, 1, 1, 1, 1 };

	for (int i = 0; i < NS; i++)
		estr[1 + i] = cv.str[i];
	CHECK(x.map(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, lo, up, BK, BM, estr));
	dbuf<int> dw(w), dy((size_t)cv.n * pix * cv.k);
	int mtotal = cv.n * pix;

	conv_im2col<NS><<<(mtotal + BM - 1) / BM, BM * KMAX>>>(map, dw, dy, cv);
	CHECK_LAUNCH();
	CHECK_SAME(ref_conv(cv, NS, xv, w), dy.get());
	return 0;
}

/* NHWC 8x8, 16 channels, 3x3 filter, padding 1: 4 tiles, 2 channel blocks */
static int t_conv2d_3x3_pad1(void)
{
	conv cv = { 2, 16, 8, { 8, 8, 1 }, { 3, 3, 1 }, { 1, 1, 0 }, { 1, 1, 1 }, { 1, 1, 1 } };

	return report("conv2d_3x3_pad1", run_conv<2>(cv));
}

/* 9x9, stride 2, dilation 2, padding 2: 50 output pixels, the last tile's
 * pixels past the last image read as zeros */
static int t_conv2d_stride2_dilation2(void)
{
	conv cv = { 2, 8, 8, { 9, 9, 1 }, { 3, 3, 1 }, { 2, 2, 0 }, { 2, 2, 1 }, { 2, 2, 1 } };

	return report("conv2d_stride2_dilation2", run_conv<2>(cv));
}

/* NWC: a 3-D map, width 20, filter 5, padding 2 */
static int t_conv1d_nwc(void)
{
	conv cv = { 3, 8, 6, { 20, 1, 1 }, { 5, 1, 1 }, { 2, 0, 0 }, { 1, 1, 1 }, { 1, 1, 1 } };

	return report("conv1d_nwc", run_conv<1>(cv));
}

/* NDHWC: a 5-D map, 6x5x4, 3x3x3 filter, padding 1 */
static int t_conv3d_ndhwc(void)
{
	conv cv = { 1, 8, 8, { 6, 5, 4 }, { 3, 3, 3 }, { 1, 1, 1 }, { 1, 1, 1 }, { 1, 1, 1 } };

	return report("conv3d_ndhwc", run_conv<3>(cv));
}

/* ---- single columns ---- */

/*
 * The column by the PTX ISA's im2col mode: @ppc pixels from the filter
 * base coord[1..ns] + off, image coord[ns + 1], walking the bounding box
 * [lo + off, dims - 1 + up + off] W fastest (stepping estr) then H, D,
 * then the next image (stepping N's estr: an H200 does, where the PTX ISA
 * names only D, H and W's); each pixel @cpp channels from coord[0]; out
 * of the tensor zero.
 */
static std::vector<unsigned char> ref_column(const tensor &t, const int *coord, const int *off,
					     const int *lo, const int *up, int cpp, int ppc,
					     const cuuint32_t *estr)
{
	int ns = t.rank - 2;
	long x[3], n = coord[ns + 1];
	std::vector<unsigned char> col((size_t)ppc * cpp * t.es);

	for (int s = 0; s < ns; s++)
		x[s] = coord[1 + s] + off[s];
	for (int p = 0; p < ppc; p++) {
		bool in = n >= 0 && n < (long)t.dims[ns + 1];
		uint64_t at = n * t.stride(ns + 1);

		for (int s = 0; s < ns; s++) {
			in = in && x[s] >= 0 && x[s] < (long)t.dims[1 + s];
			at += x[s] * t.stride(1 + s);
		}
		for (int c = 0; c < cpp; c++) {
			long ch = coord[0] + c;
			bool cin = in && ch >= 0 && ch < (long)t.dims[0];

			for (int b = 0; b < t.es; b++)
				col[((size_t)p * cpp + c) * t.es + b] =
					cin ? t.host[at + ch * t.es + b] : 0;
		}
		int s = 0;

		for (; s < ns; s++) {
			x[s] += estr ? estr[1 + s] : 1;
			if (x[s] <= (long)t.dims[1 + s] - 1 + up[s] + off[s])
				break;
			x[s] = lo[s] + off[s];
		}
		if (s == ns)
			n += estr ? estr[ns + 1] : 1;
	}
	return col;
}

template <int NS>
static int run_column(tensor &t, CUtensorMapDataType type, const int *coord, const int *off,
		      const int *lo, const int *up, int cpp, int ppc, const cuuint32_t *estr)
{
	int bytes = cpp * ppc * t.es;
	CUtensorMap map{};
	dbuf<unsigned char> out(bytes);

	for (size_t i = 0; i < t.host.size(); i++)
		t.host[i] = (unsigned char)((i * 131 + 7) % 251);
	CHECK(t.upload());
	CHECK(t.map(&map, type, lo, up, cpp, ppc, estr));
	column<NS><<<1, 32>>>(map, coord[0], coord[1], coord[2], coord[3], coord[4], off[0], off[1],
			      off[2], out, bytes);
	CHECK_LAUNCH();
	CHECK_SAME(ref_column(t, coord, off, lo, up, cpp, ppc, estr), out.get());
	return 0;
}

/* Positive corners: the box starts inside the image and ends past it */
static int t_column_positive_corners(void)
{
	tensor t(4, 4, { 8, 6, 5, 2 });
	int coord[5] = { 0, 3, 2, 0 }, off[3] = { 1, 0 }, lo[2] = { 1, 2 }, up[2] = { 2, 1 };

	return report("column_positive_corners",
		      run_column<2>(t, CU_TENSOR_MAP_DATA_TYPE_INT32, coord, off, lo, up, 8, 40,
				    nullptr));
}

/* 16-bit elements; channels 16..31 of 24 (24..31 zero; the channel
 * coordinate at a multiple of 16 bytes, as a GPU requires); pixels past
 * the last image (zero); a 3-D map */
static int t_column_channels_and_images_past_the_end(void)
{
	tensor t(3, 2, { 24, 10, 3 });
	int coord[5] = { 16, -2, 1 }, off[3] = { 3 }, lo[1] = { -2 }, up[1] = { -1 };

	return report("column_channels_and_images_past_the_end",
		      run_column<1>(t, CU_TENSOR_MAP_DATA_TYPE_UINT16, coord, off, lo, up, 16, 32,
				    nullptr));
}

/* Negative channel coordinates (16 bytes) read zeros; N's traversal stride
 * steps the images: 0, 2, then past N */
static int t_column_negative_channels_image_stride(void)
{
	tensor t(4, 4, { 8, 4, 3, 3 });
	int coord[5] = { -4, 0, 0, 0 }, off[3] = { 0, 0 }, lo[2] = { 0, 0 }, up[2] = { 0, 0 };
	cuuint32_t estr[4] = { 1, 1, 1, 2 };

	return report("column_negative_channels_image_stride",
		      run_column<2>(t, CU_TENSOR_MAP_DATA_TYPE_INT32, coord, off, lo, up, 8, 30,
				    estr));
}

/* Traversal strides 2 in W and H */
static int t_column_traversal_strides(void)
{
	tensor t(4, 4, { 4, 9, 7, 2 });
	int coord[5] = { 0, 1, -1, 0 }, off[3] = { 1, 1 }, lo[2] = { -1, -1 }, up[2] = { -1, -1 };
	cuuint32_t estr[4] = { 1, 2, 2, 1 };

	return report("column_traversal_strides",
		      run_column<2>(t, CU_TENSOR_MAP_DATA_TYPE_INT32, coord, off, lo, up, 4, 32,
				    estr));
}

/* elementStrides[0] is ignored without interleave (cuTensorMapEncodeIm2col) */
static int t_column_channel_stride_ignored(void)
{
	tensor t(4, 4, { 4, 9, 7, 2 });
	int coord[5] = { 0, 1, -1, 0 }, off[3] = { 1, 1 }, lo[2] = { -1, -1 }, up[2] = { -1, -1 };
	cuuint32_t estr[4] = { 2, 2, 2, 1 }, ref[4] = { 1, 2, 2, 1 };
	int bytes = 4 * 32 * 4;
	CUtensorMap map{};
	dbuf<unsigned char> out(bytes);

	for (size_t i = 0; i < t.host.size(); i++)
		t.host[i] = (unsigned char)((i * 131 + 7) % 251);
	if (!t.upload() || !t.map(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, lo, up, 4, 32, estr))
		return report("column_channel_stride_ignored", 1);
	column<2><<<1, 32>>>(map, 0, 1, -1, 0, 0, 1, 1, 0, out, bytes);
	if (cudaGetLastError() != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess ||
	    !corpus_same("column", ref_column(t, coord, off, lo, up, 4, 32, ref), out.get()))
		return report("column_channel_stride_ignored", 1);
	return report("column_channel_stride_ignored", 0);
}

/* NDHWC: a 5-D column, corners and offsets different in each dimension */
static int t_column_5d(void)
{
	tensor t(5, 4, { 4, 3, 4, 3, 2 });
	int coord[5] = { 0, 0, -2, 1, 0 }, off[3] = { 1, 0, 2 };
	int lo[3] = { -1, -2, -1 }, up[3] = { 0, -1, 1 };

	return report("column_5d", run_column<3>(t, CU_TENSOR_MAP_DATA_TYPE_INT32, coord, off, lo,
						 up, 4, 60, nullptr));
}

static int multicast_body(void)
{
	tensor t(4, 4, { 8, 6, 5, 2 });
	int coord[5] = { 0, 3, 2, 0 }, off[3] = { 1, 0 }, lo[2] = { 1, 2 }, up[2] = { 2, 1 };
	int bytes = 8 * 40 * 4;
	CUtensorMap map{};
	dbuf<unsigned char> out(2 * bytes);

	for (size_t i = 0; i < t.host.size(); i++)
		t.host[i] = (unsigned char)((i * 131 + 7) % 251);
	CHECK(t.upload());
	CHECK(t.map(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, lo, up, 8, 40));
	column_multicast<<<2, 32>>>(map, coord[0], coord[1], coord[2], coord[3], off[0], off[1], out,
				    bytes);
	CHECK_LAUNCH();
	std::vector<unsigned char> want = ref_column(t, coord, off, lo, up, 8, 40, nullptr);

	want.insert(want.end(), want.begin(), want.end());
	CHECK_SAME(want, out.get());
	return 0;
}

/* .multicast::cluster: one load lands in both CTAs of a cluster of 2 */
static int t_column_multicast(void)
{
	return report("column_multicast", multicast_body());
}

static int store_body(void)
{
	tensor t(4, 4, { 8, 5, 4, 2 });
	int coord[4] = { 4, 1, 2, 1 }, lo[2] = { 1, 0 }, up[2] = { -1, 0 };
	int cpp = 8, ppc = 12, bytes = cpp * ppc * 4;
	long x[2] = { coord[1], coord[2] }, n = coord[3];
	CUtensorMap map{};
	std::vector<unsigned char> src(bytes), want, got(t.host.size());

	for (size_t i = 0; i < t.host.size(); i++)
		t.host[i] = (unsigned char)((i * 131 + 7) % 251);
	for (int i = 0; i < bytes; i++)
		src[i] = (unsigned char)(i * 7 + 1);
	CHECK(t.upload());
	CHECK(t.map(&map, CU_TENSOR_MAP_DATA_TYPE_INT32, lo, up, cpp, ppc));
	dbuf<unsigned char> dsrc(src);

	column_store<<<1, 32>>>(map, coord[0], coord[1], coord[2], coord[3], dsrc, bytes);
	CHECK_LAUNCH();
	/* pixel p's channels go where the load's walk (no offsets) finds them */
	want = t.host;
	for (int p = 0; p < ppc; p++) {
		int s = 0;

		for (int c = 0; c < cpp && n < (long)t.dims[3]; c++) {
			long ch = coord[0] + c;

			if (ch < (long)t.dims[0])
				memcpy(&want[n * t.stride(3) + x[1] * t.stride(2) + x[0] * t.stride(1) +
					     ch * 4],
				       &src[(p * cpp + c) * 4], 4);
		}
		for (; s < 2; s++) {
			x[s] += 1;
			if (x[s] <= (long)t.dims[1 + s] - 1 + up[s])
				break;
			x[s] = lo[s];
		}
		if (s == 2)
			n++;
	}
	CHECK_OK(cudaMemcpy(got.data(), t.dev, got.size(), cudaMemcpyDeviceToHost));
	CHECK_SAME(want, got);
	return 0;
}

/* .im2col_no_offs: a column of channels 4..11 (8..11 past C: not written)
 * stored into a box inside the tensor, past the last image */
static int t_column_store(void)
{
	return report("column_store", store_body());
}

CORPUS_MAIN(T(t_conv2d_3x3_pad1), T(t_conv2d_stride2_dilation2), T(t_conv1d_nwc),
	    T(t_conv3d_ndhwc), T(t_column_positive_corners),
	    T(t_column_channels_and_images_past_the_end), T(t_column_traversal_strides),
	    T(t_column_channel_stride_ignored), T(t_column_negative_channels_image_stride),
	    T(t_column_5d), T(t_column_multicast), T(t_column_store))
