#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build-guest.sh: the guest that `make run`, `make shell` and the guest
# smoke test boot, in build/guest/:
#
#   vmlinuz             Debian's 6.12 LTS kernel for bookworm
#                       (linux-image-6.12.N+deb12-amd64-unsigned, the newest
#                       in the archive: scripts/guest-kernel.sh; the .deb is
#                       fetched with apt-get download and unpacked here,
#                       never installed on the host)
#   modules/            that kernel's modules
#   vgpu-smoke          tests/guest/vgpu-smoke.c, static
#   store.vgo           tests/guest/store.vgs, assembled by build/bin/vgpu-as
#   initramfs.cpio.gz   busybox-static and /init (tests/guest/init), with
#                         /bin/vgpu-smoke, /vgpu/store.vgo   the smoke test
#                         /bin/vgpu-run, vgpu-info, vgpu-as, vgpu-objdump and
#                         the example programs (build/guest-bin: static,
#                         linked with libdrm.a)
#                         /bin/run-examples (scripts/run-examples.sh)
#                         /examples: examples/*.vgs, .expected, .c
#                         /lib/modules: drm, drm_shmem_helper, gpu-sched,
#                         drm_gpuvm,
#                         drm_exec with their dependencies, and vgpu.ko
#                         (build/module/vgpu.ko, when built)
#                         the guest selftests of build/selftests, when built
#                         the CUDA programs of build/guest-cuda (make
#                         guest-cuda: scripts/guest-cuda.sh), when built,
#                         in /bin, with libcudart.so.13, libcuda.so.1 and
#                         libvgpu.so.2 in /usr/lib/vgpu-cuda (/init puts it
#                         on LD_LIBRARY_PATH) and the host's shared
#                         libraries they load, the loader included
#
# Needs build/bin/vgpu-as and build/guest-bin/ (`make guest` builds both
# first; so does this script, through make, when they are missing).
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

packages=(build-essential busybox-static cpio kmod qemu-system-data seabios)
scripts/apt-install.sh --tag build-guest "${packages[@]}"

mkdir -p "$out"

# ---- kernel ----
# Debian's 6.12 LTS (scripts/guest-kernel.sh: the newest in the archive);
# fetched again when the archive moved on or an earlier fetch broke off.
rel=$(scripts/guest-kernel.sh)
if [[ ! -f $out/vmlinuz || ! -f $out/modules/modules.dep ||
	$(cat "$out/kernel-version" 2>/dev/null) != "$rel" ]]; then
	pkg=linux-image-$rel-unsigned
	log "fetching $pkg"
	rm -rf "$out/dl" "$out/kernel" "$out/vmlinuz" "$out/kernel-version"
	mkdir -p "$out/dl"
	if ! (cd "$out/dl" && apt-get download -q "$pkg"); then
		log "cannot download $pkg (no network to the archive? apt-get update?)"
		exit 1
	fi
	dpkg-deb -x "$out"/dl/"$pkg"_*.deb "$out/kernel"
	rm -rf "$out/modules"
	mv "$out/kernel/lib/modules/$rel" "$out/modules"
	# modules.dep for modprobe -d (the .deb ships none: postinst makes it)
	mkdir -p "$out/modroot/lib/modules"
	ln -sfn "$out/modules" "$out/modroot/lib/modules/$rel"
	depmod -b "$out/modroot" "$rel"
	cp "$out/kernel/boot/vmlinuz-$rel" "$out/vmlinuz.tmp"
	mv "$out/vmlinuz.tmp" "$out/vmlinuz"
	# written last: its presence says the kernel and modules are whole
	echo "$rel" >"$out/kernel-version"
	rm -rf "$out/kernel" "$out/dl"
fi

# ---- smoke program ----
smoke_src=tests/guest/vgpu-smoke.c
smoke_stale=0
for f in "$smoke_src" uapi/vgpu_hw*.h; do
	[[ $f -nt $out/vgpu-smoke ]] && smoke_stale=1
done
if [[ ! -x $out/vgpu-smoke || $smoke_stale == 1 ]]; then
	log "building vgpu-smoke"
	gcc -static -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iuapi \
		-o "$out/vgpu-smoke" "$smoke_src"
fi

