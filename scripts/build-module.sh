#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build vgpu.ko (kernel/) against the guest kernel's Debian headers, W=1.
# The headers are Debian's, unpacked into build/ (scripts/kernel-headers.sh),
# never installed on the host.  The guest kernel is
# Debian's 6.12 LTS (scripts/guest-kernel.sh resolves the newest one in
# the archive; KREL overrides it), or the configured tree KDIR names (the
# debug kernel).  Output: $MODOUT/vgpu.ko (default build/module; objects in
# $MODOUT/src/) and $MODOUT/kernel-release.
set -eu
cd "$(dirname "$0")/.."

# --harness-only DIR: extract kselftest_harness.h and kselftest.h from
# Debian's linux-source-6.12 tarball into DIR (tests/selftests/vgpu).
if [ "${1:-}" = --harness-only ]; then
	dir=$2
	tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1 || true)
	if [ -z "$tarball" ]; then
		scripts/apt-install.sh --tag build-module linux-source-6.12
		tarball=$(ls /usr/src/linux-source-6.12.tar.* | head -n1)
	fi
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=4 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h
	exit 0
fi

if [ -n "${KDIR:-}" ]; then
	# a configured kernel tree (scripts/build-debug-kernel.sh)
	KREL=$(make -s -C "$KDIR" kernelrelease)
else
	KREL=$(scripts/guest-kernel.sh)
	KDIR=$(scripts/kernel-headers.sh "$KREL")
fi
OUT=${MODOUT:-build/module}
# Build in a copy ($OUT/src) so that the tree stays clean.  Each file is
# copied only where it differs: an unchanged one keeps its time, so make
# rebuilds what changed (a copy of everything rebuilt the whole module on
# each of make check's guest suites, about a minute with the debug kernel).
SRC=$OUT/src

# sync DIR FILE...: FILEs into DIR where they differ; the sources in DIR
# that are not among them (removed from the tree) go
sync_dir() {
	dir=$1
	shift
	mkdir -p "$dir"
	for have in "$dir"/*.c "$dir"/*.h "$dir"/Kbuild; do
		[ -e "$have" ] || continue
		keep=0
		for f in "$@"; do
			[ "${f##*/}" = "${have##*/}" ] && keep=1 && break
		done
		[ $keep = 1 ] || rm -f "$have"
	done
	for f in "$@"; do
		cmp -s "$f" "$dir/${f##*/}" || cp "$f" "$dir/"
	done
}

sync_dir "$SRC" Kbuild
sync_dir "$SRC/kernel" kernel/Kbuild kernel/*.c kernel/*.h
if [ -d kernel/tests ]; then
	sync_dir "$SRC/kernel/tests" kernel/tests/*
else
	rm -rf "$SRC/kernel/tests"
fi
sync_dir "$SRC/uapi" uapi/vgpu_hw*.h uapi/vgpu_drm.h uapi/vgpu_waitgraph.h
# warnings are errors, as in the rest of the project (W=1: the extra ones)
make -C "$KDIR" M="$PWD/$SRC" W=1 KCFLAGS=-Werror modules
# replaced whole (a new file renamed over it), and only when it changed: a
# guest run beside this one (make check's streams) may be copying it
if ! cmp -s "$SRC/kernel/vgpu.ko" "$OUT/vgpu.ko"; then
	cp "$SRC/kernel/vgpu.ko" "$OUT/vgpu.ko.tmp"
	mv -f "$OUT/vgpu.ko.tmp" "$OUT/vgpu.ko"
fi
echo "$KREL" > "$OUT/kernel-release"
