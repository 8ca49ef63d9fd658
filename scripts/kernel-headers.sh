#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# kernel-headers.sh KREL: print the path of a kernel tree to build
# out-of-tree modules against for Debian's KREL (e.g. 6.12.117+deb12-amd64),
# unpacking it first when it is missing.
#
# The three packages a module build needs (linux-headers-KREL,
# linux-headers-<version>-common and linux-kbuild-<version>) are fetched
# with `apt-get download` and unpacked with dpkg-deb into
# build/kernel-headers/KREL/, never installed: `apt-get install
# linux-headers-KREL` would pull in linux-image-KREL, initramfs-tools and
# udev, and put a new kernel into the host's /boot and boot menu.  The
# user's workstation keeps its own kernel.  The headers' Makefile names the
# common tree by its absolute /usr/src path; that line is pointed at the
# unpacked copy.
#
# Installs with apt-get only what kbuild's programs need to run: gcc-12
# (which the headers' Makefile calls by name), pahole (BTF of the module),
# libelf1, libssl3 (kbuild's programs link them) and bc, flex, bison.
set -euo pipefail

krel=${1:?usage: kernel-headers.sh KREL}
cd "$(dirname "$0")/.."
top=$PWD
root=$top/build/kernel-headers/$krel
kdir=$root/usr/src/linux-headers-$krel
log() { echo "kernel-headers: $*" >&2; }

scripts/apt-install.sh --tag kernel-headers gcc-12 pahole libelf1 libssl3 bc flex bison

# written last: its presence says the tree is whole
if [[ -f $root/.complete ]]; then
	echo "$kdir"
	exit 0
fi

mkdir -p "$top/build/kernel-headers"
exec 9>"$top/build/kernel-headers/.lock"
flock 9
if [[ -f $root/.complete ]]; then
	echo "$kdir"
	exit 0
fi

# linux-headers-6.12.117+deb12-amd64 -> the version 6.12.117+deb12 of the
# -common and linux-kbuild packages
ver=${krel%-*}
pkgs=("linux-headers-$krel" "linux-headers-$ver-common" "linux-kbuild-$ver")
log "fetching ${pkgs[*]} (unpacked into build/, not installed)"
rm -rf "$root" "$root.dl"
mkdir -p "$root.dl"
if ! (cd "$root.dl" && apt-get download -q "${pkgs[@]}" >&2); then
	log "cannot download ${pkgs[*]} (no network to the archive? apt-get update?)"
	exit 1
fi
for deb in "$root.dl"/*.deb; do
	dpkg-deb -x "$deb" "$root"
done
rm -rf "$root.dl"

# "include /usr/src/linux-headers-VER-common/Makefile" -> the unpacked copy
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$kdir/Makefile"
grep -q "^include $root/usr/src/linux-headers-$ver-common/Makefile" "$kdir/Makefile" || {
	log "$kdir/Makefile does not include the common tree as expected"
	exit 1
}
# the scripts and tools links are relative (../../lib/linux-kbuild-VER):
# they resolve inside $root
[[ -x $kdir/scripts/mod/modpost ]] || {
	log "$kdir/scripts/mod/modpost missing: the kbuild package did not unpack as expected"
	exit 1
}
touch "$root/.complete"
echo "$kdir"
