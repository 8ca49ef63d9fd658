/* SPDX-License-Identifier: MIT */
/*
 * The corpus of real CUDA code (tests/corpus/*.cu, docs/ptx-corpus.md):
 * programs built by the machine's nvcc 13 with -cudart shared and PTX
 * embedded, run against vGPU's libcudart.so.13 on the sim backend.  Each
 * test launches one kernel (or one device-wide algorithm), computes the
 * expected result on the host and compares every word.
 *
 * Each test runs in a child process (fork) with a time limit, so that a
 * kernel that crashes the front end or never ends is that test's failure
 * and not the program's; the parent touches no CUDA state.  The children
 * load the program's fatbin each (vGPU compiles the PTX on first use).
 *
 * VGPU_CORPUS_ONLY=TEST (or TEST as the first argument) runs that test
 * alone; VGPU_CORPUS_REPEAT=N runs each test up to N times, until one run
 * fails (for intermittent failures); VGPU_CORPUS_SCHEDULES=N then runs it
 * under the random schedules of seeds 1..N (VGPU_RANDOM_SCHEDULE=SEED in
 * the child, docs/cuda.md), until one fails: many schedules in one process
 * tree, as in the guest, where a program costs a boot's share.
 *
 * Known failures: tests/corpus/known-failures.txt lists "PROGRAM TEST #
 * reason" (PROGRAM: the binary's name without test_corpus_).  A listed
 * test that fails is a SKIP with the reason; one that passes is a failure
 * ("passes now: delete its line"), so the list stays honest.
 */
#ifndef CORPUS_H
#define CORPUS_H

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			return 1;                                                    \
		}                                                                    \
	} while (0)

