#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build vgpu.ko (kernel/) against the guest kernel's Debian headers, W=1.
# Installs linux-headers-<guest kernel> when missing.  The guest kernel is
# Debian's 6.12 LTS (scripts/guest-kernel.sh resolves the newest one in
# the archive; KREL overrides it).  Output: build/module/vgpu.ko (objects
# in build/module/src/) and build/module/kernel-release.
set -eu
cd "$(dirname "$0")/.."

# --harness-only DIR: extract kselftest_harness.h and kselftest.h from
# Debian's linux-source-6.12 tarball into DIR (tests/selftests/vgpu).
if [ "${1:-}" = --harness-only ]; then
	dir=$2
	tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1 || true)
	if [ -z "$tarball" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y linux-source-6.12 >&2
		tarball=$(ls /usr/src/linux-source-6.12.tar.* | head -n1)
	fi
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=4 \
		linux-source-6.12/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.12/tools/testing/selftests/kselftest.h
	exit 0
fi

KREL=$(scripts/guest-kernel.sh)
KDIR=${KDIR:-/usr/src/linux-headers-$KREL}
if [ ! -d "$KDIR" ]; then
	echo "build-module: installing linux-headers-$KREL" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y "linux-headers-$KREL" >&2
fi
# Build in a copy (build/module/src) so that the tree stays clean.
SRC=build/module/src
mkdir -p "$SRC/kernel" "$SRC/uapi"
cp Kbuild "$SRC/"
cp kernel/Kbuild kernel/*.c kernel/*.h "$SRC/kernel/"
cp uapi/vgpu_hw.h uapi/vgpu_drm.h "$SRC/uapi/"
make -C "$KDIR" M="$PWD/$SRC" W=1 modules
cp "$SRC/kernel/vgpu.ko" build/module/vgpu.ko
echo "$KREL" > build/module/kernel-release
