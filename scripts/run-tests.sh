#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-tests.sh BUILD TEST...
#
# Run each test binary, show its output, and count its results.  The
# host tests are kselftests (kselftest_harness.h) and print KTAP: "ok N
# NAME" / "not ok N NAME" per test and, last, "# Totals: pass:N fail:N
# xfail:N xpass:N skip:N error:N", which is what is counted (pass, xfail
# and xpass pass; fail and error fail; skip is counted apart).  A binary
# that ends without that line (a crash, a timeout) counts the "ok" and
# "not ok" lines it printed and one failure more; so does one whose totals
# fall short of its plan ("1..N").  Test scripts that are not kselftests
# may instead end in a line "N passed, N failed" (scripts/test-guest-smoke.sh).
# A binary that hangs (timeout VGPU_TEST_TIMEOUT seconds, default 600) or
# exits non-zero without reporting a failure counts one failure more;
# exit status 4 (KSFT_SKIP) with no failure is a skip, not a failure.
# The tests share a PTX compile cache in BUILD/ptx-cache, emptied first
# (VGPU_CACHE_PATH, when set, is used as it is).
#
# Prints a summary line per binary, the number of skipped tests, and last
# the total as "N passed, N failed".  Exits non-zero on any failure.
set -u

build=${1:?usage: run-tests.sh BUILD TEST...}
shift
timeout_s=${VGPU_TEST_TIMEOUT:-600}
# libvgpu's PTX compile cache (docs/libvgpu.md): unless the caller chose a
# directory, a fresh one in BUILD for each run.  A run from a clean clone
# then compiles each module once and its later tests (the corpus
# programs' test cases, each a process of its own) read it back; no run
# reads what an earlier one left, and no test writes to ~/.cache.  No
# test depends on it: VGPU_CACHE_DISABLE=1 gives the same results.
if [[ -z ${VGPU_CACHE_PATH:-} ]]; then
	VGPU_CACHE_PATH=$(realpath -m "$build/ptx-cache")
	export VGPU_CACHE_PATH
	rm -rf "$VGPU_CACHE_PATH"
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT

total_pass=0
total_fail=0
total_skip=0
summary=()

totals_re='^# Totals: pass:([0-9]+) fail:([0-9]+) xfail:([0-9]+) xpass:([0-9]+) skip:([0-9]+) error:([0-9]+)$'

for t in "$@"; do
	name=$(basename "$t")
	echo "--- $name"
	timeout "$timeout_s" "$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	totals=$(grep -E "$totals_re" "$log" | tail -n 1)
	plan=$(grep -E '^1\.\.[0-9]+' "$log" | head -n 1)
	last=$(tail -n 1 "$log")
	pass=0 fail=0 skip=0 note=""
	if [[ $totals =~ $totals_re ]]; then
		pass=$((BASH_REMATCH[1] + BASH_REMATCH[3] + BASH_REMATCH[4]))
		fail=$((BASH_REMATCH[2] + BASH_REMATCH[6]))
		skip=${BASH_REMATCH[5]}
		if [[ $plan =~ ^1\.\.([0-9]+) ]] && ((BASH_REMATCH[1] != pass + fail + skip)); then
			note=" (planned ${BASH_REMATCH[1]} tests, ran $((pass + fail + skip)))"
			fail=$((fail + 1))
		fi
	elif [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=${BASH_REMATCH[1]}
		fail=${BASH_REMATCH[2]}
	else
		# No closing line: count what it printed, plus the crash.
		skip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log")
		pass=$(($(grep -cE '^ok ' "$log") - skip))
		fail=$(($(grep -cE '^(not ok|FAIL) ' "$log") + 1))
		case $rc in
		124) note=" (timed out after ${timeout_s}s)" ;;
		0) note=" (no closing summary line)" ;;
		*) note=" (exit status $rc without a closing summary line)" ;;
		esac
		rc=0 # counted
	fi
	if ((rc != 0 && fail == 0)); then
		if ((rc == 4)); then
			note="$note (skipped: exit status 4)"
		elif ((rc == 124)); then
			fail=1
			note="$note (timed out after ${timeout_s}s)"
		else
			fail=1
			note="$note (exit status $rc)"
		fi
	fi
	line=$(printf '  %-24s %d passed, %d failed' "$name" "$pass" "$fail")
	if ((skip)); then
		line+=", $skip skipped"
	fi
	summary+=("$line$note")
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
done

echo "--- summary ($build)"
if (($# == 0)); then
	echo "  no test binaries"
fi
for line in "${summary[@]+"${summary[@]}"}"; do
	echo "$line"
done
echo "  $total_skip skipped (not counted below)"
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
