#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# corpus-schedules.sh BUILD N [FIRST]
#
# The corpus programs (BUILD/tests/test_corpus_*: real CUDA code built by
# nvcc, each kernel checked exactly on the host) under N random schedules:
# each program runs once per seed FIRST .. FIRST+N-1 (default FIRST 1)
# with VGPU_RANDOM_SCHEDULE=SEED, which makes libcuda launch every kernel
# under the device's seeded random interleaving (launch i with seed
# SEED + i; docs/cuda.md).  A failure names its seed, so that
#   VGPU_RANDOM_SCHEDULE=SEED BUILD/tests/test_corpus_PROG TEST
# replays it.  Ends with "N passed, N failed" over every test and seed.
set -u
build=${1:?usage: corpus-schedules.sh BUILD N [FIRST]}
n=${2:?usage: corpus-schedules.sh BUILD N [FIRST]}
first=${3:-1}
cd "$(dirname "$0")/.."
progs=("$build"/tests/test_corpus_*)
if [[ ! -x ${progs[0]} ]]; then
	echo "corpus-schedules: no corpus programs in $build/tests" >&2
	exit 2
fi
# one PTX compile cache for every seed (run-tests.sh would start each afresh)
if [[ -z ${VGPU_CACHE_PATH:-} ]]; then
	VGPU_CACHE_PATH=$(realpath -m "$build/ptx-cache-schedules")
	export VGPU_CACHE_PATH
	rm -rf "$VGPU_CACHE_PATH"
fi
pass=0 fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((s = first; s < first + n; s++)); do
	VGPU_RANDOM_SCHEDULE=$s scripts/run-tests.sh "$build" "${progs[@]}" >"$log" 2>&1
	last=$(tail -n 1 "$log")
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=$((pass + BASH_REMATCH[1]))
		fail=$((fail + BASH_REMATCH[2]))
		if ((BASH_REMATCH[2])); then
			echo "seed $s: ${BASH_REMATCH[2]} failed:"
			grep -E '^(not ok|# [a-z_]+ t_)' "$log" | grep -B1 '^not ok' | sed 's/^/  /'
		fi
	else
		echo "seed $s: no summary"
		tail -n 20 "$log" | sed 's/^/  /'
		fail=$((fail + 1))
	fi
	echo "seed $s: $last"
done
echo "$pass passed, $fail failed"
((fail == 0))
