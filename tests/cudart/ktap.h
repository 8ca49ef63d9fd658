/* SPDX-License-Identifier: MIT */
/*
 * KTAP for the runtime-API test programs (tests/cudart/*.cu): each test a
 * function returning 0 (pass) or 1 (fail) with a "# " line saying why,
 * then "ok N name" / "not ok N name" and the "# Totals:" line that
 * scripts/run-tests.sh counts.
 */
#ifndef CUDART_KTAP_H
#define CUDART_KTAP_H

#include <cstdio>
#include <cstdlib>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			return 1;                                                    \
		}                                                                    \
	} while (0)

/* a call that must return @want */
#define CHECK_RT(call, want)                                                           \
	do {                                                                           \
		cudaError_t e_ = (call);                                               \
		if (e_ != (want)) {                                                    \
			printf("# %s:%d: %s returned %d (%s), want %d (%s)\n", __FILE__, \
			       __LINE__, #call, (int)e_, cudaGetErrorName(e_), (int)(want), \
			       cudaGetErrorName(want));                                \
			return 1;                                                      \
		}                                                                      \
	} while (0)

#define CHECK_OK(call) CHECK_RT(call, cudaSuccess)

/* a test function's return value for a test that does not apply here;
 * it prints a "# " line saying why first */
#define KTAP_SKIP 4

struct ktap_test {
	const char *name;
	int (*fn)(void);
};

static inline int ktap_run(const ktap_test *tests, int n)
{
	int pass = 0, fail = 0, skip = 0;

	/* vGPU's library picks the simulator when no vgpu DRM device exists;
	 * say so, unless the caller chose (the guest: drm) */
	setenv("VGPU_BACKEND", "sim", 0);
	printf("TAP version 13\n1..%d\n", n);
	for (int i = 0; i < n; i++) {
		int r = tests[i].fn();

		if (r == KTAP_SKIP) {
			printf("ok %d %s # SKIP\n", i + 1, tests[i].name);
			skip++;
			continue;
		}
		printf("%sok %d %s\n", r ? "not " : "", i + 1, tests[i].name);
		fflush(stdout);
		r ? fail++ : pass++;
	}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", pass, fail, skip);
	return fail ? 1 : 0;
}

#endif /* CUDART_KTAP_H */
