#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# check-symbols.sh LIBVGPU.SO [VGPU.H] [LIBVGPU.SYM]
#
# libvgpu's ABI is exactly the symbol list (default libvgpu/libvgpu.sym):
#
#   1. the list names every function vgpu.h (default libvgpu/vgpu.h)
#      declares VGPU_API, and nothing else;
#   2. the shared library's defined dynamic symbols (nm -D --defined-only)
#      are exactly the list, each with the version node VGPU_1: no core,
#      assembler, sim or libc internals leak.
#
# Prints what differs; exit status 0 when both hold, 1 when not, 2 on a
# usage error.
set -u -o pipefail

cd "$(dirname "$0")/.."
so=${1:-}
header=${2:-libvgpu/vgpu.h}
list=${3:-libvgpu/libvgpu.sym}
if [[ -z $so || ! -f $so || ! -f $header || ! -f $list ]]; then
	echo "usage: check-symbols.sh LIBVGPU.SO [VGPU.H] [LIBVGPU.SYM]" >&2
	exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "$list" | sort >"$tmp/list"
# Each VGPU_API declaration, joined up to its ';', less its parameter list:
# the name is the last identifier before the '('.
awk '/^VGPU_API/ { f = 1; s = "" }
	f { s = s " " $0 }
	f && /;/ { print s; f = 0 }' "$header" |
	sed -E 's/\(.*//; s/.*[^A-Za-z0-9_]([A-Za-z_][A-Za-z0-9_]*)[[:space:]]*$/\1/' |
	sort >"$tmp/header"
# "ADDR TYPE NAME@@VGPU_1"; the version node itself is an absolute symbol
nm -D --defined-only "$so" | awk '$2 != "A" { print $3 }' | sort >"$tmp/dynsym"
sed 's/@.*//' "$tmp/dynsym" | sort >"$tmp/exported"

status=0
if ! diff -u --label "$list" --label "VGPU_API in $header" \
	"$tmp/list" "$tmp/header"; then
	echo "check-symbols: $list and the VGPU_API functions of $header differ"
	status=1
fi
if ! diff -u --label "$list" --label "exported by $so" \
	"$tmp/list" "$tmp/exported"; then
	echo "check-symbols: $so exports other symbols than $list"
	status=1
fi
unversioned=$(grep -v '@@VGPU_1$' "$tmp/dynsym" || true)
if [[ -n $unversioned ]]; then
	echo "check-symbols: symbols without the version VGPU_1:" $unversioned
	status=1
fi
if ((status == 0)); then
	echo "check-symbols: $(wc -l <"$tmp/list") symbols: $so exports exactly $list (VGPU_1), which is vgpu.h's API"
fi
exit $status
