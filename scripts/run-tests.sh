#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-tests.sh BUILD TEST...
#
# Run each host test binary, show its output, and sum the closing
# "N passed, N failed" lines.  A binary that crashes, hangs (timeout
# VGPU_TEST_TIMEOUT seconds, default 600) or exits non-zero without
# reporting a failure counts as one more failure on top of what it
# printed.  Prints a per-suite summary; the last line is the total as
# "N passed, N failed".  Exits non-zero on any failure.
set -u

build=${1:?usage: run-tests.sh BUILD TEST...}
shift
timeout_s=${VGPU_TEST_TIMEOUT:-600}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

total_pass=0
total_fail=0
summary=()

for t in "$@"; do
	name=$(basename "$t")
	echo "--- $name"
	timeout "$timeout_s" "$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	last=$(tail -n 1 "$log")
	note=""
	if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		pass=${BASH_REMATCH[1]}
		fail=${BASH_REMATCH[2]}
		if ((rc != 0 && fail == 0)); then
			fail=1
			note=" (exit status $rc)"
		fi
	else
		# No closing line: count what it printed, plus the crash.
		pass=$(grep -c '^ok ' "$log")
		fail=$(($(grep -c '^FAIL ' "$log") + 1))
		case $rc in
		124) note=" (timed out after ${timeout_s}s)" ;;
		0) note=" (no closing summary line)" ;;
		*) note=" (exit status $rc without a closing summary line)" ;;
		esac
	fi
	summary+=("$(printf '  %-24s %d passed, %d failed%s' "$name" "$pass" "$fail" "$note")")
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
done

echo "--- summary ($build)"
if (($# == 0)); then
	echo "  no test binaries"
fi
for line in "${summary[@]+"${summary[@]}"}"; do
	echo "$line"
done
echo "$total_pass passed, $total_fail failed"
((total_fail == 0))
