/* SPDX-License-Identifier: MIT */
/*
 * make bench's closing table.  Beside its report for people, every
 * benchmark prints each figure it measures as one machine-readable line
 *
 *   @bench|FIGURE|VALUE|BASELINE|RATIO|TARGET|VERDICT
 *
 * (VERDICT: "met", "not met", or empty when the figure has no target).
 * scripts/bench.sh gathers the lines of every benchmark of a run (host,
 * device, guest) into one table at the end, which a reader compares
 * across commits; each BASELINE is measured in the same run.
 */
#ifndef VGPU_BENCH_SUMMARY_H
#define VGPU_BENCH_SUMMARY_H

#include <stdarg.h>
#include <stdio.h>

/* printf into one of a few rotating buffers: for bench_row's arguments. */
static inline const char *bench_fmt(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline const char *bench_fmt(const char *fmt, ...)
{
	static char bufs[8][64];
	static unsigned int next;
	char *b = bufs[next++ % 8];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(b, sizeof(bufs[0]), fmt, ap);
	va_end(ap);
	return b;
}

/* @met: 1 met, 0 not met, -1 no target. */
static inline void bench_row(const char *figure, const char *value,
			     const char *baseline, const char *ratio,
			     const char *target, int met)
{
	printf("@bench|%s|%s|%s|%s|%s|%s\n", figure, value, baseline, ratio,
	       target ? target : "", met < 0 ? "" : met ? "met" : "not met");
	fflush(stdout);
}

#endif
