#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run-examples.sh [BUILD] [--backend sim|drm|auto] [--bindir DIR]
#                 [--progdir DIR] [--examples DIR]
#
# Run every example through libvgpu on one backend (default sim) and check
# each result:
#
#   examples/*.vgs  each through vgpu-run.  An example says how to run it in
#                   its leading comment block:
#                     // vgpu-run: --block 64 --buffer out:256 --dump out
#                     // vgpu-run-exit: 3   (optional: expected exit status)
#                   Every "// vgpu-run:" line is one run of
#                   vgpu-run --backend BACKEND FLAGS NAME.vgs (no line: one
#                   run without flags), inside the examples directory, so
#                   data files are named relative to it.  Where NAME.expected
#                   exists, a successful run's output must equal it.
#   examples/*.c    each program (built by make into BUILD/examples/) runs
#                   with the backend as its device argument and must exit 0.
#
# Where things are: BUILD (default build) has bin/vgpu-run and examples/;
# --bindir and --progdir name the directories of vgpu-run and of the
# example programs instead, and --examples the directory of the .vgs,
# .expected (and .c) files (default: the repository's examples/).  The
# guest runs this very script (POSIX sh, busybox) with its own paths.
#
# Prints each run's output, then "examples: N ran as expected, N did not";
# exits non-zero if any run ended with another status or output than
# expected, 2 on a usage error.
set -u

usage() {
	echo "usage: run-examples.sh [BUILD] [--backend sim|drm|auto] [--bindir DIR] [--progdir DIR] [--examples DIR]" >&2
	exit 2
}

top=$(cd "$(dirname "$0")/.." && pwd)
build=
backend=sim
bindir=
progdir=
exdir=
while [ $# -gt 0 ]; do
	case $1 in
	--backend) [ $# -ge 2 ] || usage; backend=$2; shift 2 ;;
	--bindir) [ $# -ge 2 ] || usage; bindir=$2; shift 2 ;;
	--progdir) [ $# -ge 2 ] || usage; progdir=$2; shift 2 ;;
	--examples) [ $# -ge 2 ] || usage; exdir=$2; shift 2 ;;
	-h|--help) sed -n '3,31s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) usage ;;
	*) [ -z "$build" ] || usage; build=$1; shift ;;
	esac
done
case $backend in
sim|drm|auto) ;;
*) echo "run-examples: --backend $backend: not sim, drm or auto" >&2; exit 2 ;;
esac
[ -n "$build" ] || build=build
case $build in /*) ;; *) build=$top/$build ;; esac
[ -n "$bindir" ] || bindir=$build/bin
[ -n "$progdir" ] || progdir=$build/examples
[ -n "$exdir" ] || exdir=$top/examples
bindir=$(cd "$bindir" 2>/dev/null && pwd) || bindir=/nonexistent
progdir=$(cd "$progdir" 2>/dev/null && pwd) || progdir=/nonexistent
runner=$bindir/vgpu-run
if [ ! -x "$runner" ]; then
	echo "run-examples: $runner not built (run make first)" >&2
	exit 1
fi
cd "$exdir" || exit 1

out=$(mktemp)
trap 'rm -f "$out"' EXIT
ok=0
bad=0

# check NAME RC EXPECT [EXPECTED-FILE]: count one run.
check() {
	if [ "$2" != "$3" ]; then
		echo "=== $1: exit status $2, expected $3"
		bad=$((bad + 1))
	elif [ "$2" = 0 ] && [ -n "${4:-}" ] && [ -f "$4" ] &&
		! cmp -s "$out" "$4"; then
		echo "=== $1: output differs from $4:"
		diff "$4" "$out"
		bad=$((bad + 1))
	else
		ok=$((ok + 1))
	fi
}

found=0
for ex in *.vgs; do
	[ -f "$ex" ] || continue
	found=1
	name=${ex%.vgs}
	# the "// vgpu-run:" lines of the leading comment block
	runs=$(awk '!/^[[:space:]]*\/\// { exit }
		match($0, /^[[:space:]]*\/\/[[:space:]]*vgpu-run:/) {
			print substr($0, RSTART + RLENGTH) }' "$ex")
	expect=$(awk '!/^[[:space:]]*\/\// { exit }
		match($0, /^[[:space:]]*\/\/[[:space:]]*vgpu-run-exit:[[:space:]]*/) {
			print substr($0, RSTART + RLENGTH) + 0; exit }' "$ex")
	[ -n "$expect" ] || expect=0
	while IFS= read -r flags; do
		flags=$(echo "$flags" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		echo "=== $ex: vgpu-run --backend $backend${flags:+ }$flags $ex"
		set -f
		# shellcheck disable=SC2086 # flags split on blanks, by design
		"$runner" --backend "$backend" $flags "$ex" >"$out"
		rc=$?
		set +f
		cat "$out"
		check "$ex" "$rc" "$expect" "$name.expected"
	done <<EOF
$runs
EOF
done

for src in *.c; do
	[ -f "$src" ] || continue
	found=1
	name=${src%.c}
	prog=$progdir/$name
	echo "=== $name: $name $backend"
	if [ ! -x "$prog" ]; then
		echo "=== $name: $prog not built"
		bad=$((bad + 1))
		continue
	fi
	"$prog" "$backend" >"$out" 2>&1
	rc=$?
	cat "$out"
	check "$name" "$rc" 0
done

if [ "$found" = 0 ]; then
	echo "run-examples: no examples in $exdir"
	exit 0
fi
echo "examples ($backend): $ok ran as expected, $bad did not"
[ "$bad" = 0 ]
