/* SPDX-License-Identifier: MIT */
/*
 * Where a host test finds the tree: the test binary is BUILD/tests/NAME,
 * so BUILD is two levels up from it and the repository root one more
 * (test_build, test_root; set before main).
 */
#ifndef VGPU_TEST_PATHS_H
#define VGPU_TEST_PATHS_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char test_root[PATH_MAX], test_build[PATH_MAX];

__attribute__((constructor(101))) static void test_find_paths(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *s;

	if (n <= 0)
		exit(1);
	exe[n] = '\0';
	for (int i = 0; i < 2 && (s = strrchr(exe, '/')); i++)
		*s = '\0'; /* BUILD/tests/NAME -> BUILD */
	snprintf(test_build, sizeof(test_build), "%s", exe);
	s = strrchr(exe, '/');
	if (s)
		*s = '\0'; /* BUILD -> repository root */
	snprintf(test_root, sizeof(test_root), "%s", exe);
}

#endif
