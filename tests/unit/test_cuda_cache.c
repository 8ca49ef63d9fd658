/* SPDX-License-Identifier: MIT */
/*
 * libcuda's per-thread caches of what a launch checks (cuda_priv.h):
 * handles found live (seen) and a kernel's function in a context
 * (kfuncs).  A launch checks its context, function and stream in the seen
 * cache; when it was direct-mapped, two of them on one entry evicted each
 * other on every launch and no cuLaunchKernel took the fast path (bench_cuda
 * 1.1x or 1.4x its baseline, by where the heap put them).  Each set now
 * keeps CUV_WAYS entries, the newest first.
 */
#include "cuda_priv.h"
#include "kselftest_host.h"

/* @n distinct 16-byte aligned addresses in @pool that fall in one set */
static unsigned int same_set(uint8_t *pool, size_t size, unsigned int nsets, const void **out,
			     unsigned int n)
{
	unsigned int got = 0, want = cuv_cache_set(pool, nsets);

	for (size_t off = 0; off + 16 <= size && got < n; off += 16)
		if (cuv_cache_set(pool + off, nsets) == want)
			out[got++] = pool + off;
	return got;
}

static _Alignas(16) uint8_t pool[1 << 20];

_Static_assert(CUV_WAYS >= 3, "a launch checks three handles in one cache");

/*
 * A launch's context, function and stream on one set stay seen however
 * often each is asked for in turn (direct-mapped: each evicted another).
 */
TEST(seen_keeps_a_launchs_colliding_handles)
{
	static struct cuv_thread t; /* zeroed: nothing seen */
	const void *p[3];
	const enum cuv_kind kind[3] = { CUV_CTX, CUV_FUNC, CUV_STREAM };
	const unsigned long gen = 7;

	ASSERT_EQ(3u, same_set(pool, sizeof(pool), CUV_SEEN_SETS, p, 3));
	for (int r = 0; r < 3; r++) {
		for (unsigned int i = 0; i < 3; i++) {
			bool hit = cuv_seen_find(&t, p[i], gen << 8 | kind[i]);

			/* the first round finds nothing and remembers each */
			EXPECT_EQ(r > 0, hit) TH_LOG("handle %u, round %d", i, r);
			if (!hit)
				cuv_seen_put(&t, p[i], gen << 8 | kind[i]);
		}
	}
	/* another generation or kind: not found */
	EXPECT_FALSE(cuv_seen_find(&t, p[1], 8ul << 8 | CUV_FUNC));
	EXPECT_FALSE(cuv_seen_find(&t, p[1], 7ul << 8 | CUV_STREAM));
	EXPECT_FALSE(cuv_seen_find(&t, NULL, 0));
}

TEST(seen_evicts_the_oldest_and_refreshes_without_duplicates)
{
	static struct cuv_thread t;
	const void *p[CUV_WAYS + 2];
	const unsigned long key = 3ul << 8 | CUV_CTX;

	ASSERT_EQ(CUV_WAYS + 2u, same_set(pool, sizeof(pool), CUV_SEEN_SETS, p, CUV_WAYS + 2));
	for (unsigned int i = 0; i < CUV_WAYS; i++)
		cuv_seen_put(&t, p[i], key);
	/* p[0] again (a new generation's answer): moved first, not doubled */
	cuv_seen_put(&t, p[0], key + 256);
	EXPECT_TRUE(cuv_seen_find(&t, p[0], key + 256));
	EXPECT_FALSE(cuv_seen_find(&t, p[0], key));
	/* a fifth handle pushes out the least recent, p[1], only */
	cuv_seen_put(&t, p[CUV_WAYS], key);
	EXPECT_FALSE(cuv_seen_find(&t, p[1], key));
	EXPECT_TRUE(cuv_seen_find(&t, p[0], key + 256));
	for (unsigned int i = 2; i <= CUV_WAYS; i++) {
		EXPECT_TRUE(cuv_seen_find(&t, p[i], key)) TH_LOG("handle %u", i);
	}
}

TEST(seen_sets_spread_heap_objects)
{
	unsigned int used[CUV_SEEN_SETS] = { 0 }, nonempty = 0;

	/* objects 128 bytes apart (a struct of 128: malloc's spacing) */
	for (unsigned int i = 0; i < 64; i++)
		used[cuv_cache_set(pool + 128 * i, CUV_SEEN_SETS)]++;
	for (unsigned int s = 0; s < CUV_SEEN_SETS; s++)
		nonempty += used[s] != 0;
	EXPECT_EQ((unsigned int)CUV_SEEN_SETS, nonempty);
}

TEST(kfuncs_keep_each_kernel_per_context)
{
	static struct cuv_thread t;
	const void *k[CUV_WAYS + 1];
	struct CUctx_st *a = (struct CUctx_st *)(pool + 64), *b = (struct CUctx_st *)(pool + 128);
	struct CUfunc_st *f = (struct CUfunc_st *)(pool + 256);

	ASSERT_EQ(CUV_WAYS + 1u, same_set(pool, sizeof(pool), CUV_KFUNC_SETS, k, CUV_WAYS + 1));
	for (unsigned int i = 0; i < CUV_WAYS; i++)
		cuv_kfunc_put(&t, (CUkernel)k[i], a, f + i, 5);
	for (unsigned int i = 0; i < CUV_WAYS; i++) {
		EXPECT_EQ(f + i, cuv_kfunc_find(&t, (CUkernel)k[i], a, 5)) TH_LOG("kernel %u", i);
		EXPECT_EQ(NULL, cuv_kfunc_find(&t, (CUkernel)k[i], b, 5));
		EXPECT_EQ(NULL, cuv_kfunc_find(&t, (CUkernel)k[i], a, 6));
	}
	/* the same kernel in context b is an entry of its own */
	cuv_kfunc_put(&t, (CUkernel)k[0], b, f + 9, 5);
	EXPECT_EQ(f + 9, cuv_kfunc_find(&t, (CUkernel)k[0], b, 5));
	EXPECT_EQ(NULL, cuv_kfunc_find(&t, (CUkernel)k[0], a, 5)); /* the oldest left */
	for (unsigned int i = 1; i < CUV_WAYS; i++) {
		EXPECT_EQ(f + i, cuv_kfunc_find(&t, (CUkernel)k[i], a, 5)) TH_LOG("kernel %u", i);
	}
	EXPECT_EQ(NULL, cuv_kfunc_find(&t, NULL, NULL, 0));
}

TEST_HARNESS_MAIN
