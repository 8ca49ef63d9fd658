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
# Build in a copy ($OUT/src) so that the tree stays clean.
SRC=$OUT/src
rm -rf "$SRC/kernel/tests"
mkdir -p "$SRC/kernel" "$SRC/uapi"
cp Kbuild "$SRC/"
cp kernel/Kbuild kernel/*.c kernel/*.h "$SRC/kernel/"
if [ -d kernel/tests ]; then
	cp -r kernel/tests "$SRC/kernel/"
fi
cp uapi/vgpu_hw*.h uapi/vgpu_drm.h uapi/vgpu_waitgraph.h "$SRC/uapi/"
make -C "$KDIR" M="$PWD/$SRC" W=1 modules
cp "$SRC/kernel/vgpu.ko" "$OUT/vgpu.ko"
echo "$KREL" > "$OUT/kernel-release"
