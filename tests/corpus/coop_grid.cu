// SPDX-License-Identifier: MIT
/*
 * cooperative_groups::grid_group::sync under cudaLaunchCooperativeKernel
 * (samples reductionMultiBlockCG): its own program, because nvcc 13's
 * grid sync reads the grid workspace the driver passes in %envreg1 and
 * %envreg2 and traps without one, which the front end does not take
 * (docs/ptx-corpus.md): the PTX of the whole program is refused.
 */
#include <cooperative_groups.h>

#include "corpus.h"

namespace cg = cooperative_groups;

/* grid_group::sync: a two-phase grid reduction in one launch */
__global__ void grid_sync_reduce(const int *in, int *partial, int *out, int n)
{
	cg::grid_group grid = cg::this_grid();
	auto block = cg::this_thread_block();
	__shared__ int s;
	int v = 0;

	if (block.thread_rank() == 0)
		s = 0;
	block.sync();
	for (int i = grid.thread_rank(); i < n; i += grid.size())
		v += in[i];
	atomicAdd(&s, v);
	block.sync();
	if (block.thread_rank() == 0)
		partial[blockIdx.x] = s;
	grid.sync();
	if (grid.thread_rank() == 0) {
		int t = 0;
		for (unsigned b = 0; b < gridDim.x; b++)
			t += partial[b];
		out[0] = t;
	}
}

/* ---- host ---- */

static int t_grid_sync(void)
{
	int sms = 0;
	CHECK_OK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	const int n = 30000, blocks = sms < 4 ? sms : 4;
	std::vector<int> h = corpus_ints<int>(n, 29, 1000);
	dbuf<int> din(h), dpart(blocks), dout(1);
	int nn = n;
	void *args[] = {&din.p, &dpart.p, &dout.p, &nn};

	CHECK_OK(cudaLaunchCooperativeKernel((void *)grid_sync_reduce, blocks, 128, args, 0, 0));
	CHECK_LAUNCH();
	int want = 0;
	for (int x : h)
		want += x;
	CHECK(dout.get()[0] == want);
	return 0;
}

CORPUS_MAIN(T(t_grid_sync))
