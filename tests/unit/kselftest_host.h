/* SPDX-License-Identifier: MIT */
/*
 * The kernel's kselftest_harness.h for the host tests (tests/unit/,
 * tests/qtest/) and for test_libvgpu in the guest.  The harness comes from
 * Debian's linux-source-6.12 at build time (scripts/kselftest-headers.sh
 * extracts it into BUILD/kselftest/, never into the repository); a test
 * file includes this header instead and is written as a kselftest:
 * TEST(), FIXTURE()/FIXTURE_SETUP()/FIXTURE_TEARDOWN()/FIXTURE_VARIANT()
 * with TEST_F(), EXPECT_* (note and go on), ASSERT_* (end the test),
 * TEST_HARNESS_MAIN.  Every test runs in a child process of its own and
 * the binary prints KTAP ("ok N fixture.variant.test", "not ok N ...")
 * ending in "# Totals: pass:N fail:N xfail:N xpass:N skip:N error:N".
 * A helper that checks things takes the test's `_metadata` pointer
 * (struct __test_metadata *_metadata) as kselftest's own helpers do.
 * Run some tests with ./test_x -t NAME (-f FIXTURE, -v VARIANT, -r
 * FIXTURE.VARIANT.TEST, -l lists them).
 *
 * On top of the harness, this header adds:
 *
 * - A leak check per test.  A test's process ends in _exit(), which
 *   LeakSanitizer does not see, so in an AddressSanitizer build every
 *   TEST() body and every FIXTURE_TEARDOWN() (that is, every TEST_F after
 *   its teardown) is followed by __lsan_do_recoverable_leak_check(); a
 *   leak it reports fails the test (ASAN_OPTIONS=detect_leaks=0 turns it
 *   off).  Not after a failed ASSERT_*: that test has failed already.
 *   TEST(), TEST_SIGNAL(), TEST_F(), TEST_F_SIGNAL(), TEST_F_TIMEOUT(),
 *   FIXTURE_SETUP() and FIXTURE_TEARDOWN() are redefined for that, on
 *   the harness's own __TEST_IMPL, __TEST_F_IMPL and __FIXTURE_TEARDOWN.
 * - FIXTURE_SETUP() and FIXTURE_TEARDOWN() that declare their function
 *   before defining it (the Makefile's -Wmissing-prototypes), and the
 *   harness included with that warning off for its own two functions.
 *   A test may not be called "setup" or "teardown" (the harness names
 *   the fixture's functions FIXTURE_setup and FIXTURE_teardown).
 * - EXPECT_CONTAINS(haystack, needle) and ASSERT_CONTAINS(): the string
 *   haystack (NULL fails) contains needle.
 * - TEST_TIMEOUT_DEFAULT of 300 s instead of 30: the harness kills a test
 *   after that long, and a test under ASan, or test_libvgpu in the guest
 *   under TCG, may take longer than 30 s.
 */
#ifndef VGPU_KSELFTEST_HOST_H
#define VGPU_KSELFTEST_HOST_H

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-prototypes"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop

#if defined(__SANITIZE_ADDRESS__)
#define VGPU_TEST_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define VGPU_TEST_LSAN 1
#endif
#endif

#ifdef VGPU_TEST_LSAN
#include <sanitizer/lsan_interface.h>
#endif

#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

/* Fail the test if LeakSanitizer finds memory leaked so far. */
static inline void vgpu_test_leak_check(struct __test_metadata *_metadata)
{
#ifdef VGPU_TEST_LSAN
	if (_metadata->aborted)
		return;
	fflush(stdout);
	if (__lsan_do_recoverable_leak_check()) {
		__TH_LOG("LeakSanitizer: the test leaked memory (report above)");
		_metadata->exit_code = KSFT_FAIL;
	}
#endif
}

/*
 * The leak check is conservative: a pointer still in a live stack frame
 * hides what it points to.  So the bodies of tests, set-ups and
 * teardowns are functions of their own, never inlined into the harness's
 * wrapper, whose frame is live when the check runs.
 */
#define __VGPU_NOINLINE __attribute__((noinline))

/* TEST(): the body, then the leak check. */
#define __VGPU_TEST(test_name, signal)                                         \
	static __VGPU_NOINLINE void test_name##_body(                          \
		struct __test_metadata *_metadata);                            \
	__TEST_IMPL(test_name, signal)                                         \
	{                                                                      \
		test_name##_body(_metadata);                                   \
		vgpu_test_leak_check(_metadata);                               \
	}                                                                      \
	static void test_name##_body(                                          \
		struct __test_metadata __attribute__((unused)) *_metadata)

#undef TEST
#define TEST(test_name) __VGPU_TEST(test_name, -1)
#undef TEST_SIGNAL
#define TEST_SIGNAL(test_name, signal) __VGPU_TEST(test_name, signal)

/*
 * The harness's TEST_F wrapper sets a local (its fork()'s pid) after
 * setjmp(); gcc's -Wclobbered (-Wextra) may flag it there, in the
 * harness's code, depending on how the wrapper is compiled: off for the
 * wrapper alone (tests/selftests/vgpu builds with -Wno-clobbered).
 */
