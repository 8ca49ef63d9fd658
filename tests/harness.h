/* SPDX-License-Identifier: MIT */
/*
 * Minimal host test harness.  A test file defines tests with TEST(name) and
 * ends with TEST_MAIN().  Each test runs in-process; CHECK* record a failure
 * (with file:line and the values) and continue, REQUIRE* return from the
 * test.  The binary prints one line per test and a last line
 * "N passed, N failed"; it exits non-zero if any test failed.
 * Run one test with: ./test_x NAME-SUBSTRING
 */
#ifndef VGPU_TEST_HARNESS_H
#define VGPU_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct th_test {
	const char *name;
	void (*fn)(void);
};

#define TH_MAX_TESTS 1024
static struct th_test th_tests[TH_MAX_TESTS];
static int th_ntests;
static int th_cur_failed;

#define TEST(name)                                                             \
	static void test_##name(void);                                         \
	__attribute__((constructor)) static void th_reg_##name(void)           \
	{                                                                      \
		if (th_ntests < TH_MAX_TESTS)                                  \
			th_tests[th_ntests++] = (struct th_test){ #name,       \
								  test_##name }; \
	}                                                                      \
	static void test_##name(void)

#define TH_FAIL(...)                                                           \
	do {                                                                   \
		fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);             \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		th_cur_failed = 1;                                             \
	} while (0)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			TH_FAIL("CHECK(%s) failed", #cond);                    \
	} while (0)

#define CHECK_EQ(a, b)                                                         \
	do {                                                                   \
		long long th_a = (long long)(a), th_b = (long long)(b);        \
		if (th_a != th_b)                                              \
			TH_FAIL("%s == %s: %lld (0x%llx) != %lld (0x%llx)", #a, \
				#b, th_a, (unsigned long long)th_a, th_b,      \
				(unsigned long long)th_b);                     \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *th_a = (a), *th_b = (b);                           \
		if (!th_a || !th_b || strcmp(th_a, th_b))                      \
			TH_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b,           \
				th_a ? th_a : "(null)", th_b ? th_b : "(null)"); \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                            \
	do {                                                                   \
		const char *th_h = (hay), *th_n = (needle);                    \
		if (!th_h || !strstr(th_h, th_n))                              \
			TH_FAIL("\"%s\" does not contain \"%s\"",              \
				th_h ? th_h : "(null)", th_n);                 \
	} while (0)

#define REQUIRE(cond)                                                          \
	do {                                                                   \
		if (!(cond)) {                                                 \
			TH_FAIL("REQUIRE(%s) failed", #cond);                  \
			return;                                                \
		}                                                              \
	} while (0)

#define TEST_MAIN()                                                            \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		int passed = 0, failed = 0;                                    \
		for (int i = 0; i < th_ntests; i++) {                          \
			if (argc > 1 && !strstr(th_tests[i].name, argv[1]))    \
				continue;                                      \
			th_cur_failed = 0;                                     \
			th_tests[i].fn();                                      \
			printf("%s %s\n", th_cur_failed ? "FAIL" : "ok  ",     \
			       th_tests[i].name);                              \
			fflush(stdout);                                        \
			if (th_cur_failed)                                     \
				failed++;                                      \
			else                                                   \
				passed++;                                      \
		}                                                              \
		printf("%d passed, %d failed\n", passed, failed);              \
		return failed ? 1 : 0;                                         \
	}

#endif
