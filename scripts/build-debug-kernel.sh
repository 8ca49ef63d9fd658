#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# build-debug-kernel.sh: the debug guest kernel, built from Debian's
# linux-source-6.12 with lockdep, KASAN, KFENCE, DEBUG_OBJECTS, kmemleak,
# fault injection, KCOV and KUnit, and the vgpu.ko that it loads.
#
#   1. The kernel, cached outside the clone in
#        ${VGPU_CACHE:-${XDG_CACHE_HOME:-~/.cache}/vgpu}/debug-kernel/<source version>-<key>/
#          linux-source-6.12/   the configured, built tree (kdir below)
#          modules/lib/modules/<kver>/   modules_install (stripped)
#          kernel-release, build.log, merge_config.log
#          complete             written last
#      where <key> hashes kernel/debug.config, kernel/Kconfig and this
#      script: `make tinyconfig`, kernel/debug.config merged with
#      scripts/kconfig/merge_config.sh (every value must stick, or the
#      build stops), `make bzImage modules`, modules_install.  kernel/ is
#      grafted into the tree as drivers/gpu/drm/vgpu (kernel/Kconfig, one
#      `source` line in drivers/gpu/drm/Kconfig, one obj- line in its
#      Makefile), as an in-tree driver would be: drm_sched, drm_exec and
#      drm_gpuvm have no prompt, only a driver that selects them gets them.
#      A cache without `complete` (or missing a piece) is a build that
#      broke off: it is removed and built again.  Older keys are removed
#      once a new one is complete.
#   2. vgpu.ko from the current kernel/ sources, out of tree against that
#      tree with W=1 (scripts/build-module.sh with KDIR): build/module-debug/.
#      The driver's copy built in the tree is the graft's, made when the
#      cache was: it is left out of the installed modules, never loaded.
#      When it does not compile then (kernel/ in the middle of a change),
#      the kernel is built without it and step 2 reports the errors.
#   3. build/guest-debug/ in build/guest's layout: vmlinuz, modules/,
#      kernel-version, and kdir (the configured tree's path).
#
# Installs what it needs with apt-get (linux-source-6.12 and the kernel
# build tools) when missing.  Measured on 2 cores: about 8 minutes cold
# (extraction included), a few seconds warm plus the driver's build.
set -euo pipefail

self=$(readlink -f "${BASH_SOURCE[0]}")
cd "$(dirname "$self")/.."
top=$PWD
log() { echo "build-debug-kernel: $*"; }
die() { log "$*" >&2; exit 1; }

packages=(linux-source-6.12 build-essential bc flex bison libelf-dev libssl-dev cpio kmod)
scripts/apt-install.sh --tag build-debug-kernel "${packages[@]}" || exit
tarball=/usr/src/linux-source-6.12.tar.xz
[[ -f $tarball ]] || die "$tarball missing although linux-source-6.12 is installed: reinstall linux-source-6.12"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
key=$(cat kernel/debug.config kernel/Kconfig "$self" | sha256sum | cut -c1-12)
base=${VGPU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vgpu}/debug-kernel
cache=$base/$srcver-$key
src=$cache/linux-source-6.12
mods=$cache/modules
jobs=$(nproc)

mkdir -p "$base"
exec 9>"$base/.lock"
if ! flock -n 9; then
	log "waiting for another build of the debug kernel"
	flock 9
fi

# A cache is whole when `complete` (written last) and what it vouches for
# are there.
whole() {
	[[ -f $cache/complete && -s $cache/kernel-release &&
		-f $src/arch/x86/boot/bzImage && -f $src/Module.symvers &&
		-f $mods/lib/modules/$(cat "$cache/kernel-release")/modules.dep ]]
}

