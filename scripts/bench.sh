#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench.sh BUILD BENCH...: `make bench`.  Runs each host benchmark (BENCH
# ...), the comparison of vGPU's code with ptxas's on the CUDA corpus
# (scripts/sass-compare.sh), the device benchmark through qtest
# (BUILD/qtest/bench_device) and
# the guest one (make bench-guest), showing each report as it comes, and
# ends with one table of every figure: value, baseline (measured in the
# same run), ratio, target and verdict, gathered from the '@bench|' lines
# the benchmarks print (tests/bench/bench_summary.h).  The table names
# the commit and the machine, so that runs compare across commits.  The
# whole output, '@bench|' lines included, is kept in BUILD/bench.log.
#
# VGPU_BENCH_GUEST=0 leaves the guest benchmark out.
set -euo pipefail

cd "$(dirname "$0")/.."
build=$1
shift
log=$build/bench.log
mkdir -p "$build"
: >"$log"

# run CMD...: its output to the log, and to the terminal without the
# machine-readable lines; fails when CMD fails.
run() {
	"$@" 2>&1 | tr -d '\r' | tee -a "$log" | { grep -v '^@bench|' || true; }
}

for b in "$@"; do
	run "$b"
done
run scripts/sass-compare.sh "$build"
run "$build/qtest/bench_device"
if [[ ${VGPU_BENCH_GUEST:-1} != 0 ]]; then
	run make --no-print-directory bench-guest
fi

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ -n $(git status --porcelain 2>/dev/null) ]]; then
	commit+=" (with uncommitted changes)"
fi
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "==== make bench: commit $commit; $(nproc) CPUs, ${cpu:-unknown CPU}"
grep -a '^@bench|' "$log" | awk -F'|' '
{
	n++
	for (i = 2; i <= 7; i++) {
		cell[n, i] = $i
		if (length($i) > w[i])
			w[i] = length($i)
	}
}
END {
	split("|figure|value|baseline|ratio|target|verdict", head, "|")
	for (i = 2; i <= 7; i++)
		if (length(head[i]) > w[i])
			w[i] = length(head[i])
	line = ""
	for (i = 2; i <= 7; i++)
		line = line sprintf("%-*s  ", w[i], head[i])
	sub(/ +$/, "", line)
	print line
	for (r = 1; r <= n; r++) {
		line = ""
		for (i = 2; i <= 7; i++)
			line = line sprintf("%-*s  ", w[i], cell[r, i])
		sub(/ +$/, "", line)
		print line
		if (cell[r, 7] == "met")
			met++
		else if (cell[r, 7] == "not met")
			notmet++
	}
	printf "%d figures; targets met %d, not met %d\n", n, met, notmet
}'