#define CHECK_OK(call)                                                                  \
	do {                                                                            \
		cudaError_t e_ = (call);                                                \
		if (e_ != cudaSuccess) {                                                \
			printf("# %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__,    \
			       #call, (int)e_, cudaGetErrorName(e_));                   \
			return 1;                                                       \
		}                                                                       \
	} while (0)

/* after a launch: the launch's error, then the kernel's */
#define CHECK_LAUNCH()                                   \
	do {                                             \
		CHECK_OK(cudaGetLastError());            \
		CHECK_OK(cudaDeviceSynchronize());       \
	} while (0)

/* device memory of n T's, freed with the object */
template <class T> struct dbuf {
	T *p = nullptr;
	size_t n = 0;
	explicit dbuf(size_t count) : n(count)
	{
		if (cudaMalloc(&p, count * sizeof(T) ? count * sizeof(T) : 1) != cudaSuccess)
			p = nullptr;
	}
	dbuf(const std::vector<T> &h) : dbuf(h.size())
	{
		if (p)
			cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
	}
	~dbuf()
	{
		if (p)
			cudaFree(p);
	}
	dbuf(const dbuf &) = delete;
	dbuf &operator=(const dbuf &) = delete;
	std::vector<T> get() const
	{
		std::vector<T> h(n);
		if (cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess)
			printf("# dbuf::get: %s\n", cudaGetErrorName(cudaGetLastError()));
		return h;
	}
	void zero() { cudaMemset(p, 0, n * sizeof(T)); }
	operator T *() const { return p; }
};

/* the same bytes, or a "#" line naming the first element that differs */
template <class T>
static int corpus_same(const char *what, const std::vector<T> &want, const std::vector<T> &got)
{
	if (want.size() != got.size()) {
		printf("# %s: %zu elements, want %zu\n", what, got.size(), want.size());
		return 0;
	}
	for (size_t i = 0; i < want.size(); i++) {
		if (memcmp(&want[i], &got[i], sizeof(T))) {
			size_t bad = 0;
			for (size_t j = i; j < want.size(); j++)
				bad += !!memcmp(&want[j], &got[j], sizeof(T));
			if (sizeof(T) == 8)
				printf("# %s[%zu]: got 0x%llx, want 0x%llx (%zu of %zu differ)\n", what, i,
				       (unsigned long long)*(const uint64_t *)&got[i],
				       (unsigned long long)*(const uint64_t *)&want[i], bad, want.size());
			else if (sizeof(T) == 4)
				printf("# %s[%zu]: got 0x%x, want 0x%x (%zu of %zu differ)\n", what, i,
				       *(const uint32_t *)&got[i], *(const uint32_t *)&want[i], bad,
				       want.size());
			else
				printf("# %s[%zu] differs (%zu of %zu differ)\n", what, i, bad, want.size());
			return 0;
		}
	}
	return 1;
}
/*
 * On a difference @got (an expression: dbuf::get() reads the device
 * again) is read once more after 200 ms, which tells a result the device
 * wrote after its launch had completed from one it never wrote.
 */
#define CHECK_SAME(want, got)                                                         \
	do {                                                                          \
		if (!corpus_same(#got, want, got)) {                                  \
			usleep(200000);                                               \
			printf("# %s read again after 200 ms: %s\n", #got,            \
			       corpus_same_quiet(want, got) ? "right now" : "still wrong"); \
			printf("# %s:%d: check failed: %s\n", __FILE__, __LINE__,     \
			       "CHECK_SAME(" #want ", " #got ")");                    \
			return 1;                                                     \
		}                                                                     \
	} while (0)

template <class T>
static bool corpus_same_quiet(const std::vector<T> &want, const std::vector<T> &got)
{
	return want.size() == got.size() &&
	       (want.empty() || !memcmp(want.data(), got.data(), want.size() * sizeof(T)));
}

/* deterministic inputs: xorshift32 */
struct corpus_rng {
	uint32_t s;
	explicit corpus_rng(uint32_t seed) : s(seed ? seed : 1) {}
	uint32_t next()
	{
		s ^= s << 13;
		s ^= s >> 17;
		s ^= s << 5;
		return s;
	}
	/* in [0, n) */
	uint32_t below(uint32_t n) { return (uint32_t)(((uint64_t)next() * n) >> 32); }
};

template <class T> static std::vector<T> corpus_ints(size_t n, uint32_t seed, uint32_t range)
{
	corpus_rng r(seed);
	std::vector<T> v(n);
	for (auto &x : v)
		x = (T)r.below(range);
	return v;
}

/* small integers as floats: every sum of them is exact in any order */
static inline std::vector<float> corpus_floats(size_t n, uint32_t seed, int range)
{
	corpus_rng r(seed);
	std::vector<float> v(n);
	for (auto &x : v)
		x = (float)((int)r.below(2 * range + 1) - range);
	return v;
}

/*
 * A test returns 0 when it passed, 1 when it failed (saying why);
 * CORPUS_PASS_STICKY when it passed leaving the process's sticky error on
 * purpose (a device assert), which skips the check that nothing failed
 * after it.
 */
struct corpus_test {
	const char *name;
	int (*fn)(void);
};
#define CORPUS_PASS_STICKY 3

struct corpus_known {
	std::string test, reason;
};

static std::vector<corpus_known> corpus_read_known(const std::string &program)
{
	std::vector<corpus_known> v;
	const char *path = getenv("VGPU_CORPUS_KNOWN");
	FILE *f;
	char line[1024];

#ifdef CORPUS_KNOWN
	if (!path)
		path = CORPUS_KNOWN;
#endif
	if (!path || !(f = fopen(path, "r")))
		return v;
	while (fgets(line, sizeof(line), f)) {
		char prog[128], test[128];
		const char *hash = strchr(line, '#');
		std::string reason;

		if (line[0] == '#' || sscanf(line, "%127s %127s", prog, test) != 2)
			continue;
		if (program != prog)
			continue;
		if (hash) {
			reason = hash + 1;
			while (!reason.empty() && (reason[0] == ' '))
				reason.erase(0, 1);
			while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' '))
				reason.pop_back();
		}
		v.push_back({test, reason});
	}
	fclose(f);
	return v;
}

/*
 * Run one test in a child: 0 pass, 1 fail (the child printed why), 2 the
 * child crashed or ran out of time (said here).
 */
static int corpus_run_one(const corpus_test &t, unsigned timeout_s, int seed = 0)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("# fork: %s\n", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		int r;

		if (seed) { /* read by cuInit, which only the child calls */
			char s[16];

			snprintf(s, sizeof(s), "%d", seed);
			setenv("VGPU_RANDOM_SCHEDULE", s, 1);
		}
		alarm(timeout_s);
		r = t.fn();
		if (r == CORPUS_PASS_STICKY) {
			r = 0; /* passed; the sticky error was the test's point */
		} else if (!r) {
			/* a kernel's late exception, and what the program freed */
			cudaError_t e = cudaDeviceSynchronize();

			if (e != cudaSuccess) {
				printf("# after the test: %s\n", cudaGetErrorName(e));
				r = 1;
			}
		}
		fflush(stdout);
		exit(r ? 1 : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 2;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 0 ? 0 : WEXITSTATUS(status) == 1 ? 1 : 2;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (sig == SIGALRM)
			printf("# timed out after %u s\n", timeout_s);
		else
			printf("# killed by signal %d (%s)\n", sig, strsignal(sig));
	}
	return 2;
}

static inline int corpus_main(int argc, char **argv, const corpus_test *tests, int n)
{
	std::string program = argv[0];
	int pass = 0, fail = 0, skip = 0;
	unsigned timeout_s = 120;
	const char *only = argc > 1 ? argv[1] : getenv("VGPU_CORPUS_ONLY");
	int repeat = getenv("VGPU_CORPUS_REPEAT") ? atoi(getenv("VGPU_CORPUS_REPEAT")) : 1;
	int seeds = getenv("VGPU_CORPUS_SCHEDULES") ? atoi(getenv("VGPU_CORPUS_SCHEDULES")) : 0;

	if (only && !*only)
		only = nullptr;
	if (repeat < 1)
		repeat = 1;
	program = program.substr(program.rfind('/') + 1);
	if (program.rfind("test_corpus_", 0) == 0)
		program = program.substr(strlen("test_corpus_"));
	if (getenv("VGPU_CORPUS_TIMEOUT"))
		timeout_s = (unsigned)atoi(getenv("VGPU_CORPUS_TIMEOUT"));
	/* vGPU's library picks the simulator when no vgpu DRM device exists;
	 * say so, unless the caller chose */
	setenv("VGPU_BACKEND", "sim", 0);

	std::vector<corpus_known> known = corpus_read_known(program);
	std::vector<bool> used(known.size());

	printf("TAP version 13\n1..%d\n", only ? 1 : n);
	for (int i = 0, k = 0; i < n; i++) {
		const corpus_known *kn = nullptr;
		int r;

		if (only && strcmp(only, tests[i].name))
			continue;
		k++;
		for (size_t j = 0; j < known.size(); j++)
			if (known[j].test == tests[i].name) {
				kn = &known[j];
				used[j] = true;
			}
		printf("# %s %s\n", program.c_str(), tests[i].name);
		r = corpus_run_one(tests[i], timeout_s);
		for (int rep = 1; rep < repeat && !r; rep++) {
			r = corpus_run_one(tests[i], timeout_s);
			if (r)
				printf("# failed in run %d of %d\n", rep + 1, repeat);
		}
		for (int seed = 1; seed <= seeds && !r; seed++) {
			r = corpus_run_one(tests[i], timeout_s, seed);
			if (r)
				printf("# failed under VGPU_RANDOM_SCHEDULE=%d\n", seed);
		}
		if (kn && r) {
			printf("ok %d %s # SKIP known failure: %s\n", k, tests[i].name,
			       kn->reason.c_str());
			skip++;
		} else if (kn) {
			printf("# %s passes now: delete its line in known-failures.txt\n",
			       tests[i].name);
			printf("not ok %d %s\n", k, tests[i].name);
			fail++;
		} else {
			printf("%sok %d %s\n", r ? "not " : "", k, tests[i].name);
			r ? fail++ : pass++;
		}
		fflush(stdout);
	}
	for (size_t j = 0; j < known.size(); j++)
		if (!used[j] && !only) {
			printf("# known-failures.txt names %s %s, which this program lacks\n",
			       program.c_str(), known[j].test.c_str());
			fail++;
		}
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", pass, fail, skip);
	return fail ? 1 : 0;
}

#define CORPUS_MAIN(...)                                                            \
	int main(int argc, char **argv)                                             \
	{                                                                           \
		static const corpus_test tests_[] = {__VA_ARGS__};                  \
		return corpus_main(argc, argv, tests_, sizeof(tests_) / sizeof(tests_[0])); \
	}
#define T(fn) {#fn, fn}

#endif /* CORPUS_H */