#if defined(__GNUC__) && !defined(__clang__)
#define __VGPU_CLOBBERED_OFF                                                   \
	_Pragma("GCC diagnostic push")                                         \
	_Pragma("GCC diagnostic ignored \"-Wclobbered\"")
#define __VGPU_CLOBBERED_ON _Pragma("GCC diagnostic pop")
#else
#define __VGPU_CLOBBERED_OFF
#define __VGPU_CLOBBERED_ON
#endif

/* TEST_F(): the body; the teardown then checks for leaks. */
#define __VGPU_TEST_F(fixture_name, test_name, signal, tmout)                  \
	static __VGPU_NOINLINE void fixture_name##_##test_name##_body(         \
		struct __test_metadata *_metadata,                             \
		FIXTURE_DATA(fixture_name) *self,                              \
		const FIXTURE_VARIANT(fixture_name) *variant);                 \
	__VGPU_CLOBBERED_OFF                                                   \
	__TEST_F_IMPL(fixture_name, test_name, signal, tmout)                  \
	{                                                                      \
		fixture_name##_##test_name##_body(_metadata, self, variant);   \
	}                                                                      \
	__VGPU_CLOBBERED_ON                                                    \
	static void fixture_name##_##test_name##_body(                         \
		struct __test_metadata __attribute__((unused)) *_metadata,     \
		FIXTURE_DATA(fixture_name) __attribute__((unused)) *self,      \
		const FIXTURE_VARIANT(fixture_name)                            \
			__attribute__((unused)) *variant)

#undef TEST_F
#define TEST_F(fixture_name, test_name)                                        \
	__VGPU_TEST_F(fixture_name, test_name, -1, TEST_TIMEOUT_DEFAULT)
#undef TEST_F_SIGNAL
#define TEST_F_SIGNAL(fixture_name, test_name, signal)                         \
	__VGPU_TEST_F(fixture_name, test_name, signal, TEST_TIMEOUT_DEFAULT)
#undef TEST_F_TIMEOUT
#define TEST_F_TIMEOUT(fixture_name, test_name, timeout)                       \
	__VGPU_TEST_F(fixture_name, test_name, -1, timeout)

#undef FIXTURE_SETUP
#define FIXTURE_SETUP(fixture_name)                                            \
	__VGPU_NOINLINE void fixture_name##_setup(                             \
		struct __test_metadata *_metadata,                             \
		FIXTURE_DATA(fixture_name) *self,                              \
		const FIXTURE_VARIANT(fixture_name) *variant);                 \
	void fixture_name##_setup(                                             \
		struct __test_metadata __attribute__((unused)) *_metadata,     \
		FIXTURE_DATA(fixture_name) __attribute__((unused)) *self,      \
		const FIXTURE_VARIANT(fixture_name)                            \
			__attribute__((unused)) *variant)

/*
 * FIXTURE_TEARDOWN(): the harness calls fixture_teardown() in the test's
 * process after the test (also after a failed ASSERT); it runs the body,
 * clears the fixture (what only the fixture still points to is a leak:
 * the teardown did not free it), then checks for leaks.
 */
#undef FIXTURE_TEARDOWN
#define FIXTURE_TEARDOWN(fixture_name)                                         \
	static const bool fixture_name##_teardown_parent;                      \
	static __VGPU_NOINLINE void fixture_name##_teardown_body(              \
		struct __test_metadata *_metadata,                             \
		FIXTURE_DATA(fixture_name) *self,                              \
		const FIXTURE_VARIANT(fixture_name) *variant);                 \
	__FIXTURE_TEARDOWN(fixture_name);                                      \
	__FIXTURE_TEARDOWN(fixture_name)                                       \
	{                                                                      \
		fixture_name##_teardown_body(_metadata, self, variant);        \
		if (self)                                                      \
			memset(self, 0, sizeof(*self));                        \
		vgpu_test_leak_check(_metadata);                               \
	}                                                                      \
	static void fixture_name##_teardown_body(                              \
		struct __test_metadata __attribute__((unused)) *_metadata,     \
		FIXTURE_DATA(fixture_name) __attribute__((unused)) *self,      \
		const FIXTURE_VARIANT(fixture_name)                            \
			__attribute__((unused)) *variant)

#define __VGPU_EXPECT_CONTAINS(_hay, _needle, _assert)                         \
	do {                                                                   \
		const char *__hay = (_hay), *__needle = (_needle);             \
		if (!__hay || !strstr(__hay, __needle)) {                      \
			__TH_LOG("Expected %s (\"%s\") to contain %s (\"%s\")", \
				 #_hay, __hay ? __hay : "(null)", #_needle,    \
				 __needle);                                    \
			_metadata->exit_code = KSFT_FAIL;                      \
			_metadata->trigger = 1;                                \
		}                                                              \
	} while (0);                                                           \
	OPTIONAL_HANDLER(_assert)

/* EXPECT_CONTAINS(haystack, needle): strstr(haystack, needle) != NULL */
#define EXPECT_CONTAINS(haystack, needle)                                      \
	__VGPU_EXPECT_CONTAINS(haystack, needle, 0)
/* ASSERT_CONTAINS(haystack, needle): the same, ending the test */
#define ASSERT_CONTAINS(haystack, needle)                                      \
	__VGPU_EXPECT_CONTAINS(haystack, needle, 1)

#endif
