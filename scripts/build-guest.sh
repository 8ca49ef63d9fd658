#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build-guest.sh: the guest that `make run`, `make shell` and the guest
# smoke test boot, in build/guest/:
#
#   vmlinuz             Debian's linux-image-amd64 kernel (version resolved
#                       from the package, .deb fetched with apt-get download
#                       and unpacked here; never installed on the host)
#   modules/            that kernel's modules (for drivers to come)
#   vgpu-smoke          tests/guest/vgpu-smoke.c, static
#   store.vgo           tests/guest/store.vgs, assembled by build/bin/vgpu-as
#   initramfs.cpio.gz   busybox-static, /init, vgpu-smoke, /vgpu/store.vgo
#
# Needs build/bin/vgpu-as (`make`; the Makefile's guest target builds it).
#
# Installs what it needs with apt-get (busybox-static, cpio, kmod, the
# firmware QEMU boots with).  Each step runs only when its output is
# missing or older than its inputs.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
out=$top/build/guest
log() { echo "build-guest: $*"; }

# One run at a time (make check, make run and a developer may overlap).
mkdir -p "$top/build"
exec 9>"$top/build/.build-guest.lock"
if ! flock -n 9; then
	log "waiting for another run to finish"
	flock 9
fi

sudo=()
if ((EUID != 0)); then
	sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive

packages=(build-essential busybox-static cpio kmod qemu-system-data seabios)
missing=()
for p in "${packages[@]}"; do
	if [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) != installed ]]; then
		missing+=("$p")
	fi
done
if ((${#missing[@]})); then
	log "installing ${missing[*]}"
	"${sudo[@]+"${sudo[@]}"}" apt-get update -q
	"${sudo[@]+"${sudo[@]}"}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

mkdir -p "$out"

# ---- kernel ----
if [[ ! -f $out/vmlinuz ]]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1)
	if [[ -z $pkg ]]; then
		"${sudo[@]+"${sudo[@]}"}" apt-get update -q
		pkg=$(apt-cache depends linux-image-amd64 |
			sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n 1)
	fi
	[[ -n $pkg ]] || { log "cannot resolve linux-image-amd64"; exit 1; }
	log "fetching $pkg"
	rm -rf "$out/dl" "$out/kernel"
	mkdir -p "$out/dl"
	(cd "$out/dl" && apt-get download -q "$pkg")
	dpkg-deb -x "$out"/dl/"$pkg"_*.deb "$out/kernel"
	kver=${pkg#linux-image-}
	rm -rf "$out/modules"
	mv "$out/kernel/lib/modules/$kver" "$out/modules"
	echo "$kver" >"$out/kernel-version"
	cp "$out/kernel/boot/vmlinuz-$kver" "$out/vmlinuz.tmp"
	mv "$out/vmlinuz.tmp" "$out/vmlinuz"
	rm -rf "$out/kernel" "$out/dl"
fi

# ---- smoke program ----
smoke_src=tests/guest/vgpu-smoke.c
if [[ ! -x $out/vgpu-smoke || $smoke_src -nt $out/vgpu-smoke ||
	uapi/vgpu_hw.h -nt $out/vgpu-smoke ]]; then
	log "building vgpu-smoke"
	gcc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iuapi \
		-o "$out/vgpu-smoke" "$smoke_src"
fi

if [[ ! -f $out/store.vgo || tests/guest/store.vgs -nt $out/store.vgo ]]; then
	build/bin/vgpu-as -o "$out/store.vgo" tests/guest/store.vgs
fi

# ---- initramfs ----
rd=$out/initramfs.cpio.gz
if [[ ! -f $rd || $out/vgpu-smoke -nt $rd || tests/guest/init -nt $rd ||
	$out/store.vgo -nt $rd || $0 -nt $rd ]]; then
	log "building the initramfs"
	root=$out/initramfs
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,vgpu}
	cp "$out/store.vgo" "$root/vgpu/store.vgo"
	cp /bin/busybox "$root/bin/busybox"
	cp "$out/vgpu-smoke" "$root/bin/vgpu-smoke"
	cp tests/guest/init "$root/init"
	chmod 755 "$root/init"
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) |
		gzip -1 >"$rd.tmp"
	mv "$rd.tmp" "$rd"
fi
log "guest ready: kernel $(cat "$out/kernel-version"), $rd"
