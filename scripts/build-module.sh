#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build vgpu.ko (kernel/) against the guest kernel's Debian headers, W=1.
# Installs linux-headers-<guest kernel> when missing.  The guest kernel is
# the one Debian's linux-image-amd64 depends on (6.1.0-NN-amd64), unless
# KREL is set.  Output: build/module/vgpu.ko (objects in build/module/src/).
set -eu
cd "$(dirname "$0")/.."

# --harness-only DIR: extract kselftest_harness.h and kselftest.h from
# Debian's linux-source-6.1 tarball into DIR (for tests/selftests/vgpu).
if [ "${1:-}" = --harness-only ]; then
	dir=$2
	tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n1 || true)
	if [ -z "$tarball" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y linux-source-6.1 >&2
		tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -n1)
	fi
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=4 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h
	exit 0
fi

if [ -z "${KREL:-}" ]; then
	KREL=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\(6\.1\.0-[0-9]*-amd64\).*/\1/p' |
		head -n1)
fi
[ -n "$KREL" ] || { echo "build-module: cannot resolve the guest kernel" >&2; exit 1; }
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