if ! whole; then
	if [[ -e $cache ]]; then
		log "removing $cache: an earlier build broke off (no 'complete' stamp or a piece missing)"
		rm -rf "$cache"
	fi
	start=$SECONDS
	log "building linux-source $srcver (key $key) in $cache; log in $cache/build.log"
	mkdir -p "$cache"
	tar -xf "$tarball" -C "$cache" || die "cannot extract $tarball into $cache (disk full?)"
	# the graft
	g=$src/drivers/gpu/drm/vgpu
	mkdir -p "$g/uapi"
	cp kernel/Kconfig kernel/*.c kernel/*.h "$g/"
	cp kernel/Kbuild "$g/Makefile"
	[[ -d kernel/tests ]] && cp -r kernel/tests "$g/"
	cp uapi/vgpu_hw*.h uapi/vgpu_drm.h uapi/vgpu_waitgraph.h "$g/uapi/"
	echo 'source "drivers/gpu/drm/vgpu/Kconfig"' >>"$src/drivers/gpu/drm/Kconfig"
	echo 'obj-$(CONFIG_DRM_VGPU) += vgpu/' >>"$src/drivers/gpu/drm/Makefile"
	# the configuration, checked value by value
	make -s -C "$src" tinyconfig >/dev/null
	(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$top/kernel/debug.config") \
		>"$cache/merge_config.log" 2>&1 || die "merge_config.sh failed: $cache/merge_config.log"
	make -s -C "$src" olddefconfig
	bad=0
	while IFS= read -r line; do
		opt=${line%%=*}
		val=${line#*=}
		if [[ $val == n ]]; then
			grep -q "^$opt=" "$src/.config" || continue
		else
			grep -qx "$line" "$src/.config" && continue
		fi
		log "kernel/debug.config: $line did not stick (.config: $(grep -E "^$opt=|^# $opt is not set" "$src/.config" || echo absent)): a dependency is missing"
		bad=1
	done < <(grep -E '^CONFIG_[A-Z0-9_]+=' kernel/debug.config)
	((bad == 0)) || die "fix kernel/debug.config (the half-made cache is removed on the next run)"
	log "configured in $((SECONDS - start))s; make -j$jobs bzImage modules"
	if ! make -C "$src" -k -j"$jobs" bzImage modules >"$cache/build.log" 2>&1; then
		# Only the grafted driver? Then build the kernel without it: the
		# vgpu.ko that the guest loads is built out of tree below anyway.
		errors=$(grep -E '^drivers/gpu/drm/vgpu/.*error:|^ERROR: modpost: .*drivers/gpu/drm/vgpu/' \
			"$cache/build.log" | head -n 5 || true)
		printf '# the grafted vgpu did not compile when this tree was built: build.log\n' >"$g/Makefile"
		if [[ -n $errors ]] &&
			make -C "$src" -j"$jobs" bzImage modules >>"$cache/build.log" 2>&1; then
			log "warning: vgpu did not compile in the tree (kernel/ in the middle of a change?); the kernel is built without it:"
			printf '  %s\n' "$errors" >&2
		else
			grep -iE 'error:|error [0-9]' "$cache/build.log" | tail -n 30 >&2 || true
			die "kernel build failed: $cache/build.log (the half-made cache is removed on the next run)"
		fi
	fi
	make -s -C "$src" INSTALL_MOD_PATH="$mods" INSTALL_MOD_STRIP=1 modules_install >/dev/null
	kver=$(make -s -C "$src" kernelrelease)
	# the graft's vgpu.ko is as old as the cache: step 2 builds the real one
	rm -rf "$mods/lib/modules/$kver/kernel/drivers/gpu/drm/vgpu"
	depmod -b "$mods" "$kver"
	echo "$kver" >"$cache/kernel-release"
	touch "$cache/complete"
	whole || die "$cache is incomplete after a build that succeeded"
	log "built in $((SECONDS - start))s"
	for old in "$base"/*; do
		[[ -d $old && $old != "$cache" ]] && { log "removing $old"; rm -rf "$old"; }
	done
fi
kver=$(cat "$cache/kernel-release")

out=$top/build/guest-debug
mkdir -p "$out"
ln -sfn "$src/arch/x86/boot/bzImage" "$out/vmlinuz"
ln -sfn "$mods/lib/modules/$kver" "$out/modules"
echo "$src" >"$out/kdir"
echo "$kver" >"$out/kernel-version"

KDIR=$src MODOUT=build/module-debug scripts/build-module.sh
log "debug guest ready: kernel $kver ($out), build/module-debug/vgpu.ko"