# ---- tools and example programs (static) ----
guest_bins=(build/bin/vgpu-as)
for f in libvgpu/tools/*.c examples/*.c; do
	[[ -e $f ]] && guest_bins+=("build/guest-bin/$(basename "$f" .c)")
done
missing=0
for f in "${guest_bins[@]}"; do
	[[ -x $f ]] || missing=1
done
if ((missing)); then
	log "building the static tools and examples"
	make --no-print-directory -j2 BUILD=build CC=gcc SAN=0 \
		build/bin/vgpu-as guest-bins
fi

if [[ ! -f $out/store.vgo || tests/guest/store.vgs -nt $out/store.vgo ]]; then
	build/bin/vgpu-as -o "$out/store.vgo" tests/guest/store.vgs
fi

# ---- initramfs ----
kver=$(cat "$out/kernel-version")
inputs=("$out/vgpu-smoke" "$out/store.vgo" tests/guest/init "$0"
	scripts/run-examples.sh examples/*.vgs examples/*.expected examples/*.c
	build/guest-bin/*)
[[ -f build/module/vgpu.ko ]] && inputs+=(build/module/vgpu.ko)
selftests=()
# shellcheck source=../tests/selftests/vgpu/programs.sh
. tests/selftests/vgpu/programs.sh
for p in $VGPU_KSFT_PROGS $VGPU_LIB_PROGS $VGPU_PTX_PROGS vgpu_bench vgpu_fuzz; do
	f=build/selftests/$p
	[[ -x $f ]] && selftests+=("$f")
done
inputs+=("${selftests[@]+"${selftests[@]}"}")
cuda=build/guest-cuda
[[ -f $cuda/programs.txt ]] && inputs+=("$cuda/programs.txt")
rd=$out/initramfs.cpio.gz
stale=0
if [[ ! -f $rd ]]; then
	stale=1
else
	for f in "${inputs[@]}"; do
		[[ $f -nt $rd ]] && stale=1
	done
fi
if ((stale)); then
	log "building the initramfs"
	root=$out/initramfs
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,vgpu,examples}
	cp "$out/store.vgo" "$root/vgpu/store.vgo"
	cp /bin/busybox "$root/bin/busybox"
	cp "$out/vgpu-smoke" "$root/bin/vgpu-smoke"
	cp build/guest-bin/* "$root/bin/"
	cp scripts/run-examples.sh "$root/bin/run-examples"
	# the files only: examples/cuda/ (CUDA ports) is for the host's tests
	cp examples/*.vgs examples/*.expected examples/*.c "$root/examples/"
	if ((${#selftests[@]})); then
		cp "${selftests[@]}" "$root/bin/"
	fi
	if [[ -f $cuda/programs.txt ]]; then
		cp -a "$cuda/root/." "$root/"
		mv "$root"/kselftest/vgpu/* "$root/bin/"
		rm -r "$root/kselftest"
	fi
	cp tests/guest/init "$root/init"
	chmod 755 "$root/init" "$root/bin/run-examples"

	# the DRM modules and their dependencies, from the guest kernel's tree
	if [[ -f build/module/vgpu.ko ]]; then
		modroot=$out/modroot
		mkdir -p "$modroot/lib/modules" "$root/lib/modules/$kver/extra"
		ln -sfn "$out/modules" "$modroot/lib/modules/$kver"
		[[ -f $out/modules/modules.dep ]] || depmod -b "$modroot" "$kver"
		for m in drm drm_shmem_helper gpu-sched drm_exec drm_gpuvm; do
			modprobe -d "$modroot" -S "$kver" --show-depends "$m" |
				awk '$1 == "insmod" { print $2 }'
		done | sort -u | while read -r f; do
			rel=${f#"$modroot/lib/modules/$kver/"}
			mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
			cp "$f" "$root/lib/modules/$kver/$rel"
		done
		cp "$out/modules/modules.order" "$out/modules/modules.builtin"* \
			"$root/lib/modules/$kver/" 2>/dev/null || true
		cp build/module/vgpu.ko "$root/lib/modules/$kver/extra/"
		depmod -b "$root" "$kver"
	else
		log "no build/module/vgpu.ko (make module): the guest has no driver"
	fi
	(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) |
		gzip -1 >"$rd.tmp"
	mv "$rd.tmp" "$rd"
fi
log "guest ready: kernel $kver, $rd"
