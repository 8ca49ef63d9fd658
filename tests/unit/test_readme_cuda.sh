#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_readme_cuda.sh BUILD [SAN=0|1]
#
# README.md's "Run a CUDA program on vGPU" as a user follows it: the
# commands of the code block after the marker comment, run exactly as
# written (one `bash -c` each) in a scratch directory that holds the
# tree's examples/ and the build directory as build/ (so BUILD=build-asan
# is what "build" names there).  With SAN=1 the libraries are built with
# ASan and UBSan, which must load first: LD_PRELOAD names their runtimes
# (the commands themselves are unchanged).
#
#   readme_block   the README has the section, the marker and two commands:
#                  an nvcc build and a run
#   build          the nvcc command succeeds and makes the program
#   run            the run command succeeds, on vGPU's libcudart.so.13
#                  (the device is "vGPU ..."), and prints "Test PASSED"
#
# KTAP as test_install.sh prints it; exits non-zero on a failure.
set -u -o pipefail

build=${1:?usage: test_readme_cuda.sh BUILD [SAN=0|1]}
shift
SAN=0
for a in "$@"; do
	case $a in
	SAN=*) SAN=${a#SAN=} ;;
	*) echo "test_readme_cuda: unknown argument $a" >&2; exit 2 ;;
	esac
done
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$build" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0 fail=0 n=0
result() { # NAME STATUS
	n=$((n + 1))
	if [ "$2" = 0 ]; then
		echo "ok $n $1"
		pass=$((pass + 1))
	else
		echo "not ok $n $1"
		fail=$((fail + 1))
	fi
}

echo "TAP version 13"
echo "1..3"

# the block after the marker: lines between its ``` fences
mapfile -t cmds < <(awk '/<!-- test_readme_cuda runs the commands of this block/ { m = 1; next }
	m == 1 && /^```/ { m = 2; next }
	m == 2 && /^```/ { exit }
	m == 2 && NF { print }' "$top/README.md")
ok=1
if ((${#cmds[@]} == 2)) && [[ ${cmds[0]} == nvcc\ * ]] && [[ ${cmds[1]} == *./vectorAdd* ]]; then
	ok=0
else
	echo "# README.md: want two commands (nvcc ..., then a run of ./vectorAdd), got ${#cmds[@]}:"
	printf '#   %s\n' "${cmds[@]}"
fi
result readme_block $ok

ln -s "$top/examples" "$tmp/examples"
ln -s "$build" "$tmp/build"
ok=1
if ((${#cmds[@]} == 2)); then
	echo "# \$ ${cmds[0]}"
	if out=$(cd "$tmp" && bash -c "${cmds[0]}" 2>&1) && [ -x "$tmp/vectorAdd" ]; then
		ok=0
	else
		echo "$out" | sed 's/^/# /'
	fi
fi
result build $ok

ok=1
if [ -x "$tmp/vectorAdd" ]; then
	preload=
	if [ "$SAN" = 1 ]; then
		preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
	fi
	echo "# \$ ${cmds[1]}"
	out=$(cd "$tmp" && LD_PRELOAD=$preload bash -c "${cmds[1]}" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc = 0 ] && [[ $out == *"Device 0: vGPU"* ]] && [[ $out == *"Test PASSED"* ]]; then
		ok=0
	else
		echo "# exit status $rc; want \"Device 0: vGPU ...\" and \"Test PASSED\""
	fi
fi
result run $ok

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ $fail = 0 ]
