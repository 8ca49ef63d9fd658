#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# run-examples.sh BUILD
#
# Run every examples/*.vgs on the host runner.  Each example says how to
# run it in its leading comment block:
#
#   // vgpu-run: --block 64 --buffer out:256 --dump out
#   // vgpu-run-exit: 3        (optional: expected exit status, default 0)
#
# Every "// vgpu-run:" line is one run of BUILD/bin/vgpu-run FLAGS FILE
# (no line: one run without flags).  Flags are split on blanks; the runs
# happen inside examples/, so data files are named relative to it.  Where
# examples/NAME.expected exists, a successful run's output must equal it.
# Exits non-zero if any run ends with another status or output than
# expected.
set -u

build=${1:?usage: run-examples.sh BUILD}
cd "$(dirname "$0")/.."
runner=$(cd "$build/bin" 2>/dev/null && pwd)/vgpu-run
if [[ ! -x $runner ]]; then
	echo "run-examples: $build/bin/vgpu-run not built (run make first)" >&2
	exit 1
fi

shopt -s nullglob
examples=(examples/*.vgs)
if ((${#examples[@]} == 0)); then
	echo "run-examples: no examples yet (examples/*.vgs)"
	exit 0
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
ok=0
bad=0
for ex in "${examples[@]}"; do
	name=$(basename "$ex")
	runs=()
	expect=0
	while IFS= read -r line; do
		[[ $line =~ ^[[:space:]]*// ]] || break
		if [[ $line =~ ^[[:space:]]*//[[:space:]]*vgpu-run:(.*)$ ]]; then
			runs+=("${BASH_REMATCH[1]}")
		elif [[ $line =~ ^[[:space:]]*//[[:space:]]*vgpu-run-exit:[[:space:]]*([0-9]+) ]]; then
			expect=${BASH_REMATCH[1]}
		fi
	done <"$ex"
	((${#runs[@]})) || runs=("")

	for flags in "${runs[@]}"; do
		read -ra args <<<"$flags"
		echo "=== $name: vgpu-run${flags:+ }${flags# } $name"
		(cd examples && "$runner" "${args[@]+"${args[@]}"}" "$name") >"$out"
		rc=$?
		cat "$out"
		expected=${ex%.vgs}.expected
		if ((rc != expect)); then
			echo "=== $name: exit status $rc, expected $expect"
			bad=$((bad + 1))
		elif ((rc == 0)) && [[ -f $expected ]] && ! cmp -s "$out" "$expected"; then
			echo "=== $name: output differs from $expected:"
			diff "$expected" "$out"
			bad=$((bad + 1))
		else
			ok=$((ok + 1))
		fi
	done
done
echo "examples: $ok ran as expected, $bad did not"
((bad == 0))
