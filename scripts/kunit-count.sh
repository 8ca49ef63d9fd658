#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kunit-count.sh FILE: count the KUnit results in FILE with the kernel's
# own KTAP parser, `tools/testing/kunit/kunit.py parse`, from Debian's
# linux-source-6.12 (the debug kernel's tree when it is built, else
# tools/testing/kunit extracted from the tarball into build/kunit-tool).
#
# FILE is KTAP text: the concatenated /sys/kernel/debug/kunit/<suite>/results
# files, or a guest serial log holding them between the lines
# VGPU-KUNIT-BEGIN and VGPU-KUNIT-END (only that part is read then, when
# it holds KTAP), or the kernel log of the load (printk timestamps are
# dropped).  Each results file is a KTAP document of its own
# ("KTAP version 1", "1..1", the suite); kunit.py reads one document, so
# the documents are first joined into one: their top-level plans summed,
# their top-level result lines numbered on.  Nothing else is rewritten.
#
# Prints the parser's report, then "N skipped" and, last,
# "N passed, N failed" (crashed tests and parser errors count as failed;
# a file without any result counts one failure).  Exit status 0 only with
# no failure.
set -euo pipefail

cd "$(dirname "$0")/.."
file=${1:?usage: kunit-count.sh KTAP-FILE}
[[ -r $file ]] || { echo "kunit-count: cannot read $file" >&2; exit 2; }

tool=
if [[ -f build/guest-debug/kdir ]]; then
	tool=$(cat build/guest-debug/kdir)/tools/testing/kunit/kunit.py
fi
if [[ ! -f $tool ]]; then
	tool=build/kunit-tool/tools/testing/kunit/kunit.py
	if [[ ! -f $tool ]]; then
		tarball=/usr/src/linux-source-6.12.tar.xz
		if [[ ! -f $tarball ]]; then
			scripts/apt-install.sh --tag kunit-count linux-source-6.12
		fi
		mkdir -p build/kunit-tool
		tar -xf "$tarball" -C build/kunit-tool --strip-components=1 \
			linux-source-6.12/tools/testing/kunit
	fi
fi

ktap=$(mktemp)
trap 'rm -f "$ktap"' EXIT
# Carriage returns and printk timestamps off; the marked part if marked.
sed -e 's/\r$//' -e 's/^\[ *[0-9]*\.[0-9]*\] //' "$file" |
	awk '/^VGPU-KUNIT-BEGIN$/ { inside = 1; n = 0; ktap = 0; next }
	     /^VGPU-KUNIT-END$/ { inside = 0; next }
	     { all[++lines] = $0 }
	     inside { part[++n] = $0; if (/^K?TAP version /) ktap = 1 }
	     END {
		if (ktap) for (i = 1; i <= n; i++) print part[i]
		else for (i = 1; i <= lines; i++) print all[i]
	     }' |
	awk '/^K?TAP version [0-9]+$/ { started = 1; plan_next = 1; next }
	     !started { next }
	     plan_next && /^1\.\.[0-9]+/ { plan += substr($1, 4); plan_next = 0; next }
	     { plan_next = 0 }
	     /^(not )?ok [0-9]+/ {
		not = ($1 == "not")
		sub(/^(not )?ok [0-9]+/, (not ? "not ok " : "ok ") (++n))
	     }
	     { body[++lines] = $0 }
	     END {
		if (!started) exit
		print "KTAP version 1"
		print "1.." plan
		for (i = 1; i <= lines; i++) print body[i]
	     }' >"$ktap"

out=$(python3 "$tool" parse "$ktap" 2>&1) || true
echo "$out"
# "Testing complete. Ran 23 tests: passed: 21, failed: 1, skipped: 1"
summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' <<<"$out" | tail -n 1 || true)
field() { sed -n "s/.*[:,] $1: \([0-9]*\).*/\1/p" <<<"$summary" | head -n 1; }
pass=$(field passed)
fail=$(field failed)
skip=$(field skipped)
crash=$(field crashed)
errors=$(field errors)
pass=${pass:-0}
fail=$((${fail:-0} + ${crash:-0} + ${errors:-0}))
if [[ -z $summary ]] || ((pass + fail + ${skip:-0} == 0)); then
	echo "kunit-count: no KUnit results in $file"
	fail=$((fail + 1))
fi
echo "${skip:-0} skipped"
echo "$pass passed, $fail failed"
((fail == 0))
